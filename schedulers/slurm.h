/*
 * slurm.h - the interface between the files of the slurm scheduler:
 *
 *   slurm.c         the scheduler ops (collect, flush as arrays, poll,
 *                   cancel, reattach) and the tracking logic
 *   slurm-script.c  batch scripts and #SBATCH value quoting, array specs,
 *                   time and signal formats, the srun step helper
 *   slurm-state.c   Slurm job states, exit codes and reasons -> vg_state,
 *                   the adaptive poll interval, retry resource scaling
 *   slurm-bucket.c  the file-based token bucket shared by every vigil
 *                   process of a user on a host
 *   slurm-cli.c     sbatch/squeue/sacct/scancel/scontrol: run and parse
 *   slurm-lib.c     the same through libslurm (when built with it)
 *   slurm-pack.c    slurm.pack: many tasks per job, pack sizing, pack files
 *
 * Nothing here prints; every fallible call fills a struct vg_err.
 */
#ifndef VG_SLURM_H
#define VG_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "common/state.h"
#include "runner/manifest/plugin.h"
#include "schedulers/cluster.h"
#include "schedulers/scheduler.h"

/* --signal default: USR2 (USR1 is taken by NCCL), 90 s before the limit,
 * to the batch shell, which is task-exec itself (the script execs it). */
#define VG_SLURM_SIGNAL_DEFAULT	"B:USR2@90"

/* ---- slurm-script.c ---- */

/* One submission: an array of tasks sharing one resource request. */
struct vg_slurm_job {
	const char	*name;		/* job name: the run id */
	const char	*run_dir;	/* absolute; output goes below it */
	const char	*vigil;		/* absolute path of vigil (shared fs) */
	const char	*manifest_sha256; /* task-exec --manifest-sha256 */
	int		 attempt;	/* exported as VIGIL_ATTEMPT */
	const char	*array;		/* "0-5,9" (relative), no throttle */
	int		 offset;	/* task index = array index + offset */
	int		 throttle;	/* % limit, 0 = none */
	int		 cpus;		/* 0 = cluster default */
	uint64_t	 memory;	/* bytes, 0 = default */
	int		 gpus;
	uint64_t	 time;		/* seconds, 0 = partition default */
	const char	*partition;	/* NULL = default */
	const char	*account;
	const char	*qos;
	const char	*constraint;
	const char	*signal;	/* "B:USR2@90"; NULL or "" = none */
	int		 requeue;
	const char	*exclude;	/* "n1,n2" or NULL */
	const char	*gpu_type;	/* gres type ("a100"); NULL = any */
	/* Parallel tasks (0 = unset: one node, one task). */
	int		 nodes;
	int		 ntasks;
	int		 ntasks_per_node;
	uint64_t	 mem_per_cpu;	/* bytes; instead of memory */
	int		 gpus_per_task;
	int		 exclusive;
	int		 srun;		/* launcher srun: VIGIL_LAUNCHER=srun */
	/* slurm.options, checked by vg_slurm_option_check; NULL = none. */
	const struct vg_kvs *options;
	/* --dependency value ("afterok:12:13,afterany:14"); NULL = none. */
	const char	*dependency;
	/* slurm.pack: the pack file's name in RUN_DIR/slurm ("submit-3.pack");
	 * the script execs pack-exec instead of task-exec.  NULL = none. */
	const char	*pack;
	int		 pack_steps;	/* tasks as job steps (else local) */
};

/* Whether an attempt with resources r runs its command through srun
 * (resources.launcher, by default srun when Slurm would start more than
 * one task: ntasks > 1, or nodes > 1 or ntasks_per_node > 1). */
int	vg_slurm_use_srun(const struct vg_resources *r);

/*
 * Wraps the command of a task for launcher srun: argv becomes `srun
 * --kill-on-bad-exit=1 -- ARGV...`, a shell command `srun ... -- /bin/sh
 * -c CMD`; srun takes the task count from the job's environment, so each
 * Slurm task (MPI rank) runs the command once.  task-exec applies it when
 * the batch script exported VIGIL_LAUNCHER=srun.
 */
void	vg_slurm_launch_wrap(struct vg_command *cmd);

