/*
 * test-cloud.c - the cloud sandbox backends' shared code and the pure
 * parts of the providers: backoff, error texts and redaction, the
 * sandbox environment and script, Daytona's log demultiplexer and create
 * body, Vercel's stream lines and bodies, and vg_cloud_request's retries
 * and error mapping against a small HTTP server on a unix socket (a
 * forked child answering by path).
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
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/cloud.h"
#include "helpers/unixhttpd.h"

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/* Exponential, jittered in the upper half, capped; Retry-After wins. */
static void
test_backoff(void **state)
{
	(void)state;
	assert_true(vg_cloud_backoff(1, 0, 0) == 0.125);
	assert_true(vg_cloud_backoff(1, 0, 0.5) == 0.1875);
	assert_true(vg_cloud_backoff(3, 0, 0) == 0.5);
	assert_true(vg_cloud_backoff(3, 0, 0.999) < 1.0);
	assert_true(vg_cloud_backoff(10, 0, 0) == 4.0);
	assert_true(vg_cloud_backoff(100, 0, 0.999) < 8.0);
	assert_true(vg_cloud_backoff(2, 3, 0.7) == 3.0);
	assert_true(vg_cloud_backoff(2, 500, 0.7) == 30.0);
}

/* Checks the error text found in body. */
static void
text_is(const char *body, const char *want)
{
	char out[128];

	vg_cloud_error_text(body, body ? strlen(body) : 0, out, sizeof(out));
	assert_string_equal(out, want);
}

/* The error shapes of Daytona (Nest) and Vercel. */
static void
test_error_text(void **state)
{
	(void)state;
	text_is("{\"path\":\"/sandbox\",\"statusCode\":401,\"error\":"
	    "\"Unauthorized\",\"message\":\"Invalid credentials\"}",
	    "Invalid credentials");
	text_is("{\"statusCode\":400,\"message\":[\"cpu must be a number\","
	    "\"labels must be an object\"],\"error\":\"Bad Request\"}",
	    "cpu must be a number; labels must be an object");
	text_is("{\"error\":{\"code\":\"forbidden\",\"message\":\"Not "
	    "authorized\"}}", "Not authorized");
	text_is("{\"error\":\"boom\"}", "boom");
	text_is("<html>502 Bad Gateway</html>", "");
	text_is("", "");
	text_is(NULL, "");
	text_is("{\"message\":7}", "");
}

/* Every occurrence goes; the buffer bound holds. */
static void
test_redact(void **state)
{
	char s[64];

	(void)state;
	snprintf(s, sizeof(s), "key abc and abcabc.");
	vg_cloud_redact(s, sizeof(s), "abc");
	assert_string_equal(s, "key *** and ******.");
	snprintf(s, sizeof(s), "a*b");
	vg_cloud_redact(s, sizeof(s), "*");
	assert_string_equal(s, "a***b");
	snprintf(s, 8, "xyzxyz");
	vg_cloud_redact(s, 8, "y");
	assert_string_equal(s, "x***zx*");
	snprintf(s, sizeof(s), "same");
	vg_cloud_redact(s, sizeof(s), "");
	vg_cloud_redact(s, sizeof(s), NULL);
	assert_string_equal(s, "same");
}

/* ------------------------------------------------------------------ */
/* Attempt fixture                                                     */
/* ------------------------------------------------------------------ */

struct fixture {
	struct vg_manifest	m;
	struct vg_task		task;
	struct vg_kv		kv[2];
	struct vg_attempt	a;
	struct vg_strv		pool;		/* strings the fields point at */
};

