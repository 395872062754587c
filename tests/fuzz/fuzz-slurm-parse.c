/*
 * fuzz-slurm-parse.c - libFuzzer harness for the parsers of Slurm command
 * output (sacct, squeue, scontrol show config, show partition, sbatch
 * --parsable), of srun's log for a step without a result record, and of
 * SLURM_JOB_CPUS_PER_NODE: whatever the commands print, the parsers must
 * neither crash nor read out of bounds, and every row they return must
 * map to a state.  The first byte picks the parser (its high bit the
 * step parsers, so older corpus entries keep their meaning).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_slurm_conf_info ci;
	struct vg_result r;
	struct vg_err e;
	unsigned long job;
	uint64_t secs;
	char *text;
	size_t i;

	if (size < 1 || size > 65536)
		return 0;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (data[0] & 0x80) {
		/* Wait status from the low bits: exits and signals. */
		if (data[0] & 0x40)
			(void)vg_slurm_alloc_cpus(text);
		else
			(void)vg_slurm_step_verdict(text, (data[0] & 0x3f) <<
			    (data[0] & 1 ? 8 : 0), data[0] & 2, &r);
		free(text);
		return 0;
	}
	switch (data[0] % 5) {
	case 0:
		if (vg_slurm_parse_sacct(text, &rows, &e) == 0)
			for (i = 0; i < rows.n; i++)
				(void)vg_slurm_state_map(&rows.v[i], &r);
		break;
	case 1:
		if (vg_slurm_parse_squeue(text, &rows, &e) == 0)
			for (i = 0; i < rows.n; i++)
				(void)vg_slurm_state_map(&rows.v[i], &r);
		break;
	case 2:
		(void)vg_slurm_parse_config(text, &ci, &e);
		break;
	case 3:
		(void)vg_slurm_parse_maxtime(text, &secs, &e);
		break;
	default:
		(void)vg_slurm_parse_jobid(text, &job, &e);
		break;
	}
	vg_slurm_rows_release(&rows);
	free(text);
	return 0;
}
