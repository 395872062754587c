/*
 * test-egress-run.c - a run's egress proxy (backends/egress-run.c) with
 * real traffic: a task's process in a cgroup of its own joins the
 * proxy's network namespace and fetches from an HTTP server on the
 * host's loopback; another, in no task's cgroup, asks for a host the
 * rules do not list.  The records vigil reads back through its pipe name
 * the task by its cgroup and count the exact bytes each way; a record
 * forged into RUN/egress.jsonl is not among them.  The proxy's lines are
 * parsed as hostile: every malformed one is refused.
 *
 * The namespace needs root and the attribution a cgroup v2: without
 * them the live test skips, saying why.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/cgroup.h"
#include "backends/egress-run.h"
#include "common/buf.h"
#include "common/err.h"

/* The server's pid, killed at the end however the test ends. */
static pid_t srv;

/* What the server answers, whatever it is asked. */
static const char answer[] = "HTTP/1.0 200 OK\r\nContent-Length: 6\r\n"
    "\r\nhello\n";

/* A good line as the proxy writes it. */
static const char good[] = "{\"proto\":\"http\",\"host\":\"example.org\","
    "\"port\":80,\"addr\":\"192.0.2.1\",\"allowed\":true,\"rule\":"
    "\"allow example.org\",\"error\":null,\"up\":12,\"down\":3400,"
    "\"cgroup\":77}";

static int
parse(const char *line, struct vg_egress_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	return vg_egress_event_parse(line, strlen(line), ev);
}

static void
test_parse_good(void **state)
{
	struct vg_egress_event ev;

	(void)state;
	assert_int_equal(parse(good, &ev), 0);
	assert_string_equal(ev.proto, "http");
	assert_string_equal(ev.host, "example.org");
	assert_int_equal(ev.port, 80);
	assert_string_equal(ev.addr, "192.0.2.1");
	assert_int_equal(ev.allowed, 1);
	assert_string_equal(ev.rule, "allow example.org");
	assert_string_equal(ev.error, "");
	assert_true(ev.up == 12 && ev.down == 3400 && ev.cgroup == 77);
	/* Control bytes in a string come out as '?'. */
	assert_int_equal(parse("{\"proto\":\"connect\",\"host\":\"a\\u0007b\","
	    "\"port\":443,\"addr\":\"\",\"allowed\":false,\"rule\":\"not "
	    "listed\",\"error\":\"x\\ny\",\"up\":0,\"down\":0,\"cgroup\":0}",
	    &ev), 0);
	assert_string_equal(ev.host, "a?b");
	assert_string_equal(ev.error, "x?y");
	assert_int_equal(ev.allowed, 0);
}

static void
test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{}",
		/* a field missing */
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":80,\"addr\":\"\","
		"\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1}",
		/* an unknown protocol */
		"{\"proto\":\"ftp\",\"host\":\"h\",\"port\":80,\"addr\":\"\","
		"\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		/* port out of range, not whole, negative bytes */
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":65536,\"addr\":"
		"\"\",\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":80.5,\"addr\":"
		"\"\",\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":80,\"addr\":\"\","
		"\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":-1,"
		"\"down\":1,\"cgroup\":0}",
		/* wrong types */
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":\"80\",\"addr\":"
		"\"\",\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":80,\"addr\":\"\","
		"\"allowed\":1,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		"{\"proto\":\"http\",\"host\":\"h\",\"port\":80,\"addr\":\"\","
		"\"allowed\":true,\"rule\":\"\",\"error\":7,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		/* an empty host */
		"{\"proto\":\"http\",\"host\":\"\",\"port\":80,\"addr\":\"\","
		"\"allowed\":true,\"rule\":\"\",\"error\":null,\"up\":1,"
		"\"down\":1,\"cgroup\":0}",
		/* nested deeper than a record */
		"{\"proto\":{\"a\":1}}",
	};
	struct vg_egress_event ev;
	char *big;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &ev) == 0)
			fail_msg("parsed: %s", bad[i]);
	/* A host longer than any name. */
	big = malloc(1200);
	assert_non_null(big);
	memset(big, 'a', 1199);
	big[1199] = '\0';
	memcpy(big, "{\"proto\":\"http\",\"host\":\"", 24);
	assert_int_equal(parse(big, &ev), -1);
	free(big);
}

static void
test_json(void **state)
{
	struct vg_egress_event ev, back;
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	assert_int_equal(parse(good, &ev), 0);
	ev.task = 3;
	ev.attempt = 2;
	vg_egress_event_json(&ev, &b);
	assert_string_equal(vg_buf_str(&b), "{\"proto\":\"http\",\"host\":"
	    "\"example.org\",\"port\":80,\"addr\":\"192.0.2.1\",\"allowed\":"
	    "true,\"rule\":\"allow example.org\",\"error\":null,\"up\":12,"
	    "\"down\":3400,\"cgroup\":77,\"task\":3,\"attempt\":2}");
	/* What vigil writes parses back to the same record. */
	assert_int_equal(parse(vg_buf_str(&b), &back), 0);
	assert_string_equal(back.host, ev.host);
	assert_true(back.up == ev.up && back.down == ev.down);
	vg_buf_reset(&b);
	ev.task = -1;
	ev.attempt = 0;
	vg_egress_event_json(&ev, &b);
	assert_non_null(strstr(vg_buf_str(&b), "\"task\":null,\"attempt\":0}"));
	vg_buf_release(&b);
}

