/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * edgegw Ethernet classification.
 *
 * One burst function reads the Ethernet header (and up to two VLAN tags) of
 * each mbuf in place, once, and records what it found in the mbuf so that
 * later stages never parse the link layer again:
 *
 *  - mbuf->packet_type: RTE_PTYPE_L2_* (ETHER, ETHER_VLAN, ETHER_QINQ,
 *    ETHER_ARP, ETHER_PPPOE) and RTE_PTYPE_L3_IPV4/IPV6_EXT_UNKNOWN;
 *  - mbuf->l2_len: bytes from the start of the frame to the network header
 *    (Ethernet + tags; for 802.3 frames, the 14-byte MAC header);
 *  - mbuf->vlan_tci / vlan_tci_outer with RTE_MBUF_F_RX_VLAN / _RX_QINQ
 *    (tags are left in the frame, so _STRIPPED is never set);
 *  - a dynamic field (struct egw_eth_meta) with the edgegw class, the
 *    destination class and the inner ethertype.
 *
 * The header is read in place; only a frame whose first segment is shorter
 * than the headers it carries is copied (to a small buffer in a cold
 * function), so the common path takes no stack copy.
 */
#ifndef EGW_ETH_H
#define EGW_ETH_H

#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Ethertype of PPPoE discovery frames (RFC 2516). */
#define EGW_ETHER_TYPE_PPPOE_DISC 0x8863
/** Ethertype of PPPoE session frames (RFC 2516). */
#define EGW_ETHER_TYPE_PPPOE_SESS 0x8864
/** Legacy QinQ TPID still seen on access networks. */
#define EGW_ETHER_TYPE_QINQ_9100 0x9100
/** Largest value of the type/length field that is a length (IEEE 802.3). */
#define EGW_ETHER_MAX_8023_LEN 1500
/** Smallest value of the type/length field that is an ethertype. */
#define EGW_ETHER_TYPE_MIN 0x0600
/** Most VLAN tags the classifier walks. A third tag is left unparsed. */
#define EGW_ETH_MAX_VLAN 2
/** Most header bytes the classifier reads: MAC + 2 tags + 2 SAP bytes. */
#define EGW_ETH_MAX_HDR (RTE_ETHER_HDR_LEN + EGW_ETH_MAX_VLAN * 4 + 2)

/** Frame class recorded in struct egw_eth_meta::cls. */
enum egw_eth_class {
	EGW_ETH_CLS_BAD = 0,    /**< shorter than the headers it claims; lying length */
	EGW_ETH_CLS_IPV4,       /**< ethertype 0x0800 */
	EGW_ETH_CLS_IPV6,       /**< ethertype 0x86DD */
	EGW_ETH_CLS_ARP,        /**< ethertype 0x0806 */
	EGW_ETH_CLS_PPPOE_DISC, /**< ethertype 0x8863 */
	EGW_ETH_CLS_PPPOE_SESS, /**< ethertype 0x8864 */
	EGW_ETH_CLS_LLC,        /**< IEEE 802.3 length frame with 802.2 LLC */
	EGW_ETH_CLS_RAW_8023,   /**< IEEE 802.3 length frame, 0xFFFF: raw (Novell IPX) */
	EGW_ETH_CLS_VLAN_DEEP,  /**< more than EGW_ETH_MAX_VLAN tags */
	EGW_ETH_CLS_OTHER,      /**< any other ethertype */
	EGW_ETH_CLS_MAX
};

/** Destination class recorded in struct egw_eth_meta::dst. */
enum egw_eth_dst {
	EGW_ETH_DST_HOST = 0,  /**< unicast to the port's own address */
	EGW_ETH_DST_BROADCAST, /**< ff:ff:ff:ff:ff:ff */
	EGW_ETH_DST_MULTICAST, /**< group bit set, not broadcast */
	EGW_ETH_DST_OTHERHOST, /**< unicast to another station */
	EGW_ETH_DST_MAX
};

/** Per-mbuf classification result, stored in a dynamic mbuf field. */
struct egw_eth_meta {
	uint8_t cls;    /**< enum egw_eth_class */
	uint8_t dst;    /**< enum egw_eth_dst */
	uint8_t n_vlan; /**< tags walked (0..2) */
	uint8_t reserved;
	rte_be16_t proto; /**< ethertype after the tags; 0 for 802.3 frames */
};

/** Byte offset of struct egw_eth_meta in the mbuf; valid after egw_eth_init(). */
extern int egw_eth_meta_offset;

