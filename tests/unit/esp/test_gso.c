/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of lib/esp/gso.c: TCP segmentation, IPv4 fragmentation and
 * ICMP too-big messages.
 *
 * Frames are built in C from their layers (Ethernet with 0-2 tags, IPv4
 * with options / IPv6 with hop-by-hop, destination-options and segment
 * routing headers, one optional ipip/ip6tnl level, TCP with options, random
 * payload, Ethernet padding) and given to the code as one mbuf or as chains
 * of every-so-many bytes (2 KB as net_pcap makes them, 7 bytes, a first
 * segment that ends inside the headers).
 *
 * Every segment is checked on its own, against the layout the test built
 * and not against anything gso.c computes: single mbuf, ESP headroom and
 * tailroom, L2 bytes, every IP header (length, id + i, DF and the other
 * bytes unchanged, IPv4 checksum verifying with rte_ipv4_cksum() == 0), TCP
 * sequence numbers contiguous from the original, flags (CWR first only,
 * FIN/PSH last only), TCP checksum verified twice (rte_ipv{4,6}_udptcp_cksum_
 * verify() and a byte-by-byte RFC 1071 sum with the RFC 8200 8.1
 * pseudo-header: upper-layer length and final destination), the payload
 * reassembled byte for byte. The good cases run twice where the CPU has
 * AVX2: once through its copy-and-sum loop, once through the SSE2 one.
 *
 * Hostile inputs (lengths above the frame, IHL < 5, TCP data offset out of
 * range, truncation at every header offset, not TCP, fragments, two tunnel
 * levels, too many segments, empty pool, too small buffers) must give 0
 * segments with the right reason and leave every pool as full as before.
 *
 * Fragmentation: offsets, MF, lengths, copied options, reassembled bytes,
 * DF -> esp_too_big. ICMP: every field, both checksums, the 576/1280 quoting
 * limits, no message for ICMP errors, later fragments, multicast and
 * unspecified sources. Last, 30000 frames with random header damage through
 * all four functions: results consistent, nothing leaked (under ASan, a
 * small fuzzer of the parsers).
 */
#define ALLOW_EXPERIMENTAL_API /* rte_ipv{4,6}_udptcp_cksum_verify() */

#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>
#include <rte_vect.h>

#include "esp_private.h"
#include "../app/check.h"

#define FRAME_MAX (65535 + 512)
#define SEG_POOL_N 8191
#define BIG_ROOM 65535 /* largest mbuf data room */
#define BIG_FRAME (BIG_ROOM - RTE_PKTMBUF_HEADROOM)
#define MAX_SEGS EGW_ESP_MAX_SEGS

/* IPv6 extension headers a case puts in an IPv6 header. */
#define EXT_HOP 0x01 /* hop-by-hop, 8 bytes */
#define EXT_DST 0x02 /* destination options, 8 bytes */
#define EXT_SRH 0x04 /* segment routing, segments left 1: final destination differs */

#define OFFLOAD_FLAGS                                                               \
	(RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM | \
	 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_OUTER_IP_CKSUM | RTE_MBUF_F_TX_OUTER_IPV4)
#define VLAN_FLAGS (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_TX_VLAN)

