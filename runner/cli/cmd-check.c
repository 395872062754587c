/*
 * cmd-check.c - vigil check: ask the policy gate about commands without
 * running them.  Each verdict names its category, rule id, the offending
 * span of the text and a one-line reason; the exit status is 0 when every
 * command is allowed and 3 when any is denied.  Every decision is audited
 * (the policy's JSON-lines file, and the state database).
 *
 * With --stdin the commands stream: each complete line (or NUL-separated
 * record with -0) is judged as soon as it is read, and the audit is
 * grouped: a writer thread redacts the decisions and writes them (the
 * audit file in writes of about 64 KiB, the database as one packed row
 * in one transaction) when CHECK_BATCH are pending, when the oldest is
 * CHECK_FLUSH_MS old and the writer is idle, before waiting for more
 * input, at exit and on SIGTERM, SIGINT, SIGHUP and SIGPIPE (after which
 * vigil ends by the same signal).  The judging thread keeps a cache of
 * recent decisions and hands the writer the entry and the time of each
 * (a repeated command costs a hash of text still in the processor's
 * cache); the writer redacts and formats an entry's audit line once.
 * A line holding a NUL byte without -0 is judged whole (and refused as
 * unparseable), never cut at the NUL.  --json output is valid JSON
 * whatever the input: bytes that are not UTF-8 are written as U+FFFD;
 * offsets and lengths count bytes of the input.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/home.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/cli/cmd.h"
#include "runner/cli/cmd-policy.h"
#include "common/json.h"
#include "runner/policy/policy.h"

/* Decisions handed to the audit writer at once, and their greatest
 * age. */
#define CHECK_BATCH	32768
#define CHECK_FLUSH_MS	50

/* Bytes of verdicts printed at once (sooner before waiting for input). */
#define CHECK_OUT_MAX	65536

/* The audit of one decision text: the command, rule and reason as judged
 * (key, each NUL-terminated), and, once the writer has made them, the
 * redacted command and the audit file's line without its time.  The
 * judging thread keeps CHECK_CACHE of them by the decision's text, so a
 * repeated command is redacted and formatted once; an entry is freed
 * only after the last batch that can name it is written. */
struct check_ent {
	size_t			 klen;
	size_t			 clen;	/* the command's, in key */
	const char		*verdict;	/* static */
	const char		*category;	/* static */
	const char		*rule;		/* in key, or NULL */
	const char		*reason;	/* in key, or NULL */
	char			*red;		/* redacted command (writer) */
	char			*tail;		/* (writer) */
	size_t			 tlen;
	struct vg_audit_rec	 rec;		/* the record but its time */
	char			 key[];		/* klen bytes */
};

/* One decision waiting to be audited. */
struct check_dec {
	struct check_ent	*ent;
	double			 time;
};

/* Decisions handed to the writer at once, and the entries it frees
 * after writing them (evicted from the cache, or never cached). */
struct check_batch {
	struct check_dec	*v;
	size_t			 n;
	size_t			 cap;
	struct check_ent	**old;
	size_t			 nold;
	size_t			 capold;
	double			 first;		/* time of the oldest */
};

/* Cached decisions (CHECK_WAYS per set) and the longest cached text. */
#define CHECK_CACHE	8192
#define CHECK_WAYS	4
#define CHECK_KEYMAX	1024

/* One way of a set of the cache: an entry and its text's hash, side by
 * side so that a lookup reads one cache line per set. */
struct check_way {
	unsigned long long	 hash;
	struct check_ent	*ent;
};

/* The judging thread's cache, its copy of a command with NULs, and the
 * writer's rows. */
struct check_audit {
	_Alignas(64) struct check_way way[CHECK_CACHE];
	struct vg_buf		 show;
	const struct vg_audit_rec **rec;	/* a batch's records */
	double			*time;		/* and their times */
	size_t			 cap;
};

/* The printed allow rules of recent refusals, by their command's hash
 * (direct-mapped): a command refused again prints its rule without
 * making it again.  The judging thread's alone. */
#define CHECK_ALLOWS	4096

struct check_allow {
	unsigned long long	 hash;
	char			*cmd;		/* n bytes */
	size_t			 n;
	char			*text;		/* as printed */
	size_t			 tlen;
};

