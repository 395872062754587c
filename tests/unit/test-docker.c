/*
 * test-docker.c - the pure parts of the docker backend: API version
 * negotiation, volume specs, the host access check, named volume
 * inspection, the create body, image references, the log stream
 * demultiplexer and the stats replies accounting samples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/docker.h"

/* Negotiation: min(server, ours), floors and malformed versions. */
static void
test_api_version(void **state)
{
	struct vg_err e;
	char v[16];

	vg_err_init(&e);
	assert_int_equal(vg_docker_api_version("1.41", "1.24", v, &e), 0);
	assert_string_equal(v, "1.41");
	assert_int_equal(vg_docker_api_version("1.45", NULL, v, &e), 0);
	assert_string_equal(v, "1.41");
	assert_int_equal(vg_docker_api_version("1.30", NULL, v, &e), 0);
	assert_string_equal(v, "1.30");
	assert_int_equal(vg_docker_api_version("1.24", NULL, v, &e),
	    VG_EUNSUPPORTED);
	assert_string_equal(e.msg, "docker engine API 1.24 is older than "
	    "1.25, the oldest vigil supports");
	assert_int_equal(vg_docker_api_version("1.44", "1.42", v, &e),
	    VG_EUNSUPPORTED);
	assert_string_equal(e.msg, "docker engine needs API >= 1.42, vigil "
	    "speaks up to 1.41");
	assert_int_equal(vg_docker_api_version("4.3.1", NULL, v, &e),
	    VG_EBACKEND);
	assert_string_equal(e.msg, "docker engine reports API version "
	    "'4.3.1', expected MAJOR.MINOR");
	assert_int_equal(vg_docker_api_version(NULL, NULL, v, &e),
	    VG_EBACKEND);
	assert_string_equal(v, "");
}

/* Checks one volume spec's split. */
static void
vol_ok(const char *spec, enum vg_docker_vol_kind kind, const char *src,
    const char *dst, const char *mode)
{
	struct vg_docker_vol v;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_docker_vol_parse(spec, &v, &e) != 0)
		fail_msg("'%s': %s", spec, e.msg);
	assert_int_equal(v.kind, kind);
	if (src == NULL)
		assert_null(v.src);
	else
		assert_string_equal(v.src, src);
	assert_string_equal(v.dst, dst);
	if (mode == NULL)
		assert_null(v.mode);
	else
		assert_string_equal(v.mode, mode);
	vg_docker_vol_release(&v);
}

/* Checks that a volume spec is refused with msg. */
static void
vol_bad(const char *spec, const char *msg)
{
	struct vg_docker_vol v;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_docker_vol_parse(spec, &v, &e), VG_EINVAL);
	assert_string_equal(e.msg, msg);
	assert_null(v.src);
	assert_null(v.dst);
}

/* Volume specs as the Engine API reads Binds. */
static void
test_volume_parse(void **state)
{
	vol_ok("/data", VG_DOCKER_VOL_ANON, NULL, "/data", NULL);
	vol_ok("cache:/c", VG_DOCKER_VOL_NAMED, "cache", "/c", NULL);
	vol_ok("my.vol-1:/c:ro", VG_DOCKER_VOL_NAMED, "my.vol-1", "/c", "ro");
	vol_ok("/srv:/srv:rw,z", VG_DOCKER_VOL_HOST, "/srv", "/srv", "rw,z");
	vol_ok("~/x:/x", VG_DOCKER_VOL_HOST, "~/x", "/x", NULL);
	vol_ok("~:/h", VG_DOCKER_VOL_HOST, "~", "/h", NULL);
	vol_ok("./in:/in", VG_DOCKER_VOL_HOST, "./in", "/in", NULL);
	vol_ok("../up:/up", VG_DOCKER_VOL_HOST, "../up", "/up", NULL);
	vol_ok(".:/w", VG_DOCKER_VOL_HOST, ".", "/w", NULL);
	vol_ok("C:\\data:/d", VG_DOCKER_VOL_HOST, "C:\\data", "/d", NULL);
	vol_ok("c:/data:/d:ro", VG_DOCKER_VOL_HOST, "c:/data", "/d", "ro");
	vol_ok("/:/host", VG_DOCKER_VOL_HOST, "/", "/host", NULL);

	vol_bad("", "empty volume: expected SRC:DST[:ro|rw] or an absolute "
	    "DST");
	vol_bad("data", "volume 'data': expected SRC:DST[:ro|rw] or an "
	    "absolute DST");
	vol_bad(":/x", "volume ':/x': empty source before ':'");
	vol_bad("a:rel", "volume 'a:rel': destination 'rel' must be an "
	    "absolute path in the container");
	vol_ok("c:/d", VG_DOCKER_VOL_NAMED, "c", "/d", NULL);
	vol_bad("a:/x:rx", "volume 'a:/x:rx': unknown mode 'rx' (valid: ro, "
	    "rw, z, Z, nocopy, [r]shared, [r]slave, [r]private, "
	    "comma-separated)");
	vol_bad("a:/x:ro,", "volume 'a:/x:ro,': unknown mode 'ro,' (valid: "
	    "ro, rw, z, Z, nocopy, [r]shared, [r]slave, [r]private, "
	    "comma-separated)");
	vol_bad("-bad:/x", "volume '-bad:/x': source '-bad' is neither a path "
	    "(/, ./, ../, ~) nor a volume name ([A-Za-z0-9][A-Za-z0-9_.-]*)");
}

/* A manifest with the docker fields the tests set. */
struct fixture {
	struct vg_manifest	m;
	struct vg_task		task;
	struct vg_kv		kv[4];
	struct vg_rule		rule;
	struct vg_attempt	a;
	struct vg_strv		pool;		/* strings the fields point at */
};

/* A writable copy of s that lives until teardown. */
static char *
lit(struct fixture *f, const char *s)
{
	vg_strv_push(&f->pool, s);
	return f->pool.v[f->pool.n - 1];
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->m.image = vg_xstrdup("localhost/vigil-test:latest");
	f->a.m = &f->m;
	f->a.task = &f->task;
	f->a.run_id = lit(f, "run1");
	f->a.attempt = 2;
	f->a.task_dir = lit(f, "/runs/run1/tasks/3");
	f->task.index = 3;
	f->task.command.shell = vg_xstrdup("echo \"hi\" >&2");
	f->task.env.v = f->kv;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	free(f->m.image);
	free(f->task.command.shell);
	vg_strv_release(&vg_docker_of(&f->m)->volumes);
	vg_strv_release(&vg_docker_of(&f->m)->cap_add);
	vg_strv_release(&vg_docker_of(&f->m)->devices);
	vg_strv_release(&vg_docker_of(&f->m)->mounts);
	vg_strv_release(&vg_docker_of(&f->m)->security_opt);
	vg_strv_release(&vg_docker_of(&f->m)->volumes_from);
	vg_strv_release(&vg_docker_of(&f->m)->device_cgroup_rules);
	vg_strv_release(&f->task.command.argv);
	vg_strv_release(&f->pool);
	free(f);
	return 0;
}

