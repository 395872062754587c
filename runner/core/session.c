/*
 * session.c - agent sessions: records, jobs and lifetimes (session.h;
 * docs/sessions.md).  Generic: every sandbox operation goes through the
 * vg_backend_session_* wrappers.
 *
 * Who ends a session: `vigil session stop`, the keeper (a detached vigil
 * process per session that sleeps until the idle or age deadline), every
 * `vigil exec --session` and `vigil session list` (which close a session
 * whose time is up when they see it), and `vigil gc` (sessions whose
 * keeper is gone, e.g. after a SIGKILL).  They race safely: the first to
 * move the record to closing does the work, and closing a sandbox that
 * is already gone succeeds.
 *
 * Jobs live in files of the session directory, not in the database: a
 * command writes its own directory only, so two agents in two sessions
 * (or two commands of one) never wait on each other's rows.  A job's
 * record is one file, cmds/<job>/job, of lines "KEY VALUE": "kind" and
 * "command" (escaped: one line) written when the job is made, then
 * appended to, never rewritten: "runner PID START STARTED" by the vigil
 * that carries it, "proc PID START" by a backend whose process holds the
 * command's tree (local), last "result {JSON}" (vg_result_text on one
 * line) when it ended.  One file, not one per fact: on a filesystem
 * without a journal every new inode is dear.  (A job of an earlier vigil
 * may have its result in result.json instead; it is read there.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/json.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/log.h"
#include "common/str.h"
#include "runner/core/egress-log.h"
#include "runner/core/session.h"

/* Seconds the keeper sleeps at most between two looks. */
#define KEEP_MAX_SLEEP	60.0
/* Seconds close waits for background runners to record their end. */
#define CLOSE_WAIT	3.0

/* Fills the backend's view of ss from its record. */
static void
sess_view(struct vg_sess *ss)
{
	ss->s.id = ss->rec.id;
	ss->s.dir = ss->rec.dir;
	ss->s.m = ss->m;
	ss->s.owner = ss->rec.owner;
	vg_strlcpy(ss->s.handle, ss->rec.handle, sizeof(ss->s.handle));
	vg_strlcpy(ss->s.root, ss->rec.root, sizeof(ss->s.root));
}

/* True when JSON values a and b are equal (written alike). */
static int
json_same(const struct vg_json_value *a, const struct vg_json_value *b)
{
	struct vg_buf x = VG_BUF_INIT, y = VG_BUF_INIT;
	struct vg_json_writer w;
	int same;

	vg_json_writer_init(&w, &x);
	vg_json_value_write(&w, a);
	vg_json_writer_init(&w, &y);
	vg_json_value_write(&w, b);
	same = x.len == y.len && (x.len == 0 || memcmp(x.data, y.data,
	    x.len) == 0);
	vg_buf_release(&x);
	vg_buf_release(&y);
	return same;
}

/* Writes the members of object v that differ from those of object d,
 * objects of both by their differing members in turn. */
static void
json_diff(struct vg_json_writer *w, const struct vg_json_value *v,
    const struct vg_json_value *d)
{
	const struct vg_json_value *x, *y;
	size_t i;

	vg_json_obj_begin(w);
	for (i = 0; i < v->len; i++) {
		x = v->items[i];
		if ((y = vg_json_get(d, v->keys[i])) != NULL && json_same(x, y))
			continue;
		vg_json_key(w, v->keys[i]);
		if (y != NULL && x->type == VG_JSON_OBJECT &&
		    y->type == VG_JSON_OBJECT)
			json_diff(w, x, y);
		else
			vg_json_value_write(w, x);
	}
	vg_json_obj_end(w);
}

/* Parses JSON text with the limits of a manifest record. */
static int
json_doc(const char *text, struct vg_json_doc **doc)
{
	struct vg_json_limits lim = { .max_bytes = 64 * 1024 * 1024,
	    .max_depth = VG_JSON_MAX_DEPTH, .max_values = 4000000 };
	struct vg_err e;

	vg_err_init(&e);
	return vg_json_parse(text, strlen(text), &lim, doc, &e);
}

/*
 * The session's manifest record: full, m's own JSON, is what every
 * command parses again (a few KB of defaults, a third of a millisecond).
 * Kept instead is its manifest's difference from an empty record's (the
 * defaults a record's reader starts from), when reading that back gives
 * exactly the full record; else the full one.
 */
