/*
 * test-ssh.c - the pure parts of the ssh backend: remote paths and words,
 * the env file and the wrapper (both run for real by /bin/sh here, with
 * hostile values), status records, proxy_jump specs, host key verdicts
 * and the offset bookkeeping that resumes output after a reconnect.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/ssh-remote.h"
#include "common/path.h"

/* Values no shell may interpret. */
static const char *const hostile[] = {
	"it's", "$(touch pwned)", "`touch pwned`", "a\nb", "\"q\" \\ $HOME",
	"; rm -rf /; '", "", " lead and trail ", "*", "~", "-n", "'\"'\"'",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

/* Runs argv-less shell text in dir, returns its stdout (caller frees). */
static char *
sh_out(const char *dir, const char *script)
{
	struct vg_buf b = VG_BUF_INIT;
	char *cmd, buf[4096];
	FILE *p;
	size_t n;

	cmd = vg_xasprintf("cd '%s' && /bin/sh -c %s", dir, script);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		vg_buf_add(&b, buf, n);
	pclose(p);
	free(cmd);
	if (b.data == NULL)
		vg_buf_adds(&b, "");
	return vg_buf_detach(&b);
}

/* A fresh temp dir (caller removes). */
static char *
tmpdir(void)
{
	char *d = vg_xstrdup("/tmp/vigil-test-ssh.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

/* Path words: ~ becomes "$HOME", the rest is single-quoted. */
static void
test_path_word(void **state)
{
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	vg_ssh_path_word(&b, "~/.vigil/runs");
	assert_string_equal(b.data, "\"$HOME\"'/.vigil/runs'");
	vg_buf_reset(&b);
	vg_ssh_path_word(&b, "~");
	assert_string_equal(b.data, "\"$HOME\"");
	vg_buf_reset(&b);
	vg_ssh_path_word(&b, "~user/x");
	assert_string_equal(b.data, "'~user/x'");
	vg_buf_reset(&b);
	vg_ssh_path_word(&b, "/a'b $(c)");
	assert_string_equal(b.data, "'/a'\\''b $(c)'");
	vg_buf_release(&b);
}

/* Attempt dirs: one separator, run ids made safe. */
static void
test_attempt_dir(void **state)
{
	char *d;

	(void)state;
	d = vg_ssh_attempt_dir("/scratch/u/", "20261130-1", 3, 2);
	assert_string_equal(d, "/scratch/u/20261130-1/3/2");
	free(d);
	d = vg_ssh_attempt_dir(NULL, "../x/$(y)", 0, 1);
	assert_string_equal(d, "~/.vigil/runs/.._x___y_/0/1");
	free(d);
	d = vg_ssh_attempt_dir("/r", "..", 0, 1);
	assert_string_equal(d, "/r/.._/0/1");
	free(d);
	d = vg_ssh_attempt_dir("/", "r", 1, 1);
	assert_string_equal(d, "/r/1/1");
	free(d);
	d = vg_ssh_sftp_path("~/.vigil/runs/r/0/1");
	assert_string_equal(d, ".vigil/runs/r/0/1");
	free(d);
	d = vg_ssh_sftp_path("~");
	assert_string_equal(d, ".");
	free(d);
	d = vg_ssh_sftp_path("/abs");
	assert_string_equal(d, "/abs");
	free(d);
}

/* The env file, sourced by a real /bin/sh, gives every value back. */
static void
test_env_file(void **state)
{
	struct vg_strv env = VG_STRV_INIT;
	struct vg_buf b = VG_BUF_INIT, want = VG_BUF_INIT;
	struct vg_err e;
	char *dir = tmpdir(), *p, *out, *script;
	size_t i;

	(void)state;
	vg_err_init(&e);
	for (i = 0; i < NHOSTILE; i++)
		vg_strv_pushf(&env, "V%zu=%s", i, hostile[i]);
	assert_int_equal(vg_ssh_env_file(&env, &b, &e), 0);
	p = vg_path_join(dir, "env");
	assert_int_equal(vg_write_file_atomic(p, b.data, b.len, 0600, &e), 0);
	free(p);
	script = vg_xstrdup("'. ./env; for i in 0 1 2 3 4 5 6 7 8 9 10 11; "
	    "do eval \"printf \\\"%s|\\\" \\\"\\$V$i\\\"\"; done; "
	    "printf \"%s\" \"$VIGIL_TASK_DIR\"'");
	out = sh_out(dir, script);
	for (i = 0; i < NHOSTILE; i++)
		vg_buf_printf(&want, "%s|", hostile[i]);
	vg_buf_adds(&want, dir);
	assert_string_equal(out, want.data);
	p = vg_path_join(dir, "pwned");
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	free(out);
	free(script);

	/* Names that are no shell variables are refused, nothing added. */
	vg_buf_reset(&b);
	vg_strv_release(&env);
	vg_strv_push(&env, "OK=1");
	vg_strv_push(&env, "A-B=x");
	assert_int_equal(vg_ssh_env_file(&env, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "env: 'A-B' is not a shell variable name "
	    "([A-Za-z_][A-Za-z0-9_]*), so it cannot be passed to the remote "
	    "host");
	assert_int_equal((int)b.len, 0);
	vg_strv_release(&env);
	vg_strv_push(&env, "1X=1");
	assert_int_equal(vg_ssh_env_file(&env, &b, &e), VG_EINVAL);
	assert_true(vg_ssh_env_name_ok("_a1", 3));
	assert_false(vg_ssh_env_name_ok("", 0));
	assert_false(vg_ssh_env_name_ok("a b", 3));

	vg_strv_release(&env);
	vg_buf_release(&b);
	vg_buf_release(&want);
	p = vg_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
	free(p);
	free(dir);
}

/* Reads dir/name into a string (caller frees); NULL when missing. */
static char *
slurp(const char *dir, const char *name)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char *p = vg_path_join(dir, name);
	int rc;

	vg_err_init(&e);
	rc = vg_read_file(p, 1 << 20, &b, &e);
	free(p);
	if (rc != 0)
		return NULL;
	if (b.data == NULL)
		vg_buf_adds(&b, "");
	return vg_buf_detach(&b);
}

/* Waits up to 10 s for dir/status to hold a complete record. */
static int
wait_status(const char *dir)
{
	char *s;
	int i, code = -1;

	for (i = 0; i < 1000; i++) {
		s = slurp(dir, "status");
		if (s != NULL && vg_ssh_status_parse(s, strlen(s), &code) ==
		    0) {
			free(s);
			return code;
		}
		free(s);
		usleep(10000);
	}
	return -1;
}

/* Writes run.sh and an empty env into dir, starts it as the backend
 * does, returns what the launcher printed. */
static char *
start_wrapper(const char *dir, const struct vg_ssh_launch *l)
{
	struct vg_buf w = VG_BUF_INIT, cmd = VG_BUF_INIT;
	struct vg_err e;
	char *p, *out;

	vg_err_init(&e);
	vg_ssh_wrapper_script(l, &w);
	p = vg_path_join(dir, "run.sh");
	assert_int_equal(vg_write_file_atomic(p, w.data, w.len, 0700, &e), 0);
	free(p);
	p = vg_path_join(dir, "env");
	assert_int_equal(vg_write_file_atomic(p, "export X=1\n", 11, 0600,
	    &e), 0);
	free(p);
	vg_ssh_start_command(dir, &cmd);
	p = vg_xasprintf("'%s'", cmd.data);
	out = sh_out(dir, p);
	free(p);
	vg_buf_release(&w);
	vg_buf_release(&cmd);
	return out;
}

/* The wrapper runs argv verbatim, detached, and records the status. */
static void
test_wrapper_runs(void **state)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf want = VG_BUF_INIT;
	char *dir = tmpdir(), *out, *p;
	struct vg_ssh_launch l = { .dir = dir, .argv = &argv };
	struct vg_usage u;
	size_t i;

	(void)state;
	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, "printf '%s|' \"$@\"; echo \"X=$X\"; echo e >&2; "
	    "exit 3");
	vg_strv_push(&argv, "argv0");
	for (i = 0; i < NHOSTILE; i++)
		vg_strv_push(&argv, hostile[i]);
	out = start_wrapper(dir, &l);
	assert_memory_equal(out, "vigil-started ", 14);
	free(out);
	assert_int_equal(wait_status(dir), 3);
	for (i = 0; i < NHOSTILE; i++)
		vg_buf_printf(&want, "%s|", hostile[i]);
	vg_buf_adds(&want, "X=1\n");
	out = slurp(dir, "out");
	assert_string_equal(out, want.data);
	free(out);
	out = slurp(dir, "err");
	assert_string_equal(out, "e\n");
	free(out);
	p = vg_path_join(dir, "pwned");
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	out = slurp(dir, "timedout");
	assert_null(out);
	/* The usage file is complete once status is there. */
	out = slurp(dir, "usage");
	assert_non_null(out);
	memset(&u, 0, sizeof(u));
	assert_int_equal(vg_ssh_usage_parse(out, strlen(out), &u), 0);
	assert_true(u.known & VG_USAGE_CPU);
	assert_true(u.cpu_user >= 0 && u.cpu_user < 10);
	if (access("/usr/bin/time", X_OK) == 0)
		assert_true((u.known & VG_USAGE_RSS) && u.max_rss > 0);
	free(out);

	vg_strv_release(&argv);
	vg_buf_release(&want);
	p = vg_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
	free(p);
	free(dir);
}

/* The watchdog kills the task's group at the timeout. */
static void
test_wrapper_timeout(void **state)
{
	struct vg_strv argv = VG_STRV_INIT;
	char *dir = tmpdir(), *out, *p;
	struct vg_ssh_launch l = {
		.dir = dir, .argv = &argv, .timeout = 0.5, .grace = 1,
	};

	(void)state;
	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, "echo start; sleep 30; echo never");
	out = start_wrapper(dir, &l);
	free(out);
	/* 143 = 128 + SIGTERM, as the remote shell reports it. */
	assert_int_equal(wait_status(dir), 143);
	out = slurp(dir, "out");
	assert_string_equal(out, "start\n");
	free(out);
	out = slurp(dir, "timedout");
	assert_non_null(out);
	free(out);
	vg_strv_release(&argv);
	p = vg_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
	free(p);
	free(dir);
}

