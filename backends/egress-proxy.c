/*
 * egress-proxy.c - the allow-list proxy (backends/egress-proxy.h).
 *
 * A thread per connection with blocking sockets: the handshake reads
 * what it needs under a receive timeout, the relay moves data through a
 * pipe with splice(2) (no copy through user space) and falls back to
 * read and write where splice does not apply.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/egress-peer.h"
#include "backends/egress-proxy.h"
#include "common/json.h"
#include "common/str.h"

#define HEAD_MAX	16384		/* an HTTP request's header */
#define HANDSHAKE_SECS	30		/* for the client's request */
#define CONNECT_SECS	15		/* for the host's answer */
#define RELAY_CHUNK	(1 << 20)	/* bytes a splice moves at most */

/* A connection being served: logged once, when it ends or when the
 * proxy is stopped (SIGTERM) while it lasts. */
struct conn {
	struct vg_egress_conn	 c;		/* first: log_conn's argument */
	int			 logged;
	struct conn		*prev, *next;
};

struct proxy {
	const struct vg_egress_rules	*rules;
	int				 logfd;
	pthread_mutex_t			 log_lock;	/* logfd, conns */
	struct conn			*conns;		/* being served */
	int				 diagfd;	/* or -1 */
	pthread_mutex_t			 diag_lock;
	struct sockaddr_in		 local;		/* lfd's address */
};

struct client {
	struct proxy		*px;
	int			 fd;
	struct sockaddr_in	 peer;
};

/* The rule of a connection whose client the kernel did not name. */
static const char no_owner[] = "no owner (the kernel names no task for "
    "the connection)";

void
vg_egress_record(const struct vg_egress_conn *c, struct vg_buf *out)
{
	struct vg_json_writer w;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "proto");
	vg_json_str(&w, c->proto);
	vg_json_key(&w, "host");
	vg_json_str(&w, c->host);
	vg_json_key(&w, "port");
	vg_json_int(&w, c->port);
	vg_json_key(&w, "addr");
	vg_json_str(&w, c->addr);
	vg_json_key(&w, "allowed");
	vg_json_bool(&w, c->allowed);
	vg_json_key(&w, "rule");
	vg_json_str(&w, c->rule);
	vg_json_key(&w, "error");
	vg_json_str(&w, c->error);
	vg_json_key(&w, "up");
	vg_json_int(&w, (long long)c->up);
	vg_json_key(&w, "down");
	vg_json_int(&w, (long long)c->down);
	vg_json_key(&w, "cgroup");
	vg_json_int(&w, (long long)c->cgroup);
	vg_json_obj_end(&w);
}

/* Writes c's line to the log, whole, once; log_lock held. */
static void
log_locked(struct proxy *px, struct conn *cn)
{
	struct vg_buf b = VG_BUF_INIT;
	ssize_t n;

	if (cn->logged)
		return;
	cn->logged = 1;
	vg_egress_record(&cn->c, &b);
	vg_buf_add(&b, "\n", 1);
	n = write(px->logfd, b.data, b.len);
	(void)n;
	vg_buf_release(&b);
}

/* Writes c's line to the log (c is the first member of a struct conn). */
static void
log_conn(struct proxy *px, struct vg_egress_conn *c)
{
	pthread_mutex_lock(&px->log_lock);
	log_locked(px, (struct conn *)(void *)c);
	pthread_mutex_unlock(&px->log_lock);
}

/*
 * The stopper thread: at SIGTERM (blocked in every other thread) logs
 * the connections still being served, with their bytes so far, and
 * ends the proxy: vigil reads every connection's record, even of one a
 * task left open.
 */
static void *
stopper(void *arg)
{
	struct proxy *px = arg;
	struct conn *cn;
	sigset_t term;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	while (sigwait(&term, &sig) != 0)
		;
	pthread_mutex_lock(&px->log_lock);
	for (cn = px->conns; cn != NULL; cn = cn->next)
		if (cn->c.host[0] != '\0' && cn->c.rule[0] != '\0')
			log_locked(px, cn);	/* decided: bytes so far */
	_exit(0);
}

