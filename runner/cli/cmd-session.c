/*
 * cmd-session.c - vigil session start|list|stop|jobs|output|kill: agent
 * sessions (docs/sessions.md; runner/core/session.h).
 *
 * start loads a session manifest (-f FILE, --set, --backend, --image;
 * the manifest loader with vg_load_opts.session: every check of a run's
 * manifest but the command), checks the policy it will gate with, opens
 * the sandbox, starts the session's keeper (a detached process, like
 * `vigil submit`'s driver) and prints the session id.  Commands run with
 * `vigil exec --session ID` (cmd-exec.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/path.h"
#include "runner/cli/cmd.h"
#include "runner/cli/cmd-policy.h"
#include "runner/cli/launch.h"
#include "runner/cli/show.h"
#include "runner/core/egress-log.h"
#include "runner/core/session.h"

/* Prints what a failed load reported; returns its exit status. */
static int
load_problems(const struct vg_diag *d, const struct vg_err *e, int rc)
{
	vg_diag_print(d, stderr);
	if (d->lines.n == 0)
		fprintf(stderr, "vigil: session: %s\n", e->msg);
	return vg_cmd_exit_for_rc(rc);
}

/* Loads the session manifest start describes into *mp. */
static int
load_manifest(struct vg_args *a, struct vg_manifest **mp)
{
	struct vg_load_opts o = { .session = 1 };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_strv sets = VG_STRV_INIT;
	const char **given = vg_args_all(a, "set"), **setv;
	struct vg_err e;
	size_t i;
	int rc;

	vg_err_init(&e);
	for (i = 0; given != NULL && given[i] != NULL; i++)
		vg_strv_push(&sets, given[i]);
	if (vg_args_has(a, "backend"))
		vg_strv_pushf(&sets, "backend=%s", vg_args_get(a, "backend"));
	if (vg_args_has(a, "image"))
		vg_strv_pushf(&sets, "image=%s", vg_args_get(a, "image"));
	/* Made absolute here: the session's commands run from other
	 * directories. */
	if (vg_args_has(a, "workdir")) {
		char *abs = realpath(vg_args_get(a, "workdir"), NULL);

		if (abs == NULL) {
			rc = vg_cmd_usage_error(a, "--workdir '%s': %s",
			    vg_args_get(a, "workdir"), strerror(errno));
			vg_strv_release(&sets);
			return rc;
		}
		vg_strv_pushf(&sets, "workdir=%s", abs);
		free(abs);
	}
	setv = vg_xcalloc(sets.n + 1, sizeof(*setv));
	for (i = 0; i < sets.n; i++)
		setv[i] = sets.v[i];
	o.sets = setv;
	if (vg_args_has(a, "file"))
		rc = vg_manifest_load(vg_args_get(a, "file"), &o, mp, &diag,
		    &e);
	else
		rc = vg_manifest_load_mem("<session>", "", 0, &o, mp, &diag,
		    &e);
	if (rc != 0)
		rc = load_problems(&diag, &e, rc);
	else if ((rc = vg_launch_runnable(vg_args_has(a, "file") ?
	    vg_args_get(a, "file") : "session", *mp)) != 0) {
		/* What this host lacks, before any sandbox is made. */
		vg_manifest_free(*mp);
		*mp = NULL;
	}
	vg_diag_release(&diag);
	free(setv);
	vg_strv_release(&sets);
	return rc;
}

/* Parses duration option name into *out (0 when not given). */
static int
duration_opt(struct vg_args *a, const char *name, double *out)
{
	const char *v = vg_args_get(a, name);

	*out = 0;
	if (v != NULL && (vg_parse_duration(v, out) != 0 || *out < 0))
		return vg_cmd_usage_error(a, "--%s takes a duration (90s, "
		    "30m, 12h, 1d), not '%s'", name, v);
	return 0;
}

/*
 * The keeper: in a detached process (double fork, setsid, stdio to the
 * session's keeper.log), takes the session over and keeps its lifetime;
 * writes one byte to ready once it owns the session.
 */
