/*
 * test-expand.c - matrix expansion order, include/exclude semantics,
 * substitution and quoting, VIGIL_MATRIX_* variables, counts and limits,
 * per-task resources from ${{ matrix.NAME }}, tasks built lazily by index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner/manifest/manifest.h"
#include "runner/manifest/task.h"

struct fixture {
	struct vg_diag		 diag;
	struct vg_manifest	*m;
	struct vg_taskset	 ts;
	struct vg_err		 e;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	*state = f;
	return f == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	vg_taskset_release(&f->ts);
	vg_manifest_free(f->m);
	vg_diag_release(&f->diag);
	free(f);
	return 0;
}

/* Loads text and expands it; fails the test on any problem. */
static void
expand(struct fixture *f, const char *text)
{
	struct vg_load_opts opts = { .no_configs = 1 };
	size_t i;

	vg_taskset_release(&f->ts);
	vg_manifest_free(f->m);
	f->m = NULL;
	if (vg_manifest_load_mem("t.yaml", text, strlen(text), &opts, &f->m,
	    &f->diag, &f->e) != 0) {
		for (i = 0; i < f->diag.lines.n; i++)
			print_error("%s\n", f->diag.lines.v[i]);
		fail_msg("load: %s", f->e.msg);
	}
	if (vg_expand(f->m, &f->ts, &f->diag, &f->e) != 0)
		fail_msg("expand: %s", f->e.msg);
	assert_int_equal(vg_expand_count(f->m), f->ts.n);
}

/* "k=v k=v" of a task's matrix (static buffer). */
static const char *
mx(const struct vg_task *t)
{
	static char buf[512];
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < t->matrix.n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s=%s",
		    i ? " " : "", t->matrix.v[i].key, t->matrix.v[i].value);
	return buf;
}

static void
test_no_matrix(void **state)
{
	struct fixture *f = *state;

	expand(f, "command: echo ${{ task.index }}\nenv: {A: '1'}\n");
	assert_int_equal(f->ts.n, 1);
	assert_int_equal(f->ts.v[0].index, 0);
	assert_int_equal(f->ts.v[0].matrix.n, 0);
	assert_string_equal(f->ts.v[0].command.shell, "echo 0");
	assert_int_equal(f->ts.v[0].env.n, 1);
	assert_string_equal(vg_kvs_get(&f->ts.v[0].env, "A"), "1");
}

static void
test_order(void **state)
{
	struct fixture *f = *state;
	static const char *const want[] = {
		"lr=0.1 bs=16", "lr=0.1 bs=32", "lr=0.1 bs=64",
		"lr=0.01 bs=16", "lr=0.01 bs=32", "lr=0.01 bs=64",
	};
	size_t i;

	expand(f, "command: t ${{ matrix.lr }} ${{matrix.bs}} "
	    "${{task.index}}\nmatrix:\n  lr: [0.1, 0.01]\n"
	    "  bs: [16, 32, 64]\n");
	assert_int_equal(f->ts.n, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(f->ts.v[i].index, (int)i);
		assert_string_equal(mx(&f->ts.v[i]), want[i]);
	}
	assert_string_equal(f->ts.v[4].command.shell, "t 0.01 32 4");
	assert_string_equal(vg_kvs_get(&f->ts.v[4].env, "VIGIL_MATRIX_LR"),
	    "0.01");
	assert_string_equal(vg_kvs_get(&f->ts.v[4].env, "VIGIL_MATRIX_BS"),
	    "32");
}

static void
test_exclude(void **state)
{
	struct fixture *f = *state;

	/* A partial exclude drops every combination it matches. */
	expand(f, "command: x\nmatrix:\n  os: [linux, mac]\n"
	    "  py: ['3.10', '3.11', '3.12']\n  exclude:\n"
	    "    - {os: mac}\n    - {os: linux, py: '3.11'}\n");
	assert_int_equal(f->ts.n, 2);
	assert_string_equal(mx(&f->ts.v[0]), "os=linux py=3.10");
	assert_string_equal(mx(&f->ts.v[1]), "os=linux py=3.12");
	/* An include may bring an excluded combination back. */
	expand(f, "command: x\nmatrix:\n  a: [1, 2]\n  exclude: [{a: 2}]\n"
	    "  include: [{a: 2}]\n");
	assert_int_equal(f->ts.n, 2);
	assert_string_equal(mx(&f->ts.v[1]), "a=2");
}

