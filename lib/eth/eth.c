/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ethernet classification, after Linux eth_type_trans(): a type/length field
 * below 0x0600 is an IEEE 802.3 length; such a frame is raw 802.3 (Novell
 * IPX) when its first two payload bytes are 0xFFFF, 802.2 LLC otherwise.
 *
 * The header is read where it lies. Only a frame whose first segment ends
 * inside the headers is copied, in a cold function, so the hot loop never
 * passes the address of a stack buffer to another function (the cost Linux
 * removed from eth_type_trans() on stack-protector builds).
 *
 * Two parsers: eth_classify_fast() for a first segment of at least
 * EGW_ETH_MAX_HDR bytes (untagged IP first, then branch-free and table
 * driven), and eth_parse() for everything else and for
 * egw_eth_classify_buf(). The unit test and the fuzz target check that they
 * agree.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

#include "egw_eth.h"

int egw_eth_meta_offset = -1;

/*
 * Prefetch distances of the burst loop: the mbuf's two cache lines (the
 * classifier writes both: packet_type, VLAN and ol_flags in the first, l2_len
 * and the dynamic field in the second) this many packets ahead, so that
 * reading buf_addr to prefetch the frame data ETH_PREFETCH_AHEAD packets
 * ahead does not itself miss. Measured with bench/bench_eth (docs/perf.md).
 */
#define ETH_PREFETCH_MBUF 8
#define ETH_PREFETCH_AHEAD 4

static const char *const cls_names[EGW_ETH_CLS_MAX] = {
	[EGW_ETH_CLS_BAD] = "bad",
	[EGW_ETH_CLS_IPV4] = "ipv4",
	[EGW_ETH_CLS_IPV6] = "ipv6",
	[EGW_ETH_CLS_ARP] = "arp",
	[EGW_ETH_CLS_PPPOE_DISC] = "pppoe-discovery",
	[EGW_ETH_CLS_PPPOE_SESS] = "pppoe-session",
	[EGW_ETH_CLS_LLC] = "802.2-llc",
	[EGW_ETH_CLS_RAW_8023] = "802.3-raw",
	[EGW_ETH_CLS_VLAN_DEEP] = "vlan-too-deep",
	[EGW_ETH_CLS_OTHER] = "other",
};

static const char *const dst_names[EGW_ETH_DST_MAX] = {
	[EGW_ETH_DST_HOST] = "host",
	[EGW_ETH_DST_BROADCAST] = "broadcast",
	[EGW_ETH_DST_MULTICAST] = "multicast",
	[EGW_ETH_DST_OTHERHOST] = "otherhost",
};

const char *
egw_eth_class_name(unsigned int cls)
{
	return cls < EGW_ETH_CLS_MAX ? cls_names[cls] : "unknown";
}

const char *
egw_eth_dst_name(unsigned int dst)
{
	return dst < EGW_ETH_DST_MAX ? dst_names[dst] : "unknown";
}

int
egw_eth_init(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "egw_eth_meta",
		.size = sizeof(struct egw_eth_meta),
		.align = __alignof__(struct egw_eth_meta),
	};
	int off;

	if (egw_eth_meta_offset >= 0)
		return 0;
	off = rte_mbuf_dynfield_register(&desc);
	if (off < 0)
		return -rte_errno;
	egw_eth_meta_offset = off;
	return 0;
}

static inline uint16_t
load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint8_t
dst_class(const uint8_t *d, const struct rte_ether_addr *mac)
{
	if (d[0] & 0x01) {
		/* group address: broadcast is all ones */
		if ((d[0] & d[1] & d[2] & d[3] & d[4] & d[5]) == 0xff)
			return EGW_ETH_DST_BROADCAST;
		return EGW_ETH_DST_MULTICAST;
	}
	return rte_is_same_ether_addr((const struct rte_ether_addr *)d, mac)
		       ? EGW_ETH_DST_HOST
		       : EGW_ETH_DST_OTHERHOST;
}

/* Result of one parse, before it is written to the mbuf. */
struct eth_parse {
	struct egw_eth_meta meta;
	uint32_t ptype;
	uint16_t l2_len;
	uint16_t tci[EGW_ETH_MAX_VLAN]; /* outermost first */
};