static char *
manifest_record(const struct vg_manifest *m)
{
	static const char empty[] = "{\"file\":\"-\",\"manifest\":{}}";
	struct vg_buf full = VG_BUF_INIT, def = VG_BUF_INIT, out = VG_BUF_INIT,
	    back = VG_BUF_INIT;
	struct vg_json_doc *fd = NULL, *dd = NULL;
	const struct vg_json_value *root, *v;
	struct vg_manifest *dm = NULL, *cm = NULL;
	struct vg_json_writer w;
	struct vg_err e;
	size_t i;

	vg_err_init(&e);
	vg_manifest_to_json(m, &full);
	if (vg_manifest_from_json(empty, sizeof(empty) - 1, &dm, &e) != 0)
		goto out;
	vg_manifest_to_json(dm, &def);
	if (json_doc(vg_buf_str(&full), &fd) != 0 ||
	    json_doc(vg_buf_str(&def), &dd) != 0)
		goto out;
	root = vg_json_root(fd);
	if (root->type != VG_JSON_OBJECT || (v = vg_json_get(vg_json_root(dd),
	    "manifest")) == NULL || v->type != VG_JSON_OBJECT)
		goto out;
	vg_json_writer_init(&w, &out);
	vg_json_obj_begin(&w);
	for (i = 0; i < root->len; i++) {
		vg_json_key(&w, root->keys[i]);
		if (strcmp(root->keys[i], "manifest") == 0 &&
		    root->items[i]->type == VG_JSON_OBJECT)
			json_diff(&w, root->items[i], v);
		else
			vg_json_value_write(&w, root->items[i]);
	}
	vg_json_obj_end(&w);
	if (vg_manifest_from_json(vg_buf_str(&out), out.len, &cm, &e) == 0)
		vg_manifest_to_json(cm, &back);
out:
	if (back.len == full.len && full.len > 0 && memcmp(back.data,
	    full.data, full.len) == 0) {
		vg_buf_release(&full);
		full = out;
		vg_buf_init(&out);
	}
	vg_manifest_free(dm);
	vg_manifest_free(cm);
	vg_json_free(fd);
	vg_json_free(dd);
	vg_buf_release(&def);
	vg_buf_release(&out);
	vg_buf_release(&back);
	return vg_buf_detach(&full);
}

/* Name check: a live session already has it. */
static int
name_cb(void *arg, const struct vg_session_rec *r)
{
	const char **name = arg;

	if (r->ended == 0 && strcmp(r->name, *name) == 0) {
		*name = NULL;
		return 1;
	}
	return 0;
}

int
vg_sess_create(struct vg_store *st, const char *home, struct vg_manifest *m,
    const struct vg_sess_opts *o, struct vg_sess *ss, struct vg_err *e)
{
	struct vg_err e2;
	char run[VG_RUN_ID_MAX], *dir, real[PATH_MAX];
	const char *name = o->name;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if ((ss->ops = vg_backend_find(m->backend)) == NULL ||
	    !vg_backend_has_sessions(ss->ops))
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' has no "
		    "sessions", m->backend);
	if (name != NULL && (rc = vg_store_session_list(st, name_cb, &name,
	    e)) != 0)
		return rc;
	if (o->name != NULL && name == NULL)
		return vg_err_set(e, VG_EINVAL, "a session named '%s' is "
		    "open already (vigil session list)", o->name);
	vg_run_id_make(run);
	snprintf(ss->rec.id, sizeof(ss->rec.id), "s-%s", run);
	dir = vg_xasprintf("%s/sessions/%s", home, ss->rec.id);
	rc = vg_mkdir_p(dir, 0700, e);
	vg_strlcpy(ss->rec.dir, dir, sizeof(ss->rec.dir));
	free(dir);
	if (rc != 0)
		return rc;
	vg_strlcpy(ss->rec.name, o->name != NULL ? o->name : "",
	    sizeof(ss->rec.name));
	vg_strlcpy(ss->rec.backend, ss->ops->p.name, sizeof(ss->rec.backend));
	vg_strlcpy(ss->rec.state, "starting", sizeof(ss->rec.state));
	ss->rec.created = ss->rec.last_used = vg_now();
	ss->rec.idle_timeout = o->idle_timeout;
	ss->rec.max_age = o->max_age;
	vg_strlcpy(ss->rec.mode, o->mode != NULL ? o->mode : "auto-deny",
	    sizeof(ss->rec.mode));
	if (o->policy != NULL)
		vg_strlcpy(ss->rec.policy, realpath(o->policy, real) != NULL ?
		    real : o->policy, sizeof(ss->rec.policy));
	vg_backend_owner_label(ss->rec.owner, sizeof(ss->rec.owner));
	ss->rec.manifest = manifest_record(m);
	ss->m = m;
	if ((rc = vg_store_session_put(st, &ss->rec, e)) != 0) {
		ss->m = NULL;
		vg_sess_release(ss);
		return rc;
	}
	sess_view(ss);
	if ((rc = vg_backend_session_open(ss->ops, &ss->s, e)) != 0) {
		vg_err_init(&e2);
		(void)vg_backend_session_close(ss->ops, &ss->s, &e2);
		vg_strlcpy(ss->rec.state, "failed", sizeof(ss->rec.state));
		vg_strlcpy(ss->rec.reason, e->msg, sizeof(ss->rec.reason));
		ss->rec.ended = vg_now();
		(void)vg_store_session_put(st, &ss->rec, &e2);
		ss->m = NULL;
		vg_sess_release(ss);
		return rc;
	}
	vg_strlcpy(ss->rec.handle, ss->s.handle, sizeof(ss->rec.handle));
	vg_strlcpy(ss->rec.root, ss->s.root, sizeof(ss->rec.root));
	/* Idleness counts from when the sandbox is ready. */
	ss->rec.last_used = vg_now();
	return vg_store_session_put(st, &ss->rec, e);
}