/* The kill script and the start command quote the dir. */
static void
test_scripts_quote(void **state)
{
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	vg_ssh_kill_script("/r/x'y", 2.5, 1, &b);
	assert_non_null(strstr(b.data, "cd '/r/x'\\''y' 2>/dev/null || exit 0\n"
	    "[ -s status ] || : >timedout\n"));
	assert_non_null(strstr(b.data, "sleep 3;"));
	vg_buf_reset(&b);
	vg_ssh_kill_script("~/d", 0, 0, &b);
	assert_null(strstr(b.data, "timedout"));
	assert_non_null(strstr(b.data, "cd \"$HOME\"'/d'"));
	vg_buf_reset(&b);
	vg_ssh_start_command("~/r/1/1", &b);
	assert_string_equal(b.data, "/bin/sh \"$HOME\"'/r/1/1/run.sh'");
	vg_buf_release(&b);
}

/* True when pid is gone or a zombie. */
static int
ended(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int z = 0;

	if (kill(pid, 0) != 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL && p[1] == ' ')
		z = p[2] == 'Z';
	fclose(f);
	return z;
}

/* The reap script, run by /bin/sh on a tree like a remote one: an
 * attempt without status has its process groups killed, every attempt
 * dir of the run goes, and the run dir when empty; another run's stays;
 * a quote in the run id stays quoted. */
