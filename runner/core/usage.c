/*
 * usage.c - resource accounting across the attempts of a run (usage.h):
 * efficiencies, totals, the end-of-run line and the right-size
 * suggestion.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"

#include "runner/core/usage.h"

void
vg_usage_sum_init(struct vg_usage_sum *s)
{
	*s = (struct vg_usage_sum){
		.peak = -1, .mem_asked = -1, .ok_peak = -1, .ok_mem_min = -1,
	};
}

/* CPUs an attempt was given for efficiency: 1 when nothing was asked. */
static int
cpus_of(const struct vg_usage *u)
{
	return (u->known & VG_USAGE_CPUS) && u->cpus > 0 ? u->cpus : 1;
}

/* CPU time over core-seconds, clamped to 1 within VG_USAGE_OVER; -1
 * when there is no such ratio to trust. */
static double
ratio(double cpu, double core_s)
{
	double r;

	if (!(core_s > 0) || cpu < 0)
		return -1;
	r = cpu / core_s;
	if (r > 1 + VG_USAGE_OVER)
		return -1;
	return r > 1 ? 1 : r;
}

/* True when an attempt's wall time is long enough to judge its CPUs. */
static int
timed(const struct vg_usage *u, double wall)
{
	return (u->known & VG_USAGE_CPU) && wall >= VG_USAGE_MIN_WALL;
}

double
vg_usage_cpu_eff(const struct vg_usage *u, double wall)
{
	if (!timed(u, wall))
		return -1;
	return ratio(u->cpu_user + u->cpu_sys, wall * cpus_of(u));
}

double
vg_usage_mem_eff(const struct vg_usage *u)
{
	if (!(u->known & VG_USAGE_RSS) || !(u->known & VG_USAGE_MEM) ||
	    u->mem_limit <= 0)
		return -1;
	return (double)u->max_rss / (double)u->mem_limit;
}

void
vg_usage_sum_add(struct vg_usage_sum *s, const struct vg_usage *u,
    enum vg_state st, double wall)
{
	int ok = st == VG_ST_SUCCEEDED, cpus;
	double cpu = u->cpu_user + u->cpu_sys;
	long long mem;

	s->n++;
	if (u->known & VG_USAGE_CPUS && u->cpus > s->cpus_max)
		s->cpus_max = u->cpus;
	if (u->known & VG_USAGE_MEM && u->mem_limit > s->mem_asked)
		s->mem_asked = u->mem_limit;
	if (u->known & VG_USAGE_RSS && u->max_rss > s->peak)
		s->peak = u->max_rss;
	if ((u->known & VG_USAGE_CPU) && wall > 0) {
		s->ncpu++;
		s->cpu += cpu;
		s->core_s += wall * cpus_of(u);
	}
	if (vg_usage_cpu_eff(u, wall) >= 0) {
		s->neff++;
		s->eff_cpu += cpu;
		s->eff_core_s += wall * cpus_of(u);
	}
	if (!ok)
		return;
	s->nok++;
	if (timed(u, wall)) {
		s->ok_timed++;
		if (cpu / wall > s->ok_cores_max)
			s->ok_cores_max = cpu / wall;
	}
	/* The smallest given to any succeeded attempt (0: one was given
	 * nothing said), so a suggestion fits every one of them. */
	cpus = (u->known & VG_USAGE_CPUS) ? u->cpus : 0;
	mem = (u->known & VG_USAGE_MEM) ? u->mem_limit : 0;
	if (s->nok == 1 || cpus < s->ok_cpus_min)
		s->ok_cpus_min = cpus;
	if (s->nok == 1 || mem < s->ok_mem_min)
		s->ok_mem_min = mem;
	if (u->known & VG_USAGE_RSS && u->max_rss > s->ok_peak)
		s->ok_peak = u->max_rss;
}

double
vg_usage_sum_cpu_eff(const struct vg_usage_sum *s)
{
	return s->neff > 0 ? ratio(s->eff_cpu, s->eff_core_s) : -1;
}

