/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the inbound anti-replay window (lib/esp/replay.c):
 *
 *  - bitmap sizing: nwords a power of two with a spare block;
 *  - windows of 64, 128, 1000 (not a power of two) and 4096 packets:
 *    in-order, duplicates, reordering inside the window, the exact edge
 *    (top - size + 1 accepted, top - size outside), sequence number 0,
 *    jumps of every size up to far beyond the bitmap (everything cleared),
 *    64-bit numbers near 2^32 and 2^64;
 *  - check and update agree, and update re-checks a state that moved on
 *    since the check;
 *  - ESN inference, RFC 4303 Appendix A2.2 cases A (Tl >= W - 1) and B
 *    (Tl < W - 1) around the 2^32 wrap in both directions, a window
 *    straddling the wrap end to end, and the ends of the 64-bit space;
 *  - 1,000,000 random operations per window size (64, 4096) against a
 *    trivially correct model: a direct-mapped table of accepted numbers
 *    with full 64-bit tags (any two numbers in a window differ by less
 *    than the table size, so they never share a slot), no bitmap, no
 *    clearing.
 *
 * Needs no NIC and no hugepages; EAL is initialised as for the other unit
 * tests.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>

#include "esp_private.h"
#include "../app/check.h"

#define MODEL_SLOTS 8192u /* > EGW_ESP_WINDOW_MAX */
#define RANDOM_OPS 1000000u
#define MAX_FAIL 20 /* stop a loop that fails this often: one bug, not a flood */

static const uint32_t sizes[] = {64, 128, 1000, 4096};

/* ---- the model ---------------------------------------------------------- */

struct model {
	uint64_t top;
	uint32_t size;
	uint64_t tag[MODEL_SLOTS]; /* tag[s % MODEL_SLOTS] == s: s accepted */
};

static void
model_init(struct model *m, uint32_t size, uint64_t top)
{
	memset(m, 0, sizeof(*m));
	m->size = size;
	m->top = top;
}

/* RFC 4303 3.4.3 read directly: true, or false with the reason. */
static bool
model_check(const struct model *m, uint64_t seq, enum egw_esp_drop *why)
{
	if (seq == 0) {
		*why = EGW_ESP_DROP_OUTSIDE_WINDOW;
		return false;
	}
	if (seq > m->top)
		return true;
	if (m->top - seq >= m->size) { /* seq + size <= top */
		*why = EGW_ESP_DROP_OUTSIDE_WINDOW;
		return false;
	}
	if (m->tag[seq % MODEL_SLOTS] == seq) {
		*why = EGW_ESP_DROP_REPLAY;
		return false;
	}
	return true;
}

static bool
model_update(struct model *m, uint64_t seq, enum egw_esp_drop *why)
{
	if (!model_check(m, seq, why))
		return false;
	m->tag[seq % MODEL_SLOTS] = seq;
	if (seq > m->top)
		m->top = seq;
	return true;
}

/* ---- helpers -------------------------------------------------------------- */

static struct esp_replay *
replay_new(uint32_t size, uint64_t top)
{
	struct esp_replay *r = malloc(esp_replay_size(size));

	if (r == NULL) {
		printf("out of memory\n");
		exit(1);
	}
	/* garbage in the bitmap: init must clear it */
	memset(r, 0xa5, esp_replay_size(size));
	esp_replay_init(r, size, top);
	return r;
}

/* names from the .def directly: the test needs nothing of the rest of the library */
static const char *const drop_names[] = {
#define EGW_ESP_DROP(e, name, desc) [EGW_ESP_DROP_##e] = name,
#include "egw_esp_drop.def"
#undef EGW_ESP_DROP
};

static const char *
why_name(bool ok, enum egw_esp_drop why)
{
	if (ok)
		return "accept";
	return (unsigned int)why < RTE_DIM(drop_names) ? drop_names[why] : "(unset)";
}

/* xorshift64*: reproducible, no libc state */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint64_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

/* uniform enough in [0, n) for n far below 2^64 */
static uint64_t
rnd_below(uint64_t n)
{
	return rnd() % n;
}

