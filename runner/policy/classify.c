/*
 * classify.c - what one simple command does, by program: a table maps
 * the normalised program name to a handler that reads the options and
 * operands the way that program does and reports findings by category.
 * Handlers also model the command's standard output for the stream
 * analysis (downloads are tainted "net", readers of secret files
 * "secret", shells reading their input pass code along) and track the
 * state the shell keeps (cd, variables set by read, printf -v, export).
 *
 * Unknown programs are fine: the gate judges what commands do, and a
 * program it does not know is ordinary work unless its operands or
 * redirections say otherwise.
 *
 * This file holds the table (handlers[]), its lookup and pl_classify; the
 * handlers live by job in classify-*.c (writing, permissions, disks,
 * network, nested code, system configuration, host disruption, miners
 * and waiting, containers, shell state), the helpers they share in
 * classify-help.c, all declared in classify-int.h.  A scheduler's own
 * commands (scancel, qdel, ...) are handled in its own file and
 * registered with pl_register_progs.
 */
#include <string.h>

#include "runner/policy/classify.h"
#include "runner/policy/hostverbs.h"
#include "runner/policy/arena.h"
#include "runner/policy/names.h"
#include "runner/policy/nested.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"
#include "runner/policy/classify-int.h"

typedef void (*handler_fn)(struct pl_an *an, struct pl_cmd *c);

struct handler {
	const char	*name;
	handler_fn	 fn;
};

/* ---- table ---- */

