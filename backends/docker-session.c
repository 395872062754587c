/*
 * docker-session.c - the sessions of the docker backend: one container
 * per session, kept idle, each command of the session run in it through
 * exec (POST /containers/ID/exec, its output demultiplexed into the
 * task's files, its process tree killed on timeout or cancel), the
 * container removed when the session closes.  The container is created
 * and judged for host access as run() does (docker.c); the transport is
 * docker-engine.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/http.h"
#include "common/json.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"
#include "runner/manifest/schema-table.h"
#include "backends/docker-int.h"

/* ------------------------------------------------------------------ */
/* Sessions: one container per session, commands through exec         */
/* ------------------------------------------------------------------ */

/* What the session's container runs: nothing, until it is removed. */
#define SESSION_IDLE_CMD \
	"trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"

/*
 * The handle of a session: "VERSION/ID", the negotiated API version
 * (so a command needs no /_ping first) and the container id.
 */
static int
session_conn(const struct vg_session *s, struct vg_docker_conn *c,
    const char **id, const volatile sig_atomic_t *stop, struct vg_err *e)
{
	const char *slash = strchr(s->handle, '/');
	int r;

	if (slash == NULL || slash == s->handle) {
		*id = NULL;
		return vg_docker_open(c, vg_docker_endpoint(s->m), stop, e);
	}
	memset(c, 0, sizeof(*c));
	c->stop = stop;
	if ((r = vg_http_open(vg_docker_endpoint(s->m), &c->h, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	snprintf(c->prefix, sizeof(c->prefix), "/v%.*s",
	    (int)(slash - s->handle), s->handle);
	*id = slash + 1;
	return 0;
}

/* The attempt that describes the session's container. */
static void
session_attempt(const struct vg_session *s, struct vg_attempt *a,
    struct vg_task *t)
{
	memset(a, 0, sizeof(*a));
	memset(t, 0, sizeof(*t));
	t->env = s->m->env;
	t->command.is_argv = 1;
	vg_strv_push(&t->command.argv, "/bin/sh");
	vg_strv_push(&t->command.argv, "-c");
	vg_strv_push(&t->command.argv, SESSION_IDLE_CMD);
	a->m = s->m;
	a->task = t;
	a->run_id = s->id;
	a->scratch_dir = s->dir;	/* bound at the same path */
	a->attempt = 1;
	a->res = s->m->resources;
	a->pidfd = -1;
	a->ops = &vg_backend_docker;
}

/* The session container's name, from the session id alone. */
static char *
session_name(const struct vg_session *s)
{
	struct vg_attempt a;
	struct vg_task t;
	char *name;

	session_attempt(s, &a, &t);
	name = vg_docker_container_name(&a);
	vg_strv_release(&t.command.argv);
	return name;
}

int
vg_docker_session_open(struct vg_session *s, struct vg_err *e)
{
	struct vg_result r;
	struct vg_docker_conn c;
	struct vg_attempt a;
	struct vg_task t;
	struct vg_buf body = VG_BUF_INIT;
	char *id = NULL, *path, *owner;
	int rc;

	session_attempt(s, &a, &t);
	memset(&r, 0, sizeof(r));
	if ((rc = vg_docker_open(&c, vg_docker_endpoint(s->m), NULL, e)) != 0)
		goto out;
	/* Owned by its session, not by a process: reap leaves it alone,
	 * and vigil gc closes it through the session record. */
	owner = vg_xasprintf("session:%s", s->id);
	vg_docker_create_body(&a, owner, &body);
	free(owner);
	if ((rc = vg_docker_precheck(&c, &a, &body, &r, e)) != 0) {
		if (rc == 1)
			rc = VG_EDENIED;
		goto close;
	}
	if ((rc = vg_docker_create(&c, &a, &body, &id, e)) != 0)
		goto close;
	path = vg_xasprintf("/containers/%s/start", id);
	rc = vg_docker_call(&c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "starting the session's container", e);
	free(path);
	if (rc != 0) {
		(void)vg_docker_remove(&c, id, NULL);
		goto close;
	}
	snprintf(s->handle, sizeof(s->handle), "%s/%s", c.prefix + 2, id);
	vg_strlcpy(s->root, s->dir, sizeof(s->root));
close:
	vg_docker_close(&c);
out:
	free(id);
	vg_buf_release(&body);
	vg_strv_release(&t.command.argv);
	return rc;
}

/* Output of a session command: its whole file, then onward. */
struct session_sink {
	const struct vg_session_cmd	*c;
	int				 fd[3];
	int				 rc;
};

static int
session_out(void *arg, int stream, const char *p, size_t n)
{
	struct session_sink *ss = arg;
	struct vg_err e;

	if (vg_session_output(ss->c, ss->fd[stream], stream, p, n, &e) != 0)
		return ss->rc = VG_EIO;
	return 0;
}

/* Creates an exec of argv in container id; *eid gets its id. */
static int
session_exec_create(struct vg_docker_conn *c, const char *id,
    const struct vg_session *s, const struct vg_session_cmd *sc,
    const struct vg_strv *argv, int attach, char **eid, struct vg_err *e)
{
	struct vg_json_writer w;
	struct vg_json_doc *doc = NULL;
	struct vg_buf body = VG_BUF_INIT;
	const char *v;
	char *path;
	size_t i;
	int rc;

	*eid = NULL;
	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "AttachStdout");
	vg_json_bool(&w, attach);
	vg_json_key(&w, "AttachStderr");
	vg_json_bool(&w, attach);
	vg_json_key(&w, "Tty");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "Cmd");
	vg_json_arr_begin(&w);
	for (i = 0; i < argv->n; i++)
		vg_json_str(&w, argv->v[i]);
	vg_json_arr_end(&w);
	vg_json_key(&w, "Env");
	vg_json_arr_begin(&w);
	path = vg_xasprintf("VIGIL_SESSION_ID=%s", s->id);
	vg_json_str(&w, path);
	free(path);
	path = vg_xasprintf("VIGIL_JOB=%s", sc->job);
	vg_json_str(&w, path);
	free(path);
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	path = vg_xasprintf("/containers/%s/exec", id);
	rc = vg_docker_call(c, "POST", path, &body, DOCKER_CALL_TIMEOUT, NULL,
	    "creating an exec in the session's container", e);
	free(path);
	if (rc == 0 && (rc = vg_docker_reply_json(c, &doc, "exec create",
	    e)) == 0) {
		if ((v = vg_json_get_str(vg_json_root(doc), "Id", NULL)) ==
		    NULL || *v == '\0' || strspn(v, "0123456789abcdef") !=
		    strlen(v))
			rc = vg_err_set(e, VG_EBACKEND, "docker: exec create: "
			    "reply has no valid \"Id\"");
		else
			*eid = vg_xstrdup(v);
	}
	vg_json_free(doc);
	vg_buf_release(&body);
	return rc;
}

/* Reads an exec's state: *running, and *code once it ended. */
static int
session_exec_state(struct vg_docker_conn *c, const char *eid, int *running,
    long *code, struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root, *v;
	char *path = vg_xasprintf("/exec/%s/json", eid);
	int rc;

	rc = vg_docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting an exec", e);
	free(path);
	if (rc == 0 && (rc = vg_docker_reply_json(c, &doc, "exec inspect",
	    e)) == 0) {
		root = vg_json_root(doc);
		v = vg_json_get(root, "Running");
		*running = v != NULL && v->type == VG_JSON_BOOL && v->b;
		*code = (long)vg_json_get_num(root, "ExitCode", -1);
	}
	vg_json_free(doc);
	return rc;
}

/* Runs the tree kill of job sc with sig in container id, detached. */
static void
session_kill_tree(struct vg_docker_conn *c, const char *id,
    const struct vg_session *s, const struct vg_session_cmd *sc, int sig)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf body = VG_BUF_INIT;
	char *script = vg_session_kill_script(s->root, sc->job, sig), *eid,
	    *path;

	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, script);
	if (session_exec_create(c, id, s, sc, &argv, 0, &eid, NULL) == 0) {
		vg_buf_adds(&body, "{\"Detach\":true,\"Tty\":false}");
		path = vg_xasprintf("/exec/%s/start", eid);
		(void)vg_docker_call(c, "POST", path, &body,
		    DOCKER_CALL_TIMEOUT, NULL, "starting the tree kill", NULL);
		free(path);
		free(eid);
	}
	vg_buf_release(&body);
	vg_strv_release(&argv);
	free(script);
}

