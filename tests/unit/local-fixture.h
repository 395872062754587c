/*
 * local-fixture.h - shared by the local backend and sandbox tests: a
 * manifest and task built in memory, a private task directory, helpers
 * to run an attempt through the backend API and to read its output, and
 * the probe mode in which the test binary itself runs as the task
 * ("TEST --probe WHAT ARGS...") to report errno values from inside.
 */
#ifndef LOCAL_FIXTURE_H
#define LOCAL_FIXTURE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/local.h"
#include "common/path.h"
#include "common/proc.h"

struct fx {
	struct vg_manifest	m;
	struct vg_task		t;
	struct vg_attempt	a;
	char			dir[64];	/* task directory */
	char			self[4096];	/* this test binary */
	struct vg_result	r;
	struct vg_err		e;
};

/* The copy of this test binary that probes run when the binary lies
 * under /tmp, which a task's private /tmp hides (strict without Landlock,
 * as under valgrind); removed at exit. */
static char fx_self_copy[4096];

/* Removes the copy and its directory. */
static __attribute__((unused)) void
fx_self_copy_rm(void)
{
	char *slash;

	if (fx_self_copy[0] == '\0')
		return;
	unlink(fx_self_copy);
	if ((slash = strrchr(fx_self_copy, '/')) != NULL) {
		*slash = '\0';
		rmdir(fx_self_copy);
	}
}

/* Points self at a copy outside /tmp when it lies under /tmp. */
static __attribute__((unused)) void
fx_self_outside_tmp(char *self, size_t size)
{
	char dir[] = "/var/tmp/vg-self-XXXXXX";
	struct vg_buf b = VG_BUF_INIT;
	int fd;

	if (strncmp(self, "/tmp/", 5) != 0)
		return;
	if (fx_self_copy[0] == '\0') {
		if (mkdtemp(dir) == NULL ||
		    vg_read_file(self, 1 << 30, &b, NULL) != 0)
			abort();
		snprintf(fx_self_copy, sizeof(fx_self_copy), "%s/self", dir);
		fd = open(fx_self_copy, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0755);
		if (fd < 0 || vg_write_all(fd, b.data, b.len) != 0)
			abort();
		close(fd);
		vg_buf_release(&b);
		atexit(fx_self_copy_rm);
	}
	snprintf(self, size, "%s", fx_self_copy);
}

/* Creates the fixture: level, a fresh task directory, no command. */
static __attribute__((unused)) struct fx *
fx_new(enum vg_isolation_level level)
{
	struct fx *f = vg_xcalloc(1, sizeof(*f));
	ssize_t n;

	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		abort();
	n = readlink("/proc/self/exe", f->self, sizeof(f->self) - 1);
	if (n > 0)
		f->self[n] = '\0';
	fx_self_outside_tmp(f->self, sizeof(f->self));
	f->m.isolation.level = level;
	f->m.kill_grace = 1;
	f->t.index = 3;
	f->a.m = &f->m;
	f->a.task = &f->t;
	f->a.run_id = "r1";
	f->a.task_dir = f->dir;
	f->a.attempt = 1;
	f->a.kill_grace = 1;
	f->a.pidfd = -1;
	vg_err_init(&f->e);
	return f;
}

/* Frees what fx_new made and removes the task directory. */
static __attribute__((unused)) void
fx_free(struct fx *f)
{
	size_t i;

	if (f == NULL)
		return;
	vg_rm_rf(f->dir, NULL);
	free(f->m.command.shell);
	vg_strv_release(&f->m.command.argv);
	free(f->t.command.shell);
	vg_strv_release(&f->t.command.argv);
	for (i = 0; i < f->t.env.n; i++) {
		free(f->t.env.v[i].key);
		free(f->t.env.v[i].value);
	}
	free(f->t.env.v);
	vg_strv_release(&f->m.isolation.writable);
	vg_strv_release(&f->m.isolation.readable);
	free(f);
}

/* Sets a shell command. */
static __attribute__((unused)) void
fx_sh(struct fx *f, const char *cmd)
{
	free(f->t.command.shell);
	f->t.command.is_argv = 0;
	f->t.command.shell = vg_xstrdup(cmd);
}

/* Sets an argv command (NULL-terminated arguments). */
static __attribute__((unused)) void
fx_argv(struct fx *f, const char *arg0, ...)
{
	const char *s;
	va_list ap;

	vg_strv_release(&f->t.command.argv);
	memset(&f->t.command.argv, 0, sizeof(f->t.command.argv));
	f->t.command.is_argv = 1;
	va_start(ap, arg0);
	for (s = arg0; s != NULL; s = va_arg(ap, const char *))
		vg_strv_push(&f->t.command.argv, s);
	va_end(ap);
}

/* Runs this test binary as the task in probe mode. */
static __attribute__((unused)) void
fx_probe(struct fx *f, const char *what, const char *arg)
{
	fx_argv(f, f->self, "--probe", what, arg, (const char *)NULL);
}

/* Adds an env entry to the task. */
static __attribute__((unused)) void
fx_env(struct fx *f, const char *k, const char *v)
{
	struct vg_kvs *kv = &f->t.env;

	kv->v = vg_xgrow(kv->v, &kv->cap, kv->n + 1, sizeof(kv->v[0]));
	memset(&kv->v[kv->n], 0, sizeof(kv->v[0]));
	kv->v[kv->n].key = vg_xstrdup(k);
	kv->v[kv->n].value = vg_xstrdup(v);
	kv->n++;
}