int
vg_sess_load(struct vg_store *st, const char *key, struct vg_sess *ss,
    struct vg_err *e)
{
	int rc;

	memset(ss, 0, sizeof(*ss));
	if ((rc = vg_store_session_get(st, key, &ss->rec, e)) != 0)
		return rc;
	if ((ss->ops = vg_backend_find(ss->rec.backend)) == NULL) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "session '%s' uses backend "
		    "'%s', which this vigil lacks", ss->rec.id,
		    ss->rec.backend);
		vg_sess_release(ss);
		return rc;
	}
	if ((rc = vg_manifest_from_json(ss->rec.manifest,
	    strlen(ss->rec.manifest), &ss->m, e)) != 0) {
		vg_err_prefix(e, "session '%s': ", ss->rec.id);
		vg_sess_release(ss);
		return rc;
	}
	sess_view(ss);
	return 0;
}

void
vg_sess_release(struct vg_sess *ss)
{
	free(ss->rec.manifest);
	vg_manifest_free(ss->m);
	memset(ss, 0, sizeof(*ss));
}

int
vg_sess_own(struct vg_store *st, struct vg_sess *ss, struct vg_err *e)
{
	vg_backend_owner_label(ss->rec.owner, sizeof(ss->rec.owner));
	vg_strlcpy(ss->rec.state, "active", sizeof(ss->rec.state));
	return vg_store_session_put(st, &ss->rec, e);
}

void
vg_sess_jobrec_parse(const char *text, size_t len, struct vg_sess_jobrec *jr)
{
	char *buf = vg_xmalloc(len + 1), *line, *nl, *o;
	const char *v;
	size_t k;

	memset(jr, 0, sizeof(*jr));
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (line = buf; line != NULL && *line != '\0'; line = nl) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		if (strncmp(line, "kind ", 5) == 0) {
			jr->background = strcmp(line + 5, "bg") == 0;
		} else if (strncmp(line, "runner ", 7) == 0) {
			jr->has_runner = sscanf(line + 7, "%ld %llu %lf",
			    &jr->runner, &jr->runner_start, &jr->started) >= 2;
		} else if (strncmp(line, "result ", 7) == 0) {
			jr->has_result = vg_result_parse(line + 7,
			    strlen(line + 7), &jr->result, NULL) == 0;
		} else if (strncmp(line, "command ", 8) == 0) {
			/* Unescaped up to its first newline. */
			o = jr->command;
			for (v = line + 8, k = 0; *v != '\0' &&
			    k + 1 < sizeof(jr->command); v++) {
				if (*v == '\\' && v[1] == 'n')
					break;
				if (*v == '\\' && v[1] != '\0')
					v++;
				o[k++] = *v;
			}
			o[k] = '\0';
		}
	}
	free(buf);
}

/* Reads dir's job record into *jr; -1 when there is none. */
static int
job_rec_read(const char *dir, struct vg_sess_jobrec *jr)
{
	struct vg_buf b = VG_BUF_INIT;
	int rc;

	memset(jr, 0, sizeof(*jr));
	/* A command can write its job directory (and the session's):
	 * beneath the session directory, no link followed. */
	rc = vg_beneath_read(dir, 2, VG_SESSION_JOB_FILE, (size_t)4 << 20, &b,
	    NULL) == 0 ? 0 : -1;
	if (rc == 0)
		vg_sess_jobrec_parse(b.data != NULL ? b.data : "", b.len, jr);
	vg_buf_release(&b);
	return rc;
}

/* True when job record jr has a runner and it is alive (a vigil
 * process: the record is in the sandbox's reach); sets *pidp. */
static int
runner_alive(const struct vg_sess_jobrec *jr, pid_t *pidp)
{
	if (!jr->has_runner || jr->runner <= 0)
		return 0;
	if (pidp != NULL)
		*pidp = (pid_t)jr->runner;
	return vg_proc_runs((pid_t)jr->runner, jr->runner_start, NULL);
}

/* True when a command of ss runs now (a live runner, no result yet). */
static int
sess_busy(const struct vg_sess *ss)
{
	char *cmds = vg_path_join(ss->rec.dir, "cmds"), *d;
	struct vg_sess_jobrec jr;
	struct dirent *de;
	DIR *dir;
	int busy = 0;

	if ((dir = opendir(cmds)) == NULL) {
		free(cmds);
		return 0;
	}
	while (!busy && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		d = vg_path_join(cmds, de->d_name);
		busy = job_rec_read(d, &jr) == 0 && !jr.has_result &&
		    runner_alive(&jr, NULL);
		free(d);
	}
	closedir(dir);
	free(cmds);
	return busy;
}

