/*
 * backend.h - execution backends: where one attempt of one task runs
 * (local process, docker container, ssh host, apptainer container, cloud
 * sandbox).  One file per backend, each exporting one const struct
 * vg_backend_ops; backend.c holds the NULL-terminated table and the
 * vg_backend_*() wrappers that check optional operations.
 *
 * Life of an attempt (driven by a scheduler, see scheduler.h):
 *
 *   prepare(run)  once per drive (the driver's loop over one run) and
 *                 backend, may block (pull an image, check a host key);
 *                 returns the drive's handle (struct vg_backend_drive,
 *                 below), which the drive's attempts carry in a->drive
 *                 to every op of theirs, and unprepare(handle) ends;
 *                 optional
 *   start(a)      launches without waiting for the end; sets a->pid and
 *                 a->pidfd to a process the scheduler can watch with
 *                 poll(2): the task itself (local) or a monitor process
 *                 (everything reached over an API or a connection)
 *   cancel(a,sig) like kill(2) on the whole attempt: every process of the
 *                 task tree, the container, or the remote process group;
 *                 never blocks
 *   finish(a,ws)  after the watched process exited with wait status ws:
 *                 fills the result (exit code, signal, or why the backend
 *                 itself failed)
 *   cleanup(a)    releases what start made (container, remote dir)
 *
 * After a crash of vigil, vg_backend_reattach takes an attempt that was
 * in flight over (the monitor if it still runs, its record if it left
 * one, else the backend's reattach op in a new monitor), and reap
 * removes what nobody follows any more.
 *
 * An attempt outside a drive (vigil exec, task-exec, a session's
 * command) has a->drive NULL: the backend keeps what it needs for that
 * attempt alone, from start to cleanup.
 *
 * Backends that can only work synchronously implement run() and leave
 * start/finish/cancel NULL: the wrappers then fork a monitor process that
 * calls run() and writes the result record into the task directory, so
 * the schedulers see one uniform, pollable process per attempt.  The same
 * run() serves `vigil task-exec` on Slurm compute nodes.
 */
#ifndef VG_BACKEND_H
#define VG_BACKEND_H

#include <signal.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"
#include "common/state.h"
#include "runner/manifest/task.h"

struct vg_backend_ops;
struct vg_pool;
struct vg_session;
struct vg_session_cmd;

/*
 * A backend's state for one drive: what its prepare made for the run
 * (local: the compiled sandbox, the egress proxy, the slots' executors,
 * the pools of temporary directories and empty output files; modal:
 * the mode it resolved), handed to each attempt of the drive as
 * a->drive and to unprepare, which frees it.  Every backend embeds this
 * first in a struct of its own and downcasts after checking ops, so a
 * handle never reaches a backend it is not of.  Two drives in one
 * process have two handles; nothing of one is seen by the other.
 */
struct vg_backend_drive {
	const struct vg_backend_ops *ops;	/* whose handle it is */
};

/* One attempt of one task, shared between scheduler and backend. */
struct vg_attempt {
	/* Set by the scheduler before start; borrowed. */
	const struct vg_manifest *m;
	const struct vg_task	*task;
	const char		*run_id;
	const char		*task_dir;	/* stdout, stderr, result.json */
	const char		*scratch_dir;	/* NULL when none */
	/* The handle vg_backend_prepare gave the drive that starts a,
	 * NULL outside a drive (or when the backend keeps nothing per
	 * drive); a monitor process inherits it with a.  Valid until
	 * vg_backend_unprepare, which comes after the cleanup of every
	 * attempt of the drive. */
	struct vg_backend_drive	*drive;
	int			 attempt;	/* 1-based */
	struct vg_resources	 res;		/* effective (retries scale) */
	double			 timeout;	/* seconds; 0 = none */
	double			 kill_grace;	/* SIGTERM -> SIGKILL */

	/* Set by start. */
	pid_t			 pid;		/* watched process, or 0 */
	int			 pidfd;		/* pidfd of pid, or -1 */
	unsigned long long	 pid_start;	/* /proc starttime, for resume */
	double			 started;	/* wall clock */
	void			*priv;		/* backend state */
	const struct vg_backend_ops *ops;

