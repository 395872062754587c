/*
 * notify.c - run reports (text and JSON) and their bounded delivery to
 * webhooks, mail and a command (notify.h has the rules).
 *
 * Processes (sendmail, notify.command) start from argv vectors with
 * posix_spawn; the payload goes to their stdin through a non-blocking
 * pipe written under the attempt's deadline, and a process that
 * overruns it is killed with SIGKILL.
 */
#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/json.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"
#include "common/version.h"
#include "common/which.h"
#include "runner/core/attempt-log.h"
#include "runner/core/gate.h"
#include "runner/core/notify.h"
#include "runner/core/stream.h"

extern char **environ;

/* Bytes read from the end of a stderr file for its tail. */
#define TAIL_BYTES	(64 * 1024)
/* Characters kept of one stderr line. */
#define TAIL_LINE_MAX	300
/* Seconds between attempts: 1, then 2. */
#define BACKOFF_FIRST	1.0

/* ---- reports ---- */

/* Appends s with control characters shown as '?' (one line). */
static void
add_clean(struct vg_buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] != '\0'; i++)
		vg_buf_addc(b, (unsigned char)s[i] < 0x20 && s[i] != '\t' ?
		    '?' : s[i]);
}

/* True when the line at s is an attempt's header (attempt-log.h). */
static int
is_header(const char *s)
{
	return strncmp(s, "--- attempt ", 12) == 0;
}

/*
 * Reads the last VG_REPORT_LINES lines of task index's stderr in
 * run_dir (its file, or its frames with output: stream) into tail; with
 * attempts m that split it, each attempt's lines under its header, and
 * the header of the attempt the first line belongs to first.
 */
static void
read_tail(const char *run_dir, int index, const struct vg_attempt_marks *m,
    struct vg_strv *tail)
{
	struct vg_buf b = VG_BUF_INIT, line = VG_BUF_INIT;
	const char *p, *end, *starts[VG_REPORT_LINES + 2], *h;
	struct vg_err e;
	size_t k = 0, i, len;
	int cut;

	vg_err_init(&e);
	vg_buf_add(&b, "", 0);
	(void)vg_attempt_output_tail(run_dir, index, VG_STREAM_STDERR, m,
	    TAIL_BYTES, &b, &cut, &e);
	p = vg_buf_str(&b);
	end = p + b.len;
	while (end > p && end[-1] == '\n')
		end--;
	/* Walk back over at most VG_REPORT_LINES line starts. */
	while (end > p && k < VG_REPORT_LINES) {
		const char *s = end;

		while (s > p && s[-1] != '\n')
			s--;
		starts[k++] = s;
		end = s > p ? s - 1 : s;
	}
	if (k > 0 && !is_header(starts[k - 1])) {
		/* The header of the attempt the kept lines start in. */
		for (h = starts[k - 1]; h > p; ) {
			h--;
			while (h > p && h[-1] != '\n')
				h--;
			if (is_header(h)) {
				starts[k++] = h;
				break;
			}
		}
	}
	for (i = k; i > 0; i--) {
		const char *s = starts[i - 1];

		len = strcspn(s, "\n");
		vg_buf_reset(&line);
		add_clean(&line, s, len > TAIL_LINE_MAX ? TAIL_LINE_MAX : len);
		vg_strv_push(tail, vg_buf_str(&line));
	}
	vg_buf_release(&line);
	vg_buf_release(&b);
}

/* Fills host and user of rep. */
static void
report_who(struct vg_run_report *rep)
{
	struct passwd *pw;
	const char *u;

	if (gethostname(rep->host, sizeof(rep->host) - 1) != 0)
		vg_strlcpy(rep->host, "-", sizeof(rep->host));
	pw = getpwuid(getuid());
	u = pw != NULL ? pw->pw_name : getenv("USER");
	vg_strlcpy(rep->user, u != NULL ? u : "-", sizeof(rep->user));
}

/* What report_task_cb reads with. */
struct report_ctx {
	struct vg_run_report	*rep;
	struct vg_store		*st;
};

/* vg_store_task_each callback: keeps the tasks that did not succeed. */
static int
report_task_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	struct report_ctx *c = arg;
	struct vg_run_report *rep = c->rep;
	struct vg_attempt_marks m = VG_ATTEMPT_MARKS_INIT;
	struct vg_report_task *rt;
	struct vg_err e;

	(void)mj;
	if (vg_state_ok(t->state))
		return 0;
	rep->nbad++;
	if (rep->ntasks >= VG_REPORT_TASKS)
		return 0;
	rt = &rep->tasks[rep->ntasks++];
	memset(rt, 0, sizeof(*rt));
	rt->index = t->index;
	rt->state = t->state;
	rt->exit_code = t->attempts > 0 ? t->exit_code : -1;
	rt->signal = t->signal;
	rt->attempts = t->attempts;
	rt->label = vg_xstrdup(label != NULL ? label : "-");
	vg_strlcpy(rt->reason, t->reason, sizeof(rt->reason));
	if (t->attempts > 0 && rep->r.dir != NULL) {
		vg_err_init(&e);
		if (t->attempts > 1)
			(void)vg_attempt_marks_load(c->st, rep->r.id, t->index,
			    &m, &e);
		read_tail(rep->r.dir, t->index, &m, &rt->tail);
		vg_attempt_marks_release(&m);
	}
	return 0;
}

