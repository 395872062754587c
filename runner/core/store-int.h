/*
 * store-int.h - what the files of the state database share
 * (runner/core/store.c, store-group.c, store-session.c, store-reuse.c):
 * the connection, the row tables from which statements are generated,
 * and the statement helpers.  Internal: only runner/core/store*.c
 * include it; everyone else uses runner/core/store.h.
 */
#ifndef VG_STORE_INT_H
#define VG_STORE_INT_H

#include <stddef.h>

#include <sqlite3.h>

#include "common/err.h"
#include "runner/core/audit-pack.h"
#include "runner/core/store.h"

/* Frequent statements, prepared once from the row tables below. */
enum {
	ST_TASK_PUT,
	ST_ATTEMPT_PUT,
	ST_EVENT,
	ST_TASK_ADD,
	ST__COUNT
};

/* Statements of reuse entries and task keys, prepared on first use. */
enum {
	RS_GET,
	RS_PUT,
	RS_KEY_PUT,
	RS_KEY_GET,
	RS__COUNT
};

/* The connection: its statements prepared once, the audit packer. */
struct vg_store {
	sqlite3		*db;
	char		*home;
	int		 in_txn;
	sqlite3_stmt	*stmt[ST__COUNT];
	sqlite3_stmt	*audit_pack;	/* insert, prepared on first use */
	sqlite3_stmt	*begin, *commit; /* of each transaction, likewise */
	sqlite3_stmt	*reuse[RS__COUNT]; /* reuse statements, likewise */
	struct vg_audit_packer pk;
};

/*
 * Row tables: each row type is one C record and a table of its columns
 * (name, how the value is held, where in the record), from which the SQL
 * is generated and by which values are bound and read, so that a column
 * is named in one place only.  Column i is always parameter ?(i + 1).
 */

/* How a column's value is held in its C record. */
enum col_type {
	COL_INT,	/* int */
	COL_PID,	/* pid_t */
	COL_U64,	/* uint64_t */
	COL_ULL,	/* unsigned long long */
	COL_REAL,	/* double */
	COL_STATE,	/* enum vg_state, stored by name */
	COL_TEXT,	/* const char *, borrowed from the row when read */
	COL_DUP,	/* char *, duplicated when read (the reader frees) */
	COL_CHARS,	/* char[size], truncated when read */
	COL_I64,	/* long long */
};

/* Column flags. */
#define COL_KEY		0x1	/* identifies the row (UPDATE ... WHERE) */
#define COL_ONCE	0x2	/* written by the INSERT only */
#define COL_NOREAD	0x4	/* never selected */
#define COL_OPT		0x8	/* NULL unless bit is set in the unsigned
				   at known_off; reading a value sets it */

/* One column and where its value lives in the record. */
struct col {
	const char	*name;
	enum col_type	 type;
	size_t		 off;
	size_t		 size;
	unsigned	 flags;
	unsigned	 bit;		/* COL_OPT */
	size_t		 known_off;	/* COL_OPT */
};

/* The columns of one table, in table order. */
struct row_def {
	const char		*table;
	const struct col	*cols;
	size_t			 ncols;
};

#define COL(rec, n, t, f, fl) { .name = (n), .type = (t), \
	.off = offsetof(rec, f), .size = sizeof(((rec *)0)->f), .flags = (fl) }
#define ROW_DEF(tbl, c) { .table = (tbl), .cols = (c), \
	.ncols = sizeof(c) / sizeof((c)[0]) }

/* Fills e from the connection's last error, prefixed by what failed. */
int	vg_sq_err(struct vg_store *s, struct vg_err *e, const char *what);
/* Prepares sql into *st. */
int	vg_sq_prepare(struct vg_store *s, const char *sql, sqlite3_stmt **st,
	    struct vg_err *e);
/* Prepares the generated sql (freed here) into *st. */
int	vg_sq_prepare_gen(struct vg_store *s, char *sql, sqlite3_stmt **st,
	    struct vg_err *e);
/* Steps a statement that returns no rows. */
int	vg_sq_done(struct vg_store *s, sqlite3_stmt *st, struct vg_err *e,
	    const char *what);
/* Binds a possibly-NULL string (copied by sqlite). */
void	vg_sq_bind_str(sqlite3_stmt *st, int i, const char *v);
/* Duplicates column i as a string, NULL for SQL NULL. */
char	*vg_sq_col_dup(sqlite3_stmt *st, int i);
/* Copies column i into a fixed buffer. */
void	vg_sq_col_copy(sqlite3_stmt *st, int i, char *dst, size_t n);
/* SELECT of d's readable columns, then tail; caller frees. */
char	*vg_sq_select(const struct row_def *d, const char *tail);
/* INSERT (verb: "INSERT", "INSERT OR REPLACE") of d's columns; caller
 * frees. */
char	*vg_sq_insert(const struct row_def *d, const char *verb);
/* Binds the columns of d from rec. */
void	vg_sq_row_bind(sqlite3_stmt *st, const struct row_def *d,
	    const void *rec, unsigned skip);
/* Reads the current row of st into rec (size bytes) by d. */
void	vg_sq_row_read(sqlite3_stmt *st, const struct row_def *d, void *rec,
	    size_t size);

#endif
