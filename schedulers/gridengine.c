/*
 * gridengine.c - the gridengine scheduler (alias sge): attempts become
 * tasks of Grid Engine array jobs (qsub -t 1-N), each running `vigil
 * task-exec RUN_DIR INDEX` on an execution host, which writes
 * tasks/INDEX/result.json and refreshes tasks/INDEX/heartbeat.
 *
 *   submit    collects attempts (nothing is sent yet)
 *   flush     groups them by resource request, chunks each group at the
 *             cell's max_aj_tasks (qconf -sconf), writes one job script
 *             per chunk (run_dir/gridengine/submit-N.sh) and runs qsub
 *             with argv (no shell), retrying transient errors; every job
 *             id goes to the journal run_dir/gridengine/jobs before it is
 *             reported
 *   poll      reads result records (ground truth), and when the adaptive
 *             interval allows, makes ONE `qstat -xml` for every job of
 *             the run; `qacct -j JOB` (one call per array job, never per
 *             task) only for tasks that left the queue and whose ending
 *             the records do not tell, or whose accounting is due
 *   cancel    batched into the next poll: `qdel JOB` when every live task
 *             of the job goes, else `qdel JOB -t LO-HI` per range
 *   reattach  takes a job back ("JOB.TASK"), or, with an empty handle,
 *             finds the attempt in the journal
 *
 * Truth and liveness, as for Slurm: a result record decides how a task
 * ended; qacct decides only what the task could not say (failed 37:
 * h_rt or h_vmem enforced: TIMEOUT or OOM; failed 100 with a kill:
 * CANCELLED; other failed codes: the job never ran).  A task that left
 * the queue without a record is LOST once the grace window passes and
 * its heartbeat is stale; an exit status 0 without a record is LOST,
 * never SUCCEEDED.  A failed qstat changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/path.h"
#include "common/which.h"
#include "runner/manifest/schema-table.h"
#include "schedulers/gridengine.h"
#include "schedulers/launcher.h"
#include "schedulers/scheduler.h"
#include "schedulers/cluster.h"

#define SUBMIT_TRIES	5	/* 0.5 + 1 + 2 + 4 s of backoff */
#define GRACE_DEFAULT	60.0	/* seconds for a record to show up */
#define KILLED_GRACE	3.0	/* after TIMEOUT, OOM, a kill */
#define HEARTBEAT_STALE	90.0
#define FILE_CHECK	1000	/* ms between record checks */
#define CMD_TIMEOUT	60000	/* ms for one qsub, qstat, qacct, qdel */

/* One attempt handed to this scheduler. */
struct ge_att {
	struct vg_attempt	*a;
	int			 index;
	unsigned long		 job;		/* 0 = unsent */
	long			 task;		/* SGE task id, 1-based */
	int			 cancel;	/* qdel requested */
	int			 cancel_sent;
	int			 done;
	int			 left;		/* not in qstat any more */
	enum vg_state		 last;
	char			 last_reason[256];
	double			 since;
	double			 gone;		/* left the queue at */
	double			 ended;		/* qacct verdict at */
	struct vg_result	 verdict;	/* qacct's */
	unsigned long		 acct_q;	/* record waits for query nr */
};

struct ge {
	char			*vigil;
	char			*dir;		/* run_dir/gridengine */
	char			 manifest_sha256[65];
	char			 user[64];
	int			 max_aj;
	double			 grace;
	double			 stale;
	struct vg_cluster_pacer	 pacer;
	long long		 next_query;	/* mono ms */
	long long		 next_files;
	int			 seq;		/* scripts written */
	unsigned long		 nquery;	/* answered qstat calls */
	struct ge_att		**v;
	size_t			 n, cap;
	struct vg_sched_update	*out;
	size_t			 nout, outcap, nout_final;
	struct vg_sched_update	*ups;
	size_t			 upcap;
	struct vg_sched_jentry	*journal;
	size_t			 njournal;
};

/* Crash points for resume tests: VIGIL_GRIDENGINE_KILL_AT=qsub kills
 * vigil right after qsub took a chunk, before its job id reaches the
 * journal; =journal right after job ids reach the journal, before the
 * driver records them. */
static void
kill_point(const char *at)
{
	const char *v = getenv("VIGIL_GRIDENGINE_KILL_AT");

	if (v != NULL && strcmp(v, at) == 0)
		(void)raise(SIGKILL);
}

/* Queues an update for the next poll. */
static void
emit(struct ge *p, struct ge_att *t, enum vg_state st,
    const struct vg_result *r, const char *reason, int with_handle)
{
	struct vg_sched_update *u;

	p->out = vg_xgrow(p->out, &p->outcap, p->nout + 1, sizeof *p->out);
	u = &p->out[p->nout++];
	memset(u, 0, sizeof *u);
	u->a = t->a;
	u->state = st;
	if (r != NULL)
		u->result = *r;
	u->result.state = st;
	if (with_handle && t->job != 0)
		snprintf(u->handle, sizeof u->handle, "%lu.%ld", t->job,
		    t->task);
	snprintf(u->reason, sizeof u->reason, "%s", reason != NULL ? reason :
	    "");
	t->last = st;
	snprintf(t->last_reason, sizeof t->last_reason, "%s", u->reason);
	if (vg_state_terminal(st)) {
		t->done = 1;
		p->nout_final++;
	}
}

/* Runs a Grid Engine command; out may be NULL; e names the command.
 * One debug line per call (bench/gridengine-submit.sh counts them). */
static int
run(const char *const *argv, struct vg_buf *out, struct vg_err *e)
{
	int r = vg_cluster_cmd(argv, out, NULL, CMD_TIMEOUT, NULL, e);

	vg_debug("gridengine: %s %s: %s", argv[0], argv[1] != NULL ?
	    argv[1] : "", r == 0 ? "ok" : e->msg);
	return r;
}

/* ---- the journal, RUN_DIR/gridengine/jobs ---- */

