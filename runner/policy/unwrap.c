/*
 * unwrap.c - programs that run another program: sudo, doas, env, nice,
 * timeout, nohup, srun, mpirun, conda run, busybox applets, xargs,
 * parallel and the like.  For each wrapper a table says which options
 * take a value and how many leading operands come before the wrapped
 * command, so the classifier sees "rm -rf /" in "sudo -u root nice -n 5
 * timeout 10 rm -rf /".  Privilege wrappers add a finding of their own.
 * xargs and parallel build the wrapped command from their input, which
 * is modelled from the stream analysis (items of "find DIR" lie under
 * DIR; literal input is split into its items).
 */
#include <string.h>

#include "runner/policy/unwrap.h"
#include "runner/policy/paths.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/bounds.h"
#include "runner/policy/names.h"
#include "runner/policy/optrun.h"

#define W_PRIV		0x01	/* privilege change: finding */
#define W_NOCMD_OK	0x02	/* may run without a command */
#define W_SUBCMD	0x04	/* argv[1] must equal the subcommand */

struct wrapper {
	const char	*name;
	const char	*subcmd;	/* W_SUBCMD: "run", "exec" */
	const char	*shortargs;	/* short options taking a value */
	const char *const *longargs;	/* options (any dashes) with a value */
	const char *const *long2;	/* options with two values */
	const char *const *stop;	/* options meaning "no command" */
	int		 npos;		/* operands before the command */
	unsigned	 flags;
};

static const char *const sudo_long[] = { "--user", "--group", "--close-from",
    "--chdir", "--host", "--prompt", "--role", "--type", "--other-user",
    "--command-timeout", "-u", "-g", NULL };
static const char *const sudo_stop[] = { "-l", "-v", "-k", "-K", "-V", "-h",
    "--list", "--validate", "--reset-timestamp", "--remove-timestamp",
    "--version", "--help", "-ll", NULL };
/* please (a sudo alike): -l lists the rules, -w warms the token, -p
 * purges it, -c FILE checks a configuration; none runs a command. */
static const char *const please_stop[] = { "-l", "--list", "-w", "--warm",
    "-p", "--purge", "-c", "--check", "-h", "--help", "-v", "--version",
    NULL };
/* doas: -C FILE checks a configuration (and matches a command given
 * after it without running it), -L clears persisted authentications. */
static const char *const doas_stop[] = { "-C", "-L", NULL };
static const char *const please_long[] = { "--target", "--dir", "--group",
    "--allowenv", NULL };
static const char *const env_long[] = { "--unset", "--chdir",
    "--split-string", "-u", "-C", "-S", "-P", NULL };
static const char *const nice_long[] = { "--adjustment", "-n", NULL };
static const char *const timeout_long[] = { "--signal", "--kill-after", NULL };
static const char *const time_long[] = { "--format", "--output", NULL };
static const char *const srun_long[] = { "--account", "--partition",
    "--nodes", "--ntasks", "--cpus-per-task", "--time", "--job-name",
    "--output", "--error", "--input", "--nodelist", "--exclude", "--mem",
    "--gres", "--qos", "--constraint", "--chdir", "--mpi", "--dependency",
    "--distribution", "--label", "--ntasks-per-node", "--gpus",
    "--reservation", "--export", "--cpu-bind", "--mem-per-cpu",
    "--gpus-per-node", "--gpus-per-task", "--mail-type", "--mail-user",
    "--comment", "--wckey", "--signal", "--begin", "--deadline", "--kill-on-bad-exit",
    NULL };
static const char *const mpi_long[] = { "-n", "-np", "-c", "-N", "-H", "-host",
    "--host", "-hostfile", "--hostfile", "-machinefile", "--machinefile",
    "-f", "-x", "--map-by", "--bind-to", "--rank-by", "-wdir", "--wdir",
    "-ppn", "--npernode", "-npernode", "-bind-to", "-map-by", "-rf",
    "--rankfile", "-prefix", "--prefix", "-path", "--path",
    "-output-filename", "--output-filename", "-launcher", "-bootstrap",
    "-iface", "-genvlist", "-envlist", "-configfile", "-s", "-rmk", NULL };
static const char *const mpi_long2[] = { "-mca", "--mca", "-gmca", "--gmca",
    "-genv", "-env", "-x2", NULL };
/* Grid Engine's qrsh: its options with a value; -inherit's is the host
 * (qrsh -inherit HOST CMD), -pe takes two. */
static const char *const qrsh_long[] = { "-a", "-A", "-ac", "-ar", "-b",
    "-binding", "-c", "-ckpt", "-dc", "-display", "-dl", "-e", "-hold_jid",
    "-hold_jid_ad", "-i", "-j", "-js", "-jsv", "-l", "-m", "-M", "-masterq",
    "-N", "-now", "-o", "-p", "-P", "-pty", "-q", "-R", "-sc", "-shell",
    "-sync", "-S", "-t", "-tc", "-v", "-w", "-wd", "-inherit", NULL };
static const char *const qrsh_long2[] = { "-pe", NULL };
static const char *const conda_long[] = { "-n", "--name", "-p", "--prefix",
    "--cwd", "--env", NULL };
static const char *const uv_long[] = { "--with", "--python", "-p",
    "--project", "--directory", "--env-file", "--package", "--extra",
    "--group", "--index-url", "--index", "-w", NULL };
