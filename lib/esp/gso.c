/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outbound packets that do not fit the SA's MTU: software TCP segmentation,
 * IPv4 fragmentation, and the ICMP/ICMPv6 too-big message for the sender.
 *
 * Not DPDK lib/gso, for two reasons. Its segments are indirect mbufs chained
 * to a header mbuf, while ESP appends its trailer in each segment's tailroom
 * and encrypts in place, so every segment here is a fresh single-mbuf frame.
 * And it takes the header layout from m->l2_len/l3_len/l4_len and the
 * outer_* lengths, whose tunnel meaning differs between DPDK and its users;
 * here every header is parsed from the bytes and every length field checked
 * against the bytes present.
 *
 * TCP inside one ipip/ip6tnl level is segmented at the inner TCP header and
 * both IP headers are rewritten per segment, so each segment is a whole
 * packet before ESP sees it. Linux once stopped its transport-mode GSO at
 * the inner IP header and then wrote the ESP header into it (xfrm
 * "use software GSO for inner tunnels"); the unit test checks every layer of
 * every segment of such packets.
 *
 * Cost: the payload is read once. One loop copies it, a run per input
 * segment, and sums its 16-bit words from the registers it loaded (AVX2 where
 * the CPU and EAL allow it, SSE2 otherwise); no byte is looked at on its own.
 * The headers are copied and patched, and their checksums are updated from
 * sums taken once per packet (RFC 1624) instead of being summed again. A
 * 64 KB packet made into 50 segments costs about 1.3 times allocating the
 * mbufs and a plain memcpy of the same bytes.
 */
#define ALLOW_EXPERIMENTAL_API /* rte_vect_get_max_simd_bitwidth() */

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>
#include <rte_vect.h>
#ifdef RTE_ARCH_X86
#include <immintrin.h>
#endif

#include "esp_private.h"

/* Most header bytes (L2 + IP headers + IPv6 extension headers + TCP) a
 * segmentable packet may have; they are read into a buffer of this size when
 * the first segment does not hold them. */
#define GSO_HDR_MAX 384
/* segments whose mbufs are prefetched ahead of the one being filled */
#define GSO_MBUF_AHEAD 4
/* m->l2_len is a 7-bit field. */
#define GSO_L2_MAX 127
#define GSO_IP_LEVELS 2

#define IPV4_HDR_LEN ((uint32_t)sizeof(struct rte_ipv4_hdr))
#define IPV4_HDR_MAX 60
#define IPV6_HDR_LEN ((uint32_t)sizeof(struct rte_ipv6_hdr))
#define TCP_HDR_LEN ((uint32_t)sizeof(struct rte_tcp_hdr))
#define ICMP_HDR_LEN 8u
/* RFC 1812 4.3.2.3: an ICMP error is at most 576 bytes of IP. */
#define ICMP4_MAX_IP 576u
/* RFC 4443 2.4 (c): an ICMPv6 error must not exceed the minimum IPv6 MTU. */
#define ICMP6_MAX_IP 1280u
#define ICMP_TTL 64

#define ICMP4_DEST_UNREACH 3
#define ICMP4_FRAG_NEEDED 4
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_INFO_MIN 128 /* ICMPv6 types below are errors (RFC 4443 2.1) */

/* Routing header types whose final destination this code knows. */
#define IPV6_RH_MIP6 2 /* RFC 6275 type 2: one address */
#define IPV6_RH_SRH 4  /* RFC 8754: Segment List[0] is the final one */

/* VLAN state a frame copy keeps (stripped tags, tags to insert). */
#define FRAME_VLAN_FLAGS                                                         \
	(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_QINQ | \
	 RTE_MBUF_F_RX_QINQ_STRIPPED | RTE_MBUF_F_TX_VLAN | RTE_MBUF_F_TX_QINQ)

/* One IP header of a segmentable packet. */
struct gso_ip {
	uint16_t off; /* frame offset */
	uint16_t len; /* IPv4 header with options, IPv6 header with extension headers */
	uint8_t v6;
};

/* What parsing a segmentable packet found. */
struct gso_pkt {
	struct gso_ip ip[GSO_IP_LEVELS]; /* outer first */
	uint8_t n_ip;
	uint16_t tcp_off;
	uint16_t tcp_len;     /* TCP header with options */
	uint16_t hdr_len;     /* frame bytes before the TCP payload */
	uint16_t l4_dst_off;  /* frame offset of the pseudo-header destination */
	uint32_t payload_len; /* TCP payload bytes */
};

/* Where a copy out of an mbuf chain has got to. */
struct seg_walker {
	const struct rte_mbuf *seg;
	uint32_t off;
};

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Parse the IP header at frame offset off of the headers h (hlim bytes of
 * them readable); the packet may cover the frame up to end. Sets ip->len,
 * the upper protocol, the end of the IP packet and the offset of the address
 * the upper layer's pseudo-header uses (the final destination of an IPv6
 * routing header). Fragments, jumbograms and routing headers whose final
 * destination is unknown are refused: their TCP cannot be resegmented.
 */
