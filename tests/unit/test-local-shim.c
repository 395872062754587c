/*
 * test-local-shim.c - vigil-shim and its launch description (shim.h):
 * the reader refuses every malformed blob with its exact reason, and the
 * real vigil-shim, started by hand with a bad, short or missing launch,
 * refuses it on stderr and on the control socket without crashing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "backends/shim.h"
#include "local-fixture.h"

/* An aligned blob: a valid header followed by room for strings. */
static union {
	struct vg_shim_launch	l;
	char			b[4096];
} blob;

/* Makes blob a minimal valid launch of len bytes with one string. */
static size_t
blob_valid(void)
{
	size_t len = sizeof(blob.l) + 16;

	memset(&blob, 0, sizeof(blob));
	blob.l.magic = VG_SHIM_MAGIC;
	blob.l.version = VG_SHIM_VERSION;
	blob.l.header_size = sizeof(blob.l);
	blob.l.size = (uint32_t)len;
	blob.l.flags = VG_SHIM_PIDNS;
	blob.l.task_dir = sizeof(blob.l);
	memcpy(blob.b + sizeof(blob.l), "/tmp/task", 10);
	return len;
}

/* Checks blob (len bytes) and returns the reason ("" when accepted). */
static const char *
check(size_t len)
{
	static char why[200];

	why[0] = '\0';
	if (vg_shim_launch_check(blob.b, len, why, sizeof(why)) == 0)
		assert_string_equal(why, "");
	else
		assert_string_not_equal(why, "");
	return why;
}

