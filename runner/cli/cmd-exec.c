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
 *
 * With --session ID the command runs in that session's sandbox instead
 * (runner/core/session.h): gated with the session's policy and mode and
 * audited under its id, then run through the session wrapper so that the
 * working directory and exports of the previous command are back, with
 * its output streamed as it comes (or, with --json, one object at the
 * end), stdin passed with --stdin, and --background returning a job id
 * at once while a detached runner carries the command to its end.
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
#include "common/json.h"
#include "common/path.h"
#include "common/proc.h"
#include "runner/cli/launch.h"
#include "runner/core/session.h"
#include <signal.h>
#include <sys/stat.h>

static const struct vg_opt exec_opts[] = {
	{ .name = "backend", .has_arg = 1, .arg = "NAME",
	  .help = "where to run: local (default), docker, ssh, apptainer, ..." },
	VG_OPT_POLICY,
	VG_OPT_MODE_GATE,
	{ .name = "timeout", .has_arg = 1, .arg = "SECONDS",
	  .help = "stop the command after SECONDS (exit 124)" },
	VG_OPT_AUDIT_LOG,
	{ .name = "session", .has_arg = 1, .arg = "ID",
	  .help = "run in session ID's sandbox (vigil session start)" },
	{ .name = "stdin", .help = "--session: pass our stdin to the command" },
	VG_OPT_JSON("--session: print one object (exit_code, stdout, stderr, "
	    "duration, truncated)"),
	{ .name = "background",
	  .help = "--session: print a job id and let the command run on" },
	{ .name = "open-stdin",
	  .help = "--background: keep the command's input open for "
	  "'vigil session input'" },
	{ .name = "output-limit", .has_arg = 1, .arg = "BYTES",
	  .help = "--json: bytes of each stream shown (default 65536)" },
	{ NULL }
};

/* Default bytes of each stream --json shows (the rest: in the files). */
#define JSON_OUTPUT_LIMIT	65536
/* Most --stdin takes, bytes. */
#define STDIN_MAX		((size_t)1 << 30)

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
		if (b.len > 0)
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
	m.kill_grace = VG_KILL_GRACE_DEFAULT;
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

/* ---- --session ---- */

static volatile sig_atomic_t exec_stop;

/* SIGINT, SIGTERM, SIGHUP: stop the command (its tree, not the session). */
static void
exec_on_signal(int sig)
{
	(void)sig;
	exec_stop = 1;
}

/* Catches the signals that stop a session command. */
static void
exec_catch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exec_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Output callback of a streamed command: straight to our fd. */
static void
stream_out(void *arg, int stream, const char *p, size_t n)
{
	(void)arg;
	(void)vg_write_all(stream == 2 ? 2 : 1, p, n);
}

/* Appends file dir/name to w as a string of at most limit bytes (the
 * head and the tail, with a note of what was left out); sets *cut. */
static void
json_output(struct vg_json_writer *w, const char *dir, const char *name,
    size_t limit, int *cut)
{
	struct vg_buf b = VG_BUF_INIT;
	char *p = vg_path_join(dir, name), *buf;
	struct stat sb;
	size_t half = limit / 2, size;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &sb) != 0) {
		vg_json_str(w, "");
		goto out;
	}
	size = (size_t)sb.st_size;
	buf = vg_xmalloc(size <= limit ? size + 1 : limit + 1);
	if (size <= limit) {
		size = (size_t)pread(fd, buf, size, 0) > 0 ? size : 0;
		vg_json_strn(w, buf, size);
	} else {
		*cut = 1;
		if (pread(fd, buf, half, 0) != (ssize_t)half ||
		    pread(fd, buf + half, limit - half, (off_t)(size - (limit -
		    half))) != (ssize_t)(limit - half))
			memset(buf, '?', limit);
		vg_buf_add(&b, buf, half);
		vg_buf_printf(&b, "\n[vigil: %zu bytes left out; the whole "
		    "output is in %s]\n", size - limit, p);
		vg_buf_add(&b, buf + half, limit - half);
		vg_json_strn(w, b.data, b.len);
	}
	free(buf);
out:
	if (fd >= 0)
		close(fd);
	vg_buf_release(&b);
	free(p);
}

