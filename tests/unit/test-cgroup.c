/*
 * test-cgroup.c - per-task cgroups on the real kernel: a memory limit
 * that ends in an OOM kill, a pids limit that makes fork fail, a tree
 * kill that reaches a setsid'd grandchild, removal, and every refusal.
 * Each test skips (with the reason) only on a host where no cgroup
 * hierarchy at all is writable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>

#include "backends/cgroup.h"
#include "runner/manifest/manifest.h"
#include "common/proc.h"

#define MiB (1024ULL * 1024)

static struct vg_cgroup_caps caps;

/* True when some hierarchy is writable; prints why not otherwise. */
static int
usable(void)
{
	if (caps.v2_mode != VG_CGROUP_V2_NONE || caps.v1_memory[0] != '\0' ||
	    caps.v1_pids[0] != '\0')
		return 1;
	print_message("skipped: no writable cgroup hierarchy (%s; %s)\n",
	    caps.why_memory, caps.why_pids);
	return 0;
}

/* True when a dir holds no process. */
static size_t
count_procs(const char *dir)
{
	char path[1024], line[32];
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		n++;
	fclose(fp);
	return n;
}

/* The cgroup of the running test, freed by teardown when an assertion
 * ends the test early (no process or directory is left behind). */
static struct vg_cgroup *live;

/* The host with v2 left out: v1 only, as on RHEL 8. */
static struct vg_cgroup_caps caps_v1;

/* Creates a cgroup that must deliver what lim asks. */
static struct vg_cgroup *
make_in(const struct vg_cgroup_caps *c, uint64_t memory, uint64_t pids)
{
	struct vg_cgroup_limits lim = { .memory = memory, .pids = pids,
	    .required = 1 };
	struct vg_cgroup *cg = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_cgroup_new(c, &lim, "unit-test", &cg, &e) != 0)
		fail_msg("vg_cgroup_new: %s", e.msg);
	live = cg;
	assert_string_equal(vg_cgroup_downgrades(cg), "");
	return cg;
}

/* Frees the test's cgroup. */
static void
drop(struct vg_cgroup *cg)
{
	vg_cgroup_free(cg);
	if (cg == live)
		live = NULL;
}

static int
teardown(void **state)
{
	(void)state;
	vg_cgroup_free(live);
	live = NULL;
	return 0;
}

/* Same on the host as probed. */
static struct vg_cgroup *
make(uint64_t memory, uint64_t pids)
{
	return make_in(NULL, memory, pids);
}

/* This binary, which children run in probe mode (exec'd: a task is
 * never the test process itself). */
static char self[1024];

/*
 * Starts a child that joins cg and then runs this binary as
 * "probe WHAT ARG": touch MiB, fork N, daemon FD, pause.
 */
