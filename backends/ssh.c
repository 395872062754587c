/*
 * ssh.c - the ssh backend: runs each attempt on a remote host over SSH
 * with libssh, detached from the connection, so that a dropped network
 * costs neither the task nor a byte of its output.
 *
 * One attempt is: connect (host key checked against known_hosts, key or
 * agent auth, optionally through one jump host), copy stage_in files over
 * SFTP, start the task detached in its own remote directory (the script
 * of ssh-remote.c: setsid wrapper, 0600 env file, output and exit status
 * in files), then tail its stdout and stderr over SFTP from byte offsets
 * into the local task files and poll its status file.  When the
 * connection breaks, reconnect with backoff and resume from the sizes of
 * the local files.  At the end copy stage_out back and remove the remote
 * directory.
 *
 * The backend implements the blocking run(); backend.c forks the monitor
 * process that calls it.  The timeout holds on both sides: the remote
 * wrapper's watchdog kills the task's process group at the deadline even
 * while vigil is disconnected, and the monitor kills it over the
 * connection (a new one if need be) a second later.  SIGTERM or SIGINT to
 * the monitor kills the remote process group (SIGTERM, then SIGKILL after
 * kill_grace, escalated by a detached remote helper) and ends the attempt
 * as CANCELLED, or TIMEOUT when the deadline was what stopped it.
 *
 * libssh 0.10 has no ProxyJump of its own: the jump host is a second
 * session whose direct-tcpip channel is bridged to a socketpair by a small
 * thread, and the target session runs over the other end
 * (SSH_OPTIONS_FD).  No ssh binary and no shell are involved locally;
 * ~/.ssh/config is not read, the manifest says everything.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "common/log.h"
#include "common/path.h"
#include "backends/ssh-lib.h"
#include "backends/gpu.h"
#include "common/str.h"
#include "backends/backend.h"
#include "backends/ssh-remote.h"
#include "backends/ssh.h"
#include "runner/manifest/schema-table.h"

/* Bytes per SFTP read or write: OpenSSH's sftp-server answers reads of
 * up to 256 KiB; 64 KiB keeps the monitor's memory small. */
#define SSH_CHUNK		(64u << 10)
/* Status polling: fast at first (short tasks), slower when idle. */
#define SSH_POLL_MIN		0.005
#define SSH_POLL_MAX		1.0
/* Reconnect backoff, and how long to keep trying before giving up. */
#define SSH_BACKOFF_MIN		0.2
#define SSH_BACKOFF_MAX		5.0
#define SSH_RECONNECT_WINDOW	600.0
/* After a kill: how long past kill_grace to wait for the status. */
#define SSH_DRAIN_SLACK		15.0
/* The local deadline comes this long after the remote watchdog's. */
#define SSH_LOCAL_SLACK		1.0
/* Output of the small remote scripts we keep (error messages). */
#define SSH_SCRIPT_OUT_MAX	4096
/* Depth of directories stage_in and stage_out copy. */
#define SSH_STAGE_DEPTH		32

static volatile sig_atomic_t ssh_stop;

/* A connection: the target session and, with a jump host, the bridge. */
struct ssh_conn {
	ssh_session		 s;
	sftp_session		 sftp;
	sftp_file		 f[3];		/* [1] out, [2] err */
	ssh_session		 js;		/* jump session */
	ssh_channel		 jch;		/* its direct-tcpip channel */
	int			 sv[2];		/* [0] target side, [1] pump */
	pthread_t		 pump;
	int			 pumping;
	volatile int		 pump_quit;
};

/* Everything one attempt needs across reconnects. */
struct ssh_ctx {
	const struct vg_ssh_conf *c;
	char			*user;		/* remote user */
	char			*identity;	/* ~ expanded, or NULL */
	char			*known_hosts;	/* ~ expanded, or NULL */
	char			*kh_shown;	/* for messages */
	struct vg_ssh_jump	 jump;
	int			 has_jump;
	char			*dir;		/* attempt dir, remote spelling */
	char			*sdir;		/* same, SFTP spelling */
	int			 fd[3];		/* local [1] stdout, [2] stderr */
	struct ssh_conn		 conn;
	int			 up;		/* conn usable */
	char			 last[VG_ERR_MSG_MAX];	/* last conn error */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* Sleeps s seconds; a signal cuts it short. */
static void
nap(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	(void)nanosleep(&ts, NULL);
}

/* Expands a leading ~/ with $HOME (or the passwd entry).  Caller frees. */
static char *
expand_home(const char *p)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (p == NULL)
		return NULL;
	if (p[0] != '~' || (p[1] != '/' && p[1] != '\0'))
		return vg_xstrdup(p);
	if (home == NULL || *home == '\0') {
		pw = getpwuid(getuid());
		home = pw != NULL ? pw->pw_dir : "/";
	}
	return vg_xasprintf("%s%s", home, p + 1);
}

/* The name of the user running vigil. */
static char *
local_user(void)
{
	struct passwd *pw = getpwuid(getuid());
	const char *u = getenv("USER");

	if (pw != NULL)
		return vg_xstrdup(pw->pw_name);
	return vg_xstrdup(u != NULL ? u : "root");
}

/* ------------------------------------------------------------------ */
/* Jump host bridge                                                    */
/* ------------------------------------------------------------------ */

/* Copies bytes between the jump channel and the socketpair until either
 * side ends; runs on its own thread and owns js and jch meanwhile. */
static void *
pump_main(void *arg)
{
	struct ssh_conn *c = arg;
	struct pollfd pfd[2];
	char buf[SSH_CHUNK / 2];
	ssize_t n;
	int r;

	pfd[0].fd = c->sv[1];
	pfd[0].events = POLLIN;
	pfd[1].fd = ssh_get_fd(c->js);
	pfd[1].events = POLLIN;
	while (!c->pump_quit) {
		r = ssh_channel_read_nonblocking(c->jch, buf, sizeof(buf), 0);
		if (r == SSH_ERROR)
			break;
		if (r > 0) {
			if (vg_ssh_write_all(c->sv[1], buf, (size_t)r, NULL)
			    != 0)
				break;
			continue;
		}
		if (ssh_channel_is_eof(c->jch))
			break;
		if (poll(pfd, 2, 200) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(c->sv[1], buf, sizeof(buf));
			if (n <= 0)
				break;
			if (ssh_channel_write(c->jch, buf, (uint32_t)n) !=
			    (int)n)
				break;
		}
	}
	/* The target session sees the end as EOF on its socket. */
	shutdown(c->sv[1], SHUT_RDWR);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Connecting                                                          */
/* ------------------------------------------------------------------ */

/* Maps libssh's known_hosts state to ssh-remote's. */
static enum vg_ssh_known
known_state(enum ssh_known_hosts_e st)
{
	switch (st) {
	case SSH_KNOWN_HOSTS_OK:	return VG_SSH_KNOWN_OK;
	case SSH_KNOWN_HOSTS_CHANGED:	return VG_SSH_KNOWN_CHANGED;
	case SSH_KNOWN_HOSTS_OTHER:	return VG_SSH_KNOWN_OTHER;
	case SSH_KNOWN_HOSTS_UNKNOWN:	return VG_SSH_KNOWN_UNKNOWN;
	case SSH_KNOWN_HOSTS_NOT_FOUND:	return VG_SSH_KNOWN_NOFILE;
	case SSH_KNOWN_HOSTS_ERROR:
	default:			return VG_SSH_KNOWN_ERROR;
	}
}

/* Checks the server's host key of session s (host:port) against
 * known_hosts; with accept-new, adds an unknown key and says so. */
static int
verify_host(struct ssh_ctx *x, ssh_session s, const char *host, int port,
    struct vg_err *e)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp = NULL, name[300];
	const char *type = "unknown";
	enum vg_ssh_hk v;
	int rc = 0, accept_new;

	if (ssh_get_server_publickey(s, &key) != SSH_OK)
		return vg_err_set(e, VG_EAGAIN, "ssh: %s:%d sent no host key: "
		    "%s", host, port, ssh_get_error(s));
	type = ssh_key_type_to_char(ssh_key_type(key));
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash,
	    &hlen) == 0)
		fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash,
		    hlen);
	accept_new = x->c->host_key != NULL &&
	    strcmp(x->c->host_key, "accept-new") == 0;
	v = vg_ssh_hostkey_verdict(known_state(ssh_session_is_known_server(s)),
	    accept_new, host, port, type ? type : "unknown",
	    fp ? fp : "SHA256:?", x->kh_shown, e);
	if (v == VG_SSH_HK_REFUSE) {
		rc = e->rc;
	} else if (v == VG_SSH_HK_ADD) {
		vg_ssh_host_name(name, sizeof(name), host, port);
		if (ssh_session_update_known_hosts(s) != SSH_OK)
			rc = vg_err_set(e, VG_EBACKEND, "ssh: cannot add the "
			    "host key of '%s' to '%s': %s", name,
			    x->kh_shown, ssh_get_error(s));
		else
			fprintf(stderr, "vigil: ssh: added host key of '%s' "
			    "(%s %s) to '%s' (ssh.host_key: accept-new)\n",
			    name, type ? type : "unknown", fp ? fp : "?",
			    x->kh_shown);
	}
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

/* Authenticates session s as user: the identity file, then the agent
 * (or, without an identity, the default keys and the agent). */
static int
authenticate(struct ssh_ctx *x, ssh_session s, const char *user,
    const char *host, struct vg_err *e)
{
	ssh_key key = NULL;
	const char *agent = getenv("SSH_AUTH_SOCK");
	int r;

	if (x->identity != NULL) {
		if (ssh_pki_import_privkey_file(x->identity, NULL, NULL, NULL,
		    &key) != SSH_OK) {
			if (agent == NULL || *agent == '\0')
				return vg_err_set(e, VG_EBACKEND, "ssh: cannot "
				    "load identity '%s' (missing, unreadable, "
				    "or protected by a passphrase: load it "
				    "into ssh-agent instead)", x->identity);
		} else {
			r = ssh_userauth_publickey(s, NULL, key);
			ssh_key_free(key);
			if (r == SSH_AUTH_SUCCESS)
				return 0;
			if (r == SSH_AUTH_ERROR)
				return vg_err_set(e, VG_EAGAIN, "ssh: "
				    "authenticating to %s: %s", host,
				    ssh_get_error(s));
		}
	}
	if (agent != NULL && *agent != '\0') {
		r = ssh_userauth_agent(s, NULL);
		if (r == SSH_AUTH_SUCCESS)
			return 0;
	}
	if (x->identity == NULL) {
		r = ssh_userauth_publickey_auto(s, NULL, NULL);
		if (r == SSH_AUTH_SUCCESS)
			return 0;
		if (r == SSH_AUTH_ERROR)
			return vg_err_set(e, VG_EAGAIN, "ssh: authenticating "
			    "to %s: %s", host, ssh_get_error(s));
	}
	return vg_err_set(e, VG_EBACKEND, "ssh: %s@%s refused every key "
	    "offered (%s%s%s%s)", user, host, x->identity ? "identity '" :
	    "default keys in ~/.ssh", x->identity ? x->identity : "",
	    x->identity ? "'" : "", agent != NULL && *agent != '\0' ?
	    " and ssh-agent" : ", no ssh-agent");
}

