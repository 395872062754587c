/*
 * optrun.c - options that run commands.  Many programs take a command
 * line in an option ("tar --to-command=CMD", "man -P CMD"), in a
 * setting given on the command line ("git -c core.pager=CMD", "ssh -o
 * ProxyCommand=CMD"), in a script of their own language ("sed '1e
 * CMD'", "vim -c '!CMD'", "gdb -ex 'shell CMD'") or in an environment
 * variable (GIT_SSH_COMMAND, PAGER, LESSOPEN).  One table line per
 * option, each from the program's manual page; the command it names is
 * analysed as nested code, as find -exec and xargs commands are, and
 * the program itself is then classified as usual.
 */
#include <string.h>

#include "runner/policy/optrun.h"
#include "runner/policy/analyse.h"
#include "runner/policy/arena.h"
#include "runner/policy/names.h"

enum run_how {
	RUN_SHELL,	/* the value is a shell command line */
	RUN_BANG,	/* a command line after a leading '!' (git alias) */
	RUN_PIPE,	/* a command line after a leading '|' or '!' */
	RUN_PREFIXED,	/* a command line after an optional '|' or '-' */
	RUN_EXEC,	/* "exec=CMD" (tar --checkpoint-action) */
	RUN_EX,		/* vi/ex commands: "!CMD", "r !CMD", system("CMD") */
	RUN_GDB,	/* gdb commands: "shell CMD", "!CMD", "pipe X | CMD" */
	RUN_SED,	/* a sed script: "e CMD", "s/.*\/CMD/e" */
	RUN_MAKE,	/* makefile text: recipes and $(shell CMD) */
	RUN_ARGV,	/* the words after the option, up to ";" */
	RUN_REST,	/* the operands after the option, joined, run by sh */
	RUN_OPERAND,	/* the flag makes the first operand a command line */
	RUN_LAST,	/* without "--", the last operand is a command line */
};

/*
 * prog: the program; sub: the subcommand the option belongs to (NULL:
 * before any subcommand); opt: the option, in every form getopt takes
 * ("--opt=V", "--opt V", "-oV", "-o V", "-xo V"), "+" for vim's +CMD,
 * NULL for a script given as an operand (sed) or the last operand;
 * key: for KEY=VALUE settings, the key (a case-insensitive glob).
 */
struct optrun {
	const char	*prog;
	const char	*sub;
	const char	*opt;
	const char	*key;
	enum run_how	 how;
};

