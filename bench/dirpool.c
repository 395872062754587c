/*
 * dirpool.c - what a task directory costs the driver: ROUNDS (3) rounds
 * of N (20,000) mkdir and rmdir pairs against N pairs through the pool
 * of common/dirpool.h (a pooled directory renamed in, checked empty and
 * renamed out again), in a directory of DIR (default: the current one,
 * since the file system is what is measured).  Prints one line per
 * round: "mkdir+rmdir US us  pool US us  ratio R" (microseconds per
 * pair, pool / mkdir).
 *
 * usage: dirpool [DIR [N [ROUNDS]]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/dirpool.h"
#include "common/path.h"

/* Monotonic seconds. */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	int rounds = argc > 3 ? atoi(argv[3]) : 3, r, i, tfd, pfd;
	struct vg_dirpool p = VG_DIRPOOL_INIT;
	char w[4096], name[32];
	double t0, t1, t2;

	if (n <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: dirpool [DIR [N [ROUNDS]]]\n");
		return 2;
	}
	snprintf(w, sizeof(w), "%s/vigil-dirpool-XXXXXX", dir);
	if (mkdtemp(w) == NULL) {
		perror(w);
		return 1;
	}
	if ((tfd = open(w, O_RDONLY | O_DIRECTORY)) < 0 ||
	    mkdirat(tfd, "tmp", 0700) != 0 ||
	    (pfd = openat(tfd, "tmp", O_RDONLY | O_DIRECTORY)) < 0 ||
	    vg_dirpool_open(&p, pfd, "") != 0) {
		perror(w);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		t0 = now_s();
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%d", i);
			if (mkdirat(tfd, name, 0700) != 0 ||
			    unlinkat(tfd, name, AT_REMOVEDIR) != 0) {
				perror("mkdir");
				return 1;
			}
		}
		t1 = now_s();
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "%d", i);
			if (vg_dirpool_mkdirat(&p, tfd, name) != 0 ||
			    vg_dirpool_rmdirat(&p, tfd, name) != 0) {
				perror("pool");
				return 1;
			}
		}
		t2 = now_s();
		printf("mkdir+rmdir %.2f us  pool %.2f us  ratio %.3f\n",
		    (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6,
		    (t2 - t1) / (t1 - t0));
	}
	vg_dirpool_close(&p);
	close(pfd);
	close(tfd);
	vg_rm_rf(w, NULL);
	return 0;
}
