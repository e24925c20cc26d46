/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the fuzz targets: a broken invariant aborts (libFuzzer reports
 * the input), and a reader that turns the input into numbers. */
#ifndef EGW_FUZZ_COMMON_H
#define EGW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond, ...)                                                             \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "invariant broken (%s:%d): ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* Input reader: zeros once the input is used up. */
struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t
in_u8(struct in *in)
{
	uint8_t v = 0;

	if (in->n != 0) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

/* The next 'bytes' bytes (at most 8) as a big-endian number. */
static inline uint64_t
in_uint(struct in *in, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | in_u8(in);
	return v;
}

#endif /* EGW_FUZZ_COMMON_H */
