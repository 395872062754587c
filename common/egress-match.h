/*
 * egress-match.h - the host patterns of isolation.network's allow and
 * deny lists, parsed and matched.  Pure: no resolver, no I/O.
 *
 * A pattern is HOST, HOST:PORT, *.DOMAIN or *.DOMAIN:PORT, where HOST
 * is a DNS name, an IPv4 literal or an IPv6 literal (bracketed when a
 * port follows: [::1]:443).  A name matches itself, case-insensitively,
 * with or without a final dot; *.DOMAIN matches every name below DOMAIN
 * but not DOMAIN itself; an IP literal matches only the same address
 * (a name pattern never matches an address, so an address is reached
 * only when it is listed).  No port: every port.
 */
#ifndef VG_EGRESS_MATCH_H
#define VG_EGRESS_MATCH_H

#include <stddef.h>

#include "common/buf.h"

enum vg_egress_kind {
	VG_EGRESS_NAME,		/* host names */
	VG_EGRESS_SUFFIX,	/* *.DOMAIN: names below DOMAIN */
	VG_EGRESS_IP4,
	VG_EGRESS_IP6,
};

struct vg_egress_pat {
	enum vg_egress_kind	 kind;
	char			 host[256];	/* lower case, no final dot;
						   SUFFIX: the DOMAIN; IP: the
						   address as inet_ntop
						   writes it */
	unsigned		 port;		/* 0: any */
};

/* Parses text into *p; 0, or -1 with why (what is wrong and what would
 * be valid) written into why. */
int	vg_egress_pat_parse(const char *text, struct vg_egress_pat *p,
	    char *why, size_t whylen);

/* Whether host (a name or an IP literal, as a client gave it; IPv6
 * with or without brackets) and port match p. */
int	vg_egress_pat_match(const struct vg_egress_pat *p, const char *host,
	    unsigned port);

/* Whether the host a client gave is an IP literal (IPv4, or IPv6 with
 * or without brackets). */
int	vg_egress_is_ip(const char *host);

/* An allow-list with its deny-list, parsed. */
struct vg_egress_rules {
	struct vg_egress_pat	*allow;
	size_t			 nallow;
	struct vg_egress_pat	*deny;
	size_t			 ndeny;
	struct vg_strv		 text;	/* the patterns as written: allow
					   first, then deny */
};

/* Parses every pattern of allow and deny into *r (zeroed first); 0, or
 * -1 with why naming the first bad pattern.  *r is released on error. */
int	vg_egress_rules_init(struct vg_egress_rules *r,
	    const struct vg_strv *allow, const struct vg_strv *deny,
	    char *why, size_t whylen);
void	vg_egress_rules_release(struct vg_egress_rules *r);

/*
 * Decides for host:port: 1 allowed, 0 refused.  Deny wins over allow.
 * *rule is set to the pattern that decided as written ("allow *.pypi.org"
 * or "deny 10.0.0.1"), or to "not listed" when none matched.
 */
int	vg_egress_decide(const struct vg_egress_rules *r, const char *host,
	    unsigned port, const char **rule);

/* Whether addr (an IP literal) is refused by a deny pattern (a name
 * allowed by its name whose address is denied: the metadata service). */
int	vg_egress_denied_addr(const struct vg_egress_rules *r,
	    const char *addr, unsigned port, const char **rule);

#endif