/* The server: answers each connection once its request header came. */
static void
server_main(int lfd)
{
	char buf[4096];
	size_t got;
	ssize_t n;
	int fd;

	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) < 0)
			_exit(1);
		got = 0;
		while (got < sizeof(buf) - 1 && (n = read(fd, buf + got,
		    sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)n;
			buf[got] = '\0';
			if (strstr(buf, "\r\n\r\n") != NULL)
				break;
		}
		if (write(fd, answer, sizeof(answer) - 1) < 0)
			_exit(1);
		close(fd);
	}
}

/* In a child: joins cg (NULL: none) and nsfd's namespace, sends req to
 * the proxy and exits 0 when the answer starts with want. */
static pid_t
client(const struct vg_cgroup *cg, int nsfd, unsigned port,
    const char *req, const char *want)
{
	struct sockaddr_in sa;
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	int fd;

	if ((pid = fork()) != 0)
		return pid;
	if ((cg != NULL && vg_cgroup_join_self(cg) != 0) ||
	    setns(nsfd, CLONE_NEWNET) != 0)
		_exit(2);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		_exit(3);
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got,
	    sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	_exit(strncmp(buf, want, strlen(want)) == 0 ? 0 : 4);
}

static int
wait_ok(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static void
test_run(void **state)
{
	struct vg_net_conf nc;
	struct vg_egress_run r = VG_EGRESS_RUN_INIT;
	struct vg_cgroup_limits none = { 0, 0, 0 };
	struct vg_cgroup *cg = NULL;
	struct vg_egress_event *v = NULL, *ok = NULL, *no = NULL;
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	struct vg_err e;
	struct stat st;
	char dir[] = "/tmp/vg-test-egress-run-XXXXXX", path[256], req[256];
	size_t n, dropped, i;
	unsigned port;
	pid_t c1, c2;
	int lfd, fd;

	(void)state;
	vg_err_init(&e);
	if (geteuid() != 0) {
		print_message("skipped: the proxy's namespace needs root\n");
		skip();
	}
	if (vg_cgroup_new(NULL, &none, "vg-test-egress-run", &cg, &e) != 0 ||
	    vg_cgroup_dirfd_v2(cg) < 0) {
		print_message("skipped: no cgroup v2 to name a task by (%s)\n",
		    e.msg);
		vg_cgroup_free(cg);
		skip();
	}
	assert_int_equal(fstat(vg_cgroup_dirfd_v2(cg), &st), 0);
	/* The server, on the host's loopback. */
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 16), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &salen), 0);
	port = ntohs(sa.sin_port);
	if ((srv = fork()) == 0)
		server_main(lfd);
	close(lfd);

	assert_non_null(mkdtemp(dir));
	memset(&nc, 0, sizeof(nc));
	nc.mode = VG_NET_ALLOW;
	vg_strv_pushf(&nc.allow, "127.0.0.1:%u", port);
	if (vg_egress_run_start(&nc, dir, &r, &e) != 0)
		fail_msg("start: %s", e.msg);
	vg_egress_run_task(&r, (uint64_t)st.st_ino, 7, 2);

	/* The task's fetch, and a stranger's refused CONNECT. */
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/x HTTP/1.0\r\n"
	    "Proxy-Authorization: x\r\n\r\n", port);
	c1 = client(cg, r.nsfd, r.port, req, "HTTP/1.0 200 OK");
	c2 = client(NULL, r.nsfd, r.port, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n"
	    "\r\n", "HTTP/1.1 403 Forbidden");
	assert_int_equal(wait_ok(c1), 0);
	assert_int_equal(wait_ok(c2), 0);

	/* A task writing the log file forges nothing vigil reads. */
	snprintf(path, sizeof(path), "%s/egress.jsonl", dir);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_true(write(fd, good, sizeof(good) - 1) > 0);
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);

	vg_egress_run_stop(&r);
	vg_egress_take(&v, &n, &dropped);
	assert_int_equal(n, 2);
	assert_int_equal(dropped, 0);
	for (i = 0; i < n; i++) {
		if (v[i].allowed)
			ok = &v[i];
		else
			no = &v[i];
	}
	if (ok == NULL || no == NULL)
		fail_msg("want one allowed and one refused record");
	assert_string_equal(ok->proto, "http");
	assert_string_equal(ok->host, "127.0.0.1");
	assert_int_equal(ok->port, port);
	assert_int_equal(ok->task, 7);
	assert_int_equal(ok->attempt, 2);
	assert_true(ok->cgroup == (uint64_t)st.st_ino);
	/* Up: the request line with the path alone, no Proxy- header. */
	assert_int_equal(ok->up, strlen("GET /x HTTP/1.0\r\n\r\n"));
	assert_int_equal(ok->down, sizeof(answer) - 1);
	snprintf(path, sizeof(path), "allow 127.0.0.1:%u", port);
	assert_string_equal(ok->rule, path);
	assert_string_equal(no->proto, "connect");
	assert_int_equal(no->port, 1);
	assert_int_equal(no->task, -1);
	assert_string_equal(no->rule, "not listed");
	assert_true(no->up == 0 && no->down == 0);
	free(v);

	vg_cgroup_free(cg);
	vg_strv_release(&nc.allow);
	snprintf(path, sizeof(path), "%s/egress.jsonl", dir);
	unlink(path);
	rmdir(dir);
}

static int
teardown(void **state)
{
	(void)state;
	if (srv > 0) {
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_run),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, teardown);
}
