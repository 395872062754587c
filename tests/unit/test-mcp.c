/*
 * test-mcp.c - vigil mcp's parts that need no child: the JSON-RPC reader
 * (each kind of message and each refusal with its code and message), the
 * reply writers, the head-and-tail limit, the tool table (schemas that
 * parse, argv built from arguments, every argument error), the results
 * made from what a child printed, and the vigil:// resources.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner/cli/mcp.h"

static const struct vg_mcp_conf conf = {
	.self = "/bin/vigil", .mode = "auto-deny", .policy = NULL,
	.backend = "docker", .image = "alpine", .workdir = NULL,
	.idle_timeout = "30m", .max_age = NULL, .output_limit = 65536,
};

/* Reads s expecting code (0: success) and, on failure, message msg. */
static void
read_msg(const char *s, int code, const char *msg, struct vg_rpc_msg *m)
{
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_rpc_read(s, strlen(s), m, &e), code);
	if (msg != NULL)
		assert_string_equal(e.msg, msg);
}

static void
test_rpc_read_kinds(void **state)
{
	struct vg_rpc_msg m;

	(void)state;
	read_msg("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", 0, NULL,
	    &m);
	assert_int_equal(m.kind, VG_RPC_REQUEST);
	assert_string_equal(m.id, "7");
	assert_string_equal(m.method, "ping");
	assert_null(m.params);
	vg_rpc_msg_release(&m);
	read_msg("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"x\","
	    "\"params\":{\"k\":1}}", 0, NULL, &m);
	assert_string_equal(m.id, "\"a\\\"b\"");
	assert_non_null(m.params);
	vg_rpc_msg_release(&m);
	read_msg("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}", 0,
	    NULL, &m);
	assert_int_equal(m.kind, VG_RPC_NOTIFICATION);
	assert_null(m.id);
	vg_rpc_msg_release(&m);
	read_msg("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", 0, NULL, &m);
	assert_int_equal(m.kind, VG_RPC_RESPONSE);
	vg_rpc_msg_release(&m);
}

static void
test_rpc_read_errors(void **state)
{
	static const struct { const char *in; int code; const char *msg;
	    const char *id; } t[] = {
		{ "", VG_RPC_PARSE_ERROR, NULL, NULL },
		{ "{\"jsonrpc\":", VG_RPC_PARSE_ERROR, NULL, NULL },
		{ "[1]", VG_RPC_INVALID_REQUEST, "batches (JSON arrays) are "
		  "not supported: send one object per message", NULL },
		{ "\"x\"", VG_RPC_INVALID_REQUEST, "a message is a JSON object",
		  NULL },
		{ "{\"id\":1,\"method\":\"m\"}", VG_RPC_INVALID_REQUEST,
		  "field 'jsonrpc' must be \"2.0\"", "1" },
		{ "{\"jsonrpc\":2,\"id\":1,\"method\":\"m\"}",
		  VG_RPC_INVALID_REQUEST, "field 'jsonrpc' must be \"2.0\"",
		  "1" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}",
		  VG_RPC_INVALID_REQUEST, "field 'id' must be a string or a "
		  "number", NULL },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}",
		  VG_RPC_INVALID_REQUEST, "field 'id' of a request must be a "
		  "string or a number", NULL },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", VG_RPC_INVALID_REQUEST,
		  "field 'method' is missing", "1" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
		  VG_RPC_INVALID_REQUEST, "field 'method' must be a non-empty "
		  "string", "1" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
		  VG_RPC_INVALID_REQUEST, "field 'method' must be a non-empty "
		  "string", "1" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\","
		  "\"params\":[]}",
		  VG_RPC_INVALID_PARAMS, "field 'params' must be an object",
		  "1" },
	};
	struct vg_rpc_msg m;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		read_msg(t[k].in, t[k].code, t[k].msg, &m);
		if (t[k].id == NULL)
			assert_null(m.id);
		else
			assert_string_equal(m.id, t[k].id);
		vg_rpc_msg_release(&m);
	}
}

