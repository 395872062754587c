/*
 * test-sandbox.c - kernel confinement of local tasks, checked from inside
 * the task: this binary runs itself as the task in probe mode and prints
 * "ok" or the errno name of each attempt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>

#include "backends/sandbox.h"
#include "local-fixture.h"

static int
setup_standard(void **state)
{
	*state = fx_new(VG_ISO_STANDARD);
	return 0;
}

static int
setup_strict(void **state)
{
	struct fx *f = fx_new(VG_ISO_STRICT);
	char *slash;

	/* The test binary must stay executable: its directory is
	 * outside the system trees. */
	slash = strrchr(f->self, '/');
	*slash = '\0';
	vg_strv_push(&f->m.isolation.readable, f->self);
	*slash = '/';
	*state = f;
	return 0;
}

static int
setup_none(void **state)
{
	*state = fx_new(VG_ISO_NONE);
	return 0;
}

static int
teardown(void **state)
{
	fx_free(*state);
	return 0;
}

/* Skips a test when the host lacks what it checks (never on the CI
 * machine, which has all of it). */
static int
need(int have, const char *what)
{
	if (!have)
		print_message("skipped: host has no %s\n", what);
	return have;
}

/* Runs one probe in the task and returns its output line. */
static const char *
probe(struct fx *f, const char *what, const char *arg)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/stdout", f->dir);
	unlink(path);
	fx_probe(f, what, arg);
	assert_int_equal(fx_run(f), 0);
	if (f->r.state != VG_ST_SUCCEEDED && strcmp(what, "x32") != 0)
		print_message("probe %s %s: %s (%s) stderr: %s\n", what, arg,
		    vg_state_name(f->r.state), f->r.reason,
		    fx_read(f, "stderr"));
	return fx_read(f, "stdout");
}

static void
test_standard_writes(void **state)
{
	struct fx *f = *state;
	char path[256], home[256];
	const char *h = getenv("HOME");

	if (!need(vg_host_caps()->landlock_abi > 0, "Landlock"))
		return;
	snprintf(path, sizeof(path), "%s/out", f->dir);
	assert_string_equal(probe(f, "write", path), "ok\n");
	snprintf(path, sizeof(path), "%s/tmp/t", f->dir);
	assert_string_equal(probe(f, "write", path), "ok\n");
	assert_string_equal(probe(f, "write", "/dev/null"), "ok\n");

	snprintf(home, sizeof(home), "%s/vg-sandbox-x", h ? h : "/root");
	assert_string_equal(probe(f, "write", home), "EACCES\n");
	assert_int_equal(access(home, F_OK), -1);
	assert_string_equal(probe(f, "write", "/etc/vg-sandbox-x"),
	    "EACCES\n");
	assert_string_equal(probe(f, "write", "/tmp/vg-sandbox-x"),
	    "EACCES\n");
	/* Reading stays open. */
	assert_string_equal(probe(f, "read", "/etc/passwd"), "ok\n");

	/* isolation.writable opens more. */
	vg_strv_push(&f->m.isolation.writable, "/tmp");
	assert_string_equal(probe(f, "write", "/tmp/vg-sandbox-x"), "ok\n");
	unlink("/tmp/vg-sandbox-x");
}

static void
test_standard_syscalls(void **state)
{
	struct fx *f = *state;
	char pid[32];

	if (!need(vg_host_caps()->seccomp, "seccomp"))
		return;
	assert_string_equal(probe(f, "mount", f->dir), "EPERM\n");
	assert_string_equal(probe(f, "reboot", ""), "EPERM\n");
	/* vigil itself is out of reach: not in the task's PID namespace. */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_string_equal(probe(f, "kill", pid), "ESRCH\n");
}

static void
test_none_unconfined(void **state)
{
	struct fx *f = *state;

	if (!need(vg_host_caps()->root, "root"))
		return;
	/* Without confinement root may mount: proves the EPERM above
	 * comes from the filter (bad magic keeps reboot harmless). */
	assert_string_equal(probe(f, "reboot", ""), "EINVAL\n");
	assert_string_equal(probe(f, "write", "/tmp/vg-sandbox-none"),
	    "ok\n");
	unlink("/tmp/vg-sandbox-none");
}


/* Counts the procfs mounts of this (the host's) mount namespace. */
static int
host_proc_mounts(void)
{
	char line[1024];
	FILE *fp;
	int n = 0;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, " - proc ") != NULL)
			n++;
	fclose(fp);
	return n;
}

