/*
 * slurm-policy.c - how the gate reads Slurm's own commands (the
 * scheduler-abuse category, docs/policy.md): scancel by user,
 * partition, state or node rather than by id, or of ids listed at run
 * time; scontrol and sacctmgr changes to the cluster; sbatch in
 * unbounded loops (its --wrap read as shell code); squeue and friends
 * polled without end.  srun and salloc, which run a command, are read
 * through it by the policy's wrappers (runner/policy/unwrap.c).  The
 * table is registered through the scheduler's ops (policy_progs).
 */
#include <string.h>
#include <strings.h>

#include "runner/policy/classify-int.h"
#include "schedulers/slurm.h"

static void
h_scancel(struct pl_an *an, struct pl_cmd *c)
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

static void
h_scontrol(struct pl_an *an, struct pl_cmd *c)
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

static void
h_sacctmgr(struct pl_an *an, struct pl_cmd *c)
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

/* sbatch: a flood of jobs, and the --wrap script read as shell code. */
static void
h_sbatch(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *wrap = pl_opt_val(an, c, 0, "--wrap");

	pl_submit_loop(an, c);
	if (wrap != NULL)
		pl_shell_code(an, c, wrap, c->argc);
	pl_out_default(c);
}

const struct pl_prog vg_slurm_policy_progs[] = {
	{ "scancel", h_scancel }, { "scontrol", h_scontrol },
	{ "sacctmgr", h_sacctmgr }, { "sbatch", h_sbatch },
	{ "squeue", pl_poll_loop }, { "sinfo", pl_poll_loop },
	{ "sacct", pl_poll_loop }, { "sprio", pl_poll_loop },
	{ "sshare", pl_poll_loop }, { "sstat", pl_poll_loop },
	{ NULL, NULL }
};
