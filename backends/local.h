/*
 * local.h - what the local backend offers beyond its ops (backend.h):
 * the isolation downgrades of a manifest on this host, for the run's
 * events, `vigil status` and `vigil doctor`; and its process start, for
 * backends that run a program of their own on this host (apptainer) and
 * want the same tree kill, output files, limits and exec-failure
 * reporting as a local task.
 */
#ifndef VG_LOCAL_H
#define VG_LOCAL_H

#include <stddef.h>

#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "common/state.h"

struct vg_attempt;
struct vg_egress_run;

/*
 * Returns "" when m's isolation level is delivered in full here, else a
 * "; "-separated list of what is missing and what runs instead.  The
 * string is borrowed and valid until the next call.  NULL with e set when
 * the level is refused (isolation.required) or cannot be built.
 */
const char *vg_local_downgrades(const struct vg_manifest *m, struct vg_err *e);

/* Called by a process that runs a session's commands before any: their
 * working directory is the manifest's workdir or none of vigil's. */
void	vg_local_for_session(void);

/*
 * Path of vigil-shim, the first process of every task (shim.h): next to
 * this executable, else in the libexec directory `make install` uses.
 * NULL when neither exists; tried (size bytes, may be NULL) then names
 * both places.  Borrowed; looked up once (until vg_local_reset).
 */
const char *vg_local_shim(char *tried, size_t size);

/* The egress proxy a session command's tasks join (a session's,
 * attached by local-session.c around the one command this process runs
 * outside any drive); borrowed.  A run's proxy is its drive's. */
struct vg_egress_run *vg_local_egress(void);

/* Drops what the local backend keeps outside any drive: the sandbox the
 * drive-less ops compiled last and the shim's path (tests, valgrind).
 * A drive's state goes with its handle (vg_backend_unprepare). */
void	vg_local_reset(void);

/* One started process tree (opaque); see vg_local_proc_start. */
struct vg_local_proc;

/* How vg_local_proc_start confines the tree. */
enum vg_local_confine {
	/* The manifest's isolation section, exactly as a local task. */
	VG_LOCAL_ISOLATION = 0,
	/*
	 * Only what the whole-tree kill needs: the shim is the init of a
	 * new PID namespace when that needs no user namespace (root), else
	 * a child subreaper.  No user, network or mount namespace, no
	 * private /tmp, no no_new_privs, Landlock or seccomp: for a
	 * program that builds its own sandbox (apptainer mounts, pivots and
	 * may run a setuid starter, all of which those would refuse).
	 */
	VG_LOCAL_TREE_ONLY,
};

/*
 * The network of a tree started with VG_LOCAL_TREE_ONLY (a program that
 * builds its own sandbox, which keeps the network it was started in):
 * none (a namespace of its own with only loopback up) or the namespace
 * of an egress proxy, whose variables (vg_egress_run_env) the caller
 * passes on and whose records name the attempt (a cgroup of its own).
 * Both need root; NULL or zeros: the host's.
 */
struct vg_egress_run;
struct vg_local_net {
	int			 none;
	struct vg_egress_run	*egress;	/* borrowed; NULL: none */
};

/*
 * Starts argv for attempt a as a local task would start: under vigil-shim,
 * stdin from /dev/null, stdout and stderr appended to the task
 * directory's files, the manifest's limits applied, in the task
 * directory's confinement chosen by how (cwd: manifest workdir with
 * VG_LOCAL_ISOLATION, inherited otherwise).  argv[0] is a path or a name
 * looked up in the PATH of the environment; envp (NULL-terminated, NULL =
 * the attempt's clean environment, vg_attempt_env) is passed as is.
 * Sets a->pid, a->pidfd, a->pid_start and a->started; *out (caller
 * releases with vg_local_proc_free) is the state the other calls need.
 * Does not wait; an exec failure is reported by vg_local_proc_finish.
 */
