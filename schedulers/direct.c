/*
 * direct.c - the direct scheduler: runs attempts on this host, up to
 * --jobs at once, in one poll(2) loop over the attempts' pidfds and the
 * driver's wake fd.  Nothing sleeps: timeouts are deadlines that bound
 * the poll timeout.
 *
 * Per attempt, through the launcher chosen once in open (launcher.h:
 * the backend's own start, or srun job steps inside a Slurm allocation):
 * start, watch the pidfd, reap it with waitid(P_PIDFD) (kernels without
 * pidfds, and valgrind, fall back to a 20 ms waitid(P_PID) check), ask
 * the launcher how the attempt ended (the backend: vg_backend_finish at
 * once; a launcher may need a while, and is asked again every 250 ms),
 * then clean up.  A timeout (plus the launcher's slack) sends SIGTERM
 * through the launcher (the backend signals the whole task tree), then
 * SIGKILL after kill_grace; the result is TIMEOUT whatever the exit
 * status.  Cancel works the same way and yields CANCELLED.
 *
 * Packing: every attempt takes resources.cpus (default 1), gpus (default
 * 0) and memory (when given) from the pool where the backend runs them
 * (backends/gpu.h: this host, or the Slurm allocation vigil is in; a
 * cloud backend's pool is unbounded), and --jobs (default: the pool's
 * CPUs) caps how many run at once.  Attempts that do not fit wait in a
 * queue here; each time resources free, the queue is walked in task
 * order and every attempt that fits starts (first fit), so a small task
 * is never held behind a big one.  GPUs are given by id, lowest free
 * first, and never to two running attempts; an attempt that could never
 * fit fails at once.  The driver limits how many attempts it hands over
 * through s->window (3 x what can run at once), so memory stays flat for
 * large runs and the queue always holds the next tasks that could fit.
 * Where the backend runs a slot's attempts in a process kept for the
 * slot, the next queued attempt is handed to it ahead of time and starts
 * the moment the slot's attempt ends ("Ahead" below).
 *
 * Slots are numbered for the record (vg_sched_update.slot, the report's
 * lanes): an attempt that starts takes the lowest number no running
 * attempt holds, and one held behind another takes over its number.
 *
 * After a crash, reattach takes an attempt of the dead vigil over through
 * vg_backend_reattach (a monitor still running, adopted through its
 * pidfd, or a new one following what the attempt left); it counts as
 * running, beyond --jobs if need be.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/gpu.h"
#include "common/log.h"
#include "common/path.h"
#include "schedulers/launcher.h"
#include "schedulers/scheduler.h"
#include "common/str.h"
#include "runner/manifest/task.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Reap check interval where the kernel has no pidfds. */
#define NO_PIDFD_MS	20
/* Checks of a reaped attempt whose launcher does not know its end yet. */
#define SETTLE_MS	250

struct dslot {
	struct vg_attempt	*a;
	int			 own_pidfd;	/* we opened a->pidfd */
	int			 no_pidfd;	/* kernel without pidfds */
	long long		 term_at;	/* monotonic ms; 0 = none */
	long long		 kill_at;
	int			 timed_out;
	int			 cancelled;
	int			 exited;	/* reaped, end not known yet */
	int			 ws;		/* wait status when reaped */
	long long		 reaped_at;	/* monotonic ms */
	int			 cpus;		/* what it takes while it runs */
	uint64_t		 memory;
	int			 ngpus;
	int			*gpus;		/* pool indices, while running */
	int			 num;		/* slot number, 1-based, while
						   running; 0 = none */
	struct dslot		*next;		/* queue link */
	/* Held to start after another (ahead, below): the running slot it
	 * waits behind, and of a running slot the one held behind it. */
	int			 ahead;
	int			 dropped;	/* cancelled while held */
	struct dslot		*behind;
	struct dslot		*next_up;
};

struct direct {
	struct vg_launcher	 launch;
	struct dslot		**run;		/* runcap entries */
	size_t			 nrun;		/* running and held (nahead) */
	size_t			 nahead;
	size_t			 runcap;	/* 2 x jobs, or more after a
						   reattach */
	int			 executors;	/* VG_BCAP_EXECUTORS, through
						   the backend's launcher */
	int			 ahead_off;	/* the backend cannot hold */
	struct dslot		*qhead, *qtail;
	size_t			 nqueued;
	struct vg_sched_update	*ups;
	size_t			 nups, upcap;
	size_t			 returned;	/* handed out by the last poll */
	struct pollfd		*pfds;
	int			 subreaper;
	struct vg_pool		 pool;
	int			 cpus_free;
	uint64_t		 mem_free;
	unsigned char		*gpu_busy;	/* per pool GPU */
	unsigned char		*num_busy;	/* per slot number - 1 */
	size_t			 nnum;
};

/* Opens a pidfd for pid (Linux 5.3+). */
static int
pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Appends an update slot and returns it, zeroed. */
static struct vg_sched_update *
push_update(struct direct *d, struct vg_attempt *a, enum vg_state st)
{
	struct vg_sched_update *u;

	d->ups = vg_xgrow(d->ups, &d->upcap, d->nups + 1, sizeof(*d->ups));
	u = &d->ups[d->nups++];
	memset(u, 0, sizeof(*u));
	u->a = a;
	u->state = st;
	u->result.state = st;
	u->result.exit_code = -1;
	return u;
}

