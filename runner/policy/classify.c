/*
 * classify.c - what one simple command does, by program: a table maps
 * the normalised program name to a handler that reads the options and
 * operands the way that program does and reports findings by category.
 * Handlers also model the command's standard output for the stream
 * analysis (downloads are tainted "net", readers of secret files
 * "secret", shells reading their input pass code along) and track the
 * state the shell keeps (cd, variables set by read, printf -v, export).
 *
 * Unknown programs are fine: the gate judges what commands do, and a
 * program it does not know is ordinary work unless its operands or
 * redirections say otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/policy/classify.h"
#include "runner/policy/hostverbs.h"
#include "runner/policy/optrun.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"
#include "runner/policy/names.h"
#include "runner/policy/nested.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"

typedef void (*handler_fn)(struct pl_an *an, struct pl_cmd *c);

struct handler {
	const char	*name;
	handler_fn	 fn;
};

/* ---- helpers ---- */

static int
eq(const struct pl_field *f, const char *s)
{
	return strcmp(f->s, s) == 0;
}

static int
is_opt(const struct pl_field *f)
{
	return f->len > 1 && f->s[0] == '-' && !(f->flags & F_UNK);
}

/* True when any option before "--" is long or contains short letter ch. */
static int
has_opt(const struct pl_cmd *c, char ch, const char *lng)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (f->len == 2 && f->s[0] == '-' && f->s[1] == '-')
			return 0;
		if (!is_opt(f))
			continue;
		if (f->s[1] == '-') {
			if (lng != NULL && (strcmp(f->s, lng) == 0 ||
			    (strncmp(f->s, lng, strlen(lng)) == 0 &&
			    f->s[strlen(lng)] == '=')))
				return 1;
			continue;
		}
		if (ch && memchr(f->s + 1, ch, f->len - 1) != NULL)
			return 1;
	}
	return 0;
}

/* True when any argument equals s. */
static int
has_arg(const struct pl_cmd *c, const char *s)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (eq(&c->argv[i], s))
			return 1;
	return 0;
}

/* True when f equals one of the words of a NULL-terminated list. */
static int
eq_any(const struct pl_field *f, const char *const *words)
{
	for (; *words != NULL; words++)
		if (eq(f, *words))
			return 1;
	return 0;
}

/* True when any argument equals one of the words of a NULL-terminated
 * list. */
static int
has_any(const struct pl_cmd *c, const char *const *words)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (eq_any(&c->argv[i], words))
			return 1;
	return 0;
}

/* The first operand of c that is not an option, or NULL. */
static const struct pl_field *
first_word(const struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (!is_opt(&c->argv[i]))
			return &c->argv[i];
	return NULL;
}

/* The number of operands of c that are not options. */
static int
word_count(const struct pl_cmd *c)
{
	int i, n = 0;

	for (i = 1; i < c->argc; i++)
		n += !is_opt(&c->argv[i]);
	return n;
}

/* Index of the first argument after the options listed as taking a
 * value; returns the next operand at or after i, or argc. */
static int
next_operand(const struct pl_cmd *c, int i, const char *shortargs,
    int *dashdash)
{
	while (i < c->argc) {
		const struct pl_field *f = &c->argv[i];

		if (*dashdash)
			return i;
		if (f->len == 2 && f->s[0] == '-' && f->s[1] == '-') {
			*dashdash = 1;
			i++;
			continue;
		}
		if (!is_opt(f))
			return i;
		if (f->s[1] != '-' && shortargs != NULL && f->len == 2 &&
		    strchr(shortargs, f->s[1]) != NULL)
			i++;
		i++;
	}
	return i;
}

/* Value of an option: "-o X", "-oX", "--out X", "--out=X"; NULL. */
static const struct pl_field *
opt_val(struct pl_an *an, const struct pl_cmd *c, char sh, const char *lng)
{
	int i;
	size_t ll = lng ? strlen(lng) : 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "--"))
			return NULL;
		if (!is_opt(f))
			continue;
		if (sh && f->s[1] == sh && f->s[0] == '-' && f->len == 2 &&
		    i + 1 < c->argc)
			return &c->argv[i + 1];
		if (sh && f->s[1] == sh && f->len > 2 && f->s[1] != '-') {
			struct pl_field *o = pl_alloc(an->a, sizeof(*o));

			*o = *f;
			o->s += 2;
			o->len -= 2;
			return o;
		}
		if (lng && strncmp(f->s, lng, ll) == 0) {
			if (f->s[ll] == '\0' && i + 1 < c->argc)
				return &c->argv[i + 1];
			if (f->s[ll] == '=') {
				struct pl_field *o = pl_alloc(an->a,
				    sizeof(*o));

				*o = *f;
				o->s += ll + 1;
				o->len -= ll + 1;
				return o;
			}
		}
	}
	return NULL;
}

/* A field holding a sub-string of another (same span and taint). */
static struct pl_field *
subfield(struct pl_an *an, const struct pl_field *f, size_t off)
{
	struct pl_field *o = pl_alloc(an->a, sizeof(*o));

	*o = *f;
	o->s += off;
	o->len -= off;
	return o;
}

/* Short quoted rendering of a path for reasons. */
static const char *
pshow(const struct pl_path *p)
{
	return p->abs != NULL ? p->abs : "?";
}

static int
is_remote(const struct pl_field *f)
{
	const char *colon = memchr(f->s, ':', f->len);
	const char *slash = memchr(f->s, '/', f->len);

	if (strncmp(f->s, "rsync://", 8) == 0 || strncmp(f->s, "s3://", 5) == 0
	    || strncmp(f->s, "gs://", 5) == 0 ||
	    strncmp(f->s, "http://", 7) == 0 || strncmp(f->s, "https://", 8) == 0
	    || strncmp(f->s, "ftp://", 6) == 0)
		return 1;
	return colon != NULL && colon != f->s && (slash == NULL ||
	    colon < slash);
}

/* Default output: unknown, carrying what the input carried. */
static void
out_default(struct pl_cmd *c)
{
	pl_stream_unknown(c->out, T_PROG | (c->in->taint & (T_NET |
	    T_DECODED | T_SECRET | T_ENVDUMP | T_SOCK | T_SHELL)));
	c->out->producer = c->name;
}

/* Reports reading a secret file (exfiltration of credentials). */
static void
secret_read(struct pl_an *an, struct pl_cmd *c, const struct pl_path *p)
{
	pl_find(an, VG_CAT_EXFILTRATION, "builtin:secret-read", c->off, c->len,
	    "'%s' reads credentials or a private key ('%s')", c->name,
	    pshow(p));
	c->out->taint |= T_SECRET;
}

void
pl_classify_write(struct pl_an *an, const struct pl_field *f, int append,
    const char *why)
{
	struct pl_path p;
	size_t off = f->off, len = f->slen;

	pl_path_classify(an, f, &p);
	pl_span(an, &off, &len);
	if (p.cls == PC_DEVICE) {
		pl_find_floor(an, PL_FLOOR_DISK, VG_CAT_DISK,
		    "builtin:write-device", off, len,
		    "%s writes to the device '%s'", why, pshow(&p));
		return;
	}
	if (p.cls != PC_PROTECTED || (p.attr & PA_UNRESOLVED))
		return;
	/* Host keys appended to a known_hosts file (ssh-keyscan HOST >>
	 * ~/.ssh/known_hosts, a job's set-up step) add trust in a host and
	 * run nothing; an overwrite still loses the ones there. */
	if (append && (p.attr & PA_SSH) && p.abs != NULL &&
	    strlen(p.abs) >= 12 &&
	    strcmp(p.abs + strlen(p.abs) - 12, "/known_hosts") == 0)
		return;
	if (p.attr & PA_SYSRQ)
		pl_find_floor(an, PL_FLOOR_POWER, VG_CAT_DISRUPTION,
		    "builtin:sysrq", off, len,
		    "%s writes to the kernel's sysrq trigger", why);
	else if (p.attr & PA_SUDOERS)
		pl_find(an, VG_CAT_PRIVILEGE, "builtin:write-auth", off, len,
		    "%s writes to '%s' (accounts or sudo rules)", why,
		    pshow(&p));
	else if (p.attr & PA_CRON)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-cron", off, len,
		    "%s writes to '%s' (scheduled commands)", why, pshow(&p));
	else if (p.attr & PA_AUTHKEYS)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-authkeys", off, len,
		    "%s writes to '%s' (ssh login keys)", why, pshow(&p));
	else if (p.attr & (PA_RC | PA_SSH))
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-startup", off, len,
		    "%s writes to '%s' (shell or ssh configuration)", why,
		    pshow(&p));
	else if (p.attr & PA_PRELOAD)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-preload", off, len,
		    "%s writes to '%s' (preloaded libraries)", why, pshow(&p));
	else if (p.attr & PA_KERNEL)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-kernel", off, len,
		    "%s changes kernel settings ('%s')", why, pshow(&p));
	else if (p.attr & PA_ETC)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-etc", off, len,
		    "%s writes to '%s' (system configuration)", why,
		    pshow(&p));
	else if (p.attr & PA_HISTORY)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-history", off, len,
		    "%s overwrites the shell history '%s'", why, pshow(&p));
	else
		pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:write-protected", off,
		    len, "%s %s the protected path '%s'", why,
		    append ? "appends to" : "overwrites", pshow(&p));
}

/* Deletion of one operand. */
static void
delete_target(struct pl_an *an, struct pl_cmd *c, const struct pl_field *f,
    int recursive)
{
	struct pl_path p;

	pl_path_classify(an, f, &p);
	if (p.cls == PC_DEVICE) {
		pl_find_floor(an, recursive ? PL_FLOOR_DISK : NULL, VG_CAT_DISK,
		    "builtin:delete-device", c->off, c->len,
		    "'%s' destroys the device '%s'", c->name, pshow(&p));
		return;
	}
	if (p.cls != PC_PROTECTED)
		return;
	if (p.attr & PA_UNRESOLVED) {
		if (recursive)
			pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:delete-unknown",
			    c->off, c->len, "'%s' deletes recursively a path "
			    "that cannot be resolved before it runs", c->name);
		return;
	}
	if (p.attr & PA_HISTORY) {
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:delete-history", c->off,
		    c->len, "'%s' deletes the shell history '%s'", c->name,
		    pshow(&p));
		return;
	}
	if ((p.attr & PA_CRON) && !(p.attr & PA_ETC)) {
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:delete-cron", c->off,
		    c->len, "'%s' deletes scheduled commands ('%s')", c->name,
		    pshow(&p));
		return;
	}
	pl_find_floor(an, recursive && pl_path_top(an, &p) ? PL_FLOOR_DELETE :
	    NULL, VG_CAT_DESTRUCTIVE, recursive ? "builtin:rm-protected" :
	    "builtin:delete-protected", c->off, c->len,
	    "'%s' deletes%s the protected path '%s'", c->name,
	    recursive ? " recursively" : "", pshow(&p));
}

static int mode_loosens(const char *m, int *setid, int secret);

/* ---- deletion, copying, writing ---- */

static void
h_rm(struct pl_an *an, struct pl_cmd *c)
{
	int rec = has_opt(c, 'r', "--recursive") || has_opt(c, 'R', NULL);
	int dd = 0, i;

	if (has_arg(c, "--no-preserve-root"))
		pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:no-preserve-root",
		    c->off, c->len, "'rm --no-preserve-root' disables the "
		    "safety check for '/'");
	if (strcmp(c->name, "shred") == 0 || strcmp(c->name, "srm") == 0 ||
	    strcmp(c->name, "wipe") == 0)
		rec = 1;
	for (i = 1; (i = next_operand(c, i, "n", &dd)) < c->argc; i++)
		delete_target(an, c, &c->argv[i], rec);
	pl_stream_text(c->out, "", 0, 0);
}

static void
h_rmdir(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = next_operand(c, i, NULL, &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_PROTECTED && !(p.attr & PA_UNRESOLVED) &&
		    (p.attr & (PA_ROOT | PA_HOME | PA_SYSBIN | PA_ETC)))
			delete_target(an, c, &c->argv[i], 0);
	}
}

/* Classifies the destination of a copy: a directory receives a new
 * entry, so "cp x ~/" writes into the home, not over it. */
static void
write_dest(struct pl_an *an, const struct pl_field *dest, const char *why)
{
	struct pl_path p;
	struct pl_field child;
	char *s;

	pl_path_classify(an, dest, &p);
	if (dest->len > 0 && (dest->s[dest->len - 1] == '/' ||
	    eq(dest, ".") || eq(dest, "..") || (p.cls == PC_PROTECTED &&
	    (p.attr & (PA_HOME | PA_TMPROOT | PA_ROOT)) &&
	    !(p.attr & PA_UNRESOLVED)))) {
		child = *dest;
		s = pl_alloc(an->a, dest->len + 3);
		memcpy(s, dest->s, dest->len);
		memcpy(s + dest->len, "/x", 2);
		child.s = s;
		child.len = dest->len + 2;
		pl_classify_write(an, &child, 0, why);
		return;
	}
	pl_classify_write(an, dest, 0, why);
}

/* mv, cp, install, ln: the last operand (or -t DIR) is written. */
static void
h_copy(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *dest = opt_val(an, c, 't', "--target-directory");
	int ops[64], nops = 0, dd = 0, i, last;
	int mv = strcmp(c->name, "mv") == 0, ln = strcmp(c->name, "ln") == 0;
	const char *shortargs = ln ? "S" : "STm";

	if (strcmp(c->name, "install") == 0) {
		const struct pl_field *m = opt_val(an, c, 'm', "--mode");
		int setid = 0;

		shortargs = "mgoStTb";
		if (m != NULL && (mode_loosens(m->s, &setid, 0) || 1) && setid)
			pl_find(an, VG_CAT_PERMISSIONS, "builtin:setuid", c->off,
			    c->len, "'install -m %s' creates a setuid/setgid "
			    "file", m->s);
	}
	for (i = 1; (i = next_operand(c, i, shortargs, &dd)) < c->argc &&
	    nops < 64; i++)
		ops[nops++] = i;
	if (nops == 0)
		return;
	last = dest == NULL ? nops - 1 : nops;
	if (dest == NULL && nops == 1 && !ln)
		return;
	if (dest == NULL)
		dest = &c->argv[ops[nops - 1]];
	for (i = 0; i < last; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[ops[i]], &p);
		if (ln)
			break;
		if (p.attr & PA_SECRET) {
			secret_read(an, c, &p);
			continue;
		}
		if (mv && p.cls == PC_PROTECTED && !(p.attr & PA_UNRESOLVED))
			pl_find_floor(an, pl_path_top(an, &p) ?
			    PL_FLOOR_DELETE : NULL, VG_CAT_DESTRUCTIVE,
			    "builtin:mv-protected",
			    c->off, c->len, "'mv' moves the protected path "
			    "'%s' away", pshow(&p));
		if (mv && p.cls == PC_DEVICE)
			pl_find(an, VG_CAT_DISK, "builtin:mv-device", c->off,
			    c->len, "'mv' moves the device '%s'", pshow(&p));
	}
	if (ln && nops == 1)
		return;		/* ln -s TARGET: link in the cwd */
	{
		/* A directory destination receives the source's name. */
		struct pl_path dp;

		pl_path_classify(an, dest, &dp);
		if (dp.cls == PC_PROTECTED && !(dp.attr & PA_UNRESOLVED) &&
		    last == 1 && (dp.attr & (PA_ETC | PA_ROOT)) && !ln &&
		    !(dp.attr & (PA_SUDOERS | PA_CRON | PA_PRELOAD | PA_RC)) &&
		    strcmp(dp.abs, "/etc") != 0) {
			/* cp x /etc/foo.conf and cp x /etc/ are both
			 * system configuration writes. */
		}
		if (dp.cls == PC_PROTECTED && (dp.attr & PA_SYSBIN) == 0 &&
		    (dp.attr & PA_UNRESOLVED) == 0 && mv &&
		    strncmp(dp.abs, "/dev/null", 9) == 0)
			return;
		if (!ln && last == 1)
			pl_file_copied(an, &c->argv[ops[0]], dest);
	}
	write_dest(an, dest, c->name);
}

static void
h_tee(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, app = has_opt(c, 'a', "--append");

	for (i = 1; (i = next_operand(c, i, NULL, &dd)) < c->argc; i++)
		pl_classify_write(an, &c->argv[i], app, "'tee'");
	*c->out = *c->in;
	for (i = 1; i < c->argc; i++) {
		struct pl_path p;

		if (is_opt(&c->argv[i]))
			continue;
		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls != PC_SPECIAL && p.abs != NULL)
			pl_file_note(an, p.abs, c->in->taint, c->in->known ?
			    c->in->s : NULL, c->in->len);
	}
}

static void
h_truncate(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = next_operand(c, i, "sor", &dd)) < c->argc; i++)
		pl_classify_write(an, &c->argv[i], 0, "'truncate'");
}

static void
h_touch(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = next_operand(c, i, "dtr", &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_PROTECTED && (p.attr & (PA_ETC | PA_CRON |
		    PA_SUDOERS | PA_PRELOAD | PA_SYSBIN)))
			pl_classify_write(an, &c->argv[i], 1, "'touch'");
	}
}

static void
h_dd(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (strncmp(f->s, "of=", 3) == 0)
			pl_classify_write(an, subfield(an, f, 3), 0, "'dd'");
		if (strncmp(f->s, "if=", 3) == 0) {
			struct pl_path p;

			pl_path_classify(an, subfield(an, f, 3), &p);
			if (p.attr & PA_SECRET)
				secret_read(an, c, &p);
		}
	}
	out_default(c);
}

/* An archive unpacked into dir writes there: judged as a write when dir
 * is "/", /etc, a home directory itself, or anywhere under /usr
 * (/usr/local included), /opt or the system binaries; unpacking into
 * other directories (the workspace, scratch, /tmp) is ordinary. */
static void
extract_into(struct pl_an *an, const struct pl_field *dir, const char *what)
{
	struct pl_path p;

	pl_path_classify(an, dir, &p);
	if (p.cls == PC_PROTECTED && (p.attr & (PA_ROOT | PA_ETC | PA_SYSBIN |
	    PA_HOME | PA_SOFTWARE)))
		pl_classify_write(an, dir, 0, what);
}

/* Readers of file contents: secrets read are exfiltration. */
static void
h_reader(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, nops = 0;
	const char *sa = NULL;

	if (strcmp(c->name, "grep") == 0 || strcmp(c->name, "egrep") == 0 ||
	    strcmp(c->name, "fgrep") == 0 || strcmp(c->name, "rg") == 0)
		sa = "efmABCd";
	else if (strcmp(c->name, "head") == 0 || strcmp(c->name, "tail") == 0)
		sa = "nc";
	else if (strcmp(c->name, "tar") == 0)
		sa = "fCT";
	out_default(c);
	if (strcmp(c->name, "gpg") == 0 && (has_arg(c, "--export-secret-keys")
	    || has_arg(c, "--export-secret-subkeys"))) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:secret-read", c->off,
		    c->len, "'gpg' exports private keys");
		c->out->taint |= T_SECRET;
	}
	for (i = 1; (i = next_operand(c, i, sa, &dd)) < c->argc; i++) {
		struct pl_path p;
		struct pl_file *tf;

		nops++;
		pl_path_classify(an, &c->argv[i], &p);
		if (p.attr & PA_SECRET) {
			secret_read(an, c, &p);
			continue;
		}
		if (strcmp(c->name, "cat") == 0 && nops == 1 &&
		    (tf = pl_file_find(an, p.abs)) != NULL) {
			if (tf->content != NULL)
				pl_stream_text(c->out, tf->content, tf->clen,
				    tf->taint);
			else
				c->out->taint |= tf->taint;
		}
		if (p.cls == PC_NET)
			c->out->taint |= T_SOCK | T_NET;
	}
	if (strcmp(c->name, "tar") == 0) {
		/* tar -x -C DIR writes into DIR; tar -f F -c writes F. */
		const struct pl_field *dir = opt_val(an, c, 'C', "--directory");

		if (dir != NULL && (has_opt(c, 'x', "--extract") ||
		    (c->argc > 1 && c->argv[1].s[0] != '-' &&
		    memchr(c->argv[1].s, 'x', c->argv[1].len))))
			extract_into(an, dir, "'tar -x'");
	}
	if (strcmp(c->name, "unzip") == 0 && !has_opt(c, 'l', NULL) &&
	    !has_opt(c, 't', NULL) && !has_opt(c, 'Z', NULL)) {
		const struct pl_field *dir = opt_val(an, c, 'd', NULL);

		if (dir != NULL)
			extract_into(an, dir, "'unzip -d'");
	}
	if (nops == 0 && (strcmp(c->name, "cat") == 0 ||
	    strcmp(c->name, "tac") == 0))
		*c->out = *c->in;
}

/* Editors run by a script rather than a person: ed and ex read their
 * commands from stdin or -c, vim/vi/nvim with -c, --cmd, +CMD, -s, -S,
 * -e/-E or --headless; they write their file operands (judged as
 * writes) unless read-only (-R, -M, view).  An interactive editor
 * (no script) is only a reader. */
static void
h_editor(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const valued[] = { "-c", "--cmd", "-S", "-s", "-T",
	    "-u", "-U", "-i", "-w", "-W", "-t", "-q", "--listen",
	    "--servername", "--remote", "-r", "-V", NULL };
	const char *n = c->name;
	int ed = strcmp(n, "ed") == 0 || strcmp(n, "red") == 0 ||
	    strcmp(n, "ex") == 0;
	int scripted = strcmp(n, "ed") == 0 || strcmp(n, "ex") == 0;
	int ro = strcmp(n, "view") == 0 || strcmp(n, "red") == 0, i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "-R") || eq(f, "-M") || eq(f, "--help") ||
		    eq(f, "--version"))
			ro = 1;
		if (f->s[0] == '+' || eq(f, "-c") || eq(f, "--cmd") ||
		    eq(f, "-S") || eq(f, "--headless") || eq(f, "-es") ||
		    eq(f, "-Es") || eq(f, "-e") || eq(f, "-E") ||
		    (eq(f, "-s") && !ed) || (f->s[0] == '-' && f->s[1] != '-' &&
		    strchr(f->s, 'c') != NULL && ed))
			scripted = 1;
	}
	if (!scripted || ro) {
		h_reader(an, c);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "--"))
			continue;
		if (is_opt(f) || f->s[0] == '+') {
			if (eq_any(f, valued) && !(ed && eq(f, "-s")))
				i++;
			continue;
		}
		pl_classify_write(an, f, 0, n);
	}
	out_default(c);
}

