/*
 * egress-log.c - egress records into events and the audit log, and
 * their sums for status, the report and --cron (runner/core/egress-log.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "backends/egress-run.h"
#include "common/beneath.h"
#include "common/path.h"
#include "runner/core/egress-log.h"
#include "common/diag.h"
#include "common/log.h"
#include "runner/policy/policy.h"

/* Fills the audit record of ev (strings borrowed from ev and the
 * buffers). */
static void
audit_of(const struct vg_egress_event *ev, const char *run_id,
    struct vg_buf *cmd, struct vg_buf *reason, struct vg_audit_rec *r)
{
	vg_buf_reset(cmd);
	vg_buf_reset(reason);
	vg_buf_printf(cmd, "%s %s:%u", ev->proto, ev->host, ev->port);
	if (!ev->allowed)
		vg_buf_adds(reason, "refused by the egress proxy");
	else if (ev->error[0] != '\0')
		vg_buf_printf(reason, "allowed, not connected: %s",
		    ev->error);
	else
		vg_buf_printf(reason, "%llu bytes up, %llu down, to %s",
		    (unsigned long long)ev->up, (unsigned long long)ev->down,
		    ev->addr);
	memset(r, 0, sizeof(*r));
	r->time = ev->time;
	r->run_id = run_id;
	r->task_index = ev->task;
	r->mode = "egress";
	r->command = vg_buf_str(cmd);
	r->verdict = ev->allowed ? "allow" : "deny";
	r->category = "egress";
	r->rule = ev->rule;
	r->reason = vg_buf_str(reason);
}

/*
 * Records v[0..n) as events of run id (when events) and as audit
 * records of id, in the store and in the audit file of m's policy.  A
 * session's records have no task: jobs[i] (when not NULL) is the job
 * whose command made v[i], or -1, said in the audit reason.
 */
static int
record_all(struct vg_store *st, const struct vg_manifest *m, const char *id,
    const struct vg_egress_event *v, const int *jobs, size_t n, int events,
    struct vg_err *e)
{
	struct vg_buf json = VG_BUF_INIT, cmd = VG_BUF_INIT, why = VG_BUF_INIT;
	struct vg_buf *held = NULL;
	struct vg_policy *p = NULL;
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_audit_rec ar;
	struct vg_err pe;
	size_t i;
	int rc = 0;

	/* The audit file is the policy's; the gate opened the same. */
	vg_err_init(&pe);
	if (vg_policy_open(&m->policy, NULL, &p, &diag, &pe) == 0) {
		vg_policy_audit_hold(p, 1);
		held = vg_policy_audit_held(p);
	} else
		vg_warn("egress: no audit file line for the connections: %s",
		    pe.msg);
	for (i = 0; i < n && rc == 0; i++) {
		if (events) {
			vg_buf_reset(&json);
			vg_buf_adds(&json, VG_EGRESS_EVENT);
			vg_egress_event_json(&v[i], &json);
			rc = vg_store_event(st, id, v[i].task, v[i].attempt,
			    VG_ST_RUNNING, vg_buf_str(&json), e);
		}
		audit_of(&v[i], id, &cmd, &why, &ar);
		if (jobs != NULL && jobs[i] >= 0) {
			vg_buf_reset(&json);
			vg_buf_printf(&json, "job %d: %s", jobs[i],
			    vg_buf_str(&why));
			ar.reason = vg_buf_str(&json);
		}
		if (rc == 0)
			rc = vg_store_audit(st, &ar, e);
		if (held != NULL) {
			vg_policy_audit_line_head(held, ar.time);
			vg_policy_audit_line_tail(held, &ar);
		}
	}
	if (p != NULL) {
		if (vg_policy_audit_flush(p, &pe) != 0)
			vg_warn("egress: %s", pe.msg);
		vg_policy_free(p);
	}
	vg_diag_release(&diag);
	vg_buf_release(&json);
	vg_buf_release(&cmd);
	vg_buf_release(&why);
	return rc;
}

int
vg_egress_log_drain(struct vg_store *st, const struct vg_manifest *m,
    const char *run_id, struct vg_err *e)
{
	struct vg_egress_event *v;
	size_t n, dropped;
	int rc = 0;

	vg_egress_take(&v, &n, &dropped);
	if (dropped > 0)
		vg_warn("egress: %zu record%s dropped: nobody took them (they "
		    "are in the run's egress.jsonl)", dropped, dropped == 1 ?
		    "" : "s");
	if (n > 0)
		rc = record_all(st, m, run_id, v, NULL, n, 1, e);
	free(v);
	return rc;
}

