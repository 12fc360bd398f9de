/*
 * runimage: runs a ptlab workload image natively (ring 3, not traced) and
 * reports how long it took, for `npm run bench` (the model's speed is shown
 * next to the real CPU's on the same code).
 *
 * usage: runimage IMAGE BASE ENTRY RUNS
 * Prints {"runs":N,"best_seconds":S}. Each run forks; the child maps the image
 * at BASE (read+execute) and jumps to ENTRY; the workload ends with the exit
 * system call, whose status must be 0. Timing covers fork to wait, so it
 * includes a fork and an mmap (about 0.1 ms) besides the workload itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static void die(const char *msg)
{
	fprintf(stderr, "runimage: %s: %s\n", msg, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: runimage IMAGE BASE ENTRY RUNS\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		die(argv[1]);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *img = malloc((size_t)len);
	if (!img || fread(img, 1, (size_t)len, f) != (size_t)len)
		die("read");
	fclose(f);
	uint64_t base = strtoull(argv[2], NULL, 16), entry = strtoull(argv[3], NULL, 16);
	int runs = atoi(argv[4]);
	double best = 1e30;

	for (int r = 0; r < runs; r++) {
		double t0 = now();
		pid_t pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			size_t maplen = ((size_t)len + 4095) & ~(size_t)4095;
			void *at = mmap((void *)base, maplen, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (at != (void *)base)
				_exit(90);
			memcpy(at, img, (size_t)len);
			if (mprotect(at, maplen, PROT_READ | PROT_EXEC))
				_exit(91);
			((void (*)(void))(uintptr_t)entry)();
			_exit(92); /* the workload exits by itself */
		}
		int st;
		if (waitpid(pid, &st, 0) < 0)
			die("waitpid");
		double t = now() - t0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "runimage: workload ended with status 0x%x\n", st);
			return 3;
		}
		if (t < best)
			best = t;
	}
	printf("{\"runs\":%d,\"best_seconds\":%.9f}\n", runs, best);
	return 0;
}
