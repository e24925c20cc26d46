/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the Ethernet classifier (lib/eth).
 *
 * One table of frames, each built in C from its layers (destination MAC,
 * tags, type/length field, first two payload bytes) and labelled with what
 * the classifier must report. Every row is checked
 *  - whole, through egw_eth_classify_buf() and through a one-segment mbuf;
 *  - truncated at every length 0..len-1, through a malloc'd buffer of exactly
 *    that size (so ASan reports any read past the end) and through an mbuf:
 *    BAD exactly when the cut falls inside the headers, else the full result;
 *  - split into 2-segment chains at every offset 1..63 and into some
 *    3-segment chains (and one with a segment per header byte): the same as
 *    one segment;
 *  - in bursts mixing good and bad frames: return value, order of the good
 *    ones, bad ones after them.
 *
 * The expected values come from IEEE 802.3 clause 3.2.6 (type/length field:
 * <= 1500 length, >= 0x0600 type, in between invalid), IEEE 802.1Q (TPIDs
 * 0x8100 C-tag, 0x88A8 S-tag; 0x9100 is the pre-standard S-tag), RFC 2516
 * (PPPoE 0x8863/0x8864) and the Linux eth_type_trans() rule for raw 802.3
 * (DSAP/SSAP 0xFFFF = Novell IPX without LLC).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>

#include "egw_eth.h"

#define FRAME_MAX 1600
#define NB_MBUF 2047
/* The classifier never reads past this many bytes of a frame. */
#define SPLIT_MAX 63