/** Per-port context of the classifier (read-only on the fast path). */
struct egw_eth_port {
	struct rte_ether_addr mac; /**< the port's unicast address */
};

/**
 * Register the dynamic mbuf field. Call once after rte_eal_init(), before any
 * other egw_eth_ function. Idempotent.
 *
 * @return 0, or a negative errno from rte_mbuf_dynfield_register().
 */
int egw_eth_init(void);

/**
 * The classification result of a classified mbuf.
 *
 * @param m
 *   An mbuf that went through egw_eth_classify_burst().
 * @return
 *   Pointer to the metadata inside the mbuf.
 */
static inline struct egw_eth_meta *
egw_eth_meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, egw_eth_meta_offset, struct egw_eth_meta *);
}

/**
 * Classify a burst of received frames.
 *
 * Every mbuf gets its packet_type, l2_len, VLAN fields and struct
 * egw_eth_meta set. Frames classified EGW_ETH_CLS_BAD are moved after the
 * good ones (the good ones keep their order), as DPDK's burst APIs do.
 *
 * @param port
 *   The receiving port's context (its MAC decides the destination class).
 * @param pkts
 *   The mbufs; single- or multi-segment.
 * @param n
 *   Number of mbufs in @p pkts.
 * @return
 *   The number of good frames, now at pkts[0 .. ret-1]; the bad ones are at
 *   pkts[ret .. n-1].
 */
uint16_t egw_eth_classify_burst(const struct egw_eth_port *port, struct rte_mbuf *pkts[],
				uint16_t n);

/**
 * Classify again, from its last ethertype alone, an IP frame a stage
 * rewrote behind its own MAC header: its addresses, VLAN tags and l2_len
 * kept, only the ethertype before the L3 header changed (lib/esp's tunnel
 * encapsulation and decapsulation, which keep the frame's dynamic fields
 * on every frame they make).
 *
 * @param m
 *   A frame egw_eth_classify_burst() classified EGW_ETH_CLS_IPV4 or
 *   EGW_ETH_CLS_IPV6 (or whose metadata a stage kept as it would have
 *   recorded it), at least l2_len bytes in its first segment.
 * @return
 *   EGW_ETH_CLS_IPV4 or EGW_ETH_CLS_IPV6 with m's packet_type and struct
 *   egw_eth_meta now what egw_eth_classify_burst() would record for the
 *   frame; or EGW_ETH_CLS_BAD, m unchanged, when the new ethertype is
 *   neither (classify the frame in full then).
 */
static inline uint8_t
egw_eth_reclassify_ip(struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *) + m->l2_len - 2;
	uint16_t type = (uint16_t)(p[0] << 8 | p[1]);
	struct egw_eth_meta *meta = egw_eth_meta(m);
	uint8_t v6;

	if (type == RTE_ETHER_TYPE_IPV4)
		v6 = 0;
	else if (type == RTE_ETHER_TYPE_IPV6)
		v6 = 1;
	else
		return EGW_ETH_CLS_BAD;
	m->packet_type = (m->packet_type & ~RTE_PTYPE_L3_MASK) |
			 (v6 ? RTE_PTYPE_L3_IPV6_EXT_UNKNOWN : RTE_PTYPE_L3_IPV4_EXT_UNKNOWN);
	meta->cls = (uint8_t)(EGW_ETH_CLS_IPV4 + v6);
	meta->proto = rte_cpu_to_be_16(type);
	return meta->cls;
}

/**
 * Classify one frame given as a flat buffer (no mbuf). Used by tests and
 * tools; the burst function is the fast path.
 *
 * @param port
 *   The receiving port's context.
 * @param data
 *   The frame, starting at the destination MAC.
 * @param len
 *   Bytes present at @p data.
 * @param meta
 *   Filled with the result.
 * @return
 *   The number of header bytes (l2_len), or 0 if the frame is bad.
 */
uint16_t egw_eth_classify_buf(const struct egw_eth_port *port, const uint8_t *data, uint32_t len,
			      struct egw_eth_meta *meta);

/**
 * Name of a frame class, for counters and logs.
 *
 * @return a static string; "unknown" for an out-of-range value.
 */
const char *egw_eth_class_name(unsigned int cls);

/**
 * Name of a destination class.
 *
 * @return a static string; "unknown" for an out-of-range value.
 */
const char *egw_eth_dst_name(unsigned int dst);

#ifdef __cplusplus
}
#endif

#endif /* EGW_ETH_H */
