/*
 * classify-write.c - the classifier's handlers for programs that delete,
 * copy and write files: rm, cp/mv/install/ln, tee, truncate, touch, dd,
 * the readers (cat, grep, tar ...), the editors, sed and the installers
 * that edit shell start-up files.
 */
#include <string.h>

#include "runner/policy/arena.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"
#include "runner/policy/classify-int.h"

/* ---- deletion, copying, writing ---- */

void
pl_h_rm(struct pl_an *an, struct pl_cmd *c)
{
	int rec = pl_has_opt(c, 'r', "--recursive") || pl_has_opt(c, 'R', NULL);
	int dd = 0, i;

	if (pl_has_arg(c, "--no-preserve-root"))
		pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:no-preserve-root",
		    c->off, c->len, "'rm --no-preserve-root' disables the "
		    "safety check for '/'");
	if (strcmp(c->name, "shred") == 0 || strcmp(c->name, "srm") == 0 ||
	    strcmp(c->name, "wipe") == 0)
		rec = 1;
	for (i = 1; (i = pl_next_operand(c, i, "n", &dd)) < c->argc; i++)
		pl_delete_target(an, c, &c->argv[i], rec);
	pl_stream_text(c->out, "", 0, 0);
}

void
pl_h_rmdir(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = pl_next_operand(c, i, NULL, &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_PROTECTED && !(p.attr & PA_UNRESOLVED) &&
		    (p.attr & (PA_ROOT | PA_HOME | PA_SYSBIN | PA_ETC)))
			pl_delete_target(an, c, &c->argv[i], 0);
	}
}

/* Classifies the destination of a copy: a directory receives a new
 * entry, so "cp x ~/" writes into the home, not over it. */