void
vg_usage_fmt_bytes(struct vg_buf *out, long long bytes)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		vg_buf_printf(out, "%lldB", bytes < 0 ? 0 : bytes);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v >= 10 || v == floor(v))
		vg_buf_printf(out, "%.0f%c", v, units[u]);
	else
		vg_buf_printf(out, "%.1f%c", v, units[u]);
}

void
vg_usage_line(const struct vg_usage_sum *s, struct vg_buf *out)
{
	double eff = vg_usage_sum_cpu_eff(s);
	int any = 0;

	if (eff >= 0) {
		vg_buf_printf(out, "cpu %.0f%% of requested", eff * 100);
		any = 1;
	}
	if (s->peak >= 0) {
		vg_buf_printf(out, "%speak memory ", any ? ", " : "");
		vg_usage_fmt_bytes(out, s->peak);
		if (s->mem_asked > 0) {
			vg_buf_adds(out, " of ");
			vg_usage_fmt_bytes(out, s->mem_asked);
			vg_buf_printf(out, " asked (%.0f%%)", 100.0 *
			    (double)s->peak / (double)s->mem_asked);
		}
	}
}

/* Rounds a memory size up to a value a manifest says plainly: 64M steps
 * below 1G, 256M below 16G, whole G above. */
static long long
round_mem(double bytes)
{
	double step = bytes < 1073741824.0 ? 67108864.0 :
	    bytes < 17179869184.0 ? 268435456.0 : 1073741824.0;

	return (long long)(ceil(bytes / step) * step);
}

void
vg_usage_suggest(const struct vg_usage_sum *s, struct vg_buf *out)
{
	long long mem;
	int cpus, any = 0;

	if (s->nok == 0)
		return;
	mem = round_mem((double)s->ok_peak * VG_USAGE_HEADROOM);
	if (s->ok_peak > 0 && s->ok_mem_min > 0 &&
	    (double)s->ok_peak < VG_USAGE_WASTE * (double)s->ok_mem_min &&
	    (double)mem <= VG_USAGE_MATERIAL * (double)s->ok_mem_min) {
		vg_buf_printf(out, "resources.memory: %lldM (peak ",
		    mem >> 20);
		vg_usage_fmt_bytes(out, s->ok_peak);
		vg_buf_adds(out, " of ");
		vg_usage_fmt_bytes(out, s->ok_mem_min);
		vg_buf_adds(out, " asked)");
		any = 1;
	}
	cpus = (int)ceil(s->ok_cores_max * VG_USAGE_HEADROOM);
	if (cpus < 1)
		cpus = 1;
	if (s->ok_cpus_min > 1 && s->ok_timed > 0 &&
	    s->ok_cores_max < VG_USAGE_WASTE * s->ok_cpus_min &&
	    cpus < s->ok_cpus_min &&
	    cpus <= VG_USAGE_MATERIAL * s->ok_cpus_min) {
		vg_buf_printf(out, "%sresources.cpus: %d (at most %.2f cores "
		    "busy of %d asked)", any ? "; " : "", cpus,
		    s->ok_cores_max, s->ok_cpus_min);
	}
}

/* Keeps the latest attempt of each task (arg: struct last_ctx). */
struct last_ctx {
	struct vg_usage_last	*v;
	size_t			 n;
};

static int
last_cb(void *arg, const struct vg_attempt_rec *a)
{
	struct last_ctx *c = arg;
	struct vg_usage_last *l;

	if (a->index < 0 || (size_t)a->index >= c->n)
		return 0;
	l = &c->v[a->index];
	if (a->attempt < l->attempt)
		return 0;
	l->attempt = a->attempt;
	l->state = a->state;
	l->u = a->usage;
	l->wall = vg_state_terminal(a->state) && a->started > 0 &&
	    a->ended > a->started ? a->ended - a->started : 0;
	return 0;
}

