/*
 * docker.c - the docker backend: runs each attempt in a container through
 * the Docker Engine API (dockerd, or podman's compatible service) over its
 * unix socket with libcurl.  No docker CLI is involved.
 *
 * One attempt is: negotiate the API version (GET /version), check host
 * access (manifest, then GET /volumes/NAME for named volumes), make sure
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
 * (only the engine's view of volumes can tell some of it) and asks the
 * policy for the verdict (vg_policy_host_access).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "common/path.h"
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

/* Appends a finding for a namespace mode that is not private. */
static int
ns_finding(struct vg_buf *why, const char *field, const char *mode,
    const char *what)
{
	if (mode == NULL || *mode == '\0' || strcmp(mode, "private") == 0 ||
	    strcmp(mode, "none") == 0 || strcmp(mode, "shareable") == 0 ||
	    strcmp(mode, "bridge") == 0 || strcmp(mode, "default") == 0)
		return 0;
	if (strcmp(mode, "host") == 0)
		vg_buf_printf(why, "docker.%s 'host' shares the host's %s\n",
		    field, what);
	else if (strncmp(mode, "container:", 10) == 0)
		vg_buf_printf(why, "docker.%s '%s' joins another container's "
		    "%s\n", field, mode, what);
	else
		return 0;
	return 1;
}

/* The manifest-only host access check; see docker.h. */
int
vg_docker_host_access(const struct vg_manifest *m, struct vg_buf *why)
{
	const struct vg_docker_conf *d = vg_docker_of(m);
	struct vg_docker_vol v;
	int n = 0;
	size_t i;

	for (i = 0; i < d->volumes.n; i++) {
		if (vg_docker_vol_parse(d->volumes.v[i], &v, NULL) != 0)
			continue;	/* validate() reports it */
		if (v.kind == VG_DOCKER_VOL_HOST && (is_engine_socket(v.src) ||
		    is_engine_socket(v.dst))) {
			vg_buf_printf(why, "docker.volumes '%s' mounts a "
			    "container engine socket (control of the host)\n",
			    d->volumes.v[i]);
			n++;
		} else if (v.kind == VG_DOCKER_VOL_HOST) {
			vg_buf_printf(why, "docker.volumes '%s' binds host "
			    "path '%s'\n", d->volumes.v[i], v.src);
			n++;
		}
		vg_docker_vol_release(&v);
	}
	if (d->privileged) {
		vg_buf_adds(why, "docker.privileged runs a privileged "
		    "container (every device and capability)\n");
		n++;
	}
	n += ns_finding(why, "network", d->network, "network");
	n += ns_finding(why, "pid_mode", d->pid_mode, "process namespace");
	n += ns_finding(why, "ipc_mode", d->ipc_mode, "IPC namespace");
	for (i = 0; i < d->devices.n; i++, n++)
		vg_buf_printf(why, "docker.devices '%s' passes a host device\n",
		    d->devices.v[i]);
	for (i = 0; i < d->cap_add.n; i++, n++)
		vg_buf_printf(why, "docker.cap_add '%s' adds a capability\n",
		    d->cap_add.v[i]);
	return n;
}

/* The host directory a named volume binds, per its inspect reply. */
const char *
vg_docker_volume_host_dir(const struct vg_json_value *vol)
{
	const struct vg_json_value *opts = vg_json_get(vol, "Options");
	const char *drv = vg_json_get_str(vol, "Driver", "local");
	const char *dev = vg_json_get_str(opts, "device", NULL);
	const char *o = vg_json_get_str(opts, "o", "");
	const char *type = vg_json_get_str(opts, "type", "");
	const char *p;

	if (strcmp(drv, "local") != 0 || dev == NULL)
		return NULL;
	/* "o" is a mount option list; "bind" or "rbind" anywhere in it. */
	for (p = o; *p != '\0'; p += strcspn(p, ","), p += *p == ',') {
		if (strncmp(p, "bind", 4) == 0 && (p[4] == ',' || p[4] == '\0'))
			return dev;
		if (strncmp(p, "rbind", 5) == 0 && (p[5] == ',' ||
		    p[5] == '\0'))
			return dev;
	}
	/* type=none with a path device is a bind by another name; a block
	 * device (type=ext4, device=/dev/sdb1) is host access too. */
	if (dev[0] == '/' && (strcmp(type, "none") == 0 ||
	    strncmp(dev, "/dev/", 5) == 0))
		return dev;
	return NULL;
}