/* Reports a terminal update for an attempt that never ran. */
static void
push_never_ran(struct direct *d, struct vg_attempt *a, enum vg_state st,
    const char *reason)
{
	struct vg_sched_update *u = push_update(d, a, st);
	double now = vg_now();

	u->result.started = now;
	u->result.ended = now;
	vg_strlcpy(u->result.reason, reason, sizeof(u->result.reason));
	vg_strlcpy(u->reason, reason, sizeof(u->reason));
}

/* What attempt a takes from the pool, in sl. */
static void
slot_needs(struct dslot *sl, const struct vg_attempt *a)
{
	sl->cpus = a->res.cpus > 0 ? a->res.cpus : 1;
	sl->memory = a->res.memory;
	sl->ngpus = a->res.gpus > 0 ? a->res.gpus : 0;
}

/* Why sl could never fit in the pool (into why), or 0 when it could. */
static int
never_fits(const struct direct *d, const struct dslot *sl, char *why,
    size_t n)
{
	const struct vg_pool *p = &d->pool;

	if (p->unbounded)
		return 0;
	if (sl->ngpus > 0 && (size_t)sl->ngpus > p->ngpus)
		snprintf(why, n, "asks gpus: %d, the pool has %zu (from %s)",
		    sl->ngpus, p->ngpus, p->gpu_from);
	else if (sl->cpus > p->cpus)
		snprintf(why, n, "asks cpus: %d, the pool has %d (from %s)",
		    sl->cpus, p->cpus, p->cpu_from);
	else if (sl->memory > 0 && p->memory > 0 && sl->memory > p->memory)
		snprintf(why, n, "asks memory: %llu MiB, the pool has %llu "
		    "MiB (from %s)", (unsigned long long)(sl->memory >> 20),
		    (unsigned long long)(p->memory >> 20), p->mem_from);
	else
		return 0;
	return 1;
}

/* True when sl fits in what is free now. */
static int
fits_now(const struct direct *d, const struct dslot *sl)
{
	if (d->pool.unbounded)
		return 1;
	return sl->cpus <= d->cpus_free && (sl->memory == 0 ||
	    d->pool.memory == 0 || sl->memory <= d->mem_free) &&
	    (size_t)sl->ngpus <= d->pool.ngpus;
}

/* Takes sl's resources and, for GPUs, writes the assignment into its
 * attempt; 0 when the free GPUs were too few (nothing taken then). */
static int
slot_take(struct direct *d, struct dslot *sl)
{
	struct vg_attempt *a = sl->a;
	size_t i;
	int k = 0;

	if (d->pool.unbounded)
		return 1;
	for (i = 0; i < d->pool.ngpus; i++)
		k += !d->gpu_busy[i];
	if (k < sl->ngpus)
		return 0;
	sl->gpus = vg_xcalloc((size_t)sl->ngpus + 1, sizeof(*sl->gpus));
	a->gpu_set = 1;
	a->gpu_vendor = (int)d->pool.vendor;
	a->gpu_ids[0] = a->gpu_devs[0] = '\0';
	for (i = 0, k = 0; i < d->pool.ngpus && k < sl->ngpus; i++) {
		if (d->gpu_busy[i])
			continue;
		d->gpu_busy[i] = 1;
		sl->gpus[k++] = (int)i;
		vg_gpu_give(a->gpu_ids, sizeof(a->gpu_ids), a->gpu_devs,
		    sizeof(a->gpu_devs), &d->pool.gpus[i]);
	}
	d->cpus_free -= sl->cpus;
	if (d->pool.memory > 0)
		d->mem_free -= sl->memory;
	return 1;
}

/* Gives sl's resources back. */
static void
slot_release(struct direct *d, struct dslot *sl)
{
	int k;

	if (d->pool.unbounded || sl->gpus == NULL)
		return;
	for (k = 0; k < sl->ngpus; k++)
		d->gpu_busy[sl->gpus[k]] = 0;
	free(sl->gpus);
	sl->gpus = NULL;
	d->cpus_free += sl->cpus;
	if (d->pool.memory > 0)
		d->mem_free += sl->memory;
}

/* The lowest slot number no running attempt holds, now held. */
static int
num_take(struct direct *d)
{
	size_t k;

	for (k = 0; k < d->nnum && d->num_busy[k]; k++)
		;
	if (k == d->nnum) {
		d->num_busy = vg_xrealloc(d->num_busy, d->nnum + 1);
		d->num_busy[d->nnum++] = 0;
	}
	d->num_busy[k] = 1;
	return (int)k + 1;
}

/* Frees a slot, giving its resources and its number back. */
static void
slot_free(struct direct *d, struct dslot *sl)
{
	slot_release(d, sl);
	if (sl->num > 0 && (size_t)sl->num <= d->nnum)
		d->num_busy[sl->num - 1] = 0;
	free(sl);
}