int
vg_run_report_load(struct vg_store *st, const char *run_id,
    struct vg_run_report *rep, struct vg_err *e)
{
	struct report_ctx c = { rep, st };
	int rc;

	memset(rep, 0, sizeof(*rep));
	if ((rc = vg_store_run_get(st, run_id, &rep->r, e)) != 0)
		return rc;
	report_who(rep);
	(void)vg_store_group_get(st, rep->r.id, &rep->group, NULL, e);
	rep->tasks = vg_xcalloc(VG_REPORT_TASKS, sizeof(*rep->tasks));
	if ((rc = vg_store_task_each(st, rep->r.id, -1, report_task_cb, &c,
	    e)) != 0)
		vg_run_report_release(rep);
	return rc;
}

void
vg_run_report_sample(const struct vg_manifest *m, struct vg_run_report *rep)
{
	struct vg_report_task *rt;
	double now = vg_now();

	memset(rep, 0, sizeof(*rep));
	rep->test = 1;
	vg_strlcpy(rep->r.id, "00000000-000000-test00", sizeof(rep->r.id));
	rep->r.name = vg_xstrdup(m->name != NULL ? m->name : "-");
	rep->r.file = vg_xstrdup(m->file != NULL ? m->file : "-");
	rep->r.state = VG_ST_FAILED;
	rep->r.reason = vg_xstrdup("a sample payload (vigil notify --test)");
	rep->r.dir = vg_xstrdup("-");
	rep->r.created = now - 1;
	rep->r.ended = now;
	rep->r.ntasks = 2;
	rep->r.counts[VG_ST_SUCCEEDED] = 1;
	rep->r.counts[VG_ST_FAILED] = 1;
	report_who(rep);
	rep->tasks = vg_xcalloc(VG_REPORT_TASKS, sizeof(*rep->tasks));
	rep->ntasks = rep->nbad = 1;
	rt = &rep->tasks[0];
	rt->index = 1;
	rt->state = VG_ST_FAILED;
	rt->exit_code = 1;
	rt->attempts = 1;
	rt->label = vg_xstrdup("-");
	vg_strlcpy(rt->reason, "exit status 1", sizeof(rt->reason));
	vg_strv_push(&rt->tail, "this is a sample stderr line");
}

void
vg_run_report_release(struct vg_run_report *rep)
{
	size_t i;

	if (rep == NULL)
		return;
	for (i = 0; rep->tasks != NULL && i < rep->ntasks; i++) {
		free(rep->tasks[i].label);
		vg_strv_release(&rep->tasks[i].tail);
	}
	free(rep->tasks);
	free(rep->group);
	vg_run_info_release(&rep->r);
	memset(rep, 0, sizeof(*rep));
}

/* Writes an ISO 8601 UTC time, or null. */
static void
json_time(struct vg_json_writer *w, double t)
{
	struct tm tm;
	time_t s = (time_t)t;
	char buf[32];

	if (t <= 0) {
		vg_json_null(w);
		return;
	}
	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	vg_json_str(w, buf);
}

