/*
 * ssh-remote.c - remote shell text, paths, status records, proxy_jump
 * specs, host key verdicts and offsets for the ssh backend; see
 * ssh-remote.h.  Pure: no network, no libssh.
 *
 * The remote host needs a POSIX sh, setsid (util-linux or BusyBox),
 * sleep and kill; a /usr/bin/time that takes -f and -o (GNU time,
 * BusyBox) adds the task's peak memory to its accounting.  run.sh and the 0600 env file arrive over SFTP; the
 * user's login shell parses only "/bin/sh PATH/run.sh", and the kill
 * script is fed to `/bin/sh -s` on standard input.  No command line ever
 * carries the task's environment.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"
#include "common/state.h"
#include "backends/ssh-remote.h"

void
vg_ssh_path_word(struct vg_buf *b, const char *path)
{
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0')) {
		vg_buf_adds(b, "\"$HOME\"");
		if (path[1] == '/')
			vg_buf_squote(b, path + 1);
		return;
	}
	vg_buf_squote(b, path);
}

char *
vg_ssh_attempt_dir(const char *remote_dir, const char *run_id, int index,
    int attempt)
{
	struct vg_buf b = VG_BUF_INIT;
	const char *p;
	size_t n;

	vg_buf_adds(&b, remote_dir != NULL && *remote_dir != '\0' ?
	    remote_dir : "~/.vigil/runs");
	/* One separator, whatever remote_dir ends with. */
	while (b.len > 1 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	if (b.data[b.len - 1] != '/')
		vg_buf_addc(&b, '/');
	n = b.len;
	for (p = run_id != NULL && *run_id != '\0' ? run_id : "run"; *p != '\0';
	    p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		    *p == '-')
			vg_buf_addc(&b, *p);
		else
			vg_buf_addc(&b, '_');
	}
	if (strcmp(b.data + n, ".") == 0 || strcmp(b.data + n, "..") == 0)
		vg_buf_adds(&b, "_");
	vg_buf_printf(&b, "/%d/%d", index, attempt);
	return vg_buf_detach(&b);
}

char *
vg_ssh_sftp_path(const char *path)
{
	if (strcmp(path, "~") == 0)
		return vg_xstrdup(".");
	if (path[0] == '~' && path[1] == '/') {
		path += 2;
		while (*path == '/')
			path++;
		return vg_xstrdup(*path != '\0' ? path : ".");
	}
	return vg_xstrdup(path);
}

int
vg_ssh_env_name_ok(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return 0;
	return 1;
}

/* Whole seconds for sleep(1), at least 1 (fractions are not POSIX). */
static long
whole_secs(double s)
{
	if (!(s > 0))
		return 1;
	if (s > 1e9)
		return 1000000000L;
	return (long)ceil(s);
}

void
vg_ssh_wrapper_script(const struct vg_ssh_launch *l, struct vg_buf *w)
{
	size_t i;

	vg_buf_adds(w, "# vigil task wrapper.  `sh run.sh` starts `sh run.sh wrap` "
	    "in a\n# session of its own, detached; that runs the task in "
	    "another\n# session (tpid) and writes its exit status to status "
	    "once it\n# has ended.\nd=");
	vg_ssh_path_word(w, l->dir);
	vg_buf_adds(w, "\n"
	    "cd \"$d\" || exit 125\n"
	    "if [ \"$1\" != wrap ]; then\n"
	    "\tcommand -v setsid >/dev/null 2>&1 || { echo 'vigil: setsid is "
	    "not installed on the remote host (util-linux or BusyBox)' >&2; "
	    "exit 127; }\n"
	    "\tsetsid /bin/sh ./run.sh wrap </dev/null >/dev/null 2>&1 &\n"
	    "\techo \"vigil-started $!\"\n"
	    "\texit 0\n"
	    "fi\n"
	    "echo $$ >pid\n"
	    "wd=\n");
	if (l->timeout > 0) {
		/* The remote half of the timeout: it holds while vigil is
		 * disconnected.  It runs in the wrapper's process group,
		 * apart from the task's. */
		vg_buf_printf(w,
		    "(\n"
		    "\tsleep %ld\n"
		    "\t[ -s status ] && exit 0\n"
		    "\t: >timedout\n"
		    "\tp=$(cat tpid 2>/dev/null) || exit 0\n"
		    "\tkill -TERM \"-$p\" 2>/dev/null\n"
		    "\tsleep %ld\n"
		    "\tkill -KILL \"-$p\" 2>/dev/null\n"
		    ") </dev/null >/dev/null 2>&1 &\n"
		    "wd=$!\n", whole_secs(l->timeout), whole_secs(l->grace));
	}
	/* setsid does not fork here (the wrapper's child is no group
	 * leader, and neither is time's), so tpid is the task's pid and
	 * process group.  The command goes into "$@" so that time can
	 * be put in front of it without quoting it twice. */
	vg_buf_adds(w, "set -- setsid /bin/sh -c 'echo $$ >tpid; . ./env || "
	    "exit 126; cd \"$1\" || exit 126; shift; exec \"$@\"' "
	    "vigil-task ");
	if (l->workdir != NULL && *l->workdir != '\0')
		vg_ssh_path_word(w, l->workdir);
	else
		vg_buf_adds(w, "\"$d\"");
	for (i = 0; l->argv != NULL && i < l->argv->n; i++) {
		vg_buf_addc(w, ' ');
		vg_buf_squote(w, l->argv->v[i]);
	}
	/* Accounting: a time(1) that takes -f and -o (GNU, BusyBox) adds
	 * the peak RSS; the wrapper's `times` (POSIX) gives the CPU time
	 * of what it reaped, the task tree, once the task has ended.
	 * usage is complete before status exists.  One write(2) of a
	 * few bytes for status: a reader sees all or nothing of the
	 * line, and the newline marks it complete. */
	vg_buf_adds(w, "\n"
	    "if [ -x /usr/bin/time ] && /usr/bin/time -f 'vigil-maxrss %M' "
	    "-o usage true </dev/null >/dev/null 2>&1; then\n"
	    "\tset -- /usr/bin/time -f 'vigil-maxrss %M' -o usage \"$@\"\n"
	    "else\n"
	    "\t: >usage\n"
	    "fi\n"
	    "\"$@\" </dev/null >out 2>err\n"
	    "rc=$?\n"
	    "times >>usage\n"
	    "printf '%s\\n' \"$rc\" >status\n"
	    /* The watchdog and its sleep share the wrapper's group. */
	    "if [ -n \"$wd\" ]; then trap '' TERM; kill -TERM 0; fi\n"
	    "exit 0\n");
}

