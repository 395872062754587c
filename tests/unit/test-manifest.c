/*
 * test-manifest.c - loading, defaults, config layers, --set, the YAML
 * limits, the JSON round trip, and every bad manifest of
 * tests/data/manifests/bad against its .err file.
 *
 * Run from the source tree root (make check does), or set VIGIL_SRCDIR.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/singularity.h"
#include "backends/ssh.h"
#include "backends/cloud.h"
#include "backends/docker.h"
#include "runner/manifest/manifest-int.h"
#include "schedulers/slurm.h"
#include "sif-cache/cache.h"
#include "runner/manifest/manifest.h"
#include "common/path.h"
#include "runner/manifest/task.h"
#include "runner/manifest/yaml-tree.h"

struct fixture {
	char			 dir[64];	/* private temp dir */
	struct vg_diag		 diag;
	struct vg_manifest	*m;
	struct vg_err		 e;
	struct vg_load_opts	 opts;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/vg-test-manifest.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->opts.no_configs = 1;
	vg_err_init(&f->e);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	vg_manifest_free(f->m);
	vg_diag_release(&f->diag);
	vg_rm_rf(f->dir, NULL);
	free(f);
	return 0;
}

/* Loads text as "t.yaml"; returns the rc. */
static int
load(struct fixture *f, const char *text)
{
	vg_manifest_free(f->m);
	f->m = NULL;
	vg_diag_release(&f->diag);
	return vg_manifest_load_mem("t.yaml", text, strlen(text), &f->opts,
	    &f->m, &f->diag, &f->e);
}

/* All diagnostics joined by newlines (static buffer). */
static const char *
diags(const struct fixture *f)
{
	static char buf[8192];
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < f->diag.lines.n && o < sizeof(buf) - 1; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n",
		    f->diag.lines.v[i]);
	return buf;
}

/* All diagnostics as vigil validate prints them: with the source line,
 * a caret and any hint (static buffer). */
static const char *
rendered(const struct fixture *f)
{
	static struct vg_buf b = VG_BUF_INIT;
	size_t i;

	vg_buf_reset(&b);
	for (i = 0; i < f->diag.lines.n; i++)
		vg_diag_render(&f->diag, i, &b);
	return vg_buf_str(&b);
}

/* Writes a file in the fixture dir; returns its path (static). */
static const char *
put(struct fixture *f, const char *name, const char *text)
{
	static char path[4][256];
	static int slot;
	char *p = path[slot++ % 4];
	FILE *fp;

	snprintf(p, 256, "%s/%s", f->dir, name);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	return p;
}

/* The section of cloud backend name in m. */
static const struct vg_cloud_conf *
cloud_conf(const struct vg_manifest *m, const char *name)
{
	const struct vg_backend_ops *ops = vg_backend_find(name);

	assert_non_null(ops);
	assert_non_null(ops->p.sections);
	return vg_manifest_conf(m, ops->p.sections[0]);
}

static void
test_defaults(void **state)
{
	struct fixture *f = *state;
	struct vg_manifest *m;

	assert_int_equal(load(f, "command: echo hi\n"), 0);
	m = f->m;
	assert_string_equal(m->file, "t.yaml");
	assert_int_equal(m->version, 1);
	assert_null(m->name);
	assert_string_equal(m->scheduler, "direct");
	assert_string_equal(m->backend, "local");
	assert_null(m->image);
	assert_false(m->command.is_argv);
	assert_string_equal(m->command.shell, "echo hi");
	assert_string_equal(m->command.loc.file, "t.yaml");
	assert_int_equal(m->command.loc.line, 1);
	assert_int_equal(m->command.loc.col, 10);
	assert_true(m->timeout == 0);
	assert_true(m->kill_grace == VG_KILL_GRACE_DEFAULT);
	assert_int_equal(m->retry.max, 0);
	assert_int_equal(m->retry.on, VG_RETRY_FAILED | VG_RETRY_TIMEOUT |
	    VG_RETRY_OOM | VG_RETRY_NODE_FAIL | VG_RETRY_PREEMPTED |
	    VG_RETRY_LOST | VG_RETRY_BACKEND_ERROR);
	assert_true(m->retry.backoff == 1);
	assert_true(m->retry.backoff_max == 300);
	assert_true(m->retry.memory_factor == 1);
	assert_true(m->retry.time_factor == 1);
	assert_null(m->policy.mode);
	assert_int_equal(m->scratch.keep, VG_KEEP_ON_FAILURE);
	assert_int_equal(m->isolation.level, VG_ISO_STANDARD);
	assert_string_equal(m->isolation.ptrace, "children");
	assert_int_equal(m->limits.core, 0);
	assert_int_equal(m->limits.core_set, 0);
	assert_string_equal(vg_docker_of(m)->network, "none");
	assert_string_equal(vg_docker_of(m)->pull, "missing");
	assert_int_equal(vg_ssh_of(m)->port, 22);
	assert_int_equal(vg_ssh_of(m)->keepalive, 15);
	assert_int_equal(vg_ssh_of(m)->connect_timeout, 10);
	assert_string_equal(vg_ssh_of(m)->host_key, "strict");
	assert_string_equal(vg_ssh_of(m)->remote_dir, "~/.vigil/runs");
	assert_int_equal(vg_singularity_of(m)->containall, 1);
	assert_int_equal(vg_singularity_of(m)->no_home, 1);
	assert_int_equal(vg_singularity_of(m)->cleanenv, 1);
	assert_string_equal(vg_singularity_of(m)->scratch_mount, "/scratch");
	assert_string_equal(vg_slurm_of(m)->interface, "auto");
	assert_string_equal(vg_slurm_of(m)->signal, "B:USR2@90");
	assert_int_equal(m->matrix.naxes, 0);
	assert_int_equal(vg_expand_count(m), 1);
}