static const struct optrun optruns[] = {
	/* git(1) -c NAME=VALUE, git-config(1): settings naming commands */
	{ "git", NULL, "-c", "core.pager", RUN_SHELL },
	{ "git", NULL, "-c", "core.editor", RUN_SHELL },
	{ "git", NULL, "-c", "core.sshcommand", RUN_SHELL },
	{ "git", NULL, "-c", "core.fsmonitor", RUN_SHELL },
	{ "git", NULL, "-c", "core.askpass", RUN_SHELL },
	{ "git", NULL, "-c", "core.gitproxy", RUN_SHELL },
	{ "git", NULL, "-c", "sequence.editor", RUN_SHELL },
	{ "git", NULL, "-c", "diff.external", RUN_SHELL },
	{ "git", NULL, "-c", "diff.*.command", RUN_SHELL },
	{ "git", NULL, "-c", "diff.*.textconv", RUN_SHELL },
	{ "git", NULL, "-c", "merge.*.driver", RUN_SHELL },
	{ "git", NULL, "-c", "filter.*.clean", RUN_SHELL },
	{ "git", NULL, "-c", "filter.*.smudge", RUN_SHELL },
	{ "git", NULL, "-c", "filter.*.process", RUN_SHELL },
	{ "git", NULL, "-c", "pager.*", RUN_SHELL },
	{ "git", NULL, "-c", "alias.*", RUN_BANG },
	{ "git", NULL, "-c", "credential.helper", RUN_BANG },
	{ "git", NULL, "-c", "credential.*.helper", RUN_BANG },
	{ "git", NULL, "-c", "gpg.program", RUN_SHELL },
	{ "git", NULL, "-c", "gpg.*.program", RUN_SHELL },
	{ "git", NULL, "-c", "difftool.*.cmd", RUN_SHELL },
	{ "git", NULL, "-c", "mergetool.*.cmd", RUN_SHELL },
	{ "git", NULL, "-c", "browser.*.cmd", RUN_SHELL },
	{ "git", NULL, "-c", "sendemail.sendmailcmd", RUN_SHELL },
	{ "git", NULL, "-c", "uploadpack.packobjectshook", RUN_SHELL },
	{ "git", NULL, "-c", "remote.*.uploadpack", RUN_SHELL },
	{ "git", NULL, "-c", "remote.*.receivepack", RUN_SHELL },
	{ "git", NULL, "-c", "core.alternaterefscommand", RUN_SHELL },
	{ "git", NULL, "-c", "gpg.ssh.defaultkeycommand", RUN_SHELL },
	{ "git", NULL, "-c", "guitool.*.cmd", RUN_SHELL },
	{ "git", NULL, "-c", "interactive.difffilter", RUN_SHELL },
	{ "git", NULL, "-c", "trailer.*.cmd", RUN_SHELL },
	{ "git", NULL, "-c", "trailer.*.command", RUN_SHELL },
	/* git subcommands' options (git-rebase(1), git-filter-branch(1),
	 * git-bisect(1), git-submodule(1), git-difftool(1), git-fetch(1),
	 * git-clone(1), git-push(1), git-ls-remote(1)) */
	{ "git", "rebase", "--exec", NULL, RUN_SHELL },
	{ "git", "rebase", "-x", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--env-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--tree-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--index-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--parent-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--msg-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--commit-filter", NULL, RUN_SHELL },
	{ "git", "filter-branch", "--tag-name-filter", NULL, RUN_SHELL },
	{ "git", "bisect", "run", NULL, RUN_ARGV },
	{ "git", "submodule", "foreach", NULL, RUN_REST },
	{ "git", "difftool", "--extcmd", NULL, RUN_SHELL },
	{ "git", "difftool", "-x", NULL, RUN_SHELL },
	{ "git", "clone", "--upload-pack", NULL, RUN_SHELL },
	{ "git", "clone", "-u", NULL, RUN_SHELL },
	{ "git", "fetch", "--upload-pack", NULL, RUN_SHELL },
	{ "git", "pull", "--upload-pack", NULL, RUN_SHELL },
	{ "git", "ls-remote", "--upload-pack", NULL, RUN_SHELL },
	{ "git", "push", "--receive-pack", NULL, RUN_SHELL },
	{ "git", "push", "--exec", NULL, RUN_SHELL },
	{ "git", "archive", "--exec", NULL, RUN_SHELL },
	/* hg(1) --config SECTION.NAME=VALUE, hgrc(5) */
	{ "hg", NULL, "--config", "alias.*", RUN_BANG },
	{ "hg", NULL, "--config", "hooks.*", RUN_SHELL },
	{ "hg", NULL, "--config", "ui.editor", RUN_SHELL },
	{ "hg", NULL, "--config", "ui.ssh", RUN_SHELL },
	{ "hg", NULL, "--config", "pager.pager", RUN_SHELL },
	/* svn(1) --config-option FILE:SECTION:OPTION=VALUE */
	{ "svn", NULL, "--config-option", "config:tunnels:*", RUN_SHELL },
	{ "svn", NULL, "--config-option", "config:helpers:*-cmd", RUN_SHELL },
	/* apt-get(8) and apt(8) -o, apt.conf(5): hooks around dpkg */
	{ "apt-get", NULL, "-o", "dpkg::*-invoke*", RUN_SHELL },
	{ "apt-get", NULL, "-o", "dpkg::pre-install-pkgs*", RUN_SHELL },
	{ "apt-get", NULL, "-o", "apt::update::*-invoke*", RUN_SHELL },
	{ "apt", NULL, "-o", "dpkg::*-invoke*", RUN_SHELL },
	{ "apt", NULL, "-o", "dpkg::pre-install-pkgs*", RUN_SHELL },
	{ "apt", NULL, "-o", "apt::update::*-invoke*", RUN_SHELL },
	/* ssh(1), scp(1), sftp(1) -o, ssh_config(5) */
	{ "ssh", NULL, "-o", "proxycommand", RUN_SHELL },
	{ "ssh", NULL, "-o", "localcommand", RUN_SHELL },
	{ "ssh", NULL, "-o", "knownhostscommand", RUN_SHELL },
	{ "ssh", NULL, "-o", "remotecommand", RUN_SHELL },
	{ "scp", NULL, "-o", "proxycommand", RUN_SHELL },
	{ "scp", NULL, "-o", "localcommand", RUN_SHELL },
	{ "scp", NULL, "-o", "knownhostscommand", RUN_SHELL },
	{ "scp", NULL, "-S", NULL, RUN_SHELL },
	{ "sftp", NULL, "-o", "proxycommand", RUN_SHELL },
	{ "sftp", NULL, "-o", "localcommand", RUN_SHELL },
	{ "sftp", NULL, "-o", "knownhostscommand", RUN_SHELL },
	{ "sftp", NULL, "-S", NULL, RUN_SHELL },
	{ "sftp", NULL, "-D", NULL, RUN_SHELL },
	/* rsync(1) */
	{ "rsync", NULL, "-e", NULL, RUN_SHELL },
	{ "rsync", NULL, "--rsh", NULL, RUN_SHELL },
	{ "rsync", NULL, "--rsync-path", NULL, RUN_SHELL },
	/* tar(1) (GNU) */
	{ "tar", NULL, "--checkpoint-action", NULL, RUN_EXEC },
	{ "tar", NULL, "--to-command", NULL, RUN_SHELL },
	{ "tar", NULL, "--use-compress-program", NULL, RUN_SHELL },
	{ "tar", NULL, "-I", NULL, RUN_SHELL },
	{ "tar", NULL, "--info-script", NULL, RUN_SHELL },
	{ "tar", NULL, "--new-volume-script", NULL, RUN_SHELL },
	{ "tar", NULL, "-F", NULL, RUN_SHELL },
	{ "tar", NULL, "--rsh-command", NULL, RUN_SHELL },
	/* zip(1) */
	{ "zip", NULL, "-TT", NULL, RUN_SHELL },
	{ "zip", NULL, "--unzip-command", NULL, RUN_SHELL },
	/* man(1) */
	{ "man", NULL, "-P", NULL, RUN_SHELL },
	{ "man", NULL, "--pager", NULL, RUN_SHELL },
	/* strace(1): "-o |CMD" and "-o !CMD" pipe the trace to CMD */
	{ "strace", NULL, "-o", NULL, RUN_PIPE },
	{ "strace", NULL, "--output", NULL, RUN_PIPE },
	/* gdb(1) */
	{ "gdb", NULL, "-ex", NULL, RUN_GDB },
	{ "gdb", NULL, "--ex", NULL, RUN_GDB },
	{ "gdb", NULL, "-eval-command", NULL, RUN_GDB },
	{ "gdb", NULL, "--eval-command", NULL, RUN_GDB },
	{ "gdb", NULL, "-iex", NULL, RUN_GDB },
	{ "gdb", NULL, "--iex", NULL, RUN_GDB },
	{ "gdb", NULL, "-init-eval-command", NULL, RUN_GDB },
	{ "gdb", NULL, "--init-eval-command", NULL, RUN_GDB },
	/* vim(1): -c CMD, --cmd CMD, +CMD */
	{ "vim", NULL, "-c", NULL, RUN_EX },
	{ "vim", NULL, "--cmd", NULL, RUN_EX },
	{ "vim", NULL, "+", NULL, RUN_EX },
	{ "vi", NULL, "-c", NULL, RUN_EX },
	{ "vi", NULL, "--cmd", NULL, RUN_EX },
	{ "vi", NULL, "+", NULL, RUN_EX },
	{ "nvim", NULL, "-c", NULL, RUN_EX },
	{ "nvim", NULL, "--cmd", NULL, RUN_EX },
	{ "nvim", NULL, "+", NULL, RUN_EX },
	{ "ex", NULL, "-c", NULL, RUN_EX },
	{ "ex", NULL, "--cmd", NULL, RUN_EX },
	{ "ex", NULL, "+", NULL, RUN_EX },
	{ "view", NULL, "-c", NULL, RUN_EX },
	{ "view", NULL, "+", NULL, RUN_EX },
	{ "vimdiff", NULL, "-c", NULL, RUN_EX },
	{ "vimdiff", NULL, "+", NULL, RUN_EX },
	/* sed(1) (GNU): the e command and the s///e flag */
	{ "sed", NULL, "-e", NULL, RUN_SED },
	{ "sed", NULL, "--expression", NULL, RUN_SED },
	{ "sed", NULL, NULL, NULL, RUN_SED },
	/* make(1) (GNU): --eval TEXT, -E TEXT */
	{ "make", NULL, "--eval", NULL, RUN_MAKE },
	{ "make", NULL, "-E", NULL, RUN_MAKE },
	/* tcpdump(8) -z: run on each file after rotation */
	{ "tcpdump", NULL, "-z", NULL, RUN_SHELL },
	/* rg(1) --pre: a preprocessor for every file searched */
	{ "rg", NULL, "--pre", NULL, RUN_SHELL },
	/* fd(1): -x/--exec CMD... ;, -X/--exec-batch CMD... */
	{ "fd", NULL, "-x", NULL, RUN_ARGV },
	{ "fd", NULL, "--exec", NULL, RUN_ARGV },
	{ "fd", NULL, "-X", NULL, RUN_ARGV },
	{ "fd", NULL, "--exec-batch", NULL, RUN_ARGV },
	{ "fdfind", NULL, "-x", NULL, RUN_ARGV },
	{ "fdfind", NULL, "--exec", NULL, RUN_ARGV },
	{ "fdfind", NULL, "-X", NULL, RUN_ARGV },
	{ "fdfind", NULL, "--exec-batch", NULL, RUN_ARGV },
	/* entr(1) -s: the utility is a command line for $SHELL */
	{ "entr", NULL, "-s", NULL, RUN_OPERAND },
	/* script(1) -c/--command */
	{ "script", NULL, "-c", NULL, RUN_SHELL },
	{ "script", NULL, "--command", NULL, RUN_SHELL },
	/* watchexec(1): the command after "--", or its last operand, is
	 * run by a shell */
	{ "watchexec", NULL, "--", NULL, RUN_REST },
	{ "watchexec", NULL, NULL, NULL, RUN_LAST },
	/* wget(1) --use-askpass=COMMAND */
	{ "wget", NULL, "--use-askpass", NULL, RUN_SHELL },
	/* split(1) --filter=COMMAND, sort(1) --compress-program=PROG */
	{ "split", NULL, "--filter", NULL, RUN_SHELL },
	{ "sort", NULL, "--compress-program", NULL, RUN_SHELL },
	/* dpkg-buildpackage(1): --hook-NAME=CMD, the gain-root, check and
	 * sign commands */
	{ "dpkg-buildpackage", NULL, "--hook-*", NULL, RUN_SHELL },
	{ "dpkg-buildpackage", NULL, "-r", NULL, RUN_SHELL },
	{ "dpkg-buildpackage", NULL, "--root-command", NULL, RUN_SHELL },
	{ "dpkg-buildpackage", NULL, "--check-command", NULL, RUN_SHELL },
	{ "dpkg-buildpackage", NULL, "-p", NULL, RUN_SHELL },
	{ "dpkg-buildpackage", NULL, "--sign-command", NULL, RUN_SHELL },
	/* mysql(1), mariadb(1) --pager=CMD */
	{ "mysql", NULL, "--pager", NULL, RUN_SHELL },
	{ "mariadb", NULL, "--pager", NULL, RUN_SHELL },
};

#define NOPTRUNS (sizeof(optruns) / sizeof(optruns[0]))

/* Environment variables whose value programs run: man(1), git(1),
 * less(1), rsync(1), ssh(1), sudo(8), systemctl(1), crontab(1). */
static const struct optrun envruns[] = {
	{ "EDITOR", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_ASKPASS", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_EDITOR", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_EXTERNAL_DIFF", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_PAGER", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_PROXY_COMMAND", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_SEQUENCE_EDITOR", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_SSH", NULL, NULL, NULL, RUN_SHELL },
	{ "GIT_SSH_COMMAND", NULL, NULL, NULL, RUN_SHELL },
	{ "LESSCLOSE", NULL, NULL, NULL, RUN_SHELL },
	{ "LESSOPEN", NULL, NULL, NULL, RUN_PREFIXED },
	{ "MANPAGER", NULL, NULL, NULL, RUN_SHELL },
	{ "PAGER", NULL, NULL, NULL, RUN_SHELL },
	{ "RSYNC_CONNECT_PROG", NULL, NULL, NULL, RUN_SHELL },
	{ "RSYNC_RSH", NULL, NULL, NULL, RUN_SHELL },
	{ "SSH_ASKPASS", NULL, NULL, NULL, RUN_SHELL },
	{ "SUDO_ASKPASS", NULL, NULL, NULL, RUN_SHELL },
	{ "SUDO_EDITOR", NULL, NULL, NULL, RUN_SHELL },
	{ "SYSTEMD_EDITOR", NULL, NULL, NULL, RUN_SHELL },
	{ "SYSTEMD_PAGER", NULL, NULL, NULL, RUN_SHELL },
	{ "VISUAL", NULL, NULL, NULL, RUN_SHELL },
};

#define NENVRUNS (sizeof(envruns) / sizeof(envruns[0]))

static const void *oslots[NOPTRUNS];
static struct pl_names onames = PL_NAMES(optruns, oslots);

/* Lower-case of an ASCII letter. */
static int
lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

/* Case-insensitive glob of pat ('*' any run) against s[0..n). */
static int
key_match(const char *pat, const char *s, size_t n)
{
	if (*pat == '\0')
		return n == 0;
	if (*pat == '*') {
		size_t k;

		for (k = 0; k <= n; k++)
			if (key_match(pat + 1, s + k, n - k))
				return 1;
		return 0;
	}
	return n > 0 && lower((unsigned char)*pat) ==
	    lower((unsigned char)*s) && key_match(pat + 1, s + 1, n - 1);
}

/* Analyses s[0..n) as a shell command line run on behalf of c. */
static void
nested(struct pl_an *an, const struct pl_cmd *c, const char *s, size_t n)
{
	struct pl_stream in, out;

	while (n > 0 && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (n == 0 || an->over)
		return;
	pl_stream_unknown(&in, 0);
	pl_analyse_text(an, s, n, c->off, c->len, &in, &out);
}

/* A command line only known when the program reads its input. */
static void
input_code(struct pl_an *an, const struct pl_cmd *c, const char *what)
{
	pl_find(an, VG_CAT_OBFUSCATION, "builtin:input-command", c->off,
	    c->len, "'%s' runs %s as commands", c->name, what);
}

/* ---- sed scripts ---- */

/* Index past the sed address or addresses (and '!') at s[i]. */
static size_t
sed_addr(const char *s, size_t n, size_t i)
{
	int k;

	for (k = 0; k < 2; k++) {
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '$' ||
		    s[i] == '+' || s[i] == '~')) {
			for (i++; i < n && ((s[i] >= '0' && s[i] <= '9') ||
			    s[i] == '~'); i++)
				;
		} else if (i < n && (s[i] == '/' || (s[i] == '\\' &&
		    i + 1 < n))) {
			char d = s[i] == '\\' ? s[++i] : '/';

			for (i++; i < n && s[i] != d; i++)
				if (s[i] == '\\')
					i++;
			for (i++; i < n && (s[i] == 'I' || s[i] == 'M'); i++)
				;
		} else {
			break;
		}
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (k > 0 || i >= n || s[i] != ',')
			break;
		i++;
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '!'))
		i++;
	return i;
}

