/*
 * classify-shell.c - the classifier's handlers for the state the shell
 * keeps (cd, variables set by read, set, unset, export, mktemp, which)
 * and for env, wait, true, find and the listers.
 */
#include <string.h>

#include "runner/policy/optrun.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

/* ---- shell state ---- */

void
pl_h_cd(struct pl_an *an, struct pl_cmd *c)
{
	int i = 1;

	while (i < c->argc && pl_is_opt(&c->argv[i]) &&
	    !pl_eq(&c->argv[i], "-"))
		i++;
	if (i >= c->argc) {
		an->cwd = an->home;
		return;
	}
	if (pl_eq(&c->argv[i], "-"))
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

void
pl_h_assignlike(struct pl_an *an, struct pl_cmd *c)
{
	int i, any = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *e;

		if (pl_is_opt(f)) {
			if (pl_eq(f, "-p") ||
			    (f->s[1] == 'x' && c->argc == 2)) {
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
			pl_sysconf(an, c, "builtin:history-off",
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

void
pl_h_set(struct pl_an *an, struct pl_cmd *c)
{
	int i;
	if (c->argc == 1) {
		pl_stream_unknown(c->out, T_ENVDUMP | T_PROG);
		return;
	}
	for (i = 1; i < c->argc; i++)
		if (pl_eq(&c->argv[i], "--"))
			break;
	if (i >= c->argc)
		return;
	pl_pos_set(an, c->argv + i + 1, c->argc - i - 1);
}

void
pl_h_unset(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		if (pl_is_opt(&c->argv[i]))
			continue;
		pl_var_set(an, c->argv[i].s, c->argv[i].len, "", 0, 0);
		if (pl_eq(&c->argv[i], "HISTFILE"))
			pl_sysconf(an, c, "builtin:history-off",
			    "disables the shell history (unset HISTFILE)");
	}
}

void
pl_h_read(struct pl_an *an, struct pl_cmd *c)
{
	int i, nv = 0, idx[9];
	const char *s = c->in->s, *e;

	for (i = 1; i < c->argc && nv < 9; i++) {
		if (pl_is_opt(&c->argv[i])) {
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

void
pl_h_mktemp(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *d = pl_opt_val(an, c, 'p', "--tmpdir");
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

void
pl_h_which(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		char *s;

		if (pl_is_opt(&c->argv[i]))
			continue;
		s = pl_alloc(an->a, c->argv[i].len + 10);
		memcpy(s, "/usr/bin/", 9);
		memcpy(s + 9, c->argv[i].s, c->argv[i].len);
		pl_stream_text(c->out, s, c->argv[i].len + 9,
		    c->argv[i].taint);
		return;
	}
}

void
pl_h_pathop(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *f = NULL;
	const char *s, *r;
	int i;

	for (i = 1; i < c->argc; i++)
		if (!pl_is_opt(&c->argv[i])) {
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

void
pl_h_env(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (pl_is_opt(&c->argv[i]))
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

void
pl_h_wait(struct pl_an *an, struct pl_cmd *c)
{
	an->loopwait++;
	pl_stream_text(c->out, "", 0, 0);
}

void
pl_h_true(struct pl_an *an, struct pl_cmd *c)
{
	(void)an;
	pl_stream_text(c->out, "", 0, 0);
}

void
pl_h_find(struct pl_an *an, struct pl_cmd *c)
{
	int i = 1, nroots = 0, roots[16], k;
	const char *namepat = "*";
	char *item;

	while (i < c->argc && pl_is_opt(&c->argv[i]) &&
	    strlen(c->argv[i].s) == 2 && strchr("HLPDO", c->argv[i].s[1]))
		i++;
	for (; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if ((s[0] == '-' && s[1] != '\0') || pl_eq(&c->argv[i], "(") ||
		    pl_eq(&c->argv[i], "!"))
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
		if (pl_eq(&c->argv[k], "-empty") ||
		    pl_eq(&c->argv[k], "-mtime") ||
		    pl_eq(&c->argv[k], "-mmin") ||
		    pl_eq(&c->argv[k], "-atime") ||
		    pl_eq(&c->argv[k], "-amin") ||
		    pl_eq(&c->argv[k], "-newer") ||
		    pl_eq(&c->argv[k], "-size") ||
		    pl_eq(&c->argv[k], "-user") ||
		    pl_eq(&c->argv[k], "-perm") ||
		    pl_eq(&c->argv[k], "-path") ||
		    pl_eq(&c->argv[k], "-regex") || pl_eq(&c->argv[k], "-inum"))
			namepat = "*(selected)";
	{
		/* What find yields: files beneath each root, named like the
		 * first -name pattern (or anything). */
		for (k = i; k < c->argc; k++)
			if ((pl_eq(&c->argv[k], "-name") ||
			    pl_eq(&c->argv[k], "-iname")) && k + 1 < c->argc &&
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

			if (pl_eq(&c->argv[j], "-delete")) {
				pl_delete_target(an, c, &itf, 1);
			} else if (pl_eq(&c->argv[j], "-exec") ||
			    pl_eq(&c->argv[j], "-execdir") ||
			    pl_eq(&c->argv[j], "-ok") ||
			    pl_eq(&c->argv[j], "-okdir")) {
				int e = j + 1, m = 0, q;
				struct pl_field *nv;
				struct pl_stream in, out;

				while (e < c->argc &&
				    !pl_eq(&c->argv[e], ";") &&
				    !pl_eq(&c->argv[e], "+"))
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
			} else if ((pl_eq(&c->argv[j], "-fprint") ||
			    pl_eq(&c->argv[j], "-fprintf") ||
			    pl_eq(&c->argv[j], "-fls") ||
			    pl_eq(&c->argv[j], "-fprint0")) &&
			    j + 1 < c->argc) {
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

void
pl_h_lister(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i = pl_next_operand(c, 1, NULL, &dd);

	pl_out_default(c);
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
