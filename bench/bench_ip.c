/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cost of IP routing (lib/ip) with Internet-sized tables, on one core.
 *
 * Load: a routed port (192.0.2.1/24, 2001:db8:ffff::1/64), 8 gateways of
 * each family with static neighbours, then 1,000,000 random IPv4 prefixes
 * and 200,000 IPv6 prefixes through egw_ip_route_add() (via the gateways,
 * some ECMP), in a random order. Printed: load time and rate per family,
 * prefixes refused, egw_ip_mem() and the rte_malloc heap in use before and
 * after.
 *  - IPv4 lengths as in a real table: 60% /24, 10% /22-/23, 25% /16-/21,
 *    5% /25-/32; addresses uniform over the unicast space, except that the
 *    prefixes longer than /24 share a few thousand /24s (customer /29-/30s,
 *    loopback /32s inside an operator's blocks), as each /24 holding one
 *    takes a DIR24_8 tbl8 group.
 *  - IPv6 mostly /32../48 (45% /48, 14% /32, 8% /44, 7% /40, 5% /29, ...):
 *    allocations (/32 bases) inside the RIR blocks, more-specifics inside
 *    the allocations, provider-independent /48s inside a few pools.
 *  - ECMP: 100,000 IPv4 and 20,000 IPv6 routes through 2 or 4 gateways
 *    (routes with the same paths share one group in lib/ip).
 *  - Prefixes the FIB refuses are counted and left out (DPDK's TRIE
 *    reserves up to three tbl8 groups per prefix longer than /24: tbl8_6 is
 *    sized for that, with 4-byte entries past 32,767 groups). The
 *    destinations are drawn from the prefixes that loaded.
 *
 * Forwarding, per round, one pass over a working set of frames (bursts of
 * 32, one TSC pair around the pass), five loops measured in the same
 * rounds, in rotating order:
 *  - io: read one cache line of each frame and re-point the burst into a TX
 *    array, as an io engine would (the floor);
 *  - classify: egw_eth_classify_burst() alone (the baseline);
 *  - routed: as the gateway does it: egw_ip_prefetch_burst() on the next
 *    burst (not classified yet), then classify + egw_ip_fwd_burst() of this
 *    one with EGW_IP_F_PREFETCHED (checks, bulk FIB lookup, next hop, TTL
 *    and checksum, MAC rewrite), then what a worker does with the result:
 *    zero its counts (the frames are reused, not freed) and report
 *    quiescent to the RCU variable;
 *  - alone: the same without the burst ahead (egw_ip_fwd_burst()'s own
 *    prefetch pass: a caller that does not hold a burst);
 *  - ttl: classify, then egw_ip_ttl_burst() (header checks, TTL or hop
 *    limit and the IPv4 checksum update: the step a routed packet takes
 *    before the ESP outbound stage encapsulates it), the same zeroing.
 * "added" is routed - classify per round, then the median (and ttl -
 * classify for the TTL step). Between rounds,
 * outside the timed region, every frame is rebuilt from a template (MAC
 * header, TTL, checksum) with a new destination and UDP source port: the
 * destinations are drawn from the loaded prefixes (a random address inside
 * a random prefix) and walk a list of --dests addresses (default 2^20), so
 * the FIB is not hot in cache unless --dests is small.
 * Before the timed rounds one routed pass of each family is checked: every
 * frame out, with the MAC of a gateway of its route as the control path's
 * own lookup (egw_ip_route_lookup(), the RIB) finds it, TTL 63, IPv4
 * checksum right.
 * Target: routing adds at most 15 ns/packet to classification with a
 * million IPv4 prefixes (PASS or MISS printed; exit status 0 either way).
 *
 * Frames: UDP/IPv4 of 60 bytes (64 with the FCS), UDP/IPv6 of 64 bytes (the
 * smallest UDP/IPv6 frame is 62); IPv4 header checksum verified in software
 * unless --rx-cksum-good (a NIC's RTE_MBUF_F_RX_IP_CKSUM_GOOD).
 *
 * EAL: with 2 MiB hugepages when enough are free, else --no-huge is added.
 *
 * Usage: bench_ip [EAL args] [-- [--rounds N] [--frames N] [--dests N]
 *                 [--routes4 N] [--routes6 N] [--ecmp4 N] [--ecmp6 N]
 *                 [--max-routes4 N] [--max-routes6 N] [--tbl8-4 N] [--tbl8-6 N]
 *                 [--long-blocks N] [--rx-cksum-good] [--seed N]]
 *   defaults: 101 rounds, 4096 frames, 2^20 destinations, 1,000,000 and
 *   200,000 prefixes of which 100,000 and 20,000 ECMP, max_routes 1,100,000
 *   and 250,000, tbl8 16,384 and 400,000, long IPv4 prefixes in 12,000 /24s
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_udp.h>

#include "bench_common.h"
#include "egw_eth.h"
#include "egw_ip.h"

#define BURST 32
#define PORT 0
#define NB_GW 8
#define FRAME4_LEN 60 /* 64 on the wire with the FCS */
#define FRAME6_LEN 64 /* 14 + 40 + 8 + 2 */
#define TARGET_ADDED_NS 15.0
/* EAL memory, MiB: the two FIBs take about 630 MiB at these sizes, most
 * of it the IPv4 RIB (rte_fib_create() makes 2 nodes per route, 192 bytes
 * each with the mempool's header and padding); with hugepages it is taken
 * as needed, with --no-huge reserved up front */
#define NEED_MB 768
#define NOHUGE_MB 1024

static const struct rte_ether_addr port_mac = {{0x02, 0x00, 0x00, 0x00, 0x01, 0x00}};
static const struct rte_ether_addr peer_mac = {{0x02, 0x00, 0x00, 0x00, 0x99, 0x01}};

/* A prefix of either family; IPv4 in a[0..3], network order. */
struct pfx {
	uint8_t a[16];
	uint8_t len;
	uint8_t npaths; /* 1, 2 or 4 */
	uint8_t gw;     /* first gateway */
	uint8_t loaded;
};

struct table {
	bool v6;
	struct pfx *p;
	uint32_t n;
	uint32_t *set; /* open addressing: index + 1, 0 free */
	uint32_t set_mask;
};

/* A working set of frames and the destinations they walk. */
struct wset {
	bool v6;
	struct rte_mbuf **m;
	unsigned int n;
	uint8_t (*dst)[16];
	uint32_t n_dst, pos;
	uint8_t tmpl[FRAME6_LEN];
	uint16_t len;
};

enum mode { M_IO, M_CLS, M_FWD, M_TTL, M_ALONE, M_MAX };

static struct egw_eth_port eth_port;
static struct egw_ip_ctx *ctx;
static struct rte_rcu_qsbr *qs;
static struct egw_ip_res res;
static uint64_t ol_rx; /* ol_flags of a received frame */
static uint64_t bad, bad_drop[EGW_IP_DROP_MAX];
static volatile uint64_t sink;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng64(void)
{
	/* xorshift64*: fixed seed, the same tables every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t
rng32(void)
{
	return (uint32_t)(rng64() >> 32);
}

static uint32_t
rng_max(uint32_t n)
{
	return (uint32_t)(((rng64() >> 32) * n) >> 32);
}

static void
tx_discard(uint16_t port, struct rte_mbuf *m, void *arg)
{
	RTE_SET_USED(port);
	RTE_SET_USED(arg);
	rte_pktmbuf_free(m);
}

/* ---- prefixes ------------------------------------------------------------- */

static uint64_t
mix64(uint64_t x)
{
	/* splitmix64's finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t
pfx_hash(const uint8_t a[16], uint8_t len)
{
	uint64_t x, y;

	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	return mix64(x ^ mix64(y ^ len));
}

static void
pfx_mask(uint8_t a[16], unsigned int len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		a[i] &= len > 8 * i ? (uint8_t)(0xff00 >> (len - 8 * i)) : 0;
	}
}

/* Random bits from bit 'from' on (from the top) to the end. */
static void
rand_bits(uint8_t a[16], unsigned int from)
{
	uint8_t r[16];
	unsigned int i;
	uint64_t x = rng64(), y = rng64();

	memcpy(r, &x, 8);
	memcpy(r + 8, &y, 8);
	for (i = 0; i < 16; i++) {
		uint8_t keep;

		if (from >= 8 * (i + 1))
			continue;
		keep = from > 8 * i ? (uint8_t)(0xff00 >> (from - 8 * i)) : 0;
		a[i] = (uint8_t)((a[i] & keep) | (r[i] & ~keep));
	}
}

static int
table_init(struct table *t, uint32_t n, bool v6)
{
	uint32_t sz = 1;

	while (sz < 2 * n)
		sz <<= 1;
	t->v6 = v6;
	t->n = 0;
	t->p = calloc(n, sizeof(*t->p));
	t->set = calloc(sz, sizeof(*t->set));
	t->set_mask = sz - 1;
	return t->p == NULL || t->set == NULL ? -1 : 0;
}

/* The duplicate check is done: keep the prefixes only. */
static void
table_free_set(struct table *t)
{
	free(t->set);
	t->set = NULL;
}

/* Add a prefix unless the table has it: 0 added, -1 duplicate. */
static int
table_add(struct table *t, uint8_t a[16], uint8_t len)
{
	uint32_t h;

	pfx_mask(a, len);
	for (h = (uint32_t)pfx_hash(a, len) & t->set_mask; t->set[h] != 0;
	     h = (h + 1) & t->set_mask) {
		const struct pfx *q = &t->p[t->set[h] - 1];

		if (q->len == len && memcmp(q->a, a, 16) == 0)
			return -1;
	}
	memcpy(t->p[t->n].a, a, 16);
	t->p[t->n].len = len;
	t->set[h] = ++t->n;
	return 0;
}

struct len_w {
	uint8_t len;
	uint16_t w; /* per 10,000 */
};

static uint8_t
pick_len(const struct len_w *lw, unsigned int n)
{
	uint32_t w = rng_max(10000);
	unsigned int i;

	for (i = 0; i < n - 1 && w >= lw[i].w; i++)
		w -= lw[i].w;
	return lw[i].len;
}

static bool
in_v4_net(const uint8_t a[16])
{
	return a[0] == 192 && a[1] == 0 && a[2] == 2; /* 192.0.2.0/24, the port's */
}

static bool
in_v6_net(const uint8_t a[16])
{
	return a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8; /* 2001:db8::/32 */
}

static void
rand_unicast4(uint8_t a[16])
{
	memset(a, 0, 16);
	do {
		uint32_t x = rng32();

		memcpy(a, &x, 4);
	} while (a[0] == 0 || a[0] == 127 || a[0] >= 224 || in_v4_net(a));
}

static void
gen4(struct table *t, uint32_t n, uint32_t long_blocks)
{
	static const struct len_w lw[] = {
		{16, 300}, {17, 200}, {18, 300},  {19, 500}, {20, 600}, {21, 600},
		{22, 500}, {23, 500}, {24, 6000}, {25, 50},  {26, 50},  {27, 50},
		{28, 50},  {29, 100}, {30, 100},  {31, 20},  {32, 80},
	};
	uint32_t *blk = malloc(sizeof(*blk) * long_blocks), i;
	uint8_t a[16];

	if (blk == NULL)
		rte_panic("no memory\n");
	for (i = 0; i < long_blocks; i++) {
		rand_unicast4(a);
		memcpy(&blk[i], a, 4);
	}
	while (t->n < n) {
		uint8_t len = pick_len(lw, RTE_DIM(lw));

		if (len > 24) {
			memset(a, 0, 16);
			memcpy(a, &blk[rng_max(long_blocks)], 4);
			rand_bits(a, 24);
			memset(a + 4, 0, 12);
		} else {
			rand_unicast4(a);
		}
		table_add(t, a, len);
	}
	free(blk);
}

static void
gen6(struct table *t, uint32_t n)
{
	static const struct len_w lw[] = {
		{20, 20},   {22, 20},  {24, 40},   {28, 120}, {29, 500}, {30, 50},  {31, 50},
		{32, 1400}, {33, 100}, {34, 100},  {35, 100}, {36, 400}, {37, 100}, {38, 100},
		{39, 100},  {40, 700}, {41, 100},  {42, 100}, {43, 100}, {44, 800}, {45, 100},
		{46, 200},  {47, 100}, {48, 4400}, {56, 100}, {64, 100},
	};
	/* RIR blocks: 2a00::/12 (RIPE), 2400::/12 (APNIC), 2600::/12 (ARIN),
	 * 2001::/16, 2800::/12 (LACNIC), 2c00::/12 (AFRINIC), weight in % */
	static const struct {
		uint8_t a0, a1, len, w;
	} rir[] = {
		{0x2a, 0x00, 12, 35}, {0x24, 0x00, 12, 25}, {0x26, 0x00, 12, 20},
		{0x20, 0x01, 16, 10}, {0x28, 0x00, 12, 8},  {0x2c, 0x00, 12, 2},
	};
	uint32_t n_alloc = RTE_MAX(n / 5, 16u), n_pi = 16, i, k;
	uint8_t(*alloc)[16] = malloc(16 * (size_t)(n_alloc + n_pi)), (*pi)[16], a[16];

	if (alloc == NULL)
		rte_panic("no memory\n");
	pi = alloc + n_alloc;
	for (i = 0; i < n_alloc + n_pi; i++) {
		uint32_t w = rng_max(100);

		for (k = 0; k < RTE_DIM(rir) - 1 && w >= rir[k].w; k++)
			w -= rir[k].w;
		do {
			memset(alloc[i], 0, 16);
			alloc[i][0] = rir[k].a0;
			alloc[i][1] = rir[k].a1;
			rand_bits(alloc[i], rir[k].len);
			pfx_mask(alloc[i], i < n_alloc ? 32 : 28); /* PI pools: /28 */
		} while (in_v6_net(alloc[i]));
	}
	while (t->n < n) {
		uint8_t len = pick_len(lw, RTE_DIM(lw));

		if (len <= 28) {
			k = rng_max(RTE_DIM(rir));
			memset(a, 0, 16);
			a[0] = rir[k].a0;
			a[1] = rir[k].a1;
			rand_bits(a, rir[k].len);
			if (in_v6_net(a))
				continue;
		} else if (len == 48 && rng_max(4) == 0) {
			/* provider-independent /48 */
			memcpy(a, pi[rng_max(n_pi)], 16);
			rand_bits(a, 28);
		} else {
			memcpy(a, alloc[rng_max(n_alloc)], 16);
			if (len > 32)
				rand_bits(a, 32);
		}
		table_add(t, a, len);
	}
	free(alloc);
}

/* Random load order; the first n_ecmp go through 2 or 4 gateways. */
static void
table_shuffle(struct table *t, uint32_t n_ecmp)
{
	uint32_t i, j;
	struct pfx x;

	for (i = t->n - 1; i > 0; i--) {
		j = rng_max(i + 1);
		x = t->p[i];
		t->p[i] = t->p[j];
		t->p[j] = x;
	}
	for (i = 0; i < t->n; i++) {
		t->p[i].npaths = i < n_ecmp ? (i & 1 ? 4 : 2) : 1;
		t->p[i].gw = (uint8_t)rng_max(NB_GW);
	}
}

static void
gw_addr(bool v6, unsigned int i, struct egw_ip_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (!v6) {
		a->family = AF_INET;
		a->a[0] = 192;
		a->a[1] = 0;
		a->a[2] = 2;
		a->a[3] = (uint8_t)(11 + i % NB_GW);
	} else {
		static const uint8_t net[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff};

		a->family = AF_INET6;
		memcpy(a->a, net, 16);
		a->a[15] = (uint8_t)(0x11 + i % NB_GW);
	}
}

static void
gw_mac(bool v6, unsigned int i, struct rte_ether_addr *m)
{
	*m = (struct rte_ether_addr){{0x02, 0x00, 0x00, 0x00, v6 ? 0x06 : 0x04, (uint8_t)i}};
}

struct load_stats {
	uint32_t ok, nospc, other, first_refused;
	double secs, secs_ok; /* all; up to the first refusal */
	int other_rc;
	char other_err[160];
};

static struct load_stats
table_load(struct table *t)
{
	struct load_stats s = {.first_refused = UINT32_MAX};
	struct egw_ip_path paths[4];
	struct egw_ip_addr pfx;
	uint64_t t0, t_ref = 0, t1;
	char err[160];
	uint32_t i, k;
	int rc;

	memset(&pfx, 0, sizeof(pfx));
	memset(paths, 0, sizeof(paths));
	pfx.family = t->v6 ? AF_INET6 : AF_INET;
	t0 = rte_rdtsc();
	for (i = 0; i < t->n; i++) {
		struct pfx *p = &t->p[i];

		memcpy(pfx.a, p->a, 16);
		for (k = 0; k < p->npaths; k++) {
			gw_addr(t->v6, p->gw + k, &paths[k].gw);
			/* the port named: with UINT16_MAX (the connected network's)
			 * lib/ip refuses a gateway that has a neighbour entry, as
			 * its /32 or /128 host route is found first (ctl.c
			 * path_resolve()) */
			paths[k].port = PORT;
		}
		rc = egw_ip_route_add(&pfx, p->len, EGW_IP_RT_VIA, paths, p->npaths, err,
				      sizeof(err));
		if (rc == 0) {
			p->loaded = 1;
			s.ok++;
			continue;
		}
		if (s.first_refused == UINT32_MAX) {
			s.first_refused = i;
			t_ref = rte_rdtsc();
		}
		if (rc == -ENOSPC) {
			s.nospc++;
		} else if (s.other++ == 0) {
			s.other_rc = rc;
			snprintf(s.other_err, sizeof(s.other_err), "%s", err);
		}
	}
	t1 = rte_rdtsc();
	s.secs = (double)(t1 - t0) / (double)rte_get_tsc_hz();
	s.secs_ok = (double)((t_ref ? t_ref : t1) - t0) / (double)rte_get_tsc_hz();
	return s;
}

/* ---- frames --------------------------------------------------------------- */

static void
templates(struct wset *w4, struct wset *w6)
{
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip4;
	struct rte_ipv6_hdr *ip6;
	struct rte_udp_hdr *udp;
	static const uint8_t src6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 0x64};

	memset(w4->tmpl, 0, sizeof(w4->tmpl));
	eh = (struct rte_ether_hdr *)w4->tmpl;
	eh->dst_addr = port_mac;
	eh->src_addr = peer_mac;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip4 = (struct rte_ipv4_hdr *)(eh + 1);
	ip4->version_ihl = RTE_IPV4_VHL_DEF;
	ip4->total_length = rte_cpu_to_be_16(FRAME4_LEN - RTE_ETHER_HDR_LEN);
	ip4->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip4->time_to_live = 64;
	ip4->next_proto_id = IPPROTO_UDP;
	ip4->src_addr = RTE_BE32(RTE_IPV4(198, 18, 0, 1));
	udp = (struct rte_udp_hdr *)(ip4 + 1);
	udp->dst_port = RTE_BE16(5001);
	udp->dgram_len = rte_cpu_to_be_16(FRAME4_LEN - RTE_ETHER_HDR_LEN - 20);
	w4->len = FRAME4_LEN;
	w4->v6 = false;

	memset(w6->tmpl, 0, sizeof(w6->tmpl));
	eh = (struct rte_ether_hdr *)w6->tmpl;
	eh->dst_addr = port_mac;
	eh->src_addr = peer_mac;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
	ip6 = (struct rte_ipv6_hdr *)(eh + 1);
	ip6->vtc_flow = RTE_BE32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(FRAME6_LEN - RTE_ETHER_HDR_LEN - 40);
	ip6->proto = IPPROTO_UDP;
	ip6->hop_limits = 64;
	memcpy(ip6->src_addr, src6, 16);
	udp = (struct rte_udp_hdr *)(ip6 + 1);
	udp->dst_port = RTE_BE16(5001);
	udp->dgram_len = ip6->payload_len;
	w6->len = FRAME6_LEN;
	w6->v6 = true;
}

/* Destinations: a random address inside a random loaded prefix, never
 * inside the port's own network (it would need resolution). */
static int
dests_make(struct wset *w, const struct table *t, uint32_t n)
{
	uint32_t *idx = malloc(sizeof(*idx) * t->n), n_loaded = 0, i;

	w->dst = malloc(16 * (size_t)n);
	if (idx == NULL || w->dst == NULL)
		return -1;
	for (i = 0; i < t->n; i++)
		if (t->p[i].loaded)
			idx[n_loaded++] = i;
	if (n_loaded == 0) {
		free(idx);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct pfx *p;

		do {
			p = &t->p[idx[rng_max(n_loaded)]];
			memcpy(w->dst[i], p->a, 16);
			rand_bits(w->dst[i], p->len);
			if (!t->v6)
				memset(w->dst[i] + 4, 0, 12);
		} while (t->v6 ? in_v6_net(w->dst[i]) : in_v4_net(w->dst[i]));
	}
	w->n_dst = n;
	w->pos = 0;
	free(idx);
	return 0;
}

/* Rebuild every frame of the set (outside the timed region). */
static void
restore(struct wset *w)
{
	unsigned int i;

	for (i = 0; i < w->n; i++) {
		struct rte_mbuf *m = w->m[i];
		uint8_t *d;
		rte_be16_t sport = rte_cpu_to_be_16((uint16_t)(1024 + (w->pos & 0x7fff)));
		const uint8_t *a = w->dst[w->pos];

		if (++w->pos == w->n_dst)
			w->pos = 0;
		m->data_off = RTE_PKTMBUF_HEADROOM;
		m->data_len = m->pkt_len = w->len;
		m->port = PORT;
		m->ol_flags = ol_rx;
		d = rte_pktmbuf_mtod(m, uint8_t *);
		memcpy(d, w->tmpl, w->len);
		if (!w->v6) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(d + RTE_ETHER_HDR_LEN);

			memcpy(&ip->dst_addr, a, 4);
			memcpy(d + RTE_ETHER_HDR_LEN + 20, &sport, 2);
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		} else {
			/* the UDP checksum is not kept right: routers do not read it */
			memcpy(d + RTE_ETHER_HDR_LEN + 24, a, 16);
			memcpy(d + RTE_ETHER_HDR_LEN + 40, &sport, 2);
		}
	}
}

/* ---- the timed loops ------------------------------------------------------ */

/* io: read one cache line of each frame, re-point the burst into a TX array. */
static __rte_noinline uint64_t
io_burst(struct rte_mbuf *pkts[], uint16_t n, struct rte_mbuf *tx[], uint16_t tx_port[])
{
	uint64_t sum = 0, x;
	uint16_t i;

	for (i = 0; i < n; i++) {
		if (i + 3 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 3], void *));
		memcpy(&x, rte_pktmbuf_mtod(pkts[i], void *), 8);
		sum += x;
		tx[i] = pkts[i];
		tx_port[i] = pkts[i]->port;
	}
	return sum;
}

