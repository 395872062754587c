/*
 * classify-perms.c - the classifier's handlers for permissions and
 * privilege: chmod (and whether a mode loosens access), chown, chgrp,
 * setfacl, chattr, setcap; sudo, su, sg and the account tools.
 */
#include <stdlib.h>
#include <string.h>

#include "runner/policy/analyse.h"
#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

/* ---- permissions ---- */

/* True when a chmod mode grants write to others or is setuid/setgid. */
int
pl_mode_loosens(const char *m, int *setid, int secret)
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

void
pl_h_chmod(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, rec = pl_has_opt(c, 'R', "--recursive"), setid,
	    first = 1;
	const char *mode = NULL;

	for (i = 1; (i = pl_next_operand(c, i, NULL, &dd)) < c->argc; i++) {
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
		loose = pl_mode_loosens(mode, &setid,
		    (p.attr & PA_SECRET) != 0);
		if (setid) {
			pl_find(an, VG_CAT_PERMISSIONS, "builtin:setuid", c->off,
			    c->len, "'chmod %s' sets a setuid/setgid bit on "
			    "'%s'", mode, pl_pshow(&p));
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
			    "path '%s'", rec ? "-R " : "", mode, pl_pshow(&p));
	}
}

void
pl_h_chown(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, rec = pl_has_opt(c, 'R', "--recursive"), first = 1;
	int acl = strcmp(c->name, "setfacl") == 0 ||
	    strcmp(c->name, "chattr") == 0;

	for (i = 1; (i = pl_next_operand(c, i, acl ? "mMxX" : NULL, &dd)) <
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
		    pl_pshow(&p));
	}
}

void
pl_h_setcap(struct pl_an *an, struct pl_cmd *c)
{
	if (pl_has_opt(c, 'v', NULL) || c->argc < 3)
		return;
	pl_find(an, VG_CAT_PERMISSIONS, "builtin:setcap", c->off, c->len,
	    "'setcap' grants file capabilities");
}

/* ---- privilege, accounts ---- */

/* True when sg is shadow's, "sg [-] [GROUP [-c] COMMAND]": ast-grep
 * installs itself as sg too, and its options (-p, --pattern, --rewrite,
 * scan --interactive ...) are none of shadow's. */
static int
shadow_sg(const struct pl_cmd *c)
{
	int i = 1, words = 0;

	if (i < c->argc && pl_eq(&c->argv[i], "-"))
		i++;
	for (; i < c->argc && words < 2; i++) {
		if (!pl_is_opt(&c->argv[i])) {
			words++;
			continue;
		}
		if (words == 0 || !pl_eq(&c->argv[i], "-c"))
			return 0;
		return 1;
	}
	return 1;
}

void
pl_h_priv(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *cmd;

	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-V") ||
	    pl_has_arg(c, "--version"))
		return;
	if (strcmp(c->name, "passwd") == 0 && (pl_has_opt(c, 'S', "--status")))
		return;
	if (strcmp(c->name, "chage") == 0 && pl_has_opt(c, 'l', "--list"))
		return;
	if (strcmp(c->name, "chsh") == 0 && pl_has_opt(c, 'l', "--list-shells"))
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
	cmd = pl_opt_val(an, c, 'c', "--command");
	if (cmd != NULL && (strcmp(c->name, "su") == 0 ||
	    strcmp(c->name, "runuser") == 0 || strcmp(c->name, "sg") == 0))
		pl_shell_code(an, c, cmd, c->argc);
	if (strcmp(c->name, "runuser") == 0 || strcmp(c->name, "sg") == 0) {
		int k;

		for (k = 1; k < c->argc; k++)
			if (pl_eq(&c->argv[k], "--") && k + 1 < c->argc) {
				struct pl_stream o;

				pl_run_argv(an, c->argv + k + 1, c->argc - k - 1,
				    c->off, c->len, c->in, &o, 1);
			}
	}
}
