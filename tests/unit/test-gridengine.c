/*
 * test-gridengine.c - the gridengine scheduler's pure parts: qstat -xml
 * (real output of Son of Grid Engine 8.1.9, ranges with steps, entities,
 * comments, and broken input), qacct -j records and their states, qconf
 * -sconf and qsub -terse, qstat states; the job script (exact text, and
 * a hostile run directory and vigil path run through the real /bin/sh)
 * and qsub's argv (exact, and every refusal).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/path.h"
#include "schedulers/gridengine.h"
#include "schedulers/scheduler.h"

/* What qstat -xml -u root printed with two tasks of job 3 running and
 * job 4, an array of 5, pending. */
static const char qstat_xml[] =
"<?xml version='1.0'?>\n"
"<job_info  xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/sge/source/dist/"
"util/resources/schemas/qstat/qstat.xsd\">\n"
"  <queue_info>\n"
"    <job_list state=\"running\">\n"
"      <JB_job_number>3</JB_job_number>\n"
"      <JAT_prio>0.50000</JAT_prio>\n"
"      <JB_name>vigil-20261205-x</JB_name>\n"
"      <JB_owner>root</JB_owner>\n"
"      <state>r</state>\n"
"      <JAT_start_time>2026-12-05T21:37:14</JAT_start_time>\n"
"      <queue_name>all.q@vm</queue_name>\n"
"      <slots>1</slots>\n"
"      <tasks>1</tasks>\n"
"    </job_list>\n"
"    <job_list state=\"running\">\n"
"      <JB_job_number>3</JB_job_number>\n"
"      <state>t</state>\n"
"      <queue_name>all.q@vm</queue_name>\n"
"      <tasks>3</tasks>\n"
"    </job_list>\n"
"  </queue_info>\n"
"  <job_info>\n"
"    <job_list state=\"pending\">\n"
"      <JB_job_number>4</JB_job_number>\n"
"      <JB_name>pend</JB_name>\n"
"      <state>qw</state>\n"
"      <queue_name></queue_name>\n"
"      <slots>1</slots>\n"
"      <tasks>1-5:1</tasks>\n"
"    </job_list>\n"
"    <job_list state=\"pending\">\n"
"      <JB_job_number>9</JB_job_number>\n"
"      <state>hqw</state>\n"
"    </job_list>\n"
"  </job_info>\n"
"</job_info>\n";

static void
test_qstat(void **state)
{
	struct vg_ge_rows r = { NULL, 0, 0 };
	const struct vg_ge_row *row;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_ge_parse_qstat(qstat_xml, strlen(qstat_xml), &r,
	    &e), 0);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.v[0].job, 3);
	assert_int_equal(r.v[0].task_lo, 1);
	assert_int_equal(r.v[0].task_hi, 1);
	assert_string_equal(r.v[0].state, "r");
	assert_string_equal(r.v[0].queue, "all.q@vm");
	assert_string_equal(r.v[1].state, "t");
	assert_int_equal(r.v[1].task_lo, 3);
	assert_int_equal(r.v[2].job, 4);
	assert_int_equal(r.v[2].task_lo, 1);
	assert_int_equal(r.v[2].task_hi, 5);
	assert_string_equal(r.v[2].queue, "");
	assert_int_equal(r.v[3].task_lo, 0);
	assert_string_equal(r.v[3].state, "hqw");
	row = vg_ge_rows_find(&r, 4, 4);
	assert_non_null(row);
	assert_string_equal(row->state, "qw");
	assert_null(vg_ge_rows_find(&r, 3, 2));	/* task 2 ended */
	assert_null(vg_ge_rows_find(&r, 4, 6));
	assert_null(vg_ge_rows_find(&r, 5, 1));
	assert_non_null(vg_ge_rows_find(&r, 9, 0));
	vg_ge_rows_release(&r);
}