/*
 * Checks one slurm.options entry: key an sbatch long option on the
 * allowlist (docs/schedulers/slurm.md), value printable; flags take ""
 * or true/false.  r is the run's resources, for options that duplicate a
 * resources field.  Fills why with the reason and returns -1 when the
 * option is refused, 0 when it is fine.
 */
int	vg_slurm_option_check(const char *key, const char *value,
	    const struct vg_resources *r, char *why, size_t n);

/* The allowlist, NULL-terminated (for docs and did-you-mean). */
extern const char *const vg_slurm_allowed_options[];

/*
 * Checks that a manifest value can be handed to Slurm: no control
 * characters (a newline would end an #SBATCH line and start a new one),
 * at most 1024 bytes.  field names it in the message.
 */
int	vg_slurm_value_check(const char *field, const char *v,
	    struct vg_err *e);

/*
 * Appends v as one #SBATCH argument that sbatch reads back byte for byte:
 * sbatch splits #SBATCH lines on blanks (even escaped ones), honours
 * '...' and "..." and backslash escapes, and ends the value at an
 * unquoted '#'.  Values made only of [A-Za-z0-9_.,:=@/+%-] stay bare; any
 * other is written "..." with '"' and '\\' escaped.  v must have passed
 * vg_slurm_value_check.
 */
void	vg_slurm_escape(struct vg_buf *b, const char *v);

/* Appends path with '%' doubled (sbatch expands %A, %a, %j ... in
 * --output and --error, and reads "%%" as one '%'), followed by the
 * pattern as it is, all as one escaped #SBATCH argument. */
void	vg_slurm_escape_pattern(struct vg_buf *b, const char *path,
	    const char *pattern);

/*
 * Builds the batch script of j into out: #SBATCH lines for every request,
 * then `exec VIGIL task-exec RUN_DIR INDEX`.  Fails (VG_EINVAL, naming
 * the field) on a value that cannot be represented.
 */
int	vg_slurm_script(const struct vg_slurm_job *j, struct vg_buf *out,
	    struct vg_err *e);

/* Slurm time limit "D-HH:MM:SS" of secs, rounded up to whole minutes
 * (Slurm's granularity).  0 gives "" (no limit requested). */
void	vg_slurm_time(uint64_t secs, char *buf, size_t n);

/* Parses "[B:]SIG@SECS" (SIG a name with or without SIG, or a number). */
int	vg_slurm_parse_signal(const char *spec, int *sig, int *secs,
	    int *batch, struct vg_err *e);

/*
 * The argv that runs one task as a job step inside an allocation:
 * srun --exclusive -n1 -N1 --cpus-per-task=C [--mem=M]
 * [--gpus=[TYPE:]G] --job-name=NAME --kill-on-bad-exit=1 -- ARGV...
 * (the direct scheduler uses it when SLURM_JOB_ID is set).  cpus <= 0
 * and mem 0 are left out; gpu_type NULL or "" names no type.  Caller
 * releases out.
 */
void	vg_slurm_step_argv(const char *name, int cpus, uint64_t memory,
	    int gpus, const char *gpu_type, const char *const *argv,
	    struct vg_strv *out);

/* ---- slurm-pack.c ---- */

/* slurm.pack: how many tasks one Slurm job runs. */
struct vg_slurm_pack {
	int		 tasks;		/* tasks per job; 0 = by walltime */
	int		 parallel;	/* at once; 0 = what the job holds */
	double		 walltime;	/* target job length, s; 0 = by tasks */
	int		 steps;		/* each task a job step (default) */
};

/* Whether pk packs tasks at all (the section was given). */
static inline int
vg_slurm_pack_on(const struct vg_slurm_pack *pk)
{
	return pk->tasks > 0 || pk->walltime > 0;
}

struct vg_section;

/* The schema of slurm.pack (its check names file:line:column). */
extern const struct vg_section vg_slurm_pack_schema;

/* How ntasks tasks of one resource request are packed. */
struct vg_slurm_pack_plan {
	size_t		 per;		/* tasks per job (packs are even:
					   they differ by one at most) */
	size_t		 njobs;		/* array elements */
	int		 parallel;	/* tasks at once a job asks room for */
	uint64_t	 time;		/* job time limit, s; 0 = default */
};

