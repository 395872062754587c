/*
 * fuzz-modal-grpc.c - libFuzzer harness for what the modal backend reads
 * from the network and from ~/.modal.toml: the gRPC deframer (fed in two
 * pieces), the status lines and RPCStatus details of trailers, the
 * replies' protobuf decoders, and the TOML reader.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/modal.h"

/* Decodes each framed message as a log batch. */
static int
msg(void *arg, const uint8_t *p, size_t n)
{
	Modal__Client__TaskLogsBatch *b;

	(void)arg;
	if ((b = modal__client__task_logs_batch__unpack(NULL, n, p)) != NULL)
		modal__client__task_logs_batch__free_unpacked(b, NULL);
	return 0;
}

/* Ignores TOML keys. */
static int
key(void *arg, const char *t, const char *k, const char *v, int b)
{
	(void)arg, (void)t, (void)k, (void)v, (void)b;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input, every reader. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_grpc_deframer d;
	struct vg_grpc_status st = { .code = -1 };
	struct vg_err e;
	size_t half = size / 2;

	vg_grpc_deframer_init(&d, 1 << 16, msg, NULL);
	(void)vg_grpc_deframe(&d, (const char *)data, half);
	(void)vg_grpc_deframe(&d, (const char *)data + half, size - half);
	vg_grpc_deframer_release(&d);
	vg_grpc_status_line(&st, (const char *)data, size);
	(void)vg_grpc_status_details(data, size, &st);
	vg_err_init(&e);
	(void)vg_modal_toml((const char *)data, size, key, NULL, &e);
	return 0;
}
