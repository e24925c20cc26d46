/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/ip's parsers: the data path (egw_ip_fwd_burst()
 * on bursts of arbitrary IPv4 or IPv6 frames) and the control path
 * (egw_ip_ctrl_input() on arbitrary ARP and IPv6 ND frames, and on the
 * packets the data path queues for resolution), with the timers
 * (egw_ip_service()) running on small values so that neighbours go through
 * all their states while the fuzzer runs (the library looks at them every
 * 100 ms: a run of 200000 inputs takes a few seconds).
 *
 * The FIB (set up once, again every RESET_EVERY inputs):
 *   port 0 (MTU 1500): 10.0.0.1/24, 2001:db8::1/64
 *   port 1 (MTU 1280): 10.1.0.1/24, 2001:db8:1::1/64
 *   20.0.0.0/8 via 10.0.0.2 and 2001:db8:20::/48 via 2001:db8::2 (static
 *   neighbours); 50.0.0.0/8 via 10.0.0.3 and 10.0.0.4 (ECMP, static);
 *   30.0.0.0/8 via 10.1.0.9 and 2001:db8:30::/48 via 2001:db8:1::9
 *   (unresolved); 40.0.0.0/8 blackhole, 41.0.0.0/8 unreachable,
 *   100.64.0.0/10 subscribers, 60.0.0.0/8 dev port 1.
 * max_neigh is 8: the neighbour hash then has one bucket of 8 and never
 * refuses a key below the table limit (larger tables do, see
 * test_bug_flood_default in tests/unit/ip/test_ip.c).
 *
 * Input layout:
 *   byte 0   bit 0: IPv6 burst (else IPv4)
 *            bit 1: the frames go to egw_ip_ctrl_input() (ARP, ND, anything)
 *            bit 2: ingress port
 *            bit 3: EGW_IP_F_LOCAL_ORIGIN
 *            bit 4: each frame in two segments, cut at byte 1
 *            bit 5: first, an ARP reply and an NA from the unresolved
 *                   gateways (held packets go out)
 *            bit 6: first, the unresolved gateways are deleted (back to
 *                   INCOMPLETE)
 *            bit 7: the burst takes the TTL step (egw_ip_ttl_burst()) and
 *                   the ICMP source rewrite (egw_ip_icmp_set_source())
 *                   instead of egw_ip_fwd_burst()
 *   byte 1   where to cut (bit 4)
 *   then     up to MAX_FRAMES frames, each a 2-byte length and the bytes
 *            from the destination MAC
 * Frames lib/eth classifies as another family than the burst's go to the
 * control path.
 *
 * Checked, for every data-path call: every frame accounted for (outputs +
 * drops == inputs + created); each forwarded frame leaves with its port's
 * source MAC, a unicast destination, a right IPv4 header checksum, IP
 * lengths that cover the frame exactly and fit the egress MTU, a TTL or hop
 * limit of at least 1 (unless LOCAL_ORIGIN); each reply (ICMP error, echo
 * reply) has a right IP and ICMP/ICMPv6 checksum and exact lengths. For
 * every frame the control path sends: the port's source MAC, well-formed
 * ARP (our MAC as sender), ND with hop limit 255 and a right checksum, IPv4
 * with a right header checksum. After every input: at most max_neigh
 * neighbours, each with a unicast MAC once resolved and packets held only
 * while INCOMPLETE, and no mbuf in use but for those held. At every reset:
 * no mbuf left in use.
 */
