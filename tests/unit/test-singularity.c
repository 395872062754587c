/*
 * test-singularity.c - the singularity backend's pure parts: the command
 * line, the environment file, bind and flag checks, finding the binary,
 * and telling apptainer's own failures from the task's exit code.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/singularity.h"
#include "common/path.h"

/* Writable copies of literals for the manifest's char * fields. */
static char s_work[] = "/work", s_data[] = "/data", s_rel[] = "rel",
    s_etc[] = "/etc*", s_bind[] = "host-access", s_network[] = "network";

/* A hand-built attempt (manifest, task, attempt). */
struct fx {
	struct vg_manifest	m;
	struct vg_task		t;
	struct vg_attempt	a;
	struct vg_rule		rule;
	char			*dir;
};

static int
setup(void **state)
{
	struct fx *f = vg_xcalloc(1, sizeof(*f));
	char tmpl[] = "/tmp/vigil-test-sing.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	f->dir = realpath(tmpl, NULL);
	vg_singularity_of(&f->m)->containall = 1;
	vg_singularity_of(&f->m)->no_home = 1;
	vg_singularity_of(&f->m)->cleanenv = 1;
	f->t.index = 2;
	f->t.command.shell = vg_xstrdup("echo hi");
	f->a.m = &f->m;
	f->a.task = &f->t;
	f->a.run_id = "run9";
	f->a.task_dir = "/state/runs/run9/tasks/2";
	f->a.attempt = 1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct vg_err e;
	size_t i;

	vg_err_init(&e);
	vg_rm_rf(f->dir, &e);
	free(f->dir);
	free(f->t.command.shell);
	vg_strv_release(&f->t.command.argv);
	vg_strv_release(&vg_singularity_of(&f->m)->binds);
	vg_strv_release(&vg_singularity_of(&f->m)->flags);
	vg_strv_release(&vg_singularity_of(&f->m)->add_caps);
	for (i = 0; i < f->t.env.n; i++) {
		free(f->t.env.v[i].key);
		free(f->t.env.v[i].value);
	}
	free(f->t.env.v);
	free(f);
	unsetenv("VIGIL_APPTAINER");
	return 0;
}

/* Joins argv with single spaces for comparison. */
static char *
joined(const struct vg_strv *sv)
{
	struct vg_buf b = VG_BUF_INIT;
	size_t i;

	for (i = 0; i < sv->n; i++) {
		if (i > 0)
			vg_buf_addc(&b, ' ');
		vg_buf_adds(&b, sv->v[i]);
	}
	return vg_buf_detach(&b);
}

/* Builds the argv of f's attempt and compares it with want. */
static void
check_argv(struct fx *f, const char *scratch, const char *gpu,
    const char *want)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_err e;
	char *got;

	vg_err_init(&e);
	assert_int_equal(vg_singularity_argv(&f->a, "/usr/bin/apptainer",
	    "/img/x.sif", "/state/runs/run9/tasks/2/.apptainer-env", scratch,
	    gpu, &argv, &e), 0);
	got = joined(&argv);
	assert_string_equal(got, want);
	free(got);
	vg_strv_release(&argv);
}

static void
test_argv_defaults(void **state)
{
	struct fx *f = *state;

	check_argv(f, "/scr/vigil/run9/2", NULL,
	    "/usr/bin/apptainer exec --containall --no-home --cleanenv "
	    "--no-privs --no-eval --bind /state/runs/run9/tasks/2:/state/runs/run9/tasks/2 "
	    "--bind /scr/vigil/run9/2:/scratch --pwd /scratch "
	    "--env-file /state/runs/run9/tasks/2/.apptainer-env /img/x.sif "
	    "/bin/sh -c echo hi");
	/* without scratch the task directory is the cwd */
	check_argv(f, NULL, NULL,
	    "/usr/bin/apptainer exec --containall --no-home --cleanenv "
	    "--no-privs --no-eval --bind /state/runs/run9/tasks/2:/state/runs/run9/tasks/2 "
	    "--pwd /state/runs/run9/tasks/2 "
	    "--env-file /state/runs/run9/tasks/2/.apptainer-env /img/x.sif "
	    "/bin/sh -c echo hi");
}