/* The state of one vigil check.  The main thread judges and prints and
 * fills cur; a writer thread redacts and writes each full batch (the
 * audit file and one database transaction) while the next one fills.
 * mu guards pending and stop; pending is cleared once it is written. */
struct check {
	struct vg_cmd_policy	 cp;
	struct check_batch	 bat[2];
	struct check_batch	*cur;
	struct check_audit	 au;
	pthread_t		 writer;
	int			 threaded;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct check_batch	*pending;
	atomic_int		 busy;		/* pending is set */
	int			 stop;
	int			 failed;	/* warned once already */
	struct vg_buf		 js;		/* UTF-8 cleaned text */
	struct vg_buf		 out;		/* verdicts not yet printed */
	struct vg_buf		 yaml;		/* a refusal's allow rule */
	struct vg_buf		 note;		/* and where it goes */
	struct check_allow	*allows;	/* CHECK_ALLOWS, made on use */
	int			 json;
};

static volatile sig_atomic_t check_signal;

/* Notes the signal; the loop flushes the audit and exits. */
static void
check_on_signal(int sig)
{
	check_signal = sig;
}

static const struct vg_opt check_opts[] = {
	VG_OPT_JSON("print one JSON object per command"),
	VG_OPT_POLICY,
	VG_OPT_MODE_GATE,
	{ .name = "stdin",
	  .help = "read commands from stdin, one per line, as they come" },
	{ .name = "null", .shortname = '0',
	  .help = "with --stdin: commands are separated by NUL bytes" },
	VG_OPT_AUDIT_LOG,
	{ NULL }
};

/* Writes n bytes of s as a JSON string of valid UTF-8. */
static void
json_text(struct check *ck, struct vg_json_writer *w, const char *s,
    size_t n)
{
	vg_buf_reset(&ck->js);
	vg_json_utf8_clean(&ck->js, s, n);
	vg_json_strn(w, ck->js.data ? ck->js.data : "", ck->js.len);
}

