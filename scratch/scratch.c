/*
 * scratch.c - scratch base choice, per-task directories created without
 * following symbolic links, free-space preflight, scratch.keep, and the
 * list and gc walks behind `vigil scratch`.
 *
 * Every walk below the base goes through directory file descriptors
 * (openat/mkdirat/unlinkat with O_NOFOLLOW), never through path strings,
 * so that a component swapped for a symbolic link on a shared filesystem
 * is refused instead of followed.  Deciding whether a run is still
 * running is left to the caller's callback; the default reads the owner
 * records this file writes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/str.h"
#include "common/adopt.h"
#include "common/buf.h"
#include "common/dirpool.h"
#include "common/path.h"
#include "common/proc.h"
#include "scratch/scratch.h"

#define OWNER_PREFIX	".task-"
#define OWNER_SUFFIX	".owner"
/* Empty task directories kept for the run's next tasks (kept_run). */
#define POOL_PREFIX		".pool-"

/*
 * The run directory of the last task made, kept open: the tasks of a run
 * are made one after the other in one process, and walking from "/" with
 * O_NOFOLLOW for each costs a dozen system calls.  The descriptors were
 * opened by that walk, so using them again follows no link either: a
 * component renamed or replaced by a link since then does not redirect
 * them.  A run directory removed since (its last task finished) makes
 * mkdirat fail with ENOENT, and the walk is made again.  Per process
 * (pid), since a child must not share them by accident.
 */
static struct {
	pid_t	pid;		/* 0: empty */
	char	base[PATH_MAX];
	char	run[NAME_MAX + 1];
	int	bfd;		/* base */
	int	vfd;		/* base/vigil */
	int	rfd;		/* base/vigil/run */
	int	rec_ok;		/* this process's owner record is in run */
	int	live;		/* its task directories made, not finished */
	struct vg_dirpool pool;	/* empty task directories of run */
} kept_run = { .bfd = -1, .vfd = -1, .rfd = -1, .pool = VG_DIRPOOL_INIT };

/* Closes the kept run directory. */
static void
last_drop(void)
{
	vg_dirpool_close(&kept_run.pool);
	if (kept_run.pid == vg_self_pid()) {
		close(kept_run.bfd);
		close(kept_run.vfd);
		close(kept_run.rfd);
	}
	kept_run.pid = 0;
	kept_run.rec_ok = 0;
	kept_run.live = 0;
	kept_run.bfd = kept_run.vfd = kept_run.rfd = -1;
}

/* True when rpath is the kept run directory (base/vigil/run). */
static int
last_is(const char *rpath)
{
	size_t n = strlen(kept_run.base);

	return kept_run.pid == vg_self_pid() &&
	    strncmp(rpath, kept_run.base, n) == 0 &&
	    strncmp(rpath + n, "/vigil/", 7) == 0 &&
	    strcmp(rpath + n + 7, kept_run.run) == 0;
}

/* Formats n bytes as "1.5 GiB" into buf. */
const char *
vg_scratch_fmt_size(uint64_t n, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
	    "PiB", "EiB" };
	double v = (double)n;
	int i = 0;

	while (v >= 1024 && i < 6) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

/* True when path is an existing directory this process may write in. */
static int
usable_dir(const char *path, const char **why)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		*why = "does not exist";
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		*why = "is not a directory";
		return 0;
	}
	if (access(path, W_OK | X_OK) != 0) {
		*why = "is not writable";
		return 0;
	}
	return 1;
}

/* The user name for /scratch/$USER: $USER, else the password entry. */
static const char *
user_name(void)
{
	const char *u = getenv("USER");
	struct passwd *pw;

	if (u != NULL && *u != '\0' && strchr(u, '/') == NULL)
		return u;
	pw = getpwuid(geteuid());
	return pw != NULL ? pw->pw_name : NULL;
}

/* Resolves dir into *base_out and sets the reason; consumes nothing. */
static int
choose(const char *dir, struct vg_buf *reason, char **base_out,
    char **reason_out, struct vg_err *e)
{
	char *real;

	if ((real = realpath(dir, NULL)) == NULL)
		return vg_err_errno(e, "cannot resolve scratch base '%s'",
		    dir);
	*base_out = real;
	*reason_out = vg_buf_detach(reason);
	return 0;
}