/* Prints the --json object of a finished job. */
static void
print_json(const struct vg_sess *ss, const struct vg_sess_job *j,
    const struct vg_result *r, int code, size_t limit)
{
	struct vg_json_writer w;
	struct vg_buf b = VG_BUF_INIT;
	int cut = 0;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "session");
	vg_json_str(&w, ss->rec.id);
	vg_json_key(&w, "job");
	vg_json_int(&w, j->job);
	vg_json_key(&w, "exit_code");
	vg_json_int(&w, code);
	vg_json_key(&w, "state");
	vg_json_str(&w, vg_state_name(r->state));
	vg_json_key(&w, "stdout");
	json_output(&w, j->dir, "stdout", limit, &cut);
	vg_json_key(&w, "stderr");
	json_output(&w, j->dir, "stderr", limit, &cut);
	vg_json_key(&w, "duration");
	vg_json_num(&w, r->ended > r->started ? r->ended - r->started : 0);
	vg_json_key(&w, "truncated");
	vg_json_bool(&w, cut);
	vg_json_key(&w, "output_dir");
	vg_json_str(&w, j->dir);
	if (r->state == VG_ST_BACKEND_ERROR) {
		vg_json_key(&w, "error");
		vg_json_str(&w, r->reason);
	}
	vg_json_obj_end(&w);
	vg_buf_addc(&b, '\n');
	if (b.len > 0)
		fwrite(b.data, 1, b.len, stdout);
	vg_buf_release(&b);
}

/* The exit status of vigil exec for a job's result. */
static int
result_code(const struct vg_result *r)
{
	if (r->state == VG_ST_TIMEOUT)
		return VG_EXIT_TIMEOUT;
	if (r->state == VG_ST_CANCELLED)
		return VG_EXIT_CANCELLED;
	if (r->state == VG_ST_BACKEND_ERROR)
		return VG_EXIT_INTERNAL;
	if (r->signal > 0)
		return 128 + r->signal;
	return r->exit_code & 0xff;
}

/* Reads all of our stdin for --stdin. */
static int
read_stdin(struct vg_buf *in)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return vg_cmd_fail(VG_EXIT_INTERNAL, "exec: reading "
			    "stdin: %s", strerror(errno));
		if (in->len + (size_t)n > STDIN_MAX)
			return vg_cmd_fail(VG_EXIT_USAGE, "exec: stdin is "
			    "over %zu bytes", STDIN_MAX);
		vg_buf_add(in, buf, (size_t)n);
	}
	return 0;
}

/*
 * --background: a detached runner (double fork, setsid, stdio to
 * /dev/null and the job's runner.log) carries the job; returns once it
 * has recorded itself, so that jobs, output and kill see it at once.
 */
static int
run_background(struct vg_sess *ss, struct vg_session_cmd *c, int json,
    int open_stdin)
{
	struct vg_store *st = NULL;
	struct vg_result r;
	struct vg_err e;
	char *log, ok;
	int pfd[2], n;
	pid_t pid, holder = 0;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "pipe: %s",
		    strerror(errno));
	if ((pid = vg_launch_detach()) < 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "fork: %s",
		    strerror(errno));
	if (pid == 0) {
		close(pfd[0]);
		log = vg_path_join(c->dir, "runner.log");
		if (vg_launch_redirect(log) != 0)
			_exit(1);
		free(log);
		vg_err_init(&e);
		if (vg_sess_job_runner(c->dir, &e) != 0) {
			fprintf(stderr, "vigil: job %s: %s\n", c->job, e.msg);
			_exit(1);
		}
		(void)!write(pfd[1], "1", 1);
		close(pfd[1]);
		exec_catch();
		c->out = NULL;
		c->stop = &exec_stop;
		vg_err_init(&e);
		memset(&r, 0, sizeof(r));
		if (vg_launch_store(&st, NULL) != 0)
			_exit(VG_EXIT_INTERNAL);
		/* A writer on the input FIFO until `session input --close`. */
		if (open_stdin && (holder = vg_sess_stdin_hold(c->dir,
		    &e)) < 0) {
			fprintf(stderr, "vigil: job %s: %s\n", c->job, e.msg);
			vg_err_init(&e);
			holder = 0;
		}
		if (vg_sess_job_run(st, ss, c, &r, &e) != 0)
			fprintf(stderr, "vigil: job %s: %s\n", c->job, e.msg);
		vg_sess_stdin_release(holder);
		vg_store_close(st);
		_exit(0);
	}
	close(pfd[1]);
	n = (int)read(pfd[0], &ok, 1);
	close(pfd[0]);
	if (n != 1)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "exec: the runner of job "
		    "%s did not start (see %s/runner.log)", c->job, c->dir);
	if (json)
		printf("{\"session\": \"%s\", \"job\": %s}\n", ss->rec.id,
		    c->job);
	else
		printf("%s\n", c->job);
	return 0;
}