/* Judges the create body vigil builds for f; returns the findings. */
static int
judge(struct fixture *f, const struct vg_host_site *site, struct vg_buf *why,
    struct vg_docker_named *nv)
{
	struct vg_buf b = VG_BUF_INIT;
	int n;

	vg_docker_create_body(&f->a, "o", &b);
	n = vg_docker_host_access(&f->a, b.data, b.len, site, why, nv);
	vg_buf_release(&b);
	return n;
}

/* Judges a raw create body against f's attempt. */
static int
judge_raw(struct fixture *f, const char *body, struct vg_buf *why)
{
	vg_buf_reset(why);
	return vg_docker_host_access(&f->a, body, strlen(body), NULL, why,
	    NULL);
}

/* Nothing risky: no findings; named volumes are left to the engine. */
static void
test_host_access_none(void **state)
{
	struct fixture *f = *state;
	struct vg_docker_conf *d = vg_docker_of(&f->m);
	struct vg_buf why = VG_BUF_INIT;
	struct vg_docker_named nv = { VG_STRV_INIT, VG_STRV_INIT };

	f->a.scratch_dir = lit(f, "/scratch/s1");
	vg_strv_push(&d->volumes, "cache:/cache");
	vg_strv_push(&d->volumes, "/anon");
	vg_strv_push(&d->mounts, "type=tmpfs,target=/t,tmpfs-size=1m");
	vg_strv_push(&d->mounts, "type=volume,source=m1,target=/m1");
	vg_strv_push(&d->mounts, "type=volume,target=/m2,volume-opt=size=1m");
	vg_strv_push(&d->security_opt, "no-new-privileges:true");
	vg_strv_push(&d->security_opt, "label=level:s0:c1");
	vg_strv_push(&d->security_opt, "mask=/proc/acpi");
	d->network = lit(f, "none");
	d->pid_mode = lit(f, "private");
	d->uts_mode = lit(f, "private");
	d->userns_mode = lit(f, "keep-id");
	assert_int_equal(judge(f, NULL, &why, &nv), 0);
	assert_string_equal(vg_buf_str(&why), "");
	assert_int_equal(nv.names.n, 2);
	assert_string_equal(nv.names.v[0], "cache");
	assert_string_equal(nv.labels.v[0], "docker.volumes 'cache:/cache'");
	assert_string_equal(nv.names.v[1], "m1");
	assert_string_equal(nv.labels.v[1], "docker.mounts volume 'm1' at "
	    "'/m1'");
	d->network = lit(f, "bridge");
	assert_int_equal(judge(f, NULL, &why, NULL), 0);
	vg_docker_named_release(&nv);
	vg_buf_release(&why);
}

/* Every way a manifest can reach the host, one line each. */
static void
test_host_access_all(void **state)
{
	struct fixture *f = *state;
	struct vg_docker_conf *d = vg_docker_of(&f->m);
	struct vg_buf why = VG_BUF_INIT;
	int n;

	setenv("HOME", "/home/u", 1);
	f->m.file = lit(f, "/jobs/j.yaml");
	vg_strv_push(&d->volumes, "/etc:/x:ro");
	vg_strv_push(&d->volumes, "~/.ssh:/k");
	vg_strv_push(&d->volumes, "./data:/d");
	vg_strv_push(&d->volumes, "/var/run/docker.sock:/s");
	vg_strv_push(&d->volumes, "/tmp/x:/run/podman.sock");
	vg_strv_push(&d->volumes, "/var/run:/r:ro");
	vg_strv_push(&d->volumes, "/proc:/hp");
	vg_strv_push(&d->volumes, "/sys/fs:/hs:ro");
	vg_strv_push(&d->volumes, "named:/n");
	vg_strv_push(&d->mounts, "type=bind,source=/srv,target=/srv,readonly");
	vg_strv_push(&d->mounts, "type=bind,src=/run/docker.sock,dst=/d.sock");
	vg_strv_push(&d->mounts, "type=bind,source=/sys,target=/s2");
	vg_strv_push(&d->mounts, "type=volume,source=pv,target=/p,"
	    "volume-driver=plug");
	vg_strv_push(&d->mounts, "type=volume,target=/nfs,volume-opt=type=nfs,"
	    "volume-opt=device=:/export");
	vg_strv_push(&d->cap_add, "SYS_ADMIN");
	vg_strv_push(&d->security_opt, "seccomp=unconfined");
	vg_strv_push(&d->security_opt, "apparmor=unconfined");
	vg_strv_push(&d->security_opt, "no-new-privileges:false");
	vg_strv_push(&d->security_opt, "label=disable");
	vg_strv_push(&d->security_opt, "systempaths=unconfined");
	vg_strv_push(&d->security_opt, "unmask=ALL");
	vg_strv_push(&d->security_opt, "seccomp={\"defaultAction\":1}");
	vg_strv_push(&d->security_opt, "label=type:spc_t");
	d->privileged = 1;
	d->network = lit(f, "host");
	d->pid_mode = lit(f, "host");
	d->ipc_mode = lit(f, "container:db");
	d->uts_mode = lit(f, "host");
	d->userns_mode = lit(f, "host");
	vg_strv_push(&d->devices, "/dev/fuse");
	vg_strv_push(&d->volumes_from, "db");
	vg_strv_push(&d->device_cgroup_rules, "c 1:3 mr");
	vg_kvs_set(&d->sysctls, "net.ipv4.ip_forward", "1");
	n = judge(f, NULL, &why, NULL);
	assert_int_equal(n, 32);
	assert_string_equal(vg_buf_str(&why),
	    "docker.volumes '/etc:/x:ro' binds host path '/etc'\n"
	    "docker.volumes '/home/u/.ssh:/k' binds host path "
	    "'/home/u/.ssh'\n"
	    "docker.volumes '/jobs/./data:/d' binds host path "
	    "'/jobs/./data'\n"
	    "docker.volumes '/var/run/docker.sock:/s' mounts a container "
	    "engine socket (control of the host)\n"
	    "docker.volumes '/tmp/x:/run/podman.sock' mounts a container "
	    "engine socket (control of the host)\n"
	    "docker.volumes '/var/run:/r:ro' reaches the container engine "
	    "socket below '/var/run' (control of the host)\n"
	    "docker.volumes '/proc:/hp' binds the host's /proc writable "
	    "(kernel and process control)\n"
	    "docker.volumes '/sys/fs:/hs:ro' binds host path '/sys/fs'\n"
	    "docker.network 'host' shares the host's network\n"
	    "docker.cap_add 'SYS_ADMIN' adds a capability\n"
	    "docker.security_opt 'seccomp=unconfined' turns the seccomp "
	    "filter off\n"
	    "docker.security_opt 'apparmor=unconfined' turns AppArmor "
	    "confinement off\n"
	    "docker.security_opt 'no-new-privileges:false' lets the task "
	    "gain privileges (setuid programs, file capabilities)\n"
	    "docker.security_opt 'label=disable' turns SELinux separation "
	    "off\n"
	    "docker.security_opt 'systempaths=unconfined' unmasks the "
	    "kernel's /proc and /sys paths\n"
	    "docker.security_opt 'unmask=ALL' unmasks kernel paths under "
	    "/proc and /sys\n"
	    "docker.security_opt 'seccomp={\"defaultAct...' replaces the "
	    "seccomp profile, which vigil cannot judge\n"
	    "docker.security_opt 'label=type:spc_t' is an option vigil "
	    "cannot judge\n"
	    "docker.privileged runs a privileged container (every device "
	    "and capability)\n"
	    "docker.pid_mode 'host' shares the host's process namespace\n"
	    "docker.ipc_mode 'container:db' joins another container's IPC "
	    "namespace\n"
	    "docker.devices '/dev/fuse' passes a host device\n"
	    "docker.mounts bind '/srv' at '/srv' binds host path '/srv'\n"
	    "docker.mounts bind '/run/docker.sock' at '/d.sock' mounts a "
	    "container engine socket (control of the host)\n"
	    "docker.mounts bind '/sys' at '/s2' binds the host's /sys "
	    "writable (kernel and process control)\n"
	    "docker.mounts volume 'pv' at '/p': volume (driver 'plug', "
	    "options none) uses a driver the site policy does not list in "
	    "safe_volume_drivers\n"
	    "docker.mounts volume at '/nfs': volume (driver 'local', options "
	    "type=nfs device=:/export) mounts ':/export' as file system "
	    "type 'nfs'\n"
	    "docker.uts_mode 'host' shares the host's host name (UTS "
	    "namespace)\n"
	    "docker.userns_mode 'host' shares the host's user namespace\n"
	    "docker.volumes_from 'db' takes every mount of another "
	    "container\n"
	    "docker.device_cgroup_rules 'c 1:3 mr' lets the container use "
	    "host devices\n"
	    "docker.sysctls 'net.ipv4.ip_forward=1' sets a kernel "
	    "parameter\n");
	vg_buf_release(&why);
	vg_kvs_release(&d->sysctls);
}

