/*
 * slurm-lib.c - talking to Slurm through libslurm (built when
 * <slurm/slurm.h> is present; HAVE_LIBSLURM): slurm_load_ctl_conf,
 * slurm_load_partitions, slurm_submit_batch_job, slurm_load_jobs and
 * slurm_kill_job2.  It saves the fork and exec of a command per call.
 *
 * libslurm's API and wire protocol change with every major release, so
 * slurm.c uses this file only when the controller runs the release vigil
 * was built against (`auto`), or when asked to (`lib`).  Only calls that
 * took a job id string or a whole-table load in 22.05 are used; they are
 * the ones that stayed put longest.  With accounting, queries go through
 * sacct (slurmdbd) as in the cli interface, to spare slurmctld.
 *
 * The job description is filled from the same struct vg_slurm_job the
 * script's #SBATCH lines come from; slurmctld does not read #SBATCH lines,
 * so the script is passed as it is, for the record.
 */
#ifdef HAVE_LIBSLURM

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "schedulers/slurm.h"

extern char **environ;

/* Exported by libslurm 22.05 (slurm_xlator.h aliases) but not declared in
 * <slurm/slurm.h>. */
extern const char *slurm_job_reason_string(enum job_state_reason inx);

/* Base job states, in the order of enum job_states in <slurm/slurm.h>. */
static const char *const base_states[] = {
	[JOB_PENDING] = "PENDING",
	[JOB_RUNNING] = "RUNNING",
	[JOB_SUSPENDED] = "SUSPENDED",
	[JOB_COMPLETE] = "COMPLETED",
	[JOB_CANCELLED] = "CANCELLED",
	[JOB_FAILED] = "FAILED",
	[JOB_TIMEOUT] = "TIMEOUT",
	[JOB_NODE_FAIL] = "NODE_FAIL",
	[JOB_PREEMPTED] = "PREEMPTED",
	[JOB_BOOT_FAIL] = "BOOT_FAIL",
	[JOB_DEADLINE] = "DEADLINE",
	[JOB_OOM] = "OUT_OF_MEMORY",
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* slurm_init reads $SLURM_CONF once per process. */
static void
lib_init(void)
{
	slurm_init(NULL);
}

/* Fills e from slurm_get_errno(); transient errors become VG_EAGAIN. */
static int
lib_err(struct vg_err *e, const char *what)
{
	int err = slurm_get_errno();
	const char *msg = slurm_strerror(err);
	int rc = VG_EBACKEND;

	switch (err) {
	case SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT:
	case SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SEND_ERROR:
	case SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR:
	case ESLURM_ERROR_ON_DESC_TO_RECORD_COPY:
	case ESLURM_NODES_BUSY:
	case EAGAIN:
		rc = VG_EAGAIN;
		break;
	default:
		if (msg != NULL && vg_slurm_transient(msg))
			rc = VG_EAGAIN;
	}
	return vg_err_set(e, rc, "%s: %s", what,
	    msg != NULL ? msg : "unknown Slurm error");
}

/* "YY.MM" of SLURM_VERSION_NUMBER. */
const char *
vg_slurm_lib_version(void)
{
	static char v[16];

	snprintf(v, sizeof v, "%02d.%02d",
	    (int)SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
	    (int)SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
	return v;
}

/* slurm_load_ctl_conf: MaxArraySize, MinJobAge, accounting, version. */
static int
lib_config(struct vg_slurm_conf_info *ci, struct vg_err *e)
{
	slurm_conf_t *c = NULL;

	pthread_once(&init_once, lib_init);
	memset(ci, 0, sizeof *ci);
	if (slurm_load_ctl_conf((time_t)0, &c) != SLURM_SUCCESS)
		return lib_err(e, "slurm_load_ctl_conf");
	ci->max_array = (int)c->max_array_sz;
	ci->min_job_age = (int)c->min_job_age;
	ci->accounting = c->accounting_storage_type != NULL &&
	    strcmp(c->accounting_storage_type,
	    "accounting_storage/none") != 0;
	snprintf(ci->version, sizeof ci->version, "%s",
	    c->version != NULL ? c->version : "");
	slurm_free_ctl_conf(c);
	if (ci->max_array < 1)
		return vg_err_set(e, VG_EPARSE, "slurm: bad MaxArraySize %d",
		    ci->max_array);
	return 0;
}

/* slurm_load_partitions: MaxTime of the partition or of the default. */
static int
lib_maxtime(const char *partition, uint64_t *secs, struct vg_err *e)
{
	partition_info_msg_t *pm = NULL;
	uint32_t i;

	pthread_once(&init_once, lib_init);
	*secs = 0;
	if (slurm_load_partitions((time_t)0, &pm, SHOW_ALL) != SLURM_SUCCESS)
		return lib_err(e, "slurm_load_partitions");
	for (i = 0; i < pm->record_count; i++) {
		partition_info_t *pi = &pm->partition_array[i];

		if (partition != NULL ? strcmp(pi->name, partition) == 0 :
		    (pi->flags & PART_FLAG_DEFAULT) != 0) {
			if (pi->max_time != INFINITE && pi->max_time != NO_VAL)
				*secs = (uint64_t)pi->max_time * 60;
			break;
		}
	}
	slurm_free_partition_info_msg(pm);
	return 0;
}

/* Duplicates s for libslurm (which frees nothing we pass). */
static char *
dup_or_null(const char *s)
{
	return s != NULL && *s != '\0' ? vg_xstrdup(s) : NULL;
}

/* slurm_submit_batch_job with a description equal to the script's. */
static int
lib_submit(const struct vg_slurm_job *j, const char *script,
    const char *script_path, unsigned long *job, struct vg_err *e)
{
	job_desc_msg_t d;
	submit_response_msg_t *resp = NULL;
	struct vg_buf arr = VG_BUF_INIT, out = VG_BUF_INIT;
	char **env = NULL, attempt[32], cwd_env[32], *argv[2], *line;
	size_t n = 0, i;
	int sig, secs, batch, r;

	pthread_once(&init_once, lib_init);
	*job = 0;
	slurm_init_job_desc_msg(&d);
	vg_buf_adds(&arr, j->array);
	if (j->throttle > 0)
		vg_buf_printf(&arr, "%%%d", j->throttle);
	vg_buf_adds(&out, j->run_dir);
	vg_buf_adds(&out, "/slurm/%A_%a.out");
	/* sbatch exports the submitter's environment: do the same, plus
	 * what the script sets, so both interfaces run task-exec alike. */
	for (n = 0; environ[n] != NULL; n++)
		;
	env = vg_xcalloc(n + 3, sizeof *env);
	for (i = 0; i < n; i++)
		env[i] = environ[i];
	snprintf(attempt, sizeof attempt, "VIGIL_ATTEMPT=%d",
	    j->attempt > 0 ? j->attempt : 1);
	env[n++] = attempt;
	snprintf(cwd_env, sizeof cwd_env, "SLURM_GET_USER_ENV=0");
	d.environment = env;
	d.env_size = (uint32_t)n;
	d.name = (char *)(uintptr_t)j->name;
	d.script = (char *)(uintptr_t)script;
	/* As sbatch does: the script's path is the job's Command (squeue
	 * %o) and in its SubmitLine (sacct), so a vigil that died before
	 * journaling the job id can find it again by its script. */
	argv[0] = (char *)(uintptr_t)script_path;
	argv[1] = NULL;
	d.argc = 1;
	d.argv = argv;
	line = vg_xasprintf("sbatch --parsable %s", script_path);
	d.submit_line = line;
	d.array_inx = arr.data;
	d.std_out = out.data;
	d.std_err = out.data;
	d.work_dir = (char *)(uintptr_t)j->run_dir;
	/* As vg_slurm_script's #SBATCH lines: one node and one task
	 * unless the request says otherwise. */
	if (j->nodes > 0)
		d.min_nodes = d.max_nodes = (uint32_t)j->nodes;
	else if (j->ntasks <= 1 && j->ntasks_per_node <= 1)
		d.min_nodes = d.max_nodes = 1;
	if (j->ntasks > 0)
		d.num_tasks = (uint32_t)j->ntasks;
	else if (j->nodes <= 0 && j->ntasks_per_node <= 0)
		d.num_tasks = 1;
	if (j->ntasks_per_node > 0)
		d.ntasks_per_node = (uint16_t)j->ntasks_per_node;
	d.user_id = getuid();
	d.group_id = getgid();
	if (j->cpus > 0)
		d.cpus_per_task = (uint16_t)j->cpus;
	if (j->memory > 0)
		d.pn_min_memory = (j->memory + (1 << 20) - 1) >> 20;
	if (j->mem_per_cpu > 0)
		d.pn_min_memory = ((j->mem_per_cpu + (1 << 20) - 1) >> 20) |
		    MEM_PER_CPU;
	if (j->gpus_per_task > 0) {
		static char gt[32];

		snprintf(gt, sizeof gt, "gres:gpu:%d", j->gpus_per_task);
		d.tres_per_task = gt;
	}
	if (j->exclusive)
		d.shared = JOB_SHARED_NONE;
	if (j->dependency != NULL && *j->dependency != '\0') {
		d.dependency = (char *)(uintptr_t)j->dependency;
		d.bitflags |= KILL_INV_DEP;
	}
	if (j->gpus > 0) {
		static char g[96];

		if (j->gpu_type != NULL && *j->gpu_type != '\0')
			snprintf(g, sizeof g, "gres:gpu:%s:%d", j->gpu_type,
			    j->gpus);
		else
			snprintf(g, sizeof g, "gres:gpu:%d", j->gpus);
		d.tres_per_node = g;
	}
	if (j->time > 0)
		d.time_limit = (uint32_t)((j->time + 59) / 60);
	d.partition = dup_or_null(j->partition);
	d.account = dup_or_null(j->account);
	d.qos = dup_or_null(j->qos);
	d.features = dup_or_null(j->constraint);
	d.exc_nodes = dup_or_null(j->exclude);
	d.requeue = j->requeue ? 1 : 0;
	if (j->signal != NULL && *j->signal != '\0') {
		if ((r = vg_slurm_parse_signal(j->signal, &sig, &secs, &batch,
		    e)) != 0)
			goto out;
		d.warn_signal = (uint16_t)sig;
		d.warn_time = (uint16_t)secs;
		d.warn_flags = batch ? KILL_JOB_BATCH : 0;
	}
	if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS) {
		r = lib_err(e, "slurm_submit_batch_job");
		goto out;
	}
	*job = resp->job_id;
	slurm_free_submit_response_response_msg(resp);
	r = 0;
out:
	free(d.partition);
	free(d.account);
	free(d.qos);
	free(d.features);
	free(d.exc_nodes);
	free(line);
	free(env);
	vg_buf_release(&arr);
	vg_buf_release(&out);
	return r;
}

/* Flag-like states win over the base state, as squeue prints them. */
static const char *
state_name(uint32_t st)
{
	if (st & JOB_COMPLETING)
		return "COMPLETING";
	if (st & JOB_REQUEUE)
		return "REQUEUED";
	if (st & JOB_REQUEUE_HOLD)
		return "REQUEUE_HOLD";
	if (st & JOB_SPECIAL_EXIT)
		return "SPECIAL_EXIT";
	if (st & JOB_CONFIGURING)
		return "CONFIGURING";
	if (st & JOB_STAGE_OUT)
		return "STAGE_OUT";
	if (st & JOB_RESIZING)
		return "RESIZING";
	if (st & JOB_SIGNALING)
		return "SIGNALING";
	if (st & JOB_STOPPED)
		return "STOPPED";
	if (st & JOB_REVOKED)
		return "REVOKED";
	st &= JOB_STATE_BASE;
	if (st < sizeof base_states / sizeof base_states[0] &&
	    base_states[st] != NULL)
		return base_states[st];
	return "UNKNOWN";
}

/* One slurm_load_jobs (the whole table) filtered by job name and user;
 * with accounting, the sacct query of the cli interface. */
static int
lib_query(const char *name, const unsigned long *jobs, size_t n,
    int accounting, struct vg_slurm_rows *out, struct vg_err *e)
{
	job_info_msg_t *jm = NULL;
	struct vg_slurm_row row;
	uint32_t i;
	uid_t uid = getuid();

	if (accounting)
		return vg_slurm_cli.query(name, jobs, n, accounting, out, e);
	pthread_once(&init_once, lib_init);
	if (slurm_load_jobs((time_t)0, &jm, SHOW_ALL) != SLURM_SUCCESS)
		return lib_err(e, "slurm_load_jobs");
	for (i = 0; i < jm->record_count; i++) {
		slurm_job_info_t *j = &jm->job_array[i];

		if (j->user_id != uid || j->name == NULL ||
		    strcmp(j->name, name) != 0)
			continue;
		memset(&row, 0, sizeof row);
		row.job = j->array_job_id != 0 ? j->array_job_id : j->job_id;
		row.task = j->array_task_id != NO_VAL ?
		    (long)j->array_task_id : -1;
		row.task_hi = -1;
		row.by_uid = -1;
		snprintf(row.state, sizeof row.state, "%s",
		    state_name(j->job_state));
		if (WIFSIGNALED(j->exit_code)) {
			row.signal = WTERMSIG(j->exit_code);
			row.exit_code = 0;
		} else
			row.exit_code = WEXITSTATUS(j->exit_code);
		snprintf(row.reason, sizeof row.reason, "%s",
		    slurm_job_reason_string(j->state_reason));
		snprintf(row.nodes, sizeof row.nodes, "%s",
		    j->nodes != NULL ? j->nodes : "");
		if (j->array_task_str != NULL && j->array_task_id == NO_VAL) {
			/* A pending remainder "3-5%2": one row each. */
			struct vg_slurm_rows one = { NULL, 0, 0 };
			char *line = vg_xasprintf("%lu|%s|%s|%s|0|%s",
			    row.job, j->array_task_str, row.state,
			    row.reason, row.nodes);
			int r = vg_slurm_parse_squeue(line, &one, e);
			size_t k;

			free(line);
			if (r != 0) {
				slurm_free_job_info_msg(jm);
				return r;
			}
			for (k = 0; k < one.n; k++) {
				out->v = vg_xgrow(out->v, &out->cap,
				    out->n + 1, sizeof *out->v);
				out->v[out->n++] = one.v[k];
			}
			vg_slurm_rows_release(&one);
			continue;
		}
		out->v = vg_xgrow(out->v, &out->cap, out->n + 1,
		    sizeof *out->v);
		out->v[out->n++] = row;
	}
	slurm_free_job_info_msg(jm);
	return 0;
}

/* slurm_kill_job2("1234_5", SIGKILL): what scancel does by default. */
static int
lib_cancel(const char *handle, struct vg_err *e)
{
	pthread_once(&init_once, lib_init);
	if (slurm_kill_job2(handle, SIGKILL, 0, NULL) != SLURM_SUCCESS)
		return lib_err(e, "slurm_kill_job2");
	return 0;
}

const struct vg_slurm_iface vg_slurm_lib = {
	.name = "lib",
	.config = lib_config,
	.maxtime = lib_maxtime,
	.submit = lib_submit,
	.query = lib_query,
	.cancel = lib_cancel,
};

#else

/* Without libslurm this file is empty; ISO C wants a declaration. */
extern int vg_slurm_lib_absent;

#endif
