/*
 * mcp-tools.c - the tools of vigil mcp.  Each is a vigil command line
 * run as a child of the server (so that the gate, the audit, the
 * session's wrapper and the head-and-tail limits are exactly those of
 * `vigil exec --session --json`, `vigil policy explain --json`, ...) and
 * a conversion of what it printed into the tool's structured result.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner/cli/mcp.h"

/* Limits for a child's JSON output (a report can be large). */
static const struct vg_json_limits out_limits = {
	.max_bytes = (size_t)256 << 20,
	.max_depth = VG_JSON_MAX_DEPTH,
	.max_values = (size_t)1 << 24,
};

/* Argument key of args as a string: def when absent, -1 with e when of
 * another type. */
static int
arg_str(const struct vg_json_value *args, const char *key, int required,
    const char **out, struct vg_err *e)
{
	const struct vg_json_value *v = vg_json_get(args, key);

	*out = NULL;
	if (v == NULL && required)
		return vg_err_set(e, VG_EINVAL, "argument '%s' is required",
		    key);
	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_STRING || (required && v->len == 0))
		return vg_err_set(e, VG_EINVAL, "argument '%s' must be a "
		    "non-empty string", key);
	if (strlen(v->str) != v->len)
		return vg_err_set(e, VG_EINVAL, "argument '%s' holds a NUL "
		    "byte", key);
	*out = v->str;
	return 0;
}

/* Argument key as a number in [lo, hi]; *out untouched when absent. */
static int
arg_num(const struct vg_json_value *args, const char *key, double lo,
    double hi, double *out, struct vg_err *e)
{
	const struct vg_json_value *v = vg_json_get(args, key);

	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_NUMBER || !(v->num >= lo && v->num <= hi))
		return vg_err_set(e, VG_EINVAL, "argument '%s' must be a "
		    "number from %g to %g", key, lo, hi);
	*out = v->num;
	return 0;
}

/* Argument key as a boolean; 0 when absent. */
static int
arg_bool(const struct vg_json_value *args, const char *key, int *out,
    struct vg_err *e)
{
	const struct vg_json_value *v = vg_json_get(args, key);

	*out = 0;
	if (v == NULL)
		return 0;
	if (v->type != VG_JSON_BOOL)
		return vg_err_set(e, VG_EINVAL, "argument '%s' must be true "
		    "or false", key);
	*out = v->b;
	return 0;
}

/* An AGE argument (a number of seconds or text like "30m") into
 * --opt AGE. */
static int
arg_age(const struct vg_json_value *args, const char *key, const char *opt,
    const char *def, struct vg_strv *argv, struct vg_err *e)
{
	const struct vg_json_value *v = vg_json_get(args, key);

	if (v != NULL && v->type == VG_JSON_NUMBER) {
		if (!(v->num > 0 && v->num <= 366.0 * 86400))
			return vg_err_set(e, VG_EINVAL, "argument '%s' must be "
			    "from 1 to 31622400 seconds", key);
		vg_strv_push(argv, opt);
		vg_strv_pushf(argv, "%.0fs", ceil(v->num));
		return 0;
	}
	if (v != NULL && (v->type != VG_JSON_STRING || v->len == 0))
		return vg_err_set(e, VG_EINVAL, "argument '%s' must be seconds "
		    "or an age such as \"30m\"", key);
	if (v != NULL || def != NULL) {
		vg_strv_push(argv, opt);
		vg_strv_push(argv, v != NULL ? v->str : def);
	}
	return 0;
}

/* Pushes "vigil SUB" and the gate's mode and policy file. */
static void
push_gate(const struct vg_mcp_conf *conf, struct vg_strv *argv,
    const char *sub, const char *sub2)
{
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, sub);
	if (sub2 != NULL)
		vg_strv_push(argv, sub2);
	vg_strv_push(argv, "--mode");
	vg_strv_push(argv, conf->mode);
	if (conf->policy != NULL) {
		vg_strv_push(argv, "--policy");
		vg_strv_push(argv, conf->policy);
	}
}

/* Pushes --opt value when value is set. */
static void
push_opt(struct vg_strv *argv, const char *opt, const char *value)
{
	if (value == NULL)
		return;
	vg_strv_push(argv, opt);
	vg_strv_push(argv, value);
}

/* The child's stdout parsed as one JSON value of type want; NULL (doc
 * freed) when it is not. */
static const struct vg_json_value *
out_json(const struct vg_buf *out, enum vg_json_type want,
    struct vg_json_doc **docp)
{
	struct vg_err e;