/*
 * Sizes the packs of ntasks tasks whose time limit is task_secs (0 =
 * unknown): pk->tasks per job, or as many as fill pk->walltime in rounds
 * of pk->parallel; then evened out over the jobs this takes.  The job's
 * time limit is its rounds times task_secs plus a minute.  VG_EINVAL
 * when pk packs nothing, there are no tasks, or walltime is asked
 * without a task time limit.
 */
int	vg_slurm_pack_plan(const struct vg_slurm_pack *pk, size_t ntasks,
	    double task_secs, struct vg_slurm_pack_plan *out,
	    struct vg_err *e);

/* One task of a pack file line. */
struct vg_slurm_pack_entry {
	long		 element;
	int		 index;
	int		 attempt;
	double		 timeout;	/* seconds, 0 = none */
	uint64_t	 memory;	/* bytes, 0 = the task's own */
};

/* Appends the pack file line "ELEMENT INDEX ATTEMPT TIMEOUT MEMORY". */
void	vg_slurm_pack_line(struct vg_buf *b, long element, int index,
	    int attempt, double timeout, uint64_t memory);

/* The tasks of element (every element when it is negative) in a pack
 * file's text, in file order (caller frees *v); VG_EINVAL naming the
 * line for a malformed one, VG_ENOENT when element has none. */
int	vg_slurm_pack_parse(const char *text, long element,
	    struct vg_slurm_pack_entry **v, size_t *n, struct vg_err *e);

/*
 * Retries in place.  Who runs attempt N of a packed task after attempt
 * N-1 ended is decided once, by the file tasks/INDEX/claim.N, made with
 * O_EXCL (never through a link) by whichever side comes first:
 *
 *   "pack TIMEOUT MEMORY"  the login-node driver: the task's pack (its
 *                          element still runs) runs attempt N, with this
 *                          time-out and memory; no new job
 *   "new"                  the driver (it submits N in a new pack), or
 *                          pack-exec (it does not run N: the task
 *                          succeeded, is not retried, was cancelled, the
 *                          pack stops, or nobody asked in time)
 *
 * pack-exec waits for the claim only for an attempt retry.on would retry.
 */
enum vg_slurm_claim_who {
	VG_CLAIM_NONE = 0,	/* no claim (yet) */
	VG_CLAIM_PACK,		/* the pack runs it */
	VG_CLAIM_NEW,		/* not the pack */
};

struct vg_slurm_claim {
	enum vg_slurm_claim_who	 who;
	double			 timeout;	/* seconds, 0 = none */
	uint64_t		 memory;	/* bytes, 0 = the task's own */
};

/*
 * Claims attempt for want->who in task_dir (tasks/INDEX, a directory
 * vigil made; claim.ATTEMPT is made with O_EXCL and never followed).
 * Sets *got to the claim that holds: want when this call made it, else
 * the one found (VG_CLAIM_NONE while its maker is still writing it).
 * Returns 1 when this call made it, 0 when it was there, or a negative
 * vg_rc (a link or another file planted at its name is refused).
 */
int	vg_slurm_claim_make(const char *task_dir, int attempt,
	    const struct vg_slurm_claim *want, struct vg_slurm_claim *got,
	    struct vg_err *e);

/* Parses a claim's text into *got (VG_CLAIM_NONE for an empty or
 * unfinished one); 0, or -1 when it is not a claim. */
int	vg_slurm_claim_parse(const char *text, struct vg_slurm_claim *got);

/* Reads the claim of attempt in task_dir into *got (VG_CLAIM_NONE when
 * there is none, or it is not whole yet).  Returns 0 or a negative
 * vg_rc (a link or a malformed claim). */
int	vg_slurm_claim_read(const char *task_dir, int attempt,
	    struct vg_slurm_claim *got, struct vg_err *e);

/* ---- slurm-step.c ---- */

struct vg_attempt;

/* CPUs of an allocation from SLURM_JOB_CPUS_PER_NODE ("2(x3),1" = 7);
 * -1 when spec is malformed. */
int	vg_slurm_alloc_cpus(const char *spec);

