/*
 * cmd-cache.c - vigil cache: list, pull, verify, gc and rm for the SIF
 * image cache (sif-cache/cache.h).
 *
 * Settings come from the `cache:` and `scratch:` sections of the site and
 * user configuration (as for a run, so both find the same cache), each
 * overridden by its option: the directory is --dir, else cache.dir, else
 * $VIGIL_SIF_CACHE, else <scratch base>/vigil-sif-cache; purge rule,
 * quota and lock times likewise, so that `vigil cache gc` on a login node
 * applies the site's rules without repeating them.  The puller is
 * --puller, else singularity.binary or $VIGIL_APPTAINER, else apptainer
 * or singularity in $PATH.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "runner/cli/cmd-config.h"
#include "runner/cli/cmd.h"
#include "common/json.h"
#include "runner/manifest/manifest.h"
#include "common/path.h"
#include "backends/singularity.h"
#include "scratch/purge.h"
#include "sif-cache/cache.h"

static const struct vg_opt cache_opts[] = {
	{ .name = "dir", .has_arg = 1, .arg = "DIR",
	  .help = "cache directory (default cache.dir, $VIGIL_SIF_CACHE, "
	  "<scratch base>/vigil-sif-cache)" },
	{ .name = "purge", .has_arg = 1, .arg = "PRESET",
	  .help = "site purge rule: nersc, olcf, jsc, cscs, alliance, "
	  "pawsey, purdue, none",
	  .choices = "nersc olcf jsc cscs alliance pawsey purdue none" },
	{ .name = "purge-age", .has_arg = 1, .arg = "AGE",
	  .help = "purge age (8w, 90d, 36h, seconds)" },
	{ .name = "purge-clock", .has_arg = 1, .arg = "CLOCK",
	  .help = "atime, mtime, ctime, any or all",
	  .choices = "atime mtime ctime any all" },
	{ .name = "margin", .has_arg = 1, .arg = "AGE",
	  .help = "safety margin before the purge (default 1d)" },
	{ .name = "quota", .has_arg = 1, .arg = "BYTES",
	  .help = "gc: keep at most this many bytes (10G, 512M)" },
	{ .name = "max-entries", .has_arg = 1, .arg = "N",
	  .help = "gc: keep at most N images" },
	{ .name = "lock-wait", .has_arg = 1, .arg = "AGE",
	  .help = "pull: wait this long for another pull (default 1h)" },
	{ .name = "lock-lease", .has_arg = 1, .arg = "AGE",
	  .help = "pull: lock lease (default 60s)" },
	{ .name = "puller", .has_arg = 1, .arg = "PROGRAM",
	  .help = "pull: apptainer or singularity binary" },
	VG_OPT_JSON("list: JSON output"),
	VG_OPT_DRY_RUN("gc: report without removing"),
	{ .name = "force", .help = "pull: pull again; rm: even if pinned" },
	{ .name = "refresh",
	  .help = "verify: pull missing and expiring images again" },
	{ NULL },
};

/* Human size: 512, 36K, 1.2G. */
static void
human(uint64_t n, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	double v = (double)n;
	int i = -1;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)n);
	else
		snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[i]);
}

/* A duration from now: "in 12d", "in 5h", "due". */
static void
eta(double at, double now, char *buf, size_t len)
{
	double d = at - now;

	if (isinf(at))
		snprintf(buf, len, "never");
	else if (d <= 0)
		snprintf(buf, len, "due");
	else if (d >= 86400)
		snprintf(buf, len, "in %.0fd", floor(d / 86400));
	else if (d >= 3600)
		snprintf(buf, len, "in %.0fh", floor(d / 3600));
	else
		snprintf(buf, len, "in %.0fm", ceil(d / 60));
}

/* UTC date and time, or "never" for 0. */
static void
when(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (t <= 0) {
		snprintf(buf, len, "never");
		return;
	}
	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%MZ", &tm);
}

/*
 * Overrides the configured cache settings in conf with the options
 * given; prints usage errors.  Strings stay borrowed from a and the
 * configuration.
 */