/* Sets the deadline of slot sl that starts watching now. */
static void
slot_deadline(struct direct *d, struct dslot *sl)
{
	const struct vg_attempt *a = sl->a;

	if (a->timeout > 0)
		sl->term_at = vg_mono_ms() + (long long)((a->timeout +
		    (d->launch.ops->slack != NULL ? d->launch.ops->slack(a) :
		    0)) * 1000.0 + 0.5);
}

/* Has the launcher start sl's attempt (after ahead_of, when not NULL:
 * "Ahead" below); returns its rc. */
static int
launch_start(struct direct *d, struct dslot *sl,
    const struct vg_attempt *ahead_of, struct vg_err *e)
{
	struct vg_attempt *a = sl->a;
	int rc;

	vg_err_init(e);
	a->pid = 0;
	a->pidfd = -1;
	/* Slots are watched through a->pidfd and ended through finish, so
	 * a backend that declares executors may keep a process from one
	 * attempt to the next. */
	a->reuse_ok = d->executors;
	a->watch_only = 0;
	a->ahead_of = ahead_of;
	rc = d->launch.ops->start(&d->launch, a, e);
	a->ahead_of = NULL;
	return rc;
}

/* Reports BACKEND_ERROR for sl, whose start failed with e (DENIED when
 * the backend refused host access the policy does not allow), and drops
 * it. */
static void
start_failed(struct direct *d, struct dslot *sl, const struct vg_err *e)
{
	push_never_ran(d, sl->a, vg_backend_refused_host_access(e) ?
	    VG_ST_DENIED :
	    VG_ST_BACKEND_ERROR, e->msg[0] ? e->msg :
	    "backend failed to start the task");
	slot_free(d, sl);
}

/* Starts one queued attempt; reports RUNNING or BACKEND_ERROR. */
static void
slot_start(struct vg_sched *s, struct direct *d, struct dslot *sl)
{
	struct vg_attempt *a = sl->a;
	struct vg_sched_update *u;
	struct vg_err e;

	if (launch_start(d, sl, NULL, &e) != 0) {
		start_failed(d, sl, &e);
		return;
	}
	if (a->pidfd < 0) {
		if ((a->pidfd = pidfd_open_(a->pid)) < 0 && errno == ENOSYS) {
			/* Before Linux 5.3 (or under valgrind): fall back
			 * to polling waitid on a short timer. */
			sl->no_pidfd = 1;
		} else if (a->pidfd < 0) {
			/* The child is ours and cannot be gone unreaped, so
			 * this is resource exhaustion: stop it and report. */
			d->launch.ops->signal(&d->launch, a, SIGKILL);
			(void)waitpid(a->pid, NULL, 0);
			if (d->launch.ops->cleanup != NULL)
				d->launch.ops->cleanup(&d->launch, a);
			push_never_ran(d, a, VG_ST_BACKEND_ERROR,
			    "cannot watch the task: pidfd_open failed");
			slot_free(d, sl);
			return;
		} else
			sl->own_pidfd = 1;
	}
	if (a->started == 0)
		a->started = vg_now();
	slot_deadline(d, sl);
	sl->num = num_take(d);
	d->run[d->nrun++] = sl;
	u = push_update(d, a, VG_ST_RUNNING);
	snprintf(u->handle, sizeof(u->handle), "%ld", (long)a->pid);
	u->slot = sl->num;
}

/*
 * Ahead: where the backend runs attempts one after another in a process
 * kept for the slot (watch_only: local's executors, backends/shim.h),
 * the next queued attempt is handed to that process while the slot's
 * attempt still runs, and the process starts it the moment the running
 * one ends, without waiting for this loop to notice the end and start
 * it: the slot never idles for the driver.  A held attempt has not
 * started: it takes no resources, has no deadline and is QUEUED for the
 * driver; it becomes RUNNING (and takes what the one before it gave
 * back) when the end of the one before it is seen.  Cancelling it drops
 * it unstarted.
 */

/* Whether queued sl may be held behind running slot r: r runs in a kept
 * process, holds none yet and is not being stopped, and sl needs what r
 * gives back. */
static int
ahead_fits(const struct dslot *r, const struct dslot *sl)
{
	return !r->ahead && r->next_up == NULL && r->a->watch_only &&
	    !r->exited && !r->cancelled && !r->timed_out &&
	    r->kill_at == 0 && r->ngpus == 0 && sl->ngpus == 0 &&
	    sl->cpus == r->cpus && sl->memory == r->memory;
}

/* Hands the head of the queue to the process of each running slot that
 * can hold one, while the backend can. */
static void
start_ahead(struct direct *d)
{
	struct dslot *sl, *r;
	struct vg_err e;
	size_t i;
	int rc;

	for (i = 0; i < d->nrun && d->nrun < d->runcap && !d->ahead_off &&
	    d->qhead != NULL; i++) {
		r = d->run[i];
		sl = d->qhead;
		if (!ahead_fits(r, sl))
			continue;
		d->qhead = sl->next;
		if (d->qtail == sl)
			d->qtail = NULL;
		d->nqueued--;
		sl->next = NULL;
		rc = launch_start(d, sl, r->a, &e);
		if (rc == VG_EAGAIN || (rc == 0 && !sl->a->watch_only)) {
			/* Not held (nor started: a backend that holds none
			 * says EAGAIN): back to the head, and no more. */
			sl->next = d->qhead;
			d->qhead = sl;
			if (d->qtail == NULL)
				d->qtail = sl;
			d->nqueued++;
			d->ahead_off = 1;
			return;
		}
		if (rc != 0) {
			start_failed(d, sl, &e);
			continue;
		}
		sl->ahead = 1;
		sl->behind = r;
		r->next_up = sl;
		d->run[d->nrun++] = sl;
		d->nahead++;
	}
}

