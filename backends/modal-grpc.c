/*
 * modal-grpc.c - gRPC over libcurl's HTTP/2 for the modal backend, as
 * grpc/grpc doc/PROTOCOL-HTTP2.md describes it: POST /<service>/<method>
 * with content-type application/grpc and te: trailers, messages framed as
 * a flag byte and a 4-byte big-endian length, the outcome in the
 * grpc-status, grpc-message and grpc-status-details-bin trailers (or the
 * only header block of a Trailers-Only reply).  libcurl hands received
 * trailers to the header callback after the body, so both go through
 * vg_grpc_status_line.  http:// URLs are h2c (prior knowledge), https://
 * negotiates h2 by ALPN.  Every call of a channel shares one curl multi
 * handle, so the two log streams of a sandbox run side by side, and one
 * connection, its calls multiplexed (h2c with libcurl before 8.0.0 opens
 * one per call; see vg_grpc_open).
 *
 * Retries follow Modal's clients (modal-labs/modal-client
 * _utils/grpc_utils.py, go/client.go): transient codes and transport
 * failures 3 more times with backoff, one x-idempotency-key per logical
 * call and x-retry-attempt counting; RESOURCE_EXHAUSTED with an
 * RPCRetryPolicy detail waits the time the server asks, without a limit
 * on tries but MODAL_MAX_THROTTLE_WAIT seconds in all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/curl.h"
#include "common/base64.h"
#include "common/path.h"
#include "backends/modal.h"

#define GRPC_SERVICE		"/modal.client.ModalClient/"
#define GRPC_TRIES		4	/* 1 + 3 retries */
#define GRPC_POLICY_TYPE	"type.modal.com/modal.client.RPCRetryPolicy"

struct vg_grpc {
	CURLM			*multi;
	char			*base;
	int			 tls;
	struct vg_strv		 md;		/* metadata lines */
	const volatile sig_atomic_t *stop;
	char			*redact;
	size_t			 open;		/* calls not yet done */
	int			 reuse;		/* calls share a connection */
};

struct vg_grpc_call {
	struct vg_grpc		*g;
	CURL			*easy;
	struct curl_slist	*hdrs;
	struct vg_buf		 body;
	struct vg_grpc_deframer	 df;
	struct vg_grpc_status	 st;
	int			 done;
	CURLcode		 cc;
	char			 errbuf[CURL_ERROR_SIZE];
};

/* ------------------------------------------------------------------ */
/* Pure pieces                                                         */
/* ------------------------------------------------------------------ */

/* Sets up a deframer. */
void
vg_grpc_deframer_init(struct vg_grpc_deframer *d, size_t max,
    int (*cb)(void *, const uint8_t *, size_t), void *arg)
{
	memset(d, 0, sizeof(*d));
	d->max = max;
	d->cb = cb;
	d->arg = arg;
}

/* Feeds bytes of the body; see modal.h. */
int
vg_grpc_deframe(struct vg_grpc_deframer *d, const char *p, size_t n)
{
	size_t k;

	while (n > 0 && d->rc == 0) {
		if (d->hlen < 5) {
			d->hdr[d->hlen++] = (unsigned char)*p++;
			n--;
			if (d->hlen < 5)
				continue;
			if (d->hdr[0] != 0) {
				snprintf(d->err, sizeof(d->err), "compressed "
				    "message (flag %u) without an encoding",
				    d->hdr[0]);
				return d->rc = VG_EPARSE;
			}
			d->need = (size_t)d->hdr[1] << 24 |
			    (size_t)d->hdr[2] << 16 | (size_t)d->hdr[3] << 8 |
			    d->hdr[4];
			if (d->need > d->max) {
				snprintf(d->err, sizeof(d->err), "message of %zu "
				    "bytes is above the limit of %zu", d->need,
				    d->max);
				return d->rc = VG_EPARSE;
			}
			vg_buf_reset(&d->msg);
		}
		k = d->need - d->msg.len < n ? d->need - d->msg.len : n;
		vg_buf_add(&d->msg, p, k);
		p += k;
		n -= k;
		if (d->msg.len == d->need) {
			d->hlen = 0;
			if (d->cb != NULL && (d->rc = d->cb(d->arg,
			    (const uint8_t *)(d->msg.data != NULL ?
			    d->msg.data : ""), d->msg.len)) != 0)
				snprintf(d->err, sizeof(d->err), "message "
				    "refused");
		}
	}
	return d->rc;
}

