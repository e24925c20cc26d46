/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Single-producer/single-consumer ring of 16-byte entries in memory shared
 * by two processes that do not trust each other (edgegw and an external
 * rxtokens consumer). Plain C11, no DPDK.
 *
 * As io_uring: only the two indices and the entries are in shared memory.
 * The geometry (size, mask) and this side's own index live in a private
 * view, set once at creation or attach and never read back from shared
 * memory. The other side's index is only trusted as far as
 * (prod - cons) <= size; every slot is addressed as (idx & mask) with the
 * private mask, so a hostile peer can make the ring look full, empty or
 * corrupt, but never make this side read or write outside it, nor spin.
 */
#ifndef EGW_RXTOK_SHRING_H
#define EGW_RXTOK_SHRING_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of one entry. */
#define EGW_RXTOK_SHRING_ESIZE 16u
/** Largest ring: (prod - cons) must stay meaningful in 32 bits. */
#define EGW_RXTOK_SHRING_MAX_SIZE (UINT32_C(1) << 30)

/** The ring as placed in shared memory (64-byte aligned). */
struct egw_rxtok_shring {
	uint32_t prod_tail; /**< entries published; written by the producer only */
	uint8_t pad0[60];
	uint32_t cons_head; /**< entries consumed; written by the consumer only */
	uint8_t pad1[60];
	uint8_t entries[]; /**< size * EGW_RXTOK_SHRING_ESIZE bytes */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct egw_rxtok_shring) == 128, "two cache lines of indices");
#endif

/** One side's private handle on a shared ring. */
struct egw_rxtok_shring_view {
	struct egw_rxtok_shring *s;
	uint32_t size; /**< entries, a power of two */
	uint32_t mask; /**< size - 1 */
	uint32_t own;  /**< this side's index: producer's tail or consumer's head */
};

/** True if @p size is a ring size this header accepts. */
static inline bool
egw_rxtok_shring_size_ok(uint64_t size)
{
	return size != 0 && (size & (size - 1)) == 0 && size <= EGW_RXTOK_SHRING_MAX_SIZE;
}

/** Bytes a ring of @p size entries takes (indices and entries). */
static inline uint64_t
egw_rxtok_shring_memsize(uint32_t size)
{
	return sizeof(struct egw_rxtok_shring) + (uint64_t)size * EGW_RXTOK_SHRING_ESIZE;
}

/**
 * Creator's side: zero both indices of the ring at @p mem and set up @p v.
 * Done before the memory is shared.
 * @return 0, or -EINVAL if @p size is not a power of two up to the maximum.
 */
static inline int
egw_rxtok_shring_init(struct egw_rxtok_shring_view *v, void *mem, uint32_t size)
{
	if (v == NULL || mem == NULL || !egw_rxtok_shring_size_ok(size))
		return -EINVAL;
	v->s = (struct egw_rxtok_shring *)mem;
	v->size = size;
	v->mask = size - 1;
	v->own = 0;
	memset(v->s, 0, sizeof(*v->s));
	return 0;
}

/**
 * Attaching side: set up @p v on a ring someone else created, with a size
 * that was validated by the caller. This side's index is read once here.
 * @return 0, or -EINVAL if @p size is not a power of two up to the maximum.
 */
static inline int
egw_rxtok_shring_attach(struct egw_rxtok_shring_view *v, void *mem, uint32_t size, bool producer)
{
	if (v == NULL || mem == NULL || !egw_rxtok_shring_size_ok(size))
		return -EINVAL;
	v->s = (struct egw_rxtok_shring *)mem;
	v->size = size;
	v->mask = size - 1;
	/* Relaxed: nothing was published yet that this side must see; the
	 * peer's index is read with acquire on every burst. */
	v->own = __atomic_load_n(producer ? &v->s->prod_tail : &v->s->cons_head, __ATOMIC_RELAXED);
	return 0;
}

/**
 * Producer: free slots, or -EPROTO if the consumer's index is insane
 * ((prod - cons) > size).
 */
static inline int
egw_rxtok_shring_free_count(const struct egw_rxtok_shring_view *v)
{
	/* Acquire pairs with the consumer's release store of cons_head in
	 * egw_rxtok_shring_dequeue_burst(): it read the slots before it freed
	 * them, so they may be overwritten. */
	uint32_t cons = __atomic_load_n(&v->s->cons_head, __ATOMIC_ACQUIRE);
	uint32_t used = v->own - cons;

	if (used > v->size)
		return -EPROTO;
	return (int)(v->size - used);
}

/**
 * Producer: copy up to @p n entries of 16 bytes from @p objs to the ring.
 * @return entries enqueued (0..n), or -EPROTO if the consumer's index is
 *   insane (nothing is written then).
 */
static inline int
egw_rxtok_shring_enqueue_burst(struct egw_rxtok_shring_view *v, const void *objs, unsigned int n)
{
	const uint8_t *src = (const uint8_t *)objs;
	int free_slots = egw_rxtok_shring_free_count(v);
	unsigned int i;

	if (free_slots < 0)
		return free_slots;
	if (n > (unsigned int)free_slots)
		n = (unsigned int)free_slots;
	for (i = 0; i < n; i++)
		memcpy(&v->s->entries[(size_t)((v->own + i) & v->mask) * EGW_RXTOK_SHRING_ESIZE],
		       src + (size_t)i * EGW_RXTOK_SHRING_ESIZE, EGW_RXTOK_SHRING_ESIZE);
	v->own += n;
	/* Release pairs with the consumer's acquire load of prod_tail in
	 * egw_rxtok_shring_dequeue_burst(): the entries are written first. */
	__atomic_store_n(&v->s->prod_tail, v->own, __ATOMIC_RELEASE);
	return (int)n;
}

/**
 * Consumer: copy up to @p n entries of 16 bytes from the ring to @p objs.
 * @return entries dequeued (0..n), or -EPROTO if the producer's index is
 *   insane ((prod - cons) > size; nothing is read then).
 */
static inline int
egw_rxtok_shring_dequeue_burst(struct egw_rxtok_shring_view *v, void *objs, unsigned int n)
{
	uint8_t *dst = (uint8_t *)objs;
	/* Acquire pairs with the producer's release store of prod_tail in
	 * egw_rxtok_shring_enqueue_burst(): entries before it are written. */
	uint32_t prod = __atomic_load_n(&v->s->prod_tail, __ATOMIC_ACQUIRE);
	uint32_t avail = prod - v->own;
	unsigned int i;

	if (avail > v->size)
		return -EPROTO;
	if (n > avail)
		n = avail;
	for (i = 0; i < n; i++)
		memcpy(dst + (size_t)i * EGW_RXTOK_SHRING_ESIZE,
		       &v->s->entries[(size_t)((v->own + i) & v->mask) * EGW_RXTOK_SHRING_ESIZE],
		       EGW_RXTOK_SHRING_ESIZE);
	v->own += n;
	/* Release pairs with the producer's acquire load of cons_head in
	 * egw_rxtok_shring_free_count(): the entries are read first. */
	__atomic_store_n(&v->s->cons_head, v->own, __ATOMIC_RELEASE);
	return (int)n;
}

#ifdef __cplusplus
}
#endif

#endif /* EGW_RXTOK_SHRING_H */
