/*
 * policy.c - the public entry points of the gate: compile a policy from
 * the site file and the manifest's policy section, evaluate commands
 * (parse, analyse, apply rules, decide by mode) in the policy's arena,
 * and record decisions (the file writing is audit.c's).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "common/str.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/audit.h"
#include "runner/policy/bounds.h"
#include "runner/policy/explain.h"
#include "runner/policy/parse.h"
#include "runner/policy/paths.h"
#include "runner/policy/rules.h"

struct vg_policy {
	enum vg_policy_mode	 mode;
	struct pl_rules		 rules;
	char			*audit_log;
	struct pl_arena		 arena;
	struct vg_buf		 bufs[PL_MAX_BUFS];
	int			 audit_hold;	/* lines wait for a flush */
	int			 audit_fd;	/* open audit file, or -1 */
	struct vg_buf		 audit_held;	/* complete JSON lines */
	/* The directories of the last context (an_setup), reused while
	 * the caller passes the same context with the same strings. */
	struct pl_setup {
		const struct vg_policy_ctx *ctx;
		struct vg_policy_ctx	 key;
		size_t			 nenv;
		const char		*home, *cwd, *task_dir, *wscwd;
		const char		*tmproots[8];
		int			 ntmproots;
	}			 setup;
};

/* Appends l bytes of s to the string of o bytes in d (size cap), cut to
 * fit; returns its new length. */
static size_t
put_strn(char *d, size_t cap, size_t o, const char *s, size_t l)
{
	if (o + 1 >= cap)
		return o;
	if (l > cap - 1 - o)
		l = cap - 1 - o;
	memcpy(d + o, s, l);
	d[o + l] = '\0';
	return o + l;
}

/* Appends string s; see put_strn. */
static size_t
put_str(char *d, size_t cap, size_t o, const char *s)
{
	return put_strn(d, cap, o, s, strlen(s));
}

/* ---- modes ---- */

int
vg_policy_mode_parse(const char *s)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "auto-deny") == 0)
		return VG_POLICY_AUTO_DENY;
	if (strcmp(s, "auto-approve") == 0)
		return VG_POLICY_AUTO_APPROVE;
	if (strcmp(s, "interactive") == 0)
		return VG_POLICY_INTERACTIVE;
	return -1;
}

const char *
vg_policy_mode_name(enum vg_policy_mode m)
{
	switch (m) {
	case VG_POLICY_AUTO_DENY:
		return "auto-deny";
	case VG_POLICY_AUTO_APPROVE:
		return "auto-approve";
	case VG_POLICY_INTERACTIVE:
		return "interactive";
	}
	return "auto-deny";
}

enum vg_policy_mode
vg_policy_mode(const struct vg_policy *p)
{
	return p->mode;
}

int
vg_policy_set_mode(struct vg_policy *p, enum vg_policy_mode m,
    struct vg_err *e)
{
	if (m == VG_POLICY_AUTO_APPROVE && p->rules.forbid_approve)
		return vg_err_set(e, VG_EDENIED, "auto-approve is forbidden by "
		    "the site policy");
	if (m == VG_POLICY_INTERACTIVE && !isatty(0))
		return vg_err_set(e, VG_EINVAL, "interactive mode needs a "
		    "terminal on stdin");
	p->mode = m;
	return 0;
}

/* ---- open ---- */

/* Shared tail of vg_policy_open and vg_policy_open_mem. */
static int
policy_finish(struct vg_policy *p, const struct vg_policy_conf *conf,
    int layer_mode, struct vg_diag *diag, struct vg_err *e)
{
	int m = -1, rc;

	if (conf != NULL) {
		if ((rc = pl_rules_conf(&p->rules, conf, diag, e)) != 0)
			return rc;
		if (conf->mode != NULL) {
			m = vg_policy_mode_parse(conf->mode);
			if (m < 0) {
				vg_strv_pushf(&diag->lines, "policy.mode: must "
				    "be auto-deny, auto-approve or interactive, "
				    "not '%s'", conf->mode);
				return vg_err_set(e, VG_EINVAL,
				    "invalid policy mode '%s'", conf->mode);
			}
		}
		if (conf->audit_log != NULL)
			p->audit_log = vg_xstrdup(conf->audit_log);
	}
	if (p->audit_log == NULL && p->rules.audit_log != NULL)
		p->audit_log = vg_xstrdup(p->rules.audit_log);
	if (m < 0)
		m = layer_mode;
	if (m < 0)
		m = p->rules.site_mode;
	if (m == VG_POLICY_AUTO_APPROVE && p->rules.forbid_approve) {
		if ((conf != NULL && conf->mode != NULL) || layer_mode >= 0) {
			vg_strv_pushf(&diag->lines, "policy.mode: auto-approve "
			    "is forbidden by the site policy");
			return vg_err_set(e, VG_EDENIED, "auto-approve is "
			    "forbidden by the site policy");
		}
		m = VG_POLICY_AUTO_DENY;
	}
	if (m < 0)
		m = isatty(0) ? VG_POLICY_INTERACTIVE : VG_POLICY_AUTO_DENY;
	if (m == VG_POLICY_INTERACTIVE && !isatty(0))
		m = VG_POLICY_AUTO_DENY;
	p->mode = (enum vg_policy_mode)m;
	return 0;
}