static void
test_include_github(void **state)
{
	struct fixture *f = *state;
	static const char *const want[] = {
		"fruit=apple animal=cat color=pink shape=circle",
		"fruit=apple animal=dog color=green shape=circle",
		"fruit=pear animal=cat color=pink",
		"fruit=pear animal=dog color=green",
		"fruit=banana",
		"fruit=banana animal=cat",
	};
	size_t i;

	/* The example of GitHub Actions' documentation, same result. */
	expand(f, "command: x\nmatrix:\n  fruit: [apple, pear]\n"
	    "  animal: [cat, dog]\n  include:\n    - color: green\n"
	    "    - color: pink\n      animal: cat\n"
	    "    - fruit: apple\n      shape: circle\n"
	    "    - fruit: banana\n    - fruit: banana\n      animal: cat\n");
	assert_int_equal(f->ts.n, 6);
	for (i = 0; i < 6; i++)
		assert_string_equal(mx(&f->ts.v[i]), want[i]);
	assert_string_equal(vg_kvs_get(&f->ts.v[0].env,
	    "VIGIL_MATRIX_SHAPE"), "circle");
	assert_null(vg_kvs_get(&f->ts.v[2].env, "VIGIL_MATRIX_SHAPE"));
}

static void
test_include_only(void **state)
{
	struct fixture *f = *state;

	expand(f, "command: [run, '${{ matrix.case }}', "
	    "'n=${{ matrix.n }}']\nmatrix:\n  include:\n"
	    "    - {case: a, n: 1}\n    - {case: b, n: 2}\n");
	assert_int_equal(f->ts.n, 2);
	assert_true(f->ts.v[1].command.is_argv);
	assert_int_equal(f->ts.v[1].command.argv.n, 3);
	assert_string_equal(f->ts.v[1].command.argv.v[1], "b");
	assert_string_equal(f->ts.v[1].command.argv.v[2], "n=2");
	assert_null(f->ts.v[1].command.argv.v[3]);
}

static void
test_quoting(void **state)
{
	struct fixture *f = *state;

	/* Values are one shell word each, whatever they hold. */
	expand(f, "command: echo ${{ matrix.v }}|wc -c; ${{ env.E }}\n"
	    "env: {E: \"$(id) ${{ matrix.v }}\"}\n"
	    "matrix:\n  v: [\"a b; rm -rf /\", \"it's\", '$HOME', plain, "
	    "'']\n");
	assert_int_equal(f->ts.n, 5);
	assert_string_equal(f->ts.v[0].command.shell,
	    "echo 'a b; rm -rf /'|wc -c; '$(id) a b; rm -rf /'");
	assert_string_equal(f->ts.v[1].command.shell,
	    "echo 'it'\\''s'|wc -c; '$(id) it'\\''s'");
	assert_string_equal(f->ts.v[2].command.shell,
	    "echo '$HOME'|wc -c; '$(id) $HOME'");
	assert_string_equal(f->ts.v[3].command.shell,
	    "echo plain|wc -c; '$(id) plain'");
	assert_string_equal(f->ts.v[4].command.shell,
	    "echo ''|wc -c; '$(id) '");
	/* env values and argv get the value verbatim. */
	assert_string_equal(vg_kvs_get(&f->ts.v[1].env, "E"), "$(id) it's");
	expand(f, "command: [echo, '${{ matrix.v }}']\n"
	    "matrix: {v: [\"a'b c\"]}\n");
	assert_string_equal(f->ts.v[0].command.argv.v[1], "a'b c");
}

/* Loads text expecting it refused; returns its diagnostics, joined. */
static const char *
refused(struct fixture *f, const char *text)
{
	struct vg_load_opts opts = { .no_configs = 1 };
	static char buf[4096];
	size_t i, o = 0;

	vg_manifest_free(f->m);
	f->m = NULL;
	vg_diag_release(&f->diag);
	assert_int_equal(vg_manifest_load_mem("t.yaml", text, strlen(text),
	    &opts, &f->m, &f->diag, &f->e), VG_EINVAL);
	buf[0] = '\0';
	for (i = 0; i < f->diag.lines.n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n",
		    f->diag.lines.v[i]);
	return buf;
}

