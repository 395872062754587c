/*
 * which.h - finding a program the way execvp(3) would, before starting
 * it, so that "not installed" is reported with the setting to change
 * rather than as an exit status 127.
 */
#ifndef VG_WHICH_H
#define VG_WHICH_H

/* True when path is a regular file this process may execute. */
int	vg_is_executable(const char *path);

/*
 * Like which(1): a name with a '/' is taken as a path, otherwise each
 * directory of $PATH (default /usr/local/bin:/usr/bin:/bin; an empty
 * entry is the current directory) is tried in order.  Returns the first
 * executable regular file (caller frees), or NULL.  Never blocks beyond
 * stat(2).
 */
char	*vg_which(const char *name);

/*
 * Why the program at path must not be started for a user outside any
 * sandbox, or NULL when it may: it must be a regular file owned by root
 * or vigil's user that no one else can write, and not beneath one of
 * the directories of writable (those a task of the run can write: a
 * task could plant it there).  what names it ("mail program").  The
 * reason is allocated (caller frees).
 */
struct vg_strv;
char	*vg_program_refusal(const char *path, const char *what,
	    const struct vg_strv *writable);

#endif