/* emacs in batch mode (--batch, -batch, --script) with code to run
 * (--eval, -f, -l, --script, ...) may save the files it visits: its file
 * operands and --file/--visit/--find-file values are judged as writes.
 * An interactive emacs (no code) is only a reader. */
static void
h_emacs(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const code[] = { "--eval", "--execute", "-eval",
	    "-execute", "-f", "--funcall", "-funcall", "-l", "--load",
	    "-load", "--script", "-script", "-x", NULL };
	static const char *const valued[] = { "-L", "--directory",
	    "--insert", "-insert", "-u", "--user", "--init-directory",
	    "-t", "--terminal", "-d", "--display", "--chdir", "--fg-color",
	    "--bg-color", "--name", "--title", "-T", "-fn", "--font", NULL };
	static const char *const visit[] = { "--file", "--find-file",
	    "--visit", "-file", "-find-file", "-visit", NULL };
	int i, batch = 0, runs = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "--batch") || eq(f, "-batch") || eq(f, "--script") ||
		    eq(f, "-script"))
			batch = 1;
		if (eq_any(f, code))
			runs = 1;
	}
	if (!batch || !runs) {
		h_reader(an, c);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq_any(f, code) || eq_any(f, valued)) {
			i++;
			continue;
		}
		if (eq_any(f, visit) && i + 1 < c->argc) {
			pl_classify_write(an, &c->argv[++i], 0, "'emacs'");
			continue;
		}
		if (is_opt(f) || f->s[0] == '+')
			continue;
		pl_classify_write(an, f, 0, "'emacs'");
	}
	out_default(c);
}

/* Tools that edit the user's shell start-up files (~/.bashrc, ~/.zshrc,
 * ...) to load themselves: the command word that does it (argv[1];
 * NULL: every run), for micromamba the word after it, an option that
 * must be given, and the options under which they only print or leave
 * the files alone (besides --help). */
static const char *const rc_dry[] = { "--dry-run", "-d", NULL };
static const struct rc_editor {
	const char		*name;
	const char		*verb;
	const char *const	*verb2;
	const char		*opt;
	const char *const	*keep;
} rc_editors[] = {
	{ "conda", "init", NULL, NULL, rc_dry },
	{ "mamba", "init", NULL, NULL, rc_dry },
	{ "micromamba", "shell", (const char *const[]){ "init", "deinit",
	  NULL }, NULL, rc_dry },
	{ "rustup-init", NULL, NULL, NULL, (const char *const[]){
	  "--no-modify-path", "-V", "--version", NULL } },
	{ "pipx", "ensurepath", NULL, NULL, NULL },
	{ "opam", "init", NULL, NULL, (const char *const[]){ "-n",
	  "--no-setup", NULL } },
	{ "broot", NULL, NULL, "--install", NULL },
};

static void
h_shell_init(struct pl_an *an, struct pl_cmd *c)
{
	const struct rc_editor *r = NULL;
	size_t k;
	int i = 1;

	for (k = 0; k < sizeof(rc_editors) / sizeof(rc_editors[0]); k++)
		if (strcmp(rc_editors[k].name, c->name) == 0)
			r = &rc_editors[k];
	if (r == NULL || has_arg(c, "--help") || has_arg(c, "-h") ||
	    (r->keep != NULL && has_any(c, r->keep)))
		return;
	if (r->verb != NULL && (i >= c->argc || !eq(&c->argv[i++], r->verb)))
		return;
	if (r->verb2 != NULL && (i >= c->argc || !eq_any(&c->argv[i++],
	    r->verb2)))
		return;
	if (r->opt != NULL && !has_arg(c, r->opt))
		return;
	pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-startup", c->off, c->len,
	    "'%s%s%s%s%s' edits the shell's start-up files (~/.bashrc and "
	    "the like)", c->name, r->verb != NULL ? " " : "", r->verb != NULL ?
	    r->verb : "", r->verb2 != NULL ? " " : "", r->verb2 != NULL ?
	    c->argv[i - 1].s : "");
}

/* sd FIND REPLACE FILE...: replaces in its files in place unless
 * -p/--preview prints the result instead. */
static void
h_sd(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, nop = 0;

	if (has_opt(c, 'p', "--preview") || has_arg(c, "--help") ||
	    has_arg(c, "-h") || has_arg(c, "--version"))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (!dd && eq(f, "--")) {
			dd = 1;
			continue;
		}
		if (!dd && is_opt(f)) {
			if (eq(f, "-n") || eq(f, "-f") ||
			    eq(f, "--max-replacements") || eq(f, "--flags"))
				i++;
			continue;
		}
		if (++nop > 2)
			pl_classify_write(an, f, 0, "'sd'");
	}
	out_default(c);
}

/* sponge FILE: soaks stdin up, then writes FILE. */
static void
h_sponge(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = next_operand(c, 1, NULL, &dd);

	if (i < c->argc)
		pl_classify_write(an, &c->argv[i], has_opt(c, 'a', NULL),
		    "'sponge'");
}

/* crudini --set/--del/--merge FILE ...: edits FILE in place. */
static void
h_crudini(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const edits[] = { "--set", "--del", "--merge",
	    NULL };
	int i;

	for (i = 1; i + 1 < c->argc; i++)
		if (eq_any(&c->argv[i], edits)) {
			int k = i + 1;

			while (k < c->argc && is_opt(&c->argv[k]))
				k++;
			if (k < c->argc)
				pl_classify_write(an, &c->argv[k], 0,
				    "'crudini'");
			return;
		}
}

static void
h_sed(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, script = 1, inplace = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (strncmp(f->s, "-i", 2) == 0 ||
		    strncmp(f->s, "--in-place", 10) == 0 ||
		    (is_opt(f) && f->s[1] != '-' && memchr(f->s, 'i', f->len)))
			inplace = 1;
		if (eq(f, "-e") || eq(f, "-f") || strncmp(f->s, "--expression",
		    12) == 0)
			script = 0;
	}
	out_default(c);
	for (i = 1; (i = next_operand(c, i, "ef", &dd)) < c->argc; i++) {
		struct pl_path p;

		if (script) {
			script = 0;
			continue;
		}
		pl_path_classify(an, &c->argv[i], &p);
		if (p.attr & PA_SECRET)
			secret_read(an, c, &p);
		if (inplace)
			pl_classify_write(an, &c->argv[i], 0, "'sed -i'");
	}
}

/* ---- permissions ---- */

/* True when a chmod mode grants write to others or is setuid/setgid. */
static int
mode_loosens(const char *m, int *setid, int secret)
{
	size_t n = strlen(m), i;

	*setid = 0;
	if (n > 0 && m[0] >= '0' && m[0] <= '7') {
		unsigned long v = strtoul(m, NULL, 8);

		if (n >= 4 && (v & 06000))
			*setid = 1;
		if (secret)
			return (v & 077) != 0;
		return (v & 002) != 0;
	}
	for (i = 0; i < n; i++) {
		if (m[i] == '+' || m[i] == '=') {
			size_t j = i;
			int who_o = 0, who_g = 0, none = 1;

			while (j > 0 && m[j - 1] != ',') {
				j--;
				none = 0;
				if (m[j] == 'o' || m[j] == 'a')
					who_o = 1;
				if (m[j] == 'g' || m[j] == 'a')
					who_g = 1;
			}
			if (none)
				who_o = who_g = 1;
			for (j = i + 1; j < n && m[j] != ','; j++) {
				if (m[j] == 's')
					*setid = 1;
				if (m[j] == 'w' && who_o)
					return 1;
				if (secret && (who_o || who_g) &&
				    (m[j] == 'r' || m[j] == 'w'))
					return 1;
			}
		}
	}
	return 0;
}

static void
h_chmod(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, rec = has_opt(c, 'R', "--recursive"), setid, first = 1;
	const char *mode = NULL;

	for (i = 1; (i = next_operand(c, i, NULL, &dd)) < c->argc; i++) {
		struct pl_path p;
		int loose;

		if (first) {
			mode = c->argv[i].s;
			first = 0;
			continue;
		}
		if (strncmp(c->argv[i].s, "--reference", 11) == 0)
			continue;
		pl_path_classify(an, &c->argv[i], &p);
		loose = mode_loosens(mode, &setid, (p.attr & PA_SECRET) != 0);
		if (setid) {
			pl_find(an, VG_CAT_PERMISSIONS, "builtin:setuid", c->off,
			    c->len, "'chmod %s' sets a setuid/setgid bit on "
			    "'%s'", mode, pshow(&p));
			continue;
		}
		if (p.cls != PC_PROTECTED && p.cls != PC_DEVICE)
			continue;
		if (p.attr & PA_UNRESOLVED) {
			if (rec)
				pl_find(an, VG_CAT_PERMISSIONS,
				    "builtin:chmod-unknown", c->off, c->len,
				    "'chmod -R' on a path that cannot be "
				    "resolved");
			continue;
		}
		if (loose || rec || p.cls == PC_DEVICE ||
		    (p.attr & (PA_ROOT | PA_ETC | PA_SYSBIN)) ||
		    ((p.attr & (PA_HOME | PA_SSH | PA_RC | PA_SECRET |
		    PA_TMPROOT | PA_HISTORY)) == 0))
			pl_find_floor(an, rec && pl_path_top(an, &p) ?
			    PL_FLOOR_PERMS : NULL, VG_CAT_PERMISSIONS,
			    "builtin:chmod-protected", c->off, c->len, "'chmod %s%s' on the protected "
			    "path '%s'", rec ? "-R " : "", mode, pshow(&p));
	}
}

static void
h_chown(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, rec = has_opt(c, 'R', "--recursive"), first = 1;
	int acl = strcmp(c->name, "setfacl") == 0 ||
	    strcmp(c->name, "chattr") == 0;

	for (i = 1; (i = next_operand(c, i, acl ? "mMxX" : NULL, &dd)) <
	    c->argc; i++) {
		struct pl_path p;

		if (first && !acl) {
			first = 0;
			continue;
		}
		if (strcmp(c->name, "chattr") == 0 && (c->argv[i].s[0] == '+' ||
		    c->argv[i].s[0] == '='))
			continue;
		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls != PC_PROTECTED && p.cls != PC_DEVICE)
			continue;
		if ((p.attr & PA_UNRESOLVED) && !rec)
			continue;
		pl_find_floor(an, rec && pl_path_top(an, &p) ? PL_FLOOR_PERMS :
		    NULL, VG_CAT_PERMISSIONS, "builtin:chown-protected",
		    c->off, c->len, "'%s%s' changes ownership or attributes "
		    "of the protected path '%s'", c->name, rec ? " -R" : "",
		    pshow(&p));
	}
}

static void
h_setcap(struct pl_an *an, struct pl_cmd *c)
{
	if (has_opt(c, 'v', NULL) || c->argc < 3)
		return;
	pl_find(an, VG_CAT_PERMISSIONS, "builtin:setcap", c->off, c->len,
	    "'setcap' grants file capabilities");
}

/* ---- disks and filesystems ---- */

static int
any_device(struct pl_an *an, const struct pl_cmd *c, int from, int unknown)
{
	int dd = 0, i;

	for (i = from; (i = next_operand(c, i, NULL, &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_DEVICE)
			return 1;
		if (unknown && (p.attr & PA_UNRESOLVED))
			return 1;
		if (p.cls == PC_PROTECTED && (p.attr & (PA_ROOT | PA_SYSBIN)))
			return 1;
	}
	return 0;
}

/* True when any argument starts with one of the prefixes in list. */
static int
has_prefix(const struct pl_cmd *c, const char *const *list)
{
	int i, k;

	for (i = 1; i < c->argc; i++)
		for (k = 0; list[k] != NULL; k++)
			if (strncmp(c->argv[i].s, list[k], strlen(list[k])) == 0)
				return 1;
	return 0;
}

/* The operand words of parted after the device: a script of commands,
 * read-only when every command only prints. */
static int
parted_reads(const struct pl_cmd *c)
{
	static const char *const looks[] = { "print", "p", "unit", "help",
	    "version", "align-check", "quit", "list", "free", "B", "s", "MiB",
	    "GiB", "MB", "GB", "kB", "KiB", "TB", "TiB", "%", "cyl", "chs",
	    "compact", "minimal", "optimal", "min", "opt", "all", NULL };
	int i, dev = 0, ops = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (is_opt(f) || (f->s[0] >= '0' && f->s[0] <= '9'))
			continue;
		if (!dev && f->s[0] == '/') {
			dev = 1;
			continue;
		}
		ops++;
		if (!eq_any(f, looks))
			return 0;
	}
	return ops > 0;
}

/* True when w is an abbreviation btrfs accepts for full (a prefix of at
 * least two letters; btrfs takes any unambiguous one). */
static int
btrfs_abbrev(const struct pl_field *w, const char *full)
{
	return w->len >= 2 && w->len <= strlen(full) &&
	    strncmp(w->s, full, w->len) == 0;
}

/* The index of btrfs's command group (the first operand, c->argc when
 * none) and in *verb the index of its verb (the next operand). */
static int
btrfs_words(const struct pl_cmd *c, int *verb)
{
	int i, j;

	for (i = 1; i < c->argc && is_opt(&c->argv[i]); i++)
		;
	for (j = i + 1; j < c->argc && is_opt(&c->argv[j]); j++)
		;
	*verb = j < c->argc ? j : c->argc;
	return i;
}

static const struct btrfs_ro {
	const char		*group;
	const char *const	*verbs;	/* NULL: every verb */
} btrfs_ro[] = {
	{ "subvolume", (const char *const[]){ "list", "show",
	  "get-default", "find-new", NULL } },
	{ "filesystem", (const char *const[]){ "df", "show", "usage",
	  "du", NULL } },
	{ "device", (const char *const[]){ "stats", "usage", "ready",
	  NULL } },
	{ "qgroup", (const char *const[]){ "show", NULL } },
	{ "scrub", (const char *const[]){ "status", NULL } },
	{ "balance", (const char *const[]){ "status", NULL } },
	{ "replace", (const char *const[]){ "status", NULL } },
	{ "property", (const char *const[]){ "get", "list", NULL } },
	{ "inspect-internal", NULL },
};

/* btrfs's read-only forms: listing and showing subvolumes, file
 * systems, devices, quota groups and properties, the status of scrub,
 * balance and replace, inspect-internal dumps, check without a repair
 * option, help and version. */
static int
btrfs_reads(struct pl_cmd *c)
{
	static const char *const repair[] = { "--repair", "--init-csum-tree",
	    "--init-extent-tree", "--clear-space-cache", "-z", "--reset",
	    NULL };
	const struct pl_field *g = NULL, *v = NULL;
	size_t k;
	int i, j;

	i = btrfs_words(c, &j);
	if (i == c->argc || has_arg(c, "--help") || has_arg(c, "--version"))
		return 1;
	g = &c->argv[i];
	if (eq(g, "help") || eq(g, "version"))
		return 1;
	if (has_any(c, repair))
		return 0;
	if (btrfs_abbrev(g, "check"))
		return 1;
	v = j < c->argc ? &c->argv[j] : NULL;
	for (k = 0; k < sizeof(btrfs_ro) / sizeof(btrfs_ro[0]); k++) {
		if (!btrfs_abbrev(g, btrfs_ro[k].group))
			continue;
		if (btrfs_ro[k].verbs == NULL)
			return 1;
		if (v == NULL)
			return 1;	/* the group's usage */
		for (j = 0; btrfs_ro[k].verbs[j] != NULL; j++)
			if (btrfs_abbrev(v, btrfs_ro[k].verbs[j]))
				return 1;
		return 0;
	}
	return 0;
}

/* Tools that only inspect: the disk table's read-only forms. */
static int
disk_reads(struct pl_cmd *c)
{
	static const char *const sgdisk_ro[] = { "-p", "--print", "-i",
	    "--info", "-v", "--verify", "-L", "--list-types", "-O",
	    "--print-mbr", "-b", "--backup", "-P", "--pretend", NULL };
	static const char *const sfdisk_ro[] = { "-l", "--list", "-d",
	    "--dump", "-s", "--show-size", "-V", "--verify", "-J", "--json",
	    "-g", "--show-geometry", "-F", "--list-free", "-r", "--raw",
	    "-n", "--no-act", "-T", "--list-types", NULL };
	const char *n = c->name;

	if (has_arg(c, "--help") || has_arg(c, "--version") ||
	    (c->argc == 2 && (eq(&c->argv[1], "-h") || eq(&c->argv[1], "-V"))))
		return 1;
	if (strcmp(n, "fdisk") == 0 || strcmp(n, "cfdisk") == 0)
		return has_opt(c, 'l', "--list") || has_arg(c, "-x") ||
		    has_arg(c, "--list-details");
	if (strcmp(n, "sfdisk") == 0)
		return has_any(c, sfdisk_ro);
	if (strcmp(n, "gdisk") == 0)
		return has_opt(c, 'l', NULL);
	if (strcmp(n, "sgdisk") == 0) {
		int i;

		if (has_arg(c, "-P") || has_arg(c, "--pretend"))
			return 1;
		for (i = 1; i < c->argc; i++)
			if (is_opt(&c->argv[i]) && !eq_any(&c->argv[i],
			    sgdisk_ro))
				return 0;
		return 1;
	}
	if (strcmp(n, "parted") == 0)
		return has_opt(c, 'l', "--list") || parted_reads(c);
	if (strcmp(n, "wipefs") == 0)
		return !has_opt(c, 'a', "--all") && !has_opt(c, 'o',
		    "--offset") && !has_arg(c, "--types") && !has_arg(c, "-t");
	if (strcmp(n, "hdparm") == 0)
		return !has_arg(c, "--security-erase") &&
		    !has_arg(c, "--security-erase-enhanced") &&
		    !has_arg(c, "--trim-sector-ranges") &&
		    !has_arg(c, "--write-sector") && !has_arg(c, "-z") &&
		    !has_arg(c, "--security-set-pass") && !has_arg(c, "--dco-restore");
	if (strcmp(n, "badblocks") == 0)
		return !has_opt(c, 'w', NULL) && !has_opt(c, 'n', NULL);
	if (strcmp(n, "losetup") == 0)
		return c->argc == 1 || has_opt(c, 'a', "--all") ||
		    has_opt(c, 'l', "--list") || has_arg(c, "-f");
	if (strcmp(n, "mdadm") == 0)
		return has_opt(c, 'D', "--detail") || has_opt(c, 'E',
		    "--examine") || has_arg(c, "--query") || has_arg(c, "-Q") ||
		    has_arg(c, "--detail-platform") || has_arg(c, "--monitor");
	if (strcmp(n, "cryptsetup") == 0)
		return c->argc > 1 && (has_arg(c, "status") ||
		    has_arg(c, "luksDump") || has_arg(c, "isLuks") ||
		    has_arg(c, "benchmark") || has_arg(c, "luksUUID"));
	if (strcmp(n, "btrfs") == 0)
		return btrfs_reads(c);
	if (strcmp(n, "zpool") == 0 && c->argc >= 2 &&
	    eq(&c->argv[1], "import") && word_count(c) == 1 &&
	    !has_opt(c, 'a', NULL))
		return 1;	/* lists the pools it could import */
	if (strcmp(n, "debugfs") == 0)	/* read-only unless -w */
		return !has_opt(c, 'w', NULL);
	if (strcmp(n, "zpool") == 0 || strcmp(n, "zfs") == 0)
		return c->argc < 2 || eq(&c->argv[1], "list") ||
		    eq(&c->argv[1], "status") || eq(&c->argv[1], "get") ||
		    eq(&c->argv[1], "iostat") || eq(&c->argv[1], "history") ||
		    eq(&c->argv[1], "events");
	if (strcmp(n, "dmsetup") == 0)
		return c->argc < 2 || eq(&c->argv[1], "ls") ||
		    eq(&c->argv[1], "info") || eq(&c->argv[1], "status") ||
		    eq(&c->argv[1], "table") || eq(&c->argv[1], "deps");
	if (strcmp(n, "nvme") == 0)
		return c->argc < 2 || !(eq(&c->argv[1], "format") ||
		    eq(&c->argv[1], "sanitize") ||
		    eq(&c->argv[1], "write-zeroes") ||
		    eq(&c->argv[1], "write") || eq(&c->argv[1], "fw-download") ||
		    eq(&c->argv[1], "fw-commit") ||
		    eq(&c->argv[1], "delete-ns") ||
		    eq(&c->argv[1], "create-ns"));
	if (strcmp(n, "resize2fs") == 0)	/* -P: the minimum size */
		return has_opt(c, 'P', NULL);
	if (strcmp(n, "tune2fs") == 0 || strcmp(n, "e2fsck") == 0 ||
	    strcmp(n, "fsck") == 0 || strcmp(n, "xfs_repair") == 0)
		return has_opt(c, 'l', NULL) || has_opt(c, 'n', NULL);
	if (strcmp(n, "efibootmgr") == 0) {
		static const char *const w[] = { "-c", "--create", "-C",
		    "--create-only", "-B", "--delete-bootnum", "-o",
		    "--bootorder", "-O", "--delete-bootorder", "-a", "--active",
		    "-A", "--inactive", "-n", "--bootnext", "-N",
		    "--delete-bootnext", "-t", "--timeout", "-T",
		    "--delete-timeout", "-w", "--write-signature", "-D",
		    "--remove-dups", NULL };

		return !has_any(c, w);
	}
	if (strcmp(n, "fwupdmgr") == 0 || strcmp(n, "fwupdtool") == 0) {
		/* Firmware flashers: their get-*, refresh, search and
		 * security forms only show. */
		static const char *const w[] = { "install", "update",
		    "upgrade", "downgrade", "reinstall", "local-install",
		    "install-blob", "switch-branch", "unlock", "activate",
		    "modify-config", "reset-config", "set-bios-setting",
		    "security-fix", "security-undo", "sync", NULL };

		return !has_any(c, w);
	}
	if (strcmp(n, "flashrom") == 0)
		return !has_opt(c, 'w', "--write") && !has_opt(c, 'E',
		    "--erase") && !has_arg(c, "--wp-enable") &&
		    !has_arg(c, "--wp-disable");
	if (strcmp(n, "blockdev") == 0) {
		static const char *const w[] = { "--set", "--flushbufs",
		    "--rereadpt", NULL };

		return !has_prefix(c, w);
	}
	if (strcmp(n, "bootctl") == 0)
		return c->argc < 2 || !(has_arg(c, "install") ||
		    has_arg(c, "update") || has_arg(c, "remove") ||
		    has_arg(c, "set-default") || has_arg(c, "set-oneshot") ||
		    has_arg(c, "set-timeout") || has_arg(c, "unlink") ||
		    has_arg(c, "cleanup") || has_arg(c, "random-seed"));
	if (strncmp(n, "pv", 2) == 0 || strncmp(n, "vg", 2) == 0 ||
	    strncmp(n, "lv", 2) == 0)
		return has_opt(c, 't', "--test");
	return 0;
}