/* Appends "INDEX ATTEMPT JOB.TASK" lines for a chunk and syncs them. */
static int
journal_add(struct ge *p, struct ge_att **v, size_t n, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		vg_buf_printf(&b, "%d %d %lu.%ld\n", v[i]->index,
		    v[i]->a->attempt, v[i]->job, v[i]->task);
	r = vg_sched_journal_append(p->dir, &b, e);
	vg_buf_release(&b);
	return r;
}

/*
 * Appends "intent NAME ATTEMPT 0 SPEC" before the chunk of script NAME
 * (its indexes idx, ascending: Grid Engine task k runs idx[k - 1]) goes
 * to qsub: a vigil killed before the job id reached the journal leaves
 * what the next one looks for (adopt_intents).  Indexes out of order
 * get no intent (the chunk would be submitted again).
 */
static int
journal_intent(struct ge *p, const char *name, int attempt, const int *idx,
    size_t n, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;
	int r;

	for (i = 1; i < n; i++)
		if (idx[i] <= idx[i - 1])
			return 0;
	vg_buf_printf(&b, "intent %s %d 0 ", name, attempt);
	vg_cluster_array_spec(idx, n, 0, &b);
	vg_buf_adds(&b, "\n");
	r = vg_sched_journal_append(p->dir, &b, e);
	vg_buf_release(&b);
	return r;
}

/* The latest journal entry of index's attempt; 1 when found. */
static int
journal_find(const struct ge *p, int index, int attempt, unsigned long *job,
    long *task)
{
	size_t i;
	int found = 0;

	for (i = 0; i < p->njournal; i++)
		if (p->journal[i].index == index &&
		    p->journal[i].attempt == attempt) {
			*job = p->journal[i].job;
			*task = p->journal[i].task;
			found = 1;
		}
	return found;
}

/*
 * Finds the job Grid Engine holds (pending or running) for the chunk
 * script path: `qstat -xml -j vigil-RUN_ID` lists every job of the run's name
 * with its script file.  *job 0 when there is none; a qstat that fails
 * otherwise is an error (a qmaster down must not make vigil submit a
 * chunk twice).
 */
static int
find_chunk_job(const char *run_id, const char *path, unsigned long *job,
    struct vg_err *e)
{
	char *name = vg_xasprintf(VG_GE_NAME_PREFIX "%s", run_id);
	const char *argv[] = { "qstat", "-xml", "-j", name, NULL };
	static const char num_tag[] = "<JB_job_number>";
	static const char file_tag[] = "<JB_script_file>";
	struct vg_buf out = VG_BUF_INIT;
	const char *s, *next, *f, *end;
	size_t plen = strlen(path);
	unsigned long n;
	int r;

	*job = 0;
	r = run(argv, &out, e);
	free(name);
	if (r != 0) {
		vg_buf_release(&out);
		if (strstr(e->msg, "do not exist") == NULL)
			return r;
		vg_err_init(e);
		return 0;
	}
	for (s = strstr(vg_buf_str(&out), num_tag); s != NULL && *job == 0;
	    s = next) {
		n = strtoul(s + sizeof num_tag - 1, NULL, 10);
		next = strstr(s + 1, num_tag);
		f = strstr(s, file_tag);
		if (f == NULL || (next != NULL && f > next))
			continue;
		f += sizeof file_tag - 1;
		end = strstr(f, "</JB_script_file>");
		if (end != NULL && (size_t)(end - f) == plen &&
		    memcmp(f, path, plen) == 0)
			*job = n;
	}
	vg_buf_release(&out);
	return 0;
}

struct adopt {
	const char			*dir;
	const char			*run_id;
	const struct vg_sched_jentry	*j;
	size_t				 nj;
	int				 seq;	/* the highest submit-N.sh */
	struct vg_buf			 b;
	struct vg_err			*e;
};

/* vg_sched_journal_each: journals the chunk of an intent line whose job
 * ids never reached the journal, when Grid Engine still holds its job. */
static int
adopt_line(const char *line, void *arg)
{
	struct adopt *ad = arg;
	struct vg_cluster_intent it;
	unsigned long job;
	char *script;
	size_t i;
	int r;

	if (!vg_cluster_intent_parse(line, &it)) {
		if (it.seq > ad->seq)
			ad->seq = it.seq;
		return 0;
	}
	if (it.seq > ad->seq)
		ad->seq = it.seq;
	for (i = 0; i < ad->nj; i++)
		if (ad->j[i].index == it.idx[0] &&
		    ad->j[i].attempt == it.attempt) {
			free(it.idx);
			return 0;
		}
	script = vg_path_join(ad->dir, it.name);
	r = find_chunk_job(ad->run_id, script, &job, ad->e);
	vg_debug("gridengine: %s was submitted without a journaled job id: "
	    "%s%lu", it.name, job != 0 ? "found job " : "not queued, ", job);
	free(script);
	for (i = 0; r == 0 && job != 0 && i < it.nidx; i++)
		vg_buf_printf(&ad->b, "%d %d %lu.%zu\n", it.idx[i], it.attempt,
		    job, i + 1);
	free(it.idx);
	return r;
}

/*
 * Takes back the chunks an earlier vigil of run_id gave qsub without
 * journaling their job ids (intent lines with no job lines in *j):
 * still held by Grid Engine, their tasks are journaled now and *j, *nj
 * loaded again, so they are re-attached (or cancelled) like any other;
 * not held, they go again (a job that already ended as well: its tasks
 * run twice, which the journal cannot tell).  *seq (may be NULL) gets
 * the highest script number seen.  Asks Grid Engine only when such a
 * chunk exists.
 */
static int
adopt_intents(const char *dir, const char *run_id,
    struct vg_sched_jentry **j, size_t *nj, int *seq, struct vg_err *e)
{
	struct adopt ad = { dir, run_id, *j, *nj, 0, VG_BUF_INIT, e };
	int r;

