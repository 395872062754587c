/*
 * test-store.c - the sqlite run state: modes, schema version, runs,
 * tasks, attempts, events, audit, lookups by prefix.
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
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/path.h"
#include "runner/core/store.h"

#include "store-fixture.h"

/* Adds a run with n pending tasks. */
static void
add_run(struct ctx *c, const char *id, double created, int n)
{
	struct vg_run_info r;
	struct vg_task_rec t;
	struct vg_err e;
	int i;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", id);
	r.name = vg_xstrdup("demo");
	r.file = vg_xstrdup("demo.yaml");
	r.scheduler = vg_xstrdup("direct");
	r.backend = vg_xstrdup("local");
	r.dir = vg_xstrdup("/nonexistent");
	r.created = created;
	r.ntasks = n;
	vg_err_init(&e);
	assert_int_equal(vg_store_run_create(c->st, &r, "{\"v\":1}", &e), 0);
	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		t.index = i;
		t.state = VG_ST_PENDING;
		t.memory = 1024;
		t.time = 60;
		t.timeout = 2.5;
		assert_int_equal(vg_store_task_add(c->st, id, &t,
		    "{\"x\":\"1\"}", "x=1", &e), 0);
	}
	vg_run_info_release(&r);
}

static void
test_modes_and_schema(void **state)
{
	struct ctx *c = *state;
	struct stat sb;
	sqlite3 *db;
	sqlite3_stmt *st;
	int v;
	char *path;

	assert_int_equal(stat(c->home, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	path = vg_path_join(c->home, "vigil.db");
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1,
	    &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), VG_STORE_SCHEMA);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1,
	    &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT version, description"
	    " FROM migrations", -1, &st, NULL), SQLITE_OK);
	/* One row per migration, in order, up to the current version. */
	for (v = 1; v <= VG_STORE_SCHEMA; v++) {
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), v);
	}
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	/* The usage columns of migration 2 are there, NULL by default. */
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT cpu_user, cpu_sys,"
	    " max_rss, alloc_cpus, alloc_gpus, alloc_mem FROM attempts", -1,
	    &st, NULL), SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(path);
}

/* Appends "task/attempt:known:cpu:max_rss:cpus:mem_limit;". */
static int
usage_cb(void *arg, const struct vg_attempt_rec *a)
{
	vg_buf_printf(arg, "%d/%d:%u:%.2f:%lld:%d:%lld;", a->index, a->attempt,
	    a->usage.known, a->usage.cpu_user + a->usage.cpu_sys,
	    a->usage.max_rss, a->usage.cpus, a->usage.mem_limit);
	return 0;
}

