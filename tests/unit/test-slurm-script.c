/*
 * test-slurm-script.c - batch scripts: exact output for a full request,
 * hostile manifest values that must stay inside their #SBATCH argument
 * (read back with a copy of sbatch's own #SBATCH reader), a hostile run
 * directory and vigil path run through the real /bin/sh, array specs,
 * time limits, --signal specs and the srun step argv.
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
#include "schedulers/slurm.h"

/*
 * sbatch's reader of one #SBATCH argument (src/sbatch/opt.c,
 * _get_argument, 22.05): blanks end it unless quoted, a backslash makes
 * the next character literal, '...' and "..." quote, an unquoted '#'
 * starts a comment.  Returns the argument (caller frees) and advances *p.
 */
static char *
sbatch_arg(const char **p)
{
	const char *s = *p;
	char *out = calloc(strlen(s) + 1, 1), q = 0;
	int esc = 0, quoted = 0;
	size_t i = 0;

	while (*s != '\0' && (*s == ' ' || *s == '\t'))
		s++;
	if (*s == '\0') {
		free(out);
		*p = s;
		return NULL;
	}
	while ((quoted || !(*s == ' ' || *s == '\t')) && *s != '\n' &&
	    *s != '\0') {
		if (esc)
			esc = 0;
		else if (*s == '\\') {
			esc = 1;
			s++;
			continue;
		} else if (quoted) {
			if (*s == q) {
				quoted = 0;
				s++;
				continue;
			}
		} else if (*s == '"' || *s == '\'') {
			quoted = 1;
			q = *s++;
			continue;
		} else if (*s == '#') {
			/* the rest of the line is a comment */
			s += strlen(s);
			break;
		}
		out[i++] = *s++;
	}
	*p = s;
	if (i == 0 && *s == '\0' && out[0] == '\0' && !quoted) {
		free(out);
		return NULL;
	}
	return out;
}