static void
test_rpc_write(void **state)
{
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	vg_rpc_write_result(&b, "1", "{}");
	vg_rpc_write_error(&b, NULL, -32700, "bad \"x\"");
	vg_rpc_write_error(&b, "\"s\"", -32601, "m");
	vg_rpc_write_notification(&b, "notifications/progress", "{\"p\":1}");
	assert_string_equal(vg_buf_str(&b),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"bad \\\"x\\\"\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"error\":{\"code\":-32601,"
	    "\"message\":\"m\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"p\":1}}\n");
	vg_buf_release(&b);
}

static void
test_head_tail(void **state)
{
	struct vg_buf b = VG_BUF_INIT;

	(void)state;
	assert_int_equal(vg_mcp_head_tail(&b, "abcdef", 6, 6), 0);
	assert_string_equal(vg_buf_str(&b), "abcdef");
	vg_buf_reset(&b);
	assert_int_equal(vg_mcp_head_tail(&b, "abcdefghij", 10, 4), 1);
	assert_string_equal(vg_buf_str(&b), "ab\n[vigil: 6 bytes left out]\n"
	    "ij");
	vg_buf_release(&b);
}

/* Parses JSON text s, failing the test when it does not parse. */
static struct vg_json_doc *
parse(const char *s)
{
	struct vg_json_doc *doc = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_json_parse(s, strlen(s), NULL, &doc, &e) != 0)
		fail_msg("'%s' does not parse: %s", s, e.msg);
	return doc;
}

static void
test_tools_list(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc;
	const struct vg_json_value *tools, *t;
	size_t k;

	(void)state;
	vg_json_writer_init(&w, &b);
	vg_mcp_tools_list(&w);
	doc = parse(vg_buf_str(&b));
	tools = vg_json_get(vg_json_root(doc), "tools");
	assert_int_equal(tools->len, 15);
	for (k = 0; k < tools->len; k++) {
		t = tools->items[k];
		assert_string_equal(vg_json_get_str(vg_json_get(t,
		    "inputSchema"), "type", ""), "object");
		assert_string_equal(vg_json_get_str(vg_json_get(t,
		    "outputSchema"), "type", ""), "object");
		assert_non_null(vg_mcp_tool_find(vg_json_get_str(t, "name",
		    "")));
	}
	assert_null(vg_mcp_tool_find("nope"));
	vg_json_free(doc);
	vg_buf_release(&b);
}

/* The argv tool name builds from arguments args (JSON text), joined by
 * spaces, or "ERR: message". */
static char *
argv_of(const char *name, const char *args, const char *session)
{
	const struct vg_mcp_tool *t = vg_mcp_tool_find(name);
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc = parse(args);
	struct vg_err e;
	size_t i;

	vg_err_init(&e);
	assert_non_null(t);
	if (t->argv(&conf, vg_json_root(doc), session, &argv, &e) != 0)
		vg_buf_printf(&b, "ERR: %s", e.msg);
	else
		for (i = 0; i < argv.n; i++)
			vg_buf_printf(&b, "%s%s", i ? " " : "", argv.v[i]);
	vg_strv_release(&argv);
	vg_json_free(doc);
	return vg_buf_detach(&b);
}

/* Checks argv_of against want. */
static void
argv_is(const char *name, const char *args, const char *want)
{
	char *got = argv_of(name, args, "s-1");

	assert_string_equal(got, want);
	free(got);
}

