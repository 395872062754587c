/*
 * slurm-step.c - attempts of the direct scheduler as Slurm job steps,
 * when vigil itself runs inside an allocation (the `sbatch wrapper.sh`
 * workflow): each attempt is one `srun --exclusive -n1 -N1 ... -- vigil
 * task-exec RUN_DIR INDEX` (vg_slurm_step_argv), so the backend, policy
 * and scratch apply on the node where the step lands and the result
 * record (tasks/INDEX/result.json) says how the task ended.
 *
 * What is here: the decision (VIGIL_SLURM_STEPS and the allocation's
 * environment), starting srun with its output in tasks/INDEX/step.log,
 * signalling a step through Slurm (task-exec gets the signal, not srun),
 * and the verdict when no record exists: srun's own failures (step
 * refused, node lost, step cancelled by Slurm) told apart from a task
 * that ended without a word.  vg_launcher_srun puts these together as
 * the direct scheduler's launcher (launcher.h): --jobs defaults to the
 * allocation's CPUs over the task's cpus; when srun ends without a
 * record, a grace window lets a slow shared file system show it, then
 * srun's output decides (step refused, node lost, LOST); cancels and
 * time-outs reach task-exec through `scancel --signal`, and vigil stops
 * a step itself only well past its timeout.  direct.c watches the srun
 * processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/beneath.h"
#include "schedulers/scheduler.h"
#include "common/log.h"
#include "common/path.h"
#include "runner/manifest/task.h"
#include "schedulers/launcher.h"
#include "schedulers/slurm.h"

/* Seconds a step's record may lag behind srun's end (slow shared file
 * systems); VIGIL_SLURM_GRACE overrides. */
#define STEP_GRACE	60.0
/* Seconds past timeout + kill_grace before vigil stops a step itself:
 * task-exec enforces the timeout, this is the backstop. */
#define STEP_SLACK	30.0

/* The srun launcher's state for one run. */
struct srun_launch {
	char		*vigil;		/* vigil's own path */
	const char	*run_dir;
	char		 manifest_sha256[65];	/* of run_dir/manifest.json */
	double		 grace;		/* seconds; see STEP_GRACE */
	int		 local;		/* task-exec without srun (exec) */
};

int
vg_slurm_alloc_cpus(const char *spec)
{
	const char *p = spec;
	long total = 0, n, mult;
	char *end;

	/* "2(x3),1": 2 CPUs on each of 3 nodes, then 1. */
	while (p != NULL && *p != '\0') {
		errno = 0;
		n = strtol(p, &end, 10);
		if (end == p || errno != 0 || n < 0)
			return -1;
		p = end;
		mult = 1;
		if (strncmp(p, "(x", 2) == 0) {
			mult = strtol(p + 2, &end, 10);
			if (end == p + 2 || *end != ')' || mult <= 0)
				return -1;
			p = end + 1;
		}
		total += n * mult;
		if (total > 1 << 24)
			return -1;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	return total > 0 ? (int)total : -1;
}

/* True when name is an executable file in a directory of $PATH. */
static int
on_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *full;
	int ok = 0;

	for (p = path != NULL ? path : ""; !ok && *p != '\0'; p = end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		full = vg_xasprintf("%.*s/%s", (int)(end - p), p, name);
		ok = end > p && access(full, X_OK) == 0;
		free(full);
		if (*end == ':')
			end++;
	}
	return ok;
}

