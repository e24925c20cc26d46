/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path: route a burst. Per burst: check each header, one bulk FIB
 * lookup; per packet: one load of the next hop, TTL/hop limit check and
 * decrement with the RFC 1624 incremental checksum update, MTU check
 * (IPv4 fragmentation with DPDK's ip_frag when DF is clear, ICMP too-big
 * otherwise), MAC rewrite. ICMP echo to edgegw is answered in place; ICMP
 * errors are rate limited per context. No locks, no allocation but the
 * ICMP errors and fragments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_errno.h>
#include <rte_icmp.h>
#include <rte_ip_frag.h>
#include <rte_malloc.h>

#include "ip_private.h"

#define ICMP4_UNREACH 3
#define ICMP4_TIME_EXCEEDED 11

struct egw_ip_ctx *
egw_ip_ctx_create(unsigned int idx, struct rte_mempool *pool)
{
	struct egw_ip_ctx *c;
	char name[RTE_MEMPOOL_NAMESIZE];

	if (idx >= EGW_IP_MAX_CTX || pool == NULL || ip_dp.fib4 == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	c = rte_zmalloc_socket("egw_ip_ctx", sizeof(*c), RTE_CACHE_LINE_SIZE, pool->socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->idx = idx;
	c->pool = pool;
	snprintf(name, sizeof(name), "egw_ip_ind%u", idx);
	/* fragments point into the original: indirect mbufs, no data room */
	c->indirect = rte_pktmbuf_pool_create(name, 2047, 64, 0, 0, pool->socket_id);
	if (c->indirect == NULL) {
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	return c;
}

void
egw_ip_ctx_free(struct egw_ip_ctx *c)
{
	if (c == NULL)
		return;
	/* held fragments point into this pool: they go first */
	ip_neigh_drop_pool(c->indirect);
	rte_mempool_free(c->indirect);
	rte_free(c);
}

void
egw_ip_ctx_stats(const struct egw_ip_ctx *c, struct egw_ip_ctx_stats *s)
{
	s->forwarded = __atomic_load_n(&c->st.forwarded, __ATOMIC_RELAXED);
	s->echo_replies = __atomic_load_n(&c->st.echo_replies, __ATOMIC_RELAXED);
	s->icmp_errors = __atomic_load_n(&c->st.icmp_errors, __ATOMIC_RELAXED);
	s->icmp_ratelimited = __atomic_load_n(&c->st.icmp_ratelimited, __ATOMIC_RELAXED);
	s->fragments = __atomic_load_n(&c->st.fragments, __ATOMIC_RELAXED);
	s->local = __atomic_load_n(&c->st.local, __ATOMIC_RELAXED);
	s->punted = __atomic_load_n(&c->st.punted, __ATOMIC_RELAXED);
	s->nd = __atomic_load_n(&c->st.nd, __ATOMIC_RELAXED);
}

#define ST_ADD(c, f, v) __atomic_store_n(&(c)->st.f, (c)->st.f + (v), __ATOMIC_RELAXED)

static inline void
drop(struct egw_ip_res *res, struct rte_mbuf *m, enum egw_ip_drop r)
{
	res->drop[r]++;
	res->n_drop++;
	rte_pktmbuf_free(m);
}

/* Drop m under r and send an ICMP error about it, rate limited. */
static __rte_noinline void
drop_icmp(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, bool v6,
	  enum egw_ip_drop r, uint8_t type, uint8_t code, uint32_t info, uint16_t port)
{
	struct rte_mbuf *e = NULL;

	if (v6 ? ip_icmp6_allowed(m) : ip_icmp4_allowed(m)) {
		if (!ip_tb_take(&c->icmp_tb, rte_get_tsc_cycles(),
				__atomic_load_n(&ip_dp.icmp_pps, __ATOMIC_RELAXED),
				__atomic_load_n(&ip_dp.icmp_burst, __ATOMIC_RELAXED))) {
			ST_ADD(c, icmp_ratelimited, 1);
		} else if (v6) {
			uint8_t src[16];

			if (ip_icmp_src6(port, ip_vlan_of(m), src))
				e = ip_icmp6_error(c->pool, m, src, type, code, info);
			else
				r = EGW_IP_DROP_ICMP_NO_SOURCE;
		} else {
			rte_be32_t src;

			if (ip_icmp_src4(port, ip_vlan_of(m), &src))
				e = ip_icmp4_error(c->pool, m, src, type, code, info);
			else
				r = EGW_IP_DROP_ICMP_NO_SOURCE;
		}
	}
	drop(res, m, r);
	if (e != NULL && res->n_reply < EGW_IP_MAX_BURST) {
		res->reply[res->n_reply++] = e;
		res->created++;
		ST_ADD(c, icmp_errors, 1);
	} else if (e != NULL) {
		rte_pktmbuf_free(e);
	}
}

/* ---- checks --------------------------------------------------------------- */

/* The one's complement sum of a 20-byte IPv4 header (RFC 1071) is 0xffff.
 * The five 32-bit words are added in 64 bits: as 2^16 is 1 modulo 0xffff,
 * that sum is congruent to the sum of the ten 16-bit words, and the folded
 * one's complement sum of a nonzero total is 0xffff exactly when the total
 * is a multiple of 0xffff (in either byte order). The compiler makes the
 * test a multiplication and a compare. */
static inline bool
hdr20_sum_ok(const void *h)
{
	const uint8_t *p = h;
	uint32_t w0, w1, w2, w3, w4;
	uint64_t s;

	/* five loads from the header (one copy of it to the stack, reloaded
	 * by words, would add a store and a forwarding stall) */
	memcpy(&w0, p, 4);
	memcpy(&w1, p + 4, 4);
	memcpy(&w2, p + 8, 4);
	memcpy(&w3, p + 12, 4);
	memcpy(&w4, p + 16, 4);
	s = (uint64_t)w0 + w1 + w2 + w3 + w4;
	return s != 0 && s % 0xffff == 0;
}

/* IPv4 header checks; trims Ethernet padding. The drop reason, or MAX. */
static __rte_noinline enum egw_ip_drop
check4_full(struct rte_mbuf *m, uint32_t *dst)
{
	struct rte_ipv4_hdr *ip;
	uint32_t l2 = m->l2_len, hl, tl, src, d;

	if (unlikely(m->data_len < l2 + sizeof(*ip)))
		return EGW_IP_DROP_BAD_HEADER;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l2);
	hl = (ip->version_ihl & 0xf) * 4u;
	tl = rte_be_to_cpu_16(ip->total_length);
	if (unlikely((ip->version_ihl >> 4) != 4 || hl < sizeof(*ip) || m->data_len < l2 + hl ||
		     tl < hl || tl > m->pkt_len - l2))
		return EGW_IP_DROP_BAD_HEADER;
	if (unlikely(tl < m->pkt_len - l2) && rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - l2 - tl)))
		return EGW_IP_DROP_BAD_HEADER;
	switch (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
	case RTE_MBUF_F_RX_IP_CKSUM_GOOD: break;
	case RTE_MBUF_F_RX_IP_CKSUM_BAD: return EGW_IP_DROP_BAD_CKSUM;
	default:
		if (unlikely(!(hl == sizeof(*ip) ? hdr20_sum_ok(ip)
						 : rte_raw_cksum(ip, hl) == 0xffff)))
			return EGW_IP_DROP_BAD_CKSUM;
	}
	src = rte_be_to_cpu_32(ip->src_addr);
	d = rte_be_to_cpu_32(ip->dst_addr);
	if (unlikely((src >> 24) == 0 || (src >> 24) == 127 || (src >> 28) >= 0xe))
		return EGW_IP_DROP_MARTIAN_SRC;
	if (unlikely((d >> 24) == 0 || (d >> 24) == 127))
		return EGW_IP_DROP_MARTIAN_DST;
	if (unlikely(d == UINT32_MAX))
		return EGW_IP_DROP_BROADCAST;
	if (unlikely((d >> 28) >= 0xe))
		return EGW_IP_DROP_MULTICAST;
	if (unlikely(egw_eth_meta(m)->dst != EGW_ETH_DST_HOST))
		return egw_eth_meta(m)->dst == EGW_ETH_DST_BROADCAST ? EGW_IP_DROP_BROADCAST
								     : EGW_IP_DROP_MULTICAST;
	*dst = d;
	return EGW_IP_DROP_MAX;
}

