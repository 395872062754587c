/*
 * cmd-task-exec.c - vigil task-exec RUN_DIR INDEX (hidden): runs one
 * attempt of one task where it is started, typically as the body of a
 * Slurm batch job on a compute node.  The contract (docs/state.md):
 *
 *   reads   RUN_DIR/manifest.json (the run's effective manifest), only
 *           when RUN_DIR is the user's own (and every directory on its
 *           way: common/adopt.h) and the file's SHA-256 is the one the
 *           submitting vigil put in the job (--manifest-sha256): a
 *           run directory is never a source of commands by itself;
 *           RUN_DIR/origin.json too when it exists (the digest covers
 *           both), then runs the task where the run was made (its
 *           working directory and the caller's variables it recorded)
 *   writes  RUN_DIR/tasks/INDEX/{stdout,stderr} (through the backend),
 *           RUN_DIR/tasks/INDEX/heartbeat every VIGIL_HEARTBEAT seconds
 *           (default 5) while the task runs, atomically: "TIME HOST PID\n"
 *           RUN_DIR/tasks/INDEX/result.json at the end, atomically
 *           (vg_result_write), before exiting
 *           RUN_DIR/tasks/INDEX/outputs.json and the manifest's
 *           outputs (tasks/INDEX/outputs or outputs.dest) when it has
 *           `outputs:`, collected as the direct driver does, from this
 *           node's scratch directory and the task directory before
 *           scratch.keep applies and before result.json is written
 *           RUN_DIR/tasks/INDEX/step "JOB.STEP HOST PID\n" when it runs as
 *           a job step (SLURM_STEP_ID set), so the direct scheduler can
 *           signal it through scancel
 *   attempt VIGIL_ATTEMPT, else SLURM_RESTART_COUNT + 1, else 1
 *   timeout VIGIL_TIMEOUT (seconds) when set, else the manifest's (a
 *           retry after TIMEOUT may have scaled it)
 *   env     the task also gets the job's variables that the schedulers
 *           list (their task_env: SLURM_JOB_ID, SLURM_ARRAY_*, ...,
 *           JOB_ID, SGE_TASK_ID, NSLOTS, ...) and GPU bindings
 *           (CUDA_VISIBLE_DEVICES, ...) unless the manifest sets them
 *   signals SIGTERM/SIGINT/SIGHUP: the task gets SIGTERM, then SIGKILL
 *           after kill_grace; result CANCELLED.  Slurm signals every
 *           process of a step, so a task that ends by such a signal
 *           first is CANCELLED too when this process gets one within
 *           half a second.  SIGUSR1/SIGUSR2 are passed on to the task
 *           (Slurm's --signal warning).
 *   exit    0 SUCCEEDED; the task's exit code when it failed; 128+N when
 *           it was killed by signal N; 124 TIMEOUT; 143 CANCELLED;
 *           4 when vigil or the backend failed (result.json says so
 *           whenever it could be written).
 *
 * The run id is the name of RUN_DIR.  Nothing here touches the state
 * database: the scheduler that started the job reads result.json.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/beneath.h"
#include "scratch/scratch.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/outputs.h"
#include "common/path.h"
#include "schedulers/scheduler.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define HEARTBEAT_DEFAULT_S	5

/* Writes the heartbeat file atomically. */
static void
heartbeat(const char *task_dir)
{
	char host[256], line[512], *path;
	int n;

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	n = snprintf(line, sizeof(line), "%.3f %s %ld\n", vg_now(), host,
	    (long)getpid());
	path = vg_path_join(task_dir, "heartbeat");
	(void)vg_write_file_atomic(path, line, (size_t)n, 0600, NULL);
	free(path);
}

/* Adds the variables of the job this runs in to the task's environment:
 * those every scheduler lists as its task_env (direct inside a Slurm
 * allocation needs Slurm's), unless the manifest sets them. */
static void
pass_job_env(struct vg_task *t)
{
	const struct vg_scheduler_ops *const *s;
	const char *const *n;
	const char *v;

	for (s = vg_schedulers; *s != NULL; s++)
		for (n = (*s)->task_env; n != NULL && *n != NULL; n++)
			if ((v = getenv(*n)) != NULL &&
			    vg_kvs_get(&t->env, *n) == NULL)
				vg_kvs_set(&t->env, *n, v);
}

