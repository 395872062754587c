/*
 * lock.c - link()-based lock files with a lease (see lock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/str.h"
#include "common/beneath.h"
#include "common/buf.h"
#include "common/path.h"
#include "sif-cache/lock.h"

struct vg_lock {
	char		*path;
	char		*token;		/* our line in the file */
	ino_t		 ino;		/* of our lock file */
	dev_t		 dev;
	double		 lease;
	long long	 refreshed;	/* monotonic ms, last renewal */
};

/* What a waiter remembers of the lock file to see whether it changes. */
struct seen {
	int		 valid;
	ino_t		 ino;
	struct timespec	 mtim, ctim;
	long long	 since;		/* monotonic ms, same since */
};

static unsigned lock_seq;
/* Who may hold a lock (vg_lock_trust); NULL: anyone. */
static int	(*lock_trusted)(const void *, uid_t);
static const void *lock_trusted_arg;

void
vg_lock_trust(int (*trusted)(const void *, uid_t), const void *arg)
{
	lock_trusted = trusted;
	lock_trusted_arg = arg;
}

const char *
vg_lock_hostname(void)
{
	static char host[256];
	char *p;

	if (host[0] == '\0') {
		if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0')
			vg_strlcpy(host, "localhost", sizeof(host));
		/* names are also file name parts: keep them plain */
		for (p = host; *p != '\0'; p++)
			if (*p == '/' || *p == '\n' || *p == ' ')
				*p = '_';
	}
	return host;
}

int
vg_lock_owner_dead(const char *host, long pid)
{
	if (strcmp(host, vg_lock_hostname()) != 0 || pid <= 0)
		return 0;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int
vg_lock_owner(const char *path, struct vg_lock_owner *o, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char *line, *save = NULL;
	int rc;

	memset(o, 0, sizeof(*o));
	/* A regular file only: a FIFO at the name cannot hang vigil. */
	if ((rc = vg_read_regular(path, 4096, &b, NULL, "lock", e)) != 0) {
		vg_buf_release(&b);
		return rc;
	}
	if (b.data == NULL) {
		vg_buf_release(&b);
		return vg_err_set(e, VG_EINVAL, "lock '%s' is empty", path);
	}
	for (line = strtok_r(b.data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "host ", 5) == 0)
			snprintf(o->host, sizeof(o->host), "%s", line + 5);
		else if (strncmp(line, "pid ", 4) == 0)
			o->pid = strtol(line + 4, NULL, 10);
		else if (strncmp(line, "acquired ", 9) == 0)
			o->acquired = strtod(line + 9, NULL);
	}
	vg_buf_release(&b);
	if (o->host[0] == '\0')
		snprintf(o->host, sizeof(o->host), "?");
	return 0;
}

/*
 * Writes our unique candidate file; returns its name (caller frees).  Its
 * token line tells our lock from a later one that got the same inode
 * number after ours was removed.
 */
static char *
write_candidate(const char *path, double lease, char **token,
    struct vg_err *e)
{
	char *tmp, *text;
	size_t len;
	int fd;

	tmp = vg_xasprintf("%s.%s.%ld.%u", path, vg_lock_hostname(),
	    (long)getpid(), lock_seq++);
	*token = vg_xasprintf("token %s.%ld.%lld.%u\n", vg_lock_hostname(),
	    (long)getpid(), vg_mono_ms(), lock_seq++);
	text = vg_xasprintf("host %s\npid %ld\nacquired %.3f\nlease %.3f\n%s",
	    vg_lock_hostname(), (long)getpid(), vg_now(), lease, *token);
	len = strlen(text);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0) {
		vg_err_errno(e, "cannot write lock file '%s'", tmp);
		if (fd >= 0)
			(void)unlink(tmp);
		free(tmp);
		tmp = NULL;
	}
	free(text);
	return tmp;
}

/*
 * One attempt: link the candidate to the lock name.  1 when acquired (l
 * filled), 0 when held by someone else, negative on error.
 */
static int
try_link(const char *path, const char *cand, struct vg_lock *l,
    struct vg_err *e)
{
	struct stat st;
	int linked, err;

	linked = link(cand, path) == 0;
	err = errno;
	if (stat(cand, &st) != 0)
		return vg_err_errno(e, "cannot stat '%s'", cand);
	/* NFS: the reply may be lost while the link happened */
	if (!linked && st.st_nlink != 2) {
		if (err == EEXIST)
			return 0;
		errno = err;
		return vg_err_errno(e, "cannot create lock '%s'", path);
	}
	l->ino = st.st_ino;
	l->dev = st.st_dev;
	return 1;
}

/*
 * Whether the lock at path is stale: its holder is dead on this host, or
 * its file has not changed for a lease as seen by us, or its mtime is
 * more than two leases old by our clock (slack for clock skew).
 */
