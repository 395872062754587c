/*
 * progress.c - the live status line of a foreground run, or plain log
 * lines when the output is not a terminal.
 *
 * The bar is redrawn at most every REDRAW_MS and only from the driver's
 * loop (vg_progress_tick), never from a signal handler or a timer, so the
 * display costs nothing while nothing changes.  Lines are written whole
 * with one write(2) each, so they interleave cleanly with other writers.
 * While held (vg_progress_hold: the driver's transaction is open), lines
 * gather in a buffer and the bar stays as it is; the release writes them
 * in one write(2), whole lines only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/path.h"
#include "runner/core/progress.h"

#define REDRAW_MS	250
#define SHOW_RUNNING	3	/* running tasks named on the bar */

struct vg_progress {
	int			 fd;
	enum vg_progress_mode	 mode;
	char			*run_id;
	size_t			 total;
	const int		*counts;
	long long		 t0;		/* monotonic ms */
	long long		 last;		/* last redraw */
	int			 dirty;
	int			 drawn;		/* a bar is on screen */
	int			 running[SHOW_RUNNING];
	char			 labels[SHOW_RUNNING][48];
	int			 nrunning_shown;
	struct vg_buf		 line;
	int			 held;		/* vg_progress_hold */
	struct vg_buf		 kept;		/* lines held back */
};

struct vg_progress *
vg_progress_new(int fd, enum vg_progress_mode mode, const char *run_id,
    size_t total, const int *counts)
{
	struct vg_progress *p = vg_xcalloc(1, sizeof(*p));

	if (mode == VG_PROGRESS_AUTO)
		mode = isatty(fd) ? VG_PROGRESS_BAR : VG_PROGRESS_LINES;
	p->fd = fd;
	p->mode = mode;
	p->run_id = vg_xstrdup(run_id);
	p->total = total;
	p->counts = counts;
	p->t0 = vg_mono_ms();
	p->dirty = 1;
	return p;
}

void
vg_progress_free(struct vg_progress *p)
{
	if (p == NULL)
		return;
	free(p->run_id);
	vg_buf_release(&p->line);
	vg_buf_release(&p->kept);
	free(p);
}

void
vg_progress_bind(struct vg_progress *p, const int *counts, size_t total)
{
	p->counts = counts;
	p->total = total;
	p->dirty = 1;
}

enum vg_progress_mode
vg_progress_mode(const struct vg_progress *p)
{
	return p->mode;
}