/* The first octet of an IPv4 address: 1 a martian source (0/8, 127/8,
 * 224/3), 2 a destination not routed (0/8, 127/8, 224/3: martian,
 * multicast or the limited broadcast). */
static const uint8_t octet4[256] = {
	[0] = 3,
	[127] = 3,
	[224 ... 255] = 3,
};

/*
 * The same checks in the common case, with one branch: a 20-byte header
 * whose lengths agree with the frame (no padding to trim), a checksum the
 * NIC vouched for or that sums right, addresses that pass the octet table,
 * a unicast frame. Anything else is decided by check4_full(), in the same
 * order as ever, with the same drop reasons.
 */
static inline enum egw_ip_drop
check4(struct rte_mbuf *m, uint32_t *dst)
{
	const struct rte_ipv4_hdr *ip;
	uint32_t l2 = m->l2_len, src, d;
	uint64_t ck;

	if (likely(m->data_len >= l2 + sizeof(*ip))) {
		ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l2);
		ck = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
		src = rte_be_to_cpu_32(ip->src_addr);
		d = rte_be_to_cpu_32(ip->dst_addr);
		if (likely(ip->version_ihl == 0x45 &&
			   rte_be_to_cpu_16(ip->total_length) == m->pkt_len - l2 &&
			   ((octet4[src >> 24] & 1) | (octet4[d >> 24] & 2)) == 0 &&
			   egw_eth_meta(m)->dst == EGW_ETH_DST_HOST &&
			   (ck == RTE_MBUF_F_RX_IP_CKSUM_GOOD ||
			    (ck != RTE_MBUF_F_RX_IP_CKSUM_BAD && hdr20_sum_ok(ip))))) {
			*dst = d;
			return EGW_IP_DROP_MAX;
		}
	}
	return check4_full(m, dst);
}

static inline bool
v6_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static inline bool
v6_bad_src(const uint8_t *a)
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (a[0] == 0xff)
		return true;
	if (a[0] != 0)
		return false;
	/* ::, ::1, ::ffff:0:0/96 */
	return memcmp(a, zero, 15) == 0 ? (a[15] == 0 || a[15] == 1) : memcmp(a, mapped, 12) == 0;
}

