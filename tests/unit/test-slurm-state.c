/*
 * test-slurm-state.c - parsing of sacct, squeue, sbatch and scontrol
 * output (texts captured from the Slurm 22.05 test cluster of
 * tests/harness/slurm-up), the mapping of every Slurm state onto vigil's,
 * merging with result records, the adaptive poll interval, retry
 * resources, and transient error recognition.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "schedulers/slurm.h"

/* sacct -X -n -P --noconvert -o JobID,State,ExitCode,Reason,NodeList
 * -j 12,13,14: a cancelled job, a job killed by SIGKILL, an array of 5
 * with throttle 1 (one failed, one running, three pending). */
static const char sacct_out[] =
    "12|CANCELLED by 0|0:0|None|vm\n"
    "14|FAILED|0:9|None|vm\n"
    "13_0|FAILED|3:0|None|vm\n"
    "13_1|RUNNING|0:0|JobArrayTaskLimit|vm\n"
    "13_[2-4%1]|PENDING|0:0|JobArrayTaskLimit|None assigned\n";

/* squeue -h -r -t all --me --name=vgtest -O VG_SLURM_SQUEUE_FORMAT */
static const char squeue_out[] =
    "12|N/A|CANCELLED|None|15|vm\n"
    "13|1|FAILED|NonZeroExitCode|768|vm\n"
    "13|0|FAILED|NonZeroExitCode|768|vm\n"
    "14|N/A|FAILED|JobLaunchFailure|9|vm\n"
    "13|2|PENDING|JobArrayTaskLimit|0|\n";

static const char config_out[] =
    "Configuration data as of 2026-11-30T01:49:22\n"
    "AccountingStorageBackupHost = (null)\n"
    "AccountingStorageEnforce = none\n"
    "AccountingStorageHost   = 127.0.0.1\n"
    "AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk\n"
    "AccountingStorageType   = accounting_storage/slurmdbd\n"
    "MaxArraySize            = 1001\n"
    "MaxDBDMsgs              = 40004\n"
    "MaxJobCount             = 20000\n"
    "MinJobAge               = 300 sec\n"
    "SLURM_VERSION           = 22.05.8\n";

static void
test_parse_sacct(void **state)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_err e;

	assert_int_equal(vg_slurm_parse_sacct(sacct_out, &rows, &e), 0);
	assert_int_equal(rows.n, 7);
	assert_int_equal(rows.v[0].job, 12);
	assert_int_equal(rows.v[0].task, -1);
	assert_string_equal(rows.v[0].state, "CANCELLED");
	assert_int_equal(rows.v[0].by_uid, 0);
	assert_int_equal(rows.v[1].signal, 9);
	assert_int_equal(rows.v[1].exit_code, 0);
	assert_int_equal(rows.v[2].job, 13);
	assert_int_equal(rows.v[2].task, 0);
	assert_int_equal(rows.v[2].exit_code, 3);
	assert_string_equal(rows.v[3].reason, "JobArrayTaskLimit");
	assert_string_equal(rows.v[3].nodes, "vm");
	assert_int_equal(rows.v[4].task, 2);
	assert_int_equal(rows.v[6].task, 4);
	assert_string_equal(rows.v[6].state, "PENDING");
	assert_int_equal(rows.v[6].by_uid, -1);
	vg_slurm_rows_release(&rows);
	(void)state;
}

/* sacct without -X: usage fields, and step lines merged into their job. */
static const char sacct_usage_out[] =
    "20_1|COMPLETED|0:0|None|vm|00:01.500|00:01.200|00:00.300||"
    "00:00:05|2|1Gn|billing=2,cpu=2,gres/gpu=1,mem=1G,node=1\n"
    "20_1.batch|COMPLETED|0:0||vm|00:01.500|00:01.200|00:00.300|"
    "204800K|00:00:05|2||\n"
    "20_1.extern|COMPLETED|0:0||vm|00:00:00|00:00:00|00:00:00|1024K|"
    "00:00:05|2||\n"
    "21|FAILED|1:0|None|vm|1-02:03:04|00:00:00|00:00:00||01:00:00|4|"
    "256Mc|\n"
    "21.0|FAILED|1:0||vm|00:02.000|00:01.000|00:01.000|1G|00:00:05|4||"
    "\n"
    "22|PENDING|0:0|None|None assigned|00:00:00|00:00:00|00:00:00||"
    "00:00:00|0|2G|\n";