/*
 * Whether the direct scheduler runs attempts as job steps: VIGIL_SLURM_STEPS
 * = auto (default: inside an allocation, i.e. SLURM_JOB_ID set and not
 * already inside a step, and srun on PATH; a warning is logged when it is
 * not), always, or never; exec (set by a pack's script) runs each
 * attempt as a local `vigil task-exec` process.  Returns 1 (steps; *cpus
 * = the allocation's CPUs, 0 when unknown), 2 (exec, *cpus the same),
 * 0 (run here), or VG_EINVAL for a bad value or
 * `always` outside an allocation, VG_ENOENT for `always` without srun.
 */
int	vg_slurm_steps_wanted(int *cpus, struct vg_err *e);

/*
 * Starts attempt a as a job step: `srun --exclusive -n1 -N1 ... -- vigil
 * task-exec run_dir INDEX` (local: `vigil task-exec run_dir INDEX` as a
 * process here, given the pool's GPUs) with VIGIL_ATTEMPT (and
 * VIGIL_TIMEOUT) set,
 * srun's output in TASK_DIR/step.log, earlier records set aside.  Sets
 * a->pid (srun, in its own process group) and a->started; a->pidfd is
 * left to the caller.  Does not wait.
 */
int	vg_slurm_step_start(const char *vigil, const char *run_dir,
	    const char *manifest_sha256, int local,
	    struct vg_attempt *a, struct vg_err *e);

/* Reads "JOB.STEP" that task-exec wrote to TASK_DIR/step; 1 when found. */
int	vg_slurm_step_id(const char *task_dir, char *out, size_t n);

/*
 * Sends sig to the step's task-exec through `scancel --signal` when its
 * step id is known, else (not started yet) to srun itself.  Blocks up to
 * 10 s on scancel.  Returns 0 or -1.
 */
int	vg_slurm_step_signal(const char *task_dir, pid_t srun, int sig);

/*
 * How a step ended that left no result record, from srun's output and
 * wait status: BACKEND_ERROR when srun could not create the step,
 * NODE_FAIL, TIMEOUT (the allocation's limit), CANCELLED (by Slurm), LOST
 * (srun killed, or exited with no record).  Returns 1 with r filled, or 0
 * when nothing in the log explains it and final is 0 (a record may still
 * show up on a slow shared file system).
 */
int	vg_slurm_step_verdict(const char *log, int wstatus, int final,
	    struct vg_result *r);

/* Whether task_dir holds the marker `vigil cancel RUN/TASK` leaves for a
 * packed task (tasks/INDEX/cancel; a name, not followed): pack-exec
 * stops the task, task-exec records it CANCELLED however it ended. */
int	vg_slurm_pack_cancel_marked(const char *task_dir);

/* Leaves that marker in task_dir (RUN_DIR/tasks/INDEX): neither tasks
 * nor INDEX may be a link (refused, naming it), and a link or file at
 * cancel is replaced, never followed.  Returns 0 or a negative vg_rc. */
int	vg_slurm_pack_cancel_mark(const char *task_dir, struct vg_err *e);

/* slurm-policy.c: how the gate reads scancel, scontrol, sbatch, ... */
extern const struct pl_prog vg_slurm_policy_progs[];

/* ---- slurm.c: the job journal, RUN_DIR/slurm/jobs ---- */

/* Reads the job lines "INDEX ATTEMPT JOB_TASK" of run_dir's journal
 * (written, synced, before the job ids are reported to the driver) into
 * *v (caller frees), as vg_sched_journal_load; none is 0 lines. */
int	vg_slurm_journal_load(const char *run_dir, struct vg_sched_jentry **v,
	    size_t *n, struct vg_err *e);

/* Whether the journal ends with a chunk submitted (its intent line
 * written) whose job ids never followed: 1 or 0.  vigil cancel then
 * cancels by the run's job name. */
int	vg_slurm_journal_unjournaled(const char *run_dir);

/*
 * Cancels the given array elements through scancel, one call per array
 * job ("1234_[0-3,7]"); duplicates are fine, v is sorted in place.
 * *calls gets the number of scancel calls.  Blocks on them; returns the
 * first failure (the others are still tried).
 */