/* IPv6 header checks; trims padding. ND goes to the control path (1). */
static inline int
check6(struct rte_mbuf *m, enum egw_ip_drop *r)
{
	struct rte_ipv6_hdr *ip;
	uint32_t l2 = m->l2_len, pl;

	*r = EGW_IP_DROP_BAD_HEADER;
	if (unlikely(m->data_len < l2 + sizeof(*ip)))
		return -1;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l2);
	pl = rte_be_to_cpu_16(ip->payload_len);
	if (unlikely((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 || pl == 0 ||
		     sizeof(*ip) + pl > m->pkt_len - l2))
		return -1;
	if (unlikely(sizeof(*ip) + pl < m->pkt_len - l2) &&
	    rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - l2 - sizeof(*ip) - pl)))
		return -1;
	if (ip->proto == IPPROTO_ICMPV6 && m->data_len > l2 + sizeof(*ip)) {
		uint8_t t = *((uint8_t *)(ip + 1));

		/* RS, RA, NS, NA, redirect: the control path's */
		if (t >= 133 && t <= 137)
			return 1;
	}
	if (unlikely(v6_bad_src(ip->src_addr))) {
		*r = EGW_IP_DROP_MARTIAN_SRC;
		return -1;
	}
	if (unlikely(ip->dst_addr[0] == 0xff)) {
		*r = EGW_IP_DROP_MULTICAST;
		return -1;
	}
	if (unlikely(ip->dst_addr[0] == 0 && v6_bad_src(ip->dst_addr))) {
		*r = EGW_IP_DROP_MARTIAN_DST;
		return -1;
	}
	if (unlikely(egw_eth_meta(m)->dst != EGW_ETH_DST_HOST)) {
		*r = egw_eth_meta(m)->dst == EGW_ETH_DST_BROADCAST ? EGW_IP_DROP_BROADCAST
								   : EGW_IP_DROP_MULTICAST;
		return -1;
	}
	return 0;
}

/* ---- local delivery ------------------------------------------------------- */

/* ICMP echo request to edgegw: answered in place (1), or not an echo (0),
 * or a bad one (-1). */
static int
echo4(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);
	uint32_t hl = (ip->version_ihl & 0xf) * 4u, tl = rte_be_to_cpu_16(ip->total_length);
	uint16_t sum;
	struct rte_icmp_hdr *ic;
	struct rte_ether_hdr *eh;
	struct rte_ether_addr mac;
	rte_be32_t a;

	if (ip->next_proto_id != IPPROTO_ICMP ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_OFFSET_MASK | RTE_IPV4_HDR_MF_FLAG)))
		return 0;
	if (tl < hl + sizeof(*ic) || m->data_len < m->l2_len + hl + sizeof(*ic))
		return -1;
	ic = (struct rte_icmp_hdr *)((uint8_t *)ip + hl);
	if (ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST)
		return 0;
	if (ic->icmp_code != 0 || rte_raw_cksum_mbuf(m, m->l2_len + hl, tl - hl, &sum) != 0 ||
	    sum != 0xffff)
		return -1;
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ic->icmp_cksum =
		egw_ip_cksum_adjust(ic->icmp_cksum, RTE_BE16(RTE_IP_ICMP_ECHO_REQUEST << 8),
				    RTE_BE16(RTE_IP_ICMP_ECHO_REPLY << 8));
	a = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = a;
	ip->time_to_live = 64;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	/* back the way it came: the received MAC addresses swapped (the
	 * frame was unicast to the ingress port) */
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	mac = eh->dst_addr;
	eh->dst_addr = eh->src_addr;
	eh->src_addr = mac;
	return 1;
}

static int
echo6(struct rte_mbuf *m)
{
	struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len);
	uint32_t pl = rte_be_to_cpu_16(ip->payload_len), s32;
	uint16_t sum;
	struct rte_ether_hdr *eh;
	struct rte_ether_addr mac;
	uint8_t *ic, a[16];
	uint16_t ck;

	if (ip->proto != IPPROTO_ICMPV6)
		return 0;
	if (pl < 8 || m->data_len < m->l2_len + sizeof(*ip) + 8)
		return -1;
	ic = (uint8_t *)(ip + 1);
	if (ic[0] != 128)
		return 0;
	if (ic[1] != 0 || rte_raw_cksum_mbuf(m, m->l2_len + sizeof(*ip), pl, &sum) != 0)
		return -1;
	s32 = (uint32_t)sum + rte_ipv6_phdr_cksum(ip, 0);
	s32 = (s32 & 0xffff) + (s32 >> 16);
	s32 = (s32 & 0xffff) + (s32 >> 16);
	if (s32 != 0xffff)
		return -1;
	ic[0] = 129;
	memcpy(&ck, ic + 2, 2);
	ck = egw_ip_cksum_adjust(ck, RTE_BE16(128 << 8), RTE_BE16(129 << 8));
	memcpy(ic + 2, &ck, 2);
	memcpy(a, ip->src_addr, 16);
	memcpy(ip->src_addr, ip->dst_addr, 16);
	memcpy(ip->dst_addr, a, 16);
	ip->hop_limits = 64;
	/* back the way it came: the received MAC addresses swapped (the
	 * frame was unicast to the ingress port) */
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	mac = eh->dst_addr;
	eh->dst_addr = eh->src_addr;
	eh->src_addr = mac;
	return 1;
}

/* ---- forwarding ----------------------------------------------------------- */

/* Hand m to the control path to wait for its next hop's MAC address. */
static inline void
punt(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, uint64_t now)
{
	if (!ip_tb_take(&c->punt_tb, now, ip_dp.punt_pps, ip_dp.punt_burst) ||
	    res->n_ctrl == EGW_IP_MAX_BURST) {
		drop(res, m, EGW_IP_DROP_PUNT_LIMIT);
		return;
	}
	egw_eth_meta(m)->reserved = IP_META_PUNT;
	res->ctrl[res->n_ctrl++] = m;
	ST_ADD(c, punted, 1);
}

