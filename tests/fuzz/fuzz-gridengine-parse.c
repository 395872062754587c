/*
 * fuzz-gridengine-parse.c - libFuzzer harness for the parsers of Grid
 * Engine's command output (qstat -xml, qacct -j, qconf -sconf, qsub
 * -terse): whatever the daemons print, the parsers must neither crash
 * nor read out of bounds, every row must be findable and every record
 * must map to a terminal state.  The first byte picks the parser; qstat
 * gets the rest without a terminating NUL (it takes a length).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/state.h"
#include "schedulers/gridengine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_ge_rows rows = { NULL, 0, 0 };
	struct vg_ge_accts acc = { NULL, 0, 0 };
	struct vg_result r;
	struct vg_err e;
	unsigned long job;
	char *text, why[256];
	size_t i;
	int max;

	if (size < 1 || size > 65536)
		return 0;
	switch (data[0] % 4) {
	case 0:
		/* an exact-size copy: reads past the end are caught */
		text = malloc(size - 1 + 1);
		memcpy(text, data + 1, size - 1);
		if (vg_ge_parse_qstat(text, size - 1, &rows, &e) == 0)
			for (i = 0; i < rows.n; i++) {
				if (vg_ge_rows_find(&rows, rows.v[i].job,
				    rows.v[i].task_lo) == NULL)
					abort();
				(void)vg_ge_state_map(rows.v[i].state, why,
				    sizeof why);
			}
		free(text);
		vg_ge_rows_release(&rows);
		return 0;
	default:
		break;
	}
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 4) {
	case 1:
		if (vg_ge_parse_qacct(text, &acc, &e) == 0)
			for (i = 0; i < acc.n; i++)
				if (!vg_state_terminal(vg_ge_acct_map(
				    &acc.v[i], (uint64_t)data[0] << 20, &r)))
					abort();
		break;
	case 2:
		(void)vg_ge_parse_conf(text, &max, &e);
		break;
	default:
		(void)vg_ge_parse_jobid(text, &job, &e);
		break;
	}
	vg_ge_accts_release(&acc);
	free(text);
	return 0;
}