	r = vg_sched_journal_each(dir, adopt_line, &ad, e);
	if (r == 0 && ad.b.len > 0 && (r = vg_sched_journal_append(dir,
	    &ad.b, e)) == 0) {
		free(*j);
		r = vg_sched_journal_load(dir, '.', j, nj, e);
	}
	if (seq != NULL && ad.seq > *seq)
		*seq = ad.seq;
	vg_buf_release(&ad.b);
	return r;
}

/* ---- open, submit, flush ---- */

/* The vigil binary jobs run: $VIGIL_GRIDENGINE_VIGIL when absolute, else
 * this one.  Caller frees; NULL with errno. */
static char *
vigil_path(void)
{
	const char *env = getenv("VIGIL_GRIDENGINE_VIGIL");

	return env != NULL && *env == '/' ? vg_xstrdup(env) :
	    realpath("/proc/self/exe", NULL);
}

/* A positive number from the environment, or def. */
static double
env_num(const char *name, double def)
{
	const char *v = getenv(name);
	char *end;
	double d;

	if (v == NULL || *v == '\0')
		return def;
	d = strtod(v, &end);
	return *end == '\0' && d > 0 ? d : def;
}

static void	ge_close(struct vg_sched *);

/* Opens the scheduler for one run: the cell's max_aj_tasks, the journal. */
static int
ge_open(struct vg_sched *s, struct vg_err *e)
{
	static const char *const conf[] = { "qconf", "-sconf", NULL };
	const struct vg_ge_conf *c = vg_ge_of(s->m);
	struct vg_buf out = VG_BUF_INIT;
	struct passwd *pw;
	struct ge *p;
	double pmin, pmax;
	int r;

	p = vg_xcalloc(1, sizeof *p);
	s->priv = p;
	s->remote = 1;
	if ((p->vigil = vigil_path()) == NULL) {
		r = vg_err_errno(e, "finding the path of vigil itself");
		goto fail;
	}
	if ((r = vg_run_manifest_read(s->run_dir, NULL, NULL,
	    p->manifest_sha256, e)) != 0)
		goto fail;
	p->dir = vg_path_join(s->run_dir, "gridengine");
	if ((r = vg_mkdir_p(p->dir, 0700, e)) != 0 ||
	    (r = vg_sched_journal_load(p->dir, '.', &p->journal,
	    &p->njournal, e)) != 0 || (r = adopt_intents(p->dir, s->run_id, &p->journal, &p->njournal,
	    &p->seq, e)) != 0)
		goto fail;
	if ((r = run(conf, &out, e)) != 0 ||
	    (r = vg_ge_parse_conf(vg_buf_str(&out), &p->max_aj, e)) != 0) {
		vg_err_prefix(e, "gridengine: cannot read the cell's "
		    "configuration: ");
		goto fail;
	}
	if ((pw = getpwuid(geteuid())) == NULL) {
		r = vg_err_set(e, VG_EINVAL, "gridengine: no user name for "
		    "uid %ld", (long)geteuid());
		goto fail;
	}
	snprintf(p->user, sizeof p->user, "%s", pw->pw_name);
	p->grace = env_num("VIGIL_GRIDENGINE_GRACE", GRACE_DEFAULT);
	p->stale = env_num("VIGIL_GRIDENGINE_HEARTBEAT_STALE",
	    HEARTBEAT_STALE);
	pmin = c->poll_min > 0 ? c->poll_min : 2;
	pmax = c->poll_max > 0 ? c->poll_max : 60;
	vg_cluster_pacer_init(&p->pacer, pmin, pmax);
	p->next_query = vg_mono_ms() + (long long)(pmin * 1000);
	vg_debug("gridengine: max_aj_tasks %d, user %s", p->max_aj, p->user);
	vg_buf_release(&out);
	return 0;
fail:
	vg_buf_release(&out);
	ge_close(s);
	return r;
}

/* Adds a to the scheduler's list. */
static struct ge_att *
att_add(struct ge *p, struct vg_attempt *a)
{
	struct ge_att *t = vg_xcalloc(1, sizeof *t);

	t->a = a;
	t->index = a->task->index;
	t->last = VG_ST__COUNT;
	t->since = vg_now();
	p->v = vg_xgrow(p->v, &p->cap, p->n + 1, sizeof *p->v);
	p->v[p->n++] = t;
	return t;
}

/* Collects a; the journal may show it was already submitted. */
static int
ge_submit(struct vg_sched *s, struct vg_attempt *a, struct vg_err *e)
{
	struct ge *p = s->priv;
	struct ge_att *t;

	if (a->task_dir == NULL || a->task_dir[0] != '/')
		return vg_err_set(e, VG_EINVAL, "gridengine: task %d has no "
		    "absolute task directory", a->task->index);
	t = att_add(p, a);
	if (journal_find(p, t->index, a->attempt, &t->job, &t->task)) {
		emit(p, t, VG_ST_QUEUED, NULL, "re-attached after restart", 1);
		return 0;
	}
	if (a->attempt > 1) {
		vg_cluster_set_aside(a->task_dir, "result.json", a->attempt - 1);
		vg_cluster_set_aside(a->task_dir, "heartbeat", a->attempt - 1);
	}
	return 0;
}

/* The time limit of an attempt: resources.time, else the timeout plus a
 * minute (task-exec enforces the timeout itself and writes TIMEOUT). */
static uint64_t
time_of(const struct vg_attempt *a)
{
	if (a->res.time > 0)
		return a->res.time;
	return a->timeout > 0 ? (uint64_t)a->timeout + 60 : 0;
}

/* Orders unsent attempts by request, then by index. */
static char *
group_key(const struct ge_att *t)
{
	const struct vg_resources *r = &t->a->res;

	return vg_xasprintf("%d|%d|%llu|%d|%llu|%s|%s|%s", t->a->attempt,
	    r->cpus, (unsigned long long)r->memory, r->gpus,
	    (unsigned long long)time_of(t->a), r->partition != NULL ?
	    r->partition : "", r->account != NULL ? r->account : "",
	    r->qos != NULL ? r->qos : "");
}