static int
conf_from_args(struct vg_args *a, struct vg_cache_conf *conf)
{
	const char *v;
	double d;
	size_t i;
	long n;

	if ((v = vg_args_get(a, "dir")) != NULL)
		conf->dir = (char *)(uintptr_t)v;
	if ((v = vg_args_get(a, "purge")) != NULL)
		conf->purge.preset = (char *)(uintptr_t)v;
	if ((v = vg_args_get(a, "purge-clock")) != NULL)
		conf->purge.clock = (char *)(uintptr_t)v;
	if ((v = vg_args_get(a, "purge-age")) != NULL) {
		if (vg_parse_duration(v, &d) != 0 || d < 1)
			return vg_cmd_usage_error(a, "--purge-age takes an age "
			    "such as 8w, 90d or 36h, not '%s'", v);
		conf->purge.age = (uint64_t)d;
	}
	if ((v = vg_args_get(a, "margin")) != NULL) {
		if (vg_parse_duration(v, &d) != 0 || d < 0)
			return vg_cmd_usage_error(a, "--margin takes an age "
			    "such as 1d or 36h, not '%s'", v);
		conf->purge.margin = (uint64_t)d;
	}
	if ((v = vg_args_get(a, "quota")) != NULL &&
	    vg_parse_bytes(v, &conf->quota_bytes) != 0)
		return vg_cmd_usage_error(a, "--quota takes a size such as "
		    "10G or 512M, not '%s'", v);
	if (vg_args_has(a, "max-entries")) {
		if (vg_args_int(a, "max-entries", 0, 100000000, 0, &n) != 0)
			return VG_EXIT_USAGE;
		conf->quota_entries = (uint64_t)n;
	}
	for (i = 0; i < 2; i++) {
		if ((v = vg_args_get(a, i == 0 ? "lock-wait" :
		    "lock-lease")) == NULL)
			continue;
		if (vg_parse_duration(v, &d) != 0 || d < 0)
			return vg_cmd_usage_error(a, "--%s takes an age "
			    "such as 10m or 60s, not '%s'",
			    i == 0 ? "lock-wait" : "lock-lease", v);
		if (i == 0)
			conf->lock_wait = d;
		else
			conf->lock_lease = d;
	}
	return 0;
}

/* Lists the cache as a table or JSON. */
static int
do_list(struct vg_cache *c, int json)
{
	struct vg_cache_list l;
	struct vg_json_writer w;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_err e;
	char sz[16], used[32], purge[16], refs[256];
	double now = vg_now();
	size_t i, j;

	vg_err_init(&e);
	if (vg_cache_list(c, &l, &e) != 0)
		return vg_cmd_fail(vg_cmd_exit_for_rc(e.rc), "cache list: %s",
		    e.msg);
	if (json) {
		vg_json_writer_init(&w, &out);
		vg_json_arr_begin(&w);
		for (i = 0; i < l.n; i++) {
			const struct vg_cache_entry *x = &l.v[i];

			vg_json_obj_begin(&w);
			vg_json_key(&w, "digest");
			vg_json_str(&w, x->digest);
			vg_json_key(&w, "path");
			vg_json_str(&w, x->path);
			vg_json_key(&w, "present");
			vg_json_bool(&w, x->present);
			vg_json_key(&w, "size");
			vg_json_int(&w, (long long)x->size);
			vg_json_key(&w, "pulled");
			vg_json_num(&w, x->pulled);
			vg_json_key(&w, "last_use");
			vg_json_num(&w, x->last_use);
			vg_json_key(&w, "atime");
			vg_json_num(&w, x->atime);
			vg_json_key(&w, "mtime");
			vg_json_num(&w, x->mtime);
			vg_json_key(&w, "ctime");
			vg_json_num(&w, x->ctime);
			vg_json_key(&w, "purge_at");
			if (isinf(x->purge_at))
				vg_json_null(&w);
			else
				vg_json_num(&w, x->purge_at);
			vg_json_key(&w, "pins");
			vg_json_int(&w, x->npins);
			vg_json_key(&w, "refs");
			vg_json_arr_begin(&w);
			for (j = 0; j < x->refs.n; j++)
				vg_json_str(&w, x->refs.v[j]);
			vg_json_arr_end(&w);
			vg_json_obj_end(&w);
		}
		vg_json_arr_end(&w);
		printf("%s\n", vg_buf_str(&out));
	} else {
		printf("%-12s  %6s  %-17s  %-9s  %4s  %s\n", "DIGEST", "SIZE",
		    "LAST-USE", "PURGE", "PINS", "REFS");
		for (i = 0; i < l.n; i++) {
			const struct vg_cache_entry *x = &l.v[i];

			human(x->size, sz, sizeof(sz));
			when(x->last_use, used, sizeof(used));
			if (x->present)
				eta(x->purge_at, now, purge, sizeof(purge));
			else
				snprintf(purge, sizeof(purge), "missing");
			refs[0] = '\0';
			for (j = 0; j < x->refs.n; j++)
				snprintf(refs + strlen(refs), sizeof(refs) -
				    strlen(refs), "%s%s", j > 0 ? "," : "",
				    x->refs.v[j]);
			printf("%.12s  %6s  %-17s  %-9s  %4d  %s\n", x->digest,
			    sz, used, purge, x->npins, refs[0] != '\0' ? refs :
			    "-");
		}
	}
	vg_buf_release(&out);
	vg_cache_list_release(&l);
	return VG_EXIT_OK;
}

