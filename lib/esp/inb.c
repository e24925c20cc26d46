/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inbound ESP: header checks, SA by SPI, anti-replay check before
 * decryption, ICV, window update only once the ICV verified (under the SA's
 * lock, taken once per run of packets of the SA), trailer checks, then the
 * inner packet (tunnel) or the original IP header with the next header
 * (transport), then the inbound policy check.
 */
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "esp_crypto.h"
#include "esp_private.h"

/* Smallest ESP packet: header, IV, 4 bytes of (payload, padding, pad
 * length, next header), ICV. */
#define ESP_MIN_LEN (ESP_HDR_LEN + ESP_IV_LEN + 4 + ESP_ICV_LEN)

struct in_pkt {
	uint16_t esp_off; /* frame offset of the ESP header */
	uint16_t hdr_len; /* IP header bytes before ESP (or before UDP with NAT-T) */
	uint16_t nh_off;  /* frame offset of the protocol byte naming ESP/UDP */
	uint8_t family;
	uint8_t natt;
	uint32_t esp_len; /* ESP header to the end of the IP packet */
	uint64_t seq;     /* full sequence number */
};

/* Where ESP starts in frame m, or why it cannot be processed. */
static unsigned int
parse_in(struct rte_mbuf *m, struct in_pkt *q)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t l2 = m->l2_len, have = rte_pktmbuf_data_len(m), ip_len, off;
	uint8_t proto;

	if (have < l2 + sizeof(struct rte_ipv4_hdr))
		return EGW_ESP_DROP_TRUNCATED;
	p += l2;
	have -= l2;
	/* the ethertype names the version, as egw_esp_is_esp() checks (a
	 * version that is neither is a malformed header, below) */
	if (l2 >= 2 && ((p[0] >> 4) == 4 || (p[0] >> 4) == 6)) {
		uint16_t et = (uint16_t)(p[-2] << 8 | p[-1]);

		if (et != ((p[0] >> 4) == 4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6))
			return EGW_ESP_DROP_NOT_IP;
	}
	if ((p[0] >> 4) == 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;

		off = (uint32_t)(ip->version_ihl & 0xf) * 4;
		ip_len = rte_be_to_cpu_16(ip->total_length);
		if (off < 20 || ip_len < off || ip_len > have)
			return EGW_ESP_DROP_TRUNCATED;
		/* RFC 1122 3.2.1.2: the outer header is not covered by the ICV;
		 * a NIC's verdict stands, else the sum is checked here */
		switch (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
		case RTE_MBUF_F_RX_IP_CKSUM_GOOD: break;
		case RTE_MBUF_F_RX_IP_CKSUM_BAD: return EGW_ESP_DROP_BAD_CKSUM;
		default:
			if (!esp_ip4_sum_ok(p, off))
				return EGW_ESP_DROP_BAD_CKSUM;
		}
		/* fragments of ESP packets are not reassembled here */
		if ((ip->fragment_offset &
		     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
			return EGW_ESP_DROP_FRAGMENT;
		proto = ip->next_proto_id;
		q->family = AF_INET;
		q->nh_off = (uint16_t)(l2 + offsetof(struct rte_ipv4_hdr, next_proto_id));
	} else if ((p[0] >> 4) == 6) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)p;
		uint32_t nh_off;

		if (have < sizeof(*ip6))
			return EGW_ESP_DROP_TRUNCATED;
		ip_len = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
		if (ip_len > have || !esp_ip6_skip_ext(p, ip_len, &proto, &off, &nh_off))
			return EGW_ESP_DROP_TRUNCATED;
		q->family = AF_INET6;
		q->nh_off = (uint16_t)(l2 + nh_off);
	} else {
		return EGW_ESP_DROP_TRUNCATED;
	}
	q->hdr_len = (uint16_t)off;
	q->natt = 0;
	if (proto == IPPROTO_UDP) {
		const struct rte_udp_hdr *u = (const struct rte_udp_hdr *)(p + off);

		if (off + sizeof(*u) > ip_len || rte_be_to_cpu_16(u->dgram_len) != ip_len - off)
			return EGW_ESP_DROP_TRUNCATED;
		q->natt = 1;
		off += sizeof(*u);
	} else if (proto == IPPROTO_FRAGMENT) {
		return EGW_ESP_DROP_FRAGMENT;
	} else if (proto != IPPROTO_ESP) {
		return EGW_ESP_DROP_TRUNCATED;
	}
	q->esp_off = (uint16_t)(l2 + off);
	q->esp_len = ip_len - off;
	if (q->esp_len < ESP_MIN_LEN || (q->esp_len - ESP_HDR_LEN - ESP_IV_LEN - ESP_ICV_LEN) % 4)
		return EGW_ESP_DROP_TRUNCATED;
	/* Ethernet padding behind the IP packet */
	if (m->pkt_len > l2 + ip_len)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - (l2 + ip_len)));
	return EGW_ESP_DROP_MAX;
}