static void
test_argv_configured(void **state)
{
	struct fx *f = *state;
	char *want;

	vg_singularity_of(&f->m)->containall = 0;
	vg_singularity_of(&f->m)->no_home = 0;
	vg_singularity_of(&f->m)->cleanenv = 0;
	vg_singularity_of(&f->m)->writable_tmpfs = 1;
	vg_singularity_of(&f->m)->scratch_mount = s_work;
	vg_singularity_of(&f->m)->pwd = s_data;
	vg_strv_push(&vg_singularity_of(&f->m)->binds, f->dir);
	vg_strv_pushf(&vg_singularity_of(&f->m)->binds, "%s:/data:ro", f->dir);
	vg_strv_push(&vg_singularity_of(&f->m)->flags, "--net");
	vg_strv_push(&vg_singularity_of(&f->m)->flags, "--network=none");
	vg_strv_push(&f->t.command.argv, "python3");
	vg_strv_push(&f->t.command.argv, "a b.py");
	f->t.command.is_argv = 1;
	f->a.res.gpus = 1;
	want = vg_xasprintf("/usr/bin/apptainer exec --writable-tmpfs "
	    "--no-privs --no-eval --rocm "
	    "--bind /state/runs/run9/tasks/2:/state/runs/run9/tasks/2 "
	    "--bind /s:/work --bind %s:%s --bind %s:/data:ro --pwd /data "
	    "--env-file /state/runs/run9/tasks/2/.apptainer-env --net "
	    "--network=none /img/x.sif python3 a b.py", f->dir, f->dir,
	    f->dir);
	check_argv(f, "/s", "--rocm", want);
	free(want);
	/* a GPU flag already among the flags is not doubled */
	vg_strv_push(&vg_singularity_of(&f->m)->flags, "--nv");
	want = vg_xasprintf("/usr/bin/apptainer exec --writable-tmpfs "
	    "--no-privs --no-eval "
	    "--bind /state/runs/run9/tasks/2:/state/runs/run9/tasks/2 "
	    "--bind /s:/work --bind %s:%s --bind %s:/data:ro --pwd /data "
	    "--env-file /state/runs/run9/tasks/2/.apptainer-env --net "
	    "--network=none --nv /img/x.sif python3 a b.py", f->dir, f->dir,
	    f->dir);
	check_argv(f, "/s", "--rocm", want);
	free(want);
}

/* singularity.add_caps: names checked, host access judged by the policy,
 * then --add-caps after --no-privs. */
