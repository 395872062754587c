/*
 * egress-run.c - a run's egress proxy in a network namespace of its own
 * (backends/egress-run.h).
 *
 * The namespace is made by a short-lived child: unshare(CLONE_NEWNET),
 * loopback up, a socket bound to 127.0.0.1 there, then the socket and a
 * descriptor of the namespace handed to the parent over a socketpair.  A
 * socket keeps the namespace it was made in, so the proxy process,
 * which stays in the host's namespace, accepts the tasks' connections
 * in theirs and makes its own connections out from the host's.  The
 * child makes a sock_diag socket there too, with which the proxy asks
 * the kernel whose each connection is (backends/egress-peer.h).
 *
 * The proxy's records come back through a pipe to a thread of vigil
 * (the reader), which checks them, names their tasks and queues them
 * for the driver (vg_egress_take).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "backends/egress-peer.h"
#include "backends/egress-proxy.h"
#include "backends/egress-run.h"
#include "backends/sandbox.h"
#include "common/beneath.h"
#include "common/buf.h"
#include "common/egress-match.h"
#include "common/json.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"

/* Fds the namespace maker hands over: listening socket, namespace,
 * sock_diag socket. */
#define NS_FDS	3
/* The longest line the reader takes from the proxy (a record is under
 * 1 KiB: a host of 255 bytes escaped at most 6 times). */
#define RECORD_MAX	4096

