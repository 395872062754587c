/*
 * cmd-exec.c - vigil exec: the gated terminal.  Checks one command with
 * the policy gate, then runs it in the chosen backend and returns its
 * exit code.  A denied command runs nothing: one line on stderr, exit 3.
 *
 * One word after "--" is a shell command (run as /bin/sh -c WORD); more
 * words are an argv vector run without a shell.  In interactive mode (a
 * terminal on stdin) a flagged command is explained and the user is
 * asked; auto-approve runs flagged commands but refuses any it cannot
 * audit.  The backend runs the command as a one-task attempt in a
 * private temporary task directory; what the command wrote to its
 * stdout and stderr files is copied to ours afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/buf.h"
#include "runner/cli/cmd.h"
#include "runner/cli/cmd-policy.h"
#include "common/path.h"

static const struct vg_opt exec_opts[] = {
	{ .name = "backend", .has_arg = 1, .arg = "NAME",
	  .help = "where to run: local (default), docker, ssh, apptainer, ..." },
	VG_OPT_POLICY,
	VG_OPT_MODE_GATE,
	{ .name = "timeout", .has_arg = 1, .arg = "SECONDS",
	  .help = "stop the command after SECONDS (exit 124)" },
	VG_OPT_AUDIT_LOG,
	{ NULL }
};

/* Explains a flagged command on the terminal and asks; 1 = run it. */
static int
ask(const char *cmd, const struct vg_verdict *v)
{
	char answer[16];
	FILE *tty;
	int k;

	fprintf(stderr, "vigil: the policy gate flags: %s\n", cmd);
	for (k = 0; k < v->nfindings; k++)
		fprintf(stderr, "  %s [%s]: %s\n", v->findings[k].category,
		    v->findings[k].rule, v->findings[k].reason);
	fprintf(stderr, "run it anyway? [y/N] ");
	fflush(stderr);
	if ((tty = fopen("/dev/tty", "re")) == NULL)
		return 0;
	if (fgets(answer, sizeof(answer), tty) == NULL)
		answer[0] = '\0';
	fclose(tty);
	return answer[0] == 'y' || answer[0] == 'Y';
}

/* Copies a file written by the attempt to fd; missing is fine. */
static void
copy_out(const char *dir, const char *name, FILE *to)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	char *path = vg_path_join(dir, name);

	vg_err_init(&e);
	if (vg_read_file(path, (size_t)1 << 30, &b, &e) == 0 && b.len > 0)
		fwrite(b.data, 1, b.len, to);
	fflush(to);
	vg_buf_release(&b);
	free(path);
}

/* Runs the allowed command; returns its exit status for vigil. */
static int
run_command(struct vg_args *a, const char *backend, double timeout)
{
	const struct vg_backend_ops *ops = vg_backend_find(backend);
	struct vg_manifest m;
	struct vg_task t;
	struct vg_attempt at;
	struct vg_result r;
	struct vg_err e;
	char dir[4096];
	const char *tmp = getenv("TMPDIR");
	int k, code;

	if (ops == NULL) {
		struct vg_buf names = VG_BUF_INIT;

		for (k = 0; vg_backends[k] != NULL; k++)
			vg_buf_printf(&names, "%s%s", k ? ", " : "",
			    vg_backends[k]->p.name);
		code = vg_cmd_usage_error(a, "unknown backend '%s' (valid: %s)",
		    backend, vg_buf_str(&names));
		vg_buf_release(&names);
		return code;
	}
	memset(&m, 0, sizeof(m));
	memset(&t, 0, sizeof(t));
	memset(&at, 0, sizeof(at));
	memset(&r, 0, sizeof(r));
	vg_err_init(&e);
	m.file = (char *)(uintptr_t)"<exec>";
	m.version = 1;
	m.backend = (char *)(uintptr_t)ops->p.name;
	m.timeout = timeout;
	m.kill_grace = 10;
	if (a->argc == 1) {
		m.command.shell = a->argv[0];
	} else {
		m.command.is_argv = 1;
		for (k = 0; k < a->argc; k++)
			vg_strv_push(&m.command.argv, a->argv[k]);
	}
	t.command = m.command;
	snprintf(dir, sizeof(dir), "%s/vigil-exec-XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		vg_strv_release(&m.command.argv);
		return vg_cmd_fail(VG_EXIT_INTERNAL, "exec: cannot create a "
		    "task directory in '%s': %s", tmp ? tmp : "/tmp",
		    strerror(errno));
	}
	at.m = &m;
	at.task = &t;
	at.run_id = "exec";
	at.task_dir = dir;
	at.attempt = 1;
	at.timeout = timeout;
	at.kill_grace = m.kill_grace;
	at.pidfd = -1;
	at.ops = ops;
	if (vg_backend_run(&at, &r, &e) != 0) {
		code = vg_cmd_fail(e.rc == VG_ETIMEOUT ? VG_EXIT_TIMEOUT :
		    VG_EXIT_INTERNAL, "exec: backend '%s': %s", ops->p.name,
		    e.msg);
	} else {
		copy_out(dir, "stdout", stdout);
		copy_out(dir, "stderr", stderr);
		if (r.state == VG_ST_TIMEOUT)
			code = VG_EXIT_TIMEOUT;
		else if (r.signal > 0)
			code = 128 + r.signal;
		else if (r.state == VG_ST_BACKEND_ERROR)
			code = vg_cmd_fail(VG_EXIT_INTERNAL, "exec: backend "
			    "'%s': %s", ops->p.name, r.reason);
		else
			code = r.exit_code & 0xff;
	}
	vg_err_init(&e);
	if (vg_rm_rf(dir, &e) != 0)
		fprintf(stderr, "vigil: warning: %s\n", e.msg);
	vg_strv_release(&m.command.argv);
	return code;
}