static __rte_noinline void
fwd_bad(uint16_t n)
{
	unsigned int r;

	bad += (uint64_t)(n - res.n_out);
	for (r = 0; r < EGW_IP_DROP_MAX; r++)
		bad_drop[r] += res.drop[r];
}

/* One pass over the set in one mode; TSC cycles. */
static __rte_always_inline uint64_t
run(struct wset *w, const enum mode mode)
{
	struct rte_mbuf *tx[BURST];
	uint16_t tx_port[BURST], kept[BURST];
	uint64_t t0, sum = 0;
	unsigned int i;
	uint16_t n;

	t0 = rte_rdtsc_precise();
	/* the gateway prefetches a burst when it receives it and routes it at
	 * the queue's next poll: the first burst's prefetch is the poll before */
	if (mode == M_FWD)
		egw_ip_prefetch_burst(w->m, BURST);
	for (i = 0; i + BURST <= w->n; i += BURST) {
		struct rte_mbuf **b = w->m + i;

		if (mode == M_FWD && i + 2 * BURST <= w->n)
			egw_ip_prefetch_burst(b + BURST, BURST);
		if (mode == M_IO) {
			sum += io_burst(b, BURST, tx, tx_port);
			continue;
		}
		n = egw_eth_classify_burst(&eth_port, b, BURST);
		if (mode == M_CLS) {
			sum += n;
			continue;
		}
		if (mode == M_TTL) {
			/* the step packets into a tunnel take (ESP outbound) */
			if (unlikely(egw_ip_ttl_burst(ctx, PORT, b, n, kept, &res) != BURST))
				fwd_bad(BURST);
		} else {
			egw_ip_fwd_burst(ctx, PORT, b, n, w->v6,
					 mode == M_FWD ? EGW_IP_F_PREFETCHED : 0, &res);
			if (unlikely(res.n_out != BURST))
				fwd_bad(BURST);
		}
		/* the frames are the set's own: taken back without a free */
		memset(&res, 0, offsetof(struct egw_ip_res, out));
		rte_rcu_qsbr_quiescent(qs, 0);
	}
	t0 = rte_rdtsc_precise() - t0;
	sink += sum;
	return t0;
}