/* Index of the end of a sed argument starting at s[i]: the end of the
 * line (with backslash-newline continuations for a, i and c), or also
 * ';' and '}' for labels and numbers (stop_semi). */
static size_t
sed_arg_end(const char *s, size_t n, size_t i, int stop_semi)
{
	for (; i < n && s[i] != '\n'; i++) {
		if (stop_semi && (s[i] == ';' || s[i] == '}'))
			break;
		if (!stop_semi && s[i] == '\\' && i + 1 < n)
			i++;
	}
	return i;
}

/* Index of the delimiter d closing the part that starts at s[i]. */
static size_t
sed_part(const char *s, size_t n, size_t i, char d)
{
	for (; i < n && s[i] != d; i++)
		if (s[i] == '\\' && i + 1 < n)
			i++;
	return i;
}

/* s/RE/REP/e: the pattern space after the substitution is run.  It is
 * REP exactly when RE matches the whole line and REP holds no '&' or
 * back-reference; otherwise it is made of the input. */
static void
sed_subst_exec(struct pl_an *an, const struct pl_cmd *c, const char *re,
    size_t rl, const char *rep, size_t pl)
{
	static const char *const whole[] = { ".*", "^.*", ".*$", "^.*$",
	    NULL };
	char *cmd = pl_alloc(an->a, pl + 1);
	size_t i, m = 0;
	int k, w = 0;

	for (k = 0; whole[k] != NULL; k++)
		if (strlen(whole[k]) == rl && memcmp(whole[k], re, rl) == 0)
			w = 1;
	for (i = 0; i < pl && w; i++) {
		if (rep[i] == '&' || (rep[i] == '\\' && i + 1 < pl &&
		    rep[i + 1] >= '0' && rep[i + 1] <= '9'))
			w = 0;
		else if (rep[i] == '\\' && i + 1 < pl)
			cmd[m++] = rep[++i] == 'n' ? '\n' : rep[i];
		else
			cmd[m++] = rep[i];
	}
	if (!w) {
		input_code(an, c, "its input lines (s///e)");
		return;
	}
	nested(an, c, cmd, m);
}