	vg_err_init(&e);
	*docp = NULL;
	if (out->len == 0 || vg_json_parse(out->data, out->len, &out_limits,
	    docp, &e) != 0)
		return NULL;
	if (vg_json_root(*docp)->type != want) {
		vg_json_free(*docp);
		*docp = NULL;
		return NULL;
	}
	return vg_json_root(*docp);
}

/* The child's stdout without its final newline, as a string. */
static void
out_line(struct vg_json_writer *w, const struct vg_buf *out)
{
	size_t n = out->len;

	while (n > 0 && (out->data[n - 1] == '\n' || out->data[n - 1] == '\r'))
		n--;
	vg_json_strn(w, out->data, n);
}

/* ---- session_open ---- */

/* Pushes the options of a session start from args, over conf's
 * defaults (those go for the server's own session too: args NULL). */
static int
session_start_argv(const struct vg_mcp_conf *conf,
    const struct vg_json_value *args, struct vg_strv *argv,
    struct vg_err *e)
{
	const char *backend, *image, *workdir, *name;

	if (arg_str(args, "backend", 0, &backend, e) != 0 ||
	    arg_str(args, "image", 0, &image, e) != 0 ||
	    arg_str(args, "workdir", 0, &workdir, e) != 0 ||
	    arg_str(args, "name", 0, &name, e) != 0)
		return -1;
	push_gate(conf, argv, "session", "start");
	vg_strv_push(argv, "--json");
	push_opt(argv, "--backend", backend != NULL ? backend : conf->backend);
	push_opt(argv, "--image", image != NULL ? image : conf->image);
	push_opt(argv, "--workdir", workdir != NULL ? workdir : conf->workdir);
	push_opt(argv, "--name", name);
	if (arg_age(args, "idle_timeout", "--idle-timeout", conf->idle_timeout,
	    argv, e) != 0 || arg_age(args, "max_age", "--max-age",
	    conf->max_age, argv, e) != 0)
		return -1;
	return 0;
}

static int
open_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	(void)session;
	return session_start_argv(conf, args, argv, e);
}

/* {"session": id, "dir": dir} from session start --json. */
static int
open_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *v = out_json(out, VG_JSON_OBJECT, &doc);

	(void)err;
	(void)args;
	if (status != 0 || v == NULL || vg_json_get_str(v, "id", NULL) ==
	    NULL) {
		vg_json_free(doc);
		return -1;
	}
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "session");
	vg_json_str(w, vg_json_get_str(v, "id", NULL));
	vg_json_key(w, "dir");
	vg_json_str(w, vg_json_get_str(v, "dir", ""));
	vg_json_obj_end(w);
	vg_json_free(doc);
	return 0;
}

/* ---- exec ---- */

static int
exec_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *cmd, *in;
	double timeout = 0, limit = (double)conf->output_limit;

	if (arg_str(args, "command", 1, &cmd, e) != 0 ||
	    arg_str(args, "stdin", 0, &in, e) != 0 ||
	    arg_num(args, "timeout", 0, 31.0 * 86400, &timeout, e) != 0 ||
	    arg_num(args, "output_limit", 64, 1 << 30, &limit, e) != 0)
		return -1;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "exec");
	vg_strv_push(argv, "--session");
	vg_strv_push(argv, session);
	vg_strv_push(argv, "--json");
	vg_strv_pushf(argv, "--output-limit=%.0f", limit);
	if (timeout > 0)
		vg_strv_pushf(argv, "--timeout=%.0f", ceil(timeout));
	if (in != NULL)
		vg_strv_push(argv, "--stdin");
	vg_strv_push(argv, "--");
	vg_strv_push(argv, cmd);
	return 0;
}

/* Writes the JSON object the child printed as it is; -1 when it printed
 * none.  *flagged: whether it says the command was denied or failed. */
static int
out_object(const struct vg_buf *out, struct vg_json_writer *w, int *flagged)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *v = out_json(out, VG_JSON_OBJECT, &doc),
	    *d;

	if (v == NULL)
		return -1;
	d = vg_json_get(v, "denied");
	*flagged = (d != NULL && d->type == VG_JSON_BOOL && d->b) ||
	    vg_json_get(v, "error") != NULL;
	vg_json_value_write(w, v);
	vg_json_free(doc);
	return 0;
}

/* What vigil exec --session --json printed, as it is; an error when
 * denied or when the backend failed. */