/* Steps, lists, entities, comments, empty elements, attributes. */
static void
test_qstat_forms(void **state)
{
	const char *x = "<!-- hi <job_list> -->\n<job_info><job_list a='>'>"
	    "<JB_job_number> 7 </JB_job_number><state>r&amp;</state>"
	    "<queue_name>q&lt;1&gt;@h</queue_name><empty/>"
	    "<tasks>2,4-8:2,10-11:1</tasks></job_list></job_info>";
	struct vg_ge_rows r = { NULL, 0, 0 };
	struct vg_err e;
	size_t i;
	static const long lo[] = { 2, 4, 6, 8, 10 }, hi[] = { 2, 4, 6, 8, 11 };

	(void)state;
	assert_int_equal(vg_ge_parse_qstat(x, strlen(x), &r, &e), 0);
	assert_int_equal(r.n, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(r.v[i].job, 7);
		assert_int_equal(r.v[i].task_lo, lo[i]);
		assert_int_equal(r.v[i].task_hi, hi[i]);
	}
	assert_string_equal(r.v[0].state, "r&");
	assert_string_equal(r.v[0].queue, "q<1>@h");
	vg_ge_rows_release(&r);
	/* nothing queued */
	x = "<?xml version='1.0'?>\n<job_info><queue_info></queue_info>"
	    "<job_info></job_info></job_info>\n";
	assert_int_equal(vg_ge_parse_qstat(x, strlen(x), &r, &e), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(vg_ge_parse_qstat("", 0, &r, &e), 0);
	vg_ge_rows_release(&r);
}

/* Broken input is an error with where it broke, never rows. */
static void
test_qstat_bad(void **state)
{
	static const struct { const char *in, *msg; } cases[] = {
		{ "<a><b></a>", "qstat -xml: unexpected </a> at byte 6" },
		{ "</a>", "qstat -xml: unexpected </a> at byte 0" },
		{ "<a><b>", "qstat -xml: output ends inside an element "
		  "(6 bytes)" },
		{ "<a", "qstat -xml: output ends inside an element (2 bytes)" },
		{ "<!-- x", "qstat -xml: output ends inside an element "
		  "(6 bytes)" },
		{ "< >", "qstat -xml: empty tag at byte 0" },
		{ "<job_list><JB_job_number>x</JB_job_number></job_list>",
		  "qstat: bad job number 'x'" },
		{ "<job_list></job_list>", "qstat: bad job number ''" },
		{ "<job_list><JB_job_number>3</JB_job_number><tasks>5-2:1"
		  "</tasks></job_list>", "qstat: bad task list '5-2:1' of job "
		  "3" },
		{ "<job_list><JB_job_number>3</JB_job_number><tasks>1-4:0"
		  "</tasks></job_list>", "qstat: bad task list '1-4:0' of job "
		  "3" },
		{ "<job_list><JB_job_number>3</JB_job_number><tasks>1,"
		  "</tasks></job_list>", "qstat: bad task list '1,' of job 3" },
		{ "<job_list><JB_job_number>3</JB_job_number><tasks>1-3x"
		  "</tasks></job_list>", "qstat: bad task list '1-3x' of job "
		  "3" },
		{ "<job_list><JB_job_number>3</JB_job_number><tasks>"
		  "1-9999999:1,1-9999999:3</tasks></job_list>", "qstat: more "
		  "than 1000000 array tasks" },
	};
	struct vg_ge_rows r = { NULL, 0, 0 };
	struct vg_err e;
	char deep[200] = "";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		vg_err_init(&e);
		assert_int_not_equal(vg_ge_parse_qstat(cases[i].in,
		    strlen(cases[i].in), &r, &e), 0);
		if (strcmp(e.msg, cases[i].msg) != 0)
			fail_msg("case %zu: got '%s'", i, e.msg);
		vg_ge_rows_release(&r);
	}
	for (i = 0; i < 17; i++)
		memcpy(deep + 3 * i, "<a>", 4);
	assert_int_equal(vg_ge_parse_qstat(deep, strlen(deep), &r, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "qstat -xml: nested deeper than 16 at "
	    "byte 50");
	vg_ge_rows_release(&r);
}

/* Two of qacct's records as it prints them (fields trimmed). */
static const char qacct_text[] =
"==============================================================\n"
"qname        all.q               \n"
"hostname     vm                  \n"
"jobname      vigil-20261205-x    \n"
"jobnumber    3                   \n"
"taskid       2                   \n"
"slots        1                   \n"
"failed       0    \n"
"exit_status  3                   \n"
"ru_wallclock 0s\n"
"cpu          0.059s\n"
"maxvmem      3.430MB\n"
"==============================================================\n"
"hostname     vm\n"
"jobnumber    2\n"
"taskid       undefined\n"
"slots        2\n"
"failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit\n"
"exit_status  137                  (Killed)\n"
"ru_wallclock 4s\n"
"maxvmem      1.5G\n";

static void
test_qacct(void **state)
{
	struct vg_ge_accts a = { NULL, 0, 0 };
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_ge_parse_qacct(qacct_text, &a, &e), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.v[0].job, 3);
	assert_int_equal(a.v[0].task, 2);
	assert_int_equal(a.v[0].failed, 0);
	assert_int_equal(a.v[0].exit_status, 3);
	assert_string_equal(a.v[0].host, "vm");
	assert_true(a.v[0].cpu > 0.058 && a.v[0].cpu < 0.06);
	assert_true(a.v[0].maxvmem > 3.43 * 1048576 - 1 &&
	    a.v[0].maxvmem < 3.43 * 1048576 + 1);
	assert_int_equal(a.v[1].job, 2);
	assert_int_equal(a.v[1].task, 0);
	assert_int_equal(a.v[1].failed, 37);
	assert_string_equal(a.v[1].failed_text, "qmaster enforced h_rt, "
	    "h_cpu, or h_vmem limit");
	assert_int_equal(a.v[1].exit_status, 137);
	assert_int_equal(a.v[1].slots, 2);
	assert_true(a.v[1].wallclock == 4);
	assert_true(a.v[1].maxvmem == 1.5 * 1024 * 1024 * 1024);
	vg_ge_accts_release(&a);
	assert_int_equal(vg_ge_parse_qacct("", &a, &e), 0);
	assert_int_equal(a.n, 0);
	assert_int_equal(vg_ge_parse_qacct("jobnumber x\n", &a, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "qacct: bad jobnumber 'x'");
	vg_ge_accts_release(&a);
}

static void
test_acct_map(void **state)
{
	struct vg_ge_acct a;
	struct vg_result r;

	(void)state;
	memset(&a, 0, sizeof a);
	snprintf(a.host, sizeof a.host, "n1");
	a.slots = 2;
	a.cpu = 1.5;
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_SUCCEEDED);
	assert_string_equal(r.node, "n1");
	assert_int_equal(r.usage.cpus, 2);
	assert_true(r.usage.known & VG_USAGE_CPU);
	a.exit_status = 7;
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_FAILED);
	assert_int_equal(r.exit_code, 7);
	assert_string_equal(r.reason, "exit status 7");
	a.exit_status = 139;
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_FAILED);
	assert_int_equal(r.signal, 11);
	assert_int_equal(r.exit_code, -1);
	/* h_rt: TIMEOUT; h_vmem reached: OOM */
	a.failed = 37;
	a.exit_status = 137;
	snprintf(a.failed_text, sizeof a.failed_text, "qmaster enforced "
	    "h_rt, h_cpu, or h_vmem limit");
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_TIMEOUT);
	assert_string_equal(r.reason, "Grid Engine: time limit (h_rt) "
	    "(failed 37: qmaster enforced h_rt, h_cpu, or h_vmem limit)");
	a.maxvmem = 100 << 20;
	assert_int_equal(vg_ge_acct_map(&a, 1024 << 20, &r), VG_ST_TIMEOUT);
	assert_int_equal(vg_ge_acct_map(&a, 100 << 20, &r), VG_ST_OOM);
	assert_string_equal(r.reason, "Grid Engine: memory limit (h_vmem) "
	    "(failed 37: qmaster enforced h_rt, h_cpu, or h_vmem limit)");
	/* qdel of a running task */
	a.failed = 100;
	snprintf(a.failed_text, sizeof a.failed_text, "assumedly after job");
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_CANCELLED);
	assert_int_equal(r.signal, 9);
	a.exit_status = 0;
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_BACKEND_ERROR);
	a.failed = 1;
	snprintf(a.failed_text, sizeof a.failed_text, "assumedly before job");
	assert_int_equal(vg_ge_acct_map(&a, 0, &r), VG_ST_BACKEND_ERROR);
	assert_string_equal(r.reason, "Grid Engine could not run the job "
	    "(failed 1: assumedly before job)");
}

