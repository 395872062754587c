/*
 * cluster.c - what the cluster schedulers share (schedulers/cluster.h):
 * the command runner, array specs, records set aside, merging a record
 * with the scheduler's verdict and usage, the poll pacer, intent lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "common/str.h"
#include "schedulers/cluster.h"

extern char **environ;

/* Bytes of a command's output kept. */
#define OUT_MAX		(64u << 20)

/* Reads what is ready on fd into b; sets *open to 0 on EOF. */
static void
drain(int fd, struct vg_buf *b, int *open)
{
	char buf[8192];
	ssize_t n;

	n = read(fd, buf, sizeof buf);
	if (n > 0) {
		if (b->len + (size_t)n <= OUT_MAX)
			vg_buf_add(b, buf, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		*open = 0;
}

int
vg_cluster_cmd(const char *const *argv, struct vg_buf *out,
    struct vg_buf *err, int timeout_ms, int (*transient)(const char *msg),
    struct vg_err *e)
{
	struct vg_buf lout = VG_BUF_INIT;
	char *const *av;
	posix_spawn_file_actions_t fa;
	struct vg_buf lerr = VG_BUF_INIT;
	struct pollfd pfd[2];
	int op[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int oopen = 1, eopen = 1, st, r, timed_out = 0;
	long long deadline;
	const char *msg;
	pid_t pid;
	size_t len;

	if (err == NULL)
		err = &lerr;
	if (out == NULL)
		out = &lout;
	/* posix_spawnp's argv is char *const[] for history's sake; it does
	 * not write to the strings. */
	memcpy(&av, &argv, sizeof av);
	if (pipe2(op, O_CLOEXEC) != 0 || pipe2(ep, O_CLOEXEC) != 0) {
		r = vg_err_errno(e, "pipe for '%s'", argv[0]);
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(op[1]);
	close(ep[1]);
	op[1] = ep[1] = -1;
	if (r != 0) {
		errno = r;
		r = vg_err_errno(e, "running '%s'", argv[0]);
		goto out;
	}
	deadline = vg_mono_ms() + timeout_ms;
	while (oopen || eopen) {
		long long left = deadline - vg_mono_ms();

		if (left <= 0) {
			timed_out = 1;
			kill(pid, SIGKILL);
			break;
		}
		pfd[0] = (struct pollfd){ .fd = oopen ? op[0] : -1,
		    .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = eopen ? ep[0] : -1,
		    .events = POLLIN };
		if (poll(pfd, 2, (int)(left > INT_MAX ? INT_MAX : left)) < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			timed_out = 1;
			break;
		}
		if (pfd[0].revents != 0)
			drain(op[0], out, &oopen);
		if (pfd[1].revents != 0)
			drain(ep[0], err, &eopen);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			r = vg_err_errno(e, "waiting for '%s'", argv[0]);
			goto out;
		}
	if (timed_out) {
		r = vg_err_set(e, VG_EAGAIN, "'%s' timed out after %d ms",
		    argv[0], timeout_ms);
		goto out;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		r = 0;
		goto out;
	}
	/* The first line of stderr is Slurm's message; keep it whole.  A
	 * command silent on stderr said why on stdout (Grid Engine's qdel
	 * prints "denied: job ... does not exist" there). */
	msg = vg_buf_str(err);
	if (strspn(msg, " \t\n") == strlen(msg))
		msg = vg_buf_str(out);
	len = strcspn(msg, "\n");
	if (WIFEXITED(st))
		r = vg_err_set(e, VG_EBACKEND, "'%s' exited %d: %.*s", argv[0],
		    WEXITSTATUS(st), (int)len, msg);
	else
		r = vg_err_set(e, VG_EBACKEND, "'%s' killed by signal %d",
		    argv[0], WTERMSIG(st));
	if (transient != NULL && transient(msg))
		e->rc = r = VG_EAGAIN;
out:
	if (op[0] >= 0)
		close(op[0]);
	if (ep[0] >= 0)
		close(ep[0]);
	if (op[1] >= 0)
		close(op[1]);
	if (ep[1] >= 0)
		close(ep[1]);
	vg_buf_release(&lerr);
	vg_buf_release(&lout);
	return r;
}

void
vg_cluster_set_aside(const char *task_dir, const char *name, int attempt)
{
	char *from = vg_path_join(task_dir, name), *to;

	to = vg_xasprintf("%s.%d", from, attempt);
	if (rename(from, to) != 0 && errno != ENOENT)
		(void)unlink(from);
	free(from);
	free(to);
}

/* Compresses sorted indexes into an --array list of ranges. */
void
vg_cluster_array_spec(const int *idx, size_t n, int offset, struct vg_buf *out)
{
	size_t i, j;

	for (i = 0; i < n; i = j + 1) {
		j = i;
		while (j + 1 < n && idx[j + 1] == idx[j] + 1)
			j++;
		if (i > 0)
			vg_buf_addc(out, ',');
		if (j == i)
			vg_buf_printf(out, "%d", idx[i] - offset);
		else
			vg_buf_printf(out, "%d-%d", idx[i] - offset,
			    idx[j] - offset);
	}
}

int
vg_cluster_parse_spec(const char *spec, int offset, int **out, size_t *n)
{
	const char *q = spec;
	size_t cap = 0;
	long a, b;
	char *end;

	*out = NULL;
	*n = 0;
	while (*q != '\0') {
		a = strtol(q, &end, 10);
		if (end == q || a < 0)
			return -1;
		b = a;
		if (*end == '-') {
			q = end + 1;
			b = strtol(q, &end, 10);
			if (end == q || b < a)
				return -1;
		}
		if ((long)*n + (b - a) > 1000000)
			return -1;
		for (; a <= b; a++) {
			*out = vg_xgrow(*out, &cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = (int)a + offset;
		}
		q = end;
		if (*q == ',')
			q++;
		else if (*q != '\0')
			return -1;
	}
	return 0;
}

/* Lets Slurm's kill verdict override a record of a killed task. */
void
vg_cluster_merge(struct vg_result *rec, const struct vg_result *slurm)
{
	int killed;

	if (slurm == NULL)
		return;
	killed = rec->signal != 0 || rec->state == VG_ST_CANCELLED ||
	    rec->state == VG_ST_FAILED;
	switch (slurm->state) {
	case VG_ST_TIMEOUT:
	case VG_ST_OOM:
	case VG_ST_PREEMPTED:
	case VG_ST_NODE_FAIL:
	case VG_ST_DEADLINE:
	case VG_ST_CANCELLED:
		/* task-exec saw its task die from Slurm's signal; Slurm
		 * knows why. A clean exit 0 stays a success. */
		if (killed && rec->state != VG_ST_SUCCEEDED) {
			rec->state = slurm->state;
			snprintf(rec->reason, sizeof rec->reason, "%s",
			    slurm->reason);
		}
		break;
	default:
		break;
	}
	if (rec->node[0] == '\0')
		snprintf(rec->node, sizeof rec->node, "%s", slurm->node);
	vg_cluster_merge_usage(&rec->usage, &slurm->usage);
}

void
vg_cluster_merge_usage(struct vg_usage *rec, const struct vg_usage *slurm)
{
	static const unsigned given = VG_USAGE_CPUS | VG_USAGE_MEM |
	    VG_USAGE_GPUS;

	if (slurm->known & VG_USAGE_CPUS)
		rec->cpus = slurm->cpus;
	if (slurm->known & VG_USAGE_MEM)
		rec->mem_limit = slurm->mem_limit;
	if (slurm->known & VG_USAGE_GPUS)
		rec->gpus = slurm->gpus;
	rec->known |= slurm->known & given;
	if (!(rec->known & VG_USAGE_CPU) && (slurm->known & VG_USAGE_CPU)) {
		rec->cpu_user = slurm->cpu_user;
		rec->cpu_sys = slurm->cpu_sys;
		rec->known |= VG_USAGE_CPU;
	}
	if (!(rec->known & VG_USAGE_RSS) && (slurm->known & VG_USAGE_RSS)) {
		rec->max_rss = slurm->max_rss;
		rec->known |= VG_USAGE_RSS;
	}
}

/* Starts the poll interval at its minimum. */
void
vg_cluster_pacer_init(struct vg_cluster_pacer *p, double min, double max)
{
	p->min = min > 0 ? min : 2;
	p->max = max >= p->min ? max : p->min;
	p->cur = p->min;
	p->factor = 1.5;
}

/* Grows the interval after a quiet poll, resets it after a change. */
double
vg_cluster_pacer_next(struct vg_cluster_pacer *p, int changed)
{
	if (changed)
		p->cur = p->min;
	else {
		p->cur *= p->factor;
		if (p->cur > p->max)
			p->cur = p->max;
	}
	return p->cur;
}

void
vg_task_exec_line(struct vg_buf *b, const char *vigil, const char *sha256,
    const char *run_dir)
{
	vg_exec_line(b, vigil, "task-exec", sha256, run_dir);
}

void
vg_exec_line(struct vg_buf *b, const char *vigil, const char *cmd,
    const char *sha256, const char *run_dir)
{
	vg_buf_adds(b, "exec ");
	vg_buf_shquote(b, vigil);
	vg_buf_printf(b, " %s ", cmd);
	if (sha256 != NULL && *sha256 != '\0') {
		vg_buf_adds(b, "--manifest-sha256 ");
		vg_buf_shquote(b, sha256);
		vg_buf_adds(b, " ");
	}
	vg_buf_shquote(b, run_dir);
}

int
vg_cluster_intent_parse(const char *line, struct vg_cluster_intent *it)
{
	char spec[1024];

	memset(it, 0, sizeof(*it));
	if (sscanf(line, "intent %63s %d %d %1023s", it->name, &it->attempt,
	    &it->offset, spec) != 4 ||
	    sscanf(it->name, "submit-%d.sh", &it->seq) != 1)
		return 0;
	if (vg_cluster_parse_spec(spec, it->offset, &it->idx, &it->nidx) != 0 ||
	    it->nidx == 0) {
		free(it->idx);
		it->idx = NULL;
		return 0;
	}
	return 1;
}
