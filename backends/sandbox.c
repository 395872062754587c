/*
 * sandbox.c - namespaces, Landlock and seccomp for local tasks (see
 * sandbox.h for the split between per-run compilation and the per-task,
 * async-signal-safe child side).
 *
 * Following OpenSSH's seccomp sandbox, the order in the child is: limits
 * (set by the caller), no_new_privs, then the filters; the seccomp filter
 * checks the architecture first (libseccomp emits that check; a syscall
 * of a foreign ABI kills the process).
 *
 * Landlock: the kernel's own header may predate the ABI this host runs,
 * so the constants and the ruleset attribute are defined here from the
 * kernel documentation (Documentation/userspace-api/landlock.rst).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "common/caps.h"
#include "common/buf.h"
#include "backends/cgroup.h"
#include "backends/host-sockets.h"
#include "backends/sandbox.h"
#include "backends/sandbox-explain.h"
#include "backends/sandbox-workdir.h"
#include "backends/shim.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset	444
#define SYS_landlock_add_rule		445
#define SYS_landlock_restrict_self	446
#endif
#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_RULE_PATH_BENEATH		1

#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_REMOVE_DIR	(1ULL << 4)
#define LL_FS_REMOVE_FILE	(1ULL << 5)
#define LL_FS_MAKE_CHAR		(1ULL << 6)
#define LL_FS_MAKE_DIR		(1ULL << 7)
#define LL_FS_MAKE_REG		(1ULL << 8)
#define LL_FS_MAKE_SOCK		(1ULL << 9)
#define LL_FS_MAKE_FIFO		(1ULL << 10)
#define LL_FS_MAKE_BLOCK	(1ULL << 11)
#define LL_FS_MAKE_SYM		(1ULL << 12)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ULL << 1)	/* ABI 6 */

#define LL_READ		(LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_WRITE_FILE	(LL_FS_WRITE_FILE | LL_FS_TRUNCATE)
#define LL_WRITE_DIR	(LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | \
	LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | \
	LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM | LL_FS_REFER)
/* Rights no task is given beyond the devices it is granted: making a
 * device node, and ioctl on a device. */
#define LL_NO_DEV	(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV)
/* Rights that only apply to directories (EINVAL on a file rule). */
#define LL_DIR_ONLY	(LL_FS_READ_DIR | LL_WRITE_DIR)

/* struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix. */
struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;	/* ABI 4 */
	uint64_t	scoped;			/* ABI 6 */
};

struct ll_path_beneath {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

/* Paths writable in `standard` and `strict` besides the task's own. */
static const char *const dev_writable[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm",
};

/* GPU nodes: each GPU's own, granted to the attempt given that GPU, and
 * the control nodes every attempt with GPUs needs (gpu.h). */
static const char *const gpu_own[] = {
	"/dev/nvidia[0-9]*", "/dev/dri/renderD*",
};
static const char *const gpu_shared[] = {
	"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
	"/dev/nvidia-modeset", "/dev/nvidia-caps/*", "/dev/kfd",
};

/* System trees readable in `strict`; /proc too, opened in the child
 * (landlock_apply). */
static const char *const sys_readable[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/opt", "/sys", "/dev", "/run", "/var/lib",
};

/* Syscalls that fail with EPERM in `standard` and `strict`. */
static const char *const denied_syscalls[] = {
	"mount", "umount", "umount2", "pivot_root", "chroot", "reboot",
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "swapon", "swapoff", "acct", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "stime", "iopl",
	"ioperm", "bpf", "perf_event_open", "keyctl", "add_key",
	"request_key", "open_by_handle_at", "userfaultfd", "fsopen",
	"fsmount", "fsconfig", "move_mount", "open_tree", "mount_setattr",
};

#define MAX_STATIC_RULES VG_SHIM_MAX_RULES
/* GPU device nodes a sandbox prepares rules for. */
#define MAX_GPU_RULES	64
/* Of the shim's rules, kept free for one attempt's GPU grants. */
#define MAX_GPU_DEVS_PER_TASK	16

struct ll_rule {
	int		fd;		/* O_PATH */
	uint64_t	access;
	char		*tmp_path;	/* path when under /tmp (strict keeps it) */
	int		is_dir;
};

struct vg_sandbox {
	enum vg_isolation_level	 asked;
	enum vg_isolation_level	 level;		/* delivered */
	unsigned long long	 clone_flags;
	int			 pidns;
	int			 userns;
	int			 netns;
	/* isolation.network allow-list: the task joins the network
	 * namespace the egress proxy listens in (egress_nsfd, set by
	 * vg_sandbox_set_egress) instead of a new one. */
	int			 egress;
	int			 egress_nsfd;
	int			 private_tmp;
	int			 own_proc;	/* mount /proc of the PID ns */
	int			 own_shm;	/* mount a tmpfs on /dev/shm */
	char			 uid_map[32];
	char			 gid_map[32];

	int			 nnp;
	int			 dropcaps;	/* the task holds no caps */
	uint64_t		 caps_keep;	/* but these (host access) */
	int			 ll_abi;		/* 0: no Landlock */
	struct ll_ruleset_attr	 ll_attr;
	size_t			 ll_attr_size;
	uint64_t		 ll_task_access;	/* task, scratch, tmp */
	struct ll_rule		 rules[MAX_STATIC_RULES];
	int			 nrules;
	/* Per-GPU nodes (own: granted to the attempt given that GPU) and
	 * the shared control nodes (granted to any attempt with GPUs),
	 * opened once; vg_sandbox_launch picks per attempt. */
	struct ll_rule		 gpu_rules[MAX_GPU_RULES];
	char			*gpu_paths[MAX_GPU_RULES];
	int			 gpu_shared[MAX_GPU_RULES];
	int			 ngpu_rules;
	uint64_t		 dev_access;		/* rights on a device */
	int			 listed_devices;	/* isolation.devices */

	/* Host sockets covered in the task's mount namespace (paths, and
	 * at strict spared when beneath the task's own directories). */
	char			**hide;
	size_t			 nhide;
	int			 hide_strict;

	struct sock_fprog	 prog;			/* len 0: none */
	int			 ptrace_denied;		/* by the filter */
	struct vg_buf		 downgrades;

