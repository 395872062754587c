/*
 * session.c - what every backend's sessions share: the wrappers around
 * the optional session ops, the shell wrapper that makes a series of
 * `sh -c` commands behave as one persistent shell, the tree kill for
 * sandboxes where vigil holds no handle on a command's processes, and
 * the copy of a command's output to its whole file and onward.
 *
 * The wrapper keeps a session's shell state in one file of the session
 * directory in the sandbox: env, the `export -p` of the last foreground
 * command's shell when it ended, its working directory included as
 * __VG_CWD.  Each command is a fresh `/bin/sh -c` that sources env,
 * enters that directory, evals the command in that same shell and, on
 * exit (a trap, so `exit 3` keeps its status), writes env again through
 * a temporary file and a rename, so a command killed half way leaves the
 * previous state whole.  Where the sandbox sees the session directory at
 * its path on this host (local, docker, singularity: c->commit_here),
 * the shell writes the state into the job's own directory instead, with
 * a last line of its own, and vigil renames it over env when the command
 * ended (vg_session_commit): the same atomic replacement without a
 * fork and exec of mv in the sandbox.  cwd holds a plain copy of the
 * directory for the gate's path context.  Shell functions, aliases,
 * unexported variables and shell options do not persist (a subshell
 * would not keep them either); docs/sessions.md says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "common/beneath.h"
#include "common/buf.h"
#include "common/path.h"

int
vg_backend_has_sessions(const struct vg_backend_ops *ops)
{
	return ops != NULL && ops->session_open != NULL &&
	    ops->session_exec != NULL && ops->session_close != NULL;
}

int
vg_backend_session_open(const struct vg_backend_ops *ops,
    struct vg_session *s, struct vg_err *e)
{
	if (!vg_backend_has_sessions(ops))
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' has no "
		    "sessions", ops->p.name);
	return ops->session_open(s, e);
}

int
vg_backend_session_exec(const struct vg_backend_ops *ops,
    const struct vg_session *s, const struct vg_session_cmd *c,
    struct vg_result *r, struct vg_err *e)
{
	if (!vg_backend_has_sessions(ops))
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' has no "
		    "sessions", ops->p.name);
	return ops->session_exec(s, c, r, e);
}

int
vg_backend_session_close(const struct vg_backend_ops *ops,
    const struct vg_session *s, struct vg_err *e)
{
	if (!vg_backend_has_sessions(ops))
		return vg_err_set(e, VG_EUNSUPPORTED, "backend '%s' has no "
		    "sessions", ops->p.name);
	return ops->session_close(s, e);
}

/* The last line of the state a wrapper saves for vg_session_commit (a
 * no-op when the next command sources it). */
#define SAVED_LINE	": vigil-saved"

/* Appends root as one shell word; a leading "~/" is "$HOME". */
static void
root_word(struct vg_buf *b, const char *root)
{
	if (root[0] == '~' && root[1] == '/') {
		vg_buf_adds(b, "\"$HOME\"/");
		vg_buf_squote(b, root + 2);
	} else {
		vg_buf_squote(b, root);
	}
}