/* Disk tools that destroy what a device holds (the built-in floor):
 * new filesystems or swap, wiping, discarding, zapping, secure erase. */
static int
disk_destroys(struct pl_cmd *c)
{
	const char *n = c->name;

	if (strcmp(n, "mkfs") == 0 || strcmp(n, "mkswap") == 0 ||
	    strcmp(n, "wipefs") == 0 || strcmp(n, "blkdiscard") == 0 ||
	    strcmp(n, "mkdosfs") == 0 || strcmp(n, "mkntfs") == 0 ||
	    strcmp(n, "sg_format") == 0)
		return 1;
	if (strcmp(n, "sgdisk") == 0)
		return has_opt(c, 'Z', "--zap-all") || has_opt(c, 'z', "--zap");
	if (strcmp(n, "mdadm") == 0)
		return has_arg(c, "--zero-superblock");
	if (strcmp(n, "cryptsetup") == 0)
		return has_arg(c, "luksFormat") || has_arg(c, "erase") ||
		    has_arg(c, "luksErase");
	if (strcmp(n, "nvme") == 0)
		return c->argc > 1 && (eq(&c->argv[1], "format") ||
		    eq(&c->argv[1], "sanitize"));
	if (strcmp(n, "hdparm") == 0)
		return has_arg(c, "--security-erase") ||
		    has_arg(c, "--security-erase-enhanced") ||
		    has_arg(c, "--write-sector");
	return 0;
}

/* Disk, partition table, bootloader, LVM, RAID and firmware writers:
 * their read-only forms pass (disk_reads); the others change what a
 * disk holds.  Those that change metadata or firmware without naming a
 * device (LVM, RAID, encryption, pools, bootloaders, flash) are judged
 * by their verb; the rest when given a device. */
static void
h_disk(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const always[] = { "zpool", "zfs", "vgremove",
	    "lvremove", "vgcreate", "lvcreate", "pvremove", "dmsetup",
	    "cryptsetup", "mdadm", "vgextend", "vgreduce", "vgchange",
	    "vgrename", "vgmerge", "vgsplit", "lvresize", "lvextend",
	    "lvreduce", "lvconvert", "lvrename", "lvchange", "pvmove",
	    "pvresize", "pvchange", "grub-install", "grub2-install",
	    "efibootmgr", "flashrom", "fwupdmgr", "fwupdtool", "bootctl",
	    "nvme", NULL };
	const char *n = c->name;
	struct pl_field name = { .s = n, .len = strlen(n) };
	int dev, g, v;

	if (disk_reads(c) || (c->argc < 2 && strcmp(n, "dmsetup") != 0))
		return;
	/* Deleting a subvolume deletes its tree, as rm -r does. */
	if (strcmp(n, "btrfs") == 0 && (g = btrfs_words(c, &v)) < c->argc &&
	    v < c->argc && btrfs_abbrev(&c->argv[g], "subvolume") &&
	    btrfs_abbrev(&c->argv[v], "delete")) {
		for (v++; v < c->argc; v++)
			if (!is_opt(&c->argv[v]))
				delete_target(an, c, &c->argv[v], 1);
		return;
	}
	dev = any_device(an, c, 1, 1);
	/* mkswap FILE overwrites the file: judged as a write of it. */
	if (!dev && strcmp(n, "mkswap") == 0) {
		int dd = 0;

		if ((g = next_operand(c, 1, "LUpeos", &dd)) < c->argc)
			pl_classify_write(an, &c->argv[g], 0, "'mkswap'");
		return;
	}
	if (!dev && !eq_any(&name, always))
		return;
	pl_find_floor(an, dev && disk_destroys(c) ? PL_FLOOR_DISK : NULL,
	    VG_CAT_DISK, "builtin:disk-tool", c->off, c->len,
	    "'%s' changes a disk, partition table, bootloader, volume or "
	    "firmware", n);
}

/* Image and clone tools: the operand they write. */
static void
h_imager(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int ops[8], nops = 0, dd = 0, i;

	if (strcmp(n, "qemu-img") == 0) {
		if (c->argc < 2)
			return;
		if (eq(&c->argv[1], "dd")) {
			for (i = 2; i < c->argc; i++)
				if (strncmp(c->argv[i].s, "of=", 3) == 0)
					pl_classify_write(an, subfield(an,
					    &c->argv[i], 3), 0, "'qemu-img dd'");
			return;
		}
		if (!eq(&c->argv[1], "convert"))
			return;
		for (i = 2; (i = next_operand(c, i, "fOoBlrRsStTmWC", &dd)) <
		    c->argc && nops < 8; i++)
			ops[nops++] = i;
		if (nops >= 2)
			pl_classify_write(an, &c->argv[ops[nops - 1]], 0,
			    "'qemu-img convert'");
		return;
	}
	if (strncmp(n, "partclone", 9) == 0 || strcmp(n, "ntfsclone") == 0) {
		const struct pl_field *o = opt_val(an, c, 'o', "--output");

		if (o == NULL)
			o = opt_val(an, c, 'O', "--overwrite");
		if (o != NULL)
			pl_classify_write(an, o, 0, n);
		return;
	}
	/* ddrescue IN OUT [MAP], bmaptool copy IN OUT: the destination is
	 * bmaptool's last operand (its long options take values:
	 * --bmap FILE, --bmap-sig FILE). */
	for (i = 1; (i = next_operand(c, i, "bcimsxKT", &dd)) < c->argc &&
	    nops < 8; i++)
		ops[nops++] = i;
	if (strcmp(n, "bmaptool") == 0 && nops >= 3 && eq(&c->argv[ops[0]],
	    "copy"))
		pl_classify_write(an, &c->argv[ops[nops - 1]], 0,
		    "'bmaptool copy'");
	else if (strcmp(n, "ddrescue") == 0 && nops >= 2)
		pl_classify_write(an, &c->argv[ops[1]], 0, "'ddrescue'");
}

static void
h_mount(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int i, ops = 0;

	if (strcmp(n, "swapon") == 0 && (has_opt(c, 's', "--summary") ||
	    has_arg(c, "--show") || c->argc == 1))
		return;
	/* udisksctl: mounting, unmounting, locking, unlocking and powering
	 * off a drive change it; status, info, dump, monitor and loop-setup
	 * of an image only show or add. */
	if (strcmp(n, "udisksctl") == 0) {
		static const char *const change[] = { "mount", "unmount",
		    "power-off", "lock", "unlock", "loop-delete", NULL };

		if (c->argc < 2 || !eq_any(&c->argv[1], change) ||
		    has_arg(c, "--help") || has_arg(c, "-h"))
			return;
		pl_find(an, VG_CAT_DISK, "builtin:mount", c->off, c->len,
		    "'udisksctl %s' changes a drive or its mounts",
		    c->argv[1].s);
		return;
	}
	if (strcmp(n, "mount") == 0) {
		for (i = 1; i < c->argc; i++)
			if (!is_opt(&c->argv[i]) && !(i > 1 &&
			    (eq(&c->argv[i - 1], "-t") || eq(&c->argv[i - 1],
			    "-o") || eq(&c->argv[i - 1], "-O"))))
				ops++;
		if (ops == 0 && !has_opt(c, 'a', "--all"))
			return;
	}
	if (c->argc == 1 && strcmp(n, "swapoff") != 0 &&
	    strcmp(n, "umount") != 0)
		return;
	if (has_arg(c, "--help") || has_arg(c, "-V") || has_arg(c, "--version"))
		return;
	pl_find(an, VG_CAT_DISK, "builtin:mount", c->off, c->len,
	    "'%s' changes mounted filesystems or swap", n);
}

/* ---- network ---- */

/* Upload arguments of curl/wget that name files or carry data. */
static void
check_upload(struct pl_an *an, struct pl_cmd *c, const struct pl_field *v,
    int isfile)
{
	struct pl_path p;
	const char *s = v->s;
	size_t n = v->len, k;

	if (v->taint & (T_SECRET | T_ENVDUMP)) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (v->taint & T_SECRET) ? "secret data" : "the environment");
		return;
	}
	if (!isfile) {
		/* -d @file, -F name=@file, -F name=<file */
		const char *at = memchr(s, '@', n);
		const char *lt = memchr(s, '<', n);

		if (at == NULL && lt == NULL)
			return;
		k = (size_t)((at ? at : lt) - s) + 1;
		s += k;
		n -= k;
		if (n > 0 && (at == v->s || lt == v->s ||
		    memchr(v->s, '=', (size_t)(s - v->s)) != NULL))
			; /* a file reference */
		else
			return;
		{
			const char *semi = memchr(s, ';', n);

			if (semi)
				n = (size_t)(semi - s);
		}
	}
	if (n == 1 && s[0] == '-') {
		if (c->in->taint & (T_SECRET | T_ENVDUMP))
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret",
			    c->off, c->len, "'%s' sends %s over the network",
			    c->name, (c->in->taint & T_SECRET) ?
			    "secret data" : "the environment");
		return;
	}
	{
		struct pl_field f = *v;

		f.s = s;
		f.len = n;
		pl_path_classify(an, &f, &p);
	}
	if ((p.attr & PA_SECRET) || (p.abs && strcmp(p.abs, "/etc/passwd") == 0))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret", c->off,
		    c->len, "'%s' uploads '%s'", c->name, pshow(&p));
}

/* Remembers a downloaded file for saved-then-run detection. */
static void
note_download(struct pl_an *an, const struct pl_field *f)
{
	struct pl_path p;

	pl_path_classify(an, f, &p);
	pl_classify_write(an, f, 0, "download");
	if (p.abs != NULL)
		pl_file_note(an, p.abs, T_NET, NULL, 0);
}

/* The file name curl -O / wget give a URL. */
static void
note_url_name(struct pl_an *an, const struct pl_field *url, const char *dir)
{
	const char *s = url->s, *e = url->s + url->len, *q, *b;
	struct pl_field f = *url;
	char *name;
	size_t dl = dir ? strlen(dir) : 0;

	q = memchr(s, '?', url->len);
	if (q)
		e = q;
	b = e;
	while (b > s && b[-1] != '/')
		b--;
	if (b == e || b == s)
		return;
	name = pl_alloc(an->a, dl + (size_t)(e - b) + 2);
	if (dl) {
		memcpy(name, dir, dl);
		name[dl++] = '/';
	}
	memcpy(name + dl, b, (size_t)(e - b));
	f.s = name;
	f.len = dl + (size_t)(e - b);
	f.flags &= ~(unsigned)F_GLOB;
	note_download(an, &f);
}

/* Splits short option clusters ("-fsSLo out") so each option that takes
 * a value stands alone; returns a new argv in the arena. */
static void
split_clusters(struct pl_an *an, struct pl_cmd *c, const char *argletters)
{
	struct pl_field *nv;
	int i, n = 0;

	nv = pl_alloc(an->a, (size_t)(c->argc * 3 + 1) * sizeof(*nv));
	for (i = 0; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		size_t k;

		if (i == 0 || !is_opt(f) || f->s[1] == '-' || f->len <= 2) {
			nv[n++] = *f;
			continue;
		}
		for (k = 1; k < f->len; k++)
			if (strchr(argletters, f->s[k]) != NULL)
				break;
		if (k >= f->len || (k == 1 && f->len == 2)) {
			nv[n++] = *f;
			continue;
		}
		/* "-fsS" + "-o" + value (rest of cluster or next word) */
		if (k > 1) {
			nv[n] = *f;
			nv[n].s = pl_strndup(an->a, f->s, k);
			nv[n++].len = k;
		}
		nv[n] = *f;
		nv[n].s = pl_alloc(an->a, 3);
		((char *)(uintptr_t)nv[n].s)[0] = '-';
		((char *)(uintptr_t)nv[n].s)[1] = f->s[k];
		nv[n++].len = 2;
		if (k + 1 < f->len) {
			nv[n] = *f;
			nv[n].s = pl_strndup(an->a, f->s + k + 1,
			    f->len - k - 1);
			nv[n++].len = f->len - k - 1;
		}
	}
	c->argv = nv;
	c->argc = n;
}

/* The one URL curl or wget downloads, for rules that allow a source:
 * NULL when there are several, or options that read more (a config
 * file, an input file, wget commands, curl's --next). */
static const char *
one_url(const struct pl_cmd *c, int wget)
{
	static const char *const more[] = { "--config", "--next",
	    "--input-file", "--execute", "--base", "--url-query", NULL };
	const char *url = NULL, *s;
	int i, k;

	for (i = 1; i < c->argc; i++) {
		s = c->argv[i].s;
		for (k = 0; more[k] != NULL; k++)
			if (strncmp(s, more[k], strlen(more[k])) == 0)
				return NULL;
		if (s[0] == '-' && s[1] != '-' && strpbrk(s + 1, wget ? "ieB" :
		    "K:") != NULL)
			return NULL;
		if (strstr(s, "://") == NULL)
			continue;
		if (url != NULL)
			return NULL;
		url = s;
	}
	return url;
}

static void
h_curl(struct pl_an *an, struct pl_cmd *c)
{
	int i, tostdout = 1, wget = strcmp(c->name, "wget") == 0;

	split_clusters(an, c, wget ? "OPoe" : "odFTHuXeAbcCDEKmrwxyYz");
	int remote_name = 0;
	const struct pl_field *odir = NULL;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i], *v = i + 1 < c->argc ?
		    &c->argv[i + 1] : NULL;
		const char *s = f->s;

		if (!wget && (eq(f, "-d") || strncmp(s, "--data", 6) == 0 ||
		    eq(f, "-F") || eq(f, "--form") || eq(f, "--json"))) {
			if (strchr(s, '=') != NULL && s[0] == '-' && s[1] == '-')
				check_upload(an, c, subfield(an, f,
				    (size_t)(strchr(s, '=') - s) + 1), 0);
			else if (v)
				check_upload(an, c, v, 0);
		} else if (!wget && (eq(f, "-T") || eq(f, "--upload-file"))) {
			if (v)
				check_upload(an, c, v, 1);
		} else if (!wget && (strncmp(s, "-d", 2) == 0 ||
		    strncmp(s, "-F", 2) == 0) && f->len > 2) {
			check_upload(an, c, subfield(an, f, 2), 0);
		} else if (wget && (strncmp(s, "--post-file", 11) == 0 ||
		    strncmp(s, "--body-file", 11) == 0)) {
			if (s[11] == '=')
				check_upload(an, c, subfield(an, f, 12), 1);
			else if (v)
				check_upload(an, c, v, 1);
		} else if (wget && (strncmp(s, "--post-data", 11) == 0 ||
		    strncmp(s, "--body-data", 11) == 0)) {
			if (f->taint & (T_SECRET | T_ENVDUMP))
				check_upload(an, c, f, 0);
			else if (v && s[11] != '=')
				check_upload(an, c, v, 0);
		} else if ((!wget && (eq(f, "-o") || eq(f, "--output"))) ||
		    (wget && (eq(f, "-O") || eq(f, "--output-document")))) {
			if (v && !eq(v, "-")) {
				note_download(an, v);
				tostdout = 0;
			}
			i++;
		} else if (wget && strncmp(s, "-O", 2) == 0 && f->len > 2) {
			if (strcmp(s + 2, "-") != 0) {
				note_download(an, subfield(an, f, 2));
				tostdout = 0;
			}
		} else if (wget && (strncmp(s, "-qO", 3) == 0 ||
		    strncmp(s, "-nv", 3) == 0 || strncmp(s, "-q", 2) == 0) &&
		    f->len > 2 && memchr(s, 'O', f->len)) {
			const char *o = memchr(s, 'O', f->len);

			if (o[1] == '\0' && v) {
				if (!eq(v, "-")) {
					note_download(an, v);
					tostdout = 0;
				}
				i++;
			} else if (strcmp(o + 1, "-") != 0) {
				tostdout = 0;
			}
		} else if (!wget && (eq(f, "-O") || eq(f, "--remote-name") ||
		    eq(f, "--remote-name-all") || (is_opt(f) && s[1] != '-' &&
		    memchr(s, 'O', f->len)))) {
			remote_name = 1;
			tostdout = 0;
		} else if (wget && (eq(f, "-P") || strncmp(s,
		    "--directory-prefix", 18) == 0)) {
			odir = v;
		} else if (!wget && strncmp(s, "-o", 2) == 0 && f->len > 2 &&
		    s[1] != '-') {
			note_download(an, subfield(an, f, 2));
			tostdout = 0;
		}
	}
	if (wget && tostdout) {
		/* wget saves to a file named after the URL by default. */
		int stdout_seen = 0;

		for (i = 1; i < c->argc; i++)
			if (eq(&c->argv[i], "-O-") ||
			    (eq(&c->argv[i], "-") && i > 1 &&
			    (eq(&c->argv[i - 1], "-O") ||
			    strncmp(c->argv[i - 1].s, "-q", 2) == 0)) ||
			    (strncmp(c->argv[i].s, "-", 1) == 0 &&
			    c->argv[i].len > 2 && strcmp(c->argv[i].s +
			    c->argv[i].len - 2, "O-") == 0))
				stdout_seen = 1;
		if (!stdout_seen) {
			tostdout = 0;
			remote_name = 1;
		}
	}
	if (remote_name) {
		for (i = 1; i < c->argc; i++)
			if (strstr(c->argv[i].s, "://") != NULL)
				note_url_name(an, &c->argv[i], odir ?
				    odir->s : NULL);
	}
	pl_stream_unknown(c->out, tostdout ? T_NET : 0);
	c->out->producer = c->name;
	if (tostdout)
		c->out->url = one_url(c, wget);
}

static void
h_nc(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (eq(&c->argv[i], "-e") || eq(&c->argv[i], "-c") ||
		    strncmp(s, "--exec", 6) == 0 ||
		    strncmp(s, "--sh-exec", 9) == 0 ||
		    strncmp(s, "--lua-exec", 10) == 0 ||
		    (is_opt(&c->argv[i]) && s[1] != '-' &&
		    (memchr(s, 'e', c->argv[i].len) ||
		    memchr(s, 'c', c->argv[i].len)) && c->argv[i].len <= 5 &&
		    i + 1 < c->argc && (strstr(c->argv[i + 1].s, "sh") ||
		    strstr(c->argv[i + 1].s, "python") ||
		    strstr(c->argv[i + 1].s, "perl")))) {
			pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:nc-exec",
			    c->off, c->len, "'%s' connects a program to a "
			    "network socket (-e/-c)", c->name);
			break;
		}
	}
	if (c->in->taint & (T_SECRET | T_ENVDUMP))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:net-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (c->in->taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (c->in->taint & T_SHELL)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:shell-to-net", c->off,
		    c->len, "a shell's output is piped into '%s'", c->name);
	pl_stream_unknown(c->out, T_SOCK | T_NET);
	c->out->producer = c->name;
}

static void
h_socat(struct pl_an *an, struct pl_cmd *c)
{
	int i, exec = 0, net = 0;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;
		char up[16];
		size_t k;

		for (k = 0; k < sizeof(up) - 1 && s[k]; k++)
			up[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ?
			    s[k] - 32 : s[k]);
		up[k] = '\0';
		if (strncmp(up, "EXEC:", 5) == 0 ||
		    strncmp(up, "SYSTEM:", 7) == 0)
			exec = 1;
		if (strncmp(up, "TCP", 3) == 0 || strncmp(up, "UDP", 3) == 0 ||
		    strncmp(up, "SSL", 3) == 0 || strncmp(up, "OPENSSL", 7) == 0
		    || strncmp(up, "SCTP", 4) == 0)
			net = 1;
	}
	if (exec && net)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:socat-exec", c->off,
		    c->len, "'socat' connects a program to a network socket");
	h_nc(an, c);
}

static void
h_netsend(struct pl_an *an, struct pl_cmd *c)
{
	if (c->in->taint & (T_SECRET | T_ENVDUMP))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:net-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (c->in->taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (c->in->taint & T_SHELL)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:shell-to-net", c->off,
		    c->len, "a shell's output is piped into '%s'", c->name);
	if (strcmp(c->name, "openssl") == 0 && c->argc > 1 &&
	    eq(&c->argv[1], "s_client")) {
		pl_stream_unknown(c->out, T_SOCK | T_NET);
		return;
	}
	if (strcmp(c->name, "telnet") == 0) {
		pl_stream_unknown(c->out, T_SOCK | T_NET);
		return;
	}
	out_default(c);
	if (strcmp(c->name, "openssl") == 0) {
		/* openssl pkcs12 -export -inkey KEY, openssl pkey -in KEY:
		 * a private key read (and packed or printed). */
		static const char opts[] = "\0-in\0-inkey\0-key\0";
		const char *o;

		for (o = opts + 1; *o; o += strlen(o) + 1) {
			const struct pl_field *v = opt_val(an, c, 0, o);
			struct pl_path p;

			if (v == NULL)
				continue;
			pl_path_classify(an, v, &p);
			if (p.attr & PA_SECRET) {
				secret_read(an, c, &p);
				return;
			}
		}
	}
}

