/*
 * store.c - run state in sqlite: opening with the right modes and pragmas,
 * schema migrations, and the rows of runs, tasks, attempts, events and
 * audit records (grouped decisions packed into one row each, see
 * vg_store_audit_many; the codec of a packed row is audit-pack.c).
 *
 * The driver writes in short transactions (one per scheduler poll), so
 * WAL with synchronous=NORMAL gives durability against a crash of vigil
 * (the WAL is in the page cache of the kernel) without an fsync per task;
 * only a crash of the machine can lose the last few commits.  Frequent
 * statements are prepared once per connection.
 *
 * Each row type (runs, tasks, attempts, events, audit) is a C record and a
 * table of its columns with their offsets in it; the INSERT, UPDATE and
 * SELECT texts are generated from those tables and the values bound and
 * read by them, so that adding a column means one line in a table (and a
 * migration).
 *
 * States are stored by name (SUCCEEDED, ...) so that the sqlite3 shell
 * shows something readable.  This file knows nothing about manifests or
 * schedulers.  Run groups and notification claims are in store-group.c,
 * sessions in store-session.c, results kept for reuse in store-reuse.c;
 * what they share with this file is store-int.h.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/adopt.h"
#include "common/beneath.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/core/audit-pack.h"
#include "runner/core/store-int.h"

/* Milliseconds to wait for another vigil holding the write lock. */
#define STORE_BUSY_MS	10000



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
	{
		.version = 2,
		.description = "GPU ids of each attempt",
		.sql =
		"ALTER TABLE attempts ADD COLUMN gpus TEXT;"
		"ALTER TABLE tasks ADD COLUMN gpus TEXT NOT NULL DEFAULT '';",
	},
	{
		.version = 3,
		.description = "attempt resource usage",
		/* NULL: unknown (the backend or scheduler could not tell). */
		.sql =
		"ALTER TABLE attempts ADD COLUMN cpu_user REAL;"
		"ALTER TABLE attempts ADD COLUMN cpu_sys REAL;"
		"ALTER TABLE attempts ADD COLUMN max_rss INTEGER;"
		"ALTER TABLE attempts ADD COLUMN alloc_cpus INTEGER;"
		"ALTER TABLE attempts ADD COLUMN alloc_gpus INTEGER;"
		"ALTER TABLE attempts ADD COLUMN alloc_mem INTEGER;",
	},
	{
		.version = 4,
		.description = "run groups and notification claims",
		.sql =
		"CREATE TABLE run_groups ("
		" run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE"
		" CASCADE, grp TEXT NOT NULL, holder TEXT, notified REAL NOT"
		" NULL DEFAULT 0) WITHOUT ROWID;"
		"CREATE INDEX run_groups_grp ON run_groups (grp);",
	},
	{
		.version = 5,
		.description = "packed audit records",
		/* n decisions of first..last in one row (see
		 * runner/core/audit-pack.c). */
		.sql =
		"CREATE TABLE audit_pack ("
		" id INTEGER PRIMARY KEY, first REAL NOT NULL, last REAL NOT"
		" NULL, run_id TEXT, n INTEGER NOT NULL, data BLOB NOT NULL);"
		"CREATE INDEX audit_pack_run ON audit_pack (run_id);",
	},
	{
		.version = 6,
		.description = "sessions",
		.sql =
		"CREATE TABLE sessions ("
		" id TEXT PRIMARY KEY, name TEXT NOT NULL, backend TEXT NOT"
		" NULL, dir TEXT NOT NULL, state TEXT NOT NULL, reason TEXT"
		" NOT NULL, created REAL NOT NULL, last_used REAL NOT NULL,"
		" ended REAL NOT NULL, idle_timeout REAL NOT NULL, max_age"
		" REAL NOT NULL, mode TEXT NOT NULL, policy TEXT NOT NULL,"
		" handle TEXT NOT NULL, root TEXT NOT NULL, owner TEXT NOT"
		" NULL, jobs INTEGER NOT NULL, manifest TEXT NOT NULL);",
	},
	{
		.version = 7,
		.description = "task counts by state from an index",
		/* vigil status counts a run's tasks by state (GROUP BY):
		 * from this covering index, not the rows. */
		.sql =
		"CREATE INDEX tasks_state ON tasks (run_id, state);",
	},
	{
		.version = 8,
		.description = "task counts by state kept by triggers",
		/* Counting a run's tasks by state reads as many index
		 * entries as it has tasks (30 ms at 100,000): the counts
		 * are kept instead, by triggers on every change of a task's
		 * state, so vigil status reads a row per state. */
		.sql =
		"CREATE TABLE task_counts ("
		" run_id TEXT NOT NULL, state TEXT NOT NULL, n INTEGER NOT"
		" NULL, PRIMARY KEY (run_id, state)) WITHOUT ROWID;"
		"INSERT INTO task_counts SELECT run_id, state, count(*) FROM"
		" tasks GROUP BY run_id, state;"
		"CREATE TRIGGER task_counts_add AFTER INSERT ON tasks BEGIN"
		" INSERT INTO task_counts VALUES (NEW.run_id, NEW.state, 1)"
		" ON CONFLICT (run_id, state) DO UPDATE SET n = n + 1; END;"
		"CREATE TRIGGER task_counts_move AFTER UPDATE OF state ON"
		" tasks WHEN OLD.state IS NOT NEW.state BEGIN"
		" UPDATE task_counts SET n = n - 1 WHERE run_id = OLD.run_id"
		" AND state = OLD.state;"
		" INSERT INTO task_counts VALUES (NEW.run_id, NEW.state, 1)"
		" ON CONFLICT (run_id, state) DO UPDATE SET n = n + 1; END;"
		"CREATE TRIGGER task_counts_drop AFTER DELETE ON tasks BEGIN"
		" UPDATE task_counts SET n = n - 1 WHERE run_id = OLD.run_id"
		" AND state = OLD.state; END;"
		"CREATE TRIGGER task_counts_run AFTER DELETE ON runs BEGIN"
		" DELETE FROM task_counts WHERE run_id = OLD.id; END;",
	},
	{
		.version = 9,
		.description = "the host of the driver of a run",
		/* A pid names a driver only on its own host: with a home
		 * on a shared file system, two login nodes see one run. */
		.sql =
		"ALTER TABLE runs ADD COLUMN host TEXT;",
	},
	{
		.version = 10,
		.description = "the executor slot of each attempt",
		/* 0: not known (attempts recorded before, and schedulers
		 * that do not number slots); the report draws its lanes
		 * from it. */
		.sql =
		"ALTER TABLE attempts ADD COLUMN slot INTEGER NOT NULL"
		" DEFAULT 0;",
	},
	{
		.version = 11,
		.description = "where a run was made",
		/* NULL for the runs made before: they are resumed where
		 * vigil is started, as they always were. */
		.sql =
		"ALTER TABLE runs ADD COLUMN origin TEXT;",
	},
	{
		.version = 12,
		.description = "where the output of each attempt ends",
		/* -1 for the attempts made before: their outputs cannot
		 * be told apart, and are shown joined, as they were. */
		.sql =
		"ALTER TABLE attempts ADD COLUMN out_end INTEGER NOT NULL"
		" DEFAULT -1;"
		"ALTER TABLE attempts ADD COLUMN err_end INTEGER NOT NULL"
		" DEFAULT -1;",
	},
	{
		.version = 13,
		.description = "results kept for reuse",
		/* reuse: a key's successful attempt and the files of its
		 * task directory (runner/core/reuse.h); task_keys: the key
		 * of each task of a run with what went into it, and the
		 * attempt a CACHED task reused, its lines of its own and
		 * the id of the lines every task of the drive shares
		 * (reuse_parts, kept once); reuse_stat: the content hash
		 * of an input file while its stat is unchanged. */
		.sql =
		"CREATE TABLE reuse ("
		" key TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES"
		" runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL, attempt"
		" INTEGER NOT NULL, created REAL NOT NULL, dir TEXT NOT NULL,"
		" files TEXT NOT NULL) WITHOUT ROWID;"
		"CREATE INDEX reuse_run ON reuse (run_id, idx);"
		"CREATE TABLE task_keys ("
		" run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
		" idx INTEGER NOT NULL, key TEXT NOT NULL, description TEXT"
		" NOT NULL, parts TEXT, reused TEXT, PRIMARY KEY (run_id,"
		" idx)) WITHOUT ROWID;"
		"CREATE TABLE reuse_parts ("
		" id TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;"
		"CREATE TABLE reuse_stat ("
		" path TEXT PRIMARY KEY, dev INTEGER NOT NULL, ino INTEGER NOT"
		" NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, hash"
		" TEXT NOT NULL) WITHOUT ROWID;",
	},
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