static const uint8_t mac_host[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01};
static const uint8_t mac_src[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x99};
static const uint8_t mac_other[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x02};
/* differs from mac_host in the first byte only: the compare must cover it */
static const uint8_t mac_other_b0[6] = {0x06, 0x00, 0x5e, 0x10, 0x00, 0x01};
static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_almost_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
static const uint8_t mac_mcast4[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
static const uint8_t mac_mcast6[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
static const uint8_t mac_stp[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x00};

struct tag {
	uint16_t tpid;
	uint16_t tci;
};

/* One frame and what the classifier must say about it. */
struct eth_case {
	const char *label;
	/* the frame */
	const uint8_t *dst;
	uint8_t n_tags;
	struct tag tags[4];
	uint16_t type;  /* type/length field after the tags */
	uint16_t len;   /* whole frame (no FCS) */
	uint8_t sap[2]; /* first two payload bytes: DSAP/SSAP for 802.3 */
	/* expected, in this order in the rows below */
	uint8_t cls;
	uint8_t dst_cls;
	uint8_t n_vlan;
	uint16_t proto; /* host order; 0 for 802.3 and bad frames */
	uint16_t l2_len;
	uint32_t ptype;
	uint16_t tci;       /* checked when n_vlan >= 1 */
	uint16_t tci_outer; /* checked when n_vlan == 2 */
	uint64_t flags;     /* RTE_MBUF_F_RX_VLAN / _RX_QINQ */
};

#define P_ETH RTE_PTYPE_L2_ETHER
#define P_VLAN RTE_PTYPE_L2_ETHER_VLAN
#define P_QINQ RTE_PTYPE_L2_ETHER_QINQ
#define P_V4 RTE_PTYPE_L3_IPV4_EXT_UNKNOWN
#define P_V6 RTE_PTYPE_L3_IPV6_EXT_UNKNOWN
#define F_V RTE_MBUF_F_RX_VLAN
#define F_VQ (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)
#define BAD EGW_ETH_CLS_BAD, 0, 0, 0, 0, RTE_PTYPE_UNKNOWN, 0, 0, 0

/*
 * One row: label, destination MAC, tags (NOTAG or Tn(tpid, tci, ...)), type or
 * length, frame length, first two payload bytes; then the expected cls,
 * dst_cls, n_vlan, proto, l2_len, ptype, tci, tci_outer, flags (or BAD).
 */
/* (row macros kept on one line each) */
/* clang-format off */
#define ROW(label, dst, tags, type, len, sap0, sap1, ...) \
	{label, dst, tags, type, len, {sap0, sap1}, __VA_ARGS__}
#define NOTAG 0, {{0}}
#define T1(a, b) 1, {{a, b}}
#define T2(a, b, c, d) 2, {{a, b}, {c, d}}
#define T3(a, b, c, d, e, f) 3, {{a, b}, {c, d}, {e, f}}
#define T4(a, b, c, d, e, f, g, h) 4, {{a, b}, {c, d}, {e, f}, {g, h}}
/* clang-format on */

static const struct eth_case cases[] = {
	/* ---- untagged Ethernet II ---- */
	ROW("ipv4 to host", mac_host, NOTAG, 0x0800, 60, 0x45, 0x00, EGW_ETH_CLS_IPV4,
	    EGW_ETH_DST_HOST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv4 to otherhost", mac_other, NOTAG, 0x0800, 60, 0x45, 0x00, EGW_ETH_CLS_IPV4,
	    EGW_ETH_DST_OTHERHOST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv4 to otherhost (first MAC byte differs)", mac_other_b0, NOTAG, 0x0800, 60, 0x45,
	    0x00, EGW_ETH_CLS_IPV4, EGW_ETH_DST_OTHERHOST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv4 to multicast 01:00:5e", mac_mcast4, NOTAG, 0x0800, 98, 0x45, 0x00,
	    EGW_ETH_CLS_IPV4, EGW_ETH_DST_MULTICAST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv4 to broadcast", mac_bcast, NOTAG, 0x0800, 342, 0x45, 0x10, EGW_ETH_CLS_IPV4,
	    EGW_ETH_DST_BROADCAST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv4 to ff:ff:ff:ff:ff:fe (multicast, not broadcast)", mac_almost_bcast, NOTAG, 0x0800,
	    60, 0x45, 0x00, EGW_ETH_CLS_IPV4, EGW_ETH_DST_MULTICAST, 0, 0x0800, 14, P_ETH | P_V4, 0,
	    0, 0),
	ROW("ipv4 1514 bytes", mac_host, NOTAG, 0x0800, 1514, 0x45, 0x00, EGW_ETH_CLS_IPV4,
	    EGW_ETH_DST_HOST, 0, 0x0800, 14, P_ETH | P_V4, 0, 0, 0),
	ROW("ipv6 to host", mac_host, NOTAG, 0x86dd, 78, 0x60, 0x00, EGW_ETH_CLS_IPV6,
	    EGW_ETH_DST_HOST, 0, 0x86dd, 14, P_ETH | P_V6, 0, 0, 0),
	ROW("ipv6 to multicast 33:33", mac_mcast6, NOTAG, 0x86dd, 86, 0x60, 0x00, EGW_ETH_CLS_IPV6,
	    EGW_ETH_DST_MULTICAST, 0, 0x86dd, 14, P_ETH | P_V6, 0, 0, 0),
	ROW("arp request to broadcast", mac_bcast, NOTAG, 0x0806, 60, 0x00, 0x01, EGW_ETH_CLS_ARP,
	    EGW_ETH_DST_BROADCAST, 0, 0x0806, 14, RTE_PTYPE_L2_ETHER_ARP, 0, 0, 0),
	ROW("arp reply to host", mac_host, NOTAG, 0x0806, 60, 0x00, 0x01, EGW_ETH_CLS_ARP,
	    EGW_ETH_DST_HOST, 0, 0x0806, 14, RTE_PTYPE_L2_ETHER_ARP, 0, 0, 0),
	ROW("pppoe discovery PADI to broadcast", mac_bcast, NOTAG, 0x8863, 60, 0x11, 0x09,
	    EGW_ETH_CLS_PPPOE_DISC, EGW_ETH_DST_BROADCAST, 0, 0x8863, 14, RTE_PTYPE_L2_ETHER_PPPOE,
	    0, 0, 0),
	ROW("pppoe session to host", mac_host, NOTAG, 0x8864, 60, 0x11, 0x00,
	    EGW_ETH_CLS_PPPOE_SESS, EGW_ETH_DST_HOST, 0, 0x8864, 14, RTE_PTYPE_L2_ETHER_PPPOE, 0, 0,
	    0),
	ROW("other: lldp 0x88cc to 01:80:c2:00:00:0e", mac_stp, NOTAG, 0x88cc, 60, 0x02, 0x07,
	    EGW_ETH_CLS_OTHER, EGW_ETH_DST_MULTICAST, 0, 0x88cc, 14, P_ETH, 0, 0, 0),
	ROW("other: 0x0600, smallest ethertype", mac_host, NOTAG, 0x0600, 60, 0, 0,
	    EGW_ETH_CLS_OTHER, EGW_ETH_DST_HOST, 0, 0x0600, 14, P_ETH, 0, 0, 0),
	ROW("other: 0xffff", mac_other, NOTAG, 0xffff, 60, 0xff, 0xff, EGW_ETH_CLS_OTHER,
	    EGW_ETH_DST_OTHERHOST, 0, 0xffff, 14, P_ETH, 0, 0, 0),
	/* ---- IEEE 802.3 length frames ---- */
	ROW("802.2 llc: stp bpdu, length 38", mac_stp, NOTAG, 38, 60, 0x42, 0x42, EGW_ETH_CLS_LLC,
	    EGW_ETH_DST_MULTICAST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.2 llc: snap, length 46 fills a 60-byte frame", mac_host, NOTAG, 46, 60, 0xaa, 0xaa,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.2 llc: length 2, SAP bytes only, padded", mac_host, NOTAG, 2, 60, 0xe0, 0xe0,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.2 llc: length 1500, the largest", mac_host, NOTAG, 1500, 1514, 0xe0, 0xe0,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.2 llc: dsap 0xff ssap 0x00 is not raw", mac_host, NOTAG, 20, 60, 0xff, 0x00,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.2 llc: dsap 0x00 ssap 0xff is not raw", mac_host, NOTAG, 20, 60, 0x00, 0xff,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.3 raw 0xffff (novell ipx) to broadcast", mac_bcast, NOTAG, 40, 60, 0xff, 0xff,
	    EGW_ETH_CLS_RAW_8023, EGW_ETH_DST_BROADCAST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.3 raw 0xffff, length 1500", mac_host, NOTAG, 1500, 1514, 0xff, 0xff,
	    EGW_ETH_CLS_RAW_8023, EGW_ETH_DST_HOST, 0, 0, 14, P_ETH, 0, 0, 0),
	ROW("802.3 bad: length 100 > 46 bytes present", mac_host, NOTAG, 100, 60, 0x42, 0x42, BAD),
	ROW("802.3 bad: length 47, one more than present", mac_host, NOTAG, 47, 60, 0x42, 0x42,
	    BAD),
	ROW("802.3 bad: length 1, no room for the SAPs", mac_host, NOTAG, 1, 60, 0x42, 0x42, BAD),
	ROW("802.3 bad: length 0", mac_host, NOTAG, 0, 60, 0x42, 0x42, BAD),
	ROW("802.3 bad: length 1501", mac_host, NOTAG, 1501, 1600, 0x42, 0x42, BAD),
	ROW("802.3 bad: length 1520", mac_host, NOTAG, 1520, 1600, 0x42, 0x42, BAD),
	ROW("802.3 bad: length 1535 (0x05ff)", mac_host, NOTAG, 1535, 1600, 0xff, 0xff, BAD),
	/* ---- one tag ---- */
	ROW("802.1q vid 100 ipv4", mac_host, T1(0x8100, 0x0064), 0x0800, 64, 0x45, 0x00,
	    EGW_ETH_CLS_IPV4, EGW_ETH_DST_HOST, 1, 0x0800, 18, P_VLAN | P_V4, 0x0064, 0, F_V),
	ROW("802.1q pcp 7 dei vid 4095 ipv6", mac_host, T1(0x8100, 0xffff), 0x86dd, 82, 0x60, 0x00,
	    EGW_ETH_CLS_IPV6, EGW_ETH_DST_HOST, 1, 0x86dd, 18, P_VLAN | P_V6, 0xffff, 0, F_V),
	ROW("802.1q priority tag (vid 0) arp to broadcast", mac_bcast, T1(0x8100, 0xa000), 0x0806,
	    64, 0x00, 0x01, EGW_ETH_CLS_ARP, EGW_ETH_DST_BROADCAST, 1, 0x0806, 18, P_VLAN, 0xa000,
	    0, F_V),
	ROW("802.1q pppoe discovery", mac_bcast, T1(0x8100, 0x0007), 0x8863, 64, 0x11, 0x09,
	    EGW_ETH_CLS_PPPOE_DISC, EGW_ETH_DST_BROADCAST, 1, 0x8863, 18, P_VLAN, 0x0007, 0, F_V),
	ROW("802.1q pppoe session", mac_host, T1(0x8100, 0x0007), 0x8864, 64, 0x11, 0x00,
	    EGW_ETH_CLS_PPPOE_SESS, EGW_ETH_DST_HOST, 1, 0x8864, 18, P_VLAN, 0x0007, 0, F_V),
	ROW("802.1q other 0x88cc", mac_stp, T1(0x8100, 0x0001), 0x88cc, 64, 0x02, 0x07,
	    EGW_ETH_CLS_OTHER, EGW_ETH_DST_MULTICAST, 1, 0x88cc, 18, P_VLAN, 0x0001, 0, F_V),
	ROW("802.1q 802.2 llc length 30", mac_stp, T1(0x8100, 0x0002), 30, 64, 0x42, 0x42,
	    EGW_ETH_CLS_LLC, EGW_ETH_DST_MULTICAST, 1, 0, 18, P_VLAN, 0x0002, 0, F_V),
	ROW("802.1q 802.3 raw 0xffff", mac_bcast, T1(0x8100, 0x0002), 46, 64, 0xff, 0xff,
	    EGW_ETH_CLS_RAW_8023, EGW_ETH_DST_BROADCAST, 1, 0, 18, P_VLAN, 0x0002, 0, F_V),
	ROW("802.1q 802.3 bad: length 47 > 46 present", mac_host, T1(0x8100, 0x0002), 47, 64, 0x42,
	    0x42, BAD),
	ROW("802.1ad single s-tag pppoe session", mac_host, T1(0x88a8, 0x0123), 0x8864, 64, 0x11,
	    0x00, EGW_ETH_CLS_PPPOE_SESS, EGW_ETH_DST_HOST, 1, 0x8864, 18, P_VLAN, 0x0123, 0, F_V),
	ROW("0x9100 single tag ipv4", mac_host, T1(0x9100, 0x0321), 0x0800, 64, 0x45, 0x00,
	    EGW_ETH_CLS_IPV4, EGW_ETH_DST_HOST, 1, 0x0800, 18, P_VLAN | P_V4, 0x0321, 0, F_V),
	/* ---- two tags ---- */
	ROW("802.1ad 100 + 802.1q 200 ipv4", mac_host, T2(0x88a8, 0x0064, 0x8100, 0x00c8), 0x0800,
	    68, 0x45, 0x00, EGW_ETH_CLS_IPV4, EGW_ETH_DST_HOST, 2, 0x0800, 22, P_QINQ | P_V4,
	    0x00c8, 0x0064, F_VQ),
	ROW("802.1ad + 802.1q ipv6 to otherhost", mac_other, T2(0x88a8, 0x2fff, 0x8100, 0xe001),
	    0x86dd, 86, 0x60, 0x00, EGW_ETH_CLS_IPV6, EGW_ETH_DST_OTHERHOST, 2, 0x86dd, 22,
	    P_QINQ | P_V6, 0xe001, 0x2fff, F_VQ),
	ROW("0x9100 + 802.1q ipv4", mac_host, T2(0x9100, 0x0010, 0x8100, 0x0020), 0x0800, 68, 0x45,
	    0x00, EGW_ETH_CLS_IPV4, EGW_ETH_DST_HOST, 2, 0x0800, 22, P_QINQ | P_V4, 0x0020, 0x0010,
	    F_VQ),
	ROW("802.1q + 802.1q ipv4", mac_host, T2(0x8100, 0x0011, 0x8100, 0x0022), 0x0800, 68, 0x45,
	    0x00, EGW_ETH_CLS_IPV4, EGW_ETH_DST_HOST, 2, 0x0800, 22, P_QINQ | P_V4, 0x0022, 0x0011,
	    F_VQ),
	ROW("qinq arp to broadcast", mac_bcast, T2(0x88a8, 0x0001, 0x8100, 0x0002), 0x0806, 68,
	    0x00, 0x01, EGW_ETH_CLS_ARP, EGW_ETH_DST_BROADCAST, 2, 0x0806, 22, P_QINQ, 0x0002,
	    0x0001, F_VQ),
	ROW("qinq pppoe discovery", mac_bcast, T2(0x88a8, 0x0001, 0x8100, 0x0002), 0x8863, 68, 0x11,
	    0x09, EGW_ETH_CLS_PPPOE_DISC, EGW_ETH_DST_BROADCAST, 2, 0x8863, 22, P_QINQ, 0x0002,
	    0x0001, F_VQ),
	ROW("qinq pppoe session", mac_host, T2(0x88a8, 0x0001, 0x8100, 0x0002), 0x8864, 68, 0x11,
	    0x00, EGW_ETH_CLS_PPPOE_SESS, EGW_ETH_DST_HOST, 2, 0x8864, 22, P_QINQ, 0x0002, 0x0001,
	    F_VQ),
	ROW("qinq 802.2 llc length 3", mac_stp, T2(0x88a8, 0x0001, 0x8100, 0x0002), 3, 68, 0x42,
	    0x42, EGW_ETH_CLS_LLC, EGW_ETH_DST_MULTICAST, 2, 0, 22, P_QINQ, 0x0002, 0x0001, F_VQ),
	ROW("qinq 802.3 raw 0xffff, length 46 fills the frame", mac_bcast,
	    T2(0x88a8, 0x0001, 0x8100, 0x0002), 46, 68, 0xff, 0xff, EGW_ETH_CLS_RAW_8023,
	    EGW_ETH_DST_BROADCAST, 2, 0, 22, P_QINQ, 0x0002, 0x0001, F_VQ),
	ROW("qinq 802.3 bad: length 1501", mac_host, T2(0x88a8, 0x0001, 0x8100, 0x0002), 1501, 1600,
	    0x42, 0x42, BAD),
	/* ---- more tags than the classifier walks ---- */
	ROW("three tags 802.1ad/802.1q/802.1q ipv4", mac_host,
	    T3(0x88a8, 0x0001, 0x8100, 0x0002, 0x8100, 0x0003), 0x0800, 72, 0x45, 0x00,
	    EGW_ETH_CLS_VLAN_DEEP, EGW_ETH_DST_HOST, 2, 0x8100, 22, P_QINQ, 0x0002, 0x0001, F_VQ),
	ROW("three tags 0x9100 x3 to broadcast", mac_bcast,
	    T3(0x9100, 0x0004, 0x9100, 0x0005, 0x9100, 0x0006), 0x0806, 72, 0x00, 0x01,
	    EGW_ETH_CLS_VLAN_DEEP, EGW_ETH_DST_BROADCAST, 2, 0x9100, 22, P_QINQ, 0x0005, 0x0004,
	    F_VQ),
	ROW("four tags", mac_host,
	    T4(0x88a8, 0x0001, 0x88a8, 0x0002, 0x8100, 0x0003, 0x8100, 0x0004), 0x0800, 76, 0x45,
	    0x00, EGW_ETH_CLS_VLAN_DEEP, EGW_ETH_DST_HOST, 2, 0x8100, 22, P_QINQ, 0x0002, 0x0001,
	    F_VQ),
};

#define N_CASES RTE_DIM(cases)

static const struct egw_eth_port port = {
	.mac = {.addr_bytes = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}},
};

/* label for the checks that are about the API rather than a frame */
static const struct eth_case api = {.label = "api"};

static struct rte_mempool *pool;
static unsigned long n_pass;
static unsigned long n_fail;

/* What a (possibly cut) frame must classify as. */
struct expect {
	uint8_t cls;
	uint8_t dst;
	uint8_t n_vlan;
	uint16_t proto;
	uint16_t l2_len;
	uint32_t ptype;
	uint16_t tci;
	uint16_t tci_outer;
	uint64_t flags;
};

static const struct expect expect_bad = {
	.cls = EGW_ETH_CLS_BAD,
	.ptype = RTE_PTYPE_UNKNOWN,
};

static void
check(const struct eth_case *c, const char *ctx, const char *field, uint64_t got, uint64_t want)
{
	if (got == want) {
		n_pass++;
		return;
	}
	n_fail++;
	if (n_fail <= 100)
		printf("FAIL [%s] %s: %s = 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", c->label, ctx,
		       field, got, want);
}

static void
expect_of(const struct eth_case *c, struct expect *e)
{
	e->cls = c->cls;
	e->dst = c->dst_cls;
	e->n_vlan = c->n_vlan;
	e->proto = c->proto;
	e->l2_len = c->l2_len;
	e->ptype = c->ptype;
	e->tci = c->tci;
	e->tci_outer = c->tci_outer;
	e->flags = c->flags;
}

/*
 * Bytes a frame needs to classify as its full self: the headers, and for an
 * 802.3 frame its two SAP bytes and the payload its length field claims.
 * Shorter is BAD. A frame that is BAD whole is BAD at any length.
 */
static uint32_t
bytes_needed(const struct eth_case *c)
{
	if (c->cls == EGW_ETH_CLS_BAD)
		return UINT32_MAX;
	if (c->cls == EGW_ETH_CLS_LLC || c->cls == EGW_ETH_CLS_RAW_8023)
		return c->l2_len + RTE_MAX(2u, (unsigned int)c->type);
	return c->l2_len;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint32_t
build_frame(const struct eth_case *c, uint8_t *buf)
{
	uint32_t off, i;

	memcpy(buf, c->dst, RTE_ETHER_ADDR_LEN);
	memcpy(buf + RTE_ETHER_ADDR_LEN, mac_src, RTE_ETHER_ADDR_LEN);
	off = 2 * RTE_ETHER_ADDR_LEN;
	for (i = 0; i < c->n_tags; i++) {
		put16(buf + off, c->tags[i].tpid);
		put16(buf + off + 2, c->tags[i].tci);
		off += 4;
	}
	put16(buf + off, c->type);
	off += 2;
	for (i = off; i < c->len; i++)
		buf[i] = (uint8_t)(i * 29 + 7);
	buf[off] = c->sap[0];
	buf[off + 1] = c->sap[1];
	return c->len;
}

static void
check_meta(const struct eth_case *c, const char *ctx, const struct egw_eth_meta *meta,
	   const struct expect *e)
{
	check(c, ctx, "meta.cls", meta->cls, e->cls);
	if (e->cls == EGW_ETH_CLS_BAD)
		return;
	check(c, ctx, "meta.dst", meta->dst, e->dst);
	check(c, ctx, "meta.n_vlan", meta->n_vlan, e->n_vlan);
	check(c, ctx, "meta.proto", rte_be_to_cpu_16(meta->proto), e->proto);
}

/* Result of egw_eth_classify_buf() on len bytes at a malloc'd copy of exactly that size. */
static void
run_flat(const struct eth_case *c, const char *ctx, const uint8_t *frame, uint32_t len,
	 const struct expect *e)
{
	struct egw_eth_meta meta;
	uint8_t *buf = malloc(len);
	uint16_t l2;

	if (buf == NULL && len > 0) {
		printf("FAIL [%s] %s: out of memory\n", c->label, ctx);
		n_fail++;
		return;
	}
	if (len > 0)
		memcpy(buf, frame, len);
	memset(&meta, 0xee, sizeof(meta));
	l2 = egw_eth_classify_buf(&port, buf, len, &meta);
	free(buf);
	check(c, ctx, "return (l2_len)", l2, e->l2_len);
	check_meta(c, ctx, &meta, e);
}

/* Make the fields the classifier must write visibly wrong first. */
static void
poison(struct rte_mbuf *m)
{
	m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ;
	m->packet_type = 0xdeadbeef;
	m->l2_len = 99;
	memset(egw_eth_meta(m), 0xee, sizeof(struct egw_eth_meta));
}

/* An mbuf chain of len bytes of frame, cut before each offset in cuts[] (ascending). */
static struct rte_mbuf *
make_chain(const uint8_t *frame, uint32_t len, const uint32_t *cuts, unsigned int n_cuts)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;
	unsigned int i;

	for (i = 0; i <= n_cuts; i++) {
		uint32_t to = i < n_cuts ? cuts[i] : len;
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		char *d;

		if (m == NULL)
			goto fail;
		d = rte_pktmbuf_append(m, to - from);
		if (d == NULL && to > from) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		if (to > from)
			memcpy(d, frame + from, to - from);
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		from = to;
	}
	poison(head);
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

static void
check_mbuf(const struct eth_case *c, const char *ctx, struct rte_mbuf *m, const struct expect *e)
{
	check(c, ctx, "packet_type", m->packet_type, e->ptype);
	check(c, ctx, "l2_len", m->l2_len, e->l2_len);
	check(c, ctx, "ol_flags & (RX_VLAN|RX_QINQ)",
	      m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ), e->flags);
	if (e->n_vlan >= 1)
		check(c, ctx, "vlan_tci", m->vlan_tci, e->tci);
	if (e->n_vlan == 2)
		check(c, ctx, "vlan_tci_outer", m->vlan_tci_outer, e->tci_outer);
	check_meta(c, ctx, egw_eth_meta(m), e);
}

/* Classify one chain on its own, as a burst of one. */
static void
run_mbuf(const struct eth_case *c, const char *ctx, const uint8_t *frame, uint32_t len,
	 const uint32_t *cuts, unsigned int n_cuts, const struct expect *e)
{
	struct rte_mbuf *m = make_chain(frame, len, cuts, n_cuts);
	struct rte_mbuf *pkts[1];
	uint16_t good;

	if (m == NULL) {
		printf("FAIL [%s] %s: cannot build the mbuf chain\n", c->label, ctx);
		n_fail++;
		return;
	}
	pkts[0] = m;
	good = egw_eth_classify_burst(&port, pkts, 1);
	check(c, ctx, "burst return", good, e->cls != EGW_ETH_CLS_BAD);
	check(c, ctx, "pkts[0]", (uintptr_t)pkts[0], (uintptr_t)m);
	check_mbuf(c, ctx, m, e);
	rte_pktmbuf_free(m);
}

static void
test_rows(void)
{
	static uint8_t frame[FRAME_MAX];
	char ctx[64];
	unsigned int i;

	for (i = 0; i < N_CASES; i++) {
		const struct eth_case *c = &cases[i];
		uint32_t len = build_frame(c, frame);
		uint32_t need = bytes_needed(c);
		struct expect e;
		uint32_t n, a, b;

		expect_of(c, &e);
		run_flat(c, "whole, flat", frame, len, &e);
		run_mbuf(c, "whole, one mbuf", frame, len, NULL, 0, &e);

		for (n = 0; n < len; n++) {
			const struct expect *te = n < need ? &expect_bad : &e;

			snprintf(ctx, sizeof(ctx), "cut to %u bytes, flat", n);
			run_flat(c, ctx, frame, n, te);
			snprintf(ctx, sizeof(ctx), "cut to %u bytes, one mbuf", n);
			run_mbuf(c, ctx, frame, n, NULL, 0, te);
		}

		for (a = 1; a <= SPLIT_MAX && a <= len; a++) {
			snprintf(ctx, sizeof(ctx), "2 segments split at %u", a);
			run_mbuf(c, ctx, frame, len, &a, 1, &e);
		}

		for (a = 1; a < EGW_ETH_MAX_HDR + 2; a++) {
			for (b = a + 1; b <= EGW_ETH_MAX_HDR + 4 && b < len; b++) {
				uint32_t cuts[2] = {a, b};

				snprintf(ctx, sizeof(ctx), "3 segments split at %u,%u", a, b);
				run_mbuf(c, ctx, frame, len, cuts, 2, &e);
			}
		}

		/* one byte per segment across all the headers, then the rest */
		{
			uint32_t cuts[EGW_ETH_MAX_HDR + 2];

			for (a = 0; a < RTE_DIM(cuts); a++)
				cuts[a] = a + 1;
			run_mbuf(c, "one segment per header byte", frame, len, cuts, RTE_DIM(cuts),
				 &e);
		}

		/* a cut frame that is also split: both paths at once */
		for (n = 1; n < len && n <= EGW_ETH_MAX_HDR + 2; n++) {
			const struct expect *te = n < need ? &expect_bad : &e;

			for (a = 1; a < n; a++) {
				snprintf(ctx, sizeof(ctx), "cut to %u bytes, split at %u", n, a);
				run_mbuf(c, ctx, frame, n, &a, 1, te);
			}
		}
	}
}

/* Find which case an mbuf was built from. */
static int
index_of(struct rte_mbuf *const *orig, unsigned int n, const struct rte_mbuf *m)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (orig[i] == m)
			return (int)i;
	return -1;
}