/* True when m's policy lets host access through; see docker.h. */
int
vg_docker_host_access_allowed(const struct vg_manifest *m)
{
	struct vg_host_verdict v;

	vg_policy_host_access(&m->policy, "docker host access", NULL, &v);
	return v.allowed;
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
	if (d->cap_add.n > 0) {
		vg_json_key(w, "CapAdd");
		vg_json_arr_begin(w);
		for (i = 0; i < d->cap_add.n; i++)
			vg_json_str(w, d->cap_add.v[i]);
		vg_json_arr_end(w);
	}
	vg_json_key(w, "SecurityOpt");
	vg_json_arr_begin(w);
	vg_json_str(w, "no-new-privileges");
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
	if (d->pid_mode != NULL && *d->pid_mode) {
		vg_json_key(w, "PidMode");
		vg_json_str(w, d->pid_mode);
	}
	if (d->ipc_mode != NULL && *d->ipc_mode) {
		vg_json_key(w, "IpcMode");
		vg_json_str(w, d->ipc_mode);
	}
	if (d->devices.n > 0) {
		vg_json_key(w, "Devices");
		vg_json_arr_begin(w);
		for (i = 0; i < d->devices.n; i++)
			device_entry(w, d->devices.v[i]);
		vg_json_arr_end(w);
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

/* Feeds bytes of the multiplexed stream; see docker.h. */
int
vg_docker_demux_feed(struct vg_docker_demux *d, const char *p, size_t n,
    struct vg_err *e)
{
	size_t k;
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
			 * Engine API's attach documentation. */
			if (d->hdr[0] > 2)
				return vg_err_set(e, VG_EPARSE, "docker log "
				    "stream: frame at byte %llu has unknown "
				    "stream %u (expected 0, 1 or 2)",
				    d->offset - 8, d->hdr[0]);
			d->stream = d->hdr[0] == 2 ? 2 : 1;
			d->left = (size_t)d->hdr[4] << 24 |
			    (size_t)d->hdr[5] << 16 | (size_t)d->hdr[6] << 8 |
			    (size_t)d->hdr[7];
			continue;
		}
		k = d->left < n ? d->left : n;
		if ((r = d->out(d->arg, d->stream, p, k)) != 0)
			return vg_err_set(e, r, "docker log stream: cannot "
			    "write %s", d->stream == 2 ? "stderr" : "stdout");
		d->left -= k;
		d->offset += k;
		p += k;
		n -= k;
	}
	return 0;
}

