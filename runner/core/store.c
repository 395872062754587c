/*
 * store.c - run state in sqlite: opening with the right modes and pragmas,
 * schema migrations, and the rows of runs, tasks, attempts, events and
 * audit records.
 *
 * The driver writes in short transactions (one per scheduler poll), so
 * WAL with synchronous=NORMAL gives durability against a crash of vigil
 * (the WAL is in the page cache of the kernel) without an fsync per task;
 * only a crash of the machine can lose the last few commits.  Frequent
 * statements are prepared once per connection.
 *
 * States are stored by name (SUCCEEDED, ...) so that the sqlite3 shell
 * shows something readable.  This file knows nothing about manifests or
 * schedulers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/path.h"
#include "runner/core/store.h"

/* Milliseconds to wait for another vigil holding the write lock. */
#define STORE_BUSY_MS	10000

/* Frequent statements, prepared once. */
enum {
	ST_TASK_PUT,
	ST_ATTEMPT_PUT,
	ST_EVENT,
	ST_TASK_ADD,
	ST__COUNT
};

static const char *const stmt_sql[ST__COUNT] = {
	[ST_TASK_PUT] = "UPDATE tasks SET state=?3, attempts=?4, tries=?5,"
	    " exit_code=?6, signal=?7, started=?8, ended=?9, next_at=?10,"
	    " memory=?11, time=?12, timeout=?13, pid=?14, pid_start=?15,"
	    " cancel_req=?16, handle=?17, node=?18, reason=?19"
	    " WHERE run_id=?1 AND idx=?2",
	[ST_ATTEMPT_PUT] = "INSERT OR REPLACE INTO attempts (run_id, idx,"
	    " attempt, state, exit_code, signal, started, ended, pid,"
	    " pid_start, handle, node, reason) VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[ST_EVENT] = "INSERT INTO events (run_id, task, attempt, time, state,"
	    " reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_TASK_ADD] = "INSERT INTO tasks (run_id, idx, matrix, label, state,"
	    " attempts, tries, exit_code, signal, started, ended, next_at,"
	    " memory, time, timeout, pid, pid_start, cancel_req, handle, node,"
	    " reason) VALUES (?1, ?2, ?3, ?4, ?5, 0, 0, -1, 0, 0, 0, 0, ?6,"
	    " ?7, ?8, 0, 0, 0, '', '', ?9)",
};

struct vg_store {
	sqlite3		*db;
	char		*home;
	int		 in_txn;
	sqlite3_stmt	*stmt[ST__COUNT];
};

/* One schema step: applied in order inside one transaction each. */
struct migration {
	int		 version;
	const char	*description;
	const char	*sql;
};

static const struct migration migrations[] = {
	{
		.version = 1,
		.description = "runs, tasks, attempts, events, audit",
		.sql =
		"CREATE TABLE runs ("
		" id TEXT PRIMARY KEY, name TEXT, file TEXT, scheduler TEXT,"
		" backend TEXT, dir TEXT NOT NULL, state TEXT NOT NULL,"
		" reason TEXT, created REAL NOT NULL, ended REAL NOT NULL"
		" DEFAULT 0, pid INTEGER NOT NULL DEFAULT 0, pid_start INTEGER"
		" NOT NULL DEFAULT 0, ntasks INTEGER NOT NULL, manifest TEXT"
		" NOT NULL);"
		"CREATE TABLE tasks ("
		" run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
		" idx INTEGER NOT NULL, matrix TEXT NOT NULL, label TEXT NOT"
		" NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL,"
		" tries INTEGER NOT NULL, exit_code INTEGER NOT NULL,"
		" signal INTEGER NOT NULL, started REAL NOT NULL, ended REAL"
		" NOT NULL, next_at REAL NOT NULL, memory INTEGER NOT NULL,"
		" time INTEGER NOT NULL, timeout REAL NOT NULL, pid INTEGER"
		" NOT NULL, pid_start INTEGER NOT NULL, cancel_req INTEGER NOT"
		" NULL, handle TEXT NOT NULL, node TEXT NOT NULL, reason TEXT"
		" NOT NULL, PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"
		"CREATE TABLE attempts ("
		" run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
		" idx INTEGER NOT NULL, attempt INTEGER NOT NULL, state TEXT"
		" NOT NULL, exit_code INTEGER NOT NULL, signal INTEGER NOT"
		" NULL, started REAL NOT NULL, ended REAL NOT NULL, pid"
		" INTEGER NOT NULL, pid_start INTEGER NOT NULL, handle TEXT,"
		" node TEXT, reason TEXT,"
		" PRIMARY KEY (run_id, idx, attempt)) WITHOUT ROWID;"
		"CREATE TABLE events ("
		" id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES"
		" runs(id) ON DELETE CASCADE, task INTEGER NOT NULL, attempt"
		" INTEGER NOT NULL, time REAL NOT NULL, state TEXT NOT NULL,"
		" reason TEXT);"
		"CREATE INDEX events_run ON events (run_id, task);"
		"CREATE TABLE audit ("
		" id INTEGER PRIMARY KEY, time REAL NOT NULL, run_id TEXT,"
		" task INTEGER NOT NULL, mode TEXT, command TEXT, verdict TEXT"
		" NOT NULL, category TEXT, rule TEXT, reason TEXT);"
		"CREATE INDEX audit_run ON audit (run_id);",
	},
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

/* Fills e from the connection's last error, prefixed by what failed. */
static int
db_err(struct vg_store *s, struct vg_err *e, const char *what)
{
	return vg_err_set(e, VG_ESTATE, "state database '%s/vigil.db': %s: %s",
	    s->home, what, sqlite3_errmsg(s->db));
}

/* Runs SQL without results. */
static int
db_exec(struct vg_store *s, const char *sql, struct vg_err *e)
{
	char *msg = NULL;
	int rc;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	rc = vg_err_set(e, VG_ESTATE, "state database '%s/vigil.db': %s",
	    s->home, msg != NULL ? msg : sqlite3_errmsg(s->db));
	sqlite3_free(msg);
	return rc;
}

/* Prepares sql into *st. */
static int
db_prepare(struct vg_store *s, const char *sql, sqlite3_stmt **st,
    struct vg_err *e)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(s, e, "prepare");
	return 0;
}

/* Returns a cached statement, reset and unbound. */
static sqlite3_stmt *
db_cached(struct vg_store *s, int which, struct vg_err *e)
{
	sqlite3_stmt *st = s->stmt[which];

	if (st == NULL) {
		if (db_prepare(s, stmt_sql[which], &st, e) != 0)
			return NULL;
		s->stmt[which] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Steps a statement that returns no rows. */
static int
db_done(struct vg_store *s, sqlite3_stmt *st, struct vg_err *e,
    const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_err(s, e, what);
	return 0;
}

/* Binds a possibly-NULL string (copied by sqlite). */
static void
bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

/* Duplicates column i as a string, NULL for SQL NULL. */
static char *
col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v != NULL ? vg_xstrdup((const char *)v) : NULL;
}

/* Copies column i into a fixed buffer. */
static void
col_copy(sqlite3_stmt *st, int i, char *dst, size_t n)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	snprintf(dst, n, "%s", v != NULL ? (const char *)v : "");
}

/* Parses a state column; unknown names read as LOST. */
static enum vg_state
col_state(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);
	int s;

	if (v == NULL || (s = vg_state_parse((const char *)v)) < 0)
		return VG_ST_LOST;
	return (enum vg_state)s;
}

/* Brings the schema to VG_STORE_SCHEMA, one transaction per step. */
static int
store_migrate(struct vg_store *s, struct vg_err *e)
{
	sqlite3_stmt *st = NULL;
	int version, rc;
	size_t i;

	if ((rc = db_prepare(s, "PRAGMA user_version", &st, e)) != 0)
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_err(s, e, "reading the schema version");
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > VG_STORE_SCHEMA)
		return vg_err_set(e, VG_ESTATE, "state database "
		    "'%s/vigil.db' has schema %d, newer than this vigil's %d "
		    "(upgrade vigil)", s->home, version, VG_STORE_SCHEMA);
	for (i = 0; i < NMIGRATIONS; i++) {
		const struct migration *m = &migrations[i];
		char sql[256];

		if (m->version <= version)
			continue;
		if ((rc = db_exec(s, "BEGIN IMMEDIATE", e)) != 0)
			return rc;
		/* Another vigil may have migrated while we waited. */
		if ((rc = db_prepare(s, "PRAGMA user_version", &st, e)) != 0)
			goto fail;
		rc = sqlite3_step(st) == SQLITE_ROW ?
		    sqlite3_column_int(st, 0) : -1;
		sqlite3_finalize(st);
		if (rc >= m->version) {
			rc = db_exec(s, "COMMIT", e);
			if (rc != 0)
				return rc;
			continue;
		}
		if (m->version == 1 && (rc = db_exec(s,
		    "CREATE TABLE IF NOT EXISTS migrations (version INTEGER"
		    " PRIMARY KEY, applied REAL NOT NULL, description TEXT)",
		    e)) != 0)
			goto fail;
		if ((rc = db_exec(s, m->sql, e)) != 0)
			goto fail;
		snprintf(sql, sizeof(sql), "INSERT INTO migrations VALUES "
		    "(%d, %.3f, '%s'); PRAGMA user_version = %d", m->version,
		    vg_now(), m->description, m->version);
		if ((rc = db_exec(s, sql, e)) != 0)
			goto fail;
		if ((rc = db_exec(s, "COMMIT", e)) != 0)
			goto fail;
	}
	return 0;
fail:
	(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int
vg_store_open(const char *home, struct vg_store **sp, struct vg_err *e)
{
	struct vg_store *s;
	char *path, *runs;
	int fd, rc;

	*sp = NULL;
	if ((rc = vg_mkdir_p(home, 0700, e)) != 0)
		return rc;
	runs = vg_path_join(home, "runs");
	rc = vg_mkdir_p(runs, 0700, e);
	free(runs);
	if (rc != 0)
		return rc;
	path = vg_path_join(home, "vigil.db");
	/* Create the file ourselves so it never exists with a wider mode;
	 * sqlite gives -wal and -shm the mode of the database file. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = vg_err_errno(e, "cannot open state database '%s'", path);
		free(path);
		return rc;
	}
	close(fd);
	s = vg_xcalloc(1, sizeof(*s));
	s->home = vg_xstrdup(home);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = vg_err_set(e, VG_ESTATE, "cannot open state database "
		    "'%s': %s", path, s->db ? sqlite3_errmsg(s->db) :
		    "out of memory");
		free(path);
		vg_store_close(s);
		return rc;
	}
	free(path);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	if ((rc = db_exec(s, "PRAGMA journal_mode=WAL;"
	    " PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
	    " PRAGMA cache_size=-2000", e)) != 0 ||
	    (rc = store_migrate(s, e)) != 0) {
		vg_store_close(s);
		return rc;
	}
	*sp = s;
	return 0;
}

void
vg_store_close(struct vg_store *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->db != NULL)
		sqlite3_close(s->db);
	free(s->home);
	free(s);
}

const char *
vg_store_home(const struct vg_store *s)
{
	return s->home;
}

int
vg_store_begin(struct vg_store *s, struct vg_err *e)
{
	int rc;

	if ((rc = db_exec(s, "BEGIN IMMEDIATE", e)) == 0)
		s->in_txn = 1;
	return rc;
}

int
vg_store_commit(struct vg_store *s, struct vg_err *e)
{
	int rc;

	if ((rc = db_exec(s, "COMMIT", e)) == 0)
		s->in_txn = 0;
	return rc;
}

void
vg_store_rollback(struct vg_store *s)
{
	if (s->in_txn)
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_txn = 0;
}

void
vg_run_id_make(char *out)
{
	unsigned char rnd[3];
	struct timespec ts;
	struct tm tm;
	size_t i, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		/* No entropy yet: pid and nanoseconds still separate two
		 * runs started in the same second. */
		for (i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)((ts.tv_nsec >> (8 * i)) ^
			    (getpid() >> (4 * i)));
	}
	n = strftime(out, VG_RUN_ID_MAX, "%Y%m%d-%H%M%S", &tm);
	snprintf(out + n, VG_RUN_ID_MAX - n, "-%02x%02x%02x",
	    (unsigned)rnd[0], (unsigned)rnd[1], (unsigned)rnd[2]);
}

void
vg_run_info_release(struct vg_run_info *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->file);
	free(r->scheduler);
	free(r->backend);
	free(r->dir);
	free(r->reason);
	r->name = r->file = r->scheduler = r->backend = r->dir = NULL;
	r->reason = NULL;
}

