/*
 * slurm-script.c - the batch script vigil hands to sbatch (or to
 * slurm_submit_batch_job), and the small formats around it: #SBATCH value
 * quoting, array specs, time limits, --signal specs, and the srun argv of
 * a job step inside an allocation.
 *
 * Safety argument: the script has three parts.  The #SBATCH lines carry
 * manifest values; each value has passed vg_slurm_value_check (no control
 * characters, so no newline can start a line of its own) and, unless it
 * is made of safe characters only, is written in double quotes with '"'
 * and '\\' escaped, which sbatch's #SBATCH reader takes literally, so
 * quotes, '#', blanks, '$(...)' and backticks stay inside their value
 * (checked against sbatch 22.05: JobName and Comment come back intact).  The
 * shell part uses no manifest value at all: the run directory and the
 * vigil path are single-quoted (vg_buf_shquote), the attempt and offset
 * are integers.  The task's command, env and matrix never enter the
 * script: task-exec reads them from the run directory.
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/slurm.h"

#define VALUE_MAX	1024

/* Refuses values that cannot be one #SBATCH argument. */
int
vg_slurm_value_check(const char *field, const char *v, struct vg_err *e)
{
	const unsigned char *p;

	if (v == NULL)
		return 0;
	if (strlen(v) > VALUE_MAX)
		return vg_err_set(e, VG_EINVAL,
		    "slurm: '%s' is longer than %d bytes", field, VALUE_MAX);
	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return vg_err_set(e, VG_EINVAL,
			    "slurm: '%s' contains a control character "
			    "(0x%02x at byte %zu); Slurm values must be one "
			    "line of printable text", field, *p,
			    (size_t)(p - (const unsigned char *)v));
	return 0;
}

/* True for bytes that sbatch's #SBATCH reader takes as they are. */
static int
sbatch_plain(unsigned char c)
{
	return isalnum(c) || strchr("_.,:=@/+%-", c) != NULL;
}

/* Appends v as one #SBATCH argument (see slurm.h). */
void
vg_slurm_escape(struct vg_buf *b, const char *v)
{
	const unsigned char *p;

	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (!sbatch_plain(*p))
			break;
	if (*p == '\0' && *v != '\0') {
		vg_buf_adds(b, v);
		return;
	}
	/* sbatch ends an argument at a blank before it looks at escapes,
	 * so blanks need quotes; inside "...", only '"' and '\\' are
	 * special and a backslash makes them literal. */
	vg_buf_addc(b, '"');
	for (p = (const unsigned char *)v; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			vg_buf_addc(b, '\\');
		vg_buf_addc(b, (char)*p);
	}
	vg_buf_addc(b, '"');
}

/* Appends a file name pattern: path with '%' doubled, then pattern. */
void
vg_slurm_escape_pattern(struct vg_buf *b, const char *path,
    const char *pattern)
{
	struct vg_buf tmp = VG_BUF_INIT;
	const char *p;

	for (p = path; *p != '\0'; p++) {
		if (*p == '%')
			vg_buf_addc(&tmp, '%');
		vg_buf_addc(&tmp, *p);
	}
	vg_buf_adds(&tmp, pattern);
	vg_slurm_escape(b, vg_buf_str(&tmp));
	vg_buf_release(&tmp);
}



/* Formats a time limit as D-HH:MM:SS, whole minutes. */
void
vg_slurm_time(uint64_t secs, char *buf, size_t n)
{
	uint64_t mins;

	if (secs == 0) {
		snprintf(buf, n, "%s", "");
		return;
	}
	mins = (secs + 59) / 60;
	snprintf(buf, n, "%llu-%02llu:%02llu:00",
	    (unsigned long long)(mins / 1440),
	    (unsigned long long)(mins / 60 % 24),
	    (unsigned long long)(mins % 60));
}

