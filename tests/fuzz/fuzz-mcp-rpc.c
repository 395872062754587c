/*
 * fuzz-mcp-rpc.c - libFuzzer harness for the JSON-RPC reader of vigil mcp
 * (runner/cli/mcp-rpc.c), which reads whatever a client sends.  A message
 * read has a kind that fits its fields (a request has an id and a
 * method, a notification a method and no id); the reply to it (an error
 * when it was refused) must parse back as one JSON object with the same
 * id.  Seeds: tests/fuzz/corpus/fuzz-mcp-rpc/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vg_rpc_msg m;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_json_doc *doc;
	struct vg_err e;
	int code;

	vg_err_init(&e);
	code = vg_rpc_read((const char *)data, size, &m, &e);
	if (code == 0) {
		if (m.kind == VG_RPC_REQUEST && (m.id == NULL ||
		    m.method == NULL))
			abort();
		if (m.kind == VG_RPC_NOTIFICATION && (m.id != NULL ||
		    m.method == NULL))
			abort();
		if (m.params != NULL && m.params->type != VG_JSON_OBJECT)
			abort();
		if (m.id != NULL)
			vg_rpc_write_result(&out, m.id, "{}");
	} else {
		if (e.msg[0] == '\0')
			abort();	/* a refusal always says why */
		vg_rpc_write_error(&out, m.id, code, e.msg);
	}
	if (out.len > 0) {
		vg_err_init(&e);
		if (vg_json_parse(out.data, out.len - 1, NULL, &doc, &e) != 0)
			abort();
		if (vg_json_root(doc)->type != VG_JSON_OBJECT ||
		    vg_json_get(vg_json_root(doc), "id") == NULL)
			abort();
		vg_json_free(doc);
	}
	vg_rpc_msg_release(&m);
	vg_buf_release(&out);
	return 0;
}
