/*
 * classify-sysconf.c - the classifier's handlers for the system's
 * configuration: crontab and at, systemctl and its D-Bus and front-end
 * equivalents, service, alternatives, firewalls, sysctl, kernel
 * modules, the boot loader, host settings, ip and the network tools,
 * package managers and the security frameworks.
 */
#include <string.h>

#include "runner/policy/nested.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"
#include "runner/policy/classify-int.h"

/* ---- system configuration ---- */

void
pl_sysconf(struct pl_an *an, struct pl_cmd *c, const char *rule,
    const char *what)
{
	pl_find(an, VG_CAT_SYSCONFIG, rule, c->off, c->len, "'%s' %s",
	    c->name, what);
}

void
pl_h_crontab(struct pl_an *an, struct pl_cmd *c)
{
	/* Slurm's scrontab takes the same -l, -e, -r and FILE. */
	if (pl_has_opt(c, 'l', NULL) || pl_has_arg(c, "-V") ||
	    pl_has_arg(c, "--help") || pl_has_arg(c, "--usage"))
		return;
	if (pl_has_opt(c, 'r', NULL)) {
		pl_sysconf(an, c, "builtin:crontab", "removes the crontab");
		return;
	}
	pl_sysconf(an, c, "builtin:crontab",
	    "installs or edits a crontab (persistence)");
	pl_run_written(an, c, PL_WRITTEN_CRONTAB);
}

void
pl_h_at(struct pl_an *an, struct pl_cmd *c)
{
	if (pl_has_opt(c, 'l', NULL) || pl_has_opt(c, 'c', NULL) ||
	    pl_has_arg(c, "-V") || pl_has_opt(c, 'r', NULL) ||
	    pl_has_opt(c, 'd', NULL))
		return;
	pl_sysconf(an, c, "builtin:at", "schedules commands for later "
	    "(persistence)");
	pl_code_to_interp(an, c, "sh", c->in, c->off, c->len);
}

/* True when unit u (a systemd unit name) is a power or run-level
 * target ("poweroff.target", "rescue"); *halt when it halts or reboots. */
static int
power_unit(const char *u, int *halt)
{
	static const char *const halts[] = { "poweroff", "reboot", "halt",
	    "kexec", "soft-reboot", "ctrl-alt-del", "shutdown", "exit",
	    "final", "systemd-poweroff", "systemd-reboot", "systemd-halt",
	    "systemd-kexec", "systemd-soft-reboot", NULL };
	static const char *const levels[] = { "rescue", "emergency",
	    "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate",
	    "sleep", "systemd-suspend", "systemd-hibernate",
	    "systemd-hybrid-sleep", "runlevel0", "runlevel1", "runlevel6",
	    NULL };
	size_t n = strlen(u);
	int k;

	if (n > 7 && strcmp(u + n - 7, ".target") == 0)
		n -= 7;
	else if (n > 8 && strcmp(u + n - 8, ".service") == 0)
		n -= 8;
	for (k = 0; halts[k] != NULL; k++)
		if (strlen(halts[k]) == n && strncmp(u, halts[k], n) == 0) {
			*halt = strcmp(halts[k], "exit") != 0;
			return 1;
		}
	for (k = 0; levels[k] != NULL; k++)
		if (strlen(levels[k]) == n && strncmp(u, levels[k], n) == 0) {
			*halt = strncmp(u, "runlevel0", 9) == 0 ||
			    strncmp(u, "runlevel6", 9) == 0;
			return 1;
		}
	return 0;
}

/* systemctl [OPTIONS] VERB [UNIT...]: looking verbs (and no verb, which
 * lists units) pass; the host's power state and run level (power verbs,
 * or start/isolate of a power target) are host disruption, turning swap
 * off too; other changes of system services are system configuration. */