/* True inside a message. */
int
vg_grpc_deframer_partial(const struct vg_grpc_deframer *d)
{
	return d->hlen > 0;
}

/* Frees the message buffer. */
void
vg_grpc_deframer_release(struct vg_grpc_deframer *d)
{
	vg_buf_release(&d->msg);
}

/* Frames one message. */
void
vg_grpc_frame(struct vg_buf *out, const void *msg, size_t n)
{
	unsigned char h[5] = {
		0, (unsigned char)(n >> 24), (unsigned char)(n >> 16),
		(unsigned char)(n >> 8), (unsigned char)n,
	};

	vg_buf_add(out, h, 5);
	vg_buf_add(out, msg, n);
}

/* Decodes base64; see modal.h. */
long
vg_grpc_b64_decode(const char *in, size_t n, unsigned char *out, size_t size)
{
	unsigned long acc = 0;
	size_t i, k = 0;
	int bits = 0, v;

	while (n > 0 && (in[n - 1] == '=' || in[n - 1] == '\r' ||
	    in[n - 1] == '\n' || in[n - 1] == ' '))
		n--;
	for (i = 0; i < n; i++) {
		if ((v = vg_base64_value((unsigned char)in[i])) < 0)
			return -1;
		acc = (acc << 6 | (unsigned long)v) & 0xffffff;
		if ((bits += 6) >= 8) {
			bits -= 8;
			if (k >= size)
				return -1;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	return (long)k;
}

/* Reads the RPCRetryPolicy of an RPCStatus; see modal.h. */
int
vg_grpc_status_details(const unsigned char *p, size_t n,
    struct vg_grpc_status *st)
{
	Modal__Client__RPCStatus *s;
	Modal__Client__RPCRetryPolicy *pol;
	size_t i;

	if ((s = modal__client__rpcstatus__unpack(NULL, n, p)) == NULL)
		return VG_EPARSE;
	for (i = 0; i < s->n_details; i++) {
		if (s->details[i]->type_url == NULL ||
		    strcmp(s->details[i]->type_url, GRPC_POLICY_TYPE) != 0 ||
		    !s->details[i]->has_value)
			continue;
		pol = modal__client__rpcretry_policy__unpack(NULL,
		    s->details[i]->value.len, s->details[i]->value.data);
		if (pol != NULL && pol->has_retry_after_secs &&
		    pol->retry_after_secs > 0 && pol->retry_after_secs < 1e6)
			st->retry_after = pol->retry_after_secs;
		if (pol != NULL)
			modal__client__rpcretry_policy__free_unpacked(pol, NULL);
	}
	modal__client__rpcstatus__free_unpacked(s, NULL);
	return 0;
}

/* Percent-decodes grpc-message into out. */
static void
unescape(const char *in, size_t n, char *out, size_t size)
{
	size_t i, k = 0;
	int hi, lo;

	for (i = 0; i < n && k + 1 < size; i++) {
		if (in[i] == '%' && i + 2 < n &&
		    (hi = vg_hexval((unsigned char)in[i + 1])) >= 0 &&
		    (lo = vg_hexval((unsigned char)in[i + 2])) >= 0) {
			out[k++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[k++] = in[i];
	}
	out[k] = '\0';
}

/* Takes one header or trailer line; see modal.h. */
void
vg_grpc_status_line(struct vg_grpc_status *st, const char *line, size_t n)
{
	static const char hs[] = "grpc-status:", hm[] = "grpc-message:",
	    hd[] = "grpc-status-details-bin:";
	unsigned char raw[4096];
	const char *v;
	size_t vn;
	long k;

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n'))
		n--;
	if (n >= sizeof(hs) - 1 && strncasecmp(line, hs, sizeof(hs) - 1) == 0)
		v = line + sizeof(hs) - 1;
	else if (n >= sizeof(hm) - 1 && strncasecmp(line, hm,
	    sizeof(hm) - 1) == 0)
		v = line + sizeof(hm) - 1;
	else if (n >= sizeof(hd) - 1 && strncasecmp(line, hd,
	    sizeof(hd) - 1) == 0)
		v = line + sizeof(hd) - 1;
	else
		return;
	while (v < line + n && (*v == ' ' || *v == '\t'))
		v++;
	vn = (size_t)(line + n - v);
	switch (line[11]) {
	case ':':	/* grpc-status: */
		st->code = 0;
		for (k = 0; k < (long)vn && k < 4 && v[k] >= '0' &&
		    v[k] <= '9'; k++)
			st->code = st->code * 10 + (v[k] - '0');
		if (k == 0 || k < (long)vn)
			st->code = VG_GRPC_UNKNOWN;
		break;
	case 'e':	/* grpc-message: */
		unescape(v, vn, st->message, sizeof(st->message));
		break;
	default:	/* grpc-status-details-bin: */
		if ((k = vg_grpc_b64_decode(v, vn, raw, sizeof(raw))) > 0)
			(void)vg_grpc_status_details(raw, (size_t)k, st);
		break;
	}
}

/* The name of a status code. */
const char *
vg_grpc_code_name(int code)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
		"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
		"PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
		"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
		"UNAUTHENTICATED",
	};

	if (code < 0 || (size_t)code >= sizeof(names) / sizeof(*names))
		return "no status";
	return names[code];
}

/* True for codes worth another try. */
int
vg_grpc_transient(int code)
{
	return code == VG_GRPC_UNAVAILABLE || code == VG_GRPC_INTERNAL ||
	    code == VG_GRPC_DEADLINE_EXCEEDED || code == VG_GRPC_UNKNOWN ||
	    code == VG_GRPC_CANCELLED;
}

/* grpc-timeout for secs. */
void
vg_grpc_timeout_value(double secs, char *out, size_t size)
{
	long long ms = (long long)(secs * 1000 + 0.5);

	if (ms < 1)
		ms = 1;
	if (ms <= 99999999)
		snprintf(out, size, "%lldm", ms);
	else
		snprintf(out, size, "%lldS", ms / 1000 > 99999999 ?
		    99999999LL : ms / 1000);
}

/* The error of a failed call; see modal.h. */
int
vg_grpc_error(const struct vg_grpc_status *st, const char *what,
    struct vg_err *e)
{
	/* Codes worth another try stay transient (VG_EAGAIN) when they
	 * outlast the retries: a new attempt may get through. */
	int rc = st->code == VG_GRPC_UNAUTHENTICATED ||
	    st->code == VG_GRPC_PERMISSION_DENIED ? VG_EDENIED :
	    st->code == VG_GRPC_NOT_FOUND ? VG_ENOENT :
	    st->code == VG_GRPC_DEADLINE_EXCEEDED ? VG_ETIMEOUT :
	    vg_grpc_transient(st->code) ||
	    st->code == VG_GRPC_RESOURCE_EXHAUSTED ? VG_EAGAIN : VG_EBACKEND;

	return vg_err_set(e, rc, "modal: %s: %s%s(%s)%s", what, st->message,
	    st->message[0] ? " " : "", vg_grpc_code_name(st->code),
	    rc == VG_EDENIED ? "; check the Modal token (vigil doctor -b "
	    "modal says where it comes from)" : "");
}

/* ------------------------------------------------------------------ */
/* Channel and calls                                                   */
/* ------------------------------------------------------------------ */

/* Opens a channel; see modal.h. */
int
vg_grpc_open(struct vg_grpc **gp, const char *url,
    const struct vg_strv *metadata, const volatile sig_atomic_t *stop,
    const char *redact, struct vg_err *e)
{
	struct vg_grpc *g;
	size_t n;

	*gp = NULL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8)
	    != 0)
		return vg_err_set(e, VG_EINVAL, "modal: server URL '%s' is not "
		    "http:// or https://", url);
	g = vg_xcalloc(1, sizeof(*g));
	g->tls = url[4] == 's';
	/* The calls of a channel share one HTTP/2 connection, but not over
	 * h2c before libcurl 8.0.0: on reuse it stacked a second HTTP/2
	 * filter on the connection and failed the call with "Error in the
	 * HTTP2 framing layer" before sending it (curl issue #10634, fixed
	 * by curl PR #10643 in 8.0.0; `curl --http2-prior-knowledge U
	 * --next --http2-prior-knowledge U` shows it).  Over TLS 7.88
	 * reuses fine. */
	g->reuse = g->tls ||
	    curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
	g->base = vg_xstrdup(url);
	n = strlen(g->base);
	while (n > 0 && g->base[n - 1] == '/')
		g->base[--n] = '\0';
	if (metadata != NULL)
		vg_strv_copy(&g->md, metadata);
	g->stop = stop;
	g->redact = vg_xstrdup(redact);
	if ((g->multi = curl_multi_init()) == NULL) {
		vg_grpc_free(g);
		return vg_err_set(e, VG_ENOMEM, "modal: %s",
		    vg_curl_error());
	}
	curl_multi_setopt(g->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	*gp = g;
	return 0;
}

/* Sets the stop flag of g. */
void
vg_grpc_set_stop(struct vg_grpc *g, const volatile sig_atomic_t *stop)
{
	g->stop = stop;
}

/* Closes a channel (its calls must be freed first). */
void
vg_grpc_free(struct vg_grpc *g)
{
	size_t i;

	if (g == NULL)
		return;
	if (g->multi != NULL)
		curl_multi_cleanup(g->multi);
	for (i = 0; i < g->md.n; i++)
		memset(g->md.v[i], 0, strlen(g->md.v[i]));
	vg_strv_release(&g->md);
	if (g->redact != NULL)
		memset(g->redact, 0, strlen(g->redact));
	free(g->redact);
	free(g->base);
	free(g);
}

/* libcurl body callback: messages to the deframer. */
static size_t
on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct vg_grpc_call *c = arg;
	size_t n = size * nmemb;

	return vg_grpc_deframe(&c->df, p, n) != 0 ? 0 : n;
}

