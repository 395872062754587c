/*
 * unwrap.h - what the unwrapper (unwrap.c) offers the analyser:
 * recognising wrappers (sudo, env, timeout, nice, xargs, find -exec,
 * busybox ...) and finding the command they run.
 */
#ifndef VG_POLICY_UNWRAP_H
#define VG_POLICY_UNWRAP_H

#include "runner/policy/actx.h"

/* Returns the index of the wrapped command in c->argv (c->argc when
 * the wrapper runs none), or 0 when c is not a wrapper; sets *priv for
 * privilege wrappers, and *handled when the command was analysed here
 * already (xargs, env -S, flock -c ...). */
int	pl_unwrap(struct pl_an *an, struct pl_cmd *c, int *priv,
	    int *handled);

#endif