static bool
parse_ip(const uint8_t *h, uint32_t hlim, uint32_t off, uint32_t end, bool v6, struct gso_ip *ip,
	 uint8_t *proto, uint32_t *ip_end, uint16_t *dst_off)
{
	uint32_t x, elen, plen;
	uint8_t nh;

	ip->off = (uint16_t)off;
	ip->v6 = v6;
	if (!v6) {
		const struct rte_ipv4_hdr *ip4;
		uint32_t ihl, tot;

		if (off + IPV4_HDR_LEN > hlim)
			return false;
		ip4 = (const struct rte_ipv4_hdr *)(h + off);
		ihl = rte_ipv4_hdr_len(ip4);
		tot = rte_be_to_cpu_16(ip4->total_length);
		if ((ip4->version_ihl >> 4) != 4 || ihl < IPV4_HDR_LEN || off + ihl > hlim ||
		    tot < ihl || off + tot > end)
			return false;
		if ((rte_be_to_cpu_16(ip4->fragment_offset) &
		     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
			return false;
		ip->len = (uint16_t)ihl;
		*proto = ip4->next_proto_id;
		*ip_end = off + tot;
		*dst_off = (uint16_t)(off + offsetof(struct rte_ipv4_hdr, dst_addr));
		return true;
	}

	if (off + IPV6_HDR_LEN > hlim || (h[off] >> 4) != 6)
		return false;
	plen = rd16(h + off + offsetof(struct rte_ipv6_hdr, payload_len));
	if (plen == 0 || off + IPV6_HDR_LEN + plen > end)
		return false;
	*ip_end = off + IPV6_HDR_LEN + plen;
	*dst_off = (uint16_t)(off + offsetof(struct rte_ipv6_hdr, dst_addr));
	nh = h[off + offsetof(struct rte_ipv6_hdr, proto)];
	x = off + IPV6_HDR_LEN;
	while (nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS) {
		if (x + 8 > hlim)
			return false;
		elen = ((uint32_t)h[x + 1] + 1) * 8;
		if (x + elen > hlim || x + elen > *ip_end)
			return false;
		if (nh == IPPROTO_ROUTING && h[x + 3] != 0) {
			/* segments left: the pseudo-header names the last hop */
			if ((h[x + 2] == IPV6_RH_MIP6 && elen == 24) ||
			    (h[x + 2] == IPV6_RH_SRH && elen >= 24))
				*dst_off = (uint16_t)(x + 8);
			else
				return false;
		}
		nh = h[x];
		x += elen;
	}
	ip->len = (uint16_t)(x - off);
	*proto = nh;
	return true;
}

/*
 * Parse a frame esp_gso_tcp() can segment. Returns its first bytes (in the
 * mbuf, or copied to buf), or NULL if it is not such a frame.
 */
static const uint8_t *
gso_parse(const struct rte_mbuf *m, uint8_t buf[GSO_HDR_MAX], struct gso_pkt *g)
{
	uint32_t pkt_len = rte_pktmbuf_pkt_len(m);
	uint32_t l2 = m->l2_len;
	uint32_t hlim, end, off, ip_end, doff;
	const uint8_t *h;
	uint16_t et;
	uint8_t proto;
	bool v6;

	if (l2 < RTE_ETHER_HDR_LEN || l2 > pkt_len)
		return NULL;
	hlim = RTE_MIN(pkt_len, (uint32_t)GSO_HDR_MAX);
	h = rte_pktmbuf_read(m, 0, hlim, buf);
	if (h == NULL)
		return NULL;
	et = rd16(h + l2 - 2);
	if (et == RTE_ETHER_TYPE_IPV4)
		v6 = false;
	else if (et == RTE_ETHER_TYPE_IPV6)
		v6 = true;
	else
		return NULL;

	end = pkt_len; /* the IP length decides; Ethernet padding goes */
	off = l2;
	g->n_ip = 0;
	for (;;) {
		struct gso_ip *ip = &g->ip[g->n_ip];

		if (!parse_ip(h, hlim, off, end, v6, ip, &proto, &ip_end, &g->l4_dst_off))
			return NULL;
		/* an inner packet must fill its tunnel exactly: the segments
		 * rewrite both lengths from one size */
		if (g->n_ip > 0 && ip_end != end)
			return NULL;
		g->n_ip++;
		end = ip_end;
		off += ip->len;
		if (proto == IPPROTO_TCP)
			break;
		if (g->n_ip == GSO_IP_LEVELS || (proto != IPPROTO_IPIP && proto != IPPROTO_IPV6))
			return NULL;
		v6 = proto == IPPROTO_IPV6;
	}

	if (off + TCP_HDR_LEN > hlim)
		return NULL;
	doff = (uint32_t)(h[off + offsetof(struct rte_tcp_hdr, data_off)] >> 4) * 4;
	if (doff < TCP_HDR_LEN || off + doff > hlim || off + doff > end)
		return NULL;
	g->tcp_off = (uint16_t)off;
	g->tcp_len = (uint16_t)doff;
	g->hdr_len = (uint16_t)(off + doff);
	g->payload_len = end - g->hdr_len;
	return h;
}

/* Pseudo-header sum of the innermost IP header with an upper-layer length
 * of 0 (the length of each segment is added to it). */
static uint32_t
gso_phdr_sum(const uint8_t *h, const struct gso_pkt *g)
{
	const struct gso_ip *ip = &g->ip[g->n_ip - 1];

	if (!ip->v6) {
		struct rte_ipv4_hdr t;

		memset(&t, 0, sizeof(t));
		t.version_ihl = RTE_IPV4_VHL_DEF;
		t.total_length = rte_cpu_to_be_16(IPV4_HDR_LEN);
		t.next_proto_id = IPPROTO_TCP;
		memcpy(&t.src_addr, h + ip->off + offsetof(struct rte_ipv4_hdr, src_addr), 4);
		memcpy(&t.dst_addr, h + g->l4_dst_off, 4);
		return rte_ipv4_phdr_cksum(&t, 0);
	} else {
		/* rte_ipv6_phdr_cksum() takes the length from payload_len and
		 * the destination from the header: right only without
		 * extension headers, so give it a header that is */
		struct rte_ipv6_hdr t;

		memset(&t, 0, sizeof(t));
		t.proto = IPPROTO_TCP;
		memcpy(t.src_addr, h + ip->off + offsetof(struct rte_ipv6_hdr, src_addr), 16);
		memcpy(t.dst_addr, h + g->l4_dst_off, 16);
		return rte_ipv6_phdr_cksum(&t, 0);
	}
}

/* Position a walker at frame offset off. */
static inline void
walker_init(struct seg_walker *w, const struct rte_mbuf *m, uint32_t off)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	w->seg = m;
	w->off = off;
}

/*
 * Copy len bytes and return the sum of their 16-bit words in memory order,
 * unfolded (what __rte_raw_cksum() adds up). One pass: the sum is taken from
 * the registers the copy loaded. The sum_* forms only read (dst unused): the
 * checksum pass over payload the cipher then reads from where it is.
 */
typedef uint64_t (*copy_sum_fn)(uint8_t *dst, const uint8_t *src, uint32_t len);

/* A 32-bit word is hi * 2^16 + lo, and 2^16 = 1 modulo 0xffff: adding
 * whole 32-bit words adds their two 16-bit words. */
static inline uint64_t
copy_sum_tail(uint8_t *dst, const uint8_t *src, uint32_t len, const bool copy)
{
	uint64_t s = 0;
	uint32_t v32;
	uint16_t v16;

	for (; len >= 8; len -= 8, src += 8, dst += 8) {
		uint64_t v;

		memcpy(&v, src, 8);
		if (copy)
			memcpy(dst, &v, 8);
		s += (v & 0xffffffff) + (v >> 32);
	}
	if (len >= 4) {
		memcpy(&v32, src, 4);
		if (copy)
			memcpy(dst, &v32, 4);
		s += v32;
		src += 4;
		dst += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&v16, src, 2);
		if (copy)
			memcpy(dst, &v16, 2);
		s += v16;
		src += 2;
		dst += 2;
		len -= 2;
	}
	if (len != 0) {
		/* the odd byte is the first of its word, as __rte_raw_cksum() has it */
		v16 = 0;
		if (copy)
			*dst = *src;
		memcpy(&v16, src, 1);
		s += v16;
	}
	return s;
}

