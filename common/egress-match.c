/*
 * egress-match.c - isolation.network host patterns (common/egress-match.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/egress-match.h"
#include "common/str.h"

#define VALID_FORMS	"valid: HOST, HOST:PORT, *.DOMAIN, *.DOMAIN:PORT, " \
			"an IP address, [IPv6]:PORT"

/* Writes address text a (IPv4 or IPv6, no brackets) in inet_ntop's
 * form into out; the kind, or -1 when a is no address. */
static int
ip_canon(const char *a, char *out, size_t outlen)
{
	unsigned char bin[16];

	if (inet_pton(AF_INET, a, bin) == 1)
		return inet_ntop(AF_INET, bin, out, (socklen_t)outlen) ?
		    VG_EGRESS_IP4 : -1;
	if (inet_pton(AF_INET6, a, bin) == 1)
		return inet_ntop(AF_INET6, bin, out, (socklen_t)outlen) ?
		    VG_EGRESS_IP6 : -1;
	return -1;
}

/* Strips the brackets of "[v6]" into out (at most outlen); 0 or -1. */
static int
unbracket(const char *h, char *out, size_t outlen)
{
	size_t n = strlen(h);

	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (n >= outlen)
		return -1;
	memcpy(out, h, n);
	out[n] = '\0';
	return 0;
}

/* Whether name (no final dot) is a DNS name: labels of letters, digits
 * and '-' (and '_', which service names use), 1 to 63 long, no label
 * starting or ending with '-', 253 in all. */
static int
dns_name_ok(const char *name, char *why, size_t whylen)
{
	const char *p = name, *dot;
	size_t len;

	if (*name == '\0' || strlen(name) > 253) {
		snprintf(why, whylen, "a host name is 1 to 253 characters");
		return 0;
	}
	for (;;) {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len == 0 || len > 63) {
			snprintf(why, whylen, "a label of a host name is 1 "
			    "to 63 characters");
			return 0;
		}
		if (p[0] == '-' || p[len - 1] == '-') {
			snprintf(why, whylen, "a label of a host name does "
			    "not start or end with '-'");
			return 0;
		}
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)p[i]) && p[i] != '-' &&
			    p[i] != '_') {
				snprintf(why, whylen, "'%c' is not allowed in "
				    "a host name (letters, digits, '-', '.')",
				    isprint((unsigned char)p[i]) ? p[i] : '?');
				return 0;
			}
		if (dot == NULL)
			return 1;
		p = dot + 1;
	}
}

/* Parses the port text s (digits only, 1 to 65535) into *port. */
static int
port_parse(const char *s, unsigned *port, char *why, size_t whylen)
{
	unsigned long v = 0;
	const char *p;

	for (p = s; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p) || v > 65535) {
			v = 0;
			break;
		}
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (*s == '\0' || v == 0 || v > 65535) {
		snprintf(why, whylen, "port '%s' is not a number from 1 to "
		    "65535", s);
		return -1;
	}
	*port = (unsigned)v;
	return 0;
}

