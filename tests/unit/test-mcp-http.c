/*
 * test-mcp-http.c - the parts of vigil mcp --listen that need no client:
 * the HTTP request parser (a table of requests, each with the result,
 * status and message expected; the fields and the body length of those
 * read; a head arriving byte by byte), the addresses --listen takes and
 * refuses, the unix socket's mode and what it refuses at its path, and
 * the token (random, from a file, and each refusal of a file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "runner/cli/mcp-http.h"

/* One parser case: the request, the result, the status and message. */
struct req_case {
	const char	*in;
	int		 rc;
	int		 status;
	const char	*msg;
};

static const struct req_case req_cases[] = {
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}",
	  .rc = 1 },
	{ .in = "\r\nGET /mcp HTTP/1.0\r\n\r\n", .rc = 1 },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\n", .rc = 0 },
	{ .in = "POST /mcp HTTP/1.1\r\n\r\n", .rc = -1, .status = 400,
	  .msg = "HTTP/1.1 requires a Host field" },
	{ .in = "post /mcp HTTP/1.1\r\nHost: h\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "malformed request line: the method is "
	  "upper-case letters" },
	{ .in = "POST  HTTP/1.1\r\nHost: h\r\n\r\n", .rc = -1, .status = 400,
	  .msg = "malformed request line: METHOD TARGET HTTP/1.1 expected" },
	{ .in = "POST /mcp HTTP/2.0\r\nHost: h\r\n\r\n", .rc = -1,
	  .status = 505, .msg = "only HTTP/1.0 and HTTP/1.1 are served" },
	{ .in = "POST /mcp FTP/1.1\r\nHost: h\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "malformed request line: HTTP/1.1 expected "
	  "at its end" },
	{ .in = "POST /m\x7f HTTP/1.1\r\nHost: h\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "malformed request line: a control or "
	  "non-ASCII character in the target" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\n x\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "folded header lines (obs-fold) are not "
	  "accepted" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost : h\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "malformed header field: NAME: VALUE "
	  "expected (a token, a colon with no space before it)" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\x01\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "a control character in a header field's "
	  "value" },
	{ .in = "POST /mcp HTTP/1.1\nHost: h\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "a NUL, or a CR or LF alone, in the request "
	  "head" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n", .rc = -1,
	  .status = 400, .msg = "header field 'host' given twice" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nAuthorization: a\r\n"
	  "authorization: b\r\n\r\n", .rc = -1, .status = 400,
	  .msg = "header field 'authorization' given twice" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: "
	  "chunked\r\n\r\n", .rc = -1, .status = 501, .msg = "transfer "
	  "codings (chunked) are not accepted: send the body with "
	  "Content-Length" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n",
	  .rc = -1, .status = 400, .msg = "Content-Length must be decimal "
	  "digits" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n",
	  .rc = -1, .status = 400, .msg = "Content-Length is empty" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 1001\r\n"
	  "\r\n", .rc = -1, .status = 413, .msg = "request body over the "
	  "limit of 1000 bytes" },
	{ .in = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: "
	  "184467440737095516160\r\n\r\n", .rc = -1, .status = 413,
	  .msg = "request body over the limit of 1000 bytes" },
};

static void
test_parse_table(void **state)
{
	struct vg_httpreq r;
	struct vg_err e;
	size_t k;
	char *buf;
	int status;

	(void)state;
	for (k = 0; k < sizeof(req_cases) / sizeof(req_cases[0]); k++) {
		buf = strdup(req_cases[k].in);
		vg_err_init(&e);
		assert_int_equal(vg_httpreq_parse(buf, strlen(buf), 1000, &r,
		    &status, &e), req_cases[k].rc);
		if (req_cases[k].rc < 0) {
			assert_int_equal(status, req_cases[k].status);
			assert_string_equal(e.msg, req_cases[k].msg);
		}
		free(buf);
	}
}