/* Passes fds[0..NS_FDS-1] over the socket s. */
static int
send_fds(int s, const int fds[NS_FDS])
{
	char data = 'e', cbuf[CMSG_SPACE(NS_FDS * sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg;
	struct cmsghdr *cm;

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(NS_FDS * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, NS_FDS * sizeof(int));
	return sendmsg(s, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Receives NS_FDS fds from s into fds; 0 or -1. */
static int
recv_fds(int s, int fds[NS_FDS])
{
	char data, cbuf[CMSG_SPACE(NS_FDS * sizeof(int))];
	struct iovec iov = { &data, 1 };
	struct msghdr msg;
	struct cmsghdr *cm;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm == NULL || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(NS_FDS * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(cm), NS_FDS * sizeof(int));
	return 0;
}

/* The namespace maker (child): never returns. */
static void
make_namespace(int s)
{
	struct sockaddr_in sa;
	int fds[NS_FDS], one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (unshare(CLONE_NEWNET) != 0 || vg_loopback_up() != 0)
		_exit(1);
	if ((fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fds[0], SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 ||
	    bind(fds[0], (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fds[0], 256) != 0)
		_exit(2);
	if ((fds[1] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		_exit(3);
	if ((fds[2] = vg_egress_peer_open()) < 0)
		_exit(5);
	_exit(send_fds(s, fds) == 0 ? 0 : 4);
}

/* Makes the namespace: *lfd the listening socket in it, *nsfd it,
 * *diagfd a sock_diag socket in it. */
static int
namespace_socket(int *lfd, int *nsfd, int *diagfd, struct vg_err *e)
{
	int sv[2], fds[NS_FDS] = { -1, -1, -1 }, st, got;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return vg_err_errno(e, "egress proxy: socketpair");
	if ((pid = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return vg_err_errno(e, "egress proxy: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		make_namespace(sv[1]);
	}
	close(sv[1]);
	got = recv_fds(sv[0], fds);
	close(sv[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got != 0)
		return vg_err_set(e, VG_EUNSUPPORTED, "egress proxy: cannot "
		    "make its network namespace (step %d: %s)",
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFEXITED(st) &&
		    WEXITSTATUS(st) == 1 ? "unshare or loopback refused" :
		    "socket");
	*lfd = fds[0];
	*nsfd = fds[1];
	*diagfd = fds[2];
	return 0;
}

/*
 * The proxy parses what tasks send: it keeps nothing of vigil's but its
 * three descriptors (the state database, the run's files are closed) and,
 * started by root, becomes nobody (65534) with no capability and no
 * way back (no_new_privs).  0 or -1.
 */
static int
shed(int lfd, int diagfd, int logfd, int keep)
{
	long fd, max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != lfd && fd != logfd && fd != diagfd && fd != keep)
			(void)close((int)fd);
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 ||
	    setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0))
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -1;
}

/* ---- records ---- */

/* Copies the string member key of o into dst, non-printable bytes as
 * '?'; 0, or -1 when it is missing, not a string or longer than dst. */
static int
get_str(const struct vg_json_value *o, const char *key, char *dst,
    size_t len, int empty_ok)
{
	const struct vg_json_value *v = vg_json_get(o, key);
	size_t i;

	if (v == NULL || v->type != VG_JSON_STRING || v->len >= len ||
	    (!empty_ok && v->len == 0))
		return -1;
	for (i = 0; i < v->len; i++)
		dst[i] = v->str[i] >= 0x20 && v->str[i] < 0x7f ? v->str[i] :
		    '?';
	dst[i] = '\0';
	return 0;
}

/* The whole number member key of o, from 0 to max, into *out. */
static int
get_uint(const struct vg_json_value *o, const char *key, double max,
    uint64_t *out)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL || v->type != VG_JSON_NUMBER || !isfinite(v->num) ||
	    v->num < 0 || v->num > max || v->num != floor(v->num))
		return -1;
	*out = (uint64_t)v->num;
	return 0;
}

int
vg_egress_event_parse(const char *line, size_t len,
    struct vg_egress_event *ev)
{
	static const struct vg_json_limits lim = { RECORD_MAX, 2, 32 };
	const struct vg_json_value *o, *v;
	struct vg_json_doc *doc = NULL;
	struct vg_err e;
	uint64_t port;
	int rc = -1;

	vg_err_init(&e);
	if (len > RECORD_MAX || vg_json_parse(line, len, &lim, &doc, &e) != 0)
		return -1;
	o = vg_json_root(doc);
	if (o->type != VG_JSON_OBJECT ||
	    get_str(o, "proto", ev->proto, sizeof(ev->proto), 0) != 0 ||
	    (strcmp(ev->proto, "socks5") != 0 &&
	    strcmp(ev->proto, "connect") != 0 &&
	    strcmp(ev->proto, "http") != 0) ||
	    get_str(o, "host", ev->host, sizeof(ev->host), 0) != 0 ||
	    get_str(o, "addr", ev->addr, sizeof(ev->addr), 1) != 0 ||
	    get_str(o, "rule", ev->rule, sizeof(ev->rule), 1) != 0 ||
	    get_uint(o, "port", 65535, &port) != 0 ||
	    get_uint(o, "up", 9007199254740992.0, &ev->up) != 0 ||
	    get_uint(o, "down", 9007199254740992.0, &ev->down) != 0 ||
	    get_uint(o, "cgroup", 9007199254740992.0, &ev->cgroup) != 0)
		goto out;
	ev->port = (unsigned)port;
	if ((v = vg_json_get(o, "allowed")) == NULL || v->type != VG_JSON_BOOL)
		goto out;
	ev->allowed = v->b;
	if ((v = vg_json_get(o, "error")) == NULL)
		goto out;
	if (v->type == VG_JSON_NULL)
		ev->error[0] = '\0';
	else if (get_str(o, "error", ev->error, sizeof(ev->error), 0) != 0)
		goto out;
	rc = 0;
out:
	vg_json_free(doc);
	return rc;
}

void
vg_egress_event_json(const struct vg_egress_event *ev, struct vg_buf *out)
{
	struct vg_json_writer w;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "proto");
	vg_json_str(&w, ev->proto);
	vg_json_key(&w, "host");
	vg_json_str(&w, ev->host);
	vg_json_key(&w, "port");
	vg_json_int(&w, ev->port);
	vg_json_key(&w, "addr");
	vg_json_str(&w, ev->addr);
	vg_json_key(&w, "allowed");
	vg_json_bool(&w, ev->allowed);
	vg_json_key(&w, "rule");
	vg_json_str(&w, ev->rule);
	vg_json_key(&w, "error");
	vg_json_str(&w, ev->error[0] != '\0' ? ev->error : NULL);
	vg_json_key(&w, "up");
	vg_json_int(&w, (long long)ev->up);
	vg_json_key(&w, "down");
	vg_json_int(&w, (long long)ev->down);
	vg_json_key(&w, "cgroup");
	vg_json_int(&w, (long long)ev->cgroup);
	vg_json_key(&w, "task");
	if (ev->task >= 0)
		vg_json_int(&w, ev->task);
	else
		vg_json_null(&w);
	vg_json_key(&w, "attempt");
	vg_json_int(&w, ev->attempt);
	vg_json_obj_end(&w);
}

/* The records of every proxy of this process, until taken. */
static struct {
	pthread_mutex_t		 lock;
	struct vg_egress_event	*v;
	size_t			 n, cap, dropped;
} queue = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 };

void
vg_egress_take(struct vg_egress_event **v, size_t *n, size_t *dropped)
{
	pthread_mutex_lock(&queue.lock);
	*v = queue.v;
	*n = queue.n;
	if (dropped != NULL)
		*dropped = queue.dropped;
	queue.v = NULL;
	queue.n = queue.cap = queue.dropped = 0;
	pthread_mutex_unlock(&queue.lock);
}

/* Queues ev. */
static void
queue_push(const struct vg_egress_event *ev)
{
	pthread_mutex_lock(&queue.lock);
	if (queue.n >= VG_EGRESS_QUEUE_MAX)
		queue.dropped++;
	else {
		if (queue.n == queue.cap) {
			queue.cap = queue.cap ? queue.cap * 2 : 64;
			queue.v = vg_xrealloc(queue.v, queue.cap *
			    sizeof(*queue.v));
		}
		queue.v[queue.n++] = *ev;
	}
	pthread_mutex_unlock(&queue.lock);
}

/* ---- the reader ---- */

/* A task's cgroup. */
struct owner {
	uint64_t	 cgid;
	int		 index;
	int		 attempt;
};

/* An engine's container running a task (vg_egress_run_container). */
struct container {
	char		 id[65];
	int		 index;
	int		 attempt;
};

struct vg_egress_reader {
	pthread_t	 thread;
	int		 fd;		/* the pipe's end, nonblocking */
	int		 ctrfd;		/* containers' lines, nonblocking */
	struct vg_buf	 ctrpart;	/* a line of them not yet whole */
	struct container *ctrs;		/* reader thread's only */
	size_t		 nctrs, ctrcap;
	int		 stop[2];	/* a pipe: written to stop */
	int		 logfd;		/* RUN/egress.jsonl, or -1 */
	pthread_mutex_t	 lock;		/* owners, refused, first */
	struct owner	*owners;
	size_t		 nowners, cap;
	size_t		 refused, bad;
	char		 first[300];	/* the first refused: HOST:PORT */
	struct vg_buf	 part;		/* a line not yet whole */
};

/* Adds cgid as attempt's of task index; the lock held. */
static void
owner_add(struct vg_egress_reader *rd, uint64_t cgid, int index,
    int attempt)
{
	if (rd->nowners == rd->cap) {
		rd->cap = rd->cap ? rd->cap * 2 : 16;
		rd->owners = vg_xrealloc(rd->owners, rd->cap *
		    sizeof(*rd->owners));
	}
	rd->owners[rd->nowners].cgid = cgid;
	rd->owners[rd->nowners].index = index;
	rd->owners[rd->nowners].attempt = attempt;
	rd->nowners++;
}

/* A cgroup no task named: a container's, when its path holds the id of
 * one a backend announced (vg_egress_run_container); remembered. */
static void
attribute_container(struct vg_egress_reader *rd, struct vg_egress_event *ev)
{
	char id[65];
	size_t i;

	if (rd->nctrs == 0 || vg_egress_peer_container(ev->cgroup, id) != 0)
		return;
	for (i = rd->nctrs; i-- > 0; )
		if (strcmp(rd->ctrs[i].id, id) == 0) {
			ev->task = rd->ctrs[i].index;
			ev->attempt = rd->ctrs[i].attempt;
			owner_add(rd, ev->cgroup, ev->task, ev->attempt);
			return;
		}
}

/* Sets ev's task and attempt from its cgroup: a task's, or else a
 * container's (remembered); -1 and 0 when none.  The lock held. */
static void
name_cgroup(struct vg_egress_reader *rd, struct vg_egress_event *ev)
{
	size_t i;

	ev->task = -1;
	ev->attempt = 0;
	if (ev->cgroup == 0)
		return;
	for (i = rd->nowners; i-- > 0; )
		if (rd->owners[i].cgid == ev->cgroup) {
			ev->task = rd->owners[i].index;
			ev->attempt = rd->owners[i].attempt;
			return;
		}
	attribute_container(rd, ev);
}

/* Names the task of ev from its cgroup. */
static void
attribute(struct vg_egress_reader *rd, struct vg_egress_event *ev)
{
	pthread_mutex_lock(&rd->lock);
	name_cgroup(rd, ev);
	if (!ev->allowed && rd->refused++ == 0)
		snprintf(rd->first, sizeof(rd->first), "%s:%u", ev->host,
		    ev->port);
	pthread_mutex_unlock(&rd->lock);
}

/*
 * An {"open":CGID} line: a connection from cgroup CGID was accepted.
 * A container's cgroup is named now, while the client lives (its path
 * is gone once the container ended); 1 when line is one, else 0.
 */
static int
reader_open(struct vg_egress_reader *rd, const char *line, size_t len)
{
	struct vg_egress_event ev;
	unsigned long long cg;
	char buf[48];
	int n = 0;

	if (len >= sizeof(buf) || len < 10 || memcmp(line, "{\"open\":", 8))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "{\"open\":%llu}%n", &cg, &n) != 1 ||
	    (size_t)n != len || cg == 0 || !isdigit((unsigned char)buf[8]))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.cgroup = cg;
	pthread_mutex_lock(&rd->lock);
	name_cgroup(rd, &ev);
	pthread_mutex_unlock(&rd->lock);
	return 1;
}

/* Takes one line of the proxy's. */
static void
reader_line(struct vg_egress_reader *rd, const char *line, size_t len)
{
	struct vg_egress_event ev;
	struct vg_buf b = VG_BUF_INIT;
	ssize_t n;

	if (reader_open(rd, line, len))
		return;
	memset(&ev, 0, sizeof(ev));
	if (vg_egress_event_parse(line, len, &ev) != 0) {
		rd->bad++;
		return;
	}
	ev.time = vg_now();
	attribute(rd, &ev);
	if (rd->logfd >= 0) {
		vg_egress_event_json(&ev, &b);
		vg_buf_addc(&b, '\n');
		n = write(rd->logfd, b.data, b.len);
		(void)n;
		vg_buf_release(&b);
	}
	queue_push(&ev);
}

/* Reads what the pipe has; 0 at its end or an error, else 1. */
static int
reader_read(struct vg_egress_reader *rd)
{
	char buf[16384], *nl;
	size_t off;
	ssize_t n;

	n = read(rd->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0)
		return 0;
	vg_buf_add(&rd->part, buf, (size_t)n);
	off = 0;
	while ((nl = memchr(rd->part.data + off, '\n', rd->part.len - off)) !=
	    NULL) {
		reader_line(rd, rd->part.data + off,
		    (size_t)(nl - (rd->part.data + off)));
		off = (size_t)(nl + 1 - rd->part.data);
	}
	if (off > 0) {
		memmove(rd->part.data, rd->part.data + off, rd->part.len - off);
		rd->part.len -= off;
	}
	if (rd->part.len > RECORD_MAX) {	/* no record: drop it */
		rd->bad++;
		vg_buf_reset(&rd->part);
	}
	return 1;
}

/* Parses one container line: "ID INDEX ATTEMPT". */
static void
container_line(struct vg_egress_reader *rd, const char *line, size_t len)
{
	struct container c;
	char buf[128];
	int n = 0;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%64[0-9a-f] %d %d%n", c.id, &c.index, &c.attempt,
	    &n) != 3 || (size_t)n != len || strlen(c.id) != 64)
		return;
	if (rd->nctrs == rd->ctrcap) {
		rd->ctrcap = rd->ctrcap ? rd->ctrcap * 2 : 16;
		rd->ctrs = vg_xrealloc(rd->ctrs, rd->ctrcap *
		    sizeof(*rd->ctrs));
	}
	rd->ctrs[rd->nctrs++] = c;
}

