/*
 * reuse.c - reuse keys and the files a hit brings (reuse.h).
 *
 * The description is text, one "field: value" line each, values of
 * commands and environment JSON-quoted so that a line never breaks;
 * the key is its 128-bit hash (common/hash.h).  The lines every task
 * shares (backend, image, confinement, isolation, working directory,
 * inputs) are made once per run; a task adds its command, environment
 * and GPUs.  Input files are hashed whole (mmap) unless the store's
 * stat cache has their hash for the same device, inode, size and
 * mtime; a file changed within INPUT_RACY seconds is not cached (its
 * mtime could stay the same across a later write, as git's "racy"
 * index entries).
 *
 * Files are moved by this process, which may have more privilege than
 * the tasks that wrote them: every path under a task directory is
 * opened beneath it (common/beneath.h) and a file is taken only when it
 * is a regular file of vigil's effective user.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/core/reuse.h"

/* Seconds within which a changed input is not put in the stat cache. */
#define INPUT_RACY	2
/* Depth of directories walked under a task directory or an input. */
#define WALK_DEPTH	32

/* Appends "name: " and the strings of sv joined by ",", then newline;
 * nothing for an empty list. */
static void
line_list(struct vg_buf *b, const char *name, const struct vg_strv *sv)
{
	size_t i;

	if (sv->n == 0)
		return;
	vg_buf_printf(b, "%s: ", name);
	for (i = 0; i < sv->n; i++)
		vg_buf_printf(b, "%s%s", i > 0 ? "," : "", sv->v[i]);
	vg_buf_addc(b, '\n');
}

/* The isolation settings, one line each, as the manifest gives them. */
static void
isolation_lines(struct vg_buf *b, const struct vg_isolation_conf *c)
{
	static const char *const level[] = { "standard", "none", "strict" };

	vg_buf_printf(b, "isolation: %s%s network %s ptrace %s workdir %s\n",
	    (unsigned)c->level < 3 ? level[c->level] : "?",
	    c->required ? " required" : "",
	    vg_net_mode_name(vg_isolation_net(c)),
	    c->ptrace != NULL ? c->ptrace : "default",
	    c->workdir != NULL ? c->workdir : "default");
	line_list(b, "isolation.network.allow", &c->network.allow);
	line_list(b, "isolation.network.deny", &c->network.deny);
	line_list(b, "isolation.writable", &c->writable);
	line_list(b, "isolation.readable", &c->readable);
	line_list(b, "isolation.devices", &c->devices);
	line_list(b, "isolation.capabilities", &c->capabilities);
	line_list(b, "isolation.sockets", &c->sockets);
}

/* The working directory of m's tasks as an absolute path (caller
 * frees): workdir, relative to the current directory, or it. */
static char *
workdir_abs(const struct vg_manifest *m)
{
	char cwd[4096];

	if (m->workdir != NULL && m->workdir[0] == '/')
		return vg_xstrdup(m->workdir);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		vg_strlcpy(cwd, ".", sizeof(cwd));
	return m->workdir != NULL ? vg_path_join(cwd, m->workdir) :
	    vg_xstrdup(cwd);
}

/* Adds the regular files under the directory path (links not
 * followed) to out, depth levels deep at most. */
