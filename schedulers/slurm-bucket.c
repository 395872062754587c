/*
 * slurm-bucket.c - a token bucket kept in a small file, shared by every
 * vigil process of one user on one host, that paces vigil's calls to
 * slurmctld and slurmdbd (default one per second, a burst of three).
 * Sites may also enforce a per-user limit in slurmctld (rl_enable, bucket
 * 30, refill 2/s by default); staying under it means vigil never sees
 * "rate limit exceeded" even with many runs at once.
 *
 * The file holds one line "TOKENS STAMP" (STAMP in CLOCK_MONOTONIC
 * seconds, which is system-wide on Linux).  Each take locks the file with
 * flock(2), refills by the elapsed time, takes a token or says how long
 * to wait, and rewrites the line in place.  A missing, empty or corrupt
 * file counts as a full bucket; a stamp more than a minute in the future
 * (after a reboot) is reset, a slightly later one (a process that read the
 * clock after us took the lock first) is taken as now.  Nothing else
 * coordinates the processes, so a crashed vigil leaves nothing to clean
 * up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/adopt.h"
#include "common/home.h"
#include "common/path.h"
#include "schedulers/slurm.h"

/*
 * Path of the per-user bucket file, creating its directory: in
 * $XDG_RUNTIME_DIR/vigil when that is the user's own, else in the
 * user's state directory.  Never in a name others can take first (a
 * /tmp/vigil-UID made by another user would lock the user out or let
 * her read the bucket): the directory is adopted (common/adopt.h).
 */
char *
vg_slurm_bucket_path(struct vg_err *e)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char *dir = NULL, *path;
	struct vg_err ignored;
	int fd = -1;

	vg_err_init(&ignored);
	if (rt != NULL && rt[0] == '/') {
		dir = vg_xasprintf("%s/vigil", rt);
		if ((fd = vg_adopt_dir(dir, 0700, VG_ADOPT_CREATE,
		    "XDG_RUNTIME_DIR", &ignored)) < 0) {
			free(dir);
			dir = NULL;
		}
	}
	if (dir == NULL) {
		dir = vg_home_dir();
		if ((fd = vg_adopt_dir(dir, 0700, VG_ADOPT_CREATE,
		    "VIGIL_HOME", e)) < 0) {
			free(dir);
			return NULL;
		}
	}
	close(fd);
	path = vg_path_join(dir, "slurm-bucket");
	free(dir);
	return path;
}

/* Sets a bucket up; no file access yet. */
int
vg_slurm_bucket_init(struct vg_slurm_bucket *b, const char *path,
    double rate, double burst, struct vg_err *e)
{
	if (!(rate > 0) || !(burst >= 1))
		return vg_err_set(e, VG_EINVAL, "slurm rate limit: rate %g/s "
		    "and burst %g must be > 0 and >= 1", rate, burst);
	b->path = vg_xstrdup(path);
	b->rate = rate;
	b->burst = burst;
	return 0;
}

/* Frees what init allocated. */
void
vg_slurm_bucket_release(struct vg_slurm_bucket *b)
{
	free(b->path);
	b->path = NULL;
}

/* Takes a token or says how long to wait, under the file lock. */
int
vg_slurm_bucket_take(struct vg_slurm_bucket *b, double now, double *wait,
    struct vg_err *e)
{
	char buf[128];
	double tokens, stamp;
	ssize_t n;
	int fd, len, r = 0;

	*wait = 0;
	fd = open(b->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return vg_err_errno(e, "opening '%s'", b->path);
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			r = vg_err_errno(e, "locking '%s'", b->path);
			goto out;
		}
	n = pread(fd, buf, sizeof buf - 1, 0);
	if (n < 0) {
		r = vg_err_errno(e, "reading '%s'", b->path);
		goto out;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%lf %lf", &tokens, &stamp) != 2 ||
	    !(tokens >= 0) || tokens > b->burst || !(stamp <= now + 60)) {
		tokens = b->burst;
		stamp = now;
	}
	/* Another process read its clock after ours and wrote first. */
	if (now < stamp)
		now = stamp;
	tokens += (now - stamp) * b->rate;
	if (tokens > b->burst)
		tokens = b->burst;
	if (tokens >= 1)
		tokens -= 1;
	else
		*wait = (1 - tokens) / b->rate;
	len = snprintf(buf, sizeof buf, "%.6f %.6f\n", tokens, now);
	if (pwrite(fd, buf, (size_t)len, 0) != len ||
	    ftruncate(fd, len) != 0)
		r = vg_err_errno(e, "writing '%s'", b->path);
out:
	close(fd);	/* drops the lock */
	return r;
}
