/*
 * gridengine.h - the interface between the files of the gridengine
 * scheduler (alias sge: Son of Grid Engine, Open Grid Scheduler, Univa):
 *
 *   gridengine.c         the scheduler ops (collect, flush as array jobs,
 *                        poll, cancel, reattach), the job journal and the
 *                        gridengine: section
 *   gridengine-submit.c  the job script, qsub's argv (no shell: every
 *                        value is one argument), gridengine.options
 *   gridengine-parse.c   qstat -xml (a small tolerant reader), qacct -j,
 *                        qconf -sconf and qsub -terse output; qacct's
 *                        verdict -> vg_state
 *
 * Nothing here prints; every fallible call fills a struct vg_err.
 */
#ifndef VG_GRIDENGINE_H
#define VG_GRIDENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"
#include "runner/policy/classify.h"

/* Grid Engine job names cannot start with a digit, as run ids do: jobs
 * are named PREFIX + run id. */
#define VG_GE_NAME_PREFIX	"vigil-"

/* The gridengine: section. */
struct vg_ge_conf {
	char		*pe;		/* parallel environment for cpus > 1 */
	char		*gpu_complex;	/* consumable complex for gpus */
	struct vg_strv	 memory;	/* complexes memory is asked by
					   (per slot): default h_vmem */
	double		 poll_min;	/* seconds */
	double		 poll_max;
	struct vg_kvs	 options;	/* further qsub options (allowlist) */
};

extern const struct vg_msection vg_ge_msection;

/* The gridengine section of m (defaulted; owned by m). */
static inline struct vg_ge_conf *
vg_ge_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_ge_msection);
}

/* ---- gridengine-submit.c ---- */

/* One submission: an array job of n tasks sharing one request. */
struct vg_ge_job {
	const char	*name;		/* run id (prefixed for -N) */
	const char	*run_dir;	/* absolute */
	const char	*vigil;		/* absolute path of vigil */
	const char	*manifest_sha256;
	int		 attempt;	/* VIGIL_ATTEMPT */
	const int	*index;		/* task indexes, ascending */
	size_t		 n;		/* SGE tasks 1..n run index[0..n-1] */
	int		 cpus;		/* slots; > 1 needs pe */
	uint64_t	 memory;	/* bytes per task; 0 = default */
	int		 gpus;
	uint64_t	 time;		/* h_rt seconds; 0 = queue default */
	const char	*queue;		/* resources.partition -> -q */
	const char	*account;	/* -A */
	const char	*project;	/* resources.qos -> -P: none */
	const struct vg_ge_conf *conf;
	const char	*hold;		/* -hold_jid "12,13"; NULL = none */
};

/*
 * Builds the job script of j (no #$ directive: qsub gets -C '' and
 * every request in argv): VIGIL_ATTEMPT, then `exec VIGIL task-exec
 * RUN_DIR INDEX`, the index from $SGE_TASK_ID (an offset for contiguous
 * indexes, else a list in the script).  Fails (VG_EINVAL) on a value
 * that cannot be represented.
 */
int	vg_ge_script(const struct vg_ge_job *j, struct vg_buf *out,
	    struct vg_err *e);

/*
 * Builds qsub's argv for j and the script at script_path: -terse -C ''
 * -N -t 1-N -S /bin/sh -j y -o, resources (-pe, -l h_vmem=, -l h_rt=,
 * -l GPU=), -q -A -P, -hold_jid, gridengine.options.  Fails (VG_EINVAL,
 * naming the field) when cpus > 1 without gridengine.pe, gpus without
 * gridengine.gpu_complex, or an option is refused.  Caller releases out.
 */
int	vg_ge_qsub_argv(const struct vg_ge_job *j, const char *script_path,
	    const char *out_dir, struct vg_strv *out, struct vg_err *e);

/* Checks one gridengine.options entry: key a qsub option on the
 * allowlist (without '-'), value one printable word-list not starting
 * with '-'.  Fills why and returns -1 when refused. */
int	vg_ge_option_check(const char *key, const char *value, char *why,
	    size_t n);

extern const char *const vg_ge_allowed_options[];

/* gridengine-policy.c: how the gate reads qdel, qconf, qmod, qsub, ... */
extern const struct pl_prog vg_gridengine_policy_progs[];

/* ---- gridengine-parse.c ---- */

/* One job or task as qstat lists it. */
struct vg_ge_row {
	unsigned long	 job;
	long		 task_lo;	/* array tasks lo..hi (step 1 ranges
					   are split into rows); 0 = not an
					   array */
	long		 task_hi;
	char		 state[16];	/* "r", "qw", "hqw", "Eqw", "dr", ... */
	char		 queue[96];	/* "all.q@node" when running */
};

