/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outbound ESP (data path): size check, software segmentation of
 * super-packets or fragmentation (tunnel mode: of the inner packet, before
 * encryption; transport mode: of the ESP packet, after it), then encryption
 * in place.
 *
 * Layout. Transport mode puts the ESP header right after the IP header and
 * the IPv6 extension headers that precede it (hop-by-hop, routing,
 * destination options), found by parsing the packet, whatever follows: TCP,
 * UDP, or an inner IP header (ipip, ip6tnl, GRE...). m->l3_len and the
 * tunnel meaning DPDK gives l2_len/outer_l3_len are never used. The bytes
 * encrypted start right after the ESP header and IV. Tunnel mode puts a new
 * outer IP header, ESP and the whole inner packet; the outer header (and
 * NAT-T UDP) is a copy of the SA's template with the per-packet words written
 * in (esp_sa_outer_template).
 *
 * Sequence numbers and IVs: the outputs of a run of packets of one SA are
 * numbered with one atomic add on the SA's counter, after segmentation, so
 * every segment and every queue gets its own number; the IV is that number.
 * A number above the persisted limit is never used (esp_seq_blocked); without
 * ESN the SA stops at 2^32-1 (esp_seq_overflow).
 */
#include <assert.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "esp_crypto.h"
#include "esp_private.h"

/* Outer IPv4 ids of tunnel packets: the low bits are the context index, so
 * two workers sending to the same peer never use one id at the same time
 * (RFC 6864 4.2: unique per source, destination and protocol while a
 * datagram may be fragmented); the rest counts per context. */
#define ESP_IP_ID_CTX_BITS 4
static_assert(EGW_ESP_MAX_CTX <= 1 << ESP_IP_ID_CTX_BITS,
	      "every context index must fit the low bits of the outer IPv4 id");

/* Parse the clear frame's IP header chain from the first segment.
 * false: malformed, or headers not in the first segment. */
static bool
parse_out(const struct rte_mbuf *m, struct esp_out_pkt *o)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t l2 = m->l2_len, have = rte_pktmbuf_data_len(m);

	if (have < l2 + sizeof(struct rte_ipv4_hdr))
		return false;
	p += l2;
	have -= l2;
	if ((p[0] >> 4) == 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;
		uint32_t ihl = (uint32_t)(ip->version_ihl & 0xf) * 4;

		o->ip_len = rte_be_to_cpu_16(ip->total_length);
		if (ihl < 20 || ihl > have || o->ip_len < ihl || l2 + o->ip_len > m->pkt_len)
			return false;
		o->family = AF_INET;
		o->insert = (uint16_t)ihl;
		o->nh_off = (uint16_t)(l2 + offsetof(struct rte_ipv4_hdr, next_proto_id));
		o->df = (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG)) != 0;
		o->tos = ip->type_of_service;
		return true;
	}
	if ((p[0] >> 4) == 6) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)p;
		uint32_t off, nh_off;
		uint8_t nh;

		if (have < sizeof(*ip6))
			return false;
		o->ip_len = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
		if (l2 + o->ip_len > m->pkt_len ||
		    !esp_ip6_skip_ext(p, RTE_MIN(have, o->ip_len), &nh, &off, &nh_off))
			return false;
		o->family = AF_INET6;
		o->insert = (uint16_t)off;
		o->nh_off = (uint16_t)(l2 + nh_off);
		o->df = 1;
		o->tos = (uint8_t)(rte_be_to_cpu_32(ip6->vtc_flow) >> 20);
		return true;
	}
	return false;
}

static inline uint32_t
pad4(uint32_t x)
{
	return (x + 3) & ~UINT32_C(3);
}

static inline uint32_t
outer_len(const struct egw_esp_sa *sa)
{
	return sa->tun_family == AF_INET6 ? sizeof(struct rte_ipv6_hdr)
					  : sizeof(struct rte_ipv4_hdr);
}

/* Bytes ESP puts in front of the encrypted part. */
static inline uint32_t
front_len(const struct egw_esp_sa *sa)
{
	return (sa->mode == EGW_ESP_MODE_TUNNEL ? outer_len(sa) : 0) +
	       (sa->natt ? ESP_UDP_LEN : 0) + ESP_HDR_LEN + ESP_IV_LEN;
}

/* Largest clear payload (the part ESP encrypts, before padding) whose ESP
 * packet fits in mtu; hdr = IP bytes ESP keeps in front (transport). */
static inline int32_t
room(const struct egw_esp_sa *sa, uint32_t mtu, uint32_t hdr)
{
	int32_t r = (int32_t)mtu - (int32_t)hdr - (int32_t)front_len(sa) - ESP_ICV_LEN;

	return r < 4 ? -1 : (int32_t)(r & ~3) - 2;
}

