/*
 * stream.c - `output: stream` (stream.h): framing, the writer thread that
 * turns the tasks' pipes into frames, recovery after a crash, and the
 * readers that give back one task's output.
 *
 * The writer: every attempt gets two pipes (vg_stream_attach); the task
 * writes to their write ends, a thread of the driver reads the read ends
 * (epoll, non-blocking) and appends each read, up to 64 KiB, as one frame
 * to RUN/stream/0.frames with one write(2), then its record to
 * RUN/stream/0.index.  Frames of one stream of one attempt are in order;
 * those of different tasks interleave.  A failed or short write is undone
 * (ftruncate back to the last whole frame) and the writer stops framing
 * (it keeps draining, so that no task blocks), so a full disk never
 * leaves a torn frame in the middle.  The driver detaches an attempt when
 * it has ended: its write ends are closed and it waits until the thread
 * has read both pipes to their end, so that an attempt's output is in the
 * file before its result is committed (nothing reported is lost to a
 * SIGKILL of vigil).
 *
 * Recovery (vg_stream_recover, at every drive's start): the frames are
 * checked one by one (magic, lengths, CRC-32C); the first frame that does
 * not check starts a torn tail unless a valid frame follows it, in which
 * case the bytes between are a damaged stretch that is left out of the
 * index; the torn tail is cut (ftruncate) and the index rewritten (temp
 * file and rename) when it does not say exactly what the frames hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/path.h"
#include "runner/core/stream.h"

#define FRAMES		"stream/0.frames"
#define INDEX		"stream/0.index"
#define DRAIN_MS	5000	/* an attempt's wait for its pipes' end */

/* One read end: which attempt and stream it is. */
struct end {
	struct vg_stream_src	*src;
	int			 stream;
	int			 fd;	/* -1 at its end */
};

struct vg_stream_src {
	uint32_t		 task;
	uint32_t		 attempt;
	struct end		 ends[2];
	int			 wfd[2];	/* the driver's write ends */
	int			 open;		/* read ends not at their end */
	int			 detached;	/* freed by the thread at end */
	struct vg_stream_src	*prev, *next;	/* all attached */
};

