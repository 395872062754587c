/*
 * actx.h - the analyser context: the record one analysis threads through
 * every stage (struct pl_an: budget, spans, variables, functions, files
 * written so far, findings), the values that flow between stages
 * (fields, streams with their taint, expanded simple commands), and the
 * helpers every stage uses on them (actx.c): the step budget, findings,
 * variables, files, scratch buffers and stream constructors.  It knows
 * nothing of how commands are parsed, expanded or classified.
 */
#ifndef VG_POLICY_ACTX_H
#define VG_POLICY_ACTX_H

#include <stddef.h>

#include "common/buf.h"
#include "runner/policy/bounds.h"
#include "runner/policy/policy.h"

struct pl_arena;
struct pl_node;

/* Taint of a value: where its bytes came from. */
#define T_NET		0x01	/* downloaded content */
#define T_DECODED	0x02	/* output of a decoder (base64 -d, rev ...) */
#define T_SECRET	0x04	/* contents of a secret file */
#define T_ENVDUMP	0x08	/* the environment */
#define T_VAR		0x10	/* an unknown variable or parameter */
#define T_PROG		0x20	/* output of an unknown local program */
#define T_TMP		0x40	/* a mktemp path */
#define T_SETUP		0x80	/* output of a shell-setup tool */
#define T_SOCK		0x100	/* a bidirectional socket tool (nc ...) */
#define T_SHELL		0x200	/* output of a shell reading stdin */
#define T_OPAQUE	0x400	/* a file copied in from elsewhere */

/* Field flags. */
#define F_UNK		0x01	/* contains PL_UNK */
#define F_GLOB		0x02	/* unquoted glob characters */
#define F_QUOTED	0x04	/* some part was quoted */

struct pl_field {
	const char	*s;		/* NUL-terminated, may hold PL_UNK */
	size_t		 len;
	unsigned	 flags;
	unsigned	 taint;
	size_t		 off;		/* span in the original command */
	size_t		 slen;
	struct pl_stream *proc;		/* process substitution content */
};

/* A value flowing through a pipe or a substitution. */
struct pl_stream {
	int		 known;		/* s holds the exact bytes */
	const char	*s;
	size_t		 len;
	unsigned	 taint;
	int		 srcnet;	/* producer name for reasons */
	const char	*producer;	/* first producing command name */
	const char	*url;		/* the one URL downloaded, or NULL */
	const char	*items;		/* xargs: class hint of the items */
};

struct pl_var {
	const char	*name;
	size_t		 nlen;
	const char	*val;		/* NULL = unknown */
	size_t		 vlen;
	unsigned	 taint;
	int		 isarr;		/* elements separated by NUL */
	struct pl_var	*next;
};

struct pl_func {
	const char	*name;
	size_t		 nlen;
	struct pl_node	*body;
	int		 active;	/* being analysed (recursion) */
	struct pl_func	*next;
};

/* A file written earlier in the same command (saved-then-run). */
struct pl_file {
	const char	*path;		/* resolved */
	const char	*base;		/* basename */
	unsigned	 taint;
	const char	*content;	/* known content, or NULL */
	size_t		 clen;
	int		 active;	/* its commands are being judged */
	struct pl_file	*next;
};

struct pl_finding {
	const char	*category;
	const char	*rule;		/* "builtin:..." */
	const char	*floor;		/* "floor:..." when the built-in floor
					 * refuses it in every mode */
	char		 reason[256];
	size_t		 off;
	size_t		 len;
	const char	*norm;		/* normalised simple command */
	const char	*url;		/* remote-code: the source URL */
	int		 urls;		/* sources of the rule's findings
					 * (1: url is the only one) */
};

struct pl_normcmd {
	const char	*s;		/* normalised simple command */
	size_t		 off;
	size_t		 len;
	int		 nest;		/* depth of nested code it is in */
	struct pl_normcmd *next;
};

/* Analysis of one command. */
struct pl_an {
	struct pl_arena	*a;
	const struct vg_policy_ctx *ctx;
	const char	*src;		/* the original command */
	size_t		 srclen;
	int		 work;		/* remaining steps */
	int		 nest;		/* nested code depth */
	int		 fdepth;	/* function call depth */
	int		 over;		/* a limit was hit */
	const char	*overwhy;
	/* span override while analysing nested text */
	int		 spanfix;
	size_t		 span_off;
	size_t		 span_len;
	const char	*cur;		/* text being analysed (for spans) */

	const char	*home;
	const char	*cwd;		/* current (cd changes it) */
	const char	*wscwd;		/* initial cwd when it is a workspace */
	const char	*startcwd;	/* initial cwd, always */
	int		 relpath;	/* classifying a relative operand */
	const char	*task_dir;
	const char	*tmproots[8];
	int		 ntmproots;

