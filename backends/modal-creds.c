/*
 * modal-creds.c - where the modal backend's credentials come from, found
 * by presence only (no network), and the mode they give.
 *
 * Direct mode reads what Modal's Python SDK reads (modal-labs/modal-client
 * modal/config.py): MODAL_TOKEN_ID and MODAL_TOKEN_SECRET override the
 * config file; the file is MODAL_CONFIG_PATH or ~/.modal.toml, TOML with
 * one table per profile (token_id, token_secret, active, server_url,
 * environment); the profile is MODAL_PROFILE, else the one table with
 * active = true (two is an error), else "default".  MODAL_SERVER_URL and
 * MODAL_ENVIRONMENT override the profile's.
 *
 * Managed mode needs a tool gateway: its URL from modal.gateway_url (a
 * vigil config file) or MODAL_GATEWAY_URL, its bearer token from the
 * variable modal.gateway_token_env names (TOOL_GATEWAY_USER_TOKEN by
 * default), as Hermes Agent's tools/managed_tool_gateway.py names them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/home.h"
#include "common/path.h"
#include "backends/modal.h"

#define TOML_MAX		(1u << 20)
#define TOML_LINE_MAX		4096
#define MODAL_DEFAULT_SERVER	"https://api.modal.com"
#define GATEWAY_URL_ENV		"MODAL_GATEWAY_URL"
#define GATEWAY_TOKEN_ENV	"TOOL_GATEWAY_USER_TOKEN"

/* ------------------------------------------------------------------ */
/* TOML, the part ~/.modal.toml uses                                   */
/* ------------------------------------------------------------------ */

/* True for a character of a bare key or table name. */
static int
bare(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Reads a key (bare or quoted) at *pp into out; 0 or -1. */
static int
toml_key(const char **pp, const char *end, char *out, size_t size)
{
	const char *p = *pp;
	size_t k = 0;
	char q;

	if (p < end && (*p == '"' || *p == '\'')) {
		q = *p++;
		while (p < end && *p != q && k + 1 < size)
			out[k++] = *p++;
		if (p >= end || *p != q)
			return -1;
		p++;
	} else
		while (p < end && bare((unsigned char)*p) && k + 1 < size)
			out[k++] = *p++;
	out[k] = '\0';
	*pp = p;
	return k > 0 ? 0 : -1;
}

/* Reads a value at *pp into out; sets *is_bool.  Returns NULL or what
 * is wrong. */
static const char *
toml_value(const char **pp, const char *end, char *out, size_t size,
    int *is_bool)
{
	const char *p = *pp;
	size_t k = 0;
	int c;

	*is_bool = 0;
	if (p >= end)
		return "a value is missing";
	if (*p == '[' || *p == '{')
		return "arrays and inline tables are not read here";
	if (end - p >= 3 && (strncmp(p, "\"\"\"", 3) == 0 ||
	    strncmp(p, "'''", 3) == 0))
		return "multi-line strings are not read here";
	if (*p == '\'') {
		for (p++; p < end && *p != '\''; p++)
			if (k + 1 < size)
				out[k++] = *p;
		if (p >= end)
			return "unterminated string";
		p++;
	} else if (*p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			c = (unsigned char)*p;
			if (c == '\\') {
				if (++p >= end)
					return "unterminated string";
				switch (*p) {
				case 'n': c = '\n'; break;
				case 't': c = '\t'; break;
				case '"': c = '"'; break;
				case '\\': c = '\\'; break;
				default:
					return "escape other than \\n \\t \\\" "
					    "\\\\";
				}
			}
			if (k + 1 < size)
				out[k++] = (char)c;
		}
		if (p >= end)
			return "unterminated string";
		p++;
	} else {
		while (p < end && *p != '#' && *p != ' ' && *p != '\t')
			if (k + 1 < size)
				out[k++] = *p++;
			else
				p++;
		out[k] = '\0';
		if (strcmp(out, "true") == 0 || strcmp(out, "false") == 0)
			*is_bool = 1;
		else if (k == 0 || strspn(out, "0123456789+-._eE") != k)
			return "a value must be a string, a boolean or a "
			    "number";
	}
	out[k] = '\0';
	*pp = p;
	return NULL;
}