/* Allocates an empty policy. */
static struct vg_policy *
policy_new(void)
{
	struct vg_policy *p = vg_xcalloc(1, sizeof(*p));

	p->rules.site_mode = -1;
	p->audit_fd = -1;
	return p;
}

int
vg_policy_open_mem(const struct vg_policy_conf *conf, const char *name,
    const char *site_text, size_t len, struct vg_policy **out,
    struct vg_diag *diag, struct vg_err *e)
{
	struct vg_policy *p = policy_new();
	int rc;

	*out = NULL;
	if (site_text != NULL && (rc = pl_rules_site(&p->rules,
	    name ? name : "policy", site_text, len, diag, e)) != 0)
		goto fail;
	if ((rc = policy_finish(p, conf, -1, diag, e)) != 0)
		goto fail;
	*out = p;
	return 0;
fail:
	vg_policy_free(p);
	return rc;
}

/*
 * Adds the rules of the policy file path (a manifest's policy.file, a
 * user config's, --set's, --policy's) on top of the site's: they are
 * the manifest's kind of rules, whatever the file says.  Its deny rules
 * add findings; its allow rules drop built-in findings only, never a
 * site deny rule or the floor; it may forbid auto-approve, never allow
 * it; a rule that lifts a floor rule or a list of safe volume drivers
 * (the site's alone) is an error naming the file.
 */
static int
add_file_layer(struct vg_policy *p, const char *path, int *mode,
    struct vg_diag *diag, struct vg_err *e)
{
	struct pl_rules x;
	struct vg_buf text = VG_BUF_INIT;
	struct pl_rule *r;
	size_t i;
	int rc;

	memset(&x, 0, sizeof(x));
	x.site_mode = -1;
	if ((rc = vg_read_file(path, PL_SITE_MAX, &text, e)) != 0) {
		vg_err_prefix(e, "policy file");
		vg_buf_release(&text);
		return rc;
	}
	rc = pl_rules_site(&x, path, vg_buf_str(&text), text.len, diag, e);
	vg_buf_release(&text);
	for (i = 0; rc == 0 && i < x.n; i++)
		if (x.v[i].floor != NULL) {
			vg_strv_pushf(&diag->lines, "%s: rule '%s' lifts %s; "
			    "only the site policy file (%s) can", path,
			    x.v[i].id + 5, x.v[i].floor, PL_SITE_DEFAULT);
			rc = vg_err_set(e, VG_EDENIED, "policy file '%s': rule "
			    "'%s' lifts %s, which only the site policy file "
			    "can", path, x.v[i].id + 5, x.v[i].floor);
		}
	if (rc == 0 && x.ndrivers > 0) {
		vg_strv_pushf(&diag->lines, "%s: safe_volume_drivers: only the "
		    "site policy file can list them", path);
		rc = vg_err_set(e, VG_EDENIED, "policy file '%s': "
		    "safe_volume_drivers can only be listed by the site "
		    "policy file", path);
	}
	for (i = 0; rc == 0 && i < x.n; i++) {
		/* Taken over as a manifest rule: "site:ID" -> "ID". */
		p->rules.v = vg_xgrow(p->rules.v, &p->rules.cap,
		    p->rules.n + 1, sizeof(*p->rules.v));
		r = &p->rules.v[p->rules.n++];
		*r = x.v[i];
		memmove(r->id, r->id + 5, strlen(r->id + 5) + 1);
		r->site = 0;
		if (r->match != NULL)
			p->rules.has_match = 1;
		if (r->command != NULL)
			p->rules.has_command = 1;
		x.v[i].id = x.v[i].match = x.v[i].reason = NULL;
		x.v[i].command = x.v[i].url = NULL;
	}
	if (rc == 0) {
		x.n = 0;
		if (x.forbid_approve)
			p->rules.forbid_approve = 1;	/* tightening only */
		if (x.site_mode >= 0 && *mode < 0)
			*mode = x.site_mode;
	}
	pl_rules_release(&x);
	return rc;
}