/* Analyses the commands a sed script runs: "e CMD" (and "e" alone,
 * which runs the pattern space) and the s command's e flag. */
static void
sed_script(struct pl_an *an, const struct pl_cmd *c, const char *s,
    size_t n)
{
	size_t i = 0, e;

	while (i < n && !an->over) {
		char cmd, d;
		size_t r0, r1, p0, p1;
		int ex = 0;

		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
		    s[i] == ';' || s[i] == '{' || s[i] == '}'))
			i++;
		if (i >= n)
			return;
		if (s[i] == '#') {
			i = sed_arg_end(s, n, i, 0);
			continue;
		}
		i = sed_addr(s, n, i);
		if (i >= n)
			return;
		cmd = s[i++];
		switch (cmd) {
		case 'e':
			e = sed_arg_end(s, n, i, 0);
			while (i < e && (s[i] == ' ' || s[i] == '\t'))
				i++;
			if (i == e)
				input_code(an, c, "its input lines (e)");
			else
				nested(an, c, s + i, e - i);
			i = e;
			break;
		case 'a': case 'i': case 'c': case 'r': case 'R': case 'w':
		case 'W':
			i = sed_arg_end(s, n, i, 0);
			break;
		case ':': case 'b': case 't': case 'T': case 'v': case 'l':
		case 'L': case 'q': case 'Q':
			i = sed_arg_end(s, n, i, 1);
			break;
		case 's': case 'y':
			if (i >= n || s[i] == '\n' || s[i] == '\\')
				return;
			d = s[i++];
			r0 = i;
			r1 = i = sed_part(s, n, i, d);
			p0 = ++i;
			if (i > n)
				return;
			p1 = i = sed_part(s, n, i, d);
			if (i++ >= n)
				return;
			for (; cmd == 's' && i < n && s[i] != ';' &&
			    s[i] != '\n' && s[i] != '}'; i++) {
				if (s[i] == 'w') {
					i = sed_arg_end(s, n, i, 0);
					break;
				}
				if (s[i] == 'e')
					ex = 1;
			}
			if (ex)
				sed_subst_exec(an, c, s + r0, r1 - r0, s + p0,
				    p1 - p0);
			break;
		default:
			if (strchr("=dDgGhHnNpPxzF", cmd) == NULL)
				return;	/* not sed as we know it */
		}
	}
}

