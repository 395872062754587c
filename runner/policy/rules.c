/*
 * rules.c - the site policy file and the rule sets.
 *
 * The site file (default /etc/vigil/policy.yaml) is a floor: its deny
 * rules hold whatever a manifest says, it can forbid auto-approve, and it
 * may name a default mode and an audit log.  Manifest (and user) rules
 * come already parsed in struct vg_policy_conf and are validated here the
 * same way.  A rule allows or denies by category, by a glob on the
 * normalised command (each simple command with its words resolved and
 * wrappers removed, words joined by one space), or both.
 *
 *   version: 1
 *   mode: auto-deny            # default when the manifest says nothing
 *   auto_approve: false        # manifests may not opt into auto-approve
 *   audit_log: /var/log/vigil/policy.jsonl
 *   deny:
 *     - id: no-scancel-all
 *       category: scheduler-abuse
 *       reason: cancelling other people's jobs is for the operators
 *   allow:
 *     - id: scratch-cleanup
 *       match: "rm -rf /scratch/x*"
 *       reason: scratch is purged anyway
 *     - id: get-example-sh       # the whole command (pl_norm_whole)
 *       command: "curl -fsSL https://get.example.sh | sh"
 *       reason: the vendor's installer, reviewed
 *     - id: tools-mirror         # remote code from one source
 *       category: remote-code
 *       url: https://tools.example.org/install/
 *       reason: our mirror
 *   safe_volume_drivers:       # docker named-volume drivers that never
 *     - driver: scratchvol     # map a host path (see host-access.h)
 *       reason: per-job volumes on node-local disk, made by the plugin
 *
 * Below every rule lies the built-in floor (pl_floor_rules): findings
 * the analysis marks as catastrophic (deleting /, wiping a disk, a fork
 * bomb, powering off the host ...) are refused in every mode, whatever a
 * manifest allows, unless a site allow rule names the floor rule:
 *
 *   allow:
 *     - id: lab-reimage
 *       floor: disk-destroy     # or floor:disk-destroy
 *       match: "dd * of=/dev/sdz*"
 *       reason: the imaging station rewrites its scratch disk
 *
 * Such a rule only lifts the floor (match and category, when given,
 * narrow it); the finding is then judged by the mode like any other.
 *
 * The YAML is read with libyaml's document API so that every problem can
 * be reported as FILE:LINE:COL.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "common/path.h"
#include "runner/policy/arena.h"
#include "runner/policy/rules.h"

const char *const vg_policy_categories[] = {
	VG_CAT_DESTRUCTIVE, VG_CAT_DISK, VG_CAT_PERMISSIONS,
	VG_CAT_REMOTE_CODE, VG_CAT_PRIVILEGE, VG_CAT_SYSCONFIG,
	VG_CAT_DISRUPTION, VG_CAT_EXFILTRATION, VG_CAT_REVERSE_SHELL,
	VG_CAT_OBFUSCATION, VG_CAT_OPAQUE, VG_CAT_SCHEDULER, VG_CAT_HOST_ACCESS,
	VG_CAT_RULE,
	VG_CAT_UNPARSEABLE, NULL
};

const char *const pl_floor_rules[] = {
	PL_FLOOR_DELETE, PL_FLOOR_DISK, PL_FLOOR_FORKBOMB, PL_FLOOR_POWER,
	PL_FLOOR_KILLALL, PL_FLOOR_PERMS, PL_FLOOR_OPAQUE, NULL
};

/* The static floor rule id for name ("disk-destroy" or
 * "floor:disk-destroy"), or NULL. */
static const char *
pl_floor_id(const char *name)
{
	int k;

	if (strncmp(name, "floor:", 6) == 0)
		name += 6;
	for (k = 0; pl_floor_rules[k] != NULL; k++)
		if (strcmp(pl_floor_rules[k] + 6, name) == 0)
			return pl_floor_rules[k];
	return NULL;
}

/* The static category string for name, or NULL. */
static const char *
pl_category(const char *name)
{
	int k;

	for (k = 0; vg_policy_categories[k] != NULL; k++)
		if (strcmp(vg_policy_categories[k], name) == 0)
			return vg_policy_categories[k];
	return NULL;
}

