/* SPDX-License-Identifier: BSD-3-Clause */
/* A check that counts, reports file:line and the values, and carries on. */
#ifndef EGW_TEST_CHECK_H
#define EGW_TEST_CHECK_H

#include <stdio.h>

static int failures;
static int checks;

#define CHECK(cond, ...)                                            \
	do {                                                        \
		checks++;                                           \
		if (!(cond)) {                                      \
			failures++;                                 \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                        \
			printf("\n");                               \
		}                                                   \
	} while (0)

#endif /* EGW_TEST_CHECK_H */
