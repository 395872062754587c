/*
 * test-proc.c - pidfds, clone3, /proc start times and fd helpers, on the
 * real kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc.h"

static void
test_starttime_and_alive(void **state)
{
	unsigned long long me, child;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(vg_proc_starttime(getpid(), &me), 0);
	assert_true(me > 0);
	assert_true(vg_proc_alive(getpid(), me));
	/* Same pid, other start time: a reused pid is not our process. */
	assert_false(vg_proc_alive(getpid(), me + 1));
	assert_false(vg_proc_alive(0, me));
	errno = 0;
	assert_int_equal(vg_proc_starttime(999999999, &child), -1);
	assert_int_equal(errno, ENOENT);

	pid = fork();
	if (pid == 0)
		_exit(0);
	assert_int_equal(vg_proc_starttime(pid, &child), 0);
	assert_true(child >= me);
	/* A zombie is not alive. */
	while (vg_proc_alive(pid, child))
		usleep(1000);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_false(vg_proc_alive(pid, child));
}

/* vg_proc_runs: alive with that start time and running that program. */
static void
test_proc_runs(void **state)
{
	unsigned long long me, st;
	pid_t pid;
	int ws;

	(void)state;
	assert_int_equal(vg_proc_starttime(getpid(), &me), 0);
	assert_true(vg_proc_runs(getpid(), me, NULL));
	assert_true(vg_proc_runs(getpid(), me, "/proc/self/exe"));
	assert_false(vg_proc_runs(getpid(), me + 1, NULL));
	assert_false(vg_proc_runs(getpid(), me, "/bin/sh"));
	pid = fork();
	if (pid == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	/* Until the exec, the child runs this program. */
	do {
		usleep(1000);
		assert_int_equal(vg_proc_starttime(pid, &st), 0);
	} while (vg_proc_runs(pid, st, NULL));
	assert_true(vg_proc_runs(pid, st, "/bin/sleep"));
	assert_false(vg_proc_runs(pid, st, NULL));
	assert_false(vg_proc_runs(pid, st, "/no/such/program"));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_false(vg_proc_runs(pid, st, "/bin/sleep"));
}

static void
test_pidfd(void **state)
{
	struct pollfd pfd;
	siginfo_t si;
	pid_t pid;
	int fd;

	(void)state;
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	fd = vg_pidfd_open(pid);
	if (fd < 0 && errno == ENOSYS) {
		/* valgrind 3.19 does not know pidfd_open */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		printf("skipped: pidfd_open(2) is not available here (ENOSYS)\n");
		skip();
	}
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	pfd.fd = fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(vg_pidfd_send_signal(fd, SIGTERM), 0);
	/* Readable once the process exited, before it is reaped. */
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
	assert_int_equal(si.si_code, CLD_KILLED);
	assert_int_equal(si.si_status, SIGTERM);
	/* Signalling a reaped process fails with ESRCH. */
	assert_int_equal(vg_pidfd_send_signal(fd, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
	close(fd);
	assert_int_equal(vg_pidfd_open(-5), -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_clone_pidfd(void **state)
{
	int fd = -1, st;
	pid_t pid;

	(void)state;
	pid = vg_clone_pidfd(0, &fd);
	if (pid == 0)
		_exit(7);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	if (fd < 0) {
		/* valgrind: clone(2) fallback without pidfd_open */
		assert_int_equal(vg_pidfd_open(getpid()), -1);
		assert_int_equal(errno, ENOSYS);
		return;
	}
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* Invalid flag combination (CLONE_NEWPID with CLONE_THREAD). */
	assert_int_equal(vg_clone_pidfd(0x20000000ULL | 0x00010000ULL, &fd),
	    -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_fd_helpers(void **state)
{
	int p[2], keep[2], st;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(vg_fd_cloexec(p[0]), 0);
	assert_true(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(vg_fd_nonblock(p[0]), 0);
	assert_true(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	assert_int_equal(vg_fd_cloexec(-1), -1);
	assert_int_equal(vg_fd_nonblock(-1), -1);

	pid = fork();
	if (pid == 0) {
		int extra = dup(p[0]);

		keep[0] = p[1];
		keep[1] = 1;
		vg_close_from(0, keep, 2);
		/* p[1] and stdout stay, stdin, p[0] and extra are gone. */
		_exit((fcntl(p[1], F_GETFD) >= 0 ? 1 : 0) |
		    (fcntl(1, F_GETFD) >= 0 ? 2 : 0) |
		    (fcntl(0, F_GETFD) < 0 ? 4 : 0) |
		    (fcntl(p[0], F_GETFD) < 0 ? 8 : 0) |
		    (fcntl(extra, F_GETFD) < 0 ? 16 : 0));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(WEXITSTATUS(st), 31);
	close(p[0]);
	close(p[1]);
}

/*
 * A process started with standard descriptors closed gets /dev/null on
 * each, so the next descriptor it opens is 3 or above (a directory
 * opened as fd 0 was once closed as a "descriptor never opened").
 */
static void
test_std_fds_open(void **state)
{
	struct stat st, nul;
	pid_t pid;
	int status, fd, i;

	(void)state;
	assert_int_equal(stat("/dev/null", &nul), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)close(0);
		(void)close(2);
		if (vg_std_fds_open() != 0)
			_exit(10);
		for (i = 0; i < 3; i += 2)
			if (fstat(i, &st) != 0 || st.st_rdev != nul.st_rdev ||
			    !S_ISCHR(st.st_mode))
				_exit(11 + i);
		if ((fd = open("/", O_RDONLY | O_DIRECTORY)) < 3)
			_exit(14);
		/* all open already: nothing changes */
		if (vg_std_fds_open() != 0 || open("/", O_RDONLY) != fd + 1)
			_exit(15);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starttime_and_alive),
		cmocka_unit_test(test_proc_runs),
		cmocka_unit_test(test_pidfd),
		cmocka_unit_test(test_clone_pidfd),
		cmocka_unit_test(test_fd_helpers),
		cmocka_unit_test(test_std_fds_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