/* Adds "FILE:LINE:COL: message" to diag. */
static void
diag(struct vg_diag *d, const char *file, int line, int col,
    const char *fmt, ...)
{
	struct vg_buf b = VG_BUF_INIT;
	va_list ap;

	if (d == NULL)
		return;
	if (line > 0)
		vg_buf_printf(&b, "%s:%d:%d: ", file, line, col);
	else
		vg_buf_printf(&b, "%s: ", file);
	va_start(ap, fmt);
	vg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	vg_strv_take(&d->lines, vg_buf_detach(&b));
}

/* One rule as read, before it is checked: its fields (NULL when not
 * given) and where the url and command values are, for messages (line
 * 0: the rule's own place). */
struct rule_in {
	const char	*id, *match, *category, *reason, *command, *url;
	int		 deny;
	int		 uline, ucol, cline, ccol;
};

/* Appends one rule (strings copied); cat is the static category. */
static void
rule_add(struct pl_rules *rs, const struct rule_in *in, const char *cat,
    int site)
{
	struct pl_rule *r;

	rs->v = vg_xgrow(rs->v, &rs->cap, rs->n + 1, sizeof(*rs->v));
	r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	r->id = vg_xasprintf("%s%s", site ? "site:" : "", in->id);
	r->match = vg_xstrdup(in->match);
	r->category = cat;
	r->reason = vg_xstrdup(in->reason);
	r->command = vg_xstrdup(in->command);
	r->url = vg_xstrdup(in->url);
	r->deny = in->deny;
	r->site = site;
	if (in->match != NULL)
		rs->has_match = 1;
	if (in->command != NULL)
		rs->has_command = 1;
}

void
pl_rules_release(struct pl_rules *rs)
{
	size_t k;

	for (k = 0; k < rs->n; k++) {
		free(rs->v[k].id);
		free(rs->v[k].match);
		free(rs->v[k].reason);
		free(rs->v[k].command);
		free(rs->v[k].url);
	}
	for (k = 0; k < rs->ndrivers; k++) {
		free(rs->drivers[k].name);
		free(rs->drivers[k].reason);
	}
	free(rs->drivers);
	free(rs->v);
	free(rs->audit_log);
	memset(rs, 0, sizeof(*rs));
}

/* Scalar text of a node, or NULL when it is not a scalar. */
static const char *
scalar(yaml_node_t *n)
{
	if (n == NULL || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

/* Checks an id: letters, digits, '-', '_', '.', at most 48 bytes. */
static int
valid_id(const char *s)
{
	size_t n = strlen(s), k;

	if (n == 0 || n > 48)
		return 0;
	for (k = 0; k < n; k++)
		if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' &&
		    s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
		    s[k] == '-' || s[k] == '_' || s[k] == '.'))
			return 0;
	return 1;
}

/* A URL taken apart: scheme, host (with its port) and path, each a
 * slice of the text. */
struct pl_url {
	const char	*scheme, *host, *path;
	size_t		 slen, hlen, plen;
};

/* True for a byte of a host: letters, digits, '-', '.', and ':' '[' ']'
 * of a port or an IPv6 address. */
static int
host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':' ||
	    c == '[' || c == ']';
}

/* True when the path of n bytes at p can be compared as text: printable
 * ASCII without backslashes, no "." or ".." segment, no encoded '.',
 * '/' or '\\'. */
static int
path_plain(const char *p, size_t n)
{
	size_t i, seg = 0;

	for (i = 0; i <= n; i++) {
		if (i == n || p[i] == '/') {
			size_t l = i - seg;

			if ((l == 1 && p[seg] == '.') || (l == 2 &&
			    p[seg] == '.' && p[seg + 1] == '.'))
				return 0;
			seg = i + 1;
			continue;
		}
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f ||
		    p[i] == '\\')
			return 0;
		if (p[i] == '%' && i + 3 <= n && (strncasecmp(p + i, "%2e",
		    3) == 0 || strncasecmp(p + i, "%2f", 3) == 0 ||
		    strncasecmp(p + i, "%5c", 3) == 0))
			return 0;
	}
	return 1;
}

/*
 * Takes apart an http, https or ftp URL of n bytes at s into u; 0 when
 * it is not one that can be compared safely (a user part, a host of
 * other bytes, a path that path_plain refuses).  A query or fragment
 * ends the path; with prefix set (a rule's URL) it is refused instead.
 */