/* Inside double or single quotes and in comments a value is still data:
 * written for its place, never able to end the quotes. */
static void
test_quoting_places(void **state)
{
	struct fixture *f = *state;

	expand(f, "command: |\n"
	    "  echo \"v=${{ matrix.v }}\" 'w=${{ matrix.v }}'\n"
	    "  echo \"$(echo \"${{ matrix.v }}\" ${{ matrix.v }})\" "
	    "# ${{ matrix.v }}\n"
	    "  echo \"${HOME}\" $(( ${{ task.index }} + 1 ))\n"
	    "matrix:\n  v: ['\"; touch x; \"', '$(id) `id` it''s \\ a b']\n");
	assert_int_equal(f->ts.n, 2);
	assert_string_equal(f->ts.v[0].command.shell,
	    "echo \"v=\\\"; touch x; \\\"\" 'w=\"; touch x; \"'\n"
	    "echo \"$(echo \"\\\"; touch x; \\\"\" '\"; touch x; \"')\" "
	    "# \"; touch x; \"\n"
	    "echo \"${HOME}\" $(( 0 + 1 ))\n");
	assert_string_equal(f->ts.v[1].command.shell,
	    "echo \"v=\\$(id) \\`id\\` it's \\\\ a b\" "
	    "'w=$(id) `id` it'\\''s \\ a b'\n"
	    "echo \"$(echo \"\\$(id) \\`id\\` it's \\\\ a b\" "
	    "'$(id) `id` it'\\''s \\ a b')\" # $(id) `id` it's \\ a b\n"
	    "echo \"${HOME}\" $(( 1 + 1 ))\n");
	/* Where no quoting is sure, the loader refuses, at the ${{. */
	assert_string_equal(refused(f, "matrix: {v: [a]}\ncommand: |\n"
	    "  cat <<-'EOF'\n  \tin ${{ matrix.v }}\n  \tEOF\n"
	    "  echo `echo ${{ matrix.v }}` ${x:-${{ env.E }}}\n"
	    "  echo \"$(case a in a) echo;; esac)${{ matrix.v }}\"\n"
	    "env: {E: e}\n"),
	    "t.yaml:4:7: '${{ }}' inside a here-document in 'command': its "
	    "value could run as a command there; use \"$VIGIL_MATRIX_V\" "
	    "instead\n"
	    "t.yaml:6:14: '${{ }}' inside backquotes in 'command': its value "
	    "could run as a command there; use \"$VIGIL_MATRIX_V\" instead\n"
	    "t.yaml:6:36: '${{ }}' inside '${ }' in 'command': its value "
	    "could run as a command there; use \"$E\" instead\n"
	    "t.yaml:7:36: '${{ }}' after a 'case' in '$( )' within double "
	    "quotes in 'command': its value could run as a command there; "
	    "use \"$VIGIL_MATRIX_V\" instead\n");
	assert_string_equal(refused(f, "matrix: {v: [a]}\ncommand: |\n"
	    "  echo $'\\'' ${{ matrix.v }}\n"),
	    "t.yaml:3:14: '${{ }}' after a $'...' string in 'command': its "
	    "value could run as a command there; use \"$VIGIL_MATRIX_V\" "
	    "instead\n");
	/* Nesting deeper than the scan follows: unsafe. */
	{
		char text[512];
		int i, o;

		o = snprintf(text, sizeof(text), "matrix: {v: [a]}\n"
		    "command: echo ");
		for (i = 0; i < 40; i++)
			o += snprintf(text + o, sizeof(text) - (size_t)o, "$(");
		o += snprintf(text + o, sizeof(text) - (size_t)o,
		    "${{ matrix.v }}");
		for (i = 0; i < 40; i++)
			o += snprintf(text + o, sizeof(text) - (size_t)o, ")");
		snprintf(text + o, sizeof(text) - (size_t)o, "\n");
		assert_string_equal(refused(f, text), "t.yaml:2:95: '${{ }}' "
		    "too deeply nested in 'command': its value could run as a "
		    "command there; use \"$VIGIL_MATRIX_V\" instead\n");
	}
	/* After the here-document's delimiter, quoting is followed again. */
	expand(f, "matrix: {v: [a b]}\ncommand: |\n"
	    "  cat <<EOF\n  x\n  EOF\n  echo \"${{ matrix.v }}\"\n");
	assert_string_equal(f->ts.v[0].command.shell,
	    "cat <<EOF\nx\nEOF\necho \"a b\"\n");
}

