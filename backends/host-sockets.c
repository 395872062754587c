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
#include <fcntl.h>
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Process names (/proc/PID/comm, at most 15 bytes) of daemons whose
 * sockets are control sockets wherever they are bound. */
static const char *const control_daemons[] = {
	"dockerd", "containerd", "containerd-shim", "buildkitd", "podman",
	"libvirtd", "virtqemud", "virtproxyd", "snapd", "lxd", "incusd",
	"crio", "systemd", "dbus-daemon", "dbus-broker", "kubelet", "k3s",
	"k3s-server", "rootlesskit", "cri-dockerd", "firecracker",
	"systemd-udevd", "lvmpolld", "multipathd",
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
    struct vg_strv *out, unsigned long *ino)
{
	size_t pos = 0, end, p, added = 0;
	unsigned long num;
	int field;

	while (pos < len && added < max) {
		for (end = pos; end < len && text[end] != '\n' &&
		    text[end] != '\0'; end++)
			;
		/* Seven fields (Num RefCount Protocol Flags Type St Inode),
		 * each followed by blanks, then the path to the line end. */
		p = pos;
		num = 0;
		for (field = 0; field < 7 && p < end; field++) {
			/* The inode, the seventh, in decimal; saturates. */
			while (p < end && text[p] != ' ') {
				if (field == 6 && isdigit((unsigned char)text[p])
				    && num < 100000000000UL)
					num = num * 10 + (unsigned long)(text[p] -
					    '0');
				p++;
			}
			while (p < end && text[p] == ' ')
				p++;
		}
		if (field == 7 && p < end && text[p] == '/' &&
		    end - p < 4096 && push_once(out, text + p, end - p)) {
			if (ino != NULL)
				ino[added] = num;
			added++;
		}
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

/* True when process pid's name is a control daemon's. */
static int
daemon_pid(const char *pid)
{
	char path[300], comm[32];
	ssize_t n;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	for (i = 0; i < sizeof(control_daemons) / sizeof(control_daemons[0]);
	    i++)
		if (strcmp(comm, control_daemons[i]) == 0)
			return 1;
	return 0;
}

/*
 * Marks in held[] the sockets (paths[k] bound with inode ino[k], n of
 * them) that a control daemon holds open: reads the names of all
 * processes, and the descriptors of the daemons only.
 */
static void
daemon_sockets(const unsigned long *ino, size_t n, char *held)
{
	char fdir[300], lnk[600], target[64];
	struct dirent *de, *fe;
	DIR *proc, *fds;
	unsigned long num;
	ssize_t len;
	size_t k;

	if ((proc = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(proc)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    !daemon_pid(de->d_name))
			continue;
		snprintf(fdir, sizeof(fdir), "/proc/%s/fd", de->d_name);
		if ((fds = opendir(fdir)) == NULL)
			continue;
		while ((fe = readdir(fds)) != NULL) {
			snprintf(lnk, sizeof(lnk), "%s/%s", fdir, fe->d_name);
			len = readlink(lnk, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (sscanf(target, "socket:[%lu]", &num) != 1)
				continue;
			for (k = 0; k < n; k++)
				if (ino[k] == num && num != 0)
					held[k] = 1;
		}
		closedir(fds);
	}
	closedir(proc);
}

/* Finds the candidates; see host-sockets.h. */
int
vg_host_sockets_find(struct vg_strv *out, struct vg_strv *owned,
    struct vg_err *e)
{
	struct vg_buf text = VG_BUF_INIT;
	struct vg_strv table = VG_STRV_INIT;
	unsigned long *ino;
	char *held;
	size_t from = out->n, i, k, n;
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
	ino = vg_xcalloc(VG_HOST_SOCKETS_MAX, sizeof(*ino));
	held = vg_xcalloc(VG_HOST_SOCKETS_MAX, 1);
	rc = vg_read_file("/proc/net/unix", 64 << 20, &text, e);
	n = rc == 0 ? vg_host_sockets_parse(vg_buf_str(&text), text.len,
	    VG_HOST_SOCKETS_MAX, &table, ino) : 0;
	if (owned != NULL && n > 0)
		daemon_sockets(ino, n, held);
	for (i = 0; i < n; i++) {
		push_once(out, table.v[i], strlen(table.v[i]));
		if (owned != NULL && held[i])
			push_once(owned, table.v[i], strlen(table.v[i]));
	}
	vg_strv_release(&table);
	free(ino);
	free(held);
	vg_buf_release(&text);
	keep_sockets(out, from);
	return rc;
}