void
pl_h_systemctl(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const stop[] = { "poweroff", "reboot", "halt",
	    "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue",
	    "emergency", "suspend-then-hibernate", "soft-reboot", NULL };
	static const char *const halts[] = { "poweroff", "reboot", "halt",
	    "kexec", "soft-reboot", NULL };
	static const char *const ok[] = { "status", "show", "cat", "help",
	    "list-units", "list-unit-files", "list-timers", "list-sockets",
	    "list-dependencies", "list-jobs", "list-machines",
	    "is-active", "is-enabled", "is-failed", "is-system-running",
	    "get-default", "show-environment", "--version", "--help",
	    "list-automounts", "list-paths", "whoami", "log-level",
	    "log-target", "service-log-level", "service-log-target",
	    "service-watchdogs", NULL };
	/* With a value these set what they show (service-log-*: UNIT
	 * VALUE). */
	static const char *const sets[] = { "log-level", "log-target",
	    "service-watchdogs", "service-log-level", "service-log-target",
	    NULL };
	static const char *const persist[] = { "enable", "link", "preset",
	    "preset-all", "edit", "set-property", "revert", "add-wants",
	    "add-requires", "set-environment", "import-environment", NULL };
	static const char *const starts[] = { "start", "isolate", "restart",
	    "try-restart", "reload-or-restart", "try-reload-or-restart",
	    "default", NULL };
	static const char *const valued[] = { "-t", "--type", "-p",
	    "--property", "-H", "--host", "-M", "--machine", "-n", "--lines",
	    "-o", "--output", "--state", "-s", "--signal", "--kill-whom",
	    "--kill-value", "--root", "--image", "--job-mode", "--what",
	    "--timestamp", "--preset-mode", "--boot-loader-entry",
	    "--boot-loader-menu", "--reboot-argument", "--drop-in",
	    "--when", "-P", "--message", NULL };
	int i, user = pl_has_arg(c, "--user"), halt = 0;
	const struct pl_field *when = pl_opt_val(an, c, 0, "--when");

	/* --when cancel cancels a scheduled shutdown or reboot. */
	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    pl_has_arg(c, "--version") ||
	    (when != NULL && pl_eq(when, "cancel")))
		return;
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		int k;

		if (pl_is_opt(f)) {
			if (pl_eq_any(f, valued))
				i++;
			continue;
		}
		if (user) {
			/* The user's own services: only persistence counts. */
			if (pl_eq_any(f, persist))
				pl_sysconf(an, c, "builtin:service",
				    "installs a user service (persistence)");
			return;
		}
		if (pl_eq_any(f, stop)) {
			pl_find_floor(an, pl_eq_any(f, halts) ? PL_FLOOR_POWER :
			    NULL, VG_CAT_DISRUPTION, "builtin:power",
			    c->off, c->len,
			    "'systemctl %s' stops or restarts the host", f->s);
			return;
		}
		for (k = i + 1; k < c->argc &&
		    (pl_eq_any(f, starts) || pl_eq(f, "stop") ||
		    pl_eq(f, "kill") || pl_eq(f, "mask")); k++) {
			const char *u = c->argv[k].s;
			size_t n = c->argv[k].len;

			if (pl_is_opt(&c->argv[k]))
				continue;
			if (pl_eq_any(f, starts) && power_unit(u, &halt)) {
				pl_sysconf(an, c, "builtin:service",
				    "changes service state");
				pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL,
				    VG_CAT_DISRUPTION, "builtin:power",
				    c->off, c->len, "'systemctl %s %s' "
				    "switches the host to another state",
				    f->s, u);
				return;
			}
			if (!pl_eq_any(f, starts) &&
			    ((n > 5 && strcmp(u + n - 5, ".swap") == 0) ||
			    strcmp(u, "swap.target") == 0)) {
				pl_find(an, VG_CAT_DISRUPTION,
				    "builtin:swap-off", c->off, c->len,
				    "'systemctl %s %s' turns swap off", f->s,
				    u);
				return;
			}
		}
		if (pl_eq_any(f, sets)) {
			int words = 0, need = strncmp(f->s, "service-log-",
			    12) == 0 ? 2 : 1;

			for (k = i + 1; k < c->argc; k++)
				words += !pl_is_opt(&c->argv[k]);
			if (words >= need)
				pl_sysconf(an, c, "builtin:service", "changes "
				    "the service manager's logging or "
				    "watchdogs");
			return;
		}
		if (!pl_eq_any(f, ok))
			pl_sysconf(an, c, "builtin:service",
			    "changes service state");
		return;
	}
}

/* Methods of logind, the systemd manager, ConsoleKit, UPower and the
 * desktops' session managers (GNOME, KDE, Xfce, MATE) that halt,
 * reboot or suspend the host or end sessions, called over D-Bus
 * (busctl, dbus-send, gdbus, qdbus). */
