/*
 * sandbox-workdir.c - the working directory of a run, writable at
 * `standard` with its protected entries kept read-only (see the header).
 */
#include "backends/sandbox-workdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/home.h"
#include "common/log.h"

#ifndef SYS_open_tree
#define SYS_open_tree		428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount		429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr	442
#endif

/* include/uapi/linux/mount.h, for older headers */
#define WD_OPEN_TREE_CLONE		1
#define WD_OPEN_TREE_CLOEXEC		O_CLOEXEC
#define WD_MOVE_MOUNT_F_EMPTY_PATH	0x00000004
#define WD_MOVE_MOUNT_T_EMPTY_PATH	0x00000040
#define WD_MOUNT_ATTR_RDONLY		0x00000001
#define WD_MOUNT_ATTR_NOSUID		0x00000002
#define WD_MOUNT_ATTR_NODEV		0x00000004
struct wd_mount_attr {
	uint64_t	attr_set;
	uint64_t	attr_clr;
	uint64_t	propagation;
	uint64_t	userns_fd;
};

/*
 * What runs code later, outside any sandbox, when someone works in the
 * directory: version control metadata (hooks, config's core.fsmonitor,
 * core.pager, filter drivers; Mercurial's hgrc hooks), shell and ssh
 * start-up files, direnv's .envrc.
 */
const char *const vg_wd_protected[] = {
	".git", ".hg", ".envrc", ".ssh",
	".profile", ".bashrc", ".bash_profile", ".bash_login",
	".bash_logout", ".zshenv", ".zshrc", ".zprofile", ".zlogin",
	".zlogout", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc",
	".inputrc",
	NULL
};

/* Trees that are the system's: no grant at or beneath them. */
static const char *const system_trees[] = {
	"/usr", "/etc", "/boot", "/proc", "/sys", "/dev", "/run", "/bin",
	"/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var/lib",
	"/var/log", "/var/spool", "/var/cache", "/var/mail", "/var/run",
	NULL
};

/* Directories many share or that hold others': no grant at them. */
static const char *const shared_dirs[] = {
	"/", "/home", "/tmp", "/var", "/var/tmp", "/opt", "/srv",
	"/mnt", "/media", "/dev/shm",
	NULL
};

/* True when path is dir or lies beneath it. */
static int
at_or_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

const char *
vg_wd_refused(const char *path)
{
	static char why[PATH_MAX + 160];
	const char *home = getenv("HOME");
	struct passwd *pw;
	size_t i;

	for (i = 0; shared_dirs[i] != NULL; i++)
		if (strcmp(path, shared_dirs[i]) == 0) {
			snprintf(why, sizeof(why), "'%s' is a directory others "
			    "share", path);
			return why;
		}
	for (i = 0; system_trees[i] != NULL; i++)
		if (at_or_beneath(path, system_trees[i])) {
			snprintf(why, sizeof(why), "'%s' is in the system tree "
			    "'%s'", path, system_trees[i]);
			return why;
		}
	if (home != NULL && home[0] == '/' && strcmp(path, home) == 0) {
		snprintf(why, sizeof(why), "'%s' is your home directory",
		    path);
		return why;
	}
	setpwent();
	while ((pw = getpwent()) != NULL)
		if (pw->pw_dir != NULL && strcmp(pw->pw_dir, path) == 0) {
			snprintf(why, sizeof(why), "'%s' is the home directory "
			    "of %s", path, pw->pw_name);
			endpwent();
			return why;
		}
	endpwent();
	return NULL;
}

/* Opens name beneath dirfd as itself (O_PATH), no link followed on the
 * way (common/beneath.h); -1 with errno.  Async-signal-safe. */
static int
open_entry(int dirfd, const char *name)
{
	return vg_beneath_open(dirfd, name, O_PATH, 0);
}

/* Sets w->why (no grant) to a message built from fmt. */
static void
no_grant(struct vg_wd *w, const char *what)
{
	free(w->why);
	w->why = vg_xasprintf("the working directory is not writable by "
	    "tasks: %s; choose a project directory as workdir, list the "
	    "paths tasks write under isolation.writable, or set "
	    "isolation.workdir: read", what);
	w->grant = 0;
}