void
vg_run_report_json(const struct vg_run_report *rep, struct vg_buf *out)
{
	const struct vg_run_info *r = &rep->r;
	struct vg_json_writer w;
	size_t i, j;
	int s;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "version");
	vg_json_int(&w, VG_NOTIFY_VERSION);
	vg_json_key(&w, "event");
	vg_json_str(&w, rep->test ? "test" : "run.end");
	vg_json_key(&w, "id");
	vg_json_str(&w, r->id);
	vg_json_key(&w, "name");
	vg_json_str(&w, r->name);
	vg_json_key(&w, "group");
	vg_json_str(&w, rep->group);
	vg_json_key(&w, "state");
	vg_json_str(&w, vg_state_name(r->state));
	vg_json_key(&w, "reason");
	vg_json_str(&w, r->reason);
	vg_json_key(&w, "ntasks");
	vg_json_int(&w, r->ntasks);
	vg_json_key(&w, "counts");
	vg_json_obj_begin(&w);
	for (s = 0; s < VG_ST__COUNT; s++)
		if (r->counts[s] > 0) {
			vg_json_key(&w, vg_state_name((enum vg_state)s));
			vg_json_int(&w, r->counts[s]);
		}
	vg_json_obj_end(&w);
	vg_json_key(&w, "host");
	vg_json_str(&w, rep->host);
	vg_json_key(&w, "user");
	vg_json_str(&w, rep->user);
	vg_json_key(&w, "created");
	json_time(&w, r->created);
	vg_json_key(&w, "ended");
	json_time(&w, r->ended);
	vg_json_key(&w, "duration");
	if (r->ended > 0 && r->created > 0)
		vg_json_num(&w, r->ended - r->created);
	else
		vg_json_null(&w);
	vg_json_key(&w, "dir");
	vg_json_str(&w, r->dir);
	vg_json_key(&w, "file");
	vg_json_str(&w, r->file);
	vg_json_key(&w, "failed");
	vg_json_arr_begin(&w);
	for (i = 0; i < rep->ntasks; i++) {
		const struct vg_report_task *t = &rep->tasks[i];

		vg_json_obj_begin(&w);
		vg_json_key(&w, "index");
		vg_json_int(&w, t->index);
		vg_json_key(&w, "label");
		vg_json_str(&w, t->label);
		vg_json_key(&w, "state");
		vg_json_str(&w, vg_state_name(t->state));
		vg_json_key(&w, "exit_code");
		if (t->exit_code >= 0 && t->signal == 0)
			vg_json_int(&w, t->exit_code);
		else
			vg_json_null(&w);
		vg_json_key(&w, "signal");
		if (t->signal > 0)
			vg_json_int(&w, t->signal);
		else
			vg_json_null(&w);
		vg_json_key(&w, "attempts");
		vg_json_int(&w, t->attempts);
		vg_json_key(&w, "reason");
		vg_json_str(&w, t->reason[0] != '\0' ? t->reason : NULL);
		vg_json_key(&w, "stderr_tail");
		vg_json_arr_begin(&w);
		for (j = 0; j < t->tail.n; j++)
			vg_json_str(&w, t->tail.v[j]);
		vg_json_arr_end(&w);
		vg_json_obj_end(&w);
	}
	vg_json_arr_end(&w);
	vg_json_key(&w, "failed_more");
	vg_json_int(&w, (long long)(rep->nbad - rep->ntasks));
	vg_json_obj_end(&w);
}

void
vg_run_report_text(const struct vg_run_report *rep, struct vg_buf *out)
{
	const struct vg_run_info *r = &rep->r;
	size_t i, j;
	int s, first = 1;

	vg_buf_printf(out, "vigil: run %s (%s) %s: %d task%s", r->id,
	    r->name != NULL ? r->name : "-", vg_state_name(r->state),
	    r->ntasks, r->ntasks == 1 ? "" : "s");
	for (s = 0; s < VG_ST__COUNT; s++)
		if (r->counts[s] > 0) {
			vg_buf_printf(out, "%s%d %s", first ? ": " : ", ",
			    r->counts[s], vg_state_name((enum vg_state)s));
			first = 0;
		}
	vg_buf_addc(out, '\n');
	if (r->reason != NULL && *r->reason != '\0' &&
	    r->state != VG_ST_FAILED && r->state != VG_ST_SUCCEEDED)
		vg_buf_printf(out, "  reason: %s\n", r->reason);
	for (i = 0; i < rep->ntasks; i++) {
		const struct vg_report_task *t = &rep->tasks[i];

		vg_buf_printf(out, "  task %d [%s] %s", t->index, t->label,
		    vg_state_name(t->state));
		if (t->signal > 0)
			vg_buf_printf(out, ", signal %d", t->signal);
		else if (t->exit_code >= 0)
			vg_buf_printf(out, ", exit %d", t->exit_code);
		if (t->reason[0] != '\0')
			vg_buf_printf(out, ": %s", t->reason);
		vg_buf_addc(out, '\n');
		for (j = 0; j < t->tail.n; j++)
			vg_buf_printf(out, "    | %s\n", t->tail.v[j]);
	}
	if (rep->nbad > rep->ntasks)
		vg_buf_printf(out, "  ... and %zu more (vigil status %s)\n",
		    rep->nbad - rep->ntasks, r->id);
}

/* ---- when ---- */

int
vg_notify_wants(const struct vg_notify_conf *nc, enum vg_state s)
{
	if (!vg_notify_any(nc) || s == VG_ST_SKIPPED)
		return 0;
	if (nc->on & VG_NOTIFY_ALWAYS)
		return 1;
	switch (s) {
	case VG_ST_SUCCEEDED:
		return (nc->on & VG_NOTIFY_SUCCESS) != 0;
	case VG_ST_FAILED:
		return (nc->on & VG_NOTIFY_FAILURE) != 0;
	case VG_ST_DENIED:
		return (nc->on & VG_NOTIFY_DENIED) != 0;
	default:
		return 0;
	}
}

int
vg_notify_any(const struct vg_notify_conf *nc)
{
	return nc->nwebhook > 0 || nc->email.n > 0 || nc->command.n > 0;
}

/* ---- delivery ---- */

/* One run end's delivery: where events go and the shared deadline. */
struct dlv {
	struct vg_store			*st;	/* NULL: a test */
	const struct vg_manifest	*m;
	const struct vg_run_report	*rep;
	struct vg_strv			*said;
	struct vg_strv			*undelivered;
	struct vg_notify_stats		*stats;
	double				 deadline;	/* vg_now() */
	int				 out_fd;
	struct vg_buf			 payload;
};

/* Records one outcome: an event of the run, a line for the caller, and
 * a log line at debug level. */
