/*
 * origin.c - recording where a run was made and entering it again; see
 * origin.h.  The directory is entered through a descriptor whose
 * identity is checked, never by its name alone: a directory replaced
 * since (by a task of the run, or by someone else on the way) is not
 * entered unless common/adopt.c finds that no one but the user can
 * change it.  What to record of the environment is backends/task-env.c's
 * list; this file only keeps and restores those names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/adopt.h"
#include "common/json.h"
#include "runner/core/origin.h"

void
vg_origin_release(struct vg_origin *o)
{
	if (o == NULL)
		return;
	free(o->workdir);
	o->workdir = NULL;
	vg_strv_release(&o->env);
}

int
vg_origin_capture(struct vg_origin *o, struct vg_err *e)
{
	char cwd[PATH_MAX];
	struct stat sb;
	const char *v;
	size_t i;

	if (getcwd(cwd, sizeof(cwd)) == NULL || stat(cwd, &sb) != 0)
		return vg_err_set(e, VG_EIO, "cannot name the current "
		    "directory: %s", strerror(errno));
	o->workdir = vg_xstrdup(cwd);
	o->dev = (unsigned long long)sb.st_dev;
	o->ino = (unsigned long long)sb.st_ino;
	for (i = 0; vg_task_env_caller[i] != NULL; i++)
		if ((v = getenv(vg_task_env_caller[i])) != NULL)
			vg_strv_pushf(&o->env, "%s=%s", vg_task_env_caller[i],
			    v);
	return 0;
}

void
vg_origin_to_json(const struct vg_origin *o, struct vg_buf *out)
{
	struct vg_json_writer w;
	const char *eq;
	char name[64], num[32];
	size_t i;

	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "workdir");
	vg_json_str(&w, o->workdir);
	/* As strings: a JSON number is a double, and an inode number
	 * may need all 64 bits. */
	snprintf(num, sizeof(num), "%llu", o->dev);
	vg_json_key(&w, "dev");
	vg_json_str(&w, num);
	snprintf(num, sizeof(num), "%llu", o->ino);
	vg_json_key(&w, "ino");
	vg_json_str(&w, num);
	vg_json_key(&w, "env");
	vg_json_obj_begin(&w);
	for (i = 0; i < o->env.n; i++) {
		if ((eq = strchr(o->env.v[i], '=')) == NULL ||
		    (size_t)(eq - o->env.v[i]) >= sizeof(name))
			continue;
		memcpy(name, o->env.v[i], (size_t)(eq - o->env.v[i]));
		name[eq - o->env.v[i]] = '\0';
		vg_json_key(&w, name);
		vg_json_str(&w, eq + 1);
	}
	vg_json_obj_end(&w);
	vg_json_obj_end(&w);
}

/* True when name is one of the variables a run records. */
static int
recorded_name(const char *name)
{
	size_t i;

	for (i = 0; vg_task_env_caller[i] != NULL; i++)
		if (strcmp(vg_task_env_caller[i], name) == 0)
			return 1;
	return 0;
}

int
vg_origin_from_json(const char *text, size_t len, struct vg_origin *o,
    struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root, *env, *v;
	struct vg_err pe;
	const char *wd;
	size_t i;
	int rc;

	vg_err_init(&pe);
	if (vg_json_parse(text, len, NULL, &doc, &pe) != 0)
		return vg_err_set(e, VG_EPARSE, "run origin: %s", pe.msg);
	root = vg_json_root(doc);
	wd = vg_json_get_str(root, "workdir", NULL);
	env = vg_json_get(root, "env");
	if (wd == NULL || wd[0] != '/' || (env != NULL &&
	    env->type != VG_JSON_OBJECT)) {
		rc = vg_err_set(e, VG_EPARSE, "run origin: no absolute "
		    "'workdir'");
		goto out;
	}
	o->workdir = vg_xstrdup(wd);
	o->dev = strtoull(vg_json_get_str(root, "dev", "0"), NULL, 10);
	o->ino = strtoull(vg_json_get_str(root, "ino", "0"), NULL, 10);
	for (i = 0; env != NULL && i < env->len; i++) {
		v = env->items[i];
		/* Only the names vigil records, whatever the file says. */
		if (v->type != VG_JSON_STRING || !recorded_name(env->keys[i]))
			continue;
		vg_strv_pushf(&o->env, "%s=%s", env->keys[i], v->str);
	}
	rc = 0;
out:
	vg_json_free(doc);
	return rc;
}

