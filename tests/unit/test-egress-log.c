/*
 * test-egress-log.c - a local session's connections into the audit
 * (runner/core/egress-log.c, vg_egress_session_audit) against a real
 * store: the records of DIR.egress.jsonl after the last audited byte
 * become audit rows of the session, each naming the job its owner line
 * gives; each record is audited once however often the call is made; a
 * line still being written waits for the next call; lines that are no
 * record are skipped; a session without a proxy has nothing to audit;
 * a link planted at the mark file is refused, not followed.  The sums
 * of a session's log (vg_egress_session_sum) group its records per job
 * and host, whatever was audited, and refuse a log that is a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/diag.h"
#include "common/err.h"
#include "runner/core/egress-log.h"
#include "runner/core/store.h"
#include "runner/manifest/manifest.h"

struct fx {
	char			 home[64];
	char			 dir[128];	/* the session directory */
	char			 log[160];
	struct vg_store		*st;
	struct vg_manifest	*m;
};

static const char rec_ok[] = "{\"proto\":\"http\",\"host\":\"127.0.0.1\","
    "\"port\":8080,\"addr\":\"127.0.0.1\",\"allowed\":true,\"rule\":"
    "\"allow 127.0.0.1:8080\",\"error\":null,\"up\":20,\"down\":44,"
    "\"cgroup\":501}\n";
static const char rec_no[] = "{\"proto\":\"connect\",\"host\":\"evil.org\","
    "\"port\":443,\"addr\":\"\",\"allowed\":false,\"rule\":\"not listed\","
    "\"error\":null,\"up\":0,\"down\":0,\"cgroup\":502}\n";

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct vg_load_opts opts;
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_err e;
	static const char text[] = "isolation:\n  network:\n"
	    "    allow: [\"127.0.0.1:8080\"]\n";

	vg_err_init(&e);
	snprintf(f->home, sizeof(f->home), "/tmp/vg-test-egress-log-XXXXXX");
	assert_non_null(mkdtemp(f->home));
	snprintf(f->dir, sizeof(f->dir), "%s/s1", f->home);
	snprintf(f->log, sizeof(f->log), "%s.egress.jsonl", f->dir);
	assert_int_equal(mkdir(f->dir, 0700), 0);
	assert_int_equal(vg_store_open(f->home, &f->st, &e), 0);
	memset(&opts, 0, sizeof(opts));
	opts.user_config = "/nonexistent/vigil/user.yaml";
	opts.site_config = "/nonexistent/vigil/site.yaml";
	opts.session = 1;
	if (vg_manifest_load_mem("s.yaml", text, strlen(text), &opts, &f->m,
	    &d, &e) != 0)
		fail_msg("manifest: %s", e.msg);
	vg_diag_release(&d);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	vg_store_close(f->st);
	vg_manifest_free(f->m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->home);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void
append(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* The session's audit rows: "verdict|command|reason" joined by ";". */
struct rows {
	struct vg_buf	 b;
};

static int
row_cb(void *arg, const struct vg_audit_rec *r)
{
	struct rows *rw = arg;

	if (strcmp(r->mode, "egress") != 0)
		return 0;
	vg_buf_printf(&rw->b, "%s%s|%s|%s|%d", rw->b.len ? ";" : "",
	    r->verdict, r->command, r->reason, r->task_index);
	return 0;
}

static char *
rows(struct fx *f)
{
	struct rows rw = { VG_BUF_INIT };
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_store_audit_each(f->st, "s1", row_cb, &rw, &e),
	    0);
	vg_buf_addc(&rw.b, '\0');
	return rw.b.data;
}

static int
audit(struct fx *f)
{
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	rc = vg_egress_session_audit(f->st, f->m, "s1", f->dir, &e);
	if (rc != 0)
		print_message("audit: %s\n", e.msg);
	return rc;
}

