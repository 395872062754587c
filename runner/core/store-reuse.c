/*
 * store-reuse.c - the state database's results kept for reuse (migration
 * 13; runner/core/reuse.h): entries by key, the key of each task with
 * what went into it, the shared parts of descriptions, and the content
 * hashes of input files while their stat is unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/path.h"
#include "common/str.h"
#include "runner/core/store-int.h"

static const char *const reuse_sql[RS__COUNT] = {
	[RS_GET] = "SELECT key, run_id, idx, attempt, created, dir, files"
	    " FROM reuse WHERE key = ?1",
	[RS_PUT] = "INSERT OR REPLACE INTO reuse (key, run_id, idx, attempt,"
	    " created, dir, files) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[RS_KEY_PUT] = "INSERT OR REPLACE INTO task_keys (run_id, idx, key,"
	    " description, parts, reused) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[RS_KEY_GET] = "SELECT k.key, k.description || coalesce(p.text, ''),"
	    " k.reused FROM task_keys k LEFT JOIN reuse_parts p ON p.id ="
	    " k.parts WHERE k.run_id = ?1 AND k.idx = ?2",
};

/* Statement which of the reuse statements, reset and unbound. */
static int
reuse_stmt(struct vg_store *s, int which, sqlite3_stmt **st,
    struct vg_err *e)
{
	int rc;

	if (s->reuse[which] == NULL && (rc = vg_sq_prepare(s, reuse_sql[which],
	    &s->reuse[which], e)) != 0)
		return rc;
	*st = s->reuse[which];
	sqlite3_reset(*st);
	sqlite3_clear_bindings(*st);
	return 0;
}

/* Fills r from the row st stands on (columns of reuse_sql[RS_GET]). */
static void
reuse_row(sqlite3_stmt *st, struct vg_reuse_rec *r)
{
	vg_sq_col_copy(st, 0, r->key, sizeof(r->key));
	vg_sq_col_copy(st, 1, r->run_id, sizeof(r->run_id));
	r->index = sqlite3_column_int(st, 2);
	r->attempt = sqlite3_column_int(st, 3);
	r->created = sqlite3_column_double(st, 4);
	free(r->dir);
	free(r->files);
	r->dir = vg_sq_col_dup(st, 5);
	r->files = vg_sq_col_dup(st, 6);
}

void
vg_reuse_rec_release(struct vg_reuse_rec *r)
{
	free(r->dir);
	free(r->files);
	r->dir = r->files = NULL;
}

int
vg_store_reuse_put(struct vg_store *s, const struct vg_reuse_rec *r,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = reuse_stmt(s, RS_PUT, &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, r->key);
	vg_sq_bind_str(st, 2, r->run_id);
	sqlite3_bind_int(st, 3, r->index);
	sqlite3_bind_int(st, 4, r->attempt);
	sqlite3_bind_double(st, 5, r->created);
	vg_sq_bind_str(st, 6, r->dir);
	vg_sq_bind_str(st, 7, r->files != NULL ? r->files : "");
	rc = vg_sq_done(s, st, e, "recording a result kept for reuse");
	sqlite3_reset(st);
	return rc;
}