static pid_t
spawn(const struct vg_cgroup *cg, const char *what, const char *arg)
{
	pid_t pid = fork();
	int err;

	assert_true(pid >= 0);
	if (pid == 0) {
		if ((err = vg_cgroup_join_self(cg)) != 0)
			_exit(100 - err);
		execl(self, self, "probe", what, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int probe_unprivileged(void);

/* Probe mode: the workloads, run as the joined child. */
static int
probe_main(const char *what, const char *arg)
{
	long n = atol(arg), i, ok = 0;
	size_t len, off;
	pid_t c;
	char *p;
	int fd;

	if (strcmp(what, "touch") == 0) {
		len = (size_t)n * MiB;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 4;
		for (off = 0; off < len; off += 4096)
			p[off] = 1;
		return 0;
	}
	if (strcmp(what, "fork") == 0) {
		/* Exit status: forks done when fork failed with EAGAIN,
		 * else 100 + errno. */
		for (i = 0; i < n; i++) {
			if ((c = fork()) == 0) {
				pause();
				_exit(0);
			}
			if (c < 0)
				return errno == EAGAIN ? (int)ok : 100 + errno;
			ok++;
		}
		return (int)ok;
	}
	if (strcmp(what, "daemon") == 0) {
		/* Double fork and setsid, the pid back through fd. */
		fd = (int)n;
		if (fork() == 0) {
			setsid();
			if (fork() == 0) {
				c = getpid();
				if (write(fd, &c, sizeof(c)) < 0)
					_exit(5);
				for (;;)
					pause();
			}
			_exit(0);
		}
		return 0;
	}
	if (strcmp(what, "pause") == 0)
		for (;;)
			pause();
	if (strcmp(what, "unprivileged") == 0)
		return probe_unprivileged();
	return 2;
}

/* Waits for pid and returns its status. */
static int
wait_for(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	return st;
}

static void
test_memory_oom(void **state)
{
	struct vg_cgroup *cg;
	struct vg_err e;
	uint64_t n = 99;
	int st;

	(void)state;
	if (!usable())
		skip();
	cg = make(32 * MiB, 0);
	assert_true(vg_cgroup_delivered(cg) & VG_CGROUP_MEMORY);
	assert_int_equal(vg_cgroup_oom_kills(cg, &n, &e), 0);
	assert_int_equal(n, 0);
	st = wait_for(spawn(cg, "touch", "128"));
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_oom_kills(cg, &n, &e), 0);
	assert_true(n >= 1);
	drop(cg);
}

static void
test_memory_within_limit(void **state)
{
	struct vg_cgroup *cg;
	struct vg_err e;
	uint64_t n = 99;
	int st;

	(void)state;
	if (!usable())
		skip();
	cg = make(64 * MiB, 0);
	st = wait_for(spawn(cg, "touch", "4"));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(vg_cgroup_oom_kills(cg, &n, &e), 0);
	assert_int_equal(n, 0);
	drop(cg);
}

/*
 * The child joins a cgroup with pids.max 8 and forks up to 20 sleepers:
 * it is the first of the 8, so 7 forks succeed and the 8th fails with
 * EAGAIN.  Exit status: forks done, or 100 + errno when fork failed
 * otherwise.
 */
static void
test_pids_limit(void **state)
{
	struct vg_cgroup *cg;
	struct vg_err e;
	const char *dir;
	int st;

	(void)state;
	if (!usable())
		skip();
	cg = make(0, 8);
	assert_true(vg_cgroup_delivered(cg) & VG_CGROUP_PIDS);
	st = wait_for(spawn(cg, "fork", "20"));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
	/* The 7 sleepers are orphans now, still in the cgroup. */
	dir = vg_cgroup_dir(cg, VG_CGROUP_V1_PIDS);
	if (dir == NULL)
		dir = vg_cgroup_dir(cg, VG_CGROUP_V2);
	assert_non_null(dir);
	assert_int_equal(count_procs(dir), 7);
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_kill(cg, &e), 0);
	assert_int_equal(count_procs(dir), 0);
	drop(cg);
}

/* True when pid has exited (gone, or a zombie of init) within ms;
 * /proc rather than a pidfd, which valgrind does not know. */
static int
gone(pid_t pid, int ms)
{
	struct timespec ts = { 0, 10000000 };
	char path[64], buf[256], *rp;
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	for (i = 0; i <= ms / 10; i++) {
		if ((fp = fopen(path, "re")) == NULL)
			return 1;
		rp = fgets(buf, sizeof(buf), fp);
		fclose(fp);
		if (rp == NULL || ((rp = strrchr(buf, ')')) != NULL &&
		    rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X')))
			return 1;
		if (i < ms / 10)
			nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * The child joins, then double-forks a daemon that calls setsid and
 * sends its pid back; the child exits.  vg_cgroup_kill must still end
 * the daemon.
 */
static void
kill_setsid_grandchild(const struct vg_cgroup_caps *c)
{
	struct vg_cgroup *cg;
	struct vg_err e;
	pid_t pid, daemon_pid = 0;
	int fds[2], h, st;
	char num[16];

	cg = make_in(c, 0, 0);
	assert_true(vg_cgroup_delivered(cg) & VG_CGROUP_TREE);
	/* The write end stays open across exec: the daemon writes to it. */
	assert_int_equal(pipe(fds), 0);
	snprintf(num, sizeof(num), "%d", fds[1]);
	pid = spawn(cg, "daemon", num);
	close(fds[1]);
	assert_int_equal(read(fds[0], &daemon_pid, sizeof(daemon_pid)),
	    sizeof(daemon_pid));
	close(fds[0]);
	st = wait_for(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(gone(daemon_pid, 0));
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_kill(cg, &e), 0);
	assert_true(gone(daemon_pid, 1000));
	for (h = 0; h < VG_CGROUP_NHIER; h++)
		if (vg_cgroup_dir(cg, h) != NULL)
			assert_int_equal(count_procs(vg_cgroup_dir(cg, h)), 0);
	drop(cg);
}

static void
test_kill_setsid_grandchild(void **state)
{
	(void)state;
	if (!usable())
		skip();
	kill_setsid_grandchild(NULL);
}

/* Without v2 (no cgroup.kill) the v1 pids cgroup tracks the tree and
 * the kill signals each member. */
static void
test_kill_setsid_grandchild_v1(void **state)
{
	(void)state;
	if (caps_v1.v1_pids[0] == '\0') {
		print_message("skipped: no writable v1 pids hierarchy (%s)\n",
		    caps.why_pids);
		skip();
	}
	kill_setsid_grandchild(&caps_v1);
}

/* free() with a live member: the member dies, every directory goes,
 * including a cgroup the task made below its own. */
static void
test_free_removes(void **state)
{
	char dirs[VG_CGROUP_NHIER][1024], sub[1100];
	struct vg_cgroup *cg;
	struct stat sb;
	pid_t pid;
	int h, n = 0, st, fds[2];
	char c;

	(void)state;
	if (!usable())
		skip();
	cg = make(caps.v2_memory || caps.v1_memory[0] ? 64 * MiB : 0,
	    caps.v2_pids || caps.v1_pids[0] ? 100 : 0);
	for (h = 0; h < VG_CGROUP_NHIER; h++) {
		dirs[h][0] = '\0';
		if (vg_cgroup_dir(cg, h) != NULL) {
			snprintf(dirs[h], sizeof(dirs[h]), "%s",
			    vg_cgroup_dir(cg, h));
			assert_int_equal(stat(dirs[h], &sb), 0);
			n++;
		}
	}
	assert_true(n >= 1);
	for (h = 0; h < VG_CGROUP_NHIER && dirs[h][0] == '\0'; h++)
		;
	snprintf(sub, sizeof(sub), "%.1000s/sub", dirs[h]);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = spawn(cg, "pause", "0");
	/* EOF at the exec, once the child has joined. */
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 0);
	close(fds[0]);
	drop(cg);
	st = wait_for(pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	assert_int_equal(stat(sub, &sb), -1);
	assert_int_equal(errno, ENOENT);
	for (h = 0; h < VG_CGROUP_NHIER; h++) {
		if (dirs[h][0] == '\0')
			continue;
		assert_int_equal(stat(dirs[h], &sb), -1);
		assert_int_equal(errno, ENOENT);
	}
	vg_cgroup_free(NULL);
}

/* The fds the child keeps: one per directory, write-only, CLOEXEC. */
static void
test_fds(void **state)
{
	struct vg_cgroup *cg;
	const int *fds;
	int n, i, h, dirs = 0;

	(void)state;
	if (!usable())
		skip();
	cg = make(0, 0);
	for (h = 0; h < VG_CGROUP_NHIER; h++)
		dirs += vg_cgroup_dir(cg, h) != NULL;
	n = vg_cgroup_procs_fds(cg, &fds);
	assert_int_equal(n, dirs);
	for (i = 0; i < n; i++) {
		assert_int_equal(fcntl(fds[i], F_GETFL) & O_ACCMODE,
		    O_WRONLY);
		assert_true(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
	}
	if (vg_cgroup_dir(cg, VG_CGROUP_V2) != NULL) {
		assert_true(vg_cgroup_dirfd_v2(cg) >= 0);
		assert_true(fcntl(vg_cgroup_dirfd_v2(cg), F_GETFD) &
		    FD_CLOEXEC);
	} else
		assert_int_equal(vg_cgroup_dirfd_v2(cg), -1);
	drop(cg);
}

/* clone3 with CLONE_INTO_CGROUP puts the child in the v2 cgroup from its
 * first instruction. */
static void
test_clone_into_cgroup(void **state)
{
	struct clone_args ca;
	struct vg_cgroup *cg;
	char path[64], line[1100], want[1100];
	const char *dir;
	FILE *fp;
	long pid;
	int st, found = 0;

	(void)state;
	if (!usable())
		skip();
	if (caps.v2_mode == VG_CGROUP_V2_NONE) {
		print_message("skipped: no usable cgroup v2 (%s)\n",
		    caps.why_v2);
		skip();
	}
	cg = make(0, 0);
	dir = vg_cgroup_dir(cg, VG_CGROUP_V2);
	assert_non_null(dir);
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (uint64_t)vg_cgroup_dirfd_v2(cg);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0 && errno == ENOSYS) {
		drop(cg);
		print_message("skipped: clone3 not available here\n");
		skip();
	}
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	snprintf(want, sizeof(want), "0::%s\n", dir + strlen(caps.v2_mount));
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strcmp(line, want) == 0)
			found = 1;
	fclose(fp);
	assert_true(found);
	kill((pid_t)pid, SIGKILL);
	st = wait_for((pid_t)pid);
	assert_true(WIFSIGNALED(st));
	drop(cg);
}

static void
test_bad_name(void **state)
{
	struct vg_cgroup_limits lim = { .memory = 0 };
	struct vg_cgroup *cg = (struct vg_cgroup *)&lim;
	struct vg_err e;
	char big[80];

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_new(&caps, &lim, "a/b", &cg, &e),
	    VG_EINVAL);
	assert_null(cg);
	assert_string_equal(e.msg, "cgroup name 'a/b' has '/' at offset 1: "
	    "only letters, digits, '.', '_' and '-' are valid");
	assert_int_equal(vg_cgroup_new(&caps, &lim, "", &cg, &e), VG_EINVAL);
	assert_string_equal(e.msg, "cgroup name '' must have 1 to 64 "
	    "characters");
	memset(big, 'x', 65);
	big[65] = '\0';
	assert_int_equal(vg_cgroup_new(&caps, &lim, big, &cg, &e),
	    VG_EINVAL);
	assert_int_equal(vg_cgroup_new(&caps, &lim, "..", &cg, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "cgroup name '..' is not a valid "
	    "directory name");
}

static void
test_bad_pids(void **state)
{
	struct vg_cgroup_limits lim = { .pids = VG_CGROUP_PIDS_MAX + 1 };
	struct vg_cgroup *cg;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_new(&caps, &lim, "t", &cg, &e), VG_EINVAL);
	assert_null(cg);
	assert_string_equal(e.msg, "pids limit 4194305 is over the kernel's "
	    "maximum: 1 to 4194304 are valid");
}

/* A host that cannot deliver: a downgrade, or a refusal when required. */
static void
test_missing(void **state)
{
	struct vg_cgroup_limits lim = { .memory = 64 * MiB, .pids = 10 };
	struct vg_cgroup_caps c;
	struct vg_cgroup *cg;
	struct vg_err e;

	(void)state;
	memset(&c, 0, sizeof(c));
	snprintf(c.why_memory, sizeof(c.why_memory), "no memory here");
	snprintf(c.why_pids, sizeof(c.why_pids), "no pids here");
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_new(&c, &lim, "t", &cg, &e), 0);
	assert_string_equal(vg_cgroup_downgrades(cg), "no cgroup memory "
	    "limit (no memory here); no cgroup pids limit (no pids here)");
	assert_int_equal(vg_cgroup_delivered(cg), 0);
	assert_int_equal(vg_cgroup_join_self(cg), 0);
	assert_int_equal(vg_cgroup_kill(cg, &e), 0);
	vg_cgroup_free(cg);
	lim.required = 1;
	lim.pids = 0;
	assert_int_equal(vg_cgroup_new(&c, &lim, "t", &cg, &e),
	    VG_EUNSUPPORTED);
	assert_null(cg);
	assert_string_equal(e.msg, "cgroup limits are required but this host "
	    "cannot deliver them: no cgroup memory limit (no memory here)");
}

/* A hierarchy directory where mkdir fails: VG_EIO naming the path, and
 * nothing left behind in the others. */
static void
test_mkdir_fails(void **state)
{
	struct vg_cgroup_limits lim = { .memory = 64 * MiB };
	struct vg_cgroup_caps c = caps;
	struct vg_cgroup *cg;
	struct vg_err e;
	char want[128];

	(void)state;
	if (!usable())
		skip();
	c.v2_memory = 0;
	snprintf(c.v1_memory, sizeof(c.v1_memory), "/proc/vigil-none");
	vg_err_init(&e);
	assert_int_equal(vg_cgroup_new(&c, &lim, "t", &cg, &e), VG_EIO);
	assert_null(cg);
	snprintf(want, sizeof(want), "cannot create cgroup '/proc/vigil-none/"
	    "vigil-%ld.", (long)getpid());
	assert_memory_equal(e.msg, want, strlen(want));
	assert_non_null(strstr(e.msg, "-t': No such file or directory"));
}

/*
 * As an unprivileged user nothing is writable: the probe says so, and a
 * required limit is refused with that reason.  Checked by a child that
 * drops to nobody ("probe unprivileged"); it exits 0 when every check
 * held.
 */
static int
probe_unprivileged(void)
{
	struct vg_cgroup_limits lim = { .memory = 64 * MiB, .required = 1 };
	struct vg_cgroup_caps c, root;
	struct vg_cgroup *cg;
	struct vg_err e;
	char want[1200];

	vg_cgroup_probe(&root);
	if (setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0)
		return 2;
	vg_cgroup_probe(&c);
	if (c.v2_mode != VG_CGROUP_V2_NONE || c.v1_memory[0] || c.v1_pids[0])
		return 3;
	if (root.v2_mode != VG_CGROUP_V2_NONE) {
		snprintf(want, sizeof(want), "our cgroup %s is not writable "
		    "by us", root.v2_self);
		if (strcmp(c.why_v2, want) != 0)
			return 4;
	}
	if (root.v1_memory[0] != '\0') {
		snprintf(want, sizeof(want), "%s; our v1 memory cgroup %s is "
		    "not writable", c.why_v2, root.v1_memory);
		if (strcmp(c.why_memory, want) != 0)
			return 5;
	}
	vg_err_init(&e);
	if (vg_cgroup_new(&c, &lim, "t", &cg, &e) != VG_EUNSUPPORTED)
		return 6;
	snprintf(want, sizeof(want), "cgroup limits are required but this "
	    "host cannot deliver them: no cgroup memory limit (%s)",
	    c.why_memory);
	return strcmp(e.msg, want) == 0 ? 0 : 7;
}

static void
test_unprivileged(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root to drop to nobody\n");
		skip();
	}
	if (!usable())
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(self, self, "probe", "unprivileged", "0", (char *)NULL);
		_exit(127);
	}
	st = wait_for(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The doctor lines name each limit and where it is delivered. */
static void
test_report(void **state)
{
	struct vg_cgroup_caps c;
	struct vg_buf out;
	char want[1200];

	(void)state;
	vg_buf_init(&out);
	vg_cgroup_report(&caps, &out);
	assert_memory_equal(vg_buf_str(&out), "cgroup: ", 8);
	if (caps.v1_memory[0] != '\0' && !caps.v2_memory) {
		snprintf(want, sizeof(want), "\ncgroup memory: ok (v1 at %s",
		    caps.v1_memory);
		assert_non_null(strstr(vg_buf_str(&out), want));
	}
	vg_buf_release(&out);

	memset(&c, 0, sizeof(c));
	snprintf(c.why_v2, sizeof(c.why_v2), "no cgroup2 file system "
	    "mounted");
	snprintf(c.why_memory, sizeof(c.why_memory), "m");
	snprintf(c.why_pids, sizeof(c.why_pids), "p");
	vg_buf_init(&out);
	vg_cgroup_report(&c, &out);
	assert_string_equal(vg_buf_str(&out),
	    "cgroup: v2 unusable (no cgroup2 file system mounted)\n"
	    "cgroup memory: missing (m): resources.memory is not enforced on "
	    "the local backend; run vigil in a delegated cgroup of its own "
	    "(systemd-run --scope -p Delegate=yes vigil ..., or a Slurm step "
	    "with cgroup/v2), or make the v1 hierarchy writable\n"
	    "cgroup pids: missing (p): limits.pids is not enforced on the "
	    "local backend; run vigil in a delegated cgroup of its own "
	    "(systemd-run --scope -p Delegate=yes vigil ..., or a Slurm step "
	    "with cgroup/v2), or make the v1 hierarchy writable\n");
	vg_buf_release(&out);
}

/* The manifest fields the local backend passes to vg_cgroup_new, and
 * their way through the stored JSON form. */
static void
test_manifest_fields(void **state)
{
	struct vg_load_opts opts = { .no_configs = 1 };
	struct vg_manifest *m = NULL, *back = NULL;
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf json;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_manifest_load("tests/data/manifests/good/"
	    "limits-cgroup.yaml", &opts, &m, &d, &e), 0);
	assert_int_equal(m->resources.memory, 2ULL << 30);
	assert_int_equal(m->limits.pids, 256);
	assert_int_equal(m->isolation.required, 1);
	vg_buf_init(&json);
	vg_manifest_to_json(m, &json);
	assert_int_equal(vg_manifest_from_json(vg_buf_str(&json), json.len,
	    &back, &e), 0);
	assert_int_equal(back->limits.pids, 256);
	vg_manifest_free(back);
	vg_manifest_free(m);
	vg_buf_release(&json);
	vg_diag_release(&d);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memory_oom, teardown),
		cmocka_unit_test_teardown(test_memory_within_limit, teardown),
		cmocka_unit_test_teardown(test_pids_limit, teardown),
		cmocka_unit_test_teardown(test_kill_setsid_grandchild, teardown),
		cmocka_unit_test_teardown(test_kill_setsid_grandchild_v1, teardown),
		cmocka_unit_test_teardown(test_free_removes, teardown),
		cmocka_unit_test_teardown(test_fds, teardown),
		cmocka_unit_test_teardown(test_clone_into_cgroup, teardown),
		cmocka_unit_test_teardown(test_bad_name, teardown),
		cmocka_unit_test_teardown(test_bad_pids, teardown),
		cmocka_unit_test_teardown(test_missing, teardown),
		cmocka_unit_test_teardown(test_mkdir_fails, teardown),
		cmocka_unit_test_teardown(test_unprivileged, teardown),
		cmocka_unit_test_teardown(test_report, teardown),
		cmocka_unit_test_teardown(test_manifest_fields, teardown),
	};

	ssize_t n;

	/* _exit: LeakSanitizer's exit-time thread would count against
	 * pids.max. */
	if (argc == 4 && strcmp(argv[1], "probe") == 0)
		_exit(probe_main(argv[2], argv[3]));
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	self[n] = '\0';
	vg_cgroup_probe(&caps);
	vg_cgroup_probe(&caps_v1);
	caps_v1.v2_mode = VG_CGROUP_V2_NONE;
	caps_v1.v2_memory = caps_v1.v2_pids = 0;
	return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
