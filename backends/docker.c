/*
 * docker.c - the docker backend: runs each attempt in a container through
 * the Docker Engine API (dockerd, or podman's compatible service) over its
 * unix socket with libcurl.  No docker CLI is involved.
 *
 * One attempt is: negotiate the API version (GET /version), build the
 * create request and check it for host access (every field of it that
 * can reach the host, then GET /volumes/NAME for its named volumes,
 * judged by driver and options), make sure
 * the image is there (GET /images/NAME/json, POST /images/create), create
 * the container hardened, start it, stream its logs into the task's
 * stdout and stderr files, wait for it with the timeout, then remove it.
 * The backend implements the blocking run(); backend.c forks the monitor
 * process that calls it.  A SIGTERM or SIGINT to that process stops the
 * container and ends the attempt as CANCELLED.
 *
 * Containers carry labels naming the run, the task and the process that
 * watches them, so reap() can find and remove what a killed monitor left.
 * The policy gate decides about commands; this file finds host access
 * in the request it is about to send (so nothing slips between the
 * manifest and the request), fails closed on what it cannot tell, and
 * asks the policy for the verdict (vg_policy_host_access).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/json.h"
#include "common/log.h"
#include "common/path.h"
#include "common/str.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"
#include "runner/manifest/schema-table.h"

#define DOCKER_DEFAULT_HOST	"unix:///var/run/docker.sock"
#define DOCKER_DEFAULT_PIDS	4096
/* Replies of the Engine API are small; bound the parser accordingly. */
#define DOCKER_JSON_MAX		(4u << 20)
/* Timeouts for calls that should answer at once. */
#define DOCKER_CALL_TIMEOUT	60.0
#define DOCKER_PULL_TIMEOUT	3600.0
/* Longest progress line of a pull we look at. */
#define DOCKER_PULL_LINE_MAX	(64u << 10)

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

/* Parses "MAJOR.MINOR" into one comparable number; -1 when malformed. */
static long
api_num(const char *v)
{
	char *end;
	long major, minor;

	if (v == NULL || *v < '0' || *v > '9')
		return -1;
	major = strtol(v, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	minor = strtol(end + 1, &end, 10);
	if (*end != '\0' || major > 1000 || minor > 1000)
		return -1;
	return major * 1000 + minor;
}

/* Negotiates the API version; see docker.h. */
int
vg_docker_api_version(const char *server, const char *server_min,
    char out[16], struct vg_err *e)
{
	long s = api_num(server), ours = api_num(VG_DOCKER_API_MAX);
	long lo = api_num(VG_DOCKER_API_MIN), smin, v;

	out[0] = '\0';
	if (s < 0)
		return vg_err_set(e, VG_EBACKEND, "docker engine reports API "
		    "version '%s', expected MAJOR.MINOR",
		    server ? server : "(none)");
	v = s < ours ? s : ours;
	if (v < lo)
		return vg_err_set(e, VG_EUNSUPPORTED, "docker engine API %s is "
		    "older than %s, the oldest vigil supports", server,
		    VG_DOCKER_API_MIN);
	if (server_min != NULL && (smin = api_num(server_min)) > v)
		return vg_err_set(e, VG_EUNSUPPORTED, "docker engine needs API "
		    ">= %s, vigil speaks up to %s", server_min,
		    VG_DOCKER_API_MAX);
	snprintf(out, 16, "%u.%u", (unsigned)(v / 1000 % 1000),
	    (unsigned)(v % 1000));
	return 0;
}

/* True for the spellings of a host path in a bind source. */
static int
is_host_path(const char *s)
{
	if (s[0] == '/' || s[0] == '~' || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0 || strncmp(s, "./", 2) == 0 ||
	    strncmp(s, "../", 3) == 0 || s[0] == '\\')
		return 1;
	/* C:\dir or C:/dir (a Windows engine, or a confused manifest) */
	return ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' &&
	    s[0] <= 'z')) && s[1] == ':' && (s[2] == '\\' || s[2] == '/' ||
	    s[2] == '\0');
}

/* True when every byte of name is valid in a volume name. */
static int
is_volume_name(const char *s)
{
	const char *p;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	    (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			return 0;
	return 1;
}

/* True when each comma-separated option is one the engine knows. */
static int
valid_vol_mode(const char *mode)
{
	static const char *const ok[] = {
		"ro", "rw", "z", "Z", "shared", "slave", "private", "rshared",
		"rslave", "rprivate", "nocopy", "delegated", "cached",
		"consistent",
	};
	const char *p = mode, *comma;
	size_t n, i;

	if (*mode == '\0')
		return 0;
	for (;;) {
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if (strlen(ok[i]) == n && strncmp(ok[i], p, n) == 0)
				break;
		if (i == sizeof(ok) / sizeof(ok[0]))
			return 0;
		if (comma == NULL)
			return 1;
		p = comma + 1;
	}
}

/* Splits a docker.volumes entry; see docker.h. */
int
vg_docker_vol_parse(const char *spec, struct vg_docker_vol *v,
    struct vg_err *e)
{
	const char *p = spec, *c1, *c2;

	memset(v, 0, sizeof(*v));
	if (spec == NULL || *spec == '\0')
		return vg_err_set(e, VG_EINVAL, "empty volume: expected "
		    "SRC:DST[:ro|rw] or an absolute DST");
	/* A drive letter's colon is part of the source: "C:\\x:/d", and
	 * "c:/x:/d" (but "c:/d" is volume c on /d). */
	if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
	    p[1] == ':' && (p[2] == '\\' || (p[2] == '/' &&
	    (c1 = strchr(p + 2, ':')) != NULL && c1[1] == '/')))
		p += 2;
	c1 = strchr(p, ':');
	if (c1 == NULL) {
		if (spec[0] != '/')
			return vg_err_set(e, VG_EINVAL, "volume '%s': expected "
			    "SRC:DST[:ro|rw] or an absolute DST", spec);
		v->kind = VG_DOCKER_VOL_ANON;
		v->dst = vg_xstrdup(spec);
		return 0;
	}
	c2 = strchr(c1 + 1, ':');
	v->src = vg_xstrndup(spec, (size_t)(c1 - spec));
	v->dst = c2 ? vg_xstrndup(c1 + 1, (size_t)(c2 - c1 - 1)) :
	    vg_xstrdup(c1 + 1);
	v->mode = c2 ? vg_xstrdup(c2 + 1) : NULL;
	if (v->src[0] == '\0') {
		vg_err_set(e, VG_EINVAL, "volume '%s': empty source before "
		    "':'", spec);
		goto bad;
	}
	if (v->dst[0] != '/') {
		vg_err_set(e, VG_EINVAL, "volume '%s': destination '%s' must "
		    "be an absolute path in the container", spec, v->dst);
		goto bad;
	}
	if (v->mode != NULL && !valid_vol_mode(v->mode)) {
		vg_err_set(e, VG_EINVAL, "volume '%s': unknown mode '%s' "
		    "(valid: ro, rw, z, Z, nocopy, [r]shared, [r]slave, "
		    "[r]private, comma-separated)", spec, v->mode);
		goto bad;
	}
	if (is_host_path(v->src))
		v->kind = VG_DOCKER_VOL_HOST;
	else if (is_volume_name(v->src))
		v->kind = VG_DOCKER_VOL_NAMED;
	else {
		vg_err_set(e, VG_EINVAL, "volume '%s': source '%s' is neither "
		    "a path (/, ./, ../, ~) nor a volume name "
		    "([A-Za-z0-9][A-Za-z0-9_.-]*)", spec, v->src);
		goto bad;
	}
	return 0;
bad:
	vg_docker_vol_release(v);
	return VG_EINVAL;
}

/* Frees the strings of v. */
void
vg_docker_vol_release(struct vg_docker_vol *v)
{
	free(v->src);
	free(v->dst);
	free(v->mode);
	memset(v, 0, sizeof(*v));
}

/* Parses a boolean option value: "" (the key alone), true/false, 1/0. */
static int
mount_bool(const char *v, int *out)
{
	if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

/* Parses a tmpfs size: bytes with an optional k, m or g suffix. */
static int
mount_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (v == NULL || *v < '0' || *v > '9')
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || n > (1ULL << 50))
		return -1;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0' || n == 0)
		return -1;
	*out = n;
	return 0;
}

/* Takes one KEY[=VALUE] item of a docker.mounts entry. */
static int
mount_item(struct vg_docker_mount *mt, const char *spec, const char *key,
    const char *val, struct vg_err *e)
{
	static const char *const props[] = { "shared", "slave", "private",
		"rshared", "rslave", "rprivate", NULL };
	char **dst = NULL;
	char *end;
	int i;

	if (strcmp(key, "type") == 0)
		dst = &mt->type;
	else if (strcmp(key, "source") == 0 || strcmp(key, "src") == 0)
		dst = &mt->source;
	else if (strcmp(key, "target") == 0 || strcmp(key, "destination") ==
	    0 || strcmp(key, "dst") == 0)
		dst = &mt->target;
	else if (strcmp(key, "volume-driver") == 0)
		dst = &mt->driver;
	else if (strcmp(key, "bind-propagation") == 0) {
		for (i = 0; props[i] != NULL; i++)
			if (val != NULL && strcmp(val, props[i]) == 0)
				break;
		if (props[i] == NULL)
			return vg_err_set(e, VG_EINVAL, "mount '%s': "
			    "bind-propagation must be one of shared, slave, "
			    "private, rshared, rslave, rprivate", spec);
		dst = &mt->propagation;
	} else if (strcmp(key, "readonly") == 0 || strcmp(key, "ro") == 0) {
		if (mount_bool(val, &mt->readonly) != 0)
			return vg_err_set(e, VG_EINVAL, "mount '%s': %s takes "
			    "true or false", spec, key);
		return 0;
	} else if (strcmp(key, "volume-nocopy") == 0) {
		if (mount_bool(val, &mt->nocopy) != 0)
			return vg_err_set(e, VG_EINVAL, "mount '%s': "
			    "volume-nocopy takes true or false", spec);
		return 0;
	} else if (strcmp(key, "volume-opt") == 0) {
		if (val == NULL || strchr(val, '=') == NULL || *val == '=')
			return vg_err_set(e, VG_EINVAL, "mount '%s': volume-opt "
			    "takes KEY=VALUE", spec);
		vg_strv_push(&mt->opts, val);
		return 0;
	} else if (strcmp(key, "tmpfs-size") == 0) {
		if (mount_size(val, &mt->tmpfs_size) != 0)
			return vg_err_set(e, VG_EINVAL, "mount '%s': tmpfs-size "
			    "takes a byte count (with k, m or g)", spec);
		return 0;
	} else if (strcmp(key, "tmpfs-mode") == 0) {
		if (val == NULL || *val < '0' || *val > '7' ||
		    (mt->tmpfs_mode = strtol(val, &end, 8)) > 07777 ||
		    *end != '\0')
			return vg_err_set(e, VG_EINVAL, "mount '%s': tmpfs-mode "
			    "takes an octal mode such as 1777", spec);
		return 0;
	} else
		return vg_err_set(e, VG_EINVAL, "mount '%s': unknown key '%s' "
		    "(valid: type, source, target, readonly, "
		    "bind-propagation, volume-driver, volume-opt, "
		    "volume-nocopy, tmpfs-size, tmpfs-mode)", spec, key);
	if (val == NULL || *val == '\0')
		return vg_err_set(e, VG_EINVAL, "mount '%s': %s needs a value",
		    spec, key);
	if (*dst != NULL)
		return vg_err_set(e, VG_EINVAL, "mount '%s': %s given twice",
		    spec, key);
	*dst = vg_xstrdup(val);
	return 0;
}

/* Checks the parts of a split mount against its type. */
static int
mount_check(const struct vg_docker_mount *mt, const char *spec,
    struct vg_err *e)
{
	int bind = strcmp(mt->type, "bind") == 0;
	int vol = strcmp(mt->type, "volume") == 0;
	int tmpfs = strcmp(mt->type, "tmpfs") == 0;

	if (!bind && !vol && !tmpfs)
		return vg_err_set(e, VG_EINVAL, "mount '%s': type '%s' is not "
		    "bind, volume or tmpfs", spec, mt->type);
	if (mt->target == NULL || mt->target[0] != '/')
		return vg_err_set(e, VG_EINVAL, "mount '%s': target must be an "
		    "absolute path in the container", spec);
	if (bind && (mt->source == NULL || mt->source[0] != '/'))
		return vg_err_set(e, VG_EINVAL, "mount '%s': a bind needs an "
		    "absolute host source", spec);
	if (vol && mt->source != NULL && !is_volume_name(mt->source))
		return vg_err_set(e, VG_EINVAL, "mount '%s': source '%s' is "
		    "not a volume name ([A-Za-z0-9][A-Za-z0-9_.-]*)", spec,
		    mt->source);
	if (tmpfs && mt->source != NULL)
		return vg_err_set(e, VG_EINVAL, "mount '%s': a tmpfs has no "
		    "source", spec);
	if (!bind && mt->propagation != NULL)
		return vg_err_set(e, VG_EINVAL, "mount '%s': bind-propagation "
		    "is for type=bind", spec);
	if (!vol && (mt->driver != NULL || mt->opts.n > 0 || mt->nocopy))
		return vg_err_set(e, VG_EINVAL, "mount '%s': volume-* keys are "
		    "for type=volume", spec);
	if (!tmpfs && (mt->tmpfs_size > 0 || mt->tmpfs_mode >= 0))
		return vg_err_set(e, VG_EINVAL, "mount '%s': tmpfs-* keys are "
		    "for type=tmpfs", spec);
	return 0;
}

/* Splits a docker.mounts entry; see docker.h. */
int
vg_docker_mount_parse(const char *spec, struct vg_docker_mount *mt,
    struct vg_err *e)
{
	const char *p, *comma, *eq;
	char *key, *val;
	int r = 0;

	memset(mt, 0, sizeof(*mt));
	mt->tmpfs_mode = -1;
	if (spec == NULL || *spec == '\0')
		return vg_err_set(e, VG_EINVAL, "empty mount: expected "
		    "type=bind|volume|tmpfs,source=...,target=/path");
	if (strpbrk(spec, "\"'") != NULL)
		return vg_err_set(e, VG_EINVAL, "mount '%s': quotes are not "
		    "supported; write KEY=VALUE items separated by ','", spec);
	for (p = spec; r == 0; p = comma + 1) {
		comma = strchr(p, ',');
		if (comma == NULL)
			comma = p + strlen(p);
		eq = memchr(p, '=', (size_t)(comma - p));
		if (comma == p) {
			r = vg_err_set(e, VG_EINVAL, "mount '%s': empty item "
			    "between ','", spec);
			break;
		}
		key = vg_xstrndup(p, (size_t)((eq ? eq : comma) - p));
		val = eq ? vg_xstrndup(eq + 1, (size_t)(comma - eq - 1)) :
		    NULL;
		r = mount_item(mt, spec, key, val, e);
		free(key);
		free(val);
		if (*comma == '\0')
			break;
	}
	if (r == 0 && mt->type == NULL)
		mt->type = vg_xstrdup("volume");
	if (r == 0)
		r = mount_check(mt, spec, e);
	if (r != 0)
		vg_docker_mount_release(mt);
	return r;
}

/* Frees the strings of mt. */
void
vg_docker_mount_release(struct vg_docker_mount *mt)
{
	free(mt->type);
	free(mt->source);
	free(mt->target);
	free(mt->propagation);
	free(mt->driver);
	vg_strv_release(&mt->opts);
	memset(mt, 0, sizeof(*mt));
	mt->tmpfs_mode = -1;
}

