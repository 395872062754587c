/*
 * modal.h - what the files of the modal backend share (modal.c the
 * backend and its modes, modal-grpc.c gRPC over libcurl's HTTP/2,
 * modal-creds.c credentials and mode resolution, modal.pb-c.c the
 * messages generated from proto/modal.proto) and the pure parts the unit
 * tests and fuzzers reach.  Nothing outside backends/modal*.c and the
 * tests includes it.
 */
#ifndef VG_MODAL_H
#define VG_MODAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "common/buf.h"
#include "common/err.h"
#include "backends/cloud.h"
#include "backends/modal.pb-c.h"

/* ---- the modal: section ---- */

#define VG_MODAL_AUTO		0
#define VG_MODAL_DIRECT		1
#define VG_MODAL_MANAGED	2

struct vg_modal_conf {
	struct vg_cloud_conf cloud;	/* first: the shared cloud rows */
	int		 mode;		/* VG_MODAL_* */
	char		*gpu;		/* GPU type, "A100-80GB"; NULL none */
	char		*app;		/* app name, default "vigil" */
	char		*environment;	/* Modal environment, or NULL */
	char		*gateway_url;	/* managed: config files only */
	char		*gateway_token_env;
};

extern const struct vg_msection vg_modal_msection;

/* ---- gRPC (modal-grpc.c) ---- */

#define VG_GRPC_OK			0
#define VG_GRPC_CANCELLED		1
#define VG_GRPC_UNKNOWN			2
#define VG_GRPC_DEADLINE_EXCEEDED	4
#define VG_GRPC_NOT_FOUND		5
#define VG_GRPC_ALREADY_EXISTS		6
#define VG_GRPC_PERMISSION_DENIED	7
#define VG_GRPC_RESOURCE_EXHAUSTED	8
#define VG_GRPC_INTERNAL		13
#define VG_GRPC_UNAVAILABLE		14
#define VG_GRPC_UNAUTHENTICATED		16

/* Largest message accepted from a server (the SDKs allow 100 MiB; a
 * log batch or a listing is far smaller). */
#define VG_GRPC_MSG_MAX		(16u << 20)

/* Calls into one length-prefixed message stream (5-byte prefix: flag,
 * big-endian length).  Bounded: a message above max is an error. */
struct vg_grpc_deframer {
	unsigned char	 hdr[5];
	size_t		 hlen;		/* prefix bytes seen */
	size_t		 need;		/* body bytes of this message */
	struct vg_buf	 msg;
	size_t		 max;
	int		 rc;		/* first error, sticky */
	char		 err[128];
	int		(*cb)(void *arg, const uint8_t *p, size_t n);
	void		*arg;
};

void	vg_grpc_deframer_init(struct vg_grpc_deframer *d, size_t max,
	    int (*cb)(void *, const uint8_t *, size_t), void *arg);
/* Feeds bytes; returns 0 or the first error (VG_EPARSE for a compressed
 * or oversized message, or cb's non-zero return). */
int	vg_grpc_deframe(struct vg_grpc_deframer *d, const char *p, size_t n);
/* True when the stream stopped inside a message. */
int	vg_grpc_deframer_partial(const struct vg_grpc_deframer *d);
void	vg_grpc_deframer_release(struct vg_grpc_deframer *d);
/* Appends msg framed (flag 0, length) to out. */
void	vg_grpc_frame(struct vg_buf *out, const void *msg, size_t n);

/* A call's outcome, from grpc-status, grpc-message and
 * grpc-status-details-bin (trailers, or the only header block). */
struct vg_grpc_status {
	int	 code;			/* -1 until known */
	char	 message[512];		/* percent-decoded */
	double	 retry_after;		/* RPCRetryPolicy, 0 = none */
};

/* Base64 (padded or not) decoding into out; -1 on a bad character. */
long	vg_grpc_b64_decode(const char *in, size_t n, unsigned char *out,
	    size_t size);
/* Fills st->retry_after from an RPCStatus's RPCRetryPolicy detail;
 * returns 0, or VG_EPARSE for bytes that are not an RPCStatus. */