static const struct handler handlers[] = {
	{ "rm", pl_h_rm }, { "unlink", pl_h_rm }, { "shred", pl_h_rm },
	{ "srm", pl_h_rm }, { "wipe", pl_h_rm }, { "rmdir", pl_h_rmdir },
	{ "mv", pl_h_copy }, { "cp", pl_h_copy }, { "install", pl_h_copy },
	{ "ln", pl_h_copy }, { "tee", pl_h_tee }, { "truncate", pl_h_truncate },
	{ "touch", pl_h_touch }, { "dd", pl_h_dd }, { "sed", pl_h_sed },
	{ "cat", pl_h_reader }, { "tac", pl_h_reader }, { "head", pl_h_reader },
	{ "tail", pl_h_reader }, { "less", pl_h_reader },
	{ "more", pl_h_reader },
	{ "nl", pl_h_reader }, { "od", pl_h_reader },
	{ "hexdump", pl_h_reader },
	{ "strings", pl_h_reader }, { "grep", pl_h_reader },
	{ "egrep", pl_h_reader },
	{ "fgrep", pl_h_reader }, { "rg", pl_h_reader },
	{ "zcat", pl_h_reader },
	{ "tar", pl_h_reader }, { "zip", pl_h_reader }, { "7z", pl_h_reader },
	{ "unzip", pl_h_reader },
	{ "sort", pl_h_reader }, { "uniq", pl_h_reader },
	{ "cut", pl_h_reader },
	{ "ed", pl_h_editor }, { "red", pl_h_editor }, { "ex", pl_h_editor },
	{ "nvim", pl_h_editor }, { "sponge", pl_h_sponge },
	{ "crudini", pl_h_crudini },
	{ "emacs", pl_h_emacs }, { "sd", pl_h_sd },
	{ "conda", pl_h_shell_init },
	{ "mamba", pl_h_shell_init }, { "micromamba", pl_h_shell_init },
	{ "rustup-init", pl_h_shell_init }, { "pipx", pl_h_shell_init },
	{ "opam", pl_h_shell_init }, { "broot", pl_h_shell_init },
	{ "jq", pl_h_reader }, { "gpg", pl_h_keys }, { "gpg2", pl_h_keys },
	{ "gpgsm", pl_h_keys }, { "kubectl", pl_h_keys }, { "pass", pl_h_keys },
	{ "aws", pl_h_keys }, { "gh", pl_h_keys }, { "gcloud", pl_h_keys },
	{ "az", pl_h_keys }, { "vault", pl_h_keys }, { "op", pl_h_keys },
	{ "secret-tool", pl_h_keys }, { "security", pl_h_keys },
	{ "melt", pl_h_keys }, { "paperkey", pl_h_keys },
	{ "vim", pl_h_editor },
	{ "vi", pl_h_editor }, { "nano", pl_h_reader }, { "view", pl_h_editor },
	{ "bat", pl_h_reader }, { "diff", pl_h_reader },
	{ "md5sum", pl_h_reader },
	{ "wc", pl_h_reader }, { "paste", pl_h_reader },
	{ "column", pl_h_reader },
	{ "chmod", pl_h_chmod }, { "chown", pl_h_chown },
	{ "chgrp", pl_h_chown },
	{ "setfacl", pl_h_chown }, { "chattr", pl_h_chown },
	{ "setcap", pl_h_setcap },
	{ "mkfs", pl_h_disk }, { "mke2fs", pl_h_disk }, { "mkswap", pl_h_disk },
	{ "wipefs", pl_h_disk }, { "fdisk", pl_h_disk },
	{ "sfdisk", pl_h_disk },
	{ "cfdisk", pl_h_disk }, { "parted", pl_h_disk },
	{ "gdisk", pl_h_disk },
	{ "sgdisk", pl_h_disk }, { "blkdiscard", pl_h_disk },
	{ "hdparm", pl_h_disk },
	{ "badblocks", pl_h_disk }, { "pvcreate", pl_h_disk },
	{ "pvremove", pl_h_disk }, { "vgcreate", pl_h_disk },
	{ "vgremove", pl_h_disk },
	{ "lvcreate", pl_h_disk }, { "lvremove", pl_h_disk },
	{ "mdadm", pl_h_disk },
	{ "cryptsetup", pl_h_disk }, { "zpool", pl_h_disk },
	{ "zfs", pl_h_disk },
	{ "dmsetup", pl_h_disk }, { "losetup", pl_h_disk },
	{ "nvme", pl_h_disk },
	{ "tune2fs", pl_h_disk }, { "resize2fs", pl_h_disk },
	{ "e2fsck", pl_h_disk },
	{ "fsck", pl_h_disk }, { "debugfs", pl_h_disk },
	{ "xfs_repair", pl_h_disk },
	{ "mkdosfs", pl_h_disk }, { "mkntfs", pl_h_disk },
	{ "btrfs", pl_h_disk },
	{ "sg_format", pl_h_disk }, { "partprobe", pl_h_disk },
	{ "vgextend", pl_h_disk }, { "vgreduce", pl_h_disk },
	{ "vgchange", pl_h_disk },
	{ "vgrename", pl_h_disk }, { "vgmerge", pl_h_disk },
	{ "vgsplit", pl_h_disk },
	{ "lvresize", pl_h_disk }, { "lvextend", pl_h_disk },
	{ "lvreduce", pl_h_disk },
	{ "lvconvert", pl_h_disk }, { "lvrename", pl_h_disk },
	{ "lvchange", pl_h_disk },
	{ "pvmove", pl_h_disk }, { "pvresize", pl_h_disk },
	{ "pvchange", pl_h_disk },
	{ "grub-install", pl_h_disk }, { "grub2-install", pl_h_disk },
	{ "efibootmgr", pl_h_disk }, { "flashrom", pl_h_disk },
	{ "fwupdmgr", pl_h_disk }, { "fwupdtool", pl_h_disk },
	{ "bootctl", pl_h_disk }, { "blockdev", pl_h_disk },
	{ "qemu-img", pl_h_imager }, { "ddrescue", pl_h_imager },
	{ "bmaptool", pl_h_imager }, { "partclone", pl_h_imager },
	{ "ntfsclone", pl_h_imager }, { "dcfldd", pl_h_dd },
	{ "dc3dd", pl_h_dd },
	{ "mount", pl_h_mount }, { "umount", pl_h_mount },
	{ "swapon", pl_h_mount },
	{ "swapoff", pl_h_mount }, { "udisksctl", pl_h_mount },
	{ "curl", pl_h_curl }, { "wget", pl_h_curl },
	{ "nc", pl_h_nc }, { "ncat", pl_h_nc }, { "netcat", pl_h_nc },
	{ "cryptcat", pl_h_nc }, { "pwncat", pl_h_nc }, { "socat", pl_h_socat },
	{ "telnet", pl_h_netsend }, { "openssl", pl_h_netsend },
	{ "mail", pl_h_netsend }, { "mailx", pl_h_netsend },
	{ "sendmail", pl_h_netsend },
	{ "mutt", pl_h_netsend }, { "ftp", pl_h_netsend },
	{ "scp", pl_h_remote_copy }, { "rsync", pl_h_remote_copy },
	{ "sftp", pl_h_remote_copy },
	{ "sh", pl_h_shell }, { "bash", pl_h_shell }, { "zsh", pl_h_shell },
	{ "dash", pl_h_shell }, { "ksh", pl_h_shell }, { "ash", pl_h_shell },
	{ "mksh", pl_h_shell }, { "fish", pl_h_shell }, { "csh", pl_h_shell },
	{ "tcsh", pl_h_shell }, { "rbash", pl_h_shell },
	{ "python", pl_h_interp }, { "perl", pl_h_interp },
	{ "ruby", pl_h_interp },
	{ "node", pl_h_interp }, { "php", pl_h_interp }, { "lua", pl_h_interp },
	{ "Rscript", pl_h_interp }, { "awk", pl_h_awk },
	{ "eval", pl_h_eval }, { "source", pl_h_source }, { ".", pl_h_source },
	{ "trap", pl_h_trap }, { "alias", pl_h_alias },
	{ "watch", pl_h_cmdstring }, { "tmux", pl_h_cmdstring },
	{ "ssh", pl_h_ssh },
	{ "su", pl_h_priv }, { "runuser", pl_h_priv }, { "sg", pl_h_priv },
	{ "newgrp", pl_h_priv }, { "visudo", pl_h_priv },
	{ "useradd", pl_h_priv },
	{ "userdel", pl_h_priv }, { "usermod", pl_h_priv },
	{ "adduser", pl_h_priv },
	{ "deluser", pl_h_priv }, { "groupadd", pl_h_priv },
	{ "groupdel", pl_h_priv },
	{ "groupmod", pl_h_priv }, { "gpasswd", pl_h_priv },
	{ "addgroup", pl_h_priv },
	{ "delgroup", pl_h_priv }, { "chpasswd", pl_h_priv },
	{ "passwd", pl_h_priv },
	{ "chage", pl_h_priv }, { "vipw", pl_h_priv }, { "vigr", pl_h_priv },
	{ "chsh", pl_h_priv }, { "chfn", pl_h_priv }, { "pwconv", pl_h_priv },
	{ "sudoedit", pl_h_priv }, { "ksu", pl_h_priv },
	{ "pleaseedit", pl_h_priv },
	{ "calife", pl_h_priv },
	{ "crontab", pl_h_crontab }, { "scrontab", pl_h_crontab },
	{ "at", pl_h_at }, { "batch", pl_h_at },
	{ "systemctl", pl_h_systemctl }, { "service", pl_h_service },
	{ "update-rc.d", pl_h_service }, { "chkconfig", pl_h_service },
	{ "update-alternatives", pl_h_alternatives },
	{ "alternatives", pl_h_alternatives },
	{ "rc-service", pl_h_service }, { "rc-update", pl_h_service },
	{ "launchctl", pl_h_service }, { "initctl", pl_h_service },
	{ "iptables", pl_h_firewall }, { "ip6tables", pl_h_firewall },
	{ "iptables-legacy", pl_h_firewall }, { "iptables-nft", pl_h_firewall },
	{ "ebtables", pl_h_firewall }, { "arptables", pl_h_firewall },
	{ "iptables-restore", pl_h_firewall },
	{ "ip6tables-restore", pl_h_firewall },
	{ "iptables-save", pl_h_firewall }, { "nft", pl_h_firewall },
	{ "ufw", pl_h_firewall }, { "firewall-cmd", pl_h_firewall },
	{ "firewall-offline-cmd", pl_h_firewall },
	{ "sysctl", pl_h_sysctl },
	{ "modprobe", pl_h_module }, { "insmod", pl_h_module },
	{ "rmmod", pl_h_module },
	{ "hostname", pl_h_hostconf }, { "hostnamectl", pl_h_hostconf },
	{ "timedatectl", pl_h_hostconf }, { "date", pl_h_hostconf },
	{ "hwclock", pl_h_hostconf }, { "localectl", pl_h_hostconf },
	{ "chronyc", pl_h_hostconf }, { "ntpdate", pl_h_hostconf },
	{ "sntp", pl_h_hostconf },
	{ "ip", pl_h_ip }, { "ifconfig", pl_h_ip }, { "ifdown", pl_h_ip },
	{ "ifup", pl_h_ip }, { "nmcli", pl_h_ip }, { "route", pl_h_ip },
	{ "ipset", pl_h_net }, { "conntrack", pl_h_net }, { "tc", pl_h_net },
	{ "ethtool", pl_h_net }, { "iw", pl_h_net }, { "iwconfig", pl_h_net },
	{ "brctl", pl_h_net }, { "bridge", pl_h_net }, { "wg", pl_h_net },
	{ "wg-quick", pl_h_net }, { "arp", pl_h_net }, { "netplan", pl_h_net },
	{ "networkctl", pl_h_net }, { "resolvectl", pl_h_net },
	{ "ifenslave", pl_h_net }, { "vconfig", pl_h_net },
	{ "nmtui", pl_h_net },
	{ "rfkill", pl_h_net }, { "wpa_cli", pl_h_net }, { "iwctl", pl_h_net },
	{ "connmanctl", pl_h_net }, { "dhclient", pl_h_net },
	{ "dhcpcd", pl_h_net },
	{ "apt", pl_h_pkg }, { "apt-get", pl_h_pkg }, { "aptitude", pl_h_pkg },
	{ "dpkg", pl_h_pkg }, { "yum", pl_h_pkg }, { "dnf", pl_h_pkg },
	{ "rpm", pl_h_pkg }, { "zypper", pl_h_pkg }, { "pacman", pl_h_pkg },
	{ "apk", pl_h_pkg }, { "snap", pl_h_pkg }, { "apt-key", pl_h_pkg },
	{ "add-apt-repository", pl_h_pkg }, { "yum-config-manager", pl_h_pkg },
	{ "apt-add-repository", pl_h_pkg },
	{ "dnf5", pl_h_pkg },
	{ "update-grub", pl_h_boot }, { "update-grub2", pl_h_boot },
	{ "grub-mkconfig", pl_h_boot }, { "grub2-mkconfig", pl_h_boot },
	{ "update-initramfs", pl_h_boot }, { "mkinitcpio", pl_h_boot },
	{ "dracut", pl_h_boot }, { "depmod", pl_h_boot },
	{ "dpkg-reconfigure", pl_h_boot }, { "grub-editenv", pl_h_boot },
	{ "grub2-editenv", pl_h_boot }, { "flatpak", pl_h_pkg },
	{ "setenforce", pl_h_security }, { "auditctl", pl_h_security },
	{ "aa-teardown", pl_h_security }, { "aa-disable", pl_h_security },
	{ "journalctl", pl_h_security }, { "history", pl_h_security },
	{ "kill", pl_h_kill }, { "pkill", pl_h_pkill },
	{ "killall", pl_h_pkill },
	{ "killall5", pl_h_pkill }, { "skill", pl_h_pkill },
	{ "slay", pl_h_pkill },
	{ "shutdown", pl_h_power }, { "reboot", pl_h_power },
	{ "halt", pl_h_power },
	{ "poweroff", pl_h_power }, { "init", pl_h_power },
	{ "telinit", pl_h_power },
	{ "kexec", pl_h_power }, { "loginctl", pl_h_power },
	{ "busctl", pl_h_dbus }, { "dbus-send", pl_h_dbus },
	{ "gdbus", pl_h_dbus },
	{ "qdbus", pl_h_dbus }, { "qdbus6", pl_h_dbus },
	{ "qdbus-qt5", pl_h_dbus },
	{ "rtcwake", pl_h_power_front },
	{ "xfce4-session-logout", pl_h_power_front },
	{ "gnome-session-quit", pl_h_power_front },
	{ "lxqt-leave", pl_h_power_front },
	{ "xmrig", pl_h_miner }, { "xmr-stak", pl_h_miner },
	{ "cpuminer", pl_h_miner },
	{ "minerd", pl_h_miner }, { "cgminer", pl_h_miner },
	{ "bfgminer", pl_h_miner },
	{ "ccminer", pl_h_miner }, { "ethminer", pl_h_miner },
	{ "t-rex", pl_h_miner },
	{ "nbminer", pl_h_miner }, { "lolminer", pl_h_miner },
	{ "gminer", pl_h_miner },
	{ "nanominer", pl_h_miner }, { "teamredminer", pl_h_miner },
	{ "phoenixminer", pl_h_miner }, { "srbminer-multi", pl_h_miner },
	{ "xmrig-cuda", pl_h_miner },
	{ "sleep", pl_h_sleep }, { "wait", pl_h_wait },
	{ "docker", pl_h_docker }, { "podman", pl_h_docker },
	{ "nerdctl", pl_h_docker },
	{ "xterm", pl_h_xterm },
	{ "cd", pl_h_cd }, { "pushd", pl_h_cd },
	{ "export", pl_h_assignlike }, { "declare", pl_h_assignlike },
	{ "typeset", pl_h_assignlike }, { "local", pl_h_assignlike },
	{ "readonly", pl_h_assignlike }, { "set", pl_h_set },
	{ "unset", pl_h_unset },
	{ "read", pl_h_read }, { "mktemp", pl_h_mktemp },
	{ "which", pl_h_which },
	{ "type", pl_h_which }, { "whereis", pl_h_which },
	{ "basename", pl_h_pathop }, { "dirname", pl_h_pathop },
	{ "realpath", pl_h_pathop }, { "readlink", pl_h_pathop },
	{ "pwd", pl_h_pathop },
	{ "env", pl_h_env }, { "printenv", pl_h_env },
	{ "true", pl_h_true }, { ":", pl_h_true }, { "false", pl_h_true },
	{ "test", pl_h_true }, { "[", pl_h_true }, { "mkdir", pl_h_true },
	{ "find", pl_h_find }, { "ls", pl_h_lister }, { "fd", pl_h_lister },
	{ "fdfind", pl_h_lister }, { "git", pl_h_lister },
};