void
pl_write_dest(struct pl_an *an, const struct pl_field *dest, const char *why)
{
	struct pl_path p;
	struct pl_field child;
	char *s;

	pl_path_classify(an, dest, &p);
	if (dest->len > 0 && (dest->s[dest->len - 1] == '/' ||
	    pl_eq(dest, ".") || pl_eq(dest, "..") || (p.cls == PC_PROTECTED &&
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
void
pl_h_copy(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *dest = pl_opt_val(an, c, 't',
	    "--target-directory");
	int ops[64], nops = 0, dd = 0, i, last;
	int mv = strcmp(c->name, "mv") == 0, ln = strcmp(c->name, "ln") == 0;
	const char *shortargs = ln ? "S" : "STm";

	if (strcmp(c->name, "install") == 0) {
		const struct pl_field *m = pl_opt_val(an, c, 'm', "--mode");
		int setid = 0;

		shortargs = "mgoStTb";
		if (m != NULL && (pl_mode_loosens(m->s, &setid, 0) || 1) &&
		    setid)
			pl_find(an, VG_CAT_PERMISSIONS, "builtin:setuid", c->off,
			    c->len, "'install -m %s' creates a setuid/setgid "
			    "file", m->s);
	}
	for (i = 1; (i = pl_next_operand(c, i, shortargs, &dd)) < c->argc &&
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
			pl_secret_read(an, c, &p);
			continue;
		}
		if (mv && p.cls == PC_PROTECTED && !(p.attr & PA_UNRESOLVED))
			pl_find_floor(an, pl_path_top(an, &p) ?
			    PL_FLOOR_DELETE : NULL, VG_CAT_DESTRUCTIVE,
			    "builtin:mv-protected",
			    c->off, c->len, "'mv' moves the protected path "
			    "'%s' away", pl_pshow(&p));
		if (mv && p.cls == PC_DEVICE)
			pl_find(an, VG_CAT_DISK, "builtin:mv-device", c->off,
			    c->len, "'mv' moves the device '%s'", pl_pshow(&p));
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
	pl_write_dest(an, dest, c->name);
}

void
pl_h_tee(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, app = pl_has_opt(c, 'a', "--append");

	for (i = 1; (i = pl_next_operand(c, i, NULL, &dd)) < c->argc; i++)
		pl_classify_write(an, &c->argv[i], app, "'tee'");
	*c->out = *c->in;
	for (i = 1; i < c->argc; i++) {
		struct pl_path p;

		if (pl_is_opt(&c->argv[i]))
			continue;
		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls != PC_SPECIAL && p.abs != NULL)
			pl_file_note(an, p.abs, c->in->taint, c->in->known ?
			    c->in->s : NULL, c->in->len);
	}
}

void
pl_h_truncate(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = pl_next_operand(c, i, "sor", &dd)) < c->argc; i++)
		pl_classify_write(an, &c->argv[i], 0, "'truncate'");
}

void
pl_h_touch(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i;

	for (i = 1; (i = pl_next_operand(c, i, "dtr", &dd)) < c->argc; i++) {
		struct pl_path p;

		pl_path_classify(an, &c->argv[i], &p);
		if (p.cls == PC_PROTECTED && (p.attr & (PA_ETC | PA_CRON |
		    PA_SUDOERS | PA_PRELOAD | PA_SYSBIN)))
			pl_classify_write(an, &c->argv[i], 1, "'touch'");
	}
}

void
pl_h_dd(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (strncmp(f->s, "of=", 3) == 0)
			pl_classify_write(an, pl_subfield(an, f, 3), 0, "'dd'");
		if (strncmp(f->s, "if=", 3) == 0) {
			struct pl_path p;

			pl_path_classify(an, pl_subfield(an, f, 3), &p);
			if (p.attr & PA_SECRET)
				pl_secret_read(an, c, &p);
		}
	}
	pl_out_default(c);
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
void
pl_h_reader(struct pl_an *an, struct pl_cmd *c)
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
	pl_out_default(c);
	if (strcmp(c->name, "gpg") == 0 &&
	    (pl_has_arg(c, "--export-secret-keys") ||
	    pl_has_arg(c, "--export-secret-subkeys"))) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:secret-read", c->off,
		    c->len, "'gpg' exports private keys");
		c->out->taint |= T_SECRET;
	}
	for (i = 1; (i = pl_next_operand(c, i, sa, &dd)) < c->argc; i++) {
		struct pl_path p;
		struct pl_file *tf;

		nops++;
		pl_path_classify(an, &c->argv[i], &p);
		if (p.attr & PA_SECRET) {
			pl_secret_read(an, c, &p);
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
		const struct pl_field *dir = pl_opt_val(an, c, 'C',
		    "--directory");

		if (dir != NULL && (pl_has_opt(c, 'x', "--extract") ||
		    (c->argc > 1 && c->argv[1].s[0] != '-' &&
		    memchr(c->argv[1].s, 'x', c->argv[1].len))))
			extract_into(an, dir, "'tar -x'");
	}
	if (strcmp(c->name, "unzip") == 0 && !pl_has_opt(c, 'l', NULL) &&
	    !pl_has_opt(c, 't', NULL) && !pl_has_opt(c, 'Z', NULL)) {
		const struct pl_field *dir = pl_opt_val(an, c, 'd', NULL);

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
void
pl_h_editor(struct pl_an *an, struct pl_cmd *c)
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

		if (pl_eq(f, "-R") || pl_eq(f, "-M") || pl_eq(f, "--help") ||
		    pl_eq(f, "--version"))
			ro = 1;
		if (f->s[0] == '+' || pl_eq(f, "-c") || pl_eq(f, "--cmd") ||
		    pl_eq(f, "-S") || pl_eq(f, "--headless") ||
		    pl_eq(f, "-es") || pl_eq(f, "-Es") || pl_eq(f, "-e") ||
		    pl_eq(f, "-E") || (pl_eq(f, "-s") && !ed) ||
		    (f->s[0] == '-' && f->s[1] != '-' &&
		    strchr(f->s, 'c') != NULL && ed))
			scripted = 1;
	}
	if (!scripted || ro) {
		pl_h_reader(an, c);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "--"))
			continue;
		if (pl_is_opt(f) || f->s[0] == '+') {
			if (pl_eq_any(f, valued) && !(ed && pl_eq(f, "-s")))
				i++;
			continue;
		}
		pl_classify_write(an, f, 0, n);
	}
	pl_out_default(c);
}

/* emacs in batch mode (--batch, -batch, --script) with code to run
 * (--eval, -f, -l, --script, ...) may save the files it visits: its file
 * operands and --file/--visit/--find-file values are judged as writes.
 * An interactive emacs (no code) is only a reader. */