/* thin wrappers: one body, the mode a constant (style rule 11) */
static __rte_noinline uint64_t
run_io(struct wset *w)
{
	return run(w, M_IO);
}

static __rte_noinline uint64_t
run_cls(struct wset *w)
{
	return run(w, M_CLS);
}

static __rte_noinline uint64_t
run_fwd(struct wset *w)
{
	return run(w, M_FWD);
}

static __rte_noinline uint64_t
run_ttl(struct wset *w)
{
	return run(w, M_TTL);
}

static __rte_noinline uint64_t
run_alone(struct wset *w)
{
	return run(w, M_ALONE);
}

static uint64_t
run_mode(struct wset *w, enum mode m)
{
	return m == M_IO      ? run_io(w)
	       : m == M_CLS   ? run_cls(w)
	       : m == M_FWD   ? run_fwd(w)
	       : m == M_ALONE ? run_alone(w)
			      : run_ttl(w);
}

/* After one routed pass: every frame out of the port with the MAC of one
 * of its route's gateways (the control path's own longest match, through
 * the RIB), TTL one less, IPv4 checksum right. Returns the frames wrong. */
static unsigned int
verify(struct wset *w)
{
	unsigned int i, k, wrong = 0;

	for (i = 0; i < w->n; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(w->m[i], const uint8_t *);
		const uint8_t *l3 = d + RTE_ETHER_HDR_LEN;
		struct egw_ip_route_info ri;
		struct egw_ip_addr a;
		bool mac_ok = false;

		memset(&a, 0, sizeof(a));
		a.family = w->v6 ? AF_INET6 : AF_INET;
		memcpy(a.a, w->v6 ? l3 + 24 : l3 + 16, w->v6 ? 16 : 4);
		if (egw_ip_route_lookup(&a, &ri) == 0)
			for (k = 0; k < ri.n_paths; k++) {
				struct rte_ether_addr m;

				gw_mac(w->v6,
				       ri.paths[k].gw.a[w->v6 ? 15 : 3] - (w->v6 ? 0x11 : 11), &m);
				mac_ok |= memcmp(d, &m, 6) == 0;
			}
		if (!mac_ok || memcmp(d + 6, &port_mac, 6) != 0 || w->m[i]->port != PORT ||
		    (w->v6 ? l3[7] != 63 : l3[8] != 63 || rte_raw_cksum(l3, 20) != 0xffff))
			wrong++;
	}
	return wrong;
}