/* The slot held behind one that ended has started: it runs now. */
static void
promote(struct direct *d, struct dslot *q)
{
	struct vg_sched_update *u;

	q->ahead = 0;
	q->behind = NULL;
	d->nahead--;
	(void)slot_take(d, q);
	q->a->started = vg_now();
	slot_deadline(d, q);
	if (q->cancelled) {	/* dropped unstarted: its end follows */
		q->dropped = 1;
		return;
	}
	u = push_update(d, q->a, VG_ST_RUNNING);
	snprintf(u->handle, sizeof(u->handle), "%ld", (long)q->a->pid);
	u->slot = q->num;
}

/*
 * Starts queued attempts, first fit in task order: the queue is walked
 * once, and each attempt whose resources are free starts, while fewer
 * than --jobs run.
 */
static void
start_ready(struct vg_sched *s, struct direct *d)
{
	struct dslot *sl, *prev = NULL, *next;

	for (sl = d->qhead; sl != NULL && d->nrun - d->nahead <
	    (size_t)s->jobs; sl = next) {
		next = sl->next;
		if (!fits_now(d, sl) || !slot_take(d, sl)) {
			prev = sl;
			continue;
		}
		if (prev != NULL)
			prev->next = next;
		else
			d->qhead = next;
		if (d->qtail == sl)
			d->qtail = prev;
		d->nqueued--;
		sl->next = NULL;
		slot_start(s, d, sl);
	}
	start_ahead(d);
}

/* The backend m's attempts run on: s->backend, else by name. */
static const struct vg_backend_ops *
backend_of(const struct vg_manifest *m, const struct vg_backend_ops *ops)
{
	if (ops != NULL)
		return ops;
	return vg_backend_find(m != NULL && m->backend != NULL ? m->backend :
	    "local");
}

/* How many attempts asking r fit in p at once (at least 1). */
static int
fit_count(const struct vg_resources *r, const struct vg_pool *p)
{
	int cpus = r->cpus > 0 ? r->cpus : 1, n;

	n = p->cpus / cpus;
	if (r->gpus > 0 && (int)p->ngpus / r->gpus < n)
		n = (int)p->ngpus / r->gpus;
	if (r->memory > 0 && p->memory > 0 &&
	    (uint64_t)n > p->memory / r->memory)
		n = (int)(p->memory / r->memory);
	return n > 0 ? n : 1;
}

struct fit_walk {
	const struct vg_pool	*pool;
	int			 most;
};

/* Keeps the most attempts of one task that fit at once. */
static int
most_fit_fn(long index, const struct vg_resources *r, void *arg)
{
	struct fit_walk *fw = arg;
	int n = fit_count(r, fw->pool);

	(void)index;
	if (n > fw->most)
		fw->most = n;
	return 0;
}

/* How many of m's smallest tasks fit in p at once: the window must hold
 * enough of them to fill the pool. */
static int
most_fit(const struct vg_manifest *m, const struct vg_pool *p)
{
	struct fit_walk fw = { p, 1 };

	vg_expand_resources(m, most_fit_fn, &fw);
	return fw.most;
}

static int
direct_open(struct vg_sched *s, struct vg_err *e)
{
	struct direct *d;
	struct vg_launcher launch;
	struct vg_pool pool;
	const struct vg_backend_ops *ops = backend_of(s->m, s->backend);
	int subreaper = 0, rc, fit;

	if (ops == NULL)
		return vg_err_set(e, VG_EINVAL, "unknown backend '%s'",
		    s->m->backend);
	if ((rc = vg_launcher_open(&launch, ops, s, e)) != 0)
		return rc;
	memset(&pool, 0, sizeof(pool));
	if (s->m != NULL && (rc = vg_backend_pool(ops, s->m, &pool, e)) != 0) {
		vg_launcher_close(&launch);
		return rc;
	}
	if (s->m == NULL)
		pool.unbounded = 1;
	if (s->jobs <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		s->jobs = !pool.unbounded && pool.cpus > 0 ? pool.cpus :
		    n > 0 ? (int)n : 1;
	}
	d = vg_xcalloc(1, sizeof(*d));
	d->launch = launch;
	d->executors = launch.ops == &vg_launcher_backend &&
	    (ops->caps & VG_BCAP_EXECUTORS) != 0;
	d->ahead_off = !d->executors;
	d->pool = pool;
	d->cpus_free = pool.cpus;
	d->mem_free = pool.memory;
	d->gpu_busy = vg_xcalloc(pool.ngpus + 1, 1);
	d->runcap = 2 * (size_t)s->jobs;	/* running and held */
	d->run = vg_xcalloc(d->runcap, sizeof(*d->run));
	d->pfds = vg_xcalloc(d->runcap + 1, sizeof(*d->pfds));
	if (prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0)
		d->subreaper = subreaper;
	/* Keep three times what can run at once in hand: as many held
	 * behind the running ones (ahead), and as many again queued, so
	 * that a freed slot is refilled, and its next handed over, inside
	 * the same poll, without a round trip through the driver. */
	fit = pool.unbounded || s->m == NULL ? s->jobs : most_fit(s->m,
	    &pool);
	s->window = 3 * (fit < s->jobs ? fit : s->jobs);
	s->priv = d;
	return 0;
}

