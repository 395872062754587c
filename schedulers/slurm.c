/*
 * slurm.c - the slurm scheduler: attempts become elements of Slurm job
 * arrays, each running `vigil task-exec RUN_DIR INDEX` on a compute node,
 * which writes tasks/INDEX/result.json and refreshes tasks/INDEX/heartbeat.
 *
 *   submit    collects attempts (nothing is sent yet)
 *   flush     groups them by resource request, chunks each group at the
 *             cluster's MaxArraySize, writes one batch script per chunk
 *             (run_dir/slurm/submit-N.sh) and submits it, retrying
 *             transient errors with jittered backoff; every job id goes
 *             to the journal run_dir/slurm/jobs before it is reported
 *   poll      reads result records (ground truth), and when the adaptive
 *             interval and the shared token bucket allow, makes ONE
 *             query for every active job of the run (sacct with
 *             accounting, squeue otherwise)
 *   cancel    batches scancel calls: one call per poll for all requests
 *   reattach  takes a job id back ("1234_5"), or, with an empty handle,
 *             finds the attempt's job in the journal
 *
 * Truth and liveness.  A result record decides how a task ended; Slurm
 * decides only what the task could not say (TIMEOUT, OUT_OF_MEMORY,
 * NODE_FAIL, PREEMPTED, ... when the task died of them).  When Slurm says
 * an element ended and no record is there yet, vigil waits a grace window
 * for slow shared file systems.  A task is alive while Slurm knows its job
 * or its heartbeat is fresh; it is LOST only when Slurm no longer knows
 * the job, its heartbeat stopped and no record appeared within the grace
 * window.  A failed query changes nothing (a restarting slurmctld makes
 * no task fail); COMPLETED without a record is LOST, never SUCCEEDED.
 * With accounting, squeue stands in while sacct fails and has the last
 * word before a job sacct lacks is LOST.  With slurm.requeue, PREEMPTED
 * and NODE_FAIL are ends only when Slurm does not requeue the element.
 * Attempts may wait for other runs' jobs (--dependency, vg_sched.deps).
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
#include <time.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/fs.h"
#include "common/home.h"
#include "common/log.h"
#include "common/path.h"
#include "common/which.h"
#include "schedulers/scheduler.h"
#include "schedulers/launcher.h"
#include "schedulers/slurm.h"
#include "runner/manifest/schema-table.h"

#define SUBMIT_TRIES	6	/* 0.5 + 1 + 2 + 4 + 8 s of backoff */
#define GRACE_DEFAULT	60.0	/* seconds for a record to show up */
#define KILLED_GRACE	5.0	/* after TIMEOUT, CANCELLED, ... */
#define HEARTBEAT_STALE	90.0	/* task-exec refreshes every 10 s */
#define FILE_CHECK	1000	/* ms between record checks in grace */

/* One attempt handed to this scheduler. */
struct sl_att {
	struct vg_attempt	*a;
	int			 index;
	unsigned long		 job;		/* array job id; 0 = unsent */
	long			 task;		/* array index */
	int			 seen;		/* Slurm reported it once */
	int			 cancel;	/* scancel requested */
	int			 cancel_sent;
	int			 done;		/* terminal reported */
	enum vg_state		 last;		/* last state reported */
	char			 last_reason[256];
	double			 since;		/* submitted / reattached */
	double			 gone;		/* first time Slurm lacked it */
	double			 ended;		/* Slurm said terminal at */
	double			 held;		/* killed record kept since */
	struct vg_result	 slurm;		/* Slurm's terminal verdict */
	struct vg_usage		 usage;		/* Slurm's latest usage */
	int			 dep;		/* submitted with --dependency */
	double			 requeue_at;	/* Slurm said PREEMPTED or
						   NODE_FAIL of a --requeue
						   job at */
	int			 confirm;	/* sacct lacks it: squeue must
						   not know it either to be
						   LOST */
	unsigned long		 usage_q;	/* record waits for query nr */
	int			 packed;	/* one of a pack's tasks */
};

/* A packed attempt that ended unsuccessfully while its pack went on:
 * its retry may run in that pack (retries in place, slurm.h). */
struct sl_pend {
	int		 index;
	int		 attempt;
	unsigned long	 job;
	long		 task;
	char		*task_dir;
	int		 taken;		/* its next attempt was claimed */
};

/* Nodes a task must avoid after a NODE_FAIL. */
struct sl_excl {
	int	 index;
	char	*nodes;		/* "n1,n2" */
};

struct sl {
	const struct vg_slurm_iface	*iface;
	struct vg_slurm_conf_info	 ci;
	struct vg_slurm_bucket		 bucket;
	struct vg_cluster_pacer		 pacer;
	char				*vigil;
	char				*slurm_dir;	/* run_dir/slurm */
	char				 manifest_sha256[65];
	double				 grace;
	double				 stale;
	long long			 next_query;	/* mono ms */
	long long			 next_files;
	uint64_t			 max_time;
	int				 max_time_known;
	int				 seq;		/* scripts written */
	struct sl_att			**v;		/* every attempt */
	size_t				 n, cap;
	struct vg_sched_update		*out;		/* pending updates */
	size_t				 nout, outcap;
	size_t				 nout_final;	/* terminal ones */
	struct vg_sched_update		*ups;		/* last returned */
	size_t				 upcap;
	struct sl_excl			*excl;
	size_t				 nexcl, exclcap;
	struct sl_pend			*pend;
	size_t				 npend, pendcap;
	/* The journal as this vigil found it, sorted by index, attempt
	 * (what earlier vigils of the run submitted). */
	struct vg_sched_jentry		*journal;
	size_t				 njournal;
	char				 last_error[VG_ERR_MSG_MAX];
	/* With accounting: the next query asks squeue instead of sacct
	 * (sacct failed, or a job it lacks may still be queued); sacct is
	 * tried again from sacct_retry (mono ms) on. */
	int				 use_squeue;
	long long			 sacct_retry;
	int				 requeue;	/* slurm.requeue */
	int				 packing;	/* slurm.pack */
	unsigned long			 nquery;	/* answered queries */
};

/* Seconds before sacct is asked again after it failed. */
#define SACCT_RETRY	30

/*
 * Crash points for resume tests: VIGIL_SLURM_KILL_AT=submitted kills vigil
 * (SIGKILL) right after Slurm accepted a submission, before its job ids
 * reach the journal; =journal, right after they do, before the driver's
 * transaction commits; =committed, after the commit but before the job
 * ids are handed to the driver for the store.  All leave jobs in Slurm
 * whose ids the store lacks.
 */
static void
kill_point(const char *at)
{
	const char *v = getenv("VIGIL_SLURM_KILL_AT");

	if (v != NULL && strcmp(v, at) == 0)
		(void)raise(SIGKILL);
}

/* Reads a positive number from the environment, or def. */
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

/* Queues an update for the next poll. */
static void
emit(struct sl *p, struct sl_att *t, enum vg_state st,
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
		snprintf(u->handle, sizeof u->handle, "%lu_%ld", t->job,
		    t->task);
	if (reason != NULL)
		snprintf(u->reason, sizeof u->reason, "%s", reason);
	t->last = st;
	snprintf(t->last_reason, sizeof t->last_reason, "%s",
	    reason != NULL ? reason : "");
	if (vg_state_terminal(st)) {
		t->done = 1;
		p->nout_final++;
		/* Its pack may run the retry (in_place) while Slurm has
		 * not said the element ended. */
		if (t->packed && t->job != 0 && t->ended == 0 &&
		    st != VG_ST_SUCCEEDED && st != VG_ST_CANCELLED) {
			struct sl_pend *x;

			p->pend = vg_xgrow(p->pend, &p->pendcap, p->npend + 1,
			    sizeof *p->pend);
			x = &p->pend[p->npend++];
			x->index = t->index;
			x->attempt = t->a->attempt;
			x->job = t->job;
			x->task = t->task;
			x->task_dir = vg_xstrdup(t->a->task_dir);
			x->taken = 0;
		}
	}
}

/* Picks lib or cli as slurm.interface says, reading the cluster config. */
static int
choose_iface(struct sl *p, const char *want, struct vg_err *e)
{
	int r;

	if (want == NULL || *want == '\0')
		want = "auto";
	if (strcmp(want, "cli") == 0) {
		p->iface = &vg_slurm_cli;
		return vg_slurm_cli.config(&p->ci, e);
	}
	if (strcmp(want, "lib") != 0 && strcmp(want, "auto") != 0)
		return vg_err_set(e, VG_EINVAL, "slurm.interface: bad value "
		    "'%s' (valid: auto, lib, cli)", want);
#ifdef HAVE_LIBSLURM
	{
		struct vg_err le;
		const char *v = vg_slurm_lib_version();

		vg_err_init(&le);
		r = vg_slurm_lib.config(&p->ci, &le);
		/* The C API changes every major release: same "YY.MM"
		 * or the commands. */
		if (r == 0 && strncmp(p->ci.version, v, strlen(v)) == 0 &&
		    (p->ci.version[strlen(v)] == '.' ||
		    p->ci.version[strlen(v)] == '\0')) {
			p->iface = &vg_slurm_lib;
			return 0;
		}
		if (strcmp(want, "lib") == 0)
			return r != 0 ? vg_err_set(e, r, "%s", le.msg) :
			    vg_err_set(e, VG_EUNSUPPORTED, "slurm.interface: "
			    "lib: vigil was built against Slurm %s, the "
			    "cluster runs %s (use auto or cli)", v,
			    p->ci.version);
	}
#else
	if (strcmp(want, "lib") == 0)
		return vg_err_set(e, VG_EUNSUPPORTED, "slurm.interface: lib: "
		    "this vigil was built without libslurm (use auto or cli)");
#endif
	p->iface = &vg_slurm_cli;
	r = vg_slurm_cli.config(&p->ci, e);
	return r;
}

int
vg_slurm_journal_load(const char *run_dir, struct vg_sched_jentry **v,
    size_t *n, struct vg_err *e)
{
	char *dir = vg_path_join(run_dir, "slurm");
	int r;

	r = vg_sched_journal_load(dir, '_', v, n, e);
	free(dir);
	return r;
}

/* vg_sched_journal_each: counts intents until a whole job line of
 * their chunk follows. */