static void
test_reap_script(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	char tmpl[] = "/tmp/vigil-reap-XXXXXX", *dir, *cmd, *out;
	FILE *f;
	char line[256];
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(dir = mkdtemp(tmpl));
	cmd = vg_xasprintf("cd '%s' && mkdir -p r1/0/1 r1/1/2 r2/0/1 && "
	    "echo 0 >r1/1/2/status; setsid sleep 60 </dev/null "
	    ">/dev/null 2>&1 & echo $!", dir);
	assert_non_null(f = popen(cmd, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	pclose(f);
	free(cmd);
	pid = (pid_t)atoi(line);
	assert_true(pid > 0);
	/* Its own session: the group is the pid, as tpid records it. */
	cmd = vg_xasprintf("%s/r1/0/1/tpid", dir);
	assert_non_null(f = fopen(cmd, "w"));
	fprintf(f, "%ld\n", (long)pid);
	fclose(f);
	free(cmd);
	vg_ssh_reap_script(dir, "r1", -1, &b);
	/* Through a file: the script holds quotes. */
	cmd = vg_xasprintf("%s/reap.sh", dir);
	assert_non_null(f = fopen(cmd, "w"));
	fputs(b.data, f);
	fclose(f);
	out = vg_xasprintf("/bin/sh %s >%s/out", cmd, dir);
	assert_int_equal(system(out), 0);
	free(out);
	free(cmd);
	/* The sleep was killed (it is not our child: wait until it is gone
	 * from /proc or a zombie there, whose reaper may be slow). */
	for (st = 0; st < 500 && !ended(pid); st++)
		usleep(20000);
	assert_true(ended(pid));
	out = vg_xasprintf("%s/out", dir);
	assert_non_null(f = fopen(out, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "killed 0/1\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "removed 0/1\n");
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "removed 1/2\n");
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	free(out);
	out = vg_xasprintf("%s/r1", dir);
	assert_int_not_equal(access(out, F_OK), 0);
	free(out);
	out = vg_xasprintf("%s/r2/0/1", dir);
	assert_int_equal(access(out, F_OK), 0);
	free(out);
	/* One task only, and a run id that needs quoting. */
	vg_buf_reset(&b);
	vg_ssh_reap_script("~/x'y", "r'1", 3, &b);
	assert_non_null(strstr(b.data, "cd \"$HOME\"'/x'\\''y/r_1' "));
	assert_non_null(strstr(b.data, "set -- 3/*/\n"));
	vg_buf_release(&b);
	cmd = vg_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* Status records: complete only with the newline. */
static void
test_status_parse(void **state)
{
	int c = -1;

	(void)state;
	assert_int_equal(vg_ssh_status_parse("0\n", 2, &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(vg_ssh_status_parse("143\n", 4, &c), 0);
	assert_int_equal(c, 143);
	assert_int_equal(vg_ssh_status_parse("", 0, &c), -1);
	assert_int_equal(vg_ssh_status_parse("14", 2, &c), -1);
	assert_int_equal(vg_ssh_status_parse("\n", 1, &c), -1);
	assert_int_equal(vg_ssh_status_parse("256\n", 4, &c), -1);
	assert_int_equal(vg_ssh_status_parse("1x\n", 3, &c), -1);
	assert_int_equal(vg_ssh_status_parse("-1\n", 3, &c), -1);
	assert_int_equal(vg_ssh_status_parse("1000\n", 5, &c), -1);
}

/* proxy_jump specs. */
static void
test_jump_parse(void **state)
{
	struct vg_ssh_jump j;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_ssh_jump_parse("bastion", &j, &e), 0);
	assert_null(j.user);
	assert_string_equal(j.host, "bastion");
	assert_int_equal(j.port, 22);
	vg_ssh_jump_release(&j);
	assert_int_equal(vg_ssh_jump_parse("me@gw.example.org:2222", &j, &e),
	    0);
	assert_string_equal(j.user, "me");
	assert_string_equal(j.host, "gw.example.org");
	assert_int_equal(j.port, 2222);
	vg_ssh_jump_release(&j);
	assert_int_equal(vg_ssh_jump_parse("[::1]:22", &j, &e), 0);
	assert_string_equal(j.host, "::1");
	vg_ssh_jump_release(&j);
	assert_int_equal(vg_ssh_jump_parse("a@b:0", &j, &e), VG_EINVAL);
	assert_string_equal(e.msg, "ssh.proxy_jump: 'a@b:0': port must be "
	    "1..65535");
	assert_int_equal(vg_ssh_jump_parse("a,b", &j, &e), VG_EINVAL);
	assert_string_equal(e.msg, "ssh.proxy_jump: 'a,b': only one jump "
	    "host is supported");
	assert_int_equal(vg_ssh_jump_parse("@h", &j, &e), VG_EINVAL);
	assert_string_equal(e.msg, "ssh.proxy_jump: '@h' is not "
	    "[user@]host[:port]");
	assert_int_equal(vg_ssh_jump_parse("h;x", &j, &e), VG_EINVAL);
	assert_int_equal(vg_ssh_jump_parse("a:b:c", &j, &e), VG_EINVAL);
	assert_int_equal(vg_ssh_jump_parse("", &j, &e), VG_EINVAL);
	assert_int_equal(vg_ssh_jump_parse("[::1", &j, &e), VG_EINVAL);
}

/* Host key verdicts and their messages. */
static void
test_hostkey_verdict(void **state)
{
	struct vg_err e;
	char n[64];

	(void)state;
	vg_err_init(&e);
	vg_ssh_host_name(n, sizeof(n), "h", 22);
	assert_string_equal(n, "h");
	vg_ssh_host_name(n, sizeof(n), "h", 2222);
	assert_string_equal(n, "[h]:2222");
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_OK, 0, "h", 22,
	    "ssh-ed25519", "SHA256:x", "/kh", &e), VG_SSH_HK_OK);
	/* accept-new adds unknown keys only; never a changed one. */
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_UNKNOWN, 1, "h",
	    22, "ssh-ed25519", "SHA256:x", "/kh", &e), VG_SSH_HK_ADD);
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_NOFILE, 1, "h",
	    22, "ssh-ed25519", "SHA256:x", "/kh", &e), VG_SSH_HK_ADD);
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_CHANGED, 1, "h",
	    2222, "ssh-ed25519", "SHA256:abc", "/kh", &e), VG_SSH_HK_REFUSE);
	assert_int_equal(e.rc, VG_EDENIED);
	assert_string_equal(e.msg, "ssh: host key of '[h]:2222' CHANGED: "
	    "server offers ssh-ed25519 SHA256:abc, unlike '/kh' (if expected: "
	    "ssh-keygen -R '[h]:2222' -f '/kh')");
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_OTHER, 1, "h",
	    22, "ecdsa-sha2-nistp256", "SHA256:abc", "/kh", &e),
	    VG_SSH_HK_REFUSE);
	assert_string_equal(e.msg, "ssh: host key of 'h' CHANGED: server "
	    "offers ecdsa-sha2-nistp256 SHA256:abc, '/kh' has only other key "
	    "types (if expected: ssh-keygen -R 'h' -f '/kh')");
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_UNKNOWN, 0, "h",
	    22, "ssh-ed25519", "SHA256:abc", "/kh", &e), VG_SSH_HK_REFUSE);
	assert_string_equal(e.msg, "ssh: host key of 'h' is unknown: server "
	    "offers ssh-ed25519 SHA256:abc, '/kh' has no entry (check it and "
	    "add it to that file, or set ssh.host_key: accept-new)");
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_NOFILE, 0, "h",
	    22, "ssh-ed25519", "SHA256:abc", "/kh", &e), VG_SSH_HK_REFUSE);
	assert_non_null(strstr(e.msg, "'/kh' does not exist"));
	assert_int_equal(vg_ssh_hostkey_verdict(VG_SSH_KNOWN_ERROR, 1, "h",
	    22, "ssh-ed25519", "SHA256:abc", "/kh", &e), VG_SSH_HK_REFUSE);
	assert_int_equal(e.rc, VG_EBACKEND);
	assert_string_equal(e.msg, "ssh: cannot check the host key of 'h' "
	    "against '/kh' (unreadable or malformed)");
}