	/* GPUs the scheduler gave this attempt from the pool (direct):
	 * gpu_set 1, gpu_ids as CUDA_VISIBLE_DEVICES names them ("" = none:
	 * the task sees no GPU), gpu_devs their device nodes, both
	 * comma-separated.  gpu_set 0: no assignment here (Slurm, cloud). */
	int			 gpu_set;
	int			 gpu_vendor;	/* enum vg_gpu_vendor */
	char			 gpu_ids[256];
	char			 gpu_devs[512];

	/* Set by the caller before start when it watches a->pidfd only
	 * until it is readable and takes the end from finish (the direct
	 * scheduler): start may then run the attempt in a process that
	 * outlives it (local: a slot's executor, backends/shim.h), and
	 * says so with watch_only: a->pidfd is then a descriptor that
	 * becomes readable when the attempt ended, not a pidfd (no
	 * waitid on it), and a->pid is that longer-lived process.  Only
	 * for attempts of a drive (a->drive): the processes kept are the
	 * drive's, stopped by its unprepare. */
	int			 reuse_ok;
	int			 watch_only;
	/* Set by the caller (with reuse_ok) to ask for the attempt to be
	 * started after ahead_of, a running attempt whose start said
	 * watch_only, in the same process, as soon as ahead_of ends,
	 * without a call back: start then either hands it over (returns
	 * 0 with watch_only set; the attempt has not started yet, a->pidfd
	 * becomes readable if it ends without starting, and it starts
	 * when ahead_of ends) or does nothing and returns VG_EAGAIN (it
	 * cannot be held there). */
	const struct vg_attempt	*ahead_of;
	/* Set by the caller when it removes task_dir with empty stdout
	 * and stderr in it (the driver's task directories, pooled with
	 * them: common/dirpool.h): the backend may leave them there. */
	int			 outputs_stay;

	/* Set by vg_backend_reattach: a->pid is a monitor an earlier vigil
	 * started, not a child of this process; its watcher cannot wait
	 * for it and takes the end from the result record. */
	int			 adopted;
	/* output: stream (docs/state.md): out_set 1 when the driver gives
	 * the task's stdout and stderr as out_fd[0] and out_fd[1] (pipe
	 * write ends, borrowed: the backend dups them) instead of files in
	 * task_dir.  Set only for backends whose ops have stream_output. */
	int			 out_set;
	int			 out_fd[2];
	/* Set: the TMPDIR to give (unless the sandbox makes /tmp private),
	 * a directory its owner keeps (a session's tmp/: local); NULL: the
	 * backend's own, removed at the end. */
	const char		*tmp_dir;
};

/*
 * What a backend declares to the schedulers that start its attempts.
 * VG_BCAP_EXECUTORS: start may run an attempt in a process kept for the
 * slot from one attempt to the next (a->reuse_ok asked, a->watch_only
 * answered per attempt) and hold the next attempt ahead of a running
 * one (a->ahead_of): local's executors, backends/shim.h.  Without it the
 * direct scheduler asks for neither.
 */
#define VG_BCAP_EXECUTORS	0x1u
/*
 * VG_BCAP_STDIN_STREAM: a session command reads its stdin_path as the
 * bytes come (the sandbox redirects it from the session directory), so
 * a FIFO there gives a background command input after its start
 * (`vigil exec --background --open-stdin`, `vigil session input`).
 * Backends that read the whole file first (ssh, the clouds) lack it.
 */
#define VG_BCAP_STDIN_STREAM	0x2u

struct vg_backend_ops {
	/* Name, alias, manifest sections, their validation beyond the
	 * schema and what this host lacks to run a manifest (host_check)
	 * (runner/manifest/plugin.h); kind VG_PLUGIN_BACKEND. */
	struct vg_plugin p;
	unsigned	 caps;		/* VG_BCAP_* */

