/*
 * cgroup.c - per-task control groups for the local backend: memory and
 * pids limits, OOM accounting, whole-tree kill; cgroup v2, v1, or the
 * hybrid of both.
 *
 * The probe reads /proc/self/mountinfo (where each hierarchy is mounted,
 * and from which root) and /proc/self/cgroup (where we are in each), and
 * decides where task cgroups go without changing anything.  Creation
 * writes the limits from the parent; the child only writes "0" to the
 * cgroup.procs fds opened here, which is async-signal-safe.  Starting
 * tasks, waiting for them and mapping an OOM kill to a result are the
 * backend's business (local.c); docs/cgroups.md has the whole picture.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/str.h"
#include "common/path.h"
#include "common/proc.h"
#include "backends/cgroup.h"

/* Name prefixes: vigil's own leaf (LEAF mode) and every task cgroup. */
#define LEAF_NAME	"vigil.main"
#define TASK_PREFIX	"vigil-"
#define NAME_MAX_LEN	64
/* Kill rounds: how long vg_cgroup_kill waits for the tree to go. */
#define KILL_ROUND_NS	5000000L	/* 5 ms */
#define KILL_ROUNDS	400		/* 2 s */
/* Nesting a task may create below its own cgroup that free() removes. */
#define RMDIR_DEPTH	16
/* Room for any path built here: a directory plus a task name and a file
 * name; longer directories are refused by the probe. */
#define PBUF		1024

struct cg_dir {
	char	path[VG_CGROUP_PATH_MAX + NAME_MAX_LEN + 32];
	int	made;		/* mkdir succeeded: ours to remove */
	int	procs;		/* cgroup.procs, O_WRONLY */
};

struct vg_cgroup {
	struct cg_dir	d[VG_CGROUP_NHIER];
	int		dirfd;		/* v2 directory, or -1 */
	int		fds[VG_CGROUP_NHIER];
	int		nfds;
	unsigned	delivered;	/* enum vg_cgroup_what */
	int		mem_hier;	/* where memory is limited, or -1 */
	int		pids_hier;	/* where pids are limited, or -1 */
	struct vg_buf	downgrades;
};

/* One cgroup mount from mountinfo. */
struct cg_mount {
	char	dir[VG_CGROUP_PATH_MAX];
	char	root[VG_CGROUP_PATH_MAX];
};

/* ---- probe ---- */

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void
unescape(char *s)
{
	char *w = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 4;
		} else
			*w++ = *s++;
	}
	*w = '\0';
}

/* True when the comma-separated list has item as one of its words. */
static int
has_word(const char *list, const char *item, const char *seps)
{
	size_t n = strlen(item);
	const char *p = list;

	while ((p = strstr(p, item)) != NULL) {
		if ((p == list || strchr(seps, p[-1]) != NULL) &&
		    (p[n] == '\0' || strchr(seps, p[n]) != NULL))
			return 1;
		p += n;
	}
	return 0;
}

/*
 * Finds the mount of a hierarchy in /proc/self/mountinfo: fstype
 * "cgroup2", or "cgroup" with ctrl among its super options.
 */
static int
find_mount(const char *fstype, const char *ctrl, struct cg_mount *m)
{
	char line[2048], *f[12], *p, *dash, *sv;
	FILE *fp;
	int n, found = 0;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		/* ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] - TYPE SRC
		 * SUPEROPTS (proc(5)) */
		if ((dash = strstr(line, " - ")) == NULL)
			continue;
		*dash = '\0';
		for (n = 0, p = strtok_r(line, " ", &sv); p != NULL && n < 5;
		    p = strtok_r(NULL, " ", &sv))
			f[n++] = p;
		if (n < 5)
			continue;
		for (n = 5, p = strtok_r(dash + 3, " ", &sv); p != NULL &&
		    n < 8; p = strtok_r(NULL, " ", &sv))
			f[n++] = p;
		if (n < 8 || strcmp(f[5], fstype) != 0)
			continue;
		if (ctrl != NULL && !has_word(f[7], ctrl, ","))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		if (vg_strlcpy(m->root, f[3], sizeof(m->root)) != 0 ||
		    vg_strlcpy(m->dir, f[4], sizeof(m->dir)) != 0)
			continue;
		found = 1;
	}
	fclose(fp);
	return found;
}