int
vg_ssh_env_file(const struct vg_strv *env, struct vg_buf *out,
    struct vg_err *e)
{
	const char *eq;
	size_t i;

	for (i = 0; env != NULL && i < env->n; i++) {
		eq = strchr(env->v[i], '=');
		if (eq == NULL || !vg_ssh_env_name_ok(env->v[i],
		    (size_t)(eq - env->v[i])))
			return vg_err_set(e, VG_EINVAL, "env: '%.*s' is not a "
			    "shell variable name ([A-Za-z_][A-Za-z0-9_]*), so "
			    "it cannot be passed to the remote host",
			    eq != NULL ? (int)(eq - env->v[i]) : 64,
			    env->v[i]);
	}
	for (i = 0; env != NULL && i < env->n; i++) {
		eq = strchr(env->v[i], '=');
		vg_buf_adds(out, "export ");
		vg_buf_add(out, env->v[i], (size_t)(eq - env->v[i]));
		vg_buf_addc(out, '=');
		vg_buf_squote(out, eq + 1);
		vg_buf_addc(out, '\n');
	}
	/* Sourced with the attempt dir as cwd. */
	vg_buf_adds(out, "export VIGIL_TASK_DIR=\"$PWD\"\n");
	return 0;
}

void
vg_ssh_start_command(const char *dir, struct vg_buf *out)
{
	struct vg_buf p = VG_BUF_INIT;

	vg_buf_adds(&p, dir);
	vg_buf_adds(&p, "/run.sh");
	vg_buf_adds(out, "/bin/sh ");
	vg_ssh_path_word(out, p.data);
	vg_buf_release(&p);
}

void
vg_ssh_kill_script(const char *dir, double grace, int timed_out,
    struct vg_buf *out)
{
	vg_buf_adds(out, "cd ");
	vg_ssh_path_word(out, dir);
	vg_buf_adds(out, " 2>/dev/null || exit 0\n");
	if (timed_out)
		vg_buf_adds(out, "[ -s status ] || : >timedout\n");
	vg_buf_printf(out,
	    "[ -s status ] && exit 0\n"
	    /* The wrapper writes tpid within moments of starting. */
	    "i=0\n"
	    "while [ ! -s tpid ] && [ $i -lt 50 ]; do sleep 0.1 2>/dev/null "
	    "|| sleep 1; i=$((i + 1)); done\n"
	    "p=$(cat tpid 2>/dev/null)\n"
	    "[ -n \"$p\" ] || exit 0\n"
	    "kill -TERM \"-$p\" 2>/dev/null\n"
	    "setsid /bin/sh -c 'sleep %ld; kill -KILL \"-$1\" 2>/dev/null' "
	    "vigil-kill \"$p\" </dev/null >/dev/null 2>&1 &\n"
	    "exit 0\n", whole_secs(grace));
}

