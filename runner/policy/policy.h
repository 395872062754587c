/*
 * policy.h - the policy gate: every command vigil is asked to run passes
 * vg_policy_eval() before any backend is touched.
 *
 * The gate parses the command as POSIX sh / bash (quoting, parameters with
 * constant propagation, brace expansion, substitutions, here-docs,
 * functions, control flow), unwraps wrappers (sudo, env, timeout, xargs,
 * find -exec, busybox ...), analyses nested code (sh -c, eval, python -c,
 * literal base64/printf decoding), classifies path operands against the
 * working directory and the task's workspace, and reports findings by
 * category.  Rules from the site policy file (a floor manifests cannot
 * weaken) and from the manifest then allow or deny, and the mode decides
 * what a flagged command means.  The gate is accident prevention; process
 * isolation (backends) is the security boundary.
 *
 * A struct vg_policy owns a per-command arena, so one policy must not
 * evaluate in two threads at once; create one per thread instead (one
 * thread may audit while another evaluates, see vg_policy_audit_hold).  Nothing
 * here prints, exits or blocks, except vg_policy_open (reads the site
 * file) and vg_policy_audit (appends to the audit file).
 */
#ifndef VG_POLICY_H
#define VG_POLICY_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"

enum vg_policy_mode {
	VG_POLICY_AUTO_DENY = 0,	/* flagged commands are refused */
	VG_POLICY_AUTO_APPROVE,		/* flagged commands run, audited */
	VG_POLICY_INTERACTIVE,		/* the caller asks on a terminal */
};

/* Category names, as findings, rules and audit records spell them. */
#define VG_CAT_DESTRUCTIVE	"destructive"
#define VG_CAT_DISK		"raw-disk"
#define VG_CAT_PERMISSIONS	"permissions"
#define VG_CAT_REMOTE_CODE	"remote-code"
#define VG_CAT_PRIVILEGE	"privilege"
#define VG_CAT_SYSCONFIG	"system-config"
#define VG_CAT_DISRUPTION	"host-disruption"
#define VG_CAT_EXFILTRATION	"exfiltration"
#define VG_CAT_REVERSE_SHELL	"reverse-shell"
#define VG_CAT_OBFUSCATION	"obfuscation"
#define VG_CAT_SCHEDULER	"scheduler-abuse"
/* Code or a command whose text is built at run time and cannot be
 * computed by the gate (script code, shell, files written then run). */
#define VG_CAT_OPAQUE		"opaque-code"
/* Container backends (docker, singularity): binds of host paths or system
 * trees, host namespaces, devices, privileges.  Only allow rules name it;
 * the shell analysis never reports it. */
#define VG_CAT_HOST_ACCESS	"host-access"
#define VG_CAT_RULE		"rule"		/* a deny rule with no category */
#define VG_CAT_UNPARSEABLE	"unparseable"

/* NULL-terminated list of every category name above. */
extern const char *const vg_policy_categories[];

/* One policy decision, as the gate reports it (policy/audit.c). */
struct vg_audit_rec {
	double		 time;
	const char	*run_id;	/* NULL for vigil check / exec */
	int		 task_index;	/* -1 when none */
	const char	*mode;		/* auto-deny, auto-approve, ... */
	const char	*command;	/* already redacted */
	const char	*verdict;	/* allow | deny | ask-allow |
					   ask-deny | ask-allow-similar */
	const char	*category;	/* NULL when allowed with no finding */
	const char	*rule;		/* rule id, or NULL */
	const char	*reason;
};

struct vg_policy;			/* compiled rules + site floor */

/* Environment for path resolution; every field may be NULL. */
struct vg_policy_ctx {
	const char		*cwd;		/* NULL = treated as unknown */
	const char		*home;		/* the user's home directory */
	const char		*task_dir;	/* VIGIL_TASK_DIR */
	const struct vg_kvs	*env;		/* manifest/task env, plus
						 * TMPDIR, SCRATCH,
						 * SLURM_TMPDIR when set */
};

#define VG_POLICY_MAX_FINDINGS 8

/* One reason to refuse a command. */
struct vg_finding {
	const char	*category;	/* one of VG_CAT_*; static storage */
	char		 rule[64];	/* rule id ("builtin:rm-protected") */
	char		 reason[256];	/* one line */
	size_t		 span_off;	/* offending bytes of the original */
	size_t		 span_len;	/* text (whole command when unknown) */
};

struct vg_verdict {
	int		 allowed;	/* the command may run in this mode */
	int		 flagged;	/* findings survived the rules */
	int		 hard;		/* a site deny rule matched: no mode
					 * or answer can approve it */
	int		 nfindings;	/* findings[0] is the deciding one */
	struct vg_finding findings[VG_POLICY_MAX_FINDINGS];
	char		 summary[512];	/* "deny: destructive (rule): reason" */
};