/* ---- a session's records ---- */

/* The cgroup of one session command (an owner line of the log). */
struct sess_owner {
	uint64_t	 cgid;
	int		 job;
};

/* Reads an owner line ({"owner":CGID,"job":J}); 0, or -1. */
static int
owner_parse(const char *line, size_t len, struct sess_owner *o)
{
	static const struct vg_json_limits lim = { 256, 2, 4 };
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root;
	double cg, job;
	int rc = -1;

	if (len > 256 || vg_json_parse(line, len, &lim, &doc, NULL) != 0)
		return -1;
	root = vg_json_root(doc);
	if (root->type == VG_JSON_OBJECT && root->len == 2 &&
	    vg_json_get(root, "owner") != NULL &&
	    vg_json_get(root, "owner")->type == VG_JSON_NUMBER &&
	    vg_json_get(root, "job") != NULL &&
	    vg_json_get(root, "job")->type == VG_JSON_NUMBER) {
		cg = vg_json_get_num(root, "owner", -1);
		job = vg_json_get_num(root, "job", -1);
		if (cg > 0 && cg < 9007199254740992.0 && job >= 0 &&
		    job < 1e9) {
			o->cgid = (uint64_t)cg;
			o->job = (int)job;
			rc = 0;
		}
	}
	vg_json_free(doc);
	return rc;
}

/* The offset of the first byte not audited yet, kept in fd. */
static off_t
offset_read(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long long v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%lld", &v) == 1 && v > 0 ? (off_t)v : 0;
}

/* A session's records: v[0..n) with jobs[i] the job whose command made
 * v[i] (-1: none known). */
struct sess_recs {
	struct vg_egress_event	*v;
	int			*jobs;
	size_t			 n, cap;
};

static void
sess_recs_release(struct sess_recs *r)
{
	free(r->v);
	free(r->jobs);
	memset(r, 0, sizeof(*r));
}

/*
 * Parses the whole lines of data[0..end) of a session's log: owner
 * lines anywhere (a background job's may come before from), records
 * at from and after, each named to its job by its cgroup.
 */
static void
sess_parse(const char *data, size_t end, size_t from, struct sess_recs *r)
{
	struct sess_owner *own = NULL, o;
	struct vg_egress_event ev;
	size_t no = 0, co = 0, k, line;

	for (line = 0; line < end; line = k + 1) {
		k = (size_t)((const char *)memchr(data + line, '\n',
		    end - line) - data);
		if (owner_parse(data + line, k - line, &o) == 0) {
			if (no == co) {
				co = co ? co * 2 : 16;
				own = vg_xrealloc(own, co * sizeof(*own));
			}
			own[no++] = o;
			continue;
		}
		if (line < from)
			continue;
		memset(&ev, 0, sizeof(ev));
		if (vg_egress_event_parse(data + line, k - line, &ev) != 0)
			continue;
		ev.time = vg_now();
		ev.task = -1;
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 16;
			r->v = vg_xrealloc(r->v, r->cap * sizeof(*r->v));
			r->jobs = vg_xrealloc(r->jobs, r->cap *
			    sizeof(*r->jobs));
		}
		r->v[r->n] = ev;
		r->jobs[r->n] = -1;
		r->n++;
	}
	for (k = 0; k < r->n; k++)
		for (line = no; r->v[k].cgroup != 0 && line-- > 0; )
			if (own[line].cgid == r->v[k].cgroup) {
				r->jobs[k] = own[line].job;
				break;
			}
	free(own);
}

/* The end of the whole lines of data. */
static size_t
whole_lines(const struct vg_buf *data)
{
	size_t end;

	for (end = data->len; end > 0 && data->data[end - 1] != '\n'; end--)
		;
	return end;
}