/* Copies n bytes of s to o; returns the end. */
static char *
put(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* Makes the allow rule of a refusal in ck->yaml and ck->note. */
static enum vg_allow_where
check_allow(struct check *ck, const char *cmd, size_t n,
    const struct vg_verdict *v)
{
	vg_buf_reset(&ck->yaml);
	vg_buf_reset(&ck->note);
	return vg_policy_allow_rule(v, cmd, n, &ck->yaml, &ck->note);
}

/* Prints the allow rule of a refusal of the n bytes at cmd (of hash h),
 * from the cache when it was refused recently. */
static void
print_allow(struct check *ck, unsigned long long h, const char *cmd,
    size_t n, const struct vg_verdict *v)
{
	struct check_allow *c;
	size_t start = ck->out.len;

	if (ck->allows == NULL)
		ck->allows = vg_xcalloc(CHECK_ALLOWS, sizeof(*ck->allows));
	c = &ck->allows[h & (CHECK_ALLOWS - 1)];

	if (c->cmd != NULL && c->hash == h && c->n == n &&
	    memcmp(c->cmd, cmd, n) == 0) {
		vg_buf_add(&ck->out, c->text, c->tlen);
		return;
	}
	vg_cmd_policy_allow(&ck->out, v, cmd, n, &ck->yaml, &ck->note);
	if (n > CHECK_KEYMAX)
		return;
	free(c->cmd);
	free(c->text);
	c->hash = h;
	c->n = n;
	c->cmd = vg_xmalloc(n + 1);
	memcpy(c->cmd, cmd, n);
	c->tlen = ck->out.len - start;
	c->text = vg_xmalloc(c->tlen + 1);
	memcpy(c->text, ck->out.data + start, c->tlen);
}

/* Prints one verdict as text (NULs of cmd shown as '?') into the
 * output buffer; h is the hash of cmd. */
static void
print_text(struct check *ck, unsigned long long h, const char *cmd,
    size_t n, const struct vg_verdict *v)
{
	struct vg_buf *b = &ck->out;
	char num[48];
	int k;

	if (!v->flagged)
		VG_BUF_ADDL(b, "allow: ");
	else if (v->allowed)
		VG_BUF_ADDL(b, "approve: ");
	else
		VG_BUF_ADDL(b, "deny: ");
	vg_buf_add(b, cmd, n);
	vg_buf_addc(b, '\n');
	for (k = 0; k < v->nfindings; k++) {
		const struct vg_finding *f = &v->findings[k];
		size_t len = f->span_len > 120 ? 120 : f->span_len;
		size_t lc = strlen(f->category), lr = strlen(f->rule);
		size_t lw = strlen(f->reason), nn = sizeof(num);
		char *o;

		/* "  CATEGORY [RULE] at OFF+LEN 'TEXT': REASON\n", made
		 * in place (16 bytes of punctuation and the NUL). */
		vg_put_digits(num, &nn, f->span_len, 1);
		num[--nn] = '+';
		vg_put_digits(num, &nn, f->span_off, 1);
		b->data = vg_xgrow(b->data, &b->cap, b->len + lc + lr + lw +
		    len + (sizeof(num) - nn) + 16, 1);
		o = b->data + b->len;
		o = put(o, "  ", 2);
		o = put(o, f->category, lc);
		o = put(o, " [", 2);
		o = put(o, f->rule, lr);
		o = put(o, "] at ", 5);
		o = put(o, num + nn, sizeof(num) - nn);
		o = put(o, " '", 2);
		o = put(o, cmd + f->span_off, len);
		o = put(o, "': ", 3);
		o = put(o, f->reason, lw);
		*o++ = '\n';
		*o = '\0';
		b->len = (size_t)(o - b->data);
	}
	if (!v->allowed)
		print_allow(ck, h, cmd, n, v);
}

/* Hands the verdicts printed so far to stdout in one stdio call. */
static void
check_out_flush(struct check *ck)
{
	if (ck->out.len > 0)
		fwrite(ck->out.data, 1, ck->out.len, stdout);
	vg_buf_reset(&ck->out);
}

/* Prints one verdict as a JSON object on one line. */
static void
print_json(struct check *ck, const char *cmd, size_t n,
    const struct vg_verdict *v, enum vg_policy_mode mode)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_writer w;
	int k;

	vg_json_writer_init(&w, &b);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "command");
	json_text(ck, &w, cmd, n);
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
		json_text(ck, &w, f->rule, strlen(f->rule));
		vg_json_key(&w, "offset");
		vg_json_int(&w, (long long)f->span_off);
		vg_json_key(&w, "length");
		vg_json_int(&w, (long long)f->span_len);
		vg_json_key(&w, "text");
		json_text(ck, &w, cmd + f->span_off, f->span_len);
		vg_json_key(&w, "reason");
		json_text(ck, &w, f->reason, strlen(f->reason));
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	if (!v->allowed) {
		enum vg_allow_where where = check_allow(ck, cmd, n, v);

		vg_json_key(&w, "allow_rule");
		if (where == VG_ALLOW_NONE)
			vg_json_null(&w);
		else
			json_text(ck, &w, ck->yaml.data, ck->yaml.len);
		vg_json_key(&w, "allow_in");
		vg_json_str(&w, where == VG_ALLOW_LAYER ? "policy-file" :
		    where == VG_ALLOW_SITE ? "site-policy-file" : "none");
		vg_json_key(&w, "allow_note");
		json_text(ck, &w, ck->note.data, ck->note.len);
	}
	vg_json_obj_end(&w);
	vg_buf_addc(&b, '\n');
	vg_buf_add(&ck->out, b.data, b.len);
	vg_buf_release(&b);
}

/* Opens the state database once; NULL (and one warning) when it
 * cannot be opened. */
static struct vg_store *
check_store(struct check *ck)
{
	struct vg_err e;
	char *home;

	if (ck->cp.store_tried)
		return ck->cp.store;
	ck->cp.store_tried = 1;
	vg_err_init(&e);
	home = vg_home_dir();
	if (home == NULL || vg_store_open(home, &ck->cp.store, &e) != 0) {
		ck->cp.store = NULL;
		fprintf(stderr, "vigil: warning: audit: %s\n", home == NULL ?
		    "no vigil home directory" : e.msg);
	}
	free(home);
	return ck->cp.store;
}

/* Warns once about an audit failure. */
static void
check_warn(struct check *ck, const struct vg_err *e)
{
	if (!ck->failed)
		fprintf(stderr, "vigil: warning: audit: %s\n", e->msg);
	ck->failed = 1;
}

/* A hash of n bytes of s (eight at a time): a decision's command.  Its
 * verdict, category, rule and reason are compared, not hashed, as the
 * command almost always decides them; so the hash is known before the
 * command is judged, and its set of the cache is fetched meanwhile. */