/* Starts, waits (as a scheduler does: poll the pidfd, then reap) and
 * finishes the attempt; returns vg_backend_start's code. */
static __attribute__((unused)) int
fx_run(struct fx *f)
{
	struct pollfd pfd;
	int rc, ws;

	vg_err_init(&f->e);
	memset(&f->r, 0, sizeof(f->r));
	rc = vg_backend_start(&vg_backend_local, &f->a, &f->e);
	if (rc != 0)
		return rc;
	/* No pidfd under valgrind 3.19: then waitpid alone. */
	pfd.fd = f->a.pidfd;
	pfd.events = POLLIN;
	while (f->a.pidfd >= 0 && poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	if (waitpid(f->a.pid, &ws, 0) != f->a.pid)
		abort();
	rc = vg_backend_finish(&f->a, ws, &f->r, &f->e);
	vg_backend_cleanup(&f->a);
	return rc;
}

/* True when this kernel (and any valgrind around us) has pidfds. */
static __attribute__((unused)) int
fx_have_pidfd(void)
{
	int fd = vg_pidfd_open(getpid());

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* Waits up to ms for the watched process to exit, without reaping it:
 * through the pidfd as a scheduler does, or waitid(WNOWAIT) without. */
static __attribute__((unused)) int
fx_wait_exit(struct fx *f, int ms)
{
	struct pollfd pfd;
	siginfo_t si;

	if (f->a.pidfd >= 0) {
		pfd.fd = f->a.pidfd;
		pfd.events = POLLIN;
		return poll(&pfd, 1, ms) == 1;
	}
	for (; ms > 0; ms -= 10) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)f->a.pid, &si,
		    WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Removes the task's output files (the next attempt appends). */
static __attribute__((unused)) void
fx_unlink_output(struct fx *f)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/stdout", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stderr", f->dir);
	unlink(path);
}

/* Reads a file of the task directory into a static buffer. */
static __attribute__((unused)) const char *
fx_read(struct fx *f, const char *name)
{
	static char buf[65536];
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY)) < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* True while a process whose command line holds marker exists. */
static __attribute__((unused)) int
fx_marker_alive(const char *marker)
{
	char path[300], buf[512];
	struct dirent *d;
	ssize_t n, i;
	DIR *dir;
	int fd, found = 0;

	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while (!found && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;	/* zombie or kernel thread */
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		found = strstr(buf, marker) != NULL;
	}
	closedir(dir);
	return found;
}

/* Prints the outcome of one probe: "ok" or the errno name. */
static __attribute__((unused)) int
fx_report(int rc)
{
	printf("%s\n", rc == 0 ? "ok" : strerrorname_np(errno));
	return 0;
}

/* Connects a TCP socket to 127.0.0.1:port. */
static __attribute__((unused)) int
fx_connect(int port)
{
	struct sockaddr_in sa;
	int fd, rc;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc;
}

/* Opens a TCP listener on 127.0.0.1 (any port); returns fd, *port. */
static __attribute__((unused)) int
fx_listen(int *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Probe mode: runs inside the task and prints what happened. */
static __attribute__((unused)) int
fx_probe_main(int argc, char **argv)
{
	const char *what = argv[2], *arg = argc > 3 ? argv[3] : "";
	struct rlimit rl;
	int fd, port;

	if (strcmp(what, "write") == 0) {
		fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		return fx_report(fd < 0 ? -1 : 0);
	}
	if (strcmp(what, "read") == 0) {
		fd = open(arg, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return fx_report(fd < 0 ? -1 : 0);
	}
	if (strcmp(what, "mount") == 0)
		return fx_report(mount("none", arg, "tmpfs", 0, NULL));
	if (strcmp(what, "reboot") == 0)	/* bad magic: never reboots */
		return fx_report((int)syscall(SYS_reboot, 0, 0, 0, NULL));
	if (strcmp(what, "kill") == 0)
		return fx_report(kill(atoi(arg), 0));
	if (strcmp(what, "connect") == 0)
		return fx_report(fx_connect(atoi(arg)));
	if (strcmp(what, "loopback") == 0) {
		if ((fd = fx_listen(&port)) < 0)
			return fx_report(-1);
		return fx_report(fx_connect(port));
	}
	if (strcmp(what, "traceme") == 0) {
		/* Leak checkers refuse to run traced: leave at once. */
		fx_report((int)ptrace(PTRACE_TRACEME, 0, NULL, NULL));
		fflush(stdout);
		_exit(0);
	}
	if (strcmp(what, "nofile") == 0) {
		getrlimit(RLIMIT_NOFILE, &rl);
		printf("%llu\n", (unsigned long long)rl.rlim_cur);
		return 0;
	}
	if (strcmp(what, "tmpdir") == 0) {
		printf("%s\n", getenv("TMPDIR") ? getenv("TMPDIR") : "");
		return 0;
	}
#if defined(__x86_64__)
	if (strcmp(what, "x32") == 0)	/* getpid through the x32 ABI */
		return fx_report((int)syscall(0x40000000 | SYS_getpid));
#endif
	fprintf(stderr, "unknown probe '%s'\n", what);
	return 2;
}

#endif