/*
 * Offsets: a stream copied in pieces, with a "reconnect" between any two
 * of them, resumes at the local size: the result is the source, once.
 */
static void
test_offsets(void **state)
{
	char src[10000], *dir = tmpdir(), *p, *got;
	struct vg_err e;
	uint64_t off;
	size_t i, n;
	int fd;

	(void)state;
	vg_err_init(&e);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (char)('a' + i % 26);
	p = vg_path_join(dir, "stdout");
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
	    0644);
	assert_true(fd >= 0);
	for (n = 1; ; n = n * 3 + 7) {
		/* Each round "reconnects": the offset comes from the file. */
		assert_int_equal(vg_ssh_resume_offset(fd, &off, &e), 0);
		if (off >= sizeof(src))
			break;
		if (n > sizeof(src) - off)
			n = sizeof(src) - off;
		assert_int_equal(vg_ssh_write_all(fd, src + off, n, &e), 0);
	}
	assert_int_equal((int)off, (int)sizeof(src));
	close(fd);
	got = slurp(dir, "stdout");
	assert_memory_equal(got, src, sizeof(src));
	free(got);
	assert_int_equal(vg_ssh_resume_offset(-1, &off, &e), VG_EIO);
	assert_int_equal(vg_ssh_write_all(-1, "x", 1, &e), VG_EIO);
	free(p);
	p = vg_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
	free(p);
	free(dir);
}