	/* Appends "name: ok|missing ... (what to change)" lines to out for
	 * `vigil doctor`.  Optional. */
	void	(*probe)(struct vg_buf *out);
	/* Per-drive preparation; may block.  Sets *out to the drive's
	 * handle (NULL when the backend keeps nothing per drive); on
	 * failure, *out stays NULL and nothing of the drive is left.
	 * Optional. */
	int	(*prepare)(const struct vg_manifest *m, const char *run_dir,
		    struct vg_backend_drive **out, struct vg_err *e);
	/* What of m's isolation this host cannot deliver ("; "-separated,
	 * "" when nothing; borrowed), or NULL with e set.  Optional. */
	const char *(*downgrades)(const struct vg_manifest *m,
		    struct vg_err *e);
	/* What m's tasks run with, one line ("level standard;
	 * capabilities none; namespaces pid,mnt,uts,ipc; ..."; borrowed),
	 * or NULL when the backend has nothing to say.  Optional. */
	const char *(*confinement)(const struct vg_manifest *m);
	/* Appends to out what m's image is, for reuse keys: the image as
	 * written and what it resolves to now ("python:3.12 sha256:..."),
	 * a cloud image by its id.  May block (asks an engine or a
	 * registry).  Optional: without it, the image as written. */
	int	(*image_id)(const struct vg_manifest *m, struct vg_buf *out,
		    struct vg_err *e);
	/* Starts a; does not wait for it to end. */
	int	(*start)(struct vg_attempt *a, struct vg_err *e);
	/* Converts the wait status of a->pid into r. */
	int	(*finish)(struct vg_attempt *a, int wstatus, struct vg_result *r,
		    struct vg_err *e);
	/* Signals everything the attempt runs; like kill(2), never blocks. */
	int	(*cancel)(struct vg_attempt *a, int sig, struct vg_err *e);
	/* Frees what start created; never fails loudly. */
	void	(*cleanup)(struct vg_attempt *a);
	/* The drive that prepare began has ended: stops what start kept
	 * from one attempt to the next (local: the slots' executors, the
	 * egress proxy) and frees d, a handle of this backend's.
	 * Required when prepare returns handles. */
	void	(*unprepare)(struct vg_backend_drive *d);
	/* Runs a to completion, blocking; honours a->timeout itself and
	 * stops on SIGTERM.  For monitor-based backends and task-exec. */
	int	(*run)(struct vg_attempt *a, struct vg_result *r,
		    struct vg_err *e);
	/* Removes leftovers (containers, remote processes and dirs,
	 * sandboxes) of task `task` of run_id (-1: of every task), or, with
	 * run_id NULL, of all runs whose owner is dead.  m is the run's
	 * stored manifest (where a backend finds its host: ssh), NULL when
	 * run_id is; a backend that needs m does nothing without it.
	 * Appends one line per thing removed to report.  Optional. */
	int	(*reap)(const struct vg_manifest *m, const char *run_id,
		    int task, struct vg_buf *report, struct vg_err *e);
	/* Fills what the direct scheduler packs tasks into where this
	 * backend runs them (struct vg_pool, backends/gpu.h); NULL = this
	 * host's (vg_pool_host).  Optional. */
	int	(*pool)(const struct vg_manifest *m, struct vg_pool *p,
		    struct vg_err *e);
	/*
	 * Sessions (struct vg_session below; docs/sessions.md): a sandbox
	 * kept between commands.  All three optional; a backend without
	 * session_open has no sessions.
	 *
	 * session_open   creates the sandbox of s (container, instance,
	 *                remote directory, cloud sandbox) named and labelled
	 *                by s->id, makes s->root there, and fills s->handle
	 *                and s->root; may block
	 * session_exec   runs c->command there through the wrapper of
	 *                vg_session_script (so the cwd and exports of the
	 *                previous command are back), streams its output to
	 *                c->out as it comes and keeps it whole in c->dir's
	 *                stdout and stderr, honours c->timeout and *c->stop
	 *                by killing the command's process tree (never the
	 *                sandbox), and fills r; blocks
	 * session_close  removes the sandbox, found by s->handle or, when
	 *                that is empty (a start killed before it was
	 *                recorded), by s->id; removing what is already gone
	 *                succeeds
	 */
	int	(*session_open)(struct vg_session *s, struct vg_err *e);
	int	(*session_exec)(const struct vg_session *s,
		    const struct vg_session_cmd *c, struct vg_result *r,
		    struct vg_err *e);
	int	(*session_close)(const struct vg_session *s, struct vg_err *e);
	/* Takes over attempt a (a->attempt, a->task_dir as when it was
	 * started) of a dead vigil whose monitor is gone too: finds what it
	 * runs (docker: the container by its run, task and attempt; ssh:
	 * the remote task by its directory; cloud: the sandbox by its tags)
	 * and follows it to its end like run, appending the output that
	 * the task files lack, then cleans up as run does.  VG_ENOENT when
	 * nothing of a is left; when it finds a but cannot follow it, it
	 * stops and removes it and returns VG_ENOENT as well (the task runs
	 * again).  Blocking, in the monitor process.  Optional. */
	int	(*reattach)(struct vg_attempt *a, struct vg_result *r,
		    struct vg_err *e);
	/* 1 when start honours a->out_set (output: stream); the driver
	 * gives others files in task_dir. */
	int	stream_output;
	/* Seconds past a's timeout before the scheduler stops a itself,
	 * for a backend whose monitor enforces a->timeout and has work to
	 * do after it (cloud: kill the command, bring the outputs back,
	 * delete the sandbox).  Optional: 0. */
	double	(*timeout_slack)(const struct vg_attempt *a);
};