static int
is_stale(const char *path, double lease, struct seen *s)
{
	struct vg_lock_owner o;
	struct stat st;
	long long now = vg_mono_ms();

	if (lstat(path, &st) != 0)
		return 0;		/* gone: just retry */
	/* Not a lock a cache writer made: a FIFO, a link, a file of a
	 * user who is not a trusted writer (kept fresh, it would stall
	 * every pull for the whole wait), one with no holder in it. */
	if (!S_ISREG(st.st_mode) || (lock_trusted != NULL &&
	    !lock_trusted(lock_trusted_arg, st.st_uid)))
		return 1;
	if (!s->valid || s->ino != st.st_ino ||
	    s->mtim.tv_sec != st.st_mtim.tv_sec ||
	    s->mtim.tv_nsec != st.st_mtim.tv_nsec ||
	    s->ctim.tv_sec != st.st_ctim.tv_sec ||
	    s->ctim.tv_nsec != st.st_ctim.tv_nsec) {
		s->valid = 1;
		s->ino = st.st_ino;
		s->mtim = st.st_mtim;
		s->ctim = st.st_ctim;
		s->since = now;
		if (vg_lock_owner(path, &o, NULL) != 0 || o.pid <= 0 ||
		    vg_lock_owner_dead(o.host, o.pid))
			return 1;
		return vg_now() - (double)st.st_mtim.tv_sec > 2 * lease + 1;
	}
	return (double)(now - s->since) >= lease * 1000.0;
}

/*
 * Removes a stale lock: renames it aside (atomic, so only one waiter wins)
 * and checks that what was moved is the file judged stale; a fresh lock
 * moved by mistake is linked back.
 */
static void
take_over(const char *path, const struct seen *s)
{
	struct stat st;
	char *aside;

	aside = vg_xasprintf("%s.stale.%s.%ld.%u", path, vg_lock_hostname(),
	    (long)getpid(), lock_seq++);
	if (rename(path, aside) == 0) {
		if (stat(aside, &st) == 0 && st.st_ino != s->ino)
			(void)link(aside, path);
		(void)unlink(aside);
	}
	free(aside);
}

/* Sleeps for ms milliseconds. */
static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
	    .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
vg_lock_acquire(const char *path, double lease, double wait,
    struct vg_lock **out, struct vg_err *e)
{
	struct vg_lock *l;
	struct vg_lock_owner o;
	struct seen s = { .valid = 0 };
	long long start = vg_mono_ms();
	long nap = 20, cap;
	char *cand, *token = NULL;
	int r;

	*out = NULL;
	if (!(lease > 0))
		return vg_err_set(e, VG_EINVAL, "lock lease must be positive");
	if ((cand = write_candidate(path, lease, &token, e)) == NULL) {
		free(token);
		return VG_EIO;
	}
	l = vg_xcalloc(1, sizeof(*l));
	l->token = token;
	/* poll at most every quarter lease, and at least every second */
	cap = (long)(lease * 250.0);
	if (cap > 1000)
		cap = 1000;
	if (cap < 10)
		cap = 10;
	for (;;) {
		r = try_link(path, cand, l, e);
		if (r < 0)
			break;
		if (r == 1) {
			l->path = vg_xstrdup(path);
			l->lease = lease;
			l->refreshed = vg_mono_ms();
			*out = l;
			l = NULL;
			r = 0;
			break;
		}
		if (is_stale(path, lease, &s)) {
			take_over(path, &s);
			s.valid = 0;
			continue;
		}
		if ((double)(vg_mono_ms() - start) >= wait * 1000.0) {
			if (vg_lock_owner(path, &o, NULL) != 0)
				snprintf(o.host, sizeof(o.host), "?");
			r = vg_err_set(e, VG_ETIMEOUT, "timed out after %.0f s "
			    "waiting for lock '%s' held by %s pid %ld", wait,
			    path, o.host, o.pid);
			break;
		}
		sleep_ms(nap);
		nap = nap * 2 > cap ? cap : nap * 2;
	}
	(void)unlink(cand);
	free(cand);
	if (l != NULL)
		free(l->token);
	free(l);
	return r;
}

/* Whether the lock file at l->path is still the one we linked. */
static int
still_ours(const struct vg_lock *l)
{
	struct vg_buf b = VG_BUF_INIT;
	struct stat st;
	int ours;

	if (stat(l->path, &st) != 0 || st.st_ino != l->ino ||
	    st.st_dev != l->dev)
		return 0;
	ours = vg_read_file(l->path, 4096, &b, NULL) == 0 && b.data != NULL &&
	    strstr(b.data, l->token) != NULL;
	vg_buf_release(&b);
	return ours;
}

int
vg_lock_refresh(struct vg_lock *l)
{
	long long now = vg_mono_ms();

	if (l == NULL)
		return 0;
	if ((double)(now - l->refreshed) < l->lease * 250.0)
		return 0;
	l->refreshed = now;
	if (!still_ours(l))
		return VG_EAGAIN;
	/* a new mtime and ctime is what waiters watch */
	(void)utimensat(AT_FDCWD, l->path, NULL, 0);
	return 0;
}

void
vg_lock_release(struct vg_lock *l)
{
	if (l == NULL)
		return;
	if (still_ours(l))
		(void)unlink(l->path);
	free(l->path);
	free(l->token);
	free(l);
}
