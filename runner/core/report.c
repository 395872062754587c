/*
 * report.c - gathers the report of one run (report.h) from the store and
 * the run directory and writes it as one JSON document: the run's header,
 * the totals of usage.c, the task table and every attempt as rows of
 * arrays (named once in *_fields: a 100,000-task run stays a few MB),
 * each attempt on a timeline lane, failures with their stderr tails and
 * the policy's decisions.  Lanes are the executor slots of each node
 * where the scheduler recorded them (direct: an attempt's slot, 1 to
 * --jobs); elsewhere (a cluster's nodes, runs recorded before slots
 * were) the attempts of a node sorted by start take the lowest lane
 * free at their start, so a lane is one slot of a node as it was
 * actually used.  Attempts that ended without starting (denied, a
 * backend that could not start them) go on a lane of their own.
 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/core/attempt-log.h"
#include "runner/core/egress-log.h"
#include "runner/core/outputs.h"
#include "runner/core/report.h"
#include "runner/core/stream.h"
#include "runner/core/usage.h"

/* One task as the report holds it. */
struct rtask {
	struct vg_task_rec	 t;
	char			*matrix;	/* JSON object */
	struct vg_json_doc	*mdoc;		/* parsed, or NULL */
	char			*label;
	int			 final_attempt;	/* row in attempts, or -1 */
};

/* One attempt as the report holds it. */
struct ratt {
	int			 task;
	int			 attempt;
	enum vg_state		 state;
	int			 exit_code;
	int			 signal;
	double			 start;		/* 0: never started */
	double			 end;		/* 0: not ended */
	struct vg_usage		 u;
	char			*node;		/* "" when unknown */
	char			*reason;	/* "" when none */
	int			 slot;		/* recorded; 0: not known */
	long long		 oend[2];	/* out_end, err_end */
	int			 lane;		/* -1: not on the timeline */
};

/* Everything gathered about the run. */
struct report {
	struct vg_run_info	 r;
	struct rtask		*t;
	size_t			 nt, tcap;
	struct ratt		*a;
	size_t			 na, acap;
	struct vg_strv		 lanes;		/* "node/slot" */
	int			 by_slot;	/* some lanes are recorded
						   slots */
	int			 by_node;	/* some are packed */
	struct vg_strv		 keys;		/* matrix keys, first seen */
	char			 host[256];
	double			 now;
	struct vg_buf		 policy;	/* decisions, JSON items */
	size_t			 ndecisions;
	size_t			 verdicts[5];	/* verdict_names */
	struct vg_egress_sum	 egress;	/* connections, from the events */
};

static const char *const verdict_names[] = {
	"allow", "deny", "ask-allow", "ask-deny", "ask-allow-similar",
};

/* Keeps one task (store callback). */
static int
task_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct report *R = arg;
	struct rtask *rt;

	R->t = vg_xgrow(R->t, &R->tcap, R->nt + 1, sizeof(*R->t));
	rt = &R->t[R->nt++];
	rt->t = *t;
	rt->matrix = vg_xstrdup(mj != NULL ? mj : "{}");
	rt->label = vg_xstrdup(label != NULL ? label : "");
	rt->mdoc = NULL;
	rt->final_attempt = -1;
	return 0;
}

/* Keeps one attempt (store callback). */
static int
attempt_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct report *R = arg;
	struct ratt *ra;

	R->a = vg_xgrow(R->a, &R->acap, R->na + 1, sizeof(*R->a));
	ra = &R->a[R->na++];
	ra->task = a->index;
	ra->attempt = a->attempt;
	ra->state = a->state;
	ra->exit_code = a->exit_code;
	ra->signal = a->signal;
	ra->start = a->started;
	ra->end = vg_state_terminal(a->state) ? a->ended : 0;
	ra->u = a->usage;
	ra->node = vg_xstrdup(a->node != NULL ? a->node : "");
	ra->reason = vg_xstrdup(a->reason != NULL ? a->reason : "");
	ra->slot = a->slot;
	ra->oend[0] = a->out_end;
	ra->oend[1] = a->err_end;
	ra->lane = -1;
	return 0;
}