/* usage files: GNU time's lines, dash's and BusyBox's `times`, time
 * alone, times alone, and nothing usable. */
static void
test_usage_parse(void **state)
{
	struct vg_usage u;
	const char *gnu = "Command exited with non-zero status 3\n"
	    "vigil-maxrss 205336\n"
	    "0m0.001000s 0m0.002000s\n"
	    "0m1.250000s 1m0.500000s\n";
	const char *bb = "0m0.000s 0m0.000s\n0m2.020s 0m0.130s\n";
	const char *bad[] = {
		"", "vigil-maxrss\n", "vigil-maxrss 12x\n",
		"vigil-maxrss 99999999999999999999\n",
		"0m1.0s 0m1.0s\n",		/* the shell's line only */
		"0m1.0s 0m1.0s\nm1.0s 0m1.0s\n", "1.0s 2.0s\n0m1s\n",
		"0m1.0s 0m1.0s\n0m1.0s 0m1.0s 0m1.0s\n",
	};
	size_t i;

	(void)state;
	memset(&u, 0, sizeof(u));
	assert_int_equal(vg_ssh_usage_parse(gnu, strlen(gnu), &u), 0);
	assert_int_equal(u.known, VG_USAGE_CPU | VG_USAGE_RSS);
	assert_int_equal(u.max_rss, 205336LL * 1024);
	assert_true(u.cpu_user > 1.2499 && u.cpu_user < 1.2501);
	assert_true(u.cpu_sys > 60.4999 && u.cpu_sys < 60.5001);

	memset(&u, 0, sizeof(u));
	assert_int_equal(vg_ssh_usage_parse(bb, strlen(bb), &u), 0);
	assert_int_equal(u.known, VG_USAGE_CPU);
	assert_true(u.cpu_user > 2.0199 && u.cpu_sys > 0.1299 &&
	    u.cpu_sys < 0.1301);

	memset(&u, 0, sizeof(u));
	assert_int_equal(vg_ssh_usage_parse("vigil-maxrss 4\n", 15, &u), 0);
	assert_int_equal(u.known, VG_USAGE_RSS);
	assert_int_equal(u.max_rss, 4096);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&u, 0, sizeof(u));
		assert_int_equal(vg_ssh_usage_parse(bad[i], strlen(bad[i]),
		    &u), -1);
		assert_int_equal(u.known, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_word),
		cmocka_unit_test(test_attempt_dir),
		cmocka_unit_test(test_env_file),
		cmocka_unit_test(test_wrapper_runs),
		cmocka_unit_test(test_wrapper_timeout),
		cmocka_unit_test(test_scripts_quote),
		cmocka_unit_test(test_status_parse),
		cmocka_unit_test(test_usage_parse),
		cmocka_unit_test(test_jump_parse),
		cmocka_unit_test(test_hostkey_verdict),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_reap_script),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
