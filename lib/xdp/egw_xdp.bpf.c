// SPDX-License-Identifier: BSD-3-Clause
/*
 * edgegw's XDP steering program (kernel data path, one run per received
 * frame on a port shared with the kernel). It decides which frames are
 * edgegw's and redirects those to the AF_XDP socket of the frame's RX queue
 * (xsks_map, filled by net_af_xdp); every other frame goes to the kernel
 * stack with XDP_PASS. edgegw's control path keeps the maps in step with its
 * state (lib/xdp/ctl.c); this program only reads them.
 *
 * edgegw's frames: PPPoE discovery and session on access ports; ESP and ESP
 * in UDP (port 4500 or an SA's own port, not IKE or keepalives) to tunnel
 * addresses; IP to edgegw's own addresses (addresses configured in edgegw,
 * which the kernel does not have) on their VLAN, with the ARP and ND that
 * resolve them; IP to subscriber pools; IP to prefixes of edgegw's routes,
 * unless the destination is one of the kernel's own addresses or not
 * unicast; flows of rxtokens consumers. Headers are read only after checking
 * they are inside the frame; a frame too short for what it claims goes to
 * the kernel (counted as malformed), which drops it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "egw_xdp_abi.h"

/* net_af_xdp inserts its sockets here by this name (load_custom_xdp_prog) */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, EGW_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egw_xdp_cfg);
} egw_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EGW_XDP_CLS_MAX);
	__type(key, __u32);
	__type(value, struct egw_xdp_counter);
} egw_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, __be32);
	__type(value, __u32);
} egw_esp4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, struct egw_xdp_in6);
	__type(value, __u32);
} egw_esp6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, struct egw_xdp_own4);
	__type(value, __u32);
} egw_own4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, struct egw_xdp_own6);
	__type(value, __u32);
} egw_own6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGW_XDP_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egw_xdp_lpm4);
	__type(value, __u32);
} egw_pool4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGW_XDP_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egw_xdp_lpm6);
	__type(value, __u32);
} egw_pool6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, struct egw_xdp_flow_key);
	__type(value, __u32);
} egw_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGW_XDP_MAX_ROUTES4);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egw_xdp_lpm4);
	__type(value, __u32);
} egw_route4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGW_XDP_MAX_ROUTES6);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egw_xdp_lpm6);
	__type(value, __u32);
} egw_route6 SEC(".maps");

/* the kernel's own addresses (lib/xdp keeps them in step with the
 * kernel's): a route never takes a frame to one of them */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_KERN);
	__type(key, __be32);
	__type(value, __u32);
} egw_kern4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_KERN);
	__type(key, struct egw_xdp_in6);
	__type(value, __u32);
} egw_kern6 SEC(".maps");

/* the same while they are few: compares instead of a hash lookup */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egw_xdp_kernq);
} egw_kernq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGW_XDP_MAX_ADDRS);
	__type(key, struct egw_xdp_natt_key);
	__type(value, __u32);
} egw_natt SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EGW_XDP_FILTER_MAPS *EGW_XDP_FILTER_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} egw_filter SEC(".maps");

#define ETH_P_8021AD_ 0x88A8
#define ETH_P_QINQ1_ 0x9100
#define ETH_P_PPP_DISC_ 0x8863
#define ETH_P_PPP_SES_ 0x8864
#define IPPROTO_ESP_ 50
#define IPPROTO_ICMPV6_ 58
#define ND_NS 135
#define ND_NA 136

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* ARP for IPv4 over Ethernet (RFC 826) */
struct arp_eth4 {
	__be16 htype;
	__be16 ptype;
	__u8 hlen;
	__u8 plen;
	__be16 op;
	__u8 sha[6];
	__u8 spa[4];
	__u8 tha[6];
	__u8 tpa[4];
} __attribute__((packed));

/* ICMPv6 neighbour solicitation/advertisement (RFC 4861 4.3, 4.4) */
struct nd_msg {
	__u8 type;
	__u8 code;
	__be16 csum;
	__be32 flags;
	struct egw_xdp_in6 target;
};

struct frame {
	struct xdp_md *ctx;
	void *end;
	__u64 len;
	__u32 flags;
	__u16 vlan; /* 0 untagged, the only tag's id, or EGW_XDP_VLAN_QINQ */
};

static __always_inline void
count(__u32 cls, __u64 len)
{
	struct egw_xdp_counter *c = bpf_map_lookup_elem(&egw_stats, &cls);

	/* per-CPU: no atomics */
	if (c != NULL) {
		c->packets++;
		c->bytes += len;
	}
}

