/*
 * classify-code.c - the classifier's handlers for interpreters and
 * nested code: shells and the code they run (-c strings, scripts, their
 * input), other interpreters, awk, eval, source, trap, alias, programs
 * that take a command string, and ssh's remote command.
 */
#include <string.h>

#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/nested.h"
#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

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
void
pl_shell_code(struct pl_an *an, struct pl_cmd *c, const struct pl_field *code,
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
	if (pl_eq(f, "/dev/stdin") || pl_eq(f, "-")) {
		pl_code_to_interp(an, c, lang, c->in, c->off, c->len);
		return 1;
	}
	if (pl_written_file(an, f, &s) == NULL)
		return 0;
	pl_code_to_interp(an, c, lang, &s, f->off, f->slen);
	return 1;
}

void
pl_h_shell(struct pl_an *an, struct pl_cmd *c)
{
	int i, cflag = 0, reads_stdin = 1, interactive = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "--")) {
			i++;
			break;
		}
		if (f->len > 1 && (f->s[0] == '-' || f->s[0] == '+') &&
		    !(f->flags & F_UNK)) {
			if (f->s[1] == '-') {
				if (pl_eq(f, "--rcfile") ||
				    pl_eq(f, "--init-file"))
					i++;
				continue;
			}
			if (memchr(f->s, 'c', f->len))
				cflag = 1;
			if (memchr(f->s, 'i', f->len))
				interactive = 1;
			if (pl_eq(f, "-o") || pl_eq(f, "+o") ||
			    pl_eq(f, "-O") || pl_eq(f, "+O"))
				i++;
			continue;
		}
		break;
	}
	if (cflag) {
		if (i < c->argc)
			pl_shell_code(an, c, &c->argv[i], i);
		pl_stream_unknown(c->out, T_PROG);
		return;
	}
	if (i < c->argc && !pl_has_opt(c, 's', NULL)) {
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

		if (!pl_is_opt(f) || pl_eq(f, "--"))
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

void
pl_h_interp(struct pl_an *an, struct pl_cmd *c)
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

		if (!pl_is_opt(f) || pl_eq(f, "-")) {
			if (!code && !script) {
				script = 1;
				if (!script_file(an, c, f, lang) &&
				    pl_eq(f, "-"))
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
		if ((strcmp(lang, "python") == 0 && pl_eq(f, "-c")) ||
		    ((strcmp(lang, "perl") == 0 || strcmp(lang, "ruby") == 0 ||
		    strcmp(lang, "lua") == 0 || strcmp(lang, "r") == 0) &&
		    (pl_eq(f, "-e") || pl_eq(f, "-E"))) ||
		    (strcmp(lang, "perl") == 0 && s[1] != '-' &&
		    (s[f->len - 1] == 'e' || s[f->len - 1] == 'E') &&
		    strspn(s + 1, "lnpaswTtUWXc0123456789") == f->len - 2) ||
		    (strcmp(lang, "ruby") == 0 && s[1] != '-' && f->len > 2 &&
		    s[f->len - 1] == 'e' &&
		    strspn(s + 1, "alnpswdvcyW0123456789") == f->len - 2) ||
		    (strcmp(lang, "node") == 0 &&
		    (pl_eq(f, "-e") || pl_eq(f, "--eval") || pl_eq(f, "-p") ||
		    pl_eq(f, "--print"))) ||
		    (strcmp(lang, "php") == 0 && pl_eq(f, "-r"))) {
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
		if (strcmp(lang, "python") == 0 && (pl_eq(f, "-m") ||
		    strncmp(s, "-m", 2) == 0)) {
			script = 1;
			break;
		}
		if (pl_eq(f, "-W") || pl_eq(f, "-X") || pl_eq(f, "-I") ||
		    pl_eq(f, "-r") || pl_eq(f, "-M") || pl_eq(f, "--require") ||
		    pl_eq(f, "-x") || pl_eq(f, "-f") || pl_eq(f, "-F") ||
		    pl_eq(f, "-v"))
			i++;
	}
	if (!code && !script)
		pl_code_to_interp(an, c, lang, c->in, c->off, c->len);
	if (!code && !script)
		pl_stream_unknown(c->out, T_PROG | T_SHELL);
	else
		pl_stream_unknown(c->out, T_PROG);
}

void
pl_h_awk(struct pl_an *an, struct pl_cmd *c)
{
	int i, inplace = 0, progfile = 0;

	pl_out_default(c);
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		/* awk -f FILE: the program is in FILE, every operand is
		 * input. */
		if ((pl_eq(f, "-f") || pl_eq(f, "--file")) && i + 1 < c->argc) {
			script_file(an, c, &c->argv[i + 1], "awk");
			progfile = 1;
		}
		if (progfile && !pl_is_opt(f) &&
		    !pl_eq(&c->argv[i - 1], "-f") &&
		    !pl_eq(&c->argv[i - 1], "--file"))
			continue;

		/* gawk -i inplace (also --include=inplace, -iinplace)
		 * rewrites its file operands. */
		if ((pl_eq(f, "-i") || pl_eq(f, "--include")) &&
		    i + 1 < c->argc && (pl_eq(&c->argv[i + 1], "inplace") ||
		    pl_eq(&c->argv[i + 1], "inplace.awk")))
			inplace = 1;
		if (pl_eq(f, "-iinplace") || pl_eq(f, "--include=inplace"))
			inplace = 1;
		if (pl_eq(f, "-F") || pl_eq(f, "-v") || pl_eq(f, "-f") ||
		    pl_eq(f, "-e") || pl_eq(f, "--file") ||
		    pl_eq(f, "--assign") || pl_eq(f, "-i") ||
		    pl_eq(f, "--include")) {
			i++;
			continue;
		}
		if (pl_is_opt(f))
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

			if (inplace && !pl_is_opt(&c->argv[i]) &&
			    memchr(c->argv[i].s, '=', c->argv[i].len) == NULL) {
				pl_classify_write(an, &c->argv[i], 0,
				    "'awk -i inplace'");
				continue;
			}
			pl_path_classify(an, &c->argv[i], &p);
			if (p.attr & PA_SECRET)
				pl_secret_read(an, c, &p);
		}
		break;
	}
}