struct vg_stream_writer {
	int			 ffd, ifd, epfd, evfd;
	uint64_t		 off;		/* frames' length (thread) */
	pthread_t		 th;
	int			 started;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	int			 stop;		/* under mu */
	int			 draining;	/* under mu: nothing freed */
	struct vg_stream_src	*srcs;		/* under mu */
	int			 failed;	/* a write failed (thread) */
	struct vg_err		 err;		/* what failed (thread) */
	unsigned char		 buf[VG_STREAM_HDR + VG_STREAM_CHUNK];
};

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Fills the CRC-32C table (reflected polynomial 0x82F63B78). */
static void
crc_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t
vg_stream_crc(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	(void)pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (n-- > 0)
		crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* Little-endian stores and loads. */
static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* The header of f without its CRC (bytes 0..19). */
static void
hdr_fields(unsigned char *h, const struct vg_stream_ent *f)
{
	memcpy(h, "VGF1", 4);
	put32(h + 4, f->task);
	put32(h + 8, f->attempt);
	h[12] = (unsigned char)f->stream;
	h[13] = h[14] = h[15] = 0;
	put32(h + 16, f->len);
}

void
vg_stream_frame_hdr(unsigned char hdr[VG_STREAM_HDR],
    const struct vg_stream_ent *f, const void *p)
{
	uint32_t crc;

	hdr_fields(hdr, f);
	crc = vg_stream_crc(0, hdr, 20);
	put32(hdr + 20, vg_stream_crc(crc, p, f->len));
}

/* Checks the fixed part of a header; 0 when it could be one. */
static int
hdr_plausible(const unsigned char *p, struct vg_stream_ent *f)
{
	if (memcmp(p, "VGF1", 4) != 0 || (p[12] != VG_STREAM_STDOUT &&
	    p[12] != VG_STREAM_STDERR) || p[13] != 0 || p[14] != 0 ||
	    p[15] != 0)
		return -1;
	f->task = get32(p + 4);
	f->attempt = get32(p + 8);
	f->stream = p[12];
	f->len = get32(p + 16);
	f->off = 0;
	return f->len == 0 || f->len > VG_STREAM_MAX ? -1 : 0;
}

long
vg_stream_frame_check(const unsigned char *p, size_t n,
    struct vg_stream_ent *f)
{
	uint32_t crc;

	if (n < VG_STREAM_HDR)
		return n >= 4 && memcmp(p, "VGF1", 4) != 0 ? -1 : 0;
	if (hdr_plausible(p, f) != 0)
		return -1;
	if (n - VG_STREAM_HDR < f->len)
		return 0;
	crc = vg_stream_crc(0, p, 20);
	crc = vg_stream_crc(crc, p + VG_STREAM_HDR, f->len);
	return crc == get32(p + 20) ? (long)(VG_STREAM_HDR + f->len) : -1;
}

void
vg_stream_rec_put(unsigned char rec[VG_STREAM_REC],
    const struct vg_stream_ent *f)
{
	memset(rec, 0, VG_STREAM_REC);
	put32(rec, f->task);
	put32(rec + 4, f->attempt);
	rec[8] = (unsigned char)f->stream;
	put32(rec + 12, f->len);
	put32(rec + 16, (uint32_t)f->off);
	put32(rec + 20, (uint32_t)(f->off >> 32));
	put32(rec + 28, vg_stream_crc(0, rec, 28));
}

int
vg_stream_rec_get(const unsigned char rec[VG_STREAM_REC],
    struct vg_stream_ent *f)
{
	if (vg_stream_crc(0, rec, 28) != get32(rec + 28) ||
	    (rec[8] != VG_STREAM_STDOUT && rec[8] != VG_STREAM_STDERR))
		return -1;
	f->task = get32(rec);
	f->attempt = get32(rec + 4);
	f->stream = rec[8];
	f->len = get32(rec + 12);
	f->off = (uint64_t)get32(rec + 16) | (uint64_t)get32(rec + 20) << 32;
	return f->len == 0 || f->len > VG_STREAM_MAX ? -1 : 0;
}

/* pread of exactly n bytes; the count read (short at end of file) or
 * -1. */
static ssize_t
pread_full(int fd, void *p, size_t n, uint64_t off)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = pread(fd, (char *)p + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* write of exactly n bytes; 0 or -1 (errno set, or EIO when short). */
static int
write_full(int fd, const void *p, size_t n)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = write(fd, (const char *)p + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

/* Checks the frame at off of a file of size bytes; its size, 0 when it
 * runs past the end, -1 when invalid.  buf holds VG_STREAM_MAX + HDR. */
static long
frame_at(int fd, uint64_t off, uint64_t size, unsigned char *buf,
    struct vg_stream_ent *f)
{
	size_t have = size - off > VG_STREAM_HDR + VG_STREAM_MAX ?
	    VG_STREAM_HDR + VG_STREAM_MAX : (size_t)(size - off);
	size_t want;
	ssize_t n;

	if (have < VG_STREAM_HDR) {
		n = pread_full(fd, buf, have, off);
		return n < 0 ? -1 : vg_stream_frame_check(buf, (size_t)n, f);
	}
	if (pread_full(fd, buf, VG_STREAM_HDR, off) != VG_STREAM_HDR ||
	    hdr_plausible(buf, f) != 0)
		return -1;
	want = VG_STREAM_HDR + f->len;
	if (want > have)
		return 0;
	if (pread_full(fd, buf + VG_STREAM_HDR, f->len, off + VG_STREAM_HDR) !=
	    (ssize_t)f->len)
		return -1;
	return vg_stream_frame_check(buf, want, f);
}

/* The offset of the next valid frame after off, or size when none. */
static uint64_t
resync(int fd, uint64_t off, uint64_t size, unsigned char *buf)
{
	struct vg_stream_ent f;
	unsigned char win[4096];
	uint64_t at;
	ssize_t n, i;

	for (at = off + 1; at + VG_STREAM_HDR <= size; ) {
		if ((n = pread_full(fd, win, sizeof(win), at)) < 4)
			break;
		for (i = 0; i + 4 <= n; i++)
			if (win[i] == 'V' && memcmp(win + i, "VGF1", 4) == 0 &&
			    frame_at(fd, at + (uint64_t)i, size, buf, &f) > 0)
				return at + (uint64_t)i;
		at += (uint64_t)(n - 3);
	}
	return size;
}

/* Writes the index of n records to path (temp file and rename). */
static int
index_rewrite(const char *path, const unsigned char *recs, size_t n,
    struct vg_err *e)
{
	char *tmp = vg_xasprintf("%s.tmp", path);
	int fd, rc = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_full(fd, recs, n * VG_STREAM_REC) != 0 ||
	    fsync(fd) != 0)
		rc = vg_err_errno(e, "cannot write '%s'", tmp);
	if (fd >= 0)
		close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = vg_err_errno(e, "cannot rename '%s'", tmp);
	if (rc != 0)
		(void)unlink(tmp);
	free(tmp);
	return rc;
}

/* 1 when the index file at path holds exactly recs (n records). */
static int
index_matches(const char *path, const unsigned char *recs, size_t n)
{
	unsigned char chunk[VG_STREAM_REC * 256];
	struct stat sb;
	size_t done = 0, k;
	int fd, same = 1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != n * VG_STREAM_REC)
		same = 0;
	while (same && done < n * VG_STREAM_REC) {
		k = n * VG_STREAM_REC - done;
		if (k > sizeof(chunk))
			k = sizeof(chunk);
		if (pread_full(fd, chunk, k, done) != (ssize_t)k ||
		    memcmp(chunk, recs + done, k) != 0)
			same = 0;
		done += k;
	}
	close(fd);
	return same;
}

int
vg_stream_recover(const char *run_dir, struct vg_stream_fix *fix,
    struct vg_err *e)
{
	char *fpath = vg_path_join(run_dir, FRAMES);
	char *ipath = vg_path_join(run_dir, INDEX);
	unsigned char *buf = NULL, *recs = NULL;
	struct vg_stream_ent f;
	struct stat sb;
	uint64_t off = 0, size, next;
	size_t n = 0, cap = 0;
	long k;
	int fd, rc = 0;

	memset(fix, 0, sizeof(*fix));
	if ((fd = open(fpath, O_RDWR | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			rc = vg_err_errno(e, "cannot open '%s'", fpath);
		goto out;
	}
	if (fstat(fd, &sb) != 0) {
		rc = vg_err_errno(e, "cannot stat '%s'", fpath);
		goto out;
	}
	size = (uint64_t)sb.st_size;
	buf = vg_xmalloc(VG_STREAM_HDR + VG_STREAM_MAX);
	while (off < size) {
		if ((k = frame_at(fd, off, size, buf, &f)) > 0) {
			f.off = off;
			recs = vg_xgrow(recs, &cap, (n + 1) * VG_STREAM_REC, 1);
			vg_stream_rec_put(recs + n * VG_STREAM_REC, &f);
			n++;
			off += (uint64_t)k;
			continue;
		}
		/* Torn or damaged: a valid frame after it says which. */
		next = resync(fd, off, size, buf);
		if (next >= size) {
			fix->cut = size - off;
			if (ftruncate(fd, (off_t)off) != 0) {
				rc = vg_err_errno(e, "cannot cut the torn "
				    "tail of '%s'", fpath);
				goto out;
			}
			break;
		}
		fix->damaged += next - off;
		off = next;
	}
	fix->frames = n;
	if (!index_matches(ipath, recs, n)) {
		if ((rc = index_rewrite(ipath, recs, n, e)) != 0)
			goto out;
		fix->reindexed = 1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(recs);
	free(fpath);
	free(ipath);
	return rc;
}

/* Undoes a failed append: both files back to their last whole record. */
static void
writer_fail(struct vg_stream_writer *w, const char *what)
{
	struct stat sb;

	if (!w->failed)
		vg_err_errno(&w->err, "output stream: cannot write %s", what);
	w->failed = 1;
	(void)ftruncate(w->ffd, (off_t)w->off);
	if (fstat(w->ifd, &sb) == 0)
		(void)ftruncate(w->ifd, sb.st_size / VG_STREAM_REC *
		    VG_STREAM_REC);
	vg_warn("%s; further output of this run is discarded", w->err.msg);
}

/* Frames n bytes of w->buf (after the header room) read from end x. */
static void
writer_frame(struct vg_stream_writer *w, const struct end *x, size_t n)
{
	unsigned char rec[VG_STREAM_REC];
	struct vg_stream_ent f = {
		.task = x->src->task, .attempt = x->src->attempt,
		.stream = (uint32_t)x->stream, .len = (uint32_t)n,
		.off = w->off,
	};

	if (w->failed)
		return;
	vg_stream_frame_hdr(w->buf, &f, w->buf + VG_STREAM_HDR);
	if (write_full(w->ffd, w->buf, VG_STREAM_HDR + n) != 0) {
		writer_fail(w, FRAMES);
		return;
	}
	vg_stream_rec_put(rec, &f);
	if (write_full(w->ifd, rec, sizeof(rec)) != 0) {
		writer_fail(w, INDEX);
		return;
	}
	w->off += VG_STREAM_HDR + n;
}

/* Closes what src still holds and frees it. */
static void
src_free(struct vg_stream_src *s)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (s->ends[i].fd >= 0)
			close(s->ends[i].fd);
		if (s->wfd[i] >= 0)
			close(s->wfd[i]);
	}
	free(s);
}

/* Takes src out of w's list; under w->mu. */
static void
src_unlink(struct vg_stream_writer *w, struct vg_stream_src *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		w->srcs = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
}

/* An end reached its end (or failed): closes it, wakes the waiter. */
static void
end_close(struct vg_stream_writer *w, struct end *x)
{
	struct vg_stream_src *s = x->src;

	(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, x->fd, NULL);
	close(x->fd);
	pthread_mutex_lock(&w->mu);
	x->fd = -1;
	if (--s->open == 0) {
		if (s->detached && !w->draining) {
			src_unlink(w, s);
			src_free(s);
		} else
			pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
}

/* Reads what end x has; 1 when it stays open. */
static int
end_read(struct vg_stream_writer *w, struct end *x)
{
	ssize_t n;

	for (;;) {
		n = read(x->fd, w->buf + VG_STREAM_HDR, VG_STREAM_CHUNK);
		if (n > 0) {
			writer_frame(w, x, (size_t)n);
			if (n < VG_STREAM_CHUNK)
				return 1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 1;
		end_close(w, x);
		return 0;
	}
}

/* The writer thread: frames what the pipes carry until told to stop. */
static void *
writer_main(void *arg)
{
	struct vg_stream_writer *w = arg;
	struct epoll_event ev[64];
	struct vg_stream_src *s;
	uint64_t v;
	int n, i, stop;

	for (;;) {
		n = epoll_wait(w->epfd, ev, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		stop = 0;
		for (i = 0; i < n; i++) {
			if (ev[i].data.ptr == NULL) {
				(void)read(w->evfd, &v, sizeof(v));
				pthread_mutex_lock(&w->mu);
				stop = w->stop;
				pthread_mutex_unlock(&w->mu);
				continue;
			}
			(void)end_read(w, ev[i].data.ptr);
		}
		if (stop)
			break;
	}
	/* Told to stop: what is still open is drained, not waited for;
	 * vg_stream_writer_close frees it. */
	pthread_mutex_lock(&w->mu);
	w->draining = 1;
	s = w->srcs;
	pthread_mutex_unlock(&w->mu);
	for (; s != NULL; s = s->next)
		for (i = 0; i < 2; i++)
			if (s->ends[i].fd >= 0)
				(void)end_read(w, &s->ends[i]);
	return NULL;
}

/* Opens path for appending; the fd or -1 with e set. */
static int
open_append(const char *run_dir, const char *name, struct vg_err *e)
{
	char *path = vg_path_join(run_dir, name);
	int fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		vg_err_errno(e, "cannot open '%s'", path);
	free(path);
	return fd;
}

int
vg_stream_writer_open(const char *run_dir, struct vg_stream_writer **out,
    struct vg_stream_fix *fix, struct vg_err *e)
{
	struct vg_stream_writer *w;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	pthread_condattr_t ca;
	sigset_t all, old;
	char *dir;
	off_t end;
	int rc;

	*out = NULL;
	dir = vg_path_join(run_dir, "stream");
	rc = vg_mkdir_p(dir, 0700, e);
	free(dir);
	if (rc != 0 || (rc = vg_stream_recover(run_dir, fix, e)) != 0)
		return rc;
	w = vg_xcalloc(1, sizeof(*w));
	w->ffd = w->ifd = w->epfd = w->evfd = -1;
	vg_err_init(&w->err);
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((w->ffd = open_append(run_dir, FRAMES, e)) < 0 ||
	    (w->ifd = open_append(run_dir, INDEX, e)) < 0) {
		rc = e != NULL ? e->rc : VG_EIO;
		goto fail;
	}
	if ((end = lseek(w->ffd, 0, SEEK_END)) < 0 ||
	    (w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (w->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev) != 0) {
		rc = vg_err_errno(e, "output stream: cannot set up the writer");
		goto fail;
	}
	w->off = (uint64_t)end;
	/* The thread takes no signal: the driver reads them (signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->th, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		rc = vg_err_errno(e, "output stream: cannot start the writer");
		goto fail;
	}
	w->started = 1;
	*out = w;
	return 0;
fail:
	(void)vg_stream_writer_close(w, NULL);
	return rc;
}

int
vg_stream_attach(struct vg_stream_writer *w, int task, int attempt,
    int fds[2], struct vg_stream_src **out, struct vg_err *e)
{
	struct vg_stream_src *s = vg_xcalloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN };
	int p[2], i, k;

	*out = NULL;
	s->task = (uint32_t)task;
	s->attempt = (uint32_t)attempt;
	for (i = 0; i < 2; i++) {
		s->wfd[i] = -1;
		s->ends[i].fd = -1;
	}
	for (i = 0; i < 2; i++) {
		if (pipe2(p, O_CLOEXEC) != 0) {
			k = vg_err_errno(e, "output stream: cannot make a "
			    "pipe for task %d", task);
			goto fail;
		}
		s->ends[i].fd = p[0];
		s->ends[i].src = s;
		s->ends[i].stream = i == 0 ? VG_STREAM_STDOUT :
		    VG_STREAM_STDERR;
		s->wfd[i] = p[1];
		if (fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
			k = vg_err_errno(e, "output stream: cannot set up "
			    "the pipe of task %d", task);
			goto fail;
		}
	}
	s->open = 2;
	pthread_mutex_lock(&w->mu);
	s->next = w->srcs;
	if (w->srcs != NULL)
		w->srcs->prev = s;
	w->srcs = s;
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < 2; i++) {
		ev.data.ptr = &s->ends[i];
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->ends[i].fd,
		    &ev) != 0) {
			k = vg_err_errno(e, "output stream: cannot watch the "
			    "pipe of task %d", task);
			if (i == 1)
				(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL,
				    s->ends[0].fd, NULL);
			pthread_mutex_lock(&w->mu);
			src_unlink(w, s);
			pthread_mutex_unlock(&w->mu);
			goto fail;
		}
	}
	fds[0] = s->wfd[0];
	fds[1] = s->wfd[1];
	*out = s;
	return 0;
fail:
	src_free(s);
	return k;
}

void
vg_stream_detach(struct vg_stream_writer *w, struct vg_stream_src *s)
{
	struct timespec dl;
	int i;

	if (w == NULL || s == NULL)
		return;
	for (i = 0; i < 2; i++)
		if (s->wfd[i] >= 0) {
			close(s->wfd[i]);
			s->wfd[i] = -1;
		}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += DRAIN_MS / 1000;
	pthread_mutex_lock(&w->mu);
	while (s->open > 0 && pthread_cond_timedwait(&w->cv, &w->mu,
	    &dl) != ETIMEDOUT)
		;
	if (s->open > 0) {
		s->detached = 1;	/* something still holds a pipe */
	} else {
		src_unlink(w, s);
		src_free(s);
	}
	pthread_mutex_unlock(&w->mu);
}

int
vg_stream_writer_close(struct vg_stream_writer *w, struct vg_err *e)
{
	struct vg_stream_src *s, *next;
	uint64_t one = 1;
	int rc = 0, i;

	if (w == NULL)
		return 0;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		for (s = w->srcs; s != NULL; s = s->next)
			for (i = 0; i < 2; i++)
				if (s->wfd[i] >= 0) {
					close(s->wfd[i]);
					s->wfd[i] = -1;
				}
		w->stop = 1;
		pthread_mutex_unlock(&w->mu);
		(void)write(w->evfd, &one, sizeof(one));
		pthread_join(w->th, NULL);
	}
	for (s = w->srcs; s != NULL; s = next) {
		next = s->next;
		src_free(s);
	}
	if (w->failed) {
		if (e != NULL)
			*e = w->err;
		rc = w->err.rc != 0 ? w->err.rc : VG_EIO;
	}
	if (w->ffd >= 0 && close(w->ffd) != 0 && rc == 0)
		rc = vg_err_errno(e, "output stream: cannot close the frames");
	if (w->ifd >= 0)
		close(w->ifd);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->evfd >= 0)
		close(w->evfd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	return rc;
}

int
vg_stream_present(const char *run_dir)
{
	char *path = vg_path_join(run_dir, INDEX);
	int yes = access(path, F_OK) == 0;

	free(path);
	return yes;
}

int
vg_stream_reader_open(struct vg_stream_reader *r, const char *run_dir,
    int task, int stream, struct vg_err *e)
{
	char *ipath = vg_path_join(run_dir, INDEX);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->task = task;
	r->stream = stream;
	snprintf(r->path, sizeof(r->path), "%s/%s", run_dir, FRAMES);
	if ((r->ifd = open(ipath, O_RDONLY | O_CLOEXEC)) < 0)
		rc = vg_err_errno(e, "cannot open '%s'", ipath);
	else if ((r->ffd = open(r->path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = vg_err_errno(e, "cannot open '%s'", r->path);
		close(r->ifd);
		r->ifd = -1;
	}
	free(ipath);
	return rc;
}

int
vg_stream_read(struct vg_stream_reader *r,
    int (*sink)(void *arg, const void *p, size_t n), void *arg,
    struct vg_err *e)
{
	unsigned char recs[VG_STREAM_REC * 128], *buf = NULL;
	struct vg_stream_ent f, h;
	ssize_t n;
	size_t i;
	int rc = 0;

	for (;;) {
		n = pread_full(r->ifd, recs, sizeof(recs), r->ipos);
		if (n < 0) {
			rc = vg_err_errno(e, "cannot read the index of '%s'",
			    r->path);
			break;
		}
		if (n < VG_STREAM_REC)
			break;
		for (i = 0; i + VG_STREAM_REC <= (size_t)n;
		    i += VG_STREAM_REC) {
			/* A record that does not check is a torn tail
			 * (resume cuts it); nothing after it is read. */
			if (vg_stream_rec_get(recs + i, &f) != 0)
				goto out;
			if (f.task != (uint32_t)r->task ||
			    f.stream != (uint32_t)r->stream) {
				r->ipos += VG_STREAM_REC;
				continue;
			}
			if (buf == NULL)
				buf = vg_xmalloc(VG_STREAM_HDR +
				    VG_STREAM_MAX);
			if (pread_full(r->ffd, buf, VG_STREAM_HDR + f.len,
			    f.off) != (ssize_t)(VG_STREAM_HDR + f.len) ||
			    vg_stream_frame_check(buf, VG_STREAM_HDR + f.len,
			    &h) <= 0 || h.task != f.task ||
			    h.stream != f.stream) {
				rc = vg_err_set(e, VG_EPARSE, "'%s': the frame "
				    "at offset %llu (task %u) does not "
				    "check (length or checksum)", r->path,
				    (unsigned long long)f.off, f.task);
				goto out;
			}
			r->ipos += VG_STREAM_REC;
			r->attempt = h.attempt;
			if (sink(arg, buf + VG_STREAM_HDR, f.len) != 0)
				goto out;
		}
		if ((size_t)n < sizeof(recs))
			break;
	}
out:
	free(buf);
	return rc;
}

void
vg_stream_reader_close(struct vg_stream_reader *r)
{
	if (r->ifd >= 0)
		close(r->ifd);
	if (r->ffd >= 0)
		close(r->ffd);
	r->ifd = r->ffd = -1;
}

/*
 * The index of one stream of a run, loaded once and sorted by task (file
 * order within a task), so that reading every task's output (`vigil logs
 * RUN`, the tails of a report) costs one pass over the index, not one a
 * task.  Kept for the last run and stream asked; loaded again when the
 * index has changed (size or mtime).
 */
struct slot {
	uint32_t	task;
	uint32_t	len;
	uint64_t	off;
	size_t		seq;		/* position in the file */
};

static struct {
	char		*dir;
	int		 stream;
	uint64_t	 size;		/* of the index when loaded */
	struct timespec	 mtime;		/* and its mtime */
	ino_t		 ino;		/* and inode (recovery renames) */
	struct slot	*v;
	size_t		 n;
} cache;

/* Orders slots by task, then by their place in the file. */
static int
slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
vg_stream_cache_drop(void)
{
	free(cache.dir);
	free(cache.v);
	memset(&cache, 0, sizeof(cache));
}

/* Loads (or keeps) the cache for run_dir's stream. */
static int
cache_load(const char *run_dir, int stream, struct vg_err *e)
{
	unsigned char recs[VG_STREAM_REC * 256];
	struct vg_stream_ent f;
	struct stat sb;
	char *ipath = vg_path_join(run_dir, INDEX);
	size_t cap = 0, i;
	uint64_t pos = 0;
	ssize_t n;
	int fd, rc = 0;

	if ((fd = open(ipath, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd,
	    &sb) != 0) {
		rc = vg_err_errno(e, "cannot open '%s'", ipath);
		goto out;
	}
	if (cache.dir != NULL && strcmp(cache.dir, run_dir) == 0 &&
	    cache.stream == stream && cache.size == (uint64_t)sb.st_size &&
	    cache.mtime.tv_sec == sb.st_mtim.tv_sec &&
	    cache.mtime.tv_nsec == sb.st_mtim.tv_nsec &&
	    cache.ino == sb.st_ino)
		goto out;
	vg_stream_cache_drop();
	for (;;) {
		if ((n = pread_full(fd, recs, sizeof(recs), pos)) < 0) {
			rc = vg_err_errno(e, "cannot read '%s'", ipath);
			break;
		}
		for (i = 0; i + VG_STREAM_REC <= (size_t)n;
		    i += VG_STREAM_REC) {
			/* A torn record ends what can be read (resume cuts
			 * it); see vg_stream_read. */
			if (vg_stream_rec_get(recs + i, &f) != 0)
				goto sort;
			if (f.stream != (uint32_t)stream)
				continue;
			cache.v = vg_xgrow(cache.v, &cap, cache.n + 1,
			    sizeof(*cache.v));
			cache.v[cache.n].task = f.task;
			cache.v[cache.n].len = f.len;
			cache.v[cache.n].off = f.off;
			cache.v[cache.n].seq = cache.n;
			cache.n++;
		}
		pos += (uint64_t)n;
		if ((size_t)n < sizeof(recs))
			break;
	}
sort:
	if (rc == 0) {
		if (cache.n > 0)
			qsort(cache.v, cache.n, sizeof(*cache.v), slot_cmp);
		cache.dir = vg_xstrdup(run_dir);
		cache.stream = stream;
		cache.size = (uint64_t)sb.st_size;
		cache.mtime = sb.st_mtim;
		cache.ino = sb.st_ino;
	}
out:
	if (fd >= 0)
		close(fd);
	free(ipath);
	return rc;
}

int
vg_stream_task_read(const char *run_dir, int task, int stream,
    int (*sink)(void *arg, const void *p, size_t n), void *arg,
    struct vg_err *e)
{
	struct vg_stream_ent h;
	unsigned char *buf = NULL;
	char *fpath = NULL;
	size_t lo, hi, mid;
	int fd = -1, rc;

	if ((rc = cache_load(run_dir, stream, e)) != 0)
		return rc;
	/* The first slot of task. */
	lo = 0;
	hi = cache.n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cache.v[mid].task < (uint32_t)task)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= cache.n || cache.v[lo].task != (uint32_t)task)
		return 0;
	fpath = vg_path_join(run_dir, FRAMES);
	if ((fd = open(fpath, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = vg_err_errno(e, "cannot open '%s'", fpath);
		goto out;
	}
	buf = vg_xmalloc(VG_STREAM_HDR + VG_STREAM_MAX);
	for (; lo < cache.n && cache.v[lo].task == (uint32_t)task; lo++) {
		const struct slot *sl = &cache.v[lo];

		if (pread_full(fd, buf, VG_STREAM_HDR + sl->len, sl->off) !=
		    (ssize_t)(VG_STREAM_HDR + sl->len) ||
		    vg_stream_frame_check(buf, VG_STREAM_HDR + sl->len,
		    &h) <= 0 || h.task != sl->task ||
		    h.stream != (uint32_t)stream) {
			rc = vg_err_set(e, VG_EPARSE, "'%s': the frame at "
			    "offset %llu (task %u) does not check (length "
			    "or checksum)", fpath, (unsigned long long)sl->off,
			    sl->task);
			break;
		}
		if (sink(arg, buf + VG_STREAM_HDR, sl->len) != 0)
			break;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(fpath);
	return rc;
}

/* Keeps the last c->max bytes passed (a sink of vg_stream_read). */
struct tail {
	struct vg_buf	*out;
	size_t		 max;
	size_t		 base;		/* out's length before */
	int		 cut;
};

static int
tail_sink(void *arg, const void *p, size_t n)
{
	struct tail *t = arg;
	size_t have;

	vg_buf_add(t->out, p, n);
	have = t->out->len - t->base;
	if (have > 2 * t->max) {
		memmove(t->out->data + t->base, t->out->data + t->out->len -
		    t->max, t->max);
		t->out->len = t->base + t->max;
		t->out->data[t->out->len] = '\0';
		t->cut = 1;
	}
	return 0;
}

int
vg_task_output_tail(const char *run_dir, int task, int stream,
    size_t max, struct vg_buf *out, int *cut, struct vg_err *e)
{
	struct tail t = { out, max, out->len, 0 };
	struct stat sb;
	char path[PATH_MAX];
	off_t off;
	ssize_t n;
	int fd, rc;

	*cut = 0;
	if (vg_stream_present(run_dir)) {
		rc = vg_stream_task_read(run_dir, task, stream, tail_sink, &t,
		    e);
		if (out->len - t.base > max) {
			memmove(out->data + t.base, out->data + out->len - max,
			    max);
			out->len = t.base + max;
			out->data[out->len] = '\0';
			t.cut = 1;
		}
		*cut = t.cut;
		return rc;
	}
	snprintf(path, sizeof(path), "%s/tasks/%d/%s", run_dir, task,
	    stream == VG_STREAM_STDERR ? "stderr" : "stdout");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : vg_err_errno(e, "cannot open "
		    "'%s'", path);
	rc = 0;
	if (fstat(fd, &sb) == 0 && sb.st_size > 0) {
		off = sb.st_size > (off_t)max ? sb.st_size - (off_t)max : 0;
		*cut = off > 0;
		vg_buf_add(out, "", 0);
		while ((size_t)(sb.st_size - off) > 0) {
			char chunk[8192];

			if ((n = pread(fd, chunk, sizeof(chunk), off)) < 0) {
				rc = vg_err_errno(e, "cannot read '%s'", path);
				break;
			}
			if (n == 0)
				break;
			vg_buf_add(out, chunk, (size_t)n);
			off += n;
		}
	}
	close(fd);
	return rc;
}