static void
walk_inputs(const char *path, int depth, struct vg_strv *out)
{
	struct dirent *de;
	struct stat sb;
	char *sub;
	DIR *dir;

	if (depth <= 0 || (dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		sub = vg_path_join(path, de->d_name);
		if (lstat(sub, &sb) == 0 && S_ISREG(sb.st_mode))
			vg_strv_take(out, sub);
		else {
			if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
				walk_inputs(sub, depth - 1, out);
			free(sub);
		}
	}
	closedir(dir);
}

/* qsort comparison of two strings. */
static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hashes the open file fd of size bytes into hex (16 digits). */
static int
hash_fd(int fd, long long size, char hex[33], const char *path,
    struct vg_err *e)
{
	if (vg_hash_fd_hex(fd, (uint64_t)size, hex) != 0)
		return vg_err_errno(e, "input '%s': cannot read it", path);
	return 0;
}

/* The content hash of input file path (a regular file) into hex, from
 * the stat cache or read, and its size into *size. */
static int
input_hash(struct vg_reuse *r, const char *path, char hex[33],
    long long *size, struct vg_err *e)
{
	struct vg_reuse_stat rs;
	struct stat sb;
	int fd, found, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return vg_err_errno(e, "input '%s': cannot open it", path);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return vg_err_set(e, VG_EINVAL, "input '%s': not a regular "
		    "file", path);
	}
	rs.dev = (unsigned long long)sb.st_dev;
	rs.ino = (unsigned long long)sb.st_ino;
	rs.size = (long long)sb.st_size;
	rs.mtime_ns = (long long)sb.st_mtim.tv_sec * 1000000000LL +
	    sb.st_mtim.tv_nsec;
	*size = rs.size;
	if ((rc = vg_store_reuse_stat_get(r->st, path, &rs, hex, &found,
	    e)) != 0 || found) {
		close(fd);
		return rc;
	}
	rc = hash_fd(fd, rs.size, hex, path, e);
	close(fd);
	if (rc != 0)
		return rc;
	r->hashed++;
	if (sb.st_mtim.tv_sec + INPUT_RACY < time(NULL))
		rc = vg_store_reuse_stat_put(r->st, path, &rs, hex, e);
	return rc;
}

/* The input lines: each file the globs of m match, sorted, once. */
static int
input_lines(struct vg_reuse *r, const struct vg_manifest *m,
    const char *wd, struct vg_err *e)
{
	struct vg_strv files = VG_STRV_INIT;
	struct stat sb;
	size_t i, n, wl = strlen(wd);
	long long size = 0;
	char hex[33], *pat;
	const char *rel;
	glob_t g;
	int rc = 0;

	for (i = 0; i < m->inputs.n; i++) {
		pat = vg_path_join(wd, m->inputs.v[i]);
		memset(&g, 0, sizeof(g));
		if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc == 0)
			vg_buf_printf(&r->fixed, "input: %s (no match)\n",
			    m->inputs.v[i]);
		for (n = 0; n < g.gl_pathc; n++) {
			if (stat(g.gl_pathv[n], &sb) == 0 &&
			    S_ISDIR(sb.st_mode))
				walk_inputs(g.gl_pathv[n], WALK_DEPTH, &files);
			else
				vg_strv_push(&files, g.gl_pathv[n]);
		}
		globfree(&g);
		free(pat);
	}
	if (files.n > 1)
		qsort(files.v, files.n, sizeof(*files.v), str_cmp);
	for (i = 0; i < files.n && rc == 0; i++) {
		if (i > 0 && strcmp(files.v[i], files.v[i - 1]) == 0)
			continue;
		if ((rc = input_hash(r, files.v[i], hex, &size, e)) != 0)
			break;
		rel = files.v[i];
		if (strncmp(rel, wd, wl) == 0 && rel[wl] == '/')
			rel += wl + 1;
		vg_buf_printf(&r->fixed, "input: %s %lld %s\n", rel, size,
		    hex);
	}
	vg_strv_release(&files);
	return rc;
}

int
vg_reuse_init(struct vg_reuse *r, struct vg_store *st,
    const struct vg_manifest *m, const struct vg_backend_ops *ops,
    struct vg_err *e)
{
	struct vg_buf img = VG_BUF_INIT;
	const char *conf;
	char *wd;
	int rc;

