/*
 * policy-int.h - internals of the policy gate shared by its files: the
 * per-command arena, the shell syntax tree (parse.c), the analyser state
 * (analyse.c, expand.c, classify.c, nested.c, paths.c, unwrap.c) and the
 * compiled rules (rules.c).
 *
 * Everything built while evaluating one command lives in one arena that
 * is reset, not freed, before the next command, so the hot path makes no
 * malloc calls once the arena has grown to its working size.
 */
#ifndef VG_POLICY_INT_H
#define VG_POLICY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "runner/policy/policy.h"

/* Limits: over any of them the command is "unparseable" (fail closed). */
#define PL_MAX_INPUT	(128 * 1024)	/* bytes of command text */
#define PL_MAX_DEPTH	64		/* syntactic nesting */
#define PL_MAX_NEST	6		/* nested code: sh -c, eval, decode */
#define PL_MAX_WORK	50000		/* expansion and analysis steps */
#define PL_MAX_FIELDS	2048		/* words of one simple command */
#define PL_MAX_BRACE	512		/* words from one brace expansion */
#define PL_MAX_VALUE	(64 * 1024)	/* bytes of one expanded value */
#define PL_MAX_FIND	16		/* findings kept while analysing */

/* A byte that stands for text vigil cannot know (an unset variable, the
 * output of a program).  Input bytes of this value are rewritten. */
#define PL_UNK		'\001'
/* Unquoted brace-expansion metacharacters, marked during expansion so
 * quoted braces and braces from variable values stay literal. */
#define PL_BOPEN	'\002'
#define PL_BCOMMA	'\003'
#define PL_BCLOSE	'\004'

/* ---- arena ---- */

struct pl_blk {
	struct pl_blk	*next;
	size_t		 cap;
	size_t		 used;
	char		 data[];
};

struct pl_arena {
	struct pl_blk	*head;		/* current block first */
	struct pl_blk	*spare;		/* blocks kept across resets */
};

void	*pl_alloc(struct pl_arena *a, size_t n);	/* zeroed */
char	*pl_strndup(struct pl_arena *a, const char *s, size_t n);
void	 pl_arena_reset(struct pl_arena *a);
void	 pl_arena_release(struct pl_arena *a);

/* ---- syntax tree (parse.c) ---- */

enum pl_part_kind {
	PT_LIT = 0,
	PT_PARAM,		/* $x ${x...} */
	PT_CMDSUB,		/* $(...) `...` */
	PT_ARITH,		/* $((...)) */
	PT_PROCIN,		/* <(...) */
	PT_PROCOUT,		/* >(...) */
};

enum pl_quote {
	Q_NONE = 0,
	Q_SINGLE,		/* '..' and $'..': literal */
	Q_DOUBLE,		/* "..": no splitting, no globbing */
};

/* Parameter operators of ${name OP arg}. */
enum pl_pop {
	PO_NONE = 0,
	PO_DEFAULT,		/* - or :- */
	PO_ASSIGN,		/* = or := */
	PO_ALT,			/* + or :+ */
	PO_ERROR,		/* ? or :? */
	PO_LEN,			/* ${#x} */
	PO_RPRE,		/* # */
	PO_RPRE_L,		/* ## */
	PO_RSUF,		/* % */
	PO_RSUF_L,		/* %% */
	PO_REPL,		/* / */
	PO_REPL_ALL,		/* // */
	PO_SUBSTR,		/* :off[:len] */
	PO_UPPER,		/* ^^ ^ */
	PO_LOWER,		/* ,, , */
	PO_INDIRECT,		/* ${!x} */
	PO_OTHER,		/* anything else: unknown value */
};

struct pl_word;
struct pl_node;

struct pl_part {
	uint8_t		 kind;		/* enum pl_part_kind */
	uint8_t		 quote;		/* enum pl_quote */
	uint8_t		 op;		/* enum pl_pop */
	uint8_t		 colon;		/* ":-" rather than "-" */
	const char	*s;		/* literal text or parameter name */
	size_t		 len;
	struct pl_word	*arg;		/* operator argument */
	struct pl_word	*arg2;		/* replacement, substring length */
	struct pl_node	*sub;		/* substitution body */
	struct pl_part	*next;
};