/* True when no frame is half read. */
int
vg_docker_demux_done(const struct vg_docker_demux *d)
{
	return d->hlen == 0 && d->left == 0;
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

/*
 * One API call: method on prefix + path, body optional.  On success the
 * reply is in c->resp.  A status of 400 or more is an error naming what
 * (e.g. "creating the container"), except the statuses listed in ok.
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
	char *full, msg[512];
	int r;

	full = vg_xasprintf("%s%s", c->prefix, path);
	req.path = full;
	r = vg_http_do(c->h, &req, &c->resp, e);
	free(full);
	if (r != 0)
		return vg_err_prefix(e, "docker: %s: ", what);
	if (c->resp.status < 400)
		return 0;
	for (; ok != NULL && *ok != 0; ok++)
		if (c->resp.status == *ok)
			return 0;
	reply_message(&c->resp, msg, sizeof(msg));
	return vg_err_set(e, c->resp.status == 404 ? VG_ENOENT : VG_EBACKEND,
	    "docker: %s: %s", what, msg);
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

/* Checks named volumes with the engine; appends findings to why. */
static int
named_volume_findings(struct docker_conn *c, const struct vg_manifest *m,
    struct vg_buf *why, int *n, struct vg_err *e)
{
	static const long ok404[] = { 404, 0 };
	struct vg_docker_vol v;
	struct vg_json_doc *doc;
	const char *dir;
	char *path, *what;
	size_t i;
	int r = 0;

	for (i = 0; i < vg_docker_of(m)->volumes.n && r == 0; i++) {
		if (vg_docker_vol_parse(vg_docker_of(m)->volumes.v[i], &v, e) != 0)
			return vg_err_prefix(e, "docker.volumes: ");
		if (v.kind != VG_DOCKER_VOL_NAMED) {
			vg_docker_vol_release(&v);
			continue;
		}
		path = vg_xasprintf("/volumes/%s", v.src);
		what = vg_xasprintf("inspecting volume '%s'", v.src);
		r = docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT,
		    ok404, what, e);
		/* A missing volume is created empty by the engine. */
		if (r == 0 && c->resp.status != 404 &&
		    (r = reply_json(c, &doc, what, e)) == 0) {
			if ((dir = vg_docker_volume_host_dir(
			    vg_json_root(doc))) != NULL) {
				vg_buf_printf(why, "docker.volumes '%s': named "
				    "volume '%s' binds host directory '%s'\n",
				    vg_docker_of(m)->volumes.v[i], v.src, dir);
				(*n)++;
			}
			vg_json_free(doc);
		}
		free(path);
		free(what);
		vg_docker_vol_release(&v);
	}
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

/* Checks the docker section beyond its schema. */
static int
docker_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_docker_conf *dc = vg_docker_of(m);
	struct vg_buf from = VG_BUF_INIT, tag = VG_BUF_INIT;
	struct vg_docker_vol v;
	struct vg_loc loc = { .file = m->file };
	struct vg_err e;
	size_t i;
	int bad = 0;

	vg_err_init(&e);
	if (vg_docker_image_ref(m->image, &from, &tag, &e) != 0) {
		vg_diag_add(d, &loc, "%s", e.msg);
		bad = 1;
	}
	for (i = 0; i < dc->volumes.n; i++) {
		if (vg_docker_vol_parse(dc->volumes.v[i], &v, &e) != 0) {
			vg_diag_add(d, &loc, "docker.volumes: %s", e.msg);
			bad = 1;
		}
		vg_docker_vol_release(&v);
	}
	if (dc->pull != NULL && strcmp(dc->pull, "missing") != 0 &&
	    strcmp(dc->pull, "always") != 0 && strcmp(dc->pull, "never") != 0) {
		vg_diag_add(d, &loc, "docker.pull: '%s' is not one of missing, "
		    "always, never", dc->pull);
		bad = 1;
	}
	for (i = 0; i < dc->devices.n; i++)
		if (dc->devices.v[i][0] != '/') {
			vg_diag_add(d, &loc, "docker.devices: '%s' must start "
			    "with the host device path (/dev/...)",
			    dc->devices.v[i]);
			bad = 1;
		}
	if (m->workdir != NULL && m->workdir[0] != '/') {
		vg_diag_add(d, &loc, "workdir: '%s' must be an absolute path "
		    "inside the container", m->workdir);
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
	unsigned long long	written[3];	/* bytes kept per stream */
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
		p += k;
		n -= k;
	}
	ls->written[stream] += n;
	return vg_write_all(ls->fd[stream], p, n) != 0 ? VG_EIO : 0;
}