static __always_inline int
to_kernel(const struct frame *f, __u32 cls)
{
	count(cls, f->len);
	return XDP_PASS;
}

static __always_inline int
steer(const struct frame *f, __u32 cls)
{
	long act;

	count(cls, f->len);
	/* no socket on this queue (edgegw not running, or fewer queues than the
	 * NIC): the kernel gets it, and the miss is counted */
	act = bpf_redirect_map(&xsks_map, f->ctx->rx_queue_index, XDP_PASS);
	if (act != XDP_REDIRECT)
		count(EGW_XDP_CLS_NO_XSK, f->len);
	return (int)act;
}

static __always_inline int
bit_set(__u32 bit)
{
	__u32 k = bit >> 6;
	__u64 *w = bpf_map_lookup_elem(&egw_filter, &k);

	return w != NULL && ((*w >> (bit & 63)) & 1);
}

/* the pre-check: 0 if no map of a part can hold this address
 * (egw_xdp_abi.h); base is the part's L1, C1 and L2 follow it */
static __always_inline int
filter4_at(const struct frame *f, __be32 be, __u32 flag, __u32 base)
{
	__u32 a = bpf_ntohl(be);

	if (!(f->flags & flag))
		return 1;
	if (!bit_set(base + (a >> 16)))
		return 0;
	if (bit_set(base + EGW_XDP_FILTER_BITS + (a >> 16)))
		return 1;
	return bit_set(base + 2 * EGW_XDP_FILTER_BITS + egw_xdp_fold24(a));
}

static __always_inline int
filter6_at(const struct frame *f, const __u8 *a, __u32 flag, __u32 base)
{
	if (!(f->flags & flag))
		return 1;
	if (!bit_set(base + egw_xdp_fold32(a)))
		return 0;
	if (bit_set(base + EGW_XDP_FILTER_BITS + egw_xdp_fold32(a)))
		return 1;
	return bit_set(base + 2 * EGW_XDP_FILTER_BITS + egw_xdp_fold48(a));
}

/* every map but the route tries */
static __always_inline int
filter4(const struct frame *f, __be32 be)
{
	return filter4_at(f, be, EGW_XDP_F_FILT4, EGW_XDP_FILT4_L1);
}

static __always_inline int
filter6(const struct frame *f, const __u8 *a)
{
	return filter6_at(f, a, EGW_XDP_F_FILT6, EGW_XDP_FILT6_L1);
}

static __always_inline int
filter_port(const struct frame *f, __be16 port)
{
	return !(f->flags & EGW_XDP_F_FILTP) || bit_set(EGW_XDP_FILT_PORT + bpf_ntohs(port));
}

static __always_inline int
flow_dst(const struct frame *f, __u8 kind, const void *a, __u32 alen)
{
	struct egw_xdp_flow_key k;

	if (!(f->flags & EGW_XDP_F_FLOWS))
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	k.kind = kind;
	__builtin_memcpy(k.a, a, alen > 16 ? 16 : alen);
	return bpf_map_lookup_elem(&egw_flows, &k) != NULL;
}

static __always_inline int
flow_udp(const struct frame *f, __be16 port)
{
	struct egw_xdp_flow_key k;

	if (!(f->flags & EGW_XDP_F_FLOWS))
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	k.kind = EGW_XDP_FLOW_UDP_DPORT;
	k.port = port;
	return bpf_map_lookup_elem(&egw_flows, &k) != NULL;
}

/* An SA's own ESP-in-UDP port on a tunnel address (egw_natt). */
static __always_inline int
natt_port(const struct frame *f, __u8 ipv, const void *a, __u32 alen, __be16 port)
{
	struct egw_xdp_natt_key k;

	if (!(f->flags & EGW_XDP_F_NATT))
		return 0;
	__builtin_memset(&k, 0, sizeof(k));
	k.ip = ipv;
	k.port = port;
	__builtin_memcpy(k.a, a, alen > 16 ? 16 : alen);
	return bpf_map_lookup_elem(&egw_natt, &k) != NULL;
}

/*
 * ESP in UDP to a tunnel address (RFC 3948 2.2), on port 4500 or an SA's
 * own (egw_natt): a payload starting with a zero non-ESP marker is IKE and
 * a one-byte 0xff payload a NAT keepalive, both the kernel's (an IKE
 * daemon). Returns 1 for ESP, 0 otherwise, -1 if the UDP header is cut.
 */
