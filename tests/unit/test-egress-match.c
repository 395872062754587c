/*
 * test-egress-match.c - isolation.network host patterns: what parses,
 * what each bad form is told, and what a pattern and a rule set match.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "common/egress-match.h"

/* Parses text, which must be good; returns the pattern (static). */
static const struct vg_egress_pat *
good(const char *text)
{
	static struct vg_egress_pat p;
	char why[256];

	if (vg_egress_pat_parse(text, &p, why, sizeof(why)) != 0)
		fail_msg("'%s' refused: %s", text, why);
	return &p;
}

/* Parses text, which must be bad, with a reason holding want. */
static void
bad(const char *text, const char *want)
{
	struct vg_egress_pat p;
	char why[256];

	if (vg_egress_pat_parse(text, &p, why, sizeof(why)) == 0)
		fail_msg("'%s' accepted", text);
	if (strstr(why, want) == NULL)
		fail_msg("'%s': got '%s', want '%s'", text, why, want);
}

static void
test_parse_forms(void **state)
{
	static const struct {
		const char		*text;
		enum vg_egress_kind	 kind;
		const char		*host;
		unsigned		 port;
	} cases[] = {
		{ "PyPI.org.", VG_EGRESS_NAME, "pypi.org", 0 },
		{ "files.pythonhosted.org:443", VG_EGRESS_NAME,
		  "files.pythonhosted.org", 443 },
		{ "*.github.com", VG_EGRESS_SUFFIX, "github.com", 0 },
		{ "*.example.org:8080", VG_EGRESS_SUFFIX, "example.org", 8080 },
		{ "10.0.0.1", VG_EGRESS_IP4, "10.0.0.1", 0 },
		{ "127.0.0.1:65535", VG_EGRESS_IP4, "127.0.0.1", 65535 },
		{ "::1", VG_EGRESS_IP6, "::1", 0 },
		{ "[2001:DB8:0:0::1]:443", VG_EGRESS_IP6, "2001:db8::1", 443 },
		{ "localhost", VG_EGRESS_NAME, "localhost", 0 },
		{ "_service.example.org", VG_EGRESS_NAME,
		  "_service.example.org", 0 },
	};
	const struct vg_egress_pat *p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = good(cases[i].text);
		assert_int_equal(p->kind, cases[i].kind);
		assert_string_equal(p->host, cases[i].host);
		assert_int_equal(p->port, cases[i].port);
	}
}

static void
test_parse_bad(void **state)
{
	char long_label[80], long_name[320];

	(void)state;
	bad("", "empty");
	bad("example.org:0", "port '0' is not a number from 1 to 65535");
	bad("example.org:65536", "port '65536'");
	bad("example.org:99999999999999999999", "not a number");
	bad("example.org:", "port ''");
	bad("example.org:+80", "port '+80'");
	bad("example.org:80x", "port '80x'");
	bad("*", "'*' only as the first label");
	bad("a.*.org", "'*' only as the first label");
	bad("*.org", "a whole top-level domain");
	bad("*.", "a host name is 1 to 253 characters");
	bad("exa mple.org", "' ' is not allowed");
	bad("http://example.org", "a URL: write the host alone");
	bad("example.org/path", "'/' is not allowed");
	bad("-bad.org", "does not start or end with '-'");
	bad("a..org", "1 to 63");
	bad("[::1", "'[' without ']'");
	bad("[::1]x", "text after ']'");
	bad("[example.org]:80", "not an IPv6 address");
	bad("[::1]:0", "port '0'");
	bad("1:2:3:4:5:6:7:8:9", "not an IPv6 address");
	bad("exa\001mple.org", "'?' is not allowed");
	memset(long_label, 'a', 70);
	long_label[70] = '\0';
	bad(long_label, "1 to 63");
	memset(long_name, 'a', 310);
	long_name[310] = '\0';
	bad(long_name, "overlong");
	memset(long_name, 'a', 260);
	for (int i = 50; i < 260; i += 50)
		long_name[i] = '.';
	long_name[260] = '\0';
	bad(long_name, "1 to 253");
}