static void
test_env_names(void **state)
{
	struct fixture *f = *state;

	expand(f, "command: x\nenv: {PLAIN: p, IDX: 'task-${{task.index}}'}\n"
	    "matrix:\n  learning-rate: [1]\n  b_2: [x]\n");
	assert_string_equal(vg_kvs_get(&f->ts.v[0].env,
	    "VIGIL_MATRIX_LEARNING_RATE"), "1");
	assert_string_equal(vg_kvs_get(&f->ts.v[0].env, "VIGIL_MATRIX_B_2"),
	    "x");
	assert_string_equal(vg_kvs_get(&f->ts.v[0].env, "IDX"), "task-0");
	/* Manifest env first, in order, then the matrix. */
	assert_string_equal(f->ts.v[0].env.v[0].key, "PLAIN");
	assert_string_equal(f->ts.v[0].env.v[1].key, "IDX");
	assert_string_equal(f->ts.v[0].env.v[2].key,
	    "VIGIL_MATRIX_LEARNING_RATE");
}

static void
test_counts(void **state)
{
	struct fixture *f = *state;
	struct vg_load_opts opts = { .no_configs = 1 };
	struct vg_buf b = VG_BUF_INIT;
	int i;

	/* 1000 x 1000 is exactly the limit: counted, not built. */
	vg_buf_adds(&b, "command: x\nmatrix:\n  a: [");
	for (i = 0; i < 1000; i++)
		vg_buf_printf(&b, "%s%d", i ? "," : "", i);
	vg_buf_adds(&b, "]\n  b: [");
	for (i = 0; i < 1000; i++)
		vg_buf_printf(&b, "%s%d", i ? "," : "", i);
	vg_buf_adds(&b, "]\n");
	assert_int_equal(vg_manifest_load_mem("t.yaml", b.data, b.len, &opts,
	    &f->m, &f->diag, &f->e), 0);
	assert_int_equal(vg_expand_count(f->m), 1000000);
	vg_manifest_free(f->m);
	f->m = NULL;
	/* One more include is one too many. */
	vg_buf_adds(&b, "  include: [{a: x}]\n");
	assert_int_equal(vg_manifest_load_mem("t.yaml", b.data, b.len, &opts,
	    &f->m, &f->diag, &f->e), VG_EINVAL);
	assert_int_equal(f->diag.lines.n, 1);
	assert_string_equal(f->diag.lines.v[0], "t.yaml:3:3: matrix expands "
	    "to more than 1000000 tasks, more than the limit of 1000000");
	vg_buf_release(&b);
}

static void
test_many_tasks(void **state)
{
	struct fixture *f = *state;

	/* 10,000 tasks build quickly and are all distinct. */
	expand(f, "command: echo ${{ matrix.a }} ${{ matrix.b }}\nmatrix:\n"
	    "  a: [0,1,2,3,4,5,6,7,8,9]\n  b: [0,1,2,3,4,5,6,7,8,9]\n"
	    "  c: [0,1,2,3,4,5,6,7,8,9]\n  d: [0,1,2,3,4,5,6,7,8,9]\n");
	assert_int_equal(f->ts.n, 10000);
	assert_int_equal(f->ts.v[9999].index, 9999);
	assert_string_equal(mx(&f->ts.v[1234]), "a=1 b=2 c=3 d=4");
	assert_string_equal(f->ts.v[1234].command.shell, "echo 1 2");
}

/* Collects "index:command" lines; stops after stop_at tasks. */
struct collect {
	struct vg_buf	out;
	int		stop_at;
	int		seen;
};

static int
collect_fn(struct vg_task *t, void *arg)
{
	struct collect *c = arg;

	vg_buf_printf(&c->out, "%d:%s\n", t->index, t->command.shell);
	if (++c->seen == c->stop_at)
		return 42;
	return 0;
}