/* The answer of esp_local_addr() for the last address a burst asked about
 * (family 0: none yet): a burst of one peer's ESP asks once. */
struct local_memo {
	uint8_t family;
	bool hit;
	uint8_t a[16];
};

static inline bool
local_memo_ask(struct local_memo *lm, uint8_t family, const uint8_t *a)
{
	/* constant sizes: compares inline, not a libc call a packet */
	if (lm->family == family &&
	    (family == AF_INET ? memcmp(lm->a, a, 4) == 0 : memcmp(lm->a, a, 16) == 0))
		return lm->hit;
	lm->family = family;
	memcpy(lm->a, a, family == AF_INET ? 4 : 16);
	lm->hit = esp_local_addr(family, a);
	return lm->hit;
}

/* egw_esp_is_esp(), the local address asked through lm. */
static inline bool
is_esp(const struct rte_mbuf *m, struct local_memo *lm)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *) + m->l2_len;
	uint32_t have = rte_pktmbuf_data_len(m), off, l2 = m->l2_len;
	const uint8_t *dst;
	uint8_t proto, family;
	bool frag = false;
	uint16_t et;

	if (have < l2 + sizeof(struct rte_ipv4_hdr))
		return false;
	have -= l2;
	/* the ethertype names the version (the SPD drops a mismatch) */
	if (l2 >= 2) {
		memcpy(&et, p - 2, sizeof(et));
		if ((et == RTE_BE16(RTE_ETHER_TYPE_IPV4)) != ((p[0] & 0xf0) == 0x40))
			return false;
	}
	if ((p[0] >> 4) == 4) {
		off = (uint32_t)(p[0] & 0xf) * 4;
		if (off < sizeof(struct rte_ipv4_hdr))
			return false;
		proto = p[9];
		frag = (esp_get32(p + 4) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0;
		family = AF_INET;
		dst = p + 16;
	} else if ((p[0] >> 4) == 6 && have >= sizeof(struct rte_ipv6_hdr)) {
		off = sizeof(struct rte_ipv6_hdr);
		proto = p[6];
		while ((proto == IPPROTO_HOPOPTS || proto == IPPROTO_ROUTING ||
			proto == IPPROTO_DSTOPTS) &&
		       off + 8 <= have) {
			uint32_t len = ((uint32_t)p[off + 1] + 1) * 8;

			proto = p[off];
			off += len;
		}
		if (proto == IPPROTO_FRAGMENT && off + 8 <= have) {
			proto = p[off];
			off += 8;
			frag = true;
		}
		family = AF_INET6;
		dst = p + 24;
	} else {
		return false;
	}
	/* only ESP to edgegw itself: a subscriber's own IPsec is transit */
	if (proto != IPPROTO_ESP && proto != IPPROTO_UDP)
		return false;
	if (!(lm != NULL ? local_memo_ask(lm, family, dst) : esp_local_addr(family, dst)))
		return false;
	/* ESP in fragments is ours to drop (not reassembled); a UDP fragment
	 * is not NAT-T (a fragmented IKE message goes to the host) */
	if (proto == IPPROTO_ESP || frag)
		return proto == IPPROTO_ESP;
	if (off + sizeof(struct rte_udp_hdr) + 4 > have)
		return false;
	/* NAT-T: a port of an inbound SA and a non-zero SPI (zero = IKE,
	 * RFC 3948 2.2); a 1-byte 0xff payload is a NAT keepalive */
	return esp_natt_port(((const struct rte_udp_hdr *)(p + off))->dst_port) &&
	       esp_get32(p + off + sizeof(struct rte_udp_hdr)) != 0;
}

bool
egw_esp_is_esp(const struct rte_mbuf *m)
{
	return is_esp(m, NULL);
}

uint16_t
egw_esp_split_burst(struct rte_mbuf *pkts[], uint16_t n, struct rte_mbuf *esp[], uint16_t *n_clear)
{
	struct local_memo lm = {.family = 0};
	uint16_t i, ne = 0, nc = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (is_esp(m, &lm))
			esp[ne++] = m;
		else
			pkts[nc++] = m; /* nc <= i */
	}
	*n_clear = nc;
	return ne;
}