/* Signal names --signal accepts, as in Slurm's sig_name2num. */
static const struct {
	const char	*name;
	int		 num;
} signames[] = {
	{ .name = "HUP", .num = SIGHUP },
	{ .name = "INT", .num = SIGINT },
	{ .name = "QUIT", .num = SIGQUIT },
	{ .name = "KILL", .num = SIGKILL },
	{ .name = "TERM", .num = SIGTERM },
	{ .name = "USR1", .num = SIGUSR1 },
	{ .name = "USR2", .num = SIGUSR2 },
	{ .name = "CONT", .num = SIGCONT },
	{ .name = "STOP", .num = SIGSTOP },
	{ .name = "URG", .num = SIGURG },
	{ .name = "ALRM", .num = SIGALRM },
};

/* Parses a --signal spec. */
int
vg_slurm_parse_signal(const char *spec, int *sig, int *secs, int *batch,
    struct vg_err *e)
{
	const char *p = spec, *at;
	char name[16];
	size_t i, len;
	char *end;
	long v;

	*sig = 0;
	*secs = 60;	/* sbatch's default when @SECS is left out */
	*batch = 0;
	if (strncmp(p, "B:", 2) == 0) {
		*batch = 1;
		p += 2;
	}
	at = strchr(p, '@');
	len = at != NULL ? (size_t)(at - p) : strlen(p);
	if (len == 0 || len >= sizeof name)
		goto bad;
	memcpy(name, p, len);
	name[len] = '\0';
	if (isdigit((unsigned char)name[0])) {
		v = strtol(name, &end, 10);
		if (*end != '\0' || v < 1 || v > 64)
			goto bad;
		*sig = (int)v;
	} else {
		p = strncmp(name, "SIG", 3) == 0 ? name + 3 : name;
		for (i = 0; i < sizeof signames / sizeof signames[0]; i++)
			if (strcmp(p, signames[i].name) == 0)
				*sig = signames[i].num;
		if (*sig == 0)
			goto bad;
	}
	if (at != NULL) {
		v = strtol(at + 1, &end, 10);
		/* Slurm keeps warn_time in 16 bits. */
		if (at[1] == '\0' || *end != '\0' || v < 0 || v > 65535)
			goto bad;
		*secs = (int)v;
	}
	return 0;
bad:
	return vg_err_set(e, VG_EINVAL,
	    "slurm.signal: bad value '%s' (expected [B:]SIGNAL[@SECONDS], "
	    "for example B:USR2@90)", spec);
}

/* Name of a signal number for --signal ("USR2"), or NULL. */
static const char *
signame(int sig)
{
	size_t i;

	for (i = 0; i < sizeof signames / sizeof signames[0]; i++)
		if (signames[i].num == sig)
			return signames[i].name;
	return NULL;
}

/*
 * slurm.options: further sbatch long options.  The allowlist holds
 * options that change where, when or how a job runs without taking
 * anything from vigil; flags take no value.  Options vigil writes itself,
 * or that have a manifest field, are refused with the reason.
 */
const char *const vg_slurm_allowed_options[] = {
	"acctg-freq", "begin", "comment", "constraint", "contiguous",
	"core-spec", "cores-per-socket", "cpu-freq", "cluster-constraint",
	"deadline", "delay-boot", "distribution", "gpu-bind", "gpu-freq",
	"gres", "gres-flags", "hint", "licenses", "mail-type", "mail-user",
	"mcs-label", "mem-bind", "mincpus", "network", "nice", "nodelist",
	"no-kill", "overcommit", "oversubscribe", "power", "prefer",
	"priority", "profile", "reservation", "signal", "sockets-per-node",
	"spread-job", "switches", "thread-spec", "threads-per-core",
	"time-min", "tmp", "use-min-nodes", "wckey",
	NULL,
};

/* Allowed options that take no value. */
static const char *const flag_options[] = {
	"contiguous", "no-kill", "overcommit", "oversubscribe", "spread-job",
	"use-min-nodes", NULL,
};