const char *
vg_sess_expired(const struct vg_sess *ss, double now, char *buf,
    size_t size)
{
	const struct vg_session_rec *r = &ss->rec;

	if (r->max_age > 0 && now >= r->created + r->max_age) {
		snprintf(buf, size, "older than its max age of %gs",
		    r->max_age);
		return buf;
	}
	if (r->idle_timeout > 0 && now >= r->last_used + r->idle_timeout &&
	    !sess_busy(ss)) {
		snprintf(buf, size, "idle for more than %gs", r->idle_timeout);
		return buf;
	}
	return NULL;
}

/* Sends sig to the process an owner label names, unless it is us. */
static void
signal_owner(const char *owner, int sig)
{
	char host[256], mine[256];
	unsigned long long start;
	long pid;

	if (sscanf(owner, "%255[^:]:%ld:%llu", host, &pid, &start) != 3 ||
	    pid <= 0 || pid == (long)getpid() ||
	    gethostname(mine, sizeof(mine)) != 0 || strcmp(host, mine) != 0)
		return;
	if (vg_proc_alive((pid_t)pid, start))
		(void)kill((pid_t)pid, sig);
}

/* Job callback of close: stops the running background jobs. */
static int
stop_bg_cb(void *arg, const struct vg_sess_job *j)
{
	struct vg_sess_jobrec jr;
	int *n = arg;
	pid_t pid;

	if (strcmp(j->state, "running") == 0 &&
	    job_rec_read(j->dir, &jr) == 0 && runner_alive(&jr, &pid)) {
		(void)kill(pid, SIGTERM);
		(*n)++;
	}
	return 0;
}

int
vg_sess_close(struct vg_store *st, struct vg_sess *ss, const char *to,
    const char *reason, struct vg_err *e)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct vg_err e2;
	double until;
	int won = 0, rc, n = 0;

	if ((rc = vg_store_session_move(st, ss->rec.id,
	    "starting active closing", "closing", NULL, &won, e)) != 0)
		return rc;
	if (!won)
		return 0;
	vg_err_init(&e2);
	(void)vg_sess_jobs(ss, stop_bg_cb, &n, &e2);
	for (until = vg_now() + CLOSE_WAIT; n > 0 && sess_busy(ss) &&
	    vg_now() < until;)
		nanosleep(&ts, NULL);
	signal_owner(ss->rec.owner, SIGTERM);
	if ((rc = vg_backend_session_close(ss->ops, &ss->s, e)) != 0) {
		vg_err_init(&e2);
		(void)vg_store_session_move(st, ss->rec.id, "closing",
		    "closing", e->msg, NULL, &e2);
		return rc;
	}
	/* The proxy has stopped: its last records are in its log. */
	vg_err_init(&e2);
	if (ss->s.m != NULL && ss->s.dir != NULL &&
	    vg_egress_session_audit(st, ss->s.m, ss->rec.id, ss->s.dir,
	    &e2) != 0)
		vg_warn("%s", e2.msg);
	if ((rc = vg_store_session_move(st, ss->rec.id, "closing", to, reason,
	    NULL, e)) != 0)
		return rc;
	vg_strlcpy(ss->rec.state, to, sizeof(ss->rec.state));
	return 0;
}

int
vg_sess_check(struct vg_store *st, struct vg_sess *ss, struct vg_err *e)
{
	char why[128];
	const char *over;
	int rc;

	if (strcmp(ss->rec.state, "active") != 0)
		return vg_err_set(e, VG_ENOENT, "session '%s' is %s%s%s",
		    ss->rec.id, ss->rec.state, ss->rec.reason[0] ? ": " : "",
		    ss->rec.reason);
	if ((over = vg_sess_expired(ss, vg_now(), why, sizeof(why))) == NULL)
		return 0;
	if ((rc = vg_sess_close(st, ss, "expired", over, e)) != 0)
		return rc;
	return vg_err_set(e, VG_ENOENT, "session '%s' expired: %s",
	    ss->rec.id, over);
}

static volatile sig_atomic_t keep_stop;

/* SIGTERM, SIGINT, SIGHUP in the keeper: leave the loop. */
static void
keep_on_signal(int sig)
{
	(void)sig;
	keep_stop = 1;
}

