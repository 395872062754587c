/*
 * paths.c - path classification.  An operand is resolved the way the
 * kernel would see it (~ and known variables were substituted during
 * expansion; relative paths join the current directory, which follows
 * cd; "." and ".." are folded), then put in a class: protected (/, the
 * system trees, block devices, /home and the home directory itself with
 * its shell and ssh dotfiles, temp and scratch roots), the workspace (the
 * task directory, subtrees of the starting directory, /tmp/x, $TMPDIR/x,
 * $SCRATCH/x, cache subdirectories), or other user data.
 *
 * Unknown parts are reasoned about rather than guessed: a path made
 * wholly of unknown text is "unresolved" (the caller treats it as
 * protected for destructive commands); a partly known one is classified
 * as if the unknown parts were empty, which is exactly the classic
 * accident ("rm -rf $DIR/" with DIR unset).  Globs are classified by the
 * directory they range over.
 */
#include <string.h>

#include "runner/policy/paths.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"

/* Folds "//", "." and ".." of an absolute path in place. */
static size_t
fold(char *p, size_t n)
{
	size_t r = 0, w = 0;

	while (r < n) {
		size_t s, l;

		while (r < n && p[r] == '/')
			r++;
		s = r;
		while (r < n && p[r] != '/')
			r++;
		l = r - s;
		if (l == 0 || (l == 1 && p[s] == '.'))
			continue;
		if (l == 2 && p[s] == '.' && p[s + 1] == '.') {
			while (w > 0 && p[w - 1] != '/')
				w--;
			if (w > 0)
				w--;
			continue;
		}
		p[w++] = '/';
		memmove(p + w, p + s, l);
		w += l;
	}
	if (w == 0)
		p[w++] = '/';
	p[w] = '\0';
	return w;
}

const char *
pl_path_resolve(struct pl_an *an, const char *s, size_t len)
{
	const char *cwd = an->cwd ? an->cwd : "/";
	size_t cl = s[0] == '/' ? 0 : strlen(cwd);
	char *o = pl_alloc(an->a, cl + len + 3);

	if (cl > 0) {
		memcpy(o, cwd, cl);
		o[cl++] = '/';
	}
	memcpy(o + cl, s, len);
	fold(o, cl + len);
	return o;
}

/* True when p equals d or lies beneath it. */
static int
under(const char *p, const char *d, int strict)
{
	size_t n;

	if (d == NULL || d[0] != '/')
		return 0;
	n = strlen(d);
	while (n > 1 && d[n - 1] == '/')
		n--;
	if (n == 1)
		return strict ? p[1] != '\0' : 1;
	if (strncmp(p, d, n) != 0)
		return 0;
	if (p[n] == '\0')
		return !strict;
	return p[n] == '/';
}

/* The first path component of p (absolute) after prefix length k. */
static int
comp_is(const char *p, const char *name)
{
	size_t n = strlen(name);

	return strncmp(p, name, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Number of components of an absolute path. */
static int
depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] != '\0')
			d++;
	return d;
}

/* System trees (protected at every depth) and top-level site
 * directories (protected themselves). */
static const char *const sys[] = { "/usr", "/bin", "/sbin", "/lib",
    "/lib32", "/lib64", "/libx32", "/boot", "/var", "/opt", "/root", "/srv",
    "/snap", "/run", "/efi", "/nix", NULL };
static const char *const tops[] = { "home", "scratch", "data", "lustre",
    "gpfs", "work", "project", "projects", "apps", "software", "shared",
    "global", "cvmfs", "nfs", "net", "mnt", "media", "storage", "archive",
    "local", "fs", "datasets", "users", "group", "groups", "u",
    "lost+found", "cluster", "sw", NULL };

static const char *const rcfiles[] = { ".bashrc", ".bash_profile",
    ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
    ".zshenv", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login",
    ".kshrc", ".mkshrc", ".inputrc", ".xinitrc", ".xprofile", ".xsession",
    ".xsessionrc", ".pam_environment", ".bash_aliases", ".envrc", NULL };