/*
 * Our path in a hierarchy from /proc/self/cgroup: the "0::" line for v2
 * (ctrl NULL), else the line whose controller list has ctrl.
 */
static int
self_path(const char *ctrl, char *out, size_t size)
{
	char line[2048], *c1, *c2;
	FILE *fp;
	int found = 0;

	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((c1 = strchr(line, ':')) == NULL ||
		    (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c2 = '\0';
		if (ctrl == NULL ? c1 != line + 1 || line[0] != '0' ||
		    c2 != c1 + 1 :
		    !has_word(c1 + 1, ctrl, ","))
			continue;
		if (vg_strlcpy(out, c2 + 1, size) == 0) {
			found = 1;
		}
	}
	fclose(fp);
	return found;
}

/* Joins a mount and our path below its root; 0 when we are outside. */
static int
mount_path(const struct cg_mount *m, const char *path, char *out,
    size_t size)
{
	size_t rl = strlen(m->root);

	if (strcmp(m->root, "/") != 0) {
		if (strncmp(path, m->root, rl) != 0 ||
		    (path[rl] != '\0' && path[rl] != '/'))
			return 0;
		path += rl;
	}
	if (strcmp(path, "/") == 0)
		path = "";
	return snprintf(out, size, "%s%s", m->dir, path) < (int)size;
}

/* Reads the first line of dir/name into buf; "" when unreadable. */
static void
read_line(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PBUF];
	FILE *fp;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)size, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

/* True when dir/name exists. */
static int
has_file(const char *dir, const char *name)
{
	char path[PBUF];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* True when we may create cgroups in dir and move processes into them. */
static int
writable(const char *dir)
{
	char path[PBUF];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return access(dir, W_OK) == 0 && access(path, W_OK) == 0;
}

/* True when this process is the only one in the v2 cgroup dir. */
static int
alone_in(const char *dir)
{
	char path[PBUF], line[32];
	FILE *fp;
	int n = 0, others = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		n++;
		if (atol(line) != (long)getpid())
			others++;
	}
	fclose(fp);
	return n > 0 && others == 0;
}

/* cgroup.kill appeared in Linux 5.14; the root cgroup has none, so the
 * kernel version decides there. */
static int
kill_available(const char *dir)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (has_file(dir, "cgroup.kill"))
		return 1;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj > 5 || (maj == 5 && min >= 14);
}

/* Decides where v2 task cgroups go (docs/cgroups.md, "cgroup v2"). */
static void
probe_v2(struct vg_cgroup_caps *c)
{
	struct cg_mount m;
	char path[VG_CGROUP_PATH_MAX], ctl[256], sub[256], *slash;
	int want_mem, want_pids;

	if (!find_mount("cgroup2", NULL, &m)) {
		snprintf(c->why_v2, sizeof(c->why_v2), "no cgroup2 file "
		    "system mounted");
		return;
	}
	snprintf(c->v2_mount, sizeof(c->v2_mount), "%s", m.dir);
	if (!self_path(NULL, path, sizeof(path)) ||
	    !mount_path(&m, path, c->v2_self, sizeof(c->v2_self))) {
		c->v2_self[0] = '\0';
		snprintf(c->why_v2, sizeof(c->why_v2), "our v2 cgroup is not "
		    "below the mount at %.200s", m.dir);
		return;
	}
	if (!writable(c->v2_self)) {
		snprintf(c->why_v2, sizeof(c->why_v2), "our cgroup %.200s is "
		    "not writable by us", c->v2_self);
		return;
	}
	read_line(c->v2_self, "cgroup.controllers", ctl, sizeof(ctl));
	read_line(c->v2_self, "cgroup.subtree_control", sub, sizeof(sub));
	want_mem = has_word(ctl, "memory", " ");
	want_pids = has_word(ctl, "pids", " ");
	c->v2_kill = kill_available(c->v2_self);
	c->v2_mode = VG_CGROUP_V2_TRACK;
	snprintf(c->v2_parent, sizeof(c->v2_parent), "%s", c->v2_self);
	if (!want_mem && !want_pids) {
		if (strcmp(c->v2_self, c->v2_mount) == 0)
			snprintf(c->why_v2, sizeof(c->why_v2), "neither "
			    "memory nor pids is available in cgroup v2 at "
			    "%.200s (bound to v1 hierarchies)", c->v2_self);
		else
			snprintf(c->why_v2, sizeof(c->why_v2), "neither "
			    "memory nor pids is enabled for our cgroup %.200s "
			    "(by its parent's cgroup.subtree_control)",
			    c->v2_self);
		return;
	}
	if ((!want_mem || has_word(sub, "memory", " ")) &&
	    (!want_pids || has_word(sub, "pids", " ")))
		c->v2_mode = VG_CGROUP_V2_ENABLED;
	else if (strcmp(c->v2_self, c->v2_mount) == 0)
		c->v2_mode = VG_CGROUP_V2_ROOT;
	else if (alone_in(c->v2_self))
		c->v2_mode = VG_CGROUP_V2_LEAF;
	else {
		snprintf(path, sizeof(path), "%s", c->v2_self);
		if ((slash = strrchr(path, '/')) != NULL)
			*slash = '\0';
		if (strlen(path) >= strlen(c->v2_mount) && writable(path)) {
			c->v2_mode = VG_CGROUP_V2_SIBLING;
			snprintf(c->v2_parent, sizeof(c->v2_parent), "%s",
			    path);
		} else {
			snprintf(c->why_v2, sizeof(c->why_v2), "our cgroup "
			    "%.200s holds other processes, so it cannot "
			    "enable controllers for children, and its parent "
			    "is not writable", c->v2_self);
			return;
		}
	}
	c->v2_memory = want_mem;
	c->v2_pids = want_pids;
}

