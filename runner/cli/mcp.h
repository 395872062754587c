/*
 * mcp.h - vigil mcp: a Model Context Protocol server (docs/mcp.md).
 *
 * mcp-rpc.c reads one JSON-RPC 2.0 message (a line of the stdio
 * transport) and writes replies; mcp-tools.c holds the tool table, each
 * tool a vigil command line run as a child (vigil exec --session --json,
 * vigil policy explain --json, ...) and the conversion of what it printed
 * into a tool result; mcp-resources.c maps vigil:// resources onto the
 * same commands; mcp-server.c is the loop: stdin, the children, progress
 * and cancellation.  The HTTP transport's files are in mcp-http.h.
 */
#ifndef VG_MCP_H
#define VG_MCP_H

#include <sys/types.h>

#include "common/buf.h"
#include "common/json.h"

/* JSON-RPC error codes. */
#define VG_RPC_PARSE_ERROR	(-32700)
#define VG_RPC_INVALID_REQUEST	(-32600)
#define VG_RPC_NO_METHOD	(-32601)
#define VG_RPC_INVALID_PARAMS	(-32602)
#define VG_RPC_INTERNAL		(-32603)

/* Most bytes of one message. */
#define VG_RPC_MAX_MESSAGE	((size_t)4 << 20)

enum vg_rpc_kind {
	VG_RPC_REQUEST,		/* method and id */
	VG_RPC_NOTIFICATION,	/* method, no id */
	VG_RPC_RESPONSE,	/* id with result or error: not ours to act on */
};

/* One message read. */
struct vg_rpc_msg {
	struct vg_json_doc		*doc;
	enum vg_rpc_kind		 kind;
	char				*id;	  /* the id as JSON text, or NULL */
	const char			*method;
	const struct vg_json_value	*params;  /* object, or NULL */
};

/*
 * Reads one message from len bytes of text.  On failure returns the
 * JSON-RPC error code, with e saying what was wrong and m->id set when
 * the message had a usable id (the reply goes to it; else to null).
 */
int	vg_rpc_read(const char *text, size_t len, struct vg_rpc_msg *m,
	    struct vg_err *e);
void	vg_rpc_msg_release(struct vg_rpc_msg *m);

/* Appends a response line to out: result is JSON text. */
void	vg_rpc_write_result(struct vg_buf *out, const char *id,
	    const char *result);
/* Appends an error response line; id NULL means null. */
void	vg_rpc_write_error(struct vg_buf *out, const char *id, int code,
	    const char *message);
/* Appends a notification line; params is JSON text. */
void	vg_rpc_write_notification(struct vg_buf *out, const char *method,
	    const char *params);

/* Keeps the first and last limit/2 bytes of n bytes of p, with a note of
 * what was left out in between; returns whether anything was. */
int	vg_mcp_head_tail(struct vg_buf *out, const char *p, size_t n,
	    size_t limit);

/* ---- the server ---- */

/* What `vigil mcp` was started with. */
struct vg_mcp_conf {
	const char	*self;		/* the vigil binary its children run */
	const char	*mode;		/* gate mode (auto-deny) */
	const char	*policy;	/* policy file, or NULL */
	const char	*backend;	/* default session: backend, or NULL */
	const char	*image;
	const char	*workdir;
	const char	*idle_timeout;	/* AGE text */
	const char	*max_age;
	long		 output_limit;	/* bytes of each stream shown */
};

/* A tool call in progress: the child running it. */
struct vg_mcp_call;

/* One tool. */
struct vg_mcp_tool {
	const char	*name;
	const char	*title;
	const char	*description;
	const char	*input_schema;	/* JSON text */
	const char	*output_schema;	/* JSON text */
	/* Builds the child's argv from args into argv (NULL: e says which
	 * argument was wrong: invalid params). */
	int		(*argv)(const struct vg_mcp_conf *conf,
			    const struct vg_json_value *args,
			    const char *session, struct vg_strv *argv,
			    struct vg_err *e);
	/* Writes the result's structured content (a JSON object) from what
	 * the child printed and its exit status, and sets *is_error;
	 * -1 (nothing written) when the child failed: the result is then
	 * an error with its stderr.  NULL: the child's JSON value of type
	 * wrap_type as {"run": args.run (when given), wrap_key: value},
	 * and any exit status but 0 a failure unless wrap_any_status
	 * (see vg_mcp_tool_result). */
	int		(*result)(const struct vg_json_value *args,
			    const struct vg_buf *out, const struct vg_buf *err,
			    int status, struct vg_json_writer *w,
			    int *is_error);
	const char	*wrap_key;
	enum vg_json_type wrap_type;
	int		 wrap_any_status;
	int		 in_session;	/* runs in a session: the server's
					   own unless the call names one */
	int		 takes_stdin;	/* argument stdin goes to the child */
};

extern const struct vg_mcp_tool vg_mcp_tools[];

/* Writes tool t's result from what its child printed, as its result op
 * says (or its wrap_ fields when it has none). */
int	vg_mcp_tool_result(const struct vg_mcp_tool *t,
	    const struct vg_json_value *args, const struct vg_buf *out,
	    const struct vg_buf *err, int status, struct vg_json_writer *w,
	    int *is_error);

/* Finds a tool by name, NULL when none. */
const struct vg_mcp_tool *vg_mcp_tool_find(const char *name);
/* The argv of `vigil session start` for the server's default session. */
int	vg_mcp_default_session_argv(const struct vg_mcp_conf *conf,
	    struct vg_strv *argv, struct vg_err *e);
/* Writes the tools/list result. */
void	vg_mcp_tools_list(struct vg_json_writer *w);

/* resources/list, resources/templates/list and the argv of a read. */
void	vg_mcp_resources_templates(struct vg_json_writer *w);
/* Builds the argv reading uri (NULL with e: not one of ours); *mime is
 * its type. */
int	vg_mcp_resource_argv(const struct vg_mcp_conf *conf, const char *uri,
	    struct vg_strv *argv, const char **mime, struct vg_err *e);
/* Writes the resources/list entries of the runs vigil status --json
 * printed. */
void	vg_mcp_resources_from_status(const struct vg_buf *out,
	    struct vg_json_writer *w);

/* Is rev a protocol revision the server serves ("2025-06-18", ...)? */
int	vg_mcp_revision_served(const char *rev);

/* Serves MCP on fds in and out until in ends; returns an exit status. */
int	vg_mcp_serve(const struct vg_mcp_conf *conf, int in, int out);

#endif
