/*
 * mcp-rpc.c - JSON-RPC 2.0 messages of vigil mcp: reads one message (a
 * line of the stdio transport, the body of an HTTP POST) from untrusted
 * bytes on the project's bounded parser and writes replies and
 * notifications as single lines.  Batches (JSON arrays) are refused:
 * the protocol revisions served do not use them.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/cli/mcp.h"

/* Limits for one message: a command, a manifest path, a few options. */
static const struct vg_json_limits rpc_limits = {
	.max_bytes = VG_RPC_MAX_MESSAGE,
	.max_depth = 32,
	.max_values = 65536,
};

/* The id as JSON text when it is a string or a number; else NULL. */
static char *
id_text(const struct vg_json_value *id)
{
	struct vg_json_writer w;
	struct vg_buf b = VG_BUF_INIT;

	if (id == NULL || (id->type != VG_JSON_STRING &&
	    id->type != VG_JSON_NUMBER))
		return NULL;
	vg_json_writer_init(&w, &b);
	vg_json_value_write(&w, id);
	return vg_buf_detach(&b);
}

int
vg_rpc_read(const char *text, size_t len, struct vg_rpc_msg *m,
    struct vg_err *e)
{
	const struct vg_json_value *root, *v, *id;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = vg_json_parse(text, len, &rpc_limits, &m->doc, e)) != 0) {
		vg_err_prefix(e, "parse error: ");
		return VG_RPC_PARSE_ERROR;
	}
	root = vg_json_root(m->doc);
	if (root->type == VG_JSON_ARRAY) {
		vg_err_set(e, VG_EINVAL, "batches (JSON arrays) are not "
		    "supported: send one object per message");
		return VG_RPC_INVALID_REQUEST;
	}
	if (root->type != VG_JSON_OBJECT) {
		vg_err_set(e, VG_EINVAL, "a message is a JSON object");
		return VG_RPC_INVALID_REQUEST;
	}
	id = vg_json_get(root, "id");
	m->id = id_text(id);
	v = vg_json_get(root, "jsonrpc");
	if (v == NULL || v->type != VG_JSON_STRING || strcmp(v->str, "2.0")
	    != 0) {
		vg_err_set(e, VG_EINVAL, "field 'jsonrpc' must be \"2.0\"");
		return VG_RPC_INVALID_REQUEST;
	}
	if (id != NULL && m->id == NULL && id->type != VG_JSON_NULL) {
		vg_err_set(e, VG_EINVAL, "field 'id' must be a string or a "
		    "number");
		return VG_RPC_INVALID_REQUEST;
	}
	v = vg_json_get(root, "method");
	if (v == NULL) {
		if (m->id != NULL && (vg_json_get(root, "result") != NULL ||
		    vg_json_get(root, "error") != NULL)) {
			m->kind = VG_RPC_RESPONSE;
			return 0;
		}
		vg_err_set(e, VG_EINVAL, "field 'method' is missing");
		return VG_RPC_INVALID_REQUEST;
	}
	if (v->type != VG_JSON_STRING || v->len == 0) {
		vg_err_set(e, VG_EINVAL, "field 'method' must be a non-empty "
		    "string");
		return VG_RPC_INVALID_REQUEST;
	}
	m->method = v->str;
	m->kind = id == NULL ? VG_RPC_NOTIFICATION : VG_RPC_REQUEST;
	v = vg_json_get(root, "params");
	if (v != NULL && v->type != VG_JSON_OBJECT) {
		vg_err_set(e, VG_EINVAL, "field 'params' must be an object");
		return VG_RPC_INVALID_PARAMS;
	}
	m->params = v;
	if (m->kind == VG_RPC_REQUEST && m->id == NULL) {
		vg_err_set(e, VG_EINVAL, "field 'id' of a request must be a "
		    "string or a number");
		return VG_RPC_INVALID_REQUEST;
	}
	return 0;
}

void
vg_rpc_msg_release(struct vg_rpc_msg *m)
{
	vg_json_free(m->doc);
	free(m->id);
	memset(m, 0, sizeof(*m));
}

/* Starts a message line: {"jsonrpc":"2.0", */
static void
begin(struct vg_buf *out)
{
	vg_buf_adds(out, "{\"jsonrpc\":\"2.0\",");
}

void
vg_rpc_write_result(struct vg_buf *out, const char *id, const char *result)
{
	begin(out);
	vg_buf_printf(out, "\"id\":%s,\"result\":%s}\n", id, result);
}

void
vg_rpc_write_error(struct vg_buf *out, const char *id, int code,
    const char *message)
{
	begin(out);
	vg_buf_printf(out, "\"id\":%s,\"error\":{\"code\":%d,\"message\":",
	    id != NULL ? id : "null", code);
	vg_json_quote(out, message, strlen(message));
	vg_buf_adds(out, "}}\n");
}

void
vg_rpc_write_notification(struct vg_buf *out, const char *method,
    const char *params)
{
	begin(out);
	vg_buf_adds(out, "\"method\":");
	vg_json_quote(out, method, strlen(method));
	vg_buf_printf(out, ",\"params\":%s}\n", params);
}

int
vg_mcp_head_tail(struct vg_buf *out, const char *p, size_t n, size_t limit)
{
	size_t half = limit / 2;

	if (n <= limit) {
		vg_buf_add(out, p, n);
		return 0;
	}
	vg_buf_add(out, p, half);
	vg_buf_printf(out, "\n[vigil: %zu bytes left out]\n", n - limit);
	vg_buf_add(out, p + n - (limit - half), limit - half);
	return 1;
}