static void
test_reopen_and_newer_schema(void **state)
{
	struct ctx *c = *state;
	struct vg_store *s2 = NULL;
	struct vg_err e;
	char *path, *want, *sql;
	sqlite3 *db;

	vg_err_init(&e);
	/* A second connection at the current version is fine. */
	assert_int_equal(vg_store_open(c->home, &s2, &e), 0);
	vg_store_close(s2);
	path = vg_path_join(c->home, "vigil.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql = vg_xasprintf("PRAGMA user_version = %d", VG_STORE_SCHEMA + 1);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	sqlite3_close(db);
	assert_int_equal(vg_store_open(c->home, &s2, &e), VG_ESTATE);
	assert_null(s2);
	want = vg_xasprintf("state database '%s/vigil.db' has schema %d, "
	    "newer than this vigil's %d (upgrade vigil)", c->home,
	    VG_STORE_SCHEMA + 1, VG_STORE_SCHEMA);
	assert_string_equal(e.msg, want);
	free(want);

	/* A database another build migrated with other steps under the
	 * same numbers is refused before any step runs, saying so (not
	 * with sqlite's "duplicate column name" half-way). */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sql = vg_xasprintf("PRAGMA user_version = %d; UPDATE migrations SET "
	    "description = 'the same number, another step' WHERE version = "
	    "%d", VG_STORE_SCHEMA - 1, VG_STORE_SCHEMA - 1);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	sqlite3_close(db);
	assert_int_equal(vg_store_open(c->home, &s2, &e), VG_ESTATE);
	assert_null(s2);
	assert_non_null(strstr(e.msg, "was migrated by another build of "
	    "vigil: its step"));
	assert_non_null(strstr(e.msg, "'the same number, another step', "
	    "this vigil's is '"));
	free(path);
}

static void
test_open_fails_on_file_home(void **state)
{
	struct vg_store *s2 = NULL;
	struct vg_err e;
	char *file;
	struct ctx *c = *state;

	file = vg_path_join(c->home, "vigil.db");
	vg_err_init(&e);
	assert_int_equal(vg_store_open(file, &s2, &e), VG_EDENIED);
	assert_non_null(strstr(e.msg, "it is not a directory"));
	assert_null(s2);
	free(file);
}

/*
 * Eight processes released at once open one new home: every open
 * succeeds.  Two first opens used to race on the switch to WAL, which
 * sqlite fails at once ("database is locked") instead of waiting.
 */
static void
test_concurrent_first_open(void **state)
{
	enum { OPENERS = 8, ROUNDS = 40 };
	char tmpl[] = "/tmp/vigil-test-XXXXXX";
	int round, i, go[2], status, failed = 0;
	char *home;
	pid_t pid[OPENERS];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	home = vg_path_join(tmpl, "home");
	for (round = 0; round < ROUNDS; round++) {
		assert_int_equal(pipe(go), 0);
		for (i = 0; i < OPENERS; i++) {
			pid[i] = fork();
			assert_true(pid[i] >= 0);
			if (pid[i] == 0) {
				struct vg_store *s = NULL;
				struct vg_err e;
				char b;

				close(go[1]);
				(void)read(go[0], &b, 1);
				vg_err_init(&e);
				if (vg_store_open(home, &s, &e) != 0) {
					fprintf(stderr, "round %d: %s\n",
					    round, e.msg);
					_exit(1);
				}
				vg_store_close(s);
				_exit(0);
			}
		}
		close(go[0]);
		close(go[1]);	/* releases every opener at once */
		for (i = 0; i < OPENERS; i++) {
			assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
			failed += !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0;
		}
		assert_int_equal(vg_rm_rf(home, NULL), 0);
	}
	assert_int_equal(failed, 0);
	assert_int_equal(vg_rm_rf(tmpl, NULL), 0);
	free(home);
}

static void
test_home_dir(void **state)
{
	char *h;

	(void)state;
	setenv("VIGIL_HOME", "/x/vh", 1);
	h = vg_home_dir();
	assert_string_equal(h, "/x/vh");
	free(h);
	unsetenv("VIGIL_HOME");
	setenv("XDG_STATE_HOME", "/x/state", 1);
	h = vg_home_dir();
	assert_string_equal(h, "/x/state/vigil");
	free(h);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/x/home", 1);
	h = vg_home_dir();
	assert_string_equal(h, "/x/home/.local/state/vigil");
	free(h);
}

static void
test_run_id(void **state)
{
	char a[VG_RUN_ID_MAX], b[VG_RUN_ID_MAX];
	size_t i;

	(void)state;
	vg_run_id_make(a);
	vg_run_id_make(b);
	assert_int_equal(strlen(a), 22);
	assert_string_not_equal(a, b);
	for (i = 0; i < 22; i++) {
		if (i == 8 || i == 15)
			assert_int_equal(a[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", a[i]));
	}
}

static int
count_cb(void *arg, const struct vg_run_info *r)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%s:%s:%d:%d;", r->id, vg_state_name(r->state),
	    r->counts[VG_ST_PENDING], r->counts[VG_ST_SUCCEEDED]);
	return 0;
}

static void
test_runs(void **state)
{
	struct ctx *c = *state;
	struct vg_run_info r;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	add_run(c, "20250101-000000-aaaaaa", 100, 2);
	add_run(c, "20250101-000001-aaaabb", 101, 1);
	add_run(c, "20250102-000000-cccccc", 102, 3);
	assert_int_equal(vg_store_run_get(c->st, "20250102", &r, &e), 0);
	assert_string_equal(r.id, "20250102-000000-cccccc");
	assert_int_equal(r.state, VG_ST_PENDING);
	assert_int_equal(r.ntasks, 3);
	assert_int_equal(r.counts[VG_ST_PENDING], 3);
	assert_string_equal(r.name, "demo");
	assert_string_equal(r.dir, "/nonexistent");
	vg_run_info_release(&r);
	assert_int_equal(vg_store_run_get(c->st, "2025010", &r, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "run id '2025010' is ambiguous (give more "
	    "of it)");
	assert_int_equal(vg_store_run_get(c->st, "1999", &r, &e), VG_ENOENT);
	assert_string_equal(e.msg, "no run '1999' (see 'vigil status')");
	assert_int_equal(vg_store_run_get(c->st, "last", &r, &e), 0);
	assert_string_equal(r.id, "20250102-000000-cccccc");
	vg_run_info_release(&r);
	assert_int_equal(vg_store_run_set_state(c->st,
	    "20250101-000000-aaaaaa", VG_ST_FAILED, "boom", &e), 0);
	assert_int_equal(vg_store_run_set_owner(c->st,
	    "20250101-000000-aaaaaa", 4242, 77, &e), 0);
	assert_int_equal(vg_store_run_get(c->st, "20250101-000000-aaaaaa", &r,
	    &e), 0);
	assert_int_equal(r.state, VG_ST_FAILED);
	assert_string_equal(r.reason, "boom");
	assert_true(r.ended > 0);
	assert_int_equal(r.pid, 4242);
	assert_true(r.pid_start == 77);
	vg_run_info_release(&r);
	assert_int_equal(vg_store_run_list(c->st, count_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b),
	    "20250102-000000-cccccc:PENDING:3:0;"
	    "20250101-000001-aaaabb:PENDING:1:0;"
	    "20250101-000000-aaaaaa:FAILED:2:0;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_run_manifest(c->st,
	    "20250101-000001-aaaabb", &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "{\"v\":1}");
	assert_int_equal(vg_store_run_delete(c->st, "20250101-000001-aaaabb",
	    &e), 0);
	assert_int_equal(vg_store_run_get(c->st, "20250101-000001", &r, &e),
	    VG_ENOENT);
	vg_buf_release(&b);
}

static int
task_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%d:%s:%s:%s:%s;", t->index, vg_state_name(t->state),
	    mj, label, t->reason);
	return 0;
}