	struct pl_var	*vars;
	struct pl_func	*funcs;
	struct pl_var	*aliases;
	struct pl_file	*files;
	const char	*pos[10];	/* positional parameters, NULL unknown */
	int		 npos;		/* -1 = unknown */
	unsigned	 postaint;	/* where unknown positional text came
					 * from (T_*) */
	int		 loopdepth;	/* inside while/until/for */
	int		 infloop;	/* inside an unbounded loop */
	long		 loopiter;	/* estimated iterations of loops */
	int		 bg;		/* current command runs in background */
	int		 inpipe;	/* current command is a pipeline stage */
	const char	*curfunc;	/* function being defined/analysed */
	size_t		 curfunclen;
	int		 selfcall;	/* curfunc called itself in bg/pipe */
	int		 sleeps;	/* loop body sleeps or waits */

	struct pl_finding find[PL_MAX_FIND];
	int		 nfind;
	const char	*find_url;	/* source URL of the next finding */
	int		 want_norm;	/* collect normalised commands */
	struct pl_normcmd *norms;
	const char	*curnorm;
	struct vg_buf	*bufs;		/* PL_MAX_BUFS scratch buffers, owned
					 * by the policy, used as a stack */
	int		 nbufs;
	int		 loopbg;	/* background jobs in current loop */
	int		 loopwait;	/* wait/sleep in current loop */
	int		 looppoll;	/* scheduler queries in an endless loop */
};

#define PL_MAX_BUFS	96

/* A simple command after expansion, given to the classifier. */
struct pl_cmd {
	struct pl_field	*argv;
	int		 argc;
	const char	*name;		/* normalised program name */
	size_t		 off;		/* span of the whole command */
	size_t		 len;
	struct pl_stream *in;		/* stdin (never NULL) */
	struct pl_stream *out;		/* stdout to fill (never NULL) */
	int		 wrapped_priv;	/* ran under sudo/doas/su */
	const char	*norm;
};

/* Takes the next scratch buffer (emptied); NULL over the limit. */
struct vg_buf *pl_buf_get(struct pl_an *an);
/* Gives back the most recently taken buffer. */
void	pl_buf_put(struct pl_an *an);

/* Spends n steps of the budget; 0 when it ran out or a limit was hit. */
int	pl_step(struct pl_an *an, int n);
/* Replaces the span by the outer one while analysing nested text. */
void	pl_span(struct pl_an *an, size_t *off, size_t *len);
/* Records a finding (once per rule, at most PL_MAX_FIND). */
void	pl_find(struct pl_an *an, const char *cat, const char *rule,
	    size_t off, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));

/* Records a finding that is also a rule of the built-in floor (one of
 * the PL_FLOOR_* ids): refused in every mode unless the site policy
 * lifts that id. */
void	pl_find_floor(struct pl_an *an, const char *floor, const char *cat,
	    const char *rule, size_t off, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 7, 8)));

/* The rules of the built-in floor (docs/policy.md lists them). */
#define PL_FLOOR_DELETE		"floor:delete-root"
#define PL_FLOOR_DISK		"floor:disk-destroy"
#define PL_FLOOR_FORKBOMB	"floor:fork-bomb"
#define PL_FLOOR_POWER		"floor:host-power"
#define PL_FLOOR_KILLALL	"floor:kill-all"
#define PL_FLOOR_PERMS		"floor:perms-root"
#define PL_FLOOR_OPAQUE		"floor:opaque-code"

/* The variable named name, or NULL. */
struct pl_var *pl_var_get(struct pl_an *an, const char *name, size_t nlen);
/* Sets a variable; val NULL makes its value unknown. */
void	pl_var_set(struct pl_an *an, const char *name, size_t nlen,
	    const char *val, size_t vlen, unsigned taint);
/* Notes that the command wrote path (saved-then-run detection). */
void	pl_file_note(struct pl_an *an, const char *path, unsigned taint,
	    const char *content, size_t clen);
/* The file written earlier at path, or NULL. */
struct pl_file *pl_file_find(struct pl_an *an, const char *path);

/* Sets the positional parameters $1... to the n words at argv (unknown
 * ones NULL), remembering where their unknown text came from. */
void	pl_pos_set(struct pl_an *an, const struct pl_field *argv, int n);

/* Makes s an unknown stream carrying taint. */
void	pl_stream_unknown(struct pl_stream *s, unsigned taint);
/* Makes s a known stream of the n bytes at t (borrowed). */
void	pl_stream_text(struct pl_stream *s, const char *t, size_t n,
	    unsigned taint);

#endif