static int
unjournaled_line(const char *line, void *arg)
{
	char name[64], spec[1024];
	int *pending = arg, attempt, offset, i, at;
	unsigned long j;
	long tk;

	if (sscanf(line, "intent %63s %d %d %1023s", name, &attempt, &offset,
	    spec) == 4)
		(*pending)++;
	else if (sscanf(line, "%d %d %lu_%ld", &i, &at, &j, &tk) == 4 &&
	    *pending > 0 && line[strcspn(line, "\n")] == '\n')
		*pending = 0;
	return 0;
}

int
vg_slurm_journal_unjournaled(const char *run_dir)
{
	char *dir = vg_path_join(run_dir, "slurm");
	int pending = 0;

	/* An unreadable journal (a link planted there) shows nothing. */
	if (vg_sched_journal_each(dir, unjournaled_line, &pending, NULL) != 0)
		pending = 0;
	free(dir);
	return pending > 0;
}

/* qsort: journal entries by job, then array index. */
static int
cmp_jentry(const void *a, const void *b)
{
	const struct vg_sched_jentry *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

/* qsort/bsearch: journal entries by task index, then attempt. */
static int
cmp_jattempt(const void *a, const void *b)
{
	const struct vg_sched_jentry *x = a, *y = b;

	if (x->index != y->index)
		return (x->index > y->index) - (x->index < y->index);
	return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

/* Finds an attempt that an earlier vigil of this run submitted, in the
 * journal as it was when the scheduler opened. */
static int
journal_find(struct sl *p, int index, int attempt, unsigned long *job,
    long *task)
{
	struct vg_sched_jentry key, *hit;

	if (p->njournal == 0)
		return 0;
	key.index = index;
	key.attempt = attempt;
	hit = bsearch(&key, p->journal, p->njournal, sizeof *p->journal,
	    cmp_jattempt);
	if (hit == NULL)
		return 0;
	*job = hit->job;
	*task = hit->task;
	return 1;
}

int
vg_slurm_cancel_elements(struct vg_sched_jentry *v, size_t n, size_t *calls,
    struct vg_err *e)
{
	struct vg_buf spec = VG_BUF_INIT;
	struct vg_err ce;
	int *idx, r = 0;
	size_t i, j, k;

	*calls = 0;
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_jentry);
	idx = vg_xcalloc(n, sizeof *idx);
	for (i = 0; i < n; i = j) {
		for (j = i, k = 0; j < n && v[j].job == v[i].job; j++)
			if (k == 0 || idx[k - 1] != (int)v[j].task)
				idx[k++] = (int)v[j].task;
		vg_buf_reset(&spec);
		vg_buf_printf(&spec, "%lu_[", v[i].job);
		vg_cluster_array_spec(idx, k, 0, &spec);
		vg_buf_addc(&spec, ']');
		vg_err_init(&ce);
		(*calls)++;
		if (vg_slurm_cli.cancel(vg_buf_str(&spec), &ce) != 0 && r == 0)
			r = vg_err_set(e, ce.rc != 0 ? ce.rc : VG_EBACKEND,
			    "scancel %s: %s", vg_buf_str(&spec), ce.msg);
	}
	free(idx);
	vg_buf_release(&spec);
	return r;
}

static int	take_token(struct sl *, struct vg_err *);
static void	backoff(int);

/* Appends text to the journal and syncs it. */
static int
journal_append(struct sl *p, const struct vg_buf *b, struct vg_err *e)
{
	return vg_sched_journal_append(p->slurm_dir, b, e);
}

/* Appends "INDEX ATTEMPT JOB_TASK" lines for a chunk and syncs them. */
static int
journal_add(struct sl *p, struct sl_att **v, size_t n, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		vg_buf_printf(&b, "%d %d %lu_%ld\n", v[i]->index,
		    v[i]->a->attempt, v[i]->job, v[i]->task);
	r = journal_append(p, &b, e);
	vg_buf_release(&b);
	return r;
}

/*
 * Appends "intent NAME ATTEMPT OFFSET SPEC" before NAME is submitted: if
 * vigil dies between sbatch's answer and the job lines, the next vigil
 * knows the chunk may exist and looks for it (find_chunk_job).
 */
static int
journal_intent(struct sl *p, const char *name, int attempt, int offset,
    const char *spec, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	int r;

	vg_buf_printf(&b, "intent %s %d %d %s\n", name, attempt, offset, spec);
	r = journal_append(p, &b, e);
	vg_buf_release(&b);
	return r;
}

/*
 * Finds the array job submitted from script path: squeue's Command (the
 * job is pending or running, or ended less than MinJobAge ago), else
 * sacct's SubmitLine.  Sets *job, 0 when Slurm knows none.
 */
static int
find_chunk_job(struct vg_sched *s, struct sl *p, const char *path,
    unsigned long *job, struct vg_err *e)
{
	const char *sq[] = { "squeue", "-h", "--name", s->run_id, "-o",
	    "%F|%o", NULL };
	const char *sa[] = { "sacct", "-X", "-n", "-P", "--name", s->run_id,
	    "-S", "now-30days", "-o", "JobID,SubmitLine", NULL };
	struct vg_buf out = VG_BUF_INIT;
	char *line, *save = NULL, *bar;
	size_t plen = strlen(path), llen;
	int r, pass;

	*job = 0;
	for (pass = 0; pass < 2 && *job == 0; pass++) {
		if (pass == 1 && !p->ci.accounting)
			break;
		vg_buf_reset(&out);
		if ((r = take_token(p, e)) != 0 || (r = vg_slurm_run(pass == 0 ?
		    sq : sa, &out, NULL, 30000, e)) != 0) {
			vg_buf_release(&out);
			return r;
		}
		if (out.len == 0)
			continue;
		for (line = strtok_r(out.data, "\n", &save); line != NULL &&
		    *job == 0; line = strtok_r(NULL, "\n", &save)) {
			if ((bar = strchr(line, '|')) == NULL)
				continue;
			*bar++ = '\0';
			llen = strlen(bar);
			/* squeue: the path; sacct: "sbatch ... PATH". */
			if (llen < plen || strcmp(bar + llen - plen, path) != 0 ||
			    (llen > plen && bar[llen - plen - 1] != ' '))
				continue;
			*job = strtoul(line, NULL, 10);
		}
	}
	vg_buf_release(&out);
	return 0;
}

struct adopt {
	struct vg_sched		*s;
	struct sl		*p;
	struct vg_sched_jentry	*add;
	size_t			 nadd, cap;
	struct vg_buf		 b;
	struct vg_err		*e;
};

/* Adds the journal entry of index, attempt in element task of job. */
static void
adopt_add(struct adopt *ad, int index, int attempt, unsigned long job,
    long task)
{
	ad->add = vg_xgrow(ad->add, &ad->cap, ad->nadd + 1, sizeof *ad->add);
	ad->add[ad->nadd].index = index;
	ad->add[ad->nadd].attempt = attempt;
	ad->add[ad->nadd].job = job;
	ad->add[ad->nadd++].task = task;
	vg_buf_printf(&ad->b, "%d %d %lu_%ld\n", index, attempt, job, task);
}

/*
 * The intent of a pack (script name, with its pack file beside it):
 * when its tasks have no job line, its job is looked for as a chunk's,
 * and each task is journaled in the element the pack file gives it.
 * Returns 1 when name is a pack's (adopted or not), 0 when it is not, or
 * a negative vg_rc.
 */
static int
adopt_pack(struct adopt *ad, const char *name, int seq)
{
	struct sl *p = ad->p;
	struct vg_slurm_pack_entry *v = NULL;
	struct vg_buf text = VG_BUF_INIT;
	struct vg_sched_jentry key;
	struct vg_err pe;
	unsigned long job;
	char pack[64], *script;
	size_t n = 0, i;
	int r;

	snprintf(pack, sizeof pack, "submit-%d.pack", seq);
	vg_err_init(&pe);
	r = vg_beneath_read(p->slurm_dir, 0, pack, 64u << 20, &text, &pe);
	if (r == VG_ENOENT) {
		vg_buf_release(&text);
		return 0;
	}
	if (r != 0 || vg_slurm_pack_parse(vg_buf_str(&text), -1, &v, &n,
	    &pe) != 0) {
		vg_buf_release(&text);
		return vg_err_set(ad->e, VG_EBACKEND, "slurm: %s: %s "
		    "(cannot tell which tasks the pack runs)", pack, pe.msg);
	}
	vg_buf_release(&text);
	key.index = v[0].index;
	key.attempt = v[0].attempt;
	if (p->njournal > 0 && bsearch(&key, p->journal, p->njournal,
	    sizeof *p->journal, cmp_jattempt) != NULL) {
		free(v);
		return 1;
	}
	script = vg_path_join(p->slurm_dir, name);
	r = find_chunk_job(ad->s, p, script, &job, ad->e);
	vg_debug("slurm: pack %s was submitted without a journaled job id: "
	    "%s%lu", name, job != 0 ? "found job " : "not in Slurm, ", job);
	free(script);
	for (i = 0; r == 0 && job != 0 && i < n; i++)
		adopt_add(ad, v[i].index, v[i].attempt, job, v[i].element);
	free(v);
	return r != 0 ? r : 1;
}

/* vg_sched_journal_each: adopts one intent line's chunk. */
static int
adopt_line(const char *line, void *arg)
{
	struct adopt *ad = arg;
	struct sl *p = ad->p;
	struct vg_cluster_intent it;
	struct vg_sched_jentry key;
	unsigned long job;
	char *script;
	size_t i;
	int r;

	if (!vg_cluster_intent_parse(line, &it)) {
		/* A pack's intent has its indexes in its pack file. */
		if (it.seq > p->seq)
			p->seq = it.seq;
		if (it.seq > 0 && (r = adopt_pack(ad, it.name, it.seq)) != 0)
			return r < 0 ? r : 0;
		return 0;
	}
	if (it.seq > p->seq)
		p->seq = it.seq;
	if ((r = adopt_pack(ad, it.name, it.seq)) != 0) {
		free(it.idx);
		return r < 0 ? r : 0;
	}
	key.index = it.idx[0];
	key.attempt = it.attempt;
	if (p->njournal > 0 && bsearch(&key, p->journal, p->njournal,
	    sizeof *p->journal, cmp_jattempt) != NULL) {
		free(it.idx);
		return 0;
	}
	script = vg_path_join(p->slurm_dir, it.name);
	r = find_chunk_job(ad->s, p, script, &job, ad->e);
	vg_debug("slurm: %s was submitted without a journaled job id: %s%lu",
	    it.name, job != 0 ? "found job " : "not in Slurm, ", job);
	free(script);
	for (i = 0; r == 0 && job != 0 && i < it.nidx; i++)
		adopt_add(ad, it.idx[i], it.attempt, job, it.idx[i] -
		    it.offset);
	free(it.idx);
	return r;
}

/*
 * Takes back the chunks an earlier vigil of the run submitted without
 * journaling their job ids (intent lines with no job lines): found in
 * Slurm, their elements are journaled now and re-attached like any other;
 * not found, they were never submitted and go again.  Runs once, at open,
 * and asks Slurm only when such a chunk exists.
 */
static int
adopt_intents(struct vg_sched *s, struct sl *p, struct vg_err *e)
{
	struct adopt ad = { s, p, NULL, 0, 0, VG_BUF_INIT, e };
	size_t cap;
	int r;

	r = vg_sched_journal_each(p->slurm_dir, adopt_line, &ad, e);
	if (r == 0 && ad.nadd > 0 && (r = journal_append(p, &ad.b, e)) == 0) {
		cap = p->njournal;
		p->journal = vg_xgrow(p->journal, &cap, p->njournal + ad.nadd,
		    sizeof *p->journal);
		memcpy(p->journal + p->njournal, ad.add, ad.nadd *
		    sizeof *ad.add);
		p->njournal += ad.nadd;
		qsort(p->journal, p->njournal, sizeof *p->journal,
		    cmp_jattempt);
	}
	free(ad.add);
	vg_buf_release(&ad.b);
	return r;
}

/* The vigil binary Slurm jobs run: $VIGIL_SLURM_VIGIL when absolute, else
 * this one; NULL with errno when it cannot be found.  Caller frees. */
static char *
vigil_path(void)
{
	const char *env = getenv("VIGIL_SLURM_VIGIL");

	return env != NULL && *env == '/' ? vg_xstrdup(env) :
	    realpath("/proc/self/exe", NULL);
}

/* Opens the scheduler for one run: interface, cluster config, bucket. */
static int
slurm_open(struct vg_sched *s, struct vg_err *e)
{
	struct sl *p;
	char *bp;
	const char *env;
	double pmin, pmax;
	int r;

	p = vg_xcalloc(1, sizeof *p);
	s->priv = p;
	/* task-exec makes scratch on the compute node. */
	s->remote = 1;
	if ((r = choose_iface(p, vg_slurm_of(s->m)->interface, e)) != 0)
		goto fail;
	env = getenv("VIGIL_SLURM_BUCKET");
	bp = env != NULL && *env != '\0' ? vg_xstrdup(env) :
	    vg_slurm_bucket_path(e);
	if (bp == NULL) {
		r = e->rc;
		goto fail;
	}
	r = vg_slurm_bucket_init(&p->bucket, bp,
	    env_num("VIGIL_SLURM_RATE", 1), env_num("VIGIL_SLURM_BURST", 3),
	    e);
	free(bp);
	if (r != 0)
		goto fail;
	if ((p->vigil = vigil_path()) == NULL) {
		r = vg_err_errno(e, "finding the path of vigil itself");
		goto fail;
	}
	/* The jobs carry the digest of the manifest judged here: a node
	 * runs nothing else (vg_run_manifest_read, task-exec). */
	if ((r = vg_run_manifest_read(s->run_dir, NULL, NULL,
	    p->manifest_sha256, e)) != 0)
		goto fail;
	p->slurm_dir = vg_path_join(s->run_dir, "slurm");
	if ((r = vg_mkdir_p(p->slurm_dir, 0700, e)) != 0)
		goto fail;
	if ((r = vg_slurm_journal_load(s->run_dir, &p->journal, &p->njournal,
	    e)) != 0)
		goto fail;
	if (p->njournal > 1)
		qsort(p->journal, p->njournal, sizeof *p->journal,
		    cmp_jattempt);
	if ((r = adopt_intents(s, p, e)) != 0)
		goto fail;
	p->grace = env_num("VIGIL_SLURM_GRACE", GRACE_DEFAULT);
	p->requeue = vg_slurm_of(s->m)->requeue;
	p->packing = vg_slurm_pack_on(&vg_slurm_of(s->m)->pack);
	p->stale = env_num("VIGIL_SLURM_HEARTBEAT_STALE", HEARTBEAT_STALE);
	pmin = vg_slurm_of(s->m)->poll_min > 0 ? vg_slurm_of(s->m)->poll_min : 2;
	pmax = vg_slurm_of(s->m)->poll_max > 0 ? vg_slurm_of(s->m)->poll_max : 60;
	/* squeue forgets finished jobs after MinJobAge: look more often. */
	if (!p->ci.accounting && p->ci.min_job_age > 0 &&
	    pmax > p->ci.min_job_age / 2.0)
		pmax = p->ci.min_job_age / 2.0;
	vg_cluster_pacer_init(&p->pacer, pmin, pmax);
	p->next_query = vg_mono_ms() + (long long)(pmin * 1000);
	vg_debug("slurm: interface %s, Slurm %s, MaxArraySize %d, %s",
	    p->iface->name, p->ci.version, p->ci.max_array,
	    p->ci.accounting ? "sacct" : "squeue");
	return 0;
fail:
	vg_slurm_bucket_release(&p->bucket);
	free(p->journal);
	free(p->vigil);
	free(p->slurm_dir);
	free(p);
	s->priv = NULL;
	return r;
}

/* Adds t to the scheduler's list. */
static struct sl_att *
att_add(struct sl *p, struct vg_attempt *a)
{
	struct sl_att *t = vg_xcalloc(1, sizeof *t);

	t->a = a;
	t->index = a->task->index;
	t->task = -1;
	t->last = VG_ST__COUNT;
	t->since = vg_now();
	/* Every task of a packed run goes out in packs (re-attached ones
	 * included). */
	t->packed = p->packing;
	p->v = vg_xgrow(p->v, &p->cap, p->n + 1, sizeof *p->v);
	p->v[p->n++] = t;
	return t;
}


/* Sets aside what the previous attempt of a left in its directory. */
static void
set_aside_all(const struct vg_attempt *a)
{
	vg_cluster_set_aside(a->task_dir, "result.json", a->attempt - 1);
	vg_cluster_set_aside(a->task_dir, "heartbeat", a->attempt - 1);
	vg_cluster_set_aside(a->task_dir, "cancel", a->attempt - 1);
}

/*
 * A packed task's retry (t, attempt N > 1): claims attempt N for the
 * pack that ran N-1 when Slurm has not said that element ended, else for
 * a new pack (slurm.h, "Retries in place").  Claimed by the pack, the
 * attempt is attached to its element: no sbatch, a journal line so that
 * a resumed vigil finds it.  A claim found (pack-exec's "new", or this
 * run's "pack" before a crash) holds.
 */
static int
in_place(struct sl *p, struct sl_att *t, struct vg_err *e)
{
	const struct vg_attempt *a = t->a;
	struct vg_slurm_claim want, got;
	struct sl_pend *x = NULL;
	char why[128];
	size_t i;
	int r, tries;

	for (i = 0; i < p->npend; i++)
		if (p->pend[i].index == t->index &&
		    p->pend[i].attempt == a->attempt - 1)
			x = &p->pend[i];
	if ((r = vg_slurm_claim_read(a->task_dir, a->attempt, &got, e)) != 0)
		return r;
	if (got.who == VG_CLAIM_NONE) {
		set_aside_all(a);
		memset(&want, 0, sizeof want);
		want.who = x != NULL ? VG_CLAIM_PACK : VG_CLAIM_NEW;
		want.timeout = a->timeout > 0 ? a->timeout :
		    (double)a->res.time;
		want.memory = a->res.memory;
		/* A claim being written reads as none: ask again, briefly. */
		for (tries = 0; tries < 100; tries++) {
			if ((r = vg_slurm_claim_make(a->task_dir, a->attempt,
			    &want, &got, e)) < 0)
				return r;
			if (got.who != VG_CLAIM_NONE)
				break;
			backoff(10);
		}
		if (got.who == VG_CLAIM_NONE)
			return vg_err_set(e, VG_EBACKEND, "slurm: '%s/claim.%d' "
			    "stays empty", a->task_dir, a->attempt);
	}
	if (x != NULL)
		x->taken = 1;
	if (got.who != VG_CLAIM_PACK)
		return 0;
	if (x != NULL) {
		t->job = x->job;
		t->task = x->task;
	} else if (!journal_find(p, t->index, a->attempt - 1, &t->job,
	    &t->task))
		return vg_err_set(e, VG_EBACKEND, "slurm: task %d attempt %d "
		    "is claimed by its pack, whose job is not in the journal",
		    t->index, a->attempt);
	t->packed = 1;
	t->since = vg_now();
	if ((r = journal_add(p, &t, 1, e)) != 0)
		return r;
	snprintf(why, sizeof why, "retried in its pack (job %lu_%ld)",
	    t->job, t->task);
	emit(p, t, VG_ST_QUEUED, NULL, why, 1);
	return 0;
}

/* Collects a; the journal may show it was already submitted. */
static int
slurm_submit(struct vg_sched *s, struct vg_attempt *a, struct vg_err *e)
{
	struct sl *p = s->priv;
	struct sl_att *t;
	unsigned long job;
	long task;

	if (a->task_dir == NULL || a->task_dir[0] != '/')
		return vg_err_set(e, VG_EINVAL, "slurm: task %d has no "
		    "absolute task directory", a->task->index);
	t = att_add(p, a);
	if (journal_find(p, t->index, a->attempt, &job, &task)) {
		/* Submitted by a vigil that died before recording it. */
		t->job = job;
		t->task = task;
		emit(p, t, VG_ST_QUEUED, NULL, "re-attached after restart", 1);
		return 0;
	}
	if (p->packing && a->attempt > 1)
		return in_place(p, t, e);
	/* A first attempt has nothing to set aside (the journal says when
	 * an earlier vigil submitted it). */
	if (a->attempt > 1)
		set_aside_all(a);
	return 0;
}

/* Orders unsent attempts by request (every resources row: tasks of a
 * sweep may each ask their own), then by index. */
static char *
group_key(const struct sl *p, const struct sl_att *t)
{
	struct vg_buf b = VG_BUF_INIT;
	const char *excl = "";
	size_t i;

	for (i = 0; i < p->nexcl; i++)
		if (p->excl[i].index == t->index)
			excl = p->excl[i].nodes;
	vg_resources_key(&t->a->res, &b);
	vg_buf_printf(&b, "|%s|%d", excl, t->a->attempt);
	return vg_buf_detach(&b);
}

/* Sleeps ms milliseconds plus up to 50% jitter. */
static void
backoff(int ms)
{
	struct timespec ts;
	long long j = ms + (long long)(random() % (ms / 2 + 1));

	ts.tv_sec = j / 1000;
	ts.tv_nsec = (j % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Takes a bucket token, sleeping until one is due. */
static int
take_token(struct sl *p, struct vg_err *e)
{
	double wait;
	struct timespec ts;
	int r;

	for (;;) {
		if ((r = vg_slurm_bucket_take(&p->bucket,
		    vg_mono_ms() / 1000.0, &wait, e)) != 0)
			return r;
		if (wait <= 0)
			return 0;
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

/* Exclusions for task index (slurm.exclude plus failed nodes). */
static char *
exclude_for(const struct vg_sched *s, const struct sl *p, int index)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	for (i = 0; i < vg_slurm_of(s->m)->exclude.n; i++)
		vg_buf_printf(&b, "%s%s", b.len ? "," : "",
		    vg_slurm_of(s->m)->exclude.v[i]);
	for (i = 0; i < p->nexcl; i++)
		if (p->excl[i].index == index)
			vg_buf_printf(&b, "%s%s", b.len ? "," : "",
			    p->excl[i].nodes);
	return vg_buf_detach(&b);
}

/*
 * The --dependency value for what the driver says the run waits for:
 * "afterok:12:13,afterany:14", one array job id per array ("12_3" and
 * "12_4" make "12": Slurm then waits for every element); NULL when
 * nothing.  Caller frees.
 */
static char *
dependency_of(const struct vg_sched *s)
{
	static const char *const kind[] = { "afterok", "afterany",
	    "afternotok" };
	struct vg_buf b = VG_BUF_INIT, one = VG_BUF_INIT;
	unsigned long *jobs;
	size_t i, k, m, nj;

	for (i = 0; i < s->ndeps; i++) {
		const struct vg_sched_dep *d = &s->deps[i];

		if (d->n == 0 || d->cond < 0 || d->cond > 2)
			continue;
		jobs = vg_xcalloc(d->n, sizeof(*jobs));
		for (k = nj = 0; k < d->n; k++) {
			unsigned long j = strtoul(d->handles[k], NULL, 10);

			for (m = 0; m < nj && jobs[m] != j; m++)
				;
			if (j != 0 && m == nj)
				jobs[nj++] = j;
		}
		vg_buf_reset(&one);
		for (m = 0; m < nj; m++)
			vg_buf_printf(&one, ":%lu", jobs[m]);
		free(jobs);
		if (nj > 0)
			vg_buf_printf(&b, "%s%s%s", b.len > 0 ? "," : "",
			    kind[d->cond], vg_buf_str(&one));
	}
	vg_buf_release(&one);
	if (b.len == 0) {
		vg_buf_release(&b);
		return NULL;
	}
	return vg_buf_detach(&b);
}

/*
 * Writes the pack file of a chunk of packs: attempt i runs in element
 * i / per.  Sets each attempt's element; 0 or a vg_rc.
 */
static int
write_pack(struct sl *p, const char *name, struct sl_att **v, size_t n,
    size_t per, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char *path = vg_path_join(p->slurm_dir, name);
	size_t i;
	int r;

	/* resources.time is a packed task's time-out: the job's limit is
	 * its pack's. */
	for (i = 0; i < n; i++)
		vg_slurm_pack_line(&b, (long)(i / per), v[i]->index,
		    v[i]->a->attempt, v[i]->a->timeout > 0 ? v[i]->a->timeout :
		    (double)v[i]->a->res.time, v[i]->a->res.memory);
	r = vg_write_file_atomic(path, b.data, b.len, 0600, e);
	free(path);
	vg_buf_release(&b);
	return r;
}

/* Writes the script of one chunk and submits it; plan (NULL = one task
 * per element) packs the chunk's attempts, plan->per to an element. */
static int
submit_chunk(struct vg_sched *s, struct sl *p, struct sl_att **v, size_t n,
    int offset, const struct vg_slurm_pack_plan *plan, struct vg_err *e)
{
	const struct vg_manifest *m = s->m;
	struct vg_slurm_job j;
	struct vg_buf spec = VG_BUF_INIT, script = VG_BUF_INIT;
	struct vg_err se;
	char *path = NULL, *name = NULL, *excl, *dep = NULL, *pack = NULL;
	int *idx, r, tries, delay = 500;
	unsigned long job = 0;
	size_t i;

	idx = vg_xcalloc(n, sizeof *idx);
	for (i = 0; i < n; i++)
		idx[i] = plan != NULL ? (int)(i / plan->per) : v[i]->index;
	if (plan != NULL)
		vg_buf_printf(&spec, "0-%d", idx[n - 1]);
	else
		vg_cluster_array_spec(idx, n, offset, &spec);
	excl = exclude_for(s, p, v[0]->index);
	memset(&j, 0, sizeof j);
	j.name = s->run_id;
	j.run_dir = s->run_dir;
	j.vigil = p->vigil;
	j.manifest_sha256 = p->manifest_sha256;
	j.attempt = v[0]->a->attempt;
	j.array = vg_buf_str(&spec);
	j.offset = offset;
	j.throttle = vg_slurm_of(m)->array_parallelism;
	j.cpus = v[0]->a->res.cpus;
	j.memory = v[0]->a->res.memory;
	j.gpus = v[0]->a->res.gpus;
	j.gpu_type = v[0]->a->res.gpu_type;
	j.time = v[0]->a->res.time;
	if (j.time == 0 && v[0]->a->timeout > 0)
		j.time = (uint64_t)v[0]->a->timeout + 60;
	if (plan != NULL) {
		/* Room for plan->parallel tasks at once, each a job step of
		 * the task's own size. */
		j.time = plan->time;
		j.nodes = 1;
		j.ntasks = plan->parallel;
		j.memory *= (uint64_t)plan->parallel;
		j.gpus *= plan->parallel;
		j.pack_steps = vg_slurm_of(m)->pack.steps;
	}
	if (v[0]->a->attempt > 1 && j.time > 0) {
		if (!p->max_time_known) {
			vg_err_init(&se);
			if (take_token(p, e) == 0 && p->iface->maxtime(
			    v[0]->a->res.partition, &p->max_time, &se) == 0)
				p->max_time_known = 1;
		}
		if (p->max_time > 0 && j.time > p->max_time)
			j.time = p->max_time;
	}
	j.partition = v[0]->a->res.partition;
	j.account = v[0]->a->res.account;
	j.qos = v[0]->a->res.qos;
	j.constraint = v[0]->a->res.constraint;
	j.signal = vg_slurm_of(m)->signal != NULL ? vg_slurm_of(m)->signal :
	    VG_SLURM_SIGNAL_DEFAULT;
	j.requeue = vg_slurm_of(m)->requeue;
	j.exclude = *excl != '\0' ? excl : NULL;
	if (plan == NULL) {
		j.nodes = v[0]->a->res.nodes;
		j.ntasks = v[0]->a->res.ntasks;
		j.ntasks_per_node = v[0]->a->res.ntasks_per_node;
	}
	if (j.cpus == 0)
		j.cpus = v[0]->a->res.cpus_per_task;
	j.mem_per_cpu = v[0]->a->res.mem_per_cpu;
	j.gpus_per_task = v[0]->a->res.gpus_per_task;
	j.exclusive = v[0]->a->res.exclusive;
	j.srun = vg_slurm_use_srun(&v[0]->a->res);
	j.options = &vg_slurm_of(m)->options;
	if (vg_kvs_get(j.options, "signal") != NULL)
		j.signal = NULL;	/* slurm.options.signal replaces it */
	if (j.constraint != NULL && vg_kvs_get(j.options, "constraint") !=
	    NULL) {
		r = vg_err_set(e, VG_EINVAL, "slurm.options.constraint: "
		    "resources.constraint is given too; give one");
		goto out;
	}
	dep = dependency_of(s);
	j.dependency = dep;
	name = vg_xasprintf("submit-%d.sh", ++p->seq);
	path = vg_path_join(p->slurm_dir, name);
	if (plan != NULL) {
		pack = vg_xasprintf("submit-%d.pack", p->seq);
		j.pack = pack;
		if ((r = write_pack(p, pack, v, n, plan->per, e)) != 0)
			goto out;
	}
	if ((r = vg_slurm_script(&j, &script, e)) != 0)
		goto out;
	/* A pack's intent names its elements; its pack file (written
	 * first) says which tasks each runs (adopt_pack). */
	if ((r = vg_write_file_atomic(path, script.data, script.len, 0700,
	    e)) != 0 || (r = journal_intent(p, name, j.attempt, offset,
	    vg_buf_str(&spec), e)) != 0)
		goto out;
	for (tries = 1;; tries++) {
		if ((r = take_token(p, e)) != 0)
			goto out;
		/* slurm.options have no libslurm form: sbatch reads them
		 * from the script. */
		r = (j.options != NULL && j.options->n > 0 ? &vg_slurm_cli :
		    p->iface)->submit(&j, vg_buf_str(&script), path, &job, e);
		if (r == 0 || r != VG_EAGAIN || tries == SUBMIT_TRIES)
			break;
		vg_debug("slurm: submission %d failed (%s); retrying", tries,
		    e->msg);
		backoff(delay);
		delay *= 2;
	}
	if (r != 0) {
		vg_err_prefix(e, "submitting %s (%d tr%s): ", name, tries,
		    tries > 1 ? "ies" : "y");
		goto out;
	}
	kill_point("submitted");
	for (i = 0; i < n; i++) {
		v[i]->job = job;
		v[i]->task = idx[i] - (plan != NULL ? 0 : offset);
		v[i]->packed = plan != NULL;
		v[i]->since = vg_now();
		v[i]->dep = dep != NULL;
	}
	if ((r = journal_add(p, v, n, e)) != 0)
		goto out;
	kill_point("journal");
	for (i = 0; i < n; i++)
		emit(p, v[i], VG_ST_QUEUED, NULL, NULL, 1);
out:
	free(idx);
	free(excl);
	free(dep);
	free(pack);
	free(name);
	free(path);
	vg_buf_release(&spec);
	vg_buf_release(&script);
	return r;
}

/* Sizes the packs of n attempts asking what a asks (slurm.pack). */
static int
pack_plan(const struct vg_sched *s, const struct vg_attempt *a, size_t n,
    struct vg_slurm_pack_plan *plan, struct vg_err *e)
{
	double secs = a->res.time > 0 ? (double)a->res.time : a->timeout;

	return vg_slurm_pack_plan(&vg_slurm_of(s->m)->pack, n, secs, plan, e);
}

/* qsort: by group key, then index. */
static int
cmp_key(const void *a, const void *b)
{
	const struct { char *key; struct sl_att *t; } *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return (x->t->index > y->t->index) - (x->t->index < y->t->index);
}

/* Sends what submit collected as job arrays. */
static int
slurm_flush(struct vg_sched *s, struct vg_err *e)
{
	struct sl *p = s->priv;
	struct { char *key; struct sl_att *t; } *g;
	struct sl_att **chunk;
	struct vg_result rr;
	size_t i, j, k, n = 0, ng = 0, nsub = 0;
	int r = 0, offset, max = p->ci.max_array;
	int packing = vg_slurm_pack_on(&vg_slurm_of(s->m)->pack);
	struct vg_slurm_pack_plan plan;
	long long t0 = vg_mono_ms();

	for (i = 0; i < p->n; i++)
		if (p->v[i]->job == 0 && !p->v[i]->done)
			n++;
	if (n == 0)
		return 0;
	g = vg_xcalloc(n, sizeof *g);
	for (i = 0; i < p->n; i++)
		if (p->v[i]->job == 0 && !p->v[i]->done) {
			g[ng].t = p->v[i];
			g[ng++].key = group_key(p, p->v[i]);
		}
	qsort(g, ng, sizeof *g, cmp_key);
	chunk = vg_xcalloc(ng, sizeof *chunk);
	for (i = 0; i < ng; i = j) {
		if (packing) {
			/* One chunk: same key, at most max packs. */
			for (j = i; j < ng && strcmp(g[j].key, g[i].key) == 0;
			    j++)
				;
			if ((r = pack_plan(s, g[i].t->a, j - i, &plan,
			    e)) == 0 && j - i > plan.per * (size_t)max)
				j = i + plan.per * (size_t)max;
			offset = 0;
		} else {
			/* One chunk: same key, indexes in [offset, offset +
			 * max). */
			offset = g[i].t->index / max * max;
			for (j = i; j < ng && strcmp(g[j].key, g[i].key) == 0 &&
			    g[j].t->index < offset + max; j++)
				;
		}
		for (k = 0; k < j - i; k++)
			chunk[k] = g[i + k].t;
		nsub++;
		if (r != 0 || (r = submit_chunk(s, p, chunk, k, offset,
		    packing ? &plan : NULL, e)) != 0) {
			/* The attempts end here with the error text; the
			 * driver's retry policy decides what comes next. */
			memset(&rr, 0, sizeof rr);
			rr.exit_code = -1;
			snprintf(rr.reason, sizeof rr.reason, "%.*s",
			    (int)sizeof rr.reason - 1, e->msg);
			while (k > 0)
				emit(p, chunk[--k], VG_ST_BACKEND_ERROR, &rr,
				    e->msg, 0);
			snprintf(p->last_error, sizeof p->last_error, "%s",
			    e->msg);
			r = 0;
		}
	}
	vg_debug("slurm: flush: %zu attempt(s) in %zu submission(s), %lld ms",
	    ng, nsub, vg_mono_ms() - t0);
	for (i = 0; i < ng; i++)
		free(g[i].key);
	free(g);
	free(chunk);
	p->pacer.cur = p->pacer.min;
	p->next_query = vg_mono_ms() + (long long)(p->pacer.min * 1000);
	return r;
}

/* Age in seconds of a file's mtime, or -1 when it does not exist. */
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

/* Reads the record of t's attempt set aside (result.json.ATTEMPT); 1
 * when there is one of that attempt. */
static int
aside_record(const struct sl_att *t, struct vg_result *rec)
{
	char name[48];
	struct vg_err e;
	struct vg_buf b = VG_BUF_INIT;
	int ok;

	snprintf(name, sizeof name, "result.json.%d", t->a->attempt);
	vg_err_init(&e);
	ok = vg_beneath_read(t->a->task_dir, 0, name, 1u << 20, &b, &e) == 0 &&
	    vg_result_parse(vg_buf_str(&b), b.len, rec, &e) == 0 &&
	    (rec->attempt == 0 || rec->attempt == t->a->attempt);
	vg_buf_release(&b);
	return ok;
}

/*
 * Reports t from its result record when there is one; 1 if reported.  A
 * record of a task killed by a signal (or CANCELLED by task-exec on
 * SIGTERM) that vigil did not cancel is held until Slurm says why (its
 * TIMEOUT, OUT_OF_MEMORY, PREEMPTED, ...), at most the grace window.
 */
static int
check_record(struct sl *p, struct sl_att *t)
{
	struct vg_result rec;
	struct vg_err re;
	double now;

	vg_err_init(&re);
	if (vg_result_read(t->a->task_dir, &rec, &re) != 0 && !t->packed)
		return 0;
	/* A packed task's next attempt may run in its pack already: this
	 * attempt's record is then set aside as result.json.ATTEMPT. */
	if (t->packed && (re.rc != 0 || (rec.attempt > 0 &&
	    rec.attempt != t->a->attempt)) && !aside_record(t, &rec))
		return 0;
	if (!vg_state_terminal(rec.state))
		return 0;
	/* A packed task's TIMEOUT is its own time-out, which killed it:
	 * its pack goes on, and Slurm has nothing to add. */
	if ((rec.signal != 0 || rec.state == VG_ST_CANCELLED) &&
	    !(t->packed && rec.state == VG_ST_TIMEOUT) && !t->cancel &&
	    t->ended == 0) {
		now = vg_now();
		if (t->held == 0) {
			t->held = now;
			/* Ask Slurm now (the bucket still paces it). */
			p->next_query = vg_mono_ms();
		}
		if (now - t->held < p->grace)
			return 0;
	}
	/* With accounting, what the job was given is sacct's to say: a
	 * record that came before any answer with the job's allocation
	 * waits for one query more (not longer), so that the attempt
	 * carries it. */
	if (t->ended == 0 && p->ci.accounting &&
	    !(t->usage.known & VG_USAGE_CPUS)) {
		if (t->usage_q == 0) {
			t->usage_q = p->nquery + 1;
			p->next_query = vg_mono_ms();
		}
		if (p->nquery < t->usage_q)
			return 0;
	}
	if (t->ended > 0)
		vg_cluster_merge(&rec, &t->slurm);
	else
		vg_cluster_merge_usage(&rec.usage, &t->usage);
	emit(p, t, rec.state, &rec, rec.reason, 0);
	return 1;
}

/* Finds the row of t in rows (sorted by job, task). */
static const struct vg_slurm_row *
find_row(const struct vg_slurm_rows *rows, const struct sl_att *t)
{
	size_t lo = 0, hi = rows->n, mid;
	const struct vg_slurm_row *r;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		r = &rows->v[mid];
		if (r->job < t->job || (r->job == t->job && r->task < t->task))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < rows->n && rows->v[lo].job == t->job &&
	    rows->v[lo].task == t->task)
		return &rows->v[lo];
	return NULL;
}

/* qsort: rows by job, task. */
static int
cmp_row(const void *a, const void *b)
{
	const struct vg_slurm_row *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

/*
 * Reports t from Slurm's terminal verdict once the grace window for its
 * result record has passed (check_record comes first); returns 1 when
 * reported.  Kill states get a short window, since the task could not
 * have said more, and none at all when vigil itself cancelled it.
 */
static int
settle(struct sl *p, struct sl_att *t, double now)
{
	struct vg_result r;
	double grace;

	switch (t->slurm.state) {
	case VG_ST_SUCCEEDED:
	case VG_ST_FAILED:
		grace = p->grace;
		break;
	case VG_ST_CANCELLED:
		grace = t->cancel ? 0 : KILLED_GRACE;
		break;
	default:
		grace = KILLED_GRACE;
		break;
	}
	if (now - t->ended < grace)
		return 0;
	r = t->slurm;
	if (r.state == VG_ST_SUCCEEDED) {
		/* Slurm's exit 0 is task-exec's, not the task's. */
		r.state = VG_ST_LOST;
		snprintf(r.reason, sizeof r.reason, "Slurm says job %lu_%ld "
		    "COMPLETED but no result record appeared within %.0fs",
		    t->job, t->task, p->grace);
	} else if (r.state == VG_ST_FAILED) {
		size_t len = strlen(r.reason);

		snprintf(r.reason + len, sizeof r.reason - len,
		    " (from Slurm; no result record)");
	}
	if (r.state == VG_ST_NODE_FAIL && r.node[0] != '\0') {
		p->excl = vg_xgrow(p->excl, &p->exclcap, p->nexcl + 1,
		    sizeof *p->excl);
		p->excl[p->nexcl].index = t->index;
		p->excl[p->nexcl++].nodes = vg_xstrdup(r.node);
	}
	emit(p, t, r.state, &r, r.reason, 0);
	return 1;
}

/*
 * slurm.requeue: Slurm restarts a preempted or node-failed element under
 * the same job id, so its PREEMPTED or NODE_FAIL record (sacct shows it
 * until the requeued one appears) is no end: REQUEUED, for up to the
 * grace window.  When the element is back (pending or running), the
 * record its killed run left is set aside: the requeued run writes its
 * own.
 */
static void
requeue_check(struct sl *p, struct sl_att *t, enum vg_state *st,
    struct vg_result *r, double now)
{
	if (!p->requeue)
		return;
	if (*st == VG_ST_PREEMPTED || *st == VG_ST_NODE_FAIL) {
		if (t->requeue_at == 0)
			t->requeue_at = now;
		if (now - t->requeue_at < p->grace) {
			snprintf(r->reason, sizeof r->reason, "%s; Slurm "
			    "requeues it (slurm.requeue)", vg_state_name(*st));
			*st = r->state = VG_ST_REQUEUED;
		}
		return;
	}
	if (vg_state_terminal(*st) || t->requeue_at == 0)
		return;
	t->requeue_at = 0;
	t->held = 0;
	vg_cluster_set_aside(t->a->task_dir, "result.json", t->a->attempt);
}

/* Applies one query answer (from sacct when acct) to every active
 * attempt; returns changes. */
static int
apply_rows(struct sl *p, const struct vg_slurm_rows *rows, int acct)
{
	const struct vg_slurm_row *row;
	struct vg_result r;
	struct sl_att *t;
	enum vg_state st;
	double now = vg_now(), hb;
	size_t i, before = p->nout;
	char why[256];

	for (i = 0; i < p->n; i++) {
		t = p->v[i];
		if (t->done || t->job == 0)
			continue;
		row = find_row(rows, t);
		if (row != NULL) {
			st = vg_slurm_state_map(row, &r);
			t->usage = r.usage;
			/* Cancelled by Slurm itself (no "by UID"), not by
			 * vigil, while it waited: --kill-on-invalid-dep
			 * (sacct may say no more than that). */
			if (st == VG_ST_CANCELLED && row->by_uid < 0 &&
			    t->dep && !t->cancel) {
				st = r.state = VG_ST_DEPENDENCY;
				snprintf(r.reason, sizeof r.reason, "%s",
				    "Slurm cancelled it: the jobs of a run it "
				    "waits for (after:) did not end as asked");
			}
			requeue_check(p, t, &st, &r, now);
			if (vg_state_terminal(st) && t->ended == 0) {
				t->ended = now;
				t->slurm = r;
				/* Without a record, Elapsed gives the wall
				 * time the polls would blur. */
				if (row->elapsed > 0 && r.started == 0) {
					t->slurm.started = now - row->elapsed;
					t->slurm.ended = now;
				}
			}
		}
		if (check_record(p, t))
			continue;
		if (row == NULL) {
			if (t->ended > 0) {
				/* Slurm said it ended, then forgot it. */
				(void)settle(p, t, now);
				continue;
			}
			/* Unknown to Slurm: not recorded yet (slurmdbd
			 * lags), or forgotten (MinJobAge), or lost. */
			if (t->gone == 0)
				t->gone = now;
			hb = file_age(t->a->task_dir, "heartbeat");
			if (now - t->gone < p->grace ||
			    now - t->since < p->grace ||
			    (hb >= 0 && hb < p->stale))
				continue;
			if (acct) {
				/* slurmdbd may lag or be down: squeue gets
				 * the last word, at the next poll. */
				t->confirm = 1;
				p->use_squeue = 1;
				continue;
			}
			memset(&r, 0, sizeof r);
			r.exit_code = -1;
			snprintf(why, sizeof why, "job %lu_%ld is unknown to "
			    "Slurm (%s), no result record after %.0fs, %s",
			    t->job, t->task, t->confirm ? "sacct and squeue" :
			    "squeue", now - t->gone, hb < 0 ?
			    "no heartbeat" : "heartbeat stopped");
			snprintf(r.reason, sizeof r.reason, "%s", why);
			emit(p, t, VG_ST_LOST, &r, why, 0);
			continue;
		}
		t->gone = 0;
		t->confirm = 0;
		t->seen = 1;
		/* A packed task runs once its pack-exec starts it (and its
		 * task-exec beats), not when its pack does. */
		if (t->packed && st == VG_ST_RUNNING &&
		    file_age(t->a->task_dir, "heartbeat") < 0) {
			st = r.state = VG_ST_QUEUED;
			snprintf(r.reason, sizeof r.reason, "waiting in its "
			    "pack (job %lu_%ld runs)", t->job, t->task);
		}
		if (!vg_state_terminal(st)) {
			t->ended = 0;
			if (st != t->last || strcmp(r.reason,
			    t->last_reason) != 0)
				emit(p, t, st, &r, r.reason, 0);
			continue;
		}
		(void)settle(p, t, now);
	}
	return p->nout > before;
}

/* qsort: ints ascending. */
static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Cancels packed attempts whose pack goes on: each gets the marker
 * TASK_DIR/cancel, which its pack-exec reads within a second and stops
 * that task alone (a task not started yet is recorded CANCELLED when the
 * pack reaches it).  Attempts whose whole element goes are left to
 * send_cancels, which cancels the element.  No Slurm call.
 */
static void
send_pack_cancels(struct sl *p)
{
	size_t i, j, live, going;
	struct vg_err e;

	for (i = 0; i < p->n; i++) {
		struct sl_att *t = p->v[i];

		if (!t->packed || !t->cancel || t->cancel_sent || t->done ||
		    t->job == 0)
			continue;
		for (j = live = going = 0; j < p->n; j++) {
			struct sl_att *u = p->v[j];

			if (u->job != t->job || u->task != t->task || u->done)
				continue;
			live++;
			going += u->cancel != 0;
		}
		if (going == live)
			continue;
		vg_err_init(&e);
		if (vg_slurm_pack_cancel_mark(t->a->task_dir, &e) == 0)
			t->cancel_sent = 1;
		else
			snprintf(p->last_error, sizeof p->last_error, "%s",
			    e.msg);
	}
}

/*
 * Sends the pending cancel requests: one call per array job, naming the
 * whole array ("1234") when every live element of it goes, else its
 * elements ("1234_[0-3,7]"); slurmctld takes either as one request.
 */
static void
send_cancels(struct sl *p)
{
	struct vg_buf spec = VG_BUF_INIT;
	struct vg_err e;
	unsigned long job;
	size_t i, j, k, live;
	int *idx;

	idx = vg_xcalloc(p->n + 1, sizeof *idx);
	for (i = 0; i < p->n; i++) {
		struct sl_att *t = p->v[i];

		if (!t->cancel || t->cancel_sent || t->done || t->job == 0)
			continue;
		job = t->job;
		for (j = k = live = 0; j < p->n; j++) {
			struct sl_att *u = p->v[j];

			if (u->job != job || u->done)
				continue;
			live++;
			if (u->cancel && !u->cancel_sent) {
				idx[k++] = (int)u->task;
				u->cancel_sent = 1;
			}
		}
		vg_buf_reset(&spec);
		vg_buf_printf(&spec, "%lu", job);
		if (k < live) {
			qsort(idx, k, sizeof *idx, cmp_int);
			/* The tasks of one pack share its element. */
			for (j = live = 0; j < k; j++)
				if (live == 0 || idx[live - 1] != idx[j])
					idx[live++] = idx[j];
			k = live;
			vg_buf_adds(&spec, "_[");
			vg_cluster_array_spec(idx, k, 0, &spec);
			vg_buf_addc(&spec, ']');
		}
		vg_err_init(&e);
		if (take_token(p, &e) != 0 ||
		    p->iface->cancel(vg_buf_str(&spec), &e) != 0) {
			snprintf(p->last_error, sizeof p->last_error, "%s",
			    e.msg);
			vg_debug("slurm: cancel %s: %s", vg_buf_str(&spec),
			    e.msg);
		} else
			vg_debug("slurm: cancel %s: %zu element(s)",
			    vg_buf_str(&spec), k);
	}
	free(idx);
	vg_buf_release(&spec);
}

/* Runs the batched query if it is due and a token is free. */
static int
query(struct vg_sched *s, struct sl *p, struct vg_err *e)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	unsigned long *jobs;
	size_t i, k, nj = 0;
	double wait;
	int changed, r, acct;

	jobs = vg_xcalloc(p->n + 1, sizeof *jobs);
	for (i = 0; i < p->n; i++) {
		if (p->v[i]->done || p->v[i]->job == 0)
			continue;
		for (k = 0; k < nj && jobs[k] != p->v[i]->job; k++)
			;
		if (k == nj)
			jobs[nj++] = p->v[i]->job;
	}
	if (nj == 0) {
		free(jobs);
		return 0;
	}
	if ((r = vg_slurm_bucket_take(&p->bucket, vg_mono_ms() / 1000.0,
	    &wait, e)) != 0) {
		free(jobs);
		return r;
	}
	if (wait > 0) {
		/* Another vigil took the tokens; try when one is due. */
		p->next_query = vg_mono_ms() + (long long)(wait * 1000) + 1;
		free(jobs);
		return 0;
	}
	if (p->use_squeue && p->sacct_retry > 0 && vg_mono_ms() >=
	    p->sacct_retry) {
		p->use_squeue = 0;
		p->sacct_retry = 0;
	}
	acct = p->ci.accounting && !p->use_squeue;
	r = p->iface->query(s->run_id, jobs, nj, acct, &rows, e);
	free(jobs);
	/* One line per Slurm call: bench/slurm-tracking.sh counts them. */
	vg_debug("slurm: query: %zu array job(s), %zu row(s), %s via %s%s",
	    nj, rows.n, r == 0 ? "ok" : "failed", acct ?
	    "sacct" : p->iface == &vg_slurm_cli ? "squeue" : "slurm_load_jobs",
	    p->iface == &vg_slurm_cli || acct ? "" : " (lib)");
	if (r == 0 && !acct && p->sacct_retry == 0)
		p->use_squeue = 0;	/* one squeue pass confirmed */
	if (r != 0 && acct) {
		/* sacct (slurmdbd) is down: squeue until it is back. */
		p->use_squeue = 1;
		p->sacct_retry = vg_mono_ms() + SACCT_RETRY * 1000LL;
	}
	if (r != 0) {
		/* A failed query is no news: nothing changes state. */
		snprintf(p->last_error, sizeof p->last_error, "%s", e->msg);
		vg_debug("slurm: query failed: %s", e->msg);
		vg_err_init(e);
		p->next_query = vg_mono_ms() +
		    (long long)(vg_cluster_pacer_next(&p->pacer, 0) * 1000);
		vg_slurm_rows_release(&rows);
		return 0;
	}
	if (rows.n > 1)
		qsort(rows.v, rows.n, sizeof *rows.v, cmp_row);
	p->nquery++;
	changed = apply_rows(p, &rows, acct);
	vg_slurm_rows_release(&rows);
	p->next_query = vg_mono_ms() +
	    (long long)(vg_cluster_pacer_next(&p->pacer, changed) * 1000);
	return 0;
}

/* Checks result records of attempts Slurm already called finished (or
 * of all), and settles those whose grace window ran out; cheap (one stat
 * each), no Slurm call. */
static void
check_files(struct sl *p, int all)
{
	double now = vg_now();
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct sl_att *t = p->v[i];

		if (t->done || t->job == 0 || (!all && t->ended == 0))
			continue;
		if (!check_record(p, t) && t->ended > 0)
			(void)settle(p, t, now);
	}
}

/* Hands out queued updates; they stay valid until the next poll. */
static void
hand_out(struct sl *p, struct vg_sched_update **ups, size_t *n)
{
	struct vg_sched_update *tmp;
	size_t cap;

	/* Swap buffers: out becomes ups, the old ups is reused. */
	tmp = p->ups;
	cap = p->upcap;
	p->ups = p->out;
	p->upcap = p->outcap;
	p->out = tmp;
	p->outcap = cap;
	*ups = p->ups;
	*n = p->nout;
	p->nout = 0;
	p->nout_final = 0;
}

/* Drops attempts whose terminal update went out before this poll. */
static void
reap(struct sl *p)
{
	size_t i, k = 0;

	for (i = 0; i < p->n; i++) {
		if (p->v[i]->done) {
			free(p->v[i]);
			continue;
		}
		p->v[k++] = p->v[i];
	}
	p->n = k;
}

/* Waits for changes, at most timeout_ms or until wake_fd is readable. */
static int
slurm_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
    struct vg_sched_update **ups, size_t *n, struct vg_err *e)
{
	struct sl *p = s->priv;
	long long now, deadline, until;
	struct pollfd pfd;
	int r;

	*ups = NULL;
	*n = 0;
	if (p->nout > 0)
		kill_point("committed");
	reap(p);
	send_pack_cancels(p);
	send_cancels(p);
	deadline = vg_mono_ms() + (timeout_ms < 0 ? 1LL << 40 : timeout_ms);
	for (;;) {
		if (p->nout > 0)
			break;
		now = vg_mono_ms();
		if (now >= p->next_files) {
			check_files(p, now >= p->next_query);
			p->next_files = now + FILE_CHECK;
			if (p->nout > 0)
				break;
		}
		if (now >= p->next_query) {
			if ((r = query(s, p, e)) != 0)
				return r;
			if (p->nout > 0)
				break;
		}
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

/* Asks for a to be cancelled; the scancel goes out with the next poll. */
static int
slurm_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
    struct vg_err *e)
{
	struct sl *p = s->priv;
	struct vg_result r;
	size_t i;

	(void)force;
	(void)e;
	for (i = 0; i < p->n; i++) {
		struct sl_att *t = p->v[i];

		if (t->a != a || t->done)
			continue;
		if (t->job == 0) {
			memset(&r, 0, sizeof r);
			r.exit_code = -1;
			snprintf(r.reason, sizeof r.reason, "%s",
			    "cancelled before submission");
			emit(p, t, VG_ST_CANCELLED, &r, r.reason, 0);
			return 0;
		}
		t->cancel = 1;
		/* The answer comes back as CANCELLED: look soon. */
		p->pacer.cur = p->pacer.min;
		p->next_query = vg_mono_ms() + 1000;
	}
	return 0;
}

/* Takes back an attempt of a dead vigil by its job id "JOB_TASK", or by
 * the journal when handle is empty. */
static int
slurm_reattach(struct vg_sched *s, struct vg_attempt *a, const char *handle,
    struct vg_err *e)
{
	struct sl *p = s->priv;
	struct sl_att *t;
	unsigned long job;
	long task;
	char c;

	if (handle == NULL || *handle == '\0') {
		if (!journal_find(p, a->task->index, a->attempt, &job, &task))
			return vg_err_set(e, VG_ENOENT, "slurm: task %d "
			    "attempt %d is not in the job journal",
			    a->task->index, a->attempt);
	} else if (sscanf(handle, "%lu_%ld%c", &job, &task, &c) != 2 ||
	    job == 0 || task < 0)
		return vg_err_set(e, VG_EINVAL, "slurm: bad job handle '%s' "
		    "(expected JOBID_TASKID)", handle);
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
slurm_active(struct vg_sched *s)
{
	struct sl *p = s->priv;
	size_t i, n = 0;

	if (p == NULL)
		return 0;
	for (i = 0; i < p->n; i++)
		if (!p->v[i]->done)
			n++;
	return n + p->nout_final;
}

/* Frees everything; jobs keep running (resume re-attaches). */
/* scheduler op drop: a packed task cancelled while its pack waits for
 * its retry's claim: "new" tells the pack not to run it (slurm.h). */
static void
slurm_drop(struct vg_sched *s, int index, const char *task_dir)
{
	struct sl *p = s->priv;
	struct vg_slurm_claim want = { VG_CLAIM_NEW, 0, 0 }, got;
	struct vg_err e;
	size_t i;

	(void)task_dir;
	for (i = 0; p != NULL && i < p->npend; i++) {
		if (p->pend[i].index != index || p->pend[i].taken)
			continue;
		vg_err_init(&e);
		if (vg_slurm_claim_make(p->pend[i].task_dir,
		    p->pend[i].attempt + 1, &want, &got, &e) < 0)
			vg_warn("slurm: task %d: %s", index, e.msg);
		p->pend[i].taken = 1;
	}
}

static void
slurm_close(struct vg_sched *s)
{
	struct sl *p = s->priv;
	size_t i;

	if (p == NULL)
		return;
	send_cancels(p);
	/* Retries the driver did not ask for are not the packs' either:
	 * their pack-exec stops waiting for them. */
	for (i = 0; i < p->npend; i++) {
		struct vg_slurm_claim want = { VG_CLAIM_NEW, 0, 0 }, got;
		struct vg_err e;

		vg_err_init(&e);
		if (!p->pend[i].taken)
			(void)vg_slurm_claim_make(p->pend[i].task_dir,
			    p->pend[i].attempt + 1, &want, &got, &e);
		free(p->pend[i].task_dir);
	}
	free(p->pend);
	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	for (i = 0; i < p->nexcl; i++)
		free(p->excl[i].nodes);
	free(p->excl);
	free(p->v);
	free(p->out);
	free(p->ups);
	free(p->vigil);
	free(p->slurm_dir);
	free(p->journal);
	vg_slurm_bucket_release(&p->bucket);
	free(p);
	s->priv = NULL;
}

/* ---- vigil doctor ---- */

/* Appends whether path is on a shared file system, for what ("vigil
 * binary", "VIGIL_HOME"). */
static void
probe_shared(struct vg_buf *out, const char *what, const char *path,
    const char *fix)
{
	char name[32];
	int shared, rc;

	if ((rc = vg_fs_kind(path, name, sizeof(name), &shared)) < 0) {
		vg_buf_printf(out, "slurm: %s (%s): cannot tell the file "
		    "system: %s\n", what, path, strerror(errno));
		return;
	}
	vg_buf_printf(out, "slurm: %s on %s (%s): %s", what, name, path,
	    shared ? "shared" : "local");
	if (!shared)
		vg_buf_printf(out, " \u2014 %s", fix);
	vg_buf_adds(out, "\n");
}

/* scheduler op: probe; whether Slurm compute nodes can run this vigil
 * and reach its run directories: both must be on a file system the
 * nodes share. */
static void
slurm_probe(struct vg_buf *out)
{
	char *self = vigil_path(), *home = vg_home_dir();

	probe_shared(out, "vigil binary", self != NULL ? self :
	    "/proc/self/exe",
	    "task-exec on compute nodes needs a shared path; install vigil "
	    "on a shared filesystem or set VIGIL_SLURM_VIGIL");
	probe_shared(out, "VIGIL_HOME", home, "compute nodes write task "
	    "results under it; set VIGIL_HOME to a directory on a shared "
	    "filesystem");
	free(self);
	free(home);
}

/* plugin op host_check: the Slurm commands vigil submits and follows
 * jobs with are in $PATH (the backend's checks are the nodes' concern:
 * VG_PLUGIN_ELSEWHERE). */
static void
slurm_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	static const char *const cmds[] = { "sbatch", "squeue", NULL };
	const char *path = getenv("PATH");
	char *p;
	size_t i;

	(void)m;
	for (i = 0; cmds[i] != NULL; i++) {
		if ((p = vg_which(cmds[i])) != NULL) {
			free(p);
			continue;
		}
		vg_strv_pushf(why, "slurm: '%s' is not in $PATH (%s): run "
		    "vigil on a login node of the cluster or load its Slurm "
		    "module", cmds[i], path != NULL ? path : "");
	}
}

/*
 * plugin validate: slurm.pack sizes by walltime only from a task time
 * limit, runs each task on one node, and does not mix with requeue (a
 * requeued pack would run its finished tasks again).
 */
static int
slurm_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_slurm_conf *c = vg_slurm_of(m);
	const struct vg_resources *r = &m->resources;
	struct vg_loc loc;
	int rc = 0;

	if (!vg_slurm_pack_on(&c->pack))
		return 0;
	if (c->pack.walltime > 0 && r->time == 0 && m->timeout <= 0 &&
	    r->tmpl.n == 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "slurm.pack.walltime"),
		    "'slurm.pack.walltime' sizes packs from each task's time "
		    "limit: set 'resources.time' or 'timeout', or give "
		    "'slurm.pack.tasks'");
		rc = VG_EINVAL;
	}
	if (r->nodes > 1 || r->ntasks > 1 || r->ntasks_per_node > 1) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "slurm.pack"),
		    "'slurm.pack' runs each task as one step on one node; "
		    "resources.nodes, ntasks and ntasks_per_node above 1 "
		    "need one job per task (remove slurm.pack)");
		rc = VG_EINVAL;
	}
	if (c->requeue) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "slurm.requeue"),
		    "'slurm.requeue' with 'slurm.pack': Slurm would run a "
		    "requeued pack's finished tasks again; vigil retries its "
		    "unfinished ones itself (retry.on: [node_fail, "
		    "preempted])");
		rc = VG_EINVAL;
	}
	return rc;
}