static __always_inline int
udp_is_esp(const struct frame *f, void *l4, __u8 ipv, const void *dst, __u32 alen)
{
	struct udphdr *uh = l4;
	__u32 *marker;

	if ((void *)(uh + 1) > f->end)
		return -1;
	if (uh->dest != bpf_htons(EGW_XDP_NATT_PORT) && !natt_port(f, ipv, dst, alen, uh->dest))
		return 0;
	marker = (void *)(uh + 1);
	if ((void *)(marker + 1) > f->end)
		return 0; /* keepalive or cut: not ESP (an SPI is 4 bytes) */
	return *marker != 0;
}

/*
 * A route of edgegw's takes a frame only if its destination is unicast and
 * not one of the kernel's own addresses (egw_kern4: the host's addresses
 * and its subnets' broadcast addresses): a default route through edgegw
 * must not take the kernel's ssh, BGP or ping. 0/8, 127/8, 224/4 (multicast),
 * 240/4 and 255.255.255.255 are never routed here.
 */
/* 1 if a is one of the kernel's addresses */
static __always_inline int
kern4(__be32 a)
{
	struct egw_xdp_kernq *q;
	__u32 k0 = 0, i;

	q = bpf_map_lookup_elem(&egw_kernq, &k0);
	if (q == NULL || q->n4 > EGW_XDP_KERNQ)
		return bpf_map_lookup_elem(&egw_kern4, &a) != NULL;
	/* a bounded loop (the verifier follows it), not unrolled */
	for (i = 0; i < EGW_XDP_KERNQ && i < q->n4; i++)
		if (q->a4[i] == a)
			return 1;
	return 0;
}

static __always_inline int
kern6(const struct egw_xdp_in6 *a)
{
	struct egw_xdp_kernq *q;
	__u32 k0 = 0, i;
	__u64 hi, lo, qh, ql;

	q = bpf_map_lookup_elem(&egw_kernq, &k0);
	if (q == NULL || q->n6 > EGW_XDP_KERNQ)
		return bpf_map_lookup_elem(&egw_kern6, a) != NULL;
	__builtin_memcpy(&hi, a->a, 8);
	__builtin_memcpy(&lo, a->a + 8, 8);
	for (i = 0; i < EGW_XDP_KERNQ && i < q->n6; i++) {
		__builtin_memcpy(&qh, q->a6[i].a, 8);
		__builtin_memcpy(&ql, q->a6[i].a + 8, 8);
		if (qh == hi && ql == lo)
			return 1;
	}
	return 0;
}

static __always_inline int
route4(const struct frame *f, __be32 dst)
{
	struct egw_xdp_lpm4 k = {.prefixlen = 32};
	__u32 a = bpf_ntohl(dst);

	if (!(f->flags & EGW_XDP_F_ROUTE4))
		return 0;
	if ((a >> 24) == 0 || (a >> 24) == 127 || (a >> 28) >= 0xe)
		return 0;
	if (!filter4_at(f, dst, EGW_XDP_F_FILTR4, EGW_XDP_FILTR4_L1))
		return 0;
	/* the kernel's addresses first: under a default route they are most
	 * of what gets here, and leave after a few compares */
	if (kern4(dst))
		return 0;
	__builtin_memcpy(k.a, &dst, 4);
	return bpf_map_lookup_elem(&egw_route4, &k) != NULL;
}

/* As route4 for IPv6: never multicast (ff00::/8), link-local (fe80::/10),
 * :: or ::1; never one of the kernel's addresses (egw_kern6). */
static __always_inline int
route6(const struct frame *f, const struct egw_xdp_in6 *dst)
{
	struct egw_xdp_lpm6 k = {.prefixlen = 128};
	__u64 hi, lo;

	if (!(f->flags & EGW_XDP_F_ROUTE6))
		return 0;
	if (dst->a[0] == 0xff || (dst->a[0] == 0xfe && (dst->a[1] & 0xc0) == 0x80))
		return 0;
	__builtin_memcpy(&hi, dst->a, 8);
	__builtin_memcpy(&lo, dst->a + 8, 8);
	if (hi == 0 && (lo == 0 || lo == bpf_cpu_to_be64(1)))
		return 0;
	if (!filter6_at(f, dst->a, EGW_XDP_F_FILTR6, EGW_XDP_FILTR6_L1))
		return 0;
	if (kern6(dst))
		return 0;
	__builtin_memcpy(k.a, dst->a, 16);
	return bpf_map_lookup_elem(&egw_route6, &k) != NULL;
}

