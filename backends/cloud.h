/*
 * cloud.h - what the cloud sandbox backends (daytona.c, vercel.c,
 * modal.c) share: one attempt is "create a sandbox, run the command in
 * it, stream its output into the task's files, stop it on timeout or
 * SIGTERM, delete the sandbox", whatever the provider.  cloud.c holds
 * that life cycle once (vg_cloud_run), with the API connection (bearer
 * token, retries of transient failures with jittered backoff, provider
 * error messages with the token redacted), the output files, the owner
 * labels that let reap() tell leftovers of dead runs, probe and
 * validate.  Each provider file supplies a struct vg_cloud_ops: its
 * requests and the parsing of its replies; and its struct
 * vg_backend_ops, whose ops are named functions of its own
 * (daytona_run, vercel_reap, ...) that call the shared ones here with
 * that table.
 *
 * Providers never see a host path: the task directory and scratch of an
 * attempt stay on this host; the sandbox gets the command, its
 * environment and the manifest's workdir.
 */
#ifndef VG_CLOUD_H
#define VG_CLOUD_H

#include <signal.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/http.h"
#include "common/json.h"
#include "common/path.h"
#include "backends/backend.h"
#include "runner/manifest/plugin.h"
#include "runner/manifest/schema.h"

/* modal, daytona, vercel: HTTP sandboxes. */
struct vg_cloud_conf {
	char		*endpoint;	/* API base URL override */
	char		*token_env;	/* env var holding the API token */
	char		*snapshot;	/* provider image/snapshot name */
	char		*region;
	int		 keep;		/* keep the sandbox after the task */
};

/* The rows of every cloud provider's section (modal:, daytona:,
 * vercel:); each provider defines its own vg_msection with them. */
extern const struct vg_section vg_cloud_schema;

/* Those rows, for a provider whose own struct holds a struct
 * vg_cloud_conf at offset base (modal.c adds rows after them). */
#define VG_CLOUD_ROW(base, k, t, m, d, h)				\
	{ .key = k, .type = t, .def = d, .help = h,			\
	  .off = (base) + offsetof(struct vg_cloud_conf, m) }
#define VG_CLOUD_ROWS(base)						\
	VG_CLOUD_ROW(base, "endpoint", VG_F_STR, endpoint, NULL,	\
	    "API base URL"),						\
	VG_CLOUD_ROW(base, "token_env", VG_F_STR, token_env, NULL,	\
	    "environment variable holding the API token"),		\
	VG_CLOUD_ROW(base, "snapshot", VG_F_STR, snapshot, NULL,	\
	    "image or snapshot"),					\
	VG_CLOUD_ROW(base, "region", VG_F_STR, region, NULL, "region"),	\
	VG_CLOUD_ROW(base, "keep", VG_F_BOOL, keep, "false",		\
	    "keep the sandbox after the task")

/* Labels (Daytona) or tags (Vercel) on every sandbox vigil creates. */
#define VG_CLOUD_LABEL		"vigil"		/* "1" */
#define VG_CLOUD_LABEL_RUN	"vigil-run"	/* run id */
#define VG_CLOUD_LABEL_TASK	"vigil-task"	/* task index */
#define VG_CLOUD_LABEL_OWNER	"vigil-owner"	/* host:pid:starttime */

/* Calls that should answer at once, and sandbox creation (image pulls). */
#define VG_CLOUD_CALL_TIMEOUT	60.0
#define VG_CLOUD_CREATE_TIMEOUT	900.0
/* Seconds the outputs may take to come back after a timeout. */
#define VG_CLOUD_OUTPUTS_LATE	30
/* Tries of one request that fails transiently (connect, 429, 5xx). */
#define VG_CLOUD_TRIES		5