void
vg_wd_prepare(struct vg_wd *w, const char *dir, int write, int mntns)
{
	char real[PATH_MAX], hreal[PATH_MAX], *msg, *home;
	const char *refused;
	struct stat st;
	int i, fd;

	vg_wd_init(w);
	/* none; or one that is not there: chdir fails at start and says
	 * so */
	if (dir == NULL || dir[0] == '\0' || realpath(dir, real) == NULL)
		return;
	w->path = vg_xstrdup(real);
	w->fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->fd < 0 || fstat(w->fd, &st) != 0) {
		if (w->fd >= 0)
			(void)close(w->fd);
		w->fd = -1;
		return;
	}
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	if (!write)
		return;
	w->grant = 1;
	if ((refused = vg_wd_refused(real)) != NULL) {
		no_grant(w, refused);
		return;
	}
	/* vigil's own state (the database, other runs' files): a task
	 * that could write it could forge what vigil reports */
	home = vg_home_dir();
	if (home != NULL && realpath(home, hreal) != NULL &&
	    (at_or_beneath(real, hreal) || at_or_beneath(hreal, real))) {
		msg = vg_xasprintf("'%s' %s vigil's state directory '%s' "
		    "(VIGIL_HOME)", real, strcmp(real, hreal) == 0 ? "is" :
		    at_or_beneath(real, hreal) ? "is in" : "holds", hreal);
		no_grant(w, msg);
		free(msg);
		free(home);
		return;
	}
	free(home);
	if (!mntns) {
		no_grant(w, "no mount namespace here to keep its .git and "
		    "start-up files read-only in");
		return;
	}
	for (i = 0; vg_wd_protected[i] != NULL; i++) {
		fd = open_entry(w->fd, vg_wd_protected[i]);
		if (fd < 0 && errno == ENOENT) {
			w->absent |= 1u << i;
			continue;
		}
		if (fd < 0 || fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
			msg = vg_xasprintf("'%s/%s' is %s, which cannot be "
			    "held read-only", real, vg_wd_protected[i],
			    fd >= 0 ? "a symbolic link" : "out of reach");
			no_grant(w, msg);
			free(msg);
			if (fd >= 0)
				(void)close(fd);
			return;
		}
		(void)close(fd);
		w->prot[w->nprot].name = vg_wd_protected[i];
		w->prot[w->nprot].dev = st.st_dev;
		w->prot[w->nprot].ino = st.st_ino;
		w->nprot++;
	}
}

void
vg_wd_init(struct vg_wd *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

void
vg_wd_release(struct vg_wd *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		(void)close(w->fd);
	free(w->path);
	free(w->why);
	vg_wd_init(w);
}

/* Binds the entry efd read-only over itself; 0 or -errno. */
static int
bind_readonly(int efd)
{
	struct wd_mount_attr attr;
	int tree, rc = 0;

	tree = (int)syscall(SYS_open_tree, efd, "", WD_OPEN_TREE_CLONE |
	    WD_OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return -errno;
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = WD_MOUNT_ATTR_RDONLY | WD_MOUNT_ATTR_NOSUID |
	    WD_MOUNT_ATTR_NODEV;
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr,
	    sizeof(attr)) != 0 || syscall(SYS_move_mount, tree, "", efd, "",
	    WD_MOVE_MOUNT_F_EMPTY_PATH | WD_MOVE_MOUNT_T_EMPTY_PATH) != 0)
		rc = -errno;
	(void)close(tree);
	return rc;
}

int
vg_wd_protect(const struct vg_wd *w, const char **stage)
{
	struct stat st;
	int i, dfd, efd, rc = 0;

	if (!w->grant || w->nprot == 0)
		return 0;
	*stage = "find the working directory";
	/* Found again in this mount namespace: mounts are made on what
	 * this namespace sees, and the prepared descriptors are the
	 * host's. */
	dfd = open(w->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) != 0 || st.st_dev != w->dev ||
	    st.st_ino != w->ino) {
		(void)close(dfd);
		return -EXDEV;
	}
	*stage = "keep the working directory's .git and start-up files "
	    "read-only";
	for (i = 0; i < w->nprot && rc == 0; i++) {
		if ((efd = open_entry(dfd, w->prot[i].name)) < 0) {
			rc = -errno;
			break;
		}
		if (fstat(efd, &st) != 0 || st.st_dev != w->prot[i].dev ||
		    st.st_ino != w->prot[i].ino)
			rc = -EXDEV;	/* replaced since: refuse */
		else
			rc = bind_readonly(efd);
		(void)close(efd);
	}
	(void)close(dfd);
	return rc;
}

int
vg_wd_sweep(const struct vg_wd *w, const char *tag, struct vg_buf *note)
{
	struct stat st;
	char aside[NAME_MAX + 1];
	int i, n = 0;

	if (w == NULL || !w->grant || w->fd < 0 || w->absent == 0)
		return 0;
	for (i = 0; vg_wd_protected[i] != NULL; i++) {
		if (!(w->absent & (1u << i)) || fstatat(w->fd,
		    vg_wd_protected[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		snprintf(aside, sizeof(aside), "%s.vigil-moved.%s",
		    vg_wd_protected[i], tag);
		/* renames never follow the last component: a link is
		 * moved as itself */
		if (renameat2(w->fd, vg_wd_protected[i], w->fd, aside,
		    RENAME_NOREPLACE) != 0) {
			vg_warn("cannot move aside '%s/%s' a task made: %s",
			    w->path, vg_wd_protected[i], strerror(errno));
			continue;
		}
		vg_buf_printf(note, "%smoved aside '%s', which the task made "
		    "in the working directory (it would run code outside "
		    "the sandbox): now '%s'", note->len > 0 ? "; " : "",
		    vg_wd_protected[i], aside);
		n++;
	}
	return n;
}
