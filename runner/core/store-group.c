/*
 * store-group.c - the state database's run groups and notification
 * claims (migration 4): which group a run belongs to and who holds it,
 * the live runs of a group, and the once-per-end claim of a run's
 * notification (runner/core/store.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/path.h"
#include "common/str.h"
#include "runner/core/store-int.h"

int
vg_store_group_set(struct vg_store *s, const char *run_id, const char *grp,
    const char *holder, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = vg_sq_prepare(s, "INSERT INTO run_groups (run_id, grp, holder)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT (run_id) DO UPDATE SET"
	    " grp = excluded.grp, holder = excluded.holder", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	vg_sq_bind_str(st, 2, grp);
	vg_sq_bind_str(st, 3, holder);
	rc = vg_sq_done(s, st, e, "recording a run's group");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_group_get(struct vg_store *s, const char *run_id, char **grp,
    char **holder, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*grp = NULL;
	if (holder != NULL)
		*holder = NULL;
	if ((rc = vg_sq_prepare(s, "SELECT grp, holder FROM run_groups WHERE"
	    " run_id = ?1", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*grp = vg_sq_col_dup(st, 0);
		if (holder != NULL)
			*holder = vg_sq_col_dup(st, 1);
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = vg_sq_err(s, e, "reading a run's group");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_group_open(struct vg_store *s, const char *grp,
    int (*cb)(void *arg, const char *run_id), void *arg, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare(s, "SELECT g.run_id FROM run_groups g JOIN runs r"
	    " ON r.id = g.run_id WHERE g.grp = ?1 AND r.state IN"
	    " ('PENDING', 'RUNNING') ORDER BY r.created DESC", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, grp);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
		stop = cb(arg, (const char *)sqlite3_column_text(st, 0));
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "listing the runs of a group");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_notify_claim(struct vg_store *s, const char *run_id, int *claimed,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*claimed = 0;
	/* The claim is the end time it was made for: a run retried later
	 * ends again and may be claimed again, the same end never twice. */
	if ((rc = vg_sq_prepare(s, "INSERT INTO run_groups (run_id, grp,"
	    " notified) SELECT id, coalesce(name, ''), ended FROM runs WHERE"
	    " id = ?1 AND ended > 0 ON CONFLICT (run_id) DO UPDATE SET"
	    " notified = excluded.notified WHERE notified <"
	    " excluded.notified", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	rc = vg_sq_done(s, st, e, "claiming a run's notification");
	sqlite3_finalize(st);
	if (rc == 0)
		*claimed = sqlite3_changes(s->db) > 0;
	return rc;
}
