/*
 * gridengine-parse.c - what Grid Engine's commands print, read back:
 * qstat -xml (with a small reader of its own: the few elements vigil
 * needs, tolerant of everything else), qacct -j, qconf -sconf and qsub
 * -terse; and the mapping of qstat states and accounting records to
 * vigil states.  The daemons' output is read as untrusted: every length
 * is bounded, malformed input is an error, never a crash
 * (tests/fuzz/fuzz-gridengine-parse.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedulers/gridengine.h"

/* Nesting depth the qstat reader follows (qstat uses 3-4). */
#define XML_DEPTH	16
/* Array tasks one qstat answer may expand to (ranges with a step). */
#define TASKS_MAX	1000000
/* The longest element text kept (job numbers, states, queue names). */
#define TEXT_MAX	256

void
vg_ge_rows_release(struct vg_ge_rows *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

void
vg_ge_accts_release(struct vg_ge_accts *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/* The job_list being read. */
struct jl {
	char	job[TEXT_MAX];
	char	state[TEXT_MAX];
	char	queue[TEXT_MAX];
	char	tasks[TEXT_MAX];
};

/* Adds one row. */
static void
row_add(struct vg_ge_rows *out, unsigned long job, long lo, long hi,
    const struct jl *j)
{
	struct vg_ge_row *r;

	out->v = vg_xgrow(out->v, &out->cap, out->n + 1, sizeof *out->v);
	r = &out->v[out->n++];
	memset(r, 0, sizeof *r);
	r->job = job;
	r->task_lo = lo;
	r->task_hi = hi;
	snprintf(r->state, sizeof r->state, "%.15s", j->state);
	snprintf(r->queue, sizeof r->queue, "%.95s", j->queue);
}

/* Reads a decimal number of at most 18 digits at *s; -1 when none. */
static long
num_at(const char **s)
{
	long v = 0;
	int n = 0;

	while (isdigit((unsigned char)**s) && n < 18) {
		v = v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n == 0 || isdigit((unsigned char)**s) ? -1 : v;
}

/* Emits the rows of one finished job_list element. */
static int
jl_emit(const struct jl *j, struct vg_ge_rows *out, size_t *ntasks,
    struct vg_err *e)
{
	const char *s = j->job;
	long job, lo, hi, step;

	if ((job = num_at(&s)) <= 0 || *s != '\0')
		return vg_err_set(e, VG_EPARSE, "qstat: bad job number '%.40s'",
		    j->job);
	if (j->tasks[0] == '\0') {
		row_add(out, (unsigned long)job, 0, 0, j);
		return 0;
	}
	/* "3", "1-5:1", "2,4-6:1", "1-9:2" */
	for (s = j->tasks;;) {
		if ((lo = num_at(&s)) <= 0)
			goto bad;
		hi = lo;
		step = 1;
		if (*s == '-') {
			s++;
			if ((hi = num_at(&s)) < lo)
				goto bad;
			if (*s == ':') {
				s++;
				if ((step = num_at(&s)) <= 0)
					goto bad;
			}
		}
		if (step == 1) {
			row_add(out, (unsigned long)job, lo, hi, j);
			*ntasks += 1;
		} else
			for (; lo <= hi; lo += step) {
				if (++*ntasks > TASKS_MAX)
					return vg_err_set(e, VG_ELIMIT, "qstat: "
					    "more than %d array tasks",
					    TASKS_MAX);
				row_add(out, (unsigned long)job, lo, lo, j);
			}
		if (*s == '\0')
			return 0;
		if (*s++ != ',')
			goto bad;
	}
bad:
	return vg_err_set(e, VG_EPARSE, "qstat: bad task list '%.60s' of job "
	    "%ld", j->tasks, job);
}

/* Appends the text [s, end) to buf, decoding the five XML entities and
 * numeric references below 128; the rest stays as it is. */
static void
text_add(char *buf, const char *s, const char *end)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' },
		{ "&quot;", '"' }, { "&apos;", '\'' },
	};
	size_t len = strlen(buf), i, k;
	char c;

	while (s < end && len + 1 < TEXT_MAX) {
		c = *s++;
		if (c == '&') {
			for (i = 0; i < sizeof ents / sizeof ents[0]; i++) {
				k = strlen(ents[i].ent) - 1;
				if ((size_t)(end - s) >= k &&
				    memcmp(s, ents[i].ent + 1, k) == 0) {
					c = ents[i].c;
					s += k;
					break;
				}
			}
		}
		buf[len++] = c;
	}
	buf[len] = '\0';
}

/* Strips blanks on both ends of buf in place. */
static void
trim(char *buf)
{
	size_t len = strlen(buf), i = 0;

	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	while (isspace((unsigned char)buf[i]))
		i++;
	memmove(buf, buf + i, len - i + 1);
}

/* Finds needle in [s, end); NULL when absent. */
static const char *
find(const char *s, const char *end, const char *needle)
{
	size_t k = strlen(needle);

	for (; s + k <= end; s++)
		if (memcmp(s, needle, k) == 0)
			return s;
	return NULL;
}

/* The field of the current job_list that element name fills, or NULL. */
static char *
jl_field(struct jl *j, const char *name, size_t len)
{
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(name, lit, len) == 0)
	if (IS("JB_job_number"))
		return j->job;
	if (IS("state"))
		return j->state;
	if (IS("queue_name"))
		return j->queue;
	if (IS("tasks"))
		return j->tasks;
	return NULL;
#undef IS
}