static const struct vg_msection *const slurm_sections[] = {
	&vg_slurm_msection, NULL
};

/*
 * Cancels the Slurm array elements of the unfinished tasks v of a run
 * whose vigil is gone: the job id each task's row holds, and every
 * journal entry of its current or a later attempt (submitted, not yet
 * recorded), with one scancel per array job; for the whole run also the
 * jobs named after it when the journal shows a chunk whose job ids were
 * never written.
 */
/* Whether the run's tasks went out in packs (slurm.pack: a pack file
 * in RUN_DIR/slurm, which every submission of a packed run writes). */
static int
run_packed(const char *run_dir)
{
	char *dir = vg_path_join(run_dir, "slurm");
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t len;
	int found = 0;

	free(dir);
	if (d == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		found = len > 5 && strcmp(de->d_name + len - 5, ".pack") == 0 &&
		    strncmp(de->d_name, "submit-", 7) == 0;
	}
	closedir(d);
	return found;
}

/* RUN_DIR/tasks/INDEX. */
static char *
task_path(const char *run_dir, int index)
{
	return vg_xasprintf("%s/tasks/%d", run_dir, index);
}

static int
slurm_cancel_orphans(const char *run_id, const char *run_dir,
    const struct vg_sched_orphan *v, size_t n, int whole,
    struct vg_buf *said, struct vg_err *e)
{
	struct vg_sched_jentry *j = NULL, *el = NULL, x;
	size_t nj = 0, ne = 0, cap = 0, nel = 0, calls = 0, i, k;
	int rc, byname = 0;
	char c;