/* Fills e from the connection's last error, prefixed by what failed. */
int
vg_sq_err(struct vg_store *s, struct vg_err *e, const char *what)
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
int
vg_sq_prepare(struct vg_store *s, const char *sql, sqlite3_stmt **st,
    struct vg_err *e)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return vg_sq_err(s, e, "prepare");
	return 0;
}

/* Steps a statement that returns no rows. */
int
vg_sq_done(struct vg_store *s, sqlite3_stmt *st, struct vg_err *e,
    const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return vg_sq_err(s, e, what);
	return 0;
}

/* Binds a possibly-NULL string (copied by sqlite). */
void
vg_sq_bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

/* Duplicates column i as a string, NULL for SQL NULL. */
char *
vg_sq_col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v != NULL ? vg_xstrdup((const char *)v) : NULL;
}

/* Copies column i into a fixed buffer. */
void
vg_sq_col_copy(sqlite3_stmt *st, int i, char *dst, size_t n)
{
	vg_strlcpy(dst, (const char *)sqlite3_column_text(st, i), n);
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

/* A runs row: the run and the manifest stored with it. */
struct run_row {
	struct vg_run_info	 r;
	const char		*manifest;
};

#define RUN(n, t, f, fl)	COL(struct run_row, n, t, f, fl)
static const struct col run_cols[] = {
	RUN("id", COL_CHARS, r.id, COL_KEY),
	RUN("name", COL_DUP, r.name, 0),
	RUN("file", COL_DUP, r.file, 0),
	RUN("scheduler", COL_DUP, r.scheduler, 0),
	RUN("backend", COL_DUP, r.backend, 0),
	RUN("dir", COL_DUP, r.dir, 0),
	RUN("state", COL_STATE, r.state, 0),
	RUN("reason", COL_DUP, r.reason, 0),
	RUN("created", COL_REAL, r.created, 0),
	RUN("ended", COL_REAL, r.ended, 0),
	RUN("pid", COL_PID, r.pid, 0),
	RUN("pid_start", COL_ULL, r.pid_start, 0),
	RUN("host", COL_DUP, r.host, 0),
	RUN("ntasks", COL_INT, r.ntasks, 0),
	RUN("origin", COL_DUP, r.origin, COL_ONCE),
	RUN("manifest", COL_TEXT, manifest, COL_NOREAD),
};
#undef RUN

/* A tasks row: the task with its run and matrix. */
struct task_row {
	const char		*run_id;
	struct vg_task_rec	 t;
	const char		*matrix;
	const char		*label;
};

#define TASK(n, t, f, fl)	COL(struct task_row, n, t, f, fl)
static const struct col task_cols[] = {
	TASK("run_id", COL_TEXT, run_id, COL_KEY | COL_NOREAD),
	TASK("idx", COL_INT, t.index, COL_KEY),
	TASK("matrix", COL_TEXT, matrix, COL_ONCE),
	TASK("label", COL_TEXT, label, COL_ONCE),
	TASK("state", COL_STATE, t.state, 0),
	TASK("attempts", COL_INT, t.attempts, 0),
	TASK("tries", COL_INT, t.tries, 0),
	TASK("exit_code", COL_INT, t.exit_code, 0),
	TASK("signal", COL_INT, t.signal, 0),
	TASK("started", COL_REAL, t.started, 0),
	TASK("ended", COL_REAL, t.ended, 0),
	TASK("next_at", COL_REAL, t.next_at, 0),
	TASK("memory", COL_U64, t.memory, 0),
	TASK("time", COL_U64, t.time, 0),
	TASK("timeout", COL_REAL, t.timeout, 0),
	TASK("pid", COL_PID, t.pid, 0),
	TASK("pid_start", COL_ULL, t.pid_start, 0),
	TASK("cancel_req", COL_INT, t.cancel_req, 0),
	TASK("handle", COL_CHARS, t.handle, 0),
	TASK("node", COL_CHARS, t.node, 0),
	TASK("reason", COL_CHARS, t.reason, 0),
	TASK("gpus", COL_CHARS, t.gpus, 0),
};
#undef TASK

/* An attempts row. */
struct attempt_row {
	const char		*run_id;
	struct vg_attempt_rec	 a;
};

#define ATT(n, t, f, fl)	COL(struct attempt_row, n, t, f, fl)
#define USE(n, t, f, b) { .name = (n), .type = (t), \
	.off = offsetof(struct attempt_row, a.usage.f), \
	.size = sizeof(((struct attempt_row *)0)->a.usage.f), \
	.flags = COL_OPT, .bit = (b), \
	.known_off = offsetof(struct attempt_row, a.usage.known) }