/* The usage of sacct's answer lands in the job's row. */
static void
test_parse_sacct_usage(void **state)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_result r;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_slurm_parse_sacct(sacct_usage_out, &rows, &e), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(rows.v[0].job, 20);
	assert_int_equal(rows.v[0].task, 1);
	assert_true(rows.v[0].usage.known & VG_USAGE_CPU);
	assert_true(fabs(rows.v[0].usage.cpu_user - 1.2) < 1e-9);
	assert_true(fabs(rows.v[0].usage.cpu_sys - 0.3) < 1e-9);
	assert_int_equal(rows.v[0].usage.max_rss, 204800LL * 1024);
	assert_int_equal(rows.v[0].usage.cpus, 2);
	assert_int_equal(rows.v[0].usage.gpus, 1);
	assert_int_equal(rows.v[0].usage.mem_limit, 1LL << 30);
	assert_true(fabs(rows.v[0].elapsed - 5) < 1e-9);
	/* TotalCPU of days; ReqMem per CPU; the step's peak. */
	assert_int_equal(rows.v[1].job, 21);
	assert_true(fabs(rows.v[1].usage.cpu_user + rows.v[1].usage.cpu_sys -
	    (86400 + 2 * 3600 + 3 * 60 + 4)) < 1e-6);
	assert_int_equal(rows.v[1].usage.mem_limit, 4LL * 256 << 20);
	assert_int_equal(rows.v[1].usage.max_rss, 1LL << 30);
	assert_false(rows.v[1].usage.known & VG_USAGE_GPUS);
	/* Pending: given what it asked, no use. */
	assert_false(rows.v[2].usage.known & VG_USAGE_RSS);
	assert_false(rows.v[2].usage.known & VG_USAGE_CPUS);
	assert_int_equal(vg_slurm_state_map(&rows.v[0], &r),
	    VG_ST_SUCCEEDED);
	assert_int_equal(r.usage.max_rss, 204800LL * 1024);
	vg_slurm_rows_release(&rows);
	(void)state;
}

/* What Slurm 22.05 with jobacct_gather/none answers (the test cluster's
 * sacct, verbatim, then a line with a zero MaxRSS): zero CPU and no
 * MaxRSS are no measurement, the allocation is. */
static const char sacct_nogather_out[] =
    "225_0|COMPLETED|0:0|None|vm|00:00:00|00:00:00|00:00:00||00:00:03|1|"
    "256M|billing=1,cpu=1,mem=256M,node=1\n"
    "225_0.batch|COMPLETED|0:0||vm|00:00:00|00:00:00|00:00:00||00:00:03|"
    "1||cpu=1,mem=256M,node=1\n"
    /* Not seen here, but a zero peak is no measurement either. */
    "226|COMPLETED|0:0|None|vm|00:00:00|00:00:00|00:00:00|0|00:00:03|1|"
    "256M|billing=1,cpu=1,mem=256M,node=1\n";

static void
test_parse_sacct_nogather(void **state)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_slurm_parse_sacct(sacct_nogather_out, &rows, &e),
	    0);
	assert_int_equal(rows.n, 2);
	assert_int_equal(rows.v[1].job, 226);
	assert_int_equal(rows.v[1].usage.known, VG_USAGE_CPUS | VG_USAGE_MEM);
	assert_int_equal(rows.v[0].job, 225);
	assert_int_equal(rows.v[0].usage.known, VG_USAGE_CPUS | VG_USAGE_MEM);
	assert_int_equal(rows.v[0].usage.cpus, 1);
	assert_int_equal(rows.v[0].usage.mem_limit, 256LL << 20);
	assert_true(fabs(rows.v[0].elapsed - 3) < 1e-9);
	vg_slurm_rows_release(&rows);
	(void)state;
}

