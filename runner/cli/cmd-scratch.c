/*
 * cmd-scratch.c - vigil scratch list|gc: shows the per-task scratch
 * directories under the scratch base and removes those of finished runs.
 *
 * "Running" comes from the owner records the scratch manager keeps
 * (scratch/scratch.h): a run is running while a process that created one
 * of its task directories is alive, or runs on another host.  The base
 * is chosen as for a run, from --base, else the `scratch:` section of the
 * site and user configuration, else the environment (docs/scratch.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scratch/scratch.h"
#include "common/buf.h"
#include "runner/cli/cmd-config.h"
#include "runner/cli/cmd.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"
#include "common/err.h"
#include "runner/core/store.h"

/* vigil scratch list|gc [--base DIR] [--dry-run] */
static int
cmd_scratch_exec(struct vg_args *a)
{
	struct vg_scratch_list l = { NULL, 0 }, freed = { NULL, 0 };
	struct vg_manifest *cfg = NULL;
	struct vg_scratch_conf conf;
	const char *verb = a->argv[0];
	char *base = NULL, *reason = NULL, *home, sz[32], ag[32];
	uint64_t total = 0;
	struct vg_err e;
	size_t i, kept = 0;
	int rc, gc, dry;

	gc = strcmp(verb, "gc") == 0;
	if (!gc && strcmp(verb, "list") != 0)
		return vg_cmd_usage_error(a, "unknown action '%s' (list or gc)",
		    verb);
	dry = vg_args_has(a, "dry-run");
	if (dry && !gc)
		return vg_cmd_usage_error(a, "--dry-run goes with gc");
	if ((rc = vg_cmd_load_config(&cfg)) != 0)
		return rc;
	conf = cfg->scratch;
	if (vg_args_get(a, "base") != NULL)
		conf.path = (char *)(uintptr_t)vg_args_get(a, "base");
	vg_err_init(&e);
	home = vg_home_dir();
	rc = vg_scratch_base(&conf, home, &base, &reason, &e);
	free(home);
	if (rc != 0) {
		vg_manifest_free(cfg);
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "scratch: %s",
		    e.msg);
	}
	printf("base: %s (%s)\n", base, reason);
	if ((rc = vg_scratch_list(base, NULL, NULL, &l, &e)) != 0) {
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "scratch: %s", e.msg);
		goto out;
	}
	if (!gc) {
		if (l.n == 0)
			printf("no scratch directories\n");
		else
			printf("%-24s %-8s %5s %10s %5s  %s\n", "RUN", "STATE",
			    "TASKS", "SIZE", "AGE", "PATH");
		for (i = 0; i < l.n; i++)
			printf("%-24s %-8s %5zu %10s %5s  %s%s%s%s\n",
			    l.v[i].run_id, l.v[i].running ? "running" :
			    "finished", l.v[i].tasks,
			    vg_scratch_fmt_size(l.v[i].bytes, sz, sizeof(sz)),
			    l.v[i].tasks > 0 ? vg_fmt_age((double)time(NULL) -
			    l.v[i].mtime, ag, sizeof(ag)) : "-", l.v[i].path,
			    l.v[i].owner ? " (" : "",
			    l.v[i].owner ? l.v[i].owner : "",
			    l.v[i].owner ? ")" : "");
		rc = vg_cmd_finish_stdout(VG_EXIT_OK);
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		if (!l.v[i].running)
			continue;
		printf("kept %s: running%s%s%s\n", l.v[i].run_id,
		    l.v[i].owner ? " (" : "", l.v[i].owner ? l.v[i].owner : "",
		    l.v[i].owner ? ")" : "");
		kept++;
	}
	rc = vg_scratch_gc(base, NULL, NULL, dry, &freed, &e);
	for (i = 0; i < freed.n; i++) {
		printf("%s %s (%zu task%s, %s)\n", dry ? "would remove" :
		    "removed", freed.v[i].path, freed.v[i].tasks,
		    freed.v[i].tasks == 1 ? "" : "s",
		    vg_scratch_fmt_size(freed.v[i].bytes, sz, sizeof(sz)));
		total += freed.v[i].bytes;
	}
	printf("%s %s in %zu run%s; %zu running run%s kept\n",
	    dry ? "would free" : "freed", vg_scratch_fmt_size(total, sz, sizeof(sz)),
	    freed.n, freed.n == 1 ? "" : "s", kept, kept == 1 ? "" : "s");
	if (rc != 0)
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "scratch gc: %s",
		    e.msg);
	else
		rc = vg_cmd_finish_stdout(VG_EXIT_OK);
out:
	vg_scratch_list_release(&l);
	vg_scratch_list_release(&freed);
	vg_manifest_free(cfg);
	free(base);
	free(reason);
	return rc;
}

const struct vg_cmd_entry vg_cmd_scratch = {
	.name = "scratch",
	.args_usage = "list|gc",
	.summary = "list or clean per-task scratch directories",
	.help = "list shows each run's scratch directory under the scratch "
	    "base (<base>/vigil/<run>/<task>)\nwith its size and whether the "
	    "run is still running; gc removes the directories\nof finished "
	    "runs, never of running ones, and reports what it freed.\nThe "
	    "base is chosen as for a run: scratch.path in the site or user "
	    "config,\n$VIGIL_SCRATCH, /scratch/$USER, $SCRATCH, "
	    "$SLURM_TMPDIR, $TMPDIR, then the\nstate directory "
	    "(docs/scratch.md).",
	.opts = (const struct vg_opt[]){
		{ .name = "base", .has_arg = 1, .arg = "DIR",
		  .help = "scratch base directory (as scratch.path)" },
		VG_OPT_DRY_RUN("gc: only show what would be removed"),
		{ NULL },
	},
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_scratch_exec,
};