	/* The run's working directory: writable (standard), readable
	 * (strict), its protected entries bound read-only. */
	struct vg_wd		 wd;
	/* What tasks may write and (strict) read besides their own
	 * directories, to tell a refusal (vg_sandbox_explain). */
	struct vg_strv		 wpaths;
	struct vg_strv		 rpaths;
	int			 network;
};

const char *
vg_isolation_name(enum vg_isolation_level level)
{
	switch (level) {
	case VG_ISO_NONE:	return "none";
	case VG_ISO_STANDARD:	return "standard";
	case VG_ISO_STRICT:	return "strict";
	}
	return "?";
}

/* Tries the namespaces in a throw-away child; returns a bit per kind. */
static int
probe_namespaces(int root)
{
	enum { USERNS = 1, PIDNS = 2, NETNS = 4 };
	pid_t pid;
	int st, ok = 0;

	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) == 0)
			ok |= USERNS;
		else if (!root)
			_exit(0);
		if (unshare(CLONE_NEWPID) == 0)
			ok |= PIDNS;
		if (unshare(CLONE_NEWNET) == 0)
			ok |= NETNS;
		_exit(ok);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Finds the cgroup version and whether our v2 cgroup is ours to use. */
static void
probe_cgroup(struct vg_host_caps *c)
{
	struct statfs sf;
	char line[512], dir[300];
	const char *mnt = NULL;
	FILE *f;

	c->cgroup_version = 0;
	if (statfs("/sys/fs/cgroup", &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC) {
		c->cgroup_version = 2;
		mnt = "/sys/fs/cgroup";
	} else if (statfs("/sys/fs/cgroup/unified", &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC) {
		c->cgroup_version = 12;
		mnt = "/sys/fs/cgroup/unified";
	} else if (access("/sys/fs/cgroup", F_OK) == 0)
		c->cgroup_version = 1;
	if (mnt == NULL || (f = fopen("/proc/self/cgroup", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(c->cgroup_path, sizeof(c->cgroup_path), "%s%.200s",
		    mnt, strcmp(line + 3, "/") == 0 ? "" : line + 3);
	}
	fclose(f);
	if (c->cgroup_path[0] == '\0')
		return;
	/* Delegated: we may create children, and memory and pids are
	 * enabled for them. */
	snprintf(dir, sizeof(dir), "%s/cgroup.subtree_control",
	    c->cgroup_path);
	if (access(c->cgroup_path, W_OK) != 0 ||
	    (f = fopen(dir, "re")) == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL &&
	    strstr(line, "memory") != NULL && strstr(line, "pids") != NULL)
		c->cgroup_delegated = 1;
	fclose(f);
}

/* A namespace verdict kept by vg_host_caps_keep (bits of
 * probe_namespaces), or -1 to probe. */
static int kept_ns = -1;

void
vg_host_caps_word(char *buf, size_t size)
{
	const struct vg_host_caps *c = vg_host_caps();

	snprintf(buf, size, "ns%d.api%u", (c->userns ? 1 : 0) |
	    (c->pidns ? 2 : 0) | (c->netns ? 4 : 0),
	    c->seccomp ? seccomp_api_get() : 0);
}

int
vg_host_caps_keep(const char *word)
{
	unsigned ns, api;
	int n = 0;

	if (word == NULL || sscanf(word, "ns%u.api%u%n", &ns, &api, &n) != 2 ||
	    word[n] != '\0' || ns > 7)
		return -1;
	/* The API level libseccomp found at the start, so that it does not
	 * probe the kernel's seccomp features again. */
	if (api > 0 && seccomp_api_set(api) != 0)
		return -1;
	kept_ns = (int)ns;
	return 0;
}

const struct vg_host_caps *
vg_host_caps(void)
{
	static struct vg_host_caps c;
	static int done;
	struct utsname u;
	unsigned action = SECCOMP_RET_ERRNO;
	int ns;

	if (done)
		return &c;
	done = 1;
	if (uname(&u) == 0)
		snprintf(c.kernel, sizeof(c.kernel), "%.20s %.70s",
		    u.sysname, u.release);
	c.landlock_abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	if (c.landlock_abi < 0) {
		c.landlock_errno = errno;
		c.landlock_abi = 0;
	}
	c.seccomp = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0,
	    &action) == 0;
	c.root = geteuid() == 0;
	ns = kept_ns >= 0 ? kept_ns : probe_namespaces(c.root);
	c.userns = (ns & 1) != 0;
	c.pidns = (ns & 2) != 0;
	c.netns = (ns & 4) != 0;
	probe_cgroup(&c);
	return &c;
}

/* Records one downgrade. */
static void __attribute__((format(printf, 2, 3)))
downgrade(struct vg_sandbox *sb, const char *fmt, ...)
{
	va_list ap;

	if (sb->downgrades.len > 0)
		vg_buf_adds(&sb->downgrades, "; ");
	va_start(ap, fmt);
	vg_buf_vprintf(&sb->downgrades, fmt, ap);
	va_end(ap);
}

/*
 * Opens path O_PATH above the shim's fixed fds into r with access (less
 * what only directories take, within what is handled); 1 when a missing
 * optional path was skipped.
 */
static int
open_rule(struct vg_sandbox *sb, struct ll_rule *r, const char *path,
    uint64_t access, int optional, const char *field, struct vg_err *e)
{
	struct stat st;
	int fd;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (optional)
			return 1;
		return vg_err_errno(e, "%s: cannot open '%s'", field, path);
	}
	/* The shim's fds below VG_SHIM_FD_FIRST_RULE are fixed (stdio and
	 * the control socket): a rule fd there would be overwritten. */
	if (fd < VG_SHIM_FD_FIRST_RULE) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, VG_SHIM_FD_FIRST_RULE);

		close(fd);
		if ((fd = hi) < 0)
			return vg_err_errno(e, "%s: cannot move the fd of "
			    "'%s'", field, path);
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return vg_err_errno(e, "%s: cannot stat '%s'", field, path);
	}
	if (!S_ISDIR(st.st_mode))
		access &= ~LL_DIR_ONLY;
	access &= sb->ll_attr.handled_access_fs;
	r->fd = fd;
	r->access = access;
	r->is_dir = S_ISDIR(st.st_mode);
	r->tmp_path = strncmp(path, "/tmp/", 5) == 0 ? vg_xstrdup(path) :
	    NULL;
	return 0;
}

/* Adds a fixed Landlock rule for path; missing optional paths are fine. */
static int
add_static_rule(struct vg_sandbox *sb, const char *path, uint64_t access,
    int optional, const char *field, struct vg_err *e)
{
	int rc;

	if (sb->nrules >= MAX_STATIC_RULES - MAX_GPU_DEVS_PER_TASK)
		return vg_err_set(e, VG_ELIMIT, "%s: more than %d paths",
		    field, MAX_STATIC_RULES - MAX_GPU_DEVS_PER_TASK - 24);
	rc = open_rule(sb, &sb->rules[sb->nrules], path, access, optional,
	    field, e);
	if (rc == 0)
		sb->nrules++;
	return rc < 0 ? rc : 0;
}