/* Effective MTU: the SA's, bounded by what one mbuf of the pool holds. */
static inline uint32_t
eff_mtu(const struct egw_esp_ctx *c, const struct egw_esp_sa *sa, const struct rte_mbuf *m)
{
	uint32_t max = c->frame_max - RTE_PKTMBUF_HEADROOM - m->l2_len;

	return sa->mtu < max ? sa->mtu : max;
}

/*
 * Offset from ip6 of the address the upper-layer pseudo-header names as the
 * destination (RFC 8200 8.1): the final one of a routing header that still
 * has segments left (type 2, RFC 6275; type 4, RFC 8754: Segment List[0]),
 * else the header's own. end: where the extension headers end (parse_out()
 * checked them).
 */
static uint32_t
ip6_final_dst(const uint8_t *ip6, uint32_t end)
{
	uint32_t x = sizeof(struct rte_ipv6_hdr), d = offsetof(struct rte_ipv6_hdr, dst_addr);
	uint8_t nh = ip6[offsetof(struct rte_ipv6_hdr, proto)];

	while (x + 8 <= end) {
		if (nh == IPPROTO_ROUTING && ip6[x + 3] != 0 && ip6[x + 1] >= 2 &&
		    (ip6[x + 2] == 2 || ip6[x + 2] == 4))
			d = x + 8;
		nh = ip6[x];
		x += ((uint32_t)ip6[x + 1] + 1) * 8;
	}
	return d;
}

/*
 * UDP checksum of the NAT-T header at frame offset udp_off of m (single
 * segment, encrypted): RFC 8200 8.1 forbids 0 over IPv6, and it covers the
 * ciphertext and ICV, so it is computed once the crypto job is done.
 */
static void
udp6_cksum(struct rte_mbuf *m, uint32_t udp_off, uint32_t dst_off)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_udp_hdr *u = (struct rte_udp_hdr *)(f + udp_off);
	uint16_t len = rte_be_to_cpu_16(u->dgram_len);
	uint32_t sum;
	uint16_t ck;

	/* pseudo-header: source, final destination, length, next header;
	 * words in memory order, as __rte_raw_cksum() adds them */
	sum = __rte_raw_cksum(f + m->l2_len + offsetof(struct rte_ipv6_hdr, src_addr), 16, 0);
	sum = __rte_raw_cksum(f + dst_off, 16, sum);
	sum += rte_cpu_to_be_16(len) + rte_cpu_to_be_16(IPPROTO_UDP);
	u->dgram_cksum = 0;
	sum = __rte_raw_cksum(u, len, sum);
	ck = (uint16_t)~__rte_raw_cksum_reduce(sum);
	u->dgram_cksum = ck == 0 ? 0xffff : ck; /* RFC 768: 0 means none */
}

/* Control path (egw_esp_sa_add(), before the SA is published), kept beside
 * encap_one() because it writes exactly the bytes encap_one() leaves alone. */
void
esp_sa_outer_template(struct egw_esp_sa *sa)
{
	uint8_t proto = sa->natt ? IPPROTO_UDP : IPPROTO_ESP;
	uint32_t ip_len;

	memset(sa->tmpl, 0, sizeof(sa->tmpl));
	sa->tmpl_len = 0;
	sa->tmpl_sum = 0;
	if (sa->dir != EGW_ESP_DIR_OUT || sa->mode != EGW_ESP_MODE_TUNNEL)
		return;
	if (sa->tun_family == AF_INET) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)sa->tmpl;

		/* version, TOS, length, id and DF are all written per packet;
		 * what stays is TTL, protocol and the addresses */
		h->time_to_live = sa->ttl;
		h->next_proto_id = proto;
		memcpy(&h->src_addr, sa->tun_src, 4);
		memcpy(&h->dst_addr, sa->tun_dst, 4);
		sa->tmpl_sum = __rte_raw_cksum(h, sizeof(*h), 0);
		ip_len = sizeof(*h);
	} else {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)sa->tmpl;

		h->vtc_flow = rte_cpu_to_be_32(6u << 28);
		h->proto = proto;
		h->hop_limits = sa->ttl;
		memcpy(h->src_addr, sa->tun_src, 16);
		memcpy(h->dst_addr, sa->tun_dst, 16);
		ip_len = sizeof(*h);
	}
	if (sa->natt) {
		struct rte_udp_hdr *u = (struct rte_udp_hdr *)(sa->tmpl + ip_len);

		/* the checksum stays 0 over IPv4 (RFC 3948 2.1); over IPv6 it is
		 * computed after encryption */
		u->src_port = sa->natt_sport_be;
		u->dst_port = sa->natt_dport_be;
		ip_len += ESP_UDP_LEN;
	}
	sa->tmpl_len = (uint8_t)ip_len;
}

