/*
 * run-recover.c - a resumed drive takes over what a dead vigil left in
 * flight: each attempt it recorded QUEUED or RUNNING is handed back to
 * the scheduler's reattach when it can take it (its box as the dead
 * vigil started it), and otherwise whatever is left of it is killed and
 * the task runs again; tasks the dead vigil never recorded are started
 * as new.  The driver's state is runner/core/run-int.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch/scratch.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"
#include "runner/core/leftover.h"
#include "runner/core/run-int.h"

/*
 * The attempt box of in-flight task i as the dead vigil started it, handed
 * to the scheduler's reattach; NULL (e says why) when it could not be
 * taken over.
 */
static struct box *
recover_box(struct drv *d, size_t i, const struct tstrings *s,
    struct vg_err *e)
{
	const struct trec *t = &d->tr[i];
	struct box *b = vg_xcalloc(1, sizeof(*b));
	double ran;

	b->task_dir = vg_run_task_dir(d->run_dir, t->index);
	vg_drv_box_fill(d, i, b, t->attempts);
	b->s = *s;
	if (vg_scheduler_has(d->sched.ops, VG_SCAP_LOCAL)) {
		/* Its LOST (nothing left to follow) is an interruption. */
		b->reattached = 1;
		/* A process of this host, watched from now on: what is
		 * left of its time limit (at least a second). */
		ran = t->started > 0 ? vg_now() - t->started : 0;
		if (b->a.timeout > 0 && ran > 0)
			b->a.timeout = b->a.timeout - ran > 1 ?
			    b->a.timeout - ran : 1;
		b->a.pid = t->pid;
		b->a.pid_start = t->pid_start;
		b->a.started = t->started;
	}
	vg_err_init(e);
	/* The same scratch directory as the attempt was given (reused). */
	if (d->scratch_base != NULL && vg_scratch_task_dir_min(d->scratch_base,
	    d->run_id, t->index, 0, &b->scratch_dir, e) == 0)
		b->a.scratch_dir = b->scratch_dir;
	vg_err_init(e);
	if (vg_sched_reattach(&d->sched, &b->a, s->handle, e) == 0)
		return b;
	vg_drv_box_free(b);
	return NULL;
}

/* Removes, through the backend's reap, what attempt of task i that could
 * not be taken over left running (a container, a remote task). */
static void
recover_reap(struct drv *d, size_t i)
{
	struct vg_err re;
	char *dir;

	if (d->backend == NULL || !vg_backend_can_reap(d->backend))
		return;
	dir = vg_run_task_dir(d->run_dir, d->tr[i].index);
	(void)vg_backend_monitor_kill(dir, 0);
	free(dir);
	vg_err_init(&re);
	if (vg_backend_reap(d->backend, d->m, d->run_id, d->tr[i].index, NULL,
	    &re) != 0)
		vg_warn("run %s: task %d: leftovers not removed: %s",
		    d->run_id, d->tr[i].index, re.msg);
}

/*
 * Kills what attempts started in the instant between their start and its
 * record left: the whole run's processes at once, unless attempts were
 * taken over (their tasks' processes, in containers too, carry the same
 * VIGIL_RUN_ID); then each task recorded PENDING whose directory exists
 * (a start makes it), and the monitor such a start recorded.
 */
static void
recover_unrecorded(struct drv *d)
{
	struct stat sb;
	size_t i;
	char *dir;
	int taken = 0;

	for (i = 0; i < d->n; i++)
		taken += d->live[i] != NULL;
	if (!taken) {
		(void)vg_kill_leftovers(d->run_id, -1, NULL, NULL);
		return;
	}
	for (i = 0; i < d->n; i++) {
		if (d->live[i] != NULL || d->tr[i].state != VG_ST_PENDING)
			continue;
		dir = vg_run_task_dir(d->run_dir, d->tr[i].index);
		if (stat(dir, &sb) == 0) {
			(void)vg_backend_monitor_kill(dir,
			    d->tr[i].attempts + 1);
			(void)vg_kill_leftovers(d->run_id, d->tr[i].index,
			    NULL, NULL);
		}
		free(dir);
	}
}

/*
 * Takes over attempts a dead vigil left QUEUED or RUNNING: reattach when
 * the scheduler can, else kill what is left and run the task again.
 */
int
vg_drv_recover(struct drv *d, int had_owner, struct vg_err *e)
{
	struct trec *t;
	struct tstrings s;
	struct vg_err ke;
	struct box *b;
	const char *why = "interrupted: vigil exited";
	size_t i;
	int rc, swept = 0;

	for (i = 0; i < d->n; i++) {
		t = &d->tr[i];
		if (t->cancel_req && !vg_state_terminal(t->state)) {
			/* vigil cancel ran while no vigil owned the run. */
			if ((rc = vg_drv_set_task(d, i, VG_ST_CANCELLED, t->attempts,
			    "cancelled by vigil cancel", e)) != 0)
				return rc;
			continue;
		}
		if (t->state == VG_ST_PENDING) {
			if (t->next_at > 0)
				vg_drv_retry_add(d, i);
			continue;
		}
		if (vg_state_terminal(t->state))
			continue;
		/* QUEUED, RUNNING, SUSPENDED, REQUEUED: in flight.  The
		 * scheduler takes it over when it can: slurm by job id (with
		 * no handle recorded, because vigil died between handing the
		 * attempt over and recording its job id, from its job
		 * journal); direct through the backend, when the attempt runs
		 * behind a monitor (its monitor, its record, or what it left
		 * running where the backend runs it). */
		if ((rc = vg_drv_task_strings(d, i, &s, e)) != 0)
			return rc;
		if ((b = recover_box(d, i, &s, &ke)) != NULL) {
			d->live[i] = b;
			continue;
		}
		/* (VG_ENOENT from the direct scheduler: the attempt never
		 * started, so nothing of it is left to kill or reap.) */
		if (vg_scheduler_has(d->sched.ops, VG_SCAP_LOCAL) &&
		    t->pid > 0 && vg_pid_is(t->pid, t->pid_start)) {
			/* Its exit status can never be collected now. */
			(void)kill(-t->pid, SIGKILL);
			(void)kill(t->pid, SIGKILL);
		}
		if (vg_scheduler_has(d->sched.ops, VG_SCAP_LOCAL) &&
		    ke.rc != VG_ENOENT) {
			(void)vg_kill_leftovers(d->run_id, t->index, NULL, NULL);
			swept = 1;
			recover_reap(d, i);
		}
		if ((rc = vg_drv_put_attempt(d, t, &s, t->attempts, VG_ST_LOST, 1, NULL,
		    vg_now(), why, e)) != 0)
			return rc;
		if ((rc = vg_store_event(d->st, d->run_id, t->index,
		    t->attempts, VG_ST_LOST, why, e)) != 0)
			return rc;
		t->next_at = 0;
		t->pid = 0;
		t->pid_start = 0;
		if ((rc = vg_drv_set_task(d, i, VG_ST_PENDING, t->attempts,
		    "interrupted: vigil exited; runs again", e)) != 0)
			return rc;
	}
	/* Processes started but not yet recorded when vigil died. */
	if (had_owner && !swept && vg_scheduler_has(d->sched.ops,
	    VG_SCAP_LOCAL))
		recover_unrecorded(d);
	return 0;
}