/*
 * The user's own scratch directory in dir (what names it in messages):
 * dir itself when it is the user's own and no one else can write it;
 * else dir/USER when dir is a base shared by users (root's or the
 * user's, sticky when others may write it: common/adopt.h), made when
 * missing; and when another user took dir/USER first, a fresh
 * dir/USER.XXXXXX, told in note, so that no one can lock another out.
 * create: dir may be made, as the user's own (mode 0700).
 * Returns 0 with *out set (caller frees), or a negative rc with e
 * saying why dir cannot be used.
 */
static int
user_dir(const char *dir, const char *what, int create, struct vg_buf *note,
    char **out, struct vg_err *e)
{
	const char *user = user_name();
	struct vg_err mine;
	char *sub;
	int fd;

	*out = NULL;
	vg_err_init(&mine);
	if ((fd = vg_adopt_dir(dir, 0700, create ? VG_ADOPT_CREATE : 0, what,
	    &mine)) >= 0) {
		close(fd);
		*out = vg_xstrdup(dir);
		return 0;
	}
	if ((fd = vg_adopt_dir(dir, 01777, VG_ADOPT_SHARED, what, e)) < 0)
		return fd;
	close(fd);
	if (user == NULL)
		return vg_err_set(e, VG_EINVAL, "%s '%s' is shared and this "
		    "user has no name for a directory of its own in it", what,
		    dir);
	sub = vg_xasprintf("%s/%s", dir, user);
	vg_err_init(&mine);
	if ((fd = vg_adopt_dir(sub, 0700, VG_ADOPT_CREATE, what, &mine))
	    >= 0) {
		close(fd);
		*out = sub;
		return 0;
	}
	vg_buf_printf(note, "; %s (a private directory beside it is used "
	    "instead)", mine.msg);
	free(sub);
	sub = vg_xasprintf("%s/%s.XXXXXX", dir, user);
	if (mkdtemp(sub) == NULL) {
		fd = vg_err_errno(e, "%s: cannot make '%s'", what, sub);
		free(sub);
		return fd;
	}
	if ((fd = vg_adopt_dir(sub, 0700, 0, what, e)) < 0) {
		free(sub);
		return fd;
	}
	close(fd);
	*out = sub;
	return 0;
}

/* An explicit choice (scratch.path, $VIGIL_SCRATCH): the user's own
 * directory there (user_dir), made as needed, or fail. */
static int
choose_explicit(const char *dir, const char *what, struct vg_buf *reason,
    char **base_out, char **reason_out, struct vg_err *e)
{
	struct stat st;
	char *mine;
	int rc;

	if (*dir != '/')
		return vg_err_set(e, VG_EINVAL, "%s '%s' is not an absolute "
		    "path", what, dir);
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return vg_err_set(e, VG_EINVAL, "%s '%s' is not a directory",
		    what, dir);
	vg_buf_printf(reason, "%s", what);
	if ((rc = user_dir(dir, what, 1, reason, &mine, e)) != 0)
		return rc;
	rc = choose(mine, reason, base_out, reason_out, e);
	free(mine);
	return rc;
}

int
vg_scratch_base_in(const struct vg_scratch_conf *conf, const char *state_dir,
    const char *site_root, char **base_out, char **reason_out,
    struct vg_err *e)
{
	static const char *const ambient[] = { "SCRATCH", "SLURM_TMPDIR",
	    "TMPDIR" };
	struct vg_buf reason = VG_BUF_INIT, skipped = VG_BUF_INIT;
	const char *v, *why, *user;
	struct vg_err refused;
	char *site = NULL, *mine = NULL;
	size_t i;
	int rc;

