/*
 * docker-stream.c - the streams the engine answers with: the log
 * demultiplexer (the 8-byte frame headers of a container's attach and
 * log stream, split into stdout and stderr) and the stats replies
 * (GET /containers/ID/stats) read into usage samples and merged.  Pure
 * and bounded: no I/O, fed whatever the engine sends (the stats reader is
 * fuzzed by tests/fuzz/fuzz-docker-stats.c).
 */
#include <limits.h>
#include <string.h>

#include "common/json.h"
#include "runner/policy/host-access.h"
#include "backends/docker.h"
#include "backends/docker-int.h"

/* Sets up a demultiplexer. */
void
vg_docker_demux_init(struct vg_docker_demux *d,
    int (*out)(void *, int, const char *, size_t), void *arg)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
	d->arg = arg;
}

/* The end of a stream-3 frame: the engine's error, in its words. */
static int
demux_syserr(struct vg_docker_demux *d, struct vg_err *e)
{
	size_t i;

	d->sys[d->syslen] = '\0';
	for (i = 0; i < d->syslen; i++)
		if ((unsigned char)d->sys[i] < 0x20 || d->sys[i] == 0x7f)
			d->sys[i] = ' ';
	return vg_err_set(e, VG_EBACKEND, "the engine ended the log stream "
	    "with an error: %s", d->syslen > 0 ? d->sys : "(no message)");
}

/* Feeds bytes of the multiplexed stream; see docker.h. */
int
vg_docker_demux_feed(struct vg_docker_demux *d, const char *p, size_t n,
    struct vg_err *e)
{
	size_t k, m;
	int r;

	while (n > 0) {
		if (d->left == 0) {
			k = sizeof(d->hdr) - d->hlen;
			if (k > n)
				k = n;
			memcpy(d->hdr + d->hlen, p, k);
			d->hlen += k;
			p += k;
			n -= k;
			d->offset += k;
			if (d->hlen < sizeof(d->hdr))
				return 0;
			d->hlen = 0;
			/* Stream 0 (stdin) is written on stdout, per the
			 * Engine API's attach documentation; 3 is the
			 * engine's own error. */
			if (d->hdr[0] > 3)
				return vg_err_set(e, VG_EPARSE, "docker log "
				    "stream: frame at byte %llu has unknown "
				    "stream %u (expected 0 to 3)",
				    d->offset - 8, d->hdr[0]);
			d->stream = d->hdr[0] == 0 ? 1 : d->hdr[0];
			d->left = (size_t)d->hdr[4] << 24 |
			    (size_t)d->hdr[5] << 16 | (size_t)d->hdr[6] << 8 |
			    (size_t)d->hdr[7];
			d->syslen = 0;
			if (d->stream == 3 && d->left == 0)
				return demux_syserr(d, e);
			continue;
		}
		k = d->left < n ? d->left : n;
		if (d->stream == 3) {
			m = sizeof(d->sys) - 1 - d->syslen;
			memcpy(d->sys + d->syslen, p, k < m ? k : m);
			d->syslen += k < m ? k : m;
		} else if ((r = d->out(d->arg, d->stream, p, k)) != 0)
			return vg_err_set(e, r, "docker log stream: cannot "
			    "write %s", d->stream == 2 ? "stderr" : "stdout");
		d->left -= k;
		d->offset += k;
		p += k;
		n -= k;
		if (d->stream == 3 && d->left == 0)
			return demux_syserr(d, e);
	}
	return 0;
}

/* vg_http_sink over a demultiplexer; see docker.h. */
int
vg_docker_demux_sink(void *arg, const char *p, size_t n)
{
	struct vg_docker_demux *d = arg;

	return vg_docker_demux_feed(d, p, n, &d->err);
}

/* True when no frame is half read. */
int
vg_docker_demux_done(const struct vg_docker_demux *d)
{
	return d->hlen == 0 && d->left == 0;
}