static void __attribute__((format(printf, 2, 3)))
tell(struct dlv *d, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	va_list ap;

	vg_buf_adds(&b, "notify: ");
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_err_init(&e);
	if (d->st != NULL && !d->rep->test && vg_store_event(d->st,
	    d->rep->r.id, -1, 0, d->rep->r.state, vg_buf_str(&b), &e) != 0)
		vg_warn("%s (not recorded: %s)", vg_buf_str(&b), e.msg);
	if (d->said != NULL)
		vg_strv_push(d->said, vg_buf_str(&b));
	vg_debug("%s", vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Records a channel given up (tell), counts it failed and gives its
 * line, without the "notify: " prefix, to the caller's undelivered. */
static void __attribute__((format(printf, 2, 3)))
give_up(struct dlv *d, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	tell(d, "%s", vg_buf_str(&b));
	d->stats->failed++;
	if (d->undelivered != NULL)
		vg_strv_push(d->undelivered, vg_buf_str(&b));
	vg_buf_release(&b);
}

/* Seconds left of the total cap. */
static double
left(const struct dlv *d)
{
	return d->deadline - vg_now();
}

/* Sleeps s seconds (s > 0). */
static void
pause_for(double s)
{
	struct timespec t;

	t.tv_sec = (time_t)s;
	t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* Appends url without its path, query and user info: scheme://host:port/…
 * (a webhook URL's path is often its secret). */
static void
redact_url(const char *url, struct vg_buf *out)
{
	const char *p = strstr(url, "://"), *host, *end, *at;

	if (p == NULL) {
		vg_buf_adds(out, "(url)");
		return;
	}
	host = p + 3;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	if (at != NULL)
		host = at + 1;
	vg_buf_add(out, url, (size_t)(p + 3 - url));
	vg_buf_add(out, host, (size_t)(end - host));
	if (*end != '\0' && strcmp(end, "/") != 0)
		vg_buf_adds(out, "/…");
}

/*
 * Expands ${{ env.NAME }} in a header value from vigil's environment
 * (the manifest checks allow nothing else), NAME one of allow (the
 * config's notify.env_allow).  Returns 0, or -1 with the name missing
 * or not allowed in miss.
 */
static int
expand_env(const char *v, const struct vg_strv *allow, struct vg_buf *out,
    char *miss, size_t n)
{
	const char *p = v, *q, *name, *val;
	char nm[128];
	size_t len;

	while ((q = strstr(p, "${{")) != NULL) {
		vg_buf_add(out, p, (size_t)(q - p));
		q += 3;
		while (*q == ' ')
			q++;
		name = q + 4;		/* "env." */
		len = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
		    "opqrstuvwxyz0123456789_");
		snprintf(nm, sizeof(nm), "%.*s", (int)len, name);
		if (!vg_strv_contains(allow, nm) || (val = getenv(nm)) ==
		    NULL) {
			snprintf(miss, n, "%s", nm);
			return -1;
		}
		vg_buf_adds(out, val);
		q = name + len;
		while (*q == ' ')
			q++;
		p = q + 2;		/* "}}" */
	}
	vg_buf_adds(out, p);
	return 0;
}

/*
 * Where the webhook url leads, checked before anything is sent: its host
 * is resolved once and every address it has must be public, unless the
 * config allows private ones (notify.allow_private); the request then
 * goes to the address checked (vg_http_pin), whatever the name resolves
 * to by then.  Returns 0 (pinned), or 2 with why set.
 */
static int
webhook_pin(const struct dlv *d, struct vg_http *h, const char *url,
    char *why, size_t n)
{
	struct addrinfo hints, *res = NULL, *ai;
	const char *p = strstr(url, "://"), *end, *at, *kind, *pk = NULL;
	char host[256], port[16], addr[INET6_ADDRSTRLEN + 2], pin[600];
	size_t len;
	int rc;

	if (p == NULL) {
		snprintf(why, n, "bad URL");
		return 2;
	}
	p += 3;
	end = p + strcspn(p, "/?#");
	for (at = p; at < end; at++)
		if (*at == '@')
			p = at + 1;
	snprintf(port, sizeof(port), "%s", strncmp(url, "https", 5) == 0 ?
	    "443" : "80");
	if (*p == '[') {
		at = memchr(p, ']', (size_t)(end - p));
		if (at == NULL) {
			snprintf(why, n, "bad URL");
			return 2;
		}
		len = (size_t)(at - p - 1);
		snprintf(host, sizeof(host), "%.*s", (int)len, p + 1);
		at++;
	} else {
		at = memchr(p, ':', (size_t)(end - p));
		if (at == NULL)
			at = end;
		snprintf(host, sizeof(host), "%.*s", (int)(at - p), p);
	}
	if (at < end && *at == ':')
		snprintf(port, sizeof(port), "%.*s", (int)(end - at - 1),
		    at + 1);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(why, n, "cannot resolve '%s': %s", host,
		    gai_strerror(rc));
		return 1;
	}
	kind = NULL;
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((kind = vg_addr_kind(ai->ai_addr)) != NULL)
			break;
	if (kind != NULL && !d->m->notify.allow_private) {
		getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr),
		    NULL, 0, NI_NUMERICHOST);
		snprintf(why, n, "'%s' leads to %s, a %s address: webhooks "
		    "go there only with notify.allow_private: true in the "
		    "site or user config", host, addr, kind);
		freeaddrinfo(res);
		return 2;
	}
	getnameinfo(res->ai_addr, res->ai_addrlen, addr + 1, sizeof(addr) - 2,
	    NULL, 0, NI_NUMERICHOST);
	if (res->ai_family == AF_INET6) {
		addr[0] = '[';
		vg_strlcpy(addr + strlen(addr), "]",
		    sizeof(addr) - strlen(addr));
		pk = addr;
	} else
		pk = addr + 1;
	snprintf(pin, sizeof(pin), "%s:%s:%s", host, port, pk);
	vg_http_pin(h, pin);
	freeaddrinfo(res);
	return 0;
}