static const uint8_t mac_a[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x0a};
static const uint8_t mac_b[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x0b};
static const uint8_t v4_out_src[4] = {198, 51, 100, 1};
static const uint8_t v4_out_dst[4] = {198, 51, 100, 2};
static const uint8_t v4_in_src[4] = {10, 1, 0, 1};
static const uint8_t v4_in_dst[4] = {10, 2, 0, 2};
static const uint8_t v6_out_src[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t v6_out_dst[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
static const uint8_t v6_in_src[16] = {0xfd, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t v6_in_dst[16] = {0xfd, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2};
/* segment routing: Segment List[0], the destination TCP's checksum names */
static const uint8_t v6_final[16] = {0xfd, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9};

static struct rte_mempool *seg_pool;   /* 2 KB frames: inputs and segments */
static struct rte_mempool *big_pool;   /* one-mbuf 64 KB inputs */
static struct rte_mempool *ind_pool;   /* indirect mbufs for fragmentation */
static struct rte_mempool *ind_small;  /* too few of them */
static struct rte_mempool *small_pool; /* too few mbufs */
static struct rte_mempool *short_pool; /* too small data room */

static uint8_t frame[FRAME_MAX];
static uint8_t work[FRAME_MAX];

/* ---- byte helpers and an independent checksum ------------------------------ */

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

/* Store the checksum of len bytes at p in field (zero while summing). */
static void
put_cksum(uint8_t *field, const uint8_t *p, uint32_t len)
{
	uint16_t ck;

	memset(field, 0, 2);
	ck = (uint16_t)~rte_raw_cksum(p, len);
	memcpy(field, &ck, 2);
}

/* RFC 1071, one byte pair at a time, big-endian. */
static uint64_t
ref_sum(const uint8_t *p, uint32_t len, uint64_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
ref_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Does the upper-layer checksum of l4 (len bytes, protocol proto) verify
 * with this pseudo-header (RFC 793 / RFC 8200 8.1)? */
static bool
ref_l4_ok(bool v6, const uint8_t *src, const uint8_t *dst, uint8_t proto, const uint8_t *l4,
	  uint32_t len)
{
	unsigned int alen = v6 ? 16 : 4;
	uint64_t sum = 0;

	sum = ref_sum(src, alen, sum);
	sum = ref_sum(dst, alen, sum);
	sum += proto;
	sum += len; /* < 65536 here: one word, the upper one 0 */
	sum = ref_sum(l4, len, sum);
	return ref_fold(sum) == 0xffff;
}

static uint32_t rng_state;

static uint8_t
rnd8(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (uint8_t)(rng_state >> 16);
}

/* ---- mbufs ------------------------------------------------------------------ */

/*
 * An mbuf (chain) with the len bytes of f: one mbuf when chain is 0, else
 * mbufs of chain bytes each, the first of first bytes if first is not 0.
 */
static struct rte_mbuf *
make_mbuf(struct rte_mempool *mp, const uint8_t *f, uint32_t len, uint16_t l2, uint32_t chain,
	  uint32_t first)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t off = 0;

	do {
		uint32_t n = chain == 0 ? len : (off == 0 && first != 0 ? first : chain);
		struct rte_mbuf *m;
		char *p;

		n = RTE_MIN(n, len - off);
		m = rte_pktmbuf_alloc(mp);
		if (m == NULL)
			goto fail;
		p = rte_pktmbuf_append(m, (uint16_t)n);
		if (p == NULL || (n > UINT16_MAX)) {
			rte_pktmbuf_free(m);
			goto fail;
		}
		memcpy(p, f + off, n);
		if (head == NULL) {
			head = m;
		} else {
			tail->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		tail = m;
		off += n;
	} while (off < len);
	head->l2_len = l2;
	return head;

fail:
	rte_pktmbuf_free(head);
	return NULL;
}

static void
free_all(struct rte_mbuf *m[], unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
}

/* Are all the mbufs of every pool back? */
struct pool_counts {
	unsigned int c[6];
};

static void
pool_counts(struct pool_counts *pc)
{
	pc->c[0] = rte_mempool_avail_count(seg_pool);
	pc->c[1] = rte_mempool_avail_count(big_pool);
	pc->c[2] = rte_mempool_avail_count(ind_pool);
	pc->c[3] = rte_mempool_avail_count(small_pool);
	pc->c[4] = rte_mempool_avail_count(short_pool);
	pc->c[5] = rte_mempool_avail_count(ind_small);
}

static bool
pools_same(const struct pool_counts *a)
{
	struct pool_counts b;

	pool_counts(&b);
	return memcmp(a, &b, sizeof(b)) == 0;
}

/* ---- TCP frames --------------------------------------------------------------- */

struct gso_case {
	const char *label;
	uint8_t n_vlan;  /* tags in the frame: 0, 1 (C-tag), 2 (S-tag, C-tag) */
	uint8_t ipv[2];  /* IP versions, outer first; ipv[1] 0: no tunnel */
	uint8_t ext6[2]; /* EXT_* of each IPv6 header */
	uint8_t ip4_opt; /* option bytes of every IPv4 header (multiple of 4) */
	uint8_t tcp_opt; /* TCP option bytes (multiple of 4) */
	uint8_t flags;   /* TCP flags of the super-packet */
	bool df;         /* DF on every IPv4 header */
	uint32_t payload;
	uint16_t mss;
	uint16_t pad;   /* Ethernet padding after the IP packet */
	uint32_t chain; /* bytes per input mbuf; 0: one mbuf */
	uint32_t first; /* bytes in the first mbuf of a chain; 0: chain */
};

/* Where the builder put things. */
struct layout {
	uint16_t l2;
	uint8_t n_ip;
	uint16_t ip_off[2];
	uint16_t ip_hlen[2]; /* with options / extension headers */
	uint8_t ip_v6[2];
	uint16_t l4_dst_off; /* the destination address the TCP pseudo-header uses */
	uint16_t tcp_off;
	uint16_t tcp_len;
	uint16_t hdr_len;
	uint32_t ip_end; /* end of the IP packet = start of the padding */
	uint32_t frame_len;
};

#define F_ACK RTE_TCP_ACK_FLAG
#define F_PSH RTE_TCP_PSH_FLAG
#define F_FIN RTE_TCP_FIN_FLAG
#define F_CWR RTE_TCP_CWR_FLAG
#define F_ECE RTE_TCP_ECE_FLAG
#define F_ALL (F_ACK | F_PSH | F_FIN | F_CWR | F_ECE)

/* Build frame f for tc; returns its length. IP checksums and the TCP
 * checksum are left wrong on purpose: esp_gso_tcp() must not use them. */
static uint32_t
build_tcp(const struct gso_case *tc, uint8_t *f, struct layout *lo)
{
	unsigned int k, n_ip = tc->ipv[1] != 0 ? 2 : 1;
	uint32_t off, i;

	memset(lo, 0, sizeof(*lo));
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	off = 12;
	for (k = 0; k < tc->n_vlan; k++) {
		wr16(f + off, k == 0 && tc->n_vlan == 2 ? 0x88a8 : 0x8100);
		wr16(f + off + 2, (uint16_t)(100 + k));
		off += 4;
	}
	wr16(f + off, tc->ipv[0] == 4 ? 0x0800 : 0x86dd);
	off += 2;
	lo->l2 = (uint16_t)off;
	lo->n_ip = (uint8_t)n_ip;

	for (k = 0; k < n_ip; k++) {
		bool inner = k + 1 == n_ip;
		uint8_t next = inner ? IPPROTO_TCP : (tc->ipv[k + 1] == 4 ? IPPROTO_IPIP : 41);

		lo->ip_off[k] = (uint16_t)off;
		lo->ip_v6[k] = tc->ipv[k] == 6;
		if (tc->ipv[k] == 4) {
			uint32_t hl = 20 + tc->ip4_opt;

			f[off] = (uint8_t)(0x40 | hl / 4);
			f[off + 1] = 0x28;
			wr16(f + off + 4, (uint16_t)(0xfff0 + 0x100 * k)); /* wraps */
			wr16(f + off + 6, tc->df ? 0x4000 : 0);
			f[off + 8] = 61;
			f[off + 9] = next;
			wr16(f + off + 10, 0xbeef);
			memcpy(f + off + 12, inner ? v4_in_src : v4_out_src, 4);
			memcpy(f + off + 16, inner ? v4_in_dst : v4_out_dst, 4);
			for (i = 20; i < hl; i += 4) { /* router alert options */
				f[off + i] = 0x94;
				f[off + i + 1] = 4;
				f[off + i + 2] = 0;
				f[off + i + 3] = 0;
			}
			if (inner)
				lo->l4_dst_off = (uint16_t)(off + 16);
			off += hl;
		} else {
			uint8_t *nhp = f + off + 6;
			uint8_t ext = tc->ext6[k];

			wr32(f + off, 0x60000000u | (inner ? 0x2a12345u : 0x0abcdeu));
			f[off + 7] = 60;
			memcpy(f + off + 8, inner ? v6_in_src : v6_out_src, 16);
			memcpy(f + off + 24, inner ? v6_in_dst : v6_out_dst, 16);
			if (inner)
				lo->l4_dst_off = (uint16_t)(off + 24);
			off += 40;
			if (ext & EXT_HOP) {
				*nhp = IPPROTO_HOPOPTS;
				nhp = f + off;
				memcpy(f + off, "\x00\x00\x01\x04\x00\x00\x00\x00", 8); /* PadN */
				off += 8;
			}
			if (ext & EXT_DST) {
				*nhp = IPPROTO_DSTOPTS;
				nhp = f + off;
				/* tunnel encapsulation limit 4 (RFC 2473), PadN */
				memcpy(f + off, "\x00\x00\x04\x01\x04\x01\x01\x00", 8);
				off += 8;
			}
			if (ext & EXT_SRH) {
				*nhp = IPPROTO_ROUTING;
				nhp = f + off;
				memset(f + off, 0, 40);
				f[off + 1] = 4; /* 40 bytes */
				f[off + 2] = 4; /* SRH */
				f[off + 3] = 1; /* segments left */
				f[off + 4] = 1; /* last entry */
				memcpy(f + off + 8, v6_final, 16);
				memcpy(f + off + 24, inner ? v6_in_dst : v6_out_dst, 16);
				if (inner)
					lo->l4_dst_off = (uint16_t)(off + 8);
				off += 40;
			}
			*nhp = next;
		}
		lo->ip_hlen[k] = (uint16_t)(off - lo->ip_off[k]);
	}

	lo->tcp_off = (uint16_t)off;
	lo->tcp_len = (uint16_t)(20 + tc->tcp_opt);
	wr16(f + off, 40000);
	wr16(f + off + 2, 5001);
	wr32(f + off + 4, 0xfffff000u); /* wraps */
	wr32(f + off + 8, 0x01020304u);
	f[off + 12] = (uint8_t)(lo->tcp_len / 4 << 4);
	f[off + 13] = tc->flags;
	wr16(f + off + 14, 0xfff0);
	wr16(f + off + 16, 0xdead);
	wr16(f + off + 18, 0);
	for (i = 20; i < lo->tcp_len; i++)
		f[off + i] = i + 4 <= lo->tcp_len ? 1 : 0; /* NOPs, EOL */
	off += lo->tcp_len;
	lo->hdr_len = (uint16_t)off;
	rng_state = tc->payload * 31u + tc->mss;
	for (i = 0; i < tc->payload; i++)
		f[off + i] = rnd8();
	off += tc->payload;
	lo->ip_end = off;
	for (k = 0; k < n_ip; k++) {
		uint32_t ip_len = off - lo->ip_off[k];

		if (lo->ip_v6[k])
			wr16(f + lo->ip_off[k] + 4, (uint16_t)(ip_len - 40));
		else
			wr16(f + lo->ip_off[k] + 2, (uint16_t)ip_len);
	}
	memset(f + off, 0xa5, tc->pad);
	lo->frame_len = off + tc->pad;
	return lo->frame_len;
}

/* ---- segment checks ------------------------------------------------------------ */

static unsigned int
expect_nseg(uint32_t payload, uint16_t mss)
{
	return payload == 0 ? 1 : (payload + mss - 1) / mss;
}

static bool
tcp_cksum_ok(const uint8_t *d, const struct layout *lo, const uint8_t *orig, uint32_t tcp_bytes)
{
	const uint8_t *ip = d + lo->ip_off[lo->n_ip - 1];
	const uint8_t *th = d + lo->tcp_off;

	if (!lo->ip_v6[lo->n_ip - 1]) {
		if (rte_ipv4_udptcp_cksum_verify((const struct rte_ipv4_hdr *)ip, th) != 0)
			return false;
		return ref_l4_ok(false, ip + 12, ip + 16, IPPROTO_TCP, th, tcp_bytes);
	} else {
		/* the DPDK helper knows no extension headers: give it the
		 * RFC 8200 8.1 pseudo-header as a plain IPv6 header */
		struct rte_ipv6_hdr t;

		memcpy(&t, ip, sizeof(t));
		t.payload_len = rte_cpu_to_be_16((uint16_t)tcp_bytes);
		t.proto = IPPROTO_TCP;
		memcpy(t.dst_addr, orig + lo->l4_dst_off, 16);
		if (rte_ipv6_udptcp_cksum_verify(&t, th) != 0)
			return false;
		return ref_l4_ok(true, ip + 8, orig + lo->l4_dst_off, IPPROTO_TCP, th, tcp_bytes);
	}
}

static void
check_segs(const char *label, const struct gso_case *tc, const uint8_t *f, const struct layout *lo,
	   const struct rte_mbuf *in, struct rte_mbuf *segs[], unsigned int n)
{
	unsigned int i, k, want = expect_nseg(tc->payload, tc->mss);
	const uint8_t *oth = f + lo->tcp_off;
	uint32_t done = 0;
	int bad = 0;

	CHECK(n == want, "%s: %u segments, want %u", label, n, want);
	for (i = 0; i < n && i < want && bad < 5; i++) {
		const struct rte_mbuf *s = segs[i];
		const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);
		uint32_t len = RTE_MIN((uint32_t)tc->mss, tc->payload - done);
		const uint8_t *th = d + lo->tcp_off;
		bool last = i == n - 1;
		uint8_t flags = oth[13];
		int f0 = failures;

		CHECK(s->nb_segs == 1 && s->next == NULL, "%s seg %u: %u mbufs", label, i,
		      s->nb_segs);
		CHECK(s->data_len == lo->hdr_len + len && s->pkt_len == s->data_len,
		      "%s seg %u: data_len %u pkt_len %u, want %u", label, i, s->data_len,
		      s->pkt_len, lo->hdr_len + len);
		CHECK(rte_pktmbuf_headroom(s) >= ESP_HEADROOM_NEED, "%s seg %u: headroom %u", label,
		      i, rte_pktmbuf_headroom(s));
		CHECK(rte_pktmbuf_tailroom(s) >= ESP_TRAILER_MAX, "%s seg %u: tailroom %u", label,
		      i, rte_pktmbuf_tailroom(s));
		CHECK(s->l2_len == lo->l2, "%s seg %u: l2_len %u", label, i, s->l2_len);
		CHECK(s->ol_flags == (in->ol_flags & VLAN_FLAGS) && s->vlan_tci == in->vlan_tci,
		      "%s seg %u: ol_flags %#" PRIx64 " vlan_tci %u", label, i, s->ol_flags,
		      s->vlan_tci);
		CHECK(memcmp(d, f, lo->l2) == 0, "%s seg %u: L2 header differs", label, i);

		for (k = 0; k < lo->n_ip; k++) {
			const uint8_t *o = f + lo->ip_off[k], *p = d + lo->ip_off[k];
			uint32_t ip_len = s->data_len - lo->ip_off[k];

			if (!lo->ip_v6[k]) {
				uint32_t hl = (o[0] & 15u) * 4;

				CHECK(rd16(p + 2) == ip_len,
				      "%s seg %u ip%u: total length %u, want %u", label, i, k,
				      rd16(p + 2), ip_len);
				CHECK(rd16(p + 4) == (uint16_t)(rd16(o + 4) + i),
				      "%s seg %u ip%u: id %#x, want %#x", label, i, k, rd16(p + 4),
				      (uint16_t)(rd16(o + 4) + i));
				CHECK(rd16(p + 6) == rd16(o + 6),
				      "%s seg %u ip%u: flags/offset %#x", label, i, k, rd16(p + 6));
				CHECK(memcmp(p, o, 2) == 0 && memcmp(p + 8, o + 8, 2) == 0 &&
					      memcmp(p + 12, o + 12, hl - 12) == 0,
				      "%s seg %u ip%u: header bytes changed", label, i, k);
				CHECK(rte_ipv4_cksum((const struct rte_ipv4_hdr *)p) == 0,
				      "%s seg %u ip%u: IPv4 checksum does not verify", label, i, k);
			} else {
				CHECK(rd16(p + 4) == ip_len - 40,
				      "%s seg %u ip%u: payload length %u, want %u", label, i, k,
				      rd16(p + 4), ip_len - 40);
				CHECK(memcmp(p, o, 4) == 0 &&
					      memcmp(p + 6, o + 6, lo->ip_hlen[k] - 6u) == 0,
				      "%s seg %u ip%u: header bytes changed", label, i, k);
			}
		}

		CHECK(rd32(th + 4) == rd32(oth + 4) + done, "%s seg %u: seq %#x, want %#x", label,
		      i, rd32(th + 4), rd32(oth + 4) + done);
		if (i != 0)
			flags &= (uint8_t)~F_CWR;
		if (!last)
			flags &= (uint8_t) ~(F_FIN | F_PSH);
		CHECK(th[13] == flags, "%s seg %u: flags %#x, want %#x", label, i, th[13], flags);
		CHECK(memcmp(th, oth, 4) == 0 && memcmp(th + 8, oth + 8, 5) == 0 &&
			      memcmp(th + 14, oth + 14, 2) == 0 &&
			      memcmp(th + 18, oth + 18, lo->tcp_len - 18u) == 0,
		      "%s seg %u: TCP header bytes changed", label, i);
		CHECK(tcp_cksum_ok(d, lo, f, lo->tcp_len + len), "%s seg %u: TCP checksum bad",
		      label, i);
		CHECK(memcmp(d + lo->hdr_len, f + lo->hdr_len + done, len) == 0,
		      "%s seg %u: payload differs", label, i);
		done += len;
		if (failures != f0)
			bad++;
	}
	CHECK(bad != 0 || done == tc->payload, "%s: %u payload bytes out, want %u", label, done,
	      tc->payload);
}

static const struct gso_case tcp_cases[] = {
	{"ipv4", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 14600, 1460, 0, 0, 0},
	{"ipv4 options, TCP options, DF, VLAN",
	 1,
	 {4, 0},
	 {0, 0},
	 8,
	 12,
	 F_ACK | F_PSH,
	 true,
	 5000,
	 1400,
	 0,
	 0,
	 0},
	{"ipv4 64K chain 2K", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, true, 65495, 1400, 0, 2048, 0},
	{"ipv4 64K one mbuf", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, true, 65000, 1400, 0, 0, 0},
	{"ipv4 QinQ chain 7", 2, {4, 0}, {0, 0}, 4, 0, F_ALL, false, 3000, 500, 0, 7, 0},
	{"ipv4 odd mss", 0, {4, 0}, {0, 0}, 0, 12, F_ALL, false, 5000, 999, 0, 0, 0},
	{"ipv4 mss 1", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 10, 1, 0, 0, 0},
	{"ipv4 payload < mss", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 100, 1400, 0, 0, 0},
	{"ipv4 payload = mss", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 1400, 1400, 0, 0, 0},
	{"ipv4 payload = 2 mss", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 2800, 1400, 0, 0, 0},
	{"ipv4 no payload", 0, {4, 0}, {0, 0}, 0, 0, F_ACK | F_FIN, false, 0, 1400, 0, 0, 0},
	{"ipv4 padded small", 0, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 6, 1400, 4, 0, 0},
	{"ipv4 padded", 1, {4, 0}, {0, 0}, 0, 0, F_ALL, false, 3000, 1400, 17, 1000, 0},
	{"ipv6 hop+dst",
	 0,
	 {6, 0},
	 {EXT_HOP | EXT_DST, 0},
	 0,
	 12,
	 F_ALL,
	 false,
	 8000,
	 1220,
	 0,
	 0,
	 0},
	{"ipv6 hop+srh QinQ",
	 2,
	 {6, 0},
	 {EXT_HOP | EXT_SRH, 0},
	 0,
	 0,
	 F_ALL,
	 false,
	 4000,
	 1000,
	 0,
	 0,
	 0},
	{"ipv6 64K chain 2K",
	 0,
	 {6, 0},
	 {EXT_HOP, 0},
	 0,
	 0,
	 F_ALL,
	 false,
	 65507,
	 1400,
	 0,
	 2048,
	 100},
	{"ipv6 padded", 0, {6, 0}, {0, 0}, 0, 0, F_ALL, false, 2000, 1400, 10, 0, 0},
	{"ipip", 0, {4, 4}, {0, 0}, 0, 12, F_ALL, true, 20000, 1400, 0, 0, 0},
	{"ipip options VLAN", 1, {4, 4}, {0, 0}, 4, 0, F_ALL, false, 7000, 1300, 0, 0, 0},
	{"ipip 64K chain 1500 first 37",
	 0,
	 {4, 4},
	 {0, 0},
	 0,
	 0,
	 F_ALL,
	 true,
	 65475,
	 1400,
	 0,
	 1500,
	 37},
	{"ipip padded", 0, {4, 4}, {0, 0}, 0, 0, F_ALL, false, 1000, 400, 9, 0, 0},
	{"ipip6 (v4 in v6) VLAN", 1, {6, 4}, {EXT_DST, 0}, 0, 0, F_ALL, true, 10000, 1300, 0, 0, 0},
	{"ipip6 64K chain 2K", 0, {6, 4}, {0, 0}, 0, 0, F_ALL, true, 65475, 1400, 0, 2048, 0},
	{"ip6tnl", 0, {6, 6}, {EXT_DST, EXT_HOP}, 0, 12, F_ALL, false, 30000, 1400, 0, 0, 0},
	{"ip6tnl 64K chain 2K", 0, {6, 6}, {0, 0}, 0, 0, F_ALL, false, 65475, 1400, 0, 2048, 0},
	{"ip6tnl outer SRH", 0, {6, 6}, {EXT_SRH, 0}, 0, 0, F_ALL, false, 3000, 1000, 0, 0, 0},
	{"ip6tnl inner SRH QinQ chain 5",
	 2,
	 {6, 6},
	 {0, EXT_SRH},
	 0,
	 0,
	 F_ALL,
	 false,
	 3000,
	 1000,
	 0,
	 5,
	 0},
	{"sit (v6 in v4)", 0, {4, 6}, {0, EXT_HOP}, 0, 0, F_ALL, true, 9000, 1400, 0, 0, 0},
	{"sit 64K one mbuf", 0, {4, 6}, {0, 0}, 0, 0, F_ALL, true, 65000, 1400, 0, 0, 0},
};

static void
check_input_intact(const char *label, const struct rte_mbuf *m, const uint8_t *f, uint32_t len)
{
	const struct rte_mbuf *s;
	const void *p;
	bool ref1 = true;

	for (s = m; s != NULL; s = s->next)
		ref1 = ref1 && rte_mbuf_refcnt_read(s) == 1 && !RTE_MBUF_CLONED(s);
	p = rte_pktmbuf_read(m, 0, len, work);
	CHECK(ref1 && m->pkt_len == len && p != NULL && memcmp(p, f, len) == 0,
	      "%s: input changed or still referenced", label);
}

static void
test_tcp_good(const char *pass)
{
	struct rte_mbuf *segs[MAX_SEGS];
	char label[96];
	unsigned int t;

	for (t = 0; t < RTE_DIM(tcp_cases); t++) {
		const struct gso_case *tc = &tcp_cases[t];
		struct rte_mempool *mp = tc->chain == 0 && tc->payload > 1800 ? big_pool : seg_pool;
		enum egw_esp_drop why = EGW_ESP_DROP_MAX;
		struct pool_counts pc;
		struct layout lo;
		struct rte_mbuf *m;
		uint32_t len, hdr_len = 0, payload_len = 0;
		unsigned int n;

		snprintf(label, sizeof(label), "%s%s", tc->label, pass);
		len = build_tcp(tc, frame, &lo);
		m = make_mbuf(mp, frame, len, lo.l2, tc->chain, tc->first);
		if (m == NULL) {
			CHECK(false, "%s: cannot build the input", tc->label);
			continue;
		}
		m->ol_flags = OFFLOAD_FLAGS;
		if (tc->n_vlan == 1) {
			m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
			m->vlan_tci = 0x123;
		}
		m->l3_len = 99; /* must not be trusted */
		m->l4_len = 3;
		m->tso_segsz = 7;

		CHECK(esp_gso_tcp_probe(m, &hdr_len, &payload_len), "%s: probe refused", tc->label);
		CHECK(hdr_len == lo.hdr_len && payload_len == tc->payload,
		      "%s: probe hdr %u payload %u, want %u %u", tc->label, hdr_len, payload_len,
		      lo.hdr_len, tc->payload);

		pool_counts(&pc);
		n = esp_gso_tcp(m, tc->mss, seg_pool, segs, MAX_SEGS, &why);
		check_segs(label, tc, frame, &lo, m, segs, n);
		free_all(segs, n);
		CHECK(pools_same(&pc), "%s: mbufs leaked", label);
		check_input_intact(label, m, frame, len);
		rte_pktmbuf_free(m);
	}
}

/* ---- hostile TCP inputs ---------------------------------------------------------- */

/* Give f (len bytes) to the segmenter as one mbuf and as 3-byte and 5-byte
 * chains: 0 segments with reason why, the probe's answer as probe_ok, and
 * every mbuf back. */
static void
expect_refused(const char *label, const uint8_t *f, uint32_t len, uint16_t l2, uint16_t mss,
	       unsigned int max, struct rte_mempool *out_pool, enum egw_esp_drop want,
	       bool probe_ok)
{
	static const uint32_t chains[] = {0, 3, 5};
	struct rte_mbuf *segs[MAX_SEGS];
	unsigned int c;

	for (c = 0; c < RTE_DIM(chains); c++) {
		/* a frame no mbuf holds whole goes as a 2 KB chain */
		uint32_t chain = chains[c] == 0 && len > BIG_FRAME ? 2048 : chains[c];
		struct rte_mempool *mp = chain == 0 && len > 1800 ? big_pool : seg_pool;
		enum egw_esp_drop why = EGW_ESP_DROP_MAX;
		uint32_t hl = 0, pl = 0;
		struct pool_counts pc;
		struct rte_mbuf *m;
		unsigned int n;

		if (chains[c] != 0 && len / chains[c] > 2000)
			continue;
		m = make_mbuf(mp, f, len, l2, chain, 0);
		if (m == NULL) {
			CHECK(false, "%s: cannot build the input", label);
			continue;
		}
		pool_counts(&pc);
		n = esp_gso_tcp(m, mss, out_pool, segs, max, &why);
		CHECK(n == 0 && why == want, "%s (chain %u): %u segments, reason %s, want 0 %s",
		      label, chains[c], n, n == 0 ? egw_esp_drop_name(why) : "-",
		      egw_esp_drop_name(want));
		if (n != 0)
			free_all(segs, n);
		CHECK(pools_same(&pc), "%s (chain %u): mbufs leaked", label, chains[c]);
		CHECK(esp_gso_tcp_probe(m, &hl, &pl) == probe_ok, "%s (chain %u): probe says %s",
		      label, chains[c], probe_ok ? "no" : "yes");
		rte_pktmbuf_free(m);
	}
}

static void
expect_bad(const char *label, const uint8_t *f, uint32_t len, uint16_t l2)
{
	expect_refused(label, f, len, l2, 1400, MAX_SEGS, seg_pool, EGW_ESP_DROP_BAD_INNER, false);
}

/* Set the IP length fields of f that lie inside its first len bytes to
 * what len allows (the truncated packet then claims no more than it has). */
static void
fit_lengths(uint8_t *f, uint32_t len, const struct layout *lo)
{
	unsigned int k;

	for (k = 0; k < lo->n_ip; k++) {
		uint32_t o = lo->ip_off[k];

		if (len < o + 6u || len < o)
			continue;
		if (lo->ip_v6[k])
			wr16(f + o + 4, (uint16_t)(len >= o + 40 ? len - o - 40 : 0));
		else
			wr16(f + o + 2, (uint16_t)(len - o));
	}
}

static void
test_tcp_truncated(void)
{
	static const unsigned int bases[] = {1, 14, 18, 21, 23, 26};
	struct rte_mbuf *segs[MAX_SEGS];
	unsigned int b;
	char label[96];

	for (b = 0; b < RTE_DIM(bases); b++) {
		const struct gso_case *tc = &tcp_cases[bases[b]];
		struct layout lo;
		uint32_t cut;

		build_tcp(tc, frame, &lo);
		for (cut = 0; cut < lo.hdr_len; cut++) {
			snprintf(label, sizeof(label), "%s cut at %u", tc->label, cut);
			expect_bad(label, frame, cut, lo.l2);
			memcpy(work, frame, cut);
			fit_lengths(work, cut, &lo);
			snprintf(label, sizeof(label), "%s cut at %u, lengths fitted", tc->label,
				 cut);
			expect_bad(label, work, cut, lo.l2);
		}
		/* cut right after the headers, lengths fitted: a valid packet
		 * without payload, one segment */
		memcpy(work, frame, lo.hdr_len);
		fit_lengths(work, lo.hdr_len, &lo);
		{
			struct gso_case t0 = *tc;
			enum egw_esp_drop why;
			struct rte_mbuf *m = make_mbuf(seg_pool, work, lo.hdr_len, lo.l2, 3, 0);
			unsigned int n;

			t0.payload = 0;
			t0.pad = 0;
			snprintf(label, sizeof(label), "%s cut after the headers", tc->label);
			n = esp_gso_tcp(m, 1400, seg_pool, segs, MAX_SEGS, &why);
			check_segs(label, &t0, work, &lo, m, segs, n);
			free_all(segs, n);
			rte_pktmbuf_free(m);
		}
	}
}

static void
test_tcp_hostile(void)
{
	struct layout lo;
	uint32_t len;
	uint8_t *ip, *th;

	/* plain IPv4 */
	len = build_tcp(&tcp_cases[0], frame, &lo);
	ip = work + lo.ip_off[0];
	th = work + lo.tcp_off;

#define MUTATE(label, stmt)                          \
	do {                                         \
		memcpy(work, frame, len);            \
		stmt;                                \
		expect_bad(label, work, len, lo.l2); \
	} while (0)

	MUTATE("ipv4 total length 1 above the frame", wr16(ip + 2, (uint16_t)(rd16(ip + 2) + 1)));
	MUTATE("ipv4 total length 0xffff", wr16(ip + 2, 0xffff));
	MUTATE("ipv4 total length < IHL", wr16(ip + 2, 19));
	MUTATE("ipv4 total length ends in the TCP header", wr16(ip + 2, 30));
	MUTATE("ipv4 IHL 4", ip[0] = 0x44);
	MUTATE("ipv4 IHL 0", ip[0] = 0x40);
	MUTATE("ipv4 version 6 under ethertype IPv4", ip[0] = 0x65);
	MUTATE("ipv4 MF", ip[6] = 0x20);
	MUTATE("ipv4 fragment offset", ip[7] = 1);
	MUTATE("ipv4 UDP", ip[9] = IPPROTO_UDP);
	MUTATE("ipv4 ICMP", ip[9] = IPPROTO_ICMP);
	MUTATE("ipv4 ESP", ip[9] = IPPROTO_ESP);
	MUTATE("ipv4 ipip without inner header", ip[9] = IPPROTO_IPIP);
	MUTATE("TCP data offset 4", th[12] = 0x40);
	MUTATE("TCP data offset 0", th[12] = 0x00);
	MUTATE("ARP ethertype", wr16(work + 12, 0x0806));
	MUTATE("unknown ethertype", wr16(work + 12, 0x88b5));
	expect_bad("l2_len 13", frame, len, 13);
	expect_bad("l2_len 0", frame, len, 0);
	expect_bad("l2_len 18 (no tag there)", frame, len, 18);
	expect_bad("frame shorter than l2_len", frame, 10, 14);

	/* TCP data offset 15 (60 bytes) on a packet with 10 payload bytes */
	{
		struct gso_case t = tcp_cases[0];

		t.payload = 10;
		len = build_tcp(&t, frame, &lo);
		th = work + lo.tcp_off;
		ip = work + lo.ip_off[0];
		MUTATE("TCP data offset past the end", th[12] = 0xf0);
		MUTATE("ipv4 IHL 15 past the end", ip[0] = 0x4f);
		len = build_tcp(&tcp_cases[0], frame, &lo);
	}

	/* IPv6 with extension headers */
	len = build_tcp(&tcp_cases[13], frame, &lo);
	ip = work + lo.ip_off[0];
	MUTATE("ipv6 payload length 1 above the frame", wr16(ip + 4, (uint16_t)(rd16(ip + 4) + 1)));
	MUTATE("ipv6 payload length 0 (jumbo)", wr16(ip + 4, 0));
	MUTATE("ipv6 payload length ends in the extension headers", wr16(ip + 4, 12));
	MUTATE("ipv6 version 4 under ethertype IPv6", ip[0] = 0x40);
	MUTATE("ipv6 hop-by-hop length past the end", ip[41] = 0xff);
	MUTATE("ipv6 fragment header", ip[48] = IPPROTO_FRAGMENT);
	MUTATE("ipv6 UDP after the options", ip[48] = IPPROTO_UDP);
	MUTATE("ipv6 no next header", ip[48] = 59);
	len = build_tcp(&tcp_cases[14], frame, &lo); /* hop + SRH */
	ip = work + lo.ip_off[0];
	MUTATE("ipv6 routing type 0 with segments left", ip[50] = 0);
	MUTATE("ipv6 routing type 3 with segments left", ip[50] = 3);
	MUTATE("ipv6 routing type 2 of 40 bytes", ip[50] = 2);
	/* extension headers longer than the parser reads (a documented limit) */
	{
		struct gso_case t = tcp_cases[16];

		len = build_tcp(&t, frame, &lo);
		memcpy(work, frame, lo.l2 + 40);
		work[lo.l2 + 6] = IPPROTO_DSTOPTS;
		memset(work + lo.l2 + 40, 0, 512);
		work[lo.l2 + 40] = IPPROTO_TCP;
		work[lo.l2 + 41] = 63; /* 512 bytes: two PadN of 255 */
		work[lo.l2 + 42] = 1;
		work[lo.l2 + 43] = 253;
		work[lo.l2 + 42 + 255] = 1;
		work[lo.l2 + 43 + 255] = 253;
		memcpy(work + lo.l2 + 40 + 512, frame + lo.l2 + 40, len - lo.l2 - 40);
		wr16(work + lo.l2 + 4, (uint16_t)(rd16(frame + lo.l2 + 4) + 512));
		expect_bad("ipv6 512-byte destination options", work, len + 512, lo.l2);
	}

	/* ipip */
	len = build_tcp(&tcp_cases[17], frame, &lo);
	ip = work + lo.ip_off[0];
	MUTATE("ipip outer length 1 above the frame", wr16(ip + 2, (uint16_t)(rd16(ip + 2) + 1)));
	MUTATE("ipip inner length 1 above the outer", wr16(ip + 22, (uint16_t)(rd16(ip + 22) + 1)));
	MUTATE("ipip inner length 1 short of the outer",
	       wr16(ip + 22, (uint16_t)(rd16(ip + 22) - 1)));
	MUTATE("ipip inner IHL 4", ip[20] = 0x44);
	MUTATE("ipip inner version 6 with protocol 4", ip[20] = 0x65);
	MUTATE("ipip inner UDP", ip[29] = IPPROTO_UDP);
	MUTATE("ipip in ipip", ip[29] = IPPROTO_IPIP);
	MUTATE("ipip inner fragment", ip[26] = 0x20);
	MUTATE("ipip outer fragment", ip[6] = 0x20);
	MUTATE("ipip outer protocol 41 over an IPv4 inner", ip[9] = 41);

	/* ip6tnl */
	len = build_tcp(&tcp_cases[23], frame, &lo);
	ip = work + lo.ip_off[0];
	MUTATE("ip6tnl outer length 1 above the frame", wr16(ip + 4, (uint16_t)(rd16(ip + 4) + 1)));
	MUTATE("ip6tnl inner length 1 above the outer",
	       wr16(ip + 48 + 4, (uint16_t)(rd16(ip + 48 + 4) + 1)));
	MUTATE("ip6tnl inner length 1 short of the outer",
	       wr16(ip + 48 + 4, (uint16_t)(rd16(ip + 48 + 4) - 1)));
	MUTATE("ip6tnl inner version 4 with next header 41", ip[48] = 0x45);
	MUTATE("ip6tnl in ip6tnl", ip[48 + 40] = 41);
	MUTATE("ip6tnl inner UDP", ip[48 + 40] = IPPROTO_UDP);
	MUTATE("ip6tnl outer next header 4 over an IPv6 inner", ip[40] = IPPROTO_IPIP);
#undef MUTATE

	/* not segmentable for reasons other than parsing: the probe agrees
	 * it is TCP */
	len = build_tcp(&tcp_cases[2], frame, &lo);
	expect_refused("64K, mss 1000: 66 segments > 64", frame, len, lo.l2, 1000, MAX_SEGS,
		       seg_pool, EGW_ESP_DROP_BAD_INNER, true);
	expect_refused("mss 0", frame, len, lo.l2, 0, MAX_SEGS, seg_pool, EGW_ESP_DROP_BAD_INNER,
		       true);
	len = build_tcp(&tcp_cases[0], frame, &lo);
	expect_refused("10 segments, room for 9", frame, len, lo.l2, 1460, 9, seg_pool,
		       EGW_ESP_DROP_BAD_INNER, true);
	expect_refused("max 0", frame, len, lo.l2, 1460, 0, seg_pool, EGW_ESP_DROP_BAD_INNER, true);
	expect_refused("data room too small for the mss", frame, len, lo.l2, 1460, MAX_SEGS,
		       short_pool, EGW_ESP_DROP_BAD_INNER, true);
	expect_refused("pool runs dry", frame, len, lo.l2, 1000, MAX_SEGS, small_pool,
		       EGW_ESP_DROP_NOMEM, true);
	{
		struct rte_mbuf *segs[MAX_SEGS];
		enum egw_esp_drop why;
		struct rte_mbuf *m = make_mbuf(big_pool, frame, len, lo.l2, 0, 0);
		unsigned int n;

		/* exactly as many as needed: the count is not off by one */
		n = esp_gso_tcp(m, 1460, seg_pool, segs, 10, &why);
		CHECK(n == 10, "10 segments, room for 10: %u", n);
		free_all(segs, n);
		/* a smaller mss fits the small buffers, with the ESP room */
		n = esp_gso_tcp(m, 1000, short_pool, segs, MAX_SEGS, &why);
		CHECK(n == 15, "short pool, mss 1000: %u segments", n);
		for (unsigned int i = 0; i < n; i++)
			CHECK(rte_pktmbuf_headroom(segs[i]) >= ESP_HEADROOM_NEED &&
				      rte_pktmbuf_tailroom(segs[i]) >= ESP_TRAILER_MAX,
			      "short pool seg %u: headroom %u tailroom %u", i,
			      rte_pktmbuf_headroom(segs[i]), rte_pktmbuf_tailroom(segs[i]));
		free_all(segs, n);
		rte_pktmbuf_free(m);
	}
}

/* ---- IPv4 fragmentation ------------------------------------------------------------ */

struct frag_case {
	const char *label;
	uint8_t n_vlan;
	bool opts;       /* record route (not copied), NOP, router alert (copied) */
	uint16_t ip_len; /* IPv4 total length */
	uint16_t mtu;
	uint16_t pad;
	uint32_t chain;
	uint32_t first;
	uint16_t frag_in; /* fragment offset field of the input (MF, offset) */
};

/* Options of the first fragment and what RFC 791 copies into the others. */
static const uint8_t opts_all[12] = {0x07, 0x07, 0x04, 0, 0, 0, 0, 0x01, 0x94, 0x04, 0, 0};
static const uint8_t opts_copied[4] = {0x94, 0x04, 0, 0};

static uint32_t
build_udp4(const struct frag_case *fc, uint8_t *f, uint16_t *l2, uint16_t *ihl)
{
	uint32_t off, i, hl = fc->opts ? 32 : 20;
	uint8_t *ip;

	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	off = 12;
	for (i = 0; i < fc->n_vlan; i++) {
		wr16(f + off, 0x8100);
		wr16(f + off + 2, (uint16_t)(200 + i));
		off += 4;
	}
	wr16(f + off, 0x0800);
	off += 2;
	*l2 = (uint16_t)off;
	*ihl = (uint16_t)hl;
	ip = f + off;
	memset(ip, 0, hl);
	ip[0] = (uint8_t)(0x40 | hl / 4);
	wr16(ip + 2, fc->ip_len);
	wr16(ip + 4, 0x4321);
	wr16(ip + 6, fc->frag_in);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, v4_in_src, 4);
	memcpy(ip + 16, v4_in_dst, 4);
	if (fc->opts)
		memcpy(ip + 20, opts_all, sizeof(opts_all));
	put_cksum(ip + 10, ip, hl);
	rng_state = fc->ip_len * 7u + fc->mtu;
	for (i = hl; i < fc->ip_len; i++)
		ip[i] = rnd8();
	memset(ip + fc->ip_len, 0x5a, fc->pad);
	return off + fc->ip_len + fc->pad;
}

static const struct frag_case frag_cases[] = {
	{"1500 -> 576", 0, false, 1500, 576, 0, 0, 0, 0},
	{"1500 -> 1280 VLAN chain 200", 1, false, 1500, 1280, 0, 200, 0, 0},
	{"4000 options -> 1000 chain first 30", 0, true, 4000, 1000, 0, 2048, 30, 0},
	{"1500 -> 68", 0, false, 1500, 68, 0, 0, 0, 0},
	{"1500 options -> 68", 2, true, 1500, 68, 0, 0, 0, 0},
	{"fragment of a fragment", 0, false, 3000, 1000, 0, 0, 0, 0x2000 | 100},
	{"last fragment refragmented", 0, false, 3000, 1000, 0, 0, 0, 200},
	{"padded", 0, false, 1000, 576, 30, 0, 0, 0},
	{"fits: one copy, padding trimmed", 1, false, 500, 576, 20, 0, 0, 0},
	{"64K chain 2K -> 1400", 0, false, 65535, 1400, 0, 2048, 0, 0},
};

static struct egw_esp_ctx fctx;

static void
check_frags(const struct frag_case *fc, const uint8_t *f, uint16_t l2, uint16_t ihl,
	    const struct rte_mbuf *in, struct rte_mbuf *fr[], unsigned int n)
{
	static uint8_t got[65536];
	static uint8_t seen[65536];
	const uint8_t *oip = f + l2;
	uint32_t l2u = l2;
	uint32_t data_len = fc->ip_len - ihl, covered = 0, base = (fc->frag_in & 0x1fffu) * 8u;
	bool orig_mf = (fc->frag_in & 0x2000) != 0;
	unsigned int i,
		want_min = (data_len + ((fc->mtu - ihl) & ~7u) - 1) / ((fc->mtu - ihl) & ~7u);

	if (fc->ip_len <= fc->mtu)
		want_min = 1;
	CHECK(n >= want_min && n <= MAX_SEGS, "%s: %u fragments, want at least %u", fc->label, n,
	      want_min);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *s = fr[i];
		const uint8_t *d = rte_pktmbuf_mtod(s, const uint8_t *);
		const uint8_t *ip = d + l2;
		uint32_t hl = (ip[0] & 15u) * 4, tot = rd16(ip + 2);
		uint32_t fo = rd16(ip + 6), off = (fo & 0x1fff) * 8u - base, dl = tot - hl;
		bool last = i == n - 1;

		CHECK(s->nb_segs == 1 && s->next == NULL && s->data_len == s->pkt_len,
		      "%s frag %u: %u mbufs", fc->label, i, s->nb_segs);
		CHECK(rte_pktmbuf_headroom(s) >= ESP_HEADROOM_NEED &&
			      rte_pktmbuf_tailroom(s) >= ESP_TRAILER_MAX,
		      "%s frag %u: headroom %u tailroom %u", fc->label, i, rte_pktmbuf_headroom(s),
		      rte_pktmbuf_tailroom(s));
		CHECK(s->l2_len == l2 && memcmp(d, f, l2) == 0, "%s frag %u: L2", fc->label, i);
		CHECK(s->ol_flags == (in->ol_flags & VLAN_FLAGS), "%s frag %u: ol_flags %#" PRIx64,
		      fc->label, i, s->ol_flags);
		CHECK((ip[0] >> 4) == 4 && hl >= 20, "%s frag %u: version/IHL %#x", fc->label, i,
		      ip[0]);
		CHECK(tot == s->data_len - l2u && tot <= fc->mtu,
		      "%s frag %u: total length %u, frame %u, mtu %u", fc->label, i, tot,
		      s->data_len, fc->mtu);
		CHECK(rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip) == 0,
		      "%s frag %u: header checksum", fc->label, i);
		CHECK(rd16(ip + 4) == 0x4321 && ip[8] == 64 && ip[9] == IPPROTO_UDP &&
			      memcmp(ip + 12, oip + 12, 8) == 0,
		      "%s frag %u: id/ttl/protocol/addresses", fc->label, i);
		CHECK((fo & 0x4000) == 0, "%s frag %u: DF", fc->label, i);
		if (n == 1)
			CHECK(fo == fc->frag_in, "%s: one copy, flags/offset %#x", fc->label, fo);
		else
			CHECK(((fo & 0x2000) != 0) == (!last || orig_mf), "%s frag %u: MF %#x",
			      fc->label, i, fo);
		if (!last)
			CHECK(dl % 8 == 0, "%s frag %u: %u data bytes, not a multiple of 8",
			      fc->label, i, dl);
		if (off == 0)
			CHECK(hl == ihl && memcmp(ip + 20, oip + 20, ihl - 20) == 0,
			      "%s frag %u: first fragment options", fc->label, i);
		else if (fc->opts)
			CHECK(hl == 20 + sizeof(opts_copied) &&
				      memcmp(ip + 20, opts_copied, sizeof(opts_copied)) == 0,
			      "%s frag %u: options %u bytes, want the copied ones", fc->label, i,
			      hl - 20);
		else
			CHECK(hl == 20, "%s frag %u: IHL %u", fc->label, i, hl);
		if (off + dl <= data_len && off < 65536) {
			uint32_t j, twice = 0;

			memcpy(got + off, ip + hl, dl);
			for (j = off; j < off + dl; j++)
				twice += seen[j]++ != 0;
			CHECK(twice == 0, "%s frag %u: %u bytes already sent", fc->label, i, twice);
			covered += dl;
		} else {
			CHECK(false, "%s frag %u: offset %u + %u outside %u", fc->label, i, off, dl,
			      data_len);
		}
	}
	CHECK(covered == data_len && memcmp(got, oip + ihl, data_len) == 0,
	      "%s: reassembled %u of %u bytes, equal: %d", fc->label, covered, data_len,
	      memcmp(got, oip + ihl, data_len) == 0);
}

