/*
 * slurm-pack.c - many short tasks in fewer Slurm jobs (slurm.pack): the
 * manifest section, the sizing of packs, and the pack file that tells
 * each array element which tasks it runs.
 *
 * A pack is one array element whose batch script execs `vigil pack-exec
 * RUN_DIR submit-N.pack ELEMENT`: the direct scheduler inside the
 * allocation runs the element's tasks, each as `vigil task-exec` (a job
 * step, or a local process), which writes tasks/INDEX/result.json as an
 * unpacked task does.  The login-node driver tracks every task by its
 * record and the pack's job by one batched query (slurm.c).
 *
 * The pack file, RUN_DIR/slurm/submit-N.pack, written before the chunk is
 * submitted, one line per task: "ELEMENT INDEX ATTEMPT TIMEOUT MEMORY"
 * (the array index, the task, its attempt, its time-out in seconds and
 * its memory in bytes as retries scaled them, 0 = none).  Numbers only: no manifest value goes through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/path.h"
#include "runner/manifest/schema-table.h"
#include "schedulers/slurm.h"

/* Seconds a pack's time limit gets beyond its tasks' (start, records). */
#define PACK_MARGIN	60

/* slurm.pack: tasks or walltime (one of them) when anything is set,
 * parallel within tasks. */
static void
check_pack(const struct vg_section *s, const struct vg_ynode *n, void *base,
    struct vg_dctx *c)
{
	const struct vg_slurm_pack *pk = base;

	(void)s;
	/* Nothing set is no packing (the effective manifest writes the
	 * section with every field). */
	if (pk->tasks == 0 && pk->walltime == 0 && pk->parallel == 0 &&
	    pk->steps)
		return;
	if (pk->tasks == 0 && pk->walltime == 0)
		vg_dctx_error(c, n, "'slurm.pack' needs 'tasks' (tasks per "
		    "job) or 'walltime' (how long a job should run, e.g. 2h)");
	else if (pk->tasks > 0 && pk->walltime > 0)
		vg_dctx_error(c, n, "'slurm.pack' takes one of 'tasks' and "
		    "'walltime', not both");
	else if (pk->tasks > 0 && pk->parallel > pk->tasks)
		vg_dctx_error(c, n, "'slurm.pack.parallel' (%d) is larger "
		    "than 'slurm.pack.tasks' (%d): a job runs at most its "
		    "tasks at once", pk->parallel, pk->tasks);
}

const struct vg_section vg_slurm_pack_schema = {
	.name = "slurm.pack",
	.check = check_pack,
	.fields = (const struct vg_field[]){
		INT(vg_slurm_pack, "tasks", tasks, NULL, 1, 1000000,
		    "tasks per Slurm job"),
		INT(vg_slurm_pack, "parallel", parallel, NULL, 1, 4096,
		    "tasks at once in a job (default: what the allocation "
		    "holds)"),
		DUR(vg_slurm_pack, "walltime", walltime, NULL, 60,
		    366 * 86400.0, "target job length; vigil sizes packs "
		    "from the tasks' time limits"),
		BOOL(vg_slurm_pack, "steps", steps, "true",
		    "each task a job step (false: a process of the job)"),
		{ .key = NULL },
	},
};

int
vg_slurm_pack_plan(const struct vg_slurm_pack *pk, size_t ntasks,
    double task_secs, struct vg_slurm_pack_plan *out, struct vg_err *e)
{
	size_t per, rounds;

	memset(out, 0, sizeof(*out));
	if (!vg_slurm_pack_on(pk))
		return vg_err_set(e, VG_EINVAL, "slurm.pack: neither 'tasks' "
		    "nor 'walltime' is set");
	if (ntasks == 0)
		return vg_err_set(e, VG_EINVAL, "slurm.pack: no tasks");
	out->parallel = pk->parallel > 0 ? pk->parallel : 1;
	if (pk->tasks > 0)
		per = (size_t)pk->tasks;
	else {
		if (task_secs <= 0)
			return vg_err_set(e, VG_EINVAL, "slurm.pack.walltime "
			    "needs each task's time limit: set "
			    "'resources.time' or 'timeout'");
		rounds = (size_t)(pk->walltime / task_secs);
		/* A task longer than the target still gets a job. */
		per = (rounds > 0 ? rounds : 1) * (size_t)out->parallel;
	}
	out->njobs = (ntasks + per - 1) / per;
	/* Even packs: 10 tasks by 4 are 4+3+3, not 4+4+2. */
	out->per = (ntasks + out->njobs - 1) / out->njobs;
	if (out->parallel > (int)out->per)
		out->parallel = (int)out->per;
	if (task_secs > 0)
		out->time = (uint64_t)((out->per + (size_t)out->parallel - 1) /
		    (size_t)out->parallel) * (uint64_t)(task_secs + 0.5) +
		    PACK_MARGIN;
	return 0;
}

void
vg_slurm_pack_line(struct vg_buf *b, long element, int index, int attempt,
    double timeout, uint64_t memory)
{
	vg_buf_printf(b, "%ld %d %d %.3f %llu\n", element, index, attempt,
	    timeout > 0 ? timeout : 0.0, (unsigned long long)memory);
}