int
vg_sess_keep(struct vg_store *st, const char *id, struct vg_err *e)
{
	struct sigaction sa;
	struct vg_sess ss;
	struct timespec ts;
	char why[128];
	const char *over;
	double now, next;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = keep_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (!keep_stop) {
		if ((rc = vg_sess_load(st, id, &ss, e)) != 0)
			return rc;
		if (strcmp(ss.rec.state, "active") != 0) {
			vg_sess_release(&ss);
			return 0;
		}
		now = vg_now();
		if ((over = vg_sess_expired(&ss, now, why, sizeof(why))) !=
		    NULL) {
			rc = vg_sess_close(st, &ss, "expired", over, e);
			vg_sess_release(&ss);
			return rc;
		}
		next = now + KEEP_MAX_SLEEP;
		if (ss.rec.max_age > 0 && ss.rec.created + ss.rec.max_age <
		    next)
			next = ss.rec.created + ss.rec.max_age;
		if (ss.rec.idle_timeout > 0) {
			double idle = ss.rec.last_used + ss.rec.idle_timeout;

			/* Busy: look again soon, the command may end. */
			if (idle <= now)
				idle = now + (ss.rec.idle_timeout < 1 ?
				    ss.rec.idle_timeout : 1);
			if (idle < next)
				next = idle;
		}
		vg_sess_release(&ss);
		next -= now;
		if (next < 0.05)
			next = 0.05;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Writes n bytes to file dir/name opened with flags (mode 0600, not
 * synced: bookkeeping). */
static int
write_in(const char *dir, const char *name, int flags, const char *data,
    size_t n, struct vg_err *e)
{
	int fd, rc = 0;

	/* dir is a job's, cmds/JOB in the session's directory, which its
	 * commands can write: beneath the session directory, no link
	 * followed, only a regular file of vigil's own. */
	if ((fd = vg_beneath_file_in(dir, 2, name, flags | O_WRONLY, 0600,
	    e)) < 0)
		return fd;
	if (vg_write_all(fd, data, n) != 0)
		rc = vg_err_errno(e, "writing '%s/%s'", dir, name);
	close(fd);
	return rc;
}

/* Writes a small file into dir. */
static int
put_file(const char *dir, const char *name, const char *data, size_t n,
    struct vg_err *e)
{
	return write_in(dir, name, O_CREAT | O_TRUNC, data, n, e);
}

/* Appends line (n bytes) to dir's job record, which must exist. */
static int
job_rec_append(const char *dir, const char *line, size_t n,
    struct vg_err *e)
{
	return write_in(dir, VG_SESSION_JOB_FILE, O_APPEND, line, n, e);
}

int
vg_sess_job_number(struct vg_store *st, const struct vg_sess *ss, int *n,
    struct vg_err *e)
{
	int rc;

	if ((rc = vg_store_session_next_job(st, ss->rec.id, n, e)) != 0)
		return rc;
	return vg_store_session_touch(st, ss->rec.id, vg_now(), e);
}

int
vg_sess_job_make(const struct vg_sess *ss, int n, const char *command,
    int background, const char *stdin_data, size_t stdin_len,
    struct vg_sess_job *job, struct vg_err *e)
{
	struct vg_buf rec = VG_BUF_INIT;
	const char *q;
	char rel[32];
	int rc, afd;

	memset(job, 0, sizeof(*job));
	job->job = n;
	job->background = background;
	vg_strlcpy(job->state, "running", sizeof(job->state));
	job->exit_code = -1;
	job->started = vg_now();
	snprintf(job->dir, sizeof(job->dir), "%s/cmds/%d", ss->rec.dir, n);
	vg_strlcpy(job->command, command, sizeof(job->command));
	/* Beneath the session's directory, which its commands can write:
	 * a link at cmds or cmds/N is refused, never made through. */
	snprintf(rel, sizeof(rel), "cmds/%d", n);
	afd = vg_beneath_anchor(ss->rec.dir, e);
	/* The session's own directory is vigil's (under the home, which
	 * no command writes): made here when missing, as before. */
	if (afd == VG_ENOENT) {
		if ((rc = vg_mkdir_p(ss->rec.dir, 0700, e)) != 0)
			return rc;
		afd = vg_beneath_anchor(ss->rec.dir, e);
	}
	if (afd < 0)
		return afd;
	rc = vg_beneath_mkdirs(afd, rel, 0700, "the session directory", e);
	close(afd);
	if (rc < 0)
		return rc;
	close(rc);
	vg_buf_adds(&rec, background ? "kind bg\ncommand " :
	    "kind fg\ncommand ");
	for (q = command; *q != '\0'; q++) {
		if (*q == '\n')
			vg_buf_adds(&rec, "\\n");
		else if (*q == '\\')
			vg_buf_adds(&rec, "\\\\");
		else
			vg_buf_addc(&rec, *q);
	}
	vg_buf_addc(&rec, '\n');
	rc = put_file(job->dir, VG_SESSION_JOB_FILE, rec.data, rec.len, e);
	vg_buf_release(&rec);
	if (rc == 0 && stdin_data != NULL)
		rc = put_file(job->dir, "stdin", stdin_data, stdin_len, e);
	return rc;
}

int
vg_sess_job_new(struct vg_store *st, struct vg_sess *ss, const char *command,
    int background, const char *stdin_data, size_t stdin_len,
    struct vg_sess_job *job, struct vg_err *e)
{
	int rc, n;

	memset(job, 0, sizeof(*job));
	/* One transaction for the number and the touch. */
	if ((rc = vg_store_begin(st, e)) != 0)
		return rc;
	if ((rc = vg_sess_job_number(st, ss, &n, e)) != 0 ||
	    (rc = vg_store_commit(st, e)) != 0) {
		vg_store_rollback(st);
		return rc;
	}
	return vg_sess_job_make(ss, n, command, background, stdin_data,
	    stdin_len, job, e);
}

int
vg_sess_job_runner(const char *dir, struct vg_err *e)
{
	unsigned long long start = 0;
	char line[96];
	int n;

	(void)vg_proc_starttime(getpid(), &start);
	n = snprintf(line, sizeof(line), "runner %ld %llu %.6f\n",
	    (long)getpid(), start, vg_now());
	return job_rec_append(dir, line, (size_t)n, e);
}

int
vg_sess_job_run(struct vg_store *st, struct vg_sess *ss,
    struct vg_session_cmd *c, struct vg_result *r, struct vg_err *e)
{
	struct vg_buf line = VG_BUF_INIT;
	struct vg_err e2;
	size_t k;
	int rc;

	if (c->workdir == NULL && ss->s.m != NULL)
		c->workdir = ss->s.m->workdir;
	rc = vg_backend_session_exec(ss->ops, &ss->s, c, r, e);
	if (rc != 0)
		(void)vg_result_fail(r, e);
	if (r->started == 0)
		r->started = vg_now();
	if (r->ended == 0)
		r->ended = vg_now();
	vg_err_init(&e2);
	/* The result is the record's last line (its newlines are spaces:
	 * inside its strings they are escaped). */
	vg_buf_adds(&line, "result ");
	vg_result_text(r, &line);
	for (k = 7; k + 1 < line.len; k++)
		if (line.data[k] == '\n')
			line.data[k] = ' ';
	(void)job_rec_append(c->dir, line.data, line.len, &e2);
	vg_buf_release(&line);
	/* The connections its proxy recorded so far, into the audit. */
	vg_err_init(&e2);
	if (ss->s.m != NULL && ss->s.dir != NULL &&
	    vg_egress_session_audit(st, ss->s.m, ss->rec.id, ss->s.dir,
	    &e2) != 0)
		vg_warn("%s", e2.msg);
	/* The start touched the session; the end is use again only where
	 * idleness is counted and the command took a noticeable part of
	 * it (a write transaction less for the usual short command). */
	if (ss->rec.idle_timeout > 0 && r->ended - r->started >=
	    ss->rec.idle_timeout / 100)
		(void)vg_store_session_touch(st, ss->rec.id, vg_now(), &e2);
	return rc;
}

/* The state word of a job from its result. */
static const char *
job_state(const struct vg_result *r)
{
	switch (r->state) {
	case VG_ST_SUCCEEDED:
	case VG_ST_FAILED:
		return "exited";
	case VG_ST_TIMEOUT:
		return "timeout";
	case VG_ST_CANCELLED:
		return "killed";
	default:
		return "failed";
	}
}

int
vg_sess_job_get(const struct vg_sess *ss, int job, struct vg_sess_job *j,
    struct vg_err *e)
{
	struct vg_result r;
	struct vg_sess_jobrec jr;
	struct vg_err e2;

	memset(j, 0, sizeof(*j));
	j->job = job;
	j->exit_code = -1;
	snprintf(j->dir, sizeof(j->dir), "%s/cmds/%d", ss->rec.dir, job);
	if (job_rec_read(j->dir, &jr) != 0)
		return vg_err_set(e, VG_ENOENT, "session '%s' has no job %d "
		    "(vigil session jobs %s)", ss->rec.id, job, ss->rec.id);
	vg_strlcpy(j->command, jr.command, sizeof(j->command));
	j->background = jr.background;
	j->started = jr.started;
	vg_err_init(&e2);
	if (jr.has_result)
		r = jr.result;
	if (jr.has_result || vg_result_read(j->dir, &r, &e2) == 0) {
		vg_strlcpy(j->state, job_state(&r), sizeof(j->state));
		j->exit_code = r.exit_code;
		j->signal = r.signal;
		j->ended = r.ended;
		if (r.started > 0)
			j->started = r.started;
	} else if (!jr.has_runner || runner_alive(&jr, NULL)) {
		vg_strlcpy(j->state, "running", sizeof(j->state));
	} else {
		vg_strlcpy(j->state, "lost", sizeof(j->state));
	}
	return 0;
}

/* Orders job numbers. */
static int
int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int
vg_sess_jobs(const struct vg_sess *ss,
    int (*cb)(void *arg, const struct vg_sess_job *j), void *arg,
    struct vg_err *e)
{
	char *cmds = vg_path_join(ss->rec.dir, "cmds"), *end;
	struct vg_sess_job j;
	struct dirent *de;
	int *v = NULL, rc = 0;
	size_t n = 0, i;
	long k;
	DIR *dir;

	if ((dir = opendir(cmds)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			k = strtol(de->d_name, &end, 10);
			if (*end != '\0' || k <= 0 || k > INT_MAX)
				continue;
			v = vg_xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = (int)k;
		}
		closedir(dir);
	}
	free(cmds);
	if (n > 0)
		qsort(v, n, sizeof(*v), int_cmp);
	for (i = 0; i < n && rc == 0; i++)
		if (vg_sess_job_get(ss, v[i], &j, e) == 0 && cb(arg, &j))
			break;
	free(v);
	return rc;
}

int
vg_sess_job_kill(const struct vg_sess *ss, int job, struct vg_err *e)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct vg_sess_job j;
	struct vg_sess_jobrec jr;
	double until;
	pid_t pid;
	int rc;

	if ((rc = vg_sess_job_get(ss, job, &j, e)) != 0)
		return rc;
	if (strcmp(j.state, "running") != 0 ||
	    job_rec_read(j.dir, &jr) != 0 || !runner_alive(&jr, &pid))
		return 0;
	if (kill(pid, SIGTERM) != 0 && errno != ESRCH)
		return vg_err_errno(e, "stopping job %d", job);
	/* The runner kills the tree and records the end; wait for that. */
	until = vg_now() + ss->m->kill_grace + 5;
	while (job_rec_read(j.dir, &jr) == 0 && !jr.has_result &&
	    runner_alive(&jr, NULL) && vg_now() < until)
		nanosleep(&ts, NULL);
	return 0;
}

/* Collects the ids of every session for gc. */
struct gc_list {
	struct vg_strv	 open;
	struct vg_strv	 old;
	double		 cutoff;
};

static int
gc_cb(void *arg, const struct vg_session_rec *r)
{
	struct gc_list *g = arg;

	if (r->ended == 0)
		vg_strv_push(&g->open, r->id);
	else if (r->ended < g->cutoff)
		vg_strv_push(&g->old, r->id);
	return 0;
}

int
vg_sess_gc(struct vg_store *st, double cutoff, int dry, struct vg_buf *report,
    struct vg_err *e)
{
	struct gc_list g;
	struct vg_sess ss;
	struct vg_err e2;
	char why[128];
	const char *over;
	size_t i;
	int rc, bad = 0;

	memset(&g, 0, sizeof(g));
	g.cutoff = cutoff;
	if ((rc = vg_store_session_list(st, gc_cb, &g, e)) != 0)
		return rc;
	for (i = 0; i < g.open.n; i++) {
		vg_err_init(&e2);
		if (vg_sess_load(st, g.open.v[i], &ss, &e2) != 0) {
			vg_buf_printf(report, "session %s: %s\n", g.open.v[i],
			    e2.msg);
			bad = 1;
			continue;
		}
		over = vg_sess_expired(&ss, vg_now(), why, sizeof(why));
		if (over == NULL && vg_backend_owner_dead(ss.rec.owner))
			over = strcmp(ss.rec.state, "starting") == 0 ?
			    "its start was killed" : "its keeper is gone";
		if (over != NULL && dry) {
			vg_buf_printf(report, "would close session %s (%s)\n",
			    ss.rec.id, over);
		} else if (over != NULL) {
			if (vg_sess_close(st, &ss, strcmp(over,
			    "its keeper is gone") == 0 || strcmp(over, "its "
			    "start was killed") == 0 ? "stopped" : "expired",
			    over, &e2) != 0) {
				vg_buf_printf(report, "session %s: %s\n",
				    ss.rec.id, e2.msg);
				bad = 1;
			} else {
				vg_buf_printf(report, "closed session %s (%s)"
				    "\n", ss.rec.id, over);
			}
		}
		vg_sess_release(&ss);
	}
	for (i = 0; i < g.old.n; i++) {
		struct vg_session_rec r;

		vg_err_init(&e2);
		if (vg_store_session_get(st, g.old.v[i], &r, &e2) != 0)
			continue;
		free(r.manifest);
		vg_buf_printf(report, "%s session %s\n", dry ? "would remove" :
		    "removed", r.id);
		if (dry)
			continue;
		if (vg_rm_rf(r.dir, &e2) != 0 ||
		    vg_store_session_delete(st, r.id, &e2) != 0) {
			vg_buf_printf(report, "session %s: %s\n", r.id,
			    e2.msg);
			bad = 1;
		}
	}
	vg_strv_release(&g.open);
	vg_strv_release(&g.old);
	return bad ? vg_err_set(e, VG_EBACKEND, "some sessions could not be "
	    "closed or removed (see above)") : 0;
}

/* ---- input after the start ---- */

/* The marker at which the holder of a job's FIFO lets go. */
#define STDIN_CLOSED	"stdin.closed"

/* Opens dir's "stdin" FIFO with flags, beneath dir without following a
 * link, and checks it is a FIFO of vigil's user.  *why (may be NULL)
 * gets the errno of a failed open (ENXIO: nobody reads it yet). */
static int
stdin_open(const char *dir, int flags, int *why, struct vg_err *e)
{
	struct stat st;
	int afd, fd, err;

	if (why != NULL)
		*why = 0;
	if ((afd = vg_beneath_anchor(dir, e)) < 0)
		return afd;
	fd = vg_beneath_open(afd, "stdin", flags | O_NONBLOCK | O_CLOEXEC, 0);
	err = errno;
	close(afd);
	if (fd < 0 && why != NULL)
		*why = err;
	if (fd < 0)
		return vg_err_set(e, err == ENOENT ? VG_EINVAL : VG_EDENIED,
		    "the input of '%s' is not open (%s): start the command "
		    "with --background --open-stdin", dir, strerror(err));
	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) ||
	    st.st_uid != vg_self_euid()) {
		close(fd);
		return vg_err_set(e, VG_EINVAL, "the input of '%s' is not "
		    "open (its stdin is not vigil's FIFO): start the command "
		    "with --background --open-stdin", dir);
	}
	return fd;
}

