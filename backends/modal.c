/*
 * modal.c - the modal backend: each attempt in a new Modal sandbox, in
 * one of two modes (docs/backends/modal.md):
 *
 * direct: Modal's gRPC API (service modal.client.ModalClient,
 *   modal-labs/modal-client modal_proto/api.proto) with the user's token
 *   sent as x-modal-token-id / x-modal-token-secret (modal-grpc.c):
 *     AppGetOrCreate        the app "vigil" (modal.app), created if missing
 *     ImageGetOrCreate      the image from "FROM <image>"; when the build
 *       ImageJoinStreaming  has not finished, joined until it has
 *     SecretGetOrCreate     the task's environment as an ephemeral secret,
 *                           never on a command line
 *     SandboxCreate         entrypoint = the task's argv, workdir,
 *                           timeout, cpu, memory, GPU, tags with the run,
 *                           task and owner
 *     SandboxGetLogs        stdout and stderr side by side, each resumed
 *                           after a cut from its last entry_id
 *     SandboxWait           the exit code
 *     SandboxTerminate      on timeout, cancel and at the end
 *     SandboxList           by tag, for reap (gc, resume)
 *     ClientHello           the authentication check of prepare and doctor
 *
 * managed: a tool gateway holding the Modal account, over HTTPS with a
 *   bearer token, as Hermes Agent's tools/environments/managed_modal.py
 *   speaks to it: POST /v1/sandboxes (x-idempotency-key, logicalKey),
 *   POST .../execs, GET .../execs/{id} polled every 0.25 s, POST
 *   .../execs/{id}/cancel, POST .../terminate; GET /v1/health is the
 *   readiness check.
 *
 * auto (the default) is managed when a gateway is configured and ready,
 * else direct when direct credentials exist.  The mode and credentials
 * are found by presence when a manifest is validated (so `vigil run` and
 * `submit` refuse before recording a run), the network checks run once
 * in prepare.  The shared life cycle is cloud.c's; this file supplies the
 * two providers' operations.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/path.h"
#include "backends/modal.h"
#include "runner/manifest/schema-table.h"

#define MODAL_APP		"vigil"
#define MODAL_CLIENT_VERSION	"1.0.0"
#define MODAL_LOG_TIMEOUT	55.0
#define MODAL_WAIT_TIMEOUT	10.0
#define MODAL_MAX_SANDBOX_SECS	86400
/* Consecutive log stream failures without new output before giving up. */
#define MODAL_LOG_FAILS		8
#define GATEWAY_POLL		0.25
/* A ContainerFilesystemExecRequest's operation. */
#define FS_OP(x)	MODAL__CLIENT__CONTAINER_FILESYSTEM_EXEC_REQUEST__\
FILE_EXEC_REQUEST_ONEOF_FILE_##x##_REQUEST
/* Bytes asked per ContainerFileReadRequest. */
#define MODAL_READ_CHUNK	(4u << 20)

/* A GenericResult status. */
#define GS(x)	MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_##x

/* modal's handle (backend.h, struct vg_backend_drive): the mode prepare
 * chose for the drive, which the monitors of its attempts inherit with
 * a->drive.  Without one (vigil exec, task-exec) run resolves the mode
 * by presence alone. */
struct modal_drive {
	struct vg_backend_drive	 base;		/* first: the downcast */
	int			 mode;		/* enum vg_modal_mode */
};

/* The direct channel of a connection (vg_cloud.priv). */
struct direct {
	struct vg_grpc		*g;
	struct vg_modal_direct	 creds;
	char			*app_id;
	char			*secret_id;	/* exec mode: for the exec */
};

static const struct vg_cloud_ops modal_direct_ops;
static const struct vg_cloud_ops modal_managed_ops;

/* The GPU type a task asking r asks Modal for: modal.gpu, else
 * resources.gpu_type (the generic spelling); NULL when neither is set. */
static const char *
modal_gpu_type(const struct vg_manifest *m, const struct vg_resources *r)
{
	const struct vg_modal_conf *mc = vg_manifest_conf(m,
	    &vg_modal_msection);

	if (mc->gpu != NULL && *mc->gpu != '\0')
		return mc->gpu;
	if (r->gpu_type != NULL && *r->gpu_type != '\0')
		return r->gpu_type;
	return NULL;
}

/* Stops at a task (index + 2 into arg) asking GPUs of no type. */
static int
untyped_gpu_fn(long index, const struct vg_resources *r, void *arg)
{
	const struct vg_manifest *m = arg;

	return r->gpus > 0 && modal_gpu_type(m, r) == NULL ?
	    (int)(index + 2) : 0;
}

/* The modal section of m, or NULL. */
static const struct vg_modal_conf *
conf_of(const struct vg_manifest *m)
{
	return m != NULL ? vg_manifest_conf(m, &vg_modal_msection) : NULL;
}

/* A string for a message field protobuf-c declares char * (it is only
 * read when packing). */
static char *
pbstr(const char *s)
{
	union {
		const char	*c;
		char		*m;
	} u = { .c = s };

	return u.m;
}

/* ------------------------------------------------------------------ */
/* Pure                                                                */
/* ------------------------------------------------------------------ */

/* Maps a sandbox's result; see modal.h. */
int
vg_modal_result(const Modal__Client__GenericResult *g, int *ended,
    long *code, struct vg_err *e)
{
	static const char *const why[] = {
		[GS(INIT_FAILURE)] =
		    "the sandbox failed to start",
		[GS(INTERNAL_FAILURE)] =
		    "Modal failed internally",
		[GS(IDLE_TIMEOUT)] =
		    "the sandbox reached its idle timeout",
		[GS(MEMORY_MANAGER_EVICTION)] =
		    "the sandbox was evicted (memory)",
	};
	int st = g != NULL && g->has_status ? (int)g->status : 0;

	*ended = st != 0;
	*code = -1;
	switch (st) {
	case 0:
		return 0;
	case GS(SUCCESS):
	case GS(FAILURE):
		*code = g->has_exitcode ? g->exitcode : st == 1 ? 0 : 1;
		return 0;
	case GS(TIMEOUT):
		*code = 124;
		return 0;
	case GS(TERMINATED):
		*code = 137;
		return 0;
	}
	return vg_err_set(e, VG_EBACKEND, "modal: %s%s%s",
	    st > 0 && (size_t)st < sizeof(why) / sizeof(*why) && why[st] ?
	    why[st] : "unknown sandbox status",
	    g->exception != NULL && *g->exception ? ": " : "",
	    g->exception != NULL ? g->exception : "");
}

/* ------------------------------------------------------------------ */
/* Direct: connection                                                  */
/* ------------------------------------------------------------------ */

/* Frees a direct channel. */
static void
direct_free(void *priv)
{
	struct direct *d = priv;

	vg_grpc_free(d->g);
	vg_modal_direct_release(&d->creds);
	free(d->app_id);
	free(d->secret_id);
	free(d);
}

/* Opens the gRPC channel with the direct credentials. */
static int
direct_open(struct vg_cloud *c, const struct vg_cloud_ops *ops,
    const struct vg_cloud_conf *conf, const volatile sig_atomic_t *stop,
    struct vg_err *e)
{
	struct vg_strv md = VG_STRV_INIT;
	struct direct *d = vg_xcalloc(1, sizeof(*d));
	const char *url;
	int rc;

	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->conf = conf;
	c->stop = stop;
	c->priv = d;
	if ((rc = vg_modal_direct_find(&d->creds, e)) != 0)
		return rc == VG_ENOENT ? vg_err_prefix(e, "modal: ") : rc;
	url = conf != NULL && conf->endpoint != NULL && *conf->endpoint ?
	    conf->endpoint : d->creds.server_url;
	c->endpoint = vg_xstrdup(url);
	c->token_env = d->creds.where;
	vg_strv_push(&md, "x-modal-client-type: 1");
	vg_strv_push(&md, "x-modal-client-version: " MODAL_CLIENT_VERSION);
	vg_strv_pushf(&md, "x-modal-token-id: %s", d->creds.token_id);
	vg_strv_pushf(&md, "x-modal-token-secret: %s", d->creds.token_secret);
	rc = vg_grpc_open(&d->g, url, &md, stop, d->creds.token_secret, e);
	while (md.n > 0)
		memset(md.v[--md.n], 0, 1);
	md.n = 2;
	vg_strv_release(&md);
	return rc;
}

/* The channel of c. */
static struct vg_grpc *
chan(struct vg_cloud *c)
{
	return ((struct direct *)c->priv)->g;
}

/* ClientHello: does the server take the token? */
static int
direct_ping(struct vg_cloud *c, struct vg_err *e)
{
	Modal__Client__Empty req = MODAL__CLIENT__EMPTY__INIT;
	ProtobufCMessage *resp;
	int rc;

	rc = vg_grpc_unary(chan(c), "ClientHello", &req.base,
	    &modal__client__client_hello_response__descriptor, &resp,
	    VG_CLOUD_CALL_TIMEOUT, "checking the token (ClientHello)", e);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return rc;
}