static inline void
count_drop(struct egw_esp_ctx *c, struct egw_esp_sa *sa, struct egw_esp_res *res, unsigned int why)
{
	res->drop[why]++;
	c->st.drop[why]++;
	if (sa != NULL)
		sa->stats[c->idx].drop[why]++;
}

/* Constant-time tag comparison: 0 when equal. */
static inline int
tag_diff(const uint8_t *a, const uint8_t *b)
{
	uint64_t x[2], y[2];

	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) != 0;
}

static bool
sa_matches(const struct egw_esp_sa *sa, const struct rte_mbuf *m, const struct in_pkt *q)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *) + m->l2_len;

	if (sa->natt != q->natt)
		return false;
	if (q->natt &&
	    ((const struct rte_udp_hdr *)(ip + q->hdr_len))->dst_port != sa->natt_dport_be)
		return false;
	/* transport: the destination is the application's business, checked
	 * by egw_esp_is_esp() (an address of edgegw's) */
	if (sa->mode != EGW_ESP_MODE_TUNNEL)
		return true;
	if (q->family != sa->tun_family)
		return false;
	/* the peer's address may be translated on the way when NAT-T is used */
	if (q->family == AF_INET)
		return memcmp(ip + 16, sa->tun_dst, 4) == 0 &&
		       (q->natt || memcmp(ip + 12, sa->tun_src, 4) == 0);
	return memcmp(ip + 24, sa->tun_dst, 16) == 0 &&
	       (q->natt || memcmp(ip + 8, sa->tun_src, 16) == 0);
}

/* ECN codepoints (RFC 3168 5). */
#define ECN_NOT_ECT 0
#define ECN_ECT1 1
#define ECN_ECT0 2
#define ECN_CE 3

/* ECN field of an IPv4 or IPv6 header. */
static inline uint8_t
ecn_get(const uint8_t *ip, bool v4)
{
	return v4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
}

/*
 * RFC 6040 4.2, decapsulation: the inner header's ECN field from the outer
 * one. Outer CE marks an ECN-capable inner packet CE and drops a Not-ECT one
 * (returns false); outer ECT(1) turns inner ECT(0) into ECT(1); everything
 * else leaves the inner field as it is.
 */
static bool
ecn_decap(const uint8_t *outer, uint8_t outer_family, uint8_t *inner, bool inner_v4)
{
	uint8_t o = ecn_get(outer, outer_family == AF_INET), i = ecn_get(inner, inner_v4), n = i;

	if (o == ECN_CE) {
		if (i == ECN_NOT_ECT)
			return false;
		n = ECN_CE;
	} else if (o == ECN_ECT1 && i == ECN_ECT0) {
		n = ECN_ECT1;
	}
	if (n == i)
		return true;
	if (inner_v4) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)inner;

		h->type_of_service = (uint8_t)((h->type_of_service & ~3) | n);
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else {
		inner[1] = (uint8_t)((inner[1] & ~0x30) | n << 4);
	}
	return true;
}

/*
 * Strip ESP from a verified frame. Returns EGW_ESP_DROP_MAX or the reason.
 * plen: bytes of the decrypted payload before padding.
 */
