/*
 * fuzz-audit-pack.c - libFuzzer harness for the decoder of packed audit
 * records (runner/core/audit-pack.c), which reads the data of audit_pack
 * rows from a state database a crash or an editor may have left in any
 * shape.  The first byte of an input is the row's record count, the rest
 * its data.  Whatever decodes is encoded again and decoded once more:
 * the strings and tasks must come back the same.  Seeds:
 * tests/fuzz/corpus/fuzz-audit-pack/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/core/audit-pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether two optional strings are the same. */
static int
same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether two decoded records carry the same strings and task. */
static int
same_rec(const struct vg_audit_rec *a, const struct vg_audit_rec *b)
{
	return a->task_index == b->task_index &&
	    same_str(a->run_id, b->run_id) && same_str(a->mode, b->mode) &&
	    same_str(a->command, b->command) &&
	    same_str(a->verdict, b->verdict) &&
	    same_str(a->category, b->category) &&
	    same_str(a->rule, b->rule) && same_str(a->reason, b->reason);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_audit_unpacked u, again;
	struct vg_audit_packer pk;
	const struct vg_audit_rec **recs;
	double *times;
	size_t i, off;

	if (size < 1)
		return 0;
	if (vg_audit_pack_decode(data + 1, size - 1, 1000.0, data[0],
	    &u) != 0) {
		if (u.n != 0 || u.rec != NULL || u.str != NULL)
			abort();	/* a failure leaves u empty */
		return 0;
	}
	if (u.n != data[0])
		abort();
	recs = calloc(u.n + 1, sizeof(*recs));
	times = calloc(u.n + 1, sizeof(*times));
	if (recs == NULL || times == NULL)
		abort();
	for (i = 0; i < u.n; i++) {
		if (u.rec[i].verdict == NULL)
			abort();
		recs[i] = &u.rec[i];
		times[i] = 1000.0;
	}
	memset(&pk, 0, sizeof(pk));
	vg_audit_pack_encode(&pk, recs, times, u.n, 1000.0, 1000.0, &off);
	if (vg_audit_pack_decode(pk.data.data + off, pk.data.len - off,
	    1000.0, (long long)u.n, &again) != 0 || again.n != u.n)
		abort();
	for (i = 0; i < u.n; i++)
		if (!same_rec(&u.rec[i], &again.rec[i]))
			abort();
	vg_audit_unpacked_release(&again);
	vg_audit_packer_release(&pk);
	vg_audit_unpacked_release(&u);
	free(recs);
	free(times);
	return 0;
}
