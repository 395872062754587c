/*
 * test-scratch.c - the scratch manager: base choice order and reasons,
 * per-task directories created without following symlinks, ownership and
 * free-space checks, scratch.keep, list and gc with running runs.
 */
#include <dirent.h>
#include <errno.h>
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

#include "common/path.h"
#include "scratch/scratch.h"

struct fx {
	char	*dir;		/* private temp dir, resolved */
};

/* Unsets every variable the base choice reads. */
static void
clear_env(void)
{
	unsetenv("VIGIL_SCRATCH");
	unsetenv("SCRATCH");
	unsetenv("SLURM_TMPDIR");
	unsetenv("TMPDIR");
}

static int
setup(void **state)
{
	struct fx *f = vg_xcalloc(1, sizeof(*f));
	char tmpl[] = "/tmp/vigil-test-scratch.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	f->dir = realpath(tmpl, NULL);
	clear_env();
	setenv("USER", "tuser", 1);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	struct vg_err e;

	vg_err_init(&e);
	vg_rm_rf(f->dir, &e);
	free(f->dir);
	free(f);
	clear_env();
	return 0;
}

/* Makes dir/name (mode 0755) and returns the path (caller frees). */
static char *
mk(const char *dir, const char *name)
{
	char *p = vg_path_join(dir, name);

	assert_int_equal(mkdir(p, 0755), 0);
	return p;
}

/* Chooses the base with site root site; checks base and reason. */
static void
check_base(const struct vg_scratch_conf *conf, const char *state_dir,
    const char *site, const char *want_base, const char *want_reason)
{
	char *base, *reason;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_scratch_base_in(conf, state_dir, site, &base,
	    &reason, &e), 0);
	assert_string_equal(base, want_base);
	assert_string_equal(reason, want_reason);
	free(base);
	free(reason);
}

static void
test_base_order(void **state)
{
	struct fx *f = *state;
	struct vg_scratch_conf conf = { 0 };
	char *site, *user, *scr, *slurm, *tmpd, *home, *cp, *vs, *want;

	site = mk(f->dir, "site");
	user = mk(site, "tuser");
	scr = mk(f->dir, "scr");
	slurm = mk(f->dir, "slurm");
	tmpd = mk(f->dir, "tmpd");
	home = vg_path_join(f->dir, "home");	/* created on demand */
	cp = vg_path_join(f->dir, "conf/path");
	vs = vg_path_join(f->dir, "vs");

	setenv("SCRATCH", scr, 1);
	setenv("SLURM_TMPDIR", slurm, 1);
	setenv("TMPDIR", tmpd, 1);
	setenv("VIGIL_SCRATCH", vs, 1);
	conf.path = cp;
	check_base(&conf, home, site, cp, "scratch.path");
	check_base(NULL, home, site, vs, "$VIGIL_SCRATCH");
	unsetenv("VIGIL_SCRATCH");
	want = vg_xasprintf("%s is writable", user);
	check_base(NULL, home, site, user, want);
	free(want);
	rmdir(user);
	check_base(NULL, home, site, scr, "$SCRATCH");
	unsetenv("SCRATCH");
	check_base(NULL, home, site, slurm, "$SLURM_TMPDIR");
	unsetenv("SLURM_TMPDIR");
	check_base(NULL, home, site, tmpd, "$TMPDIR");
	unsetenv("TMPDIR");
	check_base(NULL, home, site, home, "no scratch filesystem found (set "
	    "scratch.path or $VIGIL_SCRATCH); using the state directory");
	free(site);
	free(user);
	free(scr);
	free(slurm);
	free(tmpd);
	free(home);
	free(cp);
	free(vs);
}