static void
test_add_caps(void **state)
{
	struct fx *f = *state;
	struct vg_strv caps = VG_STRV_INIT, argv = VG_STRV_INIT;
	struct vg_policy_conf pol = { 0 };
	struct vg_rule rule = { 0 };
	struct vg_err e;
	char *out, *got, id[] = "caps", cat[] = "host-access",
	    approve[] = "auto-approve";

	vg_err_init(&e);
	assert_int_equal(vg_singularity_check_caps(&caps, NULL, &out, &e), 0);
	assert_null(out);
	vg_strv_push(&caps, "net_raw");
	vg_strv_push(&caps, "CAP_CHOWN");
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e),
	    VG_EDENIED);
	assert_null(out);
	assert_string_equal(e.msg, "host access refused: singularity.add_caps "
	    "'net_raw' adds a capability (and more); allow with a policy "
	    "rule of category host-access");
	rule.id = id;
	rule.category = cat;
	pol.allow = &rule;
	pol.nallow = 1;
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e), 0);
	assert_string_equal(out, "CAP_NET_RAW,CAP_CHOWN");
	free(out);
	pol.nallow = 0;
	pol.mode = approve;
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e), 0);
	free(out);
	vg_strv_push(&caps, "ALL");
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "singularity.add_caps: 'ALL' is not a "
	    "capability name (such as CAP_NET_RAW; name each one, not ALL)");
	vg_strv_release(&caps);
	vg_strv_push(&caps, "CAP_");
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e),
	    VG_EINVAL);
	vg_strv_release(&caps);
	vg_strv_push(&caps, "SYS-ADMIN");
	assert_int_equal(vg_singularity_check_caps(&caps, &pol, &out, &e),
	    VG_EINVAL);
	vg_strv_release(&caps);

	/* In the command line, refused without a rule, after --no-privs
	 * with one. */
	vg_strv_push(&vg_singularity_of(&f->m)->add_caps, "CAP_CHOWN");
	assert_int_equal(vg_singularity_argv(&f->a, "/usr/bin/apptainer",
	    "/img/x.sif", NULL, NULL, NULL, &argv, &e), VG_EDENIED);
	vg_strv_release(&argv);
	f->m.policy.allow = &rule;
	f->m.policy.nallow = 1;
	assert_int_equal(vg_singularity_argv(&f->a, "/usr/bin/apptainer",
	    "/img/x.sif", NULL, NULL, NULL, &argv, &e), 0);
	got = joined(&argv);
	assert_non_null(strstr(got, " --no-privs --add-caps CAP_CHOWN "
	    "--no-eval "));
	free(got);
	vg_strv_release(&argv);
	f->m.policy.nallow = 0;
	/* --add-caps and --keep-privs have the checked setting. */
	assert_int_equal(vg_singularity_check_flag("--keep-privs", &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "singularity.flags: '--keep-privs' is not "
	    "allowed here; use singularity.add_caps, which vigil checks");
	assert_int_equal(vg_singularity_check_flag("--add-caps=CAP_X", &e),
	    VG_EINVAL);
}

static void
test_argv_errors(void **state)
{
	struct fx *f = *state;
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_err e;

	vg_err_init(&e);
	vg_singularity_of(&f->m)->scratch_mount = s_rel;
	assert_int_equal(vg_singularity_argv(&f->a, "a", "i", NULL, "/s",
	    NULL, &argv, &e), VG_EINVAL);
	assert_string_equal(e.msg, "singularity.scratch_mount 'rel' is not "
	    "an absolute path");
	vg_singularity_of(&f->m)->scratch_mount = NULL;
	vg_singularity_of(&f->m)->pwd = s_rel;
	assert_int_equal(vg_singularity_argv(&f->a, "a", "i", NULL, "/s",
	    NULL, &argv, &e), VG_EINVAL);
	assert_string_equal(e.msg, "singularity.pwd 'rel' is not an absolute "
	    "path");
	vg_singularity_of(&f->m)->pwd = NULL;
	vg_strv_push(&vg_singularity_of(&f->m)->binds, "/no/such/dir:/x");
	assert_int_equal(vg_singularity_argv(&f->a, "a", "i", NULL, "/s",
	    NULL, &argv, &e), VG_EINVAL);
	assert_string_equal(e.msg, "singularity.binds[0]: bind "
	    "'/no/such/dir:/x': source '/no/such/dir' does not exist");
	vg_strv_release(&argv);
	vg_strv_release(&vg_singularity_of(&f->m)->binds);
	vg_strv_push(&vg_singularity_of(&f->m)->flags, "-B");
	assert_int_equal(vg_singularity_argv(&f->a, "a", "i", NULL, "/s",
	    NULL, &argv, &e), VG_EINVAL);
	assert_string_equal(e.msg, "singularity.flags: '-B' is not allowed "
	    "here; use singularity.binds, which vigil checks");
	vg_strv_release(&argv);
	vg_strv_release(&vg_singularity_of(&f->m)->flags);
	f->t.command.is_argv = 1;
	assert_int_equal(vg_singularity_argv(&f->a, "a", "i", NULL, "/s",
	    NULL, &argv, &e), VG_EINVAL);
	assert_string_equal(e.msg, "the task's command is an empty list");
	vg_strv_release(&argv);
}

