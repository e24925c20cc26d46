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