/* Keeps one policy decision of the run (store callback). */
static int
audit_cb(void *arg, const struct vg_audit_rec *a)
{
	struct report *R = arg;
	struct vg_json_writer w;
	size_t v;

	/* Connections through the egress proxy have a section of their
	 * own (egress, from the events). */
	if (a->mode != NULL && strcmp(a->mode, "egress") == 0)
		return 0;
	for (v = 0; v < 5; v++)
		if (a->verdict != NULL && strcmp(a->verdict,
		    verdict_names[v]) == 0)
			R->verdicts[v]++;
	/* Plain allows without a finding are counted only. */
	if (a->verdict != NULL && strcmp(a->verdict, "allow") == 0 &&
	    a->category == NULL)
		return 0;
	if (R->ndecisions++ >= VG_REPORT_MAX_DECISIONS)
		return 0;
	if (R->policy.len > 0)
		vg_buf_addc(&R->policy, ',');
	vg_json_writer_init(&w, &R->policy);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "task");
	vg_json_int(&w, a->task_index);
	vg_json_key(&w, "verdict");
	vg_json_str(&w, a->verdict);
	vg_json_key(&w, "category");
	vg_json_str(&w, a->category);
	vg_json_key(&w, "rule");
	vg_json_str(&w, a->rule);
	vg_json_key(&w, "reason");
	vg_json_str(&w, a->reason);
	vg_json_key(&w, "command");
	vg_json_str(&w, a->command);
	vg_json_key(&w, "mode");
	vg_json_str(&w, a->mode);
	vg_json_obj_end(&w);
	return 0;
}

/* The attempt rows by_node_start orders (qsort takes no argument). */
static const struct ratt *sort_base;

/* Orders attempt rows by node (node2 before node10), then start (for
 * lane assignment). */
static int
by_node_start(const void *x, const void *y)
{
	const struct ratt *a = &sort_base[*(const size_t *)x];
	const struct ratt *b = &sort_base[*(const size_t *)y];
	int c = strverscmp(a->node, b->node);

	if (c != 0)
		return c;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Adds lane "node/k" (node "" is this host) to R. */
static void
lane_add(struct report *R, const char *node, size_t k)
{
	char name[320];

	snprintf(name, sizeof(name), "%s/%zu", *node != '\0' ? node :
	    R->host, k);
	vg_strv_push(&R->lanes, name);
}

/* Puts the n attempts ord[0..n) of one node on its lanes: one per
 * recorded slot when every one of them has its slot, else the lowest
 * lane free at each one's start. */
static void
node_lanes(struct report *R, const size_t *ord, size_t n)
{
	double *busy = NULL;	/* end of the last attempt of each lane */
	size_t i, k, nl = 0, lcap = 0, base = R->lanes.n;
	int top = 0;

	for (i = 0; i < n && R->a[ord[i]].slot > 0; i++)
		if (R->a[ord[i]].slot > top)
			top = R->a[ord[i]].slot;
	if (i == n) {
		for (k = 1; k <= (size_t)top; k++)
			lane_add(R, R->a[ord[0]].node, k);
		for (i = 0; i < n; i++)
			R->a[ord[i]].lane = (int)base + R->a[ord[i]].slot - 1;
		R->by_slot = 1;
		return;
	}
	R->by_node = 1;
	for (i = 0; i < n; i++) {
		struct ratt *a = &R->a[ord[i]];
		double end = a->end > 0 ? a->end : R->now;

		for (k = 0; k < nl && busy[k] > a->start; k++)
			;
		if (k == nl) {
			busy = vg_xgrow(busy, &lcap, nl + 1, sizeof(*busy));
			nl++;
			lane_add(R, a->node, k + 1);
		}
		busy[k] = end;
		a->lane = (int)(base + k);
	}
	free(busy);
}

/* Puts every started attempt on a lane of its node (node_lanes), and
 * every one that ended without starting on a last lane of its own. */
static void
assign_lanes(struct report *R)
{
	size_t *ord = vg_xcalloc(R->na + 1, sizeof(*ord));
	size_t i, j, n = 0;
	int unstarted = 0;

	for (i = 0; i < R->na; i++)
		if (R->a[i].start > 0)
			ord[n++] = i;
	sort_base = R->a;
	qsort(ord, n, sizeof(*ord), by_node_start);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(R->a[ord[j]].node,
		    R->a[ord[i]].node) == 0; j++)
			;
		node_lanes(R, ord + i, j - i);
	}
	for (i = 0; i < R->na; i++) {
		struct ratt *a = &R->a[i];

		if (a->start > 0 || a->end <= 0)
			continue;
		if (!unstarted) {
			vg_strv_push(&R->lanes, "not started");
			unstarted = 1;
		}
		/* An instant at its end (write_attempts): the page draws
		 * it a few pixels wide. */
		a->lane = (int)R->lanes.n - 1;
	}
	free(ord);
}

