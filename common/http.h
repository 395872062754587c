/*
 * http.h - a small libcurl client for the services vigil talks to: the
 * Docker Engine API on a unix socket and the cloud sandbox APIs over
 * HTTPS.  One struct vg_http is one reusable connection (keep-alive), to
 * be used by one thread at a time.
 *
 * Requests are blocking.  Every request has a timeout, a bound on the
 * reply kept in memory, and can be aborted from a signal handler through
 * a flag.  Long replies (container logs, pull progress) go to a streaming
 * callback instead of memory.  Error text names the method, the path and
 * the endpoint, followed by libcurl's own explanation.
 */
#ifndef VG_HTTP_H
#define VG_HTTP_H

#include <signal.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

struct vg_http;

/* Default cap on a reply kept in memory (vg_http_req.max_body = 0). */
#define VG_HTTP_MAX_BODY	(4u << 20)

/*
 * Opens a client for endpoint: "unix:///path/to.sock" (HTTP over a unix
 * socket), "tcp://host:port" (plain HTTP, as DOCKER_HOST writes it), or an
 * "http://" / "https://" base URL whose path is kept as a prefix.  Does
 * not connect yet.  On success *hp is owned by the caller (vg_http_free).
 */
int	vg_http_open(const char *endpoint, struct vg_http **hp,
	    struct vg_err *e);
void	vg_http_free(struct vg_http *h);

/* Adds a header line ("Authorization: Bearer ...") sent with every
 * request; copied.  The value is never included in error messages. */
void	vg_http_add_header(struct vg_http *h, const char *line);

/*
 * Pins the address later requests connect to, as curl's --resolve does:
 * "HOST:PORT:ADDRESS" (an IPv6 address in brackets).  A caller that
 * checked where a name leads connects there and nowhere else, whatever
 * the name resolves to by then (DNS rebinding).
 */
void	vg_http_pin(struct vg_http *h, const char *resolve);

/*
 * What kind of address sa is, when it is not a public one: "loopback",
 * "link-local" (169.254/16, fe80::/10: the cloud metadata service),
 * "private" (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7),
 * "unspecified", "multicast" or "reserved", IPv4-mapped IPv6 forms
 * alike; NULL for a public address.
 */
struct sockaddr;
const char *vg_addr_kind(const struct sockaddr *sa);

/* The endpoint as given to vg_http_open, for messages; borrowed. */
const char *vg_http_endpoint(const struct vg_http *h);

/*
 * A streaming sink: called with each piece of the reply body as it
 * arrives.  Returns 0 to go on; anything else aborts the request, which
 * then fails with VG_ECANCELED (or the callback's own negative vg_rc).
 */
typedef int (*vg_http_sink)(void *arg, const char *p, size_t n);

struct vg_http_req {
	const char	*method;	/* "GET", "POST", "DELETE", ... */
	const char	*path;		/* "/v1.41/containers/create?name=x" */
	const char	*body;		/* request body or NULL */
	size_t		 body_len;
	const char	*content_type;	/* default "application/json" */
	double		 timeout;	/* seconds for the whole request; 0 = none */
	double		 connect_timeout; /* seconds; 0 = 10 */
	size_t		 max_body;	/* reply kept; 0 = VG_HTTP_MAX_BODY */
	vg_http_sink	 sink;		/* when set, the body goes here */
	void		*sink_arg;
	/* When non-NULL and set to non-zero (for example by a signal
	 * handler), the request is abandoned within about 100 ms and fails
	 * with VG_ECANCELED. */
	const volatile sig_atomic_t *stop;
	/* A second such flag, for another thread's verdict (docker's
	 * sampler: the container has exited); the same VG_ECANCELED. */
	const volatile sig_atomic_t *stop2;
};

struct vg_http_resp {
	long		 status;	/* HTTP status, 0 when none arrived */
	struct vg_buf	 body;		/* unless streamed to a sink */
	struct vg_buf	 headers;	/* header lines, at most 64 KiB */
};

/*
 * Sends req and waits for the whole reply.  Returns 0 when a reply
 * arrived, whatever its status (check resp->status); VG_ETIMEOUT when
 * req->timeout passed, VG_ECANCELED when *req->stop was set or the sink
 * refused data, VG_ELIMIT when the reply exceeded max_body, VG_EIO for
 * connection trouble.  resp is reset first and must be released by the
 * caller with vg_http_resp_release in every case.  Blocks.
 */
int	vg_http_do(struct vg_http *h, const struct vg_http_req *req,
	    struct vg_http_resp *resp, struct vg_err *e);
void	vg_http_resp_release(struct vg_http_resp *resp);

/*
 * Copies the value of header name (case-insensitive, surrounding blanks
 * removed) of the last reply into out; returns 1 when found, else 0.
 */
int	vg_http_resp_header(const struct vg_http_resp *resp, const char *name,
	    char *out, size_t size);

/* Appends s percent-encoded for a URL query or path segment. */
void	vg_http_escape(struct vg_buf *b, const char *s);

#endif
