/*
 * fuzz-shim-launch.c - libFuzzer harness for the launch description
 * reader (backends/shim-launch.c) that vigil-shim runs on whatever
 * arrives on its fd 3.  The input is copied to an aligned buffer as the
 * shim receives it; every accepted blob must keep its strings and
 * seccomp program inside the input, which is read here to prove it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/shim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct vg_shim_launch *l;
	const uint32_t *offs;
	char why[160];
	volatile size_t sum = 0;
	uint64_t *buf;
	size_t i;

	if (size > VG_SHIM_MAX_SIZE + 8)
		return 0;
	/* A copy sized exactly, so ASan sees any read past the end. */
	buf = malloc(size > 0 ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (vg_shim_launch_check(buf, size, why, sizeof(why)) == 0) {
		l = (const struct vg_shim_launch *)buf;
		offs = &l->exec_path;
		for (i = 0; i < 5; i++)
			if (vg_shim_launch_str(l, offs[i]) != NULL)
				sum += strlen(vg_shim_launch_str(l, offs[i]));
		for (i = 0; i < (size_t)l->nbpf * 8; i++)
			sum += ((const unsigned char *)buf)[l->bpf_off + i];
		/* An executor's argv and environment, as it reads them. */
		if (l->argc > 0 || l->envc > 0) {
			static char *v[VG_SHIM_MAX_ARGV + 1];

			vg_shim_launch_strv(l, l->argv_off, l->argc, v);
			for (i = 0; v[i] != NULL; i++)
				sum += strlen(v[i]);
			vg_shim_launch_strv(l, l->env_off, l->envc, v);
			for (i = 0; v[i] != NULL; i++)
				sum += strlen(v[i]);
		}
	} else if (memchr(why, '\0', sizeof(why)) == NULL)
		abort();
	free(buf);
	return 0;
}