int
vg_egress_session_audit(struct vg_store *st, const struct vg_manifest *m,
    const char *session_id, const char *dir, struct vg_err *e)
{
	struct sess_recs r = { 0 };
	struct vg_buf data = VG_BUF_INIT;
	char *log, *mark, num[32];
	size_t end;
	int lfd = -1, mfd = -1, rc = 0, n;
	off_t from;

	/* Files of vigil's beside the session directory, opened as such
	 * (no link, a regular file of vigil's with one name). */
	log = vg_xasprintf("%s.egress.jsonl", dir);
	mark = vg_xasprintf("%s.egress.audited", dir);
	if ((lfd = vg_beneath_file_path(log, O_RDONLY, 0, e)) < 0) {
		rc = lfd == VG_ENOENT ? 0 : vg_err_prefix(e, "egress: ");
		goto out;
	}
	if ((mfd = vg_beneath_file_path(mark, O_RDWR | O_CREAT, 0600,
	    e)) < 0) {
		rc = vg_err_prefix(e, "egress: ");
		goto out;
	}
	/* One vigil at a time audits a session's records. */
	while (flock(mfd, LOCK_EX) != 0)
		if (errno != EINTR) {
			rc = vg_err_errno(e, "egress: locking '%s'", mark);
			goto out;
		}
	from = offset_read(mfd);
	if (vg_read_fd(lfd, log, SIZE_MAX, &data, e) != 0) {
		rc = vg_err_prefix(e, "egress: ");
		goto out;
	}
	/* Whole lines only: a record being written is taken next time. */
	end = whole_lines(&data);
	if ((off_t)end <= from)
		goto out;
	sess_parse(data.data, end, (size_t)from, &r);
	if (r.n > 0 && (rc = record_all(st, m, session_id, r.v, r.jobs, r.n,
	    0, e)) != 0)
		goto out;
	n = snprintf(num, sizeof(num), "%lld\n", (long long)end);
	if (pwrite(mfd, num, (size_t)n, 0) != n || ftruncate(mfd, n) != 0)
		rc = vg_err_errno(e, "egress: '%s'", mark);
out:
	if (mfd >= 0)
		close(mfd);	/* and its lock */
	if (lfd >= 0)
		close(lfd);
	vg_buf_release(&data);
	sess_recs_release(&r);
	free(log);
	free(mark);
	return rc;
}

/* ---- sums ---- */

struct sum_ctx {
	struct vg_egress_sum	*s;
	size_t			 cap;
};

/* Adds one egress event to the sums. */
static void
sum_add(struct sum_ctx *c, int task, const struct vg_egress_event *ev)
{
	struct vg_egress_sum *s = c->s;
	struct vg_egress_group *g = NULL;
	char host[270], why[330];
	int ok;
	size_t i;

	ok = ev->allowed && ev->error[0] == '\0';
	snprintf(host, sizeof(host), "%s:%u", ev->host, ev->port);
	snprintf(why, sizeof(why), "%s", !ev->allowed ? ev->rule :
	    ev->error);
	for (i = 0; i < s->n && g == NULL; i++)
		if (s->v[i].task == task && s->v[i].allowed == ok &&
		    strcmp(s->v[i].host, host) == 0 &&
		    strcmp(s->v[i].why, why) == 0)
			g = &s->v[i];
	if (g == NULL) {
		if (s->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 8;
			s->v = vg_xrealloc(s->v, c->cap * sizeof(*s->v));
		}
		g = &s->v[s->n++];
		memset(g, 0, sizeof(*g));
		g->task = task;
		g->allowed = ok;
		g->refused = !ev->allowed;
		memcpy(g->host, host, sizeof(host));
		memcpy(g->why, why, sizeof(why));
	}
	g->n++;
	g->up += ev->up;
	g->down += ev->down;
	s->conns++;
	s->up += ev->up;
	s->down += ev->down;
	if (!ev->allowed)
		s->refused++;
	else if (!ok)
		s->failed++;
}

/* Adds one egress event of the store to the sums. */
static int
sum_cb(void *arg, const struct vg_event_rec *rec)
{
	struct vg_egress_event ev;
	const char *j;

	if (rec->reason == NULL || strncmp(rec->reason, VG_EGRESS_EVENT,
	    sizeof(VG_EGRESS_EVENT) - 1) != 0)
		return 0;
	j = rec->reason + sizeof(VG_EGRESS_EVENT) - 1;
	memset(&ev, 0, sizeof(ev));
	if (vg_egress_event_parse(j, strlen(j), &ev) != 0)
		return 0;
	sum_add(arg, rec->task, &ev);
	return 0;
}

/* Orders groups by task (-1 last), keeping first-seen order within
 * (an insertion sort: stable, and groups are few). */
static void
by_task(struct vg_egress_group *v, size_t n)
{
	struct vg_egress_group g;
	size_t i, j;

	for (i = 1; i < n; i++) {
		g = v[i];
		for (j = i; j > 0 && (unsigned)v[j - 1].task >
		    (unsigned)g.task; j--)
			v[j] = v[j - 1];
		v[j] = g;
	}
}