/* Sleeps ms milliseconds, jittered by up to a quarter. */
static void
backoff(int ms)
{
	struct timespec ts;

	ms += (int)(vg_mono_ms() % (ms / 4 + 1));
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Writes the script of one chunk and submits it. */
static int
submit_chunk(struct vg_sched *s, struct ge *p, struct ge_att **v, size_t n,
    struct vg_err *e)
{
	struct vg_buf script = VG_BUF_INIT, out = VG_BUF_INIT;
	struct vg_strv argv = VG_STRV_INIT;
	const struct vg_attempt *a = v[0]->a;
	struct vg_ge_job j;
	char *path = NULL;
	int *idx, r, tries, delay = 500;
	unsigned long job = 0;
	size_t i;

	idx = vg_xcalloc(n, sizeof *idx);
	for (i = 0; i < n; i++)
		idx[i] = v[i]->index;
	memset(&j, 0, sizeof j);
	j.name = s->run_id;
	j.run_dir = s->run_dir;
	j.vigil = p->vigil;
	j.manifest_sha256 = p->manifest_sha256;
	j.attempt = a->attempt;
	j.index = idx;
	j.n = n;
	j.cpus = a->res.cpus;
	j.memory = a->res.memory;
	j.gpus = a->res.gpus;
	j.time = time_of(a);
	j.queue = a->res.partition;
	j.account = a->res.account;
	j.project = a->res.qos;
	j.conf = vg_ge_of(s->m);
	if ((r = vg_ge_script(&j, &script, e)) != 0)
		goto out;
	path = vg_xasprintf("%s/submit-%d.sh", p->dir, ++p->seq);
	if ((r = vg_write_file_atomic(path, script.data, script.len, 0700,
	    e)) != 0 || (r = vg_ge_qsub_argv(&j, path, p->dir, &argv, e)) != 0 ||
	    (r = journal_intent(p, strrchr(path, '/') + 1, a->attempt, idx, n,
	    e)) != 0)
		goto out;
	for (tries = 1;; tries++) {
		vg_buf_reset(&out);
		r = run((const char *const *)argv.v, &out, e);
		if (r == 0 || r != VG_EAGAIN || tries == SUBMIT_TRIES)
			break;
		backoff(delay);
		delay *= 2;
	}
	if (r != 0 || (r = vg_ge_parse_jobid(vg_buf_str(&out), &job, e)) != 0)
		goto out;
	kill_point("qsub");
	for (i = 0; i < n; i++) {
		v[i]->job = job;
		v[i]->task = (long)i + 1;
		v[i]->since = vg_now();
	}
	if ((r = journal_add(p, v, n, e)) != 0)
		goto out;
	kill_point("journal");
	for (i = 0; i < n; i++)
		emit(p, v[i], VG_ST_QUEUED, NULL, NULL, 1);
out:
	free(idx);
	free(path);
	vg_strv_release(&argv);
	vg_buf_release(&script);
	vg_buf_release(&out);
	return r;
}

/* qsort: by group key, then index. */
static int
cmp_key(const void *a, const void *b)
{
	const struct { char *key; struct ge_att *t; } *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return (x->t->index > y->t->index) - (x->t->index < y->t->index);
}

/* Sends what submit collected as array jobs. */
static int
ge_flush(struct vg_sched *s, struct vg_err *e)
{
	struct ge *p = s->priv;
	struct { char *key; struct ge_att *t; } *g;
	struct ge_att **chunk;
	struct vg_result rr;
	size_t i, j, k, n = 0, ng = 0;

	for (i = 0; i < p->n; i++)
		if (p->v[i]->job == 0 && !p->v[i]->done)
			n++;
	if (n == 0)
		return 0;
	g = vg_xcalloc(n, sizeof *g);
	for (i = 0; i < p->n; i++)
		if (p->v[i]->job == 0 && !p->v[i]->done) {
			g[ng].t = p->v[i];
			g[ng++].key = group_key(p->v[i]);
		}
	qsort(g, ng, sizeof *g, cmp_key);
	chunk = vg_xcalloc(ng, sizeof *chunk);
	for (i = 0; i < ng; i = j) {
		k = 0;
		for (j = i; j < ng && strcmp(g[j].key, g[i].key) == 0 &&
		    k < (size_t)p->max_aj; j++)
			chunk[k++] = g[j].t;
		if (submit_chunk(s, p, chunk, k, e) == 0)
			continue;
		/* These attempts end with the error text; the driver's
		 * retry policy decides what comes next. */
		memset(&rr, 0, sizeof rr);
		rr.exit_code = -1;
		snprintf(rr.reason, sizeof rr.reason, "%.*s",
		    (int)sizeof rr.reason - 1, e->msg);
		while (k > 0)
			emit(p, chunk[--k], VG_ST_BACKEND_ERROR, &rr, e->msg,
			    0);
		vg_err_init(e);
	}
	for (i = 0; i < ng; i++)
		free(g[i].key);
	free(g);
	free(chunk);
	p->pacer.cur = p->pacer.min;
	p->next_query = vg_mono_ms() + (long long)(p->pacer.min * 1000);
	return 0;
}

/* ---- tracking ---- */

/* Age in seconds of dir/name's mtime, or -1 when it does not exist. */
static double
file_age(const char *dir, const char *name)
{
	char *path = vg_path_join(dir, name);
	struct stat st;
	double age = -1;

	if (stat(path, &st) == 0)
		age = vg_now() - ((double)st.st_mtim.tv_sec +
		    st.st_mtim.tv_nsec / 1e9);
	free(path);
	return age;
}

/* Reports t from its result record when there is one; 1 if reported.
 * A task that left the queue waits one query for its accounting. */
static int
check_record(struct ge *p, struct ge_att *t)
{
	struct vg_result rec;
	struct vg_err re;

	vg_err_init(&re);
	if (vg_result_read(t->a->task_dir, &rec, &re) != 0 ||
	    !vg_state_terminal(rec.state))
		return 0;
	if (t->ended == 0 && t->acct_q == 0) {
		t->acct_q = p->nquery + 1;
		p->next_query = vg_mono_ms();
	}
	if (t->ended == 0 && p->nquery < t->acct_q)
		return 0;
	if (t->ended > 0) {
		vg_cluster_merge_usage(&rec.usage, &t->verdict.usage);
		/* A kill the task could not report: Grid Engine's word. */
		if (rec.signal != 0 && (t->verdict.state == VG_ST_TIMEOUT ||
		    t->verdict.state == VG_ST_OOM))
			vg_cluster_merge(&rec, &t->verdict);
	}
	emit(p, t, rec.state, &rec, rec.reason, 0);
	return 1;
}

/* Reports t from qacct's verdict once the window for a record passed;
 * 1 when reported. */
static int
settle(struct ge *p, struct ge_att *t, double now)
{
	struct vg_result r = t->verdict;
	double grace;
	size_t len;

	if (t->cancel)
		grace = 0;
	else if (r.state == VG_ST_SUCCEEDED || r.state == VG_ST_FAILED)
		grace = p->grace;
	else
		grace = KILLED_GRACE;
	if (now - t->ended < grace)
		return 0;
	if (t->cancel) {
		r.state = VG_ST_CANCELLED;
		snprintf(r.reason, sizeof r.reason, "cancelled (qdel)");
	} else if (r.state == VG_ST_SUCCEEDED) {
		r.state = VG_ST_LOST;
		snprintf(r.reason, sizeof r.reason, "Grid Engine says job "
		    "%lu.%ld exited 0 but no result record appeared within "
		    "%.0fs", t->job, t->task, p->grace);
	} else if (r.state == VG_ST_FAILED) {
		len = strlen(r.reason);
		snprintf(r.reason + len, sizeof r.reason - len,
		    " (from Grid Engine; no result record)");
	}
	emit(p, t, r.state, &r, r.reason, 0);
	return 1;
}

/* Sets t's verdict from accounting. */
static void
verdict(struct ge_att *t, const struct vg_ge_acct *a, double now)
{
	vg_ge_acct_map(a, t->a->res.memory, &t->verdict);
	if (a->maxvmem > 0) {
		t->verdict.usage.max_rss = (long long)a->maxvmem;
		t->verdict.usage.known |= VG_USAGE_RSS;
	}
	t->verdict.started = now - a->wallclock;
	t->verdict.ended = now;
	t->ended = now;
}

/* Asks qacct about every job with tasks that left the queue and need
 * it (no record yet, or a record waiting for its accounting). */
static void
account(struct ge *p, double now)
{
	struct vg_ge_accts acc = { NULL, 0, 0 };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	char jobs[32];
	size_t i, k, m;
	unsigned long job;

	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (t->done || !t->left || t->ended > 0)
			continue;
		job = t->job;
		/* once per job and poll: skip jobs an earlier t had */
		for (k = 0; k < i; k++)
			if (p->v[k]->job == job && !p->v[k]->done &&
			    p->v[k]->left && p->v[k]->ended == 0)
				break;
		if (k < i)
			continue;
		snprintf(jobs, sizeof jobs, "%lu", job);
		{
			const char *argv[] = { "qacct", "-j", jobs, NULL };

			vg_err_init(&e);
			vg_buf_reset(&out);
			acc.n = 0;
			/* No record yet is news too: not flushed yet. */
			if (run(argv, &out, &e) != 0 &&
			    strstr(e.msg, "not found") == NULL)
				continue;
			if (vg_ge_parse_qacct(vg_buf_str(&out), &acc,
			    &e) != 0)
				continue;
		}
		for (k = i; k < p->n; k++) {
			struct ge_att *u = p->v[k];

			if (u->job != job || u->done || !u->left ||
			    u->ended > 0)
				continue;
			for (m = 0; m < acc.n; m++)
				if (acc.v[m].job == job && (acc.v[m].task ==
				    u->task || (acc.v[m].task == 0 &&
				    u->task == 1)))
					verdict(u, &acc.v[m], now);
		}
	}
	vg_ge_accts_release(&acc);
	vg_buf_release(&out);
}

