/*
 * shim-launch.c - the reader of a launch description (shim.h), shared by
 * vigil-shim and the tests.  It only checks: the shim then reads the
 * fields in place, with no parsing and no allocation.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "backends/shim.h"

/* Sets the reason; returns -1. */
static int __attribute__((format(printf, 3, 4)))
bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Checks one string field: 0, or a NUL-terminated string inside the blob
 * after the header, at most VG_SHIM_MAX_STR bytes; absolute if asked. */
static int
check_str(const char *buf, size_t len, uint32_t off, const char *name,
    int absolute, char *why, size_t whylen)
{
	size_t max;

	if (off == 0)
		return 0;
	if (off < sizeof(struct vg_shim_launch) || off >= len)
		return bad(why, whylen, "%s: offset %u outside the strings "
		    "(%zu..%zu)", name, off, sizeof(struct vg_shim_launch),
		    len);
	max = len - off;
	if (max > VG_SHIM_MAX_STR)
		max = VG_SHIM_MAX_STR;
	if (memchr(buf + off, '\0', max) == NULL)
		return bad(why, whylen, "%s: not terminated within %zu bytes",
		    name, max);
	if (buf[off] == '\0')
		return bad(why, whylen, "%s: empty", name);
	if (absolute && buf[off] != '/')
		return bad(why, whylen, "%s: '%.40s' is not an absolute path",
		    name, buf + off);
	return 0;
}

/* Checks a list of n strings from offset off: each NUL-terminated inside
 * the blob after the header (an empty one is allowed: argv may hold ""). */
static int
check_strs(const char *buf, size_t len, uint32_t off, uint32_t n,
    const char *name, char *why, size_t whylen)
{
	const char *nul;
	size_t at = off;
	uint32_t i;

	if (n == 0)
		return off == 0 ? 0 : bad(why, whylen, "%s: offset %u with "
		    "no strings", name, off);
	if (n > VG_SHIM_MAX_ARGV)
		return bad(why, whylen, "%s: %u strings, at most %d", name,
		    n, VG_SHIM_MAX_ARGV);
	if (off < sizeof(struct vg_shim_launch) || off >= len)
		return bad(why, whylen, "%s: offset %u outside the strings "
		    "(%zu..%zu)", name, off, sizeof(struct vg_shim_launch),
		    len);
	for (i = 0; i < n; i++) {
		if (at >= len || (nul = memchr(buf + at, '\0', len - at)) ==
		    NULL)
			return bad(why, whylen, "%s: string %u of %u runs "
			    "past the blob", name, i, n);
		at = (size_t)(nul - buf) + 1;
	}
	return 0;
}