static const char *const secretdirs[] = { ".ssh", ".aws", ".gnupg", ".kube",
    ".azure", ".password-store", ".docker", NULL };

/*
 * What a path below a system tree is, by prefix: every entry whose path
 * is p or a directory above p (a component prefix; PX_TEXT: a text
 * prefix, "/etc/cron" for /etc/crontab and /etc/cron.d) adds its
 * attributes.  One table per tree, read by attrs_of.
 */
#define PX_TEXT		0x1
struct prefix_attr {
	const char	*path;
	unsigned	 attr;
	unsigned	 flags;
};

/* /etc: credentials and privilege, scheduled jobs, the preload list,
 * start-up files, ssh. */
static const struct prefix_attr etc_attrs[] = {
	{ "/etc/sudoers", PA_SUDOERS, 0 },
	{ "/etc/sudoers.d", PA_SUDOERS, 0 },
	{ "/etc/passwd", PA_SUDOERS, 0 },
	{ "/etc/shadow", PA_SUDOERS, 0 },
	{ "/etc/group", PA_SUDOERS, 0 },
	{ "/etc/gshadow", PA_SUDOERS, 0 },
	{ "/etc/doas.conf", PA_SUDOERS, 0 },
	{ "/etc/pam.d", PA_SUDOERS, 0 },
	{ "/etc/security", PA_SUDOERS, 0 },
	{ "/etc/cron", PA_CRON, PX_TEXT },
	{ "/etc/anacrontab", PA_CRON, 0 },
	{ "/etc/ld.so.preload", PA_PRELOAD, 0 },
	{ "/etc/profile", PA_RC, 0 },
	{ "/etc/profile.d", PA_RC, 0 },
	{ "/etc/bash.bashrc", PA_RC, 0 },
	{ "/etc/environment", PA_RC, 0 },
	{ "/etc/zsh", PA_RC, 0 },
	{ "/etc/bashrc", PA_RC, 0 },
	{ "/etc/rc.local", PA_RC, 0 },
	{ "/etc/init.d", PA_RC, 0 },
	{ "/etc/systemd", PA_RC, 0 },
	{ "/etc/xdg/autostart", PA_RC, 0 },
	{ "/etc/ssh", PA_SSH, 0 },
	{ NULL, 0, 0 },
};

/* /proc and /sys: the kernel's settings, and the SysRq trigger. */
static const struct prefix_attr kernel_attrs[] = {
	{ "/proc/sys", PA_KERNEL, 0 },
	{ "/sys", PA_KERNEL, 0 },
	{ "/proc/sysrq-trigger", PA_KERNEL | PA_SYSRQ, 0 },
	{ NULL, 0, 0 },
};

/* The system trees (sys[]): installed software, and the programs and
 * libraries the host runs. */
static const struct prefix_attr sys_attrs[] = {
	{ "/usr", PA_SOFTWARE, 0 },
	{ "/opt", PA_SOFTWARE, 0 },
	{ "/usr/bin", PA_SYSBIN, 0 },
	{ "/usr/sbin", PA_SYSBIN, 0 },
	{ "/usr/lib", PA_SYSBIN, 0 },
	{ "/usr/libexec", PA_SYSBIN, 0 },
	{ "/bin", PA_SYSBIN, 0 },
	{ "/sbin", PA_SYSBIN, 0 },
	{ "/lib", PA_SYSBIN, 0 },
	{ "/lib64", PA_SYSBIN, 0 },
	{ "/boot", PA_SYSBIN, 0 },
	{ NULL, 0, 0 },
};

/* The spools of scheduled jobs. */
static const struct prefix_attr spool_attrs[] = {
	{ "/var/spool/cron", PA_CRON, 0 },
	{ "/var/spool/at", PA_CRON, 0 },
	{ "/var/spool/anacron", PA_CRON, 0 },
	{ NULL, 0, 0 },
};

/* Names below /dev that are no disk: the standard streams and sinks,
 * terminals and logs (char_device has the classes of devices). */
static const char *const dev_special[] = { "null", "zero", "full",
    "random", "urandom", "stdin", "stdout", "stderr", "fd", "ptmx", "pts",
    "console", "log", NULL };

