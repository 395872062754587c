/*
 * cmd-run.c - vigil run FILE: loads the manifest, asks the policy gate
 * about every task, records the run and drives it here in the foreground
 * with a live progress display (plain log lines when stderr is not a
 * terminal).  --dry-run shows what would run and the gate's verdicts
 * without recording anything, and what this host cannot run (the
 * plugins' host checks); a real run refuses such a manifest before it is
 * recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/cmd.h"
#include "common/json.h"
#include "runner/cli/launch.h"
#include "runner/core/group.h"

/* Prints the tasks and verdicts of a dry run, then what this host
 * cannot run; returns the exit status (3 denied before 6 host). */
static int
dry_run(const struct vg_manifest *m, const struct vg_taskset *ts,
    const char *mode, int json)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_strv why = VG_STRV_INIT;
	struct vg_gate_opts go = { .mode = mode };
	struct vg_json_writer w;
	struct vg_buf out = VG_BUF_INIT, lb = VG_BUF_INIT, cmd = VG_BUF_INIT;
	struct vg_err e;
	struct vg_task tmp = { 0 };
	const struct vg_task *t;
	char **denied = NULL;
	size_t i, j, ndenied = 0;
	int rc;

	vg_err_init(&e);
	if ((rc = vg_gate_tasks(m, ts, NULL, NULL, &go, &denied, &ndenied,
	    &diag, &e)) != 0) {
		for (i = 0; i < diag.lines.n; i++)
			fprintf(stderr, "%s\n", diag.lines.v[i]);
		if (diag.lines.n == 0)
			fprintf(stderr, "vigil: %s\n", e.msg);
		vg_diag_release(&diag);
		return vg_cmd_exit_for_rc(rc);
	}
	vg_diag_release(&diag);
	vg_manifest_host_check(m, &why);
	vg_json_writer_init(&w, &out);
	if (json) {
		vg_json_obj_begin(&w);
		vg_json_key(&w, "name");
		vg_json_str(&w, m->name);
		vg_json_key(&w, "mode");
		vg_json_str(&w, vg_gate_mode_name());
		vg_json_key(&w, "tasks");
		vg_json_arr_begin(&w);
	} else
		printf("%-5s %-7s %-24s %s\n", "TASK", "VERDICT", "MATRIX",
		    "COMMAND");
	for (i = 0; i < ts->n; i++) {
		vg_task_release(&tmp);
		t = vg_taskset_at(ts, i, &tmp);
		vg_buf_reset(&lb);
		vg_buf_reset(&cmd);
		vg_task_label(t, &lb);
		if (t->command.is_argv)
			for (j = 0; j < t->command.argv.n; j++) {
				if (j > 0)
					vg_buf_addc(&cmd, ' ');
				vg_buf_shquote(&cmd, t->command.argv.v[j]);
			}
		else
			vg_buf_adds(&cmd, t->command.shell);
		if (json) {
			vg_json_obj_begin(&w);
			vg_json_key(&w, "index");
			vg_json_int(&w, t->index);
			vg_json_key(&w, "matrix");
			vg_json_obj_begin(&w);
			for (j = 0; j < t->matrix.n; j++) {
				vg_json_key(&w, t->matrix.v[j].key);
				vg_json_str(&w, t->matrix.v[j].value);
			}
			vg_json_obj_end(&w);
			vg_json_key(&w, "command");
			vg_json_str(&w, vg_buf_str(&cmd));
			vg_json_key(&w, "allowed");
			vg_json_bool(&w, denied[i] == NULL);
			vg_json_key(&w, "reason");
			vg_json_str(&w, denied[i]);
			vg_json_obj_end(&w);
			continue;
		}
		/* One line per task: newlines of scripts shown as "; ". */
		for (j = 0; j < cmd.len; j++)
			if (cmd.data[j] == '\n')
				cmd.data[j] = ' ';
		printf("%-5d %-7s %-24s %.100s\n", t->index,
		    denied[i] != NULL ? "deny" : "allow", vg_buf_str(&lb),
		    vg_buf_str(&cmd));
		if (denied[i] != NULL)
			printf("      %s\n", denied[i]);
	}
	if (json) {
		vg_json_arr_end(&w);
		vg_json_key(&w, "runnable");
		vg_json_bool(&w, why.n == 0);
		vg_json_key(&w, "cannot_run");
		vg_json_arr_begin(&w);
		for (i = 0; i < why.n; i++)
			vg_json_str(&w, why.v[i]);
		vg_json_arr_end(&w);
		vg_json_obj_end(&w);
		printf("%s\n", vg_buf_str(&out));
	} else {
		printf("%zu task%s, %zu denied (policy mode %s); nothing was "
		    "run\n", ts->n, ts->n == 1 ? "" : "s", ndenied,
		    vg_gate_mode_name());
		if (why.n > 0)
			vg_launch_host_print(stdout, &why);
	}
	rc = ndenied > 0 ? VG_EXIT_DENIED : why.n > 0 ? VG_EXIT_HOST :
	    VG_EXIT_OK;
	vg_task_release(&tmp);
	vg_gate_free(denied, ts->n);
	vg_strv_release(&why);
	vg_buf_release(&out);
	vg_buf_release(&lb);
	vg_buf_release(&cmd);
	return rc;
}