static const char *const problem_names[] = {
	[VG_CACHE_OK] = "ok",
	[VG_CACHE_MISSING] = "missing",
	[VG_CACHE_CORRUPT] = "corrupt",
	[VG_CACHE_UNRECORDED] = "unrecorded",
	[VG_CACHE_EXPIRING] = "expiring",
	[VG_CACHE_TAMPERED] = "tampered",
	[VG_CACHE_UNTRUSTED] = "untrusted",
};

/* Prints one verify finding. */
static void
report(void *arg, const struct vg_cache_entry *ent,
    enum vg_cache_problem what, const char *detail)
{
	(void)arg;
	printf("%-10s  %.12s  %s\n", problem_names[what], ent->digest, detail);
}

static const char *const why_names[] = {
	[VG_EVICT_KEEP] = "keep",
	[VG_EVICT_PURGE] = "purge",
	[VG_EVICT_QUOTA] = "quota",
	[VG_EVICT_MISSING] = "missing",
};

/* Prints one gc removal. */
static void
gc_line(void *arg, const struct vg_cache_entry *ent,
    enum vg_cache_evict_why why)
{
	char sz[16];

	human(ent->size, sz, sizeof(sz));
	printf("%s  %.12s  %6s  %s\n", *(int *)arg ? "would remove" :
	    "removed", ent->digest, sz, why_names[why]);
}