/* Send m (its TTL already decremented) through nh. */
static inline void
emit(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, struct ip_nh *nh,
     uint64_t now)
{
	if (likely(nh->flags & NH_F_VALID)) {
		if (unlikely(res->n_out == EGW_IP_MAX_OUT || ip_l2_rewrite(m, nh) < 0)) {
			drop(res, m, EGW_IP_DROP_FRAG_FAILED);
			return;
		}
		if (unlikely(!nh->used))
			__atomic_store_n(&nh->used, 1, __ATOMIC_RELAXED);
		res->out_port[res->n_out] = nh->port;
		res->out[res->n_out++] = m;
		return;
	}
	punt(c, res, m, now);
}

/* IPv4 above the egress MTU with DF clear: fragments (RFC 791) through nh. */
static __rte_noinline void
fragment4(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, struct ip_nh *nh,
	  uint64_t now)
{
	struct rte_mbuf *fr[64];
	struct egw_eth_meta meta = *egw_eth_meta(m);
	uint16_t room = (uint16_t)(EGW_IP_MAX_OUT - res->n_out), in = m->port, l2 = m->l2_len;
	uint32_t ptype = m->packet_type;
	int32_t k, i;

	/* 64 fragments: a 64 KiB packet over a 1280-byte MTU */
	if (room > 64)
		room = 64;
	rte_pktmbuf_adj(m, l2);
	k = rte_ipv4_fragment_packet(m, fr, room, nh->mtu, c->pool, c->indirect);
	if (k <= 0) {
		drop(res, m, EGW_IP_DROP_FRAG_FAILED);
		return;
	}
	rte_pktmbuf_free(m); /* the fragments hold references to its data */
	res->created += (uint32_t)k - 1;
	ST_ADD(c, fragments, (uint64_t)k);
	for (i = 0; i < k; i++) {
		struct rte_mbuf *f = fr[i];
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(f, struct rte_ipv4_hdr *);
		uint8_t *d;

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		d = (uint8_t *)rte_pktmbuf_prepend(f, nh->l2_len);
		if (d == NULL) {
			drop(res, f, EGW_IP_DROP_FRAG_FAILED);
			continue;
		}
		memcpy(d, nh->hdr, nh->l2_len);
		f->l2_len = nh->l2_len;
		f->port = in;
		f->packet_type = ptype;
		*egw_eth_meta(f) = meta;
		emit(c, res, f, nh, now);
	}
}

/* The session key of a FIB value of kind NH_SESSION: none for a pppoe
 * route (the pool), the key of a session route. */
static inline uint32_t
sess_key(uint64_t v)
{
	return (v & FIB_SESS) ? (uint32_t)v & FIB_SESS_KEY : EGW_IP_SESSION_NONE;
}

static inline void
fwd4(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, struct ip_nh *nh, uint64_t v,
     unsigned int flags, uint16_t port, uint64_t now)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);
	uint16_t tl = rte_be_to_cpu_16(ip->total_length);

	if (!(flags & EGW_IP_F_LOCAL_ORIGIN)) {
		if (unlikely(ip->time_to_live <= 1)) {
			drop_icmp(c, res, m, false, EGW_IP_DROP_TTL_EXCEEDED, ICMP4_TIME_EXCEEDED,
				  0, 0, port);
			return;
		}
	}
	if (unlikely(nh->kind == NH_NEIGH && (nh->flags & NH_F_FAILED))) {
		drop_icmp(c, res, m, false, EGW_IP_DROP_NEIGH_FAILED, ICMP4_UNREACH, 1, 0, port);
		return;
	}
	if (unlikely(tl > nh->mtu) && nh->kind != NH_SESSION &&
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_DF_FLAG))) {
		drop_icmp(c, res, m, false, EGW_IP_DROP_TOO_BIG, ICMP4_UNREACH, 4, nh->mtu, port);
		return;
	}
	if (!(flags & EGW_IP_F_LOCAL_ORIGIN))
		ip4_ttl_dec(ip);
	c->fwd_burst++;
	if (nh->kind == NH_SESSION) {
		res->sess_key[res->n_sess] = sess_key(v);
		res->sess[res->n_sess++] = m;
		return;
	}
	if (unlikely(tl > nh->mtu)) {
		fragment4(c, res, m, nh, now);
		return;
	}
	emit(c, res, m, nh, now);
}

static inline void
fwd6(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, struct ip_nh *nh, uint64_t v,
     unsigned int flags, uint16_t port, uint64_t now)
{
	struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len);
	uint32_t len = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);

	/* RFC 4291 2.5.6: link-local addresses are never forwarded */
	if (unlikely(v6_link_local(ip->src_addr) || v6_link_local(ip->dst_addr))) {
		drop(res, m,
		     v6_link_local(ip->dst_addr) ? EGW_IP_DROP_MARTIAN_DST
						 : EGW_IP_DROP_MARTIAN_SRC);
		return;
	}
	if (!(flags & EGW_IP_F_LOCAL_ORIGIN) && unlikely(ip->hop_limits <= 1)) {
		drop_icmp(c, res, m, true, EGW_IP_DROP_TTL_EXCEEDED, 3, 0, 0, port);
		return;
	}
	if (unlikely(nh->kind == NH_NEIGH && (nh->flags & NH_F_FAILED))) {
		drop_icmp(c, res, m, true, EGW_IP_DROP_NEIGH_FAILED, 1, 3, 0, port);
		return;
	}
	if (unlikely(len > nh->mtu) && nh->kind != NH_SESSION) {
		drop_icmp(c, res, m, true, EGW_IP_DROP_TOO_BIG, 2, 0, nh->mtu, port);
		return;
	}
	if (!(flags & EGW_IP_F_LOCAL_ORIGIN))
		ip->hop_limits--;
	c->fwd_burst++;
	if (nh->kind == NH_SESSION) {
		res->sess_key[res->n_sess] = sess_key(v);
		res->sess[res->n_sess++] = m;
		return;
	}
	emit(c, res, m, nh, now);
}

