/*
 * session.h - agent sessions: a sandbox kept between commands, its
 * record in the state database, its commands (jobs) in the session
 * directory, and its lifetime (idle timeout, max age) kept by a small
 * detached keeper process and checked again by every call and by
 * `vigil gc` (docs/sessions.md).
 *
 * Session directory ($VIGIL_HOME/sessions/<id>/ on this host):
 *   work/              the first working directory (local, docker,
 *                      apptainer: the same path in the sandbox)
 *   env, cwd           the shell state the last foreground command left
 *                      (backends/session.c), where the sandbox sees them
 *   cmds/<job>/        one per command: command, kind (fg|bg), runner
 *                      (pid and start time of the vigil running it),
 *                      stdin, stdout, stderr (whole), result.json
 */
#ifndef VG_SESSION_H
#define VG_SESSION_H

#include "backends/backend.h"
#include "runner/core/store.h"

/* An open session: its record, manifest, backend and what ops get. */
struct vg_sess {
	struct vg_session_rec		 rec;
	struct vg_manifest		*m;
	const struct vg_backend_ops	*ops;
	struct vg_session		 s;
};

/* What `vigil session start` asks for. */
struct vg_sess_opts {
	const char	*name;		/* NULL: none */
	double		 idle_timeout;	/* seconds; 0 = none */
	double		 max_age;	/* seconds; 0 = none */
	const char	*mode;		/* policy mode name */
	const char	*policy;	/* policy file, NULL = the site's */
};

/*
 * Records a new session for manifest m (taken over by out on success:
 * out->m) under home, then opens its sandbox.  The record exists before
 * the sandbox (state starting, owned by this process), so `vigil gc`
 * finds a sandbox whose start was killed half way.  On a failure of the
 * backend the session is recorded as failed and everything made is
 * removed.
 */
int	vg_sess_create(struct vg_store *st, const char *home,
	    struct vg_manifest *m, const struct vg_sess_opts *o,
	    struct vg_sess *out, struct vg_err *e);

/* Loads session key (id, prefix or name) with its manifest. */
int	vg_sess_load(struct vg_store *st, const char *key, struct vg_sess *out,
	    struct vg_err *e);
void	vg_sess_release(struct vg_sess *ss);

/* Records who keeps the session now (this process) and makes it
 * active. */
int	vg_sess_own(struct vg_store *st, struct vg_sess *ss, struct vg_err *e);

/*
 * Why session ss is over now ("idle for 30s", "older than 1h"), or NULL
 * while it may go on.  A session with a command running is never idle.
 */
const char *vg_sess_expired(const struct vg_sess *ss, double now,
	    char *buf, size_t size);

/*
 * Ends session ss as state to ("stopped", "expired") with reason: moves
 * it to closing (only one caller wins; the others return 0 at once),
 * stops its background jobs and its keeper, closes the sandbox and
 * records the end.  A backend failure leaves it closing with the reason,
 * for `vigil gc` to try again.
 */
int	vg_sess_close(struct vg_store *st, struct vg_sess *ss, const char *to,
	    const char *reason, struct vg_err *e);

/*
 * Checks that ss may run a command now: open, not expired (an expired
 * one is closed here, the keeper's work done by the caller when the
 * keeper is gone).  VG_ENOENT with e set when it is over.
 */
int	vg_sess_check(struct vg_store *st, struct vg_sess *ss, struct vg_err *e);

/*
 * The keeper's loop (in a detached process that owns the session):
 * sleeps until the next deadline, closes the session when it is over,
 * returns when the session ended or on SIGTERM.
 */
int	vg_sess_keep(struct vg_store *st, const char *id, struct vg_err *e);

/* One command of a session, as its directory tells. */
struct vg_sess_job {
	int		 job;
	int		 background;
	char		 state[16];	/* running, exited, killed, timeout,
					   lost, failed */
	int		 exit_code;	/* -1 while running or when killed */
	int		 signal;
	double		 started;
	double		 ended;		/* 0 while running */
	char		 command[256];	/* first line, shortened */
	char		 dir[1200];
};

/*
 * Starts job bookkeeping for command: takes the next job number, makes
 * cmds/<job>/ with its record (kind, command) and stdin (stdin_data, may
 * be NULL), and fills *job.  vg_sess_job_number and vg_sess_job_make
 * are its two halves, for a caller that takes the number inside a
 * transaction of its own (vigil exec: with the audit row).
 */
