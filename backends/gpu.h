/*
 * gpu.h - what this host (or the Slurm allocation vigil runs in) offers
 * to the tasks of a direct run: CPUs, memory and GPUs, and where each
 * figure came from.  The direct scheduler packs tasks into it, the local
 * sandbox grants the device nodes of the GPUs a task was given, and
 * `vigil doctor` prints it.
 *
 * GPUs are found in this order, the first that answers wins:
 *
 *   1. CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES
 *      in vigil's own environment (set by Slurm and other launchers
 *      inside a GPU allocation), then SLURM_STEP_GPUS / SLURM_JOB_GPUS
 *   2. the `pool.gpus` list of the site or user config (or --set)
 *   3. `nvidia-smi --query-gpu=index,uuid,name,memory.total
 *      --format=csv,noheader`, else /proc/driver/nvidia/gpus/
 *   4. AMD: /sys/class/kfd/kfd/topology/nodes/ (the nodes with a gpu_id),
 *      else `rocm-smi --showproductname --showuniqueid --csv`
 *
 * With 1. and `pool.gpus` both set, the config restricts the pool to
 * the ids both name.  CPUs: SLURM_CPUS_ON_NODE, else the CPUs vigil may
 * run on (sched_getaffinity); memory: SLURM_MEM_PER_NODE (MiB), else
 * MemTotal (inside a Slurm job without it: not limited, Slurm enforces
 * the job's); `pool.cpus` and `pool.memory` replace either.
 */
#ifndef VG_GPU_H
#define VG_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/plugin.h"

enum vg_gpu_vendor {
	VG_GPU_NVIDIA,
	VG_GPU_AMD,
};

/* One GPU a task can be given. */
struct vg_gpu {
	char		id[96];		/* as CUDA/ROCR_VISIBLE_DEVICES names
					   it: an index or a UUID */
	char		uuid[96];	/* "" when unknown */
	char		name[96];	/* "NVIDIA H200"; "" when unknown */
	uint64_t	memory;		/* bytes; 0 when unknown */
	char		dev[128];	/* its own device node (/dev/nvidia3,
					   /dev/dri/renderD129); "" unknown */
};

/* What a direct run may use. */
struct vg_pool {
	int			 cpus;
	uint64_t		 memory;	/* bytes; 0 = unknown */
	enum vg_gpu_vendor	 vendor;
	struct vg_gpu		*gpus;
	size_t			 ngpus;
	int			 unbounded;	/* the backend brings its own
						   machines (cloud): only
						   --jobs limits */
	char			 cpu_from[64];	/* where each came from */
	char			 mem_from[64];
	char			 gpu_from[96];
};

/*
 * What the allocation vigil runs in holds, as its scheduler says (its
 * op `allocation`, schedulers/scheduler.h): what is said wins over what
 * this host shows (the pool of a job is its share of the node).
 */
struct vg_alloc {
	int		 cpus;		/* 0: not said */
	uint64_t	 memory;	/* bytes; 0: not said */
	int		 memory_unknown; /* a job that holds a share of
					   memory it does not say: not the
					   node's MemTotal */
	char		 gpus[256];	/* the host's ids of its GPUs
					   ("0,2"), NVIDIA; "": not said */
	char		 cpus_from[64];	/* where each came from */
	char		 mem_from[64];
	char		 gpus_from[96];
};

/* Registers fn, which fills an allocation and returns 1 when vigil runs
 * in one (asked at each vg_pool_host; runner/core/plugins.c asks the
 * schedulers).  NULL: none. */
void	vg_pool_alloc_source(int (*fn)(struct vg_alloc *a));

/* The `pool:` section (site or user config, or --set). */
struct vg_pool_conf {
	struct vg_strv	 gpus;		/* ids; restricts or declares */
	char		*gpu_vendor;	/* "nvidia" (default) | "amd" */
	int		 cpus;		/* 0 = detected */
	uint64_t	 memory;	/* 0 = detected */
};

extern const struct vg_msection vg_pool_msection;

/* m's pool section (defaults when it names none). */
const struct vg_pool_conf *vg_pool_conf_of(const struct vg_manifest *m);

/*
 * Fills p with what this host offers, as the header comment describes;
 * conf may be NULL (no config); want_gpus 0 skips the GPU lookup.  Fails (VG_EINVAL) only on a pool.gpus
 * id that the environment's list does not hold.  Runs nvidia-smi when it
 * gets that far (at most 10 s).  Release p with vg_pool_release.
 */
int	vg_pool_host(const struct vg_pool_conf *conf, int want_gpus,
	    struct vg_pool *p, struct vg_err *e);
void	vg_pool_release(struct vg_pool *p);

/* Parses nvidia-smi's CSV (index, uuid, name, memory.total) into p's
 * GPUs; VG_EPARSE naming the line on anything else. */
int	vg_gpu_parse_smi(const char *text, struct vg_pool *p,
	    struct vg_err *e);

/* Parses the CSV of `rocm-smi --showproductname --showuniqueid --csv`
 * (a "device,..." header, then one "cardN,..." row a GPU; banner lines
 * before the header are skipped) into p's GPUs: id N, name from "Card
 * series" (else "Card model"), uuid from "Unique ID".  VG_EPARSE naming
 * the line on a row that does not match the header, or without one. */
int	vg_gpu_parse_rocm(const char *text, struct vg_pool *p,
	    struct vg_err *e);

/* Parses a CUDA_VISIBLE_DEVICES-style list ("0,1", "GPU-...,3") into
 * p's GPUs; an entry of "-1" or anything after it hides the rest, as
 * the CUDA runtime does. */
void	vg_gpu_parse_list(const char *list, enum vg_gpu_vendor vendor,
	    struct vg_pool *p);

/* The device nodes every task with GPUs of vendor needs besides its own
 * (NVIDIA: nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset,
 * nvidia-caps/...; AMD: /dev/kfd), those present on this host. */
void	vg_gpu_shared_nodes(enum vg_gpu_vendor vendor, struct vg_strv *out);

/* Appends g's id to the comma-separated ids and its device node (when
 * known) to devs, both NUL-terminated buffers of the given sizes (the
 * gpu_ids and gpu_devs of an attempt). */
void	vg_gpu_give(char *ids, size_t nids, char *devs, size_t ndevs,
	    const struct vg_gpu *g);

/* The vendor's name ("nvidia", "amd"). */
const char *vg_gpu_vendor_name(enum vg_gpu_vendor vendor);

/* Appends what p holds, one "pool ...: " line each, for `vigil doctor`. */
void	vg_pool_report(const struct vg_pool *p, struct vg_buf *out);

#endif