/* Private key export and credential printers: gpg --export-secret-keys
 * (any destination: the key leaves its keyring), and tools whose output
 * is a credential (kubectl config view --raw, pass show, aws configure
 * get *secret*, gh auth token ...), tainted so that sending it is
 * exfiltration. */
static void
h_keys(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const exports[] = { "--export-secret-keys",
	    "--export-secret-key", "--export-secret-subkeys",
	    "--export-secret-key-p12", "--export-secret-key-p8",
	    "--export-secret-key-raw", "--export-secret-key-ssh", NULL };
	const struct pl_field *o;
	const char *n = c->name;
	int i;

	if (strncmp(n, "gpg", 3) == 0) {
		for (i = 1; i < c->argc; i++)
			if (eq_any(&c->argv[i], exports)) {
				pl_find(an, VG_CAT_EXFILTRATION,
				    "builtin:key-export", c->off, c->len,
				    "'%s %s' exports private keys", n,
				    c->argv[i].s);
				c->out->taint |= T_SECRET;
				return;
			}
		/* -o/--output FILE (--dearmor into /etc/apt/keyrings, a
		 * key file written where a package manager trusts it). */
		if ((o = opt_val(an, c, 'o', "--output")) != NULL &&
		    !eq(o, "-"))
			pl_classify_write(an, o, 0, "'gpg -o'");
		h_reader(an, c);
		return;
	}
	/* melt KEY prints an SSH private key as seed words (melt restore
	 * writes one back); paperkey prints an OpenPGP secret key for
	 * paper: both take the key out of its file. */
	if ((strcmp(n, "melt") == 0 && !has_arg(c, "restore") &&
	    !has_arg(c, "--help") && !has_arg(c, "-h") &&
	    !has_arg(c, "--version") && !has_arg(c, "-v")) ||
	    (strcmp(n, "paperkey") == 0 && !has_arg(c, "--pubring") &&
	    !has_arg(c, "--help") && !has_arg(c, "--version"))) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:key-export", c->off,
		    c->len, "'%s' exports a private key", n);
		c->out->taint |= T_SECRET;
		return;
	}
	out_default(c);
	if ((strcmp(n, "kubectl") == 0 && has_arg(c, "config") &&
	    has_arg(c, "view") && (has_arg(c, "--raw") ||
	    has_arg(c, "--flatten"))) ||
	    (strcmp(n, "pass") == 0 && (c->argc == 2 || has_arg(c, "show"))) ||
	    (strcmp(n, "aws") == 0 && has_arg(c, "configure") &&
	    (has_arg(c, "get") || has_arg(c, "export-credentials"))) ||
	    (strcmp(n, "aws") == 0 && (has_arg(c, "get-session-token") ||
	    has_arg(c, "get-login-password"))) ||
	    (strcmp(n, "gh") == 0 && has_arg(c, "auth") &&
	    has_arg(c, "token")) ||
	    (strcmp(n, "gcloud") == 0 && (has_arg(c, "print-access-token") ||
	    has_arg(c, "print-identity-token"))) ||
	    (strcmp(n, "az") == 0 && has_arg(c, "get-access-token")) ||
	    (strcmp(n, "vault") == 0 && (has_arg(c, "read") ||
	    has_arg(c, "get"))) ||
	    (strcmp(n, "op") == 0 && (has_arg(c, "read") ||
	    has_arg(c, "get"))) ||
	    (strcmp(n, "secret-tool") == 0 && has_arg(c, "lookup")) ||
	    (strcmp(n, "security") == 0 && has_arg(c, "-w")))
		c->out->taint |= T_SECRET;
}

/* scp, rsync, sftp: secrets copied to another host. */
static void
h_remote_copy(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, ops[64], nops = 0, remote = 0;
	int rsync = strcmp(c->name, "rsync") == 0;

	for (i = 1; (i = next_operand(c, i, rsync ? "eT" : "cFiJloPSD", &dd)) <
	    c->argc && nops < 64; i++)
		ops[nops++] = i;
	if (nops < 2)
		return;
	remote = is_remote(&c->argv[ops[nops - 1]]);
	for (i = 0; i < nops - 1; i++) {
		struct pl_path p;

		if (is_remote(&c->argv[ops[i]]))
			continue;
		pl_path_classify(an, &c->argv[ops[i]], &p);
		if (p.attr & PA_SECRET)
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:copy-secret",
			    c->off, c->len, "'%s' copies '%s'%s", c->name,
			    pshow(&p), remote ? " to another host" : "");
	}
	if (!remote) {
		const struct pl_field *d = &c->argv[ops[nops - 1]];
		struct pl_path p;

		pl_path_classify(an, d, &p);
		if (rsync && has_arg(c, "--delete") && p.cls == PC_PROTECTED)
			pl_find_floor(an, pl_path_top(an, &p) ?
			    PL_FLOOR_DELETE : NULL, VG_CAT_DESTRUCTIVE,
			    "builtin:rsync-delete",
			    c->off, c->len, "'rsync --delete' into the "
			    "protected path '%s'", pshow(&p));
		else
			write_dest(an, d, c->name);
		if (nops == 2)
			pl_file_copied(an, &c->argv[ops[0]], d);
	}
}

/* ---- interpreters and nested code ---- */

/* True when a field has known words besides its unknown parts. */
static int
partly_known(const struct pl_field *f)
{
	size_t i;

	for (i = 0; i < f->len; i++)
		if ((f->s[i] >= 'a' && f->s[i] <= 'z') ||
		    (f->s[i] >= 'A' && f->s[i] <= 'Z'))
			return 1;
	return 0;
}

/* Runs code text or a stream as shell code with positional args. */
static void
shell_code(struct pl_an *an, struct pl_cmd *c, const struct pl_field *code,
    int firstarg)
{
	struct pl_stream s;
	const char *spos[9];
	int snpos = an->npos;
	unsigned staint = an->postaint;

	if ((code->flags & F_UNK) && !partly_known(code))
		pl_stream_unknown(&s, code->taint);
	else
		pl_stream_text(&s, code->s, code->len, code->taint &
		    ~(unsigned)T_VAR);
	memcpy(spos, an->pos, sizeof(spos));
	pl_pos_set(an, c->argv + firstarg + 1, c->argc - firstarg - 1);
	pl_code_to_interp(an, c, "sh", &s, code->off, code->slen);
	memcpy(an->pos, spos, sizeof(spos));
	an->npos = snpos;
	an->postaint = staint;
}

/* Code from a script operand: a file written earlier, or /dev/stdin. */
static int
script_file(struct pl_an *an, struct pl_cmd *c, const struct pl_field *f,
    const char *lang)
{
	struct pl_path p;
	struct pl_file *tf;
	struct pl_stream s;

	if (f->proc != NULL) {
		pl_code_to_interp(an, c, lang, f->proc, f->off, f->slen);
		return 1;
	}
	/* ". $(curl URL)": the file to run is named by downloaded or
	 * decoded text, so what runs is chosen remotely. */
	if (f->taint & (T_NET | T_DECODED)) {
		pl_find(an, (f->taint & T_NET) ? VG_CAT_REMOTE_CODE :
		    VG_CAT_OBFUSCATION, "builtin:script-name", c->off, c->len,
		    "'%s' runs a script whose name comes from %s data",
		    c->name, (f->taint & T_NET) ? "downloaded" : "decoded");
		return 1;
	}
	if (eq(f, "/dev/stdin") || eq(f, "-")) {
		pl_code_to_interp(an, c, lang, c->in, c->off, c->len);
		return 1;
	}
	pl_path_classify(an, f, &p);
	tf = pl_file_find(an, p.abs);
	if (tf == NULL)
		return 0;
	if (tf->content != NULL)
		pl_stream_text(&s, tf->content, tf->clen, tf->taint);
	else
		pl_stream_unknown(&s, tf->taint);
	pl_code_to_interp(an, c, lang, &s, f->off, f->slen);
	return 1;
}

static void
h_shell(struct pl_an *an, struct pl_cmd *c)
{
	int i, cflag = 0, reads_stdin = 1, interactive = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "--")) {
			i++;
			break;
		}
		if (f->len > 1 && (f->s[0] == '-' || f->s[0] == '+') &&
		    !(f->flags & F_UNK)) {
			if (f->s[1] == '-') {
				if (eq(f, "--rcfile") || eq(f, "--init-file"))
					i++;
				continue;
			}
			if (memchr(f->s, 'c', f->len))
				cflag = 1;
			if (memchr(f->s, 'i', f->len))
				interactive = 1;
			if (eq(f, "-o") || eq(f, "+o") || eq(f, "-O") ||
			    eq(f, "+O"))
				i++;
			continue;
		}
		break;
	}
	if (cflag) {
		if (i < c->argc)
			shell_code(an, c, &c->argv[i], i);
		pl_stream_unknown(c->out, T_PROG);
		return;
	}
	if (i < c->argc && !has_opt(c, 's', NULL)) {
		reads_stdin = 0;
		script_file(an, c, &c->argv[i], "sh");
	}
	if (reads_stdin) {
		pl_code_to_interp(an, c, "sh", c->in, c->off, c->len);
		pl_stream_unknown(c->out, T_PROG | T_SHELL);
		(void)interactive;
		return;
	}
	pl_stream_unknown(c->out, T_PROG);
}

/* True when perl or ruby edits its file operands in place: an -i switch
 * (-i, -i.bak, -pi, -pi.bak, -0777 -i) among the interpreter's own
 * switches, which end at the first operand.  Letters after a switch
 * that takes a value (-MList::Util, -rdigest, -I dir, -F:) are that
 * value, not switches; -l, -0 and -T take only digits (-l0, -0777,
 * ruby's -T1); -e and -E take the next argument. */
static int
inplace_switch(const struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s;

		if (!is_opt(f) || eq(f, "--"))
			return 0;
		if (f->s[1] == '-')
			continue;
		for (s = f->s + 1; *s != '\0'; s++) {
			if (*s == 'i')
				return 1;
			if (*s == 'l' || *s == '0' || *s == 'T')
				while (s[1] >= '0' && s[1] <= '9')
					s++;
			else if (strchr("MmIdDFxCVrKW", *s) != NULL)
				break;
			else if (*s == 'e' || *s == 'E') {
				i++;
				break;
			}
		}
	}
	return 0;
}

static void
h_interp(struct pl_an *an, struct pl_cmd *c)
{
	const char *lang = c->name;
	int i, code = 0, script = 0, inplace;

	if (strcmp(lang, "Rscript") == 0)
		lang = "r";
	inplace = (strcmp(lang, "perl") == 0 || strcmp(lang, "ruby") == 0) &&
	    inplace_switch(c);
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s;

		if (!is_opt(f) || eq(f, "-")) {
			if (!code && !script) {
				script = 1;
				if (!script_file(an, c, f, lang) && eq(f, "-"))
					pl_code_to_interp(an, c, lang, c->in,
					    c->off, c->len);
			}
			if (!inplace)
				break;
			/* perl -i and ruby -i edit their file operands in
			 * place. */
			if (code)
				pl_classify_write(an, f, 0, strcmp(lang,
				    "perl") == 0 ? "'perl -i'" : "'ruby -i'");
			continue;
		}
		if ((strcmp(lang, "python") == 0 && eq(f, "-c")) ||
		    ((strcmp(lang, "perl") == 0 || strcmp(lang, "ruby") == 0 ||
		    strcmp(lang, "lua") == 0 || strcmp(lang, "r") == 0) &&
		    (eq(f, "-e") || eq(f, "-E"))) ||
		    (strcmp(lang, "perl") == 0 && s[1] != '-' &&
		    (s[f->len - 1] == 'e' || s[f->len - 1] == 'E') &&
		    strspn(s + 1, "lnpaswTtUWXc0123456789") == f->len - 2) ||
		    (strcmp(lang, "ruby") == 0 && s[1] != '-' && f->len > 2 &&
		    s[f->len - 1] == 'e' &&
		    strspn(s + 1, "alnpswdvcyW0123456789") == f->len - 2) ||
		    (strcmp(lang, "node") == 0 && (eq(f, "-e") ||
		    eq(f, "--eval") || eq(f, "-p") || eq(f, "--print"))) ||
		    (strcmp(lang, "php") == 0 && eq(f, "-r"))) {
			if (i + 1 < c->argc) {
				struct pl_stream st;
				const struct pl_field *cf = &c->argv[i + 1];

				if (cf->flags & F_UNK)
					pl_stream_unknown(&st, cf->taint |
					    T_VAR);
				else
					pl_stream_text(&st, cf->s, cf->len,
					    cf->taint);
				pl_code_to_interp(an, c, lang, &st, cf->off,
				    cf->slen);
			}
			code = 1;
			i++;
			if (strcmp(lang, "python") == 0)
				break;
			continue;
		}
		if (strcmp(lang, "python") == 0 && (eq(f, "-m") ||
		    strncmp(s, "-m", 2) == 0)) {
			script = 1;
			break;
		}
		if (eq(f, "-W") || eq(f, "-X") || eq(f, "-I") || eq(f, "-r") ||
		    eq(f, "-M") || eq(f, "--require") || eq(f, "-x") ||
		    eq(f, "-f") || eq(f, "-F") || eq(f, "-v"))
			i++;
	}
	if (!code && !script)
		pl_code_to_interp(an, c, lang, c->in, c->off, c->len);
	if (!code && !script)
		pl_stream_unknown(c->out, T_PROG | T_SHELL);
	else
		pl_stream_unknown(c->out, T_PROG);
}

static void
h_awk(struct pl_an *an, struct pl_cmd *c)
{
	int i, inplace = 0, progfile = 0;

	out_default(c);
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		/* awk -f FILE: the program is in FILE, every operand is
		 * input. */
		if ((eq(f, "-f") || eq(f, "--file")) && i + 1 < c->argc) {
			script_file(an, c, &c->argv[i + 1], "awk");
			progfile = 1;
		}
		if (progfile && !is_opt(f) && !eq(&c->argv[i - 1], "-f") &&
		    !eq(&c->argv[i - 1], "--file"))
			continue;

		/* gawk -i inplace (also --include=inplace, -iinplace)
		 * rewrites its file operands. */
		if ((eq(f, "-i") || eq(f, "--include")) && i + 1 < c->argc &&
		    (eq(&c->argv[i + 1], "inplace") ||
		    eq(&c->argv[i + 1], "inplace.awk")))
			inplace = 1;
		if (eq(f, "-iinplace") || eq(f, "--include=inplace"))
			inplace = 1;
		if (eq(f, "-F") || eq(f, "-v") || eq(f, "-f") || eq(f, "-e") ||
		    eq(f, "--file") || eq(f, "--assign") || eq(f, "-i") ||
		    eq(f, "--include")) {
			i++;
			continue;
		}
		if (is_opt(f))
			continue;
		{
			struct pl_stream st;

			if (f->flags & F_UNK)
				pl_stream_unknown(&st, f->taint | T_VAR);
			else
				pl_stream_text(&st, f->s, f->len, f->taint);
			pl_code_to_interp(an, c, "awk", &st, f->off, f->slen);
		}
		for (i++; i < c->argc; i++) {
			struct pl_path p;

			if (inplace && !is_opt(&c->argv[i]) &&
			    memchr(c->argv[i].s, '=', c->argv[i].len) == NULL) {
				pl_classify_write(an, &c->argv[i], 0,
				    "'awk -i inplace'");
				continue;
			}
			pl_path_classify(an, &c->argv[i], &p);
			if (p.attr & PA_SECRET)
				secret_read(an, c, &p);
		}
		break;
	}
}

static void
h_eval(struct pl_an *an, struct pl_cmd *c)
{
	struct vg_buf *b;
	struct pl_field f;
	int i;

	if (c->argc < 2)
		return;
	if ((b = pl_buf_get(an)) == NULL)
		return;
	memset(&f, 0, sizeof(f));
	for (i = 1; i < c->argc; i++) {
		if (i > 1)
			vg_buf_addc(b, ' ');
		vg_buf_add(b, c->argv[i].s, c->argv[i].len);
		f.flags |= c->argv[i].flags;
		f.taint |= c->argv[i].taint;
	}
	f.s = pl_strndup(an->a, b->data, b->len);
	f.len = b->len;
	f.off = c->argv[1].off;
	f.slen = c->argv[c->argc - 1].off + c->argv[c->argc - 1].slen - f.off;
	pl_buf_put(an);
	shell_code(an, c, &f, c->argc);
	*c->out = *c->out;
}

static void
h_source(struct pl_an *an, struct pl_cmd *c)
{
	if (c->argc < 2)
		return;
	script_file(an, c, &c->argv[1], "sh");
	pl_stream_unknown(c->out, T_PROG);
}

static void
h_trap(struct pl_an *an, struct pl_cmd *c)
{
	if (c->argc >= 3 && !is_opt(&c->argv[1]))
		shell_code(an, c, &c->argv[1], c->argc);
}

static void
h_alias(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *eqs = memchr(c->argv[i].s, '=', c->argv[i].len);
		struct pl_field f;

		if (eqs == NULL)
			continue;
		f = *subfield(an, &c->argv[i], (size_t)(eqs - c->argv[i].s) + 1);
		shell_code(an, c, &f, c->argc);
	}
}

/* watch, tmux, screen: a command given as words or one string. */
static void
h_cmdstring(struct pl_an *an, struct pl_cmd *c)
{
	int i = 1, exec = 0;
	struct vg_buf *b;
	struct pl_field f;

	if (strcmp(c->name, "tmux") == 0) {
		static const char *const subs[] = { "new-session", "new",
		    "new-window", "neww", "split-window", "splitw",
		    "respawn-pane", "respawnp", "run-shell", "run",
		    "send-keys", "send", NULL };
		int k, found = 0;

		for (; i < c->argc && !found; i++)
			for (k = 0; subs[k] != NULL; k++)
				if (eq(&c->argv[i], subs[k]))
					found = 1;
		if (!found)
			return;
		while (i < c->argc && is_opt(&c->argv[i])) {
			const char *s = c->argv[i].s;

			if (strchr("stncFxyeEP", s[1]) != NULL && s[2] == '\0')
				i++;
			i++;
		}
	} else {
		while (i < c->argc && is_opt(&c->argv[i])) {
			if (eq(&c->argv[i], "-x") || eq(&c->argv[i], "--exec"))
				exec = 1;
			if (eq(&c->argv[i], "-n") ||
			    eq(&c->argv[i], "--interval"))
				i++;
			i++;
		}
	}
	if (i >= c->argc)
		return;
	if (exec) {
		struct pl_stream out;

		pl_run_argv(an, c->argv + i, c->argc - i, c->off, c->len, c->in,
		    &out, 0);
		return;
	}
	if ((b = pl_buf_get(an)) == NULL)
		return;
	memset(&f, 0, sizeof(f));
	for (int k = i; k < c->argc; k++) {
		if (eq(&c->argv[k], "Enter") || eq(&c->argv[k], "C-m"))
			continue;
		if (k > i)
			vg_buf_addc(b, ' ');
		vg_buf_add(b, c->argv[k].s, c->argv[k].len);
		f.flags |= c->argv[k].flags;
		f.taint |= c->argv[k].taint;
	}
	f.s = pl_strndup(an->a, b->data, b->len);
	f.len = b->len;
	f.off = c->off;
	f.slen = c->len;
	pl_buf_put(an);
	shell_code(an, c, &f, c->argc);
}