/* True when path names a container engine's control socket. */
static int
is_engine_socket(const char *path)
{
	static const char *const names[] = {
		"docker.sock", "podman.sock", "containerd.sock", "crio.sock",
	};
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return 1;
	return 0;
}

/* True when the host directory path holds an engine socket below it. */
static int
holds_engine_socket(const char *path)
{
	static const char *const dirs[] = {
		"/", "/run", "/var", "/var/run", "/run/docker", "/run/podman",
		"/var/run/docker", "/var/run/podman", "/run/containerd",
		"/var/run/containerd", "/run/crio", "/var/run/crio",
		"/var/lib/docker", "/var/lib/containers",
	};
	size_t i, n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strlen(dirs[i]) == n && strncmp(dirs[i], path, n) == 0)
			return 1;
	return 0;
}

/* True when path is tree or below it ("/proc", "/proc/sys"). */
static int
below(const char *path, const char *tree)
{
	size_t n = strlen(tree);

	return strncmp(path, tree, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

/* Appends the finding for a bind of host path src at dst. */
static void
host_path_finding(struct vg_buf *why, const char *label, const char *src,
    const char *dst, int ro)
{
	if (is_engine_socket(src) || (dst != NULL && is_engine_socket(dst)))
		vg_buf_printf(why, "%s mounts a container engine socket "
		    "(control of the host)\n", label);
	else if (holds_engine_socket(src))
		vg_buf_printf(why, "%s reaches the container engine socket "
		    "below '%s' (control of the host)\n", label, src);
	else if (!ro && (below(src, "/proc") || below(src, "/sys")))
		vg_buf_printf(why, "%s binds the host's %s writable (kernel "
		    "and process control)\n", label, src);
	else
		vg_buf_printf(why, "%s binds host path '%s'\n", label, src);
}

/* True when the comma-separated mode list holds "ro". */
static int
mode_ro(const char *mode)
{
	const char *p;

	for (p = mode; p != NULL && *p != '\0'; p += strcspn(p, ","),
	    p += *p == ',')
		if (strncmp(p, "ro", 2) == 0 && (p[2] == ',' || p[2] == '\0'))
			return 1;
	return 0;
}

/* Frees the lists of nv. */
void
vg_docker_named_release(struct vg_docker_named *nv)
{
	vg_strv_release(&nv->names);
	vg_strv_release(&nv->labels);
}

/* Remembers a named volume to inspect. */
static void
named_add(struct vg_docker_named *nv, const char *name, const char *label)
{
	if (nv == NULL)
		return;
	vg_strv_push(&nv->names, name);
	vg_strv_push(&nv->labels, label);
}

/* Appends the options of a volume as " K=V", or " none". */
static void
opts_text(const struct vg_json_value *opts, struct vg_buf *out)
{
	size_t i;

	if (opts == NULL || opts->type != VG_JSON_OBJECT || opts->len == 0) {
		vg_buf_adds(out, " none");
		return;
	}
	for (i = 0; i < opts->len; i++)
		vg_buf_printf(out, " %s=%s", opts->keys[i],
		    opts->items[i]->type == VG_JSON_STRING ?
		    opts->items[i]->str : "?");
}

/* True when each flag of a mount option list "o" keeps to the host's
 * own memory (tmpfs sizes, modes, owners, nosuid ...). */
static const char *
unsafe_mount_flag(const char *o, char *tok, size_t size)
{
	static const char *const ok[] = {
		"size=", "mode=", "uid=", "gid=", "nr_inodes=", "nr_blocks=",
		"nosuid", "nodev", "noexec", "ro", "rw", "noatime",
		"relatime", "nodiratime",
	};
	const char *p;
	size_t i, n, k;

	for (p = o; *p != '\0'; p += n, p += *p == ',') {
		n = strcspn(p, ",");
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			k = strlen(ok[i]);
			if (ok[i][k - 1] == '=' ? n > k &&
			    strncmp(p, ok[i], k) == 0 : n == k &&
			    strncmp(p, ok[i], k) == 0)
				break;
		}
		if (n > 0 && i == sizeof(ok) / sizeof(ok[0])) {
			snprintf(tok, size, "%.*s", (int)n, p);
			return tok;
		}
	}
	return NULL;
}

/* True when the flag list o holds bind or rbind. */
static int
has_bind_flag(const char *o)
{
	const char *p;
	size_t n;

	for (p = o; *p != '\0'; p += n, p += *p == ',') {
		n = strcspn(p, ",");
		if ((n == 4 && strncmp(p, "bind", 4) == 0) ||
		    (n == 5 && strncmp(p, "rbind", 5) == 0))
			return 1;
	}
	return 0;
}

/*
 * Judges the options of a local volume: appends why it is host access
 * and returns 1, or returns 0 when it keeps to the engine's own storage
 * or memory (no options, tmpfs, sizes and owners).
 */
static int
local_opts_judge(const struct vg_json_value *opts, struct vg_buf *what)
{
	static const char *const known[] = {
		"device", "type", "o", "size", "inodes", "uid", "gid", "UID",
		"GID", "copy", "nocopy", "noquota",
	};
	const char *dev, *type, *o, *bad;
	char tok[128];
	size_t i, k;

	if (opts == NULL || opts->type == VG_JSON_NULL)
		return 0;
	if (opts->type != VG_JSON_OBJECT) {
		vg_buf_adds(what, "has options that are not a mapping");
		return 1;
	}
	for (i = 0; i < opts->len; i++) {
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (strcmp(opts->keys[i], known[k]) == 0)
				break;
		if (opts->items[i]->type != VG_JSON_STRING ||
		    k == sizeof(known) / sizeof(known[0])) {
			vg_buf_printf(what, "has option '%s' vigil cannot "
			    "judge", opts->keys[i]);
			return 1;
		}
	}
	dev = vg_json_get_str(opts, "device", NULL);
	type = vg_json_get_str(opts, "type", "");
	o = vg_json_get_str(opts, "o", "");
	if (dev != NULL && *dev != '\0' && (has_bind_flag(o) ||
	    strcmp(type, "none") == 0)) {
		vg_buf_printf(what, "binds host directory '%s'%s", dev,
		    holds_engine_socket(dev) || is_engine_socket(dev) ?
		    " (and the container engine socket)" : "");
		return 1;
	}
	if (dev != NULL && strncmp(dev, "/dev/", 5) == 0) {
		vg_buf_printf(what, "mounts host block device '%s'", dev);
		return 1;
	}
	if (*type != '\0' && strcmp(type, "tmpfs") != 0) {
		vg_buf_printf(what, "mounts '%s' as file system type '%s'",
		    dev ? dev : "", type);
		return 1;
	}
	if (dev != NULL && *dev != '\0' && strcmp(type, "tmpfs") != 0) {
		vg_buf_printf(what, "mounts device '%s'", dev);
		return 1;
	}
	if (has_bind_flag(o) || (bad = unsafe_mount_flag(o, tok,
	    sizeof(tok))) != NULL) {
		vg_buf_printf(what, "has mount option '%s' vigil cannot judge",
		    has_bind_flag(o) ? "bind" : tok);
		return 1;
	}
	return 0;
}

/* Judges a volume driver with its options; see vg_docker_volume_judge. */
static int
driver_judge(const char *drv, const struct vg_json_value *opts,
    const struct vg_host_site *site, struct vg_buf *what)
{
	struct vg_buf t = VG_BUF_INIT;
	int bad;

	vg_buf_printf(&t, "(driver '%s', options", drv);
	opts_text(opts, &t);
	vg_buf_adds(&t, ") ");
	if (strcmp(drv, "local") == 0)
		bad = local_opts_judge(opts, &t);
	else if (vg_policy_safe_driver(site, drv) != NULL)
		bad = 0;
	else {
		vg_buf_adds(&t, "uses a driver the site policy does not list "
		    "in safe_volume_drivers");
		bad = 1;
	}
	if (bad)
		vg_buf_add(what, t.data, t.len);
	vg_buf_release(&t);
	return bad;
}

/* Judges a named volume from its inspect reply; see docker.h. */
int
vg_docker_volume_judge(const struct vg_json_value *vol,
    const struct vg_host_site *site, struct vg_buf *what)
{
	const struct vg_json_value *drv = vg_json_get(vol, "Driver");

	if (vol == NULL || vol->type != VG_JSON_OBJECT) {
		vg_buf_adds(what, "has an inspect reply that is not an object");
		return 1;
	}
	if (drv == NULL || drv->type != VG_JSON_STRING || drv->str[0] == '\0') {
		vg_buf_adds(what, "has an inspect reply that names no driver");
		return 1;
	}
	return driver_judge(drv->str, vg_json_get(vol, "Options"), site,
	    what);
}

/* Appends a finding for a namespace mode that is not private. */
static int
ns_finding(struct vg_buf *why, const char *field, const char *mode,
    const char *what)
{
	if (mode == NULL || *mode == '\0')
		return 0;
	if (strcmp(mode, "host") == 0)
		vg_buf_printf(why, "%s 'host' shares the host's %s\n", field,
		    what);
	else if (strncmp(mode, "container:", 10) == 0)
		vg_buf_printf(why, "%s '%s' joins another container's %s\n",
		    field, mode, what);
	else if (strncmp(mode, "ns:", 3) == 0)
		vg_buf_printf(why, "%s '%s' joins the %s at a host path\n",
		    field, mode, what);
	else
		return 0;
	return 1;
}

/* Judges one SecurityOpt entry; appends a finding and returns 1. */
static int
secopt_finding(struct vg_buf *why, const char *opt)
{
	static const struct {
		const char *opt, *what;
	} bad[] = {
		{ "no-new-privileges:false", "lets the task gain privileges "
		  "(setuid programs, file capabilities)" },
		{ "no-new-privileges=false", "lets the task gain privileges "
		  "(setuid programs, file capabilities)" },
		{ "seccomp=unconfined", "turns the seccomp filter off" },
		{ "seccomp:unconfined", "turns the seccomp filter off" },
		{ "apparmor=unconfined", "turns AppArmor confinement off" },
		{ "apparmor:unconfined", "turns AppArmor confinement off" },
		{ "label=disable", "turns SELinux separation off" },
		{ "label:disable", "turns SELinux separation off" },
		{ "systempaths=unconfined", "unmasks the kernel's /proc and "
		  "/sys paths" },
	};
	static const char *const ok[] = {
		"no-new-privileges", "no-new-privileges:true",
		"no-new-privileges=true", "apparmor=docker-default",
		"label=level:", "label:level:", "label=filetype:", "mask=",
	};
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcmp(opt, bad[i].opt) == 0) {
			vg_buf_printf(why, "docker.security_opt '%s' %s\n", opt,
			    bad[i].what);
			return 1;
		}
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = strlen(ok[i]);
		if (ok[i][n - 1] == ':' || ok[i][n - 1] == '=' ?
		    strncmp(opt, ok[i], n) == 0 : strcmp(opt, ok[i]) == 0)
			return 0;
	}
	if (strncmp(opt, "unmask=", 7) == 0)
		vg_buf_printf(why, "docker.security_opt '%.60s' unmasks kernel "
		    "paths under /proc and /sys\n", opt);
	else if (strncmp(opt, "seccomp", 7) == 0)
		vg_buf_printf(why, "docker.security_opt '%.20s...' replaces the "
		    "seccomp profile, which vigil cannot judge\n", opt);
	else
		vg_buf_printf(why, "docker.security_opt '%.60s' is an option "
		    "vigil cannot judge\n", opt);
	return 1;
}

/* The string items of an array (others count as findings). */
static int
str_items(const struct vg_json_value *arr, struct vg_buf *why,
    const char *field)
{
	size_t i;
	int n = 0;

	if (arr == NULL || arr->type == VG_JSON_NULL)
		return 0;
	if (arr->type != VG_JSON_ARRAY) {
		vg_buf_printf(why, "HostConfig.%s is not a list\n", field);
		return 1;
	}
	for (i = 0; i < arr->len; i++)
		if (arr->items[i]->type != VG_JSON_STRING) {
			vg_buf_printf(why, "HostConfig.%s holds a value that is "
			    "not a string\n", field);
			n++;
		}
	return n;
}

/* Judges HostConfig.Binds; vigil's own task and scratch binds pass. */
static int
binds_findings(const struct vg_attempt *a, const struct vg_json_value *arr,
    struct vg_buf *why, struct vg_docker_named *named)
{
	struct vg_docker_vol v;
	char *own[2] = { NULL, NULL }, *label;
	const char *b;
	size_t i;
	int n, k, mine;

	if ((n = str_items(arr, why, "Binds")) != 0 || arr == NULL ||
	    arr->type != VG_JSON_ARRAY)
		return n;
	if (a->task_dir != NULL)
		own[0] = vg_xasprintf("%s:%s:rw", a->task_dir, a->task_dir);
	if (a->scratch_dir != NULL)
		own[1] = vg_xasprintf("%s:%s:rw", a->scratch_dir,
		    a->scratch_dir);
	for (i = 0; i < arr->len; i++) {
		b = arr->items[i]->str;
		for (k = 0, mine = 0; k < 2; k++)
			mine |= own[k] != NULL && strcmp(b, own[k]) == 0;
		if (mine)
			continue;
		label = vg_xasprintf("docker.volumes '%s'", b);
		if (vg_docker_vol_parse(b, &v, NULL) != 0) {
			vg_buf_printf(why, "%s is a bind vigil cannot judge\n",
			    label);
			n++;
		} else if (v.kind == VG_DOCKER_VOL_HOST) {
			host_path_finding(why, label, v.src, v.dst,
			    mode_ro(v.mode));
			n++;
		} else if (v.kind == VG_DOCKER_VOL_NAMED)
			named_add(named, v.src, label);
		vg_docker_vol_release(&v);
		free(label);
	}
	free(own[0]);
	free(own[1]);
	return n;
}

/* Judges one HostConfig.Mounts entry. */
static int
mount_findings(const struct vg_json_value *mt, const struct vg_host_site *site,
    struct vg_buf *why, struct vg_docker_named *named)
{
	const struct vg_json_value *vo, *dc, *ro;
	const char *type, *src, *dst;
	struct vg_buf what = VG_BUF_INIT;
	char *label;
	int n = 0;

	if (mt == NULL || mt->type != VG_JSON_OBJECT) {
		vg_buf_adds(why, "HostConfig.Mounts holds an entry that is not "
		    "an object\n");
		return 1;
	}
	type = vg_json_get_str(mt, "Type", "volume");
	src = vg_json_get_str(mt, "Source", "");
	dst = vg_json_get_str(mt, "Target", "");
	ro = vg_json_get(mt, "ReadOnly");
	label = vg_xasprintf("docker.mounts %s%s%s%s at '%s'", type,
	    *src ? " '" : "", src, *src ? "'" : "", dst);
	if (strcmp(type, "bind") == 0) {
		host_path_finding(why, label, src, dst, ro != NULL &&
		    ro->type == VG_JSON_BOOL && ro->b);
		n++;
	} else if (strcmp(type, "volume") == 0) {
		vo = vg_json_get(mt, "VolumeOptions");
		dc = vg_json_get(vo, "DriverConfig");
		if (dc != NULL && dc->type == VG_JSON_OBJECT &&
		    driver_judge(vg_json_get_str(dc, "Name", "") [0] ?
		    vg_json_get_str(dc, "Name", "") : "local",
		    vg_json_get(dc, "Options"), site, &what)) {
			vg_buf_printf(why, "%s: volume %s\n", label,
			    vg_buf_str(&what));
			n++;
		}
		if (*src != '\0')
			named_add(named, src, label);
	} else if (strcmp(type, "tmpfs") != 0) {
		vg_buf_printf(why, "%s: mount type '%s' is not one vigil can "
		    "judge (bind, volume, tmpfs)\n", label, type);
		n++;
	}
	vg_buf_release(&what);
	free(label);
	return n;
}