/*
 * A link-scope multicast packet (224.0.0.0/24, ff02::/16: OSPF and OSPFv3
 * hellos, RIP, VRRP, mDNS) is for the host's stack when the port has an
 * exception path: to the control path as a local packet, rate limited as
 * those are. ND stays lib/ip's (check6 took it before). Untagged only: the
 * exception path carries a port's untagged addresses. False: not such a
 * packet, or no path (the caller drops it as multicast).
 */
static __rte_noinline bool
mcast_to_host(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, uint16_t port,
	      unsigned int flags, bool v6)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	const struct ip_port_dp *pd;

	if (v6 ? !(ip[24] == 0xff && (ip[25] & 0x0f) == 0x02)
	       : !(ip[16] == 224 && ip[17] == 0 && ip[18] == 0))
		return false;
	if ((flags & EGW_IP_F_NO_EXCEPTION) || egw_eth_meta(m)->n_vlan != 0 ||
	    port >= RTE_MAX_ETHPORTS)
		return false;
	/* pairs with the release store in port_dp_publish() (ctl.c) */
	pd = __atomic_load_n(&ip_dp.port[port], __ATOMIC_ACQUIRE);
	if (pd == NULL || !pd->exception)
		return false;
	if (!ip_tb_take(&c->local_tb, rte_get_tsc_cycles(), ip_dp.local_pps, ip_dp.local_burst) ||
	    res->n_ctrl == EGW_IP_MAX_BURST) {
		drop(res, m, EGW_IP_DROP_LOCAL_CTRL_LIMIT);
		return true;
	}
	egw_eth_meta(m)->reserved = IP_META_LOCAL;
	m->hash.usr = port;
	res->ctrl[res->n_ctrl++] = m;
	ST_ADD(c, local, 1);
	return true;
}

static inline void
local(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, struct ip_nh *nh, bool v6,
      unsigned int flags)
{
	int e = v6 ? echo6(m) : echo4(m);

	if (e > 0) {
		res->reply[res->n_reply++] = m;
		ST_ADD(c, echo_replies, 1);
	} else if (e < 0) {
		drop(res, m, EGW_IP_DROP_ECHO_BAD);
	} else {
		/* pairs with the release store in port_dp_publish() (ctl.c) */
		const struct ip_port_dp *pd =
			__atomic_load_n(&ip_dp.port[nh->port], __ATOMIC_ACQUIRE);

		ST_ADD(c, local, 1);
		if (pd != NULL && pd->exception && !(flags & EGW_IP_F_NO_EXCEPTION)) {
			/* the host's stack, through the control path */
			if (!ip_tb_take(&c->local_tb, rte_get_tsc_cycles(), ip_dp.local_pps,
					ip_dp.local_burst) ||
			    res->n_ctrl == EGW_IP_MAX_BURST) {
				drop(res, m, EGW_IP_DROP_LOCAL_CTRL_LIMIT);
				return;
			}
			egw_eth_meta(m)->reserved = IP_META_LOCAL;
			m->hash.usr = nh->port;
			res->ctrl[res->n_ctrl++] = m;
			return;
		}
		res->local[res->n_local++] = m;
	}
}

/* Prefetch the DIR24_8 line of each IPv4 destination (the header where
 * classification put it; a short frame is left to the checks). */
static inline void
prefetch_tbl24(struct rte_mbuf *const pkts[], uint16_t n)
{
	const uint8_t *t = ip_dp.tbl24_4;
	uint8_t shift = ip_dp.tbl24_4_shift;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		uint32_t d;

		if (unlikely(m->data_len < m->l2_len + sizeof(struct rte_ipv4_hdr)))
			continue;
		memcpy(&d,
		       rte_pktmbuf_mtod_offset(m, const uint8_t *,
					       m->l2_len + offsetof(struct rte_ipv4_hdr, dst_addr)),
		       sizeof(d));
		rte_prefetch0(t + ((size_t)(rte_be_to_cpu_32(d) >> 8) << shift));
	}
}

/*
 * The common IPv4 case in one branch: a FIB value naming a next hop (or an
 * ECMP group: its path for the flow, as ip_nh_of() picks it; not a
 * session) that is a valid untagged neighbour (NH_F_FAST),
 * an untagged frame, a transit packet whose TTL is above 1 or one edgegw
 * made (EGW_IP_F_LOCAL_ORIGIN: ESP's outer packets, whose TTL is kept)
 * that fits the egress MTU, room in the output. A transit packet's TTL
 * decremented with the RFC 1624 update, and the MAC header written, as
 * fwd4() and emit() would. False: nothing done, the caller takes the
 * general path.
 */