static void
test_frag(void)
{
	struct rte_mbuf *fr[MAX_SEGS];
	unsigned int t;

	for (t = 0; t < RTE_DIM(frag_cases); t++) {
		const struct frag_case *fc = &frag_cases[t];
		enum egw_esp_drop why = EGW_ESP_DROP_MAX;
		struct pool_counts pc;
		struct rte_mbuf *m;
		uint16_t l2, ihl;
		uint32_t len;
		unsigned int n;

		len = build_udp4(fc, frame, &l2, &ihl);
		m = make_mbuf(fc->chain == 0 && len > 1800 ? big_pool : seg_pool, frame, len, l2,
			      fc->chain, fc->first);
		if (m == NULL) {
			CHECK(false, "%s: cannot build the input", fc->label);
			continue;
		}
		if (fc->n_vlan != 0) {
			m->ol_flags |= RTE_MBUF_F_TX_VLAN;
			m->vlan_tci = 7;
		}
		pool_counts(&pc);
		n = esp_frag_ipv4(&fctx, m, fc->mtu, fr, MAX_SEGS, &why);
		check_frags(fc, frame, l2, ihl, m, fr, n);
		free_all(fr, n);
		CHECK(pools_same(&pc), "%s: mbufs leaked", fc->label);
		check_input_intact(fc->label, m, frame, len);
		rte_pktmbuf_free(m);
	}
}

