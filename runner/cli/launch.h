/*
 * launch.h - what the run-related commands (run, submit, resume, retry,
 * status, logs, cancel, gc, task-exec) share: opening the store, loading
 * a manifest (from a file or as stored with a run), creating a gated run,
 * and driving it in the foreground (how runs are shown: show.h).
 *
 * These are command-layer helpers: the functions returning an exit
 * status print their own one-line errors on stderr.
 */
#ifndef VG_LAUNCH_H
#define VG_LAUNCH_H

#include <stdio.h>
#include <sys/types.h>

#include "common/buf.h"
#include "runner/core/gate.h"
#include "runner/manifest/manifest.h"
#include "runner/core/run.h"
#include "runner/core/store.h"
#include "runner/manifest/task.h"

/* Opens the store in vg_home_dir(); *homep (may be NULL) gets the home
 * directory (caller frees).  Returns an exit status. */
int	vg_launch_store(struct vg_store **st, char **homep);

/* Loads and expands a manifest file with --set overrides, printing every
 * problem.  Returns an exit status; on 0 the caller owns *mp and *ts (a
 * lazy set, vg_expand_lazy: tasks are built by index when needed). */
int	vg_launch_load(const char *path, const char **sets,
	    struct vg_manifest **mp, struct vg_taskset *ts);

/* Prints the section "this host cannot run it:" with the lines of why
 * (vg_manifest_host_check), indented, on f. */
void	vg_launch_host_print(FILE *f, const struct vg_strv *why);

/* For run and submit: when this host cannot run m, says so on stderr
 * ("vigil: this host cannot run PATH; nothing was recorded" and the
 * section) and returns VG_EXIT_HOST; else 0. */
int	vg_launch_runnable(const char *path, const struct vg_manifest *m);

/* Adds the --after values (NULL-terminated) to m's after: list.
 * Returns an exit status (a usage error for a bad one). */
int	vg_launch_after(struct vg_manifest *m, const char **afters);

/* Loads and expands the manifest stored with a run (resume, retry).
 * Returns an exit status. */
int	vg_launch_load_run(struct vg_store *st, const char *run_id,
	    struct vg_manifest **mp, struct vg_taskset *ts);

/* Enters the working directory and caller environment run r was made
 * with (runner/core/origin.h; nothing for a run made before they were
 * recorded), so that its tasks start as its first ones did.  Returns an
 * exit status. */
int	vg_launch_enter(const struct vg_run_info *r);

/* RUN_DIR as a job's command line gives it, made absolute (from the
 * current directory) without trailing slashes.  Caller frees. */
char	*vg_launch_abs_dir(const char *arg);

/* Blocks the signals a job's vigil reads (SIGTERM, SIGINT, SIGHUP: stop;
 * SIGUSR1, SIGUSR2: Slurm's --signal) and returns a non-blocking
 * signalfd for them, or -1 with errno. */
int	vg_launch_job_signals(void);

/* Loads a run directory's manifest.json and builds only task index
 * (task-exec), once the directory is found to be the user's own and the
 * file's SHA-256 to be want (the digest the submitting vigil put in the
 * job; vg_run_manifest_read).  NULL want is refused: a run directory is
 * never a source of commands by itself.  Then enters where the run was
 * made (vg_launch_enter).  Returns an exit status; on 0 the caller owns
 * *mp and releases t. */
int	vg_launch_load_dir(const char *run_dir, const char *want, long index,
	    struct vg_manifest **mp, struct vg_task *t);

/*
 * Gates every task and records a new run with its concurrency group;
 * prints a line per denied task on stderr unless quiet.  id gets the run
 * id (VG_RUN_ID_MAX), or gives it when not empty (vg_launch_group made
 * it).  Returns an exit status (0 even when tasks were denied: the run
 * records them).
 */
int	vg_launch_create(struct vg_store *st, const char *home,
	    const struct vg_manifest *m, const struct vg_taskset *ts,
	    const struct vg_gate_opts *go, char *id, size_t *ndenied,
	    int quiet);

/*
 * Drives run id in the foreground with a progress display on stderr
 * (quiet: none); with json, prints the run's status as JSON on stdout at
 * the end.  Returns the run's exit status.
 */
int	vg_launch_drive(struct vg_store *st, const char *id,
	    const struct vg_manifest *m, const struct vg_taskset *ts,
	    int jobs, int json, int quiet);

struct vg_group;

/*
 * Overlap control before a run is created (run, submit): settles m's
 * concurrency.group and .overlap (allow, or skip with cron, when the
 * manifest is silent) so the stored manifest carries them, makes the
 * run id into id, and takes the group per the overlap (g then holds the
 * lock; a forked driver inherits it).  When the group stays held it
 * records a SKIPPED run naming the holder and sets *skipped; with skip
 * it says so on stderr unless cron and returns 0; a wait or replace that
 * ran out of time says so and returns 1.  Otherwise returns an exit
 * status.
 */
int	vg_launch_group(struct vg_store *st, const char *home,
	    struct vg_manifest *m, int cron, char *id, struct vg_group *g,
	    int *skipped);

/*
 * `--cron` output: vg_launch_cron_begin keeps vigil's log lines in
 * memory instead of stderr and has vg_launch_drive collect the
 * notifications not delivered; vg_launch_cron_end prints nothing when
 * code is 0 and every notification was delivered, else the kept lines,
 * the run's summary (notify.h) and the notifications not delivered on
 * stderr.  Returns code: delivery never changes it.
 */
void	vg_launch_cron_begin(void);
/* Where vg_launch_cron_end takes the notifications not delivered from,
 * for a driver that builds its own vg_run_opts (submit's detached one):
 * its undelivered.  Borrowed; emptied by vg_launch_cron_end. */
struct vg_strv *vg_launch_cron_undelivered(void);
int	vg_launch_cron_end(struct vg_store *st, const char *id, int code);

struct vg_args;

/*
 * --no-reuse and --reuse-only of run and submit: the first turns m's
 * reuse off (the stored manifest says so, for resume); the second prints
 * which tasks an earlier result stands for and which would run (as JSON
 * with json), runs nothing and sets *done.  Returns an exit status.
 */
int	vg_launch_reuse_flags(struct vg_args *a, struct vg_manifest *m,
	    const struct vg_taskset *ts, int json, int *done);

/* Splits "RUN/TASK" into the run part (written to run, size n) and the
 * task index (-1 when absent).  Returns an exit status. */
int	vg_parse_run_task(const char *arg, char *run, size_t n, int *task);


/*
 * Forks a detached process (double fork, setsid), as vigil submit's
 * driver and a session's keeper and runners are: returns 0 in it, the
 * pid of the intermediate child (already reaped) in the caller, or -1
 * with errno set.  stdio is flushed first.
 */
pid_t	vg_launch_detach(void);

/* In a detached process: stdin from /dev/null, stdout and stderr
 * appended to log (created 0600).  0, or -1 with errno set. */
int	vg_launch_redirect(const char *log);

#endif