/* One channel of a delivery. */
struct chan {
	char	*what;			/* "webhook http://host/…" */
	/* Returns 0 delivered, 1 failed and worth another try, 2 failed
	 * for good; why says how. */
	int	(*attempt)(struct dlv *, void *, double, char *, size_t);
	void	*arg;
	int	 done;			/* 1 delivered or given up */
};

/*
 * Runs the channels in rounds: every channel's first attempt before any
 * retry, so one dead receiver cannot starve the others; then the failed
 * ones again after 1 s, then 2 s, all within notify.total.
 */
static void
run_rounds(struct dlv *d, struct chan *ch, size_t n)
{
	double backoff = BACKOFF_FIRST, t;
	char why[400];
	size_t i, open;
	int k, rc;

	for (k = 1; k <= VG_NOTIFY_ATTEMPTS; k++) {
		open = 0;
		for (i = 0; i < n; i++) {
			if (ch[i].done)
				continue;
			if ((t = left(d)) <= 0) {
				give_up(d, "%s not sent: notify.total (%gs) "
				    "spent", ch[i].what, d->m->notify.total);
				ch[i].done = 1;
				continue;
			}
			if (t > d->m->notify.timeout)
				t = d->m->notify.timeout;
			why[0] = '\0';
			rc = ch[i].attempt(d, ch[i].arg, t, why, sizeof(why));
			if (rc == 0) {
				tell(d, "%s delivered%s%s", ch[i].what,
				    why[0] ? ": " : "", why);
				ch[i].done = 1;
				d->stats->sent++;
				continue;
			}
			if (rc == 2 || k == VG_NOTIFY_ATTEMPTS) {
				give_up(d, "%s failed (attempt %d of %d): %s; "
				    "given up", ch[i].what, k,
				    VG_NOTIFY_ATTEMPTS, why);
				ch[i].done = 1;
				continue;
			}
			tell(d, "%s failed (attempt %d of %d): %s", ch[i].what,
			    k, VG_NOTIFY_ATTEMPTS, why);
			open++;
		}
		if (open == 0)
			return;
		if (left(d) <= backoff) {
			for (i = 0; i < n; i++)
				if (!ch[i].done) {
					give_up(d, "%s not retried: "
					    "notify.total (%gs) leaves no time",
					    ch[i].what, d->m->notify.total);
					ch[i].done = 1;
				}
			return;
		}
		pause_for(backoff);
		backoff *= 2;
	}
}

/* One POST of the payload to webhook arg. */
static int
webhook_attempt(struct dlv *d, void *arg, double timeout, char *why,
    size_t n)
{
	const struct vg_webhook *wh = arg;
	struct vg_http_req req;
	struct vg_http_resp resp;
	struct vg_http *h = NULL;
	struct vg_buf line = VG_BUF_INIT;
	struct vg_err e;
	char miss[128];
	size_t i;
	int rc;

	vg_err_init(&e);
	if (vg_http_open(wh->url, &h, &e) != 0) {
		snprintf(why, n, "bad URL");
		return 2;
	}
	if ((rc = webhook_pin(d, h, wh->url, why, n)) != 0) {
		vg_http_free(h);
		return rc;
	}
	vg_http_add_header(h, "User-Agent: vigil/" VG_VERSION);
	vg_http_add_header(h, d->rep->test ? "X-Vigil-Event: test" :
	    "X-Vigil-Event: run.end");
	for (i = 0; i < wh->headers.n; i++) {
		vg_buf_reset(&line);
		vg_buf_printf(&line, "%s: ", wh->headers.v[i].key);
		if (expand_env(wh->headers.v[i].value,
		    &d->m->notify.env_allow, &line, miss, sizeof(miss)) != 0) {
			snprintf(why, n, "header '%s' needs $%s, which is not "
			    "set or not in notify.env_allow",
			    wh->headers.v[i].key, miss);
			vg_buf_release(&line);
			vg_http_free(h);
			return 2;
		}
		vg_http_add_header(h, vg_buf_str(&line));
	}
	vg_buf_release(&line);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "";
	req.body = vg_buf_str(&d->payload);
	req.body_len = d->payload.len;
	req.timeout = timeout;
	req.connect_timeout = timeout;
	req.max_body = 64 * 1024;
	memset(&resp, 0, sizeof(resp));
	rc = vg_http_do(h, &req, &resp, &e);
	vg_http_free(h);
	if (rc == VG_ETIMEOUT) {
		snprintf(why, n, "no answer within %.1fs", timeout);
		rc = 1;
	} else if (rc == VG_ELIMIT) {
		snprintf(why, n, "HTTP %ld with a reply over 64 KiB",
		    resp.status);
		rc = resp.status >= 200 && resp.status < 300 ? 0 : 1;
	} else if (rc != 0) {
		/* libcurl's explanation follows the endpoint in e.msg;
		 * keep only it (the endpoint may hold a secret). */
		const char *c = strrchr(e.msg, ':');

		snprintf(why, n, "cannot connect%s%s", c != NULL ? ":" : "",
		    c != NULL ? c + 1 : "");
		rc = 1;
	} else if (resp.status >= 200 && resp.status < 300) {
		snprintf(why, n, "HTTP %ld", resp.status);
		rc = 0;
	} else {
		snprintf(why, n, "HTTP %ld", resp.status);
		/* A client error will not go away by itself. */
		rc = resp.status >= 400 && resp.status < 500 &&
		    resp.status != 408 && resp.status != 429 ? 2 : 1;
	}
	vg_http_resp_release(&resp);
	return rc;
}