static int
exec_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	(void)args;
	(void)err;
	(void)status;
	return out_object(out, w, is_error);
}

/* ---- session_list, session_close ---- */

static int
list_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	(void)args;
	(void)session;
	(void)e;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "session");
	vg_strv_push(argv, "list");
	vg_strv_push(argv, "--json");
	return 0;
}

/* Writes {"KEY": the child's JSON} when it printed a value of type
 * want (with "run": args.run before it when asked). */
static int
wrap_result(const struct vg_json_value *args, const struct vg_buf *out,
    enum vg_json_type want, const char *key, struct vg_json_writer *w)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *v = out_json(out, want, &doc);

	if (v == NULL)
		return -1;
	vg_json_obj_begin(w);
	if (vg_json_get(args, "run") != NULL) {
		vg_json_key(w, "run");
		vg_json_str(w, vg_json_get_str(args, "run", ""));
	}
	vg_json_key(w, key);
	vg_json_value_write(w, v);
	vg_json_obj_end(w);
	vg_json_free(doc);
	return 0;
}

static int
close_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *id;

	(void)session;
	if (arg_str(args, "session", 1, &id, e) != 0)
		return -1;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "session");
	vg_strv_push(argv, "stop");
	vg_strv_push(argv, id);
	return 0;
}

static int
close_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	(void)err;
	if (status != 0)
		return -1;
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "session");
	vg_json_str(w, vg_json_get_str(args, "session", ""));
	vg_json_key(w, "closed");
	vg_json_bool(w, 1);
	vg_json_key(w, "message");
	out_line(w, out);
	vg_json_obj_end(w);
	return 0;
}

/* ---- gate_check ---- */

static int
gate_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *cmd;

	(void)session;
	if (arg_str(args, "command", 1, &cmd, e) != 0)
		return -1;
	push_gate(conf, argv, "policy", "explain");
	vg_strv_push(argv, "--json");
	vg_strv_push(argv, "--");
	vg_strv_push(argv, cmd);
	return 0;
}

/* vigil policy explain --json as it is (exit 3, a refusal, is an
 * answer, not an error). */
static int
gate_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	int flagged;

	(void)args;
	(void)err;
	*is_error = 0;
	if (status != 0 && status != 3)
		return -1;
	return out_object(out, w, &flagged);
}

/* ---- runs ---- */

static int
submit_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const struct vg_json_value *sets = vg_json_get(args, "set");
	const char *file;
	size_t i;

	(void)session;
	if (arg_str(args, "manifest", 1, &file, e) != 0)
		return -1;
	if (sets != NULL && sets->type != VG_JSON_ARRAY)
		return vg_err_set(e, VG_EINVAL, "argument 'set' must be an "
		    "array of KEY=VALUE strings");
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "submit");
	for (i = 0; sets != NULL && i < sets->len; i++) {
		if (sets->items[i]->type != VG_JSON_STRING ||
		    strchr(sets->items[i]->str, '=') == NULL)
			return vg_err_set(e, VG_EINVAL, "argument 'set' item "
			    "%zu must be a KEY=VALUE string", i + 1);
		vg_strv_push(argv, "--set");
		vg_strv_push(argv, sets->items[i]->str);
	}
	vg_strv_push(argv, "--");
	vg_strv_push(argv, file);
	return 0;
}

static int
submit_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	(void)err;
	(void)args;
	if (status != 0 || out->len == 0)
		return -1;
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "run");
	out_line(w, out);
	vg_json_obj_end(w);
	return 0;
}

/* Pushes "vigil SUB [OPT] -- RUN" for a tool whose argument is a run. */
static int
run_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *sub, const char *opt, struct vg_strv *argv, struct vg_err *e)
{
	const char *run;

	if (arg_str(args, "run", 1, &run, e) != 0)
		return -1;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, sub);
	vg_strv_push(argv, opt);
	vg_strv_push(argv, "--");
	vg_strv_push(argv, run);
	return 0;
}

static int
status_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	(void)session;
	return run_argv(conf, args, "status", "--json", argv, e);
}

static int
report_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	(void)session;
	return run_argv(conf, args, "report", "--json", argv, e);
}

static int
logs_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *run, *task;
	double limit = 65536;
	int err;

	(void)session;
	if (arg_str(args, "run", 1, &run, e) != 0 ||
	    arg_str(args, "task", 1, &task, e) != 0 ||
	    arg_bool(args, "stderr", &err, e) != 0 ||
	    arg_num(args, "output_limit", 64, 1 << 30, &limit, e) != 0)
		return -1;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "logs");
	if (err)
		vg_strv_push(argv, "--stderr");
	vg_strv_push(argv, "--");
	vg_strv_pushf(argv, "%s/%s", run, task);
	return 0;
}