/*
 * Parse the link-layer header at p. 'avail' bytes can be read at p;
 * 'total' is the frame length (>= avail), against which the 802.3 length
 * field is checked. Returns l2_len, 0 for a bad frame.
 *
 * Always inline (reason: one body serves the in-place and the copy path,
 * and the in-place caller must not take the address of anything on its
 * stack).
 */
static __rte_always_inline uint16_t
eth_parse(const uint8_t *p, uint32_t avail, uint32_t total, const struct rte_ether_addr *mac,
	  struct eth_parse *r)
{
	uint32_t off = RTE_ETHER_HDR_LEN;
	unsigned int nv = 0;
	uint16_t type;
	uint32_t l2ptype;

	r->meta.n_vlan = 0;
	r->meta.reserved = 0;
	r->meta.proto = 0;
	r->l2_len = 0;
	if (unlikely(avail < RTE_ETHER_HDR_LEN)) {
		r->meta.cls = EGW_ETH_CLS_BAD;
		r->meta.dst = EGW_ETH_DST_OTHERHOST;
		r->ptype = RTE_PTYPE_UNKNOWN;
		return 0;
	}
	r->meta.dst = dst_class(p, mac);
	type = load_be16(p + 12);

	while (type == RTE_ETHER_TYPE_VLAN || type == RTE_ETHER_TYPE_QINQ ||
	       type == EGW_ETHER_TYPE_QINQ_9100) {
		if (nv == EGW_ETH_MAX_VLAN) {
			r->meta.cls = EGW_ETH_CLS_VLAN_DEEP;
			r->meta.n_vlan = nv;
			r->meta.proto = rte_cpu_to_be_16(type);
			r->ptype = RTE_PTYPE_L2_ETHER_QINQ;
			r->l2_len = off;
			return off;
		}
		if (unlikely(avail < off + 4))
			goto bad;
		r->tci[nv++] = load_be16(p + off);
		type = load_be16(p + off + 2);
		off += 4;
	}
	r->meta.n_vlan = nv;
	l2ptype = nv == 0   ? RTE_PTYPE_L2_ETHER
		  : nv == 1 ? RTE_PTYPE_L2_ETHER_VLAN
			    : RTE_PTYPE_L2_ETHER_QINQ;

	if (unlikely(type < EGW_ETHER_TYPE_MIN)) {
		/* IEEE 802.3 length. The payload (with its SAP bytes) must be
		 * present and the length must not claim more than the frame has:
		 * Ethernet padding may follow it, a lie may not. */
		if (type > EGW_ETHER_MAX_8023_LEN || type < 2 || total - off < type ||
		    avail < off + 2)
			goto bad;
		r->meta.cls =
			(p[off] & p[off + 1]) == 0xff ? EGW_ETH_CLS_RAW_8023 : EGW_ETH_CLS_LLC;
		r->ptype = l2ptype;
		r->l2_len = off;
		return off;
	}

	r->meta.proto = rte_cpu_to_be_16(type);
	r->l2_len = off;
	switch (type) {
	case RTE_ETHER_TYPE_IPV4:
		r->meta.cls = EGW_ETH_CLS_IPV4;
		r->ptype = l2ptype | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN;
		break;
	case RTE_ETHER_TYPE_IPV6:
		r->meta.cls = EGW_ETH_CLS_IPV6;
		r->ptype = l2ptype | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
		break;
	case RTE_ETHER_TYPE_ARP:
		r->meta.cls = EGW_ETH_CLS_ARP;
		r->ptype = nv ? l2ptype : RTE_PTYPE_L2_ETHER_ARP;
		break;
	case EGW_ETHER_TYPE_PPPOE_DISC:
		r->meta.cls = EGW_ETH_CLS_PPPOE_DISC;
		r->ptype = nv ? l2ptype : RTE_PTYPE_L2_ETHER_PPPOE;
		break;
	case EGW_ETHER_TYPE_PPPOE_SESS:
		r->meta.cls = EGW_ETH_CLS_PPPOE_SESS;
		r->ptype = nv ? l2ptype : RTE_PTYPE_L2_ETHER_PPPOE;
		break;
	default:
		r->meta.cls = EGW_ETH_CLS_OTHER;
		r->ptype = l2ptype;
		break;
	}
	return off;
bad:
	r->meta.cls = EGW_ETH_CLS_BAD;
	r->meta.n_vlan = 0;
	r->meta.proto = 0;
	r->ptype = RTE_PTYPE_UNKNOWN;
	r->l2_len = 0;
	return 0;
}