/* Where a process spawned for notify writes its output. */
static int
out_fd_for(struct dlv *d, int *opened)
{
	*opened = 0;
	if (d->out_fd >= 0)
		return d->out_fd;
	*opened = 1;
	return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/*
 * Runs argv with input on its stdin and its output to d's fd, for at
 * most timeout seconds.  0 exit 0, 1 failed (why says how).
 */
static int
spawn_feed(struct dlv *d, char *const argv[], char *const envp[],
    const char *input, size_t len, double timeout, char *why, size_t n)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t sa;
	sigset_t none, dfl;
	void (*oldpipe)(int);
	struct pollfd pfd;
	double end = vg_now() + timeout;
	char *path;
	pid_t pid;
	size_t off = 0;
	ssize_t w;
	int p[2], ofd, opened, rc, ws, got = 0, ms;

	if ((path = strchr(argv[0], '/') != NULL ? vg_xstrdup(argv[0]) :
	    vg_which(argv[0])) == NULL) {
		snprintf(why, n, "'%s' is not in $PATH", argv[0]);
		return 1;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		snprintf(why, n, "pipe: %s", strerror(errno));
		free(path);
		return 1;
	}
	ofd = out_fd_for(d, &opened);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	if (ofd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, ofd, 1);
		posix_spawn_file_actions_adddup2(&fa, ofd, 2);
	}
	/* The driver blocks its signals (signalfd) and ignores SIGPIPE
	 * here; the child starts with neither. */
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_init(&sa);
	posix_spawnattr_setsigmask(&sa, &none);
	posix_spawnattr_setsigdefault(&sa, &dfl);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&pid, path, &fa, &sa, argv, envp);
	posix_spawnattr_destroy(&sa);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	if (opened && ofd >= 0)
		close(ofd);
	free(path);
	if (rc != 0) {
		close(p[1]);
		snprintf(why, n, "cannot run '%s': %s", argv[0],
		    strerror(rc));
		return 1;
	}
	(void)vg_fd_nonblock(p[1]);
	/* A reader that went away is an EPIPE, not a SIGPIPE. */
	oldpipe = signal(SIGPIPE, SIG_IGN);
	while (off < len && vg_now() < end) {
		w = write(p[1], input + off, len - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			break;
		pfd.fd = p[1];
		pfd.events = POLLOUT;
		ms = (int)((end - vg_now()) * 1000) + 1;
		(void)poll(&pfd, 1, ms > 0 ? ms : 1);
	}
	close(p[1]);
	signal(SIGPIPE, oldpipe);
	while (vg_now() < end) {
		if ((rc = waitpid(pid, &ws, WNOHANG)) == pid) {
			got = 1;
			break;
		}
		if (rc < 0 && errno != EINTR)
			break;
		pause_for(0.01);
	}
	if (!got) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		snprintf(why, n, "'%s' did not finish within %.1fs (killed)",
		    argv[0], timeout);
		return 1;
	}
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		return 0;
	if (WIFEXITED(ws))
		snprintf(why, n, "'%s' exited with status %d", argv[0],
		    WEXITSTATUS(ws));
	else
		snprintf(why, n, "'%s' was killed by signal %d", argv[0],
		    WTERMSIG(ws));
	return 1;
}

