/*
 * sing-driver.c - runs one attempt through the singularity backend, as a
 * scheduler would, from a command line instead of a manifest:
 *
 *   sing-driver [options] TASK_DIR -- COMMAND...
 *   sing-driver [options] TASK_DIR -c 'shell command'
 *
 *   --image SIF         manifest image
 *   --binary PATH       singularity.binary
 *   --bind SPEC         singularity.binds (repeatable)
 *   --allow-bind GLOB   a policy allow rule of category "bind"
 *   --flag FLAG         singularity.flags (repeatable)
 *   --env K=V           task env (repeatable)
 *   --scratch DIR       a->scratch_dir (else the backend makes one)
 *   --scratch-path DIR  scratch.path; --keep always|on-failure|never
 *   --pwd DIR, --scratch-mount DIR, --no-containall, --gpus N
 *   --timeout S, --grace S, --run ID, --index N
 *   --mode run|start    run(): blocking; start: start + waitpid + finish
 *   --repeat N          runs the attempt N times in this process (the
 *                       run id gets a suffix); prints the last result
 *   --validate          only the validate op (prints each problem)
 *   --probe             only the probe op
 *
 * Prints "state=S exit=N signal=N reason=..." and exits 0 when the
 * backend returned a result, 1 with "error: ..." when it failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/core/plugins.h"
#include "backends/backend.h"
#include "backends/singularity.h"

/* Prints the usage error and exits 2. */
static void
usage(const char *msg)
{
	fprintf(stderr, "sing-driver: %s\n", msg);
	exit(2);
}

int
main(int argc, char **argv)
{
	struct vg_manifest m;
	struct vg_task t;
	struct vg_attempt a;
	struct vg_result r;
	struct vg_rule rules[8];
	struct vg_diag d = VG_DIAG_INIT;
	struct vg_buf b = VG_BUF_INIT;
	struct vg_err e;
	static char file[] = "driver.yaml", backend[] = "singularity",
	    bind[] = "bind";
	const char *mode = "run", *run_id;
	char *eq, *v;
	int i, ws, rc, validate = 0, probe = 0, repeat = 1, k;
	char runbuf[128];
	size_t j;

	vg_plugins_init();
	memset(&m, 0, sizeof(m));
	memset(&t, 0, sizeof(t));
	memset(&a, 0, sizeof(a));
	memset(rules, 0, sizeof(rules));
	m.file = file;
	m.backend = backend;
	vg_singularity_of(&m)->containall = 1;
	vg_singularity_of(&m)->no_home = 1;
	vg_singularity_of(&m)->cleanenv = 1;
	m.scratch.keep = VG_KEEP_ON_FAILURE;
	m.kill_grace = 5;
	m.policy.allow = rules;
	a.m = &m;
	a.task = &t;
	a.run_id = "drv1";
	a.attempt = 1;
	a.pidfd = -1;
	for (i = 1; i < argc; i++) {
		v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(argv[i], name) == 0 && \
	(v != NULL || (usage(name " needs a value"), 0)) && ++i)
		if (ARG("--image"))
			m.image = v;
		else if (ARG("--binary"))
			vg_singularity_of(&m)->binary = v;
		else if (ARG("--bind"))
			vg_strv_push(&vg_singularity_of(&m)->binds, v);
		else if (ARG("--flag"))
			vg_strv_push(&vg_singularity_of(&m)->flags, v);
		else if (ARG("--allow-bind")) {
			if (m.policy.nallow == 8)
				usage("too many --allow-bind");
			rules[m.policy.nallow].match = v;
			rules[m.policy.nallow++].category = bind;
		} else if (ARG("--env")) {
			if ((eq = strchr(v, '=')) == NULL)
				usage("--env needs K=V");
			t.env.v = vg_xrealloc(t.env.v, (t.env.n + 1) *
			    sizeof(*t.env.v));
			memset(&t.env.v[t.env.n], 0, sizeof(*t.env.v));
			t.env.v[t.env.n].key = vg_xstrndup(v,
			    (size_t)(eq - v));
			t.env.v[t.env.n++].value = vg_xstrdup(eq + 1);
		} else if (ARG("--scratch"))
			a.scratch_dir = v;
		else if (ARG("--scratch-path"))
			m.scratch.path = v;
		else if (ARG("--keep"))
			m.scratch.keep = strcmp(v, "always") == 0 ?
			    VG_KEEP_ALWAYS : strcmp(v, "never") == 0 ?
			    VG_KEEP_NEVER : VG_KEEP_ON_FAILURE;
		else if (ARG("--pwd"))
			vg_singularity_of(&m)->pwd = v;
		else if (ARG("--scratch-mount"))
			vg_singularity_of(&m)->scratch_mount = v;
		else if (ARG("--gpus"))
			a.res.gpus = atoi(v);
		else if (ARG("--timeout"))
			a.timeout = atof(v);
		else if (ARG("--grace"))
			a.kill_grace = atof(v);
		else if (ARG("--run"))
			a.run_id = v;
		else if (ARG("--index"))
			t.index = atoi(v);
		else if (ARG("--mode"))
			mode = v;
		else if (ARG("--repeat"))
			repeat = atoi(v);
		else if (strcmp(argv[i], "--no-containall") == 0)
			vg_singularity_of(&m)->containall = 0;
		else if (strcmp(argv[i], "--validate") == 0)
			validate = 1;
		else if (strcmp(argv[i], "--probe") == 0)
			probe = 1;
		else if (strcmp(argv[i], "-c") == 0 && v != NULL) {
			t.command.shell = v;
			i++;
		} else if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++)
				vg_strv_push(&t.command.argv, argv[i]);
			t.command.is_argv = 1;
		} else if (argv[i][0] != '-' && a.task_dir == NULL)
			a.task_dir = argv[i];
		else
			usage("unknown argument");