static inline bool
fast4(uint64_t v, struct rte_mbuf *m, unsigned int flags, struct egw_ip_res *res)
{
	uint32_t id = (uint32_t)v;
	const struct ip_nh *nh;
	struct rte_ipv4_hdr *ip;
	uint8_t *d;

	if (unlikely(id & FIB_SESS))
		return false;
	if (id & FIB_GROUP) {
		/* pairs with the release store in grp_publish() (ctl.c) */
		const struct ip_nhg *g =
			__atomic_load_n(&ip_dp.grp[id & ~FIB_GROUP], __ATOMIC_ACQUIRE);

		if (unlikely(g == NULL || g->n == 0))
			return false;
		id = ip_nhg_pick(g, ip_flow_hash(m, false));
	}
	if (unlikely(id >= ip_dp.max_nh))
		return false;
	/* pairs with the release store in ip_nh_publish() (ctl.c) */
	nh = __atomic_load_n(&ip_dp.nh[id], __ATOMIC_ACQUIRE);
	d = rte_pktmbuf_mtod(m, uint8_t *);
	ip = (struct rte_ipv4_hdr *)(d + RTE_ETHER_HDR_LEN);
	if (unlikely(!(nh->flags & NH_F_FAST) || m->l2_len != RTE_ETHER_HDR_LEN ||
		     (!(flags & EGW_IP_F_LOCAL_ORIGIN) && ip->time_to_live <= 1) ||
		     rte_be_to_cpu_16(ip->total_length) > nh->mtu || res->n_out == EGW_IP_MAX_OUT))
		return false;
	if (!(flags & EGW_IP_F_LOCAL_ORIGIN))
		ip4_ttl_dec(ip);
	memcpy(d, nh->hdr, 8);
	memcpy(d + 8, nh->hdr + 8, 4);
	memcpy(d + 12, nh->hdr + 12, 2);
	m->port = nh->port;
	if (unlikely(!nh->used))
		__atomic_store_n((uint8_t *)&nh->used, 1, __ATOMIC_RELAXED);
	res->out_port[res->n_out] = nh->port;
	res->out[res->n_out++] = m;
	return true;
}

void
egw_ip_prefetch_burst(struct rte_mbuf *const pkts[], uint16_t n)
{
	const uint8_t *t = ip_dp.tbl24_4;
	uint8_t shift = ip_dp.tbl24_4_shift;
	uint16_t i;

	if (unlikely(t == NULL))
		return;
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t off = RTE_ETHER_HDR_LEN, d;
		uint16_t et;

		/* 22 bytes of MAC header at most, 20 of IPv4 */
		if (unlikely(m->data_len < RTE_ETHER_HDR_LEN + 8 + sizeof(struct rte_ipv4_hdr)))
			continue;
		memcpy(&et, p + 12, 2);
		if (et == RTE_BE16(RTE_ETHER_TYPE_VLAN) || et == RTE_BE16(RTE_ETHER_TYPE_QINQ)) {
			memcpy(&et, p + 16, 2);
			off += 4;
			if (et == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
				memcpy(&et, p + 20, 2);
				off += 4;
			}
		}
		if (et != RTE_BE16(RTE_ETHER_TYPE_IPV4))
			continue;
		memcpy(&d, p + off + offsetof(struct rte_ipv4_hdr, dst_addr), sizeof(d));
		rte_prefetch0(t + ((size_t)(rte_be_to_cpu_32(d) >> 8) << shift));
	}
}

/* A packet through the next hop of its FIB value: every kind of next hop
 * and every case fast4() leaves, for both families. */
static inline void
route(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, uint64_t v, bool v6,
      const uint8_t *dst6, unsigned int flags, uint16_t port, uint64_t now)
{
	struct ip_nh *nh = ip_nh_of(v, m, v6);

	/* RFC 4291 2.5.6: a link-local destination is ours or nobody's */
	if (v6 && unlikely(v6_link_local(dst6)) && nh->kind != NH_LOCAL) {
		drop(res, m, EGW_IP_DROP_MARTIAN_DST);
		return;
	}
	switch (nh->kind) {
	case NH_NEIGH:
	case NH_GLEAN:
	case NH_SESSION:
		if (!v6)
			fwd4(c, res, m, nh, v, flags, port, now);
		else
			fwd6(c, res, m, nh, v, flags, port, now);
		break;
	case NH_LOCAL: local(c, res, m, nh, v6, flags); break;
	case NH_BCAST: drop(res, m, EGW_IP_DROP_BROADCAST); break;
	case NH_BLACKHOLE: drop(res, m, EGW_IP_DROP_BLACKHOLE); break;
	case NH_UNREACH:
		drop_icmp(c, res, m, v6, EGW_IP_DROP_UNREACHABLE, v6 ? 1 : ICMP4_UNREACH,
			  v6 ? 0 : 1, 0, port);
		break;
	default:
		drop_icmp(c, res, m, v6, EGW_IP_DROP_NO_ROUTE, v6 ? 1 : ICMP4_UNREACH, 0, 0, port);
		break;
	}
}

/* route() for IPv4, out of the common case's loop. */
static __rte_noinline void
route4(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, uint64_t v,
       unsigned int flags, uint16_t port, uint64_t now)
{
	route(c, res, m, v, false, NULL, flags, port, now);
}

/* A check that failed: a link-scope multicast for the host, or a drop. */
static __rte_noinline void
check4_failed(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, enum egw_ip_drop r,
	      unsigned int flags, uint16_t port)
{
	if (r != EGW_IP_DROP_MULTICAST || !mcast_to_host(c, res, m, port, flags, false))
		drop(res, m, r);
}