static __always_inline int
own4(const struct frame *f, __be32 a)
{
	struct egw_xdp_own4 k = {.vlan = f->vlan, .a = a};

	return (f->flags & EGW_XDP_F_OWN4) && bpf_map_lookup_elem(&egw_own4, &k) != NULL;
}

static __always_inline int
ipv4(const struct frame *f, void *l3)
{
	struct iphdr *ip = l3;
	__u32 hl;
	__be32 dst;
	int later, esp;
	void *l4;

	if ((void *)(ip + 1) > f->end)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	if (ip->version != 4 || ip->ihl < 5)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	hl = (__u32)ip->ihl * 4;
	l4 = l3 + hl;
	if (l4 > f->end)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	dst = ip->daddr;
	/* a fragment after the first has no UDP header */
	later = (ip->frag_off & bpf_htons(0x1fff)) != 0;

	if (!filter4(f, dst))
		goto routes;
	if ((f->flags & EGW_XDP_F_ESP4) &&
	    (ip->protocol == IPPROTO_ESP_ || ip->protocol == IPPROTO_UDP) &&
	    bpf_map_lookup_elem(&egw_esp4, &dst) != NULL) {
		if (ip->protocol == IPPROTO_ESP_ || later)
			return steer(f, EGW_XDP_CLS_ESP);
		esp = udp_is_esp(f, l4, 4, &dst, 4);
		if (esp < 0)
			return to_kernel(f, EGW_XDP_CLS_MALFORMED);
		if (esp)
			return steer(f, EGW_XDP_CLS_ESP);
	}
	if (own4(f, dst))
		return steer(f, EGW_XDP_CLS_OWN);
	if (f->flags & EGW_XDP_F_POOL4) {
		struct egw_xdp_lpm4 k = {.prefixlen = 32};

		__builtin_memcpy(k.a, &dst, 4);
		if (bpf_map_lookup_elem(&egw_pool4, &k) != NULL)
			return steer(f, EGW_XDP_CLS_POOL);
	}
	if (flow_dst(f, EGW_XDP_FLOW_DST4, &dst, 4))
		return steer(f, EGW_XDP_CLS_RXTOK);
	/* after the flows: a consumer's address inside a routed prefix is the
	 * consumer's */
routes:
	if (route4(f, dst))
		return steer(f, EGW_XDP_CLS_ROUTE);
	if ((f->flags & EGW_XDP_F_FLOWS) && ip->protocol == IPPROTO_UDP && !later) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > f->end)
			return to_kernel(f, EGW_XDP_CLS_MALFORMED);
		if (filter_port(f, uh->dest) && flow_udp(f, uh->dest))
			return steer(f, EGW_XDP_CLS_RXTOK);
	}
	return to_kernel(f, EGW_XDP_CLS_KERNEL);
}

/* What the IPv6 header walk hands to the rest (egw_xdp_ip6_l4). */
struct ip6_info {
	struct egw_xdp_in6 dst;
	__u32 off; /* of the upper-layer header */
	__u32 flags;
	__u32 len;
	__u16 vlan;
	__u8 nh;
	__u8 later; /* a fragment after the first */
};

static __always_inline int
own6(const struct frame *f, const struct egw_xdp_in6 *a)
{
	struct egw_xdp_own6 k;

	if (!(f->flags & EGW_XDP_F_OWN6))
		return 0;
	k.vlan = f->vlan;
	k.pad = 0;
	__builtin_memcpy(k.a, a->a, 16);
	return bpf_map_lookup_elem(&egw_own6, &k) != NULL;
}

/*
 * The IPv6 upper layer: a global function, so the verifier checks it once
 * on its own instead of once for every path through the extension-header
 * walk (those paths multiplied past its one-million-instruction limit).
 */
