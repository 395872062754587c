/*
 * purge.h - site purge policies for scratch filesystems: when does a file
 * become eligible for deletion by the centre's purge script.
 *
 * A policy is an age and a set of clocks (atime, mtime, ctime) that must
 * all (or, for "any", at least one) be older than the age.  Presets follow
 * the centres' published rules (docs/sif-cache.md lists them):
 *
 *   nersc     8 weeks, atime             olcf    90 days, atime
 *   jsc       90 days, atime and mtime   cscs    30 days, atime or mtime
 *   alliance  60 days, atime and ctime   pawsey  21 days, atime
 *   purdue    60 days, atime and mtime   none    never
 *
 * vigil uses this to replace cached images before a purge can remove them
 * from under a running task; it never changes a file's times.
 */
#ifndef VG_PURGE_H
#define VG_PURGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/err.h"
#include "runner/manifest/manifest.h"
#include "runner/manifest/schema.h"

enum vg_purge_clock {
	VG_PURGE_ATIME = 1 << 0,
	VG_PURGE_MTIME = 1 << 1,
	VG_PURGE_CTIME = 1 << 2,
};

struct vg_purge_policy {
	const char	*name;		/* preset or "custom"; static */
	uint64_t	 age;		/* seconds; 0 = never */
	unsigned	 clocks;	/* enum vg_purge_clock bits */
	int		 any;		/* 1: one old clock suffices */
	uint64_t	 margin;	/* seconds; 0 = caller's default */
};

/*
 * Fills p from a preset name ("nersc", ..., "none").  VG_EINVAL naming
 * the valid presets otherwise.
 */
int	vg_purge_preset(const char *name, struct vg_purge_policy *p,
	    struct vg_err *e);

struct vg_purge_conf {
	char		*preset;	/* nersc|olcf|...|none */
	uint64_t	 age;		/* seconds */
	char		*clock;		/* atime|mtime|ctime|any|all */
	uint64_t	 margin;	/* seconds; 0 = time limit + 1 day */
};

/* Its schema rows (the cache section nests them as cache.purge). */
extern const struct vg_section vg_purge_schema;

/*
 * Builds the policy from the configuration: the preset, then age, clock
 * ("atime", "mtime", "ctime", "any" = any of the three, "all" = all three)
 * and margin override it.  A conf of NULL or all unset gives "none".  An
 * age without preset needs no clock (default atime).  VG_EINVAL naming
 * the field and what would be valid.
 */
int	vg_purge_from_conf(const struct vg_purge_conf *conf,
	    struct vg_purge_policy *p, struct vg_err *e);

/* Whether the policy ever purges anything. */
int	vg_purge_active(const struct vg_purge_policy *p);

/*
 * The wall-clock moment (seconds) at which a file with these times becomes
 * eligible for purge; INFINITY when the policy never purges.
 */
double	vg_purge_eligible_at(const struct vg_purge_policy *p,
	    const struct stat *st);

/*
 * Whether a file is expiring: eligible for purge before needed_until
 * (wall clock; values below now count as now) plus margin (seconds; 0 =
 * the policy's margin, else 1 day).
 */
int	vg_purge_expiring(const struct vg_purge_policy *p,
	    const struct stat *st, double now, double needed_until,
	    double margin);

/* Describes a policy ("nersc: 56d by atime") into buf of size n. */
void	vg_purge_describe(const struct vg_purge_policy *p, char *buf,
	    size_t n);

#endif
