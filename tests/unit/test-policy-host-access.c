/*
 * test-policy-host-access.c - the policy's verdict on host access found
 * by container backends: auto-deny refuses, auto-approve allows, an
 * allow rule of category host-access allows (naming the rule), a bind of
 * one path needs a rule whose glob matches it, the reason text the
 * backends put in their errors, and the site's safe volume drivers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/policy/host-access.h"

#define HINT "; allow with a policy rule of category host-access"

static char s_auto_deny[] = "auto-deny", s_auto_approve[] = "auto-approve",
    s_interactive[] = "interactive", s_host[] = "host-access",
    s_network[] = "network", s_id[] = "data-bind", s_other[] = "net-ok",
    s_etc[] = "/etc*", s_why[] = "needed";

static const char two[] = "docker.privileged runs a privileged container "
    "(every device and capability)\n"
    "docker.network 'host' shares the host's network\n";
static const char one[] = "docker.volumes '/srv:/srv' binds host path "
    "'/srv'\n";

/* Judges findings, expecting success and the verdict allowed. */
static void
judge(const struct vg_policy_conf *conf, const char *findings,
    const char *path, int allowed, struct vg_host_verdict *v)
{
	assert_int_equal(vg_policy_host_access(conf, findings, path, v), 0);
	assert_int_equal(v->allowed, allowed);
}

/* No findings: nothing to judge, allowed whatever the policy. */
static void
test_nothing_found(void **state)
{
	struct vg_host_verdict v;

	(void)state;
	judge(NULL, NULL, NULL, 1, &v);
	judge(NULL, "", NULL, 1, &v);
	assert_null(v.rule);
	assert_int_equal(vg_policy_host_access(NULL, "x\n", NULL, NULL),
	    VG_EINVAL);
}

/* Auto-deny (explicit or by default) and interactive refuse, naming the
 * first finding and the rule that would allow it. */
static void
test_auto_deny_refuses(void **state)
{
	struct vg_policy_conf conf = { 0 };
	struct vg_host_verdict v;

	(void)state;
	judge(NULL, one, NULL, 0, &v);
	assert_string_equal(v.reason, "docker.volumes '/srv:/srv' binds host "
	    "path '/srv'" HINT);
	conf.mode = s_auto_deny;
	judge(&conf, two, NULL, 0, &v);
	assert_null(v.rule);
	assert_string_equal(v.reason, "docker.privileged runs a privileged "
	    "container (every device and capability) (and more)" HINT);
	conf.mode = s_interactive;
	judge(&conf, two, NULL, 0, &v);
	/* A finding without a final newline is one finding. */
	conf.mode = NULL;
	judge(&conf, "a finding", NULL, 0, &v);
	assert_string_equal(v.reason, "a finding" HINT);
}

/* Auto-approve lets findings about the container through. */
static void
test_auto_approve_allows(void **state)
{
	struct vg_policy_conf conf = { .mode = s_auto_approve };
	struct vg_host_verdict v;

	(void)state;
	judge(&conf, two, NULL, 1, &v);
	assert_null(v.rule);
	assert_string_equal(v.reason, "allowed by policy mode auto-approve");
}

/* An allow rule of category host-access allows and is named; rules of
 * other categories do not. */
static void
test_rule_allows(void **state)
{
	struct vg_rule rules[2] = {
		{ .id = s_other, .category = s_network, .reason = s_why },
		{ .id = s_id, .category = s_host, .reason = s_why },
	};
	struct vg_policy_conf conf = { .allow = rules, .nallow = 1 };
	struct vg_host_verdict v;

	(void)state;
	judge(&conf, one, NULL, 0, &v);
	conf.nallow = 2;
	judge(&conf, one, NULL, 1, &v);
	assert_string_equal(v.rule, "data-bind");
	assert_string_equal(v.reason, "allowed by policy rule 'data-bind'");
	/* Findings about the container as a whole ignore the glob. */
	rules[1].match = s_etc;
	judge(&conf, two, NULL, 1, &v);
}

/* A bind of one path needs a rule whose glob matches it; the mode does
 * not let it through. */
static void
test_path_needs_matching_rule(void **state)
{
	struct vg_rule rule = { .id = s_id, .category = s_host,
	    .reason = s_why };
	struct vg_policy_conf conf = { .mode = s_auto_approve,
	    .allow = &rule, .nallow = 1 };
	struct vg_host_verdict v;
	const char *f = "bind '/etc:/x': source '/etc' is a system directory";

	(void)state;
	judge(&conf, f, "/etc", 0, &v);
	assert_string_equal(v.reason, "bind '/etc:/x': source '/etc' is a "
	    "system directory; binding it needs a policy allow rule with "
	    "category 'host-access' matching '/etc'");
	rule.match = s_etc;
	judge(&conf, f, "/etc", 1, &v);
	assert_string_equal(v.rule, "data-bind");
	judge(&conf, f, "/usr/share", 0, &v);
	judge(NULL, f, "/etc", 0, &v);
}