/* A writable copy of s that lives until teardown. */
static char *
lit(struct fixture *f, const char *s)
{
	vg_strv_push(&f->pool, s);
	return f->pool.v[f->pool.n - 1];
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->a.m = &f->m;
	f->a.task = &f->task;
	f->a.run_id = "run1";
	f->a.attempt = 2;
	f->a.task_dir = "/host/runs/run1/tasks/3";
	f->task.index = 3;
	f->task.command.shell = lit(f, "echo \"it's\" >&2");
	f->kv[0].key = lit(f, "K");
	f->kv[0].value = lit(f, "a 'b' $c");
	f->task.env.v = f->kv;
	f->task.env.n = 1;
	setenv("PATH", "/host/bin:/usr/bin", 1);
	setenv("HOME", "/host/home", 1);
	setenv("LANG", "C.UTF-8", 1);
	unsetenv("LC_ALL");
	unsetenv("USER");
	unsetenv("LOGNAME");
	unsetenv("TZ");
	unsetenv("TMPDIR");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	vg_strv_release(&f->pool);
	free(f);
	return 0;
}

/* Joins a string vector with '|'. */
static char *
joined(const struct vg_strv *v)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	for (i = 0; i < v->n; i++) {
		if (i > 0)
			vg_buf_addc(&b, '|');
		vg_buf_adds(&b, v->v[i]);
	}
	return vg_buf_detach(&b);
}

/* The host's PATH and HOME stay home unless the task sets them. */
static void
test_env(void **state)
{
	struct fixture *f = *state;
	struct vg_strv env = VG_STRV_INIT;
	char *s;

	vg_task_env(&f->a, VG_ENV_IMAGE, &env);
	s = joined(&env);
	assert_string_equal(s, "LANG=C.UTF-8|K=a 'b' $c|VIGIL_RUN_ID=run1|"
	    "VIGIL_TASK_INDEX=3|VIGIL_TASK_DIR=/host/runs/run1/tasks/3|"
	    "VIGIL_ATTEMPT=2");
	free(s);
	vg_strv_release(&env);

	/* A task's own PATH reaches the sandbox (and overrides the
	 * host's one, which vg_task_env lists first). */
	f->kv[1].key = lit(f, "PATH");
	f->kv[1].value = lit(f, "/opt/bin");
	f->task.env.n = 2;
	vg_task_env(&f->a, VG_ENV_IMAGE, &env);
	s = joined(&env);
	assert_string_equal(s, "LANG=C.UTF-8|K=a 'b' $c|PATH=/opt/bin|"
	    "VIGIL_RUN_ID=run1|VIGIL_TASK_INDEX=3|"
	    "VIGIL_TASK_DIR=/host/runs/run1/tasks/3|VIGIL_ATTEMPT=2");
	free(s);
	vg_strv_release(&env);
}

/* The script quotes every word and runs in a subshell. */
static void
test_script(void **state)
{
	struct fixture *f = *state;
	struct vg_buf b = VG_BUF_INIT;

	vg_cloud_script(&f->a, "/w d", &b);
	assert_string_equal(vg_buf_str(&b), "(\n"
	    "export LANG=C.UTF-8\n"
	    "export K='a '\\''b'\\'' $c'\n"
	    "export VIGIL_RUN_ID=run1\n"
	    "export VIGIL_TASK_INDEX=3\n"
	    "export VIGIL_TASK_DIR=/host/runs/run1/tasks/3\n"
	    "export VIGIL_ATTEMPT=2\n"
	    "cd -- '/w d' || exit 1\n"
	    "exec /bin/sh -c 'echo \"it'\\''s\" >&2'\n"
	    ")");
	vg_buf_reset(&b);
	f->task.command.is_argv = 1;
	vg_strv_push(&f->task.command.argv, "/bin/echo");
	vg_strv_push(&f->task.command.argv, "a  b");
	vg_strv_push(&f->task.command.argv, ";");
	f->task.env.n = 0;
	vg_cloud_script(&f->a, NULL, &b);
	assert_string_equal(vg_buf_str(&b), "(\n"
	    "export LANG=C.UTF-8\n"
	    "export VIGIL_RUN_ID=run1\n"
	    "export VIGIL_TASK_INDEX=3\n"
	    "export VIGIL_TASK_DIR=/host/runs/run1/tasks/3\n"
	    "export VIGIL_ATTEMPT=2\n"
	    "exec /bin/echo 'a  b' ';'\n"
	    ")");
	vg_strv_release(&f->task.command.argv);
	vg_buf_release(&b);
}

