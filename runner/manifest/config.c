/*
 * config.c - loading a manifest through its layers:
 *
 *   built-in defaults (manifest.c tables)
 *   < site config    (/etc/vigil/config.yaml, $VIGIL_SITE_CONFIG)
 *   < user config    ($XDG_CONFIG_HOME/vigil/config.yaml, default
 *                     ~/.config/vigil/config.yaml, $VIGIL_USER_CONFIG)
 *   < the manifest
 *   < --set key.path=value, in the order given
 *
 * Each layer is parsed into its own tree and decoded onto the same struct
 * (schema.c merges), so each problem names the file it is in.  A missing
 * config file is fine; an unreadable or invalid one is an error.  The
 * trees live until the checks that need every layer are done.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/manifest/manifest-int.h"
#include "common/path.h"

#define SITE_CONFIG	"/etc/vigil/config.yaml"

void
vg_mload_layer(struct vg_mload *ls, struct vg_ytree *tree, const char *file,
    int config, struct vg_diag *d)
{
	struct vg_dctx c;

	ls->layers = vg_xrealloc(ls->layers,
	    (ls->nlayers + 1) * sizeof(*ls->layers));
	ls->layers[ls->nlayers].tree = tree;
	ls->layers[ls->nlayers].file = file;
	ls->nlayers++;
	if (tree == NULL)
		return;
	memset(&c, 0, sizeof(c));
	c.d = d;
	c.file = file;
	c.config = config;
	c.user = ls;
	c.locs = &ls->m->locs;
	c.bad = &ls->bad;
	vg_schema_decode(vg_manifest_schema(), tree->root, ls->m, &c);
}

void
vg_mload_release(struct vg_mload *ls)
{
	size_t i;

	for (i = 0; i < ls->nlayers; i++)
		vg_ytree_free(ls->layers[i].tree);
	free(ls->layers);
	ls->layers = NULL;
	ls->nlayers = 0;
	vg_strv_release(&ls->bad);
	free(ls->site_sendmail);
	ls->site_sendmail = NULL;
	free(ls->site_net_max);
	ls->site_net_max = NULL;
	vg_strv_release(&ls->site_deny);
}

/* The config path to use: option, then environment, then default. */
static char *
config_path(const char *opt, const char *envname, int user)
{
	const char *v, *home;

	if (opt != NULL)
		return *opt ? vg_xstrdup(opt) : NULL;
	v = getenv(envname);
	if (v != NULL)
		return *v ? vg_xstrdup(v) : NULL;
	if (!user)
		return vg_xstrdup(SITE_CONFIG);
	v = getenv("XDG_CONFIG_HOME");
	if (v != NULL && v[0] == '/')
		return vg_xasprintf("%s/vigil/config.yaml", v);
	home = getenv("HOME");
	if (home != NULL && home[0] == '/')
		return vg_xasprintf("%s/.config/vigil/config.yaml", home);
	return NULL;
}

/* Parses text as layer name; 0, or the parse rc (problems in d). */
static int
add_text_layer(struct vg_mload *ls, const char *name, const char *text,
    size_t len, int config, struct vg_diag *d)
{
	struct vg_ytree *t = NULL;
	const char *file = vg_manifest_source(ls->m, name);
	int rc;

	vg_diag_source(d, file, text, len);
	rc = vg_ytree_parse(file, text, len, NULL, &t, NULL, d);
	vg_mload_layer(ls, t, file, config, d);
	return rc;
}

/* Reads and decodes one config file; a missing one is skipped. */
static int
add_config(struct vg_mload *ls, const char *path, struct vg_diag *d,
    int *parse_rc, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	int rc;

	if (path == NULL)
		return 0;
	rc = vg_read_file(path, VG_YAML_MAX_BYTES, &b, e);
	if (rc == VG_ENOENT) {
		vg_err_init(e);
		vg_buf_release(&b);
		return 0;
	}
	if (rc != 0) {
		vg_err_prefix(e, "config file: ");
		vg_buf_release(&b);
		return rc;
	}
	rc = add_text_layer(ls, path, vg_buf_str(&b), b.len, 1, d);
	if (rc != 0 && *parse_rc == 0)
		*parse_rc = rc;
	vg_buf_release(&b);
	return 0;
}

