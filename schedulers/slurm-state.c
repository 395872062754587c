/*
 * slurm-state.c - what Slurm's answers mean to vigil: job states and
 * their flags mapped onto enum vg_state, exit codes, who cancelled, the
 * explanations of pending reasons `vigil status` shows; how a result
 * record and Slurm's verdict combine; the adaptive poll interval; and the
 * resources of a retry.  Pure functions, no I/O.
 *
 * States are those of squeue(1) and sacct(1) (JOB STATE CODES).  Base
 * states are terminal or not by themselves; the flag-like states
 * (COMPLETING, CONFIGURING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED,
 * RESIZING, SIGNALING, SPECIAL_EXIT, STAGE_OUT, STOPPED, RESV_DEL_HOLD,
 * REVOKED, UPDATE_DB) are what squeue prints while they are set.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "schedulers/slurm.h"

enum kind {
	K_QUEUED,		/* waiting */
	K_RUNNING,		/* still alive */
	K_SUSPENDED,
	K_REQUEUED,
	K_DONE,			/* exit code decides */
	K_FAILED,
	K_TERMINAL,		/* the state itself is the answer */
};

static const struct {
	const char	*name;
	enum kind	 kind;
	enum vg_state	 state;
	const char	*why;
} states[] = {
	{ .name = "PENDING", .kind = K_QUEUED, .state = VG_ST_QUEUED },
	{ .name = "CONFIGURING", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "RUNNING", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "COMPLETING", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "STAGE_OUT", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "SIGNALING", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "RESIZING", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "UPDATE_DB", .kind = K_RUNNING, .state = VG_ST_RUNNING },
	{ .name = "SUSPENDED", .kind = K_SUSPENDED,
	    .state = VG_ST_SUSPENDED, .why = "suspended by Slurm" },
	{ .name = "STOPPED", .kind = K_SUSPENDED, .state = VG_ST_SUSPENDED,
	    .why = "stopped (SIGSTOP) by Slurm" },
	{ .name = "REQUEUED", .kind = K_REQUEUED, .state = VG_ST_REQUEUED,
	    .why = "requeued by Slurm" },
	{ .name = "REQUEUE_FED", .kind = K_REQUEUED, .state = VG_ST_REQUEUED,
	    .why = "requeued by the federation" },
	{ .name = "REQUEUE_HOLD", .kind = K_REQUEUED,
	    .state = VG_ST_REQUEUED, .why = "requeued and held" },
	{ .name = "SPECIAL_EXIT", .kind = K_REQUEUED,
	    .state = VG_ST_REQUEUED, .why = "requeued and held "
	    "(special exit)" },
	{ .name = "RESV_DEL_HOLD", .kind = K_QUEUED, .state = VG_ST_QUEUED,
	    .why = "held: its reservation was deleted" },
	{ .name = "COMPLETED", .kind = K_DONE, .state = VG_ST_SUCCEEDED },
	{ .name = "FAILED", .kind = K_FAILED, .state = VG_ST_FAILED },
	{ .name = "CANCELLED", .kind = K_TERMINAL, .state = VG_ST_CANCELLED,
	    .why = "cancelled" },
	{ .name = "TIMEOUT", .kind = K_TERMINAL, .state = VG_ST_TIMEOUT,
	    .why = "reached its Slurm time limit" },
	{ .name = "OUT_OF_MEMORY", .kind = K_TERMINAL, .state = VG_ST_OOM,
	    .why = "exceeded its memory request" },
	{ .name = "NODE_FAIL", .kind = K_TERMINAL, .state = VG_ST_NODE_FAIL,
	    .why = "its node failed" },
	{ .name = "PREEMPTED", .kind = K_TERMINAL, .state = VG_ST_PREEMPTED,
	    .why = "preempted" },
	{ .name = "BOOT_FAIL", .kind = K_TERMINAL, .state = VG_ST_BOOT_FAIL,
	    .why = "its node failed to boot" },
	{ .name = "DEADLINE", .kind = K_TERMINAL, .state = VG_ST_DEADLINE,
	    .why = "reached its deadline" },
	{ .name = "REVOKED", .kind = K_TERMINAL, .state = VG_ST_CANCELLED,
	    .why = "revoked: the federation ran it on another cluster" },
};