int
vg_ge_parse_qstat(const char *text, size_t len, struct vg_ge_rows *out,
    struct vg_err *e)
{
	const char *s = text, *end = text + len, *t, *name;
	struct { const char *name; size_t len; } stack[XML_DEPTH];
	struct jl j;
	char *field = NULL;
	size_t depth = 0, nlen, ntasks = 0;
	int in_jl = 0, rc;

	memset(&j, 0, sizeof j);
	while (s < end) {
		if (*s != '<') {
			t = memchr(s, '<', (size_t)(end - s));
			if (t == NULL)
				t = end;
			if (field != NULL)
				text_add(field, s, t);
			s = t;
			continue;
		}
		/* <?...?>, <!-- ... -->, <!...> */
		if (s + 1 < end && (s[1] == '?' || s[1] == '!')) {
			t = s + 4 <= end && memcmp(s, "<!--", 4) == 0 ?
			    find(s + 4, end, "-->") : memchr(s, '>',
			    (size_t)(end - s));
			if (t == NULL)
				goto trunc;
			s = t + (*t == '-' ? 3 : 1);
			continue;
		}
		if ((t = memchr(s, '>', (size_t)(end - s))) == NULL)
			goto trunc;
		if (s[1] == '/') {
			name = s + 2;
			for (nlen = 0; name + nlen < t &&
			    !isspace((unsigned char)name[nlen]); nlen++)
				;
			if (depth == 0 || stack[depth - 1].len != nlen ||
			    memcmp(stack[depth - 1].name, name, nlen) != 0)
				return vg_err_set(e, VG_EPARSE, "qstat -xml: "
				    "unexpected </%.*s> at byte %zu",
				    (int)(nlen > 40 ? 40 : nlen), name,
				    (size_t)(s - text));
			depth--;
			if (nlen == 8 && memcmp(name, "job_list", 8) == 0 &&
			    in_jl) {
				in_jl = 0;
				trim(j.job);
				trim(j.state);
				trim(j.queue);
				trim(j.tasks);
				if ((rc = jl_emit(&j, out, &ntasks, e)) != 0)
					return rc;
			}
			field = NULL;
			s = t + 1;
			continue;
		}
		name = s + 1;
		for (nlen = 0; name + nlen < t && !isspace((unsigned char)
		    name[nlen]) && name[nlen] != '/'; nlen++)
			;
		if (nlen == 0)
			return vg_err_set(e, VG_EPARSE, "qstat -xml: empty tag "
			    "at byte %zu", (size_t)(s - text));
		s = t + 1;
		if (t[-1] == '/')
			continue;	/* <empty/> */
		if (depth == XML_DEPTH)
			return vg_err_set(e, VG_EPARSE, "qstat -xml: nested "
			    "deeper than %d at byte %zu", XML_DEPTH,
			    (size_t)(t - text));
		stack[depth].name = name;
		stack[depth++].len = nlen;
		if (nlen == 8 && memcmp(name, "job_list", 8) == 0) {
			memset(&j, 0, sizeof j);
			in_jl = 1;
			field = NULL;
		} else if (in_jl)
			field = jl_field(&j, name, nlen);
	}
	if (depth == 0)
		return 0;
trunc:
	return vg_err_set(e, VG_EPARSE, "qstat -xml: output ends inside an "
	    "element (%zu bytes)", len);
}