static const void *hslots[sizeof(handlers) / sizeof(handlers[0])];
static struct pl_names hnames = PL_NAMES(handlers, hslots);

/* Tables of programs registered from outside the floor (a scheduler's
 * commands): few, each a handful of names. */
#define MAX_PROG_TABLES	8
static const struct pl_prog *prog_tables[MAX_PROG_TABLES];

void
pl_register_progs(const struct pl_prog *v)
{
	size_t i;

	for (i = 0; i < MAX_PROG_TABLES && prog_tables[i] != NULL; i++)
		if (prog_tables[i] == v)
			return;
	if (i < MAX_PROG_TABLES)
		prog_tables[i] = v;
}

static handler_fn
lookup(const char *name)
{
	const struct handler *h = pl_names_find(&hnames, name);
	const struct pl_prog *p;
	size_t i;

	if (h != NULL)
		return h->fn;
	for (i = 0; i < MAX_PROG_TABLES && prog_tables[i] != NULL; i++)
		for (p = prog_tables[i]; p->name != NULL; p++)
			if (strcmp(p->name, name) == 0)
				return p->fn;
	return NULL;
}

/* True when b[k..n) is a version suffix ("3", "3.11", ""). */
static int
version_tail(const char *b, size_t n, size_t k)
{
	for (; k < n; k++)
		if (!((b[k] >= '0' && b[k] <= '9') || b[k] == '.'))
			return 0;
	return 1;
}

