/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of zero-copy payload delivery (lib/rxtokens) per token, against a copy
 * path measured in the same run on the same frames.
 *
 * One lcore plays worker and consumer. A 64 MiB hugepage region is bound to
 * (port 0, queue 0) and one in-process consumer takes UDP port 5001. Frames
 * (Ethernet + IPv4 + UDP, payloads of 64, 1500 and 9000 bytes: a 9000-byte
 * payload spans 3 pages, a chain of region mbufs) are allocated from the
 * region's pool, filled and classified (lib/eth) in chunks of 128, then:
 *
 *  - zero-copy: egw_rxtok_deliver_burst() in batches of 1, 32 or 128, then
 *    the consumer's egw_rxtok_recv() of what the batch gave, and
 *    egw_rxtok_return() of those tokens (adjacent tokens merged into ranges),
 *    which puts the pages back in the pool;
 *  - copy: per frame of the batch, find the UDP payload, memcpy it into the
 *    consumer's buffer (one buffer per payload of the batch, reused by the
 *    next batch) and rte_pktmbuf_free() the frame.
 *
 * Timed regions (TSC, one pair around each chunk): "core" is the zero-copy
 * calls or the copy loop alone, from the first delivered frame to the last
 * page back in the pool, so both include giving the buffers back and neither
 * includes building the frames; "full" adds the allocation, filling and
 * classification of the chunk before it. Rounds of zero-copy and copy
 * alternate (ABBA); the medians of each are reported with their ratio.
 *
 * Cache state, the same for both paths: by default the frames are as the fill
 * left them, in L1/L2 (the copy path's best case); with --cold every payload
 * line but the header's is flushed first, as after a NIC's DMA without DDIO.
 *
 * Usage: bench_rxtok [EAL args] [-- [--rounds N] [--chunks N] [--payload N] [--batch N]
 *                                    [--cold] [--strict]]
 *   --chunks N  chunks of 128 frames per round (default 16)
 *   --payload N, --batch N  run only that payload size / batch size (for profiling)
 *   --cold      flush the payload lines from the caches before the timed region, as
 *               if a NIC had just written them (x86); default: as the fill left them
 *   --strict    exit 1 if a target is missed (default: report only)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>
#include <rte_udp.h>

#ifdef RTE_ARCH_X86
#include <immintrin.h>
#endif

#include "egw_eth.h"
#include "egw_rxtok.h"
#include "bench_common.h"

#define CHUNK 128  /* frames built, then timed, at a time: the largest batch */
#define MAX_SEGS 3 /* pages of the largest frame */
#define MAX_PAYLOAD 9000
#define HDR_LEN (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define UDP_DPORT 5001
#define QUOTA 1024 /* >= CHUNK x MAX_SEGS tokens outstanding */
#define REGION_SIZE (64ull << 20)
#define TARGET_NS_PER_TOKEN 20.0
#define TARGET_BATCH 32
#define TARGET_RATIO 3.0

static const uint16_t payload_sizes[] = {64, 1500, 9000};
static const uint16_t batch_sizes[] = {1, 32, 128};

static const struct egw_eth_port eport = {
	.mac = {.addr_bytes = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}},
};

struct bench {
	struct rte_mempool *pool;
	struct egw_rxtok_consumer *c;
	uint32_t region_id;
	uint16_t room; /* data bytes per page after the headroom */
	uint8_t hdr[HDR_LEN];
	uint16_t payload;
	uint16_t frame_len;
	uint16_t segs;  /* pages per frame */
	uint16_t pages; /* pages holding payload: tokens per payload */
	uint8_t seq;
	bool cold;     /* --cold: payload bytes not in the CPU caches when timing starts */
	uint8_t *cbuf; /* copy path: the consumer's buffers, CHUNK x MAX_PAYLOAD */
	struct rte_rcu_qsbr *qsbr;
	uint64_t bad; /* calls that did not do what the bench expects */
	uint64_t n_ranges, n_return_calls;
	struct egw_rxtok_rec recs[CHUNK * MAX_SEGS];
	struct egw_rxtok_range ranges[CHUNK * MAX_SEGS];
};

