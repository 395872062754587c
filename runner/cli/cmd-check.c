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
 * audit file in one write(2), the database in one transaction) when
 * CHECK_BATCH are pending, when the oldest is CHECK_FLUSH_MS old, before
 * waiting for more input, at exit and on SIGTERM, SIGINT, SIGHUP and
 * SIGPIPE (after which vigil ends by the same signal).  A line holding a NUL byte without -0 is judged whole
 * (and refused as unparseable), never cut at the NUL.  --json output is
 * valid JSON whatever the input: bytes that are not UTF-8 are written
 * as U+FFFD; offsets and lengths count bytes of the input.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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
#define CHECK_BATCH	2048
#define CHECK_FLUSH_MS	5

/* One decision waiting to be audited; strings are offsets into the
 * batch's strs (SIZE_MAX for none). */
struct check_dec {
	size_t		 cmd;
	size_t		 rule;
	size_t		 reason;
	const char	*category;	/* static */
	const char	*verdict;	/* static */
};

struct check_batch {
	struct check_dec	*v;
	size_t			 n;
	size_t			 cap;
	struct vg_buf		 strs;
	double			 first;		/* time of the oldest */
};

/* Database rows of one batch, built by the writer; strings are offsets
 * into strs until the rows are written. */
struct check_rows {
	struct vg_audit_rec	*v;
	size_t			(*offs)[6];
	size_t			 n;
	size_t			 cap;
	struct vg_buf		 strs;
};

/* The state of one vigil check.  The main thread judges and prints and
 * fills cur; a writer thread redacts and writes each full batch (the
 * audit file and one database transaction) while the next one fills.
 * mu guards pending and stop; pending is cleared once it is written. */
