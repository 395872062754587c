/*
 * classify-net.c - the classifier's handlers for the network: downloads
 * and uploads (curl, wget), nc and socat, mail and ftp, the tools that
 * read keys and credentials, and remote copies (scp, rsync, sftp).
 */
#include <stdint.h>
#include <string.h>

#include "runner/policy/arena.h"
#include "runner/policy/paths.h"
#include "runner/policy/written.h"
#include "runner/policy/classify-int.h"

/* ---- network ---- */

/* Upload arguments of curl/wget that name files or carry data. */
static void
check_upload(struct pl_an *an, struct pl_cmd *c, const struct pl_field *v,
    int isfile)
{
	struct pl_path p;
	const char *s = v->s;
	size_t n = v->len, k;

	if (v->taint & (T_SECRET | T_ENVDUMP)) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (v->taint & T_SECRET) ? "secret data" : "the environment");
		return;
	}
	if (!isfile) {
		/* -d @file, -F name=@file, -F name=<file */
		const char *at = memchr(s, '@', n);
		const char *lt = memchr(s, '<', n);

		if (at == NULL && lt == NULL)
			return;
		k = (size_t)((at ? at : lt) - s) + 1;
		s += k;
		n -= k;
		if (n > 0 && (at == v->s || lt == v->s ||
		    memchr(v->s, '=', (size_t)(s - v->s)) != NULL))
			; /* a file reference */
		else
			return;
		{
			const char *semi = memchr(s, ';', n);

			if (semi)
				n = (size_t)(semi - s);
		}
	}
	if (n == 1 && s[0] == '-') {
		if (c->in->taint & (T_SECRET | T_ENVDUMP))
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret",
			    c->off, c->len, "'%s' sends %s over the network",
			    c->name, (c->in->taint & T_SECRET) ?
			    "secret data" : "the environment");
		return;
	}
	{
		struct pl_field f = *v;

		f.s = s;
		f.len = n;
		pl_path_classify(an, &f, &p);
	}
	if ((p.attr & PA_SECRET) || (p.abs && strcmp(p.abs, "/etc/passwd") == 0))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:upload-secret", c->off,
		    c->len, "'%s' uploads '%s'", c->name, pl_pshow(&p));
}

/* Remembers a downloaded file for saved-then-run detection. */
static void
note_download(struct pl_an *an, const struct pl_field *f)
{
	struct pl_path p;

	pl_path_classify(an, f, &p);
	pl_classify_write(an, f, 0, "download");
	if (p.abs != NULL)
		pl_file_note(an, p.abs, T_NET, NULL, 0);
}

/* The file name curl -O / wget give a URL. */
static void
note_url_name(struct pl_an *an, const struct pl_field *url, const char *dir)
{
	const char *s = url->s, *e = url->s + url->len, *q, *b;
	struct pl_field f = *url;
	char *name;
	size_t dl = dir ? strlen(dir) : 0;

	q = memchr(s, '?', url->len);
	if (q)
		e = q;
	b = e;
	while (b > s && b[-1] != '/')
		b--;
	if (b == e || b == s)
		return;
	name = pl_alloc(an->a, dl + (size_t)(e - b) + 2);
	if (dl) {
		memcpy(name, dir, dl);
		name[dl++] = '/';
	}
	memcpy(name + dl, b, (size_t)(e - b));
	f.s = name;
	f.len = dl + (size_t)(e - b);
	f.flags &= ~(unsigned)F_GLOB;
	note_download(an, &f);
}

/* Splits short option clusters ("-fsSLo out") so each option that takes
 * a value stands alone; returns a new argv in the arena. */