/* Skips blanks. */
static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* Reads the TOML document; see modal.h. */
int
vg_modal_toml(const char *text, size_t n,
    int (*cb)(void *, const char *, const char *, const char *, int),
    void *arg, struct vg_err *e)
{
	const char *p = text, *end = text + n, *eol, *s, *why;
	char table[256] = "", key[256], val[TOML_LINE_MAX];
	int line = 0, is_bool, r;

	if (n > TOML_MAX)
		return vg_err_set(e, VG_EPARSE, "file is above %u bytes",
		    TOML_MAX);
	for (; p < end; p = eol + 1) {
		line++;
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		if (memchr(p, '\0', (size_t)(eol - p)) != NULL)
			return vg_err_set(e, VG_EPARSE, "%d:1: NUL byte", line);
		s = skip_ws(p, eol);
		if (s == eol || *s == '#')
			continue;
		if (*s == '[') {
			if (s + 1 < eol && s[1] == '[')
				return vg_err_set(e, VG_EPARSE, "%d:%d: arrays "
				    "of tables are not read here", line,
				    (int)(s - p) + 1);
			s = skip_ws(s + 1, eol);
			if (toml_key(&s, eol, table, sizeof(table)) != 0 ||
			    (s = skip_ws(s, eol)) >= eol || *s != ']')
				return vg_err_set(e, VG_EPARSE, "%d:%d: a table "
				    "header is [name]", line, (int)(s - p) + 1);
			s = skip_ws(s + 1, eol);
			if (s < eol && *s != '#')
				return vg_err_set(e, VG_EPARSE, "%d:%d: text "
				    "after the table header", line,
				    (int)(s - p) + 1);
			continue;
		}
		if (toml_key(&s, eol, key, sizeof(key)) != 0)
			return vg_err_set(e, VG_EPARSE, "%d:%d: expected a key",
			    line, (int)(s - p) + 1);
		s = skip_ws(s, eol);
		if (s >= eol || *s != '=')
			return vg_err_set(e, VG_EPARSE, "%d:%d: expected '=' "
			    "after the key", line, (int)(s - p) + 1);
		s = skip_ws(s + 1, eol);
		if ((why = toml_value(&s, eol, val, sizeof(val), &is_bool))
		    != NULL)
			return vg_err_set(e, VG_EPARSE, "%d:%d: %s", line,
			    (int)(s - p) + 1, why);
		s = skip_ws(s, eol);
		if (s < eol && *s != '#')
			return vg_err_set(e, VG_EPARSE, "%d:%d: text after the "
			    "value", line, (int)(s - p) + 1);
		if (cb != NULL && (r = cb(arg, table, key, val, is_bool)) != 0)
			return vg_err_set(e, r, "%d:1: %s", line, "refused");
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Direct credentials                                                  */
/* ------------------------------------------------------------------ */

/* What the profile scan collects. */
struct scan {
	const char	*want;		/* profile wanted, or NULL */
	char		 active[2][256];	/* first two active tables */
	int		 nactive;
	char		*id, *secret, *server, *env;	/* of the chosen */
	const char	*chosen;
};

/* First pass: the active tables. */
static int
scan_active(void *arg, const char *table, const char *key, const char *value,
    int is_bool)
{
	struct scan *s = arg;

	if (strcmp(key, "active") == 0 && is_bool &&
	    strcmp(value, "true") == 0 && s->nactive < 2)
		snprintf(s->active[s->nactive++], sizeof(s->active[0]), "%s",
		    table);
	return 0;
}

/* Replaces *dst by a copy of v. */
static void
set_str(char **dst, const char *v)
{
	if (*dst != NULL)
		memset(*dst, 0, strlen(*dst));
	free(*dst);
	*dst = vg_xstrdup(v);
}

/* Second pass: the chosen profile's keys. */
static int
scan_profile(void *arg, const char *table, const char *key,
    const char *value, int is_bool)
{
	struct scan *s = arg;

	if (strcmp(table, s->chosen) != 0 || is_bool)
		return 0;
	if (strcmp(key, "token_id") == 0)
		set_str(&s->id, value);
	else if (strcmp(key, "token_secret") == 0)
		set_str(&s->secret, value);
	else if (strcmp(key, "server_url") == 0)
		set_str(&s->server, value);
	else if (strcmp(key, "environment") == 0)
		set_str(&s->env, value);
	return 0;
}

/* The value of variable name, or NULL when unset or empty. */
static const char *
env_get(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* The config file's path (caller frees): MODAL_CONFIG_PATH, else
 * .modal.toml in the user's own home, as the SDK's expanduser("~") finds
 * it ($HOME, else the password database), never in vigil's state
 * directory. */
static char *
config_path(void)
{
	char *home, *p;

	if (env_get("MODAL_CONFIG_PATH") != NULL)
		return vg_xstrdup(env_get("MODAL_CONFIG_PATH"));
	home = vg_user_home();
	p = vg_path_join(home, ".modal.toml");
	free(home);
	return p;
}

/* Reads the profile of path into s; VG_ENOENT when the file is absent. */
static int
read_profile(const char *path, struct scan *s, struct vg_err *e)
{
	struct vg_buf text = VG_BUF_INIT;
	struct vg_err le;
	int rc;

	vg_err_init(&le);
	if ((rc = vg_read_file(path, TOML_MAX, &text, &le)) != 0) {
		vg_buf_release(&text);
		if (rc == VG_ENOENT)
			return VG_ENOENT;
		return vg_err_set(e, VG_EINVAL, "modal: %s", le.msg);
	}
	rc = vg_modal_toml(text.data, text.len, scan_active, s, &le);
	if (rc == 0 && s->want == NULL && s->nactive > 1)
		rc = vg_err_set(&le, VG_EPARSE, "profiles '%s' and '%s' are "
		    "both active = true (set MODAL_PROFILE, or keep one active)",
		    s->active[0], s->active[1]);
	s->chosen = s->want != NULL ? s->want : s->nactive == 1 ?
	    s->active[0] : "default";
	if (rc == 0)
		rc = vg_modal_toml(text.data, text.len, scan_profile, s, &le);
	if (text.data != NULL)
		memset(text.data, 0, text.len);
	vg_buf_release(&text);
	if (rc != 0)
		return vg_err_set(e, VG_EINVAL, "modal: %s: %s", path, le.msg);
	return 0;
}

/* Frees what a scan holds, wiping the tokens. */
static void
scan_release(struct scan *s)
{
	set_str(&s->id, NULL);
	set_str(&s->secret, NULL);
	free(s->server);
	free(s->env);
}

/* Finds the direct credentials; see modal.h. */
int
vg_modal_direct_find(struct vg_modal_direct *d, struct vg_err *e)
{
	struct scan s = { .want = env_get("MODAL_PROFILE") };
	char *path = config_path();
	int rc, file;

	memset(d, 0, sizeof(*d));
	rc = read_profile(path, &s, e);
	if (rc != 0 && rc != VG_ENOENT)
		goto out;
	file = rc == 0;
	rc = 0;
	if (env_get("MODAL_TOKEN_ID") != NULL &&
	    env_get("MODAL_TOKEN_SECRET") != NULL) {
		d->token_id = vg_xstrdup(env_get("MODAL_TOKEN_ID"));
		d->token_secret = vg_xstrdup(env_get("MODAL_TOKEN_SECRET"));
		snprintf(d->where, sizeof(d->where), "MODAL_TOKEN_ID and "
		    "MODAL_TOKEN_SECRET");
	} else if (s.id != NULL && *s.id && s.secret != NULL && *s.secret) {
		d->token_id = vg_xstrdup(s.id);
		d->token_secret = vg_xstrdup(s.secret);
		snprintf(d->where, sizeof(d->where), "profile '%s' of %s",
		    s.chosen, path);
	} else {
		rc = vg_err_set(e, VG_ENOENT, "direct needs MODAL_TOKEN_ID and "
		    "MODAL_TOKEN_SECRET, or token_id and token_secret in "
		    "profile '%s' of %s (%s; MODAL_CONFIG_PATH and MODAL_PROFILE "
		    "choose another; `modal token new` writes one)",
		    file ? s.chosen : s.want != NULL ? s.want : "default", path,
		    file ? "the profile has no token" : "no such file");
		goto out;
	}
	d->server_url = vg_xstrdup(env_get("MODAL_SERVER_URL") != NULL ?
	    env_get("MODAL_SERVER_URL") : s.server != NULL && *s.server ?
	    s.server : MODAL_DEFAULT_SERVER);
	/* The Python SDK's default lists a failover; the first is used. */
	d->server_url[strcspn(d->server_url, ",")] = '\0';
	if (env_get("MODAL_ENVIRONMENT") != NULL)
		d->environment = vg_xstrdup(env_get("MODAL_ENVIRONMENT"));
	else if (s.env != NULL && *s.env)
		d->environment = vg_xstrdup(s.env);
out:
	scan_release(&s);
	free(path);
	return rc;
}

/* Frees d, wiping the tokens. */
void
vg_modal_direct_release(struct vg_modal_direct *d)
{
	set_str(&d->token_id, NULL);
	set_str(&d->token_secret, NULL);
	free(d->server_url);
	free(d->environment);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------------ */
/* Gateway and mode                                                    */
/* ------------------------------------------------------------------ */

/* Finds the gateway's URL and token; see modal.h. */
void
vg_modal_gateway_find(const struct vg_modal_conf *mc,
    struct vg_modal_gateway *g)
{
	memset(g, 0, sizeof(*g));
	if (mc != NULL && mc->gateway_url != NULL && *mc->gateway_url) {
		g->url = mc->gateway_url;
		g->url_from = "modal.gateway_url";
	} else if ((g->url = env_get(GATEWAY_URL_ENV)) != NULL)
		g->url_from = GATEWAY_URL_ENV;
	g->token_env = mc != NULL && mc->gateway_token_env != NULL &&
	    *mc->gateway_token_env ? mc->gateway_token_env : GATEWAY_TOKEN_ENV;
	g->token = env_get(g->token_env);
}

/* What managed mode lacks, into out ("" when nothing). */
static void
gateway_missing(const struct vg_modal_gateway *g, char *out, size_t size)
{
	size_t k = 0;

	out[0] = '\0';
	if (g->url == NULL)
		k += (size_t)snprintf(out, size, "the gateway URL "
		    "(modal.gateway_url in a vigil config file, or %s)",
		    GATEWAY_URL_ENV);
	if (g->token == NULL && k < size)
		snprintf(out + k, size - k, "%sits token in %s (%s)",
		    k ? " and " : "", g->token_env,
		    strcmp(g->token_env, GATEWAY_TOKEN_ENV) == 0 ?
		    "modal.gateway_token_env in a vigil config file names "
		    "another variable" : "named by modal.gateway_token_env");
}

/* Resolves the mode by presence; see modal.h. */
int
vg_modal_resolve(const struct vg_modal_conf *mc, struct vg_modal_res *r,
    struct vg_err *e)
{
	static const char *const names[] = { "auto", "direct", "managed" };
	int mode = mc != NULL ? mc->mode : VG_MODAL_AUTO;
	char gw[400];
	struct vg_err de;
	int rc;

	memset(r, 0, sizeof(*r));
	vg_modal_gateway_find(mc, &r->gw);
	gateway_missing(&r->gw, gw, sizeof(gw));
	vg_err_init(&de);
	rc = mode == VG_MODAL_MANAGED ? VG_ENOENT :
	    vg_modal_direct_find(&r->direct, &de);
	if (rc != 0 && rc != VG_ENOENT)
		return vg_err_set(e, VG_EINVAL, "%s", de.msg);
	r->have_direct = rc == 0;
	if (mode != VG_MODAL_DIRECT && gw[0] == '\0') {
		r->mode = VG_MODAL_MANAGED;
		return 0;
	}
	if (mode != VG_MODAL_MANAGED && r->have_direct) {
		r->mode = VG_MODAL_DIRECT;
		return 0;
	}
	if (mode == VG_MODAL_MANAGED)
		return vg_err_set(e, VG_EINVAL, "modal: mode managed: missing "
		    "%s (managed never falls back to direct)", gw);
	if (mode == VG_MODAL_DIRECT)
		return vg_err_set(e, VG_EINVAL, "modal: mode direct: no "
		    "credentials: %s", de.msg);
	return vg_err_set(e, VG_EINVAL, "modal: mode %s: no credentials for "
	    "either mode: managed needs %s; %s", names[mode], gw, de.msg);
}

/* Frees what resolution found. */
void
vg_modal_res_release(struct vg_modal_res *r)
{
	vg_modal_direct_release(&r->direct);
}
