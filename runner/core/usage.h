/*
 * usage.h - resource accounting across the attempts of a run: CPU and
 * memory efficiency of one attempt, totals of a run, the end-of-run line
 * ("cpu 37% of requested, peak memory 0.9G of 8G asked (11%)") and the
 * right-size suggestion for a sweep that asked for far more than it
 * used.  Pure arithmetic and formatting; used by the driver, `vigil
 * status` and `vigil report`.  The rules are in docs/report.md.
 */
#ifndef VG_USAGE_H
#define VG_USAGE_H

#include <stddef.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/state.h"
#include "runner/core/store.h"

/* Below this share of what was asked, the suggestion proposes less. */
#define VG_USAGE_WASTE		0.5
/* Headroom added to the largest use seen when suggesting a size. */
#define VG_USAGE_HEADROOM	1.25
/* A suggestion is made only when it is at most this share of what was
 * asked (and, for CPUs, at least one fewer): asking 4 and being told 4,
 * or 64M and being told 64M, is no advice. */
#define VG_USAGE_MATERIAL	0.75
/* Shortest wall time (seconds) whose CPU efficiency means something:
 * below it the CPU time and the wall clock are read at different
 * moments and with different granularity (clock ticks against
 * microseconds), so a task cancelled as it started shows 220201%.
 * Such attempts have no efficiency ("-", JSON null). */
#define VG_USAGE_MIN_WALL	1.0
/* CPU time above wall x CPUs given by more than this share is not
 * sampling noise but CPUs nothing held the task to: no efficiency is
 * given then; up to it, the efficiency is shown as 100%. */
#define VG_USAGE_OVER		0.10

/* Totals over the ended attempts of a run. */
struct vg_usage_sum {
	size_t		n;		/* attempts added */
	size_t		ncpu;		/* of those, with CPU time known */
	double		cpu;		/* CPU seconds (user + system) */
	double		core_s;		/* wall x CPUs given of the same */
	size_t		neff;		/* of those, with an efficiency */
	double		eff_cpu;	/* their CPU seconds */
	double		eff_core_s;	/* their wall x CPUs given */
	int		cpus_max;	/* largest CPUs given (0: none said) */
	size_t		nok;		/* succeeded attempts (suggestion) */
	size_t		ok_timed;	/* of those, VG_USAGE_MIN_WALL long */
	double		ok_cores_max;	/* their largest CPU / wall */
	int		ok_cpus_min;	/* smallest CPUs given to them */
	long long	peak;		/* largest peak RSS; -1 unknown */
	long long	mem_asked;	/* largest memory given; -1 none */
	long long	ok_peak;	/* largest peak of succeeded ones */
	long long	ok_mem_min;	/* smallest memory given to them */
};

/* Starts empty totals. */
void	vg_usage_sum_init(struct vg_usage_sum *s);

/* Adds one ended attempt of state st that ran wall seconds. */
void	vg_usage_sum_add(struct vg_usage_sum *s, const struct vg_usage *u,
	    enum vg_state st, double wall);

/*
 * CPU efficiency of one attempt: CPU time / (wall x CPUs given), CPUs
 * given being 1 when nothing was asked, at most 1; -1 when it cannot be
 * computed: CPU time unknown, wall below VG_USAGE_MIN_WALL, or CPU time
 * above wall x CPUs by more than VG_USAGE_OVER.
 */
double	vg_usage_cpu_eff(const struct vg_usage *u, double wall);
/* Memory efficiency: peak RSS / memory given; -1 when either unknown. */
double	vg_usage_mem_eff(const struct vg_usage *u);

/* The run's CPU efficiency (the ratio of the sums over the attempts
 * that have one, at most 1); -1 when none has. */
double	vg_usage_sum_cpu_eff(const struct vg_usage_sum *s);

/* Appends bytes as "912M", "8G", "1.5G", "640K". */
void	vg_usage_fmt_bytes(struct vg_buf *out, long long bytes);

/*
 * Appends the efficiency line ("cpu 37% of requested, peak memory 0.9G
 * of 8G asked (11%)"), or nothing when no attempt reported usage.
 */
void	vg_usage_line(const struct vg_usage_sum *s, struct vg_buf *out);

/*
 * Appends the right-size suggestion ("resources.memory: 1280M (...)")
 * when the succeeded attempts used less than VG_USAGE_WASTE of the
 * memory or CPUs every one of them was given and the size suggested
 * differs materially from the request (VG_USAGE_MATERIAL); nothing
 * otherwise.  CPUs are judged only from attempts of VG_USAGE_MIN_WALL
 * or longer.
 */
void	vg_usage_suggest(const struct vg_usage_sum *s, struct vg_buf *out);

/* The latest attempt of one task, as vg_usage_load_last gives it. */
struct vg_usage_last {
	int		attempt;	/* 0: none */
	enum vg_state	state;
	double		wall;		/* seconds; 0 while not ended */
	struct vg_usage	u;
};

/*
 * Loads the latest attempt of each of the ntasks tasks of run_id (one
 * query) into *out (ntasks entries, caller frees with free(3)).
 */
int	vg_usage_load_last(struct vg_store *st, const char *run_id,
	    size_t ntasks, struct vg_usage_last **out, struct vg_err *e);
/* The same for one task (task >= 0: only its entry is filled), by the
 * run's key and the task's, without reading the other tasks' attempts. */
int	vg_usage_load_last_of(struct vg_store *st, const char *run_id,
	    size_t ntasks, int task, struct vg_usage_last **out,
	    struct vg_err *e);
/* The same into v (ntasks entries, zeroed by the caller), adding task's
 * entry (task >= 0) or every task's (-1): for a few tasks of a large
 * run, each read by key. */
int	vg_usage_load_last_into(struct vg_store *st, const char *run_id,
	    struct vg_usage_last *v, size_t ntasks, int task,
	    struct vg_err *e);

/* Adds the ended ones of n latest attempts (vg_usage_load_last) to s. */
void	vg_usage_sum_last(struct vg_usage_sum *s,
	    const struct vg_usage_last *v, size_t n);

/*
 * Writes the usage of one attempt as a JSON object (docs/cli.md):
 * wall, cpu, cpu_user, cpu_sys in seconds, max_rss and mem_limit in
 * bytes, cpus, gpus, cpu_eff and mem_eff as fractions; null when
 * unknown.
 */
void	vg_usage_json(struct vg_json_writer *w, const struct vg_usage *u,
	    double wall);

/* Writes the totals of s as a JSON object (docs/cli.md). */
void	vg_usage_sum_json(struct vg_json_writer *w,
	    const struct vg_usage_sum *s);

/*
 * True when VIGIL_NO_ACCOUNTING=1 is in the environment: the driver then
 * records no usage and prints no efficiency line.  A switch for
 * bench/local-overhead.sh --accounting, which measures what accounting
 * costs in one binary; not a user setting (undocumented in the CLI).
 */
int	vg_usage_off(void);

#endif