/* A record's usage is completed by Slurm's allocation. */
static void
test_merge_usage(void **state)
{
	struct vg_usage rec = { .known = VG_USAGE_CPU | VG_USAGE_RSS,
	    .cpu_user = 1, .cpu_sys = 0.5, .max_rss = 100 };
	struct vg_usage sl = { .known = VG_USAGE_CPU | VG_USAGE_RSS |
	    VG_USAGE_CPUS | VG_USAGE_MEM, .cpu_user = 9, .max_rss = 900,
	    .cpus = 4, .mem_limit = 1 << 30 };

	vg_cluster_merge_usage(&rec, &sl);
	assert_true(fabs(rec.cpu_user - 1) < 1e-9);
	assert_int_equal(rec.max_rss, 100);
	assert_int_equal(rec.cpus, 4);
	assert_int_equal(rec.mem_limit, 1 << 30);
	assert_true(rec.known & VG_USAGE_CPUS);
	assert_false(rec.known & VG_USAGE_GPUS);
	(void)state;
}

static void
test_parse_sacct_bad(void **state)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_err e;

	assert_int_equal(vg_slurm_parse_sacct("12|RUNNING|0:0|None\n", &rows,
	    &e), VG_EPARSE);
	assert_string_equal(e.msg, "sacct: expected 13 fields (or 5) "
	    "separated by '|' in '12|RUNNING|0:0|None'");
	vg_slurm_rows_release(&rows);
	assert_int_equal(vg_slurm_parse_sacct("x1|RUNNING|0:0|None|n\n",
	    &rows, &e), VG_EPARSE);
	assert_string_equal(e.msg, "sacct: bad JobID 'x1'");
	vg_slurm_rows_release(&rows);
	assert_int_equal(vg_slurm_parse_sacct("5_[3-1]|PENDING|0:0|None|n\n",
	    &rows, &e), VG_EPARSE);
	assert_string_equal(e.msg, "slurm: bad array task list '[3-1]'");
	vg_slurm_rows_release(&rows);
	assert_int_equal(vg_slurm_parse_sacct(
	    "5_[0-99999999]|PENDING|0:0|None|n\n", &rows, &e), VG_ELIMIT);
	assert_string_equal(e.msg, "slurm: more than 2000000 array elements "
	    "in one answer");
	vg_slurm_rows_release(&rows);
	/* Empty answers are fine (nothing known yet). */
	assert_int_equal(vg_slurm_parse_sacct("", &rows, &e), 0);
	assert_int_equal(rows.n, 0);
	(void)state;
}