int
vg_shim_launch_check(const void *buf, size_t len, char *why, size_t whylen)
{
	const struct vg_shim_launch *l = buf;
	const char *b = buf;
	uint64_t end;
	uint32_t i;

	if (buf == NULL || len < 12)
		return bad(why, whylen, "%zu bytes, shorter than the 12 of "
		    "the magic, version and size", len);
	if (((uintptr_t)buf & 7) != 0)
		return bad(why, whylen, "%s", "buffer not 8-byte aligned");
	if (l->magic != VG_SHIM_MAGIC)
		return bad(why, whylen, "bad magic 0x%08x (want 0x%08x)",
		    l->magic, VG_SHIM_MAGIC);
	if (l->version != VG_SHIM_VERSION)
		return bad(why, whylen, "version %u, this shim reads version "
		    "%d (vigil and vigil-shim are from different builds)",
		    l->version, VG_SHIM_VERSION);
	if (l->header_size != sizeof(*l))
		return bad(why, whylen, "header of %u bytes, want %zu "
		    "(vigil and vigil-shim are from different builds)",
		    l->header_size, sizeof(*l));
	if (len < sizeof(*l))
		return bad(why, whylen, "truncated: %zu bytes, the header "
		    "alone has %zu", len, sizeof(*l));
	if (l->size != len)
		return bad(why, whylen, "size field says %u bytes, %zu "
		    "arrived", l->size, len);
	if (len > VG_SHIM_MAX_SIZE)
		return bad(why, whylen, "%zu bytes, more than %d", len,
		    VG_SHIM_MAX_SIZE);
	if ((l->flags & ~(uint32_t)VG_SHIM_FLAGS_KNOWN) != 0)
		return bad(why, whylen, "unknown flags 0x%x", l->flags &
		    ~(uint32_t)VG_SHIM_FLAGS_KNOWN);
	if (l->killall_sig < 0 || l->killall_sig > 64 ||
	    l->killall_sig == SIGKILL || l->killall_sig == SIGSTOP)
		return bad(why, whylen, "killall_sig %d is not a usable "
		    "signal", l->killall_sig);
	if (l->nlimits > VG_SHIM_MAX_LIMITS)
		return bad(why, whylen, "%u limits, at most %d", l->nlimits,
		    VG_SHIM_MAX_LIMITS);
	for (i = 0; i < l->nlimits; i++) {
		if (l->limits[i].resource < 0 ||
		    l->limits[i].resource >= RLIM_NLIMITS)
			return bad(why, whylen, "limit %u: unknown resource "
			    "%d", i, l->limits[i].resource);
		if (l->limits[i].cur > l->limits[i].max)
			return bad(why, whylen, "limit %u: soft %llu above "
			    "hard %llu", i,
			    (unsigned long long)l->limits[i].cur,
			    (unsigned long long)l->limits[i].max);
	}
	if (l->nrules > VG_SHIM_MAX_RULES)
		return bad(why, whylen, "%u Landlock rules, at most %d",
		    l->nrules, VG_SHIM_MAX_RULES);
	for (i = 0; i < l->nrules; i++)
		if (l->rules[i].fd < VG_SHIM_FD_FIRST_RULE ||
		    l->rules[i].fd > 65535)
			return bad(why, whylen, "rule %u: fd %d out of range "
			    "(%d..65535)", i, l->rules[i].fd,
			    VG_SHIM_FD_FIRST_RULE);
	if (l->nrules > 0 && !(l->flags & VG_SHIM_LANDLOCK))
		return bad(why, whylen, "%s", "Landlock rules without the "
		    "Landlock flag");
	if (l->flags & VG_SHIM_LANDLOCK) {
		if (l->ll_attr_size != 8 && l->ll_attr_size != 16 &&
		    l->ll_attr_size != 24)
			return bad(why, whylen, "Landlock attribute size %u "
			    "(want 8, 16 or 24)", l->ll_attr_size);
		if (l->ll_fs == 0)
			return bad(why, whylen, "%s", "Landlock without "
			    "handled file system rights");
	}
	if (l->nbpf > VG_SHIM_MAX_BPF)
		return bad(why, whylen, "seccomp program of %u instructions, "
		    "at most %d", l->nbpf, VG_SHIM_MAX_BPF);
	if (l->nbpf > 0) {
		end = (uint64_t)l->bpf_off + (uint64_t)l->nbpf * 8;
		if (l->bpf_off < sizeof(*l) || (l->bpf_off & 7) != 0 ||
		    end > len)
			return bad(why, whylen, "seccomp program at %u (%u "
			    "instructions) outside the blob of %zu bytes",
			    l->bpf_off, l->nbpf, len);
	}
	if (check_str(b, len, l->exec_path, "exec_path", 1, why, whylen) ||
	    check_str(b, len, l->cwd, "cwd", 0, why, whylen) ||
	    check_str(b, len, l->task_dir, "task_dir", 1, why, whylen) ||
	    check_str(b, len, l->scratch_dir, "scratch_dir", 1, why,
	    whylen) ||
	    check_str(b, len, l->tmp_dir, "tmp_dir", 1, why, whylen))
		return -1;
	if ((l->flags & (VG_SHIM_LL_TMP | VG_SHIM_MKTMP)) && l->tmp_dir == 0)
		return bad(why, whylen, "%s", "a tmp_dir rule without tmp_dir");
	if (check_strs(b, len, l->argv_off, l->argc, "argv", why, whylen) ||
	    check_strs(b, len, l->env_off, l->envc, "env", why, whylen))
		return -1;
	if (l->argc > 0 && !(l->flags & VG_SHIM_SERVE))
		return bad(why, whylen, "%s", "argv in the launch of a shim "
		    "of one task (it takes its own)");
	return 0;
}

const char *
vg_shim_launch_str(const struct vg_shim_launch *l, uint32_t off)
{
	return off == 0 ? NULL : (const char *)l + off;
}

void
vg_shim_launch_strv(const struct vg_shim_launch *l, uint32_t off,
    uint32_t n, char **v)
{
	char *s = (char *)(uintptr_t)l + off;
	uint32_t i;

	for (i = 0; i < n; i++) {
		v[i] = s;
		s += strlen(s) + 1;
	}
	v[n] = NULL;
}