/* rte_ipv6_udptcp_cksum_verify() is experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "egw_eth.h"
#include "egw_ip.h"
#include "fuzz_common.h"

#define FRAME_MAX 4096
#define MAX_FRAMES 8
#define IN_HDR 2
#define RESET_EVERY 50000
#define NB_MBUF 2047

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;
static struct egw_ip_ctx *ctx;
static struct egw_ip_res res;
static struct egw_eth_port eth_ports[2];
static const struct rte_ether_addr port_mac[2] = {
	{.addr_bytes = {0x02, 0x00, 0x00, 0x1b, 0x00, 0x00}},
	{.addr_bytes = {0x02, 0x00, 0x00, 0x1b, 0x00, 0x01}},
};
static const uint16_t port_mtu[2] = {1500, 1280};
static const struct rte_ether_addr gw_resolved = {.addr_bytes = {0x02, 0x00, 0x00, 0x99, 0, 9}};
static unsigned int runs;
static bool local_origin;

/* RTE_IPV4 shifts an int: undefined for a first byte above 127 */
#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* RFC 1071 sum of len bytes, folded */
static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static struct egw_ip_addr
a4(uint32_t h)
{
	struct egw_ip_addr a;
	rte_be32_t be = rte_cpu_to_be_32(h);

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	memcpy(a.a, &be, 4);
	return a;
}

/* 2001:db8:<w2>::<lo> */
static struct egw_ip_addr
a6(uint16_t w2, uint16_t lo)
{
	struct egw_ip_addr a;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET6;
	a.a[0] = 0x20;
	a.a[1] = 0x01;
	a.a[2] = 0x0d;
	a.a[3] = 0xb8;
	a.a[4] = (uint8_t)(w2 >> 8);
	a.a[5] = (uint8_t)w2;
	a.a[14] = (uint8_t)(lo >> 8);
	a.a[15] = (uint8_t)lo;
	return a;
}

/* Offset of the ethertype after up to two tags. */
static unsigned int
etype_off(const uint8_t *f, size_t n)
{
	unsigned int off = 12, nv = 0;

	while (nv < 2 && off + 2 <= n &&
	       (be16(f + off) == 0x8100 || be16(f + off) == 0x88a8 || be16(f + off) == 0x9100)) {
		off += 4;
		nv++;
	}
	return off;
}

/* An IPv4 packet at ip, room bytes of frame after it: header checksum,
 * total length within the frame. Returns the total length. */
static unsigned int
check_ip4(const uint8_t *ip, size_t room, const char *what)
{
	unsigned int hl, tl;

	FUZZ_ASSERT(room >= 20, "%s: IPv4 frame with %zu bytes", what, room);
	hl = (ip[0] & 0xfu) * 4u;
	tl = be16(ip + 2);
	FUZZ_ASSERT((ip[0] >> 4) == 4 && hl >= 20 && tl >= hl && tl <= room,
		    "%s: IPv4 vhl %#x total %u in %zu bytes", what, ip[0], tl, room);
	FUZZ_ASSERT(sum16(ip, hl, 0) == 0xffff, "%s: IPv4 header checksum", what);
	return tl;
}

/* An IPv6 packet at ip: payload within the frame; ICMPv6 checksum right. */
static unsigned int
check_ip6(const uint8_t *ip, size_t room, const char *what)
{
	unsigned int pl;

	FUZZ_ASSERT(room >= 40 && (ip[0] >> 4) == 6, "%s: IPv6 header", what);
	pl = be16(ip + 4);
	FUZZ_ASSERT(40u + pl <= room, "%s: IPv6 payload %u in %zu bytes", what, pl, room);
	return 40u + pl;
}

static void
check_icmp6(const uint8_t *ip, const char *what)
{
	FUZZ_ASSERT(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip, ip + 40) == 0,
		    "%s: ICMPv6 checksum", what);
}