static void
test_conf_jobid(void **state)
{
	unsigned long job = 0;
	struct vg_err e;
	int max = 0;

	(void)state;
	assert_int_equal(vg_ge_parse_conf("execd_spool_dir /x\n"
	    "max_aj_instances             2000\n"
	    "max_aj_tasks                 75\n", &max, &e), 0);
	assert_int_equal(max, 75);
	assert_int_equal(vg_ge_parse_conf("mailer /bin/true\n", &max, &e), 0);
	assert_int_equal(max, 75000);
	assert_int_equal(vg_ge_parse_conf("max_aj_tasks x\n", &max, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "qconf -sconf: bad max_aj_tasks line");
	assert_int_equal(vg_ge_parse_conf("max_aj_tasks 0", &max, &e),
	    VG_EPARSE);
	assert_int_equal(vg_ge_parse_jobid("12\n", &job, &e), 0);
	assert_int_equal(job, 12);
	assert_int_equal(vg_ge_parse_jobid("13.1-5:1\n", &job, &e), 0);
	assert_int_equal(job, 13);
	assert_int_equal(vg_ge_parse_jobid("Your job 5 (\"x\") has been "
	    "submitted", &job, &e), VG_EPARSE);
	assert_string_equal(e.msg, "qsub: no job id in 'Your job 5 (\"x\") "
	    "has been submitted'");
	assert_int_equal(vg_ge_parse_jobid("", &job, &e), VG_EPARSE);
	assert_int_equal(vg_ge_parse_jobid("12x", &job, &e), VG_EPARSE);
}

static void
test_state_map(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(vg_ge_state_map("r", why, sizeof why),
	    VG_ST_RUNNING);
	assert_string_equal(why, "");
	assert_int_equal(vg_ge_state_map("t", why, sizeof why),
	    VG_ST_RUNNING);
	assert_int_equal(vg_ge_state_map("dr", why, sizeof why),
	    VG_ST_RUNNING);
	assert_int_equal(vg_ge_state_map("qw", why, sizeof why),
	    VG_ST_QUEUED);
	assert_string_equal(why, "pending ('qw')");
	assert_int_equal(vg_ge_state_map("hqw", why, sizeof why),
	    VG_ST_QUEUED);
	assert_string_equal(why, "held ('hqw')");
	assert_int_equal(vg_ge_state_map("Eqw", why, sizeof why),
	    VG_ST_QUEUED);
	assert_string_equal(why, "Grid Engine error state 'Eqw' (qstat -j "
	    "explains; qmod -cj clears it)");
	assert_int_equal(vg_ge_state_map("S", why, sizeof why),
	    VG_ST_SUSPENDED);
	assert_int_equal(vg_ge_state_map("dqw", why, sizeof why),
	    VG_ST_QUEUED);
	assert_string_equal(why, "being deleted ('dqw')");
	/* A rerun (-r y, qmod -rj): waiting, then running again. */
	assert_int_equal(vg_ge_state_map("Rq", why, sizeof why),
	    VG_ST_QUEUED);
	assert_string_equal(why, "rerun by Grid Engine ('Rq')");
	assert_int_equal(vg_ge_state_map("Rr", why, sizeof why),
	    VG_ST_RUNNING);
	assert_string_equal(why, "rerun by Grid Engine ('Rr')");
}

/* A job of the given indexes with no request. */
static struct vg_ge_job
job_of(const int *idx, size_t n)
{
	struct vg_ge_job j;

	memset(&j, 0, sizeof j);
	j.name = "20261205-000000-abcdef";
	j.run_dir = "/runs/r1";
	j.vigil = "/usr/bin/vigil";
	j.manifest_sha256 = "ab12";
	j.attempt = 2;
	j.index = idx;
	j.n = n;
	return j;
}

static void
test_script(void **state)
{
	static const int from0[] = { 0, 1, 2 }, from5[] = { 5, 6 },
	    gaps[] = { 1, 3, 4, 9 }, from1[] = { 1, 2 };
	struct vg_buf b = VG_BUF_INIT;
	struct vg_ge_job j = job_of(from0, 3);
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_ge_script(&j, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b), "#!/bin/sh\nVIGIL_ATTEMPT=2\n"
	    "export VIGIL_ATTEMPT\nexec /usr/bin/vigil task-exec "
	    "--manifest-sha256 ab12 /runs/r1 \"$((SGE_TASK_ID - 1))\"\n");
	vg_buf_reset(&b);
	j = job_of(from1, 2);
	assert_int_equal(vg_ge_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), " /runs/r1 \"$SGE_TASK_ID\""
	    "\n"));
	vg_buf_reset(&b);
	j = job_of(from5, 2);
	assert_int_equal(vg_ge_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "\"$((SGE_TASK_ID + 4))\""));
	vg_buf_reset(&b);
	j = job_of(gaps, 4);
	assert_int_equal(vg_ge_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "set -- 1 3 4 9\n"
	    "shift $((SGE_TASK_ID - 1))\nexec "));
	assert_non_null(strstr(vg_buf_str(&b), " /runs/r1 \"$1\"\n"));
	vg_buf_reset(&b);
	/* refusals */
	j = job_of(from0, 3);
	j.run_dir = "/runs/a\nb";
	assert_int_equal(vg_ge_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: the run directory has a "
	    "control character (0x0a at byte 7)");
	j.run_dir = "runs";
	assert_int_equal(vg_ge_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: the run directory must be an "
	    "absolute path ('runs')");
	j = job_of(from0, 0);
	assert_int_equal(vg_ge_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: empty array");
	vg_buf_release(&b);
}

