/*
 * stream.h - `output: stream`: the outputs of all tasks of a run in a few
 * append-only framed files instead of files per task (docs/state.md has
 * the format and the crash contract).
 *
 *   RUN/stream/0.frames   frames: a 24-byte header (magic "VGF1", task,
 *                         attempt, stream, length, CRC-32C of header and
 *                         payload) and the payload, one after another
 *   RUN/stream/0.index    one 32-byte record per frame (task, attempt,
 *                         stream, length, offset, CRC-32C)
 *
 * One writer per driving vigil: a thread that reads the pipes the tasks
 * write to and appends frames.  Readers (vigil logs, report, notify)
 * read the index and take the frames of one task, checked.
 */
#ifndef VG_STREAM_H
#define VG_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

#define VG_STREAM_HDR		24		/* frame header bytes */
#define VG_STREAM_REC		32		/* index record bytes */
#define VG_STREAM_MAX		(1u << 20)	/* payload limit of a frame */
#define VG_STREAM_CHUNK		65536		/* what the writer frames */

enum vg_stream_kind {
	VG_STREAM_STDOUT = 1,
	VG_STREAM_STDERR = 2,
};

/* One frame's header, or one index record. */
struct vg_stream_ent {
	uint32_t	task;
	uint32_t	attempt;
	uint32_t	stream;		/* enum vg_stream_kind */
	uint32_t	len;		/* payload bytes */
	uint64_t	off;		/* frame's offset in N.frames (index) */
};

/* What vg_stream_recover found and did. */
struct vg_stream_fix {
	size_t		frames;		/* valid frames kept */
	uint64_t	cut;		/* bytes of a torn tail cut */
	uint64_t	damaged;	/* bytes of damaged frames skipped */
	int		reindexed;	/* the index was rebuilt */
};

struct vg_stream_writer;
struct vg_stream_src;

/* CRC-32C (Castagnoli) of p, continuing from crc (0 to start). */
uint32_t vg_stream_crc(uint32_t crc, const void *p, size_t n);

/* Encodes a frame header for f and the payload p into hdr. */
void	vg_stream_frame_hdr(unsigned char hdr[VG_STREAM_HDR],
	    const struct vg_stream_ent *f, const void *p);
/* Checks the frame at p (n bytes available): its size (> 0) with f
 * filled, 0 when n is too short to tell (a torn tail at end of file), or
 * -1 when it is not a valid frame. */
long	vg_stream_frame_check(const unsigned char *p, size_t n,
	    struct vg_stream_ent *f);
/* Encodes and decodes index records; decode returns 0, or -1 when the
 * record is not valid. */
void	vg_stream_rec_put(unsigned char rec[VG_STREAM_REC],
	    const struct vg_stream_ent *f);
int	vg_stream_rec_get(const unsigned char rec[VG_STREAM_REC],
	    struct vg_stream_ent *f);

/* Makes the stream files of run_dir whole after a crash: a torn last
 * frame is cut, damaged frames in the middle are left out of the index,
 * and the index is rebuilt when it does not match the frames. */
int	vg_stream_recover(const char *run_dir, struct vg_stream_fix *fix,
	    struct vg_err *e);

/* Recovers, opens the files and starts the writer thread. */
int	vg_stream_writer_open(const char *run_dir, struct vg_stream_writer **w,
	    struct vg_stream_fix *fix, struct vg_err *e);
/* Makes the two pipes of one attempt: fds gets their write ends (the
 * task's stdout and stderr), kept open until vg_stream_detach. */
int	vg_stream_attach(struct vg_stream_writer *w, int task, int attempt,
	    int fds[2], struct vg_stream_src **src, struct vg_err *e);
/* Closes the write ends and waits (at most a few seconds) until what the
 * attempt wrote is framed; frees src. */
void	vg_stream_detach(struct vg_stream_writer *w, struct vg_stream_src *src);
/* Waits for the attempts still attached, stops the thread, closes the
 * files; returns the first write error the thread met. */
int	vg_stream_writer_close(struct vg_stream_writer *w, struct vg_err *e);

/* 1 when run_dir's output is streamed (RUN/stream/0.index exists). */
int	vg_stream_present(const char *run_dir);

/* A reader of one task's output of one stream, in order. */
struct vg_stream_reader {
	int		ifd;		/* the index */
	int		ffd;		/* the frames */
	uint64_t	ipos;		/* next index record to read */
	int		task;
	int		stream;
	uint32_t	attempt;	/* of the frame passed to sink last */
	char		path[4096];	/* of the frames, for messages */
};

int	vg_stream_reader_open(struct vg_stream_reader *r, const char *run_dir,
	    int task, int stream, struct vg_err *e);
/* Passes the payloads of the task's frames indexed since the last call
 * to sink (which returns non-zero to stop); stops quietly at a record
 * not yet whole (a live run) and fails on a frame that does not check. */
int	vg_stream_read(struct vg_stream_reader *r,
	    int (*sink)(void *arg, const void *p, size_t n), void *arg,
	    struct vg_err *e);
void	vg_stream_reader_close(struct vg_stream_reader *r);

/* Passes every frame of task's stream to sink, in order, from an index
 * loaded once per run and stream (for reading many tasks of a run). */
int	vg_stream_task_read(const char *run_dir, int task, int stream,
	    int (*sink)(void *arg, const void *p, size_t n), void *arg,
	    struct vg_err *e);

/* Forgets the index vg_stream_task_read loaded (its files were changed
 * within one timestamp tick, keeping their size and inode). */
void	vg_stream_cache_drop(void);

/* The last max bytes of task's stdout or stderr (enum vg_stream_kind),
 * from the stream when the run has one, else from RUN/tasks/TASK/NAME;
 * *cut 1 when there was more before.  Nothing when there is no output. */
int	vg_task_output_tail(const char *run_dir, int task, int stream,
	    size_t max, struct vg_buf *out, int *cut, struct vg_err *e);

#endif