/* Copy frame m into a fresh mbuf with room for ESP in front and behind. */
static struct rte_mbuf *
copy_frame(struct egw_esp_ctx *c, struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *n = rte_pktmbuf_alloc(c->pool);
	const void *src;
	uint8_t *d;

	if (n == NULL)
		return NULL;
	if (rte_pktmbuf_tailroom(n) < len + ESP_TRAILER_MAX) {
		rte_pktmbuf_free(n);
		return NULL;
	}
	d = (uint8_t *)rte_pktmbuf_append(n, (uint16_t)len);
	/* returns the data in place when contiguous, else copies into d */
	src = rte_pktmbuf_read(m, 0, len, d);
	if (src == NULL) {
		rte_pktmbuf_free(n);
		return NULL;
	}
	if (src != d)
		rte_memcpy(d, src, len);
	n->l2_len = m->l2_len;
	n->port = m->port;
	n->vlan_tci = m->vlan_tci;
	n->vlan_tci_outer = m->vlan_tci_outer;
	n->packet_type = m->packet_type;
	n->ol_flags = m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED |
				     RTE_MBUF_F_RX_QINQ | RTE_MBUF_F_RX_QINQ_STRIPPED);
	rte_mbuf_dynfield_copy(n, m);
	return n;
}

/*
 * Turn clear frame *mp into an ESP frame numbered seq and fill job to
 * encrypt it, or (job NULL: esp_aead_direct()) encrypt it at once; front =
 * front_len(sa). Returns EGW_ESP_DROP_MAX on success, else the drop reason
 * (*mp is then still the caller's to free).
 */