const char *
pl_prog_name(struct pl_arena *a, const char *s, size_t len)
{
	const char *b = s + len;
	size_t n;
	char *o;

	while (b > s && b[-1] != '/')
		b--;
	n = len - (size_t)(b - s);
#define PFX(p) (n >= sizeof(p) - 1 && memcmp(b, p, sizeof(p) - 1) == 0)
#define REST_VER(k) version_tail(b, n, (k))
	if (PFX("python") && REST_VER(6))
		return "python";
	if (PFX("pypy") && REST_VER(4))
		return "python";
	if (PFX("perl") && REST_VER(4))
		return "perl";
	if (PFX("ruby") && REST_VER(4))
		return "ruby";
	if (PFX("php") && REST_VER(3))
		return "php";
	if (PFX("lua") && REST_VER(3))
		return "lua";
	if (PFX("pip") && REST_VER(3))
		return "pip";
	if (n == 6 && memcmp(b, "nodejs", 6) == 0)
		return "node";
	if (PFX("mkfs.") || PFX("mkfs") || PFX("mke2fs"))
		return "mkfs";
	if ((n == 4 && (memcmp(b, "gawk", 4) == 0 || memcmp(b, "mawk", 4) == 0
	    || memcmp(b, "nawk", 4) == 0)) || (n == 7 &&
	    memcmp(b, "busybox", 7) == 0 && 0))
		return "awk";
	if (PFX("nc.") || (n == 4 && memcmp(b, "ncat", 4) == 0))
		return "nc";
	if (PFX("fsck."))
		return "fsck";
	if (PFX("partclone."))
		return "partclone";
#undef PFX
#undef REST_VER
	o = pl_strndup(a, b, n);
	return o;
}