/* A driver the site lists is not host access in docker.mounts. */
static void
test_host_access_safe_driver(void **state)
{
	struct fixture *f = *state;
	struct vg_docker_conf *d = vg_docker_of(&f->m);
	struct vg_buf why = VG_BUF_INIT;
	struct vg_host_site site;
	struct vg_err e;
	static const char text[] = "safe_volume_drivers:\n"
	    "  - driver: plug\n    reason: node-local disk\n";

	vg_err_init(&e);
	assert_int_equal(vg_policy_host_site_text("site.yaml", text,
	    strlen(text), &site, &e), 0);
	vg_strv_push(&d->mounts, "type=volume,source=pv,target=/p,"
	    "volume-driver=plug,volume-opt=device=/anything");
	assert_int_equal(judge(f, &site, &why, NULL), 0);
	assert_int_equal(judge(f, NULL, &why, NULL), 1);
	vg_policy_host_site_release(&site);
	vg_buf_release(&why);
}

/* The request is judged, not the manifest: what vigil does not know,
 * or cannot read, is host access. */
static void
test_host_access_body(void **state)
{
	struct fixture *f = *state;
	struct vg_buf why = VG_BUF_INIT;

	assert_int_equal(judge_raw(f, "{\"Image\":\"x\",\"HostConfig\":{"
	    "\"Binds\":[\"/runs/run1/tasks/3:/runs/run1/tasks/3:rw\"],"
	    "\"Privileged\":false,\"CapDrop\":[\"ALL\"],\"DeviceRequests\":[],"
	    "\"Tmpfs\":{\"/tmp\":\"rw\"}}}", &why), 0);
	assert_int_equal(judge_raw(f, "{\"HostConfig\":{\"Binds\":["
	    "\"/runs/run1/tasks/3:/runs/run1/tasks/3:ro\"]}}", &why), 1);
	assert_string_equal(vg_buf_str(&why), "docker.volumes "
	    "'/runs/run1/tasks/3:/runs/run1/tasks/3:ro' binds host path "
	    "'/runs/run1/tasks/3'\n");
	assert_int_equal(judge_raw(f, "{\"Image\":\"x\",\"Healthcheck\":{},"
	    "\"HostConfig\":{\"OomScoreAdj\":-1000,\"CgroupnsMode\":\"host\","
	    "\"DeviceRequests\":[{\"Count\":-1}],\"Mounts\":[1,{\"Type\":"
	    "\"npipe\",\"Target\":\"/p\"}],\"Binds\":[3,\"a::b\"],"
	    "\"Sysctls\":[],\"NetworkMode\":1}}", &why), 9);
	assert_string_equal(vg_buf_str(&why),
	    "the create request's 'Healthcheck' is a field vigil cannot "
	    "judge\n"
	    "HostConfig.OomScoreAdj is a field vigil cannot judge\n"
	    "HostConfig.CgroupnsMode 'host' shares the host's cgroup "
	    "namespace\n"
	    "HostConfig.DeviceRequests passes host devices (GPUs)\n"
	    "HostConfig.Mounts holds an entry that is not an object\n"
	    "docker.mounts npipe at '/p': mount type 'npipe' is not one "
	    "vigil can judge (bind, volume, tmpfs)\n"
	    "HostConfig.Binds holds a value that is not a string\n"
	    "HostConfig.Sysctls is not a mapping\n"
	    "HostConfig.NetworkMode is not a string\n");
	assert_int_equal(judge_raw(f, "{\"HostConfig\":", &why), 1);
	assert_string_equal(vg_buf_str(&why), "the container create request "
	    "is not valid JSON\n");
	assert_int_equal(judge_raw(f, "[]", &why), 1);
	assert_int_equal(judge_raw(f, "{\"HostConfig\":[]}", &why), 1);
	assert_string_equal(vg_buf_str(&why), "HostConfig is not an object\n");
	assert_int_equal(judge_raw(f, "{\"HostConfig\":{\"NetworkMode\":"
	    "\"ns:/proc/1/ns/net\",\"Privileged\":1}}", &why), 2);
	assert_string_equal(vg_buf_str(&why), "docker.network "
	    "'ns:/proc/1/ns/net' joins the network at a host path\n"
	    "docker.privileged runs a privileged container (every device "
	    "and capability)\n");
	vg_buf_release(&why);
}

/* Judges a volume's inspect JSON; returns the verdict, text in what. */
static int
vol_judge(const char *json, const struct vg_host_site *site,
    struct vg_buf *what)
{
	struct vg_json_doc *doc;
	struct vg_err e;
	int r;

	vg_buf_reset(what);
	if (vg_json_parse(json, strlen(json), NULL, &doc, &e) != 0)
		fail_msg("%s", e.msg);
	r = vg_docker_volume_judge(vg_json_root(doc), site, what);
	vg_json_free(doc);
	return r;
}

