/*
 * which.c - program lookup in $PATH; see which.h.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/which.h"

int
vg_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

char *
vg_which(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char *cand;

	if (name == NULL || *name == '\0')
		return NULL;
	if (strchr(name, '/') != NULL)
		return vg_is_executable(name) ? vg_xstrdup(name) : NULL;
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		cand = vg_xasprintf("%.*s/%s", end == p ? 1 : (int)(end - p),
		    end == p ? "." : p, name);
		if (vg_is_executable(cand))
			return cand;
		free(cand);
		if (*end == '\0')
			return NULL;
	}
}