static void
split_clusters(struct pl_an *an, struct pl_cmd *c, const char *argletters)
{
	struct pl_field *nv;
	int i, n = 0;

	nv = pl_alloc(an->a, (size_t)(c->argc * 3 + 1) * sizeof(*nv));
	for (i = 0; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i];
		size_t k;

		if (i == 0 || !pl_is_opt(f) || f->s[1] == '-' || f->len <= 2) {
			nv[n++] = *f;
			continue;
		}
		for (k = 1; k < f->len; k++)
			if (strchr(argletters, f->s[k]) != NULL)
				break;
		if (k >= f->len || (k == 1 && f->len == 2)) {
			nv[n++] = *f;
			continue;
		}
		/* "-fsS" + "-o" + value (rest of cluster or next word) */
		if (k > 1) {
			nv[n] = *f;
			nv[n].s = pl_strndup(an->a, f->s, k);
			nv[n++].len = k;
		}
		nv[n] = *f;
		nv[n].s = pl_alloc(an->a, 3);
		((char *)(uintptr_t)nv[n].s)[0] = '-';
		((char *)(uintptr_t)nv[n].s)[1] = f->s[k];
		nv[n++].len = 2;
		if (k + 1 < f->len) {
			nv[n] = *f;
			nv[n].s = pl_strndup(an->a, f->s + k + 1,
			    f->len - k - 1);
			nv[n++].len = f->len - k - 1;
		}
	}
	c->argv = nv;
	c->argc = n;
}

/* The one URL curl or wget downloads, for rules that allow a source:
 * NULL when there are several, or options that read more (a config
 * file, an input file, wget commands, curl's --next). */
static const char *
one_url(const struct pl_cmd *c, int wget)
{
	static const char *const more[] = { "--config", "--next",
	    "--input-file", "--execute", "--base", "--url-query", NULL };
	const char *url = NULL, *s;
	int i, k;

	for (i = 1; i < c->argc; i++) {
		s = c->argv[i].s;
		for (k = 0; more[k] != NULL; k++)
			if (strncmp(s, more[k], strlen(more[k])) == 0)
				return NULL;
		if (s[0] == '-' && s[1] != '-' && strpbrk(s + 1, wget ? "ieB" :
		    "K:") != NULL)
			return NULL;
		if (strstr(s, "://") == NULL)
			continue;
		if (url != NULL)
			return NULL;
		url = s;
	}
	return url;
}

