/*
 * attempt-log.c - cutting a task's output back into its attempts; see
 * attempt-log.h.  The files are read through a descriptor and only
 * ever read; the sizes come from the attempt rows the driver wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/str.h"
#include "runner/core/attempt-log.h"
#include "runner/core/stream.h"

void
vg_attempt_marks_release(struct vg_attempt_marks *m)
{
	if (m == NULL)
		return;
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* vg_store_attempt_each callback: keeps one attempt. */
static int
mark_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct vg_attempt_marks *m = arg;
	struct vg_attempt_mark *k;

	m->v = vg_xgrow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
	k = &m->v[m->n++];
	memset(k, 0, sizeof(*k));
	k->attempt = a->attempt;
	k->started = a->started;
	k->ended = a->ended;
	k->state = a->state;
	k->exit_code = a->exit_code;
	k->signal = a->signal;
	if (a->reason != NULL)
		vg_strlcpy(k->reason, a->reason, sizeof(k->reason));
	k->end[0] = a->out_end;
	k->end[1] = a->err_end;
	return 0;
}

int
vg_attempt_marks_load(struct vg_store *st, const char *run_id, int index,
    struct vg_attempt_marks *m, struct vg_err *e)
{
	m->n = 0;
	return vg_store_attempt_each(st, run_id, index, mark_cb, m, e);
}

void
vg_attempt_header(const struct vg_attempt_marks *m, size_t k,
    struct vg_buf *out)
{
	const struct vg_attempt_mark *a = &m->v[k];
	char tb[32] = "-";
	struct tm tm;
	time_t t = (time_t)a->started;

	if (a->started > 0 && localtime_r(&t, &tm) != NULL)
		strftime(tb, sizeof(tb), "%Y-%m-%d %H:%M:%S", &tm);
	vg_buf_printf(out, "--- attempt %d of %d, started %s, ", a->attempt,
	    m->v[m->n - 1].attempt, tb);
	if (!vg_state_terminal(a->state))
		vg_buf_adds(out, "running");
	else if (a->signal > 0)
		vg_buf_printf(out, "signal %d", a->signal);
	else if (a->exit_code >= 0)
		vg_buf_printf(out, "exit %d", a->exit_code);
	else
		vg_buf_adds(out, vg_state_name(a->state));
	/* The state and reason when the exit status does not say it all
	 * (a timeout, a lost node, a backend error). */
	if (vg_state_terminal(a->state) && a->state != VG_ST_SUCCEEDED &&
	    a->state != VG_ST_FAILED) {
		if (a->signal > 0 || a->exit_code >= 0)
			vg_buf_printf(out, ", %s", vg_state_name(a->state));
		if (a->reason[0] != '\0')
			vg_buf_printf(out, ": %s", a->reason);
	}
	vg_buf_adds(out, " ---\n");
}

int
vg_attempt_marks_split(const struct vg_attempt_marks *m, int stream)
{
	int w = stream == VG_STREAM_STDERR;
	size_t k;

	if (m->n < 2)
		return 0;
	for (k = 0; k + 1 < m->n; k++)
		if (m->v[k].end[w] < 0)
			return 0;
	return 1;
}

void
vg_attempt_bounds(const struct vg_attempt_marks *m, int stream, size_t k,
    long long size, long long *start, long long *stop)
{
	int w = stream == VG_STREAM_STDERR;
	long long pos = 0, end;
	size_t i;

	for (i = 0; i <= k; i++) {
		*start = pos;
		end = m->v[i].end[w];
		if (i + 1 == m->n)
			end = size;
		else if (end < pos || end > size)
			end = pos;
		*stop = end;
		pos = end;
	}
}

/* The frames of a task's stream, marked, with at most 2 * max bytes
 * kept: where each kept header starts, and the attempt (index in m) the
 * kept text starts in. */
struct stail {
	const struct vg_attempt_marks	*m;
	const struct vg_stream_reader	*rd;
	struct vg_buf			*out;
	size_t				 base;	/* out's length before */
	size_t				 max;
	uint32_t			 cur;	/* attempt of the last frame */
	size_t				 first;	/* index in m of the start */
	int				 cut;
};

/* Index in m of attempt number a (the last one when it is unknown). */
static size_t
mark_of(const struct vg_attempt_marks *m, uint32_t a)
{
	size_t k;

	for (k = 0; k < m->n; k++)
		if ((uint32_t)m->v[k].attempt == a)
			return k;
	return m->n - 1;
}

/* Drops the first drop bytes of s's text; the attempt the rest starts
 * in is the one of the last header dropped, if any. */