int
vg_store_run_create(struct vg_store *s, const struct vg_run_info *r,
    const char *manifest_json, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = db_prepare(s, "INSERT INTO runs (id, name, file, scheduler,"
	    " backend, dir, state, created, ntasks, manifest) VALUES (?1, ?2,"
	    " ?3, ?4, ?5, ?6, 'PENDING', ?7, ?8, ?9)", &st, e)) != 0)
		return rc;
	bind_str(st, 1, r->id);
	bind_str(st, 2, r->name);
	bind_str(st, 3, r->file);
	bind_str(st, 4, r->scheduler);
	bind_str(st, 5, r->backend);
	bind_str(st, 6, r->dir);
	sqlite3_bind_double(st, 7, r->created);
	sqlite3_bind_int(st, 8, r->ntasks);
	bind_str(st, 9, manifest_json);
	rc = db_done(s, st, e, "recording a new run");
	sqlite3_finalize(st);
	if (rc == 0)
		rc = vg_store_event(s, r->id, -1, 0, VG_ST_PENDING, "created",
		    e);
	return rc;
}

#define RUN_COLS "id, name, file, scheduler, backend, dir, state, reason," \
	" created, ended, pid, pid_start, ntasks"

/* Reads a row selected with RUN_COLS into r. */
static void
run_from_row(sqlite3_stmt *st, struct vg_run_info *r)
{
	memset(r, 0, sizeof(*r));
	col_copy(st, 0, r->id, sizeof(r->id));
	r->name = col_dup(st, 1);
	r->file = col_dup(st, 2);
	r->scheduler = col_dup(st, 3);
	r->backend = col_dup(st, 4);
	r->dir = col_dup(st, 5);
	r->state = col_state(st, 6);
	r->reason = col_dup(st, 7);
	r->created = sqlite3_column_double(st, 8);
	r->ended = sqlite3_column_double(st, 9);
	r->pid = (pid_t)sqlite3_column_int64(st, 10);
	r->pid_start = (unsigned long long)sqlite3_column_int64(st, 11);
	r->ntasks = sqlite3_column_int(st, 12);
}