/* Turns "a.b.c=value" into a layer {a: {b: {c: value}}}. */
static int
add_set(struct vg_mload *ls, const char *arg, struct vg_diag *d)
{
	struct vg_ylimits lim = { .col_shift = 0 };
	struct vg_ytree *t = NULL;
	struct vg_ynode *cur, *map, *key;
	struct vg_loc loc;
	const char *eq = strchr(arg, '='), *label, *p, *q;
	char *tmp, *name;
	int rc;

	tmp = vg_xasprintf("--set '%s'", arg);
	label = vg_manifest_source(ls->m, tmp);
	free(tmp);
	/* The argument is a one-line file: columns count from its start. */
	loc = (struct vg_loc){ label, 1, 1 };
	vg_diag_source(d, label, arg, strlen(arg));
	if (eq == NULL || eq == arg) {
		vg_diag_add(d, &loc, "expected KEY.PATH=VALUE, for example "
		    "resources.memory=4G");
		return VG_EINVAL;
	}
	for (p = arg; p <= eq; p = q + 1) {
		q = p + strcspn(p, ".=");
		if (q == p || q > eq) {
			loc.col = (int)(p - arg) + 1;
			vg_diag_add(d, &loc, "empty name in key path '%.*s'",
			    (int)(eq - arg), arg);
			return VG_EINVAL;
		}
		if (*q == '=')
			break;
	}
	lim.col_shift = (int)(eq + 1 - arg);
	rc = vg_ytree_parse(label, eq + 1, strlen(eq + 1), &lim, &t, NULL, d);
	if (rc != 0)
		return rc;
	cur = t->root;
	if (cur == NULL) {
		cur = vg_ytree_node(t, VG_Y_SCALAR);
		cur->str = vg_xstrdup("");
		cur->line = 1;
		cur->col = lim.col_shift + 1;
	}
	/* Wrap the value in one mapping per path name, innermost first. */
	for (q = eq; q > arg; q = p - 1) {
		p = q;
		while (p > arg && p[-1] != '.')
			p--;
		name = vg_xstrndup(p, (size_t)(q - p));
		key = vg_ytree_node(t, VG_Y_SCALAR);
		key->str = name;
		key->len = strlen(name);
		key->line = 1;
		key->col = (int)(p - arg) + 1;
		map = vg_ytree_node(t, VG_Y_MAP);
		map->line = 1;
		map->col = key->col;
		vg_ynode_put(map, key, cur);
		cur = map;
		if (p == arg)
			break;
	}
	t->root = cur;
	vg_mload_layer(ls, t, label, 0, d);
	return 0;
}

struct diag_key {
	size_t	src;		/* index in m->sources */
	long	line;		/* 0 = no place: after the placed ones */
	long	col;
	size_t	seq;		/* original order, for a stable sort */
	char	*text;
};

