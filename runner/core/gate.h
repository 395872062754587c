/*
 * gate.h - the policy gate applied to every task of a run, before the run
 * is created: each command is evaluated (runner/policy/), every decision
 * is audited in the store, and in interactive mode a flagged command is
 * put to the user on the terminal.
 */
#ifndef VG_GATE_H
#define VG_GATE_H

#include <stddef.h>

#include "runner/manifest/manifest.h"
#include "runner/core/store.h"
#include "runner/manifest/task.h"

struct vg_gate_opts {
	const char	*mode;		/* --mode; NULL = the manifest's */
	int		 force_deny;	/* auto-deny whatever (submit) */
	const char	*home;		/* to name task dirs; NULL = none */
};

/*
 * Evaluates the command of every task of ts.  On success *deniedp holds
 * ts->n entries (the reason a task is refused, or NULL when it may run;
 * free with vg_gate_free) and *ndenied how many are refused.  Decisions
 * are audited with run_id in st when st is not NULL.  Returns VG_EINVAL
 * with diag filled for a bad policy or mode; blocks on the terminal in
 * interactive mode.
 */
int	vg_gate_tasks(const struct vg_manifest *m, const struct vg_taskset *ts,
	    const char *run_id, struct vg_store *st,
	    const struct vg_gate_opts *o, char ***deniedp, size_t *ndenied,
	    struct vg_diag *diag, struct vg_err *e);

void	vg_gate_free(char **denied, size_t n);

/* The effective mode's name after vg_gate_tasks ("auto-deny", ...). */
const char *vg_gate_mode_name(void);

/*
 * Evaluates one argv outside a task (notify.command) in m's policy mode,
 * interactive counting as auto-deny, and audits it as task task_index
 * of run_id in st (NULL: not audited).  *denied gets the reason it is
 * refused (caller frees) or NULL when it may run.
 */
int	vg_gate_argv(const struct vg_manifest *m, char *const argv[],
	    const char *run_id, int task_index, struct vg_store *st,
	    char **denied, struct vg_err *e);

#endif