static int
url_parse(const char *s, size_t n, int prefix, struct pl_url *u)
{
	const char *e = s + n, *h, *p;

	memset(u, 0, sizeof(*u));
	for (p = s; p < e && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' &&
	    *p <= 'Z')); p++)
		;
	if (p == s || e - p < 3 || memcmp(p, "://", 3) != 0)
		return 0;
	u->scheme = s;
	u->slen = (size_t)(p - s);
	if (!((u->slen == 4 && strncasecmp(s, "http", 4) == 0) ||
	    (u->slen == 5 && strncasecmp(s, "https", 5) == 0) ||
	    (u->slen == 3 && strncasecmp(s, "ftp", 3) == 0)))
		return 0;
	h = p + 3;
	for (p = h; p < e && *p != '/' && *p != '?' && *p != '#'; p++)
		if (!host_char(*p))
			return 0;	/* '@' (a user part) included */
	if (p == h || h[0] == ':' || h[0] == '.')
		return 0;
	u->host = h;
	u->hlen = (size_t)(p - h);
	u->path = p;
	while (p < e && *p != '?' && *p != '#')
		p++;
	if (p < e && prefix)
		return 0;
	u->plen = (size_t)(p - u->path);
	return path_plain(u->path, u->plen);
}

/* True when url lies under prefix; see rules.h. */
int
pl_url_under(const char *prefix, const char *url, size_t n)
{
	struct pl_url r, f;
	const char *rp, *fp;
	size_t rl, fl;

	if (!url_parse(prefix, strlen(prefix), 1, &r) ||
	    !url_parse(url, n, 0, &f))
		return 0;
	if (r.slen != f.slen || strncasecmp(r.scheme, f.scheme, r.slen) != 0 ||
	    r.hlen != f.hlen || strncasecmp(r.host, f.host, r.hlen) != 0)
		return 0;
	rp = r.plen > 0 ? r.path : "/";
	rl = r.plen > 0 ? r.plen : 1;
	fp = f.plen > 0 ? f.path : "/";
	fl = f.plen > 0 ? f.plen : 1;
	if (fl < rl || memcmp(fp, rp, rl) != 0)
		return 0;
	return fl == rl || rp[rl - 1] == '/' || fp[rl] == '/';
}

/* True for a blank between words. */
static int
blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Normalises a whole command; see rules.h. */
size_t
pl_norm_whole(const char *s, size_t n, char *out)
{
	size_t i = 0, o = 0;
	int gap = 0;
	char q = 0;

	while (i < n) {
		char c = s[i];

		if (q == 0 && (blank(c) || (c == '\\' && i + 1 < n &&
		    s[i + 1] == '\n'))) {
			i += c == '\\' ? 2 : 1;
			gap = 1;
			continue;
		}
		if (q == 0 && c == '\n') {
			/* Blanks next to a newline go. */
			out[o++] = '\n';
			gap = 0;
			i++;
			while (i < n && blank(s[i]))
				i++;
			continue;
		}
		if (gap && o > 0 && out[o - 1] != '\n')
			out[o++] = ' ';
		gap = 0;
		out[o++] = c;
		i++;
		if (c == '\\' && q != '\'' && i < n) {
			out[o++] = s[i++];
			continue;
		}
		if (q == 0 && (c == '\'' || c == '"'))
			q = c;
		else if (q == c)
			q = 0;
	}
	/* Trailing newlines go too. */
	while (o > 0 && out[o - 1] == '\n' && q == 0)
		o--;
	while (o > 0 && out[0] == '\n' && q == 0) {
		memmove(out, out + 1, --o);
	}
	out[o] = '\0';
	return o;
}

/* Adds a problem of rule in at the place of one of its fields (line 0:
 * the rule's place). */
static void
diag_field(struct vg_diag *d, const char *file, int line, int col,
    int fline, int fcol, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void
diag_field(struct vg_diag *d, const char *file, int line, int col,
    int fline, int fcol, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fline > 0)
		diag(d, file, fline, fcol, "%s", msg);
	else
		diag(d, file, line, col, "%s", msg);
}

/* Checks the fields only allow rules have (command, url); returns the
 * number of problems. */