static void
test_each_and_one(void **state)
{
	struct fixture *f = *state;
	struct collect c = { VG_BUF_INIT, 0, 0 };
	struct vg_task t;
	size_t i;

	expand(f, "command: r ${{ matrix.a }}${{ matrix.b }}\nmatrix:\n"
	    "  a: [x, y]\n  b: [1, 2, 3]\n  exclude: [{a: y, b: 2}]\n"
	    "  include: [{a: z, b: 9}]\n");
	assert_int_equal(vg_expand_each(f->m, collect_fn, &c, &f->diag,
	    &f->e), 0);
	assert_string_equal(c.out.data, "0:r x1\n1:r x2\n2:r x3\n3:r y1\n"
	    "4:r y3\n5:r z9\n");
	/* The callback's return stops the walk and is returned. */
	vg_buf_reset(&c.out);
	c.stop_at = 2;
	c.seen = 0;
	assert_int_equal(vg_expand_each(f->m, collect_fn, &c, &f->diag,
	    &f->e), 42);
	assert_string_equal(c.out.data, "0:r x1\n1:r x2\n");
	vg_buf_release(&c.out);
	/* One task by index is the same as in the full set. */
	for (i = 0; i < f->ts.n; i++) {
		assert_int_equal(vg_expand_task(f->m, i, &t, &f->diag, &f->e),
		    0);
		assert_int_equal(t.index, (int)i);
		assert_string_equal(t.command.shell,
		    f->ts.v[i].command.shell);
		assert_int_equal(t.env.n, f->ts.v[i].env.n);
		vg_task_release(&t);
	}
	assert_int_equal(vg_expand_task(f->m, 6, &t, &f->diag, &f->e),
	    VG_ENOENT);
	assert_string_equal(f->e.msg, "'t.yaml' has no task 6 (it has 6)");
	assert_null(t.command.shell);
}

/* A lazy set builds, by index and in any order, the tasks vg_expand
 * builds, for every shape of matrix. */
static void
test_lazy(void **state)
{
	static const char *const texts[] = {
		"command: [echo, one]\n",
		"command: r ${{ matrix.a }}${{ matrix.b }} ${{ task.index }}\n"
		"env: {E: '${{ matrix.a }}'}\nmatrix:\n  a: [x, y, z]\n"
		"  b: [1, 2, 3, 4]\n",
		"command: r ${{ matrix.a }}${{ matrix.b }}\nmatrix:\n"
		"  a: [x, y]\n  b: [1, 2, 3]\n  exclude: [{a: y, b: 2}]\n"
		"  include: [{a: z, b: 9}, {a: x, c: extra}]\n",
		"command: [echo, '${{ matrix.n }}']\nmatrix:\n  include:\n"
		"    - n: 1\n    - n: 2\n",
		"command: [sh, -c, 'true']\nresources:\n"
		"  cpus: ${{ matrix.c }}\nmatrix:\n  c: [1, 2]\n",
	};
	struct fixture *f = *state;
	struct vg_taskset lazy = { NULL, 0, NULL };
	struct vg_task tmp = { 0 };
	const struct vg_task *t, *want;
	size_t k, i, j, n;

	for (k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		expand(f, texts[k]);
		assert_int_equal(vg_expand_lazy(f->m, &lazy, &f->diag, &f->e),
		    0);
		assert_null(lazy.v);
		assert_int_equal(lazy.n, f->ts.n);
		n = lazy.n;
		/* Backwards, then forwards: no state carries over. */
		for (j = 0; j < 2 * n; j++) {
			i = j < n ? n - 1 - j : j - n;
			want = &f->ts.v[i];
			vg_task_release(&tmp);
			t = vg_taskset_at(&lazy, i, &tmp);
			assert_ptr_equal(t, &tmp);
			assert_int_equal(t->index, want->index);
			assert_string_equal(mx(t), mx(want));
			assert_int_equal(t->command.is_argv,
			    want->command.is_argv);
			if (!t->command.is_argv)
				assert_string_equal(t->command.shell,
				    want->command.shell);
			assert_int_equal(t->command.argv.n,
			    want->command.argv.n);
			assert_int_equal(t->env.n, want->env.n);
			assert_string_equal(vg_kvs_get(&t->env,
			    "VIGIL_MATRIX_B") ? vg_kvs_get(&t->env,
			    "VIGIL_MATRIX_B") : "-", vg_kvs_get(&want->env,
			    "VIGIL_MATRIX_B") ? vg_kvs_get(&want->env,
			    "VIGIL_MATRIX_B") : "-");
			assert_int_equal(t->resources.cpus,
			    want->resources.cpus);
		}
		/* An eager set hands out its own tasks. */
		assert_ptr_equal(vg_taskset_at(&f->ts, 0, &tmp), &f->ts.v[0]);
		vg_taskset_release(&lazy);
		assert_null(lazy.src);
	}
	vg_task_release(&tmp);
}