/* HostConfig keys that never reach the host by themselves. */
static const char *const plain_host_keys[] = {
	"CapDrop", "PidsLimit", "Memory", "MemorySwap", "NanoCpus", "Ulimits",
	"ReadonlyRootfs", "Tmpfs",
};

/* Top-level keys of the create request that do not reach the host. */
static const char *const plain_keys[] = {
	"Image", "Entrypoint", "Cmd", "Env", "WorkingDir", "User", "Tty",
	"OpenStdin", "Labels", "Volumes",
};

/* True when key is one of the n names. */
static int
key_in(const char *key, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(key, names[i]) == 0)
			return 1;
	return 0;
}

static void gpu_requests(const struct vg_attempt *a,
    struct vg_json_writer *w);

/*
 * True when DeviceRequests v is exactly the one vigil writes for a's
 * resources.gpus (gpu_requests): the GPUs the scheduler assigned to the
 * attempt are its own, like its task and scratch binds; anything more is
 * host access.
 */
static int
own_gpu_request(const struct vg_attempt *a, const struct vg_json_value *v)
{
	struct vg_buf want = VG_BUF_INIT, got = VG_BUF_INIT;
	struct vg_json_writer w;
	int same;

	if (a->res.gpus <= 0)
		return 0;
	vg_json_writer_init(&w, &want);
	vg_json_obj_begin(&w);
	gpu_requests(a, &w);
	vg_json_obj_end(&w);
	vg_json_writer_init(&w, &got);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "DeviceRequests");
	vg_json_value_write(&w, v);
	vg_json_obj_end(&w);
	same = strcmp(vg_buf_str(&want), vg_buf_str(&got)) == 0;
	vg_buf_release(&want);
	vg_buf_release(&got);
	return same;
}

/* Judges one HostConfig key. */
static int
host_key_findings(const struct vg_attempt *a, const char *key,
    const struct vg_json_value *v, const struct vg_host_site *site,
    struct vg_buf *why, struct vg_docker_named *named)
{
	static const struct {
		const char *key, *field, *what;
	} ns[] = {
		{ "NetworkMode", "docker.network", "network" },
		{ "PidMode", "docker.pid_mode", "process namespace" },
		{ "IpcMode", "docker.ipc_mode", "IPC namespace" },
		{ "UTSMode", "docker.uts_mode", "host name (UTS namespace)" },
		{ "UsernsMode", "docker.userns_mode", "user namespace" },
		{ "CgroupnsMode", "HostConfig.CgroupnsMode", "cgroup namespace" },
	};
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (strcmp(key, ns[i].key) == 0) {
			if (v->type != VG_JSON_STRING) {
				vg_buf_printf(why, "HostConfig.%s is not a "
				    "string\n", key);
				return 1;
			}
			return ns_finding(why, ns[i].field, v->str, ns[i].what);
		}
	if (strcmp(key, "Binds") == 0)
		return binds_findings(a, v, why, named);
	if (strcmp(key, "Mounts") == 0) {
		if (v->type != VG_JSON_ARRAY) {
			vg_buf_adds(why, "HostConfig.Mounts is not a list\n");
			return 1;
		}
		for (i = 0; i < v->len; i++)
			n += mount_findings(v->items[i], site, why, named);
		return n;
	}
	if (strcmp(key, "Privileged") == 0) {
		if (v->type == VG_JSON_BOOL && !v->b)
			return 0;
		vg_buf_adds(why, "docker.privileged runs a privileged container "
		    "(every device and capability)\n");
		return 1;
	}
	if (strcmp(key, "Sysctls") == 0) {
		if (v->type != VG_JSON_OBJECT) {
			vg_buf_adds(why, "HostConfig.Sysctls is not a mapping\n");
			return 1;
		}
		for (i = 0; i < v->len; i++)
			vg_buf_printf(why, "docker.sysctls '%s=%s' sets a kernel "
			    "parameter\n", v->keys[i], v->items[i]->type ==
			    VG_JSON_STRING ? v->items[i]->str : "?");
		return (int)v->len;
	}
	if (strcmp(key, "Devices") == 0) {
		if (v->type != VG_JSON_ARRAY) {
			vg_buf_adds(why, "HostConfig.Devices is not a list\n");
			return 1;
		}
		for (i = 0; i < v->len; i++)
			vg_buf_printf(why, "docker.devices '%s' passes a host "
			    "device\n", vg_json_get_str(v->items[i],
			    "PathOnHost", "?"));
		return (int)v->len;
	}
	if (strcmp(key, "DeviceRequests") == 0) {
		if ((v->type == VG_JSON_ARRAY && v->len == 0) ||
		    own_gpu_request(a, v))
			return 0;
		vg_buf_adds(why, "HostConfig.DeviceRequests passes host devices "
		    "(GPUs)\n");
		return 1;
	}
	if (strcmp(key, "CapAdd") == 0 || strcmp(key, "SecurityOpt") == 0 ||
	    strcmp(key, "VolumesFrom") == 0 ||
	    strcmp(key, "DeviceCgroupRules") == 0) {
		if ((n = str_items(v, why, key)) != 0 || v->type !=
		    VG_JSON_ARRAY)
			return n;
		for (i = 0; i < v->len; i++) {
			const char *s = v->items[i]->str;

			if (key[0] == 'S') {
				n += secopt_finding(why, s);
				continue;
			}
			n++;
			if (key[0] == 'C')
				vg_buf_printf(why, "docker.cap_add '%s' adds a "
				    "capability\n", s);
			else if (key[0] == 'V')
				vg_buf_printf(why, "docker.volumes_from '%s' "
				    "takes every mount of another container\n",
				    s);
			else
				vg_buf_printf(why, "docker.device_cgroup_rules "
				    "'%s' lets the container use host devices\n",
				    s);
		}
		return n;
	}
	if (key_in(key, plain_host_keys, sizeof(plain_host_keys) /
	    sizeof(plain_host_keys[0])))
		return 0;
	vg_buf_printf(why, "HostConfig.%s is a field vigil cannot judge\n",
	    key);
	return 1;
}

/* The host access check on the create request; see docker.h. */
int
vg_docker_host_access(const struct vg_attempt *a, const char *body,
    size_t len, const struct vg_host_site *site, struct vg_buf *why,
    struct vg_docker_named *named)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };
	const struct vg_json_value *root, *hc;
	struct vg_json_doc *doc;
	size_t i;
	int n = 0;

	if (vg_json_parse(body, len, &lim, &doc, NULL) != 0) {
		vg_buf_adds(why, "the container create request is not valid "
		    "JSON\n");
		return 1;
	}
	root = vg_json_root(doc);
	if (root->type != VG_JSON_OBJECT) {
		vg_buf_adds(why, "the container create request is not an "
		    "object\n");
		vg_json_free(doc);
		return 1;
	}
	for (i = 0; i < root->len; i++) {
		if (strcmp(root->keys[i], "HostConfig") == 0 ||
		    key_in(root->keys[i], plain_keys, sizeof(plain_keys) /
		    sizeof(plain_keys[0])))
			continue;
		vg_buf_printf(why, "the create request's '%s' is a field vigil "
		    "cannot judge\n", root->keys[i]);
		n++;
	}
	hc = vg_json_get(root, "HostConfig");
	if (hc != NULL && hc->type != VG_JSON_OBJECT) {
		vg_buf_adds(why, "HostConfig is not an object\n");
		n++;
	} else if (hc != NULL)
		for (i = 0; i < hc->len; i++)
			n += host_key_findings(a, hc->keys[i], hc->items[i],
			    site, why, named);
	vg_json_free(doc);
	return n;
}

/* Resolves a host bind source to the absolute path the engine wants. */
static char *
bind_source(const struct vg_manifest *m, const char *src)
{
	const char *home = getenv("HOME"), *slash;
	char *dir, *ret;

	if (src[0] == '~' && (src[1] == '/' || src[1] == '\0'))
		return vg_xasprintf("%s%s", home ? home : "", src + 1);
	if (src[0] == '.' && m->file != NULL &&
	    (slash = strrchr(m->file, '/')) != NULL) {
		dir = vg_xstrndup(m->file, (size_t)(slash - m->file));
		ret = vg_xasprintf("%s/%s", dir, src);
		free(dir);
		return ret;
	}
	return vg_xstrdup(src);
}

/* This process's soft limit of res, the ceiling for the container's. */
static uint64_t
own_limit(int res)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	return (uint64_t)rl.rlim_cur;
}

/* Adds one Ulimits entry. */
static void
add_ulimit(struct vg_json_writer *w, const char *name, uint64_t value)
{
	vg_json_obj_begin(w);
	vg_json_key(w, "Name");
	vg_json_str(w, name);
	vg_json_key(w, "Soft");
	vg_json_int(w, (long long)value);
	vg_json_key(w, "Hard");
	vg_json_int(w, (long long)value);
	vg_json_obj_end(w);
}

/* Writes one Devices entry from "HOST[:CONTAINER[:PERMS]]". */
static void
device_entry(struct vg_json_writer *w, const char *spec)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') :
	    NULL;

	vg_json_obj_begin(w);
	vg_json_key(w, "PathOnHost");
	vg_json_strn(w, spec, c1 ? (size_t)(c1 - spec) : strlen(spec));
	vg_json_key(w, "PathInContainer");
	if (c1 == NULL)
		vg_json_str(w, spec);
	else
		vg_json_strn(w, c1 + 1, c2 ? (size_t)(c2 - c1 - 1) :
		    strlen(c1 + 1));
	vg_json_key(w, "CgroupPermissions");
	vg_json_str(w, c2 ? c2 + 1 : "rwm");
	vg_json_obj_end(w);
}

/* Writes one HostConfig.Mounts entry from a docker.mounts spec. */
static void
mount_entry(struct vg_json_writer *w, const struct vg_docker_mount *mt)
{
	const char *eq;
	char *key;
	size_t i;

	vg_json_obj_begin(w);
	vg_json_key(w, "Type");
	vg_json_str(w, mt->type);
	if (mt->source != NULL) {
		vg_json_key(w, "Source");
		vg_json_str(w, mt->source);
	}
	vg_json_key(w, "Target");
	vg_json_str(w, mt->target);
	vg_json_key(w, "ReadOnly");
	vg_json_bool(w, mt->readonly);
	if (mt->propagation != NULL) {
		vg_json_key(w, "BindOptions");
		vg_json_obj_begin(w);
		vg_json_key(w, "Propagation");
		vg_json_str(w, mt->propagation);
		vg_json_obj_end(w);
	}
	if (mt->nocopy || mt->driver != NULL || mt->opts.n > 0) {
		vg_json_key(w, "VolumeOptions");
		vg_json_obj_begin(w);
		vg_json_key(w, "NoCopy");
		vg_json_bool(w, mt->nocopy);
		if (mt->driver != NULL || mt->opts.n > 0) {
			vg_json_key(w, "DriverConfig");
			vg_json_obj_begin(w);
			vg_json_key(w, "Name");
			vg_json_str(w, mt->driver ? mt->driver : "local");
			vg_json_key(w, "Options");
			vg_json_obj_begin(w);
			for (i = 0; i < mt->opts.n; i++) {
				eq = strchr(mt->opts.v[i], '=');
				key = vg_xstrndup(mt->opts.v[i],
				    (size_t)(eq - mt->opts.v[i]));
				vg_json_key(w, key);
				vg_json_str(w, eq + 1);
				free(key);
			}
			vg_json_obj_end(w);
			vg_json_obj_end(w);
		}
		vg_json_obj_end(w);
	}
	if (strcmp(mt->type, "tmpfs") == 0) {
		vg_json_key(w, "TmpfsOptions");
		vg_json_obj_begin(w);
		if (mt->tmpfs_size > 0) {
			vg_json_key(w, "SizeBytes");
			vg_json_int(w, (long long)mt->tmpfs_size);
		}
		/* podman 4.3 reads a missing Mode as 0 (mode=000); docker's
		 * default is 1777. */
		vg_json_key(w, "Mode");
		vg_json_int(w, mt->tmpfs_mode >= 0 ? mt->tmpfs_mode : 01777);
		vg_json_obj_end(w);
	}
	vg_json_obj_end(w);
}

/* Writes a string array under key when sv is not empty. */
static void
str_array(struct vg_json_writer *w, const char *key, const struct vg_strv *sv)
{
	size_t i;

	if (sv->n == 0)
		return;
	vg_json_key(w, key);
	vg_json_arr_begin(w);
	for (i = 0; i < sv->n; i++)
		vg_json_str(w, sv->v[i]);
	vg_json_arr_end(w);
}

/* Writes a string under key when s is set. */
static void
str_field(struct vg_json_writer *w, const char *key, const char *s)
{
	if (s == NULL || *s == '\0')
		return;
	vg_json_key(w, key);
	vg_json_str(w, s);
}


/*
 * Writes HostConfig.DeviceRequests for an attempt with gpus: the ids the
 * scheduler gave it (DeviceIDs), else a count (Count and DeviceIDs are
 * exclusive in the Engine API), driver nvidia, capabilities [["gpu"]].
 */
static void
gpu_requests(const struct vg_attempt *a, struct vg_json_writer *w)
{
	const char *s, *c;

	if (a->res.gpus <= 0)
		return;
	vg_json_key(w, "DeviceRequests");
	vg_json_arr_begin(w);
	vg_json_obj_begin(w);
	vg_json_key(w, "Driver");
	vg_json_str(w, "nvidia");
	vg_json_key(w, "Count");
	vg_json_int(w, a->gpu_set ? 0 : a->res.gpus);
	vg_json_key(w, "DeviceIDs");
	vg_json_arr_begin(w);
	for (s = a->gpu_set ? a->gpu_ids : ""; *s != '\0'; s = *c ? c + 1 :
	    c) {
		c = s + strcspn(s, ",");
		vg_json_strn(w, s, (size_t)(c - s));
	}
	vg_json_arr_end(w);
	vg_json_key(w, "Capabilities");
	vg_json_arr_begin(w);
	vg_json_arr_begin(w);
	vg_json_str(w, "gpu");
	vg_json_arr_end(w);
	vg_json_arr_end(w);
	vg_json_key(w, "Options");
	vg_json_obj_begin(w);
	vg_json_obj_end(w);
	vg_json_obj_end(w);
	vg_json_arr_end(w);
}