/* Parses a request body built by the code under test. */
static const struct vg_json_value *
body_root(const struct vg_buf *b, struct vg_json_doc **doc)
{
	struct vg_err e;

	vg_err_init(&e);
	if (vg_json_parse(b->data, b->len, NULL, doc, &e) != 0)
		fail_msg("body is not JSON: %s: %s", e.msg, vg_buf_str(b));
	return vg_json_root(*doc);
}

/* CreateSandbox: snapshot, or the image as a build, labels, resources. */
static void
test_daytona_create_body(void **state)
{
	struct fixture *f = *state;
	struct vg_cloud_conf conf = { .region = lit(f, "eu") };
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *r, *lab;
	char owner[320];

	f->m.image = lit(f, "python:3.12");
	f->a.res.cpus = 2;
	f->a.res.memory = 1536ULL << 20;
	vg_daytona_create_body(&f->a, &conf, &b);
	r = body_root(&b, &doc);
	assert_null(vg_json_get(r, "snapshot"));
	assert_string_equal(vg_json_get_str(vg_json_get(r, "buildInfo"),
	    "dockerfileContent", ""), "FROM python:3.12\n");
	assert_string_equal(vg_json_get_str(r, "target", ""), "eu");
	assert_true(vg_json_get_num(r, "cpu", 0) == 2);
	assert_true(vg_json_get_num(r, "memory", 0) == 2);
	assert_true(vg_json_get_num(r, "autoDeleteInterval", -1) == 0);
	assert_null(vg_json_get(r, "gpu"));
	lab = vg_json_get(r, "labels");
	assert_int_equal(lab->len, 4);
	assert_string_equal(vg_json_get_str(lab, "vigil", ""), "1");
	assert_string_equal(vg_json_get_str(lab, "vigil-run", ""), "run1");
	assert_string_equal(vg_json_get_str(lab, "vigil-task", ""), "3");
	vg_backend_owner_label(owner, sizeof(owner));
	assert_string_equal(vg_json_get_str(lab, "vigil-owner", ""), owner);
	assert_false(vg_backend_owner_dead(owner));
	vg_json_free(doc);

	vg_buf_reset(&b);
	conf.snapshot = lit(f, "my-snap");
	conf.keep = 1;
	conf.region = NULL;
	vg_daytona_create_body(&f->a, &conf, &b);
	r = body_root(&b, &doc);
	assert_string_equal(vg_json_get_str(r, "snapshot", ""), "my-snap");
	assert_null(vg_json_get(r, "buildInfo"));
	assert_null(vg_json_get(r, "target"));
	assert_null(vg_json_get(r, "autoDeleteInterval"));
	assert_null(vg_json_get(r, "networkBlockAll"));
	vg_json_free(doc);

	/* isolation.network none: the sandbox's network blocked. */
	vg_buf_reset(&b);
	f->m.isolation.network.mode = VG_NET_NONE;
	vg_daytona_create_body(&f->a, &conf, &b);
	r = body_root(&b, &doc);
	assert_non_null(vg_json_get(r, "networkBlockAll"));
	assert_int_equal(vg_json_get(r, "networkBlockAll")->type,
	    VG_JSON_BOOL);
	assert_true(vg_json_get(r, "networkBlockAll")->b);
	vg_json_free(doc);
	f->m.isolation.network.mode = VG_NET_LEVEL;
	vg_buf_release(&b);
}

/* Owners of another host or malformed are never taken for dead. */
static void
test_owner(void **state)
{
	char host[256], owner[512];

	(void)state;
	assert_false(vg_backend_owner_dead(NULL));
	assert_false(vg_backend_owner_dead("garbage"));
	assert_false(vg_backend_owner_dead("other-host-xyz:1:1"));
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	/* pid 1 exists, but not with start time 1. */
	snprintf(owner, sizeof(owner), "%s:1:1", host);
	assert_true(vg_backend_owner_dead(owner));
	snprintf(owner, sizeof(owner), "%s:0:1", host);
	assert_false(vg_backend_owner_dead(owner));
}

