/*
 * launch.c - shared pieces of the run-related commands.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/core/egress-log.h"
#include "runner/cli/cmd.h"
#include "common/json.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"
#include "schedulers/scheduler.h"
#include "runner/manifest/after.h"
#include "runner/core/outputs.h"
#include "common/path.h"
#include "common/log.h"
#include "runner/core/group.h"
#include "runner/core/notify.h"
#include "runner/core/origin.h"
#include "runner/core/progress.h"
#include "runner/core/usage.h"

/* Manifest JSON stored with a run is bounded like any manifest. */
#define STORED_MANIFEST_MAX	(16 * 1024 * 1024)

int
vg_launch_store(struct vg_store **st, char **homep)
{
	struct vg_err e;
	char *home = vg_home_dir();
	int rc;

	vg_err_init(&e);
	*st = NULL;
	if ((rc = vg_store_open(home, st, &e)) != 0) {
		free(home);
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	}
	if (homep != NULL)
		*homep = home;
	else
		free(home);
	return 0;
}

/* Prints diagnostics (or the error) of a failed load or expansion. */
static int
print_problems(const struct vg_diag *d, const struct vg_err *e, int rc)
{
	fflush(stdout);
	vg_diag_print(d, stderr);
	if (d->lines.n == 0)
		fprintf(stderr, "vigil: %s\n", e->msg);
	return vg_cmd_exit_for_rc(rc);
}

int
vg_launch_load(const char *path, const char **sets, struct vg_manifest **mp,
    struct vg_taskset *ts)
{
	struct vg_load_opts opts = { .sets = sets };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	memset(ts, 0, sizeof(*ts));
	if ((rc = vg_manifest_load(path, &opts, mp, &diag, &e)) == 0 &&
	    (rc = vg_expand_lazy(*mp, ts, &diag, &e)) != 0) {
		vg_manifest_free(*mp);
		*mp = NULL;
	}
	if (rc != 0)
		rc = print_problems(&diag, &e, rc);
	vg_diag_release(&diag);
	return rc;
}

void
vg_launch_host_print(FILE *f, const struct vg_strv *why)
{
	size_t i;

	fprintf(f, "this host cannot run it:\n");
	for (i = 0; i < why->n; i++)
		fprintf(f, "  %s\n", why->v[i]);
}

int
vg_launch_runnable(const char *path, const struct vg_manifest *m)
{
	struct vg_strv why = VG_STRV_INIT;
	int rc = 0;

	if (vg_manifest_host_check(m, &why) > 0) {
		fflush(stdout);
		fprintf(stderr, "vigil: %s: valid, but nothing was recorded: ",
		    path);
		vg_launch_host_print(stderr, &why);
		rc = VG_EXIT_HOST;
	}
	vg_strv_release(&why);
	return rc;
}

/* Parses stored manifest JSON and expands it. */
static int
load_json(const char *what, const char *json, size_t len,
    struct vg_manifest **mp, struct vg_taskset *ts)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	memset(ts, 0, sizeof(*ts));
	if ((rc = vg_manifest_from_json(json, len, mp, &e)) != 0) {
		vg_diag_release(&diag);
		return vg_cmd_fail(VG_EXIT_INTERNAL, "stored manifest of %s: "
		    "%s", what, e.msg);
	}
	if ((rc = vg_expand_lazy(*mp, ts, &diag, &e)) != 0) {
		vg_manifest_free(*mp);
		*mp = NULL;
		rc = print_problems(&diag, &e, rc);
	}
	vg_diag_release(&diag);
	return rc;
}

int
vg_launch_load_run(struct vg_store *st, const char *run_id,
    struct vg_manifest **mp, struct vg_taskset *ts)
{
	struct vg_buf json = VG_BUF_INIT;
	struct vg_err e;
	char what[64];
	int rc;