/* The app's id (AppGetOrCreate, once per connection); create 0 only
 * looks it up (VG_ENOENT when missing). */
static int
direct_app(struct vg_cloud *c, int create, struct vg_err *e)
{
	struct direct *d = c->priv;
	const struct vg_modal_conf *mc = (const struct vg_modal_conf *)c->conf;
	Modal__Client__AppGetOrCreateRequest req =
	    MODAL__CLIENT__APP_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__AppGetOrCreateResponse *resp;
	int rc;

	if (d->app_id != NULL)
		return 0;
	req.app_name = pbstr(mc != NULL && mc->app != NULL ? mc->app :
	    MODAL_APP);
	req.environment_name = mc != NULL && mc->environment != NULL ?
	    mc->environment : d->creds.environment;
	req.has_object_creation_type = 1;
	req.object_creation_type = create ?
	    MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_CREATE_IF_MISSING :
	    MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_UNSPECIFIED;
	if ((rc = vg_grpc_unary(d->g, "AppGetOrCreate", &req.base,
	    &modal__client__app_get_or_create_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT, "getting the "
	    "app (AppGetOrCreate)", e)) != 0)
		return rc;
	d->app_id = vg_xstrdup(resp->app_id);
	modal__client__app_get_or_create_response__free_unpacked(resp, NULL);
	return d->app_id != NULL && *d->app_id ? 0 : vg_err_set(e, VG_EBACKEND,
	    "modal: AppGetOrCreate: reply has no app_id");
}

/* ------------------------------------------------------------------ */
/* Direct: create                                                      */
/* ------------------------------------------------------------------ */

/* Takes one ImageJoinStreamingResponse; see modal.h. */
int
vg_modal_join_msg(void *arg, const uint8_t *p, size_t n)
{
	struct vg_modal_join *j = arg;
	Modal__Client__ImageJoinStreamingResponse *r;

	if ((r = modal__client__image_join_streaming_response__unpack(NULL, n,
	    p)) == NULL)
		return VG_EPARSE;
	if (r->entry_id != NULL && *r->entry_id)
		snprintf(j->entry, sizeof(j->entry), "%s", r->entry_id);
	if (r->result != NULL && r->result->has_status && r->result->status) {
		j->status = (int)r->result->status;
		snprintf(j->exception, sizeof(j->exception), "%s",
		    r->result->exception != NULL ? r->result->exception : "");
	}
	modal__client__image_join_streaming_response__free_unpacked(r, NULL);
	return 0;
}

/* Waits for an image build with ImageJoinStreaming. */
static int
image_join(struct vg_cloud *c, const char *image_id, double deadline,
    struct vg_err *e)
{
	Modal__Client__ImageJoinStreamingRequest req =
	    MODAL__CLIENT__IMAGE_JOIN_STREAMING_REQUEST__INIT;
	struct vg_grpc_status st;
	struct vg_grpc_call *call;
	struct vg_modal_join j = { 0 };
	char msg[256];
	int rc = 0, fails = 0;

	req.image_id = pbstr(image_id);
	req.has_timeout = 1;
	req.timeout = MODAL_LOG_TIMEOUT;
	while (j.status == 0) {
		if (deadline > 0 && vg_mono() > deadline)
			return vg_err_set(e, VG_ETIMEOUT, "modal: timed out "
			    "while the image was built");
		req.last_entry_id = j.entry;
		call = vg_grpc_stream(chan(c), "ImageJoinStreaming", &req.base,
		    MODAL_LOG_TIMEOUT + 5, vg_modal_join_msg, &j);
		while (!vg_grpc_call_done(call, &st, msg, sizeof(msg)))
			if ((rc = vg_grpc_poll(chan(c), 0.2)) != 0)
				break;
		vg_grpc_call_free(call);
		if (rc != 0)
			return vg_err_set(e, rc, "modal: image build: "
			    "interrupted");
		if (st.code > 0 && !vg_grpc_transient(st.code))
			return vg_grpc_error(&st, "building the image "
			    "(ImageJoinStreaming)", e);
		if (st.code != 0 && ++fails > MODAL_LOG_FAILS)
			return vg_err_set(e, VG_EBACKEND, "modal: building the "
			    "image: stream keeps failing: %s", st.code < 0 ?
			    msg : st.message);
		if (st.code != 0)
			vg_cloud_sleep(c->stop, 0.2 * fails);
	}
	if (j.status != GS(SUCCESS))
		return vg_err_set(e, VG_EBACKEND, "modal: the image build "
		    "failed%s%s", j.exception[0] ? ": " : "", j.exception);
	return 0;
}

/* The image id Modal has for "FROM image" on connection c, in the app
 * (ImageGetOrCreate; a new image's build is joined until deadline, a
 * vg_mono time, 0 = none). */
static int
image_get(struct vg_cloud *c, const char *image, char **id, double deadline,
    struct vg_err *e)
{
	struct direct *d = c->priv;
	Modal__Client__ImageGetOrCreateRequest req =
	    MODAL__CLIENT__IMAGE_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__Image img = MODAL__CLIENT__IMAGE__INIT;
	Modal__Client__ImageGetOrCreateResponse *resp;
	char *from, *cmds[1];
	int rc, built;

	*id = NULL;
	if ((rc = direct_app(c, 1, e)) != 0)
		return rc;
	from = vg_xasprintf("FROM %s", image);
	cmds[0] = from;
	img.n_dockerfile_commands = 1;
	img.dockerfile_commands = cmds;
	req.image = &img;
	req.app_id = d->app_id;
	rc = vg_grpc_unary(d->g, "ImageGetOrCreate", &req.base,
	    &modal__client__image_get_or_create_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT, "getting the "
	    "image (ImageGetOrCreate)", e);
	free(from);
	if (rc != 0)
		return rc;
	*id = vg_xstrdup(resp->image_id);
	built = resp->result != NULL && resp->result->has_status &&
	    resp->result->status != 0;
	rc = 0;
	if (built && resp->result->status !=
	    GS(SUCCESS))
		rc = vg_err_set(e, VG_EBACKEND, "modal: the image build "
		    "failed%s%s", resp->result->exception ? ": " : "",
		    resp->result->exception ? resp->result->exception : "");
	modal__client__image_get_or_create_response__free_unpacked(resp, NULL);
	if (rc == 0 && (*id == NULL || **id == '\0'))
		rc = vg_err_set(e, VG_EBACKEND, "modal: ImageGetOrCreate: "
		    "reply has no image_id");
	if (rc == 0 && !built)
		rc = image_join(c, *id, deadline, e);
	return rc;
}

/* The image id of the attempt's image: modal.snapshot as an image id, or
 * ImageGetOrCreate from "FROM image". */
static int
direct_image(struct vg_cloud_task *t, char **id, double deadline,
    struct vg_err *e)
{
	const struct vg_cloud_conf *cc = t->c.conf;

	if (cc != NULL && cc->snapshot != NULL && *cc->snapshot) {
		*id = vg_xstrdup(cc->snapshot);
		return 0;
	}
	return image_get(&t->c, t->a->m->image, id, deadline, e);
}

/* The environment as an ephemeral secret (SecretGetOrCreate). */
static int
direct_secret(struct vg_cloud_task *t, char **id, struct vg_err *e)
{
	struct direct *d = t->c.priv;
	Modal__Client__SecretGetOrCreateRequest req =
	    MODAL__CLIENT__SECRET_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__SecretGetOrCreateResponse *resp;
	Modal__Client__SecretGetOrCreateRequest__EnvDictEntry *ents, **pents;
	struct vg_strv env = VG_STRV_INIT;
	char *eq;
	size_t i;
	int rc;

	vg_task_env(t->a, VG_ENV_IMAGE, &env);
	ents = vg_xcalloc(env.n + 1, sizeof(*ents));
	pents = vg_xcalloc(env.n + 1, sizeof(*pents));
	for (i = 0; i < env.n; i++) {
		modal__client__secret_get_or_create_request__env_dict_entry__init(
		    &ents[i]);
		eq = strchr(env.v[i], '=');
		*eq = '\0';
		ents[i].key = env.v[i];
		ents[i].value = eq + 1;
		pents[i] = &ents[i];
	}
	req.n_env_dict = env.n;
	req.env_dict = pents;
	req.has_object_creation_type = 1;
	req.object_creation_type =
	    MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_EPHEMERAL;
	req.environment_name = d->creds.environment;
	req.app_id = d->app_id;
	rc = vg_grpc_unary(d->g, "SecretGetOrCreate", &req.base,
	    &modal__client__secret_get_or_create_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT, "passing the "
	    "environment (SecretGetOrCreate)", e);
	for (i = 0; i < env.n; i++)
		memset(ents[i].value, 0, strlen(ents[i].value));
	free(ents);
	free(pents);
	vg_strv_release(&env);
	if (rc != 0)
		return rc;
	*id = vg_xstrdup(resp->secret_id);
	modal__client__secret_get_or_create_response__free_unpacked(resp, NULL);
	return *id != NULL && **id ? 0 : vg_err_set(e, VG_EBACKEND, "modal: "
	    "SecretGetOrCreate: reply has no secret_id");
}