/* Collects the matrix keys in order of first appearance. */
static void
collect_keys(struct report *R, const struct vg_json_value *o)
{
	size_t i, j;

	for (i = 0; i < o->len; i++) {
		for (j = 0; j < R->keys.n; j++)
			if (strcmp(R->keys.v[j], o->keys[i]) == 0)
				break;
		if (j == R->keys.n)
			vg_strv_push(&R->keys, o->keys[i]);
	}
}

/* Appends a number with prec decimals, or null when v < 0. */
static void
num(struct vg_buf *b, double v, int prec)
{
	if (v < 0)
		vg_buf_adds(b, "null");
	else
		vg_buf_add_fixed(b, v, prec);
}

/* Appends a string value (NULL: null). */
static void
str(struct vg_buf *b, const char *s)
{
	if (s == NULL)
		vg_buf_adds(b, "null");
	else
		vg_json_quote(b, s, strlen(s));
}

/* Seconds from the run's start, or -1 for 0. */
static double
rel(const struct report *R, double t)
{
	return t > 0 ? (t >= R->r.created ? t - R->r.created : 0) : -1;
}

/* Appends the tasks array: one row per task in task_fields order. */
static void
write_tasks(struct report *R, struct vg_buf *b)
{
	const struct vg_json_value *o, *v;
	size_t i, k;

	vg_buf_addc(b, '[');
	for (i = 0; i < R->nt; i++) {
		const struct rtask *t = &R->t[i];
		const struct ratt *a = t->final_attempt >= 0 ?
		    &R->a[t->final_attempt] : NULL;
		const struct vg_usage none = { 0 };
		const struct vg_usage *u = a != NULL ? &a->u : &none;
		double wall = a != NULL && a->start > 0 ? (a->end > 0 ?
		    a->end : R->now) - a->start : -1;

		vg_buf_adds(b, i > 0 ? ",\n[" : "\n[");
		vg_buf_add_ll(b, t->t.index);
		vg_buf_addc(b, ',');
		/* The label only where no matrix values say it. */
		str(b, R->keys.n == 0 ? t->label : NULL);
		vg_buf_addc(b, ',');
		/* The matrix values in keys order. */
		vg_buf_addc(b, '[');
		o = t->mdoc != NULL ? vg_json_root(t->mdoc) : NULL;
		for (k = 0; k < R->keys.n; k++) {
			v = o != NULL ? vg_json_get(o, R->keys.v[k]) : NULL;
			if (k > 0)
				vg_buf_addc(b, ',');
			str(b, v != NULL && v->type == VG_JSON_STRING ?
			    v->str : NULL);
		}
		vg_buf_adds(b, "],");
		vg_buf_add_ll(b, (int)t->t.state);
		vg_buf_addc(b, ',');
		if (t->t.attempts > 0 && vg_state_terminal(t->t.state) &&
		    t->t.exit_code >= 0)
			vg_buf_add_ll(b, t->t.exit_code);
		else
			vg_buf_adds(b, "null");
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, t->t.signal);
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, t->t.attempts);
		vg_buf_addc(b, ',');
		num(b, a != NULL ? rel(R, a->start) : -1, 3);
		vg_buf_addc(b, ',');
		num(b, wall, 3);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_CPU ? u->cpu_user + u->cpu_sys :
		    -1, 3);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_RSS ? (double)u->max_rss : -1, 0);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_MEM ? (double)u->mem_limit : -1, 0);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_CPUS ? u->cpus : -1, 0);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_GPUS ? u->gpus : -1, 0);
		vg_buf_addc(b, ',');
		str(b, t->t.reason[0] != '\0' ? t->t.reason : NULL);
		vg_buf_addc(b, ']');
	}
	vg_buf_addc(b, ']');
}