/* Options refused, with the reason. */
static const struct {
	const char	*key;
	const char	*why;
} refused_options[] = {
	{ "array", "vigil makes the job arrays itself (one element per "
	  "task)" },
	{ "wrap", "vigil writes the batch script itself" },
	{ "job-name", "vigil names every job after its run id, which it "
	  "tracks jobs by" },
	{ "output", "vigil keeps job output under the run directory" },
	{ "error", "vigil keeps job output under the run directory" },
	{ "input", "tasks read no standard input" },
	{ "open-mode", "vigil keeps job output under the run directory" },
	{ "parsable", "vigil reads sbatch's answer itself" },
	{ "chdir", "tasks run in their workdir (use workdir:)" },
	{ "dependency", "use after: (vigil follows the runs it waits for)" },
	{ "kill-on-invalid-dep", "vigil sets it with after:" },
	{ "requeue", "use slurm.requeue" },
	{ "no-requeue", "use slurm.requeue" },
	{ "exclude", "use slurm.exclude (vigil adds failed nodes to it)" },
	{ "export", "the task's environment comes from env:" },
	{ "export-file", "the task's environment comes from env:" },
	{ "get-user-env", "the task's environment comes from env:" },
	{ "hold", "a held job never starts; vigil would wait forever" },
	{ "wait", "vigil tracks jobs itself; sbatch must return" },
	{ "test-only", "vigil must submit the job to track it" },
	{ "clusters", "vigil tracks jobs on the cluster it submits to" },
	{ "uid", "jobs run as the user who submits them" },
	{ "gid", "jobs run as the user who submits them" },
	{ "batch", "vigil writes the batch script itself" },
	{ "propagate", "the task's limits come from limits:" },
	{ "account", "use resources.account" },
	{ "partition", "use resources.partition" },
	{ "qos", "use resources.qos" },
	{ "time", "use resources.time or timeout" },
	{ "nodes", "use resources.nodes" },
	{ "ntasks", "use resources.ntasks" },
	{ "ntasks-per-node", "use resources.ntasks_per_node" },
	{ "cpus-per-task", "use resources.cpus_per_task (or cpus)" },
	{ "mem", "use resources.memory" },
	{ "mem-per-cpu", "use resources.mem_per_cpu" },
	{ "gpus", "use resources.gpus" },
	{ "gpus-per-task", "use resources.gpus_per_task" },
	{ "exclusive", "use resources.exclusive" },
};

/* True when an allowed option takes no value. */
static int
is_flag(const char *key)
{
	size_t i;

	for (i = 0; flag_options[i] != NULL; i++)
		if (strcmp(flag_options[i], key) == 0)
			return 1;
	return 0;
}

int
vg_slurm_option_check(const char *key, const char *value,
    const struct vg_resources *r, char *why, size_t n)
{
	struct vg_err e;
	size_t i;
	int ok = 0, sig, secs, batch;

	for (i = 0; i < sizeof refused_options / sizeof refused_options[0];
	    i++)
		if (strcmp(refused_options[i].key, key) == 0) {
			snprintf(why, n, "refused: %s", refused_options[i].why);
			return -1;
		}
	for (i = 0; vg_slurm_allowed_options[i] != NULL; i++)
		if (strcmp(vg_slurm_allowed_options[i], key) == 0)
			ok = 1;
	if (!ok) {
		snprintf(why, n, "not an sbatch option vigil passes on (see "
		    "the allowlist in docs/schedulers/slurm.md)");
		return -1;
	}
	vg_err_init(&e);
	if (value == NULL)
		value = "";
	if (vg_slurm_value_check(key, value, &e) != 0) {
		snprintf(why, n, "%s", e.msg);
		return -1;
	}
	if (is_flag(key)) {
		if (*value != '\0' && strcmp(value, "true") != 0 &&
		    strcmp(value, "false") != 0) {
			snprintf(why, n, "a flag: give true, false or an "
			    "empty value, not '%s'", value);
			return -1;
		}
		return 0;
	}
	if (*value == '\0') {
		snprintf(why, n, "needs a value");
		return -1;
	}
	if (strcmp(key, "signal") == 0 &&
	    vg_slurm_parse_signal(value, &sig, &secs, &batch, &e) != 0) {
		snprintf(why, n, "%s", e.msg);
		return -1;
	}
	if (strcmp(key, "constraint") == 0 && r != NULL &&
	    r->constraint != NULL) {
		snprintf(why, n, "resources.constraint is given too; give "
		    "one");
		return -1;
	}
	return 0;
}

