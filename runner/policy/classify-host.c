/*
 * classify-host.c - the classifier's handlers for what disrupts the
 * host: kill and pkill (and how broad their patterns are), power off and
 * reboot.
 */
#include <string.h>

#include "runner/policy/classify-int.h"

/* ---- host disruption ---- */

/* kill [-s SIG | -n NUM | -SIG] [--] PID...: the first "-N" is a signal
 * when PIDs follow it ("kill -1 4242" sends SIGHUP to 4242), a PID when
 * it is alone or comes after the signal ("kill -1", "kill -9 -1": every
 * process); PID 1 is init. */
void
pl_h_kill(struct pl_an *an, struct pl_cmd *c)
{
	int i, dd = 0, sig = 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		int pid = dd || !pl_is_opt(f);

		if (!dd && (pl_eq(f, "-l") || pl_eq(f, "-L") ||
		    pl_eq(f, "--list") || pl_eq(f, "--help") ||
		    pl_eq(f, "--table")))
			return;
		if (!dd && pl_eq(f, "--")) {
			dd = 1;
			continue;
		}
		if (!dd && (pl_eq(f, "-s") || pl_eq(f, "-n") ||
		    pl_eq(f, "--signal"))) {
			i++;
			sig = 1;
			continue;
		}
		if (!pid && !sig && i + 1 < c->argc) {
			sig = 1;	/* -SIG, or -N followed by PIDs */
			continue;
		}
		if (!pid && !pl_eq(f, "-1"))
			continue;	/* other options, process groups */
		if (pl_eq(f, "-1") || pl_eq(f, "1")) {
			pl_find_floor(an, PL_FLOOR_KILLALL, VG_CAT_DISRUPTION,
			    "builtin:kill-all", c->off, c->len, pl_eq(f, "1") ?
			    "'kill' signals init (PID 1)" :
			    "'kill -1' signals every process");
			return;
		}
	}
}

static int
broad_pattern(const char *s)
{
	static const char *const daemons[] = { "init", "systemd", "sshd",
	    "ssh", "bash", "sh", "zsh", "python", "python3", "java", "node",
	    "perl", "ruby", "slurmd", "slurmctld", "slurmdbd", "slurmstepd",
	    "munged", "dockerd", "containerd", "cron", "crond", "rsyslogd",
	    "systemd-journald", "journald", "dbus-daemon", "dbus",
	    "NetworkManager", "Xorg", "gdm", "lightdm", "login", "getty",
	    "agetty", "kubelet", "nfsd", "sssd", "nscd", "ntpd", "chronyd",
	    "mysqld", "mariadbd", "postgres", "nginx", "httpd", "apache2",
	    "sudo", "su", "udevd", "systemd-udevd", "polkitd", "snapd",
	    "systemd-networkd", "networkd", "systemd-resolved",
	    "systemd-logind", "logind", "wpa_supplicant", "dhclient",
	    "dhcpcd", "auditd", "rpcbind", "multipathd", "iscsid",
	    "firewalld",
	    ".", ".*", "^", "", "*", NULL };
	int k;

	for (k = 0; daemons[k] != NULL; k++)
		if (strcmp(s, daemons[k]) == 0)
			return 1;
	return 0;
}

/* True when pkill or killall sends signal 0 (-0, -s 0, --signal 0,
 * --signal=0), which only tests that the processes exist, or when
 * killall only lists signal names (-l, --list). */
static int
pkill_tests(const struct pl_cmd *c)
{
	int i, killall = strcmp(c->name, "killall") == 0;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "-0") || pl_eq(f, "--signal=0") || (killall &&
		    (pl_eq(f, "-l") || pl_eq(f, "--list"))) ||
		    ((pl_eq(f, "-s") || pl_eq(f, "--signal")) &&
		    i + 1 < c->argc && pl_eq(&c->argv[i + 1], "0")))
			return 1;
	}
	return 0;
}

