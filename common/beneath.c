/*
 * beneath.c - opens, makes and replaces files under a directory a task
 * can write, relative to a directory descriptor and never through a
 * link (beneath.h says why).  openat2(2) does the walk in the kernel
 * (Linux 5.6+); elsewhere each component is opened in turn with
 * O_NOFOLLOW from the descriptor of the one before.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"

#ifndef SYS_openat2
#define SYS_openat2	437
#endif
/* include/uapi/linux/openat2.h */
struct vg_open_how {
	unsigned long long	flags;
	unsigned long long	mode;
	unsigned long long	resolve;
};
#define VG_RESOLVE_NO_MAGICLINKS	0x02
#define VG_RESOLVE_NO_SYMLINKS		0x04
#define VG_RESOLVE_BENEATH		0x08

static int force_walk;

void
vg_beneath_force_walk(int on)
{
	force_walk = on;
}

/* 0 when rel is relative with no ".." component; EXDEV otherwise. */
static int
rel_ok(const char *rel)
{
	const char *p = rel;
	size_t n;

	if (rel == NULL || rel[0] == '\0' || rel[0] == '/')
		return EXDEV;
	while (*p != '\0') {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return EXDEV;
		p += n;
		while (*p == '/')
			p++;
	}
	return 0;
}

/* The component walk: every directory with O_NOFOLLOW from the one
 * before it, the last with flags | O_NOFOLLOW. */
static int
walk_open(int dirfd, const char *rel, int flags, mode_t mode)
{
	char comp[NAME_MAX + 1];
	const char *p = rel, *next;
	struct stat st;
	size_t n;
	int cur = dirfd, fd, err;

	for (;;) {
		n = strcspn(p, "/");
		next = p + n;
		while (*next == '/')
			next++;
		if (n > NAME_MAX) {
			err = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (*next == '\0') {
			fd = openat(cur, n == 0 ? "." : comp, flags, mode);
			err = errno;
			if (cur != dirfd)
				close(cur);
			errno = err;
			return fd;
		}
		if (n == 0 || strcmp(comp, ".") == 0) {
			p = next;
			continue;
		}
		fd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			/* O_PATH | O_NOFOLLOW of a link to a directory says
			 * ENOTDIR: say what it is. */
			if (err == ENOTDIR && fstatat(cur, comp, &st,
			    AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				err = ELOOP;
			goto fail;
		}
		if (cur != dirfd)
			close(cur);
		cur = fd;
		p = next;
	}
fail:
	if (cur != dirfd)
		close(cur);
	errno = err;
	return -1;
}

int
vg_beneath_open(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct vg_open_how how;
	int err, fd;

	if ((err = rel_ok(rel)) != 0) {
		errno = err;
		return -1;
	}
	flags |= O_CLOEXEC | O_NOFOLLOW;
	if (!force_walk) {
		memset(&how, 0, sizeof(how));
		how.flags = (unsigned long long)(unsigned)flags;
		how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
		how.resolve = VG_RESOLVE_BENEATH | VG_RESOLVE_NO_SYMLINKS |
		    VG_RESOLVE_NO_MAGICLINKS;
		do
			fd = (int)syscall(SYS_openat2, dirfd, rel, &how,
			    sizeof(how));
		while (fd < 0 && errno == EAGAIN);
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return fd;
		/* ENOSYS: before Linux 5.6; EPERM: a seccomp filter
		 * that does not know the call. */
	}
	return walk_open(dirfd, rel, flags, mode);
}

/* Fills e for a failed open of rel beneath what. */
static int
open_failed(const char *what, const char *rel, int err, struct vg_err *e)
{
	if (err == ELOOP)
		return vg_err_set(e, VG_EDENIED, "'%s' in %s is a symbolic "
		    "link or has one on its way; vigil never follows one "
		    "there", rel, what);
	if (err == EXDEV)
		return vg_err_set(e, VG_EDENIED, "'%s' leaves %s; vigil "
		    "acts only beneath it", rel, what);
	if (err == ENOENT)
		return vg_err_set(e, VG_ENOENT, "cannot open '%s' in %s: %s",
		    rel, what, strerror(err));
	if (err == ENXIO)
		return vg_err_set(e, VG_EDENIED, "'%s' in %s is not a "
		    "regular file (a FIFO or a socket); refusing it", rel,
		    what);
	errno = err;
	return vg_err_errno(e, "cannot open '%s' in %s", rel, what);
}

int
vg_beneath_own(int fd, const char *what, struct vg_err *e)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "cannot stat %s", what);
	if (!S_ISREG(st.st_mode))
		return vg_err_set(e, VG_EDENIED, "%s is not a regular file; "
		    "refusing it", what);
	if (st.st_nlink > 1)
		return vg_err_set(e, VG_EDENIED, "%s has %lu hard links; "
		    "vigil writes and reads only files of its own there",
		    what, (unsigned long)st.st_nlink);
	if (st.st_uid != vg_self_euid())
		return vg_err_set(e, VG_EDENIED, "%s is owned by uid %lu, not "
		    "by vigil's user (uid %lu); refusing it", what,
		    (unsigned long)st.st_uid, (unsigned long)vg_self_euid());
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		return vg_err_errno(e, "cannot use %s", what);
	return 0;
}