/* A counter of a stats reply: a number >= 0 (absent: -1, bad: -2). */
static double
stats_num(const struct vg_json_value *o, const char *key)
{
	const struct vg_json_value *v = vg_json_get(o, key);

	if (v == NULL || v->type == VG_JSON_NULL)
		return -1;
	if (v->type != VG_JSON_NUMBER || !(v->num >= 0) || v->num > 9e18)
		return -2;
	return v->num;
}

/* Parses one stats reply; see docker.h. */
int
vg_docker_stats_parse(const char *body, size_t len,
    struct vg_docker_stats *s, struct vg_err *e)
{
	struct vg_json_limits lim = { .max_bytes = DOCKER_JSON_MAX };
	struct vg_json_doc *doc = NULL;
	const struct vg_json_value *root, *cpu, *mem;
	const char *when;
	double tot, user, sys, peak, cur;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	while (len > 0 && (*body == ' ' || *body == '\n' || *body == '\r' ||
	    *body == '\t')) {
		body++;
		len--;
	}
	if (len == 0)
		return vg_err_set(e, VG_ENOENT, "docker: stats: empty reply "
		    "(the container is not running)");
	if (vg_json_parse(body, len, &lim, &doc, e) != 0)
		return vg_err_prefix(e, "docker: stats: ");
	root = vg_json_root(doc);
	if (root->type != VG_JSON_OBJECT) {
		rc = vg_err_set(e, VG_EPARSE, "docker: stats: not an object");
		goto out;
	}
	when = vg_json_get_str(root, "read", "");
	if (strncmp(when, "0001-", 5) == 0) {
		rc = vg_err_set(e, VG_ENOENT, "docker: stats: no sample (the "
		    "container is not running)");
		goto out;
	}
	cpu = vg_json_get(vg_json_get(root, "cpu_stats"), "cpu_usage");
	tot = stats_num(cpu, "total_usage");
	user = stats_num(cpu, "usage_in_usermode");
	sys = stats_num(cpu, "usage_in_kernelmode");
	mem = vg_json_get(root, "memory_stats");
	peak = stats_num(mem, "max_usage");
	cur = stats_num(mem, "usage");
	if (tot == -2 || user == -2 || sys == -2 || peak == -2 ||
	    cur == -2) {
		rc = vg_err_set(e, VG_EPARSE, "docker: stats: a counter is "
		    "not a number >= 0");
		goto out;
	}
	if (user + sys > 0) {
		s->cpu_user = (user > 0 ? user : 0) / 1e9;
		s->cpu_sys = (sys > 0 ? sys : 0) / 1e9;
		s->known |= VG_USAGE_CPU;
	} else if (tot > 0) {
		s->cpu_user = tot / 1e9;
		s->known |= VG_USAGE_CPU;
	}
	if (peak > 0) {
		s->mem = (long long)peak;
		s->mem_exact = 1;
		s->known |= VG_USAGE_RSS;
	} else if (cur > 0) {
		s->mem = (long long)cur;
		s->known |= VG_USAGE_RSS;
	}
	if (s->known == 0)
		rc = vg_err_set(e, VG_ENOENT, "docker: stats: no CPU or "
		    "memory counter");
out:
	vg_json_free(doc);
	return rc;
}

/* Folds one sample into the running maxima; see docker.h. */
void
vg_docker_stats_merge(struct vg_docker_stats *acc,
    const struct vg_docker_stats *s)
{
	if ((s->known & VG_USAGE_CPU) && (!(acc->known & VG_USAGE_CPU) ||
	    s->cpu_user + s->cpu_sys >= acc->cpu_user + acc->cpu_sys)) {
		acc->cpu_user = s->cpu_user;
		acc->cpu_sys = s->cpu_sys;
		acc->known |= VG_USAGE_CPU;
	}
	if ((s->known & VG_USAGE_RSS) && (!(acc->known & VG_USAGE_RSS) ||
	    s->mem > acc->mem)) {
		acc->mem = s->mem;
		acc->known |= VG_USAGE_RSS;
	}
	acc->mem_exact |= s->mem_exact;
}