int
vg_slurm_use_srun(const struct vg_resources *r)
{
	if (r->launcher != NULL)
		return strcmp(r->launcher, "srun") == 0;
	return r->ntasks > 1 || r->nodes > 1 || r->ntasks_per_node > 1;
}

void
vg_slurm_launch_wrap(struct vg_command *cmd)
{
	struct vg_strv v = VG_STRV_INIT;
	size_t i;

	vg_strv_push(&v, "srun");
	vg_strv_push(&v, "--kill-on-bad-exit=1");
	vg_strv_push(&v, "--");
	if (cmd->is_argv) {
		for (i = 0; i < cmd->argv.n; i++)
			vg_strv_push(&v, cmd->argv.v[i]);
	} else {
		vg_strv_push(&v, "/bin/sh");
		vg_strv_push(&v, "-c");
		vg_strv_push(&v, cmd->shell != NULL ? cmd->shell : "");
		free(cmd->shell);
		cmd->shell = NULL;
		cmd->is_argv = 1;
	}
	vg_strv_release(&cmd->argv);
	cmd->argv = v;
}

/* Appends "#SBATCH --opt=VALUE\n" with VALUE escaped, after checking it. */
static int
opt_line(struct vg_buf *b, const char *opt, const char *field, const char *v,
    struct vg_err *e)
{
	int r;

	if (v == NULL || *v == '\0')
		return 0;
	if ((r = vg_slurm_value_check(field, v, e)) != 0)
		return r;
	vg_buf_printf(b, "#SBATCH --%s=", opt);
	vg_slurm_escape(b, v);
	vg_buf_addc(b, '\n');
	return 0;
}

/* Bytes rounded up to whole MiB, Slurm's unit. */
static unsigned long long
mib(uint64_t bytes)
{
	return (unsigned long long)((bytes + (1 << 20) - 1) >> 20);
}

/* Appends --nodes, --ntasks and --ntasks-per-node: as given, or one node
 * and one task when the request names none of them. */
static void
tasks_lines(const struct vg_slurm_job *j, struct vg_buf *b)
{
	if (j->nodes > 0)
		vg_buf_printf(b, "#SBATCH --nodes=%d\n", j->nodes);
	else if (j->ntasks <= 1 && j->ntasks_per_node <= 1)
		vg_buf_adds(b, "#SBATCH --nodes=1\n");
	if (j->ntasks > 0)
		vg_buf_printf(b, "#SBATCH --ntasks=%d\n", j->ntasks);
	else if (j->nodes <= 0 && j->ntasks_per_node <= 0)
		vg_buf_adds(b, "#SBATCH --ntasks=1\n");
	if (j->ntasks_per_node > 0)
		vg_buf_printf(b, "#SBATCH --ntasks-per-node=%d\n",
		    j->ntasks_per_node);
}

/* Appends the slurm.options lines, each checked again (the JSON form of
 * a manifest is not trusted to have been validated). */
static int
options_lines(const struct vg_slurm_job *j, struct vg_buf *b,
    struct vg_err *e)
{
	const struct vg_kv *kv;
	char why[256];
	size_t i;
	int r;

	for (i = 0; j->options != NULL && i < j->options->n; i++) {
		kv = &j->options->v[i];
		if (vg_slurm_option_check(kv->key, kv->value, NULL, why,
		    sizeof why) != 0)
			return vg_err_set(e, VG_EINVAL, "slurm.options.%s: %s",
			    kv->key, why);
		if (is_flag(kv->key)) {
			if (strcmp(kv->value, "false") != 0)
				vg_buf_printf(b, "#SBATCH --%s\n", kv->key);
			continue;
		}
		if ((r = opt_line(b, kv->key, "slurm.options", kv->value,
		    e)) != 0)
			return r;
	}
	return 0;
}



