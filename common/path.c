/*
 * path.c - directory creation, bounded reads, atomic writes, tree removal,
 * directory emptiness.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/str.h"
#include "common/path.h"

int
vg_mkdir_p(const char *path, mode_t mode, struct vg_err *e)
{
	char *p, *s, c;
	int rc = 0;

	/* Most calls find the parents made: one mkdir, not one a level. */
	if (path[0] == '\0')
		return vg_err_set(e, VG_EINVAL, "cannot create a directory "
		    "with an empty name");
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return vg_err_errno(e, "cannot create directory '%s'", path);
	p = vg_xstrdup(path);
	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		if (s[-1] == '/') {
			if (*s == '\0')
				break;
			continue;
		}
		c = *s;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			rc = vg_err_errno(e, "cannot create directory '%s'", p);
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return rc;
}

/* Opens the directory holding path and fsyncs it. */
static void
fsync_parent(const char *path)
{
	char *dir, *slash;
	int fd;

	dir = vg_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	else {
		free(dir);
		dir = vg_xstrdup(".");
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

int
vg_write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int
vg_write_file_atomic(const char *path, const void *data, size_t len,
    mode_t mode, struct vg_err *e)
{
	return vg_write_file_replace(path, data, len, mode, 1, e);
}

int
vg_write_file_replace(const char *path, const void *data, size_t len,
    mode_t mode, int durable, struct vg_err *e)
{
	char host[64], *tmp;
	int fd, rc = 0;

	/* host and pid: two nodes may write the same record on a shared
	 * filesystem, and pids repeat across hosts */
	if (gethostname(host, sizeof(host)) != 0)
		vg_strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	tmp = vg_xasprintf("%s.tmp.%s.%ld", path, host, (long)getpid());
	/* Whatever stands at the temporary name (a link, a FIFO, another
	 * file's hard link) is removed, never opened: O_EXCL. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    mode);
	if (fd < 0) {
		rc = vg_err_errno(e, "cannot create '%s'", tmp);
		free(tmp);
		return rc;
	}
	if (vg_write_all(fd, data, len) != 0) {
		rc = vg_err_errno(e, "cannot write '%s'", tmp);
		goto out;
	}
	if (fchmod(fd, mode) != 0 || (durable && fsync(fd) != 0)) {
		rc = vg_err_errno(e, "cannot sync '%s'", tmp);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = vg_err_errno(e, "cannot close '%s'", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = vg_err_errno(e, "cannot rename '%s' to '%s'", tmp, path);
		goto out;
	}
	if (durable)
		fsync_parent(path);
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		(void)unlink(tmp);
	free(tmp);
	return rc;
}

int
vg_read_file(const char *path, size_t max, struct vg_buf *out,
    struct vg_err *e)
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return vg_err_set(e, VG_ENOENT, "'%s' does not exist",
			    path);
		return vg_err_errno(e, "cannot open '%s'", path);
	}
	rc = vg_read_fd(fd, path, max, out, e);
	close(fd);
	return rc;
}

int
vg_read_fd(int fd, const char *path, size_t max, struct vg_buf *out,
    struct vg_err *e)
{
	char chunk[65536];
	size_t total = 0;
	ssize_t n;
	int rc = 0;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = vg_err_errno(e, "cannot read '%s'", path);
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > max) {
			rc = vg_err_set(e, VG_ELIMIT,
			    "'%s' is larger than %zu bytes", path, max);
			break;
		}
		vg_buf_add(out, chunk, (size_t)n);
	}
	return rc;
}

char *
vg_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	return vg_xasprintf("%.*s/%s", (int)la, a, b);
}

/* Removes the contents of directory fd, then nothing else. */
static int
rm_contents(int dfd, const char *what, struct vg_err *e)
{
	DIR *d;
	struct dirent *de;
	int fd, rc = 0;

	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		return vg_err_errno(e, "cannot read directory '%s'", what);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			if (errno == ENOENT)
				continue;
			rc = vg_err_errno(e, "cannot remove '%s/%s'", what,
			    de->d_name);
			break;
		}
		fd = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = vg_err_errno(e, "cannot open '%s/%s'", what,
			    de->d_name);
			break;
		}
		if ((rc = rm_contents(fd, what, e)) != 0)
			break;
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0) {
			rc = vg_err_errno(e, "cannot remove '%s/%s'", what,
			    de->d_name);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
vg_rm_rf(const char *path, struct vg_err *e)
{
	int fd, rc;

	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return vg_err_errno(e, "cannot open '%s'", path);
	if ((rc = rm_contents(fd, path, e)) != 0)
		return rc;
	if (rmdir(path) != 0 && errno != ENOENT)
		return vg_err_errno(e, "cannot remove '%s'", path);
	return 0;
}

int
vg_rm_rf_at(int dfd, const char *name, const char *what, struct vg_err *e)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : vg_err_errno(e, "cannot stat "
		    "'%s'", what);
	if (st.st_uid != geteuid())
		return vg_err_set(e, VG_EDENIED, "'%s' is owned by uid %lu, "
		    "not by you (uid %lu): left alone", what,
		    (unsigned long)st.st_uid, (unsigned long)geteuid());
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? 0 :
		    vg_err_errno(e, "cannot remove '%s'", what);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : vg_err_errno(e, "cannot open "
		    "'%s'", what);
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		close(fd);
		return vg_err_set(e, VG_EDENIED, "'%s' changed owner while "
		    "being removed: left alone", what);
	}
	if ((rc = rm_contents(fd, what, e)) != 0)
		return rc;
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		return vg_err_errno(e, "cannot remove '%s'", what);
	return 0;
}

double
vg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

long long
vg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double
vg_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
vg_time_left(double deadline, double min)
{
	double left;

	if (deadline <= 0)
		return 0;
	left = deadline - vg_mono();
	return left < min ? min : left;
}

int
vg_dir_holds_only(int fd, int (*ok)(int fd, const char *name, void *arg),
    void *arg)
{
	char buf[1024];
	ssize_t r, off;

	while ((r = getdents64(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < r; ) {
			struct dirent64 *de = (struct dirent64 *)(void *)
			    (buf + off);

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (ok == NULL || !ok(fd, de->d_name, arg))
				return 0;
		}
	return r == 0 ? 1 : -1;
}

int
vg_dir_empty(int fd)
{
	return vg_dir_holds_only(fd, NULL, NULL);
}
