/*
 * store-session.c - the state database's sessions (runner/core/store.h,
 * runner/core/session.h): a session's row, its listing, its move from
 * one state to another, the last use and the numbering of its jobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/path.h"
#include "common/str.h"
#include "runner/core/store-int.h"

#define SES(n, t, f, fl)	COL(struct vg_session_rec, n, t, f, fl)
static const struct col session_cols[] = {
	SES("id", COL_CHARS, id, COL_KEY),
	SES("name", COL_CHARS, name, 0),
	SES("backend", COL_CHARS, backend, 0),
	SES("dir", COL_CHARS, dir, 0),
	SES("state", COL_CHARS, state, 0),
	SES("reason", COL_CHARS, reason, 0),
	SES("created", COL_REAL, created, 0),
	SES("last_used", COL_REAL, last_used, 0),
	SES("ended", COL_REAL, ended, 0),
	SES("idle_timeout", COL_REAL, idle_timeout, 0),
	SES("max_age", COL_REAL, max_age, 0),
	SES("mode", COL_CHARS, mode, 0),
	SES("policy", COL_CHARS, policy, 0),
	SES("handle", COL_CHARS, handle, 0),
	SES("root", COL_CHARS, root, 0),
	SES("owner", COL_CHARS, owner, 0),
	SES("jobs", COL_INT, jobs, 0),
	SES("manifest", COL_DUP, manifest, 0),
};
#undef SES
static const struct row_def session_def = ROW_DEF("sessions", session_cols);

/* Runs one statement of sql with text parameters (NULL-terminated). */
static int
session_stmt(struct vg_store *s, const char *sql, const char *what,
    struct vg_err *e, ...)
{
	sqlite3_stmt *st;
	const char *v;
	va_list ap;
	int rc, i = 1;

	if ((rc = vg_sq_prepare(s, sql, &st, e)) != 0)
		return rc;
	va_start(ap, e);
	while ((v = va_arg(ap, const char *)) != NULL)
		vg_sq_bind_str(st, i++, v);
	va_end(ap);
	rc = vg_sq_done(s, st, e, what);
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_session_put(struct vg_store *s, const struct vg_session_rec *r,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = vg_sq_prepare_gen(s, vg_sq_insert(&session_def,
	    "INSERT OR REPLACE"), &st, e)) != 0)
		return rc;
	vg_sq_row_bind(st, &session_def, r, 0);
	rc = vg_sq_done(s, st, e, "recording a session");
	sqlite3_finalize(st);
	return rc;
}

/* Reads the first rows (at most 2) of a session query with key as ?1
 * into r; *n gets how many there were. */
static int
session_query(struct vg_store *s, const char *tail, const char *key,
    struct vg_session_rec *r, int *n, struct vg_err *e)
{
	struct vg_session_rec tmp;
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&session_def, tail), &st,
	    e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, key);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &session_def, *n == 0 ? r : &tmp, sizeof(tmp));
		if (*n > 0)
			free(tmp.manifest);
		(*n)++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return vg_sq_err(s, e, "reading a session");
	return 0;
}

int
vg_store_session_get(struct vg_store *s, const char *key,
    struct vg_session_rec *r, struct vg_err *e)
{
	int rc, n;

	memset(r, 0, sizeof(*r));
	rc = session_query(s, " WHERE id = ?1 OR (name = ?1 AND name != ''"
	    " AND ended = 0) ORDER BY id = ?1 DESC LIMIT 1", key, r, &n, e);
	if (rc == 0 && n == 0)
		rc = session_query(s, " WHERE substr(id, 1, length(?1)) = ?1"
		    " LIMIT 2", key, r, &n, e);
	if (rc == 0 && n > 1)
		rc = vg_err_set(e, VG_EINVAL, "session '%s' is ambiguous "
		    "(give more of the id)", key);
	else if (rc == 0 && n == 0)
		rc = vg_err_set(e, VG_ENOENT, "no session '%s' (vigil session "
		    "list shows them)", key);
	if (rc != 0) {
		free(r->manifest);
		memset(r, 0, sizeof(*r));
	}
	return rc;
}

int
vg_store_session_list(struct vg_store *s,
    int (*cb)(void *arg, const struct vg_session_rec *r), void *arg,
    struct vg_err *e)
{
	struct vg_session_rec r;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&session_def,
	    " ORDER BY created DESC, id DESC"), &st, e)) != 0)
		return rc;
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &session_def, &r, sizeof(r));
		free(r.manifest);
		r.manifest = NULL;
		stop = cb(arg, &r);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "reading sessions");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_session_move(struct vg_store *s, const char *id, const char *from,
    const char *to, const char *reason, int *won, struct vg_err *e)
{
	char ended[32];
	int rc, open_ = strcmp(to, "active") == 0 || strcmp(to, "starting") ==
	    0 || strcmp(to, "closing") == 0;

	snprintf(ended, sizeof(ended), "%.6f", open_ ? 0.0 : vg_now());
	rc = session_stmt(s, "UPDATE sessions SET state = ?2, reason ="
	    " CASE WHEN ?3 != '' THEN ?3 ELSE reason END, ended = CASE WHEN ?5 + 0 > 0 THEN ?5 + 0"
	    " ELSE ended END WHERE id = ?1 AND instr(' ' || ?4 || ' ',"
	    " ' ' || state || ' ') > 0", "moving a session", e, id, to,
	    reason != NULL ? reason : "", from, ended, (const char *)NULL);
	if (won != NULL)
		*won = rc == 0 && sqlite3_changes(s->db) > 0;
	return rc;
}

int
vg_store_session_touch(struct vg_store *s, const char *id, double t,
    struct vg_err *e)
{
	char v[32];

	snprintf(v, sizeof(v), "%.6f", t);
	return session_stmt(s, "UPDATE sessions SET last_used = max(last_used,"
	    " ?2 + 0) WHERE id = ?1", "touching a session", e, id, v,
	    (const char *)NULL);
}

int
vg_store_session_next_job(struct vg_store *s, const char *id, int *job,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*job = 0;
	if ((rc = vg_sq_prepare(s, "UPDATE sessions SET jobs = jobs + 1 WHERE"
	    " id = ?1 RETURNING jobs", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*job = sqlite3_column_int(st, 0);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    vg_sq_err(s, e, "numbering a job");
	sqlite3_finalize(st);
	if (rc == 0 && *job == 0)
		rc = vg_err_set(e, VG_ENOENT, "no session '%s'", id);
	return rc;
}

int
vg_store_session_delete(struct vg_store *s, const char *id, struct vg_err *e)
{
	return session_stmt(s, "DELETE FROM sessions WHERE id = ?1",
	    "deleting a session", e, id, (const char *)NULL);
}
