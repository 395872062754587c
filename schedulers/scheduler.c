/*
 * scheduler.c - the table of schedulers, lookup by name, and the wrappers
 * through which the driver calls them (scheduler.h): each optional
 * operation is checked here, once.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/beneath.h"
#include "schedulers/scheduler.h"
#include "sif-cache/sha256.h"

/* The largest manifest.json a job reads (as the driver's loader). */
#define RUN_MANIFEST_MAX	(16u << 20)
/* The largest origin.json (runner/core/origin.h's VG_ORIGIN_MAX). */
#define RUN_ORIGIN_MAX	(64 * 1024)

const struct vg_scheduler_ops *const vg_schedulers[] = {
	&vg_scheduler_direct,
	&vg_scheduler_slurm,
	&vg_scheduler_gridengine,
	NULL
};

const struct vg_scheduler_ops *
vg_scheduler_find(const char *name)
{
	const struct vg_scheduler_ops *const *s;
	const struct vg_plugin *p;

	if ((p = vg_plugin_find(VG_PLUGIN_SCHEDULER, name)) == NULL)
		return NULL;
	for (s = vg_schedulers; *s != NULL; s++)
		if (&(*s)->p == p)
			return *s;
	return NULL;
}

void
vg_scheduler_probe(const struct vg_scheduler_ops *ops, struct vg_buf *out)
{
	if (ops->probe != NULL)
		ops->probe(out);
}

int
vg_scheduler_cancel_orphans(const struct vg_scheduler_ops *ops,
    const char *run_id, const char *run_dir, const struct vg_sched_orphan *v,
    size_t n, int whole, struct vg_buf *said, struct vg_err *e)
{
	if (ops->cancel_orphans == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "scheduler '%s' cannot "
		    "cancel the jobs of a run without its vigil",
		    ops->p.name);
	return ops->cancel_orphans(run_id, run_dir, v, n, whole, said, e);
}

int
vg_scheduler_has(const struct vg_scheduler_ops *ops, unsigned caps)
{
	return ops != NULL && (ops->caps & caps) == caps;
}

int
vg_sched_open(struct vg_sched *s, struct vg_err *e)
{
	return s->ops->open(s, e);
}

int
vg_sched_submit(struct vg_sched *s, struct vg_attempt *a, struct vg_err *e)
{
	return s->ops->submit(s, a, e);
}

int
vg_sched_flush(struct vg_sched *s, struct vg_err *e)
{
	return s->ops->flush != NULL ? s->ops->flush(s, e) : 0;
}

int
vg_sched_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
    struct vg_sched_update **ups, size_t *n, struct vg_err *e)
{
	return s->ops->poll(s, timeout_ms, wake_fd, ups, n, e);
}

int
vg_sched_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
    struct vg_err *e)
{
	return s->ops->cancel(s, a, force, e);
}

int
vg_sched_reattach(struct vg_sched *s, struct vg_attempt *a,
    const char *handle, struct vg_err *e)
{
	if (s->ops->reattach == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "scheduler '%s' cannot "
		    "take back attempts of another vigil", s->ops->p.name);
	return s->ops->reattach(s, a, handle, e);
}

void
vg_sched_drop(struct vg_sched *s, int index, const char *task_dir)
{
	if (s->ops->drop != NULL)
		s->ops->drop(s, index, task_dir);
}

size_t
vg_sched_active(struct vg_sched *s)
{
	return s->ops->active(s);
}

void
vg_sched_close(struct vg_sched *s)
{
	s->ops->close(s);
}

int
vg_run_manifest_read(const char *run_dir, struct vg_buf *json,
    struct vg_buf *origin, char hex[65], struct vg_err *e)
{
	struct vg_buf own = VG_BUF_INIT, own_o = VG_BUF_INIT;
	struct vg_buf *b = json != NULL ? json : &own;
	struct vg_buf *o = origin != NULL ? origin : &own_o;
	struct vg_sha256 h;
	int fd, rc;