static int
check_allow_fields(struct vg_diag *d, const char *file, int line, int col,
    const struct rule_in *in, const char *cat)
{
	const char *id = in->id ? in->id : "?";
	struct pl_url u;
	int bad = 0;

	if (in->deny && (in->command != NULL || in->url != NULL)) {
		diag_field(d, file, line, col, in->command ? in->cline :
		    in->uline, in->command ? in->ccol : in->ucol, "rule '%s': "
		    "'%s' is only valid in allow rules (a deny rule takes id, "
		    "match, category, reason)", id, in->command ? "command" :
		    "url");
		return 1;
	}
	if (in->command != NULL && in->command[0] == '\0') {
		diag_field(d, file, line, col, in->cline, in->ccol, "rule '%s': "
		    "'command' is empty (valid: a glob on the whole command, "
		    "e.g. \"curl -fsSL https://get.example.sh | sh\")", id);
		bad++;
	}
	if (in->url == NULL)
		return bad;
	if (!url_parse(in->url, strlen(in->url), 1, &u)) {
		diag_field(d, file, line, col, in->uline, in->ucol, "rule '%s': "
		    "url '%s' is not a URL prefix (valid: http://, https:// or "
		    "ftp://, a host with an optional port, an optional path; "
		    "no user part, query, fragment, '.' or '..' segments)", id,
		    in->url);
		bad++;
	} else if (cat == NULL || strcmp(cat, VG_CAT_REMOTE_CODE) != 0) {
		diag_field(d, file, line, col, in->uline, in->ucol, "rule '%s': "
		    "'url' needs 'category: " VG_CAT_REMOTE_CODE "' (only "
		    "remote-code findings carry a source URL)", id);
		bad++;
	}
	return bad;
}

/* Common checks of one rule; returns the number of problems. */
static int
check_rule(struct vg_diag *d, const char *file, int line, int col,
    const struct rule_in *in, const char **catout)
{
	const char *id = in->id, *match = in->match, *cat = in->category;
	const char *reason = in->reason;
	int bad = 0;

	*catout = NULL;
	if (id == NULL) {
		diag(d, file, line, col, "rule needs an 'id'");
		bad++;
	} else if (!valid_id(id)) {
		diag(d, file, line, col, "rule id '%s' must be 1-48 letters, "
		    "digits, '-', '_' or '.'", id);
		bad++;
	}
	if (reason == NULL || reason[0] == '\0') {
		diag(d, file, line, col, "rule '%s' needs a 'reason'",
		    id ? id : "?");
		bad++;
	}
	if (match == NULL && cat == NULL && in->command == NULL &&
	    in->url == NULL) {
		if (in->deny)
			diag(d, file, line, col, "rule '%s' needs 'match' (a "
			    "glob on the command) or 'category'", id ? id : "?");
		else
			diag(d, file, line, col, "rule '%s' needs 'match' (a "
			    "glob on each simple command), 'command' (a glob on "
			    "the whole command) or 'category'", id ? id : "?");
		bad++;
	}
	if (match != NULL && match[0] == '\0') {
		diag(d, file, line, col, "rule '%s': 'match' is empty",
		    id ? id : "?");
		bad++;
	}
	if (cat != NULL && (*catout = pl_category(cat)) == NULL) {
		struct vg_buf b = VG_BUF_INIT;
		int k;

		for (k = 0; vg_policy_categories[k] != NULL; k++)
			vg_buf_printf(&b, "%s%s", k ? ", " : "",
			    vg_policy_categories[k]);
		diag(d, file, line, col, "rule '%s': unknown category '%s' "
		    "(valid: %s)", id ? id : "?", cat, vg_buf_str(&b));
		vg_buf_release(&b);
		bad++;
	}
	if (cat == NULL || *catout != NULL)
		bad += check_allow_fields(d, file, line, col, in, *catout);
	return bad;
}

/*
 * Reads one list entry r of the site file: a mapping of plain strings
 * whose keys are among keys (NULL-terminated); vals[i] gets the value of
 * keys[i] or stays NULL, and nodes[i] (when nodes is not NULL) its
 * node, for messages about the value.  what names the entry in messages
 * ("rule"), shape says what it must be.  Returns -1 when r is not a
 * mapping, else the number of bad fields (each reported).
 */
