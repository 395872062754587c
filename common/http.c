/*
 * http.c - the libcurl client behind http.h.
 *
 * Each struct vg_http keeps one easy handle inside its own multi handle:
 * the multi loop wakes at least every 100 ms, so a stop flag set by a
 * signal handler takes effect promptly even while a reply is idle (a
 * container wait, a log stream), which libcurl's progress callback alone
 * does not promise.  Connections stay open between requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "common/curl.h"
#include "common/http.h"

/* How often the multi loop wakes to look at the stop flag. */
#define HTTP_POLL_MS		100
#define HTTP_CONNECT_TIMEOUT	10.0
#define HTTP_MAX_HEADERS	(64u << 10)

struct vg_http {
	CURL			*easy;
	CURLM			*multi;
	char			*endpoint;	/* as given */
	char			*base;		/* URL prefix */
	char			*unix_path;	/* or NULL */
	struct curl_slist	*headers;	/* extra header lines */
	struct curl_slist	*resolve;	/* pinned addresses */
	char			 errbuf[CURL_ERROR_SIZE];
};

/* State of one request shared with the write callback. */
struct http_xfer {
	const struct vg_http_req *req;
	struct vg_http_resp	*resp;
	size_t			 max;
	int			 over;		/* reply over max */
	int			 sink_rc;	/* sink refused */
};

/* Opens a client; see http.h. */
int
vg_http_open(const char *endpoint, struct vg_http **hp, struct vg_err *e)
{
	struct vg_http *h;
	size_t n;

	*hp = NULL;
	if (endpoint == NULL || *endpoint == '\0')
		return vg_err_set(e, VG_EINVAL, "empty HTTP endpoint");
	h = vg_xcalloc(1, sizeof(*h));
	h->endpoint = vg_xstrdup(endpoint);
	if (strncmp(endpoint, "unix://", 7) == 0) {
		if (endpoint[7] != '/') {
			vg_http_free(h);
			return vg_err_set(e, VG_EINVAL, "endpoint '%s': "
			    "unix:// needs an absolute socket path "
			    "(unix:///run/docker.sock)", endpoint);
		}
		h->unix_path = vg_xstrdup(endpoint + 7);
		h->base = vg_xstrdup("http://localhost");
	} else if (strncmp(endpoint, "tcp://", 6) == 0 && endpoint[6] != '\0')
		h->base = vg_xasprintf("http://%s", endpoint + 6);
	else if ((strncmp(endpoint, "http://", 7) == 0 && endpoint[7] != '\0')
	    || (strncmp(endpoint, "https://", 8) == 0 && endpoint[8] != '\0'))
		h->base = vg_xstrdup(endpoint);
	else {
		vg_http_free(h);
		return vg_err_set(e, VG_EINVAL, "endpoint '%s' is not "
		    "unix:///PATH, tcp://HOST:PORT, http://... or https://...",
		    endpoint);
	}
	n = strlen(h->base);
	while (n > 0 && h->base[n - 1] == '/')
		h->base[--n] = '\0';
	if ((h->easy = curl_easy_init()) == NULL ||
	    (h->multi = curl_multi_init()) == NULL) {
		vg_http_free(h);
		return vg_err_set(e, VG_ENOMEM, "%s", vg_curl_error());
	}
	*hp = h;
	return 0;
}

/* Closes the connection and frees h; accepts NULL. */
void
vg_http_free(struct vg_http *h)
{
	if (h == NULL)
		return;
	if (h->multi != NULL)
		curl_multi_cleanup(h->multi);
	if (h->easy != NULL)
		curl_easy_cleanup(h->easy);
	curl_slist_free_all(h->headers);
	curl_slist_free_all(h->resolve);
	free(h->endpoint);
	free(h->base);
	free(h->unix_path);
	free(h);
}

void
vg_http_pin(struct vg_http *h, const char *resolve)
{
	struct curl_slist *l = curl_slist_append(h->resolve, resolve);

	if (l != NULL)
		h->resolve = l;
}

const char *
vg_addr_kind(const struct sockaddr *sa)
{
	const unsigned char *b;
	unsigned char v4[4];

	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		b = a->s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
			memcpy(v4, b + 12, 4);
			goto v4;
		}
		if (IN6_IS_ADDR_LOOPBACK(a))
			return "loopback";
		if (IN6_IS_ADDR_UNSPECIFIED(a))
			return "unspecified";
		if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_SITELOCAL(a))
			return "link-local";
		if (IN6_IS_ADDR_MULTICAST(a))
			return "multicast";
		if ((b[0] & 0xfe) == 0xfc)
			return "private";
		if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d &&
		    b[3] == 0xb8)
			return "reserved";
		return NULL;
	}
	if (sa->sa_family != AF_INET)
		return "reserved";
	memcpy(v4, &((const struct sockaddr_in *)(const void *)sa)->
	    sin_addr.s_addr, 4);