static void
test_parse_squeue(void **state)
{
	struct vg_slurm_rows rows = { NULL, 0, 0 };
	struct vg_err e;

	assert_int_equal(vg_slurm_parse_squeue(squeue_out, &rows, &e), 0);
	assert_int_equal(rows.n, 5);
	assert_int_equal(rows.v[0].signal, 15);
	assert_int_equal(rows.v[1].exit_code, 3);
	assert_int_equal(rows.v[1].task, 1);
	assert_string_equal(rows.v[3].reason, "JobLaunchFailure");
	assert_int_equal(rows.v[3].signal, 9);
	assert_string_equal(rows.v[4].nodes, "");
	vg_slurm_rows_release(&rows);
	assert_int_equal(vg_slurm_parse_squeue("13|1,4-5%2|PENDING|None|0|\n",
	    &rows, &e), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(rows.v[2].task, 5);
	vg_slurm_rows_release(&rows);
	assert_int_equal(vg_slurm_parse_squeue("13|1|PENDING|None|0\n",
	    &rows, &e), VG_EPARSE);
	assert_string_equal(e.msg, "squeue: expected 6 fields separated by "
	    "'|' in '13|1|PENDING|None|0'");
	vg_slurm_rows_release(&rows);
	(void)state;
}

static void
test_parse_misc(void **state)
{
	struct vg_slurm_conf_info ci;
	struct vg_err e;
	unsigned long job;
	uint64_t t;

	assert_int_equal(vg_slurm_parse_config(config_out, &ci, &e), 0);
	assert_int_equal(ci.max_array, 1001);
	assert_int_equal(ci.min_job_age, 300);
	assert_int_equal(ci.accounting, 1);
	assert_string_equal(ci.version, "22.05.8");
	assert_int_equal(vg_slurm_parse_config(
	    "AccountingStorageType   = accounting_storage/none\n"
	    "MaxArraySize            = 4\n", &ci, &e), 0);
	assert_int_equal(ci.accounting, 0);
	assert_int_equal(ci.min_job_age, 300);
	assert_int_equal(vg_slurm_parse_config("Foo = 1\n", &ci, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "scontrol show config: no MaxArraySize "
	    "in its output");

	assert_int_equal(vg_slurm_parse_jobid("1234\n", &job, &e), 0);
	assert_int_equal(job, 1234);
	assert_int_equal(vg_slurm_parse_jobid("77;cluster2\n", &job, &e), 0);
	assert_int_equal(job, 77);
	assert_int_equal(vg_slurm_parse_jobid("Submitted batch job 5", &job,
	    &e), VG_EPARSE);
	assert_string_equal(e.msg, "sbatch: expected a job id, got "
	    "'Submitted batch job 5'");

	assert_int_equal(vg_slurm_parse_maxtime("PartitionName=short "
	    "MaxTime=00:05:00 MinNodes=0", &t, &e), 0);
	assert_int_equal(t, 300);
	assert_int_equal(vg_slurm_parse_maxtime("MaxTime=UNLIMITED", &t, &e),
	    0);
	assert_int_equal(t, 0);
	assert_int_equal(vg_slurm_parse_maxtime("MaxTime=2-12:00:00", &t,
	    &e), 0);
	assert_int_equal(t, 2 * 86400 + 12 * 3600);
	assert_int_equal(vg_slurm_parse_maxtime("MaxTime=1-06", &t, &e), 0);
	assert_int_equal(t, 86400 + 6 * 3600);
	assert_int_equal(vg_slurm_parse_maxtime("MaxTime=45", &t, &e), 0);
	assert_int_equal(t, 45 * 60);
	assert_int_equal(vg_slurm_parse_maxtime("MaxTime=1:2:3:4", &t, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "scontrol show partition: bad MaxTime "
	    "'1:2:3:4'");
	(void)state;
}

/* Maps one row built from its fields. */
static enum vg_state
map(const char *st, int code, int sig, long by, const char *reason,
    struct vg_result *r)
{
	struct vg_slurm_row row;

	memset(&row, 0, sizeof row);
	snprintf(row.state, sizeof row.state, "%s", st);
	row.exit_code = code;
	row.signal = sig;
	row.by_uid = by;
	snprintf(row.reason, sizeof row.reason, "%s", reason);
	snprintf(row.nodes, sizeof row.nodes, "%s", "n7");
	return vg_slurm_state_map(&row, r);
}

static void
test_state_map(void **state)
{
	static const struct {
		const char	*slurm;
		enum vg_state	 want;
	} t[] = {
		{ "PENDING", VG_ST_QUEUED },
		{ "CONFIGURING", VG_ST_RUNNING },
		{ "RUNNING", VG_ST_RUNNING },
		{ "COMPLETING", VG_ST_RUNNING },
		{ "STAGE_OUT", VG_ST_RUNNING },
		{ "SIGNALING", VG_ST_RUNNING },
		{ "RESIZING", VG_ST_RUNNING },
		{ "SUSPENDED", VG_ST_SUSPENDED },
		{ "STOPPED", VG_ST_SUSPENDED },
		{ "REQUEUED", VG_ST_REQUEUED },
		{ "REQUEUE_HOLD", VG_ST_REQUEUED },
		{ "REQUEUE_FED", VG_ST_REQUEUED },
		{ "SPECIAL_EXIT", VG_ST_REQUEUED },
		{ "RESV_DEL_HOLD", VG_ST_QUEUED },
		{ "COMPLETED", VG_ST_SUCCEEDED },
		{ "FAILED", VG_ST_FAILED },
		{ "CANCELLED", VG_ST_CANCELLED },
		{ "TIMEOUT", VG_ST_TIMEOUT },
		{ "OUT_OF_MEMORY", VG_ST_OOM },
		{ "NODE_FAIL", VG_ST_NODE_FAIL },
		{ "PREEMPTED", VG_ST_PREEMPTED },
		{ "BOOT_FAIL", VG_ST_BOOT_FAIL },
		{ "DEADLINE", VG_ST_DEADLINE },
		{ "REVOKED", VG_ST_CANCELLED },
		{ "UNKNOWN", VG_ST_RUNNING },
		{ "SOMETHING_NEW", VG_ST_RUNNING },
	};
	struct vg_result r;
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		assert_int_equal(map(t[i].slurm, 0, 0, -1, "None", &r),
		    t[i].want);
		assert_int_equal(r.state, t[i].want);
	}
	assert_int_equal(map("PENDING", 0, 0, -1, "Resources", &r),
	    VG_ST_QUEUED);
	assert_string_equal(r.reason, "Resources: waiting for resources");
	assert_int_equal(map("PENDING", 0, 0, -1, "JobArrayTaskLimit", &r),
	    VG_ST_QUEUED);
	assert_string_equal(r.reason, "JobArrayTaskLimit: array throttle "
	    "(slurm.array_parallelism) reached");
	assert_int_equal(map("PENDING", 0, 0, -1, "SomeNewReason", &r),
	    VG_ST_QUEUED);
	assert_string_equal(r.reason, "SomeNewReason");
	assert_int_equal(map("FAILED", 3, 0, -1, "NonZeroExitCode", &r),
	    VG_ST_FAILED);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.reason, "exit code 3, NonZeroExitCode on n7");
	assert_string_equal(r.node, "n7");
	assert_int_equal(map("FAILED", 0, 9, -1, "None", &r), VG_ST_FAILED);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, 9);
	assert_string_equal(r.reason, "killed by signal 9 on n7");
	/* COMPLETED with a non-zero code is not a success. */
	assert_int_equal(map("COMPLETED", 2, 0, -1, "None", &r),
	    VG_ST_FAILED);
	assert_string_equal(r.reason, "exit code 2");
	assert_int_equal(map("CANCELLED", 0, 0, 0, "None", &r),
	    VG_ST_CANCELLED);
	assert_string_equal(r.reason, "cancelled by root (uid 0) on n7");
	/* --kill-on-invalid-dep: Slurm cancels, sacct keeps the pending
	 * reason, squeue says why; a user's scancel stays CANCELLED. */
	assert_int_equal(map("CANCELLED", 0, 0, -1, "Dependency", &r),
	    VG_ST_DEPENDENCY);
	assert_string_equal(r.reason, "Slurm: the jobs of a run it waits for "
	    "(after:) did not end as asked on n7");
	assert_int_equal(map("CANCELLED", 0, 0, -1,
	    "DependencyNeverSatisfied", &r), VG_ST_DEPENDENCY);
	assert_int_equal(map("CANCELLED", 0, 0, 0, "Dependency", &r),
	    VG_ST_CANCELLED);
	assert_int_equal(map("PENDING", 0, 0, -1, "Dependency", &r),
	    VG_ST_QUEUED);
	assert_int_equal(map("TIMEOUT", 0, 15, -1, "None", &r),
	    VG_ST_TIMEOUT);
	assert_string_equal(r.reason, "reached its Slurm time limit on n7");
	assert_int_equal(map("SOMETHING_NEW", 0, 0, -1, "None", &r),
	    VG_ST_RUNNING);
	assert_string_equal(r.reason, "unknown Slurm state 'SOMETHING_NEW'");
	assert_null(vg_slurm_reason_text("NoSuchReason"));
	(void)state;
}

