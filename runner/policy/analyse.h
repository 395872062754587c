/*
 * analyse.h - what the analyser walk (analyse.c) offers the other
 * stages: analysing a tree, analysing nested shell text (sh -c, eval,
 * decoded scripts), and running an expanded argv as a simple command
 * (what a wrapper or xargs would run).  These are the interpreter's
 * recursion: expansion, unwrapping, classification and nested code come
 * back here for the code they discover.
 */
#ifndef VG_POLICY_ANALYSE_H
#define VG_POLICY_ANALYSE_H

#include <stddef.h>

#include "runner/policy/actx.h"

struct pl_node;

/* Analyses the subtree at n as the shell would run it, with stdin in;
 * fills out with what it writes to stdout. */
void	pl_analyse_node(struct pl_an *an, struct pl_node *n,
	    struct pl_stream *in, struct pl_stream *out);
/* A floor finding (span off/len) when the script at root starts copies
 * of itself ("$0 & $0", "$0 | $0") in a pipeline or the background. */
void	pl_script_self_spawn(struct pl_an *an, const struct pl_node *root,
	    size_t off, size_t len);
/*
 * Parses and analyses len bytes of shell text as nested code; findings
 * get the span off/slen of the original command.  Returns 0, or -1 when
 * the text does not parse (a finding says so) or a limit is hit.
 */
int	pl_analyse_text(struct pl_an *an, const char *text, size_t len,
	    size_t off, size_t slen, struct pl_stream *in,
	    struct pl_stream *out);
/* Runs argv (already expanded) as a simple command; priv when it runs
 * under a privilege wrapper. */
void	pl_run_argv(struct pl_an *an, struct pl_field *argv, int argc,
	    size_t off, size_t len, struct pl_stream *in,
	    struct pl_stream *out, int priv);

#endif