static void __attribute__((noreturn))
keeper_main(const char *id, const char *dir, int ready)
{
	struct vg_store *st = NULL;
	struct vg_sess ss;
	struct vg_err e;
	char *log = vg_path_join(dir, "keeper.log");

	if (vg_launch_redirect(log) != 0)
		_exit(1);
	free(log);
	vg_err_init(&e);
	if (vg_launch_store(&st, NULL) != 0)
		_exit(1);
	if (vg_sess_load(st, id, &ss, &e) != 0 ||
	    vg_sess_own(st, &ss, &e) != 0) {
		fprintf(stderr, "vigil: keeper: %s\n", e.msg);
		_exit(1);
	}
	vg_sess_release(&ss);
	(void)!write(ready, "1", 1);
	close(ready);
	if (vg_sess_keep(st, id, &e) != 0)
		fprintf(stderr, "vigil: keeper of %s: %s\n", id, e.msg);
	vg_store_close(st);
	_exit(0);
}

/* Starts the keeper of session ss; 0 once it owns the session. */
static int
keeper_start(struct vg_sess *ss, struct vg_err *e)
{
	char ok;
	int pfd[2], n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return vg_err_errno(e, "pipe");
	if ((pid = vg_launch_detach()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return vg_err_errno(e, "fork");
	}
	if (pid == 0) {
		close(pfd[0]);
		keeper_main(ss->rec.id, ss->rec.dir, pfd[1]);
	}
	close(pfd[1]);
	n = (int)read(pfd[0], &ok, 1);
	close(pfd[0]);
	if (n != 1)
		return vg_err_set(e, VG_EIO, "the keeper of session '%s' did "
		    "not start (see %s/keeper.log)", ss->rec.id, ss->rec.dir);
	return 0;
}

/* vigil session start */
static int
session_start(struct vg_args *a)
{
	struct vg_sess_opts o;
	struct vg_cmd_policy cp;
	struct vg_manifest *m = NULL;
	struct vg_store *st = NULL;
	struct vg_sess ss;
	struct vg_err e, e2;
	char *home = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&ss, 0, sizeof(ss));
	vg_err_init(&e);
	if ((rc = duration_opt(a, "idle-timeout", &o.idle_timeout)) != 0 ||
	    (rc = duration_opt(a, "max-age", &o.max_age)) != 0)
		return rc;
	o.name = vg_args_get(a, "name");
	if (o.name != NULL && (o.name[0] == '\0' || strlen(o.name) >= 64 ||
	    strncmp(o.name, "s-", 2) == 0 || strpbrk(o.name, " \t\n/") !=
	    NULL))
		return vg_cmd_usage_error(a, "--name takes up to 63 "
		    "characters without spaces or '/', not starting with "
		    "'s-', not '%s'", o.name);
	if ((rc = load_manifest(a, &m)) != 0)
		return rc;
	/* The policy the session will gate with must open now. */
	if ((rc = vg_cmd_policy_open_conf(a, &m->policy, vg_args_get(a,
	    "policy"), vg_args_get(a, "mode"), NULL, &cp)) != 0)
		goto out;
	o.mode = vg_policy_mode_name(vg_policy_mode(cp.policy));
	o.policy = vg_args_get(a, "policy");
	if ((rc = vg_launch_store(&st, &home)) != 0) {
		vg_cmd_policy_close(&cp);
		goto out;
	}
	rc = vg_sess_create(st, home, m, &o, &ss, &e);
	vg_cmd_policy_close(&cp);
	if (rc != 0) {
		rc = vg_cmd_fail(rc == VG_EINVAL || rc == VG_EUNSUPPORTED ?
		    VG_EXIT_USAGE : VG_EXIT_INTERNAL, "session start: %s",
		    e.msg);
		goto out;
	}
	m = NULL;	/* ss.m now */
	vg_store_close(st);
	st = NULL;
	if ((rc = keeper_start(&ss, &e)) != 0) {
		vg_err_init(&e2);
		if (vg_launch_store(&st, NULL) == 0)
			(void)vg_sess_close(st, &ss, "failed", e.msg, &e2);
		rc = vg_cmd_fail(VG_EXIT_INTERNAL, "session start: %s", e.msg);
		goto out;
	}
	if (vg_args_has(a, "json"))
		printf("{\"id\": \"%s\", \"dir\": \"%s\"}\n", ss.rec.id,
		    ss.rec.dir);
	else
		printf("%s\n", ss.rec.id);
	rc = 0;
out:
	vg_sess_release(&ss);
	vg_manifest_free(m);
	vg_store_close(st);
	free(home);
	return vg_cmd_finish_stdout(rc);
}