/* Adds key=value to f's task env. */
static void
env_add(struct fx *f, const char *k, const char *v)
{
	f->t.env.v = vg_xrealloc(f->t.env.v, (f->t.env.n + 1) *
	    sizeof(*f->t.env.v));
	memset(&f->t.env.v[f->t.env.n], 0, sizeof(*f->t.env.v));
	f->t.env.v[f->t.env.n].key = vg_xstrdup(k);
	f->t.env.v[f->t.env.n++].value = vg_xstrdup(v);
}

static void
test_env_text(void **state)
{
	struct fx *f = *state;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	env_add(f, "PLAIN", "v1");
	env_add(f, "TRICKY", "a \"q\" $HOME `x` \\ 'sq'\nline2");
	env_add(f, "EMPTY", "");
	assert_int_equal(vg_singularity_env_text(&f->a, "/scratch", &b, &e),
	    0);
	assert_string_equal(vg_buf_str(&b),
	    "PLAIN=\"v1\"\n"
	    "TRICKY=\"a \\\"q\\\" \\$HOME \\`x\\` \\\\ 'sq'\nline2\"\n"
	    "EMPTY=\"\"\n"
	    "VIGIL_RUN_ID=\"run9\"\n"
	    "VIGIL_TASK_INDEX=\"2\"\n"
	    "VIGIL_TASK_DIR=\"/state/runs/run9/tasks/2\"\n"
	    "VIGIL_ATTEMPT=\"1\"\n"
	    "CUDA_VISIBLE_DEVICES=\"\"\n"
	    "VIGIL_SCRATCH=\"/scratch\"\n");
	vg_buf_reset(&b);
	env_add(f, "BAD-NAME", "x");
	assert_int_equal(vg_singularity_env_text(&f->a, NULL, &b, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "environment variable name 'BAD-NAME' is "
	    "not [A-Za-z_][A-Za-z0-9_]*");
	vg_buf_release(&b);
}

/* Checks spec against the policy of f, expecting rc and msg or bind. */
static void
check_bind(struct fx *f, const char *spec, int rc, const char *want)
{
	struct vg_err e;
	char *bind;

	vg_err_init(&e);
	assert_int_equal(vg_singularity_check_bind(spec, &f->m.policy, &bind,
	    &e), rc);
	if (rc == 0) {
		assert_string_equal(bind, want);
		free(bind);
	} else {
		assert_null(bind);
		assert_string_equal(e.msg, want);
	}
}

static void
test_binds(void **state)
{
	struct fx *f = *state;
	char *spec, *want, *link;

	check_bind(f, "/tmp", 0, "/tmp:/tmp");
	check_bind(f, "/tmp:/t:ro", 0, "/tmp:/t:ro");
	check_bind(f, "/var/tmp:/vt:rw", 0, "/var/tmp:/vt:rw");
	check_bind(f, "/tmp:/t:rx", VG_EINVAL,
	    "bind '/tmp:/t:rx': option 'rx' is not ro or rw");
	check_bind(f, "tmp:/t", VG_EINVAL,
	    "bind 'tmp:/t': source 'tmp' is not an absolute path");
	check_bind(f, "/tmp:t", VG_EINVAL,
	    "bind '/tmp:t': destination 't' is not an absolute path");
	check_bind(f, "/tmp,/var/tmp", VG_EINVAL, "bind '/tmp,/var/tmp' "
	    "contains ',' (apptainer's list separator); give one bind per "
	    "entry");
	check_bind(f, "/", VG_EDENIED, "bind '/': source '/' is the root "
	    "directory; binding it needs a policy allow rule with category "
	    "'host-access' matching '/'");
	check_bind(f, "/usr/share:/s", VG_EDENIED, "bind '/usr/share:/s': "
	    "source '/usr/share' is a system directory; binding it needs a "
	    "policy allow rule with category 'host-access' matching '/usr/share'");
	/* a symlink is judged by where it leads */
	link = vg_path_join(f->dir, "l");
	assert_int_equal(symlink("/etc", link), 0);
	spec = vg_xasprintf("%s:/e", link);
	want = vg_xasprintf("bind '%s': source '/etc' is a system "
	    "directory; binding it needs a policy allow rule with category "
	    "'host-access' matching '/etc'", spec);
	check_bind(f, spec, VG_EDENIED, want);
	free(want);
	/* an allow rule of category bind opens exactly what it matches */
	f->rule.match = s_etc;
	f->rule.category = s_bind;
	f->m.policy.allow = &f->rule;
	f->m.policy.nallow = 1;
	check_bind(f, spec, 0, "/etc:/e");
	check_bind(f, "/usr/share:/s", VG_EDENIED, "bind '/usr/share:/s': "
	    "source '/usr/share' is a system directory; binding it needs a "
	    "policy allow rule with category 'host-access' matching '/usr/share'");
	/* a rule of another category does not count */
	f->rule.category = s_network;
	check_bind(f, "/etc", VG_EDENIED, "bind '/etc': source '/etc' is a "
	    "system directory; binding it needs a policy allow rule with "
	    "category 'host-access' matching '/etc'");
	free(spec);
	free(link);
}

static void
test_flags(void **state)
{
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_singularity_check_flag("--net", &e), 0);
	assert_int_equal(vg_singularity_check_flag("--bindx", &e), 0);
	assert_int_equal(vg_singularity_check_flag("--env-file=/x", &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "singularity.flags: '--env-file=/x' is "
	    "not allowed here; use env, which vigil checks");
	assert_int_equal(vg_singularity_check_flag("--writable", &e),
	    VG_EINVAL);
	assert_int_equal(vg_singularity_check_flag("net", &e), VG_EINVAL);
	assert_string_equal(e.msg, "singularity.flags: 'net' is not a flag "
	    "(give them as '--name' or '--name=value')");
}

/* Makes an executable script dir/name. */
static char *
mkexe(const char *dir, const char *name)
{
	static const char script[] = "#!/bin/sh\necho 'apptainer version "
	    "9.9'\n";
	char *p = vg_path_join(dir, name);
	int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0755);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, script, sizeof(script) - 1),
	    sizeof(script) - 1);
	close(fd);
	return p;
}

