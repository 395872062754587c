/*
 * fuzz-policy.c - libFuzzer harness for the policy gate: the parser,
 * expansion, the analyser and classifier, nested-code scanning, rules
 * and redaction, on arbitrary bytes.  The first byte picks the context
 * (a rule set with globs, an unknown working directory) so both code
 * paths are reached.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner/policy/policy.h"

static const char site[] =
    "version: 1\n"
    "deny:\n"
    "  - id: no-docker\n"
    "    match: \"docker *\"\n"
    "    reason: containers are not for jobs\n"
    "allow:\n"
    "  - id: scratch\n"
    "    match: \"rm -rf /scratch/*\"\n"
    "    reason: scratch is purged anyway\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vg_policy *plain, *ruled;
	static char k1[] = "SCRATCH", v1[] = "/scratch/u";
	static struct vg_kv kv[] = { { .key = k1, .value = v1 } };
	static struct vg_kvs env = { .v = kv, .n = 1, .cap = 1 };
	struct vg_policy_ctx ctx = { .cwd = "/home/u/p", .home = "/home/u",
	    .env = &env };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_buf red = VG_BUF_INIT;
	struct vg_verdict v;
	struct vg_err e;
	char *cmd;

	if (plain == NULL) {
		vg_err_init(&e);
		if (vg_policy_open_mem(NULL, "fuzz", NULL, 0, &plain, &diag,
		    &e) != 0 || vg_policy_open_mem(NULL, "fuzz-site", site,
		    sizeof(site) - 1, &ruled, &diag, &e) != 0)
			abort();
		vg_diag_release(&diag);
	}
	if (size == 0)
		return 0;
	cmd = malloc(size);
	memcpy(cmd, data + 1, size - 1);
	cmd[size - 1] = '\0';
	if (data[0] & 1)
		ctx.cwd = NULL;
	vg_policy_eval((data[0] & 2) ? ruled : plain, cmd, &ctx, &v);
	if (v.nfindings > 0 && (v.findings[0].span_off > strlen(cmd) ||
	    v.findings[0].span_off + v.findings[0].span_len > strlen(cmd)))
		abort();
	vg_policy_redact(cmd, &red);
	vg_buf_release(&red);
	free(cmd);
	return 0;
}