static int
logs_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	struct vg_buf b = VG_BUF_INIT;
	const struct vg_json_value *s = vg_json_get(args, "stderr");
	int cut;

	(void)err;
	if (status != 0)
		return -1;
	*is_error = 0;
	cut = vg_mcp_head_tail(&b, out->data != NULL ? out->data : "",
	    out->len, (size_t)vg_json_get_num(args, "output_limit", 65536));
	vg_json_obj_begin(w);
	vg_json_key(w, "run");
	vg_json_str(w, vg_json_get_str(args, "run", ""));
	vg_json_key(w, "task");
	vg_json_str(w, vg_json_get_str(args, "task", ""));
	vg_json_key(w, "stream");
	vg_json_str(w, s != NULL && s->type == VG_JSON_BOOL && s->b ?
	    "stderr" : "stdout");
	vg_json_key(w, "text");
	vg_json_strn(w, b.data != NULL ? b.data : "", b.len);
	vg_json_key(w, "truncated");
	vg_json_bool(w, cut);
	vg_json_obj_end(w);
	vg_buf_release(&b);
	return 0;
}

/* ---- background jobs ---- */

static int
start_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *cmd;
	double timeout = 0;
	int open_stdin;

	(void)conf;
	if (arg_str(args, "command", 1, &cmd, e) != 0 ||
	    arg_num(args, "timeout", 0, 31.0 * 86400, &timeout, e) != 0 ||
	    arg_bool(args, "open_stdin", &open_stdin, e) != 0)
		return -1;
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "exec");
	vg_strv_push(argv, "--session");
	vg_strv_push(argv, session);
	vg_strv_push(argv, "--json");
	vg_strv_push(argv, "--background");
	if (open_stdin)
		vg_strv_push(argv, "--open-stdin");
	if (timeout > 0)
		vg_strv_pushf(argv, "--timeout=%.0f", ceil(timeout));
	vg_strv_push(argv, "--");
	vg_strv_push(argv, cmd);
	return 0;
}

/* Pushes "vigil session VERB SESSION [JOB]" from args. */
static int
job_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, const char *verb, int with_job,
    struct vg_strv *argv, struct vg_err *e)
{
	double job = 0;

	if (with_job && vg_json_get(args, "job") == NULL)
		return vg_err_set(e, VG_EINVAL, "argument 'job' is required");
	if (with_job && (arg_num(args, "job", 1, 1e9, &job, e) != 0 ||
	    job != (double)(long)job))
		return vg_err_set(e, VG_EINVAL, "argument 'job' must be a job "
		    "number (1, 2, ...)");
	vg_strv_push(argv, conf->self);
	vg_strv_push(argv, "session");
	vg_strv_push(argv, verb);
	vg_strv_push(argv, session);
	if (with_job)
		vg_strv_pushf(argv, "%.0f", job);
	return 0;
}

static int
output_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	double limit = 65536;
	int wait;

	if (arg_bool(args, "wait", &wait, e) != 0 ||
	    arg_num(args, "output_limit", 64, 1 << 30, &limit, e) != 0 ||
	    job_argv(conf, args, session, "output", 1, argv, e) != 0)
		return -1;
	if (wait)
		vg_strv_push(argv, "--wait");
	return 0;
}

/* Writes "KEY": n bytes of p kept head and tail within limit; sets
 * *cut when something was left out. */
static void
limited(struct vg_json_writer *w, const char *key, const struct vg_buf *b,
    size_t limit, int *cut)
{
	struct vg_buf t = VG_BUF_INIT;

	*cut |= vg_mcp_head_tail(&t, b->data != NULL ? b->data : "", b->len,
	    limit);
	vg_json_key(w, key);
	vg_json_strn(w, t.data != NULL ? t.data : "", t.len);
	vg_buf_release(&t);
}

/* The job's output so far (or at its end with wait); a failure of the
 * command itself is its usage error (exit 2) with its message. */
