/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMP (RFC 792, RFC 1812 4.3) and ICMPv6 (RFC 4443) error builders, used
 * by the data path (time exceeded, unreachable, too big) and the control
 * path (host unreachable after failed resolution). No locks; the caller
 * rate limits. Also the ECMP flow hash both halves use.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_icmp.h>
#include <rte_udp.h>

#include "ip_private.h"

/* RFC 1812 4.3.2.3: as much of the original as fits in 576 bytes. */
#define ICMP4_QUOTE_MAX (576 - 20 - 8)
/* RFC 4443 2.4 (c): as much as fits in the IPv6 minimum MTU. */
#define ICMP6_QUOTE_MAX (1280 - 40 - 8)

bool
ip_icmp_src4(uint16_t port, uint16_t vlan, rte_be32_t *src)
{
	/* pairs with the release store in port_dp_publish() (ctl.c) */
	const struct ip_port_dp *d = port < RTE_MAX_ETHPORTS
					     ? __atomic_load_n(&ip_dp.port[port], __ATOMIC_ACQUIRE)
					     : NULL;
	unsigned int i;

	for (i = 0; d != NULL && i < d->n4; i++) {
		if (d->vlan4[i] == vlan) {
			*src = d->a4[i];
			return true;
		}
	}
	if (d != NULL && d->has4) {
		*src = d->addr4;
		return true;
	}
	if (!ip_dp.has4)
		return false;
	*src = ip_dp.any4;
	return true;
}

bool
ip_icmp_src6(uint16_t port, uint16_t vlan, uint8_t src[16])
{
	/* pairs with the release store in port_dp_publish() (ctl.c) */
	const struct ip_port_dp *d = port < RTE_MAX_ETHPORTS
					     ? __atomic_load_n(&ip_dp.port[port], __ATOMIC_ACQUIRE)
					     : NULL;
	unsigned int i;

	for (i = 0; d != NULL && i < d->n6; i++) {
		if (d->vlan6[i] == vlan) {
			memcpy(src, d->a6[i], 16);
			return true;
		}
	}
	if (d != NULL && d->has6) {
		memcpy(src, d->addr6, 16);
		return true;
	}
	if (!ip_dp.has6)
		return false;
	memcpy(src, ip_dp.any6, 16);
	return true;
}

bool
ip_icmp4_allowed(const struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);
	uint32_t hl = (ip->version_ihl & 0xf) * 4u, src = rte_be_to_cpu_32(ip->src_addr);

	/* RFC 1812 4.3.2.7 */
	if (egw_eth_meta((struct rte_mbuf *)(uintptr_t)m)->dst != EGW_ETH_DST_HOST)
		return false;
	if (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_OFFSET_MASK))
		return false;
	if (src == 0 || (src >> 24) == 127 || (src >> 28) >= 0xe)
		return false;
	if ((rte_be_to_cpu_32(ip->dst_addr) >> 28) >= 0xe)
		return false;
	if (ip->next_proto_id == IPPROTO_ICMP) {
		uint8_t t;

		if (m->data_len < m->l2_len + hl + 1)
			return false;
		t = *rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len + hl);
		/* errors, and types we do not know: only echo, timestamp,
		 * information and address mask queries are answered */
		if (t != 0 && t != 8 && t != 13 && t != 14 && t != 15 && t != 16 && t != 17 &&
		    t != 18)
			return false;
	}
	return true;
}

bool
ip_icmp6_allowed(const struct rte_mbuf *m)
{
	const struct rte_ipv6_hdr *ip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, m->l2_len);
	static const uint8_t zero[16];

	/* RFC 4443 2.4 (e) */
	if (egw_eth_meta((struct rte_mbuf *)(uintptr_t)m)->dst != EGW_ETH_DST_HOST)
		return false;
	if (ip->src_addr[0] == 0xff || memcmp(ip->src_addr, zero, 16) == 0 ||
	    ip->dst_addr[0] == 0xff)
		return false;
	if (ip->proto == IPPROTO_ICMPV6) {
		if (m->data_len < m->l2_len + sizeof(*ip) + 1)
			return false;
		if (*rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len + sizeof(*ip)) < 128)
			return false;
	}
	return true;
}

