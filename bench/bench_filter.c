/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of a PPPoE pass/active filter (lib/pppoe filter.c, pppoe_filter.h)
 * per packet on one core, through DPDK's eBPF JIT and its interpreter,
 * against a baseline measured in the same run.
 *
 * A run walks a burst of 32 frames --bursts times and asks, frame by frame,
 * pppoe_filter_match() (JIT) or pppoe_filter_match_interp() (interpreter),
 * counting the matches; the baseline is the same loop with no filter
 * (pppoe_filter_match(NULL, m): what the data path pays when none is
 * configured; the filter pointer is read per frame, as from its session). The frames are what the filter sees in service: Ethernet II
 * with IPv4 or IPv6, one segment, a mix of TCP (ports 80, 443, 25; SYN and
 * ACK), UDP (53, 123, others) and ICMP/ICMPv6, 64 to 1514 bytes, already in
 * cache (the data path has just decapsulated them).
 *
 * Filters: `not (tcp port 25)`, a 5-term one, and a TCP-flags test (it goes
 * through both DPDK workarounds of filter.c: the indexed byte load and the
 * rewritten jset).
 *
 * Timing: TSC around a run; per round the three loops in an order that
 * alternates (ABC, CBA); medians over --rounds rounds. Every match count is
 * checked against libpcap's pcap_offline_filter() on the same frames.
 *
 * Usage: bench_filter [EAL args] [-- [--rounds N] [--bursts N]]
 */
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "bench_common.h"
#include "pppoe_filter.h"

#define BURST 32

enum mode { M_BASE, M_JIT, M_INTERP, M_MAX };

static const struct {
	const char *name, *expr;
} filters[] = {
	{"simple", "not (tcp port 25)"},
	{"5-term",
	 "tcp dst port 80 or tcp dst port 443 or udp port 53 or icmp or src net 10.0.0.0/8"},
	{"tcp flags", "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0"},
};

static struct rte_mbuf *pkts[BURST];
static unsigned int n_bursts = 100000;
static volatile uint64_t sink;

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One frame: IPv4 or IPv6, proto with ports or an ICMP type, len bytes. */
static void
frame(uint8_t *f, uint16_t len, bool v6, uint8_t proto, uint16_t sport, uint16_t dport,
      uint8_t tcp_flags)
{
	uint8_t *ip = f + 14, *l4;

	memset(f, 0, len);
	memcpy(f, (const uint8_t[]){0x02, 0xac, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 0x0a}, 12);
	put16(f + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)(len - 54));
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0x20; /* 2001:db8:1:2::100 -> 2001:db8:ff::7 */
		ip[9] = 0x01;
		ip[10] = 0x0d;
		ip[11] = 0xb8;
		ip[15] = 2;
		ip[22] = 1;
		memcpy(ip + 24, ip + 8, 4);
		ip[29] = 0xff;
		ip[39] = 7;
		l4 = ip + 40;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(len - 14));
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = proto;
		memcpy(ip + 12, (const uint8_t[]){100, 64, 0, 2, 198, 51, 100, 7}, 8);
		l4 = ip + 20;
	}
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		put16(l4, sport);
		put16(l4 + 2, dport);
	}
	if (proto == IPPROTO_TCP) {
		l4[12] = 0x50;
		l4[13] = tcp_flags;
	}
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		l4[0] = proto == IPPROTO_ICMP ? 8 : 128;
}

static void
burst_make(struct rte_mempool *mp)
{
	static const struct {
		uint16_t len;
		bool v6;
		uint8_t proto;
		uint16_t sport, dport;
		uint8_t flags;
	} mix[8] = {
		{64, false, IPPROTO_TCP, 40000, 80, 0x02},
		{1514, false, IPPROTO_TCP, 443, 40001, 0x10},
		{64, false, IPPROTO_TCP, 40002, 25, 0x10},
		{90, false, IPPROTO_UDP, 53000, 53, 0},
		{86, true, IPPROTO_TCP, 40003, 443, 0x10},
		{1514, true, IPPROTO_UDP, 5000, 5001, 0},
		{98, false, IPPROTO_ICMP, 0, 0, 0},
		{90, false, IPPROTO_UDP, 123, 123, 0},
	};
	unsigned int i;

	for (i = 0; i < BURST; i++) {
		const typeof(mix[0]) *x = &mix[i % RTE_DIM(mix)];
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		if (m == NULL)
			rte_panic("no mbuf\n");
		frame((uint8_t *)rte_pktmbuf_append(m, x->len), x->len, x->v6, x->proto,
		      (uint16_t)(x->sport + i / RTE_DIM(mix)), x->dport, x->flags);
		pkts[i] = m;
	}
}

/* One run of n_bursts bursts; TSC cycles. *matches: frames matched in one
 * burst. Each frame's filter is read from fsel[], as the data path reads
 * it from the frame's session: the NULL test stays in the loop. */