/* Counts tasks and sums their cpus (vg_expand_resources). */
static int
sum_fn(long index, const struct vg_resources *r, void *arg)
{
	long *acc = arg;

	acc[0]++;
	acc[1] += r->cpus;
	acc[2] = index;
	return 0;
}

/* Loads text, which must fail; returns every diagnostic, one a line. */
static const char *
load_fails(struct fixture *f, const char *text)
{
	struct vg_load_opts opts = { .no_configs = 1 };
	static char buf[2048];
	size_t i, o = 0;

	vg_manifest_free(f->m);
	f->m = NULL;
	vg_diag_release(&f->diag);
	assert_int_not_equal(vg_manifest_load_mem("t.yaml", text,
	    strlen(text), &opts, &f->m, &f->diag, &f->e), 0);
	assert_null(f->m);
	buf[0] = '\0';
	for (i = 0; i < f->diag.lines.n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n",
		    f->diag.lines.v[i]);
	return buf;
}

static void
test_resources_per_task(void **state)
{
	struct fixture *f = *state;
	struct vg_manifest *back = NULL;
	struct vg_resources peak;
	struct vg_buf js = VG_BUF_INIT;
	struct vg_task t;
	long acc[3] = { 0, 0, 0 };

	/* The direct scheduler checks every task fits the pool. */
	setenv("SLURM_CPUS_ON_NODE", "8", 1);
	expand(f, "command: x\nmatrix:\n  c: [1, 2, 4]\n  include:\n"
	    "    - {c: 4, mem: 2G, ty: h100}\n    - {c: 1, mem: 512M}\n"
	    "    - {c: 2, mem: '1G'}\n"
	    "resources:\n  cpus: ${{ matrix.c }}\n"
	    "  memory: '${{ matrix.mem }}'\n"
	    "  gpu_type: a${{ matrix.c }}\n  time: ${{ matrix.c }}m\n"
	    "  partition: p\n");
	assert_int_equal(f->ts.n, 3);
	assert_int_equal(f->ts.v[0].resources.cpus, 1);
	assert_int_equal(f->ts.v[1].resources.cpus, 2);
	assert_int_equal(f->ts.v[2].resources.cpus, 4);
	assert_true(f->ts.v[0].resources.memory == 512ULL << 20);
	assert_true(f->ts.v[2].resources.memory == 2ULL << 30);
	assert_string_equal(f->ts.v[2].resources.gpu_type, "a4");
	assert_true(f->ts.v[1].resources.time == 120);
	/* Rows without a template are the manifest's, copied. */
	assert_string_equal(f->ts.v[1].resources.partition, "p");
	assert_ptr_not_equal(f->ts.v[1].resources.partition,
	    f->m->resources.partition);
	assert_int_equal(f->ts.v[1].resources.tmpl.n, 0);
	/* The manifest keeps the templates; the field is unset there. */
	assert_int_equal(f->m->resources.cpus, 0);
	assert_string_equal(vg_kvs_get(&f->m->resources.tmpl, "cpus"),
	    "${{ matrix.c }}");
	assert_int_equal(f->m->resources.tmpl.v[0].loc.line, 9);
	assert_int_equal(f->m->resources.tmpl.v[0].loc.col, 9);
	/* Walking resources only; the peak. */
	assert_int_equal(vg_expand_resources(f->m, sum_fn, acc), 0);
	assert_int_equal(acc[0], 3);
	assert_int_equal(acc[1], 7);
	assert_int_equal(acc[2], 2);
	vg_expand_peak(f->m, &peak);
	assert_int_equal(peak.cpus, 4);
	assert_int_equal(peak.gpus, 0);
	assert_true(peak.memory == 2ULL << 30);
	assert_true(peak.time == 240);
	/* One task by index, and the JSON form keeps the templates. */
	assert_int_equal(vg_expand_task(f->m, 2, &t, &f->diag, &f->e), 0);
	assert_int_equal(t.resources.cpus, 4);
	vg_task_release(&t);
	vg_manifest_to_json(f->m, &js);
	assert_non_null(strstr(js.data, "\"cpus\":\"${{ matrix.c }}\""));
	assert_int_equal(vg_manifest_from_json(js.data, js.len, &back,
	    &f->e), 0);
	assert_int_equal(vg_expand_task(back, 1, &t, &f->diag, &f->e), 0);
	assert_int_equal(t.resources.cpus, 2);
	assert_true(t.resources.memory == 1ULL << 30);
	vg_task_release(&t);
	vg_manifest_free(back);
	vg_buf_release(&js);
	/* Without templates every task asks the same: called once. */
	expand(f, "command: x\nmatrix: {c: [1, 2]}\nresources: {cpus: 3}\n");
	memset(acc, 0, sizeof(acc));
	assert_int_equal(vg_expand_resources(f->m, sum_fn, acc), 0);
	assert_int_equal(acc[0], 1);
	assert_int_equal(acc[2], -1);
	assert_int_equal(f->ts.v[1].resources.cpus, 3);
	unsetenv("SLURM_CPUS_ON_NODE");
}