/* Records the job step this task-exec runs in, when it runs in one. */
static void
step_file(const char *task_dir)
{
	const char *job = getenv("SLURM_JOB_ID"), *step;
	char host[256], line[512], *path;
	int n;

	step = getenv("SLURM_STEP_ID");
	if (job == NULL || step == NULL || strspn(job, "0123456789") !=
	    strlen(job) || strspn(step, "0123456789") != strlen(step) ||
	    *job == '\0' || *step == '\0')
		return;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	n = snprintf(line, sizeof(line), "%s.%s %s %ld\n", job, step, host,
	    (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	path = vg_path_join(task_dir, "step");
	(void)vg_write_file_atomic(path, line, (size_t)n, 0600, NULL);
	free(path);
}

/* The attempt number from the environment. */
static int
attempt_number(void)
{
	const char *s;
	long v;

	if ((s = getenv("VIGIL_ATTEMPT")) != NULL && (v = atol(s)) > 0)
		return (int)v;
	if ((s = getenv("SLURM_RESTART_COUNT")) != NULL && (v = atol(s)) >= 0)
		return (int)v + 1;
	return 1;
}

/* The exit status that stands for a result. */
static int
exit_for(const struct vg_result *r)
{
	switch (r->state) {
	case VG_ST_SUCCEEDED:
		return 0;
	case VG_ST_TIMEOUT:
		return 124;
	case VG_ST_CANCELLED:
		return 143;
	case VG_ST_BACKEND_ERROR:
		return VG_EXIT_INTERNAL;
	default:
		if (r->signal > 0)
			return 128 + r->signal;
		return r->exit_code > 0 && r->exit_code < 256 ? r->exit_code :
		    1;
	}
}

/* Converts a waitid result into a wait(2) status word. */
static int
wstatus_of(const siginfo_t *si)
{
	if (si->si_code == CLD_EXITED)
		return (si->si_status & 0xff) << 8;
	if (si->si_code == CLD_DUMPED)
		return (si->si_status & 0x7f) | 0x80;
	return si->si_status & 0x7f;
}

/* True when r ended by a signal that cancels (or the shell's exit status
 * for one): SIGTERM, SIGINT or SIGHUP. */
static int
ended_by_term(const struct vg_result *r)
{
	int sig = r->signal > 0 ? r->signal : r->exit_code > 128 &&
	    r->exit_code < 160 ? r->exit_code - 128 : 0;

	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

/* Waits up to ms for a cancelling signal on sfd; true when one came.
 * Slurm signals every process of a step (scancel, a time limit,
 * preemption), so the task may end by it just before this process
 * reads its own. */
static int
term_follows(int sfd, int ms)
{
	struct signalfd_siginfo si;
	struct pollfd pfd = { .fd = sfd, .events = POLLIN };
	long long end = vg_mono_ms() + ms, now;

	while ((now = vg_mono_ms()) < end) {
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT ||
			    si.ssi_signo == SIGHUP)
				return 1;
	}
	return 0;
}

/*
 * Runs attempt a to its end: waits on its pidfd and a signalfd, refreshes
 * the heartbeat, enforces the timeout.  Fills r.
 */
static int
supervise(struct vg_attempt *a, int sfd, int beat_s, struct vg_result *r,
    struct vg_err *e)
{
	struct pollfd pfd[2];
	struct signalfd_siginfo si;
	siginfo_t info;
	long long now, term_at = 0, kill_at = 0, beat_at;
	int to, timed_out = 0, cancelled = 0;

	now = vg_mono_ms();
	if (a->timeout > 0)
		term_at = now + (long long)(a->timeout * 1000);
	beat_at = now + beat_s * 1000LL;
	for (;;) {
		now = vg_mono_ms();
		if (term_at && !kill_at && now >= term_at) {
			timed_out = 1;
			(void)vg_backend_cancel(a, SIGTERM, NULL);
			kill_at = now + (long long)(a->kill_grace * 1000) + 1;
		}
		if (kill_at && now >= kill_at) {
			(void)vg_backend_cancel(a, SIGKILL, NULL);
			kill_at = now + 1000;
		}
		if (now >= beat_at) {
			heartbeat(a->task_dir);
			beat_at = now + beat_s * 1000LL;
		}
		to = (int)(beat_at - now);
		if (kill_at && kill_at - now < to)
			to = (int)(kill_at - now);
		else if (!kill_at && term_at && term_at - now < to)
			to = (int)(term_at - now);
		pfd[0].fd = a->pidfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, to < 0 ? 0 : to) < 0 && errno != EINTR)
			return vg_err_errno(e, "poll");
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
				(void)vg_backend_cancel(a, (int)si.ssi_signo,
				    NULL);
				continue;
			}
			if (!cancelled) {
				cancelled = 1;
				(void)vg_backend_cancel(a, SIGTERM, NULL);
				kill_at = vg_mono_ms() +
				    (long long)(a->kill_grace * 1000) + 1;
			} else
				(void)vg_backend_cancel(a, SIGKILL, NULL);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP)))
			continue;
		memset(&info, 0, sizeof(info));
		if (waitid((idtype_t)P_PIDFD, (id_t)a->pidfd, &info,
		    WEXITED | WNOHANG) != 0 && errno != EINTR)
			return vg_err_errno(e, "waitid");
		if (info.si_pid == 0)
			continue;
		if (vg_backend_finish(a, wstatus_of(&info), r, e) != 0)
			return e->rc != 0 ? e->rc : VG_EBACKEND;
		if (!timed_out && !cancelled && ended_by_term(r) &&
		    term_follows(sfd, 500))
			cancelled = 1;
		if (timed_out) {
			r->state = VG_ST_TIMEOUT;
			snprintf(r->reason, sizeof(r->reason), "timed out "
			    "after %gs", a->timeout);
		} else if (cancelled && r->state != VG_ST_SUCCEEDED) {
			r->state = VG_ST_CANCELLED;
			snprintf(r->reason, sizeof(r->reason), "cancelled "
			    "(signal to vigil task-exec)");
		}
		return 0;
	}
}

