/*
 * egress-log.c - egress records into events and the audit log, and
 * their sums for status, the report and --cron (runner/core/egress-log.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/egress-run.h"
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

int
vg_egress_log_drain(struct vg_store *st, const struct vg_manifest *m,
    const char *run_id, struct vg_err *e)
{
	struct vg_egress_event *v;
	struct vg_buf json = VG_BUF_INIT, cmd = VG_BUF_INIT, why = VG_BUF_INIT;
	struct vg_buf *held = NULL;
	struct vg_policy *p = NULL;
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_audit_rec ar;
	struct vg_err pe;
	size_t n, dropped, i;
	int rc = 0;

	vg_egress_take(&v, &n, &dropped);
	if (dropped > 0)
		vg_warn("egress: %zu record%s dropped: nobody took them (they "
		    "are in the run's egress.jsonl)", dropped, dropped == 1 ?
		    "" : "s");
	if (n == 0)
		goto out;
	/* The audit file is the policy's; the gate opened the same. */
	vg_err_init(&pe);
	if (vg_policy_open(&m->policy, NULL, &p, &diag, &pe) == 0) {
		vg_policy_audit_hold(p, 1);
		held = vg_policy_audit_held(p);
	} else
		vg_warn("egress: no audit file line for the connections: %s",
		    pe.msg);
	for (i = 0; i < n && rc == 0; i++) {
		vg_buf_reset(&json);
		vg_buf_adds(&json, VG_EGRESS_EVENT);
		vg_egress_event_json(&v[i], &json);
		rc = vg_store_event(st, run_id, v[i].task, v[i].attempt,
		    VG_ST_RUNNING, vg_buf_str(&json), e);
		audit_of(&v[i], run_id, &cmd, &why, &ar);
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
out:
	vg_diag_release(&diag);
	vg_buf_release(&json);
	vg_buf_release(&cmd);
	vg_buf_release(&why);
	free(v);
	return rc;
}

/* ---- sums ---- */

struct sum_ctx {
	struct vg_egress_sum	*s;
	size_t			 cap;
};

/* Adds one egress event to the sums. */
static int
sum_cb(void *arg, const struct vg_event_rec *rec)
{
	struct sum_ctx *c = arg;
	struct vg_egress_sum *s = c->s;
	struct vg_egress_event ev;
	struct vg_egress_group *g = NULL;
	const char *j;
	char host[270], why[330];
	int ok;
	size_t i;

	if (rec->reason == NULL || strncmp(rec->reason, VG_EGRESS_EVENT,
	    sizeof(VG_EGRESS_EVENT) - 1) != 0)
		return 0;
	j = rec->reason + sizeof(VG_EGRESS_EVENT) - 1;
	memset(&ev, 0, sizeof(ev));
	if (vg_egress_event_parse(j, strlen(j), &ev) != 0)
		return 0;
	ok = ev.allowed && ev.error[0] == '\0';
	snprintf(host, sizeof(host), "%s:%u", ev.host, ev.port);
	snprintf(why, sizeof(why), "%s", !ev.allowed ? ev.rule :
	    ev.error);
	for (i = 0; i < s->n && g == NULL; i++)
		if (s->v[i].task == rec->task && s->v[i].allowed == ok &&
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
		g->task = rec->task;
		g->allowed = ok;
		g->refused = !ev.allowed;
		memcpy(g->host, host, sizeof(host));
		memcpy(g->why, why, sizeof(why));
	}
	g->n++;
	g->up += ev.up;
	g->down += ev.down;
	s->conns++;
	s->up += ev.up;
	s->down += ev.down;
	if (!ev.allowed)
		s->refused++;
	else if (!ok)
		s->failed++;
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

void
vg_egress_sum_release(struct vg_egress_sum *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* "task 3" or "no task". */
static void
task_name(int task, char *buf, size_t len)
{
	if (task >= 0)
		snprintf(buf, len, "task %d", task);
	else
		snprintf(buf, len, "no task");
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
		task_name(g->task, t, sizeof(t));
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
		vg_json_key(w, "task");
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
		task_name(g->task, t, sizeof(t));
		vg_buf_printf(out, "%s%s: %s (%s), %zu connection%s\n", indent,
		    t, g->host, g->why, g->n, g->n == 1 ? "" : "s");
	}
}
