/*
 * which.c - program lookup in $PATH; see which.h.
 */
#include <errno.h>
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

/* True when path is dir or beneath it (both absolute, no ".."). */
static int
path_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return n > 0 && strncmp(path, dir, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/' || n == 1);
}

char *
vg_program_refusal(const char *path, const char *what,
    const struct vg_strv *writable)
{
	struct stat st;
	char *real, *wr, *why = NULL;
	size_t i;

	if ((real = realpath(path, NULL)) == NULL || stat(real, &st) != 0) {
		why = vg_xasprintf("%s '%s': %s", what, path, strerror(errno));
		free(real);
		return why;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 &&
	    st.st_uid != geteuid()) || (st.st_mode & 022) != 0)
		why = vg_xasprintf("%s '%s' is not a program of root's or "
		    "yours that only its owner can change (owner uid %lu, "
		    "mode %04o)", what, path, (unsigned long)st.st_uid,
		    (unsigned)(st.st_mode & 07777));
	for (i = 0; why == NULL && writable != NULL && i < writable->n; i++) {
		if (writable->v[i][0] != '/')
			continue;
		wr = realpath(writable->v[i], NULL);
		if (path_beneath(real, wr != NULL ? wr : writable->v[i]))
			why = vg_xasprintf("%s '%s' is in '%s', which this "
			    "run's tasks can write; vigil runs it outside any "
			    "sandbox", what, path, writable->v[i]);
		free(wr);
	}
	free(real);
	return why;
}