extern const struct vg_backend_ops vg_backend_local;
extern const struct vg_backend_ops vg_backend_docker;
extern const struct vg_backend_ops vg_backend_ssh;
extern const struct vg_backend_ops vg_backend_singularity;
extern const struct vg_backend_ops vg_backend_modal;
extern const struct vg_backend_ops vg_backend_daytona;
extern const struct vg_backend_ops vg_backend_vercel;

/* NULL-terminated table of every compiled-in backend. */
extern const struct vg_backend_ops *const vg_backends[];

/* Looks a backend up by name ("apptainer" is an alias of singularity). */
const struct vg_backend_ops *vg_backend_find(const char *name);

/*
 * Wrappers: the only way generic code calls a backend.  Each checks its
 * optional operation once and behaves as the operation documented above;
 * without it: probe says the backend has no host checks, prepare does
 * nothing, downgrades is "", reap does nothing and returns 0 (see
 * vg_backend_can_reap), and start/finish/cancel fall back to the monitor
 * process around run.
 */
void	vg_backend_probe(const struct vg_backend_ops *ops, struct vg_buf *out);
/* *out: the drive's handle, for a->drive of each of its attempts and
 * for vg_backend_unprepare; NULL without the optional operation. */
int	vg_backend_prepare(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m, const char *run_dir,
	    struct vg_backend_drive **out, struct vg_err *e);
/* Ends the drive of handle d (NULL: nothing to do). */
void	vg_backend_unprepare(struct vg_backend_drive *d);
const char *vg_backend_downgrades(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m, struct vg_err *e);
/* NULL without the optional operation. */
const char *vg_backend_confinement(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m);
/* m->image as written (nothing when none) without the optional
 * operation, or with ops NULL. */
int	vg_backend_image_id(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m, struct vg_buf *out, struct vg_err *e);
int	vg_backend_can_reap(const struct vg_backend_ops *ops);
int	vg_backend_reap(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m, const char *run_id, int task,
	    struct vg_buf *report, struct vg_err *e);
/*
 * Takes over attempt a of a dead vigil (a->m, task, run_id, task_dir,
 * attempt set as for start) for a monitor-based backend, so a watcher
 * gets a->pid and a->pidfd as from start: the attempt's monitor when it
 * still runs (a->adopted set), a monitor that exits at once when the
 * attempt's result record is already there, else a new monitor calling
 * the backend's reattach op (whose VG_ENOENT becomes a LOST record
 * saying nothing was left).  VG_ENOENT when no monitor recorded itself
 * for a->attempt (it never started: nothing to follow or remove);
 * VG_EUNSUPPORTED for a backend without a monitor (local, singularity:
 * their attempts die with vigil) or without reattach when the monitor
 * is gone.
 */
