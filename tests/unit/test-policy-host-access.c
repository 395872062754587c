/*
 * test-policy-host-access.c - the policy's verdict on host access found
 * by container backends: auto-deny refuses, auto-approve allows, an
 * allow rule of category host-access allows (naming the rule), a bind of
 * one path needs a rule whose glob matches it, and the reason text the
 * backends put in their errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_found),
		cmocka_unit_test(test_auto_deny_refuses),
		cmocka_unit_test(test_auto_approve_allows),
		cmocka_unit_test(test_rule_allows),
		cmocka_unit_test(test_path_needs_matching_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