/* Builds the batch script of one array chunk. */
int
vg_slurm_script(const struct vg_slurm_job *j, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT, path = VG_BUF_INIT;
	char tbuf[40];
	int r, sig, secs, batch;
	const char *sn;

	if ((r = vg_slurm_value_check("run id", j->name, e)) != 0 ||
	    (r = vg_slurm_value_check("run directory", j->run_dir, e)) != 0 ||
	    (r = vg_slurm_value_check("vigil path", j->vigil, e)) != 0)
		return r;
	if (j->run_dir[0] != '/' || j->vigil[0] != '/')
		return vg_err_set(e, VG_EINVAL, "slurm: the run directory and "
		    "the vigil path must be absolute ('%s', '%s')",
		    j->run_dir, j->vigil);
	if (j->array == NULL || *j->array == '\0' ||
	    strspn(j->array, "0123456789,-") != strlen(j->array))
		return vg_err_set(e, VG_EINVAL, "slurm: bad array spec '%s'",
		    j->array != NULL ? j->array : "");

	vg_buf_adds(&b, "#!/bin/sh\n");
	if ((r = opt_line(&b, "job-name", "run id", j->name, e)) != 0)
		goto out;
	vg_buf_printf(&b, "#SBATCH --array=%s", j->array);
	if (j->throttle > 0)
		vg_buf_printf(&b, "%%%d", j->throttle);
	vg_buf_addc(&b, '\n');
	vg_buf_adds(&path, j->run_dir);
	vg_buf_adds(&path, "/slurm/");
	vg_buf_adds(&b, "#SBATCH --output=");
	vg_slurm_escape_pattern(&b, vg_buf_str(&path), "%A_%a.out");
	vg_buf_adds(&b, "\n#SBATCH --error=");
	vg_slurm_escape_pattern(&b, vg_buf_str(&path), "%A_%a.out");
	vg_buf_adds(&b, "\n#SBATCH --chdir=");
	vg_slurm_escape(&b, j->run_dir);
	vg_buf_addc(&b, '\n');
	tasks_lines(j, &b);
	if (j->cpus > 0)
		vg_buf_printf(&b, "#SBATCH --cpus-per-task=%d\n", j->cpus);
	if (j->memory > 0)
		vg_buf_printf(&b, "#SBATCH --mem=%lluM\n", mib(j->memory));
	if (j->mem_per_cpu > 0)
		vg_buf_printf(&b, "#SBATCH --mem-per-cpu=%lluM\n",
		    mib(j->mem_per_cpu));
	/* One task per job (array element): --gres, per node, is the
	 * task's; resources.gpu_type is the gres type. */
	if (j->gpus > 0 && j->gpu_type != NULL && *j->gpu_type != '\0')
		vg_buf_printf(&b, "#SBATCH --gres=gpu:%s:%d\n", j->gpu_type,
		    j->gpus);
	else if (j->gpus > 0)
		vg_buf_printf(&b, "#SBATCH --gres=gpu:%d\n", j->gpus);
	if (j->gpus_per_task > 0)
		vg_buf_printf(&b, "#SBATCH --gpus-per-task=%d\n",
		    j->gpus_per_task);
	if (j->exclusive)
		vg_buf_adds(&b, "#SBATCH --exclusive\n");
	if (j->time > 0) {
		vg_slurm_time(j->time, tbuf, sizeof tbuf);
		vg_buf_printf(&b, "#SBATCH --time=%s\n", tbuf);
	}
	if ((r = opt_line(&b, "partition", "resources.partition",
	    j->partition, e)) != 0 ||
	    (r = opt_line(&b, "account", "resources.account",
	    j->account, e)) != 0 ||
	    (r = opt_line(&b, "qos", "resources.qos", j->qos, e)) != 0 ||
	    (r = opt_line(&b, "constraint", "resources.constraint",
	    j->constraint, e)) != 0 ||
	    (r = opt_line(&b, "exclude", "slurm.exclude", j->exclude, e)) != 0)
		goto out;
	if ((r = options_lines(j, &b, e)) != 0)
		goto out;
	if (j->dependency != NULL && *j->dependency != '\0') {
		/* Made by vigil of job ids; no length cap (a run of many
		 * array jobs has a long list). */
		if (strspn(j->dependency, "0123456789:,_abdefknortyz") !=
		    strlen(j->dependency)) {
			r = vg_err_set(e, VG_EINVAL, "slurm: bad dependency "
			    "'%s'", j->dependency);
			goto out;
		}
		vg_buf_printf(&b, "#SBATCH --dependency=%s\n"
		    "#SBATCH --kill-on-invalid-dep=yes\n", j->dependency);
	}
	if (j->signal != NULL && *j->signal != '\0') {
		if ((r = vg_slurm_parse_signal(j->signal, &sig, &secs, &batch,
		    e)) != 0)
			goto out;
		sn = signame(sig);
		if (sn != NULL)
			vg_buf_printf(&b, "#SBATCH --signal=%s%s@%d\n",
			    batch ? "B:" : "", sn, secs);
		else
			vg_buf_printf(&b, "#SBATCH --signal=%s%d@%d\n",
			    batch ? "B:" : "", sig, secs);
	}
	vg_buf_adds(&b, j->requeue ? "#SBATCH --requeue\n" :
	    "#SBATCH --no-requeue\n");
	vg_buf_printf(&b, "VIGIL_ATTEMPT=%d\nexport VIGIL_ATTEMPT\n",
	    j->attempt > 0 ? j->attempt : 1);
	if (j->srun)
		vg_buf_adds(&b, "VIGIL_LAUNCHER=srun\nexport VIGIL_LAUNCHER\n");
	if (j->pack != NULL) {
		if (strspn(j->pack, "abcdefghijklmnopqrstuvwxyz0123456789-.")
		    != strlen(j->pack)) {
			r = vg_err_set(e, VG_EINVAL, "slurm: bad pack file "
			    "name '%s'", j->pack);
			goto out;
		}
		/* The job's time limit: pack-exec runs no retry in place
		 * that would not end within it. */
		if (j->time > 0)
			vg_buf_printf(&b, "VIGIL_PACK_TIME=%llu\n"
			    "export VIGIL_PACK_TIME\n",
			    (unsigned long long)j->time);
		/* pack-exec's direct scheduler: steps, or local task-exec
		 * processes (VIGIL_SLURM_STEPS=exec). */
		vg_buf_printf(&b, "VIGIL_SLURM_STEPS=%s\n"
		    "export VIGIL_SLURM_STEPS\n", j->pack_steps ? "always" :
		    "exec");
		vg_exec_line(&b, j->vigil, "pack-exec", j->manifest_sha256,
		    j->run_dir);
		vg_buf_printf(&b, " %s", j->pack);
	} else
		vg_task_exec_line(&b, j->vigil, j->manifest_sha256,
		    j->run_dir);
	if (j->offset != 0)
		vg_buf_printf(&b, " \"$((SLURM_ARRAY_TASK_ID + %d))\"\n",
		    j->offset);
	else
		vg_buf_adds(&b, " \"$SLURM_ARRAY_TASK_ID\"\n");
	vg_buf_add(out, b.data, b.len);
	r = 0;
out:
	vg_buf_release(&b);
	vg_buf_release(&path);
	return r;
}

