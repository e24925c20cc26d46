/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core-to-core latency: two threads, pinned to CPUs A and B, bounce one
 * cache line back and forth; prints the mean round trip in nanoseconds.
 * bench/memif_throughput.sh runs it before and after each measurement: on a
 * VM the host may place the two vCPUs on cores that share a cache (a round
 * trip of about 100 ns on the development machine) or not (about 350 ns),
 * and every memif figure depends on it, since each frame crosses between the
 * two CPUs.
 *
 *   c2c_latency <cpu-a> <cpu-b> [<round-trips>]
 *
 * Built by bench/memif_throughput.sh (cc -O2 -pthread), not by meson.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t line[8] __attribute__((aligned(64)));
static uint64_t rounds = 100000;

static int
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *
pong(void *arg)
{
	uint64_t i;

	if (pin(*(int *)arg) != 0)
		exit(1);
	for (i = 1; i <= rounds; i++) {
		while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) != 2 * i - 1)
			;
		__atomic_store_n(&line[0], 2 * i, __ATOMIC_RELEASE);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t t;
	uint64_t i;
	int a, b;

	if (argc < 3) {
		fprintf(stderr, "usage: c2c_latency <cpu-a> <cpu-b> [<round-trips>]\n");
		return 2;
	}
	a = atoi(argv[1]);
	b = atoi(argv[2]);
	if (argc > 3)
		rounds = strtoull(argv[3], NULL, 10);
	if (rounds == 0 || pin(a) != 0 || pthread_create(&t, NULL, pong, &b) != 0) {
		fprintf(stderr, "c2c_latency: cannot run on CPUs %d and %d\n", a, b);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= rounds; i++) {
		__atomic_store_n(&line[0], 2 * i - 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&line[0], __ATOMIC_ACQUIRE) != 2 * i)
			;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	printf("%.1f\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
		       (double)rounds);
	return 0;
}
