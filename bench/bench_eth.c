/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of egw_eth_classify_burst() per packet, against a baseline measured in
 * the same run on the same mbufs: a burst loop that only reads each packet's
 * ethertype (with the same data prefetch as the classifier). The ratio of the
 * two is what this machine, shared and noisy, can report reliably.
 *
 * Working set: a few thousand mbufs holding a realistic mix of frames (mostly
 * untagged IPv4/IPv6, some 802.1Q/QinQ, PPPoE, ARP, a few 802.3), in shuffled
 * order, walked in bursts of 32. Rounds of baseline and classify alternate
 * (ABBA order); the medians of each and their ratio are reported.
 *
 * Usage: bench_eth [EAL args] [-- [--mbufs N] [--rounds N] [--passes N] [--max-ratio X]]
 *   --max-ratio X  exit 1 if classify/baseline exceeds X (default: report only)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "egw_eth.h"
#include "bench_common.h"

#define BURST 32
#define PREFETCH_AHEAD 4 /* as in lib/eth/eth.c */
#define TARGET_RATIO 1.30

struct mix_entry {
	const char *what;
	unsigned int weight; /* per 1000 */
	uint16_t tpid[2];    /* tags, outermost first; 0 = none */
	uint16_t type;       /* type/length field */
	uint8_t sap;         /* for 802.3: DSAP = SSAP = sap */
	uint8_t cls;         /* expected class */
};

/* Shaped after a broadband edge: IP dominates, access VLAN/QinQ and PPPoE next. */
static const struct mix_entry mix[] = {
	{"ipv4", 520, {0, 0}, 0x0800, 0, EGW_ETH_CLS_IPV4},
	{"ipv6", 230, {0, 0}, 0x86dd, 0, EGW_ETH_CLS_IPV6},
	{"802.1q ipv4", 70, {0x8100, 0}, 0x0800, 0, EGW_ETH_CLS_IPV4},
	{"802.1q ipv6", 20, {0x8100, 0}, 0x86dd, 0, EGW_ETH_CLS_IPV6},
	{"qinq ipv4", 40, {0x88a8, 0x8100}, 0x0800, 0, EGW_ETH_CLS_IPV4},
	{"pppoe session", 50, {0, 0}, 0x8864, 0, EGW_ETH_CLS_PPPOE_SESS},
	{"802.1q pppoe session", 20, {0x8100, 0}, 0x8864, 0, EGW_ETH_CLS_PPPOE_SESS},
	{"pppoe discovery", 5, {0, 0}, 0x8863, 0, EGW_ETH_CLS_PPPOE_DISC},
	{"arp", 25, {0, 0}, 0x0806, 0, EGW_ETH_CLS_ARP},
	{"lldp (other)", 5, {0, 0}, 0x88cc, 0, EGW_ETH_CLS_OTHER},
	{"802.2 llc (stp)", 10, {0, 0}, 38, 0x42, EGW_ETH_CLS_LLC},
	{"802.3 raw (ipx)", 5, {0, 0}, 30, 0xff, EGW_ETH_CLS_RAW_8023},
};

static const struct egw_eth_port port = {
	.mac = {.addr_bytes = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}},
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rng(void)
{
	/* xorshift64*: fixed seed, the same working set every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Fill m with a frame of the given kind; returns the mix index. */
static unsigned int
fill_frame(struct rte_mbuf *m)
{
	static const uint8_t dst_mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x05};
	static const uint8_t src[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x99};
	unsigned int w = rng() % 1000, k, i;
	const struct mix_entry *e;
	uint32_t len, off;
	uint8_t *p;

	for (k = 0; k < RTE_DIM(mix) - 1 && w >= mix[k].weight; k++)
		w -= mix[k].weight;
	e = &mix[k];

	/* IMIX-like sizes; 802.3 frames stay minimum-size */
	len = (uint32_t[]){64, 64, 64, 64, 64, 64, 64, 576, 576, 576, 1514, 1514}[rng() % 12];
	if (e->type <= EGW_ETHER_MAX_8023_LEN)
		len = 60;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (p == NULL)
		return UINT32_MAX;
	memset(p, 0, RTE_MIN(len, 128u));

	if (e->type == 0x0806 || e->type == 0x8863)
		memset(p, 0xff, 6);
	else if (e->sap != 0 || e->type == 0x88cc || rng() % 50 == 0)
		memcpy(p, dst_mcast, 6);
	else
		memcpy(p, port.mac.addr_bytes, 6);
	memcpy(p + 6, src, 6);
	off = 12;
	for (i = 0; i < 2 && e->tpid[i] != 0; i++) {
		put16(p + off, e->tpid[i]);
		put16(p + off + 2, (uint16_t)(1 + rng() % 4094));
		off += 4;
	}
	put16(p + off, e->type);
	off += 2;
	if (e->type <= EGW_ETHER_MAX_8023_LEN) {
		p[off] = e->sap;
		p[off + 1] = e->sap;
	} else {
		p[off] = e->type == 0x0800 ? 0x45 : 0x60;
	}
	return k;
}