/* Vercel: create body with image or snapshot, command body. */
static void
test_vercel_bodies(void **state)
{
	struct fixture *f = *state;
	struct vg_cloud_conf conf = { .region = lit(f, "iad1") };
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *r, *v;

	f->m.image = lit(f, "node:22");
	f->a.timeout = 100;
	f->a.kill_grace = 10;
	f->a.res.cpus = 4;
	vg_vercel_create_body(&f->a, &conf, "prj_1", &b);
	r = body_root(&b, &doc);
	assert_string_equal(vg_json_get_str(r, "projectId", ""), "prj_1");
	assert_int_equal(vg_json_get(r, "ports")->type, VG_JSON_ARRAY);
	assert_int_equal(vg_json_get(r, "ports")->len, 0);
	assert_string_equal(vg_json_get_str(r, "image", ""), "node:22");
	assert_true(vg_json_get_num(r, "timeout", 0) == 170000);
	assert_true(vg_json_get_num(vg_json_get(r, "resources"), "vcpus",
	    0) == 4);
	assert_string_equal(vg_json_get_str(r, "region", ""), "iad1");
	assert_string_equal(vg_json_get_str(vg_json_get(r, "tags"),
	    "vigil-task", ""), "3");
	assert_null(vg_json_get(r, "source"));
	vg_json_free(doc);

	vg_buf_reset(&b);
	conf.snapshot = lit(f, "snap_1");
	vg_vercel_create_body(&f->a, &conf, "prj_1", &b);
	r = body_root(&b, &doc);
	assert_null(vg_json_get(r, "image"));
	v = vg_json_get(r, "source");
	assert_string_equal(vg_json_get_str(v, "type", ""), "snapshot");
	assert_string_equal(vg_json_get_str(v, "snapshotId", ""), "snap_1");
	vg_json_free(doc);

	vg_buf_reset(&b);
	f->m.workdir = lit(f, "/vercel/sandbox/w");
	vg_vercel_cmd_body(&f->a, &b);
	r = body_root(&b, &doc);
	assert_string_equal(vg_json_get_str(r, "command", ""), "/bin/sh");
	v = vg_json_get(r, "args");
	assert_int_equal(v->len, 2);
	assert_string_equal(v->items[0]->str, "-c");
	assert_string_equal(v->items[1]->str, "echo \"it's\" >&2");
	assert_string_equal(vg_json_get_str(r, "cwd", ""), "/vercel/sandbox/w");
	v = vg_json_get(r, "env");
	assert_string_equal(vg_json_get_str(v, "K", ""), "a 'b' $c");
	assert_string_equal(vg_json_get_str(v, "VIGIL_ATTEMPT", ""), "2");
	assert_null(vg_json_get(v, "PATH"));
	assert_null(vg_json_get(v, "HOME"));
	assert_int_equal(vg_json_get(r, "sudo")->type, VG_JSON_BOOL);
	assert_false(vg_json_get(r, "sudo")->b);
	assert_true(vg_json_get(r, "wait")->b);
	assert_true(vg_json_get(r, "logs")->b);
	vg_json_free(doc);
	vg_buf_release(&b);
}

/* ------------------------------------------------------------------ */
/* Stream formats                                                      */
/* ------------------------------------------------------------------ */

struct two {
	struct vg_buf	s[3];
};

/* Demultiplexer output into two buffers. */
static int
two_out(void *arg, int stream, const char *p, size_t n)
{
	struct two *t = arg;

	vg_buf_add(&t->s[stream], p, n);
	return 0;
}

/* Feeds log in pieces of step bytes, checks both streams. */
static void
demux_case(const char *log, size_t len, size_t step, const char *out,
    const char *err)
{
	struct vg_daytona_demux d;
	struct two t;
	size_t i, k;

	memset(&t, 0, sizeof(t));
	vg_daytona_demux_init(&d, two_out, &t);
	for (i = 0; i < len; i += k) {
		k = len - i < step ? len - i : step;
		assert_int_equal(vg_daytona_demux_feed(&d, log + i, k), 0);
	}
	assert_int_equal(vg_daytona_demux_end(&d), 0);
	assert_string_equal(vg_buf_str(&t.s[1]), out);
	assert_string_equal(vg_buf_str(&t.s[2]), err);
	for (i = 0; i < 3; i++)
		vg_buf_release(&t.s[i]);
}