/*
 * The site's file (conf->site_file, set only by the site config, else
 * /etc/vigil/policy.yaml: a missing default is an empty site), then the
 * layers on top: conf->file and extra_file.
 */
int
vg_policy_open(const struct vg_policy_conf *conf, const char *extra_file,
    struct vg_policy **out, struct vg_diag *diag, struct vg_err *e)
{
	struct vg_buf text = VG_BUF_INIT;
	struct vg_policy *p;
	const char *file = conf != NULL ? conf->site_file : NULL;
	int rc, named = 1, mode = -1;

	*out = NULL;
	if (file == NULL) {
		file = PL_SITE_DEFAULT;
		named = 0;
	}
	p = policy_new();
	rc = vg_read_file(file, PL_SITE_MAX, &text, e);
	if (rc == VG_ENOENT && !named) {
		vg_err_init(e);
		rc = 0;		/* an empty site */
	} else if (rc == 0)
		rc = pl_rules_site(&p->rules, file, vg_buf_str(&text),
		    text.len, diag, e);
	else
		vg_err_prefix(e, "site policy");
	vg_buf_release(&text);
	if (rc == 0 && conf != NULL && conf->file != NULL)
		rc = add_file_layer(p, conf->file, &mode, diag, e);
	if (rc == 0 && extra_file != NULL)
		rc = add_file_layer(p, extra_file, &mode, diag, e);
	if (rc == 0)
		rc = policy_finish(p, conf, mode, diag, e);
	if (rc != 0) {
		vg_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void
vg_policy_free(struct vg_policy *p)
{
	int k;

	if (p == NULL)
		return;
	if (p->audit_held.len > 0) {
		struct vg_err e;

		vg_err_init(&e);
		(void)vg_policy_audit_flush(p, &e);
	}
	if (p->audit_fd >= 0)
		close(p->audit_fd);
	vg_buf_release(&p->audit_held);
	pl_rules_release(&p->rules);
	free(p->audit_log);
	pl_arena_release(&p->arena);
	for (k = 0; k < PL_MAX_BUFS; k++)
		vg_buf_release(&p->bufs[k]);
	free(p);
}

/* Records one decision; see policy.h. */
int
vg_policy_audit(struct vg_policy *p, const char *run_id, int task_index,
    const char *command, const struct vg_verdict *v, const char *verdict,
    vg_audit_sink sink, void *arg, struct vg_err *e)
{
	struct vg_buf red = VG_BUF_INIT;
	struct vg_audit_rec r;
	int rc = 0;

	vg_policy_redact(command, &red);
	memset(&r, 0, sizeof(r));
	r.time = vg_now();
	r.run_id = run_id;
	r.task_index = task_index;
	r.mode = vg_policy_mode_name(vg_policy_mode(p));
	r.command = vg_buf_str(&red);
	r.verdict = verdict;
	if (v->nfindings > 0) {
		r.category = v->findings[0].category;
		r.rule = v->findings[0].rule;
		r.reason = v->findings[0].reason;
	}
	if (p->audit_log != NULL && p->audit_hold)
		pl_audit_line(&p->audit_held, &r);
	else if (p->audit_log != NULL)
		rc = pl_audit_append(p->audit_log, &r, e);
	if (rc == 0 && sink != NULL)
		rc = sink(arg, &r, e);
	vg_buf_release(&red);
	return rc;
}

/* Holds audit file lines until vg_policy_audit_flush; see policy.h. */
void
vg_policy_audit_hold(struct vg_policy *p, int on)
{
	p->audit_hold = on;
}

/* Writes the held audit lines; see policy.h. */
int
vg_policy_audit_flush(struct vg_policy *p, struct vg_err *e)
{
	if (p->audit_log == NULL)
		return 0;
	return pl_audit_write(p->audit_log, &p->audit_fd, &p->audit_held, e);
}

/* The held audit lines; see policy.h. */
struct vg_buf *
vg_policy_audit_held(struct vg_policy *p)
{
	return p->audit_log != NULL && p->audit_hold ? &p->audit_held : NULL;
}

/* ---- evaluation ---- */

/* Fills the directories the analysis reasons about. */
static void
an_setup_new(struct pl_an *an, const struct vg_policy_ctx *ctx)
{
	static const char *const tmpvars[] = { "TMPDIR", "SCRATCH",
	    "SLURM_TMPDIR", "LOCAL_SCRATCH", "PSCRATCH", "TMP", "TEMP",
	    NULL };
	const struct vg_kvs *env = ctx ? ctx->env : NULL;
	struct pl_path cp;
	struct pl_field f;
	size_t k;
	int t;

	an->home = ctx && ctx->home ? ctx->home : NULL;
	an->cwd = ctx && ctx->cwd ? ctx->cwd : "/vigil-cwd/work";
	an->task_dir = ctx ? ctx->task_dir : NULL;
	an->npos = -1;
	an->tmproots[an->ntmproots++] = "/tmp";
	an->tmproots[an->ntmproots++] = "/var/tmp";
	an->tmproots[an->ntmproots++] = "/scratch";
	for (k = 0; env != NULL && k < env->n; k++) {
		const char *key = env->v[k].key, *val = env->v[k].value;

		if (key == NULL || val == NULL || val[0] != '/')
			continue;
		if (an->home == NULL && strcmp(key, "HOME") == 0)
			an->home = val;
		if (an->task_dir == NULL && strcmp(key, "VIGIL_TASK_DIR") == 0)
			an->task_dir = val;
		for (t = 0; tmpvars[t] != NULL; t++)
			if (strcmp(key, tmpvars[t]) == 0 && an->ntmproots < 8 &&
			    strlen(val) > 1)
				an->tmproots[an->ntmproots++] = val;
	}
	if (an->home == NULL)
		an->home = "/home/vigil-user";
	if (an->task_dir == NULL)
		an->task_dir = "/vigil-task";
	/* The starting directory is a workspace unless it is protected. */
	memset(&f, 0, sizeof(f));
	f.s = an->cwd;
	f.len = strlen(an->cwd);
	an->wscwd = NULL;
	an->startcwd = an->cwd;
	pl_path_classify(an, &f, &cp);
	if (cp.cls != PC_PROTECTED && cp.cls != PC_DEVICE)
		an->wscwd = an->cwd;
}

/* an_setup_new, or its result for the context of the previous call
 * when the caller passes the same one (every string is borrowed from
 * the context, so the same pointers mean the same directories). */
static void
an_setup(struct vg_policy *p, struct pl_an *an,
    const struct vg_policy_ctx *ctx)
{
	struct pl_setup *s = &p->setup;
	size_t nenv = ctx && ctx->env ? ctx->env->n : 0;

	if (ctx == NULL || s->ctx != ctx || s->key.cwd != ctx->cwd ||
	    s->key.home != ctx->home || s->key.task_dir != ctx->task_dir ||
	    s->key.env != ctx->env || s->nenv != nenv) {
		an_setup_new(an, ctx);
		s->ctx = ctx;
		if (ctx != NULL)
			s->key = *ctx;
		s->nenv = nenv;
		s->home = an->home;
		s->cwd = an->cwd;
		s->task_dir = an->task_dir;
		s->wscwd = an->wscwd;
		memcpy(s->tmproots, an->tmproots, sizeof(s->tmproots));
		s->ntmproots = an->ntmproots;
		return;
	}
	an->home = s->home;
	an->cwd = an->startcwd = s->cwd;
	an->task_dir = s->task_dir;
	an->wscwd = s->wscwd;
	an->npos = -1;
	memcpy(an->tmproots, s->tmproots, sizeof(an->tmproots));
	an->ntmproots = s->ntmproots;
}

/* True for the rule id of a finding no mode can approve. */
static int
is_hard(const char *rule)
{
	return strncmp(rule, "site:", 5) == 0 ||
	    strncmp(rule, "floor:", 6) == 0;
}

/* Copies findings into the verdict and writes the summary. */
static void
fill_verdict(struct vg_policy *p, struct pl_an *an, struct pl_finding *fv,
    int n, int hard, struct vg_verdict *v)
{
	int i, k = 0, pass;

	v->flagged = n > 0;
	v->hard = hard;
	/* Hard (floor and site) findings decide first: with any, a first
	 * pass takes them and a second the others. */
	for (pass = 0; pass < (hard ? 2 : 1); pass++)
		for (i = 0; i < n && k < VG_POLICY_MAX_FINDINGS; i++) {
			struct vg_finding *o;

			if (hard && is_hard(fv[i].rule) != (pass == 0))
				continue;
			o = &v->findings[k++];
			o->category = fv[i].category;
			vg_strlcpy(o->rule, fv[i].rule, sizeof(o->rule));
			vg_strlcpy(o->reason, fv[i].reason, sizeof(o->reason));
			o->span_off = fv[i].off;
			o->span_len = fv[i].len;
		}
	v->nfindings = k;
	switch (p->mode) {
	case VG_POLICY_AUTO_APPROVE:
		v->allowed = !hard;
		break;
	default:
		v->allowed = !v->flagged;
	}
	if (!v->flagged) {
		vg_strlcpy(v->summary, "allow", sizeof(v->summary));
	} else {
		/* "VERDICT: CATEGORY [RULE] 'TEXT': REASON", TEXT at most 80
		 * bytes and up to a NUL (a printf per verdict cost more than
		 * the rest of the verdict). */
		const struct vg_finding *f = &v->findings[0];
		size_t len = f->span_len > 80 ? 80 : f->span_len, o = 0;
		char *d = v->summary;
		size_t cap = sizeof(v->summary);

		d[0] = '\0';
		o = put_str(d, cap, o, v->allowed ? "approve" : "deny");
		o = put_str(d, cap, o, ": ");
		o = put_str(d, cap, o, f->category);
		o = put_str(d, cap, o, " [");
		o = put_str(d, cap, o, f->rule);
		o = put_str(d, cap, o, "] '");
		o = put_strn(d, cap, o, an->src + f->span_off,
		    strnlen(an->src + f->span_off, len));
		o = put_str(d, cap, o, "': ");
		put_str(d, cap, o, f->reason);
	}
}

int
vg_policy_eval(struct vg_policy *p, const char *command,
    const struct vg_policy_ctx *ctx, struct vg_verdict *v)
{
	if (command == NULL)
		return VG_EINVAL;
	return vg_policy_eval_n(p, command, strlen(command), ctx, v);
}

/* vg_policy_eval_n, and with x set vg_policy_explain. */
static int
eval(struct vg_policy *p, const char *command, size_t len,
    const struct vg_policy_ctx *ctx, struct vg_verdict *v,
    struct vg_explain *x)
{
	struct pl_trace tr[PL_MAX_FIND];
	struct pl_node *root = NULL;
	struct pl_an an;
	struct pl_parse_err err;
	struct pl_finding fv[PL_MAX_FIND];
	struct pl_stream in, out;
	size_t i;
	char *text;
	int n, hard;

	if (p == NULL || command == NULL || v == NULL)
		return VG_EINVAL;
	/* The verdict's head only: findings past nfindings are never
	 * read, and zeroing them all cost more than many verdicts. */
	v->allowed = v->flagged = v->hard = v->nfindings = 0;
	v->summary[0] = '\0';
	memset(&an, 0, sizeof(an));
	pl_arena_reset(&p->arena);
	an.a = &p->arena;
	an.ctx = ctx;
	an.bufs = p->bufs;
	an.work = PL_MAX_WORK;
	an.want_norm = p->rules.has_match || x != NULL;
	an.src = command;
	an.srclen = len;
	an_setup(p, &an, ctx);
	if (len > PL_MAX_INPUT) {
		pl_find(&an, VG_CAT_UNPARSEABLE, "builtin:too-long", 0, 0,
		    "the command is longer than %d bytes", PL_MAX_INPUT);
		goto decide;
	}
	/* A shell would stop at the NUL, a file reader would not: the
	 * text is ambiguous, so it is refused whole. */
	if ((text = memchr(command, '\0', len)) != NULL) {
		pl_find(&an, VG_CAT_UNPARSEABLE, "builtin:nul-byte",
		    (size_t)(text - command), 1, "the command contains a NUL "
		    "byte at offset %zu", (size_t)(text - command));
		goto decide;
	}
	/* The marker bytes must not come from the input. */
	text = pl_strndup(an.a, command, len);
	for (i = 0; i < len; i++)
		if (text[i] == PL_UNK || text[i] == PL_BOPEN ||
		    text[i] == PL_BCOMMA || text[i] == PL_BCLOSE)
			text[i] = '?';
	root = pl_parse(an.a, text, len, &an.work, &err);
	if (root == NULL) {
		size_t off = err.off < len ? err.off : len;

		pl_find(&an, VG_CAT_UNPARSEABLE, "builtin:parse", off,
		    len - off, "the command does not parse: %s",
		    err.msg ? err.msg : "syntax error");
		goto decide;
	}
	an.cur = text;
	pl_stream_unknown(&in, 0);
	pl_script_self_spawn(&an, root, 0, len);
	pl_analyse_node(&an, root, &in, &out);
	if (an.over) {
		an.nfind = 0;
		pl_find(&an, VG_CAT_UNPARSEABLE, "builtin:limit", 0, len,
		    "the command is over a limit: %s", an.overwhy ?
		    an.overwhy : "too complex");
	}
decide:
	pl_rules_apply(&p->rules, &an, fv, &n, &hard, x ? tr : NULL);
	fill_verdict(p, &an, fv, n, hard, v);
	if (x != NULL)
		pl_explain_fill(x, &an, root, tr);
	return 0;
}

int
vg_policy_eval_n(struct vg_policy *p, const char *command, size_t len,
    const struct vg_policy_ctx *ctx, struct vg_verdict *v)
{
	return eval(p, command, len, ctx, v, NULL);
}

int
vg_policy_explain(struct vg_policy *p, const char *command, size_t len,
    const struct vg_policy_ctx *ctx, struct vg_explain *x)
{
	if (x == NULL)
		return VG_EINVAL;
	memset(x, 0, sizeof(*x));
	return eval(p, command, len, ctx, &x->v, x);
}



int
vg_policy_eval_argv(struct vg_policy *p, char *const argv[],
    const struct vg_policy_ctx *ctx, struct vg_verdict *v)
{
	struct vg_buf b = VG_BUF_INIT;
	int k, rc;

	if (argv == NULL || argv[0] == NULL)
		return VG_EINVAL;
	vg_policy_argv_text(argv, &b);
	rc = vg_policy_eval(p, vg_buf_str(&b), ctx, v);
	/* Spans refer to the quoted text, which the caller does not hold. */
	for (k = 0; k < v->nfindings; k++) {
		v->findings[k].span_off = 0;
		v->findings[k].span_len = 0;
	}
	vg_buf_release(&b);
	return rc;
}

void
vg_policy_argv_text(char *const argv[], struct vg_buf *out)
{
	int k;

	for (k = 0; argv[k] != NULL; k++) {
		if (k > 0)
			vg_buf_addc(out, ' ');
		if (argv[k][0] == '\0')
			vg_buf_adds(out, "''");
		else
			vg_buf_shquote(out, argv[k]);
	}
}

void
vg_policy_env_init(struct vg_policy_env *pe)
{
	static const char *const vars[] = { "HOME", "VIGIL_TASK_DIR",
	    "TMPDIR", "SCRATCH", "SLURM_TMPDIR", "LOCAL_SCRATCH", "PSCRATCH",
	    "TMP", "TEMP", NULL };
	int k;

	memset(pe, 0, sizeof(*pe));
	if (getcwd(pe->cwd, sizeof(pe->cwd)) != NULL)
		pe->ctx.cwd = pe->cwd;
	pe->ctx.home = getenv("HOME");
	pe->ctx.task_dir = getenv("VIGIL_TASK_DIR");
	pe->env.v = vg_xcalloc(sizeof(vars) / sizeof(vars[0]),
	    sizeof(*pe->env.v));
	for (k = 0; vars[k] != NULL; k++) {
		char *v = getenv(vars[k]);

		if (v == NULL || v[0] == '\0')
			continue;
		pe->env.v[pe->env.n].key = (char *)(uintptr_t)vars[k];
		pe->env.v[pe->env.n].value = v;
		pe->env.n++;
	}
	pe->env.cap = pe->env.n;
	pe->ctx.env = &pe->env;
}

void
vg_policy_env_release(struct vg_policy_env *pe)
{
	free(pe->env.v);
	memset(&pe->env, 0, sizeof(pe->env));
}