void
pl_h_curl(struct pl_an *an, struct pl_cmd *c)
{
	int i, tostdout = 1, wget = strcmp(c->name, "wget") == 0;

	split_clusters(an, c, wget ? "OPoe" : "odFTHuXeAbcCDEKmrwxyYz");
	int remote_name = 0;
	const struct pl_field *odir = NULL;

	for (i = 1; i < c->argc; i++) {
		const struct pl_field *f = &c->argv[i], *v = i + 1 < c->argc ?
		    &c->argv[i + 1] : NULL;
		const char *s = f->s;

		if (!wget && (pl_eq(f, "-d") || strncmp(s, "--data", 6) == 0 ||
		    pl_eq(f, "-F") || pl_eq(f, "--form") ||
		    pl_eq(f, "--json"))) {
			if (strchr(s, '=') != NULL && s[0] == '-' && s[1] == '-')
				check_upload(an, c, pl_subfield(an, f,
				    (size_t)(strchr(s, '=') - s) + 1), 0);
			else if (v)
				check_upload(an, c, v, 0);
		} else if (!wget && (pl_eq(f, "-T") ||
		    pl_eq(f, "--upload-file"))) {
			if (v)
				check_upload(an, c, v, 1);
		} else if (!wget && (strncmp(s, "-d", 2) == 0 ||
		    strncmp(s, "-F", 2) == 0) && f->len > 2) {
			check_upload(an, c, pl_subfield(an, f, 2), 0);
		} else if (wget && (strncmp(s, "--post-file", 11) == 0 ||
		    strncmp(s, "--body-file", 11) == 0)) {
			if (s[11] == '=')
				check_upload(an, c, pl_subfield(an, f, 12), 1);
			else if (v)
				check_upload(an, c, v, 1);
		} else if (wget && (strncmp(s, "--post-data", 11) == 0 ||
		    strncmp(s, "--body-data", 11) == 0)) {
			if (f->taint & (T_SECRET | T_ENVDUMP))
				check_upload(an, c, f, 0);
			else if (v && s[11] != '=')
				check_upload(an, c, v, 0);
		} else if ((!wget && (pl_eq(f, "-o") ||
		    pl_eq(f, "--output"))) ||
		    (wget && (pl_eq(f, "-O") ||
		    pl_eq(f, "--output-document")))) {
			if (v && !pl_eq(v, "-")) {
				note_download(an, v);
				tostdout = 0;
			}
			i++;
		} else if (wget && strncmp(s, "-O", 2) == 0 && f->len > 2) {
			if (strcmp(s + 2, "-") != 0) {
				note_download(an, pl_subfield(an, f, 2));
				tostdout = 0;
			}
		} else if (wget && (strncmp(s, "-qO", 3) == 0 ||
		    strncmp(s, "-nv", 3) == 0 || strncmp(s, "-q", 2) == 0) &&
		    f->len > 2 && memchr(s, 'O', f->len)) {
			const char *o = memchr(s, 'O', f->len);

			if (o[1] == '\0' && v) {
				if (!pl_eq(v, "-")) {
					note_download(an, v);
					tostdout = 0;
				}
				i++;
			} else if (strcmp(o + 1, "-") != 0) {
				tostdout = 0;
			}
		} else if (!wget && (pl_eq(f, "-O") ||
		    pl_eq(f, "--remote-name") ||
		    pl_eq(f, "--remote-name-all") ||
		    (pl_is_opt(f) && s[1] != '-' && memchr(s, 'O', f->len)))) {
			remote_name = 1;
			tostdout = 0;
		} else if (wget && (pl_eq(f, "-P") || strncmp(s,
		    "--directory-prefix", 18) == 0)) {
			odir = v;
		} else if (!wget && strncmp(s, "-o", 2) == 0 && f->len > 2 &&
		    s[1] != '-') {
			note_download(an, pl_subfield(an, f, 2));
			tostdout = 0;
		}
	}
	if (wget && tostdout) {
		/* wget saves to a file named after the URL by default. */
		int stdout_seen = 0;

		for (i = 1; i < c->argc; i++)
			if (pl_eq(&c->argv[i], "-O-") ||
			    (pl_eq(&c->argv[i], "-") && i > 1 &&
			    (pl_eq(&c->argv[i - 1], "-O") ||
			    strncmp(c->argv[i - 1].s, "-q", 2) == 0)) ||
			    (strncmp(c->argv[i].s, "-", 1) == 0 &&
			    c->argv[i].len > 2 && strcmp(c->argv[i].s +
			    c->argv[i].len - 2, "O-") == 0))
				stdout_seen = 1;
		if (!stdout_seen) {
			tostdout = 0;
			remote_name = 1;
		}
	}
	if (remote_name) {
		for (i = 1; i < c->argc; i++)
			if (strstr(c->argv[i].s, "://") != NULL)
				note_url_name(an, &c->argv[i], odir ?
				    odir->s : NULL);
	}
	pl_stream_unknown(c->out, tostdout ? T_NET : 0);
	c->out->producer = c->name;
	if (tostdout)
		c->out->url = one_url(c, wget);
}

void
pl_h_nc(struct pl_an *an, struct pl_cmd *c)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;

		if (pl_eq(&c->argv[i], "-e") || pl_eq(&c->argv[i], "-c") ||
		    strncmp(s, "--exec", 6) == 0 ||
		    strncmp(s, "--sh-exec", 9) == 0 ||
		    strncmp(s, "--lua-exec", 10) == 0 ||
		    (pl_is_opt(&c->argv[i]) && s[1] != '-' &&
		    (memchr(s, 'e', c->argv[i].len) ||
		    memchr(s, 'c', c->argv[i].len)) && c->argv[i].len <= 5 &&
		    i + 1 < c->argc && (strstr(c->argv[i + 1].s, "sh") ||
		    strstr(c->argv[i + 1].s, "python") ||
		    strstr(c->argv[i + 1].s, "perl")))) {
			pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:nc-exec",
			    c->off, c->len, "'%s' connects a program to a "
			    "network socket (-e/-c)", c->name);
			break;
		}
	}
	if (c->in->taint & (T_SECRET | T_ENVDUMP))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:net-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (c->in->taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (c->in->taint & T_SHELL)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:shell-to-net", c->off,
		    c->len, "a shell's output is piped into '%s'", c->name);
	pl_stream_unknown(c->out, T_SOCK | T_NET);
	c->out->producer = c->name;
}