/* Headers of a UDP/IPv4 frame to eport carrying b->payload bytes. */
static void
make_header(struct bench *b)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)b->hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memset(b->hdr, 0, sizeof(b->hdr));
	rte_ether_addr_copy(&eport.mac, &eh->dst_addr);
	eh->src_addr = (struct rte_ether_addr){{0x02, 0x00, 0x5e, 0x10, 0x00, 0x99}};
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + b->payload);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(192, 0, 2, 1));
	ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(198, 51, 100, 1));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(40000);
	udp->dst_port = rte_cpu_to_be_16(UDP_DPORT);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + b->payload);
}

static int
set_payload(struct bench *b, uint16_t payload)
{
	b->payload = payload;
	b->frame_len = (uint16_t)(HDR_LEN + payload);
	b->segs = (uint16_t)((b->frame_len + b->room - 1) / b->room);
	/* the headers sit in the first page, before any payload byte */
	b->pages = b->segs;
	if (b->segs > MAX_SEGS || HDR_LEN >= b->room)
		return -1;
	make_header(b);
	return 0;
}

/*
 * Allocate, fill and classify CHUNK frames from the region's pool, as an RX
 * queue bound to the region would hand them over (scattered RX: every page
 * keeps its headroom). The payload bytes are all written, as a NIC would.
 */
static int
build_chunk(struct bench *b, struct rte_mbuf *pkts[CHUNK])
{
	struct rte_mbuf *segs[CHUNK * MAX_SEGS];
	unsigned int i, s;

	if (rte_pktmbuf_alloc_bulk(b->pool, segs, CHUNK * b->segs) != 0)
		return -1;
	for (i = 0; i < CHUNK; i++) {
		struct rte_mbuf *head = segs[i * b->segs], *prev = NULL;
		uint32_t left = b->frame_len;
		uint8_t fill = b->seq++;

		for (s = 0; s < b->segs; s++) {
			struct rte_mbuf *m = segs[i * b->segs + s];
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
			uint16_t take = (uint16_t)RTE_MIN(left, (uint32_t)b->room);

			m->data_len = take;
			if (s == 0) {
				memcpy(p, b->hdr, HDR_LEN);
				memset(p + HDR_LEN, fill, take - HDR_LEN);
			} else {
				memset(p, fill, take);
				prev->next = m;
			}
			prev = m;
			left -= take;
		}
		head->nb_segs = b->segs;
		head->pkt_len = b->frame_len;
		pkts[i] = head;
	}
	if (egw_eth_classify_burst(&eport, pkts, CHUNK) != CHUNK) {
		rte_pktmbuf_free_bulk(pkts, CHUNK);
		return -1;
	}
	return 0;
}

/* The consumer gives back what one batch gave it: adjacent tokens are merged
 * into one range, at most EGW_RXTOK_MAX_RANGES ranges per call. */
static int
return_tokens(struct bench *b, unsigned int k)
{
	unsigned int i, nr = 0, done;
	int total = 0, rc;

	for (i = 0; i < k; i++) {
		uint32_t t = b->recs[i].token;

		if (nr != 0 && b->ranges[nr - 1].token_start + b->ranges[nr - 1].token_count == t &&
		    b->ranges[nr - 1].token_count < EGW_RXTOK_MAX_RANGE_TOKENS) {
			b->ranges[nr - 1].token_count++;
			continue;
		}
		b->ranges[nr].token_start = t;
		b->ranges[nr].token_count = 1;
		nr++;
	}
	for (done = 0; done < nr; done += EGW_RXTOK_MAX_RANGES) {
		rc = egw_rxtok_return(b->c, b->region_id, b->ranges + done,
				      RTE_MIN(nr - done, (unsigned int)EGW_RXTOK_MAX_RANGES));
		if (rc < 0)
			return rc;
		total += rc;
		b->n_return_calls++;
	}
	b->n_ranges += nr;
	return total;
}