static int
direct_submit(struct vg_sched *s, struct vg_attempt *a, struct vg_err *e)
{
	struct direct *d = s->priv;
	struct dslot *sl;
	char why[384], reason[512];

	(void)e;
	sl = vg_xcalloc(1, sizeof(*sl));
	sl->a = a;
	slot_needs(sl, a);
	if (never_fits(d, sl, why, sizeof(why))) {
		/* A retry can grow past the pool (memory_factor). */
		snprintf(reason, sizeof(reason), "task %d %s: it can never "
		    "start here", a->task != NULL ? a->task->index : -1, why);
		push_never_ran(d, a, VG_ST_BACKEND_ERROR, reason);
		free(sl);
		return 0;
	}
	if (d->qtail != NULL)
		d->qtail->next = sl;
	else
		d->qhead = sl;
	d->qtail = sl;
	d->nqueued++;
	start_ready(s, d);
	return 0;
}

struct never_walk {
	struct direct	 d;		/* only its pool */
	long		 first;		/* index of the first misfit */
	long		 nbad;
	char		 why[384];
};

/* Counts the tasks that could never fit, keeping the first's reason. */
static int
never_fn(long index, const struct vg_resources *r, void *arg)
{
	struct never_walk *nw = arg;
	struct vg_attempt a;
	struct dslot sl;
	char why[384];

	memset(&a, 0, sizeof(a));
	memset(&sl, 0, sizeof(sl));
	a.res = *r;
	slot_needs(&sl, &a);
	if (never_fits(&nw->d, &sl, why, sizeof(why)) && nw->nbad++ == 0) {
		nw->first = index;
		memcpy(nw->why, why, sizeof(why));
	}
	return 0;
}

/* A task of several Slurm tasks (MPI ranks) needs the slurm scheduler;
 * direct runs one process per task. */
static int
parallel_refused(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_resources *r = &m->resources;
	struct vg_loc loc;

	if (r->nodes <= 1 && r->ntasks <= 1 && r->ntasks_per_node <= 1)
		return 0;
	vg_diag_add(d, vg_manifest_locf(m, &loc, "resources"),
	    "resources.nodes, ntasks and ntasks_per_node above 1 need "
	    "'scheduler: slurm' (the direct scheduler runs one process per "
	    "task)");
	return VG_EINVAL;
}

/* True when m asks for more than one CPU, GPUs or memory somewhere. */
static int
asks_resources(const struct vg_manifest *m)
{
	return m->resources.tmpl.n > 0 || m->resources.cpus > 1 ||
	    m->resources.gpus > 0 || m->resources.memory != 0;
}

/*
 * plugin validate: a task of several Slurm tasks is refused, and so is a
 * pool that cannot be built from what the configs say (pool.gpus naming
 * a GPU that is not there).  Whether every task fits in the pool is a
 * fact of this host: host_check.
 */
static int
direct_validate(const struct vg_manifest *m, struct vg_diag *diag)
{
	const struct vg_backend_ops *ops = backend_of(m, NULL);
	struct vg_loc loc = { .file = m->file };
	struct vg_pool pool;
	struct vg_err e;

	if (parallel_refused(m, diag) != 0)
		return VG_EINVAL;
	if (ops == NULL || !asks_resources(m))
		return 0;
	memset(&pool, 0, sizeof(pool));
	vg_err_init(&e);
	if (vg_backend_pool(ops, m, &pool, &e) != 0) {
		vg_diag_add(diag, &loc, "%s", e.msg);
		return VG_EINVAL;
	}
	vg_pool_release(&pool);
	return 0;
}

/*
 * plugin op host_check: a task that could never fit in the pool where
 * the backend runs it (this host's CPUs, memory and GPUs for local),
 * naming the (first such) task, what it asks and what there is.
 */
static void
direct_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	const struct vg_backend_ops *ops = backend_of(m, NULL);
	struct never_walk nw;
	struct vg_err e;
	char more[64] = "";

	if (ops == NULL || !asks_resources(m))
		return;
	memset(&nw, 0, sizeof(nw));
	vg_err_init(&e);
	if (vg_backend_pool(ops, m, &nw.d.pool, &e) != 0)
		return;		/* validate said why */
	vg_expand_resources(m, never_fn, &nw);
	vg_pool_release(&nw.d.pool);
	if (nw.nbad == 0)
		return;
	if (nw.first < 0 && vg_expand_count(m) > 1)
		snprintf(more, sizeof(more), " (and every other task)");
	else if (nw.nbad > 1)
		snprintf(more, sizeof(more), " (and %ld other task%s)",
		    nw.nbad - 1, nw.nbad > 2 ? "s" : "");
	vg_strv_pushf(why, "resources: task %ld%s %s, so it could never "
	    "start with scheduler 'direct' (ask less, or run it where there "
	    "is more)", nw.first < 0 ? 0 : nw.first, more, nw.why);
}