/* A frame the control path sends. */
static void
tx_check(uint16_t port, struct rte_mbuf *m, void *arg)
{
	static uint8_t buf[FRAME_MAX + 64];
	const uint8_t *f;
	unsigned int off, tl;
	size_t n = m->pkt_len;
	uint16_t et;

	RTE_SET_USED(arg);
	FUZZ_ASSERT(port < 2, "sent on port %u", port);
	FUZZ_ASSERT(n >= RTE_ETHER_HDR_LEN && n <= sizeof(buf), "frame of %zu bytes", n);
	f = rte_pktmbuf_read(m, 0, (uint32_t)n, buf);
	FUZZ_ASSERT(f != NULL, "unreadable frame");
	FUZZ_ASSERT(memcmp(f + 6, &port_mac[port], 6) == 0, "source MAC is not port %u's", port);
	off = etype_off(f, n);
	FUZZ_ASSERT(off + 2 <= n, "no ethertype");
	et = be16(f + off);
	off += 2;
	switch (et) {
	case RTE_ETHER_TYPE_ARP:
		FUZZ_ASSERT(n >= off + 28, "ARP of %zu bytes", n);
		FUZZ_ASSERT(be16(f + off) == 1 && be16(f + off + 2) == RTE_ETHER_TYPE_IPV4 &&
				    f[off + 4] == 6 && f[off + 5] == 4,
			    "ARP hardware/protocol");
		FUZZ_ASSERT(be16(f + off + 6) == 1 || be16(f + off + 6) == 2, "ARP op %u",
			    be16(f + off + 6));
		FUZZ_ASSERT(memcmp(f + off + 8, &port_mac[port], 6) == 0,
			    "ARP sender is not port %u's MAC", port);
		break;
	case RTE_ETHER_TYPE_IPV4:
		tl = check_ip4(f + off, n - off, "sent IPv4");
		/* released packets were trimmed by the data path; the control
		 * path's own ICMP errors are exact (their checksums are checked
		 * in tests/unit/ip: a forwarded packet may carry any) */
		FUZZ_ASSERT(off + tl == n, "sent IPv4: %u in %zu", tl, n);
		break;
	case RTE_ETHER_TYPE_IPV6:
		tl = check_ip6(f + off, n - off, "sent IPv6");
		if (f[off + 6] == IPPROTO_ICMPV6 && tl >= 48) {
			uint8_t t = f[off + 40];

			/* ND is never forwarded: these are the control path's */
			if (t == 135 || t == 136) {
				FUZZ_ASSERT(f[off + 7] == 255, "ND with hop limit %u", f[off + 7]);
				check_icmp6(f + off, "sent ND");
			}
		}
		break;
	default: FUZZ_ASSERT(false, "sent ethertype %#x", et);
	}
	rte_pktmbuf_free(m);
}

