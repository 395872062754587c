/*
 * host-sockets.c - finds the host's pathname Unix sockets and judges
 * which are control sockets that are root on the host (see
 * host-sockets.h).  The sandbox covers what it is told; nothing here
 * mounts or connects.
 *
 * Two sources: the kernel's table of bound sockets (/proc/net/unix, this
 * network namespace's, listening or not) and a fixed list of the paths
 * where engines and system daemons put their control sockets, globbed,
 * for sockets bound in another network namespace or not bound right now.
 * Every candidate is checked with lstat(2): only a socket is kept, so a
 * symbolic link planted under a known name is never taken for one.
 */
#include <ctype.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/host-sockets.h"
#include "common/buf.h"
#include "common/path.h"

/* Where control sockets live when they are not in /proc/net/unix
 * (another network namespace, a daemon stopped for now). */
static const char *const well_known[] = {
	"/run/docker.sock", "/var/run/docker.sock", "/run/docker/*.sock",
	"/run/containerd/containerd.sock*", "/run/containerd/*/*.sock",
	"/run/buildkit/buildkitd.sock", "/run/podman/podman.sock",
	"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",
	"/run/systemd/private", "/run/systemd/*", "/run/systemd/*/*",
	"/run/libvirt/*", "/run/libvirt/*/*", "/var/run/libvirt/*",
	"/run/snapd.socket", "/run/snapd-snap.socket",
	"/var/lib/lxd/unix.socket", "/var/snap/lxd/common/lxd/unix.socket",
	"/run/incus/unix.socket", "/var/lib/incus/unix.socket",
	"/run/crio/crio.sock", "/var/run/crio/crio.sock",
	"/run/k3s/containerd/containerd.sock", "/run/cri-dockerd.sock",
	"/run/user/*/docker.sock", "/run/user/*/podman/podman.sock",
	"/run/user/*/buildkit/buildkitd.sock",
	"/home/*/.docker/run/docker.sock", "/root/.docker/run/docker.sock",
	"/home/*/.docker/desktop/docker.sock",
	"/var/lib/kubelet/pod-resources/kubelet.sock",
};

/*
 * Words that make a socket a control socket when a name in its path
 * starts with them (after '/', '.', '-', '_' or another non-alphanumeric
 * byte): "docker" finds /srv/x/docker.sock and cri-dockerd.sock, not
 * /home/adocker/s.
 */
static const char *const control_words[] = {
	"docker", "containerd", "buildkit", "podman", "libvirt",
	"virtqemud", "virtproxyd", "virtlxcd", "lxd", "incus", "crio",
	"cri-o", "snapd", "system_bus_socket", "systemd", "kubelet", "k3s",
	"rke2", "rootlesskit", "nerdctl", "moby", "balena", "firecracker",
	"kube", "udev", "lvm", "multipathd",
};

/* Pushes path onto out unless already there. */
static int
push_once(struct vg_strv *out, const char *path, size_t len)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		if (strlen(out->v[i]) == len &&
		    memcmp(out->v[i], path, len) == 0)
			return 0;
	vg_strv_take(out, vg_xstrndup(path, len));
	return 1;
}

/* The parser of /proc/net/unix; see host-sockets.h. */
size_t
vg_host_sockets_parse(const char *text, size_t len, size_t max,
    struct vg_strv *out)
{
	size_t pos = 0, end, p, added = 0;
	int field;

	while (pos < len && added < max) {
		for (end = pos; end < len && text[end] != '\n' &&
		    text[end] != '\0'; end++)
			;
		/* Seven fields (Num RefCount Protocol Flags Type St Inode),
		 * each followed by blanks, then the path to the line end. */
		p = pos;
		for (field = 0; field < 7 && p < end; field++) {
			while (p < end && text[p] != ' ')
				p++;
			while (p < end && text[p] == ' ')
				p++;
		}
		if (field == 7 && p < end && text[p] == '/' &&
		    end - p < 4096 && push_once(out, text + p, end - p))
			added++;
		pos = end + 1;
	}
	return added;
}

/* True when word is in path right after a byte that is not alphanumeric
 * (or at its start). */
static int
has_word(const char *path, const char *word)
{
	const char *s;

	for (s = path; (s = strstr(s, word)) != NULL; s++)
		if (s == path || !isalnum((unsigned char)s[-1]))
			return 1;
	return 0;
}

/* The judgement of a control socket; see host-sockets.h. */
int
vg_host_socket_is_control(const char *path)
{
	char low[4096];
	size_t i, n;

	if (path == NULL || path[0] != '/')
		return 0;
	n = strlen(path);
	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)path[i]);
	low[n] = '\0';
	/* The journal's sockets (and syslog's) take log lines: no
	 * power over the host. */
	if (strstr(low, "/systemd/journal/") != NULL)
		return 0;
	if (strstr(low, "/run/dbus/") != NULL)
		return 1;
	for (i = 0; i < sizeof(control_words) / sizeof(control_words[0]);
	    i++)
		if (has_word(low, control_words[i]))
			return 1;
	return 0;
}

/* Keeps the entries of v that are sockets by lstat, in place. */
static void
keep_sockets(struct vg_strv *v, size_t from)
{
	struct stat st;
	size_t i, k = from;

	for (i = from; i < v->n; i++) {
		if (lstat(v->v[i], &st) == 0 && S_ISSOCK(st.st_mode))
			v->v[k++] = v->v[i];
		else
			free(v->v[i]);
	}
	v->n = k;
	if (v->v != NULL)
		v->v[k] = NULL;
}

/* Finds the candidates; see host-sockets.h. */
int
vg_host_sockets_find(struct vg_strv *out, struct vg_err *e)
{
	struct vg_buf text = VG_BUF_INIT;
	size_t from = out->n, i, k;
	glob_t g;
	int rc;

	for (i = 0; i < sizeof(well_known) / sizeof(well_known[0]); i++) {
		memset(&g, 0, sizeof(g));
		if (glob(well_known[i], 0, NULL, &g) == 0)
			for (k = 0; k < g.gl_pathc; k++)
				push_once(out, g.gl_pathv[k],
				    strlen(g.gl_pathv[k]));
		globfree(&g);
	}
	rc = vg_read_file("/proc/net/unix", 64 << 20, &text, e);
	if (rc == 0)
		(void)vg_host_sockets_parse(vg_buf_str(&text), text.len,
		    VG_HOST_SOCKETS_MAX, out);
	vg_buf_release(&text);
	keep_sockets(out, from);
	return rc;
}