void
vg_session_script(const char *root, const struct vg_session_cmd *c,
    const char *stdin_in, const char *const *keep, struct vg_strv *out)
{
	struct vg_buf w = VG_BUF_INIT, u = VG_BUF_INIT;
	size_t i;

	vg_buf_adds(&w, "__vg_r=");
	root_word(&w, root);
	vg_buf_adds(&w, "; __vg_d=\"$__vg_r/cmds/\"");
	vg_buf_squote(&w, c->job);
	vg_buf_adds(&w, "\n[ -d \"$__vg_d\" ] || mkdir -p \"$__vg_d\"\n");
	if (!c->tree_held)
		vg_buf_adds(&w, "echo $$ >\"$__vg_d/pid\"\n");
	vg_buf_adds(&w, "[ -d \"$__vg_r/work\" ] || "
	    "mkdir -p \"$__vg_r/work\"\n");
	/* Per-command variables survive the source of the saved state. */
	for (i = 0; keep != NULL && keep[i] != NULL; i++)
		vg_buf_printf(&w, "__vg_k%zu=${%s-}\n", i, keep[i]);
	vg_buf_adds(&w, "[ -f \"$__vg_r/env\" ] && . \"$__vg_r/env\"\n");
	for (i = 0; keep != NULL && keep[i] != NULL; i++)
		vg_buf_printf(&w, "[ -n \"$__vg_k%zu\" ] && export %s=\"$__vg_"
		    "k%zu\"\n", i, keep[i], i);
	if (c->save && c->commit_here)
		vg_buf_adds(&w, "__vg_e=\"$__vg_d/env\"\n");
	/* __vg_p: the directory cwd already names (a cd back to the
	 * saved one), so that an unchanged cwd is not written again. */
	vg_buf_adds(&w, "if [ -n \"${__VG_CWD-}\" ] && cd -- \"$__VG_CWD\" "
	    "2>/dev/null; then __vg_p=$PWD; else __vg_p=; cd -- ");
	if (c->workdir != NULL && c->workdir[0] != '\0')
		vg_buf_squote(&w, c->workdir);
	else
		vg_buf_adds(&w, "\"$__vg_r/work\"");
	vg_buf_adds(&w, " || exit 126; fi\n"
	    "unset __VG_CWD\n"
	    "__vg_c=$1; shift\n");
	/* One file, one rename: the cwd travels in the export list; cwd
	 * alone is a copy for the gate's path context. */
	/* The per-command variables are not state: unset before the save
	 * (vigil gives them again), so that a command that changes nothing
	 * saves what it found. */
	for (i = 0; keep != NULL && keep[i] != NULL; i++)
		vg_buf_printf(&u, "[ -z \"$__vg_k%zu\" ] || unset %s; ", i,
		    keep[i]);
	if (c->save && c->commit_here)
		vg_buf_printf(&w, "trap '__vg_s=$?; %sexport __VG_CWD=\"$PWD\"; "
		    "{ export -p && echo \"%s\"; } >\"$__vg_e\" && "
		    "{ [ \"$PWD\" = \"$__vg_p\" ] || printf '\\''%%s\\n'\\'' "
		    "\"$PWD\" >\"$__vg_r/cwd\"; }; exit $__vg_s' EXIT\n",
		    vg_buf_str(&u), SAVED_LINE);
	else if (c->save)
		vg_buf_printf(&w, "trap '__vg_s=$?; %sexport __VG_CWD=\"$PWD\"; "
		    "export -p >\"$__vg_r/env.$$\" && mv -f \"$__vg_r/env.$$\" "
		    "\"$__vg_r/env\"; [ \"$PWD\" = \"$__vg_p\" ] || "
		    "printf '\\''%%s\\n'\\'' \"$PWD\" >\"$__vg_r/cwd\"; "
		    "exit $__vg_s' EXIT\n", vg_buf_str(&u));
	vg_buf_adds(&w, "exec <");
	root_word(&w, stdin_in != NULL ? stdin_in : "/dev/null");
	vg_buf_adds(&w, "\nunset __vg_d __vg_w\neval \"$__vg_c\"\n");
	vg_strv_push(out, "/bin/sh");
	vg_strv_push(out, "-c");
	vg_strv_push(out, vg_buf_str(&w));
	vg_strv_push(out, "vigil-session");
	vg_strv_push(out, c->command);
	vg_buf_release(&w);
	vg_buf_release(&u);
}

/* True when the open file fa (of size n) and the file "env" of the
 * directory dfd hold the same bytes. */
static int
same_file(int fa, int dfd, size_t n)
{
	struct vg_buf x = VG_BUF_INIT, y = VG_BUF_INIT;
	int fb, same;

	if ((fb = vg_beneath_file(dfd, "env", O_RDONLY, 0, "the session",
	    NULL)) < 0)
		return 0;
	same = vg_read_fd(fb, "env", n, &y, NULL) == 0 && y.len == n &&
	    lseek(fa, 0, SEEK_SET) == 0 &&
	    vg_read_fd(fa, "env", n, &x, NULL) == 0 && x.len == n &&
	    memcmp(x.data, y.data, n) == 0;
	close(fb);
	vg_buf_release(&x);
	vg_buf_release(&y);
	return same;
}