void
vg_ssh_reap_script(const char *remote_dir, const char *run_id, int task,
    struct vg_buf *out)
{
	char *dir = vg_ssh_attempt_dir(remote_dir, run_id, 0, 0);
	size_t n = strlen(dir);

	/* vg_ssh_attempt_dir ends in "/0/0": the run dir is before it. */
	dir[n - 4] = '\0';
	vg_buf_adds(out, "cd ");
	vg_ssh_path_word(out, dir);
	vg_buf_adds(out, " 2>/dev/null || exit 0\n");
	if (task >= 0)
		vg_buf_printf(out, "set -- %d/*/\n", task);
	else
		vg_buf_adds(out, "set -- */*/\n");
	vg_buf_adds(out,
	    "for d do\n"
	    "\t[ -d \"$d\" ] || continue\n"
	    "\td=${d%/}\n"
	    "\tk=\n"
	    "\tif [ ! -s \"$d/status\" ]; then\n"
	    "\t\tfor f in pid tpid; do\n"
	    "\t\t\tp=$(cat \"$d/$f\" 2>/dev/null)\n"
	    "\t\t\tcase $p in ''|*[!0-9]*) continue;; esac\n"
	    "\t\t\tkill -KILL \"-$p\" 2>/dev/null && k=1\n"
	    "\t\tdone\n"
	    "\tfi\n"
	    "\t[ -n \"$k\" ] && echo \"killed $d\"\n"
	    "\trm -rf \"$d\" && echo \"removed $d\"\n"
	    "\trmdir \"${d%/*}\" 2>/dev/null\n"
	    "done\n"
	    "cd .. && rmdir ");
	vg_ssh_path_word(out, dir);
	vg_buf_adds(out, " 2>/dev/null\nexit 0\n");
	free(dir);
}

int
vg_ssh_status_parse(const char *text, size_t len, int *code)
{
	size_t i;
	int v = 0;

	/* Incomplete until the newline is there. */
	if (len < 2 || text[len - 1] != '\n')
		return -1;
	len--;
	if (len > 3)
		return -1;
	for (i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -1;
		v = v * 10 + (text[i] - '0');
	}
	if (v > 255)
		return -1;
	*code = v;
	return 0;
}

/* Parses "MmS.FFFs" (a time of `times`) into seconds; the end or NULL. */
static const char *
times_word(const char *p, const char *end, double *out)
{
	double min = 0, sec = 0, frac = 0.1;
	int digits = 0;

	for (; p < end && *p >= '0' && *p <= '9' && min < 1e9; p++, digits++)
		min = min * 10 + (*p - '0');
	if (digits == 0 || p >= end || *p++ != 'm')
		return NULL;
	for (digits = 0; p < end && *p >= '0' && *p <= '9' && sec < 1e9;
	    p++, digits++)
		sec = sec * 10 + (*p - '0');
	if (digits == 0)
		return NULL;
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, frac /= 10)
			sec += (*p - '0') * frac;
	if (p >= end || *p++ != 's')
		return NULL;
	*out = min * 60 + sec;
	return p;
}

int
vg_ssh_usage_parse(const char *text, size_t len, struct vg_usage *u)
{
	const char *p = text, *end = text + len, *nl, *q;
	double t[2], user = 0, sys = 0;
	long long kb;
	int ntimes = 0, rss = 0;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((size_t)(nl - p) > 13 &&
		    memcmp(p, "vigil-maxrss ", 13) == 0) {
			for (kb = 0, q = p + 13; q < nl && *q >= '0' &&
			    *q <= '9' && kb < (1LL << 40); q++)
				kb = kb * 10 + (*q - '0');
			if (q == nl && q > p + 13 && kb < (1LL << 40)) {
				u->max_rss = kb * 1024;
				rss = 1;
			}
			continue;
		}
		if ((q = times_word(p, nl, &t[0])) != NULL && q < nl &&
		    *q == ' ' && (q = times_word(q + 1, nl, &t[1])) == nl) {
			/* Lines of `times` come in pairs: the shell's,
			 * then its children's. */
			if (ntimes++ % 2 == 1) {
				user = t[0];
				sys = t[1];
			}
		}
	}
	if (rss)
		u->known |= VG_USAGE_RSS;
	if (ntimes >= 2 && ntimes % 2 == 0) {
		u->cpu_user = user;
		u->cpu_sys = sys;
		u->known |= VG_USAGE_CPU;
	}
	return rss || (u->known & VG_USAGE_CPU) ? 0 : -1;
}

void
vg_ssh_jump_release(struct vg_ssh_jump *j)
{
	free(j->user);
	free(j->host);
	memset(j, 0, sizeof(*j));
}

