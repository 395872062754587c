/*
 * classify-help.c - what the handlers of the classifier share: reading
 * a command's words the way programs do (options, their values,
 * operands), showing a path in a message, the default standard output,
 * reading secret files, and judging a write to or a deletion of a file
 * (pl_classify_write, which redirections need too).
 */
#include <string.h>

#include "runner/policy/arena.h"
#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

/* ---- helpers ---- */

int
pl_eq(const struct pl_field *f, const char *s)
{
	return strcmp(f->s, s) == 0;
}

int
pl_is_opt(const struct pl_field *f)
{
	return f->len > 1 && f->s[0] == '-' && !(f->flags & F_UNK);
}

/* True when any option before "--" is long or contains short letter ch. */
int
pl_has_opt(const struct pl_cmd *c, char ch, const char *lng)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (f->len == 2 && f->s[0] == '-' && f->s[1] == '-')
			return 0;
		if (!pl_is_opt(f))
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
int
pl_has_arg(const struct pl_cmd *c, const char *s)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (pl_eq(&c->argv[i], s))
			return 1;
	return 0;
}

/* True when f equals one of the words of a NULL-terminated list. */
int
pl_eq_any(const struct pl_field *f, const char *const *words)
{
	for (; *words != NULL; words++)
		if (pl_eq(f, *words))
			return 1;
	return 0;
}

/* True when any argument equals one of the words of a NULL-terminated
 * list. */
int
pl_has_any(const struct pl_cmd *c, const char *const *words)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (pl_eq_any(&c->argv[i], words))
			return 1;
	return 0;
}

/* The first operand of c that is not an option, or NULL. */
const struct pl_field *
pl_first_word(const struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (!pl_is_opt(&c->argv[i]))
			return &c->argv[i];
	return NULL;
}

/* The number of operands of c that are not options. */
int
pl_word_count(const struct pl_cmd *c)
{
	int i, n = 0;

	for (i = 1; i < c->argc; i++)
		n += !pl_is_opt(&c->argv[i]);
	return n;
}

/* Index of the first argument after the options listed as taking a
 * value; returns the next operand at or after i, or argc. */
int
pl_next_operand(const struct pl_cmd *c, int i, const char *shortargs,
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
		if (!pl_is_opt(f))
			return i;
		if (f->s[1] != '-' && shortargs != NULL && f->len == 2 &&
		    strchr(shortargs, f->s[1]) != NULL)
			i++;
		i++;
	}
	return i;
}

/* Value of an option: "-o X", "-oX", "--out X", "--out=X"; NULL. */
const struct pl_field *
pl_opt_val(struct pl_an *an, const struct pl_cmd *c, char sh, const char *lng)
{
	int i;
	size_t ll = lng ? strlen(lng) : 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "--"))
			return NULL;
		if (!pl_is_opt(f))
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
struct pl_field *
pl_subfield(struct pl_an *an, const struct pl_field *f, size_t off)
{
	struct pl_field *o = pl_alloc(an->a, sizeof(*o));

	*o = *f;
	o->s += off;
	o->len -= off;
	return o;
}

/* Short quoted rendering of a path for reasons. */
const char *
pl_pshow(const struct pl_path *p)
{
	return p->abs != NULL ? p->abs : "?";
}

int
pl_is_remote(const struct pl_field *f)
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
void
pl_out_default(struct pl_cmd *c)
{
	pl_stream_unknown(c->out, T_PROG | (c->in->taint & (T_NET |
	    T_DECODED | T_SECRET | T_ENVDUMP | T_SOCK | T_SHELL)));
	c->out->producer = c->name;
}

/* Reports reading a secret file (exfiltration of credentials). */
void
pl_secret_read(struct pl_an *an, struct pl_cmd *c, const struct pl_path *p)
{
	pl_find(an, VG_CAT_EXFILTRATION, "builtin:secret-read", c->off, c->len,
	    "'%s' reads credentials or a private key ('%s')", c->name,
	    pl_pshow(p));
	c->out->taint |= T_SECRET;
}

struct pl_file *
pl_written_file(struct pl_an *an, const struct pl_field *f,
    struct pl_stream *s)
{
	struct pl_path p;
	struct pl_file *tf;

	pl_path_classify(an, f, &p);
	if ((tf = pl_file_find(an, p.abs)) == NULL)
		return NULL;
	if (tf->content != NULL)
		pl_stream_text(s, tf->content, tf->clen, tf->taint);
	else
		pl_stream_unknown(s, tf->taint);
	return tf;
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
		    "%s writes to the device '%s'", why, pl_pshow(&p));
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
		    pl_pshow(&p));
	else if (p.attr & PA_CRON)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-cron", off, len,
		    "%s writes to '%s' (scheduled commands)", why,
		    pl_pshow(&p));
	else if (p.attr & PA_AUTHKEYS)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-authkeys", off, len,
		    "%s writes to '%s' (ssh login keys)", why, pl_pshow(&p));
	else if (p.attr & (PA_RC | PA_SSH))
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-startup", off, len,
		    "%s writes to '%s' (shell or ssh configuration)", why,
		    pl_pshow(&p));
	else if (p.attr & PA_PRELOAD)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-preload", off, len,
		    "%s writes to '%s' (preloaded libraries)", why,
		    pl_pshow(&p));
	else if (p.attr & PA_KERNEL)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-kernel", off, len,
		    "%s changes kernel settings ('%s')", why, pl_pshow(&p));
	else if (p.attr & PA_ETC)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-etc", off, len,
		    "%s writes to '%s' (system configuration)", why,
		    pl_pshow(&p));
	else if (p.attr & PA_HISTORY)
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:write-history", off, len,
		    "%s overwrites the shell history '%s'", why, pl_pshow(&p));
	else
		pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:write-protected", off,
		    len, "%s %s the protected path '%s'", why,
		    append ? "appends to" : "overwrites", pl_pshow(&p));
}

/* Deletion of one operand. */
void
pl_delete_target(struct pl_an *an, struct pl_cmd *c, const struct pl_field *f,
    int recursive)
{
	struct pl_path p;

	pl_path_classify(an, f, &p);
	if (p.cls == PC_DEVICE) {
		pl_find_floor(an, recursive ? PL_FLOOR_DISK : NULL, VG_CAT_DISK,
		    "builtin:delete-device", c->off, c->len,
		    "'%s' destroys the device '%s'", c->name, pl_pshow(&p));
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
		    pl_pshow(&p));
		return;
	}
	if ((p.attr & PA_CRON) && !(p.attr & PA_ETC)) {
		pl_find(an, VG_CAT_SYSCONFIG, "builtin:delete-cron", c->off,
		    c->len, "'%s' deletes scheduled commands ('%s')", c->name,
		    pl_pshow(&p));
		return;
	}
	pl_find_floor(an, recursive && pl_path_top(an, &p) ? PL_FLOOR_DELETE :
	    NULL, VG_CAT_DESTRUCTIVE, recursive ? "builtin:rm-protected" :
	    "builtin:delete-protected", c->off, c->len,
	    "'%s' deletes%s the protected path '%s'", c->name,
	    recursive ? " recursively" : "", pl_pshow(&p));
}