int
vg_slurm_steps_wanted(int *cpus, struct vg_err *e)
{
	const char *mode = getenv("VIGIL_SLURM_STEPS");
	const char *job = getenv("SLURM_JOB_ID");
	const char *step = getenv("SLURM_STEP_ID");
	const char *per = getenv("SLURM_JOB_CPUS_PER_NODE");
	int always;

	*cpus = 0;
	if (mode == NULL || *mode == '\0')
		mode = "auto";
	if (strcmp(mode, "never") == 0)
		return 0;
	if (strcmp(mode, "exec") == 0) {
		/* A pack whose tasks are not steps: task-exec processes of
		 * the job, as many as its CPUs hold. */
		if (per != NULL && (*cpus = vg_slurm_alloc_cpus(per)) < 0)
			*cpus = 0;
		return 2;
	}
	if (strcmp(mode, "always") != 0 && strcmp(mode, "auto") != 0)
		return vg_err_set(e, VG_EINVAL, "VIGIL_SLURM_STEPS: bad value "
		    "'%s' (valid: auto, always, never, exec)", mode);
	always = strcmp(mode, "always") == 0;
	if (job == NULL || *job == '\0') {
		if (always)
			return vg_err_set(e, VG_EINVAL, "VIGIL_SLURM_STEPS="
			    "always: not inside a Slurm allocation "
			    "(SLURM_JOB_ID is not set)");
		return 0;
	}
	/* Inside a step (srun vigil run ...) a new step would wait for the
	 * resources the current one holds. */
	if (step != NULL && *step != '\0' && !always)
		return 0;
	if (!on_path("srun")) {
		if (always)
			return vg_err_set(e, VG_ENOENT, "VIGIL_SLURM_STEPS="
			    "always: srun is not on PATH");
		vg_warn("inside Slurm job %s but srun is not on PATH: tasks "
		    "run on this node (VIGIL_SLURM_STEPS=never says so "
		    "quietly)", job);
		return 0;
	}
	if (per != NULL)
		*cpus = vg_slurm_alloc_cpus(per);
	if (*cpus <= 0)
		*cpus = 0;
	return 1;
}

int
vg_slurm_step_start(const char *vigil, const char *run_dir,
    const char *manifest_sha256, int local, struct vg_attempt *a,
    struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	const char *inner[8];
	char idx[32], *name;
	size_t i;
	int r;

	a->pid = 0;
	a->pidfd = -1;
	/* srun's log lives there before task-exec runs. */
	if (mkdir(a->task_dir, 0700) != 0 && errno != EEXIST)
		return vg_err_errno(e, "creating task directory '%s'",
		    a->task_dir);
	vg_cluster_set_aside(a->task_dir, "result.json", a->attempt - 1);
	vg_cluster_set_aside(a->task_dir, "heartbeat", a->attempt - 1);
	vg_cluster_set_aside(a->task_dir, "step", a->attempt - 1);
	snprintf(idx, sizeof idx, "%d", a->task->index);
	inner[0] = vigil;
	inner[1] = "task-exec";
	inner[2] = "--manifest-sha256";
	inner[3] = manifest_sha256;
	inner[4] = run_dir;
	inner[5] = idx;
	inner[6] = NULL;
	/* The step's name: the manifest's name and the task index. */
	name = vg_xasprintf("%s.%d", a->m != NULL && a->m->name != NULL ?
	    a->m->name : a->run_id, a->task->index);
	if (local)
		for (i = 0; inner[i] != NULL; i++)
			vg_strv_push(&argv, inner[i]);
	else
		vg_slurm_step_argv(name, a->res.cpus, a->res.memory,
		    a->res.gpus, a->res.gpu_type, inner, &argv);
	free(name);
	/* vigil's environment (the allocation's SLURM_* included), with the
	 * attempt's number and time limit for task-exec; a local task-exec
	 * gets the GPUs the pool gave it (a step gets its own from Slurm). */
	vg_launch_env(a, local, &env);
	r = vg_launch_spawn(a, &argv, &env, "step.log", e);
	if (r != 0)
		vg_err_prefix(e, "starting srun for task %d: ", a->task->index);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	return r;
}