struct fig {
	double ns[M_MAX], q1[M_MAX], q3[M_MAX], added, added_q1, added_q3;
	double ttl, ttl_q1, ttl_q3;
	double alone, alone_q1, alone_q3;
};

static void
med(double *v, unsigned int n, double *m, double *q1, double *q3)
{
	*m = median(v, n); /* sorts v */
	*q1 = v[n / 4];
	*q3 = v[(3 * n) / 4];
}

static struct fig
measure(struct wset *w, unsigned int rounds)
{
	double *t[M_MAX], *added = calloc(rounds, sizeof(double));
	double *ttl = calloc(rounds, sizeof(double)), *alone = calloc(rounds, sizeof(double));
	double ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();
	double pkts = (double)(w->n / BURST * BURST);
	struct fig f;
	unsigned int r, k, m;

	for (m = 0; m < M_MAX; m++)
		t[m] = calloc(rounds, sizeof(double));
	for (m = 0; m < M_MAX; m++)
		if (t[m] == NULL)
			rte_panic("no memory\n");
	if (added == NULL || ttl == NULL || alone == NULL)
		rte_panic("no memory\n");
	for (m = 0; m < M_MAX; m++) { /* warm-up */
		restore(w);
		run_mode(w, (enum mode)m);
	}
	for (r = 0; r < rounds; r++) {
		/* the loops in turn, rotated and reversed: none always first */
		for (k = 0; k < M_MAX; k++) {
			m = (r % M_MAX + (r / M_MAX % 2 ? M_MAX - k : k)) % M_MAX;
			restore(w);
			t[m][r] = (double)run_mode(w, (enum mode)m) * ns_per_cycle / pkts;
		}
		added[r] = t[M_FWD][r] - t[M_CLS][r];
		ttl[r] = t[M_TTL][r] - t[M_CLS][r];
		alone[r] = t[M_ALONE][r] - t[M_CLS][r];
	}
	for (m = 0; m < M_MAX; m++) {
		med(t[m], rounds, &f.ns[m], &f.q1[m], &f.q3[m]);
		free(t[m]);
	}
	med(added, rounds, &f.added, &f.added_q1, &f.added_q3);
	med(ttl, rounds, &f.ttl, &f.ttl_q1, &f.ttl_q3);
	med(alone, rounds, &f.alone, &f.alone_q1, &f.alone_q3);
	free(added);
	free(ttl);
	free(alone);
	return f;
}