int
vg_sess_stdin_make(const char *dir, struct vg_err *e)
{
	int afd, rc = 0;

	if ((afd = vg_beneath_anchor(dir, e)) < 0)
		return afd;
	if (mkfifoat(afd, "stdin", 0600) != 0)
		rc = vg_err_errno(e, "making the input FIFO in '%s'", dir);
	close(afd);
	return rc;
}

pid_t
vg_sess_stdin_hold(const char *dir, struct vg_err *e)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	pid_t parent = getpid(), pid;
	int fd, afd;

	/* Open here: a FIFO that is not there fails the start, not later. */
	if ((fd = stdin_open(dir, O_RDWR, NULL, e)) < 0)
		return fd;
	if ((pid = fork()) < 0) {
		close(fd);
		return vg_err_errno(e, "fork for the input of '%s'", dir);
	}
	if (pid > 0) {
		close(fd);
		return pid;
	}
	/* The holder: keeps a writer on the FIFO until the marker or the
	 * runner's end.  It never reads, so the bytes are the command's. */
	for (;;) {
		nanosleep(&ts, NULL);
		if (getppid() != parent)
			_exit(0);
		if ((afd = vg_beneath_anchor(dir, NULL)) < 0)
			_exit(0);
		if (faccessat(afd, STDIN_CLOSED, F_OK, AT_SYMLINK_NOFOLLOW) ==
		    0)
			_exit(0);
		close(afd);
	}
}