/*
 * Compare every number from below the bitmap's reach to above top: check on
 * r against the model. Returns the number of disagreements (each a CHECK).
 */
static unsigned int
compare_all(const struct esp_replay *r, const struct model *m, const char *what)
{
	uint64_t span = (uint64_t)r->nwords * 64 + 130, lo, s;
	unsigned int bad = 0;

	CHECK(r->top == m->top, "%s: top %" PRIu64 " model %" PRIu64, what, r->top, m->top);
	lo = m->top > span ? m->top - span : 0;
	for (s = lo; s <= m->top + 130 && bad < MAX_FAIL; s++) {
		enum egw_esp_drop w1 = EGW_ESP_DROP_MAX, w2 = EGW_ESP_DROP_MAX;
		bool a = esp_replay_check(r, s, &w1);
		bool b = model_check(m, s, &w2);

		if (a != b || (!a && w1 != w2)) {
			bad++;
			CHECK(false, "%s: size %u top %" PRIu64 " seq %" PRIu64 ": %s, model %s",
			      what, m->size, m->top, s, why_name(a, w1), why_name(b, w2));
		}
	}
	return bad;
}

/* update on both, compare the results */
static bool
upd_both(struct esp_replay *r, struct model *m, uint64_t seq, const char *what)
{
	enum egw_esp_drop w1 = EGW_ESP_DROP_MAX, w2 = EGW_ESP_DROP_MAX;
	bool a = esp_replay_update(r, seq, &w1);
	bool b = model_update(m, seq, &w2);

	CHECK(a == b && (a || w1 == w2), "%s: size %u update %" PRIu64 ": %s, model %s", what,
	      m->size, seq, why_name(a, w1), why_name(b, w2));
	return a;
}

static bool
chk(const struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why)
{
	*why = EGW_ESP_DROP_MAX;
	return esp_replay_check(r, seq, why);
}

static bool
upd(struct esp_replay *r, uint64_t seq, enum egw_esp_drop *why)
{
	*why = EGW_ESP_DROP_MAX;
	return esp_replay_update(r, seq, why);
}

/* ---- sizing --------------------------------------------------------------- */

static void
test_sizes(void)
{
	static const struct {
		uint32_t size;
		uint32_t nwords;
	} want[] = {
		{64, 2}, {65, 4}, {128, 4}, {192, 4}, {193, 8}, {1000, 32}, {2048, 64}, {4096, 128},
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(want); i++) {
		struct esp_replay *r = replay_new(want[i].size, 77);
		uint32_t n = r->nwords;

		CHECK(n == want[i].nwords, "size %u: nwords %u, want %u", want[i].size, n,
		      want[i].nwords);
		CHECK(rte_is_power_of_2(n), "size %u: nwords %u not a power of two", want[i].size,
		      n);
		/* a spare block above the ceil(size / 64) the window needs */
		CHECK((uint64_t)n * 64 >= want[i].size + 64u, "size %u: no spare block",
		      want[i].size);
		CHECK(esp_replay_size(want[i].size) == sizeof(*r) + n * sizeof(uint64_t),
		      "size %u: esp_replay_size %zu", want[i].size, esp_replay_size(want[i].size));
		CHECK(r->size == want[i].size && r->top == 77, "size %u: init fields",
		      want[i].size);
		free(r);
	}
}

/* ---- in order, duplicates, sequence number 0 ----------------------------- */