static void
test_each_once(void **state)
{
	struct fx *f = *state;
	char *got;

	/* No proxy, no log: nothing to do. */
	assert_int_equal(audit(f), 0);
	got = rows(f);
	assert_string_equal(got, "");
	free(got);
	/* Job 1's owner line, its record, and a refusal of no job. */
	append(f->log, "{\"owner\":501,\"job\":1}\n");
	append(f->log, rec_ok);
	append(f->log, "not a record\n{\"proto\":1}\n");
	append(f->log, rec_no);
	/* A record being written: not whole yet. */
	append(f->log, "{\"proto\":\"http\",\"host\":\"x\"");
	assert_int_equal(audit(f), 0);
	got = rows(f);
	assert_string_equal(got, "allow|http 127.0.0.1:8080|job 1: 20 bytes "
	    "up, 44 down, to 127.0.0.1|-1;deny|connect evil.org:443|refused "
	    "by the egress proxy|-1");
	free(got);
	/* Again: nothing new, nothing twice. */
	assert_int_equal(audit(f), 0);
	got = rows(f);
	assert_non_null(strstr(got, "deny|connect evil.org:443"));
	assert_null(strstr(strstr(got, "deny|") + 1, "deny|"));
	free(got);
	/* The rest of that line, then a job whose owner line came before
	 * the audited part. */
	append(f->log, ",\"port\":80,\"addr\":\"192.0.2.1\",\"allowed\":true,"
	    "\"rule\":\"allow x\",\"error\":null,\"up\":1,\"down\":2,"
	    "\"cgroup\":501}\n");
	assert_int_equal(audit(f), 0);
	got = rows(f);
	assert_non_null(strstr(got, ";allow|http x:80|job 1: 1 bytes up, 2 "
	    "down, to 192.0.2.1|-1"));
	free(got);
}

static void
test_mark_link(void **state)
{
	struct fx *f = *state;
	char mark[200], victim[200];
	struct stat st;
	struct vg_err e;

	append(f->log, rec_ok);
	snprintf(mark, sizeof(mark), "%s.egress.audited", f->dir);
	snprintf(victim, sizeof(victim), "%s/victim", f->home);
	append(victim, "keep\n");
	assert_int_equal(symlink(victim, mark), 0);
	vg_err_init(&e);
	assert_int_not_equal(vg_egress_session_audit(f->st, f->m, "s1",
	    f->dir, &e), 0);
	assert_non_null(strstr(e.msg, ".egress.audited"));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 5);
}

static void
test_session_sum(void **state)
{
	struct fx *f = *state;
	struct vg_egress_sum s;
	struct vg_buf out = VG_BUF_INIT;
	char victim[200];
	struct vg_err e;

	vg_err_init(&e);
	/* No proxy: an empty sum. */
	assert_int_equal(vg_egress_session_sum(f->dir, &s, &e), 0);
	assert_int_equal(s.conns, 0);
	assert_int_equal(s.jobs, 1);
	vg_egress_sum_release(&s);
	append(f->log, "{\"owner\":501,\"job\":1}\n");
	append(f->log, rec_ok);
	append(f->log, rec_ok);
	append(f->log, rec_no);
	append(f->log, "{\"proto\":\"http\"");	/* being written */
	assert_int_equal(audit(f), 0);		/* changes nothing here */
	assert_int_equal(vg_egress_session_sum(f->dir, &s, &e), 0);
	assert_int_equal(s.conns, 3);
	assert_int_equal(s.refused, 1);
	assert_int_equal(s.up, 40);
	assert_int_equal(s.down, 88);
	vg_egress_sum_text(&s, &out);
	vg_buf_addc(&out, '\0');
	assert_string_equal(out.data, "\negress: 3 connections, 1 refused, "
	    "0 failed, 40 bytes up, 88 down\n"
	    "  job 1     reached  127.0.0.1:8080  2 connections, 40 bytes up, "
	    "88 down\n"
	    "  no job    refused  evil.org:443  1 connection (not listed)\n");
	vg_buf_release(&out);
	vg_egress_sum_release(&s);
	/* A link planted for the log is refused, not read. */
	snprintf(victim, sizeof(victim), "%s/victim", f->home);
	append(victim, rec_ok);
	assert_int_equal(unlink(f->log), 0);
	assert_int_equal(symlink(victim, f->log), 0);
	assert_int_not_equal(vg_egress_session_sum(f->dir, &s, &e), 0);
	assert_non_null(strstr(e.msg, "egress"));
	vg_egress_sum_release(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_once, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_mark_link, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_session_sum, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