static void
expect_frag_refused(const char *label, const uint8_t *f, uint32_t len, uint16_t l2, uint16_t mtu,
		    const struct egw_esp_ctx *c, enum egw_esp_drop want)
{
	static const uint32_t chains[] = {0, 256};
	struct rte_mbuf *fr[MAX_SEGS];
	unsigned int k;

	for (k = 0; k < RTE_DIM(chains); k++) {
		/* a frame no mbuf holds whole goes as a 2 KB chain */
		uint32_t chain = chains[k] == 0 && len > BIG_FRAME ? 2048 : chains[k];
		enum egw_esp_drop why = EGW_ESP_DROP_MAX;
		struct pool_counts pc;
		struct rte_mbuf *m;
		unsigned int n;

		m = make_mbuf(chain == 0 && len > 1800 ? big_pool : seg_pool, f, len, l2, chain, 0);
		if (m == NULL) {
			CHECK(false, "%s: cannot build the input", label);
			continue;
		}
		pool_counts(&pc);
		n = esp_frag_ipv4(c, m, mtu, fr, MAX_SEGS, &why);
		CHECK(n == 0 && why == want, "%s (chain %u): %u fragments, reason %s, want 0 %s",
		      label, chains[k], n, n == 0 ? egw_esp_drop_name(why) : "-",
		      egw_esp_drop_name(want));
		free_all(fr, n);
		CHECK(pools_same(&pc), "%s (chain %u): mbufs leaked", label, chains[k]);
		check_input_intact(label, m, f, len);
		rte_pktmbuf_free(m);
	}
}