/*
 * Compiles the policy: the site's file first, always (conf->site_file,
 * which only the site config sets, else /etc/vigil/policy.yaml; a
 * missing default file is an empty site, a missing named one
 * VG_ENOENT), then the layers on top of it, which add rules and can only
 * tighten: conf->file (a manifest's, a user config's or --set's
 * policy.file), extra_file (--policy FILE, may be NULL) and conf's own
 * rules.  A layer's allow rules never lift a site deny rule or the
 * floor; a layer that tries to lift a floor rule or list safe volume
 * drivers is refused (VG_EDENIED).  Rule problems are added to diag as
 * "FILE:LINE:COL: message" and return VG_EINVAL.  On success *out is
 * owned by the caller (vg_policy_free).  The effective mode is
 * conf->mode if set, else a layer file's mode, else the site's, else
 * interactive when stdin is a terminal, else auto-deny; interactive
 * without a terminal becomes auto-deny; auto-approve where the site
 * forbids it is VG_EDENIED.
 */
int	vg_policy_open(const struct vg_policy_conf *conf,
	    const char *extra_file, struct vg_policy **out,
	    struct vg_diag *diag, struct vg_err *e);

/* Compiles a policy from site policy text held in memory (tests, fuzz);
 * name is used in diagnostics. */
int	vg_policy_open_mem(const struct vg_policy_conf *conf, const char *name,
	    const char *site_text, size_t len, struct vg_policy **out,
	    struct vg_diag *diag, struct vg_err *e);

void	vg_policy_free(struct vg_policy *p);

/* The effective mode. */
enum vg_policy_mode vg_policy_mode(const struct vg_policy *p);

/*
 * Overrides the mode (--mode, or auto-deny for submit and Slurm tasks).
 * Fails with VG_EDENIED when the site floor forbids auto-approve, and
 * with VG_EINVAL for interactive when stdin is not a terminal.
 */
int	vg_policy_set_mode(struct vg_policy *p, enum vg_policy_mode m,
	    struct vg_err *e);

/* Parses "auto-deny", "auto-approve", "interactive"; -1 when unknown. */
int	vg_policy_mode_parse(const char *s);
const char *vg_policy_mode_name(enum vg_policy_mode m);

/*
 * Evaluates a shell command (as /bin/sh -c would run it) and fills v.
 * Returns 0 whenever v is filled, including for refused and unparseable
 * commands; a negative vg_rc only for bad arguments.  Never blocks.
 */
int	vg_policy_eval(struct vg_policy *p, const char *command,
	    const struct vg_policy_ctx *ctx, struct vg_verdict *v);

/* Same for len bytes at command; a NUL byte among them makes the
 * command unparseable (builtin:nul-byte) rather than cutting it. */
int	vg_policy_eval_n(struct vg_policy *p, const char *command,
	    size_t len, const struct vg_policy_ctx *ctx, struct vg_verdict *v);

/* Same for a command given as an argv vector (run without a shell). */
int	vg_policy_eval_argv(struct vg_policy *p, char *const argv[],
	    const struct vg_policy_ctx *ctx, struct vg_verdict *v);

/* How one command was judged (vg_policy_explain): the parsed
 * structure, each simple command after expansion and unwrapping, and
 * each finding of the analysis with what the rules made of it. */
struct vg_explain_node {
	int		 depth;		/* 0 for the top */
	const char	*kind;		/* "list", "pipeline", "simple", ... */
	const char	*op;		/* list item: ";" "&" "&&" "||" */
	size_t		 off;		/* span in the command */
	size_t		 len;
};

struct vg_explain_cmd {
	size_t		 off;		/* span in the command */
	size_t		 len;
	char		*norm;		/* words resolved, wrappers removed */
	int		 nested;	/* found in nested code (sh -c, eval) */
};

struct vg_explain_find {
	const char	*category;
	char		*rule;		/* the analysis' rule ("builtin:...") */
	const char	*floor;		/* its floor rule, or NULL */
	char		*reason;
	size_t		 off;
	size_t		 len;
	char		*url;		/* remote-code source, or NULL */
	const char	*decision;	/* "floor", "allowed", "denied",
					 * "flagged" */
	char		*by;		/* the deciding rule's id, or NULL */
	char		*lifted;	/* the site rule lifting its floor */
};

struct vg_explain {
	char			*whole;	/* as whole-command rules see it */
	struct vg_explain_node	*nodes;
	size_t			 nnodes;
	struct vg_explain_cmd	*cmds;
	size_t			 ncmds;
	struct vg_explain_find	*finds;
	size_t			 nfinds;
	struct vg_verdict	 v;	/* as vg_policy_eval gives it */
};

