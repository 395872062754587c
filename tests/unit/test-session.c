/*
 * test-session.c - agent sessions without a sandbox: the session rows of
 * the store (lookups by id, prefix and name, the closing move only one
 * caller wins, job numbers), the session manifest (no command, no
 * matrix), the wrapper of backends/session.c run by /bin/sh (cwd and
 * exports kept, exit status kept, a failed save keeps the old state,
 * per-command variables, stdin), the tree kill script, and the
 * bookkeeping of runner/core/session.c (jobs, expiry, gc of a session
 * whose keeper is gone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "common/path.h"
#include "runner/core/session.h"
#include "runner/core/store.h"

#include "store-fixture.h"

/* Records a session with id, name and state. */
static void
put(struct ctx *c, const char *id, const char *name, const char *state)
{
	struct vg_session_rec r;
	struct vg_err e;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", id);
	snprintf(r.name, sizeof(r.name), "%s", name);
	snprintf(r.backend, sizeof(r.backend), "local");
	snprintf(r.dir, sizeof(r.dir), "%s/sessions/%s", c->home, id);
	snprintf(r.state, sizeof(r.state), "%s", state);
	snprintf(r.mode, sizeof(r.mode), "auto-deny");
	r.created = r.last_used = vg_now();
	r.manifest = vg_xstrdup("{}");
	vg_err_init(&e);
	assert_int_equal(vg_store_session_put(c->st, &r, &e), 0);
	free(r.manifest);
}

static int
count_cb(void *arg, const struct vg_session_rec *r)
{
	(void)r;
	(*(int *)arg)++;
	return 0;
}