/* A new session to host:port as user with the manifest's options. */
static ssh_session
new_session(struct ssh_ctx *x, const char *host, int port, const char *user,
    int fd, struct vg_err *e)
{
	ssh_session s = ssh_new();
	unsigned int uport = (unsigned int)port;
	long timeout = x->c->connect_timeout > 0 ? x->c->connect_timeout : 10;
	bool no = false;
	int one = 1;

	if (s == NULL) {
		const char *why = vg_ssh_lib_error();

		vg_err_set(e, VG_ENOMEM, "ssh: %s", why != NULL ? why :
		    "cannot create a session");
		return NULL;
	}
	if (ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_HOST, host) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PORT, &uport) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_USER, user) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) != 0 ||
	    ssh_options_set(s, SSH_OPTIONS_NODELAY, &one) != 0 ||
	    (x->known_hosts != NULL && ssh_options_set(s,
	    SSH_OPTIONS_KNOWNHOSTS, x->known_hosts) != 0) ||
	    (fd >= 0 && ssh_options_set(s, SSH_OPTIONS_FD, &fd) != 0)) {
		vg_err_set(e, VG_EINVAL, "ssh: bad option for %s:%d: %s",
		    host, port, ssh_get_error(s));
		ssh_free(s);
		return NULL;
	}
	return s;
}

/* Turns on TCP keepalives at ssh.keepalive seconds, so that a silent
 * network drop ends a blocked read instead of hanging it. */
static void
tcp_keepalive(ssh_session s, int secs)
{
	int fd = ssh_get_fd(s), one = 1, cnt = 3;

	if (fd < 0 || secs <= 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof(secs));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &secs, sizeof(secs));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* Closes and frees everything of c; safe on a partly open c. */
static void
conn_close(struct ssh_conn *c)
{
	int i;

	for (i = 1; i <= 2; i++)
		if (c->f[i] != NULL) {
			sftp_close(c->f[i]);
			c->f[i] = NULL;
		}
	if (c->sftp != NULL) {
		sftp_free(c->sftp);
		c->sftp = NULL;
	}
	if (c->s != NULL) {
		ssh_disconnect(c->s);
		ssh_free(c->s);
		c->s = NULL;
	}
	if (c->pumping) {
		c->pump_quit = 1;
		shutdown(c->sv[1], SHUT_RDWR);
		pthread_join(c->pump, NULL);
		c->pumping = 0;
	}
	if (c->jch != NULL) {
		ssh_channel_close(c->jch);
		ssh_channel_free(c->jch);
		c->jch = NULL;
	}
	if (c->js != NULL) {
		ssh_disconnect(c->js);
		ssh_free(c->js);
		c->js = NULL;
	}
	for (i = 0; i < 2; i++)
		if (c->sv[i] >= 0) {
			close(c->sv[i]);
			c->sv[i] = -1;
		}
	c->pump_quit = 0;
}

/* Connects the jump host and opens the bridge; sets *fd to the socket
 * the target session runs over. */
static int
open_jump(struct ssh_ctx *x, struct ssh_conn *c, int *fd, struct vg_err *e)
{
	const char *user = x->jump.user != NULL ? x->jump.user : x->user;
	int rc;

	c->js = new_session(x, x->jump.host, x->jump.port, user, -1, e);
	if (c->js == NULL)
		return e->rc;
	if (ssh_connect(c->js) != SSH_OK)
		return vg_err_set(e, VG_EAGAIN, "ssh: connecting to jump host "
		    "%s:%d: %s", x->jump.host, x->jump.port,
		    ssh_get_error(c->js));
	tcp_keepalive(c->js, x->c->keepalive);
	if ((rc = verify_host(x, c->js, x->jump.host, x->jump.port, e)) != 0)
		return rc;
	if ((rc = authenticate(x, c->js, user, x->jump.host, e)) != 0)
		return rc;
	if ((c->jch = ssh_channel_new(c->js)) == NULL ||
	    ssh_channel_open_forward(c->jch, x->c->host, x->c->port,
	    "127.0.0.1", 0) != SSH_OK)
		return vg_err_set(e, VG_EAGAIN, "ssh: jump host %s cannot "
		    "reach %s:%d: %s", x->jump.host, x->c->host, x->c->port,
		    ssh_get_error(c->js));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sv) != 0) {
		c->sv[0] = c->sv[1] = -1;
		return vg_err_errno(e, "ssh: socketpair");
	}
	if (pthread_create(&c->pump, NULL, pump_main, c) != 0)
		return vg_err_set(e, VG_EBACKEND, "ssh: cannot start the jump "
		    "host bridge");
	c->pumping = 1;
	*fd = c->sv[0];
	return 0;
}

/*
 * Opens a connection and an SFTP session.  Returns 0; VG_EAGAIN for
 * trouble worth a retry (network, server going away); VG_EDENIED for a
 * refused host key; VG_EBACKEND for what a retry cannot mend.
 */
static int
conn_open(struct ssh_ctx *x, struct vg_err *e)
{
	struct ssh_conn *c = &x->conn;
	int rc, fd = -1;

	memset(c, 0, sizeof(*c));
	c->sv[0] = c->sv[1] = -1;
	if (x->has_jump && (rc = open_jump(x, c, &fd, e)) != 0)
		goto fail;
	if ((c->s = new_session(x, x->c->host, x->c->port, x->user, fd,
	    e)) == NULL) {
		rc = e->rc;
		goto fail;
	}
	if (ssh_connect(c->s) != SSH_OK) {
		rc = vg_err_set(e, VG_EAGAIN, "ssh: connecting to %s:%d: %s",
		    x->c->host, x->c->port, ssh_get_error(c->s));
		goto fail;
	}
	if (fd < 0)
		tcp_keepalive(c->s, x->c->keepalive);
	vg_debug("ssh: connected to %s:%d", x->c->host, x->c->port);
	if ((rc = verify_host(x, c->s, x->c->host, x->c->port, e)) != 0 ||
	    (rc = authenticate(x, c->s, x->user, x->c->host, e)) != 0)
		goto fail;
	if ((c->sftp = sftp_new(c->s)) == NULL || sftp_init(c->sftp) != 0) {
		rc = vg_err_set(e, VG_EAGAIN, "ssh: starting SFTP on %s: %s",
		    x->c->host, ssh_get_error(c->s));
		goto fail;
	}
	vg_debug("ssh: authenticated, SFTP up");
	x->up = 1;
	return 0;
fail:
	conn_close(c);
	snprintf(x->last, sizeof(x->last), "%s", e->msg);
	return rc;
}

/*
 * Reconnects with backoff until it works, a permanent error, or
 * until_mono passes (VG_ETIMEOUT with the last error).  With stoppable,
 * a stop request ends the wait too (VG_ECANCELED).
 */
static int
reconnect(struct ssh_ctx *x, double until_mono, int stoppable,
    struct vg_err *e)
{
	double delay = SSH_BACKOFF_MIN;
	struct vg_err le;
	int rc;

	if (x->up) {
		conn_close(&x->conn);
		x->up = 0;
	}
	for (;;) {
		if (stoppable && ssh_stop)
			return VG_ECANCELED;
		vg_err_init(&le);
		rc = conn_open(x, &le);
		if (rc == 0)
			return 0;
		if (rc != VG_EAGAIN)
			return vg_err_set(e, rc, "%s", le.msg);
		if (vg_mono() + delay > until_mono)
			return vg_err_set(e, VG_ETIMEOUT, "%s (gave up "
			    "reconnecting)", le.msg);
		nap(delay);
		delay = delay * 2 > SSH_BACKOFF_MAX ? SSH_BACKOFF_MAX :
		    delay * 2;
	}
}

/* ------------------------------------------------------------------ */
/* Remote scripts                                                      */
/* ------------------------------------------------------------------ */

/* Appends up to SSH_SCRIPT_OUT_MAX bytes of one stream of ch to out. */
static int
read_stream(ssh_channel ch, int is_stderr, struct vg_buf *out)
{
	char buf[1024];
	int n;

	for (;;) {
		n = ssh_channel_read(ch, buf, sizeof(buf), is_stderr);
		if (n == SSH_ERROR)
			return -1;
		if (n == 0)
			return 0;
		if (out != NULL && out->len < SSH_SCRIPT_OUT_MAX)
			vg_buf_add(out, buf, (size_t)n);
	}
}

/*
 * Runs command on the remote host (through the user's login shell) with
 * script, when not NULL, on its standard input.  Sets *status to its exit
 * status; out and err (may be NULL) get its output.  VG_EAGAIN when the
 * connection failed.
 */
static int
remote_exec(struct ssh_ctx *x, const char *command, const char *script,
    struct vg_buf *out, struct vg_buf *err, int *status, struct vg_err *e)
{
	ssh_session s = x->conn.s;
	ssh_channel ch;
	size_t len = script != NULL ? strlen(script) : 0, off = 0;
	int n, rc = 0;

	*status = -1;
	if ((ch = ssh_channel_new(s)) == NULL)
		return vg_err_set(e, VG_EAGAIN, "ssh: %s", ssh_get_error(s));
	if (ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, command) != SSH_OK) {
		rc = vg_err_set(e, VG_EAGAIN, "ssh: starting a remote shell: "
		    "%s", ssh_get_error(s));
		goto out;
	}
	while (off < len) {
		n = ssh_channel_write(ch, script + off, (uint32_t)(len - off >
		    SSH_CHUNK ? SSH_CHUNK : len - off));
		if (n <= 0) {
			rc = vg_err_set(e, VG_EAGAIN, "ssh: writing to the "
			    "remote shell: %s", ssh_get_error(s));
			goto out;
		}
		off += (size_t)n;
	}
	if (ssh_channel_send_eof(ch) != SSH_OK || read_stream(ch, 0, out) != 0
	    || read_stream(ch, 1, err) != 0) {
		rc = vg_err_set(e, VG_EAGAIN, "ssh: reading from the remote "
		    "shell: %s", ssh_get_error(s));
		goto out;
	}
	*status = ssh_channel_get_exit_status(ch);