/* The IPv4 destinations whose first-level entry names a tbl8 group: looked
 * up by rte_fib_lookup_bulk() after the others. */
struct fwd4_wait {
	uint16_t n;
	struct rte_mbuf *m[EGW_IP_MAX_BURST];
};

/*
 * One checked IPv4 packet, d its destination: its DIR24_8 first-level
 * entry (the line prefetched a poll or the checks before) and, when that is
 * the next hop, the common case (fast4()) or route(), in the packet's place
 * in the burst; an entry that names a tbl8 group has that group's line
 * prefetched and the packet waits (a second, dependent miss, which the rest
 * of the burst hides: a full table has a longer prefix in about 1% of its
 * /24s, and about 5% of the traffic goes there). All the packets of a flow
 * go the same way: no flow is reordered. A first-level entry that is the
 * next hop is read as rte_fib_lookup_bulk() reads it (the value shifted
 * left by one, bit 0 clear: value = entry >> 1), the layout confirmed at
 * start (fib4_tbl24(), fib4_tbl8() in ctl.c); an entry rewritten meanwhile
 * gives the old or the new next hop, as DPDK's own lookup would. Without a
 * confirmed layout every packet waits. True: sent by the common case.
 */
static __rte_always_inline bool
lookup4(struct egw_ip_ctx *c, struct egw_ip_res *res, struct rte_mbuf *m, uint32_t d,
	unsigned int flags, uint16_t port, uint64_t now, struct fwd4_wait *w)
{
	const uint8_t *t24 = ip_dp.tbl24_4, *t8 = ip_dp.tbl8_4;
	uint32_t e;

	if (unlikely(t8 == NULL)) {
		e = 1;
	} else if (ip_dp.tbl24_4_shift == 2) {
		memcpy(&e, t24 + ((size_t)(d >> 8) << 2), 4);
	} else {
		uint16_t e2;

		memcpy(&e2, t24 + ((size_t)(d >> 8) << 1), 2);
		e = e2;
	}
	if (unlikely(e & 1)) {
		if (t8 != NULL)
			rte_prefetch0(t8 + (((size_t)(e >> 1) * 256 + (d & 0xff))
					    << ip_dp.tbl24_4_shift));
		c->dst4[w->n] = d;
		w->m[w->n++] = m;
		return false;
	}
	if (likely(fast4(e >> 1, m, flags, res)))
		return true;
	route4(c, res, m, e >> 1, flags, port, now);
	return false;
}

/*
 * IPv4. A burst whose headers and first-level FIB lines were prefetched a
 * poll before (EGW_IP_F_PREFETCHED) takes one pass: each packet checked,
 * looked up and sent in turn. Any other burst has the lines of all its
 * destinations prefetched first and its checks done in a pass of their
 * own, which gives each miss that pass to arrive. Returns the number sent
 * by the common case.
 */
static inline uint32_t
fwd4_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n,
	   unsigned int flags, struct egw_ip_res *res, uint64_t now)
{
	struct fwd4_wait w;
	uint32_t nfast = 0;
	uint16_t i;

	w.n = 0;
	if (flags & EGW_IP_F_PREFETCHED) {
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			enum egw_ip_drop r;
			uint32_t d;

			r = check4(m, &d);
			if (unlikely(r != EGW_IP_DROP_MAX)) {
				check4_failed(c, res, m, r, flags, port);
				continue;
			}
			nfast += lookup4(c, res, m, d, flags, port, now, &w);
		}
	} else {
		struct rte_mbuf *good[EGW_IP_MAX_BURST];
		uint32_t dst[EGW_IP_MAX_BURST];
		uint16_t k = 0;

		if (likely(ip_dp.tbl24_4 != NULL))
			prefetch_tbl24(pkts, n);
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			enum egw_ip_drop r;

			if (i + 3 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 3], void *));
			r = check4(m, &dst[k]);
			if (unlikely(r != EGW_IP_DROP_MAX)) {
				check4_failed(c, res, m, r, flags, port);
				continue;
			}
			good[k++] = m;
		}
		for (i = 0; i < k; i++)
			nfast += lookup4(c, res, good[i], dst[i], flags, port, now, &w);
	}
	if (w.n == 0)
		return nfast;
	rte_fib_lookup_bulk(ip_dp.fib4, c->dst4, c->nhv, w.n);
	for (i = 0; i < w.n; i++) {
		if (likely(fast4(c->nhv[i], w.m[i], flags, res)))
			nfast++;
		else
			route4(c, res, w.m[i], c->nhv[i], flags, port, now);
	}
	return nfast;
}

