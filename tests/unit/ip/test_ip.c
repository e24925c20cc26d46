/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ip without a NIC: the FIB (longest-prefix match, route types, ECMP),
 * forwarding (TTL with the RFC 1624 incremental checksum, MTU and IPv4
 * fragmentation), ICMP/ICMPv6 errors and their rules (RFC 1812 4.3.2.7,
 * RFC 4443 2.4), martian and malformed headers, ICMP echo, and the
 * neighbour protocols on the control path (ARP, RFC 826; IPv6 ND,
 * RFC 4861) with the hold queue, the table limit and resolution failure.
 *
 * Every frame is built here byte by byte and every frame the library makes
 * (res->out/reply/local/ctrl, and what its tx callback sends) is parsed here
 * independently: checksums are recomputed with this file's own RFC 1071
 * sum, and cross-checked with DPDK's rte_ipv4_cksum() and
 * rte_ipv6_udptcp_cksum_verify().
 *
 * The library keeps global state: the cases run in order on one set-up
 * (ports, addresses, routes below) and each one leaves it as it found it
 * unless it says otherwise; the last two cases set the library up again
 * (the default neighbour table size; a stop with fragments held). Checks
 * whose message starts with "lib/ip bug" test what the API, the RFCs or
 * the library's own comments promise and fail on the library as written:
 * they stay until the library is fixed. At the end no mbuf may be in use.
 *
 * Set-up (port: MAC, MTU, addresses):
 *   0: 02:00:00:00:00:01, 1500, 10.0.0.1/24, 2001:db8::1/64
 *   1: 02:00:00:00:00:02, 1400, 10.1.0.1/16, 2001:db8:1::1/64
 *   2: 02:00:00:00:00:03, 1500, 10.2.0.1/24 (ECMP gateways)
 *   3: 02:00:00:00:00:04, access port
 *   4: 02:00:00:00:00:05, 1044, 10.4.0.1/24 (fragments filling a burst)
 *   5: 02:00:00:00:00:06, 1500, no address
 */
/* rte_ipv6_udptcp_cksum_verify() is experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "check.h"
#include "egw_eth.h"
#include "egw_ip.h"

#define NB_MBUF 4095
#define DATA_ROOM 8192
#define FRAME_BIG (65535 + 64)
#define CAP_MAX 64
#define CAP_FRAME 2048
#define NB_PORTS 6
#ifndef MAX_NEIGH
#define MAX_NEIGH 64
#endif
#define TTL_ZERO 256 /* struct pk: a TTL of 0 (0 means the default, 64) */

/* RTE_IPV4 shifts an int: undefined for a first byte above 127 */
#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static struct rte_mempool *pool;
static struct egw_ip_ctx *ctx;
static struct egw_ip_res res;
static uint8_t fb[FRAME_BIG]; /* frame being built */
static uint8_t ob[FRAME_BIG]; /* frame being checked */

static const struct rte_ether_addr port_mac[NB_PORTS] = {
	{{0x02, 0, 0, 0, 0, 0x01}}, {{0x02, 0, 0, 0, 0, 0x02}}, {{0x02, 0, 0, 0, 0, 0x03}},
	{{0x02, 0, 0, 0, 0, 0x04}}, {{0x02, 0, 0, 0, 0, 0x05}}, {{0x02, 0, 0, 0, 0, 0x06}},
};
static const uint16_t port_mtu[NB_PORTS] = {1500, 1400, 1500, 1500, 1044, 1500};
static const uint32_t port_ip4[NB_PORTS] = {
	IP4(10, 0, 0, 1), IP4(10, 1, 0, 1), IP4(10, 2, 0, 1), 0, IP4(10, 4, 0, 1), 0};
static const uint8_t port_len4[NB_PORTS] = {24, 16, 24, 0, 24, 0};
static struct egw_eth_port eth_port[NB_PORTS];
/* the station that sends every test frame (on whichever port) */
static const struct rte_ether_addr mac_peer = {{0x02, 0xaa, 0, 0, 0, 0x01}};
static const struct rte_ether_addr mac_bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
static const struct rte_ether_addr mac_mcast = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};

/* a source off every connected network: forwarded traffic comes from it */
#define SRC4 IP4(11, 0, 0, 1)

/* ---- bytes --------------------------------------------------------------- */

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* RFC 1071 one's complement sum over len bytes, folded. */
static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += get16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* The transport checksum of an IPv4/IPv6 packet (pseudo header for all but
 * ICMPv4): over a packet whose checksum field is set, 0 means it verifies. */
static uint16_t
l4_cksum(const uint8_t *ip, bool v6, const uint8_t *l4, uint32_t l4len, uint8_t proto)
{
	uint8_t ph[40];
	uint32_t s;

	if (!v6) {
		if (proto == IPPROTO_ICMP)
			return (uint16_t)~sum16(l4, l4len, 0);
		memcpy(ph, ip + 12, 8);
		ph[8] = 0;
		ph[9] = proto;
		put16(ph + 10, (uint16_t)l4len);
		s = sum16(ph, 12, 0);
	} else {
		memcpy(ph, ip + 8, 32);
		put32(ph + 32, l4len);
		memset(ph + 36, 0, 3);
		ph[39] = proto;
		s = sum16(ph, 40, 0);
	}
	return (uint16_t)~sum16(l4, l4len, s);
}

static bool
ip4_hdr_ok(const uint8_t *ip)
{
	return sum16(ip, (ip[0] & 0xfu) * 4u, 0) == 0xffff;
}

/* xorshift64*: the random inputs are the same on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

/* ---- addresses ----------------------------------------------------------- */

static struct egw_ip_addr
A4(uint32_t h) {
	struct egw_ip_addr a;
	rte_be32_t be = rte_cpu_to_be_32(h);

	memset(&a, 0, sizeof(a));
	a.family = AF_INET;
	memcpy(a.a, &be, 4);
	return a;
}

static struct egw_ip_addr
A6(const uint8_t b[16]) {
	struct egw_ip_addr a;

	memset(&a, 0, sizeof(a));
	a.family = AF_INET6;
	memcpy(a.a, b, 16);
	return a;
}

/* 2001:db8:<w2>:<w3>::<lo> */
static void
in6(uint8_t a[16], uint16_t w2, uint16_t w3, uint16_t lo)
{
	memset(a, 0, 16);
	put32(a, 0x20010db8);
	put16(a + 4, w2);
	put16(a + 6, w3);
	put16(a + 14, lo);
}

static struct rte_ether_addr
gw_mac(uint8_t i)
{
	struct rte_ether_addr m = {{0x02, 0xbb, 0, 0, 0, i}};

	return m;
}

static uint8_t port_ip6[NB_PORTS][16];
static uint8_t src6[16]; /* 2001:db8:ff::100: off-link source */

/* ---- frames -------------------------------------------------------------- */

/* One test packet. */
struct pk {
	uint16_t port;                      /* ingress */
	const struct rte_ether_addr *l2dst; /* NULL: the ingress port's MAC */
	bool v6;
	uint32_t src4, dst4; /* 0: SRC4 */
	uint8_t src6[16], dst6[16];
	uint8_t proto;     /* 0: UDP */
	uint8_t icmp_type; /* proto ICMP or ICMPv6 */
	int ttl;           /* 0: 64; TTL_ZERO: 0 */
	uint16_t frag;     /* IPv4 flags and fragment offset */
	uint16_t id;
	uint32_t len; /* IP bytes, header included; 0: 64 */
	uint16_t sport, dport;
	uint32_t pad; /* bytes of Ethernet padding after the packet */
};

static uint32_t build(uint8_t *f, const struct pk *p);

/*
 * egw_ip_prefetch_burst() reads frames lib/eth has not classified (the
 * gateway calls it as a burst arrives): empty and short ones, tagged ones,
 * other ethertypes. A hint: it changes no byte and no length (and, under
 * ASan, reads nothing past a frame).
 */
static void
test_prefetch_burst(void)
{
	static const uint16_t lens[] = {0, 1, 13, 14, 17, 21, 41, 42, 45, 60};
	static const uint16_t tags[][3] = {
		{RTE_ETHER_TYPE_IPV4, 0, 0},
		{RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_IPV4, 0},
		{RTE_ETHER_TYPE_QINQ, RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_IPV4},
		{RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_VLAN},
		{RTE_ETHER_TYPE_ARP, 0, 0},
		{RTE_ETHER_TYPE_IPV6, 0, 0},
	};
	struct rte_mbuf *ms[RTE_DIM(lens) * RTE_DIM(tags)];
	uint8_t copy[RTE_DIM(lens) * RTE_DIM(tags)][64];
	unsigned int i, j, k = 0;

	printf("prefetch a burst ahead: unclassified frames left as they are\n");
	for (i = 0; i < RTE_DIM(lens); i++) {
		for (j = 0; j < RTE_DIM(tags); j++, k++) {
			uint8_t f[64];
			unsigned int b;

			for (b = 0; b < sizeof(f); b++)
				f[b] = (uint8_t)(b * 13 + k);
			put16(f + 12, tags[j][0]);
			put16(f + 16, tags[j][1]);
			put16(f + 20, tags[j][2]);
			ms[k] = rte_pktmbuf_alloc(pool);
			if (ms[k] == NULL)
				exit(1);
			if (lens[i] != 0)
				memcpy(rte_pktmbuf_append(ms[k], lens[i]), f, lens[i]);
			memcpy(copy[k], f, sizeof(f));
		}
	}
	egw_ip_prefetch_burst(ms, (uint16_t)k);
	for (i = 0; i < k; i++) {
		CHECK(ms[i]->data_len == lens[i / RTE_DIM(tags)] &&
			      ms[i]->pkt_len == ms[i]->data_len,
		      "frame %u: length %u, was %u", i, ms[i]->data_len, lens[i / RTE_DIM(tags)]);
		CHECK(memcmp(rte_pktmbuf_mtod(ms[i], uint8_t *), copy[i], ms[i]->data_len) == 0,
		      "frame %u changed", i);
		rte_pktmbuf_free(ms[i]);
	}
}

static uint32_t
build(uint8_t *f, const struct pk *p)
{
	uint32_t len = p->len != 0 ? p->len : 64, hl = p->v6 ? 40 : 20, l4len = len - hl, i;
	uint8_t proto = p->proto != 0 ? p->proto : IPPROTO_UDP;
	uint8_t ttl = p->ttl == 0 ? 64 : (uint8_t)p->ttl;
	uint8_t *ip = f + RTE_ETHER_HDR_LEN, *l4 = ip + hl;

	memcpy(f, p->l2dst != NULL ? p->l2dst : &port_mac[p->port], 6);
	memcpy(f + 6, &mac_peer, 6);
	put16(f + 12, p->v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	for (i = 0; i < l4len; i++)
		l4[i] = (uint8_t)(i * 7 + p->id);
	if (proto == IPPROTO_UDP || proto == IPPROTO_TCP) {
		put16(l4, p->sport);
		put16(l4 + 2, p->dport);
		if (proto == IPPROTO_UDP) {
			put16(l4 + 4, (uint16_t)l4len);
			put16(l4 + 6, 0);
		} else {
			put16(l4 + 16, 0);
		}
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		l4[0] = p->icmp_type;
		l4[1] = 0;
		put16(l4 + 2, 0);
	}
	if (!p->v6) {
		ip[0] = 0x45;
		ip[1] = 0;
		put16(ip + 2, (uint16_t)len);
		put16(ip + 4, p->id);
		put16(ip + 6, p->frag);
		ip[8] = ttl;
		ip[9] = proto;
		put16(ip + 10, 0);
		put32(ip + 12, p->src4 != 0 ? p->src4 : SRC4);
		put32(ip + 16, p->dst4);
		put16(ip + 10, (uint16_t)~sum16(ip, 20, 0));
	} else {
		put32(ip, 0x60000000);
		put16(ip + 4, (uint16_t)l4len);
		ip[6] = proto;
		ip[7] = ttl;
		memcpy(ip + 8, p->src6, 16);
		memcpy(ip + 24, p->dst6, 16);
	}
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		put16(l4 + 2, l4_cksum(ip, p->v6, l4, l4len, proto));
	else if (proto == IPPROTO_UDP && (p->frag & 0x3fff) == 0)
		put16(l4 + 6, l4_cksum(ip, p->v6, l4, l4len, proto));
	memset(f + RTE_ETHER_HDR_LEN + len, 0, p->pad);
	return RTE_ETHER_HDR_LEN + len + p->pad;
}

/* An mbuf (segments of DATA_ROOM bytes) with the frame, classified by lib/eth
 * as received on port. */
static struct rte_mbuf *
mk(uint16_t port, const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint16_t n;

		if (m == NULL) {
			printf("test_ip: out of mbufs (%u in use)\n",
			       rte_mempool_in_use_count(pool));
			exit(1);
		}
		n = (uint16_t)RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(m));
		memcpy(rte_pktmbuf_append(m, n), f + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			exit(1);
	} while (off < len);
	head->port = port;
	CHECK(egw_eth_classify_burst(&eth_port[port], &head, 1) == 1, "lib/eth refused a frame");
	return head;
}

static struct rte_mbuf *
mkp(const struct pk *p)
{
	return mk(p->port, fb, build(fb, p));
}

/* Linear copy of m; returns its length. */
static uint32_t
flat(const struct rte_mbuf *m, uint8_t *buf)
{
	const void *p = rte_pktmbuf_read(m, 0, m->pkt_len, buf);

	if (p != NULL && p != buf)
		memcpy(buf, p, m->pkt_len);
	return m->pkt_len;
}

static void
free_all(struct rte_mbuf **v, uint16_t *n)
{
	uint16_t i;

	for (i = 0; i < *n; i++)
		rte_pktmbuf_free(v[i]);
	*n = 0;
}

static void
res_free(void)
{
	free_all(res.out, &res.n_out);
	free_all(res.sess, &res.n_sess);
	free_all(res.local, &res.n_local);
	free_all(res.ctrl, &res.n_ctrl);
	free_all(res.reply, &res.n_reply);
}

static void
fwd_flags(uint16_t port, struct rte_mbuf **pkts, uint16_t n, bool v6, unsigned int flags)
{
	memset(&res, 0, sizeof(res));
	egw_ip_fwd_burst(ctx, port, pkts, n, v6, flags, &res);
}

static void
fwd(uint16_t port, struct rte_mbuf **pkts, uint16_t n, bool v6)
{
	fwd_flags(port, pkts, n, v6, 0);
}

/* One packet through the data path; the frame stays in fb (its length
 * returned) for the checks. */
static uint32_t
fwd1(const struct pk *p)
{
	uint32_t len = build(fb, p);
	struct rte_mbuf *m = mk(p->port, fb, len);

	fwd(p->port, &m, 1, p->v6);
	return len;
}

static unsigned int
ndrop(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < EGW_IP_DROP_MAX; i++)
		n += res.drop[i];
	CHECK(res.n_drop == n, "n_drop %u, the reasons add up to %u", res.n_drop, n);
	return n;
}

/* Exactly one drop, of reason r, and nothing else came out. */
static bool
only_drop(unsigned int r)
{
	return ndrop() == 1 && res.drop[r] == 1 && res.n_out == 0 && res.n_sess == 0 &&
	       res.n_local == 0 && res.n_ctrl == 0;
}

/* ---- the tx callback ----------------------------------------------------- */

static struct {
	uint16_t port;
	uint32_t len;
	uint8_t b[CAP_FRAME];
} cap[CAP_MAX];
static unsigned int ncap;       /* kept in cap[] */
static unsigned int ncap_total; /* sent, kept or not */

static void
tx_cap(uint16_t port, struct rte_mbuf *m, void *arg)
{
	RTE_SET_USED(arg);
	if (ncap < CAP_MAX) {
		uint32_t len = RTE_MIN(m->pkt_len, (uint32_t)CAP_FRAME);
		const void *p = rte_pktmbuf_read(m, 0, len, cap[ncap].b);

		if (p != NULL && p != cap[ncap].b)
			memcpy(cap[ncap].b, p, len);
		cap[ncap].port = port;
		cap[ncap].len = m->pkt_len;
		ncap++;
	}
	ncap_total++;
	rte_pktmbuf_free(m);
}

static void
cap_clear(void)
{
	ncap = 0;
	ncap_total = 0;
}

/* ---- control-path views -------------------------------------------------- */

static uint64_t
ctr(const char *name)
{
	const char *names[128];
	uint64_t values[128];
	unsigned int n = egw_ip_ctrl_counters(names, values, RTE_DIM(names)), i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return values[i];
	printf("test_ip: no counter %s\n", name);
	failures++;
	return 0;
}

struct nfind {
	struct egw_ip_addr a;
	bool found;
	struct egw_ip_neigh_info ni;
	unsigned int count;
};

static int
nfind_cb(const struct egw_ip_neigh_info *n, void *arg)
{
	struct nfind *f = arg;

	f->count++;
	if (n->addr.family == f->a.family && memcmp(n->addr.a, f->a.a, 16) == 0) {
		f->found = true;
		f->ni = *n;
	}
	return 0;
}

/* The neighbour entry of a (any port), and the number of entries. */
static bool
neigh_lookup(const struct egw_ip_addr *a, struct egw_ip_neigh_info *ni, unsigned int *count)
{
	struct nfind f;

	memset(&f, 0, sizeof(f));
	f.a = *a;
	egw_ip_neigh_walk(nfind_cb, &f);
	if (ni != NULL)
		*ni = f.ni;
	if (count != NULL)
		*count = f.count;
	return f.found;
}

static unsigned int
neigh_count(void)
{
	unsigned int c;
	struct egw_ip_addr none = A4(0);

	neigh_lookup(&none, NULL, &c);
	return c;
}

static int
route_via(uint32_t pfx, uint8_t len, const uint32_t *gw, unsigned int n, uint16_t port)
{
	struct egw_ip_path p[EGW_IP_ECMP_MAX];
	struct egw_ip_addr a = A4(pfx);
	char err[128] = "";
	unsigned int i;
	int rc;

	memset(p, 0, sizeof(p));
	for (i = 0; i < n; i++) {
		p[i].gw = A4(gw[i]);
		p[i].port = port;
	}
	rc = egw_ip_route_add(&a, len, EGW_IP_RT_VIA, p, n, err, sizeof(err));
	if (rc != 0)
		printf("  (route add: %s)\n", err);
	return rc;
}

static int
route_via6(const uint8_t pfx[16], uint8_t len, const uint8_t gw[16], uint16_t port)
{
	struct egw_ip_path p;
	struct egw_ip_addr a = A6(pfx);
	char err[128] = "";
	int rc;

	memset(&p, 0, sizeof(p));
	p.gw = A6(gw);
	p.port = port;
	rc = egw_ip_route_add(&a, len, EGW_IP_RT_VIA, &p, 1, err, sizeof(err));
	if (rc != 0)
		printf("  (route add: %s)\n", err);
	return rc;
}

static int
route_simple(uint32_t pfx, uint8_t len, enum egw_ip_route_type t)
{
	struct egw_ip_addr a = A4(pfx);
	char err[128];

	return egw_ip_route_add(&a, len, t, NULL, 0, err, sizeof(err));
}

static int
neigh4(uint16_t port, uint32_t ip, uint8_t mac)
{
	struct egw_ip_addr a = A4(ip);
	struct rte_ether_addr m = gw_mac(mac);

	return egw_ip_neigh_add(port, 0, &a, &m);
}

/* ---- checks of frames ---------------------------------------------------- */

/* ob holds an ICMPv4 error of olen bytes made in reply to the frame in
 * orig (received on port): everything RFC 792/1812 asks of it. With
 * ttl_changed, the quote may differ in TTL and header checksum (a packet
 * that was queued after its TTL was decremented). */
static void
check_icmp4_err(const uint8_t *r, uint32_t rlen, const uint8_t *orig, uint16_t port, uint8_t type,
		uint8_t code, uint32_t info, bool ttl_changed, const char *what)
{
	const uint8_t *ip = r + RTE_ETHER_HDR_LEN, *oip = orig + RTE_ETHER_HDR_LEN, *ic = ip + 20;
	uint32_t olen = get16(oip + 2), q = RTE_MIN(olen, 548u), i;
	bool quote_ok = true;

	CHECK(rlen >= RTE_ETHER_HDR_LEN + 28u && rlen == RTE_ETHER_HDR_LEN + 28u + q,
	      "%s: ICMP frame of %u bytes, expected %u", what, rlen, RTE_ETHER_HDR_LEN + 28u + q);
	if (rlen < RTE_ETHER_HDR_LEN + 28u)
		return;
	CHECK(memcmp(r, orig + 6, 6) == 0, "%s: destination MAC is not the sender's", what);
	CHECK(memcmp(r + 6, &port_mac[port], 6) == 0, "%s: source MAC is not port %u's", what,
	      port);
	CHECK(get16(r + 12) == RTE_ETHER_TYPE_IPV4, "%s: ethertype %#x", what, get16(r + 12));
	CHECK(ip[0] == 0x45 && ip4_hdr_ok(ip), "%s: IPv4 header (vhl %#x) or its checksum", what,
	      ip[0]);
	CHECK(get16(ip + 2) == 28 + q, "%s: total length %u, expected %u", what, get16(ip + 2),
	      28 + q);
	CHECK(ip[9] == IPPROTO_ICMP && ip[8] == 64, "%s: protocol %u TTL %u", what, ip[9], ip[8]);
	CHECK(get32(ip + 12) == port_ip4[port], "%s: ICMP source %#x, expected port %u's %#x", what,
	      get32(ip + 12), port, port_ip4[port]);
	CHECK(get32(ip + 16) == get32(oip + 12), "%s: ICMP destination %#x, sender %#x", what,
	      get32(ip + 16), get32(oip + 12));
	CHECK(ic[0] == type && ic[1] == code, "%s: ICMP type %u code %u, expected %u/%u", what,
	      ic[0], ic[1], type, code);
	CHECK(get32(ic + 4) == info, "%s: ICMP bytes 4-7 %#x, expected %#x", what, get32(ic + 4),
	      info);
	CHECK(l4_cksum(ip, false, ic, 8 + q, IPPROTO_ICMP) == 0, "%s: ICMP checksum", what);
	for (i = 0; i < q && RTE_ETHER_HDR_LEN + 28u + i < rlen; i++) {
		if (ttl_changed && (i == 8 || i == 10 || i == 11))
			continue;
		if (ic[8 + i] != oip[i])
			quote_ok = false;
	}
	CHECK(quote_ok, "%s: the quote is not the original packet", what);
}

