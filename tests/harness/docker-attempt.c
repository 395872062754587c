/*
 * docker-attempt.c - drives vg_backend_docker directly, for the
 * integration tests and bench/backends.sh: builds a struct vg_manifest and
 * a struct vg_attempt from its options, calls one operation and prints
 * the outcome on one line.
 *
 *   docker-attempt [OPTIONS] run -- ARGV...   or   run -c 'SHELL CMD'
 *   docker-attempt [OPTIONS] prepare | probe | validate
 *   docker-attempt reap [RUN_ID]
 *
 * run prints "state=S exit=N signal=N reason=TEXT" and exits 0 when the
 * backend returned 0, else prints "error: MSG" on stderr and exits 1.
 * -n N repeats run N times (tasks 0..N-1) for the benchmark.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/core/plugins.h"
#include "backends/backend.h"
#include "backends/docker.h"

/* Parses a byte count with an optional K/M/G suffix. */
static uint64_t
parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	default: break;
	}
	return v;
}

/* Prints usage and exits 2. */
static void
usage(void)
{
	fprintf(stderr, "usage: docker-attempt [--image I] [--task-dir D] "
	    "[--scratch D] [--run-id R] [--index N] [--attempt N] "
	    "[--timeout S] [--grace S] [--memory B] [--cpus N] [--volume V] "
	    "[--network N] [--policy MODE] [--allow-host-access] "
	    "[--privileged] [--cap-add C] [--device D] [--pid-mode M] "
	    "[--ipc-mode M] [--read-only] [--user U] [--pull P] "
	    "[--workdir W] [--env K=V] [--host EP] [--manifest-file F] "
	    "[--mount M] [--security-opt O] [--sysctl K=V] [--uts-mode M] "
	    "[--userns-mode M] [--volumes-from C] "
	    "[--device-cgroup-rule R] [--site-policy FILE] "
	    "[-n COUNT] run|prepare|probe|validate|reap ...\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "image", required_argument, NULL, 'i' },
		{ "task-dir", required_argument, NULL, 'T' },
		{ "scratch", required_argument, NULL, 'S' },
		{ "run-id", required_argument, NULL, 'R' },
		{ "index", required_argument, NULL, 'I' },
		{ "attempt", required_argument, NULL, 'A' },
		{ "timeout", required_argument, NULL, 't' },
		{ "grace", required_argument, NULL, 'g' },
		{ "memory", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "volume", required_argument, NULL, 'v' },
		{ "network", required_argument, NULL, 'N' },
		{ "policy", required_argument, NULL, 'P' },
		{ "allow-host-access", no_argument, NULL, 'H' },
		{ "privileged", no_argument, NULL, 'p' },
		{ "cap-add", required_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'd' },
		{ "pid-mode", required_argument, NULL, 'X' },
		{ "ipc-mode", required_argument, NULL, 'Y' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "user", required_argument, NULL, 'u' },
		{ "pull", required_argument, NULL, 'L' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "env", required_argument, NULL, 'e' },
		{ "host", required_argument, NULL, 'h' },
		{ "manifest-file", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'n' },
		{ "mount", required_argument, NULL, 'M' },
		{ "security-opt", required_argument, NULL, 'O' },
		{ "sysctl", required_argument, NULL, 'Z' },
		{ "uts-mode", required_argument, NULL, 'U' },
		{ "userns-mode", required_argument, NULL, 'V' },
		{ "volumes-from", required_argument, NULL, 'W' },
		{ "device-cgroup-rule", required_argument, NULL, 'G' },
		{ "site-policy", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static struct vg_manifest m;
	static struct vg_task task;
	static char rule_id[] = "host", rule_cat[] = "host-access";
	static char def_image[] = "localhost/vigil-test:latest";
	static struct vg_rule allow = { .id = rule_id, .category = rule_cat };
	struct vg_attempt a;
	struct vg_result r;
	struct vg_err e;
	struct vg_buf out = VG_BUF_INIT;
	struct vg_diag diag = VG_DIAG_INIT;
	const struct vg_backend_ops *ops = &vg_backend_docker;
	struct vg_docker_conf *d;
	const char *op, *tdir_base = NULL;
	char *shell = NULL;
	struct vg_kv kv[32];
	int c, count = 1, i, rc = 0;
	size_t j;
	char *eq;

	vg_plugins_init();
	memset(&a, 0, sizeof(a));
	a.m = &m;
	a.task = &task;
	a.run_id = "r1";
	a.attempt = 1;
	a.kill_grace = VG_KILL_GRACE_DEFAULT;
	a.pidfd = -1;
	m.image = def_image;
	task.env.v = kv;
	d = vg_docker_of(&m);
	while ((c = getopt_long(argc, argv, "+c:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'i': m.image = optarg; break;
		case 'T': tdir_base = optarg; break;
		case 'S': a.scratch_dir = optarg; break;
		case 'R': a.run_id = optarg; break;
		case 'I': task.index = atoi(optarg); break;
		case 'A': a.attempt = atoi(optarg); break;
		case 't': a.timeout = atof(optarg); break;
		case 'g': a.kill_grace = atof(optarg); break;
		case 'm': a.res.memory = parse_size(optarg); break;
		case 'C': a.res.cpus = atoi(optarg); break;
		case 'v': vg_strv_push(&vg_docker_of(&m)->volumes, optarg); break;
		case 'N': vg_docker_of(&m)->network = optarg; break;
		case 'P': m.policy.mode = optarg; break;
		case 'H': m.policy.allow = &allow; m.policy.nallow = 1; break;
		case 'p': vg_docker_of(&m)->privileged = 1; break;
		case 'a': vg_strv_push(&vg_docker_of(&m)->cap_add, optarg); break;
		case 'd': vg_strv_push(&vg_docker_of(&m)->devices, optarg); break;
		case 'X': vg_docker_of(&m)->pid_mode = optarg; break;
		case 'Y': vg_docker_of(&m)->ipc_mode = optarg; break;
		case 'r': vg_docker_of(&m)->read_only = 1; break;
		case 'u': vg_docker_of(&m)->user = optarg; break;
		case 'L': vg_docker_of(&m)->pull = optarg; break;
		case 'w': m.workdir = optarg; break;
		case 'h': vg_docker_of(&m)->host = optarg; break;
		case 'F': m.file = optarg; break;
		case 'n': count = atoi(optarg); break;
		case 'c': shell = optarg; break;
		case 'M': vg_strv_push(&d->mounts, optarg); break;
		case 'O': vg_strv_push(&d->security_opt, optarg); break;
		case 'Z':
			if ((eq = strchr(optarg, '=')) == NULL)
				usage();
			*eq = '\0';
			vg_kvs_set(&d->sysctls, optarg, eq + 1);
			break;
		case 'U': d->uts_mode = optarg; break;
		case 'V': d->userns_mode = optarg; break;
		case 'W': vg_strv_push(&d->volumes_from, optarg); break;
		case 'G': vg_strv_push(&d->device_cgroup_rules, optarg); break;
		case 's': m.policy.site_file = optarg; break;
		case 'e':
			if (task.env.n == 32 ||
			    (eq = strchr(optarg, '=')) == NULL)
				usage();
			*eq = '\0';
			kv[task.env.n].key = optarg;
			kv[task.env.n].value = eq + 1;
			task.env.n++;
			break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	op = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "-c") == 0 &&
	    optind + 1 < argc)
		shell = argv[optind + 1];
	else if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (shell != NULL) {
		task.command.shell = shell;
	} else {
		task.command.is_argv = 1;
		for (; optind < argc; optind++)
			vg_strv_push(&task.command.argv, argv[optind]);
	}
	vg_err_init(&e);

	if (strcmp(op, "probe") == 0) {
		ops->probe(&out);
		fputs(vg_buf_str(&out), stdout);
	} else if (strcmp(op, "validate") == 0) {
		rc = ops->p.validate(&m, &diag);
		for (j = 0; j < diag.lines.n; j++)
			printf("%s\n", diag.lines.v[j]);
		vg_diag_release(&diag);
	} else if (strcmp(op, "prepare") == 0) {
		struct vg_backend_drive *drive = NULL;

		if ((rc = vg_backend_prepare(ops, &m, "/nonexistent", &drive,
		    &e)) != 0)
			fprintf(stderr, "error: %s\n", e.msg);
		else
			printf("prepared\n");
		vg_backend_unprepare(drive);
	} else if (strcmp(op, "reap") == 0) {
		rc = vg_backend_reap(ops, &m, optind - 1 < argc &&
		    task.command.argv.n > 0 ? task.command.argv.v[0] : NULL,
		    -1, &out, &e);
		if (rc != 0)
			fprintf(stderr, "error: %s\n", e.msg);
		fputs(vg_buf_str(&out), stdout);
	} else if (strcmp(op, "run") == 0) {
		for (i = 0; i < count; i++) {
			char tdir[4096];

			task.index = count > 1 ? i : task.index;
			snprintf(tdir, sizeof(tdir), "%s",
			    tdir_base ? tdir_base : ".");
			a.task_dir = tdir;
			rc = ops->run(&a, &r, &e);
			if (rc != 0) {
				fprintf(stderr, "error: %s\n", e.msg);
				break;
			}
			if (count == 1)
				printf("state=%s exit=%d signal=%d reason=%s\n",
				    vg_state_name(r.state), r.exit_code,
				    r.signal, r.reason);
			else if (r.state != VG_ST_SUCCEEDED) {
				fprintf(stderr, "task %d: %s %s\n", i,
				    vg_state_name(r.state), r.reason);
				rc = 1;
				break;
			}
		}
	} else
		usage();
	vg_buf_release(&out);
	vg_strv_release(&task.command.argv);
	vg_strv_release(&vg_docker_of(&m)->volumes);
	vg_strv_release(&vg_docker_of(&m)->cap_add);
	vg_strv_release(&vg_docker_of(&m)->devices);
	vg_strv_release(&d->mounts);
	vg_strv_release(&d->security_opt);
	vg_kvs_release(&d->sysctls);
	vg_strv_release(&d->volumes_from);
	vg_strv_release(&d->device_cgroup_rules);
	return rc == 0 ? 0 : 1;
}
