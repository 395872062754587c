/*
 * test-egress-config.c - isolation.network in manifests and configs: the
 * modes and their boolean aliases, what each level makes of the default,
 * the JSON round trip, and the site config's ceiling (network_max) and
 * deny-list, which no later layer can lift.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/diag.h"
#include "common/err.h"
#include "runner/manifest/manifest.h"

static char site_path[] = "/tmp/vg-test-egress-XXXXXX";
static struct vg_diag diag;
static int as_session;		/* load a session's manifest */

/* Loads text with the site config site (NULL: none), no user config;
 * returns the manifest or NULL (the problems in diag). */
static struct vg_manifest *
load(const char *site, const char *text)
{
	struct vg_load_opts opts;
	struct vg_manifest *m = NULL;
	struct vg_err e;
	FILE *fp;

	memset(&opts, 0, sizeof(opts));
	vg_err_init(&e);
	vg_diag_release(&diag);
	opts.user_config = "/nonexistent/vigil/user.yaml";
	opts.site_config = "/nonexistent/vigil/site.yaml";
	opts.session = as_session;
	if (site != NULL) {
		fp = fopen(site_path, "w");
		assert_non_null(fp);
		fputs(site, fp);
		fclose(fp);
		opts.site_config = site_path;
	}
	(void)vg_manifest_load_mem("m.yaml", text, strlen(text), &opts, &m,
	    &diag, &e);
	return m;
}

/* The first problem of the last load, or "". */
static const char *
first_problem(void)
{
	return diag.lines.n > 0 ? diag.lines.v[0] : "";
}

static void
test_modes(void **state)
{
	static const struct {
		const char		*isolation;
		enum vg_net_mode	 set, is;
	} cases[] = {
		{ "{}", VG_NET_LEVEL, VG_NET_HOST },
		{ "{level: strict}", VG_NET_LEVEL, VG_NET_NONE },
		/* true was "strict: the network beyond loopback": host */
		{ "{level: strict, network: true}", VG_NET_HOST, VG_NET_HOST },
		/* false: what the level gives, as before */
		{ "{network: false}", VG_NET_LEVEL, VG_NET_HOST },
		{ "{level: strict, network: off}", VG_NET_LEVEL, VG_NET_NONE },
		{ "{network: none}", VG_NET_NONE, VG_NET_NONE },
		{ "{level: strict, network: host}", VG_NET_HOST, VG_NET_HOST },
	};
	struct vg_manifest *m;
	char text[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "command: x\nisolation: %s\n",
		    cases[i].isolation);
		m = load(NULL, text);
		if (m == NULL)
			fail_msg("%s: %s", cases[i].isolation, first_problem());
		assert_int_equal(m->isolation.network.mode, cases[i].set);
		assert_int_equal(vg_isolation_net(&m->isolation), cases[i].is);
		vg_manifest_free(m);
	}
}

/* The mapping decodes; the JSON form reads back the same. */
static void
test_allow_roundtrip(void **state)
{
	static const char stored[] = "{\"file\":\"m.yaml\",\"manifest\":"
	    "{\"version\":1,\"command\":\"x\",\"isolation\":{\"network\":"
	    "{\"allow\":[\"pypi.org\",\"*.github.com:443\"],\"deny\":"
	    "[\"evil.github.com\"]}}}}";
	struct vg_manifest *m, *back = NULL;
	struct vg_buf json = VG_BUF_INIT;
	struct vg_err e;

	(void)state;
	vg_err_init(&e);
	m = load(NULL, "command: x\nbackend: docker\nimage: alpine\n"
	    "isolation:\n  network:\n    allow: [pypi.org, '*.github.com:443']"
	    "\n    deny: [evil.github.com]\n");
	/* docker runs the proxy for runs (as root, on podman) */
	assert_non_null(m);
	vg_manifest_free(m);
	/* ... but not beside a network of docker's own */
	m = load(NULL, "command: x\nbackend: docker\nimage: alpine\n"
	    "docker:\n  network: bridge\n"
	    "isolation:\n  network:\n    allow: [pypi.org]\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "m.yaml:5:3: docker.network "
	    "'bridge' with an isolation.network allow-list"));
	/* ssh runs none */
	m = load(NULL, "command: x\nbackend: ssh\nssh:\n  host: h\n"
	    "isolation:\n  network:\n    allow: [pypi.org]\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "isolation.network: an "
	    "allow-list is not enforced by backend 'ssh'"));
	/* local runs the proxy for runs and for sessions; docker for runs
	 * only */
	m = load(NULL, "command: x\nisolation:\n  network: {allow: [a.org]}\n");
	assert_non_null(m);
	vg_manifest_free(m);
	as_session = 1;
	m = load(NULL, "isolation:\n  network: {allow: [a.org]}\n");
	assert_non_null(m);
	vg_manifest_free(m);
	m = load(NULL, "backend: docker\nimage: alpine\nisolation:\n"
	    "  network: {allow: [a.org]}\n");
	as_session = 0;
	assert_null(m);
	assert_non_null(strstr(first_problem(), "m.yaml:4:3: isolation."
	    "network 'allow' is enforced by backend 'docker' in runs, not in "
	    "sessions"));
	/* singularity: in runs, not in sessions (apptainer's instance) */
	m = load(NULL, "command: x\nbackend: singularity\nimage: "
	    "docker://alpine\nisolation:\n  network: {allow: [a.org]}\n");
	assert_non_null(m);
	vg_manifest_free(m);
	as_session = 1;
	m = load(NULL, "backend: singularity\nimage: docker://alpine\n"
	    "isolation:\n  network: none\n");
	as_session = 0;
	assert_null(m);
	assert_non_null(strstr(first_problem(), "m.yaml:4:3: isolation."
	    "network 'none' is enforced by backend 'singularity' in runs, "
	    "not in sessions"));
	m = load(NULL, "command: x\nisolation:\n  network: {allow: [a.org]}\n"
	    "  level: none\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "needs a sandbox"));
	/* the JSON form, as a run stores it */
	assert_int_equal(vg_manifest_from_json(stored, strlen(stored), &back,
	    &e), 0);
	assert_int_equal(back->isolation.network.mode, VG_NET_ALLOW);
	assert_int_equal(back->isolation.network.allow.n, 2);
	assert_string_equal(back->isolation.network.allow.v[1],
	    "*.github.com:443");
	assert_string_equal(back->isolation.network.deny.v[0],
	    "evil.github.com");
	vg_manifest_to_json(back, &json);
	assert_non_null(strstr(vg_buf_str(&json), "\"network\":{\"allow\":"
	    "[\"pypi.org\",\"*.github.com:443\"],\"deny\":"
	    "[\"evil.github.com\"]}"));
	vg_manifest_free(back);
	back = NULL;
	assert_int_equal(vg_manifest_from_json(vg_buf_str(&json), json.len,
	    &back, &e), 0);
	assert_int_equal(back->isolation.network.mode, VG_NET_ALLOW);
	assert_int_equal(back->isolation.network.deny.n, 1);
	vg_manifest_free(back);
	vg_buf_release(&json);
}