int	vg_sess_job_new(struct vg_store *st, struct vg_sess *ss,
	    const char *command, int background, const char *stdin_data,
	    size_t stdin_len, struct vg_sess_job *job, struct vg_err *e);
/* Takes ss's next job number into *n and touches ss (no transaction of
 * its own). */
int	vg_sess_job_number(struct vg_store *st, const struct vg_sess *ss,
	    int *n, struct vg_err *e);
/* Makes job n's directory, record and stdin (see vg_sess_job_new). */
int	vg_sess_job_make(const struct vg_sess *ss, int n, const char *command,
	    int background, const char *stdin_data, size_t stdin_len,
	    struct vg_sess_job *job, struct vg_err *e);

/* Records this process as the runner of the job in dir (appends to its
 * record); before vg_sess_job_run. */
int	vg_sess_job_runner(const char *dir, struct vg_err *e);

/*
 * Runs job c in the session (this process is its runner, recorded with
 * vg_sess_job_runner): calls the backend, writes result.json, touches
 * last_used again when the session has an idle timeout and the command
 * ran for at least a hundredth of it.
 */
int	vg_sess_job_run(struct vg_store *st, struct vg_sess *ss,
	    struct vg_session_cmd *c, struct vg_result *r, struct vg_err *e);

/* What a job's record (cmds/<job>/job: lines "KEY VALUE", see
 * session.c) says. */
struct vg_sess_jobrec {
	int			 background;
	int			 has_runner;
	long			 runner;	/* pid */
	unsigned long long	 runner_start;	/* /proc starttime */
	double			 started;
	char			 command[256];	/* first line */
	int			 has_result;
	struct vg_result	 result;
};

/* Parses len bytes of a job record (written by the command's sandbox
 * too: any bytes); lines it does not know are skipped. */
void	vg_sess_jobrec_parse(const char *text, size_t len,
	    struct vg_sess_jobrec *jr);

/* Reads job number job of ss; VG_ENOENT when there is none. */
int	vg_sess_job_get(const struct vg_sess *ss, int job,
	    struct vg_sess_job *out, struct vg_err *e);

/* Calls cb for each job of ss in number order. */
int	vg_sess_jobs(const struct vg_sess *ss,
	    int (*cb)(void *arg, const struct vg_sess_job *j), void *arg,
	    struct vg_err *e);

/* Stops a running job (its runner kills the command's tree); 0 when
 * it had already ended. */
int	vg_sess_job_kill(const struct vg_sess *ss, int job, struct vg_err *e);

/*
 * Input after the start (`vigil exec --background --open-stdin`): the
 * job's stdin in its directory is a FIFO (vg_sess_stdin_make, before the
 * runner starts), held open for writing by a holder process the runner
 * forks (vg_sess_stdin_hold) so that the command sees the end of its
 * input only when asked: vg_sess_job_input writes to it and, with
 * close, leaves the marker "stdin.closed" at which the holder lets go.
 * Every path is opened beneath the session directory (its commands
 * write there): a link, or anything but a FIFO of vigil's user at
 * "stdin", is refused.
 */
int	vg_sess_stdin_make(const char *dir, struct vg_err *e);
/* Forks the holder of dir's FIFO; its pid, or a negative vg_rc.  It ends
 * at the marker, or when the process that forked it is gone; end it
 * with vg_sess_stdin_release once the command ended. */
pid_t	vg_sess_stdin_hold(const char *dir, struct vg_err *e);
void	vg_sess_stdin_release(pid_t holder);
/* Writes the n bytes at p to running job's input (waiting at most
 * timeout_ms for the command to take them), then with close ends it.
 * VG_ENOENT: no such job; VG_EINVAL: the job ended or its input is not
 * open; VG_ETIMEOUT: the command does not read. */
int	vg_sess_job_input(const struct vg_sess *ss, int job, const void *p,
	    size_t n, int close_it, int timeout_ms, struct vg_err *e);

/*
 * vigil gc's part: closes open sessions whose keeper is gone or whose
 * time is up, and removes ended sessions (directory and record) that
 * ended before cutoff.  Appends one line per action to report.
 */
int	vg_sess_gc(struct vg_store *st, double cutoff, int dry,
	    struct vg_buf *report, struct vg_err *e);

#endif