static void
test_full(void **state)
{
	struct fixture *f = *state;
	struct vg_manifest *m;

	assert_int_equal(vg_manifest_load("tests/data/manifests/good/"
	    "full.yaml", &f->opts, &f->m, &f->diag, &f->e), 0);
	m = f->m;
	assert_string_equal(m->name, "full-example");
	assert_string_equal(m->scheduler, "slurm");
	assert_string_equal(m->backend, "singularity");	/* apptainer */
	assert_int_equal(m->resources.cpus, 4);
	assert_int_equal(m->resources.memory, 16ULL << 30);
	assert_int_equal(m->resources.gpus, 1);
	assert_int_equal(m->resources.time, 36 * 3600);
	assert_string_equal(m->resources.constraint, "a100");
	assert_true(m->timeout == 36 * 3600);
	assert_true(m->kill_grace == 30);
	assert_int_equal(m->retry.max, 3);
	assert_int_equal(m->retry.on, VG_RETRY_TIMEOUT | VG_RETRY_OOM |
	    VG_RETRY_NODE_FAIL | VG_RETRY_PREEMPTED);
	assert_true(m->retry.backoff_max == 600);
	assert_true(m->retry.memory_factor == 1.5);
	assert_string_equal(m->policy.mode, "auto-deny");
	assert_int_equal(m->policy.nallow, 1);
	assert_string_equal(m->policy.allow[0].match, "python3 *");
	assert_int_equal(m->policy.allow[0].loc.line, 39);
	assert_int_equal(m->policy.ndeny, 1);
	assert_string_equal(m->policy.deny[0].category, "network");
	assert_int_equal(m->scratch.keep, VG_KEEP_ALWAYS);
	assert_int_equal(m->scratch.min_free, 100ULL << 30);
	assert_int_equal(m->outputs.paths.n, 2);
	assert_int_equal(m->isolation.level, VG_ISO_STRICT);
	assert_int_equal(m->isolation.required, 1);
	assert_string_equal(m->isolation.ptrace, "deny");
	assert_int_equal(m->limits.core_set, 1);
	assert_int_equal(m->limits.nofile, 4096);
	assert_int_equal(m->limits.cpu_time, 48 * 3600);
	assert_int_equal(vg_docker_of(m)->pids_limit, 1024);
	assert_int_equal(vg_ssh_of(m)->port, 2222);
	assert_int_equal(vg_singularity_of(m)->cleanenv, 0);
	assert_int_equal(vg_singularity_of(m)->binds.n, 2);
	assert_string_equal(vg_singularity_of(m)->flags.v[0], "--nv");
	assert_int_equal(vg_slurm_of(m)->array_parallelism, 8);
	assert_true(vg_slurm_of(m)->poll_max == 120);
	assert_string_equal(vg_cache_of(m)->purge.clock, "atime");
	assert_int_equal(vg_cache_of(m)->purge.age, 8 * 604800);
	assert_int_equal(vg_cache_of(m)->quota_bytes, 200ULL << 30);
	assert_string_equal(cloud_conf(m, "modal")->token_env, "MODAL_TOKEN");
	assert_int_equal(cloud_conf(m, "daytona")->keep, 1);
	assert_string_equal(cloud_conf(m, "vercel")->region, "iad1");
	assert_int_equal(m->matrix.naxes, 2);
	assert_int_equal(vg_expand_count(m), 12);
}

/* to_json -> from_json -> to_json is the identity, for a manifest. */
static void
roundtrip(struct vg_manifest *m)
{
	struct vg_buf a = VG_BUF_INIT, b = VG_BUF_INIT;
	struct vg_manifest *back = NULL;
	struct vg_err e;

	vg_manifest_to_json(m, &a);
	if (vg_manifest_from_json(a.data, a.len, &back, &e) != 0)
		fail_msg("from_json: %s\n%s", e.msg, a.data);
	vg_manifest_to_json(back, &b);
	assert_string_equal(a.data, b.data);
	assert_string_equal(back->file, m->file);
	assert_int_equal(back->command.is_argv, m->command.is_argv);
	assert_int_equal(back->limits.core_set, m->limits.core_set);
	assert_int_equal(vg_expand_count(back), vg_expand_count(m));
	vg_manifest_free(back);
	vg_buf_release(&a);
	vg_buf_release(&b);
}