/* Writes all of b. */
static void
put(struct vg_progress *p, const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(p->fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Erases the bar so that a log line can take its place. */
static void
clear_bar(struct vg_progress *p)
{
	if (p->mode == VG_PROGRESS_BAR && p->drawn) {
		put(p, "\r\033[K", 4);
		p->drawn = 0;
	}
}

/* Shows the whole line in p->line above the bar, or keeps it while
 * held. */
static void
emit(struct vg_progress *p)
{
	if (p->held) {
		vg_buf_add(&p->kept, p->line.data, p->line.len);
		return;
	}
	clear_bar(p);
	put(p, p->line.data, p->line.len);
}

/* Appends a duration as 1h02m03s / 2m03s / 3.4s. */
static void
add_duration(struct vg_buf *b, double secs)
{
	long s = (long)(secs + 0.5);

	if (secs < 10)
		vg_buf_printf(b, "%.1fs", secs < 0 ? 0 : secs);
	else if (s < 3600)
		vg_buf_printf(b, "%ldm%02lds", s / 60, s % 60);
	else
		vg_buf_printf(b, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60,
		    s % 60);
}

/* Tasks that reached a terminal state. */
static size_t
done_count(const struct vg_progress *p)
{
	size_t n = 0;
	int s;

	for (s = 0; s < VG_ST__COUNT; s++)
		if (vg_state_terminal((enum vg_state)s))
			n += (size_t)p->counts[s];
	return n;
}

/* Terminal width, 80 when unknown. */
static int
term_cols(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

/* Draws the status line in place. */
static void
draw(struct vg_progress *p)
{
	struct vg_buf *b = &p->line;
	size_t done = done_count(p), width = 24, fill, i;
	double elapsed = (double)(vg_mono_ms() - p->t0) / 1000.0;
	int failed, cols;

	vg_buf_reset(b);
	vg_buf_adds(b, "\r\033[K");
	fill = p->total > 0 ? done * width / p->total : width;
	vg_buf_addc(b, '[');
	for (i = 0; i < width; i++)
		vg_buf_addc(b, i < fill ? '#' : '.');
	vg_buf_printf(b, "] %zu/%zu", done, p->total);
	vg_buf_printf(b, "  ok %d", p->counts[VG_ST_SUCCEEDED] +
	    p->counts[VG_ST_CACHED]);
	if (p->counts[VG_ST_CACHED] > 0)
		vg_buf_printf(b, " (cached %d)", p->counts[VG_ST_CACHED]);
	/* Cancelled and denied tasks did not fail: each has its count. */
	failed = (int)done - p->counts[VG_ST_SUCCEEDED] -
	    p->counts[VG_ST_CACHED] -
	    p->counts[VG_ST_CANCELLED] - p->counts[VG_ST_DENIED];
	if (failed > 0)
		vg_buf_printf(b, "  failed %d", failed);
	if (p->counts[VG_ST_CANCELLED] > 0)
		vg_buf_printf(b, "  cancelled %d", p->counts[VG_ST_CANCELLED]);
	if (p->counts[VG_ST_DENIED] > 0)
		vg_buf_printf(b, "  denied %d", p->counts[VG_ST_DENIED]);
	vg_buf_printf(b, "  running %d", p->counts[VG_ST_RUNNING]);
	vg_buf_adds(b, "  ");
	add_duration(b, elapsed);
	if (done > 0 && done < p->total) {
		vg_buf_adds(b, "  eta ");
		add_duration(b, elapsed / (double)done *
		    (double)(p->total - done));
	}
	for (i = 0; i < (size_t)p->nrunning_shown; i++)
		vg_buf_printf(b, "%s#%d %s", i == 0 ? "  | " : ", ",
		    p->running[i], p->labels[i]);
	cols = term_cols(p->fd);
	/* "\r\033[K" is 4 bytes wide on screen as 0 columns. */
	if (b->len > (size_t)cols + 3)
		b->len = (size_t)cols + 3;
	put(p, b->data, b->len);
	p->drawn = 1;
	p->dirty = 0;
	p->last = vg_mono_ms();
}

/* Keeps the short list of running tasks shown on the bar. */
static void
track_running(struct vg_progress *p, int index, const char *label, int on)
{
	int i;

	for (i = 0; i < p->nrunning_shown; i++)
		if (p->running[i] == index)
			break;
	if (on && i == p->nrunning_shown && i < SHOW_RUNNING) {
		p->running[i] = index;
		snprintf(p->labels[i], sizeof(p->labels[i]), "%.47s", label);
		p->nrunning_shown++;
	} else if (!on && i < p->nrunning_shown) {
		for (; i + 1 < p->nrunning_shown; i++) {
			p->running[i] = p->running[i + 1];
			memcpy(p->labels[i], p->labels[i + 1],
			    sizeof(p->labels[i]));
		}
		p->nrunning_shown--;
	}
}

void
vg_progress_task(struct vg_progress *p, int index, const char *label,
    enum vg_state st, int attempt, int code, int sig, const char *reason)
{
	struct vg_buf *b = &p->line;
	int bad;

	if (p == NULL || p->mode == VG_PROGRESS_QUIET)
		return;
	p->dirty = 1;
	track_running(p, index, label, st == VG_ST_RUNNING);
	bad = vg_state_terminal(st) && !vg_state_ok(st);
	/* On a terminal only the bad news scrolls; the bar has the rest. */
	if (p->mode == VG_PROGRESS_BAR && !bad && !(st == VG_ST_PENDING &&
	    reason != NULL))
		return;
	if (p->mode == VG_PROGRESS_LINES && st == VG_ST_QUEUED)
		return;
	vg_buf_reset(b);
	vg_buf_printf(b, "vigil: %s/%d [%s] %s", p->run_id, index, label,
	    vg_state_name(st));
	if (attempt > 1)
		vg_buf_printf(b, " (attempt %d)", attempt);
	if (vg_state_terminal(st)) {
		if (sig > 0)
			vg_buf_printf(b, " signal %d", sig);
		else if (code >= 0)
			vg_buf_printf(b, " exit %d", code);
	}
	if (reason != NULL && *reason != '\0')
		vg_buf_printf(b, ": %s", reason);
	vg_buf_addc(b, '\n');
	emit(p);
}

void
vg_progress_note(struct vg_progress *p, const char *fmt, ...)
{
	struct vg_buf *b;
	va_list ap;

	if (p == NULL || p->mode == VG_PROGRESS_QUIET)
		return;
	b = &p->line;
	vg_buf_reset(b);
	vg_buf_adds(b, "vigil: ");
	va_start(ap, fmt);
	vg_buf_vprintf(b, fmt, ap);
	va_end(ap);
	vg_buf_addc(b, '\n');
	emit(p);
	p->dirty = 1;
}

int
vg_progress_tick(struct vg_progress *p)
{
	long long now, due;

	if (p == NULL || p->mode != VG_PROGRESS_BAR || p->counts == NULL)
		return -1;
	now = vg_mono_ms();
	due = p->last + REDRAW_MS;
	if (now >= due) {
		if (p->held)
			return -1;	/* drawn at the release */
		draw(p);
		return REDRAW_MS;
	}
	return (int)(due - now);
}

void
vg_progress_done(struct vg_progress *p, enum vg_state run_state)
{
	struct vg_buf *b;
	double elapsed;
	int s, first = 1;

	if (p == NULL || p->mode == VG_PROGRESS_QUIET || p->counts == NULL)
		return;
	b = &p->line;
	elapsed = (double)(vg_mono_ms() - p->t0) / 1000.0;
	if (p->mode == VG_PROGRESS_BAR) {
		p->nrunning_shown = 0;
		draw(p);
		put(p, "\n", 1);
		p->drawn = 0;
	}
	vg_buf_reset(b);
	vg_buf_printf(b, "vigil: run %s %s in ", p->run_id,
	    vg_state_name(run_state));
	add_duration(b, elapsed);
	vg_buf_adds(b, ":");
	for (s = 0; s < VG_ST__COUNT; s++) {
		if (p->counts[s] == 0)
			continue;
		vg_buf_printf(b, "%s %d %s", first ? "" : ",", p->counts[s],
		    vg_state_name((enum vg_state)s));
		first = 0;
	}
	vg_buf_addc(b, '\n');
	put(p, b->data, b->len);
}

void
vg_progress_hold(struct vg_progress *p)
{
	if (p != NULL)
		p->held = 1;
}

void
vg_progress_release(struct vg_progress *p, int print)
{
	if (p == NULL || !p->held)
		return;
	p->held = 0;
	if (print && p->kept.len > 0) {
		clear_bar(p);
		put(p, p->kept.data, p->kept.len);
	}
	vg_buf_reset(&p->kept);
	if (print && p->mode == VG_PROGRESS_BAR && p->counts != NULL &&
	    vg_mono_ms() >= p->last + REDRAW_MS)
		draw(p);
}
