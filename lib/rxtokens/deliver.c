/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker path: find the consumer of a classified frame's flow, check its
 * binding and quota, take a reference on each page holding payload and
 * enqueue one record per page. Lock-free: atomic refcounts and counters, a
 * multi-producer ring per consumer; consumers are freed only after an RCU
 * grace period, so a consumer found here stays valid until the worker's
 * next quiescent state.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "egw_eth.h"
#include "rxtok_private.h"

/* Most records one packet may give (pages it spans). */
#define RXTOK_MAX_SEGS 32

static const char *const drop_names[EGW_RXTOK_DROP_MAX] = {
	[EGW_RXTOK_DROP_QUOTA] = "rxtok_quota",
	[EGW_RXTOK_DROP_STEERED] = "rxtok_steered",
	[EGW_RXTOK_DROP_DETACHED] = "rxtok_detached",
	[EGW_RXTOK_DROP_RING_FULL] = "rxtok_ring_full",
	[EGW_RXTOK_DROP_EMPTY] = "rxtok_empty",
	[EGW_RXTOK_DROP_NOT_REGION] = "rxtok_not_region",
};

const char *
egw_rxtok_drop_name(unsigned int reason)
{
	return reason < EGW_RXTOK_DROP_MAX ? drop_names[reason] : "unknown";
}

/* Where the payload of a matched packet lies. */
struct rxtok_match {
	struct egw_rxtok_consumer *c;
	uint32_t off; /* from the start of the frame */
	uint32_t len;
	uint32_t key;
};

static inline struct egw_rxtok_consumer *
consumer_at(uint16_t idx1)
{
	/* acquire: pairs with the release store in egw_rxtok_consumer_create() */
	return idx1 != 0 ? __atomic_load_n(&rxtok.consumers[idx1 - 1], __ATOMIC_ACQUIRE) : NULL;
}

/* Bytes at off..off+len of m: in place, or copied to buf when they straddle
 * segments. NULL if the frame is shorter. */
static inline const void *
hdr_at(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *buf)
{
	if (likely(off + len <= m->data_len))
		return rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	return rte_pktmbuf_read(m, off, len, buf);
}

static struct egw_rxtok_consumer *
match_dst(uint8_t family, const void *addr)
{
	struct rxtok_dst_key k;
	void *data;

	if (__atomic_load_n(&rxtok.n_dst, __ATOMIC_RELAXED) == 0)
		return NULL;
	memset(&k, 0, sizeof(k));
	k.family = family;
	memcpy(k.addr, addr, family == 4 ? 4 : 16);
	if (rte_hash_lookup_data(rxtok.dst_hash, &k, &data) < 0)
		return NULL;
	return consumer_at((uint16_t)(uintptr_t)data);
}

/* The UDP header at off, in an IP payload of len bytes: 1 when a consumer
 * has its port (mt filled), 0 when none has, -1 for a malformed datagram of
 * a consumer's port (passed on, not delivered). */
static int
match_udp(struct rte_mbuf *m, uint32_t off, uint32_t len, struct rxtok_match *mt)
{
	struct rte_udp_hdr udpb;
	const struct rte_udp_hdr *udp = hdr_at(m, off, sizeof(udpb), &udpb);
	uint16_t dport;
	uint32_t ulen;

	if (udp == NULL)
		return 0;
	dport = rte_be_to_cpu_16(udp->dst_port);
	mt->c = consumer_at(__atomic_load_n(&rxtok.udp_tbl[dport], __ATOMIC_ACQUIRE));
	if (mt->c == NULL)
		return 0;
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < sizeof(*udp) || ulen > len)
		return -1;
	mt->off = off + sizeof(*udp);
	mt->len = ulen - sizeof(*udp);
	mt->key = dport;
	return 1;
}

static bool
match_ipv4(struct rte_mbuf *m, struct rxtok_match *mt)
{
	uint32_t l3 = m->l2_len, ihl, tot;
	struct rte_ipv4_hdr ipb;
	const struct rte_ipv4_hdr *ip = hdr_at(m, l3, sizeof(ipb), &ipb);

	if (ip == NULL || (ip->version_ihl >> 4) != 4)
		return false;
	ihl = (uint32_t)(ip->version_ihl & 0xf) * 4;
	tot = rte_be_to_cpu_16(ip->total_length);
	if (ihl < sizeof(*ip) || tot < ihl || l3 + tot > m->pkt_len)
		return false;
	/* only a first fragment carries the UDP header */
	if (ip->next_proto_id == IPPROTO_UDP &&
	    (rte_be_to_cpu_16(ip->fragment_offset) & 0x3fff) == 0) {
		int rc = match_udp(m, l3 + ihl, tot - ihl, mt);

		if (rc != 0)
			return rc > 0;
	}
	mt->c = match_dst(4, &ip->dst_addr);
	if (mt->c == NULL)
		return false;
	mt->off = l3 + ihl;
	mt->len = tot - ihl;
	mt->key = 0;
	return true;
}