int	vg_grpc_status_details(const unsigned char *p, size_t n,
	    struct vg_grpc_status *st);
/* One header or trailer line ("name: value\r\n") into st. */
void	vg_grpc_status_line(struct vg_grpc_status *st, const char *line,
	    size_t n);
/* "UNAVAILABLE" for 14. */
const char *vg_grpc_code_name(int code);
/* True for codes the official clients retry (UNAVAILABLE, INTERNAL,
 * DEADLINE_EXCEEDED, UNKNOWN, CANCELLED). */
int	vg_grpc_transient(int code);
/* grpc-timeout value for secs: "<=8 digits><unit>". */
void	vg_grpc_timeout_value(double secs, char *out, size_t size);

struct vg_grpc;
struct vg_grpc_call;

/*
 * A channel to url (http:// is h2c, https:// HTTP/2 over TLS) sending
 * the metadata lines ("name: value") on every call.  stop abandons calls
 * (VG_ECANCELED).  redact (may be NULL) never appears in messages.
 */
int	vg_grpc_open(struct vg_grpc **gp, const char *url,
	    const struct vg_strv *metadata, const volatile sig_atomic_t *stop,
	    const char *redact, struct vg_err *e);
void	vg_grpc_free(struct vg_grpc *g);
/* Sets (NULL: clears) the flag that abandons g's calls. */
void	vg_grpc_set_stop(struct vg_grpc *g, const volatile sig_atomic_t *stop);

/*
 * A unary call of method ("SandboxCreate") with retries: transient codes
 * and transport failures 3 more times with backoff (same
 * x-idempotency-key, growing x-retry-attempt), RESOURCE_EXHAUSTED with an
 * RPCRetryPolicy after retry_after_secs without limit but
 * MODAL_MAX_THROTTLE_WAIT seconds in all.  *out (free with
 * protobuf_c_message_free_unpacked) is the reply.  Errors read
 * "modal: WHAT: message (CODE)"; VG_EDENIED for UNAUTHENTICATED and
 * PERMISSION_DENIED, VG_ENOENT for NOT_FOUND, VG_ETIMEOUT for a deadline.
 */
int	vg_grpc_unary(struct vg_grpc *g, const char *method,
	    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rd,
	    ProtobufCMessage **out, double timeout, const char *what,
	    struct vg_err *e);

/* A server-streaming call: cb gets each message's bytes (non-zero
 * aborts the call).  Driven by vg_grpc_poll with the others open. */
struct vg_grpc_call *vg_grpc_stream(struct vg_grpc *g, const char *method,
	    const ProtobufCMessage *req, double timeout,
	    int (*cb)(void *, const uint8_t *, size_t), void *arg);
/* Moves every open call on for at most secs.  VG_ECANCELED on stop. */
int	vg_grpc_poll(struct vg_grpc *g, double secs);
/* 1 with *st (code -1 and msg set for a transport failure) once c has
 * ended, else 0. */
int	vg_grpc_call_done(struct vg_grpc_call *c, struct vg_grpc_status *st,
	    char *msg, size_t size);
void	vg_grpc_call_free(struct vg_grpc_call *c);
/* Error for a failed call, as vg_grpc_unary words it. */
int	vg_grpc_error(const struct vg_grpc_status *st, const char *what,
	    struct vg_err *e);

/* ---- credentials and mode (modal-creds.c) ---- */

/* Calls cb for each "key = value" of a TOML document under its table
 * ("" before the first): strings (basic and literal), booleans, numbers
 * as text.  Bounded; VG_EPARSE "LINE:COL: what" on what it does not
 * read (arrays, inline tables, multi-line strings).  Pure. */
int	vg_modal_toml(const char *text, size_t n,
	    int (*cb)(void *arg, const char *table, const char *key,
	    const char *value, int is_bool), void *arg, struct vg_err *e);

/* Direct credentials and where they come from (never the values). */
struct vg_modal_direct {
	char	*token_id;		/* owned, wiped */
	char	*token_secret;
	char	*server_url;		/* owned; default api.modal.com */
	char	*environment;		/* owned or NULL */
	char	 where[512];		/* "MODAL_TOKEN_ID and ..." */
};

