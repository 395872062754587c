/*
 * cmd-logs.c - vigil logs RUN[/TASK]: copies a task's stdout (or stderr)
 * to standard output in fixed-size chunks, so any output size is fine.
 * Without TASK every task's output is shown, each under a header; the
 * output of a task that ran more than once, each attempt under a header
 * line of its own (runner/core/attempt-log.h).  -f
 * keeps reading as the file grows until the task has ended.  A run with
 * `output: stream` is read from its frames (runner/core/stream.c) instead,
 * the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "common/path.h"
#include "runner/core/attempt-log.h"
#include "runner/core/stream.h"

#define FOLLOW_MS	200

/* True when the task has ended, or the run's vigil is gone. */
static int
task_over(struct vg_store *st, const char *run_id, int task)
{
	struct vg_run_info r;
	enum vg_state s = VG_ST_LOST;
	struct vg_err e;
	int over;

	vg_err_init(&e);
	if (vg_store_task_state(st, run_id, task, &s, &e) != 0)
		return 1;
	if (vg_state_terminal(s))
		return 1;
	if (vg_store_run_get(st, run_id, &r, &e) != 0)
		return 1;
	over = vg_state_terminal(r.state) || (r.pid > 0 &&
	    !vg_run_owner_alive(&r));
	vg_run_info_release(&r);
	return over;
}

/* What frame_out writes with. */
struct frame_ctx {
	int				 failed;
	const struct vg_stream_reader	*rd;	/* NULL: no headers */
	const struct vg_attempt_marks	*m;
	uint32_t			 last;	/* attempt headed last */
};

/* Copies one frame's payload to stdout (a vg_stream_read sink), under
 * its attempt's header when the attempt changes and there are several. */
static int
frame_out(void *arg, const void *p, size_t n)
{
	struct frame_ctx *c = arg;
	struct vg_buf h = VG_BUF_INIT;
	size_t k;

	if (c->rd != NULL && c->m->n > 1 && c->rd->attempt != c->last) {
		for (k = 0; k < c->m->n; k++)
			if ((uint32_t)c->m->v[k].attempt == c->rd->attempt)
				vg_attempt_header(c->m, k, &h);
		fputs(vg_buf_str(&h), stdout);
		vg_buf_release(&h);
		c->last = c->rd->attempt;
	}
	if (fwrite(p, 1, n, stdout) != n)
		c->failed = 1;
	return c->failed;
}

/* Prints one task's output from the run's stream (output: stream), each
 * attempt under a header when it ran more than once; follows it with
 * -f. */