static void
test_parse_fields(void **state)
{
	char buf[] = "POST /mcp?x HTTP/1.1\r\nHOST: 127.0.0.1:9\r\n"
	    "Authorization:   Bearer t  \r\nConnection: close\r\n"
	    "Expect: 100-continue\r\nContent-Length: 12\r\n\r\n{\"a\":1}";
	struct vg_httpreq r;
	struct vg_err e;
	int status;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_httpreq_parse(buf, strlen(buf), 1000, &r, &status,
	    &e), 1);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.target, "/mcp?x");
	assert_int_equal(r.minor, 1);
	assert_string_equal(vg_httpreq_field(&r, "host"), "127.0.0.1:9");
	assert_string_equal(vg_httpreq_field(&r, "authorization"), "Bearer t");
	assert_null(vg_httpreq_field(&r, "origin"));
	assert_int_equal(r.body_len, 12);
	assert_int_equal(r.has_length, 1);
	assert_int_equal(r.keep_alive, 0);
	assert_int_equal(r.expect_continue, 1);
	assert_string_equal(buf + r.head_len, "{\"a\":1}");
}

static void
test_parse_limits(void **state)
{
	struct vg_httpreq r;
	struct vg_err e;
	size_t cap = VG_HTTP_MAX_HEAD + 64;
	char *buf = malloc(cap);
	size_t n, k;
	int status;

	(void)state;
	/* A head that never ends: refused once it passes the limit. */
	n = (size_t)snprintf(buf, cap, "GET / HTTP/1.1\r\nX: ");
	memset(buf + n, 'a', VG_HTTP_MAX_HEAD);
	vg_err_init(&e);
	assert_int_equal(vg_httpreq_parse(buf, VG_HTTP_MAX_HEAD - 1, 1000, &r,
	    &status, &e), 0);
	assert_int_equal(vg_httpreq_parse(buf, VG_HTTP_MAX_HEAD + n, 1000, &r,
	    &status, &e), -1);
	assert_int_equal(status, 431);
	/* 65 fields. */
	n = (size_t)snprintf(buf, cap, "GET / HTTP/1.1\r\n");
	for (k = 0; k < 65; k++)
		n += (size_t)snprintf(buf + n, cap - n, "X%zu: v\r\n", k);
	n += (size_t)snprintf(buf + n, cap - n, "\r\n");
	assert_int_equal(vg_httpreq_parse(buf, n, 1000, &r, &status, &e), -1);
	assert_int_equal(status, 431);
	assert_string_equal(e.msg, "more than 64 header fields");
	free(buf);
}

static void
test_parse_bytewise(void **state)
{
	const char *in = "DELETE /mcp HTTP/1.1\r\nHost: h\r\nMcp-Session-Id: "
	    "ab\r\n\r\n";
	char buf[128];
	struct vg_httpreq r;
	struct vg_err e;
	size_t k;
	int status;

	(void)state;
	vg_err_init(&e);
	for (k = 0; k < strlen(in); k++) {
		memcpy(buf, in, k);
		assert_int_equal(vg_httpreq_parse(buf, k, 1000, &r, &status,
		    &e), 0);
		assert_memory_equal(buf, in, k);	/* untouched */
	}
	memcpy(buf, in, k);
	assert_int_equal(vg_httpreq_parse(buf, k, 1000, &r, &status, &e), 1);
	assert_string_equal(vg_httpreq_field(&r, "mcp-session-id"), "ab");
	assert_int_equal(r.keep_alive, 1);
}

