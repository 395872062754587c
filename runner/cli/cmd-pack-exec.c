/*
 * cmd-pack-exec.c - vigil pack-exec RUN_DIR PACK ELEMENT (hidden): the
 * body of a packed Slurm job (slurm.pack, schedulers/slurm-pack.c).  It
 * reads the tasks of array element ELEMENT from RUN_DIR/slurm/PACK and
 * runs them with the direct scheduler inside the job's allocation, each
 * as `vigil task-exec RUN_DIR INDEX`: a job step (srun), or a process of
 * the job when the script set VIGIL_SLURM_STEPS=exec.  task-exec keeps
 * the heartbeat and writes each task's result.json, as for an unpacked
 * task; this process writes a record only for an attempt that never got
 * to task-exec (cancelled before it started, refused by srun, lost).
 *
 *   manifest  as task-exec reads it (--manifest-sha256, adopted run dir)
 *   cancel    RUN_DIR/tasks/INDEX/cancel, written by the login-node vigil
 *             (vigil cancel RUN/TASK), cancels that task alone: its step
 *             is signalled, its siblings go on
 *   retries   a task whose attempt ended as retry.on retries keeps its
 *             place until the login-node driver claims the next attempt
 *             for this pack (tasks/INDEX/claim.N "pack ...": it runs
 *             here) or not ("new"), at most VIGIL_PACK_RETRY_WAIT
 *             seconds and never past the job's time limit
 *             (VIGIL_PACK_TIME); then this side claims "new" (slurm.h,
 *             "Retries in place")
 *   signals   SIGTERM, SIGINT, SIGHUP cancel every task; SIGUSR2
 *             (--signal, the time limit is near) is ignored: the tasks
 *             still running end with the job, and the driver retries
 *             them per retry.on
 *   exit      0 when every task succeeded, 1 otherwise, 2 or 4 when the
 *             pack could not run (bad pack file, manifest)
 *
 * Nothing here touches the state database.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/path.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/retry.h"
#include "runner/manifest/task.h"
#include "schedulers/scheduler.h"
#include "schedulers/slurm.h"

/* Seconds a task whose attempt ended waits for the driver to claim its
 * retry (VIGIL_PACK_RETRY_WAIT): the driver's backoff and its record
 * checks (held kill records included) fit in it. */
#define RETRY_WAIT	300.0
/* Seconds a retry in place leaves before the job's time limit. */
#define RETRY_MARGIN	30.0

/* One task of the pack. */
struct pk_task {
	struct vg_task		 task;
	struct vg_attempt	 a;
	char			*task_dir;
	int			 submitted;	/* handed to the scheduler */
	int			 cancelled;	/* cancel asked */
	int			 done;
	/* Its attempt ended: waiting for the claim of the next one
	 * (slurm.h, "Retries in place"), until wait_until when retry.on
	 * would retry it, else just long enough to say "new". */
	int			 waiting;
	int			 want_retry;
	double			 wait_until;
	enum vg_state		 last;		/* its latest attempt's end */
};

/* Writes the record of an attempt that task-exec did not end (it never
 * started, or srun lost it), unless task-exec wrote one (which says
 * CANCELLED for a task cancelled by vigil cancel however it ended). */
static void
record(struct pk_task *p, const struct vg_result *r)
{
	struct vg_result old;
	struct vg_err e;

	struct vg_result mine = *r;

	vg_err_init(&e);
	if (vg_result_read(p->task_dir, &old, &e) == 0 &&
	    vg_state_terminal(old.state) && (old.attempt == 0 ||
	    old.attempt == p->a.attempt))
		return;
	mine.attempt = p->a.attempt;
	vg_err_init(&e);
	if (vg_result_write(p->task_dir, &mine, &e) != 0)
		fprintf(stderr, "vigil: pack-exec: task %d: %s\n",
		    p->a.task->index, e.msg);
}

/* Records p CANCELLED without starting it. */
static void
cancel_unstarted(struct pk_task *p)
{
	struct vg_result r;

	memset(&r, 0, sizeof(r));
	r.state = VG_ST_CANCELLED;
	r.exit_code = -1;
	r.ended = vg_now();
	snprintf(r.reason, sizeof(r.reason), "cancelled before it started "
	    "in its pack");
	record(p, &r);
	p->last = VG_ST_CANCELLED;
	p->done = 1;
}