#ifndef RTE_ARCH_X86
static uint64_t
copy_sum_scalar(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	uint32_t head = len & ~31u;

	rte_memcpy(dst, src, head);
	return __rte_raw_cksum(dst, head, 0) +
	       copy_sum_tail(dst + head, src + head, len - head, true);
}

static uint64_t
sum_scalar(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	uint32_t head = len & ~31u;

	RTE_SET_USED(dst);
	return __rte_raw_cksum(src, head, 0) + copy_sum_tail(NULL, src + head, len - head, false);
}
#else
/*
 * Each 32-bit lane adds its low and its high word into two accumulators, at
 * most 0xffff each per step: a run is at most one segment (< 64 KB, 4096
 * steps), so no lane comes near 2^32. SSE2 is in every x86-64 CPU.
 */
static inline uint64_t
copy_sum_sse2_body(uint8_t *dst, const uint8_t *src, uint32_t len, const bool copy)
{
	const __m128i mask = _mm_set1_epi32(0xffff);
	__m128i lo = _mm_setzero_si128(), hi = _mm_setzero_si128();
	uint32_t i, l[4];

	for (i = 0; i + 16 <= len; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));

		if (copy)
			_mm_storeu_si128((__m128i *)(void *)(dst + i), v);
		lo = _mm_add_epi32(lo, _mm_and_si128(v, mask));
		hi = _mm_add_epi32(hi, _mm_srli_epi32(v, 16));
	}
	_mm_storeu_si128((__m128i *)(void *)l, _mm_add_epi32(lo, hi));
	return (uint64_t)l[0] + l[1] + l[2] + l[3] +
	       copy_sum_tail(copy ? dst + i : NULL, src + i, len - i, copy);
}

static uint64_t
copy_sum_sse2(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	return copy_sum_sse2_body(dst, src, len, true);
}

static uint64_t
sum_sse2(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	return copy_sum_sse2_body(dst, src, len, false);
}

/* The same 32 bytes a step, where the CPU and EAL allow AVX2. Tuned for
 * Haswell and later: generic tuning splits each unaligned 32-byte access in
 * two. The upper halves are cleared before SSE code runs again. Inlined into
 * its two wrappers, which have the same target. */
__attribute__((target("avx2,tune=haswell"))) static inline uint64_t
copy_sum_avx2_body(uint8_t *dst, const uint8_t *src, uint32_t len, const bool copy)
{
	const __m256i mask = _mm256_set1_epi32(0xffff);
	__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
	uint32_t i, l[4];
	__m128i t;

	for (i = 0; i + 32 <= len; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));

		if (copy)
			_mm256_storeu_si256((__m256i *)(void *)(dst + i), v);
		lo = _mm256_add_epi32(lo, _mm256_and_si256(v, mask));
		hi = _mm256_add_epi32(hi, _mm256_srli_epi32(v, 16));
	}
	lo = _mm256_add_epi32(lo, hi);
	t = _mm_add_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
	_mm_storeu_si128((__m128i *)(void *)l, t);
	_mm256_zeroupper();
	return (uint64_t)l[0] + l[1] + l[2] + l[3] +
	       copy_sum_tail(copy ? dst + i : NULL, src + i, len - i, copy);
}

__attribute__((target("avx2,tune=haswell"))) static uint64_t
copy_sum_avx2(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	return copy_sum_avx2_body(dst, src, len, true);
}

__attribute__((target("avx2,tune=haswell"))) static uint64_t
sum_avx2(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	return copy_sum_avx2_body(dst, src, len, false);
}
#endif

/* The copy-and-sum (copy true) or sum-only function for this CPU. */
static copy_sum_fn
copy_sum_select(bool copy)
{
#ifdef RTE_ARCH_X86
	if (__builtin_cpu_supports("avx2") && rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_256)
		return copy ? copy_sum_avx2 : sum_avx2;
	return copy ? copy_sum_sse2 : sum_sse2;
#else
	return copy ? copy_sum_scalar : sum_scalar;
#endif
}

static inline uint32_t
fold16(uint64_t s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint32_t)((s & 0xffff) + (s >> 16));
}

/*
 * Copy len bytes from the walker on, a run per input segment, and return
 * their folded sum in *sum. A run that starts at an odd offset of the copy
 * has its bytes in the other half of each word: its sum is byte-swapped
 * (RFC 1071 2(B)). False if the chain holds fewer bytes than its pkt_len
 * said.
 */
static inline bool
walker_copy_sum(struct seg_walker *w, uint8_t *dst, uint32_t len, copy_sum_fn fn, uint32_t *sum)
{
	const struct rte_mbuf *s = w->seg;
	uint32_t off = w->off, done = 0;
	uint64_t acc = 0;

	while (len > 0) {
		uint32_t n, part;

		if (s == NULL)
			return false;
		n = RTE_MIN((uint32_t)s->data_len - off, len);
		part = fold16(fn(dst + done, rte_pktmbuf_mtod_offset(s, const uint8_t *, off), n));
		if (done & 1)
			part = (uint32_t)rte_bswap16((uint16_t)part);
		acc += part;
		done += n;
		len -= n;
		off += n;
		if (off >= s->data_len) {
			s = s->next;
			off = 0;
		}
	}
	w->seg = s;
	w->off = off;
	*sum = fold16(acc);
	return true;
}

/*
 * Sum len bytes from the walker on without copying them, and note where they
 * are: gs->iov[1..gs->n] get the input pieces, their lengths and where their
 * ciphertext goes (from dst on). More pieces than ESP_GSO_PIECES: gs->n = 0
 * and the bytes are copied to dst instead, as walker_copy_sum() does. The sum
 * is walker_copy_sum()'s. False if the chain holds fewer bytes than its
 * pkt_len said.
 */