const struct vg_ge_row *
vg_ge_rows_find(const struct vg_ge_rows *r, unsigned long job, long task)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].job == job && ((task == 0 && r->v[i].task_lo ==
		    0) || (task >= r->v[i].task_lo && task <=
		    r->v[i].task_hi)))
			return &r->v[i];
	return NULL;
}

/* A qacct size ("3.430MB", "0.000B", "12K"): bytes, 1024-based. */
static double
size_of(const char *v)
{
	char *end;
	double d = strtod(v, &end);

	switch (toupper((unsigned char)*end)) {
	case 'K': return d * 1024;
	case 'M': return d * 1024 * 1024;
	case 'G': return d * 1024 * 1024 * 1024;
	case 'T': return d * 1024 * 1024 * 1024 * 1024;
	default: return d;
	}
}

int
vg_ge_parse_qacct(const char *text, struct vg_ge_accts *out,
    struct vg_err *e)
{
	struct vg_ge_acct a;
	const char *s = text, *nl;
	char line[512], *v, *end;
	size_t len;
	int have = 0;
	long x;

	memset(&a, 0, sizeof a);
	for (;; s = nl + 1) {
		nl = strchr(s, '\n');
		len = nl != NULL ? (size_t)(nl - s) : strlen(s);
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, s, len);
		line[len] = '\0';
		if (line[0] == '=' || nl == NULL) {
			if (have && a.job > 0) {
				out->v = vg_xgrow(out->v, &out->cap,
				    out->n + 1, sizeof *out->v);
				out->v[out->n++] = a;
			}
			memset(&a, 0, sizeof a);
			have = 0;
			if (nl == NULL)
				return 0;
			continue;
		}
		for (v = line; *v != '\0' && !isspace((unsigned char)*v); v++)
			;
		if (*v != '\0')
			*v++ = '\0';
		while (isspace((unsigned char)*v))
			v++;
		trim(v);
		have = 1;
		if (strcmp(line, "jobnumber") == 0) {
			x = strtol(v, &end, 10);
			if (x <= 0 || *end != '\0')
				return vg_err_set(e, VG_EPARSE, "qacct: bad "
				    "jobnumber '%.40s'", v);
			a.job = (unsigned long)x;
		} else if (strcmp(line, "taskid") == 0)
			a.task = strcmp(v, "undefined") == 0 ? 0 :
			    strtol(v, NULL, 10);
		else if (strcmp(line, "failed") == 0) {
			a.failed = (int)strtol(v, &end, 10);
			while (*end == ' ' || *end == ':')
				end++;
			snprintf(a.failed_text, sizeof a.failed_text, "%s",
			    end);
		} else if (strcmp(line, "exit_status") == 0)
			a.exit_status = (int)strtol(v, NULL, 10);
		else if (strcmp(line, "ru_wallclock") == 0)
			a.wallclock = strtod(v, NULL);
		else if (strcmp(line, "cpu") == 0)
			a.cpu = strtod(v, NULL);
		else if (strcmp(line, "maxvmem") == 0)
			a.maxvmem = size_of(v);
		else if (strcmp(line, "hostname") == 0)
			snprintf(a.host, sizeof a.host, "%.63s", v);
		else if (strcmp(line, "slots") == 0)
			a.slots = (int)strtol(v, NULL, 10);
	}
}

