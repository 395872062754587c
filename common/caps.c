/*
 * caps.c - Linux capability names and numbers (see caps.h).  The table
 * follows linux/capability.h; numbers are the kernel's ABI.
 */
#include <string.h>
#include <strings.h>

#include "common/caps.h"

/* Index: the capability's number. */
static const char *const cap_names[] = {
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid",
	"kill", "setgid", "setuid", "setpcap", "linux_immutable",
	"net_bind_service", "net_broadcast", "net_admin", "net_raw",
	"ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot",
	"sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
	"sys_resource", "sys_time", "sys_tty_config", "mknod", "lease",
	"audit_write", "audit_control", "setfcap", "mac_override",
	"mac_admin", "syslog", "wake_alarm", "block_suspend", "audit_read",
	"perfmon", "bpf", "checkpoint_restore",
};
#define NCAPS	((int)(sizeof(cap_names) / sizeof(cap_names[0])))

int
vg_cap_number(const char *name)
{
	int i;

	if (name == NULL)
		return -1;
	if (strncasecmp(name, "cap_", 4) == 0)
		name += 4;
	for (i = 0; i < NCAPS; i++)
		if (strcasecmp(name, cap_names[i]) == 0)
			return i;
	return -1;
}

const char *
vg_cap_name(int c)
{
	return c >= 0 && c < NCAPS ? cap_names[c] : "?";
}

int
vg_cap_mask(const struct vg_strv *v, uint64_t *mask, const char **bad)
{
	size_t i;
	int c;

	*mask = 0;
	*bad = NULL;
	for (i = 0; i < v->n; i++) {
		if ((c = vg_cap_number(v->v[i])) < 0) {
			*bad = v->v[i];
			*mask = 0;
			return -1;
		}
		*mask |= 1ULL << c;
	}
	return 0;
}

void
vg_cap_list(struct vg_buf *out)
{
	int i;

	for (i = 0; i < NCAPS; i++)
		vg_buf_printf(out, "%s%s", i > 0 ? ", " : "", cap_names[i]);
}

void
vg_cap_names(uint64_t mask, struct vg_buf *out)
{
	int i, n = 0;

	for (i = 0; i < NCAPS; i++)
		if (mask & (1ULL << i))
			vg_buf_printf(out, "%s%s", n++ > 0 ? "," : "",
			    cap_names[i]);
	if (n == 0)
		vg_buf_adds(out, "none");
}