	if ((rc = vg_slurm_journal_load(run_dir, &j, &nj, e)) != 0)
		goto out;
	/* One task of a pack: its marker stops it alone (its pack-exec
	 * reads it, or meets it when the pack starts); its siblings go
	 * on.  Nothing of Slurm's is asked. */
	if (!whole && run_packed(run_dir)) {
		for (i = 0; i < n && rc == 0; i++) {
			char *td = task_path(run_dir, v[i].index);

			rc = vg_slurm_pack_cancel_mark(td, e);
			free(td);
		}
		if (rc == 0)
			vg_buf_printf(said, "%zu packed task(s) marked to "
			    "cancel (tasks/INDEX/cancel); their packs' other "
			    "tasks go on", n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		memset(&x, 0, sizeof(x));
		if (v[i].handle != NULL && sscanf(v[i].handle, "%lu_%ld%c",
		    &x.job, &x.task, &c) == 2) {
			el = vg_xgrow(el, &cap, ne + 1, sizeof(*el));
			el[ne++] = x;
		}
		for (k = 0; k < nj; k++)
			if (j[k].index == v[i].index &&
			    j[k].attempt >= v[i].attempt) {
				el = vg_xgrow(el, &cap, ne + 1, sizeof(*el));
				el[ne++] = j[k];
			}
	}
	rc = vg_slurm_cancel_elements(el, ne, &calls, e);
	/* A chunk whose job id the dead vigil never journaled: its jobs are
	 * found by the run's job name. */
	if (rc == 0 && whole && vg_slurm_journal_unjournaled(run_dir)) {
		const char *argv[] = { "scancel", "--quiet", "--name", run_id,
		    NULL };

		calls++;
		byname = 1;
		rc = vg_slurm_run(argv, NULL, NULL, 30000, e);
	}
	/* Sorted now: count distinct elements. */
	for (i = 0; i < ne; i++)
		if (i == 0 || el[i].job != el[i - 1].job ||
		    el[i].task != el[i - 1].task)
			nel++;
	if (rc == 0)
		vg_buf_printf(said, "%zu Slurm array element(s)%s cancelled, "
		    "%zu scancel call(s)", nel, byname ? " and the jobs named "
		    "after the run" : "", calls);
out:
	if (rc != 0)
		vg_err_prefix(e, "cannot cancel the run's Slurm jobs (nothing "
		    "recorded): ");
	free(el);
	free(j);
	return rc;
}

/* Slurm's variables a task on a compute node needs (which job, which
 * CPUs and GPUs it got), and what srun inside the job needs for its
 * steps (launcher srun, or a command calling srun or mpirun itself). */
static const char *const slurm_task_env[] = {
	"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_ARRAY_JOB_ID",
	"SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT", "SLURM_CPUS_PER_TASK",
	"SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE",
	"SLURM_JOB_NODELIST", "SLURM_NODEID", "SLURM_CLUSTER_NAME",
	"SLURM_JOB_PARTITION", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
	"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
	"ZE_AFFINITY_MASK",
	"SLURM_CONF", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NNODES",
	"SLURM_JOB_NUM_NODES", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE",
	"SLURM_JOB_CPUS_PER_NODE", "SLURM_GPUS_PER_TASK",
	NULL
};

/* scheduler op task_command: resources.launcher srun, said by the batch
 * script (VIGIL_LAUNCHER=srun): one run of the command per Slurm task
 * (MPI rank); not inside a step already. */
static void
slurm_task_command(struct vg_command *cmd)
{
	const char *l = getenv("VIGIL_LAUNCHER");

	if (l != NULL && strcmp(l, "srun") == 0 &&
	    getenv("SLURM_STEP_ID") == NULL)
		vg_slurm_launch_wrap(cmd);
}

/* scheduler op task_ended: vigil cancel RUN/TASK of a packed task leaves
 * a marker that pack-exec acts on; a task that ends otherwise after it
 * (its shell outlived the signal, it finished in the grace) is still
 * CANCELLED, as an unpacked task's scancel makes it. */
static void
slurm_task_ended(const char *task_dir, struct vg_result *r)
{
	if (r->state != VG_ST_CANCELLED &&
	    vg_slurm_pack_cancel_marked(task_dir)) {
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "%s",
		    "cancelled by vigil cancel");
	}
}