static int
entry_fields(yaml_document_t *doc, yaml_node_t *r, const char *file,
    struct vg_diag *d, const char *what, const char *shape,
    const char *const *keys, const char **vals, yaml_node_t **nodes)
{
	struct vg_buf valid = VG_BUF_INIT;
	yaml_node_pair_t *pr;
	int bad = 0, i;

	/* A key "-" holds a place and is never valid. */
	for (i = 0; keys[i] != NULL; i++) {
		vals[i] = NULL;
		if (nodes != NULL)
			nodes[i] = NULL;
		if (strcmp(keys[i], "-") != 0)
			vg_buf_printf(&valid, "%s%s", i ? ", " : "", keys[i]);
	}
	if (r->type != YAML_MAPPING_NODE) {
		diag(d, file, (int)r->start_mark.line + 1,
		    (int)r->start_mark.column + 1, "a %s must be %s", what,
		    shape);
		vg_buf_release(&valid);
		return -1;
	}
	for (pr = r->data.mapping.pairs.start;
	    pr < r->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(doc, pr->value);
		const char *ks = scalar(k), *vs = scalar(v);

		if (k == NULL || v == NULL)
			continue;
		if (ks == NULL || vs == NULL) {
			diag(d, file, (int)v->start_mark.line + 1,
			    (int)v->start_mark.column + 1,
			    "%s fields must be plain strings", what);
			bad++;
			continue;
		}
		for (i = 0; keys[i] != NULL && (strcmp(ks, keys[i]) != 0 ||
		    strcmp(ks, "-") == 0); i++)
			;
		if (keys[i] != NULL) {
			vals[i] = vs;
			if (nodes != NULL)
				nodes[i] = v;
			continue;
		}
		diag(d, file, (int)k->start_mark.line + 1,
		    (int)k->start_mark.column + 1, "unknown %s field '%s' "
		    "(valid: %s)", what, ks, vg_buf_str(&valid));
		bad++;
	}
	vg_buf_release(&valid);
	return bad;
}

/* Reads a sequence of rules from the site file. */
static int
site_rules(struct pl_rules *rs, yaml_document_t *doc, yaml_node_t *seq,
    const char *file, int deny, struct vg_diag *d)
{
	yaml_node_item_t *it;
	int bad = 0;

	if (seq->type != YAML_SEQUENCE_NODE) {
		diag(d, file, (int)seq->start_mark.line + 1,
		    (int)seq->start_mark.column + 1, "'%s' must be a list of "
		    "rules", deny ? "deny" : "allow");
		return 1;
	}
	for (it = seq->data.sequence.items.start;
	    it < seq->data.sequence.items.top; it++) {
		static const char *const keys[] = { "id", "match",
			"category", "reason", "floor", "command", "url", NULL };
		/* Deny rules: no floor; command and url are read to say
		 * they are for allow rules. */
		static const char *const keys4[] = { "id", "match",
			"category", "reason", "-", "command", "url", NULL };
		yaml_node_t *r = yaml_document_get_node(doc, *it);
		const char *f[7], *c, *fl;
		yaml_node_t *fn[7] = { NULL };
		struct rule_in in;
		int line, col, n;

		if (r == NULL)
			continue;
		line = (int)r->start_mark.line + 1;
		col = (int)r->start_mark.column + 1;
		f[4] = f[5] = f[6] = NULL;
		/* floor, command and url: allow rules only. */
		if ((n = entry_fields(doc, r, file, d, "rule", "a mapping "
		    "with id, match or category, and reason", deny ? keys4 :
		    keys, f, fn)) < 0) {
			bad++;
			continue;
		}
		bad += n;
		fl = NULL;
		if (f[4] != NULL && (fl = pl_floor_id(f[4])) == NULL) {
			struct vg_buf b = VG_BUF_INIT;
			int j;

			for (j = 0; pl_floor_rules[j] != NULL; j++)
				vg_buf_printf(&b, "%s%s", j ? ", " : "",
				    pl_floor_rules[j] + 6);
			diag(d, file, (int)fn[4]->start_mark.line + 1,
			    (int)fn[4]->start_mark.column + 1, "unknown floor "
			    "rule '%s' (valid: %s)", f[4], vg_buf_str(&b));
			vg_buf_release(&b);
			bad++;
			continue;
		}
		memset(&in, 0, sizeof(in));
		in.id = f[0];
		/* A floor rule needs neither match nor category. */
		in.match = fl != NULL && f[1] == NULL && f[2] == NULL &&
		    f[5] == NULL ? "*" : f[1];
		in.category = f[2];
		in.reason = f[3];
		in.command = f[5];
		in.url = f[6];
		in.deny = deny;
		if (fn[5] != NULL) {
			in.cline = (int)fn[5]->start_mark.line + 1;
			in.ccol = (int)fn[5]->start_mark.column + 1;
		}
		if (fn[6] != NULL) {
			in.uline = (int)fn[6]->start_mark.line + 1;
			in.ucol = (int)fn[6]->start_mark.column + 1;
		}
		if (check_rule(d, file, line, col, &in, &c) == 0) {
			in.match = f[1];
			rule_add(rs, &in, c, 1);
			rs->v[rs->n - 1].floor = fl;
		} else
			bad++;
	}
	return bad;
}

