/*
 * singularity.c - the singularity backend ("apptainer" is an alias): runs
 * each attempt as `apptainer exec` of a SIF image.
 *
 * The apptainer process is started by the local backend
 * (vg_local_proc_start), so the scheduler watches it like a local task:
 * its shim is the init of a PID namespace (as root; a subreaper
 * otherwise) and cancel/timeout reach the whole tree, the starter, the
 * container's init and everything the task started, whatever sessions or
 * groups they made.  Only the tree kill is taken from the local sandbox:
 * apptainer mounts, pivots and may run a setuid starter, which
 * no_new_privs, Landlock and the seccomp filter would refuse; the
 * container is the confinement (--containall).  The environment goes
 * through a mode-0600 --env-file in the task directory, never the command
 * line.  Apptainer's own failures (exit 255 and a FATAL: line) become
 * BACKEND_ERROR, so a missing image or a bad bind is not mistaken for the
 * task's exit code.
 *
 * Left to others: the scratch directory normally comes from the driver
 * (a->scratch_dir); when it does not, this backend makes one with the
 * scratch manager and applies scratch.keep itself.  Image references
 * (docker://, oras://, ...) are resolved by the SIF cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/log.h"
#include "common/path.h"
#include "common/proc.h"
#include "common/str.h"
#include "common/home.h"
#include "common/which.h"
#include "runner/policy/host-access.h"
#include "scratch/scratch.h"
#include "sif-cache/cache.h"
#include "backends/egress-run.h"
#include "backends/local.h"
#include "backends/sandbox.h"
#include "backends/singularity.h"
#include "runner/manifest/schema-table.h"

extern char **environ;

#define ENV_FILE	".apptainer-env"
#define STDERR_TAIL	4096

/*
 * The drive's state: the network its tasks start in.  isolation.network
 * none: a namespace of each task's own with loopback up; an allow-list:
 * the namespace of the egress proxy prepare started (docs/egress.md).
 * Apptainer without --net keeps the network it was started in.
 */
struct sing_drive {
	struct vg_backend_drive	 base;		/* first: the downcast */
	struct vg_local_net	 net;
	struct vg_egress_run	 egress;
};

static struct sing_drive *
sing_drive_of(struct vg_backend_drive *d)
{
	return d != NULL && d->ops == &vg_backend_singularity ?
	    (struct sing_drive *)d : NULL;
}

/* Per-attempt state, owned by a->priv between start and cleanup. */
struct sing_priv {
	struct vg_local_proc *lp;	/* the apptainer process tree */
	struct vg_cache_pin *pin;	/* lease on a cached image */
	char	*env_file;
	char	*scratch;	/* made here (a->scratch_dir was NULL) */
	int	 timed_out;
	int	 cancelled;
	int	 last_sig;	/* last signal cancel sent */
};

/* The binary m's tasks run through: never one a task of the run or
 * another user could have put there (vg_program_refusal). */
static int
binary_check(const struct vg_manifest *m, const char *binary,
    struct vg_err *e)
{
	struct vg_strv tw = VG_STRV_INIT;
	char *why;
	int rc = 0;

	vg_manifest_task_writable(m, &tw);
	if ((why = vg_program_refusal(binary, "singularity.binary", &tw)) !=
	    NULL)
		rc = vg_err_set(e, VG_EDENIED, "%s", why);
	free(why);
	vg_strv_release(&tw);
	return rc;
}

int
vg_singularity_find(const char *configured, char **path_out, struct vg_err *e)
{
	const char *env = getenv("VIGIL_APPTAINER"), *what = NULL, *want;
	char *p;

	*path_out = NULL;
	if (configured != NULL && *configured != '\0') {
		want = configured;
		what = "singularity.binary";
	} else if (env != NULL && *env != '\0') {
		want = env;
		what = "$VIGIL_APPTAINER";
	} else {
		if ((p = vg_which("apptainer")) != NULL ||
		    (p = vg_which("singularity")) != NULL) {
			*path_out = p;
			return 0;
		}
		return vg_err_set(e, VG_ENOENT, "neither 'apptainer' nor "
		    "'singularity' is in $PATH (%s): install Apptainer, load "
		    "its module, or set singularity.binary or "
		    "$VIGIL_APPTAINER", getenv("PATH") ? getenv("PATH") : "");
	}
	if (strchr(want, '/') == NULL) {
		if ((p = vg_which(want)) == NULL)
			return vg_err_set(e, VG_ENOENT, "%s '%s' is not in "
			    "$PATH", what, want);
		*path_out = p;
		return 0;
	}
	if (!vg_is_executable(want))
		return vg_err_set(e, VG_ENOENT, "%s '%s' is not an executable "
		    "file", what, want);
	*path_out = vg_xstrdup(want);
	return 0;
}

int
vg_singularity_version(const char *binary, char **version_out,
    struct vg_err *e)
{
	char buf[512], *nl;
	struct pollfd pfd;
	size_t len = 0;
	ssize_t n;
	int pfds[2], devnull, ws, rc = 0;
	long long deadline;
	pid_t pid;