static int
output_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	static const char failed[] = "vigil: session output: ";
	size_t limit = (size_t)vg_json_get_num(args, "output_limit", 65536);
	const struct vg_json_value *wait = vg_json_get(args, "wait");
	int cut = 0;

	if (status == 2 && err->len >= sizeof(failed) - 1 &&
	    memcmp(err->data, failed, sizeof(failed) - 1) == 0)
		return -1;
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "job");
	vg_json_int(w, (long long)vg_json_get_num(args, "job", 0));
	limited(w, "stdout", out, limit, &cut);
	limited(w, "stderr", err, limit, &cut);
	vg_json_key(w, "truncated");
	vg_json_bool(w, cut);
	if (wait != NULL && wait->type == VG_JSON_BOOL && wait->b) {
		vg_json_key(w, "exit_code");
		vg_json_int(w, status);
	}
	vg_json_obj_end(w);
	return 0;
}

static int
kill_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	return job_argv(conf, args, session, "kill", 1, argv, e);
}

/* "job N STATE" from session kill. */
static int
kill_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	const char *sp;

	(void)err;
	if (status != 0 || out->len == 0 || (sp = strrchr(vg_buf_str(out),
	    ' ')) == NULL)
		return -1;
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "job");
	vg_json_int(w, (long long)vg_json_get_num(args, "job", 0));
	vg_json_key(w, "state");
	vg_json_strn(w, sp + 1, strcspn(sp + 1, "\n"));
	vg_json_obj_end(w);
	return 0;
}

static int
input_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	const char *data = NULL;
	int close_it;

	if (arg_str(args, "data", 0, &data, e) != 0 ||
	    arg_bool(args, "close", &close_it, e) != 0 ||
	    job_argv(conf, args, session, "input", 1, argv, e) != 0)
		return -1;
	vg_strv_push(argv, data != NULL ? data : "");
	if (close_it)
		vg_strv_push(argv, "--close");
	return 0;
}

/* What was given to the job's input. */
static int
input_result(const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	const struct vg_json_value *c = vg_json_get(args, "close");

	(void)out;
	(void)err;
	if (status != 0)
		return -1;
	*is_error = 0;
	vg_json_obj_begin(w);
	vg_json_key(w, "job");
	vg_json_int(w, (long long)vg_json_get_num(args, "job", 0));
	vg_json_key(w, "sent");
	vg_json_int(w, (long long)strlen(vg_json_get_str(args, "data", "")));
	vg_json_key(w, "closed");
	vg_json_bool(w, c != NULL && c->type == VG_JSON_BOOL && c->b);
	vg_json_obj_end(w);
	return 0;
}

/* vigil session VERB SESSION --json */
static int
session_json(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, const char *verb, struct vg_strv *argv,
    struct vg_err *e)
{
	if (job_argv(conf, args, session, verb, 0, argv, e) != 0)
		return -1;
	vg_strv_push(argv, "--json");
	return 0;
}

static int
jobs_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	return session_json(conf, args, session, "jobs", argv, e);
}

static int
egress_argv(const struct vg_mcp_conf *conf, const struct vg_json_value *args,
    const char *session, struct vg_strv *argv, struct vg_err *e)
{
	return session_json(conf, args, session, "egress", argv, e);
}

int
vg_mcp_tool_result(const struct vg_mcp_tool *t,
    const struct vg_json_value *args, const struct vg_buf *out,
    const struct vg_buf *err, int status, struct vg_json_writer *w,
    int *is_error)
{
	if (t->result != NULL)
		return t->result(args, out, err, status, w, is_error);
	*is_error = 0;
	if (status != 0 && !t->wrap_any_status)
		return -1;
	return wrap_result(args, out, t->wrap_type, t->wrap_key, w);
}

/* ---- the table ---- */

#define S_STR(d)	"{\"type\":\"string\",\"description\":\"" d "\"}"
#define S_RUN		"\"run\":" \
			S_STR("run id, unique prefix, name or 'last'")
#define S_AGE(d)	"{\"type\":[\"number\",\"string\"],\"description\":" \
			"\"" d ": seconds, or an age such as 30m, 2h\"}"
#define S_JOB		"\"job\":{\"type\":\"integer\",\"minimum\":1," \
			"\"description\":\"job number\"},\"session\":" \
			S_STR("session id or name (default: the server's)")
#define S_OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props \
			"},\"required\":[" req "]}"
#define S_SESSION_OUT	S_OBJ("\"session\":{\"type\":\"string\"}," \
			"\"dir\":{\"type\":\"string\"}", "\"session\"")