static void
check_icmp6_err(const uint8_t *r, uint32_t rlen, const uint8_t *orig, uint16_t port, uint8_t type,
		uint8_t code, uint32_t info, const char *what)
{
	const uint8_t *ip = r + RTE_ETHER_HDR_LEN, *oip = orig + RTE_ETHER_HDR_LEN, *ic = ip + 40;
	uint32_t olen = 40u + get16(oip + 4), q = RTE_MIN(olen, 1232u);

	CHECK(rlen == RTE_ETHER_HDR_LEN + 48u + q, "%s: ICMPv6 frame of %u bytes, expected %u",
	      what, rlen, RTE_ETHER_HDR_LEN + 48u + q);
	if (rlen < RTE_ETHER_HDR_LEN + 48u)
		return;
	CHECK(memcmp(r, orig + 6, 6) == 0 && memcmp(r + 6, &port_mac[port], 6) == 0,
	      "%s: MAC addresses not swapped", what);
	CHECK(get16(r + 12) == RTE_ETHER_TYPE_IPV6, "%s: ethertype", what);
	CHECK((ip[0] >> 4) == 6 && get16(ip + 4) == 8 + q && ip[6] == IPPROTO_ICMPV6 && ip[7] == 64,
	      "%s: IPv6 header (payload %u, next %u, hop limit %u)", what, get16(ip + 4), ip[6],
	      ip[7]);
	CHECK(memcmp(ip + 8, port_ip6[port], 16) == 0, "%s: source is not port %u's address", what,
	      port);
	CHECK(memcmp(ip + 24, oip + 8, 16) == 0, "%s: destination is not the sender", what);
	CHECK(ic[0] == type && ic[1] == code && get32(ic + 4) == info,
	      "%s: ICMPv6 type %u code %u info %u, expected %u/%u/%u", what, ic[0], ic[1],
	      get32(ic + 4), type, code, info);
	CHECK(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip, ic) == 0 &&
		      l4_cksum(ip, true, ic, 8 + q, IPPROTO_ICMPV6) == 0,
	      "%s: ICMPv6 checksum", what);
	CHECK(memcmp(ic + 8, oip, q) == 0, "%s: the quote is not the original packet", what);
}

/* The one reply the last call made, flattened into ob (length returned, 0 if none). */
static uint32_t
reply1(const char *what)
{
	CHECK(res.n_reply == 1, "%s: %u replies, expected 1", what, res.n_reply);
	if (res.n_reply < 1)
		return 0;
	return flat(res.reply[0], ob);
}

/* A forwarded IPv4 frame in ob (from the frame in orig): MACs from the next
 * hop, TTL one less, header checksum right, everything else unchanged. */
static void
check_fwd4(const uint8_t *o, uint32_t olen, const uint8_t *orig, uint32_t len,
	   const struct rte_ether_addr *dst, uint16_t port, int dttl, const char *what)
{
	const uint8_t *ip = o + RTE_ETHER_HDR_LEN, *oip = orig + RTE_ETHER_HDR_LEN;
	uint8_t h[60];
	uint16_t ck;

	CHECK(olen == len, "%s: forwarded frame of %u bytes, expected %u", what, olen, len);
	if (olen != len || olen < RTE_ETHER_HDR_LEN + 20u)
		return;
	CHECK(memcmp(o, dst, 6) == 0, "%s: destination MAC %02x:..:%02x", what, o[0], o[5]);
	CHECK(memcmp(o + 6, &port_mac[port], 6) == 0, "%s: source MAC is not port %u's", what,
	      port);
	CHECK(ip[8] == oip[8] - dttl, "%s: TTL %u, sent %u", what, ip[8], oip[8]);
	/* the same header with the checksum recomputed from scratch by DPDK */
	memcpy(h, ip, 20);
	put16(h + 10, 0);
	ck = rte_be_to_cpu_16(rte_ipv4_cksum((const struct rte_ipv4_hdr *)h));
	CHECK(get16(ip + 10) == ck && ip4_hdr_ok(ip), "%s: header checksum %#x, recomputed %#x",
	      what, get16(ip + 10), ck);
	CHECK(memcmp(ip, oip, 8) == 0 && ip[9] == oip[9] &&
		      memcmp(ip + 12, oip + 12, len - 26) == 0,
	      "%s: bytes other than TTL and checksum changed", what);
}

/* ---- set-up -------------------------------------------------------------- */

/* The library with the ports and addresses above; max_neigh 0: the default. */
/* session keys of setup(): the first set-up has them (4-byte FIB entries,
 * as the application), the later ones not (2-byte entries) */
#define MAX_SESSIONS 65534
static uint32_t setup_sessions = MAX_SESSIONS;

static int
setup(uint32_t max_neigh)
{
	struct egw_ip_params p = {
		.pool = pool,
		.nb_ctx = 1,
		.socket = SOCKET_ID_ANY,
		.max_neigh = max_neigh,
		.max_sessions = setup_sessions,
		.tx = tx_cap,
	};
	struct egw_ip_neigh_conf nc;
	uint16_t i;
	int rc;

	rc = egw_ip_init(&p);
	if (rc != 0) {
		printf("test_ip: egw_ip_init: %s\n", strerror(-rc));
		return -1;
	}
	CHECK(egw_ip_init(&p) == -EEXIST, "a second egw_ip_init() is refused");
	ctx = egw_ip_ctx_create(0, pool);
	if (ctx == NULL) {
		printf("test_ip: egw_ip_ctx_create: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	for (i = 0; i < NB_PORTS; i++) {
		eth_port[i].mac = port_mac[i];
		rc = egw_ip_port_set(i, &port_mac[i], port_mtu[i],
				     i == 3 ? EGW_IP_PORT_ACCESS : EGW_IP_PORT_ROUTED);
		CHECK(rc == 0, "port_set %u: %d", i, rc);
		if (port_ip4[i] != 0) {
			struct egw_ip_addr a = A4(port_ip4[i]);

			rc = egw_ip_addr_add(i, 0, &a, port_len4[i]);
			CHECK(rc == 0, "addr_add port %u: %d", i, rc);
		}
	}
	in6(port_ip6[0], 0, 0, 1);
	in6(port_ip6[1], 1, 0, 1);
	in6(src6, 0xff, 0, 0x100);
	for (i = 0; i < 2; i++) {
		struct egw_ip_addr a = A6(port_ip6[i]);

		rc = egw_ip_addr_add(i, 0, &a, 64);
		CHECK(rc == 0, "addr_add v6 port %u: %d", i, rc);
	}
	/* no ICMP rate limit but where a case sets one; no ARP/ND input limit
	 * but where a case sets one */
	CHECK(egw_ip_icmp_ratelimit(1000000, 100000) == 0, "icmp_ratelimit");
	egw_ip_neigh_conf_get(&nc);
	CHECK(nc.mcast_probes == 3 && nc.retrans_ms == 1000 && nc.input_pps == 1000,
	      "default neighbour configuration");
	nc.input_pps = 1000000;
	CHECK(egw_ip_neigh_conf_set(&nc) == 0, "neigh_conf_set");
	/* the addresses sent a gratuitous ARP each, and an unsolicited NA */
	CHECK(ncap_total == 6, "%u announcements sent at set-up, expected 6", ncap_total);
	cap_clear();
	return 0;
}

/* ---- API refusals -------------------------------------------------------- */

static void
test_api(void)
{
	struct egw_ip_addr a;
	struct egw_ip_path path;
	char err[128];
	uint32_t gw;
	int rc;

	printf("api: refusals\n");
	/* an access port takes no address, no route */
	a = A4(IP4(10, 3, 0, 1));
	CHECK(egw_ip_addr_add(3, 0, &a, 24) == -EINVAL, "an access port took an address");
	memset(&path, 0, sizeof(path));
	path.port = 3;
	a = A4(IP4(52, 0, 0, 0));
	CHECK(egw_ip_route_add(&a, 8, EGW_IP_RT_DEV, &path, 1, err, sizeof(err)) == -EINVAL,
	      "a dev route on an access port");
	gw = IP4(10, 3, 0, 2);
	CHECK(route_via(IP4(52, 0, 0, 0), 8, &gw, 1, 3) == -EINVAL, "a gateway on an access port");
	/* a routed port with addresses cannot become an access port */
	CHECK(egw_ip_port_set(0, &port_mac[0], 1500, EGW_IP_PORT_ACCESS) == -EBUSY,
	      "port 0 with addresses became an access port");
	CHECK(egw_ip_port_set(0, &port_mac[0], 0, EGW_IP_PORT_ROUTED) == -EINVAL, "MTU 0");
	/* addresses */
	a = A4(port_ip4[0]);
	CHECK(egw_ip_addr_add(0, 0, &a, 24) == -EEXIST, "the same address twice");
	a = A4(IP4(224, 0, 0, 1));
	CHECK(egw_ip_addr_add(0, 0, &a, 24) == -EINVAL, "a multicast address");
	a = A4(IP4(10, 9, 0, 1));
	CHECK(egw_ip_addr_add(0, 0, &a, 33) == -EINVAL, "a /33");
	/* prefixes with host bits */
	a = A4(IP4(50, 0, 0, 1));
	rc = egw_ip_route_add(&a, 24, EGW_IP_RT_BLACKHOLE, NULL, 0, err, sizeof(err));
	CHECK(rc == -EINVAL, "50.0.0.1/24 accepted (%d)", rc);
	a = A4(IP4(50, 0, 0, 0));
	a = A4(IP4(51, 0, 0, 0));
	CHECK(egw_ip_route_add(&a, 7, EGW_IP_RT_BLACKHOLE, NULL, 0, err, sizeof(err)) == -EINVAL,
	      "51.0.0.0/7 has a host bit");
	/* duplicates */
	CHECK(route_simple(IP4(50, 0, 0, 0), 24, EGW_IP_RT_BLACKHOLE) == 0, "blackhole /24");
	CHECK(route_simple(IP4(50, 0, 0, 0), 24, EGW_IP_RT_BLACKHOLE) == -EEXIST,
	      "the same route twice");
	CHECK(route_simple(IP4(50, 0, 0, 0), 24, EGW_IP_RT_UNREACH) == -EEXIST,
	      "another type on the same prefix");
	gw = IP4(10, 0, 0, 2);
	CHECK(route_via(IP4(10, 0, 0, 0), 24, &gw, 1, UINT16_MAX) == -EEXIST,
	      "a route over a connected prefix");
	/* gateways */
	gw = IP4(99, 0, 0, 1);
	CHECK(route_via(IP4(51, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == -EINVAL,
	      "a gateway on no connected network");
	gw = IP4(10, 0, 0, 1);
	CHECK(route_via(IP4(51, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == -EINVAL,
	      "edgegw's own address as gateway");
	a = A4(IP4(51, 0, 0, 0));
	CHECK(egw_ip_route_add(&a, 8, EGW_IP_RT_VIA, NULL, 0, err, sizeof(err)) == -EINVAL,
	      "a via route without paths");
	/* deletes */
	CHECK(egw_ip_route_del(&(struct egw_ip_addr){0}, 0) == -EINVAL, "family 0");
	a = A4(IP4(50, 0, 0, 0));
	CHECK(egw_ip_route_del(&a, 24) == 0, "delete the blackhole");
	CHECK(egw_ip_route_del(&a, 24) == -ENOENT, "delete it again");
	a = A4(IP4(10, 0, 0, 0));
	CHECK(egw_ip_route_del(&a, 24) == -EPERM, "a connected route deleted by hand");
	a = A4(port_ip4[0]);
	CHECK(egw_ip_route_del(&a, 32) == -EPERM, "a local route deleted by hand");
}

/* ---- FIB ----------------------------------------------------------------- */

/* dst looked up by the control path and sent through the data path. */
static void
check_route4(uint32_t dst, int rc_exp, uint32_t pfx, uint8_t len, uint8_t type, uint8_t gwmac)
{
	struct egw_ip_route_info ri;
	struct egw_ip_addr a = A4(dst);
	struct pk p = {.port = 0, .dst4 = dst, .sport = 1000, .dport = 2000};
	struct rte_ether_addr mac = gw_mac(gwmac);
	uint32_t len_f;
	int rc = egw_ip_route_lookup(&a, &ri);

	CHECK(rc == rc_exp, "lookup %#x: %d, expected %d", dst, rc, rc_exp);
	if (rc == 0 && rc_exp == 0) {
		struct egw_ip_addr pa = A4(pfx);

		CHECK(ri.len == len && memcmp(ri.prefix.a, pa.a, 4) == 0 && ri.type == type,
		      "lookup %#x: %#x/%u type %u, expected %#x/%u type %u", dst,
		      get32(ri.prefix.a), ri.len, ri.type, pfx, len, type);
	}
	len_f = fwd1(&p);
	if (type == EGW_IP_RT_VIA && rc_exp == 0) {
		CHECK(res.n_out == 1 && ndrop() == 0, "fwd %#x: %u out, %u drops", dst, res.n_out,
		      ndrop());
		if (res.n_out == 1) {
			CHECK(res.out_port[0] == 0, "fwd %#x: out of port %u", dst,
			      res.out_port[0]);
			check_fwd4(ob, flat(res.out[0], ob), fb, len_f, &mac, 0, 1, "fwd");
		}
	}
	res_free();
}

static void
test_fib(void)
{
	static const struct {
		uint32_t dst, pfx;
		uint8_t len, gw;
	} lpm[] = {
		{IP4(20, 1, 2, 3), IP4(20, 1, 2, 3), 32, 5},
		{IP4(20, 1, 2, 4), IP4(20, 1, 2, 0), 24, 4},
		{IP4(20, 1, 2, 255), IP4(20, 1, 2, 0), 24, 4},
		{IP4(20, 1, 3, 1), IP4(20, 1, 0, 0), 16, 3},
		{IP4(20, 1, 255, 255), IP4(20, 1, 0, 0), 16, 3},
		{IP4(20, 2, 0, 1), IP4(20, 0, 0, 0), 8, 2},
		{IP4(20, 0, 0, 1), IP4(20, 0, 0, 0), 8, 2},
	};
	/* after 20.1.0.0/16 is deleted */
	static const struct {
		uint32_t dst, pfx;
		uint8_t len, gw;
	} lpm2[] = {
		{IP4(20, 1, 2, 3), IP4(20, 1, 2, 3), 32, 5},
		{IP4(20, 1, 2, 4), IP4(20, 1, 2, 0), 24, 4},
		{IP4(20, 1, 3, 1), IP4(20, 0, 0, 0), 8, 2},
		{IP4(20, 1, 255, 255), IP4(20, 0, 0, 0), 8, 2},
	};
	static const struct {
		uint32_t pfx;
		uint8_t len, gw;
	} routes[] = {
		{IP4(20, 0, 0, 0), 8, 2},
		{IP4(20, 1, 0, 0), 16, 3},
		{IP4(20, 1, 2, 0), 24, 4},
		{IP4(20, 1, 2, 3), 32, 5},
	};
	unsigned int cnt[2][EGW_IP_RT_MAX], cnt0[2][EGW_IP_RT_MAX], i;
	struct egw_ip_route_info ri;
	struct egw_ip_addr a;
	struct egw_ip_path path;
	char err[128];
	uint32_t len;
	int rc;

	printf("fib: longest prefix, route types\n");
	egw_ip_route_count(cnt0);
	CHECK(cnt0[0][EGW_IP_RT_CONNECTED] == 4 && cnt0[0][EGW_IP_RT_LOCAL] == 4 &&
		      cnt0[1][EGW_IP_RT_CONNECTED] == 2,
	      "route counts after set-up: %u connected, %u local, %u connected v6",
	      cnt0[0][EGW_IP_RT_CONNECTED], cnt0[0][EGW_IP_RT_LOCAL], cnt0[1][EGW_IP_RT_CONNECTED]);
	/* the routes first, then the gateways' MACs (see test_bug_gateway_known) */
	for (i = 0; i < RTE_DIM(routes); i++) {
		uint32_t gw = IP4(10, 0, 0, routes[i].gw);

		rc = route_via(routes[i].pfx, routes[i].len, &gw, 1, UINT16_MAX);
		CHECK(rc == 0, "route %#x/%u: %d", routes[i].pfx, routes[i].len, rc);
	}
	for (i = 0; i < RTE_DIM(routes); i++)
		CHECK(neigh4(0, IP4(10, 0, 0, routes[i].gw), routes[i].gw) == 0, "neigh_add");
	egw_ip_route_count(cnt);
	CHECK(cnt[0][EGW_IP_RT_VIA] == cnt0[0][EGW_IP_RT_VIA] + 4, "4 via routes counted");
	/* the gateway's port came from the connected route */
	a = A4(IP4(20, 1, 2, 9));
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.n_paths == 1 && ri.paths[0].port == 0 &&
		      ri.paths[0].vlan == 0 && get32(ri.paths[0].gw.a) == IP4(10, 0, 0, 4),
	      "path of 20.1.2.0/24: %u paths, port %u gw %#x", ri.n_paths, ri.paths[0].port,
	      get32(ri.paths[0].gw.a));
	for (i = 0; i < RTE_DIM(lpm); i++)
		check_route4(lpm[i].dst, 0, lpm[i].pfx, lpm[i].len, EGW_IP_RT_VIA, lpm[i].gw);
	/* the same in one burst, twice over: the /32's (a tbl8 group) among
	 * first-level entries; every frame out with its own route's gateway,
	 * and the frames of each destination in the order they came (lib/ip
	 * may send those whose lookup takes a tbl8 group after the others:
	 * never a flow's frames out of order). The UDP source port numbers
	 * the frames. */
	{
		struct rte_mbuf *ms[2 * RTE_DIM(lpm)];
		uint16_t nb = 0, seen[RTE_DIM(lpm)];
		struct egw_ip_mem im;
		unsigned int j;

		/* the layout of DPDK 22.11's DIR24_8 is confirmed at start:
		 * both levels prefetched, and this burst is split */
		egw_ip_mem(&im);
		CHECK(im.fib4_prefetch == 2, "IPv4 prefetch of %u levels", im.fib4_prefetch);

		for (i = 0; i < RTE_DIM(ms); i++) {
			struct pk p = {.port = 0,
				       .dst4 = lpm[i % RTE_DIM(lpm)].dst,
				       .sport = (uint16_t)(1000 + i),
				       .dport = 2000};
			uint32_t l = build(fb, &p);

			ms[nb++] = mk(0, fb, l);
		}
		/* as the gateway routes a burst it received a poll earlier */
		egw_ip_prefetch_burst(ms, nb);
		fwd_flags(0, ms, nb, false, EGW_IP_F_PREFETCHED);
		CHECK(res.n_out == nb && ndrop() == 0, "burst of %u: %u out, %u drops", nb,
		      res.n_out, ndrop());
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < res.n_out; i++) {
			const uint8_t *f = rte_pktmbuf_mtod(res.out[i], const uint8_t *);
			const struct rte_ether_hdr *eh = (const struct rte_ether_hdr *)f;
			uint32_t d;
			uint16_t sp;
			struct rte_ether_addr mac;

			memcpy(&d, f + RTE_ETHER_HDR_LEN + 16, 4);
			memcpy(&sp, f + RTE_ETHER_HDR_LEN + 20, 2);
			d = rte_be_to_cpu_32(d);
			sp = rte_be_to_cpu_16(sp);
			for (j = 0; j < RTE_DIM(lpm) && lpm[j].dst != d; j++)
				;
			CHECK(j < RTE_DIM(lpm), "burst frame %u: destination %#x not sent", i, d);
			if (j == RTE_DIM(lpm))
				continue;
			mac = gw_mac(lpm[j].gw);
			CHECK(rte_is_same_ether_addr(&eh->dst_addr, &mac),
			      "burst frame %u (%#x): gateway %02x, expected %02x", i, d,
			      eh->dst_addr.addr_bytes[5], lpm[j].gw);
			/* frame j of this destination, then frame j + RTE_DIM(lpm) */
			CHECK(sp == 1000 + j + seen[j] * RTE_DIM(lpm),
			      "burst frame %u (%#x): frame %u of the burst, expected %u", i, d,
			      sp - 1000u, (unsigned int)(j + seen[j] * RTE_DIM(lpm)));
			seen[j]++;
		}
		res_free();
	}

	/* delete the /16 that covers the /24 and /32: they stay, the /8 takes the rest */
	a = A4(IP4(20, 1, 0, 0));
	CHECK(egw_ip_route_del(&a, 16) == 0, "delete 20.1.0.0/16");
	for (i = 0; i < RTE_DIM(lpm2); i++)
		check_route4(lpm2[i].dst, 0, lpm2[i].pfx, lpm2[i].len, EGW_IP_RT_VIA, lpm2[i].gw);

	/* no route: ICMP net unreachable (RFC 1812 5.2.7.1) */
	{
		struct pk p = {.port = 0, .dst4 = IP4(21, 0, 0, 1), .sport = 7, .dport = 9};

		a = A4(p.dst4);
		CHECK(egw_ip_route_lookup(&a, &ri) == -ENOENT, "21.0.0.1 has a route");
		len = fwd1(&p);
		CHECK(res.drop[EGW_IP_DROP_NO_ROUTE] == 1 && ndrop() == 1 && res.n_out == 0,
		      "no route: drops %u", ndrop());
		len = reply1("no route");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 0, 3, 0, 0, false, "net unreachable");
		CHECK(res.created == 1, "no route: created %u", res.created);
		res_free();
	}
	/* blackhole: silently */
	CHECK(route_simple(IP4(40, 0, 0, 0), 8, EGW_IP_RT_BLACKHOLE) == 0, "blackhole");
	check_route4(IP4(40, 9, 9, 9), 0, IP4(40, 0, 0, 0), 8, EGW_IP_RT_BLACKHOLE, 0);
	{
		struct pk p = {.port = 0, .dst4 = IP4(40, 1, 1, 1)};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_BLACKHOLE) && res.n_reply == 0,
		      "blackhole: drop %u, %u replies", res.drop[EGW_IP_DROP_BLACKHOLE],
		      res.n_reply);
		res_free();
	}
	/* unreachable: ICMP host unreachable */
	CHECK(route_simple(IP4(41, 0, 0, 0), 8, EGW_IP_RT_UNREACH) == 0, "unreachable");
	{
		struct pk p = {.port = 0, .dst4 = IP4(41, 1, 1, 1)};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_UNREACHABLE), "unreachable: drops %u", ndrop());
		len = reply1("unreachable");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 0, 3, 1, 0, false, "host unreachable");
		res_free();
	}
	/* subscribers: handed to the caller, TTL decremented */
	CHECK(route_simple(IP4(100, 64, 0, 0), 10, EGW_IP_RT_SESSION) == 0, "session route");
	{
		struct pk p = {.port = 0, .dst4 = IP4(100, 64, 1, 2), .ttl = 10};

		fwd1(&p);
		CHECK(res.n_sess == 1 && ndrop() == 0 && res.n_out == 0, "session: %u", res.n_sess);
		if (res.n_sess == 1) {
			flat(res.sess[0], ob);
			CHECK(ob[RTE_ETHER_HDR_LEN + 8] == 9 && ip4_hdr_ok(ob + RTE_ETHER_HDR_LEN),
			      "session: TTL %u", ob[RTE_ETHER_HDR_LEN + 8]);
		}
		res_free();
	}
	/* broadcasts are not forwarded (RFC 2644) */
	{
		struct pk p = {.port = 1, .dst4 = IP4(10, 0, 0, 255)};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_BROADCAST) && res.n_reply == 0,
		      "directed broadcast: drops %u", ndrop());
		res_free();
		p.dst4 = IP4(255, 255, 255, 255);
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_BROADCAST), "limited broadcast");
		res_free();
	}
	/* dev: on-link, the destination itself is resolved */
	memset(&path, 0, sizeof(path));
	path.port = 0;
	a = A4(IP4(30, 0, 0, 0));
	CHECK(egw_ip_route_add(&a, 24, EGW_IP_RT_DEV, &path, 1, err, sizeof(err)) == 0,
	      "dev route: %s", err);
	a = A4(IP4(30, 0, 0, 7));
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.type == EGW_IP_RT_DEV && ri.len == 24 &&
		      ri.n_paths == 1 && ri.paths[0].port == 0,
	      "dev route lookup: type %u, %u paths", ri.type, ri.n_paths);
	{
		struct pk p = {.port = 1, .dst4 = IP4(30, 0, 0, 7)};
		const uint8_t *arp;

		fwd1(&p);
		CHECK(res.n_ctrl == 1 && ndrop() == 0 && res.n_out == 0,
		      "dev: %u to the control path", res.n_ctrl);
		cap_clear();
		if (res.n_ctrl == 1) {
			egw_ip_ctrl_input(res.ctrl[0]);
			res.n_ctrl = 0;
		}
		CHECK(ncap == 1 && cap[0].port == 0, "dev: %u frames sent", ncap);
		arp = cap[0].b + RTE_ETHER_HDR_LEN;
		CHECK(ncap >= 1 && memcmp(cap[0].b, &mac_bcast, 6) == 0 &&
			      get16(cap[0].b + 12) == RTE_ETHER_TYPE_ARP && get16(arp + 6) == 1 &&
			      get32(arp + 24) == IP4(30, 0, 0, 7) &&
			      get32(arp + 14) == IP4(10, 0, 0, 1),
		      "dev: an ARP request for 30.0.0.7 from 10.0.0.1");
		res_free();
		a = A4(IP4(30, 0, 0, 7));
		CHECK(egw_ip_neigh_del(0, 0, &a) == 0, "the dev neighbour");
		a = A4(IP4(30, 0, 0, 0));
		CHECK(egw_ip_route_del(&a, 24) == 0, "delete the dev route");
	}

	/* IPv6: /48 and /64 */
	{
		uint8_t p48[16], p64[16], g2[16], g3[16], d[16];
		struct rte_ether_addr m2 = gw_mac(0x62), m3 = gw_mac(0x63);
		struct egw_ip_addr ga;
		struct pk p = {.port = 1, .v6 = true, .sport = 5, .dport = 6};

		in6(p48, 0x20, 0, 0);
		in6(p64, 0x20, 1, 0);
		in6(g2, 0, 0, 2);
		in6(g3, 0, 0, 3);
		CHECK(route_via6(p48, 48, g2, UINT16_MAX) == 0, "v6 /48");
		CHECK(route_via6(p64, 64, g3, UINT16_MAX) == 0, "v6 /64");
		ga = A6(g2);
		CHECK(egw_ip_neigh_add(0, 0, &ga, &m2) == 0, "v6 neighbour 2");
		ga = A6(g3);
		CHECK(egw_ip_neigh_add(0, 0, &ga, &m3) == 0, "v6 neighbour 3");
		memcpy(p.src6, src6, 16);
		in6(d, 0x20, 1, 5);
		memcpy(p.dst6, d, 16);
		a = A6(d);
		CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.len == 64, "v6 lookup /64: %u",
		      ri.len);
		fwd1(&p);
		CHECK(res.n_out == 1 && res.out_port[0] == 0, "v6 /64 out");
		if (res.n_out == 1) {
			flat(res.out[0], ob);
			CHECK(memcmp(ob, &m3, 6) == 0 && ob[RTE_ETHER_HDR_LEN + 7] == 63,
			      "v6 /64: MAC or hop limit %u", ob[RTE_ETHER_HDR_LEN + 7]);
		}
		res_free();
		in6(d, 0x20, 2, 5);
		memcpy(p.dst6, d, 16);
		a = A6(d);
		CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.len == 48, "v6 lookup /48: %u",
		      ri.len);
		fwd1(&p);
		CHECK(res.n_out == 1 && memcmp(rte_pktmbuf_mtod(res.out[0], void *), &m2, 6) == 0,
		      "v6 /48 out");
		res_free();
		/* no route: ICMPv6 destination unreachable, no route (code 0) */
		in6(d, 0x21, 0, 1);
		memcpy(p.dst6, d, 16);
		len = fwd1(&p);
		CHECK(res.drop[EGW_IP_DROP_NO_ROUTE] == 1 && ndrop() == 1, "v6 no route");
		len = reply1("v6 no route");
		if (len != 0)
			check_icmp6_err(ob, len, fb, 1, 1, 0, 0, "v6 no route");
		res_free();
	}
}

