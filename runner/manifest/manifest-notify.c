/*
 * manifest-notify.c - the sections of unattended runs: concurrency (a
 * run's group and what a second run of it does) and notify (webhooks,
 * mail and commands told of a run's end), with their checks against
 * header and mail injection.  The top-level table (manifest.c) names
 * them (manifest-int.h).
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "runner/manifest/manifest-int.h"
#include "runner/manifest/schema-table.h"

static const char *const overlap_names[] = { "skip", "wait", "replace",
	"allow", NULL };
static const char *const notify_on_names[] = { "failure", "success",
	"always", "denied", NULL };
static const int notify_on_values[] = { VG_NOTIFY_FAILURE,
	VG_NOTIFY_SUCCESS, VG_NOTIFY_ALWAYS, VG_NOTIFY_DENIED };

/* True when s has a control character (a header or mail injection). */
static int
has_control(const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* concurrency.group: printable and short enough for a lock file name. */
static void
check_group(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const char *g = *(char **)p;

	(void)f;
	if (g == NULL)
		return;
	if (*g == '\0' || strlen(g) > 128 || has_control(g))
		vg_dctx_error(c, n, "'%s' must be 1 to 128 printable "
		    "characters", c->path);
}

/*
 * A header value: printable, and its only templates ${{ env.NAME }}
 * (the secret stays in vigil's environment, never in the stored
 * manifest).
 */
static void
check_header_value(const struct vg_ynode *n, const char *key,
    const char *v, struct vg_dctx *c)
{
	const char *p = v, *q, *name;
	size_t len;

	if (has_control(v)) {
		vg_dctx_error(c, n, "header '%s' of '%s' has a control "
		    "character", key, c->path);
		return;
	}
	while ((p = strstr(p, "${{")) != NULL) {
		q = p + 3;
		while (*q == ' ')
			q++;
		if (strncmp(q, "env.", 4) != 0)
			goto bad;
		name = q += 4;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		len = (size_t)(q - name);
		while (*q == ' ')
			q++;
		if (len == 0 || isdigit((unsigned char)*name) ||
		    strncmp(q, "}}", 2) != 0)
			goto bad;
		p = q + 2;
	}
	return;
bad:
	vg_dctx_error(c, n, "header '%s' of '%s': a template there is "
	    "'${{ env.NAME }}' (a variable of vigil's environment)", key,
	    c->path);
}

/* notify.webhook[i]: an http(s) URL; header names and values. */
static void
check_webhook(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_webhook *w = base;
	const struct vg_ynode *un, *hn, *kn;
	const char *u = w->url, *k;
	size_t i;

	(void)s;
	if (u == NULL) {
		vg_dctx_error(c, n, "'%s' needs 'url'", c->path);
		return;
	}
	/* Point at the value at fault when the tree has it. */
	un = vg_ynode_get(n, "url");
	hn = vg_ynode_get(n, "headers");
	if ((strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) !=
	    0) || strlen(u) <= (u[4] == 's' ? 8u : 7u) || has_control(u) ||
	    strchr(u, ' ') != NULL)
		vg_dctx_error(c, un != NULL ? un : n, "'%s.url' must be an "
		    "http:// or https:// URL, not '%.80s'", c->path, u);
	for (i = 0; i < w->headers.n; i++) {
		k = w->headers.v[i].key;
		kn = hn != NULL ? vg_ynode_get(hn, k) : NULL;
		if (kn == NULL)
			kn = hn != NULL ? hn : n;
		if (*k == '\0' || k[strcspn(k, " \t:()<>@,;\\\"/[]?={}")] !=
		    '\0' || has_control(k))
			vg_dctx_error(c, kn, "header name '%s' of '%s' is not "
			    "an HTTP token", k, c->path);
		else
			check_header_value(kn, k, w->headers.v[i].value, c);
	}
}

/* notify.email: plain addresses (they become a To: header). */
static void
check_email(const struct vg_field *f, const struct vg_ynode *n, void *p,
    struct vg_dctx *c)
{
	const struct vg_strv *sv = p;
	const char *a;
	size_t i;

	(void)f;
	for (i = 0; i < sv->n; i++) {
		a = sv->v[i];
		if (*a == '-' || strchr(a, '@') == NULL || a[strcspn(a,
		    " \t,;<>\"'()")] != '\0' || has_control(a))
			vg_dctx_error(c, n != NULL && n->kind == VG_Y_SEQ &&
			    i < n->n ? n->items[i] : n, "'%s[%zu]': '%.80s' "
			    "is not a mail "
			    "address (user@host, no spaces, commas or "
			    "quotes)", c->path, i, a);
	}
}

