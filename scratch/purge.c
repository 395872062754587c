/*
 * purge.c - site purge rules: from a preset or explicit settings to the
 * moment a file becomes eligible for deletion.
 *
 * The presets encode each centre's published rule (docs/sif-cache.md).
 * Where a rule names two clocks that must both be old ("not accessed or
 * modified"), the file is eligible when the later of them is older than
 * the age; where a rule is vague about its clock ("older than 30 days"),
 * the preset assumes the earliest clock, so vigil refreshes too early
 * rather than too late.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scratch/purge.h"
#include "runner/manifest/schema-table.h"

#define DAY	86400ULL

static const struct vg_purge_policy presets[] = {
	/* NERSC Perlmutter $PSCRATCH: not accessed within 8 weeks */
	{ .name = "nersc", .age = 56 * DAY, .clocks = VG_PURGE_ATIME },
	/* OLCF: 90 days after last access */
	{ .name = "olcf", .age = 90 * DAY, .clocks = VG_PURGE_ATIME },
	/* JSC: 90 days by modification and access date */
	{ .name = "jsc", .age = 90 * DAY,
	  .clocks = VG_PURGE_ATIME | VG_PURGE_MTIME },
	/* CSCS: older than 30 days (clock unstated: the earlier one) */
	{ .name = "cscs", .age = 30 * DAY,
	  .clocks = VG_PURGE_ATIME | VG_PURGE_MTIME, .any = 1 },
	/* Alliance Canada: ctime and atime both older than 60 days */
	{ .name = "alliance", .age = 60 * DAY,
	  .clocks = VG_PURGE_ATIME | VG_PURGE_CTIME },
	/* Pawsey: 21 days by atime */
	{ .name = "pawsey", .age = 21 * DAY, .clocks = VG_PURGE_ATIME },
	/* Purdue RCAC: not accessed or modified for 60 days */
	{ .name = "purdue", .age = 60 * DAY,
	  .clocks = VG_PURGE_ATIME | VG_PURGE_MTIME },
	{ .name = "none", .age = 0, .clocks = 0 },
};

#define NPRESETS (sizeof(presets) / sizeof(presets[0]))
#define PRESET_NAMES \
	"nersc, olcf, jsc, cscs, alliance, pawsey, purdue, none"

int
vg_purge_preset(const char *name, struct vg_purge_policy *p,
    struct vg_err *e)
{
	size_t i;

	for (i = 0; i < NPRESETS; i++) {
		if (strcmp(presets[i].name, name) == 0) {
			*p = presets[i];
			return 0;
		}
	}
	return vg_err_set(e, VG_EINVAL, "unknown purge preset '%s' (valid: "
	    PRESET_NAMES ")", name);
}

int
vg_purge_from_conf(const struct vg_purge_conf *conf,
    struct vg_purge_policy *p, struct vg_err *e)
{
	int rc;

	*p = presets[NPRESETS - 1];	/* none */
	if (conf == NULL)
		return 0;
	if (conf->preset != NULL && conf->preset[0] != '\0' &&
	    (rc = vg_purge_preset(conf->preset, p, e)) != 0)
		return rc;
	if (conf->age > 0) {
		if (p->clocks == 0)
			p->clocks = VG_PURGE_ATIME;
		p->age = conf->age;
		p->name = "custom";
	}
	if (conf->clock != NULL && conf->clock[0] != '\0') {
		if (p->age == 0)
			return vg_err_set(e, VG_EINVAL, "purge.clock '%s' "
			    "needs purge.age or a purge.preset other than "
			    "none",
			    conf->clock);
		if (strcmp(conf->clock, "atime") == 0)
			p->clocks = VG_PURGE_ATIME, p->any = 0;
		else if (strcmp(conf->clock, "mtime") == 0)
			p->clocks = VG_PURGE_MTIME, p->any = 0;
		else if (strcmp(conf->clock, "ctime") == 0)
			p->clocks = VG_PURGE_CTIME, p->any = 0;
		else if (strcmp(conf->clock, "any") == 0 ||
		    strcmp(conf->clock, "all") == 0) {
			p->clocks = VG_PURGE_ATIME | VG_PURGE_MTIME |
			    VG_PURGE_CTIME;
			p->any = conf->clock[1] == 'n';
		} else
			return vg_err_set(e, VG_EINVAL, "unknown purge.clock "
			    "'%s' (valid: atime, mtime, ctime, any, all)",
			    conf->clock);
		p->name = "custom";
	}
	p->margin = conf->margin;
	return 0;
}

int
vg_purge_active(const struct vg_purge_policy *p)
{
	return p != NULL && p->age > 0 && p->clocks != 0;
}

/* A struct timespec as fractional seconds. */
static double
ts(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

double
vg_purge_eligible_at(const struct vg_purge_policy *p, const struct stat *st)
{
	double t[3], v = NAN;
	unsigned bit[3] = { VG_PURGE_ATIME, VG_PURGE_MTIME, VG_PURGE_CTIME };
	int i;

	if (!vg_purge_active(p))
		return INFINITY;
	t[0] = ts(&st->st_atim);
	t[1] = ts(&st->st_mtim);
	t[2] = ts(&st->st_ctim);
	for (i = 0; i < 3; i++) {
		if (!(p->clocks & bit[i]))
			continue;
		if (isnan(v) || (p->any ? t[i] < v : t[i] > v))
			v = t[i];
	}
	return v + (double)p->age;
}

int
vg_purge_expiring(const struct vg_purge_policy *p, const struct stat *st,
    double now, double needed_until, double margin)
{
	double at = vg_purge_eligible_at(p, st);

	if (isinf(at))
		return 0;
	if (needed_until < now)
		needed_until = now;
	if (margin <= 0)
		margin = p->margin > 0 ? (double)p->margin : (double)DAY;
	return at <= needed_until + margin;
}

void
vg_purge_describe(const struct vg_purge_policy *p, char *buf, size_t n)
{
	static const char *names[3] = { "atime", "mtime", "ctime" };
	size_t len;
	int i, first = 1;

	if (!vg_purge_active(p)) {
		snprintf(buf, n, "%s: never", p->name);
		return;
	}
	if (p->age % DAY == 0)
		snprintf(buf, n, "%s: %llud by ", p->name,
		    (unsigned long long)(p->age / DAY));
	else
		snprintf(buf, n, "%s: %llus by ", p->name,
		    (unsigned long long)p->age);
	for (i = 0; i < 3; i++) {
		if (!(p->clocks & (1u << i)))
			continue;
		len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s", first ? "" :
		    p->any ? " or " : " and ", names[i]);
		first = 0;
	}
}

/* ---- the purge rows of a cache section ---- */

static const char *const clock_names[] = { "atime", "mtime", "ctime", "any",
	"all", NULL };

const struct vg_section vg_purge_schema = {
	.name = "purge",
	.fields = (const struct vg_field[]){
		STR(vg_purge_conf, "preset", preset, "site purge preset"),
		DURS(vg_purge_conf, "age", age, 1, 100 * YEAR,
		    "files older than this are purged"),
		CHOICE(vg_purge_conf, "clock", clock, NULL, clock_names,
		    "which timestamp the purge looks at"),
		DURS(vg_purge_conf, "margin", margin, 1, 100 * YEAR,
		    "safety margin"),
		{ .key = NULL },
	},
};