/* True when the attempt runs as an exec in an idle sandbox, so that its
 * files can be read after it: only a task with outputs. */
static int
exec_mode(const struct vg_attempt *a)
{
	return a->m->outputs.paths.n > 0;
}

/* SandboxGetTaskId until the sandbox has a task: its id to t->session. */
static int
task_id_get(struct vg_cloud_task *t, double deadline, struct vg_err *e)
{
	Modal__Client__SandboxGetTaskIdRequest req =
	    MODAL__CLIENT__SANDBOX_GET_TASK_ID_REQUEST__INIT;
	Modal__Client__SandboxGetTaskIdResponse *resp;
	int rc, ended = 0;
	long code;

	req.sandbox_id = t->sandbox;
	req.has_timeout = 1;
	req.timeout = (float)MODAL_WAIT_TIMEOUT;
	req.has_wait_until_ready = 1;
	req.wait_until_ready = 1;
	for (;;) {
		if (deadline > 0 && vg_mono() >= deadline)
			return vg_err_set(e, VG_ETIMEOUT, "modal: timed out "
			    "before the sandbox started");
		if ((rc = vg_grpc_unary(chan(&t->c), "SandboxGetTaskId",
		    &req.base,
		    &modal__client__sandbox_get_task_id_response__descriptor,
		    (ProtobufCMessage **)&resp, MODAL_WAIT_TIMEOUT + 30,
		    "starting the sandbox (SandboxGetTaskId)", e)) != 0)
			return rc;
		if (resp->task_id != NULL && *resp->task_id) {
			t->session = vg_xstrdup(resp->task_id);
			rc = 0;
		} else if (resp->task_result != NULL) {
			rc = vg_modal_result(resp->task_result, &ended, &code,
			    e);
			if (rc == 0)
				rc = vg_err_set(e, VG_EBACKEND, "modal: the "
				    "sandbox ended before it ran the command "
				    "(exit %ld)", code);
		} else
			rc = 1;
		modal__client__sandbox_get_task_id_response__free_unpacked(
		    resp, NULL);
		if (rc != 1)
			return rc;
		vg_cloud_sleep(t->c.stop, 0.5);
		if (t->c.stop != NULL && *t->c.stop)
			return vg_err_set(e, VG_ECANCELED, "modal: canceled");
	}
}