static const char *const app_long[] = { "-B", "--bind", "-H", "--home",
    "-W", "--workdir", "--env", "--env-file", "--pwd", "-o", "--overlay",
    "--security", "--network", "--hostname", "-S", "--scratch", "--mount",
    "--fusemount", "--app", "--network-args", "--dns", "--apply-cgroups",
    "--drop-caps", "--add-caps", NULL };
static const char *const flock_long[] = { "-w", "--wait", "--timeout", "-E",
    "--conflict-exit-code", NULL };
static const char *const strace_long[] = { "-o", "-e", "-p", "-s", "-u",
    "-E", "-a", "-P", "-I", "-O", "-S", "-X", NULL };
static const char *const perf_long[] = { "-e", "--event", "-o", "--output",
    "-F", "--freq", "-c", "--count", "-p", "--pid", "-t", "--tid",
    "--call-graph", "-C", "--cpu", "-r", "--repeat", "-I", NULL };
static const char *const stdbuf_long[] = { "-i", "-o", "-e", "--input",
    "--output", "--error", NULL };
static const char *const numactl_long[] = { "-C", "-N", "-m", "-i", "-p",
    "--physcpubind", "--cpunodebind", "--membind", "--interleave",
    "--preferred", NULL };
static const char *const bwrap_long[] = { "--dev", "--proc", "--tmpfs",
    "--chdir", "--unsetenv", "--uid", "--gid", "--hostname",
    "--remount-ro", "--seccomp", "--info-fd", "--lock-file", "--mqueue",
    "--dir", "--cap-add", "--cap-drop", "--perms", "--size", "--argv0",
    "--json-status-fd", "--sync-fd", "--block-fd", "--userns-block-fd",
    "--userns", "--userns2", "--pidns", NULL };
static const char *const bwrap_long2[] = { "--bind", "--ro-bind", "--dev-bind",
    "--setenv", "--symlink", "--file", "--bind-data", "--ro-bind-data",
    "--bind-try", "--ro-bind-try", "--dev-bind-try", "--chmod", NULL };
static const char *const xvfb_long[] = { "-n", "--server-num", "-s",
    "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p",
    "--xauth-protocol", "-w", "--wait", NULL };
static const char *const screen_long[] = { "-S", "-c", "-e", "-h", "-p",
    "-T", "-Logfile", NULL };
static const char *const nsenter_long[] = { "-t", "--target", "-S",
    "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root", NULL };
static const char *const cgexec_long[] = { "-g", NULL };
static const char *const sysrun_long[] = { "-p", "--property", "-E",
    "--setenv", "--uid", "--gid", "--unit", "-u", "--description",
    "--slice", "-M", "--machine", "-H", "--host", "--working-directory",
    NULL };
static const char *const proxy_long[] = { "-f", NULL };
static const char *const valgrind_long[] = { NULL };
static const char *const run0_long[] = { "--user", "--group", "--nice",
    "--chdir", "--setenv", "--unit", "--property", "--description",
    "--slice", "--background", "--machine", "-u", "-g", "-D", NULL };
static const char *const help_stop[] = { "--help", "-h", "--version", NULL };
static const char *const setpriv_stop[] = { "--dump", "-d", "--list-caps",
    "-L", "--help", "-h", "--version", "-V", NULL };
static const char *const setpriv_long[] = { "--reuid", "--regid",
    "--groups", "--securebits", "--selinux-label", "--apparmor-profile",
    "--inh-caps", "--ambient-caps", "--bounding-set", NULL };
static const char *const pid_stop[] = { "-p", "--pid", "--all-tasks", NULL };