int
vg_beneath_file(int dirfd, const char *rel, int flags, mode_t mode,
    const char *what, struct vg_err *e)
{
	char name[PATH_MAX + 64];
	int fd, rc;

	/* Never truncate before the checks: the file could be another
	 * file's hard link. */
	fd = vg_beneath_open(dirfd, rel, (flags & ~O_TRUNC) | O_NONBLOCK |
	    O_NOCTTY, mode);
	if (fd < 0)
		return open_failed(what, rel, errno, e);
	snprintf(name, sizeof(name), "'%s' in %s", rel, what);
	if ((rc = vg_beneath_own(fd, name, e)) == 0 && (flags & O_TRUNC) &&
	    ftruncate(fd, 0) != 0)
		rc = vg_err_errno(e, "cannot truncate %s", name);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int
vg_beneath_mkdirs(int dirfd, const char *rel, mode_t mode, const char *what,
    struct vg_err *e)
{
	char comp[NAME_MAX + 1];
	const char *p = rel;
	size_t n;
	int cur, fd, err;

	if ((err = rel_ok(rel)) != 0)
		return open_failed(what, rel, err, e);
	if ((cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return vg_err_errno(e, "cannot open %s", what);
	while (*p != '\0') {
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			close(cur);
			return open_failed(what, rel, ENAMETOOLONG, e);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		if (n == 0 || strcmp(comp, ".") == 0)
			continue;
		if (mkdirat(cur, comp, mode) != 0 && errno != EEXIST) {
			err = errno;
			close(cur);
			errno = err;
			return vg_err_errno(e, "cannot make '%s' in %s", rel,
			    what);
		}
		fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		err = errno;
		close(cur);
		if (fd < 0)
			return open_failed(what, rel, err == ENOTDIR ? ELOOP :
			    err, e);
		cur = fd;
	}
	return cur;
}

int
vg_beneath_replace(int dirfd, const char *name, const void *data,
    size_t len, mode_t mode, const char *what, struct vg_err *e)
{
	char tmp[NAME_MAX + 1];
	int fd, rc = 0;

	if (strchr(name, '/') != NULL || rel_ok(name) != 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), ".%s.vigil-tmp.%ld", name,
	    (long)vg_self_pid()) >= sizeof(tmp))
		return vg_err_set(e, VG_EINVAL, "'%s' is not a file name "
		    "in %s", name, what);
	/* Whatever stands at the temporary name (a task could plant a
	 * link or a FIFO there) is removed, never opened. */
	(void)unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode);
	if (fd < 0)
		return vg_err_errno(e, "cannot create '%s' in %s", tmp, what);
	if (vg_write_all(fd, data, len) != 0)
		rc = vg_err_errno(e, "cannot write '%s' in %s", tmp, what);
	if (close(fd) != 0 && rc == 0)
		rc = vg_err_errno(e, "cannot write '%s' in %s", tmp, what);
	/* rename(2) replaces a link at name; it never follows it. */
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
		rc = vg_err_errno(e, "cannot rename '%s' to '%s' in %s", tmp,
		    name, what);
	if (rc != 0)
		(void)unlinkat(dirfd, tmp, 0);
	return rc;
}

int
vg_beneath_anchor(const char *path, struct vg_err *e)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return vg_err_set(e, VG_EDENIED, "'%s' is not a "
			    "directory (a symbolic link?); vigil never "
			    "follows one there", path);
		if (errno == ENOENT)
			return vg_err_set(e, VG_ENOENT, "cannot open directory "
			    "'%s': %s", path, strerror(ENOENT));
		return vg_err_errno(e, "cannot open directory '%s'", path);
	}
	return fd;
}