	vg_err_init(&e);
	if ((rc = vg_store_run_manifest(st, run_id, &json, &e)) != 0) {
		vg_buf_release(&json);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	}
	snprintf(what, sizeof(what), "run '%s'", run_id);
	rc = load_json(what, vg_buf_str(&json), json.len, mp, ts);
	vg_buf_release(&json);
	return rc;
}

int
vg_launch_enter(const struct vg_run_info *r)
{
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	if ((rc = vg_origin_enter_json(r->origin, r->origin != NULL ?
	    strlen(r->origin) : 0, r->id, &e)) != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
	return 0;
}

char *
vg_launch_abs_dir(const char *arg)
{
	char cwd[PATH_MAX], *d;
	size_t n;

	if (arg[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
		d = vg_path_join(cwd, arg);
	else
		d = vg_xstrdup(arg);
	while ((n = strlen(d)) > 1 && d[n - 1] == '/')
		d[n - 1] = '\0';
	return d;
}

int
vg_launch_job_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int
vg_launch_load_dir(const char *run_dir, const char *want, long index,
    struct vg_manifest **mp, struct vg_task *t)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_buf json = VG_BUF_INIT, origin = VG_BUF_INIT;
	struct vg_err e;
	const char *slash;
	char *path, hex[65];
	int rc;

	vg_err_init(&e);
	memset(t, 0, sizeof(*t));
	*mp = NULL;
	path = vg_path_join(run_dir, "manifest.json");
	if (want == NULL) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "task-exec: no "
		    "--manifest-sha256: the job does not say which manifest "
		    "its submitter judged, and '%s' is not trusted on its "
		    "own; resubmit the run (vigil retry) with this vigil",
		    path);
		goto out;
	}
	if ((rc = vg_run_manifest_read(run_dir, &json, &origin, hex,
	    &e)) != 0) {
		rc = vg_cmd_fail(rc == VG_ENOENT ? VG_EXIT_USAGE :
		    VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	if (strcmp(hex, want) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "task-exec: '%s' is not "
		    "the manifest this job was submitted with (SHA-256 %s, "
		    "the job expects %s): refusing to run it", path, hex,
		    want);
		goto out;
	}
	if ((rc = vg_manifest_from_json(vg_buf_str(&json), json.len, mp,
	    &e)) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s: %s", path, e.msg);
		goto out;
	}
	/* The job starts in the run directory (sbatch --chdir); its task
	 * runs where the run was made. */
	slash = strrchr(run_dir, '/');
	if ((rc = vg_origin_enter_json(vg_buf_str(&origin), origin.len,
	    slash != NULL ? slash + 1 : run_dir, &e)) != 0) {
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
		vg_manifest_free(*mp);
		*mp = NULL;
		goto out;
	}
	if ((rc = vg_expand_task(*mp, (size_t)index, t, &diag, &e)) != 0) {
		if (rc == VG_ENOENT)
			rc = vg_cmd_fail(VG_EXIT_USAGE, "run '%s' has no task "
			    "%ld (it has %zu)", run_dir, index,
			    vg_expand_count(*mp));
		else
			rc = print_problems(&diag, &e, rc);
		vg_manifest_free(*mp);
		*mp = NULL;
	}
out:
	vg_diag_release(&diag);
	vg_buf_release(&json);
	vg_buf_release(&origin);
	free(path);
	return rc;
}

/* Records the run's concurrency group (for holder checks). */
static int
record_group(struct vg_store *st, const char *id, const struct vg_manifest *m,
    const char *holder, struct vg_err *e)
{
	char *grp = vg_group_of(m);
	int rc;

	rc = vg_store_group_set(st, id, grp, holder, e);
	free(grp);
	return rc;
}

int
vg_launch_create(struct vg_store *st, const char *home,
    const struct vg_manifest *m, const struct vg_taskset *ts,
    const struct vg_gate_opts *go, char *id, size_t *ndenied, int quiet)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_gate_opts o = *go;
	struct vg_run_plan plan;
	struct vg_buf json = VG_BUF_INIT, lb = VG_BUF_INIT, ob = VG_BUF_INIT;
	struct vg_origin origin = VG_ORIGIN_INIT;
	struct vg_err e;
	struct vg_task tmp = { 0 };
	const struct vg_task *t;
	char **denied = NULL, *dir = NULL;
	size_t i;
	int rc;

	vg_err_init(&e);
	if (id[0] == '\0')
		vg_run_id_make(id);
	o.home = home;
	if ((rc = vg_gate_tasks(m, ts, id, st, &o, &denied, ndenied, &diag,
	    &e)) != 0) {
		rc = print_problems(&diag, &e, rc);
		vg_diag_release(&diag);
		return rc;
	}
	vg_diag_release(&diag);
	for (i = 0; i < ts->n && !quiet; i++) {
		if (denied[i] == NULL)
			continue;
		vg_task_release(&tmp);
		t = vg_taskset_at(ts, i, &tmp);
		vg_buf_reset(&lb);
		vg_task_label(t, &lb);
		fprintf(stderr, "vigil: task %d [%s] DENIED: %s\n",
		    t->index, vg_buf_str(&lb), denied[i]);
	}
	vg_task_release(&tmp);
	vg_manifest_to_json(m, &json);
	memset(&plan, 0, sizeof(plan));
	plan.id = id;
	plan.m = m;
	plan.ts = ts;
	plan.manifest_json = vg_buf_str(&json);
	plan.denied = denied;
	/* A directory vigil cannot name (one the user may not search,
	 * left by a setuid or su) is no reason not to run: the run is
	 * resumed where vigil is started, as runs made before origins. */
	if (vg_origin_capture(&origin, &e) == 0) {
		vg_origin_to_json(&origin, &ob);
		plan.origin_json = vg_buf_str(&ob);
	} else {
		vg_warn("%s: resume and retry will run the tasks where they "
		    "are started", e.msg);
		vg_err_init(&e);
	}
	rc = vg_run_create(st, &plan, &dir, &e);
	if (rc == 0)
		rc = record_group(st, id, m, NULL, &e);
	vg_gate_free(denied, ts->n);
	vg_origin_release(&origin);
	vg_buf_release(&ob);
	vg_buf_release(&json);
	vg_buf_release(&lb);
	free(dir);
	if (rc != 0)
		return vg_cmd_fail(rc == VG_EINVAL ? vg_cmd_exit_for_rc(rc) :
		    VG_EXIT_INTERNAL, "%s", e.msg);
	return 0;
}