	*base_out = NULL;
	*reason_out = NULL;
	/* An explicit choice is used or fails, but for one another user
	 * owns (a base she made first): that is told and passed over, so
	 * that no one can lock another out. */
	if (conf != NULL && conf->path != NULL && *conf->path != '\0') {
		rc = choose_explicit(conf->path, "scratch.path", &reason,
		    base_out, reason_out, e);
		if (rc != VG_EDENIED)
			goto out;
		vg_buf_printf(&skipped, "; %s", e->msg);
		vg_buf_reset(&reason);
		vg_err_init(e);
	}
	if ((v = getenv("VIGIL_SCRATCH")) != NULL && *v != '\0') {
		rc = choose_explicit(v, "$VIGIL_SCRATCH", &reason, base_out,
		    reason_out, e);
		if (rc != VG_EDENIED)
			goto out;
		vg_buf_printf(&skipped, "; %s", e->msg);
		vg_buf_reset(&reason);
		vg_err_init(e);
	}
	if (site_root != NULL && (user = user_name()) != NULL) {
		site = vg_xasprintf("%s/%s", site_root, user);
		if (!usable_dir(site, &why)) {
			if (strcmp(why, "does not exist") != 0)
				vg_buf_printf(&skipped, "; %s %s", site, why);
		} else if (vg_err_init(&refused), (rc = vg_adopt_dir(site,
		    0700, 0, "scratch", &refused)) < 0) {
			vg_buf_printf(&skipped, "; %s", refused.msg);
		} else {
			close(rc);
			vg_buf_printf(&reason, "%s is writable", site);
			rc = choose(site, &reason, base_out, reason_out, e);
			goto out;
		}
	}
	for (i = 0; i < sizeof(ambient) / sizeof(*ambient); i++) {
		if ((v = getenv(ambient[i])) == NULL || *v == '\0')
			continue;
		if (*v != '/') {
			vg_buf_printf(&skipped, "; $%s '%s' is not absolute",
			    ambient[i], v);
			continue;
		}
		if (!usable_dir(v, &why)) {
			vg_buf_printf(&skipped, "; $%s '%s' %s", ambient[i],
			    v, why);
			continue;
		}
		vg_err_init(&refused);
		vg_buf_printf(&reason, "$%s", ambient[i]);
		if (user_dir(v, ambient[i], 0, &reason, &mine, &refused)
		    != 0) {
			vg_buf_reset(&reason);
			vg_buf_printf(&skipped, "; %s", refused.msg);
			continue;
		}
		vg_buf_adds(&reason, vg_buf_str(&skipped));
		rc = choose(mine, &reason, base_out, reason_out, e);
		goto out;
	}
	if (state_dir == NULL || *state_dir == '\0') {
		rc = vg_err_set(e, VG_ENOENT, "no scratch directory: set "
		    "scratch.path or $VIGIL_SCRATCH%s", vg_buf_str(&skipped));
		goto out;
	}
	if ((rc = vg_adopt_dir(state_dir, 0700, VG_ADOPT_CREATE,
	    "the state directory", e)) < 0)
		goto out;
	close(rc);
	vg_buf_printf(&reason, "no scratch filesystem found (set "
	    "scratch.path or $VIGIL_SCRATCH); using the state directory%s",
	    vg_buf_str(&skipped));
	rc = choose(state_dir, &reason, base_out, reason_out, e);
out:
	vg_buf_release(&reason);
	vg_buf_release(&skipped);
	free(site);
	free(mine);
	return rc;
}

int
vg_scratch_base(const struct vg_scratch_conf *conf, const char *state_dir,
    char **base_out, char **reason_out, struct vg_err *e)
{
	return vg_scratch_base_in(conf, state_dir, VG_SCRATCH_SITE_ROOT,
	    base_out, reason_out, e);
}

/* Explains why openat of name (shown as shown) under dfd failed. */
static int
open_error(int dfd, const char *name, const char *shown, struct vg_err *e)
{
	struct stat st;
	int saved = errno;

	if ((saved == ELOOP || saved == ENOTDIR) &&
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return vg_err_set(e, VG_EDENIED, "'%s' is a symbolic link; "
		    "scratch directories are never created through one",
		    shown);
	errno = saved;
	if (saved == ENOENT)
		return vg_err_set(e, VG_ENOENT, "'%s' does not exist", shown);
	return vg_err_errno(e, "cannot open directory '%s'", shown);
}

/* Opens the directory name under dfd without following a symlink. */
static int
open_dir_at(int dfd, const char *name, const char *shown, struct vg_err *e)
{
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0) {
		open_error(dfd, name, shown, e);
		return -1;
	}
	return fd;
}

/*
 * Opens the absolute path one component at a time from "/", refusing
 * symbolic links; returns a directory fd or -1 with e set.
 */
static int
open_path_nofollow(const char *path, struct vg_err *e)
{
	struct vg_buf shown = VG_BUF_INIT;
	char *copy, *comp, *save = NULL;
	int fd, nfd;

	if (path[0] != '/') {
		vg_err_set(e, VG_EINVAL, "'%s' is not an absolute path", path);
		return -1;
	}
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		vg_err_errno(e, "cannot open '/'");
		return -1;
	}
	copy = vg_xstrdup(path);
	for (comp = strtok_r(copy, "/", &save); comp != NULL;
	    comp = strtok_r(NULL, "/", &save)) {
		vg_buf_addc(&shown, '/');
		vg_buf_adds(&shown, comp);
		if (strcmp(comp, "..") == 0) {
			vg_err_set(e, VG_EINVAL, "'%s' contains '..'", path);
			close(fd);
			fd = -1;
			break;
		}
		nfd = open_dir_at(fd, comp, vg_buf_str(&shown), e);
		close(fd);
		if ((fd = nfd) < 0)
			break;
	}
	free(copy);
	vg_buf_release(&shown);
	return fd;
}

