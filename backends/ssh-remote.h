/*
 * ssh-remote.h - the pure pieces of the ssh backend: the shell text that
 * runs on the remote host (launcher, task wrapper, kill, cleanup), remote
 * paths, the status record, proxy_jump specs, host key verdicts and the
 * byte offsets that let output resume after a dropped connection.
 *
 * Nothing here talks to the network; backends/ssh.c does, with libssh.
 * Every value that reaches a remote shell is quoted here, so this is the
 * one place to audit for injection.  The env file and run.sh are written
 * over SFTP (so no command line carries the environment); one exec
 * request starts run.sh.
 *
 * Remote layout of one attempt, <remote_dir>/<run>/<task>/<attempt>/:
 *   env      0600, "export NAME='value'" lines, sourced by the task
 *   run.sh   the wrapper (below)
 *   pid      the wrapper's pid (its own session and process group)
 *   tpid     the task's pid = its process group (a session of its own)
 *   out err  the task's stdout and stderr
 *   usage    the task tree's accounting, complete before status is
 *            written: "vigil-maxrss KIB" from /usr/bin/time -f %M when
 *            the host has a time(1) that takes -f and -o, then the two
 *            lines of the wrapper's `times` (its own CPU, then that of
 *            the children it reaped: the task tree)
 *   status   the task's exit status as the shell reports it ("N\n"),
 *            written with one write(2) after the task has ended
 *   timedout present when the remote watchdog or vigil hit the deadline
 */
#ifndef VG_SSH_REMOTE_H
#define VG_SSH_REMOTE_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"

/* What the launcher needs to start one attempt. */
struct vg_ssh_launch {
	const char		*dir;		/* attempt dir; may start ~/ */
	const struct vg_strv	*argv;		/* the task command */
	const char		*workdir;	/* NULL: the attempt dir */
	double			 timeout;	/* seconds; 0 = none */
	double			 grace;		/* SIGTERM -> SIGKILL */
};

/*
 * Appends path as one shell word: a leading "~/" (or a lone "~") becomes
 * "$HOME"/..., everything else is single-quoted.
 */
void	vg_ssh_path_word(struct vg_buf *b, const char *path);

/*
 * The path of an attempt's directory: remote_dir/run/index/attempt, with
 * every byte of run_id outside [A-Za-z0-9._-] replaced by '_' (and a run
 * id of "." or ".." made safe).  Caller frees.
 */
char	*vg_ssh_attempt_dir(const char *remote_dir, const char *run_id,
	    int index, int attempt);

/* The path as the SFTP server takes it: "~/x" -> "x", "~" -> ".".
 * Caller frees. */
char	*vg_ssh_sftp_path(const char *path);

/* True when name is a shell variable name, [A-Za-z_][A-Za-z0-9_]*. */
int	vg_ssh_env_name_ok(const char *name, size_t len);

/*
 * Appends run.sh.  Run as `/bin/sh DIR/run.sh` it starts itself as
 * `run.sh wrap` in a new session, detached (setsid, all three standard
 * streams redirected), and prints "vigil-started PID".  The wrapper runs
 * the task in a session of its own (pid in tpid) with env sourced, in
 * workdir, stdout and stderr to out and err; a watchdog kills the task's
 * group at the timeout (SIGTERM, SIGKILL after grace); the exit status
 * goes to status.
 */
void	vg_ssh_wrapper_script(const struct vg_ssh_launch *l, struct vg_buf *out);

/*
 * Appends the env file: one "export NAME='value'" line per entry, then
 * VIGIL_TASK_DIR (the attempt dir).  VG_EINVAL (nothing appended) when an
 * entry has no '=' or a name that is not a shell variable name.
 */
int	vg_ssh_env_file(const struct vg_strv *env, struct vg_buf *out,
	    struct vg_err *e);

/* Appends the command of the exec request that starts run.sh; the
 * user's login shell parses it (sh, bash, zsh and csh alike). */
void	vg_ssh_start_command(const char *dir, struct vg_buf *out);