static __rte_always_inline unsigned int
encap_one(struct egw_esp_ctx *c, const struct egw_esp_sa *sa, uint32_t front, struct rte_mbuf **mp,
	  uint64_t seq, IMB_JOB *job, unsigned int slot)
{
	struct rte_mbuf *m = *mp;
	struct esp_out_pkt o;
	uint32_t l2 = m->l2_len, keep, plen, pad, tail, esp_len;
	uint8_t *old, *p, *ip, *esp, *tr, nh;
	bool tunnel = sa->mode == EGW_ESP_MODE_TUNNEL;

	/* parsed already when the size was checked */
	if (c->pre_ok[slot] && m->nb_segs == 1)
		o = c->pre[slot];
	else if (m->nb_segs > 1 || !parse_out(m, &o)) {
		/* a chained frame that needs no segmentation: make it flat */
		if (m->pkt_len > c->frame_max - RTE_PKTMBUF_HEADROOM - ESP_TRAILER_MAX)
			return EGW_ESP_DROP_NOMEM;
		m = copy_frame(c, m, m->pkt_len);
		if (m == NULL)
			return EGW_ESP_DROP_NOMEM;
		rte_pktmbuf_free(*mp);
		*mp = m;
		if (!parse_out(m, &o))
			return EGW_ESP_DROP_BAD_INNER;
	}
	if (m->pkt_len > l2 + o.ip_len)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - (l2 + o.ip_len)));
	keep = tunnel ? 0 : o.insert;
	plen = o.ip_len - keep;
	pad = pad4(plen + 2) - (plen + 2);
	tail = pad + 2 + ESP_ICV_LEN;
	nh = tunnel ? (o.family == AF_INET ? IPPROTO_IPIP : IPPROTO_IPV6)
		    : rte_pktmbuf_mtod(m, uint8_t *)[o.nh_off];

	if (rte_pktmbuf_headroom(m) < front || rte_pktmbuf_tailroom(m) < tail ||
	    !esp_mbuf_writable(m)) {
		struct rte_mbuf *n = copy_frame(c, m, m->pkt_len);

		if (n == NULL)
			return EGW_ESP_DROP_NOMEM;
		rte_pktmbuf_free(m);
		*mp = m = n;
	}
	/* one segment, headroom and tailroom checked: prepend and append are
	 * the field updates alone */
	old = rte_pktmbuf_mtod(m, uint8_t *);
	m->data_off = (uint16_t)(m->data_off - front);
	m->data_len = (uint16_t)(m->data_len + front + tail);
	m->pkt_len += front + tail;
	p = old - front;
	if (tunnel)
		esp_l2_move(p, old, l2); /* the ethertype is written below */
	else if (front >= l2 + keep)
		memcpy(p, old, l2 + keep); /* transport: L2 and IP headers, apart */
	else
		memmove(p, old, l2 + keep);
	ip = p + l2;
	esp_len = ESP_HDR_LEN + ESP_IV_LEN + plen + tail;
	if (tunnel) {
		uint16_t et = sa->tun_family == AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6;
		uint32_t udp = sa->natt ? ESP_UDP_LEN : 0;

		/* the last two bytes of the L2 header are the ethertype */
		esp_put16(ip - 2, et);
		/* constant sizes: each copy is a few stores, not a call */
		switch (sa->tmpl_len) {
		case sizeof(struct rte_ipv4_hdr):
			memcpy(ip, sa->tmpl, sizeof(struct rte_ipv4_hdr));
			break;
		case sizeof(struct rte_ipv4_hdr) + ESP_UDP_LEN:
			memcpy(ip, sa->tmpl, sizeof(struct rte_ipv4_hdr) + ESP_UDP_LEN);
			break;
		case sizeof(struct rte_ipv6_hdr):
			memcpy(ip, sa->tmpl, sizeof(struct rte_ipv6_hdr));
			break;
		case sizeof(struct rte_ipv6_hdr) + ESP_UDP_LEN:
			memcpy(ip, sa->tmpl, sizeof(struct rte_ipv6_hdr) + ESP_UDP_LEN);
			break;
		default: memcpy(ip, sa->tmpl, sa->tmpl_len); break;
		}
		if (sa->tun_family == AF_INET) {
			/* bytes 0-7: version/IHL, TOS, length, id, DF; the checksum
			 * adds their words to the template's constant ones */
			uint64_t w = rte_cpu_to_be_64(
				(uint64_t)(0x4500 | o.tos) << 48 |
				(uint64_t)(sizeof(struct rte_ipv4_hdr) + udp + esp_len) << 32 |
				(uint64_t)(uint16_t)(c->ip_id++ << ESP_IP_ID_CTX_BITS | c->idx)
					<< 16 |
				(o.family == AF_INET && o.df ? RTE_IPV4_HDR_DF_FLAG : 0));
			uint64_t s2 = (w & UINT64_C(0x0000ffff0000ffff)) +
				      (w >> 16 & UINT64_C(0x0000ffff0000ffff));
			uint16_t ck;

			memcpy(ip, &w, sizeof(w));
			ck = (uint16_t)~__rte_raw_cksum_reduce(sa->tmpl_sum + (uint32_t)s2 +
							       (uint32_t)(s2 >> 32));
			memcpy(ip + offsetof(struct rte_ipv4_hdr, hdr_checksum), &ck, sizeof(ck));
		} else {
			esp_put32(ip, 6u << 28 | (uint32_t)o.tos << 20);
			esp_put16(ip + offsetof(struct rte_ipv6_hdr, payload_len),
				  (uint16_t)(udp + esp_len));
		}
		esp = ip + sa->tmpl_len - udp;
	} else {
		uint32_t ip_new = o.insert + (sa->natt ? ESP_UDP_LEN : 0) + esp_len;

		p[o.nh_off] = sa->natt ? IPPROTO_UDP : IPPROTO_ESP;
		if (o.family == AF_INET) {
			struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

			h->total_length = rte_cpu_to_be_16((uint16_t)ip_new);
			h->hdr_checksum = 0;
			h->hdr_checksum = rte_ipv4_cksum(h);
		} else {
			struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

			h->payload_len = rte_cpu_to_be_16((uint16_t)(ip_new - sizeof(*h)));
		}
		esp = ip + o.insert;
	}
	c->udp6_off[slot] = 0;
	if (sa->natt) {
		struct rte_udp_hdr *u = (struct rte_udp_hdr *)esp;

		if (!tunnel) {
			/* tunnel: from the template */
			u->src_port = sa->natt_sport_be;
			u->dst_port = sa->natt_dport_be;
			/* IPv4: 0 (RFC 3948 2.1); IPv6: filled in after encryption */
			u->dgram_cksum = 0;
		}
		u->dgram_len = rte_cpu_to_be_16((uint16_t)(ESP_UDP_LEN + esp_len));
		if ((tunnel ? sa->tun_family : o.family) == AF_INET6) {
			c->udp6_off[slot] = (uint16_t)(esp - p);
			c->udp6_dst[slot] =
				(uint16_t)(l2 + (tunnel ? offsetof(struct rte_ipv6_hdr, dst_addr)
							: ip6_final_dst(ip, o.insert)));
		}
		esp += ESP_UDP_LEN;
	}
	/* ESP header and IV = the 64-bit sequence number */
	memcpy(esp, &sa->spi_be, 4);
	esp_put32(esp + 4, (uint32_t)seq);
	esp_put64(esp + 8, seq);

	/* padding 1, 2, 3 (RFC 4303 2.4; pad < 4 and the ICV follows, so the
	 * word stays inside the trailer), pad length, next header */
	tr = p + front + l2 + keep + plen;
	esp_put32(tr, 0x01020304);
	tr[pad] = (uint8_t)pad;
	tr[pad + 1] = nh;

	memcpy(c->iv[slot], sa->salt, ESP_SALT_LEN);
	memcpy(c->iv[slot] + ESP_SALT_LEN, esp + 8, ESP_IV_LEN);
	/* AAD: SPI, [high word], low word (RFC 4106 5, RFC 7634 2.1) */
	memcpy(c->aad[slot], esp, 4);
	if (sa->esn) {
		esp_put32(c->aad[slot] + 4, (uint32_t)(seq >> 32));
		memcpy(c->aad[slot] + 8, esp + 4, 4);
	} else {
		memcpy(c->aad[slot] + 4, esp + 4, 4);
	}
	if (job == NULL) {
		esp_gcm_direct(c, sa, true, esp + ESP_HDR_LEN + ESP_IV_LEN, plen + pad + 2,
			       c->iv[slot], c->aad[slot], sa->esn ? 12 : 8, tr + pad + 2);
	} else {
		esp_job_aead(job, sa, true, esp + ESP_HDR_LEN + ESP_IV_LEN, plen + pad + 2,
			     c->iv[slot], c->aad[slot], sa->esn ? 12 : 8, tr + pad + 2);
		job->user_data = (void *)(uintptr_t)slot;
	}
	m->ol_flags &= ~(RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_IP_CKSUM |
			 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6);
	return EGW_ESP_DROP_MAX;
}