static const struct col attempt_cols[] = {
	ATT("run_id", COL_TEXT, run_id, COL_KEY | COL_NOREAD),
	ATT("idx", COL_INT, a.index, COL_KEY),
	ATT("attempt", COL_INT, a.attempt, COL_KEY),
	ATT("state", COL_STATE, a.state, 0),
	ATT("exit_code", COL_INT, a.exit_code, 0),
	ATT("signal", COL_INT, a.signal, 0),
	ATT("started", COL_REAL, a.started, 0),
	ATT("ended", COL_REAL, a.ended, 0),
	ATT("pid", COL_PID, a.pid, 0),
	ATT("pid_start", COL_ULL, a.pid_start, 0),
	ATT("handle", COL_TEXT, a.handle, 0),
	ATT("node", COL_TEXT, a.node, 0),
	ATT("reason", COL_TEXT, a.reason, 0),
	ATT("gpus", COL_TEXT, a.gpus, 0),
	ATT("slot", COL_INT, a.slot, 0),
	ATT("out_end", COL_I64, a.out_end, 0),
	ATT("err_end", COL_I64, a.err_end, 0),
	USE("cpu_user", COL_REAL, cpu_user, VG_USAGE_CPU),
	USE("cpu_sys", COL_REAL, cpu_sys, VG_USAGE_CPU),
	USE("max_rss", COL_I64, max_rss, VG_USAGE_RSS),
	USE("alloc_cpus", COL_INT, cpus, VG_USAGE_CPUS),
	USE("alloc_gpus", COL_INT, gpus, VG_USAGE_GPUS),
	USE("alloc_mem", COL_I64, mem_limit, VG_USAGE_MEM),
};
#undef USE
#undef ATT

/* An events row. */
struct event_row {
	const char		*run_id;
	struct vg_event_rec	 ev;
};

#define EV(n, t, f, fl)	COL(struct event_row, n, t, f, fl)
static const struct col event_cols[] = {
	EV("run_id", COL_TEXT, run_id, COL_NOREAD),
	EV("task", COL_INT, ev.task, 0),
	EV("attempt", COL_INT, ev.attempt, 0),
	EV("time", COL_REAL, ev.time, 0),
	EV("state", COL_STATE, ev.state, 0),
	EV("reason", COL_TEXT, ev.reason, 0),
};
#undef EV

#define AUD(n, t, f, fl)	COL(struct vg_audit_rec, n, t, f, fl)
static const struct col audit_cols[] = {
	AUD("time", COL_REAL, time, 0),
	AUD("run_id", COL_TEXT, run_id, 0),
	AUD("task", COL_INT, task_index, 0),
	AUD("mode", COL_TEXT, mode, 0),
	AUD("command", COL_TEXT, command, 0),
	AUD("verdict", COL_TEXT, verdict, 0),
	AUD("category", COL_TEXT, category, 0),
	AUD("rule", COL_TEXT, rule, 0),
	AUD("reason", COL_TEXT, reason, 0),
};
#undef AUD

static const struct row_def run_def = ROW_DEF("runs", run_cols);
static const struct row_def task_def = ROW_DEF("tasks", task_cols);
static const struct row_def attempt_def = ROW_DEF("attempts", attempt_cols);
static const struct row_def event_def = ROW_DEF("events", event_cols);
static const struct row_def audit_def = ROW_DEF("audit", audit_cols);

/* How a column list is written by cols_list. */
enum col_list {
	LIST_NAMES,		/* a, b */
	LIST_PARAMS,		/* ?1, ?2 */
	LIST_ASSIGN,		/* a = ?1, b = ?2 */
};

/*
 * Appends the columns of d that have a flag of want (0: any) and none of
 * skip to b, separated by sep, written as how says.
 */
static void
cols_list(struct vg_buf *b, const struct row_def *d, unsigned want,
    unsigned skip, const char *sep, enum col_list how)
{
	const struct col *c;
	size_t i;
	int first = 1;

	for (i = 0; i < d->ncols; i++) {
		c = &d->cols[i];
		if ((want != 0 && (c->flags & want) == 0) ||
		    (c->flags & skip) != 0)
			continue;
		if (!first)
			vg_buf_adds(b, sep);
		first = 0;
		if (how != LIST_PARAMS)
			vg_buf_adds(b, c->name);
		if (how == LIST_ASSIGN)
			vg_buf_adds(b, " = ");
		if (how != LIST_NAMES)
			vg_buf_printf(b, "?%zu", i + 1);
	}
}

/* "SELECT <readable columns> FROM <table><tail>" (caller frees). */
char *
vg_sq_select(const struct row_def *d, const char *tail)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_adds(&b, "SELECT ");
	cols_list(&b, d, 0, COL_NOREAD, ", ", LIST_NAMES);
	vg_buf_printf(&b, " FROM %s%s", d->table, tail);
	return vg_buf_detach(&b);
}

/* "<verb> INTO <table> (<columns>) VALUES (?1, ...)" (caller frees). */
char *
vg_sq_insert(const struct row_def *d, const char *verb)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_printf(&b, "%s INTO %s (", verb, d->table);
	cols_list(&b, d, 0, 0, ", ", LIST_NAMES);
	vg_buf_adds(&b, ") VALUES (");
	cols_list(&b, d, 0, 0, ", ", LIST_PARAMS);
	vg_buf_adds(&b, ")");
	return vg_buf_detach(&b);
}

/* "UPDATE <table> SET <columns> WHERE <keys>" (caller frees). */
static char *
sql_update(const struct row_def *d)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_buf_printf(&b, "UPDATE %s SET ", d->table);
	cols_list(&b, d, 0, COL_KEY | COL_ONCE, ", ", LIST_ASSIGN);
	vg_buf_adds(&b, " WHERE ");
	cols_list(&b, d, COL_KEY, 0, " AND ", LIST_ASSIGN);
	return vg_buf_detach(&b);
}