/*
 * Appends a script that signals the task's process group with SIGTERM and
 * leaves a detached helper that sends SIGKILL grace seconds later, so the
 * escalation completes even if vigil is gone.  timed_out also leaves the
 * timedout marker.  Does nothing once the status is written.
 */
void	vg_ssh_kill_script(const char *dir, double grace, int timed_out,
	    struct vg_buf *out);

/*
 * Appends a script that removes what is left of run_id's attempts under
 * remote_dir (of task `task` only when >= 0): for each attempt dir
 * without a status, SIGKILL to the wrapper's and the task's process
 * groups (pid, tpid); then the attempt dir goes, and the task and run
 * dirs when empty.  Prints "removed DIR" per attempt dir (relative to the
 * run dir: TASK/ATTEMPT), and "killed DIR" before it for one that was
 * still running.
 */
void	vg_ssh_reap_script(const char *remote_dir, const char *run_id,
	    int task, struct vg_buf *out);

/* Parses a status record ("N\n", 0..255); returns 0, or -1 when it
 * is malformed or not complete yet (no newline). */
int	vg_ssh_status_parse(const char *text, size_t len, int *code);

/*
 * Reads a usage file into u: CPU time (user, system; seconds) from the
 * children's line of `times` ("MmS.FFFs MmS.FFFs"), the peak RSS from
 * "vigil-maxrss KIB"; other lines (time's "Command exited with ...")
 * are skipped.  Sets the known bits of what it found; -1 when nothing.
 */
int	vg_ssh_usage_parse(const char *text, size_t len, struct vg_usage *u);

/* A parsed proxy_jump: [user@]host[:port] (host may be [v6addr]). */
struct vg_ssh_jump {
	char	*user;		/* NULL: same user as the target */
	char	*host;
	int	 port;		/* 22 when absent */
};

int	vg_ssh_jump_parse(const char *spec, struct vg_ssh_jump *j,
	    struct vg_err *e);
void	vg_ssh_jump_release(struct vg_ssh_jump *j);

/* What to do with a host key, from libssh's known_hosts state. */
enum vg_ssh_hk {
	VG_SSH_HK_OK = 0,	/* known and matching */
	VG_SSH_HK_ADD,		/* unknown; accept-new: add it */
	VG_SSH_HK_REFUSE,	/* changed, other type, or unknown and strict */
};

/* libssh-independent copy of enum ssh_known_hosts_e. */
enum vg_ssh_known {
	VG_SSH_KNOWN_OK = 0,
	VG_SSH_KNOWN_CHANGED,
	VG_SSH_KNOWN_OTHER,	/* only keys of other types are known */
	VG_SSH_KNOWN_UNKNOWN,	/* no entry for the host */
	VG_SSH_KNOWN_NOFILE,	/* no known_hosts file */
	VG_SSH_KNOWN_ERROR,
};

/*
 * Decides about a host key and, for REFUSE, writes the message into e
 * (VG_EDENIED; VG_EBACKEND for ERROR): it names the host (as known_hosts
 * spells it, [host]:port off port 22), the key type, its SHA256
 * fingerprint, the known_hosts file and what to do.
 */
enum vg_ssh_hk vg_ssh_hostkey_verdict(enum vg_ssh_known st, int accept_new,
	    const char *host, int port, const char *keytype,
	    const char *fingerprint, const char *known_hosts,
	    struct vg_err *e);

/* "host" on port 22, "[host]:port" otherwise (known_hosts spelling). */
void	vg_ssh_host_name(char *out, size_t size, const char *host, int port);

/*
 * Offset bookkeeping: the offset to resume a stream from is the size of
 * the local file it is copied into, so a reconnect neither drops nor
 * repeats bytes whatever was in flight.  Returns 0 or VG_EIO.
 */
int	vg_ssh_resume_offset(int fd, uint64_t *off, struct vg_err *e);

/* Writes all of buf to fd (retrying short writes and EINTR); 0 or VG_EIO. */
int	vg_ssh_write_all(int fd, const void *buf, size_t len,
	    struct vg_err *e);

#endif
