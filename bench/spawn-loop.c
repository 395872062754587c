/*
 * spawn-loop.c - the floor under any job runner: N runs of one command
 * with posix_spawn, at most J at a time, each reaped with waitpid.  No
 * state, no files, no output handling: what bench/local-overhead.sh
 * compares vigil and xargs against.  Prints the wall time in ms and the
 * peak RSS in kB on one line: "MS KB".
 *
 * usage: spawn-loop N J COMMAND [ARG...]
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Monotonic milliseconds. */
static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	long n, j, started = 0, live = 0;
	double t0;
	pid_t pid;
	int st, err;

	if (argc < 4 || (n = atol(argv[1])) <= 0 || (j = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: spawn-loop N J COMMAND [ARG...]\n");
		return 2;
	}
	t0 = now_ms();
	while (started < n || live > 0) {
		while (started < n && live < j) {
			err = posix_spawnp(&pid, argv[3], NULL, NULL,
			    argv + 3, environ);
			if (err != 0) {
				fprintf(stderr, "spawn-loop: %s: %s\n",
				    argv[3], strerror(err));
				return 1;
			}
			started++;
			live++;
		}
		if (waitpid(-1, &st, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("spawn-loop: waitpid");
			return 1;
		}
		live--;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("%.0f %ld\n", now_ms() - t0, ru.ru_maxrss);
	return 0;
}