/* True for a volume driver name as engines spell plugins: "name",
 * "vendor/name:tag"; at most 128 bytes. */
static int
valid_driver(const char *s)
{
	size_t n = strlen(s), k;

	if (n == 0 || n > 128 || !((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (k = 0; k < n; k++)
		if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' &&
		    s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
		    strchr("-_.:/", s[k]) != NULL))
			return 0;
	return 1;
}

/* Checks one safe_volume_drivers entry; returns the number of problems. */
static int
check_driver(const struct pl_rules *rs, struct vg_diag *d, const char *file,
    int line, int col, const char *name, const char *reason)
{
	size_t k;

	if (name == NULL) {
		diag(d, file, line, col, "a safe volume driver needs a "
		    "'driver' (the name the engine reports)");
		return 1;
	}
	if (!valid_driver(name)) {
		diag(d, file, line, col, "volume driver '%s' must be 1-128 "
		    "letters, digits, '-', '_', '.', ':' or '/', starting "
		    "with a letter or digit", name);
		return 1;
	}
	if (strcmp(name, "local") == 0) {
		diag(d, file, line, col, "volume driver 'local' cannot be "
		    "listed: its volumes are judged by their options (bind, "
		    "nfs, a device)");
		return 1;
	}
	if (reason == NULL || reason[0] == '\0') {
		diag(d, file, line, col, "volume driver '%s' needs a 'reason' "
		    "(why its volumes never reach the host)", name);
		return 1;
	}
	for (k = 0; k < rs->ndrivers; k++)
		if (strcmp(rs->drivers[k].name, name) == 0) {
			diag(d, file, line, col, "volume driver '%s' is listed "
			    "twice (first at line %d)", name,
			    rs->drivers[k].line);
			return 1;
		}
	return 0;
}

/* Reads safe_volume_drivers: a list of {driver, reason}. */
static int
site_drivers(struct pl_rules *rs, yaml_document_t *doc, yaml_node_t *seq,
    const char *file, struct vg_diag *d)
{
	yaml_node_item_t *it;
	int bad = 0;

	if (seq->type != YAML_SEQUENCE_NODE) {
		diag(d, file, (int)seq->start_mark.line + 1,
		    (int)seq->start_mark.column + 1, "'safe_volume_drivers' "
		    "must be a list of {driver, reason}");
		return 1;
	}
	for (it = seq->data.sequence.items.start;
	    it < seq->data.sequence.items.top; it++) {
		static const char *const keys[] = { "driver", "reason",
			NULL };
		yaml_node_t *r = yaml_document_get_node(doc, *it);
		const char *f[2];
		struct pl_driver *dv;
		int line, col, b;

		if (r == NULL)
			continue;
		line = (int)r->start_mark.line + 1;
		col = (int)r->start_mark.column + 1;
		b = entry_fields(doc, r, file, d, "safe volume driver",
		    "a mapping with driver and reason", keys, f, NULL);
		if (b == 0 && check_driver(rs, d, file, line, col, f[0],
		    f[1]) == 0) {
			rs->drivers = vg_xgrow(rs->drivers, &rs->cap_drivers,
			    rs->ndrivers + 1, sizeof(*rs->drivers));
			dv = &rs->drivers[rs->ndrivers++];
			dv->name = vg_xstrdup(f[0]);
			dv->reason = vg_xstrdup(f[1]);
			dv->line = line;
		} else
			bad++;
	}
	return bad;
}

int
pl_rules_site(struct pl_rules *rs, const char *file, const char *text,
    size_t len, struct vg_diag *d, struct vg_err *e)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *pr;
	int bad = 0;

	if (!yaml_parser_initialize(&parser))
		return vg_err_set(e, VG_ENOMEM, "cannot start the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text,
	    len);
	if (!yaml_parser_load(&parser, &doc)) {
		diag(d, file, (int)parser.problem_mark.line + 1,
		    (int)parser.problem_mark.column + 1, "%s",
		    parser.problem ? parser.problem : "YAML syntax error");
		yaml_parser_delete(&parser);
		return vg_err_set(e, VG_EINVAL, "'%s': invalid policy file",
		    file);
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL) {
		/* An empty file is an empty policy. */
		yaml_document_delete(&doc);
		yaml_parser_delete(&parser);
		return 0;
	}
	if (root->type != YAML_MAPPING_NODE) {
		diag(d, file, (int)root->start_mark.line + 1,
		    (int)root->start_mark.column + 1, "the policy file must be "
		    "a mapping (version, mode, auto_approve, audit_log, allow, "
		    "deny, safe_volume_drivers)");
		bad++;
		goto out;
	}
	for (pr = root->data.mapping.pairs.start;
	    pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
		const char *ks = scalar(k), *vs = scalar(v);
		int line, col;

		if (k == NULL || v == NULL)
			continue;
		line = (int)v->start_mark.line + 1;
		col = (int)v->start_mark.column + 1;
		if (ks == NULL) {
			diag(d, file, line, col, "keys must be plain strings");
			bad++;
		} else if (strcmp(ks, "version") == 0) {
			if (vs == NULL || strcmp(vs, "1") != 0) {
				diag(d, file, line, col, "version must be 1");
				bad++;
			}
		} else if (strcmp(ks, "mode") == 0) {
			int m = vs ? vg_policy_mode_parse(vs) : -1;

			if (m < 0) {
				diag(d, file, line, col, "mode must be "
				    "auto-deny, auto-approve or interactive, "
				    "not '%s'", vs ? vs : "?");
				bad++;
			} else {
				rs->site_mode = m;
			}
		} else if (strcmp(ks, "auto_approve") == 0) {
			if (vs != NULL && (strcmp(vs, "false") == 0 ||
			    strcmp(vs, "no") == 0))
				rs->forbid_approve = 1;
			else if (vs == NULL || (strcmp(vs, "true") != 0 &&
			    strcmp(vs, "yes") != 0)) {
				diag(d, file, line, col, "auto_approve must be "
				    "true or false");
				bad++;
			}
		} else if (strcmp(ks, "audit_log") == 0) {
			if (vs == NULL || vs[0] != '/') {
				diag(d, file, line, col, "audit_log must be an "
				    "absolute path");
				bad++;
			} else {
				free(rs->audit_log);
				rs->audit_log = vg_xstrdup(vs);
			}
		} else if (strcmp(ks, "deny") == 0 || strcmp(ks, "allow") == 0) {
			bad += site_rules(rs, &doc, v, file,
			    strcmp(ks, "deny") == 0, d);
		} else if (strcmp(ks, "safe_volume_drivers") == 0) {
			bad += site_drivers(rs, &doc, v, file, d);
		} else {
			diag(d, file, (int)k->start_mark.line + 1,
			    (int)k->start_mark.column + 1, "unknown key '%s' "
			    "(valid: version, mode, auto_approve, audit_log, "
			    "allow, deny, safe_volume_drivers)", ks);
			bad++;
		}
	}
out:
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (bad > 0)
		return vg_err_set(e, VG_EINVAL, "'%s': %d problem%s", file, bad,
		    bad == 1 ? "" : "s");
	return 0;
}