/* Adds the fixed rules of every path glob pattern matches (devices). */
static int
add_glob_rules(struct vg_sandbox *sb, const char *pattern, uint64_t access,
    const char *field, struct vg_err *e)
{
	glob_t g;
	size_t i;
	int rc = 0;

	memset(&g, 0, sizeof(g));
	if (glob(pattern, GLOB_NOCHECK, NULL, &g) != 0)
		return vg_err_set(e, VG_EINVAL, "%s: cannot expand '%s'",
		    field, pattern);
	for (i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = add_static_rule(sb, g.gl_pathv[i], access, 0, field, e);
	globfree(&g);
	return rc;
}

/* Opens the rules of the GPU nodes present (glob pattern); shared: they
 * go to every attempt with GPUs. */
static void
add_gpu_rules(struct vg_sandbox *sb, const char *pattern, int shared)
{
	glob_t g;
	size_t i;
	struct vg_err e;

	memset(&g, 0, sizeof(g));
	vg_err_init(&e);
	if (glob(pattern, 0, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc && sb->ngpu_rules < MAX_GPU_RULES; i++) {
		if (open_rule(sb, &sb->gpu_rules[sb->ngpu_rules],
		    g.gl_pathv[i], sb->dev_access, 1, "gpu", &e) != 0)
			continue;
		sb->gpu_paths[sb->ngpu_rules] = vg_xstrdup(g.gl_pathv[i]);
		sb->gpu_shared[sb->ngpu_rules] = shared;
		sb->ngpu_rules++;
	}
	globfree(&g);
}

/* Compiles the Landlock part: handled rights and the fixed rules. */
static int
build_landlock(struct vg_sandbox *sb, const struct vg_isolation_conf *iso,
    struct vg_err *e)
{
	uint64_t handled, write = LL_WRITE_FILE | LL_WRITE_DIR;
	int strict = sb->level == VG_ISO_STRICT, rc;
	size_t i;

	handled = LL_FS_WRITE_FILE | (LL_WRITE_DIR & ~LL_FS_REFER);
	if (sb->ll_abi >= 2)
		handled |= LL_FS_REFER;
	if (sb->ll_abi >= 3)
		handled |= LL_FS_TRUNCATE;
	if (strict)
		handled |= LL_READ;
	sb->ll_attr_size = sizeof(uint64_t);
	if (sb->ll_abi >= 6) {
		/* Abstract sockets of the host (X11, D-Bus, a daemon's
		 * "@name") are out of reach at both levels; strict has its
		 * own network namespace besides. */
		sb->ll_attr.scoped = LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX;
		sb->ll_attr_size = sizeof(sb->ll_attr);
	} else if (!strict || !sb->netns)
		downgrade(sb, "Landlock ABI %d (ABI 6, Linux 6.12, scopes "
		    "them): abstract Unix sockets of the host are reachable",
		    sb->ll_abi);
	/* ABI 5: ioctl on a device opened after confinement is refused
	 * except on the nodes granted below (the task's tty, its GPUs). */
	if (sb->ll_abi >= 5)
		handled |= LL_FS_IOCTL_DEV;
	sb->ll_attr.handled_access_fs = handled;
	/* No device node is made anywhere, nor a device's ioctl used but
	 * on the nodes below (the terminal, the null devices, the
	 * devices the manifest lists, the task's GPUs). */
	sb->ll_task_access = handled & ~LL_NO_DEV;
	write &= ~LL_NO_DEV;
	sb->dev_access = write | LL_FS_IOCTL_DEV | (strict ? LL_READ : 0);

	for (i = 0; i < sizeof(dev_writable) / sizeof(dev_writable[0]); i++)
		if ((rc = add_static_rule(sb, dev_writable[i],
		    sb->dev_access, 1, "isolation", e)) != 0)
			return rc;
	for (i = 0; i < sizeof(dev_writable) / sizeof(dev_writable[0]); i++)
		vg_strv_push(&sb->wpaths, dev_writable[i]);
	for (i = 0; i < iso->writable.n; i++)
		vg_strv_push(&sb->wpaths, iso->writable.v[i]);
	sb->network = vg_isolation_net(iso) == VG_NET_HOST;
	for (i = 0; i < iso->writable.n; i++)
		if ((rc = add_static_rule(sb, iso->writable.v[i],
		    write | LL_READ, 0,
		    "isolation.writable", e)) != 0)
			return rc;
	/* The working directory: results land where the user works
	 * (sandbox-workdir.h); at strict, its inputs can be read. */
	if (sb->wd.grant && (rc = add_static_rule(sb, sb->wd.path,
	    write | LL_READ, 0, "workdir", e)) != 0)
		return rc;
	if (!sb->wd.grant && strict && sb->wd.path != NULL &&
	    (rc = add_static_rule(sb, sb->wd.path, LL_READ, 1, "workdir",
	    e)) != 0)
		return rc;
	sb->listed_devices = iso->devices.n > 0;
	for (i = 0; i < iso->devices.n; i++)
		if ((rc = add_glob_rules(sb, iso->devices.v[i],
		    write | LL_READ | LL_FS_IOCTL_DEV, "isolation.devices",
		    e)) != 0)
			return rc;
	for (i = 0; i < sizeof(gpu_own) / sizeof(gpu_own[0]); i++)
		add_gpu_rules(sb, gpu_own[i], 0);
	for (i = 0; i < sizeof(gpu_shared) / sizeof(gpu_shared[0]); i++)
		add_gpu_rules(sb, gpu_shared[i], 1);
	if (!strict)
		return 0;
	for (i = 0; i < sizeof(sys_readable) / sizeof(sys_readable[0]); i++)
		vg_strv_push(&sb->rpaths, sys_readable[i]);
	for (i = 0; i < iso->readable.n; i++)
		vg_strv_push(&sb->rpaths, iso->readable.v[i]);
	for (i = 0; i < sizeof(sys_readable) / sizeof(sys_readable[0]); i++)
		if ((rc = add_static_rule(sb, sys_readable[i], LL_READ, 1,
		    "isolation", e)) != 0)
			return rc;
	for (i = 0; i < iso->readable.n; i++)
		if ((rc = add_static_rule(sb, iso->readable.v[i], LL_READ, 0,
		    "isolation.readable", e)) != 0)
			return rc;
	return 0;
}

/*
 * Put in front of libseccomp's program.  libseccomp checks the
 * architecture, but on x86_64 lets x32 syscall numbers (bit 30 set, same
 * AUDIT_ARCH) through to its default action; this prefix kills the
 * process for those as well as for any foreign architecture.
 */
static const struct sock_filter arch_prefix[] = {
#if defined(__x86_64__)
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#else
	/* libseccomp's own check suffices: a jump to the next insn. */
	BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
};
#define NPREFIX (sizeof(arch_prefix) / sizeof(arch_prefix[0]))

/* Compiles the seccomp filter into BPF (sb->prog). */
static int
build_seccomp(struct vg_sandbox *sb, const struct vg_isolation_conf *iso,
    struct vg_err *e)
{
	scmp_filter_ctx ctx;
	int deny_ptrace, nr, fd = -1, rc = VG_EIO;
	size_t i;
	off_t len;

	deny_ptrace = iso->ptrace != NULL && strcmp(iso->ptrace, "deny") == 0;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return vg_err_set(e, VG_EIO, "seccomp_init failed");
	/* A syscall from another ABI (i386 on x86_64) kills the process:
	 * the EPERM list only names the native numbers. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS) != 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0) {
		vg_err_set(e, VG_EIO, "seccomp_attr_set failed");
		goto out;
	}
#if SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 5)
	/* A binary tree of syscall numbers rather than a chain: the kernel
	 * runs the program through every syscall number when each task
	 * loads it (its action cache), so a short path per number is what
	 * a task's start pays for.  160 -> 128 us per load here (strace -T
	 * of a 100-task run).  Optional: without it the chain is kept. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
#endif
	for (i = 0; i < sizeof(denied_syscalls) / sizeof(denied_syscalls[0]);
	    i++) {
		nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;	/* not on this architecture */
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) != 0) {
			vg_err_set(e, VG_EIO, "seccomp rule for '%s' failed",
			    denied_syscalls[i]);
			goto out;
		}
	}
	sb->ptrace_denied = deny_ptrace;
	if (deny_ptrace) {
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(ptrace), 0) != 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(process_vm_readv), 0) != 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(process_vm_writev), 0) != 0) {
			vg_err_set(e, VG_EIO, "seccomp rule for ptrace failed");
			goto out;
		}
	} else if (!sb->pidns && sb->ll_abi == 0) {
		/* Without a PID namespace or a Landlock domain nothing
		 * scopes ptrace to the task's own processes: allow only
		 * PTRACE_TRACEME (a child asking its parent to trace it). */
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(ptrace), 1, SCMP_A0(SCMP_CMP_NE, 0)) != 0) {
			vg_err_set(e, VG_EIO, "seccomp rule for ptrace failed");
			goto out;
		}
	}
	if ((fd = memfd_create("vigil-seccomp", MFD_CLOEXEC)) < 0) {
		vg_err_errno(e, "memfd_create");
		goto out;
	}
	if (seccomp_export_bpf(ctx, fd) != 0) {
		vg_err_set(e, VG_EIO, "seccomp_export_bpf failed");
		goto out;
	}
	len = lseek(fd, 0, SEEK_END);
	if (len <= 0 || len % sizeof(struct sock_filter) != 0 ||
	    len > 60000) {
		vg_err_set(e, VG_EIO, "seccomp program has a bad size (%lld)",
		    (long long)len);
		goto out;
	}
	sb->prog.filter = vg_xmalloc(sizeof(arch_prefix) + (size_t)len);
	memcpy(sb->prog.filter, arch_prefix, sizeof(arch_prefix));
	sb->prog.len = (unsigned short)(NPREFIX +
	    len / sizeof(struct sock_filter));
	if (pread(fd, sb->prog.filter + NPREFIX, (size_t)len, 0) != len) {
		vg_err_errno(e, "reading the seccomp program");
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}

