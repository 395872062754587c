/*
 * egress-proxy.h - the filtering proxy of isolation.network's allow-list
 * (docs/egress.md).
 *
 * One listening socket speaks three protocols, told apart by the first
 * byte a client sends: SOCKS5 (0x05: CONNECT to a name, an IPv4 or an
 * IPv6 address), HTTP CONNECT (tunnels: https, git, pip) and plain HTTP
 * with an absolute URI (http_proxy-aware tools).  The proxy resolves
 * names itself, connects only to the host:port the rules allow (deny
 * wins; an address only when listed; a name whose address a deny
 * pattern lists is refused), tells a refusal in the protocol's terms
 * (HTTP 403 with a body naming the host and the rule, SOCKS reply 0x02)
 * and relays the rest with splice(2).  Each connection is one line of
 * JSON on the log descriptor when it ends (vg_egress_record).
 */
#ifndef VG_EGRESS_PROXY_H
#define VG_EGRESS_PROXY_H

#include <stdint.h>

#include "common/buf.h"
#include "common/egress-match.h"

/* One connection, as logged. */
struct vg_egress_conn {
	const char	*proto;		/* "socks5", "connect", "http" */
	char		 host[256];	/* as the client gave it (printable) */
	unsigned	 port;
	char		 addr[64];	/* connected to, "" when none */
	int		 allowed;
	const char	*rule;		/* "allow X", "deny Y", "not listed" */
	const char	*error;		/* after allowed: why it failed, or
					   NULL */
	uint64_t	 up;		/* bytes task -> host */
	uint64_t	 down;		/* bytes host -> task */
	uint64_t	 cgroup;	/* the client socket's cgroup v2 id, as
					   the kernel tells it; 0: unknown */
};

/* Appends c to out as one JSON object (no newline): the log line. */
void	vg_egress_record(const struct vg_egress_conn *c, struct vg_buf *out);

/*
 * Serves lfd (a listening TCP socket) until accept fails for good: one
 * thread per connection, each line written to logfd whole (one write,
 * O_APPEND files and pipes interleave by line).  diagfd, a sock_diag
 * socket in lfd's namespace (backends/egress-peer.h), or -1: with one,
 * each connection's client is looked up when it is accepted and a
 * connection the kernel names no owner of is refused ("no owner").  r is
 * borrowed for the life of the call.  For the process that runs the
 * proxy; returns an errno value.
 */
int	vg_egress_serve(int lfd, int diagfd, const struct vg_egress_rules *r,
	    int logfd);

#endif
