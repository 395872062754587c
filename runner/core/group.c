/*
 * group.c - concurrency groups: the lock file, the holder checks of the
 * store, and what skip, wait and replace do when the group is held
 * (group.h has the rules).
 *
 * The lock is flock(2) on an O_CLOEXEC descriptor: task processes never
 * inherit it (they exec), a forked detached driver does.  The lock file
 * holds "RUN_ID PID HOST" of the last holder, only to name it; the
 * kernel lock is the truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/core/group.h"
#include "runner/core/run.h"
#include "schedulers/scheduler.h"

/* How often a waiting run looks again (ms). */
#define GROUP_POLL_MS	50
/* How long a skipping run waits for a new holder to write its id. */
#define HOLDER_ID_MS	1000
/* Bytes of the holder record in the lock file. */
#define LOCK_REC	256

static const char *const overlap_names[] = {
	[VG_OVERLAP_ALLOW] = "allow",
	[VG_OVERLAP_SKIP] = "skip",
	[VG_OVERLAP_WAIT] = "wait",
	[VG_OVERLAP_REPLACE] = "replace",
};

int
vg_overlap_parse(const char *name, int cron)
{
	size_t i;

	if (name == NULL)
		return cron ? VG_OVERLAP_SKIP : VG_OVERLAP_ALLOW;
	for (i = 0; i < sizeof(overlap_names) / sizeof(overlap_names[0]); i++)
		if (strcmp(name, overlap_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
vg_overlap_name(enum vg_overlap o)
{
	return (unsigned)o < sizeof(overlap_names) / sizeof(overlap_names[0]) ?
	    overlap_names[o] : "?";
}

char *
vg_group_of(const struct vg_manifest *m)
{
	const char *base, *dot;

	if (m->concurrency.group != NULL)
		return vg_xstrdup(m->concurrency.group);
	if (m->name != NULL && *m->name != '\0')
		return vg_xstrdup(m->name);
	base = m->file != NULL ? strrchr(m->file, '/') : NULL;
	base = base != NULL ? base + 1 : m->file != NULL ? m->file : "-";
	dot = strrchr(base, '.');
	return dot != NULL && dot != base ?
	    vg_xasprintf("%.*s", (int)(dot - base), base) : vg_xstrdup(base);
}

void
vg_group_file(const char *name, struct vg_buf *out)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
		    (*p == '.' && p != (const unsigned char *)name))
			vg_buf_addc(out, (char)*p);
		else
			vg_buf_printf(out, "%%%02X", *p);
	}
	vg_buf_adds(out, ".lock");
}

void
vg_group_release(struct vg_group *g)
{
	if (g == NULL)
		return;
	if (g->fd >= 0)
		close(g->fd);	/* drops the flock with the last descriptor */
	g->fd = -1;
	free(g->name);
	free(g->path);
	g->name = g->path = NULL;
}

/* Context of the holder scan. */
struct scan {
	struct vg_store		*st;
	const char		*self;
	struct vg_group_result	*h;
	int			 found;
	struct vg_err		*e;
	int			 rc;
};

/* True when a run without its vigil still has work handed to a
 * scheduler that runs it outside vigil (queued or running jobs). */
static int
orphan_holds(struct vg_store *st, const struct vg_run_info *r,
    struct vg_err *e)
{
	const struct vg_scheduler_ops *ops;
	struct vg_task_rec *v = NULL;
	size_t n = 0, i;
	int holds = 0;

	ops = r->scheduler != NULL ? vg_scheduler_find(r->scheduler) : NULL;
	if (ops == NULL || vg_scheduler_has(ops, VG_SCAP_LOCAL))
		return 0;
	if (vg_store_tasks_load(st, r->id, &v, &n, e) != 0)
		return 0;
	for (i = 0; i < n && !holds; i++)
		holds = !vg_state_terminal(v[i].state) &&
		    v[i].handle[0] != '\0';
	free(v);
	return holds;
}