/* One API connection. */
struct vg_cloud {
	const struct vg_cloud_ops *ops;
	const struct vg_cloud_conf *conf;	/* manifest section or NULL */
	struct vg_http		*h;
	struct vg_http_resp	 resp;		/* last reply */
	const volatile sig_atomic_t *stop;	/* abandons requests */
	char			*endpoint;	/* owned */
	char			*token;		/* owned, wiped on close */
	const char		*token_env;	/* where the token came from */
	char			*team;		/* provider scopes, owned; */
	char			*project;	/* NULL when unused */
	void			*priv;		/* a provider's own channel */
};

/* Where a task's output goes: [1] stdout, [2] stderr. */
struct vg_cloud_out {
	int			fd[3];
	unsigned long long	written[3];	/* bytes in each file */
	unsigned long long	seen[3];	/* bytes of the log read now */
	/* Sessions: new bytes are passed on here too (may be NULL). */
	const struct vg_session_cmd *tee;
};

/* One attempt in one sandbox. */
struct vg_cloud_task {
	struct vg_attempt	*a;
	struct vg_cloud		 c;
	struct vg_cloud_out	 out;
	char			*sandbox;	/* provider id, owned */
	char			*session;	/* provider session, owned */
	char			*cmd;		/* provider command id, owned */
	struct vg_cloud		 tb;		/* a second base URL (toolbox) */
	int			 have_tb;
	int			 attached;	/* following an earlier
						   monitor's command */
};

/* A sandbox found by list(). */
struct vg_cloud_box {
	char	*id;
	char	*run;
	char	*task;
	char	*owner;
};

struct vg_cloud_boxes {
	struct vg_cloud_box	*v;
	size_t			 n;
	size_t			 cap;
};

/* A provider.  Every operation returns 0 or a negative vg_rc with e. */
struct vg_cloud_ops {
	const char	*name;		/* "daytona" */
	const char	*token_env;	/* default variable of the token */
	const char	*endpoint_env;	/* variable overriding the endpoint */
	const char	*endpoint;	/* the public API */
	const char	*team_env;	/* scopes read at open; may be NULL */
	const char	*project_env;
	const struct vg_msection *section;	/* its manifest section */
	int		 needs_image;	/* image or snapshot is required */

