/*
 * gridengine-step.c - attempts of the direct scheduler as tasks of a
 * Grid Engine parallel job, when vigil itself runs inside one (a job
 * script submitted with `qsub -pe PE N` that runs `vigil run`): each
 * attempt is `qrsh -inherit -v VIGIL_ATTEMPT=... HOST vigil task-exec
 * --manifest-sha256 HEX RUN_DIR INDEX` on a host of $PE_HOSTFILE with
 * slots free, so the backend, policy and scratch apply where the task
 * lands, Grid Engine accounts it to the job, and the result record
 * (tasks/INDEX/result.json) says how the task ended.  The counterpart of
 * slurm-step.c's job steps.
 *
 * What is here: the decision (VIGIL_GRIDENGINE_STEPS and the job's
 * environment), the job's slots per host from $PE_HOSTFILE (less the
 * master's first slot when the parallel environment counts the job
 * script as its first task, `qconf -sp PE`), a first-fit placement of
 * each attempt's cpus, starting qrsh with its output in
 * tasks/INDEX/step.log, and the verdict when no record exists.  Signals
 * go to the qrsh client, which passes them to the remote task-exec.
 * --jobs defaults to the job's task slots over the smallest task's cpus.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/log.h"
#include "common/path.h"
#include "common/which.h"
#include "runner/manifest/task.h"
#include "schedulers/gridengine.h"
#include "schedulers/launcher.h"
#include "schedulers/cluster.h"

/* Seconds a task's record may lag behind qrsh's end (a slow shared file
 * system); VIGIL_GRIDENGINE_GRACE overrides. */
#define QRSH_GRACE	60.0
/* Seconds past timeout + kill_grace before vigil stops a task itself:
 * task-exec enforces the timeout, this is the backstop. */
#define QRSH_SLACK	30.0
/* Hosts of a job vigil takes from $PE_HOSTFILE. */
#define QRSH_HOSTS_MAX	4096

/* One host of the job: its slots for tasks and those in use. */
struct qhost {
	char	*name;
	int	 slots;
	int	 used;
};

/* Where a running attempt was placed. */
struct qplace {
	const struct vg_attempt	*a;
	size_t			 host;
	int			 cpus;
};

/* The qrsh launcher's state for one run. */
struct qrsh_launch {
	char		*vigil;		/* vigil's own path */
	const char	*run_dir;
	char		 manifest_sha256[65];
	double		 grace;
	struct qhost	*hosts;
	size_t		 nhosts;
	struct qplace	*placed;
	size_t		 nplaced, cap;
};

int
vg_ge_hostfile_parse(const char *text, struct vg_ge_slots **out, size_t *n,
    struct vg_err *e)
{
	struct vg_ge_slots *v = NULL;
	const char *p = text, *eol;
	char host[256];
	size_t cap = 0, line = 0;
	long slots;
	int used;

	*out = NULL;
	*n = 0;
	for (; *p != '\0'; p = *eol != '\0' ? eol + 1 : eol) {
		eol = p + strcspn(p, "\n");
		line++;
		if (eol == p)
			continue;
		if (sscanf(p, "%255s %ld%n", host, &slots, &used) != 2 ||
		    slots <= 0 || slots > INT_MAX || p + used > eol) {
			free(v);
			return vg_err_set(e, VG_EPARSE, "line %zu: not 'HOST "
			    "SLOTS QUEUE RANGE'", line);
		}
		if (*n >= QRSH_HOSTS_MAX) {
			free(v);
			return vg_err_set(e, VG_EPARSE, "more than %d hosts",
			    QRSH_HOSTS_MAX);
		}
		v = vg_xgrow(v, &cap, *n + 1, sizeof(*v));
		snprintf(v[*n].host, sizeof(v[*n].host), "%s", host);
		v[(*n)++].slots = (int)slots;
	}
	if (*n == 0)
		return vg_err_set(e, VG_EPARSE, "no host");
	*out = v;
	return 0;
}

/* True when name is this host (its short or full name). */
static int
is_this_host(const char *name)
{
	char me[256];
	size_t n;

	if (gethostname(me, sizeof(me)) != 0)
		return 0;
	me[sizeof(me) - 1] = '\0';
	if (strcmp(me, name) == 0)
		return 1;
	n = strcspn(me, ".");
	return strncmp(me, name, n) == 0 && (name[n] == '.' ||
	    name[n] == '\0') && strchr(me, '.') == NULL;
}

