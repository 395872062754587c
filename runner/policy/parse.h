/*
 * parse.h - the shell syntax tree and the parser that builds it
 * (parse.c): words made of parts (literals, parameters, substitutions),
 * redirections, and nodes for simple commands, pipelines, lists and the
 * compound commands of POSIX sh and bash.  The tree lives in the arena it
 * was parsed into and is only read afterwards.
 */
#ifndef VG_POLICY_PARSE_H
#define VG_POLICY_PARSE_H

#include <stddef.h>
#include <stdint.h>

struct pl_arena;

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

#endif