static void
test_json_roundtrip(void **state)
{
	struct fixture *f = *state;
	static const char *const texts[] = {
		"command: echo hi\n",
		"command: [a, 'b c', \"d\\te\\u00e9\\n\"]\n"
		"env: {X: \"quote\\\" backslash\\\\ ctl\\u0001\"}\n"
		"timeout: 0.1\nkill_grace: 1.0000000000000002\n"
		"retry: {backoff: 0.00001, backoff_max: 100, "
		"memory_factor: 1.1, on: []}\n"
		"limits: {core: 0, fsize: 18446744073709551615}\n"
		"slurm: {signal: ''}\n",
		("command: x\nmatrix:\n  a: [1, '2', yes, 0.10]\n"
		"  include: [{a: 1, extra: e}]\n  exclude: [{a: 2}]\n"),
	};
	DIR *dir;
	struct dirent *de;
	char path[512];
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (load(f, texts[i]) != 0)
			fail_msg("%s", diags(f));
		roundtrip(f->m);
	}
	/* Unicode and escapes survive exactly. */
	assert_int_equal(load(f, texts[1]), 0);
	assert_string_equal(f->m->command.argv.v[2], "d\te\xc3\xa9\n");
	assert_true(f->m->kill_grace == 1.0000000000000002);
	assert_string_equal(vg_slurm_of(f->m)->signal, "");
	assert_int_equal(f->m->limits.core_set, 1);
	/* kill_grace: 0 is kept as 0 (SIGKILL at once), never a default */
	assert_int_equal(load(f, "command: x\nkill_grace: 0\n"), 0);
	assert_true(f->m->kill_grace == 0);
	/* Every good manifest too (the example user config allows the
	 * webhook token they name: notify.env_allow is config only). */
	f->opts.no_configs = 0;
	f->opts.site_config = "";
	f->opts.user_config = "examples/site/user-config.yaml";
	dir = opendir("tests/data/manifests/good");
	assert_non_null(dir);
	while ((de = readdir(dir)) != NULL) {
		if (strstr(de->d_name, ".yaml") == NULL)
			continue;
		snprintf(path, sizeof(path), "tests/data/manifests/good/%s",
		    de->d_name);
		vg_manifest_free(f->m);
		f->m = NULL;
		if (vg_manifest_load(path, &f->opts, &f->m, &f->diag,
		    &f->e) != 0)
			fail_msg("%s: %s", path, diags(f));
		roundtrip(f->m);
	}
	closedir(dir);
}