/* Applies one qstat answer; returns whether anything changed. */
static int
apply_rows(struct ge *p, const struct vg_ge_rows *rows)
{
	const struct vg_ge_row *row;
	struct vg_result r;
	enum vg_state st;
	double now = vg_now(), hb;
	size_t i, before = p->nout;
	char why[256];

	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (t->done || t->job == 0)
			continue;
		row = vg_ge_rows_find(rows, t->job, t->task);
		if (row != NULL) {
			t->left = 0;
			t->gone = 0;
			memset(&r, 0, sizeof r);
			st = vg_ge_state_map(row->state, why, sizeof why);
			if (st != t->last || strcmp(why, t->last_reason) != 0)
				emit(p, t, st, &r, why, 0);
			continue;
		}
		if (!t->left) {
			t->left = 1;
			t->gone = now;
		}
	}
	account(p, now);
	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (t->done || !t->left)
			continue;
		if (check_record(p, t))
			continue;
		if (t->ended > 0) {
			(void)settle(p, t, now);
			continue;
		}
		/* Left the queue, no accounting: a pending task qdel took,
		 * accounting not flushed yet, or lost. */
		if (t->cancel_sent) {
			memset(&t->verdict, 0, sizeof t->verdict);
			t->verdict.exit_code = -1;
			t->ended = now;
			(void)settle(p, t, now);
			continue;
		}
		hb = file_age(t->a->task_dir, "heartbeat");
		if (now - t->gone < p->grace || (hb >= 0 && hb < p->stale))
			continue;
		memset(&r, 0, sizeof r);
		r.exit_code = -1;
		snprintf(why, sizeof why, "job %lu.%ld left Grid Engine's queue "
		    "with no accounting record and no result record after "
		    "%.0fs, %s", t->job, t->task, now - t->gone, hb < 0 ?
		    "no heartbeat" : "heartbeat stopped");
		snprintf(r.reason, sizeof r.reason, "%s", why);
		emit(p, t, VG_ST_LOST, &r, why, 0);
	}
	return p->nout > before;
}