#undef ARG
	}
	if (probe) {
		vg_backend_singularity.probe(&b);
		fputs(vg_buf_str(&b), stdout);
		vg_buf_release(&b);
		return 0;
	}
	if (validate) {
		rc = vg_backend_singularity.p.validate(&m, &d);
		for (j = 0; j < d.lines.n; j++)
			printf("%s\n", d.lines.v[j]);
		printf("validate=%d\n", rc);
		vg_diag_release(&d);
		goto done;
	}
	if (a.task_dir == NULL)
		usage("missing TASK_DIR");
	vg_err_init(&e);
	memset(&r, 0, sizeof(r));
	run_id = a.run_id;
	for (k = 1, rc = 0; k < repeat && rc == 0; k++) {
		snprintf(runbuf, sizeof(runbuf), "%s-%d", run_id, k);
		a.run_id = runbuf;
		rc = vg_backend_singularity.run(&a, &r, &e);
	}
	a.run_id = run_id;
	if (rc != 0) {
		/* reported below */
	} else if (strcmp(mode, "run") == 0) {
		rc = vg_backend_singularity.run(&a, &r, &e);
	} else {
		rc = vg_backend_singularity.start(&a, &e);
		if (rc == 0) {
			printf("pid=%ld\n", (long)a.pid);
			fflush(stdout);
			while (waitpid(a.pid, &ws, 0) < 0 && errno == EINTR)
				;
			rc = vg_backend_singularity.finish(&a, ws, &r, &e);
			vg_backend_singularity.cleanup(&a);
		}
	}
	if (rc != 0)
		printf("error: %s\n", e.msg);
	else
		printf("state=%s exit=%d signal=%d reason=%s\n",
		    vg_state_name(r.state), r.exit_code, r.signal, r.reason);
done:
	for (j = 0; j < t.env.n; j++) {
		free(t.env.v[j].key);
		free(t.env.v[j].value);
	}
	free(t.env.v);
	vg_strv_release(&t.command.argv);
	vg_strv_release(&vg_singularity_of(&m)->binds);
	vg_strv_release(&vg_singularity_of(&m)->flags);
	return rc != 0;
}
