/*
 * rules.h - what the rules (rules.c) offer the entry points in
 * policy.c: the site policy file and the manifest's rules compiled into
 * one rule set, and applying it to the findings of an analysis.
 */
#ifndef VG_POLICY_RULES_H
#define VG_POLICY_RULES_H

#include <stddef.h>

#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "runner/policy/actx.h"

struct pl_rule {
	char		*id;		/* "site:ID" for site rules */
	char		*match;		/* glob, or NULL */
	const char	*category;	/* static category, or NULL */
	char		*reason;
	int		 deny;
	int		 site;
	const char	*floor;		/* site allow: the floor rule it lifts
					 * (static "floor:..."), or NULL */
	char		*command;	/* allow: glob on the whole command
					 * (pl_norm_whole), or NULL */
	char		*url;		/* allow: remote-code source URL
					 * prefix, or NULL */
};

/* A volume driver the site file lists as safe (safe_volume_drivers). */
struct pl_driver {
	char		*name;
	char		*reason;
	int		 line;		/* where the site file names it */
};

struct pl_rules {
	struct pl_rule	*v;
	size_t		 n;
	size_t		 cap;
	int		 has_match;	/* some rule has a glob */
	int		 has_command;	/* some rule has a 'command' glob */
	int		 site_mode;	/* -1 = not set */
	int		 forbid_approve;
	char		*audit_log;	/* from the site file */
	struct pl_driver *drivers;	/* safe_volume_drivers */
	size_t		 ndrivers;
	size_t		 cap_drivers;
};

/* The default site policy file, and the most of it that is read. */
#define PL_SITE_DEFAULT	"/etc/vigil/policy.yaml"
#define PL_SITE_MAX	(1024 * 1024)

/* Parses site policy text; problems go to d as FILE:LINE:COL lines. */
int	pl_rules_site(struct pl_rules *rs, const char *file, const char *text,
	    size_t len, struct vg_diag *d, struct vg_err *e);
/* Adds the manifest's rules after validating them. */
int	pl_rules_conf(struct pl_rules *rs, const struct vg_policy_conf *conf,
	    struct vg_diag *d, struct vg_err *e);
/* What the rules made of one finding of the analysis (explain). */
enum pl_trace_what {
	PL_TR_FLAGGED = 0,	/* no rule decided: the mode does */
	PL_TR_FLOOR,		/* the built-in floor refuses it */
	PL_TR_ALLOWED,		/* an allow rule dropped it */
	PL_TR_DENIED,		/* a deny rule took it over */
};

struct pl_trace {
	enum pl_trace_what what;
	const char	*by;		/* the deciding rule's id, or NULL */
	const char	*lifted;	/* the site rule that lifted its floor
					 * rule, or NULL */
};

/* Applies the rules to an analysis: fills out (PL_MAX_FIND) and *hard;
 * with tr set (an->nfind entries), what became of each finding. */
void	pl_rules_apply(const struct pl_rules *rs, struct pl_an *an,
	    struct pl_finding *out, int *nout, int *hard, struct pl_trace *tr);
void	pl_rules_release(struct pl_rules *rs);

/*
 * Writes the n bytes of command s to out (n + 1 bytes) as whole-command
 * rules see it: outside quotes, each run of blanks (spaces, tabs,
 * backslash-newlines) becomes one space, and blanks at the start and
 * end go, as do blanks next to a newline; quoted text and escaped
 * characters are kept as they are.  Returns the length written.
 */
size_t	pl_norm_whole(const char *s, size_t n, char *out);

/* True when url (n bytes, as a finding carries it) lies under the rule
 * URL prefix (see docs/policy.md): the same scheme and host (and
 * port), and a path equal to the prefix's or below it at a '/'.  A URL
 * with a user part, dot segments or encoded dots, slashes or
 * backslashes never lies under any prefix. */
int	pl_url_under(const char *prefix, const char *url, size_t n);

/* NULL-terminated list of the built-in floor's rule ids. */
extern const char *const pl_floor_rules[];

#endif
