/*
 * retry.c - retry.on, retry.max and retry.backoff read once for the
 * driver and for pack-exec (retry.h).
 */
#include "runner/core/retry.h"

unsigned
vg_retry_bit(enum vg_state st, int cause)
{
	switch (st) {
	case VG_ST_BACKEND_ERROR:
		/* A permanent cause (bad image, credentials, host access)
		 * fails the same way every time. */
		return cause == VG_CAUSE_TRANSIENT ? VG_RETRY_BACKEND_ERROR : 0;
	case VG_ST_FAILED:
		return VG_RETRY_FAILED;
	case VG_ST_TIMEOUT:
	case VG_ST_DEADLINE:
		return VG_RETRY_TIMEOUT;
	case VG_ST_OOM:
		return VG_RETRY_OOM;
	case VG_ST_NODE_FAIL:
	case VG_ST_BOOT_FAIL:
		return VG_RETRY_NODE_FAIL;
	case VG_ST_PREEMPTED:
		return VG_RETRY_PREEMPTED;
	case VG_ST_LOST:
		return VG_RETRY_LOST;
	default:
		return 0;
	}
}

int
vg_retry_wanted(const struct vg_retry *r, enum vg_state st, int cause,
    int tries)
{
	unsigned on = r->on != 0 ? r->on : ~0u;

	return (vg_retry_bit(st, cause) & on) != 0 && tries <= r->max;
}

double
vg_retry_backoff(const struct vg_retry *r, int tries)
{
	double b = r->backoff;
	int k;

	for (k = 1; k < tries && b > 0; k++) {
		b *= 2;
		if (r->backoff_max > 0 && b >= r->backoff_max)
			break;
	}
	if (r->backoff_max > 0 && b > r->backoff_max)
		b = r->backoff_max;
	return b;
}