/*
 * Classify a burst of the given cases (indices into cases[]; some as chains)
 * and check the return value, that the good ones come first in their
 * original order, the bad ones after, and every mbuf's result.
 */
static void
run_burst(const char *name, const unsigned int *idx, unsigned int n)
{
	static uint8_t frame[FRAME_MAX];
	struct rte_mbuf *orig[128];
	struct rte_mbuf *pkts[128];
	const struct eth_case *head = &cases[idx[0]];
	unsigned int i, n_good = 0, pos;
	struct eth_case named = *head;
	bool seen[128] = {false};
	char ctx[96];
	uint16_t ret;

	named.label = name;
	for (i = 0; i < n; i++) {
		const struct eth_case *c = &cases[idx[i]];
		uint32_t len = build_frame(c, frame);
		/* every third frame arrives as a chain cut inside its headers */
		uint32_t cut = 1 + i % 20;

		orig[i] = make_chain(frame, len, &cut, i % 3 == 2 ? 1 : 0);
		if (orig[i] == NULL) {
			printf("FAIL [%s]: cannot build mbuf %u\n", name, i);
			n_fail++;
			while (i-- > 0)
				rte_pktmbuf_free(orig[i]);
			return;
		}
		pkts[i] = orig[i];
		if (c->cls != EGW_ETH_CLS_BAD)
			n_good++;
	}

	ret = egw_eth_classify_burst(&port, pkts, (uint16_t)n);
	check(&named, "burst", "return (good frames)", ret, n_good);

	/* the good ones, in order */
	pos = 0;
	for (i = 0; i < n; i++) {
		if (cases[idx[i]].cls == EGW_ETH_CLS_BAD)
			continue;
		snprintf(ctx, sizeof(ctx), "burst slot %u", pos);
		check(&named, ctx, "good frame in original order (index)",
		      (uint64_t)index_of(orig, n, pkts[pos]), i);
		pos++;
	}
	/* the bad ones, after them, each once */
	for (; pos < n; pos++) {
		int k = index_of(orig, n, pkts[pos]);

		snprintf(ctx, sizeof(ctx), "burst slot %u", pos);
		check(&named, ctx, "is a bad frame",
		      k >= 0 && !seen[k] && cases[idx[k]].cls == EGW_ETH_CLS_BAD, 1);
		if (k >= 0)
			seen[k] = true;
	}
	/* every mbuf classified as on its own */
	for (i = 0; i < n; i++) {
		const struct eth_case *c = &cases[idx[i]];
		struct expect e;

		expect_of(c, &e);
		snprintf(ctx, sizeof(ctx), "in burst '%s' at %u", name, i);
		check_mbuf(c, ctx, orig[i], &e);
		rte_pktmbuf_free(orig[i]);
	}
}