void
pl_h_eval(struct pl_an *an, struct pl_cmd *c)
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
	pl_shell_code(an, c, &f, c->argc);
	*c->out = *c->out;
}

void
pl_h_source(struct pl_an *an, struct pl_cmd *c)
{
	if (c->argc < 2)
		return;
	script_file(an, c, &c->argv[1], "sh");
	pl_stream_unknown(c->out, T_PROG);
}

void
pl_h_trap(struct pl_an *an, struct pl_cmd *c)
{
	if (c->argc >= 3 && !pl_is_opt(&c->argv[1]))
		pl_shell_code(an, c, &c->argv[1], c->argc);
}

void
pl_h_alias(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *eqs = memchr(c->argv[i].s, '=', c->argv[i].len);
		struct pl_field f;

		if (eqs == NULL)
			continue;
		f = *pl_subfield(an, &c->argv[i],
		    (size_t)(eqs - c->argv[i].s) + 1);
		pl_shell_code(an, c, &f, c->argc);
	}
}

/* watch, tmux, screen: a command given as words or one string. */
void
pl_h_cmdstring(struct pl_an *an, struct pl_cmd *c)
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
				if (pl_eq(&c->argv[i], subs[k]))
					found = 1;
		if (!found)
			return;
		while (i < c->argc && pl_is_opt(&c->argv[i])) {
			const char *s = c->argv[i].s;

			if (strchr("stncFxyeEP", s[1]) != NULL && s[2] == '\0')
				i++;
			i++;
		}
	} else {
		while (i < c->argc && pl_is_opt(&c->argv[i])) {
			if (pl_eq(&c->argv[i], "-x") ||
			    pl_eq(&c->argv[i], "--exec"))
				exec = 1;
			if (pl_eq(&c->argv[i], "-n") ||
			    pl_eq(&c->argv[i], "--interval"))
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
		if (pl_eq(&c->argv[k], "Enter") || pl_eq(&c->argv[k], "C-m"))
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
	pl_shell_code(an, c, &f, c->argc);
}

void
pl_h_ssh(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = pl_next_operand(c, 1, "bcDEeFIiJLlmOopQRSWwB", &dd);

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
		pl_shell_code(an, c, &f, c->argc);
	}
	pl_stream_unknown(c->out, T_PROG | T_NET);
}
