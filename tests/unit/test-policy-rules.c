/*
 * test-policy-rules.c - the site policy file and rules: validation with
 * FILE:LINE:COL diagnostics, allow and deny by glob and by category, the
 * site floor manifests cannot weaken, modes, and loading from a file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/path.h"
#include "runner/policy/policy.h"

static const struct vg_policy_ctx ctx = {
	.cwd = "/home/u/proj", .home = "/home/u",
};

/* Opens site text (may be NULL) with conf; returns rc, fills diag. */
static int
open_site(const char *text, struct vg_policy_conf *conf,
    struct vg_policy **p, struct vg_diag *d, struct vg_err *e)
{
	vg_err_init(e);
	return vg_policy_open_mem(conf, "site.yaml", text,
	    text ? strlen(text) : 0, p, d, e);
}

/* Asserts that diag holds exactly one line equal to want. */
static void
one_diag(struct vg_diag *d, const char *want)
{
	if (d->lines.n != 1 || strcmp(d->lines.v[0], want) != 0) {
		size_t k;

		for (k = 0; k < d->lines.n; k++)
			printf("got: %s\n", d->lines.v[k]);
		fail_msg("want: %s", want);
	}
	vg_strv_release(&d->lines);
}

/* Bad site files are reported with their place and what is valid. */
static void
test_site_errors(void **state)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;

	(void)state;
	assert_int_equal(open_site("mode: sometimes\n", NULL, &p, &d, &e),
	    VG_EINVAL);
	assert_null(p);
	one_diag(&d, "site.yaml:1:7: mode must be auto-deny, auto-approve or "
	    "interactive, not 'sometimes'");
	assert_int_equal(open_site("version: 1\ncolour: red\n", NULL, &p, &d,
	    &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:1: unknown key 'colour' (valid: version, "
	    "mode, auto_approve, audit_log, allow, deny, "
	    "safe_volume_drivers)");
	assert_int_equal(open_site("deny:\n  - id: x\n    category: nope\n"
	    "    reason: r\n", NULL, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:5: rule 'x': unknown category 'nope' "
	    "(valid: destructive, raw-disk, permissions, remote-code, "
	    "privilege, system-config, host-disruption, exfiltration, "
	    "reverse-shell, obfuscation, opaque-code, scheduler-abuse, "
	    "host-access, rule, unparseable)");
	assert_int_equal(open_site("deny:\n  - id: x\n    reason: r\n", NULL,
	    &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:5: rule 'x' needs 'match' (a glob on the "
	    "command) or 'category'");
	assert_int_equal(open_site("allow:\n  - match: 'ls *'\n    reason: r\n",
	    NULL, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:5: rule needs an 'id'");
	assert_int_equal(open_site("allow:\n  - id: 'a b'\n    match: x\n"
	    "    reason: r\n", NULL, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:5: rule id 'a b' must be 1-48 letters, "
	    "digits, '-', '_' or '.'");
	assert_int_equal(open_site("deny:\n  - id: x\n    match: y\n", NULL,
	    &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:2:5: rule 'x' needs a 'reason'");
	assert_int_equal(open_site("deny:\n  - id: x\n    match: y\n"
	    "    reason: r\n    colour: red\n", NULL, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:5:5: unknown rule field 'colour' (valid: id, "
	    "match, category, reason, command, url)");
	assert_int_equal(open_site("deny: [\n", NULL, &p, &d, &e), VG_EINVAL);
	assert_int_equal(d.lines.n, 1);
	assert_non_null(strstr(d.lines.v[0], "site.yaml:"));
	vg_diag_release(&d);
	assert_int_equal(open_site("- a\n- b\n", NULL, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "site.yaml:1:1: the policy file must be a mapping "
	    "(version, mode, auto_approve, audit_log, allow, deny, "
	    "safe_volume_drivers)");
	assert_int_equal(open_site("audit_log: rel/path\n", NULL, &p, &d, &e),
	    VG_EINVAL);
	one_diag(&d, "site.yaml:1:12: audit_log must be an absolute path");
	assert_int_equal(open_site("auto_approve: maybe\n", NULL, &p, &d, &e),
	    VG_EINVAL);
	one_diag(&d, "site.yaml:1:15: auto_approve must be true or false");
	/* An empty file is an empty policy. */
	assert_int_equal(open_site("", NULL, &p, &d, &e), 0);
	vg_policy_free(p);
}

/* Manifest rules are validated with their manifest location. */
static void
test_manifest_rule_errors(void **state)
{
	static char id[] = "r1", cat[] = "unknown", reason[] = "why",
	    file[] = "job.yaml", mode[] = "sideways";
	struct vg_rule r = { .id = id, .category = cat, .reason = reason,
	    .loc = { .file = file, .line = 12, .col = 7 } };
	struct vg_policy_conf conf = { .deny = &r, .ndeny = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;

	(void)state;
	assert_int_equal(open_site(NULL, &conf, &p, &d, &e), VG_EINVAL);
	assert_int_equal(d.lines.n, 1);
	assert_non_null(strstr(d.lines.v[0], "job.yaml:12:7: rule 'r1': "
	    "unknown category 'unknown'"));
	vg_diag_release(&d);
	conf.ndeny = 0;
	conf.mode = mode;
	assert_int_equal(open_site(NULL, &conf, &p, &d, &e), VG_EINVAL);
	one_diag(&d, "policy.mode: must be auto-deny, auto-approve or "
	    "interactive, not 'sideways'");
}

/* Allow and deny rules by glob and category. */
static void
test_rules(void **state)
{
	static char aid[] = "scratch", amatch[] = "rm -rf /scratch/*",
	    areason[] = "scratch is purged", did[] = "no-git-push",
	    dmatch[] = "git push*", dreason[] = "no pushes from jobs",
	    cid[] = "sched-ok", ccat[] = "scheduler-abuse",
	    creason[] = "operators", mode[] = "auto-deny";
	struct vg_rule allow[] = {
		{ .id = aid, .match = amatch, .reason = areason },
		{ .id = cid, .category = ccat, .reason = creason },
	};
	struct vg_rule deny[] = {
		{ .id = did, .match = dmatch, .reason = dreason },
	};
	struct vg_policy_conf conf = { .mode = mode, .allow = allow,
	    .nallow = 2, .deny = deny, .ndeny = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;

	(void)state;
	assert_int_equal(open_site(NULL, &conf, &p, &d, &e), 0);
	/* rm -rf /scratch is protected by default; the glob allows it. */
	assert_int_equal(vg_policy_eval(p, "rm -rf /scratch/x", &ctx, &v), 0);
	assert_true(v.allowed);
	assert_int_equal(vg_policy_eval(p, "rm -rf /scratch", &ctx, &v), 0);
	assert_false(v.allowed);
	/* The glob sees the normalised command, not the text. */
	assert_int_equal(vg_policy_eval(p, "sudo 'git' push origin", &ctx, &v),
	    0);
	assert_false(v.allowed);
	assert_int_equal(v.nfindings, 2);
	assert_string_equal(v.findings[1].rule, "no-git-push");
	assert_string_equal(v.findings[1].category, "rule");
	assert_string_equal(v.findings[1].reason, "no pushes from jobs");
	assert_int_equal(vg_policy_eval(p, "x=push; git $x", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_int_equal(vg_policy_eval(p, "git pull", &ctx, &v), 0);
	assert_true(v.allowed);
	/* A category allowed entirely. */
	assert_int_equal(vg_policy_eval(p, "scancel -u bob", &ctx, &v), 0);
	assert_true(v.allowed);
	/* Unparseable can never be allowed by a rule. */
	assert_int_equal(vg_policy_eval(p, "scancel 'x", &ctx, &v), 0);
	assert_false(v.allowed);
	vg_policy_free(p);
}

/* The site floor: its deny rules hold, and it can forbid auto-approve. */
static void
test_site_floor(void **state)
{
	static const char site[] =
	    "version: 1\n"
	    "auto_approve: false\n"
	    "deny:\n"
	    "  - id: no-scancel-user\n"
	    "    category: scheduler-abuse\n"
	    "    reason: ask the operators\n"
	    "  - id: no-docker\n"
	    "    match: 'docker *'\n"
	    "    reason: containers go through apptainer here\n";
	static char aid[] = "let-me", acat[] = "scheduler-abuse",
	    areason[] = "I am sure", mid[] = "dock", mmatch[] = "docker *",
	    mreason[] = "fine", approve[] = "auto-approve";
	struct vg_rule allow[] = {
		{ .id = aid, .category = acat, .reason = areason },
		{ .id = mid, .match = mmatch, .reason = mreason },
	};
	struct vg_policy_conf conf = { .allow = allow, .nallow = 2 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;

	(void)state;
	assert_int_equal(open_site(site, &conf, &p, &d, &e), 0);
	assert_int_equal(vg_policy_mode(p), VG_POLICY_AUTO_DENY);
	assert_int_equal(vg_policy_eval(p, "scancel -u bob", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_true(v.hard);
	assert_string_equal(v.findings[0].rule, "site:no-scancel-user");
	assert_string_equal(v.findings[0].reason, "ask the operators");
	assert_int_equal(vg_policy_eval(p, "docker ps", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(v.findings[0].rule, "site:no-docker");
	/* auto-approve cannot be chosen. */
	assert_int_equal(vg_policy_set_mode(p, VG_POLICY_AUTO_APPROVE, &e),
	    VG_EDENIED);
	assert_string_equal(e.msg, "auto-approve is forbidden by the site "
	    "policy");
	vg_policy_free(p);
	conf.mode = approve;
	assert_int_equal(open_site(site, &conf, &p, &d, &e), VG_EDENIED);
	assert_null(p);
	one_diag(&d, "policy.mode: auto-approve is forbidden by the site "
	    "policy");
}

/* Modes decide what a flagged command means. */
static void
test_modes(void **state)
{
	static char approve[] = "auto-approve";
	struct vg_policy_conf conf = { .mode = approve };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;

	(void)state;
	assert_int_equal(open_site(NULL, &conf, &p, &d, &e), 0);
	assert_int_equal(vg_policy_mode(p), VG_POLICY_AUTO_APPROVE);
	assert_int_equal(vg_policy_eval(p, "rm -rf /var/log", &ctx, &v), 0);
	assert_true(v.allowed);
	assert_true(v.flagged);
	assert_false(v.hard);
	assert_non_null(strstr(v.summary, "approve: destructive"));
	/* The built-in floor holds under auto-approve. */
	assert_int_equal(vg_policy_eval(p, "rm -rf /", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_true(v.hard);
	assert_string_equal(v.findings[0].rule, "floor:delete-root");
	assert_int_equal(vg_policy_set_mode(p, VG_POLICY_AUTO_DENY, &e), 0);
	assert_int_equal(vg_policy_eval(p, "rm -rf /", &ctx, &v), 0);
	assert_false(v.allowed);
	if (!isatty(0)) {
		assert_int_equal(vg_policy_set_mode(p, VG_POLICY_INTERACTIVE,
		    &e), VG_EINVAL);
		assert_string_equal(e.msg, "interactive mode needs a terminal "
		    "on stdin");
	}
	vg_policy_free(p);
	/* Without a mode and without a terminal: auto-deny. */
	assert_int_equal(open_site(NULL, NULL, &p, &d, &e), 0);
	if (!isatty(0))
		assert_int_equal(vg_policy_mode(p), VG_POLICY_AUTO_DENY);
	vg_policy_free(p);
	assert_int_equal(vg_policy_mode_parse("auto-approve"),
	    VG_POLICY_AUTO_APPROVE);
	assert_int_equal(vg_policy_mode_parse("yes"), -1);
	assert_string_equal(vg_policy_mode_name(VG_POLICY_INTERACTIVE),
	    "interactive");
}

/* Loading from files: missing default is fine, missing named is not. */
static void
test_files(void **state)
{
	char dir[] = "/tmp/vg-policy-XXXXXX", path[128];
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	vg_err_init(&e);
	assert_int_equal(vg_policy_open(NULL, path, &p, &d, &e), VG_ENOENT);
	assert_null(p);
	assert_non_null(strstr(e.msg, "policy file"));
	snprintf(path, sizeof(path), "%s/p.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("mode: auto-deny\nbogus: 1\n", f);
	fclose(f);
	assert_int_equal(vg_policy_open(NULL, path, &p, &d, &e), VG_EINVAL);
	assert_int_equal(d.lines.n, 1);
	assert_non_null(strstr(d.lines.v[0], "/p.yaml:2:1: unknown key "
	    "'bogus'"));
	vg_diag_release(&d);
	f = fopen(path, "w");
	fputs("mode: auto-deny\n", f);
	fclose(f);
	assert_int_equal(vg_policy_open(NULL, path, &p, &d, &e), 0);
	assert_int_equal(vg_policy_mode(p), VG_POLICY_AUTO_DENY);
	vg_policy_free(p);
	unlink(path);
	rmdir(dir);
}

/* Writes text to dir/name; returns the path (static buffer). */
static char *
put(const char *dir, const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Judges cmd with policy p; returns the verdict's decision. */
static int
denies(struct vg_policy *p, const char *cmd)
{
	struct vg_policy_ctx pctx;
	struct vg_verdict v;

	memset(&pctx, 0, sizeof(pctx));
	assert_int_equal(vg_policy_eval(p, cmd, &pctx, &v), 0);
	return !v.allowed;
}

/*
 * The site's file is always loaded; a manifest's policy.file (and
 * --policy's) adds rules on top: it cannot drop a site deny rule, lift
 * the floor, allow auto-approve the site forbids or list safe drivers.
 */
static void
test_layers_only_tighten(void **state)
{
	char dir[] = "/tmp/vg-policy-XXXXXX", site[256];
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy_conf conf;
	struct vg_policy *p = NULL;
	struct vg_err e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	vg_err_init(&e);
	snprintf(site, sizeof(site), "%s", put(dir, "site.yaml",
	    "version: 1\nmode: auto-deny\nauto_approve: false\ndeny:\n"
	    "  - {id: no-curl, match: 'curl *', reason: site says}\n"));
	memset(&conf, 0, sizeof(conf));
	conf.site_file = site;
	/* A manifest file that allows what the site denies, and its own
	 * deny rule: the site's holds, the file's adds. */
	conf.file = put(dir, "mine.yaml", "version: 1\nmode: "
	    "auto-deny\nallow:\n  - {id: curl-ok, match: 'curl *', reason: "
	    "mine}\ndeny:\n  - {id: no-wget, match: 'wget *', reason: no}"
	    "\n");
	assert_int_equal(vg_policy_open(&conf, NULL, &p, &d, &e), 0);
	assert_true(denies(p, "curl http://x"));
	assert_true(denies(p, "wget http://x"));
	assert_false(denies(p, "echo hi"));
	vg_policy_free(p);
	/* auto-approve, from the file or the manifest: forbidden. */
	conf.file = put(dir, "mine.yaml", "version: 1\nmode: "
	    "auto-approve\nauto_approve: true\n");
	assert_int_equal(vg_policy_open(&conf, NULL, &p, &d, &e),
	    VG_EDENIED);
	assert_null(p);
	vg_diag_release(&d);
	/* Lifting a floor rule or listing drivers: only the site. */
	conf.file = put(dir, "mine.yaml", "version: 1\nallow:\n"
	    "  - {id: lift, floor: disk-destroy, reason: mine}\n");
	assert_int_equal(vg_policy_open(&conf, NULL, &p, &d, &e),
	    VG_EDENIED);
	assert_null(p);
	assert_non_null(strstr(e.msg, "rule 'lift' lifts floor:"
	    "disk-destroy, which only the site policy file can"));
	vg_diag_release(&d);
	conf.file = put(dir, "mine.yaml", "version: 1\n"
	    "safe_volume_drivers:\n  - {driver: x, reason: r}\n");
	assert_int_equal(vg_policy_open(&conf, NULL, &p, &d, &e),
	    VG_EDENIED);
	assert_non_null(strstr(e.msg, "safe_volume_drivers"));
	vg_diag_release(&d);
	/* --policy FILE is a layer too. */
	conf.file = NULL;
	assert_int_equal(vg_policy_open(&conf, put(dir, "flag.yaml",
	    "version: 1\nallow:\n  - {id: c, match: 'curl *', reason: r}\n"),
	    &p, &d, &e), 0);
	assert_true(denies(p, "curl http://x"));
	vg_policy_free(p);
	(void)vg_rm_rf(dir, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_only_tighten),
		cmocka_unit_test(test_site_errors),
		cmocka_unit_test(test_manifest_rule_errors),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_site_floor),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
