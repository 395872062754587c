/*
 * backend.c - the table of backends, lookup by name, and the wrappers
 * around optional operations: the monitor process for backends that only
 * implement the blocking run(), the argv of an attempt (its environment
 * is task-env.c's), and the result record (result.json) that monitors
 * and `vigil task-exec` leave in the task directory.
 *
 * Who reaps: the caller of vg_backend_start (the scheduler) waits for
 * a->pid with waitpid(2)/waitid(2) once a->pidfd is readable, and hands
 * the wait status to vg_backend_finish.  Nothing here reaps a->pid.
 *
 * result.json is one flat JSON object with one member per line, written
 * with the JSON writer; vg_result_read parses any flat object of string,
 * number, boolean and null members (a small reader of its own, bounded,
 * so this file needs no general JSON parser).  The usage members
 * (cpu_user, cpu_sys in seconds; max_rss, mem_limit in bytes; cpus,
 * gpus) are null when unknown; "cause" is "transient" or "permanent"
 * for a backend failure, null otherwise; "attempt" names the attempt the
 * record is of (absent in records of older vigils).
 *
 * A monitor records itself in the task directory ("monitor": "PID
 * STARTTIME ATTEMPT"), first thing, so that a later vigil can adopt it
 * (vg_backend_reattach) or stop it (vg_backend_monitor_kill) after the
 * vigil that forked it died.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/json.h"
#include "common/path.h"
#include "common/proc.h"
#include "backends/backend.h"
#include "backends/gpu.h"
#include "common/str.h"

#define RESULT_FILE	"result.json"
#define MONITOR_FILE	"monitor"
#define RESULT_MAX	8192	/* bytes; a record is about 400 */

const struct vg_backend_ops *const vg_backends[] = {
	&vg_backend_local,
	&vg_backend_docker,
	&vg_backend_ssh,
	&vg_backend_singularity,
	&vg_backend_modal,
	&vg_backend_daytona,
	&vg_backend_vercel,
	NULL
};

const struct vg_backend_ops *
vg_backend_find(const char *name)
{
	const struct vg_backend_ops *const *b;
	const struct vg_plugin *p;

	if ((p = vg_plugin_find(VG_PLUGIN_BACKEND, name)) == NULL)
		return NULL;
	for (b = vg_backends; *b != NULL; b++)
		if (&(*b)->p == p)
			return *b;
	return NULL;
}

void
vg_backend_probe(const struct vg_backend_ops *ops, struct vg_buf *out)
{
	if (ops->probe != NULL)
		ops->probe(out);
	else
		vg_buf_printf(out, "%s: no host checks (the backend reports "
		    "problems when a run starts)\n", ops->p.name);
}

int
vg_backend_prepare(const struct vg_backend_ops *ops,
    const struct vg_manifest *m, const char *run_dir,
    struct vg_backend_drive **out, struct vg_err *e)
{
	*out = NULL;
	return ops->prepare != NULL ? ops->prepare(m, run_dir, out, e) : 0;
}

void
vg_backend_unprepare(struct vg_backend_drive *d)
{
	if (d != NULL && d->ops->unprepare != NULL)
		d->ops->unprepare(d);
}

const char *
vg_backend_downgrades(const struct vg_backend_ops *ops,
    const struct vg_manifest *m, struct vg_err *e)
{
	return ops->downgrades != NULL ? ops->downgrades(m, e) : "";
}

const char *
vg_backend_confinement(const struct vg_backend_ops *ops,
    const struct vg_manifest *m)
{
	return ops->confinement != NULL ? ops->confinement(m) : NULL;
}

int
vg_backend_image_id(const struct vg_backend_ops *ops,
    const struct vg_manifest *m, struct vg_buf *out, struct vg_err *e)
{
	if (ops != NULL && ops->image_id != NULL)
		return ops->image_id(m, out, e);
	if (m->image != NULL)
		vg_buf_adds(out, m->image);
	return 0;
}

int
vg_backend_can_reap(const struct vg_backend_ops *ops)
{
	return ops->reap != NULL;
}

int
vg_backend_reap(const struct vg_backend_ops *ops, const struct vg_manifest *m,
    const char *run_id, int task, struct vg_buf *report, struct vg_err *e)
{
	return ops->reap != NULL ? ops->reap(run_id != NULL ? m : NULL,
	    run_id, run_id != NULL ? task : -1, report, e) : 0;
}