/*
 * Makes (or reuses) the directory name under dfd, mode 0700, refusing a
 * symbolic link and a directory owned by someone else.  Returns its fd.
 */
static int
make_dir_at(int dfd, const char *name, const char *shown,
    struct vg_dirpool *pool, struct vg_err *e)
{
	struct stat st;
	int fd, made;

	made = (pool != NULL ? vg_dirpool_mkdirat(pool, dfd, name) :
	    mkdirat(dfd, name, 0700)) == 0;
	if (!made && errno != EEXIST) {
		vg_err_errno(e, "cannot create directory '%s'", shown);
		return -1;
	}
	if ((fd = open_dir_at(dfd, name, shown, e)) < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		vg_err_errno(e, "cannot stat '%s'", shown);
		close(fd);
		return -1;
	}
	if (st.st_uid != vg_self_euid()) {
		vg_err_set(e, VG_EDENIED, "'%s' is owned by uid %u, not by "
		    "you (uid %u); refusing to use it", shown,
		    (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	/* mkdirat is subject to the umask, and a reused dir may be wider. */
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
		vg_err_errno(e, "cannot set mode 0700 on '%s'", shown);
		close(fd);
		return -1;
	}
	return fd;
}

/* This process's owner record: its text, "host pid start\n", and its
 * name in a run directory where it stands for all the process's tasks
 * there: OWNER_PREFIX "<host>.<pid>" OWNER_SUFFIX, which no task index
 * makes.  Made once per process (a fork makes its own). */
static struct {
	pid_t	pid;
	char	text[320];
	char	name[320];
	char	pool[320];
} self_rec;

/* Fills self_rec for this process if it is another's. */
static void
self_record(void)
{
	char host[256];
	unsigned long long start;

	if (self_rec.pid == vg_self_pid())
		return;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	if (vg_proc_starttime(vg_self_pid(), &start) != 0)
		start = 0;
	snprintf(self_rec.text, sizeof(self_rec.text), "%s %ld %llu\n", host,
	    (long)vg_self_pid(), start);
	snprintf(self_rec.name, sizeof(self_rec.name), OWNER_PREFIX
	    "%s.%ld" OWNER_SUFFIX, host, (long)vg_self_pid());
	snprintf(self_rec.pool, sizeof(self_rec.pool), POOL_PREFIX "%s.",
	    host);
	self_rec.pid = vg_self_pid();
}

/* The owner record text of this process. */
static const char *
owner_text(void)
{
	self_record();
	return self_rec.text;
}

/* The prefix of this host's pooled task directories in a run
 * directory (common/dirpool.h): hidden, as no reader takes them for a
 * task, and by host, as only this host can tell its dead processes. */
static const char *
pool_prefix(void)
{
	self_record();
	return self_rec.pool;
}

/* The name of this process's owner record in a run directory. */
static const char *
proc_owner_name(void)
{
	self_record();
	return self_rec.name;
}

/* Writes text to a new file name under runfd (replacing a stale one by
 * unlinking it first, never by writing into it). */
static int
write_new(int runfd, const char *name, const char *text, const char *shown,
    struct vg_err *e)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd;

	if (unlinkat(runfd, name, 0) != 0 && errno != ENOENT)
		return vg_err_errno(e, "cannot remove '%s/%s'", shown, name);
	fd = openat(runfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return vg_err_errno(e, "cannot write '%s/%s'", shown, name);
	n = write(fd, text, len);
	if (n != (ssize_t)len || close(fd) != 0) {
		if (n >= 0 && n != (ssize_t)len)
			errno = ENOSPC;
		vg_err_errno(e, "cannot write '%s/%s'", shown, name);
		if (n != (ssize_t)len)
			close(fd);
		unlinkat(runfd, name, 0);
		return e != NULL ? e->rc : VG_EIO;
	}
	return 0;
}

/* Writes an owner record, name, under runfd: into a temporary file
 * renamed over name, so that a reader never sees half a record. */
static int
write_owner(int runfd, const char *name, const char *shown,
    struct vg_err *e)
{
	char tmp[400];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.%ld", name, (long)vg_self_pid());
	if ((rc = write_new(runfd, tmp, owner_text(), shown, e)) != 0)
		return rc;
	if (renameat(runfd, tmp, runfd, name) != 0) {
		rc = vg_err_errno(e, "cannot rename '%s/%s'", shown, tmp);
		unlinkat(runfd, tmp, 0);
	}
	return rc;
}

/* The name of the own owner record of task idx (its directory's name). */
static const char *
task_owner_name(const char *idx, char *buf, size_t len)
{
	snprintf(buf, len, OWNER_PREFIX "%s" OWNER_SUFFIX, idx);
	return buf;
}

/* The free-space check on an open directory (fd >= 0) or on dir. */
static int
preflight(int fd, const char *dir, uint64_t min_free, struct vg_err *e)
{
	char have[32], need[32];
	struct statvfs sv;
	uint64_t avail;

	if ((fd >= 0 ? fstatvfs(fd, &sv) : statvfs(dir, &sv)) != 0)
		return vg_err_errno(e, "cannot check free space of '%s'", dir);
	avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	if (avail < min_free)
		return vg_err_set(e, VG_ELIMIT, "scratch '%s' has %s free, "
		    "less than scratch.min_free %s (free some space, lower "
		    "scratch.min_free, or choose another scratch.path)", dir,
		    vg_scratch_fmt_size(avail, have, sizeof(have)),
		    vg_scratch_fmt_size(min_free, need, sizeof(need)));
	return 0;
}

int
vg_scratch_preflight(const char *dir, uint64_t min_free, struct vg_err *e)
{
	return preflight(-1, dir, min_free, e);
}

/* True when s is usable as one path component. */
static int
valid_component(const char *s)
{
	return s != NULL && *s != '\0' && strchr(s, '/') == NULL &&
	    strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && s[0] != '.';
}

/* One attempt at the mkdirat chain below base; see vg_scratch_task_dir. */
static int
task_dir_once(const char *base, const char *run_id, int task_index,
    uint64_t min_free, char **path_out, struct vg_err *e)
{
	char *vpath, *rpath, *tpath, idx[16], owner[64];
	int bfd = -1, vfd = -1, rfd = -1, tfd = -1, rc = 0, kept, keepable;

	snprintf(idx, sizeof(idx), "%d", task_index);
	vpath = vg_path_join(base, "vigil");
	rpath = vg_path_join(vpath, run_id);
	tpath = vg_path_join(rpath, idx);
	kept = kept_run.pid == vg_self_pid() &&
	    strcmp(kept_run.base, base) == 0 &&
	    strcmp(kept_run.run, run_id) == 0;
	if (kept) {
		bfd = kept_run.bfd;
		rfd = kept_run.rfd;
	} else {
		last_drop();
		if ((bfd = open_path_nofollow(base, e)) < 0) {
			rc = e != NULL ? e->rc : VG_EIO;
			goto out;
		}
	}
	if ((rc = preflight(bfd, base, min_free, e)) != 0)
		goto out;
	if (!kept && ((vfd = make_dir_at(bfd, "vigil", vpath, NULL, e)) < 0 ||
	    (rfd = make_dir_at(vfd, run_id, rpath, NULL, e)) < 0)) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto out;
	}
	/* The pool went with the run's last live task; the run directory
	 * stayed (something is left in it), so it comes back. */
	if (kept && kept_run.pool.fd < 0)
		(void)vg_dirpool_open(&kept_run.pool, rfd, pool_prefix());
	if ((tfd = make_dir_at(rfd, idx, tpath, kept ? &kept_run.pool : NULL,
	    e)) < 0) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto out;
	}
	/* Where the run directory is kept, one record of the process's
	 * stands for all its live tasks there (written with the first,
	 * removed with the last); elsewhere each task has one of its own. */
	keepable = kept || (strlen(base) < sizeof(kept_run.base) &&
	    strlen(run_id) < sizeof(kept_run.run));
	if (!keepable)
		rc = write_owner(rfd, task_owner_name(idx, owner,
		    sizeof(owner)), rpath, e);
	else if (!kept || !kept_run.rec_ok)
		rc = write_owner(rfd, proc_owner_name(), rpath, e);
	if (rc != 0)
		goto out;
	if (!keepable)
		;
	else if (!kept) {
		kept_run.pid = vg_self_pid();
		vg_strlcpy(kept_run.base, base, sizeof(kept_run.base));
		vg_strlcpy(kept_run.run, run_id, sizeof(kept_run.run));
		kept_run.bfd = bfd;
		kept_run.vfd = vfd;
		kept_run.rfd = rfd;
		kept_run.live = 0;
		(void)vg_dirpool_open(&kept_run.pool, rfd, pool_prefix());
		bfd = vfd = rfd = -1;
		kept = 1;
	}
	if (kept) {
		kept_run.rec_ok = 1;
		kept_run.live++;
	}
	*path_out = tpath;
	tpath = NULL;
out:
	if (tfd >= 0)
		close(tfd);
	if (kept) {
		/* gone since (ENOENT): walk again next time */
		if (rc != 0)
			last_drop();
	} else {
		if (rfd >= 0)
			close(rfd);
		if (vfd >= 0)
			close(vfd);
		if (bfd >= 0)
			close(bfd);
	}
	free(vpath);
	free(rpath);
	free(tpath);
	return rc;
}