/* The same split whatever the pieces; markers across pieces. */
static void
test_daytona_demux(void **state)
{
	static const char log[] = "junk\x01\x01\x01out1\n\x02\x02\x02"
	    "err1\n\x01\x01\x01out\x01\x01x\x02\n\x02\x02\x02\x01";
	size_t step;

	(void)state;
	for (step = 1; step <= sizeof(log); step++)
		demux_case(log, sizeof(log) - 1, step, "out1\nout\x01\x01x\x02\n",
		    "err1\n\x01");
	demux_case("\x01\x01\x01\x01\x01\x01\x01\x01", 8, 3, "\x01\x01", "");
	demux_case("", 0, 1, "", "");
}

/* A demultiplexer whose output refuses data. */
static int
refuse(void *arg, int stream, const char *p, size_t n)
{
	(void)arg;
	(void)stream;
	(void)p;
	(void)n;
	return VG_EIO;
}

static void
test_daytona_demux_error(void **state)
{
	struct vg_daytona_demux d;

	(void)state;
	vg_daytona_demux_init(&d, refuse, NULL);
	assert_int_equal(vg_daytona_demux_feed(&d, "\x01\x01\x01x", 4),
	    VG_EIO);
	vg_daytona_demux_init(&d, refuse, NULL);
	assert_int_equal(vg_daytona_demux_feed(&d, "before", 6), 0);
}

/* The listing lines outputs are chosen from: good ones, then every way
 * of being bad (type, size, a path that leaves the directory). */
static void
test_ls_line(void **state)
{
	static const char *const bad[] = { "", "f", "f ", "f 1", "x 1 a",
		"f -1 a", "f  1 a", "f 1 /etc/passwd", "f 1 ../a",
		"f 1 a/../b", "f 1 a/..", "f 1 ./a", "f 1 a//b", "f 1 a/",
		"f 99999999999999999999999 a", "f 1a b", "ff 1 a", NULL };
	unsigned long long size;
	const char *rel;
	char type;
	size_t i;

	(void)state;
	assert_int_equal(vg_cloud_ls_line("f 12 res/a b.txt", &type, &size,
	    &rel), 0);
	assert_int_equal(type, 'f');
	assert_true(size == 12);
	assert_string_equal(rel, "res/a b.txt");
	assert_int_equal(vg_cloud_ls_line("l 0 .hidden/..x", &type, &size,
	    &rel), 0);
	assert_int_equal(type, 'l');
	assert_string_equal(rel, ".hidden/..x");
	assert_int_equal(vg_cloud_ls_line("d 0 d", &type, &size, &rel), 0);
	assert_int_equal(vg_cloud_ls_line("o 0 fifo", &type, &size, &rel), 0);
	for (i = 0; bad[i] != NULL; i++)
		if (vg_cloud_ls_line(bad[i], &type, &size, &rel) == 0)
			fail_msg("accepted '%s'", bad[i]);
}

/* Parses a line expecting success. */
static void
event_ok(const char *line, struct vg_vercel_event *ev,
    struct vg_json_doc **doc)
{
	struct vg_err e;

	vg_err_init(&e);
	if (vg_vercel_event_parse(line, strlen(line), ev, doc, &e) != 0)
		fail_msg("'%s': %s", line, e.msg);
}

/* Parses a line expecting the error msg. */
static void
event_bad(const char *line, const char *msg)
{
	struct vg_vercel_event ev;
	struct vg_json_doc *doc;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_vercel_event_parse(line, strlen(line), &ev, &doc,
	    &e), VG_EPARSE);
	assert_string_equal(e.msg, msg);
	vg_json_free(doc);
}