/* Converts a waitid result into a wait(2) status word. */
static int
wstatus_of(const siginfo_t *si)
{
	switch (si->si_code) {
	case CLD_EXITED:
		return (si->si_status & 0xff) << 8;
	case CLD_DUMPED:
		return (si->si_status & 0x7f) | 0x80;
	default:
		return si->si_status & 0x7f;
	}
}

/* Removes running slot i (order does not matter). */
static void
run_remove(struct direct *d, size_t i)
{
	d->run[i] = d->run[--d->nrun];
	d->run[d->nrun] = NULL;
}

/* Reports the end of running slot i with result r and drops the slot. */
static void
slot_done(struct direct *d, size_t i, struct vg_result *r)
{
	struct dslot *sl = d->run[i], *next;
	struct vg_attempt *a = sl->a;
	struct vg_sched_update *u;

	if (r->ended == 0)
		r->ended = vg_now();
	if (r->started == 0)
		r->started = a->started;
	if (sl->timed_out) {
		r->state = VG_ST_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason), "timed out after %gs",
		    a->timeout);
	} else if (sl->cancelled && r->state != VG_ST_SUCCEEDED &&
	    !((sl->ahead || sl->dropped) && r->state == VG_ST_CANCELLED)) {
		/* (a held one dropped unstarted says so itself) */
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "cancelled");
	}
	if (sl->own_pidfd && a->pidfd >= 0) {
		close(a->pidfd);
		a->pidfd = -1;
	}
	if (d->launch.ops->cleanup != NULL)
		d->launch.ops->cleanup(&d->launch, a);
	u = push_update(d, a, r->state);
	u->result = *r;
	vg_strlcpy(u->reason, r->reason, sizeof(u->reason));
	snprintf(u->handle, sizeof(u->handle), "%ld", (long)a->pid);
	u->slot = sl->num;
	run_remove(d, i);
	if (sl->ahead) {
		/* It ended held (refused, dropped, or its process gone). */
		sl->behind->next_up = NULL;
		d->nahead--;
	}
	next = sl->next_up;
	if (next != NULL && !sl->ahead) {
		/* The one held behind runs in the same process: its slot. */
		next->num = sl->num;
		sl->num = 0;
	}
	slot_free(d, sl);
	if (next != NULL)
		promote(d, next);
}

/*
 * Asks the launcher how reaped slot i ended and reports it when known;
 * returns 1 then.  Until it is known the slot waits, its pidfd closed.
 */
static int
slot_settle(struct direct *d, size_t i)
{
	struct dslot *sl = d->run[i];
	struct vg_result r;
	enum vg_launch_end end;

	memset(&r, 0, sizeof(r));
	end = d->launch.ops->ended(&d->launch, sl->a, sl->ws, vg_mono_ms() -
	    sl->reaped_at, sl->cancelled || sl->timed_out, &r);
	if (end == VG_LAUNCH_WAIT) {
		if (sl->own_pidfd && sl->a->pidfd >= 0) {
			close(sl->a->pidfd);
			sl->a->pidfd = -1;
		}
		sl->exited = 1;
		return 0;
	}
	if (end == VG_LAUNCH_RECORDED)
		sl->timed_out = 0;
	slot_done(d, i, &r);
	return 1;
}

/* Reaps running slot i if its process ended; returns 1 when it did. */
static int
slot_reap(struct direct *d, size_t i)
{
	struct dslot *sl = d->run[i];
	struct vg_attempt *a = sl->a;
	siginfo_t si;

	if (sl->exited)
		return slot_settle(d, i);
	if (a->watch_only) {
		/* Readable: the attempt ended; finish has its status. */
		sl->ws = 0;
		sl->reaped_at = vg_mono_ms();
		return slot_settle(d, i);
	}
	memset(&si, 0, sizeof(si));
	if (waitid(sl->no_pidfd ? P_PID : (idtype_t)P_PIDFD, sl->no_pidfd ?
	    (id_t)a->pid : (id_t)a->pidfd, &si, WEXITED | WNOHANG) != 0) {
		if (errno == EINTR)
			return 0;
		/* ECHILD: someone else reaped it; the status is lost. */
		memset(&si, 0, sizeof(si));
		si.si_pid = a->pid;
		si.si_code = CLD_KILLED;
		si.si_status = SIGKILL;
	}
	if (si.si_pid == 0)
		return 0;
	sl->ws = wstatus_of(&si);
	sl->reaped_at = vg_mono_ms();
	return slot_settle(d, i);
}

/* Signals the attempt of slot sl unless it was reaped; errors are
 * ignored (it may be gone). */
static void
slot_signal(struct direct *d, struct dslot *sl, int sig)
{
	if (!sl->exited)
		d->launch.ops->signal(&d->launch, sl->a, sig);
}

