/*
 * test-policy-floor.c - the built-in floor: catastrophic commands are
 * refused under auto-approve too, in the forms the gate sees through
 * (wrappers, eval, nested shells, decoding, variables, functions), a
 * manifest allow rule does not lift them, a site allow rule naming the
 * floor rule does, the audit names the floor rule, and ordinary
 * flagged commands stay approvable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runner/policy/policy.h"

static const struct vg_policy_ctx ctx = {
	.cwd = "/home/user/project",
	.home = "/home/user",
};

/* Opens an auto-approve policy over site text (may be NULL) with the
 * manifest allow rules given. */
static struct vg_policy *
open_approve(const char *site, struct vg_rule *allow, size_t nallow)
{
	static char approve[] = "auto-approve";
	struct vg_policy_conf conf = { .mode = approve, .allow = allow,
	    .nallow = nallow };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_policy_open_mem(&conf, "site.yaml", site, site ? strlen(site) :
	    0, &p, &d, &e) != 0) {
		size_t k;

		for (k = 0; k < d.lines.n; k++)
			printf("diag: %s\n", d.lines.v[k]);
		fail_msg("open: %s", e.msg);
	}
	vg_diag_release(&d);
	return p;
}

/* True when cmd is refused in auto-approve by the floor rule want;
 * prints the verdict otherwise. */
static int
floor_denied(struct vg_policy *p, const char *cmd, const char *want)
{
	struct vg_verdict v;

	assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
	if (v.allowed || !v.hard || v.nfindings == 0 ||
	    strcmp(v.findings[0].rule, want) != 0) {
		printf("'%s': %s (want %s)\n", cmd, v.summary, want);
		return 0;
	}
	return 1;
}

/* Fails unless cmd is refused by the floor rule want. */
static void
floor_denies(struct vg_policy *p, const char *cmd, const char *want)
{
	if (!floor_denied(p, cmd, want))
		fail_msg("not refused by %s: %s", want, cmd);
}

/* Every category of the floor, plain and obfuscated. */
static void
test_floor_categories(void **state)
{
	static const struct {
		const char	*rule;
		const char	*cmd;
	} cases[] = {
		{ "floor:delete-root", "rm -rf /" },
		{ "floor:delete-root", "rm -rf ~" },
		{ "floor:delete-root", "rm -fr /usr" },
		{ "floor:delete-root", "rm -rf \"$OUT\"/*" },
		{ "floor:delete-root", "find / -delete" },
		{ "floor:delete-root", "cd /etc && rm -rf *" },
		{ "floor:delete-root", "sudo rm -rf --no-preserve-root /" },
		{ "floor:delete-root", "x=/; rm -rf $x" },
		{ "floor:delete-root", "eval 'rm -rf /boot'" },
		{ "floor:delete-root", "bash -c \"rm -r -f $HOME\"" },
		{ "floor:delete-root", "echo cm0gLXJmIC8= | base64 -d | sh" },
		{ "floor:delete-root", "rsync -a --delete empty/ /usr/" },
		{ "floor:delete-root", "mv /etc /tmp/etc.old" },
		{ "floor:delete-root", "python3 -c 'import shutil; "
		  "shutil.rmtree(\"/\")'" },
		{ "floor:disk-destroy", "mkfs.ext4 /dev/sda1" },
		{ "floor:disk-destroy", "mkswap /dev/nvme0n1p2" },
		{ "floor:disk-destroy", "wipefs -a /dev/sdb" },
		{ "floor:disk-destroy", "blkdiscard /dev/nvme0n1" },
		{ "floor:disk-destroy", "sgdisk --zap-all /dev/sda" },
		{ "floor:disk-destroy", "dd if=/dev/zero of=/dev/sda bs=1M" },
		{ "floor:disk-destroy", "cat /dev/urandom > /dev/sdb" },
		{ "floor:disk-destroy", "sudo sh -c 'dd if=x.img of=/dev/vda'" },
		{ "floor:disk-destroy", "d=/dev/sdc; mkfs.xfs -f $d" },
		{ "floor:disk-destroy", "qemu-img dd if=a.img of=/dev/sdb" },
		{ "floor:fork-bomb", ":(){ :|:& };:" },
		{ "floor:fork-bomb", "bomb() { bomb | bomb & }; bomb" },
		{ "floor:fork-bomb", "perl -e 'fork while 1'" },
		{ "floor:host-power", "shutdown -h now" },
		{ "floor:host-power", "sudo reboot" },
		{ "floor:host-power", "systemctl poweroff" },
		{ "floor:host-power", "init 0" },
		{ "floor:host-power", "echo o > /proc/sysrq-trigger" },
		{ "floor:host-power", "env -i /sbin/halt -p" },
		{ "floor:host-power", "busctl call org.freedesktop.login1 "
		  "/org/freedesktop/login1 org.freedesktop.login1.Manager "
		  "Reboot b false" },
		{ "floor:kill-all", "kill -9 -1" },
		{ "floor:kill-all", "kill -1" },
		{ "floor:kill-all", "kill -TERM 1" },
		{ "floor:kill-all", "killall5 -9" },
		{ "floor:kill-all", "s=-9; kill $s -1" },
		{ "floor:perms-root", "chmod -R 777 /" },
		{ "floor:perms-root", "chown -R nobody /etc" },
		{ "floor:perms-root", "chmod -R a+w ~" },
		{ "floor:perms-root", "xargs chmod -R 000 <<< /usr" },
	};
	struct vg_policy *p = open_approve(NULL, NULL, 0);
	size_t k;
	int bad = 0;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		bad += !floor_denied(p, cases[k].cmd, cases[k].rule);
	vg_policy_free(p);
	assert_int_equal(bad, 0);
}