/* True when path is one of the sockets the manifest allows. */
static int
socket_allowed(const struct vg_isolation_conf *iso, const char *path)
{
	size_t i;

	for (i = 0; i < iso->sockets.n; i++)
		if (strcmp(iso->sockets.v[i], path) == 0)
			return 1;
	return 0;
}

/*
 * Chooses the host sockets to cover: at strict every pathname socket
 * found (those beneath the task's own directories are spared per task,
 * vg_sandbox_enter), at standard the control sockets that are root on
 * the host, by path or by the daemon holding them; never one listed in
 * isolation.sockets.
 */
static void
build_hide(struct vg_sandbox *sb, const struct vg_isolation_conf *iso)
{
	struct vg_strv found = VG_STRV_INIT, owned = VG_STRV_INIT;
	struct vg_err e;
	size_t i, k;
	int daemon;

	vg_err_init(&e);
	if (vg_host_sockets_find(&found, sb->level == VG_ISO_STRICT ? NULL :
	    &owned, &e) != 0)
		downgrade(sb, "cannot read the host's sockets (%s): only the "
		    "well-known control sockets are hidden", e.msg);
	sb->hide_strict = sb->level == VG_ISO_STRICT;
	sb->hide = vg_xcalloc(found.n + 1, sizeof(*sb->hide));
	for (i = 0; i < found.n; i++) {
		for (daemon = 0, k = 0; k < owned.n && !daemon; k++)
			daemon = strcmp(owned.v[k], found.v[i]) == 0;
		if (socket_allowed(iso, found.v[i]) || (!sb->hide_strict &&
		    !daemon && !vg_host_socket_is_control(found.v[i])))
			continue;
		sb->hide[sb->nhide++] = vg_xstrdup(found.v[i]);
	}
	vg_strv_release(&found);
	vg_strv_release(&owned);
}

/* Checks isolation.sockets: absolute paths. */
static int
check_sockets(const struct vg_isolation_conf *iso, struct vg_err *e)
{
	size_t i;

	for (i = 0; i < iso->sockets.n; i++)
		if (iso->sockets.v[i][0] != '/')
			return vg_err_set(e, VG_EINVAL, "isolation.sockets: "
			    "'%s' is not an absolute path (give the socket's "
			    "full path, e.g. /run/docker.sock)",
			    iso->sockets.v[i]);
	return 0;
}

int
vg_sandbox_new(const struct vg_isolation_conf *iso, const char *workdir,
    struct vg_sandbox **out, struct vg_err *e)
{
	const struct vg_host_caps *c = vg_host_caps();
	struct vg_sandbox *sb;
	const char *bad;
	enum vg_net_mode net;
	int rc = 0, confine;