/* The attributes every entry of t at or above p adds; *hit (may be NULL)
 * is set when one matched. */
static unsigned
attrs_of(const struct prefix_attr *t, const char *p, int *hit)
{
	unsigned a = 0;
	int any = 0;

	for (; t->path != NULL; t++)
		if ((t->flags & PX_TEXT) ? strncmp(p, t->path,
		    strlen(t->path)) == 0 : comp_is(p, t->path)) {
			a |= t->attr;
			any = 1;
		}
	if (hit != NULL)
		*hit = any;
	return a;
}

/* True when the first component of d is one of names. */
static int
comp_in(const char *d, const char *const *names)
{
	for (; *names != NULL; names++)
		if (comp_is(d, *names))
			return 1;
	return 0;
}

static int
in_set(const char *const *set, const char *s, size_t n)
{
	for (; *set; set++)
		if (strlen(*set) == n && memcmp(*set, s, n) == 0)
			return 1;
	return 0;
}

/* True when p (below /etc, basename b of bl bytes) is a system private
 * key or credential: anything in a directory named private (Debian's
 * /etc/ssl/private, Red Hat's /etc/pki/tls/private), a *.key or
 * *.keytab file (munge.key, krb5.keytab, kubeadm's pki keys; not apt's
 * archive keys, which are public),
 * Let's Encrypt's privkey*.pem, WireGuard's and NetworkManager's
 * connection files (their PrivateKey and psk), IPsec secrets, the
 * kubeadm admin credentials and slurmdbd.conf (its StoragePass). */
static int
etc_secret(const char *p, const char *b, size_t bl)
{
	static const char *const dirs[] = { "/etc/wireguard",
	    "/etc/NetworkManager/system-connections", "/etc/letsencrypt/keys",
	    NULL };
	static const char *const files[] = { "/etc/ipsec.secrets",
	    "/etc/kubernetes/admin.conf", "/etc/kubernetes/super-admin.conf",
	    "/etc/slurm/slurmdbd.conf", "/etc/slurm-llnl/slurmdbd.conf",
	    "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", NULL };
	size_t pl = strlen(p), k;

	if (strstr(p, "/private/") != NULL ||
	    (pl >= 8 && strcmp(p + pl - 8, "/private") == 0))
		return 1;
	/* apt's keys are the archives' public keys. */
	if (((bl > 4 && strcmp(b + bl - 4, ".key") == 0 &&
	    strncmp(p, "/etc/apt/", 9) != 0) ||
	    (bl > 7 && strcmp(b + bl - 7, ".keytab") == 0) ||
	    (strncmp(b, "privkey", 7) == 0 && bl > 4 &&
	    strcmp(b + bl - 4, ".pem") == 0)))
		return 1;
	for (k = 0; dirs[k] != NULL; k++)
		if (under(p, dirs[k], 0))
			return 1;
	return in_set(files, p, pl);
}