/* ---- ECMP ---------------------------------------------------------------- */

#define ECMP_FLOWS 10000

/* Subscriber session routes: a /32 and a /64 whose FIB value is the
 * session key, inside a pppoe route (the pool) that keeps the addresses no
 * session has. Keys with bit 0x4000 set (FIB_GROUP's) stay keys. */
static void
test_session_routes(void)
{
	static const uint32_t keys[] = {7, 0x4001, MAX_SESSIONS};
	struct egw_ip_addr pool4 = A4(IP4(100, 96, 0, 0)), pool6, s4, s6, x;
	struct egw_ip_route_info ri;
	unsigned int cnt[2][EGW_IP_RT_MAX], before[2][EGW_IP_RT_MAX], i;
	uint8_t p6[16] = {0x20, 0x01, 0x0d, 0xb8, 0x01, 0x00}, d6[16];
	char err[128];

	printf("session routes\n");
	pool6 = A6(p6);
	egw_ip_route_count(before);
	CHECK(egw_ip_route_add(&pool4, 16, EGW_IP_RT_SESSION, NULL, 0, err, sizeof(err)) == 0,
	      "IPv4 pool route: %s", err);
	CHECK(egw_ip_route_add(&pool6, 48, EGW_IP_RT_SESSION, NULL, 0, err, sizeof(err)) == 0,
	      "IPv6 pool route: %s", err);
	/* refusals, with no change */
	s4 = A4(IP4(100, 96, 1, 2));
	CHECK(egw_ip_route_session_add(&s4, 32, EGW_IP_SESSION_NONE) == -EINVAL, "key 0 refused");
	CHECK(egw_ip_route_session_add(&s4, 32, MAX_SESSIONS + 1) == -EINVAL,
	      "key above max_sessions refused");
	CHECK(egw_ip_route_session_add(&s4, 24, 7) == -EINVAL, "bits past the length refused");
	CHECK(egw_ip_route_session_add(&pool4, 16, 7) == -EEXIST,
	      "the pool's own prefix is not a session's");
	CHECK(egw_ip_route_session_del(&s4, 32, 7) == -ENOENT, "delete of no route");

	for (i = 0; i < RTE_DIM(keys); i++) {
		struct pk p = {.port = 0, .dst4 = IP4(100, 96, 1, 2 + i), .ttl = 10};

		s4 = A4(p.dst4);
		CHECK(egw_ip_route_session_add(&s4, 32, keys[i]) == 0, "session /32 key %u",
		      keys[i]);
		fwd1(&p);
		CHECK(res.n_sess == 1 && ndrop() == 0 && res.n_out == 0 &&
			      res.sess_key[0] == keys[i],
		      "to the session of key %u: %u frames, key %u", keys[i], res.n_sess,
		      res.n_sess ? res.sess_key[0] : 0);
		if (res.n_sess == 1) {
			flat(res.sess[0], ob);
			CHECK(ob[RTE_ETHER_HDR_LEN + 8] == 9 && ip4_hdr_ok(ob + RTE_ETHER_HDR_LEN),
			      "session route: TTL %u, checksum", ob[RTE_ETHER_HDR_LEN + 8]);
		}
		res_free();
	}
	/* the pool's other addresses: handed on with no key */
	{
		struct pk p = {.port = 0, .dst4 = IP4(100, 96, 9, 9)};

		fwd1(&p);
		CHECK(res.n_sess == 1 && res.sess_key[0] == EGW_IP_SESSION_NONE,
		      "pool address without a session: key none");
		res_free();
	}
	s4 = A4(IP4(100, 96, 1, 2));
	CHECK(egw_ip_route_session_add(&s4, 32, 8) == -EEXIST, "a second session route refused");
	CHECK(egw_ip_route_add(&s4, 32, EGW_IP_RT_BLACKHOLE, NULL, 0, err, sizeof(err)) == -EEXIST,
	      "a configured route of a session's prefix refused");
	CHECK(egw_ip_route_del(&s4, 32) == -EPERM, "ip route del cannot take a session's route");
	CHECK(egw_ip_route_lookup(&s4, &ri) == 0 && ri.type == EGW_IP_RT_SUBSCRIBER &&
		      ri.session == 7 && ri.len == 32,
	      "lookup: type %u session %u /%u", ri.type, ri.session, ri.len);
	CHECK(strcmp(egw_ip_route_type_name(EGW_IP_RT_SUBSCRIBER), "subscriber") == 0, "type name");

	/* IPv6: the session's /64 */
	memcpy(d6, p6, 16);
	d6[7] = 0x05;
	memset(d6 + 8, 0, 8);
	s6 = A6(d6);
	CHECK(egw_ip_route_session_del(&s6, 64, 0x4001) == -ENOENT, "no /64 yet");
	CHECK(egw_ip_route_session_add(&s6, 64, 9) == 0, "session /64");
	{
		struct pk p = {.port = 0, .v6 = true, .ttl = 10};

		memcpy(p.src6, src6, 16);
		memcpy(p.dst6, d6, 16);
		p.dst6[15] = 0x42;
		fwd1(&p);
		CHECK(res.n_sess == 1 && ndrop() == 0 && res.sess_key[0] == 9,
		      "IPv6 to the session's /64: %u frames", res.n_sess);
		if (res.n_sess == 1) {
			flat(res.sess[0], ob);
			CHECK(ob[RTE_ETHER_HDR_LEN + 7] == 9, "hop limit %u",
			      ob[RTE_ETHER_HDR_LEN + 7]);
		}
		res_free();
	}
	/* without routing: both families in one burst, and a frame that is not IP */
	{
		struct pk a = {.port = 0, .dst4 = IP4(100, 96, 1, 3)};
		struct pk b = {.port = 0, .v6 = true};
		struct pk c = {.port = 0, .dst4 = IP4(100, 96, 9, 9)};
		struct rte_mbuf *m[4];
		uint32_t k[4] = {1, 1, 1, 1};

		memcpy(b.src6, src6, 16);
		memcpy(b.dst6, d6, 16);
		b.dst6[15] = 0x42;
		m[0] = mkp(&a);
		m[1] = mkp(&b);
		m[2] = mkp(&c);
		m[3] = mkp(&a);
		/* not IP: the version nibble of an ARP-sized frame */
		rte_pktmbuf_mtod_offset(m[3], uint8_t *, RTE_ETHER_HDR_LEN)[0] = 0x00;
		egw_ip_session_lookup(ctx, m, 4, k);
		CHECK(k[0] == 0x4001 && k[1] == 9 && k[2] == EGW_IP_SESSION_NONE &&
			      k[3] == EGW_IP_SESSION_NONE,
		      "session lookup: %u %u %u %u", k[0], k[1], k[2], k[3]);
		for (i = 0; i < 4; i++)
			rte_pktmbuf_free(m[i]);
	}
	egw_ip_route_count(cnt);
	CHECK(cnt[0][EGW_IP_RT_SUBSCRIBER] == before[0][EGW_IP_RT_SUBSCRIBER] + 3 &&
		      cnt[1][EGW_IP_RT_SUBSCRIBER] == before[1][EGW_IP_RT_SUBSCRIBER] + 1,
	      "route counts: %u IPv4, %u IPv6 subscriber routes", cnt[0][EGW_IP_RT_SUBSCRIBER],
	      cnt[1][EGW_IP_RT_SUBSCRIBER]);

	/* deleted: the pool's route again */
	CHECK(egw_ip_route_session_del(&s4, 32, 8) == -ENOENT, "delete with another key refused");
	for (i = 0; i < RTE_DIM(keys); i++) {
		x = A4(IP4(100, 96, 1, 2 + i));
		CHECK(egw_ip_route_session_del(&x, 32, keys[i]) == 0, "delete key %u", keys[i]);
	}
	CHECK(egw_ip_route_session_del(&s6, 64, 9) == 0, "delete the /64");
	{
		struct pk p = {.port = 0, .dst4 = IP4(100, 96, 1, 2)};

		fwd1(&p);
		CHECK(res.n_sess == 1 && res.sess_key[0] == EGW_IP_SESSION_NONE,
		      "deleted session route: the pool's, key none");
		res_free();
	}
	CHECK(egw_ip_route_del(&pool4, 16) == 0 && egw_ip_route_del(&pool6, 48) == 0,
	      "pool routes deleted");
	egw_ip_route_count(cnt);
	CHECK(memcmp(cnt, before, sizeof(cnt)) == 0, "route counts back");
}

static void
test_ecmp(void)
{
	static struct {
		uint32_t src, dst;
		uint16_t sport, dport;
		uint8_t proto, path;
	} fl[ECMP_FLOWS];
	const uint32_t gw[4] = {IP4(10, 2, 0, 11), IP4(10, 2, 0, 12), IP4(10, 2, 0, 13),
				IP4(10, 2, 0, 14)};
	unsigned int per[4] = {0}, i, k, pass, moved = 0, bad = 0;
	struct egw_ip_route_info ri;
	struct egw_ip_addr a;

	printf("ecmp: %u flows over 4 paths\n", ECMP_FLOWS);
	CHECK(route_via(IP4(60, 0, 0, 0), 8, gw, 4, UINT16_MAX) == 0, "ECMP route");
	for (i = 0; i < 4; i++)
		CHECK(neigh4(2, gw[i], (uint8_t)(0x21 + i)) == 0, "ECMP neighbour %u", i);
	a = A4(IP4(60, 1, 2, 3));
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.n_paths == 4 && ri.paths[3].port == 2 &&
		      get32(ri.paths[3].gw.a) == gw[3],
	      "ECMP lookup: %u paths", ri.n_paths);
	for (i = 0; i < ECMP_FLOWS; i++) {
		fl[i].src = IP4(11, 0, 0, 0) | (rnd() & 0xffffff);
		fl[i].dst = IP4(60, 0, 0, 0) | (rnd() & 0xffffff);
		fl[i].sport = (uint16_t)rnd();
		fl[i].dport = (uint16_t)rnd();
		fl[i].proto = (rnd() & 1) ? IPPROTO_UDP : IPPROTO_TCP;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ECMP_FLOWS; i += 32) {
			struct rte_mbuf *m[32];
			uint16_t n = (uint16_t)RTE_MIN(32u, ECMP_FLOWS - i);

			for (k = 0; k < n; k++) {
				struct pk p = {.port = 0,
					       .src4 = fl[i + k].src,
					       .dst4 = fl[i + k].dst,
					       .sport = fl[i + k].sport,
					       .dport = fl[i + k].dport,
					       .proto = fl[i + k].proto,
					       .id = (uint16_t)(pass * 77 + k)};

				m[k] = mkp(&p);
			}
			fwd(0, m, n, false);
			if (res.n_out != n || ndrop() != 0)
				bad++;
			for (k = 0; k < res.n_out && k < n; k++) {
				const uint8_t *d = rte_pktmbuf_mtod(res.out[k], const uint8_t *);
				uint8_t path = (uint8_t)(d[5] - 0x21);

				if (path >= 4 || d[0] != 0x02 || d[1] != 0xbb ||
				    res.out_port[k] != 2) {
					bad++;
					continue;
				}
				if (pass == 0) {
					fl[i + k].path = path;
					per[path]++;
				} else if (fl[i + k].path != path) {
					moved++;
				}
			}
			res_free();
		}
	}
	CHECK(bad == 0, "ECMP: %u bursts or frames not forwarded to a path", bad);
	CHECK(moved == 0, "ECMP: %u flows took another path the second time", moved);
	for (i = 0; i < 4; i++)
		CHECK(per[i] >= ECMP_FLOWS * 15 / 100 && per[i] <= ECMP_FLOWS * 35 / 100,
		      "ECMP path %u carried %u of %u flows", i, per[i], ECMP_FLOWS);
	printf("  paths: %u %u %u %u\n", per[0], per[1], per[2], per[3]);
}

/* ---- TTL and checksum ---------------------------------------------------- */

