/*
 * test-policy-audit.c - secret redaction and the audit record: the JSON
 * line in the audit file, the sink call, and failure to write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/json.h"
#include "common/path.h"
#include "common/secrets.h"
#include "runner/policy/policy.h"

/* Redacts in and compares with want. */
static void
redacts(const char *in, const char *want)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_policy_redact(in, &b);
	if (strcmp(vg_buf_str(&b), want) != 0)
		fail_msg("redact(%s)\n  got  %s\n  want %s", in, vg_buf_str(&b),
		    want);
	vg_buf_release(&b);
}

/* Values vigil put into a command from ${{ env.* }} or secret-looking
 * variables are redacted by value, whatever their shape. */
static void
test_redact_noted(void **state)
{
	(void)state;
	redacts("curl -d plainword1 x", "curl -d plainword1 x");
	vg_secret_note("HOOK_TOKEN", "plainword1");
	vg_secret_note("SHORT", "abc");		/* too short to note */
	redacts("curl -d plainword1 x", "curl -d [redacted:HOOK_TOKEN] x");
	redacts("echo plainword1plainword1",
	    "echo [redacted:HOOK_TOKEN][redacted:HOOK_TOKEN]");
	redacts("echo abc", "echo abc");
	assert_true(vg_secret_name("MY_API_KEY", 10));
	assert_false(vg_secret_name("KEYFRAMES", 9));
	vg_secret_forget();
	redacts("curl -d plainword1 x", "curl -d plainword1 x");
}

static void
test_redact(void **state)
{
	(void)state;
	redacts("GITHUB_TOKEN=abc123 ./push.sh", "GITHUB_TOKEN=*** ./push.sh");
	redacts("export AWS_SECRET_ACCESS_KEY='x y z'; aws s3 ls",
	    "export AWS_SECRET_ACCESS_KEY='***'; aws s3 ls");
	redacts("DB_PASSWORD=\"p@ss\" psql", "DB_PASSWORD=\"***\" psql");
	redacts("mysql --password=hunter2 -u root",
	    "mysql --password=*** -u root");
	redacts("tool --api-key s3cr3t --verbose",
	    "tool --api-key *** --verbose");
	redacts("git clone https://bob:pa55@github.com/x/y.git",
	    "git clone https://bob:***@github.com/x/y.git");
	redacts("curl -H 'Authorization: Bearer eyJabc.def.ghi' https://x",
	    "curl -H 'Authorization: Bearer ***' https://x");
	redacts("curl -H \"X-Api-Key: 12345\" https://x",
	    "curl -H \"X-Api-Key: ***\" https://x");
	redacts("echo ghp_abcdefghijklmnopqrstuvwxyz0123 | gh auth login",
	    "echo *** | gh auth login");
	redacts("aws configure set aws_access_key_id AKIAABCDEFGHIJKLMNOP",
	    "aws configure set aws_access_key_id ***");
	redacts("export OPENAI=sk-abcdefghijklmnopqrstuvwxyz",
	    "export OPENAI=***");
	redacts("curl -d 'token=xoxb-1234567890-abcdef' https://slack",
	    "curl -d 'token=***' https://slack");
	redacts("echo '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n"
	    "-----END OPENSSH PRIVATE KEY-----' > k",
	    "echo '-----BEGIN PRIVATE KEY-----***-----END PRIVATE KEY-----' "
	    "> k");
	/* Nothing secret: unchanged. */
	redacts("python train.py --lr 0.1 --keyframes 3",
	    "python train.py --lr 0.1 --keyframes 3");
	redacts("rm -rf build/ && make", "rm -rf build/ && make");
	redacts("", "");
}

struct sink_seen {
	int		 calls;
	char		 cmd[256];
	char		 verdict[16];
	char		 rule[64];
	int		 fail;
};

static int
sink(void *arg, const struct vg_audit_rec *r, struct vg_err *e)
{
	struct sink_seen *s = arg;

	s->calls++;
	snprintf(s->cmd, sizeof(s->cmd), "%s", r->command);
	snprintf(s->verdict, sizeof(s->verdict), "%s", r->verdict);
	snprintf(s->rule, sizeof(s->rule), "%s", r->rule ? r->rule : "-");
	if (s->fail)
		return vg_err_set(e, VG_ESTATE, "database is locked");
	return 0;
}

