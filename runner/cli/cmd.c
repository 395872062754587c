/*
 * cmd.c - the command table, generic option parsing and generated usage.
 *
 * Options may come before or among positionals ("vigil run x.yaml
 * --jobs 4"); "--" ends option parsing, and everything after it is kept
 * as positionals (vigil exec -- CMD ...).  --name=value and --name value
 * are both accepted; short options take their value as the next word.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "runner/cli/cmd.h"
#include "common/err.h"
#include "common/proc.h"
#include "runner/core/plugins.h"
#include "runner/manifest/schema.h"

extern const struct vg_cmd_entry vg_cmd_run, vg_cmd_submit, vg_cmd_status,
    vg_cmd_logs, vg_cmd_cancel, vg_cmd_resume, vg_cmd_retry, vg_cmd_validate,
    vg_cmd_version, vg_cmd_help, vg_cmd_check, vg_cmd_exec, vg_cmd_doctor,
    vg_cmd_task_exec, vg_cmd_pack_exec, vg_cmd_scratch, vg_cmd_cache,
    vg_cmd_reuse, vg_cmd_gc;
extern const struct vg_cmd_entry vg_cmd_report;
extern const struct vg_cmd_entry vg_cmd_notify;
extern const struct vg_cmd_entry vg_cmd_session;
extern const struct vg_cmd_entry vg_cmd_mcp;
extern const struct vg_cmd_entry vg_cmd_policy;
extern const struct vg_cmd_entry vg_cmd_complete;

const struct vg_cmd_entry *const vg_cmds[] = {
	&vg_cmd_run,
	&vg_cmd_submit,
	&vg_cmd_status,
	&vg_cmd_logs,
	&vg_cmd_report,
	&vg_cmd_cancel,
	&vg_cmd_resume,
	&vg_cmd_retry,
	&vg_cmd_validate,
	&vg_cmd_check,
	&vg_cmd_exec,
	&vg_cmd_policy,
	&vg_cmd_session,
	&vg_cmd_mcp,
	&vg_cmd_doctor,
	&vg_cmd_scratch,
	&vg_cmd_cache,
	&vg_cmd_reuse,
	&vg_cmd_gc,
	&vg_cmd_notify,
	&vg_cmd_task_exec,
	&vg_cmd_pack_exec,
	&vg_cmd_complete,
	&vg_cmd_version,
	&vg_cmd_help,
	NULL
};

/* Finds an option index by long name; aborts on a programming error. */
static int
opt_index(const struct vg_cmd_entry *c, const char *name)
{
	int i;

	for (i = 0; c->opts != NULL && c->opts[i].name != NULL; i++)
		if (strcmp(c->opts[i].name, name) == 0)
			return i;
	fprintf(stderr, "vigil: internal: command '%s' has no option '%s'\n",
	    c->name, name);
	abort();
}

int
vg_args_has(const struct vg_args *a, const char *name)
{
	return a->count[opt_index(a->cmd, name)] > 0;
}

const char *
vg_args_get(const struct vg_args *a, const char *name)
{
	return a->value[opt_index(a->cmd, name)];
}

const char **
vg_args_all(const struct vg_args *a, const char *name)
{
	static const char *none[] = { NULL };
	const char **v = a->values[opt_index(a->cmd, name)];

	return v != NULL ? v : none;
}

