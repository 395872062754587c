/*
 * classify-sched.c - the classifier's handlers for what any allocation
 * is spent on: miners, and waiting (sleep) for the loop checks.  A
 * scheduler's own commands are handled in its file (schedulers/
 * slurm-policy.c, gridengine-policy.c), with pl_submit_loop and
 * pl_poll_loop below.
 */
#include <string.h>

#include "runner/policy/classify-int.h"

/* ---- scheduler ---- */

/* Cryptocurrency miners: an allocation's CPUs and GPUs spent on coins
 * is what clusters' acceptable-use policies forbid first. */
void
pl_h_miner(struct pl_an *an, struct pl_cmd *c)
{
	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    pl_has_arg(c, "--version") || pl_has_arg(c, "-V"))
		return;
	pl_find(an, VG_CAT_SCHEDULER, "builtin:miner", c->off, c->len,
	    "'%s' mines cryptocurrency", c->name);
}

/* A submission command (sbatch, qsub) in an unbounded or very large
 * loop: a flood of jobs. */
void
pl_submit_loop(struct pl_an *an, struct pl_cmd *c)
{
	if (an->infloop || an->loopiter >= 500)
		pl_find(an, VG_CAT_SCHEDULER, "builtin:submit-loop", c->off,
		    c->len, "'%s' submits jobs in an %s loop", c->name,
		    an->infloop ? "unbounded" : "very large");
}

/* A query of the scheduler (squeue, qstat): counted as polling in an
 * endless loop. */
void
pl_poll_loop(struct pl_an *an, struct pl_cmd *c)
{
	if (an->infloop)
		an->looppoll++;
	pl_out_default(c);
}

void
pl_h_sleep(struct pl_an *an, struct pl_cmd *c)
{
	if (!an->bg)
		an->loopwait++;
	pl_stream_text(c->out, "", 0, 0);
}