__attribute__((noinline)) int
egw_xdp_ip6_l4(struct xdp_md *ctx, const struct ip6_info *in)
{
	void *data = (void *)(long)ctx->data;
	struct egw_xdp_in6 dst;
	struct frame f, *fp = &f;
	__u32 off;
	int esp;
	void *p;

	if (in == NULL)
		return XDP_PASS;
	f.ctx = ctx;
	f.end = (void *)(long)ctx->data_end;
	f.len = in->len;
	f.flags = in->flags;
	f.vlan = in->vlan;
	off = in->off;
	if (off > 4096)
		return to_kernel(fp, EGW_XDP_CLS_MALFORMED);
	p = data + off;
	if (p > f.end)
		return to_kernel(fp, EGW_XDP_CLS_MALFORMED);
	dst = in->dst;

	/* a solicitation for edgegw's address goes to a multicast group: its
	 * target is what counts */
	if ((f.flags & EGW_XDP_F_OWN6) && in->nh == IPPROTO_ICMPV6_ && !in->later) {
		struct nd_msg *nd = p;

		if ((void *)&nd->type + 1 <= f.end && (nd->type == ND_NS || nd->type == ND_NA)) {
			if ((void *)(nd + 1) > f.end)
				return to_kernel(fp, EGW_XDP_CLS_MALFORMED);
			if (filter6(fp, nd->target.a) && own6(fp, &nd->target))
				return steer(fp, EGW_XDP_CLS_OWN);
		}
	}
	if (!filter6(fp, dst.a))
		goto routes;
	if ((f.flags & EGW_XDP_F_ESP6) && (in->nh == IPPROTO_ESP_ || in->nh == IPPROTO_UDP) &&
	    bpf_map_lookup_elem(&egw_esp6, &dst) != NULL) {
		if (in->nh == IPPROTO_ESP_ || in->later)
			return steer(fp, EGW_XDP_CLS_ESP);
		esp = udp_is_esp(fp, p, 6, dst.a, 16);
		if (esp < 0)
			return to_kernel(fp, EGW_XDP_CLS_MALFORMED);
		if (esp)
			return steer(fp, EGW_XDP_CLS_ESP);
	}
	if (own6(fp, &dst))
		return steer(fp, EGW_XDP_CLS_OWN);
	if (f.flags & EGW_XDP_F_POOL6) {
		struct egw_xdp_lpm6 k = {.prefixlen = 128};

		__builtin_memcpy(k.a, dst.a, 16);
		if (bpf_map_lookup_elem(&egw_pool6, &k) != NULL)
			return steer(fp, EGW_XDP_CLS_POOL);
	}
	if (flow_dst(fp, EGW_XDP_FLOW_DST6, dst.a, 16))
		return steer(fp, EGW_XDP_CLS_RXTOK);
routes:
	if (route6(fp, &dst))
		return steer(fp, EGW_XDP_CLS_ROUTE);
	if ((f.flags & EGW_XDP_F_FLOWS) && in->nh == IPPROTO_UDP && !in->later) {
		struct udphdr *uh = p;

		if ((void *)(uh + 1) > f.end)
			return to_kernel(fp, EGW_XDP_CLS_MALFORMED);
		if (filter_port(fp, uh->dest) && flow_udp(fp, uh->dest))
			return steer(fp, EGW_XDP_CLS_RXTOK);
	}
	return to_kernel(fp, EGW_XDP_CLS_KERNEL);
}

static __always_inline int
ipv6(const struct frame *f, void *l3)
{
	struct ipv6hdr *ip6 = l3;
	struct ip6_info in;
	int later = 0, i;
	__u8 nh;
	void *p;

	if ((void *)(ip6 + 1) > f->end)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	if (ip6->version != 6)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	nh = ip6->nexthdr;
	p = ip6 + 1;
	/* extension headers (RFC 8200 4): hop-by-hop, routing, destination
	 * options, fragment, AH; anything deeper goes to the kernel */
#pragma unroll
	for (i = 0; i < EGW_XDP_MAX_EXT6; i++) {
		__u8 *h = p;
		__u32 hlen;

		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING && nh != IPPROTO_DSTOPTS &&
		    nh != IPPROTO_FRAGMENT && nh != IPPROTO_AH)
			break;
		if ((void *)(h + 8) > f->end)
			return to_kernel(f, EGW_XDP_CLS_MALFORMED);
		if (nh == IPPROTO_FRAGMENT) {
			hlen = 8;
			later = (h[2] << 8 | (h[3] & 0xf8)) != 0;
		} else if (nh == IPPROTO_AH) {
			hlen = ((__u32)h[1] + 2) * 4;
		} else {
			hlen = ((__u32)h[1] + 1) * 8;
		}
		nh = h[0];
		p = (void *)h + hlen;
		if (p > f->end)
			return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	}
	if (nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS ||
	    nh == IPPROTO_FRAGMENT || nh == IPPROTO_AH)
		return to_kernel(f, EGW_XDP_CLS_KERNEL);
	/* the kernel's frames leave here, before the call: only ND (its
	 * target counts) and UDP (a flow's port) need a look past a miss, and
	 * a route's prefix is checked here */
	if (nh != IPPROTO_ICMPV6_ && !(nh == IPPROTO_UDP && (f->flags & EGW_XDP_F_FLOWS)) &&
	    !filter6(f, (const __u8 *)&ip6->daddr)) {
		struct egw_xdp_in6 d;

		__builtin_memcpy(d.a, &ip6->daddr, 16);
		if (route6(f, &d))
			return steer(f, EGW_XDP_CLS_ROUTE);
		return to_kernel(f, EGW_XDP_CLS_KERNEL);
	}
	__builtin_memcpy(in.dst.a, &ip6->daddr, 16);
	in.off = (__u32)(p - (void *)(long)f->ctx->data);
	in.flags = f->flags;
	in.len = (__u32)f->len;
	in.vlan = f->vlan;
	in.nh = nh;
	in.later = (__u8)later;
	return egw_xdp_ip6_l4(f->ctx, &in);
}