/* Loads the pack file's tasks of element into *v. */
static int
load_pack(const char *run_dir, const char *name, long element,
    struct vg_slurm_pack_entry **v, size_t *n)
{
	struct vg_buf text = VG_BUF_INIT;
	struct vg_err e;
	char *path;
	int rc;

	if (strchr(name, '/') != NULL || name[0] == '.' || name[0] == '\0')
		return vg_cmd_fail(VG_EXIT_USAGE, "pack-exec: PACK must be a "
		    "file name in RUN_DIR/slurm, not '%s'", name);
	path = vg_xasprintf("%s/slurm/%s", run_dir, name);
	vg_err_init(&e);
	rc = vg_read_file(path, 64u << 20, &text, &e);
	if (rc == 0)
		rc = vg_slurm_pack_parse(vg_buf_str(&text), element, v, n, &e);
	if (rc != 0)
		rc = vg_cmd_fail(VG_EXIT_USAGE, "pack-exec: %s: %s", path,
		    e.msg);
	vg_buf_release(&text);
	free(path);
	return rc;
}

/* Fills the attempt of p from its pack file entry. */
static int
fill(struct pk_task *p, struct vg_manifest *m, const char *run_dir,
    const char *run_id, const struct vg_slurm_pack_entry *x)
{
	struct vg_err e;
	char idx[32];

	snprintf(idx, sizeof(idx), "tasks/%d", x->index);
	p->task_dir = vg_path_join(run_dir, idx);
	vg_err_init(&e);
	if (vg_mkdir_p(p->task_dir, 0700, &e) != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "pack-exec: %s", e.msg);
	p->a.m = m;
	p->a.task = &p->task;
	p->a.run_id = run_id;
	p->a.task_dir = p->task_dir;
	p->a.attempt = x->attempt;
	p->a.res = p->task.resources;
	if (x->memory > 0)
		p->a.res.memory = x->memory;
	p->a.timeout = x->timeout;
	p->a.kill_grace = m->kill_grace;
	p->a.pidfd = -1;
	return 0;
}

/* Reads the signals that arrived; 1 when the pack is to stop. */
static int
read_signals(int sfd)
{
	struct signalfd_siginfo si;
	int stop = 0;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGUSR2 && si.ssi_signo != SIGUSR1)
			stop = 1;
	return stop;
}

/* Seconds a task waits for the claim of its retry. */
static double
retry_wait(void)
{
	const char *v = getenv("VIGIL_PACK_RETRY_WAIT");
	char *end;
	double d;

	if (v == NULL || *v == '\0')
		return RETRY_WAIT;
	d = strtod(v, &end);
	return *end == '\0' && d >= 0 ? d : RETRY_WAIT;
}

/* When the job's time limit ends (VIGIL_PACK_TIME seconds from start,
 * set by the pack's script); 0 when not known. */
static double
pack_deadline(double start)
{
	const char *v = getenv("VIGIL_PACK_TIME");
	char *end;
	double d;

	if (v == NULL || *v == '\0')
		return 0;
	d = strtod(v, &end);
	return *end == '\0' && d > 0 ? start + d : 0;
}

/*
 * Attempt p->a ended in st (cause): it waits for the claim of the next
 * one, long when retry.on would retry it (the driver decides, with the
 * same rule and its own count) and it would end before the job's time
 * limit (deadline), else just long enough to say "new".
 */
static void
ended(struct pk_task *p, enum vg_state st, int cause, int stop, double wait,
    double deadline)
{
	double now = vg_now(), need = p->a.timeout > 0 ? p->a.timeout :
	    (double)p->a.res.time;

	p->submitted = 0;
	p->last = st;
	p->waiting = 1;
	/* The latest the next attempt may start. */
	if (deadline > 0 && deadline - need - RETRY_MARGIN < now + wait)
		wait = deadline - need - RETRY_MARGIN - now;
	p->want_retry = st != VG_ST_SUCCEEDED && !stop && wait > 0 &&
	    !vg_slurm_pack_cancel_marked(p->task_dir) &&
	    vg_retry_wanted(&p->a.m->retry, st, cause, p->a.attempt);
	p->wait_until = now + (p->want_retry ? wait : 0);
}

