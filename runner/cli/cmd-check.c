/*
 * cmd-check.c - vigil check: ask the policy gate about commands without
 * running them.  Each verdict names its category, rule id, the offending
 * span of the text and a one-line reason; the exit status is 0 when every
 * command is allowed and 3 when any is denied.  Every decision is audited
 * (the policy's JSON-lines file, and the state database).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "runner/cli/cmd.h"
#include "runner/cli/cmd-policy.h"
#include "common/json.h"
#include "runner/policy/policy.h"

static const struct vg_opt check_opts[] = {
	VG_OPT_JSON("print one JSON object per command"),
	VG_OPT_POLICY,
	VG_OPT_MODE_GATE,
	{ .name = "stdin",
	  .help = "read commands from stdin, one per line" },
	{ .name = "null", .shortname = '0',
	  .help = "with --stdin: commands are separated by NUL bytes" },
	VG_OPT_AUDIT_LOG,
	{ NULL }
};

/* Prints one verdict as text. */
static void
print_text(const char *cmd, const struct vg_verdict *v)
{
	int k;

	printf("%s: %s\n", !v->flagged ? "allow" : v->allowed ? "approve" :
	    "deny", cmd);
	for (k = 0; k < v->nfindings; k++) {
		const struct vg_finding *f = &v->findings[k];
		int len = f->span_len > 120 ? 120 : (int)f->span_len;

		printf("  %s [%s] at %zu+%zu '%.*s': %s\n", f->category,
		    f->rule, f->span_off, f->span_len, len, cmd + f->span_off,
		    f->reason);
	}
}

/* Prints one verdict as a JSON object on one line. */
static void
print_json(const char *cmd, const struct vg_verdict *v,
    enum vg_policy_mode mode)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	int k;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "command");
	vg_json_str(&w, cmd);
	vg_json_key(&w, "verdict");
	vg_json_str(&w, !v->flagged ? "allow" : v->allowed ? "approve" :
	    "deny");
	vg_json_key(&w, "mode");
	vg_json_str(&w, vg_policy_mode_name(mode));
	vg_json_key(&w, "findings");
	vg_json_arr_begin(&w);
	for (k = 0; k < v->nfindings; k++) {
		const struct vg_finding *f = &v->findings[k];

		vg_json_obj_begin(&w);
		vg_json_key(&w, "category");
		vg_json_str(&w, f->category);
		vg_json_key(&w, "rule");
		vg_json_str(&w, f->rule);
		vg_json_key(&w, "offset");
		vg_json_int(&w, (long long)f->span_off);
		vg_json_key(&w, "length");
		vg_json_int(&w, (long long)f->span_len);
		vg_json_key(&w, "text");
		vg_json_strn(&w, cmd + f->span_off, f->span_len);
		vg_json_key(&w, "reason");
		vg_json_str(&w, f->reason);
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	printf("%s\n", vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Checks one command: evaluate, print, audit.  Returns 1 when denied. */
static int
check_one(struct vg_cmd_policy *cp, const char *cmd, int json)
{
	struct vg_verdict v;

	vg_policy_eval(cp->policy, cmd, &cp->env.ctx, &v);
	if (json)
		print_json(cmd, &v, vg_policy_mode(cp->policy));
	else
		print_text(cmd, &v);
	vg_cmd_policy_audit(cp, cmd, &v, !v.allowed ? "deny" : "allow");
	return !v.allowed;
}

static int
cmd_check_exec(struct vg_args *a)
{
	struct vg_cmd_policy cp;
	struct vg_buf in = VG_BUF_INIT, cmd = VG_BUF_INIT;
	int json = vg_args_has(a, "json"), denied = 0, rc, k;
	char sep = vg_args_has(a, "null") ? '\0' : '\n';

	if (vg_args_has(a, "stdin") == (a->argc > 0))
		return vg_cmd_usage_error(a, "give one command, or --stdin");
	if (vg_args_has(a, "null") && !vg_args_has(a, "stdin"))
		return vg_cmd_usage_error(a, "-0 needs --stdin");
	if ((rc = vg_cmd_policy_open(a, &cp)) != 0)
		return rc;
	if (!vg_args_has(a, "stdin")) {
		for (k = 0; k < a->argc; k++) {
			if (k > 0)
				vg_buf_addc(&cmd, ' ');
			vg_buf_adds(&cmd, a->argv[k]);
		}
		denied = check_one(&cp, vg_buf_str(&cmd), json);
	} else {
		char chunk[65536];
		size_t n, s = 0, i;

		while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0)
			vg_buf_add(&in, chunk, n);
		if (ferror(stdin)) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "check: cannot read "
			    "stdin: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i <= in.len; i++) {
			if (i < in.len && in.data[i] != sep)
				continue;
			if (i > s) {
				char *line = vg_xstrndup(in.data + s, i - s);

				if (sep == '\n' && line[i - s - 1] == '\r')
					line[i - s - 1] = '\0';
				if (line[0] != '\0')
					denied |= check_one(&cp, line, json);
				free(line);
			}
			s = i + 1;
		}
	}
	rc = denied ? VG_EXIT_DENIED : VG_EXIT_OK;
out:
	vg_buf_release(&in);
	vg_buf_release(&cmd);
	vg_cmd_policy_close(&cp);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_check = {
	.name = "check",
	.args_usage = "[CMD]",
	.summary = "ask the policy gate about commands",
	.help = "Analyses shell commands the way the shell would run them "
	    "and prints each verdict with its category, rule id, the "
	    "offending text and a reason.  Exits 0 when every command is "
	    "allowed, 3 when any is denied.",
	.opts = check_opts,
	.min_args = 0,
	.max_args = -1,
	.exec = cmd_check_exec,
};