/* Fills r->counts from the tasks table. */
static int
run_counts(struct vg_store *s, struct vg_run_info *r, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc, n;

	memset(r->counts, 0, sizeof(r->counts));
	if ((rc = db_prepare(s, "SELECT state, count(*) FROM tasks WHERE"
	    " run_id = ?1 GROUP BY state", &st, e)) != 0)
		return rc;
	bind_str(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n = sqlite3_column_int(st, 1);
		r->counts[col_state(st, 0)] += n;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_err(s, e, "counting tasks");
	return 0;
}

int
vg_store_run_get(struct vg_store *s, const char *id, struct vg_run_info *r,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	memset(r, 0, sizeof(*r));
	if (strcmp(id, "last") == 0)
		rc = db_prepare(s, "SELECT " RUN_COLS " FROM runs"
		    " ORDER BY created DESC, id DESC LIMIT 1", &st, e);
	else
		rc = db_prepare(s, "SELECT " RUN_COLS " FROM runs WHERE"
		    " substr(id, 1, length(?1)) = ?1 ORDER BY id = ?1 DESC"
		    " LIMIT 2", &st, e);
	if (rc != 0)
		return rc;
	bind_str(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (found == 1) {
			/* An exact match sorts first and wins. */
			if (strcmp(r->id, id) == 0)
				break;
			vg_run_info_release(r);
			sqlite3_finalize(st);
			return vg_err_set(e, VG_EINVAL, "run id '%s' is "
			    "ambiguous (give more of it)", id);
		}
		run_from_row(st, r);
		found = 1;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = db_err(s, e, "looking up a run");
		sqlite3_finalize(st);
		vg_run_info_release(r);
		return rc;
	}
	sqlite3_finalize(st);
	if (!found)
		return vg_err_set(e, VG_ENOENT, "no run '%s' (see 'vigil "
		    "status')", id);
	if ((rc = run_counts(s, r, e)) != 0)
		vg_run_info_release(r);
	return rc;
}

int
vg_store_run_manifest(struct vg_store *s, const char *id, struct vg_buf *out,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = db_prepare(s, "SELECT manifest FROM runs WHERE id = ?1",
	    &st, e)) != 0)
		return rc;
	bind_str(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		vg_buf_add(out, sqlite3_column_text(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = vg_err_set(e, VG_ENOENT, "no run '%s'", id);
	else
		rc = db_err(s, e, "reading a manifest");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_run_list(struct vg_store *s,
    int (*cb)(void *arg, const struct vg_run_info *r), void *arg,
    struct vg_err *e)
{
	sqlite3_stmt *st, *cs = NULL;
	struct vg_run_info r;
	int rc, stop = 0;

	if ((rc = db_prepare(s, "SELECT " RUN_COLS " FROM runs"
	    " ORDER BY created DESC, id DESC", &st, e)) != 0)
		return rc;
	if ((rc = db_prepare(s, "SELECT state, count(*) FROM tasks WHERE"
	    " run_id = ?1 GROUP BY state", &cs, e)) != 0) {
		sqlite3_finalize(st);
		return rc;
	}
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		run_from_row(st, &r);
		sqlite3_reset(cs);
		bind_str(cs, 1, r.id);
		while (sqlite3_step(cs) == SQLITE_ROW)
			r.counts[col_state(cs, 0)] += sqlite3_column_int(cs, 1);
		stop = cb(arg, &r);
		vg_run_info_release(&r);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = db_err(s, e, "listing runs");
	else
		rc = 0;
	sqlite3_finalize(cs);
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_run_set_state(struct vg_store *s, const char *id, enum vg_state st_,
    const char *reason, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = db_prepare(s, "UPDATE runs SET state = ?2, reason = ?3,"
	    " ended = ?4 WHERE id = ?1", &st, e)) != 0)
		return rc;
	bind_str(st, 1, id);
	bind_str(st, 2, vg_state_name(st_));
	bind_str(st, 3, reason);
	sqlite3_bind_double(st, 4, vg_state_terminal(st_) ? vg_now() : 0);
	rc = db_done(s, st, e, "updating a run");
	sqlite3_finalize(st);
	if (rc == 0)
		rc = vg_store_event(s, id, -1, 0, st_, reason, e);
	return rc;
}

int
vg_store_run_set_owner(struct vg_store *s, const char *id, pid_t pid,
    unsigned long long pid_start, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = db_prepare(s, "UPDATE runs SET pid = ?2, pid_start = ?3"
	    " WHERE id = ?1", &st, e)) != 0)
		return rc;
	bind_str(st, 1, id);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)pid_start);
	rc = db_done(s, st, e, "updating a run");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_run_delete(struct vg_store *s, const char *id, struct vg_err *e)
{
	static const char *const sql[] = {
		"DELETE FROM events WHERE run_id = ?1",
		"DELETE FROM attempts WHERE run_id = ?1",
		"DELETE FROM tasks WHERE run_id = ?1",
		"DELETE FROM audit WHERE run_id = ?1",
		"DELETE FROM runs WHERE id = ?1",
	};
	sqlite3_stmt *st;
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]) && rc == 0; i++) {
		if ((rc = db_prepare(s, sql[i], &st, e)) != 0)
			break;
		bind_str(st, 1, id);
		rc = db_done(s, st, e, "deleting a run");
		sqlite3_finalize(st);
	}
	return rc;
}

