/*
 * test-http.c - the libcurl client against a small HTTP/1.1 server on a
 * unix socket in a temp dir (a forked child): replies, headers, bodies,
 * bounds, timeouts, the stop flag, sinks, connection errors, endpoints.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/http.h"
#include "helpers/unixhttpd.h"

/* Serves one request on fd: routes by path. */
static void
serve_one(int fd)
{
	char req[8192], method[16], path[256], reply[4096], big[2000];
	const char *body = "", *hdr, *cl;
	size_t len = 0, blen;
	ssize_t n;
	long want = 0;

	while (len < sizeof(req) - 1) {
		if ((n = read(fd, req + len, sizeof(req) - 1 - len)) <= 0)
			return;
		len += (size_t)n;
		req[len] = '\0';
		if ((hdr = strstr(req, "\r\n\r\n")) != NULL) {
			cl = strstr(req, "Content-Length: ");
			want = cl ? atol(cl + 16) : 0;
			if ((long)(len - (size_t)(hdr + 4 - req)) >= want)
				break;
		}
	}
	if (sscanf(req, "%15s %255s", method, path) != 2)
		return;
	hdr = strstr(req, "\r\n\r\n");
	blen = 0;
	if (strcmp(path, "/ok") == 0)
		body = "hello";
	else if (strcmp(path, "/big") == 0) {
		memset(big, 'b', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		body = big;
	} else if (strcmp(path, "/slow") == 0) {
		sleep(3);
		body = "late";
	} else if (strcmp(path, "/echo") == 0) {
		snprintf(reply, sizeof(reply), "%s|%.*s|%s", method, (int)want,
		    hdr + 4, strstr(req, "Content-Type: application/json") ?
		    "json" : "-");
		body = reply;
	} else if (strcmp(path, "/missing") == 0) {
		dprintf(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n"
		    "Connection: close\r\n\r\nnot found");
		return;
	}
	blen = strlen(body);
	dprintf(fd, "HTTP/1.1 200 OK\r\nApi-Version:  1.41 \r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", blen, body);
}

static int
setup(void **state)
{
	struct unixhttpd *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	if (unixhttpd_start(s, "vigil-http", serve_one) != 0)
		fail_msg("test server: %s", strerror(errno));
	*state = s;
	return 0;
}

static int
teardown(void **state)
{
	struct unixhttpd *s = *state;

	unixhttpd_stop(s);
	free(s);
	return 0;
}

/* Runs one request on a fresh client. */
static int
do_req(struct unixhttpd *s, struct vg_http_req *req,
    struct vg_http_resp *resp, struct vg_err *e)
{
	struct vg_http *h;
	int r;

	vg_err_init(e);
	assert_int_equal(vg_http_open(s->endpoint, &h, e), 0);
	r = vg_http_do(h, req, resp, e);
	vg_http_free(h);
	return r;
}

/* GET, status, body, a header trimmed; POST with a JSON body. */
static void
test_get_post(void **state)
{
	struct unixhttpd *s = *state;
	struct vg_http_req req = { .method = "GET", .path = "/ok" };
	struct vg_http_resp resp = { 0 };
	struct vg_err e;
	char v[16];

	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_int_equal(resp.status, 200);
	assert_string_equal(vg_buf_str(&resp.body), "hello");
	assert_int_equal(vg_http_resp_header(&resp, "api-version", v,
	    sizeof(v)), 1);
	assert_string_equal(v, "1.41");
	assert_int_equal(vg_http_resp_header(&resp, "Api", v, sizeof(v)), 0);

	req = (struct vg_http_req){ .method = "POST", .path = "/echo",
	    .body = "{\"a\":1}", .body_len = 7 };
	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_string_equal(vg_buf_str(&resp.body), "POST|{\"a\":1}|json");
	req = (struct vg_http_req){ .method = "DELETE", .path = "/echo" };
	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_string_equal(vg_buf_str(&resp.body), "DELETE||-");

	req = (struct vg_http_req){ .method = "GET", .path = "/missing" };
	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_int_equal(resp.status, 404);
	assert_string_equal(vg_buf_str(&resp.body), "not found");
	vg_http_resp_release(&resp);
}

/* Replies over max_body, timeouts, and the stop flag. */
static void
test_limits(void **state)
{
	struct unixhttpd *s = *state;
	struct vg_http_req req = { .method = "GET", .path = "/big",
	    .max_body = 1000 };
	struct vg_http_resp resp = { 0 };
	struct vg_err e;
	char want[256];

	assert_int_equal(do_req(s, &req, &resp, &e), VG_ELIMIT);
	snprintf(want, sizeof(want), "GET /big on %s: reply larger than 1000 "
	    "bytes", s->endpoint);
	assert_string_equal(e.msg, want);
	req.max_body = 0;
	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_int_equal(resp.body.len, 1999);

	req = (struct vg_http_req){ .method = "GET", .path = "/slow",
	    .timeout = 0.3 };
	assert_int_equal(do_req(s, &req, &resp, &e), VG_ETIMEOUT);
	snprintf(want, sizeof(want), "GET /slow on %s: Operation timed out",
	    s->endpoint);
	assert_memory_equal(e.msg, want, strlen(want));
	vg_http_resp_release(&resp);
}

static volatile sig_atomic_t stop_flag;

static void
on_alarm(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* A flag set by a signal handler abandons a request promptly. */
static void
test_stop_flag(void **state)
{
	struct unixhttpd *s = *state;
	struct vg_http_req req = { .method = "GET", .path = "/slow",
	    .stop = &stop_flag };
	struct vg_http_resp resp = { 0 };
	struct itimerval it = { .it_value = { 0, 200000 } };
	struct timeval t0, t1;
	struct vg_err e;
	char want[256];
	double secs;

	stop_flag = 0;
	signal(SIGALRM, on_alarm);
	gettimeofday(&t0, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	assert_int_equal(do_req(s, &req, &resp, &e), VG_ECANCELED);
	gettimeofday(&t1, NULL);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_usec - t0.tv_usec) / 1e6;
	assert_true(secs < 1.0);
	snprintf(want, sizeof(want), "GET /slow on %s: interrupted",
	    s->endpoint);
	assert_string_equal(e.msg, want);
	signal(SIGALRM, SIG_DFL);
	vg_http_resp_release(&resp);
}

/* Collects into a buffer, refusing after limit bytes. */
struct sink_state {
	struct vg_buf	got;
	size_t		limit;
};

static int
sink(void *arg, const char *p, size_t n)
{
	struct sink_state *ss = arg;

	if (ss->got.len + n > ss->limit)
		return VG_EIO;
	vg_buf_add(&ss->got, p, n);
	return 0;
}

/* Streaming sinks get the body; a refusal fails with their code. */
static void
test_sink(void **state)
{
	struct unixhttpd *s = *state;
	struct sink_state ss = { VG_BUF_INIT, 5000 };
	struct vg_http_req req = { .method = "GET", .path = "/big",
	    .sink = sink, .sink_arg = &ss, .max_body = 10 };
	struct vg_http_resp resp = { 0 };
	struct vg_err e;
	char want[256];

	assert_int_equal(do_req(s, &req, &resp, &e), 0);
	assert_int_equal(ss.got.len, 1999);
	assert_int_equal(resp.body.len, 0);
	vg_buf_reset(&ss.got);
	ss.limit = 100;
	assert_int_equal(do_req(s, &req, &resp, &e), VG_EIO);
	snprintf(want, sizeof(want), "GET /big on %s: reply refused by its "
	    "reader", s->endpoint);
	assert_string_equal(e.msg, want);
	vg_buf_release(&ss.got);
	vg_http_resp_release(&resp);
}

/* Connection errors, endpoint forms, escaping. */
static void
test_errors(void **state)
{
	struct vg_http_req req = { .method = "GET", .path = "/x" };
	struct vg_http_resp resp = { 0 };
	struct vg_http *h;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_http_open("unix:///nonexistent/s.sock", &h, &e),
	    0);
	assert_string_equal(vg_http_endpoint(h), "unix:///nonexistent/s.sock");
	assert_int_equal(vg_http_do(h, &req, &resp, &e), VG_EIO);
	assert_string_equal(e.msg, "GET /x on unix:///nonexistent/s.sock: "
	    "cannot connect: No such file or directory");
	vg_http_free(h);
	vg_http_free(NULL);

	assert_int_equal(vg_http_open("unix://rel.sock", &h, &e), VG_EINVAL);
	assert_null(h);
	assert_string_equal(e.msg, "endpoint 'unix://rel.sock': unix:// needs "
	    "an absolute socket path (unix:///run/docker.sock)");
	assert_int_equal(vg_http_open("ftp://x", &h, &e), VG_EINVAL);
	assert_string_equal(e.msg, "endpoint 'ftp://x' is not unix:///PATH, "
	    "tcp://HOST:PORT, http://... or https://...");
	assert_int_equal(vg_http_open("", &h, &e), VG_EINVAL);
	assert_string_equal(e.msg, "empty HTTP endpoint");
	assert_int_equal(vg_http_open("tcp://127.0.0.1:1", &h, &e), 0);
	vg_http_add_header(h, "Authorization: Bearer secret");
	assert_int_equal(vg_http_do(h, &req, &resp, &e), VG_EIO);
	assert_string_equal(e.msg, "GET /x on tcp://127.0.0.1:1: cannot "
	    "connect: Connection refused");
	vg_http_free(h);

	vg_http_escape(&b, "a-Z_0.9~ /:?&={\"}");
	assert_string_equal(vg_buf_str(&b),
	    "a-Z_0.9~%20%2F%3A%3F%26%3D%7B%22%7D");
	vg_buf_release(&b);
	vg_http_resp_release(&resp);
}

/* What kind of address: loopback, link-local (metadata), private, their
 * IPv4-mapped forms, unspecified; public ones NULL. */
static void
test_addr_kind(void **state)
{
	static const struct { const char *a; const char *kind; } v[] = {
		{ "127.0.0.1", "loopback" }, { "127.9.9.9", "loopback" },
		{ "169.254.169.254", "link-local" }, { "10.1.2.3", "private" },
		{ "172.16.0.1", "private" }, { "172.31.255.1", "private" },
		{ "172.32.0.1", NULL }, { "192.168.1.1", "private" },
		{ "100.64.0.1", "private" }, { "0.0.0.0", "unspecified" },
		{ "8.8.8.8", NULL }, { "224.0.0.1", "multicast" },
		{ "::1", "loopback" }, { "::", "unspecified" },
		{ "fe80::1", "link-local" }, { "fd00::1", "private" },
		{ "::ffff:127.0.0.1", "loopback" },
		{ "::ffff:169.254.169.254", "link-local" },
		{ "2606:4700::1111", NULL },
	};
	struct sockaddr_storage ss;
	const char *k;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(&ss, 0, sizeof(ss));
		if (strchr(v[i].a, ':') != NULL) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			s6->sin6_family = AF_INET6;
			assert_int_equal(inet_pton(AF_INET6, v[i].a,
			    &s6->sin6_addr), 1);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			s4->sin_family = AF_INET;
			assert_int_equal(inet_pton(AF_INET, v[i].a,
			    &s4->sin_addr), 1);
		}
		k = vg_addr_kind((struct sockaddr *)&ss);
		if (v[i].kind == NULL) {
			if (k != NULL)
				fail_msg("%s: %s, want public", v[i].a, k);
		} else if (k == NULL || strcmp(k, v[i].kind) != 0)
			fail_msg("%s: %s, want %s", v[i].a, k ? k : "public",
			    v[i].kind);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_post, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flag, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_sink, setup, teardown),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_addr_kind),
	};

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
