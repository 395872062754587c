/*
 * test-gpu.c - the GPU inventory's parsers: nvidia-smi's CSV
 * (vg_gpu_parse_smi), CUDA_VISIBLE_DEVICES-style id lists
 * (vg_gpu_parse_list) and rocm-smi's CSV (vg_gpu_parse_rocm), each with
 * the output the tools document and with what must be refused; and the
 * pool's sources in order: the environment, pool.gpus restricting it,
 * and the rocm-smi fallback (a script on PATH printing rocm-smi's
 * documented CSV: no AMD driver runs here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/gpu.h"
#include "schedulers/scheduler.h"

/* Clears every variable the inventory reads first. */
static void
clear_env(void)
{
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("ROCR_VISIBLE_DEVICES");
	unsetenv("HIP_VISIBLE_DEVICES");
	unsetenv("SLURM_STEP_GPUS");
	unsetenv("SLURM_JOB_GPUS");
}

static void
test_smi(void **state)
{
	struct vg_pool p;
	struct vg_err e;

	(void)state;
	memset(&p, 0, sizeof(p));
	vg_err_init(&e);
	/* As `nvidia-smi --query-gpu=index,uuid,name,memory.total
	 * --format=csv,noheader` prints it. */
	assert_int_equal(vg_gpu_parse_smi("0, GPU-6f1a2b3c-aaaa-bbbb-cccc-"
	    "0123456789ab, NVIDIA H200, 143771 MiB\n"
	    "\n"
	    "  1 , GPU-77, Tesla T4 , 15 GiB\r\n"
	    "2, GPU-88, NVIDIA A100-SXM4-80GB, [N/A]\n", &p, &e), 0);
	assert_int_equal(p.ngpus, 3);
	assert_string_equal(p.gpus[0].id, "0");
	assert_string_equal(p.gpus[0].uuid,
	    "GPU-6f1a2b3c-aaaa-bbbb-cccc-0123456789ab");
	assert_string_equal(p.gpus[0].name, "NVIDIA H200");
	assert_true(p.gpus[0].memory == 143771ULL << 20);
	assert_string_equal(p.gpus[0].dev, "/dev/nvidia0");
	assert_string_equal(p.gpus[1].id, "1");
	assert_string_equal(p.gpus[1].name, "Tesla T4");
	assert_true(p.gpus[1].memory == 15ULL << 30);
	assert_true(p.gpus[2].memory == 0);	/* unknown */
	assert_string_equal(p.gpus[2].dev, "/dev/nvidia2");
	vg_pool_release(&p);

	/* A missing field, one too many, a non-numeric index. */
	assert_int_equal(vg_gpu_parse_smi("0, GPU-1, T4\n", &p, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "nvidia-smi line 1: '0, GPU-1, T4' is not "
	    "'index, uuid, name, memory.total'");
	vg_pool_release(&p);
	assert_int_equal(vg_gpu_parse_smi("0, a, b, 1 MiB\n0, a, b, c, d\n",
	    &p, &e), VG_EPARSE);
	assert_string_equal(e.msg, "nvidia-smi line 2: '0, a, b, c, d' is not 'index, "
	    "uuid, name, memory.total'");
	vg_pool_release(&p);
	assert_int_equal(vg_gpu_parse_smi("No devices were found\n", &p, &e),
	    VG_EPARSE);
	assert_int_equal(vg_gpu_parse_smi("x, a, b, 1 MiB\n", &p, &e),
	    VG_EPARSE);
	vg_pool_release(&p);
	/* Nothing at all is no GPU, not an error. */
	assert_int_equal(vg_gpu_parse_smi("", &p, &e), 0);
	assert_int_equal(p.ngpus, 0);
	vg_pool_release(&p);
}

static void
test_list(void **state)
{
	struct vg_pool p;

	(void)state;
	memset(&p, 0, sizeof(p));
	vg_gpu_parse_list(" 0, 2 ,,GPU-abc,3", VG_GPU_NVIDIA, &p);
	assert_int_equal(p.ngpus, 4);
	assert_string_equal(p.gpus[0].id, "0");
	assert_string_equal(p.gpus[1].id, "2");
	assert_string_equal(p.gpus[1].dev, "/dev/nvidia2");
	assert_string_equal(p.gpus[2].id, "GPU-abc");
	assert_string_equal(p.gpus[2].uuid, "GPU-abc");
	assert_string_equal(p.gpus[2].dev, "");	/* unknown from a UUID */
	assert_string_equal(p.gpus[3].id, "3");
	vg_pool_release(&p);
	/* -1 (and NoDevFiles) hide everything after, as CUDA does. */
	vg_gpu_parse_list("1,-1,2", VG_GPU_NVIDIA, &p);
	assert_int_equal(p.ngpus, 1);
	vg_pool_release(&p);
	vg_gpu_parse_list("NoDevFiles", VG_GPU_NVIDIA, &p);
	vg_gpu_parse_list("", VG_GPU_NVIDIA, &p);
	assert_int_equal(p.ngpus, 0);
	/* AMD render nodes follow the GPU order from 128. */
	vg_gpu_parse_list("0,1", VG_GPU_AMD, &p);
	assert_string_equal(p.gpus[1].dev, "/dev/dri/renderD129");
	vg_pool_release(&p);
}

/* As `rocm-smi --showproductname --showuniqueid --csv` prints it. */
static const char rocm_csv[] =
    "\n"
    "============================ ROCm System Management Interface "
    "============================\n"
    "device,Unique ID,Card series,Card model,Card vendor,Card SKU\n"
    "card0,0x18d4f1a2c24a0b8e,AMD Instinct MI210,0x740f,"
    "Advanced Micro Devices Inc. [AMD/ATI],D67301\n"
    "card1,N/A,AMD Instinct MI210,0x740f,"
    "Advanced Micro Devices Inc. [AMD/ATI],D67301\n"
    "============================ End of ROCm SMI Log "
    "============================\n";

static void
test_rocm(void **state)
{
	struct vg_pool p;
	struct vg_err e;

	(void)state;
	memset(&p, 0, sizeof(p));
	vg_err_init(&e);
	assert_int_equal(vg_gpu_parse_rocm(rocm_csv, &p, &e), 0);
	assert_int_equal(p.ngpus, 2);
	assert_string_equal(p.gpus[0].id, "0");
	assert_string_equal(p.gpus[0].uuid, "0x18d4f1a2c24a0b8e");
	assert_string_equal(p.gpus[0].name, "AMD Instinct MI210");
	assert_string_equal(p.gpus[0].dev, "/dev/dri/renderD128");
	assert_string_equal(p.gpus[1].uuid, "");
	assert_string_equal(p.gpus[1].dev, "/dev/dri/renderD129");
	vg_pool_release(&p);
	/* --showproductname alone: the model when there is no series. */
	assert_int_equal(vg_gpu_parse_rocm("device,Card model\ncard3,gfx90a\n",
	    &p, &e), 0);
	assert_int_equal(p.ngpus, 1);
	assert_string_equal(p.gpus[0].id, "3");
	assert_string_equal(p.gpus[0].name, "gfx90a");
	vg_pool_release(&p);
	/* A row that does not match its header; no header at all. */
	assert_int_equal(vg_gpu_parse_rocm("device,Unique ID\ncard0\n", &p,
	    &e), VG_EPARSE);
	assert_string_equal(e.msg, "rocm-smi line 2: 'card0' does not match "
	    "its header (2 fields, the first cardN)");
	vg_pool_release(&p);
	assert_int_equal(vg_gpu_parse_rocm("device,Unique ID\ncardX,1\n", &p,
	    &e), VG_EPARSE);
	vg_pool_release(&p);
	assert_int_equal(vg_gpu_parse_rocm("ERROR: no GPUs\n", &p, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "rocm-smi: no 'device,...' CSV header in "
	    "its output");
	assert_int_equal(p.ngpus, 0);
	vg_pool_release(&p);
}

static void
test_pool_env(void **state)
{
	struct vg_pool_conf conf;
	struct vg_pool p;
	struct vg_err e;
	char buf[64] = "", devs[128] = "";

	(void)state;
	clear_env();
	memset(&conf, 0, sizeof(conf));
	vg_err_init(&e);
	setenv("CUDA_VISIBLE_DEVICES", "0,2,3", 1);
	assert_int_equal(vg_pool_host(NULL, 1, &p, &e), 0);
	assert_int_equal(p.ngpus, 3);
	assert_string_equal(p.gpu_from, "CUDA_VISIBLE_DEVICES=0,2,3");
	vg_gpu_give(buf, sizeof(buf), devs, sizeof(devs), &p.gpus[1]);
	vg_gpu_give(buf, sizeof(buf), devs, sizeof(devs), &p.gpus[2]);
	assert_string_equal(buf, "2,3");
	assert_string_equal(devs, "/dev/nvidia2,/dev/nvidia3");
	vg_pool_release(&p);
	/* pool.gpus restricts the environment's list... */
	vg_strv_push(&conf.gpus, "3");
	vg_strv_push(&conf.gpus, "0");
	assert_int_equal(vg_pool_host(&conf, 1, &p, &e), 0);
	assert_int_equal(p.ngpus, 2);
	vg_pool_release(&p);
	/* ...and may not name an id it does not hold. */
	vg_strv_push(&conf.gpus, "7");
	assert_int_equal(vg_pool_host(&conf, 1, &p, &e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "7"));
	vg_strv_release(&conf.gpus);
	/* Without a GPU ask nothing is looked up. */
	assert_int_equal(vg_pool_host(NULL, 0, &p, &e), 0);
	assert_int_equal(p.ngpus, 0);
	assert_string_equal(p.gpu_from, "not looked up");
	vg_pool_release(&p);
	clear_env();
}

/* Writes an executable script at dir/name printing text. */
static void
fake_tool(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "#!/bin/sh\ncat <<'EOF'\n%sEOF\n", text);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

static void
test_pool_rocm_smi(void **state)
{
	char dir[] = "/tmp/vg-test-gpu-XXXXXX", path[600];
	const char *old = getenv("PATH");
	char *saved = old != NULL ? strdup(old) : NULL;
	struct vg_pool p;
	struct vg_err e;

	(void)state;
	if (access("/proc/driver/nvidia/gpus", F_OK) == 0 ||
	    access("/sys/class/kfd", F_OK) == 0) {
		free(saved);
		/* a real driver answers before rocm-smi */
		printf("skipped: this host has a GPU driver, which answers "
		    "before rocm-smi\n");
		skip();
	}
	clear_env();
	assert_non_null(mkdtemp(dir));
	fake_tool(dir, "rocm-smi", rocm_csv + 1);
	snprintf(path, sizeof(path), "%s:/bin:/usr/bin", dir);
	setenv("PATH", path, 1);
	vg_err_init(&e);
	assert_int_equal(vg_pool_host(NULL, 1, &p, &e), 0);
	assert_string_equal(p.gpu_from, "rocm-smi");
	assert_int_equal(p.vendor, VG_GPU_AMD);
	assert_int_equal(p.ngpus, 2);
	assert_string_equal(p.gpus[1].dev, "/dev/dri/renderD129");
	vg_pool_release(&p);
	/* Output it cannot parse is no GPU, and says where it looked. */
	fake_tool(dir, "rocm-smi", "garbage\n");
	assert_int_equal(vg_pool_host(NULL, 1, &p, &e), 0);
	assert_int_equal(p.ngpus, 0);
	assert_non_null(strstr(p.gpu_from, "rocm-smi"));
	vg_pool_release(&p);
	if (saved != NULL)
		setenv("PATH", saved, 1);
	free(saved);
	snprintf(path, sizeof(path), "%s/rocm-smi", dir);
	unlink(path);
	rmdir(dir);
}

/* The pool takes what the scheduler says of the allocation vigil runs
 * in (the schedulers' op `allocation`): Slurm's CPUs, memory and the
 * host's GPU ids; Grid Engine's slots; nothing outside a job. */
static void
test_pool_alloc(void **state)
{
	struct vg_pool p;
	struct vg_alloc a;
	struct vg_err e;

	(void)state;
	clear_env();
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_CPUS_ON_NODE");
	unsetenv("SLURM_MEM_PER_NODE");
	unsetenv("JOB_ID");
	memset(&a, 0, sizeof(a));
	assert_int_equal(vg_scheduler_slurm.allocation(&a), 0);
	assert_int_equal(vg_scheduler_gridengine.allocation(&a), 0);
	setenv("SLURM_JOB_ID", "7", 1);
	setenv("SLURM_CPUS_ON_NODE", "6", 1);
	setenv("SLURM_JOB_GPUS", "2,3", 1);
	assert_int_equal(vg_scheduler_slurm.allocation(&a), 1);
	assert_int_equal(a.cpus, 6);
	assert_int_equal(a.memory_unknown, 1);
	assert_string_equal(a.gpus, "2,3");
	vg_pool_alloc_source(vg_scheduler_slurm.allocation);
	vg_err_init(&e);
	assert_int_equal(vg_pool_host(NULL, 1, &p, &e), 0);
	assert_int_equal(p.cpus, 6);
	assert_string_equal(p.cpu_from, "SLURM_CPUS_ON_NODE");
	assert_int_equal(p.memory, 0);
	assert_int_equal(p.ngpus, 2);
	assert_string_equal(p.gpu_from, "SLURM_JOB_GPUS=2,3");
	vg_pool_release(&p);
	/* Slurm renumbers CUDA_VISIBLE_DEVICES; the device nodes are the
	 * host's. */
	setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
	setenv("SLURM_MEM_PER_NODE", "2048", 1);
	assert_int_equal(vg_pool_host(NULL, 1, &p, &e), 0);
	assert_int_equal(p.memory, 2048ULL << 20);
	assert_int_equal(p.ngpus, 2);
	assert_string_equal(p.gpus[1].dev, "/dev/nvidia3");
	vg_pool_release(&p);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_CPUS_ON_NODE");
	unsetenv("SLURM_MEM_PER_NODE");
	unsetenv("SLURM_JOB_GPUS");
	unsetenv("CUDA_VISIBLE_DEVICES");
	setenv("JOB_ID", "12", 1);
	setenv("SGE_ROOT", "/tmp", 1);
	setenv("NSLOTS", "3", 1);
	vg_pool_alloc_source(vg_scheduler_gridengine.allocation);
	assert_int_equal(vg_pool_host(NULL, 0, &p, &e), 0);
	assert_int_equal(p.cpus, 3);
	assert_string_equal(p.cpu_from, "NSLOTS");
	vg_pool_release(&p);
	unsetenv("JOB_ID");
	unsetenv("SGE_ROOT");
	unsetenv("NSLOTS");
	vg_pool_alloc_source(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smi),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_rocm),
		cmocka_unit_test(test_pool_env),
		cmocka_unit_test(test_pool_rocm_smi),
		cmocka_unit_test(test_pool_alloc),
	};

	return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