/* Every field the reader checks, each with its exact reason. */
static void
test_check(void **state)
{
	char want[160];
	size_t len;

	(void)state;
	len = blob_valid();
	assert_string_equal(check(len), "");
	assert_string_equal(vg_shim_launch_str(&blob.l, blob.l.task_dir),
	    "/tmp/task");
	assert_null(vg_shim_launch_str(&blob.l, 0));

	assert_string_equal(check(5), "5 bytes, shorter than the 12 of the "
	    "magic, version and size");
	assert_int_equal(vg_shim_launch_check(blob.b + 4, len - 4, NULL, 0),
	    -1);
	blob.l.magic = 0x11223344;
	assert_string_equal(check(len), "bad magic 0x11223344 (want "
	    "0x48534756)");
	len = blob_valid();
	blob.l.version = 9;
	snprintf(want, sizeof(want), "version 9, this shim reads version %d "
	    "(vigil and vigil-shim are from different builds)",
	    VG_SHIM_VERSION);
	assert_string_equal(check(len), want);
	len = blob_valid();
	assert_string_equal(check(100), "truncated: 100 bytes, the header "
	    "alone has 1336");
	assert_string_equal(check(len - 1), "size field says 1352 bytes, 1351 "
	    "arrived");
	blob.l.flags = 0x400;
	assert_string_equal(check(len), "unknown flags 0x400");
	len = blob_valid();
	blob.l.killall_sig = SIGKILL;
	assert_string_equal(check(len), "killall_sig 9 is not a usable "
	    "signal");
	len = blob_valid();
	blob.l.nlimits = 9;
	assert_string_equal(check(len), "9 limits, at most 8");
	blob.l.nlimits = 1;
	blob.l.limits[0].resource = 99;
	assert_string_equal(check(len), "limit 0: unknown resource 99");
	blob.l.limits[0].resource = RLIMIT_CORE;
	blob.l.limits[0].cur = 2;
	blob.l.limits[0].max = 1;
	assert_string_equal(check(len), "limit 0: soft 2 above hard 1");
	len = blob_valid();
	blob.l.nrules = 1;
	blob.l.rules[0].fd = 2;
	assert_string_equal(check(len), "rule 0: fd 2 out of range "
	    "(4..65535)");
	blob.l.rules[0].fd = 7;
	assert_string_equal(check(len), "Landlock rules without the Landlock "
	    "flag");
	blob.l.flags |= VG_SHIM_LANDLOCK;
	blob.l.ll_attr_size = 12;
	assert_string_equal(check(len), "Landlock attribute size 12 (want 8, "
	    "16 or 24)");
	blob.l.ll_attr_size = 8;
	assert_string_equal(check(len), "Landlock without handled file system "
	    "rights");
	blob.l.ll_fs = 2;
	assert_string_equal(check(len), "");
	len = blob_valid();
	blob.l.nbpf = 3;
	blob.l.bpf_off = (uint32_t)len - 8;
	assert_string_equal(check(len), "seccomp program at 1344 (3 "
	    "instructions) outside the blob of 1352 bytes");
	blob.l.nbpf = 5000;
	assert_string_equal(check(len), "seccomp program of 5000 "
	    "instructions, at most 4096");
	len = blob_valid();
	blob.l.cwd = 8;
	assert_string_equal(check(len), "cwd: offset 8 outside the strings "
	    "(1336..1352)");
	blob.l.cwd = (uint32_t)len;
	assert_string_equal(check(len), "cwd: offset 1352 outside the strings "
	    "(1336..1352)");
	len = blob_valid();
	memset(blob.b + sizeof(blob.l), 'x', 16);
	assert_string_equal(check(len), "task_dir: not terminated within 16 "
	    "bytes");
	len = blob_valid();
	blob.b[sizeof(blob.l)] = 'r';
	assert_string_equal(check(len), "task_dir: 'rtmp/task' is not an "
	    "absolute path");
	len = blob_valid();
	blob.b[sizeof(blob.l)] = '\0';
	assert_string_equal(check(len), "task_dir: empty");
	len = blob_valid();
	blob.l.flags |= VG_SHIM_MKTMP;
	assert_string_equal(check(len), "a tmp_dir rule without tmp_dir");

	/* An executor's task: argv and env as string lists. */
	len = blob_valid();
	memcpy(blob.b + sizeof(blob.l), "/t\0a\0\0X=1\0", 10);
	blob.l.task_dir = sizeof(blob.l);
	blob.l.argc = 2;			/* "a", "" */
	blob.l.argv_off = sizeof(blob.l) + 3;
	blob.l.envc = 1;
	blob.l.env_off = sizeof(blob.l) + 6;
	assert_string_equal(check(len), "argv in the launch of a shim of one "
	    "task (it takes its own)");
	blob.l.flags |= VG_SHIM_SERVE;
	assert_string_equal(check(len), "");
	{
		char *v[4];

		vg_shim_launch_strv(&blob.l, blob.l.argv_off, blob.l.argc, v);
		assert_string_equal(v[0], "a");
		assert_string_equal(v[1], "");
		assert_null(v[2]);
		vg_shim_launch_strv(&blob.l, blob.l.env_off, blob.l.envc, v);
		assert_string_equal(v[0], "X=1");
		assert_null(v[1]);
	}
	blob.l.envc = 9;
	assert_string_equal(check(len), "env: string 7 of 9 runs past the "
	    "blob");
	blob.l.envc = 9000;
	assert_string_equal(check(len), "env: 9000 strings, at most 8192");
	blob.l.envc = 0;
	assert_string_equal(check(len), "env: offset 1342 with no strings");
	blob.l.env_off = 0;
	blob.l.argv_off = (uint32_t)len;
	assert_string_equal(check(len), "argv: offset 1352 outside the "
	    "strings (1336..1352)");
}

/* Runs vigil-shim by hand with fd 3 holding the given (or no) launch;
 * returns its wait status, its stderr in err and its report in msg. */