/* Writes HostConfig: binds and hardening. */
static void
host_config(const struct vg_attempt *a, struct vg_json_writer *w)
{
	const struct vg_manifest *m = a->m;
	const struct vg_docker_conf *d = vg_docker_of(m);
	struct vg_docker_mount mt;
	struct vg_docker_vol v;
	char *src, *bind;
	size_t i;

	vg_json_key(w, "HostConfig");
	vg_json_obj_begin(w);
	vg_json_key(w, "Binds");
	vg_json_arr_begin(w);
	if (a->task_dir != NULL) {
		src = vg_xasprintf("%s:%s:rw", a->task_dir, a->task_dir);
		vg_json_str(w, src);
		free(src);
	}
	if (a->scratch_dir != NULL) {
		src = vg_xasprintf("%s:%s:rw", a->scratch_dir, a->scratch_dir);
		vg_json_str(w, src);
		free(src);
	}
	for (i = 0; i < d->volumes.n; i++) {
		if (vg_docker_vol_parse(d->volumes.v[i], &v, NULL) != 0 ||
		    v.kind == VG_DOCKER_VOL_ANON) {
			if (v.dst != NULL)
				vg_json_str(w, v.dst);
			vg_docker_vol_release(&v);
			continue;
		}
		src = v.kind == VG_DOCKER_VOL_HOST ? bind_source(m, v.src) :
		    vg_xstrdup(v.src);
		bind = vg_xasprintf("%s:%s%s%s", src, v.dst, v.mode ? ":" : "",
		    v.mode ? v.mode : "");
		vg_json_str(w, bind);
		free(bind);
		free(src);
		vg_docker_vol_release(&v);
	}
	vg_json_arr_end(w);
	vg_json_key(w, "NetworkMode");
	vg_json_str(w, d->network != NULL && *d->network ? d->network :
	    "none");
	vg_json_key(w, "CapDrop");
	vg_json_arr_begin(w);
	vg_json_str(w, "ALL");
	vg_json_arr_end(w);
	str_array(w, "CapAdd", &d->cap_add);
	vg_json_key(w, "SecurityOpt");
	vg_json_arr_begin(w);
	vg_json_str(w, "no-new-privileges");
	for (i = 0; i < d->security_opt.n; i++)
		vg_json_str(w, d->security_opt.v[i]);
	vg_json_arr_end(w);
	vg_json_key(w, "PidsLimit");
	vg_json_int(w, d->pids_limit > 0 ? (long long)d->pids_limit :
	    DOCKER_DEFAULT_PIDS);
	if (a->res.memory > 0) {
		vg_json_key(w, "Memory");
		vg_json_int(w, (long long)a->res.memory);
		/* Equal to Memory: no swap on top of the limit. */
		vg_json_key(w, "MemorySwap");
		vg_json_int(w, (long long)a->res.memory);
	}
	if (a->res.cpus > 0) {
		vg_json_key(w, "NanoCpus");
		vg_json_int(w, (long long)a->res.cpus * 1000000000LL);
	}
	if (m->limits.core_set || m->limits.nofile || m->limits.nproc ||
	    m->limits.fsize || m->limits.cpu_time) {
		/* podman replaces its default nofile and nproc with its
		 * maximum once any Ulimits are given, which fails without
		 * CAP_SYS_RESOURCE: always name both, capped at ours. */
		vg_json_key(w, "Ulimits");
		vg_json_arr_begin(w);
		if (m->limits.core_set)
			add_ulimit(w, "core", m->limits.core);
		add_ulimit(w, "nofile", m->limits.nofile ? m->limits.nofile :
		    own_limit(RLIMIT_NOFILE));
		add_ulimit(w, "nproc", m->limits.nproc ? m->limits.nproc :
		    own_limit(RLIMIT_NPROC));
		if (m->limits.fsize > 0)
			add_ulimit(w, "fsize", m->limits.fsize);
		if (m->limits.cpu_time > 0)
			add_ulimit(w, "cpu", m->limits.cpu_time);
		vg_json_arr_end(w);
	}
	if (d->read_only) {
		vg_json_key(w, "ReadonlyRootfs");
		vg_json_bool(w, 1);
		vg_json_key(w, "Tmpfs");
		vg_json_obj_begin(w);
		vg_json_key(w, "/tmp");
		vg_json_str(w, "rw,nosuid,nodev");
		vg_json_obj_end(w);
	}
	if (d->privileged) {
		vg_json_key(w, "Privileged");
		vg_json_bool(w, 1);
	}
	str_field(w, "PidMode", d->pid_mode);
	str_field(w, "IpcMode", d->ipc_mode);
	if (d->devices.n > 0) {
		vg_json_key(w, "Devices");
		vg_json_arr_begin(w);
		for (i = 0; i < d->devices.n; i++)
			device_entry(w, d->devices.v[i]);
		vg_json_arr_end(w);
	}
	if (d->mounts.n > 0) {
		vg_json_key(w, "Mounts");
		vg_json_arr_begin(w);
		for (i = 0; i < d->mounts.n; i++) {
			if (vg_docker_mount_parse(d->mounts.v[i], &mt,
			    NULL) != 0)
				continue;	/* validate() reports it */
			mount_entry(w, &mt);
			vg_docker_mount_release(&mt);
		}
		vg_json_arr_end(w);
	}
	str_field(w, "UTSMode", d->uts_mode);
	str_field(w, "UsernsMode", d->userns_mode);
	str_array(w, "VolumesFrom", &d->volumes_from);
	str_array(w, "DeviceCgroupRules", &d->device_cgroup_rules);
	if (d->sysctls.n > 0) {
		vg_json_key(w, "Sysctls");
		vg_json_obj_begin(w);
		for (i = 0; i < d->sysctls.n; i++) {
			vg_json_key(w, d->sysctls.v[i].key);
			vg_json_str(w, d->sysctls.v[i].value);
		}
		vg_json_obj_end(w);
	}

	gpu_requests(a, w);
	vg_json_obj_end(w);
}

/* Builds the body of POST /containers/create; see docker.h. */
void
vg_docker_create_body(const struct vg_attempt *a, const char *owner,
    struct vg_buf *out)
{
	const struct vg_manifest *m = a->m;
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	struct vg_json_writer w;
	char num[32];
	size_t i;

	vg_attempt_argv(a, &argv);
	vg_task_env(a, VG_ENV_IMAGE, &env);
	vg_json_writer_init(&w, out);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "Image");
	vg_json_str(&w, m->image);
	/* Entrypoint = argv[0]: the image's own entrypoint never wraps the
	 * task's command. */
	vg_json_key(&w, "Entrypoint");
	vg_json_arr_begin(&w);
	vg_json_str(&w, argv.n > 0 ? argv.v[0] : "/bin/sh");
	vg_json_arr_end(&w);
	vg_json_key(&w, "Cmd");
	vg_json_arr_begin(&w);
	for (i = 1; i < argv.n; i++)
		vg_json_str(&w, argv.v[i]);
	vg_json_arr_end(&w);
	vg_json_key(&w, "Env");
	vg_json_arr_begin(&w);
	for (i = 0; i < env.n; i++)
		vg_json_str(&w, env.v[i]);
	vg_json_arr_end(&w);
	vg_json_key(&w, "WorkingDir");
	vg_json_str(&w, m->workdir != NULL ? m->workdir : a->scratch_dir ?
	    a->scratch_dir : a->task_dir ? a->task_dir : "/");
	vg_json_key(&w, "User");
	if (vg_docker_of(m)->user != NULL && *vg_docker_of(m)->user)
		vg_json_str(&w, vg_docker_of(m)->user);
	else {
		snprintf(num, sizeof(num), "%u:%u", (unsigned)getuid(),
		    (unsigned)getgid());
		vg_json_str(&w, num);
	}
	vg_json_key(&w, "Tty");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "OpenStdin");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "Labels");
	vg_json_obj_begin(&w);
	vg_json_key(&w, VG_DOCKER_LABEL);
	vg_json_str(&w, "1");
	vg_json_key(&w, VG_DOCKER_LABEL_RUN);
	vg_json_str(&w, a->run_id ? a->run_id : "");
	vg_json_key(&w, VG_DOCKER_LABEL_TASK);
	snprintf(num, sizeof(num), "%d", a->task ? a->task->index : 0);
	vg_json_str(&w, num);
	vg_json_key(&w, VG_DOCKER_LABEL_ATTEMPT);
	snprintf(num, sizeof(num), "%d", a->attempt);
	vg_json_str(&w, num);
	vg_json_key(&w, VG_DOCKER_LABEL_OWNER);
	vg_json_str(&w, owner ? owner : "");
	vg_json_obj_end(&w);
	host_config(a, &w);
	vg_json_obj_end(&w);
	vg_strv_release(&argv);
	vg_strv_release(&env);
}

/* Splits an image reference for POST /images/create; see docker.h. */
int
vg_docker_image_ref(const char *image, struct vg_buf *from,
    struct vg_buf *tag, struct vg_err *e)
{
	const char *p, *slash, *colon;

	vg_buf_reset(from);
	vg_buf_reset(tag);
	if (image == NULL || *image == '\0')
		return vg_err_set(e, VG_EINVAL, "no image: set 'image:' in the "
		    "manifest");
	for (p = image; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("._-/:@+", *p)))
			return vg_err_set(e, VG_EINVAL, "image '%s': character "
			    "'%c' is not allowed in an image reference",
			    image, *p);
	if (strchr(image, '@') != NULL) {
		vg_buf_adds(from, image);
		return 0;
	}
	slash = strrchr(image, '/');
	colon = strrchr(image, ':');
	if (colon != NULL && (slash == NULL || colon > slash)) {
		vg_buf_add(from, image, (size_t)(colon - image));
		vg_buf_adds(tag, colon + 1);
	} else {
		vg_buf_adds(from, image);
		vg_buf_adds(tag, "latest");
	}
	if (from->len == 0 || (colon != NULL && tag->len == 0))
		return vg_err_set(e, VG_EINVAL, "image '%s': expected "
		    "NAME[:TAG] or NAME@DIGEST", image);
	return 0;
}

/* Sets up a demultiplexer. */
void
vg_docker_demux_init(struct vg_docker_demux *d,
    int (*out)(void *, int, const char *, size_t), void *arg)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
	d->arg = arg;
}

/* The end of a stream-3 frame: the engine's error, in its words. */
static int
demux_syserr(struct vg_docker_demux *d, struct vg_err *e)
{
	size_t i;

	d->sys[d->syslen] = '\0';
	for (i = 0; i < d->syslen; i++)
		if ((unsigned char)d->sys[i] < 0x20 || d->sys[i] == 0x7f)
			d->sys[i] = ' ';
	return vg_err_set(e, VG_EBACKEND, "the engine ended the log stream "
	    "with an error: %s", d->syslen > 0 ? d->sys : "(no message)");
}

/* Feeds bytes of the multiplexed stream; see docker.h. */
int
vg_docker_demux_feed(struct vg_docker_demux *d, const char *p, size_t n,
    struct vg_err *e)
{
	size_t k, m;
	int r;

	while (n > 0) {
		if (d->left == 0) {
			k = sizeof(d->hdr) - d->hlen;
			if (k > n)
				k = n;
			memcpy(d->hdr + d->hlen, p, k);
			d->hlen += k;
			p += k;
			n -= k;
			d->offset += k;
			if (d->hlen < sizeof(d->hdr))
				return 0;
			d->hlen = 0;
			/* Stream 0 (stdin) is written on stdout, per the
			 * Engine API's attach documentation; 3 is the
			 * engine's own error. */
			if (d->hdr[0] > 3)
				return vg_err_set(e, VG_EPARSE, "docker log "
				    "stream: frame at byte %llu has unknown "
				    "stream %u (expected 0 to 3)",
				    d->offset - 8, d->hdr[0]);
			d->stream = d->hdr[0] == 0 ? 1 : d->hdr[0];
			d->left = (size_t)d->hdr[4] << 24 |
			    (size_t)d->hdr[5] << 16 | (size_t)d->hdr[6] << 8 |
			    (size_t)d->hdr[7];
			d->syslen = 0;
			if (d->stream == 3 && d->left == 0)
				return demux_syserr(d, e);
			continue;
		}
		k = d->left < n ? d->left : n;
		if (d->stream == 3) {
			m = sizeof(d->sys) - 1 - d->syslen;
			memcpy(d->sys + d->syslen, p, k < m ? k : m);
			d->syslen += k < m ? k : m;
		} else if ((r = d->out(d->arg, d->stream, p, k)) != 0)
			return vg_err_set(e, r, "docker log stream: cannot "
			    "write %s", d->stream == 2 ? "stderr" : "stdout");
		d->left -= k;
		d->offset += k;
		p += k;
		n -= k;
		if (d->stream == 3 && d->left == 0)
			return demux_syserr(d, e);
	}
	return 0;
}

/* vg_http_sink over a demultiplexer; see docker.h. */
int
vg_docker_demux_sink(void *arg, const char *p, size_t n)
{
	struct vg_docker_demux *d = arg;

	return vg_docker_demux_feed(d, p, n, &d->err);
}

/* True when no frame is half read. */
int
vg_docker_demux_done(const struct vg_docker_demux *d)
{
	return d->hlen == 0 && d->left == 0;
}

/* A counter of a stats reply: a number >= 0 (absent: -1, bad: -2). */
static double
stats_num(const struct vg_json_value *o, const char *key)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL || v->type == VG_JSON_NULL)
		return -1;
	if (v->type != VG_JSON_NUMBER || !(v->num >= 0) || v->num > 9e18)
		return -2;
	return v->num;
}

/* Parses one stats reply; see docker.h. */
int
vg_docker_stats_parse(const char *body, size_t len,
    struct vg_docker_stats *s, struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root, *cpu, *mem;
	const char *when;
	double tot, user, sys, peak, cur;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	while (len > 0 && (*body == ' ' || *body == '\n' || *body == '\r' ||
	    *body == '\t')) {
		body++;
		len--;
	}
	if (len == 0)
		return vg_err_set(e, VG_ENOENT, "docker: stats: empty reply "
		    "(the container is not running)");
	if (vg_json_parse(body, len, &lim, &doc, e) != 0)
		return vg_err_prefix(e, "docker: stats: ");
	root = vg_json_root(doc);
	if (root->type != VG_JSON_OBJECT) {
		rc = vg_err_set(e, VG_EPARSE, "docker: stats: not an object");
		goto out;
	}
	when = vg_json_get_str(root, "read", "");
	if (strncmp(when, "0001-", 5) == 0) {
		rc = vg_err_set(e, VG_ENOENT, "docker: stats: no sample (the "
		    "container is not running)");
		goto out;
	}
	cpu = vg_json_get(vg_json_get(root, "cpu_stats"), "cpu_usage");
	tot = stats_num(cpu, "total_usage");
	user = stats_num(cpu, "usage_in_usermode");
	sys = stats_num(cpu, "usage_in_kernelmode");
	mem = vg_json_get(root, "memory_stats");
	peak = stats_num(mem, "max_usage");
	cur = stats_num(mem, "usage");
	if (tot == -2 || user == -2 || sys == -2 || peak == -2 ||
	    cur == -2) {
		rc = vg_err_set(e, VG_EPARSE, "docker: stats: a counter is "
		    "not a number >= 0");
		goto out;
	}
	if (user + sys > 0) {
		s->cpu_user = (user > 0 ? user : 0) / 1e9;
		s->cpu_sys = (sys > 0 ? sys : 0) / 1e9;
		s->known |= VG_USAGE_CPU;
	} else if (tot > 0) {
		s->cpu_user = tot / 1e9;
		s->known |= VG_USAGE_CPU;
	}
	if (peak > 0) {
		s->mem = (long long)peak;
		s->mem_exact = 1;
		s->known |= VG_USAGE_RSS;
	} else if (cur > 0) {
		s->mem = (long long)cur;
		s->known |= VG_USAGE_RSS;
	}
	if (s->known == 0)
		rc = vg_err_set(e, VG_ENOENT, "docker: stats: no CPU or "
		    "memory counter");
out:
	vg_json_free(doc);
	return rc;
}

/* Folds one sample into the running maxima; see docker.h. */
void
vg_docker_stats_merge(struct vg_docker_stats *acc,
    const struct vg_docker_stats *s)
{
	if ((s->known & VG_USAGE_CPU) && (!(acc->known & VG_USAGE_CPU) ||
	    s->cpu_user + s->cpu_sys >= acc->cpu_user + acc->cpu_sys)) {
		acc->cpu_user = s->cpu_user;
		acc->cpu_sys = s->cpu_sys;
		acc->known |= VG_USAGE_CPU;
	}
	if ((s->known & VG_USAGE_RSS) && (!(acc->known & VG_USAGE_RSS) ||
	    s->mem > acc->mem)) {
		acc->mem = s->mem;
		acc->known |= VG_USAGE_RSS;
	}
	acc->mem_exact |= s->mem_exact;
}