	if ((fd = vg_adopt_dir(run_dir, 0700, 0, "run directory", e)) < 0)
		return fd;
	close(fd);
	vg_buf_reset(b);
	vg_buf_reset(o);
	if ((rc = vg_beneath_read(run_dir, 0, "manifest.json",
	    RUN_MANIFEST_MAX, b, e)) != 0)
		goto out;
	/* A run made before origins were recorded has none. */
	if ((rc = vg_beneath_read(run_dir, 0, "origin.json",
	    RUN_ORIGIN_MAX, o, e)) == VG_ENOENT) {
		vg_err_init(e);
		vg_buf_reset(o);
		rc = 0;
	}
	if (rc != 0)
		goto out;
	vg_sha256_init(&h);
	vg_sha256_update(&h, b->data, b->len);
	if (o->len > 0) {
		vg_sha256_update(&h, "", 1);
		vg_sha256_update(&h, o->data, o->len);
	}
	vg_sha256_hex(&h, hex);
out:
	vg_buf_release(&own_o);
	vg_buf_release(&own);
	return rc;
}

int
vg_sched_journal_append(const char *dir, const struct vg_buf *b,
    struct vg_err *e)
{
	int fd, r = 0;

	fd = vg_beneath_file_in(dir, 1, "jobs", O_WRONLY | O_CREAT |
	    O_APPEND | O_CLOEXEC, 0600, e);
	if (fd < 0)
		return fd;
	if (write(fd, b->data, b->len) != (ssize_t)b->len ||
	    fdatasync(fd) != 0)
		r = vg_err_errno(e, "writing the job journal '%s/jobs'", dir);
	close(fd);
	return r;
}

/* Journals up to 256 MiB: 10 million lines of a million-task array. */
#define JOURNAL_MAX	((size_t)256 << 20)

int
vg_sched_journal_each(const char *dir, int (*line)(const char *text,
    void *arg), void *arg, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char text[VG_SCHED_JOURNAL_LINE + 1];
	const char *p, *end, *nl;
	size_t len;
	int r;

	r = vg_beneath_read(dir, 1, "jobs", JOURNAL_MAX, &b, e);
	if (r == VG_ENOENT) {
		vg_err_init(e);
		r = 0;
	} else if (r != 0)
		vg_err_prefix(e, "reading the job journal '%s/jobs': ", dir);
	p = b.data;
	end = p != NULL ? p + b.len : p;
	while (r == 0 && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = (size_t)((nl != NULL ? nl + 1 : end) - p);
		memcpy(text, p, len < sizeof text ? len : sizeof text - 1);
		text[len < sizeof text ? len : sizeof text - 1] = '\0';
		r = line(text, arg);
		p += len;
	}
	vg_buf_release(&b);
	return r;
}

struct jload {
	char			 sep;
	struct vg_sched_jentry	*v;
	size_t			 n, cap;
};

/* vg_sched_journal_each: keeps a job line. */
static int
jload_line(const char *line, void *arg)
{
	struct jload *l = arg;
	struct vg_sched_jentry j;
	int got;

	got = l->sep == '.' ? sscanf(line, "%d %d %lu.%ld", &j.index,
	    &j.attempt, &j.job, &j.task) : sscanf(line, "%d %d %lu_%ld",
	    &j.index, &j.attempt, &j.job, &j.task);
	if (got == 4) {
		l->v = vg_xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
		l->v[l->n++] = j;
	}
	return 0;
}

int
vg_sched_journal_load(const char *dir, char sep, struct vg_sched_jentry **v,
    size_t *n, struct vg_err *e)
{
	struct jload l = { sep, NULL, 0, 0 };
	int r;

	r = vg_sched_journal_each(dir, jload_line, &l, e);
	if (r != 0) {
		free(l.v);
		l.v = NULL;
		l.n = 0;
	}
	*v = l.v;
	*n = l.n;
	return r;
}