/* Named volumes: host access unless shown otherwise. */
static void
test_volume_judge(void **state)
{
	struct vg_buf w = VG_BUF_INIT;
	struct vg_host_site site;
	struct vg_err e;
	static const char text[] = "safe_volume_drivers:\n"
	    "  - driver: vendor/scratch:1\n    reason: per-job disk\n";

	(void)state;
	/* The reply podman 4.3 gives for the REFERENCE recipe. */
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Name\":\"hv\","
	    "\"Options\":{\"device\":\"/host/dir\",\"o\":\"bind\","
	    "\"type\":\"none\"},\"Scope\":\"local\"}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "device=/host/dir o=bind type=none) binds host directory "
	    "'/host/dir'");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":"
	    "{\"device\":\"/var/run\",\"o\":\"ro,rbind\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "device=/var/run o=ro,rbind) binds host directory '/var/run' "
	    "(and the container engine socket)");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":"
	    "{\"device\":\"/dev/sdb1\",\"type\":\"ext4\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "device=/dev/sdb1 type=ext4) mounts host block device "
	    "'/dev/sdb1'");
	/* podman's reply for a local nfs volume. */
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"device\":\":/x\",\"o\":\"addr=127.0.0.1\",\"type\":\"nfs\"}}",
	    NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "device=:/x o=addr=127.0.0.1 type=nfs) mounts ':/x' as file "
	    "system type 'nfs'");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"device\":\"//srv/share\",\"type\":\"cifs\"}}", NULL, &w), 1);
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"device\":\"/h\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "device=/h) mounts device '/h'");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"o\":\"size=1m,bindx\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "o=size=1m,bindx) has mount option 'bindx' vigil cannot judge");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"mountopt\":\"x\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options "
	    "mountopt=x) has option 'mountopt' vigil cannot judge");
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"size\":1}}", NULL, &w), 1);
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":[]}",
	    NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'local', options none) "
	    "has options that are not a mapping");
	/* A plugin driver: host access unless the site lists it. */
	assert_int_equal(vol_judge("{\"Driver\":\"vendor/scratch:1\","
	    "\"Options\":{\"k\":\"v\"}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "(driver 'vendor/scratch:1', "
	    "options k=v) uses a driver the site policy does not list in "
	    "safe_volume_drivers");
	vg_err_init(&e);
	assert_int_equal(vg_policy_host_site_text("s.yaml", text,
	    strlen(text), &site, &e), 0);
	assert_int_equal(vol_judge("{\"Driver\":\"vendor/scratch:1\","
	    "\"Options\":{\"k\":\"v\"}}", &site, &w), 0);
	assert_string_equal(vg_buf_str(&w), "");
	assert_int_equal(vol_judge("{\"Driver\":\"image\",\"Options\":{}}",
	    &site, &w), 1);
	/* Replies that cannot be told fail closed. */
	assert_int_equal(vol_judge("{\"Options\":{}}", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "has an inspect reply that names "
	    "no driver");
	assert_int_equal(vol_judge("{\"Driver\":7}", NULL, &w), 1);
	assert_int_equal(vol_judge("[]", NULL, &w), 1);
	assert_string_equal(vg_buf_str(&w), "has an inspect reply that is not "
	    "an object");
	/* Plain volumes and tmpfs stay inside the engine. */
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":null}",
	    NULL, &w), 0);
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{}}",
	    NULL, &w), 0);
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"type\":\"tmpfs\",\"device\":\"tmpfs\",\"o\":\"size=1m,uid=1\"}}",
	    NULL, &w), 0);
	assert_int_equal(vol_judge("{\"Driver\":\"local\",\"Options\":{"
	    "\"size\":\"1G\",\"UID\":\"1000\"}}", NULL, &w), 0);
	vg_policy_host_site_release(&site);
	vg_buf_release(&w);
}

/* Checks that a mount spec is refused with msg. */
static void
mount_bad(const char *spec, const char *msg)
{
	struct vg_docker_mount mt;
	struct vg_err e;

	vg_err_init(&e);
	assert_int_equal(vg_docker_mount_parse(spec, &mt, &e), VG_EINVAL);
	assert_string_equal(e.msg, msg);
	assert_null(mt.type);
}

/* docker.mounts as docker run --mount spells them. */
static void
test_mount_parse(void **state)
{
	struct vg_docker_mount mt;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_docker_mount_parse("type=bind,source=/s,"
	    "target=/t,readonly,bind-propagation=rslave", &mt, &e), 0);
	assert_string_equal(mt.type, "bind");
	assert_string_equal(mt.source, "/s");
	assert_string_equal(mt.target, "/t");
	assert_true(mt.readonly);
	assert_string_equal(mt.propagation, "rslave");
	vg_docker_mount_release(&mt);
	assert_int_equal(vg_docker_mount_parse("src=v1,dst=/d,ro=false,"
	    "volume-driver=plug,volume-opt=a=b=c,volume-nocopy", &mt, &e), 0);
	assert_string_equal(mt.type, "volume");
	assert_false(mt.readonly);
	assert_true(mt.nocopy);
	assert_string_equal(mt.driver, "plug");
	assert_string_equal(mt.opts.v[0], "a=b=c");
	vg_docker_mount_release(&mt);
	assert_int_equal(vg_docker_mount_parse("type=tmpfs,destination=/t,"
	    "tmpfs-size=64m,tmpfs-mode=1777", &mt, &e), 0);
	assert_true(mt.tmpfs_size == 64u << 20);
	assert_int_equal(mt.tmpfs_mode, 01777);
	vg_docker_mount_release(&mt);

	mount_bad("", "empty mount: expected type=bind|volume|tmpfs,"
	    "source=...,target=/path");
	mount_bad("type=bind,source=rel,target=/t", "mount 'type=bind,"
	    "source=rel,target=/t': a bind needs an absolute host source");
	mount_bad("type=npipe,target=/t", "mount 'type=npipe,target=/t': "
	    "type 'npipe' is not bind, volume or tmpfs");
	mount_bad("source=v", "mount 'source=v': target must be an absolute "
	    "path in the container");
	mount_bad("source=-v,target=/t", "mount 'source=-v,target=/t': "
	    "source '-v' is not a volume name ([A-Za-z0-9][A-Za-z0-9_.-]*)");
	mount_bad("type=tmpfs,source=x,target=/t", "mount 'type=tmpfs,"
	    "source=x,target=/t': a tmpfs has no source");
	mount_bad("target=/t,colour=red", "mount 'target=/t,colour=red': "
	    "unknown key 'colour' (valid: type, source, target, readonly, "
	    "bind-propagation, volume-driver, volume-opt, volume-nocopy, "
	    "tmpfs-size, tmpfs-mode)");
	mount_bad("target=/t,,ro", "mount 'target=/t,,ro': empty item "
	    "between ','");
	mount_bad("target=/t,target=/u", "mount 'target=/t,target=/u': "
	    "target given twice");
	mount_bad("target=/t,ro=maybe", "mount 'target=/t,ro=maybe': ro "
	    "takes true or false");
	mount_bad("target=/t,volume-opt=x", "mount 'target=/t,volume-opt=x': "
	    "volume-opt takes KEY=VALUE");
	mount_bad("type=tmpfs,target=/t,tmpfs-size=lots", "mount 'type=tmpfs,"
	    "target=/t,tmpfs-size=lots': tmpfs-size takes a byte count (with "
	    "k, m or g)");
	mount_bad("type=tmpfs,target=/t,tmpfs-mode=9", "mount 'type=tmpfs,"
	    "target=/t,tmpfs-mode=9': tmpfs-mode takes an octal mode such as "
	    "1777");
	mount_bad("type=bind,source=/s,target=/t,volume-driver=x", "mount "
	    "'type=bind,source=/s,target=/t,volume-driver=x': volume-* keys "
	    "are for type=volume");
	mount_bad("target=/t,bind-propagation=rshared", "mount 'target=/t,"
	    "bind-propagation=rshared': bind-propagation is for type=bind");
	mount_bad("target=/t,bind-propagation=up", "mount 'target=/t,"
	    "bind-propagation=up': bind-propagation must be one of shared, "
	    "slave, private, rshared, rslave, rprivate");
	mount_bad("target=/t,tmpfs-size=1k", "mount 'target=/t,"
	    "tmpfs-size=1k': tmpfs-* keys are for type=tmpfs");
	mount_bad("target=\"/t\"", "mount 'target=\"/t\"': quotes are not "
	    "supported; write KEY=VALUE items separated by ','");
	mount_bad("target=", "mount 'target=': target needs a value");
}

