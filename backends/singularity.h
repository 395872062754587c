/*
 * singularity.h - pieces of the singularity/apptainer backend that are
 * useful on their own: finding the binary, checking binds, building the
 * command line and the environment file, and telling the task's exit code
 * apart from apptainer's own failures.  The backend itself is
 * vg_backend_singularity (backend.h).
 */
#ifndef VG_SINGULARITY_H
#define VG_SINGULARITY_H

#include "backends/backend.h"
#include "runner/manifest/plugin.h"

/* Bind sources that need an allow rule: / and these trees (with all
 * below them). */
#define VG_SING_SYSTEM_TREES \
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", \
	"/libx32", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", \
	"/usr", "/var"

/*
 * Finds the container runtime: configured (singularity.binary) when not
 * NULL, else $VIGIL_APPTAINER, else `apptainer`, then `singularity` in
 * $PATH.  *path_out (caller frees) is an executable path; on failure it is
 * NULL and e names what is missing and how to set it (VG_ENOENT).
 */
int	vg_singularity_find(const char *configured, char **path_out,
	    struct vg_err *e);

/*
 * Runs `binary --version` (at most 10 s) and returns its first line
 * ("apptainer version 1.4.5") in *version_out (caller frees).  Blocks.
 */
int	vg_singularity_version(const char *binary, char **version_out,
	    struct vg_err *e);

/*
 * Checks one bind "src[:dst[:ro|rw]]": src absolute and existing, dst
 * absolute, options ro or rw, no ',' (apptainer's list separator).  A
 * source that resolves to / or into a system tree (VG_SING_SYSTEM_TREES)
 * needs a policy allow rule of category host-access whose match glob
 * (fnmatch(3), '*' crosses '/') matches the resolved source (the policy
 * judges it: vg_policy_host_access).  On success
 * *bind_out (caller frees) is the --bind argument with the resolved
 * source.  Fails with VG_EINVAL (bad spec, missing source) or VG_EDENIED.
 */
int	vg_singularity_check_bind(const char *spec,
	    const struct vg_policy_conf *pol, char **bind_out,
	    struct vg_err *e);

/* Checks one extra flag of singularity.flags (some have dedicated
 * settings that are validated; those are refused here). */
int	vg_singularity_check_flag(const char *flag, struct vg_err *e);

/* "--nv" when an NVIDIA device is present, "--rocm" for an AMD one, else
 * "--nv" (apptainer then warns that no GPU was found). */
const char *vg_singularity_gpu_flag(void);

/*
 * Checks singularity.add_caps: each a capability name (CAP_ prefix
 * optional, any case), and each is host access, judged by the policy
 * (vg_policy_host_access) like docker's cap_add.  On success *caps_out
 * (caller frees) is the --add-caps value ("CAP_A,CAP_B"), or NULL when
 * the list is empty.  Fails with VG_EINVAL (a bad name) or VG_EDENIED.
 */
int	vg_singularity_check_caps(const struct vg_strv *caps,
	    const struct vg_policy_conf *pol, char **caps_out,
	    struct vg_err *e);

/*
 * Builds the command line of attempt a: binary exec, the flags of the
 * singularity section, --no-privs (root's capabilities dropped inside the
 * container) and --add-caps for singularity.add_caps (checked as above),
 * --no-eval, --bind for the task directory (same path inside)
 * and scratch_dir (at scratch_mount, default /scratch) when not NULL, the
 * manifest binds (checked as above), --pwd, --env-file env_file, gpu_flag
 * when a->res.gpus > 0, then image and the task's command.  argv is
 * appended to; the caller releases it.
 */
int	vg_singularity_argv(const struct vg_attempt *a, const char *binary,
	    const char *image, const char *env_file, const char *scratch_dir,
	    const char *gpu_flag, struct vg_strv *argv, struct vg_err *e);

/*
 * Appends the environment file of attempt a to out: vg_task_env's
 * VG_ENV_ENGINE set (the task's env plus VIGIL_RUN_ID, VIGIL_TASK_INDEX,
 * VIGIL_TASK_DIR, VIGIL_ATTEMPT) and, with scratch, VIGIL_SCRATCH, one
 * NAME="value" line each (\ " $ ` escaped, read literally by apptainer's
 * --env-file reader with --no-eval).  Fails on a name that is not
 * [A-Za-z_][A-Za-z0-9_]*.
 */
int	vg_singularity_env_text(const struct vg_attempt *a,
	    const char *scratch_mount, struct vg_buf *out, struct vg_err *e);

/*
 * Converts a wait status into r.  Apptainer reports its own failures with
 * exit status 255 and a "FATAL:" line on stderr; when both are present
 * (stderr_tail holds the end of the attempt's stderr, may be NULL) r is
 * BACKEND_ERROR with the FATAL text as reason.  Otherwise exit 0 is
 * SUCCEEDED, another exit code or a signal FAILED.  Returns r->state.
 */
int	vg_singularity_classify(int wstatus, const char *stderr_tail,
	    struct vg_result *r);


struct vg_singularity_conf {
	char		*binary;	/* apptainer/singularity path */
	int		 containall;	/* default 1 */
	int		 no_home;	/* default 1 */
	int		 cleanenv;	/* default 1 */
	int		 writable_tmpfs;
	struct vg_strv	 binds;		/* "src[:dst[:ro|rw]]" */
	char		*scratch_mount;	/* default /scratch */
	char		*pwd;
	struct vg_strv	 flags;		/* extra flags, validated */
	struct vg_strv	 add_caps;	/* capabilities given back after
					 * --no-privs ("CAP_NET_RAW") */
};

/* The singularity: section, also spelt apptainer: (owned by the
 * singularity backend). */
extern const struct vg_msection vg_singularity_msection;

/* The singularity section of m (defaulted; owned by m). */
static inline struct vg_singularity_conf *
vg_singularity_of(const struct vg_manifest *m)
{
	return vg_manifest_conf(m, &vg_singularity_msection);
}

#endif