/* Checks that site text is refused with msg. */
static void
site_bad(const char *text, const char *msg)
{
	struct vg_host_site site;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_policy_host_site_text("site.yaml", text,
	    strlen(text), &site, &e), VG_EINVAL);
	assert_string_equal(e.msg, msg);
	assert_null(site.file);
	assert_int_equal(site.drivers.n, 0);
}

/* The site's safe volume drivers: read, looked up, validated. */
static void
test_site_drivers(void **state)
{
	static const char text[] = "version: 1\nmode: auto-deny\n"
	    "safe_volume_drivers:\n"
	    "  - driver: scratchvol\n    reason: node-local disk\n"
	    "  - {driver: vendor/lustre-vol:2, reason: project dirs}\n";
	struct vg_host_site site;
	struct vg_policy_conf conf = { 0 };
	struct vg_err e;
	char path[] = "/tmp/vigil-test-site.XXXXXX";
	int fd;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_host_site_text("site.yaml", text,
	    strlen(text), &site, &e), 0);
	assert_string_equal(site.file, "site.yaml");
	assert_string_equal(vg_policy_safe_driver(&site, "scratchvol"),
	    "node-local disk");
	assert_string_equal(vg_policy_safe_driver(&site,
	    "vendor/lustre-vol:2"), "project dirs");
	assert_null(vg_policy_safe_driver(&site, "vendor/lustre-vol"));
	assert_null(vg_policy_safe_driver(&site, "local"));
	assert_null(vg_policy_safe_driver(NULL, "scratchvol"));
	vg_policy_host_site_release(&site);

	site_bad("safe_volume_drivers:\n  - driver: local\n    reason: r\n",
	    "site policy site.yaml:2:5: volume driver 'local' cannot be "
	    "listed: its volumes are judged by their options (bind, nfs, a "
	    "device)");
	site_bad("safe_volume_drivers:\n  - reason: r\n", "site policy "
	    "site.yaml:2:5: a safe volume driver needs a 'driver' (the name "
	    "the engine reports)");
	site_bad("safe_volume_drivers:\n  - driver: x\n", "site policy "
	    "site.yaml:2:5: volume driver 'x' needs a 'reason' (why its "
	    "volumes never reach the host)");
	site_bad("safe_volume_drivers:\n  - driver: 'a b'\n    reason: r\n",
	    "site policy site.yaml:2:5: volume driver 'a b' must be 1-128 "
	    "letters, digits, '-', '_', '.', ':' or '/', starting with a "
	    "letter or digit");
	site_bad("safe_volume_drivers:\n  - {driver: x, reason: r}\n"
	    "  - {driver: x, reason: s}\n", "site policy site.yaml:3:5: "
	    "volume driver 'x' is listed twice (first at line 2)");
	site_bad("safe_volume_drivers:\n  - {driver: x, reason: r, "
	    "colour: red}\n", "site policy site.yaml:2:28: unknown safe "
	    "volume driver field 'colour' (valid: driver, reason)");
	site_bad("safe_volume_drivers: scratchvol\n", "site policy "
	    "site.yaml:1:22: 'safe_volume_drivers' must be a list of "
	    "{driver, reason}");
	site_bad("safe_volume_drivers: [x]\n", "site policy site.yaml:1:23: "
	    "a safe volume driver must be a mapping with driver and reason");
	site_bad("safe_volume_drivers:\n  - {driver: [x], reason: r}\n",
	    "site policy site.yaml:2:14: safe volume driver fields must be "
	    "plain strings");

	/* From a file: conf->file, and a named file that is missing. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	/* A manifest's policy.file never names safe drivers: only the
	 * site's own file (conf->site_file, set by the site config). */
	conf.file = path;
	assert_int_equal(vg_policy_host_site(&conf, &site, &e), 0);
	assert_true(site.file == NULL || strcmp(site.file, path) != 0);
	vg_policy_host_site_release(&site);
	conf.file = NULL;
	conf.site_file = path;
	assert_int_equal(vg_policy_host_site(&conf, &site, &e), 0);
	assert_string_equal(site.file, path);
	assert_int_equal(site.drivers.n, 2);
	vg_policy_host_site_release(&site);
	unlink(path);
	assert_int_equal(vg_policy_host_site(&conf, &site, &e), VG_ENOENT);
	assert_non_null(strstr(e.msg, "site policy: "));
	assert_null(site.file);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_found),
		cmocka_unit_test(test_auto_deny_refuses),
		cmocka_unit_test(test_auto_approve_allows),
		cmocka_unit_test(test_rule_allows),
		cmocka_unit_test(test_path_needs_matching_rule),
		cmocka_unit_test(test_site_drivers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
