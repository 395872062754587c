/*
 * test-egress-proxy.c - the egress proxy with real traffic on loopback:
 * HTTP CONNECT, plain HTTP and SOCKS5 to an echo server it allows, and
 * to a listener and addresses it does not, refused in each protocol's
 * terms; every connection's log line (host, port, bytes, rule).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/egress-proxy.h"
#include "common/buf.h"
#include "common/egress-match.h"

static unsigned echo_port, closed_port, proxy_port;
static pid_t echo_pid, proxy_pid;
static char log_path[] = "/tmp/vg-test-egress-log-XXXXXX";

/* A listening socket on 127.0.0.1, any port; *port gets it. */
static int
listen_any(unsigned *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

/* The echo server: one connection at a time, each echoed to its end. */
static void
echo_main(int lfd)
{
	char buf[65536];
	ssize_t n;
	int fd;

	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(1);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(fd, buf, (size_t)n) != n)
				break;
		close(fd);
	}
}

static int
setup(void **state)
{
	struct vg_strv allow = VG_STRV_INIT, deny = VG_STRV_INIT;
	static struct vg_egress_rules rules;
	char why[256];
	int efd, pfd, cfd, logfd;

	(void)state;
	if ((logfd = mkstemp(log_path)) < 0)
		return -1;
	if ((efd = listen_any(&echo_port)) < 0 ||
	    (cfd = listen_any(&closed_port)) < 0 ||
	    (pfd = listen_any(&proxy_port)) < 0)
		return -1;
	close(cfd);	/* a port nothing listens on (not listed anyway) */
	vg_strv_pushf(&allow, "127.0.0.1:%u", echo_port);
	vg_strv_push(&allow, "localhost");
	vg_strv_pushf(&deny, "127.0.0.1:%u", closed_port);
	if (vg_egress_rules_init(&rules, &allow, &deny, why,
	    sizeof(why)) != 0)
		return -1;
	vg_strv_release(&allow);
	vg_strv_release(&deny);
	if ((echo_pid = fork()) == 0)
		echo_main(efd);
	if ((proxy_pid = fork()) == 0)
		_exit(vg_egress_serve(pfd, -1, &rules, logfd));
	close(efd);
	close(pfd);
	close(logfd);
	vg_egress_rules_release(&rules);
	return echo_pid > 0 && proxy_pid > 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	kill(proxy_pid, SIGKILL);
	kill(echo_pid, SIGKILL);
	waitpid(proxy_pid, NULL, 0);
	waitpid(echo_pid, NULL, 0);
	unlink(log_path);
	return 0;
}

