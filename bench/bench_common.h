/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the benchmarks: the median of a set of timings (sorts it). */
#ifndef EGW_BENCH_COMMON_H
#define EGW_BENCH_COMMON_H

#include <stdlib.h>

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* EGW_BENCH_COMMON_H */