/* One member of a JSON object: key and value. */
static void
kstr(struct vg_json_writer *w, const char *k, const char *v)
{
	vg_json_key(w, k);
	vg_json_str(w, v);
}

static void
knum(struct vg_json_writer *w, const char *k, double v)
{
	vg_json_key(w, k);
	vg_json_num(w, v);
}

static void
kint(struct vg_json_writer *w, const char *k, long long v)
{
	vg_json_key(w, k);
	vg_json_int(w, v);
}

static void
kbool(struct vg_json_writer *w, const char *k, int v)
{
	vg_json_key(w, k);
	vg_json_bool(w, v);
}

struct list_ctx {
	struct vg_strv		 due;	/* open sessions with a deadline */
	struct vg_json_writer	 w;
	struct vg_buf		 out;
	int			 json;
	int			 pass;	/* 0: collect, 1: print */
};

/* One session of vigil session list. */
static int
list_cb(void *arg, const struct vg_session_rec *r)
{
	struct list_ctx *l = arg;
	char a1[32], a2[32];
	double now = vg_now();

	if (l->pass == 0) {
		if (r->ended == 0 && (r->idle_timeout > 0 || r->max_age > 0))
			vg_strv_push(&l->due, r->id);
		return 0;
	}
	if (!l->json) {
		vg_buf_printf(&l->out, "%-26s %-12s %-12s %-9s %6s %6s %5d\n",
		    r->id, r->name[0] ? r->name : "-", r->backend, r->state,
		    vg_fmt_age(now - r->created, a1, sizeof(a1)),
		    vg_fmt_age((r->ended > 0 ? r->ended : now) - r->last_used, a2,
		    sizeof(a2)), r->jobs);
		return 0;
	}
	vg_json_obj_begin(&l->w);
	kstr(&l->w, "id", r->id);
	kstr(&l->w, "name", r->name);
	kstr(&l->w, "backend", r->backend);
	kstr(&l->w, "state", r->state);
	kstr(&l->w, "reason", r->reason);
	knum(&l->w, "created", r->created);
	knum(&l->w, "last_used", r->last_used);
	knum(&l->w, "ended", r->ended);
	knum(&l->w, "idle_timeout", r->idle_timeout);
	knum(&l->w, "max_age", r->max_age);
	kstr(&l->w, "mode", r->mode);
	kint(&l->w, "jobs", r->jobs);
	kstr(&l->w, "dir", r->dir);
	kstr(&l->w, "handle", r->handle);
	vg_json_obj_end(&l->w);
	return 0;
}

