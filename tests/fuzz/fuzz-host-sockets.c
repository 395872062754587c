/*
 * fuzz-host-sockets.c - libFuzzer harness for the parser of
 * /proc/net/unix (vg_host_sockets_parse), whose paths any local user
 * chooses, and the judgement of control sockets on what it returns.
 * Whatever the text, the parser must neither crash nor read past len,
 * and every path it returns starts with '/' and holds no newline.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/host-sockets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_strv v = VG_STRV_INIT;
	unsigned long ino[64];
	size_t i;

	if (size > 65536)
		return 0;
	(void)vg_host_sockets_parse((const char *)data, size, 64, &v, ino);
	for (i = 0; i < v.n; i++) {
		if (v.v[i][0] != '/' || strchr(v.v[i], '\n') != NULL)
			abort();
		(void)vg_host_socket_is_control(v.v[i]);
	}
	vg_strv_release(&v);
	return 0;
}