/* libcurl header callback: headers and trailers. */
static size_t
on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct vg_grpc_call *c = arg;
	size_t n = size * nmemb;

	vg_grpc_status_line(&c->st, p, n);
	return n;
}

/* A random UUID (version 4) for x-idempotency-key. */
static void
uuid4(char *out, size_t size)
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t i;

	if (fd < 0 || read(fd, b, sizeof(b)) != (ssize_t)sizeof(b))
		for (i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(rand() ^ (int)(vg_mono_ms() >>
			    (i % 8)));
	if (fd >= 0)
		close(fd);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Starts one call with the request bytes and extra header lines. */
static struct vg_grpc_call *
call_start(struct vg_grpc *g, const char *method, const struct vg_buf *msg,
    double timeout, const char *idem, int attempt,
    int (*cb)(void *, const uint8_t *, size_t), void *arg)
{
	struct vg_grpc_call *c = vg_xcalloc(1, sizeof(*c));
	char *url, line[128], tmo[32];
	const char *ca;
	size_t i;

	c->g = g;
	c->st.code = -1;
	vg_grpc_deframer_init(&c->df, VG_GRPC_MSG_MAX, cb, arg);
	vg_grpc_frame(&c->body, msg->data != NULL ? msg->data : "",
	    msg->len);
	c->hdrs = curl_slist_append(c->hdrs, "content-type: application/grpc");
	c->hdrs = curl_slist_append(c->hdrs, "te: trailers");
	c->hdrs = curl_slist_append(c->hdrs, "grpc-accept-encoding: identity");
	c->hdrs = curl_slist_append(c->hdrs, "user-agent: vigil-modal");
	c->hdrs = curl_slist_append(c->hdrs, "Expect:");
	if (timeout > 0) {
		vg_grpc_timeout_value(timeout, tmo, sizeof(tmo));
		snprintf(line, sizeof(line), "grpc-timeout: %s", tmo);
		c->hdrs = curl_slist_append(c->hdrs, line);
	}
	if (idem != NULL) {
		snprintf(line, sizeof(line), "x-idempotency-key: %s", idem);
		c->hdrs = curl_slist_append(c->hdrs, line);
		snprintf(line, sizeof(line), "x-retry-attempt: %d", attempt);
		c->hdrs = curl_slist_append(c->hdrs, line);
	}
	for (i = 0; i < g->md.n; i++)
		c->hdrs = curl_slist_append(c->hdrs, g->md.v[i]);
	url = vg_xasprintf("%s%s%s", g->base, GRPC_SERVICE, method);
	c->easy = curl_easy_init();
	curl_easy_setopt(c->easy, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(c->easy, CURLOPT_HTTP_VERSION, g->tls ?
	    (long)CURL_HTTP_VERSION_2TLS :
	    (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(c->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body.data);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE, (long)c->body.len);
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->hdrs);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->easy, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	if (g->reuse)
		curl_easy_setopt(c->easy, CURLOPT_PIPEWAIT, 1L);
	else {
		curl_easy_setopt(c->easy, CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(c->easy, CURLOPT_FRESH_CONNECT, 1L);
	}
	curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
	if (g->tls && (ca = getenv("SSL_CERT_FILE")) != NULL && *ca)
		curl_easy_setopt(c->easy, CURLOPT_CAINFO, ca);
	/* libcurl's trace of each call on stderr (docs/backends/modal.md,
	 * "Debugging"). */
	if (getenv("VIGIL_GRPC_DEBUG") != NULL)
		curl_easy_setopt(c->easy, CURLOPT_VERBOSE, 1L);
	if (timeout > 0)
		curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS,
		    (long)(timeout * 1000) + 5000);
	curl_multi_add_handle(g->multi, c->easy);
	g->open++;
	return c;
}

/* Starts a streaming call; see modal.h. */
struct vg_grpc_call *
vg_grpc_stream(struct vg_grpc *g, const char *method,
    const ProtobufCMessage *req, double timeout,
    int (*cb)(void *, const uint8_t *, size_t), void *arg)
{
	struct vg_buf msg = VG_BUF_INIT;
	struct vg_grpc_call *c;
	size_t n = protobuf_c_message_get_packed_size(req);

	msg.data = vg_xmalloc(n + 1);
	msg.len = protobuf_c_message_pack(req, (uint8_t *)msg.data);
	msg.cap = n + 1;
	c = call_start(g, method, &msg, timeout, NULL, 0, cb, arg);
	vg_buf_release(&msg);
	return c;
}

/* Moves calls on; see modal.h. */
int
vg_grpc_poll(struct vg_grpc *g, double secs)
{
	struct vg_grpc_call *c;
	CURLMsg *m;
	int running, left;

	if (g->stop != NULL && *g->stop)
		return VG_ECANCELED;
	curl_multi_perform(g->multi, &running);
	if (running > 0)
		curl_multi_poll(g->multi, NULL, 0, (int)(secs * 1000), NULL);
	curl_multi_perform(g->multi, &running);
	while ((m = curl_multi_info_read(g->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
		    (char **)&c);
		c->cc = m->data.result;
		c->done = 1;
		curl_multi_remove_handle(g->multi, m->easy_handle);
		g->open--;
	}
	return g->stop != NULL && *g->stop ? VG_ECANCELED : 0;
}

/* The outcome of an ended call; see modal.h. */
int
vg_grpc_call_done(struct vg_grpc_call *c, struct vg_grpc_status *st,
    char *msg, size_t size)
{
	long http = 0;

	if (!c->done)
		return 0;
	*st = c->st;
	msg[0] = '\0';
	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &http);
	if (c->df.rc != 0 && c->df.err[0]) {
		/* Our own abort, or a reply we would not read. */
		st->code = VG_GRPC_INTERNAL;
		snprintf(st->message, sizeof(st->message), "reply: %s",
		    c->df.err);
	} else if (c->cc != CURLE_OK && st->code < 0) {
		snprintf(msg, size, "%s", c->errbuf[0] ? c->errbuf :
		    curl_easy_strerror(c->cc));
		st->code = -1;
	} else if (st->code < 0) {
		/* A stream cut before its trailers. */
		snprintf(msg, size, "reply ended without grpc-status (HTTP "
		    "%ld)", http);
	}
	if (c->g->redact != NULL && *c->g->redact) {
		vg_cloud_redact(msg, size, c->g->redact);
		vg_cloud_redact(st->message, sizeof(st->message),
		    c->g->redact);
	}
	return 1;
}

/* Frees a call, removing it from its channel when still open. */
void
vg_grpc_call_free(struct vg_grpc_call *c)
{
	if (c == NULL)
		return;
	if (!c->done) {
		curl_multi_remove_handle(c->g->multi, c->easy);
		c->g->open--;
	}
	curl_easy_cleanup(c->easy);
	curl_slist_free_all(c->hdrs);
	vg_buf_release(&c->body);
	vg_grpc_deframer_release(&c->df);
	free(c);
}

/* The unary reply: one message, kept. */
struct unary {
	struct vg_buf	 reply;
	int		 n;
};

/* Deframer callback of a unary call. */
static int
unary_msg(void *arg, const uint8_t *p, size_t n)
{
	struct unary *u = arg;

	if (u->n++ > 0)
		return VG_EPARSE;
	vg_buf_add(&u->reply, p, n);
	return 0;
}

/* The throttle budget, MODAL_MAX_THROTTLE_WAIT seconds (none: no cap). */
static double
throttle_budget(void)
{
	const char *v = getenv("MODAL_MAX_THROTTLE_WAIT");
	char *end;
	double d;

	if (v == NULL || *v == '\0')
		return -1;
	d = strtod(v, &end);
	return *end == '\0' && d >= 0 ? d : -1;
}

/* One try of a unary call, to its end. */
static int
unary_once(struct vg_grpc *g, const char *method, const struct vg_buf *msg,
    double timeout, const char *idem, int attempt, struct unary *u,
    struct vg_grpc_status *st, char *tmsg, size_t tsize)
{
	struct vg_grpc_call *c;
	int rc = 0;

	vg_buf_reset(&u->reply);
	u->n = 0;
	c = call_start(g, method, msg, timeout, idem, attempt, unary_msg, u);
	while (!vg_grpc_call_done(c, st, tmsg, tsize))
		if ((rc = vg_grpc_poll(g, 0.2)) != 0)
			break;
	vg_grpc_call_free(c);
	return rc;
}

/* A unary call with retries; see modal.h. */
int
vg_grpc_unary(struct vg_grpc *g, const char *method,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rd,
    ProtobufCMessage **out, double timeout, const char *what,
    struct vg_err *e)
{
	struct unary u = { .reply = VG_BUF_INIT };
	struct vg_buf msg = VG_BUF_INIT;
	struct vg_grpc_status st;
	char idem[40], tmsg[CURL_ERROR_SIZE + 64];
	double budget = throttle_budget(), waited = 0, d;
	size_t n = protobuf_c_message_get_packed_size(req);
	int rc, tries = 0, attempt;

	*out = NULL;
	msg.data = vg_xmalloc(n + 1);
	msg.len = protobuf_c_message_pack(req, (uint8_t *)msg.data);
	msg.cap = n + 1;
	uuid4(idem, sizeof(idem));
	for (attempt = 0;; attempt++) {
		if ((rc = unary_once(g, method, &msg, timeout, idem, attempt,
		    &u, &st, tmsg, sizeof(tmsg))) != 0) {
			rc = vg_err_set(e, rc, "modal: %s: interrupted", what);
			break;
		}
		if (st.code == VG_GRPC_OK) {
			*out = protobuf_c_message_unpack(rd, NULL, u.reply.len,
			    (const uint8_t *)(u.reply.data != NULL ?
			    u.reply.data : ""));
			rc = *out == NULL ? vg_err_set(e, VG_EPARSE, "modal: "
			    "%s: reply is not a %s", what, rd->name) : 0;
			break;
		}
		if (st.code == VG_GRPC_RESOURCE_EXHAUSTED &&
		    st.retry_after > 0 &&
		    (budget < 0 || waited + st.retry_after <= budget)) {
			d = st.retry_after;
			waited += d;
		} else if ((st.code < 0 || vg_grpc_transient(st.code)) &&
		    ++tries < GRPC_TRIES)
			d = vg_cloud_backoff(tries, 0, (double)(rand() % 1000) /
			    1000.0) * 0.4;
		else {
			if (st.code < 0)
				rc = vg_err_set(e, VG_EIO, "modal: %s: %s%s",
				    what, tmsg, tries > 1 ? " (gave up after "
				    "several tries)" : "");
			else
				rc = vg_grpc_error(&st, what, e);
			break;
		}
		if ((rc = vg_cloud_sleep(g->stop, d)) != 0) {
			rc = vg_err_set(e, rc, "modal: %s: interrupted", what);
			break;
		}
	}
	vg_buf_release(&msg);
	vg_buf_release(&u.reply);
	return rc;
}