/* A hostile run directory and vigil path reach the program as exactly
 * the bytes they are, through the real /bin/sh; nothing in them runs. */
static void
test_script_hostile(void **state)
{
	static const int gaps[] = { 4, 7 };
	char tmpl[] = "/tmp/vigil-ge-XXXXXX", *dir, *vig, *run, *sh, *out;
	char *cmd, got[1024];
	struct vg_buf b = VG_BUF_INIT;
	struct vg_ge_job j = job_of(gaps, 2);
	struct vg_err e;
	FILE *f;

	(void)state;
	assert_non_null(dir = mkdtemp(tmpl));
	vig = vg_xasprintf("%s/v i'g\"$(touch pwned)`touch x`", dir);
	run = vg_xasprintf("%s/run $(touch pwned2) ';' \"#$ -q x", dir);
	out = vg_xasprintf("%s/args", dir);
	f = fopen(vig, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nfor a; do printf '[%%s]' \"$a\"; done "
	    ">'%s'\n", out);
	fclose(f);
	chmod(vig, 0755);
	j.vigil = vig;
	j.run_dir = run;
	assert_int_equal(vg_ge_script(&j, &b, &e), 0);
	sh = vg_xasprintf("%s/job.sh", dir);
	assert_int_equal(vg_write_file_atomic(sh, b.data, b.len, 0700, &e),
	    0);
	cmd = vg_xasprintf("cd '%s' && SGE_TASK_ID=2 /bin/sh job.sh", dir);
	assert_int_equal(system(cmd), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof got, f));
	fclose(f);
	free(cmd);
	cmd = vg_xasprintf("[task-exec][--manifest-sha256][ab12][%s][7]",
	    run);
	assert_string_equal(got, cmd);
	free(cmd);
	cmd = vg_xasprintf("%s/pwned", dir);
	assert_int_not_equal(access(cmd, F_OK), 0);
	free(cmd);
	cmd = vg_xasprintf("%s/pwned2", dir);
	assert_int_not_equal(access(cmd, F_OK), 0);
	free(cmd);
	cmd = vg_xasprintf("%s/x", dir);
	assert_int_not_equal(access(cmd, F_OK), 0);
	free(cmd);
	assert_int_equal(vg_rm_rf(dir, NULL), 0);
	free(vig);
	free(run);
	free(out);
	free(sh);
	vg_buf_release(&b);
}