/* The new fields reach the create body as the Engine API spells them. */
static void
test_create_body_mounts(void **state)
{
	struct fixture *f = *state;
	struct vg_docker_conf *d = vg_docker_of(&f->m);
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *hc, *v;
	struct vg_err e;

	vg_strv_push(&d->mounts, "type=volume,source=pv,target=/p,"
	    "volume-driver=plug,volume-opt=k=v,volume-nocopy");
	vg_strv_push(&d->mounts, "type=tmpfs,target=/t,tmpfs-size=1k,"
	    "tmpfs-mode=700");
	vg_strv_push(&d->mounts, "type=bind,source=/s,target=/b,ro,"
	    "bind-propagation=rprivate");
	vg_strv_push(&d->security_opt, "label=level:s0");
	vg_kvs_set(&d->sysctls, "net.core.somaxconn", "1024");
	d->uts_mode = lit(f, "host");
	d->userns_mode = lit(f, "keep-id");
	vg_strv_push(&d->volumes_from, "db:ro");
	vg_strv_push(&d->device_cgroup_rules, "c 1:3 mr");
	vg_docker_create_body(&f->a, "o", &b);
	vg_err_init(&e);
	if (vg_json_parse(b.data, b.len, NULL, &doc, &e) != 0)
		fail_msg("%s: %s", e.msg, b.data);
	hc = vg_json_get(vg_json_root(doc), "HostConfig");
	v = vg_json_get(hc, "Mounts");
	assert_int_equal(v->len, 3);
	assert_string_equal(vg_json_get_str(vg_json_get(vg_json_get(
	    vg_json_get(v->items[0], "VolumeOptions"), "DriverConfig"),
	    "Options"), "k", ""), "v");
	assert_true(vg_json_get(vg_json_get(v->items[0], "VolumeOptions"),
	    "NoCopy")->b);
	assert_true(vg_json_get_num(vg_json_get(v->items[1], "TmpfsOptions"),
	    "Mode", 0) == 0700);
	assert_true(vg_json_get_num(vg_json_get(v->items[1], "TmpfsOptions"),
	    "SizeBytes", 0) == 1024);
	assert_string_equal(vg_json_get_str(vg_json_get(v->items[2],
	    "BindOptions"), "Propagation", ""), "rprivate");
	assert_true(vg_json_get(v->items[2], "ReadOnly")->b);
	v = vg_json_get(hc, "SecurityOpt");
	assert_int_equal(v->len, 2);
	assert_string_equal(v->items[0]->str, "no-new-privileges");
	assert_string_equal(v->items[1]->str, "label=level:s0");
	assert_string_equal(vg_json_get_str(vg_json_get(hc, "Sysctls"),
	    "net.core.somaxconn", ""), "1024");
	assert_string_equal(vg_json_get_str(hc, "UTSMode", ""), "host");
	assert_string_equal(vg_json_get_str(hc, "UsernsMode", ""), "keep-id");
	assert_string_equal(vg_json_get(hc, "VolumesFrom")->items[0]->str,
	    "db:ro");
	assert_string_equal(vg_json_get(hc, "DeviceCgroupRules")->items[0]->str,
	    "c 1:3 mr");
	vg_json_free(doc);
	vg_buf_release(&b);
	vg_kvs_release(&d->sysctls);
}

/* HostConfig.DeviceRequests of a GPU attempt: the assigned ids, else a
 * count; the judge lets exactly that through and nothing else. */
static void
test_create_body_gpus(void **state)
{
	struct fixture *f = *state;
	struct vg_buf b = VG_BUF_INIT, why = VG_BUF_INIT;
	const char *p;

	/* No gpus: no DeviceRequests at all. */
	vg_docker_create_body(&f->a, "o", &b);
	assert_null(strstr(b.data, "DeviceRequests"));
	vg_buf_reset(&b);
	/* Ids the direct scheduler gave (Count 0: the two are exclusive). */
	f->a.res.gpus = 2;
	f->a.gpu_set = 1;
	snprintf(f->a.gpu_ids, sizeof(f->a.gpu_ids), "1,3");
	vg_docker_create_body(&f->a, "o", &b);
	assert_non_null(p = strstr(b.data, "\"DeviceRequests\":"));
	assert_memory_equal(p, "\"DeviceRequests\":[{\"Driver\":\"nvidia\","
	    "\"Count\":0,\"DeviceIDs\":[\"1\",\"3\"],\"Capabilities\":"
	    "[[\"gpu\"]],\"Options\":{}}]", 108);
	assert_int_equal(judge(f, NULL, &why, NULL), 0);
	/* The same GPUs written otherwise, or another GPU, or all of
	 * them: host access. */
	assert_int_equal(judge_raw(f, "{\"HostConfig\":{\"DeviceRequests\":"
	    "[{\"Driver\":\"nvidia\",\"Count\":0,\"DeviceIDs\":[\"1\","
	    "\"2\"],\"Capabilities\":[[\"gpu\"]],\"Options\":{}}]}}", &why),
	    1);
	assert_string_equal(vg_buf_str(&why), "HostConfig.DeviceRequests "
	    "passes host devices (GPUs)\n");
	assert_int_equal(judge_raw(f, "{\"HostConfig\":{\"DeviceRequests\":"
	    "[{\"Driver\":\"nvidia\",\"Count\":-1,\"DeviceIDs\":[],"
	    "\"Capabilities\":[[\"gpu\"]],\"Options\":{}}]}}", &why), 1);
	vg_buf_reset(&b);
	/* No assignment here (a cloud or Slurm pool): the count. */
	f->a.gpu_set = 0;
	f->a.gpu_ids[0] = '\0';
	vg_docker_create_body(&f->a, "o", &b);
	assert_non_null(p = strstr(b.data, "\"DeviceRequests\":"));
	assert_memory_equal(p, "\"DeviceRequests\":[{\"Driver\":\"nvidia\","
	    "\"Count\":2,\"DeviceIDs\":[],\"Capabilities\":[[\"gpu\"]],"
	    "\"Options\":{}}]", 101);
	assert_int_equal(judge(f, NULL, &why, NULL), 0);
	/* A task without gpus may not ask for any. */
	f->a.res.gpus = 0;
	assert_int_equal(judge_raw(f, "{\"HostConfig\":{\"DeviceRequests\":"
	    "[{\"Driver\":\"nvidia\",\"Count\":2,\"DeviceIDs\":[],"
	    "\"Capabilities\":[[\"gpu\"]],\"Options\":{}}]}}", &why), 1);
	vg_buf_release(&b);
	vg_buf_release(&why);
}