void
pl_h_dbus(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const halts[] = { "PowerOff", "Reboot", "Halt",
	    "KExec", "SoftReboot", "PowerOffWithFlags", "RebootWithFlags",
	    "HaltWithFlags", "KExecWithFlags", "ScheduleShutdown", "Shutdown",
	    "Restart", "Stop", "RequestShutdown", "RequestReboot",
	    "logoutAndShutdown", "logoutAndReboot", NULL };
	static const char *const buses[] = { "org.freedesktop.login1",
	    "org.freedesktop.systemd1", "org.freedesktop.ConsoleKit",
	    "org.freedesktop.UPower", "org.gnome.SessionManager",
	    "org.kde.ksmserver", "org.kde.Shutdown", "org.kde.LogoutPrompt",
	    "org.xfce.SessionManager", "org.mate.SessionManager", NULL };
	static const char *const others[] = { "Suspend", "Hibernate",
	    "HybridSleep", "SuspendThenHibernate", "SuspendWithFlags",
	    "HibernateWithFlags", "Sleep", "TerminateUser",
	    "TerminateSession", "TerminateSeat", "KillUser", "KillSession",
	    "StartUnit", "StartUnitReplace", "Exit", "Logout", "logout",
	    NULL };
	const char *m = NULL;
	int i, k, bus = 0, halt = 0;

	/* busctl and gdbus only act with "call"; dbus-send and qdbus
	 * always call the method they are given. */
	if ((strcmp(c->name, "busctl") == 0 || strcmp(c->name, "gdbus") == 0)
	    && !pl_has_arg(c, "call"))
		return;
	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s, *dot = strrchr(s, '.');
		const char *name = dot != NULL ? dot + 1 : s;

		for (k = 0; buses[k] != NULL && !bus; k++)
			if (strstr(s, buses[k]) != NULL)
				bus = 1;
		for (k = 0; halts[k] != NULL && m == NULL; k++)
			if (strcmp(name, halts[k]) == 0) {
				m = halts[k];
				halt = 1;
			}
		for (k = 0; others[k] != NULL && m == NULL; k++)
			if (strcmp(name, others[k]) == 0)
				m = others[k];
	}
	if (!bus || m == NULL)
		return;
	/* StartUnit is power only for a power target. */
	if (strncmp(m, "StartUnit", 9) == 0) {
		for (i = 1; i < c->argc; i++) {
			const char *s = c->argv[i].s, *q = strchr(s, ':');

			if (power_unit(q != NULL ? q + 1 : s, &halt))
				break;
		}
		if (i == c->argc)
			return;
	}
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len, "'%s' asks the system manager "
	    "to %s (%s)", c->name, halt ? "halt or reboot the host" :
	    "suspend the host or end sessions", m);
}

/* Desktop and firmware front ends of the host's power state. */
void
pl_h_power_front(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const rtc_off[] = { "off", "disk", "mem",
	    "standby", "freeze", NULL };
	static const char *const desk[] = { "--halt", "--reboot",
	    "--power-off", "--suspend", "--hibernate", "--hybrid-sleep",
	    "--shutdown", NULL };
	const struct pl_field *m;
	int halt;

	if (strcmp(c->name, "rtcwake") == 0) {
		m = pl_opt_val(an, c, 'm', "--mode");
		if (m == NULL || !pl_eq_any(m, rtc_off))
			return;
		halt = pl_eq(m, "off");
	} else {
		if (!pl_has_any(c, desk))
			return;
		halt = pl_has_arg(c, "--halt") || pl_has_arg(c, "--reboot") ||
		    pl_has_arg(c, "--power-off") || pl_has_arg(c, "--shutdown");
	}
	pl_find_floor(an, halt ? PL_FLOOR_POWER : NULL, VG_CAT_DISRUPTION,
	    "builtin:power", c->off, c->len, "'%s' %s the host", c->name,
	    halt ? "powers off or restarts" : "suspends");
}

void
pl_h_service(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "start", "stop", "restart",
	    "reload", "force-reload", "try-restart", "condrestart", "enable",
	    "disable", "remove", "defaults", "add", "del", "on", "off", "load",
	    "unload", "bootout", "bootstrap", "kill", NULL };

	/* Help, and update-rc.d -n, which shows what it would do. */
	if (pl_has_arg(c, "--help") || pl_has_arg(c, "--version") ||
	    (strcmp(c->name, "update-rc.d") == 0 && pl_has_opt(c, 'n', NULL)))
		return;
	if (pl_has_any(c, verbs))
		pl_sysconf(an, c, "builtin:service", "changes service state");
}

/* A directory option of c (--altdir, --admindir) naming the user's own
 * or the workspace's tree rather than the system's. */