static int
attempt_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%d/%d:%s:%d:%s:%s;", a->index, a->attempt,
	    vg_state_name(a->state), a->exit_code, a->handle ? a->handle :
	    "-", a->reason ? a->reason : "-");
	return 0;
}

static int
event_cb(void *arg, const struct vg_event_rec *ev)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%d/%d:%s:%s;", ev->task, ev->attempt,
	    vg_state_name(ev->state), ev->reason ? ev->reason : "-");
	return 0;
}

static void
test_tasks_attempts_events(void **state)
{
	struct ctx *c = *state;
	const char *id = "20250101-000000-aaaaaa";
	struct vg_task_rec *v;
	struct vg_attempt_rec a;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	size_t n;
	int marked;

	vg_err_init(&e);
	add_run(c, id, 1, 3);
	assert_int_equal(vg_store_tasks_load(c->st, id, &v, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].index, 2);
	assert_true(v[2].memory == 1024 && v[2].time == 60);
	assert_true(v[2].timeout == 2.5);
	assert_int_equal(v[2].exit_code, -1);
	assert_int_equal(vg_store_begin(c->st, &e), 0);
	v[1].state = VG_ST_SUCCEEDED;
	v[1].attempts = 2;
	v[1].tries = 1;
	v[1].exit_code = 0;
	v[1].pid = 99;
	v[1].pid_start = 12345;
	snprintf(v[1].handle, sizeof(v[1].handle), "99");
	snprintf(v[1].reason, sizeof(v[1].reason), "fine");
	assert_int_equal(vg_store_task_put(c->st, id, &v[1], &e), 0);
	memset(&a, 0, sizeof(a));
	a.index = 1;
	a.attempt = 1;
	a.state = VG_ST_FAILED;
	a.exit_code = 3;
	a.handle = "98";
	a.reason = "exit 3";
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	a.attempt = 2;
	a.state = VG_ST_RUNNING;
	a.exit_code = -1;
	a.handle = "99";
	a.reason = NULL;
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	/* Replacing an attempt keeps one row per (task, attempt). */
	a.state = VG_ST_SUCCEEDED;
	a.exit_code = 0;
	a.usage.known = VG_USAGE_CPU | VG_USAGE_RSS | VG_USAGE_CPUS;
	a.usage.cpu_user = 1.5;
	a.usage.cpu_sys = 0.25;
	a.usage.max_rss = 5000000000LL;
	a.usage.cpus = 4;
	a.usage.mem_limit = 77;		/* not known: stored as NULL */
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	assert_int_equal(vg_store_event(c->st, id, 1, 2, VG_ST_SUCCEEDED,
	    NULL, &e), 0);
	assert_int_equal(vg_store_commit(c->st, &e), 0);
	free(v);
	assert_int_equal(vg_store_tasks_load(c->st, id, &v, &n, &e), 0);
	assert_int_equal(v[1].state, VG_ST_SUCCEEDED);
	assert_int_equal(v[1].attempts, 2);
	assert_int_equal(v[1].tries, 1);
	assert_int_equal(v[1].pid, 99);
	assert_true(v[1].pid_start == 12345);
	assert_string_equal(v[1].handle, "99");
	free(v);
	assert_int_equal(vg_store_task_each(c->st, id, 1, task_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b),
	    "1:SUCCEEDED:{\"x\":\"1\"}:x=1:fine;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_attempt_each(c->st, id, 1, attempt_cb, &b,
	    &e), 0);
	assert_string_equal(vg_buf_str(&b),
	    "1/1:FAILED:3:98:exit 3;1/2:SUCCEEDED:0:99:-;");
	vg_buf_reset(&b);
	/* Usage: NULL columns read back unknown; every task at once (-1). */
	assert_int_equal(vg_store_attempt_each(c->st, id, -1, usage_cb, &b,
	    &e), 0);
	assert_string_equal(vg_buf_str(&b), "1/1:0:0.00:0:0:0;"
	    "1/2:7:1.75:5000000000:4:0;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_event_each(c->st, id, VG_STORE_EVENTS_ALL,
	    event_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "-1/0:PENDING:created;"
	    "0/0:PENDING:-;1/0:PENDING:-;2/0:PENDING:-;1/2:SUCCEEDED:-;");
	/* task -1: the run's own events only */
	vg_buf_reset(&b);
	assert_int_equal(vg_store_event_each(c->st, id, -1, event_cb, &b, &e),
	    0);
	assert_string_equal(vg_buf_str(&b), "-1/0:PENDING:created;");
	/* Only unfinished tasks are marked for cancellation. */
	assert_int_equal(vg_store_task_request_cancel(c->st, id, -1, &marked,
	    &e), 0);
	assert_int_equal(marked, 2);
	assert_int_equal(vg_store_task_request_cancel(c->st, id, 1, &marked,
	    &e), 0);
	assert_int_equal(marked, 0);
	vg_buf_release(&b);
}