/*
 * The common case, UDP/IPv4 without options and not a fragment, with both
 * headers in the first segment: one bounds check, one table lookup. 1: a
 * consumer's datagram (mt filled), 0: no consumer can want it (no UDP
 * consumer of the port and none by destination), -1: anything else, for
 * match_ipv4() to judge in full (it makes the same decisions, slower).
 */
static inline int
match_udp4_fast(struct rte_mbuf *m, struct rxtok_match *mt)
{
	uint32_t l3 = m->l2_len, tot, ulen;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	uint16_t dport, idx1;

	if (unlikely(l3 + sizeof(*ip) + sizeof(*udp) > m->data_len))
		return -1;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, l3);
	if (ip->version_ihl != RTE_IPV4_VHL_DEF || ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset & rte_cpu_to_be_16(0x3fff)) != 0)
		return -1;
	udp = (const struct rte_udp_hdr *)(ip + 1);
	dport = rte_be_to_cpu_16(udp->dst_port);
	/* acquire: pairs with the release store in egw_rxtok_consumer_create() */
	idx1 = __atomic_load_n(&rxtok.udp_tbl[dport], __ATOMIC_ACQUIRE);
	if (idx1 == 0)
		return __atomic_load_n(&rxtok.n_dst, __ATOMIC_RELAXED) == 0 ? 0 : -1;
	tot = rte_be_to_cpu_16(ip->total_length);
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (tot < sizeof(*ip) + sizeof(*udp) || l3 + tot > m->pkt_len || ulen < sizeof(*udp) ||
	    ulen > tot - sizeof(*ip))
		return -1;
	mt->c = consumer_at(idx1);
	if (mt->c == NULL)
		return -1;
	mt->off = l3 + (uint32_t)(sizeof(*ip) + sizeof(*udp));
	mt->len = ulen - (uint32_t)sizeof(*udp);
	mt->key = dport;
	return 1;
}