	memset(r, 0, sizeof(*r));
	r->st = st;
	vg_buf_init(&r->fixed);
	vg_buf_init(&r->desc);
	vg_buf_init(&r->full);
	/* The description's own version: a change of what goes into keys
	 * changes every key. */
	vg_buf_adds(&r->fixed, "format: 1\n");
	vg_buf_printf(&r->fixed, "backend: %s\n", ops != NULL ? ops->p.name :
	    vg_manifest_plugin(m, VG_PLUGIN_BACKEND));
	if ((rc = vg_backend_image_id(ops, m, &img, e)) != 0) {
		vg_buf_release(&img);
		return rc;
	}
	if (img.len > 0)
		vg_buf_printf(&r->fixed, "image: %s\n", vg_buf_str(&img));
	vg_buf_release(&img);
	if (ops != NULL && (conf = vg_backend_confinement(ops, m)) != NULL)
		vg_buf_printf(&r->fixed, "confinement: %s\n", conf);
	isolation_lines(&r->fixed, &m->isolation);
	wd = workdir_abs(m);
	vg_buf_printf(&r->fixed, "workdir: %s\n", wd);
	rc = input_lines(r, m, wd, e);
	free(wd);
	vg_hash128_hex(r->fixed.data, r->fixed.len, r->parts);
	if (rc == 0)
		rc = vg_store_reuse_part_put(st, r->parts, vg_buf_str(&r->fixed),
		    e);
	return rc;
}

void
vg_reuse_release(struct vg_reuse *r)
{
	if (r == NULL)
		return;
	vg_buf_release(&r->fixed);
	vg_buf_release(&r->desc);
	vg_buf_release(&r->full);
	vg_reuse_rec_release(&r->rec);
}

/* Index comparison of env entries by key, for a stable order. */
static const struct vg_kvs *sort_env;

static int
env_cmp(const void *a, const void *b)
{
	return strcmp(sort_env->v[*(const size_t *)a].key,
	    sort_env->v[*(const size_t *)b].key);
}

void
vg_reuse_key(struct vg_reuse *r, const struct vg_task *t,
    char key[VG_REUSE_KEY_LEN + 1])
{
	const struct vg_resources *res = &t->resources;
	struct vg_buf *b = &r->desc;
	size_t i, ord[64], *o = ord;

	vg_buf_reset(b);
	if (t->command.is_argv) {
		vg_buf_adds(b, "argv:");
		for (i = 0; i < t->command.argv.n; i++) {
			vg_buf_addc(b, ' ');
			vg_json_quote(b, t->command.argv.v[i],
			    strlen(t->command.argv.v[i]));
		}
	} else {
		vg_buf_adds(b, "command: ");
		vg_json_quote(b, t->command.shell, strlen(t->command.shell));
	}
	vg_buf_addc(b, '\n');
	if (t->env.n > sizeof(ord) / sizeof(ord[0]))
		o = vg_xcalloc(t->env.n, sizeof(*o));
	for (i = 0; i < t->env.n; i++)
		o[i] = i;
	sort_env = &t->env;
	qsort(o, t->env.n, sizeof(*o), env_cmp);
	for (i = 0; i < t->env.n; i++) {
		vg_buf_printf(b, "env: %s=", t->env.v[o[i]].key);
		vg_json_quote(b, t->env.v[o[i]].value,
		    strlen(t->env.v[o[i]].value));
		vg_buf_addc(b, '\n');
	}
	if (o != ord)
		free(o);
	if (res->gpus > 0 || res->gpus_per_task > 0)
		vg_buf_printf(b, "gpus: %d per-task %d type %s\n", res->gpus,
		    res->gpus_per_task, res->gpu_type != NULL ?
		    res->gpu_type : "any");
	vg_buf_reset(&r->full);
	vg_buf_add(&r->full, b->data, b->len);
	vg_buf_add(&r->full, r->fixed.data, r->fixed.len);
	vg_hash128_hex(r->full.data, r->full.len, key);
}

/* Splits the line at *p ("REL SIZE\n") into rel (a buffer) and *size,
 * moving *p past it; 0 at the end, -1 on a malformed line. */