static int
run_shim(const void *launch, size_t len, int socket3, char *err,
    size_t errsize, struct vg_shim_msg *msg)
{
	const char *shim = vg_local_shim(NULL, 0);
	char arg0[] = "true", *argv[] = { arg0, NULL };
	int sv[2], ep[2], ws;
	ssize_t n;
	pid_t pid;

	assert_non_null(shim);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv), 0);
	assert_int_equal(pipe2(ep, O_CLOEXEC), 0);
	if (launch != NULL)
		assert_int_equal(send(sv[0], launch, len, 0), (ssize_t)len);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ep[1], 2);
		if (socket3)
			dup2(sv[1], 3);
		else
			dup2(ep[1], 3);
		execve(shim, argv, (char *[]){ NULL });
		_exit(126);
	}
	close(ep[1]);
	close(sv[1]);
	n = read(ep[0], err, errsize - 1);
	err[n > 0 ? n : 0] = '\0';
	close(ep[0]);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	memset(msg, 0, sizeof(*msg));
	n = recv(sv[0], msg, sizeof(*msg), MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(*msg))
		memset(msg, 0, sizeof(*msg));
	close(sv[0]);
	return ws;
}

/* The shim refuses a bad, short or missing launch with a clear reason
 * (stderr and the control socket) and exit status 127, never a crash. */
static void
test_shim_refuses(void **state)
{
	struct vg_shim_msg msg;
	char err[512], want[160];
	size_t len;
	int ws;

	(void)state;
	ws = run_shim("VGSH", 4, 1, err, sizeof(err), &msg);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 127);
	assert_string_equal(err, "vigil-shim: bad launch description: 4 "
	    "bytes, shorter than the 12 of the magic, version and size\n");
	assert_int_equal(msg.kind, VG_SHIM_SETUP_FAILED);
	assert_string_equal(msg.stage, "launch");
	assert_string_equal(msg.detail, "4 bytes, shorter than the 12 of the "
	    "magic, version and size");

	len = blob_valid();
	blob.l.version = VG_SHIM_VERSION + 1;
	ws = run_shim(blob.b, len, 1, err, sizeof(err), &msg);
	assert_int_equal(WEXITSTATUS(ws), 127);
	snprintf(want, sizeof(want), "version %d, this shim reads version %d "
	    "(vigil and vigil-shim are from different builds)",
	    VG_SHIM_VERSION + 1, VG_SHIM_VERSION);
	assert_string_equal(msg.detail, want);

	/* Nothing sent: the shim does not wait for it. */
	ws = run_shim(NULL, 0, 1, err, sizeof(err), &msg);
	assert_int_equal(WEXITSTATUS(ws), 127);
	assert_string_equal(err, "vigil-shim: bad launch description: no "
	    "launch description on fd 3: nothing was sent "
	    "(vigil-shim is started by vigil, not by hand)\n");

	/* fd 3 is not a socket. */
	ws = run_shim(NULL, 0, 0, err, sizeof(err), &msg);
	assert_int_equal(WEXITSTATUS(ws), 127);
	assert_string_equal(err, "vigil-shim: bad launch description: no "
	    "launch description on fd 3: not a socket "
	    "(vigil-shim is started by vigil, not by hand)\n");

	/* A valid launch runs the command (in no namespace: not init). */
	len = blob_valid();
	blob.l.flags = 0;
	blob.l.killall_sig = SIGRTMIN + 2;
	ws = run_shim(blob.b, len, 1, err, sizeof(err), &msg);
	assert_string_equal(err, "");
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	assert_int_equal(msg.kind, VG_SHIM_DONE);
	assert_int_equal(msg.wstatus, 0);
}

/* Commands resolved in vigil, and exec failures reported exactly. */
static void
test_exec_resolution(void **state)
{
	struct fx *f = fx_new(VG_ISO_NONE);

	(void)state;
	/* A resolved command, and a name nothing resolves: the shim's
	 * own search reports the errno execvp(3) would. */
	fx_argv(f, "/bin/true", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_SUCCEEDED);
	fx_argv(f, "no-such-command-here", (const char *)NULL);
	assert_int_equal(fx_run(f), 0);
	assert_int_equal(f->r.state, VG_ST_FAILED);
	assert_int_equal(f->r.exit_code, 127);
	assert_string_equal(f->r.reason, "cannot execute "
	    "'no-such-command-here': No such file or directory");
	fx_free(f);
	vg_local_reset();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_shim_refuses),
		cmocka_unit_test(test_exec_resolution),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