/* vg_store_group_open callback: is this open run a holder? */
static int
scan_cb(void *arg, const char *run_id)
{
	struct scan *s = arg;
	struct vg_run_info r;
	struct vg_err e;
	int live, orphan = 0;

	if (s->self != NULL && strcmp(run_id, s->self) == 0)
		return 0;
	vg_err_init(&e);
	if (vg_store_run_get(s->st, run_id, &r, &e) != 0)
		return 0;
	live = vg_run_owner_alive(&r);
	if (!live)
		orphan = orphan_holds(s->st, &r, &e);
	if (live || orphan) {
		vg_strlcpy(s->h->holder, r.id, sizeof(s->h->holder));
		s->h->holder_pid = live ? r.pid : 0;
		if (live)
			snprintf(s->h->why, sizeof(s->h->why), "held by run %s "
			    "(vigil process %ld)", r.id, (long)r.pid);
		else
			snprintf(s->h->why, sizeof(s->h->why), "held by run %s "
			    "(its vigil is gone; its %s jobs may still run)",
			    r.id, r.scheduler);
		s->found = 1;
	}
	vg_run_info_release(&r);
	return s->found;
}

int
vg_group_holder(struct vg_store *st, const char *name, const char *self,
    struct vg_group_result *h, int *found, struct vg_err *e)
{
	struct scan s = { st, self, h, 0, e, 0 };
	int rc;

	*found = 0;
	if ((rc = vg_store_group_open(st, name, scan_cb, &s, e)) != 0)
		return rc;
	*found = s.found;
	return 0;
}

