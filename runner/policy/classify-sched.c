/*
 * classify-sched.c - the classifier's handlers for the scheduler and the
 * allocation: miners, scancel, scontrol, sacctmgr, sbatch, squeue and
 * sleep.
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

void
pl_h_scancel(struct pl_an *an, struct pl_cmd *c)
{
	int i, ids = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s;

		if (pl_eq(f, "-u") || pl_eq(f, "--user") ||
		    !strncmp(s, "--user=", 7) || pl_eq(f, "-p") ||
		    pl_eq(f, "--partition") ||
		    !strncmp(s, "--partition=", 12) || pl_eq(f, "-t") ||
		    pl_eq(f, "--state") || !strncmp(s, "--state=", 8) ||
		    pl_eq(f, "-A") || pl_eq(f, "--account") ||
		    !strncmp(s, "--account=", 10) || pl_eq(f, "-w") ||
		    pl_eq(f, "--nodelist") || !strncmp(s, "--nodelist=", 11) ||
		    pl_eq(f, "--me") || pl_eq(f, "-q") || pl_eq(f, "--qos") ||
		    !strncmp(s, "--qos=", 6) || pl_eq(f, "-R") ||
		    pl_eq(f, "--reservation") ||
		    (pl_is_opt(f) && s[1] != '-' && strchr(s, 'u'))) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:scancel-broad",
			    c->off, c->len, "'scancel %s' cancels jobs by "
			    "user, partition, state or node rather than by id",
			    s);
			return;
		}
		if (pl_eq(f, "-s") || pl_eq(f, "--signal") || pl_eq(f, "-n") ||
		    pl_eq(f, "--name") || pl_eq(f, "-M") ||
		    pl_eq(f, "--clusters")) {
			i++;
			continue;
		}
		if (!pl_is_opt(f)) {
			ids++;
			if ((f->flags & F_UNK) && (f->taint & T_PROG))
				pl_find(an, VG_CAT_SCHEDULER,
				    "builtin:scancel-list", c->off, c->len,
				    "'scancel' of job ids listed at run time");
		}
	}
}

void
pl_h_scontrol(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		char low[32];
		size_t k;

		if (pl_is_opt(f))
			continue;
		for (k = 0; k < sizeof(low) - 1 && f->s[k]; k++)
			low[k] = (char)(f->s[k] >= 'A' && f->s[k] <= 'Z' ?
			    f->s[k] + 32 : f->s[k]);
		low[k] = '\0';
		if (strcmp(low, "shutdown") == 0 || strcmp(low, "reconfigure")
		    == 0 || strcmp(low, "takeover") == 0 ||
		    strcmp(low, "create") == 0 || strcmp(low, "delete") == 0 ||
		    strcmp(low, "setdebug") == 0 ||
		    strcmp(low, "setdebugflags") == 0 ||
		    strcmp(low, "reboot") == 0 || strcmp(low, "reboot_nodes")
		    == 0) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:scontrol",
			    c->off, c->len, "'scontrol %s' changes the "
			    "cluster", low);
			return;
		}
		if (strcmp(low, "update") == 0) {
			int j;

			for (j = i + 1; j < c->argc; j++) {
				const char *s = c->argv[j].s;

				if (strncasecmp(s, "node", 4) == 0 ||
				    strncasecmp(s, "partition", 9) == 0 ||
				    strncasecmp(s, "reservation", 11) == 0 ||
				    strncasecmp(s, "frontend", 8) == 0) {
					pl_find(an, VG_CAT_SCHEDULER,
					    "builtin:scontrol", c->off, c->len,
					    "'scontrol update' of nodes, "
					    "partitions or reservations");
					return;
				}
			}
			return;
		}
		return;
	}
}

void
pl_h_sacctmgr(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_is_opt(f))
			continue;
		if (pl_eq(f, "show") || pl_eq(f, "list") || pl_eq(f, "dump") ||
		    pl_eq(f, "help") || pl_eq(f, "version"))
			return;
		pl_find(an, VG_CAT_SCHEDULER, "builtin:sacctmgr", c->off, c->len,
		    "'sacctmgr %s' changes accounts, limits or associations",
		    f->s);
		return;
	}
}

void
pl_h_sbatch(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *wrap = pl_opt_val(an, c, 0, "--wrap");

	if (an->infloop || an->loopiter >= 500)
		pl_find(an, VG_CAT_SCHEDULER, "builtin:submit-loop", c->off,
		    c->len, "'%s' submits jobs in an %s loop", c->name,
		    an->infloop ? "unbounded" : "very large");
	if (wrap != NULL)
		pl_shell_code(an, c, wrap, c->argc);
	pl_out_default(c);
}

void
pl_h_squeue(struct pl_an *an, struct pl_cmd *c)
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