static void
drop_front(struct stail *s, size_t drop)
{
	char *p = s->out->data + s->base, *end = p + drop;
	size_t len = s->out->len - s->base;

	while (p != NULL && p < end) {
		if (strncmp(p, "--- attempt ", 12) == 0)
			s->first = mark_of(s->m, (uint32_t)atoi(p + 12));
		if ((p = memchr(p, '\n', (size_t)(end - p))) != NULL)
			p++;
	}
	memmove(s->out->data + s->base, s->out->data + s->base + drop,
	    len - drop);
	s->out->len = s->base + len - drop;
	s->out->data[s->out->len] = '\0';
	s->cut = 1;
}

/* vg_stream_read sink: appends a frame, under its attempt's header when
 * the attempt changes; keeps at most 2 * max bytes. */
static int
stail_sink(void *arg, const void *p, size_t n)
{
	struct stail *s = arg;
	size_t k;

	if (s->rd->attempt != s->cur) {
		s->cur = s->rd->attempt;
		k = mark_of(s->m, s->cur);
		if (s->out->len == s->base)
			s->first = k;
		else if (s->out->data[s->out->len - 1] != '\n')
			vg_buf_addc(s->out, '\n');
		vg_attempt_header(s->m, k, s->out);
	}
	vg_buf_add(s->out, p, n);
	if (s->out->len - s->base > 2 * s->max)
		drop_front(s, s->out->len - s->base - s->max);
	return 0;
}

/* vg_attempt_output_tail of a run with output: stream. */
static int
stream_tail(const char *run_dir, int index, int stream,
    const struct vg_attempt_marks *m, size_t max, struct vg_buf *out,
    int *cut, struct vg_err *e)
{
	struct vg_stream_reader rd;
	struct vg_buf kept = VG_BUF_INIT;
	struct stail s;
	int rc;

	if ((rc = vg_stream_reader_open(&rd, run_dir, index, stream, e)) != 0)
		return rc == VG_ENOENT ? 0 : rc;
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.rd = &rd;
	s.out = out;
	s.base = out->len;
	s.max = max;
	vg_buf_add(out, "", 0);
	rc = vg_stream_read(&rd, stail_sink, &s, e);
	vg_stream_reader_close(&rd);
	if (out->len - s.base > max)
		drop_front(&s, out->len - s.base - max);
	if (s.cut && out->len > s.base && strncmp(out->data + s.base,
	    "--- attempt ", 12) != 0) {
		/* The header of the attempt the kept bytes start in. */
		vg_buf_add(&kept, out->data + s.base, out->len - s.base);
		out->len = s.base;
		vg_attempt_header(m, s.first, out);
		vg_buf_add(out, kept.data, kept.len);
	}
	*cut = s.cut;
	vg_buf_release(&kept);
	return rc;
}

int
vg_attempt_output_tail(const char *run_dir, int index, int stream,
    const struct vg_attempt_marks *m, size_t max, struct vg_buf *out,
    int *cut, struct vg_err *e)
{
	struct stat sb;
	char path[4096], chunk[8192];
	long long lo, a, b, off;
	ssize_t n;
	size_t k;
	int fd, rc = 0;

	*cut = 0;
	if (m != NULL && m->n > 1 && vg_stream_present(run_dir))
		return stream_tail(run_dir, index, stream, m, max, out, cut,
		    e);
	if (m == NULL || !vg_attempt_marks_split(m, stream) ||
	    vg_stream_present(run_dir))
		return vg_task_output_tail(run_dir, index, stream, max, out,
		    cut, e);
	snprintf(path, sizeof(path), "%s/tasks/%d/%s", run_dir, index,
	    stream == VG_STREAM_STDERR ? "stderr" : "stdout");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT ? 0 : vg_err_errno(e, "cannot open "
		    "'%s'", path);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
		goto out;
	lo = sb.st_size > (off_t)max ? (long long)sb.st_size -
	    (long long)max : 0;
	*cut = lo > 0;
	vg_buf_add(out, "", 0);
	for (k = 0; k < m->n; k++) {
		vg_attempt_bounds(m, stream, k, (long long)sb.st_size, &a, &b);
		if (b <= lo || a == b)
			continue;
		vg_attempt_header(m, k, out);
		for (off = a > lo ? a : lo; off < b; off += n) {
			n = pread(fd, chunk, (size_t)(b - off) < sizeof(chunk) ?
			    (size_t)(b - off) : sizeof(chunk), off);
			if (n < 0) {
				rc = vg_err_errno(e, "cannot read '%s'", path);
				goto out;
			}
			if (n == 0)
				break;
			vg_buf_add(out, chunk, (size_t)n);
		}
		if (out->len > 0 && out->data[out->len - 1] != '\n')
			vg_buf_addc(out, '\n');
	}
out:
	close(fd);
	return rc;
}