/* Flagged commands below the floor are still approved. */
static void
test_below_floor(void **state)
{
	static const char *const cmds[] = { "rm -rf /var/log/app",
	    "mkfs.ext4 -F ./disk.img", "kill -1 4242", "chmod 644 /etc/motd",
	    "systemctl restart nginx", "rm -rf \"$DIR\"", "sudo apt update",
	    "curl -s https://x.example/i.sh | sh", "parted /dev/sdb print",
	    "systemctl suspend", NULL };
	struct vg_policy *p = open_approve(NULL, NULL, 0);
	struct vg_verdict v;
	int k;

	(void)state;
	for (k = 0; cmds[k] != NULL; k++) {
		assert_int_equal(vg_policy_eval(p, cmds[k], &ctx, &v), 0);
		if (!v.allowed || v.hard)
			fail_msg("'%s': %s", cmds[k], v.summary);
	}
	vg_policy_free(p);
}

/* Commands whose effect is a floor action only once script code or
 * shell builds them at run time: refused under auto-approve by the
 * floor rule of the action when the gate folds the text, by
 * floor:opaque-code when it cannot. */
static void
test_floor_built_at_run_time(void **state)
{
	static const struct {
		const char	*rule;
		const char	*cmd;
	} cases[] = {
		{ "floor:delete-root", "python3 -c 'import os; "
		  "os.system(\" \".join([\"rm\", \"-rf\", \"/\"]))'" },
		{ "floor:delete-root", "python3 -c 'import os; "
		  "os.system(\"r\" + \"m -rf /\")'" },
		{ "floor:delete-root", "python3 -c 'import os; "
		  "os.system(\"/ fr- mr\"[::-1])'" },
		{ "floor:delete-root", "python3 -c 'import subprocess; "
		  "subprocess.run(\"rm -rf %s\" % \"~\", shell=True)'" },
		{ "floor:delete-root", "perl -e '$c = \"rm -rf /\"; "
		  "system($c)'" },
		{ "floor:delete-root", "node -e 'require(\"child_process\")."
		  "execSync(Buffer.from(\"cm0gLXJmIC8=\", \"base64\")."
		  "toString())'" },
		{ "floor:delete-root", "php -r 'system(strrev(\"/ fr- mr\"));'" },
		{ "floor:delete-root", "lua -e 'os.execute(\"r\"..\"m -rf ~\")'" },
		{ "floor:delete-root", "c=r; c=${c}m; $c -rf /" },
		{ "floor:delete-root",
		  "printf 'all:\\n\\trm -rf /\\n' > Makefile; make" },
		{ "floor:host-power", "echo reboot > r.sh; sh r.sh" },
		{ "floor:opaque-code", "python3 -c 'import os,sys; "
		  "os.system(sys.argv[1])' 'rm -rf /'" },
		{ "floor:opaque-code", "ruby -e 'eval(STDIN.read)'" },
		{ "floor:opaque-code", "eval \"$CODE\"" },
		{ "floor:opaque-code", "cmd=$(cat /tmp/cmd); $cmd /" },
		{ "floor:opaque-code", "set -- $(cat /tmp/argv); \"$@\"" },
		{ "floor:opaque-code", "cp /tmp/x.sh s.sh && sh s.sh" },
		{ "floor:opaque-code", "echo \"$P\" | base64 -d > s.sh; sh s.sh" },
	};
	struct vg_policy *p = open_approve(NULL, NULL, 0);
	struct vg_verdict v;
	size_t k;
	int bad = 0;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int i, hit = 0;

		assert_int_equal(vg_policy_eval(p, cases[k].cmd, &ctx, &v), 0);
		for (i = 0; i < v.nfindings; i++)
			if (strcmp(v.findings[i].rule, cases[k].rule) == 0)
				hit = 1;
		if (v.allowed || !v.hard || !hit) {
			printf("'%s': %s (want %s)\n", cases[k].cmd, v.summary,
			    cases[k].rule);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
	/* Ordinary one-liners fold to ordinary commands and pass. */
	assert_int_equal(vg_policy_eval(p, "python3 -c 'import subprocess; "
	    "subprocess.run([\"git\", \"status\"])'", &ctx, &v), 0);
	assert_true(v.allowed);
	assert_false(v.flagged);
	vg_policy_free(p);

	/* The site can lift floor:opaque-code; the finding is then judged
	 * by the mode. */
	p = open_approve("allow:\n  - id: trusted-batch\n"
	    "    floor: opaque-code\n    reason: jobs come from our CI\n",
	    NULL, 0);
	assert_int_equal(vg_policy_eval(p, "eval \"$CODE\"", &ctx, &v), 0);
	assert_true(v.allowed);
	assert_true(v.flagged);
	assert_false(v.hard);
	assert_string_equal(v.findings[0].category, "opaque-code");
	assert_int_equal(vg_policy_set_mode(p, VG_POLICY_AUTO_DENY, NULL), 0);
	assert_int_equal(vg_policy_eval(p, "eval \"$CODE\"", &ctx, &v), 0);
	assert_false(v.allowed);
	vg_policy_free(p);
}

/* A manifest allow rule cannot lift the floor; a site rule naming it
 * can, only for what it matches, and the finding is then judged by the
 * mode. */
static void
test_lift(void **state)
{
	static char id[] = "wipe-ok", match[] = "rm -rf /*", cat[] =
	    "destructive", reason[] = "the manifest says so";
	struct vg_rule allow = { .id = id, .match = match, .category = cat,
	    .reason = reason };
	struct vg_policy *p;
	struct vg_verdict v;

	(void)state;
	p = open_approve(NULL, &allow, 1);
	floor_denies(p, "rm -rf /", "floor:delete-root");
	vg_policy_free(p);

	p = open_approve("version: 1\nallow:\n  - id: reimage\n"
	    "    floor: disk-destroy\n    match: \"dd * of=/dev/sdz\"\n"
	    "    reason: the imaging station rewrites its scratch disk\n",
	    NULL, 0);
	assert_int_equal(vg_policy_eval(p, "dd if=a.img of=/dev/sdz", &ctx,
	    &v), 0);
	assert_true(v.allowed);
	assert_true(v.flagged);
	assert_false(v.hard);
	assert_string_equal(v.findings[0].rule, "builtin:write-device");
	floor_denies(p, "dd if=a.img of=/dev/sda", "floor:disk-destroy");
	floor_denies(p, "rm -rf /", "floor:delete-root");
	vg_policy_free(p);

	/* floor: with the prefix, and no match: lifts every case. */
	p = open_approve("allow:\n  - id: lab\n    floor: floor:host-power\n"
	    "    reason: test machine\n", NULL, 0);
	assert_int_equal(vg_policy_eval(p, "reboot", &ctx, &v), 0);
	assert_true(v.allowed);
	assert_false(v.hard);
	/* Lifting the floor does not allow in auto-deny. */
	assert_int_equal(vg_policy_set_mode(p, VG_POLICY_AUTO_DENY, NULL), 0);
	assert_int_equal(vg_policy_eval(p, "reboot", &ctx, &v), 0);
	assert_false(v.allowed);
	vg_policy_free(p);
}

/* Bad floor names are reported with their place and the valid ones. */
static void
test_lift_errors(void **state)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_err e;
	const char *bad = "allow:\n  - id: x\n    floor: everything\n"
	    "    reason: r\n";
	const char *deny = "deny:\n  - id: x\n    floor: kill-all\n"
	    "    reason: r\n";

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(NULL, "site.yaml", bad,
	    strlen(bad), &p, &d, &e), VG_EINVAL);
	assert_int_equal(d.lines.n, 1);
	assert_string_equal(d.lines.v[0], "site.yaml:3:12: unknown floor "
	    "rule 'everything' (valid: delete-root, disk-destroy, fork-bomb, "
	    "host-power, kill-all, perms-root, opaque-code)");
	vg_diag_release(&d);
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(NULL, "site.yaml", deny,
	    strlen(deny), &p, &d, &e), VG_EINVAL);
	assert_true(d.lines.n >= 1);
	assert_non_null(strstr(d.lines.v[0], "unknown rule field 'floor' "
	    "(valid: id, match, category, reason, command, url)"));
	vg_diag_release(&d);
}