int
vg_store_task_add(struct vg_store *s, const char *run_id,
    const struct vg_task_rec *t, const char *matrix_json, const char *label,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((st = db_cached(s, ST_TASK_ADD, e)) == NULL)
		return e ? e->rc : VG_ESTATE;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, t->index);
	bind_str(st, 3, matrix_json != NULL ? matrix_json : "{}");
	bind_str(st, 4, label != NULL ? label : "");
	bind_str(st, 5, vg_state_name(t->state));
	sqlite3_bind_int64(st, 6, (sqlite3_int64)t->memory);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)t->time);
	sqlite3_bind_double(st, 8, t->timeout);
	bind_str(st, 9, t->reason);
	if ((rc = db_done(s, st, e, "recording a task")) != 0)
		return rc;
	return vg_store_event(s, run_id, t->index, 0, t->state,
	    t->reason[0] != '\0' ? t->reason : NULL, e);
}

int
vg_store_task_put(struct vg_store *s, const char *run_id,
    const struct vg_task_rec *t, struct vg_err *e)
{
	sqlite3_stmt *st;

	if ((st = db_cached(s, ST_TASK_PUT, e)) == NULL)
		return e ? e->rc : VG_ESTATE;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, t->index);
	bind_str(st, 3, vg_state_name(t->state));
	sqlite3_bind_int(st, 4, t->attempts);
	sqlite3_bind_int(st, 5, t->tries);
	sqlite3_bind_int(st, 6, t->exit_code);
	sqlite3_bind_int(st, 7, t->signal);
	sqlite3_bind_double(st, 8, t->started);
	sqlite3_bind_double(st, 9, t->ended);
	sqlite3_bind_double(st, 10, t->next_at);
	sqlite3_bind_int64(st, 11, (sqlite3_int64)t->memory);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)t->time);
	sqlite3_bind_double(st, 13, t->timeout);
	sqlite3_bind_int64(st, 14, t->pid);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)t->pid_start);
	sqlite3_bind_int(st, 16, t->cancel_req);
	bind_str(st, 17, t->handle);
	bind_str(st, 18, t->node);
	bind_str(st, 19, t->reason);
	return db_done(s, st, e, "updating a task");
}