/* argv joined with '|' (static buffer). */
static const char *
joined(const struct vg_strv *v)
{
	static char buf[2048];
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < v->n; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s",
		    i > 0 ? "|" : "", v->v[i]);
	return buf;
}

static void
test_qsub_argv(void **state)
{
	static const int idx[] = { 0, 1, 2, 3 };
	char pe[] = "smp", gpu[] = "gpu";
	struct vg_ge_conf c;
	struct vg_ge_job j = job_of(idx, 4);
	struct vg_strv v = VG_STRV_INIT;
	struct vg_err e;

	(void)state;
	memset(&c, 0, sizeof c);
	j.conf = &c;
	assert_int_equal(vg_ge_qsub_argv(&j, "/runs/r1/s.sh", "/runs/r1/ge",
	    &v, &e), 0);
	assert_string_equal(joined(&v), "qsub|-terse|-C||-N|"
	    "vigil-20261205-000000-abcdef|-t|1-4|-S|/bin/sh|-j|y|-o|"
	    "/runs/r1/ge|/runs/r1/s.sh");
	vg_strv_release(&v);
	/* every request */
	c.pe = pe;
	c.gpu_complex = gpu;
	vg_strv_push(&c.memory, "h_vmem");
	vg_strv_push(&c.memory, "mem_free");
	vg_kvs_set(&c.options, "l", "arch=lx-amd64");
	vg_kvs_set(&c.options, "notify", "true");
	vg_kvs_set(&c.options, "R", "y");
	j.cpus = 4;
	j.memory = 8ULL << 30;
	j.gpus = 2;
	j.time = 3700;
	j.queue = "long.q";
	j.account = "proj-a";
	j.project = "p1";
	j.hold = "12,13";
	assert_int_equal(vg_ge_qsub_argv(&j, "/s.sh", "/o:x", &v, &e), 0);
	assert_string_equal(joined(&v), "qsub|-terse|-C||-N|"
	    "vigil-20261205-000000-abcdef|-t|1-4|-S|/bin/sh|-j|y|-o|"
	    "/dev/null|-pe|smp|4|-l|h_vmem=2048M|-l|mem_free=2048M|"
	    "-l|h_rt=3700|-l|gpu=1|-q|long.q|-A|proj-a|-P|p1|-hold_jid|12,13|"
	    "-l|arch=lx-amd64|-notify|-R|y|/s.sh");
	vg_strv_release(&v);
	vg_strv_release(&c.memory);
	/* memory by default through h_vmem, per slot rounded up */
	j.cpus = 3;
	j.memory = 1ULL << 30;
	j.gpus = 0;
	j.queue = j.account = j.project = j.hold = NULL;
	vg_kvs_release(&c.options);
	assert_int_equal(vg_ge_qsub_argv(&j, "/s.sh", "/o$HOME", &v, &e), 0);
	assert_non_null(strstr(joined(&v), "|-o|/dev/null|-pe|smp|3|-l|"
	    "h_vmem=342M|-l|h_rt=3700|/s.sh"));
	vg_strv_release(&v);
}

