/*
 * policy-bench.c - throughput of the policy gate on one core.
 *
 * Loads the corpus files given as arguments, then evaluates every
 * command in a loop for a number of seconds with one policy (one
 * thread).  As a same-run baseline it times a regex-list gate of the
 * kind other runners use (POSIX extended regexes over the raw text) on
 * the same commands.  Prints commands per second for both, the ratio,
 * and the resident set size after the first pass and at the end, which
 * must stay flat (the per-command arena is reused).  It also times the
 * gate with this process's own context (working directory, $HOME,
 * $TMPDIR ...), the context `vigil check` uses, which bench/policy.sh
 * compares `vigil check --stdin` against.  Each rate is given per
 * second of wall time and per CPU second of the timing thread (on a
 * shared machine only the latter is repeatable); the exit status
 * judges the CPU rate.  With POLICY_BENCH_CONTEXT_ONLY set in the
 * environment only the last is timed and printed (bench/policy.sh pairs
 * such runs with runs of vigil check); with POLICY_BENCH_UNTIL_SIGNAL
 * as well it prints "ready" once loaded and times until SIGUSR1, so that
 * it runs exactly beside a vigil check on the same core.
 */
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/policy/policy.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Resident set size in KiB from /proc/self/statm. */
static long
rss_kib(void)
{
	long size, res;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Set by SIGUSR1 when POLICY_BENCH_UNTIL_SIGNAL is set: the timed loop
 * then runs until it comes rather than for a number of seconds. */
static volatile sig_atomic_t stop_now;
static int until_signal;

static void
on_usr1(int sig)
{
	(void)sig;
	stop_now = 1;
}

/* CPU seconds this thread has used (a shared machine's other load
 * does not count, unlike the wall clock). */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Evaluates every command in a loop for secs seconds; commands/s of
 * wall time, and per CPU second in *cpu_rate. */
static double
gate_rate(struct vg_policy *p, char **cmds, size_t ncmds,
    const struct vg_policy_ctx *ctx, double secs, double *cpu_rate)
{
	struct vg_verdict v;
	double t0, c0, t;
	long n = 0;
	size_t i;

	t0 = now();
	c0 = cpu_now();
	do {
		for (i = 0; i < ncmds; i++)
			vg_policy_eval(p, cmds[i], ctx, &v);
		n += (long)ncmds;
		t = now() - t0;
	} while (until_signal ? !stop_now : t < secs);
	*cpu_rate = n / (cpu_now() - c0);
	return n / t;
}

/* Times the gate for secs seconds with this process's own context (the
 * one vigil check uses) and prints its line; returns its CPU rate. */
static double
context_rate(struct vg_policy *p, char **cmds, size_t ncmds, double secs)
{
	struct vg_policy_env pe;
	double rate, cpu;

	vg_policy_env_init(&pe);
	rate = gate_rate(p, cmds, ncmds, &pe.ctx, secs, &cpu);
	vg_policy_env_release(&pe);
	printf("vigil gate, this process's context: %10.0f commands/s "
	    "(%.2f us each), %.0f per CPU second\n", rate, 1e6 / rate, cpu);
	return cpu;
}

int
main(int argc, char **argv)
{
	static const char *const pats[] = {
		"rm[[:space:]]+-[a-zA-Z]*[rR][a-zA-Z]*[[:space:]]+/",
		"mkfs", "dd[[:space:]].*of=/dev/", ":\\(\\)[[:space:]]*\\{",
		"chmod[[:space:]]+-R[[:space:]]+777", "curl.*\\|[[:space:]]*(ba)?sh",
		"wget.*\\|[[:space:]]*(ba)?sh", "/dev/tcp/", "nc[[:space:]].*-e",
		"sudo[[:space:]]", "shutdown|reboot|halt|poweroff",
		"kill[[:space:]]+-9[[:space:]]+-1", "base64[[:space:]]+-d",
		"eval[[:space:]]", "crontab[[:space:]]+-r", "> */etc/",
		"iptables[[:space:]]+-F", "/etc/shadow", "\\.ssh/id_",
		"scancel[[:space:]]+-u", "python[0-9.]*[[:space:]]+-c",
		"chown[[:space:]]+-R", "pkill|killall", "mount[[:space:]]",
		"history[[:space:]]+-c", "systemctl[[:space:]]+(stop|disable)",
		"xargs[[:space:]]+rm", "find.*-delete", "> */dev/sd",
		"socat", NULL };
	regex_t re[64];
	static char mode[] = "auto-deny";
	struct vg_policy_conf conf = { .mode = mode };
	struct vg_policy_ctx ctx = { .cwd = "/home/user/project",
	    .home = "/home/user" };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_policy *p;
	struct vg_verdict v;
	struct vg_err e;
	char **cmds = NULL, line[8192];
	size_t ncmds = 0, cap = 0, i;
	double secs = argc > 1 ? atof(argv[1]) : 3, t0, t, rate, brate;
	double crate = 0, cprate = 0;
	long n, rss0, rss1;
	int k, npat, only = getenv("POLICY_BENCH_CONTEXT_ONLY") != NULL;
	struct sigaction sa;

	for (k = 2; k < argc; k++) {
		FILE *f = fopen(argv[k], "r");

		if (f == NULL) {
			perror(argv[k]);
			return 1;
		}
		while (fgets(line, sizeof(line), f) != NULL) {
			char *c = strrchr(line, '\t'), *nl;

			if (line[0] == '#' || c == NULL)
				continue;
			if ((nl = strchr(c, '\n')) != NULL)
				*nl = '\0';
			if (ncmds == cap) {
				cap = cap ? cap * 2 : 1024;
				cmds = realloc(cmds, cap * sizeof(*cmds));
			}
			cmds[ncmds++] = strdup(c + 1);
		}
		fclose(f);
	}
	if (ncmds == 0) {
		fprintf(stderr, "usage: policy-bench SECONDS CORPUS...\n");
		return 2;
	}
	vg_err_init(&e);
	if (vg_policy_open_mem(&conf, "bench", NULL, 0, &p, &diag, &e) != 0) {
		fprintf(stderr, "policy: %s\n", e.msg);
		return 1;
	}
	for (i = 0; i < ncmds; i++)
		vg_policy_eval(p, cmds[i], &ctx, &v);
	if (only) {
		/* Paired with a vigil check run on the same core at the same
		 * time: until bench/policy.sh signals that it ended. */
		if (getenv("POLICY_BENCH_UNTIL_SIGNAL") != NULL) {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_usr1;
			sigaction(SIGUSR1, &sa, NULL);
			until_signal = 1;
			printf("ready\n");
			fflush(stdout);
		}
		cprate = context_rate(p, cmds, ncmds, secs);
		goto out;
	}
	rss0 = rss_kib();
	rate = gate_rate(p, cmds, ncmds, &ctx, secs, &crate);
	rss1 = rss_kib();
	for (npat = 0; pats[npat] != NULL; npat++)
		if (regcomp(&re[npat], pats[npat], REG_EXTENDED | REG_NOSUB))
			return 1;
	n = 0;
	t0 = now();
	do {
		for (i = 0; i < ncmds; i++)
			for (k = 0; k < npat; k++)
				if (regexec(&re[k], cmds[i], 0, NULL, 0) == 0)
					break;
		n += (long)ncmds;
		t = now() - t0;
	} while (until_signal ? !stop_now : t < secs);
	brate = n / t;
	printf("commands: %zu distinct, %.1f s per gate\n", ncmds, secs);
	printf("vigil gate:       %10.0f commands/s (%.2f us each), "
	    "%.0f per CPU second\n", rate, 1e6 / rate, crate);
	printf("regex-list gate:  %10.0f commands/s (baseline, %d patterns)\n",
	    brate, npat);
	printf("ratio vigil/baseline: %.2f\n", rate / brate);
	cprate = context_rate(p, cmds, ncmds, secs);
	printf("rss: %ld KiB after warm-up, %ld KiB at end (%+ld KiB)\n", rss0,
	    rss1, rss1 - rss0);
	for (k = 0; k < npat; k++)
		regfree(&re[k]);
out:
	for (i = 0; i < ncmds; i++)
		free(cmds[i]);
	free(cmds);
	vg_policy_free(p);
	vg_diag_release(&diag);
	return (only ? cprate : crate) >= 200000 ? 0 : 1;
}
