/*
 * test-group.c - concurrency groups and run reports: overlap names, the
 * default group, lock file names, the kernel lock against a second
 * descriptor (skip, the wait bound, release), holders found in the store
 * (a live owner, a dead local owner, a dead Slurm owner with a job id),
 * the notification claim, and the text and JSON reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/json.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/core/group.h"
#include "runner/core/leftover.h"
#include "runner/core/notify.h"
#include "runner/core/store.h"

#include "store-fixture.h"

/* Records run id of group grp with one task in state ts, owned by pid. */
static void
add_run(struct ctx *c, const char *id, const char *grp, const char *sched,
    enum vg_state rs, enum vg_state ts, const char *handle, pid_t pid)
{
	struct vg_run_info r;
	struct vg_task_rec t;
	unsigned long long start = 0;
	struct vg_err e;

	vg_err_init(&e);
	memset(&r, 0, sizeof(r));
	vg_strlcpy(r.id, id, sizeof(r.id));
	r.name = vg_xstrdup(grp);
	r.scheduler = vg_xstrdup(sched);
	r.backend = vg_xstrdup("local");
	r.dir = vg_xstrdup(c->home);
	r.created = vg_now();
	r.ntasks = 1;
	assert_int_equal(vg_store_run_create(c->st, &r, "{}", &e), 0);
	vg_run_info_release(&r);
	memset(&t, 0, sizeof(t));
	t.state = ts;
	t.exit_code = -1;
	assert_int_equal(vg_store_task_add(c->st, id, &t, "{}", "-", &e), 0);
	/* A new task has no handle yet; the driver records it later. */
	vg_strlcpy(t.handle, handle, sizeof(t.handle));
	assert_int_equal(vg_store_task_put(c->st, id, &t, &e), 0);
	assert_int_equal(vg_store_group_set(c->st, id, grp, NULL, &e), 0);
	if (rs != VG_ST_PENDING)
		assert_int_equal(vg_store_run_set_state(c->st, id, rs, NULL,
		    &e), 0);
	if (pid > 0) {
		(void)vg_pid_start_time(pid, &start);
		assert_int_equal(vg_store_run_set_owner(c->st, id, pid,
		    pid == getpid() ? start : start + 1, &e), 0);
	}
}

static void
test_names(void **state)
{
	static char file[] = "/srv/jobs/night.ly.yaml", name[] = "nightly",
	    group[] = "etl/a b";
	struct vg_manifest m;
	struct vg_buf b = VG_BUF_INIT;
	char *g;

	(void)state;
	assert_int_equal(vg_overlap_parse(NULL, 0), VG_OVERLAP_ALLOW);
	assert_int_equal(vg_overlap_parse(NULL, 1), VG_OVERLAP_SKIP);
	assert_int_equal(vg_overlap_parse("replace", 1), VG_OVERLAP_REPLACE);
	assert_int_equal(vg_overlap_parse("sometimes", 0), -1);
	assert_string_equal(vg_overlap_name(VG_OVERLAP_WAIT), "wait");
	memset(&m, 0, sizeof(m));
	m.file = file;
	g = vg_group_of(&m);
	assert_string_equal(g, "night.ly");
	free(g);
	m.name = name;
	g = vg_group_of(&m);
	assert_string_equal(g, "nightly");
	free(g);
	m.concurrency.group = group;
	g = vg_group_of(&m);
	assert_string_equal(g, "etl/a b");
	vg_group_file(g, &b);
	assert_string_equal(vg_buf_str(&b), "etl%2Fa%20b.lock");
	vg_buf_reset(&b);
	vg_group_file("..x", &b);
	assert_string_equal(vg_buf_str(&b), "%2E.x.lock");
	vg_buf_release(&b);
	free(g);
}

static void
test_lock(void **state)
{
	struct ctx *c = *state;
	struct vg_group g1 = VG_GROUP_INIT, g2 = VG_GROUP_INIT;
	struct vg_group_result res;
	struct vg_group_req rq = { .home = c->home, .name = "g",
		.overlap = VG_OVERLAP_SKIP, .self = "run-a" };
	struct vg_err e;
	double t0;

	vg_err_init(&e);
	assert_int_equal(vg_group_acquire(c->st, &rq, &g1, &res, &e), 0);
	assert_int_equal(res.held, 0);
	assert_true(g1.fd >= 0);
	/* A second open file description conflicts, in this process too. */
	rq.self = "run-b";
	assert_int_equal(vg_group_acquire(c->st, &rq, &g2, &res, &e), 0);
	assert_int_equal(res.held, 1);
	assert_string_equal(res.holder, "run-a");
	assert_non_null(strstr(res.why, "its lock is taken"));
	assert_int_equal(g2.fd, -1);
	vg_group_release(&g2);
	/* wait: bounded. */
	rq.overlap = VG_OVERLAP_WAIT;
	rq.wait = 0.3;
	t0 = vg_now();
	assert_int_equal(vg_group_acquire(c->st, &rq, &g2, &res, &e), 0);
	assert_int_equal(res.held, 1);
	assert_true(vg_now() - t0 >= 0.3 && vg_now() - t0 < 2.0);
	assert_non_null(strstr(res.why, "after waiting"));
	vg_group_release(&g2);
	/* Released: the next one gets it. */
	vg_group_release(&g1);
	rq.overlap = VG_OVERLAP_SKIP;
	assert_int_equal(vg_group_acquire(c->st, &rq, &g2, &res, &e), 0);
	assert_int_equal(res.held, 0);
	vg_group_release(&g2);
}

