/*
 * optrun.h - what the table of options that run commands (optrun.c)
 * offers the analyser: the commands named by a program's options, its
 * configuration given on the command line and its environment.
 */
#ifndef VG_POLICY_OPTRUN_H
#define VG_POLICY_OPTRUN_H

#include "runner/policy/actx.h"

/* Analyses, as the commands they are, the commands c's options name
 * ("git -c core.pager=CMD", "tar --to-command=CMD", "sed '1e CMD'",
 * "vim -c '!CMD'" ...); c itself is classified afterwards as usual. */
void	pl_optrun(struct pl_an *an, const struct pl_cmd *c);
/* Analyses the command an environment assignment "NAME=VALUE" (f)
 * names when NAME is a variable programs run (PAGER, GIT_SSH_COMMAND,
 * LESSOPEN ...); off and len are the span to report. */
void	pl_optrun_env(struct pl_an *an, const struct pl_field *f,
	    size_t off, size_t len);

#endif