/* Zero-copy: deliver the chunk in batches, receive and return each batch. */
/* noinline: one call per chunk, and profiles can name it */
static __rte_noinline void
zc_chunk(struct bench *b, struct rte_mbuf *pkts[CHUNK], unsigned int batch)
{
	unsigned int i, expect = batch * b->pages;

	for (i = 0; i < CHUNK; i += batch) {
		struct egw_rxtok_burst_res res = {0};
		uint16_t pass;
		int k, ret;

		pass = egw_rxtok_deliver_burst(0, 0, pkts + i, (uint16_t)batch, &res);
		k = egw_rxtok_recv(b->c, b->recs, RTE_DIM(b->recs));
		ret = k > 0 ? return_tokens(b, (unsigned int)k) : k;
		b->bad += pass != 0 || res.delivered != batch || (unsigned int)k != expect ||
			  ret != k;
	}
}

/* Copy path: what a consumer fed by copies gets per payload: the payload
 * found behind the headers, copied into its buffer, the frame freed. */
static __rte_noinline void
copy_chunk(struct bench *b, struct rte_mbuf *pkts[CHUNK], unsigned int batch)
{
	unsigned int i, j;

	for (i = 0; i < CHUNK; i += batch) {
		for (j = 0; j < batch; j++) {
			struct rte_mbuf *m = pkts[i + j], *s;
			const struct rte_ipv4_hdr *ip =
				rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);
			uint32_t ihl = (uint32_t)(ip->version_ihl & 0xf) * 4;
			const struct rte_udp_hdr *udp = rte_pktmbuf_mtod_offset(
				m, const struct rte_udp_hdr *, m->l2_len + ihl);
			uint32_t skip = m->l2_len + ihl + sizeof(*udp);
			uint32_t left = rte_be_to_cpu_16(udp->dgram_len) - (uint32_t)sizeof(*udp);
			uint8_t *dst = b->cbuf + (size_t)j * MAX_PAYLOAD;

			for (s = m; s != NULL && left != 0; s = s->next) {
				uint32_t take;

				if (skip >= s->data_len) {
					skip -= s->data_len;
					continue;
				}
				take = RTE_MIN(left, (uint32_t)s->data_len - skip);
				memcpy(dst, rte_pktmbuf_mtod_offset(s, const uint8_t *, skip),
				       take);
				dst += take;
				left -= take;
				skip = 0;
			}
			b->bad += left != 0;
			rte_pktmbuf_free(m);
		}
	}
}

/*
 * --cold: a NIC writes the payload by DMA, so the CPU has no copy of it in
 * its caches (none at all without DDIO); only the header line, which the
 * classifier read, is cached. Flush every other line of each frame; the
 * mbuf headers stay cached as after a real RX burst.
 */
static void
evict_payloads(struct rte_mbuf *pkts[CHUNK])
{
#ifdef RTE_ARCH_X86
	unsigned int i;

	for (i = 0; i < CHUNK; i++) {
		const struct rte_mbuf *s;

		for (s = pkts[i]; s != NULL; s = s->next) {
			const uint8_t *p = rte_pktmbuf_mtod(s, const uint8_t *);
			uint32_t off = s == pkts[i] ? RTE_CACHE_LINE_SIZE : 0;

			for (; off < s->data_len; off += RTE_CACHE_LINE_SIZE)
				_mm_clflush(p + off);
		}
	}
	_mm_mfence();
#else
	RTE_SET_USED(pkts);
#endif
}

struct times {
	uint64_t core; /* TSC cycles: delivery or copy, with the buffers' return */
	uint64_t full; /* the same plus alloc + fill + classify */
};

/* One round: 'chunks' chunks of one path; adds the cycles to t. */
static int
round_run(struct bench *b, bool zc, unsigned int batch, unsigned int chunks, struct times *t)
{
	struct rte_mbuf *pkts[CHUNK];
	unsigned int n;

	t->core = t->full = 0;
	for (n = 0; n < chunks; n++) {
		uint64_t t0 = rte_rdtsc_precise(), ta, t1, t2;

		if (build_chunk(b, pkts) != 0)
			return -1;
		ta = rte_rdtsc_precise();
		if (b->cold)
			evict_payloads(pkts);
		t1 = rte_rdtsc_precise();
		if (zc)
			zc_chunk(b, pkts, batch);
		else
			copy_chunk(b, pkts, batch);
		t2 = rte_rdtsc_precise();
		t->core += t2 - t1;
		t->full += (ta - t0) + (t2 - t1);
		/* as a worker does once per loop; outside the timed region */
		rte_rcu_qsbr_quiescent(b->qsbr, 0);
	}
	return 0;
}

