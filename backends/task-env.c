/*
 * task-env.c - the one builder of an attempt's environment, used by
 * every backend.  The task never inherits vigil's environment: it gets
 * a small base of host variables, the task's env (manifest env and
 * VIGIL_MATRIX_*), then vigil's per-attempt variables, in that order
 * (a later entry wins where the consumer keeps the last one).  How much
 * of that applies depends on where the task runs (enum vg_env_where):
 *
 *   variable                      host   image   engine   remote
 *   PATH (vigil's, else default)   yes    -       -        -
 *   HOME USER LOGNAME TMPDIR       set    -       -        -
 *   LANG LC_ALL TZ                 set    set     -        -
 *   task env                       yes    yes     yes      yes
 *   VIGIL_RUN_ID VIGIL_TASK_INDEX  yes    yes     yes      yes
 *   VIGIL_TASK_DIR                 yes    yes     yes      -
 *   VIGIL_ATTEMPT                  yes    yes     yes      yes
 *   VIGIL_SCRATCH_DIR              set    set     -        -
 *   VIGIL_GPUS                     gpu    gpu     gpu      gpu
 *   CUDA_VISIBLE_DEVICES (or       gpu    -       gpu      gpu
 *     ROCR_/HIP_VISIBLE_DEVICES)
 *
 * "gpu": when the scheduler assigned GPUs (a->gpu_set), their ids; a
 * task given none gets CUDA_VISIBLE_DEVICES (and ROCR_VISIBLE_DEVICES)
 * set empty, which hides every GPU.  In an image the engine maps the
 * assigned devices (docker's DeviceRequests) and renumbers them from 0,
 * so the host's ids would be wrong there: only VIGIL_GPUS says them.
 * Without an assignment (Slurm sets the variables itself in the job,
 * a cloud sandbox or an image has its own) a task without gpus still
 * gets CUDA_VISIBLE_DEVICES empty where it sees the host's devices.
 *
 * "set": when vigil has it (or the attempt has a scratch directory).
 * An image (docker, daytona, vercel, modal) has its own PATH, home and
 * user, so the host's identity and paths stay out unless the task sets
 * them itself; the locale follows the user.  Apptainer (engine) decides
 * itself what of the host environment passes (singularity.cleanenv) and
 * mounts scratch under its own name, VIGIL_SCRATCH.  A remote login
 * (ssh) brings its own base, and the remote wrapper sets VIGIL_TASK_DIR
 * to the attempt directory there.  Task and scratch directories are
 * bound at the same path in images and engines, so the host's paths are
 * the ones seen inside.
 */
#include <stdlib.h>

#include "backends/backend.h"
#include "backends/gpu.h"

/* The host variables passed and the VIGIL_* ones set, per place. */
#define ENV_PATH	0x01	/* PATH, defaulted */
#define ENV_IDENTITY	0x02	/* HOME USER LOGNAME TMPDIR */
#define ENV_LOCALE	0x04	/* LANG LC_ALL TZ */
#define ENV_TASK_DIR	0x08	/* VIGIL_TASK_DIR */
#define ENV_SCRATCH	0x10	/* VIGIL_SCRATCH_DIR */
#define ENV_GPU_IDS	0x20	/* CUDA_/ROCR_/HIP_VISIBLE_DEVICES */

static const unsigned env_parts[] = {
	[VG_ENV_HOST] = ENV_PATH | ENV_IDENTITY | ENV_LOCALE | ENV_TASK_DIR |
	    ENV_SCRATCH | ENV_GPU_IDS,
	[VG_ENV_IMAGE] = ENV_LOCALE | ENV_TASK_DIR | ENV_SCRATCH,
	[VG_ENV_ENGINE] = ENV_TASK_DIR | ENV_GPU_IDS,
	[VG_ENV_REMOTE] = ENV_GPU_IDS,
};

