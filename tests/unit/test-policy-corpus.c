/*
 * test-policy-corpus.c - runs the policy corpus (tests/policy/ TSV files):
 * every command with its expected verdict and acceptable categories.
 * Prints each mismatch, recall on the dangerous commands and the false
 * positive rate on the ordinary ones, and fails on any miss or false
 * positive of the built-in files (corpus.tsv, holdout.tsv, and
 * effects.tsv with a section per effect class), below recall 98% or
 * above 2% false positives for another file.  POLICY_CORPUS=FILE runs
 * another file;
 * POLICY_CORPUS_VERBOSE=1 prints every verdict; POLICY_CORPUS_CWD and
 * POLICY_CORPUS_HOME change the working and home directories.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/policy/policy.h"

struct counts {
	int	deny_total;
	int	deny_hit;
	int	deny_wrongcat;
	int	allow_total;
	int	allow_fp;
};

/* True when category cat appears in the '|'-separated list. */
static int
cat_ok(const char *list, const char *cat)
{
	size_t n = strlen(cat);
	const char *p = list;

	while (p != NULL && *p) {
		const char *e = strchr(p, '|');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && strncmp(p, cat, n) == 0)
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* Runs one corpus file and adds to the counts. */
static void
run_file(const char *path, struct counts *c, int verbose)
{
	static char k1[] = "SCRATCH", v1[] = "/scratch/user", k2[] = "HOME",
	    v2[] = "/home/user", mode[] = "auto-deny";
	struct vg_kv kv[] = {
		{ .key = k1, .value = v1 },
		{ .key = k2, .value = v2 },
	};
	struct vg_kvs env = { .v = kv, .n = 2, .cap = 2 };
	struct vg_policy_ctx ctx = {
		.cwd = "/home/user/project",
		.home = "/home/user",
		.task_dir = NULL,
		.env = &env,
	};

	/* Other places to run from, to see how much the verdicts depend
	 * on the working directory. */
	if (getenv("POLICY_CORPUS_CWD") != NULL)
		ctx.cwd = getenv("POLICY_CORPUS_CWD");
	if (getenv("POLICY_CORPUS_HOME") != NULL)
		ctx.home = kv[1].value = getenv("POLICY_CORPUS_HOME");
	struct vg_policy_conf conf = { .mode = mode };
	struct vg_diag diag = VG_DIAG_INIT;
	struct vg_policy *p = NULL;
	struct vg_verdict v;
	struct vg_err e;
	char line[8192];
	FILE *f;
	int lineno = 0;

	f = fopen(path, "r");
	assert_non_null(f);
	vg_err_init(&e);
	assert_int_equal(vg_policy_open_mem(&conf, "test", NULL, 0, &p, &diag,
	    &e), 0);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *expect, *cats, *cmd, *nl;
		int k, ok = 0;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		expect = line;
		cats = strchr(expect, '\t');
		assert_non_null(cats);
		*cats++ = '\0';
		cmd = strchr(cats, '\t');
		assert_non_null(cmd);
		*cmd++ = '\0';
		assert_int_equal(vg_policy_eval(p, cmd, &ctx, &v), 0);
		if (strcmp(expect, "deny") == 0) {
			c->deny_total++;
			if (!v.allowed) {
				c->deny_hit++;
				for (k = 0; k < v.nfindings; k++)
					if (cat_ok(cats, v.findings[k].category))
						ok = 1;
				if (!ok) {
					c->deny_wrongcat++;
					printf("%s:%d: category %s, want %s: %s\n",
					    path, lineno, v.findings[0].category,
					    cats, cmd);
				}
			} else {
				printf("%s:%d: MISSED (want %s): %s\n", path,
				    lineno, cats, cmd);
			}
		} else {
			c->allow_total++;
			if (!v.allowed) {
				c->allow_fp++;
				printf("%s:%d: FALSE POSITIVE: %s\n    %s\n",
				    path, lineno, cmd, v.summary);
			}
		}
		if (verbose)
			printf("%s\t%s\n", v.summary, cmd);
	}
	fclose(f);
	vg_policy_free(p);
	vg_diag_release(&diag);
}

/* The corpus meets the recall and false-positive targets. */
static void
test_corpus(void **state)
{
	const char *env = getenv("POLICY_CORPUS");
	const char *files[] = { "tests/policy/corpus.tsv",
	    "tests/policy/holdout.tsv", "tests/policy/effects.tsv", NULL };
	struct counts c = { 0 };
	double recall, fp;
	int k;

	(void)state;
	if (env != NULL) {
		run_file(env, &c, getenv("POLICY_CORPUS_VERBOSE") != NULL);
	} else {
		for (k = 0; files[k] != NULL; k++)
			run_file(files[k], &c,
			    getenv("POLICY_CORPUS_VERBOSE") != NULL);
	}
	recall = c.deny_total ? (double)c.deny_hit / c.deny_total : 1;
	fp = c.allow_total ? (double)c.allow_fp / c.allow_total : 0;
	printf("corpus: dangerous %d, denied %d (recall %.2f%%, %d with "
	    "another category); ordinary %d, denied %d (false positives "
	    "%.2f%%)\n", c.deny_total, c.deny_hit, recall * 100,
	    c.deny_wrongcat, c.allow_total, c.allow_fp, fp * 100);
	assert_true(c.deny_total >= 300 || env != NULL);
	assert_true(c.allow_total >= 300 || env != NULL);
	assert_true(recall >= 0.98);
	assert_true(fp <= 0.02);
	if (env == NULL) {
		assert_int_equal(c.deny_hit, c.deny_total);
		assert_int_equal(c.allow_fp, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