int
pl_rules_conf(struct pl_rules *rs, const struct vg_policy_conf *conf,
    struct vg_diag *d, struct vg_err *e)
{
	size_t k;
	int bad = 0, pass;

	for (pass = 0; pass < 2; pass++) {
		const struct vg_rule *v = pass ? conf->allow : conf->deny;
		size_t n = pass ? conf->nallow : conf->ndeny;

		for (k = 0; k < n; k++) {
			const struct vg_rule *r = &v[k];
			const char *file = r->loc.file ? r->loc.file :
			    "manifest";
			struct rule_in in;
			const char *c;

			memset(&in, 0, sizeof(in));
			in.id = r->id;
			in.match = r->match;
			in.category = r->category;
			in.reason = r->reason;
			in.command = r->command;
			in.url = r->url;
			in.deny = !pass;
			if (check_rule(d, file, r->loc.line, r->loc.col, &in,
			    &c) == 0)
				rule_add(rs, &in, c, 0);
			else
				bad++;
		}
	}
	if (bad > 0)
		return vg_err_set(e, VG_EINVAL, "policy rules: %d problem%s",
		    bad, bad == 1 ? "" : "s");
	return 0;
}

/* True when rule r covers finding f of a command whose normalised whole
 * text is whole (NULL when no rule needs it). */
static int
rule_hits(const struct pl_rule *r, const struct pl_finding *f,
    const char *whole)
{
	if (r->category != NULL && (f->category == NULL ||
	    strcmp(r->category, f->category)))
		return 0;
	if (r->match != NULL && (f->norm == NULL ||
	    fnmatch(r->match, f->norm, 0) != 0))
		return 0;
	if (r->command != NULL && (whole == NULL ||
	    fnmatch(r->command, whole, 0) != 0))
		return 0;
	if (r->url != NULL && (f->url == NULL || f->urls > 1 ||
	    !pl_url_under(r->url, f->url, strlen(f->url))))
		return 0;
	return 1;
}