struct pl_word {
	struct pl_part	*parts;
	struct pl_word	*arr;		/* NAME=( ... ) elements */
	int		 isarr;
	size_t		 off;		/* span in the text being parsed */
	size_t		 len;
	struct pl_word	*next;
};

enum pl_redir_kind {
	R_IN = 0,	/* < */
	R_OUT,		/* > >| */
	R_APPEND,	/* >> */
	R_RW,		/* <> */
	R_DUPIN,	/* <& */
	R_DUPOUT,	/* >& */
	R_ALL,		/* &> */
	R_ALLAPP,	/* &>> */
	R_HEREDOC,	/* << <<- */
	R_HERESTR,	/* <<< */
};

struct pl_redir {
	int		 kind;
	int		 fd;		/* -1 = default for the kind */
	struct pl_word	*target;	/* file, fd, here-string, here-doc body */
	int		 quoted;	/* here-doc delimiter was quoted */
	size_t		 off;
	size_t		 len;
	struct pl_redir	*next;
};

enum pl_node_kind {
	N_SIMPLE = 0,
	N_PIPE,
	N_LIST,
	N_SUBSHELL,
	N_GROUP,
	N_IF,
	N_WHILE,
	N_UNTIL,
	N_FOR,
	N_CASE,
	N_CASEITEM,
	N_FUNC,
	N_ARITH,
	N_COND,
};

/* How a list item connects to the next one. */
enum pl_op {
	OP_SEQ = 0,
	OP_BG,
	OP_AND,
	OP_OR,
};

struct pl_node {
	int		 kind;
	int		 op;		/* list items: enum pl_op */
	int		 bang;		/* "! pipeline" */
	size_t		 off;
	size_t		 len;
	struct pl_word	*assigns;	/* N_SIMPLE: NAME=value words */
	struct pl_word	*words;		/* N_SIMPLE, N_COND, N_ARITH, N_CASEITEM
					 * patterns, N_FOR list */
	struct pl_redir	*redirs;
	struct pl_node	*kids;		/* children in order */
	struct pl_node	*next;		/* sibling */
	const char	*name;		/* N_FOR variable, N_FUNC name */
	size_t		 namelen;
	struct pl_word	*subject;	/* N_CASE word */
	int		 forin;		/* N_FOR has an "in" list */
	const char	*arith;		/* N_FOR ((..)) header text */
	size_t		 arithlen;
};

struct pl_parse_err {
	size_t		 off;
	const char	*msg;
};

/*
 * Parses len bytes of POSIX sh / bash into a tree allocated in a.
 * Returns NULL with err filled on a syntax error or a limit.  *work is
 * the shared step budget.
 */
struct pl_node *pl_parse(struct pl_arena *a, const char *text, size_t len,
	    int *work, struct pl_parse_err *err);

/* ---- analyser state ---- */

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
	struct pl_file	*next;
};

struct pl_finding {
	const char	*category;
	const char	*rule;		/* "builtin:..." */
	char		 reason[256];
	size_t		 off;
	size_t		 len;
	const char	*norm;		/* normalised simple command */
};

struct pl_normcmd {
	const char	*s;		/* normalised simple command */
	size_t		 off;
	size_t		 len;
	struct pl_normcmd *next;
};

struct vg_policy;

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

/* Takes the next scratch buffer (emptied); NULL over the limit. */
struct vg_buf *pl_buf_get(struct pl_an *an);
/* Gives back the most recently taken buffer. */
void	pl_buf_put(struct pl_an *an);

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

/* policy.c */
const char *pl_policy_audit_log(const struct vg_policy *p);

/* analyse.c */
void	pl_analyse_node(struct pl_an *an, struct pl_node *n,
	    struct pl_stream *in, struct pl_stream *out);
int	pl_analyse_text(struct pl_an *an, const char *text, size_t len,
	    size_t off, size_t slen, struct pl_stream *in,
	    struct pl_stream *out);
void	pl_find(struct pl_an *an, const char *cat, const char *rule,
	    size_t off, size_t len, const char *fmt, ...)
	    __attribute__((format(printf, 6, 7)));
int	pl_step(struct pl_an *an, int n);
void	pl_span(struct pl_an *an, size_t *off, size_t *len);
void	pl_run_argv(struct pl_an *an, struct pl_field *argv, int argc,
	    size_t off, size_t len, struct pl_stream *in,
	    struct pl_stream *out, int priv);