/*
 * Baseline: the least any L2 stage must do, read the ethertype of each packet,
 * with the same prefetch distance as the classifier. Summed so it is not
 * optimised away.
 */
static __rte_noinline uint32_t
baseline_burst(struct rte_mbuf *pkts[], uint16_t n)
{
	uint32_t sum = 0;
	uint16_t i;

	for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		const struct rte_ether_hdr *eh;

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD], void *));
		eh = rte_pktmbuf_mtod(pkts[i], const struct rte_ether_hdr *);
		sum += eh->ether_type;
	}
	return sum;
}

static volatile uint32_t sink;

/* One round: 'passes' walks over the working set; returns TSC cycles. */
static uint64_t
round_baseline(struct rte_mbuf **ws, unsigned int n, unsigned int passes)
{
	uint64_t t0 = rte_rdtsc_precise();
	uint32_t sum = 0;
	unsigned int p, i;

	for (p = 0; p < passes; p++)
		for (i = 0; i + BURST <= n; i += BURST)
			sum += baseline_burst(ws + i, BURST);
	sink = sum;
	return rte_rdtsc_precise() - t0;
}

static uint64_t
round_classify(struct rte_mbuf **ws, unsigned int n, unsigned int passes)
{
	uint64_t t0 = rte_rdtsc_precise();
	uint32_t sum = 0;
	unsigned int p, i;

	for (p = 0; p < passes; p++)
		for (i = 0; i + BURST <= n; i += BURST)
			sum += egw_eth_classify_burst(&port, ws + i, BURST);
	sink = sum;
	return rte_rdtsc_precise() - t0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"mbufs", required_argument, NULL, 'n'},
		{"rounds", required_argument, NULL, 'r'},
		{"passes", required_argument, NULL, 'p'},
		{"max-ratio", required_argument, NULL, 'x'},
		{NULL, 0, NULL, 0},
	};
	unsigned int n_mbufs = 4096, rounds = 201, passes = 8;
	unsigned int count[RTE_DIM(mix)] = {0};
	double max_ratio = 0, *t_base, *t_cls, *t_ratio;
	double ns_base, ns_cls, ratio, pair_ratio, ns_per_cycle;
	struct rte_mempool *pool;
	struct rte_mbuf **ws;
	unsigned int i, r;
	int ret, opt;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "bench_eth: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n': n_mbufs = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': passes = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'x': max_ratio = strtod(optarg, NULL); break;
		default:
			fprintf(stderr, "usage: bench_eth [EAL args] -- [--mbufs N] [--rounds N] "
					"[--passes N] [--max-ratio X]\n");
			return 2;
		}
	}
	n_mbufs = RTE_ALIGN_FLOOR(n_mbufs, BURST);
	if (n_mbufs == 0 || rounds == 0 || passes == 0) {
		fprintf(stderr, "bench_eth: --mbufs must be >= %d, --rounds and --passes >= 1\n",
			BURST);
		return 2;
	}

	pool = rte_pktmbuf_pool_create("bench_eth", n_mbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	ws = calloc(n_mbufs, sizeof(*ws));
	t_base = calloc(rounds, sizeof(double));
	t_cls = calloc(rounds, sizeof(double));
	t_ratio = calloc(rounds, sizeof(double));
	if (pool == NULL || ws == NULL || t_base == NULL || t_cls == NULL || t_ratio == NULL) {
		fprintf(stderr, "bench_eth: out of memory for %u mbufs: %s\n", n_mbufs,
			rte_strerror(rte_errno));
		return 1;
	}
	ret = egw_eth_init();
	if (ret != 0) {
		fprintf(stderr, "bench_eth: egw_eth_init: %s\n", strerror(-ret));
		return 1;
	}
	if (rte_pktmbuf_alloc_bulk(pool, ws, n_mbufs) != 0) {
		fprintf(stderr, "bench_eth: cannot allocate %u mbufs\n", n_mbufs);
		return 1;
	}
	for (i = 0; i < n_mbufs; i++) {
		unsigned int k = fill_frame(ws[i]);

		if (k >= RTE_DIM(mix)) {
			fprintf(stderr, "bench_eth: frame does not fit an mbuf\n");
			return 1;
		}
		count[k]++;
	}
	/* shuffle: the walk must not follow the pool's address order */
	for (i = n_mbufs - 1; i > 0; i--) {
		unsigned int j = rng() % (i + 1);
		struct rte_mbuf *t = ws[i];

		ws[i] = ws[j];
		ws[j] = t;
	}

	/* check the classifier agrees with the mix (and warm up) */
	round_classify(ws, n_mbufs, 1);
	for (i = 0; i < n_mbufs; i++) {
		uint8_t cls = egw_eth_meta(ws[i])->cls;

		if (cls == EGW_ETH_CLS_BAD || cls >= EGW_ETH_CLS_MAX) {
			fprintf(stderr, "bench_eth: mbuf %u classified %s\n", i,
				egw_eth_class_name(cls));
			return 1;
		}
	}
	round_baseline(ws, n_mbufs, 1);

	for (r = 0; r < rounds; r++) {
		/* ABBA: neither kind always runs first */
		if (r % 2 == 0) {
			t_base[r] = (double)round_baseline(ws, n_mbufs, passes);
			t_cls[r] = (double)round_classify(ws, n_mbufs, passes);
		} else {
			t_cls[r] = (double)round_classify(ws, n_mbufs, passes);
			t_base[r] = (double)round_baseline(ws, n_mbufs, passes);
		}
		t_ratio[r] = t_cls[r] / t_base[r];
	}

	ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();
	ns_base = median(t_base, rounds) * ns_per_cycle / ((double)n_mbufs * passes);
	ns_cls = median(t_cls, rounds) * ns_per_cycle / ((double)n_mbufs * passes);
	ratio = ns_cls / ns_base;
	pair_ratio = median(t_ratio, rounds);

	printf("bench_eth: %u mbufs, bursts of %d, %u rounds x %u passes, TSC %.2f GHz, lcore %u\n",
	       n_mbufs, BURST, rounds, passes, rte_get_tsc_hz() / 1e9, rte_lcore_id());
	printf("mix:");
	for (i = 0; i < RTE_DIM(mix); i++)
		printf(" %s %.1f%%%s", mix[i].what, 100.0 * count[i] / n_mbufs,
		       i + 1 < RTE_DIM(mix) ? "," : "\n");
	printf("eth_classify: %.2f ns/pkt, baseline (read ethertype) %.2f ns/pkt, "
	       "ratio %.2f (target <= %.2f)%s\n",
	       ns_cls, ns_base, ratio, TARGET_RATIO, ratio <= TARGET_RATIO ? "" : " MISSED");
	printf("median of per-round ratios: %.2f; per packet %.1f vs %.1f TSC cycles\n", pair_ratio,
	       ns_cls / ns_per_cycle, ns_base / ns_per_cycle);

	rte_pktmbuf_free_bulk(ws, n_mbufs);
	rte_mempool_free(pool);
	free(ws);
	free(t_base);
	free(t_cls);
	free(t_ratio);
	rte_eal_cleanup();
	if (max_ratio > 0 && ratio > max_ratio) {
		fprintf(stderr, "bench_eth: ratio %.2f above --max-ratio %.2f\n", ratio, max_ratio);
		return 1;
	}
	return 0;
}
