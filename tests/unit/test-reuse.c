/*
 * test-reuse.c - results reused across runs: XXH64 against the
 * reference's vectors, what goes into a key (and what does not), the
 * store's entries, task keys and stat cache, a hit whose files are gone
 * or were replaced by a link being a miss, files brought by link and
 * nothing left of a failed bring, and the driver handing only the misses
 * of a sweep to a scheduler that collects attempts into arrays as
 * Slurm's does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/hash.h"
#include "common/str.h"
#include "engine-fixture.h"
#include "runner/core/reuse.h"
#include "runner/core/run.h"
#include "runner/core/store.h"
#include "schedulers/scheduler.h"
#include "helpers/unixhttpd.h"

/* Writes text to path (created or truncated). */
static void
put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void
test_hash_vectors(void **state)
{
	static const char nobody[] = "Nobody inspects the spammish "
	    "repetition";
	char hex[33];

	(void)state;
	/* xxHash's own test values (xxhsum, python-xxhash's README). */
	assert_true(vg_hash64("", 0, 0) == 0xef46db3751d8e999ULL);
	assert_true(vg_hash64("a", 1, 0) == 0xd24ec4f1a98c6e5bULL);
	assert_true(vg_hash64("abc", 3, 0) == 0x44bc2cf5ad770999ULL);
	assert_true(vg_hash64(nobody, sizeof(nobody) - 1, 0) ==
	    0xfbcea83c8a378bf1ULL);
	vg_hash128_hex("abc", 3, hex);
	assert_int_equal(strlen(hex), 32);
	assert_memory_equal(hex, "44bc2cf5ad770999", 16);
}

/* vg_hash_fd_hex: a file's content as vg_hash64 of its bytes; an empty
 * file; a descriptor that cannot be mapped is -1 with errno. */
static void
test_hash_fd(void **state)
{
	static const char nobody[] = "Nobody inspects the spammish "
	    "repetition";
	char path[] = "/tmp/vigil-test-hash-XXXXXX", hex[17];
	int fd, p[2];

	(void)state;
	assert_true((fd = mkstemp(path)) >= 0);
	unlink(path);
	assert_int_equal(vg_hash_fd_hex(fd, 0, hex), 0);
	assert_string_equal(hex, "ef46db3751d8e999");
	assert_int_equal(write(fd, nobody, sizeof(nobody) - 1),
	    (int)sizeof(nobody) - 1);
	assert_int_equal(vg_hash_fd_hex(fd, sizeof(nobody) - 1, hex), 0);
	assert_string_equal(hex, "fbcea83c8a378bf1");
	close(fd);
	assert_int_equal(pipe(p), 0);
	errno = 0;
	assert_int_equal(vg_hash_fd_hex(p[0], 3, hex), -1);
	assert_int_not_equal(errno, 0);
	close(p[0]);
	close(p[1]);
}

/* A store in a fresh home, and a working directory with inputs. */
struct kx {
	struct fx		 f;
	struct vg_store		*st;
	char			*wd;
};

static void
kx_init(struct kx *k, const char *const *cmds, size_t n)
{
	struct vg_err e;

	fx_init(&k->f, cmds, n);
	vg_err_init(&e);
	assert_int_equal(vg_store_open(k->f.home, &k->st, &e), 0);
	k->wd = vg_path_join(k->f.home, "wd");
	assert_int_equal(mkdir(k->wd, 0700), 0);
	k->f.m.workdir = k->wd;
}

static void
kx_release(struct kx *k)
{
	vg_strv_release(&k->f.m.inputs);
	k->f.m.workdir = NULL;
	vg_store_close(k->st);
	free(k->wd);
	fx_release(&k->f);
}

/* Records a run of k's tasks; id gets its id, the result its directory
 * (caller frees). */