int
vg_ssh_jump_parse(const char *spec, struct vg_ssh_jump *j, struct vg_err *e)
{
	const char *at, *h, *hend, *colon;
	char *end;
	long port = 22;

	memset(j, 0, sizeof(*j));
	if (spec == NULL || *spec == '\0')
		return vg_err_set(e, VG_EINVAL, "ssh.proxy_jump: empty; expected "
		    "[user@]host[:port]");
	if (strchr(spec, ',') != NULL)
		return vg_err_set(e, VG_EINVAL, "ssh.proxy_jump: '%s': only "
		    "one jump host is supported", spec);
	at = strrchr(spec, '@');
	h = at != NULL ? at + 1 : spec;
	if (at == spec)
		goto bad;
	if (*h == '[') {
		hend = strchr(h, ']');
		if (hend == NULL || hend == h + 1)
			goto bad;
		colon = hend[1] == ':' ? hend + 1 : NULL;
		if (hend[1] != '\0' && colon == NULL)
			goto bad;
		h++;
	} else {
		colon = strchr(h, ':');
		hend = colon != NULL ? colon : h + strlen(h);
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			goto bad;
	}
	if (hend == h)
		goto bad;
	if (colon != NULL) {
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end != '\0' ||
		    errno != 0 || port < 1 || port > 65535)
			return vg_err_set(e, VG_EINVAL, "ssh.proxy_jump: '%s': "
			    "port must be 1..65535", spec);
	}
	if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-_:%") < (size_t)(hend - h))
		goto bad;
	j->user = at != NULL ? vg_xstrndup(spec, (size_t)(at - spec)) : NULL;
	j->host = vg_xstrndup(h, (size_t)(hend - h));
	j->port = (int)port;
	return 0;
bad:
	return vg_err_set(e, VG_EINVAL, "ssh.proxy_jump: '%s' is not "
	    "[user@]host[:port]", spec);
}

void
vg_ssh_host_name(char *out, size_t size, const char *host, int port)
{
	if (port == 22 || port == 0)
		snprintf(out, size, "%s", host);
	else
		snprintf(out, size, "[%s]:%d", host, port);
}

enum vg_ssh_hk
vg_ssh_hostkey_verdict(enum vg_ssh_known st, int accept_new,
    const char *host, int port, const char *keytype, const char *fp,
    const char *kh, struct vg_err *e)
{
	char name[300];

	vg_ssh_host_name(name, sizeof(name), host, port);
	switch (st) {
	case VG_SSH_KNOWN_OK:
		return VG_SSH_HK_OK;
	/* Messages fit a result's 256-byte reason with paths of normal
	 * length: the host, key type and fingerprint come first. */
	case VG_SSH_KNOWN_CHANGED:
		vg_err_set(e, VG_EDENIED, "ssh: host key of '%s' CHANGED: "
		    "server offers %s %s, unlike '%s' (if expected: ssh-keygen "
		    "-R '%s' -f '%s')", name, keytype, fp, kh, name, kh);
		return VG_SSH_HK_REFUSE;
	case VG_SSH_KNOWN_OTHER:
		vg_err_set(e, VG_EDENIED, "ssh: host key of '%s' CHANGED: "
		    "server offers %s %s, '%s' has only other key types (if "
		    "expected: ssh-keygen -R '%s' -f '%s')", name, keytype, fp,
		    kh, name, kh);
		return VG_SSH_HK_REFUSE;
	case VG_SSH_KNOWN_UNKNOWN:
	case VG_SSH_KNOWN_NOFILE:
		if (accept_new)
			return VG_SSH_HK_ADD;
		vg_err_set(e, VG_EDENIED, "ssh: host key of '%s' is unknown: "
		    "server offers %s %s, '%s' %s (check it and add it to that "
		    "file, or set ssh.host_key: accept-new)", name, keytype, fp,
		    kh, st == VG_SSH_KNOWN_NOFILE ? "does not exist" :
		    "has no entry");
		return VG_SSH_HK_REFUSE;
	case VG_SSH_KNOWN_ERROR:
	default:
		vg_err_set(e, VG_EBACKEND, "ssh: cannot check the host key of "
		    "'%s' against '%s' (unreadable or malformed)", name, kh);
		return VG_SSH_HK_REFUSE;
	}
}

int
vg_ssh_resume_offset(int fd, uint64_t *off, struct vg_err *e)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return vg_err_errno(e, "cannot stat the local output file");
	*off = (uint64_t)st.st_size;
	return 0;
}

int
vg_ssh_write_all(int fd, const void *buf, size_t len, struct vg_err *e)
{
	if (vg_write_all(fd, buf, len) != 0)
		return vg_err_errno(e, "cannot write the task's output");
	return 0;
}