/* Frees the rows and leaves r empty. */
void
vg_slurm_rows_release(struct vg_slurm_rows *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

/* Appends " on NODES" to a reason when the node list is known. */
static void
add_node(struct vg_result *r, const struct vg_slurm_row *row)
{
	size_t len = strlen(r->reason);

	if (row->nodes[0] == '\0' || strcmp(row->nodes, "None") == 0 ||
	    strncmp(row->nodes, "None ", 5) == 0)
		return;
	snprintf(r->node, sizeof r->node, "%.*s", (int)sizeof r->node - 1,
	    row->nodes);
	if (len + 1 < sizeof r->reason)
		snprintf(r->reason + len, sizeof r->reason - len, "%son %s",
		    len > 0 ? " " : "", row->nodes);
}

/* Maps one squeue/sacct row onto a vigil state and result. */
enum vg_state
vg_slurm_state_map(const struct vg_slurm_row *row, struct vg_result *r)
{
	/* The last uid looked up (a process's users do not change). */
	static long by_uid = -1;
	static char by_name[64];
	const struct passwd *pw;
	size_t i;

	memset(r, 0, sizeof *r);
	r->exit_code = row->exit_code;
	r->signal = row->signal;
	r->usage = row->usage;
	for (i = 0; i < sizeof states / sizeof states[0]; i++)
		if (strcmp(row->state, states[i].name) == 0)
			break;
	if (i == sizeof states / sizeof states[0]) {
		/* A state this vigil does not know: alive until proven
		 * otherwise, and never a success. */
		snprintf(r->reason, sizeof r->reason,
		    "unknown Slurm state '%s'", row->state);
		r->state = VG_ST_RUNNING;
		return VG_ST_RUNNING;
	}
	r->state = states[i].state;
	switch (states[i].kind) {
	case K_QUEUED:
		if (states[i].why != NULL)
			snprintf(r->reason, sizeof r->reason, "%s",
			    states[i].why);
		else if (row->reason[0] != '\0' &&
		    strcmp(row->reason, "None") != 0) {
			const char *t = vg_slurm_reason_text(row->reason);

			if (t != NULL)
				snprintf(r->reason, sizeof r->reason,
				    "%s: %s", row->reason, t);
			else
				snprintf(r->reason, sizeof r->reason, "%s",
				    row->reason);
		}
		break;
	case K_RUNNING:
		if (strcmp(row->state, "RUNNING") != 0)
			snprintf(r->reason, sizeof r->reason, "%s",
			    row->state);
		add_node(r, row);
		break;
	case K_SUSPENDED:
	case K_REQUEUED:
		snprintf(r->reason, sizeof r->reason, "%s", states[i].why);
		break;
	case K_DONE:
		/* COMPLETED means the batch script exited 0. */
		r->exit_code = row->exit_code < 0 ? 0 : row->exit_code;
		if (r->exit_code != 0 || r->signal != 0) {
			r->state = VG_ST_FAILED;
			snprintf(r->reason, sizeof r->reason,
			    "exit code %d", r->exit_code);
		}
		break;
	case K_FAILED:
		if (row->signal != 0) {
			r->exit_code = -1;
			snprintf(r->reason, sizeof r->reason,
			    "killed by signal %d", row->signal);
		} else
			snprintf(r->reason, sizeof r->reason,
			    "exit code %d%s%s", row->exit_code,
			    row->reason[0] != '\0' &&
			    strcmp(row->reason, "None") != 0 ? ", " : "",
			    strcmp(row->reason, "None") != 0 ?
			    row->reason : "");
		add_node(r, row);
		break;
	case K_TERMINAL:
		snprintf(r->reason, sizeof r->reason, "%s", states[i].why);
		/* --kill-on-invalid-dep: Slurm itself (no "by UID")
		 * cancels a job whose dependency failed; squeue says
		 * DependencyNeverSatisfied, sacct the pending reason
		 * Dependency. */
		if (r->state == VG_ST_CANCELLED && row->by_uid < 0 &&
		    strncmp(row->reason, "Dependency", 10) == 0) {
			r->state = VG_ST_DEPENDENCY;
			snprintf(r->reason, sizeof r->reason, "%s", "Slurm: "
			    "the jobs of a run it waits for (after:) did not "
			    "end as asked");
			add_node(r, row);
			break;
		}
		if (r->state == VG_ST_CANCELLED && row->by_uid >= 0) {
			size_t len = strlen(r->reason);

			/* One lookup per uid in a row: a cancelled array
			 * reports the same uid for every element. */
			if (row->by_uid != by_uid) {
				pw = getpwuid((uid_t)row->by_uid);
				by_uid = row->by_uid;
				snprintf(by_name, sizeof by_name, "%s",
				    pw != NULL ? pw->pw_name :
				    "unknown user");
			}
			snprintf(r->reason + len, sizeof r->reason - len,
			    " by %s (uid %ld)", by_name, row->by_uid);
		}
		add_node(r, row);
		break;
	}
	return r->state;
}

/* Pending reasons users see most, from squeue(1) JOB REASON CODES. */
static const struct {
	const char	*reason;
	const char	*text;
} reasons[] = {
	{ .reason = "Priority", .text = "jobs of higher priority are ahead" },
	{ .reason = "Resources", .text = "waiting for resources" },
	{ .reason = "JobArrayTaskLimit",
	    .text = "array throttle (slurm.array_parallelism) reached" },
	{ .reason = "Dependency",
	    .text = "waiting for the jobs of a run it waits for (after:)" },
	{ .reason = "DependencyNeverSatisfied",
	    .text = "its dependency can never be satisfied" },
	{ .reason = "BeginTime", .text = "its start time is not reached" },
	{ .reason = "JobHeldUser", .text = "held by its user" },
	{ .reason = "JobHeldAdmin", .text = "held by an administrator" },
	{ .reason = "PartitionDown", .text = "its partition is down" },
	{ .reason = "PartitionInactive",
	    .text = "its partition is inactive" },
	{ .reason = "PartitionNodeLimit",
	    .text = "it asks for more nodes than the partition allows" },
	{ .reason = "PartitionTimeLimit",
	    .text = "its time limit exceeds the partition's MaxTime" },
	{ .reason = "ReqNodeNotAvail",
	    .text = "a requested node is not available" },
	{ .reason = "NodeDown", .text = "a node it needs is down" },
	{ .reason = "BadConstraints",
	    .text = "no node satisfies its constraints" },
	{ .reason = "InvalidAccount", .text = "its account is invalid" },
	{ .reason = "InvalidQOS", .text = "its QOS is invalid" },
	{ .reason = "QOSMaxJobsPerUserLimit",
	    .text = "the QOS limit of running jobs per user is reached" },
	{ .reason = "AssocMaxJobsLimit",
	    .text = "the association's job limit is reached" },
	{ .reason = "AssocGrpCpuLimit",
	    .text = "the association's CPU limit is reached" },
	{ .reason = "Reservation", .text = "waiting for its reservation" },
	{ .reason = "launch failed requeued held",
	    .text = "launch failed; requeued and held" },
};

/* Explains a pending reason in a few words. */
const char *
vg_slurm_reason_text(const char *reason)
{
	size_t i;

	for (i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
		if (strcmp(reason, reasons[i].reason) == 0)
			return reasons[i].text;
	return NULL;
}



/* Parses a sacct duration, "[DD-[HH:]]MM:SS[.mmm]" or "HH:MM:SS";
 * returns -1 when it is not one. */
static double
sacct_secs(const char *s)
{
	double parts[3] = { 0, 0, 0 }, days = 0, frac = 0;
	const char *p = s;
	char *end;
	int n = 0;

	if (*s == '\0')
		return -1;
	if (strchr(s, '-') != NULL) {
		days = strtod(p, &end);
		if (*end != '-')
			return -1;
		p = end + 1;
	}
	for (;;) {
		if (n == 3 || *p < '0' || *p > '9')
			return -1;
		parts[n++] = (double)strtoul(p, &end, 10);
		p = end;
		if (*p != ':')
			break;
		p++;
	}
	if (*p == '.') {
		frac = strtod(p, &end);
		p = end;
	}
	if (*p != '\0' || n < 2)
		return -1;
	if (n == 2)
		return days * 86400 + parts[0] * 60 + parts[1] + frac;
	return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2] +
	    frac;
}

/* Parses a sacct size ("204800K", "2G", "512Mn", "256Mc", "1048576")
 * into bytes; *per_cpu is set for a "c" suffix.  -1 when not one. */
static double
sacct_bytes(const char *s, int *per_cpu)
{
	static const char units[] = "KMGTP";
	const char *u;
	char *end;
	double v;

	if (per_cpu != NULL)
		*per_cpu = 0;
	if (*s < '0' || *s > '9')
		return -1;
	v = strtod(s, &end);
	if (*end != '\0' && (u = strchr(units, *end)) != NULL) {
		v *= (double)(1ULL << (10 * (u - units + 1)));
		end++;
	}
	if (*end == 'c' && per_cpu != NULL)
		*per_cpu = 1;
	if (*end == 'c' || *end == 'n')
		end++;
	return *end == '\0' ? v : -1;
}

void
vg_slurm_parse_usage(char **f, struct vg_slurm_row *row)
{
	struct vg_usage *u = &row->usage;
	double tot = sacct_secs(f[0]), usr = sacct_secs(f[1]);
	double sys = sacct_secs(f[2]), rss = sacct_bytes(f[3], NULL), v;
	char *tres, *tok, *save = NULL, *end;
	int per_cpu;
	long n;

	/* jobacct_gather/none leaves every CPU field at 00:00:00 and
	 * MaxRSS empty (Slurm 22.05): no measurement, so unknown.  A job
	 * that ran has some CPU time at Slurm's millisecond resolution. */
	if (tot == 0 && usr <= 0 && sys <= 0)
		tot = usr = sys = -1;
	if (usr >= 0 && sys >= 0) {
		u->cpu_user = usr;
		u->cpu_sys = sys;
		/* TotalCPU also counts what user + system missed. */
		if (tot > usr + sys)
			u->cpu_user = tot - sys;
		u->known |= VG_USAGE_CPU;
	} else if (tot >= 0) {
		u->cpu_user = tot;
		u->cpu_sys = 0;
		u->known |= VG_USAGE_CPU;
	}
	if (rss > 0) {
		u->max_rss = (long long)rss;
		u->known |= VG_USAGE_RSS;
	}
	if ((v = sacct_secs(f[4])) >= 0)
		row->elapsed = v;
	n = strtol(f[5], &end, 10);
	if (end != f[5] && *end == '\0' && n > 0 && n < 1000000) {
		u->cpus = (int)n;
		u->known |= VG_USAGE_CPUS;
	}
	if ((v = sacct_bytes(f[6], &per_cpu)) > 0) {
		u->mem_limit = (long long)(per_cpu && u->cpus > 0 ?
		    v * u->cpus : v);
		u->known |= VG_USAGE_MEM;
	}
	/* AllocTRES: "billing=2,cpu=2,gres/gpu=1,mem=512M,node=1". */
	tres = vg_xstrdup(f[7]);
	for (tok = strtok_r(tres, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "mem=", 4) == 0 &&
		    (v = sacct_bytes(tok + 4, NULL)) > 0) {
			u->mem_limit = (long long)v;
			u->known |= VG_USAGE_MEM;
		} else if (strncmp(tok, "gres/gpu=", 9) == 0) {
			n = strtol(tok + 9, &end, 10);
			if (end != tok + 9 && *end == '\0' && n >= 0 &&
			    n < 1000000) {
				u->gpus = (int)n;
				u->known |= VG_USAGE_GPUS;
			}
		} else if (strncmp(tok, "cpu=", 4) == 0 &&
		    !(u->known & VG_USAGE_CPUS)) {
			n = strtol(tok + 4, &end, 10);
			if (end != tok + 4 && *end == '\0' && n > 0 &&
			    n < 1000000) {
				u->cpus = (int)n;
				u->known |= VG_USAGE_CPUS;
			}
		}
	}
	free(tres);
}

