/*
 * fuzz-ssh-usage.c - the reader of the usage file the ssh backend's
 * remote wrapper writes (time(1)'s lines and the `times` builtin's),
 * which comes from the remote host.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/ssh-remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_usage u;

	memset(&u, 0, sizeof(u));
	(void)vg_ssh_usage_parse((const char *)data, size, &u);
	return 0;
}
