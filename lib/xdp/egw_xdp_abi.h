/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * What edgegw's XDP steering program (egw_xdp.bpf.c) and its control side
 * (lib/xdp) share: map names, key and value layouts, classes and flags.
 * Included by the BPF program (clang -target bpf) and by C in userspace, so
 * it uses only <linux/types.h>. Every layout is the one `bpftool map dump`
 * shows under /sys/fs/bpf/edgegw/<interface>/.
 */
#ifndef EGW_XDP_ABI_H
#define EGW_XDP_ABI_H

#include <linux/types.h>

/** Most RX queues per port (entries of xsks_map, indexed by queue). */
#define EGW_XDP_MAX_QUEUES 64
/** VLAN tags parsed before giving up (802.1Q, 802.1ad QinQ). */
#define EGW_XDP_MAX_VLAN 2
/** IPv6 extension headers walked before giving up. */
#define EGW_XDP_MAX_EXT6 6
/** Entries of each address map and of the flow map. */
#define EGW_XDP_MAX_ADDRS 1024
/** Prefixes of each pool trie. */
#define EGW_XDP_MAX_PREFIXES 1024
/** Prefixes of each route trie (lib/ip's default FIB sizes). */
#define EGW_XDP_MAX_ROUTES4 65536
#define EGW_XDP_MAX_ROUTES6 16384
/** Addresses of the kernel's that routes must not take (egw_kern4/6). */
#define EGW_XDP_MAX_KERN 4096
/** UDP port of ESP in UDP (RFC 3948). */
#define EGW_XDP_NATT_PORT 4500
/** VLAN of a frame under two tags: no address of edgegw's is there
 *  (edgegw's interfaces are untagged or carry one tag). */
#define EGW_XDP_VLAN_QINQ 0xffff

/**
 * Class of a frame: index of the per-CPU counter array (map egw_stats).
 * Every frame is counted in exactly one of CLS_KERNEL..CLS_RXTOK; a frame
 * steered to a queue that has no AF_XDP socket is also counted in
 * CLS_NO_XSK (and goes to the kernel).
 */
enum egw_xdp_class {
	EGW_XDP_CLS_KERNEL = 0, /**< not edgegw's: XDP_PASS */
	EGW_XDP_CLS_MALFORMED,  /**< too short for its headers: XDP_PASS */
	EGW_XDP_CLS_PPPOE_DISC, /**< PPPoE discovery on an access port */
	EGW_XDP_CLS_PPPOE_SESS, /**< PPPoE session on an access port */
	EGW_XDP_CLS_ESP,        /**< ESP or ESP in UDP to a tunnel address */
	EGW_XDP_CLS_OWN,        /**< to an address of edgegw's (IP, ARP, ND) */
	EGW_XDP_CLS_POOL,       /**< to a subscriber pool routed by edgegw */
	EGW_XDP_CLS_RXTOK,      /**< a flow an rxtokens consumer subscribed to */
	EGW_XDP_CLS_ROUTE,      /**< to a prefix of an `ip route add` route */
	EGW_XDP_CLS_NO_XSK,     /**< steered, but no socket on the queue */
	EGW_XDP_CLS_MAX
};

/** Value of egw_stats (per CPU). */
struct egw_xdp_counter {
	__u64 packets;
	__u64 bytes;
};

/** egw_cfg flags: the port's role, and which maps have entries (an empty
 *  map is not looked up, so kernel-bound frames pay only for what is set). */
#define EGW_XDP_F_ACCESS (1u << 0) /**< access port: PPPoE is edgegw's */
#define EGW_XDP_F_ESP4 (1u << 1)
#define EGW_XDP_F_ESP6 (1u << 2)
#define EGW_XDP_F_OWN4 (1u << 3)
#define EGW_XDP_F_OWN6 (1u << 4)
#define EGW_XDP_F_POOL4 (1u << 5)
#define EGW_XDP_F_POOL6 (1u << 6)
#define EGW_XDP_F_FLOWS (1u << 7)
#define EGW_XDP_F_FILT4 (1u << 8)  /**< egw_filter's IPv4 part is valid */
#define EGW_XDP_F_FILT6 (1u << 9)  /**< egw_filter's IPv6 part is valid */
#define EGW_XDP_F_FILTP (1u << 10) /**< egw_filter's UDP port part is valid */
#define EGW_XDP_F_ROUTE4 (1u << 11)
#define EGW_XDP_F_ROUTE6 (1u << 12)
#define EGW_XDP_F_NATT (1u << 13)   /**< egw_natt has entries */
#define EGW_XDP_F_FILTR4 (1u << 14) /**< egw_filter's IPv4 route part is valid */
#define EGW_XDP_F_FILTR6 (1u << 15) /**< egw_filter's IPv6 route part is valid */

/** Value of egw_cfg (one entry, key 0). */
struct egw_xdp_cfg {
	__u32 flags;
	__u32 pad;
};

/** Key of egw_esp6 and egw_kern6 (egw_esp4 and egw_kern4 take a __be32).
 *  The value of every address, prefix and flow map is a reference count
 *  (control path only). */
struct egw_xdp_in6 {
	__u8 a[16];
};