/* The script operand of sed when no -e, --expression, -f or --file
 * gives the script. */
static const struct pl_field *
sed_operand(const struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (strcmp(s, "--") == 0)
			return i + 1 < c->argc ? &c->argv[i + 1] : NULL;
		if (s[0] != '-' || s[1] == '\0')
			return &c->argv[i];
		if (strncmp(s, "--expression", 12) == 0 ||
		    strncmp(s, "--file", 6) == 0 ||
		    (s[1] != '-' && strpbrk(s + 1, "ef") != NULL &&
		    strchr(s, 'i') == NULL))
			return NULL;
		if (strcmp(s, "-l") == 0 || strcmp(s, "--line-length") == 0)
			i++;
	}
	return NULL;
}

/* ---- vi, gdb and make command languages ---- */

/* The string literal argument of every system() or systemlist() call
 * in a vim expression s[0..n). */
static void
ex_system(struct pl_an *an, const struct pl_cmd *c, const char *s,
    size_t n)
{
	const char *p = s, *e = s + n;

	while ((p = memmem(p, (size_t)(e - p), "system", 6)) != NULL) {
		const char *q = p + 6, *v;
		char quote;

		p += 6;
		if (q + 4 <= e && memcmp(q, "list", 4) == 0)
			q += 4;
		if (q >= e || *q != '(')
			continue;
		for (q++; q < e && *q == ' '; q++)
			;
		if (q >= e || (*q != '"' && *q != '\''))
			continue;
		quote = *q++;
		for (v = q; q < e && *q != quote; q++)
			if (*q == '\\' && quote == '"')
				q++;
		if (q <= e)
			nested(an, c, v, (size_t)(q - v));
	}
}

