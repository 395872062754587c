/*
 * outputs.c - collects a task's outputs after each attempt: the
 * manifest's `outputs:` globs, matched in the attempt's scratch directory
 * and then in its task directory, are copied (or moved) into the
 * destination (tasks/<i>/outputs in the run directory, or outputs.dest
 * with ${{ }} substituted, a relative one in the run's working
 * directory, where the collecting vigil runs), keeping their paths
 * relative to where they were found.  The driver (runner/core/run.c),
 * or task-exec on the node under a batch scheduler
 * (runner/cli/cmd-task-exec.c), calls it through
 * vg_outputs_after when an attempt ends, before scratch.keep removes the
 * scratch directory.
 *
 * What is refused: a symbolic link anywhere (vigil never collects
 * through one), special files, files with other hard links, vigil's own files
 * in the task directory (stdout, stderr, result.json, monitor,
 * heartbeat, outputs.json, outputs.left, tmp, a job step's step, step.N
 * and step.log) and the destination itself; what a remote backend left
 * on its side (outputs.left) is listed as skipped from "remote".  Past
 * a limit (outputs.max_files, outputs.max_bytes) files are left behind
 * and listed with why (the first 100; then the collection stops).  The list of what was
 * collected, with sizes, is written to tasks/<i>/outputs.json, which
 * `vigil status --json` shows.  The task could write the trees read
 * (and may have planted links, FIFOs or hard links there): every source
 * is opened beneath its tree's descriptor with no link followed in any
 * component, only regular files with one name are copied, and files are
 * written beneath the destination's descriptor to a temporary name made
 * with O_EXCL, then renamed (common/beneath.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/json.h"
#include "common/log.h"
#include "common/path.h"
#include "common/str.h"
#include "backends/backend.h"
#include "runner/core/outputs.h"

#define OUT_RECORD	"outputs.json"
#define OUT_DEPTH	32	/* directory levels copied */
#define OUT_CHUNK	(64u << 10)
#define OUT_OVER_LISTED	100	/* files over a limit named, at most */

/* One collection. */
struct oc {
	const struct vg_outputs	*o;
	const char		*dest;
	int			 dest_fd;	/* dest's directory */
	dev_t			 dest_dev;	/* and its identity, for skips */
	ino_t			 dest_ino;
	const char		*from;		/* "scratch" or "task" */
	const char		*root;		/* the tree being read */
	int			 root_fd;	/* its directory */
	int			 task_root;	/* root is the task dir */
	uint64_t		 bytes, max_bytes;
	int			 files, max_files;
	int			 full;		/* stop: enough listed */
	int			 over;		/* left out by the limits */
	struct vg_strv		 done;		/* relative paths copied */
	struct vg_json_writer	 fw, sw;	/* files, skipped lists */
	struct vg_buf		 fb, sb;
};

/* Writes raw (a JSON value written by another writer) as a value. */
static void
json_raw(struct vg_json_writer *w, const char *raw)
{
	/* The writer tracks commas: a placeholder through it, replaced. */
	vg_json_null(w);
	w->out->len -= 4;
	vg_buf_adds(w->out, raw);
}

/* Names in the task directory that are vigil's, never outputs. */
static int
reserved(const struct oc *c, const char *rel)
{
	static const char *const names[] = { "stdout", "stderr",
		"result.json", "monitor", "sandbox", "heartbeat", OUT_RECORD,
		"tmp", "outputs", VG_OUTPUTS_LEFT, NULL };
	size_t i, n = strcspn(rel, "/");

	if (!c->task_root)
		return 0;
	for (i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == n && strncmp(rel, names[i], n) == 0)
			return 1;
	/* A job step's record and log (schedulers/slurm-step.c): step,
	 * step.log, and step.N set aside for attempt N. */
	if (n == 4 && strncmp(rel, "step", 4) == 0)
		return 1;
	if (n <= 5 || strncmp(rel, "step.", 5) != 0)
		return 0;
	if (n == 8 && strncmp(rel + 5, "log", 3) == 0)
		return 1;
	for (i = 5; i < n; i++)
		if (rel[i] < '0' || rel[i] > '9')
			return 0;
	return 1;
}