/* The environment of the notify command: vigil's, plus the run. */
static char **
command_env(const struct dlv *d, struct vg_strv *keep)
{
	char **v;
	size_t i;

	for (i = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "VIGIL_NOTIFY_", 13) != 0)
			vg_strv_push(keep, environ[i]);
	vg_strv_pushf(keep, "VIGIL_NOTIFY_RUN_ID=%s", d->rep->r.id);
	vg_strv_pushf(keep, "VIGIL_NOTIFY_STATE=%s",
	    vg_state_name(d->rep->r.state));
	v = vg_xcalloc(keep->n + 1, sizeof(*v));
	for (i = 0; i < keep->n; i++)
		v[i] = keep->v[i];
	return v;
}

/* Mail: argv is { sendmail, "-t", "-oi", NULL }; the message is arg. */
struct mail {
	char		*argv[4];
	struct vg_buf	 msg;
};

static int
mail_attempt(struct dlv *d, void *arg, double timeout, char *why, size_t n)
{
	struct mail *ml = arg;

	return spawn_feed(d, ml->argv, environ, vg_buf_str(&ml->msg),
	    ml->msg.len, timeout, why, n);
}

/* The command: argv and environment. */
struct cmd {
	char		**argv;
	char		**envp;
};

static int
command_attempt(struct dlv *d, void *arg, double timeout, char *why,
    size_t n)
{
	struct cmd *c = arg;

	return spawn_feed(d, c->argv, c->envp, vg_buf_str(&d->payload),
	    d->payload.len, timeout, why, n);
}

/* Where a mail program may be found when it is named without a slash:
 * the system's directories only, never the caller's PATH (a run's
 * directory or a task's outputs could be on it). */
#define MAILER_PATH	"/usr/sbin:/usr/bin:/sbin:/bin"

/*
 * The mail program of m, resolved (*out, caller frees) and checked: a
 * name without a slash is looked for in MAILER_PATH only, and the
 * program must be one no one else and no task of this run could have
 * put there (vg_program_refusal): vigil runs it outside any sandbox.
 * Returns NULL with *out set, or the reason it is refused (caller
 * frees).
 */
static char *
mailer_resolve(const struct vg_manifest *m, char **out)
{
	const char *name = m->notify.sendmail != NULL ? m->notify.sendmail :
	    "sendmail";
	struct vg_strv tw = VG_STRV_INIT;
	const char *p, *q;
	char *why;

	*out = NULL;
	if (strchr(name, '/') == NULL) {
		for (p = MAILER_PATH; *p != '\0'; p = *q ? q + 1 : q) {
			q = strchr(p, ':');
			if (q == NULL)
				q = p + strlen(p);
			free(*out);
			*out = vg_xasprintf("%.*s/%s", (int)(q - p), p, name);
			if (access(*out, X_OK) == 0)
				break;
			free(*out);
			*out = NULL;
		}
		if (*out == NULL)
			return vg_xasprintf("mail program '%s' is not in %s",
			    name, MAILER_PATH);
	} else
		*out = vg_xstrdup(name);
	vg_manifest_task_writable(m, &tw);
	why = vg_program_refusal(*out, "mail program", &tw);
	vg_strv_release(&tw);
	return why;
}

/* Builds the mail message: headers, the text summary, the payload. */
static void
mail_message(const struct dlv *d, struct vg_buf *msg)
{
	const struct vg_notify_conf *nc = &d->m->notify;
	const struct vg_run_info *r = &d->rep->r;
	size_t i;

	vg_buf_adds(msg, "To: ");
	for (i = 0; i < nc->email.n; i++)
		vg_buf_printf(msg, "%s%s", i > 0 ? ", " : "", nc->email.v[i]);
	vg_buf_adds(msg, "\nSubject: vigil: run ");
	add_clean(msg, r->id, sizeof(r->id));
	vg_buf_adds(msg, " (");
	add_clean(msg, r->name != NULL ? r->name : "-", 200);
	vg_buf_printf(msg, ") %s%s\n", vg_state_name(r->state),
	    d->rep->test ? " [test]" : "");
	vg_buf_adds(msg, "Content-Type: text/plain; charset=utf-8\n"
	    "Auto-Submitted: auto-generated\nX-Vigil-Run: ");
	add_clean(msg, r->id, sizeof(r->id));
	vg_buf_adds(msg, "\n\n");
	vg_run_report_text(d->rep, msg);
	vg_buf_adds(msg, "\n");
	vg_buf_add(msg, d->payload.data, d->payload.len);
	vg_buf_adds(msg, "\n");
}

void
vg_notify_deliver(struct vg_store *st, const struct vg_manifest *m,
    const struct vg_run_report *rep, int out_fd, struct vg_strv *said,
    struct vg_strv *undelivered, struct vg_notify_stats *stats)
{
	const struct vg_notify_conf *nc = &m->notify;
	struct vg_notify_stats dummy;
	struct vg_buf what = VG_BUF_INIT;
	struct vg_strv env = VG_STRV_INIT;
	struct chan *ch;
	struct dlv d;
	struct mail ml;
	struct cmd c;
	struct vg_err e;
	char *denied = NULL;
	double t0 = vg_now();
	size_t i, n = 0;