static inline bool
walker_sum_refs(struct seg_walker *w, uint8_t *dst, uint32_t len, copy_sum_fn sum,
		copy_sum_fn copy_sum, struct esp_gso_src *gs, uint32_t *out)
{
	const struct seg_walker start = *w;
	const struct rte_mbuf *s = w->seg;
	uint32_t off = w->off, done = 0, k = 0;
	uint64_t acc = 0;

	while (len > done) {
		const uint8_t *p;
		uint32_t n, part;

		if (s == NULL)
			return false;
		if (k == ESP_GSO_PIECES) {
			*w = start;
			gs->n = 0;
			return walker_copy_sum(w, dst, len, copy_sum, out);
		}
		n = RTE_MIN((uint32_t)s->data_len - off, len - done);
		p = rte_pktmbuf_mtod_offset(s, const uint8_t *, off);
		if (n != 0) {
			uint32_t x;

			/* the cipher writes these lines later: have them in
			 * cache by then, fetched while the sum waits for its
			 * loads (as the copy's stores used to) */
			for (x = 0; x < n + 63; x += 64)
				rte_prefetch0_write(dst + done + RTE_MIN(x, n - 1));
			part = fold16(sum(NULL, p, n));
			if (done & 1)
				part = (uint32_t)rte_bswap16((uint16_t)part);
			acc += part;
			k++;
			gs->iov[k].in = p;
			gs->iov[k].out = dst + done;
			gs->iov[k].len = n;
		}
		done += n;
		off += n;
		if (off >= s->data_len) {
			s = s->next;
			off = 0;
		}
	}
	w->seg = s;
	w->off = off;
	gs->n = (uint8_t)k;
	*out = fold16(acc);
	return true;
}

/* Copy len bytes from the walker on, a run per input segment. False if the
 * chain holds fewer bytes than its pkt_len said. */
static inline bool
walker_copy(struct seg_walker *w, uint8_t *dst, uint32_t len)
{
	const struct rte_mbuf *s = w->seg;
	uint32_t off = w->off;

	while (len > 0) {
		uint32_t n;

		if (s == NULL)
			return false;
		n = RTE_MIN((uint32_t)s->data_len - off, len);
		rte_memcpy(dst, rte_pktmbuf_mtod_offset(s, const uint8_t *, off), n);
		dst += n;
		len -= n;
		off += n;
		if (off >= s->data_len) {
			s = s->next;
			off = 0;
		}
	}
	w->seg = s;
	w->off = off;
	return true;
}

/*
 * Data offset for a frame of frame_len bytes in a buffer of room bytes: the
 * usual headroom if the ESP trailer still fits behind, at least
 * ESP_HEADROOM_NEED; 0 if even that does not fit.
 */
static inline uint16_t
frame_data_off(uint32_t room, uint32_t frame_len)
{
	uint32_t hr = RTE_MAX((uint32_t)RTE_PKTMBUF_HEADROOM, (uint32_t)ESP_HEADROOM_NEED);

	if ((uint32_t)ESP_HEADROOM_NEED + frame_len + ESP_TRAILER_MAX > room)
		return 0;
	return (uint16_t)RTE_MIN(hr, room - frame_len - ESP_TRAILER_MAX);
}

/* Packet metadata a frame made from m keeps; checksum and segmentation
 * offload requests are not among it (the frames are complete). */
static inline void
frame_meta(struct rte_mbuf *d, const struct rte_mbuf *m)
{
	d->port = m->port;
	d->vlan_tci = m->vlan_tci;
	d->vlan_tci_outer = m->vlan_tci_outer;
	d->packet_type = m->packet_type;
	d->ol_flags = m->ol_flags & FRAME_VLAN_FLAGS;
	d->tx_offload = 0;
	d->l2_len = m->l2_len;
	rte_mbuf_dynfield_copy(d, m);
}

/*
 * Per-packet parts of the checksums: each IPv4 header summed with its total
 * length, id and checksum zeroed, the TCP header with its sequence number,
 * flags and checksum zeroed plus the pseudo-header. A segment adds its own
 * values to these (RFC 1624) instead of summing its headers again.
 */
struct gso_sums {
	uint32_t ip4[GSO_IP_LEVELS];
	uint16_t id[GSO_IP_LEVELS];
	uint32_t tcp;
	uint32_t seq;
	uint8_t flags;
};

static void
gso_sums_init(const uint8_t *h, const struct gso_pkt *g, struct gso_sums *cs)
{
	uint8_t t[IPV4_HDR_MAX];
	unsigned int k;

	for (k = 0; k < g->n_ip; k++) {
		const struct gso_ip *ip = &g->ip[k];
		struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)t;

		if (ip->v6)
			continue;
		memcpy(t, h + ip->off, ip->len);
		cs->id[k] = rte_be_to_cpu_16(ip4->packet_id);
		ip4->total_length = 0;
		ip4->packet_id = 0;
		ip4->hdr_checksum = 0;
		cs->ip4[k] = __rte_raw_cksum(t, ip->len, 0);
	}

	/* TCP options are at most 40 bytes: the header fits t */
	memcpy(t, h + g->tcp_off, g->tcp_len);
	{
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)t;

		cs->seq = rte_be_to_cpu_32(th->sent_seq);
		cs->flags = th->tcp_flags;
		th->sent_seq = 0;
		th->tcp_flags = 0;
		th->cksum = 0;
	}
	cs->tcp = __rte_raw_cksum(t, g->tcp_len, gso_phdr_sum(h, g));
}

/* Rewrite the copied headers of segment i (payload len bytes, their folded
 * sum psum) at d. */
