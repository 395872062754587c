/*
 * run.c - the run driver: creates runs and drives them through a
 * scheduler until every task is terminal.
 *
 * One loop iteration is: record the updates of the last poll and the
 * attempts submitted since; read signals; decide retries; submit ready
 * tasks while the scheduler's window allows; poll.  Iterations share a
 * transaction for up to GROUP_MS (group commit, docs/state.md): it
 * commits when that time has passed, before a signal or an after:
 * decision is acted on, before a poll could wait past it, and at the end
 * of the drive; what progress reports waits for the commit that holds it.
 * The driver is the only writer of a run's rows while it owns the run.
 *
 * Memory is bounded by the task count, not by the output or the number
 * of attempts: per task one fixed-size record; per attempt in flight one
 * small allocation, holding the task built for it (by index, from a
 * lazy taskset), freed at its terminal update.  Nothing is kept per
 * finished task beyond its record.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch/scratch.h"
#include "common/beneath.h"
#include "common/dirpool.h"
#include "common/json.h"
#include "runner/core/after.h"
#include "runner/core/egress-log.h"
#include "runner/core/leftover.h"
#include "runner/core/notify.h"
#include "runner/core/outputs.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"
#include "runner/core/progress.h"
#include "runner/core/retry.h"
#include "runner/core/reuse.h"
#include "runner/core/run-int.h"
#include "runner/core/stream.h"
#include "runner/core/usage.h"

/* Milliseconds the driver's transaction stays open across steps, where
 * tasks run here (VIGIL_GROUP_MS overrides it; 0: one per step). */
#define GROUP_MS		10
#define GROUP_MS_MAX		1000

/* Seconds between checks of the runs a waiting run waits for. */
#define AFTER_RECHECK	2.0

/* The label of task i, in a buffer reused by the next call: from the
 * task of its attempt in flight, else built for the moment. */
static const char *
drv_label(struct drv *d, size_t i)
{
	struct vg_task tmp = { 0 };

	vg_buf_reset(&d->label);
	if (d->live[i] != NULL)
		vg_task_label(d->live[i]->a.task, &d->label);
	else
		vg_task_label(vg_taskset_at(d->ts, i, &tmp), &d->label);
	vg_task_release(&tmp);
	return vg_buf_str(&d->label);
}

/* Copies the compact part of a task row. */
static void
trec_of(struct trec *c, const struct vg_task_rec *t)
{
	c->started = t->started;
	c->ended = t->ended;
	c->next_at = t->next_at;
	c->timeout = t->timeout;
	c->memory = t->memory;
	c->time = t->time;
	c->pid_start = t->pid_start;
	c->index = t->index;
	c->attempts = t->attempts;
	c->tries = t->tries;
	c->exit_code = t->exit_code;
	c->signal = t->signal;
	c->cancel_req = t->cancel_req;
	c->pid = t->pid;
	c->state = t->state;
}

/* The whole row of a task from its compact part and its strings. */
static void
rec_of(struct vg_task_rec *t, const struct trec *c, const struct tstrings *s)
{
	memset(t, 0, sizeof(*t));
	t->started = c->started;
	t->ended = c->ended;
	t->next_at = c->next_at;
	t->timeout = c->timeout;
	t->memory = c->memory;
	t->time = c->time;
	t->pid_start = c->pid_start;
	t->index = c->index;
	t->attempts = c->attempts;
	t->tries = c->tries;
	t->exit_code = c->exit_code;
	t->signal = c->signal;
	t->cancel_req = c->cancel_req;
	t->pid = c->pid;
	t->state = c->state;
	vg_strlcpy(t->handle, s->handle, sizeof(t->handle));
	vg_strlcpy(t->node, s->node, sizeof(t->node));
	vg_strlcpy(t->gpus, s->gpus, sizeof(t->gpus));
}

/* Takes the strings of the task row the store gives (arg). */
static int
strings_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct tstrings *s = arg;

	(void)mj;
	(void)label;
	vg_strlcpy(s->handle, t->handle, sizeof(s->handle));
	vg_strlcpy(s->node, t->node, sizeof(s->node));
	vg_strlcpy(s->gpus, t->gpus, sizeof(s->gpus));
	return 1;
}

/* The strings of task i: its attempt's in flight, else the store's (none
 * before a first attempt). */
int
vg_drv_task_strings(struct drv *d, size_t i, struct tstrings *s,
    struct vg_err *e)
{
	const struct vg_task_rec *w;

	if (d->live[i] != NULL) {
		*s = d->live[i]->s;
		return 0;
	}
	memset(s, 0, sizeof(*s));
	if (d->tr[i].dirty > 0) {
		/* Its row in the store is not written yet. */
		w = &d->dirty[d->tr[i].dirty - 1].rec;
		vg_strlcpy(s->handle, w->handle, sizeof(s->handle));
		vg_strlcpy(s->node, w->node, sizeof(s->node));
		vg_strlcpy(s->gpus, w->gpus, sizeof(s->gpus));
		return 0;
	}
	if (d->tr[i].attempts == 0)
		return 0;
	return vg_store_task_each(d->st, d->run_id, d->tr[i].index,
	    strings_cb, s, e);
}

/* Adds one task row to the driver's records (arg), while they have
 * room; more rows than that are only counted. */
static int
load_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct drv *d = arg;

	(void)mj;
	(void)label;
	if (d->n < d->ncap)
		trec_of(&d->tr[d->n], t);
	d->n++;
	return 0;
}

/* Keeps full as task i's row until the driver's transaction commits
 * (row_flush). */
static void
row_defer(struct drv *d, size_t i, const struct vg_task_rec *full)
{
	struct trec *t = &d->tr[i];

	if (t->dirty == 0) {
		d->dirty = vg_xgrow(d->dirty, &d->dirtycap, d->ndirty + 1,
		    sizeof(*d->dirty));
		t->dirty = (int)++d->ndirty;
	}
	d->dirty[t->dirty - 1].i = i;
	d->dirty[t->dirty - 1].rec = *full;
}

/* Writes the attempt row w keeps. */
static int
attempt_write(struct drv *d, struct attempt_w *w, struct vg_err *e)
{
	w->rec.handle = w->has & 1 ? w->handle : NULL;
	w->rec.node = w->has & 2 ? w->node : NULL;
	w->rec.gpus = w->has & 4 ? w->gpus : NULL;
	w->rec.reason = w->has & 8 ? w->reason : NULL;
	return vg_store_attempt_put(d->st, d->run_id, &w->rec, e);
}

/* Copies s into buf (len bytes) and sets bit in *has when s is set. */
static void
keep_str(char *buf, size_t len, const char *s, unsigned char *has,
    unsigned char bit)
{
	if (s == NULL)
		return;
	vg_strlcpy(buf, s, len);
	*has |= bit;
}

/* Keeps ar as the row of task i's attempt until the transaction
 * commits; one of an earlier attempt of the task kept is written now. */
static int
attempt_defer(struct drv *d, size_t i, const struct vg_attempt_rec *ar,
    struct vg_err *e)
{
	struct trec *t = &d->tr[i];
	struct attempt_w *w;
	int rc;

	if (t->adirty == 0) {
		d->adirty = vg_xgrow(d->adirty, &d->adirtycap, d->nadirty + 1,
		    sizeof(*d->adirty));
		t->adirty = (int)++d->nadirty;
	} else if (d->adirty[t->adirty - 1].rec.attempt != ar->attempt &&
	    (rc = attempt_write(d, &d->adirty[t->adirty - 1], e)) != 0)
		return rc;
	w = &d->adirty[t->adirty - 1];
	w->i = i;
	w->rec = *ar;
	w->has = 0;
	keep_str(w->handle, sizeof(w->handle), ar->handle, &w->has, 1);
	keep_str(w->node, sizeof(w->node), ar->node, &w->has, 2);
	keep_str(w->gpus, sizeof(w->gpus), ar->gpus, &w->has, 4);
	keep_str(w->reason, sizeof(w->reason), ar->reason, &w->has, 8);
	return 0;
}

