/*
 * hostverbs.c - the long tail of tools that change the host: one table
 * line per tool (or per subcommand), from its manual page, naming the
 * words that change the host, the scope they need (a system-wide
 * option), the words that only look, and the category of the effect.
 * Tools with a handler of their own in classify.c keep it; this table
 * adds the forms their handler does not judge.
 */
#include <string.h>

#include "runner/policy/hostverbs.h"
#include "runner/policy/names.h"

/*
 * name: the program; sub: its first operand must be this (NULL: any);
 * changes: '|'-separated words that change the host ("--opt" also
 * matches "--opt=V"; a trailing '*' matches a prefix), NULL: every run;
 * scope: one of these words must be given too (system-wide forms),
 * NULL: none needed; reads: words that only look.
 */
struct hostverb {
	const char	*name;
	const char	*sub;
	const char	*changes;
	const char	*scope;
	const char	*reads;
	const char	*cat;
	const char	*rule;
	const char	*what;
};

#define NVSMI_SETS "-pm|--persistence-mode|-e|--ecc-config|-p|" \
	"--reset-ecc-errors|-c|--compute-mode|-r|--gpu-reset|-pl|" \
	"--power-limit|-lgc|--lock-gpu-clocks|-rgc|--reset-gpu-clocks|" \
	"-lmc|--lock-memory-clocks|-rmc|--reset-memory-clocks|-ac|" \
	"--applications-clocks|-rac|--reset-applications-clocks|-am|" \
	"--accounting-mode|-caa|--clear-accounted-apps|-mig|" \
	"--multi-instance-gpu|-dm|--driver-model|-cgi|-dgi|-cci|-dci"