/* Finds our writable v1 cgroup of ctrl; why says what is wrong. */
static void
probe_v1(const char *ctrl, char *dir, char *why, size_t whysize)
{
	struct cg_mount m;
	char path[VG_CGROUP_PATH_MAX];

	if (!find_mount("cgroup", ctrl, &m)) {
		snprintf(why, whysize, "no v1 %s hierarchy mounted", ctrl);
		return;
	}
	if (!self_path(ctrl, path, sizeof(path)) ||
	    !mount_path(&m, path, dir, VG_CGROUP_PATH_MAX)) {
		dir[0] = '\0';
		snprintf(why, whysize, "our v1 %s cgroup is not below the "
		    "mount at %.200s", ctrl, m.dir);
		return;
	}
	if (!writable(dir)) {
		snprintf(why, whysize, "our v1 %s cgroup %.200s is not "
		    "writable", ctrl, dir);
		dir[0] = '\0';
	}
}

int
vg_cgroup_probe(struct vg_cgroup_caps *c)
{
	char v1why[256];

	memset(c, 0, sizeof(*c));
	probe_v2(c);
	if (!c->v2_memory) {
		probe_v1("memory", c->v1_memory, v1why, sizeof(v1why));
		if (c->v1_memory[0] != '\0')
			c->v1_memsw = has_file(c->v1_memory,
			    "memory.memsw.limit_in_bytes");
		else
			snprintf(c->why_memory, sizeof(c->why_memory),
			    "%s; %s", c->why_v2[0] ? c->why_v2 :
			    "the memory controller is not enabled for our v2 "
			    "cgroup", v1why);
	}
	if (!c->v2_pids) {
		probe_v1("pids", c->v1_pids, v1why, sizeof(v1why));
		if (c->v1_pids[0] == '\0')
			snprintf(c->why_pids, sizeof(c->why_pids), "%s; %s",
			    c->why_v2[0] ? c->why_v2 : "the pids controller "
			    "is not enabled for our v2 cgroup", v1why);
	}
	return 0;
}

/* ---- creation ---- */

/* Writes value to dir/name (one write: cgroup files take one value). */
static int
write_file(const char *dir, const char *name, const char *value,
    struct vg_err *e)
{
	char path[PBUF];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return vg_err_errno(e, "cannot open '%s'", path);
	if (vg_write_all(fd, value, strlen(value)) != 0)
		rc = vg_err_errno(e, "cannot write '%s' to '%s'", value,
		    path);
	close(fd);
	return rc;
}

/* Writes a number to dir/name. */
static int
write_u64(const char *dir, const char *name, uint64_t v, struct vg_err *e)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	return write_file(dir, name, num, e);
}

