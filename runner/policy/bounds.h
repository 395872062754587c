/*
 * bounds.h - the limits of one evaluation and the in-band marker bytes,
 * shared by the parser, the expander and the analyser.  Over any limit
 * the command is "unparseable": the gate fails closed.
 */
#ifndef VG_POLICY_BOUNDS_H
#define VG_POLICY_BOUNDS_H

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

#endif
