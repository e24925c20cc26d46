/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ip internals shared by its files: the next-hop records the data path
 * reads, the tables, the contexts, and the helpers both halves use (MAC
 * rewrite, the ECMP hash, ICMP builders).
 */
#ifndef EGW_IP_PRIVATE_H
#define EGW_IP_PRIVATE_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "egw_eth.h"
#include "egw_ip.h"

extern int egw_ip_logtype;
#define IP_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, egw_ip_logtype, "ip: " __VA_ARGS__)

/* Data-path kinds of a next hop. */
enum ip_nh_kind {
	NH_NOROUTE = 0, /* FIB default: ICMP net unreachable */
	NH_LOCAL,       /* an address of edgegw */
	NH_BCAST,       /* a subnet broadcast address */
	NH_BLACKHOLE,
	NH_UNREACH,
	NH_SESSION, /* PPPoE subscribers: the caller's session stage */
	NH_NEIGH,   /* a neighbour: forward with its MAC when valid */
	NH_GLEAN,   /* a connected network: the destination is resolved */
};

#define NH_F_VALID 0x1  /* MAC known: forward */
#define NH_F_FAILED 0x2 /* resolution failed: ICMP host unreachable */
/* set by ip_nh_publish(): a valid neighbour with an untagged MAC header,
 * the data path's common case (egw_ip_fwd_burst()'s first branch) */
#define NH_F_FAST 0x4

/* FIB value: a next-hop index, or with this bit an ECMP group index. */
#define FIB_GROUP 0x4000u
/* 2-byte FIB entries (tbl24 of 32 MiB each for DIR24_8 and TRIE, lookups
 * touch half the cache lines): values below 2^15, so next-hop and group
 * indices below FIB_GROUP */
#define IP_NH_LIMIT FIB_GROUP

/* FIB value of a session route: this bit and the session key (4-byte FIB
 * entries only); checked before FIB_GROUP, which a key may contain */
#define FIB_SESS 0x40000000u
#define FIB_SESS_KEY 0x00ffffffu

/* Fixed indices. */
#define NH_ID_NOROUTE 0
#define NH_ID_BCAST 1
#define NH_ID_BLACKHOLE 2
#define NH_ID_UNREACH 3
#define NH_ID_SESSION 4
#define NH_ID_SHADOW 5 /* see fib_set() (ctl.c) */
#define NH_ID_FIRST_FREE 6

#define IP_L2_MAX (RTE_ETHER_HDR_LEN + 4)

/* egw_eth_meta()->reserved of a packet the data path hands to the control
 * path to wait for resolution (ND frames have it clear). */
#define IP_META_PUNT 0x1
/* ... and of a packet for the exception path (m->hash.usr: the port that
 * owns the address) */
#define IP_META_LOCAL 0x2

/*
 * What the data path reads of a next hop: one cache line, immutable once
 * published (a change publishes a new record). `used` is the one field a
 * worker writes (once, when it finds it clear): the control path reads and
 * clears it to tell a STALE neighbour in use from an idle one.
 */
struct ip_nh {
	uint8_t kind;
	uint8_t flags;
	uint8_t l2_len; /* 14, or 18 with a VLAN tag */
	uint8_t used;
	uint16_t port;
	uint16_t mtu; /* IP MTU of the egress port */
	uint32_t id;
	uint8_t hdr[IP_L2_MAX]; /* dst, src, [0x8100, TCI], ethertype */
	uint8_t pad[64 - 12 - IP_L2_MAX];
} __rte_cache_aligned;
static_assert(sizeof(struct ip_nh) == 64, "a next hop is one cache line");

/* An ECMP group: immutable once published, like a next hop. */
struct ip_nhg {
	uint32_t n;
	uint32_t nh[EGW_IP_ECMP_MAX];
};

/* Per-port data the data path reads (ICMP source addresses): immutable,
 * replaced through RCU. */
struct ip_port_dp {
	bool access;
	bool exception; /* local packets go to the exception path */
	bool has4, has6;
	rte_be32_t addr4; /* the port's first address, any VLAN */
	uint8_t addr6[16];
	uint16_t mtu;
	/* the first address of each VLAN interface (RFC 1812 4.3.2.4: the
	 * source of an ICMP error is the interface it leaves by) */
	uint8_t n4, n6;
	uint16_t vlan4[EGW_IP_ADDR_MAX], vlan6[EGW_IP_ADDR_MAX];
	rte_be32_t a4[EGW_IP_ADDR_MAX];
	uint8_t a6[EGW_IP_ADDR_MAX][16];
};