/* scheduler op allocation: a Slurm job's CPUs on this node
 * (SLURM_CPUS_ON_NODE), memory (SLURM_MEM_PER_NODE, MB; a job without it
 * holds a share it does not say) and GPUs by the host's ids
 * (SLURM_STEP_GPUS, else SLURM_JOB_GPUS). */
static int
slurm_allocation(struct vg_alloc *a)
{
	const char *s, *name;

	if ((s = getenv("SLURM_JOB_ID")) == NULL || *s == '\0')
		return 0;
	if ((s = getenv("SLURM_CPUS_ON_NODE")) != NULL && atoi(s) > 0) {
		a->cpus = atoi(s);
		snprintf(a->cpus_from, sizeof(a->cpus_from), "%s",
		    "SLURM_CPUS_ON_NODE");
	}
	if ((s = getenv("SLURM_MEM_PER_NODE")) != NULL &&
	    strtoull(s, NULL, 10) > 0) {
		a->memory = (uint64_t)strtoull(s, NULL, 10) << 20;
		snprintf(a->mem_from, sizeof(a->mem_from), "%s",
		    "SLURM_MEM_PER_NODE");
	} else {
		a->memory_unknown = 1;
		snprintf(a->mem_from, sizeof(a->mem_from), "%s",
		    "a Slurm job without SLURM_MEM_PER_NODE");
	}
	name = "SLURM_STEP_GPUS";
	if ((s = getenv(name)) == NULL || *s == '\0')
		s = getenv(name = "SLURM_JOB_GPUS");
	if (s != NULL && *s != '\0') {
		snprintf(a->gpus, sizeof(a->gpus), "%s", s);
		snprintf(a->gpus_from, sizeof(a->gpus_from), "%s=%s", name, s);
	}
	return 1;
}

