/*
 * written.c - files a command writes and then runs.
 *
 * A command line may write a script, a Makefile, a justfile or a
 * crontab and run it in the same breath.  The written file is noted
 * (pl_file_note, actx.c) with its content when the command spelled it
 * (echo, printf, here-documents, tee) and with the taint of its origin
 * otherwise; a copy (cp, mv, install, scp) carries the record of its
 * source, or is opaque when the source is a file from elsewhere.  When
 * make, just or crontab read such a file, the commands in it (recipes,
 * crontab lines) are judged as shell, as if typed on the line.
 */
#include <string.h>

#include "common/buf.h"
#include "runner/policy/arena.h"
#include "runner/policy/classify.h"
#include "runner/policy/nested.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"

/* Notes dest as a copy of src: the source's record, or opaque. */
void
pl_file_copied(struct pl_an *an, const struct pl_field *src,
    const struct pl_field *dest)
{
	const char *sabs, *dabs, *base, *colon;
	struct pl_file *tf;

	if ((src->flags & F_UNK) || (dest->flags & F_UNK))
		return;
	colon = memchr(src->s, ':', src->len);
	sabs = colon ? NULL : pl_path_resolve(an, src->s, src->len);
	dabs = pl_path_resolve(an, dest->s, dest->len);
	if (dabs == NULL)
		return;
	tf = sabs ? pl_file_find(an, sabs) : NULL;
	base = strrchr(colon ? colon + 1 : src->s, '/');
	base = base ? base + 1 : colon ? colon + 1 : src->s;
	if ((dest->len > 0 && dest->s[dest->len - 1] == '/') ||
	    (dest->len == 1 && dest->s[0] == '.') || (dest->len == 2 &&
	    memcmp(dest->s, "..", 2) == 0)) {
		size_t dl = strlen(dabs), bl = strlen(base);
		char *j = pl_alloc(an->a, dl + bl + 2);

		if (dl > 0 && dabs[dl - 1] == '/')
			dl--;		/* "/" itself */
		memcpy(j, dabs, dl);
		j[dl] = '/';
		memcpy(j + dl + 1, base, bl + 1);
		dabs = j;
	}
	if (tf != NULL)
		pl_file_note(an, dabs, tf->taint, tf->content, tf->clen);
	else
		pl_file_note(an, dabs, colon ? T_NET | T_OPAQUE : T_OPAQUE,
		    NULL, 0);
}

/* The value of option short -X / long --name[=] of c, or NULL. */
static const char *
file_opt(struct pl_cmd *c, const char *sh, const char *const *longs,
    size_t *len)
{
	for (int i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		size_t sl = strlen(sh);

		if (strcmp(f->s, "--") == 0)
			break;
		for (int k = 0; longs[k] != NULL; k++) {
			size_t ll = strlen(longs[k]);

			if (strcmp(f->s, longs[k]) == 0 && i + 1 < c->argc) {
				*len = c->argv[i + 1].len;
				return c->argv[i + 1].s;
			}
			if (f->len > ll && memcmp(f->s, longs[k], ll) == 0 &&
			    f->s[ll] == '=') {
				*len = f->len - ll - 1;
				return f->s + ll + 1;
			}
		}
		if (strncmp(f->s, sh, sl) == 0) {
			if (f->len == sl && i + 1 < c->argc) {
				*len = c->argv[i + 1].len;
				return c->argv[i + 1].s;
			}
			if (f->len > sl) {
				*len = f->len - sl;
				return f->s + sl;
			}
		}
	}
	return NULL;
}

/* Appends a make recipe line as shell: $$ is $, $(MAKE) is make, other
 * make variables are unknown. */
static void
make_line(struct vg_buf *b, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == '@' || s[i] == '-' || s[i] == '+' ||
	    s[i] == ' '))
		i++;
	for (; i < n; i++) {
		if (s[i] != '$' || i + 1 >= n) {
			vg_buf_addc(b, s[i]);
			continue;
		}
		if (s[i + 1] == '$') {
			vg_buf_addc(b, '$');
			i++;
			continue;
		}
		if (s[i + 1] == '(' || s[i + 1] == '{') {
			char close = s[i + 1] == '(' ? ')' : '}';
			const char *e = memchr(s + i, close, n - i);
			size_t vl = e ? (size_t)(e - (s + i + 2)) : 0;

			if (vl == 4 && memcmp(s + i + 2, "MAKE", 4) == 0)
				vg_buf_adds(b, "make");
			else
				vg_buf_adds(b, "${__vigil_unknown}");
			i = e ? (size_t)(e - s) : n;
			continue;
		}
		vg_buf_adds(b, "${__vigil_unknown}");
		i++;
	}
	vg_buf_addc(b, '\n');
}

/* Appends a crontab line's command (after the schedule) as shell. */
static void
cron_line(struct vg_buf *b, const char *s, size_t n)
{
	size_t i = 0;
	int fields = s[0] == '@' ? 1 : 5;

	if (memchr(s, '=', n) != NULL) {
		size_t k = 0;

		while (k < n && s[k] != ' ' && s[k] != '\t' && s[k] != '=')
			k++;
		if (k < n && s[k] == '=')
			return;		/* NAME=value */
	}
	for (int f = 0; f < fields; f++) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		while (i < n && s[i] != ' ' && s[i] != '\t')
			i++;
	}
	for (; i < n && s[i] != '%'; i++)
		vg_buf_addc(b, s[i]);
	vg_buf_addc(b, '\n');
}