int
vg_scratch_task_dir_min(const char *base, const char *run_id, int task_index,
    uint64_t min_free, char **path_out, struct vg_err *e)
{
	int rc, tries;

	*path_out = NULL;
	if (!valid_component(run_id))
		return vg_err_set(e, VG_EINVAL, "run id '%s' is not a single "
		    "path component", run_id != NULL ? run_id : "");
	if (task_index < 0)
		return vg_err_set(e, VG_EINVAL, "task index %d is negative",
		    task_index);
	if (min_free == 0)
		min_free = VG_SCRATCH_MIN_FREE_DEFAULT;
	/* A finishing task of the same run removes the run directory
	 * once it is empty; if that races with us, create it again. */
	for (tries = 0; ; tries++) {
		rc = task_dir_once(base, run_id, task_index, min_free,
		    path_out, e);
		if (rc != VG_ENOENT && !(rc == VG_EIO && errno == ENOENT))
			break;
		if (tries == 3)
			break;
	}
	return rc;
}

int
vg_scratch_task_dir(const char *base, const char *run_id, int task_index,
    char **path_out, struct vg_err *e)
{
	return vg_scratch_task_dir_min(base, run_id, task_index, 0, path_out,
	    e);
}

static int rm_at(int dfd, const char *name, const char *shown,
    struct vg_err *e);