/* ------------------------------------------------------------------ */
/* The engine                                                          */
/* ------------------------------------------------------------------ */

/* Set by SIGTERM/SIGINT while run() waits; stops every request. */
static volatile sig_atomic_t docker_stop;

/* A connection with its negotiated version prefix. */
struct docker_conn {
	struct vg_http		*h;
	char			 prefix[24];	/* "/v1.41" */
	const volatile sig_atomic_t *stop;
	struct vg_http_resp	 resp;		/* last reply */
};

/* The engine endpoint: docker.host, $DOCKER_HOST, or the default. */
static const char *
docker_endpoint(const struct vg_manifest *m)
{
	const char *env = getenv("DOCKER_HOST");

	if (m != NULL && vg_docker_of(m)->host != NULL && *vg_docker_of(m)->host)
		return vg_docker_of(m)->host;
	if (env != NULL && *env)
		return env;
	return DOCKER_DEFAULT_HOST;
}

/* The "message" of an error reply, or its status. */
static void
reply_message(const struct vg_http_resp *resp, char *out, size_t size)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };
	struct vg_json_doc *doc;
	const char *msg;

	snprintf(out, size, "HTTP %ld", resp->status);
	if (vg_json_parse(resp->body.data, resp->body.len, &lim, &doc,
	    NULL) != 0)
		return;
	msg = vg_json_get_str(vg_json_root(doc), "message", NULL);
	if (msg != NULL)
		snprintf(out, size, "%s (HTTP %ld)", msg, resp->status);
	vg_json_free(doc);
}

/* Tries of one call that fails transiently (connection refused or
 * reset, HTTP 429 or 5xx), and the first pause between them (doubling). */
#define DOCKER_CALL_TRIES	4
#define DOCKER_CALL_BACKOFF	0.25

/*
 * One API call: method on prefix + path, body optional.  On success the
 * reply is in c->resp.  A status of 400 or more is an error naming what
 * (e.g. "creating the container"), except the statuses listed in ok.
 * Transient failures are tried again in place with backoff (every call
 * vigil makes may be repeated: create is by name, start of a started
 * container answers 304); when they persist the error is VG_EAGAIN
 * (5xx, 429) or VG_EIO (connection), both transient (docs/backends/
 * docker.md); 404 is VG_ENOENT and any other status VG_EBACKEND.
 */
static int
docker_call(struct docker_conn *c, const char *method, const char *path,
    const struct vg_buf *body, double timeout, const long *ok,
    const char *what, struct vg_err *e)
{
	struct vg_http_req req = {
		.method = method,
		.body = body ? vg_buf_str(body) : NULL,
		.body_len = body ? body->len : 0,
		.timeout = timeout,
		.stop = c->stop,
	};
	struct timespec ts;
	char *full, msg[512], more[40] = "";
	double pause = DOCKER_CALL_BACKOFF;
	const long *k;
	long st;
	int r, n;

	full = vg_xasprintf("%s%s", c->prefix, path);
	req.path = full;
	for (n = 1;; n++) {
		r = vg_http_do(c->h, &req, &c->resp, e);
		st = r == 0 ? c->resp.status : 0;
		for (k = ok; st >= 400 && k != NULL && *k != 0; k++)
			if (st == *k)
				st = 0;
		if (n >= DOCKER_CALL_TRIES || (c->stop != NULL && *c->stop) ||
		    !(r == VG_EIO || st == 429 || st >= 500))
			break;
		ts.tv_sec = (time_t)pause;
		ts.tv_nsec = (long)((pause - (double)ts.tv_sec) * 1e9);
		(void)nanosleep(&ts, NULL);
		pause *= 2;
		if (e != NULL)
			vg_err_init(e);
	}
	free(full);
	if (r != 0) {
		vg_err_prefix(e, "docker: %s: ", what);
		if (e != NULL && n > 1)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) -
			    strlen(e->msg), " (gave up after %d tries)", n);
		return r;
	}
	if (c->resp.status < 400)
		return 0;
	for (; ok != NULL && *ok != 0; ok++)
		if (c->resp.status == *ok)
			return 0;
	reply_message(&c->resp, msg, sizeof(msg));
	st = c->resp.status;
	if (n > 1)
		snprintf(more, sizeof(more), " (gave up after %d tries)", n);
	return vg_err_set(e, st == 404 ? VG_ENOENT : st == 429 || st >= 500 ?
	    VG_EAGAIN : VG_EBACKEND, "docker: %s: %s%s", what, msg, more);
}

/* Parses the last reply as JSON. */
static int
reply_json(struct docker_conn *c, struct vg_json_doc **docp, const char *what,
    struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };

	if (vg_json_parse(c->resp.body.data, c->resp.body.len, &lim, docp,
	    e) != 0)
		return vg_err_prefix(e, "docker: %s: ", what);
	return 0;
}

/* Closes c. */
static void
docker_close(struct docker_conn *c)
{
	vg_http_free(c->h);
	vg_http_resp_release(&c->resp);
	memset(c, 0, sizeof(*c));
}

/* Connects to the engine at endpoint and negotiates the API version. */
static int
docker_open(struct docker_conn *c, const char *endpoint,
    const volatile sig_atomic_t *stop, struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root;
	char ver[16], hdr[32];
	int r;

	memset(c, 0, sizeof(*c));
	c->stop = stop;
	if ((r = vg_http_open(endpoint, &c->h, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	/* GET /_ping names the version in a header and answers at once;
	 * GET /version (podman runs conmon and runc to fill it, 1-3 s on a
	 * busy host) only when the header is missing. */
	if ((r = docker_call(c, "GET", "/_ping", NULL, DOCKER_CALL_TIMEOUT,
	    NULL, "connecting to the engine", e)) != 0)
		goto out;
	if (vg_http_resp_header(&c->resp, "Api-Version", hdr, sizeof(hdr))) {
		if ((r = vg_docker_api_version(hdr, NULL, ver, e)) != 0)
			goto out;
	} else {
		if ((r = docker_call(c, "GET", "/version", NULL,
		    DOCKER_CALL_TIMEOUT, NULL, "asking the engine for its "
		    "version", e)) != 0)
			goto out;
		if ((r = reply_json(c, &doc, "GET /version", e)) != 0)
			goto out;
		root = vg_json_root(doc);
		if ((r = vg_docker_api_version(vg_json_get_str(root,
		    "ApiVersion", NULL), vg_json_get_str(root, "MinAPIVersion",
		    NULL), ver, e)) != 0)
			goto out;
	}
	snprintf(c->prefix, sizeof(c->prefix), "/v%s", ver);
out:
	vg_json_free(doc);
	if (r != 0)
		docker_close(c);
	return r;
}

/*
 * Asks the engine about each named volume (GET /volumes/NAME) and
 * appends a finding for each that is host access, or that could not be
 * told: an error reply or one that is not the expected JSON fails
 * closed.  A missing volume (404) is created empty, with the default
 * driver, when the container is.  Returns the number of findings, or a
 * negative vg_rc when the engine could not be reached at all.
 */
static int
named_volume_findings(struct docker_conn *c, const struct vg_docker_named *nv,
    const struct vg_host_site *site, struct vg_buf *why, struct vg_err *e)
{
	static const long ok[] = { 400, 404, 409, 500, 502, 503, 0 };
	struct vg_buf what = VG_BUF_INIT;
	struct vg_json_doc *doc;
	char msg[256], *path;
	size_t i;
	int r, n = 0;

	for (i = 0; i < nv->names.n; i++) {
		path = vg_xasprintf("/volumes/%s", nv->names.v[i]);
		r = docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, ok,
		    "inspecting a volume", e);
		free(path);
		if (r != 0)
			goto fail;
		vg_buf_reset(&what);
		if (c->resp.status == 404)
			continue;
		if (c->resp.status >= 400) {
			reply_message(&c->resp, msg, sizeof(msg));
			vg_buf_printf(&what, "could not be inspected (%s)", msg);
		} else if (reply_json(c, &doc, "inspecting a volume",
		    NULL) != 0)
			vg_buf_adds(&what, "has an inspect reply that is not "
			    "JSON");
		else {
			(void)vg_docker_volume_judge(vg_json_root(doc), site,
			    &what);
			vg_json_free(doc);
		}
		if (what.len == 0)
			continue;
		vg_buf_printf(why, "%s: named volume '%s' %s\n",
		    nv->labels.v[i], nv->names.v[i], vg_buf_str(&what));
		n++;
	}
	vg_buf_release(&what);
	return n;
fail:
	vg_buf_release(&what);
	return r;
}

/* Reads the JSON-lines progress of a pull, remembering the last error. */
struct pull_state {
	struct vg_buf	line;
	char		error[512];
	int		skipping;	/* inside an over-long line */
};

/* Looks at one complete progress line. */
static void
pull_line(struct pull_state *ps)
{
	struct vg_json_doc *doc;
	const char *msg;

	if (vg_json_parse(ps->line.data, ps->line.len, NULL, &doc, NULL) != 0)
		return;
	if ((msg = vg_json_get_str(vg_json_root(doc), "error", NULL)) != NULL)
		snprintf(ps->error, sizeof(ps->error), "%s", msg);
	vg_json_free(doc);
}

/* vg_http_sink for a pull's progress stream. */
static int
pull_sink(void *arg, const char *p, size_t n)
{
	struct pull_state *ps = arg;
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl ? (size_t)(nl - p) : n;
		if (!ps->skipping && ps->line.len + k <= DOCKER_PULL_LINE_MAX)
			vg_buf_add(&ps->line, p, k);
		else
			ps->skipping = 1;
		if (nl == NULL)
			break;
		if (!ps->skipping && ps->line.len > 0)
			pull_line(ps);
		vg_buf_reset(&ps->line);
		ps->skipping = 0;
		p += k + 1;
		n -= k + 1;
	}
	return 0;
}

/* Pulls image through POST /images/create. */
static int
docker_pull(struct docker_conn *c, const char *image, struct vg_err *e)
{
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT, path = VG_BUF_INIT;
	struct pull_state ps = { .line = VG_BUF_INIT };
	struct vg_http_req req = {
		.method = "POST",
		.timeout = DOCKER_PULL_TIMEOUT,
		.sink = pull_sink,
		.sink_arg = &ps,
		.stop = c->stop,
	};
	char msg[512];
	int r;

	if ((r = vg_docker_image_ref(image, &from, &tag, e)) != 0)
		goto out;
	vg_buf_printf(&path, "%s/images/create?fromImage=", c->prefix);
	vg_http_escape(&path, vg_buf_str(&from));
	if (tag.len > 0) {
		vg_buf_adds(&path, "&tag=");
		vg_http_escape(&path, vg_buf_str(&tag));
	}
	req.path = vg_buf_str(&path);
	if ((r = vg_http_do(c->h, &req, &c->resp, e)) != 0) {
		vg_err_prefix(e, "docker: pulling image '%s': ", image);
		goto out;
	}
	if (ps.line.len > 0 && !ps.skipping)
		pull_line(&ps);
	if (c->resp.status >= 400) {
		snprintf(msg, sizeof(msg), "HTTP %ld", c->resp.status);
		r = vg_err_set(e, VG_EBACKEND, "docker: pulling image '%s': %s",
		    image, ps.error[0] ? ps.error : msg);
	} else if (ps.error[0] != '\0')
		r = vg_err_set(e, VG_EBACKEND, "docker: pulling image '%s': %s",
		    image, ps.error);
out:
	vg_buf_release(&from);
	vg_buf_release(&tag);
	vg_buf_release(&path);
	vg_buf_release(&ps.line);
	return r;
}

/*
 * Makes sure the image is present per pull ("missing", "always",
 * "never"); always_pull is false inside run(), where "always" already
 * happened once in prepare().
 */
static int
docker_ensure_image(struct docker_conn *c, const struct vg_manifest *m,
    int always_pull, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	const char *pull = vg_docker_of(m)->pull ? vg_docker_of(m)->pull : "missing";
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT;
	char *path;
	int r;

	if ((r = vg_docker_image_ref(m->image, &from, &tag, e)) != 0)
		goto out;
	if (always_pull && strcmp(pull, "always") == 0) {
		r = docker_pull(c, m->image, e);
		goto out;
	}
	path = vg_xasprintf("/images/%s/json", m->image);
	r = docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, ok404,
	    "looking up the image", e);
	free(path);
	if (r != 0 || c->resp.status != 404)
		goto out;
	if (strcmp(pull, "never") == 0)
		r = vg_err_set(e, VG_ENOENT, "docker: image '%s' is not present "
		    "and docker.pull is 'never' (use 'missing' or 'always' to "
		    "pull it)", m->image);
	else
		r = docker_pull(c, m->image, e);
out:
	vg_buf_release(&from);
	vg_buf_release(&tag);
	return r;
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

/* Reports whether the engine answers, for `vigil doctor`. */
static void
docker_probe(struct vg_buf *out)
{
	struct docker_conn c;
	struct vg_err e;
	const char *ep = docker_endpoint(NULL);

	vg_err_init(&e);
	if (docker_open(&c, ep, NULL, &e) != 0) {
		vg_buf_printf(out, "docker: missing (%s; set DOCKER_HOST or "
		    "docker.host to the engine's socket)\n", e.msg);
		return;
	}
	vg_buf_printf(out, "docker: ok (%s, API %s)\n", ep, c.prefix + 2);
	docker_close(&c);
}

/* plugin op host_check: the engine m names must answer here. */
static void
docker_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	struct docker_conn c;
	struct vg_err e;
	const char *ep = docker_endpoint(m);

	vg_err_init(&e);
	if (docker_open(&c, ep, NULL, &e) != 0) {
		vg_strv_pushf(why, "%s (start the engine, or point "
		    "DOCKER_HOST or docker.host at its socket)", e.msg);
		return;
	}
	docker_close(&c);
}

/* Checks the docker section beyond its schema. */
static int
docker_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_docker_conf *dc = vg_docker_of(m);
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT;
	struct vg_docker_mount mt;
	struct vg_docker_vol v;
	struct vg_loc loc;
	struct vg_err e;
	size_t i;
	int bad = 0;

	vg_err_init(&e);
	if (vg_docker_image_ref(m->image, &from, &tag, &e) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "image"), "%s",
		    e.msg);
		bad = 1;
	}
	for (i = 0; i < dc->volumes.n; i++) {
		if (vg_docker_vol_parse(dc->volumes.v[i], &v, &e) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "docker.volumes[%zu]", i), "docker.volumes: %s",
			    e.msg);
			bad = 1;
		}
		vg_docker_vol_release(&v);
	}
	if (dc->pull != NULL && strcmp(dc->pull, "missing") != 0 &&
	    strcmp(dc->pull, "always") != 0 && strcmp(dc->pull, "never") != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "docker.pull"),
		    "docker.pull: '%s' is not one of missing, "
		    "always, never", dc->pull);
		bad = 1;
	}
	for (i = 0; i < dc->mounts.n; i++) {
		if (vg_docker_mount_parse(dc->mounts.v[i], &mt, &e) != 0) {
			vg_diag_add(d, &loc, "docker.mounts: %s", e.msg);
			bad = 1;
		}
		vg_docker_mount_release(&mt);
	}
	for (i = 0; i < dc->security_opt.n; i++)
		if (dc->security_opt.v[i][0] == '\0') {
			vg_diag_add(d, &loc, "docker.security_opt: an entry is "
			    "empty (expected e.g. seccomp=unconfined)");
			bad = 1;
		}
	for (i = 0; i < dc->sysctls.n; i++)
		if (dc->sysctls.v[i].key[0] == '\0' ||
		    strspn(dc->sysctls.v[i].key, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") !=
		    strlen(dc->sysctls.v[i].key)) {
			vg_diag_add(d, &loc, "docker.sysctls: '%s' is not a "
			    "kernel parameter name (such as "
			    "net.core.somaxconn)", dc->sysctls.v[i].key);
			bad = 1;
		}
	for (i = 0; i < dc->devices.n; i++)
		if (dc->devices.v[i][0] != '/') {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "docker.devices[%zu]", i), "docker.devices: '%s' "
			    "must start with the host device path (/dev/...)",
			    dc->devices.v[i]);
			bad = 1;
		}
	if (m->workdir != NULL && m->workdir[0] != '/') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "workdir"),
		    "workdir: '%s' must be an absolute path inside the "
		    "container", m->workdir);
		bad = 1;
	}
	vg_buf_release(&from);
	vg_buf_release(&tag);
	return bad ? VG_EINVAL : 0;
}