/* Acts on passed deadlines; returns the nearest future one (0 = none). */
static long long
deadlines(struct direct *d, long long now)
{
	struct dslot *sl;
	long long next = 0, grace;
	size_t i;

	for (i = 0; i < d->nrun; i++) {
		sl = d->run[i];
		if (sl->kill_at == 0 && sl->term_at != 0 &&
		    now >= sl->term_at) {
			sl->timed_out = 1;
			slot_signal(d, sl, SIGTERM);
			grace = (long long)(sl->a->kill_grace * 1000.0 + 0.5);
			sl->kill_at = now + (grace > 0 ? grace : 1);
		} else if (sl->kill_at != 0 && now >= sl->kill_at) {
			slot_signal(d, sl, SIGKILL);
			/* Keep killing once a second until it is gone: a
			 * tree can fork between two sweeps. */
			sl->kill_at = now + 1000;
		}
		if (sl->kill_at != 0) {
			if (next == 0 || sl->kill_at < next)
				next = sl->kill_at;
		} else if (sl->term_at != 0 &&
		    (next == 0 || sl->term_at < next))
			next = sl->term_at;
	}
	return next;
}

/* True when pid belongs to a running attempt. */
static int
tracked(const struct direct *d, pid_t pid)
{
	size_t i;

	for (i = 0; i < d->nrun; i++)
		if (d->run[i]->a->pid == pid)
			return 1;
	return 0;
}

/*
 * As a child subreaper, vigil inherits the orphans of task trees; they
 * must be reaped or they stay zombies.  Tracked children are left for
 * their pidfd.
 */
static void
reap_strays(struct direct *d)
{
	siginfo_t si;

	if (!d->subreaper)
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    si.si_pid == 0 || tracked(d, si.si_pid))
			return;
		(void)waitpid(si.si_pid, NULL, WNOHANG);
	}
}

/* The entry of slot sl in the running slots, or d->nrun. */
static size_t
run_index(const struct direct *d, const struct dslot *sl)
{
	size_t j;

	for (j = 0; j < d->nrun && d->run[j] != sl; j++)
		;
	return j;
}

/* True when fd is readable now. */
static int
fd_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* Reaps slot j whose descriptor is readable; a held slot's, after the
 * one it waits behind when that ended too (so that it is seen to start
 * before it is seen to end). */
static void
reap_in_order(struct direct *d, size_t j)
{
	struct dslot *q = d->run[j], *r = q->behind;

	if (q->ahead && r != NULL && !r->exited && !r->no_pidfd &&
	    fd_ready(r->a->pidfd)) {
		(void)slot_reap(d, run_index(d, r));
		if ((j = run_index(d, q)) == d->nrun)
			return;
	}
	(void)slot_reap(d, j);
}

static int
direct_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
    struct vg_sched_update **ups, size_t *n, struct vg_err *e)
{
	struct direct *d = s->priv;
	long long now, next;
	size_t i, np, nrun;
	int to, rc;

	/* Forget what the last poll handed out; keep what came since. */
	if (d->returned > 0) {
		memmove(d->ups, d->ups + d->returned,
		    (d->nups - d->returned) * sizeof(*d->ups));
		d->nups -= d->returned;
		d->returned = 0;
	}
	now = vg_mono_ms();
	next = deadlines(d, now);
	to = timeout_ms;
	if (next != 0 && (to < 0 || next - now < to))
		to = (int)(next - now > 0 ? next - now : 0);
	if (d->nups > 0)
		to = 0;
	np = 0;
	if (wake_fd >= 0) {
		d->pfds[np].fd = wake_fd;
		d->pfds[np].events = POLLIN;
		np++;
	}
	nrun = d->nrun;
	for (i = 0; i < nrun; i++) {
		if (d->run[i]->exited) {
			if (to < 0 || to > SETTLE_MS)
				to = SETTLE_MS;
			continue;
		}
		if (d->run[i]->no_pidfd) {
			if (to < 0 || to > NO_PIDFD_MS)
				to = NO_PIDFD_MS;
			continue;
		}
		d->pfds[np].fd = d->run[i]->a->pidfd;
		d->pfds[np].events = POLLIN;
		np++;
	}
	rc = poll(d->pfds, np, to);
	if (rc < 0 && errno != EINTR)
		return vg_err_errno(e, "poll");
	if (rc > 0) {
		/* Slots move when one is removed: walk from the end, and
		 * match by fd rather than by position. */
		for (i = np; i-- > (wake_fd >= 0 ? 1u : 0u); ) {
			size_t j;

			if (!(d->pfds[i].revents & (POLLIN | POLLHUP |
			    POLLERR | POLLNVAL)))
				continue;
			for (j = 0; j < d->nrun; j++)
				if (!d->run[j]->no_pidfd &&
				    !d->run[j]->exited &&
				    d->run[j]->a->pidfd == d->pfds[i].fd)
					break;
			if (j < d->nrun)
				reap_in_order(d, j);
		}
	}
	for (i = d->nrun; i-- > 0; )
		if (d->run[i]->no_pidfd || d->run[i]->exited)
			(void)slot_reap(d, i);
	reap_strays(d);
	(void)deadlines(d, vg_mono_ms());
	start_ready(s, d);
	*ups = d->ups;
	*n = d->nups;
	d->returned = d->nups;
	return 0;
}