	/* Creates the sandbox and waits until it can run commands; sets
	 * t->sandbox as soon as it exists. */
	int	(*create)(struct vg_cloud_task *t, struct vg_err *e);
	/* Starts the command.  Optional (wait may start it). */
	int	(*exec)(struct vg_cloud_task *t, struct vg_err *e);
	/* Streams output into t->out until the command ends (0, *code
	 * set), the deadline passes (VG_ETIMEOUT, 0 = none) or the stop
	 * flag is set (VG_ECANCELED). */
	int	(*wait)(struct vg_cloud_task *t, double deadline, long *code,
		    struct vg_err *e);
	/* Stops the command: SIGTERM, grace seconds, SIGKILL where the
	 * provider can; keeps what output it can.  *sig gets the last
	 * signal sent.  Never blocks for long. */
	void	(*kill)(struct vg_cloud_task *t, double grace, int *sig);
	/* Deletes sandbox id (stopping it first where needed). */
	int	(*destroy)(struct vg_cloud *c, const char *id,
		    struct vg_err *e);
	/* The path listing vigil's sandboxes (of run_id, or all),
	 * from cursor on (NULL: the first page); caller frees. */
	char	*(*list_path)(struct vg_cloud *c, const char *run_id,
		    const char *cursor);
	/* The list reply: the array's key, each item's id and labels
	 * keys, and where the next page's cursor is ([in.]next). */
	const char	*list_items;
	const char	*list_id;
	const char	*list_labels;
	const char	*list_next_in;
	const char	*list_next;
	/* A cheap authenticated request, for probe. */
	int	(*ping)(struct vg_cloud *c, struct vg_err *e);
	/* Opens c instead of vg_cloud_open, for a provider whose API or
	 * credentials differ (modal); c->priv is released by close_priv
	 * from vg_cloud_close.  Both optional. */
	int	(*open)(struct vg_cloud *c, const struct vg_cloud_ops *ops,
		    const struct vg_cloud_conf *conf,
		    const volatile sig_atomic_t *stop, struct vg_err *e);
	void	(*close_priv)(void *priv);
	/* What of resources.gpus the provider's API takes: 0 none (a
	 * manifest with gpus is refused), VG_CLOUD_GPU_COUNT a count,
	 * VG_CLOUD_GPU_TYPE a count and resources.gpu_type. */
	int		 gpus;
	/* Sessions: readies t for one more command in the existing sandbox
	 * t->sandbox (t->session: what the handle recorded after create,
	 * may be NULL), e.g. a provider session of its own per command so
	 * that kill stops that command only.  Optional: nothing to do. */
	int	(*attach)(struct vg_cloud_task *t, struct vg_err *e);
	/* Sessions: output comes only when the command ends (a gateway
	 * that reports it once); said in the docs, not an error. */
	int		 no_stream;
	/* Resume: takes over the command an earlier monitor started in
	 * sandbox t->sandbox, whose session and command ids it recorded
	 * (t->session, t->cmd; vg_cloud_record): sets up what wait and
	 * kill need, with t->attached set so that wait does not start the
	 * command again.  VG_ENOENT when the sandbox or command is gone.
	 * Optional: without it a sandbox found after a crash is deleted
	 * and the task runs again. */
	int	(*reattach)(struct vg_cloud_task *t, struct vg_err *e);
	/* Outputs (vg_cloud_outputs): copies the sandbox's file path
	 * (absolute) into fd, VG_ELIMIT past max bytes.  Optional: without
	 * it the files stay in the sandbox. */
	int	(*get_file)(struct vg_cloud_task *t, const char *path, int fd,
		    unsigned long long max, struct vg_err *e);
	/* Outputs: the working directory of the command (absolute) and
	 * every entry below it, 33 levels at most, one line each, "TYPE
	 * SIZE PATH" (f file, d directory, l link, o other; PATH relative),
	 * appended to out.  Optional: without it a listing command runs
	 * in the sandbox (find, as @vercel/sandbox's readdir does). */
	int	(*list_tree)(struct vg_cloud_task *t, struct vg_buf *out,
		    struct vg_err *e);
};

#define VG_CLOUD_GPU_COUNT	1
#define VG_CLOUD_GPU_TYPE	2

/* The pool of a cloud backend: unbounded (each sandbox brings its own
 * machine), so only --jobs limits a direct run. */
int	vg_cloud_pool(const struct vg_manifest *m, struct vg_pool *p,
	    struct vg_err *e);

/* ---- connection ---- */

/* The manifest section of ops's provider, or NULL when m is NULL. */
const struct vg_cloud_conf *vg_cloud_conf_of(const struct vg_cloud_ops *ops,
	    const struct vg_manifest *m);

/*
 * Opens a connection for ops: endpoint from the section, the provider's
 * endpoint variable or its public URL; token from the variable the
 * section names (token_env) or the provider's default, sent as
 * "Authorization: Bearer".  VG_EINVAL naming the variable when the
 * token (or a required scope) is missing.  c is released by
 * vg_cloud_close in every case.
 */
int	vg_cloud_open(struct vg_cloud *c, const struct vg_cloud_ops *ops,
	    const struct vg_cloud_conf *conf,
	    const volatile sig_atomic_t *stop, struct vg_err *e);
/* vg_cloud_open on an explicit endpoint and token variable. */
int	vg_cloud_open_at(struct vg_cloud *c, const struct vg_cloud_ops *ops,
	    const struct vg_cloud_conf *conf, const char *endpoint,
	    const char *token_env, const volatile sig_atomic_t *stop,
	    struct vg_err *e);
/*
 * Finds ops's credentials by presence (no network): VG_EINVAL naming
 * each variable that is missing and how to give it.  *where (may be
 * NULL) gets the token's variable.  What validate and vg_cloud_open
 * check, so a run without credentials is refused before it is recorded.
 */
int	vg_cloud_creds(const struct vg_cloud_ops *ops,
	    const struct vg_cloud_conf *conf, const char **where,
	    struct vg_err *e);