/* Once per run: connect, and pull the image per docker.pull. */
static int
docker_prepare(const struct vg_manifest *m, const char *run_dir,
    struct vg_err *e)
{
	struct docker_conn c;
	int r;

	if ((r = docker_open(&c, docker_endpoint(m), NULL, e)) != 0)
		return r;
	r = docker_ensure_image(&c, m, 1, e);
	docker_close(&c);
	return r;
}

/* Signal handler: asks run() to stop. */
static void
docker_on_signal(int sig)
{
	(void)sig;
	docker_stop = 1;
}

/* Where a container's log frames go. */
struct log_sink {
	int			fd[3];		/* [1] stdout, [2] stderr */
	unsigned long long	written[3];	/* bytes of the log seen per
						   stream, skipped ones too */
	unsigned long long	skip[3];	/* bytes to drop first */
};

/* Writes a log piece to its file, all of it, after the skipped part. */
static int
log_out(void *arg, int stream, const char *p, size_t n)
{
	struct log_sink *ls = arg;
	size_t k;

	if (ls->skip[stream] > 0) {
		k = ls->skip[stream] < n ? (size_t)ls->skip[stream] : n;
		ls->skip[stream] -= k;
		ls->written[stream] += k;
		p += k;
		n -= k;
	}
	ls->written[stream] += n;
	return vg_write_all(ls->fd[stream], p, n) != 0 ? VG_EIO : 0;
}

/*
 * After the follow stream was cut (timeout, cancel): reads the whole log
 * of the stopped container again and keeps only what had not arrived, so
 * the task's last words (a handler's message on SIGTERM) are not lost.
 * Per-stream byte counts make this independent of how frames split.
 */
static void
drain_logs(struct docker_conn *c, const char *id, struct log_sink *ls)
{
	struct vg_docker_demux dm;
	struct vg_http_req req = {
		.method = "GET",
		.timeout = DOCKER_CALL_TIMEOUT,
		.sink = vg_docker_demux_sink,
		.sink_arg = &dm,
	};
	char *path = vg_xasprintf("%s/containers/%s/logs?stdout=1&stderr=1",
	    c->prefix, id);

	ls->skip[1] = ls->written[1];
	ls->skip[2] = ls->written[2];
	ls->written[1] = ls->written[2] = 0;
	vg_docker_demux_init(&dm, log_out, ls);
	req.path = path;
	(void)vg_http_do(c->h, &req, &c->resp, NULL);
	free(path);
}

/*
 * POST /containers/ID/wait for up to timeout seconds (0 = no limit).
 * Sets *code to the StatusCode; returns VG_ETIMEOUT, VG_ECANCELED or an
 * error otherwise.
 */
static int
docker_wait(struct docker_conn *c, const char *id, double timeout,
    long *code, struct vg_err *e)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *root, *err;
	char *path = vg_xasprintf("/containers/%s/wait", id);
	int r;

	r = docker_call(c, "POST", path, NULL, timeout, NULL,
	    "waiting for the container", e);
	free(path);
	if (r != 0)
		return r;
	if ((r = reply_json(c, &doc, "container wait", e)) != 0)
		return r;
	root = vg_json_root(doc);
	err = vg_json_get(root, "Error");
	if (err != NULL && err->type == VG_JSON_OBJECT &&
	    vg_json_get_str(err, "Message", "")[0] != '\0') {
		r = vg_err_set(e, VG_EBACKEND, "docker: waiting for the "
		    "container: %s", vg_json_get_str(err, "Message", ""));
	} else if (vg_json_get(root, "StatusCode") == NULL ||
	    vg_json_get(root, "StatusCode")->type != VG_JSON_NUMBER)
		r = vg_err_set(e, VG_EBACKEND, "docker: waiting for the "
		    "container: reply has no StatusCode");
	else {
		double sc = vg_json_get_num(root, "StatusCode", -1);

		*code = sc >= -1 && sc <= 1000000 ? (long)sc : -1;
	}
	vg_json_free(doc);
	return r;
}

/* Sends sig to the container; errors are ignored (it may be gone). */
static void
docker_kill(struct docker_conn *c, const char *id, const char *sig)
{
	static const long ok[] = { 404, 409, 0 };
	char *path = vg_xasprintf("/containers/%s/kill?signal=%s", id, sig);

	(void)docker_call(c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, ok,
	    "signalling the container", NULL);
	free(path);
}

/* Stops the container: SIGTERM, kill_grace seconds, then SIGKILL. */
static void
docker_stop_container(struct docker_conn *c, const char *id, double grace,
    int *sig)
{
	long code;

	docker_kill(c, id, "SIGTERM");
	*sig = SIGTERM;
	if (docker_wait(c, id, grace > 0 ? grace : 0.001, &code, NULL) == 0)
		return;
	docker_kill(c, id, "SIGKILL");
	*sig = SIGKILL;
	(void)docker_wait(c, id, DOCKER_CALL_TIMEOUT, &code, NULL);
}

/* Removes the container, force. */
static int
docker_remove(struct docker_conn *c, const char *id, struct vg_err *e)
{
	static const long ok[] = { 404, 0 };
	char *path = vg_xasprintf("/containers/%s?force=1&v=1", id);
	int r;

	r = docker_call(c, "DELETE", path, NULL, DOCKER_CALL_TIMEOUT, ok,
	    "removing the container", e);
	free(path);
	return r;
}

/* True when the last container the engine killed was out of memory. */
static int
docker_oom_killed(struct docker_conn *c, const char *id)
{
	struct vg_json_doc *doc;
	const struct vg_json_value *st;
	char *path = vg_xasprintf("/containers/%s/json", id);
	int oom = 0;

	if (docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting the container", NULL) == 0 &&
	    reply_json(c, &doc, "inspect", NULL) == 0) {
		st = vg_json_get(vg_json_get(vg_json_root(doc), "State"),
		    "OOMKilled");
		oom = st != NULL && st->type == VG_JSON_BOOL && st->b;
		vg_json_free(doc);
	}
	free(path);
	return oom;
}

/*
 * Accounting.  The engine's stats describe a running container only:
 * podman 4.3 answers an exited one with an empty body, dockerd with
 * zeros.  So a thread samples GET /containers/ID/stats?stream=false
 * (one-shot: no wait for a second sample) on a connection of its own
 * while the container runs, every twentieth of the time it has run so
 * far, within [DOCKER_SAMPLE_MIN, DOCKER_SAMPLE_MAX] seconds, and keeps
 * the largest counters seen.  CPU time so misses at most what the
 * container used after the last sample.
 */
#define DOCKER_SAMPLE_MIN	0.1
#define DOCKER_SAMPLE_MAX	1.0
#define DOCKER_SAMPLE_SHARE	20.0

struct docker_sampler {
	pthread_t		 th;
	int			 on;		/* the thread runs */
	struct vg_http		*h;		/* its own connection */
	char			*path;		/* prefix + stats path */
	double			 t0;		/* vg_mono() at start */
	volatile sig_atomic_t	 done;		/* stops its request too */
	volatile sig_atomic_t	 exited;	/* stats saw the container end
						   (podman 4.3: 200 and an empty
						   body): a log stream left open
						   by the engine is ended */
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;		/* on CLOCK_MONOTONIC */
	struct vg_docker_stats	 acc;		/* under mu */
};

/* The sampling thread: one stats call, then a wait, until done. */
static void *
sampler_main(void *arg)
{
	struct docker_sampler *sp = arg;
	struct vg_http_req req = {
		.method = "GET", .path = sp->path,
		.timeout = DOCKER_CALL_TIMEOUT, .stop = &sp->done,
	};
	struct vg_http_resp resp = { 0, VG_BUF_INIT, VG_BUF_INIT };
	struct vg_docker_stats one;
	struct timespec ts;
	double wait;
	int got;

	pthread_mutex_lock(&sp->mu);
	while (!sp->done) {
		pthread_mutex_unlock(&sp->mu);
		got = vg_http_do(sp->h, &req, &resp, NULL) == 0 &&
		    resp.status == 200 && vg_docker_stats_parse(
		    resp.body.data, resp.body.len, &one, NULL) == 0;
		if (!got && (resp.status == 404 || (resp.status == 200 &&
		    resp.body.len == 0)))
			sp->exited = 1;
		pthread_mutex_lock(&sp->mu);
		if (got)
			vg_docker_stats_merge(&sp->acc, &one);
		wait = (vg_mono() - sp->t0) / DOCKER_SAMPLE_SHARE;
		wait = wait < DOCKER_SAMPLE_MIN ? DOCKER_SAMPLE_MIN :
		    wait > DOCKER_SAMPLE_MAX ? DOCKER_SAMPLE_MAX : wait;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)wait;
		ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!sp->done &&
		    pthread_cond_timedwait(&sp->cv, &sp->mu, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&sp->mu);
	vg_http_resp_release(&resp);
	return NULL;
}

/* Starts sampling container id; without a thread or a connection the
 * attempt simply goes unaccounted. */
static void
sampler_start(struct docker_sampler *sp, const char *endpoint,
    const char *prefix, const char *id)
{
	pthread_condattr_t ca;
	sigset_t block, old;

	memset(sp, 0, sizeof(*sp));
	if (vg_http_open(endpoint, &sp->h, NULL) != 0)
		return;
	sp->path = vg_xasprintf("%s/containers/%s/stats?stream=false&"
	    "one-shot=true", prefix, id);
	sp->t0 = vg_mono();
	pthread_mutex_init(&sp->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* SIGTERM and SIGINT stay the waiting thread's to take. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	sp->on = pthread_create(&sp->th, NULL, sampler_main, sp) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!sp->on) {
		pthread_cond_destroy(&sp->cv);
		pthread_mutex_destroy(&sp->mu);
	}
}