static void
test_bursts(void)
{
	unsigned int idx[128];
	unsigned int i, n, k;
	unsigned int good[N_CASES], bad[N_CASES];
	unsigned int n_good = 0, n_bad = 0;

	for (i = 0; i < N_CASES; i++) {
		if (cases[i].cls == EGW_ETH_CLS_BAD)
			bad[n_bad++] = i;
		else
			good[n_good++] = i;
	}

	/* the whole table at once */
	for (i = 0; i < N_CASES; i++)
		idx[i] = i;
	run_burst("whole table", idx, N_CASES);

	/* 32 frames, bad ones at different places */
	for (i = 0; i < 32; i++)
		idx[i] = (i % 4 == 1) ? bad[i % n_bad] : good[i % n_good];
	run_burst("32, every 4th bad", idx, 32);

	for (i = 0; i < 32; i++)
		idx[i] = i < 5 ? bad[i % n_bad] : good[i % n_good];
	run_burst("32, 5 bad first", idx, 32);

	for (i = 0; i < 32; i++)
		idx[i] = i >= 27 ? bad[i % n_bad] : good[i % n_good];
	run_burst("32, 5 bad last", idx, 32);

	for (i = 0; i < 32; i++)
		idx[i] = bad[i % n_bad];
	run_burst("32, all bad", idx, 32);

	for (i = 0; i < 32; i++)
		idx[i] = good[(i * 7) % n_good];
	run_burst("32, all good", idx, 32);

	idx[0] = bad[0];
	run_burst("1, bad", idx, 1);
	idx[0] = good[0];
	run_burst("1, good", idx, 1);

	/* pseudo-random mixes of every size up to 128 */
	k = 12345;
	for (n = 2; n <= 128; n += 7) {
		for (i = 0; i < n; i++) {
			k = k * 1103515245u + 12345u;
			idx[i] = (k >> 16) % N_CASES;
		}
		run_burst("random mix", idx, n);
	}

	/* an empty burst touches nothing */
	{
		struct rte_mbuf *none[1] = {NULL};

		check(&api, "empty burst", "return", egw_eth_classify_burst(&port, none, 0), 0);
	}
}

