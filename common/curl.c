/*
 * curl.c - libcurl, loaded on first use.
 *
 * libcurl brings in TLS, GSSAPI, LDAP, RTMP, SSH2, PSL and PKCS#11
 * libraries whose loading and constructors cost a vigil process more than
 * everything else in its start (`bench/startup.sh` measures it).  Most
 * vigil processes never speak HTTP: `vigil exec --session` on local,
 * `vigil status`, `vigil check`, `vigil task-exec` on a compute node.  So
 * vigil is not linked against libcurl; it defines the libcurl functions it
 * calls here, and the first call dlopen()s the library (the soname the
 * headers were built against, or $VIGIL_LIBCURL) and forwards.  A
 * missing library makes
 * curl_easy_init() and curl_multi_init() return NULL, and
 * vg_curl_error() says why, for the caller's message.
 *
 * curl_easy_setopt() and curl_multi_setopt() are variadic: the option's
 * number says its argument's type (CURLOPTTYPE_LONG, OBJECTPOINT,
 * FUNCTIONPOINT, OFF_T, BLOB bases of curl.h), so the argument is read as
 * that type and passed on as it.  curl_easy_getinfo()'s argument is always
 * a pointer.
 */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/curl.h"
#include "common/dl.h"

/* The functions vigil calls, in the order of curl.h. */
#define VG_CURL_FUNCS(X) \
	X(CURLcode, global_init, (long)) \
	X(CURL *, easy_init, (void)) \
	X(CURLcode, easy_setopt, (CURL *, CURLoption, ...)) \
	X(CURLcode, easy_perform, (CURL *)) \
	X(void, easy_cleanup, (CURL *)) \
	X(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...)) \
	X(void, easy_reset, (CURL *)) \
	X(const char *, easy_strerror, (CURLcode)) \
	X(struct curl_slist *, slist_append, (struct curl_slist *, \
	    const char *)) \
	X(void, slist_free_all, (struct curl_slist *)) \
	X(curl_version_info_data *, version_info, (CURLversion)) \
	X(CURLM *, multi_init, (void)) \
	X(CURLMcode, multi_add_handle, (CURLM *, CURL *)) \
	X(CURLMcode, multi_remove_handle, (CURLM *, CURL *)) \
	X(CURLMcode, multi_perform, (CURLM *, int *)) \
	X(CURLMcode, multi_cleanup, (CURLM *)) \
	X(CURLMsg *, multi_info_read, (CURLM *, int *)) \
	X(CURLMcode, multi_poll, (CURLM *, struct curl_waitfd *, \
	    unsigned int, int, int *)) \
	X(CURLMcode, multi_setopt, (CURLM *, CURLMoption, ...))

static struct {
#define X(ret, name, args) ret (*name) args;
	VG_CURL_FUNCS(X)
#undef X
} fn;

static int
bind_curl(struct vg_dl *d, void *h)
{
#define X(ret, name, args) \
	if (vg_dl_sym(d, h, "curl_" #name, (void **)&fn.name) != 0) \
		return -1;
	VG_CURL_FUNCS(X)
#undef X
	/* Once, before any thread makes a handle (libcurl 7.x's global
	 * initialisation is not thread-safe). */
	if (fn.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(d->why, sizeof(d->why), "curl_global_init failed");
		return -1;
	}
	return 0;
}

static struct vg_dl lib = {
	.soname = "libcurl.so.4", .env = "VIGIL_LIBCURL",
	.package = "libcurl4", .bind = bind_curl, .once = PTHREAD_ONCE_INIT,
};

static void
load(void)
{
	vg_dl_load(&lib);
}

/* Loads libcurl once; 0 when it is there. */
static int
ready(void)
{
	return vg_dl_ready(&lib, load);
}

const char *
vg_curl_error(void)
{
	return ready() != 0 ? lib.why : "out of memory";
}

/* Reads the variadic argument of option `opt` (a CURLOPTTYPE_* base plus
 * a number) by its type and calls `call` with it. */
#define VG_CURL_FORWARD(call, opt, ap) do { \
	if ((opt) < CURLOPTTYPE_OBJECTPOINT) \
		return call(va_arg(ap, long)); \
	if ((opt) < CURLOPTTYPE_FUNCTIONPOINT) \
		return call(va_arg(ap, void *)); \
	if ((opt) < CURLOPTTYPE_OFF_T) \
		return call(va_arg(ap, void (*)(void))); \
	if ((opt) < CURLOPTTYPE_BLOB) \
		return call(va_arg(ap, curl_off_t)); \
	return call(va_arg(ap, void *)); \
} while (0)

CURLcode
curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	va_list ap;
	CURLcode rc;

	if (ready() != 0)
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
#define CALL(v) (rc = fn.easy_setopt(c, opt, v), va_end(ap), rc)
	VG_CURL_FORWARD(CALL, (long)opt, ap);
#undef CALL
}

CURLMcode
curl_multi_setopt(CURLM *m, CURLMoption opt, ...)
{
	va_list ap;
	CURLMcode rc;

	if (ready() != 0)
		return CURLM_INTERNAL_ERROR;
	va_start(ap, opt);
#define CALL(v) (rc = fn.multi_setopt(m, opt, v), va_end(ap), rc)
	VG_CURL_FORWARD(CALL, (long)opt, ap);
#undef CALL
}

CURLcode
curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	va_list ap;
	void *p;

	if (ready() != 0)
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	p = va_arg(ap, void *);
	va_end(ap);
	return fn.easy_getinfo(c, info, p);
}

CURL *
curl_easy_init(void)
{
	return ready() == 0 ? fn.easy_init() : NULL;
}

CURLM *
curl_multi_init(void)
{
	return ready() == 0 ? fn.multi_init() : NULL;
}

curl_version_info_data *
curl_version_info(CURLversion v)
{
	static curl_version_info_data none = { .version = "none" };

	return ready() == 0 ? fn.version_info(v) : &none;
}

const char *
curl_easy_strerror(CURLcode rc)
{
	return ready() == 0 ? fn.easy_strerror(rc) : lib.why;
}

/* The rest take a handle only a loaded libcurl made. */
CURLcode
curl_easy_perform(CURL *c)
{
	return fn.easy_perform(c);
}

void
curl_easy_cleanup(CURL *c)
{
	fn.easy_cleanup(c);
}

void
curl_easy_reset(CURL *c)
{
	fn.easy_reset(c);
}

struct curl_slist *
curl_slist_append(struct curl_slist *l, const char *s)
{
	return ready() == 0 ? fn.slist_append(l, s) : NULL;
}

void
curl_slist_free_all(struct curl_slist *l)
{
	if (l != NULL)
		fn.slist_free_all(l);
}

CURLMcode
curl_multi_add_handle(CURLM *m, CURL *c)
{
	return fn.multi_add_handle(m, c);
}

CURLMcode
curl_multi_remove_handle(CURLM *m, CURL *c)
{
	return fn.multi_remove_handle(m, c);
}

CURLMcode
curl_multi_perform(CURLM *m, int *running)
{
	return fn.multi_perform(m, running);
}

CURLMcode
curl_multi_cleanup(CURLM *m)
{
	return fn.multi_cleanup(m);
}

CURLMsg *
curl_multi_info_read(CURLM *m, int *left)
{
	return fn.multi_info_read(m, left);
}

CURLMcode
curl_multi_poll(CURLM *m, struct curl_waitfd *extra, unsigned int n,
    int timeout_ms, int *numfds)
{
	return fn.multi_poll(m, extra, n, timeout_ms, numfds);
}
