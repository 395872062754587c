/*
 * cmd-policy.c - shared setup and auditing for vigil check and exec.
 *
 * Every verdict goes to the audit file (when configured) and to the state
 * database, opened on first use.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/cmd-policy.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/manifest-int.h"
#include "runner/core/store.h"

int
vg_cmd_policy_open(struct vg_args *a, struct vg_cmd_policy *cp)
{
	struct vg_policy_conf conf;
	struct vg_manifest *m = NULL;
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_err e;
	size_t k;
	int rc;

	/* The site's policy file is the one the site config names (a
	 * layer's never replaces it): read the configs for it. */
	vg_err_init(&e);
	if (vg_config_load_defaults(NULL, &m, &diag, &e) != 0) {
		for (k = 0; k < diag.lines.n; k++)
			fprintf(stderr, "%s\n", diag.lines.v[k]);
		vg_diag_release(&diag);
		return vg_cmd_fail(VG_EXIT_USAGE, "%s: %s", a->cmd->name,
		    e.msg);
	}
	vg_diag_release(&diag);
	memset(&conf, 0, sizeof(conf));
	conf.site_file = m->policy.site_file;
	rc = vg_cmd_policy_open_conf(a, &conf, vg_args_get(a, "policy"),
	    vg_args_get(a, "mode"), vg_args_get(a, "audit-log"), cp);
	vg_manifest_free(m);
	return rc;
}

int
vg_cmd_policy_open_conf(struct vg_args *a, const struct vg_policy_conf *base,
    const char *file, const char *mode, const char *audit_log,
    struct vg_cmd_policy *cp)
{
	struct vg_policy_conf conf = *base;
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_err e;
	size_t k;
	int m, rc;

	memset(cp, 0, sizeof(*cp));
	vg_err_init(&e);
	if (audit_log != NULL)
		conf.audit_log = (char *)(uintptr_t)audit_log;
	rc = vg_policy_open(&conf, file, &cp->policy, &diag, &e);
	if (rc != 0) {
		for (k = 0; k < diag.lines.n; k++)
			fprintf(stderr, "%s\n", diag.lines.v[k]);
		vg_diag_release(&diag);
		return vg_cmd_fail(rc == VG_EIO ? VG_EXIT_INTERNAL :
		    VG_EXIT_USAGE, "%s: %s", a->cmd->name, e.msg);
	}
	vg_diag_release(&diag);
	if (mode != NULL) {
		if ((m = vg_policy_mode_parse(mode)) < 0) {
			vg_policy_free(cp->policy);
			cp->policy = NULL;
			return vg_cmd_usage_error(a, "--mode must be auto-deny, "
			    "auto-approve or interactive, not '%s'", mode);
		}
		if ((rc = vg_policy_set_mode(cp->policy, m, &e)) != 0) {
			vg_policy_free(cp->policy);
			cp->policy = NULL;
			return vg_cmd_fail(rc == VG_EDENIED ? VG_EXIT_DENIED :
			    VG_EXIT_USAGE, "%s: %s", a->cmd->name, e.msg);
		}
	}
	vg_policy_env_init(&cp->env);
	return 0;
}

/* Sink that stores an audit record in the state database. */
static int
store_sink(void *arg, const struct vg_audit_rec *rec, struct vg_err *e)
{
	struct vg_cmd_policy *cp = arg;

	if (!cp->store_tried) {
		char *home = vg_home_dir();

		cp->store_tried = 1;
		if (home != NULL && vg_store_open(home, &cp->store, e) != 0)
			cp->store = NULL;
		free(home);
		if (cp->store == NULL)
			return e->rc ? e->rc : VG_ESTATE;
	}
	if (cp->store == NULL)
		return 0;
	return vg_store_audit(cp->store, rec, e);
}

int
vg_cmd_policy_audit(struct vg_cmd_policy *cp, const char *cmd,
    const struct vg_verdict *v, const char *verdict)
{
	return vg_cmd_policy_audit_in(cp, NULL, -1, cmd, v, verdict);
}

int
vg_cmd_policy_audit_in(struct vg_cmd_policy *cp, const char *run_id,
    int task, const char *cmd, const struct vg_verdict *v,
    const char *verdict)
{
	struct vg_err e;

	vg_err_init(&e);
	if (vg_policy_audit(cp->policy, run_id, task, cmd, v, verdict,
	    store_sink, cp, &e) != 0) {
		fprintf(stderr, "vigil: warning: audit: %s\n", e.msg);
		return -1;
	}
	return 0;
}

void
vg_cmd_policy_use_store(struct vg_cmd_policy *cp, struct vg_store *st)
{
	cp->store = st;
	cp->store_tried = 1;
	cp->store_borrowed = 1;
}

enum vg_allow_where
vg_cmd_policy_allow(struct vg_buf *out, const struct vg_verdict *v,
    const char *cmd, size_t n, struct vg_buf *yaml, struct vg_buf *note)
{
	enum vg_allow_where where;
	const char *s, *nl;

	vg_buf_reset(yaml);
	vg_buf_reset(note);
	where = vg_policy_allow_rule(v, cmd, n, yaml, note);
	vg_buf_adds(out, "  ");
	vg_buf_add(out, note->data, note->len);
	vg_buf_addc(out, '\n');
	for (s = vg_buf_str(yaml); *s != '\0'; s = nl + 1) {
		nl = strchr(s, '\n');
		vg_buf_adds(out, "    ");
		vg_buf_add(out, s, (size_t)(nl - s) + 1);
	}
	return where;
}

void
vg_cmd_policy_allow_stderr(const struct vg_verdict *v, const char *cmd)
{
	struct vg_buf out = VG_BUF_INIT, yaml = VG_BUF_INIT;
	struct vg_buf note = VG_BUF_INIT;

	vg_cmd_policy_allow(&out, v, cmd, strlen(cmd), &yaml, &note);
	fputs(vg_buf_str(&out), stderr);
	vg_buf_release(&out);
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

void
vg_cmd_policy_close(struct vg_cmd_policy *cp)
{
	if (!cp->store_borrowed)
		vg_store_close(cp->store);
	vg_policy_env_release(&cp->env);
	vg_policy_free(cp->policy);
	memset(cp, 0, sizeof(*cp));
}