static inline void
count_drop(struct egw_esp_ctx *c, struct egw_esp_sa *sa, struct egw_esp_res *res,
	   enum egw_esp_drop why)
{
	res->drop[why]++;
	c->st.drop[why]++;
	sa->stats[c->idx].drop[why]++;
}

/* Whether number seq and clear bytes more after used may be sent
 * (EGW_ESP_DROP_MAX), or why not. */
static inline uint8_t
limits_check(const struct egw_esp_sa *sa, uint64_t seq, uint64_t limit, uint64_t used,
	     uint32_t bytes)
{
	if (seq > limit)
		return !sa->esn && seq > UINT32_MAX ? EGW_ESP_DROP_SEQ_OVERFLOW
						    : EGW_ESP_DROP_SEQ_BLOCKED;
	if (seq - sa->seq_first >= sa->life_hard_packets)
		return EGW_ESP_DROP_LIFETIME;
	if (used > sa->life_hard_bytes || bytes > sa->life_hard_bytes - used)
		return EGW_ESP_DROP_LIFETIME;
	return EGW_ESP_DROP_MAX;
}

/* Encrypt out[0..n) (all of one SA) in place; drops are freed and removed
 * (order kept). Returns the number left.
 *
 * Hard byte lifetime: the run's clear bytes are reserved with one atomic add
 * on sa->bytes_used before anything is sent; a packet whose bytes would take
 * the SA past life_hard_bytes is dropped (esp_lifetime_expired), and what was
 * reserved for packets not sent is given back with one more add. So the SA
 * never protects more than life_hard_bytes bytes, whichever workers share
 * it; while a reservation is outstanding another worker may see too little
 * left and drop a packet that would have fitted (the SA is then at its end
 * anyway). */
static uint16_t
encrypt_run(struct egw_esp_ctx *c, struct egw_esp_sa *sa, struct rte_mbuf *out[], uint16_t n,
	    struct egw_esp_res *res)
{
	struct esp_sa_lstats *ls = &sa->stats[c->idx];
	IMB_JOB *jobs[EGW_ESP_MAX_BURST];
	uint8_t why[EGW_ESP_MAX_BURST];
	uint32_t clear[EGW_ESP_MAX_BURST];
	uint64_t base, limit, seq, bytes = 0, ip_bytes = 0, want = 0, used;
	unsigned int i, nj = 0;
	uint16_t k = 0;
	uint32_t front = front_len(sa);
	bool direct, inside;

	if (__atomic_load_n(&sa->hard_expired, __ATOMIC_ACQUIRE) != 0) {
		for (i = 0; i < n; i++)
			why[i] = EGW_ESP_DROP_LIFETIME;
		goto drops;
	}
	/* clear IP bytes of each packet, as the SA counts them */
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *m = out[i];