/* Everything the data path reads, written by the control path. */
struct ip_dp {
	struct rte_fib *fib4;
	struct rte_fib6 *fib6;
	struct ip_nh **nh; /* [max_nh]: release stores, acquire loads */
	struct ip_nhg **grp;
	uint32_t max_nh, max_grp;
	struct ip_port_dp *port[RTE_MAX_ETHPORTS];
	bool has4, has6; /* any address of that family (fallback ICMP source) */
	rte_be32_t any4;
	uint8_t any6[16];
	/* DIR24_8's first level (fib4_tbl24() in ctl.c), for prefetches and,
	 * with tbl8_4 confirmed too, for the entries that are next hops
	 * (lookup4() in fast.c): NULL when its place could not be
	 * confirmed */
	const uint8_t *tbl24_4;
	uint8_t tbl24_4_shift; /* log2 of the entry size */
	/* its second level (tbl8 groups), for prefetches only: NULL when its
	 * place could not be confirmed */
	const uint8_t *tbl8_4;
	uint32_t icmp_pps, icmp_burst;
	uint32_t punt_pps, punt_burst;
	uint32_t local_pps, local_burst;
};
extern struct ip_dp ip_dp;

/* Token bucket in TSC cycles (data path: per context; control: global). */
struct ip_tb {
	uint64_t last;
	uint64_t tokens; /* in units of 1/1024 token */
};

static inline bool
ip_tb_take(struct ip_tb *tb, uint64_t now, uint32_t pps, uint32_t burst)
{
	uint64_t hz = rte_get_tsc_hz(), add;

	if (now - tb->last >= hz) {
		tb->tokens = (uint64_t)burst * 1024;
		tb->last = now;
	} else if (now > tb->last) {
		/* 128 bits: cycles (< hz) x pps x 1024 overflows 64 */
		add = (uint64_t)((unsigned __int128)(now - tb->last) * pps * 1024 / hz);
		if (add != 0) {
			tb->tokens += add;
			tb->last = now;
		}
	} else {
		tb->last = now;
	}
	if (tb->tokens > (uint64_t)burst * 1024)
		tb->tokens = (uint64_t)burst * 1024;
	if (tb->tokens < 1024)
		return false;
	tb->tokens -= 1024;
	return true;
}

struct egw_ip_ctx {
	unsigned int idx;
	struct rte_mempool *pool;
	struct rte_mempool *indirect; /* fragments' indirect mbufs */
	struct ip_tb icmp_tb;
	struct ip_tb punt_tb;
	struct ip_tb local_tb;
	struct egw_ip_ctx_stats st;
	uint32_t fwd_burst; /* forwarded in this burst, added to st once */
	/* scratch of one burst */
	uint32_t dst4[EGW_IP_MAX_BURST];
	uint8_t dst6[EGW_IP_MAX_BURST][16];
	uint64_t nhv[EGW_IP_MAX_BURST];
} __rte_cache_aligned;

/* A flow hash for ECMP (5-tuple when the header has ports): the data path and
 * the control path (packets released after resolution) pick the same path. */
static inline uint32_t
ip_flow_hash(const struct rte_mbuf *m, bool v6)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	uint32_t h, ports = 0;
	uint8_t proto;

	if (!v6) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)l3;
		uint32_t hl = (ip->version_ihl & 0xf) * 4u;

		proto = ip->next_proto_id;
		h = rte_hash_crc_4byte(ip->src_addr, proto);
		h = rte_hash_crc_4byte(ip->dst_addr, h);
		/* ports of a first (or only) fragment of TCP/UDP in the first
		 * segment; other fragments hash on the addresses, as one flow
		 * should stay on one path */
		if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
		    (ip->fragment_offset &
		     RTE_BE16(RTE_IPV4_HDR_OFFSET_MASK | RTE_IPV4_HDR_MF_FLAG)) == 0 &&
		    m->data_len >= m->l2_len + hl + 4)
			memcpy(&ports, l3 + hl, 4);
	} else {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)l3;

		proto = ip->proto;
		h = rte_hash_crc(ip->src_addr, 32, proto);
		if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) &&
		    m->data_len >= m->l2_len + sizeof(*ip) + 4)
			memcpy(&ports, l3 + sizeof(*ip), 4);
	}
	h = rte_hash_crc_4byte(ports, h);
	return h ^ (h >> 16);
}

/* The path of an ECMP group for a flow hash: the hash scaled to the number
 * of paths (a multiply and a shift, no division; the high bits of the hash
 * choose). */
static inline uint32_t
ip_nhg_pick(const struct ip_nhg *g, uint32_t h)
{
	return g->nh[(uint32_t)(((uint64_t)h * g->n) >> 32)];
}