/* Orders by source file, line, column, then original order. */
static int
diag_cmp(const void *a, const void *b)
{
	const struct diag_key *x = a, *y = b;
	long xl = x->line ? x->line : LONG_MAX, yl = y->line ? y->line :
	    LONG_MAX;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Sorts the lines added since first by file (in layer order) and
 * position, so that problems read top to bottom whatever stage found
 * them.
 */
static void
diag_sort(const struct vg_manifest *m, struct vg_diag *d, size_t first)
{
	struct diag_key *k;
	size_t i, j, n = d->lines.n - first, len, best;
	const char *s, *p;
	char *end;
	int dup;

	if (n < 2)
		return;
	k = vg_xcalloc(n, sizeof(*k));
	for (i = 0; i < n; i++) {
		s = d->lines.v[first + i];
		k[i].seq = i;
		k[i].text = d->lines.v[first + i];
		k[i].src = m->sources.n;
		best = 0;
		for (j = 0; j < m->sources.n; j++) {
			len = strlen(m->sources.v[j]);
			if (len > best && strncmp(s, m->sources.v[j], len) ==
			    0 && s[len] == ':') {
				best = len;
				k[i].src = j;
			}
		}
		if (best == 0)
			continue;
		p = s + best + 1;
		k[i].line = strtol(p, &end, 10);
		if (end == p || *end != ':') {
			k[i].line = 0;
			continue;
		}
		k[i].col = strtol(end + 1, &end, 10);
	}
	qsort(k, n, sizeof(*k), diag_cmp);
	/* Each problem once: a line equal to an earlier one at the same
	 * place (found by two stages, or in two layers) is dropped. */
	for (i = 0, len = 0; i < n; i++) {
		dup = 0;
		for (j = i; !dup && j-- > 0 && k[j].src == k[i].src &&
		    k[j].line == k[i].line && k[j].col == k[i].col;)
			dup = k[j].text != NULL &&
			    strcmp(k[j].text, k[i].text) == 0;
		if (dup) {
			free(k[i].text);
			k[i].text = NULL;
			continue;
		}
		d->lines.v[first + len++] = k[i].text;
	}
	d->lines.n = first + len;
	free(k);
}

/* Notes where the manifest's top-level mapping is (its first key, or
 * line 1, column 1 when it is empty): where a missing key is reported. */
static void
root_record(struct vg_mload *ls)
{
	const struct vg_layer *l = &ls->layers[ls->nlayers - 1];
	const struct vg_ynode *r = l->tree != NULL ? l->tree->root : NULL;
	struct vg_loc loc = { l->file, 1, 1 };

	if (r != NULL && r->line > 0 && !vg_ynode_is_null(r)) {
		loc.line = r->line;
		loc.col = r->col;
	}
	vg_mlocs_add(&ls->m->locs, "", &loc, &loc);
}

/*
 * Takes what belongs to the site out of the layers that follow: the
 * site config's policy.file is the site's policy file (later layers'
 * policy.file only adds rules on top of it), and a level the site config
 * requires (isolation.required) is a minimum no later layer may lower
 * (checked by site_floor once every layer is in).
 */
static void
site_settings(struct vg_mload *ls)
{
	struct vg_manifest *m = ls->m;
	struct vg_loc at;

	free(m->policy.site_file);
	m->policy.site_file = m->policy.file;
	m->policy.file = NULL;
	ls->site_required = m->isolation.required;
	ls->site_level = m->isolation.level;
	free(ls->site_net_max);
	ls->site_net_max = vg_xstrdup(m->isolation.network_max != NULL ?
	    m->isolation.network_max : "host");
	vg_strv_release(&ls->site_deny);
	for (size_t i = 0; i < m->isolation.network.deny.n; i++)
		vg_strv_push(&ls->site_deny, m->isolation.network.deny.v[i]);
	/* A mailer the site config names is the mailer: vigil runs it
	 * outside any sandbox, so no later layer may choose another. */
	free(ls->site_sendmail);
	ls->site_sendmail = NULL;
	if (vg_manifest_loc(m, "notify.sendmail", &at) == 0 &&
	    m->notify.sendmail != NULL)
		ls->site_sendmail = vg_xstrdup(m->notify.sendmail);
}

/* The isolation level's rank: none < standard < strict. */
static int
level_rank(enum vg_isolation_level l)
{
	return l == VG_ISO_NONE ? 0 : l == VG_ISO_STANDARD ? 1 : 2;
}

/* The rank of a network mode or of network_max's name: none < allow <
 * host. */
static int
net_rank(const char *name)
{
	return strcmp(name, "none") == 0 ? 0 : strcmp(name, "allow") == 0 ?
	    1 : 2;
}

/*
 * Refuses a load whose tasks would reach more than the site config's
 * isolation.network_max allows, and keeps the site's deny-list under an
 * allow-list a later layer wrote.
 */
static void
site_net_ceiling(struct vg_mload *ls, struct vg_diag *diag)
{
	struct vg_isolation_conf *iso = &ls->m->isolation;
	const char *max = ls->site_net_max != NULL ? ls->site_net_max :
	    "host", *mode = vg_net_mode_name(vg_isolation_net(iso));
	struct vg_loc loc;
	size_t i, k;

	free(iso->network_max);
	iso->network_max = vg_xstrdup(max);
	if (net_rank(mode) > net_rank(max)) {
		if (vg_manifest_loc(ls->m, "isolation.network", &loc) != 0 &&
		    loc.line == 0)
			loc = (struct vg_loc){ ls->m->file, 0, 0 };
		vg_diag_add(diag, &loc, "isolation.network '%s'%s is more "
		    "than the site allows (isolation.network_max '%s' in "
		    "the site config); ask for %s", mode,
		    iso->network.mode == VG_NET_LEVEL ? " (the default of "
		    "this isolation.level)" : "", max,
		    net_rank(max) == 0 ? "'none'" : "'none' or an allow-list "
		    "(isolation.network: {allow: [HOST, ...]})");
	}
	if (iso->network.mode != VG_NET_ALLOW)
		return;
	for (i = 0; i < ls->site_deny.n; i++) {
		for (k = 0; k < iso->network.deny.n; k++)
			if (strcmp(iso->network.deny.v[k],
			    ls->site_deny.v[i]) == 0)
				break;
		if (k == iso->network.deny.n)
			vg_strv_push(&iso->network.deny, ls->site_deny.v[i]);
	}
}

/* Refuses a load that lowers the isolation the site config requires. */
static void
site_floor(struct vg_mload *ls, struct vg_diag *diag)
{
	static const char *const names[] = {
		[VG_ISO_STANDARD] = "standard", [VG_ISO_NONE] = "none",
		[VG_ISO_STRICT] = "strict",
	};
	struct vg_manifest *m = ls->m;
	struct vg_loc loc;

	if (ls->site_sendmail != NULL && (m->notify.sendmail == NULL ||
	    strcmp(m->notify.sendmail, ls->site_sendmail) != 0)) {
		if (vg_manifest_loc(m, "notify.sendmail", &loc) != 0)
			loc = (struct vg_loc){ m->file, 0, 0 };
		vg_diag_add(diag, &loc, "notify.sendmail is fixed by the site "
		    "config ('%s'); remove it here", ls->site_sendmail);
	}
	site_net_ceiling(ls, diag);
	if (!ls->site_required)
		return;
	if (level_rank(m->isolation.level) < level_rank(ls->site_level)) {
		if (vg_manifest_loc(m, "isolation.level", &loc) != 0)
			loc = (struct vg_loc){ m->file, 0, 0 };
		vg_diag_add(diag, &loc, "isolation.level '%s' is below the "
		    "level the site requires ('%s', isolation.required in "
		    "the site config); ask for '%s' or stricter",
		    names[m->isolation.level], names[ls->site_level],
		    names[ls->site_level]);
	}
	/* A later layer may not take the requirement back. */
	m->isolation.required = 1;
}

/*
 * A webhook header may expand only the variables a config file (site or
 * user, never a manifest) allows for notifications (notify.env_allow):
 * vigil's environment is root's under cron, and a header goes to
 * whatever host the manifest names.
 */
static void
notify_env_floor(struct vg_mload *ls, struct vg_diag *diag)
{
	const struct vg_notify_conf *nc = &ls->m->notify;
	const char *p, *q;
	struct vg_loc loc;
	size_t i, k, j, len;

	for (i = 0; i < nc->nwebhook; i++)
		for (k = 0; k < nc->webhook[i].headers.n; k++) {
			p = nc->webhook[i].headers.v[k].value;
			while (p != NULL && (q = strstr(p, "${{")) != NULL) {
				q += 3;
				while (*q == ' ')
					q++;
				if (strncmp(q, "env.", 4) != 0) {
					p = q;
					continue;
				}
				q += 4;
				len = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789_");
				for (j = 0; j < nc->env_allow.n; j++)
					if (strlen(nc->env_allow.v[j]) == len &&
					    strncmp(nc->env_allow.v[j], q,
					    len) == 0)
						break;
				if (j == nc->env_allow.n) {
					vg_manifest_locf(ls->m, &loc,
					    "notify.webhook[%zu].headers.%s",
					    i, nc->webhook[i].headers.v[k].key);
					vg_diag_add(diag, &loc, "webhook header "
					    "'%s' expands env.%.*s, which no "
					    "config allows for notifications; "
					    "list it in notify.env_allow in "
					    "your user config or the site "
					    "config", nc->webhook[i].headers.
					    v[k].key, (int)len, q);
				}
				p = q + len;
			}
		}
}

/* Adds the site and user config layers that opts asks for. */
static int
add_configs(struct vg_mload *ls, const struct vg_load_opts *opts,
    struct vg_diag *diag, int *parse_rc, struct vg_err *e)
{
	char *site, *user;
	int rc;

	if (opts->no_configs)
		return 0;
	site = config_path(opts->site_config, "VIGIL_SITE_CONFIG", 0);
	user = config_path(opts->user_config, "VIGIL_USER_CONFIG", 1);
	if ((rc = add_config(ls, site, diag, parse_rc, e)) == 0) {
		site_settings(ls);
		rc = add_config(ls, user, diag, parse_rc, e);
	}
	free(site);
	free(user);
	return rc;
}

/* Adds one layer per --set of opts. */
static void
add_sets(struct vg_mload *ls, const struct vg_load_opts *opts,
    struct vg_diag *diag, int *parse_rc)
{
	size_t i;
	int rc;

	for (i = 0; opts->sets != NULL && opts->sets[i] != NULL; i++) {
		rc = add_set(ls, opts->sets[i], diag);
		if (rc != 0 && *parse_rc == 0)
			*parse_rc = rc;
	}
}

/* Starts a load: an empty manifest named name in ls, then the config
 * layers of opts; *mp is NULL until load_end hands the manifest out. */
static int
load_begin(struct vg_mload *ls, const char *name,
    const struct vg_load_opts *opts, struct vg_manifest **mp,
    struct vg_diag *diag, int *parse_rc, struct vg_err *e)
{
	*mp = NULL;
	memset(ls, 0, sizeof(*ls));
	ls->m = vg_manifest_new();
	ls->m->file = vg_xstrdup(name);
	ls->session = opts->session;
	return add_configs(ls, opts, diag, parse_rc, e);
}

/*
 * Ends a load: sorts the problems found since before and turns them into
 * the return code, then hands the manifest out (*mp) or frees it.
 */
static int
load_end(struct vg_mload *ls, int rc, int parse_rc, struct vg_diag *diag,
    size_t before, struct vg_manifest **mp, struct vg_err *e)
{
	if (rc == 0) {
		site_floor(ls, diag);
		notify_env_floor(ls, diag);
	}
	if (rc == 0 && diag->lines.n > before) {
		diag_sort(ls->m, diag, before);
		rc = parse_rc != 0 ? parse_rc : VG_EINVAL;
		vg_err_set(e, rc, "%s", diag->lines.v[before]);
	}
	vg_mload_release(ls);
	if (rc != 0) {
		vg_manifest_free(ls->m);
		return rc;
	}
	*mp = ls->m;
	return 0;
}

int
vg_manifest_load_mem(const char *name, const char *text, size_t len,
    const struct vg_load_opts *opts, struct vg_manifest **mp,
    struct vg_diag *diag, struct vg_err *e)
{
	static const struct vg_load_opts none = { .no_configs = 0 };
	struct vg_mload ls;
	size_t before = diag->lines.n;
	int rc, parse_rc = 0;

	if (opts == NULL)
		opts = &none;
	if ((rc = load_begin(&ls, name, opts, mp, diag, &parse_rc, e)) != 0)
		return load_end(&ls, rc, parse_rc, diag, before, mp, e);
	rc = add_text_layer(&ls, name, text, len, 0, diag);
	root_record(&ls);
	if (ls.layers[ls.nlayers - 1].tree != NULL &&
	    ls.layers[ls.nlayers - 1].tree->root != NULL &&
	    ls.layers[ls.nlayers - 1].tree->root->kind != VG_Y_MAP &&
	    !vg_ynode_is_null(ls.layers[ls.nlayers - 1].tree->root))
		ls.bad_root = 1;
	if (rc != 0 && parse_rc == 0)
		parse_rc = rc;
	add_sets(&ls, opts, diag, &parse_rc);
	if (parse_rc == 0)
		vg_mload_finish(&ls, diag);
	return load_end(&ls, 0, parse_rc, diag, before, mp, e);
}

int
vg_config_load_defaults(const struct vg_load_opts *opts,
    struct vg_manifest **mp, struct vg_diag *diag, struct vg_err *e)
{
	static const struct vg_load_opts none = { .no_configs = 0 };
	struct vg_mload ls;
	size_t before = diag->lines.n;
	int rc, parse_rc = 0;

	if (opts == NULL)
		opts = &none;
	if ((rc = load_begin(&ls, "configuration", opts, mp, diag, &parse_rc, e)) != 0)
		return load_end(&ls, rc, parse_rc, diag, before, mp, e);
	add_sets(&ls, opts, diag, &parse_rc);
	/* No vg_mload_finish: its checks are about a job (a command, the
	 * task count, the backend's own section), which a configuration
	 * alone does not describe. */
	return load_end(&ls, 0, parse_rc, diag, before, mp, e);
}

int
vg_manifest_load(const char *path, const struct vg_load_opts *opts,
    struct vg_manifest **mp, struct vg_diag *diag, struct vg_err *e)
{
	struct vg_buf b = VG_BUF_INIT;
	int rc;

	*mp = NULL;
	rc = vg_read_file(path, VG_YAML_MAX_BYTES, &b, e);
	if (rc == 0)
		rc = vg_manifest_load_mem(path, vg_buf_str(&b), b.len, opts,
		    mp, diag, e);
	vg_buf_release(&b);
	return rc;
}