static void
test_json_bad(void **state)
{
	struct vg_manifest *m = (void *)1;
	const char *text;
	struct vg_err e;

	(void)state;
	assert_int_equal(vg_manifest_from_json("{", 1, &m, &e), VG_EPARSE);
	assert_null(m);
	assert_int_equal(vg_manifest_from_json("[]", 2, &m, &e), VG_EPARSE);
	assert_string_equal(e.msg, "bad effective manifest: not an "
	    "effective manifest record");
	text = "{\"file\": \"x\", \"manifest\": {\"timeout\": \"5m\"}}";
	assert_int_equal(vg_manifest_from_json(text, strlen(text), &m, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "bad effective manifest: x: 'timeout' "
	    "must be a duration such as 90, 30s, 5m, 1h30m, 2d or "
	    "1-00:00:00, not '5m'");
}

static void
test_configs(void **state)
{
	struct fixture *f = *state;
	const char *sets[] = { "resources.memory=3G", "env.B=from-set",
		NULL };
	struct vg_manifest *m;

	f->opts.no_configs = 0;
	f->opts.site_config = put(f, "site.yaml",
	    "resources: {memory: 1G, partition: batch, account: site}\n"
	    "policy: {mode: auto-deny}\nenv: {A: site, B: site, C: site}\n"
	    "scratch: {path: /scratch/site}\n");
	f->opts.user_config = put(f, "user.yaml",
	    "resources: {memory: 2G, account: mine}\n"
	    "env: {B: user, C: null}\nretry: {max: 2}\n");
	assert_int_equal(load(f, "command: x\nresources: {cpus: 2}\n"
	    "env: {D: manifest}\nscratch: {path: /tmp/s}\n"), 0);
	m = f->m;
	assert_int_equal(m->resources.memory, 2ULL << 30);	/* user */
	assert_string_equal(m->resources.partition, "batch");	/* site */
	assert_string_equal(m->resources.account, "mine");	/* user */
	assert_int_equal(m->resources.cpus, 2);		/* manifest */
	assert_string_equal(m->policy.mode, "auto-deny");
	assert_int_equal(m->retry.max, 2);
	assert_string_equal(m->scratch.path, "/tmp/s");
	assert_int_equal(m->env.n, 3);
	assert_string_equal(vg_kvs_get(&m->env, "A"), "site");
	assert_string_equal(vg_kvs_get(&m->env, "B"), "user");
	assert_null(vg_kvs_get(&m->env, "C"));	/* removed by null */
	assert_string_equal(vg_kvs_get(&m->env, "D"), "manifest");
	assert_int_equal(m->sources.n, 3);
	assert_string_equal(m->sources.v[2], "t.yaml");

	/* --set beats everything. */
	f->opts.sets = sets;
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_int_equal(f->m->resources.memory, 3ULL << 30);
	assert_string_equal(vg_kvs_get(&f->m->env, "B"), "from-set");

	/* no_configs ignores both. */
	f->opts.sets = NULL;
	f->opts.no_configs = 1;
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_int_equal(f->m->resources.memory, 0);
	assert_int_equal(f->m->env.n, 0);
}

static void
test_config_errors(void **state)
{
	struct fixture *f = *state;
	char want[1024];
	const char *site;

	f->opts.no_configs = 0;
	f->opts.user_config = "";	/* none */
	site = f->opts.site_config = put(f, "site.yaml",
	    "command: echo\nmatrix: {a: [1]}\nname: x\n"
	    "resources: {memroy: 1G}\n");
	assert_int_equal(load(f, "command: x\n"), VG_EINVAL);
	snprintf(want, sizeof(want),
	    "%s:1:1: 'command' belongs in a manifest, not in a config file\n"
	    "%s:2:1: 'matrix' belongs in a manifest, not in a config file\n"
	    "%s:3:1: 'name' belongs in a manifest, not in a config file\n"
	    "%s:4:13: unknown key 'memroy' in 'resources'; did you mean "
	    "'memory'?\n", site, site, site, site);
	assert_string_equal(diags(f), want);
	assert_null(f->m);

	/* Problems in the config and the manifest come together, in
	 * layer order. */
	site = f->opts.site_config = put(f, "site.yaml", "timeout: soon\n");
	assert_int_equal(load(f, "command: x\nkill_grace: never\n"),
	    VG_EINVAL);
	snprintf(want, sizeof(want),
	    "%s:1:10: 'timeout' must be a duration such as 90, 30s, 5m, "
	    "1h30m, 2d or 1-00:00:00, not 'soon'\n"
	    "t.yaml:2:13: 'kill_grace' must be a duration such as 90, 30s, "
	    "5m, 1h30m, 2d or 1-00:00:00, not 'never'\n", site);
	assert_string_equal(diags(f), want);

	/* Syntax errors in a config. */
	site = f->opts.site_config = put(f, "site.yaml", "a: [\n");
	assert_int_equal(load(f, "command: x\n"), VG_EPARSE);
	snprintf(want, sizeof(want), "%s:2:1: invalid YAML: did not find "
	    "expected node content (while parsing a flow node)\n", site);
	assert_string_equal(diags(f), want);

	/* A missing config is fine; an unreadable one is an error. */
	f->opts.site_config = "/nonexistent/vigil/config.yaml";
	assert_int_equal(load(f, "command: x\n"), 0);
	f->opts.site_config = f->dir;	/* a directory: read fails */
	assert_int_equal(load(f, "command: x\n"), VG_EIO);
	assert_int_equal(f->diag.lines.n, 0);
	snprintf(want, sizeof(want), "config file: cannot read '%s': Is a "
	    "directory", f->dir);
	assert_string_equal(f->e.msg, want);
}

static void
test_config_paths(void **state)
{
	struct fixture *f = *state;
	char xdg[128];

	f->opts.no_configs = 0;
	/* Environment overrides of the paths. */
	setenv("VIGIL_SITE_CONFIG", put(f, "s.yaml", "kill_grace: 3\n"), 1);
	setenv("VIGIL_USER_CONFIG", "", 1);
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_true(f->m->kill_grace == 3);
	/* $XDG_CONFIG_HOME/vigil/config.yaml is the user config. */
	snprintf(xdg, sizeof(xdg), "%s/xdg/vigil", f->dir);
	assert_int_equal(vg_mkdir_p(xdg, 0700, NULL), 0);
	put(f, "xdg/vigil/config.yaml", "kill_grace: 4\n");
	snprintf(xdg, sizeof(xdg), "%s/xdg", f->dir);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	unsetenv("VIGIL_USER_CONFIG");
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_true(f->m->kill_grace == 4);
	/* ... and ~/.config/vigil/config.yaml without it. */
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", xdg, 1);
	assert_int_equal(vg_mkdir_p(xdg, 0700, NULL), 0);
	snprintf(xdg, sizeof(xdg), "%s/xdg/.config/vigil", f->dir);
	assert_int_equal(vg_mkdir_p(xdg, 0700, NULL), 0);
	put(f, "xdg/.config/vigil/config.yaml", "kill_grace: 5\n");
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_true(f->m->kill_grace == 5);
	unsetenv("VIGIL_SITE_CONFIG");
}

static void
test_set(void **state)
{
	struct fixture *f = *state;
	const char *sets[4] = { NULL };

	f->opts.sets = sets;
	sets[0] = "matrix.lr=[0.1, 0.2, 0.3]";
	sets[1] = "command=echo ${{ matrix.lr }}";
	sets[2] = "slurm.signal=";
	assert_int_equal(load(f, "command: x\nmatrix: {lr: [1], bs: [8]}\n"),
	    0);
	assert_int_equal(f->m->matrix.naxes, 2);
	assert_string_equal(f->m->matrix.axes[0].name, "lr");
	assert_int_equal(f->m->matrix.axes[0].values.n, 3);
	assert_string_equal(f->m->matrix.axes[0].values.v[2], "0.3");
	assert_string_equal(f->m->command.shell, "echo ${{ matrix.lr }}");
	/* An empty value is null: the default comes back. */
	assert_string_equal(vg_slurm_of(f->m)->signal, "B:USR2@90");
	sets[2] = "slurm.signal=''";
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_string_equal(vg_slurm_of(f->m)->signal, "");

	sets[0] = "retry.on=[oom]";
	sets[1] = "backend=apptainer";
	sets[2] = "image=docker://example/x:1";
	assert_int_equal(load(f, "command: x\n"), 0);
	assert_int_equal(f->m->retry.on, VG_RETRY_OOM);
	assert_string_equal(f->m->backend, "singularity");

	sets[0] = "nope=1";
	sets[1] = "=1";
	sets[2] = "resources.cpus=[1";
	assert_int_equal(load(f, "command: x\n"), VG_EINVAL);
	assert_string_equal(diags(f),
	    "--set 'nope=1':1:1: unknown key 'nope' (valid keys: version, "
	    "name, scheduler, backend, image, command, env, matrix, "
	    "resources, timeout, kill_grace, retry, policy, scratch, "
	    "outputs, workdir, isolation, limits, concurrency, notify, "
	    "after, output, reuse, inputs, docker, ssh, singularity, cache, "
	    "modal, daytona, vercel, pool, slurm, gridengine)\n"
	    "--set '=1':1:1: expected KEY.PATH=VALUE, for example "
	    "resources.memory=4G\n"
	    "--set 'resources.cpus=[1':1:18: invalid YAML: did not find "
	    "expected ',' or ']' (while parsing a flow sequence that starts "
	    "at line 1, column 16)\n");
}

static void
test_limits(void **state)
{
	struct fixture *f = *state;
	struct vg_buf b = VG_BUF_INIT;
	int i;

	/* Size. */
	vg_buf_adds(&b, "command: x\n#");
	for (i = 0; i < 1024 * 1024; i++)
		vg_buf_addc(&b, 'x');
	assert_int_equal(load(f, b.data), VG_ELIMIT);
	assert_string_equal(diags(f), "t.yaml:1:1: larger than the limit of "
	    "1048576 bytes\n");
	/* Depth: 64 levels are fine, 65 are not. */
	vg_buf_reset(&b);
	vg_buf_adds(&b, "command: x\nx-deep: ");
	for (i = 0; i < 63; i++)
		vg_buf_addc(&b, '[');
	for (i = 0; i < 63; i++)
		vg_buf_addc(&b, ']');
	assert_int_equal(load(f, b.data), VG_EINVAL);	/* unknown key */
	vg_buf_reset(&b);
	vg_buf_adds(&b, "command: x\nx-deep: ");
	for (i = 0; i < 64; i++)
		vg_buf_addc(&b, '[');
	assert_int_equal(load(f, b.data), VG_ELIMIT);
	assert_string_equal(diags(f), "t.yaml:2:72: nesting deeper than 64 "
	    "levels\n");
	/* Aliases: a recursive one, and a budget. */
	assert_int_equal(load(f, "a: &a [1, *a]\n"), VG_EPARSE);
	assert_string_equal(diags(f), "t.yaml:1:11: alias refers to a node "
	    "that contains it (recursive alias)\n");
	vg_buf_reset(&b);
	vg_buf_adds(&b, "command: x\nx: &a [");
	for (i = 0; i < 5000; i++)
		vg_buf_adds(&b, "1,");
	vg_buf_adds(&b, "1]\ny: [*a, *a]\n");
	assert_int_equal(load(f, b.data), VG_ELIMIT);
	assert_string_equal(diags(f), "t.yaml:3:9: aliases expand to more "
	    "than 10000 nodes (alias bomb?)\n");
	vg_buf_release(&b);
}

static void
test_tree(void **state)
{
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_ytree *t;
	int dups, i;

	(void)state;
	/* Large maps use the sorting duplicate check; order is kept. */
	for (i = 0; i < 200; i++)
		vg_buf_printf(&b, "k%d: %d\n", i % 150, i);
	assert_int_equal(vg_ytree_parse("m", b.data, b.len, NULL, &t, &dups,
	    &d), 0);
	assert_int_equal(dups, 50);
	assert_int_equal(d.lines.n, 50);
	assert_string_equal(d.lines.v[0], "m:151:1: duplicate key 'k0' "
	    "(first at line 1, column 1)");
	assert_int_equal(t->root->n, 150);
	assert_string_equal(t->root->items[2 * 149]->str, "k149");
	assert_string_equal(t->root->items[2 * 149 + 1]->str, "149");
	vg_ytree_free(t);
	vg_diag_release(&d);
	/* Complex keys are refused; an empty document has no root. */
	assert_int_equal(vg_ytree_parse("m", "[a]: 1\n", 7, NULL, &t, NULL,
	    &d), VG_EPARSE);
	assert_string_equal(d.lines.v[0], "m:1:1: mapping keys must be "
	    "plain strings");
	vg_diag_release(&d);
	assert_int_equal(vg_ytree_parse("m", "", 0, NULL, &t, NULL, &d), 0);
	assert_null(t->root);
	vg_ytree_free(t);
	/* Invalid UTF-8 is reported at its place. */
	assert_int_equal(vg_ytree_parse("m", "a: b\nc: \xff\n", 10, NULL, &t,
	    NULL, &d), VG_EPARSE);
	assert_string_equal(d.lines.v[0], "m:2:4: invalid YAML: invalid "
	    "leading UTF-8 octet");
	vg_diag_release(&d);
	vg_buf_release(&b);
}

/* Reads a whole small file into a static buffer ("" when missing). */
static const char *
slurp(const char *path, char *buf, size_t size)
{
	FILE *fp = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (fp == NULL)
		return buf;
	n = fread(buf, 1, size - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* True when line starts with "FILE:LINE:COL: ", FILE one of files (the
 * manifest and its --set labels), LINE and COL at least 1. */
static int
located(const char *line, const char *const *files, size_t nfiles)
{
	const char *p;
	long l = 0, c = 0;
	char *end;
	size_t i, len;

	for (i = 0; i < nfiles; i++) {
		len = strlen(files[i]);
		if (strncmp(line, files[i], len) != 0 || line[len] != ':')
			continue;
		p = line + len + 1;
		l = strtol(p, &end, 10);
		if (end == p || *end != ':')
			continue;
		p = end + 1;
		c = strtol(p, &end, 10);
		if (end != p && strncmp(end, ": ", 2) == 0 && l >= 1 &&
		    c >= 1)
			return 1;
	}
	return 0;
}

/* Fails unless every line of want (expected for manifest name with
 * the --set values sets) is placed at FILE:LINE:COL. */
static void
check_placed(const char *name, const char *want, const char *const *sets)
{
	static char copy[8192], labels[8][300];
	const char *files[8];
	char *p, *line;
	size_t n = 1;

	snprintf(labels[0], sizeof(labels[0]), "%s", name);
	files[0] = labels[0];
	for (; *sets != NULL && n < 8; sets++, n++) {
		snprintf(labels[n], sizeof(labels[n]), "--set '%s'", *sets);
		files[n] = labels[n];
	}
	snprintf(copy, sizeof(copy), "%s", want);
	if (copy[0] == '\0')
		fail_msg("%s: no expected diagnostics", name);
	/* The source line and caret under each start with a blank. */
	for (p = copy; (line = strsep(&p, "\n")) != NULL;)
		if (*line != '\0' && *line != ' ' &&
		    strncmp(line, "hint: ", 6) != 0 && !located(line, files, n))
			fail_msg("%s: no FILE:LINE:COL in '%s'", name, line);
}

/* located() itself. */
static void
test_located(void **state)
{
	const char *ok[] = { "a.yaml", "--set 'a=b: c'" };

	(void)state;
	assert_true(located("a.yaml:1:2: x", ok, 2));
	assert_true(located("--set 'a=b: c':1:4: x", ok, 2));
	assert_false(located("a.yaml: x", ok, 2));
	assert_false(located("a.yaml:0:0: x", ok, 2));
	assert_false(located("a.yaml:3: x", ok, 2));
	assert_false(located("b.yaml:1:1: x", ok, 2));
}

/* Every tests/data/manifests/bad/NAME.yaml gives exactly NAME.err, as
 * rendered for a terminal (vg_diag_render). */
static void
test_bad_corpus(void **state)
{
	struct fixture *f = *state;
	static char text[65536], want[8192], args[1024];
	const char *sets[8];
	char path[512], *p, *line;
	struct dirent *de;
	size_t len, nsets, count = 0;
	DIR *dir;
	int rc;

	dir = opendir("tests/data/manifests/bad");
	assert_non_null(dir);
	while ((de = readdir(dir)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "tests/data/manifests/bad/%s",
		    de->d_name);
		slurp(path, text, sizeof(text));
		snprintf(path, sizeof(path), "tests/data/manifests/bad/%.*s"
		    ".err", (int)len - 5, de->d_name);
		slurp(path, want, sizeof(want));
		snprintf(path, sizeof(path), "tests/data/manifests/bad/%.*s"
		    ".args", (int)len - 5, de->d_name);
		slurp(path, args, sizeof(args));
		/* .args: "--set" and its value on alternate lines */
		nsets = 0;
		for (p = args; (line = strsep(&p, "\n")) != NULL;)
			if (*line != '\0' && strcmp(line, "--set") != 0 &&
			    nsets < 7)
				sets[nsets++] = line;
		sets[nsets] = NULL;
		f->opts.sets = sets;
		vg_manifest_free(f->m);
		f->m = NULL;
		vg_diag_release(&f->diag);
		rc = vg_manifest_load_mem(de->d_name, text, strlen(text),
		    &f->opts, &f->m, &f->diag, &f->e);
		if (rc == 0)
			fail_msg("%s: accepted", de->d_name);
		assert_null(f->m);
		if (strcmp(rendered(f), want) != 0)
			fail_msg("%s: got\n%swant\n%s", de->d_name,
			    rendered(f), want);
		check_placed(de->d_name, want, sets);
		count++;
	}
	closedir(dir);
	assert_true(count >= 45);
}

/* vg_manifest_loc: keys, list items, and where a missing key belongs. */
static void
test_locations(void **state)
{
	struct fixture *f = *state;
	const char *sets[2] = { "ssh.port=2200", NULL };
	struct vg_loc loc;

	f->opts.sets = sets;
	assert_int_equal(load(f, "# comment\nversion: 1\ncommand: x\n"
	    "ssh:\n  host: n1\n  stage_in: [a, b]\noutputs:\n"), 0);
	assert_int_equal(vg_manifest_loc(f->m, "ssh.host", &loc), 0);
	assert_string_equal(loc.file, "t.yaml");
	assert_int_equal(loc.line, 5);
	assert_int_equal(loc.col, 3);
	assert_int_equal(vg_manifest_loc(f->m, "ssh.stage_in[1]", &loc), 0);
	assert_int_equal(loc.line, 6);
	assert_int_equal(loc.col, 17);
	/* The last layer that set a key wins. */
	assert_int_equal(vg_manifest_loc(f->m, "ssh.port", &loc), 0);
	assert_string_equal(loc.file, "--set 'ssh.port=2200'");
	assert_int_equal(loc.line, 1);
	assert_int_equal(loc.col, 5);
	/* Missing: the mapping that lacks it, at its first key. */
	assert_int_equal(vg_manifest_loc(f->m, "ssh.user", &loc), VG_ENOENT);
	assert_int_equal(loc.line, 5);
	assert_int_equal(loc.col, 3);
	assert_int_equal(vg_manifest_loc(f->m, "ssh.stage_in[5]", &loc),
	    VG_ENOENT);
	assert_int_equal(loc.line, 6);
	assert_int_equal(loc.col, 13);
	assert_int_equal(vg_manifest_loc(f->m, "docker.volumes", &loc),
	    VG_ENOENT);
	assert_string_equal(loc.file, "t.yaml");
	assert_int_equal(loc.line, 2);
	assert_int_equal(loc.col, 1);
	/* An empty value is placed at its key. */
	assert_int_equal(vg_manifest_loc(f->m, "outputs[0]", &loc),
	    VG_ENOENT);
	assert_int_equal(loc.line, 7);
	assert_int_equal(loc.col, 1);
	assert_ptr_equal(vg_manifest_locf(f->m, &loc, "ssh.stage_in[%d]", 0),
	    &loc);
	assert_int_equal(loc.col, 14);
	/* A manifest read back from JSON has no places. */
	{
		struct vg_manifest *m2 = NULL;
		struct vg_buf b = VG_BUF_INIT;

		vg_manifest_to_json(f->m, &b);
		assert_int_equal(vg_manifest_from_json(b.data, b.len, &m2,
		    &f->e), 0);
		assert_int_equal(vg_manifest_loc(m2, "ssh.host", &loc),
		    VG_ENOENT);
		assert_string_equal(loc.file, "t.yaml");
		assert_int_equal(loc.line, 0);
		vg_manifest_free(m2);
		vg_buf_release(&b);
	}
}

/* A string with several bad substitutions: each one, at its '${{'. */
static void
test_several_substitutions(void **state)
{
	struct fixture *f = *state;
	struct vg_sub_seg *segs = NULL;
	const char *why = NULL;
	size_t n = 0, bad = 0;

	assert_int_equal(vg_sub_split("a ${{ nope }} ${{ env.X }} ${{ x",
	    &segs, &n, &bad, &why), VG_EINVAL);
	assert_int_equal(bad, 2);
	assert_non_null(why);
	assert_int_equal(n, 6);
	assert_int_equal(segs[1].kind, VG_SUB_BAD);
	assert_int_equal(segs[3].kind, VG_SUB_ENV);
	assert_int_equal(segs[5].kind, VG_SUB_BAD);
	assert_int_equal(segs[5].at, 27);
	assert_string_equal(segs[5].why, "unterminated '${{' (no closing "
	    "'}}')");
	free(segs);
	assert_int_equal(load(f, "env: {A: a}\nmatrix: {lr: [1]}\n"
	    "command: x ${{ matrix.x }} ${{ env.NOPE }} ${{ task.bogus }} "
	    "${{ matrix.lr }} ${{ env.A }}\n"), VG_EINVAL);
	assert_string_equal(diags(f),
	    "t.yaml:3:12: undefined 'matrix.x' in 'command' (not a matrix "
	    "axis or include key)\n"
	    "t.yaml:3:28: undefined 'env.NOPE' in 'command' (not set in "
	    "'env')\n"
	    "t.yaml:3:44: unknown expression in '${{ }}' (expected "
	    "matrix.NAME, env.NAME or task.index) in 'command'\n");
	/* Beside schema problems, with the matrix broken: matrix names
	 * are not judged, the rest is. */
	assert_int_equal(load(f, "matrix: {lr: []}\nresources: {cpus: 0}\n"
	    "command: x ${{ matrix.lr }} ${{ env.NOPE }}\n"), VG_EINVAL);
	assert_string_equal(diags(f),
	    "t.yaml:1:14: matrix axis 'lr' has no values\n"
	    "t.yaml:2:19: 'resources.cpus' must be between 1 and 1048576, "
	    "not 0\n"
	    "t.yaml:3:29: undefined 'env.NOPE' in 'command' (not set in "
	    "'env')\n");
}

/* Checks that every key of section s under prefix is in the docs. */
static void
check_documented(const struct vg_section *s, const char *prefix,
    const char *doc)
{
	const struct vg_field *fl;
	char path[256], quoted[260], star[260];

	for (fl = s->fields; fl->key != NULL; fl++) {
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix ? "." : "", fl->key);
		snprintf(quoted, sizeof(quoted), "`%s`", path);
		snprintf(star, sizeof(star), "`%s.*`", prefix);
		if (strstr(doc, quoted) == NULL &&
		    (*prefix == '\0' || strstr(doc, star) == NULL))
			fail_msg("docs/manifest.md does not document '%s'",
			    path);
		if (fl->type == VG_F_SECTION)
			check_documented(fl->sub, path, doc);
	}
}

/* after: entries from a list, a scalar added by --set, the JSON form. */
static void
test_after(void **state)
{
	struct fixture *f = *state;
	const char *sets[] = { "after=z:any,w", NULL };

	assert_int_equal(load(f, "command: x\nafter: [prep, {run: x, "
	    "when: any}, 'y:notok']\n"), 0);
	assert_int_equal(f->m->after.n, 3);
	assert_string_equal(f->m->after.v[0].run, "prep");
	assert_int_equal(f->m->after.v[0].cond, VG_AFTER_OK);
	assert_int_equal(f->m->after.v[0].loc.line, 2);
	assert_string_equal(f->m->after.v[1].run, "x");
	assert_int_equal(f->m->after.v[1].cond, VG_AFTER_ANY);
	assert_string_equal(f->m->after.v[2].run, "y");
	assert_int_equal(f->m->after.v[2].cond, VG_AFTER_NOTOK);
	roundtrip(f->m);
	f->opts.sets = sets;
	assert_int_equal(load(f, "command: x\nafter: [prep]\n"), 0);
	f->opts.sets = NULL;
	assert_int_equal(f->m->after.n, 3);
	assert_string_equal(f->m->after.v[1].run, "z");
	assert_int_equal(f->m->after.v[1].cond, VG_AFTER_ANY);
	assert_string_equal(f->m->after.v[2].run, "w");
	roundtrip(f->m);
	assert_int_equal(load(f, "command: x\nafter: {run: x}\n"),
	    VG_EINVAL);
	assert_string_equal(diags(f), "t.yaml:2:8: 'after' must be a list of "
	    "runs (ids or names, or {run: RUN, when: ok|any|notok}), not a "
	    "mapping\n");
}

/* docs/manifest.md names every manifest key. */
static void
test_documented(void **state)
{
	static char doc[131072];

	(void)state;
	slurp("docs/manifest.md", doc, sizeof(doc));
	assert_true(strlen(doc) > 1000);
	check_documented(vg_manifest_schema(), "", doc);
}

/* outputs: the list and the mapping form, their effective JSON (the list
 * form stays a list), the destination with ${{ }}, and what is refused. */
static void
test_outputs(void **state)
{
	struct fixture *f = *state;
	struct vg_manifest *m2 = NULL;
	struct vg_buf j = VG_BUF_INIT, j2 = VG_BUF_INIT;
	struct vg_task t;
	char *dest = NULL;

	assert_int_equal(load(f, "version: 1\ncommand: x\n"
	    "outputs: [\"*.csv\", plots]\n"), 0);
	assert_int_equal(f->m->outputs.paths.n, 2);
	assert_null(f->m->outputs.dest);
	vg_manifest_to_json(f->m, &j);
	assert_non_null(strstr(vg_buf_str(&j),
	    "\"outputs\":[\"*.csv\",\"plots\"]"));
	vg_buf_reset(&j);

	assert_int_equal(load(f, "version: 1\ncommand: x\nmatrix:\n"
	    "  n: [a]\noutputs:\n  paths: [\"*.csv\"]\n"
	    "  dest: \"res/${{ matrix.n }}-${{ task.index }}\"\n"
	    "  when: failure\n  mode: move\n  max_files: 3\n"
	    "  max_bytes: 1M\n"), 0);
	assert_int_equal(f->m->outputs.when, VG_OUT_FAILURE);
	assert_int_equal(f->m->outputs.move, 1);
	assert_int_equal(f->m->outputs.max_files, 3);
	assert_true(f->m->outputs.max_bytes == 1u << 20);
	vg_manifest_to_json(f->m, &j);
	assert_int_equal(vg_manifest_from_json(vg_buf_str(&j), j.len, &m2,
	    &f->e), 0);
	vg_manifest_to_json(m2, &j2);
	assert_string_equal(vg_buf_str(&j), vg_buf_str(&j2));
	vg_manifest_free(m2);

	memset(&t, 0, sizeof(t));
	t.index = 4;
	vg_kvs_set(&t.matrix, "n", "a");
	assert_int_equal(vg_outputs_dest(&f->m->outputs, &t, "/runs/r",
	    "/work", &dest, &f->e), 0);
	assert_string_equal(dest, "/work/res/a-4");
	free(dest);
	vg_kvs_set(&t.matrix, "n", "../up");
	assert_int_equal(vg_outputs_dest(&f->m->outputs, &t, "/runs/r",
	    "/work", &dest, &f->e), VG_EINVAL);
	assert_null(dest);
	assert_string_equal(f->e.msg, "outputs.dest 'res/${{ matrix.n }}-"
	    "${{ task.index }}': the value '../up' of 'n' is not one path "
	    "component");
	vg_kvs_release(&t.matrix);
	assert_int_equal(vg_outputs_dest(&f->m->outputs, &t, "/runs/r",
	    "/work", &dest, &f->e), VG_EINVAL);
	assert_string_equal(f->e.msg, "outputs.dest 'res/${{ matrix.n }}-"
	    "${{ task.index }}': task 4 has no value for 'n'");
	assert_int_equal(load(f, "version: 1\ncommand: x\n"
	    "outputs: [x]\n"), 0);
	assert_int_equal(vg_outputs_dest(&f->m->outputs, &t, "/runs/r",
	    "/work", &dest, &f->e), 0);
	assert_string_equal(dest, "/runs/r/tasks/4/outputs");
	free(dest);

	assert_int_not_equal(load(f, "version: 1\ncommand: x\n"
	    "outputs: {paths: [\"/abs\", \"a/..\"], when: never}\n"), 0);
	assert_non_null(strstr(diags(f), "t.yaml:3:19: 'outputs.paths[0]': "
	    "'/abs' must be a glob relative to the task's scratch and task "
	    "directories"));
	assert_non_null(strstr(diags(f), "'outputs.paths[1]': 'a/..' leaves "
	    "the task's directories ('..')"));
	assert_non_null(strstr(diags(f), "'outputs.when'"));
	vg_buf_release(&j);
	vg_buf_release(&j2);
}

/* A matrix range expands like Python's range(), stop excluded. */
static void
test_matrix_range(void **state)
{
	struct fixture *f = *state;
	const char *sets[2] = { NULL };

	assert_int_equal(load(f, "command: x\nmatrix:\n"
	    "  seed: {range: [0, 100]}\n  down: {range: [10, 0, -3]}\n"), 0);
	assert_int_equal(f->m->matrix.naxes, 2);
	assert_int_equal(f->m->matrix.axes[0].values.n, 100);
	assert_string_equal(f->m->matrix.axes[0].values.v[0], "0");
	assert_string_equal(f->m->matrix.axes[0].values.v[99], "99");
	assert_int_equal(f->m->matrix.axes[1].values.n, 4);
	assert_string_equal(f->m->matrix.axes[1].values.v[3], "1");
	assert_int_equal(vg_expand_count(f->m), 400);
	/* A --set may give a range too, replacing the axis. */
	f->opts.sets = sets;
	sets[0] = "matrix.seed={range: [-2, 3, 2]}";
	assert_int_equal(load(f, "command: x\nmatrix: {seed: [7]}\n"), 0);
	assert_int_equal(f->m->matrix.axes[0].values.n, 3);
	assert_string_equal(f->m->matrix.axes[0].values.v[0], "-2");
	assert_string_equal(f->m->matrix.axes[0].values.v[2], "2");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_roundtrip, setup,
		    teardown),
		cmocka_unit_test(test_json_bad),
		cmocka_unit_test_setup_teardown(test_after, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_config_errors, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_config_paths, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matrix_range, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup,
		    teardown),
		cmocka_unit_test(test_tree),
		cmocka_unit_test_setup_teardown(test_bad_corpus, setup,
		    teardown),
		cmocka_unit_test(test_documented),
		cmocka_unit_test(test_located),
		cmocka_unit_test_setup_teardown(test_locations, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_several_substitutions,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_outputs, setup,
		    teardown),
	};
	const char *src = getenv("VIGIL_SRCDIR");

	if (src != NULL && chdir(src) != 0) {
		fprintf(stderr, "cannot enter '%s': %s\n", src,
		    strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