/* Builds the srun argv of one job step inside an allocation. */
void
vg_slurm_step_argv(const char *name, int cpus, uint64_t memory, int gpus,
    const char *gpu_type, const char *const *argv, struct vg_strv *out)
{
	size_t i;

	vg_strv_push(out, "srun");
	/* --exclusive on a step: its CPUs are not shared with other steps,
	 * so steps queue inside the allocation instead of oversubscribing. */
	vg_strv_push(out, "--exclusive");
	vg_strv_push(out, "-n1");
	vg_strv_push(out, "-N1");
	vg_strv_pushf(out, "--cpus-per-task=%d", cpus > 0 ? cpus : 1);
	if (memory > 0)
		vg_strv_pushf(out, "--mem=%lluM",
		    (unsigned long long)((memory + (1 << 20) - 1) >> 20));
	if (gpus > 0 && gpu_type != NULL && *gpu_type != '\0')
		vg_strv_pushf(out, "--gpus=%s:%d", gpu_type, gpus);
	else if (gpus > 0)
		vg_strv_pushf(out, "--gpus=%d", gpus);
	if (name != NULL && *name != '\0')
		vg_strv_pushf(out, "--job-name=%s", name);
	vg_strv_push(out, "--kill-on-bad-exit=1");
	vg_strv_push(out, "--");
	for (i = 0; argv != NULL && argv[i] != NULL; i++)
		vg_strv_push(out, argv[i]);
}