/* One qstat -xml for every job of the run. */
static void
query(struct ge *p)
{
	const char *argv[] = { "qstat", "-xml", "-u", p->user, NULL };
	struct vg_ge_rows rows = { NULL, 0, 0 };
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	size_t i;
	int changed;

	for (i = 0; i < p->n; i++)
		if (!p->v[i]->done && p->v[i]->job != 0)
			break;
	if (i == p->n)
		return;
	vg_err_init(&e);
	if (run(argv, &out, &e) != 0 || vg_ge_parse_qstat(out.data, out.len,
	    &rows, &e) != 0) {
		/* A failed query is no news: nothing changes state. */
		vg_debug("gridengine: query failed: %s", e.msg);
		p->next_query = vg_mono_ms() +
		    (long long)(vg_cluster_pacer_next(&p->pacer, 0) * 1000);
		vg_buf_release(&out);
		vg_ge_rows_release(&rows);
		return;
	}
	p->nquery++;
	changed = apply_rows(p, &rows);
	p->next_query = vg_mono_ms() +
	    (long long)(vg_cluster_pacer_next(&p->pacer, changed) * 1000);
	vg_buf_release(&out);
	vg_ge_rows_release(&rows);
}

/* qsort: longs ascending. */
static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* qdel's of one job: the whole job when all is true, else one call per
 * range of tasks in v (sorted in place). */
static int
qdel_tasks(unsigned long job, long *v, size_t n, int all, size_t *calls,
    struct vg_err *e)
{
	char jobs[32], range[64];
	const char *argv[] = { "qdel", jobs, "-t", range, NULL };
	size_t i, k;
	int r, rc = 0;

	snprintf(jobs, sizeof jobs, "%lu", job);
	if (all) {
		argv[2] = NULL;
		(*calls)++;
		return run(argv, NULL, e);
	}
	qsort(v, n, sizeof *v, cmp_long);
	for (i = 0; i < n; i = k) {
		for (k = i + 1; k < n && v[k] <= v[k - 1] + 1; k++)
			;
		snprintf(range, sizeof range, "%ld-%ld", v[i], v[k - 1]);
		(*calls)++;
		if ((r = run(argv, NULL, e)) != 0 && rc == 0)
			rc = r;
	}
	return rc;
}

/* Sends the pending cancel requests, one job at a time. */
static void
send_cancels(struct ge *p)
{
	struct vg_err e;
	size_t i, j, k, live, calls = 0;
	long *v;

	v = vg_xcalloc(p->n + 1, sizeof *v);
	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (!t->cancel || t->cancel_sent || t->done || t->job == 0)
			continue;
		for (j = k = live = 0; j < p->n; j++) {
			struct ge_att *u = p->v[j];

			if (u->job != t->job || u->done)
				continue;
			live++;
			if (u->cancel && !u->cancel_sent) {
				v[k++] = u->task;
				u->cancel_sent = 1;
			}
		}
		vg_err_init(&e);
		if (qdel_tasks(t->job, v, k, k == live, &calls, &e) != 0)
			vg_debug("gridengine: qdel %lu: %s", t->job, e.msg);
	}
	free(v);
}

/* Checks result records of tasks that left the queue; no Grid Engine
 * call. */
static void
check_files(struct ge *p)
{
	double now = vg_now();
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (t->done || t->job == 0)
			continue;
		if (!check_record(p, t) && t->ended > 0)
			(void)settle(p, t, now);
	}
}

/* Hands out queued updates; they stay valid until the next poll. */
static void
hand_out(struct ge *p, struct vg_sched_update **ups, size_t *n)
{
	struct vg_sched_update *tmp = p->ups;
	size_t cap = p->upcap;

	p->ups = p->out;
	p->upcap = p->outcap;
	p->out = tmp;
	p->outcap = cap;
	*ups = p->ups;
	*n = p->nout;
	p->nout = 0;
	p->nout_final = 0;
}

/* Waits for changes, at most timeout_ms or until wake_fd is readable. */
static int
ge_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
    struct vg_sched_update **ups, size_t *n, struct vg_err *e)
{
	struct ge *p = s->priv;
	long long now, deadline, until;
	struct pollfd pfd;
	size_t i, k;

	(void)e;
	*ups = NULL;
	*n = 0;
	for (i = k = 0; i < p->n; i++) {
		if (p->v[i]->done)
			free(p->v[i]);
		else
			p->v[k++] = p->v[i];
	}
	p->n = k;
	send_cancels(p);
	deadline = vg_mono_ms() + (timeout_ms < 0 ? 1LL << 40 : timeout_ms);
	for (;;) {
		now = vg_mono_ms();
		if (p->nout == 0 && now >= p->next_files) {
			check_files(p);
			p->next_files = now + FILE_CHECK;
		}
		if (p->nout == 0 && now >= p->next_query)
			query(p);
		if (p->nout > 0)
			break;
		now = vg_mono_ms();
		if (now >= deadline)
			break;
		until = p->next_query < p->next_files ? p->next_query :
		    p->next_files;
		if (until > deadline)
			until = deadline;
		pfd.fd = wake_fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, wake_fd >= 0 ? 1 : 0,
		    until > now ? (int)(until - now) : 0) > 0)
			break;
	}
	hand_out(p, ups, n);
	return 0;
}

/* Asks for a to be cancelled; the qdel goes out with the next poll. */
static int
ge_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
    struct vg_err *e)
{
	struct ge *p = s->priv;
	struct vg_result r;
	size_t i;

