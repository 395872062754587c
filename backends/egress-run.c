/*
 * egress-run.c - a run's egress proxy in a network namespace of its own
 * (backends/egress-run.h).
 *
 * The namespace is made by a short-lived child: unshare(CLONE_NEWNET),
 * loopback up, a socket bound to 127.0.0.1 there, then the socket and a
 * descriptor of the namespace handed to the parent over a socketpair.  A
 * socket keeps the namespace it was made in, so the proxy process,
 * which stays in the host's namespace, accepts the tasks' connections
 * in theirs and makes its own connections out from the host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "backends/egress-proxy.h"
#include "backends/egress-run.h"
#include "backends/sandbox.h"
#include "common/beneath.h"
#include "common/buf.h"
#include "common/egress-match.h"
#include "common/log.h"

/* Passes fds[0..1] over the socket s. */
static int
send_fds(int s, const int fds[2])
{
	char data = 'e', cbuf[CMSG_SPACE(2 * sizeof(int))];
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
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 2 * sizeof(int));
	return sendmsg(s, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* Receives two fds from s into fds; 0 or -1. */
static int
recv_fds(int s, int fds[2])
{
	char data, cbuf[CMSG_SPACE(2 * sizeof(int))];
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
	    cm->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
	return 0;
}

/* The namespace maker (child): never returns. */
static void
make_namespace(int s)
{
	struct sockaddr_in sa;
	int fds[2], one = 1;

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
	_exit(send_fds(s, fds) == 0 ? 0 : 4);
}

/* Makes the namespace: *lfd the listening socket in it, *nsfd it. */
static int
namespace_socket(int *lfd, int *nsfd, struct vg_err *e)
{
	int sv[2], fds[2] = { -1, -1 }, st, got;
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
	return 0;
}

/*
 * The proxy parses what tasks send: it keeps nothing of vigil's but its
 * two descriptors (the state database, the run's files are closed) and,
 * started by root, becomes nobody (65534) with no capability and no
 * way back (no_new_privs).  0 or -1.
 */
static int
shed(int lfd, int logfd)
{
	long fd, max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != lfd && fd != logfd)
			(void)close((int)fd);
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 ||
	    setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0))
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -1;
}

int
vg_egress_run_start(const struct vg_net_conf *nc, const char *run_dir,
    struct vg_egress_run *r, struct vg_err *e)
{
	struct vg_egress_rules rules;
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	char why[512];
	int lfd = -1, nsfd = -1, logfd = -1, dirfd, rc;
	pid_t pid;

	if (geteuid() != 0)
		return vg_err_set(e, VG_EUNSUPPORTED, "isolation.network: an "
		    "allow-list needs vigil to run as root (the proxy listens "
		    "in the tasks' network namespace)");
	if (vg_egress_rules_init(&rules, &nc->allow, &nc->deny, why,
	    sizeof(why)) != 0)
		return vg_err_set(e, VG_EINVAL, "isolation.network: %s", why);
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
	if ((rc = namespace_socket(&lfd, &nsfd, e)) != 0)
		goto out;
	if (getsockname(lfd, (struct sockaddr *)&sa, &salen) != 0) {
		rc = vg_err_errno(e, "egress proxy: getsockname");
		goto out;
	}
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
		close(nsfd);
		if (shed(lfd, logfd) != 0)
			_exit(1);
		_exit(vg_egress_serve(lfd, &rules, logfd) == 0 ? 0 : 1);
	}
	r->pid = pid;
	r->nsfd = nsfd;
	nsfd = -1;
	r->port = ntohs(sa.sin_port);
	free(r->run_dir);
	r->run_dir = vg_xstrdup(run_dir);
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);
	if (nsfd >= 0)
		close(nsfd);
	if (logfd >= 0)
		close(logfd);
	vg_egress_rules_release(&rules);
	return rc;
}

/* Warns of the connections the log in run_dir says were refused: how
 * many, and the first one's host and port. */
static void
warn_refused(const char *run_dir)
{
	struct vg_buf log = VG_BUF_INIT;
	const char *p, *first = NULL, *h;
	size_t n = 0;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_beneath_read(run_dir, 0, "egress.jsonl", 64 << 20, &log,
	    &e) != 0) {
		vg_buf_release(&log);
		return;
	}
	for (p = vg_buf_str(&log); (p = strstr(p, "\"allowed\":false")) !=
	    NULL; p++)
		if (n++ == 0)
			first = p;
	if (n > 0) {
		while (first > log.data && first[-1] != '\n')
			first--;
		/* "host":"X","port":N of the line we wrote */
		h = strstr(first, "\"host\":");
		p = h != NULL ? strstr(h, ",\"addr\"") : NULL;
		vg_warn("egress: the proxy refused %zu connection%s (the "
		    "first: %.*s); every connection is in %s/egress.jsonl", n,
		    n == 1 ? "" : "s", p != NULL ? (int)(p - h) : 0,
		    p != NULL ? h : "", run_dir);
	}
	vg_buf_release(&log);
}

void
vg_egress_run_stop(struct vg_egress_run *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGTERM);
		while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
			;
		warn_refused(r->run_dir);
	}
	if (r->nsfd >= 0)
		close(r->nsfd);
	free(r->run_dir);
	r->pid = 0;
	r->nsfd = -1;
	r->port = 0;
	r->run_dir = NULL;
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
