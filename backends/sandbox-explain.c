/*
 * sandbox-explain.c - why a task failed, when the sandbox refused it
 * something: the paths its error messages name (the shell's "cannot
 * create", coreutils' quoted names, Python's PermissionError and
 * OSError, "Read-only file system"), judged against the rules the
 * sandbox gave it, and the manifest setting that would allow them.
 * Landlock's own denial records need the kernel's audit subsystem (Linux
 * 6.15 and later, audit enabled); where it is off, as on most hosts, a
 * task's messages are all there is.  docs/isolation.md, "When the
 * sandbox refuses".
 */
#include "backends/sandbox-explain.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The phrases of a refusal, and whether it was a write. */
static const struct {
	const char	*phrase;
	int		 write;		/* 1 write, 0 read or write, -1 net */
} refusals[] = {
	{ "Read-only file system", 1 },
	{ "Permission denied", 0 },
	{ "Operation not permitted", 0 },
	{ "Network is unreachable", -1 },
	{ "Connection refused", -1 },
	{ "Temporary failure in name resolution", -1 },
};

/* True when path is dir or lies beneath it. */
static int
under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/' || (n == 1 && dir[0] == '/'));
}

/* True when path lies under one of the n paths v. */
static int
under_any(const char *path, const char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] != NULL && under(path, v[i]))
			return 1;
	return 0;
}

/*
 * Copies into out (size) the path line[0..len) names as refused at
 * phrase: a quoted name ('x', "x", or a locale's curly quotes) with a
 * slash or a leading dot, else the last word before ": PHRASE" ("sh: 1:
 * cannot create out.txt: Permission denied").  0 when none.
 */
static int
path_in(const char *line, size_t len, const char *phrase, char *out,
    size_t size)
{
	static const char *const opens[] = { "'", "\"", "\xe2\x80\x98" };
	static const char *const closes[] = { "'", "\"", "\xe2\x80\x99" };
	const char *p, *q, *end = line + len, *w;
	size_t i;

	for (i = 0; i < sizeof(opens) / sizeof(opens[0]); i++) {
		p = memmem(line, len, opens[i], strlen(opens[i]));
		if (p == NULL)
			continue;
		p += strlen(opens[i]);
		q = memmem(p, (size_t)(end - p), closes[i],
		    strlen(closes[i]));
		if (q == NULL || q == p || (size_t)(q - p) >= size)
			continue;
		if (memchr(p, '/', (size_t)(q - p)) == NULL && *p != '.')
			continue;
		memcpy(out, p, (size_t)(q - p));
		out[q - p] = '\0';
		return 1;
	}
	if ((q = memmem(line, len, phrase, strlen(phrase))) == NULL ||
	    q - line < 3 || q[-1] != ' ' || q[-2] != ':')
		return 0;
	q -= 2;
	for (w = q; w > line && w[-1] != ' ' && w[-1] != '\t'; w--)
		;
	if (w == q || (size_t)(q - w) >= size)
		return 0;
	memcpy(out, w, (size_t)(q - w));
	out[q - w] = '\0';
	return 1;
}

/* Makes path absolute against dir (the task's working directory), with
 * "./" and "x/.." left as written. */
static void
absolute(const char *path, const char *dir, char *out, size_t size)
{
	if (path[0] == '/' || dir == NULL)
		snprintf(out, size, "%s", path);
	else
		snprintf(out, size, "%.2000s/%.2000s", dir, path[0] == '.' &&
		    path[1] == '/' ? path + 2 : path);
}

/* Judges one refused path; appends the reason and returns 1 when the
 * sandbox is why.  At standard reads are open, so a refusal is a
 * write's; at strict one that is not a write (write 0) of a path outside
 * what it reads is a read's. */
static int
judge(const struct vg_explain_in *in, const char *path, int write,
    struct vg_buf *out)
{
	const char *task[] = { in->task_dir, in->scratch_dir, in->tmp_dir };
	const char *fix = in->where != NULL ? in->where : "in the manifest";
	char p[PATH_MAX];
	size_t i;

	if (under_any(path, task, 3))
		return 0;
	for (i = 0; in->workdir_writable && i < in->nprotected; i++) {
		snprintf(p, sizeof(p), "%s/%s", in->workdir,
		    in->protected[i]);
		if (under(path, p)) {
			vg_buf_printf(out, "the sandbox keeps '%s' read-only "
			    "(isolation %s): %s in the working directory "
			    "would run code outside the sandbox; a task that "
			    "must change it needs isolation.level: none %s",
			    path, in->level, in->protected[i], fix);
			return 1;
		}
	}
	if (in->workdir_writable && under(path, in->workdir))
		return 0;
	if (under_any(path, in->writable, in->nwritable))
		return 0;
	if (in->strict && !write && (under_any(path, in->readable,
	    in->nreadable) || (in->workdir != NULL && under(path,
	    in->workdir))))
		return 0;	/* a read it was given */
	if (in->strict && !write) {
		vg_buf_printf(out, "the sandbox refused reading '%s' (isolation "
		    "strict reads only the system trees, the task's "
		    "directories and isolation.readable); to allow "
		    "it, add it to isolation.readable %s", path, fix);
		return 1;
	}
	if (strncmp(path, "/dev/", 5) == 0) {
		vg_buf_printf(out, "the sandbox refused the device '%s' "
		    "(isolation %s opens only the null, random and terminal "
		    "devices and the task's GPUs); to allow it, add it to "
		    "isolation.devices %s", path, in->level, fix);
		return 1;
	}
	vg_buf_printf(out, "the sandbox refused writing '%s' (isolation %s "
	    "writes only the task, scratch and temp directories%s and "
	    "isolation.writable); to allow it, add it to isolation.writable "
	    "%s", path, in->level, in->workdir_writable ? ", the working "
	    "directory" : "", fix);
	return 1;
}

int
vg_sandbox_explain(const struct vg_explain_in *in, const char *text,
    size_t len, struct vg_buf *out)
{
	const char *line, *nl, *end = text + len;
	static const char *const writes[] = { "creat", "touch", "writ",
		"remov", "renam", "mkdir", "link", NULL };
	char word[PATH_MAX], path[PATH_MAX];
	struct stat st;
	size_t i, k;
	int write;

	for (line = text; line < end; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
			if (memmem(line, (size_t)(nl - line),
			    refusals[i].phrase,
			    strlen(refusals[i].phrase)) == NULL)
				continue;
			if (refusals[i].write < 0) {
				if (in->network)
					continue;
				vg_buf_printf(out, "the sandbox gave the task "
				    "no network (loopback only%s); to allow "
				    "it, set isolation.network: host, or an "
				    "allow-list {allow: [HOST, ...]}, %s",
				    in->strict ? ", the default at strict" :
				    "", in->where != NULL ? in->where :
				    "in the manifest");
				return 1;
			}
			if (!path_in(line, (size_t)(nl - line),
			    refusals[i].phrase, word, sizeof(word)))
				continue;
			absolute(word, in->workdir, path, sizeof(path));
			/* a write: said so, or of what is not there */
			write = refusals[i].write == 1 || lstat(path, &st) != 0;
			for (k = 0; !write && writes[k] != NULL; k++)
				write = memmem(line, (size_t)(nl - line),
				    writes[k], strlen(writes[k])) != NULL;
			if (judge(in, path, write, out))
				return 1;
		}
		if (nl == end)
			break;
	}
	return 0;
}