/* Init scripts run with a verb: /etc/init.d/NAME stop. */
static int
init_script(struct pl_an *an, struct pl_cmd *c)
{
	const struct pl_field *f = &c->argv[0];

	if (strncmp(f->s, "/etc/init.d/", 12) != 0 &&
	    strncmp(f->s, "/etc/rc.d/", 10) != 0)
		return 0;
	pl_h_service(an, c);
	return 1;
}

/* The language of a script by its "#!" line: a shell or one the light
 * scan reads ("sh" without one), NULL for another interpreter. */
static const char *
shebang_lang(struct pl_an *an, const char *s, size_t n)
{
	static const char *const scanned[] = { "python", "perl", "ruby",
	    "node", "php", "lua", "awk", NULL };
	static const char *const shells[] = { "sh", "bash", "dash", "zsh",
	    "ksh", "mksh", "ash", "busybox", NULL };
	const char *e, *w, *name;
	int k, guard;

	if (s == NULL || n < 2 || s[0] != '#' || s[1] != '!')
		return "sh";
	e = memchr(s, '\n', n);
	e = e ? e : s + n;
	w = s + 2;
	for (guard = 0; guard < 4; guard++) {
		const char *we;

		while (w < e && (*w == ' ' || *w == '\t'))
			w++;
		we = w;
		while (we < e && *we != ' ' && *we != '\t')
			we++;
		if (we == w)
			return NULL;
		name = pl_prog_name(an->a, w, (size_t)(we - w));
		if (strcmp(name, "env") != 0 && w[0] != '-')
			break;
		w = we;
	}
	if (guard == 4)
		return NULL;
	if (strcmp(name, "Rscript") == 0)
		return "r";
	for (k = 0; scanned[k] != NULL; k++)
		if (strcmp(name, scanned[k]) == 0)
			return scanned[k];
	for (k = 0; shells[k] != NULL; k++)
		if (strcmp(name, shells[k]) == 0)
			return "sh";
	return NULL;
}

