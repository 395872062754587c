/*
 * shim-sandbox.c - the part of the sandbox that runs in vigil-shim, last
 * thing before the task starts: no_new_privs, the Landlock ruleset, the
 * seccomp filter (OpenSSH's order: limits are the task's own, set after
 * vfork; then no_new_privs, then the filters).  Everything was compiled
 * by vigil (sandbox.c) into the launch description; nothing here needs
 * libseccomp.  The namespaces were entered before the shim was exec'd.
 * Last of all, in the task's own process, its capabilities are dropped
 * (vg_shim_drop_caps): the shim keeps what it needs, the task nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>

#include "backends/shim.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset	444
#define SYS_landlock_add_rule		445
#define SYS_landlock_restrict_self	446
#endif
#define LL_RULE_PATH_BENEATH	1
/* execute, read file, read dir: Documentation/userspace-api/landlock.rst */
#define LL_READ			((1ULL << 0) | (1ULL << 2) | (1ULL << 3))
#define LL_FS_READ_FILE		(1ULL << 2)

struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

struct ll_path_beneath {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

/* Adds a rule for one path opened here. */
static int
add_path_rule(int ruleset, const char *path, uint64_t access)
{
	struct ll_path_beneath pb;
	int fd, rc = 0;

	if (path == NULL)
		return 0;
	if ((fd = open(path, O_PATH | O_CLOEXEC | O_DIRECTORY)) < 0)
		return -errno;
	pb.allowed_access = access;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb,
	    0) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Builds and enforces the Landlock ruleset of l. */
static int
landlock_apply(const struct vg_shim_launch *l)
{
	struct ll_ruleset_attr attr = {
		.handled_access_fs = l->ll_fs,
		.handled_access_net = l->ll_net,
		.scoped = l->ll_scoped,
	};
	struct ll_path_beneath pb;
	uint32_t i;
	int ruleset, rc = 0;

	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    (size_t)l->ll_attr_size, 0);
	if (ruleset < 0)
		return -errno;
	for (i = 0; i < l->nrules && rc == 0; i++) {
		if (l->rules[i].access == 0)
			continue;
		pb.allowed_access = l->rules[i].access;
		pb.parent_fd = l->rules[i].fd;
		if (syscall(SYS_landlock_add_rule, ruleset,
		    LL_RULE_PATH_BENEATH, &pb, 0) != 0)
			rc = -errno;
	}
	/* Opened here, after the task's own /proc was mounted: Landlock
	 * skips the mount point a mount hides, so a rule on the host's
	 * /proc would not cover it. */
	if (rc == 0 && (l->flags & VG_SHIM_LL_PROC))
		rc = add_path_rule(ruleset, "/proc", LL_READ & l->ll_fs);
	if (rc == 0)
		rc = add_path_rule(ruleset, vg_shim_launch_str(l, l->task_dir),
		    l->ll_task_access);
	if (rc == 0)
		rc = add_path_rule(ruleset,
		    vg_shim_launch_str(l, l->scratch_dir), l->ll_task_access);
	/* The temp directory is normally beneath the task directory and
	 * covered by its rule, except when bound over /tmp: Landlock walks
	 * up from a mount's root to its mount point, not to task_dir. */
	if (rc == 0 && (l->flags & VG_SHIM_LL_TMP))
		rc = add_path_rule(ruleset, vg_shim_launch_str(l, l->tmp_dir),
		    l->ll_task_access);
	if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
		rc = -errno;
	close(ruleset);
	return rc;
}

int
vg_shim_confine(const struct vg_shim_launch *l, const char **stage)
{
	struct sock_fprog prog;
	int rc;

	if (l->flags & VG_SHIM_NNP) {
		*stage = "no_new_privs";
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			return -errno;
	}
	if (l->flags & VG_SHIM_LANDLOCK) {
		*stage = "landlock";
		if ((rc = landlock_apply(l)) != 0)
			return rc;
	}
	if (l->nbpf > 0) {
		*stage = "seccomp";
		prog.len = (unsigned short)l->nbpf;
		prog.filter = (struct sock_filter *)(uintptr_t)
		    ((const char *)l + l->bpf_off);
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
		    &prog) != 0)
			return -errno;
	}
	return 0;
}

