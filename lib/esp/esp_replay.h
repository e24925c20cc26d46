/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The anti-replay window's per-packet operations (replay.c has the rest and
 * the description), inline: the inbound path calls them for every packet.
 */
#ifndef EGW_ESP_REPLAY_H
#define EGW_ESP_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#define REPLAY_BLOCK_SHIFT 6 /* 64 numbers per bitmap word */
#define REPLAY_BLOCK_BITS (1u << REPLAY_BLOCK_SHIFT)
#define REPLAY_BIT_MASK (REPLAY_BLOCK_BITS - 1)

static inline uint64_t
esp_replay_infer(const struct esp_replay *r, uint32_t seq_lo, bool esn)
{
	/* Release partner: the top store in esp_replay_update(). */
	uint64_t top = __atomic_load_n(&r->top, __ATOMIC_ACQUIRE);
	uint32_t tl = (uint32_t)top;
	uint32_t th = (uint32_t)(top >> 32);
	uint32_t w = r->size;
	/* low word of the window bottom, modulo 2^32 in both cases */
	uint32_t bl = tl - w + 1;

	if (!esn)
		return seq_lo;
	if (tl >= w - 1) {
		/* Case A: the window lies within one 2^32 subspace; a number
		 * below its bottom belongs to the next subspace. */
		if (seq_lo < bl) {
			/* Th + 1 would leave 64 bits: the sender cannot use
			 * numbers there, so it is an old one (outside). */
			if (th != UINT32_MAX)
				th++;
		}
	} else {
		/* Case B: the window straddles two subspaces; a number at or
		 * above its (wrapped) bottom is in the lower one. */
		if (seq_lo >= bl) {
			/* With Th = 0 there is no lower subspace: the top is
			 * below the window size and the number is ahead. */
			if (th != 0)
				th--;
		}
	}
	return ((uint64_t)th << 32) | seq_lo;
}

/*
 * The check of both entry points on a given top. Returns true, or false with
 * *why set.
 */
static inline bool
replay_test(const struct esp_replay *r, uint64_t top, uint64_t seq, enum egw_esp_drop *why)
{
	uint64_t word;

	if (seq == 0) {
		/* never sent (RFC 4303 3.3.3): counts as below every window */
		*why = EGW_ESP_DROP_OUTSIDE_WINDOW;
		return false;
	}
	if (seq > top)
		return true;
	/* outside when seq + size <= top, written without overflow */
	if (top >= r->size && seq <= top - r->size) {
		*why = EGW_ESP_DROP_OUTSIDE_WINDOW;
		return false;
	}
	/* Relaxed: ordered after the caller's acquire load of top. */
	word = __atomic_load_n(&r->bmp[(seq >> REPLAY_BLOCK_SHIFT) & (r->nwords - 1)],
			       __ATOMIC_RELAXED);
	if (word & (UINT64_C(1) << (seq & REPLAY_BIT_MASK))) {
		*why = EGW_ESP_DROP_REPLAY;
		return false;
	}
	return true;
}

static inline bool
esp_replay_check(const struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why)
{
	/* Release partner: the top store in esp_replay_update(), made after
	 * the blocks passed over were cleared, so a new top is never seen with
	 * the old contents of its block. */
	uint64_t top = __atomic_load_n(&r->top, __ATOMIC_ACQUIRE);

	return replay_test(r, top, seq, why);
}

static inline bool
esp_replay_update(struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why)
{
	/* The caller holds the SA lock: this is the only writer, top is read
	 * plainly (atomically only for the checkers' sake). */
	uint64_t top = __atomic_load_n(&r->top, __ATOMIC_RELAXED);
	uint32_t mask = r->nwords - 1;
	uint64_t *w;

	if (!replay_test(r, top, seq, why))
		return false;

	if (seq > top) {
		uint64_t blk = top >> REPLAY_BLOCK_SHIFT;
		uint64_t diff = (seq >> REPLAY_BLOCK_SHIFT) - blk;
		uint64_t i;

		/* Clear the blocks between the old top's block (exclusive) and
		 * the new one (inclusive); past nwords that is all of them. */
		if (diff > r->nwords)
			diff = r->nwords;
		for (i = 1; i <= diff; i++)
			__atomic_store_n(&r->bmp[(blk + i) & mask], 0, __ATOMIC_RELAXED);
		/* Acquire partners: esp_replay_check() and esp_replay_infer(). */
		__atomic_store_n(&r->top, seq, __ATOMIC_RELEASE);
	}
	w = &r->bmp[(seq >> REPLAY_BLOCK_SHIFT) & mask];
	__atomic_store_n(w, *w | (UINT64_C(1) << (seq & REPLAY_BIT_MASK)), __ATOMIC_RELAXED);
	return true;
}

#endif /* EGW_ESP_REPLAY_H */
