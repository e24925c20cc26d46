/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rxtokens memory target: bookkeeping for 10,000 consumers on one 2 GiB
 * region stays under 32 MiB. Their quota is 32 each: admission control
 * keeps the sum of a region's quotas within its pages less the bound
 * queues' reserve (10,000 x 256 would promise 2.56 M tokens of 524,288
 * pages, and is refused). (Linux devmem's first
 * page-array design kept a 4-byte counter per page per socket: 2 MiB per
 * socket on a 2 GiB dmabuf, 20 GiB for 10,000 sockets.)
 *
 * Measured two ways:
 *  - egw_rxtok_bookkeeping_bytes(), the library's own count;
 *  - the DPDK allocator: heap_allocsz_bytes of rte_malloc_get_socket_stats()
 *    before and after each step. The region pool's mempool is measured alone
 *    by creating an identical pool (same count, cache, element geometry, on an
 *    unpopulated anonymous mapping) and freeing it, so what is left of the
 *    pool step is the page-to-mbuf table. The consumers' record rings are
 *    excluded as the target says, at their requested size
 *    rte_ring_get_memsize_elem(16, rte_align32pow2(quota + 1)); the
 *    allocator's per-element header stays in (pessimistic).
 * The two must agree within the allocator's per-allocation overhead, and
 * both must be under 32 MiB.
 *
 * Then 8 consumers are filled to their quota (deliver, recv) and one more
 * frame each is dropped as quota: neither count moves. Everything is given
 * back at the end and the pool is full again.
 *
 * Hugepages: EAL's -m plus 1024 for the region. If too few are free the test
 * raises /proc/sys/vm/nr_hugepages (as root) and restores the old value at
 * exit; if it still cannot get them it exits 77 (skipped).
 */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_ring_elem.h>

#include "egw_eth.h"
#include "egw_rxtok.h"
#include "rxtok_test.h"
#include "../app/check.h"

#define SKIP T_SKIP
#define REGION_SIZE (UINT64_C(2) << 30)
#define N_PAGES ((uint32_t)(REGION_SIZE >> EGW_RXTOK_PAGE_SHIFT))
#define N_CONSUMERS 10000
#define QUOTA 32 /* 10,000 x 32 fits the 524,288 pages; a multiple of 32 */
#define TARGET (UINT64_C(32) << 20)
#define N_FILL 8
/* The pool step also allocates a few small things (mempool chunk headers),
 * and the twin pool's and the real pool's allocations need not land in heap
 * elements of the same shape: an element too small to split is handed out
 * whole, so either measurement can carry up to an element header of padding
 * the other does not (seen: the table measured 144 B under its count). */
#define POOL_SLACK 4096

static long old_nr = -1;

static long
read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int
write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL)
		return -1;
	rc = fprintf(f, "%ld\n", v) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static void
restore_nr(void)
{
	if (old_nr >= 0 && write_long("/proc/sys/vm/nr_hugepages", old_nr) == 0)
		printf("nr_hugepages restored to %ld\n", old_nr);
}

/* Make `need` 2 MiB hugepages free; false if that cannot be done. */
static bool
reserve_hugepages(long need)
{
	long freep = t_free_hugepages(), nr;

	if (freep >= need)
		return true;
	nr = read_long("/proc/sys/vm/nr_hugepages");
	if (nr < 0)
		return false;
	if (write_long("/proc/sys/vm/nr_hugepages", nr + (need - freep)) != 0) {
		printf("cannot raise nr_hugepages from %ld: %s\n", nr, strerror(errno));
		return false;
	}
	old_nr = nr;
	atexit(restore_nr);
	printf("nr_hugepages raised from %ld to %ld (%ld free, %ld needed)\n", nr,
	       read_long("/proc/sys/vm/nr_hugepages"), freep, need);
	return t_free_hugepages() >= need;
}

/* EAL's -m (MiB) from the arguments, 0 if none. */
static long
eal_mb(int argc, char **argv)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "-m") == 0)
			return atol(argv[i + 1]);
	return 0;
}

static uint64_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t t = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) == 0)
			t += st.heap_allocsz_bytes;
	return t;
}

/* What rte_malloc charges per allocation beyond the (cache-line rounded)
 * size asked for: its element header. */
