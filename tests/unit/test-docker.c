/*
 * test-docker.c - the pure parts of the docker backend: API version
 * negotiation, volume specs, the host access check, named volume
 * inspection, the create body, image references and the log stream
 * demultiplexer.
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
	vg_strv_release(&f->task.command.argv);
	vg_strv_release(&f->pool);
	free(f);
	return 0;
}

/* Nothing risky: no findings. */
static void
test_host_access_none(void **state)
{
	struct fixture *f = *state;
	struct vg_buf why = VG_BUF_INIT;

	vg_strv_push(&vg_docker_of(&f->m)->volumes, "cache:/cache");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "/anon");
	vg_docker_of(&f->m)->network = lit(f, "none");
	vg_docker_of(&f->m)->pid_mode = lit(f, "private");
	assert_int_equal(vg_docker_host_access(&f->m, &why), 0);
	assert_string_equal(vg_buf_str(&why), "");
	vg_docker_of(&f->m)->network = lit(f, "bridge");
	assert_int_equal(vg_docker_host_access(&f->m, &why), 0);
	vg_buf_release(&why);
}

/* Every kind of host access, one line each, in a fixed order. */
static void
test_host_access_all(void **state)
{
	struct fixture *f = *state;
	struct vg_buf why = VG_BUF_INIT;

	vg_strv_push(&vg_docker_of(&f->m)->volumes, "/etc:/x:ro");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "~/.ssh:/k");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "./data:/d");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "../up:/u");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "C:\\Users:/u2");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "/var/run/docker.sock:/s");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "/tmp/x:/run/podman.sock");
	vg_strv_push(&vg_docker_of(&f->m)->volumes, "named:/n");
	vg_docker_of(&f->m)->privileged = 1;
	vg_docker_of(&f->m)->network = lit(f, "host");
	vg_docker_of(&f->m)->pid_mode = lit(f, "host");
	vg_docker_of(&f->m)->ipc_mode = lit(f, "container:db");
	vg_strv_push(&vg_docker_of(&f->m)->devices, "/dev/fuse");
	vg_strv_push(&vg_docker_of(&f->m)->cap_add, "SYS_ADMIN");
	assert_int_equal(vg_docker_host_access(&f->m, &why), 13);
	assert_string_equal(vg_buf_str(&why),
	    "docker.volumes '/etc:/x:ro' binds host path '/etc'\n"
	    "docker.volumes '~/.ssh:/k' binds host path '~/.ssh'\n"
	    "docker.volumes './data:/d' binds host path './data'\n"
	    "docker.volumes '../up:/u' binds host path '../up'\n"
	    "docker.volumes 'C:\\Users:/u2' binds host path 'C:\\Users'\n"
	    "docker.volumes '/var/run/docker.sock:/s' mounts a container "
	    "engine socket (control of the host)\n"
	    "docker.volumes '/tmp/x:/run/podman.sock' mounts a container "
	    "engine socket (control of the host)\n"
	    "docker.privileged runs a privileged container (every device "
	    "and capability)\n"
	    "docker.network 'host' shares the host's network\n"
	    "docker.pid_mode 'host' shares the host's process namespace\n"
	    "docker.ipc_mode 'container:db' joins another container's IPC "
	    "namespace\n"
	    "docker.devices '/dev/fuse' passes a host device\n"
	    "docker.cap_add 'SYS_ADMIN' adds a capability\n");
	vg_buf_release(&why);
}

/* Policy: auto-deny by default; auto-approve or a host-access rule. */
static void
test_host_access_allowed(void **state)
{
	struct fixture *f = *state;

	assert_false(vg_docker_host_access_allowed(&f->m));
	f->m.policy.mode = lit(f, "auto-deny");
	assert_false(vg_docker_host_access_allowed(&f->m));
	f->m.policy.mode = lit(f, "interactive");
	assert_false(vg_docker_host_access_allowed(&f->m));
	f->rule.category = lit(f, "network");
	f->m.policy.allow = &f->rule;
	f->m.policy.nallow = 1;
	assert_false(vg_docker_host_access_allowed(&f->m));
	f->rule.category = lit(f, "host-access");
	assert_true(vg_docker_host_access_allowed(&f->m));
	f->m.policy.nallow = 0;
	f->m.policy.mode = lit(f, "auto-approve");
	assert_true(vg_docker_host_access_allowed(&f->m));
}