	*out = NULL;
	if ((rc = check_sockets(iso, e)) != 0)
		return rc;
	sb = vg_xcalloc(1, sizeof(*sb));
	vg_buf_init(&sb->downgrades);
	vg_wd_init(&sb->wd);
	sb->asked = sb->level = iso->level;
	confine = iso->level != VG_ISO_NONE;

	/* The whole-tree kill comes from a PID namespace whenever one can
	 * be made: as root directly, else inside a user namespace.  A mount
	 * namespace comes with it, for a /proc that shows that PID
	 * namespace rather than the host's. */
	if (c->pidns && (c->root || c->userns)) {
		sb->pidns = 1;
		sb->own_proc = 1;
		sb->clone_flags |= CLONE_NEWPID | CLONE_NEWNS;
		if (!c->root)
			sb->userns = 1;
	} else
		downgrade(sb, "no PID namespace (%s): the task tree is killed "
		    "by a subreaper walk, which a process that forks "
		    "very fast can outrun", c->root ? "kernel refuses" :
		    "not root and user namespaces are disabled");

	/* A network namespace of the task's own, only loopback up, for
	 * isolation.network none (strict's default) and, fail-closed, an
	 * allow-list; strict has a private /tmp whatever its network. */
	net = confine ? vg_isolation_net(iso) : VG_NET_HOST;
	sb->egress_nsfd = -1;
	if (net == VG_NET_ALLOW && c->netns && c->root) {
		/* setns in vg_sandbox_enter, no CLONE_NEWNET */
		sb->netns = 1;
		sb->egress = 1;
	} else if (net == VG_NET_ALLOW)
		downgrade(sb, "%s", "an allow-list needs vigil to run as "
		    "root (the proxy listens in the task's network "
		    "namespace): the task has no network beyond loopback");
	if (iso->level == VG_ISO_STRICT || net != VG_NET_HOST) {
		if (c->netns && (c->root || c->userns)) {
			if (net != VG_NET_HOST && !sb->egress) {
				sb->netns = 1;
				sb->clone_flags |= CLONE_NEWNET;
			}
			if (iso->level == VG_ISO_STRICT) {
				sb->private_tmp = 1;
				sb->clone_flags |= CLONE_NEWNS;
			}
			if (!c->root)
				sb->userns = 1;
		} else
			downgrade(sb, "no network namespace (not root and "
			    "user namespaces are disabled): network open%s",
			    iso->level == VG_ISO_STRICT ? ", /tmp shared" :
			    "");
	}
	/* Its own host name and SysV IPC objects: a task can neither set
	 * the host's name nor see or remove the host's message queues,
	 * semaphores and shared memory segments.  POSIX shared memory is
	 * files in /dev/shm: a tmpfs of the task's own is mounted there
	 * (vg_sandbox_enter). */
	if (confine && sb->pidns) {
		sb->clone_flags |= CLONE_NEWUTS | CLONE_NEWIPC;
		sb->own_shm = 1;
	}
	if (sb->userns) {
		sb->clone_flags |= CLONE_NEWUSER;
		snprintf(sb->uid_map, sizeof(sb->uid_map), "%u %u 1\n",
		    (unsigned)geteuid(), (unsigned)geteuid());
		snprintf(sb->gid_map, sizeof(sb->gid_map), "%u %u 1\n",
		    (unsigned)getegid(), (unsigned)getegid());
	}

	if (confine && (sb->clone_flags & CLONE_NEWNS))
		build_hide(sb, iso);
	else if (confine)
		downgrade(sb, "%s", "no mount namespace: the host's control "
		    "sockets are not hidden");
	if (confine) {
		sb->nnp = 1;
		/* No capability in the task: none of root's powers over
		 * the host (devices, host name, IPC, raw sockets, kernel
		 * log, fanotify, ptrace of its supervisor) but what a
		 * host-access rule grants (isolation.capabilities). */
		sb->dropcaps = 1;
		if (vg_cap_mask(&iso->capabilities, &sb->caps_keep,
		    &bad) != 0) {
			rc = vg_err_set(e, VG_EINVAL, "isolation.capabilities: "
			    "'%s' is not a capability", bad);
			goto out;
		}
		if (c->landlock_abi > 0) {
			sb->ll_abi = c->landlock_abi;
			vg_wd_prepare(&sb->wd, workdir, iso->workdir != NULL ?
			    strcmp(iso->workdir, "write") == 0 :
			    iso->level == VG_ISO_STANDARD,
			    (sb->clone_flags & CLONE_NEWNS) != 0);
			if ((rc = build_landlock(sb, iso, e)) != 0)
				goto out;
		} else
			downgrade(sb, "no Landlock (%s): writes are not "
			    "confined", strerror(c->landlock_errno));
		if (c->seccomp) {
			if ((rc = build_seccomp(sb, iso, e)) != 0)
				goto out;
		} else
			downgrade(sb, "%s", "no seccomp filters: privileged "
			    "syscalls are not blocked");
	}
	if (iso->required && sb->downgrades.len > 0) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "isolation '%s' is "
		    "required but this host cannot deliver it: %s",
		    vg_isolation_name(iso->level),
		    vg_buf_str(&sb->downgrades));
		goto out;
	}
	if (confine && sb->ll_abi == 0 && sb->prog.len == 0)
		sb->level = VG_ISO_NONE;
	*out = sb;
	sb = NULL;
out:
	vg_sandbox_free(sb);
	return rc;
}

void
vg_sandbox_free(struct vg_sandbox *sb)
{
	int i;

	if (sb == NULL)
		return;
	for (i = 0; i < sb->nrules; i++) {
		close(sb->rules[i].fd);
		free(sb->rules[i].tmp_path);
	}
	for (i = 0; i < sb->ngpu_rules; i++) {
		close(sb->gpu_rules[i].fd);
		free(sb->gpu_rules[i].tmp_path);
		free(sb->gpu_paths[i]);
	}
	for (i = 0; i < (int)sb->nhide; i++)
		free(sb->hide[i]);
	free(sb->hide);
	free(sb->prog.filter);
	vg_buf_release(&sb->downgrades);
	vg_wd_release(&sb->wd);
	vg_strv_release(&sb->wpaths);
	vg_strv_release(&sb->rpaths);
	free(sb);
}

