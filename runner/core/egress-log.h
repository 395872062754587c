/*
 * egress-log.h - the connections of a run's tasks through vigil's
 * egress proxy (docs/egress.md), recorded and summed.
 *
 * The driver takes the records the proxy's reader queued
 * (backends/egress-run.h) and writes each as an event of its task
 * ("egress: " and the record as JSON, task -1 when the kernel named no
 * task) and as an audit record (mode "egress", verdict allow or deny,
 * category "egress", the deciding rule), in the store and in the audit
 * file when the policy names one.  vigil status, the report and --cron
 * read the events back, summed per task and host (vg_egress_sum_*):
 * only vigil writes events, so what a task writes in its run directory
 * changes nothing here.
 */
#ifndef VG_EGRESS_LOG_H
#define VG_EGRESS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "runner/core/store.h"
#include "runner/manifest/manifest.h"

/* The prefix of an egress event's reason. */
#define VG_EGRESS_EVENT	"egress: "

/*
 * Records what the proxies queued since the last call as events of run
 * run_id and audit records (the audit file's path from m's policy).
 * Joins an open transaction.  0, or an error in e (the records taken
 * are lost then: they are in RUN/egress.jsonl still).
 */
int	vg_egress_log_drain(struct vg_store *st, const struct vg_manifest *m,
	    const char *run_id, struct vg_err *e);

/*
 * A local session's connections (docs/egress.md, "Sessions"): the
 * records its proxy appended to DIR.egress.jsonl since the last call
 * become audit records of session_id (no task; the job whose command
 * made each, from the owner lines, in the reason), in the store and in
 * the audit file of m's policy.  How far was audited is kept in
 * DIR.egress.audited, under a lock, so that each record is audited
 * once.  0 (also when the session has no proxy), or an error in e.
 */
int	vg_egress_session_audit(struct vg_store *st,
	    const struct vg_manifest *m, const char *session_id,
	    const char *dir, struct vg_err *e);

/*
 * A task run by a cluster scheduler (vigil task-exec on a node) has a
 * proxy of its own there, which logs into
 * RUN/egress/INDEX.ATTEMPT/egress.jsonl (vg_egress_attempt_dir).  When
 * the driver learns the attempt ended, its records become events of
 * that task and attempt (named by the directory, not by the lines) and
 * audit records, are appended to RUN/egress.jsonl, and the directory
 * is removed.  0 (also when there is none), or an error in e.
 */
int	vg_egress_import_attempt(struct vg_store *st,
	    const struct vg_manifest *m, const char *run_id,
	    const char *run_dir, int index, int attempt, struct vg_err *e);

/* Connections of one task to one HOST:PORT with one outcome. */
struct vg_egress_group {
	int		 task;		/* -1: no task known */
	int		 allowed;	/* and connected (no error) */
	int		 refused;	/* by a rule (else failed) */
	char		 host[270];	/* HOST:PORT */
	char		 why[330];	/* refused: the rule; failed: error */
	size_t		 n;		/* connections */
	uint64_t	 up, down;
};

/* The egress of a run, or of one task. */
struct vg_egress_sum {
	struct vg_egress_group	*v;	/* by task, then first seen */
	size_t			 n;
	size_t			 conns, refused, failed;
	uint64_t		 up, down;
	int			 jobs;	/* a session's: task is its job */
};

/* Sums the egress events of run_id (task -1: of every task, else of
 * that task) into *s (release it). */
int	vg_egress_sum_load(struct vg_store *st, const char *run_id, int task,
	    struct vg_egress_sum *s, struct vg_err *e);
void	vg_egress_sum_release(struct vg_egress_sum *s);

/* Sums the connections a local session's proxy recorded in
 * DIR.egress.jsonl (dir: the session's directory) into *s (release
 * it), per job (s->jobs is set; a group's task is its job, -1 when
 * none is known).  0 (an empty sum when the session has no proxy), or
 * an error in e. */
int	vg_egress_session_sum(const char *dir, struct vg_egress_sum *s,
	    struct vg_err *e);

/* Appends "egress: ..." and one line per group to out (nothing when
 * there was no connection). */
void	vg_egress_sum_text(const struct vg_egress_sum *s, struct vg_buf *out);
/* Writes s as a JSON object: connections, refused, failed, up, down and
 * "hosts", the groups. */
void	vg_egress_sum_json(const struct vg_egress_sum *s,
	    struct vg_json_writer *w);
/* Appends one line per refused group ("task 0: HOST:PORT (rule), 2
 * connections") to out, each indented by indent. */
void	vg_egress_sum_refused(const struct vg_egress_sum *s,
	    const char *indent, struct vg_buf *out);

#endif