static int
own_dir(struct pl_an *an, const struct pl_cmd *c, const char *opt)
{
	const struct pl_field *f = pl_opt_val(an, c, 0, opt);
	struct pl_path p;

	if (f == NULL || (f->flags & F_UNK))
		return 0;
	pl_path_classify(an, f, &p);
	return p.cls == PC_WORKSPACE || (p.cls == PC_USER &&
	    !(p.attr & (PA_RC | PA_SSH | PA_SECRET)));
}

/* update-alternatives (Debian) and alternatives (Red Hat): the verbs
 * that change the links under /etc/alternatives, as `ln -sf` into it
 * would; --display, --query, --list and --get-selections only look.
 * With both --altdir and --admindir in the user's own tree (and an
 * --install link outside the system's), nothing of the system
 * changes. */
void
pl_h_alternatives(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "--install", "--set", "--remove",
	    "--remove-all", "--auto", "--config", "--all", "--set-selections",
	    NULL };
	const struct pl_field *link = pl_opt_val(an, c, 0, "--install");
	struct pl_path p;

	if (!pl_has_any(c, verbs))
		return;
	if (link != NULL)
		pl_path_classify(an, link, &p);
	if (own_dir(an, c, "--altdir") && own_dir(an, c, "--admindir") &&
	    (link == NULL || (!(link->flags & F_UNK) &&
	    p.cls != PC_PROTECTED)))
		return;
	pl_sysconf(an, c, "builtin:alternatives", "changes the system's "
	    "alternatives (the links under /etc/alternatives)");
}

void
pl_h_firewall(struct pl_an *an, struct pl_cmd *c)
{
	/* ufw and firewall-cmd verbs that only look */
	static const char *const looks[] = { "status", "show", "app",
	    "--state", "version", "--version", "--help", "-h", NULL };
	/* iptables' long options that change rules */
	static const char *const edits[] = { "--flush", "--append",
	    "--insert", "--delete", "--policy", "--delete-chain", "--replace",
	    "--zero", "--new-chain", NULL };
	const char *n = c->name;
	int i;

	if (strstr(n, "-save") != NULL)
		return;
	if (strstr(n, "-restore") != NULL) {
		pl_sysconf(an, c, "builtin:firewall",
		    "replaces firewall rules");
		return;
	}
	if (strcmp(n, "nft") == 0) {
		for (i = 1; i < c->argc; i++) {
			if (pl_is_opt(&c->argv[i]) && !pl_eq(&c->argv[i], "-f"))
				continue;
			if (pl_eq(&c->argv[i], "list") ||
			    pl_eq(&c->argv[i], "monitor") ||
			    pl_eq(&c->argv[i], "describe"))
				return;
			break;
		}
		if (c->argc > 1)
			pl_sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
		return;
	}
	if (strcmp(n, "ufw") == 0 || strncmp(n, "firewall-", 9) == 0) {
		for (i = 1; i < c->argc; i++) {
			const char *s = c->argv[i].s;

			if (pl_eq_any(&c->argv[i], looks) ||
			    strncmp(s, "--list", 6) == 0 ||
			    strncmp(s, "--get", 5) == 0 ||
			    strncmp(s, "--query", 7) == 0)
				return;
		}
		if (c->argc > 1)
			pl_sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (s[0] != '-' || s[1] == '-' ? pl_eq_any(&c->argv[i], edits) :
		    strchr("FXZPAIDRNE", s[1]) != NULL) {
			pl_sysconf(an, c, "builtin:firewall",
			    "changes firewall rules");
			return;
		}
	}
}

void
pl_h_sysctl(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq(f, "-w") || pl_eq(f, "--write") || pl_eq(f, "-p") ||
		    strncmp(f->s, "--load", 6) == 0 || pl_eq(f, "--system") ||
		    (!pl_is_opt(f) && memchr(f->s, '=', f->len) != NULL)) {
			pl_sysconf(an, c, "builtin:sysctl",
			    "changes kernel parameters");
			return;
		}
	}
}

void
pl_h_module(struct pl_an *an, struct pl_cmd *c)
{
	if (strcmp(c->name, "modprobe") == 0 &&
	    (pl_has_opt(c, 'n', "--dry-run") ||
	    pl_has_opt(c, 'c', "--showconfig") ||
	    pl_has_arg(c, "--show-depends") || pl_has_opt(c, 'D', NULL) ||
	    pl_has_arg(c, "--help") || pl_has_opt(c, 'V', NULL)))
		return;
	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    pl_has_arg(c, "--version") || pl_has_arg(c, "-V"))
		return;
	if (c->argc < 2)
		return;
	pl_sysconf(an, c, "builtin:kmod", "loads or unloads kernel modules");
}