static void
test_qsub_refused(void **state)
{
	static const int idx[] = { 0 };
	char pe[] = "smp,x";
	struct vg_ge_conf c;
	struct vg_ge_job j = job_of(idx, 1);
	struct vg_strv v = VG_STRV_INIT;
	struct vg_err e;

	(void)state;
	memset(&c, 0, sizeof c);
	j.conf = &c;
	j.cpus = 2;
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: resources.cpus is 2 but "
	    "gridengine.pe names no parallel environment (ask the cell's "
	    "admins: qconf -spl lists them; e.g. gridengine.pe: smp)");
	vg_strv_release(&v);
	c.pe = pe;
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine.pe: 'smp,x': byte 0x2c at 3 "
	    "is not allowed (one word of printable text)");
	vg_strv_release(&v);
	j.cpus = 1;
	j.gpus = 1;
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: resources.gpus is 1 but "
	    "gridengine.gpu_complex names no consumable (qconf -sc lists "
	    "them; e.g. gridengine.gpu_complex: gpu)");
	vg_strv_release(&v);
	j.gpus = 0;
	j.queue = "a q";
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "resources.partition: 'a q': byte 0x20 at "
	    "1 is not allowed (one word of printable text)");
	vg_strv_release(&v);
	j.queue = "-sync";
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "resources.partition: '-sync': starts "
	    "with '-'");
	vg_strv_release(&v);
	j.queue = NULL;
	j.hold = "1;2";
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine: bad hold list '1;2'");
	vg_strv_release(&v);
	j.hold = NULL;
	vg_kvs_set(&c.options, "b", "y");
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine.options.b: not an allowed qsub "
	    "option (allowed: -A -P -R -ar -binding -ckpt -dl -js -l -notify "
	    "-now -p -q -r; vigil sets the others itself)");
	vg_strv_release(&v);
	vg_kvs_release(&c.options);
	vg_strv_push(&c.memory, "h=vmem");
	j.memory = 1 << 20;
	assert_int_equal(vg_ge_qsub_argv(&j, "/s", NULL, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, "gridengine.memory: 'h=vmem': byte 0x3d "
	    "at 1 is not allowed (one word of printable text)");
	vg_strv_release(&v);
	vg_strv_release(&c.memory);
}