/*
 * Before timing a size: every payload arrives as records whose (token,
 * offset, size) name its bytes, FIRST on the first and LAST on the last, and
 * the copy path copies the same bytes. The region's base address is not in
 * the API; it is taken from the first page and must be the same for all.
 */
static int
verify(struct bench *b)
{
	struct rte_mbuf *pkts[CHUNK];
	uint8_t *seg_va[CHUNK][MAX_SEGS], *base = NULL;
	uint8_t fill[CHUNK];
	unsigned int i, s, k = 0, j;
	struct egw_rxtok_burst_res res = {0};
	int n;

	if (build_chunk(b, pkts) != 0)
		return -1;
	for (i = 0; i < CHUNK; i++) {
		struct rte_mbuf *m = pkts[i];

		fill[i] = rte_pktmbuf_mtod(m, const uint8_t *)[HDR_LEN];
		for (s = 0; s < b->segs; s++, m = m->next)
			seg_va[i][s] = m->buf_addr;
	}
	if (egw_rxtok_deliver_burst(0, 0, pkts, CHUNK, &res) != 0 || res.delivered != CHUNK ||
	    res.records != CHUNK * b->pages)
		return -1;
	n = egw_rxtok_recv(b->c, b->recs, RTE_DIM(b->recs));
	if (n != (int)(CHUNK * b->pages))
		return -1;
	for (i = 0; i < CHUNK; i++) {
		uint32_t got = 0;

		for (s = 0; s < b->pages; s++, k++) {
			const struct egw_rxtok_rec *r = &b->recs[k];
			uint8_t *va = seg_va[i][s] - ((uintptr_t)r->token << EGW_RXTOK_PAGE_SHIFT);

			if (base == NULL)
				base = va;
			if (va != base || r->key != UDP_DPORT ||
			    r->match != EGW_RXTOK_MATCH_UDP_DPORT ||
			    ((r->flags & EGW_RXTOK_REC_FIRST) != 0) != (s == 0) ||
			    ((r->flags & EGW_RXTOK_REC_LAST) != 0) != (s + 1 == b->pages) ||
			    r->offset + r->size > EGW_RXTOK_PAGE_SIZE)
				return -1;
			for (j = 0; j < r->size; j++)
				if (seg_va[i][s][r->offset + j] != fill[i])
					return -1;
			got += r->size;
		}
		if (got != b->payload)
			return -1;
	}
	if (return_tokens(b, (unsigned int)n) != n)
		return -1;

	if (build_chunk(b, pkts) != 0)
		return -1;
	for (i = 0; i < CHUNK; i++)
		fill[i] = rte_pktmbuf_mtod(pkts[i], const uint8_t *)[HDR_LEN];
	copy_chunk(b, pkts, CHUNK);
	for (i = 0; i < CHUNK; i++)
		for (j = 0; j < b->payload; j++)
			if (b->cbuf[(size_t)i * MAX_PAYLOAD + j] != fill[i])
				return -1;
	return b->bad == 0 ? 0 : -1;
}

struct result {
	double zc_ns_tok;   /* core, per token */
	double zc_ns_pay;   /* core, per payload */
	double cp_ns_pay;   /* copy core, per payload */
	double ratio;       /* copy / zero-copy time per payload = throughput ratio */
	double pair_ratio;  /* median of per-round ratios */
	double zc_full_pay; /* full cycle, per payload */
	double cp_full_pay;
};

static int
run_config(struct bench *b, unsigned int batch, unsigned int rounds, unsigned int chunks,
	   struct result *res)
{
	double *zc = calloc(rounds, sizeof(double)), *cp = calloc(rounds, sizeof(double));
	double *zcf = calloc(rounds, sizeof(double)), *cpf = calloc(rounds, sizeof(double));
	double *pr = calloc(rounds, sizeof(double));
	double per_pay = 1e9 / (double)rte_get_tsc_hz() / ((double)chunks * CHUNK);
	struct times tz, tc;
	unsigned int r;
	int rc = -1;