static void
test_vercel_events(void **state)
{
	struct vg_vercel_event ev;
	struct vg_json_doc *doc;

	(void)state;
	event_ok("{\"command\":{\"id\":\"cmd_1\",\"name\":\"sh\",\"args\":[],"
	    "\"cwd\":\"/\",\"sessionId\":\"s\",\"exitCode\":null,"
	    "\"startedAt\":1}}", &ev, &doc);
	assert_int_equal(ev.kind, VG_VERCEL_COMMAND);
	assert_string_equal(ev.id, "cmd_1");
	assert_int_equal(ev.exit_code, -1);
	vg_json_free(doc);
	event_ok("{\"command\":{\"id\":\"cmd_1\",\"exitCode\":3}}", &ev, &doc);
	assert_int_equal(ev.exit_code, 3);
	vg_json_free(doc);
	event_ok("{\"command\":{\"id\":\"c\",\"exitCode\":-9}}", &ev, &doc);
	assert_int_equal(ev.exit_code, 255);
	vg_json_free(doc);
	event_ok("{\"stream\":\"stderr\",\"data\":\"a\\u0000b\\n\"}", &ev,
	    &doc);
	assert_int_equal(ev.kind, VG_VERCEL_LOG);
	assert_int_equal(ev.stream, 2);
	assert_int_equal(ev.len, 4);
	assert_memory_equal(ev.data, "a\0b\n", 4);
	vg_json_free(doc);
	event_ok("{\"stream\":\"stdout\",\"data\":\"x\"}", &ev, &doc);
	assert_int_equal(ev.stream, 1);
	vg_json_free(doc);
	event_ok("{\"stream\":\"error\",\"data\":{\"code\":\"sandbox_stopped\","
	    "\"message\":\"Sandbox stopped\"}}", &ev, &doc);
	assert_int_equal(ev.kind, VG_VERCEL_ERROR);
	assert_string_equal(ev.message, "sandbox_stopped: Sandbox stopped");
	vg_json_free(doc);

	event_bad("[1]", "vercel: command stream: line is not an object");
	event_bad("{\"command\":{}}", "vercel: command stream: \"command\" "
	    "has no \"id\"");
	event_bad("{\"command\":{\"id\":\"c\",\"exitCode\":\"1\"}}", "vercel: "
	    "command stream: \"exitCode\" is neither a number nor null");
	event_bad("{\"stream\":\"stdin\",\"data\":\"x\"}", "vercel: command "
	    "stream: unknown stream 'stdin' or \"data\" not a string");
	event_bad("{\"stream\":\"stdout\",\"data\":1}", "vercel: command "
	    "stream: unknown stream 'stdout' or \"data\" not a string");
	event_bad("{\"other\":1}", "vercel: command stream: line has neither "
	    "\"command\" nor \"stream\" and \"data\"");
}

/* Collects lines joined by '|'. */
static int
line_cb(void *arg, const char *line, size_t n)
{
	struct vg_buf *b = arg;

	if (b->len > 0)
		vg_buf_addc(b, '|');
	vg_buf_add(b, line, n);
	return 0;
}

static void
test_lines(void **state)
{
	struct vg_cloud_lines l;
	struct vg_buf got = VG_BUF_INIT;

	(void)state;
	vg_cloud_lines_init(&l, 8, line_cb, &got);
	assert_int_equal(vg_cloud_lines_feed(&l, "ab\ncd", 5), 0);
	assert_int_equal(vg_cloud_lines_feed(&l, "e\n\nf", 4), 0);
	assert_int_equal(vg_cloud_lines_end(&l), 0);
	assert_string_equal(vg_buf_str(&got), "ab|cde||f");
	assert_int_equal(vg_cloud_lines_feed(&l, "12345678", 8), 0);
	assert_int_equal(vg_cloud_lines_feed(&l, "9\n", 2), VG_ELIMIT);
	assert_int_equal(vg_cloud_lines_end(&l), VG_ELIMIT);
	vg_cloud_lines_release(&l);
	vg_buf_release(&got);
}

/* ------------------------------------------------------------------ */
/* Requests against a server                                           */
/* ------------------------------------------------------------------ */

