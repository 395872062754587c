/*
 * fuzz-result.c - the result record reader (result.json written by
 * monitors and task-exec on compute nodes).
 */
#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_result r;
	struct vg_err e;

	vg_err_init(&e);
	vg_result_parse((const char *)data, size, &r, &e);
	return 0;
}