struct check {
	struct vg_cmd_policy	 cp;
	struct check_batch	 bat[2];
	struct check_batch	*cur;
	struct check_rows	 rows;
	pthread_t		 writer;
	int			 threaded;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct check_batch	*pending;
	int			 stop;
	int			 failed;	/* warned once already */
	struct vg_buf		 show;		/* command as printed */
	struct vg_buf		 js;		/* UTF-8 cleaned text */
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

/* Appends n bytes of s to out as valid UTF-8: each byte that does not
 * start a well-formed sequence becomes U+FFFD. */
static void
utf8_clean(struct vg_buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, len;

	while (i < n) {
		unsigned c = u[i];
		unsigned min;

		if (c < 0x80) {
			for (k = i; k < n && u[k] < 0x80; k++)
				;
			vg_buf_add(out, s + i, k - i);
			i = k;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, min = 0x10000;
		else
			len = 0, min = 0;
		if (len > 0 && i + len <= n) {
			unsigned cp = c & (0xff >> (len + 1));

			for (k = 1; k < len && (u[i + k] & 0xc0) == 0x80; k++)
				cp = (cp << 6) | (u[i + k] & 0x3f);
			if (k == len && cp >= min && cp <= 0x10ffff &&
			    !(cp >= 0xd800 && cp <= 0xdfff)) {
				vg_buf_add(out, s + i, len);
				i += len;
				continue;
			}
		}
		vg_buf_adds(out, "\xef\xbf\xbd");
		i++;
	}
}

/* Writes n bytes of s as a JSON string of valid UTF-8. */
static void
json_text(struct check *ck, struct vg_json_writer *w, const char *s,
    size_t n)
{
	vg_buf_reset(&ck->js);
	utf8_clean(&ck->js, s, n);
	vg_json_strn(w, ck->js.data ? ck->js.data : "", ck->js.len);
}

/* Prints one verdict as text (NULs of cmd shown as '?'); built in one
 * buffer and written with one stdio call. */
static void
print_text(struct check *ck, const char *cmd, const struct vg_verdict *v)
{
	struct vg_buf *b = &ck->js;
	int k;

	vg_buf_reset(b);
	vg_buf_adds(b, !v->flagged ? "allow: " : v->allowed ? "approve: " :
	    "deny: ");
	vg_buf_adds(b, cmd);
	vg_buf_addc(b, '\n');
	for (k = 0; k < v->nfindings; k++) {
		const struct vg_finding *f = &v->findings[k];
		int len = f->span_len > 120 ? 120 : (int)f->span_len;

		vg_buf_printf(b, "  %s [%s] at %zu+%zu '%.*s': %s\n",
		    f->category, f->rule, f->span_off, f->span_len, len,
		    cmd + f->span_off, f->reason);
	}
	fwrite(b->data, 1, b->len, stdout);
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
	vg_json_obj_end(&w);
	vg_buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
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

/* Audit sink: copies the redacted record into the rows of the batch. */
static int
rows_sink(void *arg, const struct vg_audit_rec *rec, struct vg_err *e)
{
	struct check_rows *r = arg;
	const char *f[6] = { rec->mode, rec->command, rec->verdict,
	    rec->category, rec->rule, rec->reason };
	int k;

	(void)e;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 256;
		r->v = vg_xrealloc(r->v, r->cap * sizeof(*r->v));
		r->offs = vg_xrealloc(r->offs, r->cap * sizeof(*r->offs));
	}
	r->v[r->n] = *rec;
	for (k = 0; k < 6; k++) {
		r->offs[r->n][k] = SIZE_MAX;
		if (f[k] == NULL)
			continue;
		r->offs[r->n][k] = r->strs.len;
		vg_buf_add(&r->strs, f[k], strlen(f[k]) + 1);
	}
	r->n++;
	return 0;
}

/* The string at offset o of b, or NULL. */
static const char *
bstr(const struct vg_buf *b, size_t o)
{
	return o == SIZE_MAX ? NULL : b->data + o;
}

/* Audits a batch: the audit file's lines in one write, the database
 * rows in one transaction.  Runs in the writer thread. */
static void
check_write(struct check *ck, struct check_batch *b)
{
	struct check_rows *r = &ck->rows;
	struct vg_verdict v;
	struct vg_store *st;
	struct vg_err e;
	size_t i;
	int k;

	r->n = 0;
	vg_buf_reset(&r->strs);
	for (i = 0; i < b->n; i++) {
		const struct check_dec *d = &b->v[i];

		v.nfindings = d->category != NULL;
		if (d->category != NULL) {
			v.findings[0].category = d->category;
			vg_strlcpy(v.findings[0].rule, bstr(&b->strs, d->rule),
			    sizeof(v.findings[0].rule));
			vg_strlcpy(v.findings[0].reason, bstr(&b->strs,
			    d->reason), sizeof(v.findings[0].reason));
		}
		vg_err_init(&e);
		if (vg_policy_audit(ck->cp.policy, NULL, -1, bstr(&b->strs,
		    d->cmd), &v, d->verdict, rows_sink, r, &e) != 0)
			check_warn(ck, &e);
	}
	vg_err_init(&e);
	if (vg_policy_audit_flush(ck->cp.policy, &e) != 0)
		check_warn(ck, &e);
	if (r->n > 0 && (st = check_store(ck)) != NULL) {
		for (i = 0; i < r->n; i++) {
			const char **f[6] = { &r->v[i].mode, &r->v[i].command,
			    &r->v[i].verdict, &r->v[i].category,
			    &r->v[i].rule, &r->v[i].reason };

			for (k = 0; k < 6; k++)
				*f[k] = bstr(&r->strs, r->offs[i][k]);
		}
		vg_err_init(&e);
		if (vg_store_audit_many(st, r->v, r->n, &e) != 0)
			check_warn(ck, &e);
	}
	b->n = 0;
	vg_buf_reset(&b->strs);
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
	pthread_cond_broadcast(&ck->cv);
	pthread_mutex_unlock(&ck->mu);
	ck->cur = b == &ck->bat[0] ? &ck->bat[1] : &ck->bat[0];
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
		vg_buf_release(&ck->bat[k].strs);
	}
	free(ck->rows.v);
	free(ck->rows.offs);
	vg_buf_release(&ck->rows.strs);
}

/* Queues one decision for the writer. */
static void
check_queue(struct check *ck, const char *cmd, const struct vg_verdict *v)
{
	struct check_batch *b = ck->cur;
	struct check_dec *d;
	double now = vg_now();

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->v = vg_xrealloc(b->v, b->cap * sizeof(*b->v));
	}
	if (b->n == 0)
		b->first = now;
	d = &b->v[b->n++];
	d->verdict = !v->allowed ? "deny" : "allow";
	d->category = NULL;
	d->rule = d->reason = SIZE_MAX;
	d->cmd = b->strs.len;
	vg_buf_add(&b->strs, cmd, strlen(cmd) + 1);
	if (v->nfindings > 0) {
		d->category = v->findings[0].category;
		d->rule = b->strs.len;
		vg_buf_add(&b->strs, v->findings[0].rule,
		    strlen(v->findings[0].rule) + 1);
		d->reason = b->strs.len;
		vg_buf_add(&b->strs, v->findings[0].reason,
		    strlen(v->findings[0].reason) + 1);
	}
	if (b->n >= CHECK_BATCH || now - b->first >= CHECK_FLUSH_MS / 1000.0)
		check_flush(ck);
}