/* Writes a whole reply. */
static void
reply(int fd, int status, const char *extra, const char *body)
{
	char buf[2048];
	int n;

	n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d X\r\nContent-Type: "
	    "application/json\r\nContent-Length: %zu\r\nConnection: close\r\n"
	    "%s\r\n%s", status, strlen(body), extra, body);
	if (write(fd, buf, (size_t)n) < 0)
		_exit(1);
}

/* Serves one request: the path picks the behaviour; per-path counters
 * live in this process, which serves every connection in turn. */
static void
serve_one(int fd)
{
	static int flaky, flaky_stream;
	char req[8192], method[16], path[256];
	ssize_t n;
	size_t len = 0;

	req[0] = '\0';
	while (len < sizeof(req) - 1 && strstr(req, "\r\n\r\n") == NULL) {
		if ((n = read(fd, req + len, sizeof(req) - 1 - len)) <= 0)
			return;
		len += (size_t)n;
		req[len] = '\0';
	}
	if (sscanf(req, "%15s %255s", method, path) != 2)
		return;
	if (strstr(req, "Authorization: Bearer tok-123\r\n") == NULL)
		reply(fd, 401, "", "{\"statusCode\":401,\"message\":\"no "
		    "token\"}");
	else if (strcmp(path, "/flaky") == 0 && flaky++ < 2)
		reply(fd, 503, "Retry-After: 0.01\r\n", "{\"message\":\"busy\"}");
	else if (strcmp(path, "/flaky") == 0)
		reply(fd, 200, "", "{\"ok\":true}");
	else if (strcmp(path, "/down") == 0)
		reply(fd, 500, "Retry-After: 0.01\r\n", "{\"error\":{\"code\":"
		    "\"internal\",\"message\":\"database down\"}}");
	else if (strcmp(path, "/echo-token") == 0)
		reply(fd, 403, "", "{\"message\":\"token tok-123 is not "
		    "allowed\"}");
	else if (strcmp(path, "/missing") == 0)
		reply(fd, 404, "", "{\"message\":[\"no such sandbox\"]}");
	else if (strcmp(path, "/stream") == 0 && flaky_stream++ < 1)
		reply(fd, 429, "Retry-After: 0.01\r\n", "{}");
	else if (strcmp(path, "/stream") == 0)
		reply(fd, 200, "", "line1\nline2\n");
	else if (strcmp(path, "/bad-stream") == 0)
		reply(fd, 500, "", "{\"message\":\"stream broke\"}");
	else
		reply(fd, 200, "", "{}");
}

static int
srv_setup(void **state)
{
	struct unixhttpd *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	if (unixhttpd_start(s, "vigil-cloud", serve_one) != 0)
		fail_msg("test server: %s", strerror(errno));
	setenv("VIGIL_TEST_TOKEN", "tok-123", 1);
	*state = s;
	return 0;
}

static int
srv_teardown(void **state)
{
	struct unixhttpd *s = *state;

	unixhttpd_stop(s);
	free(s);
	return 0;
}

static const struct vg_cloud_ops test_ops = {
	.name = "testcloud",
	.token_env = "VIGIL_TEST_TOKEN",
	.endpoint = "http://127.0.0.1:9",
};

/* Opens a connection to the test server. */
static void
open_srv(struct unixhttpd *s, struct vg_cloud *c)
{
	struct vg_cloud_conf conf = { .endpoint = s->endpoint };

	struct vg_err e;

	vg_err_init(&e);
	if (vg_cloud_open(c, &test_ops, &conf, NULL, &e) != 0)
		fail_msg("open: %s", e.msg);
	c->conf = NULL;
}

/* One GET; returns its rc with the message in e. */
static int
get(struct vg_cloud *c, const char *path, const long *ok, struct vg_err *e)
{
	vg_err_init(e);
	return vg_cloud_call(c, "GET", path, NULL, ok, "doing it", e);
}