/* Runs a program named by path: a file downloaded or written before. */
static int
run_written(struct pl_an *an, struct pl_cmd *c)
{
	struct pl_file *tf;
	struct pl_stream s;
	const char *lang;

	if (memchr(c->argv[0].s, '/', c->argv[0].len) == NULL)
		return 0;
	if ((tf = pl_written_file(an, &c->argv[0], &s)) == NULL)
		return 0;
	if ((lang = shebang_lang(an, tf->content, tf->clen)) != NULL)
		pl_code_to_interp(an, c, lang, &s, c->off, c->len);
	return 1;
}

/* Programs that only read the devices they are given (the read-only
 * table of docs/policy.md); tools with a handler judge their own
 * read-only forms (disk_reads). */
static const char *const device_readers[] = { "lsblk", "blkid", "findmnt",
    "lsscsi", "smartctl", "iostat", "isoinfo", "isosize", "udevadm", "file",
    "stat", "df", "du", "dumpe2fs", "xfs_info", "xfs_db", "ntfsinfo",
    "partx", "kpartx", "sg_inq", "sg_map", "sginfo", "sg_readcap",
    "sg_vpd", "lsof", "fuser", "pvs", "vgs", "lvs", "pvdisplay",
    "vgdisplay", "lvdisplay", "pvscan", "vgscan", "lvscan", "lvmdiskscan",
    "multipath", "hwinfo", "lshw", "inxi", "pv", "cmp", "sha1sum",
    "sha256sum", "sha512sum", "b2sum", "cksum", "xxd", "eject", "mountpoint",
    "realpath", "readlink", "ls", "test", "[", "echo", "printf", "id",
    "e2freefrag", "filefrag", "sg_scan", "ledctl", "udisksctl", "fstrim",
    "cfdisk", "lsusb", "lspci", "dmidecode", "blkparse", "blktrace",
    "fio", "extundelete", "dump.exfat", "handbrakecli", "HandBrakeCLI",
    "fls", "ils", "icat", "istat", "fsstat", "ffind", "ifind", "blkls",
    "blkcat", "blkstat", "mmls", "mmstat", "mmcat", "jls", "jcat", "fcat",
    "img_stat", "img_cat", "tsk_recover", NULL };