static void
test_ttl(void)
{
	struct rte_ether_addr m2 = gw_mac(2);
	uint32_t len, i, mism = 0;
	uint8_t h[20];

	printf("ttl: decrement, incremental checksum, time exceeded\n");
	/* RFC 1624 section 4: HC 0xDD2F, m 0x5555 -> m' 0x3285: HC' 0x0000 (eqn. 3;
	 * eqn. 2 would give 0xFFFF) */
	CHECK(egw_ip_cksum_adjust(RTE_BE16(0xDD2F), RTE_BE16(0x5555), RTE_BE16(0x3285)) ==
		      RTE_BE16(0x0000),
	      "RFC 1624 example: %#x",
	      rte_be_to_cpu_16(
		      egw_ip_cksum_adjust(RTE_BE16(0xDD2F), RTE_BE16(0x5555), RTE_BE16(0x3285))));
	/* the same words in host order: the sum does not depend on byte order */
	CHECK(egw_ip_cksum_adjust(0xDD2F, 0x5555, 0x3285) == 0x0000, "RFC 1624, host order");
	/* no change leaves the checksum alone */
	CHECK(egw_ip_cksum_adjust(RTE_BE16(0x1234), RTE_BE16(0xabcd), RTE_BE16(0xabcd)) ==
		      RTE_BE16(0x1234),
	      "unchanged word");
	/* random headers: one word changed (TTL/protocol, or any), incremental
	 * update against DPDK's full recompute */
	for (i = 0; i < 100000; i++) {
		uint16_t old, new_, inc, full;
		/* any word but the first (the header length) and the checksum */
		unsigned int w = (i & 1) ? 4 : 1 + rnd() % 9, b;

		for (b = 0; b < 20; b++)
			h[b] = (uint8_t)rnd();
		h[0] = 0x45;
		if (i % 1000 == 0)
			memset(h + 2, i % 2000 == 0 ? 0 : 0xff, 18); /* sums near 0 and 0xffff */
		put16(h + 10, 0);
		put16(h + 10, rte_be_to_cpu_16(rte_ipv4_cksum((struct rte_ipv4_hdr *)h)));
		if (w == 5)
			w = 4; /* not the checksum itself */
		memcpy(&old, h + 2 * w, 2);
		if (w == 4 && (i & 1))
			h[8]--; /* TTL */
		else
			put16(h + 2 * w, (uint16_t)rnd());
		memcpy(&new_, h + 2 * w, 2);
		memcpy(&inc, h + 10, 2);
		inc = egw_ip_cksum_adjust(inc, old, new_);
		put16(h + 10, 0);
		full = rte_ipv4_cksum((struct rte_ipv4_hdr *)h);
		memcpy(h + 10, &inc, 2);
		if (inc != full || !ip4_hdr_ok(h))
			mism++;
	}
	CHECK(mism == 0, "incremental checksum differs from a full recompute in %u headers", mism);

	/* forwarded: TTL - 1, checksum right, Ethernet padding trimmed */
	{
		struct pk p = {.port = 0, .dst4 = IP4(20, 2, 0, 1), .len = 28, .pad = 18};

		len = fwd1(&p);
		CHECK(res.n_out == 1, "TTL 64 forwarded");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len - 18, &m2, 0, 1, "ttl 64");
		res_free();
	}
	for (i = 0; i < 256; i += 37) {
		struct pk p = {.port = 0, .dst4 = IP4(20, 2, 0, 1), .ttl = (int)i + 2, .id = 99};

		if (i + 2 > 255)
			break;
		len = fwd1(&p);
		CHECK(res.n_out == 1, "TTL %u forwarded", i + 2);
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &m2, 0, 1, "ttl");
		res_free();
	}
	/* every checksum value, at TTL 2 and 255: the forwarded header sums
	 * right with its TTL one less (the update and the check the data path
	 * makes without a full sum); off by one bit, the same header is dropped
	 * as a bad checksum */
	{
		static const int ttls[] = {2, 255};
		unsigned int bad_fwd = 0, bad_drop = 0, t;

		for (t = 0; t < RTE_DIM(ttls); t++) {
			for (i = 0; i < 65536; i++) {
				struct pk p = {.port = 0,
					       .dst4 = IP4(20, 2, 0, 1),
					       .ttl = ttls[t],
					       .id = (uint16_t)i};
				struct rte_mbuf *m;
				const uint8_t *ip;

				len = fwd1(&p);
				ip = res.n_out == 1
					     ? rte_pktmbuf_mtod(res.out[0], const uint8_t *) +
						       RTE_ETHER_HDR_LEN
					     : NULL;
				if (ip == NULL || ip[8] != ttls[t] - 1 || !ip4_hdr_ok(ip))
					bad_fwd++;
				res_free();
				fb[RTE_ETHER_HDR_LEN + 10 + (i & 1)] ^= 1;
				m = mk(0, fb, len);
				fwd(0, &m, 1, false);
				if (res.n_out != 0 || res.drop[EGW_IP_DROP_BAD_CKSUM] != 1)
					bad_drop++;
				res_free();
			}
		}
		CHECK(bad_fwd == 0, "%u of 131072 headers forwarded wrong (TTL, checksum)",
		      bad_fwd);
		CHECK(bad_drop == 0, "%u of 131072 bad checksums not dropped as such", bad_drop);
	}
	/* TTL 1 and 0: time exceeded in transit (RFC 792 type 11 code 0) */
	{
		static const int ttls[] = {1, TTL_ZERO};

		for (i = 0; i < RTE_DIM(ttls); i++) {
			struct pk p = {.port = 0, .dst4 = IP4(20, 2, 0, 1), .ttl = ttls[i]};

			fwd1(&p);
			CHECK(only_drop(EGW_IP_DROP_TTL_EXCEEDED), "TTL %d: drops %u",
			      ttls[i] & 255, ndrop());
			len = reply1("ttl exceeded");
			if (len != 0)
				check_icmp4_err(ob, len, fb, 0, 11, 0, 0, false, "time exceeded");
			res_free();
		}
	}
	/* made by edgegw: TTL 1 leaves with TTL 1 */
	{
		struct pk p = {.port = 0, .dst4 = IP4(20, 2, 0, 1), .ttl = 1};
		struct rte_mbuf *m;

		len = build(fb, &p);
		m = mk(0, fb, len);
		fwd_flags(0, &m, 1, false, EGW_IP_F_LOCAL_ORIGIN);
		CHECK(res.n_out == 1 && res.n_reply == 0, "local origin TTL 1 forwarded");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &m2, 0, 0, "local origin");
		res_free();
	}
	/* IPv6: hop limit 2 forwarded with 1; 1 gives time exceeded (RFC 4443 type 3) */
	{
		struct pk p = {.port = 0, .v6 = true, .ttl = 2, .sport = 1, .dport = 2};

		memcpy(p.src6, src6, 16);
		in6(p.dst6, 0x20, 1, 9);
		fwd1(&p);
		CHECK(res.n_out == 1 && ndrop() == 0, "v6 hop limit 2 forwarded");
		if (res.n_out == 1)
			CHECK(rte_pktmbuf_mtod(res.out[0], uint8_t *)[RTE_ETHER_HDR_LEN + 7] == 1,
			      "v6 hop limit 2 -> 1");
		res_free();
		p.ttl = 1;
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_TTL_EXCEEDED), "v6 hop limit 1: drops %u", ndrop());
		len = reply1("v6 hop limit");
		if (len != 0)
			check_icmp6_err(ob, len, fb, 0, 3, 0, 0, "v6 time exceeded");
		res_free();
	}
}

/* ---- MTU ----------------------------------------------------------------- */

/* Fragments of the frame in fb (IPv4, len bytes) in res.out: each within mtu,
 * offsets and MF right, checksums valid, payload back byte for byte. */
static void
check_frags(uint32_t len, uint16_t mtu, unsigned int nexp, const struct rte_ether_addr *dst,
	    uint16_t port)
{
	static uint8_t re[65536];
	const uint8_t *oip = fb + RTE_ETHER_HDR_LEN;
	uint32_t plen = len - RTE_ETHER_HDR_LEN - 20, got = 0, i;
	bool ok = true;

	CHECK(res.n_out == nexp && res.created == nexp - 1,
	      "fragments: %u out, %u created, expected %u", res.n_out, res.created, nexp);
	for (i = 0; i < res.n_out; i++) {
		uint32_t fl = flat(res.out[i], ob), tl, off;
		const uint8_t *ip = ob + RTE_ETHER_HDR_LEN;
		bool mf, last = i + 1 == res.n_out;

		if (fl < RTE_ETHER_HDR_LEN + 20u || memcmp(ob, dst, 6) != 0 ||
		    memcmp(ob + 6, &port_mac[port], 6) != 0 || res.out_port[i] != port) {
			CHECK(false, "fragment %u: MAC header or port %u", i, res.out_port[i]);
			ok = false;
			continue;
		}
		tl = get16(ip + 2);
		off = (get16(ip + 6) & 0x1fffu) * 8;
		mf = (get16(ip + 6) & 0x2000) != 0;
		CHECK(tl <= mtu && tl == fl - RTE_ETHER_HDR_LEN,
		      "fragment %u: %u IP bytes (MTU %u)", i, tl, mtu);
		CHECK(ip4_hdr_ok(ip), "fragment %u: header checksum", i);
		CHECK(mf == !last && !(get16(ip + 6) & 0x4000), "fragment %u: MF %d DF", i, mf);
		CHECK(off == got, "fragment %u: offset %u, expected %u", i, off, got);
		CHECK(last || (tl - 20) % 8 == 0, "fragment %u: %u payload bytes", i, tl - 20);
		CHECK(get16(ip + 4) == get16(oip + 4) && ip[8] == oip[8] - 1 && ip[9] == oip[9] &&
			      get32(ip + 12) == get32(oip + 12) &&
			      get32(ip + 16) == get32(oip + 16),
		      "fragment %u: id, TTL, protocol or addresses", i);
		if (off + tl - 20 <= sizeof(re) && tl >= 20) {
			memcpy(re + off, ip + 20, tl - 20);
			got = off + tl - 20;
		} else {
			ok = false;
		}
	}
	CHECK(ok && got == plen && memcmp(re, oip + 20, plen) == 0,
	      "fragments reassemble to %u of %u bytes, %s", got, plen,
	      got == plen && memcmp(re, oip + 20, plen) == 0 ? "equal" : "different");
}

/* The TTL step for packets another stage forwards (into an ESP tunnel):
 * egw_ip_ttl_burst(); and the source of ICMP errors other stages make:
 * egw_ip_icmp_set_source(). */
static void
test_ttl_burst_icmp_source(void)
{
	struct pk p4 = {.port = 1, .dst4 = IP4(192, 0, 2, 1), .ttl = 64};
	struct pk t1 = {.port = 1, .dst4 = IP4(192, 0, 2, 1), .ttl = 1};
	struct pk h1 = {.port = 1, .v6 = true, .ttl = 1}, p6 = {.port = 1, .v6 = true, .ttl = 64};
	static uint8_t o4[256], o6[256], e4[2048], e6[2048];
	struct rte_mbuf *m[5], *keep[5];
	uint16_t kept[5], k, i, el4 = 0, el6 = 0;

	printf("ttl burst and ICMP sources\n");
	res_free();
	memset(&res, 0, sizeof(res));
	memcpy(h1.src6, src6, 16);
	memcpy(p6.src6, src6, 16);
	in6(h1.dst6, 0xc, 0, 7);
	in6(p6.dst6, 0xc, 0, 7);
	m[0] = mkp(&p4);
	m[1] = mkp(&t1);
	build(o4, &t1);
	m[2] = mkp(&h1);
	build(o6, &h1);
	m[3] = mkp(&p6);
	m[4] = mkp(&p4);
	/* IPv4's ethertype, IPv6's version: not read as IPv6 (an ICMPv6 error
	 * behind an IPv4 ethertype) */
	rte_pktmbuf_mtod_offset(m[4], uint8_t *, RTE_ETHER_HDR_LEN)[0] = 0x60;
	memcpy(keep, m, sizeof(keep));
	k = egw_ip_ttl_burst(ctx, 1, m, 5, kept, &res);
	CHECK(k == 2 && kept[0] == 0 && kept[1] == 3, "kept %u: %u %u", k, kept[0], kept[1]);
	CHECK(res.drop[EGW_IP_DROP_TTL_EXCEEDED] == 2 && res.drop[EGW_IP_DROP_BAD_HEADER] == 1 &&
		      ndrop() == 3,
	      "drops: ttl %u, header %u", res.drop[EGW_IP_DROP_TTL_EXCEEDED],
	      res.drop[EGW_IP_DROP_BAD_HEADER]);
	if (k == 2) {
		uint8_t *ip = rte_pktmbuf_mtod_offset(keep[0], uint8_t *, RTE_ETHER_HDR_LEN);

		CHECK(ip[8] == 63 && ip4_hdr_ok(ip), "IPv4 TTL %u, checksum", ip[8]);
		ip = rte_pktmbuf_mtod_offset(keep[3], uint8_t *, RTE_ETHER_HDR_LEN);
		CHECK(ip[7] == 63, "IPv6 hop limit %u", ip[7]);
		rte_pktmbuf_free(keep[0]);
		rte_pktmbuf_free(keep[3]);
	}
	CHECK(res.n_reply == 2, "%u ICMP errors", res.n_reply);
	for (i = 0; i < res.n_reply; i++) {
		uint8_t *r = rte_pktmbuf_mtod(res.reply[i], uint8_t *);

		if (get16(r + 12) == RTE_ETHER_TYPE_IPV4) {
			el4 = (uint16_t)flat(res.reply[i], e4);
			check_icmp4_err(e4, el4, o4, 1, 11, 0, 0, false, "TTL 1 into a tunnel");
		} else {
			el6 = (uint16_t)flat(res.reply[i], e6);
			check_icmp6_err(e6, el6, o6, 1, 3, 0, 0, "hop limit 1 into a tunnel");
		}
	}
	res_free();
	memset(&res, 0, sizeof(res));

	/* another stage's errors with another source: the interface's after */
	if (el4 != 0 && el6 != 0) {
		struct rte_mbuf *x;
		uint8_t *ip;

		put32(e4 + RTE_ETHER_HDR_LEN + 12, IP4(100, 64, 0, 1));
		put16(e4 + RTE_ETHER_HDR_LEN + 10, 0);
		put16(e4 + RTE_ETHER_HDR_LEN + 10, (uint16_t)~sum16(e4 + RTE_ETHER_HDR_LEN, 20, 0));
		x = mk(1, e4, el4);
		CHECK(egw_ip_icmp_set_source(x, 1), "IPv4 error: source set");
		flat(x, ob);
		check_icmp4_err(ob, el4, o4, 1, 11, 0, 0, false, "IPv4 error, source set");
		CHECK(!egw_ip_icmp_set_source(x, 5), "a port without an address: unchanged");
		rte_pktmbuf_free(x);

		/* an echo reply is no error: left alone */
		x = mk(1, e4, el4);
		ip = rte_pktmbuf_mtod_offset(x, uint8_t *, RTE_ETHER_HDR_LEN);
		ip[20] = 0;
		CHECK(!egw_ip_icmp_set_source(x, 1), "ICMP echo reply left alone");
		rte_pktmbuf_free(x);

		/* IPv6: the checksum covers the source */
		in6(e6 + RTE_ETHER_HDR_LEN + 8, 0x100, 0, 1);
		{
			uint8_t *ic = e6 + RTE_ETHER_HDR_LEN + 40;

			put16(ic + 2, 0);
			put16(ic + 2,
			      l4_cksum(e6 + RTE_ETHER_HDR_LEN, true, ic,
				       (uint32_t)el6 - RTE_ETHER_HDR_LEN - 40, IPPROTO_ICMPV6));
		}
		x = mk(1, e6, el6);
		CHECK(egw_ip_icmp_set_source(x, 1), "IPv6 error: source set");
		flat(x, ob);
		check_icmp6_err(ob, el6, o6, 1, 3, 0, 0, "IPv6 error, source set");
		rte_pktmbuf_free(x);
		/* random sources: the incremental ICMPv6 checksum against a sum */
		for (i = 0; i < 2000; i++) {
			unsigned int b;

			for (b = 0; b < 16; b++)
				e6[RTE_ETHER_HDR_LEN + 8 + b] = (uint8_t)rnd();
			{
				uint8_t *ic = e6 + RTE_ETHER_HDR_LEN + 40;

				put16(ic + 2, 0);
				put16(ic + 2, l4_cksum(e6 + RTE_ETHER_HDR_LEN, true, ic,
						       (uint32_t)el6 - RTE_ETHER_HDR_LEN - 40,
						       IPPROTO_ICMPV6));
			}
			x = mk(1, e6, el6);
			egw_ip_icmp_set_source(x, 1);
			flat(x, ob);
			if (l4_cksum(ob + RTE_ETHER_HDR_LEN, true, ob + RTE_ETHER_HDR_LEN + 40,
				     (uint32_t)el6 - RTE_ETHER_HDR_LEN - 40, IPPROTO_ICMPV6) != 0) {
				CHECK(false, "ICMPv6 checksum after a source of round %u", i);
				rte_pktmbuf_free(x);
				break;
			}
			rte_pktmbuf_free(x);
		}
	}
}

static void
test_mtu(void)
{
	struct rte_ether_addr m12 = gw_mac(0x12), m16 = gw_mac(0x16);
	uint8_t p48[16], g[16];
	struct egw_ip_addr ga;
	uint32_t gw = IP4(10, 1, 0, 2), len;

	printf("mtu: too big, fragmentation\n");
	CHECK(route_via(IP4(70, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via port 1");
	CHECK(neigh4(1, gw, 0x12) == 0, "port 1 gateway");
	in6(p48, 0x70, 0, 0);
	in6(g, 1, 0, 2);
	CHECK(route_via6(p48, 48, g, UINT16_MAX) == 0, "v6 route via port 1");
	ga = A6(g);
	CHECK(egw_ip_neigh_add(1, 0, &ga, &m16) == 0, "v6 port 1 gateway");

	/* DF, exactly the MTU: forwarded; one byte more: fragmentation needed
	 * with the next-hop MTU (RFC 1191: low 16 bits of bytes 4-7) */
	{
		struct pk p = {.port = 0, .dst4 = IP4(70, 0, 0, 1), .frag = 0x4000, .len = 1400};

		len = fwd1(&p);
		CHECK(res.n_out == 1 && ndrop() == 0, "DF 1400 on MTU 1400 forwarded");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &m12, 1, 1, "DF 1400");
		res_free();
		p.len = 1401;
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_TOO_BIG), "DF 1401: drops %u", ndrop());
		len = reply1("DF 1401");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 0, 3, 4, 1400, false, "frag needed 1401");
		res_free();
		p.len = 1500;
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_TOO_BIG), "DF 1500: drops %u", ndrop());
		len = reply1("DF 1500");
		if (len != 0) {
			check_icmp4_err(ob, len, fb, 0, 3, 4, 1400, false, "frag needed");
			CHECK(get16(ob + RTE_ETHER_HDR_LEN + 20 + 6) == 1400,
			      "next-hop MTU field %u", get16(ob + RTE_ETHER_HDR_LEN + 20 + 6));
		}
		res_free();
	}
	/* no DF: fragments (RFC 791) */
	{
		struct pk p = {.port = 0, .dst4 = IP4(70, 0, 0, 1), .len = 1500, .id = 0x1234};

		len = fwd1(&p);
		CHECK(ndrop() == 0, "1500 without DF: drops %u", ndrop());
		check_frags(len, 1400, 2, &m12, 1);
		res_free();
		p.len = 4000;
		p.id = 0x2345;
		len = fwd1(&p);
		check_frags(len, 1400, 3, &m12, 1);
		res_free();
		/* a fragment fragmented again: MF stays set on the last piece */
		p.len = 1500;
		p.frag = 0x2000 | 100;
		len = fwd1(&p);
		CHECK(res.n_out == 2, "fragment of a fragment: %u", res.n_out);
		if (res.n_out == 2) {
			flat(res.out[1], ob);
			CHECK((get16(ob + RTE_ETHER_HDR_LEN + 6) & 0x2000) &&
				      (get16(ob + RTE_ETHER_HDR_LEN + 6) & 0x1fff) == 100 + 172,
			      "second piece: flags/offset %#x", get16(ob + RTE_ETHER_HDR_LEN + 6));
		}
		res_free();
	}
	/* IPv6 never fragments on the way: packet too big (RFC 4443 type 2) */
	{
		struct pk p = {.port = 0, .v6 = true, .len = 1400};

		memcpy(p.src6, src6, 16);
		in6(p.dst6, 0x70, 0, 1);
		fwd1(&p);
		CHECK(res.n_out == 1 && ndrop() == 0, "v6 1400 on MTU 1400 forwarded");
		res_free();
		p.len = 1500;
		len = fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_TOO_BIG), "v6 1500: drops %u", ndrop());
		len = reply1("v6 too big");
		if (len != 0)
			check_icmp6_err(ob, len, fb, 0, 2, 0, 1400, "packet too big");
		res_free();
	}
}

/* ---- ICMP rules ---------------------------------------------------------- */

static void
test_icmp_rules(void)
{
	struct egw_ip_ctx_stats s0, s1;
	uint32_t len, i;

	printf("icmp: when not to send, source address, rate limit\n");
	/* not about an ICMP error (RFC 1812 4.3.2.7); about a query, yes */
	{
		static const uint8_t types[] = {3, 11, 12, 5, 4, 99};

		for (i = 0; i < RTE_DIM(types); i++) {
			struct pk p = {.port = 0,
				       .dst4 = IP4(20, 2, 0, 1),
				       .ttl = 1,
				       .proto = IPPROTO_ICMP,
				       .icmp_type = types[i]};

			fwd1(&p);
			CHECK(only_drop(EGW_IP_DROP_TTL_EXCEEDED) && res.n_reply == 0,
			      "ICMP type %u with TTL 1: %u replies", types[i], res.n_reply);
			res_free();
		}
	}
	{
		struct pk q = {.port = 0,
			       .dst4 = IP4(20, 2, 0, 1),
			       .ttl = 1,
			       .proto = IPPROTO_ICMP,
			       .icmp_type = 8};

		fwd1(&q);
		len = reply1("echo request with TTL 1");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 0, 11, 0, 0, false, "about an echo");
		res_free();
	}
	/* not about a link-layer broadcast or multicast */
	{
		struct pk p = {.port = 0, .l2dst = &mac_bcast, .dst4 = IP4(20, 2, 0, 1), .ttl = 1};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_BROADCAST) && res.n_reply == 0,
		      "L2 broadcast: drops %u, %u replies", res.drop[EGW_IP_DROP_BROADCAST],
		      res.n_reply);
		res_free();
		p.l2dst = &mac_mcast;
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_MULTICAST) && res.n_reply == 0,
		      "L2 multicast: drops %u, %u replies", res.drop[EGW_IP_DROP_MULTICAST],
		      res.n_reply);
		res_free();
		/* to no route: no net unreachable either */
		p.l2dst = &mac_bcast;
		p.ttl = 64;
		p.dst4 = IP4(21, 0, 0, 1);
		fwd1(&p);
		CHECK(res.n_reply == 0 && ndrop() == 1, "L2 broadcast to no route: %u replies",
		      res.n_reply);
		res_free();
	}
	/* not about a fragment other than the first */
	{
		struct pk p = {.port = 0, .dst4 = IP4(20, 2, 0, 1), .ttl = 1, .frag = 0x2000 | 100};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_TTL_EXCEEDED) && res.n_reply == 0,
		      "non-first fragment: %u replies", res.n_reply);
		res_free();
		p.frag = 100; /* the last fragment */
		fwd1(&p);
		CHECK(res.n_reply == 0, "last fragment: %u replies", res.n_reply);
		res_free();
		p.frag = 0x2000; /* the first */
		fwd1(&p);
		CHECK(res.n_reply == 1, "first fragment: %u replies", res.n_reply);
		res_free();
	}
	/* the source is the ingress port's address */
	{
		struct pk p = {
			.port = 1, .src4 = IP4(12, 0, 0, 1), .dst4 = IP4(20, 2, 0, 1), .ttl = 1};

		fwd1(&p);
		len = reply1("on port 1");
		if (len != 0) {
			check_icmp4_err(ob, len, fb, 1, 11, 0, 0, false, "from port 1");
			CHECK(get32(ob + RTE_ETHER_HDR_LEN + 12) == IP4(10, 1, 0, 1),
			      "ICMP source %#x", get32(ob + RTE_ETHER_HDR_LEN + 12));
		}
		res_free();
		p.port = 2;
		fwd1(&p);
		len = reply1("on port 2");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 2, 11, 0, 0, false, "from port 2");
		res_free();
	}
	{
		struct pk p = {.port = 1, .v6 = true, .ttl = 1};

		memcpy(p.src6, src6, 16);
		in6(p.dst6, 0x20, 1, 9);
		fwd1(&p);
		len = reply1("v6 on port 1");
		if (len != 0)
			check_icmp6_err(ob, len, fb, 1, 3, 0, 0, "v6 from port 1");
		res_free();
		/* ICMPv6 errors are not answered; an echo request is */
		p.proto = IPPROTO_ICMPV6;
		p.icmp_type = 1;
		fwd1(&p);
		CHECK(res.n_reply == 0 && only_drop(EGW_IP_DROP_TTL_EXCEEDED),
		      "ICMPv6 error with hop limit 1: %u replies", res.n_reply);
		res_free();
		p.icmp_type = 128;
		fwd1(&p);
		CHECK(res.n_reply == 1, "ICMPv6 echo with hop limit 1: %u replies", res.n_reply);
		res_free();
	}
	/* rate limit: a bucket of 5 (refilled at 10/s) for 100 expired packets */
	{
		struct rte_mbuf *m[100];

		CHECK(egw_ip_icmp_ratelimit(0, 5) == -EINVAL &&
			      egw_ip_icmp_ratelimit(10, 0) == -EINVAL,
		      "zero rate or burst");
		CHECK(egw_ip_icmp_ratelimit(10, 5) == 0, "icmp_ratelimit(10, 5)");
		rte_delay_ms(1001); /* a full bucket */
		for (i = 0; i < RTE_DIM(m); i++) {
			struct pk p = {.port = 0,
				       .src4 = IP4(11, 0, 1, (uint8_t)i),
				       .dst4 = IP4(20, 2, 0, 1),
				       .ttl = 1,
				       .id = (uint16_t)i};

			m[i] = mkp(&p);
		}
		egw_ip_ctx_stats(ctx, &s0);
		fwd(0, m, RTE_DIM(m), false);
		egw_ip_ctx_stats(ctx, &s1);
		CHECK(res.n_reply <= 5 && res.n_reply >= 4, "rate limit: %u ICMP errors of 100",
		      res.n_reply);
		CHECK(res.drop[EGW_IP_DROP_TTL_EXCEEDED] == 100, "rate limit: %u drops",
		      res.drop[EGW_IP_DROP_TTL_EXCEEDED]);
		CHECK(s1.icmp_ratelimited - s0.icmp_ratelimited == (uint64_t)(100 - res.n_reply),
		      "rate limited counted %" PRIu64, s1.icmp_ratelimited - s0.icmp_ratelimited);
		CHECK(s1.icmp_errors - s0.icmp_errors == res.n_reply, "icmp_errors counted");
		res_free();
		CHECK(egw_ip_icmp_ratelimit(1000000, 100000) == 0, "icmp_ratelimit back");
		rte_delay_ms(2);
	}
}