static void
test_request_errors(void **state)
{
	static const long ok404[] = { 404, 0 };
	struct unixhttpd *s = *state;
	struct vg_cloud c;
	struct vg_err e;

	open_srv(s, &c);
	assert_int_equal(get(&c, "/flaky", NULL, &e), 0);
	assert_int_equal(c.resp.status, 200);
	assert_string_equal(vg_buf_str(&c.resp.body), "{\"ok\":true}");

	/* 5xx past the retries: transient, for the driver's retry. */
	assert_int_equal(get(&c, "/down", NULL, &e), VG_EAGAIN);
	assert_string_equal(e.msg, "testcloud: doing it: database down "
	    "(HTTP 500; gave up after 5 tries)");

	assert_int_equal(get(&c, "/echo-token", NULL, &e), VG_EDENIED);
	assert_string_equal(e.msg, "testcloud: doing it: token *** is not "
	    "allowed (HTTP 403; check the token in VIGIL_TEST_TOKEN)");

	assert_int_equal(get(&c, "/missing", NULL, &e), VG_ENOENT);
	assert_string_equal(e.msg, "testcloud: doing it: no such sandbox "
	    "(HTTP 404)");
	assert_int_equal(get(&c, "/missing", ok404, &e), 0);
	assert_int_equal(c.resp.status, 404);
	vg_cloud_close(&c);

	setenv("VIGIL_TEST_TOKEN", "other", 1);
	open_srv(s, &c);
	assert_int_equal(get(&c, "/flaky", NULL, &e), VG_EDENIED);
	assert_string_equal(e.msg, "testcloud: doing it: no token (HTTP 401; "
	    "check the token in VIGIL_TEST_TOKEN)");
	vg_cloud_close(&c);
	setenv("VIGIL_TEST_TOKEN", "tok-123", 1);

	unsetenv("VIGIL_TEST_TOKEN");
	assert_int_equal(vg_cloud_open(&c, &test_ops, NULL, NULL, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "testcloud: no API token: environment "
	    "variable VIGIL_TEST_TOKEN is not set (testcloud.token_env names "
	    "the variable to read)");
	vg_cloud_close(&c);
	setenv("VIGIL_TEST_TOKEN", "tok-123", 1);
}

/* Streams: a 429 before any data is retried; error bodies stay out of
 * the sink and make the message. */
static void
test_request_stream(void **state)
{
	struct unixhttpd *s = *state;
	struct vg_cloud c;
	struct vg_cloud_lines l;
	struct vg_buf got = VG_BUF_INIT;
	struct vg_cloud_req rq = {
		.method = "POST",
		.path = "/stream",
		.what = "streaming",
		.timeout = -1,
		.sink = vg_cloud_lines_feed,
		.sink_arg = &l,
		.once = 1,
	};
	struct vg_err e;

	open_srv(s, &c);
	vg_err_init(&e);
	vg_cloud_lines_init(&l, 100, line_cb, &got);
	assert_int_equal(vg_cloud_request(&c, &rq, &e), 0);
	assert_int_equal(vg_cloud_lines_end(&l), 0);
	assert_string_equal(vg_buf_str(&got), "line1|line2");
	vg_buf_reset(&got);
	rq.path = "/bad-stream";
	assert_int_equal(vg_cloud_request(&c, &rq, &e), VG_EAGAIN);
	assert_string_equal(e.msg, "testcloud: streaming: stream broke "
	    "(HTTP 500)");
	assert_string_equal(vg_buf_str(&got), "");
	vg_cloud_lines_release(&l);
	vg_buf_release(&got);
	vg_cloud_close(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_error_text),
		cmocka_unit_test(test_redact),
		cmocka_unit_test_setup_teardown(test_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daytona_create_body,
		    setup, teardown),
		cmocka_unit_test(test_owner),
		cmocka_unit_test_setup_teardown(test_vercel_bodies, setup,
		    teardown),
		cmocka_unit_test(test_daytona_demux),
		cmocka_unit_test(test_daytona_demux_error),
		cmocka_unit_test(test_vercel_events),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_ls_line),
		cmocka_unit_test_setup_teardown(test_request_errors,
		    srv_setup, srv_teardown),
		cmocka_unit_test_setup_teardown(test_request_stream,
		    srv_setup, srv_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