/* True when abs is a private key, credentials or a shadow file. */
static int
pl_path_is_secret(const struct pl_an *an, const char *p)
{
	const char *b = strrchr(p, '/'), *c;
	size_t bl;

	(void)an;
	/* Every secret below lives in a dot directory or under /etc,
	 * /proc or /run. */
	if (strstr(p, "/.") == NULL && strncmp(p, "/etc/", 5) != 0 &&
	    strncmp(p, "/proc/", 6) != 0 && strncmp(p, "/run/", 5) != 0 &&
	    strncmp(p, "/var/run/", 9) != 0)
		return 0;
	b = b ? b + 1 : p;
	bl = strlen(b);
	if (strcmp(p, "/etc/shadow") == 0 || strcmp(p, "/etc/gshadow") == 0 ||
	    strcmp(p, "/etc/shadow-") == 0 || strcmp(p, "/etc/gshadow-") == 0 ||
	    strcmp(p, "/etc/security/opasswd") == 0 ||
	    strcmp(p, "/etc/sudoers") == 0)
		return 1;
	if (strncmp(p, "/etc/ssh/ssh_host_", 18) == 0 &&
	    (bl < 4 || strcmp(b + bl - 4, ".pub") != 0))
		return 1;
	if (strncmp(p, "/etc/", 5) == 0 && etc_secret(p, b, bl))
		return 1;
	if (strncmp(p, "/proc/", 6) == 0 && strcmp(b, "environ") == 0)
		return 1;
	if (strncmp(p, "/run/secrets", 12) == 0 ||
	    strncmp(p, "/var/run/secrets", 16) == 0)
		return 1;
	/* Credentials under any home directory. */
	if (in_set(secretdirs, b, bl) || strcmp(b, ".netrc") == 0 ||
	    strcmp(b, ".git-credentials") == 0 || strcmp(b, ".pgpass") == 0 ||
	    strcmp(b, ".vault-token") == 0 || strcmp(b, ".pypirc") == 0 ||
	    strcmp(b, ".my.cnf") == 0 || strcmp(b, ".npmrc") == 0 ||
	    strcmp(b, ".boto") == 0 || strcmp(b, ".s3cfg") == 0 ||
	    strcmp(b, ".Xauthority") == 0 ||
	    (bl > 8 && strcmp(b + bl - 8, "_history") == 0 && b[0] == '.'))
		return 1;
	if ((c = strstr(p, "/.ssh/")) != NULL) {
		if (strncmp(b, "id_", 3) == 0 &&
		    (bl < 4 || strcmp(b + bl - 4, ".pub") != 0))
			return 1;
		if (bl > 4 && (strcmp(b + bl - 4, ".pem") == 0 ||
		    strcmp(b + bl - 4, ".key") == 0))
			return 1;
		if (strcmp(b, "identity") == 0)
			return 1;
	}
	if (strstr(p, "/.aws/credentials") != NULL ||
	    strstr(p, "/.aws/sso/cache") != NULL ||
	    strstr(p, "/.kube/config") != NULL ||
	    strstr(p, "/.docker/config.json") != NULL ||
	    strstr(p, "/.gnupg/") != NULL ||
	    strstr(p, "/.password-store/") != NULL ||
	    strstr(p, "/.config/gcloud") != NULL ||
	    strstr(p, "/.config/gh/hosts.yml") != NULL ||
	    strstr(p, "/.azure/") != NULL ||
	    strstr(p, "/.terraform.d/credentials") != NULL ||
	    strstr(p, "/.config/rclone/rclone.conf") != NULL)
		return 1;
	return 0;
}

/* True for a character device under /dev (d is the name after "/dev/")
 * that is no disk and no memory: terminals, serial ports, sound, video,
 * GPUs, input.  Writing to one is not a raw disk write. */
static int
char_device(const char *d)
{
	/* Names ending in '/' are directories of such devices: a prefix
	 * alone would take /dev/usbdisk (a udev link to a USB disk) for
	 * /dev/usb/hiddev0. */
	static const char *const pre[] = { "tty", "pts", "snd/", "dri/",
	    "nvidia", "input/", "video", "hidraw", "usb/", "usbmon", "bus/",
	    "net/", "vhost", "kvm", "fuse", "rfkill", "uinput", "lp",
	    "printer", "mqueue", "hugepages", "autofs", "cuse", "userfaultfd",
	    "vcs", "kfd", "accel/", "infiniband/", "ppp", "uhid", "gpiochip",
	    "i2c-", "spidev", "media", "v4l/", "vfio/", NULL };
	int k;

	for (k = 0; pre[k] != NULL; k++)
		if (strncmp(d, pre[k], strlen(pre[k])) == 0)
			return 1;
	return 0;
}