void
pl_h_pkill(struct pl_an *an, struct pl_cmd *c)
{
	int i, ops = 0;

	if (strcmp(c->name, "killall5") == 0) {
		pl_find_floor(an, PL_FLOOR_KILLALL, VG_CAT_DISRUPTION,
		    "builtin:kill-all", c->off, c->len,
		    "'killall5' signals every process");
		return;
	}
	int byuser = 0;

	if (pkill_tests(c))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "-v") || pl_eq(f, "--inverse")) {
			pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad",
			    c->off, c->len, "'%s -v' kills every process that "
			    "does not match", c->name);
			return;
		}
		if (pl_eq(f, "-u") || pl_eq(f, "--user") || pl_eq(f, "-U") ||
		    strncmp(f->s, "--user=", 7) == 0) {
			byuser = 1;
			if (f->s[2] != '=' && strchr(f->s, '=') == NULL)
				i++;
			continue;
		}
		if (pl_eq(f, "-s") || pl_eq(f, "--signal") || pl_eq(f, "-g") ||
		    pl_eq(f, "-G") || pl_eq(f, "-P") || pl_eq(f, "-t") ||
		    pl_eq(f, "-o") || pl_eq(f, "-y") || pl_eq(f, "-n") ||
		    pl_eq(f, "--older-than") || pl_eq(f, "--younger-than")) {
			i++;
			continue;
		}
		if (pl_is_opt(f))
			continue;
		ops++;
		if (broad_pattern(f->s)) {
			pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad",
			    c->off, c->len, "'%s %s' kills shared or system "
			    "processes", c->name, f->s);
			return;
		}
	}
	if (byuser && ops == 0)
		pl_find(an, VG_CAT_DISRUPTION, "builtin:kill-broad", c->off,
		    c->len, "'%s -u' kills every process of a user", c->name);
}

void
pl_h_power(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int halt;

	/* --wtmp-only (-w) only writes the wtmp record; shutdown -c
	 * cancels a pending shutdown. */
	if (pl_has_arg(c, "--help") || (strcmp(n, "shutdown") == 0 &&
	    pl_has_opt(c, 'c', NULL)) || ((strcmp(n, "halt") == 0 ||
	    strcmp(n, "poweroff") == 0 || strcmp(n, "reboot") == 0) &&
	    (pl_has_arg(c, "--wtmp-only") || pl_has_arg(c, "-w"))))
		return;
	if ((strcmp(n, "init") == 0 || strcmp(n, "telinit") == 0) &&
	    (c->argc < 2 || !(pl_eq(&c->argv[1], "0") ||
	    pl_eq(&c->argv[1], "6") || pl_eq(&c->argv[1], "1") ||
	    pl_eq(&c->argv[1], "S") || pl_eq(&c->argv[1], "s"))))
		return;
	if (strcmp(n, "loginctl") == 0 &&
	    (c->argc < 2 || strncmp(c->argv[1].s, "terminate", 9) != 0) &&
	    !(c->argc >= 2 && (pl_eq(&c->argv[1], "kill-user") ||
	    pl_eq(&c->argv[1], "kill-session") ||
	    pl_eq(&c->argv[1], "poweroff") || pl_eq(&c->argv[1], "reboot") ||
	    pl_eq(&c->argv[1], "suspend") || pl_eq(&c->argv[1], "hibernate") ||
	    pl_eq(&c->argv[1], "hybrid-sleep") ||
	    pl_eq(&c->argv[1], "suspend-then-hibernate"))))
		return;
	if (strcmp(n, "kexec") == 0 && !pl_has_opt(c, 'e', "--exec") &&
	    !pl_has_opt(c, 'f', "--force"))
		return;
	halt = strcmp(n, "shutdown") == 0 || strcmp(n, "reboot") == 0 ||
	    strcmp(n, "halt") == 0 || strcmp(n, "poweroff") == 0 ||
	    strcmp(n, "kexec") == 0 || (c->argc >= 2 &&
	    (pl_eq(&c->argv[1], "0") || pl_eq(&c->argv[1], "6") ||
	    pl_eq(&c->argv[1], "poweroff") || pl_eq(&c->argv[1], "reboot")));
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len,
	    "'%s' stops, restarts or switches the host's run level", n);
}