static void
test_own_proc(void **state)
{
	static const enum vg_isolation_level levels[] = {
		VG_ISO_NONE, VG_ISO_STANDARD, VG_ISO_STRICT,
	};
	struct fx *f = *state;
	char sh[4096], shim[4096], want[8300], cmd[256];
	int i, before;

	if (!need(vg_host_caps()->pidns && vg_host_caps()->root,
	    "PID namespace as root"))
		return;
	assert_non_null(realpath("/bin/sh", sh));
	assert_non_null(vg_local_shim(NULL, 0));
	assert_non_null(realpath(vg_local_shim(NULL, 0), shim));
	/* The shell is pid 2 (vigil-shim is 1) and finds itself in /proc:
	 * its exe, and its own status through a redirection it opens.
	 * vigil-shim is there but out of its reach (not dumpable: its exe
	 * link is not readable without CAP_SYS_PTRACE, at any level). */
	(void)shim;
	snprintf(want, sizeof(want), "2\n%s\n2\nout of reach\nhidden\n",
	    sh);
	/* vigil (this process) is not in the task's /proc. */
	snprintf(cmd, sizeof(cmd), "echo $$; readlink /proc/$$/exe; "
	    "while read k v; do [ \"$k\" = Pid: ] && echo \"$v\"; "
	    "done </proc/self/status; [ -e /proc/1 ] && ! readlink "
	    "/proc/1/exe 2>/dev/null && echo out of reach; "
	    "if [ -e /proc/%d ]; then echo visible; else echo hidden; fi",
	    (int)getpid());
	before = host_proc_mounts();
	assert_true(before > 0);
	for (i = 0; i < 3; i++) {
		f->m.isolation.level = levels[i];
		fx_sh(f, cmd);
		assert_int_equal(fx_run(f), 0);
		assert_string_equal(fx_read(f, "stderr"), "");
		assert_string_equal(fx_read(f, "stdout"), want);
		assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
		fx_unlink_output(f);
	}
	/* The task's /proc mount stayed in its namespace. */
	assert_int_equal(host_proc_mounts(), before);
}

#if defined(__x86_64__)
static void
test_foreign_arch_killed(void **state)
{
	struct fx *f = *state;

	if (!need(vg_host_caps()->seccomp, "seccomp"))
		return;
	/* Unconfined, the x32 syscall fails (ENOSYS without x32 support)
	 * or works; confined, the architecture check kills the task. */
	f->m.isolation.level = VG_ISO_NONE;
	assert_string_not_equal(probe(f, "x32", ""), "");
	f->m.isolation.level = VG_ISO_STANDARD;
	probe(f, "x32", "");
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.signal, SIGSYS);
	assert_string_equal(fx_read(f, "stdout"), "");
}
#endif

static void
test_ptrace_deny(void **state)
{
	struct fx *f = *state;

	if (!need(vg_host_caps()->seccomp, "seccomp"))
		return;
	/* Default "children": a task may trace its own processes. */
	assert_string_equal(probe(f, "traceme", ""), "ok\n");
	f->m.isolation.ptrace = vg_xstrdup("deny");
	assert_string_equal(probe(f, "traceme", ""), "EPERM\n");
	free(f->m.isolation.ptrace);
	f->m.isolation.ptrace = NULL;
}

static void
test_strict_network(void **state)
{
	struct fx *f = *state;
	char port[16];
	int lfd, p;

	if (!need(vg_host_caps()->netns, "network namespaces"))
		return;
	lfd = fx_listen(&p);
	assert_true(lfd >= 0);
	snprintf(port, sizeof(port), "%d", p);
	/* The listener answers this process... */
	assert_int_equal(fx_connect(p), 0);
	/* ...but not the task, whose loopback is its own. */
	assert_string_equal(probe(f, "connect", port), "ECONNREFUSED\n");
	assert_string_equal(probe(f, "loopback", ""), "ok\n");
	close(lfd);
}