int
vg_slurm_step_id(const char *task_dir, char *out, size_t n)
{
	struct vg_buf b = VG_BUF_INIT;
	const char *buf;
	size_t len;
	int ok = 0;

	/* Written by task-exec in the task's directory: read without
	 * following a link. */
	if (vg_beneath_read(task_dir, 0, "step", 128, &b, NULL) == 0 &&
	    b.len > 0) {
		vg_buf_add(&b, "", 1);
		buf = b.data;
		len = strspn(buf, "0123456789.");
		/* "JOB.STEP": digits, one dot, digits. */
		if (len > 2 && len < n && memchr(buf, '.', len) != NULL &&
		    buf[0] != '.' && buf[len - 1] != '.') {
			memcpy(out, buf, len);
			out[len] = '\0';
			ok = 1;
		}
	}
	vg_buf_release(&b);
	return ok;
}

int
vg_slurm_step_signal(const char *task_dir, pid_t srun, int sig)
{
	const char *argv[6];
	char step[64], s[16];
	struct vg_err e;

	/* Through Slurm, the signal reaches task-exec, which stops its task
	 * gracefully and writes the record; srun would tear the step down
	 * at once on SIGTERM. */
	if (vg_slurm_step_id(task_dir, step, sizeof step)) {
		snprintf(s, sizeof s, "%d", sig);
		argv[0] = "scancel";
		argv[1] = "--quiet";
		argv[2] = "--signal";
		argv[3] = s;
		argv[4] = step;
		argv[5] = NULL;
		vg_err_init(&e);
		if (vg_slurm_run(argv, NULL, NULL, 10000, &e) == 0)
			return 0;
	}
	/* Not started yet (still waiting for resources), or scancel failed:
	 * srun ends the step itself. */
	return srun > 0 ? kill(srun, sig) : -1;
}

/* The last line of text containing needle, copied into out (trimmed). */
static int
last_line_with(const char *text, const char *needle, char *out, size_t n)
{
	const char *p = text, *hit = NULL, *bol, *eol;
	size_t len;

	while ((p = strstr(p, needle)) != NULL) {
		hit = p;
		p += strlen(needle);
	}
	if (hit == NULL)
		return 0;
	for (bol = hit; bol > text && bol[-1] != '\n'; bol--)
		;
	eol = strchr(hit, '\n');
	len = eol != NULL ? (size_t)(eol - bol) : strlen(bol);
	if (len >= n)
		len = n - 1;
	memcpy(out, bol, len);
	out[len] = '\0';
	return 1;
}

int
vg_slurm_step_verdict(const char *log, int wstatus, int final,
    struct vg_result *r)
{
	char line[200];

	memset(r, 0, sizeof *r);
	r->exit_code = -1;
	if (log == NULL)
		log = "";
	if (WIFEXITED(wstatus))
		r->exit_code = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		r->signal = WTERMSIG(wstatus);
	/* srun could not make the step: the task never ran. */
	if (last_line_with(log, "Unable to create step", line,
	    sizeof line) || last_line_with(log, "Unable to create job step",
	    line, sizeof line) || last_line_with(log, "Invalid job id",
	    line, sizeof line) || last_line_with(log, "Unable to allocate",
	    line, sizeof line)) {
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof r->reason, "srun refused the "
		    "step: %s", line);
		return 1;
	}
	if (last_line_with(log, "Node failure", line, sizeof line) ||
	    last_line_with(log, "NODE_FAIL", line, sizeof line)) {
		r->state = VG_ST_NODE_FAIL;
		snprintf(r->reason, sizeof r->reason, "node lost under the "
		    "step: %s", line);
		return 1;
	}
	if (last_line_with(log, "DUE TO TIME LIMIT", line, sizeof line)) {
		r->state = VG_ST_TIMEOUT;
		snprintf(r->reason, sizeof r->reason, "the allocation's time "
		    "limit ended the step: %s", line);
		return 1;
	}
	if (last_line_with(log, "CANCELLED", line, sizeof line)) {
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof r->reason, "step cancelled by "
		    "Slurm: %s", line);
		return 1;
	}
	if (WIFSIGNALED(wstatus)) {
		r->state = VG_ST_LOST;
		snprintf(r->reason, sizeof r->reason, "srun killed by signal "
		    "%d; no result record", r->signal);
		return 1;
	}
	if (!final)
		return 0;
	r->state = VG_ST_LOST;
	if (last_line_with(log, "error:", line, sizeof line))
		snprintf(r->reason, sizeof r->reason, "srun exited %d, no "
		    "result record: %s", r->exit_code, line);
	else
		snprintf(r->reason, sizeof r->reason, "srun exited %d, no "
		    "result record", r->exit_code);
	return 1;
}