out:
	ssh_channel_close(ch);
	ssh_channel_free(ch);
	return rc;
}

/* Trims trailing white space of b in place; returns its text. */
static const char *
trimmed(struct vg_buf *b)
{
	while (b->len > 0 && (b->data[b->len - 1] == '\n' ||
	    b->data[b->len - 1] == ' ' || b->data[b->len - 1] == '\r'))
		b->data[--b->len] = '\0';
	return vg_buf_str(b);
}

/* ------------------------------------------------------------------ */
/* SFTP: staging and tailing                                           */
/* ------------------------------------------------------------------ */

/* SFTP error text of the connection. */
static const char *
sftp_msg(struct ssh_ctx *x)
{
	if (x->conn.sftp != NULL) {
		switch (sftp_get_error(x->conn.sftp)) {
		case SSH_FX_NO_SUCH_FILE:	return "no such file";
		case SSH_FX_PERMISSION_DENIED:	return "permission denied";
		case SSH_FX_FAILURE:		return "failure";
		default:			break;
		}
	}
	return ssh_get_error(x->conn.s);
}

/* True when the last SFTP failure is the server's answer, not the
 * connection's. */
static int
sftp_answered(struct ssh_ctx *x)
{
	int err = sftp_get_error(x->conn.sftp);

	return err != SSH_FX_OK && err != SSH_FX_CONNECTION_LOST &&
	    err != SSH_FX_NO_CONNECTION && ssh_is_connected(x->conn.s);
}

/* True when path exists on the remote side and is a directory. */
static int
sftp_is_dir(struct ssh_ctx *x, const char *path)
{
	sftp_attributes a;
	int dir;

	if ((a = sftp_stat(x->conn.sftp, path)) == NULL)
		return 0;
	dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
	sftp_attributes_free(a);
	return dir;
}

/* mkdir -p over SFTP (0700 for what it creates). */
/*
 * An existing remote directory on the way to a task's remote directory:
 * refused when another remote user could change what is in it (a
 * symbolic link that is not root's; a directory others may write that
 * is not sticky), with its owner and mode named.
 */
static int
remote_dir_check(struct ssh_ctx *x, const char *p, sftp_attributes a,
    struct vg_err *e)
{
	(void)x;
	if (a->type == SSH_FILEXFER_TYPE_SYMLINK && a->uid != 0)
		return vg_err_set(e, VG_EDENIED, "ssh: remote '%s' is a "
		    "symbolic link owned by uid %lu; vigil follows only "
		    "root's links to its remote directory", p,
		    (unsigned long)a->uid);
	if (a->type == SSH_FILEXFER_TYPE_DIRECTORY &&
	    (a->permissions & 0022) != 0 && (a->permissions & 01000) == 0)
		return vg_err_set(e, VG_EDENIED, "ssh: remote directory '%s' "
		    "(owner uid %lu, mode %04lo) may be written by others and "
		    "is not sticky: anyone could replace what vigil makes "
		    "there; choose another remote_dir", p,
		    (unsigned long)a->uid,
		    (unsigned long)(a->permissions & 07777));
	return 0;
}

static int
sftp_mkdir_p(struct ssh_ctx *x, const char *path, struct vg_err *e)
{
	char *p = vg_xstrdup(path), *q;
	sftp_attributes a;
	int rc = 0;

	for (q = p + 1; ; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		if (q[-1] != '/') {
			char save = *q;

			*q = '\0';
			/* A directory another remote user could change is
			 * not adopted: a link on the way that is not root's,
			 * or one others may write that is not sticky. */
			if ((a = sftp_lstat(x->conn.sftp, p)) != NULL) {
				rc = remote_dir_check(x, p, a, e);
				sftp_attributes_free(a);
				if (rc != 0)
					break;
			} else if (sftp_mkdir(x->conn.sftp, p, 0700) != 0 &&
			    !sftp_is_dir(x, p)) {
				/* (another task of the run may have made it
				 * between the stat and the mkdir) */
				rc = vg_err_set(e, sftp_answered(x) ?
				    VG_EBACKEND : VG_EAGAIN, "ssh: creating "
				    "remote directory '%s': %s", p,
				    sftp_msg(x));
				break;
			}
			*q = save;
		}
		if (*q == '\0')
			break;
	}
	free(p);
	return rc;
}

/* Uploads local path src to remote dst (a file, or a tree). */
static int
put_tree(struct ssh_ctx *x, const char *src, const char *dst, int depth,
    struct vg_err *e)
{
	struct stat st;
	char buf[SSH_CHUNK];
	sftp_file f;
	ssize_t n;
	int fd, rc = 0;