/* Takes every container line written so far (they come from vigil's
 * own processes, before their containers start). */
static void
containers_read(struct vg_egress_reader *rd)
{
	char buf[4096], *nl;
	size_t off;
	ssize_t n;

	if (rd->ctrfd < 0)
		return;
	while ((n = read(rd->ctrfd, buf, sizeof(buf))) > 0) {
		vg_buf_add(&rd->ctrpart, buf, (size_t)n);
		off = 0;
		while ((nl = memchr(rd->ctrpart.data + off, '\n',
		    rd->ctrpart.len - off)) != NULL) {
			container_line(rd, rd->ctrpart.data + off,
			    (size_t)(nl - (rd->ctrpart.data + off)));
			off = (size_t)(nl + 1 - rd->ctrpart.data);
		}
		memmove(rd->ctrpart.data, rd->ctrpart.data + off,
		    rd->ctrpart.len - off);
		rd->ctrpart.len -= off;
		if (rd->ctrpart.len > 1024)
			vg_buf_reset(&rd->ctrpart);
	}
}

/* The reader thread: until stopped, then what the pipe still holds. */
static void *
reader_main(void *arg)
{
	struct vg_egress_reader *rd = arg;
	struct pollfd pfd[3];

	pfd[0].fd = rd->fd;
	pfd[1].fd = rd->stop[0];
	pfd[2].fd = rd->ctrfd;
	pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			break;
		/* A container's line was written before it started, so
		 * before any record of its connections: read them first. */
		containers_read(rd);
		if (pfd[2].revents & (POLLHUP | POLLERR))
			pfd[2].fd = -1;
		if (pfd[0].revents != 0 && !reader_read(rd)) {
			pfd[0].fd = -1;	/* the proxy is gone */
		}
	}
	containers_read(rd);
	/* The proxy has exited: what it wrote is in the pipe. */
	while (reader_read(rd)) {
		struct pollfd p = { rd->fd, POLLIN, 0 };

		if (poll(&p, 1, 0) != 1)
			break;
	}
	return NULL;
}