/* The create body for a shell command with defaults. */
static void
test_create_body_defaults(void **state)
{
	struct fixture *f = *state;
	struct vg_buf b = VG_BUF_INIT, want = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *env;
	struct vg_err e;
	char *p, *q;
	size_t i, npath = 0, nvigil = 0, na = 0;

	f->kv[0].key = lit(f, "A");
	f->kv[0].value = lit(f, "1");
	f->kv[1].key = lit(f, "PATH");
	f->kv[1].value = lit(f, "/opt/bin");
	f->task.env.n = 2;
	f->a.scratch_dir = lit(f, "/scratch/s1");
	setenv("HOME", "/root-home", 1);
	vg_docker_create_body(&f->a, "h:12:34", &b);

	/* Env: the task's, the VIGIL_* ones, none of the host's PATH,
	 * HOME, USER or TMPDIR. */
	vg_err_init(&e);
	if (vg_json_parse(b.data, b.len, NULL, &doc, &e) != 0)
		fail_msg("%s", e.msg);
	env = vg_json_get(vg_json_root(doc), "Env");
	assert_non_null(env);
	for (i = 0; i < env->len; i++) {
		const char *s = env->items[i]->str;

		if (strncmp(s, "PATH=", 5) == 0) {
			assert_string_equal(s, "PATH=/opt/bin");
			npath++;
		}
		na += strcmp(s, "A=1") == 0;
		nvigil += strcmp(s, "VIGIL_RUN_ID=run1") == 0 ||
		    strcmp(s, "VIGIL_TASK_INDEX=3") == 0 ||
		    strcmp(s, "VIGIL_TASK_DIR=/runs/run1/tasks/3") == 0 ||
		    strcmp(s, "VIGIL_ATTEMPT=2") == 0;
		assert_true(strncmp(s, "HOME=", 5) != 0);
		assert_true(strncmp(s, "USER=", 5) != 0);
		assert_true(strncmp(s, "TMPDIR=", 7) != 0);
	}
	assert_int_equal(npath, 1);
	assert_int_equal(na, 1);
	assert_int_equal(nvigil, 4);
	vg_json_free(doc);

	/* Everything else, byte for byte (Env cut out). */
	p = strstr(b.data, "\"Env\":[");
	q = p ? strstr(p, "],") : NULL;
	assert_non_null(q);
	memmove(p, q + 2, strlen(q + 2) + 1);
	vg_buf_printf(&want, "{\"Image\":\"localhost/vigil-test:latest\","
	    "\"Entrypoint\":[\"/bin/sh\"],\"Cmd\":[\"-c\","
	    "\"echo \\\"hi\\\" >&2\"],\"WorkingDir\":\"/scratch/s1\","
	    "\"User\":\"%u:%u\",\"Tty\":false,\"OpenStdin\":false,"
	    "\"Labels\":{\"vigil\":\"1\",\"vigil.run\":\"run1\","
	    "\"vigil.task\":\"3\",\"vigil.attempt\":\"2\","
	    "\"vigil.owner\":\"h:12:34\"},\"HostConfig\":{\"Binds\":["
	    "\"/runs/run1/tasks/3:/runs/run1/tasks/3:rw\","
	    "\"/scratch/s1:/scratch/s1:rw\"],\"NetworkMode\":\"none\","
	    "\"CapDrop\":[\"ALL\"],\"SecurityOpt\":[\"no-new-privileges\"],"
	    "\"PidsLimit\":4096}}", (unsigned)getuid(), (unsigned)getgid());
	assert_string_equal(b.data, vg_buf_str(&want));
	vg_buf_release(&b);
	vg_buf_release(&want);
}

/* Every option of the docker section and resources, argv command. */
static void
test_create_body_options(void **state)
{
	struct fixture *f = *state;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_json_doc *doc;
	const struct vg_json_value *r, *hc, *v;
	struct vg_err e;

	f->task.command.is_argv = 1;
	vg_strv_push(&f->task.command.argv, "python3");
	vg_strv_push(&f->task.command.argv, "-c");
	vg_strv_push(&f->task.command.argv, "print(1)");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "cache:/c:ro");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "./in:/in");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "/anon");
	vg_strv_push(&vg_docker_of(&f->m)->cap_add, "NET_RAW");
	vg_strv_push(&vg_docker_of(&f->m)->devices, "/dev/fuse:/dev/f:r");
	f->m.file = lit(f, "/jobs/sweep/job.yaml");
	f->m.workdir = lit(f, "/work");
	vg_docker_of(&f->m)->user = lit(f, "1000:1000");
	vg_docker_of(&f->m)->network = lit(f, "bridge");
	vg_docker_of(&f->m)->read_only = 1;
	vg_docker_of(&f->m)->pids_limit = 64;
	vg_docker_of(&f->m)->privileged = 1;
	vg_docker_of(&f->m)->pid_mode = lit(f, "host");
	vg_docker_of(&f->m)->ipc_mode = lit(f, "private");
	f->m.limits.nofile = 512;
	f->m.limits.core_set = 1;
	f->a.res.memory = 256u << 20;
	f->a.res.cpus = 2;
	vg_docker_create_body(&f->a, "o", &b);
	vg_err_init(&e);
	if (vg_json_parse(b.data, b.len, NULL, &doc, &e) != 0)
		fail_msg("%s: %s", e.msg, b.data);
	r = vg_json_root(doc);
	v = vg_json_get(r, "Entrypoint");
	assert_int_equal(v->len, 1);
	assert_string_equal(v->items[0]->str, "python3");
	v = vg_json_get(r, "Cmd");
	assert_int_equal(v->len, 2);
	assert_string_equal(v->items[1]->str, "print(1)");
	assert_string_equal(vg_json_get_str(r, "WorkingDir", ""), "/work");
	assert_string_equal(vg_json_get_str(r, "User", ""), "1000:1000");
	hc = vg_json_get(r, "HostConfig");
	v = vg_json_get(hc, "Binds");
	assert_int_equal(v->len, 4);
	assert_string_equal(v->items[1]->str, "cache:/c:ro");
	assert_string_equal(v->items[2]->str, "/jobs/sweep/./in:/in");
	assert_string_equal(v->items[3]->str, "/anon");
	assert_string_equal(vg_json_get_str(hc, "NetworkMode", ""), "bridge");
	assert_string_equal(vg_json_get(hc, "CapAdd")->items[0]->str,
	    "NET_RAW");
	assert_true(vg_json_get_num(hc, "PidsLimit", 0) == 64);
	assert_true(vg_json_get_num(hc, "Memory", 0) == 256 << 20);
	assert_true(vg_json_get_num(hc, "MemorySwap", 0) == 256 << 20);
	assert_true(vg_json_get_num(hc, "NanoCpus", 0) == 2e9);
	assert_true(vg_json_get(hc, "ReadonlyRootfs")->b);
	assert_string_equal(vg_json_get_str(vg_json_get(hc, "Tmpfs"), "/tmp",
	    ""), "rw,nosuid,nodev");
	assert_true(vg_json_get(hc, "Privileged")->b);
	assert_string_equal(vg_json_get_str(hc, "PidMode", ""), "host");
	assert_string_equal(vg_json_get_str(hc, "IpcMode", ""), "private");
	v = vg_json_get(hc, "Devices")->items[0];
	assert_string_equal(vg_json_get_str(v, "PathOnHost", ""), "/dev/fuse");
	assert_string_equal(vg_json_get_str(v, "PathInContainer", ""),
	    "/dev/f");
	assert_string_equal(vg_json_get_str(v, "CgroupPermissions", ""), "r");
	v = vg_json_get(hc, "Ulimits");
	assert_int_equal(v->len, 3);
	assert_string_equal(vg_json_get_str(v->items[0], "Name", ""), "core");
	assert_true(vg_json_get_num(v->items[0], "Hard", -1) == 0);
	assert_string_equal(vg_json_get_str(v->items[1], "Name", ""),
	    "nofile");
	assert_true(vg_json_get_num(v->items[1], "Soft", -1) == 512);
	assert_string_equal(vg_json_get_str(v->items[2], "Name", ""), "nproc");
	vg_json_free(doc);
	vg_buf_release(&b);
}