	if (lstat(src, &st) != 0)
		return vg_err_errno(e, "ssh.stage_in: '%s'", src);
	if (S_ISDIR(st.st_mode)) {
		struct dirent **names = NULL;
		int i, cnt;

		if (depth >= SSH_STAGE_DEPTH)
			return vg_err_set(e, VG_ELIMIT, "ssh.stage_in: '%s': "
			    "deeper than %d levels", src, SSH_STAGE_DEPTH);
		if (sftp_mkdir(x->conn.sftp, dst, st.st_mode & 0777) != 0 &&
		    sftp_get_error(x->conn.sftp) != SSH_FX_FILE_ALREADY_EXISTS
		    && sftp_get_error(x->conn.sftp) != SSH_FX_FAILURE)
			return vg_err_set(e, VG_EAGAIN, "ssh.stage_in: creating "
			    "'%s': %s", dst, sftp_msg(x));
		if ((cnt = scandir(src, &names, NULL, alphasort)) < 0)
			return vg_err_errno(e, "ssh.stage_in: '%s'", src);
		for (i = 0; i < cnt; i++) {
			char *s2, *d2;

			if (rc == 0 && strcmp(names[i]->d_name, ".") != 0 &&
			    strcmp(names[i]->d_name, "..") != 0) {
				s2 = vg_path_join(src, names[i]->d_name);
				d2 = vg_xasprintf("%s/%s", dst,
				    names[i]->d_name);
				rc = put_tree(x, s2, d2, depth + 1, e);
				free(s2);
				free(d2);
			}
			free(names[i]);
		}
		free(names);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
		return vg_err_set(e, VG_EINVAL, "ssh.stage_in: '%s' is neither "
		    "a file nor a directory", src);
	if ((fd = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return vg_err_errno(e, "ssh.stage_in: '%s'", src);
	f = sftp_open(x->conn.sftp, dst, O_WRONLY | O_CREAT | O_TRUNC,
	    st.st_mode & 0777);
	if (f == NULL) {
		rc = vg_err_set(e, sftp_answered(x) ? VG_EBACKEND : VG_EAGAIN,
		    "ssh.stage_in: creating '%s': %s", dst, sftp_msg(x));
		close(fd);
		return rc;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (sftp_write(f, buf, (size_t)n) != n) {
			rc = vg_err_set(e, VG_EAGAIN, "ssh.stage_in: writing "
			    "'%s': %s", dst, sftp_msg(x));
			break;
		}
	if (n < 0 && rc == 0)
		rc = vg_err_errno(e, "ssh.stage_in: reading '%s'", src);
	sftp_close(f);
	close(fd);
	return rc;
}

/* Downloads remote src to local dst (a file, or a tree). */
static int
get_tree(struct ssh_ctx *x, const char *src, const char *dst, int depth,
    struct vg_err *e)
{
	char buf[SSH_CHUNK];
	sftp_attributes a;
	sftp_file f;
	ssize_t n;
	int fd, rc = 0;

	if ((a = sftp_lstat(x->conn.sftp, src)) == NULL)
		return vg_err_set(e, sftp_answered(x) ? VG_ENOENT : VG_EAGAIN,
		    "ssh.stage_out: '%s': %s", src, sftp_msg(x));
	if (a->type == SSH_FILEXFER_TYPE_DIRECTORY) {
		sftp_dir d;
		sftp_attributes ent;

		sftp_attributes_free(a);
		if (depth >= SSH_STAGE_DEPTH)
			return vg_err_set(e, VG_ELIMIT, "ssh.stage_out: '%s': "
			    "deeper than %d levels", src, SSH_STAGE_DEPTH);
		if (mkdir(dst, 0755) != 0 && errno != EEXIST)
			return vg_err_errno(e, "ssh.stage_out: '%s'", dst);
		if ((d = sftp_opendir(x->conn.sftp, src)) == NULL)
			return vg_err_set(e, VG_EAGAIN, "ssh.stage_out: '%s': "
			    "%s", src, sftp_msg(x));
		while (rc == 0 && (ent = sftp_readdir(x->conn.sftp, d)) !=
		    NULL) {
			if (strcmp(ent->name, ".") != 0 &&
			    strcmp(ent->name, "..") != 0 &&
			    strchr(ent->name, '/') == NULL) {
				char *s2 = vg_xasprintf("%s/%s", src,
				    ent->name);
				char *d2 = vg_path_join(dst, ent->name);

				rc = get_tree(x, s2, d2, depth + 1, e);
				free(s2);
				free(d2);
			}
			sftp_attributes_free(ent);
		}
		if (rc == 0 && !sftp_dir_eof(d))
			rc = vg_err_set(e, VG_EAGAIN, "ssh.stage_out: listing "
			    "'%s': %s", src, sftp_msg(x));
		sftp_closedir(d);
		return rc;
	}
	if (a->type != SSH_FILEXFER_TYPE_REGULAR) {
		sftp_attributes_free(a);
		return vg_err_set(e, VG_EINVAL, "ssh.stage_out: '%s' is neither "
		    "a file nor a directory", src);
	}
	sftp_attributes_free(a);
	if ((f = sftp_open(x->conn.sftp, src, O_RDONLY, 0)) == NULL)
		return vg_err_set(e, VG_EAGAIN, "ssh.stage_out: '%s': %s", src,
		    sftp_msg(x));
	if ((fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0) {
		rc = vg_err_errno(e, "ssh.stage_out: '%s'", dst);
		sftp_close(f);
		return rc;
	}
	while ((n = sftp_read(f, buf, sizeof(buf))) > 0)
		if ((rc = vg_ssh_write_all(fd, buf, (size_t)n, e)) != 0)
			break;
	if (n < 0 && rc == 0)
		rc = vg_err_set(e, VG_EAGAIN, "ssh.stage_out: reading '%s': %s",
		    src, sftp_msg(x));
	close(fd);
	sftp_close(f);
	return rc;
}

/* The last path element of p (p itself without '/'). */
static const char *
base_name(const char *p)
{
	const char *s;
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	for (s = p + n; s > p && s[-1] != '/'; s--)
		;
	return s;
}

/*
 * Reads what is new in stream i (1 out, 2 err) from its offset (the size
 * of the local file) to the remote end of file.  Returns 0, VG_EAGAIN
 * when the connection failed, VG_EIO when the local write failed.
 */
static int
tail_stream(struct ssh_ctx *x, int i, char *buf, struct vg_err *e)
{
	static const char *const names[3] = { NULL, "out", "err" };
	struct ssh_conn *c = &x->conn;
	uint64_t off;
	ssize_t n;
	char *path;
	int rc;

	if (c->f[i] == NULL) {
		path = vg_xasprintf("%s/%s", x->sdir, names[i]);
		c->f[i] = sftp_open(c->sftp, path, O_RDONLY, 0);
		free(path);
		if (c->f[i] == NULL) {
			/* Not there yet: the wrapper has not started. */
			if (sftp_answered(x))
				return 0;
			return vg_err_set(e, VG_EAGAIN, "ssh: opening remote "
			    "%s: %s", names[i], sftp_msg(x));
		}
	}
	if ((rc = vg_ssh_resume_offset(x->fd[i], &off, e)) != 0)
		return rc;
	if (sftp_seek64(c->f[i], off) != 0)
		return vg_err_set(e, VG_EAGAIN, "ssh: seeking remote %s",
		    names[i]);
	while ((n = sftp_read(c->f[i], buf, SSH_CHUNK)) > 0) {
		if ((rc = vg_ssh_write_all(x->fd[i], buf, (size_t)n, e)) != 0)
			return rc;
		if (ssh_stop)
			break;
	}
	if (n < 0)
		return vg_err_set(e, VG_EAGAIN, "ssh: reading remote %s: %s",
		    names[i], sftp_msg(x));
	return 0;
}

/* Reads a small remote file of the attempt dir; 1 when it exists, 0 when
 * not, VG_EAGAIN on connection trouble. */
static int
read_small(struct ssh_ctx *x, const char *name, char *out, size_t size,
    size_t *len, struct vg_err *e)
{
	char *path = vg_xasprintf("%s/%s", x->sdir, name);
	sftp_file f = sftp_open(x->conn.sftp, path, O_RDONLY, 0);
	ssize_t n;

	free(path);
	*len = 0;
	if (f == NULL) {
		if (sftp_answered(x))
			return 0;
		return vg_err_set(e, VG_EAGAIN, "ssh: reading remote %s: %s",
		    name, sftp_msg(x));
	}
	n = sftp_read(f, out, size);
	sftp_close(f);
	if (n < 0)
		return vg_err_set(e, VG_EAGAIN, "ssh: reading remote %s: %s",
		    name, sftp_msg(x));
	*len = (size_t)n;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

/* Reports what the backend needs, for `vigil doctor`. */
static void
ssh_probe(struct vg_buf *out)
{
	const char *agent = getenv("SSH_AUTH_SOCK");
	const char *v = ssh_version(0);

	if (v == NULL) {
		vg_buf_printf(out, "ssh: missing (%s)\n", vg_ssh_lib_error());
		return;
	}
	/* "0.10.6/openssl/zlib": the version is what matters here. */
	vg_buf_printf(out, "ssh: ok (libssh %.*s; ssh-agent %s)\n",
	    (int)strcspn(v, "/"), v, agent != NULL && *agent != '\0' ?
	    "reachable through SSH_AUTH_SOCK" : "not set (SSH_AUTH_SOCK "
	    "unset: key files only)");
}

/* Longest wait for ssh.host's port in host_check (seconds): a check,
 * not a run, so it gives up well before ssh.connect_timeout would. */
#define HOST_CHECK_CONNECT	3

/* True when a TCP connection to host:port opens within secs; else
 * false with why (resolution or connect error) filled. */
static int
port_open(const char *host, int port, int secs, char *why, size_t size)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct pollfd pfd;
	char serv[16];
	socklen_t len;
	int fd, r, err = ETIMEDOUT, ok = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	snprintf(serv, sizeof(serv), "%d", port);
	if ((r = getaddrinfo(host, serv, &hints, &res)) != 0) {
		snprintf(why, size, "%s", gai_strerror(r));
		return 0;
	}
	for (ai = res; ai != NULL && !ok; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			ok = 1;
		else if (errno != EINPROGRESS)
			err = errno;
		else {
			pfd.fd = fd;
			pfd.events = POLLOUT;
			len = sizeof(r);
			if (poll(&pfd, 1, secs * 1000) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &r,
			    &len) == 0)
				ok = r == 0, err = r;
			else
				err = ETIMEDOUT;
		}
		close(fd);
	}
	freeaddrinfo(res);
	if (!ok)
		snprintf(why, size, "%s", strerror(err));
	return ok;
}

/* True when libssh would find a key: ssh.identity, an agent, or one of
 * the default ~/.ssh/id_* files libssh tries. */
static int
have_key(const struct vg_ssh_conf *c)
{
	static const char *const ids[] = { "~/.ssh/id_ed25519",
		"~/.ssh/id_ecdsa", "~/.ssh/id_rsa", NULL };
	const char *agent = getenv("SSH_AUTH_SOCK");
	char *p;
	size_t i;
	int ok = 0;

	if (c->identity != NULL || (agent != NULL && *agent != '\0'))
		return 1;
	for (i = 0; ids[i] != NULL && !ok; i++) {
		p = expand_home(ids[i]);
		ok = access(p, R_OK) == 0;
		free(p);
	}
	return ok;
}

/* plugin op host_check: libssh loads, a key is at hand and ssh.host
 * answers on its port (directly; through ssh.proxy_jump it is the jump
 * host's to reach). */
static void
ssh_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	const struct vg_ssh_conf *c = vg_ssh_of(m);
	int port = c->port > 0 ? c->port : 22;
	char err[128];

	if (ssh_version(0) == NULL) {
		vg_strv_pushf(why, "ssh: %s", vg_ssh_lib_error());
		return;
	}
	if (!have_key(c))
		vg_strv_pushf(why, "ssh: no key: no ssh.identity, no agent "
		    "(SSH_AUTH_SOCK unset) and no ~/.ssh/id_ed25519, "
		    "id_ecdsa or id_rsa (set ssh.identity or start "
		    "ssh-agent)");
	if (c->proxy_jump == NULL && c->host != NULL &&
	    !port_open(c->host, port, HOST_CHECK_CONNECT, err, sizeof(err)))
		vg_strv_pushf(why, "ssh: host '%s' port %d is unreachable "
		    "from here (%s; checked for %d s)", c->host, port, err,
		    HOST_CHECK_CONNECT);
}

/* Checks the ssh section beyond its schema. */
static int
ssh_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_ssh_conf *c = vg_ssh_of(m);
	struct vg_loc loc;
	struct vg_ssh_jump j;
	struct vg_resources peak;
	struct vg_err e;
	struct stat st;
	char *p;
	size_t i;
	int bad = 0;

	vg_err_init(&e);
	if (c->host == NULL || *c->host == '\0') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "ssh.host"),
		    "ssh.host: required by backend 'ssh' "
		    "(the remote host name or address)");
		bad = 1;
	} else if (c->host[0] == '-' || strpbrk(c->host, " \t\n@/") != NULL) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "ssh.host"),
		    "ssh.host: '%s' is not a host name or "
		    "address (set the user in ssh.user, the port in "
		    "ssh.port)", c->host);
		bad = 1;
	}
	if (c->proxy_jump != NULL) {
		if (vg_ssh_jump_parse(c->proxy_jump, &j, &e) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "ssh.proxy_jump"), "%s", e.msg);
			bad = 1;
		}
		vg_ssh_jump_release(&j);
	}
	if (c->identity != NULL) {
		p = expand_home(c->identity);
		if (access(p, R_OK) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "ssh.identity"), "ssh.identity: '%s': %s", p,
			    strerror(errno));
			bad = 1;
		}
		free(p);
	}
	if (c->known_hosts != NULL && (c->host_key == NULL ||
	    strcmp(c->host_key, "accept-new") != 0)) {
		p = expand_home(c->known_hosts);
		if (stat(p, &st) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "ssh.known_hosts"), "ssh.known_hosts: '%s': %s "
			    "(with ssh.host_key: strict every host key would "
			    "be refused)", p, strerror(errno));
			bad = 1;
		}
		free(p);
	}
	vg_expand_peak(m, &peak);
	if (peak.gpus > 0 && c->gpus.n == 0) {
		vg_diag_add(d, &loc, "resources.gpus: backend 'ssh' gives GPUs "
		    "only from a declared pool: list the remote host's GPU ids "
		    "in ssh.gpus (e.g. [0, 1])");
		bad = 1;
	}
	if (c->remote_dir != NULL && *c->remote_dir == '\0') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "ssh.remote_dir"),
		    "ssh.remote_dir: empty (default ~/.vigil/runs)");
		bad = 1;
	}
	for (i = 0; i < c->stage_in.n; i++)
		if (lstat(c->stage_in.v[i], &st) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "ssh.stage_in[%zu]", i), "ssh.stage_in: '%s': %s",
			    c->stage_in.v[i], strerror(errno));
			bad = 1;
		}
	for (i = 0; i < c->stage_out.n; i++)
		if (c->stage_out.v[i][0] == '\0' ||
		    strcmp(base_name(c->stage_out.v[i]), "..") == 0 ||
		    strcmp(base_name(c->stage_out.v[i]), ".") == 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "ssh.stage_out[%zu]", i), "ssh.stage_out: '%s' "
			    "does not name a file or directory",
			    c->stage_out.v[i]);
			bad = 1;
		}
	return bad ? VG_EINVAL : 0;
}

/* Signal handler: asks run() to stop. */
static void
ssh_on_signal(int sig)
{
	(void)sig;
	ssh_stop = 1;
}

/* Sends the kill script; reconnects for it when needed (bounded). */
static int
remote_kill(struct ssh_ctx *x, double grace, int timed_out, struct vg_err *e)
{
	struct vg_buf script = VG_BUF_INIT;
	double until = vg_mono() + grace + SSH_DRAIN_SLACK;
	int rc, st;

	vg_ssh_kill_script(x->dir, grace, timed_out, &script);
	for (;;) {
		if (!x->up && (rc = reconnect(x, until, 0, e)) != 0)
			break;
		rc = remote_exec(x, "/bin/sh -s", script.data, NULL, NULL, &st,
		    e);
		if (rc != VG_EAGAIN)
			break;
		x->up = 0;
		conn_close(&x->conn);
		if (vg_mono() >= until)
			break;
	}
	vg_buf_release(&script);
	return rc;
}