static const struct wrapper wrappers[] = {
	{ .name = "sudo", .shortargs = "ugCDhprtUT", .longargs = sudo_long,
	  .stop = sudo_stop, .flags = W_PRIV },
	{ .name = "doas", .shortargs = "uC", .stop = doas_stop,
	  .flags = W_PRIV },
	{ .name = "pkexec", .longargs = (const char *const[]){ "--user",
	  NULL }, .stop = help_stop, .flags = W_PRIV },
	{ .name = "run0", .shortargs = "ugD", .longargs = run0_long,
	  .stop = help_stop, .flags = W_PRIV },
	{ .name = "please", .shortargs = "utdga", .longargs = please_long,
	  .stop = please_stop, .flags = W_PRIV },
	/* Graphical sudo and su front ends: -u USER, -D/-m texts shown
	 * in the dialog; kdesu's -c takes the command as one string. */
	{ .name = "gksu", .shortargs = "uDm", .stop = help_stop,
	  .flags = W_PRIV },
	{ .name = "gksudo", .shortargs = "uDm", .stop = help_stop,
	  .flags = W_PRIV },
	{ .name = "kdesu", .shortargs = "udfip", .stop = help_stop,
	  .flags = W_PRIV },
	{ .name = "kdesudo", .shortargs = "udfip", .stop = help_stop,
	  .flags = W_PRIV },
	{ .name = "lxsudo", .stop = help_stop, .flags = W_PRIV },
	{ .name = "lxqt-sudo", .stop = help_stop, .flags = W_PRIV },
	{ .name = "beesu", .stop = help_stop, .flags = W_PRIV },
	{ .name = "gosu", .npos = 1, .flags = W_PRIV },
	{ .name = "su-exec", .npos = 1, .flags = W_PRIV },
	{ .name = "setpriv", .longargs = setpriv_long, .stop = setpriv_stop,
	  .flags = W_PRIV },
	{ .name = "env", .shortargs = "uCSP", .longargs = env_long,
	  .flags = W_NOCMD_OK },
	{ .name = "command", .shortargs = "" },
	{ .name = "builtin" },
	{ .name = "exec", .shortargs = "a", .flags = W_NOCMD_OK },
	{ .name = "nice", .shortargs = "n", .longargs = nice_long },
	{ .name = "renice" , .shortargs = "ngpu", .flags = W_NOCMD_OK,
	  .npos = 99 },
	{ .name = "ionice", .shortargs = "cnp", .stop = pid_stop },
	{ .name = "nohup" },
	{ .name = "setsid" },
	{ .name = "time", .shortargs = "fo", .longargs = time_long },
	{ .name = "stdbuf", .shortargs = "ioe", .longargs = stdbuf_long },
	{ .name = "chrt", .shortargs = "TPD", .npos = 1, .stop = pid_stop },
	{ .name = "taskset", .npos = 1, .stop = pid_stop },
	{ .name = "timeout", .shortargs = "sk", .longargs = timeout_long,
	  .npos = 1 },
	{ .name = "unbuffer" },
	{ .name = "chronic" },
	{ .name = "entr" },
	{ .name = "ssh-agent", .shortargs = "aEOPt", .stop = (const char *const[]){
	  "-k", NULL }, .flags = W_NOCMD_OK },
	{ .name = "dbus-launch", .flags = W_NOCMD_OK },
	{ .name = "systemd-inhibit", .longargs = (const char *const[]){
	  "--what", "--who", "--why", "--mode", NULL },
	  .stop = (const char *const[]){ "--list", "-h", "--help",
	  "--version", NULL } },
	{ .name = "rlwrap" },
	{ .name = "caffeinate" },
	{ .name = "catchsegv" },
	{ .name = "dbus-run-session" },
	{ .name = "eatmydata" },
	{ .name = "fakeroot" },
	{ .name = "torsocks" },
	{ .name = "proxychains", .shortargs = "f", .longargs = proxy_long },
	{ .name = "proxychains4", .shortargs = "f", .longargs = proxy_long },
	{ .name = "tsp" },
	{ .name = "nocache" },
	{ .name = "ccache" },
	{ .name = "distcc" },
	{ .name = "tini" },
	{ .name = "dumb-init" },
	{ .name = "with-contenv" },
	{ .name = "firejail" },
	{ .name = "faketime", .npos = 1 },
	{ .name = "chroot", .npos = 1, .longargs = (const char *const[]){
	  "--userspec", "--groups", NULL }, .stop = help_stop,
	  .flags = W_PRIV },
	{ .name = "unshare", .longargs = (const char *const[]){ "--setuid",
	  "--setgid", "--wd", "--root", "-S", "-G", "-w", "-R", NULL } },
	{ .name = "nsenter", .shortargs = "tSGwr", .longargs = nsenter_long },
	{ .name = "cgexec", .shortargs = "g", .longargs = cgexec_long },
	{ .name = "flock", .shortargs = "wE", .longargs = flock_long,
	  .npos = 1 },
	{ .name = "strace", .shortargs = "oepsuEaPIOSX",
	  .longargs = strace_long, .stop = (const char *const[]){ "-p",
	  NULL } },
	{ .name = "ltrace", .shortargs = "oepsunaLl",
	  .longargs = strace_long },
	{ .name = "valgrind", .longargs = valgrind_long },
	{ .name = "perf", .npos = 1, .longargs = perf_long,
	  .shortargs = "eoFcptCrI" },
	{ .name = "numactl", .shortargs = "CNmip", .longargs = numactl_long },
	{ .name = "hwloc-bind", .npos = 1 },
	{ .name = "prlimit", .stop = (const char *const[]){ "-p", "--pid",
	  NULL } },
	{ .name = "xvfb-run", .shortargs = "nsfepw", .longargs = xvfb_long },
	{ .name = "bwrap", .longargs = bwrap_long, .long2 = bwrap_long2 },
	{ .name = "srun", .shortargs = "ABcCdDeGiJLmMnNopqrStTwWx",
	  .longargs = srun_long },
	{ .name = "salloc", .shortargs = "ABcCdDeGiJLmMnNopqrStTwWx",
	  .longargs = srun_long, .flags = W_NOCMD_OK },
	{ .name = "qrsh", .longargs = qrsh_long, .long2 = qrsh_long2,
	  .flags = W_NOCMD_OK },
	{ .name = "mpirun", .longargs = mpi_long, .long2 = mpi_long2 },
	{ .name = "mpiexec", .longargs = mpi_long, .long2 = mpi_long2 },
	{ .name = "mpiexec.hydra", .longargs = mpi_long, .long2 = mpi_long2 },
	{ .name = "orterun", .longargs = mpi_long, .long2 = mpi_long2 },
	{ .name = "prterun", .longargs = mpi_long, .long2 = mpi_long2 },
	{ .name = "aprun", .longargs = mpi_long },
	{ .name = "jsrun", .longargs = mpi_long },
	{ .name = "ibrun", .longargs = mpi_long },
	{ .name = "charmrun", .longargs = mpi_long },
	{ .name = "apptainer", .subcmd = "exec", .npos = 1,
	  .longargs = app_long, .flags = W_SUBCMD },
	{ .name = "singularity", .subcmd = "exec", .npos = 1,
	  .longargs = app_long, .flags = W_SUBCMD },
	{ .name = "conda", .subcmd = "run", .longargs = conda_long,
	  .flags = W_SUBCMD },
	{ .name = "mamba", .subcmd = "run", .longargs = conda_long,
	  .flags = W_SUBCMD },
	{ .name = "micromamba", .subcmd = "run", .longargs = conda_long,
	  .flags = W_SUBCMD },
	{ .name = "poetry", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "pipenv", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "uv", .subcmd = "run", .longargs = uv_long,
	  .flags = W_SUBCMD },
	{ .name = "pixi", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "pdm", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "hatch", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "rye", .subcmd = "run", .flags = W_SUBCMD },
	{ .name = "bundle", .subcmd = "exec", .flags = W_SUBCMD },
	{ .name = "direnv", .subcmd = "exec", .npos = 1, .flags = W_SUBCMD },
	{ .name = "systemd-run", .shortargs = "pEuMH", .longargs = sysrun_long,
	  .stop = help_stop },
	{ .name = "screen", .shortargs = "Scehp", .longargs = screen_long,
	  .flags = W_NOCMD_OK },
	{ .name = "coproc" },
};