/* Checks a task name: it becomes part of directory names. */
static int
check_name(const char *name, struct vg_err *e)
{
	size_t i, n = name == NULL ? 0 : strlen(name);

	if (n == 0 || n > NAME_MAX_LEN)
		return vg_err_set(e, VG_EINVAL, "cgroup name '%s' must have "
		    "1 to %d characters", name == NULL ? "" : name,
		    NAME_MAX_LEN);
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '.' || name[i] == '_' || name[i] == '-'))
			return vg_err_set(e, VG_EINVAL, "cgroup name '%s' has "
			    "'%c' at offset %zu: only letters, digits, '.', "
			    "'_' and '-' are valid", name, name[i], i);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return vg_err_set(e, VG_EINVAL, "cgroup name '%s' is not "
		    "a valid directory name", name);
	return 0;
}

/*
 * The one-time changes ROOT and LEAF modes need: a leaf for this process
 * (LEAF) and the controllers enabled in our cgroup.  Idempotent, so it is
 * simply done again for every task.
 */
static int
enable_v2(const struct vg_cgroup_caps *c, struct vg_err *e)
{
	char leaf[PBUF];
	int rc;

	if (c->v2_mode == VG_CGROUP_V2_LEAF) {
		snprintf(leaf, sizeof(leaf), "%s/" LEAF_NAME, c->v2_self);
		if (mkdir(leaf, 0755) != 0 && errno != EEXIST)
			return vg_err_errno(e, "cannot create '%s'", leaf);
		if ((rc = write_file(leaf, "cgroup.procs", "0", e)) != 0)
			return rc;
	} else if (c->v2_mode != VG_CGROUP_V2_ROOT)
		return 0;
	if (c->v2_memory &&
	    (rc = write_file(c->v2_self, "cgroup.subtree_control", "+memory",
	    e)) != 0)
		return rc;
	if (c->v2_pids &&
	    (rc = write_file(c->v2_self, "cgroup.subtree_control", "+pids",
	    e)) != 0)
		return rc;
	return 0;
}

/* Makes the task directory of one hierarchy below parent. */
static int
make_dir(struct vg_cgroup *cg, int h, const char *parent, const char *name,
    struct vg_err *e)
{
	static unsigned seq;
	struct cg_dir *d = &cg->d[h];
	unsigned n = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	snprintf(d->path, sizeof(d->path), "%s/" TASK_PREFIX "%ld.%u-%s",
	    parent, (long)getpid(), n, name);
	/* A leftover of an earlier vigil with our pid: empty, so it goes. */
	if (mkdir(d->path, 0755) != 0 && (errno != EEXIST ||
	    rmdir(d->path) != 0 || mkdir(d->path, 0755) != 0))
		return vg_err_errno(e, "cannot create cgroup '%s'", d->path);
	d->made = 1;
	return 0;
}