void
pl_h_socat(struct pl_an *an, struct pl_cmd *c)
{
	int i, exec = 0, net = 0;

	for (i = 1; i < c->argc; i++) {
		const char *s = c->argv[i].s;
		char up[16];
		size_t k;

		for (k = 0; k < sizeof(up) - 1 && s[k]; k++)
			up[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ?
			    s[k] - 32 : s[k]);
		up[k] = '\0';
		if (strncmp(up, "EXEC:", 5) == 0 ||
		    strncmp(up, "SYSTEM:", 7) == 0)
			exec = 1;
		if (strncmp(up, "TCP", 3) == 0 || strncmp(up, "UDP", 3) == 0 ||
		    strncmp(up, "SSL", 3) == 0 || strncmp(up, "OPENSSL", 7) == 0
		    || strncmp(up, "SCTP", 4) == 0)
			net = 1;
	}
	if (exec && net)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:socat-exec", c->off,
		    c->len, "'socat' connects a program to a network socket");
	pl_h_nc(an, c);
}

void
pl_h_netsend(struct pl_an *an, struct pl_cmd *c)
{
	if (c->in->taint & (T_SECRET | T_ENVDUMP))
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:net-secret", c->off,
		    c->len, "'%s' sends %s over the network", c->name,
		    (c->in->taint & T_SECRET) ? "secret data" :
		    "the environment");
	if (c->in->taint & T_SHELL)
		pl_find(an, VG_CAT_REVERSE_SHELL, "builtin:shell-to-net", c->off,
		    c->len, "a shell's output is piped into '%s'", c->name);
	if (strcmp(c->name, "openssl") == 0 && c->argc > 1 &&
	    pl_eq(&c->argv[1], "s_client")) {
		pl_stream_unknown(c->out, T_SOCK | T_NET);
		return;
	}
	if (strcmp(c->name, "telnet") == 0) {
		pl_stream_unknown(c->out, T_SOCK | T_NET);
		return;
	}
	pl_out_default(c);
	if (strcmp(c->name, "openssl") == 0) {
		/* openssl pkcs12 -export -inkey KEY, openssl pkey -in KEY:
		 * a private key read (and packed or printed). */
		static const char opts[] = "\0-in\0-inkey\0-key\0";
		const char *o;

		for (o = opts + 1; *o; o += strlen(o) + 1) {
			const struct pl_field *v = pl_opt_val(an, c, 0, o);
			struct pl_path p;

			if (v == NULL)
				continue;
			pl_path_classify(an, v, &p);
			if (p.attr & PA_SECRET) {
				pl_secret_read(an, c, &p);
				return;
			}
		}
	}
}

/* Private key export and credential printers: gpg --export-secret-keys
 * (any destination: the key leaves its keyring), and tools whose output
 * is a credential (kubectl config view --raw, pass show, aws configure
 * get *secret*, gh auth token ...), tainted so that sending it is
 * exfiltration. */