/* notify.command: an argv, so at least a program. */
static void
check_notify_command(const struct vg_field *f, const struct vg_ynode *n,
    void *p, struct vg_dctx *c)
{
	const struct vg_strv *sv = p;

	(void)f;
	/* The effective manifest (JSON) writes an unset list as []. */
	if (n != NULL && sv->n == 0 && !c->raw)
		vg_dctx_error(c, n, "'%s' needs a program (an argv list)",
		    c->path);
}

/* notify: a delivery attempt fits in the total cap. */
static void
check_notify(const struct vg_section *s, const struct vg_ynode *n,
    void *base, struct vg_dctx *c)
{
	const struct vg_notify_conf *nc = base;

	(void)s;
	if (nc->timeout > nc->total)
		vg_dctx_error(c, n, "'notify.timeout' (%gs) is larger than "
		    "'notify.total' (%gs)", nc->timeout, nc->total);
}

const struct vg_section vg_concurrency_section = {
	.name = "concurrency",
	.fields = (const struct vg_field[]){
		{ .key = "group", .type = VG_F_STR,
		  .off = OFF(vg_concurrency, group), .check = check_group,
		  .help = "runs that must not overlap (default: the name)" },
		CHOICE(vg_concurrency, "overlap", overlap, NULL,
		    overlap_names, "when the group is held: skip, wait, "
		    "replace, allow (default allow; skip under --cron)"),
		DUR(vg_concurrency, "wait", wait, "600", 0, 100 * YEAR,
		    "how long wait (and replace) wait for the holder"),
		{ .key = NULL },
	},
};

static const struct vg_section webhook_section = {
	.name = "webhook",
	.loc_off = 1 + OFF(vg_webhook, loc),
	.check = check_webhook,
	.scalar_key = "url",
	.fields = (const struct vg_field[]){
		STR(vg_webhook, "url", url, "http(s) URL the payload is "
		    "POSTed to"),
		{ .key = "headers", .type = VG_F_KVS,
		  .off = OFF(vg_webhook, headers),
		  .help = "extra headers; values may use ${{ env.NAME }}" },
		{ .key = NULL },
	},
};

const struct vg_section vg_notify_section = {
	.name = "notify",
	.check = check_notify,
	.fields = (const struct vg_field[]){
		{ .key = "on", .type = VG_F_FLAGS,
		  .off = OFF(vg_notify_conf, on), .def = "failure",
		  .values = notify_on_names, .ivalues = notify_on_values,
		  .help = "when: failure, success, always, denied" },
		{ .key = "webhook", .type = VG_F_LIST,
		  .off = OFF(vg_notify_conf, webhook),
		  .off2 = OFF(vg_notify_conf, nwebhook),
		  .size = sizeof(struct vg_webhook), .sub = &webhook_section,
		  .help = "URLs the JSON payload is POSTed to" },
		{ .key = "email", .type = VG_F_STRV,
		  .off = OFF(vg_notify_conf, email), .check = check_email,
		  .help = "recipients, mailed through sendmail -t" },
		{ .key = "command", .type = VG_F_STRV,
		  .off = OFF(vg_notify_conf, command),
		  .check = check_notify_command,
		  .help = "argv given the payload on stdin (gated)" },
		STRDEF(vg_notify_conf, "sendmail", sendmail, "sendmail",
		    "mail program (Slurm's MailProg)"),
		{ .key = "env_allow", .type = VG_F_STRV,
		  .off = OFF(vg_notify_conf, env_allow),
		  .flags = VG_FF_CONFIGONLY,
		  .help = "variables a webhook header may expand (config "
		  "only)" },
		{ .key = "allow_private", .type = VG_F_BOOL,
		  .off = OFF(vg_notify_conf, allow_private), .def = "false",
		  .flags = VG_FF_CONFIGONLY,
		  .help = "webhooks may go to loopback, link-local and private "
		  "addresses (config only)" },
		DUR(vg_notify_conf, "timeout", timeout, "10", 0.1, 3600,
		    "per delivery attempt"),
		DUR(vg_notify_conf, "total", total, "30", 0.1, 86400,
		    "cap on all deliveries of one run end"),
		{ .key = NULL },
	},
};