static void
test_resources_bad(void **state)
{
	struct fixture *f = *state;
	struct vg_load_opts opts = { .no_configs = 1 };
	const char *sets[] = { "resources.cpus=2", NULL };

	/* Type and range of the row, at the template, naming the task. */
	assert_string_equal(load_fails(f, "command: x\nmatrix:\n"
	    "  c: [1, two, 0]\nresources:\n  cpus: ${{ matrix.c }}\n"),
	    "t.yaml:5:9: 'resources.cpus' must be a whole number, not 'two' "
	    "(in task 1: c=two)\n"
	    "t.yaml:5:9: 'resources.cpus' must be between 1 and 1048576, "
	    "not 0 (in task 2: c=0)\n");
	assert_string_equal(load_fails(f, "command: x\nmatrix:\n"
	    "  m: [1G, lots]\nresources:\n  memory: ${{ matrix.m }}\n"),
	    "t.yaml:5:11: 'resources.memory' must be a size such as "
	    "512M, 4G, 1.5GiB or 2000MB, not 'lots' (in task 1: m=lots)\n");
	/* A name some task lacks, at the template (the GPUs the others
	 * ask exist). */
	setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
	assert_string_equal(load_fails(f, "command: x\nmatrix:\n"
	    "  c: [1]\n  include: [{c: 1, g: 2}, {c: 9}]\n"
	    "resources:\n  gpus: ${{ matrix.g }}\n"),
	    "t.yaml:6:9: 'matrix.g' has no value in task 1 (c=9)\n");
	unsetenv("CUDA_VISIBLE_DEVICES");
	/* env is not a task's own value here; malformed templates. */
	assert_string_equal(load_fails(f, "command: x\nenv: {A: '1'}\n"
	    "resources:\n  cpus: ${{ env.A }}\n"),
	    "t.yaml:4:9: 'resources.cpus': only ${{ matrix.NAME }} and "
	    "${{ task.index }} expand here, not ${{ env.A }}\n");
	assert_non_null(strstr(load_fails(f, "command: x\nresources:\n"
	    "  cpus: ${{ matrix.c\n"), "t.yaml:3:9: unterminated"));
	/* A later layer's plain value replaces the template. */
	vg_manifest_free(f->m);
	f->m = NULL;
	opts.sets = sets;
	assert_int_equal(vg_manifest_load_mem("t.yaml", "command: x\n"
	    "matrix: {c: [1, 4]}\nresources: {cpus: '${{ matrix.c }}'}\n",
	    68, &opts, &f->m, &f->diag, &f->e), 0);
	assert_int_equal(f->m->resources.tmpl.n, 0);
	assert_int_equal(f->m->resources.cpus, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_matrix, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclude, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quoting_places, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_include_github, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_include_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_quoting, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_env_names, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_counts, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_many_tasks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lazy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_and_one, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resources_per_task, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_resources_bad, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("expand", tests, NULL, NULL);
}
