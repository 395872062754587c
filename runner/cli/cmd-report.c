/*
 * cmd-report.c - vigil report RUN [-o FILE] [--json]: writes the morning
 * report of a run (runner/core/report.h) - one self-contained HTML page,
 * RUN_DIR/report.html unless -o says otherwise, or with --json the same
 * data as one JSON document on stdout (or in FILE).  A run in progress
 * gives a snapshot.  The file is written whole or not at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "common/path.h"
#include "runner/core/report.h"

static int
cmd_report_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_run_info r;
	struct vg_err e;
	const char *file = vg_args_get(a, "output");
	char *path = NULL;
	int rc, json = vg_args_has(a, "json");

	vg_err_init(&e);
	memset(&r, 0, sizeof(r));
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	if ((rc = vg_store_run_get(st, a->argv[0], &r, &e)) != 0 ||
	    (rc = vg_report_write(st, r.id, !json, &out, &e)) != 0) {
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "%s", e.msg);
		goto out;
	}
	if (json && file == NULL) {
		if (out.len > 0)
			fwrite(out.data, 1, out.len, stdout);
		rc = vg_cmd_finish_stdout(VG_EXIT_OK);
		goto out;
	}
	path = file != NULL ? vg_xstrdup(file) : vg_path_join(r.dir,
	    "report.html");
	if (vg_write_file_atomic(path, out.data, out.len, 0644, &e) != 0) {
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
		goto out;
	}
	printf("%s\n", path);
	rc = vg_cmd_finish_stdout(VG_EXIT_OK);
out:
	free(path);
	vg_buf_release(&out);
	vg_run_info_release(&r);
	vg_store_close(st);
	return rc;
}

const struct vg_cmd_entry vg_cmd_report = {
	.name = "report",
	.args_usage = "RUN",
	.summary = "write a run's report: one HTML page with a timeline",
	.help = "Writes one self-contained HTML file (no network, no external "
	    "fonts) with\nthe run's header, a timeline of every attempt (a "
	    "lane per executor\nslot or node, failures drawn on top), a "
	    "sortable task table with CPU,\npeak memory and efficiency that "
	    "opens on the tasks that did not\nsucceed, the failures with the "
	    "tail of their stderr, requested-versus-\nused histograms and the "
	    "policy's decisions; RUN_DIR/report.html\nunless -o.  Prints the "
	    "file's path.  A run still in progress gives a\nsnapshot.  --json: "
	    "the same data as JSON on stdout (or in FILE); layout\nin "
	    "docs/report.md.",
	.opts = (const struct vg_opt[]){
		{ .name = "output", .shortname = 'o', .has_arg = 1,
		  .arg = "FILE", .help = "write to FILE" },
		VG_OPT_JSON("write the report's data as JSON (stdout unless -o)"),
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.ids = "runs",
	.exec = cmd_report_exec,
};