static void
test_match(void **state)
{
	(void)state;
	assert_true(vg_egress_pat_match(good("pypi.org"), "PYPI.org.", 443));
	assert_false(vg_egress_pat_match(good("pypi.org"), "evilpypi.org",
	    443));
	assert_false(vg_egress_pat_match(good("pypi.org"), "x.pypi.org", 443));
	assert_true(vg_egress_pat_match(good("pypi.org:443"), "pypi.org", 443));
	assert_false(vg_egress_pat_match(good("pypi.org:443"), "pypi.org", 80));
	/* *.DOMAIN: below it only */
	assert_true(vg_egress_pat_match(good("*.github.com"),
	    "api.github.com", 443));
	assert_true(vg_egress_pat_match(good("*.github.com"),
	    "a.b.github.com", 1));
	assert_false(vg_egress_pat_match(good("*.github.com"), "github.com",
	    443));
	assert_false(vg_egress_pat_match(good("*.github.com"),
	    "evilgithub.com", 443));
	assert_false(vg_egress_pat_match(good("*.github.com"),
	    "github.com.evil.org", 443));
	/* addresses: only by their own pattern, in any spelling */
	assert_true(vg_egress_pat_match(good("10.0.0.1"), "10.0.0.1", 22));
	assert_false(vg_egress_pat_match(good("10.0.0.1"), "10.0.0.2", 22));
	assert_true(vg_egress_pat_match(good("::1"), "[::1]", 80));
	assert_true(vg_egress_pat_match(good("[::1]:80"), "0:0::1", 80));
	assert_false(vg_egress_pat_match(good("::1"), "127.0.0.1", 80));
	assert_false(vg_egress_pat_match(good("*.example.org"), "10.0.0.1",
	    80));
	assert_false(vg_egress_pat_match(good("localhost"), "127.0.0.1", 80));
	/* a name that looks like a pattern matches nothing but itself */
	assert_false(vg_egress_pat_match(good("example.org"), "[example.org]",
	    80));
	assert_true(vg_egress_is_ip("[2001:db8::1]"));
	assert_true(vg_egress_is_ip("192.0.2.1"));
	assert_false(vg_egress_is_ip("example.org"));
	assert_false(vg_egress_is_ip("[example.org]"));
}

/* Rules: deny wins, the deciding rule is named, the rest is refused. */
static void
test_rules(void **state)
{
	struct vg_strv allow = VG_STRV_INIT, deny = VG_STRV_INIT,
	    baddeny = VG_STRV_INIT;
	struct vg_egress_rules r;
	const char *rule;
	char why[256];

	vg_strv_push(&allow, "*.example.org");
	vg_strv_push(&allow, "pypi.org:443");
	vg_strv_push(&allow, "127.0.0.1:8080");
	vg_strv_push(&deny, "secret.example.org");
	vg_strv_push(&deny, "169.254.169.254");
	vg_strv_push(&baddeny, "fine.org");
	vg_strv_push(&baddeny, "nope:0");
	(void)state;
	assert_int_equal(vg_egress_rules_init(&r, &allow, &deny, why,
	    sizeof(why)), 0);
	assert_int_equal(vg_egress_decide(&r, "www.example.org", 443, &rule),
	    1);
	assert_string_equal(rule, "allow *.example.org");
	assert_int_equal(vg_egress_decide(&r, "secret.example.org", 443,
	    &rule), 0);
	assert_string_equal(rule, "deny secret.example.org");
	assert_int_equal(vg_egress_decide(&r, "pypi.org", 443, &rule), 1);
	assert_string_equal(rule, "allow pypi.org:443");
	assert_int_equal(vg_egress_decide(&r, "pypi.org", 80, &rule), 0);
	assert_string_equal(rule, "not listed");
	assert_int_equal(vg_egress_decide(&r, "127.0.0.1", 8080, &rule), 1);
	assert_int_equal(vg_egress_decide(&r, "127.0.0.1", 22, &rule), 0);
	assert_int_equal(vg_egress_decide(&r, "[::1]", 8080, &rule), 0);
	assert_int_equal(vg_egress_denied_addr(&r, "169.254.169.254", 80,
	    &rule), 1);
	assert_string_equal(rule, "deny 169.254.169.254");
	assert_int_equal(vg_egress_denied_addr(&r, "10.1.1.1", 80, &rule), 0);
	vg_egress_rules_release(&r);

	assert_int_equal(vg_egress_rules_init(&r, &allow, &baddeny, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "deny nope:0: port '0'"));
	assert_null(r.allow);
	assert_int_equal(r.text.n, 0);
	vg_strv_release(&allow);
	vg_strv_release(&deny);
	vg_strv_release(&baddeny);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
