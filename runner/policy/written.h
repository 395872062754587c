/*
 * written.h - files a command writes, then runs (written.c): copies keep
 * their source's record, and make, just and crontab read the commands
 * of the files the command wrote.
 */
#ifndef VG_POLICY_WRITTEN_H
#define VG_POLICY_WRITTEN_H

#include "runner/policy/actx.h"

enum { PL_WRITTEN_MAKE, PL_WRITTEN_JUST, PL_WRITTEN_CRONTAB };

/* Notes dest as a copy of src (cp, mv, install, scp). */
void	pl_file_copied(struct pl_an *an, const struct pl_field *src,
	    const struct pl_field *dest);
/* Judges the commands of the file of kind c reads, when it was written
 * earlier in the command (or, for crontab -, comes on stdin). */
void	pl_run_written(struct pl_an *an, struct pl_cmd *c, int kind);
/* make and just: the recipes of a Makefile or justfile written earlier. */
void	pl_build_files(struct pl_an *an, struct pl_cmd *c);

#endif
