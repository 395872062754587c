/*
 * proc.c - pidfds, /proc start times and fd helpers.
 *
 * The pidfd calls go through syscall(2): glibc only wraps them since 2.36
 * and vigil builds against older C libraries too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sched.h>

#include "common/proc.h"
#include "common/str.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

int
vg_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int
vg_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int
vg_proc_signal(int pidfd, pid_t pid, int sig)
{
	if (pidfd >= 0) {
		if (vg_pidfd_send_signal(pidfd, sig) == 0)
			return 0;
		if (errno != ENOSYS)
			return -1;
	}
	return kill(pid, sig);
}

/* Reads /proc/PID/stat and returns the state letter and start time. */
static int
read_stat(pid_t pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = n == 0 ? ESRCH : errno;
		return -1;
	}
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields that follow start after the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ') {
		errno = EINVAL;
		return -1;
	}
	p += 2;
	*state = *p;
	for (field = 3; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	if (field != 22) {
		errno = EINVAL;
		return -1;
	}
	*start = strtoull(p, NULL, 10);
	return 0;
}

int
vg_proc_starttime(pid_t pid, unsigned long long *out)
{
	char state;

	return read_stat(pid, &state, out);
}

int
vg_proc_alive(pid_t pid, unsigned long long start)
{
	unsigned long long s;
	char state;

	if (pid <= 0 || read_stat(pid, &state, &s) != 0)
		return 0;
	return s == start && state != 'Z' && state != 'X';
}

/* The name of a link target without " (deleted)"; in buf. */
static const char *
exe_name(const char *target, char *buf, size_t size)
{
	const char *slash = strrchr(target, '/');
	size_t n;

	vg_strlcpy(buf, slash != NULL ? slash + 1 : target, size);
	n = strlen(buf);
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n - 10] = '\0';
	return buf;
}

int
vg_proc_runs(pid_t pid, unsigned long long start, const char *exe)
{
	char link[64], target[PATH_MAX], self[PATH_MAX], a[256], b[256];
	struct stat sp, se;
	ssize_t n;

	if (!vg_proc_alive(pid, start))
		return 0;
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)pid);
	if (stat(link, &sp) != 0)
		return 0;
	if (stat(exe != NULL ? exe : "/proc/self/exe", &se) == 0 &&
	    sp.st_dev == se.st_dev && sp.st_ino == se.st_ino)
		return 1;
	/* Replaced since it started: the same program by name. */
	if ((n = readlink(link, target, sizeof(target) - 1)) <= 0)
		return 0;
	target[n] = '\0';
	if (strstr(target, " (deleted)") == NULL)
		return 0;
	if (exe == NULL) {
		if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
			return 0;
		self[n] = '\0';
		exe = self;
	}
	return strcmp(exe_name(target, a, sizeof(a)),
	    exe_name(exe, b, sizeof(b))) == 0;
}

int
vg_fd_cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int
vg_fd_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Closes [lo, hi] with close_range(2) or, without it, one by one. */
static void
close_span(int lo, int hi)
{
	int fd;

	if (lo > hi)
		return;
	if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0) == 0)
		return;
	/* Before Linux 5.9: bound the loop by a sane fd limit. */
	if (hi > 65535)
		hi = 65535;
	for (fd = lo; fd <= hi; fd++)
		close(fd);
}

int
vg_std_fds_open(void)
{
	int fd;

	while (fcntl(0, F_GETFD) < 0 || fcntl(1, F_GETFD) < 0 ||
	    fcntl(2, F_GETFD) < 0) {
		/* The lowest free descriptor: one of the three. */
		if ((fd = open("/dev/null", O_RDWR | O_NOCTTY)) < 0)
			return -1;
		if (fd > 2) {
			(void)close(fd);
			errno = EBADF;
			return -1;
		}
	}
	return 0;
}

void
vg_close_from(int lowfd, const int *keep, int nkeep)
{
	int lo = lowfd, next, i;

	for (;;) {
		/* The smallest kept fd at or above lo, without sorting
		 * (no allocation: this runs between fork and exec). */
		next = -1;
		for (i = 0; i < nkeep; i++)
			if (keep[i] >= lo && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0) {
			close_span(lo, 0x7fffffff);
			return;
		}
		close_span(lo, next - 1);
		lo = next + 1;
	}
}

/* This process's pid, once read (0: not yet, or forgotten by a child). */
static pid_t self_pid;

static void
self_forget(void)
{
	self_pid = 0;
}

pid_t
vg_self_pid(void)
{
	static int hooked;

	if (self_pid == 0) {
		if (!hooked) {
			hooked = 1;
			(void)pthread_atfork(NULL, NULL, self_forget);
		}
		self_pid = getpid();
	}
	return self_pid;
}

uid_t
vg_self_euid(void)
{
	static uid_t euid;
	static int read_once;

	if (!read_once) {
		euid = geteuid();
		read_once = 1;
	}
	return euid;
}

const char *
vg_self_host(void)
{
	static char host[256];

	if (host[0] == '\0' && (gethostname(host, sizeof(host) - 1) != 0 ||
	    host[0] == '\0'))
		vg_strlcpy(host, "localhost", sizeof(host));
	return host;
}

pid_t
vg_clone_pidfd(unsigned long long flags, int *pidfd)
{
	struct clone_args ca;
	int fd = -1;
	pid_t pid;

	memset(&ca, 0, sizeof(ca));
	ca.flags = flags | CLONE_PIDFD;
	ca.pidfd = (unsigned long long)(unsigned long)&fd;
	ca.exit_signal = SIGCHLD;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0 && errno == ENOSYS) {
		/* Before Linux 5.3 (or under valgrind): clone(2) with the
		 * fork-like argument list, which is the same on every
		 * architecture when the pointers are NULL; then pidfd_open
		 * (-1 before 5.3: the caller falls back to waitpid). */
		pid = (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD,
		    NULL, NULL, NULL, NULL);
		if (pid > 0)
			fd = vg_pidfd_open(pid);
	}
	if (pid > 0)
		*pidfd = fd;
	else if (pid == 0)
		self_pid = 0;	/* no fork handlers ran */
	return pid;
}