int
vg_backend_pool(const struct vg_backend_ops *ops, const struct vg_manifest *m,
    struct vg_pool *p, struct vg_err *e)
{
	struct vg_resources peak;

	if (ops->pool != NULL)
		return ops->pool(m, p, e);
	vg_expand_peak(m, &peak);
	return vg_pool_host(vg_pool_conf_of(m), peak.gpus > 0, p, e);
}

int
vg_backend_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	const struct vg_backend_ops *ops = a->ops;
	int ws, rc;

	if (ops->run != NULL)
		return ops->run(a, r, e);
	if (ops->start == NULL || ops->finish == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' cannot "
		    "run commands", ops->p.name);
	if ((rc = ops->start(a, e)) != 0)
		return rc;
	while (waitpid(a->pid, &ws, 0) < 0) {
		if (errno != EINTR) {
			rc = vg_err_errno(e, "waiting for the command");
			goto out;
		}
	}
	rc = ops->finish(a, ws, r, e);
out:
	vg_backend_cleanup(a);
	return rc;
}

/* What a monitor does: the backend's run, or its reattach. */
typedef int (*monitor_fn)(struct vg_attempt *, struct vg_result *,
    struct vg_err *);

/* Records the monitor (this process) in the task directory; best
 * effort: without it the attempt can still be reattached by the
 * backend, only not adopted. */
static void
monitor_record(const struct vg_attempt *a)
{
	unsigned long long start = 0;
	char line[96], *path;
	int n;

	if (a->task_dir == NULL)
		return;
	(void)vg_proc_starttime(getpid(), &start);
	n = snprintf(line, sizeof(line), "%ld %llu %d\n", (long)getpid(),
	    start, a->attempt);
	path = vg_path_join(a->task_dir, MONITOR_FILE);
	(void)vg_write_file_atomic(path, line, (size_t)n, 0600, NULL);
	free(path);
}

/* Reads the monitor record of task_dir; 0 when it parses. */
static int
monitor_read(const char *task_dir, pid_t *pid, unsigned long long *start,
    int *attempt)
{
	struct vg_buf b = VG_BUF_INIT;
	char *path = vg_path_join(task_dir, MONITOR_FILE);
	long p;
	int rc = -1;

	if (vg_beneath_read(task_dir, 0, MONITOR_FILE, 128, &b, NULL) == 0 &&
	    b.data != NULL && sscanf(b.data, "%ld %llu %d", &p, start,
	    attempt) == 3 && p > 0) {
		*pid = (pid_t)p;
		rc = 0;
	}
	free(path);
	vg_buf_release(&b);
	return rc;
}

/* Body of the monitor process: runs (or follows) the attempt and
 * records the result. */
static void __attribute__((noreturn))
monitor_main(struct vg_attempt *a, monitor_fn fn)
{
	struct vg_result r;
	struct vg_err e;
	sigset_t none;
	int rc;

	/* Out of vigil's process group, so a ^C on the terminal reaches
	 * vigil only, which then cancels through vg_backend_cancel. */
	setpgid(0, 0);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	monitor_record(a);

	memset(&r, 0, sizeof(r));
	vg_err_init(&e);
	r.started = vg_now();
	rc = fn(a, &r, &e);
	if (rc == VG_ENOENT && fn == a->ops->reattach) {
		/* Nothing of the attempt left to follow: it runs again. */
		r.state = VG_ST_LOST;
		r.exit_code = -1;
		r.signal = 0;
		r.cause = VG_CAUSE_NONE;
		snprintf(r.reason, sizeof(r.reason), "interrupted: vigil "
		    "exited; %.200s", e.msg);
	} else if (rc != 0) {
		r.state = VG_ST_BACKEND_ERROR;
		r.exit_code = -1;
		r.signal = 0;
		vg_strlcpy(r.reason, e.msg, sizeof(r.reason));
		if (r.cause == VG_CAUSE_NONE)
			r.cause = vg_cause_of_rc(rc);
	} else if (r.state == VG_ST_BACKEND_ERROR && r.cause == VG_CAUSE_NONE)
		r.cause = VG_CAUSE_PERMANENT;
	if (r.ended == 0)
		r.ended = vg_now();
	r.attempt = a->attempt;
	if (vg_result_write(a->task_dir, &r, &e) != 0)
		_exit(2);
	_exit(0);
}