/* ---- martians and malformed headers -------------------------------------- */

enum mangle {
	MG_NONE,
	MG_TOTLEN_LONG,  /* total length past the frame */
	MG_IHL4,         /* ihl 4 */
	MG_VER6,         /* version 6 in an IPv4 ethertype */
	MG_TOTLEN_SHORT, /* total length below the header */
	MG_CKSUM,        /* header checksum off by one */
	MG_TRUNC,        /* 10 bytes of header */
	MG_PLEN_LONG,    /* IPv6 payload length past the frame */
	MG_VER4,         /* version 4 in an IPv6 ethertype */
};

static void
test_martians(void)
{
	static const struct {
		uint32_t src, dst;
		enum mangle mg;
		unsigned int drop;
	} m4[] = {
		{IP4(0, 1, 2, 3), IP4(20, 2, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_SRC},
		{IP4(127, 0, 0, 1), IP4(20, 2, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_SRC},
		{IP4(224, 0, 0, 1), IP4(20, 2, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_SRC},
		{IP4(240, 0, 0, 1), IP4(20, 2, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_SRC},
		{IP4(255, 255, 255, 255), IP4(20, 2, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_SRC},
		{SRC4, IP4(127, 0, 0, 1), MG_NONE, EGW_IP_DROP_MARTIAN_DST},
		{SRC4, IP4(0, 0, 0, 7), MG_NONE, EGW_IP_DROP_MARTIAN_DST},
		{SRC4, IP4(224, 0, 0, 5), MG_NONE, EGW_IP_DROP_MULTICAST},
		{SRC4, IP4(20, 2, 0, 1), MG_TOTLEN_LONG, EGW_IP_DROP_BAD_HEADER},
		{SRC4, IP4(20, 2, 0, 1), MG_IHL4, EGW_IP_DROP_BAD_HEADER},
		{SRC4, IP4(20, 2, 0, 1), MG_VER6, EGW_IP_DROP_BAD_HEADER},
		{SRC4, IP4(20, 2, 0, 1), MG_TOTLEN_SHORT, EGW_IP_DROP_BAD_HEADER},
		{SRC4, IP4(20, 2, 0, 1), MG_TRUNC, EGW_IP_DROP_BAD_HEADER},
		{SRC4, IP4(20, 2, 0, 1), MG_CKSUM, EGW_IP_DROP_BAD_CKSUM},
	};
	static const struct {
		uint8_t src[16];
		enum mangle mg;
		unsigned int drop;
	} m6[] = {
		{{[15] = 1}, MG_NONE, EGW_IP_DROP_MARTIAN_SRC},             /* ::1 */
		{{0}, MG_NONE, EGW_IP_DROP_MARTIAN_SRC},                    /* :: */
		{{0xff, 0x02, [15] = 1}, MG_NONE, EGW_IP_DROP_MARTIAN_SRC}, /* ff02::1 */
		{{[10] = 0xff, 0xff, 1, 2, 3, 4},
		 MG_NONE,
		 EGW_IP_DROP_MARTIAN_SRC}, /* ::ffff:1.2.3.4 */
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0xff, [15] = 1}, MG_PLEN_LONG, EGW_IP_DROP_BAD_HEADER},
		{{0x20, 0x01, 0x0d, 0xb8, 0, 0xff, [15] = 1}, MG_VER4, EGW_IP_DROP_BAD_HEADER},
	};
	uint32_t i, len;

	printf("martians and malformed headers\n");
	for (i = 0; i < RTE_DIM(m4); i++) {
		struct pk p = {.port = 0, .src4 = m4[i].src, .dst4 = m4[i].dst};
		uint8_t *ip = fb + RTE_ETHER_HDR_LEN;
		struct rte_mbuf *m;

		len = build(fb, &p);
		switch (m4[i].mg) {
		case MG_TOTLEN_LONG: put16(ip + 2, 65); break;
		case MG_IHL4: ip[0] = 0x44; break;
		case MG_VER6: ip[0] = 0x65; break;
		case MG_TOTLEN_SHORT: put16(ip + 2, 19); break;
		case MG_CKSUM: put16(ip + 10, (uint16_t)(get16(ip + 10) + 1)); break;
		case MG_TRUNC: len = RTE_ETHER_HDR_LEN + 10; break;
		default: break;
		}
		if (m4[i].mg != MG_CKSUM) {
			put16(ip + 10, 0);
			put16(ip + 10, (uint16_t)~sum16(ip, 20, 0));
		}
		m = mk(0, fb, len);
		fwd(0, &m, 1, false);
		CHECK(only_drop(m4[i].drop) && res.n_reply == 0,
		      "v4 case %u (%#x -> %#x, mangle %d): %u drops, %s %u, %u replies", i,
		      m4[i].src, m4[i].dst, m4[i].mg, ndrop(), egw_ip_drop_name(m4[i].drop),
		      res.drop[m4[i].drop], res.n_reply);
		res_free();
	}
	for (i = 0; i < RTE_DIM(m6); i++) {
		struct pk p = {.port = 0, .v6 = true};
		uint8_t *ip = fb + RTE_ETHER_HDR_LEN;
		struct rte_mbuf *m;

		memcpy(p.src6, m6[i].src, 16);
		in6(p.dst6, 0x20, 1, 9);
		len = build(fb, &p);
		if (m6[i].mg == MG_PLEN_LONG)
			put16(ip + 4, 25);
		else if (m6[i].mg == MG_VER4)
			ip[0] = 0x40;
		m = mk(0, fb, len);
		fwd(0, &m, 1, true);
		CHECK(only_drop(m6[i].drop) && res.n_reply == 0,
		      "v6 case %u (mangle %d): %u drops, %s %u", i, m6[i].mg, ndrop(),
		      egw_ip_drop_name(m6[i].drop), res.drop[m6[i].drop]);
		res_free();
	}
	/* a burst with good and bad mixed: each counted once, the good ones out */
	{
		struct rte_mbuf *m[4];
		struct pk good = {.port = 0, .dst4 = IP4(20, 2, 0, 1)};
		struct pk bad = {.port = 0, .src4 = IP4(127, 0, 0, 1), .dst4 = IP4(20, 2, 0, 1)};

		m[0] = mkp(&good);
		m[1] = mkp(&bad);
		m[2] = mkp(&good);
		m[3] = mkp(&bad);
		fwd(0, m, 4, false);
		CHECK(res.n_out == 2 && res.drop[EGW_IP_DROP_MARTIAN_SRC] == 2 && ndrop() == 2,
		      "mixed burst: %u out, %u drops", res.n_out, ndrop());
		res_free();
	}
}

/* ---- echo ---------------------------------------------------------------- */

static void
test_echo(void)
{
	uint32_t len, rlen;

	printf("echo: ICMP and ICMPv6 to edgegw\n");
	{
		struct pk p = {.port = 0,
			       .src4 = IP4(10, 0, 0, 50),
			       .dst4 = port_ip4[0],
			       .proto = IPPROTO_ICMP,
			       .icmp_type = 8,
			       .ttl = 7,
			       .len = 84,
			       .id = 0x4242};
		const uint8_t *ip = ob + RTE_ETHER_HDR_LEN, *oip = fb + RTE_ETHER_HDR_LEN;
		struct egw_ip_ctx_stats s0, s1;

		egw_ip_ctx_stats(ctx, &s0);
		len = fwd1(&p);
		egw_ip_ctx_stats(ctx, &s1);
		CHECK(ndrop() == 0 && res.n_local == 0, "echo: drops %u, local %u", ndrop(),
		      res.n_local);
		rlen = reply1("echo");
		CHECK(rlen == len, "echo reply of %u bytes, request %u", rlen, len);
		if (rlen == len) {
			CHECK(memcmp(ob, &mac_peer, 6) == 0 && memcmp(ob + 6, &port_mac[0], 6) == 0,
			      "echo reply MACs");
			CHECK(get32(ip + 12) == port_ip4[0] && get32(ip + 16) == IP4(10, 0, 0, 50),
			      "echo reply addresses %#x -> %#x", get32(ip + 12), get32(ip + 16));
			CHECK(ip[8] == 64 && ip4_hdr_ok(ip), "echo reply TTL %u / header checksum",
			      ip[8]);
			CHECK(ip[20] == 0 && ip[21] == 0 &&
				      l4_cksum(ip, false, ip + 20, 64, IPPROTO_ICMP) == 0,
			      "echo reply type %u code %u, ICMP checksum", ip[20], ip[21]);
			CHECK(memcmp(ip + 24, oip + 24, 60) == 0, "echo reply id, sequence, data");
		}
		CHECK(s1.echo_replies - s0.echo_replies == 1, "echo_replies counted");
		res_free();
		/* to the address of another port: answered; the reply goes back out of the
		 * ingress port with that port's MAC (checked in test_bug_echo_mac) */
		p.dst4 = port_ip4[1];
		fwd1(&p);
		rlen = reply1("echo to port 1's address");
		if (rlen != 0)
			CHECK(get32(ip + 12) == port_ip4[1] && ip[20] == 0,
			      "echo to port 1's address: from %#x", get32(ip + 12));
		res_free();
		/* a bad ICMP checksum */
		p.dst4 = port_ip4[0];
		len = build(fb, &p);
		fb[RTE_ETHER_HDR_LEN + 20 + 10] ^= 1;
		{
			struct rte_mbuf *m = mk(0, fb, len);

			fwd(0, &m, 1, false);
		}
		CHECK(only_drop(EGW_IP_DROP_ECHO_BAD) && res.n_reply == 0, "bad echo: drops %u",
		      ndrop());
		res_free();
		/* to the subnet broadcast: not answered */
		p.dst4 = IP4(10, 0, 0, 255);
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_BROADCAST) && res.n_reply == 0, "echo to broadcast");
		res_free();
	}
	/* TTL 1 to edgegw itself: delivered, not expired (RFC 1812 5.3.1) */
	{
		struct pk p = {.port = 0,
			       .dst4 = port_ip4[0],
			       .proto = IPPROTO_ICMP,
			       .icmp_type = 8,
			       .ttl = 1};

		fwd1(&p);
		CHECK(ndrop() == 0 && res.n_reply == 1 &&
			      rte_pktmbuf_mtod(res.reply[0], uint8_t *)[RTE_ETHER_HDR_LEN + 20] ==
				      0,
		      "echo with TTL 1: %u drops, %u replies", ndrop(), res.n_reply);
		res_free();
	}
	/* not an echo: the caller's (exception path) */
	{
		struct pk p = {.port = 0, .dst4 = port_ip4[0], .sport = 5000, .dport = 179};

		len = fwd1(&p);
		CHECK(res.n_local == 1 && ndrop() == 0 && res.n_reply == 0,
		      "UDP to edgegw: %u local", res.n_local);
		if (res.n_local == 1)
			CHECK(flat(res.local[0], ob) == len && memcmp(ob, fb, len) == 0,
			      "the local packet is untouched");
		res_free();
		p.proto = IPPROTO_ICMP;
		p.icmp_type = 13; /* timestamp: not answered here */
		fwd1(&p);
		CHECK(res.n_local == 1 && res.n_reply == 0, "ICMP timestamp to edgegw: local");
		res_free();
	}
	/* ICMPv6 echo */
	{
		struct pk p = {.port = 0,
			       .v6 = true,
			       .proto = IPPROTO_ICMPV6,
			       .icmp_type = 128,
			       .ttl = 9,
			       .len = 40 + 64,
			       .id = 0x77};
		const uint8_t *ip = ob + RTE_ETHER_HDR_LEN, *oip = fb + RTE_ETHER_HDR_LEN;

		memcpy(p.src6, src6, 16);
		memcpy(p.dst6, port_ip6[0], 16);
		len = fwd1(&p);
		CHECK(ndrop() == 0, "v6 echo: drops %u", ndrop());
		rlen = reply1("v6 echo");
		CHECK(rlen == len, "v6 echo reply of %u bytes", rlen);
		if (rlen == len) {
			CHECK(memcmp(ob, &mac_peer, 6) == 0 && memcmp(ob + 6, &port_mac[0], 6) == 0,
			      "v6 echo reply MACs");
			CHECK(memcmp(ip + 8, port_ip6[0], 16) == 0 &&
				      memcmp(ip + 24, src6, 16) == 0,
			      "v6 echo reply addresses");
			CHECK(ip[7] == 64 && ip[40] == 129 && ip[41] == 0,
			      "v6 echo reply hop limit %u type %u", ip[7], ip[40]);
			CHECK(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip,
							   ip + 40) == 0 &&
				      l4_cksum(ip, true, ip + 40, 64, IPPROTO_ICMPV6) == 0,
			      "v6 echo reply checksum");
			CHECK(memcmp(ip + 44, oip + 44, 60) == 0,
			      "v6 echo reply id, sequence, data");
		}
		res_free();
		/* a bad checksum */
		len = build(fb, &p);
		fb[RTE_ETHER_HDR_LEN + 40 + 20] ^= 0x10;
		{
			struct rte_mbuf *m = mk(0, fb, len);

			fwd(0, &m, 1, true);
		}
		CHECK(only_drop(EGW_IP_DROP_ECHO_BAD), "bad v6 echo: drops %u", ndrop());
		res_free();
	}
}

/* ---- neighbours: frames -------------------------------------------------- */

/* An ARP frame received on port. */
static struct rte_mbuf *
arp_frame(uint16_t port, const struct rte_ether_addr *l2dst, uint16_t op,
	  const struct rte_ether_addr *sha, uint32_t sip, const struct rte_ether_addr *tha,
	  uint32_t tip)
{
	uint8_t *a = fb + RTE_ETHER_HDR_LEN;

	memset(fb, 0, 60);
	memcpy(fb, l2dst, 6);
	memcpy(fb + 6, sha, 6);
	put16(fb + 12, RTE_ETHER_TYPE_ARP);
	put16(a, 1);
	put16(a + 2, RTE_ETHER_TYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, sha, 6);
	put32(a + 14, sip);
	if (tha != NULL)
		memcpy(a + 18, tha, 6);
	put32(a + 24, tip);
	return mk(port, fb, 60);
}

static void
arp_in(uint16_t port, const struct rte_ether_addr *l2dst, uint16_t op,
       const struct rte_ether_addr *sha, uint32_t sip, const struct rte_ether_addr *tha,
       uint32_t tip)
{
	egw_ip_ctrl_input(arp_frame(port, l2dst, op, sha, sip, tha, tip));
}

/* An ND message (NS or NA) received on port 0; opt_type 0: no option. */
static struct rte_mbuf *
nd_frame(uint8_t type, uint8_t flags, const uint8_t src[16], const uint8_t dst[16],
	 const uint8_t target[16], uint8_t opt_type, const struct rte_ether_addr *lla, uint8_t hlim)
{
	uint8_t *ip = fb + RTE_ETHER_HDR_LEN, *l4 = ip + 40;
	uint16_t plen = (uint16_t)(24 + (opt_type != 0 ? 8 : 0));

	memset(fb, 0, RTE_ETHER_HDR_LEN + 40 + 32);
	if (dst[0] == 0xff) {
		fb[0] = 0x33;
		fb[1] = 0x33;
		memcpy(fb + 2, dst + 12, 4);
	} else {
		memcpy(fb, &port_mac[0], 6);
	}
	memcpy(fb + 6, lla != NULL ? lla : &mac_peer, 6);
	put16(fb + 12, RTE_ETHER_TYPE_IPV6);
	put32(ip, 0x60000000);
	put16(ip + 4, plen);
	ip[6] = IPPROTO_ICMPV6;
	ip[7] = hlim;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	l4[0] = type;
	l4[4] = flags;
	memcpy(l4 + 8, target, 16);
	if (opt_type != 0) {
		l4[24] = opt_type;
		l4[25] = 1;
		memcpy(l4 + 26, lla, 6);
	}
	put16(l4 + 2, l4_cksum(ip, true, l4, plen, IPPROTO_ICMPV6));
	return mk(0, fb, RTE_ETHER_HDR_LEN + 40u + plen);
}

/* ---- neighbours: ARP ----------------------------------------------------- */

