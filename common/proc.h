/*
 * proc.h - process helpers shared by the backends and the schedulers:
 * pidfd wrappers (through syscall(2), so they work with any libc), the
 * identity of a process across a vigil restart (pid plus the start time
 * from /proc/PID/stat), and fd helpers.
 *
 * Functions marked "async-signal-safe" only make system calls and may be
 * used between fork and exec.
 */
#ifndef VG_PROC_H
#define VG_PROC_H

#include <sys/types.h>

/* Like pidfd_open(2); returns a new O_CLOEXEC fd or -1 with errno set. */
int	vg_pidfd_open(pid_t pid);

/* Like pidfd_send_signal(2) with no siginfo; 0 or -1 with errno set.
 * Async-signal-safe. */
int	vg_pidfd_send_signal(int pidfd, int sig);
/* Signals a child of ours by its pidfd (pidfd < 0: by pid), falling back
 * to kill(2) where pidfd_send_signal(2) is not there (ENOSYS: kernels
 * before 5.1, valgrind 3.19); an unreaped child's pid is not reused.
 * 0, or -1 with errno. */
int	vg_proc_signal(int pidfd, pid_t pid, int sig);

/*
 * Reads field 22 (starttime, clock ticks since boot) of /proc/PID/stat
 * into *out.  Returns 0, or -1 with errno set (ENOENT: no such process).
 */
int	vg_proc_starttime(pid_t pid, unsigned long long *out);

/*
 * True when process pid exists and started at start (as returned by
 * vg_proc_starttime), i.e. it is the same process and not a later one
 * that reused the pid.  Zombies count as not alive.
 */
int	vg_proc_alive(pid_t pid, unsigned long long start);

/*
 * vg_proc_alive, and the process runs the program file exe (NULL: the
 * same file as this process; compared by device and inode, so another
 * path to it counts).  For pids read from files another program could
 * have written (a session's job records, which the sandbox can write):
 * vigil signals only its own processes.  A process whose file was
 * replaced since it started (an upgrade) counts when its program's name
 * is exe's (or this program's).
 */
int	vg_proc_runs(pid_t pid, unsigned long long start, const char *exe);

/* Sets FD_CLOEXEC / O_NONBLOCK on fd; 0 or -1 with errno set. */
int	vg_fd_cloexec(int fd);
int	vg_fd_nonblock(int fd);

/*
 * Opens /dev/null on whichever of fds 0, 1 and 2 is closed, so a
 * descriptor vigil opens later (a directory, a database) is never taken
 * for standard input or output by code that writes or replaces those.
 * 0, or -1 with errno set.
 */
int	vg_std_fds_open(void);

/*
 * Closes every fd >= lowfd except the nkeep fds in keep (any order).
 * Uses close_range(2), and a loop over the open fds where that is
 * missing.  Async-signal-safe.
 */
void	vg_close_from(int lowfd, const int *keep, int nkeep);

/*
 * Like fork(2) through clone3(2) with CLONE_PIDFD and the extra namespace
 * flags in flags: returns the pid in the parent with *pidfd set, 0 in the
 * child, -1 with errno set on failure.  The child skips the C library's
 * fork handlers, so it must only make system calls (no malloc, no stdio,
 * no raise/abort) until it execs or exits with _exit(2).
 */
pid_t	vg_clone_pidfd(unsigned long long flags, int *pidfd);

/* getpid(2), read once per process (forgotten in a child of fork(2) and
 * of vg_clone_pidfd): the pools ask it several times per task. */
pid_t	vg_self_pid(void);

/* geteuid(2), read once: vigil never changes its user, and the pools
 * check the owner of every directory they keep. */
uid_t	vg_self_euid(void);

/* gethostname(2), read once ("localhost" when it has none): with the
 * pid it names a process across the hosts of a shared file system. */
const char *vg_self_host(void);

#endif