static void
test_strict_reads(void **state)
{
	struct fx *f = *state;
	char path[256];
	const char *h = getenv("HOME");

	if (!need(vg_host_caps()->landlock_abi > 0, "Landlock"))
		return;
	snprintf(path, sizeof(path), "%s/.profile-vg-x", h ? h : "/root");
	close(open(path, O_WRONLY | O_CREAT, 0600));
	assert_string_equal(probe(f, "read", path), "EACCES\n");
	assert_string_equal(probe(f, "read", "/etc/passwd"), "ok\n");
	/* isolation.readable opens more. */
	vg_strv_push(&f->m.isolation.readable, path);
	assert_string_equal(probe(f, "read", path), "ok\n");

	/* A private /tmp: the task's own, bound from its TMPDIR.  (Each
	 * attempt outside a drive compiles its sandbox, so what readable
	 * names is there until the last.) */
	assert_string_equal(probe(f, "write", "/tmp/vg-private"), "ok\n");
	assert_int_equal(access("/tmp/vg-private", F_OK), -1);
	unlink(path);
}

/* The kept verdict of the host probes: the word this host gives is
 * taken back, anything else is refused (and the host probed). */
static void
test_caps_word(void **state)
{
	static const char *const bad[] = { "", "ns8.api6", "ns7", "ns7.api",
	    "ns7.api6x", "/home/me/.local/state/vigil/sessions/s-1", "api6",
	    NULL };
	char word[32];
	unsigned ns, api;
	int i;

	(void)state;
	vg_host_caps_word(word, sizeof(word));
	assert_int_equal(sscanf(word, "ns%u.api%u", &ns, &api), 2);
	assert_int_equal(ns, (vg_host_caps()->userns ? 1u : 0u) |
	    (vg_host_caps()->pidns ? 2u : 0u) |
	    (vg_host_caps()->netns ? 4u : 0u));
	assert_int_equal(vg_host_caps_keep(word), 0);
	for (i = 0; bad[i] != NULL; i++)
		assert_int_equal(vg_host_caps_keep(bad[i]), -1);
	assert_int_equal(vg_host_caps_keep(NULL), -1);
}

static void
test_compile_errors(void **state)
{
	struct vg_isolation_conf iso;
	struct vg_sandbox *sb;
	struct vg_err e;

	(void)state;
	memset(&iso, 0, sizeof(iso));
	if (vg_host_caps()->landlock_abi == 0) {
		/* The refusal path (seen under valgrind, which hides
		 * Landlock). */
		iso.level = VG_ISO_STANDARD;
		iso.required = 1;
		vg_err_init(&e);
		assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e),
		    VG_EUNSUPPORTED);
		assert_null(sb);
		assert_true(strncmp(e.msg, "isolation 'standard' is required "
		    "but this host cannot deliver it: no Landlock (", 73) == 0);
		iso.required = 0;
		assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
		assert_non_null(strstr(vg_sandbox_downgrades(sb),
		    "writes are not confined"));
		vg_sandbox_free(sb);
		return;
	}
	iso.level = VG_ISO_STANDARD;
	vg_strv_push(&iso.writable, "/nonexistent/vg");
	vg_err_init(&e);
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), VG_EIO);
	assert_null(sb);
	assert_string_equal(e.msg, "isolation.writable: cannot open "
	    "'/nonexistent/vg': No such file or directory");
	vg_strv_release(&iso.writable);

	iso.level = VG_ISO_STRICT;
	vg_strv_push(&iso.readable, "/nonexistent/r");
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), VG_EIO);
	assert_string_equal(e.msg, "isolation.readable: cannot open "
	    "'/nonexistent/r': No such file or directory");
	vg_strv_release(&iso.readable);

	/* This host delivers every level in full, so required passes. */
	iso.required = 1;
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	assert_string_equal(vg_sandbox_downgrades(sb), "");
	assert_int_equal(vg_sandbox_level(sb), VG_ISO_STRICT);
	vg_sandbox_free(sb);
}

static void
test_report(void **state)
{
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	vg_sandbox_report(&b);
	assert_non_null(strstr(vg_buf_str(&b), "kernel: Linux "));
	assert_non_null(strstr(vg_buf_str(&b), vg_host_caps()->seccomp ?
	    "\nseccomp: ok\n" : "\nseccomp: missing (needs "));
	if (vg_host_caps()->landlock_abi > 0)
		assert_non_null(strstr(vg_buf_str(&b), "\nlandlock: ok (ABI "));
	vg_buf_release(&b);
	vg_backend_local.probe(&b);
	assert_non_null(strstr(vg_buf_str(&b), "local: isolation none: "));
	assert_non_null(strstr(vg_buf_str(&b), "\nlocal: isolation strict: "));
	vg_buf_release(&b);
}

/* Root's powers: own UTS and IPC namespaces, no capability but those
 * listed, described as such; a bad name is refused (root only: the
 * namespaces are made by root or in a user namespace). */