static void
test_arp(void)
{
	const struct rte_ether_addr mx = {{0x02, 0xcc, 0, 0, 0, 0x77}};
	const struct rte_ether_addr my = {{0x02, 0xcc, 0, 0, 0, 0x78}};
	const struct rte_ether_addr mz = {{0x02, 0xcc, 0, 0, 0, 0x79}};
	const struct rte_ether_addr evil = {{0x02, 0xee, 0xee, 0, 0, 1}};
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a;
	unsigned int before;
	uint64_t c0;
	const uint8_t *r, *ra;

	printf("arp: requests, replies, gratuitous, conflicts\n");
	/* a request for our address: answered (RFC 826), the sender learnt STALE */
	cap_clear();
	arp_in(0, &mac_bcast, 1, &mx, IP4(10, 0, 0, 77), NULL, port_ip4[0]);
	CHECK(ncap == 1 && cap[0].port == 0, "ARP request: %u frames sent", ncap);
	r = cap[0].b;
	ra = r + RTE_ETHER_HDR_LEN;
	CHECK(ncap == 1 && memcmp(r, &mx, 6) == 0 && memcmp(r + 6, &port_mac[0], 6) == 0 &&
		      get16(r + 12) == RTE_ETHER_TYPE_ARP,
	      "ARP reply MAC header");
	CHECK(get16(ra) == 1 && get16(ra + 2) == RTE_ETHER_TYPE_IPV4 && ra[4] == 6 && ra[5] == 4 &&
		      get16(ra + 6) == 2,
	      "ARP reply hardware/protocol/op %u", get16(ra + 6));
	CHECK(memcmp(ra + 8, &port_mac[0], 6) == 0 && get32(ra + 14) == port_ip4[0] &&
		      memcmp(ra + 18, &mx, 6) == 0 && get32(ra + 24) == IP4(10, 0, 0, 77),
	      "ARP reply sender/target fields");
	a = A4(IP4(10, 0, 0, 77));
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.state == EGW_IP_NS_STALE && ni.port == 0 &&
		      rte_is_same_ether_addr(&ni.mac, &mx),
	      "10.0.0.77 learnt: state %s", egw_ip_neigh_state_name(ni.state));
	/* and traffic to it goes straight to its MAC */
	{
		struct pk p = {.port = 1, .dst4 = IP4(10, 0, 0, 77)};
		uint32_t len = fwd1(&p);

		CHECK(res.n_out == 1 && res.out_port[0] == 0, "to a learnt neighbour");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &mx, 0, 1, "to 10.0.0.77");
		res_free();
	}

	/* an unsolicited reply creates nothing (arp_accept=0) */
	before = neigh_count();
	c0 = ctr("arp_unsolicited");
	cap_clear();
	arp_in(0, &port_mac[0], 2, &my, IP4(10, 0, 0, 78), &port_mac[0], port_ip4[0]);
	a = A4(IP4(10, 0, 0, 78));
	CHECK(!neigh_lookup(&a, NULL, NULL) && neigh_count() == before && ncap == 0,
	      "an unsolicited ARP reply made an entry");
	CHECK(ctr("arp_unsolicited") == c0 + 1, "arp_unsolicited counted");
	/* a reply about someone else's question (not to us) changes nothing */
	arp_in(0, &port_mac[0], 2, &mz, IP4(10, 0, 0, 77), &my, IP4(10, 0, 0, 99));
	a = A4(IP4(10, 0, 0, 77));
	CHECK(neigh_lookup(&a, &ni, NULL) && rte_is_same_ether_addr(&ni.mac, &mx) &&
		      ni.state == EGW_IP_NS_STALE,
	      "a reply to another host changed 10.0.0.77");
	CHECK(neigh_count() == before && ncap == 0, "a reply to another host made an entry");

	/* gratuitous ARP from a known neighbour with a new MAC: it moved */
	arp_in(0, &mac_bcast, 1, &mz, IP4(10, 0, 0, 77), NULL, IP4(10, 0, 0, 77));
	CHECK(neigh_lookup(&a, &ni, NULL) && rte_is_same_ether_addr(&ni.mac, &mz) &&
		      ni.state == EGW_IP_NS_STALE,
	      "gratuitous ARP: MAC %02x state %s", ni.mac.addr_bytes[5],
	      egw_ip_neigh_state_name(ni.state));
	CHECK(ncap == 0, "a gratuitous ARP was answered");
	/* a gratuitous ARP from a stranger creates nothing */
	arp_in(0, &mac_bcast, 1, &my, IP4(10, 0, 0, 88), NULL, IP4(10, 0, 0, 88));
	a = A4(IP4(10, 0, 0, 88));
	CHECK(!neigh_lookup(&a, NULL, NULL), "a stranger's gratuitous ARP made an entry");

	/* a sender claiming edgegw's own address changes nothing */
	before = neigh_count();
	c0 = ctr("arp_conflict");
	arp_in(0, &mac_bcast, 1, &evil, port_ip4[0], NULL, port_ip4[0]);
	arp_in(0, &mac_bcast, 1, &evil, port_ip4[0], NULL, IP4(10, 0, 0, 77));
	arp_in(0, &port_mac[0], 2, &evil, port_ip4[0], &port_mac[0], port_ip4[0]);
	a = A4(port_ip4[0]);
	CHECK(!neigh_lookup(&a, NULL, NULL) && neigh_count() == before && ncap == 0,
	      "a sender with edgegw's address changed the table or was answered");
	CHECK(ctr("arp_conflict") == c0 + 3, "arp_conflict counted %" PRIu64,
	      ctr("arp_conflict") - c0);
	/* and edgegw still answers for its address, and routes to it */
	{
		struct pk p = {.port = 0, .src4 = IP4(10, 0, 0, 50), .dst4 = port_ip4[0]};

		fwd1(&p);
		CHECK(res.n_local == 1, "10.0.0.1 is still local");
		res_free();
	}

	/* malformed: wrong hardware length, multicast sender MAC, short frame */
	{
		struct rte_mbuf *m =
			arp_frame(0, &mac_bcast, 1, &my, IP4(10, 0, 0, 60), NULL, port_ip4[0]);

		c0 = ctr("arp_bad");
		rte_pktmbuf_mtod(m, uint8_t *)[RTE_ETHER_HDR_LEN + 4] = 8;
		egw_ip_ctrl_input(m);
		m = arp_frame(0, &mac_bcast, 1, &mac_mcast, IP4(10, 0, 0, 60), NULL, port_ip4[0]);
		egw_ip_ctrl_input(m);
		m = arp_frame(0, &mac_bcast, 1, &my, IP4(10, 0, 0, 60), NULL, port_ip4[0]);
		rte_pktmbuf_trim(m, 60 - RTE_ETHER_HDR_LEN - 20);
		egw_ip_ctrl_input(m);
		a = A4(IP4(10, 0, 0, 60));
		CHECK(ncap == 0 && !neigh_lookup(&a, NULL, NULL) && ctr("arp_bad") == c0 + 3,
		      "malformed ARP: %u sent, arp_bad +%" PRIu64, ncap, ctr("arp_bad") - c0);
	}
	a = A4(IP4(10, 0, 0, 77));
	CHECK(egw_ip_neigh_del(0, 0, &a) == 0, "delete 10.0.0.77");
	CHECK(egw_ip_neigh_del(0, 0, &a) == -ENOENT, "delete 10.0.0.77 again");
	cap_clear();
}

/* ---- neighbours: hold queue ---------------------------------------------- */

static void
test_hold(void)
{
	const struct rte_ether_addr mg = {{0x02, 0xcc, 0, 0, 0, 0x09}};
	const struct rte_ether_addr mg2 = {{0x02, 0xcc, 0, 0, 0, 0x19}};
	uint32_t gw = IP4(10, 0, 0, 9), i;
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a = A4(gw);
	uint64_t held0 = ctr("held"), ovf0 = ctr("held_overflow"), sent0 = ctr("held_sent");
	const uint8_t *arp;

	printf("hold: packets waiting for ARP\n");
	CHECK(route_via(IP4(80, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via 10.0.0.9");
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.state == EGW_IP_NS_INCOMPLETE && ni.refs == 1,
	      "the gateway waits INCOMPLETE: %s, %u refs", egw_ip_neigh_state_name(ni.state),
	      ni.refs);
	cap_clear();
	for (i = 1; i <= 5; i++) {
		struct pk p = {.port = 1,
			       .src4 = IP4(12, 0, 0, 1),
			       .dst4 = IP4(80, 0, 0, 1),
			       .id = (uint16_t)i};

		fwd1(&p);
		CHECK(res.n_ctrl == 1 && res.n_out == 0 && ndrop() == 0,
		      "packet %u to an unresolved gateway: %u to the control path", i, res.n_ctrl);
		if (res.n_ctrl == 1) {
			egw_ip_ctrl_input(res.ctrl[0]);
			res.n_ctrl = 0;
		}
		res_free();
	}
	CHECK(ncap == 1, "%u frames sent for 5 waiting packets, expected 1 ARP request", ncap);
	arp = cap[0].b + RTE_ETHER_HDR_LEN;
	CHECK(ncap >= 1 && cap[0].port == 0 && memcmp(cap[0].b, &mac_bcast, 6) == 0 &&
		      memcmp(cap[0].b + 6, &port_mac[0], 6) == 0 &&
		      get16(cap[0].b + 12) == RTE_ETHER_TYPE_ARP && get16(arp + 6) == 1 &&
		      memcmp(arp + 8, &port_mac[0], 6) == 0 && get32(arp + 14) == port_ip4[0] &&
		      get32(arp + 24) == gw,
	      "the ARP request for 10.0.0.9");
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.held == EGW_IP_HOLD_MAX && ni.probes == 1,
	      "%u held, %u probes", ni.held, ni.probes);
	CHECK(ctr("held") - held0 == 5 && ctr("held_overflow") - ovf0 == 2,
	      "held %" PRIu64 " overflow %" PRIu64, ctr("held") - held0,
	      ctr("held_overflow") - ovf0);
	/* the reply: REACHABLE, the newest 3 go out with its MAC, in order */
	cap_clear();
	arp_in(0, &port_mac[0], 2, &mg, gw, &port_mac[0], port_ip4[0]);
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.state == EGW_IP_NS_REACHABLE &&
		      rte_is_same_ether_addr(&ni.mac, &mg) && ni.held == 0,
	      "after the reply: %s, %u held", egw_ip_neigh_state_name(ni.state), ni.held);
	CHECK(ncap == 3 && ctr("held_sent") - sent0 == 3, "%u held packets sent", ncap);
	for (i = 0; i < ncap && i < 3; i++) {
		const uint8_t *f = cap[i].b, *ip = f + RTE_ETHER_HDR_LEN;

		CHECK(cap[i].port == 0 && memcmp(f, &mg, 6) == 0 &&
			      memcmp(f + 6, &port_mac[0], 6) == 0 &&
			      get16(f + 12) == RTE_ETHER_TYPE_IPV4,
		      "held packet %u: port %u / MAC header", i, cap[i].port);
		CHECK(get16(ip + 4) == 3 + i && ip[8] == 63 && ip4_hdr_ok(ip) &&
			      get32(ip + 16) == IP4(80, 0, 0, 1),
		      "held packet %u: id %u TTL %u", i, get16(ip + 4), ip[8]);
	}
	/* now the data path forwards by itself */
	{
		struct pk p = {.port = 1, .src4 = IP4(12, 0, 0, 1), .dst4 = IP4(80, 0, 0, 1)};
		uint32_t len = fwd1(&p);

		CHECK(res.n_out == 1 && res.n_ctrl == 0, "after resolution: forwarded");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &mg, 0, 1, "resolved");
		res_free();
		/* the gateway moves (gratuitous ARP): the data path follows */
		arp_in(0, &mac_bcast, 1, &mg2, gw, NULL, gw);
		CHECK(neigh_lookup(&a, &ni, NULL) && rte_is_same_ether_addr(&ni.mac, &mg2),
		      "the gateway's new MAC");
		len = fwd1(&p);
		CHECK(res.n_out == 1, "after the move: forwarded");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &mg2, 0, 1, "moved");
		res_free();
	}
	cap_clear();
}

/* ---- neighbours: IPv6 ND ------------------------------------------------- */

static void
test_nd(void)
{
	const struct rte_ether_addr mx = {{0x02, 0xcc, 0, 0, 6, 0x77}};
	uint8_t peer[16], stranger[16], sn[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 1};
	uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a;
	uint64_t c0;
	const uint8_t *r, *ip, *l4;

	printf("nd: solicitations and advertisements\n");
	in6(peer, 0, 0, 0x77);
	in6(stranger, 0, 0, 0x78);
	/* an NS for our address through the data path lands in res->ctrl */
	{
		struct rte_mbuf *m = nd_frame(135, 0, peer, sn, port_ip6[0], 1, &mx, 255);

		fwd(0, &m, 1, true);
		CHECK(res.n_ctrl == 1 && ndrop() == 0, "NS through the data path: %u ctrl",
		      res.n_ctrl);
		cap_clear();
		if (res.n_ctrl == 1) {
			egw_ip_ctrl_input(res.ctrl[0]);
			res.n_ctrl = 0;
		}
		res_free();
	}
	/* answered: NA with S and O (and R), target, TLLA, checksum (RFC 4861 7.2.4) */
	CHECK(ncap == 1 && cap[0].port == 0, "NS: %u frames sent", ncap);
	r = cap[0].b;
	ip = r + RTE_ETHER_HDR_LEN;
	l4 = ip + 40;
	if (ncap == 1) {
		CHECK(memcmp(r, &mx, 6) == 0 && memcmp(r + 6, &port_mac[0], 6) == 0 &&
			      get16(r + 12) == RTE_ETHER_TYPE_IPV6,
		      "NA MAC header");
		CHECK((ip[0] >> 4) == 6 && get16(ip + 4) == 32 && ip[6] == IPPROTO_ICMPV6 &&
			      ip[7] == 255,
		      "NA IPv6 header: payload %u hop limit %u", get16(ip + 4), ip[7]);
		CHECK(memcmp(ip + 8, port_ip6[0], 16) == 0 && memcmp(ip + 24, peer, 16) == 0,
		      "NA addresses");
		CHECK(l4[0] == 136 && l4[1] == 0 && (l4[4] & 0x60) == 0x60,
		      "NA type %u code %u flags %#x", l4[0], l4[1], l4[4]);
		CHECK(memcmp(l4 + 8, port_ip6[0], 16) == 0, "NA target");
		CHECK(l4[24] == 2 && l4[25] == 1 && memcmp(l4 + 26, &port_mac[0], 6) == 0,
		      "NA target link-layer address option");
		CHECK(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip, l4) == 0 &&
			      l4_cksum(ip, true, l4, 32, IPPROTO_ICMPV6) == 0,
		      "NA checksum");
	}
	a = A6(peer);
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.state == EGW_IP_NS_STALE &&
		      rte_is_same_ether_addr(&ni.mac, &mx),
	      "the soliciting node learnt: %s", egw_ip_neigh_state_name(ni.state));
	/* hop limit 254: not from the link, ignored (RFC 4861 7.1.1) */
	cap_clear();
	c0 = ctr("nd_bad");
	egw_ip_ctrl_input(nd_frame(135, 0, stranger, sn, port_ip6[0], 1, &mx, 254));
	a = A6(stranger);
	CHECK(ncap == 0 && !neigh_lookup(&a, NULL, NULL) && ctr("nd_bad") == c0 + 1,
	      "NS with hop limit 254: %u sent", ncap);
	/* a bad checksum: ignored */
	{
		struct rte_mbuf *m = nd_frame(135, 0, stranger, sn, port_ip6[0], 1, &mx, 255);

		rte_pktmbuf_mtod(m, uint8_t *)[RTE_ETHER_HDR_LEN + 40 + 10] ^= 1;
		egw_ip_ctrl_input(m);
		CHECK(ncap == 0 && ctr("nd_bad") == c0 + 2, "NS with a bad checksum: %u sent",
		      ncap);
	}
	/* an unsolicited NA creates nothing */
	c0 = ctr("nd_unsolicited");
	egw_ip_ctrl_input(nd_frame(136, 0x20, stranger, all_nodes, stranger, 2, &mx, 255));
	CHECK(!neigh_lookup(&a, NULL, NULL) && ctr("nd_unsolicited") == c0 + 1 && ncap == 0,
	      "an unsolicited NA made an entry");
	/* an NS for an address that is not ours: not answered */
	egw_ip_ctrl_input(nd_frame(135, 0, peer, sn, stranger, 1, &mx, 255));
	CHECK(ncap == 0, "an NS for another address was answered");
	/* a node claiming edgegw's own address (as source): no entry for it */
	egw_ip_ctrl_input(nd_frame(135, 0, port_ip6[0], sn, port_ip6[0], 1, &mx, 255));
	a = A6(port_ip6[0]);
	CHECK(!neigh_lookup(&a, NULL, NULL),
	      "regression: an NS from edgegw's own address made a neighbour entry for it");
	if (neigh_lookup(&a, NULL, NULL))
		egw_ip_neigh_del(0, 0, &a);
	a = A6(peer);
	CHECK(egw_ip_neigh_del(0, 0, &a) == 0, "delete the v6 peer");
	cap_clear();
}

/* ---- neighbours: flood, rate limit --------------------------------------- */

static int
collect_cb(const struct egw_ip_neigh_info *n, void *arg)
{
	struct egw_ip_addr *v = arg;
	unsigned int i;

	if (n->port != 1 || n->state == EGW_IP_NS_PERMANENT || n->addr.family != AF_INET)
		return 0;
	for (i = 0; i < MAX_NEIGH && v[i].family != 0; i++)
		;
	if (i < MAX_NEIGH)
		v[i] = n->addr;
	return 0;
}

/* 10000 ARP requests for port 1's address from distinct senders on its
 * network: at most max entries, every one counted and answered, and the data
 * path unharmed. */
static void
arp_flood(unsigned int max, const char *pfx)
{
	uint64_t full0 = ctr("neigh_table_full"), made0 = ctr("neigh_created"),
		 ans0 = ctr("arp_request_answered"), nomem0 = ctr("ctl_nomem");
	unsigned int before = neigh_count(), i, sent = 0, after;

	cap_clear();
	for (i = 0; i < 10000; i++) {
		/* distinct senders in 10.1.0.0/16 (a bijection of the low 16 bits) */
		uint32_t low = (i * 40503u + 12345u) & 0xffff;
		struct rte_ether_addr sha = {{0x02, 0xdd, (uint8_t)rnd(), (uint8_t)rnd(),
					      (uint8_t)(i >> 8), (uint8_t)i}};

		if (low <= 2 || low == 0xffff)
			continue;
		arp_in(1, &mac_bcast, 1, &sha, IP4(10, 1, 0, 0) | low, NULL, port_ip4[1]);
		sent++;
	}
	after = neigh_count();
	CHECK(after <= max, "%s%u neighbours after the flood, max %u", pfx, after, max);
	CHECK(after == RTE_MIN(max, before + sent), "%sthe table did not fill: %u of %u", pfx,
	      after, max);
	CHECK(ctr("neigh_created") - made0 == after - before,
	      "%screated %" PRIu64 ", table %u -> %u", pfx, ctr("neigh_created") - made0, before,
	      after);
	CHECK(ctr("neigh_table_full") - full0 == sent - (after - before),
	      "%stable full counted %" PRIu64 " of %u", pfx, ctr("neigh_table_full") - full0,
	      sent - (after - before));
	CHECK(ctr("arp_request_answered") - ans0 == sent && ncap_total == sent,
	      "%s%" PRIu64 " answered, %u sent, of %u", pfx, ctr("arp_request_answered") - ans0,
	      ncap_total, sent);
	CHECK(ctr("ctl_nomem") == nomem0,
	      "%sctl_nomem +%" PRIu64 " during the flood (entries refused below max_neigh %u)", pfx,
	      ctr("ctl_nomem") - nomem0, max);
	/* the data path still works: a route through a gateway, and no route */
	{
		struct pk p = {.port = 0, .dst4 = IP4(70, 2, 0, 1)};
		uint32_t len;

		fwd1(&p);
		CHECK(res.n_out == 1 && res.out_port[0] == 1, "%sforwarding after the flood", pfx);
		res_free();
		p.dst4 = IP4(21, 0, 0, 1);
		fwd1(&p);
		CHECK(res.drop[EGW_IP_DROP_NO_ROUTE] == 1 && res.n_reply == 1 && res.n_out == 0,
		      "%sno route after the flood: %u no-route drops, %u replies, %u out (port "
		      "%u), "
		      "%u to the control path",
		      pfx, res.drop[EGW_IP_DROP_NO_ROUTE], res.n_reply, res.n_out,
		      res.n_out != 0 ? res.out_port[0] : 0, res.n_ctrl);
		len = res.n_reply == 1 ? flat(res.reply[0], ob) : 0;
		if (len != 0)
			check_icmp4_err(ob, len, fb, 0, 3, 0, 0, false, "no route after the flood");
		res_free();
	}
	cap_clear();
}

static void
test_flood(void)
{
	struct egw_ip_addr learnt[MAX_NEIGH + 1];
	unsigned int before = neigh_count(), i;
	struct egw_ip_neigh_conf nc, keep;
	uint64_t ans0;

	printf("flood: 10000 ARP senders, max_neigh %u\n", MAX_NEIGH);
	arp_flood(MAX_NEIGH, "");
	/* back to the table before the flood */
	memset(learnt, 0, sizeof(learnt));
	egw_ip_neigh_walk(collect_cb, learnt);
	for (i = 0; i < MAX_NEIGH && learnt[i].family != 0; i++)
		CHECK(egw_ip_neigh_del(1, 0, &learnt[i]) == 0, "delete a flood entry");
	CHECK(neigh_count() == before, "%u entries after the clean-up, %u before", neigh_count(),
	      before);

	/* the ARP/ND input rate limit: 100/s, a bucket of 11 */
	egw_ip_neigh_conf_get(&keep);
	nc = keep;
	nc.input_pps = 100;
	CHECK(egw_ip_neigh_conf_set(&nc) == 0, "input_pps 100");
	ans0 = ctr("arp_request_answered");
	{
		uint64_t lim0 = ctr("input_ratelimited");
		struct rte_ether_addr sha = {{0x02, 0xdd, 0, 0, 0, 1}};

		rte_delay_ms(1001);
		for (i = 0; i < 50; i++)
			arp_in(0, &mac_bcast, 1, &sha, IP4(10, 0, 0, 123), NULL, port_ip4[0]);
		CHECK(ctr("arp_request_answered") - ans0 <= 12 &&
			      ctr("arp_request_answered") - ans0 >= 10,
		      "rate limited input: %" PRIu64 " of 50 answered",
		      ctr("arp_request_answered") - ans0);
		CHECK(ctr("input_ratelimited") - lim0 + ctr("arp_request_answered") - ans0 == 50,
		      "input_ratelimited counted");
	}
	CHECK(egw_ip_neigh_conf_set(&keep) == 0, "input_pps back");
	{
		struct egw_ip_addr a = A4(IP4(10, 0, 0, 123));

		CHECK(egw_ip_neigh_del(0, 0, &a) == 0, "delete 10.0.0.123");
	}
	nc.input_pps = 0;
	CHECK(egw_ip_neigh_conf_set(&nc) == -EINVAL, "input_pps 0 refused");
	cap_clear();
}

/* ---- neighbours: resolution failure -------------------------------------- */