const struct vg_mcp_tool vg_mcp_tools[] = {
	{ .name = "session_open", .title = "Open a sandbox session",
	  .description = "Opens a session: a sandbox of a backend kept "
	  "between commands (working directory and exports carry over). "
	  "Without one, exec opens the server's default session itself.",
	  .input_schema = S_OBJ(
	    "\"backend\":" S_STR("local (default), docker, apptainer, ssh, ...")
	    ",\"image\":" S_STR("container image (docker, apptainer, clouds)")
	    ",\"workdir\":" S_STR("directory of the first command")
	    ",\"name\":" S_STR("a name to use instead of the id")
	    ",\"idle_timeout\":" S_AGE("end after this long without a command")
	    ",\"max_age\":" S_AGE("end this long after the start"), ""),
	  .output_schema = S_SESSION_OUT,
	  .argv = open_argv, .result = open_result },
	{ .name = "exec", .title = "Run a command in a session",
	  .description = "Runs a shell command in a session (the server's "
	  "default one unless 'session' is given) after the policy gate: "
	  "stdout and stderr apart (each limited, keeping head and tail), "
	  "exit code, duration.  A refused command runs nothing: the result "
	  "is an error with the reason and the allow rule that would pass "
	  "it.",
	  .input_schema = S_OBJ(
	    "\"command\":" S_STR("shell command (run with /bin/sh -c)")
	    ",\"session\":" S_STR("session id or name (default: the server's)")
	    ",\"timeout\":{\"type\":\"number\",\"minimum\":0,\"description\":"
	    "\"stop it after this many seconds (exit 124)\"}"
	    ",\"stdin\":" S_STR("bytes given to the command on its stdin")
	    ",\"output_limit\":{\"type\":\"integer\",\"minimum\":64,"
	    "\"description\":\"bytes of each stream shown\"}", "\"command\""),
	  .output_schema = S_OBJ(
	    "\"session\":{\"type\":\"string\"},\"job\":{\"type\":\"integer\"},"
	    "\"exit_code\":{\"type\":\"integer\"},\"state\":{\"type\":"
	    "\"string\"},\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":"
	    "\"string\"},\"duration\":{\"type\":\"number\"},\"truncated\":"
	    "{\"type\":\"boolean\"},\"output_dir\":{\"type\":\"string\"},"
	    "\"error\":{\"type\":\"string\"},\"denied\":{\"type\":\"boolean\"},"
	    "\"reason\":{\"type\":\"string\"},\"allow_rule\":{\"type\":"
	    "[\"string\",\"null\"]},\"allow_note\":{\"type\":\"string\"}",
	    "\"session\",\"exit_code\""),
	  .argv = exec_argv, .result = exec_result, .in_session = 1,
	  .takes_stdin = 1 },
	{ .name = "job_start", .title = "Start a background command",
	  .description = "Starts a command in a session after the policy "
	  "gate and returns its job number at once; read its output with "
	  "job_output, give it input with job_input (open_stdin), stop it "
	  "with job_kill.  A refused command is an error with the reason "
	  "and the allow rule.",
	  .input_schema = S_OBJ(
	    "\"command\":" S_STR("shell command (run with /bin/sh -c)")
	    ",\"session\":" S_STR("session id or name (default: the server's)")
	    ",\"timeout\":{\"type\":\"number\",\"minimum\":0,"
	    "\"description\":\"stop it after this many seconds\"}"
	    ",\"open_stdin\":{\"type\":\"boolean\",\"description\":"
	    "\"keep its input open for job_input (local, docker, apptainer "
	    "sessions)\"}", "\"command\""),
	  .output_schema = S_OBJ(
	    "\"session\":{\"type\":\"string\"},\"job\":{\"type\":"
	    "\"integer\"},\"denied\":{\"type\":\"boolean\"},\"exit_code\":"
	    "{\"type\":\"integer\"},\"reason\":{\"type\":\"string\"},"
	    "\"allow_rule\":{\"type\":[\"string\",\"null\"]},"
	    "\"allow_note\":{\"type\":\"string\"}", "\"session\""),
	  .argv = start_argv, .result = exec_result, .in_session = 1 },
	{ .name = "job_output", .title = "A background command's output",
	  .description = "The output of a command of a session so far, or "
	  "at its end with wait (then with its exit code); stdout and "
	  "stderr apart, each limited keeping head and tail.",
	  .input_schema = S_OBJ(S_JOB
	    ",\"wait\":{\"type\":\"boolean\",\"description\":\"wait for "
	    "its end\"},\"output_limit\":{\"type\":\"integer\","
	    "\"minimum\":64}", "\"job\""),
	  .output_schema = S_OBJ("\"job\":{\"type\":\"integer\"},"
	    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":"
	    "\"string\"},\"truncated\":{\"type\":\"boolean\"},"
	    "\"exit_code\":{\"type\":\"integer\"}",
	    "\"job\",\"stdout\",\"stderr\""),
	  .argv = output_argv, .result = output_result, .in_session = 1 },
	{ .name = "job_input", .title = "Give a background command input",
	  .description = "Writes data to the input of a command started "
	  "with open_stdin (waiting up to 30 s for it to be read); with "
	  "close, ends its input afterwards (the command reads end of "
	  "file).",
	  .input_schema = S_OBJ(S_JOB
	    ",\"data\":" S_STR("bytes to write (a line ends with \\\\n)")
	    ",\"close\":{\"type\":\"boolean\",\"description\":\"end "
	    "the input after data\"}", "\"job\""),
	  .output_schema = S_OBJ("\"job\":{\"type\":\"integer\"},"
	    "\"sent\":{\"type\":\"integer\"},\"closed\":{\"type\":"
	    "\"boolean\"}", "\"job\",\"sent\",\"closed\""),
	  .argv = input_argv, .result = input_result, .in_session = 1 },
	{ .name = "job_kill", .title = "Stop a background command",
	  .description = "Stops a command of a session (its whole process "
	  "tree); the session goes on.",
	  .input_schema = S_OBJ(S_JOB, "\"job\""),
	  .output_schema = S_OBJ("\"job\":{\"type\":\"integer\"},"
	    "\"state\":{\"type\":\"string\"}", "\"job\",\"state\""),
	  .argv = kill_argv, .result = kill_result, .in_session = 1 },
	{ .name = "session_jobs", .title = "A session's commands",
	  .description = "The commands of a session with their state, exit "
	  "code and times, as vigil session jobs --json.",
	  .input_schema = S_OBJ("\"session\":" S_STR("session id or name "
	    "(default: the server's)"), ""),
	  .output_schema = S_OBJ("\"jobs\":{\"type\":\"array\",\"items\":"
	    "{\"type\":\"object\"}}", "\"jobs\""),
	  .argv = jobs_argv, .wrap_key = "jobs", .wrap_type = VG_JSON_ARRAY,
	  .in_session = 1 },
	{ .name = "session_egress", .title = "A session's connections",
	  .description = "The connections the session's commands made "
	  "through its egress proxy (an isolation.network allow-list), per "
	  "job and host: reached with bytes, refused with the rule, failed "
	  "with the error; as vigil session egress --json.",
	  .input_schema = S_OBJ("\"session\":" S_STR("session id or name "
	    "(default: the server's)"), ""),
	  .output_schema = S_OBJ("\"egress\":{\"type\":\"object\"}",
	    "\"egress\""),
	  .argv = egress_argv, .wrap_key = "egress",
	  .wrap_type = VG_JSON_OBJECT, .in_session = 1 },
	{ .name = "session_list", .title = "List sessions",
	  .description = "Lists the sessions with their state, backend, "
	  "mode, limits and number of commands.",
	  .input_schema = S_OBJ("", ""),
	  .output_schema = S_OBJ("\"sessions\":{\"type\":\"array\",\"items\":"
	    "{\"type\":\"object\"}}", "\"sessions\""),
	  .argv = list_argv, .wrap_key = "sessions",
	  .wrap_type = VG_JSON_ARRAY },
	{ .name = "session_close", .title = "Close a session",
	  .description = "Closes a session: stops its background commands "
	  "and removes its sandbox.",
	  .input_schema = S_OBJ("\"session\":" S_STR("session id or name"),
	    "\"session\""),
	  .output_schema = S_OBJ("\"session\":{\"type\":\"string\"},"
	    "\"closed\":{\"type\":\"boolean\"},\"message\":{\"type\":"
	    "\"string\"}", "\"session\",\"closed\""),
	  .argv = close_argv, .result = close_result },
	{ .name = "gate_check", .title = "Judge a command with the gate",
	  .description = "Judges a command with the policy gate under the "
	  "server's mode without running it: each finding, the verdict and, "
	  "for a refusal, the allow rule it needs.  Nothing is audited.",
	  .input_schema = S_OBJ("\"command\":" S_STR("shell command"),
	    "\"command\""),
	  .output_schema = S_OBJ("\"command\":{\"type\":\"string\"},"
	    "\"mode\":{\"type\":\"string\"},\"verdict\":{\"type\":\"string\"},"
	    "\"summary\":{\"type\":\"string\"},\"findings\":{\"type\":"
	    "\"array\"},\"allow_rule\":{\"type\":[\"string\",\"null\"]}",
	    "\"verdict\""),
	  .argv = gate_argv, .result = gate_result },
	{ .name = "run_submit", .title = "Submit a manifest",
	  .description = "Starts a run of a manifest file detached (like "
	  "vigil submit) and returns its run id.",
	  .input_schema = S_OBJ("\"manifest\":" S_STR("manifest file path")
	    ",\"set\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	    "\"description\":\"KEY=VALUE overrides\"}", "\"manifest\""),
	  .output_schema = S_OBJ("\"run\":{\"type\":\"string\"}", "\"run\""),
	  .argv = submit_argv, .result = submit_result },
	{ .name = "run_status", .title = "A run's status",
	  .description = "The run and its tasks, as vigil status --json "
	  "(docs/cli.md).",
	  .input_schema = S_OBJ(S_RUN, "\"run\""),
	  .output_schema = S_OBJ("\"run\":{\"type\":\"string\"},\"status\":"
	    "{\"type\":\"object\"}", "\"run\",\"status\""),
	  .argv = status_argv, .wrap_key = "status",
	  .wrap_type = VG_JSON_OBJECT, .wrap_any_status = 1 },
	{ .name = "task_logs", .title = "A task's output",
	  .description = "The stdout (or stderr) of a task of a run, "
	  "limited keeping head and tail.",
	  .input_schema = S_OBJ(S_RUN ",\"task\":" S_STR("task name")
	    ",\"stderr\":{\"type\":\"boolean\",\"description\":\"stderr "
	    "instead of stdout\"},\"output_limit\":{\"type\":\"integer\","
	    "\"minimum\":64}", "\"run\",\"task\""),
	  .output_schema = S_OBJ("\"run\":{\"type\":\"string\"},\"task\":"
	    "{\"type\":\"string\"},\"stream\":{\"type\":\"string\"},\"text\":"
	    "{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"}",
	    "\"run\",\"task\",\"text\""),
	  .argv = logs_argv, .result = logs_result },
	{ .name = "run_report", .title = "A run's report",
	  .description = "The run's report data (tasks, attempts, usage, the "
	  "gate's decisions) as vigil report --json (docs/report.md).",
	  .input_schema = S_OBJ(S_RUN, "\"run\""),
	  .output_schema = S_OBJ("\"run\":{\"type\":\"string\"},\"report\":"
	    "{\"type\":\"object\"}", "\"run\",\"report\""),
	  .argv = report_argv, .wrap_key = "report",
	  .wrap_type = VG_JSON_OBJECT },
	{ NULL }
};