int	vg_local_proc_start(struct vg_attempt *a, char *const argv[],
	    char *const envp[], enum vg_local_confine how,
	    struct vg_local_proc **out, struct vg_err *e);
/* As vg_local_proc_start, a VG_LOCAL_TREE_ONLY tree in net's network
 * (NULL: the host's). */
int	vg_local_proc_start_net(struct vg_attempt *a, char *const argv[],
	    char *const envp[], const struct vg_local_net *net,
	    struct vg_local_proc **out, struct vg_err *e);

/*
 * After a->pid exited with wstatus (the caller reaped it): fills r as the
 * local backend does.  *task_ws (may be NULL) receives the wait status
 * of the program itself, or -1 when it never ran (exec or setup failure,
 * described in r).  Never blocks.
 */
int	vg_local_proc_finish(struct vg_attempt *a, struct vg_local_proc *lp,
	    int wstatus, struct vg_result *r, int *task_ws);

/* Like kill(2) on the whole tree; SIGKILL ends it even when the program
 * ignores everything.  Never blocks. */
int	vg_local_proc_signal(struct vg_attempt *a, struct vg_local_proc *lp,
	    int sig, struct vg_err *e);

/*
 * Waits for a->pid and reaps it into *ws, honouring a->timeout (SIGTERM,
 * then SIGKILL after a->kill_grace) and SIGTERM, SIGINT or SIGHUP to this
 * process (same escalation; a second signal forces).  *why is 0,
 * VG_ST_TIMEOUT or VG_ST_CANCELLED.  Blocks.
 */
int	vg_local_proc_wait(struct vg_attempt *a, struct vg_local_proc *lp,
	    int *ws, int *why, struct vg_err *e);

/* Frees lp and removes what start made (the private TMPDIR); NULL is
 * fine.  Does not close a->pidfd. */
void	vg_local_proc_free(struct vg_local_proc *lp);

/* Sessions of the local backend (local-session.c; backend.h, the
 * session ops). */
struct vg_session;
struct vg_session_cmd;
int	vg_local_session_open(struct vg_session *s, struct vg_err *e);
int	vg_local_session_exec(const struct vg_session *s,
	    const struct vg_session_cmd *c, struct vg_result *r,
	    struct vg_err *e);
int	vg_local_session_close(const struct vg_session *s, struct vg_err *e);

/*
 * Runs argv for session command c as vg_local_proc_start starts it (how,
 * envp), a->task_dir = c->dir: its stdout and stderr are pipes whose
 * bytes go to c->dir's stdout and stderr (made at the first byte) and
 * to c->out while it runs; honours c->timeout and *c->stop
 * (kill_tree(arg, sig) first when not NULL, for processes outside the
 * local tree, then the tree itself; SIGTERM, SIGKILL after
 * c->kill_grace) and fills r.  The shim's pid is appended to the job's
 * record (a "proc" line) for vg_local_session_close.
 */
int	vg_local_session_run(struct vg_attempt *a, char *const argv[],
	    char *const envp[], enum vg_local_confine how,
	    const struct vg_session_cmd *c,
	    void (*kill_tree)(void *arg, int sig), void *arg,
	    struct vg_result *r, struct vg_err *e);

/*
 * The loop of vg_local_session_run for any process of this host: waits
 * for pidfd while following c->dir's stdout and stderr to c->out, and
 * calls signal(arg, SIGTERM), later SIGKILL, at c->timeout (from
 * started) or *c->stop; *why is then VG_ST_TIMEOUT or VG_ST_CANCELLED
 * and *sig the last signal.  Does not reap.
 */
int	vg_local_session_follow(int pidfd, const struct vg_session_cmd *c,
	    double started, void (*signal)(void *arg, int sig), void *arg,
	    int *why, int *sig, struct vg_err *e);

/* Makes r TIMEOUT or CANCELLED after vg_local_session_follow said so. */
void	vg_local_session_settle(struct vg_result *r, int why, int sig);

#endif