static char *
kx_run(struct kx *k, char id[VG_RUN_ID_MAX])
{
	struct vg_run_plan p;
	struct vg_err e;
	char *dir;

	vg_err_init(&e);
	vg_run_id_make(id);
	memset(&p, 0, sizeof(p));
	p.id = id;
	p.m = &k->f.m;
	p.ts = &k->f.ts;
	p.manifest_json = "{}";
	assert_int_equal(vg_run_create(k->st, &p, &dir, &e), 0);
	return dir;
}

/* The key of task i of k with a fresh vg_reuse (inputs hashed anew or
 * from the stat cache); the description into desc when not NULL. */
static void
kx_key(struct kx *k, size_t i, char key[33], struct vg_buf *desc)
{
	struct vg_reuse r;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_reuse_init(&r, k->st, &k->f.m, &fx_sh_backend,
	    &e), 0);
	vg_reuse_key(&r, &k->f.ts.v[i], key);
	if (desc != NULL)
		vg_buf_adds(desc, vg_buf_str(&r.full));
	vg_reuse_release(&r);
}

static void
test_key_parts(void **state)
{
	static const char *const cmds[] = { "echo a", "echo a", "echo b" };
	struct vg_buf d = VG_BUF_INIT;
	struct kx k;
	char k0[33], k1[33], k2[33], kk[33], *in;

	(void)state;
	kx_init(&k, cmds, 3);
	in = vg_path_join(k.wd, "data.txt");
	put_file(in, "one");
	vg_strv_push(&k.f.m.inputs, "*.txt");
	kx_key(&k, 0, k0, &d);
	kx_key(&k, 1, k1, NULL);
	kx_key(&k, 2, k2, NULL);
	/* The matrix value is in the key through the environment only;
	 * the fixture's tasks have none: the same command, the same key. */
	assert_string_equal(k0, k1);
	assert_string_not_equal(k0, k2);
	assert_non_null(strstr(vg_buf_str(&d), "command: \"echo a\"\n"));
	assert_non_null(strstr(vg_buf_str(&d), "backend: sh\n"));
	assert_non_null(strstr(vg_buf_str(&d), "input: data.txt 3 "));
	/* Same again: from the stat cache or hashed, the same key. */
	kx_key(&k, 0, kk, NULL);
	assert_string_equal(k0, kk);
	/* Content of the same size changes it. */
	put_file(in, "two");
	kx_key(&k, 0, kk, NULL);
	assert_string_not_equal(k0, kk);
	put_file(in, "one");
	kx_key(&k, 0, kk, NULL);
	assert_string_equal(k0, kk);
	/* The environment, in any order, and GPUs. */
	vg_kvs_set(&k.f.ts.v[0].env, "B", "2");
	vg_kvs_set(&k.f.ts.v[0].env, "A", "1");
	vg_kvs_set(&k.f.ts.v[1].env, "A", "1");
	vg_kvs_set(&k.f.ts.v[1].env, "B", "2");
	kx_key(&k, 0, k0, NULL);
	kx_key(&k, 1, k1, NULL);
	assert_string_equal(k0, k1);
	assert_string_not_equal(k0, kk);
	k.f.ts.v[1].resources.gpus = 1;
	kx_key(&k, 1, k1, NULL);
	assert_string_not_equal(k0, k1);
	k.f.ts.v[1].resources.gpus = 0;
	/* A time limit is not in it; isolation is. */
	k.f.ts.v[1].resources.time = 3600;
	kx_key(&k, 1, k1, NULL);
	assert_string_equal(k0, k1);
	k.f.m.isolation.level = VG_ISO_STRICT;
	kx_key(&k, 1, k1, NULL);
	assert_string_not_equal(k0, k1);
	k.f.m.isolation.level = VG_ISO_STANDARD;
	/* An input glob that matches nothing is said, not skipped. */
	vg_strv_push(&k.f.m.inputs, "none/*.csv");
	vg_buf_reset(&d);
	kx_key(&k, 0, kk, &d);
	assert_non_null(strstr(vg_buf_str(&d), "input: none/*.csv (no "
	    "match)\n"));
	assert_string_not_equal(k0, kk);
	vg_kvs_release(&k.f.ts.v[0].env);
	vg_kvs_release(&k.f.ts.v[1].env);
	vg_buf_release(&d);
	free(in);
	kx_release(&k);
}

