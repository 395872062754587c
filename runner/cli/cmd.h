/*
 * cmd.h - subcommands.  Each lives in runner/cli/cmd-<name>.c and exports one
 * const struct vg_cmd_entry built with designated initializers; cmd.c
 * lists them in one table, parses options once, generically, from each
 * entry's option table, and generates usage and help text from it.
 *
 * Exit statuses (docs/cli.md):
 *   0  success (every task succeeded; command allowed)
 *   1  some tasks failed, timed out or were lost
 *   2  usage error, or a manifest/config error
 *   3  denied by the policy gate
 *   4  internal or system error (state database, I/O)
 *   5  cancelled (SIGINT/SIGTERM, vigil cancel)
 *   6  the manifest is valid but this host cannot run it (validate,
 *      run --dry-run; run and submit refuse it, recording nothing)
 *   124 vigil exec: the command timed out
 */
#ifndef VG_CMD_H
#define VG_CMD_H

#include <stddef.h>
#include <stdio.h>

enum vg_exit {
	VG_EXIT_OK = 0,
	VG_EXIT_FAILED = 1,
	VG_EXIT_USAGE = 2,
	VG_EXIT_DENIED = 3,
	VG_EXIT_INTERNAL = 4,
	VG_EXIT_CANCELLED = 5,
	VG_EXIT_HOST = 6,
	VG_EXIT_TIMEOUT = 124,
};

#define VG_OPT_MAX 24

/* One option of a command. */
struct vg_opt {
	const char	*name;		/* long name, without "--" */
	char		 shortname;	/* 0 when none */
	int		 has_arg;	/* 0 flag, 1 value */
	int		 repeat;	/* may be given several times */
	const char	*arg;		/* value placeholder for usage */
	const char	*help;
	const char	*choices;	/* values for completion, or NULL */
};

/*
 * Option rows shared by several commands, so that each is spelled once.
 * Rows whose help differs between commands take it as an argument.
 */
#define VG_OPT_JOBS { .name = "jobs", .shortname = 'j', .has_arg = 1, \
	.arg = "N", .help = "run up to N tasks at once (default: CPUs)" }
#define VG_OPT_SET { .name = "set", .has_arg = 1, .repeat = 1, \
	.arg = "KEY=VALUE", \
	.help = "override a manifest value (resources.memory=4G)" }
#define VG_OPT_AFTER { .name = "after", .has_arg = 1, .repeat = 1, \
	.arg = "RUN[:COND]", \
	.help = "wait for run RUN (id or name) to end: COND ok (default), " \
	"any or notok" }
#define VG_OPT_QUIET { .name = "quiet", .shortname = 'q', \
	.help = "no progress display" }
#define VG_OPT_CRON { .name = "cron", .help = "unattended: silent unless " \
	"something failed or a notification was not delivered; overlap " \
	"skip by default" }
#define VG_OPT_JSON(h) { .name = "json", .help = (h) }
#define VG_OPT_JSON_RUN \
	VG_OPT_JSON("print the run's final status as JSON on stdout")
#define VG_OPT_DRY_RUN(h) { .name = "dry-run", .shortname = 'n', \
	.help = (h) }
#define VG_OPT_MODE(h) { .name = "mode", .has_arg = 1, .arg = "MODE", \
	.help = (h), .choices = "auto-deny auto-approve interactive" }
#define VG_OPT_MODE_GATE VG_OPT_MODE("auto-deny, auto-approve or interactive")
#define VG_OPT_POLICY { .name = "policy", .has_arg = 1, .arg = "FILE", \
	.help = "site policy file (default /etc/vigil/policy.yaml)" }
#define VG_OPT_MANIFEST_SHA256 { .name = "manifest-sha256", .has_arg = 1, \
	.arg = "HEX", .help = "SHA-256 of RUN_DIR/manifest.json as submitted" }
#define VG_OPT_NO_REUSE { .name = "no-reuse", .help = "run every task, " \
	"reusing no earlier result (as reuse: false)" }
#define VG_OPT_REUSE_ONLY { .name = "reuse-only", .help = "say which " \
	"tasks an earlier result stands for and which would run; run " \
	"nothing" }
#define VG_OPT_AUDIT_LOG { .name = "audit-log", .has_arg = 1, \
	.arg = "FILE", \
	.help = "append every decision to FILE as a JSON line" }

/* The options of the commands a job runs (task-exec, pack-exec):
 * --manifest-sha256. */
extern const struct vg_opt vg_cmd_job_opts[];

/* Parsed arguments. */
struct vg_args {
	const struct vg_cmd_entry *cmd;
	int		 count[VG_OPT_MAX];	/* times each option was seen */
	const char	*value[VG_OPT_MAX];	/* last value */
	const char	**values[VG_OPT_MAX];	/* all values (repeat), NULL-term */
	int		 argc;			/* positionals */
	char		**argv;
	int		 dashdash;		/* index of first arg after "--" */
};

struct vg_cmd_entry {
	const char		*name;
	const char		*alias;
	const char		*args_usage;	/* "FILE", "RUN[/TASK]" */
	const char		*summary;	/* one line for `vigil help` */
	const char		*help;		/* paragraph for `vigil help CMD` */
	const struct vg_opt	*opts;		/* terminated by { NULL } */
	int			 min_args;
	int			 max_args;	/* -1 = unlimited */
	int			 hidden;	/* not listed (task-exec) */
	/* What its arguments (after a subcommand word, if any) name for
	 * completion: "runs", "sessions" (vigil __complete), or NULL for
	 * files. */
	const char		*ids;
	int			(*exec)(struct vg_args *args);
};

/* Option accessors by long name; asserting the name exists. */
int		 vg_args_has(const struct vg_args *a, const char *name);
const char	*vg_args_get(const struct vg_args *a, const char *name);
const char	**vg_args_all(const struct vg_args *a, const char *name);

/* Parses an integer option value; prints a usage error and returns -1 on
 * bad input. */
int		 vg_args_int(const struct vg_args *a, const char *name,
		    long min, long max, long def, long *out);

/* Prints "vigil: CMD: message" and the usage line; returns VG_EXIT_USAGE. */
int		 vg_cmd_usage_error(const struct vg_args *a, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* Prints "vigil: message" on stderr; returns code. */
int		 vg_cmd_fail(int code, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
/* Maps a vg_rc to an exit status (EINVAL/EPARSE -> 2, EDENIED -> 3, ...). */
int		 vg_cmd_exit_for_rc(int rc);

/* Entry point used by main(). */
int		 vg_cmd_main(int argc, char **argv);

/* Flushes stdout and reports a write error (full disk) as failure. */
int		 vg_cmd_finish_stdout(int code);

extern const struct vg_cmd_entry *const vg_cmds[];
/* The paragraph that introduces vigil (vigil help, the manual page). */
extern const char vg_cmd_intro[];

/* Writes the manual page (roff) generated from the table (doc.c). */
void		 vg_cmd_write_man(FILE *f);
/* Writes the bash completion script generated from the table (doc.c). */
void		 vg_cmd_write_bash_completion(FILE *f);

#endif