/* Returns the host dir of a volume given its inspect JSON. */
static const char *
vol_dir(const char *json, struct vg_json_doc **doc)
{
	struct vg_err e;

	if (vg_json_parse(json, strlen(json), NULL, doc, &e) != 0)
		fail_msg("%s", e.msg);
	return vg_docker_volume_host_dir(vg_json_root(*doc));
}

/* Named volumes: which inspect replies bind a host directory. */
static void
test_volume_host_dir(void **state)
{
	struct vg_json_doc *doc;

	/* The reply podman 4.3 gives for the REFERENCE recipe. */
	assert_string_equal(vol_dir("{\"Driver\":\"local\",\"Name\":\"hv\","
	    "\"Options\":{\"device\":\"/host/dir\",\"o\":\"bind\","
	    "\"type\":\"none\"},\"Scope\":\"local\"}", &doc), "/host/dir");
	vg_json_free(doc);
	assert_string_equal(vol_dir("{\"Driver\":\"local\",\"Options\":"
	    "{\"device\":\"/h\",\"o\":\"ro,rbind\"}}", &doc), "/h");
	vg_json_free(doc);
	assert_string_equal(vol_dir("{\"Driver\":\"local\",\"Options\":"
	    "{\"device\":\"/h\",\"type\":\"none\"}}", &doc), "/h");
	vg_json_free(doc);
	assert_string_equal(vol_dir("{\"Driver\":\"local\",\"Options\":"
	    "{\"device\":\"/dev/sdb1\",\"type\":\"ext4\"}}", &doc),
	    "/dev/sdb1");
	vg_json_free(doc);
	/* Plain volumes, tmpfs and nfs volumes stay inside the engine. */
	assert_null(vol_dir("{\"Driver\":\"local\",\"Options\":null}", &doc));
	vg_json_free(doc);
	assert_null(vol_dir("{\"Driver\":\"local\",\"Options\":{\"type\":"
	    "\"tmpfs\",\"device\":\"tmpfs\",\"o\":\"size=1m\"}}", &doc));
	vg_json_free(doc);
	assert_null(vol_dir("{\"Driver\":\"local\",\"Options\":{\"type\":"
	    "\"nfs\",\"device\":\":/export\",\"o\":\"addr=1.2.3.4\"}}",
	    &doc));
	vg_json_free(doc);
	assert_null(vol_dir("{\"Driver\":\"local\",\"Options\":{\"device\":"
	    "\"/h\",\"o\":\"bindx\"}}", &doc));
	vg_json_free(doc);
	assert_null(vol_dir("{\"Driver\":\"other\",\"Options\":{\"device\":"
	    "\"/h\",\"o\":\"bind\"}}", &doc));
	vg_json_free(doc);
	assert_null(vol_dir("[]", &doc));
	vg_json_free(doc);
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

	frame(&in, 1, "ok", 2);
	frame(&in, 3, "bad", 3);
	memset(&o, 0, sizeof(o));
	vg_docker_demux_init(&d, demux_collect, &o);
	vg_err_init(&e);
	assert_int_equal(vg_docker_demux_feed(&d, in.data, in.len, &e),
	    VG_EPARSE);
	assert_string_equal(e.msg, "docker log stream: frame at byte 10 has "
	    "unknown stream 3 (expected 0, 1 or 2)");
	vg_buf_release(&o.s[1]);

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
		cmocka_unit_test_setup_teardown(test_host_access_allowed,
		    setup, teardown),
		cmocka_unit_test(test_volume_host_dir),
		cmocka_unit_test_setup_teardown(test_create_body_defaults,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_body_options,
		    setup, teardown),
		cmocka_unit_test(test_image_ref),
		cmocka_unit_test(test_demux),
		cmocka_unit_test(test_demux_errors),
	};

	return cmocka_run_group_tests_name("docker", tests, NULL, NULL);
}
