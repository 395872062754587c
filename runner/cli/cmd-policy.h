/*
 * cmd-policy.h - what vigil check and vigil exec share: opening the
 * policy from --policy/--mode/--audit-log, the calling process as the
 * policy context, and auditing each decision to the policy's JSON-lines
 * file and to the state database.
 */
#ifndef VG_CMD_POLICY_H
#define VG_CMD_POLICY_H

#include "runner/cli/cmd.h"
#include "runner/policy/policy.h"
#include "runner/core/store.h"

struct vg_cmd_policy {
	struct vg_policy	*policy;
	struct vg_policy_env	 env;
	struct vg_store		*store;
	int			 store_tried;
	int			 store_borrowed;	/* the caller's */
};

/* Opens the policy for a command with options policy, mode and
 * audit-log; prints errors and returns an exit status on failure. */
int	vg_cmd_policy_open(struct vg_args *a, struct vg_cmd_policy *cp);

/* Audits one decision; prints a warning and returns -1 on failure. */
int	vg_cmd_policy_audit(struct vg_cmd_policy *cp, const char *cmd,
	    const struct vg_verdict *v, const char *verdict);

/* Like vg_cmd_policy_open with the policy section base (a manifest's),
 * the policy file, mode and audit log given (NULL: the file's, the
 * default, base's). */
int	vg_cmd_policy_open_conf(struct vg_args *a,
	    const struct vg_policy_conf *base, const char *file,
	    const char *mode, const char *audit_log, struct vg_cmd_policy *cp);

/* vg_cmd_policy_audit recorded under run_id (a session id) and task (a
 * job number). */
int	vg_cmd_policy_audit_in(struct vg_cmd_policy *cp, const char *run_id,
	    int task, const char *cmd, const struct vg_verdict *v,
	    const char *verdict);

/* Audits to st, the caller's open state database (borrowed: it stays
 * open after vg_cmd_policy_close), instead of opening it again. */
void	vg_cmd_policy_use_store(struct vg_cmd_policy *cp, struct vg_store *st);

/* Appends to out the allow rule of a refusal of the n bytes at cmd
 * (vg_policy_allow_rule): its note indented by two spaces, then the
 * rule's lines by four; yaml and note are scratch buffers. */
enum vg_allow_where vg_cmd_policy_allow(struct vg_buf *out,
	    const struct vg_verdict *v, const char *cmd, size_t n,
	    struct vg_buf *yaml, struct vg_buf *note);

/* Prints the allow rule of a refusal of cmd on stderr. */
void	vg_cmd_policy_allow_stderr(const struct vg_verdict *v,
	    const char *cmd);

void	vg_cmd_policy_close(struct vg_cmd_policy *cp);

#endif