int	vg_backend_reattach(const struct vg_backend_ops *ops,
	    struct vg_attempt *a, struct vg_err *e);
/* Kills, with SIGKILL, the monitor recorded in task_dir for attempt
 * (0: whichever) if it still runs; 1 when it did.  For cancelling a run
 * whose vigil is gone, before reap. */
int	vg_backend_monitor_kill(const char *task_dir, int attempt);
/* The pool m's tasks are packed into on ops (this host's without the
 * op); release with vg_pool_release. */
int	vg_backend_pool(const struct vg_backend_ops *ops,
	    const struct vg_manifest *m, struct vg_pool *p, struct vg_err *e);
int	vg_backend_start(const struct vg_backend_ops *ops, struct vg_attempt *a,
	    struct vg_err *e);
int	vg_backend_finish(struct vg_attempt *a, int wstatus,
	    struct vg_result *r, struct vg_err *e);
int	vg_backend_cancel(struct vg_attempt *a, int sig, struct vg_err *e);
/* The timeout_slack of a's backend (a started), 0 without one. */
double	vg_backend_timeout_slack(const struct vg_attempt *a);
void	vg_backend_cleanup(struct vg_attempt *a);
/* Runs a (a->ops set) to completion here, blocking: run when the backend
 * has it, else start, wait for a->pid, finish and cleanup.  For `vigil
 * exec` and `vigil task-exec`. */
int	vg_backend_run(struct vg_attempt *a, struct vg_result *r,
	    struct vg_err *e);

/*
 * Where the task of an attempt runs, which decides what of its
 * environment vg_task_env builds (the table in task-env.c).
 */
enum vg_env_where {
	VG_ENV_HOST,	/* this host, as vigil's user (local) */
	VG_ENV_IMAGE,	/* an image with its own PATH, home, user (docker,
			 * daytona, vercel, modal) */
	VG_ENV_ENGINE,	/* an engine that passes the host's environment
			 * itself and names scratch (apptainer) */
	VG_ENV_REMOTE,	/* another host's login (ssh) */
};

/*
 * Appends the environment of attempt a as seen where it runs: a small
 * base of host variables (PATH, HOME, USER, LOGNAME, TMPDIR on this
 * host only; LANG, LC_ALL, TZ here and in images), the task env, then
 * VIGIL_RUN_ID, VIGIL_TASK_INDEX, VIGIL_TASK_DIR (not remote: set
 * there), VIGIL_ATTEMPT and VIGIL_SCRATCH_DIR (host and image, when
 * there is scratch), and the GPU assignment: VIGIL_GPUS and (not in an
 * image, where the engine maps the devices) CUDA_VISIBLE_DEVICES or
 * ROCR_/HIP_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES empty for a task
 * without gpus.  Nothing else of vigil's own environment leaks in.
 * Caller releases out.
 */
void	vg_task_env(const struct vg_attempt *a, enum vg_env_where where,
	    struct vg_strv *out);

/* The variables of vigil's own environment vg_task_env passes to a task
 * (NULL-terminated): what a run records of its caller's environment
 * (runner/core/origin.h). */
extern const char *const vg_task_env_caller[];

/* vg_task_env for a task on this host (VG_ENV_HOST). */
void	vg_attempt_env(const struct vg_attempt *a, struct vg_strv *out);

/*
 * Builds the argv of the task command: ["/bin/sh", "-c", cmd] for a
 * string, the list itself otherwise.  Caller releases out.
 */
void	vg_attempt_argv(const struct vg_attempt *a, struct vg_strv *out);

/* Result records: result.json in the task directory, written atomically
 * by monitors and task-exec, read by finish and the Slurm tracker. */
int	vg_result_write(const char *task_dir, const struct vg_result *r,
	    struct vg_err *e);
/* The text of r's record (a JSON object, one member per line). */
void	vg_result_text(const struct vg_result *r, struct vg_buf *out);
int	vg_result_read(const char *task_dir, struct vg_result *r,
	    struct vg_err *e);
/* Parses the text of a result record (what vg_result_read does after
 * reading the file); VG_EPARSE with the byte offset on bad input. */
int	vg_result_parse(const char *text, size_t len, struct vg_result *r,
	    struct vg_err *e);

