/*
 * fuzz-sif.c - libFuzzer harness for the SIF header, descriptor and
 * partition checks (sif-cache/sif.c), which read files pulled from the
 * network.  Seeds: tests/fuzz/corpus/fuzz-sif/ (small real images written by
 * siftool around a mksquashfs image, and damaged copies).
 */
#include <stddef.h>
#include <stdint.h>

#include "sif-cache/sif.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_sif_header h;
	struct vg_sif_descr d;
	struct vg_err e;
	int used;

	vg_err_init(&e);
	(void)vg_sif_check_mem(data, size, NULL, &e);
	(void)vg_sif_check_mem(data, size, "04", &e);
	(void)vg_sif_parse_header(data, size, &h, &e);
	(void)vg_sif_parse_descr(data, size, &d, &used, &e);
	return 0;
}