/* True when word w[0..n) abbreviates name, at least min letters long
 * (ex command names: "sil" for "silent"). */
static int
abbrev(const char *w, size_t n, const char *name, size_t min)
{
	return n >= min && n <= strlen(name) && memcmp(w, name, n) == 0;
}

/* Analyses the shell commands of vi/ex command lines: "!CMD" (with a
 * range, a filter), "r !CMD", "w !CMD", "silent !CMD", "terminal CMD"
 * and system("CMD"). */
static void
ex_cmds(struct pl_an *an, const struct pl_cmd *c, const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && !an->over) {
		size_t w, wl, e;
		char q = 0;

		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ':' ||
		    s[i] == '|'))
			i++;
		while (i < n && ((s[i] >= '0' && s[i] <= '9') ||
		    strchr(".$%,;+-", s[i]) != NULL || s[i] == '\''))
			i += s[i] == '\'' ? 2 : 1;
		if (i >= n)
			return;
		if (s[i] == '!') {
			nested(an, c, s + i + 1, n - i - 1);
			return;
		}
		for (w = i; i < n && ((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z')); i++)
			;
		wl = i - w;
		if (i < n && s[i] == '!')
			i++;
		if (abbrev(s + w, wl, "silent", 3))
			continue;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if ((abbrev(s + w, wl, "read", 1) || abbrev(s + w, wl,
		    "write", 1)) && i < n && s[i] == '!') {
			nested(an, c, s + i + 1, n - i - 1);
			return;
		}
		if (abbrev(s + w, wl, "terminal", 3)) {
			nested(an, c, s + i, n - i);
			return;
		}
		/* Another command: up to a '|' outside quotes. */
		for (e = i; e < n && (q != 0 || s[e] != '|'); e++)
			if (s[e] == '"' || s[e] == '\'')
				q = q == 0 ? s[e] : q == s[e] ? 0 : q;
		ex_system(an, c, s + i, e - i);
		i = e;
	}
}

/* gdb commands: "shell CMD", "!CMD", "pipe GDBCMD | CMD", "| GDBCMD |
 * CMD". */
static void
gdb_cmd(struct pl_an *an, const struct pl_cmd *c, const char *s, size_t n)
{
	size_t i = 0, w;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && s[i] == '!') {
		nested(an, c, s + i + 1, n - i - 1);
		return;
	}
	for (w = i; i < n && s[i] >= 'a' && s[i] <= 'z'; i++)
		;
	if (abbrev(s + w, i - w, "shell", 3)) {
		nested(an, c, s + i, n - i);
		return;
	}
	if (abbrev(s + w, i - w, "pipe", 4) || (i == w && i < n &&
	    s[i] == '|')) {
		const char *bar = memchr(s + i + (s[i] == '|'), '|',
		    n - i - (s[i] == '|'));

		if (bar != NULL)
			nested(an, c, bar + 1, n - (size_t)(bar + 1 - s));
	}
}

/* Makefile text (make --eval): recipe lines (after a tab, or after ';'
 * on a rule line) and $(shell CMD) are run by the shell; "$$" is "$". */
static void
make_text(struct pl_an *an, const struct pl_cmd *c, const char *s,
    size_t n)
{
	const char *p = s, *e = s + n;

	while (p < e && !an->over) {
		const char *nl = memchr(p, '\n', (size_t)(e - p)), *r = NULL;
		const char *le = nl != NULL ? nl : e, *col, *q;
		char *cmd;
		size_t m = 0;

		col = memchr(p, ':', (size_t)(le - p));
		if (*p == '\t')
			r = p + 1;
		else if (col != NULL && col + 1 < le && col[1] != '=' &&
		    (q = memchr(col, ';', (size_t)(le - col))) != NULL)
			r = q + 1;
		for (q = p; (q = memmem(q, (size_t)(le - q), "$(shell ", 8)) !=
		    NULL; q += 8) {
			const char *v = q + 8, *t = v;
			int depth = 1;

			for (; t < le && depth > 0; t++)
				depth += *t == '(' ? 1 : *t == ')' ? -1 : 0;
			if (depth == 0)		/* else make refuses it */
				nested(an, c, v, (size_t)(t - v) - 1);
		}
		if (r != NULL) {
			while (r < le && (*r == '@' || *r == '-' || *r == '+' ||
			    *r == ' '))
				r++;
			cmd = pl_alloc(an->a, (size_t)(le - r) + 1);
			for (q = r; q < le; q++) {
				cmd[m++] = *q;
				if (*q == '$' && q + 1 < le && q[1] == '$')
					q++;
			}
			nested(an, c, cmd, m);
		}
		p = le + 1;
	}
}