		clear[i] =
			c->pre_ok[i] && m->nb_segs == 1 ? c->pre[i].ip_len : m->pkt_len - m->l2_len;
		want += clear[i];
	}
	/* one reservation for the run: bytes used .. used+want-1 are ours alone */
	used = __atomic_fetch_add(&sa->bytes_used, want, __ATOMIC_RELAXED);
	/* one reservation for the run: numbers base .. base+n-1 are ours alone */
	base = __atomic_fetch_add(&sa->seq_next, n, __ATOMIC_RELAXED);
	/* pairs with the release store of the control path once the limit is on disk */
	limit = __atomic_load_n(&sa->seq_limit, __ATOMIC_ACQUIRE);
	/* the control path extends the limit; it may sleep until told */
	if (unlikely(base + n > __atomic_load_n(&sa->seq_wake, __ATOMIC_RELAXED))) {
		void (*wake)(void) = __atomic_load_n(&esp_wake, __ATOMIC_ACQUIRE);

		if (wake != NULL)
			wake();
	}
	/* AES-GCM is encrypted by direct calls as each packet is ready, unless
	 * a segment reads its payload from the super-packet (an SGL job) */
	direct = esp_aead_direct(c, sa) && !c->gso_oop;
	if (!direct)
		esp_jobs_get(c, n, jobs);
	/* the whole run inside the sequence limit and both hard lifetimes:
	 * no packet needs its own check */
	inside = n != 0 && base + n - 1 <= limit &&
		 base + n - 1 - sa->seq_first < sa->life_hard_packets &&
		 used <= sa->life_hard_bytes && want <= sa->life_hard_bytes - used;
	for (i = 0; i < n; i++) {
		seq = base + i;
		why[i] = inside ? EGW_ESP_DROP_MAX : limits_check(sa, seq, limit, used, clear[i]);
		if (why[i] != EGW_ESP_DROP_MAX)
			continue;
		why[i] =
			(uint8_t)encap_one(c, sa, front, &out[i], seq, direct ? NULL : jobs[nj], i);
		/* a segment whose payload is still in the super-packet */
		if (why[i] == EGW_ESP_DROP_MAX && c->gso[i].n != 0 && !esp_gso_job(c, jobs[nj], i))
			why[i] = EGW_ESP_DROP_BAD_INNER;
		if (why[i] == EGW_ESP_DROP_MAX) {
			used += clear[i];
			nj += !direct;
		}
	}
	if (nj != 0) {
		/* only the nj filled jobs are submitted */
		esp_jobs_run(c, nj, jobs, c->ok);
		for (i = 0; i < n; i++)
			if (why[i] == EGW_ESP_DROP_MAX && !c->ok[i])
				why[i] = EGW_ESP_DROP_CRYPTO;
	}
	if (sa->natt)
		for (i = 0; i < n; i++)
			if (why[i] == EGW_ESP_DROP_MAX && c->udp6_off[i] != 0)
				udp6_cksum(out[i], c->udp6_off[i], c->udp6_dst[i]);
drops:
	for (i = 0; i < n; i++) {
		if (why[i] == EGW_ESP_DROP_MAX) {
			bytes += out[i]->pkt_len - out[i]->l2_len;
			ip_bytes += clear[i];
			out[k++] = out[i];
		} else {
			count_drop(c, sa, res, why[i]);
			rte_pktmbuf_free(out[i]);
		}
	}
	/* the reservation of the packets not sent goes back */
	if (want != ip_bytes)
		__atomic_fetch_sub(&sa->bytes_used, want - ip_bytes, __ATOMIC_RELAXED);
	if (k != 0) {
		ls->packets += k;
		ls->bytes += ip_bytes;
		c->st.out_packets += k;
		c->st.out_bytes += bytes;
	}
	esp_gso_run_done(c, n);
	return k;
}

/* ICMP errors per second a context sends at most, and the burst it may
 * send at once (RFC 1812 4.3.2.8, RFC 4443 2.4(f): rate-limit errors). */
#define ICMP_RATE 1000
#define ICMP_BURST 50

/* Token bucket of the context: true if one more ICMP may go now. */
static bool
icmp_allowed(struct egw_esp_ctx *c)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	uint64_t add = (now - c->icmp_tsc) * ICMP_RATE / hz;

	if (add != 0) {
		c->icmp_tokens = (uint32_t)RTE_MIN((uint64_t)ICMP_BURST, c->icmp_tokens + add);
		c->icmp_tsc = now;
	}
	if (c->icmp_tokens == 0) {
		c->st.icmp_limited++;
		return false;
	}
	c->icmp_tokens--;
	return true;
}