/* Creates the sandbox: app, image, secret, SandboxCreate. */
static int
direct_create(struct vg_cloud_task *t, struct vg_err *e)
{
	const struct vg_attempt *a = t->a;
	Modal__Client__SandboxCreateRequest req =
	    MODAL__CLIENT__SANDBOX_CREATE_REQUEST__INIT;
	Modal__Client__Sandbox sb = MODAL__CLIENT__SANDBOX__INIT;
	Modal__Client__Resources res = MODAL__CLIENT__RESOURCES__INIT;
	Modal__Client__GPUConfig gpu = MODAL__CLIENT__GPUCONFIG__INIT;
	Modal__Client__SandboxTag tags[4], *ptags[4];
	Modal__Client__SandboxCreateResponse *resp;
	struct vg_strv argv = VG_STRV_INIT;
	char *image = NULL, *secret = NULL, owner[320], task[32];
	double deadline = a->timeout > 0 ? vg_mono() + a->timeout : 0;
	const char *kv[4][2];
	size_t i;
	int rc;

	if ((rc = direct_app(&t->c, 1, e)) != 0 ||
	    (rc = direct_image(t, &image, deadline, e)) != 0 ||
	    (rc = direct_secret(t, &secret, e)) != 0)
		goto out;
	if (exec_mode(a)) {
		vg_strv_push(&argv, "sleep");
		vg_strv_pushf(&argv, "%u", MODAL_MAX_SANDBOX_SECS);
	} else
		vg_attempt_argv(a, &argv);
	sb.n_entrypoint_args = argv.n;
	sb.entrypoint_args = argv.v;
	sb.image_id = image;
	sb.n_secret_ids = 1;
	sb.secret_ids = &secret;
	sb.has_timeout_secs = 1;
	sb.timeout_secs = a->timeout > 0 && a->timeout + 30 <
	    MODAL_MAX_SANDBOX_SECS ? (uint32_t)ceil(a->timeout) + 30 :
	    MODAL_MAX_SANDBOX_SECS;
	sb.workdir = a->m->workdir;
	if (a->res.cpus > 0) {
		res.has_milli_cpu = 1;
		res.milli_cpu = (uint32_t)a->res.cpus * 1000;
	}
	if (a->res.memory > 0) {
		res.has_memory_mb = 1;
		res.memory_mb = (uint32_t)((a->res.memory + (1 << 20) - 1) >>
		    20);
	}
	if (modal_gpu_type(a->m, &a->res) != NULL) {
		gpu.gpu_type = (char *)(uintptr_t)modal_gpu_type(a->m,
		    &a->res);
		gpu.has_count = 1;
		gpu.count = a->res.gpus > 0 ? (uint32_t)a->res.gpus : 1;
		res.gpu_config = &gpu;
	}
	sb.resources = &res;
	vg_backend_owner_label(owner, sizeof(owner));
	snprintf(task, sizeof(task), "%d", a->task != NULL ? a->task->index :
	    0);
	kv[0][0] = VG_CLOUD_LABEL, kv[0][1] = "1";
	kv[1][0] = VG_CLOUD_LABEL_RUN, kv[1][1] = a->run_id ? a->run_id : "";
	kv[2][0] = VG_CLOUD_LABEL_TASK, kv[2][1] = task;
	kv[3][0] = VG_CLOUD_LABEL_OWNER, kv[3][1] = owner;
	for (i = 0; i < 4; i++) {
		modal__client__sandbox_tag__init(&tags[i]);
		tags[i].tag_name = pbstr(kv[i][0]);
		tags[i].tag_value = pbstr(kv[i][1]);
		ptags[i] = &tags[i];
	}
	req.app_id = ((struct direct *)t->c.priv)->app_id;
	req.definition = &sb;
	req.n_tags = 4;
	req.tags = ptags;
	if ((rc = vg_grpc_unary(chan(&t->c), "SandboxCreate", &req.base,
	    &modal__client__sandbox_create_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CREATE_TIMEOUT, "creating "
	    "the sandbox (SandboxCreate)", e)) != 0)
		goto out;
	t->sandbox = vg_xstrdup(resp->sandbox_id);
	modal__client__sandbox_create_response__free_unpacked(resp, NULL);
	if (t->sandbox == NULL || *t->sandbox == '\0')
		rc = vg_err_set(e, VG_EBACKEND, "modal: SandboxCreate: reply "
		    "has no sandbox_id");
	if (rc == 0 && exec_mode(a)) {
		((struct direct *)t->c.priv)->secret_id = secret;
		secret = NULL;
		rc = task_id_get(t, deadline, e);
	}
out:
	vg_strv_release(&argv);
	free(image);
	free(secret);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Direct: output and exit                                             */
/* ------------------------------------------------------------------ */

/* One log stream of a sandbox (fd 1 or 2). */
struct logs {
	struct vg_cloud_task	*t;
	int			 fd;
	struct vg_grpc_call	*call;
	char			 entry[128];	/* last whole batch */
	unsigned long long	 batch;		/* exec: its last batch */
	int			 eof;
	int			 fails;
	int			 io;		/* writing the file failed */
	double			 retry_at;
};

/* Takes one TaskLogsBatch; see modal.h. */
int
vg_modal_logs_batch(const uint8_t *p, size_t n,
    int (*out)(void *, const char *, size_t), void *arg, char *entry,
    size_t esize, int *eof, size_t *items)
{
	Modal__Client__TaskLogsBatch *b;
	size_t i;
	int rc = 0;

	*items = 0;
	if ((b = modal__client__task_logs_batch__unpack(NULL, n, p)) == NULL)
		return VG_EPARSE;
	for (i = 0; i < b->n_items && rc == 0; i++)
		if (b->items[i]->has_data && b->items[i]->data.len > 0)
			rc = out(arg, (const char *)b->items[i]->data.data,
			    b->items[i]->data.len);
	if (rc == 0 && b->entry_id != NULL && *b->entry_id)
		snprintf(entry, esize, "%s", b->entry_id);
	*items = b->n_items;
	if (b->has_eof && b->eof)
		*eof = 1;
	modal__client__task_logs_batch__free_unpacked(b, NULL);
	return rc;
}

/* Takes one RuntimeOutputBatch; see modal.h. */
int
vg_modal_exec_batch(const uint8_t *p, size_t n,
    int (*out)(void *, const char *, size_t), void *arg,
    unsigned long long *batch, int *eof, size_t *items)
{
	Modal__Client__RuntimeOutputBatch *b;
	Modal__Client__RuntimeOutputMessage *m;
	size_t i;
	int rc = 0;

	*items = 0;
	if ((b = modal__client__runtime_output_batch__unpack(NULL, n, p)) ==
	    NULL)
		return VG_EPARSE;
	for (i = 0; i < b->n_items && rc == 0; i++) {
		m = b->items[i];
		if (m->has_message_bytes && m->message_bytes.len > 0)
			rc = out(arg, (const char *)m->message_bytes.data,
			    m->message_bytes.len);
		else if (m->message != NULL && *m->message)
			rc = out(arg, m->message, strlen(m->message));
	}
	if (rc == 0 && b->has_batch_index)
		*batch = b->batch_index;
	*items = b->n_items;
	if (b->has_exit_code)
		*eof = 1;
	modal__client__runtime_output_batch__free_unpacked(b, NULL);
	return rc;
}

/* Takes one FilesystemRuntimeOutputBatch; see modal.h. */
int
vg_modal_fs_batch(const uint8_t *p, size_t n,
    int (*out)(void *, const char *, size_t), void *arg, int *eof,
    char *err, size_t esize)
{
	Modal__Client__FilesystemRuntimeOutputBatch *b;
	size_t i;
	int rc = 0;

	if ((b = modal__client__filesystem_runtime_output_batch__unpack(NULL,
	    n, p)) == NULL)
		return VG_EPARSE;
	if (b->error != NULL) {
		snprintf(err, esize, "%s", b->error->error_message != NULL &&
		    *b->error->error_message ? b->error->error_message :
		    "error");
		rc = VG_EBACKEND;
	}
	for (i = 0; i < b->n_output && rc == 0; i++)
		if (b->output[i].len > 0)
			rc = out(arg, (const char *)b->output[i].data,
			    b->output[i].len);
	if (b->has_eof && b->eof)
		*eof = 1;
	modal__client__filesystem_runtime_output_batch__free_unpacked(b,
	    NULL);
	return rc;
}

/* Writes log bytes into the task's file; a failure is remembered. */
static int
logs_write(void *arg, const char *p, size_t n)
{
	struct logs *l = arg;
	int rc = vg_cloud_out_write(&l->t->out, l->fd, p, n);

	if (rc != 0)
		l->io = 1;
	return rc;
}

/* Deframed TaskLogsBatch: its items go to the file, then entry_id
 * moves, so a resumed stream neither loses nor repeats a batch. */
static int
logs_msg(void *arg, const uint8_t *p, size_t n)
{
	struct logs *l = arg;
	size_t items;
	int rc;

	if (l->t->cmd != NULL)
		rc = vg_modal_exec_batch(p, n, logs_write, l, &l->batch,
		    &l->eof, &items);
	else
		rc = vg_modal_logs_batch(p, n, logs_write, l, l->entry,
		    sizeof(l->entry), &l->eof, &items);
	if (items > 0)
		l->fails = 0;
	return rc;
}

/* Starts (again) the log stream of l from its last entry. */
static void
logs_start(struct logs *l)
{
	Modal__Client__SandboxGetLogsRequest req =
	    MODAL__CLIENT__SANDBOX_GET_LOGS_REQUEST__INIT;
	Modal__Client__ContainerExecGetOutputRequest xr =
	    MODAL__CLIENT__CONTAINER_EXEC_GET_OUTPUT_REQUEST__INIT;

	if (l->t->cmd != NULL) {
		xr.exec_id = l->t->cmd;
		xr.has_timeout = 1;
		xr.timeout = MODAL_LOG_TIMEOUT;
		xr.has_last_batch_index = 1;
		xr.last_batch_index = l->batch;
		xr.has_file_descriptor = 1;
		xr.file_descriptor = (Modal__Client__FileDescriptor)l->fd;
		xr.has_get_raw_bytes = 1;
		xr.get_raw_bytes = 1;
		l->call = vg_grpc_stream(chan(&l->t->c),
		    "ContainerExecGetOutput", &xr.base, MODAL_LOG_TIMEOUT + 5,
		    logs_msg, l);
		return;
	}
	req.sandbox_id = l->t->sandbox;
	req.has_file_descriptor = 1;
	req.file_descriptor = (Modal__Client__FileDescriptor)l->fd;
	req.has_timeout = 1;
	req.timeout = MODAL_LOG_TIMEOUT;
	req.last_entry_id = l->entry;
	l->call = vg_grpc_stream(chan(&l->t->c), "SandboxGetLogs", &req.base,
	    MODAL_LOG_TIMEOUT + 5, logs_msg, l);
}

/* After l's call ended: 0 to go on, or an error. */
static int
logs_ended(struct logs *l, struct vg_err *e)
{
	struct vg_grpc_status st;
	char msg[256];

	vg_grpc_call_done(l->call, &st, msg, sizeof(msg));
	vg_grpc_call_free(l->call);
	l->call = NULL;
	if (l->io)
		return vg_err_set(e, VG_ECANCELED, "modal: writing the task's "
		    "output failed");
	if (st.code == 0 || l->eof)
		return 0;	/* its timeout, or eof: reconnect or done */
	if (st.code > 0 && !vg_grpc_transient(st.code))
		return vg_grpc_error(&st, "reading the output "
		    "(SandboxGetLogs)", e);
	if (++l->fails > MODAL_LOG_FAILS)
		return vg_err_set(e, VG_EBACKEND, "modal: reading the output: "
		    "the stream failed %d times in a row: %s", l->fails - 1,
		    st.code < 0 ? msg : st.message);
	l->retry_at = vg_mono() + vg_cloud_backoff(l->fails, 0, 0.5) * 0.4;
	return 0;
}

/* The timeout of one wait call: MODAL_WAIT_TIMEOUT, or less before the
 * deadline (0 = none). */
static float
wait_slice(double deadline)
{
	return deadline > 0 && deadline - vg_mono() < MODAL_WAIT_TIMEOUT ?
	    (float)(deadline - vg_mono()) : (float)MODAL_WAIT_TIMEOUT;
}

/* ContainerExecWait until t's exec completed: its exit code. */
static int
exec_exit(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	Modal__Client__ContainerExecWaitRequest req =
	    MODAL__CLIENT__CONTAINER_EXEC_WAIT_REQUEST__INIT;
	Modal__Client__ContainerExecWaitResponse *resp;
	int rc, done = 0;

	req.exec_id = t->cmd;
	req.has_timeout = 1;
	while (!done) {
		if (deadline > 0 && vg_mono() >= deadline)
			return VG_ETIMEOUT;
		req.timeout = wait_slice(deadline);
		if ((rc = vg_grpc_unary(chan(&t->c), "ContainerExecWait",
		    &req.base,
		    &modal__client__container_exec_wait_response__descriptor,
		    (ProtobufCMessage **)&resp, MODAL_WAIT_TIMEOUT + 30,
		    "waiting for the command (ContainerExecWait)", e)) != 0)
			return rc;
		done = resp->has_completed && resp->completed;
		/* No code: ended by a signal (Modal gives none). */
		*code = resp->has_exit_code ? resp->exit_code : 137;
		modal__client__container_exec_wait_response__free_unpacked(
		    resp, NULL);
	}
	return 0;
}

/* SandboxWait until the sandbox has a result. */
static int
direct_exit(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	Modal__Client__SandboxWaitRequest req =
	    MODAL__CLIENT__SANDBOX_WAIT_REQUEST__INIT;
	Modal__Client__SandboxWaitResponse *resp;
	int rc, ended = 0;

	req.sandbox_id = t->sandbox;
	req.has_timeout = 1;
	while (!ended) {
		if (deadline > 0 && vg_mono() >= deadline)
			return VG_ETIMEOUT;
		req.timeout = wait_slice(deadline);
		if ((rc = vg_grpc_unary(chan(&t->c), "SandboxWait", &req.base,
		    &modal__client__sandbox_wait_response__descriptor,
		    (ProtobufCMessage **)&resp, MODAL_WAIT_TIMEOUT + 30,
		    "waiting for the sandbox (SandboxWait)", e)) != 0)
			return rc;
		rc = vg_modal_result(resp->result, &ended, code, e);
		modal__client__sandbox_wait_response__free_unpacked(resp, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Streams both logs to their end, then the exit code. */
static int
direct_wait(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	struct logs l[2] = {
		{ .t = t, .fd = 1 }, { .t = t, .fd = 2 },
	};
	int i, rc = 0;

	while (rc == 0 && !(l[0].eof && l[1].eof)) {
		for (i = 0; i < 2; i++)
			if (!l[i].eof && l[i].call == NULL &&
			    vg_mono() >= l[i].retry_at)
				logs_start(&l[i]);
		if ((rc = vg_grpc_poll(chan(&t->c), 0.2)) != 0)
			break;
		for (i = 0; i < 2 && rc == 0; i++) {
			struct vg_grpc_status st;
			char m[8];

			if (l[i].call != NULL && vg_grpc_call_done(l[i].call,
			    &st, m, sizeof(m)))
				rc = logs_ended(&l[i], e);
		}
		if (rc == 0 && deadline > 0 && vg_mono() >= deadline)
			rc = VG_ETIMEOUT;
	}
	for (i = 0; i < 2; i++)
		vg_grpc_call_free(l[i].call);
	if (rc == VG_ECANCELED && !l[0].io && !l[1].io)
		return rc;	/* the stop flag */
	if (rc != 0)
		return rc;
	return t->cmd != NULL ? exec_exit(t, deadline, code, e) :
	    direct_exit(t, deadline, code, e);
}

/* SandboxTerminate. */
static int
direct_terminate(struct vg_cloud *c, const char *id, struct vg_err *e)
{
	Modal__Client__SandboxTerminateRequest req =
	    MODAL__CLIENT__SANDBOX_TERMINATE_REQUEST__INIT;
	ProtobufCMessage *resp;
	int rc;

	req.sandbox_id = pbstr(id);
	/* Stopping must not be stopped by the stop request. */
	vg_grpc_set_stop(chan(c), NULL);
	rc = vg_grpc_unary(chan(c), "SandboxTerminate", &req.base,
	    &modal__client__sandbox_terminate_response__descriptor, &resp,
	    VG_CLOUD_CALL_TIMEOUT, "terminating the sandbox "
	    "(SandboxTerminate)", e);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return rc;
}

/* Exec mode: starts the command in the idle sandbox with ContainerExec
 * (its exec id to t->cmd); else the entrypoint is the command. */
static int
direct_exec(struct vg_cloud_task *t, struct vg_err *e)
{
	Modal__Client__ContainerExecRequest req =
	    MODAL__CLIENT__CONTAINER_EXEC_REQUEST__INIT;
	Modal__Client__ContainerExecResponse *resp;
	struct vg_strv argv = VG_STRV_INIT;
	char *secret = ((struct direct *)t->c.priv)->secret_id;
	int rc;

	if (t->session == NULL)
		return 0;
	vg_attempt_argv(t->a, &argv);
	req.task_id = t->session;
	req.n_command = argv.n;
	req.command = argv.v;
	req.has_stdout_output = req.has_stderr_output = 1;
	req.stdout_output = req.stderr_output =
	    MODAL__CLIENT__EXEC_OUTPUT_OPTION__EXEC_OUTPUT_OPTION_PIPE;
	if (t->a->timeout > 0) {
		req.has_timeout_secs = 1;
		req.timeout_secs = t->a->timeout < MODAL_MAX_SANDBOX_SECS ?
		    (uint32_t)ceil(t->a->timeout) : MODAL_MAX_SANDBOX_SECS;
	}
	req.workdir = t->a->m->workdir;
	if (secret != NULL) {
		req.n_secret_ids = 1;
		req.secret_ids = &secret;
	}
	rc = vg_grpc_unary(chan(&t->c), "ContainerExec", &req.base,
	    &modal__client__container_exec_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT, "starting the "
	    "command (ContainerExec)", e);
	vg_strv_release(&argv);
	if (rc != 0)
		return rc;
	if (resp->exec_id != NULL && *resp->exec_id)
		t->cmd = vg_xstrdup(resp->exec_id);
	modal__client__container_exec_response__free_unpacked(resp, NULL);
	return t->cmd != NULL ? 0 : vg_err_set(e, VG_EBACKEND, "modal: "
	    "ContainerExec: reply has no exec_id");
}

/* Where the output of a file operation goes. */
struct fs_sink {
	int			fd;	/* -1: nowhere */
	unsigned long long	n, max;
};

/* Takes file bytes: into the file, up to its limit. */
static int
fs_sink_write(void *arg, const char *p, size_t n)
{
	struct fs_sink *f = arg;

	if (f->fd < 0)
		return 0;
	if (f->n + n > f->max)
		return VG_ELIMIT;
	f->n += n;
	return vg_write_all(f->fd, p, n) != 0 ? VG_EIO : 0;
}

/* One ContainerFilesystemExecGetOutput message. */
struct fs_out {
	struct fs_sink	*sink;
	int		 eof;
	int		 rc;
	char		 err[256];
};

/* Deframed FilesystemRuntimeOutputBatch into o's sink. */
static int
fs_msg(void *arg, const uint8_t *p, size_t n)
{
	struct fs_out *o = arg;
	int rc = vg_modal_fs_batch(p, n, fs_sink_write, o->sink, &o->eof,
	    o->err, sizeof(o->err));

	if (rc != 0 && o->rc == 0)
		o->rc = rc;
	return rc;
}

/* One file operation: ContainerFilesystemExec, then its output streamed
 * into sink to its eof; *fdesc gets the file descriptor an open made. */
static int
fs_exec(struct vg_cloud_task *t, Modal__Client__ContainerFilesystemExecRequest
    *req, const char *path, char **fdesc, struct fs_sink *sink,
    struct vg_err *e)
{
	Modal__Client__ContainerFilesystemExecGetOutputRequest or =
	    MODAL__CLIENT__CONTAINER_FILESYSTEM_EXEC_GET_OUTPUT_REQUEST__INIT;
	Modal__Client__ContainerFilesystemExecResponse *resp;
	struct fs_out o = { .sink = sink };
	struct vg_grpc_status st;
	struct vg_grpc_call *call;
	char msg[256];
	int rc = 0;

	req->task_id = t->session;
	if ((rc = vg_grpc_unary(chan(&t->c), "ContainerFilesystemExec",
	    &req->base,
	    &modal__client__container_filesystem_exec_response__descriptor,
	    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT, "reading an "
	    "output file (ContainerFilesystemExec)", e)) != 0)
		return rc;
	if (fdesc != NULL && resp->file_descriptor != NULL &&
	    *resp->file_descriptor)
		*fdesc = vg_xstrdup(resp->file_descriptor);
	or.exec_id = resp->exec_id != NULL ? vg_xstrdup(resp->exec_id) : NULL;
	modal__client__container_filesystem_exec_response__free_unpacked(resp,
	    NULL);
	if (or.exec_id == NULL || *or.exec_id == '\0' ||
	    (fdesc != NULL && *fdesc == NULL)) {
		free(or.exec_id);
		return vg_err_set(e, VG_EBACKEND, "modal: "
		    "ContainerFilesystemExec: reply has no %s", fdesc != NULL &&
		    *fdesc == NULL ? "file_descriptor" : "exec_id");
	}
	or.has_timeout = 1;
	or.timeout = MODAL_LOG_TIMEOUT;
	while (rc == 0 && !o.eof && o.rc == 0) {
		call = vg_grpc_stream(chan(&t->c),
		    "ContainerFilesystemExecGetOutput", &or.base,
		    MODAL_LOG_TIMEOUT + 5, fs_msg, &o);
		while (!vg_grpc_call_done(call, &st, msg, sizeof(msg)))
			if ((rc = vg_grpc_poll(chan(&t->c), 0.2)) != 0)
				break;
		vg_grpc_call_free(call);
		if (rc != 0)
			rc = vg_err_set(e, rc, "modal: reading '%s': "
			    "interrupted", path);
		else if (o.rc == 0 && st.code != 0)
			rc = st.code > 0 ? vg_grpc_error(&st, "reading an "
			    "output file (ContainerFilesystemExecGetOutput)",
			    e) : vg_err_set(e, VG_EBACKEND, "modal: reading "
			    "'%s': %s", path, msg);
	}
	free(or.exec_id);
	if (rc == 0 && o.rc == VG_ELIMIT)
		return VG_ELIMIT;
	if (rc == 0 && o.rc != 0)
		rc = o.rc == VG_EBACKEND ? vg_err_set(e, VG_EBACKEND, "modal: "
		    "'%s': %s", path, o.err) : vg_err_set(e, o.rc, "modal: "
		    "reading '%s' failed", path);
	return rc;
}

/* Outputs: reads the sandbox's file path into fd through Modal's file
 * API (open "rb", reads until one gives nothing, close). */
static int
direct_get_file(struct vg_cloud_task *t, const char *path, int fd,
    unsigned long long max, struct vg_err *e)
{
	Modal__Client__ContainerFilesystemExecRequest req =
	    MODAL__CLIENT__CONTAINER_FILESYSTEM_EXEC_REQUEST__INIT;
	Modal__Client__ContainerFileOpenRequest op =
	    MODAL__CLIENT__CONTAINER_FILE_OPEN_REQUEST__INIT;
	Modal__Client__ContainerFileReadRequest rd =
	    MODAL__CLIENT__CONTAINER_FILE_READ_REQUEST__INIT;
	Modal__Client__ContainerFileCloseRequest cl =
	    MODAL__CLIENT__CONTAINER_FILE_CLOSE_REQUEST__INIT;
	struct fs_sink none = { .fd = -1 }, f = { .fd = fd, .max = max };
	struct vg_err ce;
	char *fdesc = NULL;
	unsigned long long before;
	int rc;

	if (t->session == NULL)
		return vg_err_set(e, VG_EUNSUPPORTED, "modal: the sandbox has "
		    "no task to read files from");
	op.path = (char *)(uintptr_t)path;
	op.mode = (char *)(uintptr_t)"rb";
	req.file_exec_request_oneof_case = FS_OP(OPEN);
	req.file_open_request = &op;
	if ((rc = fs_exec(t, &req, path, &fdesc, &none, e)) != 0)
		return rc;
	rd.file_descriptor = fdesc;
	rd.has_n = 1;
	req.file_exec_request_oneof_case = FS_OP(READ);
	req.file_read_request = &rd;
	do {
		before = f.n;
		/* One byte past the limit tells a file that is too big. */
		rd.n = max - f.n < MODAL_READ_CHUNK ? (uint32_t)(max - f.n) + 1 :
		    MODAL_READ_CHUNK;
		rc = fs_exec(t, &req, path, NULL, &f, e);
	} while (rc == 0 && f.n > before);
	cl.file_descriptor = fdesc;
	req.file_exec_request_oneof_case = FS_OP(CLOSE);
	req.file_close_request = &cl;
	vg_err_init(&ce);
	if (rc == 0)
		rc = fs_exec(t, &req, path, NULL, &none, e);
	else
		(void)fs_exec(t, &req, path, NULL, &none, &ce);
	free(fdesc);
	return rc;
}

/* Timeout or cancel: the sandbox is terminated (its processes killed). */
static void
direct_kill(struct vg_cloud_task *t, double grace, int *sig)
{
	struct vg_err e;

	(void)grace;
	vg_err_init(&e);
	*sig = SIGKILL;
	(void)direct_terminate(&t->c, t->sandbox, &e);
}

/* A listed sandbox's tags; see modal.h. */
void
vg_modal_sandbox_tags(const Modal__Client__SandboxInfo *s,
    const char *want[3])
{
	size_t j;

	want[0] = want[1] = want[2] = NULL;
	for (j = 0; j < s->n_tags; j++) {
		const char *k = s->tags[j]->tag_name, *v =
		    s->tags[j]->tag_value;

		if (k == NULL || v == NULL)
			continue;
		if (strcmp(k, VG_CLOUD_LABEL_RUN) == 0)
			want[0] = v;
		else if (strcmp(k, VG_CLOUD_LABEL_TASK) == 0)
			want[1] = v;
		else if (strcmp(k, VG_CLOUD_LABEL_OWNER) == 0)
			want[2] = v;
	}
}

/* Reap: SandboxList of the app by tag, terminating those to go. */
static int
direct_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	Modal__Client__SandboxListRequest req =
	    MODAL__CLIENT__SANDBOX_LIST_REQUEST__INIT;
	Modal__Client__SandboxListResponse *resp = NULL;
	Modal__Client__SandboxTag tag = MODAL__CLIENT__SANDBOX_TAG__INIT, *pt;
	const struct vg_modal_conf *mc;
	struct vg_modal_direct probe;
	struct vg_cloud c;
	struct vg_err le;
	const char *want[3];
	size_t i;
	int rc, page;

	/* Without credentials vigil cannot have made a sandbox here. */
	vg_err_init(&le);
	if (vg_modal_direct_find(&probe, &le) != 0)
		return 0;
	vg_modal_direct_release(&probe);
	mc = conf_of(m);
	if ((rc = direct_open(&c, &modal_direct_ops, mc != NULL ?
	    &mc->cloud : NULL, NULL, e)) != 0)
		goto out;
	if ((rc = direct_app(&c, 0, e)) != 0) {
		if (rc == VG_ENOENT)
			rc = 0;	/* no app, no sandbox */
		goto out;
	}
	tag.tag_name = pbstr(VG_CLOUD_LABEL);
	tag.tag_value = pbstr("1");
	pt = &tag;
	req.app_id = ((struct direct *)c.priv)->app_id;
	req.n_tags = 1;
	req.tags = &pt;
	for (page = 0; page < 100; page++) {
		if ((rc = vg_grpc_unary(chan(&c), "SandboxList", &req.base,
		    &modal__client__sandbox_list_response__descriptor,
		    (ProtobufCMessage **)&resp, VG_CLOUD_CALL_TIMEOUT,
		    "listing sandboxes (SandboxList)", e)) != 0)
			break;
		for (i = 0; i < resp->n_sandboxes; i++) {
			Modal__Client__SandboxInfo *s = resp->sandboxes[i];

			vg_modal_sandbox_tags(s, want);
			if (s->id == NULL || (run_id != NULL ? want[0] == NULL
			    || strcmp(want[0], run_id) != 0 :
			    !vg_backend_owner_dead(want[2])))
				continue;
			if (run_id != NULL && task >= 0 && (want[1] == NULL ||
			    atoi(want[1]) != task))
				continue;
			if ((rc = direct_terminate(&c, s->id, e)) != 0)
				break;
			if (report != NULL)
				vg_buf_printf(report, "modal: removed sandbox "
				    "%s (run %s, task %s)\n", s->id, want[0] ?
				    want[0] : "?", want[1] ? want[1] : "?");
		}
		if (rc != 0 || resp->n_sandboxes == 0 ||
		    !resp->sandboxes[resp->n_sandboxes - 1]->has_created_at)
			break;
		req.has_before_timestamp = 1;
		req.before_timestamp =
		    resp->sandboxes[resp->n_sandboxes - 1]->created_at;
		modal__client__sandbox_list_response__free_unpacked(resp, NULL);
		resp = NULL;
	}
out:
	if (resp != NULL)
		modal__client__sandbox_list_response__free_unpacked(resp, NULL);
	vg_cloud_close(&c);
	return rc;
}

static const struct vg_cloud_ops modal_direct_ops = {
	.name = "modal",
	.section = &vg_modal_msection,
	.needs_image = 1,
	.gpus = VG_CLOUD_GPU_TYPE,
	.open = direct_open,
	.close_priv = direct_free,
	.create = direct_create,
	.wait = direct_wait,
	.kill = direct_kill,
	.destroy = direct_terminate,
	.ping = direct_ping,
	.exec = direct_exec,
	.get_file = direct_get_file,
};

/* ------------------------------------------------------------------ */
/* Managed: the gateway's REST protocol                                */
/* ------------------------------------------------------------------ */

/* Opens the gateway connection: URL and token variable from config. */
static int
managed_open(struct vg_cloud *c, const struct vg_cloud_ops *ops,
    const struct vg_cloud_conf *conf, const volatile sig_atomic_t *stop,
    struct vg_err *e)
{
	struct vg_modal_gateway g;

	vg_modal_gateway_find((const struct vg_modal_conf *)conf, &g);
	if (g.url == NULL) {
		memset(c, 0, sizeof(*c));
		return vg_err_set(e, VG_EINVAL, "modal: mode managed: no "
		    "gateway URL (modal.gateway_url in a vigil config file, or "
		    "MODAL_GATEWAY_URL)");
	}
	return vg_cloud_open_at(c, ops, conf, g.url, g.token_env, stop, e);
}

/* The readiness check: GET /v1/health with the token. */
static int
managed_ping(struct vg_cloud *c, struct vg_err *e)
{
	return vg_cloud_call(c, "GET", "/v1/health", NULL, NULL,
	    "checking the gateway (GET /v1/health)", e);
}

/* POST /v1/sandboxes with an idempotency key and the task as logical
 * key. */
static int
managed_create(struct vg_cloud_task *t, struct vg_err *e)
{
	const struct vg_attempt *a = t->a;
	struct vg_json_writer w;
	struct vg_buf body = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	struct vg_cloud once;
	char key[160], hdr[200];
	double tmo = a->timeout > 0 ? a->timeout : 3600;
	int rc;

	snprintf(key, sizeof(key), "%s-%d-%d", a->run_id ? a->run_id : "",
	    a->task != NULL ? a->task->index : 0, a->attempt);
	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "image");
	vg_json_str(&w, a->m->image);
	vg_json_key(&w, "cwd");
	vg_json_str(&w, a->m->workdir != NULL ? a->m->workdir : "/root");
	vg_json_key(&w, "cpu");
	vg_json_num(&w, a->res.cpus > 0 ? a->res.cpus : 1);
	vg_json_key(&w, "memoryMiB");
	vg_json_int(&w, a->res.memory > 0 ? (long long)(a->res.memory >> 20) :
	    5120);
	vg_json_key(&w, "timeoutMs");
	vg_json_int(&w, (long long)(tmo * 1000) + 60000);
	vg_json_key(&w, "idleTimeoutMs");
	vg_json_int(&w, tmo * 1000 > 300000 ? (long long)(tmo * 1000) :
	    300000);
	vg_json_key(&w, "persistentFilesystem");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "logicalKey");
	vg_json_str(&w, key);
	vg_json_obj_end(&w);
	if ((rc = vg_cloud_open_like(&once, &t->c, t->c.endpoint, e)) == 0) {
		snprintf(hdr, sizeof(hdr), "x-idempotency-key: %s", key);
		vg_http_add_header(once.h, hdr);
		rc = vg_cloud_call(&once, "POST", "/v1/sandboxes", &body, NULL,
		    "creating the sandbox", e);
		if (rc == 0)
			rc = vg_cloud_json(&once, &doc, "creating the sandbox",
			    e);
	}
	vg_buf_release(&body);
	if (rc == 0 && vg_json_get_str(vg_json_root(doc), "id", NULL) == NULL)
		rc = vg_err_set(e, VG_EBACKEND, "modal: creating the sandbox: "
		    "reply has no \"id\"");
	if (rc == 0)
		t->sandbox = vg_xstrdup(vg_json_get_str(vg_json_root(doc), "id",
		    ""));
	vg_json_free(doc);
	vg_cloud_close(&once);
	return rc;
}

/* POST .../execs: /bin/sh reading the attempt's script from stdin, so
 * neither the environment nor the command is on a command line. */
static int
managed_exec(struct vg_cloud_task *t, struct vg_err *e)
{
	struct vg_json_writer w;
	struct vg_buf body = VG_BUF_INIT, script = VG_BUF_INIT;
	char *path, id[64];
	int rc;

	snprintf(id, sizeof(id), "vigil-%d-%d", t->a->task != NULL ?
	    t->a->task->index : 0, t->a->attempt);
	t->cmd = vg_xstrdup(id);
	vg_cloud_script(t->a, t->a->m->workdir, &script);
	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "execId");
	vg_json_str(&w, id);
	vg_json_key(&w, "command");
	vg_json_str(&w, "/bin/sh");
	vg_json_key(&w, "cwd");
	vg_json_str(&w, t->a->m->workdir != NULL ? t->a->m->workdir : "/root");
	vg_json_key(&w, "timeoutMs");
	vg_json_int(&w, t->a->timeout > 0 ? (long long)(t->a->timeout * 1000) :
	    86400000LL);
	vg_json_key(&w, "stdinData");
	vg_json_strn(&w, script.data, script.len);
	vg_json_obj_end(&w);
	path = vg_xasprintf("/v1/sandboxes/%s/execs", t->sandbox);
	rc = vg_cloud_call(&t->c, "POST", path, &body, NULL, "starting the "
	    "command", e);
	free(path);
	if (script.data != NULL)
		memset(script.data, 0, script.len);
	vg_buf_release(&script);
	vg_buf_release(&body);
	return rc;
}