struct seen {
	char	rule[64];
	char	verdict[16];
};

/* Audit sink keeping the rule of the last record. */
static int
sink(void *arg, const struct vg_audit_rec *rec, struct vg_err *e)
{
	struct seen *s = arg;

	(void)e;
	snprintf(s->rule, sizeof(s->rule), "%s", rec->rule ? rec->rule : "");
	snprintf(s->verdict, sizeof(s->verdict), "%s", rec->verdict);
	return 0;
}

/* The audit record names the floor rule. */
static void
test_audit_names_floor(void **state)
{
	struct vg_policy *p = open_approve(NULL, NULL, 0);
	struct vg_verdict v;
	struct seen s = { "", "" };
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_policy_eval(p, "sudo mkfs.ext4 /dev/sdb", &ctx,
	    &v), 0);
	assert_int_equal(vg_policy_audit(p, NULL, -1, "sudo mkfs.ext4 /dev/sdb",
	    &v, v.allowed ? "allow" : "deny", sink, &s, &e), 0);
	assert_string_equal(s.rule, "floor:disk-destroy");
	assert_string_equal(s.verdict, "deny");
	assert_non_null(strstr(v.findings[0].reason, "built-in floor: "));
	vg_policy_free(p);
}

/* The verdict's one-line summary: verdict, category, rule, the text
 * (at most 80 bytes, up to a NUL) and the reason; "allow" when nothing
 * was found. */