/* Binds the columns of record rec (a row of d) without a flag of skip. */
void
vg_sq_row_bind(sqlite3_stmt *st, const struct row_def *d, const void *rec,
    unsigned skip)
{
	const struct col *c;
	const char *p;
	size_t i;
	int k;

	for (i = 0; i < d->ncols; i++) {
		c = &d->cols[i];
		if ((c->flags & skip) != 0)
			continue;
		p = (const char *)rec + c->off;
		k = (int)i + 1;
		if ((c->flags & COL_OPT) != 0 && !(*(const unsigned *)
		    ((const char *)rec + c->known_off) & c->bit)) {
			sqlite3_bind_null(st, k);
			continue;
		}
		switch (c->type) {
		case COL_INT:
			sqlite3_bind_int(st, k, *(const int *)p);
			break;
		case COL_PID:
			sqlite3_bind_int64(st, k, *(const pid_t *)p);
			break;
		case COL_U64:
			sqlite3_bind_int64(st, k,
			    (sqlite3_int64)*(const uint64_t *)p);
			break;
		case COL_ULL:
			sqlite3_bind_int64(st, k,
			    (sqlite3_int64)*(const unsigned long long *)p);
			break;
		case COL_REAL:
			sqlite3_bind_double(st, k, *(const double *)p);
			break;
		case COL_STATE:
			vg_sq_bind_str(st, k,
			    vg_state_name(*(const enum vg_state *)p));
			break;
		case COL_TEXT:
			vg_sq_bind_str(st, k, *(const char *const *)p);
			break;
		case COL_DUP:
			vg_sq_bind_str(st, k, *(char *const *)p);
			break;
		case COL_CHARS:
			vg_sq_bind_str(st, k, p);
			break;
		case COL_I64:
			sqlite3_bind_int64(st, k, *(const long long *)p);
			break;
		}
	}
}

/*
 * Reads the current row of a statement made by vg_sq_select(d) into rec
 * (size bytes, zeroed first).
 */
void
vg_sq_row_read(sqlite3_stmt *st, const struct row_def *d, void *rec,
    size_t size)
{
	const struct col *c;
	char *p;
	size_t i;
	int k = 0;

	memset(rec, 0, size);
	for (i = 0; i < d->ncols; i++) {
		c = &d->cols[i];
		if ((c->flags & COL_NOREAD) != 0)
			continue;
		p = (char *)rec + c->off;
		if ((c->flags & COL_OPT) != 0) {
			if (sqlite3_column_type(st, k) == SQLITE_NULL) {
				k++;
				continue;
			}
			*(unsigned *)((char *)rec + c->known_off) |= c->bit;
		}
		switch (c->type) {
		case COL_INT:
			*(int *)p = sqlite3_column_int(st, k);
			break;
		case COL_PID:
			*(pid_t *)p = (pid_t)sqlite3_column_int64(st, k);
			break;
		case COL_U64:
			*(uint64_t *)p = (uint64_t)sqlite3_column_int64(st, k);
			break;
		case COL_ULL:
			*(unsigned long long *)p =
			    (unsigned long long)sqlite3_column_int64(st, k);
			break;
		case COL_REAL:
			*(double *)p = sqlite3_column_double(st, k);
			break;
		case COL_STATE:
			*(enum vg_state *)p = col_state(st, k);
			break;
		case COL_TEXT:
			*(const char **)p =
			    (const char *)sqlite3_column_text(st, k);
			break;
		case COL_DUP:
			*(char **)p = vg_sq_col_dup(st, k);
			break;
		case COL_CHARS:
			vg_sq_col_copy(st, k, p, c->size);
			break;
		case COL_I64:
			*(long long *)p = sqlite3_column_int64(st, k);
			break;
		}
		k++;
	}
}

/* Prepares sql (generated; freed here) into *st. */
int
vg_sq_prepare_gen(struct vg_store *s, char *sql, sqlite3_stmt **st,
    struct vg_err *e)
{
	int rc = vg_sq_prepare(s, sql, st, e);

	free(sql);
	return rc;
}

/* What each cached statement is: an insert, replace or update of a row. */
static const struct {
	const struct row_def	*def;
	const char		*verb;	/* NULL: UPDATE by the keys */
} stmt_def[ST__COUNT] = {
	[ST_TASK_PUT] = { .def = &task_def, .verb = NULL },
	[ST_ATTEMPT_PUT] = { .def = &attempt_def, .verb = "INSERT OR REPLACE" },
	[ST_EVENT] = { .def = &event_def, .verb = "INSERT" },
	[ST_TASK_ADD] = { .def = &task_def, .verb = "INSERT" },
};

