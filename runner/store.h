/*
 * store.h - run state in one sqlite database, $VIGIL_HOME/vigil.db (WAL,
 * busy timeout, schema version with migrations, modes 0700/0600).
 *
 * Tables: runs, tasks, attempts, events (every state change with time and
 * reason) and audit (every policy decision).  Output files live in the run
 * directory ($VIGIL_HOME/runs/<run-id>/tasks/<index>/), never here.
 *
 * Every write is durable when the call returns (synchronous=NORMAL in WAL
 * mode; the driver batches per-poll updates in one transaction with
 * vg_store_begin/commit).  All calls block on the database lock for at
 * most the busy timeout.
 */
#ifndef VG_STORE_H
#define VG_STORE_H

#include <stdint.h>

#include "err.h"
#include "state.h"

struct vg_store;

/* Where vigil keeps state: $VIGIL_HOME, else $XDG_STATE_HOME/vigil, else
 * ~/.local/state/vigil.  Caller frees. */
char	*vg_home_dir(void);

int	vg_store_open(const char *home, struct vg_store **sp, struct vg_err *e);
void	vg_store_close(struct vg_store *s);

int	vg_store_begin(struct vg_store *s, struct vg_err *e);
int	vg_store_commit(struct vg_store *s, struct vg_err *e);

/* One policy decision, as the gate reports it (policy/audit.c). */
struct vg_audit_rec {
	double		 time;
	const char	*run_id;	/* NULL for vigil check / exec */
	int		 task_index;	/* -1 when none */
	const char	*mode;		/* auto-deny, auto-approve, ... */
	const char	*command;	/* already redacted */
	const char	*verdict;	/* allow | deny | ask-allow | ask-deny */
	const char	*category;	/* NULL when allowed with no finding */
	const char	*rule;		/* rule id, or NULL */
	const char	*reason;
};

int	vg_store_audit(struct vg_store *s, const struct vg_audit_rec *rec,
	    struct vg_err *e);

#endif