int
vg_session_commit(const struct vg_session *s, const struct vg_session_cmd *c,
    const struct vg_result *r, struct vg_err *e)
{
	static const char tail[] = "\n" SAVED_LINE "\n";
	char end[sizeof(tail) - 1];
	struct stat st;
	int fd, jfd, sfd, ok = 0, rc = 0;

	if (!c->save || !c->commit_here || r->state == VG_ST_TIMEOUT ||
	    r->state == VG_ST_CANCELLED || r->state == VG_ST_BACKEND_ERROR)
		return 0;
	/* The job's directory and the session's are the commands' to
	 * write: both through descriptors, no link followed (a command
	 * could point cmds/JOB at another session's files). */
	if ((sfd = vg_beneath_anchor(s->dir, e)) < 0)
		return sfd;
	if ((jfd = vg_beneath_dir_in(c->dir, 2, e)) < 0) {
		close(sfd);
		return jfd;
	}
	/* Whole only when the line written after `export -p` is there:
	 * a shell killed while saving leaves a file without it. */
	if ((fd = vg_beneath_file(jfd, "env", O_RDONLY, 0, "the job",
	    NULL)) >= 0) {
		ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size >= (off_t)sizeof(end) &&
		    pread(fd, end, sizeof(end), st.st_size -
		    (off_t)sizeof(end)) == (ssize_t)sizeof(end) &&
		    memcmp(end, tail, sizeof(end)) == 0;
		/* A state equal to the session's stays where it is: a
		 * rename over env would free a block (a discard, on some
		 * disks). */
		if (ok && same_file(fd, sfd, (size_t)st.st_size))
			ok = 0;
		close(fd);
	}
	if (ok && renameat(jfd, "env", sfd, "env") != 0)
		rc = vg_err_errno(e, "keeping the state of job %s in '%s/env'",
		    c->job, s->dir);
	close(jfd);
	close(sfd);
	return rc;
}

/* Appends __vg_kill SIG PIDFILE: kills the tree whose top's pid is in
 * PIDFILE, walking /proc/PID/status for children. */
static void
kill_function(struct vg_buf *b)
{
	vg_buf_adds(b, "__vg_kill() {\n"
	    "  read -r t <\"$2\" 2>/dev/null || return 0\n"
	    "  all=$t; new=$t\n"
	    "  while [ -n \"$new\" ]; do\n"
	    "    next=\n"
	    "    for p in /proc/[0-9]*; do\n"
	    "      pp=\n"
	    "      while read -r k v; do\n"
	    "        [ \"$k\" = PPid: ] && { pp=$v; break; }\n"
	    "      done 2>/dev/null <\"$p/status\"\n"
	    "      for n in $new; do\n"
	    "        [ \"$pp\" = \"$n\" ] && next=\"$next ${p#/proc/}\"\n"
	    "      done\n"
	    "    done\n"
	    "    all=\"$all $next\"; new=$next\n"
	    "  done\n"
	    "  kill -\"$1\" $all 2>/dev/null\n"
	    "  return 0\n"
	    "}\n");
}

char *
vg_session_kill_script(const char *root, const char *job, int sig)
{
	struct vg_buf b = VG_BUF_INIT;

	kill_function(&b);
	vg_buf_printf(&b, "__vg_kill %d ", sig);
	root_word(&b, root);
	vg_buf_adds(&b, "/cmds/");
	vg_buf_squote(&b, job);
	vg_buf_adds(&b, "/pid\nexit 0\n");
	return vg_buf_detach(&b);
}

char *
vg_session_close_script(const char *root_word)
{
	struct vg_buf b = VG_BUF_INIT;

	kill_function(&b);
	vg_buf_printf(&b, "for f in %s", root_word);
	vg_buf_printf(&b, "/cmds/*/pid; do [ -f \"$f\" ] && __vg_kill %d "
	    "\"$f\"; done\n", SIGKILL);
	return vg_buf_detach(&b);
}

int
vg_session_output(const struct vg_session_cmd *c, int fd, int stream,
    const char *p, size_t n, struct vg_err *e)
{
	if (fd >= 0 && vg_write_all(fd, p, n) != 0)
		return vg_err_errno(e, "writing the output of job %s", c->job);
	if (c->out != NULL && n > 0)
		c->out(c->arg, stream, p, n);
	return 0;
}