/* Whether output option sh/lng of c (-o, --output, -g ...) names a
 * protected path (/boot, a system tree) or one only known at run time:
 * 1; another path: 0; no such option: -1. */
static int
boot_output(struct pl_an *an, const struct pl_cmd *c, char sh,
    const char *lng)
{
	const struct pl_field *o = pl_opt_val(an, c, sh, lng);
	struct pl_path p;

	if (o == NULL)
		return -1;
	if (o->flags & F_UNK)
		return 1;
	pl_path_classify(an, o, &p);
	return p.cls == PC_PROTECTED;
}

/* What the host boots: its boot loader configuration, its initramfs,
 * its kernel modules' index and the debconf answers of installed
 * packages.  grub-mkconfig without -o prints the configuration;
 * mkinitcpio -g and depmod -b into the user's own tree change nothing
 * of the host; the listing and help forms only show. */
void
pl_h_boot(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int o;

	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    pl_has_arg(c, "--version") || pl_has_arg(c, "-V"))
		return;
	if (strcmp(n, "grub-mkconfig") == 0 ||
	    strcmp(n, "grub2-mkconfig") == 0) {
		if (boot_output(an, c, 'o', "--output") != 1)
			return;
	} else if (strcmp(n, "mkinitcpio") == 0) {
		if (pl_has_opt(c, 'L', "--listhooks") || pl_has_opt(c, 'M',
		    "--automods") || pl_has_opt(c, 'H', "--hookhelp"))
			return;
		o = boot_output(an, c, 'g', "--generate");
		if (!pl_has_opt(c, 'P', "--allpresets") && !pl_has_opt(c, 'p',
		    "--preset") && o != 1)
			return;
	} else if (strcmp(n, "dracut") == 0) {
		if (pl_has_arg(c, "--list-modules") ||
		    pl_has_arg(c, "--print-cmdline"))
			return;
	} else if (strcmp(n, "depmod") == 0) {
		if (pl_has_opt(c, 'n', "--dry-run") || boot_output(an, c, 'b',
		    "--basedir") == 0 || boot_output(an, c, 'o',
		    "--outdir") == 0)
			return;
	} else if (strcmp(n, "grub-editenv") == 0 ||
	    strcmp(n, "grub2-editenv") == 0) {
		if (!pl_has_arg(c, "set") && !pl_has_arg(c, "unset") &&
		    !pl_has_arg(c, "create"))
			return;		/* list */
	} else if (strcmp(n, "update-initramfs") == 0) {
		if (c->argc < 2)
			return;
	}
	pl_sysconf(an, c, "builtin:boot-config", strcmp(n, "dpkg-reconfigure")
	    == 0 ? "reconfigures installed packages (their files under "
	    "/etc)" : strcmp(n, "depmod") == 0 ? "rewrites the kernel "
	    "modules' index" : "rewrites what the host boots (boot loader "
	    "configuration or initramfs)");
}

void
pl_h_hostconf(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;
	int i;

	if (strcmp(n, "hostname") == 0) {
		for (i = 1; i < c->argc; i++)
			if (!pl_is_opt(&c->argv[i])) {
				pl_sysconf(an, c, "builtin:hostname",
				    "changes the host name");
				return;
			}
		pl_out_default(c);
		return;
	}
	if (strcmp(n, "date") == 0) {
		if (pl_has_opt(c, 's', "--set"))
			pl_sysconf(an, c, "builtin:clock",
			    "sets the system clock");
		pl_out_default(c);
		return;
	}
	if (strcmp(n, "chronyc") == 0 || strcmp(n, "ntpdate") == 0 ||
	    strcmp(n, "sntp") == 0) {
		/* chronyc's makestep and settime step the clock; ntpdate
		 * (unless -q) and sntp -S/-s set it. */
		if ((strcmp(n, "chronyc") == 0 && (pl_has_arg(c, "makestep") ||
		    pl_has_arg(c, "settime") || pl_has_arg(c, "manual"))) ||
		    (strcmp(n, "ntpdate") == 0 && c->argc > 1 &&
		    !pl_has_opt(c, 'q', NULL) && !pl_has_opt(c, 'd', NULL)) ||
		    (strcmp(n, "sntp") == 0 && (pl_has_arg(c, "-S") ||
		    pl_has_arg(c, "-s"))))
			pl_sysconf(an, c, "builtin:clock",
			    "sets the system clock");
		return;
	}
	if (strcmp(n, "hwclock") == 0) {
		if (pl_has_arg(c, "--set") || pl_has_arg(c, "--systohc") ||
		    pl_has_arg(c, "--hctosys") || pl_has_arg(c, "-w") ||
		    pl_has_arg(c, "-s"))
			pl_sysconf(an, c, "builtin:clock", "sets the clock");
		return;
	}
	for (i = 1; i < c->argc; i++)
		if (strncmp(c->argv[i].s, "set-", 4) == 0) {
			pl_sysconf(an, c, "builtin:hostconf",
			    "changes host settings");
			return;
		}
}