static void
test_option_check(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(vg_ge_option_check("q", "all.q", why, sizeof why),
	    0);
	assert_int_equal(vg_ge_option_check("l", "a=1,b=2", why, sizeof why),
	    0);
	assert_int_equal(vg_ge_option_check("notify", "", why, sizeof why),
	    0);
	assert_int_equal(vg_ge_option_check("notify", "false", why,
	    sizeof why), 0);
	assert_int_equal(vg_ge_option_check("notify", "x", why, sizeof why),
	    -1);
	assert_string_equal(why, "a flag: give true, false or ''");
	assert_int_equal(vg_ge_option_check("R", "yes", why, sizeof why), 0);
	assert_int_equal(vg_ge_option_check("R", "maybe", why, sizeof why),
	    -1);
	assert_string_equal(why, "give y or n");
	assert_int_equal(vg_ge_option_check("p", "", why, sizeof why), -1);
	assert_string_equal(why, "needs a value");
	assert_int_equal(vg_ge_option_check("p", "-5", why, sizeof why), -1);
	assert_string_equal(why, "starts with '-'");
	assert_int_equal(vg_ge_option_check("A", "a b", why, sizeof why), -1);
	assert_string_equal(why, "byte 0x20 at 1 is not allowed (one word of "
	    "printable text)");
	assert_int_equal(vg_ge_option_check("S", "/bin/sh", why, sizeof why),
	    -1);
}

/*
 * The job journal (RUN/gridengine/jobs, RUN/slurm/jobs) is appended
 * beneath the run's directory: a link planted at the journal or at its
 * directory is refused, the file it names untouched.
 */
