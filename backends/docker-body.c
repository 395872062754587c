/*
 * docker-body.c - what vigil asks the engine for: the container create
 * request body (POST /containers/create) built from an attempt, hardened
 * (capabilities dropped, no new privileges, limits, the task's own binds
 * and GPUs), the parsing of the volume and mount specs of the docker:
 * section into it, and the split of an image reference for a pull.  Pure:
 * no I/O; whether the body reaches the host is judged by
 * docker-access.c, on the body itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/json.h"
#include "backends/egress-run.h"
#include "backends/docker.h"
#include "backends/docker-int.h"

#define DOCKER_DEFAULT_PIDS	4096

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
void
vg_docker_gpu_requests(const struct vg_attempt *a, struct vg_json_writer *w)
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
	if (vg_docker_egress_drive(a) != NULL)
		vg_json_str(w, vg_docker_egress_drive(a)->netmode);
	else
		vg_json_str(w, d->network != NULL && *d->network ?
		    d->network : "none");
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

	vg_docker_gpu_requests(a, w);
	vg_json_obj_end(w);
}

/* vg_egress_run_env's set: NAME=VALUE into the container's Env. */
static void
env_push(void *arg, const char *name, const char *value)
{
	vg_strv_pushf(arg, "%s=%s", name, value);
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
	if (vg_docker_egress_drive(a) != NULL)
		vg_egress_run_env(vg_docker_egress_drive(a)->egress, env_push,
		    &env);
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