static void
h_ssh(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = next_operand(c, 1, "bcDEeFIiJLlmOopQRSWwB", &dd);

	if (c->in->taint & (T_SECRET | T_ENVDUMP))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:net-secret", c->off,
		    c->len, "'ssh' sends %s to another host",
		    (c->in->taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (i + 1 < c->argc) {
		struct vg_buf *b = pl_buf_get(an);
		struct pl_field f;
		int k;

		if (b == NULL)
			return;
		memset(&f, 0, sizeof(f));
		for (k = i + 1; k < c->argc; k++) {
			if (k > i + 1)
				vg_buf_addc(b, ' ');
			vg_buf_add(b, c->argv[k].s, c->argv[k].len);
			f.flags |= c->argv[k].flags;
			f.taint |= c->argv[k].taint;
		}
		f.s = pl_strndup(an->a, b->data, b->len);
		f.len = b->len;
		f.off = c->argv[i + 1].off;
		f.slen = c->len - (f.off - c->off);
		pl_buf_put(an);
		shell_code(an, c, &f, c->argc);
	}
	pl_stream_unknown(c->out, T_PROG | T_NET);
}

/* ---- privilege, accounts ---- */

/* True when sg is shadow's, "sg [-] [GROUP [-c] COMMAND]": ast-grep
 * installs itself as sg too, and its options (-p, --pattern, --rewrite,
 * scan --interactive ...) are none of shadow's. */
static int
shadow_sg(const struct pl_cmd *c)
{
	int i = 1, words = 0;

	if (i < c->argc && eq(&c->argv[i], "-"))
		i++;
	for (; i < c->argc && words < 2; i++) {
		if (!is_opt(&c->argv[i])) {
			words++;
			continue;
		}
		if (words == 0 || !eq(&c->argv[i], "-c"))
			return 0;
		return 1;
	}
	return 1;
}

static void
h_priv(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *cmd;

	if (has_arg(c, "--help") || has_arg(c, "-V") ||
	    has_arg(c, "--version"))
		return;
	if (strcmp(c->name, "passwd") == 0 && (has_opt(c, 'S', "--status")))
		return;
	if (strcmp(c->name, "chage") == 0 && has_opt(c, 'l', "--list"))
		return;
	if (strcmp(c->name, "chsh") == 0 && has_opt(c, 'l', "--list-shells"))
		return;
	if (strcmp(c->name, "sg") == 0 && !shadow_sg(c))
		return;
	if (strcmp(c->name, "sudoedit") == 0 || strcmp(c->name, "ksu") == 0 ||
	    strcmp(c->name, "pleaseedit") == 0 ||
	    strcmp(c->name, "calife") == 0) {
		pl_find(an, VG_CAT_PRIVILEGE, "builtin:priv-wrapper", c->off,
		    c->len, "'%s' acts as another user (root by default)",
		    c->name);
		return;
	}
	pl_find(an, VG_CAT_PRIVILEGE, "builtin:account", c->off, c->len,
	    "'%s' changes users, groups, passwords or privileges", c->name);
	cmd = opt_val(an, c, 'c', "--command");
	if (cmd != NULL && (strcmp(c->name, "su") == 0 ||
	    strcmp(c->name, "runuser") == 0 || strcmp(c->name, "sg") == 0))
		shell_code(an, c, cmd, c->argc);
	if (strcmp(c->name, "runuser") == 0 || strcmp(c->name, "sg") == 0) {
		int k;

		for (k = 1; k < c->argc; k++)
			if (eq(&c->argv[k], "--") && k + 1 < c->argc) {
				struct pl_stream o;

				pl_run_argv(an, c->argv + k + 1, c->argc - k - 1,
				    c->off, c->len, c->in, &o, 1);
			}
	}
}

/* ---- system configuration ---- */

static void
sysconf(struct pl_an *an, struct pl_cmd *c, const char *rule,
    const char *what)
{
	pl_find(an, VG_CAT_SYSCONFIG, rule, c->off, c->len, "'%s' %s",
	    c->name, what);
}

static void
h_crontab(struct pl_an *an, struct pl_cmd *c)
{
	/* Slurm's scrontab takes the same -l, -e, -r and FILE. */
	if (has_opt(c, 'l', NULL) || has_arg(c, "-V") ||
	    has_arg(c, "--help") || has_arg(c, "--usage"))
		return;
	if (has_opt(c, 'r', NULL)) {
		sysconf(an, c, "builtin:crontab", "removes the crontab");
		return;
	}
	sysconf(an, c, "builtin:crontab",
	    "installs or edits a crontab (persistence)");
	pl_run_written(an, c, PL_WRITTEN_CRONTAB);
}

static void
h_at(struct pl_an *an, struct pl_cmd *c)
{
	if (has_opt(c, 'l', NULL) || has_opt(c, 'c', NULL) ||
	    has_arg(c, "-V") || has_opt(c, 'r', NULL) || has_opt(c, 'd', NULL))
		return;
	sysconf(an, c, "builtin:at", "schedules commands for later "
	    "(persistence)");
	pl_code_to_interp(an, c, "sh", c->in, c->off, c->len);
}

/* True when unit u (a systemd unit name) is a power or run-level
 * target ("poweroff.target", "rescue"); *halt when it halts or reboots. */
static int
power_unit(const char *u, int *halt)
{
	static const char *const halts[] = { "poweroff", "reboot", "halt",
	    "kexec", "soft-reboot", "ctrl-alt-del", "shutdown", "exit",
	    "final", "systemd-poweroff", "systemd-reboot", "systemd-halt",
	    "systemd-kexec", "systemd-soft-reboot", NULL };
	static const char *const levels[] = { "rescue", "emergency",
	    "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate",
	    "sleep", "systemd-suspend", "systemd-hibernate",
	    "systemd-hybrid-sleep", "runlevel0", "runlevel1", "runlevel6",
	    NULL };
	size_t n = strlen(u);
	int k;

	if (n > 7 && strcmp(u + n - 7, ".target") == 0)
		n -= 7;
	else if (n > 8 && strcmp(u + n - 8, ".service") == 0)
		n -= 8;
	for (k = 0; halts[k] != NULL; k++)
		if (strlen(halts[k]) == n && strncmp(u, halts[k], n) == 0) {
			*halt = strcmp(halts[k], "exit") != 0;
			return 1;
		}
	for (k = 0; levels[k] != NULL; k++)
		if (strlen(levels[k]) == n && strncmp(u, levels[k], n) == 0) {
			*halt = strncmp(u, "runlevel0", 9) == 0 ||
			    strncmp(u, "runlevel6", 9) == 0;
			return 1;
		}
	return 0;
}

/* systemctl [OPTIONS] VERB [UNIT...]: looking verbs (and no verb, which
 * lists units) pass; the host's power state and run level (power verbs,
 * or start/isolate of a power target) are host disruption, turning swap
 * off too; other changes of system services are system configuration. */
static void
h_systemctl(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const stop[] = { "poweroff", "reboot", "halt",
	    "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue",
	    "emergency", "suspend-then-hibernate", "soft-reboot", NULL };
	static const char *const halts[] = { "poweroff", "reboot", "halt",
	    "kexec", "soft-reboot", NULL };
	static const char *const ok[] = { "status", "show", "cat", "help",
	    "list-units", "list-unit-files", "list-timers", "list-sockets",
	    "list-dependencies", "list-jobs", "list-machines",
	    "is-active", "is-enabled", "is-failed", "is-system-running",
	    "get-default", "show-environment", "--version", "--help",
	    "list-automounts", "list-paths", "whoami", "log-level",
	    "log-target", "service-log-level", "service-log-target",
	    "service-watchdogs", NULL };
	/* With a value these set what they show (service-log-*: UNIT
	 * VALUE). */
	static const char *const sets[] = { "log-level", "log-target",
	    "service-watchdogs", "service-log-level", "service-log-target",
	    NULL };
	static const char *const persist[] = { "enable", "link", "preset",
	    "preset-all", "edit", "set-property", "revert", "add-wants",
	    "add-requires", "set-environment", "import-environment", NULL };
	static const char *const starts[] = { "start", "isolate", "restart",
	    "try-restart", "reload-or-restart", "try-reload-or-restart",
	    "default", NULL };
	static const char *const valued[] = { "-t", "--type", "-p",
	    "--property", "-H", "--host", "-M", "--machine", "-n", "--lines",
	    "-o", "--output", "--state", "-s", "--signal", "--kill-whom",
	    "--kill-value", "--root", "--image", "--job-mode", "--what",
	    "--timestamp", "--preset-mode", "--boot-loader-entry",
	    "--boot-loader-menu", "--reboot-argument", "--drop-in",
	    "--when", "-P", "--message", NULL };
	int i, user = has_arg(c, "--user"), halt = 0;
	const struct pl_field *when = opt_val(an, c, 0, "--when");

	/* --when cancel cancels a scheduled shutdown or reboot. */
	if (has_arg(c, "--help") || has_arg(c, "-h") ||
	    has_arg(c, "--version") || (when != NULL && eq(when, "cancel")))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		int k;

		if (is_opt(f)) {
			if (eq_any(f, valued))
				i++;
			continue;
		}
		if (user) {
			/* The user's own services: only persistence counts. */
			if (eq_any(f, persist))
				sysconf(an, c, "builtin:service",
				    "installs a user service (persistence)");
			return;
		}
		if (eq_any(f, stop)) {
			pl_find_floor(an, eq_any(f, halts) ? PL_FLOOR_POWER :
			    NULL, VG_CAT_DISRUPTION, "builtin:power",
			    c->off, c->len,
			    "'systemctl %s' stops or restarts the host", f->s);
			return;
		}
		for (k = i + 1; k < c->argc && (eq_any(f, starts) ||
		    eq(f, "stop") || eq(f, "kill") || eq(f, "mask")); k++) {
			const char *u = c->argv[k].s;
			size_t n = c->argv[k].len;

			if (is_opt(&c->argv[k]))
				continue;
			if (eq_any(f, starts) && power_unit(u, &halt)) {
				sysconf(an, c, "builtin:service",
				    "changes service state");
				pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL,
				    VG_CAT_DISRUPTION, "builtin:power",
				    c->off, c->len, "'systemctl %s %s' "
				    "switches the host to another state",
				    f->s, u);
				return;
			}
			if (!eq_any(f, starts) && ((n > 5 && strcmp(u + n - 5,
			    ".swap") == 0) || strcmp(u, "swap.target") == 0)) {
				pl_find(an, VG_CAT_DISRUPTION,
				    "builtin:swap-off", c->off, c->len,
				    "'systemctl %s %s' turns swap off", f->s,
				    u);
				return;
			}
		}
		if (eq_any(f, sets)) {
			int words = 0, need = strncmp(f->s, "service-log-",
			    12) == 0 ? 2 : 1;

			for (k = i + 1; k < c->argc; k++)
				words += !is_opt(&c->argv[k]);
			if (words >= need)
				sysconf(an, c, "builtin:service", "changes "
				    "the service manager's logging or "
				    "watchdogs");
			return;
		}
		if (!eq_any(f, ok))
			sysconf(an, c, "builtin:service",
			    "changes service state");
		return;
	}
}

/* Methods of logind, the systemd manager, ConsoleKit, UPower and the
 * desktops' session managers (GNOME, KDE, Xfce, MATE) that halt,
 * reboot or suspend the host or end sessions, called over D-Bus
 * (busctl, dbus-send, gdbus, qdbus). */
static void
h_dbus(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const halts[] = { "PowerOff", "Reboot", "Halt",
	    "KExec", "SoftReboot", "PowerOffWithFlags", "RebootWithFlags",
	    "HaltWithFlags", "KExecWithFlags", "ScheduleShutdown", "Shutdown",
	    "Restart", "Stop", "RequestShutdown", "RequestReboot",
	    "logoutAndShutdown", "logoutAndReboot", NULL };
	static const char *const buses[] = { "org.freedesktop.login1",
	    "org.freedesktop.systemd1", "org.freedesktop.ConsoleKit",
	    "org.freedesktop.UPower", "org.gnome.SessionManager",
	    "org.kde.ksmserver", "org.kde.Shutdown", "org.kde.LogoutPrompt",
	    "org.xfce.SessionManager", "org.mate.SessionManager", NULL };
	static const char *const others[] = { "Suspend", "Hibernate",
	    "HybridSleep", "SuspendThenHibernate", "SuspendWithFlags",
	    "HibernateWithFlags", "Sleep", "TerminateUser",
	    "TerminateSession", "TerminateSeat", "KillUser", "KillSession",
	    "StartUnit", "StartUnitReplace", "Exit", "Logout", "logout",
	    NULL };
	const char *m = NULL;
	int i, k, bus = 0, halt = 0;

	/* busctl and gdbus only act with "call"; dbus-send and qdbus
	 * always call the method they are given. */
	if ((strcmp(c->name, "busctl") == 0 || strcmp(c->name, "gdbus") == 0)
	    && !has_arg(c, "call"))
		return;
	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s, *dot = strrchr(s, '.');
		const char *name = dot != NULL ? dot + 1 : s;

		for (k = 0; buses[k] != NULL && !bus; k++)
			if (strstr(s, buses[k]) != NULL)
				bus = 1;
		for (k = 0; halts[k] != NULL && m == NULL; k++)
			if (strcmp(name, halts[k]) == 0) {
				m = halts[k];
				halt = 1;
			}
		for (k = 0; others[k] != NULL && m == NULL; k++)
			if (strcmp(name, others[k]) == 0)
				m = others[k];
	}
	if (!bus || m == NULL)
		return;
	/* StartUnit is power only for a power target. */
	if (strncmp(m, "StartUnit", 9) == 0) {
		for (i = 1; i < c->argc; i++) {
			const char *s = c->argv[i].s, *q = strchr(s, ':');

			if (power_unit(q != NULL ? q + 1 : s, &halt))
				break;
		}
		if (i == c->argc)
			return;
	}
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len, "'%s' asks the system manager "
	    "to %s (%s)", c->name, halt ? "halt or reboot the host" :
	    "suspend the host or end sessions", m);
}

/* Desktop and firmware front ends of the host's power state. */
static void
h_power_front(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const rtc_off[] = { "off", "disk", "mem",
	    "standby", "freeze", NULL };
	static const char *const desk[] = { "--halt", "--reboot",
	    "--power-off", "--suspend", "--hibernate", "--hybrid-sleep",
	    "--shutdown", NULL };
	const struct pl_field *m;
	int halt;

	if (strcmp(c->name, "rtcwake") == 0) {
		m = opt_val(an, c, 'm', "--mode");
		if (m == NULL || !eq_any(m, rtc_off))
			return;
		halt = eq(m, "off");
	} else {
		if (!has_any(c, desk))
			return;
		halt = has_arg(c, "--halt") || has_arg(c, "--reboot") ||
		    has_arg(c, "--power-off") || has_arg(c, "--shutdown");
	}
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len, "'%s' %s the host", c->name,
	    halt ? "powers off or restarts" : "suspends");
}

static void
h_service(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "start", "stop", "restart",
	    "reload", "force-reload", "try-restart", "condrestart", "enable",
	    "disable", "remove", "defaults", "add", "del", "on", "off", "load",
	    "unload", "bootout", "bootstrap", "kill", NULL };

	/* Help, and update-rc.d -n, which shows what it would do. */
	if (has_arg(c, "--help") || has_arg(c, "--version") ||
	    (strcmp(c->name, "update-rc.d") == 0 && has_opt(c, 'n', NULL)))
		return;
	if (has_any(c, verbs))
		sysconf(an, c, "builtin:service", "changes service state");
}

/* A directory option of c (--altdir, --admindir) naming the user's own
 * or the workspace's tree rather than the system's. */
static int
own_dir(struct pl_an *an, const struct pl_cmd *c, const char *opt)
{
	const struct pl_field *f = opt_val(an, c, 0, opt);
	struct pl_path p;

	if (f == NULL || (f->flags & F_UNK))
		return 0;
	pl_path_classify(an, f, &p);
	return p.cls == PC_WORKSPACE || (p.cls == PC_USER &&
	    !(p.attr & (PA_RC | PA_SSH | PA_SECRET)));
}

/* update-alternatives (Debian) and alternatives (Red Hat): the verbs
 * that change the links under /etc/alternatives, as `ln -sf` into it
 * would; --display, --query, --list and --get-selections only look.
 * With both --altdir and --admindir in the user's own tree (and an
 * --install link outside the system's), nothing of the system
 * changes. */
static void
h_alternatives(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "--install", "--set", "--remove",
	    "--remove-all", "--auto", "--config", "--all", "--set-selections",
	    NULL };
	const struct pl_field *link = opt_val(an, c, 0, "--install");
	struct pl_path p;

	if (!has_any(c, verbs))
		return;
	if (link != NULL)
		pl_path_classify(an, link, &p);
	if (own_dir(an, c, "--altdir") && own_dir(an, c, "--admindir") &&
	    (link == NULL || (!(link->flags & F_UNK) &&
	    p.cls != PC_PROTECTED)))
		return;
	sysconf(an, c, "builtin:alternatives", "changes the system's "
	    "alternatives (the links under /etc/alternatives)");
}

static void
h_firewall(struct pl_an *an, struct pl_cmd *c)
{
	/* ufw and firewall-cmd verbs that only look */
	static const char *const looks[] = { "status", "show", "app",
	    "--state", "version", "--version", "--help", "-h", NULL };
	/* iptables' long options that change rules */
	static const char *const edits[] = { "--flush", "--append",
	    "--insert", "--delete", "--policy", "--delete-chain", "--replace",
	    "--zero", "--new-chain", NULL };
	const char *n = c->name;
	int i;

	if (strstr(n, "-save") != NULL)
		return;
	if (strstr(n, "-restore") != NULL) {
		sysconf(an, c, "builtin:firewall", "replaces firewall rules");
		return;
	}
	if (strcmp(n, "nft") == 0) {
		for (i = 1; i < c->argc; i++) {
			if (is_opt(&c->argv[i]) && !eq(&c->argv[i], "-f"))
				continue;
			if (eq(&c->argv[i], "list") || eq(&c->argv[i], "monitor")
			    || eq(&c->argv[i], "describe"))
				return;
			break;
		}
		if (c->argc > 1)
			sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
		return;
	}
	if (strcmp(n, "ufw") == 0 || strncmp(n, "firewall-", 9) == 0) {
		for (i = 1; i < c->argc; i++) {
			const char *s = c->argv[i].s;

			if (eq_any(&c->argv[i], looks) ||
			    strncmp(s, "--list", 6) == 0 ||
			    strncmp(s, "--get", 5) == 0 ||
			    strncmp(s, "--query", 7) == 0)
				return;
		}
		if (c->argc > 1)
			sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (s[0] != '-' || s[1] == '-' ? eq_any(&c->argv[i], edits) :
		    strchr("FXZPAIDRNE", s[1]) != NULL) {
			sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
			return;
		}
	}
}

static void
h_sysctl(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "-w") || eq(f, "--write") || eq(f, "-p") ||
		    strncmp(f->s, "--load", 6) == 0 || eq(f, "--system") ||
		    (!is_opt(f) && memchr(f->s, '=', f->len) != NULL)) {
			sysconf(an, c, "builtin:sysctl",
			    "changes kernel parameters");
			return;
		}
	}
}

static void
h_module(struct pl_an *an, struct pl_cmd *c)
{
	if (strcmp(c->name, "modprobe") == 0 && (has_opt(c, 'n', "--dry-run")
	    || has_opt(c, 'c', "--showconfig") || has_arg(c, "--show-depends")
	    || has_opt(c, 'D', NULL) || has_arg(c, "--help") ||
	    has_opt(c, 'V', NULL)))
		return;
	if (has_arg(c, "--help") || has_arg(c, "-h") ||
	    has_arg(c, "--version") || has_arg(c, "-V"))
		return;
	if (c->argc < 2)
		return;
	sysconf(an, c, "builtin:kmod", "loads or unloads kernel modules");
}

/* Whether output option sh/lng of c (-o, --output, -g ...) names a
 * protected path (/boot, a system tree) or one only known at run time:
 * 1; another path: 0; no such option: -1. */
static int
boot_output(struct pl_an *an, const struct pl_cmd *c, char sh,
    const char *lng)
{
	const struct pl_field *o = opt_val(an, c, sh, lng);
	struct pl_path p;

	if (o == NULL)
		return -1;
	if (o->flags & F_UNK)
		return 1;
	pl_path_classify(an, o, &p);
	return p.cls == PC_PROTECTED;
}

/* What the host boots: its boot loader configuration, its initramfs,
 * its kernel modules' index and the debconf answers of installed
 * packages.  grub-mkconfig without -o prints the configuration;
 * mkinitcpio -g and depmod -b into the user's own tree change nothing
 * of the host; the listing and help forms only show. */
static void
h_boot(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int o;

	if (has_arg(c, "--help") || has_arg(c, "-h") ||
	    has_arg(c, "--version") || has_arg(c, "-V"))
		return;
	if (strcmp(n, "grub-mkconfig") == 0 ||
	    strcmp(n, "grub2-mkconfig") == 0) {
		if (boot_output(an, c, 'o', "--output") != 1)
			return;
	} else if (strcmp(n, "mkinitcpio") == 0) {
		if (has_opt(c, 'L', "--listhooks") || has_opt(c, 'M',
		    "--automods") || has_opt(c, 'H', "--hookhelp"))
			return;
		o = boot_output(an, c, 'g', "--generate");
		if (!has_opt(c, 'P', "--allpresets") && !has_opt(c, 'p',
		    "--preset") && o != 1)
			return;
	} else if (strcmp(n, "dracut") == 0) {
		if (has_arg(c, "--list-modules") ||
		    has_arg(c, "--print-cmdline"))
			return;
	} else if (strcmp(n, "depmod") == 0) {
		if (has_opt(c, 'n', "--dry-run") || boot_output(an, c, 'b',
		    "--basedir") == 0 || boot_output(an, c, 'o',
		    "--outdir") == 0)
			return;
	} else if (strcmp(n, "grub-editenv") == 0 ||
	    strcmp(n, "grub2-editenv") == 0) {
		if (!has_arg(c, "set") && !has_arg(c, "unset") &&
		    !has_arg(c, "create"))
			return;		/* list */
	} else if (strcmp(n, "update-initramfs") == 0) {
		if (c->argc < 2)
			return;
	}
	sysconf(an, c, "builtin:boot-config", strcmp(n, "dpkg-reconfigure")
	    == 0 ? "reconfigures installed packages (their files under "
	    "/etc)" : strcmp(n, "depmod") == 0 ? "rewrites the kernel "
	    "modules' index" : "rewrites what the host boots (boot loader "
	    "configuration or initramfs)");
}

static void
h_hostconf(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int i;

	if (strcmp(n, "hostname") == 0) {
		for (i = 1; i < c->argc; i++)
			if (!is_opt(&c->argv[i])) {
				sysconf(an, c, "builtin:hostname",
				    "changes the host name");
				return;
			}
		out_default(c);
		return;
	}
	if (strcmp(n, "date") == 0) {
		if (has_opt(c, 's', "--set"))
			sysconf(an, c, "builtin:clock", "sets the system clock");
		out_default(c);
		return;
	}
	if (strcmp(n, "chronyc") == 0 || strcmp(n, "ntpdate") == 0 ||
	    strcmp(n, "sntp") == 0) {
		/* chronyc's makestep and settime step the clock; ntpdate
		 * (unless -q) and sntp -S/-s set it. */
		if ((strcmp(n, "chronyc") == 0 && (has_arg(c, "makestep") ||
		    has_arg(c, "settime") || has_arg(c, "manual"))) ||
		    (strcmp(n, "ntpdate") == 0 && c->argc > 1 &&
		    !has_opt(c, 'q', NULL) && !has_opt(c, 'd', NULL)) ||
		    (strcmp(n, "sntp") == 0 && (has_arg(c, "-S") ||
		    has_arg(c, "-s"))))
			sysconf(an, c, "builtin:clock",
			    "sets the system clock");
		return;
	}
	if (strcmp(n, "hwclock") == 0) {
		if (has_arg(c, "--set") || has_arg(c, "--systohc") ||
		    has_arg(c, "--hctosys") || has_arg(c, "-w") ||
		    has_arg(c, "-s"))
			sysconf(an, c, "builtin:clock", "sets the clock");
		return;
	}
	for (i = 1; i < c->argc; i++)
		if (strncmp(c->argv[i].s, "set-", 4) == 0) {
			sysconf(an, c, "builtin:hostconf",
			    "changes host settings");
			return;
		}
}