static int
cmd_run_exec(struct vg_args *a)
{
	struct vg_gate_opts go = { .mode = vg_args_get(a, "mode") };
	struct vg_group g = VG_GROUP_INIT;
	struct vg_manifest *m = NULL;
	struct vg_taskset ts = { NULL, 0, NULL };
	struct vg_store *st = NULL;
	char id[VG_RUN_ID_MAX] = "", *home = NULL;
	size_t ndenied = 0;
	long jobs;
	int rc, cron = vg_args_has(a, "cron"), skipped = 0, quiet, done;

	if (vg_args_int(a, "jobs", 1, 100000, 0, &jobs) != 0)
		return VG_EXIT_USAGE;
	quiet = cron || vg_args_has(a, "quiet");
	if (cron && (vg_args_has(a, "json") || vg_args_has(a, "dry-run")))
		return vg_cmd_fail(VG_EXIT_USAGE, "--cron prints nothing on "
		    "success; it does not go with --%s", vg_args_has(a,
		    "json") ? "json" : "dry-run");
	if ((rc = vg_launch_load(a->argv[0], vg_args_all(a, "set"), &m,
	    &ts)) != 0 || (rc = vg_launch_after(m,
	    vg_args_all(a, "after"))) != 0)
		goto out;
	if ((rc = vg_launch_reuse_flags(a, m, &ts,
	    vg_args_has(a, "json"), &done)) != 0 || done)
		goto out;
	if (vg_args_has(a, "dry-run")) {
		rc = dry_run(m, &ts, go.mode, vg_args_has(a, "json"));
		goto out;
	}
	if ((rc = vg_launch_runnable(a->argv[0], m)) != 0)
		goto out;
	if (cron)
		vg_launch_cron_begin();
	if ((rc = vg_launch_store(&st, &home)) != 0)
		goto out;
	if ((rc = vg_launch_group(st, home, m, cron, id, &g, &skipped)) != 0 ||
	    skipped)
		goto out;
	if ((rc = vg_launch_create(st, home, m, &ts, &go, id, &ndenied,
	    cron)) != 0)
		goto out;
	if (!quiet && !vg_args_has(a, "json"))
		fprintf(stderr, "vigil: run %s: %zu task%s\n", id, ts.n,
		    ts.n == 1 ? "" : "s");
	rc = vg_launch_drive(st, id, m, &ts, (int)jobs,
	    vg_args_has(a, "json"), quiet);
out:
	if (cron)
		rc = vg_launch_cron_end(st, skipped ? NULL : id, rc);
	vg_group_release(&g);
	vg_store_close(st);
	vg_taskset_release(&ts);
	vg_manifest_free(m);
	free(home);
	return rc;
}

const struct vg_cmd_entry vg_cmd_run = {
	.name = "run",
	.args_usage = "FILE",
	.summary = "run a manifest here and wait for it",
	.help = "Loads FILE, asks the policy gate about every task (denied "
	    "tasks are\nrecorded DENIED and never run), and runs the rest "
	    "here, up to --jobs\nat once, showing progress on stderr.  "
	    "Ctrl-C cancels (tasks are killed\nand recorded CANCELLED); a "
	    "second Ctrl-C kills at once.\nExit status: 0 all tasks "
	    "succeeded, 1 some failed, 2 usage or manifest\nerror, 3 some "
	    "denied, 4 internal error, 5 cancelled, 6 this host cannot\nrun "
	    "it (no engine, binary, credentials or GPUs; nothing recorded).\n"
	    "With --cron: nothing on stdout or stderr when every task "
	    "succeeded or the\nrun was skipped (concurrency.overlap, skip "
	    "by default), otherwise one\nsummary on stderr, which also "
	    "lists the notifications not delivered\n(the exit status stays "
	    "the run's).",
	.opts = (const struct vg_opt[]){
		VG_OPT_JOBS,
		VG_OPT_SET,
		VG_OPT_AFTER,
		VG_OPT_DRY_RUN("show the tasks and the gate's verdicts, run "
		    "nothing"),
		VG_OPT_JSON_RUN,
		VG_OPT_MODE("policy mode: auto-deny, auto-approve, interactive"),
		VG_OPT_QUIET,
		VG_OPT_CRON,
		VG_OPT_NO_REUSE,
		VG_OPT_REUSE_ONLY,
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_run_exec,
};