static void
test_in_order(uint32_t size)
{
	struct esp_replay *r = replay_new(size, 0);
	static struct model m;
	enum egw_esp_drop why;
	uint64_t s, n = 3 * (uint64_t)size + 5;
	unsigned int bad = 0;

	model_init(&m, size, 0);
	CHECK(!chk(r, 0, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW, "size %u: seq 0 checked",
	      size);
	CHECK(!upd(r, 0, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW, "size %u: seq 0 recorded",
	      size);
	for (s = 1; s <= n && bad < MAX_FAIL; s++) {
		bool ok = chk(r, s, &why) && upd(r, s, &why);

		ok = ok && !chk(r, s, &why) && why == EGW_ESP_DROP_REPLAY;
		ok = ok && !upd(r, s, &why) && why == EGW_ESP_DROP_REPLAY;
		ok = ok && r->top == s;
		if (!ok)
			bad++;
		CHECK(ok, "size %u: in order %" PRIu64 " (why %s)", size, s, why_name(false, why));
		model_update(&m, s, &why);
	}
	/* every number still in the window is a duplicate, the next one is older */
	for (s = n - size + 1; s <= n; s++)
		if (chk(r, s, &why) || why != EGW_ESP_DROP_REPLAY)
			break;
	CHECK(s == n + 1, "size %u: duplicate %" PRIu64 " of the window accepted", size, s);
	CHECK(!chk(r, n - size, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
	      "size %u: top - size not outside", size);
	CHECK(!chk(r, 0, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW, "size %u: seq 0 late", size);
	compare_all(r, &m, "in order");
	free(r);
}

/* ---- reordering inside the window ------------------------------------------ */

struct arrival {
	uint64_t key;
	uint64_t seq;
};

static int
arrival_cmp(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Packet s arrives in the order of s + jitter, jitter < size / 2: whatever
 * arrived before it has a number below s + size / 2, so s is always inside
 * the window and every packet is accepted exactly once.
 */
static void
test_reorder(uint32_t size)
{
	const unsigned int n = 20 * size;
	struct arrival *a = calloc(n, sizeof(*a));
	struct esp_replay *r = replay_new(size, 0);
	static struct model m;
	enum egw_esp_drop why;
	unsigned int i, accepted = 0, again = 0, outside = 0;
	uint64_t base = (UINT64_C(1) << 32) - 3 * size; /* crosses 2^32 on the way */

	if (a == NULL)
		exit(1);
	esp_replay_init(r, size, base);
	model_init(&m, size, base);
	for (i = 0; i < n; i++) {
		a[i].seq = base + 1 + i;
		a[i].key = a[i].seq + rnd_below(size / 2);
	}
	qsort(a, n, sizeof(*a), arrival_cmp);
	for (i = 0; i < n; i++) {
		bool c = chk(r, a[i].seq, &why);
		bool u = upd_both(r, &m, a[i].seq, "reorder");

		accepted += c && u;
	}
	CHECK(accepted == n, "size %u: reordered stream: %u of %u accepted", size, accepted, n);
	/* the same stream again: duplicates inside the window, the rest too old */
	for (i = 0; i < n; i++) {
		if (upd_both(r, &m, a[i].seq, "reorder replay"))
			continue;
		if (!chk(r, a[i].seq, &why) && why == EGW_ESP_DROP_REPLAY)
			again++;
		else
			outside++;
	}
	CHECK(again == size && outside == n - size, "size %u: replayed stream: %u replays %u old",
	      size, again, outside);
	compare_all(r, &m, "reorder");
	free(a);
	free(r);
}

/* ---- the edge of the window --------------------------------------------- */

static void
test_edge(uint32_t size)
{
	const uint64_t tops[] = {
		size - 1,
		size,
		size + 1,
		5 * (uint64_t)size + 17,
		(UINT64_C(1) << 32) + 3,
		(UINT64_C(1) << 32) + size - 2, /* Tl < W - 1 */
		UINT64_C(0x123456789abcdef0),
		UINT64_MAX - 5,
		UINT64_MAX,
	};
	enum egw_esp_drop why;
	unsigned int i;

	for (i = 0; i < RTE_DIM(tops); i++) {
		uint64_t t = tops[i];
		uint64_t lo = t >= size ? t - size + 1 : 1; /* lowest acceptable */
		struct esp_replay *r;
		static struct model m;
		int round;

		/* round 0: window set up with that top (empty); round 1: top
		 * reached by receiving it */
		for (round = 0; round < 2; round++) {
			if (round == 0) {
				r = replay_new(size, t);
				model_init(&m, size, t);
			} else {
				r = replay_new(size, 0);
				model_init(&m, size, 0);
				upd_both(r, &m, t, "edge top");
			}
			CHECK(r->top == t, "size %u top %" PRIu64 ": top %" PRIu64, size, t,
			      r->top);
			CHECK(chk(r, t, &why) == (round == 0),
			      "size %u top %" PRIu64 " round %d: top", size, t, round);
			CHECK(chk(r, lo, &why),
			      "size %u top %" PRIu64 ": top - size + 1 refused (%s)", size, t,
			      why_name(false, why));
			if (t >= size) {
				CHECK(!chk(r, t - size, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
				      "size %u top %" PRIu64 ": top - size not outside", size, t);
				CHECK(!upd(r, t - size, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
				      "size %u top %" PRIu64 ": top - size recorded", size, t);
			}
			/* inside the bitmap's reach but outside the window */
			if (t >= (uint64_t)r->nwords * 64)
				CHECK(!chk(r, t - (uint64_t)r->nwords * 64 + 1, &why) &&
					      why == EGW_ESP_DROP_OUTSIDE_WINDOW,
				      "size %u top %" PRIu64 ": bitmap reach", size, t);
			CHECK(upd_both(r, &m, lo, "edge"), "size %u top %" PRIu64 ": edge", size,
			      t);
			CHECK(!chk(r, lo, &why) && why == EGW_ESP_DROP_REPLAY,
			      "size %u top %" PRIu64 ": edge duplicate", size, t);
			CHECK(r->top == t, "size %u top %" PRIu64 ": edge moved top", size, t);
			if (t < UINT64_MAX) {
				/* one step: the edge number leaves the window */
				CHECK(upd_both(r, &m, t + 1, "edge step"),
				      "size %u top %" PRIu64 ": top + 1", size, t);
				if (t >= size)
					CHECK(!chk(r, lo, &why) &&
						      why == EGW_ESP_DROP_OUTSIDE_WINDOW,
					      "size %u top %" PRIu64 ": old edge not outside", size,
					      t);
			}
			CHECK(!chk(r, 0, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
			      "size %u top %" PRIu64 ": seq 0", size, t);
			compare_all(r, &m, "edge");
			free(r);
		}
	}
}

/* ---- jumps ---------------------------------------------------------------- */

static void
test_jumps(uint32_t size)
{
	struct esp_replay *probe = replay_new(size, 0);
	const uint64_t bits = (uint64_t)probe->nwords * 64;
	const uint64_t dist[] = {1,
				 2,
				 63,
				 64,
				 65,
				 size / 2,
				 size - 1,
				 size,
				 size + 1,
				 bits - 64,
				 bits - 1,
				 bits,
				 bits + 1,
				 bits + 64,
				 3 * bits + 5,
				 UINT64_C(1) << 33,
				 (UINT64_C(1) << 40) + 3};
	const uint64_t starts[] = {7 * bits, 7 * bits + 11, 7 * bits + 63, (UINT64_C(1) << 32) - 1};
	enum egw_esp_drop why;
	unsigned int i, j;

	free(probe);
	for (j = 0; j < RTE_DIM(starts); j++) {
		for (i = 0; i < RTE_DIM(dist); i++) {
			uint64_t t0 = starts[j], t1 = t0 + dist[i], s;
			struct esp_replay *r = replay_new(size, 0);
			static struct model m;
			uint64_t fresh = 0, want;

			model_init(&m, size, 0);
			/* a full window at t0 */
			for (s = t0 - size + 1; s <= t0; s++)
				upd_both(r, &m, s, "fill");
			upd_both(r, &m, t1, "jump");
			CHECK(r->top == t1, "size %u: jump to %" PRIu64, size, t1);
			/* numbers of the new window not received: exactly those
			 * above t0 */
			for (s = t1 - size + 1; s < t1; s++)
				fresh += chk(r, s, &why);
			want = RTE_MIN(dist[i] - 1, (uint64_t)size - 1);
			CHECK(fresh == want,
			      "size %u: jump %" PRIu64 " from %" PRIu64 ": %" PRIu64
			      " acceptable, want %" PRIu64,
			      size, dist[i], t0, fresh, want);
			if (dist[i] >= size)
				CHECK(fresh == size - 1,
				      "size %u: far jump %" PRIu64 " left old bits", size, dist[i]);
			compare_all(r, &m, "jump");
			/* and the window keeps working after it */
			for (s = t1 + 1; s <= t1 + 2 * bits; s += 3)
				upd_both(r, &m, s, "after jump");
			compare_all(r, &m, "after jump");
			free(r);
		}
	}
}

/* ---- check, then update on a state that moved ----------------------------- */

static void
test_check_update(uint32_t size)
{
	struct esp_replay *r = replay_new(size, 0);
	enum egw_esp_drop why;
	uint64_t t = 10 * (uint64_t)size, s;

	CHECK(upd(r, t, &why), "size %u: top", size);
	/* two copies of a packet pass the lock-free check on two lcores; the
	 * second to take the lock must lose */
	s = t - 3;
	CHECK(chk(r, s, &why) && chk(r, s, &why), "size %u: copies checked", size);
	CHECK(upd(r, s, &why), "size %u: first copy", size);
	CHECK(!upd(r, s, &why) && why == EGW_ESP_DROP_REPLAY, "size %u: second copy", size);
	/* same for a new top */
	CHECK(chk(r, t + 1, &why) && chk(r, t + 1, &why), "size %u: new top checked", size);
	CHECK(upd(r, t + 1, &why), "size %u: new top first", size);
	CHECK(!upd(r, t + 1, &why) && why == EGW_ESP_DROP_REPLAY, "size %u: new top second", size);
	/* checked inside the window; the window moves past it before update */
	s = t - size + 5;
	CHECK(chk(r, s, &why), "size %u: near edge checked", size);
	CHECK(upd(r, t + 10, &why), "size %u: window moves", size);
	CHECK(!upd(r, s, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW, "size %u: moved past", size);
	/* a check never changes anything */
	for (s = t + 11; s < t + 11 + 3 * (uint64_t)size; s++)
		chk(r, s, &why);
	CHECK(r->top == t + 10, "size %u: check moved top", size);
	for (s = t + 11; s < t + 11 + 3 * (uint64_t)size; s++)
		if (!chk(r, s, &why))
			break;
	CHECK(s == t + 11 + 3 * (uint64_t)size, "size %u: check recorded %" PRIu64, size, s);
	free(r);
}

/* ---- ESN inference (RFC 4303 Appendix A2.2) ------------------------------ */

struct infer_case {
	uint32_t size;
	uint64_t top;
	uint32_t lo;
	uint64_t want;
	const char *what;
};

static const struct infer_case infer_cases[] = {
	/* case A, Tl >= W - 1: window below the wrap; bottom 0xffffffb1 */
	{64, 0xfffffff0, 0xfffffff0, 0xfffffff0, "A: top itself"},
	{64, 0xfffffff0, 0xffffffff, 0xffffffff, "A: ahead, same subspace"},
	{64, 0xfffffff0, 0xffffffb1, 0xffffffb1, "A: window bottom"},
	{64, 0xfffffff0, 0xffffffb0, 0x1ffffffb0, "A: below bottom is next subspace"},
	{64, 0xfffffff0, 0x00000000, 0x100000000, "A: across the wrap, Th + 1"},
	{64, 0xfffffff0, 0x00000005, 0x100000005, "A: across the wrap, Th + 1"},
	/* case B, Tl < W - 1: window straddles the wrap; bottom 0xffffffd1 */
	{64, 0x100000010, 0xffffffd1, 0x0ffffffd1, "B: window bottom, Th - 1"},
	{64, 0x100000010, 0xffffffff, 0x0ffffffff, "B: before the wrap, Th - 1"},
	{64, 0x100000010, 0xffffffd0, 0x1ffffffd0, "B: below bottom, Th"},
	{64, 0x100000010, 0x00000000, 0x100000000, "B: low word 0 after the wrap"},
	{64, 0x100000010, 0x00000010, 0x100000010, "B: top itself"},
	{64, 0x100000010, 0x00000011, 0x100000011, "B: ahead"},
	{64, 0x100000010, 0x80000000, 0x180000000, "B: far ahead"},
	/* the boundary between the cases */
	{64, 0x20000003f, 0x00000000, 0x200000000, "A: Tl = W - 1, bottom 0"},
	{64, 0x20000003f, 0xffffffff, 0x2ffffffff, "A: Tl = W - 1, ahead"},
	{64, 0x20000003e, 0xffffffff, 0x1ffffffff, "B: Tl = W - 2, bottom 0xffffffff"},
	{64, 0x20000003e, 0xfffffffe, 0x2fffffffe, "B: Tl = W - 2, below bottom"},
	{64, 0x20000003e, 0x00000000, 0x200000000, "B: Tl = W - 2, low word 0"},
	/* Th = 0 in case B: no subspace below, the number is ahead */
	{64, 10, 0xfffffff0, 0xfffffff0, "B: Th = 0, no Th - 1"},
	{64, 10, 5, 5, "B: Th = 0, inside"},
	{64, 0, 1, 1, "B: fresh window"},
	{64, 0, 0xffffffff, 0xffffffff, "B: fresh window, high low word"},
	{4096, 0, 0xfffff001, 0xfffff001, "B: fresh window 4096"},
	/* Th = 2^32 - 1 in case A: no subspace above, so it is old */
	{64, 0xffffffff80000000, 5, 0xffffffff00000005, "A: Th max, no Th + 1"},
	{64, 0xffffffff80000000, 0x90000000, 0xffffffff90000000, "A: Th max, ahead"},
	{64, 0xffffffff00000005, 0xfffffff0, 0xfffffffefffffff0, "B: Th max, Th - 1"},
	/* W = 1000 (bottom 0 / 0xffffffff at the case boundary) */
	{1000, 0x3000003e7, 0x00000000, 0x300000000, "A: W 1000 Tl = W - 1"},
	{1000, 0x3000003e6, 0xffffffff, 0x2ffffffff, "B: W 1000 Tl = W - 2"},
	{1000, 0x300000100, 0xfffffd19, 0x2fffffd19, "B: W 1000 bottom"},
	{1000, 0x300000100, 0xfffffd18, 0x3fffffd18, "B: W 1000 below bottom"},
	/* W = 4096 */
	{4096, 0x7ffffffff, 0xfffff000, 0x7fffff000, "A: W 4096 bottom"},
	{4096, 0x7ffffffff, 0xffffefff, 0x8ffffefff, "A: W 4096 below bottom"},
	{4096, 0x7ffffffff, 0x00000000, 0x800000000, "A: W 4096 across the wrap"},
	{4096, 0x800000000, 0xfffff001, 0x7fffff001, "B: W 4096 bottom"},
	{4096, 0x800000000, 0xfffff000, 0x8fffff000, "B: W 4096 below bottom"},
	{4096, 0x800000000, 0x00000000, 0x800000000, "B: W 4096 top, low word 0"},
};

/* infer, check, update: what the inbound path does around the ICV */
static bool
rx(struct esp_replay *r, uint32_t lo, uint64_t *seq, enum egw_esp_drop *why)
{
	*seq = esp_replay_infer(r, lo, true);
	return chk(r, *seq, why) && upd(r, *seq, why);
}

static void
test_infer(void)
{
	struct esp_replay *r;
	enum egw_esp_drop why;
	unsigned int i;
	uint64_t seq;

	for (i = 0; i < RTE_DIM(infer_cases); i++) {
		const struct infer_case *c = &infer_cases[i];

		r = replay_new(c->size, c->top);
		seq = esp_replay_infer(r, c->lo, true);
		CHECK(seq == c->want,
		      "%s: W %u top 0x%" PRIx64 " low 0x%08x: 0x%" PRIx64 ", want 0x%" PRIx64,
		      c->what, c->size, c->top, c->lo, seq, c->want);
		CHECK(esp_replay_infer(r, c->lo, false) == c->lo, "%s: without ESN", c->what);
		free(r);
	}
	/* Th max, case A: the saturated number is old */
	r = replay_new(64, 0xffffffff80000000);
	CHECK(!chk(r, esp_replay_infer(r, 5, true), &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
	      "Th max: old number not outside");
	free(r);

	/* a window straddling the wrap, end to end */
	r = replay_new(64, 0xfffffff0);
	CHECK(rx(r, 0xfffffff5, &seq, &why) && seq == 0xfffffff5, "wrap: before");
	CHECK(rx(r, 0xffffffff, &seq, &why) && seq == 0xffffffff, "wrap: last low word");
	CHECK(rx(r, 0x00000000, &seq, &why) && seq == 0x100000000, "wrap: low word 0 (ESN)");
	CHECK(rx(r, 0x00000003, &seq, &why) && seq == 0x100000003, "wrap: after");
	CHECK(r->top == 0x100000003, "wrap: top 0x%" PRIx64, r->top);
	CHECK(rx(r, 0xfffffff2, &seq, &why) && seq == 0xfffffff2, "wrap: late from below the wrap");
	CHECK(!rx(r, 0xfffffff5, &seq, &why) && seq == 0xfffffff5 && why == EGW_ESP_DROP_REPLAY,
	      "wrap: duplicate from below the wrap");
	CHECK(!rx(r, 0x00000000, &seq, &why) && seq == 0x100000000 && why == EGW_ESP_DROP_REPLAY,
	      "wrap: duplicate low word 0");
	CHECK(rx(r, 0x00000002, &seq, &why) && seq == 0x100000002, "wrap: late after the wrap");
	CHECK(!rx(r, 0x00000003, &seq, &why) && why == EGW_ESP_DROP_REPLAY, "wrap: duplicate top");
	/* bottom of this window is 0x100000003 - 63 = 0xffffffc4 */
	CHECK(rx(r, 0xffffffc4, &seq, &why) && seq == 0xffffffc4, "wrap: window bottom");
	seq = esp_replay_infer(r, 0xffffffc3, true);
	CHECK(seq == 0x1ffffffc3, "wrap: below bottom is the next subspace: 0x%" PRIx64, seq);
	/* going forward until the window leaves the lower subspace (case A) */
	CHECK(rx(r, 0x00000040, &seq, &why) && seq == 0x100000040, "wrap: forward");
	CHECK(esp_replay_infer(r, 0xfffffff2, true) == 0x1fffffff2, "wrap: case A again");
	CHECK(!chk(r, 0xfffffff2, &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
	      "wrap: old number outside");
	free(r);

	/* without ESN the low word is the number, and 0 is never valid */
	r = replay_new(64, 0xfffffff0);
	CHECK(esp_replay_infer(r, 5, false) == 5, "no ESN: low word");
	CHECK(!chk(r, esp_replay_infer(r, 5, false), &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
	      "no ESN: below window");
	CHECK(!chk(r, esp_replay_infer(r, 0, false), &why) && why == EGW_ESP_DROP_OUTSIDE_WINDOW,
	      "no ESN: seq 0");
	free(r);
}

/* ---- random operations against the model ---------------------------------- */

/* Is seq where RFC 4303 A2.2 must recover it: [bottom, bottom + 2^32 - 1]? */
static bool
inferable(uint64_t top, uint32_t size, uint64_t seq)
{
	uint64_t bottom = top >= size - 1 ? top - size + 1 : 0;

	if (seq == 0)
		return false;
	return seq >= bottom && seq - bottom <= UINT32_MAX;
}

static void
test_random(uint32_t size, unsigned int ops)
{
	const uint64_t starts[] = {0, 0xfffff000, rnd() >> 2, UINT64_MAX - (UINT64_C(1) << 40)};
	struct esp_replay *r = replay_new(size, 0);
	static struct model m;
	const uint64_t bits = (uint64_t)r->nwords * 64;
	unsigned int phase, i, bad = 0;
	unsigned long accepted = 0, replays = 0, outside = 0, inferred = 0;
	uint64_t recent[8] = {0}; /* the last numbers accepted */
	unsigned int n_recent = 0;

	for (phase = 0; phase < RTE_DIM(starts); phase++) {
		esp_replay_init(r, size, starts[phase]);
		model_init(&m, size, starts[phase]);
		for (i = 0; i < ops / RTE_DIM(starts) && bad < MAX_FAIL; i++) {
			enum egw_esp_drop w1 = EGW_ESP_DROP_MAX, w2 = EGW_ESP_DROP_MAX;
			uint64_t t = m.top, seq, d;
			unsigned int k = rnd_below(100);
			bool a, b;

			if (k < 30) { /* in order, small gaps */
				seq = t + 1 + rnd_below(4);
			} else if (k < 65) { /* late: inside, at or past the edge */
				d = rnd_below(size + size / 4);
				seq = d > t ? 0 : t - d;
			} else if (k < 75) { /* exactly at the edge */
				d = size - 1 + rnd_below(2);
				seq = d > t ? 0 : t - d;
			} else if (k < 85) { /* a recent accepted number again */
				seq = recent[rnd_below(RTE_DIM(recent))];
			} else if (k < 96) { /* moderate jump */
				seq = t + 1 + rnd_below(2 * size);
			} else if (k < 99) { /* beyond the bitmap */
				seq = t + bits + rnd_below(2 * bits);
			} else { /* huge */
				seq = t + (UINT64_C(1) << 20) + rnd_below(UINT64_C(1) << 24);
			}

			if (inferable(t, size, seq)) {
				uint64_t got = esp_replay_infer(r, (uint32_t)seq, true);

				inferred++;
				if (got != seq)
					bad++;
				CHECK(got == seq,
				      "random: W %u top 0x%" PRIx64 " seq 0x%" PRIx64
				      " inferred 0x%" PRIx64,
				      size, t, seq, got);
			}

			a = esp_replay_check(r, seq, &w1);
			b = model_check(&m, seq, &w2);
			if (a != b || (!a && w1 != w2))
				bad++;
			CHECK(a == b && (a || w1 == w2),
			      "random: W %u top %" PRIu64 " check %" PRIu64 ": %s, model %s", size,
			      t, seq, why_name(a, w1), why_name(b, w2));

			/* most packets verify; a few fail the ICV and are not
			 * recorded; some are recorded without a check first */
			if (rnd_below(10) == 0)
				continue;
			w1 = w2 = EGW_ESP_DROP_MAX;
			a = esp_replay_update(r, seq, &w1);
			b = model_update(&m, seq, &w2);
			if (a != b || (!a && w1 != w2))
				bad++;
			CHECK(a == b && (a || w1 == w2),
			      "random: W %u top %" PRIu64 " update %" PRIu64 ": %s, model %s", size,
			      t, seq, why_name(a, w1), why_name(b, w2));
			if (a) {
				accepted++;
				recent[n_recent++ % RTE_DIM(recent)] = seq;
			} else if (w1 == EGW_ESP_DROP_REPLAY) {
				replays++;
			} else {
				outside++;
			}
			CHECK(r->top == m.top, "random: top %" PRIu64 " model %" PRIu64, r->top,
			      m.top);
			if (i % 50000 == 0)
				bad += compare_all(r, &m, "random");
		}
		bad += compare_all(r, &m, "random end");
	}
	printf("random W %u: %u ops, %lu accepted, %lu replays, %lu outside, %lu inferred\n", size,
	       ops, accepted, replays, outside, inferred);
	CHECK(accepted > ops / 4 && replays > ops / 20 && outside > ops / 10 && inferred > ops / 2,
	      "random W %u: operation mix", size);
	free(r);
}

int
main(int argc, char **argv)
{
	unsigned int i;
	int ret = rte_eal_init(argc, argv);

	if (ret < 0) {
		printf("rte_eal_init failed\n");
		return 1;
	}
	printf("seed 0x%" PRIx64 "\n", rng_state);
	test_sizes();
	for (i = 0; i < RTE_DIM(sizes); i++) {
		test_in_order(sizes[i]);
		test_reorder(sizes[i]);
		test_edge(sizes[i]);
		test_jumps(sizes[i]);
		test_check_update(sizes[i]);
	}
	test_infer();
	test_random(64, RANDOM_OPS);
	test_random(4096, RANDOM_OPS);
	test_random(1000, RANDOM_OPS / 10);

	printf("%d checks, %d failures\n", checks, failures);
	rte_eal_cleanup();
	return failures == 0 ? 0 : 1;
}