/* Sleeps ms milliseconds. */
static void
nap(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Opens (creating) the lock file of g->name under home/locks. */
static int
lock_open(const char *home, struct vg_group *g, struct vg_err *e)
{
	static int warned;
	struct vg_buf b = VG_BUF_INIT;
	char *dir, kind[32];
	int rc, shared = 0;

	dir = vg_path_join(home, "locks");
	if ((rc = vg_mkdir_p(dir, 0700, e)) != 0) {
		free(dir);
		return rc;
	}
	if (!warned && vg_fs_kind(dir, kind, sizeof(kind), &shared) >= 0 &&
	    shared) {
		warned = 1;
		vg_warn("concurrency group '%s': %s is on a shared file system "
		    "(%s): group locks only exclude runs on this host", g->name,
		    dir, kind);
	}
	vg_group_file(g->name, &b);
	g->path = vg_path_join(dir, vg_buf_str(&b));
	vg_buf_release(&b);
	free(dir);
	g->fd = open(g->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (g->fd < 0)
		return vg_err_errno(e, "cannot open group lock '%s'", g->path);
	return 0;
}

/* Tries the lock once: 1 taken, 0 busy, negative on error. */
static int
lock_try(struct vg_group *g, struct vg_err *e)
{
	if (flock(g->fd, LOCK_EX | LOCK_NB) == 0)
		return 1;
	if (errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	return vg_err_errno(e, "cannot lock '%s'", g->path);
}

/*
 * Writes "RUN_ID PID HOST" of the new holder into the lock file, padded
 * to a fixed size: rewriting in place, never truncating (ext4 flushes a
 * file truncated to zero and rewritten when it is closed, which would
 * cost every run a disk write).
 */
static void
lock_write(struct vg_group *g, const char *self)
{
	char host[256] = "", line[LOCK_REC];
	int n;

	(void)gethostname(host, sizeof(host) - 1);
	n = snprintf(line, sizeof(line), "%s %ld %.200s", self != NULL ? self :
	    "-", (long)getpid(), host);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	memset(line + n, ' ', sizeof(line) - 1 - (size_t)n);
	line[sizeof(line) - 1] = '\n';
	(void)!pwrite(g->fd, line, sizeof(line), 0);
}

/* Reads the holder's run id from the lock file (busy lock); waits up to
 * HOLDER_ID_MS for a new holder to write it. */
static void
lock_read_holder(struct vg_group *g, struct vg_group_result *res)
{
	char line[512];
	ssize_t n;
	long waited;

	for (waited = 0; waited <= HOLDER_ID_MS; waited += GROUP_POLL_MS) {
		n = pread(g->fd, line, sizeof(line) - 1, 0);
		if (n > 0) {
			line[n] = '\0';
			line[strcspn(line, " \n")] = '\0';
			if (line[0] != '\0' && strcmp(line, "-") != 0) {
				vg_strlcpy(res->holder, line,
				    sizeof(res->holder));
				return;
			}
		}
		nap(GROUP_POLL_MS);
	}
}

/* Cancels the holder run as vigil cancel does; said gets what happened. */
static int
cancel_holder(struct vg_store *st, const char *id, struct vg_err *e)
{
	struct vg_buf said = VG_BUF_INIT;
	struct vg_run_info r;
	int rc;

	if ((rc = vg_store_run_get(st, id, &r, e)) != 0)
		return rc;
	if (vg_state_terminal(r.state))
		goto out;
	if ((rc = vg_store_task_request_cancel(st, r.id, -1, NULL, e)) != 0)
		goto out;
	if (vg_run_owner_alive(&r)) {
		if (kill(r.pid, SIGTERM) != 0 && errno != ESRCH)
			rc = vg_err_errno(e, "cannot signal vigil process %ld "
			    "of run '%s'", (long)r.pid, r.id);
	} else
		rc = vg_run_cancel_orphan(st, &r, -1, &said, e);
out:
	vg_buf_release(&said);
	vg_run_info_release(&r);
	return rc;
}

int
vg_group_acquire(struct vg_store *st, const struct vg_group_req *rq,
    struct vg_group *g, struct vg_group_result *res, struct vg_err *e)
{
	double start = vg_now(), now;
	char cancelled[VG_RUN_ID_MAX] = "";
	int rc, got, found;

	memset(res, 0, sizeof(*res));
	g->fd = -1;
	g->name = vg_xstrdup(rq->name);
	g->path = NULL;
	if ((rc = lock_open(rq->home, g, e)) != 0)
		goto fail;
	for (;;) {
		found = 0;
		res->holder[0] = '\0';
		res->holder_pid = 0;
		if ((got = lock_try(g, e)) < 0) {
			rc = got;
			goto fail;
		}
		if (got) {
			/* The kernel lock is ours; a run that takes no lock
			 * (allow) or has jobs left in Slurm may still hold
			 * the group. */
			if ((rc = vg_group_holder(st, rq->name, rq->self, res,
			    &found, e)) != 0)
				goto fail;
			if (!found) {
				lock_write(g, rq->self);
				res->waited = vg_now() - start;
				return 0;
			}
			(void)flock(g->fd, LOCK_UN);
		} else {
			lock_read_holder(g, res);
			if (res->holder[0] != '\0' && (rc = vg_group_holder(st,
			    rq->name, rq->self, res, &found, e)) != 0)
				goto fail;
			if (!found || res->holder[0] == '\0') {
				/* The lock's holder is not (yet) recorded. */
				snprintf(res->why, sizeof(res->why), "held by "
				    "%s%s (its lock is taken)", res->holder[0]
				    ? "run " : "another vigil", res->holder);
			}
		}
		now = vg_now();
		if (rq->overlap == VG_OVERLAP_SKIP)
			break;
		/* Only a recorded holder can be cancelled; one that has the
		 * lock but no run yet is waited for. */
		if (rq->overlap == VG_OVERLAP_REPLACE && found &&
		    strcmp(cancelled, res->holder) != 0) {
			if ((rc = cancel_holder(st, res->holder, e)) != 0)
				goto fail;
			vg_strlcpy(cancelled, res->holder, sizeof(cancelled));
			res->replaced = 1;
			vg_info("concurrency group '%s': cancelling run %s",
			    rq->name, res->holder);
		}
		if (now - start >= rq->wait) {
			char why[sizeof(res->why)];

			vg_strlcpy(why, res->why, sizeof(why));
			snprintf(res->why, sizeof(res->why), "%.280s after waiting "
			    "%.0fs", why, now - start);
			break;
		}
		nap(GROUP_POLL_MS);
	}
	res->held = 1;
	res->waited = vg_now() - start;
	close(g->fd);
	g->fd = -1;
	return 0;
fail:
	vg_group_release(g);
	return rc;
}