/* Classifies a concrete absolute path (no unknown parts, no glob). */
static void
classify_abs(struct pl_an *an, const char *p, struct pl_path *o)
{
	const char *h = an->home;
	int k, hit;

	o->abs = p;
	o->cls = PC_OTHER;
	o->attr = 0;
	if (pl_path_is_secret(an, p))
		o->attr |= PA_SECRET;
	if (p[0] == '/' && p[1] == '\0') {
		o->cls = PC_PROTECTED;
		o->attr |= PA_ROOT;
		return;
	}
	if (comp_is(p, "/dev")) {
		const char *d = p + 5;

		if (p[4] == '\0') {
			o->cls = PC_PROTECTED;
			return;
		}
		if (comp_in(d, dev_special) || char_device(d)) {
			o->cls = PC_SPECIAL;
			return;
		}
		if (comp_is(d, "tcp") || comp_is(d, "udp")) {
			o->cls = PC_NET;
			return;
		}
		if (comp_is(d, "shm")) {
			o->cls = d[3] == '\0' ? PC_PROTECTED : PC_WORKSPACE;
			if (d[3] == '\0')
				o->attr |= PA_TMPROOT;
			return;
		}
		o->cls = PC_DEVICE;
		return;
	}
	/* The home directory and its dotfiles. */
	if (h != NULL && under(p, h, 0)) {
		size_t hl = strlen(h);
		const char *r = p + hl, *e;
		size_t cl;

		while (hl > 1 && h[hl - 1] == '/')
			hl--, r--;
		if (*r == '\0') {
			o->cls = PC_PROTECTED;
			o->attr |= PA_HOME;
			return;
		}
		r++;
		e = strchr(r, '/');
		cl = e ? (size_t)(e - r) : strlen(r);
		if (in_set(rcfiles, r, cl)) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_RC;
			return;
		}
		if (cl > 8 && memcmp(r + cl - 8, "_history", 8) == 0) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_HISTORY;
			return;
		}
		if (cl == 4 && memcmp(r, ".ssh", 4) == 0) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_SSH;
			if (strstr(r, "authorized_keys") != NULL)
				o->attr |= PA_AUTHKEYS;
			return;
		}
		if (in_set(secretdirs, r, cl) || (cl == 7 &&
		    memcmp(r, ".config", 7) == 0 && (e == NULL ||
		    comp_is(e + 1, "autostart") || comp_is(e + 1, "systemd") ||
		    comp_is(e + 1, "environment.d") || comp_is(e + 1, "fish") ||
		    comp_is(e + 1, "nushell") || comp_is(e + 1, "xonsh") ||
		    comp_is(e + 1, "elvish"))) || (cl == 6 &&
		    memcmp(r, ".local", 6) == 0 && e == NULL) ||
		    (o->attr & PA_SECRET)) {
			o->cls = PC_PROTECTED;
			if (cl == 7 && e != NULL)
				o->attr |= PA_RC;
			return;
		}
		if (an->wscwd != NULL && under(p, an->wscwd, 0) &&
		    strcmp(an->wscwd, h) != 0) {
			o->cls = PC_WORKSPACE;
			return;
		}
		if (cl == 6 && memcmp(r, ".cache", 6) == 0 && e != NULL) {
			o->cls = PC_WORKSPACE;
			return;
		}
		o->cls = PC_USER;
		return;
	}
	if (strstr(p, "/.ssh/") != NULL || (strlen(p) > 5 &&
	    strcmp(p + strlen(p) - 5, "/.ssh") == 0)) {
		o->cls = PC_PROTECTED;
		o->attr |= PA_SSH;
		if (strstr(p, "authorized_keys") != NULL)
			o->attr |= PA_AUTHKEYS;
		return;
	}
	if (comp_is(p, "/root") && depth(p) == 2) {
		const char *r = p + 6;

		if (in_set(rcfiles, r, strlen(r))) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_RC;
			return;
		}
	}
	if (comp_is(p, "/home")) {
		if (depth(p) <= 2) {
			o->cls = PC_PROTECTED;
			o->attr |= depth(p) == 2 ? PA_HOME : 0;
			return;
		}
		if (strstr(p, "/.ssh") || (o->attr & PA_SECRET)) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_SSH;
			return;
		}
		if (depth(p) == 3) {
			const char *r = strchr(p + 6, '/') + 1;
			size_t cl = strlen(r);

			if (in_set(rcfiles, r, cl)) {
				o->cls = PC_PROTECTED;
				o->attr |= PA_RC;
				return;
			}
		}
	}
	if (an->task_dir != NULL && under(p, an->task_dir, 0)) {
		o->cls = PC_WORKSPACE;
		return;
	}
	/* A relative operand below the directory vigil was started in is
	 * the workspace, wherever that is, as long as the command has not
	 * changed directory. */
	if (an->relpath && an->cwd == an->startcwd && under(p, an->startcwd,
	    1) && !(o->attr & PA_SECRET) && !comp_is(p, "/dev") &&
	    !comp_is(p, "/proc") && !comp_is(p, "/sys")) {
		o->cls = PC_WORKSPACE;
		return;
	}
	if (an->wscwd != NULL && under(p, an->wscwd, 0)) {
		o->cls = PC_WORKSPACE;
		return;
	}
	for (k = 0; k < an->ntmproots; k++) {
		if (under(p, an->tmproots[k], 1)) {
			o->cls = PC_WORKSPACE;
			return;
		}
		if (under(p, an->tmproots[k], 0)) {
			o->cls = PC_PROTECTED;
			o->attr |= PA_TMPROOT;
			return;
		}
	}
	if ((comp_is(p, "/var/cache") && depth(p) >= 3) ||
	    comp_is(p, "/var/lib/apt/lists")) {
		if (depth(p) >= 4 || comp_is(p, "/var/lib/apt/lists")) {
			o->cls = comp_is(p, "/var/lib/apt/lists") &&
			    depth(p) == 4 ? PC_PROTECTED : PC_WORKSPACE;
			return;
		}
	}
	if (comp_is(p, "/etc")) {
		o->cls = PC_PROTECTED;
		o->attr |= PA_ETC | attrs_of(etc_attrs, p, NULL);
		return;
	}
	if (comp_is(p, "/proc") || comp_is(p, "/sys")) {
		o->cls = PC_PROTECTED;
		o->attr |= attrs_of(kernel_attrs, p, NULL);
		return;
	}
	o->attr |= attrs_of(spool_attrs, p, &hit);
	if (hit) {
		o->cls = PC_PROTECTED;
		return;
	}
	/* /usr and /opt are protected at every depth, /usr/local and
	 * /opt/X included (software installed for everyone). */
	if (comp_in(p, sys)) {
		o->cls = PC_PROTECTED;
		o->attr |= attrs_of(sys_attrs, p, NULL);
		return;
	}
	if (depth(p) == 1 && in_set(tops, p + 1, strlen(p + 1))) {
		o->cls = PC_PROTECTED;
		return;
	}
	o->cls = PC_OTHER;
}