/* Writes data to a new remote file with mode (over SFTP). */
static int
put_file(struct ssh_ctx *x, const char *name, const char *data, size_t len,
    int mode, struct vg_err *e)
{
	char *path = vg_xasprintf("%s/%s", x->sdir, name);
	sftp_file f;

	/* Whatever stands at the name goes first (a link is removed, never
	 * followed); the file is then made O_EXCL, so nothing planted in
	 * between is written through. */
	(void)sftp_unlink(x->conn.sftp, path);
	f = sftp_open(x->conn.sftp, path, O_WRONLY | O_CREAT | O_EXCL,
	    (mode_t)mode);
	size_t off = 0;
	ssize_t n;
	int rc = 0;

	if (f == NULL) {
		rc = vg_err_set(e, sftp_answered(x) ? VG_EBACKEND : VG_EAGAIN,
		    "ssh: creating remote '%s': %s", path, sftp_msg(x));
		free(path);
		return rc;
	}
	while (off < len) {
		n = sftp_write(f, data + off, len - off > SSH_CHUNK ?
		    SSH_CHUNK : len - off);
		if (n <= 0) {
			rc = vg_err_set(e, VG_EAGAIN, "ssh: writing remote "
			    "'%s': %s", path, sftp_msg(x));
			break;
		}
		off += (size_t)n;
	}
	if (sftp_close(f) != 0 && rc == 0)
		rc = vg_err_set(e, VG_EAGAIN, "ssh: writing remote '%s': %s",
		    path, sftp_msg(x));
	free(path);
	return rc;
}

/* Makes the attempt dir; a leftover of a killed monitor of this very
 * attempt loses its status and timedout marker. */
static int
make_dir(struct ssh_ctx *x, struct vg_err *e)
{
	char *p;
	int rc;

	if (sftp_mkdir(x->conn.sftp, x->sdir, 0700) == 0)
		return 0;
	if (!sftp_answered(x))
		return vg_err_set(e, VG_EAGAIN, "ssh: creating remote '%s': %s",
		    x->dir, sftp_msg(x));
	if ((rc = sftp_mkdir_p(x, x->sdir, e)) != 0)
		return rc;
	p = vg_xasprintf("%s/status", x->sdir);
	(void)sftp_unlink(x->conn.sftp, p);
	free(p);
	p = vg_xasprintf("%s/timedout", x->sdir);
	(void)sftp_unlink(x->conn.sftp, p);
	free(p);
	return 0;
}

/* Starts the attempt on the remote host: dir, stage_in, env, run.sh over
 * SFTP, then one exec request. */
static int
launch(struct ssh_ctx *x, struct vg_attempt *a, struct vg_err *e)
{
	struct vg_strv env = VG_STRV_INIT, argv = VG_STRV_INIT;
	struct vg_buf envf = VG_BUF_INIT, wrap = VG_BUF_INIT,
	    cmd = VG_BUF_INIT, out = VG_BUF_INIT, err = VG_BUF_INIT;
	struct vg_ssh_launch l = {
		.dir = x->dir,
		.argv = &argv,
		.workdir = a->m->workdir,
		.timeout = a->timeout,
		.grace = a->kill_grace,
	};
	size_t i;
	int rc, st;
	char *dst;

	vg_task_env(a, VG_ENV_REMOTE, &env);
	vg_attempt_argv(a, &argv);
	if ((rc = vg_ssh_env_file(&env, &envf, e)) != 0)
		goto out;
	vg_ssh_wrapper_script(&l, &wrap);
	vg_ssh_start_command(x->dir, &cmd);
	if ((rc = make_dir(x, e)) != 0)
		goto out;
	for (i = 0; i < x->c->stage_in.n; i++) {
		dst = vg_xasprintf("%s/%s", x->sdir,
		    base_name(x->c->stage_in.v[i]));
		rc = put_tree(x, x->c->stage_in.v[i], dst, 0, e);
		free(dst);
		if (rc != 0)
			goto out;
	}
	if ((rc = put_file(x, "env", envf.data, envf.len, 0600, e)) != 0 ||
	    (rc = put_file(x, "run.sh", wrap.data, wrap.len, 0700, e)) != 0)
		goto out;
	if ((rc = remote_exec(x, cmd.data, NULL, &out, &err, &st, e)) != 0)
		goto out;
	if (st != 0 || strncmp(vg_buf_str(&out), "vigil-started ", 14) != 0)
		rc = vg_err_set(e, VG_EBACKEND, "ssh: starting the task on %s "
		    "failed (status %d)%s%s", x->c->host, st,
		    err.len > 0 ? ": " : "", trimmed(&err));
out:
	vg_strv_release(&env);
	vg_strv_release(&argv);
	vg_buf_release(&envf);
	vg_buf_release(&wrap);
	vg_buf_release(&cmd);
	vg_buf_release(&out);
	vg_buf_release(&err);
	return rc;
}

/* rm -rf over SFTP; the entries of a directory, then itself. */
static int
sftp_rm_rf(struct ssh_ctx *x, const char *path, int depth, struct vg_err *e)
{
	sftp_attributes a, ent;
	sftp_dir d;
	char *p;
	int rc = 0;

	if ((a = sftp_lstat(x->conn.sftp, path)) == NULL)
		return sftp_answered(x) ? 0 : vg_err_set(e, VG_EAGAIN,
		    "ssh: removing remote '%s': %s", path, sftp_msg(x));
	if (a->type != SSH_FILEXFER_TYPE_DIRECTORY) {
		sftp_attributes_free(a);
		if (sftp_unlink(x->conn.sftp, path) != 0 && !sftp_answered(x))
			return vg_err_set(e, VG_EAGAIN, "ssh: removing remote "
			    "'%s': %s", path, sftp_msg(x));
		return 0;
	}
	sftp_attributes_free(a);
	if (depth >= SSH_STAGE_DEPTH)
		return vg_err_set(e, VG_ELIMIT, "ssh: removing remote '%s': "
		    "deeper than %d levels", path, SSH_STAGE_DEPTH);
	if ((d = sftp_opendir(x->conn.sftp, path)) == NULL)
		return vg_err_set(e, VG_EAGAIN, "ssh: removing remote '%s': %s",
		    path, sftp_msg(x));
	while (rc == 0 && (ent = sftp_readdir(x->conn.sftp, d)) != NULL) {
		if (strcmp(ent->name, ".") != 0 && strcmp(ent->name, "..") != 0
		    && strchr(ent->name, '/') == NULL) {
			p = vg_xasprintf("%s/%s", path, ent->name);
			rc = sftp_rm_rf(x, p, depth + 1, e);
			free(p);
		}
		sftp_attributes_free(ent);
	}
	sftp_closedir(d);
	if (rc == 0 && sftp_rmdir(x->conn.sftp, path) != 0 &&
	    !sftp_answered(x))
		rc = vg_err_set(e, VG_EAGAIN, "ssh: removing remote '%s': %s",
		    path, sftp_msg(x));
	return rc;
}