/*
 * The owner label of this process, "host:pid:starttime", that backends
 * put on what they create outside the task directory (containers,
 * sandboxes) so that reap can tell orphans from live runs.
 */
void	vg_backend_owner_label(char *out, size_t size);
/* True when owner names a process of this host that is gone (or a
 * zombie); false for another host's label or one that does not parse. */
int	vg_backend_owner_dead(const char *owner);

/*
 * Opens name (stdout, stderr) in dir for the task's output, made afresh
 * (whatever a task left at that name, a link included, is removed, never
 * followed), mode 0644, plus flags (e.g. O_APPEND).  dir is a task
 * directory (up 0) or a session job's cmds/JOB (up 2: both components
 * are walked from the session directory, no link followed; see
 * vg_beneath_file_in).  Returns the fd (caller closes) or a negative
 * vg_rc with e filled.
 */
int	vg_task_output_open(const char *dir, int up, const char *name,
	    int flags, struct vg_err *e);
/* Opens dir/name for appending, keeping what it holds (a monitor that
 * takes an attempt over); created when missing; a link, a FIFO or a
 * file not vigil's own there is refused (common/beneath.h). */
int	vg_task_output_reopen(const char *dir, int up, const char *name,
	    struct vg_err *e);

/* Records in u what attempt resources res asked for (cpus, gpus,
 * memory, where set) as what the attempt was given; a backend that
 * knows better (a cgroup limit, a Slurm allocation) overwrites it. */
void	vg_usage_given(struct vg_usage *u, const struct vg_resources *res);

/* Fills r as VG_ST_BACKEND_ERROR with e's message as the reason and its
 * cause (vg_cause_of_rc of e->rc) unless r has one; returns e->rc, or
 * VG_EBACKEND when e holds none. */
int	vg_result_fail(struct vg_result *r, const struct vg_err *e);

/* ---- sessions (backends/session.c; docs/sessions.md) ---- */

/* Longest handle and root a backend may record for a session. */
#define VG_SESSION_HANDLE_MAX	256
#define VG_SESSION_ROOT_MAX	1024

/* One session: what every op is given; the strings are borrowed. */
struct vg_session {
	const char		*id;	/* "s-20261201-163255-1a2b3c" */
	const char		*dir;	/* on this host: cmds/<job>/ live here */
	const struct vg_manifest *m;	/* its backend options */
	const char		*owner;	/* vg_backend_owner_label of the
					   process that opened it */
	/* Filled by session_open, recorded, given back to exec/close. */
	char			 handle[VG_SESSION_HANDLE_MAX];
	char			 root[VG_SESSION_ROOT_MAX];	/* where the
					   state files are, in the sandbox */
};

/* One command of a session. */
struct vg_session_cmd {
	const char		*job;		/* "3": root/cmds/3 there */
	const char		*command;	/* shell text */
	const char		*dir;		/* this host: stdout, stderr */
	const char		*stdin_path;	/* this host; NULL: none */
	int			 save;		/* keep the cwd and exports
						   it leaves (foreground) */
	double			 timeout;	/* seconds; 0 = none */
	double			 kill_grace;	/* SIGTERM -> SIGKILL */
	const volatile sig_atomic_t *stop;	/* set: stop it (may be NULL) */
	/* Output as it arrives (stream 1 or 2); may be NULL. */
	void			(*out)(void *arg, int stream, const char *p,
				    size_t n);
	void			*arg;
	/* Set by a backend whose sandbox sees the session directory at
	 * its path on this host (s->root is s->dir): the wrapper leaves
	 * the state it saves in root/cmds/JOB/env, and the backend puts
	 * it in place with vg_session_commit once the command ended, so
	 * that no `mv` runs in the sandbox. */
	int			 commit_here;
	/* Set by a backend that holds the command's process tree itself
	 * (local: the shim, init of its PID namespace): the wrapper
	 * records no pid for a tree kill. */
	int			 tree_held;
	/* Where a session's first command starts (the manifest's
	 * workdir; NULL: root/work); later ones start where the last
	 * left off. */
	const char		*workdir;
};