/* Checks one image reference split. */
static void
ref_ok(const char *image, const char *from, const char *tag)
{
	struct vg_buf f = VG_BUF_INIT, t = VG_BUF_INIT;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_docker_image_ref(image, &f, &t, &e) != 0)
		fail_msg("%s: %s", image, e.msg);
	assert_string_equal(vg_buf_str(&f), from);
	assert_string_equal(vg_buf_str(&t), tag);
	vg_buf_release(&f);
	vg_buf_release(&t);
}

/* Image references for POST /images/create. */
static void
test_image_ref(void **state)
{
	struct vg_buf f = VG_BUF_INIT, t = VG_BUF_INIT;
	struct vg_err e;

	ref_ok("busybox", "busybox", "latest");
	ref_ok("busybox:1.36", "busybox", "1.36");
	ref_ok("127.0.0.1:5000/bb", "127.0.0.1:5000/bb", "latest");
	ref_ok("127.0.0.1:5000/a/bb:1", "127.0.0.1:5000/a/bb", "1");
	ref_ok("bb@sha256:0123abcd", "bb@sha256:0123abcd", "");
	vg_err_init(&e);
	assert_int_equal(vg_docker_image_ref("bb:", &f, &t, &e), VG_EINVAL);
	assert_string_equal(e.msg, "image 'bb:': expected NAME[:TAG] or "
	    "NAME@DIGEST");
	assert_int_equal(vg_docker_image_ref("bb latest", &f, &t, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "image 'bb latest': character ' ' is not "
	    "allowed in an image reference");
	assert_int_equal(vg_docker_image_ref("a/../b?x", &f, &t, &e),
	    VG_EINVAL);
	assert_string_equal(e.msg, "image 'a/../b?x': character '?' is not "
	    "allowed in an image reference");
	assert_int_equal(vg_docker_image_ref(NULL, &f, &t, &e), VG_EINVAL);
	assert_string_equal(e.msg, "no image: set 'image:' in the manifest");
	vg_buf_release(&f);
	vg_buf_release(&t);
}

/* Collects demultiplexed output per stream. */
struct demux_out {
	struct vg_buf	s[3];
	int		calls;
	int		fail_at;	/* call number that fails, or 0 */
};

static int
demux_collect(void *arg, int stream, const char *p, size_t n)
{
	struct demux_out *o = arg;

	if (++o->calls == o->fail_at)
		return VG_EIO;
	vg_buf_add(&o->s[stream], p, n);
	return 0;
}

/* Builds one frame. */
static void
frame(struct vg_buf *b, int stream, const char *payload, size_t n)
{
	unsigned char h[8] = { (unsigned char)stream, 0, 0, 0,
	    (unsigned char)(n >> 24), (unsigned char)(n >> 16),
	    (unsigned char)(n >> 8), (unsigned char)n };

	vg_buf_add(b, h, 8);
	vg_buf_add(b, payload, n);
}

/* Frames split at every possible boundary give the same streams. */
static void
test_demux(void **state)
{
	struct vg_buf in = VG_BUF_INIT;
	struct vg_docker_demux d;
	struct demux_out o;
	struct vg_err e;
	char big[70000];
	size_t step, i, k;

	memset(big, 'x', sizeof(big));
	frame(&in, 1, "out1\n", 5);
	frame(&in, 2, "err1\n", 5);
	frame(&in, 1, "", 0);
	frame(&in, 0, "in\n", 3);
	frame(&in, 2, big, sizeof(big));
	frame(&in, 1, "a\0b", 3);
	for (step = 1; step <= in.len; step = step < 20 ? step + 1 :
	    step * 3) {
		memset(&o, 0, sizeof(o));
		vg_docker_demux_init(&d, demux_collect, &o);
		for (i = 0; i < in.len; i += k) {
			k = in.len - i < step ? in.len - i : step;
			assert_int_equal(vg_docker_demux_feed(&d,
			    in.data + i, k, &e), 0);
		}
		assert_true(vg_docker_demux_done(&d));
		assert_int_equal(o.s[1].len, 11);
		assert_memory_equal(o.s[1].data, "out1\nin\na\0b", 11);
		assert_int_equal(o.s[2].len, 5 + sizeof(big));
		assert_memory_equal(o.s[2].data, "err1\n", 5);
		assert_int_equal(o.s[0].len, 0);
		for (i = 0; i < 3; i++)
			vg_buf_release(&o.s[i]);
	}

	/* A stream cut inside a frame is not done. */
	memset(&o, 0, sizeof(o));
	vg_docker_demux_init(&d, demux_collect, &o);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, 12, &e), 0);
	assert_false(vg_docker_demux_done(&d));
	vg_buf_release(&o.s[1]);
	vg_buf_release(&in);
}