/* Under --cron: the memory file that holds log lines (-1 when off), and
 * the notifications of the run's end that were not delivered. */
static int cron_on;
static int cron_log = -1;
static struct vg_strv cron_undelivered = VG_STRV_INIT;

int
vg_launch_drive(struct vg_store *st, const char *id,
    const struct vg_manifest *m, const struct vg_taskset *ts, int jobs,
    int json, int quiet)
{
	struct vg_run_result res;
	struct vg_run_opts o;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	int rc, code;

	vg_err_init(&e);
	memset(&o, 0, sizeof(o));
	o.jobs = jobs;
	o.signals = 1;
	if (cron_on)
		o.undelivered = &cron_undelivered;
	if (!quiet)
		o.progress = vg_progress_new(2, VG_PROGRESS_AUTO, id, ts->n,
		    NULL);
	rc = vg_run_drive(st, id, m, ts, &o, &res, &e);
	vg_progress_free(o.progress);
	if (rc != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc) == VG_EXIT_USAGE ?
		    VG_EXIT_INTERNAL : vg_cmd_exit_for_rc(rc), "%s", e.msg);
	code = vg_run_exit_status(&res);
	if (json) {
		if ((rc = vg_status_run_json(st, id, &out, &e)) != 0) {
			vg_buf_release(&out);
			return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		}
		printf("%s\n", vg_buf_str(&out));
		vg_buf_release(&out);
	}
	return code;
}