static unsigned long long
check_hash(const char *s, size_t n)
{
	unsigned long long h = 0x9E3779B97F4A7C15ull ^ n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* Keeps e until batch b is written, then frees it. */
static void
check_retire(struct check_batch *b, struct check_ent *e)
{
	if (b->nold == b->capold) {
		b->capold = b->capold ? b->capold * 2 : 64;
		b->old = vg_xrealloc(b->old, b->capold * sizeof(*b->old));
	}
	b->old[b->nold++] = e;
}

/* Frees one entry. */
static void
check_ent_free(struct check_ent *e)
{
	free(e->red);
	free(e->tail);
	free(e);
}

/* Makes the entry of a decision: the n bytes of cmd (no NUL in them),
 * rule and reason (both NULL or both strings) copied into its key, each
 * NUL-terminated.  The judging thread calls it; the writer formats the
 * entry (check_ent_format). */
static struct check_ent *
check_ent_new(const char *cmd, size_t n, const char *rule,
    const char *reason, const char *verdict, const char *category)
{
	size_t lr = rule != NULL ? strlen(rule) + 1 : 0;
	size_t lw = reason != NULL ? strlen(reason) + 1 : 0;
	struct check_ent *e = vg_xcalloc(1, sizeof(*e) + n + 1 + lr + lw);

	e->clen = n;
	e->klen = n + 1 + lr + lw;
	memcpy(e->key, cmd, n);
	e->verdict = verdict;
	e->category = category;
	if (rule != NULL) {
		e->rule = memcpy(e->key + n + 1, rule, lr);
		e->reason = memcpy(e->key + n + 1 + lr, reason, lw);
	}
	return e;
}

/* True when cached entry e is the decision given: the same command,
 * verdict, category, rule and reason. */
static int
check_ent_is(const struct check_ent *e, const char *cmd, size_t n,
    const char *rule, const char *reason, const char *verdict,
    const char *category)
{
	if (e->clen != n || e->verdict != verdict || e->category != category ||
	    memcmp(e->key, cmd, n) != 0)
		return 0;
	if (rule == NULL || e->rule == NULL)
		return rule == NULL && e->rule == NULL;
	return strcmp(e->rule, rule) == 0 && strcmp(e->reason, reason) == 0;
}

/* Makes e's redacted command and audit line tail, once (the writer). */
static void
check_ent_format(struct check *ck, struct check_ent *e)
{
	struct vg_buf red = VG_BUF_INIT, tail = VG_BUF_INIT;
	struct vg_audit_rec *r = &e->rec;

	vg_policy_redact(e->key, &red);
	e->red = vg_xstrdup(vg_buf_str(&red));
	r->task_index = -1;
	r->mode = vg_policy_mode_name(vg_policy_mode(ck->cp.policy));
	r->command = e->red;
	r->verdict = e->verdict;
	r->category = e->category;
	r->rule = e->rule;
	r->reason = e->reason;
	vg_policy_audit_line_tail(&tail, r);
	e->tlen = tail.len;
	e->tail = vg_xstrdup(vg_buf_str(&tail));
	vg_buf_release(&red);
	vg_buf_release(&tail);
}

/* The set of the cache for a command of hash h. */
static struct check_way *
check_set(struct check *ck, unsigned long long h)
{
	return &ck->au.way[(size_t)(h & (CHECK_CACHE / CHECK_WAYS - 1)) *
	    CHECK_WAYS];
}

/* The entry of a decision (see check_ent_new) whose command has hash h:
 * from the cache when the same decision was judged recently, else made
 * (and cached unless its text is long; an entry that leaves the cache,
 * or was never in it, is freed after the current batch). */
static struct check_ent *
check_ent_get(struct check *ck, unsigned long long h, const char *cmd,
    size_t n, const char *rule, const char *reason, const char *verdict,
    const char *category)
{
	struct check_way *set = check_set(ck, h);
	struct check_ent *e;
	int w;

	for (w = 0; w < CHECK_WAYS; w++) {
		e = set[w].ent;
		if (e != NULL && set[w].hash == h && check_ent_is(e, cmd, n,
		    rule, reason, verdict, category))
			return e;
	}
	e = check_ent_new(cmd, n, rule, reason, verdict, category);
	if (e->klen > CHECK_KEYMAX) {
		check_retire(ck->cur, e);
		return e;
	}
	/* The newest way first; the oldest is dropped. */
	if (set[CHECK_WAYS - 1].ent != NULL)
		check_retire(ck->cur, set[CHECK_WAYS - 1].ent);
	memmove(set + 1, set, (CHECK_WAYS - 1) * sizeof(*set));
	set[0].hash = h;
	set[0].ent = e;
	return e;
}

/* Audits a batch: the audit file's lines in one write, the database
 * records in one packed row.  Runs in the writer thread. */
static void
check_write(struct check *ck, struct check_batch *b)
{
	struct check_audit *au = &ck->au;
	struct vg_buf *held = vg_policy_audit_held(ck->cp.policy);
	struct vg_store *st;
	struct vg_err e;
	size_t i;

	if (au->cap < b->n) {
		au->cap = b->n;
		au->rec = vg_xrealloc(au->rec, au->cap * sizeof(*au->rec));
		au->time = vg_xrealloc(au->time, au->cap * sizeof(*au->time));
	}
	vg_err_init(&e);
	for (i = 0; i < b->n; i++) {
		const struct check_dec *d = &b->v[i];
		struct check_ent *c = d->ent;

		if (c->tail == NULL)
			check_ent_format(ck, c);
		if (held != NULL) {
			vg_policy_audit_line_head(held, d->time);
			vg_buf_add(held, c->tail, c->tlen);
			/* Written in blocks that stay in the cache. */
			if (held->len >= CHECK_OUT_MAX && !ck->failed &&
			    vg_policy_audit_flush(ck->cp.policy, &e) != 0)
				check_warn(ck, &e);
		}
		au->rec[i] = &c->rec;
		au->time[i] = d->time;
	}
	if (vg_policy_audit_flush(ck->cp.policy, &e) != 0)
		check_warn(ck, &e);
	if (b->n > 0 && (st = check_store(ck)) != NULL) {
		vg_err_init(&e);
		if (vg_store_audit_many(st, au->rec, au->time, b->n, &e) != 0)
			check_warn(ck, &e);
	}
	for (i = 0; i < b->nold; i++)
		check_ent_free(b->old[i]);
	b->nold = 0;
	b->n = 0;
}

/* The writer thread: audits each batch handed over until told to stop. */
static void *
check_writer(void *arg)
{
	struct check *ck = arg;
	struct check_batch *b;

	for (;;) {
		pthread_mutex_lock(&ck->mu);
		while (ck->pending == NULL && !ck->stop)
			pthread_cond_wait(&ck->cv, &ck->mu);
		b = ck->pending;
		pthread_mutex_unlock(&ck->mu);
		if (b == NULL)
			return NULL;
		check_write(ck, b);
		pthread_mutex_lock(&ck->mu);
		ck->pending = NULL;
		atomic_store(&ck->busy, 0);
		pthread_cond_broadcast(&ck->cv);
		pthread_mutex_unlock(&ck->mu);
	}
}

/* Starts the writer thread with the signals blocked (the main thread
 * takes them); without a thread batches are written inline. */
static void
check_start(struct check *ck)
{
	sigset_t all, old;

	ck->cur = &ck->bat[0];
	atomic_init(&ck->busy, 0);
	vg_policy_audit_hold(ck->cp.policy, 1);
	pthread_mutex_init(&ck->mu, NULL);
	pthread_cond_init(&ck->cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ck->threaded = pthread_create(&ck->writer, NULL, check_writer,
	    ck) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Hands the current batch to the writer (waiting while it still
 * writes the previous one) and starts filling the other. */
static void
check_flush(struct check *ck)
{
	struct check_batch *b = ck->cur;

	if (b->n == 0)
		return;
	if (!ck->threaded) {
		check_write(ck, b);
		return;
	}
	pthread_mutex_lock(&ck->mu);
	while (ck->pending != NULL)
		pthread_cond_wait(&ck->cv, &ck->mu);
	ck->pending = b;
	atomic_store(&ck->busy, 1);
	pthread_cond_broadcast(&ck->cv);
	pthread_mutex_unlock(&ck->mu);
	ck->cur = b == &ck->bat[0] ? &ck->bat[1] : &ck->bat[0];
}

/* True when the writer has no batch in hand (an old batch is handed
 * over then; while the writer is busy it keeps filling, so a slow
 * writer gets bigger batches rather than a waiting gate). */
static int
check_idle(struct check *ck)
{
	return !ck->threaded || !atomic_load(&ck->busy);
}

/* Writes everything pending and stops the writer. */
static void
check_finish(struct check *ck)
{
	int k;

	check_flush(ck);
	if (ck->threaded) {
		pthread_mutex_lock(&ck->mu);
		ck->stop = 1;
		pthread_cond_broadcast(&ck->cv);
		pthread_mutex_unlock(&ck->mu);
		pthread_join(ck->writer, NULL);
	}
	pthread_mutex_destroy(&ck->mu);
	pthread_cond_destroy(&ck->cv);
	for (k = 0; k < 2; k++) {
		free(ck->bat[k].v);
		free(ck->bat[k].old);
	}
	for (k = 0; k < CHECK_CACHE; k++)
		if (ck->au.way[k].ent != NULL)
			check_ent_free(ck->au.way[k].ent);
	for (k = 0; ck->allows != NULL && k < CHECK_ALLOWS; k++) {
		free(ck->allows[k].cmd);
		free(ck->allows[k].text);
	}
	free(ck->allows);
	vg_buf_release(&ck->au.show);
	free(ck->au.rec);
	free(ck->au.time);
}

/* Queues one decision for the writer: its cache entry (found by the
 * n bytes of text judged, NULs shown as '?', of hash h) and its time. */
static void
check_queue(struct check *ck, unsigned long long h, const char *text,
    size_t n, const struct vg_verdict *v)
{
	struct check_batch *b = ck->cur;
	const char *category = NULL, *rule = NULL, *reason = NULL;
	struct check_dec *d;
	double now = vg_now();

	if (v->nfindings > 0) {
		category = v->findings[0].category;
		rule = v->findings[0].rule;
		reason = v->findings[0].reason;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->v = vg_xrealloc(b->v, b->cap * sizeof(*b->v));
	}
	if (b->n == 0)
		b->first = now;
	d = &b->v[b->n++];
	d->time = now;
	d->ent = check_ent_get(ck, h, text, n, rule, reason, !v->allowed ?
	    "deny" : "allow", category);
	if (b->n >= CHECK_BATCH || (now - b->first >= CHECK_FLUSH_MS /
	    1000.0 && check_idle(ck)))
		check_flush(ck);
}

/* Checks n bytes of cmd: evaluate, print, queue for the audit.  Returns
 * 1 when denied. */
static int
check_one(struct check *ck, const char *cmd, size_t n)
{
	struct vg_buf *show = &ck->au.show;
	const char *text = cmd;
	unsigned long long h;
	struct vg_verdict v;
	size_t i;

	/* For printing and the audit, NULs shown as '?' (the verdict is
	 * made on the bytes as given). */
	if (memchr(cmd, '\0', n) != NULL) {
		vg_buf_reset(show);
		vg_buf_add(show, cmd, n);
		for (i = 0; i < n; i++)
			if (show->data[i] == '\0')
				show->data[i] = '?';
		text = show->data;
	}
	h = check_hash(text, n);
	__builtin_prefetch(check_set(ck, h));
	vg_policy_eval_n(ck->cp.policy, cmd, n, &ck->cp.env.ctx, &v);
	if (ck->json)
		print_json(ck, cmd, n, &v, vg_policy_mode(ck->cp.policy));
	else
		print_text(ck, h, text, n, &v);
	check_queue(ck, h, text, n, &v);
	if (ck->out.len >= CHECK_OUT_MAX)
		check_out_flush(ck);
	return !v.allowed;
}

/* Installs the handlers that end a --stdin stream cleanly; set gets
 * their signals. */
static void
check_signals(sigset_t *set)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	struct sigaction sa;
	size_t k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = check_on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(set);
	sa.sa_flags = 0;	/* no SA_RESTART: ppoll(2) returns EINTR */
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		sigaction(sigs[k], &sa, NULL);
		sigaddset(set, sigs[k]);
	}
}

/* True when stdin has data to read without waiting. */
static int
input_ready(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* True when the n bytes of a line end in an unescaped backslash (an
 * odd number of them): the shell's line continuation. */
static int
continued(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && s[n - 1 - k] == '\\')
		k++;
	return (k & 1) != 0;
}

/* Judges every record of stdin as it arrives; *denied is set when any
 * is refused.  Returns 0, or an exit status on a read error. */
static int
check_stream(struct check *ck, const sigset_t *sigs, char sep, int *denied)
{
	struct vg_buf in = VG_BUF_INIT;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char chunk[65536];
	size_t s = 0, i = 0;
	sigset_t open;
	ssize_t r;
	int rc = 0;

	/* The signals wait while judging and are taken only inside ppoll
	 * before each read: one sent just before vigil would block in
	 * read(2) cannot be missed. */
	pthread_sigmask(SIG_BLOCK, sigs, &open);
	for (;;) {
		/* Judge each complete record in the buffer. */
		for (; i < in.len && !check_signal; i++) {
			const char *q = memchr(in.data + i, sep, in.len - i);
			size_t n;

			if (q == NULL) {
				i = in.len;
				break;
			}
			i = (size_t)(q - in.data);
			n = i - s;
			/* A line ending in a backslash goes on, as in the
			 * shell: the record is both lines. */
			if (sep == '\n' && continued(in.data + s, n))
				continue;
			if (sep == '\n' && n > 0 && in.data[s + n - 1] == '\r')
				n--;
			if (n > 0)
				*denied |= check_one(ck, in.data + s, n);
			s = i + 1;
		}
		if (check_signal)
			break;
		if (s > 0) {
			memmove(in.data, in.data + s, in.len - s);
			in.len -= s;
			i -= s;
			s = 0;
		}
		/* Before waiting for input: the verdicts so far reach the
		 * reader of stdout and the audit. */
		if ((ck->cur->n > 0 || ck->out.len > 0) && !input_ready()) {
			check_out_flush(ck);
			fflush(stdout);
			check_flush(ck);
		}
		if (ppoll(&pfd, 1, NULL, &open) < 0) {
			if (errno == EINTR)
				continue;
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "check: cannot wait "
			    "for stdin: %s", strerror(errno));
			break;
		}
		r = read(0, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = vg_cmd_fail(VG_EXIT_INTERNAL, "check: cannot read "
			    "stdin: %s", strerror(errno));
			break;
		}
		if (r == 0) {
			/* The last record needs no separator. */
			size_t n = in.len - s;

			if (sep == '\n' && n > 0 && in.data[s + n - 1] == '\r')
				n--;
			if (n > 0)
				*denied |= check_one(ck, in.data + s, n);
			break;
		}
		vg_buf_add(&in, chunk, (size_t)r);
	}
	vg_buf_release(&in);
	pthread_sigmask(SIG_SETMASK, &open, NULL);
	return rc;
}