static void
test_find(void **state)
{
	struct fx *f = *state;
	char *old = vg_xstrdup(getenv("PATH")), *bin1, *bin2, *p, *want;
	char *d1, *d2;
	struct vg_err e;

	vg_err_init(&e);
	d1 = vg_path_join(f->dir, "d1");
	d2 = vg_path_join(f->dir, "d2");
	mkdir(d1, 0755);
	mkdir(d2, 0755);
	bin1 = mkexe(d1, "singularity");
	bin2 = mkexe(d2, "apptainer");
	/* apptainer is preferred over singularity, wherever in PATH */
	want = vg_xasprintf("%s:%s", d1, d2);
	setenv("PATH", want, 1);
	assert_int_equal(vg_singularity_find(NULL, &p, &e), 0);
	assert_string_equal(p, bin2);
	free(p);
	free(want);
	setenv("PATH", d1, 1);
	assert_int_equal(vg_singularity_find(NULL, &p, &e), 0);
	assert_string_equal(p, bin1);
	free(p);
	/* $VIGIL_APPTAINER, then the configured binary, win */
	setenv("VIGIL_APPTAINER", bin2, 1);
	assert_int_equal(vg_singularity_find(NULL, &p, &e), 0);
	assert_string_equal(p, bin2);
	free(p);
	assert_int_equal(vg_singularity_find(bin1, &p, &e), 0);
	assert_string_equal(p, bin1);
	free(p);
	assert_int_equal(vg_singularity_find("singularity", &p, &e), 0);
	assert_string_equal(p, bin1);
	free(p);
	assert_int_equal(vg_singularity_find("nosuch", &p, &e), VG_ENOENT);
	assert_string_equal(e.msg, "singularity.binary 'nosuch' is not in "
	    "$PATH");
	setenv("VIGIL_APPTAINER", "/no/such", 1);
	assert_int_equal(vg_singularity_find(NULL, &p, &e), VG_ENOENT);
	assert_null(p);
	assert_string_equal(e.msg, "$VIGIL_APPTAINER '/no/such' is not an "
	    "executable file");
	unsetenv("VIGIL_APPTAINER");
	setenv("PATH", f->dir, 1);
	assert_int_equal(vg_singularity_find(NULL, &p, &e), VG_ENOENT);
	want = vg_xasprintf("neither 'apptainer' nor 'singularity' is in "
	    "$PATH (%s): install Apptainer, load its module, or set "
	    "singularity.binary or $VIGIL_APPTAINER", f->dir);
	assert_string_equal(e.msg, want);
	free(want);
	setenv("PATH", old, 1);
	/* the version line, for vigil doctor */
	assert_int_equal(vg_singularity_version(bin2, &p, &e), 0);
	assert_string_equal(p, "apptainer version 9.9");
	free(p);
	assert_int_equal(vg_singularity_version("/bin/false", &p, &e),
	    VG_EBACKEND);
	assert_string_equal(e.msg, "'/bin/false --version' failed (exit 1)");
	free(old);
	free(bin1);
	free(bin2);
	free(d1);
	free(d2);
}