static int
next_file(const char **p, char *rel, size_t n, long long *size)
{
	const char *nl, *sp;
	size_t len;

	if (**p == '\0')
		return 0;
	if ((nl = strchr(*p, '\n')) == NULL)
		nl = *p + strlen(*p);
	for (sp = nl; sp > *p && sp[-1] != ' '; sp--)
		;
	if (sp == *p || (len = (size_t)(sp - 1 - *p)) >= n)
		return -1;
	memcpy(rel, *p, len);
	rel[len] = '\0';
	*size = strtoll(sp, NULL, 10);
	*p = *nl != '\0' ? nl + 1 : nl;
	return 1;
}

/* Opens the directory of rel beneath dirfd (its last component is the
 * file's name, put in *base); -1 with errno set. */
static int
parent_of(int dirfd, const char *rel, const char **base)
{
	const char *sl = strrchr(rel, '/');
	char dir[4096];

	*base = sl != NULL ? sl + 1 : rel;
	if (sl == NULL)
		return fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if ((size_t)(sl - rel) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, rel, (size_t)(sl - rel));
	dir[sl - rel] = '\0';
	return vg_beneath_open(dirfd, dir, O_RDONLY | O_DIRECTORY, 0);
}

/* True when name in dirfd is a regular file of this user of size
 * bytes (not followed); sb gets its stat. */
static int
file_ok(int dirfd, const char *name, long long size, struct stat *sb)
{
	return fstatat(dirfd, name, sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb->st_mode) && sb->st_uid == geteuid() &&
	    (long long)sb->st_size == size;
}

int
vg_reuse_find(struct vg_reuse *r, const char *key, int *hit,
    struct vg_err *e)
{
	struct vg_err ae;
	struct stat sb;
	const char *p, *base;
	char rel[4096];
	long long size;
	int rc, found, afd, pfd, more;

	*hit = 0;
	if ((rc = vg_store_reuse_get(r->st, key, &r->rec, &found, e)) != 0 ||
	    !found)
		return rc;
	p = r->rec.files != NULL ? r->rec.files : "";
	if (*p == '\0') {
		*hit = 1;
		return 0;
	}
	vg_err_init(&ae);
	if ((afd = vg_beneath_anchor(r->rec.dir, &ae)) < 0)
		return 0;
	found = 1;
	while (found && (more = next_file(&p, rel, sizeof(rel), &size)) > 0) {
		if ((pfd = parent_of(afd, rel, &base)) < 0) {
			found = 0;
			break;
		}
		found = file_ok(pfd, base, size, &sb);
		close(pfd);
	}
	close(afd);
	*hit = found && more == 0;
	return 0;
}

/* Copies the regular file name of sfd into a new file name of dfd, by
 * copy_file_range(2) (a reflink where the file system shares extents). */