static int
cmd_check_exec(struct vg_args *a)
{
	struct check ck;
	struct vg_buf cmd = VG_BUF_INIT;
	sigset_t sigs;
	int denied = 0, rc, k, sig;
	char sep = vg_args_has(a, "null") ? '\0' : '\n';

	if (vg_args_has(a, "stdin") == (a->argc > 0))
		return vg_cmd_usage_error(a, "give one command, or --stdin");
	if (vg_args_has(a, "null") && !vg_args_has(a, "stdin"))
		return vg_cmd_usage_error(a, "-0 needs --stdin");
	memset(&ck, 0, sizeof(ck));
	ck.json = vg_args_has(a, "json");
	if ((rc = vg_cmd_policy_open(a, &ck.cp)) != 0)
		return rc;
	check_signals(&sigs);
	check_start(&ck);
	if (!vg_args_has(a, "stdin")) {
		for (k = 0; k < a->argc; k++) {
			if (k > 0)
				vg_buf_addc(&cmd, ' ');
			vg_buf_adds(&cmd, a->argv[k]);
		}
		denied = check_one(&ck, vg_buf_str(&cmd), cmd.len);
		rc = 0;
	} else {
		rc = check_stream(&ck, &sigs, sep, &denied);
	}
	if (rc == 0)
		rc = denied ? VG_EXIT_DENIED : VG_EXIT_OK;
	check_out_flush(&ck);
	check_finish(&ck);
	sig = check_signal;
	vg_buf_release(&ck.js);
	vg_buf_release(&ck.out);
	vg_buf_release(&ck.yaml);
	vg_buf_release(&ck.note);
	vg_buf_release(&cmd);
	vg_cmd_policy_close(&ck.cp);
	rc = vg_cmd_finish_stdout(rc);
	if (sig != 0) {
		/* The audit is complete: end as the signal asked. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return rc;
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