/* Lists rel as not collected, with why. */
static void
skip(struct oc *c, const char *rel, const char *why)
{
	vg_json_obj_begin(&c->sw);
	vg_json_key(&c->sw, "path");
	vg_json_str(&c->sw, rel);
	vg_json_key(&c->sw, "from");
	vg_json_str(&c->sw, c->from);
	vg_json_key(&c->sw, "why");
	vg_json_str(&c->sw, why);
	vg_json_obj_end(&c->sw);
}

/* Copies the open file sfd of st to base in the directory dfd (a
 * temporary made there with O_EXCL, then renamed over base: a link at
 * base is replaced, never followed). */
static int
copy_fd(int sfd, const struct stat *st, int dfd, const char *base,
    const char *rel, struct vg_err *e)
{
	char tmp[NAME_MAX + 1], *buf;
	ssize_t n;
	int fd, rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), ".%.200s.vigil-tmp", base) >=
	    sizeof(tmp))
		return vg_err_set(e, VG_EINVAL, "outputs: name too long: '%s'",
		    rel);
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, (st->st_mode & 0777) | 0600);
	if (fd < 0)
		return vg_err_errno(e, "outputs: cannot create '%s' for '%s'",
		    tmp, rel);
	buf = vg_xmalloc(OUT_CHUNK);
	while ((n = read(sfd, buf, OUT_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = vg_err_errno(e, "outputs: reading '%s'", rel);
			break;
		}
		if (vg_write_all(fd, buf, (size_t)n) != 0) {
			rc = vg_err_errno(e, "outputs: writing '%s'", rel);
			break;
		}
	}
	free(buf);
	if (close(fd) != 0 && rc == 0)
		rc = vg_err_errno(e, "outputs: writing '%s'", rel);
	if (rc == 0 && renameat(dfd, tmp, dfd, base) != 0)
		rc = vg_err_errno(e, "outputs: renaming to '%s'", rel);
	if (rc != 0)
		(void)unlinkat(dfd, tmp, 0);
	return rc;
}

/* Opens the directory of rel beneath fd (fd itself, duplicated, when
 * rel has no slash) with mkdirs making what is missing; sets *base to
 * rel's last component. */
static int
parent_of(int fd, const char *rel, int mkdirs, const char **base,
    struct vg_err *e)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int dfd;

	*base = slash != NULL ? slash + 1 : rel;
	if (slash == NULL) {
		dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		return dfd >= 0 ? dfd : vg_err_errno(e, "outputs: "
		    "cannot duplicate a descriptor");
	}
	dir = vg_xstrndup(rel, (size_t)(slash - rel));
	if (mkdirs)
		dfd = vg_beneath_mkdirs(fd, dir, 0700, "the outputs "
		    "destination", e);
	else if ((dfd = vg_beneath_open(fd, dir, O_PATH | O_DIRECTORY, 0)) <
	    0)
		dfd = vg_err_errno(e, "outputs: '%s'", dir);
	free(dir);
	return dfd;
}

static int collect_path(struct oc *c, const char *rel, int depth,
    struct vg_err *e);

/* Collects the entries of the directory rel, open as fd (taken). */
static int
collect_dir(struct oc *c, const char *rel, int fd, int depth,
    struct vg_err *e)
{
	struct dirent *de;
	struct vg_strv names = VG_STRV_INIT;
	char *sub;
	DIR *d;
	size_t i;
	int rc = 0;