static void
report(const char *fam, const struct fig *f, unsigned int n_pfx, bool target)
{
	printf("%s io (read 1 line, re-point)    %7.2f ns/pkt [%.2f-%.2f]  1.00x io\n", fam,
	       f->ns[M_IO], f->q1[M_IO], f->q3[M_IO]);
	printf("%s classify (lib/eth)            %7.2f ns/pkt [%.2f-%.2f]  %.2fx io\n", fam,
	       f->ns[M_CLS], f->q1[M_CLS], f->q3[M_CLS], f->ns[M_CLS] / f->ns[M_IO]);
	printf("%s routed (classify + fwd)       %7.2f ns/pkt [%.2f-%.2f]  %.2fx classify, "
	       "%.2fx io, %.2f Mpps\n",
	       fam, f->ns[M_FWD], f->q1[M_FWD], f->q3[M_FWD], f->ns[M_FWD] / f->ns[M_CLS],
	       f->ns[M_FWD] / f->ns[M_IO], 1e3 / f->ns[M_FWD]);
	printf("%s routing added (routed - classify) %7.2f ns/pkt [%.2f-%.2f] with %u prefixes",
	       fam, f->added, f->added_q1, f->added_q3, n_pfx);
	if (target)
		printf(" (target <= %.0f): %s", TARGET_ADDED_NS,
		       f->added <= TARGET_ADDED_NS ? "PASS" : "MISS");
	printf("\n");
	printf("%s   the same without the burst ahead %7.2f ns/pkt [%.2f-%.2f] "
	       "(egw_ip_fwd_burst()'s own "
	       "prefetch pass)\n",
	       fam, f->alone, f->alone_q1, f->alone_q3);
	printf("%s TTL step added (ttl - classify) %7.2f ns/pkt [%.2f-%.2f] (egw_ip_ttl_burst(), "
	       "as packets into a tunnel take it)\n",
	       fam, f->ttl, f->ttl_q1, f->ttl_q3);
}