v4:
	if (v4[0] == 127)
		return "loopback";
	if (v4[0] == 0)
		return "unspecified";
	if (v4[0] == 169 && v4[1] == 254)
		return "link-local";
	if (v4[0] == 10 || (v4[0] == 172 && (v4[1] & 0xf0) == 16) ||
	    (v4[0] == 192 && v4[1] == 168) ||
	    (v4[0] == 100 && (v4[1] & 0xc0) == 64))
		return "private";
	if (v4[0] >= 224)
		return v4[0] < 240 ? "multicast" : "reserved";
	return NULL;
}

/* Adds a header to every later request. */
void
vg_http_add_header(struct vg_http *h, const char *line)
{
	struct curl_slist *l = curl_slist_append(h->headers, line);

	if (l == NULL)
		abort();
	h->headers = l;
}

/* The endpoint string, borrowed. */
const char *
vg_http_endpoint(const struct vg_http *h)
{
	return h->endpoint;
}

/* Empties a response; it can be reused afterwards. */
void
vg_http_resp_release(struct vg_http_resp *resp)
{
	if (resp == NULL)
		return;
	vg_buf_release(&resp->body);
	vg_buf_release(&resp->headers);
	resp->status = 0;
}

/* libcurl write callback: to the sink, or into the bounded body. */
static size_t
http_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	size_t n = size * nmemb;
	int r;

	if (x->req->sink != NULL) {
		if ((r = x->req->sink(x->req->sink_arg, p, n)) != 0) {
			x->sink_rc = r < 0 ? r : VG_ECANCELED;
			return 0;
		}
		return n;
	}
	if (x->resp->body.len + n > x->max) {
		x->over = 1;
		return 0;
	}
	vg_buf_add(&x->resp->body, p, n);
	return n;
}

/* libcurl header callback: keeps the lines of the final reply. */
static size_t
http_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct http_xfer *x = arg;
	size_t n = size * nmemb;

	/* A status line starts a new reply (after a 100 Continue). */
	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0)
		vg_buf_reset(&x->resp->headers);
	if (x->resp->headers.len + n <= HTTP_MAX_HEADERS)
		vg_buf_add(&x->resp->headers, p, n);
	return n;
}

/* Finds a header of the last reply; see http.h. */
int
vg_http_resp_header(const struct vg_http_resp *resp, const char *name,
    char *out, size_t size)
{
	const char *p = resp->headers.data, *end, *v;
	size_t n = strlen(name), k;

	if (p == NULL || size == 0)
		return 0;
	for (; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, '\n');
		if (end == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) <= n || p[n] != ':' ||
		    strncasecmp(p, name, n) != 0)
			continue;
		v = p + n + 1;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		k = (size_t)(end - v);
		while (k > 0 && (v[k - 1] == '\r' || v[k - 1] == ' ' ||
		    v[k - 1] == '\t'))
			k--;
		snprintf(out, size, "%.*s", (int)k, v);
		return 1;
	}
	return 0;
}

/* Appends s percent-encoded (RFC 3986 unreserved bytes stay). */
void
vg_http_escape(struct vg_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned char c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~')
			vg_buf_addc(b, (char)c);
		else {
			vg_buf_addc(b, '%');
			vg_buf_addc(b, hex[c >> 4]);
			vg_buf_addc(b, hex[c & 15]);
		}
	}
}

/* Sets every option of one request on the easy handle. */
static struct curl_slist *
http_setup(struct vg_http *h, const struct vg_http_req *req,
    struct http_xfer *x, const char *url)
{
	struct curl_slist *hdr = NULL, *l;
	char *ct;
	double ct_secs;