static void
test_powers(void **state)
{
	struct vg_isolation_conf iso;
	struct vg_sandbox *sb;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	(void)state;
	memset(&iso, 0, sizeof(iso));
	vg_err_init(&e);
	iso.level = VG_ISO_STANDARD;
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	if (vg_sandbox_pidns(sb))
		assert_true((vg_sandbox_clone_flags(sb) &
		    (CLONE_NEWUTS | CLONE_NEWIPC)) ==
		    (CLONE_NEWUTS | CLONE_NEWIPC));
	vg_sandbox_describe(sb, &b);
	/* With neither Landlock nor seccomp (valgrind hides both) the
	 * level is said to be none, yet the capabilities are still gone. */
	if (vg_host_caps()->landlock_abi > 0 || vg_host_caps()->seccomp)
		assert_true(strncmp(vg_buf_str(&b), "level standard; "
		    "capabilities none; namespaces ", 46) == 0);
	else
		assert_true(strncmp(vg_buf_str(&b), "level none; "
		    "capabilities none; namespaces ", 42) == 0);
	vg_sandbox_free(sb);
	vg_strv_push(&iso.capabilities, "CAP_NET_RAW");
	vg_strv_push(&iso.capabilities, "net_bind_service");
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	vg_buf_reset(&b);
	vg_sandbox_describe(sb, &b);
	assert_non_null(strstr(vg_buf_str(&b),
	    "; capabilities net_bind_service,net_raw; "));
	vg_sandbox_free(sb);
	vg_strv_push(&iso.capabilities, "all");
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), VG_EINVAL);
	assert_null(sb);
	assert_string_equal(e.msg, "isolation.capabilities: 'all' is not a "
	    "capability");
	vg_strv_release(&iso.capabilities);
	iso.level = VG_ISO_NONE;
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	assert_true((vg_sandbox_clone_flags(sb) & CLONE_NEWUTS) == 0);
	vg_buf_reset(&b);
	vg_sandbox_describe(sb, &b);
	assert_non_null(strstr(vg_buf_str(&b), "capabilities root's less "
	    "sys_ptrace"));
	vg_sandbox_free(sb);
	vg_buf_release(&b);
}

/* Where a slot's executor may sit beside a task (backends/shim.h). */
static void
test_outside_shielded(void **state)
{
	struct vg_isolation_conf iso;
	struct vg_sandbox *sb;
	struct vg_err e;

	(void)state;
	memset(&iso, 0, sizeof(iso));
	vg_err_init(&e);
	iso.level = VG_ISO_NONE;
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	assert_true(vg_sandbox_outside_shielded(sb));
	vg_sandbox_free(sb);
	iso.level = VG_ISO_STANDARD;
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	assert_int_equal(vg_sandbox_outside_shielded(sb),
	    vg_host_caps()->landlock_abi > 0);
	vg_sandbox_free(sb);
	/* (Where the filter cannot be used, as under valgrind, only
	 * Landlock can shield.) */
	iso.ptrace = vg_xstrdup("deny");
	assert_int_equal(vg_sandbox_new(&iso, NULL, &sb, &e), 0);
	assert_int_equal(vg_sandbox_outside_shielded(sb),
	    vg_host_caps()->landlock_abi > 0 || vg_host_caps()->seccomp);
	vg_sandbox_free(sb);
	free(iso.ptrace);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_powers),
		cmocka_unit_test_setup_teardown(test_standard_writes,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_standard_syscalls,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_none_unconfined,
		    setup_none, teardown),
		cmocka_unit_test_setup_teardown(test_own_proc, setup_strict,
		    teardown),
#if defined(__x86_64__)
		cmocka_unit_test_setup_teardown(test_foreign_arch_killed,
		    setup_standard, teardown),
#endif
		cmocka_unit_test_setup_teardown(test_ptrace_deny,
		    setup_standard, teardown),
		cmocka_unit_test_setup_teardown(test_strict_network,
		    setup_strict, teardown),
		cmocka_unit_test_setup_teardown(test_strict_reads,
		    setup_strict, teardown),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_outside_shielded),
		cmocka_unit_test(test_caps_word),
		cmocka_unit_test(test_report),
	};
	int rc;

	if (argc > 2 && strcmp(argv[1], "--probe") == 0)
		return fx_probe_main(argc, argv);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	vg_local_reset();
	return rc;
}
