/*
 * gate.c - runs every task's command through the policy gate and audits
 * the decisions; asks on the terminal in interactive mode, where "all
 * similar" approves a flagged task and, for the rest of the run, every
 * later one whose deciding finding has the same rule (audited as
 * "ask-allow-similar").
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "runner/core/gate.h"
#include "common/path.h"

#include "runner/policy/policy.h"

/* The one-line failure reason of a refused task: the verdict's summary
 * (category, rule id, text, reason) and where the allow rule is. */
static char *
deny_reason(const struct vg_verdict *v)
{
	if (v->summary[0] == '\0')
		return vg_xstrdup("denied by the policy gate");
	if (!v->flagged)
		return vg_xstrdup(v->summary);
	return vg_xasprintf("%s (vigil policy explain CMD prints how to "
	    "allow it)", v->summary);
}

static const char *gate_mode = "auto-deny";

const char *
vg_gate_mode_name(void)
{
	return gate_mode;
}

/* Audit sink: stores the record. */
static int
audit_sink(void *arg, const struct vg_audit_rec *rec, struct vg_err *e)
{
	return vg_store_audit(arg, rec, e);
}

/* Answers to the question about a flagged task. */
enum answer {
	ANSWER_NO,
	ANSWER_YES,
	ANSWER_ALL,	/* this one and every later similar one */
};

/* What makes two flagged commands similar: their deciding finding's rule,
 * or its category when no rule is named. */
static const char *
similar_key(const struct vg_verdict *v)
{
	if (v->nfindings == 0)
		return "";
	if (v->findings[0].rule[0] != '\0')
		return v->findings[0].rule;
	return v->findings[0].category != NULL ? v->findings[0].category :
	    "";
}

/* Asks on /dev/tty whether a flagged task may run. */
static enum answer
ask(const struct vg_task *t, const char *cmd, const struct vg_verdict *v)
{
	struct vg_buf q = VG_BUF_INIT;
	enum answer a = ANSWER_NO;
	char ans[16];
	ssize_t n;
	int fd;

	if ((fd = open("/dev/tty", O_RDWR | O_CLOEXEC)) < 0)
		return ANSWER_NO;
	vg_buf_printf(&q, "vigil: task %d: %s\n  command: %s\nrun it anyway? "
	    "[y]es, [N]o, [a]ll similar (%s) for the rest of this run: ",
	    t->index, v->summary, cmd, similar_key(v));
	(void)!write(fd, q.data, q.len);
	n = read(fd, ans, sizeof(ans) - 1);
	if (n > 0) {
		ans[n] = '\0';
		if (ans[0] == 'y' || ans[0] == 'Y')
			a = ANSWER_YES;
		else if (ans[0] == 'a' || ans[0] == 'A')
			a = ANSWER_ALL;
	}
	close(fd);
	vg_buf_release(&q);
	return a;
}

/*
 * Decides a flagged task in interactive mode: approved already when the
 * user said "all similar" to its rule (*verdict "ask-allow-similar"),
 * else asked; an "all similar" answer adds the rule to approved.
 */
static int
decide(const struct vg_task *t, const char *cmd, const struct vg_verdict *v,
    struct vg_strv *approved, const char **verdict)
{
	const char *key = similar_key(v);
	enum answer a;
	size_t i;

	for (i = 0; i < approved->n; i++)
		if (strcmp(approved->v[i], key) == 0) {
			*verdict = "ask-allow-similar";
			return 1;
		}
	a = ask(t, cmd, v);
	if (a == ANSWER_ALL)
		vg_strv_push(approved, key);
	*verdict = a != ANSWER_NO ? "ask-allow" : "ask-deny";
	return a != ANSWER_NO;
}

/* The command of t as one line, for prompts and the audit. */
static void
command_text(const struct vg_task *t, struct vg_buf *b)
{
	size_t i;

	if (!t->command.is_argv) {
		vg_buf_adds(b, t->command.shell != NULL ? t->command.shell :
		    "");
		return;
	}
	for (i = 0; i < t->command.argv.n; i++) {
		if (i > 0)
			vg_buf_addc(b, ' ');
		vg_buf_shquote(b, t->command.argv.v[i]);
	}
}

int
vg_gate_tasks(const struct vg_manifest *m, const struct vg_taskset *ts,
    const char *run_id, struct vg_store *st, const struct vg_gate_opts *o,
    char ***deniedp, size_t *ndenied, struct vg_diag *diag,
    struct vg_err *e)
{
	struct vg_policy *p = NULL;
	struct vg_policy_ctx ctx;
	struct vg_verdict v;
	struct vg_buf cmd = VG_BUF_INIT;
	struct vg_task tmp = { 0 };
	struct vg_strv approved = VG_STRV_INIT;
	const struct vg_task *t;
	char **denied, cwd[4096], *task_dir = NULL;
	const char *verdict;
	size_t i;
	int rc, mode, interactive, in_txn = 0;