/* Makes p's next attempt, as the driver's claim says. */
static void
next_attempt(struct pk_task *p, const struct vg_slurm_claim *c)
{
	struct vg_attempt keep = p->a;

	memset(&p->a, 0, sizeof(p->a));
	p->a.m = keep.m;
	p->a.task = keep.task;
	p->a.run_id = keep.run_id;
	p->a.task_dir = keep.task_dir;
	p->a.attempt = keep.attempt + 1;
	p->a.res = p->task.resources;
	if (c->memory > 0)
		p->a.res.memory = c->memory;
	p->a.timeout = c->timeout;
	p->a.kill_grace = keep.kill_grace;
	p->a.pidfd = -1;
}

/*
 * Settles a waiting task by the claim of its next attempt: the driver's
 * "pack" makes it ready to run here (or CANCELLED when the pack stops or
 * the task was cancelled), "new" ends it here; with none, once its wait
 * is over (or at once when it is not retried, is cancelled or the pack
 * stops), this side claims "new".  Returns 1 when the task is done.
 */
static int
settle_wait(struct pk_task *p, int stop)
{
	struct vg_slurm_claim got, want = { VG_CLAIM_NEW, 0, 0 };
	struct vg_err e;
	int cancel = vg_slurm_pack_cancel_marked(p->task_dir), r;

	vg_err_init(&e);
	r = vg_slurm_claim_read(p->task_dir, p->a.attempt + 1, &got, &e);
	if (r == 0 && got.who == VG_CLAIM_NONE && (stop || cancel ||
	    vg_now() >= p->wait_until))
		r = vg_slurm_claim_make(p->task_dir, p->a.attempt + 1, &want,
		    &got, &e) < 0 ? -1 : 0;
	if (r != 0) {
		/* A claim this side cannot read or make (a link planted
		 * there): the pack does not run the attempt. */
		fprintf(stderr, "vigil: pack-exec: task %d: %s\n",
		    p->a.task->index, e.msg);
		p->waiting = 0;
		p->done = 1;
		return 1;
	}
	switch (got.who) {
	case VG_CLAIM_PACK:
		p->waiting = 0;
		next_attempt(p, &got);
		if (stop || cancel) {
			cancel_unstarted(p);
			return 1;
		}
		return 0;
	case VG_CLAIM_NEW:
		p->waiting = 0;
		p->done = 1;
		return 1;
	default:
		return 0;
	}
}

/* Runs the tasks in v through s until each ended; 0 when all succeeded. */
static int
drive(struct vg_sched *s, struct pk_task *v, size_t n, int sfd)
{
	struct vg_sched_update *ups;
	struct vg_err e;
	size_t i, k, nu, left = n;
	int stop = 0, window = s->window > 0 ? s->window : 64;
	double wait = retry_wait(), deadline = pack_deadline(vg_now());

	while (left > 0) {
		/* Hand over up to the window, in pack order (retries run
		 * where their task stands); a task cancelled before it was
		 * handed over is recorded at once. */
		for (i = 0; i < n && vg_sched_active(s) < (size_t)window;
		    i++) {
			if (v[i].done || v[i].submitted || v[i].waiting)
				continue;
			if (stop || vg_slurm_pack_cancel_marked(v[i].task_dir)) {
				cancel_unstarted(&v[i]);
				left--;
				continue;
			}
			vg_err_init(&e);
			if (vg_sched_submit(s, &v[i].a, &e) != 0) {
				struct vg_result r;

				memset(&r, 0, sizeof(r));
				r.state = VG_ST_BACKEND_ERROR;
				r.exit_code = -1;
				r.ended = vg_now();
				snprintf(r.reason, sizeof(r.reason), "%.*s",
				    (int)sizeof(r.reason) - 1, e.msg);
				record(&v[i], &r);
				ended(&v[i], r.state, r.cause, stop, wait,
				    deadline);
				continue;
			}
			v[i].submitted = 1;
			v[i].cancelled = 0;
		}
		for (i = 0; i < n; i++)
			if (v[i].waiting && settle_wait(&v[i], stop))
				left--;
		if (left == 0)
			break;
		vg_err_init(&e);
		if (vg_sched_poll(s, 1000, sfd, &ups, &nu, &e) != 0) {
			fprintf(stderr, "vigil: pack-exec: %s\n", e.msg);
			return VG_EXIT_INTERNAL;
		}
		for (k = 0; k < nu; k++) {
			if (!vg_state_terminal(ups[k].state))
				continue;
			for (i = 0; i < n && &v[i].a != ups[k].a; i++)
				;
			if (i == n || v[i].done || !v[i].submitted)
				continue;
			ups[k].result.state = ups[k].state;
			record(&v[i], &ups[k].result);
			ended(&v[i], ups[k].state, ups[k].result.cause, stop,
			    wait, deadline);
		}
		if (read_signals(sfd))
			stop = 1;
		for (i = 0; i < n; i++) {
			if (!v[i].submitted || v[i].done || v[i].cancelled ||
			    (!stop && !vg_slurm_pack_cancel_marked(v[i].task_dir)))
				continue;
			v[i].cancelled = 1;
			vg_err_init(&e);
			(void)vg_sched_cancel(s, &v[i].a, 0, &e);
		}
	}
	for (i = 0; i < n; i++)
		if (v[i].last != VG_ST_SUCCEEDED)
			return VG_EXIT_FAILED;
	return VG_EXIT_OK;
}

