/*
 * fuzz-modal-replies.c - libFuzzer harness for the protobuf replies the
 * modal backend decodes: the first byte picks the message (every reply
 * vigil reads from Modal's API), the rest is fed to its generated unpack
 * function and, where vigil looks further, to vigil's own reading of it
 * (vg_modal_result on a GenericResult, the image join and log batch
 * readers, a listed sandbox's tags, an RPCStatus's retry policy, an
 * exec's output batches and a file operation's output).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backends/modal.h"

static const ProtobufCMessageDescriptor *const replies[] = {
	&modal__client__client_hello_response__descriptor,
	&modal__client__app_get_or_create_response__descriptor,
	&modal__client__image_get_or_create_response__descriptor,
	&modal__client__image_join_streaming_response__descriptor,
	&modal__client__secret_get_or_create_response__descriptor,
	&modal__client__sandbox_create_response__descriptor,
	&modal__client__task_logs_batch__descriptor,
	&modal__client__sandbox_wait_response__descriptor,
	&modal__client__sandbox_terminate_response__descriptor,
	&modal__client__sandbox_list_response__descriptor,
	&modal__client__rpcstatus__descriptor,
	&modal__client__rpcretry_policy__descriptor,
	&modal__client__sandbox_get_task_id_response__descriptor,
	&modal__client__container_exec_response__descriptor,
	&modal__client__runtime_output_batch__descriptor,
	&modal__client__container_exec_wait_response__descriptor,
	&modal__client__container_filesystem_exec_response__descriptor,
	&modal__client__filesystem_runtime_output_batch__descriptor,
};

/* Takes log bytes, touching each so the sanitizers see them read. */
static int
sink(void *arg, const char *p, size_t n)
{
	size_t *sum = arg, i;

	for (i = 0; i < n; i++)
		*sum += (unsigned char)p[i];
	return 0;
}

/* vigil's reading of a GenericResult (may be NULL). */
static void
result(const Modal__Client__GenericResult *g)
{
	struct vg_err e;
	long code;
	int ended;

	vg_err_init(&e);
	(void)vg_modal_result(g, &ended, &code, &e);
}

/* What vigil does with a decoded message m of descriptor d. */
static void
look(const ProtobufCMessageDescriptor *d, const ProtobufCMessage *m)
{
	const char *want[3];
	size_t i;

	if (d == &modal__client__sandbox_wait_response__descriptor)
		result(((const Modal__Client__SandboxWaitResponse *)m)->result);
	else if (d == &modal__client__image_get_or_create_response__descriptor)
		result(((const Modal__Client__ImageGetOrCreateResponse *)m)->
		    result);
	else if (d == &modal__client__sandbox_terminate_response__descriptor)
		result(((const Modal__Client__SandboxTerminateResponse *)m)->
		    existing_result);
	else if (d == &modal__client__sandbox_get_task_id_response__descriptor)
		result(((const Modal__Client__SandboxGetTaskIdResponse *)m)->
		    task_result);
	else if (d == &modal__client__sandbox_list_response__descriptor) {
		const Modal__Client__SandboxListResponse *l =
		    (const Modal__Client__SandboxListResponse *)m;

		for (i = 0; i < l->n_sandboxes; i++)
			vg_modal_sandbox_tags(l->sandboxes[i], want);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: a selector byte and a message. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const ProtobufCMessageDescriptor *d;
	ProtobufCMessage *m;
	struct vg_modal_join j = { 0 };
	struct vg_grpc_status st = { .code = -1 };
	char entry[128] = "";
	unsigned long long batch = 0;
	size_t items, sum = 0;
	int eof = 0;

	if (size < 1)
		return 0;
	d = replies[data[0] % (sizeof(replies) / sizeof(*replies))];
	data++;
	size--;
	if ((m = protobuf_c_message_unpack(d, NULL, size, data)) != NULL) {
		look(d, m);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	if (d == &modal__client__image_join_streaming_response__descriptor)
		(void)vg_modal_join_msg(&j, data, size);
	else if (d == &modal__client__task_logs_batch__descriptor)
		(void)vg_modal_logs_batch(data, size, sink, &sum, entry,
		    sizeof(entry), &eof, &items);
	else if (d == &modal__client__rpcstatus__descriptor)
		(void)vg_grpc_status_details(data, size, &st);
	else if (d == &modal__client__runtime_output_batch__descriptor)
		(void)vg_modal_exec_batch(data, size, sink, &sum, &batch, &eof,
		    &items);
	else if (d ==
	    &modal__client__filesystem_runtime_output_batch__descriptor)
		(void)vg_modal_fs_batch(data, size, sink, &sum, &eof, entry,
		    sizeof(entry));
	return 0;
}