/* vigil session list [--json] */
static int
session_list(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct list_ctx l;
	struct vg_sess ss;
	struct vg_err e, e2;
	size_t i;
	int rc;

	memset(&l, 0, sizeof(l));
	l.json = vg_args_has(a, "json");
	if ((rc = vg_launch_store(&st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	/* Sessions whose time is up end here even when their keeper is
	 * gone. */
	if ((rc = vg_store_session_list(st, list_cb, &l, &e)) != 0)
		goto fail;
	for (i = 0; i < l.due.n; i++) {
		vg_err_init(&e2);
		if (vg_sess_load(st, l.due.v[i], &ss, &e2) == 0) {
			(void)vg_sess_check(st, &ss, &e2);
			vg_sess_release(&ss);
		}
	}
	l.pass = 1;
	vg_json_writer_init(&l.w, &l.out);
	if (l.json)
		vg_json_arr_begin(&l.w);
	else
		vg_buf_printf(&l.out, "%-26s %-12s %-12s %-9s %6s %6s %5s\n",
		    "ID", "NAME", "BACKEND", "STATE", "AGE", "IDLE", "JOBS");
	if ((rc = vg_store_session_list(st, list_cb, &l, &e)) != 0)
		goto fail;
	if (l.json) {
		vg_json_arr_end(&l.w);
		vg_buf_addc(&l.out, '\n');
	}
	if (l.out.len > 0)
		fwrite(l.out.data, 1, l.out.len, stdout);
	rc = 0;
	goto out;
fail:
	rc = vg_cmd_fail(VG_EXIT_INTERNAL, "%s", e.msg);
out:
	vg_strv_release(&l.due);
	vg_buf_release(&l.out);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

/* Loads the session named by the first argument after the verb. */
static int
open_session(struct vg_args *a, struct vg_store **st, struct vg_sess *ss)
{
	struct vg_err e;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if (a->argc < 2)
		return vg_cmd_usage_error(a, "%s needs a session id",
		    a->argv[0]);
	if ((rc = vg_launch_store(st, NULL)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_sess_load(*st, a->argv[1], ss, &e)) != 0) {
		vg_store_close(*st);
		*st = NULL;
		return vg_cmd_fail(rc == VG_ENOENT || rc == VG_EINVAL ?
		    VG_EXIT_USAGE : VG_EXIT_INTERNAL, "session %s: %s",
		    a->argv[0], e.msg);
	}
	return 0;
}

/* vigil session stop ID */
static int
session_stop(struct vg_args *a, struct vg_store *st, struct vg_sess *ss)
{
	struct vg_err e;

	(void)a;
	vg_err_init(&e);
	if (ss->rec.ended > 0) {
		printf("session %s is %s already\n", ss->rec.id,
		    ss->rec.state);
		return 0;
	}
	if (vg_sess_close(st, ss, "stopped", "vigil session stop", &e) != 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "session stop: %s (vigil "
		    "gc tries again)", e.msg);
	printf("stopped %s\n", ss->rec.id);
	return 0;
}

struct jobs_ctx {
	struct vg_json_writer	 w;
	struct vg_buf		 out;
	int			 json;
};

/* One job of vigil session jobs. */
static int
jobs_cb(void *arg, const struct vg_sess_job *j)
{
	struct jobs_ctx *c = arg;
	char code[24], a1[32];

	if (!c->json) {
		snprintf(code, sizeof(code), "%d", j->exit_code);
		vg_buf_printf(&c->out, "%4d %-4s %-8s %4s %6s  %s\n", j->job,
		    j->background ? "bg" : "fg", j->state, j->exit_code >= 0 ?
		    code : "-", vg_fmt_age((j->ended > 0 ? j->ended : vg_now()) -
		    j->started, a1, sizeof(a1)), j->command);
		return 0;
	}
	vg_json_obj_begin(&c->w);
	kint(&c->w, "job", j->job);
	kbool(&c->w, "background", j->background);
	kstr(&c->w, "state", j->state);
	vg_json_key(&c->w, "exit_code");
	if (j->exit_code >= 0)
		vg_json_int(&c->w, j->exit_code);
	else
		vg_json_null(&c->w);
	knum(&c->w, "started", j->started);
	knum(&c->w, "ended", j->ended);
	kstr(&c->w, "command", j->command);
	kstr(&c->w, "dir", j->dir);
	vg_json_obj_end(&c->w);
	return 0;
}

/* vigil session jobs ID [--json] */
static int
session_jobs(struct vg_args *a, struct vg_sess *ss)
{
	struct jobs_ctx c;
	struct vg_err e;

	memset(&c, 0, sizeof(c));
	c.json = vg_args_has(a, "json");
	vg_json_writer_init(&c.w, &c.out);
	vg_err_init(&e);
	if (c.json)
		vg_json_arr_begin(&c.w);
	else
		vg_buf_printf(&c.out, "%4s %-4s %-8s %4s %6s  %s\n", "JOB",
		    "KIND", "STATE", "EXIT", "TIME", "COMMAND");
	(void)vg_sess_jobs(ss, jobs_cb, &c, &e);
	if (c.json) {
		vg_json_arr_end(&c.w);
		vg_buf_addc(&c.out, '\n');
	}
	if (c.out.len > 0)
		fwrite(c.out.data, 1, c.out.len, stdout);
	vg_buf_release(&c.out);
	return 0;
}

/* vigil session egress ID: the connections of the session's commands
 * through its proxy, summed per job and host. */
static int
session_egress(struct vg_args *a, struct vg_sess *ss)
{
	struct vg_egress_sum sum;
	struct vg_json_writer w;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	size_t skip;
	int rc;

	vg_err_init(&e);
	memset(&sum, 0, sizeof(sum));
	sum.jobs = 1;
	if (ss->s.dir != NULL && (rc = vg_egress_session_sum(ss->s.dir, &sum,
	    &e)) != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(rc), "session egress: %s",
		    e.msg);
	if (vg_args_has(a, "json")) {
		vg_json_writer_init(&w, &out);
		vg_egress_sum_json(&sum, &w);
		vg_buf_addc(&out, '\n');
	} else if (sum.conns == 0)
		vg_buf_printf(&out, "egress: no connection through a proxy "
		    "of vigil's\n");
	else
		vg_egress_sum_text(&sum, &out);
	/* vg_egress_sum_text starts with a blank line, to follow a
	 * status; alone here, it goes */
	skip = out.len > 0 && out.data[0] == '\n';
	fwrite(out.data + skip, 1, out.len - skip, stdout);
	vg_buf_release(&out);
	vg_egress_sum_release(&sum);
	return 0;
}

/* Parses the job argument. */
static int
job_arg(struct vg_args *a, int *job)
{
	char *end;
	long v;

	if (a->argc < 3)
		return vg_cmd_usage_error(a, "%s needs a session id and a job "
		    "number", a->argv[0]);
	v = strtol(a->argv[2], &end, 10);
	if (*end != '\0' || v <= 0 || v > 1000000000)
		return vg_cmd_usage_error(a, "a job is a number from vigil "
		    "session jobs, not '%s'", a->argv[2]);
	*job = (int)v;
	return 0;
}

/* Copies what was added to fd since the last call to out. */
static void
pump(int fd, int out)
{
	char buf[65536];
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		(void)vg_write_all(out, buf, (size_t)n);
}

/* Opens one output file of a job; -1 when missing. */
static int
job_file(const struct vg_sess_job *j, const char *name)
{
	char *p = vg_path_join(j->dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	return fd;
}

/* vigil session output ID JOB [--wait] [--follow] */
static int
session_output(struct vg_args *a, struct vg_sess *ss)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct vg_sess_job j;
	struct vg_err e;
	int job, rc, fo, fe, follow = vg_args_has(a, "follow"),
	    wait = vg_args_has(a, "wait") || follow;

	if ((rc = job_arg(a, &job)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_sess_job_get(ss, job, &j, &e)) != 0)
		return vg_cmd_fail(VG_EXIT_USAGE, "session output: %s", e.msg);
	while (wait && !follow && strcmp(j.state, "running") == 0) {
		nanosleep(&ts, NULL);
		(void)vg_sess_job_get(ss, job, &j, &e);
	}
	fflush(stdout);
	fo = fe = -1;
	for (;;) {
		/* The runner may not have made them yet. */
		if (fo < 0)
			fo = job_file(&j, "stdout");
		if (fe < 0)
			fe = job_file(&j, "stderr");
		pump(fo, 1);
		pump(fe, 2);
		if (!follow || strcmp(j.state, "running") != 0)
			break;
		nanosleep(&ts, NULL);
		(void)vg_sess_job_get(ss, job, &j, &e);
	}
	if (fo < 0)
		fo = job_file(&j, "stdout");
	if (fe < 0)
		fe = job_file(&j, "stderr");
	pump(fo, 1);
	pump(fe, 2);
	if (fo >= 0)
		close(fo);
	if (fe >= 0)
		close(fe);
	if (!wait)
		return 0;
	if (strcmp(j.state, "timeout") == 0)
		return VG_EXIT_TIMEOUT;
	if (strcmp(j.state, "killed") == 0)
		return VG_EXIT_CANCELLED;
	if (strcmp(j.state, "exited") != 0)
		return VG_EXIT_INTERNAL;
	return j.signal > 0 ? 128 + j.signal : j.exit_code & 0xff;
}

/* vigil session kill ID JOB */
static int
session_kill(struct vg_args *a, struct vg_sess *ss)
{
	struct vg_sess_job j;
	struct vg_err e;
	int job, rc;

	if ((rc = job_arg(a, &job)) != 0)
		return rc;
	vg_err_init(&e);
	if ((rc = vg_sess_job_kill(ss, job, &e)) != 0)
		return vg_cmd_fail(rc == VG_ENOENT ? VG_EXIT_USAGE :
		    VG_EXIT_INTERNAL, "session kill: %s", e.msg);
	(void)vg_sess_job_get(ss, job, &j, &e);
	printf("job %d %s\n", job, j.state);
	return 0;
}

/* Most `session input` reads from our stdin, bytes. */
#define INPUT_MAX	((size_t)16 << 20)
/* How long `session input` waits for the command to take the bytes. */
#define INPUT_WAIT_MS	30000

/* vigil session input ID JOB [TEXT] [--close]: TEXT, else our stdin (a
 * terminal's excepted), to a background command's open input. */
static int
session_input(struct vg_args *a, struct vg_sess *ss)
{
	struct vg_buf in = VG_BUF_INIT;
	struct vg_err e;
	char buf[65536];
	ssize_t n;
	int job, rc;

	if ((rc = job_arg(a, &job)) != 0)
		return rc;
	if (a->argc > 3)
		vg_buf_adds(&in, a->argv[3]);
	else if (!isatty(0) || !vg_args_has(a, "close")) {
		while ((n = read(0, buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || in.len + (size_t)n > INPUT_MAX) {
				vg_buf_release(&in);
				return vg_cmd_fail(VG_EXIT_USAGE, "session input: "
				    "stdin: %s", n < 0 ? strerror(errno) :
				    "more than 16 MiB");
			}
			vg_buf_add(&in, buf, (size_t)n);
		}
	}
	vg_err_init(&e);
	rc = vg_sess_job_input(ss, job, in.data, in.len, vg_args_has(a,
	    "close"), INPUT_WAIT_MS, &e);
	vg_buf_release(&in);
	if (rc != 0)
		return vg_cmd_fail(rc == VG_ENOENT || rc == VG_EINVAL ?
		    VG_EXIT_USAGE : vg_cmd_exit_for_rc(rc), "session input: %s",
		    e.msg);
	return 0;
}

/* Which options each verb takes. */
static const struct {
	const char	*verb;
	int		 nargs;		/* after the verb */
	const char	*opts;		/* space-separated */
} verbs[] = {
	{ "start", 0, " backend image file set name idle-timeout max-age mode "
	    "workdir policy json " },
	{ "list", 0, " json " },
	{ "stop", 1, " " },
	{ "jobs", 1, " json " },
	{ "output", 2, " wait follow " },
	{ "kill", 2, " " },
	{ "input", 3, " close " },
	{ "egress", 1, " json " },
};

static int
cmd_session_exec(struct vg_args *a)
{
	struct vg_store *st = NULL;
	struct vg_sess ss;
	char word[40];
	size_t v;
	int i, rc;

	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(a->argv[0], verbs[v].verb) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0]))
		return vg_cmd_usage_error(a, "unknown '%s' (start, list, stop, "
		    "jobs, output, kill, input or egress)", a->argv[0]);
	for (i = 0; a->cmd->opts[i].name != NULL; i++) {
		snprintf(word, sizeof(word), " %s ", a->cmd->opts[i].name);
		if (a->count[i] > 0 && strstr(verbs[v].opts, word) == NULL)
			return vg_cmd_usage_error(a, "--%s does not go with "
			    "'session %s'", a->cmd->opts[i].name,
			    verbs[v].verb);
	}
	if (a->argc - 1 > verbs[v].nargs)
		return vg_cmd_usage_error(a, "unexpected argument '%s'",
		    a->argv[verbs[v].nargs + 1]);
	if (v == 0)
		return session_start(a);
	if (v == 1)
		return session_list(a);
	if ((rc = open_session(a, &st, &ss)) != 0)
		return rc;
	if (v == 2)
		rc = session_stop(a, st, &ss);
	else if (v == 3)
		rc = session_jobs(a, &ss);
	else if (v == 4)
		rc = session_output(a, &ss);
	else if (v == 5)
		rc = session_kill(a, &ss);
	else if (v == 6)
		rc = session_input(a, &ss);
	else
		rc = session_egress(a, &ss);
	vg_sess_release(&ss);
	vg_store_close(st);
	return vg_cmd_finish_stdout(rc);
}

const struct vg_cmd_entry vg_cmd_session = {
	.name = "session",
	.args_usage = "start|list|stop|jobs|output|kill|input|egress [ID "
	    "[JOB [TEXT]]]",
	.summary = "sandboxes kept between commands, for agents",
	.help = "start opens a session (a sandbox of the backend kept between "
	    "commands) and\nprints its id; run commands in it with 'vigil exec "
	    "--session ID -- CMD'.\nlist shows sessions; stop ID removes the "
	    "sandbox; jobs ID lists its\ncommands; output ID JOB prints a "
	    "command's output (--wait for its end,\n--follow as it comes); "
	    "kill ID JOB stops a background command; input ID\nJOB [TEXT] "
	    "sends TEXT (else our stdin) to one started with --open-stdin\n"
	    "(--close ends its input); egress ID sums its commands' connections\n"
	    "through its proxy per job and host.  A session ends by "
	    "itself after --idle-timeout without commands or at --max-age\n"
	    "(docs/sessions.md).",
	.opts = (const struct vg_opt[]){
		{ .name = "backend", .has_arg = 1, .arg = "NAME",
		  .help = "start: the sandbox's backend (default local)" },
		{ .name = "image", .has_arg = 1, .arg = "REF",
		  .help = "start: the image (docker, apptainer, clouds)" },
		{ .name = "file", .shortname = 'f', .has_arg = 1,
		  .arg = "MANIFEST",
		  .help = "start: backend options from a manifest without "
		  "a command" },
		VG_OPT_SET,
		{ .name = "workdir", .has_arg = 1, .arg = "DIR",
		  .help = "start: where its first command runs (local: "
		  "writable, as a run's working directory)" },
		{ .name = "name", .has_arg = 1, .arg = "NAME",
		  .help = "start: a name to use instead of the id" },
		{ .name = "idle-timeout", .has_arg = 1, .arg = "AGE",
		  .help = "start: end after AGE without a command" },
		{ .name = "max-age", .has_arg = 1, .arg = "AGE",
		  .help = "start: end AGE after the start" },
		VG_OPT_MODE("start: the gate's mode for its commands"),
		VG_OPT_POLICY,
		VG_OPT_JSON("start, list, jobs: JSON on stdout"),
		{ .name = "wait", .help = "output: wait for the job's end" },
		{ .name = "follow",
		  .help = "output: print as it comes until the end" },
		{ .name = "close",
		  .help = "input: end the command's input after this" },
		{ NULL },
	},
	.min_args = 1,
	.max_args = 4,
	.ids = "sessions",
	.exec = cmd_session_exec,
};