static void
test_tool_argv(void **state)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_err e;

	(void)state;
	argv_is("exec", "{\"command\":\"ls -l\"}", "/bin/vigil exec --session "
	    "s-1 --json --output-limit=65536 -- ls -l");
	argv_is("exec", "{\"command\":\"x\",\"timeout\":1.5,\"stdin\":\"in\","
	    "\"output_limit\":100}", "/bin/vigil exec --session s-1 --json "
	    "--output-limit=100 --timeout=2 --stdin -- x");
	argv_is("exec", "{}", "ERR: argument 'command' is required");
	argv_is("exec", "{\"command\":\"\"}", "ERR: argument 'command' must "
	    "be a non-empty string");
	argv_is("exec", "{\"command\":\"a\\u0000b\"}", "ERR: argument "
	    "'command' holds a NUL byte");
	argv_is("exec", "{\"command\":\"x\",\"timeout\":-1}", "ERR: argument "
	    "'timeout' must be a number from 0 to 2.6784e+06");
	argv_is("exec", "{\"command\":\"x\",\"output_limit\":\"9\"}", "ERR: "
	    "argument 'output_limit' must be a number from 64 to "
	    "1.07374e+09");
	argv_is("exec", "{\"command\":\"x\",\"stdin\":1}", "ERR: argument "
	    "'stdin' must be a non-empty string");
	argv_is("session_open", "{}", "/bin/vigil session start --mode "
	    "auto-deny --json --backend docker --image alpine --idle-timeout "
	    "30m");
	argv_is("session_open", "{\"backend\":\"local\",\"idle_timeout\":90.5,"
	    "\"max_age\":\"2h\",\"name\":\"n\"}", "/bin/vigil session start "
	    "--mode auto-deny --json --backend local --image alpine --name n "
	    "--idle-timeout 91s --max-age 2h");
	argv_is("session_open", "{\"idle_timeout\":0}", "ERR: argument "
	    "'idle_timeout' must be from 1 to 31622400 seconds");
	argv_is("session_open", "{\"max_age\":true}", "ERR: argument "
	    "'max_age' must be seconds or an age such as \"30m\"");
	argv_is("session_open", "{\"image\":3}", "ERR: argument 'image' must "
	    "be a non-empty string");
	argv_is("session_list", "{}", "/bin/vigil session list --json");
	argv_is("session_close", "{\"session\":\"a\"}", "/bin/vigil session "
	    "stop a");
	argv_is("session_close", "{}", "ERR: argument 'session' is required");
	argv_is("gate_check", "{\"command\":\"rm -rf /\"}", "/bin/vigil policy "
	    "explain --mode auto-deny --json -- rm -rf /");
	argv_is("gate_check", "{}", "ERR: argument 'command' is required");
	argv_is("run_submit", "{\"manifest\":\"m.yaml\",\"set\":[\"a=b\"]}",
	    "/bin/vigil submit --set a=b -- m.yaml");
	argv_is("run_submit", "{\"manifest\":\"m\",\"set\":\"a=b\"}", "ERR: "
	    "argument 'set' must be an array of KEY=VALUE strings");
	argv_is("run_submit", "{\"manifest\":\"m\",\"set\":[\"ab\"]}", "ERR: "
	    "argument 'set' item 1 must be a KEY=VALUE string");
	argv_is("run_status", "{\"run\":\"last\"}", "/bin/vigil status --json "
	    "-- last");
	argv_is("run_status", "{}", "ERR: argument 'run' is required");
	argv_is("run_report", "{\"run\":\"r\"}", "/bin/vigil report --json "
	    "-- r");
	argv_is("task_logs", "{\"run\":\"r\",\"task\":\"0\",\"stderr\":true}",
	    "/bin/vigil logs --stderr -- r/0");
	argv_is("task_logs", "{\"run\":\"r\",\"task\":\"0\",\"stderr\":1}",
	    "ERR: argument 'stderr' must be true or false");
	argv_is("task_logs", "{\"run\":\"r\"}", "ERR: argument 'task' is "
	    "required");
	argv_is("job_start", "{\"command\":\"sleep 9\",\"timeout\":3}",
	    "/bin/vigil exec --session s-1 --json --background --timeout=3 -- "
	    "sleep 9");
	argv_is("job_start", "{}", "ERR: argument 'command' is required");
	argv_is("job_output", "{\"job\":2,\"wait\":true}", "/bin/vigil "
	    "session output s-1 2 --wait");
	argv_is("job_output", "{}", "ERR: argument 'job' is required");
	argv_is("job_output", "{\"job\":1.5}", "ERR: argument 'job' must be a "
	    "job number (1, 2, ...)");
	argv_is("job_output", "{\"job\":0}", "ERR: argument 'job' must be a "
	    "job number (1, 2, ...)");
	argv_is("job_output", "{\"job\":1,\"wait\":\"yes\"}", "ERR: "
	    "argument 'wait' must be true or false");
	argv_is("job_kill", "{\"job\":3}", "/bin/vigil session kill s-1 3");
	argv_is("job_input", "{\"job\":3,\"data\":\"a b\\n\",\"close\":true}",
	    "/bin/vigil session input s-1 3 a b\n --close");
	argv_is("job_input", "{\"job\":3}", "/bin/vigil session input s-1 3 ");
	argv_is("job_input", "{\"job\":3,\"close\":1}", "ERR: argument "
	    "'close' must be true or false");
	argv_is("job_input", "{\"data\":\"x\"}", "ERR: argument 'job' is "
	    "required");
	argv_is("session_jobs", "{}", "/bin/vigil session jobs s-1 --json");
	argv_is("session_egress", "{}",
	    "/bin/vigil session egress s-1 --json");
	vg_err_init(&e);
	assert_int_equal(vg_mcp_default_session_argv(&conf, &argv, &e), 0);
	assert_string_equal(argv.v[2], "start");
	vg_strv_release(&argv);
}