/* ---- the table walk ---- */

/* Runs the value v[0..n) of an option as h says. */
static void
run_value(struct pl_an *an, const struct pl_cmd *c, enum run_how h,
    const char *v, size_t n)
{
	switch (h) {
	case RUN_SHELL:
		nested(an, c, v, n);
		break;
	case RUN_BANG:
		if (n > 0 && v[0] == '!')
			nested(an, c, v + 1, n - 1);
		break;
	case RUN_PIPE:
	case RUN_PREFIXED:
		if (h == RUN_PIPE && (n == 0 || (v[0] != '|' && v[0] != '!')))
			break;
		while (n > 0 && (v[0] == '|' || v[0] == '!' || v[0] == '-'))
			v++, n--;
		nested(an, c, v, n);
		break;
	case RUN_EXEC:
		if (n > 5 && memcmp(v, "exec=", 5) == 0)
			nested(an, c, v + 5, n - 5);
		break;
	case RUN_EX:
		ex_cmds(an, c, v, n);
		break;
	case RUN_GDB:
		gdb_cmd(an, c, v, n);
		break;
	case RUN_SED:
		sed_script(an, c, v, n);
		break;
	case RUN_MAKE:
		make_text(an, c, v, n);
		break;
	default:
		break;
	}
}

/* Runs a KEY=VALUE (or "KEY VALUE", ssh_config's form) setting when its
 * key matches the entry's. */
static void
run_setting(struct pl_an *an, const struct pl_cmd *c,
    const struct optrun *o, const char *v, size_t n)
{
	size_t k = 0;

	while (k < n && v[k] != '=' && v[k] != ' ' && v[k] != '\t')
		k++;
	if (k == n || !key_match(o->key, v, k))
		return;
	for (k++; k < n && (v[k] == ' ' || v[k] == '\t' || v[k] == '='); k++)
		;
	run_value(an, c, o->how, v + k, n - k);
}

/*
 * The value of option o at argv[*i]: the next word ("-o V", "--opt V",
 * and "-xo V", a cluster of flags ending in the option), or attached
 * ("-oV", "--opt=V", vim's "+V", and "--opt-NAME=V" for an option
 * "--opt-*"); *i moves past a separate value.
 * Returns 0 when argv[*i] is not the option.
 */
static int
opt_value(const struct pl_cmd *c, int *i, const char *o, const char **v,
    size_t *n)
{
	const struct pl_field *f = &c->argv[*i];
	size_t ol = strlen(o), k;
	int cluster = 1;

	if (o[0] == '+' || o[ol - 1] == '*') {
		const char *eq = memchr(f->s, '=', f->len);

		if (o[0] == '+' ? f->len < 2 || f->s[0] != '+' : eq == NULL ||
		    f->len < ol || memcmp(f->s, o, ol - 1) != 0)
			return 0;
		*v = o[0] == '+' ? f->s + 1 : eq + 1;
		*n = f->len - (size_t)(*v - f->s);
		return 1;
	}
	if (f->len == ol && memcmp(f->s, o, ol) == 0) {
		if (*i + 1 >= c->argc)
			return 0;
		++*i;
		*v = c->argv[*i].s;
		*n = c->argv[*i].len;
		return 1;
	}
	if (f->len > ol && memcmp(f->s, o, ol) == 0 && f->s[ol] == '=') {
		*v = f->s + ol + 1;
		*n = f->len - ol - 1;
		return 1;
	}
	if (ol != 2 || f->len < 3 || f->s[0] != '-' || f->s[1] == '-')
		return 0;
	for (k = 1; k < f->len; k++)
		if (!((f->s[k] >= 'a' && f->s[k] <= 'z') ||
		    (f->s[k] >= 'A' && f->s[k] <= 'Z')) ||
		    (k + 1 < f->len && f->s[k] == o[1]))
			cluster = 0;
	if (cluster && f->s[f->len - 1] == o[1] && *i + 1 < c->argc) {
		++*i;
		*v = c->argv[*i].s;
		*n = c->argv[*i].len;
		return 1;
	}
	if (f->s[1] != o[1])
		return 0;
	*v = f->s + 2;
	*n = f->len - 2;
	return 1;
}

/* Index of the subcommand of git or hg (past global options and their
 * values), or argc. */
static int
subcmd_index(const struct pl_cmd *c)
{
	static const char *const valued[] = { "-C", "-c", "--git-dir",
	    "--work-tree", "--namespace", "--config", "--config-env", "-R",
	    "--repository", "--cwd", NULL };
	int i, k;

	for (i = 1; i < c->argc; i++) {
		if (c->argv[i].s[0] != '-')
			return i;
		for (k = 0; valued[k] != NULL; k++)
			if (strcmp(c->argv[i].s, valued[k]) == 0) {
				i++;
				break;
			}
	}
	return c->argc;
}