enum vg_state
vg_ge_acct_map(const struct vg_ge_acct *a, uint64_t memory,
    struct vg_result *r)
{
	memset(r, 0, sizeof *r);
	r->exit_code = a->exit_status;
	snprintf(r->node, sizeof r->node, "%s", a->host);
	if (a->cpu > 0) {
		r->usage.cpu_user = a->cpu;
		r->usage.known |= VG_USAGE_CPU;
	}
	if (a->slots > 0) {
		r->usage.cpus = a->slots;
		r->usage.known |= VG_USAGE_CPUS;
	}
	if (a->exit_status > 128 && a->exit_status < 160) {
		r->signal = a->exit_status - 128;
		r->exit_code = -1;
	}
	if (a->failed == 37) {
		r->state = memory > 0 && a->maxvmem >= 0.9 * (double)memory ?
		    VG_ST_OOM : VG_ST_TIMEOUT;
		snprintf(r->reason, sizeof r->reason, "Grid Engine: %s "
		    "(failed 37: %s)", r->state == VG_ST_OOM ? "memory limit "
		    "(h_vmem)" : "time limit (h_rt)", a->failed_text);
	} else if (a->failed == 100 && r->signal > 0) {
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof r->reason, "Grid Engine killed the "
		    "job (failed 100: %s, exit status %d)", a->failed_text,
		    a->exit_status);
	} else if (a->failed != 0) {
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof r->reason, "Grid Engine could not "
		    "run the job (failed %d: %s)", a->failed, a->failed_text);
	} else if (a->exit_status == 0)
		r->state = VG_ST_SUCCEEDED;
	else {
		r->state = VG_ST_FAILED;
		snprintf(r->reason, sizeof r->reason, "exit status %d",
		    a->exit_status);
	}
	return r->state;
}

int
vg_ge_parse_conf(const char *text, int *max_aj_tasks, struct vg_err *e)
{
	const char *s;
	char *end;
	long v;

	*max_aj_tasks = 75000;
	for (s = text; s != NULL && *s != '\0'; s = strchr(s, '\n'),
	    s = s != NULL ? s + 1 : NULL) {
		if (strncmp(s, "max_aj_tasks", 12) != 0 ||
		    !isspace((unsigned char)s[12]))
			continue;
		v = strtol(s + 12, &end, 10);
		if (v <= 0 || v > 100000000 || (*end != '\0' && *end != '\n' &&
		    !isspace((unsigned char)*end)))
			return vg_err_set(e, VG_EPARSE, "qconf -sconf: bad "
			    "max_aj_tasks line");
		*max_aj_tasks = (int)v;
	}
	return 0;
}

int
vg_ge_parse_jobid(const char *text, unsigned long *job, struct vg_err *e)
{
	const char *s = text;
	long v;

	while (isspace((unsigned char)*s))
		s++;
	v = num_at(&s);
	if (v <= 0 || (*s != '\0' && *s != '.' && !isspace((unsigned char)
	    *s)))
		return vg_err_set(e, VG_EPARSE, "qsub: no job id in '%.60s'",
		    text);
	*job = (unsigned long)v;
	return 0;
}

enum vg_state
vg_ge_state_map(const char *state, char *why, size_t n)
{
	snprintf(why, n, "%s", "");
	if (strchr(state, 'E') != NULL) {
		snprintf(why, n, "Grid Engine error state '%s' (qstat -j "
		    "explains; qmod -cj clears it)", state);
		return VG_ST_QUEUED;
	}
	if (strpbrk(state, "sST") != NULL) {
		snprintf(why, n, "suspended ('%s')", state);
		return VG_ST_SUSPENDED;
	}
	/* R: a rerunnable job Grid Engine runs again from the start (its
	 * host failed, qmod -rj): the same attempt, run again. */
	if (strchr(state, 'R') != NULL) {
		snprintf(why, n, "rerun by Grid Engine ('%s')", state);
		return strpbrk(state, "rt") != NULL ? VG_ST_RUNNING :
		    VG_ST_QUEUED;
	}
	if (strpbrk(state, "rt") != NULL)
		return VG_ST_RUNNING;
	if (strchr(state, 'h') != NULL) {
		snprintf(why, n, "held ('%s')", state);
		return VG_ST_QUEUED;
	}
	if (strchr(state, 'd') != NULL) {
		snprintf(why, n, "being deleted ('%s')", state);
		return VG_ST_QUEUED;
	}
	snprintf(why, n, "pending ('%s')", state);
	return VG_ST_QUEUED;
}