/* The highest capability number the kernel knows (CAP_LAST_CAP of the
 * running kernel, not of the headers this was built with). */
static int
cap_last(void)
{
	int c;

	/* PR_CAPBSET_READ fails with EINVAL past the last one. */
	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0) < 0)
			break;
	return c - 1;
}

int
vg_shim_drop_caps(const struct vg_shim_launch *l, const char **stage)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	uint64_t keep = l->caps_keep;
	int c, last;

	memset(d, 0, sizeof(d));
	*stage = "capabilities";
	if (syscall(SYS_capget, &h, d) != 0)
		return -errno;
	keep &= (uint64_t)d[1].permitted << 32 | d[0].permitted;
	/* Without CAP_SETPCAP (vigil not root, no user namespace) the
	 * bounding set and securebits cannot be changed: whatever such a
	 * process holds (usually nothing) goes from its own sets. */
	if (!(d[0].effective & (1u << CAP_SETPCAP))) {
		if (d[0].permitted == 0 && d[1].permitted == 0)
			return 0;
		(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0,
		    0);
		keep = (l->flags & VG_SHIM_DROPCAPS) ? keep :
		    ((uint64_t)d[1].permitted << 32 | d[0].permitted) &
		    ~(1ULL << CAP_SYS_PTRACE);
		d[0].permitted = d[0].effective = d[0].inheritable =
		    (uint32_t)keep;
		d[1].permitted = d[1].effective = d[1].inheritable =
		    (uint32_t)(keep >> 32);
		*stage = "capset";
		return syscall(SYS_capset, &h, d) != 0 ? -errno : 0;
	}
	last = cap_last();
	if (!(l->flags & VG_SHIM_DROPCAPS)) {
		/* Level none: the supervisor alone is put out of reach. */
		*stage = "capability bounding set";
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0)
			return -errno;
		(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER,
		    CAP_SYS_PTRACE, 0, 0);
		*stage = "capset";
		d[0].permitted &= ~(1u << CAP_SYS_PTRACE);
		d[0].effective &= ~(1u << CAP_SYS_PTRACE);
		d[0].inheritable &= ~(1u << CAP_SYS_PTRACE);
		return syscall(SYS_capset, &h, d) != 0 ? -errno : 0;
	}
	/* While CAP_SETPCAP is still held: the securebits, then the
	 * bounding set.  NOROOT: uid 0 gains no capability at execve;
	 * NO_SETUID_FIXUP: none at setuid either; KEEP_CAPS locked off. */
	*stage = "securebits";
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
	    SECBIT_KEEP_CAPS_LOCKED | (keep == 0 ?
	    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED :
	    0), 0, 0, 0) != 0)
		return -errno;
	*stage = "capability bounding set";
	for (c = 0; c <= last; c++)
		if (!(keep & (1ULL << c)) &&
		    prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) != 0)
			return -errno;
	*stage = "ambient capabilities";
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
	    errno != EINVAL)
		return -errno;
	/* Permitted and effective: only the kept ones, inheritable too
	 * (an ambient capability must be permitted and inheritable). */
	*stage = "capset";
	d[0].permitted = d[0].effective = d[0].inheritable =
	    (uint32_t)(keep & d[0].permitted);
	d[1].permitted = d[1].effective = d[1].inheritable =
	    (uint32_t)((keep >> 32) & d[1].permitted);
	if (syscall(SYS_capset, &h, d) != 0)
		return -errno;
	*stage = "ambient capabilities";
	for (c = 0; c <= last && keep != 0; c++)
		if ((keep & (1ULL << c)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
		    (unsigned long)c, 0, 0) != 0)
			return -errno;
	return 0;
}