int
vg_egress_sum_load(struct vg_store *st, const char *run_id, int task,
    struct vg_egress_sum *s, struct vg_err *e)
{
	struct sum_ctx c = { s, 0 };
	int rc;

	memset(s, 0, sizeof(*s));
	rc = vg_store_event_each(st, run_id, task < 0 ? VG_STORE_EVENTS_ALL :
	    task, sum_cb, &c, e);
	if (rc == 0)
		by_task(s->v, s->n);
	return rc;
}

int
vg_egress_session_sum(const char *dir, struct vg_egress_sum *s,
    struct vg_err *e)
{
	struct sum_ctx c = { s, 0 };
	struct sess_recs r = { 0 };
	struct vg_buf data = VG_BUF_INIT;
	char *log = vg_xasprintf("%s.egress.jsonl", dir);
	size_t i;
	int fd, rc;

	memset(s, 0, sizeof(*s));
	s->jobs = 1;
	if ((fd = vg_beneath_file_path(log, O_RDONLY, 0, e)) < 0) {
		free(log);
		return fd == VG_ENOENT ? 0 : vg_err_prefix(e, "egress: ");
	}
	rc = vg_read_fd(fd, log, SIZE_MAX, &data, e);
	close(fd);
	free(log);
	if (rc != 0) {
		vg_buf_release(&data);
		return vg_err_prefix(e, "egress: ");
	}
	sess_parse(data.data, whole_lines(&data), 0, &r);
	for (i = 0; i < r.n; i++)
		sum_add(&c, r.jobs[i], &r.v[i]);
	by_task(s->v, s->n);
	vg_buf_release(&data);
	sess_recs_release(&r);
	return 0;
}