/* vg_http_sink feeding the demultiplexer. */
static int
logs_sink(void *arg, const char *p, size_t n)
{
	struct vg_docker_demux *d = arg;
	struct vg_err e;

	return vg_docker_demux_feed(d, p, n, &e);
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
		.sink = logs_sink,
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

/* Creates the container (replacing a leftover of the same name). */
static int
docker_create(struct docker_conn *c, const struct vg_attempt *a,
    char **idp, struct vg_err *e)
{
	static const long ok409[] = { 409, 0 };
	struct vg_buf body = VG_BUF_INIT;
	struct vg_json_doc *doc = NULL;
	char owner[320], *name, *path;
	const char *id;
	int r, tries;

	*idp = NULL;
	vg_backend_owner_label(owner, sizeof(owner));
	vg_docker_create_body(a, owner, &body);
	name = container_name(a);
	path = vg_xasprintf("/containers/create?name=%s", name);
	for (tries = 0; tries < 2; tries++) {
		if ((r = docker_call(c, "POST", path, &body,
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
	vg_buf_release(&body);
	free(name);
	free(path);
	return r;
}

/*
 * The checks before create: host access (manifest and named volumes)
 * and the image.  Returns 0 to go on; 1 with r filled as DENIED.
 */
static int
docker_precheck(struct docker_conn *c, const struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	struct vg_buf why = VG_BUF_INIT;
	struct vg_host_verdict hv;
	int n, rc;

	n = vg_docker_host_access(a->m, &why);
	if ((rc = named_volume_findings(c, a->m, &why, &n, e)) != 0)
		goto out;
	vg_policy_host_access(&a->m->policy, vg_buf_str(&why), NULL, &hv);
	if (!hv.allowed) {
		r->state = VG_ST_DENIED;
		/* The precision keeps the reason to what r->reason holds. */
		snprintf(r->reason, sizeof(r->reason), "host access refused: "
		    "%.*s", (int)(sizeof(r->reason) -
		    sizeof("host access refused: ")), hv.reason);
		vg_err_set(e, VG_EDENIED, "%s", r->reason);
		rc = 1;
		goto out;
	}
	rc = docker_ensure_image(c, a->m, 0, e);
out:
	vg_buf_release(&why);
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
	struct sigaction sa, old_term, old_int;
	struct docker_conn c;
	struct log_sink ls = { .fd = { -1, -1, -1 } };
	struct vg_docker_demux dm;
	struct vg_http_req req = { .method = "GET" };
	struct vg_err le;
	double deadline = 0;
	char *id = NULL, *path = NULL;
	long code = -1;
	int rc, timed_out = 0, cancelled = 0, sig = 0;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	gethostname(r->node, sizeof(r->node) - 1);

	docker_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = docker_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGINT, &sa, &old_int);

	if ((rc = docker_open(&c, docker_endpoint(a->m), &docker_stop,
	    e)) != 0) {
		vg_result_fail(r, e);
		goto restore;
	}
	if ((rc = docker_precheck(&c, a, r, e)) != 0) {
		if (rc == 1)
			rc = 0;		/* DENIED is an outcome */
		else
			vg_result_fail(r, e);
		goto close;
	}
	if ((ls.fd[1] = vg_task_output_open(a->task_dir, "stdout",
	    0, e)) < 0 ||
	    (ls.fd[2] = vg_task_output_open(a->task_dir, "stderr",
	    0, e)) < 0) {
		rc = vg_result_fail(r, e);
		goto close;
	}
	if ((rc = docker_create(&c, a, &id, e)) != 0) {
		vg_result_fail(r, e);
		goto close;
	}
	path = vg_xasprintf("/containers/%s/start", id);
	rc = docker_call(&c, "POST", path, NULL, DOCKER_CALL_TIMEOUT, NULL,
	    "starting the container", e);
	free(path);
	if (rc != 0) {
		vg_result_fail(r, e);
		goto remove;
	}
	r->started = vg_now();
	if (a->timeout > 0)
		deadline = vg_mono() + a->timeout;

	/* The log stream ends when the container does. */
	vg_docker_demux_init(&dm, log_out, &ls);
	path = vg_xasprintf("%s/containers/%s/logs?follow=1&stdout=1&stderr=1",
	    c.prefix, id);
	req.path = path;
	req.sink = logs_sink;
	req.sink_arg = &dm;
	req.stop = &docker_stop;
	req.timeout = vg_time_left(deadline, 0.001);
	vg_err_init(&le);
	rc = vg_http_do(c.h, &req, &c.resp, &le);
	free(path);
	if (rc == VG_ETIMEOUT)
		timed_out = 1;
	else if (rc == VG_ECANCELED && docker_stop)
		cancelled = 1;
	else if (rc != 0) {
		/* Output trouble must not leave the container running;
		 * record it and still wait for the task's status. */
		vg_err_set(e, rc, "%s", le.msg);
	}
	if (!timed_out && !cancelled) {
		rc = docker_wait(&c, id, vg_time_left(deadline, 0.001), &code,
		    &le);
		if (rc == VG_ETIMEOUT)
			timed_out = 1;
		else if (rc == VG_ECANCELED)
			cancelled = 1;
		else if (rc != 0) {
			vg_err_set(e, rc, "%s", le.msg);
			vg_result_fail(r, e);
			goto remove;
		}
	}
	if (timed_out || cancelled) {
		/* A stop request must not stop the stopping. */
		c.stop = NULL;
		docker_stop_container(&c, id, a->kill_grace, &sig);
		drain_logs(&c, id, &ls);
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
		if (code == 128 + SIGKILL && docker_oom_killed(&c, id)) {
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
	rc = 0;
	if (e->rc != 0 && r->state == VG_ST_SUCCEEDED) {
		/* The task succeeded but its output was not all kept. */
		rc = vg_result_fail(r, e);
	}
remove:
	c.stop = NULL;
	vg_err_init(&le);
	if (docker_remove(&c, id, &le) != 0 && rc == 0)
		snprintf(r->reason + strlen(r->reason), sizeof(r->reason) -
		    strlen(r->reason), "%s(container %.12s not removed: %s)",
		    r->reason[0] ? " " : "", id, le.msg);
close:
	if (ls.fd[1] >= 0)
		close(ls.fd[1]);
	if (ls.fd[2] >= 0)
		close(ls.fd[2]);
	free(id);
	docker_close(&c);
restore:
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
	return rc;
}

/*
 * Removes vigil's containers: every one of run_id, or (run_id NULL) those
 * whose owner label names a process of this host that no longer exists.
 */
static int
docker_reap(const char *run_id, struct vg_buf *report, struct vg_err *e)
{
	struct vg_buf path = VG_BUF_INIT, filt = VG_BUF_INIT;
	struct vg_json_writer w;
	struct docker_conn c;
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *list, *ct, *labels;
	const char *id, *owner;
	char *label;
	size_t i;
	int rc, removed = 0;

	if ((rc = docker_open(&c, docker_endpoint(NULL), NULL, e)) != 0)
		return rc;
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
		if (run_id == NULL && !vg_backend_owner_dead(owner))
			continue;
		if ((rc = docker_remove(&c, id, e)) != 0)
			goto out;
		removed++;
		if (report != NULL)
			vg_buf_printf(report, "docker: removed container %.12s "
			    "(run %s, task %s)\n", id, vg_json_get_str(labels,
			    VG_DOCKER_LABEL_RUN, "?"), vg_json_get_str(labels,
			    VG_DOCKER_LABEL_TASK, "?"));
	}
	(void)removed;
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

const struct vg_backend_ops vg_backend_docker = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "docker",
		.flags = VG_PLUGIN_IMAGE,
		.help = "a container through the Docker Engine API",
		.sections = docker_sections,
		.validate = docker_validate,
	},
	.probe = docker_probe,
	.prepare = docker_prepare,
	.run = docker_run,
	.reap = docker_reap,
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
		{ .key = NULL },
	},
};

const struct vg_msection vg_docker_msection = {
	.key = "docker",
	.schema = &docker_section,
	.size = sizeof(struct vg_docker_conf),
	.help = "docker backend",
};