/* Classify a single-segment copy of frame in full: the reference. */
static struct rte_mbuf *
classified(const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *m = make_chain(frame, len, NULL, 0);

	if (m != NULL)
		egw_eth_classify_burst(&port, &m, 1);
	return m;
}

/*
 * egw_eth_reclassify_ip(): every IP row, classified, its last ethertype then
 * rewritten to IPv4, IPv6 or ARP, against a full classification of the
 * rewritten frame (which the row's own expectation cannot give: the class
 * and proto change): the same packet_type, l2_len, VLAN fields and flags,
 * and metadata; a non-IP ethertype returns BAD and changes nothing.
 */
static void
test_reclassify(void)
{
	static const uint16_t types[] = {RTE_ETHER_TYPE_IPV4, RTE_ETHER_TYPE_IPV6,
					 RTE_ETHER_TYPE_ARP};
	static uint8_t frame[FRAME_MAX];
	unsigned int i, t, rows = 0;

	for (i = 0; i < N_CASES; i++) {
		const struct eth_case *c = &cases[i];

		if ((c->cls != EGW_ETH_CLS_IPV4 && c->cls != EGW_ETH_CLS_IPV6) ||
		    c->len > sizeof(frame))
			continue;
		rows++;
		for (t = 0; t < RTE_DIM(types); t++) {
			uint32_t len = build_frame(c, frame);
			struct rte_mbuf *m = classified(frame, len), *r;
			struct egw_eth_meta before;
			uint32_t ptype;
			uint8_t got;

			if (m == NULL) {
				printf("FAIL [%s] reclassify: no mbuf\n", c->label);
				n_fail++;
				return;
			}
			put16(rte_pktmbuf_mtod(m, uint8_t *) + m->l2_len - 2, types[t]);
			put16(frame + c->l2_len - 2, types[t]);
			before = *egw_eth_meta(m);
			ptype = m->packet_type;
			got = egw_eth_reclassify_ip(m);
			r = classified(frame, len);
			if (r == NULL) {
				rte_pktmbuf_free(m);
				printf("FAIL [%s] reclassify: no mbuf\n", c->label);
				n_fail++;
				return;
			}
			if (types[t] == RTE_ETHER_TYPE_ARP) {
				check(c, "reclassify to ARP", "return", got, EGW_ETH_CLS_BAD);
				check(c, "reclassify to ARP", "packet_type kept", m->packet_type,
				      ptype);
				check(c, "reclassify to ARP", "meta kept",
				      memcmp(&before, egw_eth_meta(m), sizeof(before)), 0);
			} else {
				const char *ctx = types[t] == RTE_ETHER_TYPE_IPV4
							  ? "reclassify to IPv4"
							  : "reclassify to IPv6";

				check(c, ctx, "return", got, egw_eth_meta(r)->cls);
				check(c, ctx, "packet_type", m->packet_type, r->packet_type);
				check(c, ctx, "l2_len", m->l2_len, r->l2_len);
				check(c, ctx, "ol_flags & (RX_VLAN|RX_QINQ)",
				      m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ),
				      r->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ));
				check(c, ctx, "vlan_tci", m->vlan_tci, r->vlan_tci);
				check(c, ctx, "vlan_tci_outer", m->vlan_tci_outer,
				      r->vlan_tci_outer);
				check(c, ctx, "meta",
				      memcmp(egw_eth_meta(m), egw_eth_meta(r),
					     sizeof(struct egw_eth_meta)),
				      0);
			}
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(r);
		}
	}
	check(&api, "reclassify", "IP rows tried (untagged, tagged, every destination)", rows >= 8,
	      1);
}