static int
audit_cb(void *arg, const struct vg_audit_rec *r)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%s:%d:%s:%s:%s:%s:%s;", r->run_id ? r->run_id : "-",
	    r->task_index, r->mode, r->verdict, r->category ? r->category :
	    "-", r->rule ? r->rule : "-", r->command);
	return 0;
}

static int
attempt_copy_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_attempt_rec *out = arg;

	*out = *a;
	out->handle = out->handle != NULL ? "set" : NULL;
	out->node = out->node != NULL ? "set" : NULL;
	out->reason = out->reason != NULL ? "set" : NULL;
	return 1;
}

/* Keeps the last attempt it is given (its strings dropped). */
static int
attempt_last_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_attempt_rec *out = arg;

	*out = *a;
	out->handle = out->node = out->reason = out->gpus = NULL;
	return 0;
}

/* Counts by state follow every insert, change of state and delete
 * (migration 8's triggers); tasks by state come in index order. */
static void
test_task_counts(void **state)
{
	struct ctx *c = *state;
	const char *id = "20250101-000000-cccccc";
	struct vg_task_rec *v;
	struct vg_run_info r;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	size_t n;

	vg_err_init(&e);
	add_run(c, id, 1, 5);
	add_run(c, "20250101-000000-dddddd", 2, 2);
	assert_int_equal(vg_store_tasks_load(c->st, id, &v, &n, &e), 0);
	assert_int_equal(vg_store_begin(c->st, &e), 0);
	v[1].state = VG_ST_SUCCEEDED;
	assert_int_equal(vg_store_task_put(c->st, id, &v[1], &e), 0);
	v[3].state = VG_ST_FAILED;
	assert_int_equal(vg_store_task_put(c->st, id, &v[3], &e), 0);
	/* The same state again counts once. */
	assert_int_equal(vg_store_task_put(c->st, id, &v[3], &e), 0);
	/* A result reused from an earlier run is a success too: not
	 * among the others of SUCCEEDED below. */
	v[4].state = VG_ST_CACHED;
	assert_int_equal(vg_store_task_put(c->st, id, &v[4], &e), 0);
	assert_int_equal(vg_store_commit(c->st, &e), 0);
	free(v);
	assert_int_equal(vg_store_run_get(c->st, id, &r, &e), 0);
	assert_int_equal(r.counts[VG_ST_PENDING], 2);
	assert_int_equal(r.counts[VG_ST_SUCCEEDED], 1);
	assert_int_equal(r.counts[VG_ST_CACHED], 1);
	assert_int_equal(r.counts[VG_ST_FAILED], 1);
	vg_run_info_release(&r);
	assert_int_equal(vg_store_run_get(c->st, "20250101-000000-dddddd",
	    &r, &e), 0);
	assert_int_equal(r.counts[VG_ST_PENDING], 2);
	assert_int_equal(r.counts[VG_ST_SUCCEEDED], 0);
	vg_run_info_release(&r);
	assert_int_equal(vg_store_task_each_state(c->st, id, VG_ST_SUCCEEDED,
	    1, 0, task_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "0:PENDING:{\"x\":\"1\"}:x=1:;"
	    "2:PENDING:{\"x\":\"1\"}:x=1:;3:FAILED:{\"x\":\"1\"}:x=1:;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_task_each_state(c->st, id, VG_ST_SUCCEEDED,
	    0, 1, task_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "1:SUCCEEDED:{\"x\":\"1\"}:x=1:;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_task_each_state(c->st, id, VG_ST_OOM, 0, 0,
	    task_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "");
	/* A deleted run leaves no counts behind. */
	assert_int_equal(vg_store_run_delete(c->st, id, &e), 0);
	assert_int_equal(vg_store_run_get(c->st, id, &r, &e), VG_ENOENT);
	assert_int_equal(vg_store_run_get(c->st, "20250101-000000-dddddd",
	    &r, &e), 0);
	assert_int_equal(r.counts[VG_ST_PENDING], 2);
	vg_run_info_release(&r);
	vg_buf_release(&b);
}

/* Every column of a task and an attempt comes back as written; a task
 * is added with only its state, resources and reason. */
static void
test_every_field(void **state)
{
	struct ctx *c = *state;
	const char *id = "20250101-000000-ffffff";
	struct vg_task_rec t, *v;
	struct vg_attempt_rec a, got;
	struct vg_err e;
	size_t n;

	vg_err_init(&e);
	add_run(c, id, 1, 0);
	memset(&t, 0, sizeof(t));
	t.index = 7;
	t.state = VG_ST_PENDING;
	t.attempts = 5;
	t.exit_code = 9;
	t.memory = 1ULL << 40;
	t.time = 3600;
	t.timeout = 1.5;
	snprintf(t.handle, sizeof(t.handle), "not stored");
	snprintf(t.reason, sizeof(t.reason), "added");
	assert_int_equal(vg_store_task_add(c->st, id, &t, NULL, NULL, &e), 0);
	assert_int_equal(vg_store_tasks_load(c->st, id, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].index, 7);
	assert_int_equal(v[0].attempts, 0);
	assert_int_equal(v[0].exit_code, -1);
	assert_true(v[0].memory == 1ULL << 40 && v[0].time == 3600);
	assert_true(v[0].timeout == 1.5);
	assert_string_equal(v[0].handle, "");
	assert_string_equal(v[0].reason, "added");
	free(v);

	t.state = VG_ST_TIMEOUT;
	t.attempts = 3;
	t.tries = 2;
	t.exit_code = 124;
	t.signal = 15;
	t.started = 10.25;
	t.ended = 20.5;
	t.next_at = 30.75;
	t.memory = (1ULL << 62) + 1;
	t.time = 7200;
	t.timeout = 99.5;
	t.pid = 4242;
	t.pid_start = 1ULL << 50;
	t.cancel_req = 1;
	/* Compared bytewise below: nothing after the terminators. */
	memset(t.handle, 0, sizeof(t.handle));
	snprintf(t.handle, sizeof(t.handle), "1234_7");
	snprintf(t.node, sizeof(t.node), "node-7");
	memset(t.reason, 'r', sizeof(t.reason) - 1);
	t.reason[sizeof(t.reason) - 1] = '\0';
	assert_int_equal(vg_store_task_put(c->st, id, &t, &e), 0);
	assert_int_equal(vg_store_tasks_load(c->st, id, &v, &n, &e), 0);
	assert_memory_equal(&v[0], &t, sizeof(t));
	free(v);

	memset(&a, 0, sizeof(a));
	a.index = 7;
	a.attempt = 3;
	a.state = VG_ST_TIMEOUT;
	a.exit_code = 124;
	a.signal = 15;
	a.started = 10.25;
	a.ended = 20.5;
	a.pid = 4242;
	a.pid_start = 1ULL << 50;
	a.handle = "set";
	a.node = NULL;
	a.reason = "set";
	a.slot = 5;
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(vg_store_attempt_each(c->st, id, 7, attempt_copy_cb,
	    &got, &e), 0);
	assert_memory_equal(&got, &a, sizeof(a));
}

/* A database of schema 9 (attempts without their slot) opens, migrates
 * and reads its attempts back with slot 0, "not known". */
static void
test_slot_migration(void **state)
{
	struct ctx *c = *state;
	const char *id = "20250101-000000-eeeeee";
	struct vg_attempt_rec a, got;
	struct vg_err e;
	char *path;
	sqlite3 *db;

	vg_err_init(&e);
	add_run(c, id, 1, 1);
	memset(&a, 0, sizeof(a));
	a.index = 0;
	a.attempt = 1;
	a.state = VG_ST_FAILED;
	a.exit_code = 1;
	a.started = 1.5;
	a.ended = 2.5;
	a.slot = 3;
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	vg_store_close(c->st);
	c->st = NULL;
	path = vg_path_join(c->home, "vigil.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "ALTER TABLE attempts DROP COLUMN"
	    " slot; ALTER TABLE runs DROP COLUMN origin;"
	    " ALTER TABLE attempts DROP COLUMN out_end;"
	    " ALTER TABLE attempts DROP COLUMN err_end;"
	    " DROP TABLE reuse; DROP TABLE task_keys; DROP TABLE reuse_stat;"
	    " DROP TABLE reuse_parts;"
	    " DELETE FROM migrations WHERE version >= 10;"
	    " PRAGMA user_version = 9", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	free(path);
	assert_int_equal(vg_store_open(c->home, &c->st, &e), 0);
	memset(&got, 0, sizeof(got));
	assert_int_equal(vg_store_attempt_each(c->st, id, 0, attempt_copy_cb,
	    &got, &e), 0);
	assert_int_equal(got.state, VG_ST_FAILED);
	assert_true(got.started == 1.5 && got.ended == 2.5);
	assert_int_equal(got.slot, 0);
	/* And the column takes new values. */
	a.attempt = 2;
	assert_int_equal(vg_store_attempt_put(c->st, id, &a, &e), 0);
	assert_int_equal(vg_store_attempt_each(c->st, id, 0, attempt_last_cb,
	    &got, &e), 0);
	assert_int_equal(got.attempt, 2);
	assert_int_equal(got.slot, 3);
}

static void
test_audit(void **state)
{
	struct ctx *c = *state;
	struct vg_audit_rec r;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	memset(&r, 0, sizeof(r));
	r.run_id = "R1";
	r.task_index = 3;
	r.mode = "auto-deny";
	r.command = "rm -rf /";
	r.verdict = "deny";
	r.category = "destructive";
	r.rule = "builtin:rm-root";
	r.reason = "removes /";
	assert_int_equal(vg_store_audit(c->st, &r, &e), 0);
	r.run_id = NULL;
	r.task_index = -1;
	r.verdict = "allow";
	r.category = NULL;
	r.rule = NULL;
	r.command = "true";
	assert_int_equal(vg_store_audit(c->st, &r, &e), 0);
	assert_int_equal(vg_store_audit_each(c->st, "R1", audit_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "R1:3:auto-deny:deny:destructive:"
	    "builtin:rm-root:rm -rf /;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_audit_each(c->st, NULL, audit_cb, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "R1:3:auto-deny:deny:destructive:"
	    "builtin:rm-root:rm -rf /;-:-1:auto-deny:allow:-:-:true;");
	vg_buf_release(&b);
}

/* Appends time:fields; of each record (the packed-audit tests). */
static int
audit_time_cb(void *arg, const struct vg_audit_rec *r)
{
	struct vg_buf *b = arg;

	vg_buf_printf(b, "%.3f:", r->time);
	return audit_cb(arg, r);
}

/* Stops after the first record. */
static int
audit_stop_cb(void *arg, const struct vg_audit_rec *r)
{
	(*(int *)arg)++;
	(void)r;
	return 1;
}

/* Runs one SQL statement on the test's database file directly. */
static void
raw_sql(struct ctx *c, const char *sql)
{
	char *path = vg_path_join(c->home, "vigil.db");
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	free(path);
}

/*
 * vg_store_audit_many packs decisions (one row per run among them,
 * shared strings stored once, a record given twice encoded once and
 * kept at both times, NULL fields kept); vg_store_audit_each
 * unpacks them merged with single rows by time and filters by run;
 * prune counts packed records and drops a pack once its newest is
 * older; a malformed pack is an error naming its row.
 */
static void
test_audit_pack(void **state)
{
	struct ctx *c = *state;
	struct vg_audit_rec r[5], one;
	const struct vg_audit_rec *p[6] = { &r[0], &r[1], &r[0], &r[2],
	    &r[3], &r[4] };
	double t[6] = { 1000.0, 1001.0, 1001.5, 1002.0, 1003.0, 1004.0 };
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	long long removed = -1;
	int k, n = 0;
	const char *cmd = "ls /tmp";

	vg_err_init(&e);
	memset(r, 0, sizeof(r));
	for (k = 0; k < 5; k++) {
		r[k].time = 1.0;	/* not read: t[] holds the times */
		r[k].task_index = -1;
		r[k].mode = "auto-deny";
		r[k].verdict = "allow";
		r[k].command = cmd;
	}
	r[1].command = "rm -rf /";
	r[1].verdict = "deny";
	r[1].category = "destructive";
	r[1].rule = "floor:delete-root";
	r[1].reason = "deletes /";
	r[3].run_id = "R9";
	r[3].task_index = 2;
	r[4].verdict = NULL;		/* stored as deny */
	memset(&one, 0, sizeof(one));
	one.time = 1002.5;
	one.task_index = -1;
	one.mode = "auto-deny";
	one.verdict = "allow";
	one.command = "single";
	assert_int_equal(vg_store_audit(c->st, &one, &e), 0);
	assert_int_equal(vg_store_audit_many(c->st, p, t, 6, &e), 0);
	assert_int_equal(vg_store_audit_each(c->st, NULL, audit_time_cb, &b,
	    &e), 0);
	assert_string_equal(vg_buf_str(&b),
	    "1000.000:-:-1:auto-deny:allow:-:-:ls /tmp;"
	    "1001.000:-:-1:auto-deny:deny:destructive:floor:delete-root:"
	    "rm -rf /;"
	    "1001.500:-:-1:auto-deny:allow:-:-:ls /tmp;"
	    "1002.000:-:-1:auto-deny:allow:-:-:ls /tmp;"
	    "1002.500:-:-1:auto-deny:allow:-:-:single;"
	    "1003.000:R9:2:auto-deny:allow:-:-:ls /tmp;"
	    "1004.000:-:-1:auto-deny:deny:-:-:ls /tmp;");
	vg_buf_reset(&b);
	assert_int_equal(vg_store_audit_each(c->st, "R9", audit_cb, &b, &e),
	    0);
	assert_string_equal(vg_buf_str(&b), "R9:2:auto-deny:allow:-:-:ls /tmp;");
	assert_int_equal(vg_store_audit_each(c->st, NULL, audit_stop_cb, &n,
	    &e), 0);
	assert_int_equal(n, 1);
	/* Three packs: decisions 0-3, 4 (R9), 5. */
	assert_int_equal(vg_store_audit_prune(c->st, 1002.2, &removed, &e),
	    0);
	assert_int_equal(removed, 4);
	assert_int_equal(vg_store_audit_prune(c->st, 1003.5, &removed, &e),
	    0);
	assert_int_equal(removed, 2);	/* "single" and the R9 pack */
	vg_buf_reset(&b);
	assert_int_equal(vg_store_audit_each(c->st, NULL, audit_cb, &b, &e),
	    0);
	assert_string_equal(vg_buf_str(&b), "-:-1:auto-deny:deny:-:-:ls /tmp;");
	/* A malformed pack is refused by name, not read past its end. */
	raw_sql(c, "UPDATE audit_pack SET data = x'0105'");
	assert_int_not_equal(vg_store_audit_each(c->st, NULL, audit_cb, &b,
	    &e), 0);
	assert_non_null(strstr(e.msg, "audit_pack row"));
	assert_non_null(strstr(e.msg, "malformed"));
	vg_err_init(&e);
	raw_sql(c, "UPDATE audit_pack SET data = x'00', n = 1");
	assert_int_not_equal(vg_store_audit_each(c->st, NULL, audit_cb, &b,
	    &e), 0);
	assert_non_null(strstr(e.msg, "malformed"));
	vg_buf_release(&b);
}

/* Counts the records read back and checks each against its twin:
 * record k of the pack is command "c<k mod 6000>". */
static int
audit_seq_cb(void *arg, const struct vg_audit_rec *r)
{
	int *k = arg;
	char want[32];

	snprintf(want, sizeof(want), "c%d", *k % 6000);
	if (strcmp(r->command, want) != 0 || r->task_index != *k % 6000)
		return 1;
	(*k)++;
	return 0;
}

/* More distinct records and strings in one pack than the packer's
 * tables first hold (4096 slots, half used at most): both grow within
 * the row and every decision reads back in order. */
static void
test_audit_pack_grow(void **state)
{
	struct ctx *c = *state;
	enum { DISTINCT = 6000, N = 9000 };
	struct vg_audit_rec *r = calloc(DISTINCT, sizeof(*r));
	const struct vg_audit_rec **p = calloc(N, sizeof(*p));
	double *t = calloc(N, sizeof(*t));
	char (*cmd)[16] = calloc(DISTINCT, sizeof(*cmd));
	struct vg_err e;
	int k, n = 0;

	assert_non_null(r);
	assert_non_null(p);
	assert_non_null(t);
	assert_non_null(cmd);
	vg_err_init(&e);
	for (k = 0; k < DISTINCT; k++) {
		snprintf(cmd[k], sizeof(cmd[k]), "c%d", k);
		r[k].task_index = k;
		r[k].mode = "auto-deny";
		r[k].verdict = "allow";
		r[k].command = cmd[k];
	}
	for (k = 0; k < N; k++) {
		p[k] = &r[k % DISTINCT];	/* 3000 given twice */
		t[k] = 2000.0 + k * 0.001;
	}
	assert_int_equal(vg_store_audit_many(c->st, p, t, N, &e), 0);
	assert_int_equal(vg_store_audit_each(c->st, NULL, audit_seq_cb, &n,
	    &e), 0);
	assert_int_equal(n, N);
	free(cmd);
	free(t);
	free(p);
	free(r);
}

static void
test_unique_run_id(void **state)
{
	struct ctx *c = *state;
	struct vg_run_info r;
	struct vg_err e;

	add_run(c, "20250101-000000-aaaaaa", 1, 0);
	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "20250101-000000-aaaaaa");
	r.dir = vg_xstrdup("/x");
	vg_err_init(&e);
	assert_int_equal(vg_store_run_create(c->st, &r, "{}", &e), VG_ESTATE);
	assert_non_null(strstr(e.msg, "recording a new run: UNIQUE"));
	vg_run_info_release(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_modes_and_schema, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_reopen_and_newer_schema,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_fails_on_file_home,
		    setup, teardown),
		cmocka_unit_test(test_concurrent_first_open),
		cmocka_unit_test(test_home_dir),
		cmocka_unit_test(test_run_id),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tasks_attempts_events,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_task_counts, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_every_field, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_slot_migration, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_audit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_pack_grow, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_audit_pack, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_unique_run_id, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