/* Polls the exec until it reports completion with output and code. */
static int
managed_wait(struct vg_cloud_task *t, double deadline, long *code,
    struct vg_err *e)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *out;
	const char *st;
	char *path = vg_xasprintf("/v1/sandboxes/%s/execs/%s", t->sandbox,
	    t->cmd);
	int rc;

	for (;;) {
		doc = NULL;
		if ((rc = vg_cloud_call(&t->c, "GET", path, NULL, NULL,
		    "polling the command", e)) != 0 ||
		    (rc = vg_cloud_json(&t->c, &doc, "polling the command",
		    e)) != 0)
			break;
		root = vg_json_root(doc);
		st = vg_json_get_str(root, "status", "");
		if (strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0 ||
		    strcmp(st, "cancelled") == 0 || strcmp(st, "timeout") == 0) {
			out = vg_json_get(root, "output");
			if (out != NULL && out->type == VG_JSON_STRING &&
			    vg_cloud_out_write(&t->out, 1, out->str,
			    out->len) != 0)
				rc = vg_err_set(e, VG_ECANCELED, "modal: "
				    "writing the output failed");
			*code = (long)vg_json_get_num(root, "returncode", 1);
			break;
		}
		vg_json_free(doc);
		doc = NULL;
		if (deadline > 0 && vg_mono() >= deadline) {
			rc = VG_ETIMEOUT;
			break;
		}
		if ((rc = vg_cloud_sleep(t->c.stop, GATEWAY_POLL)) != 0)
			break;
	}
	vg_json_free(doc);
	free(path);
	return rc;
}