void
vg_egress_sum_release(struct vg_egress_sum *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* "task 3" or "no task" ("job 3", "no job" in a session's). */
static void
task_name(const struct vg_egress_sum *s, int task, char *buf, size_t len)
{
	const char *unit = s->jobs ? "job" : "task";

	if (task >= 0)
		snprintf(buf, len, "%s %d", unit, task);
	else
		snprintf(buf, len, "no %s", unit);
}

void
vg_egress_sum_text(const struct vg_egress_sum *s, struct vg_buf *out)
{
	const struct vg_egress_group *g;
	char t[32];
	size_t i;

	if (s->conns == 0)
		return;
	vg_buf_printf(out, "\negress: %zu connection%s, %zu refused, %zu "
	    "failed, %llu bytes up, %llu down\n", s->conns, s->conns == 1 ?
	    "" : "s", s->refused, s->failed, (unsigned long long)s->up,
	    (unsigned long long)s->down);
	for (i = 0; i < s->n; i++) {
		g = &s->v[i];
		task_name(s, g->task, t, sizeof(t));
		vg_buf_printf(out, "  %-8s  %-7s  %s  %zu connection%s", t,
		    g->allowed ? "reached" : g->refused ? "refused" :
		    "failed", g->host, g->n, g->n == 1 ? "" : "s");
		if (g->allowed)
			vg_buf_printf(out, ", %llu bytes up, %llu down\n",
			    (unsigned long long)g->up,
			    (unsigned long long)g->down);
		else
			vg_buf_printf(out, " (%s)\n", g->why);
	}
}

void
vg_egress_sum_json(const struct vg_egress_sum *s, struct vg_json_writer *w)
{
	const struct vg_egress_group *g;
	size_t i;

	vg_json_obj_begin(w);
	vg_json_key(w, "connections");
	vg_json_int(w, (long long)s->conns);
	vg_json_key(w, "refused");
	vg_json_int(w, (long long)s->refused);
	vg_json_key(w, "failed");
	vg_json_int(w, (long long)s->failed);
	vg_json_key(w, "up");
	vg_json_int(w, (long long)s->up);
	vg_json_key(w, "down");
	vg_json_int(w, (long long)s->down);
	vg_json_key(w, "hosts");
	vg_json_arr_begin(w);
	for (i = 0; i < s->n; i++) {
		g = &s->v[i];
		vg_json_obj_begin(w);
		vg_json_key(w, s->jobs ? "job" : "task");
		if (g->task >= 0)
			vg_json_int(w, g->task);
		else
			vg_json_null(w);
		vg_json_key(w, "host");
		vg_json_str(w, g->host);
		vg_json_key(w, "outcome");
		vg_json_str(w, g->allowed ? "reached" : g->refused ?
		    "refused" : "failed");
		vg_json_key(w, "why");
		vg_json_str(w, g->allowed ? NULL : g->why);
		vg_json_key(w, "connections");
		vg_json_int(w, (long long)g->n);
		vg_json_key(w, "up");
		vg_json_int(w, (long long)g->up);
		vg_json_key(w, "down");
		vg_json_int(w, (long long)g->down);
		vg_json_obj_end(w);
	}
	vg_json_arr_end(w);
	vg_json_obj_end(w);
}

void
vg_egress_sum_refused(const struct vg_egress_sum *s, const char *indent,
    struct vg_buf *out)
{
	const struct vg_egress_group *g;
	char t[32];
	size_t i;

	for (i = 0; i < s->n; i++) {
		g = &s->v[i];
		if (!g->refused)
			continue;
		task_name(s, g->task, t, sizeof(t));
		vg_buf_printf(out, "%s%s: %s (%s), %zu connection%s\n", indent,
		    t, g->host, g->why, g->n, g->n == 1 ? "" : "s");
	}
}

/* ---- the records of a task on another host ---- */

int
vg_egress_import_attempt(struct vg_store *st, const struct vg_manifest *m,
    const char *run_id, const char *run_dir, int index, int attempt,
    struct vg_err *e)
{
	struct vg_egress_event *v = NULL, ev;
	struct vg_buf data = VG_BUF_INIT, out = VG_BUF_INIT;
	char rel[64], *dir;
	size_t nv = 0, cv = 0, line, k;
	int rc, dfd = -1, lfd;
	ssize_t n;

	snprintf(rel, sizeof(rel), "egress/%d.%d", index, attempt);
	dir = vg_path_join(run_dir, rel);
	/* RUN/egress is vigil's (no task writes the run directory); read
	 * as hostile all the same: the proxy parsed what tasks sent. */
	rc = vg_beneath_read(dir, 0, "egress.jsonl", 64u << 20, &data, e);
	if (rc == VG_ENOENT) {
		rc = 0;
		goto out;
	}
	if (rc != 0)
		goto out;
	for (line = 0; line < data.len; line = k + 1) {
		char *nl = memchr(data.data + line, '\n', data.len - line);

		k = nl != NULL ? (size_t)(nl - data.data) : data.len;
		memset(&ev, 0, sizeof(ev));
		if (vg_egress_event_parse(data.data + line, k - line, &ev) != 0)
			continue;
		/* Whose: the directory vigil named, not the line. */
		ev.time = vg_now();
		ev.task = index;
		ev.attempt = attempt;
		if (nv == cv) {
			cv = cv ? cv * 2 : 16;
			v = vg_xrealloc(v, cv * sizeof(*v));
		}
		v[nv++] = ev;
	}
	if (nv > 0 && (rc = record_all(st, m, run_id, v, NULL, nv, 1, e)) != 0)
		goto out;
	/* For people, with the run's other records. */
	if ((dfd = vg_beneath_anchor(run_dir, e)) < 0) {
		rc = dfd;
		goto out;
	}
	for (k = 0; k < nv; k++) {
		vg_egress_event_json(&v[k], &out);
		vg_buf_addc(&out, '\n');
	}
	if (out.len > 0) {
		if ((lfd = vg_beneath_file(dfd, "egress.jsonl", O_WRONLY |
		    O_APPEND | O_CREAT, 0600, "egress log", e)) < 0) {
			rc = lfd;
			goto out;
		}
		n = write(lfd, out.data, out.len);
		close(lfd);
		if (n != (ssize_t)out.len) {
			rc = vg_err_errno(e, "egress: appending to '%s/egress."
			    "jsonl'", run_dir);
			goto out;
		}
	}
	/* Taken: never again (a resumed driver reads only the rest). */
	snprintf(rel, sizeof(rel), "egress/%d.%d/egress.jsonl", index,
	    attempt);
	(void)unlinkat(dfd, rel, 0);
	snprintf(rel, sizeof(rel), "egress/%d.%d", index, attempt);
	(void)unlinkat(dfd, rel, AT_REMOVEDIR);
	(void)unlinkat(dfd, "egress", AT_REMOVEDIR);
out:
	if (dfd >= 0)
		close(dfd);
	vg_buf_release(&data);
	vg_buf_release(&out);
	free(v);
	free(dir);
	return rc;
}