/* A session job's record in c->dir: lines "KEY VALUE", appended to and
 * never rewritten (runner/core/session.c).  A backend whose process holds
 * a command's tree appends "proc PID START" (/proc starttime) there. */
#define VG_SESSION_JOB_FILE	"job"

/* True when ops has sessions. */
int	vg_backend_has_sessions(const struct vg_backend_ops *ops);
int	vg_backend_session_open(const struct vg_backend_ops *ops,
	    struct vg_session *s, struct vg_err *e);
int	vg_backend_session_exec(const struct vg_backend_ops *ops,
	    const struct vg_session *s, const struct vg_session_cmd *c,
	    struct vg_result *r, struct vg_err *e);
int	vg_backend_session_close(const struct vg_backend_ops *ops,
	    const struct vg_session *s, struct vg_err *e);

/*
 * The argv that runs c in a sandbox whose session directory is root
 * (["/bin/sh", "-c", WRAPPER, "vigil-session", COMMAND]; a root of
 * "~/x" is $HOME/x where the command runs): the wrapper
 * records its pid in root/cmds/JOB/pid (not with c->tree_held),
 * sources root/env (`export -p` of the previous command, its directory
 * as __VG_CWD) and enters that directory (else root/work, made when
 * missing), reads stdin from
 * stdin_in (a path in the sandbox; NULL: /dev/null), evals the command in
 * the same shell, and (c->save) writes env again on exit through a
 * temporary file and a rename (and root/cwd, a plain copy of the
 * directory), keeping the command's exit status.  Variables named
 * in keep (NULL-terminated, may be NULL) keep the value this command was
 * started with (per-command ones: TMPDIR).  With c->commit_here the
 * state goes to root/cmds/JOB/env instead, ended by a line of its own
 * (": vigil-saved"), for vg_session_commit.  Caller releases out.
 */
void	vg_session_script(const char *root, const struct vg_session_cmd *c,
	    const char *stdin_in, const char *const *keep,
	    struct vg_strv *out);

/*
 * For c->commit_here: once job c of s ended, renames the state its
 * shell saved (c->dir/env, when it ends with the wrapper's last line)
 * over s->dir/env, the state the next command starts from.  A command
 * that timed out, was stopped or never reached the save leaves the
 * session's state as it was.  0, or VG_EIO with e set when the rename
 * fails.
 */
int	vg_session_commit(const struct vg_session *s,
	    const struct vg_session_cmd *c, const struct vg_result *r,
	    struct vg_err *e);

/*
 * A shell command that kills the process tree whose top's pid is in
 * root/cmds/JOB/pid with signal sig (descendants found through
 * /proc/PID/status), for sandboxes where vigil has no handle on the
 * command's processes (containers, remote hosts, cloud sandboxes).
 * Caller frees.
 */
char	*vg_session_kill_script(const char *root, const char *job, int sig);

/* A shell script that kills (SIGKILL) the tree of every job of the
 * session at root_word (one shell word: quoted, or "$d"), for closing
 * it.  Caller frees. */
char	*vg_session_close_script(const char *root_word);

/*
 * Copies what a backend wrote to fd (opened on c->dir's stdout or
 * stderr, the whole copy) onward to c->out: writes p to fd and passes
 * it on.  0, or VG_EIO with e set when the whole copy cannot be written.
 */
int	vg_session_output(const struct vg_session_cmd *c, int fd, int stream,
	    const char *p, size_t n, struct vg_err *e);

/*
 * Outputs a remote backend left on the remote side (links, special files,
 * files past outputs.max_files or max_bytes): one "WHY<TAB>PATH" line
 * each in this file of the task directory, which the collection
 * (runner/core/outputs.c) lists as skipped, from "remote".
 */
#define VG_OUTPUTS_LEFT		"outputs.left"

/* True when e is a backend's refusal of host access the policy does not
 * allow (VG_EDENIED, "host access refused: ..."): the task ends DENIED,
 * as the gate's refusals do; other VG_EDENIED (a token refused, a file a
 * task planted) are the backend's errors. */
int	vg_backend_refused_host_access(const struct vg_err *e);

#endif