/* The analysed command normalised for whole-command rules, in the
 * analysis arena. */
static const char *
whole_text(struct pl_an *an)
{
	char *o = pl_alloc(an->a, an->srclen + 1);

	pl_norm_whole(an->src, an->srclen, o);
	return o;
}

void
pl_rules_apply(const struct pl_rules *rs, struct pl_an *an,
    struct pl_finding *out, int *nout, int *hard, struct pl_trace *tr)
{
	struct pl_trace none;
	const struct pl_normcmd *nc;
	const char *whole = NULL;
	size_t k;
	int i, n = 0;

	*hard = 0;
	if (rs->has_command && an->nfind > 0)
		whole = whole_text(an);
	/* Built-in findings: the floor and site deny rules hold, allow
	 * rules may drop the rest. */
	for (i = 0; i < an->nfind; i++) {
		struct pl_finding f = an->find[i];
		const struct pl_rule *deny = NULL, *allow = NULL;
		struct pl_trace *t = tr != NULL ? &tr[i] : &none;

		memset(t, 0, sizeof(*t));
		/* Only a site rule naming it lifts a floor rule. */
		for (k = 0; k < rs->n && f.floor != NULL; k++)
			if (rs->v[k].floor != NULL && rs->v[k].site &&
			    strcmp(rs->v[k].floor, f.floor) == 0 &&
			    rule_hits(&rs->v[k], &f, whole)) {
				t->lifted = rs->v[k].id;
				f.floor = NULL;
			}
		if (f.floor != NULL) {
			t->what = PL_TR_FLOOR;
			t->by = f.floor;
			static const char pfx[] = "built-in floor: ";
			size_t l = strlen(f.reason);

			if (l > sizeof(f.reason) - sizeof(pfx))
				l = sizeof(f.reason) - sizeof(pfx);
			memmove(f.reason + sizeof(pfx) - 1, f.reason, l);
			memcpy(f.reason, pfx, sizeof(pfx) - 1);
			f.reason[sizeof(pfx) - 1 + l] = '\0';
			f.rule = f.floor;
			*hard = 1;
			if (n < PL_MAX_FIND)
				out[n++] = f;
			continue;
		}
		for (k = 0; k < rs->n; k++) {
			const struct pl_rule *r = &rs->v[k];

			if (r->floor != NULL || !rule_hits(r, &f, whole))
				continue;
			if (r->deny && (deny == NULL || (r->site &&
			    !deny->site)))
				deny = r;
			else if (!r->deny && allow == NULL)
				allow = r;
		}
		if (strcmp(f.category, VG_CAT_UNPARSEABLE) == 0)
			allow = NULL;
		if (deny != NULL) {
			t->what = PL_TR_DENIED;
			t->by = deny->id;
			f.rule = deny->id;
			snprintf(f.reason, sizeof(f.reason), "%s", deny->reason);
			if (deny->site)
				*hard = 1;
		} else if (allow != NULL) {
			t->what = PL_TR_ALLOWED;
			t->by = allow->id;
			continue;
		}
		if (n < PL_MAX_FIND)
			out[n++] = f;
	}
	/* Deny rules that match commands with no built-in finding. */
	for (k = 0; k < rs->n && rs->has_match; k++) {
		const struct pl_rule *r = &rs->v[k];
		const struct pl_normcmd *hit = NULL;
		int dup = 0;

		if (!r->deny || r->match == NULL)
			continue;
		for (nc = an->norms; nc != NULL && hit == NULL; nc = nc->next)
			if (fnmatch(r->match, nc->s, 0) == 0)
				hit = nc;
		if (hit == NULL)
			continue;
		for (i = 0; i < n; i++)
			if (out[i].rule == r->id)
				dup = 1;
		if (dup || n >= PL_MAX_FIND)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].category = r->category ? r->category : VG_CAT_RULE;
		out[n].rule = r->id;
		snprintf(out[n].reason, sizeof(out[n].reason), "%s", r->reason);
		out[n].off = hit->off;
		out[n].len = hit->len;
		out[n].norm = hit->s;
		n++;
		if (r->site)
			*hard = 1;
	}
	*nout = n;
}