struct vg_ge_rows {
	struct vg_ge_row	*v;
	size_t			 n;
	size_t			 cap;
};

void	vg_ge_rows_release(struct vg_ge_rows *r);

/*
 * Parses `qstat -xml` output: every <job_list> element's JB_job_number,
 * state, queue_name and tasks ("3", "1-5:1", "2,4-6:1"), in both the
 * queue_info and job_info parts; other elements, attributes, comments
 * and entities are skipped.  Tolerant of whitespace and unknown
 * elements; VG_EPARSE (with the byte offset) on unbalanced or truncated
 * input.
 */
int	vg_ge_parse_qstat(const char *text, size_t len, struct vg_ge_rows *out,
	    struct vg_err *e);

/* The row that holds job's task (1-based; 0 for a plain job), or NULL. */
const struct vg_ge_row *vg_ge_rows_find(const struct vg_ge_rows *r,
	    unsigned long job, long task);

/* One task's accounting record (qacct -j). */
struct vg_ge_acct {
	unsigned long	 job;
	long		 task;		/* 0 when "undefined" */
	int		 failed;	/* qacct failed code */
	char		 failed_text[128];
	int		 exit_status;
	double		 wallclock;	/* seconds */
	double		 cpu;		/* seconds */
	double		 maxvmem;	/* bytes */
	char		 host[64];
	int		 slots;
};

struct vg_ge_accts {
	struct vg_ge_acct	*v;
	size_t			 n;
	size_t			 cap;
};

void	vg_ge_accts_release(struct vg_ge_accts *a);

/* Parses `qacct -j JOB` output (blocks of "key value" lines separated
 * by lines of '='); a block without jobnumber is skipped. */
int	vg_ge_parse_qacct(const char *text, struct vg_ge_accts *out,
	    struct vg_err *e);

/*
 * Maps an accounting record to a terminal state, filling r: failed 0
 * with exit_status 0 SUCCEEDED (task-exec's, not the task's: the caller
 * treats that as LOST without a record), other exit statuses FAILED;
 * failed 37 (h_rt, h_cpu or h_vmem enforced): OOM when memory was asked
 * and maxvmem reached it (or the text names h_vmem), else TIMEOUT;
 * failed 100 with a kill signal CANCELLED (qdel); other failed codes
 * BACKEND_ERROR (the job never ran: 1-36, ...).  memory is the
 * request in bytes per task, 0 when none.
 */
enum vg_state vg_ge_acct_map(const struct vg_ge_acct *a, uint64_t memory,
	    struct vg_result *r);

/* max_aj_tasks of `qconf -sconf` output; 75000 (the default) when the
 * line is missing, VG_EPARSE when it is malformed. */
int	vg_ge_parse_conf(const char *text, int *max_aj_tasks,
	    struct vg_err *e);

/* The job id of `qsub -terse` output ("12" or "12.1-5:1"). */
int	vg_ge_parse_jobid(const char *text, unsigned long *job,
	    struct vg_err *e);

/* A short text for a qstat state ("pending", "held", "error state"),
 * and the vigil state it stands for (QUEUED, RUNNING, SUSPENDED). */
enum vg_state vg_ge_state_map(const char *state, char *why, size_t n);

/* ---- inside a parallel job (gridengine-step.c) ---- */

/* One line of $PE_HOSTFILE: a host and the job's slots on it. */
struct vg_ge_slots {
	char	host[256];
	int	slots;
};

/* Parses $PE_HOSTFILE's "HOST SLOTS QUEUE RANGE" lines into *out (n
 * entries, caller frees); VG_EPARSE naming the line otherwise. */
int	vg_ge_hostfile_parse(const char *text, struct vg_ge_slots **out,
	    size_t *n, struct vg_err *e);

/* 1 when the direct scheduler should start attempts with qrsh -inherit:
 * inside a Grid Engine parallel job (JOB_ID, PE_HOSTFILE) with qrsh on
 * PATH, unless VIGIL_GRIDENGINE_STEPS=never; 0 when not; VG_EINVAL or
 * VG_ENOENT when VIGIL_GRIDENGINE_STEPS=always cannot be met or is not
 * auto, always or never. */
int	vg_ge_steps_wanted(struct vg_err *e);

/* How a qrsh -inherit task without a result record ended, from qrsh's
 * output log and wait status: 1 and r filled when known (refused by
 * Grid Engine: BACKEND_ERROR; with final, otherwise LOST), 0 when not
 * yet. */
int	vg_ge_qrsh_verdict(const char *log, int wstatus, int final,
	    struct vg_result *r);

#endif
