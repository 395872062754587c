/*
 * allow.c - the allow rule a refusal offers: for a command the gate
 * refused, the YAML that, pasted into a policy file, lets exactly that
 * command through (a whole-command rule, plus a rule lifting each floor
 * rule it hit, which only the site policy file may hold), or why no rule
 * can (a site deny rule, a layer's deny rule, an unparseable command).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/policy/policy.h"
#include "runner/policy/rules.h"

/* Appends the n bytes of s as a glob matching only them ('*', '?', '['
 * and '\\' escaped), written as a YAML double-quoted scalar. */
static void
yaml_glob(struct vg_buf *b, const char *s, size_t n)
{
	size_t i;

	vg_buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t k;

		/* Plain bytes go in runs. */
		for (k = i; k < n && (unsigned char)s[k] >= 0x20 &&
		    s[k] != 0x7f && strchr("*?[\\\"", s[k]) == NULL; k++)
			;
		if (k > i) {
			vg_buf_add(b, s + i, k - i);
			i = k - 1;
			continue;
		}
		if (c == '*' || c == '?' || c == '[' || c == '\\')
			vg_buf_adds(b, "\\\\");	/* the glob's '\\' */
		if (c == '"' || c == '\\') {
			vg_buf_addc(b, '\\');
			vg_buf_addc(b, (char)c);
		} else if (c == '\n') {
			vg_buf_adds(b, "\\n");
		} else if (c == '\t') {
			vg_buf_adds(b, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			vg_buf_printf(b, "\\x%02x", c);
		} else {
			vg_buf_addc(b, (char)c);
		}
	}
	vg_buf_addc(b, '"');
}

/* Appends an id: prefix then name's letters, digits, '-', '_' and '.',
 * 48 bytes at most. */
static void
put_id(struct vg_buf *b, const char *prefix, const char *name)
{
	size_t n = strlen(prefix);

	vg_buf_adds(b, prefix);
	for (; *name != '\0' && n < 48; name++, n++)
		vg_buf_addc(b, (*name >= 'a' && *name <= 'z') || (*name >= 'A'
		    && *name <= 'Z') || (*name >= '0' && *name <= '9') ||
		    *name == '-' || *name == '_' || *name == '.' ? *name : '-');
}

/* Appends one rule of the list: id, floor (or NULL), a whole-command
 * glob matching only the n bytes of norm, reason. */
static void
put_rule(struct vg_buf *b, const char *prefix, const char *name,
    const char *floor, const char *norm, size_t n)
{
	vg_buf_adds(b, "  - id: ");
	put_id(b, prefix, name);
	vg_buf_addc(b, '\n');
	if (floor != NULL)
		vg_buf_printf(b, "    floor: %s\n", floor + 6);
	vg_buf_adds(b, "    command: ");
	yaml_glob(b, norm, n);
	vg_buf_adds(b, "\n    reason: \"FILL IN: why this exact command is "
	    "safe\"\n");
}

/* The first finding that no allow rule can lift, or NULL. */
static const struct vg_finding *
unliftable(const struct vg_verdict *v)
{
	int k;

	for (k = 0; k < v->nfindings; k++) {
		const struct vg_finding *f = &v->findings[k];

		if (strcmp(f->category, VG_CAT_UNPARSEABLE) == 0 ||
		    (strncmp(f->rule, "builtin:", 8) != 0 &&
		    strncmp(f->rule, "floor:", 6) != 0))
			return f;
	}
	return NULL;
}

/* Writes the allow rule of a refused command; see policy.h. */
enum vg_allow_where
vg_policy_allow_rule(const struct vg_verdict *v, const char *command,
    size_t len, struct vg_buf *yaml, struct vg_buf *note)
{
	const struct vg_finding *bad = unliftable(v);
	char small[1024], *norm;
	const char *first = NULL, *floor = NULL;
	int k, floors = 0;
	size_t n;

	if (bad != NULL && strcmp(bad->category, VG_CAT_UNPARSEABLE) == 0) {
		vg_buf_printf(note, "no rule can allow a command vigil cannot "
		    "read (%s): rewrite it so that it parses", bad->rule);
		return VG_ALLOW_NONE;
	}
	if (bad != NULL && strncmp(bad->rule, "site:", 5) == 0) {
		vg_buf_printf(note, "%s is a deny rule of the site policy "
		    "file: no policy file or manifest can allow it; ask the "
		    "site's operators", bad->rule);
		return VG_ALLOW_NONE;
	}
	if (bad != NULL) {
		vg_buf_printf(note, "'%s' is a deny rule of the manifest or a "
		    "policy file: allow rules do not lift deny rules; narrow "
		    "or remove it there", bad->rule);
		return VG_ALLOW_NONE;
	}
	/* The command as whole-command rules see it. */
	norm = len < sizeof(small) ? small : vg_xcalloc(len + 1, 1);
	n = pl_norm_whole(command, len, norm);
	vg_buf_adds(yaml, "allow:\n");
	for (k = 0; k < v->nfindings; k++) {
		const char *r = v->findings[k].rule;

		if (strncmp(r, "floor:", 6) == 0) {
			put_rule(yaml, "lift-", r + 6, r, norm, n);
			if (floor == NULL)
				floor = r + 6;
			floors++;
		} else if (first == NULL) {
			first = r + 8;
		}
	}
	put_rule(yaml, "allow-", first != NULL ? first : floor != NULL ?
	    floor : "command", NULL, norm, n);
	if (norm != small)
		free(norm);
	if (floors > 0) {
		vg_buf_adds(note, "the built-in floor refuses it: only the "
		    "site policy file (" PL_SITE_DEFAULT " or the site "
		    "config's policy.file) can allow it, with these rules");
		return VG_ALLOW_SITE;
	}
	vg_buf_adds(note, "to allow exactly this command, add to a policy "
	    "file (--policy FILE, policy.file) or the manifest's policy:");
	return VG_ALLOW_LAYER;
}