/* ---- set-up --------------------------------------------------------------- */

static size_t
heap_used(void)
{
	struct rte_malloc_socket_stats s;

	if (rte_malloc_get_socket_stats((int)rte_socket_id(), &s) != 0)
		return 0;
	return s.heap_allocsz_bytes;
}

static double
mib(size_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* Free memory in hugepages of the default size, MiB. */
static unsigned long
huge_free_mb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long free_pages = 0, kb = 0, v;
	char line[128];

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %lu", &v) == 1)
			free_pages = v;
		else if (sscanf(line, "Hugepagesize: %lu kB", &v) == 1)
			kb = v;
	}
	fclose(f);
	return free_pages * kb / 1024;
}

/* The EAL arguments, with --no-huge --no-shconf -m NOHUGE_MB added (and
 * --huge-unlink, which EAL refuses with --no-huge, left out) when the free
 * hugepages cannot hold NEED_MB or what -m asks. */
static char **
eal_args(int argc, char **argv, int *nargc)
{
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	unsigned long need = NEED_MB, have;
	int i, k = 0, end = argc;
	bool nohuge = false, has_m = false, fallback;

	if (v == NULL)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			end = i;
			break;
		}
		if (strcmp(argv[i], "--no-huge") == 0)
			nohuge = true;
		if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
			need = RTE_MAX(need, strtoul(argv[i + 1], NULL, 0));
			has_m = true;
		}
	}
	have = huge_free_mb();
	fallback = !nohuge && have < need;
	for (i = 0; i < end; i++)
		if (!fallback || strncmp(argv[i], "--huge-unlink", 13) != 0)
			v[k++] = argv[i];
	if (fallback) {
		printf("bench_ip: %lu MiB of hugepages free, %lu needed: adding --no-huge "
		       "--no-shconf%s (4 KiB pages)\n",
		       have, need, has_m ? "" : " -m " RTE_STR(NOHUGE_MB));
		v[k++] = (char *)(uintptr_t) "--no-huge";
		v[k++] = (char *)(uintptr_t) "--no-shconf";
		if (!has_m) {
			v[k++] = (char *)(uintptr_t) "-m";
			v[k++] = (char *)(uintptr_t)RTE_STR(NOHUGE_MB);
		}
	}
	for (i = end; i < argc; i++)
		v[k++] = argv[i];
	*nargc = k;
	return v;
}

static int
setup_port(void)
{
	struct egw_ip_addr a4 = {.family = AF_INET, .a = {192, 0, 2, 1}};
	struct egw_ip_addr a6 = {.family = AF_INET6,
				 .a = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, [15] = 1}};
	unsigned int i, f;
	int rc;

	rc = egw_ip_port_set(PORT, &port_mac, 1500, EGW_IP_PORT_ROUTED);
	if (rc == 0)
		rc = egw_ip_addr_add(PORT, 0, &a4, 24);
	if (rc == 0)
		rc = egw_ip_addr_add(PORT, 0, &a6, 64);
	for (f = 0; f < 2 && rc == 0; f++)
		for (i = 0; i < NB_GW && rc == 0; i++) {
			struct egw_ip_addr g;
			struct rte_ether_addr m;

			gw_addr(f == 1, i, &g);
			gw_mac(f == 1, i, &m);
			rc = egw_ip_neigh_add(PORT, 0, &g, &m);
		}
	if (rc != 0)
		fprintf(stderr, "bench_ip: port, address or neighbour set-up: %s\n", strerror(-rc));
	return rc;
}