static const void *wslots[sizeof(wrappers) / sizeof(wrappers[0])];
static struct pl_names wnames = PL_NAMES(wrappers, wslots);

static const struct wrapper *
find_wrapper(const char *name)
{
	return pl_names_find(&wnames, name);
}

/* True when s (a field) equals one of the strings in list. */
static int
in_list(const char *const *list, const char *s, size_t n)
{
	if (list == NULL)
		return 0;
	for (; *list != NULL; list++)
		if (strlen(*list) == n && memcmp(*list, s, n) == 0)
			return 1;
	return 0;
}

/* Generic option walk; returns the index of the wrapped command, argc
 * when there is none, or -2 when a "no command" option was seen. */
static int
walk_opts(const struct wrapper *w, const struct pl_cmd *c, int start)
{
	int i = start, pos = 0;

	while (i < c->argc) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s, *eq;
		size_t n = f->len;

		if (n == 2 && s[0] == '-' && s[1] == '-')
			return i + 1 + w->npos <= c->argc ? i + 1 + w->npos :
			    c->argc;
		if (n > 1 && s[0] == '-' && !(f->flags & F_UNK) && pos == 0) {
			if (in_list(w->stop, s, n))
				return -2;
			eq = memchr(s, '=', n);
			if (eq != NULL) {
				i++;
				continue;
			}
			if (in_list(w->longargs, s, n)) {
				i += 2;
				continue;
			}
			if (in_list(w->long2, s, n)) {
				i += 3;
				continue;
			}
			if (s[1] != '-' && w->shortargs != NULL) {
				size_t k;
				int took = 0;

				for (k = 1; k < n; k++) {
					if (strchr(w->shortargs, s[k]) != NULL) {
						took = k + 1 == n ? 2 : 1;
						break;
					}
				}
				i += took == 2 ? 2 : 1;
				continue;
			}
			i++;
			continue;
		}
		if (pos < w->npos) {
			pos++;
			i++;
			continue;
		}
		/* env and friends: NAME=value before the command. */
		if (strcmp(w->name, "env") == 0 && memchr(s, '=', n) != NULL &&
		    s[0] != '=' && s[0] != '/') {
			i++;
			continue;
		}
		return i;
	}
	return c->argc;
}

/* Reason text for a privilege wrapper. */
static void
priv_finding(struct pl_an *an, const struct pl_cmd *c, int k)
{
	const char *what = k < c->argc ? c->argv[k].s : NULL;

	if (what != NULL && memchr(what, PL_UNK, c->argv[k].len) != NULL)
		what = "a program chosen at run time";
	pl_find(an, VG_CAT_PRIVILEGE, "builtin:priv-wrapper", c->off, c->len,
	    "'%s' runs %s%s%s with other privileges", c->name,
	    what ? "'" : "a shell", what ? what : "",
	    what ? "'" : "");
}

/* systemd-run without --user asks the system manager, which runs the
 * command as root unless told otherwise: a privilege boundary. */
static int
sysrun_system(const struct pl_cmd *c, int k)
{
	int i;

	if (strcmp(c->name, "systemd-run") != 0)
		return 0;
	for (i = 1; i < k && i < c->argc; i++)
		if (strcmp(c->argv[i].s, "--user") == 0)
			return 0;
	return 1;
}

/* unshare mapping the caller to root in a new user namespace. */
static int
unshare_root(const struct pl_cmd *c, int k)
{
	int i;

	if (strcmp(c->name, "unshare") != 0)
		return 0;
	for (i = 1; i < k && i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (strcmp(s, "-r") == 0 || strcmp(s, "--map-root-user") == 0 ||
		    strcmp(s, "--map-user=0") == 0 ||
		    strcmp(s, "--map-user=root") == 0)
			return 1;
	}
	return 0;
}

/*
 * Privilege front ends with subcommands: capsh (runs bash after "--"
 * with changed capabilities or user; --print and friends only look) and
 * machinectl shell/login (a shell as USER@MACHINE, ".host" being this
 * host).  Returns the index of a command to unwrap, or 0.
 */
