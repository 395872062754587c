/*
 * classify-container.c - the classifier's handlers for containers
 * (docker and podman) and for xterm's remote display.
 */
#include <string.h>

#include "runner/policy/arena.h"
#include "runner/policy/paths.h"
#include "runner/policy/classify-int.h"

/* ---- containers ---- */

void
pl_h_docker(struct pl_an *an, struct pl_cmd *c)
{
	int i, run = 0;

	/* docker volume rm/prune and system prune --volumes delete the
	 * data of named volumes. */
	if ((pl_has_arg(c, "volume") && (pl_has_arg(c, "rm") ||
	    pl_has_arg(c, "remove") || pl_has_arg(c, "prune"))) ||
	    (pl_has_arg(c, "system") && pl_has_arg(c, "prune") &&
	    pl_has_arg(c, "--volumes"))) {
		if (!pl_has_arg(c, "--help"))
			pl_find(an, VG_CAT_DESTRUCTIVE, "builtin:volume-delete",
			    c->off, c->len, "'%s' deletes container volumes "
			    "and their data", c->name);
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s, *v = NULL;

		if (pl_eq(f, "run") || pl_eq(f, "create") || pl_eq(f, "exec"))
			run = 1;
		if (!run)
			continue;
		if (pl_eq(f, "--privileged") ||
		    strncmp(s, "--pid=host", 10) == 0 ||
		    (pl_eq(f, "--pid") && i + 1 < c->argc &&
		    pl_eq(&c->argv[i + 1], "host")) ||
		    strncmp(s, "--cap-add=ALL", 13) == 0 ||
		    strncmp(s, "--cap-add=SYS_ADMIN", 19) == 0 ||
		    strncmp(s, "--userns=host", 13) == 0) {
			pl_find(an, VG_CAT_PRIVILEGE, "builtin:container-priv",
			    c->off, c->len, "'%s' starts a container with "
			    "host privileges (%s)", c->name, s);
			return;
		}
		if ((pl_eq(f, "-v") || pl_eq(f, "--volume")) && i + 1 < c->argc)
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
	pl_out_default(c);
}

void
pl_h_xterm(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *d = pl_opt_val(an, c, 0, "-display");

	if (d != NULL && d->s[0] != ':')
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:xterm-display",
		    c->off, c->len, "'xterm -display %s' opens a shell on a "
		    "remote display", d->s);
}
