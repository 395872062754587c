/*
 * path.h - file system helpers used everywhere: directory creation,
 * whole-file reads with a size bound, and atomic replacement (temp file in
 * the same directory, fsync, rename, fsync of the directory) so a reader
 * never sees a half-written record, even after a crash.
 */
#ifndef VG_PATH_H
#define VG_PATH_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"

/* Creates path and missing parents with mode; existing dirs are fine. */
int	vg_mkdir_p(const char *path, mode_t mode, struct vg_err *e);

/*
 * Replaces path with len bytes of data atomically (tmp + fsync + rename +
 * directory fsync).  The file gets mode.  Blocks on disk I/O.
 */
int	vg_write_file_atomic(const char *path, const void *data, size_t len,
	    mode_t mode, struct vg_err *e);

/*
 * The same replacement; without durable neither the file nor its
 * directory is synced (bookkeeping that a crash may take back to its
 * previous whole content, never half of it).
 */
int	vg_write_file_replace(const char *path, const void *data, size_t len,
	    mode_t mode, int durable, struct vg_err *e);

/*
 * Reads the whole file into out (appending).  Fails with VG_ELIMIT when the
 * file is larger than max bytes, VG_ENOENT when it does not exist.
 */
int	vg_read_file(const char *path, size_t max, struct vg_buf *out,
	    struct vg_err *e);

/* Reads the open file fd to its end into out (appending), as
 * vg_read_file does; path names it in errors.  fd stays open. */
int	vg_read_fd(int fd, const char *path, size_t max, struct vg_buf *out,
	    struct vg_err *e);

/*
 * Writes all n bytes of p to fd, again after EINTR and short writes.
 * Returns 0, or -1 with errno set by write(2).
 */
int	vg_write_all(int fd, const void *p, size_t n);

/* Returns "a/b" (one slash between), caller frees. */
char	*vg_path_join(const char *a, const char *b);

/* Removes a directory tree without following symlinks; missing is fine. */
int	vg_rm_rf(const char *path, struct vg_err *e);

/* Removes the tree name in the directory dfd the same way, only when it
 * is the effective user's own (a file or directory of anyone else is
 * refused: VG_EDENIED); what names it in messages.  Missing is fine. */
int	vg_rm_rf_at(int dfd, const char *name, const char *what,
	    struct vg_err *e);

/* 1 when the open directory fd holds nothing but "." and "..", 0 when it
 * holds something, -1 with errno when it cannot be read. */
int	vg_dir_empty(int fd);

/* 1 when every entry of the open directory fd (but "." and "..") is one
 * ok(fd, name, arg) accepts, 0 when one is not, -1 with errno when it
 * cannot be read.  ok NULL accepts none (vg_dir_empty). */
int	vg_dir_holds_only(int fd, int (*ok)(int fd, const char *name,
	    void *arg), void *arg);

/* Wall clock in seconds (realtime) and monotonic milliseconds. */
double	vg_now(void);
long long vg_mono_ms(void);
/* Monotonic seconds. */
double	vg_mono(void);
/* Seconds from now until the monotonic deadline, at least min; 0 when
 * deadline is 0 (none). */
double	vg_time_left(double deadline, double min);

#endif
