/*
 * dirpool.c - empty directories kept for reuse under one parent; see
 * dirpool.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirpool.h"
#include "common/buf.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"

/* The name of p's pooled directory n. */
static const char *
pooled_name(const struct vg_dirpool *p, unsigned n, char *buf, size_t len)
{
	snprintf(buf, len, "%s%ld.d%u", p->prefix, (long)p->pid, n);
	return buf;
}

/* True when p is open and this process's. */
static int
pool_live(const struct vg_dirpool *p)
{
	return p->fd >= 0 && p->pid == vg_self_pid();
}

/* True when name under fd is an empty regular file of ours, mode
 * 0600. */
static int
empty_file(int fd, const char *name)
{
	struct stat st;

	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size == 0 &&
	    st.st_uid == vg_self_euid() && (st.st_mode & 07777) == 0600;
}

/* True when name is one of the NULL-terminated names. */
static int
kept_name(const char *const *names, const char *name)
{
	for (; names != NULL && *names != NULL; names++)
		if (strcmp(*names, name) == 0)
			return 1;
	return 0;
}

/* Removes the empty kept files of directory fd. */
static void
drop_kept(const char *const *names, int fd)
{
	for (; names != NULL && *names != NULL; names++)
		if (empty_file(fd, *names))
			(void)unlinkat(fd, *names, 0);
}

/* vg_dir_holds_only's test: an empty file under one of the kept names. */
static int
kept_empty(int fd, const char *name, void *names)
{
	return kept_name(names, name) && empty_file(fd, name);
}

/*
 * 1 when directory fd holds nothing but empty kept files, 0 when it
 * holds something else, -1 when it cannot be read.
 */
static int
dir_poolable(const char *const *names, int fd)
{
	return vg_dir_holds_only(fd, names != NULL ? kept_empty : NULL,
	    (void *)(uintptr_t)names);
}

/* Removes pooled directory name under dirfd with the files in it (the
 * kept ones; with names NULL, every regular file). */
static void
rm_pooled(int dirfd, const char *name, const char *const *names)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
		return;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return;
	if (names != NULL)
		drop_kept(names, fd);
	else if ((d = fdopendir(fd)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_type == DT_REG)
				(void)unlinkat(fd, de->d_name, 0);
		closedir(d);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

void
vg_dirpool_keep(struct vg_dirpool *p, const char *const *names)
{
	p->keep = names;
}

void
vg_pool_sweep(int dirfd, const char *prefix, char kind, int flags)
{
	size_t pl = strlen(prefix);
	struct dirent *de;
	unsigned k;
	long pid;
	DIR *d;
	int dfd;
	char kc, c;

	if ((dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	/* A copy shares the caller's offset, maybe at the end already. */
	rewinddir(d);
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, pl) == 0 &&
		    sscanf(de->d_name + pl, "%ld.%c%u%c", &pid, &kc, &k,
		    &c) == 3 && kc == kind && pid > 0 &&
		    kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
		    unlinkat(dirfd, de->d_name, flags) != 0 &&
		    errno == ENOTEMPTY)
			rm_pooled(dirfd, de->d_name, NULL);
	closedir(d);
}

int
vg_dirpool_open(struct vg_dirpool *p, int parent, const char *prefix)
{
	struct vg_dirpool empty = VG_DIRPOOL_INIT;

	*p = empty;
	if (strlen(prefix) > 90 || strchr(prefix, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((p->fd = fcntl(parent, F_DUPFD_CLOEXEC, 0)) < 0)
		return -1;
	p->pid = vg_self_pid();
	vg_strlcpy(p->prefix, prefix, sizeof(p->prefix));
	vg_pool_sweep(p->fd, p->prefix, 'd', AT_REMOVEDIR);
	return 0;
}

int
vg_dirpool_mkdirat(struct vg_dirpool *p, int dfd, const char *name)
{
	char pooled[160];

	while (pool_live(p) && p->n > 0) {
		pooled_name(p, p->v[p->n - 1], pooled, sizeof(pooled));
		if (renameat2(p->fd, pooled, dfd, name, RENAME_NOREPLACE) == 0) {
			p->n--;
			return 0;
		}
		if (errno == EEXIST)
			return -1;
		/* Gone (ENOENT), or no such rename here: not pooled. */
		p->n--;
		if (errno != ENOENT)
			rm_pooled(p->fd, pooled, p->keep);
	}
	return mkdirat(dfd, name, 0700);
}

int
vg_dirpool_rmdirat(struct vg_dirpool *p, int dfd, const char *name)
{
	struct stat st;
	int fd, ok;

	if (!pool_live(p) && p->keep == NULL)
		return unlinkat(dfd, name, AT_REMOVEDIR);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return unlinkat(dfd, name, AT_REMOVEDIR);
	ok = fstat(fd, &st) == 0 && st.st_uid == vg_self_euid() &&
	    (st.st_mode & 07777) == 0700 ? dir_poolable(p->keep, fd) : -1;
	if (ok == 1 && pool_live(p) && vg_dirpool_put(p, dfd, name) == 0) {
		close(fd);
		return 0;
	}
	drop_kept(p->keep, fd);
	close(fd);
	if (ok == 0) {
		errno = ENOTEMPTY;
		return -1;
	}
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

int
vg_dirpool_put(struct vg_dirpool *p, int dfd, const char *name)
{
	char pooled[160];

	if (!pool_live(p))
		return -1;
	p->v = vg_xgrow(p->v, &p->cap, p->n + 1, sizeof(*p->v));
	pooled_name(p, p->next, pooled, sizeof(pooled));
	if (renameat2(dfd, name, p->fd, pooled, RENAME_NOREPLACE) != 0)
		return -1;
	p->v[p->n++] = p->next++;
	return 0;
}

size_t
vg_dirpool_count(const struct vg_dirpool *p)
{
	return pool_live(p) ? p->n : 0;
}

void
vg_dirpool_close(struct vg_dirpool *p)
{
	char pooled[160];
	size_t i;

	/* Another process's pool (a fork's copy) is released, its
	 * directories left to their owner. */
	if (pool_live(p))
		for (i = 0; i < p->n; i++)
			rm_pooled(p->fd, pooled_name(p, p->v[i], pooled,
			    sizeof(pooled)), p->keep);
	if (p->fd >= 0)
		close(p->fd);
	free(p->v);
	p->fd = -1;
	p->v = NULL;
	p->n = p->cap = 0;
}