/* Records run id SKIPPED (no tasks) because res names its group held. */
static int
record_skipped(struct vg_store *st, const struct vg_manifest *m,
    const char *id, const struct vg_group_result *res, struct vg_err *e)
{
	struct vg_taskset none = { NULL, 0, NULL };
	struct vg_run_plan plan;
	struct vg_buf json = VG_BUF_INIT;
	char *dir = NULL;
	int rc;

	vg_manifest_to_json(m, &json);
	memset(&plan, 0, sizeof(plan));
	plan.id = id;
	plan.m = m;
	plan.ts = &none;
	plan.manifest_json = vg_buf_str(&json);
	if ((rc = vg_run_create(st, &plan, &dir, e)) == 0 &&
	    (rc = vg_store_begin(st, e)) == 0) {
		if ((rc = record_group(st, id, m, res->holder[0] != '\0' ?
		    res->holder : NULL, e)) != 0 ||
		    (rc = vg_store_run_set_state(st, id, VG_ST_SKIPPED,
		    res->why, e)) != 0 ||
		    (rc = vg_store_commit(st, e)) != 0)
			vg_store_rollback(st);
	}
	free(dir);
	vg_buf_release(&json);
	return rc;
}

int
vg_launch_group(struct vg_store *st, const char *home, struct vg_manifest *m,
    int cron, char *id, struct vg_group *g, int *skipped)
{
	struct vg_group_result res;
	struct vg_group_req rq;
	struct vg_err e;
	char *grp;
	int ov, rc;

	*skipped = 0;
	vg_err_init(&e);
	if ((ov = vg_overlap_parse(m->concurrency.overlap, cron)) < 0)
		return vg_cmd_fail(VG_EXIT_USAGE, "unknown concurrency.overlap "
		    "'%s'", m->concurrency.overlap);
	grp = vg_group_of(m);
	/* The stored manifest says what this run was, for resume. */
	free(m->concurrency.group);
	m->concurrency.group = grp;
	free(m->concurrency.overlap);
	m->concurrency.overlap = vg_xstrdup(vg_overlap_name(ov));
	vg_run_id_make(id);
	if (ov == VG_OVERLAP_ALLOW)
		return 0;
	memset(&rq, 0, sizeof(rq));
	rq.home = home;
	rq.name = grp;
	rq.overlap = (enum vg_overlap)ov;
	rq.wait = m->concurrency.wait;
	rq.self = id;
	if ((rc = vg_group_acquire(st, &rq, g, &res, &e)) != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	if (!res.held)
		return 0;
	*skipped = 1;
	if ((rc = record_skipped(st, m, id, &res, &e)) != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	if (ov == VG_OVERLAP_SKIP) {
		if (!cron)
			fprintf(stderr, "vigil: run %s SKIPPED: concurrency "
			    "group '%s' %s\n", id, grp, res.why);
		return VG_EXIT_OK;
	}
	fprintf(stderr, "vigil: run %s SKIPPED: concurrency group '%s' %s "
	    "(concurrency.wait %gs)\n", id, grp, res.why,
	    m->concurrency.wait);
	return VG_EXIT_FAILED;
}

struct vg_strv *
vg_launch_cron_undelivered(void)
{
	return &cron_undelivered;
}

void
vg_launch_cron_begin(void)
{
	cron_on = 1;
	if ((cron_log = memfd_create("vigil-cron-log", MFD_CLOEXEC)) >= 0)
		vg_log_set_fd(cron_log);
	else
		vg_log_set_level(VG_LOG_ERROR);
}

int
vg_launch_cron_end(struct vg_store *st, const char *id, int code)
{
	struct vg_run_report rep;
	struct vg_egress_sum es;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char chunk[4096];
	ssize_t n;
	size_t i;
	int loud;

	/* An undelivered notification, or a connection the egress proxy
	 * refused, breaks the silence, not the exit status: the run did
	 * what it was asked; cron mails the output. */
	memset(&es, 0, sizeof(es));
	vg_err_init(&e);
	if (st != NULL && id != NULL && id[0] != '\0' &&
	    vg_egress_sum_load(st, id, -1, &es, &e) != 0)
		fprintf(stderr, "vigil: run %s: %s\n", id, e.msg);
	loud = code != 0 || cron_undelivered.n > 0 || es.refused > 0;
	vg_log_set_fd(2);
	if (loud && cron_log >= 0 && lseek(cron_log, 0, SEEK_SET) == 0)
		while ((n = read(cron_log, chunk, sizeof(chunk))) > 0)
			(void)!write(2, chunk, (size_t)n);
	if (cron_log >= 0)
		close(cron_log);
	cron_log = -1;
	cron_on = 0;
	if (!loud || st == NULL || id == NULL || id[0] == '\0')
		goto out;
	vg_err_init(&e);
	if (vg_run_report_load(st, id, &rep, &e) != 0) {
		fprintf(stderr, "vigil: run %s: %s\n", id, e.msg);
		goto out;
	}
	vg_run_report_text(&rep, &b);
	if (cron_undelivered.n > 0)
		vg_buf_printf(&b, "  %zu notification%s not delivered:\n",
		    cron_undelivered.n, cron_undelivered.n == 1 ? "" : "s");
	for (i = 0; i < cron_undelivered.n; i++)
		vg_buf_printf(&b, "    %s\n", cron_undelivered.v[i]);
	if (es.refused > 0)
		vg_buf_printf(&b, "  %zu connection%s refused by the egress "
		    "proxy:\n", es.refused, es.refused == 1 ? "" : "s");
	vg_egress_sum_refused(&es, "    ", &b);
	fflush(stdout);
	fputs(vg_buf_str(&b), stderr);
	vg_buf_release(&b);
	vg_run_report_release(&rep);
out:
	vg_egress_sum_release(&es);
	vg_strv_release(&cron_undelivered);
	return code;
}

int
vg_parse_run_task(const char *arg, char *run, size_t n, int *task)
{
	const char *slash = strchr(arg, '/');
	char *end;
	long v;

	*task = -1;
	if (slash == NULL) {
		snprintf(run, n, "%s", arg);
		return 0;
	}
	if ((size_t)(slash - arg) >= n || slash == arg)
		return vg_cmd_fail(VG_EXIT_USAGE, "bad run '%s' (use RUN or "
		    "RUN/TASK)", arg);
	memcpy(run, arg, (size_t)(slash - arg));
	run[slash - arg] = '\0';
	errno = 0;
	v = strtol(slash + 1, &end, 10);
	if (errno != 0 || end == slash + 1 || *end != '\0' || v < 0 ||
	    v > 100000000)
		return vg_cmd_fail(VG_EXIT_USAGE, "bad task '%s' in '%s' (a "
		    "task index is a whole number from 0)", slash + 1, arg);
	*task = (int)v;
	return 0;
}

int
vg_launch_after(struct vg_manifest *m, const char **afters)
{
	char why[320];
	size_t i;

	for (i = 0; afters != NULL && afters[i] != NULL; i++)
		if (vg_after_add(&m->after, afters[i], NULL, why,
		    sizeof(why)) != 0)
			return vg_cmd_fail(VG_EXIT_USAGE, "--after: %s", why);
	return 0;
}

pid_t
vg_launch_detach(void)
{
	pid_t pid;
	int ws;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if (setsid() < 0 || (pid = fork()) < 0)
			_exit(1);
		if (pid > 0)
			_exit(0);
		return 0;
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return pid;
}

int
vg_launch_redirect(const char *log)
{
	int fd, nul, rc = -1;

	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && nul >= 0 && dup2(nul, 0) >= 0 && dup2(fd, 1) >= 0 &&
	    dup2(fd, 2) >= 0)
		rc = 0;
	if (fd >= 0)
		close(fd);
	if (nul >= 0)
		close(nul);
	return rc;
}
