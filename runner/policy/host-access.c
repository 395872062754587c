/*
 * host-access.c - the policy's verdict on host access found by container
 * backends (see host-access.h).  The backends find the access (they know
 * their own configuration and, for docker, what named volumes bind);
 * this file only decides, from the policy mode and the allow rules of
 * category host-access, and words the reason.  The site policy file is
 * not consulted: the decision is made where the attempt runs, which has
 * the manifest's policy section but not the compiled policy.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "runner/policy/host-access.h"
#include "runner/policy/policy.h"

/* The first allow rule of category host-access that covers path (any
 * such rule when path is NULL), or NULL. */
static const struct vg_rule *
host_rule(const struct vg_policy_conf *conf, const char *path)
{
	const struct vg_rule *r;
	size_t i;

	if (conf == NULL)
		return NULL;
	for (i = 0; i < conf->nallow; i++) {
		r = &conf->allow[i];
		if (r->category == NULL ||
		    strcmp(r->category, VG_CAT_HOST_ACCESS) != 0)
			continue;
		if (path == NULL)
			return r;
		if (r->match != NULL && fnmatch(r->match, path, 0) == 0)
			return r;
	}
	return NULL;
}

/* Judges host access; see host-access.h. */
int
vg_policy_host_access(const struct vg_policy_conf *conf,
    const char *findings, const char *path, struct vg_host_verdict *v)
{
	const struct vg_rule *r;
	const char *nl;
	int first, more;

	if (v == NULL)
		return VG_EINVAL;
	memset(v, 0, sizeof(*v));
	if (findings == NULL || findings[0] == '\0') {
		v->allowed = 1;
		snprintf(v->reason, sizeof(v->reason), "no host access");
		return 0;
	}
	if (path == NULL && conf != NULL && conf->mode != NULL &&
	    strcmp(conf->mode, "auto-approve") == 0) {
		v->allowed = 1;
		snprintf(v->reason, sizeof(v->reason), "allowed by policy "
		    "mode auto-approve");
		return 0;
	}
	if ((r = host_rule(conf, path)) != NULL) {
		v->allowed = 1;
		v->rule = r->id;
		snprintf(v->reason, sizeof(v->reason), "allowed by policy "
		    "rule '%s'", r->id != NULL ? r->id : "?");
		return 0;
	}
	nl = strchr(findings, '\n');
	first = nl != NULL ? (int)(nl - findings) : (int)strlen(findings);
	more = nl != NULL && nl[1] != '\0';
	if (path != NULL)
		snprintf(v->reason, sizeof(v->reason), "%.*s; binding it needs "
		    "a policy allow rule with category '" VG_CAT_HOST_ACCESS
		    "' matching '%s'", first, findings, path);
	else
		snprintf(v->reason, sizeof(v->reason), "%.*s%s; allow with a "
		    "policy rule of category " VG_CAT_HOST_ACCESS, first,
		    findings, more ? " (and more)" : "");
	return 0;
}