/* Frees rd (the thread joined). */
static void
reader_free(struct vg_egress_reader *rd)
{
	if (rd == NULL)
		return;
	if (rd->fd >= 0)
		close(rd->fd);
	if (rd->stop[0] >= 0)
		close(rd->stop[0]);
	if (rd->stop[1] >= 0)
		close(rd->stop[1]);
	if (rd->logfd >= 0)
		close(rd->logfd);
	if (rd->ctrfd >= 0)
		close(rd->ctrfd);
	free(rd->ctrs);
	vg_buf_release(&rd->ctrpart);
	free(rd->owners);
	vg_buf_release(&rd->part);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}

/* Starts reading fd (taken) into the queue; the log copy to logfd
 * (taken; -1: none); containers' lines from ctrfd (taken; -1: none).
 * NULL with errno when no thread starts. */
static struct vg_egress_reader *
reader_start(int fd, int logfd, int ctrfd)
{
	struct vg_egress_reader *rd = vg_xcalloc(1, sizeof(*rd));
	sigset_t all, old;
	int err;

	rd->fd = fd;
	rd->logfd = logfd;
	rd->ctrfd = ctrfd;
	rd->stop[0] = rd->stop[1] = -1;
	pthread_mutex_init(&rd->lock, NULL);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0 ||
	    (ctrfd >= 0 && fcntl(ctrfd, F_SETFL, O_NONBLOCK) != 0) ||
	    pipe2(rd->stop, O_CLOEXEC) != 0) {
		err = errno;
		reader_free(rd);
		errno = err;
		return NULL;
	}
	/* Signals stay with the driver's thread (its signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&rd->thread, NULL, reader_main, rd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		reader_free(rd);
		errno = err;
		return NULL;
	}
	return rd;
}

void
vg_egress_run_task(struct vg_egress_run *r, uint64_t cgid, int index,
    int attempt)
{
	struct vg_egress_reader *rd = r->rd;

	if (cgid == 0)
		return;
	if (rd == NULL && r->ownfd >= 0) {
		char line[128];
		int n = snprintf(line, sizeof(line), "{\"owner\":%llu,"
		    "\"job\":%d}\n", (unsigned long long)cgid, r->job);

		if (write(r->ownfd, line, (size_t)n) != n)
			vg_warn("egress: cannot record whose cgroup %llu is: "
			    "%s", (unsigned long long)cgid, strerror(errno));
		return;
	}
	if (rd == NULL)
		return;
	pthread_mutex_lock(&rd->lock);
	owner_add(rd, cgid, index, attempt);
	pthread_mutex_unlock(&rd->lock);
}

void
vg_egress_run_container(const struct vg_egress_run *r, const char *id,
    int index, int attempt)
{
	char line[128];
	int n;

	if (r->ctrw < 0 || id == NULL || strlen(id) != 64)
		return;
	/* One write under PIPE_BUF: whole, never interleaved. */
	n = snprintf(line, sizeof(line), "%s %d %d\n", id, index, attempt);
	if (write(r->ctrw, line, (size_t)n) != n)
		vg_warn("egress: cannot record whose container %.12s is: %s",
		    id, strerror(errno));
}