static __rte_always_inline void
eth_store(struct rte_mbuf *m, const struct eth_parse *r)
{
	uint64_t fl = m->ol_flags & ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ);

	m->packet_type = r->ptype;
	m->l2_len = r->l2_len;
	if (r->meta.n_vlan == 1) {
		m->vlan_tci = r->tci[0];
		fl |= RTE_MBUF_F_RX_VLAN;
	} else if (r->meta.n_vlan == 2) {
		m->vlan_tci_outer = r->tci[0];
		m->vlan_tci = r->tci[1];
		fl |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ;
	}
	m->ol_flags = fl;
	*egw_eth_meta(m) = r->meta;
}

/*
 * The fast path: a first segment holding at least EGW_ETH_MAX_HDR bytes (every
 * real frame, runts aside). All header bytes it may need are present, so it
 * reads them unconditionally and picks the result with selects and table
 * look-ups instead of branches: on a mix of frame types the branchy walk in
 * eth_parse() mispredicted about once per packet, which cost more than the
 * whole parse. It branches where a port's traffic decides, not a frame's
 * type: untagged IPv4/IPv6 first (a test of the ethertype and one of the
 * destination address, taken by every frame of a router's uplink), and
 * 802.3 length frames (rare), which go back to eth_parse().
 * tests/fuzz/fuzz_eth.c checks that both agree.
 */

/* Perfect hash of the ethertypes the fast path knows, into 16 slots
 * (multiplier found by search; the table's designated initialisers fail to
 * compile under -Werror=override-init if two ever collide). */
#define ETH_TYPE_HASH(t) ((uint16_t)((t)*0x1b1u) >> 12)
#define ETH_TYPE_SLOTS 16
/* Slot used when the ethertype is none of them. */
#define ETH_TYPE_OTHER ETH_TYPE_SLOTS

#define ETH_PT_L2(l2, l3)                                                      \
	{                                                                      \
		RTE_PTYPE_L2_ETHER##l2 | (l3), RTE_PTYPE_L2_ETHER_VLAN | (l3), \
			RTE_PTYPE_L2_ETHER_QINQ | (l3)                         \
	}

struct eth_type_ent {
	uint16_t type; /* host order; 0 = free slot (never matches) */
	uint8_t cls;
	uint32_t ptype[EGW_ETH_MAX_VLAN + 1]; /* by number of tags walked */
};

static const struct eth_type_ent eth_type_tbl[ETH_TYPE_SLOTS + 1] = {
	[ETH_TYPE_HASH(RTE_ETHER_TYPE_IPV4)] = {RTE_ETHER_TYPE_IPV4, EGW_ETH_CLS_IPV4,
						ETH_PT_L2(, RTE_PTYPE_L3_IPV4_EXT_UNKNOWN)},
	[ETH_TYPE_HASH(RTE_ETHER_TYPE_IPV6)] = {RTE_ETHER_TYPE_IPV6, EGW_ETH_CLS_IPV6,
						ETH_PT_L2(, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN)},
	[ETH_TYPE_HASH(RTE_ETHER_TYPE_ARP)] = {RTE_ETHER_TYPE_ARP, EGW_ETH_CLS_ARP,
					       ETH_PT_L2(_ARP, 0)},
	[ETH_TYPE_HASH(EGW_ETHER_TYPE_PPPOE_DISC)] = {EGW_ETHER_TYPE_PPPOE_DISC,
						      EGW_ETH_CLS_PPPOE_DISC, ETH_PT_L2(_PPPOE, 0)},
	[ETH_TYPE_HASH(EGW_ETHER_TYPE_PPPOE_SESS)] = {EGW_ETHER_TYPE_PPPOE_SESS,
						      EGW_ETH_CLS_PPPOE_SESS, ETH_PT_L2(_PPPOE, 0)},
	/* A TPID after the tags walked can only be a third tag (only two-tag
	 * slot reachable). */
	[ETH_TYPE_HASH(RTE_ETHER_TYPE_VLAN)] = {RTE_ETHER_TYPE_VLAN, EGW_ETH_CLS_VLAN_DEEP,
						ETH_PT_L2(_QINQ, 0)},
	[ETH_TYPE_HASH(RTE_ETHER_TYPE_QINQ)] = {RTE_ETHER_TYPE_QINQ, EGW_ETH_CLS_VLAN_DEEP,
						ETH_PT_L2(_QINQ, 0)},
	[ETH_TYPE_HASH(EGW_ETHER_TYPE_QINQ_9100)] = {EGW_ETHER_TYPE_QINQ_9100,
						     EGW_ETH_CLS_VLAN_DEEP, ETH_PT_L2(_QINQ, 0)},
	[ETH_TYPE_OTHER] = {0, EGW_ETH_CLS_OTHER, ETH_PT_L2(, 0)},
};

