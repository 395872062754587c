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
#include "runner/manifest/task.h"
#include "schedulers/scheduler.h"
#include "schedulers/slurm.h"

/* One task of the pack. */
struct pk_task {
	struct vg_task		 task;
	struct vg_attempt	 a;
	char			*task_dir;
	int			 submitted;
	int			 cancelled;	/* cancel asked */
	int			 done;
};

/* Writes the record of an attempt that task-exec did not end (it never
 * started, or srun lost it), unless task-exec wrote one (which says
 * CANCELLED for a task cancelled by vigil cancel however it ended). */
static void
record(struct pk_task *p, const struct vg_result *r)
{
	struct vg_result old;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_result_read(p->task_dir, &old, &e) == 0 &&
	    vg_state_terminal(old.state))
		return;
	vg_err_init(&e);
	if (vg_result_write(p->task_dir, r, &e) != 0)
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

/* Runs the tasks in v through s until each ended; 0 when all succeeded. */
static int
drive(struct vg_sched *s, struct pk_task *v, size_t n, int sfd)
{
	struct vg_sched_update *ups;
	struct vg_err e;
	size_t i, k, nu, left = n, next = 0;
	int failed = 0, stop = 0, window = s->window > 0 ? s->window : 64;

	while (left > 0) {
		/* Hand over up to the window; a task cancelled before it
		 * was handed over is recorded at once. */
		for (; next < n && vg_sched_active(s) < (size_t)window;
		    next++) {
			if (stop || vg_slurm_pack_cancel_marked(v[next].task_dir)) {
				cancel_unstarted(&v[next]);
				failed = 1;
				left--;
				continue;
			}
			vg_err_init(&e);
			if (vg_sched_submit(s, &v[next].a, &e) != 0) {
				struct vg_result r;

				memset(&r, 0, sizeof(r));
				r.state = VG_ST_BACKEND_ERROR;
				r.exit_code = -1;
				r.ended = vg_now();
				snprintf(r.reason, sizeof(r.reason), "%.*s",
				    (int)sizeof(r.reason) - 1, e.msg);
				record(&v[next], &r);
				v[next].done = 1;
				failed = 1;
				left--;
				continue;
			}
			v[next].submitted = 1;
		}
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
			if (i == n || v[i].done)
				continue;
			ups[k].result.state = ups[k].state;
			record(&v[i], &ups[k].result);
			v[i].done = 1;
			left--;
			if (ups[k].state != VG_ST_SUCCEEDED)
				failed = 1;
		}
		if (read_signals(sfd))
			stop = 1;
		for (i = 0; i < next; i++) {
			if (!v[i].submitted || v[i].done || v[i].cancelled ||
			    (!stop && !vg_slurm_pack_cancel_marked(v[i].task_dir)))
				continue;
			v[i].cancelled = 1;
			vg_err_init(&e);
			(void)vg_sched_cancel(s, &v[i].a, 0, &e);
		}
	}
	return failed ? VG_EXIT_FAILED : VG_EXIT_OK;
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