/* Host variables passed when set, with the part each belongs to. */
static const struct {
	const char	*name;
	unsigned	 part;
} env_base[] = {
	{ .name = "HOME", .part = ENV_IDENTITY },
	{ .name = "LANG", .part = ENV_LOCALE },
	{ .name = "LC_ALL", .part = ENV_LOCALE },
	{ .name = "USER", .part = ENV_IDENTITY },
	{ .name = "LOGNAME", .part = ENV_IDENTITY },
	{ .name = "TZ", .part = ENV_LOCALE },
	{ .name = "TMPDIR", .part = ENV_IDENTITY },
};

const char *const vg_task_env_caller[] = {
	"PATH", "HOME", "LANG", "LC_ALL", "USER", "LOGNAME", "TZ", "TMPDIR",
	NULL,
};

/* Appends the GPU variables of a (the table above). */
static void
gpu_env(const struct vg_attempt *a, unsigned parts, struct vg_strv *out)
{
	if (!a->gpu_set) {
		if (a->res.gpus <= 0 && (parts & ENV_GPU_IDS))
			vg_strv_push(out, "CUDA_VISIBLE_DEVICES=");
		return;
	}
	vg_strv_pushf(out, "VIGIL_GPUS=%s", a->gpu_ids);
	if (!(parts & ENV_GPU_IDS)) {
		if (a->gpu_ids[0] == '\0')
			vg_strv_push(out, "CUDA_VISIBLE_DEVICES=");
		return;
	}
	if (a->gpu_vendor == VG_GPU_AMD && a->gpu_ids[0] != '\0') {
		/* HIP numbers what ROCR left visible from 0 (and reads
		 * CUDA_VISIBLE_DEVICES too, so that one stays unset). */
		vg_strv_pushf(out, "ROCR_VISIBLE_DEVICES=%s", a->gpu_ids);
		return;
	}
	vg_strv_pushf(out, "CUDA_VISIBLE_DEVICES=%s", a->gpu_ids);
	if (a->gpu_ids[0] == '\0')
		vg_strv_push(out, "ROCR_VISIBLE_DEVICES=");
}

/* Appends the environment of attempt a as the task sees it at where. */
void
vg_task_env(const struct vg_attempt *a, enum vg_env_where where,
    struct vg_strv *out)
{
	unsigned parts = env_parts[where];
	const char *v;
	size_t i;

	if (parts & ENV_PATH) {
		v = getenv("PATH");
		vg_strv_pushf(out, "PATH=%s", v != NULL && *v != '\0' ? v :
		    "/usr/local/bin:/usr/bin:/bin");
	}
	for (i = 0; i < sizeof(env_base) / sizeof(env_base[0]); i++)
		if ((parts & env_base[i].part) &&
		    (v = getenv(env_base[i].name)) != NULL)
			vg_strv_pushf(out, "%s=%s", env_base[i].name, v);
	if (a->task != NULL)
		for (i = 0; i < a->task->env.n; i++)
			vg_strv_pushf(out, "%s=%s", a->task->env.v[i].key,
			    a->task->env.v[i].value);
	if (a->run_id != NULL)
		vg_strv_pushf(out, "VIGIL_RUN_ID=%s", a->run_id);
	if (a->task != NULL)
		vg_strv_pushf(out, "VIGIL_TASK_INDEX=%d", a->task->index);
	if ((parts & ENV_TASK_DIR) && a->task_dir != NULL)
		vg_strv_pushf(out, "VIGIL_TASK_DIR=%s", a->task_dir);
	vg_strv_pushf(out, "VIGIL_ATTEMPT=%d", a->attempt);
	if ((parts & ENV_SCRATCH) && a->scratch_dir != NULL)
		vg_strv_pushf(out, "VIGIL_SCRATCH_DIR=%s", a->scratch_dir);
	gpu_env(a, parts, out);
}

/* The environment of a task that runs on this host. */
void
vg_attempt_env(const struct vg_attempt *a, struct vg_strv *out)
{
	vg_task_env(a, VG_ENV_HOST, out);
}