/* POST .../execs/{id}/cancel. */
static void
managed_kill(struct vg_cloud_task *t, double grace, int *sig)
{
	struct vg_err e;
	char *path = vg_xasprintf("/v1/sandboxes/%s/execs/%s/cancel",
	    t->sandbox, t->cmd != NULL ? t->cmd : "");

	(void)grace;
	vg_err_init(&e);
	*sig = SIGKILL;
	(void)vg_cloud_call(&t->c, "POST", path, NULL, NULL, "cancelling the "
	    "command", &e);
	free(path);
}

/* POST .../terminate without a snapshot. */
static int
managed_destroy(struct vg_cloud *c, const char *id, struct vg_err *e)
{
	struct vg_buf body = VG_BUF_INIT;
	char *path = vg_xasprintf("/v1/sandboxes/%s/terminate", id);
	int rc;

	vg_buf_adds(&body, "{\"snapshotBeforeTerminate\":false}");
	rc = vg_cloud_call(c, "POST", path, &body, NULL, "terminating the "
	    "sandbox", e);
	vg_buf_release(&body);
	free(path);
	return rc;
}

static const struct vg_cloud_ops modal_managed_ops = {
	.name = "modal",
	.section = &vg_modal_msection,
	.needs_image = 1,
	.gpus = VG_CLOUD_GPU_TYPE,
	.open = managed_open,
	.create = managed_create,
	.exec = managed_exec,
	.wait = managed_wait,
	.kill = managed_kill,
	.destroy = managed_destroy,
	.ping = managed_ping,
	.no_stream = 1,
};