/*
 * isolation.network none or an allow-list: the backend's drive, which
 * says what network the task starts in (apptainer's is made there) and,
 * for an allow-list, runs an egress proxy on this node for this attempt
 * alone, logging into RUN/egress/INDEX.ATTEMPT (the driver takes the
 * records from there, runner/core/egress-log.h).  *drive stays NULL
 * otherwise.
 */
static int
net_prepare(const struct vg_backend_ops *ops, const struct vg_manifest *m,
    const char *run_dir, int index, int attempt,
    struct vg_backend_drive **drive, struct vg_err *e)
{
	enum vg_net_mode net = vg_isolation_net(&m->isolation);
	char rel[64], *dir;
	int dfd, fd, rc;

	*drive = NULL;
	if (m->isolation.level == VG_ISO_NONE ||
	    (net != VG_NET_ALLOW && net != VG_NET_NONE))
		return 0;
	if (net == VG_NET_NONE)
		return vg_backend_prepare(ops, m, run_dir, drive, e);
	snprintf(rel, sizeof(rel), "egress/%d.%d", index, attempt);
	if ((dfd = vg_beneath_anchor(run_dir, e)) < 0)
		return dfd;
	fd = vg_beneath_mkdirs(dfd, rel, 0700, "run directory", e);
	close(dfd);
	if (fd < 0)
		return fd;
	close(fd);
	dir = vg_path_join(run_dir, rel);
	rc = vg_backend_prepare(ops, m, dir, drive, e);
	free(dir);
	return rc;
}