void
vg_sess_stdin_release(pid_t holder)
{
	if (holder <= 0)
		return;
	(void)kill(holder, SIGKILL);
	while (waitpid(holder, NULL, 0) < 0 && errno == EINTR)
		;
}

int
vg_sess_job_input(const struct vg_sess *ss, int job, const void *p,
    size_t n, int close_it, int timeout_ms, struct vg_err *e)
{
	struct vg_sess_job j;
	const char *c = p;
	struct pollfd pfd;
	long long deadline;
	ssize_t w;
	int fd, afd, mfd, rc, why;

	if ((rc = vg_sess_job_get(ss, job, &j, e)) != 0)
		return rc;
	if (strcmp(j.state, "running") != 0)
		return vg_err_set(e, VG_EINVAL, "job %d has ended (%s): it "
		    "takes no more input", job, j.state);
	deadline = vg_mono_ms() + timeout_ms;
	/* Nobody reads it yet (ENXIO): the job's runner, which holds it
	 * open from its start, may not have come that far. */
	while ((fd = stdin_open(j.dir, O_WRONLY, &why, e)) < 0 &&
	    why == ENXIO && vg_mono_ms() < deadline) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (fd < 0)
		return fd;
	while (n > 0) {
		if ((w = write(fd, c, n)) > 0) {
			c += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN) {
			rc = vg_err_errno(e, "writing to job %d's input", job);
			goto out;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (vg_mono_ms() >= deadline || poll(&pfd, 1, (int)(deadline -
		    vg_mono_ms())) == 0) {
			rc = vg_err_set(e, VG_ETIMEOUT, "job %d does not read "
			    "its input: %zu bytes not taken after %d ms", job,
			    n, timeout_ms);
			goto out;
		}
	}
	if (close_it) {
		if ((afd = vg_beneath_anchor(j.dir, e)) < 0) {
			rc = afd;
			goto out;
		}
		mfd = openat(afd, STDIN_CLOSED, O_WRONLY | O_CREAT | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
		if (mfd < 0 && errno != EEXIST)
			rc = vg_err_errno(e, "closing job %d's input", job);
		else if (mfd >= 0)
			close(mfd);
		close(afd);
	}
out:
	close(fd);
	return rc;
}