int
vg_beneath_check(int fd, uid_t uid, mode_t forbidden, const char *what,
    struct vg_err *e)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "cannot stat %s", what);
	if (st.st_uid != uid)
		return vg_err_set(e, VG_EDENIED, "%s is owned by uid %lu, "
		    "not by uid %lu; refusing to use it", what,
		    (unsigned long)st.st_uid, (unsigned long)uid);
	if ((st.st_mode & forbidden) != 0)
		return vg_err_set(e, VG_EDENIED, "%s has mode %04o; vigil "
		    "expects none of %04o", what,
		    (unsigned)(st.st_mode & 07777), (unsigned)forbidden);
	return 0;
}

/* Opens the anchor of dir whose last up components others can write:
 * the directory above them; *rel gets those components, "/", name (the
 * components alone when name is NULL). */
static int
anchor_up(const char *dir, int up, const char *name, char **rel,
    struct vg_err *e)
{
	size_t n = strlen(dir);
	char *anchor;
	int fd, k;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (k = 0; k < up; k++) {
		while (n > 0 && dir[n - 1] != '/')
			n--;
		if (n <= 1)
			return vg_err_set(e, VG_EINVAL, "'%s' has fewer than "
			    "%d components", dir, up + 1);
		n--;
	}
	anchor = vg_xstrndup(dir, n);
	if (up == 0)
		*rel = vg_xstrdup(name);
	else if (name == NULL)
		*rel = vg_xstrdup(dir + n + 1);
	else
		*rel = vg_xasprintf("%s/%s", dir + n + 1, name);
	fd = vg_beneath_anchor(anchor, e);
	free(anchor);
	if (fd < 0) {
		free(*rel);
		*rel = NULL;
	}
	return fd;
}

int
vg_beneath_file_in(const char *dir, int up, const char *name, int flags,
    mode_t mode, struct vg_err *e)
{
	char *rel = NULL, what[PATH_MAX + 16];
	int afd, fd;

	if ((afd = anchor_up(dir, up, name, &rel, e)) < 0)
		return afd;
	snprintf(what, sizeof(what), "'%.*s'", PATH_MAX, dir);
	fd = vg_beneath_file(afd, rel, flags, mode, what, e);
	if (fd == VG_ENOENT)
		vg_err_set(e, VG_ENOENT, "'%s/%s' does not exist", dir, name);
	close(afd);
	free(rel);
	return fd;
}

int
vg_beneath_file_path(const char *path, int flags, mode_t mode,
    struct vg_err *e)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (slash == NULL || slash[1] == '\0')
		return vg_err_set(e, VG_EINVAL, "'%s': not a path to a file",
		    path);
	dir = slash == path ? vg_xstrdup("/") :
	    vg_xstrndup(path, (size_t)(slash - path));
	fd = vg_beneath_file_in(dir, 0, slash + 1, flags, mode, e);
	free(dir);
	return fd;
}

int
vg_beneath_dir_in(const char *dir, int up, struct vg_err *e)
{
	char *rel = NULL;
	int afd, fd;

	if (up <= 0)
		return vg_beneath_anchor(dir, e);
	if ((afd = anchor_up(dir, up, NULL, &rel, e)) < 0)
		return afd;
	fd = vg_beneath_open(afd, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)	/* O_NOFOLLOW | O_DIRECTORY of a link: ENOTDIR */
		fd = open_failed("its parent", rel, errno == ENOTDIR ? ELOOP :
		    errno, e);
	close(afd);
	free(rel);
	return fd;
}

int
vg_beneath_read(const char *dir, int up, const char *name, size_t max,
    struct vg_buf *out, struct vg_err *e)
{
	char path[PATH_MAX];
	int fd, rc;

	if ((fd = vg_beneath_file_in(dir, up, name, O_RDONLY, 0, e)) < 0)
		return fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = vg_read_fd(fd, path, max, out, e);
	close(fd);
	return rc;
}

int
vg_read_regular(const char *path, size_t max, struct vg_buf *out,
    struct stat *st, const char *what, struct vg_err *e)
{
	struct stat own;
	char buf[1024];
	ssize_t n;
	int fd;

	if (st == NULL)
		st = &own;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0)
		return errno == ENOENT ? vg_err_set(e, VG_ENOENT, "no %s '%s'",
		    what, path) : vg_err_errno(e, "cannot open %s '%s'", what,
		    path);
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return vg_err_set(e, VG_EDENIED, "%s '%s' is not a regular "
		    "file", what, path);
	}
	while (out->len < max && (n = read(fd, buf, sizeof(buf))) > 0)
		vg_buf_add(out, buf, (size_t)n);
	close(fd);
	return 0;
}
