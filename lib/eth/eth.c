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
 */
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

/* How many packets ahead the burst loop prefetches the frame data. */
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
	return rte_is_same_ether_addr((const struct rte_ether_addr *)d, mac) ?
		EGW_ETH_DST_HOST : EGW_ETH_DST_OTHERHOST;
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
	l2ptype = nv == 0 ? RTE_PTYPE_L2_ETHER :
		nv == 1 ? RTE_PTYPE_L2_ETHER_VLAN : RTE_PTYPE_L2_ETHER_QINQ;

	if (unlikely(type < EGW_ETHER_TYPE_MIN)) {
		/* IEEE 802.3 length. The payload (with its SAP bytes) must be
		 * present and the length must not claim more than the frame has:
		 * Ethernet padding may follow it, a lie may not. */
		if (type > EGW_ETHER_MAX_8023_LEN || type < 2 || total - off < type ||
		    avail < off + 2)
			goto bad;
		r->meta.cls = (p[off] & p[off + 1]) == 0xff ? EGW_ETH_CLS_RAW_8023 :
							      EGW_ETH_CLS_LLC;
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

/* Headers straddle segments (or the chain is shorter than its pkt_len says):
 * copy the first bytes out. Cold, so its stack buffer and canary stay off the
 * hot path. */
static __rte_noinline uint8_t
eth_classify_copy(const struct egw_eth_port *port, struct rte_mbuf *m)
{
	uint8_t buf[EGW_ETH_MAX_HDR];
	uint32_t n = RTE_MIN(m->pkt_len, (uint32_t)sizeof(buf));
	const uint8_t *p = rte_pktmbuf_read(m, 0, n, buf);
	struct eth_parse r;

	if (p == NULL)
		n = 0;
	eth_parse(p != NULL ? p : buf, n, m->pkt_len, &port->mac, &r);
	eth_store(m, &r);
	return r.meta.cls;
}

uint16_t
egw_eth_classify_burst(const struct egw_eth_port *port, struct rte_mbuf *pkts[], uint16_t n)
{
	uint16_t i, good = 0;

	for (i = 0; i < n && i < ETH_PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t dlen = m->data_len;
		uint8_t cls;

		if (i + ETH_PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + ETH_PREFETCH_AHEAD], void *));

		if (likely(dlen >= EGW_ETH_MAX_HDR || dlen >= m->pkt_len)) {
			/* r never leaves this frame: both helpers are inlined */
			struct eth_parse r;

			eth_parse(rte_pktmbuf_mtod(m, const uint8_t *), dlen, m->pkt_len,
				  &port->mac, &r);
			eth_store(m, &r);
			cls = r.meta.cls;
		} else {
			cls = eth_classify_copy(port, m);
		}

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