static void
test_frag_refused(void)
{
	struct frag_case fc = {"", 0, false, 1500, 576, 0, 0, 0, 0};
	struct egw_esp_ctx c;
	struct layout lo;
	uint16_t l2, ihl;
	uint32_t len;

	fc.frag_in = 0x4000;
	len = build_udp4(&fc, frame, &l2, &ihl);
	expect_frag_refused("DF", frame, len, l2, 576, &fctx, EGW_ESP_DROP_TOO_BIG);
	fc.frag_in = 0x4000 | 0x2000;
	len = build_udp4(&fc, frame, &l2, &ihl);
	expect_frag_refused("DF with MF", frame, len, l2, 576, &fctx, EGW_ESP_DROP_TOO_BIG);
	len = build_tcp(&tcp_cases[13], frame, &lo);
	expect_frag_refused("IPv6", frame, len, lo.l2, 1280, &fctx, EGW_ESP_DROP_TOO_BIG);

	fc.frag_in = 0;
	len = build_udp4(&fc, frame, &l2, &ihl);
	memcpy(work, frame, len);
	wr16(work + l2 + 2, 1501);
	expect_frag_refused("total length above the frame", work, len, l2, 576, &fctx,
			    EGW_ESP_DROP_BAD_INNER);
	memcpy(work, frame, len);
	work[l2] = 0x44;
	expect_frag_refused("IHL 4", work, len, l2, 576, &fctx, EGW_ESP_DROP_BAD_INNER);
	memcpy(work, frame, len);
	work[l2] = 0x65;
	expect_frag_refused("version 6 under ethertype IPv4", work, len, l2, 576, &fctx,
			    EGW_ESP_DROP_BAD_INNER);
	expect_frag_refused("truncated IPv4 header", frame, l2 + 19, l2, 576, &fctx,
			    EGW_ESP_DROP_BAD_INNER);
	expect_frag_refused("mtu 67", frame, len, l2, 67, &fctx, EGW_ESP_DROP_BAD_INNER);

	fc.ip_len = 65535;
	len = build_udp4(&fc, frame, &l2, &ihl);
	expect_frag_refused("64K -> 576: 119 fragments > 64", frame, len, l2, 576, &fctx,
			    EGW_ESP_DROP_BAD_INNER);
	fc.ip_len = 1500;
	len = build_udp4(&fc, frame, &l2, &ihl);

	c = fctx;
	c.indirect_pool = NULL;
	expect_frag_refused("no indirect pool", frame, len, l2, 576, &c, EGW_ESP_DROP_NOMEM);
	c = fctx;
	c.indirect_pool = ind_small;
	expect_frag_refused("indirect pool runs dry", frame, len, l2, 68, &c, EGW_ESP_DROP_NOMEM);
	c = fctx;
	c.pool = small_pool;
	expect_frag_refused("pool runs dry", frame, len, l2, 68, &c, EGW_ESP_DROP_NOMEM);
	c = fctx;
	c.pool = short_pool;
	expect_frag_refused("data room below the mtu", frame, len, l2, 1400, &c,
			    EGW_ESP_DROP_BAD_INNER);
	{
		/* a packet that fits needs no indirect mbuf */
		struct rte_mbuf *fr[MAX_SEGS];
		enum egw_esp_drop why;
		struct rte_mbuf *m = make_mbuf(seg_pool, frame, len, l2, 0, 0);
		unsigned int n;

		c = fctx;
		c.indirect_pool = NULL;
		n = esp_frag_ipv4(&c, m, 1500, fr, MAX_SEGS, &why);
		CHECK(n == 1 && fr[0]->pkt_len == len, "fits, no indirect pool: %u", n);
		free_all(fr, n);
		rte_pktmbuf_free(m);
	}
}