/* 1 when the parallel environment pe counts the job script as its first
 * task (`qconf -sp PE`: job_is_first_task TRUE), 0 when not; 1 when it
 * cannot be read (a slot too few is safe, one too many is refused). */
static int
first_task(const char *pe)
{
	const char *argv[] = { "qconf", "-sp", pe, NULL };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	const char *p;
	int yes = 1;

	vg_err_init(&e);
	if (vg_cluster_cmd(argv, &out, NULL, 15000, NULL, &e) == 0 &&
	    (p = strstr(vg_buf_str(&out), "job_is_first_task")) != NULL) {
		p += strlen("job_is_first_task");
		p += strspn(p, " \t");
		yes = strncasecmp(p, "FALSE", 5) != 0;
	}
	vg_buf_release(&out);
	return yes;
}

int
vg_ge_steps_wanted(struct vg_err *e)
{
	const char *mode = getenv("VIGIL_GRIDENGINE_STEPS");
	const char *job = getenv("JOB_ID"), *hf = getenv("PE_HOSTFILE");
	char *qrsh;
	int always;

	if (mode == NULL || *mode == '\0')
		mode = "auto";
	if (strcmp(mode, "never") == 0)
		return 0;
	if (strcmp(mode, "always") != 0 && strcmp(mode, "auto") != 0)
		return vg_err_set(e, VG_EINVAL, "VIGIL_GRIDENGINE_STEPS: bad "
		    "value '%s' (valid: auto, always, never)", mode);
	always = strcmp(mode, "always") == 0;
	if (job == NULL || *job == '\0' || hf == NULL || *hf == '\0' ||
	    strcmp(hf, "undefined") == 0) {
		if (always)
			return vg_err_set(e, VG_EINVAL, "VIGIL_GRIDENGINE_STEPS"
			    "=always: not inside a Grid Engine parallel job "
			    "(JOB_ID or PE_HOSTFILE is not set)");
		return 0;
	}
	if ((qrsh = vg_which("qrsh")) == NULL) {
		if (always)
			return vg_err_set(e, VG_ENOENT, "VIGIL_GRIDENGINE_STEPS"
			    "=always: qrsh is not on PATH");
		vg_warn("inside Grid Engine job %s but qrsh is not on PATH: "
		    "tasks run on this host (VIGIL_GRIDENGINE_STEPS=never "
		    "says so quietly)", job);
		return 0;
	}
	free(qrsh);
	return 1;
}

/* Frees the launcher's state. */
static void
qrsh_close(struct vg_launcher *l)
{
	struct qrsh_launch *p = l->priv;
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nhosts; i++)
		free(p->hosts[i].name);
	free(p->hosts);
	free(p->placed);
	free(p->vigil);
	free(p);
	l->priv = NULL;
}

/* Applies inside a parallel job that wants qrsh tasks: reads the job's
 * hosts and slots; sets --jobs from them. */
