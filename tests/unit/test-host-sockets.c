/*
 * test-host-sockets.c - the host's sockets (backends/host-sockets.c):
 * the parser of /proc/net/unix on the kernel's own format (pathname,
 * abstract and unbound sockets, a path with spaces, a path with a
 * newline that forges a line, duplicates, truncated lines, the bound on
 * the count) and the judgement of control sockets (engine names
 * anywhere, word boundaries, the journal spared).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/host-sockets.h"

#define HDR "Num       RefCount Protocol Flags    Type St Inode Path\n"

static void
test_parse(void **state)
{
	const char *t = HDR
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20061 "
	    "/run/docker.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20062 "
	    "@/tmp/.X11-unix/X0\n"
	    "0000000000000000: 00000003 00000000 00000000 0001 03 20063\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20064 "
	    "/srv/my dir/d.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20065 "
	    "/run/docker.sock\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20066 "
	    "/a\n0000: 1 2 3 4 5 6 /forged\n"
	    "0000000000000000: 00000002 00000000\n"
	    "garbage\n\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20067 "
	    "relative\n"
	    "0000000000000000: 00000002 00000000 00010000 0001 01 20068 "
	    "/last";
	struct vg_strv v = VG_STRV_INIT;
	unsigned long ino[100];

	(void)state;
	assert_int_equal(vg_host_sockets_parse(t, strlen(t), 100, &v, ino), 5);
	assert_true(ino[0] == 20061 && ino[1] == 20064 && ino[2] == 20066 &&
	    ino[3] == 6 && ino[4] == 20068);
	assert_string_equal(v.v[0], "/run/docker.sock");
	assert_string_equal(v.v[1], "/srv/my dir/d.sock");
	assert_string_equal(v.v[2], "/a");
	/* A newline in a path starts a line the parser reads like any
	 * other: it can only name another path to check with lstat. */
	assert_string_equal(v.v[3], "/forged");
	assert_string_equal(v.v[4], "/last");
	vg_strv_release(&v);
	/* The bound. */
	assert_int_equal(vg_host_sockets_parse(t, strlen(t), 2, &v, NULL), 2);
	vg_strv_release(&v);
	/* Nothing, a header only, a text cut anywhere. */
	assert_int_equal(vg_host_sockets_parse("", 0, 10, &v, NULL), 0);
	assert_int_equal(vg_host_sockets_parse(HDR, strlen(HDR), 10, &v, ino), 0);
	assert_int_equal(vg_host_sockets_parse(t, 60, 10, &v, ino), 0);
	vg_strv_release(&v);
}

static void
test_control(void **state)
{
	static const char *const yes[] = {
		"/run/docker.sock", "/var/run/docker.sock",
		"/srv/x/docker.sock", "/home/u/.docker/run/docker.sock",
		"/run/user/1000/docker.sock", "/run/containerd/containerd.sock",
		"/run/buildkit/buildkitd.sock", "/run/podman/podman.sock",
		"/run/dbus/system_bus_socket", "/run/systemd/private",
		"/run/systemd/userdb/io.systemd.DynamicUser",
		"/run/libvirt/libvirt-sock", "/run/snapd.socket",
		"/run/snapd-snap.socket", "/var/snap/lxd/common/lxd/unix.socket",
		"/run/incus/unix.socket", "/run/crio/crio.sock",
		"/run/cri-dockerd.sock", "/srv/DOCKER.SOCK",
		"/var/lib/kubelet/pod-resources/kubelet.sock",
		"/run/udev/control", "/run/lvm/lvmpolld.socket",
		"/run/containerd/s/0123abcd", "/run/dockerd.sock",
	};
	static const char *const no[] = {
		"/run/systemd/journal/socket", "/run/systemd/journal/stdout",
		"/home/adocker/s", "/srv/x/d.sock", "/tmp/app.sock",
		"/run/user/1000/bus", "relative/docker.sock", "",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!vg_host_socket_is_control(yes[i]))
			fail_msg("'%s' is a control socket", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (vg_host_socket_is_control(no[i]))
			fail_msg("'%s' is no control socket", no[i]);
	assert_false(vg_host_socket_is_control(NULL));
}

/* find keeps sockets only: a link named like one is not taken. */
static void
test_find(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vg_strv v = VG_STRV_INIT, owned = VG_STRV_INIT;
	struct vg_err e;
	char dir[] = "/tmp/vg-hs-XXXXXX", link[64];
	size_t i;
	int fd, seen = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(link, sizeof(link), "%s/l.sock", dir);
	assert_int_equal(symlink(sa.sun_path, link), 0);
	vg_err_init(&e);
	(void)vg_host_sockets_find(&v, &owned, &e);
	for (i = 0; i < v.n; i++) {
		if (strcmp(v.v[i], sa.sun_path) == 0)
			seen = 1;
		assert_string_not_equal(v.v[i], link);
	}
	/* Bound in this process's network namespace, so listed unless the
	 * test runs where /proc is not this namespace's. */
	if (access("/proc/net/unix", R_OK) == 0)
		assert_true(seen);
	/* This test is no daemon: its socket is not owned by one. */
	for (i = 0; i < owned.n; i++)
		assert_string_not_equal(owned.v[i], sa.sun_path);
	vg_strv_release(&owned);
	vg_strv_release(&v);
	close(fd);
	unlink(sa.sun_path);
	unlink(link);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