/* ------------------------------------------------------------------ */
/* The backend                                                         */
/* ------------------------------------------------------------------ */

/* The operations of a mode. */
static const struct vg_cloud_ops *
mode_ops(int mode)
{
	return mode == VG_MODAL_MANAGED ? &modal_managed_ops :
	    &modal_direct_ops;
}

/* Resolves the mode with the network: prepare's and doctor's check.  In
 * auto, a gateway that is not ready gives direct when it can (fails
 * closed: never managed on a failed check).  *why gets the readiness
 * failure of auto's fallback. */
static int
modal_resolve_net(const struct vg_modal_conf *mc, int *mode, char *why,
    size_t wsize, struct vg_err *e)
{
	const struct vg_cloud_conf *cc = mc != NULL ? &mc->cloud : NULL;
	struct vg_modal_res r;
	struct vg_cloud c;
	struct vg_err le;
	int rc;

	why[0] = '\0';
	if ((rc = vg_modal_resolve(mc, &r, e)) != 0)
		return rc;
	*mode = r.mode;
	vg_err_init(&le);
	if ((rc = vg_cloud_open(&c, mode_ops(r.mode), cc, NULL, &le)) == 0)
		rc = mode_ops(r.mode)->ping(&c, &le);
	vg_cloud_close(&c);
	if (rc != 0 && r.mode == VG_MODAL_MANAGED &&
	    (mc == NULL || mc->mode == VG_MODAL_AUTO) && r.have_direct) {
		snprintf(why, wsize, "%s", le.msg);
		*mode = VG_MODAL_DIRECT;
		vg_err_init(&le);
		if ((rc = vg_cloud_open(&c, &modal_direct_ops, cc, NULL,
		    &le)) == 0)
			rc = direct_ping(&c, &le);
		vg_cloud_close(&c);
	}
	vg_modal_res_release(&r);
	if (rc != 0)
		return vg_err_set(e, rc, "%s%s%s", le.msg, why[0] ?
		    " (after the gateway was not ready: " : "", why[0] ?
		    why : "");
	return 0;
}

/* Once per drive: the mode, the gateway's readiness or the token's
 * acceptance.  A failure ends every task with this one reason. */
static int
modal_prepare(const struct vg_manifest *m, const char *run_dir,
    struct vg_backend_drive **out, struct vg_err *e)
{
	struct modal_drive *md;
	char why[VG_ERR_MSG_MAX];
	int mode, rc;

	(void)run_dir;
	if ((rc = modal_resolve_net(conf_of(m), &mode, why, sizeof(why),
	    e)) != 0)
		return rc;
	if (why[0])
		vg_warn("modal: auto mode uses direct: the gateway is not "
		    "ready: %s", why);
	md = vg_xcalloc(1, sizeof(*md));
	md->base.ops = &vg_backend_modal;
	md->mode = mode;
	*out = &md->base;
	return 0;
}

/*
 * backend op: image_id, for reuse keys: the image as written and the id
 * Modal gives it now (direct mode: ImageGetOrCreate of "FROM image" in
 * the app, as the run's first task would; a new push of the tag is a new
 * build, so a new id), or modal.snapshot, which is an id already.  The
 * gateway (managed mode) names no image id: the image as written.
 */
static int
modal_image_id(const struct vg_manifest *m, struct vg_buf *out,
    struct vg_err *e)
{
	const struct vg_modal_conf *mc = conf_of(m);
	const struct vg_cloud_conf *cc = mc != NULL ? &mc->cloud : NULL;
	struct vg_modal_res r;
	struct vg_cloud c;
	char *id = NULL;
	int rc, mode;

	vg_buf_adds(out, m->image != NULL ? m->image : "-");
	if (cc != NULL && cc->snapshot != NULL && *cc->snapshot) {
		vg_buf_printf(out, " snapshot %s", cc->snapshot);
		return 0;
	}
	if (m->image == NULL)
		return 0;
	if ((rc = vg_modal_resolve(mc, &r, e)) != 0)
		return rc;
	mode = r.mode;
	vg_modal_res_release(&r);
	if (mode == VG_MODAL_MANAGED) {
		vg_buf_adds(out, " (managed: the gateway names no image id)");
		return 0;
	}
	if ((rc = vg_cloud_open(&c, &modal_direct_ops, cc, NULL, e)) == 0 &&
	    (rc = image_get(&c, m->image, &id, 0, e)) == 0)
		vg_buf_printf(out, " %s", id);
	free(id);
	vg_cloud_close(&c);
	return rc;
}