/* Destination class by (group bit << 1 | address equals the one compared). */
static const uint8_t eth_dst_tbl[4] = {
	EGW_ETH_DST_OTHERHOST,
	EGW_ETH_DST_HOST,
	EGW_ETH_DST_MULTICAST,
	EGW_ETH_DST_BROADCAST,
};

static const uint64_t eth_vlan_flags[EGW_ETH_MAX_VLAN + 1] = {
	0,
	RTE_MBUF_F_RX_VLAN,
	RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ,
};

static inline unsigned int
is_tpid(uint16_t t)
{
	return (t == RTE_ETHER_TYPE_VLAN) | (t == RTE_ETHER_TYPE_QINQ) |
	       (t == EGW_ETHER_TYPE_QINQ_9100);
}

#define ETH_MAC48_BCAST rte_le_to_cpu_64(UINT64_C(0x0000ffffffffffff))

/* The six address bytes at p (8 readable) as an integer, in memory order. */
static inline uint64_t
load_mac48(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v & ETH_MAC48_BCAST;
}

/* Destination class of the address mac48 (load_mac48()), mc its group bit:
 * a frame to the port's own address (a router's traffic) takes one test, a
 * group address is compared with broadcast, another one with ours. */
static inline uint8_t
eth_dst48(uint64_t mac48, unsigned int mc, uint64_t host48)
{
	if (likely(mac48 == host48))
		return EGW_ETH_DST_HOST;
	return eth_dst_tbl[mc << 1 | (mac48 == (mc ? ETH_MAC48_BCAST : host48))];
}

static __rte_noinline uint8_t eth_classify_slow(const struct egw_eth_port *port,
						struct rte_mbuf *m);

static_assert(EGW_ETH_CLS_IPV6 == EGW_ETH_CLS_IPV4 + 1, "untagged IP: class is IPv4 + v6");

/* packet_type of an untagged IPv4 (0) or IPv6 (1) frame */
static const uint32_t eth_ip_ptype[2] = {
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN,
	RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN,
};

/* Classify m, whose first segment holds at least EGW_ETH_MAX_HDR bytes at p. */
static __rte_always_inline uint8_t
eth_classify_fast(const struct egw_eth_port *port, uint64_t host48, struct rte_mbuf *m,
		  const uint8_t *p)
{
	uint16_t t0 = load_be16(p + 12), t1, t2;
	unsigned int tag0, tag1, nv, h;
	uint16_t type;
	uint64_t mac48 = load_mac48(p);
	unsigned int mc = p[0] & 1;
	const struct eth_type_ent *e;
	struct egw_eth_meta *meta;
	uint16_t tci_a, tci_b;

	/*
	 * Untagged IPv4 or IPv6, a router's traffic: the same stores as the
	 * table walk below makes for them, a third of its instructions. The
	 * branch follows a port's traffic (all untagged IP on an uplink, all
	 * PPPoE or all tagged on an access port), not each frame's type: IPv4
	 * and IPv6 take the same side.
	 */
	if (likely(t0 == RTE_ETHER_TYPE_IPV4 || t0 == RTE_ETHER_TYPE_IPV6)) {
		unsigned int v6 = t0 == RTE_ETHER_TYPE_IPV6;

		m->packet_type = eth_ip_ptype[v6];
		m->l2_len = RTE_ETHER_HDR_LEN;
		m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ);
		meta = egw_eth_meta(m);
		meta->cls = (uint8_t)(EGW_ETH_CLS_IPV4 + v6);
		meta->dst = eth_dst48(mac48, mc, host48);
		meta->n_vlan = 0;
		meta->reserved = 0;
		meta->proto = rte_cpu_to_be_16(t0);
		return (uint8_t)(EGW_ETH_CLS_IPV4 + v6);
	}

	t1 = load_be16(p + 16);
	t2 = load_be16(p + 20);
	tag0 = is_tpid(t0);
	tag1 = tag0 & is_tpid(t1);
	nv = tag0 + tag1;
	type = tag1 ? t2 : tag0 ? t1 : t0;
	h = ETH_TYPE_HASH(type);
	if (unlikely(type < EGW_ETHER_TYPE_MIN))
		return eth_classify_slow(port, m);

	e = &eth_type_tbl[eth_type_tbl[h].type == type ? h : ETH_TYPE_OTHER];
	tci_a = load_be16(p + 14);
	tci_b = load_be16(p + 18);

	m->packet_type = e->ptype[nv];
	m->l2_len = RTE_ETHER_HDR_LEN + 4 * nv;
	/* left as they were for an untagged frame, as eth_store() does */
	m->vlan_tci = nv == 0 ? m->vlan_tci : nv == 1 ? tci_a : tci_b;
	m->vlan_tci_outer = nv == 2 ? tci_a : m->vlan_tci_outer;
	m->ol_flags =
		(m->ol_flags & ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) | eth_vlan_flags[nv];

	meta = egw_eth_meta(m);
	meta->cls = e->cls;
	meta->dst = eth_dst48(mac48, mc, host48);
	meta->n_vlan = nv;
	meta->reserved = 0;
	meta->proto = rte_cpu_to_be_16(type);
	return e->cls;
}