/* Writes the rows row_defer and attempt_defer kept (into the open
 * transaction); with write 0, drops them (the transaction rolls back). */
static int
row_flush(struct drv *d, int write, struct vg_err *e)
{
	size_t k;
	int rc = 0;

	for (k = 0; k < d->ndirty; k++) {
		d->tr[d->dirty[k].i].dirty = 0;
		if (write && rc == 0)
			rc = vg_store_task_put(d->st, d->run_id,
			    &d->dirty[k].rec, e);
	}
	d->ndirty = 0;
	for (k = 0; k < d->nadirty; k++) {
		d->tr[d->adirty[k].i].adirty = 0;
		if (write && rc == 0)
			rc = attempt_write(d, &d->adirty[k], e);
	}
	d->nadirty = 0;
	return rc;
}

/* Moves task i, whose strings are s, to state st (counts, progress,
 * task row, event). */
static int
set_task_s(struct drv *d, size_t i, enum vg_state st, int attempt,
    const char *reason, const struct tstrings *s, struct vg_err *e)
{
	struct trec *t = &d->tr[i];
	struct vg_task_rec full;
	int rc;

	d->counts[t->state]--;
	t->state = st;
	d->counts[st]++;
	rec_of(&full, t, s);
	vg_strlcpy(full.reason, reason, sizeof(full.reason));
	/* In the driver's transaction the row waits for its commit; the
	 * event is written now. */
	if (d->txn)
		row_defer(d, i, &full);
	else if ((rc = vg_store_task_put(d->st, d->run_id, &full, e)) != 0)
		return rc;
	if ((rc = vg_store_event(d->st, d->run_id, full.index, attempt, st,
	    reason, e)) != 0)
		return rc;
	if (d->pg != NULL)
		vg_progress_task(d->pg, t->index, drv_label(d, i), st, attempt,
		    t->exit_code, t->signal, reason);
	return 0;
}

/* Moves task i to state st (counts, progress, task row, event). */
int
vg_drv_set_task(struct drv *d, size_t i, enum vg_state st, int attempt,
    const char *reason, struct vg_err *e)
{
	struct tstrings s;
	int rc;

	if ((rc = vg_drv_task_strings(d, i, &s, e)) != 0)
		return rc;
	return set_task_s(d, i, st, attempt, reason, &s, e);
}

/*
 * The size of task index's output file name (stdout, stderr) now: where
 * the attempt that just ended stops in it, since a retry appends (0 when
 * there is none, -1 when it is not a regular file).  lstat: a task that
 * put a link there is not followed.
 */
static long long
output_end(struct drv *d, int index, const char *name)
{
	struct stat sb;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/tasks/%d/%s", d->run_dir, index,
	    name);
	if (lstat(path, &sb) != 0)
		return errno == ENOENT ? 0 : -1;
	return S_ISREG(sb.st_mode) ? (long long)sb.st_size : -1;
}

/*
 * Records attempt `attempt` of task t in state st with reason.  seen says
 * whether t's start, process, handle and node belong to the attempt (0
 * for one just submitted); r is its result once it ended (NULL: exit
 * code -1, no signal) and ended its end (0 while not ended).
 */
int
vg_drv_put_attempt(struct drv *d, const struct trec *t,
    const struct tstrings *s, int attempt, enum vg_state st, int seen,
    const struct vg_result *r, double ended, const char *reason,
    struct vg_err *e)
{
	struct vg_attempt_rec ar;

	memset(&ar, 0, sizeof(ar));
	ar.index = t->index;
	ar.attempt = attempt;
	ar.state = st;
	ar.exit_code = r != NULL ? r->exit_code : -1;
	ar.signal = r != NULL ? r->signal : 0;
	ar.ended = ended;
	ar.reason = reason;
	if (seen) {
		ar.started = t->started;
		ar.pid = t->pid;
		ar.pid_start = t->pid_start;
		ar.handle = s->handle;
		ar.node = s->node;
		ar.gpus = s->gpus[0] != '\0' ? s->gpus : NULL;
		ar.slot = s->slot;
	}
	if (r != NULL && !vg_usage_off())
		ar.usage = r->usage;
	ar.out_end = ended > 0 ? output_end(d, t->index, "stdout") : -1;
	ar.err_end = ended > 0 ? output_end(d, t->index, "stderr") : -1;
	if (d->txn)
		return attempt_defer(d, (size_t)(t - d->tr), &ar, e);
	return vg_store_attempt_put(d->st, d->run_id, &ar, e);
}

/* Adds task i to the list of tasks waiting for a retry. */
void
vg_drv_retry_add(struct drv *d, size_t i)
{
	d->retry = vg_xgrow(d->retry, &d->retrycap, d->nretry + 1,
	    sizeof(*d->retry));
	d->retry[d->nretry++] = (int)i;
}

/* Releases an attempt box. */
void
vg_drv_box_free(struct box *b)
{
	if (b == NULL)
		return;
	vg_stream_detach(b->sw, b->out);
	vg_task_release(&b->task);
	free(b->task_dir);
	free(b->scratch_dir);
	free(b);
}

/* Fills the attempt of box b (its task_dir and scratch_dir set) as
 * attempt number `attempt` of task i. */
void
vg_drv_box_fill(struct drv *d, size_t i, struct box *b, int attempt)
{
	const struct trec *t = &d->tr[i];

	b->i = i;
	b->a.m = d->m;
	b->a.drive = d->drive;
	vg_task_release(&b->task);
	b->a.task = vg_taskset_at(d->ts, i, &b->task);
	b->a.run_id = d->run_id;
	b->a.task_dir = b->task_dir;
	b->a.scratch_dir = b->scratch_dir;
	b->a.attempt = attempt;
	b->a.res = b->a.task->resources;
	b->a.res.memory = t->memory;
	b->a.res.time = t->time;
	b->a.timeout = t->timeout;
	b->a.kill_grace = d->m->kill_grace;
	b->a.pidfd = -1;
}

/* Opens RUN/tasks and the pool of empty task directories in RUN/tmp
 * at the first task made here; without them directories are made and
 * removed by path. */
static void
task_dirs_open(struct drv *d)
{
	char *p;
	int fd;

	if (d->tasks_fd >= 0)
		return;
	p = vg_path_join(d->run_dir, "tasks");
	d->tasks_fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	free(p);
	if (d->tasks_fd < 0)
		return;
	p = vg_path_join(d->run_dir, "tmp");
	if ((mkdir(p, 0700) == 0 || errno == EEXIST) &&
	    (fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) >= 0) {
		/* A task's empty outputs stay in its directory and go
		 * into the pool with it (vg_attempt.outputs_stay). */
		static const char *const outs[] = { "stdout", "stderr",
		    NULL };

		(void)vg_dirpool_open(&d->dirs, fd, "");
		vg_dirpool_keep(&d->dirs, outs);
		close(fd);
	}
	free(p);
}

/* Makes task index's directory dir (RUN/tasks/INDEX) as mkdir(2) does,
 * from the pool when it has one. */
static int
task_mkdir(struct drv *d, int index, const char *dir)
{
	char idx[16];

	task_dirs_open(d);
	if (d->tasks_fd < 0)
		return mkdir(dir, 0700);
	snprintf(idx, sizeof(idx), "%d", index);
	return vg_dirpool_mkdirat(&d->dirs, d->tasks_fd, idx);
}

/* Removes task index's directory dir when empty, as rmdir(2) does,
 * into the pool when it has one. */
static void
task_rmdir(struct drv *d, int index, const char *dir)
{
	char idx[16];

	if (d->tasks_fd < 0) {
		(void)rmdir(dir);
		return;
	}
	snprintf(idx, sizeof(idx), "%d", index);
	(void)vg_dirpool_rmdirat(&d->dirs, d->tasks_fd, idx);
}

