/*
 * cmd-doctor.c - vigil doctor: what this host can isolate and run.  One
 * line per mechanism (kernel, Landlock, seccomp, namespaces, cgroups),
 * where state goes and whether Slurm compute nodes can reach it, the
 * pool direct runs pack tasks into (CPUs, memory, GPUs and the device
 * nodes the sandbox grants with each), then one
 * block per backend from its probe operation (the local backend says
 * which isolation level it delivers in full), each missing piece with
 * what to change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/gpu.h"
#include "backends/sandbox.h"
#include "scratch/scratch.h"
#include "common/buf.h"
#include "runner/cli/cmd.h"
#include "runner/core/store.h"
#include "schedulers/scheduler.h"

static const struct vg_opt doctor_opts[] = {
	{ .name = "backend", .shortname = 'b', .has_arg = 1, .repeat = 1,
	  .arg = "NAME", .help = "only probe this backend (repeatable)" },
	{ .name = "set", .has_arg = 1, .repeat = 1, .arg = "KEY=VALUE",
	  .help = "override a config value, as run does "
	  "(pool.gpus=[0,1], pool.cpus=8)" },
	{ NULL }
};

/* True when ops was asked for with --backend, by name or alias (or none
 * was asked for). */
static int
wanted(const char **names, const struct vg_backend_ops *ops)
{
	if (names[0] == NULL)
		return 1;
	for (; *names != NULL; names++)
		if (vg_backend_find(*names) == ops)
			return 1;
	return 0;
}

/* Appends where run state and per-task scratch directories go, and why. */
static void
report_dirs(struct vg_buf *out)
{
	char *home = vg_home_dir(), *base = NULL, *reason = NULL;
	struct vg_err e;

	vg_err_init(&e);
	vg_buf_printf(out, "state: %s ($VIGIL_HOME, else "
	    "$XDG_STATE_HOME/vigil)\n", home);
	if (vg_scratch_base(NULL, home, &base, &reason, &e) == 0)
		vg_buf_printf(out, "scratch: %s (%s)\n", base, reason);
	else
		vg_buf_printf(out, "scratch: unusable: %s (set scratch.path "
		    "or $VIGIL_SCRATCH to a writable directory)\n", e.msg);
	free(base);
	free(reason);
	free(home);
}

/* Appends the pool direct runs pack into: CPUs, memory and GPUs, where
 * each came from (the site and user config's pool section applies, then
 * sets), and the device nodes the sandbox grants a task given each GPU.
 * A set that does not load is printed, and VG_EINVAL returned. */
static int
report_pool(const char **sets, struct vg_buf *out)
{
	static const char probe[] = "version: 1\ncommand: 'true'\n";
	struct vg_load_opts opts;
	struct vg_manifest *m = NULL;
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_pool pool;
	struct vg_err e;
	size_t i;
	int rc;

	memset(&opts, 0, sizeof(opts));
	opts.sets = sets;
	vg_err_init(&e);
	rc = vg_manifest_load_mem("(config)", probe, sizeof(probe) - 1,
	    &opts, &m, &diag, &e);
	if (rc != 0 && sets[0] != NULL) {
		/* Only --set can make the probe fail: say which. */
		for (i = 0; i < diag.lines.n; i++)
			fprintf(stderr, "vigil: doctor: %s\n", diag.lines.v[i]);
		if (diag.lines.n == 0)
			fprintf(stderr, "vigil: doctor: %s\n", e.msg);
		vg_diag_release(&diag);
		return VG_EINVAL;
	}
	vg_diag_release(&diag);
	vg_err_init(&e);
	if (vg_pool_host(m != NULL ? vg_pool_conf_of(m) : NULL, 1, &pool,
	    &e) != 0)
		vg_buf_printf(out, "pool: %s\n", e.msg);
	else
		vg_pool_report(&pool, out);
	vg_pool_release(&pool);
	vg_manifest_free(m);
	return 0;
}

static int
cmd_doctor_exec(struct vg_args *a)
{
	const char **names = vg_args_all(a, "backend");
	const struct vg_backend_ops *const *b;
	const struct vg_scheduler_ops *const *s;
	struct vg_buf out = VG_BUF_INIT;
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (vg_backend_find(names[i]) == NULL)
			return vg_cmd_usage_error(a, "unknown backend '%s' "
			    "(try 'vigil version' for the list)", names[i]);

	vg_sandbox_report(&out);
	report_dirs(&out);
	if (report_pool(vg_args_all(a, "set"), &out) != 0) {
		vg_buf_release(&out);
		return VG_EXIT_USAGE;
	}
	for (s = vg_schedulers; *s != NULL; s++)
		vg_scheduler_probe(*s, &out);
	for (b = vg_backends; *b != NULL; b++) {
		if (!wanted(names, *b))
			continue;
		vg_backend_probe(*b, &out);
	}
	fputs(vg_buf_str(&out), stdout);
	vg_buf_release(&out);
	return vg_cmd_finish_stdout(VG_EXIT_OK);
}

const struct vg_cmd_entry vg_cmd_doctor = {
	.name = "doctor",
	.args_usage = "",
	.summary = "report what this host can isolate and run",
	.help = "Prints one line per kernel mechanism vigil uses (Landlock, "
	    "seccomp, user, PID and network namespaces, cgroups) and, for "
	    "each backend, what it can deliver here; every missing piece "
	    "says what to change.",
	.opts = doctor_opts,
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_doctor_exec,
};