const struct vg_mcp_tool *
vg_mcp_tool_find(const char *name)
{
	int k;

	for (k = 0; vg_mcp_tools[k].name != NULL; k++)
		if (strcmp(vg_mcp_tools[k].name, name) == 0)
			return &vg_mcp_tools[k];
	return NULL;
}

/* Writes JSON text (our own schemas) as a value of w. */
static void
write_text(struct vg_json_writer *w, const char *text)
{
	struct vg_json_doc *doc;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_json_parse(text, strlen(text), NULL, &doc, &e) != 0) {
		vg_json_null(w);	/* a bug: test-mcp parses each */
		return;
	}
	vg_json_value_write(w, vg_json_root(doc));
	vg_json_free(doc);
}

void
vg_mcp_tools_list(struct vg_json_writer *w)
{
	int k;

	vg_json_obj_begin(w);
	vg_json_key(w, "tools");
	vg_json_arr_begin(w);
	for (k = 0; vg_mcp_tools[k].name != NULL; k++) {
		vg_json_obj_begin(w);
		vg_json_key(w, "name");
		vg_json_str(w, vg_mcp_tools[k].name);
		vg_json_key(w, "title");
		vg_json_str(w, vg_mcp_tools[k].title);
		vg_json_key(w, "description");
		vg_json_str(w, vg_mcp_tools[k].description);
		vg_json_key(w, "inputSchema");
		write_text(w, vg_mcp_tools[k].input_schema);
		vg_json_key(w, "outputSchema");
		write_text(w, vg_mcp_tools[k].output_schema);
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
	vg_json_obj_end(w);
}

/* The default session's start command: the server's flags alone. */
int
vg_mcp_default_session_argv(const struct vg_mcp_conf *conf,
    struct vg_strv *argv, struct vg_err *e)
{
	return session_start_argv(conf, NULL, argv, e);
}