/* Reads MODAL_TOKEN_ID/SECRET, MODAL_CONFIG_PATH (~/.modal.toml),
 * MODAL_PROFILE, MODAL_SERVER_URL, MODAL_ENVIRONMENT as the Python SDK
 * does.  0 found; VG_ENOENT with what is missing; VG_EINVAL for a bad
 * file (with its path and line). */
int	vg_modal_direct_find(struct vg_modal_direct *d, struct vg_err *e);
void	vg_modal_direct_release(struct vg_modal_direct *d);

/* The gateway of managed mode: URL and token presence. */
struct vg_modal_gateway {
	const char	*url;		/* borrowed, or NULL */
	const char	*url_from;	/* "modal.gateway_url" or the env var */
	const char	*token_env;	/* variable of the token */
	const char	*token;		/* borrowed from environ, or NULL */
};

void	vg_modal_gateway_find(const struct vg_modal_conf *mc,
	    struct vg_modal_gateway *g);

/* The mode a run gets by presence only: VG_MODAL_DIRECT or _MANAGED
 * (auto: managed when the gateway is configured, else direct), or
 * VG_EINVAL naming, per mode, what is missing and how to give it. */
struct vg_modal_res {
	int				mode;
	struct vg_modal_direct		direct;
	int				have_direct;
	struct vg_modal_gateway		gw;
};

int	vg_modal_resolve(const struct vg_modal_conf *mc,
	    struct vg_modal_res *r, struct vg_err *e);
void	vg_modal_res_release(struct vg_modal_res *r);

/* ---- attempt pieces (modal.c), pure ---- */

/* The GenericResult of a finished sandbox as an exit code (the SDK's:
 * TIMEOUT 124, TERMINATED 137) or, for failures of the platform,
 * VG_EBACKEND with the reason.  *ended is 0 while it runs. */
int	vg_modal_result(const Modal__Client__GenericResult *g, int *ended,
	    long *code, struct vg_err *e);

/* What ImageJoinStreaming said so far: the last entry_id and, once the
 * build ended, its status (0 before) and exception. */
struct vg_modal_join {
	int		 status;
	char		 exception[256];
	char		 entry[128];
};

/* Decodes one ImageJoinStreamingResponse into arg (a struct
 * vg_modal_join): 0, or VG_EPARSE.  A deframer callback. */
int	vg_modal_join_msg(void *arg, const uint8_t *p, size_t n);

/* Decodes one TaskLogsBatch: each item's data to out in order, then (out
 * having taken all) its entry_id into entry; *eof set by its eof,
 * *items its item count.  0, VG_EPARSE, or out's error. */
int	vg_modal_logs_batch(const uint8_t *p, size_t n,
	    int (*out)(void *, const char *, size_t), void *arg, char *entry,
	    size_t esize, int *eof, size_t *items);

/* Decodes one RuntimeOutputBatch (an exec's output): each item's bytes
 * (message_bytes, else message) to out in order, then its batch_index
 * into *batch; *eof set when it has an exit_code (the last batch),
 * *items its item count.  0, VG_EPARSE, or out's error. */
int	vg_modal_exec_batch(const uint8_t *p, size_t n,
	    int (*out)(void *, const char *, size_t), void *arg,
	    unsigned long long *batch, int *eof, size_t *items);

/* Decodes one FilesystemRuntimeOutputBatch (a file operation's output):
 * its error's message into err and VG_EBACKEND, else each output chunk
 * to out; *eof set by its eof.  0, VG_EPARSE, VG_EBACKEND or out's
 * error. */
int	vg_modal_fs_batch(const uint8_t *p, size_t n,
	    int (*out)(void *, const char *, size_t), void *arg, int *eof,
	    char *err, size_t esize);

/* The vigil-run, vigil-task and vigil-owner tags of a listed sandbox
 * (NULL where absent), borrowed from s. */
void	vg_modal_sandbox_tags(const Modal__Client__SandboxInfo *s,
	    const char *want[3]);

#endif