static uint64_t
alloc_overhead(void)
{
	uint64_t h0 = heap_used(), d;
	void *p = rte_malloc("t_probe", RTE_CACHE_LINE_SIZE, RTE_CACHE_LINE_SIZE);

	d = heap_used() - h0 - RTE_CACHE_LINE_SIZE;
	rte_free(p);
	return d;
}

static double
mib(uint64_t b)
{
	return (double)b / (1 << 20);
}

/* Heap bytes of a pool like the region's (same count, cache, geometry) over
 * VA that is never touched; the pool is freed again. */
static uint64_t
twin_pool_bytes(void)
{
	uint64_t n_huge = REGION_SIZE / RTE_PGSIZE_2M, k, h0, h1, h2;
	struct rte_pktmbuf_extmem *ext = calloc(n_huge, sizeof(*ext));
	uint8_t *va = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct rte_mempool *mp;

	if (ext == NULL || va == MAP_FAILED)
		return 0;
	for (k = 0; k < n_huge; k++) {
		ext[k].buf_ptr = va + k * RTE_PGSIZE_2M;
		ext[k].buf_iova = (rte_iova_t)(uintptr_t)ext[k].buf_ptr;
		ext[k].buf_len = RTE_PGSIZE_2M;
		ext[k].elt_size = EGW_RXTOK_PAGE_SIZE;
	}
	h0 = heap_used();
	mp = rte_pktmbuf_pool_create_extbuf("t_twin", N_PAGES, 256, 0, EGW_RXTOK_PAGE_SIZE,
					    SOCKET_ID_ANY, ext, (unsigned int)n_huge);
	h1 = heap_used();
	rte_mempool_free(mp);
	h2 = heap_used();
	munmap(va, REGION_SIZE);
	free(ext);
	CHECK(mp != NULL && h2 == h0,
	      "twin pool created and freed (heap %" PRIu64 " -> %" PRIu64 " -> %" PRIu64 ")", h0,
	      h1, h2);
	return mp != NULL ? h1 - h0 : 0;
}