static int
show_stream(struct vg_store *st, const struct vg_run_info *r, int task,
    const char *stream, int follow)
{
	struct timespec pause = { 0, FOLLOW_MS * 1000000L };
	struct vg_attempt_marks m = VG_ATTEMPT_MARKS_INIT;
	struct vg_stream_reader rd;
	struct frame_ctx c = { 0, NULL, &m, 0 };
	struct vg_err e;
	int kind = strcmp(stream, "stderr") == 0 ? VG_STREAM_STDERR :
	    VG_STREAM_STDOUT;
	int over, rc;

	vg_err_init(&e);
	(void)vg_attempt_marks_load(st, r->id, task, &m, &e);
	if (!follow && m.n < 2) {
		/* One pass over the index for all the tasks of `logs RUN`. */
		vg_attempt_marks_release(&m);
		if (vg_stream_task_read(r->dir, task, kind, frame_out, &c,
		    &e) != 0)
			return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		return c.failed ? VG_EXIT_INTERNAL : 0;
	}
	if (vg_stream_reader_open(&rd, r->dir, task, kind, &e) != 0) {
		vg_attempt_marks_release(&m);
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	}
	c.rd = &rd;
	for (;;) {
		/* Ended first, read after: nothing written before the end
		 * is missed. */
		over = !follow || task_over(st, r->id, task);
		(void)vg_attempt_marks_load(st, r->id, task, &m, &e);
		if ((rc = vg_stream_read(&rd, frame_out, &c, &e)) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
			break;
		}
		if (c.failed) {
			rc = VG_EXIT_INTERNAL;
			break;
		}
		if (over)
			break;
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
	vg_stream_reader_close(&rd);
	vg_attempt_marks_release(&m);
	return rc;
}

/* Copies bytes [from, to) of fd to stdout; returns -1 on error. */
static int
copy_range(int fd, long long from, long long to)
{
	char buf[65536];
	ssize_t n;

	while (from < to) {
		n = pread(fd, buf, (size_t)(to - from) < sizeof(buf) ?
		    (size_t)(to - from) : sizeof(buf), from);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -1;
		from += n;
	}
	return 0;
}

/*
 * Copies what fd has past *pos to stdout, each attempt's part under its
 * header (attempt-log.h) once the task has more than one; *hdr counts
 * the attempts whose header is behind us.  Returns -1 on error.
 */
static int
copy_attempts(struct vg_store *st, const struct vg_run_info *r, int task,
    int kind, int fd, long long *pos, size_t *hdr)
{
	struct vg_attempt_marks m = VG_ATTEMPT_MARKS_INIT;
	struct vg_buf h = VG_BUF_INIT;
	struct stat sb;
	struct vg_err e;
	long long a, b;
	size_t k;
	int rc = 0;

	vg_err_init(&e);
	if (fstat(fd, &sb) != 0)
		return -1;
	if (vg_attempt_marks_load(st, r->id, task, &m, &e) != 0 ||
	    !vg_attempt_marks_split(&m, kind)) {
		/* One attempt so far: its output as it is. */
		rc = copy_range(fd, *pos, (long long)sb.st_size);
		*pos = (long long)sb.st_size;
		*hdr = m.n;
		goto out;
	}
	for (k = 0; k < m.n && rc == 0; k++) {
		vg_attempt_bounds(&m, kind, k, (long long)sb.st_size, &a, &b);
		if (k >= *hdr) {
			vg_buf_reset(&h);
			vg_attempt_header(&m, k, &h);
			fputs(vg_buf_str(&h), stdout);
			*hdr = k + 1;
		}
		if (b > *pos) {
			rc = copy_range(fd, a > *pos ? a : *pos, b);
			*pos = b;
		}
	}
out:
	vg_attempt_marks_release(&m);
	vg_buf_release(&h);
	return rc;
}

/* Prints one task's output file, each attempt under a header when it
 * has several; follows it with -f. */
static int
show(struct vg_store *st, const struct vg_run_info *r, int task,
    const char *stream, int follow, int header, const char *label)
{
	struct timespec pause = { 0, FOLLOW_MS * 1000000L };
	int kind = strcmp(stream, "stderr") == 0 ? VG_STREAM_STDERR :
	    VG_STREAM_STDOUT;
	long long pos = 0;
	size_t hdr = 0;
	char *path;
	int fd = -1, rc = 0;

	if (header)
		printf("==> %s/%d [%s] %s <==\n", r->id, task, label, stream);
	if (vg_stream_present(r->dir))
		return show_stream(st, r, task, stream, follow);
	path = vg_xasprintf("%s/tasks/%d/%s", r->dir, task, stream);
	for (;;) {
		if (fd < 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 &&
		    errno != ENOENT) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "cannot open '%s': "
			    "%s", path, strerror(errno));
			break;
		}
		if (fd >= 0 && copy_attempts(st, r, task, kind, fd, &pos,
		    &hdr) != 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "cannot read '%s': "
			    "%s", path, strerror(errno));
			break;
		}
		if (!follow || task_over(st, r->id, task)) {
			/* One more read: output written just before the
			 * end. */
			if (follow && fd >= 0 && copy_attempts(st, r, task,
			    kind, fd, &pos, &hdr) != 0)
				rc = VG_EXIT_INTERNAL;
			break;
		}
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

struct all_ctx {
	struct vg_store		*st;
	const struct vg_run_info *r;
	const char		*stream;
	int			 rc;
	int			 n;
};

static int
all_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct all_ctx *c = arg;

	(void)mj;
	if (t->attempts == 0)
		return 0;
	if (c->n++ > 0)
		printf("\n");
	c->rc = show(c->st, c->r, t->index, c->stream, 0, 1, label);
	return c->rc != 0;
}

static int
cmd_logs_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_run_info r;
	struct vg_err e;
	char run[VG_RUN_ID_MAX + 32];
	const char *stream = vg_args_has(a, "stderr") ? "stderr" : "stdout";
	int rc, task;

	if ((rc = vg_parse_run_task(a->argv[0], run, sizeof(run), &task)) != 0)
		return rc;
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_store_run_get(st, run, &r, &e)) != 0) {
		vg_store_close(st);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	}
	if (task < 0 && r.ntasks == 1)
		task = 0;
	if (task >= r.ntasks) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' has no task %d (it "
		    "has %d: 0 to %d)", r.id, task, r.ntasks, r.ntasks - 1);
	} else if (task >= 0) {
		rc = show(st, &r, task, stream, vg_args_has(a, "follow"), 0,
		    NULL);
	} else if (vg_args_has(a, "follow")) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "-f follows one task: give "
		    "RUN/TASK");
	} else {
		struct all_ctx c = { st, &r, stream, 0, 0 };

		if ((rc = vg_store_task_each(st, r.id, -1, all_cb, &c,
		    &e)) != 0)
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		else
			rc = c.rc;
	}
	vg_run_info_release(&r);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_logs = {
	.name = "logs",
	.args_usage = "RUN[/TASK]",
	.summary = "print a task's output",
	.help = "Prints the stdout (or --stderr) of task TASK of RUN; "
	    "without TASK, of\nevery task that ran, each under a header.  "
	    "The files themselves are in\nthe run directory: "
	    "$VIGIL_HOME/runs/RUN/tasks/TASK/{stdout,stderr}, or,\n"
	    "with output: stream, framed in RUN/stream/0.frames.",
	.opts = (const struct vg_opt[]){
		{ .name = "follow", .shortname = 'f',
		  .help = "keep printing new output until the task ends" },
		{ .name = "stderr", .help = "the task's stderr instead" },
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.ids = "runs",
	.exec = cmd_logs_exec,
};
