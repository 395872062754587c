/*
 * state.c - names of states and of backend failure causes.
 */
#include <string.h>

#include "common/err.h"
#include "common/state.h"

static const char *state_names[VG_ST__COUNT] = {
	[VG_ST_PENDING] = "PENDING",
	[VG_ST_QUEUED] = "QUEUED",
	[VG_ST_RUNNING] = "RUNNING",
	[VG_ST_SUSPENDED] = "SUSPENDED",
	[VG_ST_REQUEUED] = "REQUEUED",
	[VG_ST_SUCCEEDED] = "SUCCEEDED",
	[VG_ST_FAILED] = "FAILED",
	[VG_ST_TIMEOUT] = "TIMEOUT",
	[VG_ST_OOM] = "OOM",
	[VG_ST_CANCELLED] = "CANCELLED",
	[VG_ST_DENIED] = "DENIED",
	[VG_ST_LOST] = "LOST",
	[VG_ST_NODE_FAIL] = "NODE_FAIL",
	[VG_ST_PREEMPTED] = "PREEMPTED",
	[VG_ST_BOOT_FAIL] = "BOOT_FAIL",
	[VG_ST_DEADLINE] = "DEADLINE",
	[VG_ST_BACKEND_ERROR] = "BACKEND_ERROR",
	[VG_ST_SKIPPED] = "SKIPPED",
	[VG_ST_DEPENDENCY] = "DEPENDENCY_NEVER_SATISFIED",
	[VG_ST_CACHED] = "CACHED",
};

const char *
vg_state_name(enum vg_state s)
{
	if ((unsigned)s >= VG_ST__COUNT)
		return "UNKNOWN";
	return state_names[s];
}

int
vg_state_parse(const char *name)
{
	int i;

	for (i = 0; i < VG_ST__COUNT; i++)
		if (strcmp(state_names[i], name) == 0)
			return i;
	return -1;
}

int
vg_state_terminal(enum vg_state s)
{
	return s >= VG_ST_SUCCEEDED && s < VG_ST__COUNT;
}

int
vg_state_ok(enum vg_state s)
{
	return s == VG_ST_SUCCEEDED || s == VG_ST_CACHED;
}

const char *
vg_cause_name(enum vg_cause c)
{
	switch (c) {
	case VG_CAUSE_TRANSIENT:
		return "transient";
	case VG_CAUSE_PERMANENT:
		return "permanent";
	default:
		return NULL;
	}
}

enum vg_cause
vg_cause_of_rc(int rc)
{
	switch (rc) {
	case 0:
		return VG_CAUSE_NONE;
	case VG_EAGAIN:
	case VG_EIO:
	case VG_ETIMEOUT:
		return VG_CAUSE_TRANSIENT;
	default:
		return VG_CAUSE_PERMANENT;
	}
}