/* Appends the attempts array: one row per attempt. */
static void
write_attempts(struct report *R, struct vg_buf *b)
{
	size_t i;

	vg_buf_addc(b, '[');
	for (i = 0; i < R->na; i++) {
		const struct ratt *a = &R->a[i];
		const struct vg_usage *u = &a->u;
		/* One that never started is an instant at its end. */
		double start = a->start > 0 ? a->start : a->lane >= 0 ?
		    a->end : 0;

		vg_buf_adds(b, i > 0 ? ",\n[" : "\n[");
		vg_buf_add_ll(b, a->task);
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, a->attempt);
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, (int)a->state);
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, a->lane);
		vg_buf_addc(b, ',');
		num(b, rel(R, start), 3);
		vg_buf_addc(b, ',');
		num(b, start > 0 ? rel(R, a->end > 0 ? a->end : R->now) :
		    -1, 3);
		vg_buf_addc(b, ',');
		if (vg_state_terminal(a->state) && a->exit_code >= 0)
			vg_buf_add_ll(b, a->exit_code);
		else
			vg_buf_adds(b, "null");
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, a->signal);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_CPU ? u->cpu_user + u->cpu_sys :
		    -1, 3);
		vg_buf_addc(b, ',');
		num(b, u->known & VG_USAGE_RSS ? (double)u->max_rss : -1, 0);
		vg_buf_addc(b, ',');
		vg_buf_add_ll(b, a->slot);
		vg_buf_addc(b, ',');
		str(b, a->reason[0] != '\0' ? a->reason : NULL);
		vg_buf_addc(b, ']');
	}
	vg_buf_addc(b, ']');
}

/* Fills m with the attempts of task index as R holds them. */
static void
task_marks(const struct report *R, int index, struct vg_attempt_marks *m)
{
	struct vg_attempt_mark *k;
	size_t i;

	m->n = 0;
	for (i = 0; i < R->na; i++) {
		const struct ratt *a = &R->a[i];

		if (a->task != index)
			continue;
		m->v = vg_xgrow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
		k = &m->v[m->n++];
		memset(k, 0, sizeof(*k));
		k->attempt = a->attempt;
		k->started = a->start;
		k->ended = a->end;
		k->state = a->state;
		k->exit_code = a->exit_code;
		k->signal = a->signal;
		vg_strlcpy(k->reason, a->reason, sizeof(k->reason));
		k->end[0] = a->oend[0];
		k->end[1] = a->oend[1];
	}
}

/* Reads the last VG_REPORT_TAIL bytes of a task's stderr into out
 * (whole lines where it can), each attempt's part under its header when
 * it ran more than once; nothing when there is none. */