void
pl_h_keys(struct pl_an *an, struct pl_cmd *c)
{
	static const char *const exports[] = { "--export-secret-keys",
	    "--export-secret-key", "--export-secret-subkeys",
	    "--export-secret-key-p12", "--export-secret-key-p8",
	    "--export-secret-key-raw", "--export-secret-key-ssh", NULL };
	const struct pl_field *o;
	const char *n = c->name;
	int i;

	if (strncmp(n, "gpg", 3) == 0) {
		for (i = 1; i < c->argc; i++)
			if (pl_eq_any(&c->argv[i], exports)) {
				pl_find(an, VG_CAT_EXFILTRATION,
				    "builtin:key-export", c->off, c->len,
				    "'%s %s' exports private keys", n,
				    c->argv[i].s);
				c->out->taint |= T_SECRET;
				return;
			}
		/* -o/--output FILE (--dearmor into /etc/apt/keyrings, a
		 * key file written where a package manager trusts it). */
		if ((o = pl_opt_val(an, c, 'o', "--output")) != NULL &&
		    !pl_eq(o, "-"))
			pl_classify_write(an, o, 0, "'gpg -o'");
		pl_h_reader(an, c);
		return;
	}
	/* melt KEY prints an SSH private key as seed words (melt restore
	 * writes one back); paperkey prints an OpenPGP secret key for
	 * paper: both take the key out of its file. */
	if ((strcmp(n, "melt") == 0 && !pl_has_arg(c, "restore") &&
	    !pl_has_arg(c, "--help") && !pl_has_arg(c, "-h") &&
	    !pl_has_arg(c, "--version") && !pl_has_arg(c, "-v")) ||
	    (strcmp(n, "paperkey") == 0 && !pl_has_arg(c, "--pubring") &&
	    !pl_has_arg(c, "--help") && !pl_has_arg(c, "--version"))) {
		pl_find(an, VG_CAT_EXFILTRATION, "builtin:key-export", c->off,
		    c->len, "'%s' exports a private key", n);
		c->out->taint |= T_SECRET;
		return;
	}
	pl_out_default(c);
	if ((strcmp(n, "kubectl") == 0 && pl_has_arg(c, "config") &&
	    pl_has_arg(c, "view") && (pl_has_arg(c, "--raw") ||
	    pl_has_arg(c, "--flatten"))) ||
	    (strcmp(n, "pass") == 0 && (c->argc == 2 ||
	    pl_has_arg(c, "show"))) || (strcmp(n, "aws") == 0 &&
	    pl_has_arg(c, "configure") &&
	    (pl_has_arg(c, "get") || pl_has_arg(c, "export-credentials"))) ||
	    (strcmp(n, "aws") == 0 && (pl_has_arg(c, "get-session-token") ||
	    pl_has_arg(c, "get-login-password"))) ||
	    (strcmp(n, "gh") == 0 && pl_has_arg(c, "auth") &&
	    pl_has_arg(c, "token")) || (strcmp(n, "gcloud") == 0 &&
	    (pl_has_arg(c, "print-access-token") ||
	    pl_has_arg(c, "print-identity-token"))) ||
	    (strcmp(n, "az") == 0 && pl_has_arg(c, "get-access-token")) ||
	    (strcmp(n, "vault") == 0 && (pl_has_arg(c, "read") ||
	    pl_has_arg(c, "get"))) || (strcmp(n, "op") == 0 &&
	    (pl_has_arg(c, "read") || pl_has_arg(c, "get"))) ||
	    (strcmp(n, "secret-tool") == 0 && pl_has_arg(c, "lookup")) ||
	    (strcmp(n, "security") == 0 && pl_has_arg(c, "-w")))
		c->out->taint |= T_SECRET;
}

/* scp, rsync, sftp: secrets copied to another host. */
void
pl_h_remote_copy(struct pl_an *an, struct pl_cmd *c)
{
	int dd = 0, i, ops[64], nops = 0, remote = 0;
	int rsync = strcmp(c->name, "rsync") == 0;

	for (i = 1; (i = pl_next_operand(c, i, rsync ? "eT" : "cFiJloPSD",
	    &dd)) < c->argc && nops < 64; i++)
		ops[nops++] = i;
	if (nops < 2)
		return;
	remote = pl_is_remote(&c->argv[ops[nops - 1]]);
	for (i = 0; i < nops - 1; i++) {
		struct pl_path p;

		if (pl_is_remote(&c->argv[ops[i]]))
			continue;
		pl_path_classify(an, &c->argv[ops[i]], &p);
		if (p.attr & PA_SECRET)
			pl_find(an, VG_CAT_EXFILTRATION, "builtin:copy-secret",
			    c->off, c->len, "'%s' copies '%s'%s", c->name,
			    pl_pshow(&p), remote ? " to another host" : "");
	}
	if (!remote) {
		const struct pl_field *d = &c->argv[ops[nops - 1]];
		struct pl_path p;

		pl_path_classify(an, d, &p);
		if (rsync && pl_has_arg(c, "--delete") && p.cls == PC_PROTECTED)
			pl_find_floor(an, pl_path_top(an, &p) ?
			    PL_FLOOR_DELETE : NULL, VG_CAT_DESTRUCTIVE,
			    "builtin:rsync-delete",
			    c->off, c->len, "'rsync --delete' into the "
			    "protected path '%s'", pl_pshow(&p));
		else
			pl_write_dest(an, d, c->name);
		if (nops == 2)
			pl_file_copied(an, &c->argv[ops[0]], d);
	}
}