/* Forks the monitor of a calling fn; sets a->pid, a->pidfd. */
static int
monitor_fork(const struct vg_backend_ops *ops, struct vg_attempt *a,
    monitor_fn fn, struct vg_err *e)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return vg_err_errno(e, "cannot fork the monitor of backend "
		    "'%s'", ops->p.name);
	if (pid == 0) {
		if (fn == NULL)
			_exit(0);	/* the record is there already */
		monitor_main(a, fn);
	}
	a->pid = pid;
	a->started = vg_now();
	a->pidfd = vg_pidfd_open(pid);
	if (vg_proc_starttime(pid, &a->pid_start) != 0)
		a->pid_start = 0;
	return 0;
}

int
vg_backend_start(const struct vg_backend_ops *ops, struct vg_attempt *a,
    struct vg_err *e)
{
	a->ops = ops;
	a->pid = 0;
	a->pidfd = -1;
	a->priv = NULL;
	a->adopted = 0;
	if (ops->start != NULL)
		return ops->start(a, e);
	if (ops->run == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED,
		    "backend '%s' cannot start attempts", ops->p.name);

	/* A stale record of an earlier attempt must not be read back as
	 * this attempt's result. */
	if (a->task_dir != NULL) {
		char *p = vg_path_join(a->task_dir, RESULT_FILE);

		unlink(p);
		free(p);
	}
	return monitor_fork(ops, a, ops->run, e);
}

/* Takes over an attempt of a dead vigil; see backend.h. */
int
vg_backend_reattach(const struct vg_backend_ops *ops, struct vg_attempt *a,
    struct vg_err *e)
{
	struct vg_result r;
	unsigned long long start = 0;
	double started = a->started;
	pid_t pid;
	int att = 0, rc;

	a->ops = ops;
	a->pid = 0;
	a->pidfd = -1;
	a->priv = NULL;
	a->adopted = 0;
	if (ops->start != NULL || ops->run == NULL || a->task_dir == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s': its "
		    "attempts end with the vigil that started them",
		    ops->p.name);
	/* No monitor ever recorded itself for this attempt: it never
	 * started (the record is the monitor's first act). */
	if (monitor_read(a->task_dir, &pid, &start, &att) != 0 ||
	    att != a->attempt)
		return vg_err_set(e, VG_ENOENT, "attempt %d never started",
		    a->attempt);
	/* Its monitor outlived vigil (it has a process group of its own):
	 * it still follows the attempt; watch it. */
	if (vg_proc_alive(pid, start) &&
	    (a->pidfd = vg_pidfd_open(pid)) >= 0) {
		a->pid = pid;
		a->pid_start = start;
		a->adopted = 1;
		a->started = started > 0 ? started : vg_now();
		return 0;
	}
	/* It ended and left its record. */
	if (vg_result_read(a->task_dir, &r, NULL) == 0 &&
	    r.attempt == a->attempt)
		rc = monitor_fork(ops, a, NULL, e);
	else if (ops->reattach == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' cannot "
		    "follow an attempt whose monitor is gone", ops->p.name);
	else
		rc = monitor_fork(ops, a, ops->reattach, e);
	if (rc == 0 && started > 0)
		a->started = started;
	return rc;
}

/* Kills the recorded monitor of task_dir; see backend.h. */
int
vg_backend_monitor_kill(const char *task_dir, int attempt)
{
	unsigned long long start;
	pid_t pid;
	int att;

	if (task_dir == NULL || monitor_read(task_dir, &pid, &start,
	    &att) != 0 || (attempt > 0 && att != attempt) ||
	    !vg_proc_alive(pid, start))
		return 0;
	return kill(pid, SIGKILL) == 0;
}

/* Fills r from the wait status of a process that did not leave a record. */
static void
result_from_wstatus(struct vg_result *r, int wstatus)
{
	if (WIFEXITED(wstatus)) {
		r->exit_code = WEXITSTATUS(wstatus);
		r->signal = 0;
		r->state = r->exit_code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
	} else if (WIFSIGNALED(wstatus)) {
		r->exit_code = -1;
		r->signal = WTERMSIG(wstatus);
		r->state = VG_ST_FAILED;
	} else {
		r->exit_code = -1;
		r->signal = 0;
		r->state = VG_ST_BACKEND_ERROR;
	}
}

int
vg_backend_finish(struct vg_attempt *a, int wstatus, struct vg_result *r,
    struct vg_err *e)
{
	struct vg_err re;
	int rc;