static __rte_noinline uint64_t
run(const struct pppoe_filter *f, enum mode mode, unsigned int *matches)
{
	static const struct pppoe_filter *fsel[BURST];
	uint64_t t0, n = 0;
	unsigned int b, i;

	for (i = 0; i < BURST; i++)
		fsel[i] = mode == M_BASE ? NULL : f;
	t0 = rte_rdtsc_precise();
	for (b = 0; b < n_bursts; b++) {
		if (mode == M_INTERP)
			for (i = 0; i < BURST; i++)
				n += pppoe_filter_match_interp(fsel[i], pkts[i]);
		else
			for (i = 0; i < BURST; i++)
				n += pppoe_filter_match(fsel[i], pkts[i]);
	}
	t0 = rte_rdtsc_precise() - t0;
	sink += n;
	*matches = (unsigned int)(n / n_bursts);
	return t0;
}

/* libpcap's count of matches in the burst */
static unsigned int
pcap_count(const char *expr)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program prog;
	unsigned int i, n = 0;

	if (p == NULL || pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) != 0)
		rte_panic("libpcap refuses %s\n", expr);
	for (i = 0; i < BURST; i++) {
		struct pcap_pkthdr h = {.caplen = pkts[i]->pkt_len, .len = pkts[i]->pkt_len};

		n += pcap_offline_filter(&prog, &h, rte_pktmbuf_mtod(pkts[i], const u_char *)) != 0;
	}
	pcap_freecode(&prog);
	pcap_close(p);
	return n;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"bursts", required_argument, NULL, 'b'},
		{NULL, 0, NULL, 0},
	};
	double ns_per_pkt, *t[M_MAX], med[M_MAX];
	unsigned int rounds = 21, i, k, j, matches, want;
	struct rte_mempool *mp;
	uint64_t bad = 0;
	int ret, opt;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "bench_filter: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': n_bursts = (unsigned int)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr,
				"usage: bench_filter [EAL args] -- [--rounds N] [--bursts N]\n");
			return 2;
		}
	}
	if (rounds == 0 || n_bursts == 0) {
		fprintf(stderr, "bench_filter: --rounds and --bursts must be >= 1\n");
		return 2;
	}
	mp = rte_pktmbuf_pool_create("bench_filter", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     SOCKET_ID_ANY);
	for (i = 0; i < M_MAX; i++)
		t[i] = calloc(rounds, sizeof(double));
	if (mp == NULL || t[0] == NULL || t[1] == NULL || t[2] == NULL)
		return 1;
	burst_make(mp);
	ns_per_pkt = 1e9 / (double)rte_get_tsc_hz() / ((double)n_bursts * BURST);

	printf("PPPoE filters, bursts of %d frames (64-1514 bytes, IPv4/IPv6), %u bursts per "
	       "run, median of %u rounds (ABC/CBA), TSC %.2f GHz\n",
	       BURST, n_bursts, rounds, (double)rte_get_tsc_hz() / 1e9);
	for (k = 0; k < RTE_DIM(filters); k++)
		printf("  %-10s %s (libpcap: %u of %d frames match)\n", filters[k].name,
		       filters[k].expr, pcap_count(filters[k].expr), BURST);
	printf("%-10s %5s %8s %8s %9s %8s %10s %7s %7s\n", "filter", "eBPF", "base ns", "JIT ns",
	       "interp ns", "JIT +ns", "interp +ns", "JIT/b", "int/JIT");
	for (k = 0; k < RTE_DIM(filters); k++) {
		char err[256];
		struct pppoe_filter *f =
			pppoe_filter_compile(filters[k].expr, SOCKET_ID_ANY, err, sizeof(err));

		if (f == NULL) {
			fprintf(stderr, "bench_filter: \"%s\": %s\n", filters[k].expr, err);
			return 1;
		}
		if (!pppoe_filter_jit(f))
			printf("note: no JIT here, the JIT column is the interpreter too\n");
		want = pcap_count(filters[k].expr);
		for (i = 0; i < M_MAX; i++) { /* warm-up, and the verdicts */
			run(f, (enum mode)i, &matches);
			bad += matches != (i == M_BASE ? (unsigned int)BURST : want);
		}
		for (j = 0; j < rounds; j++)
			for (i = 0; i < M_MAX; i++) {
				enum mode m = (enum mode)(j & 1 ? M_MAX - 1 - i : i);

				t[m][j] = (double)run(f, m, &matches) * ns_per_pkt;
			}
		for (i = 0; i < M_MAX; i++)
			med[i] = median(t[i], rounds);
		printf("%-10s %5u %8.2f %8.2f %9.2f %8.2f %10.2f %7.1f %7.1f\n", filters[k].name,
		       f->nb_ins, med[M_BASE], med[M_JIT], med[M_INTERP], med[M_JIT] - med[M_BASE],
		       med[M_INTERP] - med[M_BASE], med[M_JIT] / med[M_BASE],
		       (med[M_INTERP] - med[M_BASE]) / (med[M_JIT] - med[M_BASE]));
		pppoe_filter_free(f);
	}
	printf("ns per frame; +ns = filter - baseline (medians); JIT/b = JIT / baseline; int/JIT "
	       "= interpreter +ns / JIT +ns\n");
	if (bad != 0)
		printf("warning: %" PRIu64 " runs matched a count other than libpcap's\n", bad);
	for (i = 0; i < BURST; i++)
		rte_pktmbuf_free(pkts[i]);
	for (i = 0; i < M_MAX; i++)
		free(t[i]);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return bad != 0;
}
