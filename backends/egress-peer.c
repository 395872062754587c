/*
 * egress-peer.c - the cgroup of the client end of a proxied connection,
 * by an exact inet_diag lookup (backends/egress-peer.h).
 *
 * The client socket's control group is recorded by the kernel when the
 * socket is made (cgroup_sk_alloc), from the cgroup of the process that
 * made it: a task can name any host it likes, but not another task's
 * cgroup.  The answer is read from INET_DIAG_CGROUP_ID (Linux 5.10).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/cgroup.h"
#include "backends/egress-peer.h"

int
vg_egress_peer_open(void)
{
	return socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG);
}

/* Reads the cgroup id out of the attributes of one inet_diag_msg. */
static int
msg_cgroup(const struct nlmsghdr *h, uint64_t *cgid)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	const struct rtattr *a;
	int len;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -1;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	*cgid = 0;
	for (a = (const struct rtattr *)(m + 1); RTA_OK(a, len);
	    a = RTA_NEXT(a, len))
		if (a->rta_type == INET_DIAG_CGROUP_ID &&
		    RTA_PAYLOAD(a) >= sizeof(uint64_t))
			memcpy(cgid, RTA_DATA(a), sizeof(uint64_t));
	return 0;
}

int
vg_egress_peer_cgroup(int diagfd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local, uint64_t *cgid)
{
	static unsigned seq;
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	r;
	} req;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr	h;
		char		b[8192];
	} ans;
	struct nlmsghdr *h;
	ssize_t n;
	int len;

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.nlh.nlmsg_seq = ++seq;
	req.r.sdiag_family = AF_INET;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	/* The client's socket: its source is the peer, its destination
	 * the proxy. */
	req.r.id.idiag_sport = peer->sin_port;
	req.r.id.idiag_dport = local->sin_port;
	memcpy(req.r.id.idiag_src, &peer->sin_addr, 4);
	memcpy(req.r.id.idiag_dst, &local->sin_addr, 4);
	req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (sendto(diagfd, &req, sizeof(req), 0, (struct sockaddr *)&nl,
	    sizeof(nl)) != (ssize_t)sizeof(req))
		return -1;
	for (;;) {
		n = recv(diagfd, &ans, sizeof(ans), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		len = (int)n;
		for (h = &ans.h; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != req.nlh.nlmsg_seq)
				continue;	/* an earlier, timed-out one */
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *er = NLMSG_DATA(h);

				errno = er->error < 0 ? -er->error : ENOENT;
				return -1;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY)
				return msg_cgroup(h, cgid) == 0 ? 0 :
				    (errno = EPROTO, -1);
		}
	}
}

/* The cgroup v2 mount, opened once: its descriptor or -1. */
static int cg2_fd = -1;
static pthread_once_t cg2_once = PTHREAD_ONCE_INIT;

static void
cg2_open(void)
{
	struct vg_cgroup_caps c;

	if (vg_cgroup_probe(&c) == 0 && c.v2_mount[0] != '\0')
		cg2_fd = open(c.v2_mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int
vg_egress_peer_container(uint64_t cgid, char id[65])
{
	/* struct file_handle with room for a kernfs id (FILEID_KERNFS). */
	union {
		struct file_handle	 fh;
		char			 room[sizeof(struct file_handle) + 8];
	} h;
	char self[32], path[4096];
	const char *p, *found = NULL;
	ssize_t n;
	int fd, k;

	pthread_once(&cg2_once, cg2_open);
	if (cg2_fd < 0 || cgid == 0) {
		errno = ENOENT;
		return -1;
	}
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 0xfe;
	memcpy(h.fh.f_handle, &cgid, 8);
	if ((fd = open_by_handle_at(cg2_fd, &h.fh, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0) {
		if (errno == ESTALE)
			errno = ENOENT;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, path, sizeof(path) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	/* The last run of exactly 64 hex digits between non-hex bytes. */
	for (p = path; *p != '\0'; p += k > 0 ? k : 1) {
		for (k = 0; is_hex(p[k]); k++)
			;
		if (k == 64 && (p == path || !is_hex(p[-1])))
			found = p;
	}
	if (found == NULL) {
		errno = ENOENT;
		return -1;
	}
	memcpy(id, found, 64);
	id[64] = '\0';
	return 0;
}