static int
priv_front(struct pl_an *an, struct pl_cmd *c, int *priv, int *handled)
{
	static const char *const capsh_look[] = { "--print", "--current",
	    "--help", "--version", "--decode", "--supports", "--has-p",
	    "--has-i", "--has-a", "--has-b", "--iab", "--explain", NULL };
	int i;

	*handled = 1;
	if (strcmp(c->name, "capsh") == 0) {
		for (i = 1; i < c->argc; i++) {
			const char *s = c->argv[i].s, *e = strchr(s, '=');
			size_t n = e ? (size_t)(e - s) : c->argv[i].len;

			if (strcmp(s, "--") == 0)
				break;
			if (in_list(capsh_look, s, n))
				return 0;
		}
		*priv = 1;
		pl_find(an, VG_CAT_PRIVILEGE, "builtin:priv-wrapper", c->off,
		    c->len, "'capsh' runs a shell with changed capabilities "
		    "or user");
		if (i + 2 < c->argc && strcmp(c->argv[i + 1].s, "-c") == 0) {
			struct pl_stream in, out;

			pl_stream_unknown(&in, 0);
			pl_analyse_text(an, c->argv[i + 2].s,
			    c->argv[i + 2].len, c->off, c->len, &in, &out);
		}
		return 0;
	}
	/* machinectl [OPTIONS] shell|login [[USER@]MACHINE [CMD ...]] */
	for (i = 1; i < c->argc && c->argv[i].s[0] == '-'; i++)
		if (strcmp(c->argv[i].s, "--uid") == 0 ||
		    strcmp(c->argv[i].s, "-E") == 0 ||
		    strcmp(c->argv[i].s, "--setenv") == 0 ||
		    strcmp(c->argv[i].s, "-M") == 0 ||
		    strcmp(c->argv[i].s, "-H") == 0 ||
		    strcmp(c->argv[i].s, "--machine") == 0 ||
		    strcmp(c->argv[i].s, "--host") == 0)
			i++;
	if (i >= c->argc || (strcmp(c->argv[i].s, "shell") != 0 &&
	    strcmp(c->argv[i].s, "login") != 0)) {
		*handled = 0;
		return 0;
	}
	*priv = 1;
	pl_find(an, VG_CAT_PRIVILEGE, "builtin:priv-wrapper", c->off, c->len,
	    "'machinectl %s' opens a session as another user or in another "
	    "machine", c->argv[i].s);
	for (i++; i < c->argc && c->argv[i].s[0] == '-'; i++)
		if (strcmp(c->argv[i].s, "--uid") == 0 ||
		    strcmp(c->argv[i].s, "-E") == 0 ||
		    strcmp(c->argv[i].s, "--setenv") == 0)
			i++;
	if (i + 1 < c->argc) {
		*handled = 0;
		return i + 1;
	}
	return 0;
}

/* How input is cut into items: blanks (xargs' default), or at each
 * delimiter byte (-0, -d, and whole lines for -I, -L and parallel). */
#define SPLIT_BLANKS	(-1)

/* Splits known xargs or parallel input into items. */
static int
split_items(struct pl_an *an, const struct pl_stream *in, int delim,
    struct pl_field *items, int max)
{
	const char *s = in->s, *e = in->s + in->len;
	int n = 0;

	while (s < e && n < max) {
		const char *t = s;

		if (delim != SPLIT_BLANKS) {
			while (t < e && *t != (char)delim)
				t++;
		} else {
			while (s < e && (*s == ' ' || *s == '\n' || *s == '\t'))
				s++;
			t = s;
			while (t < e && *t != ' ' && *t != '\n' && *t != '\t')
				t++;
		}
		if (t > s) {
			memset(&items[n], 0, sizeof(items[n]));
			items[n].s = pl_strndup(an->a, s, (size_t)(t - s));
			items[n].len = (size_t)(t - s);
			items[n].taint = in->taint;
			if (memchr(items[n].s, '*', items[n].len))
				items[n].flags |= F_GLOB;
			n++;
		}
		s = t + 1;
	}
	return n;
}

/* Replaces occurrences of rep in f with item. */
static struct pl_field
replace_in(struct pl_an *an, const struct pl_field *f, const char *rep,
    size_t rlen, const struct pl_field *item)
{
	struct pl_field o = *f;
	struct vg_buf *b;
	size_t i = 0;

	if (rlen == 0 || f->len < rlen || (b = pl_buf_get(an)) == NULL)
		return o;
	while (i < f->len) {
		if (i + rlen <= f->len && memcmp(f->s + i, rep, rlen) == 0) {
			vg_buf_add(b, item->s, item->len);
			o.flags |= item->flags;
			o.taint |= item->taint;
			i += rlen;
		} else {
			vg_buf_addc(b, f->s[i++]);
		}
	}
	o.s = pl_strndup(an->a, b->data, b->len);
	o.len = b->len;
	pl_buf_put(an);
	return o;
}

/* The unknown item a stream stands for ("DIR/<unknown>" after find). */
static void
unknown_item(struct pl_an *an, const struct pl_stream *in,
    struct pl_field *it)
{
	memset(it, 0, sizeof(*it));
	if (in->items != NULL) {
		it->s = in->items;
		it->len = strlen(in->items);
		it->flags = F_GLOB | (memchr(it->s, PL_UNK, it->len) ? F_UNK : 0);
		it->taint = in->taint;
		return;
	}
	it->s = "\001";
	it->len = 1;
	it->flags = F_UNK;
	it->taint = in->taint | T_VAR;
	(void)an;
}