	(void)force;
	(void)e;
	for (i = 0; i < p->n; i++) {
		struct ge_att *t = p->v[i];

		if (t->a != a || t->done)
			continue;
		if (t->job == 0) {
			memset(&r, 0, sizeof r);
			r.exit_code = -1;
			emit(p, t, VG_ST_CANCELLED, &r, "cancelled before "
			    "submission", 0);
			return 0;
		}
		t->cancel = 1;
		p->pacer.cur = p->pacer.min;
		p->next_query = vg_mono_ms() + 1000;
	}
	return 0;
}

/* Takes back an attempt of a dead vigil by "JOB.TASK", or by the
 * journal when handle is empty. */
static int
ge_reattach(struct vg_sched *s, struct vg_attempt *a, const char *handle,
    struct vg_err *e)
{
	struct ge *p = s->priv;
	struct ge_att *t;
	unsigned long job;
	long task;
	char c;

	if (handle == NULL || *handle == '\0') {
		if (!journal_find(p, a->task->index, a->attempt, &job, &task))
			return vg_err_set(e, VG_ENOENT, "gridengine: task %d "
			    "attempt %d is not in the job journal",
			    a->task->index, a->attempt);
	} else if (sscanf(handle, "%lu.%ld%c", &job, &task, &c) != 2 ||
	    job == 0 || task <= 0)
		return vg_err_set(e, VG_EINVAL, "gridengine: bad job handle "
		    "'%s' (expected JOB.TASK)", handle);
	t = att_add(p, a);
	t->job = job;
	t->task = task;
	if (handle == NULL || *handle == '\0')
		emit(p, t, VG_ST_QUEUED, NULL, "re-attached after restart", 1);
	p->pacer.cur = p->pacer.min;
	p->next_query = vg_mono_ms();
	p->next_files = vg_mono_ms();
	return 0;
}

/* Attempts handed over whose terminal update was not handed out yet. */
static size_t
ge_active(struct vg_sched *s)
{
	struct ge *p = s->priv;
	size_t i, n = 0;

	if (p == NULL)
		return 0;
	for (i = 0; i < p->n; i++)
		if (!p->v[i]->done)
			n++;
	return n + p->nout_final;
}

/* Frees everything; jobs keep running (resume re-attaches). */
static void
ge_close(struct vg_sched *s)
{
	struct ge *p = s->priv;
	size_t i;

	if (p == NULL)
		return;
	send_cancels(p);
	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	free(p->out);
	free(p->ups);
	free(p->vigil);
	free(p->dir);
	free(p->journal);
	free(p);
	s->priv = NULL;
}

/* qsort: journal entries by job, then task. */
static int
cmp_jentry(const void *a, const void *b)
{
	const struct vg_sched_jentry *x = a, *y = b;

	if (x->job != y->job)
		return (x->job > y->job) - (x->job < y->job);
	return (x->task > y->task) - (x->task < y->task);
}

/*
 * Cancels the Grid Engine tasks of the unfinished tasks v of a run whose
 * vigil is gone: the handle each holds and every journal entry of its
 * current or a later attempt (submitted, maybe not recorded); for the
 * whole run every job of the journal goes whole.  One qdel per job, or
 * per range of its tasks.
 */
static int
ge_cancel_orphans(const char *run_id, const char *run_dir,
    const struct vg_sched_orphan *v, size_t n, int whole,
    struct vg_buf *said, struct vg_err *e)
{
	struct vg_sched_jentry *j = NULL, *el = NULL, x;
	char *dir = vg_path_join(run_dir, "gridengine");
	size_t nj = 0, ne = 0, cap = 0, calls = 0, ntask = 0, i, k, m;
	long *tasks = NULL;
	int rc, r;
	char c;

	if ((rc = vg_sched_journal_load(dir, '.', &j, &nj, e)) != 0 ||
	    (rc = adopt_intents(dir, run_id, &j, &nj, NULL, e)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		memset(&x, 0, sizeof x);
		if (v[i].handle != NULL && sscanf(v[i].handle, "%lu.%ld%c",
		    &x.job, &x.task, &c) == 2) {
			el = vg_xgrow(el, &cap, ne + 1, sizeof *el);
			el[ne++] = x;
		}
		for (k = 0; k < nj; k++)
			if (j[k].index == v[i].index &&
			    j[k].attempt >= v[i].attempt) {
				el = vg_xgrow(el, &cap, ne + 1, sizeof *el);
				el[ne++] = j[k];
			}
	}
	if (ne > 1)
		qsort(el, ne, sizeof *el, cmp_jentry);
	tasks = vg_xcalloc(ne + 1, sizeof *tasks);
	for (i = 0; i < ne; i = k) {
		for (k = i, m = 0; k < ne && el[k].job == el[i].job; k++)
			if (k == i || el[k].task != el[k - 1].task)
				tasks[m++] = el[k].task;
		ntask += m;
		vg_err_init(e);
		/* A job that already left the queue is no failure. */
		if ((r = qdel_tasks(el[i].job, tasks, m, whole, &calls, e)) !=
		    0 && strstr(e->msg, "does not exist") == NULL) {
			rc = r;
			goto out;
		}
	}
	vg_err_init(e);
	vg_buf_printf(said, "%zu Grid Engine task(s) cancelled, %zu qdel "
	    "call(s)", ntask, calls);
out:
	if (rc != 0)
		vg_err_prefix(e, "cannot cancel the run's Grid Engine jobs "
		    "(nothing recorded): ");
	free(tasks);
	free(el);
	free(j);
	free(dir);
	return rc;
}

/* plugin op host_check: qsub and qstat are in $PATH. */
static void
ge_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	static const char *const cmds[] = { "qsub", "qstat", "qacct", NULL };
	const char *path = getenv("PATH");
	char *p;
	size_t i;