	if (zc == NULL || cp == NULL || zcf == NULL || cpf == NULL || pr == NULL)
		goto out;
	/* warm-up, not counted */
	if (round_run(b, true, batch, chunks, &tz) != 0 ||
	    round_run(b, false, batch, chunks, &tc) != 0)
		goto out;
	for (r = 0; r < rounds; r++) {
		/* ABBA: neither path always runs first */
		if (r % 2 == 0) {
			if (round_run(b, true, batch, chunks, &tz) != 0 ||
			    round_run(b, false, batch, chunks, &tc) != 0)
				goto out;
		} else {
			if (round_run(b, false, batch, chunks, &tc) != 0 ||
			    round_run(b, true, batch, chunks, &tz) != 0)
				goto out;
		}
		zc[r] = (double)tz.core * per_pay;
		cp[r] = (double)tc.core * per_pay;
		zcf[r] = (double)tz.full * per_pay;
		cpf[r] = (double)tc.full * per_pay;
		pr[r] = cp[r] / zc[r];
	}
	res->zc_ns_pay = median(zc, rounds);
	res->zc_ns_tok = res->zc_ns_pay / b->pages;
	res->cp_ns_pay = median(cp, rounds);
	res->ratio = res->cp_ns_pay / res->zc_ns_pay;
	res->pair_ratio = median(pr, rounds);
	res->zc_full_pay = median(zcf, rounds);
	res->cp_full_pay = median(cpf, rounds);
	rc = 0;
out:
	free(zc);
	free(cp);
	free(zcf);
	free(cpf);
	free(pr);
	return rc;
}