int
vg_sandbox_why(const struct vg_sandbox *sb, const struct vg_sandbox_paths *p,
    const char *where, const char *text, size_t len, struct vg_buf *out)
{
	struct vg_explain_in in;
	size_t n = 0;

	if (sb->level == VG_ISO_NONE || sb->ll_abi == 0)
		return 0;
	while (vg_wd_protected[n] != NULL)
		n++;
	memset(&in, 0, sizeof(in));
	in.level = vg_isolation_name(sb->level);
	in.strict = sb->level == VG_ISO_STRICT;
	in.network = sb->network || !sb->netns;
	in.task_dir = p->task_dir;
	in.scratch_dir = p->scratch_dir;
	in.tmp_dir = p->tmp_dir;
	in.workdir = sb->wd.path;
	in.workdir_writable = sb->wd.grant;
	in.protected = vg_wd_protected;
	in.nprotected = n;
	in.writable = (const char *const *)sb->wpaths.v;
	in.nwritable = sb->wpaths.n;
	in.readable = (const char *const *)sb->rpaths.v;
	in.nreadable = sb->rpaths.n;
	in.where = where;
	return vg_sandbox_explain(&in, text, len, out);
}

const char *
vg_sandbox_workdir_note(const struct vg_sandbox *sb)
{
	return sb->wd.why;
}

int
vg_sandbox_sweep(const struct vg_sandbox *sb, const char *tag,
    struct vg_buf *note)
{
	return vg_wd_sweep(&sb->wd, tag, note);
}

const char *
vg_sandbox_downgrades(const struct vg_sandbox *sb)
{
	return vg_buf_str(&sb->downgrades);
}

enum vg_isolation_level
vg_sandbox_level(const struct vg_sandbox *sb)
{
	return sb->level;
}

unsigned long long
vg_sandbox_clone_flags(const struct vg_sandbox *sb)
{
	return sb->clone_flags;
}

int
vg_sandbox_egress(const struct vg_sandbox *sb)
{
	return sb->egress;
}

void
vg_sandbox_set_egress(struct vg_sandbox *sb, int nsfd)
{
	sb->egress_nsfd = nsfd;
}

int
vg_sandbox_pidns(const struct vg_sandbox *sb)
{
	return sb->pidns;
}

int
vg_sandbox_private_tmp(const struct vg_sandbox *sb)
{
	return sb->private_tmp;
}

int
vg_sandbox_outside_shielded(const struct vg_sandbox *sb)
{
	/* Nothing confines the task (no filter, no domain): an
	 * unconfined process beside it gives it nothing it lacks. */
	if (sb->prog.len == 0 && sb->ll_abi == 0 && !sb->nnp)
		return 1;
	return sb->ll_abi > 0 || sb->ptrace_denied;
}

/* Writes a whole string to a file (child side). */
static int
write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = write(fd, s, len);
	err = errno;
	close(fd);
	if (n != (ssize_t)len)
		return n < 0 ? -err : -EIO;
	return 0;
}

int
vg_loopback_up(void)
{
	struct ifreq ifr;
	int fd, rc = 0;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		rc = -errno;
	else {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
			rc = -errno;
	}
	close(fd);
	return rc;
}

/* True when path lies beneath /tmp. */
static int
under_tmp(const char *path)
{
	return path != NULL && strncmp(path, "/tmp/", 5) == 0;
}

/* Creates path and its missing parents, 0700 (child side). */
static int
mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path), i;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = i < len ? '/' : '\0';
	}
	return 0;
}

/* Creates the parents of the file path and an empty file to mount on
 * (child side). */