/*
 * Everything the fast path does not take: 802.3 length frames, runts whose
 * single segment is shorter than EGW_ETH_MAX_HDR, and frames whose headers
 * straddle segments (or whose chain is shorter than its pkt_len says), which
 * are copied out. Cold, so its stack buffer and canary stay off the hot path.
 */
static __rte_noinline uint8_t
eth_classify_slow(const struct egw_eth_port *port, struct rte_mbuf *m)
{
	uint8_t buf[EGW_ETH_MAX_HDR];
	uint32_t dlen = m->data_len;
	const uint8_t *p;
	struct eth_parse r;
	uint32_t n;

	if (dlen >= EGW_ETH_MAX_HDR || dlen >= m->pkt_len) {
		p = rte_pktmbuf_mtod(m, const uint8_t *);
		n = dlen;
	} else {
		n = RTE_MIN(m->pkt_len, (uint32_t)sizeof(buf));
		p = rte_pktmbuf_read(m, 0, n, buf);
		if (p == NULL) {
			p = buf;
			n = 0;
		}
	}
	eth_parse(p, n, m->pkt_len, &port->mac, &r);
	eth_store(m, &r);
	return r.meta.cls;
}

uint16_t
egw_eth_classify_burst(const struct egw_eth_port *port, struct rte_mbuf *pkts[], uint16_t n)
{
	uint64_t host48 = 0;
	uint16_t i, good = 0;

	memcpy(&host48, port->mac.addr_bytes, RTE_ETHER_ADDR_LEN);

	for (i = 0; i < n && i < ETH_PREFETCH_MBUF; i++) {
		rte_prefetch0(pkts[i]);
		rte_prefetch0(&pkts[i]->cacheline1);
	}
	for (i = 0; i < n && i < ETH_PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t cls;

		if (i + ETH_PREFETCH_MBUF < n) {
			rte_prefetch0(pkts[i + ETH_PREFETCH_MBUF]);
			rte_prefetch0(&pkts[i + ETH_PREFETCH_MBUF]->cacheline1);
		}
		if (i + ETH_PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + ETH_PREFETCH_AHEAD], void *));

		if (likely(m->data_len >= EGW_ETH_MAX_HDR))
			cls = eth_classify_fast(port, host48, m,
						rte_pktmbuf_mtod(m, const uint8_t *));
		else
			cls = eth_classify_slow(port, m);

		/* Stable for the good frames: pkts[good .. i-1] are bad, so a
		 * good frame swaps with the first bad one. */
		if (likely(cls != EGW_ETH_CLS_BAD)) {
			if (unlikely(good != i)) {
				pkts[i] = pkts[good];
				pkts[good] = m;
			}
			good++;
		}
	}
	return good;
}

uint16_t
egw_eth_classify_buf(const struct egw_eth_port *port, const uint8_t *data, uint32_t len,
		     struct egw_eth_meta *meta)
{
	struct eth_parse r;
	uint16_t l2 = eth_parse(data, len, len, &port->mac, &r);

	*meta = r.meta;
	return l2;
}