/* The recorded value of name in o, or NULL when it was unset. */
static const char *
env_of(const struct vg_origin *o, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < o->env.n; i++)
		if (strncmp(o->env.v[i], name, n) == 0 &&
		    o->env.v[i][n] == '=')
			return o->env.v[i] + n + 1;
	return NULL;
}

/* Opens o's directory when it is the recorded one, or one adopt.c
 * trusts; returns the descriptor or a negative vg_rc. */
static int
open_workdir(const struct vg_origin *o, const char *run_id,
    struct vg_err *e)
{
	struct vg_err ae;
	struct stat sb;
	int fd, rc;

	if ((fd = open(o->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return vg_err_set(e, VG_ENOENT, "run '%s' was made in "
			    "'%s', which no longer exists", run_id,
			    o->workdir);
		return vg_err_set(e, VG_EIO, "cannot open '%s', the working "
		    "directory of run '%s': %s", o->workdir, run_id,
		    strerror(errno));
	}
	if (fstat(fd, &sb) == 0 && (unsigned long long)sb.st_dev == o->dev &&
	    (unsigned long long)sb.st_ino == o->ino)
		return fd;
	close(fd);
	/* Made again since, or reached through a link put on the way:
	 * only a directory no one else can change will do. */
	vg_err_init(&ae);
	if ((rc = vg_adopt_dir(o->workdir, 0, 0, "working directory",
	    &ae)) >= 0)
		return rc;
	return vg_err_set(e, VG_EDENIED, "'%s', the working directory of "
	    "run '%s', is not the directory the run was made in, and vigil "
	    "does not trust the one there now: %s", o->workdir, run_id,
	    ae.msg);
}

int
vg_origin_enter(const struct vg_origin *o, const char *run_id,
    struct vg_err *e)
{
	const char *v;
	size_t i;
	int fd;

	if ((fd = open_workdir(o, run_id, e)) < 0)
		return fd;
	if (fchdir(fd) != 0) {
		fd = vg_err_set(e, VG_EIO, "cannot change to '%s', the "
		    "working directory of run '%s': %s", o->workdir, run_id,
		    strerror(errno));
		close(fd);
		return fd;
	}
	close(fd);
	for (i = 0; vg_task_env_caller[i] != NULL; i++) {
		if ((v = env_of(o, vg_task_env_caller[i])) != NULL)
			setenv(vg_task_env_caller[i], v, 1);
		else
			unsetenv(vg_task_env_caller[i]);
	}
	return 0;
}

int
vg_origin_enter_json(const char *text, size_t len, const char *run_id,
    struct vg_err *e)
{
	struct vg_origin o = VG_ORIGIN_INIT;
	int rc;

	if (text == NULL || len == 0)
		return 0;
	if ((rc = vg_origin_from_json(text, len, &o, e)) == 0)
		rc = vg_origin_enter(&o, run_id, e);
	vg_origin_release(&o);
	return rc;
}

char *
vg_origin_workdir(const char *text)
{
	struct vg_origin o = VG_ORIGIN_INIT;
	struct vg_err e;
	char *wd = NULL;

	vg_err_init(&e);
	if (text != NULL && *text != '\0' &&
	    vg_origin_from_json(text, strlen(text), &o, &e) == 0) {
		wd = o.workdir;
		o.workdir = NULL;
	}
	vg_origin_release(&o);
	return wd;
}