/* IPv6: the checks, one bulk lookup (rte_fib6's TRIE), the next hops. */
static inline void
fwd6_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n,
	   unsigned int flags, struct egw_ip_res *res, uint64_t now)
{
	struct rte_mbuf *good[EGW_IP_MAX_BURST];
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		enum egw_ip_drop r;
		int x;

		/* a prefetched burst's headers were read then, and classified
		 * since: in cache */
		if (!(flags & EGW_IP_F_PREFETCHED) && i + 3 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 3], void *));
		x = check6(m, &r);
		if (unlikely(x != 0)) {
			if (x < 0) {
				if (r != EGW_IP_DROP_MULTICAST ||
				    !mcast_to_host(c, res, m, port, flags, true))
					drop(res, m, r);
			} else if (!ip_tb_take(&c->punt_tb, now, ip_dp.punt_pps,
					       ip_dp.punt_burst) ||
				   res->n_ctrl == EGW_IP_MAX_BURST) {
				drop(res, m, EGW_IP_DROP_LOCAL_CTRL_LIMIT);
			} else {
				egw_eth_meta(m)->reserved = 0;
				res->ctrl[res->n_ctrl++] = m;
				ST_ADD(c, nd, 1);
			}
			continue;
		}
		memcpy(c->dst6[k],
		       rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len)->dst_addr, 16);
		good[k++] = m;
	}
	if (k == 0)
		return;
	rte_fib6_lookup_bulk(ip_dp.fib6, c->dst6, c->nhv, k);
	for (i = 0; i < k; i++)
		route(c, res, good[i], c->nhv[i], true, c->dst6[i], flags, port, now);
}

void
egw_ip_fwd_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n, bool v6,
		 unsigned int flags, struct egw_ip_res *res)
{
	uint64_t now = rte_get_tsc_cycles();
	uint32_t nfast = 0;

	if (unlikely(n > EGW_IP_MAX_BURST))
		n = EGW_IP_MAX_BURST;
	c->fwd_burst = 0;
	if (!v6)
		nfast = fwd4_burst(c, port, pkts, n, flags, res, now);
	else
		fwd6_burst(c, port, pkts, n, flags, res, now);
	/* once per burst: the counter's line is written once */
	if (c->fwd_burst + nfast != 0)
		ST_ADD(c, forwarded, c->fwd_burst + nfast);
}

void
egw_ip_session_lookup(struct egw_ip_ctx *c, struct rte_mbuf *pkts[], uint16_t n, uint32_t keys[])
{
	uint16_t idx4[EGW_IP_MAX_BURST], idx6[EGW_IP_MAX_BURST];
	uint64_t nh6[EGW_IP_MAX_BURST];
	uint16_t i, k4 = 0, k6 = 0;

	if (unlikely(n > EGW_IP_MAX_BURST))
		n = EGW_IP_MAX_BURST;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
		uint8_t cls = egw_eth_meta(m)->cls;
		uint32_t d;

		keys[i] = EGW_IP_SESSION_NONE;
		/* the family is the ethertype's, and the version must agree */
		if (cls == EGW_ETH_CLS_IPV4 && (ip[0] >> 4) == 4 &&
		    m->data_len >= m->l2_len + sizeof(struct rte_ipv4_hdr)) {
			memcpy(&d, ip + 16, 4);
			c->dst4[k4] = rte_be_to_cpu_32(d);
			idx4[k4++] = i;
		} else if (cls == EGW_ETH_CLS_IPV6 && (ip[0] >> 4) == 6 &&
			   m->data_len >= m->l2_len + sizeof(struct rte_ipv6_hdr)) {
			memcpy(c->dst6[k6], ip + 24, 16);
			idx6[k6++] = i;
		}
	}
	if (k4 != 0) {
		rte_fib_lookup_bulk(ip_dp.fib4, c->dst4, c->nhv, k4);
		for (i = 0; i < k4; i++)
			keys[idx4[i]] = sess_key(c->nhv[i]);
	}
	if (k6 != 0) {
		rte_fib6_lookup_bulk(ip_dp.fib6, c->dst6, nh6, k6);
		for (i = 0; i < k6; i++)
			keys[idx6[i]] = sess_key(nh6[i]);
	}
}

uint16_t
egw_ip_ttl_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n,
		 uint16_t kept[], struct egw_ip_res *res)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len);
		bool v6 = egw_eth_meta(m)->cls == EGW_ETH_CLS_IPV6;

		/* the family is the ethertype's (lib/eth's class), and the
		 * version must say the same */
		if (unlikely((!v6 && egw_eth_meta(m)->cls != EGW_ETH_CLS_IPV4) ||
			     m->data_len < m->l2_len + (v6 ? 40u : 20u) ||
			     (ip[0] >> 4) != (v6 ? 6 : 4))) {
			drop(res, m, EGW_IP_DROP_BAD_HEADER);
			continue;
		}
		if (!v6) {
			struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

			if (unlikely(h->time_to_live <= 1)) {
				drop_icmp(c, res, m, false, EGW_IP_DROP_TTL_EXCEEDED,
					  ICMP4_TIME_EXCEEDED, 0, 0, port);
				continue;
			}
			ip4_ttl_dec(h);
		} else {
			struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

			if (unlikely(h->hop_limits <= 1)) {
				drop_icmp(c, res, m, true, EGW_IP_DROP_TTL_EXCEEDED, 3, 0, 0, port);
				continue;
			}
			h->hop_limits--;
		}
		kept[k++] = i;
	}
	return k;
}

uint32_t
egw_ip_session_of(int family, const uint8_t *addr)
{
	uint64_t v = NH_ID_NOROUTE;

	if (family == AF_INET && ip_dp.fib4 != NULL) {
		uint32_t ip;

		memcpy(&ip, addr, 4);
		ip = rte_be_to_cpu_32(ip);
		rte_fib_lookup_bulk(ip_dp.fib4, &ip, &v, 1);
	} else if (family == AF_INET6 && ip_dp.fib6 != NULL) {
		uint8_t a[1][16];

		memcpy(a[0], addr, 16);
		rte_fib6_lookup_bulk(ip_dp.fib6, a, &v, 1);
	}
	return sess_key(v);
}