/* True for a glob component that matches every name ("*", ".*"). */
static int
match_all(const char *c, size_t n)
{
	size_t i;
	int lit = 0;

	for (i = 0; i < n; i++) {
		if (c[i] == '*' || c[i] == '?' || c[i] == '[' || c[i] == ']' ||
		    c[i] == '!' || c[i] == '^')
			continue;
		if (c[i] == '.' && (i == 0 || c[i - 1] == '*'))
			continue;
		lit = 1;
	}
	return !lit;
}

/* Classifies after resolution; see pl_path_classify. */
static void
classify_field(struct pl_an *an, const struct pl_field *f,
    struct pl_path *o);

void
pl_path_classify(struct pl_an *an, const struct pl_field *f,
    struct pl_path *o)
{
	int save = an->relpath;

	an->relpath = f->len > 0 && f->s[0] != '/' && f->s[0] != PL_UNK &&
	    !(f->flags & F_UNK && memchr(f->s, '/', f->len) == NULL);
	classify_field(an, f, o);
	an->relpath = save;
}

static void
classify_field(struct pl_an *an, const struct pl_field *f,
    struct pl_path *o)
{
	const char *s = f->s;
	size_t n = f->len, i, k;
	char *t;

	memset(o, 0, sizeof(*o));
	if (f->flags & F_UNK) {
		int known = 0;

		for (i = 0; i < n; i++)
			if (s[i] != PL_UNK && s[i] != '"' && s[i] != '\'')
				known = 1;
		if (!known) {
			o->abs = "<unknown>";
			if (f->taint & T_TMP) {
				o->cls = PC_WORKSPACE;
				return;
			}
			o->cls = PC_PROTECTED;
			o->attr = PA_UNRESOLVED;
			return;
		}
		/* Classify as if the unknown parts were empty. */
		t = pl_alloc(an->a, n + 1);
		for (i = 0, k = 0; i < n; i++)
			if (s[i] != PL_UNK)
				t[k++] = s[i];
		t[k] = '\0';
		s = t;
		n = k;
	}
	if (f->taint & T_TMP) {
		o->cls = PC_WORKSPACE;
		o->abs = pl_path_resolve(an, s, n);
		return;
	}
	if ((f->flags & F_GLOB) && (memchr(s, '*', n) || memchr(s, '?', n) ||
	    memchr(s, '[', n))) {
		const char *abs = pl_path_resolve(an, s, n), *g, *dir;
		const char *slash, *comp;
		struct pl_path d;
		size_t cl;

		g = abs;
		while (*g && *g != '*' && *g != '?' && *g != '[')
			g++;
		slash = g;
		while (slash > abs && *slash != '/')
			slash--;
		dir = slash == abs ? "/" : pl_strndup(an->a, abs,
		    (size_t)(slash - abs));
		comp = slash + 1;
		cl = strcspn(comp, "/");
		classify_abs(an, dir, &d);
		o->abs = abs;
		/* A selection ("*.o") in the starting directory. */
		if (an->relpath && an->cwd == an->startcwd &&
		    strcmp(dir, an->startcwd) == 0 && !match_all(comp, cl) &&
		    comp[0] != '.') {
			o->cls = PC_WORKSPACE;
			return;
		}
		if (d.cls == PC_PROTECTED && ((d.attr & (PA_ROOT | PA_HOME |
		    PA_TMPROOT)) || match_all(comp, cl) || comp[0] == '.' ||
		    (d.attr & PA_ROOT) == 0)) {
			if ((d.attr & PA_HOME) && comp[0] != '.' &&
			    !match_all(comp, cl)) {
				o->cls = PC_USER;
				return;
			}
			if ((d.attr & PA_TMPROOT) && !match_all(comp, cl)) {
				o->cls = PC_WORKSPACE;
				return;
			}
			o->cls = PC_PROTECTED;
			o->attr = d.attr | ((d.attr & PA_HOME) &&
			    comp[0] == '.' ? PA_RC : 0);
			return;
		}
		/* A subset of an unprotected directory: its children. */
		classify_abs(an, abs, o);
		if (o->cls == PC_PROTECTED && d.cls != PC_PROTECTED)
			o->cls = d.cls;
		return;
	}
	classify_abs(an, pl_path_resolve(an, s, n), o);
}

