/*
 * cmd-doctor.c - vigil doctor: what this host can isolate and run.  One
 * line per mechanism (kernel, Landlock, seccomp, namespaces, cgroups),
 * where state goes and whether Slurm compute nodes can reach it, then one
 * block per backend from its probe operation (the local backend says
 * which isolation level it delivers in full), each missing piece with
 * what to change.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "backends/backend.h"
#include "backends/sandbox.h"
#include "scratch/scratch.h"
#include "common/buf.h"
#include "runner/cli/cmd.h"
#include "runner/core/store.h"

static const struct vg_opt doctor_opts[] = {
	{ .name = "backend", .shortname = 'b', .has_arg = 1, .repeat = 1,
	  .arg = "NAME", .help = "only probe this backend (repeatable)" },
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

/* File systems by statfs(2) f_type; shared ones are seen by every node
 * that mounts them (network and cluster file systems). */
static const struct fs_kind {
	unsigned long	 magic;
	const char	*name;
	int		 shared;
} fs_kinds[] = {
	{ .magic = 0x6969, .name = "nfs", .shared = 1 },
	{ .magic = 0x0bd00bd0, .name = "lustre", .shared = 1 },
	{ .magic = 0x47504653, .name = "gpfs", .shared = 1 },
	{ .magic = 0x19830326, .name = "beegfs", .shared = 1 },
	{ .magic = 0x00c36400, .name = "cephfs", .shared = 1 },
	{ .magic = 0xaad7aaea, .name = "panfs", .shared = 1 },
	{ .magic = 0x20030528, .name = "orangefs", .shared = 1 },
	{ .magic = 0x5346414f, .name = "afs", .shared = 1 },
	{ .magic = 0x6b414653, .name = "afs", .shared = 1 },
	{ .magic = 0x7461636f, .name = "ocfs2", .shared = 1 },
	{ .magic = 0x01161970, .name = "gfs2", .shared = 1 },
	{ .magic = 0xff534d42, .name = "cifs", .shared = 1 },
	{ .magic = 0xfe534d42, .name = "smb2", .shared = 1 },
	{ .magic = 0x01021997, .name = "9p", .shared = 1 },
	{ .magic = 0xef53, .name = "ext4", .shared = 0 },
	{ .magic = 0x58465342, .name = "xfs", .shared = 0 },
	{ .magic = 0x9123683e, .name = "btrfs", .shared = 0 },
	{ .magic = 0x2fc12fc1, .name = "zfs", .shared = 0 },
	{ .magic = 0x01021994, .name = "tmpfs", .shared = 0 },
	{ .magic = 0x858458f6, .name = "ramfs", .shared = 0 },
	{ .magic = 0x794c7630, .name = "overlay", .shared = 0 },
	{ .magic = 0x73717368, .name = "squashfs", .shared = 0 },
	{ .magic = 0xf2f52010, .name = "f2fs", .shared = 0 },
	{ .magic = 0x4d44, .name = "vfat", .shared = 0 },
	{ .magic = 0x65735546, .name = "fuse", .shared = 0 },
};

/* Appends whether path (or its nearest existing parent) is on a shared
 * file system, for `what` ("vigil binary", "VIGIL_HOME"). */
static void
report_shared(struct vg_buf *out, const char *what, const char *path,
    const char *fix)
{
	char dir[PATH_MAX], name[32], *slash;
	const struct fs_kind *k = NULL;
	struct statfs sf;
	size_t i;
	int rc;

	snprintf(dir, sizeof(dir), "%s", path);
	/* VIGIL_HOME may not exist yet: its parent decides where it goes. */
	while ((rc = statfs(dir, &sf)) != 0 && errno == ENOENT &&
	    (slash = strrchr(dir, '/')) != NULL && slash != dir)
		*slash = '\0';
	if (rc != 0 && errno == ENOENT && strcmp(dir, path) != 0)
		rc = statfs("/", &sf);
	if (rc != 0) {
		vg_buf_printf(out, "slurm: %s (%s): cannot tell the file "
		    "system: %s\n", what, path, strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(fs_kinds) / sizeof(fs_kinds[0]); i++)
		if (fs_kinds[i].magic == (unsigned long)sf.f_type)
			k = &fs_kinds[i];
	if (k == NULL)
		snprintf(name, sizeof(name), "0x%lx", (unsigned long)sf.f_type);
	vg_buf_printf(out, "slurm: %s on %s (%s): %s", what,
	    k != NULL ? k->name : name, path,
	    k != NULL && k->shared ? "shared" : "local");
	if (k == NULL || !k->shared)
		vg_buf_printf(out, " \u2014 %s", fix);
	vg_buf_adds(out, "\n");
}

/* Appends whether Slurm compute nodes can run this vigil and reach its
 * run directories: both must be on a file system the nodes share. */
static void
report_slurm_paths(struct vg_buf *out)
{
	const char *env = getenv("VIGIL_SLURM_VIGIL");
	char *self = NULL, *home = vg_home_dir();

	/* The binary Slurm jobs run, as schedulers/slurm.c picks it. */
	if (env == NULL || *env != '/')
		self = realpath("/proc/self/exe", NULL);
	report_shared(out, "vigil binary", self != NULL ? self :
	    env != NULL && *env == '/' ? env : "/proc/self/exe",
	    "task-exec on compute nodes needs a shared path; install vigil "
	    "on a shared filesystem or set VIGIL_SLURM_VIGIL");
	report_shared(out, "VIGIL_HOME", home, "compute nodes write task "
	    "results under it; set VIGIL_HOME to a directory on a shared "
	    "filesystem");
	free(self);
	free(home);
}

static int
cmd_doctor_exec(struct vg_args *a)
{
	const char **names = vg_args_all(a, "backend");
	const struct vg_backend_ops *const *b;
	struct vg_buf out = VG_BUF_INIT;
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (vg_backend_find(names[i]) == NULL)
			return vg_cmd_usage_error(a, "unknown backend '%s' "
			    "(try 'vigil version' for the list)", names[i]);

	vg_sandbox_report(&out);
	report_dirs(&out);
	report_slurm_paths(&out);
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