	if (a->ops != NULL && a->ops->finish != NULL)
		return a->ops->finish(a, wstatus, r, e);

	memset(r, 0, sizeof(r[0]));
	r->started = a->started;
	vg_err_init(&re);
	rc = a->task_dir != NULL ? vg_result_read(a->task_dir, r, &re) :
	    VG_ENOENT;
	if (rc == 0 && r->attempt != 0 && r->attempt != a->attempt)
		rc = vg_err_set(&re, VG_ESTATE, "the record is of attempt %d",
		    r->attempt);
	if (rc == 0 && (a->adopted || (WIFEXITED(wstatus) &&
	    WEXITSTATUS(wstatus) == 0)))
		return 0;
	if (a->adopted) {
		/* Not our child: its wait status went to someone else. */
		r->state = VG_ST_BACKEND_ERROR;
		r->exit_code = -1;
		r->signal = 0;
		r->cause = VG_CAUSE_TRANSIENT;
		r->ended = vg_now();
		snprintf(r->reason, sizeof(r->reason), "monitor of backend "
		    "'%s' (started by an earlier vigil) ended without a "
		    "result: %.160s", a->ops != NULL ? a->ops->p.name : "?",
		    re.msg);
		return 0;
	}
	/* The monitor died without a (complete) record: a backend failure,
	 * with what is known of how it ended. */
	result_from_wstatus(r, wstatus);
	r->state = VG_ST_BACKEND_ERROR;
	r->cause = VG_CAUSE_TRANSIENT;
	r->ended = vg_now();
	if (WIFSIGNALED(wstatus))
		snprintf(r->reason, sizeof(r->reason), "monitor of backend "
		    "'%s' killed by signal %d (%s) without a result",
		    a->ops != NULL ? a->ops->p.name : "?", WTERMSIG(wstatus),
		    strsignal(WTERMSIG(wstatus)));
	else
		snprintf(r->reason, sizeof(r->reason), "monitor of backend "
		    "'%s' exited with status %d without a result%s%.160s",
		    a->ops != NULL ? a->ops->p.name : "?",
		    WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
		    rc != 0 ? ": " : "", rc != 0 ? re.msg : "");
	return 0;
}

int
vg_backend_cancel(struct vg_attempt *a, int sig, struct vg_err *e)
{
	int rc;

	if (a->ops != NULL && a->ops->cancel != NULL)
		return a->ops->cancel(a, sig, e);
	if (a->pid <= 0)
		return 0;
	/* The monitor's run() stops its remote work on SIGTERM; SIGKILL
	 * only ends the monitor. */
	rc = vg_proc_signal(a->pidfd, a->pid, sig);
	if (rc != 0 && errno != ESRCH)
		return vg_err_errno(e, "cannot signal the monitor (pid %d)",
		    (int)a->pid);
	return 0;
}

double
vg_backend_timeout_slack(const struct vg_attempt *a)
{
	if (a->ops == NULL || a->ops->timeout_slack == NULL)
		return 0;
	return a->ops->timeout_slack(a);
}

void
vg_backend_cleanup(struct vg_attempt *a)
{
	if (a->ops != NULL && a->ops->cleanup != NULL)
		a->ops->cleanup(a);
	if (a->pidfd >= 0) {
		close(a->pidfd);
		a->pidfd = -1;
	}
}

void
vg_attempt_argv(const struct vg_attempt *a, struct vg_strv *out)
{
	const struct vg_command *c = a->task != NULL ? &a->task->command :
	    &a->m->command;
	size_t i;

	if (!c->is_argv) {
		vg_strv_push(out, "/bin/sh");
		vg_strv_push(out, "-c");
		vg_strv_push(out, c->shell != NULL ? c->shell : "");
		return;
	}
	for (i = 0; i < c->argv.n; i++)
		vg_strv_push(out, c->argv.v[i]);
}

/* Appends one usage member: its value, or null when unknown. */
static void
usage_member(struct vg_buf *b, const char *key, int known, double v,
    int integral)
{
	vg_buf_printf(b, ",\n\"%s\": ", key);
	if (!known)
		vg_buf_adds(b, "null");
	else if (integral)
		vg_buf_printf(b, "%.0f", v);
	else
		vg_buf_printf(b, "%.6f", v);
}