static void
stderr_tail(const struct report *R, int index, struct vg_buf *out)
{
	struct vg_attempt_marks m = VG_ATTEMPT_MARKS_INIT;
	struct vg_buf raw = VG_BUF_INIT;
	struct vg_err e;
	const char *p;
	int cut = 0;

	vg_err_init(&e);
	task_marks(R, index, &m);
	(void)vg_attempt_output_tail(R->r.dir, index, VG_STREAM_STDERR, &m,
	    VG_REPORT_TAIL, &raw, &cut, &e);
	if (raw.len > 0) {
		p = raw.data;
		/* Cut inside a line: from the next one, unless it is the
		 * header the marked tail starts with. */
		if (cut && strncmp(raw.data, "--- attempt ", 12) != 0 &&
		    (p = memchr(raw.data, '\n', raw.len)) != NULL &&
		    p + 1 < raw.data + raw.len)
			p++;
		else
			p = raw.data;
		vg_buf_add(out, p, (size_t)(raw.data + raw.len - p));
	}
	vg_attempt_marks_release(&m);
	vg_buf_release(&raw);
}

/* Appends the failures: tasks that ended in a state other than
 * SUCCEEDED, CANCELLED or DENIED (denials are the policy's section). */
static void
write_failures(struct report *R, struct vg_buf *b, size_t *total)
{
	struct vg_buf tail = VG_BUF_INIT;
	struct vg_json_writer w;
	size_t i, n = 0;

	vg_buf_addc(b, '[');
	for (i = 0; i < R->nt; i++) {
		const struct rtask *t = &R->t[i];

		if (!vg_state_terminal(t->t.state) ||
		    t->t.state == VG_ST_SUCCEEDED ||
		    t->t.state == VG_ST_CANCELLED ||
		    t->t.state == VG_ST_DENIED)
			continue;
		if (n++ >= VG_REPORT_MAX_TAILS)
			continue;
		vg_buf_reset(&tail);
		if (R->r.dir != NULL)
			stderr_tail(R, t->t.index, &tail);
		if (n > 1)
			vg_buf_addc(b, ',');
		vg_json_writer_init(&w, b);
		vg_json_obj_begin(&w);
		vg_json_key(&w, "task");
		vg_json_int(&w, t->t.index);
		vg_json_key(&w, "label");
		vg_json_str(&w, t->label);
		vg_json_key(&w, "state");
		vg_json_str(&w, vg_state_name(t->t.state));
		vg_json_key(&w, "attempts");
		vg_json_int(&w, t->t.attempts);
		vg_json_key(&w, "reason");
		vg_json_str(&w, t->t.reason[0] != '\0' ? t->t.reason : NULL);
		vg_json_key(&w, "stderr_tail");
		vg_json_strn(&w, tail.data != NULL ? tail.data : "", tail.len);
		vg_json_obj_end(&w);
	}
	vg_buf_addc(b, ']');
	*total = n;
	vg_buf_release(&tail);
}

/*
 * Appends "outputs": what the tasks collected after their last attempts
 * (tasks/<i>/outputs.json): files and bytes in all, and the destination
 * and files of the first VG_REPORT_MAX_TAILS tasks with any.
 */