static int
direct_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
    struct vg_err *e)
{
	struct direct *d = s->priv;
	struct dslot *sl, *prev, **pp;
	long long grace;
	size_t i;

	(void)e;
	prev = NULL;
	for (pp = &d->qhead; (sl = *pp) != NULL; pp = &sl->next) {
		if (sl->a != a) {
			prev = sl;
			continue;
		}
		*pp = sl->next;
		if (d->qtail == sl)
			d->qtail = prev;
		d->nqueued--;
		free(sl);
		push_never_ran(d, a, VG_ST_CANCELLED,
		    "cancelled before it started");
		return 0;
	}
	for (i = 0; i < d->nrun; i++) {
		sl = d->run[i];
		if (sl->a != a)
			continue;
		if (force) {
			sl->cancelled = 1;
			slot_signal(d, sl, SIGKILL);
			return 0;
		}
		/* Already on its way: the grace is not started again. */
		if (sl->cancelled)
			return 0;
		sl->cancelled = 1;
		slot_signal(d, sl, SIGTERM);
		grace = (long long)(a->kill_grace * 1000.0 + 0.5);
		sl->kill_at = vg_mono_ms() + (grace > 0 ? grace : 1);
		return 0;
	}
	return 0;
}

/*
 * Takes over an attempt of a dead vigil through the backend
 * (vg_backend_reattach: its surviving monitor, its record, or a new
 * monitor following what it left), counting it as running even beyond
 * --jobs.  Job steps (srun) are not taken over: VG_EUNSUPPORTED, and the
 * driver kills and runs them again.
 */
static int
direct_reattach(struct vg_sched *s, struct vg_attempt *a, const char *handle,
    struct vg_err *e)
{
	struct direct *d = s->priv;
	struct vg_sched_update *u;
	struct dslot *sl;
	int rc;

	(void)handle;
	if (d->launch.ops != &vg_launcher_backend)
		return vg_err_set(e, VG_EUNSUPPORTED, "%s attempts are not "
		    "taken over", d->launch.ops->name);
	if ((rc = vg_backend_reattach(d->launch.backend, a, e)) != 0)
		return rc;
	if (d->nrun >= d->runcap) {
		d->runcap *= 2;
		d->run = vg_xrealloc(d->run, d->runcap * sizeof(*d->run));
		d->pfds = vg_xrealloc(d->pfds, (d->runcap + 1) *
		    sizeof(*d->pfds));
	}
	sl = vg_xcalloc(1, sizeof(*sl));
	sl->a = a;
	sl->own_pidfd = 1;
	slot_needs(sl, a);
	/* It runs whatever the pool says; GPUs only when some are free. */
	(void)slot_take(d, sl);
	slot_deadline(d, sl);
	sl->num = num_take(d);
	d->run[d->nrun++] = sl;
	u = push_update(d, a, VG_ST_RUNNING);
	snprintf(u->handle, sizeof(u->handle), "%ld", (long)a->pid);
	u->slot = sl->num;
	return 0;
}

static size_t
direct_active(struct vg_sched *s)
{
	struct direct *d = s->priv;
	size_t i, n;

	if (d == NULL)
		return 0;
	/* A terminal update not yet handed out (a start that failed at once)
	 * belongs to an attempt that is neither running nor queued, and the
	 * driver still waits for it. */
	n = d->nrun + d->nqueued;
	for (i = d->returned; i < d->nups; i++)
		if (vg_state_terminal(d->ups[i].state))
			n++;
	return n;
}

static void
direct_close(struct vg_sched *s)
{
	struct direct *d = s->priv;
	struct dslot *sl, *next;
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->nrun; i++) {
		if (d->run[i]->own_pidfd && d->run[i]->a->pidfd >= 0) {
			close(d->run[i]->a->pidfd);
			d->run[i]->a->pidfd = -1;
		}
		slot_free(d, d->run[i]);
	}
	for (sl = d->qhead; sl != NULL; sl = next) {
		next = sl->next;
		free(sl);
	}
	free(d->run);
	free(d->pfds);
	free(d->gpu_busy);
	free(d->num_busy);
	vg_pool_release(&d->pool);
	free(d->ups);
	vg_launcher_close(&d->launch);
	free(d);
	s->priv = NULL;
}

static const struct vg_msection *const direct_sections[] = {
	&vg_pool_msection, NULL
};

const struct vg_scheduler_ops vg_scheduler_direct = {
	.caps = VG_SCAP_LOCAL,
	.p = {
		.kind = VG_PLUGIN_SCHEDULER,
		.name = "direct",
		.flags = VG_PLUGIN_DEFAULT,
		.help = "on this host (or as job steps inside an allocation)",
		.sections = direct_sections,
		.validate = direct_validate,
		.host_check = direct_host_check,
	},
	.open = direct_open,
	.submit = direct_submit,
	.poll = direct_poll,
	.cancel = direct_cancel,
	.reattach = direct_reattach,
	.active = direct_active,
	.close = direct_close,
};