/* Removes everything below directory name under dfd (st its status),
 * never following a symbolic link; the directory stays. */
static int
rm_below(int dfd, const char *name, const struct stat *st,
    const char *shown, struct vg_err *e)
{
	struct dirent *d;
	DIR *dir;
	char *sub;
	int fd, rc = 0;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	/* A task may leave a directory without read or search permission. */
	if (fd < 0 && errno == EACCES && st->st_uid == vg_self_euid() &&
	    fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return vg_err_errno(e, "cannot open '%s'", shown);
	/* Most often the task left nothing: no stream to set up. */
	if (vg_dir_empty(fd) == 1) {
		close(fd);
		return 0;
	}
	(void)lseek(fd, 0, SEEK_SET);
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return vg_err_errno(e, "cannot read '%s'", shown);
	}
	while (rc == 0 && (errno = 0, d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		sub = vg_path_join(shown, d->d_name);
		rc = rm_at(dirfd(dir), d->d_name, sub, e);
		free(sub);
	}
	closedir(dir);
	return rc;
}

/* Removes name under dfd and everything below it, never following a
 * symbolic link; shown is its path for messages.  With pool, an ended
 * task's directory is emptied and kept there instead (dirpool.h). */
static int
rm_at_pool(int dfd, const char *name, const char *shown,
    struct vg_dirpool *pool, struct vg_err *e)
{
	struct stat st;
	int rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 :
		    vg_err_errno(e, "cannot stat '%s'", shown);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
			return vg_err_errno(e, "cannot remove '%s'", shown);
		return 0;
	}
	if ((rc = rm_below(dfd, name, &st, shown, e)) != 0)
		return rc;
	/* Emptied just now: a directory of ours with mode 0700 is kept
	 * as it is, without reading it again. */
	if (pool != NULL && st.st_uid == vg_self_euid() &&
	    (st.st_mode & 07777) == 0700 &&
	    vg_dirpool_put(pool, dfd, name) == 0)
		return 0;
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		return vg_err_errno(e, "cannot remove '%s'", shown);
	return 0;
}

