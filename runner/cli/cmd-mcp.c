/*
 * cmd-mcp.c - vigil mcp: serves the Model Context Protocol on stdin and
 * stdout (runner/cli/mcp.h, docs/mcp.md) so that an agent uses vigil's
 * sessions, runs and gate as its terminal.  Logs go to stderr only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/cli/cmd.h"
#include "runner/cli/mcp-http.h"
#include "runner/cli/mcp.h"

static const struct vg_opt mcp_opts[] = {
	VG_OPT_MODE("the gate's mode for every command (default auto-deny)"),
	VG_OPT_POLICY,
	{ .name = "backend", .has_arg = 1, .arg = "NAME",
	  .help = "the default session's backend (default local)" },
	{ .name = "image", .has_arg = 1, .arg = "REF",
	  .help = "the default session's image (docker, apptainer, clouds)" },
	{ .name = "workdir", .has_arg = 1, .arg = "DIR",
	  .help = "where the default session's first command runs" },
	{ .name = "idle-timeout", .has_arg = 1, .arg = "AGE",
	  .help = "sessions end after AGE without a command (default 30m)" },
	{ .name = "max-age", .has_arg = 1, .arg = "AGE",
	  .help = "sessions end AGE after their start" },
	{ .name = "output-limit", .has_arg = 1, .arg = "BYTES",
	  .help = "bytes of each stream exec shows (default 65536)" },
	{ .name = "listen", .has_arg = 1, .arg = "ADDR",
	  .help = "serve Streamable HTTP on a loopback HOST:PORT or "
	  "unix:PATH instead of stdio" },
	{ .name = "token-file", .has_arg = 1, .arg = "FILE",
	  .help = "with --listen: the bearer token, from a file only you "
	  "can read (default: a random one, printed)" },
	{ NULL }
};

/* --listen: the token, the socket, then the HTTP front. */
static int
serve_http(struct vg_args *a, const struct vg_mcp_conf *conf)
{
	struct vg_mcp_listen l;
	struct vg_err e;
	char *token;
	int rc;

	vg_err_init(&e);
	if ((token = vg_mcp_token(vg_args_get(a, "token-file"), &e)) == NULL)
		return vg_cmd_fail(VG_EXIT_USAGE, "mcp: %s", e.msg);
	if (vg_mcp_listen_open(vg_args_get(a, "listen"), &l, &e) != 0) {
		free(token);
		return vg_cmd_fail(VG_EXIT_USAGE, "mcp: %s", e.msg);
	}
	if (l.is_unix)
		fprintf(stderr, "vigil: mcp: serving MCP over HTTP on unix:%s "
		    "(http://localhost/mcp), gate mode %s\n", l.path,
		    conf->mode);
	else
		fprintf(stderr, "vigil: mcp: serving MCP over HTTP at "
		    "http://%s:%d/mcp, gate mode %s\n", l.host, l.port,
		    conf->mode);
	if (!vg_args_has(a, "token-file"))
		fprintf(stderr, "vigil: mcp: bearer token: %s\n", token);
	else
		fprintf(stderr, "vigil: mcp: bearer token from %s\n",
		    vg_args_get(a, "token-file"));
	rc = vg_mcp_serve_http(conf, &l, token);
	vg_mcp_listen_close(&l);
	explicit_bzero(token, strlen(token));
	free(token);
	return rc;
}

static int
cmd_mcp_exec(struct vg_args *a)
{
	static const char *const modes[] = { "auto-deny", "auto-approve",
	    "interactive", NULL };
	struct vg_mcp_conf conf;
	char self[PATH_MAX], *wd = NULL;
	ssize_t n;
	long limit;
	int k, rc;

	memset(&conf, 0, sizeof(conf));
	conf.mode = vg_args_has(a, "mode") ? vg_args_get(a, "mode") :
	    "auto-deny";
	for (k = 0; modes[k] != NULL && strcmp(modes[k], conf.mode) != 0; k++)
		;
	if (modes[k] == NULL)
		return vg_cmd_usage_error(a, "--mode '%s' (valid: auto-deny, "
		    "auto-approve, interactive)", conf.mode);
	if (vg_args_int(a, "output-limit", 64, 1L << 30, 65536, &limit) != 0)
		return VG_EXIT_USAGE;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return vg_cmd_fail(VG_EXIT_INTERNAL, "mcp: cannot find the "
		    "vigil binary (/proc/self/exe): %s", strerror(errno));
	self[n] = '\0';
	if (vg_args_has(a, "workdir") && (wd = realpath(vg_args_get(a,
	    "workdir"), NULL)) == NULL)
		return vg_cmd_usage_error(a, "--workdir '%s': %s",
		    vg_args_get(a, "workdir"), strerror(errno));
	conf.self = self;
	conf.policy = vg_args_get(a, "policy");
	conf.backend = vg_args_get(a, "backend");
	conf.image = vg_args_get(a, "image");
	conf.workdir = wd;
	conf.idle_timeout = vg_args_has(a, "idle-timeout") ?
	    vg_args_get(a, "idle-timeout") : "30m";
	conf.max_age = vg_args_get(a, "max-age");
	conf.output_limit = limit;
	if (vg_args_has(a, "listen"))
		rc = serve_http(a, &conf);
	else if (vg_args_has(a, "token-file"))
		rc = vg_cmd_usage_error(a, "--token-file goes with --listen");
	else {
		fprintf(stderr, "vigil: mcp: serving on stdio (gate mode "
		    "%s)\n", conf.mode);
		rc = vg_mcp_serve(&conf, 0, 1);
	}
	free(wd);
	return rc;
}

const struct vg_cmd_entry vg_cmd_mcp = {
	.name = "mcp",
	.args_usage = "",
	.summary = "serve sessions, runs and the gate to agents over MCP",
	.help = "Serves the Model Context Protocol on stdin and stdout "
	    "(newline-delimited JSON-RPC; logs on stderr), or with --listen "
	    "the Streamable HTTP transport on a loopback port or a unix "
	    "socket (POST /mcp, a bearer token required, other origins "
	    "refused), so that an agent "
	    "(Claude Code, Codex, Goose, ...) uses vigil as its terminal: "
	    "tools to open sessions, run commands in them after the policy "
	    "gate (under --mode, auto-deny by default, every decision "
	    "audited), judge a command, submit a manifest and read a run's "
	    "status, logs and report; resources for reports and task logs.  "
	    "A client that never opens a session gets one of the server's "
	    "own (--backend, --image, ...) at its first command; the "
	    "sessions the server opened are closed when the client goes "
	    "away (docs/mcp.md).",
	.opts = mcp_opts,
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_mcp_exec,
};
