/*
 * home.c - the vigil home directory (common/home.h).  Only names it:
 * creating it and its modes are the store's job (runner/core/store.c).
 */
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/home.h"
#include "common/path.h"

/* The user's home; see home.h. */
char *
vg_user_home(void)
{
	const char *s;
	struct passwd *pw;

	if ((s = getenv("HOME")) == NULL || *s != '/') {
		pw = getpwuid(getuid());
		s = pw != NULL && pw->pw_dir != NULL && *pw->pw_dir == '/' ?
		    pw->pw_dir : "/";
	}
	return vg_xstrdup(s);
}

/* The vigil home; see home.h. */
char *
vg_home_dir(void)
{
	const char *s;
	char *home, *p;

	if ((s = getenv("VIGIL_HOME")) != NULL && *s != '\0')
		return vg_xstrdup(s);
	if ((s = getenv("XDG_STATE_HOME")) != NULL && *s == '/')
		return vg_path_join(s, "vigil");
	home = vg_user_home();
	p = vg_xasprintf("%s/.local/state/vigil", home);
	free(home);
	return p;
}