static unsigned int
decap_one(const struct egw_esp_sa *sa, struct rte_mbuf *m, const struct in_pkt *q)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *p = f + q->esp_off + ESP_HDR_LEN + ESP_IV_LEN;
	uint32_t clen = q->esp_len - ESP_HDR_LEN - ESP_IV_LEN - ESP_ICV_LEN;
	uint32_t l2 = m->l2_len, padlen = p[clen - 2], plen, i;
	uint8_t nh = p[clen - 1];

	if (padlen + 2 > clen)
		return EGW_ESP_DROP_BAD_PADDING;
	plen = clen - 2 - padlen;
	if (padlen <= 3) {
		/* the usual padding to 4 bytes: the word that ends with the pad
		 * length byte holds 1, 2, 3 before it (the IV is before p) */
		static const uint32_t want[4] = {0, 0x00000100, 0x00010200, 0x01020300};
		static const uint32_t mask[4] = {0, 0x0000ff00, 0x00ffff00, 0xffffff00};
		uint32_t v = esp_get32(p + plen + padlen - 3);

		if ((v & mask[padlen]) != want[padlen])
			return EGW_ESP_DROP_BAD_PADDING;
	} else {
		for (i = 0; i < padlen; i++)
			if (p[plen + i] != (uint8_t)(i + 1))
				return EGW_ESP_DROP_BAD_PADDING;
	}
	if (nh == IPPROTO_NONE)
		return EGW_ESP_DROP_DUMMY;
	/* a NIC's checksum verdicts were on the outer packet: the packet that
	 * comes out is checked anew (lib/ip verifies its IPv4 header) */
	m->ol_flags &= ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK |
			 RTE_MBUF_F_RX_OUTER_IP_CKSUM_BAD | RTE_MBUF_F_RX_OUTER_L4_CKSUM_MASK);

	if (sa->mode == EGW_ESP_MODE_TUNNEL) {
		uint32_t len;
		uint16_t et;

		if (nh == IPPROTO_IPIP && plen >= sizeof(struct rte_ipv4_hdr) && (p[0] >> 4) == 4) {
			const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;

			len = rte_be_to_cpu_16(ip->total_length);
			if ((ip->version_ihl & 0xf) < 5 ||
			    len < (uint32_t)(ip->version_ihl & 0xf) * 4)
				return EGW_ESP_DROP_BAD_NEXT_HEADER;
			et = RTE_ETHER_TYPE_IPV4;
		} else if (nh == IPPROTO_IPV6 && plen >= sizeof(struct rte_ipv6_hdr) &&
			   (p[0] >> 4) == 6) {
			len = sizeof(struct rte_ipv6_hdr) +
			      rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)p)->payload_len);
			et = RTE_ETHER_TYPE_IPV6;
		} else {
			return EGW_ESP_DROP_BAD_NEXT_HEADER;
		}
		/* anything after the inner packet is TFC padding (RFC 4303 2.7) */
		if (len > plen)
			return EGW_ESP_DROP_BAD_NEXT_HEADER;
		if (!ecn_decap(f + l2, q->family, p, et == RTE_ETHER_TYPE_IPV4))
			return EGW_ESP_DROP_ECN;
		/* the L2 header moves up to the inner packet; the ethertype is new */
		esp_l2_move(p - l2, f, l2);
		esp_put16(p - 2, et);
		rte_pktmbuf_adj(m, (uint16_t)(p - l2 - f));
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - (l2 + len)));
		return EGW_ESP_DROP_MAX;
	}

	/* transport: the IP headers move up against the payload */
	{
		uint32_t shift = (uint32_t)(p - f) - (l2 + q->hdr_len);
		uint8_t *ip;

		memmove(f + shift, f, l2 + q->hdr_len);
		rte_pktmbuf_adj(m, (uint16_t)shift);
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - (l2 + q->hdr_len + plen)));
		f = rte_pktmbuf_mtod(m, uint8_t *);
		ip = f + l2;
		f[q->nh_off] = nh;
		if (q->family == AF_INET) {
			struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

			h->total_length = rte_cpu_to_be_16((uint16_t)(q->hdr_len + plen));
			h->hdr_checksum = 0;
			h->hdr_checksum = rte_ipv4_cksum(h);
		} else {
			struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

			h->payload_len = rte_cpu_to_be_16(
				(uint16_t)(q->hdr_len - sizeof(struct rte_ipv6_hdr) + plen));
		}
	}
	return EGW_ESP_DROP_MAX;
}

/* Bytes of the clear IP packet a decrypted frame will give (its trailer is
 * in clear by now), for the byte lifetime. */
static inline uint32_t
clear_len(const struct egw_esp_sa *sa, const struct rte_mbuf *m, const struct in_pkt *q)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *) + q->esp_off;
	uint32_t clen = q->esp_len - ESP_HDR_LEN - ESP_IV_LEN - ESP_ICV_LEN;
	uint32_t padlen = p[ESP_HDR_LEN + ESP_IV_LEN + clen - 2];
	uint32_t plen = padlen + 2 > clen ? 0 : clen - 2 - padlen;

	return sa->mode == EGW_ESP_MODE_TUNNEL ? plen : q->hdr_len + plen;
}