void
vg_slurm_add_step(struct vg_slurm_row *job, const struct vg_slurm_row *step)
{
	struct vg_usage *j = &job->usage;
	const struct vg_usage *s = &step->usage;

	if (s->known & VG_USAGE_RSS && (!(j->known & VG_USAGE_RSS) ||
	    s->max_rss > j->max_rss)) {
		j->max_rss = s->max_rss;
		j->known |= VG_USAGE_RSS;
	}
	/* The job's own TotalCPU is the sum of its steps where Slurm
	 * fills it; where it falls short, the steps' sum stands. */
	if (s->known & VG_USAGE_CPU) {
		job->step_user += s->cpu_user;
		job->step_sys += s->cpu_sys;
		if (!(j->known & VG_USAGE_CPU) || j->cpu_user + j->cpu_sys <
		    job->step_user + job->step_sys) {
			j->cpu_user = job->step_user;
			j->cpu_sys = job->step_sys;
		}
		j->known |= VG_USAGE_CPU;
	}
}



/* Resources of the next attempt after an OOM or a TIMEOUT. */
void
vg_slurm_scale(const struct vg_retry *rt, enum vg_state state,
    const struct vg_resources *prev, uint64_t max_time,
    struct vg_resources *next)
{
	double v;

	*next = *prev;
	if (state == VG_ST_OOM && prev->memory > 0 && rt->memory_factor > 1) {
		v = (double)prev->memory * rt->memory_factor;
		next->memory = v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
	}
	if (state == VG_ST_TIMEOUT && prev->time > 0 && rt->time_factor > 1) {
		v = (double)prev->time * rt->time_factor;
		next->time = v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
	}
	if (max_time > 0 && next->time > max_time)
		next->time = max_time;
}
