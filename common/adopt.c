/*
 * adopt.c - opening a directory vigil keeps for the user only when no
 * one else can change it; see adopt.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/path.h"
#include "common/str.h"

void
vg_owner_desc(uid_t uid, struct vg_buf *out)
{
	struct passwd *pw = getpwuid(uid);

	if (pw != NULL && pw->pw_name != NULL)
		vg_buf_printf(out, "%s (uid %lu)", pw->pw_name,
		    (unsigned long)uid);
	else
		vg_buf_printf(out, "uid %lu", (unsigned long)uid);
}

/* The user's own private group (a group named as the user, with no
 * other members): its write bit lets no one else in. */
static int
private_group(gid_t gid, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	struct group *gr = getgrgid(gid);

	return pw != NULL && gr != NULL && pw->pw_gid == gid &&
	    strcmp(gr->gr_name, pw->pw_name) == 0 &&
	    (gr->gr_mem == NULL || gr->gr_mem[0] == NULL);
}

/* Refuses: "WHAT 'PATH': 'DIR' is owned by O, mode M; vigil expects X". */
static int
refuse(const char *what, const char *path, const char *dir,
    const struct stat *st, const char *expect, struct vg_err *e)
{
	struct vg_buf owner = VG_BUF_INIT, me = VG_BUF_INIT;
	int rc;

	vg_owner_desc(st->st_uid, &owner);
	vg_owner_desc(geteuid(), &me);
	if (dir == NULL)
		rc = vg_err_set(e, VG_EDENIED, "%s '%s' is owned by %s, mode "
		    "%04o; vigil expects %s (you are %s)", what, path,
		    vg_buf_str(&owner), (unsigned)(st->st_mode & 07777),
		    expect, vg_buf_str(&me));
	else
		rc = vg_err_set(e, VG_EDENIED, "%s '%s': '%s' on its way is "
		    "owned by %s, mode %04o; vigil expects %s (you are %s)",
		    what, path, dir, vg_buf_str(&owner),
		    (unsigned)(st->st_mode & 07777), expect, vg_buf_str(&me));
	vg_buf_release(&owner);
	vg_buf_release(&me);
	return rc;
}

/* Checks one directory of the walk; last: the adopted one. */
static int
check_dir(int fd, const char *what, const char *path, const char *dir,
    int last, unsigned flags, struct vg_err *e)
{
	uid_t me = geteuid();
	struct stat st;
	int others;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "%s '%s': cannot stat '%s'", what,
		    path, dir);
	if (!S_ISDIR(st.st_mode))
		return vg_err_set(e, VG_EDENIED, "%s '%s': '%s' is not a "
		    "directory", what, path, dir);
	others = (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) &&
	    !private_group(st.st_gid, me));
	if (last && !(flags & VG_ADOPT_SHARED)) {
		if (st.st_uid != me || others)
			return refuse(what, path, NULL, &st, "a directory owned "
			    "by you that no one else can write", e);
		return 0;
	}
	if (st.st_uid != 0 && st.st_uid != me)
		return refuse(what, path, last ? NULL : dir, &st, last ?
		    "a shared base "
		    "owned by root or you (ask the site's administrators to "
		    "make it, mode 1777)" : "every directory on the way to be "
		    "owned by root or you", e);
	if (others && !(st.st_mode & S_ISVTX))
		return refuse(what, path, last ? NULL : dir, &st, "a directory others can "
		    "write to be sticky (mode 1777, like /tmp), so no one can "
		    "replace what is in it", e);
	return 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The canonical form of path: realpath of its longest existing prefix,
 * then the rest, which may name neither "." nor "..". */
static char *
canonical(const char *path, const char *what, struct vg_err *e)
{
	char *abs, *pre, *real, *out, *slash;
	size_t n;

	if (path[0] == '/')
		abs = vg_xstrdup(path);
	else {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			vg_err_errno(e, "%s '%s': cannot find the working "
			    "directory", what, path);
			return NULL;
		}
		abs = vg_path_join(cwd, path);
	}
	pre = vg_xstrdup(abs);
	for (;;) {
		if ((real = realpath(pre, NULL)) != NULL)
			break;
		if (errno != ENOENT || (slash = strrchr(pre, '/')) == NULL ||
		    slash == pre) {
			vg_err_errno(e, "%s '%s'", what, path);
			free(pre);
			free(abs);
			return NULL;
		}
		*slash = '\0';
	}
	n = strlen(pre);
	out = vg_xasprintf("%s%s", strcmp(real, "/") == 0 ? "" : real,
	    abs + n);
	if (out[0] == '\0') {
		free(out);
		out = vg_xstrdup("/");
	}
	free(real);
	free(pre);
	free(abs);
	if (strstr(out, "/../") != NULL || strstr(out, "/./") != NULL ||
	    ends_with(out, "/..") || ends_with(out, "/.")) {
		vg_err_set(e, VG_EINVAL, "%s '%s': a missing part of the path "
		    "has '.' or '..'", what, path);
		free(out);
		return NULL;
	}
	return out;
}

int
vg_adopt_dir(const char *path, mode_t mode, unsigned flags,
    const char *what, struct vg_err *e)
{
	char *canon, *p, *comp, *next, *cut;
	const char *why;
	int fd, nfd, rc, made, last;

	if ((canon = canonical(path, what, e)) == NULL)
		return e->rc;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = vg_err_errno(e, "%s '%s': cannot open '/'", what, path);
		free(canon);
		return rc;
	}
	p = canon;
	while (*p == '/')
		p++;
	if ((rc = check_dir(fd, what, path, "/", *p == '\0', flags, e)) != 0)
		goto fail;
	for (comp = p; *comp != '\0'; comp = next) {
		/* canon is cut after comp while it is looked at, so that
		 * messages name the directory reached. */
		if ((cut = strchr(comp, '/')) != NULL) {
			*cut = '\0';
			for (next = cut + 1; *next == '/'; next++)
				;
		} else
			next = comp + strlen(comp);
		last = *next == '\0';
		made = 0;
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (nfd < 0 && errno == EACCES && !last)
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && (flags & VG_ADOPT_CREATE)) {
			if (mkdirat(fd, comp, mode) == 0)
				made = 1;
			else if (errno != EEXIST) {
				rc = vg_err_errno(e, "%s '%s': cannot make "
				    "'%s'", what, path, canon);
				goto fail;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			rc = errno == ENOENT ? VG_ENOENT : VG_EIO;
			if (errno == ELOOP || errno == ENOTDIR)
				rc = VG_EDENIED;
			why = errno == ELOOP ? "it is a symbolic link "
			    "(planted after the path was resolved?)" :
			    errno == ENOTDIR ? "it is not a directory" :
			    strerror(errno);
			if (strcmp(canon, path) == 0)
				vg_err_set(e, rc, "%s '%s': %s", what, path,
				    why);
			else
				vg_err_set(e, rc, "%s '%s': cannot open '%s': "
				    "%s", what, path, canon, why);
			goto fail;
		}
		close(fd);
		fd = nfd;
		/* Whatever the umask: exactly mode (mkdir masks it). */
		if (made && fchmod(fd, mode) != 0) {
			rc = vg_err_errno(e, "%s '%s': cannot set the mode of "
			    "'%s'", what, path, canon);
			goto fail;
		}
		if ((rc = check_dir(fd, what, path, canon, last, flags, e))
		    != 0)
			goto fail;
		if (cut != NULL)
			*cut = '/';
	}
	free(canon);
	return fd;
fail:
	close(fd);
	free(canon);
	return rc;
}