static void
test_holders(void **state)
{
	struct ctx *c = *state;
	struct vg_group_result h;
	struct vg_err e;
	int found;

	vg_err_init(&e);
	/* A dead local owner (a later process's start time) holds nothing. */
	add_run(c, "r-dead", "g", "direct", VG_ST_RUNNING, VG_ST_RUNNING, "1",
	    getppid());
	memset(&h, 0, sizeof(h));
	assert_int_equal(vg_group_holder(c->st, "g", NULL, &h, &found, &e), 0);
	assert_int_equal(found, 0);
	/* A dead owner whose Slurm job is still queued holds the group. */
	add_run(c, "r-slurm", "g", "slurm", VG_ST_RUNNING, VG_ST_QUEUED,
	    "4242_0", getppid());
	assert_int_equal(vg_group_holder(c->st, "g", NULL, &h, &found, &e), 0);
	assert_int_equal(found, 1);
	assert_string_equal(h.holder, "r-slurm");
	assert_int_equal(h.holder_pid, 0);
	assert_non_null(strstr(h.why, "slurm jobs may still run"));
	/* Not its own holder; ended runs hold nothing. */
	assert_int_equal(vg_group_holder(c->st, "g", "r-slurm", &h, &found,
	    &e), 0);
	assert_int_equal(found, 0);
	/* A live owner (this process) holds it. */
	add_run(c, "r-live", "g2", "direct", VG_ST_RUNNING, VG_ST_RUNNING, "1",
	    getpid());
	assert_int_equal(vg_group_holder(c->st, "g2", NULL, &h, &found, &e),
	    0);
	assert_int_equal(found, 1);
	assert_int_equal(h.holder_pid, getpid());
	assert_int_equal(vg_store_run_set_state(c->st, "r-live",
	    VG_ST_SUCCEEDED, NULL, &e), 0);
	assert_int_equal(vg_group_holder(c->st, "g2", NULL, &h, &found, &e),
	    0);
	assert_int_equal(found, 0);
}

static void
test_claim(void **state)
{
	struct ctx *c = *state;
	struct vg_err e;
	char *grp = NULL, *holder = NULL;
	int claimed;

	vg_err_init(&e);
	add_run(c, "r1", "g", "direct", VG_ST_RUNNING, VG_ST_RUNNING, "", 0);
	/* Not ended: nothing to claim. */
	assert_int_equal(vg_store_notify_claim(c->st, "r1", &claimed, &e), 0);
	assert_int_equal(claimed, 0);
	assert_int_equal(vg_store_run_set_state(c->st, "r1", VG_ST_FAILED,
	    NULL, &e), 0);
	assert_int_equal(vg_store_notify_claim(c->st, "r1", &claimed, &e), 0);
	assert_int_equal(claimed, 1);
	assert_int_equal(vg_store_notify_claim(c->st, "r1", &claimed, &e), 0);
	assert_int_equal(claimed, 0);
	/* A later end (retry) is claimed again. */
	usleep(20000);
	assert_int_equal(vg_store_run_set_state(c->st, "r1", VG_ST_SUCCEEDED,
	    NULL, &e), 0);
	assert_int_equal(vg_store_notify_claim(c->st, "r1", &claimed, &e), 0);
	assert_int_equal(claimed, 1);
	assert_int_equal(vg_store_group_get(c->st, "r1", &grp, &holder, &e),
	    0);
	assert_string_equal(grp, "g");
	assert_null(holder);
	free(grp);
	/* A run without a group row is claimed too. */
	assert_int_equal(vg_store_group_get(c->st, "none", &grp, NULL, &e), 0);
	assert_null(grp);
}

/* A database from before migration 4 (no run_groups) gains the table on
 * open, and the later ones (the counts by state of its tasks). */