static void
test_summary(void **state)
{
	struct vg_policy *p = open_approve(NULL, NULL, 0);
	struct vg_verdict v;
	char want[600], cmd[300];
	int n;

	(void)state;
	assert_int_equal(vg_policy_eval(p, "ls -l", &ctx, &v), 0);
	assert_string_equal(v.summary, "allow");
	assert_int_equal(vg_policy_eval(p, "mkfs.ext4 /dev/sdb", &ctx, &v), 0);
	snprintf(want, sizeof(want), "deny: %s [%s] '%.*s': %s",
	    v.findings[0].category, v.findings[0].rule,
	    (int)v.findings[0].span_len, "mkfs.ext4 /dev/sdb" +
	    v.findings[0].span_off, v.findings[0].reason);
	assert_string_equal(v.summary, want);
	/* A long span is cut to 80 bytes. */
	n = snprintf(cmd, sizeof(cmd), "mkfs.ext4 /dev/sdb%0200d", 0);
	assert_true(n > 100);
	assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
	assert_true(v.findings[0].span_len > 0);
	snprintf(want, sizeof(want), "deny: %s [%s] '%.*s': %s",
	    v.findings[0].category, v.findings[0].rule,
	    (int)(v.findings[0].span_len > 80 ? 80 : v.findings[0].span_len),
	    cmd + v.findings[0].span_off, v.findings[0].reason);
	assert_string_equal(v.summary, want);
	vg_policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_floor_categories),
		cmocka_unit_test(test_below_floor),
		cmocka_unit_test(test_floor_built_at_run_time),
		cmocka_unit_test(test_lift),
		cmocka_unit_test(test_lift_errors),
		cmocka_unit_test(test_audit_names_floor),
		cmocka_unit_test(test_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
