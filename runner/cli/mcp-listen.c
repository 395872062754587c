/*
 * mcp-listen.c - where vigil mcp --listen listens, and its bearer
 * token.  Only the machine itself may connect: a TCP address must be a
 * loopback one (no name is looked up but localhost), and a unix socket
 * is made with mode 0600 by bind(2) itself (under umask 0177), which
 * never follows or replaces what is at its path; a dead socket of this
 * user's left by an earlier server is removed first, nothing else.  The
 * token comes from getrandom(2), or from a file only its owner can read,
 * opened without following a link.  The HTTP checks that use both are
 * mcp-http.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/path.h"
#include "runner/cli/mcp-http.h"

/* What --listen takes, for refusals. */
#define VALID_ADDR \
	"valid: 127.0.0.1:PORT (any 127.x.y.z), [::1]:PORT, localhost:PORT, " \
	"PORT 0 for a free one, or unix:PATH"

/* Is the socket at path dead (nothing accepts on it)? */
static int
socket_dead(const char *path)
{
	struct sockaddr_un sa;
	int fd, dead;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	dead = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    errno == ECONNREFUSED;
	close(fd);
	return dead;
}

/* Listens on the unix socket path. */
static int
listen_unix(const char *addr, const char *path, struct vg_mcp_listen *l,
    struct vg_err *e)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd, rc;

	if (path[0] == '\0' || strlen(path) >= sizeof(sa.sun_path))
		return vg_err_set(e, VG_EINVAL, "--listen '%s': a unix socket "
		    "path of 1 to %zu bytes expected", addr,
		    sizeof(sa.sun_path) - 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
		    !socket_dead(path))
			return vg_err_set(e, VG_EDENIED, "--listen '%s': '%s' "
			    "exists (%s): refused, remove it or choose another "
			    "path", addr, path, S_ISLNK(st.st_mode) ?
			    "a symbolic link" : S_ISSOCK(st.st_mode) ?
			    (st.st_uid != geteuid() ? "another user's socket" :
			    "a socket a server listens on") : "not a socket");
		if (unlink(path) != 0)
			return vg_err_errno(e, "--listen '%s': removing the "
			    "dead socket", addr);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		return vg_err_errno(e, "--listen '%s': socket", addr);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	/* bind makes the file: with this umask it is 0600 from the start,
	 * and it fails with EADDRINUSE on anything (a link) at path. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0) {
		vg_err_errno(e, "--listen '%s': bind", addr);
		close(fd);
		return -1;
	}
	if (lstat(path, &st) != 0 || listen(fd, 64) != 0) {
		vg_err_errno(e, "--listen '%s': listen", addr);
		close(fd);
		return -1;
	}
	l->fd = fd;
	l->is_unix = 1;
	l->path = vg_xstrdup(path);
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return 0;
}

/* Reads PORT (0 to 65535) of addr from p. */
static int
parse_port(const char *addr, const char *p, int *port, struct vg_err *e)
{
	long v = 0;

	if (*p == '\0')
		goto bad;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) > 65535)
			goto bad;
	}
	*port = (int)v;
	return 0;
bad:
	return vg_err_set(e, VG_EINVAL, "--listen '%s': the port is a number "
	    "from 0 to 65535 (%s)", addr, VALID_ADDR);
}

/* Listens on the loopback TCP address addr. */
static int
listen_tcp(const char *addr, struct vg_mcp_listen *l, struct vg_err *e)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	char host[64];
	const char *colon = strrchr(addr, ':');
	int fd, one = 1, port = 0, v6;
	size_t hl;

	if (colon == NULL || (hl = (size_t)(colon - addr)) == 0 ||
	    hl >= sizeof(host))
		return vg_err_set(e, VG_EINVAL, "--listen '%s': HOST:PORT or "
		    "unix:PATH expected (%s)", addr, VALID_ADDR);
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (parse_port(addr, colon + 1, &port, e) != 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	v6 = strcmp(host, "[::1]") == 0;
	if (v6) {
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		in6->sin6_port = htons((uint16_t)port);
		sl = sizeof(*in6);
	} else {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		sl = sizeof(*in4);
		if (strcmp(host, "localhost") == 0)
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
			return vg_err_set(e, VG_EINVAL, "--listen '%s': '%s' "
			    "is not a loopback address (%s)", addr, host,
			    VALID_ADDR);
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			return vg_err_set(e, VG_EDENIED, "--listen '%s': '%s' "
			    "is not a loopback address: the server is for "
			    "this machine only (%s)", addr, host, VALID_ADDR);
	}
	if ((fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) < 0)
		return vg_err_errno(e, "--listen '%s': socket", addr);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		vg_err_errno(e, "--listen '%s'", addr);
		close(fd);
		return -1;
	}
	l->fd = fd;
	l->port = ntohs(v6 ? in6->sin6_port : in4->sin_port);
	snprintf(l->host, sizeof(l->host), "%s", host);
	return 0;
}

int
vg_mcp_listen_open(const char *addr, struct vg_mcp_listen *l,
    struct vg_err *e)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (strncmp(addr, "unix:", 5) == 0)
		return listen_unix(addr, addr + 5, l, e);
	return listen_tcp(addr, l, e);
}

void
vg_mcp_listen_close(struct vg_mcp_listen *l)
{
	struct stat st;

	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	/* Only the socket made here: not what someone put in its place. */
	if (l->path != NULL && lstat(l->path, &st) == 0 &&
	    S_ISSOCK(st.st_mode) && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		(void)unlink(l->path);
	free(l->path);
	l->path = NULL;
}

/* Reads the token file path. */
static char *
token_read(const char *path, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	struct stat st;
	char what[64 + PATH_MAX];
	size_t k;
	int fd;

	snprintf(what, sizeof(what), "token file '%s'", path);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0) {
		if (errno == ELOOP)
			vg_err_set(e, VG_EDENIED, "%s is a symbolic link: "
			    "refused (name the file itself)", what);
		else
			vg_err_errno(e, "cannot open %s", what);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		vg_err_set(e, VG_EDENIED, "%s is not a regular file", what);
		goto bad;
	}
	if (vg_beneath_check(fd, geteuid(), 077, what, e) != 0)
		goto bad;
	if (vg_read_fd(fd, path, VG_MCP_TOKEN_MAX, &b, e) != 0)
		goto bad;
	close(fd);
	fd = -1;
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	if (b.len < 16) {
		vg_err_set(e, VG_EINVAL, "%s: the token is at least 16 "
		    "characters (found %zu)", what, b.len);
		goto bad;
	}
	for (k = 0; k < b.len; k++)
		if (b.data[k] <= 0x20 || b.data[k] >= 0x7f) {
			vg_err_set(e, VG_EINVAL, "%s: byte %zu of the token is "
			    "not a printable character (no spaces, one final "
			    "newline allowed)", what, k + 1);
			goto bad;
		}
	return vg_buf_detach(&b);
bad:
	if (fd >= 0)
		close(fd);
	vg_buf_release(&b);
	return NULL;
}

char *
vg_mcp_token(const char *path, struct vg_err *e)
{
	unsigned char rnd[32];
	char *t;
	size_t k;

	if (path != NULL)
		return token_read(path, e);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		vg_err_errno(e, "getrandom");
		return NULL;
	}
	t = vg_xmalloc(2 * sizeof(rnd) + 1);
	for (k = 0; k < sizeof(rnd); k++)
		snprintf(t + 2 * k, 3, "%02x", rnd[k]);
	return t;
}