int
vg_args_int(const struct vg_args *a, const char *name, long min, long max,
    long def, long *out)
{
	const char *s = vg_args_get(a, name);
	char *end;
	long v;

	if (s == NULL) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		vg_cmd_usage_error(a, "--%s takes a whole number from %ld to "
		    "%ld, not '%s'", name, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Writes the one-line usage of c into b. */
static void
usage_line(const struct vg_cmd_entry *c, struct vg_buf *b)
{
	const struct vg_opt *o;

	vg_buf_printf(b, "usage: vigil %s", c->name);
	for (o = c->opts; o != NULL && o->name != NULL; o++) {
		vg_buf_adds(b, " [");
		if (o->shortname)
			vg_buf_printf(b, "-%c|", o->shortname);
		vg_buf_printf(b, "--%s", o->name);
		if (o->has_arg)
			vg_buf_printf(b, " %s", o->arg ? o->arg : "VALUE");
		vg_buf_addc(b, ']');
		if (o->repeat)
			vg_buf_adds(b, "...");
	}
	if (c->args_usage != NULL && *c->args_usage != '\0')
		vg_buf_printf(b, " %s", c->args_usage);
}

int
vg_cmd_fail(int code, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	vg_buf_adds(&b, "vigil: ");
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "%s\n", vg_buf_str(&b));
	vg_buf_release(&b);
	return code;
}

int
vg_cmd_usage_error(const struct vg_args *a, const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	vg_buf_printf(&b, "vigil: %s: ", a->cmd->name);
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_buf_addc(&b, '\n');
	usage_line(a->cmd, &b);
	fprintf(stderr, "%s\n", vg_buf_str(&b));
	vg_buf_release(&b);
	return VG_EXIT_USAGE;
}

int
vg_cmd_exit_for_rc(int rc)
{
	switch (rc) {
	case VG_OK:
		return VG_EXIT_OK;
	case VG_EINVAL:
	case VG_EPARSE:
	case VG_ENOENT:
	case VG_ELIMIT:
		return VG_EXIT_USAGE;
	case VG_EDENIED:
		return VG_EXIT_DENIED;
	case VG_ECANCELED:
		return VG_EXIT_CANCELLED;
	case VG_ETIMEOUT:
		return VG_EXIT_TIMEOUT;
	}
	return VG_EXIT_INTERNAL;
}

int
vg_cmd_finish_stdout(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "vigil: cannot write output: %s\n",
		    strerror(errno));
		return code == VG_EXIT_OK ? VG_EXIT_INTERNAL : code;
	}
	return code;
}

/* Finds a command by name or alias. */
static const struct vg_cmd_entry *
cmd_find(const char *name)
{
	const struct vg_cmd_entry *const *c;

	for (c = vg_cmds; *c != NULL; c++) {
		if (strcmp((*c)->name, name) == 0)
			return *c;
		if ((*c)->alias != NULL && strcmp((*c)->alias, name) == 0)
			return *c;
	}
	return NULL;
}

/* The command name nearest to name, for a did-you-mean; or NULL. */
static const char *
cmd_near(const char *name)
{
	const char *names[64];
	size_t n = 0;
	const struct vg_cmd_entry *const *c;

	for (c = vg_cmds; *c != NULL && n < 64; c++)
		names[n++] = (*c)->name;
	return vg_did_you_mean(name, names, n);
}

/* The long option of c nearest to name (nlen bytes), or NULL. */
static const char *
opt_near(const struct vg_cmd_entry *c, const char *name, size_t nlen)
{
	const char *names[64];
	char want[64];
	size_t n = 0, j;

	if (nlen >= sizeof(want))
		return NULL;
	memcpy(want, name, nlen);
	want[nlen] = '\0';
	for (j = 0; c->opts && c->opts[j].name && n < 64; j++)
		names[n++] = c->opts[j].name;
	return vg_did_you_mean(want, names, n);
}

/* Records one occurrence of option i with value v (may be NULL). */
static int
args_record(struct vg_args *a, int i, const char *v)
{
	const struct vg_opt *o = &a->cmd->opts[i];
	size_t n = 0;

	if (a->count[i] > 0 && !o->repeat)
		return vg_cmd_usage_error(a, "--%s given more than once",
		    o->name);
	a->count[i]++;
	a->value[i] = v;
	if (v != NULL) {
		while (a->values[i] != NULL && a->values[i][n] != NULL)
			n++;
		a->values[i] = vg_xrealloc(a->values[i],
		    (n + 2) * sizeof(*a->values[i]));
		a->values[i][n] = v;
		a->values[i][n + 1] = NULL;
	}
	return 0;
}