static void
write_outputs(const struct report *R, struct vg_json_writer *w)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *files;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	long long nfiles = 0, bytes = 0;
	size_t i, j, shown = 0, total = 0;
	char *td;

	vg_json_key(w, "outputs");
	vg_json_obj_begin(w);
	vg_json_key(w, "tasks");
	vg_json_arr_begin(w);
	for (i = 0; i < R->nt && R->r.dir != NULL; i++) {
		vg_err_init(&e);
		vg_buf_reset(&b);
		doc = NULL;
		td = vg_xasprintf("%s/tasks/%d", R->r.dir, R->t[i].t.index);
		/* The task could have written the record: only one that
		 * parses counts. */
		if (vg_outputs_read(td, &b) == 0 && b.len > 0 &&
		    vg_outputs_valid(vg_buf_str(&b), b.len))
			(void)vg_json_parse(vg_buf_str(&b), b.len, NULL, &doc,
			    &e);
		free(td);
		if (doc == NULL)
			continue;
		root = vg_json_root(doc);
		files = vg_json_get(root, "files");
		if (files != NULL && files->type == VG_JSON_ARRAY &&
		    files->len > 0) {
			total++;
			nfiles += (long long)files->len;
			bytes += (long long)vg_json_get_num(root, "bytes", 0);
			if (shown++ < VG_REPORT_MAX_TAILS) {
				vg_json_obj_begin(w);
				vg_json_key(w, "task");
				vg_json_int(w, R->t[i].t.index);
				vg_json_key(w, "dest");
				vg_json_str(w, vg_json_get_str(root, "dest",
				    NULL));
				vg_json_key(w, "files");
				vg_json_arr_begin(w);
				for (j = 0; j < files->len; j++)
					vg_json_str(w, vg_json_get_str(
					    files->items[j], "path", "?"));
				vg_json_arr_end(w);
				vg_json_obj_end(w);
			}
		}
		vg_json_free(doc);
	}
	vg_json_arr_end(w);
	vg_json_key(w, "tasks_total");
	vg_json_int(w, (long long)total);
	vg_json_key(w, "files");
	vg_json_int(w, nfiles);
	vg_json_key(w, "bytes");
	vg_json_int(w, bytes);
	vg_json_obj_end(w);
	vg_buf_release(&b);
}

/* Appends raw JSON text as the value of key through the writer. */
static void
raw(struct vg_json_writer *w, const char *key, const struct vg_buf *v)
{
	vg_json_key(w, key);
	vg_json_null(w);
	w->out->len -= 4;
	vg_buf_add(w->out, v->data, v->len);
}

/* Appends a JSON array of the strings of v. */
static void
strv_json(struct vg_json_writer *w, const char *key, const struct vg_strv *v)
{
	size_t i;

	vg_json_key(w, key);
	vg_json_arr_begin(w);
	for (i = 0; i < v->n; i++)
		vg_json_str(w, v->v[i]);
	vg_json_arr_end(w);
}

/* Appends the field names of the task and attempt rows. */
static void
fields_json(struct vg_json_writer *w)
{
	static const char *const tf[] = {
		"index", "label", "matrix", "state", "exit_code", "signal",
		"attempts", "start", "wall", "cpu", "max_rss", "mem_limit",
		"cpus", "gpus", "reason",
	};
	static const char *const af[] = {
		"task", "attempt", "state", "lane", "start", "end",
		"exit_code", "signal", "cpu", "max_rss", "slot", "reason",
	};
	size_t i;
	int s;

	vg_json_key(w, "states");
	vg_json_arr_begin(w);
	for (s = 0; s < VG_ST__COUNT; s++)
		vg_json_str(w, vg_state_name((enum vg_state)s));
	vg_json_arr_end(w);
	vg_json_key(w, "task_fields");
	vg_json_arr_begin(w);
	for (i = 0; i < sizeof(tf) / sizeof(tf[0]); i++)
		vg_json_str(w, tf[i]);
	vg_json_arr_end(w);
	vg_json_key(w, "attempt_fields");
	vg_json_arr_begin(w);
	for (i = 0; i < sizeof(af) / sizeof(af[0]); i++)
		vg_json_str(w, af[i]);
	vg_json_arr_end(w);
}

