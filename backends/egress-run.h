/*
 * egress-run.h - the egress proxy of a run (or a session) for local tasks
 * (docs/egress.md).
 *
 * vg_egress_run_start makes a network namespace with only loopback up,
 * creates the proxy's listening socket on 127.0.0.1 INSIDE it, and
 * starts a process in the host's namespace that serves that socket
 * (backends/egress-proxy.h): its connections out are made from the
 * host's network, and a task that joins the namespace
 * (vg_sandbox_set_egress) has no other way out.  Needs root (making a
 * network namespace a task of another uid can join).
 */
#ifndef VG_EGRESS_RUN_H
#define VG_EGRESS_RUN_H

#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"

struct vg_egress_run {
	pid_t		 pid;		/* the proxy, or 0 */
	int		 nsfd;		/* the namespace, or -1 */
	unsigned	 port;		/* the proxy's, on 127.0.0.1 there */
	char		*run_dir;	/* its log: RUN/egress.jsonl */
};

#define VG_EGRESS_RUN_INIT	{ 0, -1, 0, NULL }

/* Starts the proxy for nc's rules, logging to run_dir/egress.jsonl;
 * 0, or an error in e (not root, bad rules, a namespace refused). */
int	vg_egress_run_start(const struct vg_net_conf *nc, const char *run_dir,
	    struct vg_egress_run *r, struct vg_err *e);
/* Stops the proxy (SIGTERM, then waits), closes the namespace and says
 * in a warning how many connections the proxy refused, if any. */
void	vg_egress_run_stop(struct vg_egress_run *r);

/* Calls set for each variable that points tasks at r: HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY (socks5h: names resolved by the proxy), their
 * lower-case forms and NO_PROXY (loopback stays direct). */
void	vg_egress_run_env(const struct vg_egress_run *r,
	    void (*set)(void *arg, const char *name, const char *value),
	    void *arg);

#endif