/* True for the wrapper's own files at the top of an attempt dir. */
static int
wrapper_file(const char *name)
{
	static const char *const names[] = { "env", "run.sh", "pid", "tpid",
		"out", "err", "status", "timedout", "usage", NULL };
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

/* True when rel matches one of the outputs globs. */
static int
output_match(const struct vg_outputs *o, const char *rel)
{
	size_t i;

	for (i = 0; i < o->paths.n; i++)
		if (fnmatch(o->paths.v[i], rel, FNM_PATHNAME) == 0)
			return 1;
	return 0;
}

/*
 * Brings back what the outputs globs match in the remote attempt dir
 * (the task's directory there), below rel, into the local task dir with
 * the same relative paths, where the driver's collection takes them
 * (runner/core/outputs.c).  taken: rel itself matched, so everything
 * below it is wanted.  Symbolic links and special files stay behind.
 */
static int
fetch_outputs(struct ssh_ctx *x, struct vg_attempt *a, const char *rel,
    int depth, int taken, struct vg_err *e)
{
	sftp_attributes ent;
	sftp_dir d;
	char *src, *sub, *dst;
	int rc = 0, match;

	src = *rel != '\0' ? vg_xasprintf("%s/%s", x->sdir, rel) :
	    vg_xstrdup(x->sdir);
	d = sftp_opendir(x->conn.sftp, src);
	free(src);
	if (d == NULL)
		return sftp_answered(x) ? 0 : vg_err_set(e, VG_EAGAIN, "ssh: "
		    "outputs: listing '%s': %s", x->dir, sftp_msg(x));
	while (rc == 0 && (ent = sftp_readdir(x->conn.sftp, d)) != NULL) {
		if (strcmp(ent->name, ".") == 0 || strcmp(ent->name, "..") ==
		    0 || strchr(ent->name, '/') != NULL || (depth == 0 &&
		    wrapper_file(ent->name))) {
			sftp_attributes_free(ent);
			continue;
		}
		sub = *rel != '\0' ? vg_xasprintf("%s/%s", rel, ent->name) :
		    vg_xstrdup(ent->name);
		match = taken || output_match(&a->m->outputs, sub);
		dst = vg_path_join(a->task_dir, sub);
		if (ent->type == SSH_FILEXFER_TYPE_DIRECTORY &&
		    depth < SSH_STAGE_DEPTH) {
			if (match && mkdir(dst, 0700) != 0 && errno != EEXIST)
				rc = vg_err_errno(e, "ssh: outputs: '%s'", dst);
			if (rc == 0)
				rc = fetch_outputs(x, a, sub, depth + 1, match,
				    e);
		} else if (ent->type == SSH_FILEXFER_TYPE_REGULAR && match) {
			src = vg_xasprintf("%s/%s", x->sdir, sub);
			rc = get_tree(x, src, dst, SSH_STAGE_DEPTH, e);
			free(src);
		}
		free(dst);
		free(sub);
		sftp_attributes_free(ent);
	}
	sftp_closedir(d);
	return rc;
}

/* Copies stage_out back and removes the remote attempt dir, then the
 * task and run dirs above it when they are empty. */
static int
collect(struct ssh_ctx *x, struct vg_attempt *a, struct vg_err *e)
{
	const char *src;
	char *s, *d, *slash;
	size_t i;
	int rc = 0, up;

	for (i = 0; i < x->c->stage_out.n && rc == 0; i++) {
		src = x->c->stage_out.v[i];
		if (src[0] == '/' || src[0] == '~')
			s = vg_ssh_sftp_path(src);
		else
			s = vg_xasprintf("%s/%s", x->sdir, src);
		d = vg_path_join(a->task_dir, base_name(src));
		rc = get_tree(x, s, d, 0, e);
		free(s);
		free(d);
	}
	if (rc == 0 && a->m->outputs.paths.n > 0)
		rc = fetch_outputs(x, a, "", 0, 0, e);
	if (rc != 0)
		return rc;
	for (i = 1; i <= 2; i++)
		if (x->conn.f[i] != NULL) {
			sftp_close(x->conn.f[i]);
			x->conn.f[i] = NULL;
		}
	if ((rc = sftp_rm_rf(x, x->sdir, 0, e)) != 0)
		return rc;
	s = vg_xstrdup(x->sdir);
	for (up = 0; up < 2 && (slash = strrchr(s, '/')) != NULL &&
	    slash != s; up++) {
		*slash = '\0';
		if (sftp_rmdir(x->conn.sftp, s) != 0)
			break;
	}
	free(s);
	return 0;
}

/* Fills r's usage: what the attempt asked for, and what the remote
 * wrapper measured (its usage file; nothing when it is missing). */
static void
usage_fetch(struct ssh_ctx *x, const struct vg_attempt *a,
    struct vg_result *r)
{
	char buf[512];
	struct vg_err le;
	size_t len;

	vg_usage_given(&r->usage, &a->res);
	vg_err_init(&le);
	if (read_small(x, "usage", buf, sizeof(buf) - 1, &len, &le) == 1)
		(void)vg_ssh_usage_parse(buf, len, &r->usage);
}

/* Fills r from the remote status code and how the attempt was stopped. */
static void
settle(struct vg_result *r, int code, int timed_out, int cancelled,
    double timeout)
{
	int sig = code > 128 && code <= 128 + 64 ? code - 128 : 0;

	r->exit_code = code;
	r->signal = 0;
	if (timed_out) {
		r->state = VG_ST_TIMEOUT;
		r->exit_code = -1;
		r->signal = sig ? sig : SIGTERM;
		snprintf(r->reason, sizeof(r->reason), "timed out after %gs; "
		    "remote process group stopped with %s", timeout,
		    r->signal == SIGKILL ? "SIGKILL" : "SIGTERM");
	} else if (cancelled && code != 0) {
		r->state = VG_ST_CANCELLED;
		r->exit_code = -1;
		r->signal = sig ? sig : SIGTERM;
		snprintf(r->reason, sizeof(r->reason), "cancelled; remote "
		    "process group stopped with %s", r->signal == SIGKILL ?
		    "SIGKILL" : "SIGTERM");
	} else if (code == 0) {
		r->state = VG_ST_SUCCEEDED;
	} else {
		r->state = VG_ST_FAILED;
		if (sig)
			snprintf(r->reason, sizeof(r->reason), "exit code %d "
			    "(the remote shell's code for signal %d, %s)",
			    code, sig, strsignal(sig));
		else
			snprintf(r->reason, sizeof(r->reason), "exit code %d",
			    code);
	}
}

/* Frees what ssh_ctx_init allocated and closes the connection. */
static void
ssh_ctx_release(struct ssh_ctx *x)
{
	if (x->up)
		conn_close(&x->conn);
	x->up = 0;
	free(x->user);
	free(x->identity);
	free(x->known_hosts);
	free(x->kh_shown);
	free(x->dir);
	free(x->sdir);
	vg_ssh_jump_release(&x->jump);
	if (x->fd[1] >= 0)
		close(x->fd[1]);
	if (x->fd[2] >= 0)
		close(x->fd[2]);
}

/* Sets x up from the attempt: names and paths. */
static int
ssh_ctx_init_remote(struct ssh_ctx *x, const struct vg_attempt *a,
    struct vg_err *e)
{
	const struct vg_ssh_conf *c = vg_ssh_of(a->m);

	memset(x, 0, sizeof(*x));
	x->fd[0] = x->fd[1] = x->fd[2] = -1;
	x->c = c;
	if (c->host == NULL || *c->host == '\0')
		return vg_err_set(e, VG_EINVAL, "ssh.host: required by backend "
		    "'ssh'");
	if (c->proxy_jump != NULL) {
		if (vg_ssh_jump_parse(c->proxy_jump, &x->jump, e) != 0)
			return VG_EINVAL;
		x->has_jump = 1;
	}
	x->user = c->user != NULL ? vg_xstrdup(c->user) : local_user();
	x->identity = expand_home(c->identity);
	x->known_hosts = expand_home(c->known_hosts);
	x->kh_shown = x->known_hosts != NULL ? vg_xstrdup(x->known_hosts) :
	    expand_home("~/.ssh/known_hosts");
	x->dir = vg_ssh_attempt_dir(c->remote_dir, a->run_id,
	    a->task != NULL ? a->task->index : 0, a->attempt);
	x->sdir = vg_ssh_sftp_path(x->dir);
	return 0;
}

/* ssh_ctx_init_remote, then the local output files (kept as they are
 * with keep: a reattach resumes from their sizes). */
static int
ssh_ctx_init(struct ssh_ctx *x, const struct vg_attempt *a, int keep,
    struct vg_err *e)
{
	int rc;

	if ((rc = ssh_ctx_init_remote(x, a, e)) != 0)
		return rc;
	if (keep) {
		if ((x->fd[1] = vg_task_output_reopen(a->task_dir, 0, "stdout",
		    e)) < 0 || (x->fd[2] = vg_task_output_reopen(a->task_dir, 0,
		    "stderr", e)) < 0)
			return e->rc;
	} else if ((x->fd[1] = vg_task_output_open(a->task_dir, 0,
	    "stdout", O_APPEND, e)) < 0 ||
	    (x->fd[2] = vg_task_output_open(a->task_dir, 0,
	    "stderr", O_APPEND, e)) < 0)
		return e->rc;
	return 0;
}

/*
 * The tail loop: copies new output and polls the status until the task
 * has ended and every byte is here.  Handles the local deadline, stop
 * requests and reconnects.  Fills r.
 */
static int
follow(struct ssh_ctx *x, struct vg_attempt *a, struct vg_result *r,
    struct vg_err *e)
{
	char *buf = vg_xmalloc(SSH_CHUNK), st[16];
	double now, deadline = 0, drain_until = 0, poll = SSH_POLL_MIN;
	double lost_since = 0;
	uint64_t before[3], after[3];
	struct vg_err le;
	size_t stlen;
	int rc = 0, done, code = -1, killed = 0, timed_out = 0, cancelled = 0;

	if (a->timeout > 0)
		deadline = vg_mono() + a->timeout + SSH_LOCAL_SLACK;
	for (;;) {
		now = vg_mono();
		/* Stop requests and the local deadline kill the remote
		 * group once; then the status tells when it is over. */
		if (!killed && (ssh_stop || (deadline > 0 && now >= deadline))) {
			timed_out = !ssh_stop;
			cancelled = ssh_stop;
			killed = 1;
			drain_until = now + a->kill_grace + SSH_DRAIN_SLACK;
			vg_err_init(&le);
			if (remote_kill(x, a->kill_grace, timed_out, &le) != 0) {
				rc = vg_err_set(e, VG_EBACKEND, "ssh: cannot "
				    "stop the remote task (its watchdog still "
				    "holds the timeout): %s", le.msg);
				goto out;
			}
			/* Later signals change nothing: drain in full. */
			ssh_stop = 0;
		}
		if (killed)
			ssh_stop = 0;
		if (killed && now >= drain_until) {
			rc = vg_err_set(e, VG_EBACKEND, "ssh: the remote task "
			    "did not end within %gs of being killed",
			    a->kill_grace + SSH_DRAIN_SLACK);
			goto out;
		}
		if (!x->up) {
			vg_err_init(&le);
			if (lost_since == 0)
				lost_since = now;
			rc = reconnect(x, killed ? drain_until : lost_since +
			    SSH_RECONNECT_WINDOW, !killed, &le);
			if (rc == VG_ECANCELED)
				continue;	/* kill above, then retry */
			if (rc != 0) {
				rc = vg_err_set(e, rc, "%s", le.msg);
				goto out;
			}
			lost_since = 0;
		}
		vg_err_init(&le);
		done = read_small(x, "status", st, sizeof(st) - 1, &stlen, &le);
		if (done < 0)
			goto lost;
		/* The shell creates status before it writes the line: an
		 * empty one is not written yet. */
		if (done && stlen == 0)
			done = 0;
		if (done && vg_ssh_status_parse(st, stlen, &code) != 0) {
			rc = vg_err_set(e, VG_EBACKEND, "ssh: remote status "
			    "file of '%s' is malformed", x->dir);
			goto out;
		}
		(void)vg_ssh_resume_offset(x->fd[1], &before[1], NULL);
		(void)vg_ssh_resume_offset(x->fd[2], &before[2], NULL);
		if ((rc = tail_stream(x, 1, buf, &le)) != 0 ||
		    (rc = tail_stream(x, 2, buf, &le)) != 0) {
			if (rc == VG_EAGAIN)
				goto lost;
			rc = vg_err_set(e, rc, "%s", le.msg);
			goto out;
		}
		if (done && !ssh_stop)
			break;
		if (done) {
			/* Ended while a stop request was pending: still
			 * read to the end once more without breaking off. */
			ssh_stop = 0;
			cancelled = cancelled || !killed;
			killed = 1;
			continue;
		}
		(void)vg_ssh_resume_offset(x->fd[1], &after[1], NULL);
		(void)vg_ssh_resume_offset(x->fd[2], &after[2], NULL);
		if (after[1] != before[1] || after[2] != before[2])
			poll = SSH_POLL_MIN;
		else if ((poll *= 2) > SSH_POLL_MAX)
			poll = SSH_POLL_MAX;
		nap(poll);
		continue;
lost:
		/* The connection broke: drop it; the next round reconnects
		 * and resumes from the local file sizes. */
		snprintf(x->last, sizeof(x->last), "%s", le.msg);
		conn_close(&x->conn);
		x->up = 0;
	}
	if (!timed_out) {
		/* The remote watchdog may have been first. */
		vg_err_init(&le);
		timed_out = read_small(x, "timedout", st, sizeof(st) - 1,
		    &stlen, &le) == 1;
	}
	settle(r, code, timed_out, cancelled, a->timeout);
	usage_fetch(x, a, r);
	rc = 0;
out:
	free(buf);
	return rc;
}

/* Installs the stop handler for SIGTERM and SIGINT, saving the old. */
static void
ssh_signals(struct sigaction *old_term, struct sigaction *old_int)
{
	struct sigaction sa;

	ssh_stop = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ssh_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, old_term);
	sigaction(SIGINT, &sa, old_int);
}

/*
 * The first connection of a monitor: a short retry window covers a busy
 * server (MaxStartups), not a host that is down.  0, VG_ECANCELED on a
 * stop request, else an error in e (VG_EAGAIN when the host could not be
 * reached: transient; refused host keys and keys stay permanent).
 */