/* Collects every #SBATCH argument of script, in order. */
static void
sbatch_args(const char *script, struct vg_strv *out)
{
	const char *line = script, *p;
	char *a, *copy;

	while (line != NULL && *line != '\0') {
		if (strncmp(line, "#SBATCH", 7) == 0) {
			copy = strndup(line, strcspn(line, "\n"));
			p = copy + 7;
			while ((a = sbatch_arg(&p)) != NULL)
				vg_strv_take(out, a);
			free(copy);
		} else if (line[0] != '#' && line[0] != '\n')
			break;	/* sbatch stops at the first command */
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
}

static const struct vg_slurm_job base = {
	.name = "vg-20261130-abcd",
	.run_dir = "/home/u/.vigil/runs/vg-20261130-abcd",
	.vigil = "/shared/bin/vigil",
	.attempt = 1,
	.array = "0-5",
	.throttle = 2,
};

static void
test_script_full(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	j.cpus = 4;
	j.memory = 1536ULL << 20;
	j.gpus = 2;
	j.time = 3601;
	j.partition = "gpu";
	j.account = "proj-1";
	j.qos = "normal";
	j.constraint = "a100&ib";
	j.signal = "B:USR2@90";
	j.requeue = 0;
	j.exclude = "n1,n2";
	j.attempt = 2;
	j.array = "0-1,4";
	j.offset = 1000;
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_string_equal(vg_buf_str(&b),
	    "#!/bin/sh\n"
	    "#SBATCH --job-name=vg-20261130-abcd\n"
	    "#SBATCH --array=0-1,4%2\n"
	    "#SBATCH --output=/home/u/.vigil/runs/vg-20261130-abcd/slurm/"
	    "%A_%a.out\n"
	    "#SBATCH --error=/home/u/.vigil/runs/vg-20261130-abcd/slurm/"
	    "%A_%a.out\n"
	    "#SBATCH --chdir=/home/u/.vigil/runs/vg-20261130-abcd\n"
	    "#SBATCH --nodes=1\n"
	    "#SBATCH --ntasks=1\n"
	    "#SBATCH --cpus-per-task=4\n"
	    "#SBATCH --mem=1536M\n"
	    "#SBATCH --gres=gpu:2\n"
	    "#SBATCH --time=0-01:01:00\n"
	    "#SBATCH --partition=gpu\n"
	    "#SBATCH --account=proj-1\n"
	    "#SBATCH --qos=normal\n"
	    "#SBATCH --constraint=\"a100&ib\"\n"
	    "#SBATCH --exclude=n1,n2\n"
	    "#SBATCH --signal=B:USR2@90\n"
	    "#SBATCH --no-requeue\n"
	    "VIGIL_ATTEMPT=2\n"
	    "export VIGIL_ATTEMPT\n"
	    "exec /shared/bin/vigil task-exec "
	    "/home/u/.vigil/runs/vg-20261130-abcd "
	    "\"$((SLURM_ARRAY_TASK_ID + 1000))\"\n");
	vg_buf_release(&b);
	(void)state;
}

static const char *const hostile[] = {
	"p\" --mem=1 \"",
	"p' --mem=1 '",
	"$(touch /tmp/pwned)",
	"`touch /tmp/pwned`",
	"a b #SBATCH --mem=1",
	"x\\\" --qos=evil",
	"trailing\\",
	"#SBATCH --wrap=evil",
	"100%",
	"\"",
	"'",
	"\\",
};

/*
 * The scripts plain (option opt given the value "plain") and b (the same
 * with value v) read back by sbatch's reader as the same arguments, but
 * for --opt=v in place of --opt=plain.
 */
static void
same_but(const struct vg_buf *plain, const struct vg_buf *b, const char *opt,
    const char *v)
{
	struct vg_strv args = VG_STRV_INIT, pargs = VG_STRV_INIT;
	char want[256];
	size_t k;

	sbatch_args(vg_buf_str(b), &args);
	sbatch_args(vg_buf_str(plain), &pargs);
	assert_int_equal(args.n, pargs.n);
	for (k = 0; k < args.n; k++) {
		snprintf(want, sizeof want, "--%s=plain", opt);
		if (strcmp(pargs.v[k], want) == 0) {
			snprintf(want, sizeof want, "--%s=%s", opt, v);
			assert_string_equal(args.v[k], want);
		} else
			assert_string_equal(args.v[k], pargs.v[k]);
	}
	vg_strv_release(&args);
	vg_strv_release(&pargs);
}

/* Every hostile value comes back as exactly one argument, and the rest
 * of the script is the same as with a plain value. */
static void
test_script_hostile_values(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT, plain = VG_BUF_INIT;
	struct vg_err e;
	const char **field;
	size_t i, f;
	const char *names[] = { "partition", "account", "qos", "constraint",
	    "exclude" };

	for (f = 0; f < 5; f++) {
		for (i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
			j = base;
			field = f == 0 ? &j.partition : f == 1 ? &j.account :
			    f == 2 ? &j.qos : f == 3 ? &j.constraint :
			    &j.exclude;
			*field = "plain";
			vg_buf_reset(&plain);
			assert_int_equal(vg_slurm_script(&j, &plain, &e), 0);
			*field = hostile[i];
			vg_buf_reset(&b);
			assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
			same_but(&plain, &b, names[f], hostile[i]);
			/* The shell part is untouched. */
			assert_string_equal(strstr(vg_buf_str(&b),
			    "\nVIGIL_ATTEMPT"), strstr(vg_buf_str(&plain),
			    "\nVIGIL_ATTEMPT"));
		}
	}
	vg_buf_release(&b);
	vg_buf_release(&plain);
	(void)state;
}

/* A parallel request: nodes, tasks, memory per CPU, GPUs per task,
 * whole nodes, the srun launcher, further options and a dependency. */
static void
test_script_parallel(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_kvs opts = { NULL, 0, 0 };
	struct vg_err e;

	vg_kvs_set(&opts, "reservation", "maint");
	vg_kvs_set(&opts, "mail-type", "END,FAIL");
	vg_kvs_set(&opts, "comment", "sweep #3 \"lr\"");
	vg_kvs_set(&opts, "contiguous", "true");
	vg_kvs_set(&opts, "spread-job", "false");
	j.nodes = 3;
	j.ntasks = 6;
	j.ntasks_per_node = 2;
	j.cpus = 1;
	j.mem_per_cpu = 300ULL << 20;
	j.gpus_per_task = 1;
	j.exclusive = 1;
	j.srun = 1;
	j.options = &opts;
	j.dependency = "afterok:12:13,afterany:14";
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b),
	    "#SBATCH --nodes=3\n"
	    "#SBATCH --ntasks=6\n"
	    "#SBATCH --ntasks-per-node=2\n"
	    "#SBATCH --cpus-per-task=1\n"
	    "#SBATCH --mem-per-cpu=300M\n"
	    "#SBATCH --gpus-per-task=1\n"
	    "#SBATCH --exclusive\n"));
	assert_non_null(strstr(vg_buf_str(&b),
	    "#SBATCH --reservation=maint\n"
	    "#SBATCH --mail-type=END,FAIL\n"
	    "#SBATCH --comment=\"sweep #3 \\\"lr\\\"\"\n"
	    "#SBATCH --contiguous\n"
	    "#SBATCH --dependency=afterok:12:13,afterany:14\n"
	    "#SBATCH --kill-on-invalid-dep=yes\n"));
	assert_null(strstr(vg_buf_str(&b), "spread-job"));
	assert_non_null(strstr(vg_buf_str(&b),
	    "VIGIL_LAUNCHER=srun\nexport VIGIL_LAUNCHER\n"));
	/* Only nodes: Slurm starts one task per node. */
	j = base;
	j.nodes = 2;
	vg_buf_reset(&b);
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "#SBATCH --nodes=2\n#SBATCH"));
	assert_null(strstr(vg_buf_str(&b), "--ntasks"));
	/* Only ntasks: Slurm picks the nodes. */
	j = base;
	j.ntasks = 4;
	vg_buf_reset(&b);
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_null(strstr(vg_buf_str(&b), "--nodes"));
	assert_non_null(strstr(vg_buf_str(&b), "#SBATCH --ntasks=4\n"));
	assert_null(strstr(vg_buf_str(&b), "VIGIL_LAUNCHER"));
	/* A refused option in a manifest that skipped validation. */
	j = base;
	vg_kvs_release(&opts);
	vg_kvs_set(&opts, "wrap", "rm -rf ~");
	j.options = &opts;
	vg_buf_reset(&b);
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm.options.wrap: refused: vigil "
	    "writes the batch script itself");
	j = base;
	j.dependency = "afterok:1;rm";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: bad dependency 'afterok:1;rm'");
	assert_int_equal(b.len, 0);
	vg_kvs_release(&opts);
	vg_buf_release(&b);
	(void)state;
}