static void
h_ip(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "add", "del", "delete", "set",
	    "flush", "change", "replace", "append", "down", "up", "modify",
	    "off", "mod", "disconnect", "connect", "reapply", "edit", "load",
	    "reload", "import", "on", NULL };
	const char *n = c->name;
	int i;

	if (strcmp(n, "ifdown") == 0 || strcmp(n, "ifup") == 0) {
		sysconf(an, c, "builtin:network", "changes network interfaces");
		return;
	}
	if (strcmp(n, "ifconfig") == 0) {
		int ops = 0;

		for (i = 1; i < c->argc; i++)
			if (!is_opt(&c->argv[i]))
				ops++;
		if (ops >= 2)
			sysconf(an, c, "builtin:network",
			    "changes network interfaces");
		return;
	}
	if (has_any(c, verbs))
		sysconf(an, c, "builtin:network",
		    "changes network configuration");
}

/* Network tools beyond ip/ifconfig/nmcli, each with the words (verbs,
 * or options for option-driven tools) that change the host's network:
 * the rest of their forms only show. */
static const struct net_tool {
	const char		*name;
	const char *const	*change;
	int			 opts;	/* change words are options */
	int			 nargs;	/* 0, or: a verb changes only with
					 * at least this many operands */
	int			 always; /* every run changes it (but help) */
} net_tools[] = {
	{ .name = "ipset", .change = (const char *const[]){
	  "create", "-N", "-C", "add", "-A", "del", "-D", "destroy", "-X",
	  "flush", "-F", "rename", "-E", "swap", "-W", "restore", "-R", "n",
	  "a", "d", "x", "f", NULL } },
	{ .name = "conntrack", .change = (const char *const[]){
	  "-F", "--flush", "-D", "--delete", "-U", "--update", "-I",
	  "--create", NULL }, .opts = 1 },
	{ .name = "tc", .change = (const char *const[]){
	  "add", "del", "delete", "change", "replace", "link", "flush",
	  "exec", NULL } },
	{ .name = "ethtool", .change = (const char *const[]){
	  "-s", "--change", "-K", "--features", "--offload", "-G",
	  "--set-ring", "-A", "--pause", "-C", "--coalesce", "-L",
	  "--set-channels", "-E", "--change-eeprom", "-f", "--flash", "-r",
	  "--negotiate", "-X", "--set-rxfh-indir", "--rxfh", "-N", "-U",
	  "--config-nfc", "--config-ntuple", "--reset", "-W", "--set-dump",
	  "--set-eee", "--set-fec", "--set-priv-flags", "--set-phy-tunable",
	  "--set-tunable", "--set-module", "--set-plca-cfg", "--set-mm",
	  "--set-pse", NULL }, .opts = 1 },
	{ .name = "iw", .change = (const char *const[]){
	  "set", "del", "connect", "disconnect", "add", "join", "leave",
	  "reload", NULL } },
	{ .name = "iwconfig", .change = (const char *const[]){
	  "essid", "mode", "freq", "channel", "txpower", "power", "key", "ap",
	  "rate", "retry", "commit", NULL } },
	{ .name = "brctl", .change = (const char *const[]){
	  "addbr", "delbr", "addif", "delif", "stp", "setageing",
	  "setbridgeprio", "setfd", "sethello", "setmaxage", "setpathcost",
	  "setportprio", "sethashel", "sethashmax", "setmclmc", NULL } },
	{ .name = "bridge", .change = (const char *const[]){
	  "add", "del", "delete", "set", "replace", "change", "flush",
	  "append", NULL } },
	{ .name = "wg", .change = (const char *const[]){
	  "set", "setconf", "addconf", "syncconf", NULL } },
	{ .name = "wg-quick", .change = (const char *const[]){
	  "up", "down", "save", NULL } },
	{ .name = "arp", .change = (const char *const[]){
	  "-s", "--set", "-d", "--delete", "-f", "--file", NULL }, .opts = 1 },
	{ .name = "netplan", .change = (const char *const[]){
	  "apply", "try", "generate", "set", NULL } },
	{ .name = "networkctl", .change = (const char *const[]){
	  "up", "down", "reload", "reconfigure", "renew", "forcerenew",
	  "delete", "edit", NULL } },
	{ .name = "resolvectl", .change = (const char *const[]){
	  "dns", "domain", "default-route", "llmnr", "mdns", "dnssec",
	  "dnsovertls", "nta", "revert", "flush-caches", "reset-statistics",
	  "reset-server-features", NULL }, .nargs = 2 },
	{ .name = "ifenslave", .change = (const char *const[]){
	  "-d", "--detach", "-c", "--change-active", "-a", NULL }, .nargs = 2 },
	{ .name = "vconfig", .change = (const char *const[]){
	  "add", "rem", "set_flag", "set_egress_map", "set_ingress_map",
	  "set_name_type", NULL } },
	{ .name = "nmtui", .change = (const char *const[]){
	  "edit", "connect", "hostname", NULL } },
	{ .name = "rfkill", .change = (const char *const[]){
	  "block", "unblock", "toggle", NULL } },
	/* Wireless and DHCP clients: what joins, leaves or reconfigures
	 * a network; status, scan and list forms only show. */
	{ .name = "wpa_cli", .change = (const char *const[]){
	  "disconnect", "reconnect", "reassociate", "reattach", "terminate",
	  "add_network", "remove_network", "set_network", "enable_network",
	  "disable_network", "select_network", "save_config", "reconfigure",
	  "set", "interface_add", "interface_remove", "roam", "bssid",
	  "wps_pbc", "wps_pin", "wps_reg", "p2p_connect", "p2p_group_add",
	  "p2p_group_remove", NULL } },
	{ .name = "iwctl", .change = (const char *const[]){
	  "connect", "connect-hidden", "disconnect", "forget",
	  "set-property", "start", "stop", "start-profile", NULL } },
	{ .name = "connmanctl", .change = (const char *const[]){
	  "enable", "disable", "connect", "disconnect", "config", "tether",
	  "remove", "move-before", "move-after", NULL } },
	/* dhclient configures the interfaces it is given (or all) on
	 * every run; -r releases and -x stops, both leaving them down. */
	{ .name = "dhclient", .always = 1 },
	{ .name = "dhcpcd", .change = (const char *const[]){
	  "-k", "--release", "-x", "--exit", "-n", "--rebind", "-N",
	  "--renew", "-g", "--reconfigure", "-S", "--static", "-s",
	  "--inform", NULL }, .opts = 1 },
};

static void
h_net(struct pl_an *an, struct pl_cmd *c)
{
	size_t k;
	int i;

	if (has_arg(c, "--help") || has_arg(c, "-h") ||
	    has_arg(c, "--version"))
		return;
	for (k = 0; k < sizeof(net_tools) / sizeof(net_tools[0]); k++) {
		const struct net_tool *t = &net_tools[k];

		if (strcmp(t->name, c->name) != 0)
			continue;
		if (t->always) {
			sysconf(an, c, "builtin:network",
			    "changes network configuration");
			return;
		}
		for (i = 1; i < c->argc; i++) {
			const struct pl_field *f = &c->argv[i];

			if (!t->opts && is_opt(f) && !eq_any(f, t->change))
				continue;
			if (!eq_any(f, t->change))
				continue;
			if (t->nargs > 0 && c->argc - i - 1 < t->nargs)
				return;
			sysconf(an, c, "builtin:network",
			    "changes network configuration");
			return;
		}
		return;
	}
}

/* Package sources added or enabled by the other package managers, as
 * add-apt-repository adds one: dnf/yum config-manager --add-repo and
 * --set-enabled (dnf5's addrepo), zypper addrepo|ar|modifyrepo. */
static int
pkg_source(const struct pl_cmd *c)
{
	static const char *const cm[] = { "--add-repo", "--set-enabled",
	    "--enable", "addrepo", "--from-repofile", NULL };
	static const char *const zy[] = { "addrepo", "ar", "modifyrepo",
	    "mr", "addservice", "as", NULL };
	const char *n = c->name;

	if (strcmp(n, "zypper") == 0)
		return has_any(c, zy);
	if (strcmp(n, "flatpak") == 0)
		return has_arg(c, "remote-add") || has_arg(c, "remote-modify");
	if (strcmp(n, "yum-config-manager") == 0 ||
	    strcmp(n, "dnf-config-manager") == 0)
		return has_prefix(c, cm);
	if ((strcmp(n, "dnf") == 0 || strcmp(n, "dnf5") == 0 ||
	    strcmp(n, "yum") == 0) && has_arg(c, "config-manager"))
		return has_prefix(c, cm);
	return 0;
}

static void
h_pkg(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const removes[] = { "remove", "purge",
	    "autoremove", "erase", "del", "--purge", "--remove", "-P",
	    "uninstall", NULL };
	/* Forms that only print what would happen, or help. */
	static const char *const dry[] = { "-s", "--simulate", "--dry-run",
	    "--just-print", "--no-act", "--recon", "--assumeno", "--test",
	    "--print", "-p", "--help", "-h", "--version", "-V", "help",
	    "--print-uris", "--no-download", NULL };
	int i;

	if (has_any(c, dry) || (strcmp(c->name, "pacman") == 0 &&
	    (has_arg(c, "-Rp") || has_opt(c, 'h', "--help"))) ||
	    (strcmp(c->name, "zypper") == 0 &&
	    has_arg(c, "-D")))
		return;
	/* flatpak's verb is its first word (mask --remove unmasks); with
	 * --user it removes the user's own applications, as pip does. */
	if (strcmp(c->name, "flatpak") == 0) {
		const struct pl_field *w = first_word(c);

		if (w != NULL && (eq(w, "remove") || eq(w, "uninstall")) &&
		    !has_arg(c, "--user"))
			sysconf(an, c, "builtin:pkg-remove",
			    "removes system packages");
		else if (pkg_source(c) && !has_arg(c, "--user"))
			sysconf(an, c, "builtin:pkg-repo",
			    "adds a package source");
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq_any(f, removes) ||
		    (strcmp(c->name, "dpkg") == 0 && eq(f, "-r")) ||
		    (strcmp(c->name, "rpm") == 0 && (eq(f, "-e") ||
		    eq(f, "--erase"))) ||
		    (strcmp(c->name, "pacman") == 0 &&
		    strncmp(f->s, "-R", 2) == 0)) {
			sysconf(an, c, "builtin:pkg-remove",
			    "removes system packages");
			return;
		}
		if (strcmp(c->name, "apt-key") == 0 && (eq(f, "add") ||
		    eq(f, "adv"))) {
			sysconf(an, c, "builtin:pkg-key",
			    "trusts a new package signing key");
			return;
		}
	}
	if (strcmp(c->name, "add-apt-repository") == 0 ||
	    strcmp(c->name, "apt-add-repository") == 0 || pkg_source(c))
		sysconf(an, c, "builtin:pkg-repo", "adds a package source");
}

static void
h_security(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;

	if (has_arg(c, "--help") || (strncmp(n, "aa-", 3) == 0 &&
	    has_arg(c, "-h")))
		return;
	if (strcmp(n, "setenforce") == 0 && c->argc > 1 &&
	    (eq(&c->argv[1], "0") || eq(&c->argv[1], "Permissive")))
		sysconf(an, c, "builtin:security-off", "disables SELinux");
	else if (strcmp(n, "auditctl") == 0 && (has_arg(c, "-D") ||
	    (has_arg(c, "-e") && has_arg(c, "0"))))
		sysconf(an, c, "builtin:security-off", "disables auditing");
	else if (strcmp(n, "aa-teardown") == 0 || strcmp(n, "aa-disable") == 0)
		sysconf(an, c, "builtin:security-off", "disables AppArmor");
	else if (strcmp(n, "journalctl") == 0 && (has_arg(c, "--rotate") ||
	    has_opt(c, 0, "--vacuum-time") || has_opt(c, 0, "--vacuum-size") ||
	    has_opt(c, 0, "--vacuum-files")))
		sysconf(an, c, "builtin:logs", "deletes system logs");
	else if (strcmp(n, "history") == 0 && has_opt(c, 'c', NULL))
		sysconf(an, c, "builtin:history-off", "clears shell history");
	if (strcmp(n, "journalctl") == 0)
		out_default(c);
}

/* ---- host disruption ---- */

/* kill [-s SIG | -n NUM | -SIG] [--] PID...: the first "-N" is a signal
 * when PIDs follow it ("kill -1 4242" sends SIGHUP to 4242), a PID when
 * it is alone or comes after the signal ("kill -1", "kill -9 -1": every
 * process); PID 1 is init. */
static void
h_kill(struct pl_an *an, struct pl_cmd *c)
{
	int i, dd = 0, sig = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		int pid = dd || !is_opt(f);

		if (!dd && (eq(f, "-l") || eq(f, "-L") || eq(f, "--list") ||
		    eq(f, "--help") || eq(f, "--table")))
			return;
		if (!dd && eq(f, "--")) {
			dd = 1;
			continue;
		}
		if (!dd && (eq(f, "-s") || eq(f, "-n") || eq(f, "--signal"))) {
			i++;
			sig = 1;
			continue;
		}
		if (!pid && !sig && i + 1 < c->argc) {
			sig = 1;	/* -SIG, or -N followed by PIDs */
			continue;
		}
		if (!pid && !eq(f, "-1"))
			continue;	/* other options, process groups */
		if (eq(f, "-1") || eq(f, "1")) {
			pl_find_floor(an, PL_FLOOR_KILLALL, VG_CAT_DISRUPTION,
			    "builtin:kill-all", c->off, c->len, eq(f, "1") ?
			    "'kill' signals init (PID 1)" :
			    "'kill -1' signals every process");
			return;
		}
	}
}

static int
broad_pattern(const char *s)
{
	static const char *const daemons[] = { "init", "systemd", "sshd",
	    "ssh", "bash", "sh", "zsh", "python", "python3", "java", "node",
	    "perl", "ruby", "slurmd", "slurmctld", "slurmdbd", "slurmstepd",
	    "munged", "dockerd", "containerd", "cron", "crond", "rsyslogd",
	    "systemd-journald", "journald", "dbus-daemon", "dbus",
	    "NetworkManager", "Xorg", "gdm", "lightdm", "login", "getty",
	    "agetty", "kubelet", "nfsd", "sssd", "nscd", "ntpd", "chronyd",
	    "mysqld", "mariadbd", "postgres", "nginx", "httpd", "apache2",
	    "sudo", "su", "udevd", "systemd-udevd", "polkitd", "snapd",
	    "systemd-networkd", "networkd", "systemd-resolved",
	    "systemd-logind", "logind", "wpa_supplicant", "dhclient",
	    "dhcpcd", "auditd", "rpcbind", "multipathd", "iscsid",
	    "firewalld",
	    ".", ".*", "^", "", "*", NULL };
	int k;

	for (k = 0; daemons[k] != NULL; k++)
		if (strcmp(s, daemons[k]) == 0)
			return 1;
	return 0;
}

/* True when pkill or killall sends signal 0 (-0, -s 0, --signal 0,
 * --signal=0), which only tests that the processes exist, or when
 * killall only lists signal names (-l, --list). */
static int
pkill_tests(const struct pl_cmd *c)
{
	int i, killall = strcmp(c->name, "killall") == 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "-0") || eq(f, "--signal=0") || (killall &&
		    (eq(f, "-l") || eq(f, "--list"))) ||
		    ((eq(f, "-s") || eq(f, "--signal")) &&
		    i + 1 < c->argc && eq(&c->argv[i + 1], "0")))
			return 1;
	}
	return 0;
}

static void
h_pkill(struct pl_an *an, struct pl_cmd *c)
{
	int i, ops = 0;

	if (strcmp(c->name, "killall5") == 0) {
		pl_find_floor(an, PL_FLOOR_KILLALL, VG_CAT_DISRUPTION,
		    "builtin:kill-all", c->off, c->len,
		    "'killall5' signals every process");
		return;
	}
	int byuser = 0;

	if (pkill_tests(c))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (eq(f, "-v") || eq(f, "--inverse")) {
			pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad",
			    c->off, c->len, "'%s -v' kills every process that "
			    "does not match", c->name);
			return;
		}
		if (eq(f, "-u") || eq(f, "--user") || eq(f, "-U") ||
		    strncmp(f->s, "--user=", 7) == 0) {
			byuser = 1;
			if (f->s[2] != '=' && strchr(f->s, '=') == NULL)
				i++;
			continue;
		}
		if (eq(f, "-s") || eq(f, "--signal") || eq(f, "-g") ||
		    eq(f, "-G") || eq(f, "-P") || eq(f, "-t") || eq(f, "-o") ||
		    eq(f, "-y") || eq(f, "-n") || eq(f, "--older-than") ||
		    eq(f, "--younger-than")) {
			i++;
			continue;
		}
		if (is_opt(f))
			continue;
		ops++;
		if (broad_pattern(f->s)) {
			pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad",
			    c->off, c->len, "'%s %s' kills shared or system "
			    "processes", c->name, f->s);
			return;
		}
	}
	if (byuser && ops == 0)
		pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad", c->off,
		    c->len, "'%s -u' kills every process of a user", c->name);
}

static void
h_power(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int halt;

	/* --wtmp-only (-w) only writes the wtmp record; shutdown -c
	 * cancels a pending shutdown. */
	if (has_arg(c, "--help") || (strcmp(n, "shutdown") == 0 &&
	    has_opt(c, 'c', NULL)) || ((strcmp(n, "halt") == 0 ||
	    strcmp(n, "poweroff") == 0 || strcmp(n, "reboot") == 0) &&
	    (has_arg(c, "--wtmp-only") || has_arg(c, "-w"))))
		return;
	if ((strcmp(n, "init") == 0 || strcmp(n, "telinit") == 0) &&
	    (c->argc < 2 || !(eq(&c->argv[1], "0") || eq(&c->argv[1], "6") ||
	    eq(&c->argv[1], "1") || eq(&c->argv[1], "S") ||
	    eq(&c->argv[1], "s"))))
		return;
	if (strcmp(n, "loginctl") == 0 && (c->argc < 2 ||
	    strncmp(c->argv[1].s, "terminate", 9) != 0) &&
	    !(c->argc >= 2 && (eq(&c->argv[1], "kill-user") ||
	    eq(&c->argv[1], "kill-session") || eq(&c->argv[1], "poweroff") ||
	    eq(&c->argv[1], "reboot") || eq(&c->argv[1], "suspend") ||
	    eq(&c->argv[1], "hibernate") || eq(&c->argv[1], "hybrid-sleep") ||
	    eq(&c->argv[1], "suspend-then-hibernate"))))
		return;
	if (strcmp(n, "kexec") == 0 && !has_opt(c, 'e', "--exec") &&
	    !has_opt(c, 'f', "--force"))
		return;
	halt = strcmp(n, "shutdown") == 0 || strcmp(n, "reboot") == 0 ||
	    strcmp(n, "halt") == 0 || strcmp(n, "poweroff") == 0 ||
	    strcmp(n, "kexec") == 0 || (c->argc >= 2 &&
	    (eq(&c->argv[1], "0") || eq(&c->argv[1], "6") ||
	    eq(&c->argv[1], "poweroff") || eq(&c->argv[1], "reboot")));
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len,
	    "'%s' stops, restarts or switches the host's run level", n);
}

/* ---- scheduler ---- */

/* Cryptocurrency miners: an allocation's CPUs and GPUs spent on coins
 * is what clusters' acceptable-use policies forbid first. */
static void
h_miner(struct pl_an *an, struct pl_cmd *c)
{
	if (has_arg(c, "--help") || has_arg(c, "-h") ||
	    has_arg(c, "--version") || has_arg(c, "-V"))
		return;
	pl_find(an, VG_CAT_SCHEDULER, "builtin:miner", c->off, c->len,
	    "'%s' mines cryptocurrency", c->name);
}

static void
h_scancel(struct pl_an *an, struct pl_cmd *c)
{
	int i, ids = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s;

		if (eq(f, "-u") || eq(f, "--user") || !strncmp(s, "--user=", 7)
		    || eq(f, "-p") || eq(f, "--partition") ||
		    !strncmp(s, "--partition=", 12) || eq(f, "-t") ||
		    eq(f, "--state") || !strncmp(s, "--state=", 8) ||
		    eq(f, "-A") || eq(f, "--account") ||
		    !strncmp(s, "--account=", 10) || eq(f, "-w") ||
		    eq(f, "--nodelist") || !strncmp(s, "--nodelist=", 11) ||
		    eq(f, "--me") || eq(f, "-q") || eq(f, "--qos") ||
		    !strncmp(s, "--qos=", 6) || eq(f, "-R") ||
		    eq(f, "--reservation") ||
		    (is_opt(f) && s[1] != '-' && strchr(s, 'u'))) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:scancel-broad",
			    c->off, c->len, "'scancel %s' cancels jobs by "
			    "user, partition, state or node rather than by id",
			    s);
			return;
		}
		if (eq(f, "-s") || eq(f, "--signal") || eq(f, "-n") ||
		    eq(f, "--name") || eq(f, "-M") || eq(f, "--clusters")) {
			i++;
			continue;
		}
		if (!is_opt(f)) {
			ids++;
			if ((f->flags & F_UNK) && (f->taint & T_PROG))
				pl_find(an, VG_CAT_SCHEDULER,
				    "builtin:scancel-list", c->off, c->len,
				    "'scancel' of job ids listed at run time");
		}
	}
}