/*
 * Judges len bytes at command as vg_policy_eval_n does and fills x with
 * how (release with vg_explain_release).  Slower than vg_policy_eval:
 * for people, not for the gate.  Returns 0, or VG_EINVAL.
 */
int	vg_policy_explain(struct vg_policy *p, const char *command,
	    size_t len, const struct vg_policy_ctx *ctx, struct vg_explain *x);
void	vg_explain_release(struct vg_explain *x);

/* Where the allow rule for a refused command can go. */
enum vg_allow_where {
	VG_ALLOW_LAYER = 0,	/* any policy file, or the manifest */
	VG_ALLOW_SITE,		/* the site policy file only: it lifts a
				 * floor rule */
	VG_ALLOW_NONE,		/* none: a site deny rule, a layer's deny
				 * rule, an unparseable command */
};

/*
 * For a command refused with verdict v (the len bytes at command, as
 * judged): appends to yaml an allow list that, pasted into a policy file
 * where the result says, lets exactly this command through (a rule whose
 * 'command' glob matches only this text, and one lifting each floor rule
 * it hit), and to note one line saying where it goes; for VG_ALLOW_NONE
 * yaml stays empty and note says why no rule can.  A refusal of more
 * than VG_POLICY_MAX_FINDINGS findings may need more rules.
 */
enum vg_allow_where vg_policy_allow_rule(const struct vg_verdict *v,
	    const char *command, size_t len, struct vg_buf *yaml,
	    struct vg_buf *note);

/* Appends argv as the shell text vg_policy_eval_argv judges: each word
 * quoted, joined by spaces. */
void	vg_policy_argv_text(char *const argv[], struct vg_buf *out);

/*
 * Appends command to out with secrets replaced by "***": values assigned
 * to variables named like *TOKEN*, *SECRET*, *PASSWORD*, *KEY*,
 * credentials in URLs, Authorization headers, and well-known token
 * shapes (ghp_..., AKIA..., xox?-..., glpat-..., sk-...).
 */
void	vg_policy_redact(const char *command, struct vg_buf *out);

/*
 * Records one decision: appends a JSON line to the policy's audit file
 * when one is configured (manifest policy.audit_log or the site file's
 * audit_log), then calls sink (may be NULL) with the same record, which
 * is how the command layer stores it with vg_store_audit.  verdict is
 * "allow", "deny", "ask-allow", "ask-deny" or "ask-allow-similar"
 * (approved by an "all similar" answer to an earlier task of the run);
 * run_id may be NULL and
 * task_index -1.  Blocks on the file write.
 */
typedef int (*vg_audit_sink)(void *arg, const struct vg_audit_rec *rec,
	    struct vg_err *e);
int	vg_policy_audit(struct vg_policy *p, const char *run_id,
	    int task_index, const char *command, const struct vg_verdict *v,
	    const char *verdict, vg_audit_sink sink, void *arg,
	    struct vg_err *e);

/*
 * With on set, vg_policy_audit keeps the audit file's lines in memory
 * until vg_policy_audit_flush writes them with one write(2) (whole lines,
 * O_APPEND, the file kept open); vg_policy_free flushes what is left.
 * vg_policy_audit and the flush touch only the audit state, so one
 * thread may audit while another evaluates with the same policy.
 */
void	vg_policy_audit_hold(struct vg_policy *p, int on);
int	vg_policy_audit_flush(struct vg_policy *p, struct vg_err *e);

/*
 * For callers that format audit lines themselves (vigil check reuses the
 * line of a repeated decision): the buffer of held lines, to which whole
 * lines may be appended before vg_policy_audit_flush; NULL when there is
 * no audit file or lines are not held.  The line of a record is
 * vg_policy_audit_line_head (its time) then vg_policy_audit_line_tail
 * (the other fields and the newline), exactly what vg_policy_audit
 * writes.
 */
struct vg_buf	*vg_policy_audit_held(struct vg_policy *p);
void	vg_policy_audit_line_head(struct vg_buf *b, double time);
void	vg_policy_audit_line_tail(struct vg_buf *b,
	    const struct vg_audit_rec *r);

/*
 * The calling process as a policy context, for vigil check and exec:
 * the working directory, $HOME, $VIGIL_TASK_DIR, and TMPDIR, SCRATCH,
 * SLURM_TMPDIR (and a few other scratch variables) when set.  Strings
 * are borrowed from the environment; release with vg_policy_env_release.
 */
struct vg_policy_env {
	struct vg_policy_ctx	 ctx;
	struct vg_kvs		 env;
	char			 cwd[4096];
};

void	vg_policy_env_init(struct vg_policy_env *pe);
void	vg_policy_env_release(struct vg_policy_env *pe);

#endif