/* The site's network_max and deny-list bind every later layer. */
static void
test_site_ceiling(void **state)
{
	static const char site_none[] = "isolation:\n  network: none\n"
	    "  network_max: none\n";
	struct vg_manifest *m;

	(void)state;
	/* the site's default is the default */
	m = load(site_none, "command: x\n");
	assert_non_null(m);
	assert_int_equal(vg_isolation_net(&m->isolation), VG_NET_NONE);
	assert_string_equal(m->isolation.network_max, "none");
	vg_manifest_free(m);
	/* a manifest asking for more is refused, at its key */
	m = load(site_none, "command: x\nisolation:\n  network: host\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "m.yaml:3:3: "
	    "isolation.network 'host' is more than the site allows "
	    "(isolation.network_max 'none' in the site config); ask for "
	    "'none'"));
	/* the alias too */
	m = load(site_none, "command: x\nisolation: {network: yes}\n");
	assert_null(m);
	/* a manifest cannot raise the ceiling itself */
	m = load(site_none, "command: x\nisolation: {network_max: host, "
	    "network: host}\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "network_max"));
	/* never host: the level's default of host is refused, naming it */
	m = load("isolation: {network_max: allow}\n", "command: x\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "isolation.network 'host' "
	    "(the default of this isolation.level) is more than the site "
	    "allows (isolation.network_max 'allow' in the site config); ask "
	    "for 'none' or an allow-list"));
	m = load("isolation: {network_max: allow}\n", "command: x\n"
	    "isolation: {level: strict}\n");
	assert_non_null(m);
	vg_manifest_free(m);
	m = load("isolation: {network_max: nowhere}\n", "command: x\n");
	assert_null(m);
	assert_non_null(strstr(first_problem(), "nowhere"));
}

/* An allow-list a manifest writes keeps the site's deny-list. */
static void
test_site_deny(void **state)
{
	struct vg_manifest *m;
	const struct vg_strv *deny;

	(void)state;
	/* the site's allow-list is the default */
	m = load("isolation:\n  network:\n    allow: [a.org]\n    deny: "
	    "[169.254.169.254, b.a.org]\n", "command: x\n");
	assert_non_null(m);
	assert_int_equal(m->isolation.network.mode, VG_NET_ALLOW);
	assert_string_equal(m->isolation.network.allow.v[0], "a.org");
	vg_manifest_free(m);
	/* a manifest's own list replaces it, the site's denials stay */
	m = load("isolation:\n  network: {allow: [a.org], deny: "
	    "[169.254.169.254, x.org]}\n", "command: x\nisolation:\n  "
	    "network: {allow: [c.org], deny: [d.org, 169.254.169.254]}\n");
	assert_non_null(m);
	deny = &m->isolation.network.deny;
	assert_int_equal(m->isolation.network.allow.n, 1);
	assert_string_equal(m->isolation.network.allow.v[0], "c.org");
	assert_int_equal(deny->n, 3);
	assert_string_equal(deny->v[0], "d.org");
	assert_string_equal(deny->v[1], "169.254.169.254");
	assert_string_equal(deny->v[2], "x.org");
	vg_manifest_free(m);
	/* none or host from the manifest: nothing to deny */
	m = load("isolation:\n  network: {allow: [a.org], deny: [x.org]}\n",
	    "command: x\nisolation: {network: none}\n");
	assert_non_null(m);
	assert_int_equal(m->isolation.network.deny.n, 0);
	vg_manifest_free(m);
}

static int
teardown(void **state)
{
	(void)state;
	vg_diag_release(&diag);
	unlink(site_path);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_allow_roundtrip),
		cmocka_unit_test(test_site_ceiling),
		cmocka_unit_test(test_site_deny),
	};
	int fd = mkstemp(site_path);

	if (fd < 0)
		return 1;
	close(fd);
	return cmocka_run_group_tests(tests, NULL, teardown);
}
