/*
 * docker-int.h - what the parts of the docker backend share, private to
 * backends/docker*.c: the connection to the engine and its calls
 * (docker-engine.c), the named-volume judgement that asks the engine
 * (docker-access.c), the DeviceRequests the create body writes
 * (docker-body.c, read back by the host-access judge), the container
 * steps the sessions reuse (docker.c) and the session operations
 * (docker-session.c) the backend's vtable names.  The public interface,
 * the pure functions the tests and fuzzers call, is backends/docker.h.
 * Each function is described above its definition.
 */
#ifndef VG_DOCKER_INT_H
#define VG_DOCKER_INT_H

#include <signal.h>

#include "common/http.h"
#include "common/json.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"

/* Replies of the Engine API are small; bound the parser accordingly. */
#define DOCKER_JSON_MAX		(4u << 20)
/* Timeout for calls that should answer at once. */
#define DOCKER_CALL_TIMEOUT	60.0

/* A connection with its negotiated version prefix. */
struct vg_docker_conn {
	struct vg_http		*h;
	char			 prefix[24];	/* "/v1.41" */
	const volatile sig_atomic_t *stop;
	struct vg_http_resp	 resp;		/* last reply */
	int			 podman;	/* podman's service (its _ping
						   says Libpod-Api-Version) */
};

/*
 * The drive's state (docker.c): with an isolation.network allow-list,
 * the egress proxy prepare started, and the NetworkMode that puts each
 * container in its network namespace ("ns:/proc/PID/fd/N", PID the
 * driver's; podman's service joins a namespace at a path, dockerd
 * cannot).
 */
struct vg_egress_run;
struct vg_docker_drive {
	struct vg_backend_drive	 base;		/* first: the downcast */
	struct vg_egress_run	*egress;
	char			 netmode[64];
};
/* a's drive, when it runs behind the egress proxy; else NULL. */
const struct vg_docker_drive *vg_docker_egress_drive(
	    const struct vg_attempt *a);

/* docker-engine.c: the Engine API transport. */
const char *vg_docker_endpoint(const struct vg_manifest *m);
void	vg_docker_reply_message(const struct vg_http_resp *resp, char *out,
	    size_t size);
int	vg_docker_call(struct vg_docker_conn *c, const char *method,
	    const char *path, const struct vg_buf *body, double timeout,
	    const long *ok, const char *what, struct vg_err *e);
int	vg_docker_reply_json(struct vg_docker_conn *c,
	    struct vg_json_doc **docp, const char *what, struct vg_err *e);
void	vg_docker_close(struct vg_docker_conn *c);
int	vg_docker_open(struct vg_docker_conn *c, const char *endpoint,
	    const volatile sig_atomic_t *stop, struct vg_err *e);
int	vg_docker_ensure_image(struct vg_docker_conn *c,
	    const struct vg_manifest *m, int always_pull, struct vg_err *e);

/* docker-access.c: named volumes, judged through the engine. */
int	vg_docker_named_volume_findings(struct vg_docker_conn *c,
	    const struct vg_docker_named *nv, const struct vg_host_site *site,
	    struct vg_buf *why, struct vg_err *e);

/* docker-body.c: the DeviceRequests of a's resources.gpus. */
void	vg_docker_gpu_requests(const struct vg_attempt *a,
	    struct vg_json_writer *w);

/* docker.c: container steps the sessions share with run(). */
char	*vg_docker_container_name(const struct vg_attempt *a);
int	vg_docker_create(struct vg_docker_conn *c, const struct vg_attempt *a,
	    const struct vg_buf *body, char **idp, struct vg_err *e);
int	vg_docker_precheck(struct vg_docker_conn *c,
	    const struct vg_attempt *a, const struct vg_buf *body,
	    struct vg_result *r, struct vg_err *e);
int	vg_docker_remove(struct vg_docker_conn *c, const char *id,
	    struct vg_err *e);

/* docker-session.c: one container per session, commands through exec. */
int	vg_docker_session_open(struct vg_session *s, struct vg_err *e);
int	vg_docker_session_exec(const struct vg_session *s,
	    const struct vg_session_cmd *sc, struct vg_result *r,
	    struct vg_err *e);
int	vg_docker_session_close(const struct vg_session *s, struct vg_err *e);

#endif