int
vg_usage_load_last(struct vg_store *st, const char *run_id, size_t ntasks,
    struct vg_usage_last **out, struct vg_err *e)
{
	return vg_usage_load_last_of(st, run_id, ntasks, -1, out, e);
}

int
vg_usage_load_last_of(struct vg_store *st, const char *run_id,
    size_t ntasks, int task, struct vg_usage_last **out, struct vg_err *e)
{
	struct vg_usage_last *v = vg_xcalloc(ntasks + 1, sizeof(*v));
	int rc;

	if ((rc = vg_usage_load_last_into(st, run_id, v, ntasks, task,
	    e)) != 0) {
		free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int
vg_usage_load_last_into(struct vg_store *st, const char *run_id,
    struct vg_usage_last *v, size_t ntasks, int task, struct vg_err *e)
{
	struct last_ctx c = { v, ntasks };

	return vg_store_attempt_each(st, run_id, task, last_cb, &c, e);
}

void
vg_usage_sum_last(struct vg_usage_sum *s, const struct vg_usage_last *v,
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].attempt > 0 && vg_state_terminal(v[i].state))
			vg_usage_sum_add(s, &v[i].u, v[i].state, v[i].wall);
}

/* Writes v, or null when v < 0. */
static void
json_opt(struct vg_json_writer *w, const char *key, double v)
{
	vg_json_key(w, key);
	if (v < 0)
		vg_json_null(w);
	else
		vg_json_num(w, v);
}

void
vg_usage_json(struct vg_json_writer *w, const struct vg_usage *u,
    double wall)
{
	int cpu = (u->known & VG_USAGE_CPU) != 0;

	vg_json_obj_begin(w);
	json_opt(w, "wall", wall > 0 ? wall : -1);
	json_opt(w, "cpu", cpu ? u->cpu_user + u->cpu_sys : -1);
	json_opt(w, "cpu_user", cpu ? u->cpu_user : -1);
	json_opt(w, "cpu_sys", cpu ? u->cpu_sys : -1);
	json_opt(w, "max_rss", u->known & VG_USAGE_RSS ?
	    (double)u->max_rss : -1);
	json_opt(w, "cpus", u->known & VG_USAGE_CPUS ? u->cpus : -1);
	json_opt(w, "gpus", u->known & VG_USAGE_GPUS ? u->gpus : -1);
	json_opt(w, "mem_limit", u->known & VG_USAGE_MEM ?
	    (double)u->mem_limit : -1);
	json_opt(w, "cpu_eff", vg_usage_cpu_eff(u, wall));
	json_opt(w, "mem_eff", vg_usage_mem_eff(u));
	vg_json_obj_end(w);
}

void
vg_usage_sum_json(struct vg_json_writer *w, const struct vg_usage_sum *s)
{
	struct vg_buf b = VG_BUF_INIT;

	vg_json_obj_begin(w);
	vg_json_key(w, "attempts");
	vg_json_int(w, (long long)s->n);
	json_opt(w, "cpu", s->ncpu > 0 ? s->cpu : -1);
	json_opt(w, "core_seconds", s->ncpu > 0 ? s->core_s : -1);
	json_opt(w, "cpu_eff", vg_usage_sum_cpu_eff(s));
	json_opt(w, "max_rss", (double)s->peak);
	json_opt(w, "mem_asked", (double)s->mem_asked);
	json_opt(w, "mem_eff", s->peak >= 0 && s->mem_asked > 0 ?
	    (double)s->peak / (double)s->mem_asked : -1);
	vg_usage_suggest(s, &b);
	vg_json_key(w, "suggestion");
	vg_json_str(w, b.len > 0 ? vg_buf_str(&b) : NULL);
	vg_json_obj_end(w);
	vg_buf_release(&b);
}

int
vg_usage_off(void)
{
	static int off = -1;
	const char *v;

	if (off < 0) {
		v = getenv("VIGIL_NO_ACCOUNTING");
		off = v != NULL && strcmp(v, "1") == 0;
	}
	return off;
}