static void
test_store_rows(void **state)
{
	struct ctx *c = *state;
	struct vg_session_rec r;
	struct vg_err e;
	int won, job, n = 0;

	put(c, "s-20261201-100000-aaaaaa", "alpha", "active");
	put(c, "s-20261201-100000-aaaabb", "", "active");
	vg_err_init(&e);
	assert_int_equal(vg_store_session_get(c->st,
	    "s-20261201-100000-aaaaaa", &r, &e), 0);
	assert_string_equal(r.name, "alpha");
	assert_string_equal(r.manifest, "{}");
	free(r.manifest);
	assert_int_equal(vg_store_session_get(c->st, "alpha", &r, &e), 0);
	assert_string_equal(r.id, "s-20261201-100000-aaaaaa");
	free(r.manifest);
	assert_int_equal(vg_store_session_get(c->st, "s-20261201-100000-aaaab",
	    &r, &e), 0);
	assert_string_equal(r.id, "s-20261201-100000-aaaabb");
	free(r.manifest);
	/* Ambiguous prefix, unknown key. */
	assert_int_equal(vg_store_session_get(c->st, "s-20261201", &r, &e),
	    VG_EINVAL);
	assert_non_null(strstr(e.msg, "ambiguous"));
	assert_int_equal(vg_store_session_get(c->st, "nope", &r, &e),
	    VG_ENOENT);
	assert_non_null(strstr(e.msg, "no session 'nope'"));
	/* Only one closer wins. */
	assert_int_equal(vg_store_session_move(c->st,
	    "s-20261201-100000-aaaaaa", "starting active", "closing", NULL,
	    &won, &e), 0);
	assert_int_equal(won, 1);
	assert_int_equal(vg_store_session_move(c->st,
	    "s-20261201-100000-aaaaaa", "starting active", "closing", NULL,
	    &won, &e), 0);
	assert_int_equal(won, 0);
	assert_int_equal(vg_store_session_move(c->st,
	    "s-20261201-100000-aaaaaa", "closing", "stopped", "why", &won,
	    &e), 0);
	assert_int_equal(won, 1);
	assert_int_equal(vg_store_session_get(c->st,
	    "s-20261201-100000-aaaaaa", &r, &e), 0);
	assert_string_equal(r.state, "stopped");
	assert_string_equal(r.reason, "why");
	assert_true(r.ended > 0);
	free(r.manifest);
	/* A stopped session's name is free again. */
	assert_int_equal(vg_store_session_get(c->st, "alpha", &r, &e),
	    VG_ENOENT);
	/* Job numbers count up; touch only moves forward. */
	assert_int_equal(vg_store_session_next_job(c->st,
	    "s-20261201-100000-aaaabb", &job, &e), 0);
	assert_int_equal(job, 1);
	assert_int_equal(vg_store_session_next_job(c->st,
	    "s-20261201-100000-aaaabb", &job, &e), 0);
	assert_int_equal(job, 2);
	assert_int_equal(vg_store_session_next_job(c->st, "s-none", &job, &e),
	    VG_ENOENT);
	assert_int_equal(vg_store_session_touch(c->st,
	    "s-20261201-100000-aaaabb", 5e9, &e), 0);
	assert_int_equal(vg_store_session_touch(c->st,
	    "s-20261201-100000-aaaabb", 1, &e), 0);
	assert_int_equal(vg_store_session_get(c->st,
	    "s-20261201-100000-aaaabb", &r, &e), 0);
	assert_true(r.last_used == 5e9);
	free(r.manifest);
	assert_int_equal(vg_store_session_list(c->st, count_cb, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(vg_store_session_delete(c->st,
	    "s-20261201-100000-aaaabb", &e), 0);
	n = 0;
	assert_int_equal(vg_store_session_list(c->st, count_cb, &n, &e), 0);
	assert_int_equal(n, 1);
}

static void
test_manifest(void **state)
{
	struct vg_load_opts o = { .session = 1, .no_configs = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_manifest *m = NULL;
	struct vg_err e;
	const char *bad = "backend: local\nmatrix:\n  x: [1, 2]\n"
	    "command: echo\n";

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_manifest_load_mem("s.yaml", "", 0, &o, &m, &d,
	    &e), 0);
	vg_manifest_free(m);
	m = NULL;
	assert_int_not_equal(vg_manifest_load_mem("s.yaml", bad, strlen(bad),
	    &o, &m, &d, &e), 0);
	assert_null(m);
	assert_int_equal(d.lines.n, 2);
	assert_string_equal(d.lines.v[0], "s.yaml:2:1: a session has no "
	    "'matrix' (it is one sandbox)");
	assert_string_equal(d.lines.v[1], "s.yaml:4:1: a session has no "
	    "'command' (its commands come from 'vigil exec --session')");
	vg_diag_release(&d);
}

/* Set while the wrapper tests run in commit mode (the state renamed
 * into place by vg_session_commit, not by mv in the shell). */
static int commit_mode;

/* Runs the wrapper of cmd in root with sh; returns its exit status and
 * its stdout in out.  In commit mode, commits the saved state after. */
static int
run_wrapped(const char *root, const char *job, const char *cmd, int save,
    const char *stdin_in, struct vg_buf *out)
{
	static const char *const keep[] = { "PERCMD", NULL };
	struct vg_session_cmd c;
	struct vg_session s;
	struct vg_result r;
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_err e;
	char *path = vg_xasprintf("%s/out", root), *dir;
	pid_t pid;
	int ws, fd;

	memset(&c, 0, sizeof(c));
	c.job = job;
	c.command = cmd;
	c.save = save;
	c.commit_here = commit_mode;
	dir = vg_xasprintf("%s/cmds/%s", root, job);
	c.dir = dir;
	vg_session_script(root, &c, stdin_in, keep, &argv);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		setenv("PERCMD", job, 1);
		execv("/bin/sh", argv.v);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	memset(&s, 0, sizeof(s));
	s.dir = root;
	memset(&r, 0, sizeof(r));
	r.state = WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? VG_ST_SUCCEEDED :
	    VG_ST_FAILED;
	vg_err_init(&e);
	assert_int_equal(vg_session_commit(&s, &c, &r, &e), 0);
	vg_buf_reset(out);
	(void)vg_read_file(path, 1 << 20, out, NULL);
	free(path);
	free(dir);
	vg_strv_release(&argv);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Commits two saves that must not become the session's state. */
static void
commit_refused(const char *root, struct vg_buf *out)
{
	struct vg_session_cmd c;
	struct vg_session s;
	struct vg_result r;
	struct vg_err e;
	char *dir = vg_xasprintf("%s/cmds/10", root), *p;

	vg_err_init(&e);
	assert_int_equal(vg_mkdir_p(dir, 0700, &e), 0);
	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	c.job = "10";
	c.dir = dir;
	c.save = c.commit_here = 1;
	s.dir = root;
	p = vg_path_join(dir, "env");
	r.state = VG_ST_SUCCEEDED;
	assert_int_equal(vg_write_file_atomic(p, "export V=cut\n", 13, 0600,
	    &e), 0);
	assert_int_equal(vg_session_commit(&s, &c, &r, &e), 0);
	r.state = VG_ST_TIMEOUT;
	assert_int_equal(vg_write_file_atomic(p, "export V=late\n"
	    ": vigil-saved\n", 28, 0600, &e), 0);
	assert_int_equal(vg_session_commit(&s, &c, &r, &e), 0);
	assert_int_equal(access(p, R_OK), 0);
	assert_int_equal(run_wrapped(root, "11", "echo \"$V\"", 1, NULL, out),
	    0);
	assert_string_equal(vg_buf_str(out), "x'y $z\n");
	free(p);
	free(dir);
}

static void
test_wrapper(void **state)
{
	struct ctx *c = *state;
	struct vg_buf out = VG_BUF_INIT;
	char *root = vg_path_join(c->dir, commit_mode ? "commit" : "sess"),
	    *p, *in;
	struct stat st0, st1, cw0, cw1;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_mkdir_p(root, 0700, &e), 0);
	/* First command: in work/, which it makes. */
	assert_int_equal(run_wrapped(root, "1", "pwd", 1, NULL, &out), 0);
	p = vg_xasprintf("%s/work\n", root);
	assert_string_equal(vg_buf_str(&out), p);
	free(p);
	/* cd and export persist, exit status is the command's. */
	assert_int_equal(run_wrapped(root, "2", "mkdir -p 'a b' && cd 'a b' "
	    "&& export V=\"x'y \\$z\" && exit 3", 1, NULL, &out), 3);
	assert_int_equal(run_wrapped(root, "3", "pwd; printf '%s\\n' \"$V\"; "
	    "printf '%s\\n' \"$PERCMD\"; env | grep -c __VG_ || :", 1, NULL,
	    &out), 0);
	p = vg_xasprintf("%s/work/a b\nx'y $z\n3\n0\n", root);
	assert_string_equal(vg_buf_str(&out), p);
	free(p);
	/* A background job reads the state and never writes it. */
	assert_int_equal(run_wrapped(root, "4", "cd /; export V=bg", 0, NULL,
	    &out), 0);
	assert_int_equal(run_wrapped(root, "5", "echo \"$V\"", 1, NULL, &out),
	    0);
	assert_string_equal(vg_buf_str(&out), "x'y $z\n");
	/* A command killed before its end leaves the state as it was. */
	assert_int_equal(run_wrapped(root, "6", "cd /; export V=k; kill -9 $$",
	    1, NULL, &out), 128 + 9);
	p = vg_path_join(root, "env");
	assert_int_equal(stat(p, &st0), 0);
	free(p);
	p = vg_path_join(root, "cwd");
	assert_int_equal(stat(p, &cw0), 0);
	assert_int_equal(run_wrapped(root, "7", "echo \"$V\"", 1, NULL, &out),
	    0);
	assert_string_equal(vg_buf_str(&out), "x'y $z\n");
	/* A command that changes nothing rewrites neither cwd nor (in
	 * commit mode) env: its save stays in its own directory. */
	assert_int_equal(stat(p, &cw1), 0);
	assert_true(cw0.st_mtim.tv_sec == cw1.st_mtim.tv_sec &&
	    cw0.st_mtim.tv_nsec == cw1.st_mtim.tv_nsec);
	free(p);
	p = vg_path_join(root, "env");
	assert_int_equal(stat(p, &st1), 0);
	free(p);
	if (commit_mode) {
		assert_true(st0.st_ino == st1.st_ino);
		p = vg_xasprintf("%s/cmds/7/env", root);
		assert_int_equal(access(p, R_OK), 0);
		free(p);
	}
	/* stdin from the file named, /dev/null otherwise. */
	in = vg_path_join(root, "input");
	assert_int_equal(vg_write_file_atomic(in, "one\ntwo\n", 8, 0600, &e),
	    0);
	assert_int_equal(run_wrapped(root, "8", "wc -l", 1, in, &out), 0);
	assert_int_equal(atoi(vg_buf_str(&out)), 2);
	assert_int_equal(run_wrapped(root, "9", "cat; echo end", 1, NULL,
	    &out), 0);
	assert_string_equal(vg_buf_str(&out), "end\n");
	/* The wrapper's pid is recorded for the tree kill. */
	p = vg_xasprintf("%s/cmds/9/pid", root);
	assert_int_equal(access(p, R_OK), 0);
	free(p);
	/* Commit mode: a save cut short (no last line) is not committed,
	 * nor one of a command that timed out. */
	if (commit_mode)
		commit_refused(root, &out);
	free(in);
	free(root);
	vg_buf_release(&out);
}

/* The same checks with the state committed by vigil after the shell. */
static void
test_wrapper_commit(void **state)
{
	commit_mode = 1;
	test_wrapper(state);
	commit_mode = 0;
}

static void
test_kill_script(void **state)
{
	struct ctx *c = *state;
	struct vg_buf b = VG_BUF_INIT;
	char *root = vg_path_join(c->dir, "k"), *dir, *script, *pidf;
	struct vg_err e;
	pid_t pid, top;
	int ws, fd;

	vg_err_init(&e);
	dir = vg_xasprintf("%s/cmds/1", root);
	assert_int_equal(vg_mkdir_p(dir, 0700, &e), 0);
	pidf = vg_path_join(dir, "pid");
	/* A tree: sh, its child sh in the background, that one's sleep. */
	if ((top = fork()) == 0) {
		setpgid(0, 0);
		fd = open(pidf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dprintf(fd, "%ld\n", (long)getpid());
		close(fd);
		execl("/bin/sh", "sh", "-c", "sh -c 'sleep 30' & sleep 31",
		    (char *)NULL);
		_exit(127);
	}
	usleep(300000);
	script = vg_session_kill_script(root, "1", 9);
	if ((pid = fork()) == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	assert_int_equal(waitpid(top, &ws, 0), top);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == 9);
	/* The grandchildren are gone too: the group empties (init reaps
	 * the orphans' zombies). */
	for (ws = 0; ws < 100 && kill(-top, 0) == 0; ws++)
		usleep(20000);
	assert_int_equal(kill(-top, 0), -1);
	free(script);
	/* The close script walks every job and ignores a missing pid. */
	script = vg_session_close_script("'/nonexistent'");
	assert_non_null(strstr(script, "for f in '/nonexistent'/cmds/*/pid"));
	free(script);
	free(pidf);
	free(dir);
	free(root);
	vg_buf_release(&b);
}

static void
test_jobs_and_expiry(void **state)
{
	struct ctx *c = *state;
	struct vg_session_rec r;
	struct vg_sess_job j;
	struct vg_sess ss;
	struct vg_buf json = VG_BUF_INIT, rep = VG_BUF_INIT;
	struct vg_manifest *m = NULL;
	struct vg_load_opts o = { .session = 1, .no_configs = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_err e;
	char why[128];

	vg_err_init(&e);
	assert_int_equal(vg_manifest_load_mem("s.yaml", "", 0, &o, &m, &d,
	    &e), 0);
	vg_manifest_to_json(m, &json);
	vg_manifest_free(m);
	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "s-20261201-100000-cccccc");
	snprintf(r.backend, sizeof(r.backend), "local");
	snprintf(r.dir, sizeof(r.dir), "%s/sessions/%s", c->home, r.id);
	snprintf(r.state, sizeof(r.state), "active");
	/* An owner on this host that is gone: the keeper was killed. */
	{
		char host[256];

		gethostname(host, sizeof(host));
		snprintf(r.owner, sizeof(r.owner), "%s:999999:1", host);
	}
	r.created = vg_now() - 100;
	r.last_used = vg_now() - 50;
	r.manifest = json.data;
	assert_int_equal(vg_store_session_put(c->st, &r, &e), 0);
	assert_int_equal(vg_sess_load(c->st, r.id, &ss, &e), 0);
	ss.rec.idle_timeout = 10;
	assert_non_null(vg_sess_expired(&ss, vg_now(), why, sizeof(why)));
	assert_non_null(strstr(why, "idle for more than 10s"));
	ss.rec.idle_timeout = 0;
	ss.rec.max_age = 60;
	assert_non_null(vg_sess_expired(&ss, vg_now(), why, sizeof(why)));
	assert_non_null(strstr(why, "max age"));
	ss.rec.max_age = 0;
	assert_null(vg_sess_expired(&ss, vg_now(), why, sizeof(why)));
	/* Jobs: numbered, their files, running until a result exists. */
	assert_int_equal(vg_sess_job_new(c->st, &ss, "echo a\necho b", 1,
	    "in", 2, &j, &e), 0);
	assert_int_equal(j.job, 1);
	assert_int_equal(vg_sess_job_get(&ss, 1, &j, &e), 0);
	assert_string_equal(j.command, "echo a");
	assert_true(j.background);
	assert_string_equal(j.state, "running");
	/* Its end is the record's result line (or, from an earlier vigil,
	 * a result.json). */
	{
		struct vg_result res;
		struct vg_buf b = VG_BUF_INIT;
		char *p = vg_path_join(j.dir, VG_SESSION_JOB_FILE);
		size_t k;
		int fd;

		memset(&res, 0, sizeof(res));
		res.state = VG_ST_FAILED;
		res.exit_code = 5;
		res.started = 10;
		res.ended = 12;
		vg_buf_adds(&b, "result ");
		vg_result_text(&res, &b);
		for (k = 0; k + 1 < b.len; k++)
			if (b.data[k] == '\n')
				b.data[k] = ' ';
		assert_true((fd = open(p, O_WRONLY | O_APPEND)) >= 0);
		assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
		close(fd);
		assert_int_equal(vg_sess_job_get(&ss, 1, &j, &e), 0);
		assert_string_equal(j.state, "exited");
		assert_int_equal(j.exit_code, 5);
		assert_true(j.ended == 12);
		assert_int_equal(vg_sess_job_new(c->st, &ss, "old", 0, NULL, 0,
		    &j, &e), 0);
		res.exit_code = 6;
		assert_int_equal(vg_result_write(j.dir, &res, &e), 0);
		assert_int_equal(vg_sess_job_get(&ss, 2, &j, &e), 0);
		assert_int_equal(j.exit_code, 6);
		vg_buf_release(&b);
		free(p);
	}
	assert_int_equal(vg_sess_job_get(&ss, 7, &j, &e), VG_ENOENT);
	assert_int_equal(vg_sess_job_kill(&ss, 7, &e), VG_ENOENT);
	vg_sess_release(&ss);
	/* gc closes it (its keeper is gone) and later removes it. */
	assert_int_equal(vg_sess_gc(c->st, 0, 1, &rep, &e), 0);
	assert_non_null(strstr(vg_buf_str(&rep), "would close session "
	    "s-20261201-100000-cccccc"));
	vg_buf_reset(&rep);
	assert_int_equal(vg_sess_gc(c->st, 0, 0, &rep, &e), 0);
	assert_non_null(strstr(vg_buf_str(&rep), "closed session "
	    "s-20261201-100000-cccccc (its keeper is gone)"));
	assert_int_equal(vg_store_session_get(c->st, r.id, &r, &e), 0);
	assert_string_equal(r.state, "stopped");
	free(r.manifest);
	vg_buf_reset(&rep);
	assert_int_equal(vg_sess_gc(c->st, vg_now() + 1, 0, &rep, &e), 0);
	assert_non_null(strstr(vg_buf_str(&rep), "removed session "));
	assert_int_equal(vg_store_session_get(c->st,
	    "s-20261201-100000-cccccc", &r, &e), VG_ENOENT);
	vg_buf_release(&json);
	vg_buf_release(&rep);
	vg_diag_release(&d);
}

/* A job record read from any bytes: known lines, unknown ones skipped,
 * a long command cut, a bad result or runner line not taken. */
static void
test_jobrec_parse(void **state)
{
	static const char text[] = "kind bg\nwhat ever\nrunner x y\n"
	    "result {bad\ncommand a\\\\b\\nc\n\0kind fg\n";
	struct vg_sess_jobrec jr;
	char *big;

	(void)state;
	vg_sess_jobrec_parse(text, sizeof(text) - 1, &jr);
	assert_true(jr.background);
	assert_false(jr.has_runner);
	assert_false(jr.has_result);
	assert_string_equal(jr.command, "a\\b");
	vg_sess_jobrec_parse("", 0, &jr);
	assert_false(jr.background);
	assert_string_equal(jr.command, "");
	big = vg_xmalloc(5000);
	memcpy(big, "command ", 8);
	memset(big + 8, 'x', 4992);
	vg_sess_jobrec_parse(big, 5000, &jr);
	assert_int_equal(strlen(jr.command), sizeof(jr.command) - 1);
	vg_sess_jobrec_parse("runner 12 34 5.5\n", 17, &jr);
	assert_true(jr.has_runner);
	assert_int_equal(jr.runner, 12);
	assert_true(jr.started == 5.5);
	free(big);
}

/* A session keeps its manifest as the difference from the defaults,
 * which reads back as the whole manifest. */
static void
test_manifest_record(void **state)
{
	static const char text[] = "backend: local\nkill_grace: 3\n"
	    "env: {FOO: bar, AB: 'x\"y'}\nisolation: {level: strict, "
	    "writable: [/var/tmp]}\nlimits: {nofile: 100}\n"
	    "resources: {cpus: 2}\npolicy: {deny: [{id: no-push, "
	    "match: 'git push*', reason: never}]}\n";
	struct ctx *c = *state;
	struct vg_load_opts o = { .session = 1, .no_configs = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf want = VG_BUF_INIT, got = VG_BUF_INIT;
	struct vg_sess_opts so;
	struct vg_manifest *m = NULL, *back = NULL;
	struct vg_sess ss;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_manifest_load_mem("s.yaml", text, strlen(text),
	    &o, &m, &d, &e), 0);
	vg_manifest_to_json(m, &want);
	memset(&so, 0, sizeof(so));
	assert_int_equal(vg_sess_create(c->st, c->home, m, &so, &ss, &e), 0);
	/* Defaults are left out: retry, notify, docker are not there. */
	assert_null(strstr(ss.rec.manifest, "\"retry\""));
	assert_null(strstr(ss.rec.manifest, "\"docker\""));
	assert_non_null(strstr(ss.rec.manifest, "\"FOO\":\"bar\""));
	assert_true(strlen(ss.rec.manifest) < want.len / 3);
	assert_int_equal(vg_manifest_from_json(ss.rec.manifest,
	    strlen(ss.rec.manifest), &back, &e), 0);
	vg_manifest_to_json(back, &got);
	assert_string_equal(vg_buf_str(&got), vg_buf_str(&want));
	assert_int_equal(vg_backend_session_close(ss.ops, &ss.s, &e), 0);
	vg_manifest_free(back);
	vg_sess_release(&ss);
	vg_buf_release(&want);
	vg_buf_release(&got);
	vg_diag_release(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_rows, setup,
		    teardown),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_jobrec_parse),
		cmocka_unit_test_setup_teardown(test_manifest_record, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_wrapper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrapper_commit, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_kill_script, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_jobs_and_expiry, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