/* ---- the proxy's life ---- */

/* What starting a proxy takes, for a run's or a session's: the rules,
 * the listening socket in a new network namespace (and that namespace),
 * the socket-diagnostics descriptor, the port. */
struct proxy_setup {
	struct vg_egress_rules	 rules;
	int			 lfd, nsfd, diagfd;
	unsigned		 port;
};

/* Root, the rules of nc, the namespace and its listening socket; who
 * names the proxy's users in the refusal ("tasks", "commands"). */
static int
setup_begin(const struct vg_net_conf *nc, const char *who,
    struct proxy_setup *ps, struct vg_err *e)
{
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	char why[512];
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->lfd = ps->nsfd = ps->diagfd = -1;
	if (geteuid() != 0)
		return vg_err_set(e, VG_EUNSUPPORTED, "isolation.network: an "
		    "allow-list needs vigil to run as root (the proxy listens "
		    "in the %s' network namespace)", who);
	if (vg_egress_rules_init(&ps->rules, &nc->allow, &nc->deny, why,
	    sizeof(why)) != 0)
		return vg_err_set(e, VG_EINVAL, "isolation.network: %s", why);
	if ((rc = namespace_socket(&ps->lfd, &ps->nsfd, &ps->diagfd, e)) != 0)
		return rc;
	if (getsockname(ps->lfd, (struct sockaddr *)&sa, &salen) != 0)
		return vg_err_errno(e, "egress proxy: getsockname");
	ps->port = ntohs(sa.sin_port);
	return 0;
}