/* A reply frame: m's MAC header with the addresses swapped, room for l3
 * bytes after it. */
static uint8_t *
reply_start(struct rte_mempool *mp, const struct rte_mbuf *m, uint32_t l3, struct rte_mbuf **rp)
{
	struct rte_mbuf *r = rte_pktmbuf_alloc(mp);
	const uint8_t *s = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t *d;

	*rp = NULL;
	if (r == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)(m->l2_len + l3));
	if (d == NULL) {
		rte_pktmbuf_free(r);
		return NULL;
	}
	memcpy(d, s + 6, 6);
	memcpy(d + 6, s, 6);
	memcpy(d + 12, s + 12, m->l2_len - 12u);
	r->l2_len = m->l2_len;
	r->port = m->port;
	r->vlan_tci = m->vlan_tci;
	r->vlan_tci_outer = m->vlan_tci_outer;
	r->packet_type = m->packet_type;
	*egw_eth_meta(r) = *egw_eth_meta((struct rte_mbuf *)(uintptr_t)m);
	egw_eth_meta(r)->dst = EGW_ETH_DST_HOST;
	*rp = r;
	return d + m->l2_len;
}

struct rte_mbuf *
ip_icmp4_error(struct rte_mempool *mp, struct rte_mbuf *m, rte_be32_t src, uint8_t type,
	       uint8_t code, uint32_t info)
{
	const struct rte_ipv4_hdr *oip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);
	uint32_t olen = rte_be_to_cpu_16(oip->total_length), q;
	static uint16_t ident;
	const void *p;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *ic;
	struct rte_mbuf *r;
	rte_be32_t x;

	if (olen > m->pkt_len - m->l2_len)
		olen = m->pkt_len - m->l2_len;
	q = RTE_MIN(olen, (uint32_t)ICMP4_QUOTE_MAX);
	ip = (struct rte_ipv4_hdr *)reply_start(mp, m, sizeof(*ip) + sizeof(*ic) + q, &r);
	if (ip == NULL)
		return NULL;
	ic = (struct rte_icmp_hdr *)(ip + 1);
	p = rte_pktmbuf_read(m, m->l2_len, q, ic + 1);
	if (p == NULL)
		memset(ic + 1, 0, q);
	else if (p != (const void *)(ic + 1))
		memcpy(ic + 1, p, q);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0xc0; /* internetwork control, as Linux */
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*ic) + q));
	/* a per-thread counter would be nicer; uniqueness does not matter
	 * for a datagram this small that is never fragmented */
	ip->packet_id = rte_cpu_to_be_16(__atomic_fetch_add(&ident, 1, __ATOMIC_RELAXED));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = src;
	ip->dst_addr = oip->src_addr;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	ic->icmp_type = type;
	ic->icmp_code = code;
	ic->icmp_cksum = 0;
	x = rte_cpu_to_be_32(info);
	memcpy(&ic->icmp_ident, &x, 4);
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(*ic) + q);
	return r;
}

struct rte_mbuf *
ip_icmp6_error(struct rte_mempool *mp, struct rte_mbuf *m, const uint8_t src[16], uint8_t type,
	       uint8_t code, uint32_t info)
{
	const struct rte_ipv6_hdr *oip =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, m->l2_len);
	uint32_t olen = sizeof(*oip) + rte_be_to_cpu_16(oip->payload_len), q;
	struct rte_ipv6_hdr *ip;
	uint8_t *ic;
	const void *p;
	struct rte_mbuf *r;
	rte_be32_t x;
	uint16_t ck;

	if (olen > m->pkt_len - m->l2_len)
		olen = m->pkt_len - m->l2_len;
	q = RTE_MIN(olen, (uint32_t)ICMP6_QUOTE_MAX);
	ip = (struct rte_ipv6_hdr *)reply_start(mp, m, sizeof(*ip) + 8 + q, &r);
	if (ip == NULL)
		return NULL;
	ic = (uint8_t *)(ip + 1);
	p = rte_pktmbuf_read(m, m->l2_len, q, ic + 8);
	if (p == NULL)
		memset(ic + 8, 0, q);
	else if (p != ic + 8)
		memcpy(ic + 8, p, q);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)(8 + q));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 64;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, oip->src_addr, 16);
	ic[0] = type;
	ic[1] = code;
	ic[2] = ic[3] = 0;
	x = rte_cpu_to_be_32(info);
	memcpy(ic + 4, &x, 4);
	ck = rte_ipv6_udptcp_cksum(ip, ic);
	memcpy(ic + 2, &ck, 2);
	return r;
}

