/*
 * err.c - the error record: formatting into a fixed buffer, never
 * allocating, so it is safe on every error path.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

/* Clears an error record. */
void
vg_err_init(struct vg_err *e)
{
	if (e == NULL)
		return;
	e->rc = VG_OK;
	e->msg[0] = '\0';
}

/* Formats the message of e and stores rc; returns rc. */
int
vg_err_set(struct vg_err *e, int rc, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return rc;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->rc = rc;
	return rc;
}

/* Formats the message of e followed by the text of errno; returns VG_EIO. */
int
vg_err_errno(struct vg_err *e, const char *fmt, ...)
{
	int saved = errno;
	size_t len;
	va_list ap;

	if (e == NULL)
		return VG_EIO;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", strerror(saved));
	e->rc = VG_EIO;
	errno = saved;
	return VG_EIO;
}

/* Puts more context in front of the message already recorded in e. */
int
vg_err_prefix(struct vg_err *e, const char *fmt, ...)
{
	char old[VG_ERR_MSG_MAX];
	size_t len;
	va_list ap;

	if (e == NULL)
		return VG_EINVAL;
	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, "%s", old);
	return e->rc;
}

/* Returns a constant name for rc. */
const char *
vg_rc_name(int rc)
{
	switch (rc) {
	case VG_OK:		return "ok";
	case VG_EINVAL:		return "invalid";
	case VG_ENOMEM:		return "no-memory";
	case VG_EIO:		return "io";
	case VG_ENOENT:		return "not-found";
	case VG_EPARSE:		return "parse";
	case VG_EDENIED:	return "denied";
	case VG_EUNSUPPORTED:	return "unsupported";
	case VG_ETIMEOUT:	return "timeout";
	case VG_EBACKEND:	return "backend";
	case VG_ESTATE:		return "state";
	case VG_EAGAIN:		return "again";
	case VG_ELIMIT:		return "limit";
	case VG_ECANCELED:	return "cancelled";
	}
	return "unknown";
}