static void
test_base_skips_and_errors(void **state)
{
	struct fx *f = *state;
	struct vg_scratch_conf conf = { 0 };
	char *file, *tmpd, *want, *base, *reason, *site, *user, *link;
	struct vg_err e;

	file = vg_path_join(f->dir, "file");
	close(open(file, O_CREAT | O_WRONLY, 0600));
	tmpd = mk(f->dir, "tmpd");
	/* ambient variables that are unusable are skipped, with a note */
	setenv("SCRATCH", file, 1);
	setenv("SLURM_TMPDIR", "relative/dir", 1);
	setenv("TMPDIR", tmpd, 1);
	want = vg_xasprintf("$TMPDIR; $SCRATCH '%s' is not a directory; "
	    "$SLURM_TMPDIR 'relative/dir' is not absolute", file);
	check_base(NULL, NULL, NULL, tmpd, want);
	free(want);
	/* explicit ones fail instead of falling back */
	vg_err_init(&e);
	setenv("VIGIL_SCRATCH", file, 1);
	assert_int_equal(vg_scratch_base(NULL, NULL, &base, &reason, &e),
	    VG_EINVAL);
	assert_null(base);
	assert_null(reason);
	want = vg_xasprintf("$VIGIL_SCRATCH '%s' is not a directory", file);
	assert_string_equal(e.msg, want);
	free(want);
	conf.path = vg_xstrdup("not/absolute");
	assert_int_equal(vg_scratch_base(&conf, NULL, &base, &reason, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "scratch.path 'not/absolute' is not an "
	    "absolute path");
	free(conf.path);
	unsetenv("VIGIL_SCRATCH");
	/* nothing at all */
	clear_env();
	assert_int_equal(vg_scratch_base_in(NULL, NULL, NULL, &base, &reason,
	    &e), VG_ENOENT);
	assert_string_equal(e.msg, "no scratch directory: set scratch.path "
	    "or $VIGIL_SCRATCH");
	/* /scratch/$USER owned by someone else is skipped */
	site = mk(f->dir, "site");
	user = mk(site, "tuser");
	assert_int_equal(chown(user, 4321, 4321), 0);
	setenv("TMPDIR", tmpd, 1);
	want = vg_xasprintf("$TMPDIR; scratch '%s' is owned by uid 4321, "
	    "mode 0755; vigil expects a directory owned by you that no one "
	    "else can write (you are %s)", user, geteuid() == 0 ?
	    "root (uid 0)" : "?");
	if (geteuid() == 0)
		check_base(NULL, NULL, site, tmpd, want);
	free(want);
	/* a base given through a symlink is resolved once, when chosen */
	link = vg_path_join(f->dir, "link");
	assert_int_equal(symlink(tmpd, link), 0);
	setenv("VIGIL_SCRATCH", link, 1);
	check_base(NULL, NULL, NULL, tmpd, "$VIGIL_SCRATCH");
	free(link);
	free(site);
	free(user);
	free(file);
	free(tmpd);
}

/* A base shared by users (root's, 1777): each user's own directory in
 * it; one another user took first is passed over for a fresh private
 * one; a base another user owns is passed over with a note. */
static void
test_base_shared(void **state)
{
	struct fx *f = *state;
	struct vg_scratch_conf conf = { 0 };
	char *shared, *want, *base, *reason, *theirs;
	struct vg_err e;

	if (geteuid() != 0) {
		printf("skipped: handing a directory to another uid needs "
		    "root\n");
		return;
	}
	shared = mk(f->dir, "shared");
	assert_int_equal(chmod(shared, 01777), 0);
	conf.path = shared;
	want = vg_path_join(shared, "tuser");
	check_base(&conf, NULL, NULL, want, "scratch.path");
	/* Taken first by uid 4321: a private directory beside it. */
	assert_int_equal(rmdir(want), 0);
	assert_int_equal(mkdir(want, 0700), 0);
	assert_int_equal(chmod(want, 0777), 0);
	assert_int_equal(chown(want, 4321, 4321), 0);
	vg_err_init(&e);
	assert_int_equal(vg_scratch_base_in(&conf, NULL, NULL, &base, &reason,
	    &e), 0);
	assert_true(strncmp(base, want, strlen(want)) == 0);
	assert_true(base[strlen(want)] == '.');
	assert_non_null(strstr(reason, "scratch.path; scratch.path '"));
	assert_non_null(strstr(reason, "is owned by uid 4321, mode 0777"));
	assert_non_null(strstr(reason, "a private directory beside it is "
	    "used instead"));
	free(base);
	free(reason);
	/* A base uid 4321 made: passed over, told. */
	theirs = mk(f->dir, "theirs");
	assert_int_equal(chmod(theirs, 01777), 0);
	assert_int_equal(chown(theirs, 4321, 4321), 0);
	conf.path = theirs;
	setenv("TMPDIR", shared, 1);
	vg_err_init(&e);
	assert_int_equal(vg_scratch_base_in(&conf, NULL, NULL, &base, &reason,
	    &e), 0);
	assert_true(strncmp(base, want, strlen(want)) == 0);
	assert_non_null(strstr(reason, "a shared base owned by root or you"));
	free(base);
	free(reason);
	free(theirs);
	free(want);
	free(shared);
}

static void
test_task_dir(void **state)
{
	struct fx *f = *state;
	char *path, *want, *owner, host[256], rec[512], *p;
	struct vg_buf b = VG_BUF_INIT;
	struct stat st;
	struct vg_err e;
	mode_t old;

	vg_err_init(&e);
	old = umask(0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "run1", 4, &path, &e), 0);
	umask(old);
	want = vg_xasprintf("%s/vigil/run1/4", f->dir);
	assert_string_equal(path, want);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	free(want);
	want = vg_xasprintf("%s/vigil/run1", f->dir);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	free(want);
	/* the owner record names this process */
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	owner = vg_xasprintf("%s/vigil/run1/.task-%s.%ld.owner", f->dir,
	    host, (long)getpid());
	assert_int_equal(vg_read_file(owner, 4096, &b, &e), 0);
	snprintf(rec, sizeof(rec), "%s %ld ", host, (long)getpid());
	assert_int_equal(strncmp(vg_buf_str(&b), rec, strlen(rec)), 0);
	assert_int_equal(vg_scratch_owner_running(f->dir, "run1", NULL), 1);
	/* reuse is fine, and a wider mode is narrowed again */
	chmod(path, 0777);
	assert_int_equal(vg_scratch_task_dir(f->dir, "run1", 4, &p, &e), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	free(p);
	/* bad run ids and indexes */
	assert_int_equal(vg_scratch_task_dir(f->dir, "../x", 0, &p, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "run id '../x' is not a single path "
	    "component");
	assert_null(p);
	assert_int_equal(vg_scratch_task_dir(f->dir, "..", 0, &p, &e),
	    VG_EINVAL);
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", -1, &p, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "task index -1 is negative");
	vg_buf_release(&b);
	free(owner);
	free(path);
}

/* Expects task-dir creation under base to fail with a symlink message
 * naming link; and nothing created in victim. */
static void
expect_link_refused(const char *base, const char *link, const char *victim)
{
	struct vg_err e;
	char *p, *want;

	vg_err_init(&e);
	assert_int_equal(vg_scratch_task_dir(base, "r1", 0, &p, &e),
	    VG_EDENIED);
	assert_null(p);
	want = vg_xasprintf("'%s' is a symbolic link; scratch directories "
	    "are never created through one", link);
	assert_string_equal(e.msg, want);
	free(want);
	assert_int_equal(rmdir(victim), 0);	/* still empty */
	assert_int_equal(mkdir(victim, 0755), 0);
}

static void
test_planted_symlinks(void **state)
{
	struct fx *f = *state;
	char *victim, *base, *vig, *run, *task, *blink, *sub;

	victim = mk(f->dir, "victim");
	base = mk(f->dir, "base");
	vig = vg_path_join(base, "vigil");
	run = vg_path_join(vig, "r1");
	task = vg_path_join(run, "0");
	/* at each level below the base */
	assert_int_equal(symlink(victim, vig), 0);
	expect_link_refused(base, vig, victim);
	unlink(vig);
	assert_int_equal(mkdir(vig, 0700), 0);
	assert_int_equal(symlink(victim, run), 0);
	expect_link_refused(base, run, victim);
	unlink(run);
	assert_int_equal(mkdir(run, 0700), 0);
	assert_int_equal(symlink(victim, task), 0);
	expect_link_refused(base, task, victim);
	unlink(task);
	/* a link to a file is refused the same way */
	assert_int_equal(symlink("/etc/hostname", task), 0);
	expect_link_refused(base, task, victim);
	unlink(task);
	/* and in the base path itself, when given unresolved */
	blink = vg_path_join(f->dir, "blink");
	assert_int_equal(symlink(base, blink), 0);
	expect_link_refused(blink, blink, victim);
	sub = vg_path_join(blink, "x");
	expect_link_refused(sub, blink, victim);
	free(sub);
	free(blink);
	free(victim);
	free(base);
	free(vig);
	free(run);
	free(task);
}

static void
test_foreign_owner_and_space(void **state)
{
	struct fx *f = *state;
	char *vig, *p, *want;
	struct vg_err e;

	vg_err_init(&e);
	vig = mk(f->dir, "vigil");
	assert_int_equal(chown(vig, 4321, 4321), 0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", 0, &p, &e),
	    VG_EDENIED);
	want = vg_xasprintf("'%s' is owned by uid 4321, not by you (uid %u); "
	    "refusing to use it", vig, (unsigned)geteuid());
	assert_string_equal(e.msg, want);
	free(want);
	assert_int_equal(chown(vig, geteuid(), getegid()), 0);
	/* free-space preflight: 1 EiB is more than this disk has */
	assert_int_equal(vg_scratch_task_dir_min(f->dir, "r", 0,
	    1ULL << 60, &p, &e), VG_ELIMIT);
	assert_null(p);
	want = vg_xasprintf("scratch '%s' has ", f->dir);
	assert_int_equal(strncmp(e.msg, want, strlen(want)), 0);
	assert_non_null(strstr(e.msg, " free, less than scratch.min_free "
	    "1.0 EiB (free some space, lower scratch.min_free, or choose "
	    "another scratch.path)"));
	free(want);
	assert_int_equal(vg_scratch_preflight(f->dir, 1, &e), 0);
	free(vig);
}

/* Counts the entries of dir whose names start with prefix. */
static int
count_prefix(const char *dir, const char *prefix)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* While another task of the run is live in this process, an ended
 * task's emptied scratch directory is kept hidden in the run directory
 * and becomes the next task's (the same inode); with the run's last task
 * the kept ones go and so does the run directory. */
static void
test_finish_pool(void **state)
{
	struct fx *f = *state;
	char *a, *b, *n, *run;
	struct vg_err e;
	struct stat sa, sn;
	int fd;

	vg_err_init(&e);
	run = vg_xasprintf("%s/vigil/p", f->dir);
	assert_int_equal(vg_scratch_task_dir(f->dir, "p", 0, &a, &e), 0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "p", 1, &b, &e), 0);
	assert_int_equal(stat(a, &sa), 0);
	/* What the task left is removed; the directory is kept. */
	n = vg_path_join(a, "left");
	fd = open(n, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	free(n);
	assert_int_equal(vg_scratch_finish(a, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(a, &sn), 0);
	assert_int_equal(count_prefix(run, ".pool-"), 1);
	assert_int_equal(vg_scratch_task_dir(f->dir, "p", 2, &n, &e), 0);
	assert_int_equal(stat(n, &sn), 0);
	assert_true(sn.st_ino == sa.st_ino);
	assert_int_equal(sn.st_mode & 07777, 0700);
	assert_int_equal(count_prefix(n, ""), 2);	/* . and .. only */
	assert_int_equal(count_prefix(run, ".pool-"), 0);
	assert_int_equal(vg_scratch_finish(n, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_equal(count_prefix(run, ".pool-"), 1);
	assert_int_equal(vg_scratch_finish(b, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(run, &sn), 0);
	free(a);
	free(b);
	free(n);
	free(run);
}

static void
test_finish_keep(void **state)
{
	struct fx *f = *state;
	char *p, *owner, *outside, *ln, *run;
	struct vg_err e;
	struct stat st;

	vg_err_init(&e);
	outside = vg_path_join(f->dir, "outside");
	close(open(outside, O_CREAT | O_WRONLY, 0600));
	run = vg_xasprintf("%s/vigil/r", f->dir);
	/* never: removed even after success or failure, symlinks not
	 * followed, owner record and empty run dir gone */
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", 0, &p, &e), 0);
	ln = vg_path_join(p, "ln");
	assert_int_equal(symlink(outside, ln), 0);
	free(ln);
	ln = vg_path_join(p, "locked");
	assert_int_equal(mkdir(ln, 0), 0);
	free(ln);
	assert_int_equal(vg_scratch_finish(p, VG_KEEP_NEVER, 0, &e), 0);
	assert_int_not_equal(stat(p, &st), 0);
	assert_int_equal(stat(outside, &st), 0);
	assert_int_not_equal(stat(run, &st), 0);
	free(p);
	/* on-failure: kept after a failure (owner record dropped) */
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", 1, &p, &e), 0);
	assert_int_equal(vg_scratch_finish(p, VG_KEEP_ON_FAILURE, 0, &e), 0);
	assert_int_equal(stat(p, &st), 0);
	owner = vg_xasprintf("%s/.task-1.owner", run);
	assert_int_not_equal(stat(owner, &st), 0);
	free(owner);
	assert_int_equal(vg_scratch_owner_running(f->dir, "r", NULL), 0);
	free(p);
	/* on-failure after success: removed; the run dir stays (task 1) */
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", 2, &p, &e), 0);
	assert_int_equal(vg_scratch_finish(p, VG_KEEP_ON_FAILURE, 1, &e), 0);
	assert_int_not_equal(stat(p, &st), 0);
	assert_int_equal(stat(run, &st), 0);
	free(p);
	/* always: kept after success */
	assert_int_equal(vg_scratch_task_dir(f->dir, "r", 3, &p, &e), 0);
	assert_int_equal(vg_scratch_finish(p, VG_KEEP_ALWAYS, 1, &e), 0);
	assert_int_equal(stat(p, &st), 0);
	free(p);
	assert_int_equal(vg_scratch_finish("noslash", VG_KEEP_NEVER, 1, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "'noslash' is not a task scratch "
	    "directory");
	free(run);
	free(outside);
}

/* A running callback: runs whose id starts with "live" are running. */
static int
cb_running(const char *base, const char *run_id, void *arg)
{
	(*(int *)arg)++;
	(void)base;
	return strncmp(run_id, "live", 4) == 0;
}

/* Makes text the only owner record of run under base (the records of
 * this process's tasks there go). */
static void
owner_rec(const char *base, const char *run, const char *text)
{
	char *dir = vg_xasprintf("%s/vigil/%s", base, run), *p;
	struct dirent *d;
	struct vg_err e;
	DIR *dp;

	vg_err_init(&e);
	assert_non_null(dp = opendir(dir));
	while ((d = readdir(dp)) != NULL)
		if (strncmp(d->d_name, ".task-", 6) == 0)
			assert_int_equal(unlinkat(dirfd(dp), d->d_name, 0), 0);
	closedir(dp);
	p = vg_xasprintf("%s/.task-0.owner", dir);
	assert_int_equal(vg_write_file_atomic(p, text, strlen(text), 0600,
	    &e), 0);
	free(p);
	free(dir);
}

static void
test_list_gc(void **state)
{
	struct fx *f = *state;
	struct vg_scratch_list l, freed;
	char *p, *q, host[256], rec[300], *data;
	struct vg_err e;
	int calls = 0, fd;
	pid_t dead;

	vg_err_init(&e);
	gethostname(host, sizeof(host));
	/* empty base: empty list */
	assert_int_equal(vg_scratch_list(f->dir, NULL, NULL, &l, &e), 0);
	assert_int_equal(l.n, 0);
	/* b-dead: finished; a-self: this process; c-remote: other host */
	assert_int_equal(vg_scratch_task_dir(f->dir, "a-self", 0, &p, &e), 0);
	free(p);
	assert_int_equal(vg_scratch_task_dir(f->dir, "b-dead", 0, &p, &e), 0);
	data = vg_path_join(p, "data");
	fd = open(data, O_CREAT | O_WRONLY, 0600);
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	free(data);
	free(p);
	if ((dead = fork()) == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	snprintf(rec, sizeof(rec), "%s %ld 1\n", host, (long)dead);
	owner_rec(f->dir, "b-dead", rec);
	assert_int_equal(vg_scratch_task_dir(f->dir, "c-remote", 0, &p, &e),
	    0);
	free(p);
	owner_rec(f->dir, "c-remote", "other-node 77 5\n");
	assert_int_equal(vg_scratch_task_dir(f->dir, "d-garbled", 0, &p, &e),
	    0);
	free(p);
	owner_rec(f->dir, "d-garbled", "nonsense\n");

	assert_int_equal(vg_scratch_list(f->dir, NULL, NULL, &l, &e), 0);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.v[0].run_id, "a-self");
	assert_int_equal(l.v[0].running, 1);
	snprintf(rec, sizeof(rec), "%s pid %ld", host, (long)getpid());
	assert_string_equal(l.v[0].owner, rec);
	assert_string_equal(l.v[1].run_id, "b-dead");
	assert_int_equal(l.v[1].running, 0);
	assert_null(l.v[1].owner);
	assert_int_equal(l.v[1].tasks, 1);
	assert_true(l.v[1].bytes >= 4096);
	assert_int_equal(l.v[2].running, 1);
	assert_string_equal(l.v[2].owner, "other-node pid 77");
	assert_int_equal(l.v[3].running, 1);
	assert_string_equal(l.v[3].owner, "unreadable owner record");
	p = vg_xasprintf("%s/vigil/b-dead", f->dir);
	assert_string_equal(l.v[1].path, p);
	vg_scratch_list_release(&l);

	/* dry run frees nothing */
	assert_int_equal(vg_scratch_gc(f->dir, NULL, NULL, 1, &freed, &e), 0);
	assert_int_equal(freed.n, 1);
	assert_string_equal(freed.v[0].run_id, "b-dead");
	vg_scratch_list_release(&freed);
	assert_int_equal(access(p, F_OK), 0);
	/* gc removes only the finished run */
	assert_int_equal(vg_scratch_gc(f->dir, NULL, NULL, 0, &freed, &e), 0);
	assert_int_equal(freed.n, 1);
	assert_string_equal(freed.v[0].run_id, "b-dead");
	assert_true(freed.v[0].bytes >= 4096);
	vg_scratch_list_release(&freed);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
	q = vg_xasprintf("%s/vigil/a-self/0", f->dir);
	assert_int_equal(access(q, F_OK), 0);
	free(q);

	/* with a callback, the caller decides */
	assert_int_equal(vg_scratch_task_dir(f->dir, "live-1", 0, &p, &e), 0);
	free(p);
	assert_int_equal(vg_scratch_gc(f->dir, cb_running, &calls, 0, &freed,
	    &e), 0);
	assert_int_equal(calls, 4);
	assert_int_equal(freed.n, 3);
	assert_string_equal(freed.v[0].run_id, "a-self");
	assert_string_equal(freed.v[1].run_id, "c-remote");
	assert_string_equal(freed.v[2].run_id, "d-garbled");
	vg_scratch_list_release(&freed);
	assert_int_equal(vg_scratch_list(f->dir, NULL, NULL, &l, &e), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].run_id, "live-1");
	vg_scratch_list_release(&l);
	vg_scratch_list_release(NULL);
}

/*
 * The tasks of a run reuse the run directory opened for the first one;
 * a run directory removed (or renamed and replaced by a link) since is
 * never followed: a removed one is made again by a fresh walk, and a
 * link in its place is refused by that walk.
 */
static void
test_run_dir_kept(void **state)
{
	struct fx *f = *state;
	char *p0, *p1, *p2, *run, *moved, *victim;
	struct stat st;
	struct vg_err e;

	vg_err_init(&e);
	run = vg_xasprintf("%s/vigil/kr", f->dir);
	moved = vg_xasprintf("%s/moved", f->dir);
	victim = vg_xasprintf("%s/victim", f->dir);
	assert_int_equal(vg_scratch_task_dir(f->dir, "kr", 0, &p0, &e), 0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "kr", 1, &p1, &e), 0);
	assert_int_equal(stat(p1, &st), 0);
	/* the last task's finish removes the run directory ... */
	assert_int_equal(vg_scratch_finish(p0, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_equal(stat(run, &st), 0);
	assert_int_equal(vg_scratch_finish(p1, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(run, &st), 0);
	/* ... and the next task of the run makes it again */
	assert_int_equal(vg_scratch_task_dir(f->dir, "kr", 2, &p2, &e), 0);
	assert_int_equal(stat(p2, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(p2);
	/* renamed and replaced by a link: the kept directory is the real
	 * one, which moved; nothing appears at the link's target */
	assert_int_equal(mkdir(victim, 0700), 0);
	assert_int_equal(rename(run, moved), 0);
	assert_int_equal(symlink(victim, run), 0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "kr", 3, &p2, &e), 0);
	free(p2);
	p2 = vg_xasprintf("%s/3", moved);
	assert_int_equal(stat(p2, &st), 0);
	free(p2);
	p2 = vg_xasprintf("%s/3", victim);
	assert_int_not_equal(lstat(p2, &st), 0);
	free(p2);
	/* another run walks from the base, and refuses the link */
	assert_int_equal(vg_scratch_task_dir(f->dir, "other", 0, &p2, &e), 0);
	free(p2);
	assert_int_equal(vg_scratch_task_dir(f->dir, "kr", 4, &p2, &e),
	    VG_EDENIED);
	assert_null(p2);
	free(p0);
	free(p1);
	free(run);
	free(moved);
	free(victim);
}

/* This process's owner record in run directory rdir (caller frees). */
static char *
proc_record(const char *rdir)
{
	char host[256];

	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	return vg_xasprintf("%s/.task-%s.%ld.owner", rdir, host,
	    (long)getpid());
}

/* The run directory kept open holds one owner record of the process for
 * all its live tasks: written with the first, kept while any is live,
 * removed with the last (and the run directory with it); written again
 * when the run has live tasks again; a dead process's record alone
 * leaves the run to gc. */
static void
test_owner_record(void **state)
{
	struct fx *f = *state;
	char *rdir, *rec, *o0, *p0, *p1, *p2, host[256], *txt;
	struct vg_scratch_list l = { NULL, 0 };
	struct stat r;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	FILE *fp;

	vg_err_init(&e);
	rdir = vg_xasprintf("%s/vigil/lr", f->dir);
	rec = proc_record(rdir);
	o0 = vg_xasprintf("%s/.task-0.owner", rdir);
	assert_int_equal(vg_scratch_task_dir(f->dir, "lr", 0, &p0, &e), 0);
	assert_int_equal(stat(rec, &r), 0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "lr", 1, &p1, &e), 0);
	/* one record, no record per task */
	assert_int_not_equal(stat(o0, &r), 0);
	assert_int_equal(vg_read_file(rec, 4096, &b, &e), 0);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	txt = vg_xasprintf("%s %ld ", host, (long)getpid());
	assert_int_equal(strncmp(vg_buf_str(&b), txt, strlen(txt)), 0);
	/* the record is not taken for a task, and it makes the run live */
	assert_int_equal(vg_scratch_list(f->dir, NULL, NULL, &l, &e), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].tasks, 2);
	assert_true(l.v[0].running);
	vg_scratch_list_release(&l);

	/* it stays while a task is live, even one kept after a failure */
	assert_int_equal(vg_scratch_finish(p0, VG_KEEP_ON_FAILURE, 0, &e), 0);
	assert_int_equal(stat(rec, &r), 0);
	assert_true(vg_scratch_owner_running(f->dir, "lr", NULL));
	/* removed under us: it is not written again for the same tasks, and
	 * its removal at the end is no error */
	assert_int_equal(unlink(rec), 0);
	assert_int_equal(vg_scratch_finish(p1, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(rec, &r), 0);
	/* a new live task writes it again; with the last it goes */
	assert_int_equal(vg_scratch_task_dir(f->dir, "lr", 2, &p2, &e), 0);
	assert_int_equal(stat(rec, &r), 0);
	assert_int_equal(vg_scratch_finish(p2, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(rec, &r), 0);
	assert_false(vg_scratch_owner_running(f->dir, "lr", NULL));
	/* task 0's kept directory holds the run; without it the run goes */
	assert_int_equal(stat(rdir, &r), 0);
	free(p0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "lr", 0, &p0, &e), 0);
	assert_int_equal(vg_scratch_finish(p0, VG_KEEP_NEVER, 1, &e), 0);
	assert_int_not_equal(stat(rdir, &r), 0);
	assert_int_equal(errno, ENOENT);

	/* a dead process's leftover record: not running, gc removes it */
	free(p0);
	assert_int_equal(vg_scratch_task_dir(f->dir, "lr", 0, &p0, &e), 0);
	assert_int_equal(vg_scratch_finish(p0, VG_KEEP_ALWAYS, 1, &e), 0);
	free(rec);
	rec = vg_xasprintf("%s/.task-%s.999999999.owner", rdir, host);
	assert_non_null(fp = fopen(rec, "w"));
	fprintf(fp, "%s 999999999 1\n", host);
	fclose(fp);
	assert_int_equal(vg_scratch_owner_running(f->dir, "lr", NULL), 0);
	assert_int_equal(vg_scratch_gc(f->dir, NULL, NULL, 0, &l, &e), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].tasks, 1);
	vg_scratch_list_release(&l);
	assert_int_not_equal(stat(rdir, &r), 0);

	vg_buf_release(&b);
	free(txt);
	free(p0);
	free(p1);
	free(p2);
	free(o0);
	free(rec);
	free(rdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_base_order, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_base_skips_and_errors,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_shared, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_task_dir, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlinks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_foreign_owner_and_space,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_pool, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_finish_keep, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_run_dir_kept, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_list_gc, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_owner_record, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("scratch", tests, NULL, NULL);
}