/* Size an ICMP too-big for packet m that must fit in mtu through sa. */
static void
too_big(struct egw_esp_ctx *c, const struct egw_esp_sa *sa, struct rte_mbuf *m,
	const struct esp_out_pkt *o, uint32_t mtu, struct egw_esp_res *res)
{
	int32_t r = room(sa, mtu, sa->mode == EGW_ESP_MODE_TUNNEL ? 0 : o->insert);
	uint32_t path_mtu =
		r < 0 ? 0 : (uint32_t)r + (sa->mode == EGW_ESP_MODE_TUNNEL ? 0 : o->insert);
	const uint8_t *src = NULL;
	struct rte_mbuf *icmp;

	if (o->family == AF_INET6 && path_mtu < 1280)
		path_mtu = 1280; /* RFC 8200 5: the minimum link MTU */
	/* from an address of edgegw's: the tunnel's own end, else a local
	 * address of the family (egw_esp_local_addr_add), else (none
	 * configured) the packet's destination */
	if (sa->mode == EGW_ESP_MODE_TUNNEL && sa->tun_family == o->family)
		src = sa->tun_src;
	else
		src = esp_icmp_src(o->family);
	if (res->n_icmp < EGW_ESP_MAX_BURST && icmp_allowed(c)) {
		icmp = esp_icmp_too_big(m, (uint16_t)path_mtu, src, c->pool);
		if (icmp != NULL) {
			res->icmp[res->n_icmp++] = icmp;
			c->st.icmp++;
		}
	}
}

/*
 * Transport mode, IPv4 without DF, m too big for mtu: ESP applies to whole
 * datagrams only, and the ESP packet is fragmented (RFC 4303 3.3.4). So m is
 * encrypted as it is, in a run of its own, and the ESP packet, still in one
 * mbuf, is cut into fragments that fit mtu. Returns the number of frames put
 * in out[] (room for EGW_ESP_MAX_SEGS); drops are freed and counted.
 */
static unsigned int
encrypt_frag(struct egw_esp_ctx *c, struct egw_esp_sa *sa, struct rte_mbuf *m,
	     const struct esp_out_pkt *o, uint32_t mtu, struct rte_mbuf *out[],
	     struct egw_esp_res *res)
{
	enum egw_esp_drop why;
	struct rte_mbuf *e;
	unsigned int k;

	c->pre[0] = *o;
	c->pre_ok[0] = m->nb_segs == 1;
	out[0] = m;
	if (encrypt_run(c, sa, out, 1, res) == 0)
		return 0;
	e = out[0];
	k = esp_frag_ipv4(c, e, (uint16_t)mtu, out, EGW_ESP_MAX_SEGS, &why);
	rte_pktmbuf_free(e);
	if (k == 0) {
		count_drop(c, sa, res, why);
		return 0;
	}
	res->created += k - 1;
	c->st.fragments += k - 1;
	return k;
}

void
egw_esp_ctx_set_ingress_mtu(struct egw_esp_ctx *c, uint16_t mtu)
{
	c->ingress_mtu = mtu;
}