/* An input that cannot be read fails the key with its name. */
static void
test_key_input_unreadable(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_reuse r;
	struct vg_err e;
	struct kx k;
	char *p;

	(void)state;
	kx_init(&k, cmds, 1);
	p = vg_path_join(k.wd, "fifo.in");
	assert_int_equal(mkfifo(p, 0600), 0);
	vg_strv_push(&k.f.m.inputs, "fifo.in");
	vg_err_init(&e);
	assert_int_not_equal(vg_reuse_init(&r, k.st, &k.f.m, NULL, &e), 0);
	assert_non_null(strstr(e.msg, "fifo.in"));
	vg_reuse_release(&r);
	free(p);
	kx_release(&k);
}

static void
test_store_rows(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_reuse_rec rec, got;
	struct vg_reuse_stat rs = { 1, 2, 3, 4 };
	struct vg_buf k = VG_BUF_INIT, d = VG_BUF_INIT, f = VG_BUF_INIT;
	struct vg_strv runs = VG_STRV_INIT;
	struct vg_err e;
	struct kx x;
	char id[VG_RUN_ID_MAX], hash[33], *dir, files[] = "stdout 3\n";
	long long n;
	int found;

	(void)state;
	kx_init(&x, cmds, 1);
	vg_err_init(&e);
	dir = kx_run(&x, id);
	memset(&rec, 0, sizeof(rec));
	memset(&got, 0, sizeof(got));
	vg_strlcpy(rec.key, "k1", sizeof(rec.key));
	vg_strlcpy(rec.run_id, id, sizeof(rec.run_id));
	rec.attempt = 2;
	rec.created = 5;
	rec.dir = dir;
	rec.files = files;
	assert_int_equal(vg_store_reuse_get(x.st, "k1", &got, &found, &e), 0);
	assert_int_equal(found, 0);
	assert_int_equal(vg_store_reuse_put(x.st, &rec, &e), 0);
	assert_int_equal(vg_store_reuse_get(x.st, "k1", &got, &found, &e), 0);
	assert_int_equal(found, 1);
	assert_string_equal(got.run_id, id);
	assert_int_equal(got.attempt, 2);
	assert_string_equal(got.files, "stdout 3\n");
	assert_int_equal(vg_store_reuse_runs(x.st, &runs, &e), 0);
	assert_int_equal(runs.n, 1);
	assert_string_equal(runs.v[0], id);
	assert_int_equal(vg_store_reuse_part_put(x.st, "p1", "c\n", &e), 0);
	assert_int_equal(vg_store_task_key_put(x.st, id, 0, "k1", "a\nb\n",
	    "p1", NULL, &e), 0);
	assert_int_equal(vg_store_task_key_get(x.st, id, 0, &k, &d, &f,
	    &found, &e), 0);
	assert_int_equal(found, 1);
	assert_string_equal(vg_buf_str(&k), "k1");
	assert_string_equal(vg_buf_str(&d), "a\nb\nc\n");
	assert_int_equal(f.len, 0);
	assert_int_equal(vg_store_task_key_get(x.st, id, 7, &k, NULL, NULL,
	    &found, &e), 0);
	assert_int_equal(found, 0);
	/* The stat cache answers only for the same stat. */
	assert_int_equal(vg_store_reuse_stat_put(x.st, "/a", &rs, "abc", &e),
	    0);
	assert_int_equal(vg_store_reuse_stat_get(x.st, "/a", &rs, hash,
	    &found, &e), 0);
	assert_int_equal(found, 1);
	assert_string_equal(hash, "abc");
	rs.mtime_ns++;
	assert_int_equal(vg_store_reuse_stat_get(x.st, "/a", &rs, hash,
	    &found, &e), 0);
	assert_int_equal(found, 0);
	/* Dropping by task, then a run's deletion takes its entries. */
	assert_int_equal(vg_store_reuse_drop(x.st, id, 3, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_int_equal(vg_store_run_delete(x.st, id, &e), 0);
	assert_int_equal(vg_store_reuse_get(x.st, "k1", &got, &found, &e), 0);
	assert_int_equal(found, 0);
	vg_reuse_rec_release(&got);
	vg_strv_release(&runs);
	vg_buf_release(&k);
	vg_buf_release(&d);
	vg_buf_release(&f);
	free(dir);
	kx_release(&x);
}

/* A task directory with stdout and an output, its files' list. */
static char *
src_dir(struct kx *k, struct vg_buf *files)
{
	char *src = vg_path_join(k->f.home, "src"), *p;
	struct vg_err e;

	assert_int_equal(mkdir(src, 0700), 0);
	p = vg_path_join(src, "outputs");
	assert_int_equal(mkdir(p, 0700), 0);
	free(p);
	p = vg_path_join(src, "stdout");
	put_file(p, "hello\n");
	free(p);
	p = vg_path_join(src, "outputs/r.csv");
	put_file(p, "1,2\n");
	free(p);
	/* A link a task planted is not a file of the result. */
	p = vg_path_join(src, "outputs/passwd");
	assert_int_equal(symlink("/etc/passwd", p), 0);
	free(p);
	vg_err_init(&e);
	assert_int_equal(vg_reuse_files(src, files, &e), 0);
	return src;
}

static void
test_find_and_bring(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_buf files = VG_BUF_INIT, got = VG_BUF_INIT;
	struct vg_reuse r;
	struct vg_err e;
	struct stat sb;
	struct kx k;
	char id[VG_RUN_ID_MAX], *src, *dst, *dir, *f, *six, *rcsv;
	int hit;

	(void)state;
	kx_init(&k, cmds, 1);
	src = src_dir(&k, &files);
	assert_string_equal(vg_buf_str(&files),
	    "outputs/r.csv 4\nstdout 6\n");
	vg_err_init(&e);
	dir = kx_run(&k, id);
	assert_int_equal(vg_reuse_init(&r, k.st, &k.f.m, NULL, &e), 0);
	memset(&r.rec, 0, sizeof(r.rec));
	vg_strlcpy(r.rec.key, "kk", sizeof(r.rec.key));
	vg_strlcpy(r.rec.run_id, id, sizeof(r.rec.run_id));
	r.rec.attempt = 1;
	r.rec.dir = src;
	r.rec.files = files.data;
	assert_int_equal(vg_store_reuse_put(k.st, &r.rec, &e), 0);
	r.rec.dir = r.rec.files = NULL;
	assert_int_equal(vg_reuse_find(&r, "nope", &hit, &e), 0);
	assert_int_equal(hit, 0);
	assert_int_equal(vg_reuse_find(&r, "kk", &hit, &e), 0);
	assert_int_equal(hit, 1);
	/* Brought by hard link. */
	dst = vg_path_join(k.f.home, "dst");
	assert_int_equal(mkdir(dst, 0700), 0);
	assert_int_equal(vg_reuse_bring(&r.rec, dst, &e), 0);
	f = vg_path_join(dst, "outputs/r.csv");
	assert_int_equal(vg_read_file(f, 100, &got, NULL), 0);
	assert_string_equal(vg_buf_str(&got), "1,2\n");
	assert_int_equal(stat(f, &sb), 0);
	assert_int_equal(sb.st_nlink, 2);
	free(f);
	f = vg_path_join(dst, "outputs/passwd");
	assert_int_not_equal(lstat(f, &sb), 0);
	free(f);
	/* stdout replaced by a link to a file of the same size: a miss,
	 * and a bring leaves nothing behind. */
	(void)vg_rm_rf(dst, NULL);
	assert_int_equal(mkdir(dst, 0700), 0);
	f = vg_path_join(src, "stdout");
	six = vg_path_join(k.f.home, "six");
	put_file(six, "world\n");
	assert_int_equal(unlink(f), 0);
	assert_int_equal(symlink("../six", f), 0);
	assert_int_equal(vg_reuse_find(&r, "kk", &hit, &e), 0);
	assert_int_equal(hit, 0);
	vg_err_init(&e);
	assert_int_not_equal(vg_reuse_bring(&r.rec, dst, &e), 0);
	assert_non_null(strstr(e.msg, "stdout"));
	rcsv = vg_path_join(dst, "outputs/r.csv");
	assert_int_not_equal(lstat(rcsv, &sb), 0);
	free(rcsv);
	/* Gone: a miss. */
	assert_int_equal(unlink(f), 0);
	assert_int_equal(vg_reuse_find(&r, "kk", &hit, &e), 0);
	assert_int_equal(hit, 0);
	/* Back with another size: still a miss. */
	put_file(f, "hello, world\n");
	assert_int_equal(vg_reuse_find(&r, "kk", &hit, &e), 0);
	assert_int_equal(hit, 0);
	put_file(f, "hello\n");
	assert_int_equal(vg_reuse_find(&r, "kk", &hit, &e), 0);
	assert_int_equal(hit, 1);
	free(f);
	free(six);
	vg_reuse_release(&r);
	vg_buf_release(&files);
	vg_buf_release(&got);
	free(src);
	free(dst);
	free(dir);
	kx_release(&k);
}

/*
 * A scheduler that collects what is submitted into arrays sent by
 * flush, as Slurm's does, and has every element succeed at the next
 * poll: what the driver hands to a scheduler, counted.
 */
#define FA_MAX	2048

static struct {
	struct vg_attempt	*held[FA_MAX];
	struct vg_sched_update	 ups[FA_MAX];
	size_t			 nheld, flushed;
	int			 submits;
	size_t			 arrays[16];	/* elements of each array */
	size_t			 narrays;
} fa;

static int
fa_open(struct vg_sched *s, struct vg_err *e)
{
	(void)e;
	s->window = 0;
	s->remote = 1;
	return 0;
}

static int
fa_submit(struct vg_sched *s, struct vg_attempt *a, struct vg_err *e)
{
	(void)s;
	if (fa.nheld >= FA_MAX)
		return vg_err_set(e, VG_ELIMIT, "fake array: full");
	fa.held[fa.nheld++] = a;
	fa.submits++;
	return 0;
}

static int
fa_flush(struct vg_sched *s, struct vg_err *e)
{
	(void)s;
	(void)e;
	if (fa.nheld > fa.flushed && fa.narrays < 16)
		fa.arrays[fa.narrays++] = fa.nheld - fa.flushed;
	fa.flushed = fa.nheld;
	return 0;
}

static int
fa_poll(struct vg_sched *s, int timeout_ms, int wake_fd,
    struct vg_sched_update **ups, size_t *n, struct vg_err *e)
{
	size_t i;

	(void)s;
	(void)timeout_ms;
	(void)wake_fd;
	(void)e;
	for (i = 0; i < fa.flushed; i++) {
		memset(&fa.ups[i], 0, sizeof(fa.ups[i]));
		fa.ups[i].a = fa.held[i];
		fa.ups[i].state = VG_ST_SUCCEEDED;
		fa.ups[i].result.state = VG_ST_SUCCEEDED;
		fa.ups[i].result.ended = vg_now();
	}
	*ups = fa.ups;
	*n = fa.flushed;
	memmove(fa.held, fa.held + fa.flushed, (fa.nheld - fa.flushed) *
	    sizeof(*fa.held));
	fa.nheld -= fa.flushed;
	fa.flushed = 0;
	return 0;
}

static int
fa_cancel(struct vg_sched *s, struct vg_attempt *a, int force,
    struct vg_err *e)
{
	(void)s;
	(void)a;
	(void)force;
	(void)e;
	return 0;
}

static size_t
fa_active(struct vg_sched *s)
{
	(void)s;
	return fa.nheld;
}

static void
fa_close(struct vg_sched *s)
{
	(void)s;
}

static const struct vg_scheduler_ops fa_sched = {
	.p = { .kind = VG_PLUGIN_SCHEDULER, .name = "fake-array" },
	.open = fa_open,
	.submit = fa_submit,
	.flush = fa_flush,
	.poll = fa_poll,
	.cancel = fa_cancel,
	.active = fa_active,
	.close = fa_close,
};

/* Creates and drives a run of k's tasks through the array scheduler. */
static void
fa_drive(struct kx *k, struct vg_run_result *res)
{
	struct vg_run_opts o;
	struct vg_err e;
	char id[VG_RUN_ID_MAX], *dir;

	memset(&fa, 0, sizeof(fa));
	vg_err_init(&e);
	dir = kx_run(k, id);
	memset(&o, 0, sizeof(o));
	o.backend = &fx_sh_backend;
	o.sched = &fa_sched;
	assert_int_equal(vg_run_drive(k->st, id, &k->f.m, &k->f.ts, &o, res,
	    &e), 0);
	free(dir);
}

/* 1,000 tasks, then the same with 10 commands changed: the second run
 * submits an array of 10, records 990 CACHED and succeeds. */
static void
test_sweep_submits_misses(void **state)
{
	enum { N = 1000, CHANGED = 10 };
	struct vg_run_result res;
	char **cmds;
	struct kx k;
	size_t i;

	(void)state;
	cmds = vg_xcalloc(N, sizeof(*cmds));
	for (i = 0; i < N; i++)
		cmds[i] = vg_xasprintf("echo %zu", i);
	kx_init(&k, (const char *const *)cmds, N);
	k.f.m.reuse = 1;
	fa_drive(&k, &res);
	assert_int_equal(fa.submits, N);
	assert_int_equal(res.counts[VG_ST_SUCCEEDED], N);
	for (i = 0; i < CHANGED; i++) {
		free(k.f.ts.v[i * 100].command.shell);
		k.f.ts.v[i * 100].command.shell = vg_xasprintf("echo new %zu",
		    i);
	}
	fa_drive(&k, &res);
	assert_int_equal(fa.submits, CHANGED);
	assert_int_equal(fa.narrays, 1);
	assert_int_equal(fa.arrays[0], CHANGED);
	assert_int_equal(res.counts[VG_ST_CACHED], N - CHANGED);
	assert_int_equal(res.counts[VG_ST_SUCCEEDED], CHANGED);
	assert_int_equal(res.state, VG_ST_SUCCEEDED);
	assert_int_equal(vg_run_exit_status(&res), 0);
	/* reuse off (--no-reuse): everything is submitted again. */
	k.f.m.reuse = 0;
	fa_drive(&k, &res);
	assert_int_equal(fa.submits, N);
	for (i = 0; i < N; i++)
		free(cmds[i]);
	free(cmds);
	kx_release(&k);
}

/* Loads text as a manifest over a site config (site may be NULL) in
 * home; returns the rc, the problems joined into diag. */
static int
load(const char *home, const char *site, const char *text,
    struct vg_manifest **mp, struct vg_buf *diag)
{
	struct vg_load_opts o = { .no_configs = site == NULL };
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_err e;
	char *sp = NULL, *up;
	size_t i;
	int rc;

	up = vg_path_join(home, "none.yaml");
	if (site != NULL) {
		sp = vg_path_join(home, "site.yaml");
		put_file(sp, site);
		o.site_config = sp;
		o.user_config = up;
	}
	vg_err_init(&e);
	*mp = NULL;
	rc = vg_manifest_load_mem("m.yaml", text, strlen(text), &o, mp, &d,
	    &e);
	for (i = 0; i < d.lines.n; i++)
		vg_buf_printf(diag, "%s\n", d.lines.v[i]);
	vg_diag_release(&d);
	free(sp);
	free(up);
	return rc;
}

/* reuse: a boolean, defaulted by a config; inputs: relative globs
 * without ${{ }}; each bad value named with its place. */
static void
test_manifest_fields(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_buf d = VG_BUF_INIT;
	struct vg_manifest *m;
	struct kx k;

	(void)state;
	kx_init(&k, cmds, 1);
	assert_int_equal(load(k.f.home, "reuse: true\n", "version: 1\n"
	    "command: 'true'\ninputs: [a.csv, 'd/*']\n", &m, &d), 0);
	assert_int_equal(m->reuse, 1);
	assert_int_equal(m->inputs.n, 2);
	assert_string_equal(m->inputs.v[1], "d/*");
	vg_manifest_free(m);
	assert_int_equal(load(k.f.home, "reuse: true\n", "version: 1\n"
	    "command: 'true'\nreuse: false\n", &m, &d), 0);
	assert_int_equal(m->reuse, 0);
	vg_manifest_free(m);
	assert_int_equal(load(k.f.home, NULL, "version: 1\ncommand: 'true'\n",
	    &m, &d), 0);
	assert_int_equal(m->reuse, 0);
	vg_manifest_free(m);
	assert_int_not_equal(load(k.f.home, "reuse: maybe\n", "version: 1\n"
	    "command: 'true'\n", &m, &d), 0);
	assert_null(m);
	assert_non_null(strstr(vg_buf_str(&d), "site.yaml:1:8: "));
	vg_buf_reset(&d);
	assert_int_not_equal(load(k.f.home, NULL, "version: 1\n"
	    "command: 'true'\ninputs: ['/etc/*', 'x/${{ matrix.a }}', '']\n",
	    &m, &d), 0);
	assert_non_null(strstr(vg_buf_str(&d), "m.yaml:3:10: "
	    "'inputs[0]': '/etc/*' must be a glob relative to the working "
	    "directory"));
	assert_non_null(strstr(vg_buf_str(&d), "m.yaml:3:20: 'inputs[1]': "
	    "'x/${{ matrix.a }}': inputs are the same for every task"));
	assert_non_null(strstr(vg_buf_str(&d), "m.yaml:3:41: 'inputs[2]': '' "
	    "must be"));
	vg_buf_release(&d);
	kx_release(&k);
}

/* A docker engine that knows image python:3.12 only: every request of
 * the connection answered in turn. */
static void
engine_serve(int fd)
{
	char req[4096], path[256], out[512];
	const char *body;
	size_t len;
	ssize_t n;
	int status;

	for (;;) {
		len = 0;
		req[0] = '\0';
		while (strstr(req, "\r\n\r\n") == NULL) {
			if (len >= sizeof(req) - 1 ||
			    (n = read(fd, req + len, sizeof(req) - 1 - len)) <= 0)
				return;
			len += (size_t)n;
			req[len] = '\0';
		}
		if (sscanf(req, "%*15s %255s", path) != 1)
			return;
		status = 200;
		body = "{}";
		if (strstr(path, "/images/python:3.12/json") != NULL)
			body = "{\"Id\":\"sha256:5e1f\"}";
		else if (strstr(path, "/images/") != NULL) {
			status = 404;
			body = "{\"message\":\"No such image\"}";
		} else if (strcmp(path, "/_ping") == 0)
			body = "OK";
		n = snprintf(out, sizeof(out), "HTTP/1.1 %d X\r\nApi-Version: "
		    "1.43\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\n\r\n%s", status, strlen(body),
		    body);
		if (write(fd, out, (size_t)n) != n)
			return;
	}
}

/* docker resolves the image to the engine's id for the key; an image
 * not pulled yet says so; a backend without the operation gives the
 * image as written. */
static void
test_image_id(void **state)
{
	static const char *const cmds[] = { "true" };
	struct vg_buf d = VG_BUF_INIT, id = VG_BUF_INIT;
	const struct vg_backend_ops *docker = vg_backend_find("docker");
	struct unixhttpd srv;
	struct vg_manifest *m;
	struct vg_err e;
	struct kx k;

	(void)state;
	kx_init(&k, cmds, 1);
	assert_non_null(docker);
	assert_int_equal(unixhttpd_start(&srv, "vigil-reuse", engine_serve),
	    0);
	setenv("DOCKER_HOST", srv.endpoint, 1);
	assert_int_equal(load(k.f.home, NULL, "version: 1\nbackend: docker\n"
	    "image: python:3.12\ncommand: 'true'\n", &m, &d), 0);
	vg_err_init(&e);
	assert_int_equal(vg_backend_image_id(docker, m, &id, &e), 0);
	assert_string_equal(vg_buf_str(&id), "python:3.12 sha256:5e1f");
	vg_buf_reset(&id);
	free(m->image);
	m->image = vg_xstrdup("alpine:3");
	assert_int_equal(vg_backend_image_id(docker, m, &id, &e), 0);
	assert_string_equal(vg_buf_str(&id), "alpine:3 (not present)");
	vg_buf_reset(&id);
	assert_int_equal(vg_backend_image_id(&fx_sh_backend, m, &id, &e), 0);
	assert_string_equal(vg_buf_str(&id), "alpine:3");
	unsetenv("DOCKER_HOST");
	unixhttpd_stop(&srv);
	vg_manifest_free(m);
	vg_buf_release(&id);
	vg_buf_release(&d);
	kx_release(&k);
}

/* The singularity backend's image_id: a local image by size and XXH64
 * of its bytes (the same bytes, the same line; other bytes, another);
 * a missing one is an error naming it; a reference the SIF cache has
 * not pulled says so. */
static void
test_image_id_sif(void **state)
{
	static const char *const cmds[] = { "true" };
	const struct vg_backend_ops *sing = vg_backend_find("singularity");
	struct vg_buf d = VG_BUF_INIT, id = VG_BUF_INIT;
	struct vg_manifest *m;
	struct vg_err e;
	struct kx k;
	char *img, *text, *want;

	(void)state;
	kx_init(&k, cmds, 1);
	assert_non_null(sing);
	img = vg_path_join(k.wd, "img.sif");
	put_file(img, "abc");
	text = vg_xasprintf("version: 1\nbackend: singularity\nimage: %s\n"
	    "command: 'true'\ncache:\n  dir: %s/cache\n", img, k.wd);
	assert_int_equal(load(k.f.home, NULL, text, &m, &d), 0);
	vg_err_init(&e);
	assert_int_equal(vg_backend_image_id(sing, m, &id, &e), 0);
	want = vg_xasprintf("%s size 3 xxh64:44bc2cf5ad770999", img);
	assert_string_equal(vg_buf_str(&id), want);
	free(want);
	vg_buf_reset(&id);
	put_file(img, "abd");
	assert_int_equal(vg_backend_image_id(sing, m, &id, &e), 0);
	assert_null(strstr(vg_buf_str(&id), "44bc2cf5ad770999"));
	vg_buf_reset(&id);
	unlink(img);
	assert_int_not_equal(vg_backend_image_id(sing, m, &id, &e), 0);
	assert_non_null(strstr(e.msg, "img.sif"));
	vg_buf_reset(&id);
	free(m->image);
	m->image = vg_xstrdup("docker://127.0.0.1:9/bb:1");
	vg_err_init(&e);
	assert_int_equal(vg_backend_image_id(sing, m, &id, &e), 0);
	assert_string_equal(vg_buf_str(&id),
	    "docker://127.0.0.1:9/bb:1 (not pulled)");
	vg_manifest_free(m);
	vg_buf_release(&id);
	vg_buf_release(&d);
	free(text);
	free(img);
	kx_release(&k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_vectors),
		cmocka_unit_test(test_hash_fd),
		cmocka_unit_test(test_key_parts),
		cmocka_unit_test(test_key_input_unreadable),
		cmocka_unit_test(test_store_rows),
		cmocka_unit_test(test_find_and_bring),
		cmocka_unit_test(test_sweep_submits_misses),
		cmocka_unit_test(test_manifest_fields),
		cmocka_unit_test(test_image_id),
		cmocka_unit_test(test_image_id_sif),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