/* Appends the usage members of a result record. */
static void
usage_write(struct vg_buf *b, const struct vg_usage *u)
{
	usage_member(b, "cpu_user", u->known & VG_USAGE_CPU, u->cpu_user, 0);
	usage_member(b, "cpu_sys", u->known & VG_USAGE_CPU, u->cpu_sys, 0);
	usage_member(b, "max_rss", u->known & VG_USAGE_RSS,
	    (double)u->max_rss, 1);
	usage_member(b, "cpus", u->known & VG_USAGE_CPUS, u->cpus, 1);
	usage_member(b, "gpus", u->known & VG_USAGE_GPUS, u->gpus, 1);
	usage_member(b, "mem_limit", u->known & VG_USAGE_MEM,
	    (double)u->mem_limit, 1);
}

void
vg_result_text(const struct vg_result *r, struct vg_buf *b)
{
	/* One member per line: easy to read with grep on a compute node. */
	vg_buf_adds(b, "{\n\"state\": ");
	vg_json_quote(b, vg_state_name(r->state),
	    strlen(vg_state_name(r->state)));
	vg_buf_printf(b, ",\n\"exit_code\": %d,\n\"signal\": %d,\n",
	    r->exit_code, r->signal);
	vg_buf_printf(b, "\"started\": %.6f,\n\"ended\": %.6f,\n",
	    r->started, r->ended);
	vg_buf_adds(b, "\"node\": ");
	vg_json_quote(b, r->node, strnlen(r->node, sizeof(r->node)));
	vg_buf_adds(b, ",\n\"reason\": ");
	vg_json_quote(b, r->reason, strnlen(r->reason, sizeof(r->reason)));
	usage_write(b, &r->usage);
	vg_buf_adds(b, ",\n\"cause\": ");
	if (vg_cause_name((enum vg_cause)r->cause) != NULL)
		vg_json_quote(b, vg_cause_name((enum vg_cause)r->cause),
		    strlen(vg_cause_name((enum vg_cause)r->cause)));
	else
		vg_buf_adds(b, "null");
	if (r->attempt > 0)
		vg_buf_printf(b, ",\n\"attempt\": %d", r->attempt);
	vg_buf_adds(b, "\n}\n");
}

int
vg_result_write(const char *task_dir, const struct vg_result *r,
    struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char *path;
	int rc;

	vg_result_text(r, &b);
	path = vg_path_join(task_dir, RESULT_FILE);
	rc = vg_write_file_replace(path, b.data, b.len, 0600, 1, e);
	free(path);
	vg_buf_release(&b);
	return rc;
}

void
vg_usage_given(struct vg_usage *u, const struct vg_resources *res)
{
	if (res->cpus > 0) {
		u->cpus = res->cpus;
		u->known |= VG_USAGE_CPUS;
	}
	if (res->gpus > 0) {
		u->gpus = res->gpus;
		u->known |= VG_USAGE_GPUS;
	}
	if (res->memory > 0) {
		u->mem_limit = (long long)res->memory;
		u->known |= VG_USAGE_MEM;
	}
}

/* Reads an integer member that fits an int; absent leaves *out alone. */
static int
result_int(const struct vg_json_value *o, const char *key, int *out)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL)
		return 0;
	/* The range first: converting a double out of int's range is
	 * undefined. */
	if (v->type != VG_JSON_NUMBER || !(v->num >= INT_MIN &&
	    v->num <= INT_MAX) || v->num != (double)(int)v->num)
		return -1;
	*out = (int)v->num;
	return 0;
}

/* Reads a number member; absent leaves *out alone. */
static int
result_num(const struct vg_json_value *o, const char *key, double *out)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_NUMBER)
		return -1;
	*out = v->num;
	return 0;
}

/* Reads a string member into a fixed buffer (truncating). */
static int
result_str(const struct vg_json_value *o, const char *key, char *out,
    size_t size)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_STRING)
		return -1;
	vg_strlcpy(out, v->str, size);
	return 0;
}

/* Reads the cause member: "transient", "permanent", null or absent. */
static int
result_cause(const struct vg_json_value *o, int *out)
{
	const struct vg_json_value *v = vg_json_get(o, "cause");

	*out = VG_CAUSE_NONE;
	if (v == NULL || v->type == VG_JSON_NULL)
		return 0;
	if (v->type != VG_JSON_STRING)
		return -1;
	if (strcmp(v->str, "transient") == 0)
		*out = VG_CAUSE_TRANSIENT;
	else if (strcmp(v->str, "permanent") == 0)
		*out = VG_CAUSE_PERMANENT;
	else
		return -1;
	return 0;
}