	*version_out = NULL;
	if (pipe2(pfds, O_CLOEXEC) != 0)
		return vg_err_errno(e, "pipe");
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		close(pfds[0]);
		close(pfds[1]);
		return vg_err_errno(e, "cannot open /dev/null");
	}
	if ((pid = fork()) < 0) {
		rc = vg_err_errno(e, "fork");
		close(pfds[0]);
		close(pfds[1]);
		close(devnull);
		return rc;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls until exec. */
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(pfds[1], 1);
		dup2(devnull, 2);
		execl(binary, binary, "--version", (char *)NULL);
		_exit(127);
	}
	close(pfds[1]);
	close(devnull);
	deadline = vg_mono_ms() + 10000;
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	while (len < sizeof(buf) - 1) {
		long long left = deadline - vg_mono_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			kill(-pid, SIGKILL);
			rc = vg_err_set(e, VG_ETIMEOUT, "'%s --version' did not "
			    "answer within 10 s", binary);
			break;
		}
		n = read(pfds[0], buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(pfds[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (rc != 0)
		return rc;
	buf[len] = '\0';
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || buf[0] == '\0')
		return vg_err_set(e, VG_EBACKEND, "'%s --version' failed "
		    "(%s %d)", binary, WIFEXITED(ws) ? "exit" : "signal",
		    WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
	*version_out = vg_xstrdup(buf);
	return 0;
}

/* True when the resolved path p is / or lies in a system tree. */
static int
system_path(const char *p)
{
	static const char *const trees[] = { VG_SING_SYSTEM_TREES };
	size_t i, n;

	if (strcmp(p, "/") == 0)
		return 1;
	/* /var/tmp is scratch space, not system state. */
	if (strcmp(p, "/var/tmp") == 0 || strncmp(p, "/var/tmp/", 9) == 0)
		return 0;
	for (i = 0; i < sizeof(trees) / sizeof(*trees); i++) {
		n = strlen(trees[i]);
		if (strncmp(p, trees[i], n) == 0 &&
		    (p[n] == '\0' || p[n] == '/'))
			return 1;
	}
	return 0;
}

int
vg_singularity_check_bind(const char *spec, const struct vg_policy_conf *pol,
    char **bind_out, struct vg_err *e)
{
	char *copy, *src, *dst = NULL, *opt = NULL, *c, *real = NULL;
	char *finding = NULL;
	struct vg_host_verdict hv;
	int rc = 0;

	*bind_out = NULL;
	if (strchr(spec, ',') != NULL)
		return vg_err_set(e, VG_EINVAL, "bind '%s' contains ',' "
		    "(apptainer's list separator); give one bind per entry",
		    spec);
	copy = vg_xstrdup(spec);
	src = copy;
	if ((c = strchr(src, ':')) != NULL) {
		*c = '\0';
		dst = c + 1;
		if ((c = strchr(dst, ':')) != NULL) {
			*c = '\0';
			opt = c + 1;
		}
	}
	if (*src != '/') {
		rc = vg_err_set(e, VG_EINVAL, "bind '%s': source '%s' is not "
		    "an absolute path", spec, src);
		goto out;
	}
	if (dst != NULL && *dst != '/') {
		rc = vg_err_set(e, VG_EINVAL, "bind '%s': destination '%s' is "
		    "not an absolute path", spec, dst);
		goto out;
	}
	if (opt != NULL && strcmp(opt, "ro") != 0 && strcmp(opt, "rw") != 0) {
		rc = vg_err_set(e, VG_EINVAL, "bind '%s': option '%s' is not "
		    "ro or rw", spec, opt);
		goto out;
	}
	if ((real = realpath(src, NULL)) == NULL) {
		rc = vg_err_set(e, VG_EINVAL, "bind '%s': source '%s' %s",
		    spec, src, errno == ENOENT ? "does not exist" :
		    strerror(errno));
		goto out;
	}
	if (system_path(real)) {
		finding = vg_xasprintf("bind '%s': source '%s' is %s", spec,
		    real, strcmp(real, "/") == 0 ? "the root directory" :
		    "a system directory");
		vg_policy_host_access(pol, finding, real, &hv);
		if (!hv.allowed) {
			rc = vg_err_set(e, VG_EDENIED, "%s", hv.reason);
			goto out;
		}
	}
	*bind_out = vg_xasprintf("%s:%s%s%s", real, dst != NULL ? dst : src,
	    opt != NULL ? ":" : "", opt != NULL ? opt : "");
out:
	free(finding);
	free(real);
	free(copy);
	return rc;
}

int
vg_singularity_check_flag(const char *flag, struct vg_err *e)
{
	static const struct {
		const char	*flag;
		const char	*use;
	} refused[] = {
		{ "--bind", "singularity.binds" },
		{ "-B", "singularity.binds" },
		{ "--mount", "singularity.binds" },
		{ "--env", "env" },
		{ "--env-file", "env" },
		{ "--home", "singularity.binds" },
		{ "-H", "singularity.binds" },
		{ "--pwd", "singularity.pwd" },
		{ "--writable", "singularity.writable_tmpfs" },
		{ "-w", "singularity.writable_tmpfs" },
		{ "--add-caps", "singularity.add_caps" },
		{ "--keep-privs", "singularity.add_caps" },
	};
	size_t i, n;

	if (flag[0] != '-')
		return vg_err_set(e, VG_EINVAL, "singularity.flags: '%s' is not "
		    "a flag (give them as '--name' or '--name=value')", flag);
	for (i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		n = strlen(refused[i].flag);
		if (strncmp(flag, refused[i].flag, n) == 0 &&
		    (flag[n] == '\0' || flag[n] == '='))
			return vg_err_set(e, VG_EINVAL, "singularity.flags: "
			    "'%s' is not allowed here; use %s, which vigil "
			    "checks", flag, refused[i].use);
	}
	return 0;
}

int
vg_singularity_check_caps(const struct vg_strv *caps,
    const struct vg_policy_conf *pol, char **caps_out, struct vg_err *e)
{
	struct vg_buf list = VG_BUF_INIT, why = VG_BUF_INIT;
	struct vg_host_verdict hv;
	const char *c, *name;
	size_t i, k;
	int rc = 0;

	*caps_out = NULL;
	for (i = 0; i < caps->n; i++) {
		c = caps->v[i];
		name = strncasecmp(c, "CAP_", 4) == 0 ? c + 4 : c;
		if (*name == '\0' || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz_") != strlen(name) ||
		    strcasecmp(name, "ALL") == 0) {
			rc = vg_err_set(e, VG_EINVAL, "singularity.add_caps: "
			    "'%s' is not a capability name (such as "
			    "CAP_NET_RAW; name each one, not ALL)", c);
			goto out;
		}
		vg_buf_adds(&list, i > 0 ? ",CAP_" : "CAP_");
		for (k = 0; name[k] != '\0'; k++)
			vg_buf_addc(&list, (char)(name[k] >= 'a' &&
			    name[k] <= 'z' ? name[k] - 'a' + 'A' : name[k]));
		vg_buf_printf(&why, "singularity.add_caps '%s' adds a "
		    "capability\n", c);
	}
	if (caps->n == 0)
		goto out;
	vg_policy_host_access(pol, vg_buf_str(&why), NULL, &hv);
	if (!hv.allowed) {
		rc = vg_err_set(e, VG_EDENIED, "host access refused: %s",
		    hv.reason);
		goto out;
	}
	*caps_out = vg_buf_detach(&list);
out:
	vg_buf_release(&list);
	vg_buf_release(&why);
	return rc;
}

const char *
vg_singularity_gpu_flag(void)
{
	if (access("/dev/nvidiactl", F_OK) == 0)
		return "--nv";
	if (access("/dev/kfd", F_OK) == 0)
		return "--rocm";
	return "--nv";
}

/* True when the flags of the section already name a GPU flag. */
static int
has_gpu_flag(const struct vg_strv *flags)
{
	size_t i;

	for (i = 0; i < flags->n; i++)
		if (strcmp(flags->v[i], "--nv") == 0 ||
		    strcmp(flags->v[i], "--rocm") == 0)
			return 1;
	return 0;
}

int
vg_singularity_argv(const struct vg_attempt *a, const char *binary,
    const char *image, const char *env_file, const char *scratch_dir,
    const char *gpu_flag, struct vg_strv *argv, struct vg_err *e)
{
	const struct vg_singularity_conf *c = vg_singularity_of(a->m);
	const struct vg_command *cmd = &a->task->command;
	const char *mnt = c->scratch_mount != NULL && *c->scratch_mount ?
	    c->scratch_mount : "/scratch";
	char *bind, *caps;
	size_t i;
	int rc;

	if (*mnt != '/')
		return vg_err_set(e, VG_EINVAL, "singularity.scratch_mount "
		    "'%s' is not an absolute path", mnt);
	if (c->pwd != NULL && *c->pwd != '\0' && *c->pwd != '/')
		return vg_err_set(e, VG_EINVAL, "singularity.pwd '%s' is not "
		    "an absolute path", c->pwd);
	vg_strv_push(argv, binary);
	vg_strv_push(argv, "exec");
	if (c->containall)
		vg_strv_push(argv, "--containall");
	if (c->no_home)
		vg_strv_push(argv, "--no-home");
	if (c->cleanenv)
		vg_strv_push(argv, "--cleanenv");
	if (c->writable_tmpfs)
		vg_strv_push(argv, "--writable-tmpfs");
	/* A task started by root must not keep root's capabilities in the
	 * container; the ones the manifest names come back, judged. */
	vg_strv_push(argv, "--no-privs");
	if ((rc = vg_singularity_check_caps(&c->add_caps, &a->m->policy,
	    &caps, e)) != 0)
		return rc;
	if (caps != NULL) {
		vg_strv_push(argv, "--add-caps");
		vg_strv_take(argv, caps);
	}
	/* Values from the env file stay literal ($, quotes, newlines). */
	vg_strv_push(argv, "--no-eval");
	if (a->res.gpus > 0 && !has_gpu_flag(&c->flags))
		vg_strv_push(argv, gpu_flag != NULL ? gpu_flag : "--nv");
	vg_strv_push(argv, "--bind");
	vg_strv_pushf(argv, "%s:%s", a->task_dir, a->task_dir);
	if (scratch_dir != NULL) {
		vg_strv_push(argv, "--bind");
		vg_strv_pushf(argv, "%s:%s", scratch_dir, mnt);
	}
	for (i = 0; i < c->binds.n; i++) {
		rc = vg_singularity_check_bind(c->binds.v[i], &a->m->policy,
		    &bind, e);
		if (rc != 0)
			return vg_err_prefix(e, "singularity.binds[%zu]: ", i);
		vg_strv_push(argv, "--bind");
		vg_strv_take(argv, bind);
	}
	vg_strv_push(argv, "--pwd");
	if (c->pwd != NULL && *c->pwd != '\0')
		vg_strv_push(argv, c->pwd);
	else
		vg_strv_push(argv, scratch_dir != NULL ? mnt : a->task_dir);
	if (env_file != NULL) {
		vg_strv_push(argv, "--env-file");
		vg_strv_push(argv, env_file);
	}
	for (i = 0; i < c->flags.n; i++) {
		if ((rc = vg_singularity_check_flag(c->flags.v[i], e)) != 0)
			return rc;
		vg_strv_push(argv, c->flags.v[i]);
	}
	vg_strv_push(argv, image);
	if (cmd->is_argv) {
		if (cmd->argv.n == 0)
			return vg_err_set(e, VG_EINVAL, "the task's command is "
			    "an empty list");
		for (i = 0; i < cmd->argv.n; i++)
			vg_strv_push(argv, cmd->argv.v[i]);
	} else {
		if (cmd->shell == NULL)
			return vg_err_set(e, VG_EINVAL, "the task has no "
			    "command");
		vg_strv_push(argv, "/bin/sh");
		vg_strv_push(argv, "-c");
		vg_strv_push(argv, cmd->shell);
	}
	return 0;
}

/* True when s is a portable environment variable name. */
static int
env_name_ok(const char *s)
{
	if (s == NULL || !((*s >= 'A' && *s <= 'Z') ||
	    (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (s++; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/*
 * Appends NAME="value" and a newline, with \ " $ ` escaped.  Apptainer
 * reads the file with its own shell interpreter, which mangles the usual
 * 'it'\''s' idiom into it\'s; double quotes come through exactly (with
 * --no-eval, which the argv always carries).
 */
static void
env_line(struct vg_buf *out, const char *name, const char *value)
{
	const char *p;

	vg_buf_adds(out, name);
	vg_buf_adds(out, "=\"");
	for (p = value != NULL ? value : ""; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"' || *p == '$' || *p == '`')
			vg_buf_addc(out, '\\');
		vg_buf_addc(out, *p);
	}
	vg_buf_adds(out, "\"\n");
}

int
vg_singularity_env_text(const struct vg_attempt *a, const char *scratch_mount,
    struct vg_buf *out, struct vg_err *e)
{
	const struct vg_kvs *env = &a->task->env;
	struct vg_strv all = VG_STRV_INIT;
	char *name;
	size_t i, n;

	for (i = 0; i < env->n; i++)
		if (!env_name_ok(env->v[i].key))
			return vg_err_set(e, VG_EINVAL, "environment variable "
			    "name '%s' is not [A-Za-z_][A-Za-z0-9_]*",
			    env->v[i].key != NULL ? env->v[i].key : "");
	/* Every entry is NAME=value, the names checked above. */
	vg_task_env(a, VG_ENV_ENGINE, &all);
	for (i = 0; i < all.n; i++) {
		n = strcspn(all.v[i], "=");
		name = vg_xstrndup(all.v[i], n);
		env_line(out, name, all.v[i] + n + 1);
		free(name);
	}
	vg_strv_release(&all);
	if (scratch_mount != NULL)
		env_line(out, "VIGIL_SCRATCH", scratch_mount);
	return 0;
}

int
vg_singularity_classify(int wstatus, const char *stderr_tail,
    struct vg_result *r)
{
	const char *p, *line = NULL, *end;
	size_t n;

	r->signal = 0;
	r->reason[0] = '\0';
	if (WIFSIGNALED(wstatus)) {
		r->state = VG_ST_FAILED;
		r->exit_code = -1;
		r->signal = WTERMSIG(wstatus);
		snprintf(r->reason, sizeof(r->reason), "killed by signal %d",
		    r->signal);
		return r->state;
	}
	r->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	if (r->exit_code == 255 && stderr_tail != NULL) {
		/* The last FATAL: line at the start of a line. */
		for (p = stderr_tail; p != NULL && *p != '\0'; ) {
			if (strncmp(p, "FATAL:", 6) == 0)
				line = p + 6;
			p = strchr(p, '\n');
			if (p != NULL)
				p++;
		}
	}
	if (line != NULL) {
		line += strspn(line, " \t");
		end = strchr(line, '\n');
		n = end != NULL ? (size_t)(end - line) : strlen(line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		r->state = VG_ST_BACKEND_ERROR;
		snprintf(r->reason, sizeof(r->reason), "apptainer: %.*s",
		    (int)n, line);
		return r->state;
	}
	r->state = r->exit_code == 0 ? VG_ST_SUCCEEDED : VG_ST_FAILED;
	if (r->exit_code != 0)
		snprintf(r->reason, sizeof(r->reason), "exit code %d",
		    r->exit_code);
	return r->state;
}

/* True when image is a reference the SIF cache resolves, not a path. */
static int
is_ref(const char *image)
{
	return strstr(image, "://") != NULL;
}

/* Checks that the manifest has an image at all. */
static int
need_image(const struct vg_manifest *m, struct vg_err *e)
{
	if (m->image == NULL || *m->image == '\0')
		return vg_err_set(e, VG_EINVAL, "backend 'singularity' needs "
		    "'image': a .sif file or a docker://, oras://, library:// "
		    "or https:// reference");
	return 0;
}

/* Checks a local image path and resolves it (caller frees *path_out).
 * Its contents are apptainer's to judge: a bad one is its failure. */
static int
local_image(const char *image, char **path_out, struct vg_err *e)
{
	struct stat st;
	char *real;

	*path_out = NULL;
	if (stat(image, &st) != 0)
		return vg_err_set(e, VG_ENOENT, "image '%s' %s", image,
		    errno == ENOENT ? "does not exist" : strerror(errno));
	if (!S_ISREG(st.st_mode))
		return vg_err_set(e, VG_EINVAL, "image '%s' is not a regular "
		    "file (sandbox directories are not supported)", image);
	if ((real = realpath(image, NULL)) == NULL)
		return vg_err_errno(e, "cannot resolve image '%s'", image);
	*path_out = real;
	return 0;
}

/* Checks the form of a reference without fetching it. */
static int
check_ref(const char *image, struct vg_err *e)
{
	static const char *const schemes[] = {
		"docker://", "oras://", "library://", "https://", "http://",
	};
	size_t i, n;

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		n = strlen(schemes[i]);
		if (strncmp(image, schemes[i], n) == 0)
			return image[n] != '\0' ? 0 : vg_err_set(e,
			    VG_EINVAL, "image '%s' names no image after "
			    "'%s'", image, schemes[i]);
	}
	return vg_err_set(e, VG_EINVAL, "image '%s': unknown scheme (valid: "
	    "docker://, oras://, library://, https://, http://, or a .sif "
	    "path)", image);
}

/*
 * Resolves m's image for a task that needs it until needed_until (wall
 * clock): a local path in place (*pin_out NULL), a reference through the
 * SIF cache, which pulls it once across processes and nodes with binary
 * as the puller and pins it (*pin_out, released with vg_cache_unpin).
 * *path_out belongs to the caller.  Blocks for a pull.
 */
static int
resolve_image(const struct vg_manifest *m, const char *binary,
    double needed_until, char **path_out, struct vg_cache_pin **pin_out,
    struct vg_err *e)
{
	static int warned;
	struct vg_cache *c = NULL;
	const char *w;
	int rc;

	*path_out = NULL;
	*pin_out = NULL;
	if ((rc = need_image(m, e)) != 0)
		return rc;
	if (!is_ref(m->image))
		return local_image(m->image, path_out, e);
	if ((rc = check_ref(m->image, e)) != 0 ||
	    (rc = vg_cache_open_default(vg_cache_of(m), &m->scratch, &c, e)) != 0)
		return rc;
	vg_cache_set_puller(c, binary);
	/* Once per process: every task of a run would say the same. */
	if (!warned && (w = vg_cache_purge_warning(c)) != NULL) {
		vg_warn("%s", w);
		warned = 1;
	}
	rc = vg_cache_resolve(c, m->image, needed_until, path_out, pin_out,
	    e);
	vg_cache_close(c);
	return rc;
}

/* How long a task of a may run: the timeout, else the time limit. */
static double
need_for(double timeout, uint64_t time_limit)
{
	if (timeout > 0)
		return timeout;
	return (double)time_limit;
}

/* vg_egress_run_env's set: one line of the environment file. */
static void
env_line_set(void *arg, const char *name, const char *value)
{
	env_line(arg, name, value);
}

/* Writes the environment file of a into the task directory, mode 0600;
 * with the variables of egress proxy eg (NULL: none). */
static int
write_env_file(const struct vg_attempt *a, const char *scratch_mount,
    const struct vg_egress_run *eg, char **path_out, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	char *path;
	ssize_t n;
	int fd, rc;

	*path_out = NULL;
	if ((rc = vg_singularity_env_text(a, scratch_mount, &b, e)) != 0) {
		vg_buf_release(&b);
		return rc;
	}
	if (eg != NULL && eg->pid > 0)
		vg_egress_run_env(eg, env_line_set, &b);
	path = vg_path_join(a->task_dir, ENV_FILE);
	/* A fresh file, so a leftover with wider permissions or a planted
	 * symlink is never reused. */
	if (unlink(path) != 0 && errno != ENOENT) {
		rc = vg_err_errno(e, "cannot remove '%s'", path);
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0) {
		rc = vg_err_errno(e, "cannot create '%s'", path);
		goto out;
	}
	n = write(fd, b.data != NULL ? b.data : "", b.len);
	if (n != (ssize_t)b.len) {
		rc = vg_err_errno(e, "cannot write '%s'", path);
		close(fd);
		unlink(path);
		goto out;
	}
	if (close(fd) != 0) {
		rc = vg_err_errno(e, "cannot write '%s'", path);
		unlink(path);
		goto out;
	}
	*path_out = path;
	path = NULL;
out:
	free(path);
	vg_buf_release(&b);
	return rc;
}

/* Frees the per-attempt state; removes the environment file. */
static void
priv_free(struct sing_priv *p)
{
	if (p == NULL)
		return;
	if (p->env_file != NULL)
		(void)unlink(p->env_file);
	vg_local_proc_free(p->lp);
	vg_cache_unpin(p->pin);
	free(p->env_file);
	free(p->scratch);
	free(p);
}

/* The effective scratch mount point inside the container. */
static const char *
scratch_mount(const struct vg_manifest *m)
{
	const char *s = vg_singularity_of(m)->scratch_mount;

	return s != NULL && *s != '\0' ? s : "/scratch";
}

/* Makes a scratch directory for a when the driver gave none. */
static int
own_scratch(const struct vg_attempt *a, char **path_out, struct vg_err *e)
{
	char *home, *base = NULL, *reason = NULL;
	int rc;

	home = vg_home_dir();
	rc = vg_scratch_base(&a->m->scratch, home, &base, &reason, e);
	if (rc == 0)
		rc = vg_scratch_task_dir_min(base, a->run_id,
		    a->task->index, a->m->scratch.min_free, path_out, e);
	free(home);
	free(base);
	free(reason);
	return rc != 0 ? vg_err_prefix(e, "scratch: ") : 0;
}

/* backend op: start */
static int
singularity_start(struct vg_attempt *a, struct vg_err *e)
{
	struct sing_drive *sd = sing_drive_of(a->drive);
	struct vg_strv argv = VG_STRV_INIT;
	struct sing_priv *p;
	char *binary = NULL, *image = NULL;
	const char *scratch;
	int rc;

	a->pid = 0;
	a->pidfd = -1;
	p = vg_xcalloc(1, sizeof(*p));
	if ((rc = vg_singularity_find(vg_singularity_of(a->m)->binary, &binary,
	    e)) != 0 || (rc = binary_check(a->m, binary, e)) != 0 ||
	    (rc = resolve_image(a->m, binary, vg_now() +
	    need_for(a->timeout, a->res.time), &image, &p->pin, e)) != 0)
		goto out;
	scratch = a->scratch_dir;
	if (scratch == NULL) {
		if ((rc = own_scratch(a, &p->scratch, e)) != 0)
			goto out;
		scratch = p->scratch;
	}
	if ((rc = write_env_file(a, scratch_mount(a->m), sd != NULL ?
	    sd->net.egress : NULL, &p->env_file, e)) != 0)
		goto out;
	if ((rc = vg_singularity_argv(a, binary, image, p->env_file, scratch,
	    a->res.gpus > 0 ? vg_singularity_gpu_flag() : NULL, &argv,
	    e)) != 0)
		goto out;
	/* Apptainer builds the container itself (mounts, pivot_root, maybe
	 * a setuid starter): only the tree kill around it, see
	 * docs/backends/singularity.md. */
	rc = vg_local_proc_start_net(a, argv.v, environ, sd != NULL ?
	    &sd->net : NULL, &p->lp, e);
out:
	if (rc != 0) {
		if (p->scratch != NULL)
			(void)vg_scratch_finish(p->scratch,
			    a->m->scratch.keep, 0, NULL);
		priv_free(p);
	} else {
		a->priv = p;
	}
	vg_strv_release(&argv);
	free(binary);
	free(image);
	return rc;
}

/* Reads the last STDERR_TAIL bytes of the attempt's stderr into buf. */
static void
stderr_tail(const char *task_dir, char *buf, size_t len)
{
	char *path = vg_path_join(task_dir, "stderr");
	struct stat st;
	ssize_t n;
	off_t off;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		off = st.st_size > (off_t)(len - 1) ?
		    st.st_size - (off_t)(len - 1) : 0;
		n = pread(fd, buf, len - 1, off);
		buf[n > 0 ? n : 0] = '\0';
	}
	close(fd);
}

/* backend op: finish */
static int
singularity_finish(struct vg_attempt *a, int wstatus, struct vg_result *r,
    struct vg_err *e)
{
	struct sing_priv *p = a->priv;
	char tail[STDERR_TAIL + 1];
	struct vg_err local;
	int task_ws = -1;

	memset(r, 0, sizeof(*r));
	(void)vg_local_proc_finish(a, p != NULL ? p->lp : NULL, wstatus, r,
	    &task_ws);
	if (task_ws < 0) {
		/* apptainer itself could not be started: r says why. */
		r->state = VG_ST_BACKEND_ERROR;
		r->exit_code = -1;
	} else {
		stderr_tail(a->task_dir, tail, sizeof(tail));
		vg_singularity_classify(task_ws, tail, r);
	}
	r->started = a->started;
	r->ended = vg_now();
	if (gethostname(r->node, sizeof(r->node)) != 0)
		r->node[0] = '\0';
	r->node[sizeof(r->node) - 1] = '\0';
	/* run() stopped it: SIGTERM, or SIGKILL once the grace ran out. */
	if (p != NULL && (p->timed_out || p->cancelled) && p->last_sig == 0)
		p->last_sig = task_ws >= 0 && WIFSIGNALED(task_ws) &&
		    WTERMSIG(task_ws) == SIGKILL ? SIGKILL : SIGTERM;
	/* After our own signal, apptainer's status depends on timing: the
	 * starter dies of it, exits 128+N for the container's death, or 255
	 * when the signal came during container setup.  Report the signal
	 * that ended the attempt instead. */
	if (p != NULL && (p->timed_out || p->cancelled) && p->last_sig != 0 &&
	    r->state != VG_ST_SUCCEEDED) {
		r->exit_code = -1;
		r->signal = p->last_sig;
	}
	if (p != NULL && p->timed_out) {
		r->state = VG_ST_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason), "timed out after %g s",
		    a->timeout);
	} else if (p != NULL && p->cancelled &&
	    r->state != VG_ST_SUCCEEDED) {
		r->state = VG_ST_CANCELLED;
		snprintf(r->reason, sizeof(r->reason), "cancelled");
	}
	if (p != NULL && p->env_file != NULL) {
		(void)unlink(p->env_file);
		free(p->env_file);
		p->env_file = NULL;
	}
	if (p != NULL && p->scratch != NULL) {
		vg_err_init(&local);
		if (vg_scratch_finish(p->scratch, a->m->scratch.keep,
		    r->state == VG_ST_SUCCEEDED, &local) != 0)
			return vg_err_set(e, local.rc, "scratch: %s",
			    local.msg);
		free(p->scratch);
		p->scratch = NULL;
	}
	return 0;
}

/* backend op: cancel; the local shim signals the whole tree. */
static int
singularity_cancel(struct vg_attempt *a, int sig, struct vg_err *e)
{
	struct sing_priv *p = a->priv;

	if (a->pid <= 0 || p == NULL)
		return 0;
	p->cancelled = 1;
	p->last_sig = sig;
	return vg_local_proc_signal(a, p->lp, sig, e);
}

/* backend op: cleanup */
static void
singularity_cleanup(struct vg_attempt *a)
{
	priv_free(a->priv);
	a->priv = NULL;
}

/* backend op: run (blocking; honours a->timeout, SIGTERM, SIGINT and
 * SIGHUP through the local backend's wait) */
static int
singularity_run(struct vg_attempt *a, struct vg_result *r, struct vg_err *e)
{
	struct sing_priv *p;
	int ws = 0, why = 0, rc;

	if ((rc = singularity_start(a, e)) != 0)
		return rc;
	p = a->priv;
	rc = vg_local_proc_wait(a, p->lp, &ws, &why, e);
	if (rc == 0) {
		p->timed_out = why == VG_ST_TIMEOUT;
		p->cancelled = why == VG_ST_CANCELLED;
		rc = singularity_finish(a, ws, r, e);
	}
	singularity_cleanup(a);
	if (a->pidfd >= 0) {
		close(a->pidfd);
		a->pidfd = -1;
	}
	return rc;
}

/*
 * backend op: prepare; once per run, finds the binary and resolves the
 * image, so that a reference is pulled (once, under the cache's lock)
 * before the first task starts instead of inside it.  The pin is dropped
 * again: each attempt takes its own.  With isolation.network none or an
 * allow-list, the drive's handle says which network tasks start in (an
 * allow-list's proxy started here); both need root, refused here
 * otherwise.
 */
static int
singularity_prepare(const struct vg_manifest *m, const char *run_dir,
    struct vg_backend_drive **out, struct vg_err *e)
{
	static const struct vg_egress_run none = VG_EGRESS_RUN_INIT;
	enum vg_net_mode net = vg_isolation_net(&m->isolation);
	struct vg_cache_pin *pin = NULL;
	struct vg_resources peak;
	struct sing_drive *sd;
	char *binary = NULL, *image = NULL;
	int rc;

	vg_expand_peak(m, &peak);
	if ((rc = vg_singularity_find(vg_singularity_of(m)->binary, &binary,
	    e)) == 0 && (rc = binary_check(m, binary, e)) == 0)
		rc = resolve_image(m, binary, vg_now() + need_for(m->timeout,
		    peak.time), &image, &pin, e);
	vg_cache_unpin(pin);
	free(binary);
	free(image);
	if (rc != 0 || m->isolation.level == VG_ISO_NONE ||
	    (net != VG_NET_NONE && net != VG_NET_ALLOW))
		return rc;
	if (!vg_host_caps()->root)
		return vg_err_set(e, VG_EUNSUPPORTED, "isolation.network '%s' "
		    "with backend singularity needs vigil to run as root: it "
		    "starts apptainer in a network namespace of its own "
		    "(docs/egress.md); use network host or run as root",
		    vg_net_mode_name(net));
	sd = vg_xcalloc(1, sizeof(*sd));
	sd->base.ops = &vg_backend_singularity;
	sd->egress = none;
	if (net == VG_NET_NONE)
		sd->net.none = 1;
	else if ((rc = vg_egress_run_start(&m->isolation.network, run_dir,
	    &sd->egress, e)) != 0) {
		free(sd);
		return rc;
	} else
		sd->net.egress = &sd->egress;
	*out = &sd->base;
	return 0;
}

/* backend op: unprepare; stops the drive's egress proxy. */
static void
singularity_unprepare(struct vg_backend_drive *d)
{
	struct sing_drive *sd = sing_drive_of(d);

	if (sd == NULL)
		return;
	vg_egress_run_stop(&sd->egress);
	free(sd);
}

/*
 * backend op: image_id, for reuse keys (after prepare's pull): a
 * reference with the digest of the image the SIF cache last pulled for
 * it ("docker://python:3.12 sha256:..."; "(not pulled)" before a pull),
 * so a new push of the same tag is a new key; a local image with its
 * size and content hash (XXH64, read whole once per run), so a rebuilt
 * image at the same path is a new key.
 */
static int
singularity_image_id(const struct vg_manifest *m, struct vg_buf *out,
    struct vg_err *e)
{
	struct vg_cache *c = NULL;
	struct stat st;
	char digest[65], hex[17], *path = NULL;
	int fd, rc;

	vg_buf_adds(out, m->image != NULL ? m->image : "-");
	if ((rc = need_image(m, e)) != 0)
		return rc;
	if (is_ref(m->image)) {
		if ((rc = check_ref(m->image, e)) != 0 ||
		    (rc = vg_cache_open_default(vg_cache_of(m), &m->scratch,
		    &c, e)) != 0)
			return rc;
		vg_cache_ref_digest(c, m->image, digest);
		vg_cache_close(c);
		if (digest[0] != '\0')
			vg_buf_printf(out, " sha256:%s", digest);
		else
			vg_buf_adds(out, " (not pulled)");
		return 0;
	}
	if ((rc = local_image(m->image, &path, e)) != 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    vg_hash_fd_hex(fd, (uint64_t)st.st_size, hex) != 0)
		rc = vg_err_errno(e, "image '%s': cannot read it to hash it "
		    "for reuse", path);
	else
		vg_buf_printf(out, " size %lld xxh64:%s",
		    (long long)st.st_size, hex);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

/* Refuses apptainer's own network flags when isolation.network is none
 * or an allow-list: vigil chooses the network the container starts in,
 * and --net would make another (a CNI bridge, a DNS server). */
static int
net_flag_check(const struct vg_manifest *m, const char *flag,
    struct vg_err *e)
{
	static const char *const net[] = { "--net", "-n", "--network",
	    "--network-args", "--dns", NULL };
	enum vg_net_mode mode = vg_isolation_net(&m->isolation);
	size_t i, n;

	if (mode != VG_NET_NONE && mode != VG_NET_ALLOW)
		return 0;
	for (i = 0; net[i] != NULL; i++) {
		n = strlen(net[i]);
		if (strncmp(flag, net[i], n) == 0 &&
		    (flag[n] == '\0' || flag[n] == '='))
			return vg_err_set(e, VG_EINVAL, "singularity.flags: "
			    "'%s' is not allowed with isolation.network '%s': "
			    "vigil chooses the network apptainer starts in "
			    "(docs/egress.md); remove the flag or use network "
			    "host", flag, vg_net_mode_name(mode));
	}
	return 0;
}

/* backend op: validate; binds, flags, paths and the image's form (a
 * local image must exist; a reference is not fetched here). */
static int
singularity_validate(const struct vg_manifest *m, struct vg_diag *d)
{
	const struct vg_singularity_conf *c = vg_singularity_of(m);
	struct vg_loc loc;
	struct vg_err e;
	char *bind, *image, *caps;
	size_t i;
	int bad = 0;

	for (i = 0; i < c->binds.n; i++) {
		vg_err_init(&e);
		if (vg_singularity_check_bind(c->binds.v[i], &m->policy,
		    &bind, &e) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "singularity.binds[%zu]", i),
			    "singularity.binds[%zu]: %s", i, e.msg);
			bad = 1;
		}
		free(bind);
	}
	for (i = 0; i < c->flags.n; i++) {
		vg_err_init(&e);
		if (vg_singularity_check_flag(c->flags.v[i], &e) != 0 ||
		    net_flag_check(m, c->flags.v[i], &e) != 0) {
			vg_diag_add(d, vg_manifest_locf(m, &loc,
			    "singularity.flags[%zu]", i), "%s", e.msg);
			bad = 1;
		}
	}
	vg_err_init(&e);
	if (vg_singularity_check_caps(&c->add_caps, &m->policy, &caps,
	    &e) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc,
		    "singularity.add_caps"), "%s", e.msg);
		bad = 1;
	}
	free(caps);
	if (c->scratch_mount != NULL && *c->scratch_mount != '\0' &&
	    *c->scratch_mount != '/') {
		vg_diag_add(d, vg_manifest_locf(m, &loc,
		    "singularity.scratch_mount"), "singularity.scratch_mount "
		    "'%s' is not an absolute path", c->scratch_mount);
		bad = 1;
	}
	if (c->pwd != NULL && *c->pwd != '\0' && *c->pwd != '/') {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "singularity.pwd"),
		    "singularity.pwd '%s' is not an absolute path", c->pwd);
		bad = 1;
	}
	vg_err_init(&e);
	if (need_image(m, &e) != 0 || (is_ref(m->image) ?
	    check_ref(m->image, &e) : local_image(m->image, &image, &e)) != 0) {
		vg_diag_add(d, vg_manifest_locf(m, &loc, "image"), "%s",
		    e.msg);
		bad = 1;
	} else if (!is_ref(m->image)) {
		free(image);
	}
	return bad ? VG_EINVAL : 0;
}

