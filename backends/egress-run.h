/*
 * egress-run.h - the egress proxy of a run (or a session) for local tasks
 * (docs/egress.md).
 *
 * vg_egress_run_start makes a network namespace with only loopback up,
 * creates the proxy's listening socket on 127.0.0.1 INSIDE it, and
 * starts a process in the host's namespace that serves that socket
 * (backends/egress-proxy.h): its connections out are made from the
 * host's network, and a task that joins the namespace
 * (vg_sandbox_set_egress) has no other way out.  Needs root (making a
 * network namespace a task of another uid can join).
 */
#ifndef VG_EGRESS_RUN_H
#define VG_EGRESS_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"

/*
 * Records: the proxy writes one JSON line per connection into a pipe
 * whose other end only vigil holds (a task cannot reach it, unlike a
 * file of the run directory); a thread of vigil reads it, checks every
 * field (the proxy parses what tasks send: its lines are read as
 * hostile), names the task from the cgroup id the kernel gave the proxy
 * (vg_egress_run_task), appends the record to RUN/egress.jsonl for
 * people to read, and queues it for vg_egress_take, which the driver
 * calls to put them in the run's events and the audit log
 * (runner/core/egress-log.h).
 */
struct vg_egress_event {
	double		 time;		/* when vigil read it: the end */
	int		 task;		/* index, or -1: no task known */
	int		 attempt;	/* of task; 0 when none */
	char		 proto[16];	/* socks5, connect, http */
	char		 host[256];	/* as the task named it */
	unsigned	 port;
	char		 addr[64];	/* connected to, "" when none */
	int		 allowed;
	char		 rule[320];	/* the pattern that decided, or why */
	char		 error[128];	/* allowed but failed: why; "" */
	uint64_t	 up;		/* bytes task -> host */
	uint64_t	 down;		/* bytes host -> task */
	uint64_t	 cgroup;	/* the client's cgroup id; 0: none */
};

/* Parses one line the proxy wrote (without its newline) into *ev (time,
 * task and attempt left as they are): 0, or -1 when it is not a record
 * (not JSON, a field missing, of the wrong type or out of range).
 * Strings are kept printable. */
int	vg_egress_event_parse(const char *line, size_t len,
	    struct vg_egress_event *ev);
/* Appends ev as one JSON object (no newline) to out: the proxy's fields,
 * then "task" (null when -1) and "attempt". */
void	vg_egress_event_json(const struct vg_egress_event *ev,
	    struct vg_buf *out);

struct vg_egress_reader;

struct vg_egress_run {
	pid_t		 pid;		/* the proxy, or 0 */
	int		 nsfd;		/* the namespace, or -1 */
	unsigned	 port;		/* the proxy's, on 127.0.0.1 there */
	char		*run_dir;	/* its log: RUN/egress.jsonl */
	struct vg_egress_reader *rd;	/* the reading thread, or NULL */
	int		 ownfd;		/* a session's log, for owner lines
					   (vg_egress_run_task), or -1 */
	int		 job;		/* a session's job, in owner lines */
	int		 ctrw;		/* containers' owner lines, or -1 */
};

#define VG_EGRESS_RUN_INIT	{ 0, -1, 0, NULL, NULL, -1, 0, -1 }

/* Starts the proxy for nc's rules, logging to run_dir/egress.jsonl;
 * 0, or an error in e (not root, bad rules, a namespace refused). */
int	vg_egress_run_start(const struct vg_net_conf *nc, const char *run_dir,
	    struct vg_egress_run *r, struct vg_err *e);
/* Stops the proxy (SIGTERM, then waits), reads the records it left,
 * closes the namespace and says in a warning how many connections the
 * proxy refused, if any.  Blocks until the proxy is gone. */
void	vg_egress_run_stop(struct vg_egress_run *r);

/* Says that the sockets of cgroup cgid (its cgroup v2 id, the inode
 * number of its directory) are attempt attempt of task index: the
 * records of their connections name that task.  For a session's proxy
 * (ownfd), an owner line ({"owner":CGID,"job":J}) is appended to
 * its log instead. */
void	vg_egress_run_task(struct vg_egress_run *r, uint64_t cgid, int index,
	    int attempt);

/*
 * Says that the container of an engine whose id is id (64 hex digits)
 * runs attempt attempt of task index, before it starts: the records of
 * connections from its cgroup (whose path holds the id) name that task.
 * Callable from a process forked from the one that started r (a
 * backend's monitor): the line goes through a pipe to r's reader, which
 * takes it before any record that follows it.
 */
void	vg_egress_run_container(const struct vg_egress_run *r, const char *id,
	    int index, int attempt);

/* Takes the records read so far from every proxy of this process,
 * oldest first: *v (caller frees) gets *n of them; *dropped (may be
 * NULL) how many were dropped since the last call because nobody took
 * them (more than VG_EGRESS_QUEUE_MAX waiting).  Never blocks on the
 * proxy. */
#define VG_EGRESS_QUEUE_MAX	100000
void	vg_egress_take(struct vg_egress_event **v, size_t *n,
	    size_t *dropped);

/* Calls set for each variable that points tasks at r: HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY (socks5h: names resolved by the proxy), their
 * lower-case forms and NO_PROXY (loopback stays direct). */
void	vg_egress_run_env(const struct vg_egress_run *r,
	    void (*set)(void *arg, const char *name, const char *value),
	    void *arg);

/*
 * Sessions (local-session.c): the proxy lives as long as the session,
 * outliving the vigil that opened it, and every `vigil exec` joins it.
 * vg_egress_session_start starts it detached (a session of its own, no
 * parent-death signal) with its records appended straight to log_path
 * (a file of vigil's next to the session directory, which commands
 * cannot write), and writes state_path: "PID START PORT NSFD", NSFD the
 * number of the descriptor of the namespace the proxy keeps open.
 * vg_egress_session_attach fills r from state_path (the proxy checked
 * to be that process of vigil's program; the namespace opened through
 * /proc/PID/fd/NSFD) with ownfd on log_path; release it with
 * vg_egress_run_detach.  vg_egress_session_stop stops the proxy
 * (SIGTERM: it logs what is still open) and removes state_path.
 */
int	vg_egress_session_start(const struct vg_net_conf *nc,
	    const char *state_path, const char *log_path, struct vg_err *e);
int	vg_egress_session_attach(const char *state_path, const char *log_path,
	    struct vg_egress_run *r, struct vg_err *e);
void	vg_egress_run_detach(struct vg_egress_run *r);
void	vg_egress_session_stop(const char *state_path);

#endif