	(void)m;
	for (i = 0; cmds[i] != NULL; i++) {
		if ((p = vg_which(cmds[i])) != NULL) {
			free(p);
			continue;
		}
		vg_strv_pushf(why, "gridengine: '%s' is not in $PATH (%s): run "
		    "vigil on a submit host of the cell with its settings "
		    "sourced ($SGE_ROOT/$SGE_CELL/common/settings.sh)",
		    cmds[i], path != NULL ? path : "");
	}
}

/* scheduler op: probe; the cell's variables, for vigil doctor. */
static void
ge_probe(struct vg_buf *out)
{
	const char *root = getenv("SGE_ROOT"), *cell = getenv("SGE_CELL");

	vg_buf_printf(out, "gridengine: SGE_ROOT %s, SGE_CELL %s%s\n",
	    root != NULL ? root : "(unset)", cell != NULL ? cell :
	    "(unset: default)", root == NULL ? " \u2014 source the cell's "
	    "settings.sh before vigil runs gridengine manifests" : "");
}

static const struct vg_msection *const ge_sections[] = {
	&vg_ge_msection, NULL
};

/* Grid Engine's variables of a job: which job and task, its slots and
 * hosts (a parallel environment's), the cell a command inside the job
 * may call qrsh -inherit or qstat in. */
static const char *const ge_task_env[] = {
	"JOB_ID", "JOB_NAME", "SGE_TASK_ID", "SGE_TASK_FIRST",
	"SGE_TASK_LAST", "SGE_TASK_STEPSIZE", "NSLOTS", "NHOSTS", "NQUEUES",
	"PE", "PE_HOSTFILE", "QUEUE", "RESTARTED", "SGE_ROOT",
	"SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT", "ARC",
	"SGE_JOB_SPOOL_DIR", "CUDA_VISIBLE_DEVICES",
	NULL
};

/* scheduler op allocation: a Grid Engine job's slots on this host
 * (NSLOTS; a parallel job's hosts are its qrsh launcher's to use).  Grid
 * Engine says nothing of memory or GPUs in the job's environment. */
static int
ge_allocation(struct vg_alloc *a)
{
	const char *s;

	if ((s = getenv("JOB_ID")) == NULL || *s == '\0' ||
	    getenv("SGE_ROOT") == NULL)
		return 0;
	if ((s = getenv("NSLOTS")) != NULL && atoi(s) > 0) {
		a->cpus = atoi(s);
		snprintf(a->cpus_from, sizeof(a->cpus_from), "%s", "NSLOTS");
	}
	return 1;
}

/* The resources rows a job of the cell asks for, besides cpus (slots),
 * memory, gpus and time: partition (-q), account (-A), qos (-P). */
static const char *const ge_rows[] = { "partition", "account", "qos",
    NULL };

/* plugin validate: no resources row is dropped silently. */
static int
ge_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	return vg_resources_refuse_rows(m, "gridengine", ge_rows, d);
}

const struct vg_scheduler_ops vg_scheduler_gridengine = {
	.caps = VG_SCAP_JOBS,
	.task_env = ge_task_env,
	.launcher = &vg_launcher_qrsh,
	.allocation = ge_allocation,
	.probe = ge_probe,
	.policy_progs = vg_gridengine_policy_progs,
	.p = {
		.kind = VG_PLUGIN_SCHEDULER,
		.name = "gridengine",
		.alias = "sge",
		.flags = VG_PLUGIN_ELSEWHERE,
		.help = "as array jobs on a Grid Engine cell (SGE, OGS, UGE)",
		.sections = ge_sections,
		.validate = ge_validate,
		.host_check = ge_host_check,
	},
	.open = ge_open,
	.submit = ge_submit,
	.flush = ge_flush,
	.poll = ge_poll,
	.cancel = ge_cancel,
	.reattach = ge_reattach,
	.active = ge_active,
	.close = ge_close,
	.cancel_orphans = ge_cancel_orphans,
};

/* ---- the gridengine: section ---- */

/* gridengine: polling bounds in order. */
static void
check_ge(const struct vg_section *s, const struct vg_ynode *n, void *base,
    struct vg_dctx *c)
{
	const struct vg_ge_conf *g = base;

	(void)s;
	if (g->poll_min > 0 && g->poll_max > 0 && g->poll_min > g->poll_max)
		vg_dctx_error(c, n, "'gridengine.poll_min' (%gs) is larger "
		    "than 'gridengine.poll_max' (%gs)", g->poll_min,
		    g->poll_max);
}

/* gridengine.options: each key on the allowlist, each value one word. */
static void
check_options(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	vg_schema_check_options(n, p, "gridengine.options",
	    vg_ge_allowed_options, vg_ge_option_check, c);
}

static const struct vg_section ge_section = {
	.name = "gridengine",
	.check = check_ge,
	.fields = (const struct vg_field[]){
		STR(vg_ge_conf, "pe", pe, "parallel environment for cpus > 1"),
		STR(vg_ge_conf, "gpu_complex", gpu_complex,
		    "consumable complex GPUs are asked by"),
		{ .key = "memory", .type = VG_F_STRV,
		  .off = OFF(vg_ge_conf, memory),
		  .check = vg_schema_check_printable,
		  .help = "complexes memory is asked by, per slot (h_vmem)" },
		DUR(vg_ge_conf, "poll_min", poll_min, NULL, 0, 3600,
		    "shortest poll interval"),
		DUR(vg_ge_conf, "poll_max", poll_max, NULL, 0, 3600,
		    "longest poll interval"),
		{ .key = "options", .type = VG_F_KVS,
		  .off = OFF(vg_ge_conf, options), .check = check_options,
		  .help = "further qsub options (an allowlist)" },
		{ .key = NULL },
	},
};

const struct vg_msection vg_ge_msection = {
	.key = "gridengine",
	.alias = "sge",
	.schema = &ge_section,
	.size = sizeof(struct vg_ge_conf),
	.help = "gridengine scheduler",
};