	curl_easy_reset(h->easy);
	h->errbuf[0] = '\0';
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, http_write);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h->easy, CURLOPT_HEADERFUNCTION, http_header);
	curl_easy_setopt(h->easy, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (h->resolve != NULL)
		curl_easy_setopt(h->easy, CURLOPT_RESOLVE, h->resolve);
	if (h->unix_path != NULL)
		curl_easy_setopt(h->easy, CURLOPT_UNIX_SOCKET_PATH,
		    h->unix_path);
	ct_secs = req->connect_timeout > 0 ? req->connect_timeout :
	    HTTP_CONNECT_TIMEOUT;
	curl_easy_setopt(h->easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(ct_secs * 1000));
	if (req->timeout > 0)
		curl_easy_setopt(h->easy, CURLOPT_TIMEOUT_MS,
		    (long)(req->timeout * 1000) > 0 ?
		    (long)(req->timeout * 1000) : 1L);
	if (strcmp(req->method, "GET") == 0)
		curl_easy_setopt(h->easy, CURLOPT_HTTPGET, 1L);
	else if (strcmp(req->method, "POST") == 0 ||
	    strcmp(req->method, "PUT") == 0 || req->body != NULL) {
		curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS,
		    req->body != NULL ? req->body : "");
		curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(req->body != NULL ? req->body_len : 0));
		if (strcmp(req->method, "POST") != 0)
			curl_easy_setopt(h->easy, CURLOPT_CUSTOMREQUEST,
			    req->method);
	} else
		curl_easy_setopt(h->easy, CURLOPT_CUSTOMREQUEST, req->method);
	if (req->body != NULL) {
		ct = vg_xasprintf("Content-Type: %s", req->content_type ?
		    req->content_type : "application/json");
		hdr = curl_slist_append(hdr, ct);
		free(ct);
	}
	/* No "Expect: 100-continue" round trip for larger bodies. */
	hdr = curl_slist_append(hdr, "Expect:");
	for (l = h->headers; l != NULL; l = l->next)
		hdr = curl_slist_append(hdr, l->data);
	if (hdr == NULL)
		abort();
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, hdr);
	return hdr;
}

/* Sends one request; see http.h. */
int
vg_http_do(struct vg_http *h, const struct vg_http_req *req,
    struct vg_http_resp *resp, struct vg_err *e)
{
	struct http_xfer x = { .req = req, .resp = resp };
	struct curl_slist *hdr;
	CURLcode cc = CURLE_OK;
	CURLMsg *msg;
	char *url;
	long os_errno = 0;
	int running = 1, left, rc = 0, stopped = 0;

	vg_buf_reset(&resp->body);
	vg_buf_reset(&resp->headers);
	resp->status = 0;
	x.max = req->max_body > 0 ? req->max_body : VG_HTTP_MAX_BODY;
	url = vg_xasprintf("%s%s", h->base, req->path);
	hdr = http_setup(h, req, &x, url);
	curl_multi_add_handle(h->multi, h->easy);
	while (running) {
		if ((req->stop != NULL && *req->stop) ||
		    (req->stop2 != NULL && *req->stop2)) {
			stopped = 1;
			break;
		}
		if (curl_multi_perform(h->multi, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(h->multi, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE)
				cc = msg->data.result;
		if (running && curl_multi_poll(h->multi, NULL, 0, HTTP_POLL_MS,
		    NULL) != CURLM_OK)
			break;
	}
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &resp->status);
	curl_easy_getinfo(h->easy, CURLINFO_OS_ERRNO, &os_errno);
	curl_multi_remove_handle(h->multi, h->easy);
	curl_slist_free_all(hdr);

	if (stopped)
		rc = vg_err_set(e, VG_ECANCELED, "%s %s on %s: interrupted",
		    req->method, req->path, h->endpoint);
	else if (running)
		rc = vg_err_set(e, VG_EIO, "%s %s on %s: libcurl multi "
		    "interface failed", req->method, req->path, h->endpoint);
	else if (x.over)
		rc = vg_err_set(e, VG_ELIMIT, "%s %s on %s: reply larger than "
		    "%zu bytes", req->method, req->path, h->endpoint, x.max);
	else if (x.sink_rc != 0)
		rc = vg_err_set(e, x.sink_rc, "%s %s on %s: reply refused by "
		    "its reader", req->method, req->path, h->endpoint);
	else if (cc == CURLE_OPERATION_TIMEDOUT)
		rc = vg_err_set(e, VG_ETIMEOUT, "%s %s on %s: %s",
		    req->method, req->path, h->endpoint, h->errbuf[0] ?
		    h->errbuf : curl_easy_strerror(cc));
	else if (cc == CURLE_COULDNT_CONNECT && os_errno != 0)
		/* curl names "localhost port 80" even for a unix socket. */
		rc = vg_err_set(e, VG_EIO, "%s %s on %s: cannot connect: %s",
		    req->method, req->path, h->endpoint, strerror(os_errno));
	else if (cc != CURLE_OK)
		rc = vg_err_set(e, VG_EIO, "%s %s on %s: %s", req->method,
		    req->path, h->endpoint, h->errbuf[0] ? h->errbuf :
		    curl_easy_strerror(cc));
	free(url);
	return rc;
}