/* Runs cmd (argv[0..n)) once per item, appending or replacing. */
static void
run_items(struct pl_an *an, struct pl_cmd *c, struct pl_field *cmd, int n,
    const char *rep, size_t rlen, struct pl_field *items, int nitems,
    int per)
{
	struct pl_field *nv;
	struct pl_stream in, out;
	int i, k, m;

	if (n == 0) {
		static char echo[] = "echo";

		cmd = pl_alloc(an->a, sizeof(*cmd));
		cmd->s = echo;
		cmd->len = 4;
		n = 1;
	}
	pl_stream_unknown(&in, 0);
	for (i = 0; i < nitems && i < 4 && !an->over; i++) {
		nv = pl_alloc(an->a, (size_t)(n + per + 1) * sizeof(*nv));
		m = 0;
		if (rep != NULL) {
			int found = 0;

			for (k = 0; k < n; k++)
				if (memmem(cmd[k].s, cmd[k].len, rep, rlen))
					found = 1;
			if (!found)
				rep = NULL;
		}
		for (k = 0; k < n; k++)
			nv[m++] = rep ? replace_in(an, &cmd[k], rep, rlen,
			    &items[i]) : cmd[k];
		if (!rep)
			for (k = 0; k < per && i + k < nitems; k++)
				nv[m++] = items[i + k];
		pl_run_argv(an, nv, m, c->off, c->len, &in, &out, 0);
	}
	pl_stream_unknown(c->out, T_PROG);
}

/* The value of option f of xargs or parallel when it is "--name=V" or
 * a short option with the value attached ("-I{}"); NULL otherwise. */
static const char *
attached(const struct pl_field *f, const char *lng, char sh)
{
	size_t n = strlen(lng);

	if (strncmp(f->s, lng, n) == 0 && f->s[n] == '=')
		return f->s + n + 1;
	if (sh && f->s[0] == '-' && f->s[1] == sh && f->s[2] != '\0')
		return f->s + 2;
	return NULL;
}

/* The delimiter byte an xargs -d/--delimiter value names. */
static int
delim_of(const char *v)
{
	if (v[0] == '\\' && v[1] == 'n')
		return '\n';
	if (v[0] == '\\' && v[1] == 't')
		return '\t';
	if (v[0] == '\\' && v[1] == '0')
		return '\0';
	return (unsigned char)v[0];
}

/* The items xargs or parallel read from a file (-a FILE): the file's
 * content when the command wrote it earlier, else unknown. */
static int
file_items(struct pl_an *an, const struct pl_field *file, int delim,
    struct pl_field *items, int max)
{
	const char *abs = pl_path_resolve(an, file->s, file->len);
	struct pl_file *tf = pl_file_find(an, abs);
	struct pl_stream s;

	if (tf != NULL && tf->content != NULL) {
		pl_stream_text(&s, tf->content, tf->clen, tf->taint);
		return split_items(an, &s, delim, items, max);
	}
	pl_stream_unknown(&s, tf != NULL ? tf->taint : T_PROG);
	unknown_item(an, &s, &items[0]);
	return 1;
}

/*
 * xargs [OPTIONS] [CMD [ARGS]]: the command comes from the arguments,
 * its operands from stdin or from -a FILE.  Options taking a value:
 * -a/--arg-file, -d/--delimiter, -E, -I, -L, -n/--max-args,
 * -P/--max-procs, -s/--max-chars, --process-slot-var; optional
 * attached ones: -e[EOF]/--eof[=EOF], -i[R]/--replace[=R],
 * -l[N]/--max-lines[=N].  -I, -i and -L take whole lines as items.
 */