/* Opens a second connection on base with c's credentials. */
int	vg_cloud_open_like(struct vg_cloud *dst, const struct vg_cloud *c,
	    const char *base, struct vg_err *e);
void	vg_cloud_close(struct vg_cloud *c);

/* One request.  ok lists statuses >= 400 that are answers, 0-ended. */
struct vg_cloud_req {
	const char		*method;
	const char		*path;
	const struct vg_buf	*body;		/* JSON, or NULL */
	const long		*ok;
	const char		*what;		/* "creating the sandbox" */
	double			 timeout;	/* 0 = VG_CLOUD_CALL_TIMEOUT,
						   < 0 = none */
	vg_http_sink		 sink;		/* streamed 2xx body */
	void			*sink_arg;
	int			 once;		/* no retries (streams) */
};

/*
 * Sends rq, retrying connection failures, 429 and 5xx up to
 * VG_CLOUD_TRIES times with jittered exponential backoff (Retry-After
 * honoured, capped).  Returns 0 with the reply in c->resp when its status
 * is below 400 or listed in rq->ok; otherwise an error "NAME: WHAT:
 * provider message (HTTP n)", VG_EDENIED for 401/403 naming the token
 * variable, VG_ENOENT for 404.  The token never appears in messages.
 */
int	vg_cloud_request(struct vg_cloud *c, const struct vg_cloud_req *rq,
	    struct vg_err *e);
/* vg_cloud_request without a sink and with default timeout. */
int	vg_cloud_call(struct vg_cloud *c, const char *method, const char *path,
	    const struct vg_buf *body, const long *ok, const char *what,
	    struct vg_err *e);
/* Parses c->resp as JSON; *docp owned by the caller. */
int	vg_cloud_json(struct vg_cloud *c, struct vg_json_doc **docp,
	    const char *what, struct vg_err *e);

/* The error text of a provider's reply body: "message" (string or list),
 * "error.message", or "error"; "" when none.  Pure. */
void	vg_cloud_error_text(const char *body, size_t len, char *out,
	    size_t size);
/* Replaces every occurrence of secret in s (NUL-terminated) by "***". */
void	vg_cloud_redact(char *s, size_t size, const char *secret);
/* Delay before try n (1-based) of a request: jittered exponential
 * backoff, or retry_after seconds when positive; capped.  r01 is a
 * random number in [0, 1).  Pure. */
double	vg_cloud_backoff(int n, double retry_after, double r01);
/* Sleeps secs unless *stop gets set; VG_ECANCELED then. */
int	vg_cloud_sleep(const volatile sig_atomic_t *stop, double secs);

/* ---- attempts ---- */

/*
 * A POSIX sh script that runs the attempt in a subshell: exports the
 * environment, changes to cwd (when not NULL), then execs the argv.
 * For providers that take one command string.  Appends to out.
 */
void	vg_cloud_script(const struct vg_attempt *a, const char *cwd,
	    struct vg_buf *out);

/*
 * Outputs of the attempt of t (docs/manifest.md, "Where the task ran
 * elsewhere"): what the manifest's outputs globs match in the command's
 * working directory in the sandbox is brought into the task directory
 * with the same relative paths, through ops->get_file, before the
 * sandbox is deleted; runner/core/outputs.c collects it from there.
 * Within outputs.max_files and max_bytes; links and special files stay
 * in the sandbox, listed in VG_OUTPUTS_LEFT (backends/backend.h).
 */
int	vg_cloud_outputs(const struct vg_cloud_ops *ops, struct vg_cloud_task *t,
	    enum vg_state st, struct vg_err *e);
/* The body of a request (GET or POST body) streamed into fd, at most max
 * bytes (VG_ELIMIT past them); for get_file. */
int	vg_cloud_get_file(struct vg_cloud *c, const char *method,
	    const char *path, const struct vg_buf *body, int fd,
	    unsigned long long max, struct vg_err *e);