/* Stops sampling (idempotent) and hands back what was seen. */
static void
sampler_stop(struct docker_sampler *sp, struct vg_docker_stats *out)
{
	if (sp->on) {
		pthread_mutex_lock(&sp->mu);
		sp->done = 1;
		pthread_cond_signal(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		pthread_join(sp->th, NULL);
		*out = sp->acc;
		pthread_cond_destroy(&sp->cv);
		pthread_mutex_destroy(&sp->mu);
		sp->on = 0;
	}
	vg_http_free(sp->h);
	sp->h = NULL;
	free(sp->path);
	sp->path = NULL;
}

/* Fills r's usage from what the attempt asked for and the samples. */
static void
usage_fill(const struct vg_attempt *a, const struct vg_docker_stats *st,
    struct vg_result *r)
{
	struct vg_usage *u = &r->usage;

	vg_usage_given(u, &a->res);
	if (st->known & VG_USAGE_CPU) {
		u->cpu_user = st->cpu_user;
		u->cpu_sys = st->cpu_sys;
		u->known |= VG_USAGE_CPU;
	}
	if (st->known & VG_USAGE_RSS) {
		u->max_rss = st->mem;
		u->known |= VG_USAGE_RSS;
	}
}

/* A container name from the run, task and attempt: [A-Za-z0-9_.-]. */
static char *
container_name(const struct vg_attempt *a)
{
	char *s = vg_xasprintf("vigil-%s-%d-%d", a->run_id ? a->run_id : "x",
	    a->task ? a->task->index : 0, a->attempt), *p;

	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			*p = '_';
	return s;
}

/* Creates the container from body (replacing a leftover of the same
 * name). */
static int
docker_create(struct docker_conn *c, const struct vg_attempt *a,
    const struct vg_buf *body, char **idp, struct vg_err *e)
{
	static const long ok409[] = { 409, 0 };
	struct vg_json_doc *doc = NULL;
	char *name, *path;
	const char *id;
	int r, tries;

	*idp = NULL;
	name = container_name(a);
	path = vg_xasprintf("/containers/create?name=%s", name);
	for (tries = 0; tries < 2; tries++) {
		if ((r = docker_call(c, "POST", path, body,
		    DOCKER_CALL_TIMEOUT, ok409, "creating the container",
		    e)) != 0)
			goto out;
		if (c->resp.status != 409)
			break;
		/* A container of an earlier, killed monitor of this very
		 * attempt: it is ours to replace. */
		if ((r = docker_remove(c, name, e)) != 0)
			goto out;
	}
	if (c->resp.status == 409) {
		r = vg_err_set(e, VG_EBACKEND, "docker: creating the container: "
		    "name '%s' is still in use", name);
		goto out;
	}
	if ((r = reply_json(c, &doc, "creating the container", e)) != 0)
		goto out;
	if ((id = vg_json_get_str(vg_json_root(doc), "Id", NULL)) == NULL ||
	    *id == '\0' || strspn(id, "0123456789abcdef") != strlen(id)) {
		r = vg_err_set(e, VG_EBACKEND, "docker: creating the container: "
		    "reply has no valid \"Id\"");
		goto out;
	}
	*idp = vg_xstrdup(id);
out:
	vg_json_free(doc);
	free(name);
	free(path);
	return r;
}

/*
 * The checks before create: host access, judged on body (the create
 * request that will be sent) and the engine's view of its named volumes,
 * then the image.  Returns 0 to go on; 1 with r filled as DENIED.
 */
static int
docker_precheck(struct docker_conn *c, const struct vg_attempt *a,
    const struct vg_buf *body, struct vg_result *r, struct vg_err *e)
{
	struct vg_buf why = VG_BUF_INIT;
	struct vg_docker_named nv = { VG_STRV_INIT, VG_STRV_INIT };
	struct vg_host_site site;
	struct vg_host_verdict hv;
	int rc;

	if ((rc = vg_policy_host_site(&a->m->policy, &site, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	(void)vg_docker_host_access(a, vg_buf_str(body), body->len, &site,
	    &why, &nv);
	if ((rc = named_volume_findings(c, &nv, &site, &why, e)) < 0)
		goto out;
	vg_policy_host_access(&a->m->policy, vg_buf_str(&why), NULL, &hv);
	if (!hv.allowed) {
		r->state = VG_ST_DENIED;
		/* The precision keeps the reason to what r->reason holds. */
		snprintf(r->reason, sizeof(r->reason), "host access refused: "
		    "%.*s", (int)(sizeof(r->reason) -
		    sizeof("host access refused: ")), hv.reason);
		vg_err_set(e, VG_EDENIED, "host access refused: %s", hv.reason);
		rc = 1;
		goto out;
	}
	rc = docker_ensure_image(c, a->m, 0, e);
out:
	vg_docker_named_release(&nv);
	vg_policy_host_site_release(&site);
	vg_buf_release(&why);
	return rc;
}

/* How often a dropped log stream is picked up again within an attempt,
 * and the first pause before that (doubling). */
#define DOCKER_STREAM_TRIES	5
#define DOCKER_STREAM_BACKOFF	0.2

/* Sleeps secs unless a stop request comes; -1 then. */
static int
docker_nap(double secs)
{
	struct timespec ts;

	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (!docker_stop && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return docker_stop ? -1 : 0;
}

/*
 * Streams the logs of running container id into ls until it ends, then
 * waits for its status, honouring a->timeout and stop requests; fills r.
 * A log stream that drops (the engine restarted its API, a reset
 * socket) is read again from its start with what arrived skipped, up to
 * DOCKER_STREAM_TRIES times with backoff.  The caller removes the
 * container.
 */
static int
docker_follow(struct docker_conn *c, struct vg_attempt *a, const char *id,
    struct log_sink *ls, struct vg_result *r, struct vg_err *e)
{
	struct vg_docker_demux dm;
	struct docker_sampler smp = { .on = 0 };
	struct vg_docker_stats stats = { .known = 0 };
	struct vg_http_req req = { .method = "GET" };
	struct vg_err le;
	double deadline = 0, pause = DOCKER_STREAM_BACKOFF;
	char *path;
	long code = -1;
	int rc, timed_out = 0, cancelled = 0, sig = 0, cut = 0, tries;

	if (a->timeout > 0)
		deadline = vg_mono() + a->timeout;
	sampler_start(&smp, docker_endpoint(a->m), c->prefix, id);

	/* The log stream ends when the container does. */
	path = vg_xasprintf("%s/containers/%s/logs?follow=1&stdout=1&stderr=1",
	    c->prefix, id);
	req.path = path;
	req.sink = vg_docker_demux_sink;
	req.sink_arg = &dm;
	req.stop = &docker_stop;
	req.stop2 = &smp.exited;
	for (tries = 1;; tries++) {
		vg_docker_demux_init(&dm, log_out, ls);
		req.timeout = vg_time_left(deadline, 0.001);
		vg_err_init(&le);
		rc = vg_http_do(c->h, &req, &c->resp, &le);
		if (rc != 0 && dm.err.rc != 0) {
			/* Our side stopped it: said as such, not retried. */
			rc = vg_err_set(&le, dm.err.rc, "docker: log stream "
			    "of %.12s: %s", id, dm.err.msg);
			break;
		}
		if (rc != VG_EIO || tries >= DOCKER_STREAM_TRIES)
			break;
		/* Dropped: read it again from the start, skipping what is
		 * in the files already. */
		vg_warn("docker: log stream of %.12s dropped (%s); reading "
		    "it again", id, le.msg);
		if (docker_nap(pause) != 0) {
			rc = VG_ECANCELED;
			break;
		}
		pause *= 2;
		ls->skip[1] = ls->written[1];
		ls->skip[2] = ls->written[2];
		ls->written[1] = ls->written[2] = 0;
	}
	free(path);
	if (rc == VG_ETIMEOUT)
		timed_out = 1;
	else if (rc == VG_ECANCELED && docker_stop)
		cancelled = 1;
	else if (rc == VG_ECANCELED && smp.exited) {
		/* The container ended but the engine kept its log stream
		 * open (seen with podman 4.3 on very short tasks): the rest of
		 * the logs is read once the wait below has seen the end. */
		rc = 0;
		cut = 1;
	}
	else if (rc != 0) {
		/* Output trouble must not leave the container running;
		 * record it and still wait for the task's status. */
		vg_err_set(e, rc, "%s", le.msg);
	}
	if (!timed_out && !cancelled) {
		rc = docker_wait(c, id, vg_time_left(deadline, 0.001), &code,
		    &le);
		if (rc == VG_ETIMEOUT)
			timed_out = 1;
		else if (rc == VG_ECANCELED)
			cancelled = 1;
		else if (rc != 0) {
			sampler_stop(&smp, &stats);
			vg_err_set(e, rc, "%s", le.msg);
			return vg_result_fail(r, e);
		}
	}
	if (cut)
		drain_logs(c, id, ls);
	sampler_stop(&smp, &stats);
	usage_fill(a, &stats, r);
	if (timed_out || cancelled) {
		/* A stop request must not stop the stopping. */
		c->stop = NULL;
		docker_stop_container(c, id, a->kill_grace, &sig);
		drain_logs(c, id, ls);
		r->signal = sig;
		r->exit_code = -1;
		r->state = timed_out ? VG_ST_TIMEOUT : VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "%s after %.1f s; "
		    "container stopped with %s", timed_out ? "timed out" :
		    "cancelled", vg_now() - r->started, sig == SIGKILL ?
		    "SIGKILL" : "SIGTERM");
	} else if (code == 0) {
		r->state = VG_ST_SUCCEEDED;
		r->exit_code = 0;
	} else {
		r->exit_code = (int)code;
		if (code == 128 + SIGKILL && docker_oom_killed(c, id)) {
			r->state = VG_ST_OOM;
			snprintf(r->reason, sizeof(r->reason), "out of memory: "
			    "killed by the kernel at the %llu-byte limit",
			    (unsigned long long)a->res.memory);
		} else {
			r->state = VG_ST_FAILED;
			snprintf(r->reason, sizeof(r->reason), "exit code %ld",
			    code);
		}
	}
	r->ended = vg_now();
	if (e->rc != 0 && r->state == VG_ST_SUCCEEDED) {
		/* The task succeeded but its output was not all kept. */
		return vg_result_fail(r, e);
	}
	return 0;
}

/* Removes container id at the end of an attempt; a failure is noted in
 * r's reason. */
static void
docker_finish_container(struct docker_conn *c, const char *id,
    struct vg_result *r)
{
	struct vg_err le;

	c->stop = NULL;
	vg_err_init(&le);
	if (docker_remove(c, id, &le) != 0)
		snprintf(r->reason + strlen(r->reason), sizeof(r->reason) -
		    strlen(r->reason), "%s(container %.12s not removed: %s)",
		    r->reason[0] ? " " : "", id, le.msg);
}

/* Installs the stop handler for SIGTERM and SIGINT, saving the old. */
static void
docker_signals(struct sigaction *old_term, struct sigaction *old_int)
{
	struct sigaction sa;

	docker_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = docker_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, old_term);
	sigaction(SIGINT, &sa, old_int);
}

/* Starts r as BACKEND_ERROR until known and connects c to the engine;
 * r says why when that fails. */
static int
docker_begin(struct docker_conn *c, const struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	gethostname(r->node, sizeof(r->node) - 1);
	if ((rc = docker_open(c, docker_endpoint(a->m), &docker_stop,
	    e)) != 0)
		vg_result_fail(r, e);
	return rc;
}

/*
 * Runs one attempt to completion; see backend.h.  Returns 0 with r
 * filled for every outcome of the task (including DENIED, TIMEOUT and
 * CANCELLED), or a negative vg_rc with r set to BACKEND_ERROR and e
 * saying why.
 */
static int
docker_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct docker_conn c;
	struct log_sink ls = { .fd = { -1, -1, -1 } };
	struct vg_buf body = VG_BUF_INIT;
	char *id = NULL, *path = NULL, owner[320];
	int rc;

	docker_signals(&old_term, &old_int);
	if ((rc = docker_begin(&c, a, r, e)) != 0)
		goto restore;
	vg_backend_owner_label(owner, sizeof(owner));
	vg_docker_create_body(a, owner, &body);
	if ((rc = docker_precheck(&c, a, &body, r, e)) != 0) {
		if (rc == 1) {
			rc = 0;		/* DENIED is an outcome */
		} else {
			vg_result_fail(r, e);
			/* A missing image (the engine's 404) will not
			 * appear by trying again. */
			if (rc == VG_ENOENT)
				r->cause = VG_CAUSE_PERMANENT;
		}
		goto close;
	}
	if ((ls.fd[1] = vg_task_output_open(a->task_dir, 0, "stdout",
	    0, e)) < 0 ||
	    (ls.fd[2] = vg_task_output_open(a->task_dir, 0, "stderr",
	    0, e)) < 0) {
		rc = vg_result_fail(r, e);
		goto close;
	}
	if ((rc = docker_create(&c, a, &body, &id, e)) != 0) {
		vg_result_fail(r, e);
		goto close;
	}
	path = vg_xasprintf("/containers/%s/start", id);
	rc = docker_call(&c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "starting the container", e);
	free(path);
	if (rc != 0)
		vg_result_fail(r, e);
	else {
		r->started = vg_now();
		rc = docker_follow(&c, a, id, &ls, r, e);
	}
	docker_finish_container(&c, id, r);
close:
	if (ls.fd[1] >= 0)
		close(ls.fd[1]);
	if (ls.fd[2] >= 0)
		close(ls.fd[2]);
	free(id);
	vg_buf_release(&body);
	docker_close(&c);
restore:
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Takes over the container of attempt a after vigil and its monitor
 * died; see backend.h.  The container is found by its name (run, task
 * and attempt, as docker_create named it); its logs are read from the
 * start with what the task files hold skipped, then it is waited for
 * and removed like in run.
 */
static int
docker_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct docker_conn c;
	struct log_sink ls = { .fd = { -1, -1, -1 } };
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *st;
	char *name = container_name(a), *path, *id = NULL;
	struct stat sb;
	int rc, i;

	docker_signals(&old_term, &old_int);
	if ((rc = docker_begin(&c, a, r, e)) != 0)
		goto restore;
	path = vg_xasprintf("/containers/%s/json", name);
	rc = docker_call(&c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting the container", e);
	free(path);
	if (rc == VG_ENOENT) {
		rc = vg_err_set(e, VG_ENOENT, "docker: no container '%s' was "
		    "left", name);
		goto close;
	}
	if (rc != 0 || (rc = reply_json(&c, &doc, "inspect", e)) != 0) {
		vg_result_fail(r, e);
		goto close;
	}
	id = vg_xstrdup(vg_json_get_str(vg_json_root(doc), "Id", name));
	st = vg_json_get(vg_json_root(doc), "State");
	if (strcmp(vg_json_get_str(st, "Status", ""), "created") == 0) {
		/* Never started: nothing ran; remove it, run again. */
		docker_finish_container(&c, id, r);
		rc = vg_err_set(e, VG_ENOENT, "docker: container '%s' was "
		    "created but never started; removed", name);
		goto close;
	}
	if ((ls.fd[1] = vg_task_output_reopen(a->task_dir, 0, "stdout",
	    e)) < 0 ||
	    (ls.fd[2] = vg_task_output_reopen(a->task_dir, 0, "stderr",
	    e)) < 0) {
		rc = vg_result_fail(r, e);
		docker_finish_container(&c, id, r);
		goto close;
	}
	/* What the files hold already is skipped in the log. */
	for (i = 1; i <= 2; i++)
		if (fstat(ls.fd[i], &sb) == 0)
			ls.skip[i] = (unsigned long long)sb.st_size;
	r->started = vg_now();
	rc = docker_follow(&c, a, id, &ls, r, e);
	docker_finish_container(&c, id, r);
close:
	if (ls.fd[1] >= 0)
		close(ls.fd[1]);
	if (ls.fd[2] >= 0)
		close(ls.fd[2]);
	vg_json_free(doc);
	free(id);
	free(name);
	docker_close(&c);
restore:
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Removes vigil's containers: every one of run_id (of task `task` when
 * >= 0), or (run_id NULL) those whose owner label names a process of
 * this host that no longer exists; then an engine that cannot be reached
 * has none.
 */
static int
docker_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	struct vg_buf path = VG_BUF_INIT, filt = VG_BUF_INIT;
	struct vg_json_writer w;
	struct docker_conn c;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *list, *ct, *labels;
	const char *id, *owner;
	char *label;
	size_t i;
	int rc;

	if ((rc = docker_open(&c, docker_endpoint(m), NULL, e)) != 0)
		/* Sweeping for dead owners (gc) where no engine answers:
		 * nothing here that vigil could have made. */
		return rc == VG_EIO && run_id == NULL ? 0 : rc;
	vg_json_writer_init(&w, &filt);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "label");
	vg_json_arr_begin(&w);
	vg_json_str(&w, VG_DOCKER_LABEL "=1");
	if (run_id != NULL) {
		label = vg_xasprintf("%s=%s", VG_DOCKER_LABEL_RUN, run_id);
		vg_json_str(&w, label);
		free(label);
	}
	if (run_id != NULL && task >= 0) {
		label = vg_xasprintf("%s=%d", VG_DOCKER_LABEL_TASK, task);
		vg_json_str(&w, label);
		free(label);
	}
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	vg_buf_adds(&path, "/containers/json?all=1&filters=");
	vg_http_escape(&path, vg_buf_str(&filt));
	if ((rc = docker_call(&c, "GET", vg_buf_str(&path), NULL,
	    DOCKER_CALL_TIMEOUT, NULL, "listing containers", e)) != 0 ||
	    (rc = reply_json(&c, &doc, "listing containers", e)) != 0)
		goto out;
	list = vg_json_root(doc);
	if (list->type != VG_JSON_ARRAY) {
		rc = vg_err_set(e, VG_EBACKEND, "docker: listing containers: "
		    "reply is not an array");
		goto out;
	}
	for (i = 0; i < list->len; i++) {
		ct = list->items[i];
		labels = vg_json_get(ct, "Labels");
		id = vg_json_get_str(ct, "Id", NULL);
		owner = vg_json_get_str(labels, VG_DOCKER_LABEL_OWNER, NULL);
		if (id == NULL || strcmp(vg_json_get_str(labels,
		    VG_DOCKER_LABEL, ""), "1") != 0)
			continue;
		if (run_id != NULL && strcmp(vg_json_get_str(labels,
		    VG_DOCKER_LABEL_RUN, ""), run_id) != 0)
			continue;
		if (run_id != NULL && task >= 0 && atoi(vg_json_get_str(labels,
		    VG_DOCKER_LABEL_TASK, "-1")) != task)
			continue;
		if (run_id == NULL && !vg_backend_owner_dead(owner))
			continue;
		if ((rc = docker_remove(&c, id, e)) != 0)
			goto out;
		if (report != NULL)
			vg_buf_printf(report, "docker: removed container %.12s "
			    "(run %s, task %s)\n", id, vg_json_get_str(labels,
			    VG_DOCKER_LABEL_RUN, "?"), vg_json_get_str(labels,
			    VG_DOCKER_LABEL_TASK, "?"));
	}
out:
	vg_json_free(doc);
	vg_buf_release(&path);
	vg_buf_release(&filt);
	docker_close(&c);
	return rc;
}

static const struct vg_msection *const docker_sections[] = {
	&vg_docker_msection, NULL
};

/* ------------------------------------------------------------------ */
/* Sessions: one container per session, commands through exec         */
/* ------------------------------------------------------------------ */

/* What the session's container runs: nothing, until it is removed. */
#define SESSION_IDLE_CMD \
	"trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"

/*
 * The handle of a session: "VERSION/ID", the negotiated API version
 * (so a command needs no /_ping first) and the container id.
 */
static int
session_conn(const struct vg_session *s, struct docker_conn *c,
    const char **id, const volatile sig_atomic_t *stop, struct vg_err *e)
{
	const char *slash = strchr(s->handle, '/');
	int r;

	if (slash == NULL || slash == s->handle) {
		*id = NULL;
		return docker_open(c, docker_endpoint(s->m), stop, e);
	}
	memset(c, 0, sizeof(*c));
	c->stop = stop;
	if ((r = vg_http_open(docker_endpoint(s->m), &c->h, e)) != 0)
		return vg_err_prefix(e, "docker: ");
	snprintf(c->prefix, sizeof(c->prefix), "/v%.*s",
	    (int)(slash - s->handle), s->handle);
	*id = slash + 1;
	return 0;
}

/* The attempt that describes the session's container. */
static void
session_attempt(const struct vg_session *s, struct vg_attempt *a,
    struct vg_task *t)
{
	memset(a, 0, sizeof(*a));
	memset(t, 0, sizeof(*t));
	t->env = s->m->env;
	t->command.is_argv = 1;
	vg_strv_push(&t->command.argv, "/bin/sh");
	vg_strv_push(&t->command.argv, "-c");
	vg_strv_push(&t->command.argv, SESSION_IDLE_CMD);
	a->m = s->m;
	a->task = t;
	a->run_id = s->id;
	a->scratch_dir = s->dir;	/* bound at the same path */
	a->attempt = 1;
	a->res = s->m->resources;
	a->pidfd = -1;
	a->ops = &vg_backend_docker;
}

/* The session container's name, from the session id alone. */
static char *
session_name(const struct vg_session *s)
{
	struct vg_attempt a;
	struct vg_task t;
	char *name;

	session_attempt(s, &a, &t);
	name = container_name(&a);
	vg_strv_release(&t.command.argv);
	return name;
}

static int
docker_session_open(struct vg_session *s, struct vg_err *e)
{
	struct vg_result r;
	struct docker_conn c;
	struct vg_attempt a;
	struct vg_task t;
	struct vg_buf body = VG_BUF_INIT;
	char *id = NULL, *path, *owner;
	int rc;

	session_attempt(s, &a, &t);
	memset(&r, 0, sizeof(r));
	if ((rc = docker_open(&c, docker_endpoint(s->m), NULL, e)) != 0)
		goto out;
	/* Owned by its session, not by a process: reap leaves it alone,
	 * and vigil gc closes it through the session record. */
	owner = vg_xasprintf("session:%s", s->id);
	vg_docker_create_body(&a, owner, &body);
	free(owner);
	if ((rc = docker_precheck(&c, &a, &body, &r, e)) != 0) {
		if (rc == 1)
			rc = VG_EDENIED;
		goto close;
	}
	if ((rc = docker_create(&c, &a, &body, &id, e)) != 0)
		goto close;
	path = vg_xasprintf("/containers/%s/start", id);
	rc = docker_call(&c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "starting the session's container", e);
	free(path);
	if (rc != 0) {
		(void)docker_remove(&c, id, NULL);
		goto close;
	}
	snprintf(s->handle, sizeof(s->handle), "%s/%s", c.prefix + 2, id);
	vg_strlcpy(s->root, s->dir, sizeof(s->root));
close:
	docker_close(&c);
out:
	free(id);
	vg_buf_release(&body);
	vg_strv_release(&t.command.argv);
	return rc;
}

/* Output of a session command: its whole file, then onward. */
struct session_sink {
	const struct vg_session_cmd	*c;
	int				 fd[3];
	int				 rc;
};

static int
session_out(void *arg, int stream, const char *p, size_t n)
{
	struct session_sink *ss = arg;
	struct vg_err e;

	if (vg_session_output(ss->c, ss->fd[stream], stream, p, n, &e) != 0)
		return ss->rc = VG_EIO;
	return 0;
}

/* Creates an exec of argv in container id; *eid gets its id. */
static int
session_exec_create(struct docker_conn *c, const char *id,
    const struct vg_session *s, const struct vg_session_cmd *sc,
    const struct vg_strv *argv, int attach, char **eid, struct vg_err *e)
{
	struct vg_json_writer w;
	struct vg_json_doc *doc = NULL;
	struct vg_buf body = VG_BUF_INIT;
	const char *v;
	char *path;
	size_t i;
	int rc;

	*eid = NULL;
	vg_json_writer_init(&w, &body);
	vg_json_obj_begin(&w);
	vg_json_key(&w, "AttachStdout");
	vg_json_bool(&w, attach);
	vg_json_key(&w, "AttachStderr");
	vg_json_bool(&w, attach);
	vg_json_key(&w, "Tty");
	vg_json_bool(&w, 0);
	vg_json_key(&w, "Cmd");
	vg_json_arr_begin(&w);
	for (i = 0; i < argv->n; i++)
		vg_json_str(&w, argv->v[i]);
	vg_json_arr_end(&w);
	vg_json_key(&w, "Env");
	vg_json_arr_begin(&w);
	path = vg_xasprintf("VIGIL_SESSION_ID=%s", s->id);
	vg_json_str(&w, path);
	free(path);
	path = vg_xasprintf("VIGIL_JOB=%s", sc->job);
	vg_json_str(&w, path);
	free(path);
	vg_json_arr_end(&w);
	vg_json_obj_end(&w);
	path = vg_xasprintf("/containers/%s/exec", id);
	rc = docker_call(c, "POST", path, &body, DOCKER_CALL_TIMEOUT, NULL,
	    "creating an exec in the session's container", e);
	free(path);
	if (rc == 0 && (rc = reply_json(c, &doc, "exec create", e)) == 0) {
		if ((v = vg_json_get_str(vg_json_root(doc), "Id", NULL)) ==
		    NULL || *v == '\0' || strspn(v, "0123456789abcdef") !=
		    strlen(v))
			rc = vg_err_set(e, VG_EBACKEND, "docker: exec create: "
			    "reply has no valid \"Id\"");
		else
			*eid = vg_xstrdup(v);
	}
	vg_json_free(doc);
	vg_buf_release(&body);
	return rc;
}

/* Reads an exec's state: *running, and *code once it ended. */
static int
session_exec_state(struct docker_conn *c, const char *eid, int *running,
    long *code, struct vg_err *e)
{
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root, *v;
	char *path = vg_xasprintf("/exec/%s/json", eid);
	int rc;

	rc = docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "inspecting an exec", e);
	free(path);
	if (rc == 0 && (rc = reply_json(c, &doc, "exec inspect", e)) == 0) {
		root = vg_json_root(doc);
		v = vg_json_get(root, "Running");
		*running = v != NULL && v->type == VG_JSON_BOOL && v->b;
		*code = (long)vg_json_get_num(root, "ExitCode", -1);
	}
	vg_json_free(doc);
	return rc;
}