static int
first_connect(struct ssh_ctx *x, struct vg_err *e)
{
	struct vg_err le;
	int rc;

	vg_err_init(&le);
	rc = reconnect(x, vg_mono() + (double)(x->c->connect_timeout > 0 ?
	    x->c->connect_timeout : 10), 1, &le);
	if (rc == 0 || rc == VG_ECANCELED)
		return rc;
	return vg_err_set(e, rc == VG_ETIMEOUT ? VG_EAGAIN : rc, "%s",
	    le.msg);
}

/* Follows a started attempt to its end, then copies stage_out (and
 * outputs) back and removes the remote directory; fills r. */
static int
follow_and_collect(struct ssh_ctx *x, struct vg_attempt *a,
    struct vg_result *r, struct vg_err *e)
{
	struct vg_err le;
	int rc;

	if ((rc = follow(x, a, r, e)) != 0)
		return vg_result_fail(r, e);
	r->ended = vg_now();
	vg_debug("ssh: task ended: %s", vg_state_name(r->state));
	if (!x->up) {
		vg_err_init(&le);
		(void)reconnect(x, vg_mono() + SSH_DRAIN_SLACK, 0, &le);
	}
	vg_err_init(&le);
	if (x->up && collect(x, a, &le) != 0) {
		if (r->state == VG_ST_SUCCEEDED)
			r->state = VG_ST_FAILED;
		snprintf(r->reason + strlen(r->reason), sizeof(r->reason) -
		    strlen(r->reason), "%s%s", r->reason[0] ? "; " : "",
		    le.msg);
	}
	vg_debug("ssh: collected");
	return 0;
}

/* Ends an attempt of ssh_run or ssh_reattach: releases x, restores the
 * signal handlers, and dates r's end. */
static void
ssh_end(struct ssh_ctx *x, const struct sigaction *old_term,
    const struct sigaction *old_int, struct vg_result *r)
{
	ssh_ctx_release(x);
	sigaction(SIGTERM, old_term, NULL);
	sigaction(SIGINT, old_int, NULL);
	if (r->ended == 0)
		r->ended = vg_now();
}

/* Starts the result of an ssh attempt: BACKEND_ERROR until known. */
static void
result_init(struct vg_result *r, const struct vg_attempt *a)
{
	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	snprintf(r->node, sizeof(r->node), "%s", vg_ssh_of(a->m)->host ?
	    vg_ssh_of(a->m)->host : "?");
}

/*
 * Runs one attempt to completion; see backend.h.  Returns 0 with r
 * filled for every outcome of the task (TIMEOUT and CANCELLED
 * included), or a negative vg_rc with r set to BACKEND_ERROR and e
 * saying why.
 */
static int
ssh_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct ssh_ctx x;
	int rc;

	result_init(r, a);
	ssh_signals(&old_term, &old_int);
	if ((rc = ssh_ctx_init(&x, a, 0, e)) != 0) {
		vg_result_fail(r, e);
		goto out;
	}
	if ((rc = first_connect(&x, e)) == VG_ECANCELED) {
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "cancelled before the "
		    "task started");
		rc = 0;
		goto out;
	}
	if (rc != 0) {
		rc = vg_result_fail(r, e);
		goto out;
	}
	if ((rc = launch(&x, a, e)) != 0) {
		vg_result_fail(r, e);
		goto out;
	}
	vg_debug("ssh: task started in '%s'", x.dir);
	r->started = vg_now();
	rc = follow_and_collect(&x, a, r, e);
out:
	ssh_end(&x, &old_term, &old_int, r);
	return rc;
}

/*
 * Takes over attempt a after vigil and its monitor died; see backend.h.
 * The detached remote task is found by its directory; a directory
 * without the wrapper's pid never started a task and is removed.  The
 * tail resumes from the sizes of the local output files, as after a
 * reconnect.
 */
static int
ssh_reattach(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sigaction old_term, old_int;
	struct ssh_ctx x;
	struct vg_err le;
	char pid[32];
	size_t n;
	int rc;

	result_init(r, a);
	ssh_signals(&old_term, &old_int);
	if ((rc = ssh_ctx_init(&x, a, 1, e)) != 0) {
		vg_result_fail(r, e);
		goto out;
	}
	if ((rc = first_connect(&x, e)) != 0) {
		if (rc == VG_ECANCELED) {
			r->state = VG_ST_CANCELLED;
			snprintf(r->reason, sizeof(r->reason), "cancelled "
			    "while taking the attempt over");
			rc = 0;
		} else
			vg_result_fail(r, e);
		goto out;
	}
	if (!sftp_is_dir(&x, x.sdir)) {
		rc = vg_err_set(e, VG_ENOENT, "ssh: no remote directory '%s' "
		    "was left on %s", x.dir, x.c->host);
		goto out;
	}
	vg_err_init(&le);
	if (read_small(&x, "pid", pid, sizeof(pid) - 1, &n, &le) != 1) {
		(void)sftp_rm_rf(&x, x.sdir, 0, &le);
		rc = vg_err_set(e, VG_ENOENT, "ssh: '%s' on %s never started "
		    "its task; removed", x.dir, x.c->host);
		goto out;
	}
	vg_debug("ssh: following the task in '%s' again", x.dir);
	r->started = vg_now();
	rc = follow_and_collect(&x, a, r, e);
out:
	ssh_end(&x, &old_term, &old_int, r);
	return rc;
}

/*
 * Removes what is left of run_id (task `task` when >= 0) on the run's
 * ssh host: kills attempts without a status and removes their
 * directories (vg_ssh_reap_script).  Needs the run's manifest, which
 * names the host; without it (gc of every dead run) there is nothing
 * this backend can find.
 */
static int
ssh_reap(const struct vg_manifest *m, const char *run_id, int task,
    struct vg_buf *report, struct vg_err *e)
{
	struct vg_attempt a;
	struct vg_buf script = VG_BUF_INIT, out = VG_BUF_INIT,
	    err = VG_BUF_INIT;
	struct ssh_ctx x;
	const char *p, *nl;
	int rc, st;

	if (m == NULL || run_id == NULL || vg_ssh_of(m)->host == NULL)
		return 0;
	memset(&a, 0, sizeof(a));
	a.m = m;
	a.run_id = run_id;
	memset(&x, 0, sizeof(x));
	x.fd[0] = x.fd[1] = x.fd[2] = -1;
	ssh_stop = 0;
	/* No task dir: the context opens no output files. */
	if ((rc = ssh_ctx_init_remote(&x, &a, e)) != 0 ||
	    (rc = first_connect(&x, e)) != 0)
		goto out;
	vg_ssh_reap_script(x.c->remote_dir, run_id, task, &script);
	if ((rc = remote_exec(&x, "/bin/sh -s", script.data, &out, &err, &st,
	    e)) != 0)
		goto out;
	if (st != 0) {
		rc = vg_err_set(e, VG_EBACKEND, "ssh: removing leftovers of "
		    "run %s on %s failed (status %d)%s%s", run_id, x.c->host,
		    st, err.len > 0 ? ": " : "", trimmed(&err));
		goto out;
	}
	/* "removed TASK/ATTEMPT" lines, one per attempt dir. */
	for (p = vg_buf_str(&out); report != NULL && *p != '\0'; p = nl) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		vg_buf_printf(report, "ssh: %.*s (task/attempt of run %s on "
		    "%s)\n", (int)(nl - p - (nl[-1] == '\n')), p, run_id,
		    x.c->host);
	}
out:
	ssh_ctx_release(&x);
	vg_buf_release(&script);
	vg_buf_release(&out);
	vg_buf_release(&err);
	return rc;
}

static const struct vg_msection *const ssh_sections[] = {
	&vg_ssh_msection, NULL
};

/*
 * The pool of the remote host: the GPUs ssh.gpus declares, and CPUs and
 * memory unbounded here (the remote host's are not known: --jobs caps
 * the count).
 */