	if (depth >= OUT_DEPTH) {
		skip(c, rel, "deeper than 32 directory levels");
		close(fd);
		return 0;
	}
	if ((d = fdopendir(fd)) == NULL) {
		skip(c, rel, strerror(errno));
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			vg_strv_push(&names, de->d_name);
	closedir(d);
	for (i = 0; i < names.n && rc == 0 && !c->full; i++) {
		sub = vg_path_join(rel, names.v[i]);
		rc = collect_path(c, sub, depth + 1, e);
		free(sub);
	}
	vg_strv_release(&names);
	return rc;
}

/* True when rel was collected already (from an earlier glob). */
static int
seen(const struct oc *c, const char *rel)
{
	size_t i;

	for (i = 0; i < c->done.n; i++)
		if (strcmp(c->done.v[i], rel) == 0)
			return 1;
	return 0;
}

/*
 * Collects rel (a file or a directory) of the tree c->root_fd.  Every
 * component is opened beneath the tree's descriptor without following a
 * link (common/beneath.h): a link anywhere on the way is skipped, so
 * what the task linked in (a file vigil's user can read and the task
 * cannot, a record of the run) is never read or written.
 */
static int
collect_path(struct oc *c, const char *rel, int depth, struct vg_err *e)
{
	const char *base;
	struct stat st;
	int fd = -1, pfd = -1, sfd = -1, rc = 0;

	if (reserved(c, rel) || seen(c, rel))
		goto out;
	fd = vg_beneath_open(c->root_fd, rel, O_RDONLY | O_NONBLOCK |
	    O_NOCTTY, 0);
	if (fd < 0) {
		skip(c, rel, errno == ELOOP ? "a symbolic link (vigil never "
		    "collects through one)" : strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		skip(c, rel, strerror(errno));
		goto out;
	}
	if (st.st_dev == c->dest_dev && st.st_ino == c->dest_ino)
		goto out;	/* the destination itself */
	if (S_ISDIR(st.st_mode)) {
		rc = collect_dir(c, rel, fd, depth, e);
		fd = -1;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		skip(c, rel, "not a regular file");
		goto out;
	}
	if (st.st_nlink > 1) {
		skip(c, rel, "a file with other hard links");
		goto out;
	}
	if (c->files >= c->max_files || c->bytes + (uint64_t)st.st_size >
	    c->max_bytes) {
		skip(c, rel, c->files >= c->max_files ?
		    "over outputs.max_files" : "over outputs.max_bytes");
		/* Name the first ones left behind, then stop looking. */
		if (++c->over >= OUT_OVER_LISTED)
			c->full = 1;
		goto out;
	}
	if ((pfd = parent_of(c->dest_fd, rel, 1, &base, e)) < 0) {
		rc = pfd;
		goto out;
	}
	if (c->o->move && (sfd = parent_of(c->root_fd, rel, 0, &base, e)) >=
	    0 && renameat(sfd, base, pfd, base) == 0)
		goto done;
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if ((rc = copy_fd(fd, &st, pfd, base, rel, e)) != 0)
		goto out;
	if (c->o->move && sfd >= 0)
		(void)unlinkat(sfd, base, 0);
done:
	c->files++;
	c->bytes += (uint64_t)st.st_size;
	vg_strv_push(&c->done, rel);
	vg_json_obj_begin(&c->fw);
	vg_json_key(&c->fw, "path");
	vg_json_str(&c->fw, rel);
	vg_json_key(&c->fw, "from");
	vg_json_str(&c->fw, c->from);
	vg_json_key(&c->fw, "bytes");
	vg_json_int(&c->fw, (long long)st.st_size);
	vg_json_obj_end(&c->fw);
out:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	if (sfd >= 0)
		close(sfd);
	return rc;
}

/* Appends s to b with glob(3) metacharacters escaped. */
static void
glob_escape(struct vg_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (strchr("*?[]\\", *s) != NULL)
			vg_buf_addc(b, '\\');
		vg_buf_addc(b, *s);
	}
}

/* Collects every match of every glob in root.  glob(3) only names
 * candidates; each is opened beneath the root's descriptor. */
static int
collect_root(struct oc *c, struct vg_err *e)
{
	struct vg_buf pat = VG_BUF_INIT;
	struct vg_err le;
	glob_t g;
	size_t i, j, n;
	int rc = 0;

	vg_err_init(&le);
	if ((c->root_fd = vg_beneath_anchor(c->root, &le)) < 0)
		return 0;	/* no such tree this attempt */
	for (i = 0; i < c->o->paths.n && rc == 0 && !c->full; i++) {
		vg_buf_reset(&pat);
		glob_escape(&pat, c->root);
		vg_buf_addc(&pat, '/');
		vg_buf_adds(&pat, c->o->paths.v[i]);
		memset(&g, 0, sizeof(g));
		if (glob(vg_buf_str(&pat), 0, NULL, &g) != 0) {
			globfree(&g);
			continue;
		}
		n = strlen(c->root) + 1;
		for (j = 0; j < g.gl_pathc && rc == 0 && !c->full; j++)
			if (strlen(g.gl_pathv[j]) > n)
				rc = collect_path(c, g.gl_pathv[j] + n, 0, e);
		globfree(&g);
	}
	vg_buf_release(&pat);
	close(c->root_fd);
	c->root_fd = -1;
	return rc;
}

/*
 * Opens the destination directory dest, made where missing.  The
 * default one (tasks/<i>/outputs) is made beneath the run directory's
 * descriptor; of an outputs.dest, the fixed part before its first
 * ${{ }} is taken as the manifest gives it and what follows (values a
 * task's matrix or environment chose) is made beneath it, no link
 * followed.
 */
static int
dest_open(const struct vg_outputs *o, const struct vg_task *t,
    const char *run_dir, const char *dest, struct vg_err *e)
{
	const char *sub = o->dest != NULL ? strstr(o->dest, "${{") : NULL;
	char *anchor, *rel;
	size_t n = o->dest != NULL ? strlen(dest) : 0;
	int afd, fd, rc;

	if (o->dest == NULL) {
		anchor = vg_xstrdup(run_dir);
		rel = vg_xasprintf("tasks/%d/outputs", t->index);
	} else {
		/* The fixed part: its text is copied into dest as is, up to
		 * the last '/' before the first substitution. */
		if (sub != NULL && strncmp(o->dest, dest,
		    (size_t)(sub - o->dest)) == 0)
			for (n = (size_t)(sub - o->dest); n > 0 &&
			    dest[n - 1] != '/'; n--)
				;
		rel = vg_xstrdup(dest + n);
		while (n > 1 && dest[n - 1] == '/')
			n--;
		anchor = n > 0 ? vg_xstrndup(dest, n) : vg_xstrdup(".");
		if ((rc = vg_mkdir_p(anchor, 0700, e)) != 0) {
			free(anchor);
			free(rel);
			return rc;
		}
	}
	afd = vg_beneath_anchor(anchor, e);
	free(anchor);
	if (afd < 0 || rel[0] == '\0') {
		free(rel);
		return afd;
	}
	fd = vg_beneath_mkdirs(afd, rel, 0700, "the outputs destination", e);
	close(afd);
	free(rel);
	return fd;
}

/* Lists what a remote backend left on its side (VG_OUTPUTS_LEFT). */
static void
remote_left(struct oc *c, const char *task_dir)
{
	struct vg_buf b = VG_BUF_INIT;
	char *line, *nl, *tab;

	c->from = "remote";
	if (vg_beneath_read(task_dir, 0, VG_OUTPUTS_LEFT, 1u << 20, &b, NULL) ==
	    0 && b.data != NULL)
		for (line = b.data; (nl = strchr(line, '\n')) != NULL;
		    line = nl + 1) {
			*nl = '\0';
			if ((tab = strchr(line, '\t')) == NULL)
				continue;
			*tab = '\0';
			skip(c, tab + 1, line);
		}
	vg_buf_release(&b);
}

int
vg_outputs_collect(const struct vg_outputs *o, const struct vg_task *t,
    const char *run_dir, const char *task_dir, const char *scratch_dir,
    int attempt, enum vg_state st, struct vg_err *e)
{
	struct oc c;
	struct vg_buf rec = VG_BUF_INIT;
	struct vg_json_writer w;
	struct vg_err le;
	char *dest = NULL, wd[PATH_MAX];
	int rc, tfd;

	if (o->paths.n == 0 || task_dir == NULL ||
	    (o->when == VG_OUT_SUCCESS && st != VG_ST_SUCCEEDED) ||
	    (o->when == VG_OUT_FAILURE && st == VG_ST_SUCCEEDED))
		return 0;
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.max_bytes = o->max_bytes > 0 ? o->max_bytes : VG_OUTPUTS_MAX_BYTES;
	c.max_files = o->max_files > 0 ? o->max_files : VG_OUTPUTS_MAX_FILES;
	vg_json_writer_init(&c.fw, &c.fb);
	vg_json_writer_init(&c.sw, &c.sb);
	vg_json_arr_begin(&c.fw);
	vg_json_arr_begin(&c.sw);
	vg_err_init(&le);
	c.dest_fd = c.root_fd = -1;
	/* A relative outputs.dest is the run's working directory's: where
	 * the driver or task-exec runs (runner/core/origin.h). */
	if (getcwd(wd, sizeof(wd)) == NULL)
		rc = vg_err_set(&le, VG_EIO, "outputs.dest: cannot name the "
		    "working directory: %s", strerror(errno));
	else if ((rc = vg_outputs_dest(o, t, run_dir, wd, &dest, &le)) == 0 &&
	    (rc = c.dest_fd = dest_open(o, t, run_dir, dest, &le)) >= 0) {
		struct stat dst;

		rc = 0;
		c.dest = dest;
		if (fstat(c.dest_fd, &dst) == 0) {
			c.dest_dev = dst.st_dev;
			c.dest_ino = dst.st_ino;
		}
		if (scratch_dir != NULL) {
			c.from = "scratch";
			c.root = scratch_dir;
			rc = collect_root(&c, &le);
		}
		if (rc == 0) {
			c.from = "task";
			c.root = task_dir;
			c.task_root = 1;
			rc = collect_root(&c, &le);
		}
		if (rc == 0)
			remote_left(&c, task_dir);
	}
	vg_json_arr_end(&c.fw);
	vg_json_arr_end(&c.sw);

	vg_json_writer_init(&w, &rec);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "attempt");
	vg_json_int(&w, attempt);
	vg_json_key(&w, "state");
	vg_json_str(&w, vg_state_name(st));
	vg_json_key(&w, "dest");
	vg_json_str(&w, dest);
	vg_json_key(&w, "files");
	json_raw(&w, vg_buf_str(&c.fb));
	vg_json_key(&w, "skipped");
	json_raw(&w, vg_buf_str(&c.sb));
	vg_json_key(&w, "bytes");
	vg_json_int(&w, (long long)c.bytes);
	vg_json_key(&w, "error");
	vg_json_str(&w, rc != 0 ? le.msg : NULL);
	vg_json_obj_end(&w);
	vg_buf_addc(&rec, '\n');
	/* The record goes into the task directory, which the task could
	 * write: beneath its descriptor, never through a link. */
	if ((tfd = vg_beneath_anchor(task_dir, NULL)) >= 0) {
		(void)vg_beneath_replace(tfd, OUT_RECORD, rec.data, rec.len,
		    0600, "the task directory", NULL);
		close(tfd);
	}
	if (c.dest_fd >= 0)
		close(c.dest_fd);
	if (rc != 0)
		vg_err_set(e, rc, "%s", le.msg);
	vg_strv_release(&c.done);
	vg_buf_release(&c.fb);
	vg_buf_release(&c.sb);
	vg_buf_release(&rec);
	free(dest);
	return rc;
}