static inline void
gso_fix_hdrs(uint8_t *d, const struct gso_pkt *g, const struct gso_sums *cs, unsigned int i,
	     bool last, uint32_t len, uint32_t psum, uint32_t seq_off)
{
	uint32_t frame_len = g->hdr_len + len;
	uint32_t tcp_bytes = g->tcp_len + len;
	struct rte_tcp_hdr *th;
	unsigned int k;
	rte_be32_t seq;
	uint32_t sum;
	uint8_t flags;

	for (k = 0; k < g->n_ip; k++) {
		const struct gso_ip *ip = &g->ip[k];
		uint32_t ip_len = frame_len - ip->off;

		if (ip->v6) {
			struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(d + ip->off);

			ip6->payload_len = rte_cpu_to_be_16((uint16_t)(ip_len - IPV6_HDR_LEN));
		} else {
			struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)(d + ip->off);

			ip4->total_length = rte_cpu_to_be_16((uint16_t)ip_len);
			ip4->packet_id = rte_cpu_to_be_16((uint16_t)(cs->id[k] + i));
			sum = cs->ip4[k] + ip4->total_length + ip4->packet_id;
			ip4->hdr_checksum = (uint16_t)~__rte_raw_cksum_reduce(sum);
		}
	}

	th = (struct rte_tcp_hdr *)(d + g->tcp_off);
	seq = rte_cpu_to_be_32(cs->seq + seq_off);
	flags = cs->flags;
	if (i != 0)
		flags &= (uint8_t)~RTE_TCP_CWR_FLAG;
	if (!last)
		flags &= (uint8_t) ~(RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG);
	th->sent_seq = seq;
	th->tcp_flags = flags;
	/* the flags byte is the second of its word; the sum stays below 2^23 */
	sum = cs->tcp + (seq & 0xffff) + (seq >> 16) + rte_cpu_to_be_16(flags) +
	      rte_cpu_to_be_16((uint16_t)tcp_bytes) + psum;
	th->cksum = (uint16_t)~__rte_raw_cksum_reduce(sum);
}

bool
esp_gso_tcp_probe(const struct rte_mbuf *m, uint32_t *hdr_len, uint32_t *payload_len)
{
	uint8_t buf[GSO_HDR_MAX];
	struct gso_pkt g;

	if (gso_parse(m, buf, &g) == NULL)
		return false;
	*hdr_len = g.hdr_len;
	*payload_len = g.payload_len;
	return true;
}

/*
 * esp_gso_tcp() when src is NULL. Otherwise src[i] says where segment i's
 * payload is in m (the payload is summed, not copied; src[i].n = 0 when it was
 * copied after all), and the segments' payload bytes are left for the cipher
 * to write.
 */
static inline unsigned int
gso_tcp(const struct rte_mbuf *m, uint16_t mss, struct rte_mempool *pool, struct rte_mbuf *segs[],
	unsigned int max, enum egw_esp_drop *why, struct esp_gso_src *src)
{
	uint8_t buf[GSO_HDR_MAX];
	struct seg_walker w;
	struct gso_pkt g;
	const uint8_t *h;
	uint32_t left, nseg, seg_max;
	struct gso_sums cs;
	copy_sum_fn copy_sum, sum;
	uint16_t data_off;
	unsigned int i;

	h = gso_parse(m, buf, &g);
	if (h == NULL || mss == 0)
		goto bad;
	nseg = g.payload_len == 0 ? 1 : (g.payload_len + mss - 1) / mss;
	if (nseg > max)
		goto bad;
	seg_max = RTE_MIN(g.payload_len, (uint32_t)mss);
	data_off = frame_data_off(rte_pktmbuf_data_room_size(pool), g.hdr_len + seg_max);
	if (data_off == 0)
		goto bad;
	/* the pool's mbufs are cold: taken raw (a pool's mbuf has refcnt 1, no
	 * next, one segment) and reset one by one in the loop below, each a
	 * few segments after its lines were prefetched, where
	 * rte_pktmbuf_alloc_bulk() would wait for each in turn */
	if (rte_mempool_get_bulk(pool, (void **)segs, nseg) != 0) {
		*why = EGW_ESP_DROP_NOMEM;
		return 0;
	}
	for (i = 0; i < nseg && i < GSO_MBUF_AHEAD; i++) {
		rte_prefetch0_write(segs[i]);
		rte_prefetch0_write(&segs[i]->cacheline1);
	}

	gso_sums_init(h, &g, &cs);
	copy_sum = copy_sum_select(true);
	sum = copy_sum_select(false);
	walker_init(&w, m, g.hdr_len);
	left = g.payload_len;
	for (i = 0; i < nseg; i++) {
		struct rte_mbuf *s = segs[i];
		uint32_t len = RTE_MIN(left, (uint32_t)mss);
		uint8_t *d;
		uint32_t psum;
		bool ok;

		if (i + GSO_MBUF_AHEAD < nseg) {
			rte_prefetch0_write(segs[i + GSO_MBUF_AHEAD]);
			rte_prefetch0_write(&segs[i + GSO_MBUF_AHEAD]->cacheline1);
		}
		rte_pktmbuf_reset(s);
		s->data_off = data_off;
		d = rte_pktmbuf_mtod(s, uint8_t *);
		/* ESP writes in front (its header, a tunnel header) and behind
		 * (the trailer) soon: fetch those lines now, not then */
		rte_prefetch0_write(d - ESP_HEADROOM_NEED);
		rte_prefetch0_write(d + g.hdr_len + len + ESP_TRAILER_MAX - 1);
		rte_memcpy(d, h, g.hdr_len);
		if (src != NULL)
			ok = walker_sum_refs(&w, d + g.hdr_len, len, sum, copy_sum, &src[i], &psum);
		else
			ok = walker_copy_sum(&w, d + g.hdr_len, len, copy_sum, &psum);
		if (!ok) {
			if (src != NULL)
				for (i = 0; i < nseg; i++)
					src[i].n = 0;
			rte_pktmbuf_free_bulk(segs, nseg);
			goto bad;
		}
		gso_fix_hdrs(d, &g, &cs, i, i == nseg - 1, len, psum, i * (uint32_t)mss);
		s->data_len = (uint16_t)(g.hdr_len + len);
		s->pkt_len = s->data_len;
		frame_meta(s, m);
		left -= len;
	}
	return nseg;

bad:
	*why = EGW_ESP_DROP_BAD_INNER;
	return 0;
}

unsigned int
esp_gso_tcp(const struct rte_mbuf *m, uint16_t mss, struct rte_mempool *pool,
	    struct rte_mbuf *segs[], unsigned int max, enum egw_esp_drop *why)
{
	return gso_tcp(m, mss, pool, segs, max, why, NULL);
}

/*
 * Out of place only when asked (c->gso_oop), and never for ChaCha20-Poly1305.
 * Measured with IPsec-MB 1.3 (AVX-512/VAES, 1404 bytes): an AES-GCM SGL job
 * with 3 pieces costs about 80 cycles more than the same job in place, 4
 * pieces (a segment across two chain mbufs) about 125 more, and the cipher
 * then writes lines the copy would have brought in; in bench_esp the copy
 * (with its lines prefetched) is faster both in cache and beyond L2. A
 * ChaCha20-Poly1305 SGL job leaves the multi-buffer code: about 700 more.
 */