static int
qrsh_open(struct vg_launcher *l, struct vg_sched *s, struct vg_err *e)
{
	struct vg_ge_slots *v = NULL;
	struct qrsh_launch *p;
	struct vg_buf text = VG_BUF_INIT;
	const char *env, *pe;
	size_t i, n = 0;
	int rc, per, total = 0;

	if ((rc = vg_ge_steps_wanted(e)) <= 0)
		return rc;
	/* $PE_HOSTFILE is Grid Engine's, in the job's spool directory;
	 * read as a regular file only. */
	if ((rc = vg_read_regular(getenv("PE_HOSTFILE"), 1 << 20, &text, NULL,
	    "PE_HOSTFILE", e)) != 0 ||
	    (rc = vg_ge_hostfile_parse(vg_buf_str(&text), &v, &n, e)) != 0) {
		vg_err_prefix(e, "gridengine: $PE_HOSTFILE '%s': ",
		    getenv("PE_HOSTFILE"));
		vg_buf_release(&text);
		return rc;
	}
	vg_buf_release(&text);
	p = vg_xcalloc(1, sizeof(*p));
	l->priv = p;
	p->hosts = vg_xcalloc(n, sizeof(*p->hosts));
	pe = getenv("PE");
	for (i = 0; i < n; i++) {
		p->hosts[i].name = vg_xstrdup(v[i].host);
		p->hosts[i].slots = v[i].slots;
		/* The job script holds the master's first slot when the
		 * environment says it is the first task. */
		if (is_this_host(v[i].host) && pe != NULL && *pe != '\0' &&
		    first_task(pe))
			p->hosts[i].slots--;
		total += p->hosts[i].slots;
	}
	p->nhosts = n;
	free(v);
	if (total <= 0) {
		/* A one-slot job: its script holds the slot; the tasks run
		 * in it, one at a time. */
		vg_warn("inside Grid Engine job %s, whose only slot its script "
		    "holds (job_is_first_task of parallel environment '%s'): "
		    "tasks run in the job itself; ask for more slots to run "
		    "them as qrsh -inherit tasks", getenv("JOB_ID"),
		    pe != NULL ? pe : "");
		qrsh_close(l);
		return 0;
	}
	env = getenv("VIGIL_GRIDENGINE_VIGIL");
	p->vigil = env != NULL && *env == '/' ? vg_xstrdup(env) :
	    realpath("/proc/self/exe", NULL);
	if (p->vigil == NULL) {
		rc = vg_err_errno(e, "finding the path of vigil itself");
		qrsh_close(l);
		return rc;
	}
	if ((rc = vg_run_manifest_read(s->run_dir, NULL, NULL,
	    p->manifest_sha256, e)) != 0) {
		qrsh_close(l);
		return rc;
	}
	p->run_dir = s->run_dir;
	p->grace = QRSH_GRACE;
	if ((env = getenv("VIGIL_GRIDENGINE_GRACE")) != NULL && atof(env) > 0)
		p->grace = atof(env);
	per = vg_launch_least_cpus(s->m);
	if (s->jobs <= 0)
		s->jobs = total / per > 0 ? total / per : 1;
	vg_debug("direct: inside Grid Engine job %s: attempts run as qrsh "
	    "-inherit tasks, %d at once (%d slots on %zu hosts)",
	    getenv("JOB_ID"), s->jobs, total, n);
	return 1;
}

/* The host for an attempt of cpus CPUs: the first with room, else the
 * one with the most room (the task waits for nothing: Grid Engine
 * refuses a task past the host's slots, and the verdict says so). */
static size_t
place(const struct qrsh_launch *p, int cpus)
{
	size_t i, best = 0;

	for (i = 0; i < p->nhosts; i++)
		if (p->hosts[i].slots - p->hosts[i].used >= cpus)
			return i;
	for (i = 1; i < p->nhosts; i++)
		if (p->hosts[i].slots - p->hosts[i].used >
		    p->hosts[best].slots - p->hosts[best].used)
			best = i;
	return best;
}

/* Starts a as a qrsh -inherit task. */
static int
qrsh_start(struct vg_launcher *l, struct vg_attempt *a, struct vg_err *e)
{
	struct qrsh_launch *p = l->priv;
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	char idx[32];
	size_t h;
	int r, cpus = a->res.cpus > 0 ? a->res.cpus : 1;

	a->pid = 0;
	a->pidfd = -1;
	if (mkdir(a->task_dir, 0700) != 0 && errno != EEXIST)
		return vg_err_errno(e, "creating task directory '%s'",
		    a->task_dir);
	vg_cluster_set_aside(a->task_dir, "result.json", a->attempt - 1);
	vg_cluster_set_aside(a->task_dir, "heartbeat", a->attempt - 1);
	h = place(p, cpus);
	snprintf(idx, sizeof idx, "%d", a->task->index);
	/* The remote task gets the job's environment, not qrsh's: what
	 * task-exec needs of the attempt goes with -v. */
	vg_strv_push(&argv, "qrsh");
	vg_strv_push(&argv, "-inherit");
	vg_strv_push(&argv, "-v");
	vg_strv_pushf(&argv, "VIGIL_ATTEMPT=%d", a->attempt);
	if (a->timeout > 0) {
		vg_strv_push(&argv, "-v");
		vg_strv_pushf(&argv, "VIGIL_TIMEOUT=%.3f", a->timeout);
	}
	if (a->gpu_set) {
		vg_strv_push(&argv, "-v");
		vg_strv_pushf(&argv, "CUDA_VISIBLE_DEVICES=%s", a->gpu_ids);
	}
	vg_strv_push(&argv, p->hosts[h].name);
	vg_strv_push(&argv, p->vigil);
	vg_strv_push(&argv, "task-exec");
	vg_strv_push(&argv, "--manifest-sha256");
	vg_strv_push(&argv, p->manifest_sha256);
	vg_strv_push(&argv, p->run_dir);
	vg_strv_push(&argv, idx);
	vg_launch_env(a, 1, &env);
	r = vg_launch_spawn(a, &argv, &env, "step.log", e);
	if (r != 0)
		vg_err_prefix(e, "starting qrsh -inherit for task %d: ",
		    a->task->index);
	else {
		p->placed = vg_xgrow(p->placed, &p->cap, p->nplaced + 1,
		    sizeof(*p->placed));
		p->placed[p->nplaced].a = a;
		p->placed[p->nplaced].host = h;
		p->placed[p->nplaced++].cpus = cpus;
		p->hosts[h].used += cpus;
		vg_debug("direct: task %d on %s (%d of %d slots in use)",
		    a->task->index, p->hosts[h].name, p->hosts[h].used,
		    p->hosts[h].slots);
	}
	vg_strv_release(&argv);
	vg_strv_release(&env);
	return r;
}