static void
test_merge(void **state)
{
	struct vg_result rec, sl;

	memset(&rec, 0, sizeof rec);
	memset(&sl, 0, sizeof sl);
	/* Killed by SIGTERM at the time limit: Slurm knows it was TIMEOUT. */
	rec.state = VG_ST_FAILED;
	rec.exit_code = -1;
	rec.signal = 15;
	sl.state = VG_ST_TIMEOUT;
	snprintf(sl.reason, sizeof sl.reason, "reached its Slurm time limit");
	snprintf(sl.node, sizeof sl.node, "n3");
	vg_cluster_merge(&rec, &sl);
	assert_int_equal(rec.state, VG_ST_TIMEOUT);
	assert_string_equal(rec.reason, "reached its Slurm time limit");
	assert_string_equal(rec.node, "n3");
	/* A clean exit 0 stays a success whatever Slurm says. */
	memset(&rec, 0, sizeof rec);
	rec.state = VG_ST_SUCCEEDED;
	vg_cluster_merge(&rec, &sl);
	assert_int_equal(rec.state, VG_ST_SUCCEEDED);
	/* A non-zero exit with Slurm FAILED stays the record's. */
	memset(&rec, 0, sizeof rec);
	rec.state = VG_ST_FAILED;
	rec.exit_code = 4;
	snprintf(rec.reason, sizeof rec.reason, "exit code 4");
	sl.state = VG_ST_FAILED;
	vg_cluster_merge(&rec, &sl);
	assert_int_equal(rec.state, VG_ST_FAILED);
	assert_string_equal(rec.reason, "exit code 4");
	vg_cluster_merge(&rec, NULL);
	(void)state;
}