static void
lib_setup(void)
{
	struct egw_ip_params p = {
		.pool = pool,
		.nb_ctx = 1,
		.socket = SOCKET_ID_ANY,
		.max_routes4 = 1024,
		.max_routes6 = 1024,
		.tbl8_4 = 64,
		.tbl8_6 = 256,
		.max_nh = 64,
		.max_neigh = 8,
		.tx = tx_check,
	};
	const uint32_t ecmp[2] = {IP4(10, 0, 0, 3), IP4(10, 0, 0, 4)};
	struct egw_ip_neigh_conf nc;
	struct egw_ip_path path[2];
	struct egw_ip_addr a;
	struct rte_ether_addr mac = {.addr_bytes = {0x02, 0, 0, 0x99, 0, 0}};
	char err[128] = "";
	unsigned int i;
	int rc = egw_ip_init(&p);

	for (i = 0; i < 2 && rc == 0; i++) {
		rc = egw_ip_port_set((uint16_t)i, &port_mac[i], port_mtu[i], EGW_IP_PORT_ROUTED);
		a = a4(IP4(10, i, 0, 1));
		rc = rc != 0 ? rc : egw_ip_addr_add((uint16_t)i, 0, &a, 24);
		a = a6((uint16_t)i, 1);
		rc = rc != 0 ? rc : egw_ip_addr_add((uint16_t)i, 0, &a, 64);
	}
	memset(path, 0, sizeof(path));
	path[0].port = UINT16_MAX;
	path[1].port = UINT16_MAX;
	/* routes first, then the static neighbours (a gateway with a host
	 * route is refused: tests/unit/ip, test_bug_gateway_known) */
	path[0].gw = a4(IP4(10, 0, 0, 2));
	a = a4(IP4(20, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_VIA, path, 1, err, sizeof(err));
	path[0].gw = a6(0, 2);
	a = a6(0x20, 0);
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 48, EGW_IP_RT_VIA, path, 1, err, sizeof(err));
	path[0].gw = a4(ecmp[0]);
	path[1].gw = a4(ecmp[1]);
	a = a4(IP4(50, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_VIA, path, 2, err, sizeof(err));
	path[0].gw = a4(IP4(10, 1, 0, 9));
	a = a4(IP4(30, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_VIA, path, 1, err, sizeof(err));
	path[0].gw = a6(1, 9);
	a = a6(0x30, 0);
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 48, EGW_IP_RT_VIA, path, 1, err, sizeof(err));
	a = a4(IP4(40, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_BLACKHOLE, NULL, 0, err, sizeof(err));
	a = a4(IP4(41, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_UNREACH, NULL, 0, err, sizeof(err));
	a = a4(IP4(100, 64, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 10, EGW_IP_RT_SESSION, NULL, 0, err, sizeof(err));
	path[0].port = 1;
	a = a4(IP4(60, 0, 0, 0));
	rc = rc != 0 ? rc : egw_ip_route_add(&a, 8, EGW_IP_RT_DEV, path, 1, err, sizeof(err));
	for (i = 0; i < 3 && rc == 0; i++) {
		mac.addr_bytes[5] = (uint8_t)(2 + i);
		a = a4(IP4(10, 0, 0, 2 + i));
		rc = egw_ip_neigh_add(0, 0, &a, &mac);
	}
	a = a6(0, 2);
	rc = rc != 0 ? rc : egw_ip_neigh_add(0, 0, &a, &mac);
	/* timers that move within a run; no rate limit the fuzzer would hit */
	egw_ip_neigh_conf_get(&nc);
	/* (egw_ip_service() looks at the timers every 100 ms) */
	nc.reachable_ms = 1;
	nc.retrans_ms = 1;
	nc.delay_ms = 1;
	nc.gc_stale_ms = 150;
	nc.failed_ms = 150;
	nc.solicit_pps = 1000000;
	nc.input_pps = 1000000;
	rc = rc != 0 ? rc : egw_ip_neigh_conf_set(&nc);
	rc = rc != 0 ? rc : egw_ip_icmp_ratelimit(1000000, 100000);
	ctx = rc != 0 ? NULL : egw_ip_ctx_create(0, pool);
	if (rc != 0 || ctx == NULL) {
		fprintf(stderr, "fuzz_ip: cannot set up lib/ip (%d: %s)\n", rc, err);
		abort();
	}
}

static void
lib_reset(void)
{
	unsigned int in_use;

	/* egw_ip_fini() first: held fragments are indirect mbufs of the
	 * context's pool (the other order loses mbufs: tests/unit/ip,
	 * test_bug_fragments_held_at_fini) */
	egw_ip_fini();
	egw_ip_ctx_free(ctx);
	in_use = rte_mempool_in_use_count(pool);
	FUZZ_ASSERT(in_use == 0, "%u mbufs still in use after egw_ip_fini()", in_use);
	lib_setup();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* fuzz_eal.h's 128 MiB cannot hold rte_fib's and rte_fib6's 64 MiB
	 * tbl24 each: the same arguments with 512 */
	char *eal_argv[] = {
		(*argv)[0], "--no-huge",         "-m", "512", "--no-pci", "--no-shconf", "-l",
		"0",        "--log-level=error", NULL,
	};

	RTE_SET_USED(argc);
	if (rte_eal_init((int)RTE_DIM(eal_argv) - 1, eal_argv) < 0) {
		fprintf(stderr, "fuzz_ip: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_ip", NB_MBUF, 0, 0, RTE_PKTMBUF_HEADROOM + FRAME_MAX,
				       rte_socket_id());
	if (pool == NULL || egw_eth_init() != 0) {
		fprintf(stderr, "fuzz_ip: cannot set up mbufs or lib/eth\n");
		abort();
	}
	eth_ports[0].mac = port_mac[0];
	eth_ports[1].mac = port_mac[1];
	lib_setup();
	return 0;
}

/* An mbuf with the frame (one segment, or two cut at split), classified as
 * received on port; NULL if lib/eth finds it bad (freed). */
static struct rte_mbuf *
mk(uint16_t port, const uint8_t *f, size_t n, size_t split)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *m2;

	if (m == NULL)
		abort();
	if (split == 0 || split >= n) {
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), f, n);
	} else {
		m2 = rte_pktmbuf_alloc(pool);
		if (m2 == NULL)
			abort();
		memcpy(rte_pktmbuf_append(m, (uint16_t)split), f, split);
		memcpy(rte_pktmbuf_append(m2, (uint16_t)(n - split)), f + split, n - split);
		if (rte_pktmbuf_chain(m, m2) != 0)
			abort();
	}
	m->port = port;
	if (egw_eth_classify_burst(&eth_ports[port], &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static void
check_out(struct rte_mbuf *m, uint16_t out_port, bool v6)
{
	static uint8_t buf[FRAME_MAX + 64];
	const uint8_t *f;
	unsigned int l2 = m->l2_len, len;

	FUZZ_ASSERT(out_port < 2 && m->port == out_port, "out on port %u (mbuf port %u)", out_port,
		    m->port);
	FUZZ_ASSERT(m->pkt_len <= sizeof(buf) && m->pkt_len >= l2 && l2 >= RTE_ETHER_HDR_LEN,
		    "out frame of %u bytes, l2 %u", m->pkt_len, l2);
	f = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	FUZZ_ASSERT(f != NULL, "unreadable out frame");
	FUZZ_ASSERT(memcmp(f + 6, &port_mac[out_port], 6) == 0, "out: source MAC not port %u's",
		    out_port);
	FUZZ_ASSERT(rte_is_unicast_ether_addr((const struct rte_ether_addr *)f) &&
			    !rte_is_zero_ether_addr((const struct rte_ether_addr *)f),
		    "out: destination MAC not unicast");
	FUZZ_ASSERT(be16(f + l2 - 2) == (v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4),
		    "out: ethertype %#x", be16(f + l2 - 2));
	if (!v6) {
		len = check_ip4(f + l2, m->pkt_len - l2, "out IPv4");
		FUZZ_ASSERT(local_origin || f[l2 + 8] >= 1, "out IPv4 with TTL 0");
	} else {
		len = check_ip6(f + l2, m->pkt_len - l2, "out IPv6");
		FUZZ_ASSERT(local_origin || f[l2 + 7] >= 1, "out IPv6 with hop limit 0");
	}
	FUZZ_ASSERT(len == m->pkt_len - l2, "out: IP length %u, frame has %u", len,
		    m->pkt_len - l2);
	FUZZ_ASSERT(len <= port_mtu[out_port], "out: %u bytes on MTU %u", len, port_mtu[out_port]);
}

static void
check_reply(struct rte_mbuf *m, bool v6)
{
	static uint8_t buf[FRAME_MAX + 64];
	const uint8_t *f, *ip;
	unsigned int l2 = m->l2_len, len;

	FUZZ_ASSERT(m->pkt_len <= sizeof(buf) && m->pkt_len >= l2 + 20u, "reply of %u bytes",
		    m->pkt_len);
	f = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	FUZZ_ASSERT(f != NULL, "unreadable reply");
	/* the ingress port's MAC, or (echo to another port's address) that
	 * port's: tests/unit/ip test_bug_echo_mac */
	FUZZ_ASSERT(memcmp(f + 6, &port_mac[0], 6) == 0 || memcmp(f + 6, &port_mac[1], 6) == 0,
		    "reply: source MAC is no port's");
	ip = f + l2;
	if (!v6) {
		len = check_ip4(ip, m->pkt_len - l2, "reply");
		FUZZ_ASSERT(len == m->pkt_len - l2 && ip[9] == IPPROTO_ICMP,
			    "reply: length %u of %u, protocol %u", len, m->pkt_len - l2, ip[9]);
		FUZZ_ASSERT(sum16(ip + (ip[0] & 0xf) * 4, len - (ip[0] & 0xfu) * 4, 0) == 0xffff,
			    "reply: ICMP checksum");
	} else {
		len = check_ip6(ip, m->pkt_len - l2, "reply");
		FUZZ_ASSERT(len == m->pkt_len - l2, "reply: length %u of %u", len, m->pkt_len - l2);
		FUZZ_ASSERT(ip[6] == IPPROTO_ICMPV6, "reply: next header %u", ip[6]);
		check_icmp6(ip, "reply");
	}
}

struct neigh_sum {
	unsigned int n, held;
};

static int
neigh_check(const struct egw_ip_neigh_info *ni, void *arg)
{
	struct neigh_sum *sum = arg;

	sum->n++;
	sum->held += ni->held;
	FUZZ_ASSERT(ni->state < EGW_IP_NS_MAX && ni->port < 2 && ni->held <= EGW_IP_HOLD_MAX,
		    "neighbour state %u port %u held %u", ni->state, ni->port, ni->held);
	FUZZ_ASSERT(
		ni->state == EGW_IP_NS_INCOMPLETE || ni->state == EGW_IP_NS_FAILED ||
			(rte_is_unicast_ether_addr(&ni->mac) && !rte_is_zero_ether_addr(&ni->mac)),
		"neighbour in state %u with MAC %02x:..", ni->state, ni->mac.addr_bytes[0]);
	FUZZ_ASSERT(ni->held == 0 || ni->state == EGW_IP_NS_INCOMPLETE,
		    "%u packets held in state %u", ni->held, ni->state);
	return 0;
}

static void
burst(struct rte_mbuf **pkts, uint16_t n, uint16_t port, bool v6, unsigned int flags)
{
	unsigned int i, outs, drops = 0;

	memset(&res, 0, offsetof(struct egw_ip_res, out));
	/* the gateway's prefetch a poll ahead reads unclassified frames: any
	 * length, any ethertype; a hint, so the results are the same either way */
	egw_ip_prefetch_burst(pkts, n);
	egw_ip_fwd_burst(ctx, port, pkts, n, v6, flags | (n & 1 ? EGW_IP_F_PREFETCHED : 0), &res);
	for (i = 0; i < EGW_IP_DROP_MAX; i++)
		drops += res.drop[i];
	FUZZ_ASSERT(res.n_drop == drops, "n_drop %u, the reasons add up to %u", res.n_drop, drops);
	FUZZ_ASSERT(res.n_out <= EGW_IP_MAX_OUT && res.n_sess <= n && res.n_local <= n &&
			    res.n_ctrl <= EGW_IP_MAX_BURST && res.n_reply <= n,
		    "counts out of range");
	outs = res.n_out + res.n_sess + res.n_local + res.n_ctrl + res.n_reply;
	FUZZ_ASSERT(outs + drops == n + res.created,
		    "%u in, %u created: %u out %u sess %u local %u ctrl %u reply, %u dropped", n,
		    res.created, res.n_out, res.n_sess, res.n_local, res.n_ctrl, res.n_reply,
		    drops);
	for (i = 0; i < res.n_out; i++) {
		check_out(res.out[i], res.out_port[i], v6);
		rte_pktmbuf_free(res.out[i]);
	}
	for (i = 0; i < res.n_reply; i++) {
		check_reply(res.reply[i], v6);
		rte_pktmbuf_free(res.reply[i]);
	}
	for (i = 0; i < res.n_sess; i++)
		rte_pktmbuf_free(res.sess[i]);
	for (i = 0; i < res.n_local; i++)
		rte_pktmbuf_free(res.local[i]);
	/* waiting for resolution, or ND: the control path takes them */
	for (i = 0; i < res.n_ctrl; i++)
		egw_ip_ctrl_input(res.ctrl[i]);
}

/* Whether an IPv4 header checksum or an ICMPv6 checksum of a frame holds
 * (-1: neither applies). */
static int
sums_ok(struct rte_mbuf *m)
{
	static uint8_t buf[FRAME_MAX + 64];
	const uint8_t *f = rte_pktmbuf_read(m, 0, m->pkt_len, buf), *ip;
	unsigned int l2 = m->l2_len, hl, plen;

	if (f == NULL || m->pkt_len < l2 + 40u)
		return -1;
	ip = f + l2;
	if ((ip[0] >> 4) == 4) {
		hl = (ip[0] & 0xfu) * 4u;
		return hl >= 20 && sum16(ip, hl, 0) == 0xffff;
	}
	if ((ip[0] >> 4) != 6 || ip[6] != IPPROTO_ICMPV6)
		return -1;
	plen = be16(ip + 4);
	if (plen > m->pkt_len - l2 - 40u)
		return -1;
	{
		uint32_t ps = sum16(ip + 8, 32, 0) + plen + IPPROTO_ICMPV6;

		return sum16(ip + 40, plen, ps) == 0xffff;
	}
}

/* The TTL step another stage uses (egw_ip_ttl_burst) and the ICMP source
 * rewrite (egw_ip_icmp_set_source): every frame kept or dropped (counted),
 * errors well formed, a checksum that held before the rewrite holds after. */
static void
ttl_step(struct rte_mbuf **pkts, uint16_t n, uint16_t port, bool v6)
{
	uint16_t kept[MAX_FRAMES], k, i;
	struct rte_mbuf *in[MAX_FRAMES];
	unsigned int drops = 0, r;

	memset(&res, 0, offsetof(struct egw_ip_res, out));
	memcpy(in, pkts, n * sizeof(in[0]));
	k = egw_ip_ttl_burst(ctx, port, pkts, n, kept, &res);
	for (r = 0; r < EGW_IP_DROP_MAX; r++)
		drops += res.drop[r];
	FUZZ_ASSERT(k <= n && k + drops == n && res.n_reply == res.created,
		    "ttl: %u in, %u kept, %u dropped, %u errors", n, k, drops, res.n_reply);
	for (i = 0; i < k; i++) {
		struct rte_mbuf *m = in[kept[i]];
		int before = sums_ok(m);

		FUZZ_ASSERT(i == 0 || kept[i] > kept[i - 1], "ttl: kept out of order");
		if (egw_ip_icmp_set_source(m, port))
			FUZZ_ASSERT(before != 1 || sums_ok(m) == 1, "set_source broke a checksum");
		rte_pktmbuf_free(m);
	}
	for (i = 0; i < res.n_reply; i++) {
		egw_ip_icmp_set_source(res.reply[i], port);
		check_reply(res.reply[i], v6);
		rte_pktmbuf_free(res.reply[i]);
	}
	res.n_reply = 0;
}

/* An ARP reply from 10.1.0.9 and an NA from 2001:db8:1::9 to port 1. */
static void
resolve_gateways(void)
{
	uint8_t f[14 + 40 + 32];
	struct rte_mbuf *m;
	struct egw_ip_addr a;
	uint16_t ck;

	memset(f, 0, sizeof(f));
	memcpy(f, &port_mac[1], 6);
	memcpy(f + 6, &gw_resolved, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x02", 8);
	memcpy(f + 22, &gw_resolved, 6);
	memcpy(f + 28, "\x0a\x01\x00\x09", 4);
	memcpy(f + 32, &port_mac[1], 6);
	memcpy(f + 38, "\x0a\x01\x00\x01", 4);
	m = mk(1, f, 60, 0);
	if (m != NULL)
		egw_ip_ctrl_input(m);
	/* NA: solicited, override, target 2001:db8:1::9, TLLA */
	memset(f, 0, sizeof(f));
	memcpy(f, &port_mac[1], 6);
	memcpy(f + 6, &gw_resolved, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 32;
	f[20] = IPPROTO_ICMPV6;
	f[21] = 255;
	a = a6(1, 9);
	memcpy(f + 22, a.a, 16);
	a = a6(1, 1);
	memcpy(f + 38, a.a, 16);
	f[54] = 136;
	f[58] = 0x60;
	a = a6(1, 9);
	memcpy(f + 62, a.a, 16);
	f[78] = 2;
	f[79] = 1;
	memcpy(f + 80, &gw_resolved, 6);
	ck = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)(f + 14), f + 54);
	memcpy(f + 56, &ck, 2);
	m = mk(1, f, sizeof(f), 0);
	if (m != NULL)
		egw_ip_ctrl_input(m);
}

static void
unresolve_gateways(void)
{
	struct egw_ip_addr a = a4(IP4(10, 1, 0, 9));

	egw_ip_neigh_del(1, 0, &a); /* -ENOENT when it was never learnt */
	a = a6(1, 9);
	egw_ip_neigh_del(1, 0, &a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *pkts[MAX_FRAMES];
	struct in in;
	uint8_t flags, split;
	uint16_t port, n = 0;
	struct neigh_sum nn = {0, 0};
	bool v6;

	if (size < IN_HDR)
		return 0;
	if (++runs % RESET_EVERY == 0)
		lib_reset();
	flags = data[0];
	split = data[1];
	v6 = flags & 1;
	port = (flags >> 2) & 1;
	local_origin = (flags & 8) != 0;
	in.p = data + IN_HDR;
	in.n = size - IN_HDR;

	if (flags & 0x40)
		unresolve_gateways();
	if (flags & 0x20)
		resolve_gateways();
	while (in.n > 0 && n < MAX_FRAMES) {
		size_t len = (size_t)in_uint(&in, 2);
		unsigned int k;
		struct rte_mbuf *m;

		if (len > in.n)
			len = in.n;
		if (len > FRAME_MAX)
			len = FRAME_MAX;
		if (len < RTE_ETHER_HDR_LEN) {
			in.p += len;
			in.n -= len;
			continue;
		}
		m = mk(port, in.p, len, (flags & 0x10) ? split : 0);
		in.p += len;
		in.n -= len;
		if (m == NULL)
			continue;
		k = egw_eth_meta(m)->cls;
		if ((flags & 2) || k != (v6 ? EGW_ETH_CLS_IPV6 : EGW_ETH_CLS_IPV4))
			egw_ip_ctrl_input(m);
		else
			pkts[n++] = m;
	}
	if (n != 0 && (flags & 0x80))
		ttl_step(pkts, n, port, v6);
	else if (n != 0)
		burst(pkts, n, port, v6, local_origin ? EGW_IP_F_LOCAL_ORIGIN : 0);
	egw_ip_service();
	egw_ip_neigh_walk(neigh_check, &nn);
	FUZZ_ASSERT(nn.n <= 8, "%u neighbours, max_neigh 8", nn.n);
	/* every frame was freed or sent but those waiting for resolution: at
	 * most 3 mbufs each (2 segments, or a fragment's header and the 2
	 * segments of the packet it points into) */
	FUZZ_ASSERT(rte_mempool_in_use_count(pool) <= 3 * nn.held, "%u mbufs in use, %u held",
		    rte_mempool_in_use_count(pool), nn.held);
	return 0;
}