const struct vg_scheduler_ops vg_scheduler_slurm = {
	.caps = VG_SCAP_JOBS | VG_SCAP_DEPEND,
	.task_env = slurm_task_env,
	.policy_progs = vg_slurm_policy_progs,
	.launcher = &vg_launcher_srun,
	.task_command = slurm_task_command,
	.task_ended = slurm_task_ended,
	.allocation = slurm_allocation,
	.probe = slurm_probe,
	.p = {
		.kind = VG_PLUGIN_SCHEDULER,
		.name = "slurm",
		.flags = VG_PLUGIN_ELSEWHERE,
		.help = "as batch jobs and job arrays on a Slurm cluster",
		.sections = slurm_sections,
		.host_check = slurm_host_check,
		.validate = slurm_validate,
	},
	.open = slurm_open,
	.submit = slurm_submit,
	.flush = slurm_flush,
	.poll = slurm_poll,
	.cancel = slurm_cancel,
	.reattach = slurm_reattach,
	.drop = slurm_drop,
	.active = slurm_active,
	.close = slurm_close,
	.cancel_orphans = slurm_cancel_orphans,
};

/* ---- the slurm: section ---- */

/* slurm: polling bounds in order. */
static void
check_slurm(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_slurm_conf *sl = base;

	(void)s;
	if (sl->poll_min > 0 && sl->poll_max > 0 &&
	    sl->poll_min > sl->poll_max)
		vg_dctx_error(c, n, "'slurm.poll_min' (%gs) is larger than "
		    "'slurm.poll_max' (%gs)", sl->poll_min, sl->poll_max);
}