unsigned int
esp_gso_out(struct egw_esp_ctx *c, const struct egw_esp_sa *sa, struct rte_mbuf *m, uint16_t mss,
	    struct rte_mbuf *segs[], unsigned int slot, enum egw_esp_drop *why)
{
	unsigned int k, i;
	bool keep = false;

	if (!c->gso_oop || sa->aead == EGW_ESP_CHACHA20_POLY1305) {
		k = gso_tcp(m, mss, c->pool, segs, EGW_ESP_MAX_SEGS, why, NULL);
		if (k != 0)
			rte_pktmbuf_free(m);
		return k;
	}
	k = gso_tcp(m, mss, c->pool, segs, EGW_ESP_MAX_SEGS, why, &c->gso[slot]);
	if (k == 0)
		return 0;
	for (i = 0; i < k; i++)
		keep |= c->gso[slot + i].n != 0;
	if (keep)
		c->gso_keep[c->n_gso_keep++] = m;
	else
		rte_pktmbuf_free(m);
	return k;
}

bool
esp_gso_job(struct egw_esp_ctx *c, IMB_JOB *job, unsigned int slot)
{
	struct esp_gso_src *gs = &c->gso[slot];
	unsigned int n = gs->n;
	uintptr_t enc = (uintptr_t)job->dst, enc_end = enc + job->msg_len_to_cipher_in_bytes;
	uintptr_t first = (uintptr_t)gs->iov[1].out;
	uintptr_t end = (uintptr_t)gs->iov[n].out + gs->iov[n].len;

	/* the pieces must aim inside this job's bytes, with the clear headers
	 * in front and the trailer behind (the segment was not replaced) */
	if (first <= enc || end >= enc_end)
		return false;
	gs->iov[0].in = job->dst;
	gs->iov[0].out = job->dst;
	gs->iov[0].len = first - enc;
	gs->iov[n + 1].in = (const void *)end;
	gs->iov[n + 1].out = (void *)end;
	gs->iov[n + 1].len = enc_end - end;
	job->sgl_io_segs = gs->iov;
	job->num_sgl_io_segs = n + 2;
	job->sgl_state = IMB_SGL_ALL;
	job->cipher_mode = IMB_CIPHER_GCM_SGL;
	job->hash_alg = IMB_AUTH_GCM_SGL;
	job->u.GCM.ctx = &c->gso_gcm[slot];
	return true;
}

void
esp_gso_run_done(struct egw_esp_ctx *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		c->gso[i].n = 0;
	if (c->n_gso_keep != 0) {
		rte_pktmbuf_free_bulk(c->gso_keep, c->n_gso_keep);
		c->n_gso_keep = 0;
	}
}

/* ---- IPv4 fragmentation --------------------------------------------- */

/*
 * Indirect mbufs covering frame bytes [off, off + len) of m, chained; NULL
 * if the pool runs dry or the chain is shorter than it says.
 */
static struct rte_mbuf *
clone_range(struct rte_mbuf *m, uint32_t off, uint32_t len, struct rte_mempool *ipool,
	    uint16_t *nsegs)
{
	struct rte_mbuf *seg = m, *head = NULL, *tail = NULL;
	uint16_t n = 0;

	while (seg != NULL && off >= seg->data_len) {
		off -= seg->data_len;
		seg = seg->next;
	}
	while (len > 0) {
		struct rte_mbuf *mi;
		uint32_t k;

		if (seg == NULL)
			goto fail;
		k = RTE_MIN((uint32_t)seg->data_len - off, len);
		if (k == 0) {
			seg = seg->next;
			continue;
		}
		mi = rte_pktmbuf_alloc(ipool);
		if (mi == NULL)
			goto fail;
		rte_pktmbuf_attach(mi, seg);
		mi->data_off = (uint16_t)(seg->data_off + off);
		mi->data_len = (uint16_t)k;
		mi->pkt_len = k;
		if (head == NULL)
			head = mi;
		else
			tail->next = mi;
		tail = mi;
		n++;
		len -= k;
		off = 0;
		seg = seg->next;
	}
	*nsegs = n;
	return head;

fail:
	rte_pktmbuf_free(head);
	return NULL;
}

/*
 * Turn fragment f (rte_ipv4_fragment_packet(): a direct mbuf holding the IP
 * header, then indirect mbufs with the data) into one contiguous frame in
 * f's own buffer: L2 header l2, IP header with its checksum, data.
 */
static void
frag_to_frame(struct rte_mbuf *f, const struct rte_mbuf *m, const uint8_t *l2, uint32_t l2_len,
	      uint32_t room)
{
	uint8_t iph[IPV4_HDR_MAX];
	uint32_t hl = f->data_len, frame_len = l2_len + f->pkt_len;
	struct rte_mbuf *data = f->next, *s;
	struct rte_ipv4_hdr *ip4;
	uint8_t *d;

	memcpy(iph, rte_pktmbuf_mtod(f, const uint8_t *), hl);
	f->next = NULL;
	f->nb_segs = 1;
	f->data_off = frame_data_off(room, frame_len);
	d = rte_pktmbuf_mtod(f, uint8_t *);
	memcpy(d, l2, l2_len);
	memcpy(d + l2_len, iph, hl);
	ip4 = (struct rte_ipv4_hdr *)(d + l2_len);
	ip4->hdr_checksum = 0;
	ip4->hdr_checksum = rte_ipv4_cksum(ip4);
	d += l2_len + hl;
	for (s = data; s != NULL; s = s->next) {
		rte_memcpy(d, rte_pktmbuf_mtod(s, const uint8_t *), s->data_len);
		d += s->data_len;
	}
	rte_pktmbuf_free(data);
	f->data_len = (uint16_t)frame_len;
	f->pkt_len = frame_len;
	frame_meta(f, m);
}

unsigned int
esp_frag_ipv4(const struct egw_esp_ctx *c, struct rte_mbuf *m, uint16_t ip_mtu,
	      struct rte_mbuf *frags[], unsigned int max, enum egw_esp_drop *why)
{
	uint8_t buf[GSO_L2_MAX + IPV4_HDR_MAX];
	uint32_t pkt_len = rte_pktmbuf_pkt_len(m), l2 = m->l2_len;
	uint32_t ihl, tot, room;
	const struct rte_ipv4_hdr *ip4;
	struct rte_mbuf *head;
	const uint8_t *h;
	uint16_t nsegs;
	int32_t n;
	unsigned int i;