static void
test_journal_links(void **state)
{
	char dir[] = "/tmp/vg-test-journal-XXXXXX", *sub, *victim, *jobs;
	struct vg_buf b = VG_BUF_INIT, got = VG_BUF_INIT;
	struct vg_sched_jentry *ent = NULL;
	size_t n = 0;
	struct vg_err e;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	sub = vg_path_join(dir, "gridengine");
	victim = vg_path_join(dir, "victim");
	jobs = vg_path_join(sub, "jobs");
	vg_buf_adds(&b, "0 1 7.1\n");
	assert_int_equal(mkdir(sub, 0700), 0);
	/* ordinary: created 0600 and appended */
	vg_err_init(&e);
	assert_int_equal(vg_sched_journal_append(sub, &b, &e), 0);
	assert_int_equal(vg_sched_journal_append(sub, &b, &e), 0);
	assert_int_equal(vg_read_file(jobs, 4096, &got, &e), 0);
	assert_string_equal(vg_buf_str(&got), "0 1 7.1\n0 1 7.1\n");
	assert_int_equal(stat(jobs, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* read back: both lines, in order; none is none */
	assert_int_equal(vg_sched_journal_load(sub, '.', &ent, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ent[1].job, 7);
	assert_int_equal(ent[1].task, 1);
	free(ent);
	assert_int_equal(vg_sched_journal_load(dir, '.', &ent, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_null(ent);
	/* a link at the journal: neither written through nor read */
	assert_int_equal(unlink(jobs), 0);
	assert_int_equal(symlink(victim, jobs), 0);
	assert_int_not_equal(vg_sched_journal_append(sub, &b, &e), 0);
	assert_int_not_equal(lstat(victim, &st), 0);
	got.len = 0;
	vg_buf_adds(&got, "3 1 99.1\n");
	assert_int_equal(vg_write_file_atomic(victim, got.data, got.len, 0600,
	    &e), 0);
	vg_err_init(&e);
	assert_int_not_equal(vg_sched_journal_load(sub, '.', &ent, &n, &e),
	    0);
	assert_null(ent);
	assert_int_equal(n, 0);
	assert_non_null(strstr(e.msg, "jobs"));
	/* a hard link of another file is refused too */
	assert_int_equal(unlink(jobs), 0);
	assert_int_equal(link(victim, jobs), 0);
	assert_int_not_equal(vg_sched_journal_load(sub, '.', &ent, &n, &e),
	    0);
	assert_int_equal(unlink(victim), 0);
	/* a link at the journal's directory */
	assert_int_equal(unlink(jobs), 0);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(mkdir(victim, 0700), 0);
	assert_int_equal(symlink(victim, sub), 0);
	assert_int_not_equal(vg_sched_journal_append(sub, &b, &e), 0);
	free(jobs);
	jobs = vg_path_join(victim, "jobs");
	assert_int_not_equal(lstat(jobs, &st), 0);
	assert_int_equal(unlink(sub), 0);
	assert_int_equal(rmdir(victim), 0);
	assert_int_equal(rmdir(dir), 0);
	free(sub);
	free(victim);
	free(jobs);
	vg_buf_release(&b);
	vg_buf_release(&got);
}

/* $PE_HOSTFILE lines: hosts and slots; malformed lines name their
 * number; an empty file has no host. */
static void
test_hostfile(void **state)
{
	struct vg_ge_slots *v;
	struct vg_err e;
	size_t n;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_ge_hostfile_parse("node1 4 all.q@node1 UNDEFINED\n"
	    "\nnode2.example 2 all.q@node2 UNDEFINED\n", &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].host, "node1");
	assert_int_equal(v[0].slots, 4);
	assert_string_equal(v[1].host, "node2.example");
	assert_int_equal(v[1].slots, 2);
	free(v);
	assert_int_equal(vg_ge_hostfile_parse("node1 4 q r\nnode2 x q r\n",
	    &v, &n, &e), VG_EPARSE);
	assert_non_null(strstr(e.msg, "line 2"));
	assert_null(v);
	vg_err_init(&e);
	assert_int_equal(vg_ge_hostfile_parse("node1 0 q r\n", &v, &n, &e),
	    VG_EPARSE);
	vg_err_init(&e);
	assert_int_equal(vg_ge_hostfile_parse("node1 99999999999 q r\n", &v,
	    &n, &e), VG_EPARSE);
	vg_err_init(&e);
	assert_int_equal(vg_ge_hostfile_parse("\n\n", &v, &n, &e),
	    VG_EPARSE);
	assert_non_null(strstr(e.msg, "no host"));
}

/* A qrsh -inherit task without a record: refused by Grid Engine is a
 * BACKEND_ERROR at once; anything else waits, then is LOST. */
static void
test_qrsh_verdict(void **state)
{
	struct vg_result r;

	(void)state;
	assert_int_equal(vg_ge_qrsh_verdict("error: executing task of job 7 "
	    "failed: execution daemon on host \"n1\" didn't accept task\n",
	    1 << 8, 0, &r), 1);
	assert_int_equal(r.state, VG_ST_BACKEND_ERROR);
	assert_non_null(strstr(r.reason, "didn't accept task"));
	assert_int_equal(vg_ge_qrsh_verdict("", 1 << 8, 0, &r), 0);
	assert_int_equal(vg_ge_qrsh_verdict("", 3 << 8, 1, &r), 1);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_string_equal(r.reason, "qrsh -inherit exited 3, no result "
	    "record");
	assert_int_equal(vg_ge_qrsh_verdict(NULL, SIGKILL, 1, &r), 1);
	assert_int_equal(r.state, VG_ST_LOST);
	assert_int_equal(r.signal, SIGKILL);
}

/* VIGIL_GRIDENGINE_STEPS: never, auto outside a job, always outside a
 * job, and a bad value. */
static void
test_steps_wanted(void **state)
{
	struct vg_err e;

	(void)state;
	unsetenv("JOB_ID");
	unsetenv("PE_HOSTFILE");
	vg_err_init(&e);
	setenv("VIGIL_GRIDENGINE_STEPS", "never", 1);
	assert_int_equal(vg_ge_steps_wanted(&e), 0);
	setenv("VIGIL_GRIDENGINE_STEPS", "auto", 1);
	assert_int_equal(vg_ge_steps_wanted(&e), 0);
	setenv("VIGIL_GRIDENGINE_STEPS", "always", 1);
	assert_int_equal(vg_ge_steps_wanted(&e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "not inside a Grid Engine parallel"));
	vg_err_init(&e);
	setenv("VIGIL_GRIDENGINE_STEPS", "sometimes", 1);
	assert_int_equal(vg_ge_steps_wanted(&e), VG_EINVAL);
	assert_non_null(strstr(e.msg, "valid: auto, always, never"));
	setenv("JOB_ID", "12", 1);
	setenv("PE_HOSTFILE", "undefined", 1);
	vg_err_init(&e);
	setenv("VIGIL_GRIDENGINE_STEPS", "auto", 1);
	assert_int_equal(vg_ge_steps_wanted(&e), 0);
	unsetenv("JOB_ID");
	unsetenv("PE_HOSTFILE");
	unsetenv("VIGIL_GRIDENGINE_STEPS");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qstat),
		cmocka_unit_test(test_qstat_forms),
		cmocka_unit_test(test_qstat_bad),
		cmocka_unit_test(test_qacct),
		cmocka_unit_test(test_acct_map),
		cmocka_unit_test(test_conf_jobid),
		cmocka_unit_test(test_state_map),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_script_hostile),
		cmocka_unit_test(test_qsub_argv),
		cmocka_unit_test(test_qsub_refused),
		cmocka_unit_test(test_option_check),
		cmocka_unit_test(test_journal_links),
		cmocka_unit_test(test_hostfile),
		cmocka_unit_test(test_qrsh_verdict),
		cmocka_unit_test(test_steps_wanted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