/* Parses argv (after the command name) into a; returns an exit code. */
static int
args_parse(struct vg_args *a, int argc, char **argv)
{
	const struct vg_cmd_entry *c = a->cmd;
	const struct vg_opt *o;
	const char *arg, *eq, *v, *near;
	size_t nlen;
	int i, j, found;

	a->argv = vg_xcalloc((size_t)argc + 1, sizeof(*a->argv));
	a->dashdash = -1;
	for (i = 0; i < argc; i++) {
		arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			a->dashdash = a->argc;
			for (i++; i < argc; i++)
				a->argv[a->argc++] = argv[i];
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0') {
			a->argv[a->argc++] = argv[i];
			continue;
		}
		found = -1;
		v = NULL;
		if (arg[1] == '-') {
			eq = strchr(arg + 2, '=');
			nlen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
			for (j = 0; c->opts && c->opts[j].name; j++) {
				o = &c->opts[j];
				if (strlen(o->name) == nlen &&
				    strncmp(o->name, arg + 2, nlen) == 0) {
					found = j;
					break;
				}
			}
			if (found < 0 && (near = opt_near(c, arg + 2,
			    nlen)) != NULL)
				return vg_cmd_usage_error(a,
				    "unknown option '%.*s'; did you mean "
				    "'--%s'?", (int)nlen + 2, arg, near);
			if (found < 0)
				return vg_cmd_usage_error(a,
				    "unknown option '%.*s'", (int)nlen + 2,
				    arg);
			if (eq != NULL && !c->opts[found].has_arg)
				return vg_cmd_usage_error(a,
				    "--%s takes no value", c->opts[found].name);
			if (eq != NULL)
				v = eq + 1;
		} else {
			for (j = 0; c->opts && c->opts[j].name; j++)
				if (c->opts[j].shortname == arg[1])
					found = j;
			if (found < 0 || arg[2] != '\0')
				return vg_cmd_usage_error(a,
				    "unknown option '%s'", arg);
		}
		if (c->opts[found].has_arg && v == NULL) {
			if (i + 1 >= argc)
				return vg_cmd_usage_error(a,
				    "--%s needs a value (%s)",
				    c->opts[found].name,
				    c->opts[found].arg ? c->opts[found].arg :
				    "VALUE");
			v = argv[++i];
		}
		if (args_record(a, found, v) != 0)
			return VG_EXIT_USAGE;
	}
	if (a->argc < c->min_args)
		return vg_cmd_usage_error(a, "missing %s",
		    c->args_usage ? c->args_usage : "argument");
	if (c->max_args >= 0 && a->argc > c->max_args)
		return vg_cmd_usage_error(a, "unexpected argument '%s'",
		    a->argv[c->max_args]);
	return 0;
}

static void
args_release(struct vg_args *a)
{
	int i;

	for (i = 0; i < VG_OPT_MAX; i++)
		free(a->values[i]);
	free(a->argv);
}

const char vg_cmd_intro[] = "vigil runs batch jobs from a YAML manifest, "
    "here or through SLURM,\nbehind a policy gate.";

/* Prints the list of commands (vigil help). */
static void
help_all(FILE *f)
{
	const struct vg_cmd_entry *const *c;

	fprintf(f, "usage: vigil COMMAND [OPTIONS] [ARGS]\n\n%s  "
	    "Commands:\n\n", vg_cmd_intro);
	for (c = vg_cmds; *c != NULL; c++) {
		if ((*c)->hidden)
			continue;
		fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
	}
	fprintf(f, "\n'vigil help COMMAND' shows a command's options.\n");
}