/* Make m a writable single-segment direct mbuf. */
static struct rte_mbuf *
writable(struct egw_esp_ctx *c, struct rte_mbuf *m)
{
	struct rte_mbuf *n;

	if (m->nb_segs == 1 && esp_mbuf_writable(m))
		return m;
	if (m->nb_segs > 1 && RTE_MBUF_DIRECT(m) && rte_mbuf_refcnt_read(m) == 1 &&
	    rte_pktmbuf_linearize(m) == 0)
		return m;
	if (m->pkt_len > c->frame_max - RTE_PKTMBUF_HEADROOM)
		return NULL;
	n = rte_pktmbuf_alloc(c->pool);
	if (n == NULL)
		return NULL;
	{
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(n, (uint16_t)m->pkt_len);
		const void *src = d == NULL ? NULL : rte_pktmbuf_read(m, 0, m->pkt_len, d);

		if (src == NULL) {
			rte_pktmbuf_free(n);
			return NULL;
		}
		/* rte_pktmbuf_read gives the data in place when contiguous */
		if (src != d)
			rte_memcpy(d, src, m->pkt_len);
	}
	n->l2_len = m->l2_len;
	n->port = m->port;
	n->vlan_tci = m->vlan_tci;
	n->vlan_tci_outer = m->vlan_tci_outer;
	/* RX flags only: n is a direct mbuf whatever m was */
	n->ol_flags = m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED |
				     RTE_MBUF_F_RX_QINQ | RTE_MBUF_F_RX_QINQ_STRIPPED);
	n->packet_type = m->packet_type;
	rte_mbuf_dynfield_copy(n, m);
	rte_pktmbuf_free(m);
	return n;
}