/* The next hop of a FIB value for this packet (groups resolved by hash). */
static inline struct ip_nh *
ip_nh_of(uint64_t v, const struct rte_mbuf *m, bool v6)
{
	uint32_t id = (uint32_t)v;

	if (unlikely(id & FIB_SESS)) {
		id = NH_ID_SESSION;
	} else if (id & FIB_GROUP) {
		/* pairs with the release store in grp_publish() (ctl.c) */
		const struct ip_nhg *g =
			__atomic_load_n(&ip_dp.grp[id & ~FIB_GROUP], __ATOMIC_ACQUIRE);

		if (unlikely(g == NULL || g->n == 0))
			id = NH_ID_NOROUTE;
		else
			id = ip_nhg_pick(g, ip_flow_hash(m, v6));
	}
	if (unlikely(id >= ip_dp.max_nh))
		id = NH_ID_NOROUTE;
	/* pairs with the release store in nh_publish() (ctl.c) */
	return __atomic_load_n(&ip_dp.nh[id], __ATOMIC_ACQUIRE);
}

/* The VLAN a next hop's MAC header tags its frames with (0: untagged). */
static inline uint16_t
ip_nh_vlan(const struct ip_nh *nh)
{
	return nh->l2_len > RTE_ETHER_HDR_LEN ? (uint16_t)((nh->hdr[14] << 8 | nh->hdr[15]) & 0xfff)
					      : 0;
}

/* Decrement an IPv4 TTL the caller found above 1 (at least 1 is enough),
 * with the checksum's RFC 1624 update. TTL and protocol share a 16-bit word
 * m of the sum; m' = m - 0x0100, so ~m + m' is 0xfeff whatever the word
 * and eqn. 3, HC' = ~(~HC + ~m + m'), needs only the checksum: the TTL byte
 * and the checksum are each written from their own load, with no store
 * forwarded to a wider load. The sum is the same in either byte order
 * (RFC 1071): the constant is taken in the order of memory. */
static inline void
ip4_ttl_dec(struct rte_ipv4_hdr *ip)
{
	uint16_t hc;
	uint32_t s;

	memcpy(&hc, &ip->hdr_checksum, 2);
	s = (uint32_t)(uint16_t)~hc + rte_cpu_to_be_16(0xfeff);
	s = (s & 0xffff) + (s >> 16);
	hc = (uint16_t)~s;
	memcpy(&ip->hdr_checksum, &hc, 2);
	ip->time_to_live--;
}

/* Replace m's MAC header (l2_len bytes) with the next hop's. 0, or -1 when
 * the mbuf has no headroom for a longer header. */
static inline int
ip_l2_rewrite(struct rte_mbuf *m, const struct ip_nh *nh)
{
	uint8_t *d;

	if (likely(m->l2_len == nh->l2_len)) {
		d = rte_pktmbuf_mtod(m, uint8_t *);
	} else if (m->l2_len > nh->l2_len) {
		d = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)(m->l2_len - nh->l2_len));
	} else {
		d = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)(nh->l2_len - m->l2_len));
		if (d == NULL)
			return -1;
	}
	if (likely(nh->l2_len == RTE_ETHER_HDR_LEN)) {
		/* dst+src as 8 + 4 bytes, ethertype with them: two stores
		 * and one more for the type */
		memcpy(d, nh->hdr, 8);
		memcpy(d + 8, nh->hdr + 8, 4);
		memcpy(d + 12, nh->hdr + 12, 2);
	} else {
		memcpy(d, nh->hdr, nh->l2_len);
	}
	m->l2_len = nh->l2_len;
	m->port = nh->port;
	return 0;
}

/* ICMP builders (icmp.c): a new frame in reply to m (m untouched), with
 * m's MAC header (addresses swapped) and src as its IP source. NULL with
 * no mbuf or nothing to quote. */
struct rte_mbuf *ip_icmp4_error(struct rte_mempool *mp, struct rte_mbuf *m, rte_be32_t src,
				uint8_t type, uint8_t code, uint32_t info);
struct rte_mbuf *ip_icmp6_error(struct rte_mempool *mp, struct rte_mbuf *m, const uint8_t src[16],
				uint8_t type, uint8_t code, uint32_t info);
/* May an ICMP error be sent about m (not about an ICMP error, a fragment
 * other than the first, a multicast or broadcast)? */
bool ip_icmp4_allowed(const struct rte_mbuf *m);
bool ip_icmp6_allowed(const struct rte_mbuf *m);
/* The source address for an ICMP error leaving by port. */
bool ip_icmp_src4(uint16_t port, uint16_t vlan, rte_be32_t *src);
bool ip_icmp_src6(uint16_t port, uint16_t vlan, uint8_t src[16]);
/* The VLAN a classified frame came in on (0: untagged). */
static inline uint16_t
ip_vlan_of(struct rte_mbuf *m)
{
	return egw_eth_meta(m)->n_vlan != 0 ? (uint16_t)(m->vlan_tci & 0xfff) : 0;
}