static int
file_mountpoint(const char *path)
{
	char buf[PATH_MAX];
	char *slash;
	size_t len = strlen(path);
	int fd, rc;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	if ((slash = strrchr(buf, '/')) != NULL && slash != buf) {
		*slash = '\0';
		if ((rc = mkdir_parents(buf)) != 0)
			return rc;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Binds the file or directory open as fd onto path (child side). */
static int
bind_fd(int fd, const char *path, int is_dir)
{
	char src[32] = "/proc/self/fd/";
	int n = 14, d = fd, rc;

	/* Digits of fd, right to left, then reversed into place. */
	char tmp[12];
	int k = 0;

	do
		tmp[k++] = (char)('0' + d % 10);
	while ((d /= 10) > 0);
	while (k > 0)
		src[n++] = tmp[--k];
	src[n] = '\0';
	if (is_dir)
		rc = mkdir_parents(path);
	else
		rc = file_mountpoint(path);
	if (rc != 0)
		return rc;
	if (mount(src, path, "none", MS_BIND | MS_REC, NULL) != 0)
		return -errno;
	return 0;
}

/*
 * Binds the task's temp directory over /tmp in the task's own mount
 * namespace.  A task or scratch directory under /tmp would be hidden by
 * it, so those are bound back at their paths inside the new /tmp, and so
 * are the isolation.readable and isolation.writable paths there.
 */
static int
private_tmp(const struct vg_sandbox *sb, const struct vg_sandbox_paths *p,
    const char **stage)
{
	const char *keep[2] = { p->task_dir, p->scratch_dir };
	int fds[2] = { -1, -1 }, lfds[MAX_STATIC_RULES], i, rc = 0;

	*stage = "private /tmp";
	if (mkdir(p->tmp_dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	/* Opened here, in the new mount namespace: a bind mount's source
	 * must belong to the caller's namespace. */
	for (i = 0; i < sb->nrules; i++)
		lfds[i] = -1;
	for (i = 0; i < 2; i++)
		if (under_tmp(keep[i]) && (fds[i] = open(keep[i],
		    O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
			rc = -errno;
			goto out;
		}
	for (i = 0; i < sb->nrules; i++)
		if (sb->rules[i].tmp_path != NULL &&
		    (lfds[i] = open(sb->rules[i].tmp_path,
		    O_PATH | O_CLOEXEC)) < 0) {
			rc = -errno;
			goto out;
		}
	if (mount(p->tmp_dir, "/tmp", "none", MS_BIND, NULL) != 0) {
		rc = -errno;
		goto out;
	}
	for (i = 0; i < 2 && rc == 0; i++)
		if (fds[i] >= 0)
			rc = bind_fd(fds[i], keep[i], 1);
	for (i = 0; i < sb->nrules && rc == 0; i++)
		if (lfds[i] >= 0)
			rc = bind_fd(lfds[i], sb->rules[i].tmp_path,
			    sb->rules[i].is_dir);
out:
	for (i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (i = 0; i < sb->nrules; i++)
		if (lfds[i] >= 0)
			close(lfds[i]);
	return rc;
}

static int beneath(const char *path, const char *dir);

/* Writes "/proc/self/fd/" and fd's digits into buf (32 bytes). */
static void
fd_path(char *buf, int fd)
{
	char tmp[12];
	int n = 14, k = 0;

	memcpy(buf, "/proc/self/fd/", 14);
	do
		tmp[k++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (k > 0)
		buf[n++] = tmp[--k];
	buf[n] = '\0';
}

/*
 * Covers the host socket at path with /dev/null in the task's mount
 * namespace (child side), so that connect(2) to it fails with
 * ECONNREFUSED.  The path is opened without following a last link and
 * covered only when it is a socket now: a link or a file a task put in
 * its place is left alone, and since the mount goes onto the descriptor
 * (through /proc/self/fd), a directory swapped for a link on the way
 * can only lead to another socket.  Gone or out of reach: nothing to
 * cover.
 */
static int
hide_socket(const char *path)
{
	struct stat st;
	char fdp[32];
	int fd, rc = 0;

	if ((fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
		fd_path(fdp, fd);
		if (mount("/dev/null", fdp, "none", MS_BIND, NULL) != 0)
			rc = -errno;
	}
	close(fd);
	return rc;
}

/* Covers the sockets chosen by build_hide, sparing at strict those
 * beneath the task's own directories (child side). */
static int
hide_sockets(const struct vg_sandbox *sb, const struct vg_sandbox_paths *p,
    const char **stage)
{
	size_t i;
	int rc;

	*stage = "hide host sockets";
	for (i = 0; i < sb->nhide; i++) {
		if (sb->hide_strict && (beneath(sb->hide[i], p->task_dir) ||
		    beneath(sb->hide[i], p->scratch_dir) ||
		    beneath(sb->hide[i], p->tmp_dir)))
			continue;
		if ((rc = hide_socket(sb->hide[i])) != 0)
			return rc;
	}
	return 0;
}

/* Makes every mount of a new mount namespace a slave of the host's
 * (child side).  Slave, not private: mounts made later on the host still
 * show up here, nothing made here leaks out. */
static int
mounts_slave(void)
{
	if (mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) != 0)
		return -errno;
	return 0;
}

/* Mounts a procfs of the caller's PID namespace on /proc (child side). */
static int
mount_proc(void)
{
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) != 0)
		return -errno;
	return 0;
}

int
vg_sandbox_own_proc(const char **stage)
{
	int rc;

	*stage = "mount /proc";
	if ((rc = mounts_slave()) != 0)
		return rc;
	return mount_proc();
}

int
vg_sandbox_enter(const struct vg_sandbox *sb, const struct vg_sandbox_paths *p,
    const char **stage)
{
	int rc;

	if (sb->userns) {
		*stage = "user namespace maps";
		if ((rc = write_file("/proc/self/setgroups", "deny")) != 0 ||
		    (rc = write_file("/proc/self/uid_map", sb->uid_map)) != 0 ||
		    (rc = write_file("/proc/self/gid_map", sb->gid_map)) != 0)
			return rc;
	}
	if (sb->egress) {
		/* Fail closed: no proxy, no namespace to join, no task. */
		*stage = "join the egress proxy's network namespace";
		if (sb->egress_nsfd < 0)
			return -ENOTCONN;
		if (setns(sb->egress_nsfd, CLONE_NEWNET) != 0)
			return -errno;
	}
	if (sb->netns) {
		*stage = "loopback";
		if ((rc = vg_loopback_up()) != 0)
			return rc;
	}
	if (sb->clone_flags & CLONE_NEWNS) {
		*stage = "mount namespace";
		if ((rc = mounts_slave()) != 0)
			return rc;
		if ((rc = hide_sockets(sb, p, stage)) != 0)
			return rc;
		if ((rc = vg_wd_protect(&sb->wd, stage)) != 0)
			return rc;
	}
	if (sb->private_tmp && p->tmp_dir != NULL &&
	    (rc = private_tmp(sb, p, stage)) != 0)
		return rc;
	/* POSIX shared memory and semaphores of the task's own: the
	 * host's files in /dev/shm are out of its sight (its Landlock rule
	 * on /dev/shm covers this mount: Landlock walks up from a mount's
	 * root to its mount point). */
	if (sb->own_shm) {
		*stage = "mount /dev/shm";
		if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		    "mode=1777") != 0 && errno != ENOENT)
			return -errno;
	}
	/* A program that reads /proc/<its getpid()> (ps, psutil, Python's
	 * multiprocessing) needs the procfs of its own PID namespace: in
	 * the host's, that pid is some other process.  Inside a user
	 * namespace the kernel refuses a new procfs when the host's /proc
	 * has parts hidden by mounts (as in most containers); the task
	 * then keeps the host's /proc rather than not running at all. */
	if (sb->own_proc) {
		*stage = "mount /proc";
		rc = mount_proc();
		if (rc != 0 && !(sb->userns && (rc == -EPERM || rc == -EACCES)))
			return rc;
	}
	return 0;
}

/* True when path lies beneath dir. */
static int
beneath(const char *path, const char *dir)
{
	size_t n;

	if (path == NULL || dir == NULL)
		return path == NULL;
	n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* True when the comma-separated list holds item. */
static int
list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *s;

	for (s = list; s != NULL && *s != '\0'; s = strchr(s, ',') ?
	    strchr(s, ',') + 1 : NULL)
		if (strncmp(s, item, n) == 0 && (s[n] == ',' || s[n] == '\0'))
			return 1;
	return 0;
}

/* Appends to l the prepared rules of the attempt's own GPU nodes and,
 * when it has GPUs, the shared control nodes. */
static void
gpu_grant(const struct vg_sandbox *sb, const struct vg_sandbox_paths *p,
    struct vg_shim_launch *l)
{
	int i, added = 0;

	if (p->ngpus <= 0)
		return;
	for (i = 0; i < sb->ngpu_rules && added < MAX_GPU_DEVS_PER_TASK;
	    i++) {
		if (!sb->gpu_shared[i] && !list_has(p->gpu_devs,
		    sb->gpu_paths[i]))
			continue;
		l->rules[l->nrules].fd = sb->gpu_rules[i].fd;
		l->rules[l->nrules].is_dir = (uint32_t)sb->gpu_rules[i].is_dir;
		l->rules[l->nrules].access = sb->gpu_rules[i].access;
		l->nrules++;
		added++;
	}
}

void
vg_sandbox_launch(const struct vg_sandbox *sb,
    const struct vg_sandbox_paths *p, struct vg_shim_launch *l,
    const void **bpf, unsigned *nbpf)
{
	int i;

	if (sb->nnp)
		l->flags |= VG_SHIM_NNP;
	if (sb->dropcaps) {
		l->flags |= VG_SHIM_DROPCAPS;
		l->caps_keep = sb->caps_keep;
	} else
		l->flags |= VG_SHIM_NOPTRACE;	/* none: the shim's reach */
	if (sb->ll_abi > 0) {
		l->flags |= VG_SHIM_LANDLOCK;
		l->ll_fs = sb->ll_attr.handled_access_fs;
		l->ll_net = sb->ll_attr.handled_access_net;
		l->ll_scoped = sb->ll_attr.scoped;
		l->ll_attr_size = (uint32_t)sb->ll_attr_size;
		l->ll_task_access = sb->ll_task_access;
		for (i = 0; i < sb->nrules; i++) {
			l->rules[i].fd = sb->rules[i].fd;
			l->rules[i].is_dir = (uint32_t)sb->rules[i].is_dir;
			l->rules[i].access = sb->rules[i].access;
		}
		l->nrules = (uint32_t)sb->nrules;
		gpu_grant(sb, p, l);
		if (sb->ll_attr.handled_access_fs & LL_FS_READ_FILE)
			l->flags |= VG_SHIM_LL_PROC;
		/* The temp directory is normally beneath the task directory
		 * and covered by its rule, except when bound over /tmp:
		 * Landlock walks up from a mount's root to its mount point,
		 * not to task_dir. */
		if (p->tmp_dir != NULL && (sb->private_tmp ||
		    !beneath(p->tmp_dir, p->task_dir)))
			l->flags |= VG_SHIM_LL_TMP;
	}
	*bpf = sb->prog.filter;
	*nbpf = sb->prog.len;
}

void
vg_sandbox_describe(const struct vg_sandbox *sb, struct vg_buf *out)
{
	static const struct { unsigned long long flag; const char *name; }
	    ns[] = {
		{ CLONE_NEWPID, "pid" }, { CLONE_NEWNS, "mnt" },
		{ CLONE_NEWUTS, "uts" }, { CLONE_NEWIPC, "ipc" },
		{ CLONE_NEWNET, "net" }, { CLONE_NEWUSER, "user" },
	};
	size_t i;
	int n = 0;

	vg_buf_printf(out, "level %s; capabilities ",
	    vg_isolation_name(sb->level));
	if (sb->dropcaps)
		vg_cap_names(sb->caps_keep, out);
	else
		vg_buf_adds(out, "root's less sys_ptrace (if root)");
	vg_buf_adds(out, "; namespaces ");
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		if (sb->clone_flags & ns[i].flag)
			vg_buf_printf(out, "%s%s", n++ > 0 ? "," : "",
			    ns[i].name);
	if (n == 0)
		vg_buf_adds(out, "none");
	vg_buf_printf(out, "; /dev/shm %s", sb->own_shm ? "own" : "host's");
	if (sb->wd.grant)
		vg_buf_printf(out, "; workdir %s writable (%d protected "
		    "entr%s read-only)", sb->wd.path, sb->wd.nprot,
		    sb->wd.nprot == 1 ? "y" : "ies");
	else if (sb->wd.why != NULL)
		vg_buf_printf(out, "; workdir %s not writable", sb->wd.path);
	if (sb->ll_abi == 0) {
		vg_buf_adds(out, "; devices: not confined by Landlock");
		return;
	}
	vg_buf_printf(out, "; devices: no nodes made, %s terminals, null "
	    "and random devices%s%s", sb->ll_abi >= 5 ? "ioctl only on" :
	    "ioctl not confined (Landlock ABI < 5);",
	    sb->listed_devices ? ", isolation.devices" : "",
	    sb->ngpu_rules > 0 ? ", the attempt's GPUs" : "");
}

void
vg_sandbox_report(struct vg_buf *out)
{
	const struct vg_host_caps *c = vg_host_caps();
	struct vg_cgroup_caps cg;

	vg_buf_printf(out, "kernel: %s\n", c->kernel[0] ? c->kernel : "?");
	if (c->landlock_abi > 0)
		vg_buf_printf(out, "landlock: ok (ABI %d%s%s)\n",
		    c->landlock_abi, c->landlock_abi < 5 ? "; ABI 5 (Linux "
		    "6.10) adds device ioctl confinement" : "",
		    c->landlock_abi < 6 ? "; ABI 6 (Linux 6.12) adds signal "
		    "scoping" : "");
	else if (c->landlock_errno == EOPNOTSUPP)
		vg_buf_adds(out, "landlock: missing (built in but disabled: "
		    "add 'landlock' to the lsm= kernel parameter)\n");
	else
		vg_buf_adds(out, "landlock: missing (needs Linux 5.13+ with "
		    "CONFIG_SECURITY_LANDLOCK=y and 'landlock' in lsm=)\n");
	vg_buf_printf(out, "seccomp: %s\n", c->seccomp ? "ok" :
	    "missing (needs CONFIG_SECCOMP_FILTER=y)");
	if (c->userns)
		vg_buf_adds(out, "user namespaces: ok\n");
	else
		vg_buf_printf(out, "user namespaces: missing (%s)\n", c->root ?
		    "not needed as root" : "set kernel.unprivileged_userns_"
		    "clone=1 and user.max_user_namespaces > 0 with sysctl");
	vg_buf_printf(out, "pid namespaces: %s\n", c->pidns ? "ok" :
	    "missing (needs CONFIG_PID_NS=y; without it the task tree is "
	    "killed by a subreaper walk)");
	vg_buf_printf(out, "network namespaces: %s\n", c->netns ? "ok" :
	    "missing (needs CONFIG_NET_NS=y; `strict` then keeps the "
	    "network)");
	/* What a task runs with (docs/isolation.md, "Root's powers"). */
	vg_buf_printf(out, "tasks (standard, strict): capabilities none "
	    "(isolation.capabilities keeps named ones, as host access); "
	    "namespaces %s%s; /dev/shm own; devices: no nodes made, %s\n",
	    c->pidns ? "pid,mnt,uts,ipc" : "none", c->netns ?
	    " (+net at strict)" : "", c->landlock_abi >= 5 ? "ioctl only on "
	    "terminals, null and random devices, isolation.devices and the "
	    "attempt's GPUs" : c->landlock_abi > 0 ? "device ioctl not "
	    "confined (Landlock ABI 5, Linux 6.10, confines it)" :
	    "not confined (no Landlock)");
	vg_buf_adds(out, "tasks (none): root's capabilities less "
	    "sys_ptrace; namespaces pid,mnt\n");
	/* Task cgroups: where they go, which limits they deliver, and what
	 * to change (cgroup.c). */
	vg_cgroup_probe(&cg);
	vg_cgroup_report(&cg, out);
}