/* One slurm.options entry, checked without the run's resources
 * (resources.constraint is checked against it at submission). */
static int
option_check(const char *key, const char *value, char *why, size_t n)
{
	return vg_slurm_option_check(key, value, NULL, why, n);
}

/* slurm.options: each key on the allowlist, each value one printable
 * line. */
static void
check_options(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	vg_schema_check_options(n, p, "slurm.options",
	    vg_slurm_allowed_options, option_check, c);
}

static const char *const interface_names[] = { "auto", "lib", "cli", NULL };

static const struct vg_section slurm_section = {
	.name = "slurm",
	.check = check_slurm,
	.fields = (const struct vg_field[]){
		CHOICE(vg_slurm_conf, "interface", interface, "auto",
		    interface_names, "libslurm or the commands"),
		INT(vg_slurm_conf, "array_parallelism", array_parallelism,
		    "0", 0, 1000000, "array throttle (%N)"),
		STRDEF(vg_slurm_conf, "signal", signal, "B:USR2@90",
		    "--signal; empty for none"),
		BOOL(vg_slurm_conf, "requeue", requeue, "false", "--requeue"),
		{ .key = "exclude", .type = VG_F_STRV,
		  .off = OFF(vg_slurm_conf, exclude), .check = vg_schema_check_printable,
		  .help = "nodes to avoid" },
		DUR(vg_slurm_conf, "poll_min", poll_min, NULL, 0, 3600,
		    "shortest poll interval"),
		DUR(vg_slurm_conf, "poll_max", poll_max, NULL, 0, 3600,
		    "longest poll interval"),
		{ .key = "options", .type = VG_F_KVS,
		  .off = OFF(vg_slurm_conf, options), .check = check_options,
		  .help = "further sbatch long options (an allowlist)" },
		{ .key = "pack", .type = VG_F_SECTION,
		  .off = OFF(vg_slurm_conf, pack), .sub = &vg_slurm_pack_schema,
		  .help = "many tasks per Slurm job" },
		{ .key = NULL },
	},
};

const struct vg_msection vg_slurm_msection = {
	.key = "slurm",
	.schema = &slurm_section,
	.size = sizeof(struct vg_slurm_conf),
	.help = "slurm scheduler",
};
