/*
 * mcp-http-int.h - what the two halves of `vigil mcp --listen` share,
 * private to them: runner/cli/mcp-http.c (connections, their requests
 * and the poll loop) and runner/cli/mcp-http-sess.c (the MCP sessions'
 * children and the routing of each line a child writes to the
 * connection waiting for it).  Each function is described above its
 * definition.
 */
#ifndef VG_MCP_HTTP_INT_H
#define VG_MCP_HTTP_INT_H

#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/cli/mcp-http.h"

/* Connections at once; more are closed at accept. */
#define MAX_CONNS	128
/* MCP sessions at once; an initialize beyond gets 503. */
#define MAX_SESSIONS	32
/* Seconds a request may take to arrive whole. */
#define REQUEST_TIMEOUT	30.0
/* Bytes queued for a client past which its next request waits. */
#define OUT_HIGH	((size_t)1 << 20)
/* Seconds a closing connection's late bytes are read and dropped. */
#define LINGER		2.0
/* Seconds an idle keep-alive connection stays open. */
#define CONN_IDLE	120.0

struct msess {
	char		 id[33];
	pid_t		 pid;
	int		 fd;
	struct vg_buf	 in;		/* from the child: a line */
	struct vg_buf	 out;		/* to the child */
	size_t		 out_off;
	double		 last;		/* last request */
};

struct conn {
	int		 fd;
	struct vg_buf	 in;
	struct vg_buf	 out;
	size_t		 out_off;
	double		 since;		/* request began, idle */
	int		 close_after;	/* close once out is written */
	int		 eof;		/* its client sends no more */
	int		 lingering;	/* closing: reads dropped */
	int		 dead;
	/* The request being read: its head judged, its body coming. */
	int		 have_head;
	size_t		 need;		/* head and body bytes */
	size_t		 head_len;
	int		 is_delete;
	int		 keep_alive;
	int		 sse_ok;	/* Accept has text/event-stream */
	char		*session;	/* Mcp-Session-Id */
	char		*version;	/* MCP-Protocol-Version */
	/* The request forwarded, its answer awaited. */
	struct msess	*sess;
	char		*id;
	char		*progress;
	int		 sse;		/* an event stream is open */
	int		 init;		/* answer names the session */
};

struct front {
	const struct vg_mcp_conf *conf;
	struct vg_mcp_listen	*l;
	const char		*token;
	struct conn		*conns[MAX_CONNS];
	int			 nconns;
	struct msess		*sess[MAX_SESSIONS];
	int			 nsess;
	pid_t			 ended[MAX_SESSIONS * 4];
	int			 nended;
	double			 idle;
};

/* mcp-http-sess.c: the sessions. */
struct conn *vg_mcph_waiting_for(struct front *f, struct msess *s,
	    const char *id, int progress);
void	vg_mcph_sse_open(struct conn *c);
void	vg_mcph_conn_unwait(struct conn *c, int answered);
void	vg_mcph_sess_send(struct msess *s, const char *line);
struct msess *vg_mcph_sess_find(struct front *f, const char *id);
struct msess *vg_mcph_sess_new(struct front *f, struct vg_err *e);
void	vg_mcph_sess_end(struct front *f, struct msess *s, const char *why);
void	vg_mcph_cancel_for(struct conn *c, const char *why);
int	vg_mcph_sess_busy(const struct front *f, const struct msess *s);
void	vg_mcph_reap(struct front *f, int block);
void	vg_mcph_sess_read(struct front *f, struct msess *s);
int	vg_mcph_sess_live(const struct front *f, const struct msess *s);
void	vg_mcph_sess_write(struct msess *s);
/* mcp-http.c: answers and requests. */
void	vg_mcph_respond_error(struct conn *c, int status, const char *extra,
	    const char *id, int code, const char *msg);
void	vg_mcph_conn_requests(struct front *f, struct conn *c);

#endif