int
vg_docker_session_exec(const struct vg_session *s,
    const struct vg_session_cmd *sc, struct vg_result *r, struct vg_err *e)
{
	struct vg_docker_conn c;
	struct session_sink sink = { .c = sc, .fd = { -1, -1, -1 } };
	struct vg_session_cmd lc = *sc;
	struct vg_docker_demux dm;
	struct vg_http_req req = { .method = "POST" };
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf body = VG_BUF_INIT;
	struct vg_err le;
	const char *id;
	char *eid = NULL, *path = NULL;
	double until;
	long code = -1;
	int rc, running = 1, why = 0, sig = 0;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	if ((rc = session_conn(s, &c, &id, NULL, e)) != 0)
		return rc;
	if (id == NULL) {
		rc = vg_err_set(e, VG_ENOENT, "docker: session '%s' has no "
		    "container", s->id);
		goto out;
	}
	if ((sink.fd[1] = vg_task_output_open(sc->dir, 2, "stdout", 0,
	    e)) < 0 ||
	    (sink.fd[2] = vg_task_output_open(sc->dir, 2, "stderr", 0,
	    e)) < 0) {
		rc = e->rc;
		goto out;
	}
	/* The session directory is bound at its path here: the state the
	 * command saves is renamed into place here, not by a `mv` in the
	 * container. */
	lc.commit_here = 1;
	vg_session_script(s->root, &lc, sc->stdin_path, NULL, &argv);
	if ((rc = session_exec_create(&c, id, s, sc, &argv, 1, &eid, e)) != 0)
		goto out;
	r->started = vg_now();
	vg_buf_adds(&body, "{\"Detach\":false,\"Tty\":false}");
	path = vg_xasprintf("%s/exec/%s/start", c.prefix, eid);
	vg_docker_demux_init(&dm, session_out, &sink);
	req.path = path;
	req.body = vg_buf_str(&body);
	req.body_len = body.len;
	req.sink = vg_docker_demux_sink;
	req.sink_arg = &dm;
	req.stop = sc->stop;
	req.timeout = sc->timeout;
	vg_err_init(&le);
	rc = vg_http_do(c.h, &req, &c.resp, &le);
	if (rc != 0 && dm.err.rc != 0)
		rc = vg_err_set(&le, dm.err.rc, "output stream: %s",
		    dm.err.msg);
	if (rc == VG_ETIMEOUT)
		why = VG_ST_TIMEOUT;
	else if (rc == VG_ECANCELED && sc->stop != NULL && *sc->stop)
		why = VG_ST_CANCELLED;
	else if (rc != 0) {
		rc = vg_err_set(e, rc, "docker: exec: %s", le.msg);
		goto out;
	} else if (c.resp.status >= 400) {
		rc = vg_err_set(e, VG_EBACKEND, "docker: starting an exec: "
		    "HTTP %ld", c.resp.status);
		goto out;
	}
	if (why != 0) {
		/* The command's tree, never the container. */
		session_kill_tree(&c, id, s, sc, SIGTERM);
		sig = SIGTERM;
		until = vg_now() + sc->kill_grace;
		for (;;) {
			if (session_exec_state(&c, eid, &running, &code,
			    NULL) != 0 || !running)
				break;
			if (vg_now() >= until && sig != SIGKILL) {
				session_kill_tree(&c, id, s, sc, SIGKILL);
				sig = SIGKILL;
				until = vg_now() + 5;
			} else if (vg_now() >= until) {
				break;
			}
			usleep(50000);
		}
		r->state = (enum vg_state)why;
		r->signal = sig;
		snprintf(r->reason, sizeof(r->reason), "%s; its processes "
		    "were sent %s", why == VG_ST_TIMEOUT ? "timed out" :
		    "stopped", sig == SIGKILL ? "SIGKILL" : "SIGTERM");
		rc = 0;
		goto out;
	}
	/* The stream ended with the command; its status follows soon. */
	for (until = vg_now() + 10; ; usleep(2000)) {
		if ((rc = session_exec_state(&c, eid, &running, &code, e)) != 0)
			goto out;
		if (!running || vg_now() >= until)
			break;
	}
	r->exit_code = (int)code;
	r->state = code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
	if (code != 0)
		snprintf(r->reason, sizeof(r->reason), "exit code %ld", code);
	rc = sink.rc != 0 ? vg_err_set(e, VG_EIO, "docker: job %s: its output "
	    "could not be kept whole", sc->job) : 0;
	if (rc == 0)
		rc = vg_session_commit(s, &lc, r, e);
out:
	r->ended = vg_now();
	if (sink.fd[1] >= 0)
		close(sink.fd[1]);
	if (sink.fd[2] >= 0)
		close(sink.fd[2]);
	free(path);
	free(eid);
	vg_buf_release(&body);
	vg_strv_release(&argv);
	vg_docker_close(&c);
	return rc;
}

int
vg_docker_session_close(const struct vg_session *s, struct vg_err *e)
{
	struct vg_docker_conn c;
	const char *id;
	char *name = NULL;
	int rc;

	if ((rc = session_conn(s, &c, &id, NULL, e)) != 0)
		return rc;
	if (id == NULL)
		id = name = session_name(s);
	rc = vg_docker_remove(&c, id, e);
	free(name);
	vg_docker_close(&c);
	return rc;
}