#define TASK_COLS "idx, state, attempts, tries, exit_code, signal, started," \
	" ended, next_at, memory, time, timeout, pid, pid_start, cancel_req," \
	" handle, node, reason, matrix, label"

/* Reads a row selected with TASK_COLS into t. */
static void
task_from_row(sqlite3_stmt *st, struct vg_task_rec *t)
{
	memset(t, 0, sizeof(*t));
	t->index = sqlite3_column_int(st, 0);
	t->state = col_state(st, 1);
	t->attempts = sqlite3_column_int(st, 2);
	t->tries = sqlite3_column_int(st, 3);
	t->exit_code = sqlite3_column_int(st, 4);
	t->signal = sqlite3_column_int(st, 5);
	t->started = sqlite3_column_double(st, 6);
	t->ended = sqlite3_column_double(st, 7);
	t->next_at = sqlite3_column_double(st, 8);
	t->memory = (uint64_t)sqlite3_column_int64(st, 9);
	t->time = (uint64_t)sqlite3_column_int64(st, 10);
	t->timeout = sqlite3_column_double(st, 11);
	t->pid = (pid_t)sqlite3_column_int64(st, 12);
	t->pid_start = (unsigned long long)sqlite3_column_int64(st, 13);
	t->cancel_req = sqlite3_column_int(st, 14);
	col_copy(st, 15, t->handle, sizeof(t->handle));
	col_copy(st, 16, t->node, sizeof(t->node));
	col_copy(st, 17, t->reason, sizeof(t->reason));
}