/* Lower-cases s in place and drops one final dot. */
static void
name_canon(char *s)
{
	size_t n;

	for (char *p = s; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	n = strlen(s);
	if (n > 1 && s[n - 1] == '.')
		s[n - 1] = '\0';
}

int
vg_egress_pat_parse(const char *text, struct vg_egress_pat *p, char *why,
    size_t whylen)
{
	char host[300];
	const char *colon, *end;
	size_t hlen;
	int k;

	memset(p, 0, sizeof(*p));
	*why = '\0';
	if (text == NULL || *text == '\0' || strlen(text) >= sizeof(host)) {
		snprintf(why, whylen, "an empty or overlong pattern (%s)",
		    VALID_FORMS);
		return -1;
	}
	if (strstr(text, "://") != NULL) {
		snprintf(why, whylen, "a URL: write the host alone, with a "
		    "port if it matters (example.org, example.org:443)");
		return -1;
	}
	/* The host part: "[v6]", a bare IPv6 address (two colons or more,
	 * no port), or what comes before the only colon. */
	if (text[0] == '[') {
		if ((end = strchr(text, ']')) == NULL) {
			snprintf(why, whylen, "'[' without ']' (%s)",
			    VALID_FORMS);
			return -1;
		}
		hlen = (size_t)(end - text - 1);
		memcpy(host, text + 1, hlen);
		host[hlen] = '\0';
		if (end[1] != '\0' && end[1] != ':') {
			snprintf(why, whylen, "text after ']' that is not "
			    ":PORT (%s)", VALID_FORMS);
			return -1;
		}
		colon = end[1] == ':' ? end + 1 : NULL;
		if (ip_canon(host, p->host, sizeof(p->host)) !=
		    VG_EGRESS_IP6) {
			snprintf(why, whylen, "'%s' in brackets is not an "
			    "IPv6 address", host);
			return -1;
		}
		p->kind = VG_EGRESS_IP6;
	} else {
		colon = strchr(text, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			colon = NULL;	/* a bare IPv6 address */
		hlen = colon != NULL ? (size_t)(colon - text) : strlen(text);
		memcpy(host, text, hlen);
		host[hlen] = '\0';
		if ((k = ip_canon(host, p->host, sizeof(p->host))) >= 0)
			p->kind = (enum vg_egress_kind)k;
		else if (strchr(host, ':') != NULL) {
			snprintf(why, whylen, "'%s' is not an IPv6 address "
			    "(with a port, write it in brackets: "
			    "[::1]:443)", host);
			return -1;
		} else {
			p->kind = VG_EGRESS_NAME;
			if (strncmp(host, "*.", 2) == 0) {
				p->kind = VG_EGRESS_SUFFIX;
				memmove(host, host + 2, strlen(host + 2) + 1);
			}
			name_canon(host);
			if (strchr(host, '*') != NULL) {
				snprintf(why, whylen, "'*' only as the first "
				    "label, '*.DOMAIN' (%s); every host is "
				    "isolation.network: host", VALID_FORMS);
				return -1;
			}
			if (!dns_name_ok(host, why, whylen))
				return -1;
			if (p->kind == VG_EGRESS_SUFFIX &&
			    strchr(host, '.') == NULL) {
				snprintf(why, whylen, "'*.%s' matches a whole "
				    "top-level domain: name a domain below it "
				    "(*.example.org)", host);
				return -1;
			}
			vg_strlcpy(p->host, host, sizeof(p->host));
		}
	}
	if (colon != NULL && port_parse(colon + 1, &p->port, why,
	    whylen) != 0)
		return -1;
	return 0;
}

int
vg_egress_is_ip(const char *host)
{
	char a[300], canon[64];

	if (unbracket(host, a, sizeof(a)) != 0)
		return 0;
	if (host[0] == '[')
		return ip_canon(a, canon, sizeof(canon)) == VG_EGRESS_IP6;
	return ip_canon(a, canon, sizeof(canon)) >= 0;
}

int
vg_egress_pat_match(const struct vg_egress_pat *p, const char *host,
    unsigned port)
{
	char h[300], canon[64];
	size_t n, dn;
	int k;

	if (p->port != 0 && p->port != port)
		return 0;
	if (unbracket(host, h, sizeof(h)) != 0)
		return 0;
	k = ip_canon(h, canon, sizeof(canon));
	if (host[0] == '[' && k != VG_EGRESS_IP6)
		return 0;	/* brackets hold an IPv6 address only */
	if (p->kind == VG_EGRESS_IP4 || p->kind == VG_EGRESS_IP6)
		return k == (int)p->kind && strcmp(canon, p->host) == 0;
	if (k >= 0)
		return 0;	/* an address only by its own pattern */
	name_canon(h);
	if (p->kind == VG_EGRESS_NAME)
		return strcmp(h, p->host) == 0;
	n = strlen(h);
	dn = strlen(p->host);
	return n > dn + 1 && h[n - dn - 1] == '.' &&
	    strcmp(h + n - dn, p->host) == 0;
}

int
vg_egress_rules_init(struct vg_egress_rules *r, const struct vg_strv *allow,
    const struct vg_strv *deny, char *why, size_t whylen)
{
	char sub[300];
	size_t i;

	memset(r, 0, sizeof(*r));
	r->allow = vg_xcalloc(allow->n + 1, sizeof(*r->allow));
	r->deny = vg_xcalloc(deny->n + 1, sizeof(*r->deny));
	for (i = 0; i < allow->n; i++, r->nallow++) {
		vg_strv_pushf(&r->text, "allow %s", allow->v[i]);
		if (vg_egress_pat_parse(allow->v[i], &r->allow[i], sub,
		    sizeof(sub)) != 0)
			goto bad;
	}
	for (i = 0; i < deny->n; i++, r->ndeny++) {
		vg_strv_pushf(&r->text, "deny %s", deny->v[i]);
		if (vg_egress_pat_parse(deny->v[i], &r->deny[i], sub,
		    sizeof(sub)) != 0)
			goto bad;
	}
	return 0;
bad:
	snprintf(why, whylen, "%s: %s", r->text.v[r->text.n - 1], sub);
	vg_egress_rules_release(r);
	return -1;
}

void
vg_egress_rules_release(struct vg_egress_rules *r)
{
	free(r->allow);
	free(r->deny);
	vg_strv_release(&r->text);
	memset(r, 0, sizeof(*r));
}

int
vg_egress_denied_addr(const struct vg_egress_rules *r, const char *addr,
    unsigned port, const char **rule)
{
	size_t i;

	for (i = 0; i < r->ndeny; i++)
		if ((r->deny[i].kind == VG_EGRESS_IP4 ||
		    r->deny[i].kind == VG_EGRESS_IP6) &&
		    vg_egress_pat_match(&r->deny[i], addr, port)) {
			*rule = r->text.v[r->nallow + i];
			return 1;
		}
	return 0;
}

int
vg_egress_decide(const struct vg_egress_rules *r, const char *host,
    unsigned port, const char **rule)
{
	size_t i;

	for (i = 0; i < r->ndeny; i++)
		if (vg_egress_pat_match(&r->deny[i], host, port)) {
			*rule = r->text.v[r->nallow + i];
			return 0;
		}
	for (i = 0; i < r->nallow; i++)
		if (vg_egress_pat_match(&r->allow[i], host, port)) {
			*rule = r->text.v[i];
			return 1;
		}
	*rule = "not listed";
	return 0;
}