/* Prints usage, help text and options of c. */
static void
help_one(const struct vg_cmd_entry *c, FILE *f)
{
	struct vg_buf b = VG_BUF_INIT;
	const struct vg_opt *o;
	char left[64];

	usage_line(c, &b);
	fprintf(f, "%s\n\n%s\n", vg_buf_str(&b), c->summary);
	if (c->help != NULL)
		fprintf(f, "\n%s\n", c->help);
	if (c->opts != NULL && c->opts[0].name != NULL)
		fprintf(f, "\noptions:\n");
	for (o = c->opts; o != NULL && o->name != NULL; o++) {
		if (o->shortname)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
			    o->shortname, o->name, o->has_arg ? " " : "",
			    o->has_arg ? (o->arg ? o->arg : "VALUE") : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
			    o->has_arg ? " " : "",
			    o->has_arg ? (o->arg ? o->arg : "VALUE") : "");
		fprintf(f, "  %-26s %s\n", left, o->help ? o->help : "");
	}
	vg_buf_release(&b);
}

/* vigil help [--man|--bash-completion] [CMD] */
static int
cmd_help_exec(struct vg_args *a)
{
	const struct vg_cmd_entry *c;
	int man = vg_args_has(a, "man");
	int bash = vg_args_has(a, "bash-completion");

	if (man + bash > 1 || (man + bash > 0 && a->argc > 0))
		return vg_cmd_usage_error(a, "--man and --bash-completion "
		    "take no command and exclude each other");
	if (man)
		vg_cmd_write_man(stdout);
	if (bash)
		vg_cmd_write_bash_completion(stdout);
	if (man || bash)
		return vg_cmd_finish_stdout(VG_EXIT_OK);
	if (a->argc == 0) {
		help_all(stdout);
		return vg_cmd_finish_stdout(VG_EXIT_OK);
	}
	if ((c = cmd_find(a->argv[0])) == NULL)
		return vg_cmd_fail(VG_EXIT_USAGE, "help: unknown command '%s'",
		    a->argv[0]);
	help_one(c, stdout);
	return vg_cmd_finish_stdout(VG_EXIT_OK);
}

const struct vg_cmd_entry vg_cmd_help = {
	.name = "help",
	.args_usage = "[COMMAND]",
	.summary = "show the commands, or one command's options",
	.help = "With --man or --bash-completion, writes the manual page or "
	    "the bash\ncompletion script, both generated from the command "
	    "table.",
	.opts = (const struct vg_opt[]){
		{ .name = "man", .help = "write the manual page (roff)" },
		{ .name = "bash-completion",
		  .help = "write the bash completion script" },
		{ NULL },
	},
	.min_args = 0,
	.max_args = 1,
	.exec = cmd_help_exec,
};

int
vg_cmd_main(int argc, char **argv)
{
	const struct vg_cmd_entry *c;
	struct vg_args a;
	int i, rc;

	/* Started with a standard descriptor closed (by cron, a daemon
	 * manager, a careless parent): /dev/null takes its place, never a
	 * file vigil opens. */
	if (vg_std_fds_open() != 0)
		return VG_EXIT_HOST;
	vg_plugins_init();
	if (argc < 2) {
		help_all(stderr);
		return VG_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		help_all(stdout);
		return vg_cmd_finish_stdout(VG_EXIT_OK);
	}
	c = cmd_find(strcmp(argv[1], "--version") == 0 ? "version" : argv[1]);
	if (c == NULL && cmd_near(argv[1]) != NULL)
		return vg_cmd_fail(VG_EXIT_USAGE, "unknown command '%s'; did "
		    "you mean '%s'? (try 'vigil help')", argv[1],
		    cmd_near(argv[1]));
	if (c == NULL)
		return vg_cmd_fail(VG_EXIT_USAGE, "unknown command '%s' "
		    "(try 'vigil help')", argv[1]);
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0) {
			help_one(c, stdout);
			return vg_cmd_finish_stdout(VG_EXIT_OK);
		}
	}
	memset(&a, 0, sizeof(a));
	a.cmd = c;
	if ((rc = args_parse(&a, argc - 2, argv + 2)) == 0)
		rc = c->exec(&a);
	args_release(&a);
	return vg_cmd_finish_stdout(rc);
}