int	vg_slurm_cancel_elements(struct vg_sched_jentry *v, size_t n,
	    size_t *calls, struct vg_err *e);

/* ---- slurm-state.c ---- */

/* One job or array element as squeue or sacct reports it. */
struct vg_slurm_row {
	unsigned long	 job;		/* array job id, or the job id */
	long		 task;		/* array task id, -1 when none */
	long		 task_hi;	/* pending range "[3-5%2]": 3..5 */
	char		 state[32];	/* "CANCELLED", without " by N" */
	long		 by_uid;	/* "CANCELLED by N", else -1 */
	int		 exit_code;	/* -1 when unknown */
	int		 signal;	/* 0 when none */
	char		 reason[96];
	char		 nodes[96];
	struct vg_usage	 usage;		/* sacct: CPU, MaxRSS, allocation */
	double		 elapsed;	/* sacct Elapsed, seconds; 0 unknown */
	double		 step_user;	/* sums over its steps' lines */
	double		 step_sys;
};

struct vg_slurm_rows {
	struct vg_slurm_row	*v;
	size_t			 n;
	size_t			 cap;
};

void	vg_slurm_rows_release(struct vg_slurm_rows *r);

/*
 * Maps a row to a vigil state.  Terminal states fill r (state, exit code,
 * signal, node, reason); non-terminal ones put the pending reason or
 * "requeued" etc. in r->reason.  Unknown states map to VG_ST_RUNNING
 * (still alive as far as Slurm is concerned), never to a success.
 */
enum vg_state vg_slurm_state_map(const struct vg_slurm_row *row,
	    struct vg_result *r);

/* A short explanation of a pending reason ("waiting for resources"),
 * or NULL when unknown. */
const char *vg_slurm_reason_text(const char *reason);

/* Parses sacct's usage fields f (TotalCPU ... AllocTRES, 8 strings) into
 * row; unparsable fields stay unknown (sites vary, never fatal). */
void	vg_slurm_parse_usage(char **f, struct vg_slurm_row *row);
/* Merges a step's usage (sacct line "JOB.batch", "JOB.0") into its
 * job's row: CPU times add up, MaxRSS is the largest. */
void	vg_slurm_add_step(struct vg_slurm_row *job,
	    const struct vg_slurm_row *step);

/*
 * Resources of the next attempt after prev ended in state: OOM multiplies
 * memory by memory_factor, TIMEOUT multiplies time by time_factor and caps
 * it at max_time (the partition's MaxTime, 0 = none); other states keep
 * the request.  Strings are borrowed from prev.
 */
void	vg_slurm_scale(const struct vg_retry *rt, enum vg_state state,
	    const struct vg_resources *prev, uint64_t max_time,
	    struct vg_resources *next);

/* ---- slurm-bucket.c ---- */

/* A token bucket in a file, shared by processes through flock(2). */
struct vg_slurm_bucket {
	char	*path;		/* owned */
	double	 rate;		/* tokens per second */
	double	 burst;		/* capacity */
};

/* Default bucket file: $XDG_RUNTIME_DIR/vigil/slurm-bucket when that
 * directory is the user's own, else STATE_DIR/slurm-bucket (adopted:
 * common/adopt.h).  Caller frees. */
char	*vg_slurm_bucket_path(struct vg_err *e);
int	vg_slurm_bucket_init(struct vg_slurm_bucket *b, const char *path,
	    double rate, double burst, struct vg_err *e);
void	vg_slurm_bucket_release(struct vg_slurm_bucket *b);
/*
 * Takes one token at time now (CLOCK_MONOTONIC seconds, system-wide).
 * Returns 0 with *wait = 0 when taken, or 0 with *wait > 0 (seconds until
 * a token is due) without taking one.  Blocks only on the file lock.
 */
int	vg_slurm_bucket_take(struct vg_slurm_bucket *b, double now,
	    double *wait, struct vg_err *e);

/* ---- slurm-cli.c, slurm-lib.c ---- */

/* What vigil learns from the cluster once per run. */
struct vg_slurm_conf_info {
	int		 max_array;	/* MaxArraySize (indexes < this) */
	int		 min_job_age;	/* seconds */
	int		 accounting;	/* AccountingStorageType != none */
	char		 version[32];	/* SLURM_VERSION of the controller */
};