static void
test_names(void)
{
	unsigned int i;

	for (i = 0; i < EGW_ETH_CLS_MAX; i++)
		check(&api, "egw_eth_class_name", "not NULL or unknown",
		      egw_eth_class_name(i) != NULL &&
			      strcmp(egw_eth_class_name(i), "unknown") != 0,
		      1);
	for (i = 0; i < EGW_ETH_DST_MAX; i++)
		check(&api, "egw_eth_dst_name", "not NULL or unknown",
		      egw_eth_dst_name(i) != NULL && strcmp(egw_eth_dst_name(i), "unknown") != 0,
		      1);
	check(&api, "egw_eth_class_name(MAX)", "is unknown",
	      strcmp(egw_eth_class_name(EGW_ETH_CLS_MAX), "unknown") == 0, 1);
	check(&api, "egw_eth_dst_name(MAX)", "is unknown",
	      strcmp(egw_eth_dst_name(EGW_ETH_DST_MAX), "unknown") == 0, 1);
}

int
main(int argc, char **argv)
{
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "test_eth: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_eth", NB_MBUF, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "test_eth: cannot create the mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	ret = egw_eth_init();
	if (ret != 0) {
		fprintf(stderr, "test_eth: egw_eth_init: %s\n", strerror(-ret));
		return 1;
	}
	check(&api, "egw_eth_init again", "return", (uint64_t)egw_eth_init(), 0);

	test_names();
	test_rows();
	test_bursts();
	test_reclassify();

	check(&api, "end", "mbufs leaked (pool in use)", rte_mempool_in_use_count(pool), 0);

	rte_mempool_free(pool);
	rte_eal_cleanup();
	if (n_fail != 0) {
		printf("%lu checks failed, %lu passed\n", n_fail, n_pass);
		return 1;
	}
	printf("%lu checks passed (%u frames)\n", n_pass, (unsigned int)N_CASES);
	return 0;
}
