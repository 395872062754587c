/*
 * sif-verify.c - times vg_sif_verify_file on one image, against a
 * baseline of opening the same file and reading its 128-byte header
 * (what `dd bs=128 count=1` does, without a process start).  Built and
 * run by bench/sif-cache.sh.
 *
 *   sif-verify IMAGE ROUNDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sif-cache/sif.h"

/* Monotonic time in microseconds. */
static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	unsigned char hdr[128];
	struct vg_err e;
	double t0, verify, base;
	long i, rounds;
	int fd;

	if (argc != 3)
		return 2;
	rounds = atol(argv[2]);
	vg_err_init(&e);
	if (vg_sif_verify_file(argv[1], &e) != 0) {
		fprintf(stderr, "sif-verify: %s\n", e.msg);
		return 1;
	}
	t0 = now_us();
	for (i = 0; i < rounds; i++)
		if (vg_sif_verify_file(argv[1], &e) != 0)
			return 1;
	verify = (now_us() - t0) / (double)rounds;
	t0 = now_us();
	for (i = 0; i < rounds; i++) {
		fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || pread(fd, hdr, sizeof(hdr), 0) != 128)
			return 1;
		close(fd);
	}
	base = (now_us() - t0) / (double)rounds;
	printf("%.1f %.1f\n", verify, base);
	return 0;
}