/* Output files: opened truncated in task_dir. */
int	vg_cloud_out_open(struct vg_cloud_out *o, const char *task_dir,
	    struct vg_err *e);
/* Writes n bytes of stream (1 or 2): the log read so far grows by n,
 * and only what goes beyond the file's length is written. */
int	vg_cloud_out_write(struct vg_cloud_out *o, int stream, const char *p,
	    size_t n);
/* Output files of a reattached attempt: opened for appending, their
 * sizes taken as what was written (the log is read from its start). */
int	vg_cloud_out_reopen(struct vg_cloud_out *o, const char *task_dir,
	    struct vg_err *e);
/* Records t's sandbox, session and command ids in the task directory
 * ("sandbox"), once the command has started, for a later reattach. */
void	vg_cloud_record(const struct vg_cloud_task *t);
/* Before reading a whole log again from its start. */
void	vg_cloud_out_rewind(struct vg_cloud_out *o);
void	vg_cloud_out_close(struct vg_cloud_out *o);

/* Splits a byte stream into lines of at most max bytes (longer ones are
 * an error), calling cb on each line without its newline. */
struct vg_cloud_lines {
	struct vg_buf	 line;
	size_t		 max;
	int		(*cb)(void *arg, const char *line, size_t n);
	void		*arg;
	int		 rc;		/* first error */
};

void	vg_cloud_lines_init(struct vg_cloud_lines *l, size_t max,
	    int (*cb)(void *, const char *, size_t), void *arg);
/* vg_http_sink: feeds bytes; a non-zero return aborts. */
int	vg_cloud_lines_feed(void *l, const char *p, size_t n);
/* Delivers a last line without newline; returns the first error. */
int	vg_cloud_lines_end(struct vg_cloud_lines *l);
void	vg_cloud_lines_release(struct vg_cloud_lines *l);

void	vg_cloud_boxes_add(struct vg_cloud_boxes *b, const char *id,
	    const char *run, const char *task, const char *owner);
void	vg_cloud_boxes_release(struct vg_cloud_boxes *b);

/* Adds the labels every sandbox carries as members of the current
 * object of w (run, task, owner). */
void	vg_cloud_labels(const struct vg_attempt *a, struct vg_json_writer *w);

/* ---- the operations, once for every provider ---- */

/*
 * The time past a's timeout the scheduler leaves the monitor, which stops
 * the command itself at the timeout: when outputs may be brought back
 * after a timeout (the provider reads files, a->m's outputs have paths
 * and `when` is not success), kill_grace, VG_CLOUD_OUTPUTS_LATE and one
 * call to delete the sandbox; else 0.
 */
double	vg_cloud_timeout_slack(const struct vg_cloud_ops *ops,
	    const struct vg_attempt *a);
int	vg_cloud_run(const struct vg_cloud_ops *ops, struct vg_attempt *a,
	    struct vg_result *r, struct vg_err *e);
int	vg_cloud_reap(const struct vg_cloud_ops *ops,
	    const struct vg_manifest *m, const char *run_id, int task,
	    struct vg_buf *report, struct vg_err *e);
/* The backend's reattach op: finds the sandbox of a by its tags and,
 * as the provider's command cannot be followed from a new process,
 * deletes it; VG_ENOENT (the task runs again). */
int	vg_cloud_reattach(const struct vg_cloud_ops *ops,
	    struct vg_attempt *a, struct vg_result *r, struct vg_err *e);
void	vg_cloud_probe(const struct vg_cloud_ops *ops, struct vg_buf *out);
int	vg_cloud_validate(const struct vg_cloud_ops *ops,
	    const struct vg_manifest *m, struct vg_diag *d);
/* The plugin op host_check: the credentials are not here (a token's
 * variable unset), checked by presence, never sent. */
void	vg_cloud_host_check(const struct vg_cloud_ops *ops,
	    const struct vg_manifest *m, struct vg_strv *why);

