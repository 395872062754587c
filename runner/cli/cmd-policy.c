/*
 * cmd-policy.c - vigil policy explain (how the gate judged a command,
 * part by part), and the setup and auditing vigil check and exec share.
 *
 * Every verdict of check and exec goes to the audit file (when
 * configured) and to the state database, opened on first use; explain
 * decides nothing and audits nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cli/cmd-policy.h"
#include "common/json.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/manifest-int.h"
#include "runner/core/store.h"

/* The value of option name, or NULL when the command has no such
 * option (vigil policy has no --audit-log). */
static const char *
opt_get(struct vg_args *a, const char *name)
{
	const struct vg_opt *o;

	for (o = a->cmd->opts; o != NULL && o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			return vg_args_get(a, name);
	return NULL;
}

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
	    vg_args_get(a, "mode"), opt_get(a, "audit-log"), cp);
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

/* ---- vigil policy explain ---- */

/* Appends the n bytes of s at most max, controls shown as '?', quoted
 * with '...' when longer. */
static void
put_text(struct vg_buf *b, const char *s, size_t n, size_t max)
{
	size_t i;

	vg_buf_addc(b, '\'');
	for (i = 0; i < n && i < max; i++)
		vg_buf_addc(b, (unsigned char)s[i] < 0x20 ? '?' : s[i]);
	vg_buf_addc(b, '\'');
	if (n > max)
		vg_buf_adds(b, "...");
}

/* What the mode makes of a finding no rule decided. */
static const char *
mode_says(enum vg_policy_mode m)
{
	switch (m) {
	case VG_POLICY_AUTO_APPROVE:
		return "auto-approve: it runs, audited";
	case VG_POLICY_INTERACTIVE:
		return "interactive: asked on the terminal";
	default:
		return "auto-deny: refused";
	}
}

/* Appends what decided finding f. */
static void
put_decision(struct vg_buf *b, const struct vg_explain_find *f,
    enum vg_policy_mode m)
{
	if (f->lifted != NULL)
		vg_buf_printf(b, "%s lifted by site rule '%s'; ", f->floor,
		    f->lifted);
	if (strcmp(f->decision, "floor") == 0)
		vg_buf_printf(b, "refused in every mode by the built-in floor "
		    "(%s); only a site allow rule with 'floor: %s' lifts it",
		    f->by, f->by + 6);
	else if (strcmp(f->decision, "allowed") == 0)
		vg_buf_printf(b, "allowed by rule '%s'", f->by);
	else if (strcmp(f->decision, "denied") == 0)
		vg_buf_printf(b, "taken over by deny rule '%s'%s", f->by,
		    strncmp(f->by, "site:", 5) == 0 ? " (a site rule: refused "
		    "in every mode)" : "");
	else if (strcmp(f->category, VG_CAT_UNPARSEABLE) == 0)
		vg_buf_printf(b, "no rule can allow it; %s", mode_says(
		    VG_POLICY_AUTO_DENY));
	else
		vg_buf_printf(b, "no rule covers it; the mode decides (%s)",
		    mode_says(m));
}

/* True when verdict finding f comes from a deny rule on a simple
 * command rather than from a finding of the analysis. */
static int
from_rule(const struct vg_explain *x, const struct vg_finding *f)
{
	size_t i;

	if (strncmp(f->rule, "builtin:", 8) == 0 ||
	    strncmp(f->rule, "floor:", 6) == 0)
		return 0;
	for (i = 0; i < x->nfinds; i++)
		if (x->finds[i].by != NULL && strcmp(x->finds[i].by,
		    f->rule) == 0)
			return 0;
	return 1;
}

/* The verdict's word. */
static const char *
verdict_word(const struct vg_verdict *v)
{
	return !v->flagged ? "allow" : v->allowed ? "approve" : "deny";
}