/* EAL memory, RCU, lib/eth, lib/rxtokens: region, pool, binding, consumer. */
static int
setup(struct bench *b)
{
	struct egw_rxtok_consumer_conf cc = {
		.name = "bench",
		.quota = QUOTA,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = UDP_DPORT,
	};
	struct egw_rxtok_region *r;
	uint64_t bk0, bk1, bk2;
	size_t qsz = rte_rcu_qsbr_get_memsize(1);
	unsigned int ring_bytes, pool_bytes;
	int rc;

	b->qsbr = rte_zmalloc("bench_rxtok_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	b->cbuf = rte_zmalloc("bench_rxtok_cbuf", (size_t)CHUNK * MAX_PAYLOAD, RTE_CACHE_LINE_SIZE);
	if (b->qsbr == NULL || b->cbuf == NULL || rte_rcu_qsbr_init(b->qsbr, 1) != 0 ||
	    rte_rcu_qsbr_thread_register(b->qsbr, 0) != 0) {
		fprintf(stderr, "bench_rxtok: RCU or buffers: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	rte_rcu_qsbr_thread_online(b->qsbr, 0);
	rc = egw_eth_init();
	if (rc == 0)
		rc = egw_rxtok_init(b->qsbr);
	if (rc != 0) {
		fprintf(stderr, "bench_rxtok: init: %s\n", strerror(-rc));
		return -1;
	}
	bk0 = egw_rxtok_bookkeeping_bytes();
	r = egw_rxtok_region_create("bench_rxtok", REGION_SIZE, RTE_PGSIZE_2M);
	if (r == NULL) {
		fprintf(stderr,
			"bench_rxtok: region of %llu MiB in 2 MiB hugepages: %s "
			"(free hugepages? see /proc/meminfo)\n",
			REGION_SIZE >> 20, rte_strerror(rte_errno));
		return -1;
	}
	b->pool = egw_rxtok_region_pool(r);
	if (b->pool == NULL || egw_rxtok_bind(r, 0, 0) != 0) {
		fprintf(stderr, "bench_rxtok: pool or binding: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	b->region_id = egw_rxtok_region_id(r);
	b->room = (uint16_t)(rte_pktmbuf_data_room_size(b->pool) - RTE_PKTMBUF_HEADROOM);
	bk1 = egw_rxtok_bookkeeping_bytes();
	cc.region = r;
	b->c = egw_rxtok_consumer_create(&cc);
	if (b->c == NULL) {
		fprintf(stderr, "bench_rxtok: consumer: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	bk2 = egw_rxtok_bookkeeping_bytes();
	ring_bytes = (unsigned int)rte_ring_get_memsize_elem(sizeof(struct egw_rxtok_rec),
							     rte_align32pow2(QUOTA + 1));
	pool_bytes =
		(b->pool->header_size + b->pool->elt_size + b->pool->trailer_size) * b->pool->size;
	printf("bookkeeping: egw_rxtok_bookkeeping_bytes() = %" PRIu64
	       " bytes: fixed tables %" PRIu64 ", region of %u pages (%llu MiB) %" PRIu64
	       " (%.1f B/page, %.2f%% of the region), "
	       "consumer with quota %u %" PRIu64 "\n",
	       bk2, bk0, b->pool->size, REGION_SIZE >> 20, bk1 - bk0,
	       (double)(bk1 - bk0) / b->pool->size, 100.0 * (double)(bk1 - bk0) / REGION_SIZE,
	       QUOTA, bk2 - bk1);
	printf("not counted there: the consumer's record ring %u bytes, the region pool's mbuf "
	       "headers %u bytes (%u B/page)\n",
	       ring_bytes, pool_bytes, pool_bytes / b->pool->size);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"chunks", required_argument, NULL, 'c'},
		{"payload", required_argument, NULL, 'p'},
		{"batch", required_argument, NULL, 'b'},
		{"cold", no_argument, NULL, 'k'},
		{"strict", no_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	struct result res[RTE_DIM(payload_sizes)][RTE_DIM(batch_sizes)] = {0};
	unsigned int rounds = 101, chunks = 16, si, bi, missed = 0;
	unsigned int pool_full, only_payload = 0, only_batch = 0;
	bool strict = false, cold = false;
	struct bench *b;
	int ret, opt;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "bench_rxtok: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'c': chunks = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': only_payload = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': only_batch = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'k': cold = true; break;
		case 's': strict = true; break;
		default:
			fprintf(stderr,
				"usage: bench_rxtok [EAL args] -- [--rounds N] [--chunks N] "
				"[--strict]\n");
			return 2;
		}
	}
	if (rounds == 0 || chunks == 0) {
		fprintf(stderr, "bench_rxtok: --rounds and --chunks must be >= 1\n");
		return 2;
	}
	for (si = 0; only_payload != 0 && si < RTE_DIM(payload_sizes); si++)
		if (payload_sizes[si] == only_payload)
			break;
	for (bi = 0; only_batch != 0 && bi < RTE_DIM(batch_sizes); bi++)
		if (batch_sizes[bi] == only_batch)
			break;
	if (si == RTE_DIM(payload_sizes) || bi == RTE_DIM(batch_sizes)) {
		fprintf(stderr, "bench_rxtok: --payload is one of 64, 1500, 9000 and --batch one "
				"of 1, 32, 128\n");
		return 2;
	}
	b = rte_zmalloc("bench_rxtok", sizeof(*b), RTE_CACHE_LINE_SIZE);
	if (b == NULL || setup(b) != 0)
		return 1;
	pool_full = rte_mempool_avail_count(b->pool);
	b->cold = cold;

	printf("bench_rxtok: 1 lcore (%u), TSC %.2f GHz, %u rounds x %u chunks of %d frames per "
	       "path, ABBA; UDP/IPv4 frames in region pages (%u data bytes each after the "
	       "headroom); payloads %s when timing starts\n",
	       rte_lcore_id(), rte_get_tsc_hz() / 1e9, rounds, chunks, CHUNK, b->room,
	       cold ? "flushed from the caches (--cold)" : "cache-hot from the fill");
	printf("timed: zero-copy = egw_rxtok_deliver_burst + egw_rxtok_recv + egw_rxtok_return "
	       "(pages back in the pool); copy = find payload + memcpy to the consumer's buffer + "
	       "rte_pktmbuf_free; neither includes alloc, fill and classify (the 'full' figures "
	       "do)\n");
	for (si = 0; si < RTE_DIM(payload_sizes); si++) {
		if (only_payload != 0 && only_payload != payload_sizes[si])
			continue;
		if (set_payload(b, payload_sizes[si]) != 0 || verify(b) != 0) {
			fprintf(stderr, "bench_rxtok: %uB: delivery or copy gave wrong bytes\n",
				payload_sizes[si]);
			return 1;
		}
		for (bi = 0; bi < RTE_DIM(batch_sizes); bi++) {
			struct result *x = &res[si][bi];
			unsigned int batch = batch_sizes[bi];
			bool ns_ok, ratio_ok = true;
			char ratio_tgt[96];

			if (only_batch != 0 && only_batch != batch)
				continue;
			b->n_ranges = b->n_return_calls = 0;
			if (run_config(b, batch, rounds, chunks, x) != 0 || b->bad != 0 ||
			    rte_mempool_avail_count(b->pool) != pool_full) {
				fprintf(stderr,
					"bench_rxtok: %uB batch %u: a call failed (%" PRIu64
					" bad) or pages are missing from the pool (%u of %u)\n",
					b->payload, batch, b->bad, rte_mempool_avail_count(b->pool),
					pool_full);
				return 1;
			}
			ns_ok = x->zc_ns_tok <= TARGET_NS_PER_TOKEN;
			if (b->payload == 1500) {
				ratio_ok = x->ratio >= TARGET_RATIO;
				snprintf(ratio_tgt, sizeof(ratio_tgt), "target >= %.0fx: %s",
					 TARGET_RATIO, ratio_ok ? "met" : "MISSED");
			} else if (b->payload == 9000) {
				/* res[1][bi] is 0 if 1500 B was not run */
				ratio_ok = x->ratio >= TARGET_RATIO && x->ratio > res[1][bi].ratio;
				snprintf(ratio_tgt, sizeof(ratio_tgt),
					 "target >= %.0fx and above 1500B's %.1fx: %s",
					 TARGET_RATIO, res[1][bi].ratio,
					 ratio_ok ? "met" : "MISSED");
			} else {
				snprintf(ratio_tgt, sizeof(ratio_tgt), "no target at %uB",
					 b->payload);
			}
			printf("rxtok %uB batch %u: %.1f ns/token (deliver+recv+return), copy %.1f "
			       "ns/payload, zero-copy %.1fx the copy path (%s); ",
			       b->payload, batch, x->zc_ns_tok, x->cp_ns_pay, x->ratio, ratio_tgt);
			if (batch == TARGET_BATCH)
				printf("target <= %.0f ns/token: %s\n", TARGET_NS_PER_TOKEN,
				       ns_ok ? "met" : "MISSED");
			else
				printf("ns/token target is set at batch %d\n", TARGET_BATCH);
			printf("    %u token(s)/payload, %.1f ns/payload: %.2f M records "
			       "delivered/s "
			       "= M tokens returned/s, %.2f M payloads/s; %.2f tokens per range; "
			       "median per-round ratio %.1fx",
			       b->pages, x->zc_ns_pay, 1e3 / x->zc_ns_tok, 1e3 / x->zc_ns_pay,
			       (double)(rounds + 1) * chunks * CHUNK * b->pages /
				       (double)RTE_MAX(b->n_ranges, UINT64_C(1)),
			       x->pair_ratio);
			/* with --cold the next fill misses on the pages the flush
			 * evicted, and only on the zero-copy side (the copy read
			 * them back): no fair full-cycle figure */
			if (cold)
				printf("\n");
			else
				printf("; full cycle with alloc+fill+classify: zero-copy %.1f, "
				       "copy "
				       "%.1f ns/payload (%.2fx)\n",
				       x->zc_full_pay, x->cp_full_pay,
				       x->cp_full_pay / x->zc_full_pay);
			missed += !ratio_ok || (batch == TARGET_BATCH && !ns_ok);
		}
	}
	printf("bench_rxtok: %u target(s) missed\n", missed);
	fflush(stdout);

	/* offline first: closing the consumer waits for a grace period */
	rte_rcu_qsbr_thread_offline(b->qsbr, 0);
	egw_rxtok_fini();
	rte_free(b->cbuf);
	rte_free(b->qsbr);
	rte_free(b);
	/* the region stays bound (the API has no unbind); exit releases it */
	rte_eal_cleanup();
	return strict && missed != 0 ? 1 : 0;
}