void
pl_h_ip(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const verbs[] = { "add", "del", "delete", "set",
	    "flush", "change", "replace", "append", "down", "up", "modify",
	    "off", "mod", "disconnect", "connect", "reapply", "edit", "load",
	    "reload", "import", "on", NULL };
	const char *n = c->name;
	int i;

	if (strcmp(n, "ifdown") == 0 || strcmp(n, "ifup") == 0) {
		pl_sysconf(an, c, "builtin:network",
		    "changes network interfaces");
		return;
	}
	if (strcmp(n, "ifconfig") == 0) {
		int ops = 0;

		for (i = 1; i < c->argc; i++)
			if (!pl_is_opt(&c->argv[i]))
				ops++;
		if (ops >= 2)
			pl_sysconf(an, c, "builtin:network",
			    "changes network interfaces");
		return;
	}
	if (pl_has_any(c, verbs))
		pl_sysconf(an, c, "builtin:network",
		    "changes network configuration");
}

/* Network tools beyond ip/ifconfig/nmcli, each with the words (verbs,
 * or options for option-driven tools) that change the host's network:
 * the rest of their forms only show. */
static const struct net_tool {
	const char		*name;
	const char *const	*change;
	int			 opts;	/* change words are options */
	int			 nargs;	/* 0, or: a verb changes only with
					 * at least this many operands */
	int			 always; /* every run changes it (but help) */
} net_tools[] = {
	{ .name = "ipset", .change = (const char *const[]){
	  "create", "-N", "-C", "add", "-A", "del", "-D", "destroy", "-X",
	  "flush", "-F", "rename", "-E", "swap", "-W", "restore", "-R", "n",
	  "a", "d", "x", "f", NULL } },
	{ .name = "conntrack", .change = (const char *const[]){
	  "-F", "--flush", "-D", "--delete", "-U", "--update", "-I",
	  "--create", NULL }, .opts = 1 },
	{ .name = "tc", .change = (const char *const[]){
	  "add", "del", "delete", "change", "replace", "link", "flush",
	  "exec", NULL } },
	{ .name = "ethtool", .change = (const char *const[]){
	  "-s", "--change", "-K", "--features", "--offload", "-G",
	  "--set-ring", "-A", "--pause", "-C", "--coalesce", "-L",
	  "--set-channels", "-E", "--change-eeprom", "-f", "--flash", "-r",
	  "--negotiate", "-X", "--set-rxfh-indir", "--rxfh", "-N", "-U",
	  "--config-nfc", "--config-ntuple", "--reset", "-W", "--set-dump",
	  "--set-eee", "--set-fec", "--set-priv-flags", "--set-phy-tunable",
	  "--set-tunable", "--set-module", "--set-plca-cfg", "--set-mm",
	  "--set-pse", NULL }, .opts = 1 },
	{ .name = "iw", .change = (const char *const[]){
	  "set", "del", "connect", "disconnect", "add", "join", "leave",
	  "reload", NULL } },
	{ .name = "iwconfig", .change = (const char *const[]){
	  "essid", "mode", "freq", "channel", "txpower", "power", "key", "ap",
	  "rate", "retry", "commit", NULL } },
	{ .name = "brctl", .change = (const char *const[]){
	  "addbr", "delbr", "addif", "delif", "stp", "setageing",
	  "setbridgeprio", "setfd", "sethello", "setmaxage", "setpathcost",
	  "setportprio", "sethashel", "sethashmax", "setmclmc", NULL } },
	{ .name = "bridge", .change = (const char *const[]){
	  "add", "del", "delete", "set", "replace", "change", "flush",
	  "append", NULL } },
	{ .name = "wg", .change = (const char *const[]){
	  "set", "setconf", "addconf", "syncconf", NULL } },
	{ .name = "wg-quick", .change = (const char *const[]){
	  "up", "down", "save", NULL } },
	{ .name = "arp", .change = (const char *const[]){
	  "-s", "--set", "-d", "--delete", "-f", "--file", NULL }, .opts = 1 },
	{ .name = "netplan", .change = (const char *const[]){
	  "apply", "try", "generate", "set", NULL } },
	{ .name = "networkctl", .change = (const char *const[]){
	  "up", "down", "reload", "reconfigure", "renew", "forcerenew",
	  "delete", "edit", NULL } },
	{ .name = "resolvectl", .change = (const char *const[]){
	  "dns", "domain", "default-route", "llmnr", "mdns", "dnssec",
	  "dnsovertls", "nta", "revert", "flush-caches", "reset-statistics",
	  "reset-server-features", NULL }, .nargs = 2 },
	{ .name = "ifenslave", .change = (const char *const[]){
	  "-d", "--detach", "-c", "--change-active", "-a", NULL }, .nargs = 2 },
	{ .name = "vconfig", .change = (const char *const[]){
	  "add", "rem", "set_flag", "set_egress_map", "set_ingress_map",
	  "set_name_type", NULL } },
	{ .name = "nmtui", .change = (const char *const[]){
	  "edit", "connect", "hostname", NULL } },
	{ .name = "rfkill", .change = (const char *const[]){
	  "block", "unblock", "toggle", NULL } },
	/* Wireless and DHCP clients: what joins, leaves or reconfigures
	 * a network; status, scan and list forms only show. */
	{ .name = "wpa_cli", .change = (const char *const[]){
	  "disconnect", "reconnect", "reassociate", "reattach", "terminate",
	  "add_network", "remove_network", "set_network", "enable_network",
	  "disable_network", "select_network", "save_config", "reconfigure",
	  "set", "interface_add", "interface_remove", "roam", "bssid",
	  "wps_pbc", "wps_pin", "wps_reg", "p2p_connect", "p2p_group_add",
	  "p2p_group_remove", NULL } },
	{ .name = "iwctl", .change = (const char *const[]){
	  "connect", "connect-hidden", "disconnect", "forget",
	  "set-property", "start", "stop", "start-profile", NULL } },
	{ .name = "connmanctl", .change = (const char *const[]){
	  "enable", "disable", "connect", "disconnect", "config", "tether",
	  "remove", "move-before", "move-after", NULL } },
	/* dhclient configures the interfaces it is given (or all) on
	 * every run; -r releases and -x stops, both leaving them down. */
	{ .name = "dhclient", .always = 1 },
	{ .name = "dhcpcd", .change = (const char *const[]){
	  "-k", "--release", "-x", "--exit", "-n", "--rebind", "-N",
	  "--renew", "-g", "--reconfigure", "-S", "--static", "-s",
	  "--inform", NULL }, .opts = 1 },
};