/** The kernel's addresses kept in egw_kernq (checked with a few compares
 *  instead of a hash lookup) while there are at most this many. */
#define EGW_XDP_KERNQ 16

/** Value of egw_kernq (one entry, key 0): the kernel's addresses while
 *  they fit (n4 <= EGW_XDP_KERNQ), else n4 = EGW_XDP_KERNQ + 1 and only
 *  egw_kern4 is authoritative; the same for IPv6. */
struct egw_xdp_kernq {
	__u32 n4;
	__u32 n6;
	__be32 a4[EGW_XDP_KERNQ];
	struct egw_xdp_in6 a6[EGW_XDP_KERNQ];
};

/** Key of egw_own4: an address of edgegw's on one VLAN of the port (0:
 *  untagged, else the VLAN id of a frame's only tag). */
struct egw_xdp_own4 {
	__u16 vlan;
	__u16 pad;
	__be32 a;
};

/** Key of egw_own6. */
struct egw_xdp_own6 {
	__u16 vlan;
	__u16 pad;
	__u8 a[16];
};

/** Key of egw_natt: ESP in UDP to a tunnel address on a port other than
 *  4500 (an SA's natt dport); ip 4 (a[0..3]) or 6. */
struct egw_xdp_natt_key {
	__u8 ip;
	__u8 pad;
	__be16 port;
	__u8 a[16];
};

/** Key of egw_pool4 and egw_route4 (LPM tries). */
struct egw_xdp_lpm4 {
	__u32 prefixlen;
	__u8 a[4];
};

/** Key of egw_pool6 and egw_route6 (LPM tries). */
struct egw_xdp_lpm6 {
	__u32 prefixlen;
	__u8 a[16];
};

/** Kinds of egw_flows keys: the matches of rxtokens consumers that are
 *  decided below PPPoE (PPPoE session matches are steered with PPPoE). */
enum egw_xdp_flow_kind {
	EGW_XDP_FLOW_DST4 = 1,      /**< IPv4 destination (a[0..3]) */
	EGW_XDP_FLOW_DST6 = 2,      /**< IPv6 destination */
	EGW_XDP_FLOW_UDP_DPORT = 3, /**< UDP destination port, any address */
};

/** Key of egw_flows; unused bytes are zero. */
struct egw_xdp_flow_key {
	__u8 kind;
	__u8 pad;
	__be16 port;
	__u8 a[16];
};

/**
 * egw_filter: a pre-check that keeps the kernel's frames away from the hash
 * and trie lookups. An ARRAY of 64-bit words (lookups the verifier inlines)
 * holding bitmaps of 65,536 bits each:
 *   IPv4  L1: /16s that an entry of any map covers;
 *         C1: /16s covered by an entry shorter than /16 (L2 not decisive);
 *         L2: /24s (folded to 16 bits) that an entry covers;
 *   IPv6  the same with /32 (folded), /48 (folded) and entries shorter than
 *         /40 marking C1 (up to 256 /48s of a /40../47 are listed in L2);
 *   PORT: UDP ports of rxtokens flows;
 *   R4, R6: the same three bitmaps of each family for the route tries
 *         alone, so that a default route does not make every frame meet
 *         the address and pool lookups: a frame the first bitmaps pass by
 *         meets only the route check (the kernel's addresses, then the
 *         trie), and only if R passes it.
 * A frame is looked up only if L1 is set and C1 or L2 is set: a clear bit
 * means no map can match. The control side rebuilds it from the maps after
 * every change; a part whose flag is clear (an IPv6 prefix shorter than
 * /32) is not consulted.
 */
#define EGW_XDP_FILTER_BITS 65536
#define EGW_XDP_FILTER_WORDS (EGW_XDP_FILTER_BITS / 64)
#define EGW_XDP_FILT4_L1 (0u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT4_C1 (1u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT4_L2 (2u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT6_L1 (3u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT6_C1 (4u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT6_L2 (5u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILT_PORT (6u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR4_L1 (7u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR4_C1 (8u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR4_L2 (9u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR6_L1 (10u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR6_C1 (11u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTR6_L2 (12u * EGW_XDP_FILTER_BITS)
#define EGW_XDP_FILTER_MAPS 13u

/** The /24 bit of an IPv4 address (host order): the 256 /24s of a /16 get
 *  distinct bits. */
static inline __u32
egw_xdp_fold24(__u32 a)
{
	__u32 x = a >> 8;

	return (x ^ x >> 16) & 0xffff;
}

static inline __u32
egw_xdp_be16_at(const __u8 *a, unsigned int i)
{
	return (__u32)a[i] << 8 | a[i + 1];
}

/** The /32 bit of an IPv6 address (network order bytes). */
static inline __u32
egw_xdp_fold32(const __u8 *a)
{
	return egw_xdp_be16_at(a, 0) ^ egw_xdp_be16_at(a, 2);
}

/** The /48 bit of an IPv6 address: the /48s of a /32 get distinct bits. */
static inline __u32
egw_xdp_fold48(const __u8 *a)
{
	return egw_xdp_be16_at(a, 0) ^ egw_xdp_be16_at(a, 2) ^ egw_xdp_be16_at(a, 4);
}

#endif /* EGW_XDP_ABI_H */