/* Closes what setup_begin opened and the caller did not take (set -1). */
static void
setup_end(struct proxy_setup *ps)
{
	if (ps->lfd >= 0)
		close(ps->lfd);
	if (ps->nsfd >= 0)
		close(ps->nsfd);
	if (ps->diagfd >= 0)
		close(ps->diagfd);
	vg_egress_rules_release(&ps->rules);
}

int
vg_egress_run_start(const struct vg_net_conf *nc, const char *run_dir,
    struct vg_egress_run *r, struct vg_err *e)
{
	struct proxy_setup ps;
	int logfd = -1, dirfd, rc;
	int pfd[2] = { -1, -1 }, cfd[2] = { -1, -1 };
	pid_t pid;

	if ((rc = setup_begin(nc, "tasks", &ps, e)) != 0)
		goto out;
	if ((dirfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = vg_err_errno(e, "egress proxy: run directory '%s'",
		    run_dir);
		goto out;
	}
	logfd = vg_beneath_file(dirfd, "egress.jsonl", O_WRONLY | O_APPEND |
	    O_CREAT, 0600, "egress log", e);
	close(dirfd);
	if (logfd < 0) {
		rc = logfd;
		goto out;
	}
	if (pipe2(pfd, O_CLOEXEC) != 0 || pipe2(cfd, O_CLOEXEC) != 0) {
		rc = vg_err_errno(e, "egress proxy: pipe");
		goto out;
	}
	(void)fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
	if ((pid = fork()) < 0) {
		rc = vg_err_errno(e, "egress proxy: fork");
		goto out;
	}
	if (pid == 0) {
		/* Ends with the vigil that started it. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_IGN);
		close(ps.nsfd);
		close(cfd[0]);
		close(cfd[1]);
		if (shed(ps.lfd, ps.diagfd, pfd[1], -1) != 0)
			_exit(1);
		_exit(vg_egress_serve(ps.lfd, ps.diagfd, &ps.rules, pfd[1]) ==
		    0 ? 0 : 1);
	}
	close(pfd[1]);
	pfd[1] = -1;
	if ((r->rd = reader_start(pfd[0], logfd, cfd[0])) == NULL) {
		rc = vg_err_errno(e, "egress proxy: its reader");
		pfd[0] = logfd = cfd[0] = -1;	/* closed by reader_start */
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		goto out;
	}
	pfd[0] = logfd = cfd[0] = -1;
	r->ctrw = cfd[1];
	cfd[1] = -1;
	r->pid = pid;
	r->nsfd = ps.nsfd;
	ps.nsfd = -1;
	r->port = ps.port;
	free(r->run_dir);
	r->run_dir = vg_xstrdup(run_dir);
	rc = 0;
out:
	setup_end(&ps);
	if (logfd >= 0)
		close(logfd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (cfd[0] >= 0)
		close(cfd[0]);
	if (cfd[1] >= 0)
		close(cfd[1]);
	return rc;
}

void
vg_egress_run_stop(struct vg_egress_run *r)
{
	struct vg_egress_reader *rd = r->rd;
	ssize_t n;

	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (rd != NULL) {
		n = write(rd->stop[1], "x", 1);
		(void)n;
		pthread_join(rd->thread, NULL);
		if (rd->refused > 0)
			vg_warn("egress: the proxy refused %zu connection%s "
			    "(the first: %s); vigil status RUN lists them",
			    rd->refused, rd->refused == 1 ? "" : "s",
			    rd->first);
		if (rd->bad > 0)
			vg_warn("egress: %zu line%s from the proxy were not "
			    "records and were dropped", rd->bad, rd->bad == 1 ?
			    "" : "s");
		reader_free(rd);
	}
	if (r->nsfd >= 0)
		close(r->nsfd);
	if (r->ctrw >= 0)
		close(r->ctrw);
	free(r->run_dir);
	r->pid = 0;
	r->nsfd = r->ctrw = -1;
	r->port = 0;
	r->run_dir = NULL;
	r->rd = NULL;
}

void
vg_egress_run_env(const struct vg_egress_run *r,
    void (*set)(void *arg, const char *name, const char *value), void *arg)
{
	static const char *const http[] = { "HTTP_PROXY", "HTTPS_PROXY",
		"http_proxy", "https_proxy" };
	char url[64];
	size_t i;

	snprintf(url, sizeof(url), "http://127.0.0.1:%u", r->port);
	for (i = 0; i < sizeof(http) / sizeof(http[0]); i++)
		set(arg, http[i], url);
	snprintf(url, sizeof(url), "socks5h://127.0.0.1:%u", r->port);
	set(arg, "ALL_PROXY", url);
	set(arg, "all_proxy", url);
	set(arg, "NO_PROXY", "localhost,127.0.0.1,::1");
	set(arg, "no_proxy", "localhost,127.0.0.1,::1");
}

/* ---- a session's proxy ---- */

int
vg_egress_session_start(const struct vg_net_conf *nc, const char *state_path,
    const char *log_path, struct vg_err *e)
{
	struct proxy_setup ps;
	unsigned long long start = 0;
	char line[128];
	int logfd = -1, sfd = -1, rc, n;
	int sv[2] = { -1, -1 };
	pid_t pid, proxy = 0;

	if ((rc = setup_begin(nc, "commands", &ps, e)) != 0)
		goto out;
	if ((logfd = vg_beneath_file_path(log_path, O_WRONLY | O_APPEND |
	    O_CREAT, 0600, e)) < 0) {
		rc = logfd;
		logfd = -1;
		goto out;
	}
	if ((sfd = vg_beneath_file_path(state_path, O_WRONLY | O_CREAT |
	    O_TRUNC, 0600, e)) < 0) {
		rc = sfd;
		sfd = -1;
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		rc = vg_err_errno(e, "egress proxy: socket");
		goto out;
	}
	/* The proxy is a grandchild: it outlives vigil, in a session of
	 * its own; the child tells its pid and exits. */
	if ((pid = fork()) < 0) {
		rc = vg_err_errno(e, "egress proxy: fork");
		goto out;
	}
	if (pid == 0) {
		pid_t g;
		int null;

		if (setsid() < 0 || (g = fork()) < 0)
			_exit(1);
		if (g > 0)
			_exit(write(sv[1], &g, sizeof(g)) == (ssize_t)sizeof(g) ?
			    0 : 1);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		/* Nothing of the caller's terminal or pipes: a shell that
		 * reads session start's output waits for their end. */
		if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
		    dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(null, 2) < 0)
			_exit(1);
		if (shed(ps.lfd, ps.diagfd, logfd, ps.nsfd) != 0)
			_exit(1);
		_exit(vg_egress_serve(ps.lfd, ps.diagfd, &ps.rules, logfd) ==
		    0 ? 0 : 1);
	}
	close(sv[1]);
	sv[1] = -1;
	n = (int)read(sv[0], &proxy, sizeof(proxy));
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (n != (int)sizeof(proxy) || proxy <= 0 ||
	    vg_proc_starttime(proxy, &start) != 0) {
		rc = vg_err_set(e, VG_EIO, "egress proxy: it did not start");
		goto out;
	}
	n = snprintf(line, sizeof(line), "%ld %llu %u %d\n", (long)proxy,
	    start, ps.port, ps.nsfd);
	if (write(sfd, line, (size_t)n) != n) {
		rc = vg_err_errno(e, "egress proxy: writing '%s'", state_path);
		kill(proxy, SIGKILL);
		goto out;
	}
	rc = 0;
out:
	setup_end(&ps);
	if (logfd >= 0)
		close(logfd);
	if (sfd >= 0)
		close(sfd);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return rc;
}

/* Reads state_path: the proxy's pid (checked: vigil's program, started
 * then), port and namespace descriptor number. */
static int
session_state(const char *state_path, pid_t *pid, unsigned long long *startp,
    unsigned *port, int *nsno, struct vg_err *e)
{
	unsigned long long start;
	char buf[128], c;
	ssize_t n;
	long p;
	int fd, rc = 0;

	if ((fd = vg_beneath_file_path(state_path, O_RDONLY, 0, e)) < 0)
		return fd;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (n <= 0 || sscanf(buf, "%ld %llu %u %d%c", &p, &start, port, nsno,
	    &c) != 5 ||
	    c != '\n' || p <= 0 || *port == 0 || *port > 65535 || *nsno < 0)
		rc = vg_err_set(e, VG_ESTATE, "egress proxy state '%s' is "
		    "not 'PID START PORT NSFD'", state_path);
	else if (!vg_proc_runs((pid_t)p, start, NULL))
		rc = vg_err_set(e, VG_ESTATE, "the session's egress proxy "
		    "(pid %ld) is gone: close the session and open another",
		    p);
	else {
		*pid = (pid_t)p;
		*startp = start;
	}
	close(fd);
	return rc;
}

int
vg_egress_session_attach(const char *state_path, const char *log_path,
    struct vg_egress_run *r, struct vg_err *e)
{
	unsigned long long start;
	char path[64];
	unsigned port;
	pid_t pid;
	int nsno, nsfd, ownfd, rc;

