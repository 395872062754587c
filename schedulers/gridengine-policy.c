/*
 * gridengine-policy.c - how the gate reads Grid Engine's own commands
 * (the scheduler-abuse category, docs/policy.md), as slurm-policy.c
 * reads Slurm's: qdel, qhold, qrls and qalter of jobs by user or by a
 * name pattern rather than by id, or of ids listed at run time; qconf
 * changes to the cell (its -s show options and -help pass); qmod of
 * queues (disable, enable, suspend, clear, reschedule); qsub and qsh in
 * unbounded loops; qstat and friends polled without end.  qrsh, which
 * runs a command, is read through it by the policy's wrappers
 * (runner/policy/unwrap.c), as srun is.  The
 * table is registered through the scheduler's ops (policy_progs).
 */
#include <string.h>

#include "runner/policy/classify-int.h"
#include "schedulers/gridengine.h"

/* Options of qdel, qhold, qrls and qalter that take a value. */
static const char *const job_valopts[] = {
	"-t", "-h", "-N", "-A", "-P", "-q", "-l", "-o", "-e", "-pe", "-wd",
	"-js", "-p", "-a", "-m", "-M", "-S", "-v", "-ac", "-dc", "-sc",
	"-hold_jid", "-hold_jid_ad", "-ar", "-c", "-ckpt", "-dl", "-r",
	"-w", NULL
};

/* qdel, qhold, qrls, qalter: -u USERS (all their jobs), "*" or a name
 * pattern, or ids the command computes at run time. */
static void
h_jobs(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "-u") || pl_eq(f, "-uall")) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:qdel-broad",
			    c->off, c->len, "'%s %s' acts on every job of "
			    "users rather than on jobs by id", c->name, f->s);
			return;
		}
		if (pl_eq_any(f, job_valopts)) {
			i++;
			continue;
		}
		if (pl_is_opt(f))
			continue;
		if (strpbrk(f->s, "*?[") != NULL) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:qdel-broad",
			    c->off, c->len, "'%s %s' acts on every job whose "
			    "name matches a pattern rather than on jobs by id",
			    c->name, f->s);
			return;
		}
		if ((f->flags & F_UNK) && (f->taint & T_PROG)) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:qdel-list",
			    c->off, c->len, "'%s' of job ids listed at run "
			    "time", c->name);
			return;
		}
	}
}

/* qconf: every option but the -s (show) ones and -help changes the
 * cell: queues, hosts, users, the scheduler, its daemons (-km, -ke). */
static void
h_qconf(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (!pl_is_opt(f) || strncmp(f->s, "-s", 2) == 0 ||
		    pl_eq(f, "-help"))
			continue;
		pl_find(an, VG_CAT_SCHEDULER, "builtin:qconf", c->off, c->len,
		    "'qconf %s' changes the cell's configuration or stops "
		    "its daemons", f->s);
		return;
	}
	pl_out_default(c);
}

/* qmod: queue operations (disable, enable, clear, suspend, unsuspend,
 * reschedule) of queues; a user's own jobs (-sj, -usj, -rj, -cj of ids)
 * pass. */
static void
h_qmod(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const queue_opts[] = {
		"-d", "-e", "-cq", "-sq", "-usq", "-rq", NULL
	};
	static const char *const either_opts[] = {
		"-c", "-s", "-us", "-r", NULL
	};
	int i, j, either = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq_any(f, queue_opts)) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:qmod", c->off,
			    c->len, "'qmod %s' changes the state of queues",
			    f->s);
			return;
		}
		if (pl_eq_any(f, either_opts))
			either = 1;
	}
	/* -c, -s, -us, -r take jobs or queues: a queue instance (q@host)
	 * or a pattern is the cell's. */
	for (j = 1; either && j < c->argc; j++) {
		const struct pl_field *f = &c->argv[j];

		if (!pl_is_opt(f) && strpbrk(f->s, "@*?[") != NULL) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:qmod", c->off,
			    c->len, "'qmod' of queues ('%s')", f->s);
			return;
		}
	}
}

/* qsub, qsh, qlogin: a flood of jobs in a loop. */
static void
h_qsub(struct pl_an *an, struct pl_cmd *c)
{
	pl_submit_loop(an, c);
	pl_out_default(c);
}

const struct pl_prog vg_gridengine_policy_progs[] = {
	{ "qdel", h_jobs }, { "qhold", h_jobs }, { "qrls", h_jobs },
	{ "qalter", h_jobs }, { "qconf", h_qconf }, { "qmod", h_qmod },
	{ "qsub", h_qsub }, { "qsh", h_qsub },
	{ "qlogin", h_qsub }, { "qstat", pl_poll_loop },
	{ "qacct", pl_poll_loop }, { "qhost", pl_poll_loop },
	{ "qquota", pl_poll_loop }, { "qselect", pl_poll_loop },
	{ NULL, NULL }
};
