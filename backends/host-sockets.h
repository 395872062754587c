/*
 * host-sockets.h - the host's pathname Unix sockets a local task must not
 * reach: where they live (the kernel's table /proc/net/unix and a fixed
 * list of well-known control sockets) and which of them a level hides.
 * The sandbox (sandbox.c) asks here once per compilation and covers each
 * chosen socket in the task's mount namespace; this file only finds and
 * judges, it mounts nothing.
 *
 * /proc/net/unix lists every socket bound in this network namespace with
 * the path it was bound to, and any local user chooses those paths (a
 * path may hold spaces or a newline), so its parser is bounded and takes
 * nothing from a line but a path that starts with '/'.
 */
#ifndef VG_HOST_SOCKETS_H
#define VG_HOST_SOCKETS_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

/* The most sockets taken from one read of /proc/net/unix. */
#define VG_HOST_SOCKETS_MAX	4096

/*
 * Appends to out the pathname sockets of a /proc/net/unix text (len
 * bytes, need not end in NUL): the path column of each line whose path
 * starts with '/' (abstract sockets, '@', and unbound ones are left out),
 * each once, at most max of them.  When ino is not NULL (max entries),
 * ino[k] receives the inode column of the k-th path appended (0 when
 * not a number).  Blocks on nothing; never fails.  Returns how many were
 * appended.
 */
size_t	vg_host_sockets_parse(const char *text, size_t len, size_t max,
	    struct vg_strv *out, unsigned long *ino);

/*
 * True when path names a control socket that is root on the host: a
 * container engine's, buildkit's, containerd's, the D-Bus system bus,
 * systemd's own (not the journal's), libvirt's, snapd's, LXD's, Incus's,
 * CRI-O's, the kubelet's, wherever it lives (a name or a directory of
 * the path says so; docs/isolation.md lists the words).  Pure.
 */
int	vg_host_socket_is_control(const char *path);

/*
 * Appends to out the candidate sockets of the host: those of
 * /proc/net/unix and the well-known control sockets that exist, each a
 * socket by lstat(2) (a symbolic link is never one) and listed once.
 * When owned is not NULL, it receives those of out held open by a
 * process whose name is a root daemon's (dockerd, containerd, libvirtd,
 * systemd...: a control socket whatever its path says, such as a
 * dockerd listening at /srv/x/d.sock), found through /proc/PID/fd of
 * those processes only.  Blocks briefly (reads /proc, stats a few dozen
 * paths).  Returns 0, or a negative vg_rc when /proc/net/unix cannot be
 * read (then out holds the well-known ones).
 */
int	vg_host_sockets_find(struct vg_strv *out, struct vg_strv *owned,
	    struct vg_err *e);

#endif