/* Writes the document of R into out. */
static void
write_doc(struct report *R, struct vg_buf *out)
{
	struct vg_json_writer w;
	struct vg_usage_sum sum;
	struct vg_buf part = VG_BUF_INIT;
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw != NULL ? pw->pw_name : getenv("USER");
	size_t i, nfail = 0;
	int s;

	vg_usage_sum_init(&sum);
	for (i = 0; i < R->nt; i++) {
		const struct ratt *a = R->t[i].final_attempt >= 0 ?
		    &R->a[R->t[i].final_attempt] : NULL;

		if (a != NULL && vg_state_terminal(a->state))
			vg_usage_sum_add(&sum, &a->u, a->state, a->start > 0 &&
			    a->end > a->start ? a->end - a->start : 0);
	}
	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "vigil_report");
	vg_json_int(&w, VG_REPORT_VERSION);
	vg_json_key(&w, "generated");
	vg_json_num(&w, R->now);
	vg_json_key(&w, "snapshot");
	vg_json_bool(&w, !vg_state_terminal(R->r.state));
	vg_json_key(&w, "run");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "id");
	vg_json_str(&w, R->r.id);
	vg_json_key(&w, "name");
	vg_json_str(&w, R->r.name);
	vg_json_key(&w, "file");
	vg_json_str(&w, R->r.file);
	vg_json_key(&w, "state");
	vg_json_str(&w, vg_state_name(R->r.state));
	vg_json_key(&w, "reason");
	vg_json_str(&w, R->r.reason);
	vg_json_key(&w, "host");
	vg_json_str(&w, R->host);
	vg_json_key(&w, "user");
	vg_json_str(&w, user);
	vg_json_key(&w, "scheduler");
	vg_json_str(&w, R->r.scheduler);
	vg_json_key(&w, "backend");
	vg_json_str(&w, R->r.backend);
	vg_json_key(&w, "dir");
	vg_json_str(&w, R->r.dir);
	vg_json_key(&w, "created");
	vg_json_num(&w, R->r.created);
	vg_json_key(&w, "ended");
	if (R->r.ended > 0)
		vg_json_num(&w, R->r.ended);
	else
		vg_json_null(&w);
	vg_json_key(&w, "ntasks");
	vg_json_int(&w, R->r.ntasks);
	vg_json_key(&w, "counts");
	vg_json_obj_begin(&w);
	for (s = 0; s < VG_ST__COUNT; s++)
		if (R->r.counts[s] > 0) {
			vg_json_key(&w, vg_state_name((enum vg_state)s));
			vg_json_int(&w, R->r.counts[s]);
		}
	vg_json_obj_end(&w);
	vg_json_obj_end(&w);
	vg_json_key(&w, "usage");
	vg_usage_sum_json(&w, &sum);
	vg_buf_reset(&part);
	vg_usage_line(&sum, &part);
	vg_json_key(&w, "usage_line");
	vg_json_str(&w, part.len > 0 ? vg_buf_str(&part) : NULL);
	strv_json(&w, "matrix_keys", &R->keys);
	strv_json(&w, "lanes", &R->lanes);
	/* What a lane is: "slot" (recorded executor slots), "node" (packed
	 * on each node), "mixed", or null with no lane. */
	vg_json_key(&w, "lanes_from");
	vg_json_str(&w, R->by_slot && R->by_node ? "mixed" : R->by_slot ?
	    "slot" : R->by_node ? "node" : NULL);
	fields_json(&w);
	vg_buf_reset(&part);
	write_tasks(R, &part);
	raw(&w, "tasks", &part);
	vg_buf_reset(&part);
	write_attempts(R, &part);
	raw(&w, "attempts", &part);
	vg_buf_reset(&part);
	write_failures(R, &part, &nfail);
	raw(&w, "failures", &part);
	vg_json_key(&w, "failures_total");
	vg_json_int(&w, (long long)nfail);
	write_outputs(R, &w);
	vg_json_key(&w, "policy");
	vg_json_obj_begin(&w);
	vg_json_key(&w, "counts");
	vg_json_obj_begin(&w);
	for (i = 0; i < 5; i++) {
		vg_json_key(&w, verdict_names[i]);
		vg_json_int(&w, (long long)R->verdicts[i]);
	}
	vg_json_obj_end(&w);
	vg_buf_reset(&part);
	vg_buf_addc(&part, '[');
	vg_buf_add(&part, R->policy.data, R->policy.len);
	vg_buf_addc(&part, ']');
	raw(&w, "decisions", &part);
	vg_json_key(&w, "decisions_total");
	vg_json_int(&w, (long long)R->ndecisions);
	vg_json_obj_end(&w);
	vg_json_key(&w, "egress");
	vg_egress_sum_json(&R->egress, &w);
	vg_json_obj_end(&w);
	vg_buf_addc(out, '\n');
	vg_buf_release(&part);
}