/* Sends (out set) or receives exactly len bytes at p; 0, or -1 at an
 * error, the end or the receive timeout. */
static int
xfer_all(int fd, void *p, size_t len, int out)
{
	char *s = p;
	ssize_t n;

	while (len > 0) {
		n = out ? send(fd, s, len, MSG_NOSIGNAL) : recv(fd, s, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes all of len bytes of p to fd; 0 or -1. */
static int
write_all(int fd, const void *p, size_t len)
{
	return xfer_all(fd, (void *)(uintptr_t)p, len, 1);
}

/* Reads exactly len bytes; 0 or -1. */
static int
read_all(int fd, void *p, size_t len)
{
	return xfer_all(fd, p, len, 0);
}

/* Copies the client's host text into c->host, non-printable bytes as
 * '?' (it goes into logs and a reply). */
static void
set_host(struct vg_egress_conn *c, const char *h, size_t len)
{
	size_t i;

	if (len >= sizeof(c->host))
		len = sizeof(c->host) - 1;
	for (i = 0; i < len; i++)
		c->host[i] = h[i] > 0x20 && h[i] < 0x7f ? h[i] : '?';
	c->host[len] = '\0';
}

/* Whether the host a client named is a plain name or address (no
 * pattern characters, nothing a pattern would refuse). */
static int
host_ok(const char *h)
{
	struct vg_egress_pat p;
	char why[128];

	if (strchr(h, '*') != NULL || strchr(h, '?') != NULL)
		return 0;
	if (h[0] == '[') {
		char b[300];

		snprintf(b, sizeof(b), "%s:1", h);
		return vg_egress_pat_parse(b, &p, why, sizeof(why)) == 0;
	}
	return vg_egress_pat_parse(h, &p, why, sizeof(why)) == 0;
}

/* Connects to one address within CONNECT_SECS; the socket or -1. */
static int
connect_one(const struct sockaddr *sa, socklen_t salen)
{
	struct pollfd pfd;
	int fd, err = 0, one = 1;
	socklen_t elen = sizeof(err);

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (fd < 0)
		return -1;
	if (connect(fd, sa, salen) != 0) {
		if (errno != EINPROGRESS)
			goto fail;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, CONNECT_SECS * 1000) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 ||
		    err != 0) {
			errno = err != 0 ? err : ETIMEDOUT;
			goto fail;
		}
	}
	if (fcntl(fd, F_SETFL, 0) != 0)
		goto fail;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/*
 * Decides for c->host:c->port and, when allowed, resolves and connects:
 * returns the socket, or -1 with c->allowed 0 (refused) or c->error set
 * (allowed, but no address answered).
 */
static int
open_upstream(struct proxy *px, struct vg_egress_conn *c)
{
	struct addrinfo hints, *res = NULL, *ai;
	char name[300], port[8];
	const char *rule;
	size_t n;
	int fd = -1, rc;

	if (!host_ok(c->host)) {
		c->allowed = 0;
		c->rule = "not a host name or address";
		return -1;
	}
	if (c->rule == no_owner) {
		c->allowed = 0;
		return -1;
	}
	c->allowed = vg_egress_decide(px->rules, c->host, c->port, &c->rule);
	if (!c->allowed)
		return -1;
	n = strlen(c->host);
	if (c->host[0] == '[' && n >= 2)
		snprintf(name, sizeof(name), "%.*s", (int)(n - 2), c->host + 1);
	else
		vg_strlcpy(name, c->host, sizeof(name));
	snprintf(port, sizeof(port), "%u", c->port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = vg_egress_is_ip(c->host) ? AI_NUMERICHOST : 0;
	if ((rc = getaddrinfo(name, port, &hints, &res)) != 0) {
		c->error = rc == EAI_NONAME ? "no such host" :
		    "name resolution failed";
		return -1;
	}
	c->error = "connection refused";
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		char a[64];
		void *bin = ai->ai_family == AF_INET ?
		    (void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
		    (void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;

		if (inet_ntop(ai->ai_family, bin, a, sizeof(a)) == NULL)
			continue;
		if (vg_egress_denied_addr(px->rules, a, c->port, &rule)) {
			/* An allowed name pointing at a denied address. */
			c->allowed = 0;
			c->rule = rule;
			c->error = NULL;
			vg_strlcpy(c->addr, a, sizeof(c->addr));
			break;
		}
		if ((fd = connect_one(ai->ai_addr, ai->ai_addrlen)) >= 0) {
			vg_strlcpy(c->addr, a, sizeof(c->addr));
			c->error = NULL;
		} else if (errno == ETIMEDOUT)
			c->error = "connection timed out";
		else if (errno == ENETUNREACH || errno == EHOSTUNREACH)
			c->error = "host unreachable";
	}
	freeaddrinfo(res);
	return fd;
}

/* Moves what src has to dst; bytes moved, 0 at end, -1 on error. */
static ssize_t
pump(int src, int dst, int pipefd[2], char *buf)
{
	ssize_t n, m, done = 0;

	if (pipefd[0] >= 0) {
		n = splice(src, NULL, pipefd[1], NULL, RELAY_CHUNK,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EAGAIN)
			return -2;
		if (n <= 0)
			return n;
		while (done < n) {
			m = splice(pipefd[0], NULL, dst, NULL, (size_t)(n - done),
			    SPLICE_F_MOVE);
			if (m <= 0)
				return -1;
			done += m;
		}
		return n;
	}
	n = recv(src, buf, RELAY_CHUNK, MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return -2;
	if (n <= 0)
		return n;
	return write_all(dst, buf, (size_t)n) == 0 ? n : -1;
}

/* Relays between the client a and the host b until both ends closed;
 * counts bytes into c. */
static void
relay(int a, int b, struct vg_egress_conn *c)
{
	int pipes[2][2] = { { -1, -1 }, { -1, -1 } }, open_[2] = { 1, 1 };
	struct timeval tv = { 0, 0 };
	struct pollfd pfd[2];
	char *buf = NULL;
	ssize_t n;
	int i, nfds;

	(void)setsockopt(a, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (pipe2(pipes[0], O_CLOEXEC) != 0 || pipe2(pipes[1],
	    O_CLOEXEC) != 0) {
		for (i = 0; i < 2; i++)
			if (pipes[i][0] >= 0) {
				close(pipes[i][0]);
				close(pipes[i][1]);
				pipes[i][0] = pipes[i][1] = -1;
			}
		buf = vg_xmalloc(RELAY_CHUNK);
	} else {
		(void)fcntl(pipes[0][1], F_SETPIPE_SZ, RELAY_CHUNK);
		(void)fcntl(pipes[1][1], F_SETPIPE_SZ, RELAY_CHUNK);
	}
	while (open_[0] || open_[1]) {
		nfds = 0;
		pfd[0].fd = open_[0] ? a : -1;
		pfd[1].fd = open_[1] ? b : -1;
		pfd[0].events = pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].revents == 0)
				continue;
			nfds++;
			n = pump(i == 0 ? a : b, i == 0 ? b : a, pipes[i], buf);
			if (n == -2)
				continue;
			if (n > 0) {
				if (i == 0)
					c->up += (uint64_t)n;
				else
					c->down += (uint64_t)n;
				continue;
			}
			open_[i] = 0;
			if (n < 0) {
				open_[0] = open_[1] = 0;
				break;
			}
			(void)shutdown(i == 0 ? b : a, SHUT_WR);
		}
		if (nfds == 0)
			break;
	}
	for (i = 0; i < 2; i++)
		if (pipes[i][0] >= 0) {
			close(pipes[i][0]);
			close(pipes[i][1]);
		}
	free(buf);
}

/* ---- SOCKS5 (RFC 1928) ---- */

/* Sends a SOCKS5 reply with code rep and an empty bound address. */
static int
socks_reply(int fd, unsigned char rep)
{
	unsigned char r[10] = { 5, rep, 0, 1, 0, 0, 0, 0, 0, 0 };

	return write_all(fd, r, sizeof(r));
}

static void
serve_socks(struct proxy *px, int fd, struct vg_egress_conn *c)
{
	unsigned char h[4], m[255], len, p[2], a[16];
	char txt[300];
	int up;

	c->proto = "socks5";
	/* version (read), methods: vigil asks for no authentication */
	if (read_all(fd, &len, 1) != 0 || read_all(fd, m, len) != 0 ||
	    memchr(m, 0, len) == NULL) {
		(void)write_all(fd, "\x05\xff", 2);
		return;
	}
	if (write_all(fd, "\x05\x00", 2) != 0 || read_all(fd, h, 4) != 0 ||
	    h[0] != 5)
		return;
	if (h[1] != 1) {		/* BIND, UDP ASSOCIATE */
		snprintf(c->host, sizeof(c->host), "(command %u)", h[1]);
		c->rule = "only CONNECT is relayed";
		(void)socks_reply(fd, 7);
		log_conn(px, c);
		return;
	}
	switch (h[3]) {
	case 1:
		if (read_all(fd, a, 4) != 0)
			return;
		inet_ntop(AF_INET, a, c->host, sizeof(c->host));
		break;
	case 4:
		if (read_all(fd, a, 16) != 0)
			return;
		inet_ntop(AF_INET6, a, txt, 64);
		snprintf(c->host, sizeof(c->host), "[%.64s]", txt);
		break;
	case 3:
		if (read_all(fd, &len, 1) != 0 || read_all(fd, txt, len) != 0)
			return;
		set_host(c, txt, len);
		break;
	default:
		(void)socks_reply(fd, 8);
		return;
	}
	if (read_all(fd, p, 2) != 0)
		return;
	c->port = (unsigned)p[0] << 8 | p[1];
	up = open_upstream(px, c);
	if (up < 0) {
		(void)socks_reply(fd, !c->allowed ? 2 : c->error != NULL &&
		    strcmp(c->error, "host unreachable") == 0 ? 4 : 5);
		log_conn(px, c);
		return;
	}
	if (socks_reply(fd, 0) == 0)
		relay(fd, up, c);
	close(up);
	log_conn(px, c);
}

/* ---- HTTP ---- */

/* Sends an error reply with a one-line body. */
static void
http_error(int fd, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
http_error(int fd, const char *status, const char *fmt, ...)
{
	char body[700], head[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: "
	    "text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
	    status, strlen(body));
	if (write_all(fd, head, (size_t)n) == 0)
		(void)write_all(fd, body, strlen(body));
}

/* Splits "host:port" or "[v6]:port" (port optional: def) into c. */
static int
split_hostport(const char *s, size_t len, unsigned def,
    struct vg_egress_conn *c)
{
	const char *colon = NULL, *end = s + len;
	unsigned long port = def;
	char *stop;
	char num[8];

	if (len > 0 && s[0] == '[') {
		const char *rb = memchr(s, ']', len);

		if (rb == NULL)
			return -1;
		if (rb + 1 < end && rb[1] == ':')
			colon = rb + 1;
		else if (rb + 1 != end)
			return -1;
	} else
		colon = memchr(s, ':', len);
	if (colon != NULL) {
		if (end - colon - 1 <= 0 || end - colon - 1 >= (long)sizeof(num))
			return -1;
		memcpy(num, colon + 1, (size_t)(end - colon - 1));
		num[end - colon - 1] = '\0';
		port = strtoul(num, &stop, 10);
		if (*stop != '\0' || port == 0 || port > 65535)
			return -1;
		len = (size_t)(colon - s);
	}
	if (len == 0 || port == 0)
		return -1;
	set_host(c, s, len);
	c->port = (unsigned)port;
	return 0;
}

/* Removes the header lines named name (a "Proxy-" prefix when it ends in
 * '-') from the header in b, from its second line on. */
static void
drop_headers(struct vg_buf *b, const char *name)
{
	char *p = memchr(b->data, '\n', b->len), *eol;
	size_t nl = strlen(name);

	while (p != NULL && (size_t)(p + 1 - b->data) < b->len) {
		p++;
		eol = memchr(p, '\n', b->len - (size_t)(p - b->data));
		if (eol == NULL)
			break;
		if (strncasecmp(p, name, nl) == 0 && (name[nl - 1] == '-' ||
		    p[nl] == ':')) {
			memmove(p, eol + 1, b->len - (size_t)(eol + 1 - b->data));
			b->len -= (size_t)(eol + 1 - p);
			b->data[b->len] = '\0';
			p--;
			continue;
		}
		p = eol;
	}
}

static void
serve_http(struct proxy *px, int fd, char first, struct vg_egress_conn *c)
{
	struct vg_buf head = VG_BUF_INIT, out = VG_BUF_INIT;
	char buf[4096], *end = NULL, *sp1, *sp2, *eol;
	const char *path;
	size_t hlen;
	ssize_t n;
	int up = -1;

	vg_buf_add(&head, &first, 1);
	while ((end = memmem(head.data, head.len, "\r\n\r\n", 4)) == NULL) {
		if (head.len > HEAD_MAX) {
			http_error(fd, "431 Request Header Fields Too Large",
			    "vigil egress proxy: the request header is over "
			    "%d bytes\n", HEAD_MAX);
			goto out;
		}
		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0)
			goto out;
		vg_buf_add(&head, buf, (size_t)n);
	}
	hlen = (size_t)(end + 4 - head.data);
	eol = memchr(head.data, '\r', hlen);
	sp1 = memchr(head.data, ' ', (size_t)(eol - head.data));
	sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) :
	    NULL;
	if (sp1 == NULL || sp2 == NULL) {
		http_error(fd, "400 Bad Request", "vigil egress proxy: not an "
		    "HTTP request\n");
		goto out;
	}
	if ((size_t)(sp1 - head.data) == 7 &&
	    memcmp(head.data, "CONNECT", 7) == 0) {
		c->proto = "connect";
		if (split_hostport(sp1 + 1, (size_t)(sp2 - sp1 - 1), 0,
		    c) != 0) {
			http_error(fd, "400 Bad Request", "vigil egress proxy: "
			    "CONNECT needs HOST:PORT\n");
			goto out;
		}
	} else {
		const char *u = sp1 + 1, *hs, *he;

		c->proto = "http";
		if ((size_t)(sp2 - u) < 8 || strncasecmp(u, "http://", 7) != 0) {
			http_error(fd, "400 Bad Request", "vigil egress proxy: "
			    "a proxy request names an absolute http:// URI "
			    "(https goes through CONNECT)\n");
			goto out;
		}
		hs = u + 7;
		for (he = hs; he < sp2 && *he != '/' && *he != '?'; he++)
			;
		if (split_hostport(hs, (size_t)(he - hs), 80, c) != 0) {
			http_error(fd, "400 Bad Request", "vigil egress proxy: "
			    "no host in the URI\n");
			goto out;
		}
		path = he;
		/* the request line with the path alone */
		vg_buf_add(&out, head.data, (size_t)(sp1 + 1 - head.data));
		if (path == sp2)
			vg_buf_add(&out, "/", 1);
		vg_buf_add(&out, path, (size_t)(head.data + hlen - path));
		drop_headers(&out, "Proxy-");
	}
	up = open_upstream(px, c);
	if (up < 0) {
		if (!c->allowed)
			http_error(fd, "403 Forbidden", "vigil egress proxy: "
			    "%s:%u refused (%s): isolation.network does not "
			    "allow it\n", c->host, c->port, c->rule);
		else
			http_error(fd, "502 Bad Gateway", "vigil egress proxy: "
			    "%s:%u: %s\n", c->host, c->port, c->error);
		goto out;
	}
	if (strcmp(c->proto, "connect") == 0) {
		if (write_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n",
		    39) != 0)
			goto out;
	} else if (write_all(up, out.data, out.len) != 0)
		goto out;
	else
		c->up += out.len;
	/* what the client sent after the header goes on */
	if (head.len > hlen) {
		if (write_all(up, head.data + hlen, head.len - hlen) != 0)
			goto out;
		c->up += head.len - hlen;
	}
	relay(fd, up, c);
out:
	if (c->host[0] != '\0')
		log_conn(px, c);
	if (up >= 0)
		close(up);
	vg_buf_release(&head);
	vg_buf_release(&out);
}

static void *
serve_client(void *arg)
{
	struct client *cl = arg;
	struct proxy *px = cl->px;
	struct timeval tv = { HANDSHAKE_SECS, 0 };
	struct conn cn;
	struct vg_egress_conn *cp = &cn.c;
	char first;

	memset(&cn, 0, sizeof(cn));
	cp->rule = "";
	pthread_mutex_lock(&px->log_lock);
	cn.next = px->conns;
	if (px->conns != NULL)
		px->conns->prev = &cn;
	px->conns = &cn;
	pthread_mutex_unlock(&px->log_lock);
	if (px->diagfd >= 0) {
		pthread_mutex_lock(&px->diag_lock);
		if (vg_egress_peer_cgroup(px->diagfd, &cl->peer, &px->local,
		    &cp->cgroup) != 0)
			cp->rule = no_owner;	/* refused, once it says where */
		pthread_mutex_unlock(&px->diag_lock);
	}
	/* Whose cgroup this is can be asked now, while the client lives
	 * (a container's is removed when it ends): vigil is told at
	 * once, the record follows when the connection ends. */
	if (cp->cgroup != 0) {
		char line[48];
		int k = snprintf(line, sizeof(line), "{\"open\":%llu}\n",
		    (unsigned long long)cp->cgroup);
		ssize_t w = write(px->logfd, line, (size_t)k);

		(void)w;
	}
	(void)setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recv(cl->fd, &first, 1, 0) == 1) {
		if (first == 5)
			serve_socks(px, cl->fd, cp);
		else
			serve_http(px, cl->fd, first, cp);
	}
	pthread_mutex_lock(&px->log_lock);
	if (cn.prev != NULL)
		cn.prev->next = cn.next;
	else
		px->conns = cn.next;
	if (cn.next != NULL)
		cn.next->prev = cn.prev;
	pthread_mutex_unlock(&px->log_lock);
	close(cl->fd);
	free(cl);
	return NULL;
}