static int
rm_at(int dfd, const char *name, const char *shown, struct vg_err *e)
{
	return rm_at_pool(dfd, name, shown, NULL, e);
}

/* Sums the allocated bytes of name under dfd; counts task dirs at depth 1
 * when tasks is not NULL, and the newest of their mtimes. */
static void
du_at(int dfd, const char *name, int depth, uint64_t *bytes, size_t *tasks,
    double *mtime)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	*bytes += (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode))
		return;
	if (depth == 1 && name[0] != '.') {
		if (tasks != NULL)
			(*tasks)++;
		if (mtime != NULL && (double)st.st_mtim.tv_sec > *mtime)
			*mtime = (double)st.st_mtim.tv_sec;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		du_at(dirfd(dir), d->d_name, depth + 1, bytes, tasks, mtime);
	}
	closedir(dir);
}

/* Splits an absolute path into a newly allocated parent and its last
 * component (borrowed from the path). */
static char *
split_path(const char *path, const char **last)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL || slash[1] == '\0')
		return NULL;
	*last = slash + 1;
	if (slash == path)
		return vg_xstrdup("/");
	return vg_xstrndup(path, (size_t)(slash - path));
}

/* Removes owner record name under runfd (run directory rpath); a failure
 * other than its absence becomes *rc unless that holds one already. */
static void
drop_owner(int runfd, const char *name, const char *rpath, int *rc,
    struct vg_err *e)
{
	if (unlinkat(runfd, name, 0) != 0 && errno != ENOENT && *rc == 0)
		*rc = vg_err_errno(e, "cannot remove '%s/%s'", rpath, name);
}

int
vg_scratch_finish(const char *path, enum vg_keep keep, int task_succeeded,
    struct vg_err *e)
{
	const char *task, *run;
	char *rpath, *vpath = NULL, owner[64];
	int rfd, vfd, rc = 0, remove, kept;

	if (path == NULL || (rpath = split_path(path, &task)) == NULL)
		return vg_err_set(e, VG_EINVAL, "'%s' is not a task scratch "
		    "directory", path != NULL ? path : "");
	kept = last_is(rpath);
	if (kept)
		rfd = kept_run.rfd;
	else if ((rfd = open_path_nofollow(rpath, e)) < 0) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto out;
	}
	remove = keep == VG_KEEP_NEVER ||
	    (keep == VG_KEEP_ON_FAILURE && task_succeeded);
	if (kept && kept_run.live > 0)
		kept_run.live--;
	/* While other tasks of the run are live here, an empty directory
	 * is kept for the next; with the last the pool goes too, so the
	 * run directory can. */
	if (remove)
		rc = rm_at_pool(rfd, task, path, kept && kept_run.live > 0 ?
		    &kept_run.pool : NULL, e);
	if (!kept) {
		drop_owner(rfd, task_owner_name(task, owner, sizeof(owner)),
		    rpath, &rc, e);
		close(rfd);
	} else if (kept_run.live == 0) {
		/* The process's last live task here: its record goes. */
		vg_dirpool_close(&kept_run.pool);
		if (kept_run.rec_ok)
			drop_owner(rfd, proc_owner_name(), rpath, &rc, e);
		kept_run.rec_ok = 0;
	} else
		goto out;	/* other tasks live: the run stays */
	/* The run directory goes once its last task is gone; rmdir(2)
	 * leaves it alone while anything remains. */
	if (rc == 0 && (vpath = split_path(rpath, &run)) != NULL) {
		if (kept)
			(void)unlinkat(kept_run.vfd, run, AT_REMOVEDIR);
		else if ((vfd = open_path_nofollow(vpath, NULL)) >= 0) {
			(void)unlinkat(vfd, run, AT_REMOVEDIR);
			close(vfd);
		}
	}
out:
	free(rpath);
	free(vpath);
	return rc;
}

/* Parses one owner record; returns 1 when it names a live owner. */
static int
owner_live(const char *rec, const char *self_host, char *who, size_t len)
{
	char host[256];
	unsigned long long start;
	long pid;

	if (sscanf(rec, "%255s %ld %llu", host, &pid, &start) != 3 ||
	    pid <= 0) {
		snprintf(who, len, "unreadable owner record");
		return 1;
	}
	snprintf(who, len, "%s pid %ld", host, pid);
	if (strcmp(host, self_host) != 0)
		return 1;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 0;
	/* A recycled pid has another start time. */
	return start == 0 || vg_proc_alive((pid_t)pid, start);
}