/* Reads a usage member: a number >= 0 (integral when asked) sets bit in
 * *known, null or absence leaves it unknown; returns -1 when bad. */
static int
usage_num(const struct vg_json_value *o, const char *key, int integral,
    unsigned bit, unsigned *known, double *out)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL || v->type == VG_JSON_NULL)
		return 0;
	if (v->type != VG_JSON_NUMBER || !(v->num >= 0) || v->num > 9e18 ||
	    (integral && v->num != floor(v->num)))
		return -1;
	*out = v->num;
	*known |= bit;
	return 0;
}

/* Reads the usage members of a result record into u; the name of the
 * first bad one, or NULL. */
static const char *
usage_parse(const struct vg_json_value *o, struct vg_usage *u)
{
	unsigned cpu = 0, k = 0;
	double v[6] = { 0, 0, 0, 0, 0, 0 };

	if (usage_num(o, "cpu_user", 0, VG_USAGE_CPU, &cpu, &v[0]) != 0)
		return "cpu_user";
	if (usage_num(o, "cpu_sys", 0, VG_USAGE_CPU, &k, &v[1]) != 0)
		return "cpu_sys";
	/* CPU time is known when both halves are. */
	if (cpu != k)
		return cpu ? "cpu_sys" : "cpu_user";
	if (usage_num(o, "max_rss", 1, VG_USAGE_RSS, &k, &v[2]) != 0)
		return "max_rss";
	if (usage_num(o, "cpus", 1, VG_USAGE_CPUS, &k, &v[3]) != 0 ||
	    v[3] > 1e6)
		return "cpus";
	if (usage_num(o, "gpus", 1, VG_USAGE_GPUS, &k, &v[4]) != 0 ||
	    v[4] > 1e6)
		return "gpus";
	if (usage_num(o, "mem_limit", 1, VG_USAGE_MEM, &k, &v[5]) != 0)
		return "mem_limit";
	u->known = k;
	u->cpu_user = v[0];
	u->cpu_sys = v[1];
	u->max_rss = (long long)v[2];
	u->cpus = (int)v[3];
	u->gpus = (int)v[4];
	u->mem_limit = (long long)v[5];
	return NULL;
}

/* Parses a result record (a JSON object; unknown members are skipped, as
 * newer writers may add some) into r. */
static int
result_parse(const char *text, size_t len, struct vg_result *r,
    const char *path, struct vg_err *e)
{
	static const struct vg_json_limits lim = {
		.max_bytes = RESULT_MAX, .max_depth = 4, .max_values = 256,
	};
	const struct vg_json_value *o, *st;
	struct vg_json_doc *doc = NULL;
	const char *bad = NULL;
	int state, rc = 0;

	memset(r, 0, sizeof(r[0]));
	r->exit_code = -1;
	if (vg_json_parse(text, len, &lim, &doc, e) != 0)
		return vg_err_prefix(e, "'%s': not a result record: ", path);
	o = vg_json_root(doc);
	if (o->type != VG_JSON_OBJECT) {
		rc = vg_err_set(e, VG_EPARSE, "'%s': not a result record "
		    "(not an object)", path);
		goto out;
	}
	if ((st = vg_json_get(o, "state")) == NULL) {
		rc = vg_err_set(e, VG_EPARSE, "'%s': no \"state\" member",
		    path);
		goto out;
	}
	if (st->type != VG_JSON_STRING || (state = vg_state_parse(st->str)) < 0) {
		rc = vg_err_set(e, VG_EPARSE, "'%s': unknown state '%s'", path,
		    st->type == VG_JSON_STRING ? st->str : "(not a string)");
		goto out;
	}
	r->state = (enum vg_state)state;
	if (result_int(o, "exit_code", &r->exit_code) != 0)
		bad = "exit_code";
	else if (result_int(o, "signal", &r->signal) != 0 || r->signal < 0)
		bad = "signal";
	else if (result_num(o, "started", &r->started) != 0)
		bad = "started";
	else if (result_num(o, "ended", &r->ended) != 0)
		bad = "ended";
	else if (result_str(o, "node", r->node, sizeof(r->node)) != 0)
		bad = "node";
	else if (result_str(o, "reason", r->reason, sizeof(r->reason)) != 0)
		bad = "reason";
	else if (result_cause(o, &r->cause) != 0)
		bad = "cause";
	else if (result_int(o, "attempt", &r->attempt) != 0 ||
	    r->attempt < 0)
		bad = "attempt";
	else
		bad = usage_parse(o, &r->usage);
	if (bad != NULL) {
		rc = vg_err_set(e, VG_EPARSE, "'%s': bad value for \"%s\"",
		    path, bad);
		goto out;
	}
	if (!vg_state_terminal(r->state))
		rc = vg_err_set(e, VG_EPARSE, "'%s': state '%s' is not "
		    "terminal", path, vg_state_name(r->state));
out:
	vg_json_free(doc);
	return rc;
}

