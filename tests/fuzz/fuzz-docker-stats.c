/*
 * fuzz-docker-stats.c - the reader of the Docker Engine API's stats
 * replies (GET /containers/ID/stats), which the docker backend samples
 * for accounting, and the merge of one sample into the maxima.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/docker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_docker_stats s, acc;
	struct vg_err e;

	memset(&acc, 0, sizeof(acc));
	vg_err_init(&e);
	if (vg_docker_stats_parse((const char *)data, size, &s, &e) == 0)
		vg_docker_stats_merge(&acc, &s);
	return 0;
}
