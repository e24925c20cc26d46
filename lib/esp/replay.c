/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inbound anti-replay window: RFC 4303 section 3.4.3 semantics on the
 * RFC 6479 bitmap, with RFC 4303 Appendix A2.2 inference of the high half of
 * an extended sequence number.
 *
 * The acceptance window is exactly r->size numbers: [top - size + 1, top].
 * The bitmap is a ring of nwords 64-bit blocks, block b of the number space
 * in word b & (nwords - 1). nwords is a power of two with at least one block
 * more than the window can touch, so the block of a new top can be cleared
 * without losing a number still in the window. Advancing the top clears only
 * the blocks passed over, at most nwords of them, whatever the jump.
 *
 * Concurrency: esp_replay_check() runs lock-free on any lcore while one
 * lcore at a time, holding the SA lock, runs esp_replay_update(). The check
 * is only a filter before decryption; the update repeats it on the state it
 * is about to change, so a stale read in the check can only let through a
 * packet the update then refuses, or refuse one the window has since passed.
 * Words and top are read and written with atomic accesses so the race is
 * defined.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "esp_private.h"

#define REPLAY_BLOCK_SHIFT 6 /* 64 numbers per bitmap word */
#define REPLAY_BLOCK_BITS (1u << REPLAY_BLOCK_SHIFT)
#define REPLAY_BIT_MASK (REPLAY_BLOCK_BITS - 1)

static uint32_t
replay_nwords(uint32_t size)
{
	/* A window of size numbers touches at most ceil(size / 64) + 1 blocks
	 * when it does not start on a block boundary; one spare block on top
	 * of ceil(size / 64) covers that. */
	uint32_t blocks = (uint32_t)(((uint64_t)size + REPLAY_BIT_MASK) >> REPLAY_BLOCK_SHIFT) + 1;

	return rte_align32pow2(blocks);
}

size_t
esp_replay_size(uint32_t size)
{
	return sizeof(struct esp_replay) + (size_t)replay_nwords(size) * sizeof(uint64_t);
}

/*
 * size is the caller's validated EGW_ESP_WINDOW_MIN..MAX. Nothing is marked
 * received, so with top > 0 each of top - size + 1 .. top is still accepted
 * once: a window set up at a known top refuses only what is older.
 */
void
esp_replay_init(struct esp_replay *r, uint32_t size, uint64_t top)
{
	r->size = size;
	r->nwords = replay_nwords(size);
	memset(r->bmp, 0, (size_t)r->nwords * sizeof(uint64_t));
	r->top = top;
}

uint64_t
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

bool
esp_replay_check(const struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why)
{
	/* Release partner: the top store in esp_replay_update(), made after
	 * the blocks passed over were cleared, so a new top is never seen with
	 * the old contents of its block. */
	uint64_t top = __atomic_load_n(&r->top, __ATOMIC_ACQUIRE);

	return replay_test(r, top, seq, why);
}

bool
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