struct pl_var *pl_var_get(struct pl_an *an, const char *name, size_t nlen);
void	pl_var_set(struct pl_an *an, const char *name, size_t nlen,
	    const char *val, size_t vlen, unsigned taint);
void	pl_file_note(struct pl_an *an, const char *path, unsigned taint,
	    const char *content, size_t clen);
struct pl_file *pl_file_find(struct pl_an *an, const char *path);

/* expand.c */
int	pl_expand_word(struct pl_an *an, struct pl_word *w,
	    struct pl_field **out, int *n, int *cap);
int	pl_expand_single(struct pl_an *an, struct pl_word *w,
	    struct pl_field *f);
void	pl_stream_unknown(struct pl_stream *s, unsigned taint);
void	pl_stream_text(struct pl_stream *s, const char *t, size_t n,
	    unsigned taint);

/* paths.c */
enum pl_pclass {
	PC_WORKSPACE = 0,	/* task dir, cwd subtree, temp/scratch/cache */
	PC_USER,		/* the user's files outside the workspace */
	PC_OTHER,		/* other non-system paths */
	PC_SPECIAL,		/* /dev/null and friends */
	PC_NET,			/* /dev/tcp, /dev/udp */
	PC_DEVICE,		/* block/char devices: raw disk */
	PC_PROTECTED,		/* system trees, home, roots, dotfiles */
};

/* Attributes besides the class. */
#define PA_ETC		0x01	/* under /etc */
#define PA_RC		0x02	/* shell startup file, autostart */
#define PA_SSH		0x04	/* ~/.ssh */
#define PA_SECRET	0x08	/* private key, credentials, shadow */
#define PA_SUDOERS	0x10	/* sudoers, passwd, shadow, group */
#define PA_KERNEL	0x20	/* /proc/sys, /sys, sysrq-trigger */
#define PA_CRON		0x40	/* cron spools and cron.d */
#define PA_ROOT		0x80	/* "/" itself or a glob over it */
#define PA_UNRESOLVED	0x100	/* could not be resolved */
#define PA_SYSBIN	0x200	/* system binaries and libraries */
#define PA_HOME		0x400	/* the home directory itself */
#define PA_PRELOAD	0x800	/* ld.so.preload */
#define PA_HISTORY	0x1000	/* shell history */
#define PA_SYSRQ	0x2000	/* /proc/sysrq-trigger */
#define PA_AUTHKEYS	0x4000	/* authorized_keys */
#define PA_TMPROOT	0x8000	/* a temp or scratch root itself */

struct pl_path {
	int		 cls;		/* enum pl_pclass */
	unsigned	 attr;		/* PA_* */
	const char	*abs;		/* resolved, in the arena */
};

void	pl_path_classify(struct pl_an *an, const struct pl_field *f,
	    struct pl_path *out);
int	pl_path_is_secret(const struct pl_an *an, const char *abs);
const char *pl_path_resolve(struct pl_an *an, const char *s, size_t len);

/* classify.c */
void	pl_classify(struct pl_an *an, struct pl_cmd *c);
const char *pl_prog_name(struct pl_arena *a, const char *s, size_t len);
/* Name tables: idx holds pointers to n records whose first member is
 * their name (const char *).  pl_names_sort orders idx by name;
 * pl_names_find returns the record named name (borrowed) or NULL. */
void	pl_names_sort(const void **idx, size_t n);
const void *pl_names_find(const void *const *idx, size_t n,
	    const char *name);
void	pl_classify_write(struct pl_an *an, const struct pl_field *f,
	    int append, const char *why);

/* unwrap.c: returns the index of the wrapped command, or -1 when argv is
 * not a wrapper; sets *priv for privilege wrappers. */
int	pl_unwrap(struct pl_an *an, struct pl_cmd *c, int *priv,
	    int *handled);

/* nested.c */
void	pl_scan_script(struct pl_an *an, const char *lang, const char *code,
	    size_t len, size_t off, size_t slen, struct pl_stream *in);
int	pl_decode(struct pl_an *an, struct pl_cmd *c, struct pl_stream *out);
void	pl_code_to_interp(struct pl_an *an, struct pl_cmd *c,
	    const char *lang, struct pl_stream *code, size_t off,
	    size_t slen);

#endif