/* A connection to the proxy. */
static int
to_proxy(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)proxy_port);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void
send_all(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* Reads until the peer closes or len - 1 bytes came; NUL-terminated. */
static size_t
read_to_end(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return got;
}

/* Reads exactly n bytes. */
static void
read_n(int fd, void *p, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, (char *)p + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
}

/* The log's last line holding want (the proxy logs when a connection
 * ended: wait a little for it); static. */
static const char *
logged(const char *want)
{
	static char buf[65536];
	const char *line = NULL, *p;
	int i, fd;

	for (i = 0; i < 200 && line == NULL; i++) {
		fd = open(log_path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		read_to_end(fd, buf, sizeof(buf));
		close(fd);
		for (p = buf; (p = strstr(p, want)) != NULL; p++)
			line = p;
		if (line == NULL)
			usleep(10000);
	}
	if (line == NULL)
		fail_msg("no log line holds '%s':\n%s", want, buf);
	while (line > buf && line[-1] != '\n')
		line--;
	return line;
}

/* Sends text on fd, ends the sending side and checks the echo. */
static void
echoed(int fd, const char *text)
{
	char buf[512];

	send_all(fd, text, strlen(text));
	shutdown(fd, SHUT_WR);
	read_to_end(fd, buf, sizeof(buf));
	assert_string_equal(buf, text);
	close(fd);
}

/* Sends req as a new client; the whole reply must hold each of the
 * NULL-terminated strings that follow. */
static void
reply_holds(const char *req, ...)
{
	static char buf[4096];
	const char *want;
	va_list ap;
	int fd = to_proxy();

	send_all(fd, req, strlen(req));
	read_to_end(fd, buf, sizeof(buf));
	close(fd);
	va_start(ap, req);
	while ((want = va_arg(ap, const char *)) != NULL)
		if (strstr(buf, want) == NULL)
			fail_msg("no '%s' in the reply to '%s':\n%s", want, req,
			    buf);
	va_end(ap);
}

static void
test_connect(void **state)
{
	char req[128], buf[512], want[256];
	int fd = to_proxy();

	(void)state;
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: "
	    "x\r\n\r\nhello", echo_port);
	send_all(fd, req, strlen(req));
	read_n(fd, buf, 39);
	buf[39] = '\0';
	assert_string_equal(buf, "HTTP/1.1 200 Connection established\r\n\r\n");
	/* "hello" came before the reply, echoed after it */
	read_n(fd, buf, 5);
	buf[5] = '\0';
	assert_string_equal(buf, "hello");
	echoed(fd, " world");
	snprintf(want, sizeof(want), "\"proto\":\"connect\",\"host\":"
	    "\"127.0.0.1\",\"port\":%u,\"addr\":\"127.0.0.1\",\"allowed\":"
	    "true,\"rule\":\"allow 127.0.0.1:%u\",\"error\":null,\"up\":11,"
	    "\"down\":11", echo_port, echo_port);
	logged(want);
}

static void
test_connect_refused(void **state)
{
	char req[128], want[256];

	(void)state;
	/* deny wins, and a port of an allowed address not listed */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n",
	    closed_port);
	snprintf(want, sizeof(want), "127.0.0.1:%u refused (deny 127.0.0.1:%u)"
	    ": isolation.network does not allow it\n", closed_port,
	    closed_port);
	reply_holds(req, "HTTP/1.1 403 Forbidden\r\n", want, NULL);
	snprintf(want, sizeof(want), "\"port\":%u,\"addr\":\"\",\"allowed\":"
	    "false,\"rule\":\"deny 127.0.0.1:%u\"", closed_port, closed_port);
	logged(want);
	reply_holds("CONNECT 10.255.255.1:22 HTTP/1.1\r\n\r\n",
	    "10.255.255.1:22 refused (not listed)", NULL);
	logged("\"host\":\"10.255.255.1\",\"port\":22,\"addr\":\"\","
	    "\"allowed\":false,\"rule\":\"not listed\"");
	/* a pattern is not a host */
	reply_holds("CONNECT *.evil.org:443 HTTP/1.1\r\n\r\n", "403 Forbidden",
	    "(not a host name or address)", NULL);
	reply_holds("CONNECT nohostport HTTP/1.1\r\n\r\n", "400 Bad Request",
	    "CONNECT needs HOST:PORT", NULL);
}

static void
test_plain_http(void **state)
{
	char req[256], buf[1024], want[256];
	int fd = to_proxy();

	(void)state;
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/simple/numpy/?x=1 "
	    "HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n"
	    "Proxy-Authorization: Basic eDp5\r\nAccept: */*\r\n\r\n",
	    echo_port);
	send_all(fd, req, strlen(req));
	shutdown(fd, SHUT_WR);
	read_to_end(fd, buf, sizeof(buf));
	close(fd);
	/* the echo shows what the host received: origin form, no Proxy-
	 * headers */
	assert_string_equal(buf, "GET /simple/numpy/?x=1 HTTP/1.1\r\nHost: "
	    "127.0.0.1\r\nAccept: */*\r\n\r\n");
	snprintf(want, sizeof(want), "\"proto\":\"http\",\"host\":\"127.0.0.1\""
	    ",\"port\":%u", echo_port);
	logged(want);

	reply_holds("GET http://10.255.255.1/ HTTP/1.1\r\n\r\n",
	    "403 Forbidden", "10.255.255.1:80 refused (not listed)", NULL);
	reply_holds("GET /relative HTTP/1.1\r\n\r\n", "400 Bad Request",
	    "absolute http:// URI", NULL);
	reply_holds("garbage\r\n\r\n", "not an HTTP request", NULL);
}

/* A SOCKS5 greeting and CONNECT request of atyp with addr (alen bytes;
 * a name: its length first); returns the socket after reading the
 * reply into rep (10 bytes). */
static int
socks(unsigned char atyp, const void *addr, size_t alen, unsigned port,
    unsigned char rep[10])
{
	unsigned char req[300];
	size_t n = 0;
	int fd = to_proxy();

	send_all(fd, "\x05\x01\x00", 3);
	read_n(fd, req, 2);
	assert_int_equal(req[0], 5);
	assert_int_equal(req[1], 0);
	req[n++] = 5;
	req[n++] = 1;
	req[n++] = 0;
	req[n++] = atyp;
	if (atyp == 3)
		req[n++] = (unsigned char)alen;
	memcpy(req + n, addr, alen);
	n += alen;
	req[n++] = (unsigned char)(port >> 8);
	req[n++] = (unsigned char)port;
	send_all(fd, req, n);
	read_n(fd, rep, 10);
	return fd;
}