/* backend op: unprepare */
static void
modal_unprepare(struct vg_backend_drive *d)
{
	free(d);
}

/* One attempt in the mode its drive's prepare chose (else by
 * presence). */
static int
modal_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	const struct modal_drive *md = a->drive != NULL &&
	    a->drive->ops == &vg_backend_modal ?
	    (const struct modal_drive *)a->drive : NULL;
	struct vg_modal_res res;
	int mode = md != NULL ? md->mode : -1;

	if (mode < 0) {
		if (vg_modal_resolve(conf_of(a->m), &res, e) != 0) {
			memset(r, 0, sizeof(*r));
			r->started = r->ended = vg_now();
			return vg_result_fail(r, e);
		}
		mode = res.mode;
		vg_modal_res_release(&res);
	}
	return vg_cloud_run(mode_ops(mode), a, r, e);
}

/* Leftovers: the direct API can list them; the gateway cannot. */
static int
modal_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	return direct_reap(m, run_id, task, report, e);
}

/* After vigil and the monitor died: a sandbox's exec stream cannot be
 * picked up by another client, so the sandbox of the attempt is
 * terminated (direct API; the gateway cannot list sandboxes, whose own
 * timeout then ends them) and the task runs again. */
static int
modal_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct vg_buf said = VG_BUF_INIT;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = direct_reap(a->m, a->run_id, a->task != NULL ? a->task->index :
	    0, &said, e);
	vg_buf_release(&said);
	if (rc != 0)
		return rc;
	return vg_err_set(e, VG_ENOENT, "modal: an exec stream cannot be "
	    "followed by a new monitor; the attempt's sandbox was "
	    "terminated");
}

/* `vigil doctor`: the resolved mode, where its credentials come from and
 * whether the service takes them; never their values. */
static void
modal_probe(struct vg_buf *out)
{
	static const char *const names[] = { "auto", "direct", "managed" };
	struct vg_modal_res r;
	struct vg_err e;
	char why[VG_ERR_MSG_MAX], from[700];
	int mode;

	vg_err_init(&e);
	if (vg_modal_resolve(NULL, &r, &e) != 0) {
		vg_buf_printf(out, "modal: missing (%s)\n", e.msg);
		return;
	}
	vg_err_init(&e);
	if (modal_resolve_net(NULL, &mode, why, sizeof(why), &e) != 0) {
		vg_buf_printf(out, "modal: missing (mode auto -> %s: %s)\n",
		    names[r.mode], e.msg);
		vg_modal_res_release(&r);
		return;
	}
	if (mode == VG_MODAL_MANAGED)
		snprintf(from, sizeof(from), "gateway %s from %s, token from "
		    "%s", r.gw.url, r.gw.url_from, r.gw.token_env);
	else
		snprintf(from, sizeof(from), "server %s, credentials from %s",
		    r.direct.server_url, r.direct.where);
	vg_buf_printf(out, "modal: ok (mode auto -> %s, %s%s%s)\n", names[mode],
	    from, why[0] ? "; gateway not ready: " : "", why);
	vg_modal_res_release(&r);
}

/* Checks the section beyond its schema (credentials: host_check). */
static int
modal_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_modal_conf *mc = conf_of(m);
	struct vg_loc loc;
	int bad = 0;

	if (mc == NULL)
		return 0;
	if (mc->cloud.token_env != NULL) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "modal.token_env"),
		    "modal.token_env: not used by modal: "
		    "direct mode reads MODAL_TOKEN_ID and MODAL_TOKEN_SECRET or "
		    "~/.modal.toml, managed mode the variable "
		    "modal.gateway_token_env names");
		bad = 1;
	}
	if (vg_expand_resources(m, untyped_gpu_fn,
	    (void *)(uintptr_t)m) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "resources.gpus"),
		    "resources.gpus: modal needs the GPU type in "
		    "resources.gpu_type or modal.gpu (T4, L4, A10G, A100, "
		    "A100-80GB, L40S, H100, H200, B200)");
		bad = 1;
	}
	if (vg_cloud_validate(&modal_direct_ops, m, d) != 0)
		bad = 1;
	return bad ? VG_EINVAL : 0;
}

/* plugin op host_check: the credentials of a mode are here. */
static void
modal_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	const struct vg_modal_conf *mc = conf_of(m);
	struct vg_modal_res r;
	struct vg_err e;

	vg_err_init(&e);
	if (mc == NULL)
		return;
	if (vg_modal_resolve(mc, &r, &e) != 0) {
		vg_strv_push(why, e.msg);
		return;
	}
	vg_modal_res_release(&r);
}

static const char *const modal_modes[] = { "auto", "direct", "managed",
	NULL };
static const int modal_imodes[] = { VG_MODAL_AUTO, VG_MODAL_DIRECT,
	VG_MODAL_MANAGED };

static const struct vg_section modal_section = {
	.name = "modal",
	.fields = (const struct vg_field[]){
		VG_CLOUD_ROWS(OFF(vg_modal_conf, cloud)),
		ENUM(vg_modal_conf, "mode", mode, "auto", modal_modes,
		    modal_imodes,
		    "direct (your Modal token), managed (a tool gateway) or "
		    "auto"),
		STR(vg_modal_conf, "gpu", gpu,
		    "GPU type (count from resources.gpus)"),
		STR(vg_modal_conf, "app", app, "Modal app name (vigil)"),
		STR(vg_modal_conf, "environment", environment,
		    "Modal environment"),
		{ .key = "gateway_url", .type = VG_F_STR,
		  .off = OFF(vg_modal_conf, gateway_url),
		  .flags = VG_FF_CONFIGONLY,
		  .help = "managed: the gateway's URL (config files only)" },
		{ .key = "gateway_token_env", .type = VG_F_STR,
		  .off = OFF(vg_modal_conf, gateway_token_env),
		  .flags = VG_FF_CONFIGONLY,
		  .help = "managed: variable holding the gateway token "
		  "(config files only)" },
		{ .key = NULL },
	},
};

const struct vg_msection vg_modal_msection = {
	.key = "modal",
	.schema = &modal_section,
	.size = sizeof(struct vg_modal_conf),
	.help = "Modal",
};

static const struct vg_msection *const modal_sections[] = {
	&vg_modal_msection, NULL
};

/* ------------------------------------------------------------------ */
/* Sessions: one sandbox per session through the gateway's execs      */
/* ------------------------------------------------------------------ */

/*
 * A session is one gateway sandbox; each command is POST .../execs of
 * the session wrapper, polled to its end (the gateway reports a
 * command's output, stdout and stderr together, once it has ended: no
 * streaming), cancelled with .../cancel; close is .../terminate.  The
 * direct gRPC API would need Modal's container exec calls, which this
 * backend does not speak: a session there is refused with what to set.
 */
static int
session_ops(const struct vg_manifest *m, const struct vg_cloud_ops **ops,
    struct vg_err *e)
{
	struct vg_modal_res res;
	int rc;

	if ((rc = vg_modal_resolve(conf_of(m), &res, e)) != 0)
		return rc;
	rc = res.mode;
	vg_modal_res_release(&res);
	if (rc != VG_MODAL_MANAGED)
		return vg_err_set(e, VG_EUNSUPPORTED, "modal: sessions run "
		    "through a tool gateway's exec calls (modal.gateway_url "
		    "in a vigil config file, or MODAL_GATEWAY_URL, with "
		    "modal.mode auto or managed)");
	*ops = &modal_managed_ops;
	return 0;
}

static int
modal_session_open(struct vg_session *s, struct vg_err *e)
{
	const struct vg_cloud_ops *ops;
	int rc;

	if ((rc = session_ops(s->m, &ops, e)) != 0)
		return rc;
	return vg_cloud_session_open(ops, s, e);
}

static int
modal_session_exec(const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	const struct vg_cloud_ops *ops;
	int rc;

	if ((rc = session_ops(s->m, &ops, e)) != 0)
		return rc;
	return vg_cloud_session_exec(ops, s, c, r, e);
}

static int
modal_session_close(const struct vg_session *s, struct vg_err *e)
{
	const struct vg_cloud_ops *ops;
	int rc;

	if ((rc = session_ops(s->m, &ops, e)) != 0)
		return rc;
	return vg_cloud_session_close(ops, s, e);
}

const struct vg_backend_ops vg_backend_modal = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "modal",
		.help = "a Modal sandbox",
		.sections = modal_sections,
		.validate = modal_validate,
		.host_check = modal_host_check,
	},
	.probe = modal_probe,
	.prepare = modal_prepare,
	.image_id = modal_image_id,
	.unprepare = modal_unprepare,
	.pool = vg_cloud_pool,
	.run = modal_run,
	.reap = modal_reap,
	/* Sessions: the block above. */
	.session_open = modal_session_open,
	.session_exec = modal_session_exec,
	.session_close = modal_session_close,
	.reattach = modal_reattach,
};
