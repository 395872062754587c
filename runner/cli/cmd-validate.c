/*
 * cmd-validate.c - vigil validate FILE...: loads each manifest through the
 * same layers as vigil run (site and user config, --set) and reports every
 * problem on stderr ("FILE:LINE:COL: error: message", the line and a
 * caret under the column), or "FILE: ok (N tasks)" on stdout; "-" reads
 * standard input, named "<stdin>".  A valid manifest this host cannot
 * run (the plugins' host checks: an engine, a binary, credentials, GPUs)
 * is "FILE: valid (N tasks); this host cannot run it:" and one indented
 * line per reason, on stdout; what will run otherwise than expected
 * here follows "ok" as "  note: " lines.  --json prints one object
 * instead.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runner/cli/cmd.h"
#include "common/path.h"
#include "runner/cli/launch.h"
#include "common/json.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/task.h"
#include "runner/manifest/yaml-tree.h"

/* Validates one file; returns 0 when it is valid and this host can run
 * it, VG_EXIT_HOST when only the host is lacking, else VG_EXIT_USAGE. */
static int
validate_one(const char *path, const struct vg_load_opts *opts,
    struct vg_json_writer *w)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_strv why = VG_STRV_INIT, notes = VG_STRV_INIT;
	struct vg_buf in = VG_BUF_INIT;
	struct vg_manifest *m = NULL;
	struct vg_err e;
	size_t i, n = 0;
	int rc;

	vg_err_init(&e);
	if (strcmp(path, "-") == 0) {
		/* Standard input, named "<stdin>" in messages. */
		path = "<stdin>";
		rc = vg_read_fd(STDIN_FILENO, path, VG_YAML_MAX_BYTES, &in,
		    &e);
		if (rc == 0)
			rc = vg_manifest_load_mem(path, vg_buf_str(&in),
			    in.len, opts, &m, &diag, &e);
	} else
		rc = vg_manifest_load(path, opts, &m, &diag, &e);
	if (rc == 0) {
		n = vg_expand_count(m);
		vg_manifest_host_check(m, &why);
		vg_manifest_host_notes(m, &notes);
	}
	if (w != NULL) {
		vg_json_obj_begin(w);
		vg_json_key(w, "file");
		vg_json_str(w, path);
		vg_json_key(w, "ok");
		vg_json_bool(w, rc == 0);
		vg_json_key(w, "tasks");
		vg_json_int(w, (long long)n);
		vg_json_key(w, "errors");
		vg_json_arr_begin(w);
		for (i = 0; i < diag.lines.n; i++)
			vg_json_str(w, diag.lines.v[i]);
		if (rc != 0 && diag.lines.n == 0)
			vg_json_str(w, e.msg);
		vg_json_arr_end(w);
		vg_json_key(w, "runnable");
		vg_json_bool(w, rc == 0 && why.n == 0);
		vg_json_key(w, "cannot_run");
		vg_json_arr_begin(w);
		for (i = 0; i < why.n; i++)
			vg_json_str(w, why.v[i]);
		vg_json_arr_end(w);
		vg_json_key(w, "notes");
		vg_json_arr_begin(w);
		for (i = 0; i < notes.n; i++)
			vg_json_str(w, notes.v[i]);
		vg_json_arr_end(w);
		vg_json_obj_end(w);
	} else if (rc == 0 && why.n == 0) {
		printf("%s: ok (%zu task%s)\n", path, n, n == 1 ? "" : "s");
		for (i = 0; i < notes.n; i++)
			printf("  note: %s\n", notes.v[i]);
	} else if (rc == 0) {
		printf("%s: valid (%zu task%s); ", path, n, n == 1 ? "" : "s");
		vg_launch_host_print(stdout, &why);
	} else {
		fflush(stdout);
		vg_diag_print(&diag, stderr);
		if (diag.lines.n == 0)
			fprintf(stderr, "vigil: %s\n", e.msg);
	}
	rc = rc != 0 ? VG_EXIT_USAGE : why.n > 0 ? VG_EXIT_HOST : VG_EXIT_OK;
	vg_diag_release(&diag);
	vg_strv_release(&why);
	vg_strv_release(&notes);
	vg_buf_release(&in);
	vg_manifest_free(m);
	return rc;
}

static int
cmd_validate_exec(struct vg_args *a)
{
	struct vg_load_opts opts = { .sets = vg_args_all(a, "set") };
	struct vg_json_writer w;
	struct vg_buf out = VG_BUF_INIT;
	int i, r, bad = 0, host = 0, json = vg_args_has(a, "json");

	if (json) {
		vg_json_writer_init(&w, &out);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "files");
		vg_json_arr_begin(&w);
	}
	for (i = 0; i < a->argc; i++) {
		r = validate_one(a->argv[i], &opts, json ? &w : NULL);
		bad += r == VG_EXIT_USAGE;
		host += r == VG_EXIT_HOST;
	}
	if (json) {
		vg_json_arr_end(&w);
		vg_json_key(&w, "ok");
		vg_json_bool(&w, bad == 0);
		vg_json_key(&w, "runnable");
		vg_json_bool(&w, bad == 0 && host == 0);
		vg_json_obj_end(&w);
		printf("%s\n", vg_buf_str(&out));
		vg_buf_release(&out);
	}
	return vg_cmd_finish_stdout(bad ? VG_EXIT_USAGE : host ?
	    VG_EXIT_HOST : VG_EXIT_OK);
}

const struct vg_cmd_entry vg_cmd_validate = {
	.name = "validate",
	.args_usage = "FILE...",
	.summary = "check manifests and report every problem",
	.help = "Loads each manifest with the site and user configs and the "
	    "--set\noverrides, as 'vigil run' would, and prints every problem "
	    "as\nFILE:LINE:COL: error: message, with its line and a caret "
	    "under the\ncolumn (FILE - reads standard input), then what this "
	    "host cannot run of a\nvalid one (no engine, binary, credentials "
	    "or GPUs) under \"this host cannot\nrun it:\".  Exits 0 when all "
	    "are valid and runnable here, 2 when one is\ninvalid, 6 when all "
	    "are valid but this host cannot run one.",
	.opts = (const struct vg_opt[]){
		VG_OPT_SET,
		VG_OPT_JSON("print the result as JSON"),
		{ .name = NULL },
	},
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_validate_exec,
};