int
vg_slurm_pack_parse(const char *text, long element,
    struct vg_slurm_pack_entry **v, size_t *n, struct vg_err *e)
{
	const char *p = text, *nl;
	struct vg_slurm_pack_entry x;
	size_t cap = 0, lineno = 0;
	unsigned long long mem;
	long el;
	char line[128], extra;

	*v = NULL;
	*n = 0;
	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		lineno++;
		if (nl == p)
			continue;
		if ((size_t)(nl - p) >= sizeof(line) ||
		    (memcpy(line, p, (size_t)(nl - p)),
		    line[nl - p] = '\0',
		    sscanf(line, "%ld %d %d %lf %llu %c", &el, &x.index,
		    &x.attempt, &x.timeout, &mem, &extra) != 5 ||
		    line[strspn(line, "0123456789. ")] != '\0') || el < 0 ||
		    x.index < 0 ||
		    x.attempt < 1 || !(x.timeout >= 0)) {
			free(*v);
			*v = NULL;
			*n = 0;
			return vg_err_set(e, VG_EINVAL, "pack file line %zu: "
			    "not 'ELEMENT INDEX ATTEMPT TIMEOUT MEMORY'", lineno);
		}
		if (element >= 0 && el != element)
			continue;
		x.element = el;
		x.memory = mem;
		*v = vg_xgrow(*v, &cap, *n + 1, sizeof(**v));
		(*v)[(*n)++] = x;
	}
	if (*n == 0)
		return vg_err_set(e, VG_ENOENT, "pack file: no task for "
		    "element %ld", element);
	return 0;
}

int
vg_slurm_pack_cancel_mark(const char *task_dir, struct vg_err *e)
{
	char *what;
	int dfd, r;

	/* Walked from the run directory: tasks/INDEX not followed. */
	if ((dfd = vg_beneath_dir_in(task_dir, 2, e)) < 0)
		r = dfd;
	else {
		what = vg_xasprintf("task directory '%s'", task_dir);
		r = vg_beneath_replace(dfd, "cancel", "cancel\n", 7, 0600,
		    what, e);
		free(what);
		close(dfd);
	}
	if (r != 0)
		vg_err_prefix(e, "cannot leave the cancel marker of a packed "
		    "task: ");
	return r;
}

int
vg_slurm_pack_cancel_marked(const char *task_dir)
{
	char *path = vg_path_join(task_dir, "cancel");
	struct stat st;
	int r = lstat(path, &st) == 0;

	free(path);
	return r;
}

int
vg_slurm_claim_parse(const char *text, struct vg_slurm_claim *got)
{
	unsigned long long mem;
	double t;
	char extra;

	memset(got, 0, sizeof(*got));
	if (text[0] == '\0')
		return 0;	/* its maker is still writing it */
	if (strcmp(text, "new\n") == 0) {
		got->who = VG_CLAIM_NEW;
		return 0;
	}
	if (text[strlen(text) - 1] != '\n')
		return 0;
	if (sscanf(text, "pack %lf %llu %c", &t, &mem, &extra) != 2 ||
	    !(t >= 0) || text[5 + strspn(text + 5, "0123456789. ")] != '\n')
		return -1;
	got->who = VG_CLAIM_PACK;
	got->timeout = t;
	got->memory = mem;
	return 0;
}

int
vg_slurm_claim_read(const char *task_dir, int attempt,
    struct vg_slurm_claim *got, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char name[32];
	int r;

	memset(got, 0, sizeof(*got));
	snprintf(name, sizeof(name), "claim.%d", attempt);
	r = vg_beneath_read(task_dir, 0, name, 256, &b, e);
	if (r == VG_ENOENT)
		r = 0;
	else if (r == 0 && vg_slurm_claim_parse(vg_buf_str(&b), got) != 0)
		r = vg_err_set(e, VG_EPARSE, "'%s/%s' is not a claim ('pack "
		    "TIMEOUT MEMORY' or 'new')", task_dir, name);
	vg_buf_release(&b);
	return r;
}

int
vg_slurm_claim_make(const char *task_dir, int attempt,
    const struct vg_slurm_claim *want, struct vg_slurm_claim *got,
    struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char name[32];
	int dfd, fd, r;

	memset(got, 0, sizeof(*got));
	snprintf(name, sizeof(name), "claim.%d", attempt);
	if (want->who == VG_CLAIM_PACK)
		vg_buf_printf(&b, "pack %.3f %llu\n", want->timeout > 0 ?
		    want->timeout : 0.0, (unsigned long long)want->memory);
	else
		vg_buf_adds(&b, "new\n");
	if ((dfd = vg_beneath_anchor(task_dir, e)) < 0) {
		vg_buf_release(&b);
		return dfd;
	}
	/* O_EXCL: a name that exists, a link included, is never opened. */
	fd = vg_beneath_open(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		r = vg_write_all(fd, b.data, b.len) == 0 && fsync(fd) == 0 ?
		    1 : vg_err_errno(e, "writing '%s/%s'", task_dir, name);
		close(fd);
		if (r == 1)
			*got = *want;
	} else if (errno == EEXIST)
		r = vg_slurm_claim_read(task_dir, attempt, got, e);
	else
		r = vg_err_errno(e, "cannot make '%s/%s'", task_dir, name);
	close(dfd);
	vg_buf_release(&b);
	return r;
}