void
pl_h_emacs(struct pl_an *an, struct pl_cmd *c)
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

		if (pl_eq(f, "--batch") || pl_eq(f, "-batch") ||
		    pl_eq(f, "--script") || pl_eq(f, "-script"))
			batch = 1;
		if (pl_eq_any(f, code))
			runs = 1;
	}
	if (!batch || !runs) {
		pl_h_reader(an, c);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq_any(f, code) || pl_eq_any(f, valued)) {
			i++;
			continue;
		}
		if (pl_eq_any(f, visit) && i + 1 < c->argc) {
			pl_classify_write(an, &c->argv[++i], 0, "'emacs'");
			continue;
		}
		if (pl_is_opt(f) || f->s[0] == '+')
			continue;
		pl_classify_write(an, f, 0, "'emacs'");
	}
	pl_out_default(c);
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

void
pl_h_shell_init(struct pl_an *an, struct pl_cmd *c)
{
	const struct rc_editor *r = NULL;
	size_t k;
	int i = 1;

	for (k = 0; k < sizeof(rc_editors) / sizeof(rc_editors[0]); k++)
		if (strcmp(rc_editors[k].name, c->name) == 0)
			r = &rc_editors[k];
	if (r == NULL || pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    (r->keep != NULL && pl_has_any(c, r->keep)))
		return;
	if (r->verb != NULL && (i >= c->argc || !pl_eq(&c->argv[i++], r->verb)))
		return;
	if (r->verb2 != NULL && (i >= c->argc || !pl_eq_any(&c->argv[i++],
	    r->verb2)))
		return;
	if (r->opt != NULL && !pl_has_arg(c, r->opt))
		return;
	pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-startup", c->off, c->len,
	    "'%s%s%s%s%s' edits the shell's start-up files (~/.bashrc and "
	    "the like)", c->name, r->verb != NULL ? " " : "", r->verb != NULL ?
	    r->verb : "", r->verb2 != NULL ? " " : "", r->verb2 != NULL ?
	    c->argv[i - 1].s : "");
}

/* sd FIND REPLACE FILE...: replaces in its files in place unless
 * -p/--preview prints the result instead. */
void
pl_h_sd(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, nop = 0;

	if (pl_has_opt(c, 'p', "--preview") || pl_has_arg(c, "--help") ||
	    pl_has_arg(c, "-h") || pl_has_arg(c, "--version"))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (!dd && pl_eq(f, "--")) {
			dd = 1;
			continue;
		}
		if (!dd && pl_is_opt(f)) {
			if (pl_eq(f, "-n") || pl_eq(f, "-f") ||
			    pl_eq(f, "--max-replacements") ||
			    pl_eq(f, "--flags"))
				i++;
			continue;
		}
		if (++nop > 2)
			pl_classify_write(an, f, 0, "'sd'");
	}
	pl_out_default(c);
}

/* sponge FILE: soaks stdin up, then writes FILE. */
void
pl_h_sponge(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = pl_next_operand(c, 1, NULL, &dd);

	if (i < c->argc)
		pl_classify_write(an, &c->argv[i], pl_has_opt(c, 'a', NULL),
		    "'sponge'");
}

/* crudini --set/--del/--merge FILE ...: edits FILE in place. */
void
pl_h_crudini(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const edits[] = { "--set", "--del", "--merge",
	    NULL };
	int i;

	for (i = 1; i + 1 < c->argc; i++)
		if (pl_eq_any(&c->argv[i], edits)) {
			int k = i + 1;

			while (k < c->argc && pl_is_opt(&c->argv[k]))
				k++;
			if (k < c->argc)
				pl_classify_write(an, &c->argv[k], 0,
				    "'crudini'");
			return;
		}
}

void
pl_h_sed(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, script = 1, inplace = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (strncmp(f->s, "-i", 2) == 0 ||
		    strncmp(f->s, "--in-place", 10) == 0 ||
		    (pl_is_opt(f) && f->s[1] != '-' &&
		    memchr(f->s, 'i', f->len)))
			inplace = 1;
		if (pl_eq(f, "-e") || pl_eq(f, "-f") ||
		    strncmp(f->s, "--expression", 12) == 0)
			script = 0;
	}
	pl_out_default(c);
	for (i = 1; (i = pl_next_operand(c, i, "ef", &dd)) < c->argc; i++) {
		struct pl_path p;

		if (script) {
			script = 0;
			continue;
		}
		pl_path_classify(an, &c->argv[i], &p);
		if (p.attr & PA_SECRET)
			pl_secret_read(an, c, &p);
		if (inplace)
			pl_classify_write(an, &c->argv[i], 0, "'sed -i'");
	}
}