int
vg_result_read(const char *task_dir, struct vg_result *r, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char *path;
	int rc;

	path = vg_path_join(task_dir, RESULT_FILE);
	rc = vg_beneath_read(task_dir, 0, RESULT_FILE, RESULT_MAX, &b, e);
	if (rc == 0)
		rc = result_parse(b.data != NULL ? b.data : "", b.len, r,
		    path, e);
	free(path);
	vg_buf_release(&b);
	return rc;
}

/* Parses a result record from memory (for the fuzz harness and tests). */
int
vg_result_parse(const char *text, size_t len, struct vg_result *r,
    struct vg_err *e)
{
	return result_parse(text, len, r, "result", e);
}

/* "host:pid:starttime" of this process; see backend.h. */
void
vg_backend_owner_label(char *out, size_t size)
{
	unsigned long long start = 0;
	char host[256];

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	(void)vg_proc_starttime(getpid(), &start);
	snprintf(out, size, "%s:%ld:%llu", host, (long)getpid(), start);
}

/* True when owner's process on this host is gone; see backend.h. */
int
vg_backend_owner_dead(const char *owner)
{
	char host[256], label_host[256];
	unsigned long long start;
	long pid;

	if (owner == NULL || sscanf(owner, "%255[^:]:%ld:%llu", label_host,
	    &pid, &start) != 3 || pid <= 0)
		return 0;
	if (gethostname(host, sizeof(host)) != 0)
		return 0;
	host[sizeof(host) - 1] = '\0';
	if (strcmp(host, label_host) != 0)
		return 0;	/* another host's: cannot tell */
	return !vg_proc_alive((pid_t)pid, start);
}

/* Opens name in the output directory dir (up as in backend.h): made
 * afresh when fresh, else appended to. */
static int
output_file(const char *dir, int up, const char *name, int flags,
    int fresh, struct vg_err *e)
{
	char what[PATH_MAX + 32];
	int dfd, fd;

	if ((dfd = vg_beneath_dir_in(dir, up, e)) < 0)
		return dfd;
	snprintf(what, sizeof(what), "output directory '%s'", dir);
	/* Whatever is there (a link, a FIFO, another's file the task
	 * planted) is removed, never followed or truncated. */
	if (fresh && unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
		fd = vg_err_errno(e, "%s: removing '%s'", what, name);
	else
		fd = vg_beneath_file(dfd, name, O_WRONLY | O_CREAT | flags |
		    (fresh ? O_EXCL : O_APPEND), 0644, what, e);
	close(dfd);
	return fd;
}

/* Opens a task output file afresh; see backend.h. */
int
vg_task_output_open(const char *dir, int up, const char *name, int flags,
    struct vg_err *e)
{
	return output_file(dir, up, name, flags, 1, e);
}

/* Opens a task output file for appending; see backend.h. */
int
vg_task_output_reopen(const char *dir, int up, const char *name,
    struct vg_err *e)
{
	return output_file(dir, up, name, 0, 0, e);
}

/* Fills r as a backend failure with e's message; returns the rc. */
int
vg_result_fail(struct vg_result *r, const struct vg_err *e)
{
	r->state = VG_ST_BACKEND_ERROR;
	snprintf(r->reason, sizeof(r->reason), "%.*s",
	    (int)sizeof(r->reason) - 1, e->msg);
	if (r->cause == VG_CAUSE_NONE)
		r->cause = vg_cause_of_rc(e->rc != 0 ? e->rc : VG_EBACKEND);
	return e->rc != 0 ? e->rc : VG_EBACKEND;
}

int
vg_backend_refused_host_access(const struct vg_err *e)
{
	return e->rc == VG_EDENIED && strncmp(e->msg, "host access refused",
	    sizeof("host access refused") - 1) == 0;
}