/* Frees what R gathered. */
static void
report_release(struct report *R)
{
	size_t i;

	for (i = 0; i < R->nt; i++) {
		free(R->t[i].matrix);
		vg_json_free(R->t[i].mdoc);
		free(R->t[i].label);
	}
	for (i = 0; i < R->na; i++) {
		free(R->a[i].node);
		free(R->a[i].reason);
	}
	free(R->t);
	free(R->a);
	vg_strv_release(&R->lanes);
	vg_strv_release(&R->keys);
	vg_buf_release(&R->policy);
	vg_egress_sum_release(&R->egress);
	vg_run_info_release(&R->r);
}

int
vg_report_write(struct vg_store *st, const char *id, int html,
    struct vg_buf *out, struct vg_err *e)
{
	static const struct vg_json_limits lim = {
		.max_bytes = 1 << 20, .max_depth = 2, .max_values = 4096,
	};
	struct report R;
	struct vg_buf doc = VG_BUF_INIT, title = VG_BUF_INIT;
	struct vg_err je;
	size_t i;
	int rc;

	memset(&R, 0, sizeof(R));
	vg_buf_init(&R.policy);
	if ((rc = vg_store_run_get(st, id, &R.r, e)) != 0)
		return rc;
	R.now = vg_now();
	if (gethostname(R.host, sizeof(R.host)) != 0)
		vg_strlcpy(R.host, "localhost", sizeof(R.host));
	R.host[sizeof(R.host) - 1] = '\0';
	if ((rc = vg_store_task_each(st, R.r.id, -1, task_cb, &R, e)) != 0 ||
	    (rc = vg_store_attempt_each(st, R.r.id, -1, attempt_cb, &R,
	    e)) != 0 ||
	    (rc = vg_store_audit_each(st, R.r.id, audit_cb, &R, e)) != 0 ||
	    (rc = vg_egress_sum_load(st, R.r.id, -1, &R.egress, e)) != 0)
		goto out;
	/* Tasks are in index order, attempts in (index, attempt) order:
	 * one pass finds each task's latest attempt. */
	for (i = 0; i < R.na; i++) {
		struct ratt *a = &R.a[i];
		size_t lo = 0, hi = R.nt;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (R.t[mid].t.index < a->task)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < R.nt && R.t[lo].t.index == a->task)
			R.t[lo].final_attempt = (int)i;
	}
	for (i = 0; i < R.nt; i++) {
		vg_err_init(&je);
		if (vg_json_parse(R.t[i].matrix, strlen(R.t[i].matrix), &lim,
		    &R.t[i].mdoc, &je) != 0)
			continue;
		if (vg_json_root(R.t[i].mdoc)->type == VG_JSON_OBJECT)
			collect_keys(&R, vg_json_root(R.t[i].mdoc));
	}
	assign_lanes(&R);
	if (!html) {
		write_doc(&R, out);
		goto out;
	}
	write_doc(&R, &doc);
	vg_buf_printf(&title, "vigil report: %s %s", R.r.name != NULL ?
	    R.r.name : "run", R.r.id);
	vg_report_html(doc.data, doc.len, vg_buf_str(&title), out);
out:
	vg_buf_release(&doc);
	vg_buf_release(&title);
	report_release(&R);
	return rc;
}