static void
h_scontrol(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		char low[32];
		size_t k;

		if (is_opt(f))
			continue;
		for (k = 0; k < sizeof(low) - 1 && f->s[k]; k++)
			low[k] = (char)(f->s[k] >= 'A' && f->s[k] <= 'Z' ?
			    f->s[k] + 32 : f->s[k]);
		low[k] = '\0';
		if (strcmp(low, "shutdown") == 0 || strcmp(low, "reconfigure")
		    == 0 || strcmp(low, "takeover") == 0 ||
		    strcmp(low, "create") == 0 || strcmp(low, "delete") == 0 ||
		    strcmp(low, "setdebug") == 0 ||
		    strcmp(low, "setdebugflags") == 0 ||
		    strcmp(low, "reboot") == 0 || strcmp(low, "reboot_nodes")
		    == 0) {
			pl_find(an, VG_CAT_SCHEDULER, "builtin:scontrol",
			    c->off, c->len, "'scontrol %s' changes the "
			    "cluster", low);
			return;
		}
		if (strcmp(low, "update") == 0) {
			int j;

			for (j = i + 1; j < c->argc; j++) {
				const char *s = c->argv[j].s;

				if (strncasecmp(s, "node", 4) == 0 ||
				    strncasecmp(s, "partition", 9) == 0 ||
				    strncasecmp(s, "reservation", 11) == 0 ||
				    strncasecmp(s, "frontend", 8) == 0) {
					pl_find(an, VG_CAT_SCHEDULER,
					    "builtin:scontrol", c->off, c->len,
					    "'scontrol update' of nodes, "
					    "partitions or reservations");
					return;
				}
			}
			return;
		}
		return;
	}
}

static void
h_sacctmgr(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (is_opt(f))
			continue;
		if (eq(f, "show") || eq(f, "list") || eq(f, "dump") ||
		    eq(f, "help") || eq(f, "version"))
			return;
		pl_find(an, VG_CAT_SCHEDULER, "builtin:sacctmgr", c->off, c->len,
		    "'sacctmgr %s' changes accounts, limits or associations",
		    f->s);
		return;
	}
}

static void
h_sbatch(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *wrap = opt_val(an, c, 0, "--wrap");

	if (an->infloop || an->loopiter >= 500)
		pl_find(an, VG_CAT_SCHEDULER, "builtin:submit-loop", c->off,
		    c->len, "'%s' submits jobs in an %s loop", c->name,
		    an->infloop ? "unbounded" : "very large");
	if (wrap != NULL)
		shell_code(an, c, wrap, c->argc);
	out_default(c);
}

static void
h_squeue(struct pl_an *an, struct pl_cmd *c)
{
	if (an->infloop)
		an->looppoll++;
	out_default(c);
}

static void
h_sleep(struct pl_an *an, struct pl_cmd *c)
{
	if (!an->bg)
		an->loopwait++;
	pl_stream_text(c->out, "", 0, 0);
}

/* ---- containers ---- */

static void
h_docker(struct pl_an *an, struct pl_cmd *c)
{
	int i, run = 0;

	/* docker volume rm/prune and system prune --volumes delete the
	 * data of named volumes. */
	if ((has_arg(c, "volume") && (has_arg(c, "rm") ||
	    has_arg(c, "remove") || has_arg(c, "prune"))) ||
	    (has_arg(c, "system") && has_arg(c, "prune") &&
	    has_arg(c, "--volumes"))) {
		if (!has_arg(c, "--help"))
			pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:volume-delete",
			    c->off, c->len, "'%s' deletes container volumes "
			    "and their data", c->name);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s, *v = NULL;

		if (eq(f, "run") || eq(f, "create") || eq(f, "exec"))
			run = 1;
		if (!run)
			continue;
		if (eq(f, "--privileged") || strncmp(s, "--pid=host", 10) == 0 ||
		    (eq(f, "--pid") && i + 1 < c->argc &&
		    eq(&c->argv[i + 1], "host")) ||
		    strncmp(s, "--cap-add=ALL", 13) == 0 ||
		    strncmp(s, "--cap-add=SYS_ADMIN", 19) == 0 ||
		    strncmp(s, "--userns=host", 13) == 0) {
			pl_find(an, VG_CAT_PRIVILEGE, "builtin:container-priv",
			    c->off, c->len, "'%s' starts a container with "
			    "host privileges (%s)", c->name, s);
			return;
		}
		if ((eq(f, "-v") || eq(f, "--volume")) && i + 1 < c->argc)
			v = c->argv[i + 1].s;
		else if (strncmp(s, "--volume=", 9) == 0)
			v = s + 9;
		else if (strncmp(s, "-v", 2) == 0 && f->len > 2)
			v = s + 2;
		else if (strncmp(s, "--mount", 7) == 0) {
			const char *m = s[7] == '=' ? s + 8 : i + 1 < c->argc ?
			    c->argv[i + 1].s : "";
			const char *src = strstr(m, "source=");

			if (src == NULL)
				src = strstr(m, "src=");
			if (src != NULL)
				v = strchr(src, '=') + 1;
		}
		if (v != NULL) {
			struct pl_field sf = *f;
			struct pl_path p;
			size_t n = strcspn(v, ":,");

			sf.s = pl_strndup(an->a, v, n);
			sf.len = n;
			sf.flags = 0;
			if (n == 0 || sf.s[0] != '/')
				continue;
			pl_path_classify(an, &sf, &p);
			if ((p.cls == PC_PROTECTED && (p.attr & (PA_ROOT |
			    PA_ETC | PA_SYSBIN | PA_SECRET | PA_SSH))) ||
			    strstr(sf.s, "docker.sock") != NULL ||
			    (p.abs && (strcmp(p.abs, "/var") == 0 ||
			    strcmp(p.abs, "/proc") == 0 ||
			    strcmp(p.abs, "/sys") == 0 ||
			    strcmp(p.abs, "/dev") == 0))) {
				pl_find(an, VG_CAT_PRIVILEGE,
				    "builtin:container-mount", c->off, c->len,
				    "'%s' mounts the host path '%s' into a "
				    "container", c->name, sf.s);
				return;
			}
		}
	}
	out_default(c);
}

static void
h_xterm(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *d = opt_val(an, c, 0, "-display");

	if (d != NULL && d->s[0] != ':')
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:xterm-display",
		    c->off, c->len, "'xterm -display %s' opens a shell on a "
		    "remote display", d->s);
}

/* ---- shell state ---- */

static void
h_cd(struct pl_an *an, struct pl_cmd *c)
{
	int i = 1;

	while (i < c->argc && is_opt(&c->argv[i]) && !eq(&c->argv[i], "-"))
		i++;
	if (i >= c->argc) {
		an->cwd = an->home;
		return;
	}
	if (eq(&c->argv[i], "-"))
		return;
	if (c->argv[i].flags & F_UNK) {
		const char *s = c->argv[i].s;
		size_t k, n = c->argv[i].len;
		int known = 0;

		for (k = 0; k < n; k++)
			if (s[k] != PL_UNK)
				known = 1;
		if (!known) {
			an->cwd = "/\001";
			return;
		}
	}
	an->cwd = pl_path_resolve(an, c->argv[i].s, c->argv[i].len);
	pl_stream_text(c->out, "", 0, 0);
}

static void
h_assignlike(struct pl_an *an, struct pl_cmd *c)
{
	int i, any = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *e;

		if (is_opt(f)) {
			if (eq(f, "-p") || (f->s[1] == 'x' && c->argc == 2)) {
				pl_stream_unknown(c->out, T_ENVDUMP | T_PROG);
				return;
			}
			continue;
		}
		any = 1;
		e = memchr(f->s, '=', f->len);
		if (e == NULL || e == f->s)
			continue;
		if ((size_t)(e - f->s) == 8 && memcmp(f->s, "HISTFILE", 8) == 0
		    && strcmp(e + 1, "/dev/null") == 0)
			sysconf(an, c, "builtin:history-off",
			    "disables the shell history (HISTFILE=/dev/null)");
		if (strcmp(c->name, "export") == 0)
			pl_optrun_env(an, f, c->off, c->len);
		pl_var_set(an, f->s, (size_t)(e - f->s), e + 1,
		    f->len - (size_t)(e - f->s) - 1, f->taint);
	}
	if (!any && (strcmp(c->name, "export") == 0 ||
	    strcmp(c->name, "declare") == 0 || strcmp(c->name, "typeset") ==
	    0 || strcmp(c->name, "set") == 0))
		pl_stream_unknown(c->out, T_ENVDUMP | T_PROG);
	else
		pl_stream_text(c->out, "", 0, 0);
}

static void
h_set(struct pl_an *an, struct pl_cmd *c)
{
	int i;
	if (c->argc == 1) {
		pl_stream_unknown(c->out, T_ENVDUMP | T_PROG);
		return;
	}
	for (i = 1; i < c->argc; i++)
		if (eq(&c->argv[i], "--"))
			break;
	if (i >= c->argc)
		return;
	pl_pos_set(an, c->argv + i + 1, c->argc - i - 1);
}

static void
h_unset(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		if (is_opt(&c->argv[i]))
			continue;
		pl_var_set(an, c->argv[i].s, c->argv[i].len, "", 0, 0);
		if (eq(&c->argv[i], "HISTFILE"))
			sysconf(an, c, "builtin:history-off",
			    "disables the shell history (unset HISTFILE)");
	}
}

static void
h_read(struct pl_an *an, struct pl_cmd *c)
{
	int i, nv = 0, idx[9];
	const char *s = c->in->s, *e;

	for (i = 1; i < c->argc && nv < 9; i++) {
		if (is_opt(&c->argv[i])) {
			if (strchr("adnNptu", c->argv[i].s[1]) &&
			    c->argv[i].len == 2)
				i++;
			continue;
		}
		idx[nv++] = i;
	}
	if (nv == 0)
		return;
	if (!c->in->known) {
		for (i = 0; i < nv; i++)
			pl_var_set(an, c->argv[idx[i]].s, c->argv[idx[i]].len,
			    "\001", 1, c->in->taint | T_VAR);
		return;
	}
	e = memchr(s, '\n', c->in->len);
	if (e == NULL)
		e = s + c->in->len;
	for (i = 0; i < nv; i++) {
		const char *t;

		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		t = s;
		if (i < nv - 1)
			while (t < e && *t != ' ' && *t != '\t')
				t++;
		else
			t = e;
		pl_var_set(an, c->argv[idx[i]].s, c->argv[idx[i]].len, s,
		    (size_t)(t - s), c->in->taint);
		s = t;
	}
}

static void
h_mktemp(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *d = opt_val(an, c, 'p', "--tmpdir");
	const char *dir = d && !(d->flags & F_UNK) ? d->s : "/tmp";
	size_t dl = strlen(dir);
	char *s = pl_alloc(an->a, dl + 16);

	memcpy(s, dir, dl);
	memcpy(s + dl, "/tmp.vigil0000", 14);
	pl_stream_text(c->out, s, dl + 14, T_TMP);
	if (dir[0] != '/') {
		const char *abs = pl_path_resolve(an, s, dl + 14);

		pl_stream_text(c->out, abs, strlen(abs), T_TMP);
	}
}

static void
h_which(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		char *s;

		if (is_opt(&c->argv[i]))
			continue;
		s = pl_alloc(an->a, c->argv[i].len + 10);
		memcpy(s, "/usr/bin/", 9);
		memcpy(s + 9, c->argv[i].s, c->argv[i].len);
		pl_stream_text(c->out, s, c->argv[i].len + 9,
		    c->argv[i].taint);
		return;
	}
}

static void
h_pathop(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *f = NULL;
	const char *s, *r;
	int i;

	for (i = 1; i < c->argc; i++)
		if (!is_opt(&c->argv[i])) {
			f = &c->argv[i];
			break;
		}
	if (strcmp(c->name, "pwd") == 0) {
		if (an->cwd && !memchr(an->cwd, PL_UNK, strlen(an->cwd)))
			pl_stream_text(c->out, an->cwd, strlen(an->cwd), 0);
		return;
	}
	if (f == NULL || (f->flags & F_UNK))
		return;
	s = f->s;
	if (strcmp(c->name, "basename") == 0) {
		r = strrchr(s, '/');
		r = r ? r + 1 : s;
		pl_stream_text(c->out, r, strlen(r), f->taint);
	} else if (strcmp(c->name, "dirname") == 0) {
		r = strrchr(s, '/');
		if (r == NULL)
			pl_stream_text(c->out, ".", 1, f->taint);
		else
			pl_stream_text(c->out, s, r == s ? 1 : (size_t)(r - s),
			    f->taint);
	} else {
		r = pl_path_resolve(an, s, f->len);
		pl_stream_text(c->out, r, strlen(r), f->taint);
	}
}

static void
h_env(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (is_opt(&c->argv[i]))
			continue;
		if (strcmp(c->name, "printenv") == 0 &&
		    (strstr(s, "TOKEN") || strstr(s, "SECRET") ||
		    strstr(s, "PASSWORD") || strstr(s, "KEY") ||
		    strstr(s, "CREDENTIAL"))) {
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:print-secret",
			    c->off, c->len, "'printenv %s' prints a credential",
			    s);
			pl_stream_unknown(c->out, T_SECRET | T_PROG);
			return;
		}
		if (strcmp(c->name, "printenv") == 0) {
			pl_stream_unknown(c->out, T_PROG);
			return;
		}
	}
	pl_stream_unknown(c->out, T_ENVDUMP | T_PROG);
}

static void
h_wait(struct pl_an *an, struct pl_cmd *c)
{
	an->loopwait++;
	pl_stream_text(c->out, "", 0, 0);
}

static void
h_true(struct pl_an *an, struct pl_cmd *c)
{
	(void)an;
	pl_stream_text(c->out, "", 0, 0);
}

static void
h_find(struct pl_an *an, struct pl_cmd *c)
{
	int i = 1, nroots = 0, roots[16], k;
	const char *namepat = "*";
	char *item;

	while (i < c->argc && is_opt(&c->argv[i]) && strlen(c->argv[i].s) == 2
	    && strchr("HLPDO", c->argv[i].s[1]))
		i++;
	for (; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if ((s[0] == '-' && s[1] != '\0') || eq(&c->argv[i], "(") ||
		    eq(&c->argv[i], "!"))
			break;
		if (nroots < 16)
			roots[nroots++] = i;
	}
	if (nroots == 0) {
		static char dot[] = ".";
		struct pl_field *f = pl_alloc(an->a, sizeof(*f));

		*f = c->argv[0];
		f->s = dot;
		f->len = 1;
		f->flags = 0;
		c->argv[0] = c->argv[0];
		roots[nroots++] = -1;
		(void)f;
	}
	for (k = i; k < c->argc; k++)
		if (eq(&c->argv[k], "-empty") || eq(&c->argv[k], "-mtime") ||
		    eq(&c->argv[k], "-mmin") || eq(&c->argv[k], "-atime") ||
		    eq(&c->argv[k], "-amin") || eq(&c->argv[k], "-newer") ||
		    eq(&c->argv[k], "-size") || eq(&c->argv[k], "-user") ||
		    eq(&c->argv[k], "-perm") || eq(&c->argv[k], "-path") ||
		    eq(&c->argv[k], "-regex") || eq(&c->argv[k], "-inum"))
			namepat = "*(selected)";
	{
		/* What find yields: files beneath each root, named like the
		 * first -name pattern (or anything). */
		for (k = i; k < c->argc; k++)
			if ((eq(&c->argv[k], "-name") ||
			    eq(&c->argv[k], "-iname")) && k + 1 < c->argc &&
			    !(c->argv[k + 1].flags & F_UNK) &&
			    memchr(c->argv[k + 1].s, '/', c->argv[k + 1].len) ==
			    NULL) {
				namepat = c->argv[k + 1].s;
				break;
			}
	}
	for (k = 0; k < nroots; k++) {
		const struct pl_field *rf = roots[k] < 0 ? NULL :
		    &c->argv[roots[k]];
		const char *rs = rf ? rf->s : ".";
		size_t rl = rf ? rf->len : 1, nl = strlen(namepat);
		struct pl_field itf;
		int j;

		item = pl_alloc(an->a, rl + nl + 2);
		memcpy(item, rs, rl);
		item[rl] = '/';
		memcpy(item + rl + 1, namepat, nl);
		memset(&itf, 0, sizeof(itf));
		itf.s = item;
		itf.len = rl + 1 + nl;
		itf.flags = F_GLOB | (rf ? rf->flags & F_UNK : 0);
		itf.taint = rf ? rf->taint : 0;
		itf.off = rf ? rf->off : c->off;
		itf.slen = rf ? rf->slen : c->len;
		for (j = i; j < c->argc; j++) {
			const char *s = c->argv[j].s;

			if (eq(&c->argv[j], "-delete")) {
				delete_target(an, c, &itf, 1);
			} else if (eq(&c->argv[j], "-exec") ||
			    eq(&c->argv[j], "-execdir") ||
			    eq(&c->argv[j], "-ok") || eq(&c->argv[j], "-okdir")) {
				int e = j + 1, m = 0, q;
				struct pl_field *nv;
				struct pl_stream in, out;

				while (e < c->argc && !eq(&c->argv[e], ";") &&
				    !eq(&c->argv[e], "+"))
					e++;
				nv = pl_alloc(an->a, (size_t)(e - j + 1) *
				    sizeof(*nv));
				for (q = j + 1; q < e; q++) {
					if (strstr(c->argv[q].s, "{}") != NULL
					    && c->argv[q].len == 2)
						nv[m++] = itf;
					else
						nv[m++] = c->argv[q];
				}
				pl_stream_unknown(&in, 0);
				if (m > 0 && k == 0)
					pl_run_argv(an, nv, m, c->off, c->len,
					    &in, &out, 0);
				j = e;
			} else if ((eq(&c->argv[j], "-fprint") ||
			    eq(&c->argv[j], "-fprintf") ||
			    eq(&c->argv[j], "-fls") ||
			    eq(&c->argv[j], "-fprint0")) && j + 1 < c->argc) {
				pl_classify_write(an, &c->argv[j + 1], 0,
				    "'find -fprint'");
			}
			(void)s;
		}
		if (k == 0) {
			pl_stream_unknown(c->out, T_PROG);
			c->out->items = item;
		}
	}
}

static void
h_lister(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = next_operand(c, 1, NULL, &dd);

	out_default(c);
	if (strcmp(c->name, "ls") == 0 || strcmp(c->name, "fd") == 0 ||
	    strcmp(c->name, "fdfind") == 0) {
		const char *d = i < c->argc ? c->argv[i].s : ".";
		size_t n = strlen(d);
		char *s = pl_alloc(an->a, n + 3);

		memcpy(s, d, n);
		s[n] = '/';
		s[n + 1] = '*';
		c->out->items = s;
	} else {
		c->out->items = "./*";
	}
}

/* ---- table ---- */