int
vg_store_reuse_get(struct vg_store *s, const char *key,
    struct vg_reuse_rec *r, int *found, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	if ((rc = reuse_stmt(s, RS_GET, &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		reuse_row(st, r);
		*found = 1;
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = vg_sq_err(s, e, "reading a result kept for reuse");
	sqlite3_reset(st);
	return rc;
}

int
vg_store_reuse_each(struct vg_store *s, const char *run_id, int index,
    int (*cb)(void *arg, const struct vg_reuse_rec *r), void *arg,
    struct vg_err *e)
{
	struct vg_reuse_rec r = { .dir = NULL };
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare(s, "SELECT key, run_id, idx, attempt, created,"
	    " dir, files FROM reuse WHERE (?1 IS NULL OR run_id = ?1) AND"
	    " (?2 < 0 OR idx = ?2) ORDER BY created, run_id, idx", &st,
	    e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		reuse_row(st, &r);
		stop = cb(arg, &r);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "listing the results kept for reuse");
	else
		rc = 0;
	vg_reuse_rec_release(&r);
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_reuse_drop(struct vg_store *s, const char *run_id, int index,
    long long *n, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if (n != NULL)
		*n = 0;
	if ((rc = vg_sq_prepare(s, "DELETE FROM reuse WHERE (?1 IS NULL OR"
	    " run_id = ?1) AND (?2 < 0 OR idx = ?2)", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	rc = vg_sq_done(s, st, e, "dropping results kept for reuse");
	sqlite3_finalize(st);
	if (rc == 0 && n != NULL)
		*n = sqlite3_changes(s->db);
	return rc;
}

int
vg_store_reuse_runs(struct vg_store *s, struct vg_strv *out,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = vg_sq_prepare(s, "SELECT DISTINCT run_id FROM reuse", &st,
	    e)) != 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		vg_strv_push(out, (const char *)sqlite3_column_text(st, 0));
	rc = rc == SQLITE_DONE ? 0 : vg_sq_err(s, e, "listing the runs kept "
	    "for reuse");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_reuse_part_put(struct vg_store *s, const char *id, const char *text,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = vg_sq_prepare(s, "INSERT OR IGNORE INTO reuse_parts (id, text)"
	    " VALUES (?1, ?2)", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	vg_sq_bind_str(st, 2, text);
	rc = vg_sq_done(s, st, e, "recording the shared lines of reuse keys");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_task_key_put(struct vg_store *s, const char *run_id, int index,
    const char *key, const char *description, const char *parts,
    const char *reused, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = reuse_stmt(s, RS_KEY_PUT, &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	vg_sq_bind_str(st, 3, key);
	vg_sq_bind_str(st, 4, description);
	vg_sq_bind_str(st, 5, parts);
	vg_sq_bind_str(st, 6, reused);
	rc = vg_sq_done(s, st, e, "recording a task's reuse key");
	sqlite3_reset(st);
	return rc;
}

int
vg_store_task_key_get(struct vg_store *s, const char *run_id, int index,
    struct vg_buf *key, struct vg_buf *description, struct vg_buf *reused,
    int *found, struct vg_err *e)
{
	struct vg_buf *out[3] = { key, description, reused };
	sqlite3_stmt *st;
	const unsigned char *v;
	int rc, i;

	*found = 0;
	if ((rc = reuse_stmt(s, RS_KEY_GET, &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		for (i = 0; i < 3; i++)
			if (out[i] != NULL && (v = sqlite3_column_text(st,
			    i)) != NULL)
				vg_buf_adds(out[i], (const char *)v);
		*found = 1;
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = vg_sq_err(s, e, "reading a task's reuse key");
	sqlite3_reset(st);
	return rc;
}

int
vg_store_reuse_stat_get(struct vg_store *s, const char *path,
    const struct vg_reuse_stat *want, char hash[33], int *found,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*found = 0;
	if ((rc = vg_sq_prepare(s, "SELECT hash FROM reuse_stat WHERE path = ?1"
	    " AND dev = ?2 AND ino = ?3 AND size = ?4 AND mtime = ?5", &st,
	    e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, path);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)want->dev);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)want->ino);
	sqlite3_bind_int64(st, 4, want->size);
	sqlite3_bind_int64(st, 5, want->mtime_ns);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		vg_sq_col_copy(st, 0, hash, 33);
		*found = 1;
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = vg_sq_err(s, e, "reading the stat cache of inputs");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_reuse_stat_put(struct vg_store *s, const char *path,
    const struct vg_reuse_stat *at, const char *hash, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = vg_sq_prepare(s, "INSERT OR REPLACE INTO reuse_stat (path,"
	    " dev, ino, size, mtime, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	    &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, path);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)at->dev);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)at->ino);
	sqlite3_bind_int64(st, 4, at->size);
	sqlite3_bind_int64(st, 5, at->mtime_ns);
	vg_sq_bind_str(st, 6, hash);
	rc = vg_sq_done(s, st, e, "recording the stat cache of inputs");
	sqlite3_finalize(st);
	return rc;
}