/* Joins the words argv[from..argc) with spaces and runs them by sh. */
static void
run_joined(struct pl_an *an, const struct pl_cmd *c, int from)
{
	struct vg_buf *b;
	int k;

	if (from >= c->argc || (b = pl_buf_get(an)) == NULL)
		return;
	for (k = from; k < c->argc; k++) {
		if (k > from)
			vg_buf_addc(b, ' ');
		vg_buf_add(b, c->argv[k].s, c->argv[k].len);
	}
	nested(an, c, pl_strndup(an->a, b->data, b->len), b->len);
	pl_buf_put(an);
}

/* The forms whose command is made of words: RUN_ARGV, RUN_REST,
 * RUN_OPERAND and RUN_LAST, at argv[i] (the option). */
static void
run_words(struct pl_an *an, const struct pl_cmd *c,
    const struct optrun *o, int i)
{
	struct pl_stream in, out;
	int k;

	switch (o->how) {
	case RUN_ARGV:
		for (k = i + 1; k < c->argc && strcmp(c->argv[k].s, ";") != 0;
		    k++)
			;
		if (k > i + 1) {
			pl_stream_unknown(&in, 0);
			pl_run_argv(an, c->argv + i + 1, k - i - 1, c->off,
			    c->len, &in, &out, 0);
		}
		break;
	case RUN_REST:
		for (k = i + 1; k < c->argc && c->argv[k].s[0] == '-' &&
		    strcmp(o->opt, "--") != 0; k++)
			;
		run_joined(an, c, k);
		break;
	case RUN_OPERAND:
		for (k = 1; k < c->argc && c->argv[k].s[0] == '-'; k++)
			;
		if (k < c->argc)
			nested(an, c, c->argv[k].s, c->argv[k].len);
		break;
	default:
		break;
	}
}

/* True when argv holds the word w. */
static int
has_word(const struct pl_cmd *c, const char *w)
{
	int i;

	for (i = 1; i < c->argc; i++)
		if (strcmp(c->argv[i].s, w) == 0)
			return 1;
	return 0;
}

/* Applies one table entry to c; sub is the subcommand's index. */
static void
apply(struct pl_an *an, const struct pl_cmd *c, const struct optrun *o,
    int sub)
{
	const struct pl_field *f;
	const char *v;
	size_t n;
	int i, from = 1, to = c->argc;

	/* sed --sandbox refuses the e, r and w commands. */
	if (o->how == RUN_SED && has_word(c, "--sandbox"))
		return;
	if (o->opt == NULL) {
		if (o->how == RUN_LAST) {
			if (c->argc > 1 && !has_word(c, "--") &&
			    c->argv[c->argc - 1].s[0] != '-')
				nested(an, c, c->argv[c->argc - 1].s,
				    c->argv[c->argc - 1].len);
		} else if ((f = sed_operand(c)) != NULL) {
			run_value(an, c, o->how, f->s, f->len);
		}
		return;
	}
	if (o->sub != NULL) {
		if (sub >= c->argc || strcmp(c->argv[sub].s, o->sub) != 0)
			return;
		from = sub + 1;
	} else if (sub > 0) {
		to = sub;
	}
	for (i = from; i < to && !an->over; i++) {
		const char *s = c->argv[i].s;

		if (strcmp(s, "--") == 0 && strcmp(o->opt, "--") != 0)
			return;
		if (o->how >= RUN_ARGV) {
			if (strcmp(s, o->opt) == 0) {
				run_words(an, c, o, i);
				return;
			}
			continue;
		}
		if (!opt_value(c, &i, o->opt, &v, &n))
			continue;
		if (o->key != NULL)
			run_setting(an, c, o, v, n);
		else
			run_value(an, c, o->how, v, n);
	}
}

void
pl_optrun(struct pl_an *an, const struct pl_cmd *c)
{
	const void *const *idx;
	size_t k, j;
	int sub = 0;

	if (c->argc < 2 || (k = pl_names_first(&onames, c->name)) ==
	    NOPTRUNS)
		return;
	idx = pl_names_index(&onames);
	for (j = k; j < NOPTRUNS; j++) {
		const struct optrun *o = idx[j];

		if (strcmp(o->prog, c->name) != 0)
			break;
		if (o->sub != NULL)
			sub = subcmd_index(c);
	}
	for (; k < NOPTRUNS && !an->over; k++) {
		const struct optrun *o = idx[k];

		if (strcmp(o->prog, c->name) != 0)
			break;
		apply(an, c, o, sub);
	}
}

void
pl_optrun_env(struct pl_an *an, const struct pl_field *f, size_t off,
    size_t len)
{
	const char *eq = memchr(f->s, '=', f->len);
	struct pl_cmd c;
	size_t k, nl;

	if (eq == NULL)
		return;
	nl = (size_t)(eq - f->s);
	for (k = 0; k < NENVRUNS; k++) {
		const struct optrun *o = &envruns[k];

		if (strlen(o->prog) != nl || memcmp(o->prog, f->s, nl) != 0)
			continue;
		memset(&c, 0, sizeof(c));
		c.name = o->prog;
		c.off = off;
		c.len = len;
		run_value(an, &c, o->how, eq + 1, f->len - nl - 1);
		return;
	}
}