/* Writes the explanation as text. */
static void
explain_text(struct vg_buf *b, const char *cmd, size_t n,
    const struct vg_explain *x, enum vg_policy_mode m)
{
	struct vg_buf yaml = VG_BUF_INIT, note = VG_BUF_INIT;
	size_t i;
	int k, any = 0;

	vg_buf_adds(b, "command: ");
	put_text(b, cmd, n, 4096);
	vg_buf_adds(b, "\nwhole (for 'command:' rules): ");
	put_text(b, x->whole, strlen(x->whole), 4096);
	vg_buf_printf(b, "\nmode: %s\n\nstructure:\n",
	    vg_policy_mode_name(m));
	if (x->nnodes == 0)
		vg_buf_adds(b, "  (does not parse)\n");
	for (i = 0; i < x->nnodes; i++) {
		const struct vg_explain_node *e = &x->nodes[i];

		vg_buf_printf(b, "  %*s%s at %zu+%zu ", e->depth * 2, "",
		    e->kind, e->off, e->len);
		put_text(b, cmd + e->off, e->len, 72);
		if (e->op != NULL)
			vg_buf_printf(b, " then %s", e->op);
		vg_buf_addc(b, '\n');
	}
	vg_buf_adds(b, "\nsimple commands (words resolved, wrappers "
	    "removed):\n");
	if (x->ncmds == 0)
		vg_buf_adds(b, "  (none analysed)\n");
	for (i = 0; i < x->ncmds; i++) {
		const struct vg_explain_cmd *c = &x->cmds[i];

		vg_buf_printf(b, "  at %zu+%zu%s: ", c->off, c->len,
		    c->nested ? " (nested code)" : "");
		put_text(b, c->norm, strlen(c->norm), 200);
		vg_buf_addc(b, '\n');
	}
	vg_buf_adds(b, "\nfindings:\n");
	for (i = 0; i < x->nfinds; i++) {
		const struct vg_explain_find *f = &x->finds[i];

		vg_buf_printf(b, "  %s [%s] at %zu+%zu ", f->category,
		    f->rule, f->off, f->len);
		put_text(b, cmd + f->off, f->len, 120);
		vg_buf_printf(b, ": %s\n", f->reason);
		if (f->url != NULL)
			vg_buf_printf(b, "    source: %s (a 'url:' rule of "
			    "category remote-code can allow it)\n", f->url);
		vg_buf_adds(b, "    decided: ");
		put_decision(b, f, m);
		vg_buf_addc(b, '\n');
	}
	for (k = 0; k < x->v.nfindings; k++) {
		const struct vg_finding *f = &x->v.findings[k];

		if (!from_rule(x, f))
			continue;
		vg_buf_printf(b, "  %s [%s] at %zu+%zu ", f->category, f->rule,
		    f->span_off, f->span_len);
		put_text(b, cmd + f->span_off, f->span_len, 120);
		vg_buf_printf(b, ": %s\n    decided: deny rule '%s' matches "
		    "this simple command\n", f->reason, f->rule);
		any = 1;
	}
	if (x->nfinds == 0 && !any)
		vg_buf_adds(b, "  (none)\n");
	vg_buf_printf(b, "\nverdict: %s\n", x->v.flagged ? x->v.summary :
	    "allow");
	if (!x->v.allowed)
		vg_cmd_policy_allow(b, &x->v, cmd, n, &yaml, &note);
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

/* Writes n bytes of s as a JSON string of valid UTF-8. */
static void
jtext(struct vg_json_writer *w, struct vg_buf *tmp, const char *s, size_t n)
{
	vg_buf_reset(tmp);
	vg_json_utf8_clean(tmp, s, n);
	vg_json_strn(w, tmp->data != NULL ? tmp->data : "", tmp->len);
}

/* Writes a span: offset, length and the text. */
static void
jspan(struct vg_json_writer *w, struct vg_buf *tmp, const char *cmd,
    size_t off, size_t len)
{
	vg_json_key(w, "offset");
	vg_json_int(w, (long long)off);
	vg_json_key(w, "length");
	vg_json_int(w, (long long)len);
	vg_json_key(w, "text");
	jtext(w, tmp, cmd + off, len);
}

/* Writes the explanation as one JSON object. */
static void
explain_json(struct vg_buf *b, const char *cmd, size_t n,
    const struct vg_explain *x, enum vg_policy_mode m)
{
	struct vg_buf tmp = VG_BUF_INIT, yaml = VG_BUF_INIT;
	struct vg_buf note = VG_BUF_INIT;
	struct vg_json_writer w;
	enum vg_allow_where where;
	size_t i;

	vg_json_writer_init(&w, b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "command");
	jtext(&w, &tmp, cmd, n);
	vg_json_key(&w, "whole");
	jtext(&w, &tmp, x->whole, strlen(x->whole));
	vg_json_key(&w, "mode");
	vg_json_str(&w, vg_policy_mode_name(m));
	vg_json_key(&w, "structure");
	vg_json_arr_begin(&w);
	for (i = 0; i < x->nnodes; i++) {
		vg_json_obj_begin(&w);
		vg_json_key(&w, "depth");
		vg_json_int(&w, x->nodes[i].depth);
		vg_json_key(&w, "kind");
		vg_json_str(&w, x->nodes[i].kind);
		vg_json_key(&w, "then");
		vg_json_str(&w, x->nodes[i].op);
		jspan(&w, &tmp, cmd, x->nodes[i].off, x->nodes[i].len);
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	vg_json_key(&w, "commands");
	vg_json_arr_begin(&w);
	for (i = 0; i < x->ncmds; i++) {
		vg_json_obj_begin(&w);
		jspan(&w, &tmp, cmd, x->cmds[i].off, x->cmds[i].len);
		vg_json_key(&w, "normalised");
		jtext(&w, &tmp, x->cmds[i].norm, strlen(x->cmds[i].norm));
		vg_json_key(&w, "nested");
		vg_json_bool(&w, x->cmds[i].nested);
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	vg_json_key(&w, "findings");
	vg_json_arr_begin(&w);
	for (i = 0; i < x->nfinds; i++) {
		const struct vg_explain_find *f = &x->finds[i];

		vg_json_obj_begin(&w);
		vg_json_key(&w, "category");
		vg_json_str(&w, f->category);
		vg_json_key(&w, "rule");
		vg_json_str(&w, f->rule);
		vg_json_key(&w, "floor");
		vg_json_str(&w, f->floor);
		jspan(&w, &tmp, cmd, f->off, f->len);
		vg_json_key(&w, "reason");
		jtext(&w, &tmp, f->reason, strlen(f->reason));
		vg_json_key(&w, "url");
		if (f->url != NULL)
			jtext(&w, &tmp, f->url, strlen(f->url));
		else
			vg_json_null(&w);
		vg_json_key(&w, "decision");
		vg_json_str(&w, f->decision);
		vg_json_key(&w, "decided_by");
		vg_json_str(&w, f->by);
		vg_json_key(&w, "floor_lifted_by");
		vg_json_str(&w, f->lifted);
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	vg_json_key(&w, "verdict");
	vg_json_str(&w, verdict_word(&x->v));
	vg_json_key(&w, "summary");
	jtext(&w, &tmp, x->v.summary, strlen(x->v.summary));
	if (!x->v.allowed) {
		where = vg_policy_allow_rule(&x->v, cmd, n, &yaml, &note);
		vg_json_key(&w, "allow_rule");
		if (where == VG_ALLOW_NONE)
			vg_json_null(&w);
		else
			jtext(&w, &tmp, yaml.data, yaml.len);
		vg_json_key(&w, "allow_note");
		jtext(&w, &tmp, note.data, note.len);
	}
	vg_json_obj_end(&w);
	vg_buf_addc(b, '\n');
	vg_buf_release(&tmp);
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

static int
cmd_policy_exec(struct vg_args *a)
{
	struct vg_cmd_policy cp;
	struct vg_buf cmd = VG_BUF_INIT, out = VG_BUF_INIT;
	struct vg_explain x;
	int rc, k;

	if (strcmp(a->argv[0], "explain") != 0)
		return vg_cmd_usage_error(a, "unknown subcommand '%s' (valid: "
		    "explain)", a->argv[0]);
	if (a->argc < 2)
		return vg_cmd_usage_error(a, "explain needs a command");
	if ((rc = vg_cmd_policy_open(a, &cp)) != 0)
		return rc;
	for (k = 1; k < a->argc; k++) {
		if (k > 1)
			vg_buf_addc(&cmd, ' ');
		vg_buf_adds(&cmd, a->argv[k]);
	}
	vg_policy_explain(cp.policy, vg_buf_str(&cmd), cmd.len,
	    &cp.env.ctx, &x);
	if (vg_args_has(a, "json"))
		explain_json(&out, vg_buf_str(&cmd), cmd.len, &x,
		    vg_policy_mode(cp.policy));
	else
		explain_text(&out, vg_buf_str(&cmd), cmd.len, &x,
		    vg_policy_mode(cp.policy));
	fwrite(out.data, 1, out.len, stdout);
	rc = x.v.allowed ? VG_EXIT_OK : VG_EXIT_DENIED;
	vg_explain_release(&x);
	vg_buf_release(&out);
	vg_buf_release(&cmd);
	vg_cmd_policy_close(&cp);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_policy = {
	.name = "policy",
	.args_usage = "explain CMD...",
	.summary = "show how the policy gate judges a command",
	.help = "explain shows how the gate judged each part of a command: "
	    "the parsed\nstructure, each simple command after expansion and "
	    "unwrapping, each\nfinding with its category, rule, text and the "
	    "rule that decided it, and\nthe verdict under the mode, with the "
	    "allow rule a refusal needs.  Nothing\nruns and nothing is "
	    "audited.  Exits 0 when the command would be allowed,\n3 when "
	    "not (docs/policy.md).",
	.opts = (const struct vg_opt[]){
		VG_OPT_JSON("print one JSON object"),
		VG_OPT_POLICY,
		VG_OPT_MODE_GATE,
		{ NULL }
	},
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_policy_exec,
};
