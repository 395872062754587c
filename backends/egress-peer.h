/*
 * egress-peer.h - who opened a connection to the egress proxy, as the
 * kernel tells it (sock_diag(7)): the control group of the client's
 * socket, which names the task (a task of an allow-list runs in a
 * cgroup of its own; backends/egress-run.h maps the id to the task).
 * Nothing the client sends goes into the answer.
 */
#ifndef VG_EGRESS_PEER_H
#define VG_EGRESS_PEER_H

#include <netinet/in.h>
#include <stdint.h>

/* A NETLINK_SOCK_DIAG socket in the calling thread's network namespace
 * (the tasks'), or -1 with errno. */
int	vg_egress_peer_open(void);

/*
 * Looks the client end of an accepted IPv4 connection up in diagfd's
 * namespace: peer is the address accept(2) gave, local the listening
 * socket's.  *cgid gets the cgroup v2 id of the client socket (0: the
 * kernel keeps none).  0, or -1 with errno (ENOENT: no such socket any
 * more).  Blocks for one netlink round trip; serialise calls on one
 * diagfd.
 */
int	vg_egress_peer_cgroup(int diagfd, const struct sockaddr_in *peer,
	    const struct sockaddr_in *local, uint64_t *cgid);

/*
 * The container whose cgroup is cgid: the kernel's path of that cgroup
 * (a file handle opened on the cgroup v2 mount, as root) holds the
 * engine's container id, 64 hex digits ("libpod-ID", "docker-ID.scope",
 * "/docker/ID"); the last such component is copied to id (65 bytes).
 * 0, or -1 with errno (ENOENT: no such cgroup, or no id in its path).
 */
int	vg_egress_peer_container(uint64_t cgid, char id[65]);

#endif