	if (stats == NULL)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	memset(&d, 0, sizeof(d));
	memset(&ml, 0, sizeof(ml));
	memset(&c, 0, sizeof(c));
	d.st = st;
	d.m = m;
	d.rep = rep;
	d.said = said;
	d.undelivered = undelivered;
	d.stats = stats;
	d.deadline = t0 + nc->total;
	d.out_fd = out_fd;
	vg_buf_init(&d.payload);
	vg_buf_init(&ml.msg);
	vg_run_report_json(rep, &d.payload);
	ch = vg_xcalloc(nc->nwebhook + 2, sizeof(*ch));
	for (i = 0; i < nc->nwebhook; i++) {
		vg_buf_reset(&what);
		vg_buf_adds(&what, "webhook ");
		redact_url(nc->webhook[i].url, &what);
		ch[n].what = vg_xstrdup(vg_buf_str(&what));
		ch[n].attempt = webhook_attempt;
		ch[n++].arg = &nc->webhook[i];
	}
	if (nc->email.n > 0) {
		/* The mail program runs outside any sandbox: resolved in the
		 * system's directories, never from a place tasks write,
		 * and gated and audited like notify.command. */
		vg_buf_reset(&what);
		vg_buf_printf(&what, "mail to %zu recipient%s", nc->email.n,
		    nc->email.n == 1 ? "" : "s");
		vg_err_init(&e);
		if ((denied = mailer_resolve(m, &ml.argv[0])) != NULL) {
			give_up(&d, "%s not sent: %s", vg_buf_str(&what),
			    denied);
		} else {
			ml.argv[1] = vg_xstrdup("-t");
			ml.argv[2] = vg_xstrdup("-oi");
			if (vg_gate_argv(m, ml.argv, rep->test ? NULL :
			    rep->r.id, -1, rep->test ? NULL : st, &denied,
			    &e) != 0) {
				give_up(&d, "%s not sent: policy gate: %s",
				    vg_buf_str(&what), e.msg);
			} else if (denied != NULL) {
				give_up(&d, "%s not sent: the mail program "
				    "was DENIED by the policy gate: %s",
				    vg_buf_str(&what), denied);
			} else {
				mail_message(&d, &ml.msg);
				ch[n].what = vg_xstrdup(vg_buf_str(&what));
				ch[n].attempt = mail_attempt;
				ch[n++].arg = &ml;
			}
		}
		free(denied);
		denied = NULL;
	}
	if (nc->command.n > 0) {
		vg_buf_reset(&what);
		vg_buf_adds(&what, "command ");
		vg_buf_shquote(&what, nc->command.v[0]);
		vg_err_init(&e);
		c.argv = vg_xcalloc(nc->command.n + 1, sizeof(*c.argv));
		for (i = 0; i < nc->command.n; i++)
			c.argv[i] = nc->command.v[i];
		/* Gated like a task, before anything is sent. */
		if (vg_gate_argv(m, c.argv, rep->test ? NULL : rep->r.id, -1,
		    rep->test ? NULL : st, &denied, &e) != 0) {
			give_up(&d, "%s not run: policy gate: %s",
			    vg_buf_str(&what), e.msg);
		} else if (denied != NULL) {
			give_up(&d, "%s DENIED by the policy gate: %s",
			    vg_buf_str(&what), denied);
		} else {
			c.envp = command_env(&d, &env);
			ch[n].what = vg_xstrdup(vg_buf_str(&what));
			ch[n].attempt = command_attempt;
			ch[n++].arg = &c;
		}
		free(denied);
	}
	run_rounds(&d, ch, n);
	stats->seconds = vg_now() - t0;
	for (i = 0; i < n; i++)
		free(ch[i].what);
	free(ch);
	for (i = 0; i < 3; i++)
		free(ml.argv[i]);
	free(c.argv);
	free(c.envp);
	vg_buf_release(&ml.msg);
	vg_strv_release(&env);
	vg_buf_release(&what);
	vg_buf_release(&d.payload);
}

int
vg_notify_claim(struct vg_store *st, const char *run_id,
    const struct vg_manifest *m, enum vg_state s, int *claimed,
    struct vg_err *e)
{
	*claimed = 0;
	if (!vg_notify_wants(&m->notify, s))
		return 0;
	return vg_store_notify_claim(st, run_id, claimed, e);
}

void
vg_notify_run(struct vg_store *st, const char *run_id,
    const struct vg_manifest *m, struct vg_strv *undelivered)
{
	struct vg_run_report rep;
	struct vg_err e;
	char *log;
	int fd;

	vg_err_init(&e);
	if (vg_run_report_load(st, run_id, &rep, &e) != 0) {
		vg_warn("run %s: notify: %s", run_id, e.msg);
		if (undelivered != NULL)
			vg_strv_pushf(undelivered, "nothing sent: %s", e.msg);
		return;
	}
	log = vg_path_join(rep.r.dir, "notify.log");
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(log);
	vg_notify_deliver(st, m, &rep, fd, NULL, undelivered, NULL);
	if (fd >= 0)
		close(fd);
	vg_run_report_release(&rep);
}