static int
cmd_cache_exec(struct vg_args *a)
{
	struct vg_cache_conf conf;
	struct vg_cache_gc_stats st;
	struct vg_manifest *cfg = NULL;
	struct vg_cache *c = NULL;
	struct vg_err e;
	const char *sub = a->argv[0], *puller, *warning;
	char *found = NULL, *digest = NULL, f1[16], f2[16];
	size_t nprob;
	int rc, code = VG_EXIT_OK, dry;

	if (strcmp(sub, "list") != 0 && strcmp(sub, "pull") != 0 &&
	    strcmp(sub, "verify") != 0 && strcmp(sub, "gc") != 0 &&
	    strcmp(sub, "rm") != 0)
		return vg_cmd_usage_error(a, "unknown cache command '%s' "
		    "(valid: list, pull, verify, gc, rm)", sub);
	if ((strcmp(sub, "pull") == 0 || strcmp(sub, "rm") == 0) ?
	    a->argc != 2 : a->argc != 1)
		return vg_cmd_usage_error(a, "'cache %s' takes %s", sub,
		    (strcmp(sub, "pull") == 0 || strcmp(sub, "rm") == 0) ?
		    "one argument" : "no arguments");
	if ((code = vg_cmd_load_config(&cfg)) != 0)
		return code;
	conf = *vg_cache_of(cfg);
	if ((code = conf_from_args(a, &conf)) != 0)
		goto done;
	vg_err_init(&e);
	if ((rc = vg_cache_open_default(&conf, &cfg->scratch, &c, &e)) != 0) {
		code = vg_cmd_fail(vg_cmd_exit_for_rc(rc), "cache: %s", e.msg);
		goto done;
	}
	if ((puller = vg_args_get(a, "puller")) != NULL)
		vg_cache_set_puller(c, puller);
	else if (vg_singularity_find(vg_singularity_of(cfg)->binary, &found,
	    &e) == 0)
		vg_cache_set_puller(c, found);
	else if (vg_singularity_of(cfg)->binary != NULL)
		/* Set but wrong: the pull says so rather than use another. */
		vg_cache_set_puller(c, vg_singularity_of(cfg)->binary);
	free(found);
	vg_err_init(&e);
	if ((warning = vg_cache_purge_warning(c)) != NULL)
		fprintf(stderr, "vigil: warning: %s\n", warning);

	if (strcmp(sub, "list") == 0) {
		code = do_list(c, vg_args_has(a, "json"));
	} else if (strcmp(sub, "pull") == 0) {
		if (vg_cache_pull(c, a->argv[1], vg_args_has(a, "force"),
		    &digest, &e) != 0)
			code = vg_cmd_fail(vg_cmd_exit_for_rc(e.rc),
			    "cache pull: %s", e.msg);
		else
			printf("sha256:%s  %s/sha256/%s.sif\n", digest,
			    vg_cache_dir(c), digest);
		free(digest);
	} else if (strcmp(sub, "verify") == 0) {
		if (vg_cache_verify(c, vg_args_has(a, "refresh"), report, NULL,
		    &nprob, &e) != 0)
			code = vg_cmd_fail(vg_cmd_exit_for_rc(e.rc),
			    "cache verify: %s", e.msg);
		else {
			printf("verify: %zu problem%s\n", nprob, nprob == 1 ?
			    "" : "s");
			code = nprob > 0 ? VG_EXIT_FAILED : VG_EXIT_OK;
		}
	} else if (strcmp(sub, "gc") == 0) {
		dry = vg_args_has(a, "dry-run");
		if (vg_cache_gc(c, dry, gc_line, &dry, &st, &e) != 0) {
			code = vg_cmd_fail(vg_cmd_exit_for_rc(e.rc),
			    "cache gc: %s", e.msg);
		} else {
			human(st.freed, f1, sizeof(f1));
			human(st.bytes, f2, sizeof(f2));
			printf("gc: %s %zu of %zu images, %s of %s; %zu "
			    "pinned\n", dry ? "would remove" : "removed",
			    st.removed, st.entries, f1, f2, st.pinned);
			if (st.over_quota)
				fprintf(stderr, "vigil: warning: pinned images "
				    "keep the cache over its quota\n");
		}
	} else {
		if (vg_cache_rm(c, a->argv[1], vg_args_has(a, "force"),
		    &e) != 0)
			code = vg_cmd_fail(vg_cmd_exit_for_rc(e.rc),
			    "cache rm: %s", e.msg);
	}
	vg_cache_close(c);
	code = vg_cmd_finish_stdout(code);
done:
	vg_manifest_free(cfg);
	return code;
}

const struct vg_cmd_entry vg_cmd_cache = {
	.name = "cache",
	.args_usage = "list|pull REF|verify|gc|rm REF|DIGEST",
	.summary = "manage the SIF image cache",
	.help = "Lists, prefetches, verifies, cleans and removes cached SIF "
	    "images.  'pull' fetches an image on a login node before "
	    "submitting; 'verify' reconciles the records with the files and "
	    "reports images purged or corrupted behind vigil's back; 'gc' "
	    "removes images the site purge would take within the margin, "
	    "then the least recently used beyond --quota/--max-entries, "
	    "never images pinned by running tasks.",
	.opts = cache_opts,
	.min_args = 1,
	.max_args = 2,
	.exec = cmd_cache_exec,
};