int
vg_egress_serve(int lfd, int diagfd, const struct vg_egress_rules *r,
    int logfd)
{
	struct proxy px;
	struct client *cl;
	struct sockaddr_in peer;
	socklen_t plen, llen = sizeof(px.local);
	pthread_attr_t attr;
	pthread_t t;
	sigset_t term;
	int fd, one = 1;

	memset(&px, 0, sizeof(px));
	px.rules = r;
	px.logfd = logfd;
	px.diagfd = diagfd;
	if (diagfd >= 0 && (getsockname(lfd, (struct sockaddr *)&px.local,
	    &llen) != 0 || px.local.sin_family != AF_INET))
		return errno != 0 ? errno : EAFNOSUPPORT;
	pthread_mutex_init(&px.log_lock, NULL);
	pthread_mutex_init(&px.diag_lock, NULL);
	/* SIGTERM is the stopper's alone (threads inherit the mask). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, stopper, &px) != 0)
		pthread_sigmask(SIG_UNBLOCK, &term, NULL);	/* as before */
	for (;;) {
		plen = sizeof(peer);
		memset(&peer, 0, sizeof(peer));
		fd = accept4(lfd, (struct sockaddr *)&peer, &plen,
		    SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				usleep(10000);	/* until a connection ends */
				continue;
			}
			break;
		}
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		cl = vg_xmalloc(sizeof(*cl));
		cl->px = &px;
		cl->fd = fd;
		cl->peer = peer;
		if (pthread_create(&t, &attr, serve_client, cl) != 0) {
			close(fd);
			free(cl);
		}
	}
	pthread_attr_destroy(&attr);
	return errno;
}