void
pl_h_net(struct pl_an *an, struct pl_cmd *c)
{
	size_t k;
	int i;

	if (pl_has_arg(c, "--help") || pl_has_arg(c, "-h") ||
	    pl_has_arg(c, "--version"))
		return;
	for (k = 0; k < sizeof(net_tools) / sizeof(net_tools[0]); k++) {
		const struct net_tool *t = &net_tools[k];

		if (strcmp(t->name, c->name) != 0)
			continue;
		if (t->always) {
			pl_sysconf(an, c, "builtin:network",
			    "changes network configuration");
			return;
		}
		for (i = 1; i < c->argc; i++) {
			const struct pl_field *f = &c->argv[i];

			if (!t->opts && pl_is_opt(f) &&
			    !pl_eq_any(f, t->change))
				continue;
			if (!pl_eq_any(f, t->change))
				continue;
			if (t->nargs > 0 && c->argc - i - 1 < t->nargs)
				return;
			pl_sysconf(an, c, "builtin:network",
			    "changes network configuration");
			return;
		}
		return;
	}
}

/* Package sources added or enabled by the other package managers, as
 * add-apt-repository adds one: dnf/yum config-manager --add-repo and
 * --set-enabled (dnf5's addrepo), zypper addrepo|ar|modifyrepo. */
static int
pkg_source(const struct pl_cmd *c)
{
	static const char *const cm[] = { "--add-repo", "--set-enabled",
	    "--enable", "addrepo", "--from-repofile", NULL };
	static const char *const zy[] = { "addrepo", "ar", "modifyrepo",
	    "mr", "addservice", "as", NULL };
	const char *n = c->name;

	if (strcmp(n, "zypper") == 0)
		return pl_has_any(c, zy);
	if (strcmp(n, "flatpak") == 0)
		return pl_has_arg(c, "remote-add") ||
		    pl_has_arg(c, "remote-modify");
	if (strcmp(n, "yum-config-manager") == 0 ||
	    strcmp(n, "dnf-config-manager") == 0)
		return pl_has_prefix(c, cm);
	if ((strcmp(n, "dnf") == 0 || strcmp(n, "dnf5") == 0 ||
	    strcmp(n, "yum") == 0) && pl_has_arg(c, "config-manager"))
		return pl_has_prefix(c, cm);
	return 0;
}