static void
print_load(const char *fam, const struct table *t, const struct load_stats *s)
{
	printf("%s load: %u of %u prefixes in %.2f s, %.0f routes/s", fam, s->ok, t->n, s->secs,
	       s->secs > 0 ? (double)t->n / s->secs : 0.0);
	if (s->first_refused != UINT32_MAX)
		printf("; first refusal at prefix %u (%.0f routes/s up to it); refused: %u "
		       "-ENOSPC, %u other",
		       s->first_refused,
		       s->secs_ok > 0 ? (double)s->first_refused / s->secs_ok : 0.0, s->nospc,
		       s->other);
	printf("\n");
	if (s->other != 0)
		printf("%s load: first other refusal: %s (%s)\n", fam, strerror(-s->other_rc),
		       s->other_err);
}

static void
len_hist(const char *fam, const struct table *t)
{
	unsigned int cnt[129] = {0}, lcnt[129] = {0}, i;

	for (i = 0; i < t->n; i++) {
		cnt[t->p[i].len]++;
		lcnt[t->p[i].len] += t->p[i].loaded;
	}
	printf("%s lengths (generated/loaded):", fam);
	for (i = 0; i <= 128; i++)
		if (cnt[i] != 0)
			printf(" /%u %u/%u", i, cnt[i], lcnt[i]);
	printf("\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'},
		{"frames", required_argument, NULL, 'f'},
		{"dests", required_argument, NULL, 'd'},
		{"routes4", required_argument, NULL, '4'},
		{"routes6", required_argument, NULL, '6'},
		{"ecmp4", required_argument, NULL, 'e'},
		{"ecmp6", required_argument, NULL, 'E'},
		{"tbl8-4", required_argument, NULL, 't'},
		{"tbl8-6", required_argument, NULL, 'T'},
		{"long-blocks", required_argument, NULL, 'b'},
		{"rx-cksum-good", no_argument, NULL, 'c'},
		{"max-routes4", required_argument, NULL, 'm'},
		{"max-routes6", required_argument, NULL, 'M'},
		{"seed", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	unsigned int rounds = 101, n_frames = 4096, n_dests = 1u << 20;
	uint32_t n4 = 1000000, n6 = 200000, ecmp4 = 100000, ecmp6 = 20000, long_blocks = 12000;
	uint32_t tbl8_4 = 16384, tbl8_6 = 400000, max4 = 1100000, max6 = 250000;
	uint64_t seed = rng_state;
	struct table t4, t6;
	struct wset w4, w6;
	struct load_stats s4, s6;
	struct egw_ip_params p;
	struct egw_ip_mem im;
	struct rte_mempool *pool, *ctl_pool;
	size_t h0, h1, h2, h3;
	struct fig f4, f6;
	unsigned int wrong;
	char **eargv;
	int eargc, ret, opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	eargv = eal_args(argc, argv, &eargc);
	if (eargv == NULL)
		return 1;
	ret = rte_eal_init(eargc, eargv);
	if (ret < 0) {
		fprintf(stderr, "bench_ip: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc = eargc - ret;
	argv = eargv + ret;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': rounds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': n_frames = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'd': n_dests = (unsigned int)strtoul(optarg, NULL, 0); break;
		case '4': n4 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case '6': n6 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'e': ecmp4 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'E': ecmp6 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': tbl8_4 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'T': tbl8_6 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'b': long_blocks = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': ol_rx = RTE_MBUF_F_RX_IP_CKSUM_GOOD; break;
		case 'm': max4 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'M': max6 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: bench_ip [EAL args] -- [--rounds N] [--frames N] "
					"[--dests N] [--routes4 N] [--routes6 N] [--ecmp4 N] "
					"[--ecmp6 N] [--tbl8-4 N] [--tbl8-6 N] [--long-blocks N] "
					"[--max-routes4 N] [--max-routes6 N] "
					"[--rx-cksum-good] [--seed N]\n");
			ret = 2;
			goto out;
		}
	}
	n_frames = RTE_ALIGN_FLOOR(n_frames, BURST);
	if (rounds < 4 || n_frames == 0 || n_dests == 0 || n4 == 0 || n6 == 0 || long_blocks == 0) {
		fprintf(stderr, "bench_ip: --rounds >= 4, --frames >= %d, other counts >= 1\n",
			BURST);
		ret = 2;
		goto out;
	}

	/* the tables (not timed) */
	if (table_init(&t4, n4, false) != 0 || table_init(&t6, n6, true) != 0)
		rte_panic("no memory for the prefixes\n");
	/* a seed per table: the IPv6 table does not change with --routes4 */
	rng_state = mix64(seed) | 1;
	gen4(&t4, n4, long_blocks);
	rng_state = mix64(seed + 6) | 1;
	gen6(&t6, n6);
	table_shuffle(&t4, ecmp4);
	table_shuffle(&t6, ecmp6);
	table_free_set(&t4);
	table_free_set(&t6);

	if (egw_eth_init() != 0)
		goto fail;
	eth_port.mac = port_mac;
	pool = rte_pktmbuf_pool_create("bench_ip", n_frames + 512, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	ctl_pool = rte_pktmbuf_pool_create("bench_ip_ctl", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   (int)rte_socket_id());
	qs = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	w4.m = calloc(n_frames, sizeof(*w4.m));
	if (pool == NULL || ctl_pool == NULL || qs == NULL || w4.m == NULL ||
	    rte_rcu_qsbr_init(qs, 1) != 0 || rte_pktmbuf_alloc_bulk(pool, w4.m, n_frames) != 0) {
		fprintf(stderr, "bench_ip: mbufs or RCU: %s\n", rte_strerror(rte_errno));
		goto fail;
	}
	/* the one worker: a reader of the QSBR variable, offline while the
	 * tables load (grace periods then end at once) */
	rte_rcu_qsbr_thread_register(qs, 0);

	h0 = heap_used();
	memset(&p, 0, sizeof(p));
	p.qsbr = qs;
	p.pool = ctl_pool;
	p.nb_ctx = 1;
	p.socket = (int)rte_socket_id();
	p.max_routes4 = max4;
	p.max_routes6 = max6;
	p.tbl8_4 = tbl8_4;
	p.tbl8_6 = tbl8_6;
	p.tx = tx_discard;
	ret = egw_ip_init(&p);
	if (ret != 0) {
		fprintf(stderr,
			"bench_ip: egw_ip_init (max_routes4 %u, tbl8_4 %u, max_routes6 %u, "
			"tbl8_6 %u): %s\n",
			p.max_routes4, p.tbl8_4, p.max_routes6, p.tbl8_6, strerror(-ret));
		goto fail;
	}
	h1 = heap_used();
	ctx = egw_ip_ctx_create(0, ctl_pool);
	if (ctx == NULL || setup_port() != 0)
		goto fail;

	printf("bench_ip: lcore %u, TSC %.2f GHz, %s pages, egw_ip_init max_routes4 %u "
	       "tbl8_4 %u, max_routes6 %u tbl8_6 %u\n",
	       rte_lcore_id(), (double)rte_get_tsc_hz() / 1e9,
	       rte_eal_has_hugepages() ? "2 MiB huge" : "4 KiB (--no-huge)", p.max_routes4,
	       p.tbl8_4, p.max_routes6, p.tbl8_6);
	s4 = table_load(&t4);
	h2 = heap_used();
	print_load("ipv4", &t4, &s4);
	len_hist("ipv4", &t4);
	s6 = table_load(&t6);
	h3 = heap_used();
	print_load("ipv6", &t6, &s6);
	len_hist("ipv6", &t6);
	egw_ip_mem(&im);
	printf("egw_ip_mem: routes4 %u, routes6 %u, next hops %u; fib4 %.1f MiB, fib6 %.1f MiB, "
	       "next-hop table %.2f MiB; IPv4 prefetch of %s; IPv6 lookup %s\n",
	       im.routes4, im.routes6, im.nh, mib(im.fib4_bytes), mib(im.fib6_bytes),
	       mib(im.nh_bytes),
	       im.fib4_prefetch == 2   ? "both levels"
	       : im.fib4_prefetch == 1 ? "the first level"
				       : "nothing",
	       im.fib6_avx512 ? "AVX-512" : "scalar");
	printf("rte_malloc heap in use: before egw_ip_init %.1f MiB, after %.1f MiB (+%.1f), "
	       "after the IPv4 load %.1f MiB (+%.1f), after the IPv6 load %.1f MiB (+%.1f)\n",
	       mib(h0), mib(h1), mib(h1 - h0), mib(h2), mib(h2 - h1), mib(h3), mib(h3 - h2));

	/* forwarding */
	templates(&w4, &w6);
	w4.n = w6.n = n_frames;
	w6.m = w4.m; /* one set of mbufs, rebuilt for each family */
	if (dests_make(&w4, &t4, n_dests) != 0 || dests_make(&w6, &t6, n_dests) != 0) {
		fprintf(stderr, "bench_ip: no destinations (nothing loaded?)\n");
		goto fail;
	}
	rte_rcu_qsbr_thread_online(qs, 0);
	printf("forwarding: bursts of %d, %u frames per round (IPv4 %d B, IPv6 %d B), "
	       "%u destinations cycled, IPv4 checksum %s, median [quartiles] of %u rounds\n",
	       BURST, n_frames, FRAME4_LEN, FRAME6_LEN, n_dests,
	       ol_rx ? "marked good by the \"NIC\"" : "verified in software", rounds);
	/* both ways of routing: a burst ahead (the gateway's), and alone */
	restore(&w4);
	run_fwd(&w4);
	wrong = verify(&w4);
	restore(&w6);
	run_fwd(&w6);
	wrong += verify(&w6);
	restore(&w4);
	run_alone(&w4);
	wrong += verify(&w4);
	restore(&w6);
	run_alone(&w6);
	wrong += verify(&w6);
	if (wrong != 0 || bad != 0) {
		unsigned int r;

		fprintf(stderr,
			"bench_ip: %u frames forwarded wrong, %" PRIu64 " not forwarded:", wrong,
			bad);
		for (r = 0; r < EGW_IP_DROP_MAX; r++)
			if (bad_drop[r] != 0)
				fprintf(stderr, " %s %" PRIu64, egw_ip_drop_name(r), bad_drop[r]);
		fprintf(stderr, "\n");
		goto fail;
	}
	f4 = measure(&w4, rounds);
	report("ipv4", &f4, s4.ok, true);
	f6 = measure(&w6, rounds);
	report("ipv6", &f6, s6.ok, false);
	printf("added = routed - classify per round, then the median; io and classify loops "
	       "see the same frames and rebuilds\n");
	if (bad != 0) {
		fprintf(stderr, "bench_ip: %" PRIu64 " frames not forwarded while timing\n", bad);
		goto fail;
	}

	rte_rcu_qsbr_thread_offline(qs, 0);
	rte_rcu_qsbr_thread_unregister(qs, 0);
	rte_pktmbuf_free_bulk(w4.m, n_frames);
	egw_ip_ctx_free(ctx);
	egw_ip_fini();
	free(w4.m);
	free(w4.dst);
	free(w6.dst);
	free(t4.p);
	free(t6.p);
	ret = 0;
	goto out;
fail:
	ret = 1;
out:
	rte_eal_cleanup();
	free(eargv);
	return ret;
}