/* Applies inside an allocation that wants steps; sets --jobs from CPUs
 * (as many steps as the smallest tasks fill; the pool packs them). */
static int
srun_open(struct vg_launcher *l, struct vg_sched *s, struct vg_err *e)
{
	struct srun_launch *p;
	const char *env;
	char *vigil;
	int steps, cpus, per, rc;

	if ((steps = vg_slurm_steps_wanted(&cpus, e)) <= 0)
		return steps;
	env = getenv("VIGIL_SLURM_VIGIL");
	vigil = env != NULL && *env == '/' ? vg_xstrdup(env) :
	    realpath("/proc/self/exe", NULL);
	if (vigil == NULL)
		return vg_err_errno(e, "finding the path of vigil itself");
	per = vg_launch_least_cpus(s->m);
	/* One step per free slot: more sruns would only wait in
	 * slurmctld's step queue and poll it. */
	if (s->jobs <= 0 && cpus > 0)
		s->jobs = cpus / per > 0 ? cpus / per : 1;
	vg_debug("direct: inside Slurm job %s: attempts run as job "
	    "steps, %d at once (%d CPUs)", getenv("SLURM_JOB_ID"),
	    s->jobs, cpus);
	p = vg_xcalloc(1, sizeof(*p));
	/* The steps carry the digest of the manifest judged here. */
	if ((rc = vg_run_manifest_read(s->run_dir, NULL, NULL,
	    p->manifest_sha256, e)) != 0) {
		free(vigil);
		free(p);
		return rc;
	}
	p->vigil = vigil;
	p->run_dir = s->run_dir;
	p->local = steps == 2;
	p->grace = STEP_GRACE;
	if ((env = getenv("VIGIL_SLURM_GRACE")) != NULL && atof(env) > 0)
		p->grace = atof(env);
	l->priv = p;
	return 1;
}

/* Starts a as a job step. */
static int
srun_start(struct vg_launcher *l, struct vg_attempt *a, struct vg_err *e)
{
	const struct srun_launch *p = l->priv;

	return vg_slurm_step_start(p->vigil, p->run_dir, p->manifest_sha256,
	    p->local, a, e);
}

/* task-exec enforces the timeout; vigil waits for it this long more. */
static double
srun_slack(const struct vg_attempt *a)
{
	return a->kill_grace + STEP_SLACK;
}

/* Signals the step's task-exec (srun itself before the step runs). */
static void
srun_signal(struct vg_launcher *l, struct vg_attempt *a, int sig)
{
	(void)l;
	(void)vg_slurm_step_signal(a->task_dir, a->pid, sig);
}

/*
 * How a step ended: its result record when there is one, else srun's own
 * account once it explains the end or the grace window has passed.
 */
static enum vg_launch_end
srun_ended(struct vg_launcher *l, struct vg_attempt *a, int ws,
    long long waited_ms, int stopping, struct vg_result *r)
{
	const struct srun_launch *p = l->priv;

	return vg_launch_ended(a, ws, waited_ms, stopping, p->grace, "step",
	    vg_slurm_step_verdict, r);
}

/* Frees the launcher's state. */
static void
srun_close(struct vg_launcher *l)
{
	struct srun_launch *p = l->priv;

	if (p == NULL)
		return;
	free(p->vigil);
	free(p);
}

const struct vg_launcher_ops vg_launcher_srun = {
	.name = "srun",
	.remote = 1,
	.open = srun_open,
	.start = srun_start,
	.slack = srun_slack,
	.signal = srun_signal,
	.ended = srun_ended,
	.close = srun_close,
};