/* Runs the tree kill of job sc with sig in container id, detached. */
static void
session_kill_tree(struct docker_conn *c, const char *id,
    const struct vg_session *s, const struct vg_session_cmd *sc, int sig)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf body = VG_BUF_INIT;
	char *script = vg_session_kill_script(s->root, sc->job, sig), *eid,
	    *path;

	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, script);
	if (session_exec_create(c, id, s, sc, &argv, 0, &eid, NULL) == 0) {
		vg_buf_adds(&body, "{\"Detach\":true,\"Tty\":false}");
		path = vg_xasprintf("/exec/%s/start", eid);
		(void)docker_call(c, "POST", path, &body, DOCKER_CALL_TIMEOUT,
		    NULL, "starting the tree kill", NULL);
		free(path);
		free(eid);
	}
	vg_buf_release(&body);
	vg_strv_release(&argv);
	free(script);
}

static int
docker_session_exec(const struct vg_session *s,
    const struct vg_session_cmd *sc, struct vg_result *r, struct vg_err *e)
{
	struct docker_conn c;
	struct session_sink sink = { .c = sc, .fd = { -1, -1, -1 } };
	struct vg_session_cmd lc = *sc;
	struct vg_docker_demux dm;
	struct vg_http_req req = { .method = "POST" };
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf body = VG_BUF_INIT;
	struct vg_err le;
	const char *id;
	char *eid = NULL, *path = NULL;
	double until;
	long code = -1;
	int rc, running = 1, why = 0, sig = 0;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	if ((rc = session_conn(s, &c, &id, NULL, e)) != 0)
		return rc;
	if (id == NULL) {
		rc = vg_err_set(e, VG_ENOENT, "docker: session '%s' has no "
		    "container", s->id);
		goto out;
	}
	if ((sink.fd[1] = vg_task_output_open(sc->dir, 2, "stdout", 0,
	    e)) < 0 ||
	    (sink.fd[2] = vg_task_output_open(sc->dir, 2, "stderr", 0,
	    e)) < 0) {
		rc = e->rc;
		goto out;
	}
	/* The session directory is bound at its path here: the state the
	 * command saves is renamed into place here, not by a `mv` in the
	 * container. */
	lc.commit_here = 1;
	vg_session_script(s->root, &lc, sc->stdin_path, NULL, &argv);
	if ((rc = session_exec_create(&c, id, s, sc, &argv, 1, &eid, e)) != 0)
		goto out;
	r->started = vg_now();
	vg_buf_adds(&body, "{\"Detach\":false,\"Tty\":false}");
	path = vg_xasprintf("%s/exec/%s/start", c.prefix, eid);
	vg_docker_demux_init(&dm, session_out, &sink);
	req.path = path;
	req.body = vg_buf_str(&body);
	req.body_len = body.len;
	req.sink = vg_docker_demux_sink;
	req.sink_arg = &dm;
	req.stop = sc->stop;
	req.timeout = sc->timeout;
	vg_err_init(&le);
	rc = vg_http_do(c.h, &req, &c.resp, &le);
	if (rc != 0 && dm.err.rc != 0)
		rc = vg_err_set(&le, dm.err.rc, "output stream: %s",
		    dm.err.msg);
	if (rc == VG_ETIMEOUT)
		why = VG_ST_TIMEOUT;
	else if (rc == VG_ECANCELED && sc->stop != NULL && *sc->stop)
		why = VG_ST_CANCELLED;
	else if (rc != 0) {
		rc = vg_err_set(e, rc, "docker: exec: %s", le.msg);
		goto out;
	} else if (c.resp.status >= 400) {
		rc = vg_err_set(e, VG_EBACKEND, "docker: starting an exec: "
		    "HTTP %ld", c.resp.status);
		goto out;
	}
	if (why != 0) {
		/* The command's tree, never the container. */
		session_kill_tree(&c, id, s, sc, SIGTERM);
		sig = SIGTERM;
		until = vg_now() + sc->kill_grace;
		for (;;) {
			if (session_exec_state(&c, eid, &running, &code,
			    NULL) != 0 || !running)
				break;
			if (vg_now() >= until && sig != SIGKILL) {
				session_kill_tree(&c, id, s, sc, SIGKILL);
				sig = SIGKILL;
				until = vg_now() + 5;
			} else if (vg_now() >= until) {
				break;
			}
			usleep(50000);
		}
		r->state = (enum vg_state)why;
		r->signal = sig;
		snprintf(r->reason, sizeof(r->reason), "%s; its processes "
		    "were sent %s", why == VG_ST_TIMEOUT ? "timed out" :
		    "stopped", sig == SIGKILL ? "SIGKILL" : "SIGTERM");
		rc = 0;
		goto out;
	}
	/* The stream ended with the command; its status follows soon. */
	for (until = vg_now() + 10; ; usleep(2000)) {
		if ((rc = session_exec_state(&c, eid, &running, &code, e)) != 0)
			goto out;
		if (!running || vg_now() >= until)
			break;
	}
	r->exit_code = (int)code;
	r->state = code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
	if (code != 0)
		snprintf(r->reason, sizeof(r->reason), "exit code %ld", code);
	rc = sink.rc != 0 ? vg_err_set(e, VG_EIO, "docker: job %s: its output "
	    "could not be kept whole", sc->job) : 0;
	if (rc == 0)
		rc = vg_session_commit(s, &lc, r, e);
out:
	r->ended = vg_now();
	if (sink.fd[1] >= 0)
		close(sink.fd[1]);
	if (sink.fd[2] >= 0)
		close(sink.fd[2]);
	free(path);
	free(eid);
	vg_buf_release(&body);
	vg_strv_release(&argv);
	docker_close(&c);
	return rc;
}

static int
docker_session_close(const struct vg_session *s, struct vg_err *e)
{
	struct docker_conn c;
	const char *id;
	char *name = NULL;
	int rc;

	if ((rc = session_conn(s, &c, &id, NULL, e)) != 0)
		return rc;
	if (id == NULL)
		id = name = session_name(s);
	rc = docker_remove(&c, id, e);
	free(name);
	docker_close(&c);
	return rc;
}

const struct vg_backend_ops vg_backend_docker = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "docker",
		.flags = VG_PLUGIN_IMAGE,
		.help = "a container through the Docker Engine API",
		.sections = docker_sections,
		.validate = docker_validate,
		.host_check = docker_host_check,
	},
	.probe = docker_probe,
	.prepare = docker_prepare,
	.run = docker_run,
	.reap = docker_reap,
	/* Sessions: the block above. */
	.session_open = docker_session_open,
	.session_exec = docker_session_exec,
	.session_close = docker_session_close,
	.reattach = docker_reattach,
};

/* ---- the docker: section ---- */

/* docker.volumes: "src:dst[:ro|rw]". */
static void
check_volumes(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	vg_schema_check_mounts(n, p, c, 1);
}

static const char *const pull_names[] = { "missing", "always", "never",
	NULL };

static const struct vg_section docker_section = {
	.name = "docker",
	.fields = (const struct vg_field[]){
		STR(vg_docker_conf, "host", host, "DOCKER_HOST override"),
		{ .key = "volumes", .type = VG_F_STRV,
		  .off = OFF(vg_docker_conf, volumes), .check = check_volumes,
		  .help = "SOURCE:/DEST[:ro] mounts" },
		STRDEF(vg_docker_conf, "network", network, "none",
		    "container network"),
		BOOL(vg_docker_conf, "read_only", read_only, "false",
		    "read-only root file system"),
		STR(vg_docker_conf, "user", user, "user inside"),
		STRV(vg_docker_conf, "cap_add", cap_add, "capabilities"),
		STRV(vg_docker_conf, "devices", devices, "devices"),
		BOOL(vg_docker_conf, "privileged", privileged, "false",
		    "privileged container"),
		STR(vg_docker_conf, "pid_mode", pid_mode, "PID namespace"),
		STR(vg_docker_conf, "ipc_mode", ipc_mode, "IPC namespace"),
		CHOICE(vg_docker_conf, "pull", pull, "missing", pull_names,
		    "when to pull the image"),
		U64(vg_docker_conf, "pids_limit", pids_limit, 1, BIG,
		    "process limit"),
		STRV(vg_docker_conf, "mounts", mounts,
		    "type=bind|volume|tmpfs,source=..,target=.. mounts"),
		STRV(vg_docker_conf, "security_opt", security_opt,
		    "security options added to no-new-privileges"),
		{ .key = "sysctls", .type = VG_F_KVS,
		  .off = OFF(vg_docker_conf, sysctls),
		  .help = "kernel parameters (name: value)" },
		STR(vg_docker_conf, "uts_mode", uts_mode, "UTS namespace"),
		STR(vg_docker_conf, "userns_mode", userns_mode,
		    "user namespace"),
		STRV(vg_docker_conf, "volumes_from", volumes_from,
		    "containers whose mounts to take"),
		STRV(vg_docker_conf, "device_cgroup_rules", device_cgroup_rules,
		    "device cgroup rules (c 1:3 mr)"),
		{ .key = NULL },
	},
};

const struct vg_msection vg_docker_msection = {
	.key = "docker",
	.schema = &docker_section,
	.size = sizeof(struct vg_docker_conf),
	.help = "docker backend",
};