/* ---- ICMP too-big ------------------------------------------------------------------ */

#define V6_DSTOPT 1 /* a destination options header before the upper layer */
#define V6_FRAG 2   /* a fragment header before the upper layer */

struct icmp_case {
	const char *label;
	uint8_t v;
	uint8_t n_vlan;
	uint16_t ip_len;
	uint8_t proto;     /* upper protocol */
	uint8_t icmp_type; /* first upper-layer byte */
	uint16_t frag;     /* v4: flags/offset field; v6 with V6_FRAG: offset/M field */
	uint8_t v6_ext;
	const uint8_t *osrc; /* NULL: default source */
	const uint8_t *odst; /* NULL: default destination */
	bool src_given;
	uint32_t chain;
	bool want;
};

static const uint8_t gw4[4] = {192, 0, 2, 1};
static const uint8_t gw6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t v4_mcast[4] = {224, 0, 0, 5};
static const uint8_t v4_mcast2[4] = {239, 1, 1, 1};
static const uint8_t v4_zero[4] = {0, 0, 0, 0};
static const uint8_t v4_bcast[4] = {255, 255, 255, 255};
static const uint8_t v4_loop[4] = {127, 0, 0, 1};
static const uint8_t v6_mcast[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t v6_zero[16];

static const struct icmp_case icmp_cases[] = {
	{"v4 UDP 100", 4, 0, 100, IPPROTO_UDP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v4 TCP 1500: 548 quoted", 4, 0, 1500, IPPROTO_TCP, 0, 0x4000, 0, NULL, NULL, false, 0,
	 true},
	{"v4 QinQ chain 64", 4, 2, 1500, IPPROTO_TCP, 0, 0x4000, 0, NULL, NULL, true, 64, true},
	{"v4 odd length 101", 4, 1, 101, IPPROTO_UDP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v4 576 exactly fits", 4, 0, 548, IPPROTO_UDP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v4 echo request", 4, 0, 1500, IPPROTO_ICMP, 8, 0x4000, 0, NULL, NULL, true, 0, true},
	{"v4 echo reply", 4, 0, 1500, IPPROTO_ICMP, 0, 0x4000, 0, NULL, NULL, true, 0, true},
	{"v4 dest unreachable", 4, 0, 1500, IPPROTO_ICMP, 3, 0, 0, NULL, NULL, true, 0, false},
	{"v4 source quench", 4, 0, 1500, IPPROTO_ICMP, 4, 0, 0, NULL, NULL, true, 0, false},
	{"v4 redirect", 4, 0, 1500, IPPROTO_ICMP, 5, 0, 0, NULL, NULL, true, 0, false},
	{"v4 time exceeded", 4, 0, 1500, IPPROTO_ICMP, 11, 0, 0, NULL, NULL, true, 0, false},
	{"v4 parameter problem", 4, 0, 1500, IPPROTO_ICMP, 12, 0, 0, NULL, NULL, true, 0, false},
	{"v4 first fragment", 4, 0, 1500, IPPROTO_UDP, 0, 0x2000, 0, NULL, NULL, true, 0, true},
	{"v4 middle fragment", 4, 0, 1500, IPPROTO_UDP, 0, 0x2000 | 185, 0, NULL, NULL, true, 0,
	 false},
	{"v4 last fragment", 4, 0, 1500, IPPROTO_UDP, 0, 185, 0, NULL, NULL, true, 0, false},
	{"v4 multicast source", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, v4_mcast, NULL, true, 0, false},
	{"v4 unspecified source", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, v4_zero, NULL, true, 0, false},
	{"v4 broadcast source", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, v4_bcast, NULL, true, 0, false},
	{"v4 loopback source", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, v4_loop, NULL, true, 0, false},
	{"v4 multicast destination", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, NULL, v4_mcast2, true, 0,
	 false},
	{"v4 broadcast destination", 4, 0, 1500, IPPROTO_UDP, 0, 0, 0, NULL, v4_bcast, true, 0,
	 false},
	{"v6 UDP 100", 6, 0, 100, IPPROTO_UDP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v6 TCP 1500: 1232 quoted", 6, 0, 1500, IPPROTO_TCP, 0, 0, 0, NULL, NULL, false, 0, true},
	{"v6 VLAN chain 50", 6, 1, 1500, IPPROTO_TCP, 0, 0, 0, NULL, NULL, true, 50, true},
	{"v6 1280 exactly fits", 6, 0, 1232, IPPROTO_TCP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v6 odd length 1001", 6, 0, 1001, IPPROTO_UDP, 0, 0, 0, NULL, NULL, true, 0, true},
	{"v6 echo request", 6, 0, 1500, IPPROTO_ICMPV6, 128, 0, 0, NULL, NULL, true, 0, true},
	{"v6 destination unreachable", 6, 0, 1500, IPPROTO_ICMPV6, 1, 0, 0, NULL, NULL, true, 0,
	 false},
	{"v6 packet too big", 6, 0, 1500, IPPROTO_ICMPV6, 2, 0, 0, NULL, NULL, true, 0, false},
	{"v6 time exceeded", 6, 0, 1500, IPPROTO_ICMPV6, 3, 0, 0, NULL, NULL, true, 0, false},
	{"v6 parameter problem", 6, 0, 1500, IPPROTO_ICMPV6, 4, 0, 0, NULL, NULL, true, 0, false},
	{"v6 error type 127", 6, 0, 1500, IPPROTO_ICMPV6, 127, 0, 0, NULL, NULL, true, 0, false},
	{"v6 error behind destination options", 6, 0, 1500, IPPROTO_ICMPV6, 1, 0, V6_DSTOPT, NULL,
	 NULL, true, 0, false},
	{"v6 echo behind destination options", 6, 0, 1500, IPPROTO_ICMPV6, 128, 0, V6_DSTOPT, NULL,
	 NULL, true, 0, true},
	{"v6 first fragment", 6, 0, 1500, IPPROTO_UDP, 0, 1, V6_FRAG, NULL, NULL, true, 0, true},
	{"v6 later fragment", 6, 0, 1500, IPPROTO_UDP, 0, 185 << 3, V6_FRAG, NULL, NULL, true, 0,
	 false},
	{"v6 error in a first fragment", 6, 0, 1500, IPPROTO_ICMPV6, 1, 1, V6_FRAG | V6_DSTOPT,
	 NULL, NULL, true, 0, false},
	{"v6 multicast source", 6, 0, 1500, IPPROTO_UDP, 0, 0, 0, v6_mcast, NULL, true, 0, false},
	{"v6 unspecified source", 6, 0, 1500, IPPROTO_UDP, 0, 0, 0, v6_zero, NULL, true, 0, false},
	{"v6 multicast destination, no source given", 6, 0, 1500, IPPROTO_UDP, 0, 0, 0, NULL,
	 v6_mcast, false, 0, false},
	{"v6 multicast destination, source given", 6, 0, 1500, IPPROTO_UDP, 0, 0, 0, NULL, v6_mcast,
	 true, 0, true},
};

static uint32_t
build_icmp_orig(const struct icmp_case *ic, uint8_t *f, uint16_t *l2)
{
	uint32_t off, i, up;
	uint8_t *ip;

	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	off = 12;
	for (i = 0; i < ic->n_vlan; i++) {
		wr16(f + off, i == 0 && ic->n_vlan == 2 ? 0x88a8 : 0x8100);
		wr16(f + off + 2, (uint16_t)(300 + i));
		off += 4;
	}
	wr16(f + off, ic->v == 4 ? 0x0800 : 0x86dd);
	off += 2;
	*l2 = (uint16_t)off;
	ip = f + off;
	rng_state = ic->ip_len * 13u + ic->icmp_type;
	for (i = 0; i < ic->ip_len; i++)
		ip[i] = rnd8();
	if (ic->v == 4) {
		memset(ip, 0, 20);
		ip[0] = 0x45;
		wr16(ip + 2, ic->ip_len);
		wr16(ip + 4, 0x1111);
		wr16(ip + 6, ic->frag);
		ip[8] = 30;
		ip[9] = ic->proto;
		memcpy(ip + 12, ic->osrc != NULL ? ic->osrc : v4_in_src, 4);
		memcpy(ip + 16, ic->odst != NULL ? ic->odst : v4_in_dst, 4);
		put_cksum(ip + 10, ip, 20);
		up = 20;
	} else {
		uint8_t *nhp = ip + 6;

		memset(ip, 0, 40);
		wr32(ip, 0x60000000u);
		wr16(ip + 4, (uint16_t)(ic->ip_len - 40));
		ip[7] = 30;
		memcpy(ip + 8, ic->osrc != NULL ? ic->osrc : v6_in_src, 16);
		memcpy(ip + 24, ic->odst != NULL ? ic->odst : v6_in_dst, 16);
		up = 40;
		if (ic->v6_ext & V6_FRAG) {
			*nhp = IPPROTO_FRAGMENT;
			nhp = ip + up;
			memset(ip + up, 0, 8);
			wr16(ip + up + 2, ic->frag);
			wr32(ip + up + 4, 0xabcd);
			up += 8;
		}
		if (ic->v6_ext & V6_DSTOPT) {
			*nhp = IPPROTO_DSTOPTS;
			nhp = ip + up;
			memcpy(ip + up, "\x00\x00\x01\x04\x00\x00\x00\x00", 8);
			up += 8;
		}
		*nhp = ic->proto;
	}
	ip[up] = ic->icmp_type;
	return off + ic->ip_len;
}

static void
check_icmp(const struct icmp_case *ic, const uint8_t *f, uint16_t l2, const struct rte_mbuf *in,
	   const struct rte_mbuf *r, uint16_t mtu)
{
	const uint8_t *d = rte_pktmbuf_mtod(r, const uint8_t *);
	const uint8_t *oip = f + l2, *ip = d + l2, *icmp;
	uint32_t quote, ip_max = ic->v == 4 ? 576 : 1280, hl = ic->v == 4 ? 20 : 40;

	quote = RTE_MIN((uint32_t)ic->ip_len, ip_max - hl - 8);
	CHECK(r->nb_segs == 1 && r->data_len == r->pkt_len && r->pkt_len == l2 + hl + 8 + quote,
	      "%s: frame %u bytes, want %u", ic->label, r->pkt_len, l2 + hl + 8 + quote);
	if (r->pkt_len != l2 + hl + 8 + quote)
		return;
	CHECK(r->l2_len == l2 && r->ol_flags == (in->ol_flags & VLAN_FLAGS) &&
		      r->vlan_tci == in->vlan_tci,
	      "%s: mbuf l2_len %u ol_flags %#" PRIx64, ic->label, r->l2_len, r->ol_flags);
	CHECK(memcmp(d, f + 6, 6) == 0 && memcmp(d + 6, f, 6) == 0 &&
		      memcmp(d + 12, f + 12, l2 - 12u) == 0,
	      "%s: L2 header (MACs swapped, tags kept)", ic->label);
	icmp = ip + hl;
	if (ic->v == 4) {
		const uint8_t *want_src = ic->src_given ? gw4 : oip + 16;

		CHECK(ip[0] == 0x45 && rd16(ip + 2) == hl + 8 + quote && ip[8] == 64 &&
			      ip[9] == IPPROTO_ICMP && (rd16(ip + 6) & 0x3fff) == 0,
		      "%s: IPv4 header %02x len %u ttl %u proto %u frag %#x", ic->label, ip[0],
		      rd16(ip + 2), ip[8], ip[9], rd16(ip + 6));
		CHECK(memcmp(ip + 12, want_src, 4) == 0 && memcmp(ip + 16, oip + 12, 4) == 0,
		      "%s: addresses", ic->label);
		CHECK(rte_ipv4_cksum((const struct rte_ipv4_hdr *)ip) == 0,
		      "%s: IPv4 header checksum", ic->label);
		CHECK(icmp[0] == 3 && icmp[1] == 4 && rd16(icmp + 4) == 0 && rd16(icmp + 6) == mtu,
		      "%s: ICMP type %u code %u unused %#x mtu %u", ic->label, icmp[0], icmp[1],
		      rd16(icmp + 4), rd16(icmp + 6));
		CHECK(ref_fold(ref_sum(icmp, 8 + quote, 0)) == 0xffff, "%s: ICMP checksum",
		      ic->label);
	} else {
		const uint8_t *want_src = ic->src_given ? gw6 : oip + 24;

		CHECK((ip[0] >> 4) == 6 && rd16(ip + 4) == 8 + quote && ip[6] == IPPROTO_ICMPV6 &&
			      ip[7] == 64,
		      "%s: IPv6 header %02x len %u nh %u hops %u", ic->label, ip[0], rd16(ip + 4),
		      ip[6], ip[7]);
		CHECK(memcmp(ip + 8, want_src, 16) == 0 && memcmp(ip + 24, oip + 8, 16) == 0,
		      "%s: addresses", ic->label);
		CHECK(icmp[0] == 2 && icmp[1] == 0 && rd32(icmp + 4) == mtu,
		      "%s: ICMPv6 type %u code %u mtu %u", ic->label, icmp[0], icmp[1],
		      rd32(icmp + 4));
		CHECK(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)ip, icmp) == 0 &&
			      ref_l4_ok(true, ip + 8, ip + 24, IPPROTO_ICMPV6, icmp, 8 + quote),
		      "%s: ICMPv6 checksum", ic->label);
	}
	CHECK(memcmp(icmp + 8, oip, quote) == 0, "%s: quoted bytes differ", ic->label);
}

static void
test_icmp(void)
{
	unsigned int t;

	for (t = 0; t < RTE_DIM(icmp_cases); t++) {
		const struct icmp_case *ic = &icmp_cases[t];
		uint16_t mtu = ic->v == 4 ? 1400 : 1350;
		struct pool_counts pc;
		struct rte_mbuf *m, *r;
		uint16_t l2;
		uint32_t len;

		len = build_icmp_orig(ic, frame, &l2);
		m = make_mbuf(seg_pool, frame, len, l2, ic->chain, 0);
		if (m == NULL) {
			CHECK(false, "%s: cannot build the input", ic->label);
			continue;
		}
		if (ic->n_vlan == 1) {
			m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
			m->vlan_tci = 0x321;
		}
		pool_counts(&pc);
		r = esp_icmp_too_big(m, mtu, ic->src_given ? (ic->v == 4 ? gw4 : gw6) : NULL,
				     seg_pool);
		CHECK((r != NULL) == ic->want, "%s: %s message", ic->label, r != NULL ? "a" : "no");
		if (r != NULL && ic->want)
			check_icmp(ic, frame, l2, m, r, mtu);
		rte_pktmbuf_free(r);
		CHECK(pools_same(&pc), "%s: mbufs leaked", ic->label);
		check_input_intact(ic->label, m, frame, len);
		rte_pktmbuf_free(m);
	}

	/* no mbuf, or one too small: no message, nothing leaked */
	{
		struct rte_mbuf *hold[64], *m, *r;
		struct pool_counts pc;
		unsigned int n = 0;
		uint16_t l2;
		uint32_t len;

		len = build_icmp_orig(&icmp_cases[22], frame, &l2);
		m = make_mbuf(seg_pool, frame, len, l2, 0, 0);
		while (n < RTE_DIM(hold) && (hold[n] = rte_pktmbuf_alloc(small_pool)) != NULL)
			n++;
		pool_counts(&pc);
		r = esp_icmp_too_big(m, 1280, NULL, small_pool);
		CHECK(r == NULL && pools_same(&pc), "empty pool: a message");
		free_all(hold, n);
		pool_counts(&pc);
		r = esp_icmp_too_big(m, 1280, NULL, short_pool);
		CHECK(r == NULL && pools_same(&pc), "1200-byte buffers: a 1280-byte message");
		rte_pktmbuf_free(r);
		rte_pktmbuf_free(m);
	}
}

/* ---- random damage ------------------------------------------------------------------ */

/*
 * Valid frames with 1-3 header bytes set to random values and sometimes cut
 * short, as one mbuf or 7- and 64-byte chains, through all four functions.
 * Whatever comes out must be consistent: the probe agrees with the
 * segmenter, every segment is itself a segmentable packet with its share of
 * the payload, fragments and ICMP messages respect their limits, and every
 * mbuf goes back. Run under ASan this is a small fuzzer of the parsers.
 */
static void
test_random(void)
{
	static const unsigned int bases[] = {0, 1, 4, 13, 14, 17, 18, 21, 23, 25, 26, 27};
	static const uint32_t chains[] = {0, 7, 64};
	unsigned int iter, bad_seg = 0, bad_frag = 0, bad_icmp = 0, leaks = 0, made = 0;
	unsigned int no_input = 0;
	struct rte_mbuf *out[MAX_SEGS];

	for (iter = 0; iter < 30000; iter++) {
		struct gso_case tc = tcp_cases[bases[iter % RTE_DIM(bases)]];
		uint32_t len, k, flips, chain, hl = 0, pl = 0, sum_pl = 0;
		enum egw_esp_drop why = EGW_ESP_DROP_MAX;
		struct pool_counts pc;
		struct layout lo;
		struct rte_mbuf *m, *r;
		unsigned int n, i;
		bool probe;

		tc.payload = tc.payload % 2500;
		tc.mss = 1000;
		tc.chain = 0;
		len = build_tcp(&tc, work, &lo);
		rng_state = iter * 2654435761u;
		flips = 1 + rnd8() % 3;
		for (k = 0; k < flips; k++)
			work[((uint32_t)rnd8() << 8 | rnd8()) % (lo.hdr_len + 4u)] = rnd8();
		if (rnd8() < 64)
			len = ((uint32_t)rnd8() << 8 | rnd8()) % (len + 1);
		chain = chains[rnd8() % RTE_DIM(chains)];
		m = make_mbuf(seg_pool, work, len, lo.l2, chain == 0 && len > 2000 ? 1024 : chain,
			      0);
		if (m == NULL) {
			no_input++;
			continue;
		}

		pool_counts(&pc);
		n = esp_gso_tcp(m, tc.mss, seg_pool, out, MAX_SEGS, &why);
		probe = esp_gso_tcp_probe(m, &hl, &pl);
		if (n == 0) {
			bad_seg += probe || why != EGW_ESP_DROP_BAD_INNER;
		} else {
			made++;
			bad_seg += !probe || n != expect_nseg(pl, tc.mss);
			for (i = 0; i < n; i++) {
				uint32_t h2 = 0, p2 = 0;

				bad_seg += !esp_gso_tcp_probe(out[i], &h2, &p2) || h2 != hl ||
					   p2 != RTE_MIN(pl - sum_pl, (uint32_t)tc.mss);
				sum_pl += p2;
			}
			bad_seg += sum_pl != pl;
			free_all(out, n);
		}

		n = esp_frag_ipv4(&fctx, m, 576, out, MAX_SEGS, &why);
		for (i = 0; i < n; i++)
			bad_frag += out[i]->nb_segs != 1 || out[i]->pkt_len > lo.l2 + 576u;
		free_all(out, n);

		r = esp_icmp_too_big(m, 1280, NULL, seg_pool);
		if (r != NULL) {
			bad_icmp += r->nb_segs != 1 || r->pkt_len > lo.l2 + 1280u;
			rte_pktmbuf_free(r);
		}
		leaks += !pools_same(&pc);
		rte_pktmbuf_free(m);
	}
	CHECK(bad_seg == 0, "random damage: %u inconsistent segmentations", bad_seg);
	CHECK(bad_frag == 0, "random damage: %u bad fragments", bad_frag);
	CHECK(bad_icmp == 0, "random damage: %u bad ICMP messages", bad_icmp);
	CHECK(leaks == 0, "random damage: %u runs leaked mbufs", leaks);
	CHECK(no_input == 0, "random damage: %u inputs not built", no_input);
	CHECK(made > 1000, "random damage: only %u frames were still segmentable", made);
}

int
main(int argc, char **argv)
{
	int ret = rte_eal_init(argc, argv);
	uint16_t simd;
	int socket;

	if (ret < 0) {
		printf("rte_eal_init failed\n");
		return 1;
	}
	socket = (int)rte_socket_id();
	seg_pool = rte_pktmbuf_pool_create("gso_seg", SEG_POOL_N, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   socket);
	big_pool = rte_pktmbuf_pool_create("gso_big", 7, 0, 0, BIG_ROOM, socket);
	ind_pool = rte_pktmbuf_pool_create("gso_ind", 4095, 0, 0, 0, socket);
	ind_small = rte_pktmbuf_pool_create("gso_ind_small", 4, 0, 0, 0, socket);
	small_pool =
		rte_pktmbuf_pool_create("gso_small", 8, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	short_pool = rte_pktmbuf_pool_create("gso_short", 64, 0, 0, 1200, socket);
	if (seg_pool == NULL || big_pool == NULL || ind_pool == NULL || ind_small == NULL ||
	    small_pool == NULL || short_pool == NULL) {
		printf("cannot create the mbuf pools\n");
		return 1;
	}
	fctx.pool = seg_pool;
	fctx.indirect_pool = ind_pool;

	test_tcp_good("");
	/* again through the SSE2 copy-and-sum loop, where AVX2 ran first */
	simd = rte_vect_get_max_simd_bitwidth();
	if (simd > RTE_VECT_SIMD_128 && rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_128) == 0) {
		test_tcp_good(" (SSE2)");
		rte_vect_set_max_simd_bitwidth(simd);
	}
	test_tcp_truncated();
	test_tcp_hostile();
	test_frag();
	test_frag_refused();
	test_icmp();
	test_random();

	printf("%d checks, %d failures\n", checks, failures);
	rte_eal_cleanup();
	return failures == 0 ? 0 : 1;
}
