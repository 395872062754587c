/*
 * fuzz-slurm-pack.c - libFuzzer harness for what a packed Slurm job and
 * the login-node driver read from the run directory, which a task can
 * write: the pack file (RUN_DIR/slurm/submit-N.pack) and the claim of a
 * retry in place (tasks/INDEX/claim.N).  Neither parser may crash or
 * read out of bounds; every entry the pack parser returns has the shape
 * it promises.  The first byte picks the parser (low bit) and the
 * element asked for (the rest; 127 = every element).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_slurm_pack_entry *v = NULL;
	struct vg_slurm_claim c;
	struct vg_err e;
	long element;
	size_t n = 0, i;
	char *text;

	if (size < 1 || size > 65536)
		return 0;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (data[0] & 1) {
		if (vg_slurm_claim_parse(text, &c) == 0 &&
		    c.who == VG_CLAIM_PACK && !(c.timeout >= 0))
			abort();
	} else {
		element = (data[0] >> 1) == 127 ? -1 : (long)(data[0] >> 1);
		vg_err_init(&e);
		if (vg_slurm_pack_parse(text, element, &v, &n, &e) == 0)
			for (i = 0; i < n; i++)
				if (v[i].index < 0 || v[i].attempt < 1 ||
				    !(v[i].timeout >= 0) || (element >= 0 &&
				    v[i].element != element))
					abort();
		free(v);
	}
	free(text);
	return 0;
}