/* Bad stream numbers and sink failures stop the feed with a message. */
static void
test_demux_errors(void **state)
{
	struct vg_buf in = VG_BUF_INIT;
	struct vg_docker_demux d;
	struct demux_out o;
	struct vg_err e;
	char big[1000];
	size_t i;

	frame(&in, 1, "ok", 2);
	frame(&in, 4, "bad", 3);
	memset(&o, 0, sizeof(o));
	vg_docker_demux_init(&d, demux_collect, &o);
	vg_err_init(&e);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, in.len, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "docker log stream: frame at byte 10 has "
	    "unknown stream 4 (expected 0 to 3)");
	vg_buf_release(&o.s[1]);

	/* Stream 3 is the engine's error, told in its words (controls
	 * blanked), fed a byte at a time; nothing of it reaches the
	 * files, and the sink form keeps the message. */
	vg_buf_reset(&in);
	frame(&in, 1, "ok", 2);
	frame(&in, 3, "log\nfailed", 10);
	memset(&o, 0, sizeof(o));
	vg_docker_demux_init(&d, demux_collect, &o);
	for (i = 0; i < in.len - 1; i++)
		assert_int_equal(vg_docker_demux_sink(&d, in.data + i, 1), 0);
	assert_int_equal(vg_docker_demux_sink(&d, in.data + i, 1),
	    VG_EBACKEND);
	assert_string_equal(d.err.msg, "the engine ended the log stream with "
	    "an error: log failed");
	assert_int_equal(o.s[1].len, 2);
	assert_int_equal(o.s[2].len, 0);
	vg_buf_release(&o.s[1]);

	/* An empty one, and one longer than what is kept. */
	vg_buf_reset(&in);
	frame(&in, 3, "", 0);
	vg_docker_demux_init(&d, demux_collect, &o);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, in.len, &e),
	    VG_EBACKEND);
	assert_string_equal(e.msg, "the engine ended the log stream with "
	    "an error: (no message)");
	vg_buf_reset(&in);
	memset(big, 'x', sizeof(big));
	frame(&in, 3, big, sizeof(big));
	vg_docker_demux_init(&d, demux_collect, &o);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, in.len, &e),
	    VG_EBACKEND);
	assert_int_equal(strlen(d.sys), sizeof(d.sys) - 1);

	vg_buf_reset(&in);
	frame(&in, 1, "ok", 2);
	frame(&in, 2, "no", 2);
	memset(&o, 0, sizeof(o));
	o.fail_at = 2;
	vg_docker_demux_init(&d, demux_collect, &o);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, in.len, &e),
	    VG_EIO);
	assert_string_equal(e.msg, "docker log stream: cannot write stderr");
	vg_buf_release(&o.s[1]);
	vg_buf_release(&in);
}

/* A stats reply as podman 4.3 sends it for a running container (cgroup
 * v1, this machine): CPU split, memory usage and limit, no max_usage. */
static const char podman_stats[] =
    "{\"read\":\"2026-12-01T16:33:29.397915861Z\",\"preread\":"
    "\"0001-01-01T00:00:00Z\",\"pids_stats\":{\"current\":3},"
    "\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":486517479,"
    "\"percpu_usage\":[393984662,92532817],\"usage_in_kernelmode\":"
    "100000000,\"usage_in_usermode\":386517479},\"system_cpu_usage\":"
    "4574570840161,\"online_cpus\":2},\"precpu_stats\":{\"cpu_usage\":"
    "{\"total_usage\":0}},\"memory_stats\":{\"usage\":937984,\"limit\":"
    "25324732416},\"name\":\"agitated_mendel\"}\n";

/* Stats replies: podman's, dockerd's with max_usage, totals only, the
 * empty and zero-time replies of an exited container, bad counters; the
 * merge keeps the largest. */
static void
test_stats(void **state)
{
	struct vg_docker_stats s, acc;
	struct vg_err e;
	const char *v1 = "{\"read\":\"2026-01-01T00:00:00Z\",\"cpu_stats\":"
	    "{\"cpu_usage\":{\"total_usage\":3000000000,"
	    "\"usage_in_usermode\":2500000000,\"usage_in_kernelmode\":"
	    "500000000}},\"memory_stats\":{\"usage\":1048576,"
	    "\"max_usage\":209715200,\"limit\":1073741824}}";
	const char *tot = "{\"read\":\"2026-01-01T00:00:00Z\",\"cpu_stats\":"
	    "{\"cpu_usage\":{\"total_usage\":1500000000}}}";
	const char *zero = "{\"read\":\"0001-01-01T00:00:00Z\",\"cpu_stats\":"
	    "{\"cpu_usage\":{\"total_usage\":0}},\"memory_stats\":{}}";
	const char *bad = "{\"read\":\"2026-01-01T00:00:00Z\",\"memory_stats\":"
	    "{\"usage\":-5}}";

	(void)state;
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse(podman_stats,
	    strlen(podman_stats), &s, &e), 0);
	assert_int_equal(s.known, VG_USAGE_CPU | VG_USAGE_RSS);
	assert_true(s.cpu_user > 0.3865 && s.cpu_user < 0.3866);
	assert_true(s.cpu_sys > 0.0999 && s.cpu_sys < 0.1001);
	assert_int_equal(s.mem, 937984);
	assert_int_equal(s.mem_exact, 0);

	assert_int_equal(vg_docker_stats_parse(v1, strlen(v1), &s, &e), 0);
	assert_true(s.cpu_user > 2.49 && s.cpu_user < 2.51);
	assert_int_equal(s.mem, 209715200);
	assert_int_equal(s.mem_exact, 1);

	assert_int_equal(vg_docker_stats_parse(tot, strlen(tot), &s, &e), 0);
	assert_int_equal(s.known, VG_USAGE_CPU);
	assert_true(s.cpu_user > 1.49 && s.cpu_sys == 0);

	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse("\n", 1, &s, &e), VG_ENOENT);
	assert_non_null(strstr(e.msg, "not running"));
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse(zero, strlen(zero), &s, &e),
	    VG_ENOENT);
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse(bad, strlen(bad), &s, &e),
	    VG_EPARSE);
	assert_non_null(strstr(e.msg, "not a number"));
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse("[1]", 3, &s, &e), VG_EPARSE);
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse("{\"cpu", 5, &s, &e),
	    VG_EPARSE);
	vg_err_init(&e);
	assert_int_equal(vg_docker_stats_parse("{}", 2, &s, &e), VG_ENOENT);

	/* The largest CPU and memory seen win; a later smaller memory
	 * sample (freed) leaves the peak. */
	memset(&acc, 0, sizeof(acc));
	assert_int_equal(vg_docker_stats_parse(v1, strlen(v1), &s, &e), 0);
	vg_docker_stats_merge(&acc, &s);
	assert_int_equal(vg_docker_stats_parse(podman_stats,
	    strlen(podman_stats), &s, &e), 0);
	vg_docker_stats_merge(&acc, &s);
	assert_int_equal(acc.mem, 209715200);
	assert_true(acc.cpu_user > 2.49 && acc.cpu_sys > 0.49);
	s.cpu_user = 10;
	s.mem = 300 << 20;
	vg_docker_stats_merge(&acc, &s);
	assert_true(acc.cpu_user == 10 && acc.mem == 300 << 20);
	assert_int_equal(acc.mem_exact, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_version),
		cmocka_unit_test(test_volume_parse),
		cmocka_unit_test_setup_teardown(test_host_access_none, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_host_access_all, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_host_access_safe_driver,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_access_body, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_create_body_mounts,
		    setup, teardown),
		cmocka_unit_test(test_volume_judge),
		cmocka_unit_test(test_mount_parse),
		cmocka_unit_test_setup_teardown(test_create_body_gpus,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_body_defaults,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_body_options,
		    setup, teardown),
		cmocka_unit_test(test_image_ref),
		cmocka_unit_test(test_demux),
		cmocka_unit_test(test_demux_errors),
		cmocka_unit_test(test_stats),
	};

	return cmocka_run_group_tests_name("docker", tests, NULL, NULL);
}