static const struct hostverb hostverbs[] = {
	{ "chcpu", NULL, "-d|--disable|-e|--enable|-c|--configure|-g|"
	  "--deconfigure|-p|--dispatch", NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:cpu-state", "takes processors offline or online" },
	{ "conda", "config", "--add|--append|--prepend|--set|--remove|"
	  "--remove-key", "--system", NULL, VG_CAT_SYSCONFIG,
	  "builtin:pkg-repo", "changes the system-wide conda configuration "
	  "(its channels)" },
	{ "cpupower", NULL, "frequency-set|idle-set|set", NULL, NULL,
	  VG_CAT_SYSCONFIG, "builtin:host-tuning", "changes processor "
	  "frequency, idle or power settings" },
	{ "dnf", "offline-upgrade", "reboot", NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "restarts the host to install an upgrade" },
	{ "dnf", "system-upgrade", "reboot", NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "restarts the host to install an upgrade" },
	{ "dnf5", "offline-upgrade", "reboot", NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "restarts the host to install an upgrade" },
	{ "dnf5", "system-upgrade", "reboot", NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "restarts the host to install an upgrade" },
	{ "do-release-upgrade", NULL, NULL, NULL, "-c|"
	  "--check-dist-upgrade-only|-V|--version", VG_CAT_SYSCONFIG,
	  "builtin:pkg-upgrade", "upgrades the distribution to a new "
	  "release (and restarts the host)" },
	{ "needrestart", NULL, "a|-ra", NULL, NULL, VG_CAT_SYSCONFIG,
	  "builtin:service", "restarts the services that use outdated "
	  "libraries" },
	{ "npm", "config", "set|delete|edit", "--global|-g|--location=global",
	  NULL, VG_CAT_SYSCONFIG, "builtin:pkg-repo", "changes the global "
	  "npm configuration (its registry)" },
	{ "nvidia-smi", NULL, NVSMI_SETS, NULL, "-q|--query|dmon|pmon|topo|"
	  "nvlink", VG_CAT_SYSCONFIG,
	  "builtin:gpu-config", "changes GPU settings (persistence, ECC, "
	  "compute mode, clocks, power limit, MIG) or resets a GPU" },
	{ "pacman-key", NULL, NULL, NULL, "-l|--list-keys|--list-sigs|-f|"
	  "--finger|-v|--verify|-e|--export", VG_CAT_SYSCONFIG,
	  "builtin:pkg-key", "changes the keys pacman trusts" },
	{ "pip", "config", "set|unset|edit", "--global", NULL,
	  VG_CAT_SYSCONFIG, "builtin:pkg-repo", "changes the system-wide "
	  "pip configuration (its package index)" },
	{ "pm-hibernate", NULL, NULL, NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "hibernates the host" },
	{ "pm-suspend", NULL, NULL, NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "suspends the host" },
	{ "pm-suspend-hybrid", NULL, NULL, NULL, NULL, VG_CAT_DISRUPTION,
	  "builtin:power", "suspends the host" },
	{ "powerprofilesctl", NULL, "set", NULL, NULL, VG_CAT_SYSCONFIG,
	  "builtin:host-tuning", "changes the host's power profile" },
	{ "rocm-smi", NULL, "--set*|--reset*|-r|--gpureset|--load", NULL, NULL,
	  VG_CAT_SYSCONFIG, "builtin:gpu-config", "changes GPU clocks, "
	  "fans, power or partitions, or resets a GPU" },
	{ "rpm", NULL, "--import", NULL, NULL, VG_CAT_SYSCONFIG,
	  "builtin:pkg-key", "trusts a new package signing key" },
	{ "shorewall", NULL, "start|stop|restart|reload|clear|safe-start|"
	  "safe-restart|try|enable|disable|open|close|blacklist|drop|reject|"
	  "allow|logdrop|logreject|load|refresh", NULL, NULL,
	  VG_CAT_SYSCONFIG, "builtin:firewall", "changes firewall rules" },
	{ "softwareupdate", NULL, "-R|--restart", NULL, NULL,
	  VG_CAT_DISRUPTION, "builtin:power", "installs updates and "
	  "restarts the host" },
	{ "tuned-adm", NULL, "profile|off|auto_profile", NULL, NULL,
	  VG_CAT_SYSCONFIG, "builtin:host-tuning", "changes the host's "
	  "tuning profile" },
	{ "unattended-upgrade", NULL, NULL, NULL, "--dry-run",
	  VG_CAT_SYSCONFIG, "builtin:pkg-upgrade", "upgrades the system's "
	  "packages (and restarts the host when configured to)" },
	{ "unattended-upgrades", NULL, NULL, NULL, "--dry-run",
	  VG_CAT_SYSCONFIG, "builtin:pkg-upgrade", "upgrades the system's "
	  "packages (and restarts the host when configured to)" },
	{ "xfs_growfs", NULL, NULL, NULL, "-n", VG_CAT_DISK,
	  "builtin:disk-tool", "grows a mounted filesystem" },
};

#define NHOSTVERBS (sizeof(hostverbs) / sizeof(hostverbs[0]))

static const void *hslots[NHOSTVERBS];
static struct pl_names hnames = PL_NAMES(hostverbs, hslots);

/* True when f is one of the '|'-separated words of list ("--opt" also
 * matches "--opt=V"; "w*" matches a prefix). */
static int
word_in(const char *list, const struct pl_field *f)
{
	const char *p = list;

	while (*p != '\0') {
		const char *e = strchr(p, '|');
		size_t n = e != NULL ? (size_t)(e - p) : strlen(p);

		if (n > 0 && p[n - 1] == '*') {
			if (f->len >= n - 1 && memcmp(f->s, p, n - 1) == 0)
				return 1;
		} else if (f->len >= n && memcmp(f->s, p, n) == 0 &&
		    (f->len == n || (p[0] == '-' && f->s[n] == '='))) {
			return 1;
		}
		if (e == NULL)
			break;
		p = e + 1;
	}
	return 0;
}

/* True when one of argv[from..argc) is in list. */
static int
any_in(const struct pl_cmd *c, int from, const char *list)
{
	int i;

	for (i = from; i < c->argc; i++)
		if (word_in(list, &c->argv[i]))
			return 1;
	return 0;
}

/* Judges c by one table line. */
static void
judge(struct pl_an *an, const struct pl_cmd *c, const struct hostverb *h)
{
	int from = 1;

	if (h->sub != NULL) {
		while (from < c->argc && c->argv[from].s[0] == '-')
			from++;
		if (from >= c->argc || strcmp(c->argv[from].s, h->sub) != 0)
			return;
		from++;
	}
	if (any_in(c, 1, "--help|-h|--version") ||
	    (h->reads != NULL && any_in(c, 1, h->reads)) ||
	    (h->changes != NULL && !any_in(c, from, h->changes)) ||
	    (h->scope != NULL && !any_in(c, 1, h->scope)))
		return;
	pl_find(an, h->cat, h->rule, c->off, c->len, "'%s' %s", c->name,
	    h->what);
}

void
pl_host_verbs(struct pl_an *an, const struct pl_cmd *c)
{
	const void *const *idx = pl_names_index(&hnames);
	size_t k;

	for (k = pl_names_first(&hnames, c->name); k < NHOSTVERBS; k++) {
		const struct hostverb *h = idx[k];

		if (strcmp(h->name, c->name) != 0)
			break;
		judge(an, c, h);
	}
}
