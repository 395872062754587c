/*
 * fuzz-sess-jobrec.c - the reader of a session job's record
 * (sessions/<id>/cmds/<job>/job), which the session's own commands can
 * write: any bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "runner/core/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_sess_jobrec jr;

	vg_sess_jobrec_parse((const char *)data, size, &jr);
	return 0;
}