static int
copy_file(int sfd, int dfd, const char *name)
{
	struct stat sb;
	ssize_t w;
	int in, out, rc = -1;

	if ((in = vg_beneath_open(sfd, name, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return -1;
	if (fstat(in, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid()) {
		close(in);
		errno = EPERM;
		return -1;
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (out >= 0) {
		do
			w = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		while (w > 0);
		rc = w == 0 ? 0 : -1;
		close(out);
	}
	close(in);
	return rc;
}

/* Brings file rel of size bytes from the anchor sfd to dfd. */
static int
bring_one(int sfd, int dfd, const char *rel, long long size,
    struct vg_err *e)
{
	struct stat ss, ds;
	const char *base;
	char dir[4096];
	int sp, dp = -1, rc = 0;

	if ((sp = parent_of(sfd, rel, &base)) < 0)
		return vg_err_errno(e, "reuse: cannot open '%s'", rel);
	if (base != rel) {
		vg_strlcpy(dir, rel, sizeof(dir));
		dir[base - rel - 1] = '\0';
		if ((dp = vg_beneath_mkdirs(dfd, dir, 0700, "task directory",
		    e)) < 0) {
			close(sp);
			return dp;
		}
	} else
		dp = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if (!file_ok(sp, base, size, &ss))
		rc = vg_err_set(e, VG_ENOENT, "reuse: '%s' is gone or changed",
		    rel);
	else {
		(void)unlinkat(dp, base, 0);
		if (linkat(sp, base, dp, base, 0) != 0 &&
		    copy_file(sp, dp, base) != 0)
			rc = vg_err_errno(e, "reuse: cannot link or copy '%s'",
			    rel);
		/* Once in place: the file that was checked, or a copy of
		 * its size (a swap between check and link is caught). */
		else if (!file_ok(dp, base, size, &ds) ||
		    (ds.st_nlink > 1 && (ds.st_ino != ss.st_ino ||
		    ds.st_dev != ss.st_dev))) {
			(void)unlinkat(dp, base, 0);
			rc = vg_err_set(e, VG_ENOENT, "reuse: '%s' changed "
			    "while it was linked", rel);
		}
	}
	close(sp);
	if (dp >= 0)
		close(dp);
	return rc;
}

/* Removes the files of the list p, up to (not including) stop, from
 * the directory dfd. */
static void
unbring(int dfd, const char *p, const char *stop)
{
	const char *base;
	char rel[4096];
	long long size;
	int pfd;

	while (p < stop && next_file(&p, rel, sizeof(rel), &size) > 0) {
		if ((pfd = parent_of(dfd, rel, &base)) < 0)
			continue;
		(void)unlinkat(pfd, base, 0);
		close(pfd);
	}
}

int
vg_reuse_bring(const struct vg_reuse_rec *rec, const char *dst,
    struct vg_err *e)
{
	const char *p = rec->files != NULL ? rec->files : "", *at;
	char rel[4096];
	long long size;
	int sfd, dfd, rc = 0, more;

	if (*p == '\0')
		return 0;
	if ((sfd = vg_beneath_anchor(rec->dir, e)) < 0)
		return sfd;
	if ((dfd = vg_beneath_anchor(dst, e)) < 0) {
		close(sfd);
		return dfd;
	}
	at = p;
	while (rc == 0 && (more = next_file(&at, rel, sizeof(rel),
	    &size)) != 0) {
		if (more < 0)
			rc = vg_err_set(e, VG_ESTATE, "reuse: the entry's file "
			    "list is malformed");
		else
			rc = bring_one(sfd, dfd, rel, size, e);
	}
	if (rc != 0)
		unbring(dfd, p, at);
	close(sfd);
	close(dfd);
	return rc;
}

/* Adds the regular files of the directory fd (prefix: its path under
 * the task directory) to out. */
static void
files_walk(int fd, const char *prefix, int depth, struct vg_strv *out)
{
	struct dirent *de;
	struct stat sb;
	char rel[4096];
	DIR *dir;
	int sub;

	if (depth <= 0 || (sub = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		return;
	if ((dir = fdopendir(sub)) == NULL) {
		close(sub);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix != '\0' ?
		    "/" : "", de->d_name);
		if (S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
		    strchr(de->d_name, '\n') == NULL)
			vg_strv_pushf(out, "%s %lld", rel,
			    (long long)sb.st_size);
		else if (S_ISDIR(sb.st_mode) && (sub = vg_beneath_open(fd,
		    de->d_name, O_RDONLY | O_DIRECTORY, 0)) >= 0) {
			files_walk(sub, rel, depth - 1, out);
			close(sub);
		}
	}
	closedir(dir);
}

int
vg_reuse_files(const char *dir, struct vg_buf *out, struct vg_err *e)
{
	struct vg_strv files = VG_STRV_INIT;
	struct vg_err ae;
	size_t i;
	int fd;

	(void)e;
	vg_err_init(&ae);
	if ((fd = vg_beneath_anchor(dir, &ae)) < 0)
		return 0;	/* no directory: nothing was kept */
	files_walk(fd, "", WALK_DEPTH, &files);
	close(fd);
	if (files.n > 1)
		qsort(files.v, files.n, sizeof(*files.v), str_cmp);
	for (i = 0; i < files.n; i++)
		vg_buf_printf(out, "%s\n", files.v[i]);
	vg_strv_release(&files);
	return 0;
}