static void
test_audit(void **state)
{
	char dir[] = "/tmp/vg-audit-XXXXXX", path[160], mode[] = "auto-deny";
	struct vg_policy_conf conf = { .mode = mode, .audit_log = path };
	struct vg_policy_ctx ctx = { .cwd = "/home/u/p", .home = "/home/u" };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf text = VG_BUF_INIT;
	struct sink_seen seen = { 0 };
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;
	const char *s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(&conf, "t", NULL, 0, &p, &d, &e),
	    0);
	assert_int_equal(vg_policy_eval(p, "TOKEN=abc rm -rf /", &ctx, &v), 0);
	assert_int_equal(vg_policy_audit(p, "run-1", 3, "TOKEN=abc rm -rf /",
	    &v, "deny", sink, &seen, &e), 0);
	assert_int_equal(vg_policy_eval(p, "ls", &ctx, &v), 0);
	assert_int_equal(vg_policy_audit(p, NULL, -1, "ls", &v, "allow", NULL,
	    NULL, &e), 0);
	assert_int_equal(seen.calls, 1);
	assert_string_equal(seen.cmd, "TOKEN=*** rm -rf /");
	assert_string_equal(seen.verdict, "deny");
	assert_string_equal(seen.rule, "floor:delete-root");
	assert_int_equal(vg_read_file(path, 65536, &text, &e), 0);
	s = vg_buf_str(&text);
	assert_non_null(strstr(s, "\"run\":\"run-1\",\"task\":3,"
	    "\"mode\":\"auto-deny\",\"verdict\":\"deny\","
	    "\"category\":\"destructive\",\"rule\":\"floor:delete-root\","
	    "\"reason\":\"built-in floor: 'rm' deletes recursively the "
	    "protected path '/'\","
	    "\"command\":\"TOKEN=*** rm -rf /\"}\n"));
	assert_non_null(strstr(s, "\"run\":null,\"task\":null,"
	    "\"mode\":\"auto-deny\",\"verdict\":\"allow\",\"category\":null,"
	    "\"rule\":null,\"reason\":null,\"command\":\"ls\"}\n"));
	assert_null(strstr(s, "abc"));
	/* A sink failure is reported. */
	seen.fail = 1;
	assert_int_equal(vg_policy_audit(p, NULL, -1, "ls", &v, "allow", sink,
	    &seen, &e), VG_ESTATE);
	assert_string_equal(e.msg, "database is locked");
	vg_policy_free(p);
	/* An audit file that cannot be opened is an error. */
	snprintf(path, sizeof(path), "%s/no/such/dir/a.jsonl", dir);
	assert_int_equal(vg_policy_open_mem(&conf, "t", NULL, 0, &p, &d, &e),
	    0);
	assert_int_equal(vg_policy_audit(p, NULL, -1, "ls", &v, "allow", NULL,
	    NULL, &e), VG_ENOENT);
	assert_non_null(strstr(e.msg, "its directory"));
	assert_non_null(strstr(e.msg, "No such file or directory"));
	vg_policy_free(p);
	vg_buf_release(&text);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	unlink(path);
	rmdir(dir);
}

/* The audit line of a record is valid JSON escaped as vg_json_quote
 * escapes (quotes, backslashes, control bytes, DEL; UTF-8 kept), with
 * its time in microseconds, the task index and nulls. */
static void
test_audit_line(void **state)
{
	static const char nasty[] = "a\"b\\c\n\r\t\x01\x1f\x7f caf\xc3\xa9 }";
	struct vg_audit_rec r;
	struct vg_buf got = VG_BUF_INIT, want = VG_BUF_INIT;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.time = 1718000000.25;
	r.run_id = "r-1";
	r.task_index = 12;
	r.mode = "auto-deny";
	r.verdict = "deny";
	r.category = "destructive";
	r.rule = nasty;
	r.reason = NULL;
	r.command = nasty;
	vg_policy_audit_line_head(&got, r.time);
	vg_policy_audit_line_tail(&got, &r);
	vg_buf_adds(&want, "{\"time\":1718000000.250000,\"run\":\"r-1\","
	    "\"task\":12,\"mode\":\"auto-deny\",\"verdict\":\"deny\","
	    "\"category\":\"destructive\",\"rule\":");
	vg_json_quote(&want, nasty, strlen(nasty));
	vg_buf_adds(&want, ",\"reason\":null,\"command\":");
	vg_json_quote(&want, nasty, strlen(nasty));
	vg_buf_adds(&want, "}\n");
	assert_string_equal(vg_buf_str(&got), vg_buf_str(&want));
	vg_buf_reset(&got);
	r.task_index = -1;
	r.time = 5.0;
	r.run_id = NULL;
	r.rule = r.command = "";
	vg_policy_audit_line_head(&got, r.time);
	vg_policy_audit_line_tail(&got, &r);
	assert_string_equal(vg_buf_str(&got), "{\"time\":5.000000,\"run\":null,"
	    "\"task\":null,\"mode\":\"auto-deny\",\"verdict\":\"deny\","
	    "\"category\":\"destructive\",\"rule\":\"\",\"reason\":null,"
	    "\"command\":\"\"}\n");
	vg_buf_release(&got);
	vg_buf_release(&want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_redact_noted),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_audit_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
