/*
 * docker-access.c - the host-access judgement of the docker backend:
 * every field of a create request body that can reach the host (binds,
 * mounts, volumes, named volumes by driver and options, devices,
 * namespaces, capabilities, security options, the other host keys) is a
 * finding, what cannot be told fails closed, and the policy gives the
 * verdict (vg_policy_host_access).  The judgement reads the request it is
 * about to send, so nothing slips between the manifest and the request.
 * Named volumes are looked up through the engine (GET /volumes/NAME,
 * docker-engine.c); everything else here is pure.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"
#include "backends/docker-int.h"

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

/*
 * True when DeviceRequests v is exactly the one vigil writes for a's
 * resources.gpus (vg_docker_gpu_requests): the GPUs the scheduler
 * assigned to the attempt are its own, like its task and scratch binds;
 * anything more is host access.
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
	vg_docker_gpu_requests(a, &w);
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
			/* The egress proxy's namespace, vigil's own. */
			if (i == 0 && vg_docker_egress_drive(a) != NULL &&
			    strcmp(v->str, vg_docker_egress_drive(a)->netmode)
			    == 0)
				return 0;
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

int
vg_docker_named_volume_findings(struct vg_docker_conn *c,
    const struct vg_docker_named *nv, const struct vg_host_site *site,
    struct vg_buf *why, struct vg_err *e)
{
	static const long ok[] = { 400, 404, 409, 500, 502, 503, 0 };
	struct vg_buf what = VG_BUF_INIT;
	struct vg_json_doc *doc;
	char msg[256], *path;
	size_t i;
	int r, n = 0;

	for (i = 0; i < nv->names.n; i++) {
		path = vg_xasprintf("/volumes/%s", nv->names.v[i]);
		r = vg_docker_call(c, "GET", path, NULL, DOCKER_CALL_TIMEOUT,
		    ok, "inspecting a volume", e);
		free(path);
		if (r != 0)
			goto fail;
		vg_buf_reset(&what);
		if (c->resp.status == 404)
			continue;
		if (c->resp.status >= 400) {
			vg_docker_reply_message(&c->resp, msg, sizeof(msg));
			vg_buf_printf(&what, "could not be inspected (%s)", msg);
		} else if (vg_docker_reply_json(c, &doc, "inspecting a volume",
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
