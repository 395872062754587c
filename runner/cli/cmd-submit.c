/*
 * cmd-submit.c - vigil submit FILE: records the run (the policy gate in
 * auto-deny mode: nobody is there to ask, unless the manifest opts in
 * with policy.mode auto-approve), prints its id, and drives it in a
 * detached process (double fork, setsid, stdin from /dev/null, stdout
 * and stderr to RUN_DIR/vigil.log) that outlives the shell.  The
 * concurrency group's lock is taken here and inherited by the detached
 * driver, which holds it until the run ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/core/group.h"
#include "runner/core/leftover.h"
#include "common/log.h"
#include "common/path.h"
#include "runner/core/progress.h"

/*
 * In the detached process: drives the run with the manifest and tasks the
 * submitting process built (inherited through fork: loading them again
 * from the store would cost the time of a second manifest parse and
 * expansion); returns an exit status.
 */
static int
detached(const char *id, long jobs, int ready_fd,
    const struct vg_manifest *m, const struct vg_taskset *ts)
{
	struct vg_store *st = NULL;
	struct vg_run_result res;
	struct vg_run_opts o;
	struct vg_run_info r;
	struct vg_err e;
	int rc;

	vg_err_init(&e);
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		goto out;
	/* Own the run before the submitting shell returns, so that status
	 * and cancel see a live driver from the first moment. */
	if ((rc = vg_store_run_get(st, id, &r, &e)) == 0)
		rc = vg_run_claim(st, &r, &e);
	vg_run_info_release(&r);
	if (rc != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	(void)!write(ready_fd, "1", 1);
	close(ready_fd);
	ready_fd = -1;
	memset(&o, 0, sizeof(o));
	o.jobs = (int)jobs;
	o.signals = 1;
	o.progress = vg_progress_new(2, VG_PROGRESS_LINES, id, ts->n, NULL);
	o.undelivered = vg_launch_cron_undelivered();
	rc = vg_run_drive(st, id, m, ts, &o, &res, &e);
	vg_progress_free(o.progress);
	if (rc != 0)
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
	else
		rc = vg_run_exit_status(&res);
	/* The summary a --cron run prints, in RUN_DIR/vigil.log. */
	rc = vg_launch_cron_end(st, id, rc);
out:
	if (ready_fd >= 0)
		close(ready_fd);
	vg_store_close(st);
	return rc;
}

/* Redirects stdio of the detached process; returns 0 or -1. */
static int
redirect(const char *home, const char *id)
{
	char *log;
	int fd, nul;

	log = vg_xasprintf("%s/runs/%s/vigil.log", home, id);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(log);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || nul < 0)
		return -1;
	if (dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		return -1;
	close(fd);
	close(nul);
	return 0;
}

static int
cmd_submit_exec(struct vg_args *a)
{
	struct vg_gate_opts go = { .force_deny = 1 };
	struct vg_group g = VG_GROUP_INIT;
	struct vg_manifest *m = NULL;
	struct vg_taskset ts = { NULL, 0, NULL };
	struct vg_store *st = NULL;
	char id[VG_RUN_ID_MAX] = "", *home = NULL, c;
	size_t ndenied = 0, ntasks;
	int rc, pfd[2], ws, cron = vg_args_has(a, "cron"), skipped = 0, done;
	long jobs;
	pid_t pid;

	if (vg_args_int(a, "jobs", 1, 100000, 0, &jobs) != 0)
		return VG_EXIT_USAGE;
	if ((rc = vg_launch_load(a->argv[0], vg_args_all(a, "set"), &m,
	    &ts)) != 0 || (rc = vg_launch_after(m,
	    vg_args_all(a, "after"))) != 0 ||
	    (rc = vg_launch_reuse_flags(a, m, &ts, 0,
	    &done)) != 0 || done ||
	    (rc = vg_launch_runnable(a->argv[0], m)) != 0)
		goto out;
	ntasks = ts.n;
	/* Only an explicit opt-in lifts auto-deny. */
	if (m->policy.mode != NULL && strcmp(m->policy.mode,
	    "auto-approve") == 0)
		go.force_deny = 0;
	if ((rc = vg_launch_store(&st, &home)) != 0)
		goto out;
	if ((rc = vg_launch_group(st, home, m, cron, id, &g, &skipped)) != 0 ||
	    skipped)
		goto out;
	rc = vg_launch_create(st, home, m, &ts, &go, id, &ndenied, cron);
	/* The detached process opens its own connection. */
	vg_store_close(st);
	st = NULL;
	if (rc != 0)
		goto out;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (setsid() < 0)
			_exit(VG_EXIT_INTERNAL);
		/* The session leader exits at once, so the driver can
		 * never reacquire a controlling terminal; SIGHUP from the
		 * closing shell reaches neither. */
		signal(SIGHUP, SIG_IGN);
		if ((pid = fork()) != 0)
			_exit(pid < 0 ? VG_EXIT_INTERNAL : 0);
		signal(SIGHUP, SIG_DFL);
		if (redirect(home, id) != 0)
			_exit(VG_EXIT_INTERNAL);
		vg_log_set_fd(2);
		fprintf(stderr, "vigil: run %s: detached driver, pid %ld\n",
		    id, (long)getpid());
		rc = detached(id, jobs, pfd[1], m, &ts);
		vg_taskset_release(&ts);
		vg_manifest_free(m);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	close(pfd[1]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	/* Wait until the driver owns the run (or died trying). */
	while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
		;
	close(pfd[0]);
	if (!cron)
		printf("%s\n", id);
	if (ndenied > 0 && !cron)
		fprintf(stderr, "vigil: %zu of %zu task%s denied by the policy "
		    "gate (%s); see 'vigil status %s'\n", ndenied, ntasks,
		    ntasks == 1 ? "" : "s", vg_gate_mode_name(), id);
	rc = ndenied == ntasks && ntasks > 0 ? VG_EXIT_DENIED : VG_EXIT_OK;
	if (cron && rc != VG_EXIT_OK && vg_launch_store(&st, NULL) == 0)
		(void)vg_launch_cron_end(st, id, rc);
out:
	vg_group_release(&g);
	vg_store_close(st);
	vg_taskset_release(&ts);
	vg_manifest_free(m);
	free(home);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_submit = {
	.name = "submit",
	.args_usage = "FILE",
	.summary = "start a run detached and print its id",
	.help = "Like 'vigil run', but prints the run id at once and drives "
	    "the run in a\ndetached process that survives the shell; its log "
	    "is RUN_DIR/vigil.log.\nThe policy gate runs in auto-deny mode "
	    "unless the manifest sets\npolicy.mode: auto-approve.  Follow it "
	    "with 'vigil status RUN --watch'\nor 'vigil logs RUN/TASK -f'.  "
	    "With --cron: no run id, nothing on stdout\nor stderr unless "
	    "the run could not start; its end goes to notify and to\n"
	    "RUN_DIR/vigil.log.",
	.opts = (const struct vg_opt[]){
		VG_OPT_JOBS,
		VG_OPT_SET,
		VG_OPT_CRON,
		VG_OPT_NO_REUSE,
		VG_OPT_REUSE_ONLY,
		VG_OPT_AFTER,
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_submit_exec,
};