static int
cmd_task_exec_exec(struct vg_args *a)
{
	const struct vg_backend_ops *ops;
	struct vg_task task, *t = &task;
	struct vg_manifest *m = NULL;
	struct vg_attempt at;
	struct vg_result r;
	struct vg_backend_drive *drive = NULL;
	const struct vg_scheduler_ops *sops = NULL;
	struct vg_err e;
	char *run_dir = NULL, *task_dir = NULL, *slash, idx[32], host[64];
	char *base = NULL, *why = NULL, *scratch = NULL;
	const char *hb, *want;
	long index;
	int rc, sfd = -1, beat_s = HEARTBEAT_DEFAULT_S;
	char *end;

	errno = 0;
	index = strtol(a->argv[1], &end, 10);
	if (errno != 0 || *end != '\0' || end == a->argv[1] || index < 0)
		return vg_cmd_usage_error(a, "INDEX must be a task index, not "
		    "'%s'", a->argv[1]);
	if ((hb = getenv("VIGIL_HEARTBEAT")) != NULL && atoi(hb) > 0)
		beat_s = atoi(hb);
	/* Absolute: the task runs where the run was made, not here. */
	run_dir = vg_launch_abs_dir(a->argv[0]);
	memset(&task, 0, sizeof(task));
	want = vg_args_get(a, "manifest-sha256");
	if ((rc = vg_launch_load_dir(run_dir, want, index, &m, &task)) != 0)
		goto out;
	if ((ops = vg_backend_find(vg_manifest_plugin(m,
	    VG_PLUGIN_BACKEND))) == NULL) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "task-exec: unknown backend "
		    "'%s'", m->backend);
		goto out;
	}
	snprintf(idx, sizeof(idx), "tasks/%ld", index);
	task_dir = vg_path_join(run_dir, idx);
	vg_err_init(&e);
	if ((rc = vg_mkdir_p(task_dir, 0700, &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "task-exec: %s", e.msg);
		goto out;
	}
	slash = strrchr(run_dir, '/');
	/* This node's scratch (the run directory as the last resort). */
	if ((rc = vg_scratch_base(&m->scratch, run_dir, &base, &why,
	    &e)) != 0 || (rc = vg_scratch_task_dir_min(base,
	    slash != NULL ? slash + 1 : run_dir, (int)index,
	    m->scratch.min_free, &scratch, &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "task-exec: %s", e.msg);
		goto out;
	}
	memset(&at, 0, sizeof(at));
	at.m = m;
	at.task = t;
	at.run_id = slash != NULL ? slash + 1 : run_dir;
	at.task_dir = task_dir;
	at.scratch_dir = scratch;
	at.attempt = attempt_number();
	at.res = t->resources;
	at.timeout = m->timeout;
	if ((hb = getenv("VIGIL_TIMEOUT")) != NULL && strtod(hb, NULL) > 0)
		at.timeout = strtod(hb, NULL);
	pass_job_env(t);
	/* How the scheduler's job runs the command (Slurm's srun per
	 * rank). */
	if ((sops = vg_scheduler_find(vg_manifest_plugin(m,
	    VG_PLUGIN_SCHEDULER))) != NULL && sops->task_command != NULL)
		sops->task_command(&t->command);
	at.kill_grace = m->kill_grace;
	at.pidfd = -1;
	sfd = vg_launch_job_signals();
	memset(&r, 0, sizeof(r));
	step_file(task_dir);
	heartbeat(task_dir);
	if (sfd < 0)
		rc = vg_err_errno(&e, "signalfd");
	else if ((rc = net_prepare(ops, m, run_dir, (int)index,
	    at.attempt, &drive, &e)) == 0 && (at.drive = drive,
	    rc = vg_backend_start(ops, &at, &e)) == 0) {
		rc = supervise(&at, sfd, beat_s, &r, &e);
		vg_backend_cleanup(&at);
	}
	/* The proxy stops and its last records are in its log before the
	 * driver, which reads them after result.json, can look. */
	vg_backend_unprepare(drive);
	at.drive = NULL;
	if (rc != 0) {
		memset(&r, 0, sizeof(r));
		r.state = VG_ST_BACKEND_ERROR;
		r.exit_code = -1;
		r.ended = vg_now();
		snprintf(r.reason, sizeof(r.reason), "%.255s", e.msg);
	}
	if (sops != NULL && sops->task_ended != NULL)
		sops->task_ended(task_dir, &r);
	if (r.node[0] == '\0' && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		snprintf(r.node, sizeof(r.node), "%s", host);
	}
	/* Outputs first: scratch.keep may remove the scratch directory;
	 * the driver reads result.json, so they are there before it. */
	vg_outputs_after(&m->outputs, t, at.run_id, run_dir, task_dir,
	    scratch, at.attempt, r.state);
	(void)vg_scratch_finish(scratch, m->scratch.keep,
	    r.state == VG_ST_SUCCEEDED, NULL);
	/* Whose record: a packed task's next attempt may follow it in
	 * its pack, and the driver reads each attempt's own. */
	r.attempt = at.attempt;
	vg_err_init(&e);
	if (vg_result_write(task_dir, &r, &e) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "task-exec: %s", e.msg);
		goto out;
	}
	if (r.state == VG_ST_BACKEND_ERROR)
		fprintf(stderr, "vigil: task-exec: %s\n", r.reason);
	rc = exit_for(&r);
out:
	if (sfd >= 0)
		close(sfd);
	vg_task_release(&task);
	vg_manifest_free(m);
	free(base);
	free(why);
	free(scratch);
	free(task_dir);
	free(run_dir);
	return rc;
}

const struct vg_opt vg_cmd_job_opts[] = {
	VG_OPT_MANIFEST_SHA256,
	{ NULL },
};

const struct vg_cmd_entry vg_cmd_task_exec = {
	.name = "task-exec",
	.args_usage = "--manifest-sha256 HEX RUN_DIR INDEX",
	.summary = "run one task attempt (used inside Slurm jobs)",
	.help = "Runs attempt VIGIL_ATTEMPT (else SLURM_RESTART_COUNT+1) of "
	    "task INDEX\nof the run in RUN_DIR through its backend, keeps "
	    "RUN_DIR/tasks/INDEX/\nheartbeat fresh, and writes result.json "
	    "there at the end.  RUN_DIR must be yours and writable by no "
	    "one else,\nand its manifest.json the one whose SHA-256 the "
	    "submitting vigil gave.",
	.opts = vg_cmd_job_opts,
	.hidden = 1,
	.min_args = 2,
	.max_args = 2,
	.exec = cmd_task_exec_exec,
};
