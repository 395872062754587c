/*
 * leftover.c - processes of a run found through /proc: start times for
 * pid identity, environment markers for whole-tree kills.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "runner/core/leftover.h"

/* Environments larger than this are not searched (ARG_MAX is 2 MiB). */
#define ENVIRON_MAX	(2 * 1024 * 1024)

int
vg_pid_start_time(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return VG_ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return VG_ENOENT;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: fields start after the
	 * last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return VG_EPARSE;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return VG_ENOENT;
	for (field = 3; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || sscanf(p, "%llu", &v) != 1)
		return VG_EPARSE;
	*start = v;
	return 0;
}

int
vg_pid_is(pid_t pid, unsigned long long start)
{
	unsigned long long now;

	if (pid <= 0)
		return 0;
	if (vg_pid_start_time(pid, &now) != 0)
		return 0;
	return start == 0 || now == start;
}

/* True when the NUL-separated environment env holds the exact entry. */
static int
env_has(const char *env, size_t len, const char *entry)
{
	size_t el = strlen(entry), off = 0, l;

	while (off < len) {
		l = strnlen(env + off, len - off);
		if (l == el && memcmp(env + off, entry, el) == 0)
			return 1;
		off += l + 1;
	}
	return 0;
}

/* Reads /proc/PID/environ into b; returns 0 on success. */
static int
read_environ(const char *pid, struct vg_buf *b)
{
	char path[64], chunk[8192];
	ssize_t n;
	int fd;

	vg_buf_reset(b);
	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		vg_buf_add(b, chunk, (size_t)n);
		if (b->len > ENVIRON_MAX)
			break;
	}
	close(fd);
	return 0;
}

/* One sweep: sends sig to every match; returns how many matched. */
static int
sweep(const char *run_entry, const char *task_entry, int sig)
{
	struct vg_buf env = VG_BUF_INIT;
	struct dirent *de;
	pid_t pid, self = getpid(), parent = getppid();
	DIR *d;
	int n = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)atol(de->d_name);
		if (pid == self || pid == parent)
			continue;
		if (read_environ(de->d_name, &env) != 0 || env.len == 0)
			continue;
		if (!env_has(env.data, env.len, run_entry))
			continue;
		if (task_entry != NULL &&
		    !env_has(env.data, env.len, task_entry))
			continue;
		if (kill(pid, sig) == 0)
			n++;
	}
	closedir(d);
	vg_buf_release(&env);
	return n;
}

int
vg_kill_leftovers(const char *run_id, int index, int *killed,
    struct vg_err *e)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	char *run_entry, *task_entry = NULL;
	int round, n, total = 0;

	if (killed != NULL)
		*killed = 0;
	if (run_id == NULL || *run_id == '\0')
		return vg_err_set(e, VG_EINVAL, "no run id to look for");
	run_entry = vg_xasprintf("VIGIL_RUN_ID=%s", run_id);
	if (index >= 0)
		task_entry = vg_xasprintf("VIGIL_TASK_INDEX=%d", index);
	/* Freeze first so that a forking tree cannot outrun the sweep,
	 * then kill; killed processes become zombies (or vanish) and stop
	 * matching.  A few rounds catch children forked mid-sweep. */
	for (round = 0; round < 10; round++) {
		if (sweep(run_entry, task_entry, SIGSTOP) == 0)
			break;
		n = sweep(run_entry, task_entry, SIGKILL);
		total += n;
		nanosleep(&pause, NULL);
	}
	free(run_entry);
	free(task_entry);
	if (killed != NULL)
		*killed = total;
	return 0;
}