/* Device tools beside the read-only table whose reading forms depend on
 * what they are told (each by its manual): the forms that only read or
 * show a device, move a tape or eject it. */
static int
device_reads(const struct pl_cmd *c)
{
	static const char *const tape_moves[] = { "status", "tell", "rewind",
	    "fsf", "fsr", "bsf", "bsr", "asf", "bsfm", "fsfm", "eod", "seek",
	    "offline", "rewoffl", "eject", "retension", NULL };
	static const char *const dm_shows[] = { "list", "report", "print",
	    "help", NULL };
	static const char *const cd_reads[] = { "read-cd", "read-toc",
	    "read-cddb", "read-test", "disk-info", "drive-info", "msinfo",
	    "scanbus", "discid", "show-toc", "show-data", "toc-info",
	    "toc-size", NULL };
	static const char *const serial_shows[] = { "-a", "-b", "-g", "-G",
	    "-q", "-v", "-V", NULL };
	const struct pl_field *w = pl_first_word(c);
	const char *n = c->name;
	int i;

	if (strcmp(n, "mt") == 0 || strcmp(n, "mt-st") == 0)
		return pl_has_any(c, tape_moves);
	if (strcmp(n, "dmstats") == 0)
		return w != NULL && pl_eq_any(w, dm_shows);
	if (strcmp(n, "cdrdao") == 0)
		return w != NULL && pl_eq_any(w, cd_reads);
	if (strcmp(n, "e2image") == 0)		/* -I writes back */
		return !pl_has_opt(c, 'I', NULL);
	if (strcmp(n, "e2undo") == 0)		/* -n: dry run */
		return pl_has_opt(c, 'n', NULL) || pl_has_opt(c, 'h', NULL);
	if (strcmp(n, "e4defrag") == 0)		/* -c: only reports */
		return pl_has_opt(c, 'c', NULL);
	if (strcmp(n, "fsadm") == 0 || strcmp(n, "lvm_import_vdo") == 0)
		return pl_has_opt(c, 'n', "--dry-run") || pl_has_opt(c, 'h',
		    "--help");
	if (strcmp(n, "ioping") == 0)		/* -W, -write: writes */
		return !pl_has_opt(c, 'W', NULL) && !pl_has_arg(c, "-write");
	if (strcmp(n, "readcd") == 0)		/* -w: write mode */
		return !pl_has_arg(c, "-w");
	if (strcmp(n, "ntfsresize") == 0)	/* -i: info, -n: no action */
		return pl_has_opt(c, 'i', "--info") || pl_has_opt(c, 'n',
		    "--no-action");
	if (strcmp(n, "fatresize") == 0)	/* -i: info */
		return pl_has_opt(c, 'i', "--info");
	if (strcmp(n, "tune.exfat") == 0)
		return !pl_has_prefix(c, (const char *const[]){ "--set-", "-L",
		    "-I", "-U", NULL });
	if (strcmp(n, "fatlabel") == 0 || strcmp(n, "exfatlabel") == 0 ||
	    strcmp(n, "e2label") == 0)		/* no new label: shows */
		return pl_word_count(c) <= 1;
	if (strcmp(n, "setserial") == 0) {
		/* Only display options and devices: no parameter set. */
		for (i = 1; i < c->argc; i++)
			if (pl_is_opt(&c->argv[i]) ? !pl_eq_any(&c->argv[i],
			    serial_shows) : memmem(c->argv[i].s,
			    c->argv[i].len, "/dev/", 5) == NULL)
				return 0;
		return 1;
	}
	return 0;
}