/* Opens cgroup.procs of every directory (and the v2 one itself). */
static int
open_fds(struct vg_cgroup *cg, struct vg_err *e)
{
	char path[PBUF];
	int h;

	for (h = 0; h < VG_CGROUP_NHIER; h++) {
		if (!cg->d[h].made)
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs",
		    cg->d[h].path);
		if ((cg->d[h].procs = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			return vg_err_errno(e, "cannot open '%s'", path);
		cg->fds[cg->nfds++] = cg->d[h].procs;
	}
	if (cg->d[VG_CGROUP_V2].made &&
	    (cg->dirfd = open(cg->d[VG_CGROUP_V2].path, O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) < 0)
		return vg_err_errno(e, "cannot open '%s'",
		    cg->d[VG_CGROUP_V2].path);
	return 0;
}

/* Writes the limits into the directories chosen for them. */
static int
write_limits(struct vg_cgroup *cg, const struct vg_cgroup_caps *c,
    const struct vg_cgroup_limits *lim, struct vg_err *e)
{
	const char *dir;
	int rc;

	if (cg->mem_hier == VG_CGROUP_V2) {
		dir = cg->d[VG_CGROUP_V2].path;
		if ((rc = write_u64(dir, "memory.max", lim->memory, e)) != 0)
			return rc;
		/* Without swap.max = 0 the task could page out past the
		 * limit instead of being OOM-killed. */
		if (has_file(dir, "memory.swap.max") &&
		    (rc = write_file(dir, "memory.swap.max", "0", e)) != 0)
			return rc;
	} else if (cg->mem_hier == VG_CGROUP_V1_MEMORY) {
		dir = cg->d[VG_CGROUP_V1_MEMORY].path;
		/* memsw (memory + swap) must stay >= the memory limit:
		 * write the memory limit first. */
		if ((rc = write_u64(dir, "memory.limit_in_bytes", lim->memory,
		    e)) != 0)
			return rc;
		if (c->v1_memsw && (rc = write_u64(dir,
		    "memory.memsw.limit_in_bytes", lim->memory, e)) != 0)
			return rc;
	}
	if (cg->pids_hier >= 0 && (rc = write_u64(cg->d[cg->pids_hier].path,
	    "pids.max", lim->pids, e)) != 0)
		return rc;
	return 0;
}

/*
 * Chooses the hierarchy of each limit lim asks for (-1: none), appending
 * a downgrade to out for each that none can deliver.
 */
static void
plan(const struct vg_cgroup_caps *caps, const struct vg_cgroup_limits *lim,
    int *mem_hier, int *pids_hier, struct vg_buf *out)
{
	const char *sep = out->len > 0 ? "; " : "";

	*mem_hier = *pids_hier = -1;
	if (lim->memory > 0) {
		if (caps->v2_memory)
			*mem_hier = VG_CGROUP_V2;
		else if (caps->v1_memory[0] != '\0')
			*mem_hier = VG_CGROUP_V1_MEMORY;
		else {
			vg_buf_printf(out, "%sno cgroup memory limit (%s)",
			    sep, caps->why_memory);
			sep = "; ";
		}
	}
	if (lim->pids > 0) {
		if (caps->v2_pids)
			*pids_hier = VG_CGROUP_V2;
		else if (caps->v1_pids[0] != '\0')
			*pids_hier = VG_CGROUP_V1_PIDS;
		else
			vg_buf_printf(out, "%sno cgroup pids limit (%s)",
			    sep, caps->why_pids);
	}
}

/* The host's caps, probed once per process. */
static const struct vg_cgroup_caps *
host_caps(void)
{
	static struct vg_cgroup_caps c;
	static int done;

	if (!done) {
		vg_cgroup_probe(&c);
		done = 1;
	}
	return &c;
}

int
vg_cgroup_new(const struct vg_cgroup_caps *caps,
    const struct vg_cgroup_limits *lim, const char *name,
    struct vg_cgroup **out, struct vg_err *e)
{
	struct vg_cgroup *cg;
	struct vg_err ee;
	int h, rc;

	*out = NULL;
	if ((rc = check_name(name, e)) != 0)
		return rc;
	if (lim->pids > VG_CGROUP_PIDS_MAX)
		return vg_err_set(e, VG_EINVAL, "pids limit %llu is over the "
		    "kernel's maximum: 1 to %llu are valid",
		    (unsigned long long)lim->pids, VG_CGROUP_PIDS_MAX);
	if (caps == NULL)
		caps = host_caps();
	cg = vg_xcalloc(1, sizeof(*cg));
	vg_buf_init(&cg->downgrades);
	cg->dirfd = -1;
	cg->mem_hier = cg->pids_hier = -1;
	for (h = 0; h < VG_CGROUP_NHIER; h++)
		cg->d[h].procs = -1;

	plan(caps, lim, &cg->mem_hier, &cg->pids_hier, &cg->downgrades);
	if (cg->downgrades.len > 0 && lim->required) {
		rc = vg_err_set(e, VG_EUNSUPPORTED, "cgroup limits are "
		    "required but this host cannot deliver them: %s",
		    vg_buf_str(&cg->downgrades));
		goto out;
	}

	/* v2 whenever usable (tracking, cgroup.kill); v1 directories for
	 * the limits v2 cannot take, and v1 pids for tracking without
	 * v2. */
	if (caps->v2_mode != VG_CGROUP_V2_NONE) {
		vg_err_init(&ee);
		if (enable_v2(caps, &ee) != 0) {
			rc = vg_err_set(e, VG_EIO, "cannot enable the memory "
			    "and pids controllers: %s", ee.msg);
			goto out;
		}
		if ((rc = make_dir(cg, VG_CGROUP_V2, caps->v2_parent, name,
		    e)) != 0)
			goto out;
	}
	if (cg->mem_hier == VG_CGROUP_V1_MEMORY && (rc = make_dir(cg,
	    VG_CGROUP_V1_MEMORY, caps->v1_memory, name, e)) != 0)
		goto out;
	if ((cg->pids_hier == VG_CGROUP_V1_PIDS ||
	    (caps->v2_mode == VG_CGROUP_V2_NONE && caps->v1_pids[0] != '\0'))
	    && (rc = make_dir(cg, VG_CGROUP_V1_PIDS, caps->v1_pids, name,
	    e)) != 0)
		goto out;
	if ((rc = write_limits(cg, caps, lim, e)) != 0 ||
	    (rc = open_fds(cg, e)) != 0)
		goto out;

	if (cg->mem_hier >= 0)
		cg->delivered |= VG_CGROUP_MEMORY;
	if (cg->pids_hier >= 0)
		cg->delivered |= VG_CGROUP_PIDS;
	if (cg->nfds > 0)
		cg->delivered |= VG_CGROUP_TREE;
	*out = cg;
	cg = NULL;
out:
	vg_cgroup_free(cg);
	return rc;
}

void
vg_cgroup_plan_downgrades(const struct vg_cgroup_limits *lim,
    struct vg_buf *out)
{
	int mem_hier, pids_hier;

	plan(host_caps(), lim, &mem_hier, &pids_hier, out);
}

unsigned
vg_cgroup_delivered(const struct vg_cgroup *cg)
{
	return cg->delivered;
}

const char *
vg_cgroup_downgrades(const struct vg_cgroup *cg)
{
	return vg_buf_str(&cg->downgrades);
}

const char *
vg_cgroup_dir(const struct vg_cgroup *cg, enum vg_cgroup_hier h)
{
	if ((int)h < 0 || h >= VG_CGROUP_NHIER || !cg->d[h].made)
		return NULL;
	return cg->d[h].path;
}

int
vg_cgroup_procs_fds(const struct vg_cgroup *cg, const int **fds)
{
	*fds = cg->fds;
	return cg->nfds;
}

int
vg_cgroup_join_self(const struct vg_cgroup *cg)
{
	int i;

	/* "0" names the writer (cgroup(7)); one write per file. */
	for (i = 0; i < cg->nfds; i++)
		if (write(cg->fds[i], "0\n", 2) != 2)
			return errno != 0 ? -errno : -EIO;
	return 0;
}

int
vg_cgroup_dirfd_v2(const struct vg_cgroup *cg)
{
	return cg->dirfd;
}

/* ---- accounting ---- */

/* Finds "key N" in a flat-keyed cgroup file. */
static int
read_key(const char *path, const char *key, uint64_t *n, struct vg_err *e)
{
	char line[256];
	size_t kl = strlen(key);
	FILE *fp;

	*n = 0;
	if ((fp = fopen(path, "re")) == NULL)
		return vg_err_errno(e, "cannot open '%s'", path);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			*n = strtoull(line + kl + 1, NULL, 10);
			break;
		}
	fclose(fp);
	return 0;
}

int
vg_cgroup_oom_kills(const struct vg_cgroup *cg, uint64_t *n,
    struct vg_err *e)
{
	char path[PBUF];

	*n = 0;
	if (cg->mem_hier < 0)
		return 0;
	/* v2 memory.events counts the subtree too (unless the host mounts
	 * with memory_localevents), which is what a task tree wants. */
	snprintf(path, sizeof(path), "%s/%s", cg->d[cg->mem_hier].path,
	    cg->mem_hier == VG_CGROUP_V2 ? "memory.events" :
	    "memory.oom_control");
	return read_key(path, "oom_kill", n, e);
}

int
vg_cgroup_memory_peak(const struct vg_cgroup *cg, uint64_t *n,
    struct vg_err *e)
{
	char path[PBUF];
	struct vg_buf b;
	char *end;
	int rc;

	*n = 0;
	if (cg->mem_hier < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", cg->d[cg->mem_hier].path,
	    cg->mem_hier == VG_CGROUP_V2 ? "memory.peak" :
	    "memory.max_usage_in_bytes");
	if (access(path, R_OK) != 0 && errno == ENOENT)
		return 0;	/* a kernel before 5.19 */
	vg_buf_init(&b);
	if ((rc = vg_read_file(path, 64, &b, e)) == 0) {
		*n = strtoull(vg_buf_str(&b), &end, 10);
		if (end == vg_buf_str(&b))
			rc = vg_err_set(e, VG_EIO, "'%s': not a number", path);
	}
	vg_buf_release(&b);
	return rc;
}

/* ---- kill ---- */

/* Reads the pids of dir/cgroup.procs into *pids (caller frees). */
static int
read_procs(const char *dir, pid_t **pids, size_t *n, struct vg_err *e)
{
	char path[PBUF];
	struct vg_buf b;
	const char *p;
	size_t cap = 0;
	char *end;
	long v;
	int rc;

	*pids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	vg_buf_init(&b);
	if ((rc = vg_read_file(path, 16 << 20, &b, e)) != 0) {
		vg_buf_release(&b);
		return rc;
	}
	for (p = vg_buf_str(&b); *p != '\0'; p = end) {
		v = strtol(p, &end, 10);
		if (end == p) {
			end++;
			continue;
		}
		*pids = vg_xgrow(*pids, &cap, *n + 1, sizeof(**pids));
		(*pids)[(*n)++] = (pid_t)v;
	}
	vg_buf_release(&b);
	return 0;
}

/* True when pid is in the list. */
static int
listed(const pid_t *v, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

/*
 * One round of the kill without cgroup.kill: pins every listed process
 * with a pidfd, reads the list again, and signals only those still in it
 * (a pid that exited and was reused between the two reads is not ours).
 * *left is the number of members seen.
 */
static int
kill_round(const char *dir, size_t *left, struct vg_err *e)
{
	pid_t *a = NULL, *b = NULL;
	size_t na, nb, i;
	int *fds, rc;

	*left = 0;
	if ((rc = read_procs(dir, &a, &na, e)) != 0)
		return rc;
	if (na == 0) {
		free(a);
		return 0;
	}
	fds = vg_xcalloc(na, sizeof(*fds));
	/* A failed open keeps its -errno: ENOSYS means no pidfds. */
	for (i = 0; i < na; i++)
		if ((fds[i] = vg_pidfd_open(a[i])) < 0)
			fds[i] = -errno;
	if ((rc = read_procs(dir, &b, &nb, e)) == 0) {
		*left = nb;
		for (i = 0; i < na; i++) {
			if (!listed(b, nb, a[i]))
				continue;
			if (fds[i] >= 0)
				vg_pidfd_send_signal(fds[i], SIGKILL);
			else if (fds[i] == -ENOSYS)	/* before Linux 5.3 */
				kill(a[i], SIGKILL);
		}
	}
	for (i = 0; i < na; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(a);
	free(b);
	return rc;
}

/* Counts the members of dir; 0 when it is gone. */
static size_t
members(const char *dir)
{
	struct vg_err e;
	pid_t *v;
	size_t n;

	if (read_procs(dir, &v, &n, &e) != 0)
		return 0;
	free(v);
	return n;
}

int
vg_cgroup_kill(struct vg_cgroup *cg, struct vg_err *e)
{
	struct timespec ts = { 0, KILL_ROUND_NS };
	const char *v2 = vg_cgroup_dir(cg, VG_CGROUP_V2);
	size_t left, total;
	int h, round, rc, killed = 0;

	if (v2 != NULL && has_file(v2, "cgroup.kill")) {
		if ((rc = write_file(v2, "cgroup.kill", "1", e)) != 0)
			return rc;
		killed = 1;
	} else if (cg->d[VG_CGROUP_V1_PIDS].made) {
		/* No new processes while we go through the list. */
		if ((rc = write_file(cg->d[VG_CGROUP_V1_PIDS].path,
		    "pids.max", "0", e)) != 0)
			return rc;
	}
	for (round = 0; round < KILL_ROUNDS; round++) {
		total = 0;
		for (h = 0; h < VG_CGROUP_NHIER; h++) {
			if (!cg->d[h].made)
				continue;
			if (killed)
				left = members(cg->d[h].path);
			else if ((rc = kill_round(cg->d[h].path, &left,
			    e)) != 0)
				return rc;
			total += left;
		}
		if (total == 0)
			return 0;
		nanosleep(&ts, NULL);
	}
	return vg_err_set(e, VG_ETIMEOUT, "processes remain in cgroup '%s' "
	    "after SIGKILL for %d ms", cg->d[VG_CGROUP_V2].made ?
	    cg->d[VG_CGROUP_V2].path : cg->d[VG_CGROUP_V1_PIDS].made ?
	    cg->d[VG_CGROUP_V1_PIDS].path : cg->d[VG_CGROUP_V1_MEMORY].path,
	    KILL_ROUNDS * (int)(KILL_ROUND_NS / 1000000));
}

/* Removes dir and the cgroups a task made below it, deepest first. */
static void
rmdir_tree(const char *dir, int depth)
{
	char path[PBUF];
	struct dirent *de;
	DIR *d;

	if (rmdir(dir) == 0 || errno != EBUSY || depth >= RMDIR_DEPTH ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path))
			rmdir_tree(path, depth + 1);
	}
	closedir(d);
	rmdir(dir);
}

void
vg_cgroup_free(struct vg_cgroup *cg)
{
	struct vg_err e;
	int h, any = 0;

	if (cg == NULL)
		return;
	for (h = 0; h < VG_CGROUP_NHIER; h++)
		if (cg->d[h].made && members(cg->d[h].path) > 0)
			any = 1;
	if (any)
		vg_cgroup_kill(cg, &e);
	for (h = 0; h < VG_CGROUP_NHIER; h++) {
		if (cg->d[h].procs >= 0)
			close(cg->d[h].procs);
		if (cg->d[h].made)
			rmdir_tree(cg->d[h].path, 0);
	}
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	vg_buf_release(&cg->downgrades);
	free(cg);
}

/* ---- doctor ---- */

static const char *const mode_text[] = {
	[VG_CGROUP_V2_NONE] = "unusable",
	[VG_CGROUP_V2_ENABLED] = "controllers enabled for children",
	[VG_CGROUP_V2_ROOT] = "root cgroup, controllers enabled on first use",
	[VG_CGROUP_V2_LEAF] = "delegated, vigil moves into vigil.main and "
	    "enables the controllers on first use",
	[VG_CGROUP_V2_SIBLING] = "holds other processes, our parent "
	    "enables the controllers",
	[VG_CGROUP_V2_TRACK] = "tracking and kill only",
};

/* The fix for a missing limit, for the doctor line. */
#define FIX_TEXT "run vigil in a delegated cgroup of its own (systemd-run " \
	"--scope -p Delegate=yes vigil ..., or a Slurm step with " \
	"cgroup/v2), or make the v1 hierarchy writable"

void
vg_cgroup_report(const struct vg_cgroup_caps *c, struct vg_buf *out)
{
	if (c->v2_mode == VG_CGROUP_V2_NONE)
		vg_buf_printf(out, "cgroup: v2 unusable (%s)%s\n", c->why_v2,
		    c->v1_memory[0] || c->v1_pids[0] ? "; v1 in use" : "");
	else
		vg_buf_printf(out, "cgroup: v2 at %s (%s), task cgroups "
		    "under %s, tree kill %s\n", c->v2_self,
		    mode_text[c->v2_mode], c->v2_parent,
		    c->v2_kill ? "by cgroup.kill" : "by signalling each "
		    "process (cgroup.kill needs Linux 5.14)");
	if (c->v2_memory)
		vg_buf_adds(out, "cgroup memory: ok (v2 memory.max, "
		    "memory.swap.max 0)\n");
	else if (c->v1_memory[0] != '\0')
		vg_buf_printf(out, "cgroup memory: ok (v1 at %s%s)\n",
		    c->v1_memory, c->v1_memsw ? ", memory+swap" :
		    "; swap not limited: boot with swapaccount=1");
	else
		vg_buf_printf(out, "cgroup memory: missing (%s): "
		    "resources.memory is not enforced on the local backend; "
		    FIX_TEXT "\n", c->why_memory);
	if (c->v2_pids)
		vg_buf_adds(out, "cgroup pids: ok (v2 pids.max)\n");
	else if (c->v1_pids[0] != '\0')
		vg_buf_printf(out, "cgroup pids: ok (v1 at %s)\n", c->v1_pids);
	else
		vg_buf_printf(out, "cgroup pids: missing (%s): limits.pids is "
		    "not enforced on the local backend; " FIX_TEXT "\n",
		    c->why_pids);
}