int
main(int argc, char **argv)
{
	static char names[N_CONSUMERS][16];
	static struct egw_rxtok_consumer *cons[N_CONSUMERS];
	long eal_pages = (eal_mb(argc, argv) + 1) / 2, need;
	uint64_t bk0, bk1, bk2, bk3, h0, h1, h2, h3, h4, twin, rings, bk_cons, al_cons;
	uint64_t al_region, al_pagembuf, al_total, static_bytes, ovh, al_norings;
	struct egw_rxtok_region *reg;
	struct rte_mempool *pool;
	struct rte_rcu_qsbr *qsbr;
	unsigned int i, full;
	ssize_t ring_one;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	need = eal_pages + (long)(REGION_SIZE / RTE_PGSIZE_2M) + 4;
	if (!reserve_hugepages(need)) {
		printf("SKIP: need %ld free 2 MiB hugepages (EAL %ld + region 1024), have %ld\n",
		       need, eal_pages, t_free_hugepages());
		return SKIP;
	}
	rc = t_setup(argc, argv, &qsbr);
	if (rc != 0)
		return rc;
	twin = twin_pool_bytes();
	ovh = alloc_overhead();
	printf("rxtokens memory: rte_malloc charges %" PRIu64 " B per allocation beyond its size\n",
	       ovh);

	printf("rxtokens memory: region of 2 GiB (%u pages)\n", N_PAGES);
	bk0 = egw_rxtok_bookkeeping_bytes();
	static_bytes = bk0; /* the fixed tables: static, not on the heap */
	h0 = heap_used();
	reg = egw_rxtok_region_create("ut_rxtok_mem", REGION_SIZE, RTE_PGSIZE_2M);
	if (reg == NULL) {
		int err = rte_errno;

		printf("%s: region of 2 GiB: %s\n", err == ENOMEM ? "SKIP" : "FAIL",
		       rte_strerror(err));
		rte_eal_cleanup();
		return err == ENOMEM ? SKIP : 1;
	}
	h1 = heap_used();
	bk1 = egw_rxtok_bookkeeping_bytes();
	al_region = h1 - h0;
	/* the library counts each allocation with the allocator's header */
	CHECK(bk1 - bk0 == (uint64_t)N_PAGES * sizeof(uint32_t) + ovh,
	      "region: bookkeeping +%" PRIu64 " (a 4-byte page state per page + header)",
	      bk1 - bk0);
	CHECK(al_region == bk1 - bk0, "region: allocator +%" PRIu64 " for it (one allocation)",
	      al_region);

	pool = egw_rxtok_region_pool(reg);
	if (pool == NULL) {
		printf("FAIL: region pool of %u mbufs: %s (EAL -m too small?)\n", N_PAGES,
		       rte_strerror(rte_errno));
		return 1;
	}
	h2 = heap_used();
	bk2 = egw_rxtok_bookkeeping_bytes();
	full = rte_mempool_avail_count(pool);
	CHECK(full == N_PAGES, "pool: %u mbufs", full);
	al_pagembuf = h2 - h1 - twin;
	/* page -> mbuf is a table of runs (one per memory chunk of the pool)
	 * and a run index per hugepage, not a pointer per page */
	CHECK(bk2 - bk1 <= 64 * 1024,
	      "pool: bookkeeping +%" PRIu64 " for the page-to-mbuf runs (a pointer per page "
	      "would be %zu)",
	      bk2 - bk1, (size_t)N_PAGES * sizeof(void *));
	CHECK(h2 - h1 + POOL_SLACK >= twin && al_pagembuf + POOL_SLACK >= bk2 - bk1 &&
		      al_pagembuf <= bk2 - bk1 + POOL_SLACK,
	      "pool: allocator +%" PRIu64 " = mempool %" PRIu64 " + table %" PRIu64, h2 - h1, twin,
	      al_pagembuf);
	CHECK(egw_rxtok_bind(reg, 0, 0) == 0, "bind to port 0 queue 0");

	printf("rxtokens memory: %u consumers, quota %u, udp-dport 1..%u\n", N_CONSUMERS, QUOTA,
	       N_CONSUMERS);
	for (i = 0; i < N_CONSUMERS; i++) {
		struct egw_rxtok_consumer_conf conf = {
			.name = names[i],
			.region = reg,
			.quota = QUOTA,
			.match = EGW_RXTOK_MATCH_UDP_DPORT,
			.udp_dport = (uint16_t)(i + 1),
		};

		snprintf(names[i], sizeof(names[i]), "m%05u", i + 1);
		cons[i] = egw_rxtok_consumer_create(&conf);
		if (cons[i] == NULL) {
			CHECK(false, "consumer %u: %s", i + 1, rte_strerror(rte_errno));
			break;
		}
	}
	h3 = heap_used();
	bk3 = egw_rxtok_bookkeeping_bytes();
	ring_one =
		rte_ring_get_memsize_elem(sizeof(struct egw_rxtok_rec), rte_align32pow2(QUOTA + 1));
	rings = (uint64_t)ring_one * i;
	bk_cons = bk3 - bk2;
	al_cons = h3 - h2 - rings;
	/* two allocations per consumer: the consumer with its held-token array (counted
	 * in the bookkeeping with its allocator header), and its ring
	 * (subtracted at the size asked for, so its header stays in) */
	CHECK(al_cons == bk_cons + (uint64_t)i * ovh,
	      "consumers: allocator %" PRIu64 " (rings of %zd B excluded) = bookkeeping %" PRIu64
	      " + %u ring headers of %" PRIu64 " B",
	      al_cons, ring_one, bk_cons, i, ovh);
	al_total = static_bytes + al_region + al_pagembuf + al_cons;
	al_norings = al_total - (uint64_t)i * ovh;
	printf("  region page states: bookkeeping %10" PRIu64 "  allocator %10" PRIu64 "\n",
	       bk1 - bk0, al_region);
	printf("  page-to-mbuf runs:  bookkeeping %10" PRIu64 "  allocator %10" PRIu64 "\n",
	       bk2 - bk1, al_pagembuf);
	printf("  %u consumers:    bookkeeping %10" PRIu64 "  allocator %10" PRIu64 " (%" PRIu64
	       " B each; rings %" PRIu64 " B not counted)\n",
	       i, bk_cons, al_cons, bk_cons / (i ? i : 1), rings);
	printf("  fixed tables:       %10" PRIu64 " (static)\n", static_bytes);
	printf("rxtokens bookkeeping: %" PRIu64 " bytes (%.1f MiB) for %u consumers x quota %u on "
	       "a 2 GiB region; target < 32 MiB; per-consumer page arrays would need 20 GiB\n",
	       bk3, mib(bk3), i, QUOTA);
	printf("rxtokens bookkeeping as the allocator charges it: %" PRIu64 " bytes (%.1f MiB), "
	       "%" PRIu64 " (%.1f MiB) without the rings' headers%s\n",
	       al_total, mib(al_total), al_norings, mib(al_norings),
	       al_norings >= TARGET ? ": OVER the 32 MiB target (rte_malloc headers)" : "");
	/* the library's figure and what the heap was charged (rings' headers
	 * aside), both under the target */
	CHECK(bk3 < TARGET, "bookkeeping %" PRIu64 " < 32 MiB", bk3);
	CHECK(al_norings < TARGET, "allocator's figure %" PRIu64 " < 32 MiB", al_norings);
	CHECK((uint64_t)N_CONSUMERS * N_PAGES * sizeof(uint32_t) == UINT64_C(20000) << 20,
	      "10000 x 2 MiB page arrays = 20 GiB (as printed)");

	printf("rxtokens memory: %u consumers filled to their quota; the counts do not move\n",
	       N_FILL);
	{
		struct egw_rxtok_burst_res res = {0};
		static uint8_t frame[T_FRAME_MAX];
		static uint32_t toks[N_FILL][QUOTA];
		struct egw_rxtok_rec recs[64];
		struct rte_mbuf *pkts[32];
		unsigned int c, k, got;

		for (c = 0; c < N_FILL && c < i; c++) {
			struct t_frame f = {.kind = T_UDP4, .dst4_last = 9, .plen = 64};
			struct t_layout lo;

			f.dport = (uint16_t)(1 + c * 1000);
			lo = t_build(&f, frame);
			for (k = 0; k < QUOTA + 32; k += 32) {
				unsigned int j;
				uint16_t pass;

				for (j = 0; j < 32; j++)
					pkts[j] = t_chain(pool, frame, lo.len, 0, 0);
				pass = t_deliver(qsbr, 0, 0, pkts, 32, &res);
				for (j = 0; j < pass; j++)
					rte_pktmbuf_free(pkts[j]);
			}
			for (got = 0;;) {
				int n = egw_rxtok_recv(cons[c * 1000], recs, RTE_DIM(recs));

				if (n <= 0)
					break;
				for (k = 0; k < (unsigned int)n; k++)
					toks[c][got + k] = recs[k].token;
				got += (unsigned int)n;
			}
			CHECK(got == QUOTA, "consumer %s holds %u", names[c * 1000], got);
		}
		CHECK(res.delivered == N_FILL * QUOTA &&
			      res.drop[EGW_RXTOK_DROP_QUOTA] == N_FILL * 32,
		      "delivered %u, quota drops %u", res.delivered,
		      res.drop[EGW_RXTOK_DROP_QUOTA]);
		CHECK(rte_mempool_avail_count(pool) == full - N_FILL * QUOTA, "%u pages held",
		      N_FILL * QUOTA);
		CHECK(egw_rxtok_bookkeeping_bytes() == bk3 && heap_used() == h3,
		      "full holdings: bookkeeping %" PRIu64 " heap %" PRIu64 " unchanged",
		      egw_rxtok_bookkeeping_bytes(), heap_used());
		for (c = 0; c < N_FILL && c < i; c++) {
			struct egw_rxtok_range r[EGW_RXTOK_MAX_RANGES];
			unsigned int done = 0;

			while (done < QUOTA) {
				unsigned int n = RTE_MIN(QUOTA - done, (unsigned int)RTE_DIM(r));

				for (k = 0; k < n; k++)
					r[k] = (struct egw_rxtok_range){toks[c][done + k], 1};
				rc = egw_rxtok_return(cons[c * 1000], egw_rxtok_region_id(reg), r,
						      n);
				CHECK(rc == (int)n, "return %u: %d", n, rc);
				done += n;
			}
		}
		CHECK(rte_mempool_avail_count(pool) == full, "pool full again");
	}

	for (; i > 0; i--)
		egw_rxtok_consumer_destroy(cons[i - 1]);
	h4 = heap_used();
	CHECK(h4 == h2 && egw_rxtok_bookkeeping_bytes() == bk2,
	      "consumers destroyed: heap and bookkeeping back (%" PRIu64 " / %" PRIu64 ")", h4,
	      egw_rxtok_bookkeeping_bytes());
	egw_rxtok_fini();
	rte_eal_cleanup();
	printf("rxtokens memory: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