void
pl_h_pkg(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const removes[] = { "remove", "purge",
	    "autoremove", "erase", "del", "--purge", "--remove", "-P",
	    "uninstall", NULL };
	/* Forms that only print what would happen, or help. */
	static const char *const dry[] = { "-s", "--simulate", "--dry-run",
	    "--just-print", "--no-act", "--recon", "--assumeno", "--test",
	    "--print", "-p", "--help", "-h", "--version", "-V", "help",
	    "--print-uris", "--no-download", NULL };
	int i;

	if (pl_has_any(c, dry) || (strcmp(c->name, "pacman") == 0 &&
	    (pl_has_arg(c, "-Rp") || pl_has_opt(c, 'h', "--help"))) ||
	    (strcmp(c->name, "zypper") == 0 &&
	    pl_has_arg(c, "-D")))
		return;
	/* flatpak's verb is its first word (mask --remove unmasks); with
	 * --user it removes the user's own applications, as pip does. */
	if (strcmp(c->name, "flatpak") == 0) {
		const struct pl_field *w = pl_first_word(c);

		if (w != NULL && (pl_eq(w, "remove") ||
		    pl_eq(w, "uninstall")) && !pl_has_arg(c, "--user"))
			pl_sysconf(an, c, "builtin:pkg-remove",
			    "removes system packages");
		else if (pkg_source(c) && !pl_has_arg(c, "--user"))
			pl_sysconf(an, c, "builtin:pkg-repo",
			    "adds a package source");
		return;
	}
	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];

		if (pl_eq_any(f, removes) ||
		    (strcmp(c->name, "dpkg") == 0 && pl_eq(f, "-r")) ||
		    (strcmp(c->name, "rpm") == 0 && (pl_eq(f, "-e") ||
		    pl_eq(f, "--erase"))) ||
		    (strcmp(c->name, "pacman") == 0 &&
		    strncmp(f->s, "-R", 2) == 0)) {
			pl_sysconf(an, c, "builtin:pkg-remove",
			    "removes system packages");
			return;
		}
		if (strcmp(c->name, "apt-key") == 0 && (pl_eq(f, "add") ||
		    pl_eq(f, "adv"))) {
			pl_sysconf(an, c, "builtin:pkg-key",
			    "trusts a new package signing key");
			return;
		}
	}
	if (strcmp(c->name, "add-apt-repository") == 0 ||
	    strcmp(c->name, "apt-add-repository") == 0 || pkg_source(c))
		pl_sysconf(an, c, "builtin:pkg-repo", "adds a package source");
}

void
pl_h_security(struct pl_an *an, struct pl_cmd *c)
{
	const char *n = c->name;

	if (pl_has_arg(c, "--help") || (strncmp(n, "aa-", 3) == 0 &&
	    pl_has_arg(c, "-h")))
		return;
	if (strcmp(n, "setenforce") == 0 && c->argc > 1 &&
	    (pl_eq(&c->argv[1], "0") || pl_eq(&c->argv[1], "Permissive")))
		pl_sysconf(an, c, "builtin:security-off", "disables SELinux");
	else if (strcmp(n, "auditctl") == 0 && (pl_has_arg(c, "-D") ||
	    (pl_has_arg(c, "-e") && pl_has_arg(c, "0"))))
		pl_sysconf(an, c, "builtin:security-off", "disables auditing");
	else if (strcmp(n, "aa-teardown") == 0 || strcmp(n, "aa-disable") == 0)
		pl_sysconf(an, c, "builtin:security-off", "disables AppArmor");
	else if (strcmp(n, "journalctl") == 0 &&
	    (pl_has_arg(c, "--rotate") || pl_has_opt(c, 0, "--vacuum-time") ||
	    pl_has_opt(c, 0, "--vacuum-size") ||
	    pl_has_opt(c, 0, "--vacuum-files")))
		pl_sysconf(an, c, "builtin:logs", "deletes system logs");
	else if (strcmp(n, "history") == 0 && pl_has_opt(c, 'c', NULL))
		pl_sysconf(an, c, "builtin:history-off",
		    "clears shell history");
	if (strcmp(n, "journalctl") == 0)
		pl_out_default(c);
}
