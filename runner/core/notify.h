/*
 * notify.h - what a run's end tells: the report of a run (its counts and
 * its failed tasks with the tail of their stderr) as the text summary of
 * `--cron` and as the versioned JSON payload of notifications, and the
 * delivery of that payload to the manifest's `notify` channels
 * (webhooks over libcurl, mail through `sendmail -t`, a command given the
 * payload on stdin after the policy gate allowed it).
 *
 * Delivery is bounded: each attempt by notify.timeout, at most
 * VG_NOTIFY_ATTEMPTS attempts per channel with a backoff of 1 s then 2 s,
 * and everything for one run end by notify.total.  Every delivery and
 * failure is an event of the run ("notify: ..."); URLs in events and
 * logs show scheme, host and port only, and header values never appear.
 *
 * Exactly once per run end, at most once: the driver claims the
 * notification in the same transaction that records the run's end
 * (vg_store_notify_claim), then delivers.  A second driver (a resume
 * that raced, a retry of the same end) finds it claimed; a vigil killed
 * while delivering loses the rest of that delivery (its events say how
 * far it got).  docs/notify.md.
 */
#ifndef VG_NOTIFY_H
#define VG_NOTIFY_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/state.h"
#include "runner/core/store.h"
#include "runner/manifest/manifest.h"

/* The payload's format version ("version" in the JSON). */
#define VG_NOTIFY_VERSION	1
/* Tasks listed in full in a summary or payload; the rest are counted. */
#define VG_REPORT_TASKS		10
/* Lines of a task's stderr kept. */
#define VG_REPORT_LINES		10
/* Delivery attempts per channel. */
#define VG_NOTIFY_ATTEMPTS	3

/* One task that did not succeed. */
struct vg_report_task {
	int		 index;
	enum vg_state	 state;
	int		 exit_code;	/* -1 when none */
	int		 signal;	/* 0 when none */
	int		 attempts;
	char		*label;		/* "x=1 y=a" or "-" */
	char		 reason[256];
	struct vg_strv	 tail;		/* last lines of its stderr */
};

/* A run as its end is told. */
struct vg_run_report {
	struct vg_run_info	 r;
	int			 test;		/* a sample (vigil notify --test) */
	char			*group;
	char			 host[256];
	char			 user[64];
	struct vg_report_task	*tasks;		/* at most VG_REPORT_TASKS */
	size_t			 ntasks;
	size_t			 nbad;		/* every task not SUCCEEDED */
};

/* Loads the report of run run_id from st and its run directory.
 * Release with vg_run_report_release. */
int	vg_run_report_load(struct vg_store *st, const char *run_id,
	    struct vg_run_report *rep, struct vg_err *e);

/* A sample report for m (vigil notify --test): a FAILED run with one
 * failed task, named after the manifest. */
void	vg_run_report_sample(const struct vg_manifest *m,
	    struct vg_run_report *rep);

void	vg_run_report_release(struct vg_run_report *rep);

/* Appends the JSON payload (docs/notify.md) to out. */
void	vg_run_report_json(const struct vg_run_report *rep,
	    struct vg_buf *out);

/* Appends the text summary (the --cron output, the mail body) to out:
 * one line for the run, then per listed task a line and its stderr
 * tail, then how many more. */
void	vg_run_report_text(const struct vg_run_report *rep,
	    struct vg_buf *out);

/* True when nc asks to be told of a run that ended in state s. */
int	vg_notify_wants(const struct vg_notify_conf *nc, enum vg_state s);

/* True when nc names any channel. */
int	vg_notify_any(const struct vg_notify_conf *nc);

/* How deliveries went. */
struct vg_notify_stats {
	int		 sent;		/* channels delivered */
	int		 failed;	/* channels that gave up */
	double		 seconds;	/* time spent */
};

/*
 * Delivers rep to every channel of m->notify within its bounds.  With st
 * and rep->r.id set (not a test), every outcome is an event of the run
 * and the command's gate decision is audited.  said (may be NULL) gets
 * one line per outcome; undelivered (may be NULL) one line per channel
 * given up ("webhook http://127.0.0.1:9/ failed (attempt 3 of 3):
 * cannot connect: ...; given up"), without the "notify: " of events.
 * out_fd receives the output of sendmail and the
 * command (-1: /dev/null).  Never fails: failures are what stats and
 * the events say.  Blocks for at most notify.total (plus the time to
 * kill a process that overran it).
 */
void	vg_notify_deliver(struct vg_store *st, const struct vg_manifest *m,
	    const struct vg_run_report *rep, int out_fd, struct vg_strv *said,
	    struct vg_strv *undelivered, struct vg_notify_stats *stats);

/*
 * The end of a driven run: when m asks for state s, claims the
 * notification in st (the caller's open transaction, the one that
 * records the end); *claimed tells whether to call vg_notify_run.
 */
int	vg_notify_claim(struct vg_store *st, const char *run_id,
	    const struct vg_manifest *m, enum vg_state s, int *claimed,
	    struct vg_err *e);

/* Loads the report of a claimed run and delivers it (output of
 * processes to RUN_DIR/notify.log); undelivered (may be NULL) as for
 * vg_notify_deliver.  Blocks like vg_notify_deliver. */
void	vg_notify_run(struct vg_store *st, const char *run_id,
	    const struct vg_manifest *m, struct vg_strv *undelivered);

#endif