static void
test_migrate(void **state)
{
	struct ctx *c = *state;
	struct vg_run_info r;
	struct vg_err e;
	char *path, *grp = NULL;
	sqlite3 *db;

	vg_err_init(&e);
	add_run(c, "old", "g", "direct", VG_ST_SUCCEEDED, VG_ST_SUCCEEDED, "",
	    0);
	vg_store_close(c->st);
	c->st = NULL;
	path = vg_path_join(c->home, "vigil.db");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE run_groups;"
	    " DROP TABLE audit_pack; DROP TABLE sessions;"
	    " DROP INDEX tasks_state; DROP TABLE task_counts;"
	    " DROP TRIGGER task_counts_add; DROP TRIGGER task_counts_move;"
	    " DROP TRIGGER task_counts_drop; DROP TRIGGER task_counts_run;"
	    " ALTER TABLE runs DROP COLUMN host;"
	    " ALTER TABLE attempts DROP COLUMN slot;"
	    " ALTER TABLE runs DROP COLUMN origin;"
	    " ALTER TABLE attempts DROP COLUMN out_end;"
	    " ALTER TABLE attempts DROP COLUMN err_end;"
	    " DROP TABLE reuse; DROP TABLE task_keys; DROP TABLE reuse_stat;"
	    " DROP TABLE reuse_parts;"
	    " DELETE FROM migrations WHERE version >= 4;"
	    " PRAGMA user_version = 3", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	free(path);
	assert_int_equal(vg_store_open(c->home, &c->st, &e), 0);
	/* Migration 8 counted the tasks already there. */
	assert_int_equal(vg_store_run_get(c->st, "old", &r, &e), 0);
	assert_int_equal(r.counts[VG_ST_SUCCEEDED], 1);
	/* Migration 10: a run made before has no origin. */
	assert_null(r.origin);
	vg_run_info_release(&r);
	assert_int_equal(vg_store_group_get(c->st, "old", &grp, NULL, &e), 0);
	assert_null(grp);
	assert_int_equal(vg_store_group_set(c->st, "old", "g", NULL, &e), 0);
	assert_int_equal(vg_store_group_get(c->st, "old", &grp, NULL, &e), 0);
	assert_string_equal(grp, "g");
	free(grp);
}

static void
test_report(void **state)
{
	static char name[] = "nightly", file[] = "n.yaml";
	struct vg_run_report rep;
	struct vg_manifest m;
	struct vg_json_doc *doc = NULL;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	size_t i;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.name = name;
	m.file = file;
	vg_run_report_sample(&m, &rep);
	vg_run_report_text(&rep, &b);
	assert_string_equal(vg_buf_str(&b),
	    "vigil: run 00000000-000000-test00 (nightly) FAILED: 2 tasks: "
	    "1 SUCCEEDED, 1 FAILED\n"
	    "  task 1 [-] FAILED, exit 1: exit status 1\n"
	    "    | this is a sample stderr line\n");
	/* More than VG_REPORT_TASKS bad tasks: counted. */
	rep.nbad = 13;
	vg_buf_reset(&b);
	vg_run_report_text(&rep, &b);
	assert_non_null(strstr(vg_buf_str(&b), "  ... and 12 more (vigil "
	    "status 00000000-000000-test00)\n"));
	vg_buf_reset(&b);
	vg_run_report_json(&rep, &b);
	vg_err_init(&e);
	assert_int_equal(vg_json_parse(vg_buf_str(&b), b.len, NULL, &doc, &e), 0);
	for (i = 0; i < 2; i++)
		assert_non_null(strstr(vg_buf_str(&b), i == 0 ?
		    "\"version\":1,\"event\":\"test\"" :
		    "\"failed_more\":12}"));
	assert_non_null(strstr(vg_buf_str(&b), "\"stderr_tail\":[\"this is a "
	    "sample stderr line\"]"));
	vg_json_free(doc);
	vg_buf_release(&b);
	vg_run_report_release(&rep);
}

static void
test_wants(void **state)
{
	struct vg_notify_conf nc;
	static char url[] = "http://127.0.0.1:9/";
	struct vg_webhook wh = { .url = url };

	(void)state;
	memset(&nc, 0, sizeof(nc));
	nc.on = VG_NOTIFY_FAILURE;
	/* No channel: never. */
	assert_false(vg_notify_wants(&nc, VG_ST_FAILED));
	nc.webhook = &wh;
	nc.nwebhook = 1;
	assert_true(vg_notify_wants(&nc, VG_ST_FAILED));
	assert_false(vg_notify_wants(&nc, VG_ST_SUCCEEDED));
	assert_false(vg_notify_wants(&nc, VG_ST_CANCELLED));
	assert_false(vg_notify_wants(&nc, VG_ST_DENIED));
	nc.on = VG_NOTIFY_DENIED | VG_NOTIFY_SUCCESS;
	assert_true(vg_notify_wants(&nc, VG_ST_DENIED));
	assert_true(vg_notify_wants(&nc, VG_ST_SUCCEEDED));
	assert_false(vg_notify_wants(&nc, VG_ST_FAILED));
	nc.on = VG_NOTIFY_ALWAYS;
	assert_true(vg_notify_wants(&nc, VG_ST_CANCELLED));
	assert_false(vg_notify_wants(&nc, VG_ST_SKIPPED));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate, setup, teardown),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_wants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
