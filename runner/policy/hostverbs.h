/*
 * hostverbs.h - what the table of host-changing tools (hostverbs.c)
 * offers the classifier: findings for the long tail of tools that
 * change the host (power, tuning, GPUs, package keys and sources,
 * firewalls, upgrades), each judged by the verbs its manual names.
 */
#ifndef VG_POLICY_HOSTVERBS_H
#define VG_POLICY_HOSTVERBS_H

#include "runner/policy/actx.h"

/* Adds the finding of c's table line when c changes the host; its
 * reading forms (status, list, --help, --version ...) pass. */
void	pl_host_verbs(struct pl_an *an, const struct pl_cmd *c);

#endif