static int
cmd_pack_exec_exec(struct vg_args *a)
{
	struct vg_slurm_pack_entry *ents = NULL;
	struct vg_manifest *m = NULL;
	struct vg_diag diag = VG_DIAG_INIT;
	struct pk_task *v = NULL;
	struct vg_sched s;
	struct vg_err e;
	char *run_dir, *end;
	const char *run_id;
	size_t n = 0, i;
	long element;
	int rc, sfd = -1, opened = 0;

	errno = 0;
	element = strtol(a->argv[2], &end, 10);
	if (errno != 0 || *end != '\0' || end == a->argv[2] || element < 0)
		return vg_cmd_usage_error(a, "ELEMENT must be an array index, "
		    "not '%s'", a->argv[2]);
	run_dir = vg_launch_abs_dir(a->argv[0]);
	run_id = strrchr(run_dir, '/') != NULL ? strrchr(run_dir, '/') + 1 :
	    run_dir;
	if ((rc = load_pack(run_dir, a->argv[1], element, &ents, &n)) != 0)
		goto out;
	v = vg_xcalloc(n, sizeof(*v));
	/* The manifest is checked (and the run's place entered) once. */
	if ((rc = vg_launch_load_dir(run_dir, vg_args_get(a,
	    "manifest-sha256"), ents[0].index, &m, &v[0].task)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		vg_err_init(&e);
		if (i > 0 && vg_expand_task(m, (size_t)ents[i].index,
		    &v[i].task, &diag, &e) != 0) {
			rc = vg_cmd_fail(VG_EXIT_USAGE, "pack-exec: task %d: "
			    "%s", ents[i].index, e.msg);
			goto out;
		}
		if ((rc = fill(&v[i], m, run_dir, run_id, &ents[i])) != 0)
			goto out;
	}
	memset(&s, 0, sizeof(s));
	s.ops = &vg_scheduler_direct;
	s.m = m;
	s.run_id = run_id;
	s.run_dir = run_dir;
	s.jobs = vg_slurm_of(m)->pack.parallel;
	vg_err_init(&e);
	if ((rc = vg_sched_open(&s, &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "pack-exec: %s", e.msg);
		goto out;
	}
	opened = 1;
	if ((sfd = vg_launch_job_signals()) < 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "pack-exec: signalfd: %s",
		    strerror(errno));
		goto out;
	}
	rc = drive(&s, v, n, sfd);
out:
	if (opened)
		vg_sched_close(&s);
	if (sfd >= 0)
		close(sfd);
	for (i = 0; v != NULL && i < n; i++) {
		vg_task_release(&v[i].task);
		free(v[i].task_dir);
	}
	free(v);
	free(ents);
	vg_diag_release(&diag);
	vg_manifest_free(m);
	free(run_dir);
	return rc;
}

const struct vg_cmd_entry vg_cmd_pack_exec = {
	.name = "pack-exec",
	.args_usage = "--manifest-sha256 HEX RUN_DIR PACK ELEMENT",
	.summary = "run the tasks of one packed Slurm job (slurm.pack)",
	.help = "Runs the tasks that RUN_DIR/slurm/PACK gives array element "
	    "ELEMENT, each as\n`vigil task-exec` (a job step, or a process of "
	    "the job with\nVIGIL_SLURM_STEPS=exec), as many at once as the "
	    "allocation holds\n(slurm.pack.parallel).  A task whose "
	    "tasks/INDEX/cancel appears is\ncancelled alone.",
	.opts = vg_cmd_job_opts,
	.hidden = 1,
	.min_args = 3,
	.max_args = 3,
	.exec = cmd_pack_exec_exec,
};
