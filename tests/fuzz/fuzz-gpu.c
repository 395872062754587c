/*
 * fuzz-gpu.c - libFuzzer harness for the GPU inventory's parsers of what
 * tools and launchers hand vigil: nvidia-smi's CSV (vg_gpu_parse_smi),
 * CUDA_VISIBLE_DEVICES-style id lists (vg_gpu_parse_list) and rocm-smi's
 * CSV (vg_gpu_parse_rocm).  Whatever they are given, the parsers must
 * neither crash nor read out of bounds, and every GPU they return has
 * a non-empty, NUL-terminated id.  The first byte picks the parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_pool p;
	struct vg_err e;
	char *text;
	size_t i;

	if (size < 1 || size > 65536)
		return 0;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	memset(&p, 0, sizeof(p));
	vg_err_init(&e);
	switch (data[0] % 4) {
	case 0:
		(void)vg_gpu_parse_smi(text, &p, &e);
		break;
	case 1:
		vg_gpu_parse_list(text, VG_GPU_NVIDIA, &p);
		break;
	case 2:
		vg_gpu_parse_list(text, VG_GPU_AMD, &p);
		break;
	default:
		(void)vg_gpu_parse_rocm(text, &p, &e);
		break;
	}
	for (i = 0; i < p.ngpus; i++)
		if (strnlen(p.gpus[i].id, sizeof(p.gpus[i].id)) ==
		    sizeof(p.gpus[i].id))
			abort();
	vg_pool_release(&p);
	free(text);
	return 0;
}