uint16_t
egw_esp_outbound_burst(struct egw_esp_ctx *c, struct egw_esp_sa *const sa[],
		       struct rte_mbuf *pkts[], uint16_t n, struct rte_mbuf *out[],
		       uint16_t out_cap, struct egw_esp_res *res)
{
	uint16_t i, run_start = 0, n_out = 0, room_l2 = 0;
	struct egw_esp_sa *run_sa = NULL;
	const struct egw_esp_sa *room_sa = NULL;
	int32_t room_r = -1;
	uint32_t room_mtu = 0;

	for (i = 0; i < n; i++) {
		struct egw_esp_sa *s = sa[i];
		struct rte_mbuf *m = pkts[i];
		uint32_t mtu, hdr_len, plen, need;
		enum egw_esp_drop why;
		struct esp_out_pkt o;
		bool tunnel = s->mode == EGW_ESP_MODE_TUNNEL, tso, super;
		unsigned int k;
		int32_t r;

		/* a run ends where the SA changes or before a batch could overflow;
		 * an empty one (its packets dropped, or sent by encrypt_frag) is
		 * no run: encrypt_run would still take two atomic adds on the SA */
		if (n_out > run_start &&
		    (s != run_sa || n_out - run_start > EGW_ESP_MAX_BURST - EGW_ESP_MAX_SEGS)) {
			n_out = run_start +
				encrypt_run(c, run_sa, &out[run_start], n_out - run_start, res);
			run_start = n_out;
		}
		if (out_cap - n_out < EGW_ESP_MAX_SEGS)
			break;
		run_sa = s;

		if (!parse_out(m, &o)) {
			/* the headers of a long chain may reach past its first segment */
			if (m->nb_segs == 1 || !esp_gso_tcp_probe(m, &hdr_len, &plen)) {
				why = EGW_ESP_DROP_BAD_INNER;
				goto drop;
			}
			/* for the size arithmetic only: all IP headers count as payload */
			o.ip_len = m->pkt_len - m->l2_len;
			o.insert = 0;
			o.family = 0;
		}
		tso = (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) != 0 && m->tso_segsz != 0;
		if (!tunnel) {
			mtu = eff_mtu(c, s, m);
			r = room(s, mtu, o.insert);
		} else if (s != room_sa || m->l2_len != room_l2) {
			/* tunnel mode: the same for every packet of the SA and L2 length */
			mtu = room_mtu = eff_mtu(c, s, m);
			r = room_r = room(s, mtu, 0);
			room_sa = s;
			room_l2 = m->l2_len;
		} else {
			mtu = room_mtu;
			r = room_r;
		}
		need = tunnel ? o.ip_len : o.ip_len - o.insert;
		if (likely(r >= 0 && need <= (uint32_t)r && !tso)) {
			/* as it is (encap_one flattens a chain) */
			c->pre[n_out - run_start] = o;
			c->pre_ok[n_out - run_start] = o.family != 0 && m->nb_segs == 1;
			out[n_out++] = m;
			continue;
		}
		/* Only super-packets are segmented: a TSO request, an LRO
		 * aggregate, or more than the ingress link carries. A TCP
		 * segment that came over the wire keeps its size: splitting it
		 * would copy a TCP-MD5 / TCP-AO digest into both halves (both
		 * wrong) and hide the path MTU from the sender. */
		super = tso || (m->ol_flags & RTE_MBUF_F_RX_LRO) != 0 ||
			o.ip_len > (c->ingress_mtu != 0 ? c->ingress_mtu : EGW_ESP_MTU_DEF);
		if (super && esp_gso_tcp_probe(m, &hdr_len, &plen)) {
			/* TCP: segments sized so each ESP packet fits */
			int32_t mss = r - (int32_t)(hdr_len - m->l2_len - (tunnel ? 0 : o.insert));

			if (tso && mss > (int32_t)m->tso_segsz)
				mss = m->tso_segsz;
			if (mss <= 0 || mss > UINT16_MAX) {
				why = EGW_ESP_DROP_TOO_BIG;
				goto too_big;
			}
			/* takes m: freed once the run's jobs have read it */
			k = esp_gso_out(c, s, m, (uint16_t)mss, &out[n_out], n_out - run_start,
					&why);
			if (k == 0)
				goto drop;
			memset(&c->pre_ok[n_out - run_start], 0, k);
			n_out += k;
			res->created += k - 1;
			c->st.segments += k - 1;
			continue;
		}
		if (r >= 0 && need <= (uint32_t)r) {
			/* TSO flag on a packet that is not TCP */
			c->pre_ok[n_out - run_start] = 0;
			out[n_out++] = m;
			continue;
		}
		if (tunnel && o.family == AF_INET && !o.df && r >= 68) {
			k = esp_frag_ipv4(c, m, (uint16_t)r, &out[n_out], EGW_ESP_MAX_SEGS, &why);
			if (k == 0)
				goto drop;
			rte_pktmbuf_free(m);
			memset(&c->pre_ok[n_out - run_start], 0, k);
			n_out += k;
			res->created += k - 1;
			c->st.fragments += k - 1;
			continue;
		}
		if (!tunnel && o.family == AF_INET && !o.df) {
			/* what is pending goes first: output keeps input order */
			if (n_out > run_start)
				n_out = run_start + encrypt_run(c, run_sa, &out[run_start],
								n_out - run_start, res);
			n_out += encrypt_frag(c, s, m, &o, mtu, &out[n_out], res);
			run_start = n_out;
			continue;
		}
		why = EGW_ESP_DROP_TOO_BIG;
	too_big:
		if (o.family != 0)
			too_big(c, s, m, &o, mtu, res);
	drop:
		count_drop(c, s, res, why);
		rte_pktmbuf_free(m);
	}
	if (run_sa != NULL && n_out > run_start)
		n_out = run_start + encrypt_run(c, run_sa, &out[run_start], n_out - run_start, res);
	res->n_out = n_out;
	return i;
}
