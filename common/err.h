/*
 * err.h - return codes and the fixed-size error record every fallible
 * function fills.
 *
 * Library code never prints and never exits: it returns 0 or a negative
 * enum vg_rc and describes the failure in a caller-supplied struct vg_err.
 * The buffer is fixed so that error paths never allocate.  Only the command
 * layer (runner/cmd-*.c) turns codes into exit statuses and output.
 */
#ifndef VG_ERR_H
#define VG_ERR_H

#include <stddef.h>

enum vg_rc {
	VG_OK = 0,
	VG_EINVAL = -1,		/* bad argument or bad input (user error) */
	VG_ENOMEM = -2,		/* allocation failed */
	VG_EIO = -3,		/* a system call failed; errno text in msg */
	VG_ENOENT = -4,		/* a named thing does not exist */
	VG_EPARSE = -5,		/* input could not be parsed */
	VG_EDENIED = -6,	/* refused by the policy gate or a check */
	VG_EUNSUPPORTED = -7,	/* not available on this host or build */
	VG_ETIMEOUT = -8,	/* a deadline passed */
	VG_EBACKEND = -9,	/* the backend (not the task) failed */
	VG_ESTATE = -10,	/* run state database trouble */
	VG_EAGAIN = -11,	/* transient; the caller may retry */
	VG_ELIMIT = -12,	/* input over a configured limit */
	VG_ECANCELED = -13,	/* cancelled by the user or a signal */
};

#define VG_ERR_MSG_MAX 1024

struct vg_err {
	int	rc;
	char	msg[VG_ERR_MSG_MAX];
};

/* Clears an error record; no allocation. */
void	vg_err_init(struct vg_err *e);

/*
 * Records rc and a printf-style message in e (which may be NULL) and
 * returns rc, so callers can write "return vg_err_set(e, VG_EINVAL, ...)".
 * Messages are lowercase, without a final period, subject in quotes.
 */
int	vg_err_set(struct vg_err *e, int rc, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* Like vg_err_set, with ": strerror(errno)" appended; rc is VG_EIO. */
int	vg_err_errno(struct vg_err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Prefixes the message already in e with more context ("loading x: "). */
int	vg_err_prefix(struct vg_err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* A short constant name for a return code ("invalid", "io", ...). */
const char *vg_rc_name(int rc);

#endif