static bool
match_ipv6(struct rte_mbuf *m, struct rxtok_match *mt)
{
	uint32_t l3 = m->l2_len, plen;
	struct rte_ipv6_hdr ipb;
	const struct rte_ipv6_hdr *ip = hdr_at(m, l3, sizeof(ipb), &ipb);

	if (ip == NULL || (rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6)
		return false;
	plen = rte_be_to_cpu_16(ip->payload_len);
	if (l3 + sizeof(*ip) + plen > m->pkt_len)
		return false;
	if (ip->proto == IPPROTO_UDP) {
		int rc = match_udp(m, l3 + sizeof(*ip), plen, mt);

		if (rc != 0)
			return rc > 0;
	}
	mt->c = match_dst(6, ip->dst_addr);
	if (mt->c == NULL)
		return false;
	mt->off = l3 + sizeof(*ip);
	mt->len = plen;
	mt->key = 0;
	return true;
}

/* PPPoE session header (RFC 2516) and the PPP protocol field. */
static bool
match_pppoe(struct rte_mbuf *m, struct rxtok_match *mt)
{
	uint32_t l = m->l2_len, len, proto_len;
	uint8_t hb[8];
	const uint8_t *h = hdr_at(m, l, 8, hb);
	uint16_t sid;

	if (h == NULL || h[0] != 0x11 || h[1] != 0x00)
		return false;
	sid = (uint16_t)(h[2] << 8 | h[3]);
	mt->c = consumer_at(__atomic_load_n(&rxtok.pppoe_tbl[sid], __ATOMIC_ACQUIRE));
	if (mt->c == NULL)
		return false;
	len = (uint32_t)(h[4] << 8 | h[5]);
	proto_len = (h[6] & 1) ? 1 : 2; /* protocol-field compression */
	if (len < proto_len || l + 6 + len > m->pkt_len)
		return false;
	mt->off = l + 6 + proto_len;
	mt->len = len - proto_len;
	mt->key = sid;
	return true;
}

/* Records waiting to be enqueued on one consumer's ring: a burst's packets
 * for one consumer cost one ring enqueue. The quota is reserved for the run
 * of packets to that consumer, not per packet: avail tokens of c's
 * outstanding count are reserved and not yet used. */
struct rxtok_pending {
	struct egw_rxtok_consumer *c;
	unsigned int n;    /* records */
	unsigned int pkts; /* packets they belong to */
	uint32_t avail;    /* tokens reserved, not yet used */
	uint32_t ahead;    /* packets of the burst from the current one on */
	struct egw_rxtok_rec recs[2 * RXTOK_MAX_SEGS * 4];
};

static void
pending_flush(struct egw_rxtok_region *r, struct rxtok_pending *pd, struct egw_rxtok_burst_res *res)
{
	struct egw_rxtok_consumer *c = pd->c;
	unsigned int i;

	if (pd->n == 0)
		return;
	/* the ring publishes the records (release in rte_ring's tail update) */
	if (likely(rte_ring_mp_enqueue_bulk_elem(c->ring, pd->recs, sizeof(pd->recs[0]), pd->n,
						 NULL) != 0)) {
		res->records += pd->n;
	} else {
		/* cannot happen while records <= outstanding <= quota < ring
		 * size; if it did, the pages are still only ours: free them */
		for (i = 0; i < pd->n; i++)
			rxtok_page_release(r, pd->recs[i].token);
		__atomic_fetch_sub(&c->outstanding, pd->n, __ATOMIC_RELAXED);
		res->drop[EGW_RXTOK_DROP_RING_FULL] += pd->pkts;
		__atomic_fetch_add(&c->drops[EGW_RXTOK_DROP_RING_FULL], pd->pkts, __ATOMIC_RELAXED);
		res->delivered -= pd->pkts;
	}
	pd->n = 0;
	pd->pkts = 0;
}

/* End of a run: enqueue its records, give back what it did not use. */
static void
pending_end(struct egw_rxtok_region *r, struct rxtok_pending *pd, struct egw_rxtok_burst_res *res)
{
	pending_flush(r, pd, res);
	if (pd->avail != 0) {
		__atomic_fetch_sub(&pd->c->outstanding, pd->avail, __ATOMIC_RELAXED);
		pd->avail = 0;
	}
}

/* Reserve at least n tokens of c's quota in all (pd->avail included), at
 * most enough for n per packet left in the burst, never past the quota: the
 * decision is that of a reservation of n alone (outstanding, less what this
 * run reserved and has not used, plus n within the quota), and outstanding,
 * reservations included, never exceeds the quota. */
static bool
quota_reserve(struct egw_rxtok_consumer *c, struct rxtok_pending *pd, uint32_t n)
{
	uint32_t cur = __atomic_load_n(&c->outstanding, __ATOMIC_RELAXED), grant;

	do {
		uint32_t room = cur < c->quota ? c->quota - cur : 0;

		if (pd->avail + room < n)
			return false;
		grant = RTE_MIN(room, RTE_MAX(n * pd->ahead, n) - pd->avail);
	} while (!__atomic_compare_exchange_n(&c->outstanding, &cur, cur + grant, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	pd->avail += grant;
	return true;
}

/* Deliver the payload of m to mt->c. Returns -1 when delivered (m is the
 * consumer's now), or the drop reason (m still belongs to the caller). */
static int
deliver_one(struct egw_rxtok_region *r, struct rte_mbuf *m, const struct rxtok_match *mt,
	    uint16_t port, struct rxtok_pending *pd, struct egw_rxtok_burst_res *res)
{
	struct egw_rxtok_consumer *c = mt->c;
	struct rte_mbuf *segs[RXTOK_MAX_SEGS];
	struct egw_rxtok_rec *recs;
	struct rte_mbuf *s, *next;
	uint32_t skip = mt->off, left = mt->len, n = 0, i;

	if (mt->len == 0)
		return EGW_RXTOK_DROP_EMPTY;
	if (pd->c != c) {
		if (pd->c != NULL)
			pending_end(r, pd, res);
		pd->c = c;
	} else if (pd->n + RXTOK_MAX_SEGS > RTE_DIM(pd->recs)) {
		pending_flush(r, pd, res);
	}
	recs = &pd->recs[pd->n];
	/* one record per segment holding payload bytes */
	for (s = m; s != NULL && left != 0; s = s->next) {
		uint64_t page = (uint64_t)((uint8_t *)s->buf_addr - r->base);
		uint32_t take;

		if (skip >= s->data_len) {
			skip -= s->data_len;
			continue;
		}
		if (n == RXTOK_MAX_SEGS)
			return EGW_RXTOK_DROP_RING_FULL;
		/* a buffer that is not a page of the region (a PMD that ignored
		 * the queue's mempool) must never index the refcounts; an mbuf
		 * of the region's pool always has its page as buffer */
		if (unlikely(s->pool != r->pool || page >= r->size))
			return EGW_RXTOK_DROP_NOT_REGION;
		take = RTE_MIN(left, (uint32_t)s->data_len - skip);
		recs[n].token = (uint32_t)(page >> EGW_RXTOK_PAGE_SHIFT);
		recs[n].offset = (uint16_t)(s->data_off + skip);
		recs[n].size = (uint16_t)take;
		recs[n].key = mt->key;
		recs[n].port = port;
		recs[n].match = (uint8_t)c->match;
		recs[n].flags = 0;
		segs[n] = s;
		left -= take;
		skip = 0;
		n++;
	}
	if (left != 0) /* pkt_len lies about the chain */
		return EGW_RXTOK_DROP_EMPTY;
	recs[0].flags |= EGW_RXTOK_REC_FIRST;
	recs[n - 1].flags |= EGW_RXTOK_REC_LAST;

	/* quota: n tokens of the run's reservation, reserving more if short */
	if (pd->avail < n && !quota_reserve(c, pd, n))
		return EGW_RXTOK_DROP_QUOTA;
	pd->avail -= n;
	/* split the chain: payload segments become single pages owned by the
	 * consumer, the others go back to the pool now */
	for (s = m, i = 0; s != NULL; s = next) {
		next = s->next;
		s->next = NULL;
		if (i < n && s == segs[i]) {
			s->nb_segs = 1;
			s->pkt_len = s->data_len;
			/* the page came from the pool: no one else holds it,
			 * so its state is a plain store (the ring's enqueue
			 * publishes it with the record) */
			__atomic_store_n(&r->state[recs[i].token], RXTOK_PAGE_OUT,
					 __ATOMIC_RELAXED);
			i++;
		} else {
			rte_pktmbuf_free_seg(s);
		}
	}
	pd->n += n;
	pd->pkts++;
	return -1;
}

uint16_t
egw_rxtok_deliver_burst(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t n,
			struct egw_rxtok_burst_res *res)
{
	struct egw_rxtok_region *bound;
	struct rxtok_pending pd;
	uint16_t i, pass = 0;

	if (__atomic_load_n(&rxtok.n_consumers, __ATOMIC_RELAXED) == 0)
		return n;
	pd.c = NULL;
	pd.n = 0;
	pd.pkts = 0;
	pd.avail = 0;
	bound = egw_rxtok_binding(port, queue);
	if (bound != NULL) {
		unsigned int lc = rte_lcore_id();
		uint16_t bit = (uint16_t)(1u << bound->id);

		/* this lcore receives into the region: pages it gives back go
		 * to its cache (region.c). Its own line, set once per region
		 * (atomic: region destroy clears the bit from the control
		 * thread) */
		if (lc < RTE_MAX_LCORE &&
		    unlikely((__atomic_load_n(&rxtok_lcores[lc].rx_regions, __ATOMIC_RELAXED) &
			      bit) == 0))
			__atomic_fetch_or(&rxtok_lcores[lc].rx_regions, bit, __ATOMIC_RELAXED);
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct rxtok_match mt = {0};
		bool hit;
		int rc;

		switch (egw_eth_meta(m)->cls) {
		case EGW_ETH_CLS_IPV4:
			rc = match_udp4_fast(m, &mt);
			hit = rc >= 0 ? rc == 1 : match_ipv4(m, &mt);
			break;
		case EGW_ETH_CLS_IPV6: hit = match_ipv6(m, &mt); break;
		case EGW_ETH_CLS_PPPOE_SESS: hit = match_pppoe(m, &mt); break;
		default: hit = false; break;
		}
		if (!hit) {
			pkts[pass++] = m;
			continue;
		}
		if (mt.c->region != bound) {
			/* another binding's queue: never mix regions; tell the
			 * consumer (its next receive fails with -EPIPE) */
			if (!__atomic_load_n(&mt.c->steered, __ATOMIC_RELAXED))
				__atomic_store_n(&mt.c->steered, 1, __ATOMIC_RELEASE);
			rc = EGW_RXTOK_DROP_STEERED;
		} else if (!__atomic_load_n(&mt.c->attached, __ATOMIC_ACQUIRE)) {
			rc = EGW_RXTOK_DROP_DETACHED;
		} else {
			pd.ahead = (uint32_t)(n - i);
			rc = deliver_one(bound, m, &mt, port, &pd, res);
		}
		if (rc == -1) {
			res->delivered++;
			continue;
		}
		res->drop[rc]++;
		/* the consumer's own count of what it lost: a drop path, on
		 * the line workers already write (outstanding) */
		__atomic_fetch_add(&mt.c->drops[rc], 1, __ATOMIC_RELAXED);
		rte_pktmbuf_free(m);
	}
	if (pd.c != NULL)
		pending_end(bound, &pd, res);
	return pass;
}