	*deniedp = NULL;
	*ndenied = 0;
	if ((rc = vg_policy_open(&m->policy, NULL, &p, diag, e)) != 0)
		return rc;
	if (o->force_deny)
		mode = VG_POLICY_AUTO_DENY;
	else if (o->mode != NULL) {
		if ((mode = vg_policy_mode_parse(o->mode)) < 0) {
			vg_policy_free(p);
			return vg_err_set(e, VG_EINVAL, "unknown policy mode "
			    "'%s' (use auto-deny, auto-approve or "
			    "interactive)", o->mode);
		}
	} else
		mode = -1;
	if (mode >= 0 && (rc = vg_policy_set_mode(p,
	    (enum vg_policy_mode)mode, e)) != 0) {
		vg_policy_free(p);
		return rc;
	}
	gate_mode = vg_policy_mode_name(vg_policy_mode(p));
	interactive = vg_policy_mode(p) == VG_POLICY_INTERACTIVE;
	memset(&ctx, 0, sizeof(ctx));
	ctx.cwd = getcwd(cwd, sizeof(cwd));
	ctx.home = getenv("HOME");
	denied = vg_xcalloc(ts->n + 1, sizeof(*denied));
	/* One transaction for all audit records, unless a prompt may hold
	 * the database lock for as long as the user takes. */
	if (st != NULL && !interactive) {
		if ((rc = vg_store_begin(st, e)) != 0)
			goto fail;
		in_txn = 1;
	}
	for (i = 0; i < ts->n; i++) {
		vg_task_release(&tmp);
		t = vg_taskset_at(ts, i, &tmp);
		free(task_dir);
		task_dir = NULL;
		if (o->home != NULL && run_id != NULL)
			task_dir = vg_xasprintf("%s/runs/%s/tasks/%d",
			    o->home, run_id, t->index);
		ctx.task_dir = task_dir;
		ctx.env = &t->env;
		memset(&v, 0, sizeof(v));
		if (t->command.is_argv)
			rc = vg_policy_eval_argv(p, t->command.argv.v, &ctx,
			    &v);
		else
			rc = vg_policy_eval(p, t->command.shell, &ctx, &v);
		if (rc != 0) {
			vg_err_set(e, rc, "policy gate failed on task %d",
			    t->index);
			goto fail;
		}
		vg_buf_reset(&cmd);
		command_text(t, &cmd);
		verdict = v.allowed ? "allow" : "deny";
		if (!v.allowed && interactive && v.flagged && !v.hard)
			v.allowed = decide(t, vg_buf_str(&cmd), &v, &approved,
			    &verdict);
		if (!v.allowed) {
			denied[i] = deny_reason(&v);
			(*ndenied)++;
		}
		if ((rc = vg_policy_audit(p, run_id, t->index,
		    vg_buf_str(&cmd), &v, verdict, st != NULL ? audit_sink :
		    NULL, st, e)) != 0)
			goto fail;
	}
	if (in_txn && (rc = vg_store_commit(st, e)) != 0)
		goto fail;
	vg_task_release(&tmp);
	vg_strv_release(&approved);
	free(task_dir);
	vg_buf_release(&cmd);
	vg_policy_free(p);
	*deniedp = denied;
	return 0;
fail:
	if (in_txn)
		vg_store_rollback(st);
	vg_strv_release(&approved);
	vg_task_release(&tmp);
	free(task_dir);
	vg_buf_release(&cmd);
	vg_policy_free(p);
	vg_gate_free(denied, ts->n);
	*ndenied = 0;
	return rc;
}

void
vg_gate_free(char **denied, size_t n)
{
	size_t i;

	if (denied == NULL)
		return;
	for (i = 0; i < n; i++)
		free(denied[i]);
	free(denied);
}


int
vg_gate_argv(const struct vg_manifest *m, char *const argv[],
    const char *run_id, int task_index, struct vg_store *st, char **denied,
    struct vg_err *e)
{
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_policy_ctx ctx;
	struct vg_verdict v;
	struct vg_buf cmd = VG_BUF_INIT;
	char cwd[4096];
	size_t i;
	int rc;

	*denied = NULL;
	if ((rc = vg_policy_open(&m->policy, NULL, &p, &diag, e)) != 0) {
		if (diag.lines.n > 0)
			vg_err_set(e, rc, "%s", diag.lines.v[0]);
		vg_diag_release(&diag);
		return rc;
	}
	vg_diag_release(&diag);
	/* Nobody is there to ask. */
	if (vg_policy_mode(p) == VG_POLICY_INTERACTIVE &&
	    (rc = vg_policy_set_mode(p, VG_POLICY_AUTO_DENY, e)) != 0)
		goto out;
	memset(&ctx, 0, sizeof(ctx));
	ctx.cwd = getcwd(cwd, sizeof(cwd));
	ctx.home = getenv("HOME");
	ctx.env = &m->env;
	memset(&v, 0, sizeof(v));
	if ((rc = vg_policy_eval_argv(p, argv, &ctx, &v)) != 0) {
		vg_err_set(e, rc, "policy gate failed on '%s'", argv[0]);
		goto out;
	}
	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			vg_buf_addc(&cmd, ' ');
		vg_buf_shquote(&cmd, argv[i]);
	}
	if (!v.allowed)
		*denied = deny_reason(&v);
	rc = vg_policy_audit(p, run_id, task_index, vg_buf_str(&cmd), &v,
	    v.allowed ? "allow" : "deny", st != NULL ? audit_sink : NULL, st,
	    e);
	if (rc != 0) {
		free(*denied);
		*denied = NULL;
	}
out:
	vg_buf_release(&cmd);
	vg_policy_free(p);
	return rc;
}