static __always_inline int
arp(const struct frame *f, void *l3)
{
	struct arp_eth4 *a = l3;
	__be32 tpa;

	if (!(f->flags & EGW_XDP_F_OWN4))
		return to_kernel(f, EGW_XDP_CLS_KERNEL);
	if ((void *)(a + 1) > f->end)
		return to_kernel(f, EGW_XDP_CLS_MALFORMED);
	if (a->htype != bpf_htons(1) || a->ptype != bpf_htons(ETH_P_IP) || a->hlen != 6 ||
	    a->plen != 4)
		return to_kernel(f, EGW_XDP_CLS_KERNEL);
	__builtin_memcpy(&tpa, a->tpa, 4);
	if (filter4(f, tpa) && own4(f, tpa))
		return steer(f, EGW_XDP_CLS_OWN);
	return to_kernel(f, EGW_XDP_CLS_KERNEL);
}

SEC("xdp")
int
egw_xdp_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct egw_xdp_cfg *cfg;
	struct frame f;
	__u32 k0 = 0;
	__be16 proto;
	void *l3;
	int i;

	f.ctx = ctx;
	f.end = (void *)(long)ctx->data_end;
	f.len = (__u64)(f.end - data);
	f.vlan = 0;
	cfg = bpf_map_lookup_elem(&egw_cfg, &k0);
	f.flags = cfg != NULL ? cfg->flags : 0;
	if ((void *)(eth + 1) > f.end)
		return to_kernel(&f, EGW_XDP_CLS_MALFORMED);
	proto = eth->h_proto;
	l3 = eth + 1;
#pragma unroll
	for (i = 0; i < EGW_XDP_MAX_VLAN; i++) {
		struct vlan_hdr *v = l3;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD_) &&
		    proto != bpf_htons(ETH_P_QINQ1_))
			break;
		if ((void *)(v + 1) > f.end)
			return to_kernel(&f, EGW_XDP_CLS_MALFORMED);
		/* edgegw's addresses are on untagged or single-tagged
		 * interfaces (lib/ip): under two tags none is */
		f.vlan = i == 0 ? (bpf_ntohs(v->tci) & 0xfff) : EGW_XDP_VLAN_QINQ;
		proto = v->proto;
		l3 = v + 1;
	}
	switch (proto) {
	case bpf_htons(ETH_P_PPP_DISC_):
	case bpf_htons(ETH_P_PPP_SES_):
		if (!(f.flags & EGW_XDP_F_ACCESS))
			return to_kernel(&f, EGW_XDP_CLS_KERNEL);
		/* version/type, code, session id, length: edgegw checks them */
		if (l3 + 6 > f.end)
			return to_kernel(&f, EGW_XDP_CLS_MALFORMED);
		return steer(&f, proto == bpf_htons(ETH_P_PPP_DISC_) ? EGW_XDP_CLS_PPPOE_DISC
								     : EGW_XDP_CLS_PPPOE_SESS);
	case bpf_htons(ETH_P_IP): return ipv4(&f, l3);
	case bpf_htons(ETH_P_IPV6): return ipv6(&f, l3);
	case bpf_htons(ETH_P_ARP): return arp(&f, l3);
	default:
		/* a third VLAN tag, LLDP, anything else */
		return to_kernel(&f, EGW_XDP_CLS_KERNEL);
	}
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