static void
do_xargs(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const valued[] = { "-a", "--arg-file", "-d",
	    "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
	    "--max-procs", "-s", "--max-chars", "--process-slot-var", NULL };
	struct pl_field items[8];
	const struct pl_field *file = NULL;
	const char *rep = NULL, *v;
	size_t rlen = 0;
	int i = 1, delim = SPLIT_BLANKS, nitems;

	while (i < c->argc) {
		const struct pl_field *f = &c->argv[i];
		const char *s = f->s;

		if (f->len < 2 || s[0] != '-' || (f->flags & F_UNK))
			break;
		if (strcmp(s, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(s, "--help") == 0 || strcmp(s, "--version") == 0)
			return;
		if (strcmp(s, "-0") == 0 || strcmp(s, "--null") == 0) {
			delim = '\0';
		} else if (in_list(valued, s, f->len) && i + 1 < c->argc) {
			const struct pl_field *val = &c->argv[++i];

			if (s[1] == 'a' || strcmp(s, "--arg-file") == 0)
				file = val;
			else if (s[1] == 'd' || strcmp(s, "--delimiter") == 0)
				delim = delim_of(val->s);
			else if (s[1] == 'I') {
				rep = val->s;
				rlen = val->len;
				delim = '\n';
			} else if (s[1] == 'L' && delim == SPLIT_BLANKS)
				delim = '\n';
		} else if ((v = attached(f, "--arg-file", 'a')) != NULL) {
			struct pl_field *ff = pl_alloc(an->a, sizeof(*ff));

			*ff = *f;
			ff->s = v;
			ff->len = strlen(v);
			file = ff;
		} else if ((v = attached(f, "--delimiter", 'd')) != NULL) {
			delim = delim_of(v);
		} else if (s[1] == 'I') {
			rep = s + 2;
			rlen = f->len - 2;
			delim = '\n';
		} else if (s[1] == 'i' || strncmp(s, "--replace", 9) == 0) {
			v = attached(f, "--replace", 'i');
			rep = v != NULL ? v : "{}";
			rlen = strlen(rep);
			delim = '\n';
		} else if ((s[1] == 'L' || s[1] == 'l' ||
		    strncmp(s, "--max-lines", 11) == 0) &&
		    delim == SPLIT_BLANKS) {
			delim = '\n';
		}
		i++;
	}
	if (file != NULL)
		nitems = file_items(an, file, delim, items, 8);
	else if (c->in->known)
		nitems = split_items(an, c->in, delim, items, 8);
	else {
		unknown_item(an, c->in, &items[0]);
		nitems = 1;
	}
	if (nitems == 0)
		return;
	run_items(an, c, c->argv + i, c->argc - i, rep, rlen, items, nitems,
	    rep ? 1 : nitems);
}

/* parallel: CMD ::: args, or commands as arguments or on stdin. */
static void
do_parallel(struct pl_an *an, struct pl_cmd *c)
{
	struct pl_field items[8];
	int i = 1, sep = -1, nitems = 0, k;
	static const char *const argopts[] = { "-j", "--jobs", "-S",
	    "--sshlogin", "-a", "--arg-file", "-N", "-n", "-P", "--joblog",
	    "--results", "--res", "--tmpdir", "-I", "--colsep", "-C", "-d",
	    "--delimiter", "-E", "--eof", "--delay", "--timeout", "--retries",
	    "--memfree", "--load", "--halt", "--sshloginfile", "--slf",
	    "--workdir", "--wd", "--env", "--basefile", "--bf", "--return",
	    "--transferfile", "--tf", "--max-replace-args", "-L",
	    "--max-lines", "-s", "--max-chars", "--block", "--block-size",
	    "--recstart", "--recend", "--tagstring", "--tag-string",
	    "--header", "--limit", "--nice", "--semaphorename", "--id",
	    "--termseq", "--ssh", "--rpl", "--max-procs", "--jobslot",
	    "--shebang-wrap", "--sqlmaster", "--sqlworker", "--sqlandworker",
	    "--pipepart", "--filter", "--retry-failed", "--seqreplace",
	    "--startpos", "--ctagstring", "--results-dir", "--plain", NULL };
	const struct pl_field *file = NULL;

	while (i < c->argc && c->argv[i].len > 1 && c->argv[i].s[0] == '-' &&
	    strcmp(c->argv[i].s, ":::") != 0 &&
	    strcmp(c->argv[i].s, "::::") != 0) {
		const char *s = c->argv[i].s;

		/* --dry-run only prints the commands; --help, --version,
		 * --number-of-cpus ... run none. */
		if (strcmp(s, "--dry-run") == 0 || strcmp(s, "--dryrun") == 0 ||
		    strcmp(s, "--help") == 0 || strcmp(s, "--version") == 0 ||
		    strncmp(s, "--number-of-", 12) == 0 ||
		    strcmp(s, "--citation") == 0 ||
		    strcmp(s, "--minversion") == 0)
			return;
		if ((strcmp(s, "-a") == 0 || strcmp(s, "--arg-file") == 0) &&
		    i + 1 < c->argc)
			file = &c->argv[i + 1];
		if (in_list(argopts, s, c->argv[i].len))
			i++;
		i++;
	}
	for (k = i; k < c->argc; k++)
		if (strcmp(c->argv[k].s, ":::") == 0 ||
		    strcmp(c->argv[k].s, "::::") == 0) {
			sep = k;
			break;
		}
	if (sep >= 0) {
		/* ::: and :::+ give arguments; :::: and ::::+ give files
		 * whose lines are the arguments. */
		int files = 0;

		for (k = sep; k < c->argc && nitems < 8; k++) {
			const char *s = c->argv[k].s;

			if (strcmp(s, ":::") == 0 || strcmp(s, ":::+") == 0 ||
			    strcmp(s, "::::") == 0 || strcmp(s, "::::+") == 0)
				files = s[3] == ':';
			else if (files)
				nitems += file_items(an, &c->argv[k], '\n',
				    items + nitems, 8 - nitems);
			else
				items[nitems++] = c->argv[k];
		}
	} else if (file != NULL) {
		nitems = file_items(an, file, '\n', items, 8);
		sep = c->argc;
	} else if (c->in->known) {
		/* parallel reads one argument (or command) per line. */
		nitems = split_items(an, c->in, '\n', items, 8);
		sep = c->argc;
	} else {
		unknown_item(an, c->in, &items[0]);
		nitems = 1;
		sep = c->argc;
	}
	if (sep == i) {
		/* The items are whole shell commands. */
		struct pl_stream in, out;

		pl_stream_unknown(&in, 0);
		for (k = 0; k < nitems && !an->over; k++) {
			/* Command lines only known at run time are judged
			 * as `parallel bash -c {}` on them is: dynamic code
			 * (remote code when downloaded). */
			if (items[k].flags & F_UNK) {
				pl_find(an, items[k].taint & T_NET ?
				    VG_CAT_REMOTE_CODE : VG_CAT_OBFUSCATION,
				    "builtin:parallel-code", c->off, c->len,
				    "parallel runs commands read from %s",
				    items[k].taint & T_NET ? "downloaded "
				    "data" : items[k].taint & T_DECODED ?
				    "decoded data" : "input only known at "
				    "run time");
				continue;
			}
			pl_analyse_text(an, items[k].s, items[k].len, c->off,
			    c->len, &in, &out);
		}
		return;
	}
	run_items(an, c, c->argv + i, sep - i, "{}", 2, items, nitems, 1);
	(void)run_items;
}

/* busybox/toybox APPLET args: the applet is the command. */
static int
applet_index(const struct pl_cmd *c)
{
	int i = 1;

	while (i < c->argc && c->argv[i].len > 0 && c->argv[i].s[0] == '-')
		i++;
	return i;
}

int
pl_unwrap(struct pl_an *an, struct pl_cmd *c, int *priv, int *handled)
{
	const struct wrapper *w;
	int k;

	*handled = 0;
	switch (c->name[0]) {
	case 'b':
		if (strcmp(c->name, "busybox") == 0)
			return applet_index(c);
		break;
	case 't':
		if (strcmp(c->name, "toybox") == 0)
			return applet_index(c);
		break;
	case 'x':
		if (strcmp(c->name, "xargs") == 0) {
			*handled = 1;
			do_xargs(an, c);
			return 0;
		}
		break;
	case 'p':
		if (strcmp(c->name, "parallel") == 0 ||
		    strcmp(c->name, "parallel-ssh") == 0) {
			*handled = 1;
			do_parallel(an, c);
			return 0;
		}
		break;
	case 'c':
		if (strcmp(c->name, "command") == 0 && c->argc > 1 &&
		    (strcmp(c->argv[1].s, "-v") == 0 ||
		    strcmp(c->argv[1].s, "-V") == 0)) {
			/* command -v NAME prints the name: a lookup. */
			if (c->argc > 2)
				pl_stream_text(c->out, c->argv[2].s,
				    c->argv[2].len, c->argv[2].taint);
			*handled = 1;
			return 0;
		}
		break;
	}
	if (strcmp(c->name, "capsh") == 0 || strcmp(c->name, "machinectl") ==
	    0)
		return priv_front(an, c, priv, handled);
	w = find_wrapper(c->name);
	if (w == NULL)
		return 0;
	if ((strcmp(c->name, "srun") == 0 || strcmp(c->name, "salloc") == 0 ||
	    strcmp(c->name, "qrsh") == 0) &&
	    (an->infloop || an->loopiter >= 500))
		pl_find(an, VG_CAT_SCHEDULER, "builtin:submit-loop", c->off,
		    c->len, "'%s' starts jobs in an %s loop", c->name,
		    an->infloop ? "unbounded" : "very large");
	k = 1;
	if (w->flags & W_SUBCMD) {
		if (c->argc < 2 || strcmp(c->argv[1].s, w->subcmd) != 0)
			return 0;
		k = 2;
	}
	k = walk_opts(w, c, k);
	if (k == -2)
		return c->argc;		/* sudo -l: no command runs */
	if (strcmp(c->name, "nsenter") == 0) {
		int i;

		for (i = 1; i < c->argc; i++)
			if ((strcmp(c->argv[i].s, "-t") == 0 ||
			    strcmp(c->argv[i].s, "--target") == 0) &&
			    i + 1 < c->argc && strcmp(c->argv[i + 1].s, "1") ==
			    0)
				pl_find(an, VG_CAT_PRIVILEGE,
				    "builtin:nsenter-host", c->off, c->len,
				    "enters the namespaces of PID 1 (the host)");
	}
	if (strcmp(c->name, "systemd-run") == 0) {
		int i;

		for (i = 1; i < k && i < c->argc; i++)
			if (strncmp(c->argv[i].s, "--on-", 5) == 0)
				pl_find(an, VG_CAT_SYSCONFIG,
				    "builtin:systemd-timer", c->off, c->len,
				    "schedules a command with a systemd "
				    "timer (persistence)");
	}
	if ((w->flags & W_PRIV) || sysrun_system(c, k) || unshare_root(c, k)) {
		*priv = 1;
		priv_finding(an, c, k);
	}
	if (strcmp(c->name, "env") == 0) {
		int i;

		/* env NAME=VALUE: a variable programs run (PAGER ...). */
		for (i = 1; i < k && i < c->argc; i++)
			if (c->argv[i].s[0] != '-')
				pl_optrun_env(an, &c->argv[i], c->off, c->len);
		/* env -S "cmd args": split the string. */
		for (i = 1; i < k && i < c->argc; i++) {
			const char *s = c->argv[i].s, *t = NULL;
			struct pl_stream in, out;

			if (strncmp(s, "--split-string=", 15) == 0)
				t = s + 15;
			else if (strncmp(s, "-S", 2) == 0 && s[2] != '\0')
				t = s + 2;
			else if ((strcmp(s, "-S") == 0 ||
			    strcmp(s, "--split-string") == 0) && i + 1 < c->argc)
				t = c->argv[i + 1].s;
			if (t == NULL)
				continue;
			pl_stream_unknown(&in, 0);
			*handled = 1;
			pl_analyse_text(an, t, strlen(t), c->off, c->len, &in,
			    &out);
			return 0;
		}
	}
	if (k >= c->argc) {
		if (strcmp(c->name, "env") == 0)
			return 0;	/* env alone prints the environment */
		return c->argc;
	}
	if (strcmp(c->name, "flock") == 0) {
		int i;

		/* flock FILE -c CMD, or flock -c CMD FILE (getopt takes
		 * the option anywhere): the command is one string. */
		for (i = 1; i <= k && i + 1 < c->argc; i++) {
			struct pl_stream in, out;

			if (strcmp(c->argv[i].s, "-c") != 0 &&
			    strcmp(c->argv[i].s, "--command") != 0)
				continue;
			pl_stream_unknown(&in, 0);
			*handled = 1;
			pl_analyse_text(an, c->argv[i + 1].s,
			    c->argv[i + 1].len, c->off, c->len, &in, &out);
			return 0;
		}
	}
	return k;
}
