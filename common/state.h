/*
 * state.h - the states of runs, tasks and attempts, shared by the store,
 * the schedulers (which map their own states onto these) and the CLI.
 */
#ifndef VG_STATE_H
#define VG_STATE_H

enum vg_state {
	VG_ST_PENDING = 0,	/* not started yet */
	VG_ST_QUEUED,		/* handed to the scheduler (Slurm PENDING) */
	VG_ST_RUNNING,
	VG_ST_SUSPENDED,
	VG_ST_REQUEUED,		/* Slurm requeued it; same job id */
	VG_ST_SUCCEEDED,	/* exit 0 */
	VG_ST_FAILED,		/* non-zero exit or killed by a signal */
	VG_ST_TIMEOUT,
	VG_ST_OOM,
	VG_ST_CANCELLED,
	VG_ST_DENIED,		/* refused by the policy gate, never ran */
	VG_ST_LOST,		/* vanished with no status and no record */
	VG_ST_NODE_FAIL,
	VG_ST_PREEMPTED,
	VG_ST_BOOT_FAIL,
	VG_ST_DEADLINE,
	VG_ST_BACKEND_ERROR,	/* the backend failed, not the task */
	VG_ST_SKIPPED,		/* a run not started: its concurrency group
				   was held (runner/core/group.h) */
	VG_ST_DEPENDENCY,	/* a run it waits for (after:) ended so
				   that its condition can never be met */
	VG_ST_CACHED,		/* not run: an earlier run's successful
				   attempt with the same key is reused
				   (runner/core/reuse.h) */
	VG_ST__COUNT
};

/* Upper-case name ("SUCCEEDED"); "UNKNOWN" for out-of-range values. */
const char	*vg_state_name(enum vg_state s);
/* Parses a name back; returns -1 when unknown. */
int		 vg_state_parse(const char *name);
/* True for states after which nothing more happens to the attempt. */
int		 vg_state_terminal(enum vg_state s);
/* True for the states a run counts as success: SUCCEEDED and CACHED. */
int		 vg_state_ok(enum vg_state s);

/* Bits of vg_usage.known: which of its fields hold a value. */
enum vg_usage_known {
	VG_USAGE_CPU	= 1 << 0,	/* cpu_user, cpu_sys */
	VG_USAGE_RSS	= 1 << 1,	/* max_rss */
	VG_USAGE_CPUS	= 1 << 2,	/* cpus given */
	VG_USAGE_MEM	= 1 << 3,	/* mem_limit given */
	VG_USAGE_GPUS	= 1 << 4,	/* gpus given */
};

/*
 * Resources one attempt used and was given, where the backend or
 * scheduler can tell; a field without its bit in known is unknown (a
 * zeroed struct knows nothing).  Wall time is the result's ended -
 * started.
 */
struct vg_usage {
	unsigned	known;		/* enum vg_usage_known bits */
	double		cpu_user;	/* seconds, the whole task tree */
	double		cpu_sys;	/* seconds */
	long long	max_rss;	/* bytes, peak resident set */
	int		cpus;		/* CPUs given */
	int		gpus;		/* GPUs given */
	long long	mem_limit;	/* bytes of memory given */
};

/*
 * Why a backend failed (BACKEND_ERROR): a transient cause (connection
 * refused or reset, HTTP 5xx or 429, a dropped stream) may pass on a new
 * attempt; a permanent one (bad image, bad credentials, refused host
 * access) never does.  NONE for every other outcome.
 */
enum vg_cause {
	VG_CAUSE_NONE = 0,
	VG_CAUSE_TRANSIENT,
	VG_CAUSE_PERMANENT,
};

/* "transient", "permanent", or NULL for NONE. */
const char	*vg_cause_name(enum vg_cause c);
/* The cause of a backend failure that returned rc (enum vg_rc):
 * VG_EAGAIN, VG_EIO and VG_ETIMEOUT are transient, the rest permanent. */
enum vg_cause	 vg_cause_of_rc(int rc);

/* Outcome of one attempt, as a backend or scheduler reports it. */
struct vg_result {
	enum vg_state	state;		/* a terminal state */
	int		exit_code;	/* -1 when killed by a signal */
	int		signal;		/* 0 when exited normally */
	double		started;	/* wall clock, seconds */
	double		ended;
	char		node[64];	/* where it ran, when known */
	char		reason[256];	/* one line, for status/events */
	struct vg_usage	usage;		/* what it used and was given */
	int		cause;		/* enum vg_cause */
	int		attempt;	/* whose record; 0 = not said */
};

#endif
