/*
 * launcher.c - the choice of the direct scheduler's launcher and the
 * plain one: an attempt is the backend's own start (vg_backend_start),
 * signalled through vg_backend_cancel, its result from vg_backend_finish
 * at once, released with vg_backend_cleanup.  The srun launcher is in
 * slurm-step.c; see launcher.h.
 */
#include <stdio.h>
#include <string.h>

#include "schedulers/launcher.h"


/* Starts a through the run's backend. */
static int
backend_start(struct vg_launcher *l, struct vg_attempt *a, struct vg_err *e)
{
	return vg_backend_start(l->backend, a, e);
}

/* Signals the whole attempt through its backend. */
static void
backend_signal(struct vg_launcher *l, struct vg_attempt *a, int sig)
{
	(void)l;
	(void)vg_backend_cancel(a, sig, NULL);
}

/* The backend's account of the wait status; known at once. */
static enum vg_launch_end
backend_ended(struct vg_launcher *l, struct vg_attempt *a, int ws,
    long long waited_ms, int stopping, struct vg_result *r)
{
	struct vg_err e;

	(void)l;
	(void)waited_ms;
	(void)stopping;
	vg_err_init(&e);
	if (vg_backend_finish(a, ws, r, &e) != 0) {
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof(r->reason), "%.*s",
		    (int)sizeof(r->reason) - 1, e.msg);
	}
	return VG_LAUNCH_DONE;
}

/* Releases what the backend's start made. */
static void
backend_cleanup(struct vg_launcher *l, struct vg_attempt *a)
{
	(void)l;
	vg_backend_cleanup(a);
}

const struct vg_launcher_ops vg_launcher_backend = {
	.name = "backend",
	.start = backend_start,
	/* a monitor that enforces the timeout itself finishes first */
	.slack = vg_backend_timeout_slack,
	.signal = backend_signal,
	.ended = backend_ended,
	.cleanup = backend_cleanup,
};

/* Opens ops in l: 1 when it applies here, 0 when not, or a vg_rc. */
static int
try_open(struct vg_launcher *l, const struct vg_launcher_ops *ops,
    const struct vg_backend_ops *backend, struct vg_sched *s,
    struct vg_err *e)
{
	int rc;

	memset(l, 0, sizeof(*l));
	l->ops = ops;
	l->backend = backend;
	rc = ops->open != NULL ? ops->open(l, s, e) : 1;
	if (rc > 0)
		s->remote = ops->remote;
	return rc;
}

/* Opens the first launcher that applies; see launcher.h.  The
 * schedulers' own (vg_schedulers[], in their order), then the backend's,
 * which always applies. */
int
vg_launcher_open(struct vg_launcher *l, const struct vg_backend_ops *backend,
    struct vg_sched *s, struct vg_err *e)
{
	size_t i;
	int rc;

	for (i = 0; vg_schedulers[i] != NULL; i++)
		if (vg_schedulers[i]->launcher != NULL && (rc = try_open(l,
		    vg_schedulers[i]->launcher, backend, s, e)) != 0)
			return rc < 0 ? rc : 0;
	rc = try_open(l, &vg_launcher_backend, backend, s, e);
	if (rc < 0)
		return rc;
	return rc > 0 ? 0 : vg_err_set(e, VG_EINVAL, "no launcher applies");
}

/* Closes the open launcher l. */
void
vg_launcher_close(struct vg_launcher *l)
{
	if (l->ops != NULL && l->ops->close != NULL)
		l->ops->close(l);
	l->priv = NULL;
}
