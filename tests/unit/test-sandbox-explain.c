/*
 * test-sandbox-explain.c - a failed task's messages, judged against what
 * its sandbox gave it: the refused path, the level and the setting that
 * would allow it; nothing said when the sandbox is not why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/sandbox-explain.h"
#include "backends/sandbox-workdir.h"

static const char *const wr[] = { "/dev/null", "/data/out" };
static const char *const rd[] = { "/usr", "/etc" };

/* The input of a task in /w at level (standard or strict). */
static struct vg_explain_in
input(int strict, int workdir_writable)
{
	struct vg_explain_in in;
	size_t n = 0;

	while (vg_wd_protected[n] != NULL)
		n++;
	memset(&in, 0, sizeof(in));
	in.level = strict ? "strict" : "standard";
	in.strict = strict;
	in.network = !strict;	/* standard keeps the host's network */
	in.task_dir = "/v/runs/r/tasks/0";
	in.tmp_dir = "/v/runs/r/tmp/1";
	in.workdir = "/w";
	in.workdir_writable = workdir_writable;
	in.protected = vg_wd_protected;
	in.nprotected = n;
	in.writable = wr;
	in.nwritable = 2;
	in.readable = rd;
	in.nreadable = 2;
	in.where = "at m.yaml:4";
	return in;
}

/* Explains text; returns the reason ("" when none) in a static buffer. */
static const char *
why(const struct vg_explain_in *in, const char *text)
{
	static char s[1024];
	struct vg_buf b = VG_BUF_INIT;

	s[0] = '\0';
	if (vg_sandbox_explain(in, text, strlen(text), &b))
		snprintf(s, sizeof(s), "%s", vg_buf_str(&b));
	else
		assert_int_equal(b.len, 0);
	vg_buf_release(&b);
	return s;
}

/* The messages of the shell, coreutils and Python name the path. */
static void
test_write_refused(void **state)
{
	struct vg_explain_in in = input(0, 1);
	static const struct { const char *text, *path; } cases[] = {
		{ "sh: 1: cannot create /srv/out.txt: Permission denied\n",
		  "'/srv/out.txt'" },
		{ "/w/run.sh: 3: cannot create /srv/ab: Permission denied",
		  "'/srv/ab'" },
		{ "touch: cannot touch '/opt/x': Permission denied\n",
		  "'/opt/x'" },
		{ "Traceback ...\nPermissionError: [Errno 13] Permission "
		  "denied: '/var/lib/x.db'\n", "'/var/lib/x.db'" },
		{ "mkdir: cannot create directory \xe2\x80\x98/srv/d\xe2\x80"
		  "\x99: Permission denied", "'/srv/d'" },
		{ "bash: /etc/motd: Permission denied", "'/etc/motd'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = why(&in, cases[i].text);

		assert_non_null(strstr(s, "the sandbox refused writing "));
		assert_non_null(strstr(s, cases[i].path));
		assert_non_null(strstr(s, "isolation standard"));
		assert_non_null(strstr(s, "isolation.writable at m.yaml:4"));
	}
}

/* A relative name is the working directory's; its protected entries
 * are said to be kept read-only. */
static void
test_protected(void **state)
{
	struct vg_explain_in in = input(0, 1);
	const char *s;

	(void)state;
	s = why(&in, "sh: 1: cannot create .git/config: Read-only file "
	    "system\n");
	assert_non_null(strstr(s, "keeps '/w/.git/config' read-only"));
	s = why(&in, "OSError: [Errno 30] Read-only file system: "
	    "'./.bashrc'");
	assert_non_null(strstr(s, "'/w/.bashrc'"));
	/* the working directory itself is writable: not the sandbox */
	assert_string_equal(why(&in, "sh: cannot create out.csv: "
	    "Permission denied"), "");
	/* not writable: then it is */
	in = input(0, 0);
	s = why(&in, "sh: cannot create out.csv: Permission denied");
	assert_non_null(strstr(s, "refused writing '/w/out.csv'"));
	assert_null(strstr(s, "the working directory and"));
}

/* What the task may write, and messages of other causes, say nothing. */
static void
test_not_the_sandbox(void **state)
{
	struct vg_explain_in in = input(0, 1);

	(void)state;
	assert_string_equal(why(&in, "cp: cannot create regular file "
	    "'/data/out/x': Permission denied"), "");
	assert_string_equal(why(&in, "sh: cannot create /v/runs/r/tasks/0/x:"
	    " Permission denied"), "");
	assert_string_equal(why(&in, "error: file not found\n"), "");
	assert_string_equal(why(&in, "curl: (7) Connection refused"), "");
	assert_string_equal(why(&in, ""), "");
	assert_non_null(strstr(why(&in, "open: /dev/kvm: Permission denied"),
	    "the device '/dev/kvm'"));
}

/* At strict: reads outside what it reads, and the network. */
static void
test_strict(void **state)
{
	struct vg_explain_in in = input(1, 0);
	const char *s;

	(void)state;
	s = why(&in, "cat: /root/.bashrc: Permission denied");
	/* /root/.bashrc exists on most hosts; when it does not, it is
	 * told as a write */
	assert_non_null(strstr(s, "'/root/.bashrc'"));
	assert_non_null(strstr(s, "isolation strict"));
	/* an input in the working directory, which strict reads: not
	 * the sandbox */
	{
		char f[] = "/tmp/vg-explain-XXXXXX", msg[128];
		int fd = mkstemp(f);

		assert_true(fd >= 0);
		close(fd);
		in.workdir = "/tmp";
		snprintf(msg, sizeof(msg), "cat: %s: Permission denied", f);
		assert_string_equal(why(&in, msg), "");
		unlink(f);
		in.workdir = "/w";
	}
	s = why(&in, "curl: (7) Failed to connect: Network is unreachable");
	assert_non_null(strstr(s, "the default at strict"));
	assert_non_null(strstr(s, "isolation.network: host, or an "
	    "allow-list {allow: [HOST, ...]}, at m.yaml:4"));
	in.network = 1;
	assert_string_equal(why(&in, "Network is unreachable"), "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_refused),
		cmocka_unit_test(test_protected),
		cmocka_unit_test(test_not_the_sandbox),
		cmocka_unit_test(test_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