/* A SOCKS5 request the proxy must refuse with reply 2. */
static void
socks_refused(unsigned char atyp, const void *addr, size_t alen,
    unsigned port)
{
	unsigned char rep[10];

	close(socks(atyp, addr, alen, port, rep));
	assert_int_equal(rep[1], 2);
}

static void
test_socks(void **state)
{
	unsigned char rep[10], v4[4], v6[16];
	char want[256];
	int fd;

	(void)state;
	inet_pton(AF_INET, "127.0.0.1", v4);
	fd = socks(1, v4, 4, echo_port, rep);
	assert_int_equal(rep[1], 0);
	echoed(fd, "ping");
	snprintf(want, sizeof(want), "\"proto\":\"socks5\",\"host\":"
	    "\"127.0.0.1\",\"port\":%u,\"addr\":\"127.0.0.1\",\"allowed\":"
	    "true", echo_port);
	logged(want);

	/* a name, resolved by the proxy (localhost: any port) */
	fd = socks(3, "localhost", 9, echo_port, rep);
	assert_int_equal(rep[1], 0);
	echoed(fd, "name");
	snprintf(want, sizeof(want), "\"host\":\"localhost\",\"port\":%u,"
	    "\"addr\":\"127.0.0.1\",\"allowed\":true,\"rule\":\"allow "
	    "localhost\"", echo_port);
	logged(want);

	/* refused, reply 2: an allowed name whose address is denied, and
	 * addresses not listed (the host's IPv6 loopback too) */
	inet_pton(AF_INET, "10.255.255.1", v4);
	inet_pton(AF_INET6, "::1", v6);
	socks_refused(3, "localhost", 9, closed_port);
	socks_refused(1, v4, 4, 80);
	socks_refused(4, v6, 16, echo_port);
	socks_refused(3, "example.invalid", 15, 443);
	snprintf(want, sizeof(want), "\"host\":\"localhost\",\"port\":%u,"
	    "\"addr\":\"127.0.0.1\",\"allowed\":false,\"rule\":\"deny "
	    "127.0.0.1:%u\"", closed_port, closed_port);
	logged(want);
	snprintf(want, sizeof(want), "\"host\":\"[::1]\",\"port\":%u,"
	    "\"addr\":\"\",\"allowed\":false,\"rule\":\"not listed\"",
	    echo_port);
	logged(want);
}

/* What SOCKS5 does not relay: UDP, BIND; no method vigil takes. */
static void
test_socks_other(void **state)
{
	unsigned char rep[10];
	int fd = to_proxy();

	(void)state;
	send_all(fd, "\x05\x01\x00", 3);
	read_n(fd, rep, 2);
	send_all(fd, "\x05\x03\x00\x01\x00\x00\x00\x00\x00\x35", 10);
	read_n(fd, rep, 10);
	assert_int_equal(rep[1], 7);
	close(fd);
	logged("\"host\":\"(command 3)\",\"port\":0,\"addr\":\"\",\"allowed\":"
	    "false,\"rule\":\"only CONNECT is relayed\"");

	fd = to_proxy();
	send_all(fd, "\x05\x01\x02", 3);	/* user/password only */
	read_n(fd, rep, 2);
	assert_int_equal(rep[1], 0xff);
	close(fd);
}

static void
test_record(void **state)
{
	struct vg_egress_conn c;
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.proto = "connect";
	snprintf(c.host, sizeof(c.host), "a\"b");
	c.port = 443;
	c.allowed = 1;
	c.rule = "allow a\"b";
	c.error = "no such host";
	c.up = 5000000000ULL;
	vg_egress_record(&c, &b);
	assert_string_equal(vg_buf_str(&b), "{\"proto\":\"connect\",\"host\":"
	    "\"a\\\"b\",\"port\":443,\"addr\":\"\",\"allowed\":true,\"rule\":"
	    "\"allow a\\\"b\",\"error\":\"no such host\",\"up\":5000000000,"
	    "\"down\":0,\"cgroup\":0}");
	vg_buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_plain_http),
		cmocka_unit_test(test_socks),
		cmocka_unit_test(test_socks_other),
		cmocka_unit_test(test_record),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