static int
cmd_exec_exec(struct vg_args *a)
{
	struct vg_cmd_policy cp;
	struct vg_verdict v;
	struct vg_buf shown = VG_BUF_INIT;
	const char *backend = vg_args_get(a, "backend");
	const char *verdict = "allow";
	long tmo;
	int rc, k;

	if (vg_args_int(a, "timeout", 0, 31L * 24 * 3600, 0, &tmo) != 0)
		return VG_EXIT_USAGE;
	if (backend != NULL && vg_backend_find(backend) == NULL)
		return run_command(a, backend, 0);	/* usage error */
	if ((rc = vg_cmd_policy_open(a, &cp)) != 0)
		return rc;
	if (a->argc == 1) {
		vg_buf_adds(&shown, a->argv[0]);
		vg_policy_eval(cp.policy, a->argv[0], &cp.env.ctx, &v);
	} else {
		for (k = 0; k < a->argc; k++) {
			if (k > 0)
				vg_buf_addc(&shown, ' ');
			vg_buf_shquote(&shown, a->argv[k]);
		}
		vg_policy_eval_argv(cp.policy, a->argv, &cp.env.ctx, &v);
	}
	if (!v.allowed && vg_policy_mode(cp.policy) == VG_POLICY_INTERACTIVE &&
	    !v.hard && isatty(0)) {
		verdict = ask(vg_buf_str(&shown), &v) ? "ask-allow" :
		    "ask-deny";
		v.allowed = strcmp(verdict, "ask-allow") == 0;
	} else if (!v.allowed) {
		verdict = "deny";
	}
	if (vg_cmd_policy_audit(&cp, vg_buf_str(&shown), &v, verdict) != 0 &&
	    v.allowed && v.flagged) {
		/* Running a flagged command unrecorded defeats the point. */
		v.allowed = 0;
		fprintf(stderr, "vigil: exec: denied: a flagged command runs "
		    "only when its decision can be audited\n");
		rc = VG_EXIT_DENIED;
		goto out;
	}
	if (!v.allowed) {
		fprintf(stderr, "vigil: exec: %s\n", strcmp(verdict, "ask-deny")
		    == 0 ? "not run" : v.summary);
		rc = VG_EXIT_DENIED;
		goto out;
	}
	rc = run_command(a, backend != NULL ? backend :
	    vg_plugin_default(VG_PLUGIN_BACKEND)->name, (double)tmo);
out:
	vg_buf_release(&shown);
	vg_cmd_policy_close(&cp);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_exec = {
	.name = "exec",
	.args_usage = "-- CMD...",
	.summary = "check one command, then run it in a backend",
	.help = "Checks the command with the policy gate and runs it in the "
	    "backend when allowed, returning its exit code.  One word is a "
	    "shell command; several words are run as an argv vector.  A "
	    "denied command runs nothing and exits 3 with the reason on "
	    "stderr; a timeout exits 124.",
	.opts = exec_opts,
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_exec_exec,
};