/* Control path (neigh.c, ctl.c) */
struct ip_nhc;
int ip_neigh_ctl_init(const struct egw_ip_params *p);
void ip_neigh_ctl_fini(void);
/* A neighbour next hop for (port, vlan, addr): found or made (INCOMPLETE,
 * idle), with one more reference. Index or -errno. */
int ip_neigh_get(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, bool host_route);
/* Drop a reference taken by ip_neigh_get(). */
void ip_neigh_put(uint32_t id);
void ip_neigh_announce(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a);
void ip_neigh_info(uint32_t id, struct egw_ip_path *p);
unsigned int ip_neigh_count(void);
/* Neighbours on a port. */
unsigned int ip_neigh_port_count(uint16_t port);
/* A configured route took the neighbour's host route (next hop id). */
void ip_neigh_host_route_lost(uint32_t id);
/* A configured host route of a went: a neighbour of that address gets its
 * own back. */
void ip_neigh_host_route_restore(const struct egw_ip_addr *a);
/* Free the held packets that hold mbufs of mp (a context's pool going). */
void ip_neigh_drop_pool(const struct rte_mempool *mp);
bool ip_addr_unicast(const struct egw_ip_addr *a);

/* ctl.c helpers neigh.c uses */
int ip_nh_alloc(void);
void ip_nh_release(uint32_t id);
int ip_nh_publish(uint32_t id, const struct ip_nh *rec);
const struct ip_nh *ip_nh_get(uint32_t id);
struct rte_ether_addr *ip_port_mac(uint16_t port);
bool ip_port_routed(uint16_t port);
uint16_t ip_port_mtu(uint16_t port);
/* Is a an address of edgegw on (port, vlan)? (any vlan with vlan UINT16_MAX) */
bool ip_addr_is_local(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a);
/* The address of family on (port, vlan) to use as source toward dst. */
bool ip_addr_source(uint16_t port, uint16_t vlan, const struct egw_ip_addr *dst,
		    struct egw_ip_addr *src);
/* Host route of a neighbour: /32 or /128 to nh id (if no route of that exact
 * prefix exists). */
int ip_host_route_add(const struct egw_ip_addr *a, uint32_t id);
void ip_host_route_del(const struct egw_ip_addr *a, uint32_t id);
/* The control path's lookup (as the data path does). */
uint64_t ip_fib_lookup(const struct egw_ip_addr *a);
uint64_t ip_now_ms(void);
/* The control path's tx, and its exception callback (false: none). */
void ip_ctl_tx(uint16_t port, struct rte_mbuf *m);
bool ip_ctl_local(uint16_t port, struct rte_mbuf *m);
struct rte_mempool *ip_ctl_pool(void);
void ip_nh_hdr(struct ip_nh *nh, const struct rte_ether_addr *dst, uint16_t port, uint16_t vlan,
	       bool v6);

/* Control-path counters (X-macro). */
/* clang-format off */
#define IP_CTL_COUNTERS(X) \
	X(arp_rx) \
	X(arp_bad) \
	X(arp_not_ours) \
	X(arp_request_answered) \
	X(arp_reply_accepted) \
	X(arp_unsolicited) \
	X(arp_conflict) \
	X(arp_sent) \
	X(nd_rx) \
	X(nd_bad) \
	X(nd_ns_answered) \
	X(nd_na_accepted) \
	X(nd_unsolicited) \
	X(nd_ignored) \
	X(nd_sent) \
	X(input_ratelimited) \
	X(solicit_ratelimited) \
	X(neigh_created) \
	X(neigh_table_full) \
	X(neigh_resolved) \
	X(neigh_failed) \
	X(neigh_removed) \
	X(held) \
	X(held_sent) \
	X(held_dropped) \
	X(held_overflow) \
	X(unresolved_icmp) \
	X(punt_no_route) \
	X(ctl_nomem) \
	X(garp_sent) \
	X(exception_rx) \
	X(exception_no_path) \
	X(exception_tx) \
	X(exception_no_route) \
	X(exception_too_big) \
	X(exception_bad_source)
/* clang-format on */

struct ip_ctl_stats {
#define X(n) uint64_t n;
	IP_CTL_COUNTERS(X)
#undef X
};
extern struct ip_ctl_stats ip_cs;

#endif /* EGW_IP_PRIVATE_H */