	if (l2 < RTE_ETHER_HDR_LEN || l2 > pkt_len || max == 0)
		goto bad;
	h = rte_pktmbuf_read(m, 0, RTE_MIN(pkt_len, l2 + IPV4_HDR_MAX), buf);
	if (h == NULL)
		goto bad;
	if (rd16(h + l2 - 2) != RTE_ETHER_TYPE_IPV4) {
		*why = EGW_ESP_DROP_TOO_BIG;
		return 0;
	}
	if (l2 + IPV4_HDR_LEN > pkt_len)
		goto bad;
	ip4 = (const struct rte_ipv4_hdr *)(h + l2);
	ihl = rte_ipv4_hdr_len(ip4);
	tot = rte_be_to_cpu_16(ip4->total_length);
	if ((ip4->version_ihl >> 4) != 4 || ihl < IPV4_HDR_LEN || tot < ihl || l2 + tot > pkt_len)
		goto bad;
	if ((rte_be_to_cpu_16(ip4->fragment_offset) & RTE_IPV4_HDR_DF_FLAG) != 0) {
		*why = EGW_ESP_DROP_TOO_BIG;
		return 0;
	}
	room = rte_pktmbuf_data_room_size(c->pool);
	if (ip_mtu < RTE_ETHER_MIN_MTU || frame_data_off(room, l2 + RTE_MIN(tot, ip_mtu)) == 0)
		goto bad;

	if (tot <= ip_mtu) {
		/* fits already: one copy, padding trimmed */
		struct seg_walker w;
		struct rte_mbuf *f = rte_pktmbuf_alloc(c->pool);

		if (f == NULL)
			goto nomem;
		f->data_off = frame_data_off(room, l2 + tot);
		walker_init(&w, m, 0);
		if (!walker_copy(&w, rte_pktmbuf_mtod(f, uint8_t *), l2 + tot)) {
			rte_pktmbuf_free(f);
			goto bad;
		}
		f->data_len = (uint16_t)(l2 + tot);
		f->pkt_len = l2 + tot;
		frame_meta(f, m);
		frags[0] = f;
		return 1;
	}
	if (c->indirect_pool == NULL)
		goto nomem;

	/* rte_ipv4_fragment_packet() wants the IP header contiguous at the
	 * data start and the packet to end where IP says: a header mbuf,
	 * then indirect mbufs over m's data without L2 and padding */
	head = rte_pktmbuf_alloc(c->pool);
	if (head == NULL)
		goto nomem;
	memcpy(rte_pktmbuf_mtod(head, uint8_t *), ip4, ihl);
	head->data_len = (uint16_t)ihl;
	head->next = clone_range(m, l2 + ihl, tot - ihl, c->indirect_pool, &nsegs);
	if (head->next == NULL) {
		rte_pktmbuf_free(head);
		goto nomem;
	}
	head->nb_segs = (uint16_t)(1 + nsegs);
	head->pkt_len = tot;

	n = rte_ipv4_fragment_packet(head, frags, (uint16_t)RTE_MIN(max, (unsigned int)UINT16_MAX),
				     ip_mtu, c->pool, c->indirect_pool);
	if (n <= 0) {
		rte_pktmbuf_free(head);
		*why = n == -ENOMEM ? EGW_ESP_DROP_NOMEM : EGW_ESP_DROP_BAD_INNER;
		return 0;
	}
	for (i = 0; i < (unsigned int)n; i++)
		frag_to_frame(frags[i], m, h, l2, room);
	rte_pktmbuf_free(head);
	return (unsigned int)n;

nomem:
	*why = EGW_ESP_DROP_NOMEM;
	return 0;
bad:
	*why = EGW_ESP_DROP_BAD_INNER;
	return 0;
}

/* ---- ICMP too-big ----------------------------------------------------- */

/* May an IPv4 packet from s to d get an ICMP error (RFC 1122 3.2.2, RFC 1812
 * 4.3.2.7)? Not from "this network", loopback, multicast, reserved or
 * broadcast sources, nor for multicast or broadcast destinations. */
static bool
icmp4_addr_ok(uint32_t s, uint32_t d)
{
	uint8_t s0 = (uint8_t)(s >> 24), d0 = (uint8_t)(d >> 24);

	return s0 != 0 && s0 != 127 && s0 < 224 && d0 < 224;
}

static bool
ipv6_unspecified(const uint8_t *a)
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

/*
 * Is the IPv6 packet whose headers h holds (hlim bytes, IP header at off) a
 * first or only fragment and not an ICMPv6 error? Unknown (truncated or
 * over-long header chain) counts as no.
 */
static bool
icmp6_may_answer(const uint8_t *h, uint32_t hlim, uint32_t off)
{
	uint32_t x = off + IPV6_HDR_LEN;
	uint8_t nh = h[off + offsetof(struct rte_ipv6_hdr, proto)];

	for (;;) {
		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if (x + 2 > hlim)
				return false;
			nh = h[x];
			x += ((uint32_t)h[x + 1] + 1) * 8;
			break;
		case IPPROTO_AH:
			if (x + 2 > hlim)
				return false;
			nh = h[x];
			x += ((uint32_t)h[x + 1] + 2) * 4;
			break;
		case IPPROTO_FRAGMENT:
			if (x + 8 > hlim || (rd16(h + x + 2) & 0xfff8) != 0)
				return false;
			nh = h[x];
			x += 8;
			break;
		case IPPROTO_ICMPV6: return x < hlim && h[x] >= ICMP6_INFO_MIN;
		default: return true;
		}
	}
}

/* Copy len bytes of m from offset off to dst. */
static inline void
mbuf_copy_out(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *dst)
{
	const void *p = rte_pktmbuf_read(m, off, len, dst);

	if (p != dst)
		memcpy(dst, p, len);
}

struct rte_mbuf *
esp_icmp_too_big(const struct rte_mbuf *m, uint16_t mtu, const uint8_t *src,
		 struct rte_mempool *pool)
{
	uint8_t buf[GSO_HDR_MAX];
	uint32_t pkt_len = rte_pktmbuf_pkt_len(m), l2 = m->l2_len;
	uint32_t hlim, ip_len, quote, frame_len;
	struct rte_mbuf *r;
	const uint8_t *h;
	uint8_t *d, *icmp;
	uint16_t et, ck;