/* plugin op host_check: the binary m names (or one in $PATH) is here. */
static void
singularity_host_check(const struct vg_manifest *m, struct vg_strv *why)
{
	char *binary = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_singularity_find(vg_singularity_of(m)->binary, &binary,
	    &e) != 0)
		vg_strv_pushf(why, "apptainer: %s", e.msg);
	free(binary);
}

/* backend op: probe, for vigil doctor. */
static void
singularity_probe(struct vg_buf *out)
{
	char *binary = NULL, *version = NULL;
	struct vg_err e;

	vg_err_init(&e);
	if (vg_singularity_find(NULL, &binary, &e) != 0) {
		vg_buf_printf(out, "singularity: missing (%s)\n", e.msg);
		return;
	}
	if (vg_singularity_version(binary, &version, &e) != 0)
		vg_buf_printf(out, "singularity: broken (%s: %s)\n", binary,
		    e.msg);
	else
		vg_buf_printf(out, "singularity: ok %s (%s)\n", version,
		    binary);
	free(binary);
	free(version);
}

static const struct vg_msection *const singularity_sections[] = {
	&vg_singularity_msection, &vg_cache_msection, NULL
};

/* ------------------------------------------------------------------ */
/* Sessions: an apptainer instance per session                        */
/* ------------------------------------------------------------------ */