static void
test_pacer(void **state)
{
	struct vg_cluster_pacer p;

	vg_cluster_pacer_init(&p, 2, 10);
	assert_true(p.cur == 2);
	assert_true(vg_cluster_pacer_next(&p, 0) == 3);
	assert_true(vg_cluster_pacer_next(&p, 0) == 4.5);
	assert_true(vg_cluster_pacer_next(&p, 0) == 6.75);
	assert_true(vg_cluster_pacer_next(&p, 0) == 10);
	assert_true(vg_cluster_pacer_next(&p, 0) == 10);
	assert_true(vg_cluster_pacer_next(&p, 1) == 2);
	vg_cluster_pacer_init(&p, 0, 0);
	assert_true(p.min == 2 && p.max == 2);
	(void)state;
}

static void
test_scale(void **state)
{
	struct vg_retry rt = { .max = 3, .memory_factor = 2,
	    .time_factor = 1.5 };
	struct vg_resources prev = { .cpus = 2, .memory = 1ULL << 30,
	    .time = 3600 }, next;

	vg_slurm_scale(&rt, VG_ST_OOM, &prev, 0, &next);
	assert_true(next.memory == 2ULL << 30);
	assert_true(next.time == 3600);
	vg_slurm_scale(&rt, VG_ST_TIMEOUT, &prev, 0, &next);
	assert_true(next.memory == 1ULL << 30);
	assert_true(next.time == 5400);
	/* Capped at the partition's MaxTime. */
	vg_slurm_scale(&rt, VG_ST_TIMEOUT, &prev, 4000, &next);
	assert_true(next.time == 4000);
	vg_slurm_scale(&rt, VG_ST_FAILED, &prev, 0, &next);
	assert_true(next.memory == prev.memory && next.time == prev.time);
	(void)state;
}

static void
test_transient(void **state)
{
	assert_true(vg_slurm_transient("sbatch: error: Batch job submission "
	    "failed: Socket timed out on send/recv operation"));
	assert_true(vg_slurm_transient("sbatch: error: Slurm temporarily "
	    "unable to accept job, sleeping and retrying"));
	assert_true(vg_slurm_transient("squeue: error: Unable to contact "
	    "slurm controller (connect failure)"));
	assert_true(vg_slurm_transient("error: RPC rate limit exceeded"));
	assert_false(vg_slurm_transient("sbatch: error: invalid partition "
	    "specified: nope"));
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_sacct),
		cmocka_unit_test(test_parse_sacct_bad),
		cmocka_unit_test(test_parse_sacct_usage),
		cmocka_unit_test(test_parse_sacct_nogather),
		cmocka_unit_test(test_merge_usage),
		cmocka_unit_test(test_parse_squeue),
		cmocka_unit_test(test_parse_misc),
		cmocka_unit_test(test_state_map),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_pacer),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_transient),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