/* The structured result tool name makes of out and status: JSON text,
 * with *is_error; NULL when it makes none. */
static char *
result_of(const char *name, const char *args, const char *out,
    const char *err, int status, int *is_error)
{
	const struct vg_mcp_tool *t = vg_mcp_tool_find(name);
	struct vg_buf o = VG_BUF_INIT, eb = VG_BUF_INIT, b = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc = parse(args);
	char *r = NULL;

	vg_buf_adds(&o, out);
	vg_buf_adds(&eb, err);
	vg_json_writer_init(&w, &b);
	*is_error = -1;
	if (vg_mcp_tool_result(t, vg_json_root(doc), &o, &eb, status, &w,
	    is_error) == 0)
		r = vg_buf_detach(&b);
	vg_buf_release(&b);
	vg_buf_release(&o);
	vg_buf_release(&eb);
	vg_json_free(doc);
	return r;
}

/* Checks result_of with stderr errtext against want (NULL: none) and
 * is_error. */
static void
result_err_is(const char *name, const char *args, const char *out,
    const char *errtext, int status, const char *want, int is_error)
{
	int err;
	char *got = result_of(name, args, out, errtext, status, &err);

	if (want == NULL) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(err, is_error);
	free(got);
}

static void
test_tool_results(void **state)
{
	/* tool, arguments, stdout, stderr, exit status, the structured
	 * result (NULL: none, an error with stderr), is_error */
	static const struct { const char *tool, *args, *out, *err;
	    int status; const char *want; int is_error; } t[] = {
		{ "exec", "{}", "{\"session\":\"s\",\"exit_code\":0}\n", "",
		  0, "{\"session\":\"s\",\"exit_code\":0}", 0 },
		{ "exec", "{}",
		  "{\"session\":\"s\",\"denied\":true," "\"exit_code\":3}\n",
		  "", 3,
		  "{\"session\":\"s\",\"denied\":true," "\"exit_code\":3}",
		  1 },
		{ "exec", "{}",
		  "{\"session\":\"s\",\"exit_code\":-1," "\"error\":\"x\"}",
		  "", 4,
		  "{\"session\":\"s\",\"exit_code\":-1," "\"error\":\"x\"}",
		  1 },
		{ "exec", "{}", "", "", 2, NULL, 0 },
		{ "exec", "{}", "[1]", "", 0, NULL, 0 },
		{ "session_open", "{}",
		  "{\"id\": \"s-1\", \"dir\": \"/d\"}\n", "", 0,
		  "{\"session\":\"s-1\",\"dir\":\"/d\"}", 0 },
		{ "session_open", "{}", "{\"dir\": \"/d\"}\n", "", 0, NULL,
		  0 },
		{ "session_open", "{}", "{\"id\": \"s-1\"}\n", "", 1, NULL,
		  0 },
		{ "session_list", "{}", "[]\n", "", 0, "{\"sessions\":[]}",
		  0 },
		{ "session_list", "{}", "[]\n", "", 1, NULL, 0 },
		{ "session_close", "{\"session\":\"a\"}", "stopped a\n", "",
		  0,
		  "{\"session\":\"a\",\"closed\":true,"
		  "\"message\":\"stopped a\"}",
		  0 },
		{ "session_close", "{\"session\":\"a\"}", "", "", 2, NULL, 0 },
		{ "gate_check", "{}", "{\"verdict\":\"deny\"}", "", 3,
		  "{\"verdict\":\"deny\"}", 0 },
		{ "gate_check", "{}", "{\"verdict\":\"deny\"}", "", 2, NULL,
		  0 },
		{ "run_submit", "{}", "r-1\n", "", 0, "{\"run\":\"r-1\"}", 0 },
		{ "run_submit", "{}", "", "", 0, NULL, 0 },
		{ "run_status", "{\"run\":\"r\"}", "{\"id\":\"r\"}", "", 0,
		  "{\"run\":\"r\",\"status\":{\"id\":\"r\"}}", 0 },
		{ "run_status", "{\"run\":\"r\"}", "no such run", "", 2, NULL,
		  0 },
		{ "run_report", "{\"run\":\"r\"}", "{}", "", 0,
		  "{\"run\":\"r\",\"report\":{}}", 0 },
		{ "run_report", "{\"run\":\"r\"}", "{}", "", 1, NULL, 0 },
		{ "task_logs",
		  "{\"run\":\"r\",\"task\":\"0\"," "\"output_limit\":4}",
		  "abcdefghij", "", 0,
		  "{\"run\":\"r\",\"task\":"
		  "\"0\",\"stream\":\"stdout\",\"text\":\"ab\\n[vigil: 6 bytes left "
		  "out]\\nij\",\"truncated\":true}",
		  0 },
		{ "task_logs",
		  "{\"run\":\"r\",\"task\":\"0\",\"stderr\":true}", "", "", 0,
		  "{\"run\":\"r\",\"task\":\"0\",\"stream\":\"stderr\","
		  "\"text\":\"\",\"truncated\":false}",
		  0 },
		{ "task_logs", "{}", "", "", 1, NULL, 0 },
		{ "job_start", "{}", "{\"session\": \"s\", \"job\": 2}\n", "",
		  0, "{\"session\":\"s\",\"job\":2}", 0 },
		{ "job_output",
		  "{\"job\":2,\"wait\":true," "\"output_limit\":4}",
		  "abcdefghij", "e\n", 4,
		  "{\"job\":2,"
		  "\"stdout\":\"ab\\n[vigil: 6 bytes left out]\\nij\",\"stderr\":"
		  "\"e\\n\",\"truncated\":true,\"exit_code\":4}",
		  0 },
		{ "job_output", "{\"job\":2}", "a", "", 0,
		  "{\"job\":2,"
		  "\"stdout\":\"a\",\"stderr\":\"\",\"truncated\":false}",
		  0 },
		{ "job_output", "{\"job\":9}", "",
		  "vigil: session output: " "session 's' has no job 9\n", 2,
		  NULL, 0 },
		{ "job_kill", "{\"job\":2}", "job 2 killed\n", "", 0,
		  "{\"job\":2,\"state\":\"killed\"}", 0 },
		{ "job_kill", "{\"job\":2}", "", "", 2, NULL, 0 },
		{ "job_input", "{\"job\":2,\"data\":\"hi\\n\",\"close\":true}",
		  "", "", 0, "{\"job\":2,\"sent\":3,\"closed\":true}", 0 },
		{ "job_input", "{\"job\":2,\"data\":\"x\"}", "",
		  "vigil: session input: job 2 has ended\n", 2, NULL, 0 },
		{ "session_jobs", "{}", "[{\"job\":1}]\n", "", 0,
		  "{\"jobs\":[{\"job\":1}]}", 0 },
		{ "session_jobs", "{}", "", "", 2, NULL, 0 },
		{ "session_egress", "{}", "{\"connections\":0}\n", "", 0,
		  "{\"egress\":{\"connections\":0}}", 0 },
		{ "session_egress", "{}", "[]\n", "", 0, NULL, 0 },
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		result_err_is(t[k].tool, t[k].args, t[k].out, t[k].err,
		    t[k].status, t[k].want, t[k].is_error);
}

/* The argv of reading uri joined by spaces, or "ERR: message". */
static void
resource_is(const char *uri, const char *want, const char *mime)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf b = VG_BUF_INIT;
	const char *m;
	struct vg_err e;
	size_t i;

	vg_err_init(&e);
	if (vg_mcp_resource_argv(&conf, uri, &argv, &m, &e) != 0) {
		vg_buf_printf(&b, "ERR: %s", e.msg);
		assert_null(m);
	} else {
		for (i = 0; i < argv.n; i++)
			vg_buf_printf(&b, "%s%s", i ? " " : "", argv.v[i]);
		assert_string_equal(m, mime);
	}
	assert_string_equal(vg_buf_str(&b), want);
	vg_strv_release(&argv);
	vg_buf_release(&b);
}