static void
test_listen_refusals(void **state)
{
	static const struct { const char *addr, *msg; } bad[] = {
		{ "0.0.0.0:0", "--listen '0.0.0.0:0': '0.0.0.0' is not a "
		  "loopback address: the server is for this machine only" },
		{ "10.1.2.3:80", "--listen '10.1.2.3:80': '10.1.2.3' is not a "
		  "loopback address: the server is for this machine only" },
		{ "example.com:80", "--listen 'example.com:80': "
		  "'example.com' is not a loopback address" },
		{ "[::]:0", "--listen '[::]:0': '[::]' is not a loopback "
		  "address" },
		{ "127.0.0.1:65536", "--listen '127.0.0.1:65536': the port is "
		  "a number from 0 to 65535" },
		{ "127.0.0.1:x", "--listen '127.0.0.1:x': the port is a "
		  "number from 0 to 65535" },
		{ ":80", "--listen ':80': HOST:PORT or unix:PATH expected" },
		{ "unix:", "--listen 'unix:': a unix socket path of 1 to 107 "
		  "bytes expected" },
	};
	struct vg_mcp_listen l;
	struct vg_err e;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		vg_err_init(&e);
		assert_true(vg_mcp_listen_open(bad[k].addr, &l, &e) < 0);
		assert_non_null(strstr(e.msg, bad[k].msg));
	}
	vg_err_init(&e);
	assert_int_equal(vg_mcp_listen_open("localhost:0", &l, &e), 0);
	assert_string_equal(l.host, "127.0.0.1");
	assert_true(l.port > 0);
	vg_mcp_listen_close(&l);
}

static void
test_listen_unix(void **state)
{
	char dir[] = "/tmp/vg-mcp-http-XXXXXX", path[128], file[128], addr[140];
	struct vg_mcp_listen l;
	struct vg_err e;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(file, sizeof(file), "%s/target", dir);
	snprintf(addr, sizeof(addr), "unix:%s", path);
	vg_err_init(&e);
	assert_int_equal(vg_mcp_listen_open(addr, &l, &e), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(S_ISSOCK(st.st_mode));
	/* A second server: the socket is live. */
	{
		struct vg_mcp_listen l2;

		assert_true(vg_mcp_listen_open(addr, &l2, &e) < 0);
		assert_non_null(strstr(e.msg, "a socket a server listens on"));
	}
	vg_mcp_listen_close(&l);
	assert_int_equal(lstat(path, &st), -1);
	/* A link at the path: refused, its target not made. */
	assert_int_equal(symlink(file, path), 0);
	assert_true(vg_mcp_listen_open(addr, &l, &e) < 0);
	assert_non_null(strstr(e.msg, "exists (a symbolic link): refused"));
	assert_int_equal(lstat(file, &st), -1);
	unlink(path);
	rmdir(dir);
}

static void
test_token(void **state)
{
	char dir[] = "/tmp/vg-mcp-tok-XXXXXX", path[128], link[128];
	struct vg_err e;
	char *t;
	FILE *f;

	(void)state;
	vg_err_init(&e);
	t = vg_mcp_token(NULL, &e);
	assert_non_null(t);
	assert_int_equal(strlen(t), 64);
	assert_int_equal(strspn(t, "0123456789abcdef"), 64);
	free(t);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tok", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	f = fopen(path, "w");
	fputs("0123456789abcdefXYZ\n", f);
	fclose(f);
	chmod(path, 0600);
	t = vg_mcp_token(path, &e);
	assert_string_equal(t, "0123456789abcdefXYZ");
	free(t);
	chmod(path, 0640);
	assert_null(vg_mcp_token(path, &e));
	assert_non_null(strstr(e.msg, "has mode 0640"));
	assert_int_equal(symlink(path, link), 0);
	assert_null(vg_mcp_token(link, &e));
	assert_non_null(strstr(e.msg, "is a symbolic link: refused"));
	chmod(path, 0600);
	f = fopen(path, "w");
	fputs("short\n", f);
	fclose(f);
	assert_null(vg_mcp_token(path, &e));
	assert_non_null(strstr(e.msg, "at least 16 characters (found 5)"));
	assert_null(vg_mcp_token(dir, &e));
	assert_non_null(strstr(e.msg, "is not a regular file"));
	unlink(link);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_parse_bytewise),
		cmocka_unit_test(test_listen_refusals),
		cmocka_unit_test(test_listen_unix),
		cmocka_unit_test(test_token),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