/* The commands in the text of a Makefile, justfile or crontab. */
static void
commands_of(struct vg_buf *b, const char *s, size_t n, int kind)
{
	const char *e = s + n;

	while (s < e) {
		const char *l = memchr(s, '\n', (size_t)(e - s));
		size_t ll;

		if (l == NULL)
			l = e;
		ll = (size_t)(l - s);
		if (kind == PL_WRITTEN_MAKE && ll > 0 && s[0] == '\t')
			make_line(b, s + 1, ll - 1);
		else if (kind == PL_WRITTEN_JUST && ll > 0 && (s[0] == ' ' ||
		    s[0] == '\t')) {
			while (s < l && (*s == ' ' || *s == '\t'))
				s++;
			make_line(b, s, (size_t)(l - s));
		} else if (kind == PL_WRITTEN_CRONTAB && ll > 0 &&
		    s[0] != '#' && s[0] != '\r')
			cron_line(b, s, ll);
		s = l + 1;
	}
}

/* The file make, just or crontab c reads, when the command wrote it. */
static struct pl_file *
read_file(struct pl_an *an, struct pl_cmd *c, int kind, int *stdin_)
{
	static const char *const mk_long[] = { "--file", "--makefile", NULL };
	static const char *const just_long[] = { "--justfile", NULL };
	static const char *const mk_names[] = { "GNUmakefile", "makefile",
	    "Makefile", NULL };
	static const char *const just_names[] = { "justfile", "Justfile",
	    ".justfile", NULL };
	const char *const *names = kind == PL_WRITTEN_MAKE ? mk_names :
	    just_names;
	const char *fn = NULL;
	size_t fl = 0;

	*stdin_ = 0;
	if (kind == PL_WRITTEN_CRONTAB) {
		for (int i = 1; i < c->argc; i++) {
			if (strcmp(c->argv[i].s, "-u") == 0) {
				i++;
				continue;
			}
			if (c->argv[i].s[0] == '-' && c->argv[i].len > 1)
				continue;
			fn = c->argv[i].s;
			fl = c->argv[i].len;
			break;
		}
		if (fn == NULL || strcmp(fn, "-") == 0) {
			*stdin_ = 1;
			return NULL;
		}
	} else {
		fn = file_opt(c, kind == PL_WRITTEN_MAKE ? "-f" : "-f",
		    kind == PL_WRITTEN_MAKE ? mk_long : just_long, &fl);
	}
	if (fn != NULL)
		return memchr(fn, PL_UNK, fl) ? NULL :
		    pl_file_find(an, pl_path_resolve(an, fn, fl));
	for (int k = 0; names[k] != NULL; k++) {
		struct pl_file *tf = pl_file_find(an,
		    pl_path_resolve(an, names[k], strlen(names[k])));

		if (tf != NULL)
			return tf;
	}
	return NULL;
}

void
pl_run_written(struct pl_an *an, struct pl_cmd *c, int kind)
{
	struct pl_file *tf;
	struct pl_stream s;
	const char *text;
	size_t len;
	unsigned taint;
	int from_stdin;
	struct vg_buf *b;

	tf = read_file(an, c, kind, &from_stdin);
	if (from_stdin) {
		if (!c->in->known) {
			if (c->in->taint & (T_NET | T_DECODED | T_VAR |
			    T_OPAQUE | T_SOCK))
				pl_code_to_interp(an, c, "sh", c->in, c->off,
				    c->len);
			return;
		}
		text = c->in->s;
		len = c->in->len;
		taint = c->in->taint;
	} else if (tf == NULL || tf->active) {
		return;		/* not written here, or make calling make */
	} else if (tf->content == NULL) {
		pl_stream_unknown(&s, tf->taint);
		pl_code_to_interp(an, c, "sh", &s, c->off, c->len);
		return;
	} else {
		text = tf->content;
		len = tf->clen;
		taint = tf->taint;
	}
	if ((b = pl_buf_get(an)) == NULL)
		return;
	commands_of(b, text, len, kind);
	pl_stream_text(&s, pl_strndup(an->a, b->data ? b->data : "", b->len),
	    b->len, taint);
	pl_buf_put(an);
	if (tf != NULL)
		tf->active = 1;
	pl_code_to_interp(an, c, "sh", &s, c->off, c->len);
	if (tf != NULL)
		tf->active = 0;
}

/* True when c only prints or lists (make -n, just --list ...). */
static int
prints_only(const struct pl_cmd *c, const char *const *opts)
{
	for (int i = 1; i < c->argc; i++) {
		if (strcmp(c->argv[i].s, "--") == 0)
			break;
		for (int k = 0; opts[k] != NULL; k++)
			if (strcmp(c->argv[i].s, opts[k]) == 0)
				return 1;
	}
	return 0;
}

void
pl_build_files(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const make_dry[] = { "-n", "--dry-run",
	    "--just-print", "--recon", "-q", "--question", "-p",
	    "--print-data-base", "--help", "-v", "--version", NULL };
	static const char *const just_dry[] = { "-n", "--dry-run", "-l",
	    "--list", "--summary", "--show", "-s", "--evaluate", "--dump",
	    "--variables", "--help", "-h", "--version", "-V", "--fmt",
	    "--check", NULL };

	if ((strcmp(c->name, "make") == 0 || strcmp(c->name, "gmake") == 0) &&
	    !prints_only(c, make_dry))
		pl_run_written(an, c, PL_WRITTEN_MAKE);
	else if (strcmp(c->name, "just") == 0 && !prints_only(c, just_dry))
		pl_run_written(an, c, PL_WRITTEN_JUST);
}