/*
 * Sessions (backend.h): one sandbox per session, made by ops->create
 * with an idle command and labelled as owned by the session; each
 * command is ops->attach, exec and wait of the session wrapper in it
 * (rooted at ~/.vigil-session in the sandbox), its output streamed to
 * the command's files and onward; a timeout runs the tree kill as one
 * more command, then ops->kill; close is ops->destroy.
 */
int	vg_cloud_session_open(const struct vg_cloud_ops *ops,
	    struct vg_session *s, struct vg_err *e);
int	vg_cloud_session_exec(const struct vg_cloud_ops *ops,
	    const struct vg_session *s, const struct vg_session_cmd *c,
	    struct vg_result *r, struct vg_err *e);
int	vg_cloud_session_close(const struct vg_cloud_ops *ops,
	    const struct vg_session *s, struct vg_err *e);

/* ---- pure parts of the providers, for tests and fuzzing ---- */

/*
 * Daytona's session command log: each line of the command's stdout is
 * written after the marker 01 01 01, each stderr line after 02 02 02
 * (daemon pkg/session/execute.go, libs/common-go/pkg/log).  Bytes before
 * the first marker belong to no stream and are dropped.
 */
struct vg_daytona_demux {
	int		 stream;	/* 0 before a marker, then 1 or 2 */
	int		 pend;		/* marker bytes seen, 0..2 */
	unsigned char	 pc;		/* which marker byte */
	int		(*out)(void *arg, int stream, const char *p, size_t n);
	void		*arg;
};

void	vg_daytona_demux_init(struct vg_daytona_demux *d,
	    int (*out)(void *, int, const char *, size_t), void *arg);
/* Feeds bytes; returns the first non-zero return of out. */
int	vg_daytona_demux_feed(struct vg_daytona_demux *d, const char *p,
	    size_t n);
/* At the end of the whole log: half a marker is data. */
int	vg_daytona_demux_end(struct vg_daytona_demux *d);

/*
 * One line of a sandbox's listing (vg_cloud_ops.list_tree, the listing
 * command of cloud.c): "TYPE SIZE PATH", TYPE one of f d l o, SIZE
 * decimal, PATH relative without "." or ".." components.  Fills type,
 * size and rel (pointing into line); -1 when the line is not one.  Pure.
 */
int	vg_cloud_ls_line(const char *line, char *type,
	    unsigned long long *size, const char **rel);

/* Body of POST /sandbox (Daytona). */
void	vg_daytona_create_body(const struct vg_attempt *a,
	    const struct vg_cloud_conf *conf, struct vg_buf *out);

/*
 * One line of Vercel's command stream (application/x-ndjson):
 * {"command": {...}} (exitCode null at start, a number at the end),
 * {"stream": "stdout"|"stderr", "data": "..."} or {"stream": "error",
 * "data": {"code", "message"}}.
 */
struct vg_vercel_event {
	int	 kind;		/* VG_VERCEL_* */
	char	 id[128];	/* command id */
	long	 exit_code;	/* -1 when none yet */
	int	 stream;	/* 1 or 2 for LOG */
	const char *data;	/* LOG: borrowed from the document */
	size_t	 len;
	char	 message[256];	/* ERROR: "code: message" */
};

#define VG_VERCEL_COMMAND	1
#define VG_VERCEL_LOG		2
#define VG_VERCEL_ERROR		3

/* Parses one line into ev; *docp (owned by the caller, may be NULL on
 * error) keeps ev->data alive.  VG_EPARSE with a message otherwise. */
int	vg_vercel_event_parse(const char *line, size_t n,
	    struct vg_vercel_event *ev, struct vg_json_doc **docp,
	    struct vg_err *e);

/* Bodies of POST /v3/sandboxes and POST .../cmd (Vercel). */
void	vg_vercel_create_body(const struct vg_attempt *a,
	    const struct vg_cloud_conf *conf, const char *project,
	    struct vg_buf *out);
void	vg_vercel_cmd_body(const struct vg_attempt *a, struct vg_buf *out);

#endif