/* task-exec enforces the timeout; vigil waits for it this long more. */
static double
qrsh_slack(const struct vg_attempt *a)
{
	return a->kill_grace + QRSH_SLACK;
}

/* Signals the task through its qrsh client, which passes it on. */
static void
qrsh_signal(struct vg_launcher *l, struct vg_attempt *a, int sig)
{
	(void)l;
	if (a->pid > 0)
		(void)kill(a->pid, sig);
}

int
vg_ge_qrsh_verdict(const char *log, int wstatus, int final,
    struct vg_result *r)
{
	const char *hit;
	size_t len;

	memset(r, 0, sizeof *r);
	r->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	if (WIFSIGNALED(wstatus))
		r->signal = WTERMSIG(wstatus);
	if (log == NULL)
		log = "";
	/* Grid Engine would not start the task: it never ran. */
	if ((hit = strstr(log, "error: executing task of job")) != NULL ||
	    (hit = strstr(log, "error: can't")) != NULL) {
		len = strcspn(hit, "\n");
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof r->reason, "qrsh -inherit refused "
		    "the task: %.*s", (int)(len < 200 ? len : 200), hit);
		return 1;
	}
	if (!final)
		return 0;
	r->state = VG_ST_LOST;
	snprintf(r->reason, sizeof r->reason, "qrsh -inherit %s %d, no "
	    "result record", WIFSIGNALED(wstatus) ? "killed by signal" :
	    "exited", WIFSIGNALED(wstatus) ? r->signal : r->exit_code);
	return 1;
}

/* How a task ended: its result record when there is one, else qrsh's
 * own account once it explains the end or the grace window passed. */
static enum vg_launch_end
qrsh_ended(struct vg_launcher *l, struct vg_attempt *a, int ws,
    long long waited_ms, int stopping, struct vg_result *r)
{
	const struct qrsh_launch *p = l->priv;

	return vg_launch_ended(a, ws, waited_ms, stopping, p->grace, "qrsh",
	    vg_ge_qrsh_verdict, r);
}

/* Gives the attempt's slots back. */
static void
qrsh_cleanup(struct vg_launcher *l, struct vg_attempt *a)
{
	struct qrsh_launch *p = l->priv;
	size_t i;

	for (i = 0; i < p->nplaced; i++)
		if (p->placed[i].a == a) {
			p->hosts[p->placed[i].host].used -= p->placed[i].cpus;
			p->placed[i] = p->placed[--p->nplaced];
			return;
		}
}

const struct vg_launcher_ops vg_launcher_qrsh = {
	.name = "qrsh",
	.remote = 1,
	.open = qrsh_open,
	.start = qrsh_start,
	.slack = qrsh_slack,
	.signal = qrsh_signal,
	.ended = qrsh_ended,
	.cleanup = qrsh_cleanup,
	.close = qrsh_close,
};