int
vg_store_tasks_load(struct vg_store *s, const char *run_id,
    struct vg_task_rec **vp, size_t *np, struct vg_err *e)
{
	struct vg_task_rec *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	*vp = NULL;
	*np = 0;
	if ((rc = db_prepare(s, "SELECT " TASK_COLS " FROM tasks WHERE"
	    " run_id = ?1 ORDER BY idx", &st, e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = vg_xgrow(v, &cap, n + 1, sizeof(*v));
		task_from_row(st, &v[n++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return vg_err_set(e, VG_ESTATE, "state database: loading "
		    "tasks of run '%s' failed", run_id);
	}
	*vp = v;
	*np = n;
	return 0;
}

int
vg_store_task_each(struct vg_store *s, const char *run_id, int index,
    int (*cb)(void *arg, const struct vg_task_rec *t,
    const char *matrix_json, const char *label), void *arg,
    struct vg_err *e)
{
	struct vg_task_rec t;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = db_prepare(s, "SELECT " TASK_COLS " FROM tasks WHERE"
	    " run_id = ?1 AND (?2 < 0 OR idx = ?2) ORDER BY idx", &st,
	    e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		task_from_row(st, &t);
		stop = cb(arg, &t, (const char *)sqlite3_column_text(st, 18),
		    (const char *)sqlite3_column_text(st, 19));
	}
	if (!stop && rc != SQLITE_DONE)
		rc = db_err(s, e, "reading tasks");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_task_request_cancel(struct vg_store *s, const char *run_id,
    int index, int *n, struct vg_err *e)
{
	sqlite3_stmt *st;
	char sql[256];
	int rc;

	if (n != NULL)
		*n = 0;
	snprintf(sql, sizeof(sql), "UPDATE tasks SET cancel_req = 1 WHERE"
	    " run_id = ?1 AND (?2 < 0 OR idx = ?2) AND state NOT IN (%s)",
	    "'SUCCEEDED','FAILED','TIMEOUT','OOM','CANCELLED','DENIED',"
	    "'LOST','NODE_FAIL','PREEMPTED','BOOT_FAIL','DEADLINE',"
	    "'BACKEND_ERROR'");
	if ((rc = db_prepare(s, sql, &st, e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	rc = db_done(s, st, e, "marking tasks for cancellation");
	sqlite3_finalize(st);
	if (rc == 0 && n != NULL)
		*n = sqlite3_changes(s->db);
	return rc;
}

int
vg_store_attempt_put(struct vg_store *s, const char *run_id,
    const struct vg_attempt_rec *a, struct vg_err *e)
{
	sqlite3_stmt *st;

	if ((st = db_cached(s, ST_ATTEMPT_PUT, e)) == NULL)
		return e ? e->rc : VG_ESTATE;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, a->index);
	sqlite3_bind_int(st, 3, a->attempt);
	bind_str(st, 4, vg_state_name(a->state));
	sqlite3_bind_int(st, 5, a->exit_code);
	sqlite3_bind_int(st, 6, a->signal);
	sqlite3_bind_double(st, 7, a->started);
	sqlite3_bind_double(st, 8, a->ended);
	sqlite3_bind_int64(st, 9, a->pid);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)a->pid_start);
	bind_str(st, 11, a->handle);
	bind_str(st, 12, a->node);
	bind_str(st, 13, a->reason);
	return db_done(s, st, e, "recording an attempt");
}

int
vg_store_attempt_each(struct vg_store *s, const char *run_id, int index,
    int (*cb)(void *arg, const struct vg_attempt_rec *a), void *arg,
    struct vg_err *e)
{
	struct vg_attempt_rec a;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = db_prepare(s, "SELECT idx, attempt, state, exit_code,"
	    " signal, started, ended, pid, pid_start, handle, node, reason"
	    " FROM attempts WHERE run_id = ?1 AND idx = ?2 ORDER BY attempt",
	    &st, e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&a, 0, sizeof(a));
		a.index = sqlite3_column_int(st, 0);
		a.attempt = sqlite3_column_int(st, 1);
		a.state = col_state(st, 2);
		a.exit_code = sqlite3_column_int(st, 3);
		a.signal = sqlite3_column_int(st, 4);
		a.started = sqlite3_column_double(st, 5);
		a.ended = sqlite3_column_double(st, 6);
		a.pid = (pid_t)sqlite3_column_int64(st, 7);
		a.pid_start = (unsigned long long)sqlite3_column_int64(st, 8);
		a.handle = (const char *)sqlite3_column_text(st, 9);
		a.node = (const char *)sqlite3_column_text(st, 10);
		a.reason = (const char *)sqlite3_column_text(st, 11);
		stop = cb(arg, &a);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = db_err(s, e, "reading attempts");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_event(struct vg_store *s, const char *run_id, int task,
    int attempt, enum vg_state st_, const char *reason, struct vg_err *e)
{
	sqlite3_stmt *st;

	if ((st = db_cached(s, ST_EVENT, e)) == NULL)
		return e ? e->rc : VG_ESTATE;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, task);
	sqlite3_bind_int(st, 3, attempt);
	sqlite3_bind_double(st, 4, vg_now());
	bind_str(st, 5, vg_state_name(st_));
	bind_str(st, 6, reason);
	return db_done(s, st, e, "recording an event");
}

int
vg_store_event_each(struct vg_store *s, const char *run_id, int task,
    int (*cb)(void *arg, const struct vg_event_rec *ev), void *arg,
    struct vg_err *e)
{
	struct vg_event_rec ev;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = db_prepare(s, "SELECT time, task, attempt, state, reason"
	    /* -2: VG_STORE_EVENTS_ALL */
	    " FROM events WHERE run_id = ?1 AND (?2 = -2 OR task = ?2)"
	    " ORDER BY id", &st, e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, task);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		ev.time = sqlite3_column_double(st, 0);
		ev.task = sqlite3_column_int(st, 1);
		ev.attempt = sqlite3_column_int(st, 2);
		ev.state = col_state(st, 3);
		ev.reason = (const char *)sqlite3_column_text(st, 4);
		stop = cb(arg, &ev);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = db_err(s, e, "reading events");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_audit(struct vg_store *s, const struct vg_audit_rec *rec,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = db_prepare(s, "INSERT INTO audit (time, run_id, task, mode,"
	    " command, verdict, category, rule, reason) VALUES (?1, ?2, ?3,"
	    " ?4, ?5, ?6, ?7, ?8, ?9)", &st, e)) != 0)
		return rc;
	sqlite3_bind_double(st, 1, rec->time > 0 ? rec->time : vg_now());
	bind_str(st, 2, rec->run_id);
	sqlite3_bind_int(st, 3, rec->task_index);
	bind_str(st, 4, rec->mode);
	bind_str(st, 5, rec->command);
	bind_str(st, 6, rec->verdict != NULL ? rec->verdict : "deny");
	bind_str(st, 7, rec->category);
	bind_str(st, 8, rec->rule);
	bind_str(st, 9, rec->reason);
	rc = db_done(s, st, e, "recording a policy decision");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_audit_each(struct vg_store *s, const char *run_id,
    int (*cb)(void *arg, const struct vg_audit_rec *rec), void *arg,
    struct vg_err *e)
{
	struct vg_audit_rec r;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = db_prepare(s, "SELECT time, run_id, task, mode, command,"
	    " verdict, category, rule, reason FROM audit WHERE ?1 IS NULL OR"
	    " run_id = ?1 ORDER BY id", &st, e)) != 0)
		return rc;
	bind_str(st, 1, run_id);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.time = sqlite3_column_double(st, 0);
		r.run_id = (const char *)sqlite3_column_text(st, 1);
		r.task_index = sqlite3_column_int(st, 2);
		r.mode = (const char *)sqlite3_column_text(st, 3);
		r.command = (const char *)sqlite3_column_text(st, 4);
		r.verdict = (const char *)sqlite3_column_text(st, 5);
		r.category = (const char *)sqlite3_column_text(st, 6);
		r.rule = (const char *)sqlite3_column_text(st, 7);
		r.reason = (const char *)sqlite3_column_text(st, 8);
		stop = cb(arg, &r);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = db_err(s, e, "reading the audit log");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}