/* Like vg_scratch_owner_running; also returns the live owner in who. */
static int
owner_running(const char *base, const char *run_id, char *who, size_t len)
{
	char host[256], buf[512], *rpath;
	struct dirent *d;
	size_t nlen;
	ssize_t n;
	DIR *dir;
	int rfd, fd, live = 0;

	who[0] = '\0';
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	rpath = vg_xasprintf("%s/vigil/%s", base, run_id);
	rfd = open_path_nofollow(rpath, NULL);
	free(rpath);
	if (rfd < 0)
		return 0;
	if ((dir = fdopendir(rfd)) == NULL) {
		close(rfd);
		return 1;
	}
	while (!live && (d = readdir(dir)) != NULL) {
		nlen = strlen(d->d_name);
		if (strncmp(d->d_name, OWNER_PREFIX, strlen(OWNER_PREFIX)) ||
		    nlen < strlen(OWNER_SUFFIX) || strcmp(d->d_name + nlen -
		    strlen(OWNER_SUFFIX), OWNER_SUFFIX) != 0)
			continue;
		fd = openat(dirfd(dir), d->d_name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		live = owner_live(buf, host, who, len);
	}
	closedir(dir);
	return live;
}

int
vg_scratch_owner_running(const char *base, const char *run_id, void *arg)
{
	char who[320];

	(void)arg;
	return owner_running(base, run_id, who, sizeof(who));
}

/* Orders runs by id. */
static int
run_cmp(const void *a, const void *b)
{
	const struct vg_scratch_run *x = a, *y = b;

	return strcmp(x->run_id, y->run_id);
}

void
vg_scratch_list_release(struct vg_scratch_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].run_id);
		free(l->v[i].path);
		free(l->v[i].owner);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Walks <base>/vigil, optionally removing finished runs; see the header. */
static int
scratch_walk(const char *base, vg_scratch_running_fn running, void *arg,
    int gc, int dry_run, struct vg_scratch_list *out, struct vg_err *e)
{
	struct vg_scratch_run r;
	struct vg_err local;
	struct dirent *d;
	size_t cap = 0;
	char *vpath, who[320];
	DIR *dir;
	int vfd, rc = 0;

	out->v = NULL;
	out->n = 0;
	vpath = vg_path_join(base, "vigil");
	vg_err_init(&local);
	if ((vfd = open_path_nofollow(vpath, &local)) < 0) {
		if (local.rc == VG_ENOENT)
			rc = 0;
		else
			rc = vg_err_set(e, local.rc, "%s", local.msg);
		free(vpath);
		return rc;
	}
	if ((dir = fdopendir(vfd)) == NULL) {
		rc = vg_err_errno(e, "cannot read '%s'", vpath);
		close(vfd);
		free(vpath);
		return rc;
	}
	while (rc == 0 && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		memset(&r, 0, sizeof(r));
		if (running == NULL) {
			r.running = owner_running(base, d->d_name, who,
			    sizeof(who));
			if (r.running && who[0] != '\0')
				r.owner = vg_xstrdup(who);
		} else {
			r.running = running(base, d->d_name, arg) != 0;
		}
		if (gc && r.running) {
			free(r.owner);
			continue;
		}
		r.run_id = vg_xstrdup(d->d_name);
		r.path = vg_path_join(vpath, d->d_name);
		du_at(dirfd(dir), d->d_name, 0, &r.bytes, &r.tasks, &r.mtime);
		if (gc && !dry_run)
			rc = rm_at(dirfd(dir), d->d_name, r.path, e);
		if (rc != 0) {
			free(r.run_id);
			free(r.path);
			free(r.owner);
			break;
		}
		out->v = vg_xgrow(out->v, &cap, out->n + 1, sizeof(*out->v));
		out->v[out->n++] = r;
	}
	closedir(dir);
	free(vpath);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), run_cmp);
	return rc;
}

int
vg_scratch_list(const char *base, vg_scratch_running_fn running, void *arg,
    struct vg_scratch_list *out, struct vg_err *e)
{
	return scratch_walk(base, running, arg, 0, 0, out, e);
}

int
vg_scratch_gc(const char *base, vg_scratch_running_fn running, void *arg,
    int dry_run, struct vg_scratch_list *freed, struct vg_err *e)
{
	return scratch_walk(base, running, arg, 1, dry_run, freed, e);
}