/* Builds a wait status for an exit code. */
#define EXITED(c)	((c) << 8)

static void
test_classify(void **state)
{
	struct vg_result r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(vg_singularity_classify(EXITED(0), "", &r),
	    VG_ST_SUCCEEDED);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.reason, "");
	assert_int_equal(vg_singularity_classify(EXITED(7), "FATAL: x\n",
	    &r), VG_ST_FAILED);
	assert_int_equal(r.exit_code, 7);
	assert_string_equal(r.reason, "exit code 7");
	/* 255 without FATAL: the task's own exit code */
	assert_int_equal(vg_singularity_classify(EXITED(255), "oops\n", &r),
	    VG_ST_FAILED);
	assert_int_equal(r.exit_code, 255);
	assert_int_equal(vg_singularity_classify(EXITED(255), NULL, &r),
	    VG_ST_FAILED);
	/* FATAL must start a line */
	assert_int_equal(vg_singularity_classify(EXITED(255),
	    "log: FATAL: no\n", &r), VG_ST_FAILED);
	/* 255 with FATAL: apptainer's failure, last FATAL line wins */
	assert_int_equal(vg_singularity_classify(EXITED(255),
	    "WARNING: w\nFATAL:   first\nFATAL:   could not open image "
	    "/x.sif: image format not recognized\r\n", &r),
	    VG_ST_BACKEND_ERROR);
	assert_int_equal(r.exit_code, 255);
	assert_string_equal(r.reason, "apptainer: could not open image "
	    "/x.sif: image format not recognized");
	assert_int_equal(vg_singularity_classify(EXITED(255), "FATAL:", &r),
	    VG_ST_BACKEND_ERROR);
	assert_string_equal(r.reason, "apptainer: ");
	/* a signal */
	assert_int_equal(vg_singularity_classify(9, "", &r), VG_ST_FAILED);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, 9);
	assert_string_equal(r.reason, "killed by signal 9");
}

static void
test_ops(void **state)
{
	(void)state;
	assert_ptr_equal(vg_backend_find("apptainer"),
	    &vg_backend_singularity);
	assert_ptr_equal(vg_backend_find("singularity"),
	    &vg_backend_singularity);
	assert_true(vg_backend_singularity.p.flags & VG_PLUGIN_IMAGE);
	assert_string_equal(vg_backend_singularity.p.alias, "apptainer");
	assert_non_null(vg_backend_singularity.start);
	assert_non_null(vg_backend_singularity.finish);
	assert_non_null(vg_backend_singularity.cancel);
	assert_non_null(vg_backend_singularity.run);
	assert_non_null(vg_backend_singularity.probe);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_argv_defaults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_argv_configured, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_add_caps, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_argv_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_env_text, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_binds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_ops),
	};

	return cmocka_run_group_tests_name("singularity", tests, NULL, NULL);
}