/* Parses `scontrol show config` output. */
int	vg_slurm_parse_config(const char *text,
	    struct vg_slurm_conf_info *ci, struct vg_err *e);
/* Parses `sacct -X -n -P -o JobID,State,ExitCode,Reason,NodeList`. */
int	vg_slurm_parse_sacct(const char *text, struct vg_slurm_rows *out,
	    struct vg_err *e);
/* Parses `squeue -h -r -t all -O` with VG_SLURM_SQUEUE_FORMAT. */
int	vg_slurm_parse_squeue(const char *text, struct vg_slurm_rows *out,
	    struct vg_err *e);
/* Parses `sbatch --parsable` output "JOBID[;CLUSTER]". */
int	vg_slurm_parse_jobid(const char *text, unsigned long *job,
	    struct vg_err *e);
/* Parses MaxTime of `scontrol show partition NAME -o` into seconds
 * (0 = UNLIMITED). */
int	vg_slurm_parse_maxtime(const char *text, uint64_t *secs,
	    struct vg_err *e);

/* The first five fields are the state; the rest the usage, in the same
 * batched query (without -X, so that each job's steps, which alone carry
 * MaxRSS, come along: their lines merge into their job's row). */
#define VG_SLURM_SACCT_FORMAT	"JobID,State,ExitCode,Reason,NodeList," \
	"TotalCPU,UserCPU,SystemCPU,MaxRSS,Elapsed,AllocCPUS,ReqMem,AllocTRES"
#define VG_SLURM_SACCT_FIELDS	13
#define VG_SLURM_SQUEUE_FORMAT \
	"ArrayJobID:|,ArrayTaskID:|,State:|,Reason:|,exit_code:|,NodeList:"

/* Submission errors worth retrying (socket time-outs, EAGAIN, busy
 * controller, rate limits), recognised in the error text. */
int	vg_slurm_transient(const char *msg);

/* The two ways of talking to Slurm behind one set of operations. */
struct vg_slurm_iface {
	const char	*name;		/* "cli" | "lib" */
	int	(*config)(struct vg_slurm_conf_info *ci, struct vg_err *e);
	int	(*maxtime)(const char *partition, uint64_t *secs,
		    struct vg_err *e);
	/* Submits script (its #SBATCH lines match j); *job = array job id. */
	int	(*submit)(const struct vg_slurm_job *j, const char *script,
		    const char *script_path, unsigned long *job,
		    struct vg_err *e);
	/* One query for every element of the given array job ids. */
	int	(*query)(const char *name, const unsigned long *jobs,
		    size_t n, int accounting, struct vg_slurm_rows *out,
		    struct vg_err *e);
	/* Cancels "1234_5" or "1234". */
	int	(*cancel)(const char *handle, struct vg_err *e);
};

struct vg_slurm_conf {
	char		*interface;	/* auto (default) | lib | cli */
	int		 array_parallelism; /* % throttle; 0 = none */
	char		*signal;	/* default "B:USR2@90"; "" = off */
	int		 requeue;
	struct vg_strv	 exclude;	/* nodes */
	double		 poll_min;	/* seconds */
	double		 poll_max;
	struct vg_kvs	 options;	/* further sbatch long options */
	struct vg_slurm_pack pack;	/* slurm.pack */
};

/* The slurm: section (owned by the slurm scheduler). */
extern const struct vg_msection vg_slurm_msection;

/* The slurm section of m (defaulted; owned by m). */
static inline struct vg_slurm_conf *
vg_slurm_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_slurm_msection);
}

extern const struct vg_slurm_iface vg_slurm_cli;
#ifdef HAVE_LIBSLURM
extern const struct vg_slurm_iface vg_slurm_lib;
/* SLURM_VERSION_NUMBER vigil was built against, as "22.05". */
const char *vg_slurm_lib_version(void);
#endif

/* A Slurm command: vg_cluster_cmd with Slurm's transient errors
 * (vg_slurm_transient) as VG_EAGAIN. */
int	vg_slurm_run(const char *const *argv, struct vg_buf *out,
	    struct vg_buf *err, int timeout_ms, struct vg_err *e);

#endif