/* Hostile slurm.options values stay one argument each. */
static void
test_script_hostile_options(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT, plain = VG_BUF_INIT;
	struct vg_kvs opts = { NULL, 0, 0 };
	struct vg_err e;
	size_t i;

	j.options = &opts;
	for (i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		vg_kvs_release(&opts);
		vg_kvs_set(&opts, "comment", "plain");
		vg_buf_reset(&plain);
		assert_int_equal(vg_slurm_script(&j, &plain, &e), 0);
		vg_kvs_release(&opts);
		vg_kvs_set(&opts, "comment", hostile[i]);
		vg_buf_reset(&b);
		assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
		same_but(&plain, &b, "comment", hostile[i]);
	}
	vg_kvs_release(&opts);
	vg_buf_release(&b);
	vg_buf_release(&plain);
	(void)state;
}

/* The allowlist: allowed, refused with the reason, unknown, bad values. */
static void
test_option_check(void **state)
{
	struct vg_resources r;
	char why[256], ib[] = "ib";

	memset(&r, 0, sizeof r);
	assert_int_equal(vg_slurm_option_check("reservation", "r1", &r, why,
	    sizeof why), 0);
	assert_int_equal(vg_slurm_option_check("begin", "now+1hour", &r, why,
	    sizeof why), 0);
	assert_int_equal(vg_slurm_option_check("contiguous", "", &r, why,
	    sizeof why), 0);
	assert_int_equal(vg_slurm_option_check("contiguous", "yes", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "a flag: give true, false or an empty "
	    "value, not 'yes'");
	assert_int_equal(vg_slurm_option_check("output", "/tmp/x", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "refused: vigil keeps job output under the "
	    "run directory");
	assert_int_equal(vg_slurm_option_check("dependency", "afterok:1", &r,
	    why, sizeof why), -1);
	assert_string_equal(why, "refused: use after: (vigil follows the "
	    "runs it waits for)");
	assert_int_equal(vg_slurm_option_check("mem", "1G", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "refused: use resources.memory");
	assert_int_equal(vg_slurm_option_check("reservaton", "r1", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "not an sbatch option vigil passes on (see "
	    "the allowlist in docs/schedulers/slurm.md)");
	assert_int_equal(vg_slurm_option_check("comment", "", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "needs a value");
	assert_int_equal(vg_slurm_option_check("comment", "a\nb", &r, why,
	    sizeof why), -1);
	assert_int_equal(vg_slurm_option_check("signal", "B:USR9", &r, why,
	    sizeof why), -1);
	assert_int_equal(vg_slurm_option_check("signal", "B:USR1@60", &r, why,
	    sizeof why), 0);
	r.constraint = ib;
	assert_int_equal(vg_slurm_option_check("constraint", "a100", &r, why,
	    sizeof why), -1);
	assert_string_equal(why, "resources.constraint is given too; give "
	    "one");
	(void)state;
}

/* launcher: the default and the wrapped command. */
static void
test_launcher(void **state)
{
	struct vg_resources r;
	struct vg_command c;
	char none[] = "none", srun[] = "srun";

	memset(&r, 0, sizeof r);
	assert_false(vg_slurm_use_srun(&r));
	r.ntasks = 1;
	assert_false(vg_slurm_use_srun(&r));
	r.ntasks = 2;
	assert_true(vg_slurm_use_srun(&r));
	r.launcher = none;
	assert_false(vg_slurm_use_srun(&r));
	r.ntasks = 0;
	r.launcher = NULL;
	r.nodes = 3;
	assert_true(vg_slurm_use_srun(&r));
	r.nodes = 0;
	r.launcher = srun;
	assert_true(vg_slurm_use_srun(&r));

	memset(&c, 0, sizeof c);
	c.shell = strdup("hostname; echo $X");
	vg_slurm_launch_wrap(&c);
	assert_true(c.is_argv);
	assert_null(c.shell);
	assert_int_equal(c.argv.n, 6);
	assert_string_equal(c.argv.v[0], "srun");
	assert_string_equal(c.argv.v[1], "--kill-on-bad-exit=1");
	assert_string_equal(c.argv.v[2], "--");
	assert_string_equal(c.argv.v[3], "/bin/sh");
	assert_string_equal(c.argv.v[4], "-c");
	assert_string_equal(c.argv.v[5], "hostname; echo $X");
	vg_slurm_launch_wrap(&c);
	assert_int_equal(c.argv.n, 9);
	assert_string_equal(c.argv.v[3], "srun");
	vg_strv_release(&c.argv);
	(void)state;
}

/* Newlines and other control characters are refused, naming the field. */
static void
test_script_control_chars(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	j.partition = "debug\n#SBATCH --mem=1";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: 'resources.partition' contains a "
	    "control character (0x0a at byte 5); Slurm values must be one "
	    "line of printable text");
	j = base;
	j.account = "a\rb";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: 'resources.account' contains a "
	    "control character (0x0d at byte 1); Slurm values must be one "
	    "line of printable text");
	j = base;
	j.run_dir = "/tmp/a\nb";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: 'run directory' contains a "
	    "control character (0x0a at byte 6); Slurm values must be one "
	    "line of printable text");
	j = base;
	j.run_dir = "runs/x";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: the run directory and the vigil "
	    "path must be absolute ('runs/x', '/shared/bin/vigil')");
	j = base;
	j.array = "0-3;id";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm: bad array spec '0-3;id'");
	j = base;
	j.signal = "B:USR9@90";
	assert_int_equal(vg_slurm_script(&j, &b, &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm.signal: bad value 'B:USR9@90' "
	    "(expected [B:]SIGNAL[@SECONDS], for example B:USR2@90)");
	assert_int_equal(b.len, 0);
	vg_buf_release(&b);
	(void)state;
}

/* A run directory and vigil path full of shell syntax, run by /bin/sh:
 * the "vigil" is a script printing its arguments one per line. */
static void
test_script_shell_part(void **state)
{
	char tmpl[] = "/tmp/vg-slurm-test-XXXXXX";
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT, want = VG_BUF_INIT, got = VG_BUF_INIT;
	struct vg_err e;
	char *dir, *rundir, *vigil, *script, *outp, *cmd;
	FILE *f;
	int st;

	assert_non_null(mkdtemp(tmpl));
	dir = vg_xasprintf("%s/it's $(touch pwned) `touch pwned2` \"q\" %%A",
	    tmpl);
	assert_int_equal(mkdir(dir, 0700), 0);
	vigil = vg_xasprintf("%s/vigil", dir);
	f = fopen(vigil, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done\n", f);
	fclose(f);
	assert_int_equal(chmod(vigil, 0755), 0);
	rundir = vg_xasprintf("%s/run #1", dir);
	j.vigil = vigil;
	j.run_dir = rundir;
	j.offset = 7;
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	script = vg_xasprintf("%s/script.sh", tmpl);
	assert_int_equal(vg_write_file_atomic(script, b.data, b.len, 0600,
	    &e), 0);
	outp = vg_xasprintf("%s/out", tmpl);
	cmd = vg_xasprintf("cd '%s' && SLURM_ARRAY_TASK_ID=3 /bin/sh "
	    "script.sh > out", tmpl);
	st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(vg_read_file(outp, 4096, &got, &e), 0);
	vg_buf_printf(&want, "task-exec\n%s\n10\n", rundir);
	assert_string_equal(vg_buf_str(&got), vg_buf_str(&want));
	/* Nothing was executed from the names. */
	free(cmd);
	cmd = vg_xasprintf("%s/pwned", tmpl);
	assert_int_not_equal(access(cmd, F_OK), 0);
	free(cmd);
	cmd = vg_xasprintf("%s/pwned2", tmpl);
	assert_int_not_equal(access(cmd, F_OK), 0);
	/* '%' in --output is doubled (sbatch expands %A, %a, ...). */
	assert_non_null(strstr(vg_buf_str(&b),
	    "%%A/run #1/slurm/%A_%a.out\"\n"));
	assert_int_equal(vg_rm_rf(tmpl, &e), 0);
	free(cmd);
	free(outp);
	free(script);
	free(rundir);
	free(vigil);
	free(dir);
	vg_buf_release(&b);
	vg_buf_release(&want);
	vg_buf_release(&got);
	(void)state;
}

static void
test_array_spec(void **state)
{
	struct vg_buf b = VG_BUF_INIT;
	const int a[] = { 0, 1, 2, 3, 7, 9, 10 };
	const int c[] = { 1000, 1001, 1500 };

	vg_cluster_array_spec(a, 7, 0, &b);
	assert_string_equal(vg_buf_str(&b), "0-3,7,9-10");
	vg_buf_reset(&b);
	vg_cluster_array_spec(c, 3, 1000, &b);
	assert_string_equal(vg_buf_str(&b), "0-1,500");
	vg_buf_reset(&b);
	vg_cluster_array_spec(a + 4, 1, 0, &b);
	assert_string_equal(vg_buf_str(&b), "7");
	vg_buf_release(&b);
	(void)state;
}

static void
test_time(void **state)
{
	char t[40];

	vg_slurm_time(0, t, sizeof t);
	assert_string_equal(t, "");
	vg_slurm_time(1, t, sizeof t);
	assert_string_equal(t, "0-00:01:00");
	vg_slurm_time(60, t, sizeof t);
	assert_string_equal(t, "0-00:01:00");
	vg_slurm_time(61, t, sizeof t);
	assert_string_equal(t, "0-00:02:00");
	vg_slurm_time(2 * 86400 + 3 * 3600 + 4 * 60, t, sizeof t);
	assert_string_equal(t, "2-03:04:00");
	(void)state;
}

static void
test_signal(void **state)
{
	struct vg_err e;
	int sig, secs, batch;

	assert_int_equal(vg_slurm_parse_signal("B:USR2@90", &sig, &secs,
	    &batch, &e), 0);
	assert_int_equal(sig, SIGUSR2);
	assert_int_equal(secs, 90);
	assert_int_equal(batch, 1);
	assert_int_equal(vg_slurm_parse_signal("SIGTERM", &sig, &secs,
	    &batch, &e), 0);
	assert_int_equal(sig, SIGTERM);
	assert_int_equal(secs, 60);
	assert_int_equal(batch, 0);
	assert_int_equal(vg_slurm_parse_signal("10@300", &sig, &secs,
	    &batch, &e), 0);
	assert_int_equal(sig, 10);
	assert_int_equal(secs, 300);
	assert_int_equal(vg_slurm_parse_signal("USR2@", &sig, &secs, &batch,
	    &e), VG_EINVAL);
	assert_int_equal(vg_slurm_parse_signal("USR2@70000", &sig, &secs,
	    &batch, &e), VG_EINVAL);
	assert_int_equal(vg_slurm_parse_signal("B:", &sig, &secs, &batch,
	    &e), VG_EINVAL);
	assert_string_equal(e.msg, "slurm.signal: bad value 'B:' (expected "
	    "[B:]SIGNAL[@SECONDS], for example B:USR2@90)");
	assert_int_equal(vg_slurm_parse_signal("0@5", &sig, &secs, &batch,
	    &e), VG_EINVAL);
	(void)state;
}

static void
test_step_argv(void **state)
{
	struct vg_strv sv = VG_STRV_INIT;
	const char *const argv[] = { "/bin/sh", "-c", "echo hi", NULL };

	vg_slurm_step_argv("vg-x", 2, 3ULL << 30, 1, NULL, argv, &sv);
	assert_int_equal(sv.n, 13);
	assert_string_equal(sv.v[0], "srun");
	assert_string_equal(sv.v[1], "--exclusive");
	assert_string_equal(sv.v[2], "-n1");
	assert_string_equal(sv.v[3], "-N1");
	assert_string_equal(sv.v[4], "--cpus-per-task=2");
	assert_string_equal(sv.v[5], "--mem=3072M");
	assert_string_equal(sv.v[6], "--gpus=1");
	assert_string_equal(sv.v[7], "--job-name=vg-x");
	assert_string_equal(sv.v[8], "--kill-on-bad-exit=1");
	assert_string_equal(sv.v[9], "--");
	assert_string_equal(sv.v[10], "/bin/sh");
	assert_string_equal(sv.v[12], "echo hi");
	assert_null(sv.v[13]);
	vg_strv_release(&sv);
	vg_slurm_step_argv(NULL, 0, 0, 0, NULL, argv, &sv);
	assert_int_equal(sv.n, 10);
	assert_string_equal(sv.v[4], "--cpus-per-task=1");
	assert_string_equal(sv.v[5], "--kill-on-bad-exit=1");
	vg_strv_release(&sv);
	(void)state;
}

/* resources.gpu_type is the gres type of a job and the type of a
 * step's --gpus. */
static void
test_gpu_type(void **state)
{
	struct vg_slurm_job j = base;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_strv sv = VG_STRV_INIT;
	const char *const argv[] = { "true", NULL };
	struct vg_err e;

	j.gpus = 2;
	j.gpu_type = "a100";
	j.array = "0";
	assert_int_equal(vg_slurm_script(&j, &b, &e), 0);
	assert_non_null(strstr(vg_buf_str(&b), "#SBATCH --gres=gpu:a100:2\n"));
	vg_buf_release(&b);
	vg_slurm_step_argv("x", 1, 0, 2, "h100", argv, &sv);
	assert_string_equal(sv.v[5], "--gpus=h100:2");
	vg_strv_release(&sv);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_full),
		cmocka_unit_test(test_gpu_type),
		cmocka_unit_test(test_script_hostile_values),
		cmocka_unit_test(test_script_control_chars),
		cmocka_unit_test(test_script_shell_part),
		cmocka_unit_test(test_array_spec),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_script_parallel),
		cmocka_unit_test(test_script_hostile_options),
		cmocka_unit_test(test_option_check),
		cmocka_unit_test(test_launcher),
		cmocka_unit_test(test_step_argv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