/* Returns a cached statement, reset and unbound. */
static sqlite3_stmt *
db_cached(struct vg_store *s, int which, struct vg_err *e)
{
	sqlite3_stmt *st = s->stmt[which];
	char *sql;

	if (st == NULL) {
		sql = stmt_def[which].verb != NULL ?
		    vg_sq_insert(stmt_def[which].def, stmt_def[which].verb) :
		    sql_update(stmt_def[which].def);
		if (vg_sq_prepare_gen(s, sql, &st, e) != 0)
			return NULL;
		s->stmt[which] = st;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/*
 * Writes record rec (a row of the statement's table) with cached
 * statement which; an UPDATE leaves the COL_ONCE columns alone.
 */
static int
row_put(struct vg_store *s, int which, const void *rec, const char *what,
    struct vg_err *e)
{
	sqlite3_stmt *st;

	if ((st = db_cached(s, which, e)) == NULL)
		return e ? e->rc : VG_ESTATE;
	vg_sq_row_bind(st, stmt_def[which].def, rec,
	    stmt_def[which].verb == NULL ? COL_ONCE : 0);
	return vg_sq_done(s, st, e, what);
}

/*
 * Before migrating from version: the steps recorded as applied must be
 * this vigil's steps of the same numbers.  A database another build
 * migrated with other steps under those numbers would otherwise fail
 * half-way with sqlite's own words ("duplicate column name").
 */
static int
history_check(struct vg_store *s, int version, struct vg_err *e)
{
	sqlite3_stmt *st = NULL;
	const char *have;
	int rc = 0, v;
	size_t i;

	if (sqlite3_prepare_v2(s->db, "SELECT version, description FROM "
	    "migrations ORDER BY version", -1, &st, NULL) != SQLITE_OK)
		return 0;	/* no record to compare */
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		v = sqlite3_column_int(st, 0);
		have = (const char *)sqlite3_column_text(st, 1);
		for (i = 0; i < NMIGRATIONS && v <= version; i++)
			if (migrations[i].version == v && (have == NULL ||
			    strcmp(have, migrations[i].description) != 0))
				rc = vg_err_set(e, VG_ESTATE, "state database "
				    "'%s/vigil.db' was migrated by another "
				    "build of vigil: its step %d is '%s', this "
				    "vigil's is '%s'; use another VIGIL_HOME "
				    "(or that build)", s->home, v,
				    have != NULL ? have : "", migrations[i].
				    description);
	}
	sqlite3_finalize(st);
	return rc;
}

/* Brings the schema to VG_STORE_SCHEMA, one transaction per step. */
static int
store_migrate(struct vg_store *s, struct vg_err *e)
{
	sqlite3_stmt *st = NULL;
	int version, rc;
	size_t i;

	if ((rc = vg_sq_prepare(s, "PRAGMA user_version", &st, e)) != 0)
		return rc;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return vg_sq_err(s, e, "reading the schema version");
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > VG_STORE_SCHEMA)
		return vg_err_set(e, VG_ESTATE, "state database "
		    "'%s/vigil.db' has schema %d, newer than this vigil's %d "
		    "(upgrade vigil)", s->home, version, VG_STORE_SCHEMA);
	if (version > 0 && version < VG_STORE_SCHEMA &&
	    (rc = history_check(s, version, e)) != 0)
		return rc;
	for (i = 0; i < NMIGRATIONS; i++) {
		const struct migration *m = &migrations[i];
		char sql[256];

		if (m->version <= version)
			continue;
		if ((rc = db_exec(s, "BEGIN IMMEDIATE", e)) != 0)
			return rc;
		/* Another vigil may have migrated while we waited. */
		if ((rc = vg_sq_prepare(s, "PRAGMA user_version", &st, e)) != 0)
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

/*
 * Sets the journal mode and brings the schema up to date.  Two first
 * opens of a new database at once both read it in rollback mode and then
 * both want the exclusive lock that switching to WAL takes: sqlite sees
 * the deadlock and fails one of them at once with "database is locked",
 * without waiting in the busy handler.  So the set-up runs under an
 * exclusive flock(2) on the home directory (flock and sqlite's fcntl
 * locks do not interact), and openers take turns; once the database is
 * in WAL mode the lock is held for the pragmas and one read of the
 * schema version.
 */
static int
store_setup(struct vg_store *s, struct vg_err *e)
{
	int fd, rc;

	fd = open(s->home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return vg_err_errno(e, "cannot open state directory '%s'",
		    s->home);
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			rc = vg_err_errno(e, "cannot lock state directory "
			    "'%s'", s->home);
			close(fd);
			return rc;
		}
	}
	if ((rc = db_exec(s, "PRAGMA journal_mode=WAL;"
	    " PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
	    " PRAGMA cache_size=-2000", e)) == 0)
		rc = store_migrate(s, e);
	close(fd);
	return rc;
}

int
vg_store_open(const char *home, struct vg_store **sp, struct vg_err *e)
{
	struct vg_store *s;
	char *path;
	int fd, hfd, rc;

	*sp = NULL;
	/* The home is the user's own, and so is every directory on its
	 * way (common/adopt.h): another user who made it first, or could
	 * rename what is in it, could plant the database.  The path is
	 * then stable: no one else can change what it names, so sqlite
	 * may open it by name. */
	if ((hfd = vg_adopt_dir(home, 0700, VG_ADOPT_CREATE, "VIGIL_HOME",
	    e)) < 0)
		return hfd;
	if ((fd = vg_beneath_mkdirs(hfd, "runs", 0700, "VIGIL_HOME", e)) < 0)
		rc = fd;
	else {
		rc = vg_beneath_check(fd, geteuid(), 022, "VIGIL_HOME's "
		    "runs directory", e);
		close(fd);
	}
	if (rc != 0) {
		close(hfd);
		return rc;
	}
	path = vg_path_join(home, "vigil.db");
	/* Create the file ourselves so it never exists with a wider mode;
	 * sqlite gives -wal and -shm the mode of the database file.  A
	 * database someone else wrote is never read. */
	fd = vg_beneath_file(hfd, "vigil.db", O_RDWR | O_CREAT, 0600,
	    "VIGIL_HOME", e);
	close(hfd);
	if (fd >= 0 && vg_beneath_check(fd, geteuid(), 022, "the state "
	    "database", e) != 0) {
		close(fd);
		fd = e->rc;
	}
	if (fd < 0) {
		rc = fd;
		vg_err_prefix(e, "state database '%s': ", path);
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
	rc = store_setup(s, e);
	if (rc != 0) {
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
	sqlite3_finalize(s->audit_pack);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	for (i = 0; i < RS__COUNT; i++)
		sqlite3_finalize(s->reuse[i]);
	vg_audit_packer_release(&s->pk);
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

/* Runs sql through the statement *st keeps (prepared at first use: a
 * run's many transactions parse BEGIN and COMMIT once), as db_exec. */
static int
db_exec_kept(struct vg_store *s, sqlite3_stmt **st, const char *sql,
    struct vg_err *e)
{
	int rc;

	if (*st == NULL && sqlite3_prepare_v2(s->db, sql, -1, st, NULL) !=
	    SQLITE_OK)
		return db_exec(s, sql, e);
	rc = sqlite3_step(*st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
		(void)sqlite3_reset(*st);
		return 0;
	}
	rc = vg_err_set(e, VG_ESTATE, "state database '%s/vigil.db': %s",
	    s->home, sqlite3_errmsg(s->db));
	(void)sqlite3_reset(*st);
	return rc;
}

int
vg_store_begin(struct vg_store *s, struct vg_err *e)
{
	int rc;

	if ((rc = db_exec_kept(s, &s->begin, "BEGIN IMMEDIATE", e)) == 0)
		s->in_txn = 1;
	return rc;
}

int
vg_store_commit(struct vg_store *s, struct vg_err *e)
{
	int rc;

	if ((rc = db_exec_kept(s, &s->commit, "COMMIT", e)) == 0)
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
	free(r->host);
	free(r->origin);
	r->name = r->file = r->scheduler = r->backend = r->dir = NULL;
	r->reason = r->host = r->origin = NULL;
}

int
vg_store_run_create(struct vg_store *s, const struct vg_run_info *r,
    const char *manifest_json, struct vg_err *e)
{
	struct run_row row = { .r = *r, .manifest = manifest_json };
	sqlite3_stmt *st;
	int rc;

	/* A new run: nothing but what describes it is taken from r. */
	row.r.state = VG_ST_PENDING;
	row.r.reason = NULL;
	row.r.ended = 0;
	row.r.pid = 0;
	row.r.pid_start = 0;
	if ((rc = vg_sq_prepare_gen(s, vg_sq_insert(&run_def, "INSERT"), &st,
	    e)) != 0)
		return rc;
	vg_sq_row_bind(st, &run_def, &row, 0);
	rc = vg_sq_done(s, st, e, "recording a new run");
	sqlite3_finalize(st);
	if (rc == 0)
		rc = vg_store_event(s, r->id, -1, 0, VG_ST_PENDING, "created",
		    e);
	return rc;
}

/* Fills r->counts from the counts kept by state (migration 8). */
static int
run_counts(struct vg_store *s, struct vg_run_info *r, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc, n;

	memset(r->counts, 0, sizeof(r->counts));
	if ((rc = vg_sq_prepare(s, "SELECT state, n FROM task_counts WHERE"
	    " run_id = ?1", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n = sqlite3_column_int(st, 1);
		r->counts[col_state(st, 0)] += n;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return vg_sq_err(s, e, "counting tasks");
	return 0;
}

int
vg_store_run_get(struct vg_store *s, const char *id, struct vg_run_info *r,
    struct vg_err *e)
{
	struct run_row row;
	sqlite3_stmt *st;
	int rc, found = 0;

	memset(r, 0, sizeof(*r));
	if (strcmp(id, "last") == 0)
		rc = vg_sq_prepare_gen(s, vg_sq_select(&run_def,
		    " ORDER BY created DESC, id DESC LIMIT 1"), &st, e);
	else
		rc = vg_sq_prepare_gen(s, vg_sq_select(&run_def, " WHERE"
		    " substr(id, 1, length(?1)) = ?1 ORDER BY id = ?1 DESC"
		    " LIMIT 2"), &st, e);
	if (rc != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
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
		vg_sq_row_read(st, &run_def, &row, sizeof(row));
		*r = row.r;
		found = 1;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = vg_sq_err(s, e, "looking up a run");
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

	if ((rc = vg_sq_prepare(s, "SELECT manifest FROM runs WHERE id = ?1",
	    &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		vg_buf_add(out, sqlite3_column_text(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
		rc = 0;
	} else if (rc == SQLITE_DONE)
		rc = vg_err_set(e, VG_ENOENT, "no run '%s'", id);
	else
		rc = vg_sq_err(s, e, "reading a manifest");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_run_list(struct vg_store *s,
    int (*cb)(void *arg, const struct vg_run_info *r), void *arg,
    struct vg_err *e)
{
	sqlite3_stmt *st, *cs = NULL;
	struct run_row row;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&run_def,
	    " ORDER BY created DESC, id DESC"), &st, e)) != 0)
		return rc;
	if ((rc = vg_sq_prepare(s, "SELECT state, n FROM task_counts WHERE"
	    " run_id = ?1", &cs, e)) != 0) {
		sqlite3_finalize(st);
		return rc;
	}
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &run_def, &row, sizeof(row));
		sqlite3_reset(cs);
		vg_sq_bind_str(cs, 1, row.r.id);
		while (sqlite3_step(cs) == SQLITE_ROW)
			row.r.counts[col_state(cs, 0)] +=
			    sqlite3_column_int(cs, 1);
		stop = cb(arg, &row.r);
		vg_run_info_release(&row.r);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "listing runs");
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

	if ((rc = vg_sq_prepare(s, "UPDATE runs SET state = ?2, reason = ?3,"
	    " ended = ?4 WHERE id = ?1", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	vg_sq_bind_str(st, 2, vg_state_name(st_));
	vg_sq_bind_str(st, 3, reason);
	sqlite3_bind_double(st, 4, vg_state_terminal(st_) ? vg_now() : 0);
	rc = vg_sq_done(s, st, e, "updating a run");
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

	if ((rc = vg_sq_prepare(s, "UPDATE runs SET pid = ?2, pid_start = ?3"
	    " WHERE id = ?1", &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)pid_start);
	rc = vg_sq_done(s, st, e, "updating a run");
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_run_claim(struct vg_store *s, const char *id, pid_t was_pid,
    unsigned long long was_start, pid_t pid, unsigned long long pid_start,
    const char *host, int *won, struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	*won = 0;
	/* One statement: sqlite takes the write lock before it reads the
	 * row it changes, so of two claims from the same owner only one
	 * finds it still there. */
	if ((rc = vg_sq_prepare(s, "UPDATE runs SET pid = ?4, pid_start = ?5,"
	    " host = ?6 WHERE id = ?1 AND pid = ?2 AND pid_start = ?3", &st,
	    e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, id);
	sqlite3_bind_int64(st, 2, was_pid);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)was_start);
	sqlite3_bind_int64(st, 4, pid);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)pid_start);
	vg_sq_bind_str(st, 6, host);
	if ((rc = vg_sq_done(s, st, e, "claiming a run")) == 0)
		*won = sqlite3_changes(s->db) == 1;
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
		if ((rc = vg_sq_prepare(s, sql[i], &st, e)) != 0)
			break;
		vg_sq_bind_str(st, 1, id);
		rc = vg_sq_done(s, st, e, "deleting a run");
		sqlite3_finalize(st);
	}
	return rc;
}

int
vg_store_task_add(struct vg_store *s, const char *run_id,
    const struct vg_task_rec *t, const char *matrix_json, const char *label,
    struct vg_err *e)
{
	struct task_row row;
	int rc;

	/* A new task has not run: only its state, resources and reason
	 * are taken from t. */
	memset(&row, 0, sizeof(row));
	row.run_id = run_id;
	row.matrix = matrix_json != NULL ? matrix_json : "{}";
	row.label = label != NULL ? label : "";
	row.t.index = t->index;
	row.t.state = t->state;
	row.t.exit_code = -1;
	row.t.memory = t->memory;
	row.t.time = t->time;
	row.t.timeout = t->timeout;
	memcpy(row.t.reason, t->reason, sizeof(row.t.reason));
	if ((rc = row_put(s, ST_TASK_ADD, &row, "recording a task", e)) != 0)
		return rc;
	return vg_store_event(s, run_id, t->index, 0, t->state,
	    t->reason[0] != '\0' ? t->reason : NULL, e);
}

int
vg_store_task_put(struct vg_store *s, const char *run_id,
    const struct vg_task_rec *t, struct vg_err *e)
{
	struct task_row row = { .run_id = run_id, .t = *t };

	return row_put(s, ST_TASK_PUT, &row, "updating a task", e);
}

int
vg_store_tasks_load(struct vg_store *s, const char *run_id,
    struct vg_task_rec **vp, size_t *np, struct vg_err *e)
{
	struct vg_task_rec *v = NULL;
	struct task_row row;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	*vp = NULL;
	*np = 0;
	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&task_def, " WHERE"
	    " run_id = ?1 ORDER BY idx"), &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = vg_xgrow(v, &cap, n + 1, sizeof(*v));
		vg_sq_row_read(st, &task_def, &row, sizeof(row));
		v[n++] = row.t;
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

/* Hands each task row of statement st (a vg_sq_select of task_def) to cb
 * until it returns non-zero; finalizes st. */
static int
task_rows(struct vg_store *s, sqlite3_stmt *st,
    int (*cb)(void *arg, const struct vg_task_rec *t,
    const char *matrix_json, const char *label), void *arg,
    struct vg_err *e)
{
	struct task_row row;
	int rc, stop = 0;

	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &task_def, &row, sizeof(row));
		stop = cb(arg, &row.t, row.matrix, row.label);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "reading tasks");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_task_each(struct vg_store *s, const char *run_id, int index,
    int (*cb)(void *arg, const struct vg_task_rec *t,
    const char *matrix_json, const char *label), void *arg,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	int rc;

	/* Two forms: an OR of the key would make sqlite scan the run. */
	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&task_def, index < 0 ?
	    " WHERE run_id = ?1 AND ?2 < 0 ORDER BY idx" :
	    " WHERE run_id = ?1 AND idx = ?2"), &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	return task_rows(s, st, cb, arg, e);
}

int
vg_store_task_request_cancel(struct vg_store *s, const char *run_id,
    int index, int *n, struct vg_err *e)
{
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	if (n != NULL)
		*n = 0;
	snprintf(sql, sizeof(sql), "UPDATE tasks SET cancel_req = 1 WHERE"
	    " run_id = ?1 AND (?2 < 0 OR idx = ?2) AND state NOT IN (%s)",
	    "'SUCCEEDED','FAILED','TIMEOUT','OOM','CANCELLED','DENIED',"
	    "'LOST','NODE_FAIL','PREEMPTED','BOOT_FAIL','DEADLINE',"
	    "'BACKEND_ERROR','SKIPPED','DEPENDENCY_NEVER_SATISFIED'");
	if ((rc = vg_sq_prepare(s, sql, &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	rc = vg_sq_done(s, st, e, "marking tasks for cancellation");
	sqlite3_finalize(st);
	if (rc == 0 && n != NULL)
		*n = sqlite3_changes(s->db);
	return rc;
}

int
vg_store_attempt_put(struct vg_store *s, const char *run_id,
    const struct vg_attempt_rec *a, struct vg_err *e)
{
	struct attempt_row row = { .run_id = run_id, .a = *a };

	return row_put(s, ST_ATTEMPT_PUT, &row, "recording an attempt", e);
}

int
vg_store_attempt_each(struct vg_store *s, const char *run_id, int index,
    int (*cb)(void *arg, const struct vg_attempt_rec *a), void *arg,
    struct vg_err *e)
{
	struct attempt_row row;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&attempt_def, index < 0 ?
	    " WHERE run_id = ?1 AND ?2 < 0 ORDER BY idx, attempt" :
	    " WHERE run_id = ?1 AND idx = ?2 ORDER BY attempt"), &st,
	    e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, index);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &attempt_def, &row, sizeof(row));
		stop = cb(arg, &row.a);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "reading attempts");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_event(struct vg_store *s, const char *run_id, int task,
    int attempt, enum vg_state st_, const char *reason, struct vg_err *e)
{
	struct event_row row = {
		.run_id = run_id,
		.ev = {
			.time = vg_now(),
			.task = task,
			.attempt = attempt,
			.state = st_,
			.reason = reason,
		},
	};

	return row_put(s, ST_EVENT, &row, "recording an event", e);
}

int
vg_store_event_each(struct vg_store *s, const char *run_id, int task,
    int (*cb)(void *arg, const struct vg_event_rec *ev), void *arg,
    struct vg_err *e)
{
	struct event_row row;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&event_def,
	    /* -2: VG_STORE_EVENTS_ALL */
	    task == -2 ? " WHERE run_id = ?1 AND ?2 = -2 ORDER BY id" :
	    " WHERE run_id = ?1 AND task = ?2 ORDER BY id"),
	    &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	sqlite3_bind_int(st, 2, task);
	while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		vg_sq_row_read(st, &event_def, &row, sizeof(row));
		stop = cb(arg, &row.ev);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "reading events");
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
vg_store_audit(struct vg_store *s, const struct vg_audit_rec *rec,
    struct vg_err *e)
{
	struct vg_audit_rec row = *rec;
	sqlite3_stmt *st;
	int rc;

	if (row.time <= 0)
		row.time = vg_now();
	if (row.verdict == NULL)
		row.verdict = "deny";
	if ((rc = vg_sq_prepare_gen(s, vg_sq_insert(&audit_def, "INSERT"), &st,
	    e)) != 0)
		return rc;
	vg_sq_row_bind(st, &audit_def, &row, 0);
	rc = vg_sq_done(s, st, e, "recording a policy decision");
	sqlite3_finalize(st);
	return rc;
}

/*
 * Packed audit records (the audit_pack table): vg_store_audit_many
 * stores a group of decisions as one row; the codec of its data is
 * runner/core/audit-pack.c.  Readers unpack rows in vg_store_audit_each,
 * merged with the one-row-per-decision table by time.
 */

/* Reads the next audit_pack row of st into pk (pk->n 0 at the end); a
 * malformed row is an error naming it. */
static int
pack_next(struct vg_store *s, sqlite3_stmt *st, struct vg_audit_unpacked *pk,
    struct vg_err *e)
{
	int rc;

	vg_audit_unpacked_release(pk);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (vg_audit_pack_decode(sqlite3_column_blob(st, 3),
		    (size_t)sqlite3_column_bytes(st, 3),
		    sqlite3_column_double(st, 1), sqlite3_column_int64(st, 2),
		    pk) != 0)
			return vg_err_set(e, VG_ESTATE, "state database "
			    "'%s/vigil.db': audit_pack row %lld is malformed",
			    s->home, (long long)sqlite3_column_int64(st, 0));
		if (pk->n > 0)
			return 0;
		vg_audit_unpacked_release(pk);
	}
	if (rc != SQLITE_DONE)
		return vg_sq_err(s, e, "reading the audit log");
	return 0;
}

/*
 * Calls cb for the audit records of a run (NULL: all), oldest first:
 * the rows of audit (in insertion order) and of audit_pack (unpacked),
 * merged by time.
 */
int
vg_store_audit_each(struct vg_store *s, const char *run_id,
    int (*cb)(void *arg, const struct vg_audit_rec *rec), void *arg,
    struct vg_err *e)
{
	struct vg_audit_rec r;
	struct vg_audit_unpacked pk;
	sqlite3_stmt *st, *ps = NULL;
	size_t pi = 0;
	int rc, stop = 0, have;

	memset(&pk, 0, sizeof(pk));
	if ((rc = vg_sq_prepare_gen(s, vg_sq_select(&audit_def, " WHERE ?1 IS NULL"
	    " OR run_id = ?1 ORDER BY id"), &st, e)) != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	if ((rc = vg_sq_prepare(s, "SELECT id, first, n, data FROM audit_pack"
	    " WHERE ?1 IS NULL OR run_id = ?1 ORDER BY id", &ps, e)) != 0)
		goto out;
	vg_sq_bind_str(ps, 1, run_id);
	if ((rc = pack_next(s, ps, &pk, e)) != 0)
		goto out;
	rc = sqlite3_step(st);
	while (!stop && (rc == SQLITE_ROW || pk.n > 0)) {
		have = rc == SQLITE_ROW;
		if (have)
			vg_sq_row_read(st, &audit_def, &r, sizeof(r));
		if (pk.n > 0 && (!have || pk.rec[pi].time < r.time)) {
			stop = cb(arg, &pk.rec[pi]);
			if (++pi == pk.n) {
				pi = 0;
				if ((rc = pack_next(s, ps, &pk, e)) != 0)
					goto out;
			}
			rc = have ? SQLITE_ROW : SQLITE_DONE;
			continue;
		}
		stop = cb(arg, &r);
		rc = sqlite3_step(st);
	}
	if (!stop && rc != SQLITE_DONE)
		rc = vg_sq_err(s, e, "reading the audit log");
	else
		rc = 0;
out:
	vg_audit_unpacked_release(&pk);
	sqlite3_finalize(ps);
	sqlite3_finalize(st);
	return rc;
}

/* Inserts recs[0..n) at times[0..n) (one run) as one audit_pack row. */
static int
pack_insert(struct vg_store *s, sqlite3_stmt *st,
    const struct vg_audit_rec *const *recs, const double *times, size_t n,
    double now, struct vg_err *e)
{
	double first = vg_audit_pack_time(times[0], now), last = first, t;
	struct vg_buf *data = &s->pk.data;
	size_t i, off;
	int rc;

	for (i = 1; i < n; i++) {
		t = vg_audit_pack_time(times[i], now);
		if (t < first)
			first = t;
		if (t > last)
			last = t;
	}
	vg_audit_pack_encode(&s->pk, recs, times, n, first, now, &off);
	sqlite3_bind_double(st, 1, first);
	sqlite3_bind_double(st, 2, last);
	vg_sq_bind_str(st, 3, recs[0]->run_id);
	sqlite3_bind_int64(st, 4, (long long)n);
	sqlite3_bind_blob(st, 5, data->data + off, (int)(data->len - off),
	    SQLITE_STATIC);
	rc = vg_sq_done(s, st, e, "recording policy decisions");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/* True when two run ids (either may be NULL) are the same. */
static int
same_run(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/*
 * Records n policy decisions as packed rows (one per run among them) in
 * one transaction (vigil check --stdin groups its audit writes this
 * way): decision i is *recs[i] at times[i] (its own time field is not
 * read; 0 means now), a NULL verdict "deny".  The same record may be
 * given many times (a repeated decision).  Joins the caller's
 * transaction when one is open.
 */
int
vg_store_audit_many(struct vg_store *s, const struct vg_audit_rec *const *recs,
    const double *times, size_t n, struct vg_err *e)
{
	sqlite3_stmt *st;
	double now = vg_now();
	int rc = 0, own = !s->in_txn;
	size_t i, j;

	if (n == 0)
		return 0;
	if (own && (rc = vg_store_begin(s, e)) != 0)
		return rc;
	if (s->audit_pack == NULL && (rc = vg_sq_prepare(s, "INSERT INTO"
	    " audit_pack (first, last, run_id, n, data) VALUES (?1, ?2, ?3,"
	    " ?4, ?5)", &s->audit_pack, e)) != 0)
		goto fail;
	st = s->audit_pack;
	for (i = 0; i < n && rc == 0; i = j) {
		for (j = i + 1; j < n && same_run(recs[j]->run_id,
		    recs[i]->run_id); j++)
			;
		rc = pack_insert(s, st, recs + i, times + i, j - i, now, e);
	}
	if (rc != 0)
		goto fail;
	return own ? vg_store_commit(s, e) : 0;
fail:
	if (own)
		vg_store_rollback(s);
	return rc;
}

/* Deletes the audit records older than before (epoch seconds): rows of
 * audit by their time, packed rows once their newest record is older.
 * The number of records removed goes to *removed (may be NULL). */
int
vg_store_audit_prune(struct vg_store *s, double before, long long *removed,
    struct vg_err *e)
{
	sqlite3_stmt *st;
	long long n = 0;
	int rc;

	if ((rc = vg_sq_prepare(s, "DELETE FROM audit WHERE time < ?1", &st,
	    e)) != 0)
		return rc;
	sqlite3_bind_double(st, 1, before);
	rc = vg_sq_done(s, st, e, "pruning the audit log");
	n = sqlite3_changes(s->db);
	sqlite3_finalize(st);
	if (rc != 0)
		return rc;
	if ((rc = vg_sq_prepare(s, "DELETE FROM audit_pack WHERE last < ?1"
	    " RETURNING n", &st, e)) != 0)
		return rc;
	sqlite3_bind_double(st, 1, before);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		n += sqlite3_column_int64(st, 0);
	rc = rc == SQLITE_DONE ? 0 : vg_sq_err(s, e, "pruning the audit log");
	sqlite3_finalize(st);
	if (rc == 0 && removed != NULL)
		*removed = n;
	return rc;
}

/* Keeps the state of the one task vg_store_task_each hands over. */
static int
task_state_cb(void *arg, const struct vg_task_rec *t, const char *mj,
    const char *label)
{
	(void)mj;
	(void)label;
	*(enum vg_state *)arg = t->state;
	return 1;
}

int
vg_store_task_state(struct vg_store *s, const char *run_id, int index,
    enum vg_state *state, struct vg_err *e)
{
	return vg_store_task_each(s, run_id, index, task_state_cb, state, e);
}

/* ---- a run's tasks by state ---- */

int
vg_store_task_each_state(struct vg_store *s, const char *run_id,
    enum vg_state state, int others, size_t limit,
    int (*cb)(void *arg, const struct vg_task_rec *t,
    const char *matrix_json, const char *label), void *arg,
    struct vg_err *e)
{
	struct vg_buf tail = VG_BUF_INIT;
	sqlite3_stmt *st;
	int rc, k, first = 1;

	/* An IN list of names, not "!=": each name is a range of the
	 * tasks_state index, so a large run's other tasks are not read. */
	vg_buf_adds(&tail, " INDEXED BY tasks_state WHERE run_id = ?1 AND "
	    "state IN (");
	for (k = 0; k < VG_ST__COUNT; k++) {
		if ((k == (int)state) == (others != 0) || (others &&
		    state == VG_ST_SUCCEEDED && vg_state_ok((enum vg_state)k)))
			continue;
		vg_buf_printf(&tail, "%s'%s'", first ? "" : ", ",
		    vg_state_name((enum vg_state)k));
		first = 0;
	}
	vg_buf_adds(&tail, ") ORDER BY idx");
	if (limit > 0)
		vg_buf_printf(&tail, " LIMIT %zu", limit);
	rc = vg_sq_prepare_gen(s, vg_sq_select(&task_def, vg_buf_str(&tail)), &st,
	    e);
	vg_buf_release(&tail);
	if (rc != 0)
		return rc;
	vg_sq_bind_str(st, 1, run_id);
	return task_rows(s, st, cb, arg, e);
}