	if ((rc = session_state(state_path, &pid, &start, &port, &nsno,
	    e)) != 0)
		return rc;
	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)pid, nsno);
	if ((nsfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return vg_err_errno(e, "the session's egress proxy: its "
		    "namespace (%s)", path);
	/* That descriptor is a network namespace, not what a pid reused
	 * since the check left there. */
	if (ioctl(nsfd, NS_GET_NSTYPE) != CLONE_NEWNET) {
		close(nsfd);
		return vg_err_set(e, VG_ESTATE, "the session's egress proxy: "
		    "%s is not a network namespace", path);
	}
	if ((ownfd = vg_beneath_file_path(log_path, O_WRONLY | O_APPEND, 0,
	    e)) < 0) {
		close(nsfd);
		return ownfd;
	}
	r->pid = pid;
	r->nsfd = nsfd;
	r->port = port;
	r->ownfd = ownfd;
	return 0;
}

void
vg_egress_run_detach(struct vg_egress_run *r)
{
	if (r->nsfd >= 0)
		close(r->nsfd);
	if (r->ownfd >= 0)
		close(r->ownfd);
	r->pid = 0;
	r->nsfd = r->ownfd = -1;
	r->port = 0;
	r->job = 0;
}

void
vg_egress_session_stop(const char *state_path)
{
	unsigned long long start;
	struct vg_err e;
	unsigned port;
	pid_t pid;
	int nsno, i;

	vg_err_init(&e);
	if (session_state(state_path, &pid, &start, &port, &nsno, &e) == 0) {
		kill(pid, SIGTERM);
		/* Not our child: wait for it to be gone (it logs what is
		 * open, then exits); a zombie is gone. */
		for (i = 0; i < 200 && vg_proc_alive(pid, start); i++)
			usleep(10000);
	}
	(void)unlink(state_path);
}