	if (l2 < RTE_ETHER_HDR_LEN || l2 > pkt_len)
		return NULL;
	hlim = RTE_MIN(pkt_len, (uint32_t)GSO_HDR_MAX);
	h = rte_pktmbuf_read(m, 0, hlim, buf);
	if (h == NULL)
		return NULL;
	et = rd16(h + l2 - 2);

	if (et == RTE_ETHER_TYPE_IPV4) {
		const struct rte_ipv4_hdr *o;
		struct rte_ipv4_hdr *ip4;
		uint32_t ihl;

		if (l2 + IPV4_HDR_LEN > hlim)
			return NULL;
		o = (const struct rte_ipv4_hdr *)(h + l2);
		ihl = rte_ipv4_hdr_len(o);
		ip_len = rte_be_to_cpu_16(o->total_length);
		if ((o->version_ihl >> 4) != 4 || ihl < IPV4_HDR_LEN || ip_len < ihl ||
		    (rte_be_to_cpu_16(o->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK) != 0 ||
		    !icmp4_addr_ok(rte_be_to_cpu_32(o->src_addr), rte_be_to_cpu_32(o->dst_addr)))
			return NULL;
		if (o->next_proto_id == IPPROTO_ICMP) {
			uint8_t t;

			if (l2 + ihl >= hlim)
				return NULL;
			t = h[l2 + ihl];
			if (t == 3 || t == 4 || t == 5 || t == 11 || t == 12)
				return NULL;
		}
		quote = RTE_MIN(RTE_MIN(ip_len, pkt_len - l2),
				ICMP4_MAX_IP - IPV4_HDR_LEN - ICMP_HDR_LEN);
		frame_len = l2 + IPV4_HDR_LEN + ICMP_HDR_LEN + quote;
		r = rte_pktmbuf_alloc(pool);
		if (r == NULL)
			return NULL;
		d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)frame_len);
		if (d == NULL) {
			rte_pktmbuf_free(r);
			return NULL;
		}
		ip4 = (struct rte_ipv4_hdr *)(d + l2);
		memset(ip4, 0, IPV4_HDR_LEN + ICMP_HDR_LEN);
		ip4->version_ihl = RTE_IPV4_VHL_DEF;
		ip4->total_length = rte_cpu_to_be_16((uint16_t)(frame_len - l2));
		/* DF clear so a path below 576 still gets it; the id only
		 * needs to differ between nearby messages */
		ip4->packet_id = rte_cpu_to_be_16((uint16_t)rte_rdtsc());
		ip4->time_to_live = ICMP_TTL;
		ip4->next_proto_id = IPPROTO_ICMP;
		if (src != NULL)
			memcpy(&ip4->src_addr, src, 4);
		else
			ip4->src_addr = o->dst_addr;
		ip4->dst_addr = o->src_addr;
		ip4->hdr_checksum = rte_ipv4_cksum(ip4);
		icmp = d + l2 + IPV4_HDR_LEN;
		icmp[0] = ICMP4_DEST_UNREACH;
		icmp[1] = ICMP4_FRAG_NEEDED;
		icmp[6] = (uint8_t)(mtu >> 8); /* RFC 1191 next-hop MTU */
		icmp[7] = (uint8_t)mtu;
		mbuf_copy_out(m, l2, quote, icmp + ICMP_HDR_LEN);
		ck = (uint16_t)~rte_raw_cksum(icmp, ICMP_HDR_LEN + quote);
		memcpy(icmp + 2, &ck, 2);
	} else if (et == RTE_ETHER_TYPE_IPV6) {
		const struct rte_ipv6_hdr *o;
		struct rte_ipv6_hdr *ip6;
		rte_be32_t mtu_be;

		if (l2 + IPV6_HDR_LEN > hlim)
			return NULL;
		o = (const struct rte_ipv6_hdr *)(h + l2);
		if ((h[l2] >> 4) != 6 || o->src_addr[0] == 0xff || ipv6_unspecified(o->src_addr) ||
		    (src == NULL && o->dst_addr[0] == 0xff) || !icmp6_may_answer(h, hlim, l2))
			return NULL;
		/* payload length 0 is a jumbogram: the frame decides */
		ip_len = IPV6_HDR_LEN + rte_be_to_cpu_16(o->payload_len);
		if (o->payload_len == 0)
			ip_len = pkt_len - l2;
		quote = RTE_MIN(RTE_MIN(ip_len, pkt_len - l2),
				ICMP6_MAX_IP - IPV6_HDR_LEN - ICMP_HDR_LEN);
		frame_len = l2 + IPV6_HDR_LEN + ICMP_HDR_LEN + quote;
		r = rte_pktmbuf_alloc(pool);
		if (r == NULL)
			return NULL;
		d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)frame_len);
		if (d == NULL) {
			rte_pktmbuf_free(r);
			return NULL;
		}
		ip6 = (struct rte_ipv6_hdr *)(d + l2);
		memset(ip6, 0, IPV6_HDR_LEN + ICMP_HDR_LEN);
		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)(ICMP_HDR_LEN + quote));
		ip6->proto = IPPROTO_ICMPV6;
		ip6->hop_limits = ICMP_TTL;
		memcpy(ip6->src_addr, src != NULL ? src : o->dst_addr, 16);
		memcpy(ip6->dst_addr, o->src_addr, 16);
		icmp = d + l2 + IPV6_HDR_LEN;
		icmp[0] = ICMP6_PACKET_TOO_BIG;
		mtu_be = rte_cpu_to_be_32(mtu);
		memcpy(icmp + 4, &mtu_be, 4);
		mbuf_copy_out(m, l2, quote, icmp + ICMP_HDR_LEN);
		ck = rte_ipv6_udptcp_cksum(ip6, icmp);
		memcpy(icmp + 2, &ck, 2);
	} else {
		return NULL;
	}

	/* L2 header back to the sender: MACs swapped, tags kept */
	memcpy(d, h + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
	memcpy(d + RTE_ETHER_ADDR_LEN, h, RTE_ETHER_ADDR_LEN);
	memcpy(d + 2 * RTE_ETHER_ADDR_LEN, h + 2 * RTE_ETHER_ADDR_LEN, l2 - 2 * RTE_ETHER_ADDR_LEN);
	frame_meta(r, m);
	return r;
}