/*
 * A session is `apptainer instance start` of the image, named after the
 * session, with the session directory bound at its host path and the
 * confinement flags of a task (--no-privs always); each command is
 * `apptainer exec instance://NAME` of the session wrapper, started like a
 * task (vg_local_proc_start, tree kill only) and followed through its
 * output files.  A command's processes live in the instance's PID
 * namespace, outside the tree of the exec process, so a timeout first
 * runs the tree kill inside the instance.  Close is `instance stop -F`.
 * The session's environment goes through APPTAINERENV_ variables, which
 * --cleanenv keeps.
 */

/* The instance name of a session: [A-Za-z0-9_.-], from the id alone. */
static char *
session_instance(const struct vg_session *s)
{
	char *name = vg_xasprintf("vigil-%s", s->id), *p;

	for (p = name; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
		    *p == '-'))
			*p = '_';
	return name;
}

/*
 * Runs argv (apptainer itself) with our environment, its output in the
 * session's file log; returns its exit status, or -1 with e set.
 */
static int
session_tool(const struct vg_session *s, char *const argv[], const char *log,
    struct vg_buf *out, struct vg_err *e)
{
	char *path = vg_path_join(s->dir, log);
	int fd, nul, ws;
	pid_t pid;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || nul < 0) {
		vg_err_errno(e, "opening '%s'", path);
		goto fail;
	}
	if ((pid = fork()) < 0) {
		vg_err_errno(e, "fork");
		goto fail;
	}
	if (pid == 0) {
		if (dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	close(fd);
	close(nul);
	if (out != NULL)
		(void)vg_read_file(path, 8192, out, NULL);
	free(path);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
fail:
	if (fd >= 0)
		close(fd);
	if (nul >= 0)
		close(nul);
	free(path);
	return -1;
}

/* The last line of apptainer's output, for a message. */
static const char *
last_line(struct vg_buf *b)
{
	char *nl;

	while (b->len > 0 && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	nl = b->len > 0 ? strrchr(b->data, '\n') : NULL;
	return nl != NULL ? nl + 1 : vg_buf_str(b);
}

static int
singularity_session_open(struct vg_session *s, struct vg_err *e)
{
	const struct vg_singularity_conf *c = vg_singularity_of(s->m);
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_cache_pin *pin = NULL;
	char *binary = NULL, *image = NULL, *name = session_instance(s);
	char *caps = NULL, *bind, *work = vg_path_join(s->dir, "work");
	size_t i;
	int rc;

	if ((rc = vg_mkdir_p(work, 0700, e)) != 0 ||
	    (rc = vg_singularity_find(c->binary, &binary, e)) != 0 ||
	    (rc = resolve_image(s->m, binary, vg_now() + 86400, &image, &pin,
	    e)) != 0 || (rc = vg_singularity_check_caps(&c->add_caps,
	    &s->m->policy, &caps, e)) != 0)
		goto out;
	vg_strv_push(&argv, binary);
	vg_strv_push(&argv, "instance");
	vg_strv_push(&argv, "start");
	if (c->containall)
		vg_strv_push(&argv, "--containall");
	if (c->no_home)
		vg_strv_push(&argv, "--no-home");
	if (c->cleanenv)
		vg_strv_push(&argv, "--cleanenv");
	if (c->writable_tmpfs)
		vg_strv_push(&argv, "--writable-tmpfs");
	vg_strv_push(&argv, "--no-privs");
	if (caps != NULL) {
		vg_strv_push(&argv, "--add-caps");
		vg_strv_push(&argv, caps);
	}
	vg_strv_push(&argv, "--bind");
	vg_strv_pushf(&argv, "%s:%s", s->dir, s->dir);
	for (i = 0; i < c->binds.n; i++) {
		if ((rc = vg_singularity_check_bind(c->binds.v[i],
		    &s->m->policy, &bind, e)) != 0) {
			vg_err_prefix(e, "singularity.binds[%zu]: ", i);
			goto out;
		}
		vg_strv_push(&argv, "--bind");
		vg_strv_take(&argv, bind);
	}
	for (i = 0; i < c->flags.n; i++) {
		if ((rc = vg_singularity_check_flag(c->flags.v[i], e)) != 0)
			goto out;
		vg_strv_push(&argv, c->flags.v[i]);
	}
	vg_strv_push(&argv, image);
	vg_strv_push(&argv, name);
	rc = session_tool(s, argv.v, "instance.log", &out, e);
	if (rc != 0) {
		rc = rc < 0 ? e->rc : vg_err_set(e, VG_EBACKEND, "apptainer "
		    "instance start: %s", last_line(&out));
		goto out;
	}
	vg_strlcpy(s->handle, name, sizeof(s->handle));
	vg_strlcpy(s->root, s->dir, sizeof(s->root));
out:
	if (pin != NULL)
		vg_cache_unpin(pin);
	vg_strv_release(&argv);
	vg_buf_release(&out);
	free(binary);
	free(image);
	free(name);
	free(caps);
	free(work);
	return rc;
}

/* What a command's signal callback needs. */
struct session_kill {
	const struct vg_session		*s;
	const struct vg_session_cmd	*c;
	const char			*binary;
	pid_t				 pid;	/* apptainer exec: a group */
};

/* Signals a command: its tree inside the instance (where its processes
 * live), then the apptainer exec process group here. */
static void
session_signal(void *arg, int sig)
{
	struct session_kill *k = arg;
	struct vg_strv argv = VG_STRV_INIT;
	char *script = vg_session_kill_script(k->s->root, k->c->job, sig);

	vg_strv_push(&argv, k->binary);
	vg_strv_push(&argv, "exec");
	vg_strv_pushf(&argv, "instance://%s", k->s->handle);
	vg_strv_push(&argv, "/bin/sh");
	vg_strv_push(&argv, "-c");
	vg_strv_push(&argv, script);
	(void)session_tool(k->s, argv.v, "kill.log", NULL, NULL);
	(void)kill(-k->pid, sig);
	vg_strv_release(&argv);
	free(script);
}

/* Starts argv in a process group of its own, output to c->dir. */
static pid_t
session_spawn(const struct vg_session_cmd *c, char *const argv[],
    char *const envp[], struct vg_err *e)
{
	int fd[3];
	pid_t pid;

	fd[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fd[1] = vg_task_output_open(c->dir, 2, "stdout", 0, e);
	fd[2] = vg_task_output_open(c->dir, 2, "stderr", 0, e);
	if (fd[0] < 0 || fd[1] < 0 || fd[2] < 0)
		pid = -1;
	else if ((pid = fork()) < 0)
		vg_err_errno(e, "fork");
	else if (pid == 0) {
		if (setpgid(0, 0) != 0 || dup2(fd[0], 0) < 0 ||
		    dup2(fd[1], 1) < 0 || dup2(fd[2], 2) < 0)
			_exit(127);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	if (pid > 0)
		(void)setpgid(pid, pid);
	for (int i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return pid;
}

static int
singularity_session_exec(const struct vg_session *s,
    const struct vg_session_cmd *c, struct vg_result *r, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT, env = VG_STRV_INIT;
	struct session_kill k = { .s = s, .c = c };
	struct vg_session_cmd lc = *c;
	char *binary = NULL, tail[STDERR_TAIL];
	int rc, pidfd = -1, ws = 0, why = 0, sig = 0;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->state = VG_ST_BACKEND_ERROR;
	r->exit_code = -1;
	if ((rc = vg_singularity_find(vg_singularity_of(s->m)->binary,
	    &binary, e)) != 0)
		return rc;
	k.binary = binary;
	vg_strv_push(&argv, binary);
	vg_strv_push(&argv, "exec");
	vg_strv_pushf(&argv, "instance://%s", s->handle);
	/* The session directory is bound at its path here: the saved
	 * state is renamed into place here, not by a `mv` inside. */
	lc.commit_here = 1;
	vg_session_script(s->root, &lc, c->stdin_path, NULL, &argv);
	for (i = 0; environ[i] != NULL; i++)
		vg_strv_push(&env, environ[i]);
	for (i = 0; i < s->m->env.n; i++)
		vg_strv_pushf(&env, "APPTAINERENV_%s=%s", s->m->env.v[i].key,
		    s->m->env.v[i].value);
	vg_strv_pushf(&env, "APPTAINERENV_VIGIL_SESSION_ID=%s", s->id);
	vg_strv_pushf(&env, "APPTAINERENV_VIGIL_JOB=%s", c->job);
	r->started = vg_now();
	if ((k.pid = session_spawn(c, argv.v, env.v, e)) < 0) {
		rc = e->rc != 0 ? e->rc : VG_EIO;
		goto out;
	}
	if ((pidfd = vg_pidfd_open(k.pid)) < 0) {
		rc = vg_err_errno(e, "pidfd_open");
		(void)kill(-k.pid, SIGKILL);
	} else {
		rc = vg_local_session_follow(pidfd, c, r->started,
		    session_signal, &k, &why, &sig, e);
	}
	while (waitpid(k.pid, &ws, 0) < 0 && errno == EINTR)
		;
	r->ended = vg_now();
	if (rc != 0)
		goto out;
	stderr_tail(c->dir, tail, sizeof(tail));
	(void)vg_singularity_classify(ws, tail, r);
	vg_local_session_settle(r, why, sig);
	rc = vg_session_commit(s, &lc, r, e);
out:
	if (pidfd >= 0)
		close(pidfd);
	vg_strv_release(&argv);
	vg_strv_release(&env);
	free(binary);
	return rc;
}

static int
singularity_session_close(const struct vg_session *s, struct vg_err *e)
{
	struct vg_strv argv = VG_STRV_INIT;
	struct vg_buf out = VG_BUF_INIT;
	char *binary = NULL, *name = session_instance(s);
	int rc;

	(void)vg_local_session_close(s, NULL);
	if ((rc = vg_singularity_find(vg_singularity_of(s->m)->binary,
	    &binary, e)) != 0)
		goto out;
	vg_strv_push(&argv, binary);
	vg_strv_push(&argv, "instance");
	vg_strv_push(&argv, "stop");
	vg_strv_push(&argv, "-F");
	vg_strv_push(&argv, name);
	rc = session_tool(s, argv.v, "instance.log", &out, e);
	if (rc > 0 && strstr(vg_buf_str(&out), "no instance found") != NULL)
		rc = 0;		/* gone already */
	else if (rc != 0)
		rc = rc < 0 ? e->rc : vg_err_set(e, VG_EBACKEND, "apptainer "
		    "instance stop: %s", last_line(&out));
out:
	vg_strv_release(&argv);
	vg_buf_release(&out);
	free(binary);
	free(name);
	return rc;
}

const struct vg_backend_ops vg_backend_singularity = {
	.caps = VG_BCAP_STDIN_STREAM,
	.p = {
		.kind = VG_PLUGIN_BACKEND,
		.name = "singularity",
		.alias = "apptainer",
		.flags = VG_PLUGIN_IMAGE | VG_PLUGIN_EGRESS |
		    VG_PLUGIN_NONET | VG_PLUGIN_EGRESS_RUNS |
		    VG_PLUGIN_NONET_RUNS,
		.help = "an Apptainer/Singularity container",
		.sections = singularity_sections,
		.validate = singularity_validate,
		.host_check = singularity_host_check,
	},
	.probe = singularity_probe,
	.prepare = singularity_prepare,
	.unprepare = singularity_unprepare,
	.image_id = singularity_image_id,
	.start = singularity_start,
	.finish = singularity_finish,
	.cancel = singularity_cancel,
	.cleanup = singularity_cleanup,
	.run = singularity_run,
	/* Sessions: the block above. */
	.session_open = singularity_session_open,
	.session_exec = singularity_session_exec,
	.session_close = singularity_session_close,
};

/* ---- the singularity: section ---- */

/* singularity.binds: "src[:dst[:ro|rw]]". */
static void
check_binds(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	(void)f;
	vg_schema_check_mounts(n, p, c, 0);
}

static const struct vg_section singularity_section = {
	.name = "singularity",
	.fields = (const struct vg_field[]){
		STR(vg_singularity_conf, "binary", binary,
		    "apptainer or singularity program"),
		BOOL(vg_singularity_conf, "containall", containall, "true",
		    "--containall"),
		BOOL(vg_singularity_conf, "no_home", no_home, "true",
		    "--no-home"),
		BOOL(vg_singularity_conf, "cleanenv", cleanenv, "true",
		    "--cleanenv"),
		BOOL(vg_singularity_conf, "writable_tmpfs", writable_tmpfs,
		    "false", "--writable-tmpfs"),
		{ .key = "binds", .type = VG_F_STRV,
		  .off = OFF(vg_singularity_conf, binds), .check = check_binds,
		  .help = "SOURCE[:/DEST[:ro]] binds" },
		STRDEF(vg_singularity_conf, "scratch_mount", scratch_mount,
		    "/scratch", "where scratch appears inside"),
		STR(vg_singularity_conf, "pwd", pwd, "--pwd"),
		STRV(vg_singularity_conf, "flags", flags, "extra flags"),
		STRV(vg_singularity_conf, "add_caps", add_caps,
		    "capabilities given back after --no-privs (host access)"),
		{ .key = NULL },
	},
};

const struct vg_msection vg_singularity_msection = {
	.key = "singularity",
	.alias = "apptainer",
	.schema = &singularity_section,
	.size = sizeof(struct vg_singularity_conf),
	.help = "singularity/apptainer backend",
};