/* Prints a --json object for a command the gate refused. */
static void
print_denied_json(const struct vg_sess *ss, const char *reason,
    const struct vg_verdict *v, const char *cmd)
{
	struct vg_buf b = VG_BUF_INIT, yaml = VG_BUF_INIT, note = VG_BUF_INIT;
	struct vg_json_writer w;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "session");
	vg_json_str(&w, ss->rec.id);
	vg_json_key(&w, "denied");
	vg_json_bool(&w, 1);
	vg_json_key(&w, "exit_code");
	vg_json_int(&w, VG_EXIT_DENIED);
	vg_json_key(&w, "reason");
	vg_json_str(&w, reason);
	/* A refusal by the rules (not an answer) says how to allow it. */
	if (v != NULL) {
		vg_json_key(&w, "allow_rule");
		if (vg_policy_allow_rule(v, cmd, strlen(cmd), &yaml, &note) ==
		    VG_ALLOW_NONE)
			vg_json_null(&w);
		else
			vg_json_strn(&w, yaml.data, yaml.len);
		vg_json_key(&w, "allow_note");
		vg_json_strn(&w, note.data, note.len);
	}
	vg_json_obj_end(&w);
	vg_buf_addc(&b, '\n');
	if (b.len > 0)
		fwrite(b.data, 1, b.len, stdout);
	vg_buf_release(&b);
	vg_buf_release(&yaml);
	vg_buf_release(&note);
}