static void
test_resources(void **state)
{
	struct vg_buf b = VG_BUF_INIT, out = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_json_doc *doc;

	(void)state;
	resource_is("vigil://runs/r1/report", "/bin/vigil report --json -- r1",
	    "application/json");
	resource_is("vigil://runs/r1/tasks/3/log", "/bin/vigil logs -- r1/3",
	    "text/plain");
	resource_is("vigil://runs/r1/tasks/a/stderr", "/bin/vigil logs "
	    "--stderr -- r1/a", "text/plain");
	resource_is("file:///etc/passwd", "ERR: unknown resource "
	    "'file:///etc/passwd' (valid: vigil://runs/RUN/report, "
	    "vigil://runs/RUN/tasks/TASK/log or /stderr)", NULL);
	resource_is("vigil://runs//report", "ERR: resource "
	    "'vigil://runs//report': no run id", NULL);
	resource_is("vigil://runs/r1", "ERR: resource 'vigil://runs/r1': no "
	    "run id", NULL);
	resource_is("vigil://runs/r1/tasks/a/b/log", "ERR: unknown resource "
	    "'vigil://runs/r1/tasks/a/b/log' (valid: vigil://runs/RUN/report, "
	    "vigil://runs/RUN/tasks/TASK/log or /stderr)", NULL);
	resource_is("vigil://runs/r1/other", "ERR: unknown resource "
	    "'vigil://runs/r1/other' (valid: vigil://runs/RUN/report, "
	    "vigil://runs/RUN/tasks/TASK/log or /stderr)", NULL);
	vg_json_writer_init(&w, &b);
	vg_buf_adds(&out, "{\"runs\":[{\"id\":\"r1\",\"name\":\"n\"},{\"x\":1},"
	    "{\"id\":\"r2\"}]}");
	vg_mcp_resources_from_status(&out, &w);
	assert_string_equal(vg_buf_str(&b), "{\"resources\":[{\"uri\":"
	    "\"vigil://runs/r1/report\",\"name\":\"r1/report (n)\","
	    "\"mimeType\":\"application/json\"},{\"uri\":"
	    "\"vigil://runs/r2/report\",\"name\":\"r2/report ()\","
	    "\"mimeType\":\"application/json\"}]}");
	vg_buf_reset(&b);
	vg_buf_reset(&out);
	vg_buf_adds(&out, "not json");
	vg_json_writer_init(&w, &b);
	vg_mcp_resources_from_status(&out, &w);
	assert_string_equal(vg_buf_str(&b), "{\"resources\":[]}");
	vg_buf_reset(&b);
	vg_json_writer_init(&w, &b);
	vg_mcp_resources_templates(&w);
	doc = parse(vg_buf_str(&b));
	assert_int_equal(vg_json_get(vg_json_root(doc),
	    "resourceTemplates")->len, 3);
	vg_json_free(doc);
	vg_buf_release(&b);
	vg_buf_release(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rpc_read_kinds),
		cmocka_unit_test(test_rpc_read_errors),
		cmocka_unit_test(test_rpc_write),
		cmocka_unit_test(test_head_tail),
		cmocka_unit_test(test_tools_list),
		cmocka_unit_test(test_tool_argv),
		cmocka_unit_test(test_tool_results),
		cmocka_unit_test(test_resources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