void
vg_outputs_after(const struct vg_outputs *o, const struct vg_task *t,
    const char *run_id, const char *run_dir, const char *task_dir,
    const char *scratch_dir, int attempt, enum vg_state st)
{
	struct vg_err e;

	if (o->paths.n == 0 || st == VG_ST_LOST || st == VG_ST_DENIED)
		return;
	vg_err_init(&e);
	if (vg_outputs_collect(o, t, run_dir, task_dir, scratch_dir, attempt,
	    st, &e) != 0)
		vg_warn("run %s: task %d: %s", run_id, t->index, e.msg);
}

int
vg_outputs_read(const char *task_dir, struct vg_buf *out)
{
	return vg_beneath_read(task_dir, 0, OUT_RECORD, 16u << 20, out, NULL);
}

int
vg_outputs_valid(const char *text, size_t len)
{
	static const struct vg_json_limits lim = {
		.max_bytes = 16u << 20, .max_depth = 4,
		.max_values = 1u << 20,
	};
	struct vg_json_doc *doc = NULL;
	int ok;

	ok = vg_json_parse(text, len, &lim, &doc, NULL) == 0 &&
	    vg_json_root(doc)->type == VG_JSON_OBJECT &&
	    vg_json_get(vg_json_root(doc), "files") != NULL;
	vg_json_free(doc);
	return ok;
}
