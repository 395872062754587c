/*
 * host-access.c - the policy's verdict on host access found by container
 * backends (see host-access.h).  The backends find the access (they know
 * their own configuration and, for docker, what named volumes bind);
 * this file only decides, from the policy mode and the allow rules of
 * category host-access, and words the reason.  The decision is made
 * where the attempt runs, which has the manifest's policy section but
 * not the compiled policy; what the site file says about host access
 * (its safe volume drivers) is read there by vg_policy_host_site.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "runner/policy/host-access.h"
#include "runner/policy/policy.h"
#include "runner/policy/rules.h"

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

/* Reads the site facts from text; see host-access.h. */
int
vg_policy_host_site_text(const char *file, const char *text, size_t len,
    struct vg_host_site *s, struct vg_err *e)
{
	struct pl_rules rs = { .site_mode = -1 };
	struct vg_diag d = VG_DIAG_INIT;
	size_t k;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = pl_rules_site(&rs, file, text, len, &d, e);
	if (rc != 0 && d.lines.n > 0)
		vg_err_set(e, rc, "site policy %s", d.lines.v[0]);
	if (rc == 0) {
		s->file = vg_xstrdup(file);
		for (k = 0; k < rs.ndrivers; k++) {
			vg_strv_push(&s->drivers, rs.drivers[k].name);
			vg_strv_push(&s->reasons, rs.drivers[k].reason);
		}
	}
	vg_diag_release(&d);
	pl_rules_release(&rs);
	return rc;
}

/* Reads the site facts from the site file; see host-access.h. */
int
vg_policy_host_site(const struct vg_policy_conf *conf, struct vg_host_site *s,
    struct vg_err *e)
{
	struct vg_buf text = VG_BUF_INIT;
	/* The site's own file: a manifest's policy.file adds rules, it
	 * never names safe drivers. */
	const char *file = conf != NULL && conf->site_file != NULL ?
	    conf->site_file : NULL;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = vg_read_file(file ? file : PL_SITE_DEFAULT, PL_SITE_MAX, &text, e);
	if (rc == VG_ENOENT && file == NULL) {
		vg_err_init(e);
		rc = 0;
	} else if (rc == 0)
		rc = vg_policy_host_site_text(file ? file : PL_SITE_DEFAULT,
		    vg_buf_str(&text), text.len, s, e);
	else
		vg_err_prefix(e, "site policy: ");
	vg_buf_release(&text);
	return rc;
}

/* The site's reason for a safe driver; see host-access.h. */
const char *
vg_policy_safe_driver(const struct vg_host_site *s, const char *driver)
{
	size_t k;

	if (s == NULL || driver == NULL)
		return NULL;
	for (k = 0; k < s->drivers.n; k++)
		if (strcmp(s->drivers.v[k], driver) == 0)
			return s->reasons.v[k];
	return NULL;
}

/* Frees s. */
void
vg_policy_host_site_release(struct vg_host_site *s)
{
	free(s->file);
	vg_strv_release(&s->drivers);
	vg_strv_release(&s->reasons);
	memset(s, 0, sizeof(*s));
}