static void
test_resolve_fail(void)
{
	struct egw_ip_neigh_conf keep, nc;
	uint32_t gw = IP4(10, 0, 0, 10), i, len;
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a = A4(gw);
	uint64_t drop0 = ctr("held_dropped"), fail0 = ctr("neigh_failed"),
		 icmp0 = ctr("unresolved_icmp");
	unsigned int arps = 0, icmps = 0, ms;
	bool seen_incomplete = false;
	static uint8_t orig[2][128];

	printf("resolution failure: INCOMPLETE -> FAILED\n");
	egw_ip_neigh_conf_get(&keep);
	nc = keep;
	nc.retrans_ms = 10;
	nc.mcast_probes = 3;
	nc.failed_ms = 600000;
	CHECK(egw_ip_neigh_conf_set(&nc) == 0, "small timers");
	CHECK(route_via(IP4(90, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via 10.0.0.10");
	cap_clear();
	for (i = 0; i < 2; i++) {
		struct pk p = {.port = 1,
			       .src4 = IP4(12, 0, 0, 1 + i),
			       .dst4 = IP4(90, 0, 0, 1),
			       .id = (uint16_t)(0x500 + i)};

		fwd1(&p);
		memcpy(orig[i], fb, sizeof(orig[i]));
		CHECK(res.n_ctrl == 1, "to 10.0.0.10: punted");
		if (res.n_ctrl == 1) {
			egw_ip_ctrl_input(res.ctrl[0]);
			res.n_ctrl = 0;
		}
		res_free();
	}
	for (ms = 0; ms < 5000; ms += 5) {
		CHECK(neigh_lookup(&a, &ni, NULL), "10.0.0.10 vanished");
		if (ni.state == EGW_IP_NS_FAILED)
			break;
		if (ni.state == EGW_IP_NS_INCOMPLETE)
			seen_incomplete = true;
		else
			CHECK(false, "10.0.0.10 in state %s", egw_ip_neigh_state_name(ni.state));
		egw_ip_service();
		rte_delay_ms(5);
	}
	CHECK(seen_incomplete && ni.state == EGW_IP_NS_FAILED, "after %u ms: %s", ms,
	      egw_ip_neigh_state_name(ni.state));
	for (i = 0; i < ncap; i++) {
		const uint8_t *f = cap[i].b, *l3 = f + RTE_ETHER_HDR_LEN;

		if (get16(f + 12) == RTE_ETHER_TYPE_ARP && get32(l3 + 24) == gw) {
			arps++;
		} else if (get16(f + 12) == RTE_ETHER_TYPE_IPV4 && l3[9] == IPPROTO_ICMP) {
			unsigned int k = get32(l3 + 16) == IP4(12, 0, 0, 2);

			check_icmp4_err(f, cap[i].len, orig[k], 1, 3, 1, 0, true,
					"held packet unreachable");
			CHECK(cap[i].port == 1, "ICMP sent on port %u", cap[i].port);
			icmps++;
		}
	}
	CHECK(arps == nc.mcast_probes, "%u ARP requests, expected %u", arps, nc.mcast_probes);
	CHECK(icmps == 2 && ncap == arps + icmps, "%u ICMP host unreachable, %u frames", icmps,
	      ncap);
	CHECK(ctr("held_dropped") - drop0 == 2 && ctr("neigh_failed") - fail0 == 1 &&
		      ctr("unresolved_icmp") - icmp0 == 2,
	      "held_dropped +%" PRIu64 " neigh_failed +%" PRIu64 " unresolved_icmp +%" PRIu64,
	      ctr("held_dropped") - drop0, ctr("neigh_failed") - fail0,
	      ctr("unresolved_icmp") - icmp0);
	/* the data path now answers host unreachable itself */
	{
		struct pk p = {.port = 1, .src4 = IP4(12, 0, 0, 9), .dst4 = IP4(90, 1, 1, 1)};

		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_NEIGH_FAILED), "to a failed gateway: drops %u",
		      ndrop());
		len = reply1("failed gateway");
		if (len != 0)
			check_icmp4_err(ob, len, fb, 1, 3, 1, 0, false, "failed gateway");
		res_free();
	}
	a = A4(IP4(90, 0, 0, 0));
	CHECK(egw_ip_route_del(&a, 8) == 0, "delete 90.0.0.0/8");
	a = A4(gw);
	CHECK(!neigh_lookup(&a, NULL, NULL), "the gateway of a deleted route stays");
	CHECK(egw_ip_neigh_conf_set(&keep) == 0, "timers back");
	cap_clear();
}

/* ---- addresses, default routes, walks ------------------------------------ */

struct rwalk {
	unsigned int n, n_default, n_20;
	unsigned int n_paths_20;
};

static int
rwalk_cb(const struct egw_ip_route_info *r, void *arg)
{
	struct rwalk *w = arg;

	w->n++;
	if (r->len == 0)
		w->n_default++;
	if (r->prefix.family == AF_INET && r->len == 8 && get32(r->prefix.a) == IP4(20, 0, 0, 0)) {
		w->n_20++;
		w->n_paths_20 = r->n_paths;
	}
	return 0;
}

struct awalk {
	uint16_t port;
	unsigned int n, n_ll;
};

static int
awalk_cb(const struct egw_ip_addr_info *a, void *arg)
{
	struct awalk *w = arg;

	if (a->port == w->port) {
		w->n++;
		w->n_ll += a->link_local;
	}
	return 0;
}

static void
test_addr_routes(void)
{
	unsigned int c0[2][EGW_IP_RT_MAX], c1[2][EGW_IP_RT_MAX];
	struct egw_ip_route_info ri;
	struct egw_ip_addr a, b;
	struct awalk aw = {.port = 5};
	struct rwalk rw;
	uint8_t a6[16], ll[16] = {0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 6};
	uint32_t gw = IP4(10, 0, 0, 2);
	int rc;

	printf("addresses and default routes\n");
	/* an address on port 5, then gone again */
	egw_ip_route_count(c0);
	a = A4(IP4(10, 5, 0, 1));
	CHECK(egw_ip_addr_add(5, 0, &a, 24) == 0, "10.5.0.1/24 on port 5");
	egw_ip_route_count(c1);
	CHECK(c1[0][EGW_IP_RT_CONNECTED] == c0[0][EGW_IP_RT_CONNECTED] + 1 &&
		      c1[0][EGW_IP_RT_LOCAL] == c0[0][EGW_IP_RT_LOCAL] + 1,
	      "connected and local routes counted");
	b = A4(IP4(10, 5, 0, 7));
	CHECK(egw_ip_route_lookup(&b, &ri) == 0 && ri.type == EGW_IP_RT_CONNECTED && ri.len == 24 &&
		      ri.n_paths == 1 && ri.paths[0].port == 5,
	      "10.5.0.7: type %u /%u", ri.type, ri.len);
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.type == EGW_IP_RT_LOCAL && ri.len == 32,
	      "10.5.0.1: type %u", ri.type);
	egw_ip_addr_walk(awalk_cb, &aw);
	CHECK(aw.n == 1, "port 5 has %u addresses", aw.n);
	CHECK(egw_ip_port_set(5, &port_mac[5], 1500, EGW_IP_PORT_ACCESS) == -EBUSY,
	      "port 5 with an address became an access port");
	CHECK(egw_ip_addr_del(5, 0, &a, 16) == -ENOENT, "deleted with the wrong length");
	CHECK(egw_ip_addr_del(5, 0, &a, 24) == 0, "delete 10.5.0.1/24");
	CHECK(egw_ip_addr_del(5, 0, &a, 24) == -ENOENT, "delete it again");
	CHECK(egw_ip_route_lookup(&b, &ri) == -ENOENT && egw_ip_route_lookup(&a, &ri) == -ENOENT,
	      "routes of 10.5.0.1/24 left behind");
	b = A4(IP4(10, 5, 0, 255));
	CHECK(egw_ip_route_lookup(&b, &ri) == -ENOENT, "broadcast route left behind");
	egw_ip_route_count(c1);
	CHECK(memcmp(c0, c1, sizeof(c0)) == 0, "route counts not back");
	aw.n = 0;
	egw_ip_addr_walk(awalk_cb, &aw);
	CHECK(aw.n == 0, "port 5 still has %u addresses", aw.n);
	/* IPv6: the first address brings the EUI-64 link-local one, the last takes it */
	in6(a6, 5, 0, 1);
	a = A6(a6);
	CHECK(egw_ip_addr_add(5, 0, &a, 64) == 0, "2001:db8:5::1/64");
	aw.n = aw.n_ll = 0;
	egw_ip_addr_walk(awalk_cb, &aw);
	CHECK(aw.n == 2 && aw.n_ll == 1, "port 5: %u addresses, %u link-local", aw.n, aw.n_ll);
	b = A6(ll);
	CHECK(egw_ip_route_lookup(&b, &ri) == 0 && ri.type == EGW_IP_RT_LOCAL,
	      "fe80::ff:fe00:6 is local");
	CHECK(egw_ip_addr_del(5, 0, &b, 0) == -ENOENT, "the link-local address deleted by hand");
	CHECK(egw_ip_addr_del(5, 0, &a, 64) == 0, "delete 2001:db8:5::1/64");
	aw.n = 0;
	egw_ip_addr_walk(awalk_cb, &aw);
	CHECK(aw.n == 0 && egw_ip_route_lookup(&b, &ri) == -ENOENT,
	      "port 5: %u addresses after the delete", aw.n);
	CHECK(egw_ip_port_set(5, &port_mac[5], 1500, EGW_IP_PORT_ACCESS) == 0 &&
		      egw_ip_port_set(5, &port_mac[5], 1500, EGW_IP_PORT_ROUTED) == 0,
	      "an empty port becomes an access port and back");

	/* a default route takes what had no route; the walk shows it once. The
	 * port is named: 10.0.0.2 has a static entry (see test_bug_gateway_known) */
	rc = route_via(0, 0, &gw, 1, 0);
	CHECK(rc == 0, "0.0.0.0/0: %d", rc);
	{
		struct pk p = {.port = 1, .dst4 = IP4(21, 0, 0, 1)};
		struct rte_ether_addr m2 = gw_mac(2);
		uint32_t len = fwd1(&p);

		CHECK(res.n_out == 1 && ndrop() == 0, "by the default route");
		if (res.n_out == 1)
			check_fwd4(ob, flat(res.out[0], ob), fb, len, &m2, 0, 1, "default");
		res_free();
	}
	memset(&rw, 0, sizeof(rw));
	CHECK(egw_ip_route_walk(AF_INET, rwalk_cb, &rw) == 0, "walk");
	CHECK(rw.n_default == 1 && rw.n_20 == 1 && rw.n_paths_20 == 1,
	      "walk: default %u times, 20.0.0.0/8 %u times", rw.n_default, rw.n_20);
	a = A4(0);
	CHECK(egw_ip_route_del(&a, 0) == 0, "delete the default route");
	memset(&rw, 0, sizeof(rw));
	egw_ip_route_walk(AF_INET, rwalk_cb, &rw);
	CHECK(rw.n_default == 0, "walk after the delete: default %u times", rw.n_default);
	{
		uint8_t zero[16] = {0}, g[16];

		in6(g, 0, 0, 2);
		CHECK(route_via6(zero, 0, g, 0) == 0, "::/0");
		memset(&rw, 0, sizeof(rw));
		egw_ip_route_walk(AF_INET6, rwalk_cb, &rw);
		CHECK(rw.n_default == 1 && rw.n_20 == 0, "v6 walk: default %u times", rw.n_default);
		a = A6(zero);
		CHECK(egw_ip_route_del(&a, 0) == 0, "delete ::/0");
	}
}

/* ---- VLANs --------------------------------------------------------------- */

/* Insert an 802.1Q tag into the frame in f (len bytes); the new length. */
static uint32_t
tag(uint8_t *f, uint32_t len, uint16_t vlan)
{
	memmove(f + 16, f + 12, len - 12);
	put16(f + 12, RTE_ETHER_TYPE_VLAN);
	put16(f + 14, vlan);
	return len + 4;
}

static void
test_vlan(void)
{
	const struct rte_ether_addr mv = {{0x02, 0xcc, 0, 0, 0x64, 0x77}};
	struct rte_ether_addr m71 = gw_mac(0x71), m2 = gw_mac(2);
	struct egw_ip_route_info ri;
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a;
	uint32_t gw = IP4(10, 100, 0, 2), len;
	struct rte_mbuf *m;

	printf("vlan: an interface on port 2, VLAN 100\n");
	a = A4(IP4(10, 100, 0, 1));
	CHECK(egw_ip_addr_add(2, 100, &a, 24) == 0, "10.100.0.1/24 on port 2 VLAN 100");
	CHECK(route_via(IP4(120, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via VLAN 100");
	a = A4(IP4(120, 1, 1, 1));
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.n_paths == 1 && ri.paths[0].port == 2 &&
		      ri.paths[0].vlan == 100,
	      "the gateway's VLAN: %u", ri.paths[0].vlan);
	a = A4(gw);
	CHECK(egw_ip_neigh_add(2, 100, &a, &m71) == 0, "VLAN neighbour");
	/* untagged in, tagged out */
	{
		struct pk p = {.port = 0, .dst4 = IP4(120, 1, 1, 1), .id = 5};
		const uint8_t *ip = ob + 18, *oip = fb + RTE_ETHER_HDR_LEN;

		len = fwd1(&p);
		CHECK(res.n_out == 1 && res.out_port[0] == 2, "to VLAN 100: %u out", res.n_out);
		if (res.n_out == 1) {
			uint32_t ol = flat(res.out[0], ob);

			CHECK(ol == len + 4 && memcmp(ob, &m71, 6) == 0 &&
				      memcmp(ob + 6, &port_mac[2], 6) == 0 &&
				      get16(ob + 12) == RTE_ETHER_TYPE_VLAN &&
				      get16(ob + 14) == 100 &&
				      get16(ob + 16) == RTE_ETHER_TYPE_IPV4,
			      "tagged frame of %u bytes, TPID %#x TCI %u", ol, get16(ob + 12),
			      get16(ob + 14));
			CHECK(ol == len + 4 && ip[8] == oip[8] - 1 && ip4_hdr_ok(ip) &&
				      memcmp(ip + 12, oip + 12, len - 26) == 0,
			      "tagged frame: IP packet");
		}
		res_free();
	}
	/* tagged in, untagged out */
	{
		struct pk p = {.port = 2, .src4 = IP4(10, 100, 0, 50), .dst4 = IP4(20, 2, 0, 1)};

		len = tag(fb, build(fb, &p), 100);
		m = mk(2, fb, len);
		CHECK(m->l2_len == 18, "lib/eth: l2_len %u", m->l2_len);
		fwd(2, &m, 1, false);
		CHECK(res.n_out == 1 && res.out_port[0] == 0, "from VLAN 100: %u out", res.n_out);
		if (res.n_out == 1) {
			uint32_t ol = flat(res.out[0], ob);

			CHECK(ol == len - 4 && memcmp(ob, &m2, 6) == 0 &&
				      get16(ob + 12) == RTE_ETHER_TYPE_IPV4 &&
				      ob[RTE_ETHER_HDR_LEN + 8] == 63,
			      "untagged frame of %u bytes", ol);
		}
		res_free();
		/* TTL expired on the VLAN: the reply keeps the tag; its source is an
		 * address of that interface (RFC 1812 4.3.2.4) */
		p.ttl = 1;
		len = tag(fb, build(fb, &p), 100);
		m = mk(2, fb, len);
		fwd(2, &m, 1, false);
		len = reply1("expired on VLAN 100");
		if (len != 0) {
			CHECK(get16(ob + 12) == RTE_ETHER_TYPE_VLAN && get16(ob + 14) == 100 &&
				      get16(ob + 16) == RTE_ETHER_TYPE_IPV4 &&
				      memcmp(ob, &mac_peer, 6) == 0 && ob[18 + 20] == 11 &&
				      ip4_hdr_ok(ob + 18),
			      "ICMP on VLAN 100: tag or type");
			CHECK(get32(ob + 18 + 12) == IP4(10, 100, 0, 1),
			      "regression: ICMP error from VLAN 100 has source %#x, not the "
			      "interface's 10.100.0.1",
			      get32(ob + 18 + 12));
		}
		res_free();
	}
	/* ARP on the VLAN: answered tagged; untagged on the port: not ours */
	cap_clear();
	m = arp_frame(2, &mac_bcast, 1, &mv, IP4(10, 100, 0, 77), NULL, IP4(10, 100, 0, 1));
	rte_pktmbuf_free(m);
	len = tag(fb, 60, 100);
	m = mk(2, fb, len);
	egw_ip_ctrl_input(m);
	CHECK(ncap == 1 && cap[0].port == 2, "tagged ARP request: %u sent", ncap);
	if (ncap == 1) {
		const uint8_t *r = cap[0].b, *ra = r + 18;

		CHECK(memcmp(r, &mv, 6) == 0 && get16(r + 12) == RTE_ETHER_TYPE_VLAN &&
			      get16(r + 14) == 100 && get16(r + 16) == RTE_ETHER_TYPE_ARP &&
			      get16(ra + 6) == 2 && memcmp(ra + 8, &port_mac[2], 6) == 0 &&
			      get32(ra + 14) == IP4(10, 100, 0, 1) &&
			      get32(ra + 24) == IP4(10, 100, 0, 77),
		      "tagged ARP reply");
	}
	a = A4(IP4(10, 100, 0, 77));
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.port == 2 && ni.vlan == 100, "learnt on VLAN %u",
	      ni.vlan);
	egw_ip_neigh_del(2, 100, &a);
	cap_clear();
	arp_in(2, &mac_bcast, 1, &mv, IP4(10, 100, 0, 78), NULL, IP4(10, 100, 0, 1));
	CHECK(ncap == 0, "an untagged request for a VLAN 100 address was answered");
	/* clean up */
	a = A4(IP4(120, 0, 0, 0));
	CHECK(egw_ip_route_del(&a, 8) == 0, "delete 120.0.0.0/8");
	a = A4(gw);
	CHECK(egw_ip_neigh_del(2, 100, &a) == 0, "delete the VLAN neighbour");
	a = A4(IP4(10, 100, 0, 1));
	CHECK(egw_ip_addr_del(2, 100, &a, 24) == 0, "delete 10.100.0.1/24");
	cap_clear();
}

/* ---- IPv6 link-local ----------------------------------------------------- */

static void
test_link_local(void)
{
	uint8_t ll0[16] = {0xfe, 0x80, [11] = 0xff, [12] = 0xfe, [15] = 1};
	uint8_t peer_ll[16] = {0xfe, 0x80, [15] = 0xaa}, other[16] = {0xfe, 0x80, [14] = 0x12};
	uint8_t sn[16] = {0xff, 0x02, [11] = 1, [12] = 0xff, [13] = 0, [14] = 0, [15] = 1};
	const struct rte_ether_addr mx = {{0x02, 0xcc, 0, 0, 0xfe, 0xaa}};
	struct egw_ip_addr a;
	uint32_t len;

	printf("link-local: echo, never forwarded, ND\n");
	{
		struct pk p = {.port = 0, .v6 = true, .proto = IPPROTO_ICMPV6, .icmp_type = 128};

		memcpy(p.src6, peer_ll, 16);
		memcpy(p.dst6, ll0, 16);
		len = fwd1(&p);
		CHECK(ndrop() == 0 && res.n_reply == 1, "echo to fe80::ff:fe00:1: %u replies",
		      res.n_reply);
		if (res.n_reply == 1) {
			const uint8_t *ip = ob + RTE_ETHER_HDR_LEN;

			CHECK(flat(res.reply[0], ob) == len && ip[40] == 129 &&
				      memcmp(ip + 8, ll0, 16) == 0 &&
				      memcmp(ip + 24, peer_ll, 16) == 0,
			      "link-local echo reply");
		}
		res_free();
		/* from a link-local source: not forwarded */
		p.proto = IPPROTO_UDP;
		in6(p.dst6, 0x20, 1, 5);
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_MARTIAN_SRC) && res.n_reply == 0,
		      "from fe80::aa to 2001:db8:20:1::5: drops %u", ndrop());
		res_free();
		/* to a link-local address not ours: a martian destination */
		memcpy(p.src6, src6, 16);
		memcpy(p.dst6, other, 16);
		fwd1(&p);
		CHECK(only_drop(EGW_IP_DROP_MARTIAN_DST) && res.n_reply == 0,
		      "regression: to fe80::12:0 (not ours): %u %s, %u %s, %u replies",
		      res.drop[EGW_IP_DROP_MARTIAN_DST], egw_ip_drop_name(EGW_IP_DROP_MARTIAN_DST),
		      res.drop[EGW_IP_DROP_NO_ROUTE], egw_ip_drop_name(EGW_IP_DROP_NO_ROUTE),
		      res.n_reply);
		res_free();
	}
	/* an NS for the link-local address */
	cap_clear();
	egw_ip_ctrl_input(nd_frame(135, 0, peer_ll, sn, ll0, 1, &mx, 255));
	CHECK(ncap == 1 && cap[0].b[RTE_ETHER_HDR_LEN + 40] == 136 &&
		      memcmp(cap[0].b + RTE_ETHER_HDR_LEN + 8, ll0, 16) == 0,
	      "NS for the link-local address: %u sent", ncap);
	a = A6(peer_ll);
	egw_ip_neigh_del(0, 0, &a);
	cap_clear();
}

/* ---- neighbours: aging --------------------------------------------------- */

/* Run the timers until a's state is s (or ms_max passes); the state reached. */
static uint8_t
service_until(const struct egw_ip_addr *a, uint8_t s, unsigned int ms_max)
{
	struct egw_ip_neigh_info ni;
	unsigned int ms;

	memset(&ni, 0, sizeof(ni));
	ni.state = EGW_IP_NS_MAX;
	for (ms = 0; ms <= ms_max; ms += 5) {
		if (!neigh_lookup(a, &ni, NULL))
			return EGW_IP_NS_MAX;
		if (ni.state == s)
			break;
		egw_ip_service();
		rte_delay_ms(5);
	}
	return ni.state;
}