/* Checks n bytes of cmd: evaluate, print, queue for the audit.  Returns
 * 1 when denied. */
static int
check_one(struct check *ck, const char *cmd, size_t n)
{
	struct vg_verdict v;
	const char *show;
	size_t i;

	vg_policy_eval_n(ck->cp.policy, cmd, n, &ck->cp.env.ctx, &v);
	/* A NUL-terminated copy for printing and the audit, NULs shown
	 * as '?' (the verdict was made on the bytes as given). */
	vg_buf_reset(&ck->show);
	vg_buf_add(&ck->show, cmd, n);
	show = vg_buf_str(&ck->show);
	for (i = 0; i < n; i++)
		if (show[i] == '\0')
			ck->show.data[i] = '?';
	if (ck->json)
		print_json(ck, cmd, n, &v, vg_policy_mode(ck->cp.policy));
	else
		print_text(ck, show, &v);
	check_queue(ck, show, &v);
	return !v.allowed;
}

/* Installs the handlers that end a --stdin stream cleanly. */
static void
check_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	struct sigaction sa;
	size_t k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = check_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: read(2) returns EINTR */
	for (k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
		sigaction(sigs[k], &sa, NULL);
}

/* True when stdin has data to read without waiting. */
static int
input_ready(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* Judges every record of stdin as it arrives; *denied is set when any
 * is refused.  Returns 0, or an exit status on a read error. */
static int
check_stream(struct check *ck, char sep, int *denied)
{
	struct vg_buf in = VG_BUF_INIT;
	char chunk[65536];
	size_t s = 0, i = 0;
	ssize_t r;
	int rc = 0;

	for (;;) {
		/* Judge each complete record in the buffer. */
		for (; i < in.len && !check_signal; i++) {
			size_t n;

			if (in.data[i] != sep)
				continue;
			n = i - s;
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
		if (ck->cur->n > 0 && !input_ready()) {
			fflush(stdout);
			check_flush(ck);
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
	return rc;
}

static int
cmd_check_exec(struct vg_args *a)
{
	struct check ck;
	struct vg_buf cmd = VG_BUF_INIT;
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
	check_signals();
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
		rc = check_stream(&ck, sep, &denied);
	}
	if (rc == 0)
		rc = denied ? VG_EXIT_DENIED : VG_EXIT_OK;
	check_finish(&ck);
	sig = check_signal;
	vg_buf_release(&ck.show);
	vg_buf_release(&ck.js);
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