/* vigil exec --session ID ... -- CMD */
static int
exec_session(struct vg_args *a, double timeout)
{
	static const char *const not_here[] = { "backend", "policy", "mode",
	    NULL };
	struct vg_buf cmd = VG_BUF_INIT, in = VG_BUF_INIT, cwd = VG_BUF_INIT;
	struct vg_store *st = NULL;
	struct vg_cmd_policy cp;
	struct vg_session_cmd c;
	struct vg_sess_job j;
	struct vg_verdict v;
	struct vg_result r;
	struct vg_sess ss;
	struct vg_err e;
	const char *verdict = "allow", *stdin_data = NULL;
	char job[16], *p;
	long limit;
	int rc, k, txn, audited, json = vg_args_has(a, "json"),
	    bg = vg_args_has(a, "background");

	for (k = 0; not_here[k] != NULL; k++)
		if (vg_args_has(a, not_here[k]))
			return vg_cmd_usage_error(a, "--%s is the session's; "
			    "not with --session", not_here[k]);
	if (vg_args_int(a, "output-limit", 64, 1L << 30, JSON_OUTPUT_LIMIT,
	    &limit) != 0)
		return VG_EXIT_USAGE;
	if (bg && vg_args_has(a, "stdin"))
		return vg_cmd_usage_error(a, "--stdin does not go with "
		    "--background (--open-stdin keeps a background command's "
		    "input open for 'vigil session input')");
	if (vg_args_has(a, "open-stdin") && !bg)
		return vg_cmd_usage_error(a, "--open-stdin goes with "
		    "--background (a foreground command takes --stdin)");
	memset(&cp, 0, sizeof(cp));
	memset(&ss, 0, sizeof(ss));
	if (a->argc == 1) {
		vg_buf_adds(&cmd, a->argv[0]);
	} else {
		for (k = 0; k < a->argc; k++) {
			if (k > 0)
				vg_buf_addc(&cmd, ' ');
			vg_buf_shquote(&cmd, a->argv[k]);
		}
	}
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		goto out;
	vg_err_init(&e);
	if ((rc = vg_sess_load(st, vg_args_get(a, "session"), &ss, &e)) != 0 ||
	    (rc = vg_sess_check(st, &ss, &e)) != 0) {
		rc = vg_cmd_fail(rc == VG_ENOENT || rc == VG_EINVAL ?
		    VG_EXIT_USAGE : vg_cmd_exit_for_rc(rc), "exec: %s", e.msg);
		goto out;
	}
	if (vg_args_has(a, "open-stdin") &&
	    !(ss.ops->caps & VG_BCAP_STDIN_STREAM)) {
		rc = vg_cmd_fail(VG_EXIT_USAGE, "exec: --open-stdin: backend "
		    "'%s' reads a command's input whole before it starts; "
		    "input after the start works with local, docker and "
		    "apptainer sessions", ss.ops->p.name);
		goto out;
	}
	if ((rc = vg_cmd_policy_open_conf(a, &ss.m->policy,
	    ss.rec.policy[0] ? ss.rec.policy : NULL, ss.rec.mode,
	    vg_args_get(a, "audit-log"), &cp)) != 0)
		goto out;
	/* The decision goes to the database already open here. */
	vg_cmd_policy_use_store(&cp, st);
	/* Paths in the command are judged from where it will run, when
	 * that is a path of this host too. */
	if (strcmp(ss.rec.root, ss.rec.dir) == 0) {
		p = vg_path_join(ss.rec.dir, "cwd");
		if (vg_read_file(p, 4096, &cwd, NULL) == 0 && cwd.len > 1) {
			cwd.data[cwd.len - 1] = '\0';
			cp.env.ctx.cwd = cwd.data;
		} else {
			free(p);
			p = vg_path_join(ss.rec.dir, "work");
			vg_buf_adds(&cwd, p);
			cp.env.ctx.cwd = vg_buf_str(&cwd);
		}
		free(p);
	}
	vg_policy_eval(cp.policy, vg_buf_str(&cmd), &cp.env.ctx, &v);
	if (!v.allowed && vg_policy_mode(cp.policy) == VG_POLICY_INTERACTIVE &&
	    !v.hard && isatty(0) && !vg_args_has(a, "stdin")) {
		verdict = ask(vg_buf_str(&cmd), &v) ? "ask-allow" : "ask-deny";
		v.allowed = strcmp(verdict, "ask-allow") == 0;
	} else if (!v.allowed) {
		verdict = "deny";
	}
	/* Read before the transaction below, which must not wait on it. */
	if (v.allowed && vg_args_has(a, "stdin") && (rc = read_stdin(&in)) !=
	    0)
		goto out;
	if (vg_args_has(a, "stdin"))
		stdin_data = in.data != NULL ? in.data : "";
	/* One transaction for the audit row, the job's number and the
	 * touch; without it (the database busy) each goes alone. */
	txn = vg_store_begin(st, &e) == 0;
	vg_err_init(&e);
	audited = vg_cmd_policy_audit_in(&cp, ss.rec.id, -1, vg_buf_str(&cmd),
	    &v, verdict) == 0;
	if (!audited && txn) {
		vg_store_rollback(st);
		txn = 0;
	}
	if (!audited && v.allowed && v.flagged) {
		v.allowed = 0;
		snprintf(v.summary, sizeof(v.summary), "denied: a flagged "
		    "command runs only when its decision can be audited");
	}
	if (!v.allowed) {
		if (txn && vg_store_commit(st, &e) != 0) {
			vg_store_rollback(st);
			fprintf(stderr, "vigil: warning: audit: %s\n", e.msg);
		}
		if (json)
			print_denied_json(&ss, v.summary, strcmp(verdict,
			    "deny") == 0 && v.flagged ? &v : NULL,
			    vg_buf_str(&cmd));
		fprintf(stderr, "vigil: exec: %s\n", strcmp(verdict,
		    "ask-deny") == 0 ? "not run" : v.summary);
		if (strcmp(verdict, "deny") == 0 && v.flagged)
			vg_cmd_policy_allow_stderr(&v, vg_buf_str(&cmd));
		rc = VG_EXIT_DENIED;
		goto out;
	}
	if (txn && ((rc = vg_sess_job_number(st, &ss, &k, &e)) != 0 ||
	    (rc = vg_store_commit(st, &e)) != 0))
		vg_store_rollback(st);
	else if (txn)
		rc = vg_sess_job_make(&ss, k, vg_buf_str(&cmd), bg, stdin_data,
		    in.len, &j, &e);
	else
		rc = vg_sess_job_new(st, &ss, vg_buf_str(&cmd), bg, stdin_data,
		    in.len, &j, &e);
	if (rc != 0) {
		rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "exec: %s", e.msg);
		goto out;
	}
	snprintf(job, sizeof(job), "%d", j.job);
	memset(&c, 0, sizeof(c));
	c.job = job;
	c.command = vg_buf_str(&cmd);
	c.dir = j.dir;
	p = vg_path_join(j.dir, "stdin");
	c.stdin_path = vg_args_has(a, "stdin") ? p : NULL;
	if (vg_args_has(a, "open-stdin")) {
		if ((rc = vg_sess_stdin_make(j.dir, &e)) != 0) {
			rc = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "exec: %s",
			    e.msg);
			free(p);
			goto out;
		}
		c.stdin_path = p;
	}
	c.save = !bg;
	c.timeout = timeout;
	c.kill_grace = ss.m->kill_grace;
	if (bg) {
		rc = run_background(&ss, &c, json,
		    vg_args_has(a, "open-stdin"));
		free(p);
		goto out;
	}
	exec_catch();
	c.stop = &exec_stop;
	c.out = json ? NULL : stream_out;
	memset(&r, 0, sizeof(r));
	if ((rc = vg_sess_job_runner(j.dir, &e)) == 0)
		rc = vg_sess_job_run(st, &ss, &c, &r, &e);
	else
		(void)vg_result_fail(&r, &e);
	free(p);
	k = result_code(&r);
	if (json)
		print_json(&ss, &j, &r, r.state == VG_ST_BACKEND_ERROR ? -1 :
		    k, (size_t)limit);
	if (rc != 0 || r.state == VG_ST_BACKEND_ERROR)
		fprintf(stderr, "vigil: exec: session '%s': %s\n", ss.rec.id,
		    rc != 0 ? e.msg : r.reason);
	else if (r.state == VG_ST_TIMEOUT)
		fprintf(stderr, "vigil: exec: job %d timed out after %gs "
		    "(its processes were killed; the session goes on)\n",
		    j.job, timeout);
	rc = k;