static const struct handler handlers[] = {
	{ "rm", h_rm }, { "unlink", h_rm }, { "shred", h_rm },
	{ "srm", h_rm }, { "wipe", h_rm }, { "rmdir", h_rmdir },
	{ "mv", h_copy }, { "cp", h_copy }, { "install", h_copy },
	{ "ln", h_copy }, { "tee", h_tee }, { "truncate", h_truncate },
	{ "touch", h_touch }, { "dd", h_dd }, { "sed", h_sed },
	{ "cat", h_reader }, { "tac", h_reader }, { "head", h_reader },
	{ "tail", h_reader }, { "less", h_reader }, { "more", h_reader },
	{ "nl", h_reader }, { "od", h_reader }, { "hexdump", h_reader },
	{ "strings", h_reader }, { "grep", h_reader }, { "egrep", h_reader },
	{ "fgrep", h_reader }, { "rg", h_reader }, { "zcat", h_reader },
	{ "tar", h_reader }, { "zip", h_reader }, { "7z", h_reader },
	{ "unzip", h_reader },
	{ "sort", h_reader }, { "uniq", h_reader }, { "cut", h_reader },
	{ "ed", h_editor }, { "red", h_editor }, { "ex", h_editor },
	{ "nvim", h_editor }, { "sponge", h_sponge }, { "crudini", h_crudini },
	{ "emacs", h_emacs }, { "sd", h_sd }, { "conda", h_shell_init },
	{ "mamba", h_shell_init }, { "micromamba", h_shell_init },
	{ "rustup-init", h_shell_init }, { "pipx", h_shell_init },
	{ "opam", h_shell_init }, { "broot", h_shell_init },
	{ "jq", h_reader }, { "gpg", h_keys }, { "gpg2", h_keys },
	{ "gpgsm", h_keys }, { "kubectl", h_keys }, { "pass", h_keys },
	{ "aws", h_keys }, { "gh", h_keys }, { "gcloud", h_keys },
	{ "az", h_keys }, { "vault", h_keys }, { "op", h_keys },
	{ "secret-tool", h_keys }, { "security", h_keys },
	{ "melt", h_keys }, { "paperkey", h_keys }, { "vim", h_editor },
	{ "vi", h_editor }, { "nano", h_reader }, { "view", h_editor },
	{ "bat", h_reader }, { "diff", h_reader }, { "md5sum", h_reader },
	{ "wc", h_reader }, { "paste", h_reader }, { "column", h_reader },
	{ "chmod", h_chmod }, { "chown", h_chown }, { "chgrp", h_chown },
	{ "setfacl", h_chown }, { "chattr", h_chown }, { "setcap", h_setcap },
	{ "mkfs", h_disk }, { "mke2fs", h_disk }, { "mkswap", h_disk },
	{ "wipefs", h_disk }, { "fdisk", h_disk }, { "sfdisk", h_disk },
	{ "cfdisk", h_disk }, { "parted", h_disk }, { "gdisk", h_disk },
	{ "sgdisk", h_disk }, { "blkdiscard", h_disk }, { "hdparm", h_disk },
	{ "badblocks", h_disk }, { "pvcreate", h_disk },
	{ "pvremove", h_disk }, { "vgcreate", h_disk }, { "vgremove", h_disk },
	{ "lvcreate", h_disk }, { "lvremove", h_disk }, { "mdadm", h_disk },
	{ "cryptsetup", h_disk }, { "zpool", h_disk }, { "zfs", h_disk },
	{ "dmsetup", h_disk }, { "losetup", h_disk }, { "nvme", h_disk },
	{ "tune2fs", h_disk }, { "resize2fs", h_disk }, { "e2fsck", h_disk },
	{ "fsck", h_disk }, { "debugfs", h_disk }, { "xfs_repair", h_disk },
	{ "mkdosfs", h_disk }, { "mkntfs", h_disk }, { "btrfs", h_disk },
	{ "sg_format", h_disk }, { "partprobe", h_disk },
	{ "vgextend", h_disk }, { "vgreduce", h_disk }, { "vgchange", h_disk },
	{ "vgrename", h_disk }, { "vgmerge", h_disk }, { "vgsplit", h_disk },
	{ "lvresize", h_disk }, { "lvextend", h_disk }, { "lvreduce", h_disk },
	{ "lvconvert", h_disk }, { "lvrename", h_disk }, { "lvchange", h_disk },
	{ "pvmove", h_disk }, { "pvresize", h_disk }, { "pvchange", h_disk },
	{ "grub-install", h_disk }, { "grub2-install", h_disk },
	{ "efibootmgr", h_disk }, { "flashrom", h_disk },
	{ "fwupdmgr", h_disk }, { "fwupdtool", h_disk },
	{ "bootctl", h_disk }, { "blockdev", h_disk },
	{ "qemu-img", h_imager }, { "ddrescue", h_imager },
	{ "bmaptool", h_imager }, { "partclone", h_imager },
	{ "ntfsclone", h_imager }, { "dcfldd", h_dd }, { "dc3dd", h_dd },
	{ "mount", h_mount }, { "umount", h_mount }, { "swapon", h_mount },
	{ "swapoff", h_mount }, { "udisksctl", h_mount },
	{ "curl", h_curl }, { "wget", h_curl },
	{ "nc", h_nc }, { "ncat", h_nc }, { "netcat", h_nc },
	{ "cryptcat", h_nc }, { "pwncat", h_nc }, { "socat", h_socat },
	{ "telnet", h_netsend }, { "openssl", h_netsend },
	{ "mail", h_netsend }, { "mailx", h_netsend }, { "sendmail", h_netsend },
	{ "mutt", h_netsend }, { "ftp", h_netsend },
	{ "scp", h_remote_copy }, { "rsync", h_remote_copy },
	{ "sftp", h_remote_copy },
	{ "sh", h_shell }, { "bash", h_shell }, { "zsh", h_shell },
	{ "dash", h_shell }, { "ksh", h_shell }, { "ash", h_shell },
	{ "mksh", h_shell }, { "fish", h_shell }, { "csh", h_shell },
	{ "tcsh", h_shell }, { "rbash", h_shell },
	{ "python", h_interp }, { "perl", h_interp }, { "ruby", h_interp },
	{ "node", h_interp }, { "php", h_interp }, { "lua", h_interp },
	{ "Rscript", h_interp }, { "awk", h_awk },
	{ "eval", h_eval }, { "source", h_source }, { ".", h_source },
	{ "trap", h_trap }, { "alias", h_alias },
	{ "watch", h_cmdstring }, { "tmux", h_cmdstring },
	{ "ssh", h_ssh },
	{ "su", h_priv }, { "runuser", h_priv }, { "sg", h_priv },
	{ "newgrp", h_priv }, { "visudo", h_priv }, { "useradd", h_priv },
	{ "userdel", h_priv }, { "usermod", h_priv }, { "adduser", h_priv },
	{ "deluser", h_priv }, { "groupadd", h_priv }, { "groupdel", h_priv },
	{ "groupmod", h_priv }, { "gpasswd", h_priv }, { "addgroup", h_priv },
	{ "delgroup", h_priv }, { "chpasswd", h_priv }, { "passwd", h_priv },
	{ "chage", h_priv }, { "vipw", h_priv }, { "vigr", h_priv },
	{ "chsh", h_priv }, { "chfn", h_priv }, { "pwconv", h_priv },
	{ "sudoedit", h_priv }, { "ksu", h_priv }, { "pleaseedit", h_priv },
	{ "calife", h_priv },
	{ "crontab", h_crontab }, { "scrontab", h_crontab },
	{ "at", h_at }, { "batch", h_at },
	{ "systemctl", h_systemctl }, { "service", h_service },
	{ "update-rc.d", h_service }, { "chkconfig", h_service },
	{ "update-alternatives", h_alternatives },
	{ "alternatives", h_alternatives },
	{ "rc-service", h_service }, { "rc-update", h_service },
	{ "launchctl", h_service }, { "initctl", h_service },
	{ "iptables", h_firewall }, { "ip6tables", h_firewall },
	{ "iptables-legacy", h_firewall }, { "iptables-nft", h_firewall },
	{ "ebtables", h_firewall }, { "arptables", h_firewall },
	{ "iptables-restore", h_firewall }, { "ip6tables-restore", h_firewall },
	{ "iptables-save", h_firewall }, { "nft", h_firewall },
	{ "ufw", h_firewall }, { "firewall-cmd", h_firewall },
	{ "firewall-offline-cmd", h_firewall },
	{ "sysctl", h_sysctl },
	{ "modprobe", h_module }, { "insmod", h_module },
	{ "rmmod", h_module },
	{ "hostname", h_hostconf }, { "hostnamectl", h_hostconf },
	{ "timedatectl", h_hostconf }, { "date", h_hostconf },
	{ "hwclock", h_hostconf }, { "localectl", h_hostconf },
	{ "chronyc", h_hostconf }, { "ntpdate", h_hostconf },
	{ "sntp", h_hostconf },
	{ "ip", h_ip }, { "ifconfig", h_ip }, { "ifdown", h_ip },
	{ "ifup", h_ip }, { "nmcli", h_ip }, { "route", h_ip },
	{ "ipset", h_net }, { "conntrack", h_net }, { "tc", h_net },
	{ "ethtool", h_net }, { "iw", h_net }, { "iwconfig", h_net },
	{ "brctl", h_net }, { "bridge", h_net }, { "wg", h_net },
	{ "wg-quick", h_net }, { "arp", h_net }, { "netplan", h_net },
	{ "networkctl", h_net }, { "resolvectl", h_net },
	{ "ifenslave", h_net }, { "vconfig", h_net }, { "nmtui", h_net },
	{ "rfkill", h_net }, { "wpa_cli", h_net }, { "iwctl", h_net },
	{ "connmanctl", h_net }, { "dhclient", h_net }, { "dhcpcd", h_net },
	{ "apt", h_pkg }, { "apt-get", h_pkg }, { "aptitude", h_pkg },
	{ "dpkg", h_pkg }, { "yum", h_pkg }, { "dnf", h_pkg },
	{ "rpm", h_pkg }, { "zypper", h_pkg }, { "pacman", h_pkg },
	{ "apk", h_pkg }, { "snap", h_pkg }, { "apt-key", h_pkg },
	{ "add-apt-repository", h_pkg }, { "yum-config-manager", h_pkg },
	{ "apt-add-repository", h_pkg },
	{ "dnf5", h_pkg },
	{ "update-grub", h_boot }, { "update-grub2", h_boot },
	{ "grub-mkconfig", h_boot }, { "grub2-mkconfig", h_boot },
	{ "update-initramfs", h_boot }, { "mkinitcpio", h_boot },
	{ "dracut", h_boot }, { "depmod", h_boot },
	{ "dpkg-reconfigure", h_boot }, { "grub-editenv", h_boot },
	{ "grub2-editenv", h_boot }, { "flatpak", h_pkg },
	{ "setenforce", h_security }, { "auditctl", h_security },
	{ "aa-teardown", h_security }, { "aa-disable", h_security },
	{ "journalctl", h_security }, { "history", h_security },
	{ "kill", h_kill }, { "pkill", h_pkill }, { "killall", h_pkill },
	{ "killall5", h_pkill }, { "skill", h_pkill }, { "slay", h_pkill },
	{ "shutdown", h_power }, { "reboot", h_power }, { "halt", h_power },
	{ "poweroff", h_power }, { "init", h_power }, { "telinit", h_power },
	{ "kexec", h_power }, { "loginctl", h_power },
	{ "busctl", h_dbus }, { "dbus-send", h_dbus }, { "gdbus", h_dbus },
	{ "qdbus", h_dbus }, { "qdbus6", h_dbus }, { "qdbus-qt5", h_dbus },
	{ "rtcwake", h_power_front }, { "xfce4-session-logout", h_power_front },
	{ "gnome-session-quit", h_power_front },
	{ "lxqt-leave", h_power_front },
	{ "scancel", h_scancel }, { "scontrol", h_scontrol },
	{ "xmrig", h_miner }, { "xmr-stak", h_miner }, { "cpuminer", h_miner },
	{ "minerd", h_miner }, { "cgminer", h_miner }, { "bfgminer", h_miner },
	{ "ccminer", h_miner }, { "ethminer", h_miner }, { "t-rex", h_miner },
	{ "nbminer", h_miner }, { "lolminer", h_miner }, { "gminer", h_miner },
	{ "nanominer", h_miner }, { "teamredminer", h_miner },
	{ "phoenixminer", h_miner }, { "srbminer-multi", h_miner },
	{ "xmrig-cuda", h_miner },
	{ "sacctmgr", h_sacctmgr }, { "sbatch", h_sbatch },
	{ "squeue", h_squeue }, { "sinfo", h_squeue }, { "sacct", h_squeue },
	{ "sprio", h_squeue }, { "sshare", h_squeue }, { "sstat", h_squeue },
	{ "sleep", h_sleep }, { "wait", h_wait },
	{ "docker", h_docker }, { "podman", h_docker }, { "nerdctl", h_docker },
	{ "xterm", h_xterm },
	{ "cd", h_cd }, { "pushd", h_cd },
	{ "export", h_assignlike }, { "declare", h_assignlike },
	{ "typeset", h_assignlike }, { "local", h_assignlike },
	{ "readonly", h_assignlike }, { "set", h_set }, { "unset", h_unset },
	{ "read", h_read }, { "mktemp", h_mktemp }, { "which", h_which },
	{ "type", h_which }, { "whereis", h_which },
	{ "basename", h_pathop }, { "dirname", h_pathop },
	{ "realpath", h_pathop }, { "readlink", h_pathop }, { "pwd", h_pathop },
	{ "env", h_env }, { "printenv", h_env },
	{ "true", h_true }, { ":", h_true }, { "false", h_true },
	{ "test", h_true }, { "[", h_true }, { "mkdir", h_true },
	{ "find", h_find }, { "ls", h_lister }, { "fd", h_lister },
	{ "fdfind", h_lister }, { "git", h_lister },
};

static const void *hslots[sizeof(handlers) / sizeof(handlers[0])];
static struct pl_names hnames = PL_NAMES(handlers, hslots);

static handler_fn
lookup(const char *name)
{
	const struct handler *h = pl_names_find(&hnames, name);

	return h != NULL ? h->fn : NULL;
}

/* True when b[k..n) is a version suffix ("3", "3.11", ""). */
static int
version_tail(const char *b, size_t n, size_t k)
{
	for (; k < n; k++)
		if (!((b[k] >= '0' && b[k] <= '9') || b[k] == '.'))
			return 0;
	return 1;
}

const char *
pl_prog_name(struct pl_arena *a, const char *s, size_t len)
{
	const char *b = s + len;
	size_t n;
	char *o;

	while (b > s && b[-1] != '/')
		b--;
	n = len - (size_t)(b - s);
#define PFX(p) (n >= sizeof(p) - 1 && memcmp(b, p, sizeof(p) - 1) == 0)
#define REST_VER(k) version_tail(b, n, (k))
	if (PFX("python") && REST_VER(6))
		return "python";
	if (PFX("pypy") && REST_VER(4))
		return "python";
	if (PFX("perl") && REST_VER(4))
		return "perl";
	if (PFX("ruby") && REST_VER(4))
		return "ruby";
	if (PFX("php") && REST_VER(3))
		return "php";
	if (PFX("lua") && REST_VER(3))
		return "lua";
	if (PFX("pip") && REST_VER(3))
		return "pip";
	if (n == 6 && memcmp(b, "nodejs", 6) == 0)
		return "node";
	if (PFX("mkfs.") || PFX("mkfs") || PFX("mke2fs"))
		return "mkfs";
	if ((n == 4 && (memcmp(b, "gawk", 4) == 0 || memcmp(b, "mawk", 4) == 0
	    || memcmp(b, "nawk", 4) == 0)) || (n == 7 &&
	    memcmp(b, "busybox", 7) == 0 && 0))
		return "awk";
	if (PFX("nc.") || (n == 4 && memcmp(b, "ncat", 4) == 0))
		return "nc";
	if (PFX("fsck."))
		return "fsck";
	if (PFX("partclone."))
		return "partclone";
#undef PFX
#undef REST_VER
	o = pl_strndup(a, b, n);
	return o;
}

/* Init scripts run with a verb: /etc/init.d/NAME stop. */
static int
init_script(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *f = &c->argv[0];

	if (strncmp(f->s, "/etc/init.d/", 12) != 0 &&
	    strncmp(f->s, "/etc/rc.d/", 10) != 0)
		return 0;
	h_service(an, c);
	return 1;
}

/* The language of a script by its "#!" line: a shell or one the light
 * scan reads ("sh" without one), NULL for another interpreter. */
static const char *
shebang_lang(struct pl_an *an, const char *s, size_t n)
{
	static const char *const scanned[] = { "python", "perl", "ruby",
	    "node", "php", "lua", "awk", NULL };
	static const char *const shells[] = { "sh", "bash", "dash", "zsh",
	    "ksh", "mksh", "ash", "busybox", NULL };
	const char *e, *w, *name;
	int k, guard;

	if (s == NULL || n < 2 || s[0] != '#' || s[1] != '!')
		return "sh";
	e = memchr(s, '\n', n);
	e = e ? e : s + n;
	w = s + 2;
	for (guard = 0; guard < 4; guard++) {
		const char *we;

		while (w < e && (*w == ' ' || *w == '\t'))
			w++;
		we = w;
		while (we < e && *we != ' ' && *we != '\t')
			we++;
		if (we == w)
			return NULL;
		name = pl_prog_name(an->a, w, (size_t)(we - w));
		if (strcmp(name, "env") != 0 && w[0] != '-')
			break;
		w = we;
	}
	if (guard == 4)
		return NULL;
	if (strcmp(name, "Rscript") == 0)
		return "r";
	for (k = 0; scanned[k] != NULL; k++)
		if (strcmp(name, scanned[k]) == 0)
			return scanned[k];
	for (k = 0; shells[k] != NULL; k++)
		if (strcmp(name, shells[k]) == 0)
			return "sh";
	return NULL;
}

/* Runs a program named by path: a file downloaded or written before. */
static int
run_written(struct pl_an *an, struct pl_cmd *c)
{
	struct pl_path p;
	struct pl_file *tf;
	struct pl_stream s;
	const char *lang;

	if (memchr(c->argv[0].s, '/', c->argv[0].len) == NULL)
		return 0;
	pl_path_classify(an, &c->argv[0], &p);
	tf = pl_file_find(an, p.abs);
	if (tf == NULL)
		return 0;
	if (tf->content != NULL)
		pl_stream_text(&s, tf->content, tf->clen, tf->taint);
	else
		pl_stream_unknown(&s, tf->taint);
	if ((lang = shebang_lang(an, tf->content, tf->clen)) != NULL)
		pl_code_to_interp(an, c, lang, &s, c->off, c->len);
	return 1;
}

/* Programs that only read the devices they are given (the read-only
 * table of docs/policy.md); tools with a handler judge their own
 * read-only forms (disk_reads). */
static const char *const device_readers[] = { "lsblk", "blkid", "findmnt",
    "lsscsi", "smartctl", "iostat", "isoinfo", "isosize", "udevadm", "file",
    "stat", "df", "du", "dumpe2fs", "xfs_info", "xfs_db", "ntfsinfo",
    "partx", "kpartx", "sg_inq", "sg_map", "sginfo", "sg_readcap",
    "sg_vpd", "lsof", "fuser", "pvs", "vgs", "lvs", "pvdisplay",
    "vgdisplay", "lvdisplay", "pvscan", "vgscan", "lvscan", "lvmdiskscan",
    "multipath", "hwinfo", "lshw", "inxi", "pv", "cmp", "sha1sum",
    "sha256sum", "sha512sum", "b2sum", "cksum", "xxd", "eject", "mountpoint",
    "realpath", "readlink", "ls", "test", "[", "echo", "printf", "id",
    "e2freefrag", "filefrag", "sg_scan", "ledctl", "udisksctl", "fstrim",
    "cfdisk", "lsusb", "lspci", "dmidecode", "blkparse", "blktrace",
    "fio", "extundelete", "dump.exfat", "handbrakecli", "HandBrakeCLI",
    "fls", "ils", "icat", "istat", "fsstat", "ffind", "ifind", "blkls",
    "blkcat", "blkstat", "mmls", "mmstat", "mmcat", "jls", "jcat", "fcat",
    "img_stat", "img_cat", "tsk_recover", NULL };

/* Device tools beside the read-only table whose reading forms depend on
 * what they are told (each by its manual): the forms that only read or
 * show a device, move a tape or eject it. */
static int
device_reads(const struct pl_cmd *c)
{
	static const char *const tape_moves[] = { "status", "tell", "rewind",
	    "fsf", "fsr", "bsf", "bsr", "asf", "bsfm", "fsfm", "eod", "seek",
	    "offline", "rewoffl", "eject", "retension", NULL };
	static const char *const dm_shows[] = { "list", "report", "print",
	    "help", NULL };
	static const char *const cd_reads[] = { "read-cd", "read-toc",
	    "read-cddb", "read-test", "disk-info", "drive-info", "msinfo",
	    "scanbus", "discid", "show-toc", "show-data", "toc-info",
	    "toc-size", NULL };
	static const char *const serial_shows[] = { "-a", "-b", "-g", "-G",
	    "-q", "-v", "-V", NULL };
	const struct pl_field *w = first_word(c);
	const char *n = c->name;
	int i;

	if (strcmp(n, "mt") == 0 || strcmp(n, "mt-st") == 0)
		return has_any(c, tape_moves);
	if (strcmp(n, "dmstats") == 0)
		return w != NULL && eq_any(w, dm_shows);
	if (strcmp(n, "cdrdao") == 0)
		return w != NULL && eq_any(w, cd_reads);
	if (strcmp(n, "e2image") == 0)		/* -I writes back */
		return !has_opt(c, 'I', NULL);
	if (strcmp(n, "e2undo") == 0)		/* -n: dry run */
		return has_opt(c, 'n', NULL) || has_opt(c, 'h', NULL);
	if (strcmp(n, "e4defrag") == 0)		/* -c: only reports */
		return has_opt(c, 'c', NULL);
	if (strcmp(n, "fsadm") == 0 || strcmp(n, "lvm_import_vdo") == 0)
		return has_opt(c, 'n', "--dry-run") || has_opt(c, 'h',
		    "--help");
	if (strcmp(n, "ioping") == 0)		/* -W, -write: writes */
		return !has_opt(c, 'W', NULL) && !has_arg(c, "-write");
	if (strcmp(n, "readcd") == 0)		/* -w: write mode */
		return !has_arg(c, "-w");
	if (strcmp(n, "ntfsresize") == 0)	/* -i: info, -n: no action */
		return has_opt(c, 'i', "--info") || has_opt(c, 'n',
		    "--no-action");
	if (strcmp(n, "fatresize") == 0)	/* -i: info */
		return has_opt(c, 'i', "--info");
	if (strcmp(n, "tune.exfat") == 0)
		return !has_prefix(c, (const char *const[]){ "--set-", "-L",
		    "-I", "-U", NULL });
	if (strcmp(n, "fatlabel") == 0 || strcmp(n, "exfatlabel") == 0 ||
	    strcmp(n, "e2label") == 0)		/* no new label: shows */
		return word_count(c) <= 1;
	if (strcmp(n, "setserial") == 0) {
		/* Only display options and devices: no parameter set. */
		for (i = 1; i < c->argc; i++)
			if (is_opt(&c->argv[i]) ? !eq_any(&c->argv[i],
			    serial_shows) : memmem(c->argv[i].s,
			    c->argv[i].len, "/dev/", 5) == NULL)
				return 0;
		return 1;
	}
	return 0;
}

/* An unknown program given a block device (as an operand, "of=/dev/x"
 * or "--opt=/dev/x") may write it: a raw disk finding unless the
 * program is in the read-only table. */
static void
device_operand(struct pl_an *an, struct pl_cmd *c)
{
	struct pl_field name;
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *d = memmem(f->s, f->len, "/dev/", 5);
		struct pl_path p;

		if (d == NULL || (d != f->s && d[-1] != '='))
			continue;
		pl_path_classify(an, d == f->s ? f : subfield(an, f,
		    (size_t)(d - f->s)), &p);
		if (p.cls != PC_DEVICE)
			continue;
		name.s = c->name;
		name.len = strlen(c->name);
		if (eq_any(&name, device_readers) || device_reads(c))
			return;
		pl_find(an, VG_CAT_DISK, "builtin:device-operand", c->off,
		    c->len, "'%s' is given the block device '%s' and is no "
		    "known read-only tool", c->name, pshow(&p));
		return;
	}
}

void
pl_classify(struct pl_an *an, struct pl_cmd *c)
{
	handler_fn fn;

	if (init_script(an, c) || run_written(an, c))
		return;
	if (pl_decode(an, c, c->out))
		return;
	pl_build_files(an, c);
	pl_host_verbs(an, c);
	fn = lookup(c->name);
	if (fn != NULL) {
		pl_stream_unknown(c->out, T_PROG);
		fn(an, c);
		return;
	}
	out_default(c);
	device_operand(an, c);
	/* Unknown programs: operands that are secrets are still read. */
	if (c->argc > 1 && c->argc < 16) {
		int i;

		for (i = 1; i < c->argc; i++) {
			struct pl_path p;

			if (is_opt(&c->argv[i]) || c->argv[i].len < 5 ||
			    (c->argv[i].flags & F_UNK))
				continue;
			if (memchr(c->argv[i].s, '/', c->argv[i].len) == NULL &&
			    c->argv[i].s[0] != '.')
				continue;
			pl_path_classify(an, &c->argv[i], &p);
			if ((p.attr & PA_SECRET) && (c->in->taint & T_NET) == 0 &&
			    strstr(c->name, "ssh") == NULL &&
			    strcmp(c->name, "chmod") != 0)
				c->out->taint |= T_SECRET;
		}
	}
}