/* vg_stream_task_read sink: writes the payload whole to the pipe at
 * arg (the stream's writer thread drains it meanwhile). */
static int
pipe_sink(void *arg, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		if ((w = write(*(int *)arg, c, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Opens name, a file vg_reuse_bring brought into dir, for reading: a
 * regular file of vigil's user, not followed if a link; a hard link by
 * design (the reused attempt's own file).  -1 when there is none. */
static int
brought_open(const char *dir, const char *name)
{
	struct stat st;
	int afd, fd;

	if ((afd = vg_beneath_anchor(dir, NULL)) < 0)
		return -1;
	fd = vg_beneath_open(afd, name, O_RDONLY | O_NONBLOCK, 0);
	close(afd);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != vg_self_euid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * output: stream: the output of the attempt rec reuses, as task index's
 * attempt of this run's stream: from the stream of rec's run when it
 * has one, else from the stdout and stderr files brought into dir.
 */
static int
reuse_stream(struct drv *d, int index, int attempt,
    const struct vg_reuse_rec *rec, const char *dir, struct vg_err *e)
{
	static const char *const names[2] = { "stdout", "stderr" };
	struct vg_stream_src *src;
	char *parent, *old, *slash, buf[65536];
	ssize_t n = 0;
	int fds[2], k, fd, rc = 0;

	parent = vg_xstrdup(d->run_dir);
	if ((slash = strrchr(parent, '/')) != NULL)
		*slash = '\0';
	old = vg_path_join(parent, rec->run_id);
	free(parent);
	if ((rc = vg_stream_attach(d->sw, index, attempt, fds, &src, e)) != 0)
		goto out;
	for (k = 0; k < 2 && rc == 0; k++) {
		if (vg_stream_present(old))
			rc = vg_stream_task_read(old, rec->index, k + 1,
			    pipe_sink, &fds[k], e);
		else if ((fd = brought_open(dir, names[k])) >= 0) {
			while ((n = read(fd, buf, sizeof(buf))) > 0 &&
			    pipe_sink(&fds[k], buf, (size_t)n) == 0)
				;
			if (n != 0)
				rc = vg_err_errno(e, "streaming the reused "
				    "%s", names[k]);
			close(fd);
		}
	}
	vg_stream_detach(d->sw, src);
out:
	free(old);
	return rc;
}

/*
 * reuse: records task i's key and, when an earlier successful attempt
 * has it and its files could be brought into the task's directory,
 * records the task CACHED (one attempt, naming the one reused) and sets
 * *hit: it is never handed to the scheduler.
 */
static int
reuse_try(struct drv *d, size_t i, int *hit, struct vg_err *e)
{
	static const struct vg_result ok;	/* exit 0, no usage */
	struct trec *t = &d->tr[i];
	const struct vg_reuse_rec *rec = &d->reuse->rec;
	struct vg_task tmp = { 0 };
	struct tstrings s;
	struct vg_err be;
	char key[VG_REUSE_KEY_LEN + 1], from[96], why[160], *dir;
	int rc, found;

	*hit = 0;
	vg_reuse_key(d->reuse, vg_taskset_at(d->ts, i, &tmp), key);
	vg_task_release(&tmp);
	if ((rc = vg_reuse_find(d->reuse, key, &found, e)) != 0)
		return rc;
	if (found && ((rec->files != NULL && rec->files[0] != '\0') ||
	    d->sw != NULL)) {
		vg_err_init(&be);
		dir = vg_run_task_dir(d->run_dir, t->index);
		if ((task_mkdir(d, t->index, dir) != 0 && errno != EEXIST) ||
		    (rec->files != NULL && rec->files[0] != '\0' &&
		    vg_reuse_bring(rec, dir, &be) != 0) || (d->sw != NULL &&
		    reuse_stream(d, t->index, t->attempts + 1, rec, dir,
		    &be) != 0)) {
			vg_debug("run %s: task %d: not reused: %s", d->run_id,
			    t->index, be.msg);
			found = 0;
			task_rmdir(d, t->index, dir);
		}
		free(dir);
	}
	snprintf(from, sizeof(from), "%s/%d/%d", rec->run_id, rec->index,
	    rec->attempt);
	if ((rc = vg_store_task_key_put(d->st, d->run_id, t->index, key,
	    vg_buf_str(&d->reuse->desc), d->reuse->parts, found ? from : NULL,
	    e)) != 0 || !found)
		return rc;
	/* Its first attempt: no strings of an earlier one to read. */
	memset(&s, 0, sizeof(s));
	if (t->attempts > 0 && (rc = vg_drv_task_strings(d, i, &s, e)) != 0)
		return rc;
	snprintf(why, sizeof(why), "reused %s/%d attempt %d", rec->run_id,
	    rec->index, rec->attempt);
	t->attempts++;
	t->exit_code = 0;
	t->signal = 0;
	t->started = t->ended = vg_now();
	t->next_at = 0;
	if ((rc = vg_drv_put_attempt(d, t, &s, t->attempts, VG_ST_CACHED, 0, &ok,
	    t->ended, why, e)) != 0)
		return rc;
	*hit = 1;
	return set_task_s(d, i, VG_ST_CACHED, t->attempts, why, &s, e);
}

/*
 * reuse: after a successful attempt of task i has its files in place,
 * records its key (taken when it was submitted) as an entry naming the
 * attempt and the files of its task directory, in the transaction that
 * records its end: a crash before the commit leaves no entry.
 */
static int
reuse_record(struct drv *d, size_t i, const struct box *b, struct vg_err *e)
{
	struct vg_buf key = VG_BUF_INIT, files = VG_BUF_INIT;
	struct vg_reuse_rec rec;
	int rc, found;

	memset(&rec, 0, sizeof(rec));
	if ((rc = vg_store_task_key_get(d->st, d->run_id, d->tr[i].index,
	    &key, NULL, NULL, &found, e)) != 0 || !found)
		goto out;
	/* With output: stream the output is in the run's stream (a hit
	 * takes it from there); the task directory still has what was
	 * collected. */
	if ((rc = vg_reuse_files(b->task_dir, &files, e)) != 0)
		goto out;
	vg_strlcpy(rec.key, vg_buf_str(&key), sizeof(rec.key));
	vg_strlcpy(rec.run_id, d->run_id, sizeof(rec.run_id));
	rec.index = d->tr[i].index;
	rec.attempt = b->a.attempt;
	rec.created = vg_now();
	rec.dir = b->task_dir;
	vg_buf_adds(&files, "");
	rec.files = files.data;
	rc = vg_store_reuse_put(d->st, &rec, e);
out:
	vg_buf_release(&key);
	vg_buf_release(&files);
	return rc;
}

/* Makes and submits the next attempt of task i. */
static int
submit_task(struct drv *d, size_t i, struct vg_err *e)
{
	struct trec *t = &d->tr[i];
	struct box *b;
	int rc, hit;

	if (d->reuse != NULL && ((rc = reuse_try(d, i, &hit, e)) != 0 ||
	    hit))
		return rc;

	b = vg_xcalloc(1, sizeof(*b));
	b->task_dir = vg_run_task_dir(d->run_dir, t->index);
	/* Where attempts run through task-exec, it makes the directory
	 * (one mkdir per task less for a large sweep). */
	if (!d->sched.remote && task_mkdir(d, t->index, b->task_dir) != 0 &&
	    errno != EEXIST) {
		rc = vg_err_errno(e, "cannot create task directory '%s'",
		    b->task_dir);
		vg_drv_box_free(b);
		return rc;
	}
	/* task_rmdir removes the task directory with its empty outputs. */
	b->a.outputs_stay = !d->sched.remote && d->tasks_fd >= 0;
	if (d->scratch_base != NULL) {
		struct vg_err se;

		vg_err_init(&se);
		if (vg_scratch_task_dir_min(d->scratch_base, d->run_id,
		    t->index, d->m->scratch.min_free, &b->scratch_dir,
		    &se) != 0) {
			/* This task cannot run here; the others may. */
			vg_drv_box_free(b);
			t->exit_code = -1;
			return vg_drv_set_task(d, i, VG_ST_BACKEND_ERROR, t->attempts,
			    se.msg, e);
		}
	}
	vg_drv_box_fill(d, i, b, t->attempts + 1);
	if (d->sw != NULL) {
		if ((rc = vg_stream_attach(d->sw, t->index, t->attempts + 1,
		    b->a.out_fd, &b->out, e)) != 0) {
			vg_drv_box_free(b);
			return rc;
		}
		b->sw = d->sw;
		b->a.out_set = 1;
	}
	/* The previous attempt's node and GPUs stay until this one's. */
	if ((rc = vg_drv_task_strings(d, i, &b->s, e)) != 0) {
		vg_drv_box_free(b);
		return rc;
	}
	b->s.handle[0] = '\0';
	b->s.slot = 0;
	t->attempts++;
	t->pid = 0;
	t->pid_start = 0;
	t->exit_code = -1;
	t->signal = 0;
	d->live[i] = b;
	if ((rc = vg_drv_put_attempt(d, t, &b->s, t->attempts, VG_ST_QUEUED, 0, NULL,
	    0, NULL, e)) != 0 ||
	    (rc = vg_drv_set_task(d, i, VG_ST_QUEUED, t->attempts, NULL, e)) != 0) {
		d->live[i] = NULL;
		vg_drv_box_free(b);
		return rc;
	}
	if ((rc = vg_sched_submit(&d->sched, &b->a, e)) != 0) {
		d->live[i] = NULL;
		vg_drv_box_free(b);
		return rc;
	}
	return 0;
}

/* Room for one more attempt in the scheduler's hands. */
static int
window_open(struct drv *d)
{
	return d->sched.window <= 0 ||
	    vg_sched_active(&d->sched) < (size_t)d->sched.window;
}

/* Submits ready tasks, retries first, while the window allows. */
static int
submit_ready(struct drv *d, struct vg_err *e)
{
	double now = vg_now();
	size_t k;
	int rc, i;

	if (d->cancelling)
		return 0;
	for (k = 0; k < d->nretry && window_open(d); ) {
		i = d->retry[k];
		if (d->tr[i].state != VG_ST_PENDING) {
			d->retry[k] = d->retry[--d->nretry];
			continue;
		}
		if (d->tr[i].next_at > now) {
			k++;
			continue;
		}
		d->retry[k] = d->retry[--d->nretry];
		if ((rc = submit_task(d, (size_t)i, e)) != 0)
			return rc;
	}
	/* First attempts, and tasks that resume or retry put back, in
	 * index order. */
	while (!d->after_gated && d->cursor < d->n && window_open(d)) {
		k = d->cursor++;
		if (d->tr[k].state != VG_ST_PENDING || d->tr[k].next_at > 0)
			continue;
		if ((rc = submit_task(d, k, e)) != 0)
			return rc;
	}
	return 0;
}

/*
 * after: while the run is gated, checks the runs it waits for (at most
 * every AFTER_RECHECK s): first attempts then wait PENDING with the
 * reason, start (handing the waiting to the scheduler where it can), or
 * end DEPENDENCY_NEVER_SATISFIED.
 */
static int
after_gate(struct drv *d, struct vg_err *e)
{
	struct trec *t;
	double now = vg_now();
	enum vg_after_verdict v;
	size_t i;
	int rc;

	if (!d->after_gated || now < d->after_next)
		return 0;
	d->after_next = now + AFTER_RECHECK;
	if ((rc = vg_after_check(d->st, d->m, d->created, d->sched.ops,
	    &d->after, e)) != 0)
		return rc;
	v = d->after.verdict;
	/* The waiting tasks are told once per new reason, not per check. */
	for (i = 0; i < d->n && v != VG_AFTER_OPEN &&
	    v != VG_AFTER_HANDOFF && (v == VG_AFTER_NEVER ||
	    strcmp(d->after_said, d->after.why) != 0); i++) {
		t = &d->tr[i];
		if (t->state != VG_ST_PENDING || d->live[i] != NULL ||
		    t->next_at > 0)
			continue;
		if ((rc = vg_drv_set_task(d, i, v == VG_AFTER_NEVER ?
		    VG_ST_DEPENDENCY : VG_ST_PENDING, t->attempts,
		    d->after.why, e)) != 0)
			return rc;
		d->txn_now = 1;
	}
	vg_strlcpy(d->after_said, d->after.why, sizeof(d->after_said));
	if (v == VG_AFTER_WAIT)
		return 0;
	if (v == VG_AFTER_HANDOFF) {
		d->sched.deps = d->after.deps;
		d->sched.ndeps = d->after.ndeps;
	}
	d->after_gated = 0;
	d->txn_now = 1;
	return vg_store_event(d->st, d->run_id, -1, 0, VG_ST_RUNNING,
	    d->after.why[0] != '\0' ? d->after.why :
	    "the runs it waits for ended as asked", e);
}

/* Describes a terminal result in reason (for events and status). */
static void
describe(const struct vg_result *r, char *out, size_t n)
{
	if (r->reason[0] != '\0')
		vg_strlcpy(out, r->reason, n);
	else if (r->signal > 0)
		snprintf(out, n, "killed by signal %d (%s)", r->signal,
		    strsignal(r->signal));
	else if (r->state == VG_ST_SUCCEEDED)
		out[0] = '\0';
	else
		snprintf(out, n, "exit %d", r->exit_code);
}

/* Records a terminal update of task i and decides what comes next. */
static int
task_ended(struct drv *d, size_t i, struct box *b,
    const struct vg_sched_update *u, struct vg_err *e)
{
	struct trec *t = &d->tr[i];
	const struct vg_retry *rp = &d->m->retry;
	const struct vg_result *r = &u->result;
	char why[256], msg[256];
	double delay;
	int rc;

	describe(r, why, sizeof(why));
	/* Its output framed before its end is recorded (docs/state.md). */
	vg_stream_detach(b->sw, b->out);
	b->out = NULL;
	/* Outputs first: scratch.keep may remove the scratch directory.
	 * Under a remote scheduler task-exec collects them on the node. */
	if (!d->sched.remote)
		vg_outputs_after(&d->m->outputs, b->a.task, d->run_id,
		    d->run_dir, b->task_dir, b->scratch_dir, b->a.attempt,
		    u->state);
	/* Made by the driver at the start; kept only when something is in
	 * it (the backend removed empty output files). */
	if (!d->sched.remote)
		task_rmdir(d, t->index, b->task_dir);
	/* A node's proxy logged its connections under RUN/egress. */
	if (d->sched.remote && (rc = vg_egress_import_attempt(d->st, d->m,
	    d->run_id, d->run_dir, t->index, b->a.attempt, e)) != 0)
		return rc;
	if (b->scratch_dir != NULL)
		(void)vg_scratch_finish(b->scratch_dir, d->m->scratch.keep,
		    u->state == VG_ST_SUCCEEDED, NULL);
	if (d->reuse != NULL && u->state == VG_ST_SUCCEEDED && !d->cancelling &&
	    (rc = reuse_record(d, i, b, e)) != 0)
		return rc;
	if (b->reattached && u->state == VG_ST_LOST) {
		/* Resume found nothing of it left to follow: interrupted,
		 * not counted against retry.max; it runs again. */
		if ((rc = vg_drv_put_attempt(d, t, &b->s, b->a.attempt, VG_ST_LOST,
		    1, r, vg_now(), why, e)) != 0 ||
		    (rc = vg_store_event(d->st, d->run_id, t->index,
		    b->a.attempt, VG_ST_LOST, why, e)) != 0)
			return rc;
		t->next_at = 0;
		t->pid = 0;
		t->pid_start = 0;
		vg_drv_retry_add(d, i);
		return vg_drv_set_task(d, i, VG_ST_PENDING, b->a.attempt,
		    "interrupted: vigil exited; runs again", e);
	}
	t->exit_code = r->exit_code;
	t->signal = r->signal;
	if (r->started > 0)
		t->started = r->started;
	t->ended = r->ended > 0 ? r->ended : vg_now();
	if (r->node[0] != '\0')
		vg_strlcpy(b->s.node, r->node, sizeof(b->s.node));
	if ((rc = vg_drv_put_attempt(d, t, &b->s, b->a.attempt, u->state, 1, r,
	    t->ended, why, e)) != 0)
		return rc;
	t->tries++;
	if (!d->cancelling && !t->cancel_req &&
	    vg_retry_wanted(rp, u->state, r->cause, t->tries)) {
		if (u->state == VG_ST_OOM && rp->memory_factor > 1 &&
		    t->memory > 0)
			t->memory = (uint64_t)((double)t->memory *
			    rp->memory_factor);
		if (u->state == VG_ST_TIMEOUT && rp->time_factor > 1) {
			t->time = (uint64_t)((double)t->time * rp->time_factor);
			t->timeout *= rp->time_factor;
		}
		delay = vg_retry_backoff(rp, t->tries);
		t->next_at = vg_now() + delay;
		snprintf(msg, sizeof(msg), "%s %.200s; retry %d of %d in %gs",
		    vg_state_name(u->state), why, t->tries, rp->max, delay);
		/* The attempt's own end is an event too. */
		if ((rc = vg_store_event(d->st, d->run_id, t->index,
		    b->a.attempt, u->state, why, e)) != 0)
			return rc;
		vg_drv_retry_add(d, i);
		return vg_drv_set_task(d, i, VG_ST_PENDING, b->a.attempt, msg, e);
	}
	t->next_at = 0;
	return vg_drv_set_task(d, i, u->state, b->a.attempt, why, e);
}

/* Adds one ended attempt of the run to the totals (arg). */
static int
usage_cb(void *arg, const struct vg_attempt_rec *a)
{
	if (vg_state_terminal(a->state) && a->state != VG_ST_DENIED)
		vg_usage_sum_add(arg, &a->usage, a->state,
		    a->ended > a->started && a->started > 0 ?
		    a->ended - a->started : 0);
	return 0;
}

/* Prints the efficiency of every attempt of the run (this drive's and
 * earlier ones') and the right-size suggestion, under the final line. */
static void
usage_note(struct drv *d)
{
	struct vg_usage_sum sum;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	if (vg_usage_off())
		return;
	vg_err_init(&e);
	vg_usage_sum_init(&sum);
	if (vg_store_attempt_each(d->st, d->run_id, -1, usage_cb, &sum,
	    &e) != 0)
		return;
	vg_usage_line(&sum, &b);
	if (b.len > 0)
		vg_progress_note(d->pg, "%s", vg_buf_str(&b));
	vg_buf_reset(&b);
	vg_usage_suggest(&sum, &b);
	if (b.len > 0)
		vg_progress_note(d->pg, "right size for the next run: %s",
		    vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Records one scheduler update. */
static int
apply_update(struct drv *d, const struct vg_sched_update *u, struct vg_err *e)
{
	struct box *b = (struct box *)u->a;
	size_t i = b->i;
	struct trec *t;
	int rc;

	if (i >= d->n || d->live[i] != b)
		return vg_err_set(e, VG_EBACKEND, "scheduler reported an "
		    "attempt vigil does not know");
	t = &d->tr[i];
	if (u->handle[0] != '\0')
		vg_strlcpy(b->s.handle, u->handle, sizeof(b->s.handle));
	if (u->slot > 0)
		b->s.slot = u->slot;
	if (vg_state_terminal(u->state)) {
		rc = task_ended(d, i, b, u, e);
		d->live[i] = NULL;
		vg_drv_box_free(b);
		return rc;
	}
	if (u->state == VG_ST_RUNNING) {
		t->pid = b->a.pid;
		t->pid_start = b->a.pid_start;
		if (t->pid > 0 && t->pid_start == 0)
			(void)vg_pid_start_time(t->pid, &t->pid_start);
		t->started = b->a.started > 0 ? b->a.started : vg_now();
		t->ended = 0;
		vg_strlcpy(b->s.gpus, b->a.gpu_set ? b->a.gpu_ids : "",
		    sizeof(b->s.gpus));
		/* Where it runs, when the scheduler knows (Slurm). */
		if (u->result.node[0] != '\0')
			vg_strlcpy(b->s.node, u->result.node, sizeof(b->s.node));
	}
	if ((rc = vg_drv_put_attempt(d, t, &b->s, b->a.attempt, u->state, 1, NULL,
	    0, u->reason, e)) != 0)
		return rc;
	return vg_drv_set_task(d, i, u->state, b->a.attempt,
	    u->reason[0] != '\0' ? u->reason : NULL, e);
}

/* Tells the scheduler that task i will not run again. */
static void
drop_task(struct drv *d, size_t i)
{
	char *dir = vg_run_task_dir(d->run_dir, d->tr[i].index);

	vg_sched_drop(&d->sched, d->tr[i].index, dir);
	free(dir);
}

/* Cancels task i: drops it when waiting, asks the scheduler otherwise. */
static int
cancel_task(struct drv *d, size_t i, const char *why, int force,
    struct vg_err *e)
{
	struct trec *t = &d->tr[i];

	if (vg_state_terminal(t->state))
		return 0;
	t->cancel_req = 1;
	if (d->live[i] != NULL)
		return vg_sched_cancel(&d->sched, &d->live[i]->a, force, e);
	/* Waiting for a retry: a place the scheduler keeps for it (a
	 * pack's) is given up now, not when the run ends. */
	if (t->attempts > 0)
		drop_task(d, i);
	return vg_drv_set_task(d, i, VG_ST_CANCELLED, t->attempts, why, e);
}

/* Cancels everything (first signal) or forces it (a second SIGINT). */
static int
cancel_all(struct drv *d, const char *why, int force, struct vg_err *e)
{
	size_t i;
	int rc;

	d->cancelling = 1;
	if (d->cancel_why == NULL)
		d->cancel_why = why;
	for (i = 0; i < d->n; i++)
		if ((rc = cancel_task(d, i, why, force, e)) != 0)
			return rc;
	return 0;
}

/* Reads per-task cancel marks written by `vigil cancel RUN/TASK`. */
static int
cancel_marked_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct drv *d = arg;

	(void)mj;
	(void)label;
	if (t->cancel_req && t->index >= 0 && (size_t)t->index < d->n &&
	    !d->tr[t->index].cancel_req)
		d->tr[t->index].cancel_req = 2;	/* newly marked */
	return 0;
}

/* Applies per-task cancel marks found in the store. */
static int
cancel_marked(struct drv *d, struct vg_err *e)
{
	size_t i;
	int rc;

	if ((rc = vg_store_task_each(d->st, d->run_id, -1, cancel_marked_cb,
	    d, e)) != 0)
		return rc;
	for (i = 0; i < d->n; i++) {
		if (d->tr[i].cancel_req != 2)
			continue;
		if ((rc = cancel_task(d, i, "cancelled by vigil cancel", 0,
		    e)) != 0)
			return rc;
	}
	return 0;
}

/* Reads pending signals; acts on them inside the open transaction. */
static int
read_signals(struct drv *d, struct vg_err *e)
{
	struct signalfd_siginfo si;
	ssize_t n;
	int rc;

	if (d->sigfd < 0)
		return 0;
	while ((n = read(d->sigfd, &si, sizeof(si))) == (ssize_t)sizeof(si)) {
		/* What a signal did is durable before vigil acts on it. */
		d->txn_now = 1;
		switch (si.ssi_signo) {
		case SIGUSR1:
			if ((rc = cancel_marked(d, e)) != 0)
				return rc;
			break;
		case SIGINT:
			if (d->cancelling) {
				if (d->pg != NULL)
					vg_progress_note(d->pg, "second "
					    "interrupt: killing tasks now");
				if ((rc = cancel_all(d, "cancelled (SIGINT, "
				    "forced)", 1, e)) != 0)
					return rc;
				break;
			}
			/* FALLTHROUGH */
		default:
			if (d->cancelling)
				break;
			if (d->pg != NULL)
				vg_progress_note(d->pg, "%s: cancelling "
				    "(interrupt again to force)",
				    strsignal((int)si.ssi_signo));
			if ((rc = cancel_all(d, si.ssi_signo == SIGINT ?
			    "cancelled (SIGINT)" : si.ssi_signo == SIGHUP ?
			    "cancelled (SIGHUP)" : "cancelled (SIGTERM)", 0,
			    e)) != 0)
				return rc;
			break;
		}
	}
	return 0;
}

/* Blocks the signals the driver reads and opens the signalfd. */
static int
signals_on(struct drv *d, struct vg_err *e)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, &d->oldmask) != 0)
		return vg_err_errno(e, "sigprocmask");
	d->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sigfd < 0) {
		(void)sigprocmask(SIG_SETMASK, &d->oldmask, NULL);
		return vg_err_errno(e, "signalfd");
	}
	return 0;
}

/* Restores the signal mask. */
void
vg_drv_signals_off(struct drv *d)
{
	if (d->sigfd < 0)
		return;
	close(d->sigfd);
	d->sigfd = -1;
	(void)sigprocmask(SIG_SETMASK, &d->oldmask, NULL);
}

/* The run's final state from the task counts. */
enum vg_state
vg_drv_final_state(const struct drv *d)
{
	int s, bad = 0;

	if (d->cancelling && d->counts[VG_ST_CANCELLED] > 0)
		return VG_ST_CANCELLED;
	for (s = 0; s < VG_ST__COUNT; s++)
		if (!vg_state_ok((enum vg_state)s) && s != VG_ST_DENIED)
			bad += d->counts[s];
	if (d->counts[VG_ST_DENIED] > 0)
		return VG_ST_DENIED;
	if (bad > 0)
		return d->counts[VG_ST_CANCELLED] == bad ? VG_ST_CANCELLED :
		    VG_ST_FAILED;
	return VG_ST_SUCCEEDED;
}

/* True when every task is terminal. */
static int
all_done(const struct drv *d)
{
	int s, open = 0;

	for (s = 0; s < VG_ST__COUNT; s++)
		if (!vg_state_terminal((enum vg_state)s))
			open += d->counts[s];
	return open == 0;
}

/* Opens the scheduler for the run. */
static int
sched_open(struct drv *d, const struct vg_run_info *ri,
    const struct vg_run_opts *o, struct vg_err *e)
{
	const struct vg_scheduler_ops *ops = o->sched;
	int rc;

	if (ops == NULL) {
		const char *name = ri->scheduler != NULL ? ri->scheduler :
		    vg_manifest_plugin(d->m, VG_PLUGIN_SCHEDULER);

		if ((ops = vg_scheduler_find(name)) == NULL)
			return vg_err_set(e, VG_EINVAL, "unknown scheduler "
			    "'%s'", name);
	}
	memset(&d->sched, 0, sizeof(d->sched));
	d->sched.ops = ops;
	d->sched.m = d->m;
	d->sched.run_id = d->run_id;
	d->sched.run_dir = d->run_dir;
	d->sched.jobs = o->jobs;
	d->sched.backend = o->backend;
	if ((rc = vg_sched_open(&d->sched, e)) != 0)
		return rc;
	d->sched_open = 1;
	return 0;
}

/*
 * Once per drive, for backends that run here: the backend's prepare
 * (finds its tools, pulls or resolves the image, compiles the sandbox,
 * refuses what isolation.required cannot have), and the isolation the
 * host cannot deliver, recorded as an event of the run and told on
 * stderr.  A failed prepare is kept in d->unprepared: no task starts,
 * each ends BACKEND_ERROR with its reason (unprepared_tasks).
 */
static int
backend_prepare(struct drv *d, const struct vg_run_opts *o,
    struct vg_err *e)
{
	const struct vg_backend_ops *ops = o->backend;
	const char *dg, *name;
	struct vg_err ee;
	char *why;
	int rc;

	if (d->sched.remote)
		return 0;
	name = vg_manifest_plugin(d->m, VG_PLUGIN_BACKEND);
	if (ops == NULL && (ops = vg_backend_find(name)) == NULL)
		return 0;	/* sched_open has said it is unknown */
	vg_err_init(&ee);
	if (vg_backend_prepare(ops, d->m, d->run_dir, &d->drive, &ee) != 0) {
		d->unprepared = vg_xstrdup(ee.msg);
		d->unprepared_denied = vg_backend_refused_host_access(&ee);
		return 0;
	}
	/* What the tasks run with (vigil status shows it). */
	if ((dg = vg_backend_confinement(ops, d->m)) != NULL) {
		why = vg_xasprintf("confinement: %s", dg);
		rc = vg_store_event(d->st, d->run_id, -1, 0, VG_ST_PENDING,
		    why, e);
		free(why);
		if (rc != 0)
			return rc;
	}
	vg_err_init(&ee);
	if ((dg = vg_backend_downgrades(ops, d->m, &ee)) != NULL &&
	    *dg != '\0') {
		why = vg_xasprintf("isolation downgraded: %s", dg);
		vg_warn("run %s: %s", d->run_id, why);
		rc = vg_store_event(d->st, d->run_id, -1, 0, VG_ST_PENDING,
		    why, e);
		free(why);
		return rc;
	}
	return 0;
}

/*
 * output: stream, where the backend takes the driver's pipes and tasks
 * run here: recovers the run's stream files (a torn tail of a crashed
 * driver is cut, told on stderr and recorded as an event) and starts the
 * writer.  Elsewhere the output stays in files, as docs/state.md says.
 */
static int
stream_open(struct drv *d, const struct vg_run_opts *o, struct vg_err *e)
{
	const struct vg_backend_ops *ops = o->backend;
	const char *name = vg_manifest_plugin(d->m, VG_PLUGIN_BACKEND);
	struct vg_stream_fix fix;
	char *why = NULL;
	int rc;

	if (d->m->output != VG_OUTPUT_STREAM)
		return 0;
	if (ops == NULL)
		ops = vg_backend_find(name);
	if (d->sched.remote || ops == NULL || !ops->stream_output) {
		why = d->sched.remote ? vg_xasprintf("output: stream does "
		    "not apply to tasks run by vigil task-exec (scheduler "
		    "%s); the output is in files",
		    vg_manifest_plugin(d->m, VG_PLUGIN_SCHEDULER)) :
		    vg_xasprintf("output: stream does not apply to the "
		    "backend %s; the output is in files", name);
	} else {
		if ((rc = vg_stream_writer_open(d->run_dir, &d->sw, &fix,
		    e)) != 0)
			return rc;
		if (fix.cut > 0 || fix.damaged > 0)
			why = vg_xasprintf("output stream: cut a torn tail of "
			    "%llu bytes, skipped %llu damaged bytes; %zu "
			    "frames kept", (unsigned long long)fix.cut,
			    (unsigned long long)fix.damaged, fix.frames);
		else if (fix.reindexed && fix.frames > 0)
			why = vg_xasprintf("output stream: index rebuilt "
			    "from %zu frames", fix.frames);
	}
	if (why == NULL)
		return 0;
	vg_warn("run %s: %s", d->run_id, why);
	rc = vg_store_event(d->st, d->run_id, -1, 0, VG_ST_PENDING, why, e);
	free(why);
	return rc;
}

/* Ends every task still to start BACKEND_ERROR with why the backend
 * could not be prepared (DENIED when it refused host access). */
static int
unprepared_tasks(struct drv *d, struct vg_err *e)
{
	size_t i;
	int rc;

	for (i = 0; i < d->n; i++)
		if ((d->tr[i].state == VG_ST_PENDING ||
		    d->tr[i].state == VG_ST_QUEUED) && (rc = vg_drv_set_task(d, i,
		    d->unprepared_denied ? VG_ST_DENIED : VG_ST_BACKEND_ERROR,
		    d->tr[i].attempts, d->unprepared,
		    e)) != 0)
			return rc;
	d->nretry = 0;
	d->cursor = d->n;
	return 0;
}

/* Opens the driver's transaction unless one is open; what progress
 * reports from now on waits for its commit. */
static int
txn_open(struct drv *d, struct vg_err *e)
{
	int rc;

	if (d->txn)
		return 0;
	if ((rc = vg_store_begin(d->st, e)) != 0)
		return rc;
	d->txn = 1;
	d->txn_now = 0;
	d->txn_t0 = vg_mono_ms();
	vg_progress_hold(d->pg);
	return 0;
}

/* Rolls the driver's transaction back; what it held is never shown. */
static void
txn_abort(struct drv *d)
{
	if (!d->txn)
		return;
	(void)row_flush(d, 0, NULL);
	vg_store_rollback(d->st);
	d->txn = 0;
	vg_progress_release(d->pg, 0);
}

/* Commits the driver's transaction, then shows what it held. */
static int
txn_commit(struct drv *d, struct vg_err *e)
{
	int rc;

	if (!d->txn)
		return 0;
	if ((rc = row_flush(d, 1, e)) != 0 ||
	    (rc = vg_store_commit(d->st, e)) != 0) {
		txn_abort(d);
		return rc;
	}
	d->txn = 0;
	d->ncommits++;
	vg_progress_release(d->pg, 1);
	return 0;
}

/* The longest a poll may wait (ms, -1: no limit) while the driver's
 * transaction is open: until GROUP_MS after its begin. */
static int
txn_wait(const struct drv *d, int timeout_ms)
{
	long long left;

	if (!d->txn)
		return timeout_ms;
	left = d->txn_t0 + d->group_ms - vg_mono_ms();
	if (left < 0)
		left = 0;
	return timeout_ms < 0 || timeout_ms > left ? (int)left : timeout_ms;
}

/* One pass: poll, then record everything in the driver's transaction,
 * committed when GROUP_MS have passed or an action needs it durable. */
static int
drive_step(struct drv *d, int timeout_ms, struct vg_err *e)
{
	struct vg_sched_update *ups = NULL;
	size_t nups = 0, k;
	int rc, fresh = !d->txn;

	if ((rc = vg_sched_poll(&d->sched, txn_wait(d, timeout_ms),
	    d->sigfd, &ups, &nups, e)) != 0)
		return rc;	/* the open steps are committed at the end */
	if ((rc = txn_open(d, e)) != 0)
		return rc;
	/* The connections the egress proxy saw end (backends/egress-run.h). */
	if ((rc = vg_egress_log_drain(d->st, d->m, d->run_id, e)) != 0)
		goto fail;
	for (k = 0; k < nups; k++)
		if ((rc = apply_update(d, &ups[k], e)) != 0)
			goto fail;
	if ((rc = read_signals(d, e)) != 0 ||
	    (!d->cancelling && (rc = after_gate(d, e)) != 0))
		goto fail;
	if ((rc = submit_ready(d, e)) != 0)
		goto fail;
	if ((rc = vg_sched_flush(&d->sched, e)) != 0)
		goto fail;
	/* A quiet step (a timer, a retry due) does not hold the lock on. */
	if (d->txn_now || (fresh && nups == 0) || d->group_ms <= 0 ||
	    vg_mono_ms() - d->txn_t0 >= d->group_ms)
		return txn_commit(d, e);
	return 0;
fail:
	txn_abort(d);
	return rc;
}

/* The group commit window of this drive: GROUP_MS, or VIGIL_GROUP_MS
 * (a bad value is told and GROUP_MS used: the run exists already); 0
 * where the scheduler sends tasks elsewhere (its polls wait on commands,
 * and other runs' after: read its handles). */
static void
group_ms_of(struct drv *d)
{
	const char *v = getenv("VIGIL_GROUP_MS");
	char *end;
	long ms;

	d->group_ms = vg_scheduler_has(d->sched.ops, VG_SCAP_LOCAL) ?
	    GROUP_MS : 0;
	if (v == NULL || *v == '\0' || d->group_ms == 0)
		return;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || ms < 0 || ms > GROUP_MS_MAX) {
		vg_warn("VIGIL_GROUP_MS='%s' ignored: expected milliseconds "
		    "from 0 to %d; using %d", v, GROUP_MS_MAX, GROUP_MS);
		return;
	}
	d->group_ms = (int)ms;
}

/* Milliseconds the next poll may wait. */
static int
poll_timeout(struct drv *d, struct vg_err *e)
{
	long long wait = -1, tick;
	double now = vg_now(), soon = 0;
	size_t k;

	(void)e;
	for (k = 0; k < d->nretry; k++) {
		const struct trec *t = &d->tr[d->retry[k]];

		if (t->state == VG_ST_PENDING &&
		    (soon == 0 || t->next_at < soon))
			soon = t->next_at;
	}
	if (soon > 0)
		wait = soon <= now ? 0 : (long long)ceil((soon - now) * 1000);
	if (d->pg != NULL && (tick = vg_progress_tick(d->pg)) >= 0 &&
	    (wait < 0 || tick < wait))
		wait = tick;
	if (d->after_gated && (wait < 0 || wait > AFTER_RECHECK * 1000))
		wait = (long long)(AFTER_RECHECK * 1000);
	if (wait > 60000)
		wait = 60000;
	return (int)wait;
}

/*
 * The start of a drive: claims the run (of two vigils driving one run,
 * the second stops here, before it touches a task), loads its task
 * records, opens the scheduler, the backend and the output stream, and
 * runs the first round (recovery, then every ready task handed over),
 * committed at once.
 */
static int
drive_begin(struct drv *d, struct vg_run_info *ri,
    const struct vg_run_opts *o, struct vg_err *e)
{
	const struct vg_manifest *m = d->m;
	long long t0, t1, t2;
	size_t i;
	int rc, had_owner;

	/* A submitted run's detached vigil records itself before driving. */
	had_owner = (ri->pid > 0 && ri->pid != getpid()) ||
	    ri->state != VG_ST_PENDING;
	if ((rc = vg_run_claim(d->st, ri, e)) != 0)
		return rc;
	d->run_dir = vg_xstrdup(ri->dir);
	d->pg = o->progress;
	d->created = ri->created;
	d->after_gated = m->after.n > 0;
	/* Row by row into the compact records: the full rows of a large
	 * run would cost eight times as much, even for a moment. */
	d->tr = vg_xcalloc(d->ts->n + 1, sizeof(*d->tr));
	d->ncap = d->ts->n;
	if ((rc = vg_store_task_each(d->st, d->run_id, -1, load_cb, d,
	    e)) != 0)
		return rc;
	if (d->n != d->ts->n)
		return vg_err_set(e, VG_ESTATE, "run '%s' has %zu tasks "
		    "recorded but its manifest expands to %zu", d->run_id,
		    d->n, d->ts->n);
	for (i = 0; i < d->n; i++) {
		if (d->tr[i].index != (int)i)
			return vg_err_set(e, VG_ESTATE, "run '%s': task %zu "
			    "is recorded as index %d", d->run_id, i,
			    d->tr[i].index);
		d->counts[d->tr[i].state]++;
	}
	d->live = vg_xcalloc(d->n + 1, sizeof(*d->live));
	d->backend = o->backend != NULL ? o->backend :
	    vg_backend_find(vg_manifest_plugin(m, VG_PLUGIN_BACKEND));
	if (d->pg != NULL)
		vg_progress_bind(d->pg, d->counts, d->n);
	if ((rc = sched_open(d, ri, o, e)) != 0)
		return rc;
	group_ms_of(d);
	if ((rc = backend_prepare(d, o, e)) != 0 ||
	    (rc = stream_open(d, o, e)) != 0)
		return rc;
	/* The lines of the reuse keys every task shares, inputs hashed. */
	if (m->reuse && d->unprepared == NULL) {
		d->reuse = vg_xcalloc(1, sizeof(*d->reuse));
		if ((rc = vg_reuse_init(d->reuse, d->st, m, d->backend,
		    e)) != 0)
			return rc;
	}
	/* Scratch lives where tasks run: here for direct; on the compute
	 * node (task-exec) for schedulers that send tasks elsewhere. */
	if (!d->sched.remote) {
		char *why = NULL;

		rc = vg_scratch_base(&m->scratch, vg_store_home(d->st),
		    &d->scratch_base, &why, e);
		free(why);
		if (rc != 0)
			return rc;
	}
	if (o->signals && (rc = signals_on(d, e)) != 0)
		return rc;
	t0 = vg_mono_ms();
	/* The first round, committed at once (the owner was recorded by
	 * the claim above). */
	if ((rc = txn_open(d, e)) != 0)
		return rc;
	rc = vg_store_run_set_state(d->st, d->run_id, VG_ST_RUNNING,
	    had_owner ? "resumed" : "started", e);
	if (rc == 0)
		rc = vg_drv_recover(d, had_owner, e);
	if (rc == 0 && d->unprepared != NULL)
		rc = unprepared_tasks(d, e);
	if (rc == 0)
		rc = after_gate(d, e);
	if (rc == 0)
		rc = submit_ready(d, e);
	t1 = vg_mono_ms();
	if (rc == 0)
		rc = vg_sched_flush(&d->sched, e);
	t2 = vg_mono_ms();
	if (rc == 0)
		rc = txn_commit(d, e);
	if (rc != 0) {
		txn_abort(d);
		return rc;
	}
	/* Where the first round's time goes (bench/slurm-submit.sh). */
	vg_debug("driver: first round: %zu task(s) recorded and handed over "
	    "in %lld ms, flush %lld ms, commit %lld ms", d->n, t1 - t0,
	    t2 - t1, vg_mono_ms() - t2);
	return 0;
}

/* The rounds after the first: polls and steps until every task ended. */
static int
drive_rounds(struct drv *d, struct vg_err *e)
{
	int rc;

	while (!all_done(d)) {
		if (vg_sched_active(&d->sched) == 0 && d->nretry == 0 &&
		    d->cursor >= d->n && !d->after_gated)
			return vg_err_set(e, VG_ESTATE, "run '%s': tasks left "
			    "open with nothing running (state database "
			    "edited?)", d->run_id);
		if ((rc = drive_step(d, poll_timeout(d, e), e)) != 0)
			return rc;
	}
	return 0;
}

/*
 * The end of a drive whose tasks all ended: the run's final state joins
 * the last steps' transaction (its rows written first: the claim reads
 * them), with the owner cleared and the notification claimed; then the
 * result, the progress line and the notification (told once, whichever
 * driver ended the run).
 */
static int
drive_end(struct drv *d, const struct vg_run_opts *o,
    struct vg_run_result *res, struct vg_err *e)
{
	int rc, notify = 0;

	res->state = vg_drv_final_state(d);
	if ((rc = txn_open(d, e)) == 0) {
		rc = row_flush(d, 1, e);
		if (rc == 0)
			rc = vg_store_run_set_state(d->st, d->run_id,
			    res->state, d->cancel_why, e);
		if (rc == 0)
			rc = vg_store_run_set_owner(d->st, d->run_id, 0, 0, e);
		if (rc == 0)
			rc = vg_notify_claim(d->st, d->run_id, d->m,
			    res->state, &notify, e);
		if (rc == 0)
			rc = txn_commit(d, e);
		if (rc != 0) {
			txn_abort(d);
			notify = 0;
		}
	}
	vg_debug("driver: %lu transaction(s) for %zu task(s), group %d ms",
	    d->ncommits, d->n, d->group_ms);
	memcpy(res->counts, d->counts, sizeof(res->counts));
	res->ntasks = (int)d->n;
	if (d->pg != NULL) {
		vg_progress_done(d->pg, res->state);
		usage_note(d);
	}
	if (notify)
		vg_notify_run(d->st, d->run_id, d->m, o->undelivered);
	return rc;
}

/* Releases what a drive holds; after a failure (failed), first stops
 * every attempt still running: nothing is left behind a failed driver.
 * What is open holds whole steps (a failed one was rolled back). */
static void
drive_release(struct drv *d, int failed)
{
	size_t i;

	if (d->txn) {
		struct vg_err ce;

		vg_err_init(&ce);
		if (txn_commit(d, &ce) != 0)
			vg_warn("run %s: %s", d->run_id, ce.msg);
	}
	if (failed && d->sched_open && d->live != NULL) {
		for (i = 0; i < d->n; i++)
			if (d->live[i] != NULL) {
				(void)vg_sched_cancel(&d->sched,
				    &d->live[i]->a, 1, NULL);
			}
	}
	if (d->sched_open)
		vg_sched_close(&d->sched);
	/* The pooled task directories first: they are in RUN/tmp, which
	 * the local backend's drive removes at its end when it is empty. */
	vg_dirpool_close(&d->dirs);
	vg_backend_unprepare(d->drive);
	/* What the egress proxy logged until it stopped (unprepare). */
	{
		struct vg_err ge;

		vg_err_init(&ge);
		if (vg_egress_log_drain(d->st, d->m, d->run_id, &ge) != 0)
			vg_warn("run %s: egress records: %s", d->run_id,
			    ge.msg);
	}
	if (d->live != NULL)
		for (i = 0; i < d->n; i++)
			vg_drv_box_free(d->live[i]);
	if (d->sw != NULL) {
		struct vg_err se;

		vg_err_init(&se);
		if (vg_stream_writer_close(d->sw, &se) != 0)
			vg_warn("run %s: %s", d->run_id, se.msg);
	}
	vg_drv_signals_off(d);
	free(d->live);
	free(d->tr);
	free(d->retry);
	free(d->dirty);
	free(d->adirty);
	if (d->tasks_fd >= 0)
		close(d->tasks_fd);
	free(d->run_dir);
	free(d->scratch_base);
	free(d->unprepared);
	vg_after_release(&d->after);
	vg_buf_release(&d->label);
	vg_reuse_release(d->reuse);
	free(d->reuse);
}

int
vg_run_drive(struct vg_store *st, const char *run_id,
    const struct vg_manifest *m, const struct vg_taskset *ts,
    const struct vg_run_opts *o, struct vg_run_result *res,
    struct vg_err *e)
{
	struct vg_run_info ri;
	struct drv d;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&d, 0, sizeof(d));
	d.sigfd = -1;
	d.tasks_fd = -1;
	d.dirs.fd = -1;
	d.st = st;
	d.run_id = run_id;
	d.m = m;
	d.ts = ts;
	if ((rc = vg_store_run_get(st, run_id, &ri, e)) != 0)
		return rc;
	rc = drive_begin(&d, &ri, o, e);
	if (rc == 0)
		rc = drive_rounds(&d, e);
	if (rc == 0)
		rc = drive_end(&d, o, res, e);
	drive_release(&d, rc != 0);
	vg_run_info_release(&ri);
	return rc;
}