static void
test_aging(void)
{
	const struct rte_ether_addr mg = {{0x02, 0xcc, 0, 0, 0, 0x0b}};
	const struct rte_ether_addr ml = {{0x02, 0xcc, 0, 0, 0, 0x43}};
	struct egw_ip_neigh_conf keep, nc;
	uint32_t gw = IP4(10, 0, 0, 11), i, probes = 0;
	struct egw_ip_route_info ri;
	struct egw_ip_addr a = A4(gw), l = A4(IP4(10, 0, 0, 67));
	struct pk p = {.port = 1, .src4 = IP4(12, 0, 0, 1), .dst4 = IP4(81, 0, 0, 1)};
	uint8_t st;

	printf("aging: REACHABLE -> STALE -> DELAY -> PROBE -> REACHABLE / FAILED\n");
	egw_ip_neigh_conf_get(&keep);
	nc = keep;
	nc.reachable_ms = 150;
	nc.delay_ms = 150;
	nc.retrans_ms = 50;
	nc.ucast_probes = 2;
	nc.gc_stale_ms = 300;
	CHECK(egw_ip_neigh_conf_set(&nc) == 0, "aging timers");
	CHECK(route_via(IP4(81, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via 10.0.0.11");
	fwd1(&p);
	if (res.n_ctrl == 1) {
		egw_ip_ctrl_input(res.ctrl[0]);
		res.n_ctrl = 0;
	}
	res_free();
	arp_in(0, &port_mac[0], 2, &mg, gw, &port_mac[0], port_ip4[0]);
	CHECK(service_until(&a, EGW_IP_NS_REACHABLE, 0) == EGW_IP_NS_REACHABLE, "resolved");
	st = service_until(&a, EGW_IP_NS_STALE, 3000);
	CHECK(st == EGW_IP_NS_STALE, "REACHABLE -> %s", egw_ip_neigh_state_name(st));
	/* still forwarded while STALE; the traffic moves it to DELAY, then PROBE */
	for (i = 0; i < 2; i++) {
		unsigned int k;

		fwd1(&p);
		CHECK(res.n_out == 1, "forwarded while STALE (round %u)", i);
		res_free();
		st = service_until(&a, EGW_IP_NS_DELAY, 1000);
		CHECK(st == EGW_IP_NS_DELAY, "STALE with traffic -> %s",
		      egw_ip_neigh_state_name(st));
		cap_clear();
		st = service_until(&a, EGW_IP_NS_PROBE, 3000);
		CHECK(st == EGW_IP_NS_PROBE, "DELAY -> %s", egw_ip_neigh_state_name(st));
		if (i == 0) {
			/* a unicast ARP request to the known MAC; the answer confirms it */
			CHECK(ncap == 1 && memcmp(cap[0].b, &mg, 6) == 0 &&
				      get32(cap[0].b + RTE_ETHER_HDR_LEN + 24) == gw,
			      "unicast probe: %u sent", ncap);
			arp_in(0, &port_mac[0], 2, &mg, gw, &port_mac[0], port_ip4[0]);
			st = service_until(&a, EGW_IP_NS_REACHABLE, 0);
			CHECK(st == EGW_IP_NS_REACHABLE, "PROBE + reply -> %s",
			      egw_ip_neigh_state_name(st));
			st = service_until(&a, EGW_IP_NS_STALE, 3000);
			CHECK(st == EGW_IP_NS_STALE, "-> %s", egw_ip_neigh_state_name(st));
			continue;
		}
		/* no answer: FAILED after ucast_probes */
		st = service_until(&a, EGW_IP_NS_FAILED, 3000);
		CHECK(st == EGW_IP_NS_FAILED, "PROBE without reply -> %s",
		      egw_ip_neigh_state_name(st));
		for (k = 0; k < ncap; k++)
			if (get16(cap[k].b + 12) == RTE_ETHER_TYPE_ARP &&
			    memcmp(cap[k].b, &mg, 6) == 0)
				probes++;
		CHECK(probes == nc.ucast_probes, "%u unicast probes, expected %u", probes,
		      nc.ucast_probes);
	}
	fwd1(&p);
	CHECK(only_drop(EGW_IP_DROP_NEIGH_FAILED) && res.n_reply == 1,
	      "to a gateway that stopped answering: drops %u", ndrop());
	res_free();
	a = A4(IP4(81, 0, 0, 0));
	CHECK(egw_ip_route_del(&a, 8) == 0, "delete 81.0.0.0/8");

	/* an idle learnt entry is collected after gc_stale_ms, with its host route */
	arp_in(0, &mac_bcast, 1, &ml, IP4(10, 0, 0, 67), NULL, port_ip4[0]);
	CHECK(neigh_lookup(&l, NULL, NULL), "10.0.0.67 learnt");
	st = service_until(&l, EGW_IP_NS_MAX, 3000);
	CHECK(st == EGW_IP_NS_MAX, "10.0.0.67 still there after gc_stale_ms: %s",
	      egw_ip_neigh_state_name(st));
	CHECK(egw_ip_route_lookup(&l, &ri) == 0 && ri.type == EGW_IP_RT_CONNECTED && ri.len == 24,
	      "10.0.0.67 after collection: type %u /%u", ri.type, ri.len);
	CHECK(egw_ip_neigh_conf_set(&keep) == 0, "timers back");
	cap_clear();
}

/* A gateway's static entry deleted while a route uses it: resolved again. */
static void
test_neigh_del_used(void)
{
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a = A4(IP4(10, 0, 0, 2));
	struct pk p = {.port = 1, .dst4 = IP4(20, 2, 0, 1)};

	printf("neigh: deleting a gateway in use\n");
	CHECK(egw_ip_neigh_del(0, 0, &a) == 0, "delete 10.0.0.2");
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.state == EGW_IP_NS_INCOMPLETE && ni.refs >= 1,
	      "10.0.0.2 after the delete: %s", egw_ip_neigh_state_name(ni.state));
	fwd1(&p);
	CHECK(res.n_ctrl == 1 && res.n_out == 0, "to 20.2.0.1: %u to the control path", res.n_ctrl);
	res_free();
	CHECK(neigh4(0, IP4(10, 0, 0, 2), 2) == 0, "10.0.0.2 static again");
	fwd1(&p);
	CHECK(res.n_out == 1, "to 20.2.0.1 forwarded again");
	res_free();
}

/* A route of a neighbour's own /32 takes its host route; when the route
 * goes, the neighbour is reached through the data path again. */
static void
test_bug_host_route_back(void)
{
	const struct rte_ether_addr mh = {{0x02, 0xcc, 0, 0, 0, 0x66}};
	struct rte_ether_addr m2 = gw_mac(2);
	uint32_t gw = IP4(10, 0, 0, 2);
	struct egw_ip_addr a = A4(IP4(10, 0, 0, 66));
	struct pk p = {.port = 1, .dst4 = IP4(10, 0, 0, 66)};

	printf("bug: a neighbour's host route after a /32 route over it\n");
	arp_in(0, &mac_bcast, 1, &mh, IP4(10, 0, 0, 66), NULL, port_ip4[0]);
	fwd1(&p);
	CHECK(res.n_out == 1 && memcmp(rte_pktmbuf_mtod(res.out[0], void *), &mh, 6) == 0,
	      "to the learnt 10.0.0.66");
	res_free();
	CHECK(route_via(IP4(10, 0, 0, 66), 32, &gw, 1, 0) == 0, "10.0.0.66/32 via .2");
	fwd1(&p);
	CHECK(res.n_out == 1 && memcmp(rte_pktmbuf_mtod(res.out[0], void *), &m2, 6) == 0,
	      "the /32 route wins");
	res_free();
	CHECK(egw_ip_route_del(&a, 32) == 0, "delete 10.0.0.66/32");
	fwd1(&p);
	CHECK(res.n_out == 1 && res.n_ctrl == 0,
	      "regression: after the /32 route went, packets to the known neighbour 10.0.0.66 "
	      "go to the control path (%u) instead of out (%u)",
	      res.n_ctrl, res.n_out);
	res_free();
	egw_ip_neigh_del(0, 0, &a);
}

/* ---- documented behaviour the library does not have ---------------------- */

/* An ARP request for our address from a sender on no connected network of
 * the port must not reroute traffic for the sender's address. */
static void
test_bug_offlink_sender(void)
{
	const struct rte_ether_addr evil = {{0x02, 0xee, 0xee, 0, 0, 2}};
	struct rte_ether_addr m2 = gw_mac(2);
	struct egw_ip_route_info ri;
	struct egw_ip_addr a;
	uint32_t len;

	printf("bug: ARP from an off-link sender\n");
	cap_clear();
	/* 20.2.0.99 is behind 10.0.0.2 (20.0.0.0/8) */
	arp_in(0, &mac_bcast, 1, &evil, IP4(20, 2, 0, 99), NULL, port_ip4[0]);
	a = A4(IP4(20, 2, 0, 99));
	CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.len == 8 && ri.type == EGW_IP_RT_VIA,
	      "regression: an ARP request from 20.2.0.99 replaced its route: /%u type %u", ri.len,
	      ri.type);
	{
		struct pk p = {.port = 1, .dst4 = IP4(20, 2, 0, 99)};

		len = fwd1(&p);
		CHECK(res.n_out == 1, "to 20.2.0.99");
		if (res.n_out == 1) {
			flat(res.out[0], ob);
			CHECK(memcmp(ob, &m2, 6) == 0,
			      "regression: traffic to 20.2.0.99 goes to the ARP sender's MAC, not "
			      "to its gateway 10.0.0.2");
			(void)len;
		}
		res_free();
	}
	/* 10.1.0.50 is on port 1's network, the request came in on port 0 */
	arp_in(0, &mac_bcast, 1, &evil, IP4(10, 1, 0, 50), NULL, port_ip4[0]);
	{
		struct pk p = {.port = 2, .dst4 = IP4(10, 1, 0, 50)};

		fwd1(&p);
		CHECK(res.n_out == 0 || res.out_port[0] == 1,
		      "regression: traffic to 10.1.0.50 (port 1's network) leaves by port %u",
		      res.out_port[0]);
		res_free();
	}
	a = A4(IP4(20, 2, 0, 99));
	egw_ip_neigh_del(0, 0, &a);
	a = A4(IP4(10, 1, 0, 50));
	egw_ip_neigh_del(0, 0, &a);
	egw_ip_neigh_del(1, 0, &a);
	cap_clear();
}

/* A gateway whose MAC is known (a static neighbour, or one learnt from its
 * ARP) is still on its connected network: a route through it is accepted. */
static void
test_bug_gateway_known(void)
{
	const struct rte_ether_addr mk1 = {{0x02, 0xcc, 0, 0, 0, 0x31}};
	uint32_t gw = IP4(10, 0, 0, 20), gw2 = IP4(10, 0, 0, 21);
	struct egw_ip_addr a;
	int rc;

	printf("bug: a route via a gateway with a known MAC\n");
	CHECK(neigh4(0, gw, 0x20) == 0, "static neighbour 10.0.0.20");
	rc = route_via(IP4(53, 0, 0, 0), 8, &gw, 1, UINT16_MAX);
	CHECK(rc == 0,
	      "regression: a route via 10.0.0.20 (static neighbour on 10.0.0.0/24) "
	      "refused: %d",
	      rc);
	/* learnt from its ARP request */
	arp_in(0, &mac_bcast, 1, &mk1, gw2, NULL, port_ip4[0]);
	rc = route_via(IP4(54, 0, 0, 0), 8, &gw2, 1, UINT16_MAX);
	CHECK(rc == 0, "regression: a route via 10.0.0.21 (learnt from its ARP) refused: %d", rc);
	if (rc == 0) {
		a = A4(IP4(54, 0, 0, 0));
		egw_ip_route_del(&a, 8);
	}
	a = A4(IP4(53, 0, 0, 0));
	egw_ip_route_del(&a, 8);
	a = A4(gw);
	egw_ip_neigh_del(0, 0, &a);
	a = A4(gw2);
	egw_ip_neigh_del(0, 0, &a);
	cap_clear();
}

static void
test_bug_api(void)
{
	struct rte_ether_addr m = gw_mac(0x55);
	struct egw_ip_route_info ri;
	struct egw_ip_addr a;
	uint8_t mc6[16] = {0xff, 0x02, [15] = 5};
	int rc;

	printf("bug: API contract\n");
	/* "A port with addresses, neighbours or routes cannot become an access port" */
	CHECK(neigh4(5, IP4(10, 5, 0, 2), 0x55) == 0, "a neighbour on port 5");
	rc = egw_ip_port_set(5, &port_mac[5], 1500, EGW_IP_PORT_ACCESS);
	CHECK(rc == -EBUSY, "regression: port 5 with a neighbour became an access port (%d)", rc);
	egw_ip_port_set(5, &port_mac[5], 1500, EGW_IP_PORT_ROUTED);
	a = A4(IP4(10, 5, 0, 2));
	egw_ip_neigh_del(5, 0, &a);

	/* egw_ip_neigh_add(): "-EINVAL (not unicast, ...)" */
	a = A4(IP4(224, 0, 0, 5));
	rc = egw_ip_neigh_add(0, 0, &a, &m);
	CHECK(rc == -EINVAL, "regression: a neighbour 224.0.0.5 accepted (%d)", rc);
	if (rc == 0)
		egw_ip_neigh_del(0, 0, &a);
	a = A4(IP4(255, 255, 255, 255));
	rc = egw_ip_neigh_add(0, 0, &a, &m);
	CHECK(rc == -EINVAL, "regression: a neighbour 255.255.255.255 accepted (%d)", rc);
	if (rc == 0)
		egw_ip_neigh_del(0, 0, &a);
	a = A6(mc6);
	rc = egw_ip_neigh_add(0, 0, &a, &m);
	CHECK(rc == -EINVAL, "regression: a neighbour ff02::5 accepted (%d)", rc);
	if (rc == 0)
		egw_ip_neigh_del(0, 0, &a);

	/* egw_ip_route_info.type is an enum egw_ip_route_type */
	{
		const struct rte_ether_addr mh = {{0x02, 0xcc, 0, 0, 0, 0x44}};

		arp_in(0, &mac_bcast, 1, &mh, IP4(10, 0, 0, 44), NULL, port_ip4[0]);
		a = A4(IP4(10, 0, 0, 44));
		CHECK(egw_ip_route_lookup(&a, &ri) == 0 && ri.type < EGW_IP_RT_MAX,
		      "regression: the lookup of a learnt neighbour gives route type %u (\"%s\")",
		      ri.type, egw_ip_route_type_name(ri.type));
		egw_ip_neigh_del(0, 0, &a);
	}
	cap_clear();
}

/* "Declare a port (or change its MAC, MTU or kind)": the routes through it
 * follow. */
static void
test_bug_port_change(void)
{
	const struct rte_ether_addr newmac = {{0x02, 0, 0, 0, 0x01, 0x02}};
	struct pk p = {.port = 0, .dst4 = IP4(70, 0, 0, 1), .frag = 0x4000, .len = 1350};
	int rc;

	printf("bug: MTU and MAC changes of a port with routes\n");
	rc = egw_ip_port_set(1, &port_mac[1], 1300, EGW_IP_PORT_ROUTED);
	CHECK(rc == 0, "port 1 MTU 1300: %d", rc);
	fwd1(&p);
	CHECK(res.n_out == 0 && res.drop[EGW_IP_DROP_TOO_BIG] == 1,
	      "regression: 1350 bytes with DF forwarded on port 1 after its MTU became 1300");
	res_free();
	rc = egw_ip_port_set(1, &newmac, 1400, EGW_IP_PORT_ROUTED);
	CHECK(rc == 0, "port 1 new MAC: %d", rc);
	p.len = 100;
	fwd1(&p);
	CHECK(res.n_out == 1, "forwarded after the MAC change");
	if (res.n_out == 1)
		CHECK(memcmp(rte_pktmbuf_mtod(res.out[0], uint8_t *) + 6, &newmac, 6) == 0,
		      "regression: frames leave port 1 with its old MAC after egw_ip_port_set()");
	res_free();
	CHECK(egw_ip_port_set(1, &port_mac[1], 1400, EGW_IP_PORT_ROUTED) == 0, "port 1 back");
}

/* egw_ip_fwd_burst(): "ICMP errors and echo replies (in res->reply) carry
 * the received MAC header with the addresses swapped: they go back out of
 * port" -- so an echo reply's source MAC is the ingress port's. */
static void
test_bug_echo_mac(void)
{
	struct pk p = {.port = 0,
		       .src4 = IP4(10, 0, 0, 50),
		       .dst4 = port_ip4[1],
		       .proto = IPPROTO_ICMP,
		       .icmp_type = 8};

	printf("bug: echo reply MAC for another port's address\n");
	fwd1(&p);
	if (reply1("echo to port 1's address") != 0)
		CHECK(memcmp(ob + 6, &port_mac[0], 6) == 0,
		      "regression: the echo reply sent back out of port 0 has port %u's MAC %02x",
		      ob[11] - 1, ob[11]);
	res_free();
}

/* Eight 65535-byte packets over an MTU of 1044 make 8 x 64 = 512 fragments
 * (EGW_IP_MAX_OUT); one more packet in the burst has no room left. */
static void
test_bug_out_overflow(void)
{
	struct rte_mbuf *m[9];
	uint32_t gw = IP4(10, 4, 0, 2), i, bad_port = 0;
	struct egw_ip_addr a;
	uint16_t n_out;

	printf("bug: fragments fill the output array\n");
	CHECK(route_via(IP4(110, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via port 4");
	CHECK(neigh4(4, gw, 0x44) == 0, "port 4 gateway");
	for (i = 0; i < 9; i++) {
		struct pk p = {.port = 0,
			       .dst4 = IP4(110, 0, 0, 1),
			       .len = i < 8 ? 65535 : 100,
			       .id = (uint16_t)i};

		m[i] = mkp(&p);
	}
	fwd(0, m, 9, false);
	n_out = res.n_out;
	for (i = 0; i < RTE_MIN(n_out, (uint16_t)EGW_IP_MAX_OUT); i++)
		if (res.out_port[i] != 4)
			bad_port++;
	CHECK(n_out <= EGW_IP_MAX_OUT,
	      "regression: res->n_out %u > EGW_IP_MAX_OUT %u (written past res->out[])", n_out,
	      EGW_IP_MAX_OUT);
	CHECK(bad_port == 0, "regression: %u of res->out_port[] overwritten", bad_port);
	CHECK(n_out + ndrop() >= 9 && res.drop[EGW_IP_DROP_FRAG_FAILED] <= 1, "%u out, %u dropped",
	      n_out, ndrop());
	if (n_out > EGW_IP_MAX_OUT) {
		/* the last emit() stored its mbuf just past out[] */
		struct rte_mbuf *x;

		memcpy(&x, (uint8_t *)res.out + sizeof(res.out), sizeof(x));
		rte_pktmbuf_free(x);
		res.n_out = EGW_IP_MAX_OUT;
	}
	res_free();
	a = A4(IP4(110, 0, 0, 0));
	egw_ip_route_del(&a, 8);
	a = A4(gw);
	egw_ip_neigh_del(4, 0, &a);
}

/* The flood of test_flood() on a library set up with the default table
 * size (max_neigh 4096): its neighbour hash has exactly 4096 slots and
 * refuses keys before the table is full; a refused entry must not harm the
 * next-hop table. */
static void
test_bug_flood_default(void)
{
	uint32_t gw = IP4(10, 1, 0, 2);

	printf("bug: ARP flood with the default neighbour table (4096)\n");
	setup_sessions = 0;
	if (setup(0) != 0) {
		CHECK(false, "second set-up");
		return;
	}
	{
		struct egw_ip_addr a = A4(IP4(100, 96, 1, 2));

		CHECK(egw_ip_route_session_add(&a, 32, 1) == -ENOTSUP,
		      "no session routes without max_sessions (2-byte FIB entries)");
	}
	CHECK(route_via(IP4(70, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via port 1");
	CHECK(neigh4(1, gw, 0x12) == 0, "port 1 gateway");
	arp_flood(4096, "regression: ");
	egw_ip_ctx_free(ctx);
	ctx = NULL;
	egw_ip_fini();
}

/* Fragments waiting for ARP when the library stops, in the order
 * app/edgegw/stage_ip.c stops it: egw_ip_ctx_free(), then egw_ip_fini().
 * The fragments' indirect mbufs come from the context's own pool. */
static void
test_bug_fragments_held_at_fini(void)
{
	uint32_t gw = IP4(10, 1, 0, 9), i;
	struct pk p = {.port = 0, .dst4 = IP4(130, 0, 0, 1), .len = 3000};
	struct egw_ip_neigh_info ni;
	struct egw_ip_addr a = A4(gw);
	unsigned int in_use;

	printf("bug: fragments held when the library stops\n");
	if (setup(MAX_NEIGH) != 0) {
		CHECK(false, "third set-up");
		return;
	}
	CHECK(route_via(IP4(130, 0, 0, 0), 8, &gw, 1, UINT16_MAX) == 0, "route via 10.1.0.9");
	fwd1(&p);
	CHECK(res.n_ctrl == 3 && res.created == 2, "3000 bytes over MTU 1400: %u punted",
	      res.n_ctrl);
	for (i = 0; i < res.n_ctrl; i++)
		egw_ip_ctrl_input(res.ctrl[i]);
	res.n_ctrl = 0;
	CHECK(neigh_lookup(&a, &ni, NULL) && ni.held == 3, "%u fragments held", ni.held);
	egw_ip_ctx_free(ctx);
	ctx = NULL;
	egw_ip_fini();
	in_use = rte_mempool_in_use_count(pool);
	CHECK(in_use == 0,
	      "regression: %u mbufs lost: egw_ip_ctx_free() freed the pool of the held "
	      "fragments' indirect mbufs before egw_ip_fini() freed them",
	      in_use);
	cap_clear();
}

int
main(int argc, char **argv)
{
	unsigned int in_use;

	if (rte_eal_init(argc, argv) < 0 || egw_eth_init() != 0) {
		printf("test_ip: EAL or lib/eth: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_ip", NB_MBUF, 0, 0, RTE_PKTMBUF_HEADROOM + DATA_ROOM,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		printf("test_ip: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (setup(MAX_NEIGH) != 0)
		return 1;
	test_api();
	test_fib();
	test_prefetch_burst();
	test_session_routes();
	test_ecmp();
	test_ttl();
	test_ttl_burst_icmp_source();
	test_mtu();
	test_icmp_rules();
	test_martians();
	test_echo();
	test_arp();
	test_hold();
	test_nd();
	test_flood();
	test_resolve_fail();
	test_addr_routes();
	test_vlan();
	test_link_local();
	test_aging();
	test_neigh_del_used();
	test_bug_host_route_back();
	test_bug_offlink_sender();
	test_bug_gateway_known();
	test_bug_api();
	test_bug_port_change();
	test_bug_echo_mac();
	test_bug_out_overflow();

	/* everything given back: no mbuf stays with the library */
	egw_ip_ctx_free(ctx);
	egw_ip_fini();
	in_use = rte_mempool_in_use_count(pool);
	CHECK(in_use == 0, "%u mbufs not returned", in_use);

	test_bug_flood_default();
	in_use = rte_mempool_in_use_count(pool);
	CHECK(in_use == 0, "%u mbufs not returned after the second set-up", in_use);
	test_bug_fragments_held_at_fini();
	printf("test_ip: %d checks, %d failures\n", checks, failures);
	rte_eal_cleanup();
	return failures != 0;
}