static uint16_t
inbound_chunk(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n, struct egw_esp_res *res)
{
	struct in_pkt q[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *sa[EGW_ESP_MAX_BURST], *gsa[EGW_ESP_MAX_BURST];
	uint32_t spi[EGW_ESP_MAX_BURST];
	uint8_t why[EGW_ESP_MAX_BURST], ok[EGW_ESP_MAX_BURST];
	IMB_JOB *jobs[EGW_ESP_MAX_BURST];
	struct rte_mbuf *good[EGW_ESP_MAX_BURST];
	uint16_t i, j, ng = 0, k = 0;
	unsigned int nj = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = writable(c, pkts[i]);

		spi[i] = 0;
		if (m == NULL) {
			why[i] = EGW_ESP_DROP_NOMEM;
			continue;
		}
		pkts[i] = m;
		why[i] = (uint8_t)parse_in(m, &q[i]);
		if (why[i] == EGW_ESP_DROP_MAX)
			spi[i] = esp_get32(rte_pktmbuf_mtod(m, uint8_t *) + q[i].esp_off);
	}
	esp_sa_lookup_in_bulk(spi, n, sa);
	for (i = 0; i < n; i++) {
		struct egw_esp_sa *s = sa[i];
		uint8_t *esp;
		uint32_t lo, clen;
		bool direct;

		if (why[i] != EGW_ESP_DROP_MAX)
			continue;
		if (s == NULL) {
			why[i] = EGW_ESP_DROP_UNKNOWN_SPI;
			continue;
		}
		if (!sa_matches(s, pkts[i], &q[i])) {
			why[i] = EGW_ESP_DROP_SA_MISMATCH;
			continue;
		}
		if (__atomic_load_n(&s->hard_expired, __ATOMIC_ACQUIRE) != 0) {
			why[i] = EGW_ESP_DROP_LIFETIME;
			continue;
		}
		esp = rte_pktmbuf_mtod(pkts[i], uint8_t *) + q[i].esp_off;
		lo = esp_get32(esp + 4);
		/* a lock-free look at the window: a stale view only lets a
		 * packet through to the re-check under the lock */
		q[i].seq = esp_replay_infer(s->replay, lo, s->esn);
		{
			enum egw_esp_drop w;

			if (!esp_replay_check(s->replay, q[i].seq, &w)) {
				why[i] = (uint8_t)w;
				continue;
			}
		}
		memcpy(c->iv[i], s->salt, ESP_SALT_LEN);
		memcpy(c->iv[i] + ESP_SALT_LEN, esp + ESP_HDR_LEN, ESP_IV_LEN);
		memcpy(c->aad[i], esp, 4);
		if (s->esn) {
			esp_put32(c->aad[i] + 4, (uint32_t)(q[i].seq >> 32));
			memcpy(c->aad[i] + 8, esp + 4, 4);
		} else {
			memcpy(c->aad[i] + 4, esp + 4, 4);
		}
		clen = q[i].esp_len - ESP_HDR_LEN - ESP_IV_LEN - ESP_ICV_LEN;
		direct = esp_aead_direct(c, s);
		if (direct) {
			/* decrypted now; the ICV is compared before anything else
			 * reads the clear text */
			esp_gcm_direct(c, s, false, esp + ESP_HDR_LEN + ESP_IV_LEN, clen, c->iv[i],
				       c->aad[i], s->esn ? 12 : 8, c->tag[i]);
			if (tag_diff(c->tag[i], esp + ESP_HDR_LEN + ESP_IV_LEN + clen) != 0)
				why[i] = EGW_ESP_DROP_BAD_ICV;
			continue;
		}
		if (nj == 0)
			esp_jobs_get(c, n, jobs);
		esp_job_aead(jobs[nj], s, false, esp + ESP_HDR_LEN + ESP_IV_LEN, clen, c->iv[i],
			     c->aad[i], s->esn ? 12 : 8, c->tag[i]);
		jobs[nj]->user_data = (void *)(uintptr_t)i;
		nj++;
	}
	if (nj != 0) {
		esp_jobs_run(c, nj, jobs, c->ok);
		for (i = 0; i < n; i++) {
			const uint8_t *icv;

			/* only the packets that went by a job */
			if (why[i] != EGW_ESP_DROP_MAX || esp_aead_direct(c, sa[i]))
				continue;
			if (!c->ok[i]) {
				why[i] = EGW_ESP_DROP_CRYPTO;
				continue;
			}
			icv = rte_pktmbuf_mtod(pkts[i], uint8_t *) + q[i].esp_off + q[i].esp_len -
			      ESP_ICV_LEN;
			if (tag_diff(c->tag[i], icv) != 0)
				why[i] = EGW_ESP_DROP_BAD_ICV;
		}
	}
	/* window update for verified packets, one lock per run of an SA */
	for (i = 0; i < n; i = j) {
		struct egw_esp_sa *s = sa[i];
		uint64_t pk = 0, by = 0;

		for (j = i; j < n && sa[j] == s; j++)
			;
		if (s == NULL)
			continue;
		rte_spinlock_lock(&s->lock);
		for (k = i; k < j; k++) {
			enum egw_esp_drop w;

			uint32_t len;

			if (why[k] != EGW_ESP_DROP_MAX)
				continue;
			/* the hard lifetime holds to the packet and the byte: checked
			 * here, where they are counted */
			len = clear_len(s, pkts[k], &q[k]);
			if (s->packets_used + pk >= s->life_hard_packets ||
			    s->bytes_used + by + len > s->life_hard_bytes) {
				why[k] = EGW_ESP_DROP_LIFETIME;
				continue;
			}
			if (!esp_replay_update(s->replay, q[k].seq, &w)) {
				why[k] = (uint8_t)w;
				continue;
			}
			pk++;
			by += len;
		}
		s->packets_used += pk;
		s->bytes_used += by;
		rte_spinlock_unlock(&s->lock);
	}
	for (i = 0; i < n; i++) {
		if (why[i] == EGW_ESP_DROP_MAX)
			why[i] = (uint8_t)decap_one(sa[i], pkts[i], &q[i]);
		if (why[i] == EGW_ESP_DROP_MAX) {
			gsa[ng] = sa[i];
			good[ng++] = pkts[i];
		}
	}
	/* the clear packet must be one an inbound policy protects with this SA
	 * (or with the SA it replaced, until that one is deleted) */
	esp_spd_check_in(c, good, ng, gsa, ok);
	k = 0;
	j = 0;
	for (i = 0; i < n; i++) {
		if (why[i] != EGW_ESP_DROP_MAX) {
			count_drop(c, why[i] == EGW_ESP_DROP_UNKNOWN_SPI ? NULL : sa[i], res,
				   why[i]);
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		/* good[] holds the frames still good, in order */
		if (!ok[j]) {
			count_drop(c, sa[i], res, EGW_ESP_DROP_POLICY_MISMATCH);
			rte_pktmbuf_free(good[j++]);
			continue;
		}
		sa[i]->stats[c->idx].packets++;
		sa[i]->stats[c->idx].bytes += good[j]->pkt_len - good[j]->l2_len;
		c->st.in_packets++;
		c->st.in_bytes += good[j]->pkt_len - good[j]->l2_len;
		pkts[k++] = good[j++];
	}
	return k;
}

uint16_t
egw_esp_inbound_burst(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		      struct egw_esp_res *res)
{
	uint16_t done = 0, k = 0;

	while (done < n) {
		uint16_t chunk = RTE_MIN((uint16_t)(n - done), (uint16_t)EGW_ESP_MAX_BURST);
		uint16_t g = inbound_chunk(c, &pkts[done], chunk, res);

		memmove(&pkts[k], &pkts[done], g * sizeof(pkts[0]));
		k += g;
		done += chunk;
	}
	return k;
}