out:
	vg_buf_release(&cmd);
	vg_buf_release(&in);
	vg_buf_release(&cwd);
	if (cp.policy != NULL)
		vg_cmd_policy_close(&cp);
	vg_sess_release(&ss);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

/* Options that mean something with --session only. */
static const char *const session_only[] = { "stdin", "json", "background",
    "open-stdin", "output-limit", NULL };

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
	if (vg_args_has(a, "session"))
		return exec_session(a, (double)tmo);
	for (k = 0; session_only[k] != NULL; k++)
		if (vg_args_has(a, session_only[k]))
			return vg_cmd_usage_error(a, "--%s needs --session",
			    session_only[k]);
	if (backend != NULL && vg_backend_find(backend) == NULL)
		return run_command(a, backend, 0);	/* usage error */
	if ((rc = vg_cmd_policy_open(a, &cp)) != 0)
		return rc;
	if (a->argc == 1) {
		vg_buf_adds(&shown, a->argv[0]);
		vg_policy_eval(cp.policy, a->argv[0], &cp.env.ctx, &v);
	} else {
		vg_policy_argv_text(a->argv, &shown);
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
		if (strcmp(verdict, "deny") == 0 && v.flagged)
			vg_cmd_policy_allow_stderr(&v, vg_buf_str(&shown));
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
	    "stderr; a timeout exits 124.  With --session ID the command runs "
	    "in that session's sandbox, in the directory and with the exports "
	    "the previous command left, its output streamed as it comes "
	    "(docs/sessions.md).",
	.opts = exec_opts,
	.min_args = 1,
	.max_args = -1,
	.exec = cmd_exec_exec,
};