/* An unknown program given a block device (as an operand, "of=/dev/x"
 * or "--opt=/dev/x") may write it: a raw disk finding unless the
 * program is in the read-only table. */
static void
device_operand(struct pl_an *an, struct pl_cmd *c)
{
	struct pl_field name;
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		const char *d = memmem(f->s, f->len, "/dev/", 5);
		struct pl_path p;

		if (d == NULL || (d != f->s && d[-1] != '='))
			continue;
		pl_path_classify(an, d == f->s ? f : pl_subfield(an, f,
		    (size_t)(d - f->s)), &p);
		if (p.cls != PC_DEVICE)
			continue;
		name.s = c->name;
		name.len = strlen(c->name);
		if (pl_eq_any(&name, device_readers) || device_reads(c))
			return;
		pl_find(an, VG_CAT_DISK, "builtin:device-operand", c->off,
		    c->len, "'%s' is given the block device '%s' and is no "
		    "known read-only tool", c->name, pl_pshow(&p));
		return;
	}
}

void
pl_classify(struct pl_an *an, struct pl_cmd *c)
{
	handler_fn fn;

	if (init_script(an, c) || run_written(an, c))
		return;
	if (pl_decode(an, c, c->out))
		return;
	pl_build_files(an, c);
	pl_host_verbs(an, c);
	fn = lookup(c->name);
	if (fn != NULL) {
		pl_stream_unknown(c->out, T_PROG);
		fn(an, c);
		return;
	}
	pl_out_default(c);
	device_operand(an, c);
	/* Unknown programs: operands that are secrets are still read. */
	if (c->argc > 1 && c->argc < 16) {
		int i;

		for (i = 1; i < c->argc; i++) {
			struct pl_path p;

			if (pl_is_opt(&c->argv[i]) || c->argv[i].len < 5 ||
			    (c->argv[i].flags & F_UNK))
				continue;
			if (memchr(c->argv[i].s, '/', c->argv[i].len) == NULL &&
			    c->argv[i].s[0] != '.')
				continue;
			pl_path_classify(an, &c->argv[i], &p);
			if ((p.attr & PA_SECRET) && (c->in->taint & T_NET) == 0 &&
			    strstr(c->name, "ssh") == NULL &&
			    strcmp(c->name, "chmod") != 0)
				c->out->taint |= T_SECRET;
		}
	}
}