/* True when p is "/", the home directory, /home or a system tree
 * itself, or a glob over one of them (top-level site directories such
 * as /scratch are protected but below the floor: a site may allow their
 * purge); see paths.h. */
int
pl_path_top(const struct pl_an *an, const struct pl_path *p)
{
	const char *s = p->abs;
	size_t n;
	int k;

	if (p->cls != PC_PROTECTED || (p->attr & PA_UNRESOLVED) || s == NULL)
		return 0;
	if (p->attr & (PA_ROOT | PA_HOME))
		return 1;
	n = strlen(s);
	/* Globs and trailing slashes: the directory they range over. */
	while (n > 1 && (s[n - 1] == '*' || s[n - 1] == '.' ||
	    s[n - 1] == '/'))
		n--;
	if (an->home != NULL && strlen(an->home) == n &&
	    strncmp(s, an->home, n) == 0)
		return 1;
	if (n <= 1)
		return 1;
	if (memchr(s + 1, '/', n - 1) != NULL)
		return 0;
	if (n == 4 && strncmp(s, "/etc", 4) == 0)
		return 1;
	for (k = 0; sys[k] != NULL; k++)
		if (strlen(sys[k]) == n && strncmp(s, sys[k], n) == 0)
			return 1;
	return n == 5 && strncmp(s, "/home", 5) == 0;
}