/* Sum of 16-bit words of a 4- or 16-byte address, folded (for RFC 1624). */
static uint32_t
addr_sum(const uint8_t *a, unsigned int len)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i < len; i += 2)
		s += (uint32_t)a[i] << 8 | a[i + 1];
	return s;
}

/* RFC 1624 eqn. 3 over a field of len bytes (network-order checksum). */
static uint16_t
cksum_replace(uint16_t ck, const uint8_t *old, const uint8_t *new_, unsigned int len)
{
	uint32_t s = (uint16_t)~rte_be_to_cpu_16(ck);

	s += (uint32_t)(len / 2) * 0xffff - addr_sum(old, len);
	s += addr_sum(new_, len);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return rte_cpu_to_be_16((uint16_t)~s);
}

/* The port's own address of a family for vlan, or its first (no fallback
 * to another port's). */
static bool
port_src(uint16_t port, uint16_t vlan, bool v6, uint8_t *src)
{
	/* pairs with the release store in port_dp_publish() (ctl.c) */
	const struct ip_port_dp *d = port < RTE_MAX_ETHPORTS
					     ? __atomic_load_n(&ip_dp.port[port], __ATOMIC_ACQUIRE)
					     : NULL;
	unsigned int i;

	if (d == NULL)
		return false;
	if (!v6) {
		for (i = 0; i < d->n4; i++)
			if (d->vlan4[i] == vlan) {
				memcpy(src, &d->a4[i], 4);
				return true;
			}
		if (d->has4)
			memcpy(src, &d->addr4, 4);
		return d->has4;
	}
	for (i = 0; i < d->n6; i++)
		if (d->vlan6[i] == vlan) {
			memcpy(src, d->a6[i], 16);
			return true;
		}
	if (d->has6)
		memcpy(src, d->addr6, 16);
	return d->has6;
}

bool
egw_ip_icmp_set_source(struct rte_mbuf *m, uint16_t port)
{
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len), src[16];

	if (m->data_len >= m->l2_len + 20u + 8u && (ip[0] >> 4) == 4 && ip[9] == IPPROTO_ICMP) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;
		uint8_t type = ip[(ip[0] & 0xf) * 4u];

		/* errors only (unreachable, time exceeded, parameter problem) */
		if ((ip[0] & 0xf) < 5 || m->data_len < m->l2_len + (ip[0] & 0xf) * 4u + 8u ||
		    (type != 3 && type != 11 && type != 12))
			return false;
		if (!port_src(port, ip_vlan_of(m), false, src))
			return false;
		/* the ICMP checksum does not cover the IP header */
		h->hdr_checksum =
			cksum_replace(h->hdr_checksum, (const uint8_t *)&h->src_addr, src, 4);
		memcpy(&h->src_addr, src, 4);
		return true;
	}
	if (m->data_len >= m->l2_len + 40u + 8u && (ip[0] >> 4) == 6 && ip[6] == IPPROTO_ICMPV6) {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;
		uint8_t *ic = ip + 40;
		uint16_t ck;

		/* errors only (types below 128): never an echo reply's source */
		if (ic[0] >= 128 || !port_src(port, ip_vlan_of(m), true, src))
			return false;
		/* the ICMPv6 checksum covers the pseudo-header's source */
		memcpy(&ck, ic + 2, 2);
		ck = cksum_replace(ck, h->src_addr, src, 16);
		memcpy(ic + 2, &ck, 2);
		memcpy(h->src_addr, src, 16);
		return true;
	}
	return false;
}