static int
ssh_pool(const struct vg_manifest *m, struct vg_pool *p, struct vg_err *e)
{
	const struct vg_ssh_conf *c = vg_ssh_of(m);
	size_t i;

	(void)e;
	memset(p, 0, sizeof(*p));
	p->cpus = 1048576;
	vg_strlcpy(p->cpu_from, "not limited over ssh", sizeof(p->cpu_from));
	for (i = 0; i < c->gpus.n; i++)
		vg_gpu_parse_list(c->gpus.v[i], VG_GPU_NVIDIA, p);
	vg_strlcpy(p->gpu_from, "ssh.gpus", sizeof(p->gpu_from));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Sessions: a remote session directory, one exec channel per command */
/* ------------------------------------------------------------------ */

/*
 * A session lives in <remote_dir>/<session id>/ on the host (absolute,
 * as the remote shell resolved it at open; that is s->root).  Each
 * command is one exec channel running the session wrapper; its output
 * is read from the channel as it comes.  Connections are made as a task
 * run makes them, with the same retry window for a busy server; a
 * connection lost during a command ends that command (sshd hangs its
 * process group up) as a backend error, and the next command connects
 * again.
 */

/* Sets x up for session s (no local files: the caller's are used). */
static int
session_ctx(struct ssh_ctx *x, const struct vg_session *s, struct vg_err *e)
{
	struct vg_attempt a;
	struct vg_err le;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(x, 0, sizeof(*x));
	x->fd[0] = x->fd[1] = x->fd[2] = -1;
	x->c = vg_ssh_of(s->m);
	if (x->c->host == NULL || *x->c->host == '\0')
		return vg_err_set(e, VG_EINVAL, "ssh.host: required by backend "
		    "'ssh'");
	if (x->c->proxy_jump != NULL) {
		if (vg_ssh_jump_parse(x->c->proxy_jump, &x->jump, e) != 0)
			return VG_EINVAL;
		x->has_jump = 1;
	}
	x->user = x->c->user != NULL ? vg_xstrdup(x->c->user) : local_user();
	x->identity = expand_home(x->c->identity);
	x->known_hosts = expand_home(x->c->known_hosts);
	x->kh_shown = x->known_hosts != NULL ? vg_xstrdup(x->known_hosts) :
	    expand_home("~/.ssh/known_hosts");
	vg_err_init(&le);
	rc = reconnect(x, vg_mono() + (double)(x->c->connect_timeout > 0 ?
	    x->c->connect_timeout : 10), 0, &le);
	if (rc != 0)
		return vg_err_set(e, rc == VG_ETIMEOUT ? VG_EBACKEND : rc,
		    "%s", le.msg);
	return 0;
}

/* Runs script with sh on the host; VG_EBACKEND with its stderr when it
 * fails. */
static int
session_sh(struct ssh_ctx *x, const char *script, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_buf err = VG_BUF_INIT;
	int rc, status;

	rc = remote_exec(x, "/bin/sh -s", script, out, &err, &status, e);
	if (rc == 0 && status != 0)
		rc = vg_err_set(e, VG_EBACKEND, "ssh: on %s: %s (exit %d)",
		    x->c->host, trimmed(&err), status);
	vg_buf_release(&err);
	return rc;
}

/* The remote session directory as the remote shell spells it. */
static char *
session_remote_dir(const struct vg_session *s)
{
	const char *base = vg_ssh_of(s->m)->remote_dir;

	return vg_xasprintf("%s/%s", base != NULL && *base ? base :
	    "~/.vigil/runs", s->id);
}

static int
ssh_session_open(struct vg_session *s, struct vg_err *e)
{
	struct vg_buf script = VG_BUF_INIT, out = VG_BUF_INIT;
	struct ssh_ctx x;
	char *dir = session_remote_dir(s);
	int rc;

	if ((rc = session_ctx(&x, s, e)) != 0)
		goto out;
	vg_buf_adds(&script, "set -e\nd=");
	vg_ssh_path_word(&script, dir);
	vg_buf_adds(&script, "\nmkdir -p \"$d/work\" \"$d/cmds\"\n"
	    "chmod 700 \"$d\"\ncd \"$d\"\npwd\n");
	if ((rc = session_sh(&x, vg_buf_str(&script), &out, e)) != 0)
		goto out;
	trimmed(&out);
	if (out.len == 0 || out.data[0] != '/' || out.len >= sizeof(s->root)) {
		rc = vg_err_set(e, VG_EBACKEND, "ssh: on %s: the session "
		    "directory '%s' did not resolve", x.c->host, dir);
		goto out;
	}
	vg_strlcpy(s->root, vg_buf_str(&out), sizeof(s->root));
	vg_strlcpy(s->handle, s->root, sizeof(s->handle));
out:
	ssh_ctx_release(&x);
	vg_buf_release(&script);
	vg_buf_release(&out);
	free(dir);
	return rc;
}

/* Reads what the channel has now; 1 at its end, -1 on trouble. */
static int
session_pump(ssh_channel ch, const struct vg_session_cmd *c, const int *fd,
    int *bad)
{
	char buf[16384];
	int n, k, got = 0;

	for (k = 0; k < 2; k++) {
		while ((n = ssh_channel_read_nonblocking(ch, buf, sizeof(buf),
		    k)) > 0) {
			got = 1;
			if (vg_session_output(c, fd[k + 1], k + 1, buf,
			    (size_t)n, NULL) != 0)
				*bad = 1;
		}
		if (n == SSH_ERROR)
			return -1;
	}
	if (!got && ssh_channel_is_eof(ch))
		return 1;
	return 0;
}

static int
ssh_session_exec(const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf cmd = VG_BUF_INIT, in = VG_BUF_INIT;
	struct ssh_ctx x;
	ssh_channel ch = NULL;
	char *stdin_in = NULL, *script;
	double deadline = 0, kill_at = 0;
	int rc, fd[3] = { -1, -1, -1 }, bad = 0, why = 0, sig = 0, st;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	snprintf(r->node, sizeof(r->node), "%s", vg_ssh_of(s->m)->host ?
	    vg_ssh_of(s->m)->host : "?");
	if ((rc = session_ctx(&x, s, e)) != 0)
		goto out;
	if ((fd[1] = vg_task_output_open(c->dir, 2, "stdout", 0, e)) < 0 ||
	    (fd[2] = vg_task_output_open(c->dir, 2, "stderr", 0, e)) < 0) {
		rc = e->rc;
		goto out;
	}
	/* The job's directory first, with its stdin when there is one. */
	x.dir = vg_xasprintf("%s/cmds/%s", s->root, c->job);
	x.sdir = vg_ssh_sftp_path(x.dir);
	if ((rc = sftp_mkdir_p(&x, x.sdir, e)) != 0)
		goto out;
	if (c->stdin_path != NULL) {
		if ((rc = vg_read_file(c->stdin_path, (size_t)1 << 30, &in,
		    e)) != 0 || (rc = put_file(&x, "stdin", in.data != NULL ?
		    in.data : "", in.len, 0600, e)) != 0)
			goto out;
		stdin_in = vg_xasprintf("%s/stdin", x.dir);
	}
	vg_session_script(s->root, c, stdin_in, NULL, &argv);
	for (i = 0; i < argv.n; i++) {
		if (i > 0)
			vg_buf_addc(&cmd, ' ');
		vg_buf_squote(&cmd, argv.v[i]);
	}
	if ((ch = ssh_channel_new(x.conn.s)) == NULL ||
	    ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, vg_buf_str(&cmd)) != SSH_OK) {
		rc = vg_err_set(e, VG_EBACKEND, "ssh: starting job %s on %s: "
		    "%s", c->job, x.c->host, ssh_get_error(x.conn.s));
		goto out;
	}
	r->started = vg_now();
	if (c->timeout > 0)
		deadline = vg_mono() + c->timeout;
	for (;;) {
		st = session_pump(ch, c, fd, &bad);
		if (st < 0) {
			rc = vg_err_set(e, VG_EBACKEND, "ssh: job %s on %s: the "
			    "connection was lost: %s", c->job, x.c->host,
			    ssh_get_error(x.conn.s));
			goto out;
		}
		if (st > 0)
			break;
		if (why == 0 && ((deadline > 0 && vg_mono() >= deadline) ||
		    (c->stop != NULL && *c->stop))) {
			why = deadline > 0 && vg_mono() >= deadline ?
			    VG_ST_TIMEOUT : VG_ST_CANCELLED;
			sig = SIGTERM;
			kill_at = vg_mono() + c->kill_grace;
		} else if (why != 0 && sig == SIGTERM && vg_mono() >= kill_at) {
			sig = SIGKILL;
		} else {
			(void)ssh_channel_poll_timeout(ch, 50, 0);
			continue;
		}
		script = vg_session_kill_script(s->root, c->job, sig);
		(void)session_sh(&x, script, NULL, NULL);
		free(script);
	}
	while (!ssh_channel_is_closed(ch) &&
	    ssh_channel_get_exit_status(ch) == -1 &&
	    ssh_channel_poll_timeout(ch, 100, 0) != SSH_ERROR &&
	    !ssh_channel_is_eof(ch))
		;
	if (why != 0) {
		r->state = (enum vg_state)why;
		r->signal = sig;
		snprintf(r->reason, sizeof(r->reason), "%s; its processes "
		    "were sent %s", why == VG_ST_TIMEOUT ? "timed out" :
		    "stopped", sig == SIGKILL ? "SIGKILL" : "SIGTERM");
	} else {
		r->exit_code = ssh_channel_get_exit_status(ch);
		r->state = r->exit_code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
		if (r->exit_code != 0)
			snprintf(r->reason, sizeof(r->reason), "exit code %d",
			    r->exit_code);
	}
	rc = bad ? vg_err_set(e, VG_EIO, "ssh: job %s: its output could not "
	    "be kept whole", c->job) : 0;
out:
	r->ended = vg_now();
	if (ch != NULL) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	if (fd[1] >= 0)
		close(fd[1]);
	if (fd[2] >= 0)
		close(fd[2]);
	free(stdin_in);
	ssh_ctx_release(&x);
	vg_strv_release(&argv);
	vg_buf_release(&cmd);
	vg_buf_release(&in);
	return rc;
}

static int
ssh_session_close(const struct vg_session *s, struct vg_err *e)
{
	struct vg_buf script = VG_BUF_INIT;
	struct ssh_ctx x;
	char *dir = session_remote_dir(s), *kill;
	int rc;

	if ((rc = session_ctx(&x, s, e)) != 0)
		goto out;
	/* By the recorded root, else where open would have made it. */
	vg_buf_adds(&script, "d=");
	if (s->root[0] == '/')
		vg_buf_squote(&script, s->root);
	else
		vg_ssh_path_word(&script, dir);
	vg_buf_adds(&script, "\n[ -d \"$d\" ] || exit 0\n");
	kill = vg_session_close_script("\"$d\"");
	vg_buf_adds(&script, kill);
	free(kill);
	vg_buf_adds(&script, "rm -rf -- \"$d\"\n");
	rc = session_sh(&x, vg_buf_str(&script), NULL, e);
out:
	ssh_ctx_release(&x);
	vg_buf_release(&script);
	free(dir);
	return rc;
}

const struct vg_backend_ops vg_backend_ssh = {
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "ssh",
		.help = "a process on another host over ssh",
		.sections = ssh_sections,
		.validate = ssh_validate,
		.host_check = ssh_host_check,
	},
	.probe = ssh_probe,
	.run = ssh_run,
	.reap = ssh_reap,
	.reattach = ssh_reattach,
	.pool = ssh_pool,
	/* Sessions: the block above. */
	.session_open = ssh_session_open,
	.session_exec = ssh_session_exec,
	.session_close = ssh_session_close,
};

/* ---- the ssh: section ---- */

static const char *const host_key_names[] = { "strict", "accept-new",
	NULL };

static const struct vg_section ssh_section = {
	.name = "ssh",
	.fields = (const struct vg_field[]){
		STR(vg_ssh_conf, "host", host, "remote host"),
		INT(vg_ssh_conf, "port", port, "22", 1, 65535, "port"),
		STR(vg_ssh_conf, "user", user, "remote user"),
		STR(vg_ssh_conf, "identity", identity, "private key file"),
		STR(vg_ssh_conf, "known_hosts", known_hosts,
		    "known_hosts file"),
		CHOICE(vg_ssh_conf, "host_key", host_key, "strict",
		    host_key_names, "host key checking"),
		STR(vg_ssh_conf, "proxy_jump", proxy_jump, "jump host"),
		INT(vg_ssh_conf, "keepalive", keepalive, "15", 0, 3600,
		    "keepalive interval, seconds"),
		INT(vg_ssh_conf, "connect_timeout", connect_timeout, "10", 1,
		    3600, "connect timeout, seconds"),
		STRDEF(vg_ssh_conf, "remote_dir", remote_dir, "~/.vigil/runs",
		    "run directories on the host"),
		STRV(vg_ssh_conf, "stage_in", stage_in,
		    "local paths copied before the task"),
		STRV(vg_ssh_conf, "stage_out", stage_out,
		    "remote paths copied back after it"),
		STRV(vg_ssh_conf, "gpus", gpus,
		    "GPU ids of the remote host tasks are given"),
		{ .key = NULL },
	},
};

const struct vg_msection vg_ssh_msection = {
	.key = "ssh",
	.schema = &ssh_section,
	.size = sizeof(struct vg_ssh_conf),
	.help = "ssh backend",
};
