/*
 * sup-attack.c - built by the s04xx tests: a task that goes for the
 * process supervising it, pid 1 of its PID namespace (vigil-shim, or a
 * slot's executor).
 *
 *   sup-attack probe   ptrace, pidfd_getfd, /proc/1/mem, /proc/1/fd,
 *                      process_vm_readv; prints "REACHED how" for each
 *                      that works, exits 3
 *   sup-attack forge   takes pid 1's descriptors and sends on each a
 *                      report of a task that succeeded; exits 3
 *   sup-attack stop    a grandchild left behind stops pid 1 (ptrace
 *                      attach, SIGSTOP) and holds it; exits 4 at once
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif

/* The shape of vigil-shim's report (kind 1: the task ran, wstatus). */
struct report {
	int32_t		kind, err, wstatus, tmp_gone;
	char		stage[40], detail[160];
	uint64_t	utime, stime, maxrss;
};

/* Takes descriptor fd of the process of pidfd pfd, or -1. */
static int
getfd(int pfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
}

/* Tries every way into pid 1; says which worked. */
static void
probe(void)
{
	char buf[64], path[64];
	struct iovec local = { buf, sizeof(buf) }, remote;
	int pfd, fd, f;

	if (ptrace(PTRACE_ATTACH, 1, 0, 0) == 0) {
		printf("REACHED ptrace\n");
		ptrace(PTRACE_DETACH, 1, 0, 0);
	}
	if ((pfd = (int)syscall(SYS_pidfd_open, 1, 0)) >= 0)
		for (fd = 0; fd < 16; fd++)
			if ((f = getfd(pfd, fd)) >= 0) {
				printf("REACHED pidfd_getfd %d\n", fd);
				close(f);
			}
	if ((f = open("/proc/1/mem", O_RDONLY)) >= 0)
		printf("REACHED /proc/1/mem\n");
	for (fd = 0; fd < 16; fd++) {
		snprintf(path, sizeof(path), "/proc/1/fd/%d", fd);
		if (readlink(path, buf, sizeof(buf)) > 0)
			printf("REACHED %s\n", path);
	}
	remote.iov_base = (void *)0x400000;
	remote.iov_len = sizeof(buf);
	if (process_vm_readv(1, &local, 1, &remote, 1, 0) > 0 ||
	    errno == EFAULT)
		printf("REACHED process_vm_readv\n");
	fflush(stdout);
	_exit(3);
}

/* Sends a forged "succeeded" report on each of pid 1's descriptors. */
static void
forge(void)
{
	struct report r;
	int pfd, fd, f;

	memset(&r, 0, sizeof(r));
	r.kind = 1;
	if ((pfd = (int)syscall(SYS_pidfd_open, 1, 0)) >= 0)
		for (fd = 0; fd < 16; fd++)
			if ((f = getfd(pfd, fd)) >= 0 &&
			    send(f, &r, sizeof(r), MSG_NOSIGNAL) > 0)
				printf("forged on %d\n", fd);
	fflush(stdout);
	_exit(3);
}

/* Leaves a process behind that stops pid 1; exits 4. */
static void
stop(void)
{
	pid_t p = fork();

	if (p == 0) {
		setsid();
		(void)ptrace(PTRACE_ATTACH, 1, 0, 0);
		kill(1, SIGSTOP);
		kill(1, SIGTSTP);
		sleep(40);
		_exit(0);
	}
	usleep(200000);
	_exit(4);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "probe") == 0)
		probe();
	if (argc > 1 && strcmp(argv[1], "forge") == 0)
		forge();
	if (argc > 1 && strcmp(argv[1], "stop") == 0)
		stop();
	fprintf(stderr, "usage: sup-attack probe|forge|stop\n");
	return 2;
}
