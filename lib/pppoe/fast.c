/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path: per-lcore contexts, decapsulation of bound sessions' frames,
 * encapsulation toward them, TCP MSS clamping, ICMP/ICMPv6 too-big.
 *
 * Nothing here writes shared memory: drops and per-session counters live in
 * the context of the lcore (other threads read them with relaxed loads), and
 * the session table is only read: a slot's state with an acquire load that
 * pairs with session.c's release store, then the rest of the slot. Every
 * length field is checked against the bytes present before anything behind
 * it is read. Frames whose headers are not in the first segment are
 * linearised in a cold function, or dropped (counted) when that is not
 * possible; nothing reads past a segment's data_len.
 *
 * Frames are rewritten in place: the caller hands over frames it owns (as
 * received, not shared with another reader).
 */
#include <errno.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "pppoe_filter.h"
#include "pppoe_private.h"

/* Session slots and counters are prefetched this many frames ahead. */
#define PF_AHEAD 8

/* ICMP errors per second a context sends at most, and the burst it may
 * send at once (RFC 1812 4.3.2.8, RFC 4443 2.4(f): rate-limit errors). */
#define ICMP_RATE 1000
#define ICMP_BURST 50
#define ICMP_TTL 64

#define IP4_HDR_LEN 20
#define IP6_HDR_LEN 40
#define TCP_HDR_LEN 20
#define ICMP_HDR_LEN 8
/* RFC 1812 4.3.2.3: an ICMP error quotes as much as fits in 576 bytes */
#define ICMP4_MAX_IP 576
/* RFC 4443 2.4(c): as much as fits in the IPv6 minimum MTU */
#define ICMP6_MAX_IP 1280

#define TCP_FLAG_SYN 0x02
#define TCP_OPT_EOL 0
#define TCP_OPT_NOP 1
#define TCP_OPT_MSS 2

#define ICMP6_ROUTER_SOLICIT 133
#define PPP_CONF_ACK 2 /* RFC 1661 5.2 */
/* the coarse clock of the handoff: TSC / 2^20 */
#define HOLD_CLOCK_SHIFT 20

/* The handoff (egw_pppoe.h): IP frames of a session whose NCP for them is
 * not open yet, but that arrive behind the peer's Configure-Ack of that
 * NCP, wait on the worker, at most HOLD_MAX per context and HOLD_PER_SESS
 * per session, for HOLD_MS after that Ack. */
#define HOLD_MAX 256
#define HOLD_PER_SESS 128
#define HOLD_MS 1000

/* Data-path counters of one session in one context. */
struct pppoe_sess_cnt {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};

struct egw_pppoe_ctx {
	/* read-mostly */
	unsigned int idx;
	uint32_t nb_sess; /* table size when created: counters has nb_sess + 1 */
	struct rte_mempool *pool;
	struct pppoe_sess_cnt *sess;
	uint64_t tsc_hz;
	uint64_t now;        /* TSC at the start of the burst, while filters are set */
	uint32_t hold_ticks; /* HOLD_MS on the coarse clock */
	/* per session id: when (coarse clock; 0: never) the peer's
	 * Configure-Ack of IPCP [0] and IPv6CP [1] passed here, and how many
	 * of its frames the hold has */
	struct hold_sess {
		uint32_t acked[2];
		uint32_t held;
		uint32_t stays; /* hold_release() pass in which one of its frames stayed */
	} * hs;
	uint32_t pass; /* hold_release() passes */
	/* per session id: TSC of the last burst in which it passed a frame its
	 * active filter matched (idle timeout; read by the control path) */
	uint64_t *active;
	/* written by the owning lcore */
	uint64_t icmp_tsc __rte_cache_aligned;
	uint32_t icmp_tokens;
	uint64_t drop[EGW_PPPOE_DROP_MAX];
	/* frames held for the handoff, in arrival order */
	uint16_t n_hold;
	bool releasing; /* hold_release() runs: held frames are not held behind others */
	struct hold_ent {
		struct rte_mbuf *m;
		uint64_t tsc; /* when held */
		uint16_t sid;
	} hold[HOLD_MAX];
} __rte_cache_aligned;

/* Registered contexts, for the sums session.c shows. */
static struct egw_pppoe_ctx *ctxs[EGW_PPPOE_MAX_CTX];

static const char *const drop_names[] = {
#define EGW_PPPOE_DROP(e, n, d) n,
#include "egw_pppoe_drop.def"
#undef EGW_PPPOE_DROP
};
static const char *const drop_descs[] = {
#define EGW_PPPOE_DROP(e, n, d) d,
#include "egw_pppoe_drop.def"
#undef EGW_PPPOE_DROP
};

const char *
egw_pppoe_drop_name(unsigned int reason)
{
	return reason < EGW_PPPOE_DROP_MAX ? drop_names[reason] : "unknown";
}

const char *
egw_pppoe_drop_desc(unsigned int reason)
{
	return reason < EGW_PPPOE_DROP_MAX ? drop_descs[reason] : "unknown";
}

int
egw_pppoe_active(void)
{
	return __atomic_load_n(&pppoe_dp.bound, __ATOMIC_RELAXED) != 0;
}

/* ---- contexts ---- */

struct egw_pppoe_ctx *
egw_pppoe_ctx_create(unsigned int idx, struct rte_mempool *pool)
{
	struct egw_pppoe_ctx *c;

	if (!pppoe_g.init || pppoe_dp.fp_tab == NULL || idx >= pppoe_g.nb_ctx ||
	    idx >= EGW_PPPOE_MAX_CTX || pool == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (ctxs[idx] != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	c = rte_zmalloc_socket("egw_pppoe_ctx", sizeof(*c), RTE_CACHE_LINE_SIZE, pool->socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->nb_sess = pppoe_g.table_size;
	c->sess = rte_zmalloc_socket("egw_pppoe_ctx_sess",
				     (c->nb_sess + 1) * sizeof(struct pppoe_sess_cnt),
				     RTE_CACHE_LINE_SIZE, pool->socket_id);
	c->hs = rte_zmalloc_socket("egw_pppoe_ctx_hold", (c->nb_sess + 1) * sizeof(c->hs[0]),
				   RTE_CACHE_LINE_SIZE, pool->socket_id);
	c->active = rte_zmalloc_socket("egw_pppoe_ctx_active", (c->nb_sess + 1) * sizeof(uint64_t),
				       RTE_CACHE_LINE_SIZE, pool->socket_id);
	if (c->sess == NULL || c->hs == NULL || c->active == NULL) {
		rte_free(c->sess);
		rte_free(c->hs);
		rte_free(c->active);
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	c->idx = idx;
	c->pool = pool;
	c->tsc_hz = rte_get_tsc_hz();
	c->hold_ticks = (uint32_t)((c->tsc_hz / 1000 * HOLD_MS) >> HOLD_CLOCK_SHIFT);
	c->icmp_tokens = ICMP_BURST;
	c->icmp_tsc = rte_rdtsc();
	/* Pairs with the acquire load in pppoe_fast_sess_counters(). */
	__atomic_store_n(&ctxs[idx], c, __ATOMIC_RELEASE);
	return c;
}

void
egw_pppoe_ctx_free(struct egw_pppoe_ctx *c)
{
	if (c == NULL)
		return;
	/*
	 * The context's per-session counts leave the sums with it: sessions
	 * show what the remaining contexts counted (session.c never lets a
	 * difference go below zero). Contexts are freed at shutdown.
	 */
	if (c->idx < EGW_PPPOE_MAX_CTX && ctxs[c->idx] == c)
		__atomic_store_n(&ctxs[c->idx], NULL, __ATOMIC_RELEASE);
	/* the caller flushed them (egw_pppoe_ctx_poll) if it counts them */
	while (c->n_hold != 0)
		rte_pktmbuf_free(c->hold[--c->n_hold].m);
	rte_free(c->sess);
	rte_free(c->hs);
	rte_free(c->active);
	rte_free(c);
}

uint64_t
pppoe_fast_sess_active(uint16_t sid)
{
	uint64_t last = 0;
	unsigned int i;

	for (i = 0; i < EGW_PPPOE_MAX_CTX; i++) {
		/* pairs with the release store in egw_pppoe_ctx_create() */
		const struct egw_pppoe_ctx *c = __atomic_load_n(&ctxs[i], __ATOMIC_ACQUIRE);

		if (c != NULL && sid <= c->nb_sess)
			last = RTE_MAX(last, __atomic_load_n(&c->active[sid], __ATOMIC_RELAXED));
	}
	return last;
}

/*
 * The session's pass filter on frame m (Ethernet II + IP, l2_len 14), and
 * its active filter for the idle timeout; only while pppoe_dp.filters is
 * set. false: drop (not passed).
 */
static __rte_noinline bool
policy_check(struct egw_pppoe_ctx *c, const struct pppoe_sess_fp *fp, struct rte_mbuf *m,
	     uint32_t filters)
{
	/* Pair with the release stores in policy.c: the program is complete
	 * before its pointer is seen. */
	const struct pppoe_filter *pass =
		__atomic_load_n(&fp->filt[EGW_PPPOE_FILTER_PASS], __ATOMIC_ACQUIRE);
	const struct pppoe_filter *act =
		__atomic_load_n(&fp->filt[EGW_PPPOE_FILTER_ACTIVE], __ATOMIC_ACQUIRE);

	if (!pppoe_filter_match(pass, m))
		return false;
	if ((filters & 2) != 0 && pppoe_filter_match(act, m))
		__atomic_store_n(&c->active[fp->sid], c->now, __ATOMIC_RELAXED);
	return true;
}

void
egw_pppoe_ctx_drops(const struct egw_pppoe_ctx *c, uint64_t drop[EGW_PPPOE_DROP_MAX])
{
	unsigned int i;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		drop[i] = __atomic_load_n(&c->drop[i], __ATOMIC_RELAXED);
}

void
pppoe_fast_sess_counters(uint16_t sid, uint64_t cnt[4])
{
	unsigned int i;

	cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
	for (i = 0; i < EGW_PPPOE_MAX_CTX; i++) {
		/* pairs with the release store in egw_pppoe_ctx_create() */
		const struct egw_pppoe_ctx *c = __atomic_load_n(&ctxs[i], __ATOMIC_ACQUIRE);
		const struct pppoe_sess_cnt *s;

		if (c == NULL || sid > c->nb_sess)
			continue;
		s = &c->sess[sid];
		cnt[0] += __atomic_load_n(&s->rx_pkts, __ATOMIC_RELAXED);
		cnt[1] += __atomic_load_n(&s->rx_bytes, __ATOMIC_RELAXED);
		cnt[2] += __atomic_load_n(&s->tx_pkts, __ATOMIC_RELAXED);
		cnt[3] += __atomic_load_n(&s->tx_bytes, __ATOMIC_RELAXED);
	}
}

/* ---- helpers ---- */

static inline uint16_t
ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
st16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Counters another thread reads: single writer, relaxed stores. */
static inline void
cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

static inline void
drop(struct egw_pppoe_ctx *c, struct egw_pppoe_res *res, struct rte_mbuf *m,
     enum egw_pppoe_drop why)
{
	rte_pktmbuf_free(m);
	cnt_add(&c->drop[why], 1);
	res->drop[why]++;
}

/*
 * Make the first segment hold need bytes (need <= pkt_len) by linearising
 * the frame into its first buffer. Cold: real frames have their headers in
 * the first segment. Returns 0, or -1 when the frame does not fit.
 */
static __rte_noinline int
pullup(struct rte_mbuf *m, uint32_t need)
{
	if (need > m->pkt_len)
		return -1;
	return rte_pktmbuf_linearize(m) == 0 && need <= m->data_len ? 0 : -1;
}

static inline int
ensure(struct rte_mbuf *m, uint32_t need)
{
	return likely(need <= m->data_len) ? 0 : pullup(m, need);
}

/* Cut the frame to len bytes (0 < len), whichever segment they end in. */
static void
trim_to(struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *s = m;
	uint32_t off = 0;
	uint16_t nb = 1;

	if (len >= m->pkt_len)
		return;
	while (len > off + s->data_len) {
		off += s->data_len;
		s = s->next;
		nb++;
	}
	s->data_len = (uint16_t)(len - off);
	if (s->next != NULL) {
		rte_pktmbuf_free(s->next);
		s->next = NULL;
	}
	m->nb_segs = nb;
	m->pkt_len = len;
}

/* RFC 1624 eqn. 3: checksum at ck after a 16-bit word changed from o to n. */
static inline void
cksum_update(uint8_t *ck, uint16_t o, uint16_t n)
{
	uint32_t s = (uint32_t)(uint16_t)~ld16(ck) + (uint16_t)~o + n;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	st16(ck, (uint16_t)~s);
}

/*
 * TCP segment at toff (tlen bytes of TCP header and data): lower its MSS
 * option to mss if it is a SYN. Every option length is checked against the
 * header; a malformed option list ends the walk and leaves the segment as
 * it is (the receiver will reject it).
 */
static __rte_noinline void
tcp_clamp(struct rte_mbuf *m, uint32_t toff, uint32_t tlen, uint16_t mss)
{
	uint32_t doff, i, len;
	uint8_t *t;
	uint16_t old;

	if (tlen < TCP_HDR_LEN || ensure(m, toff + TCP_HDR_LEN) < 0)
		return;
	t = rte_pktmbuf_mtod_offset(m, uint8_t *, toff);
	if ((t[13] & TCP_FLAG_SYN) == 0)
		return;
	doff = (uint32_t)(t[12] >> 4) * 4;
	if (doff <= TCP_HDR_LEN || doff > tlen || ensure(m, toff + doff) < 0)
		return;
	t = rte_pktmbuf_mtod_offset(m, uint8_t *, toff);
	for (i = TCP_HDR_LEN; i < doff; i += len) {
		if (t[i] == TCP_OPT_EOL)
			return;
		if (t[i] == TCP_OPT_NOP) {
			len = 1;
			continue;
		}
		if (i + 2 > doff)
			return;
		len = t[i + 1];
		if (len < 2 || i + len > doff)
			return;
		if (t[i] != TCP_OPT_MSS || len != 4)
			continue;
		old = ld16(t + i + 2);
		if (old <= mss)
			return;
		st16(t + i + 2, mss);
		/* The checksum sums 16-bit words from the (even) start of the
		 * header: a value at an odd offset straddles two words, which
		 * is the same as its bytes swapped in one (RFC 1071). */
		if ((i & 1) == 0)
			cksum_update(t + 16, old, mss);
		else
			cksum_update(t + 16, rte_bswap16(old), rte_bswap16(mss));
		return;
	}
}

/* Clamp the SYN in the IP packet at off (validated, ip_len bytes). */
static inline void
mss_clamp(struct rte_mbuf *m, uint32_t off, uint32_t ip_len, bool v6, uint16_t mss)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	uint32_t ihl;

	if (v6) {
		/* TCP right after the fixed header; extension headers are left */
		if (ip[6] == IPPROTO_TCP)
			tcp_clamp(m, off + IP6_HDR_LEN, ip_len - IP6_HDR_LEN, mss);
		return;
	}
	/* a fragment's TCP header may be elsewhere or split: left as it is */
	if (ip[9] != IPPROTO_TCP ||
	    (ld16(ip + 6) & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return;
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	tcp_clamp(m, off + ihl, ip_len - ihl, mss);
}

/*
 * The IP packet at off in m (avail bytes from there to the end of what the
 * outer header covers): its length if it is a well-formed IPv4 (v6 false) or
 * IPv6 header with a length field within avail, else 0. With segs, the
 * header is made contiguous first; *seg is set when that was impossible.
 */
static __rte_always_inline uint32_t
ip_check(struct rte_mbuf *m, uint32_t off, uint32_t avail, bool v6, bool *seg, const bool segs)
{
	const uint8_t *ip;
	uint32_t ihl, len;

	*seg = false;
	if (avail < (v6 ? IP6_HDR_LEN : IP4_HDR_LEN))
		return 0;
	/* a single segment holds every byte the length fields allow */
	if (segs && ensure(m, off + (v6 ? IP6_HDR_LEN : IP4_HDR_LEN)) < 0) {
		*seg = true;
		return 0;
	}
	ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	if (v6) {
		len = IP6_HDR_LEN + ld16(ip + 4);
		return (ip[0] >> 4) == 6 && len <= avail ? len : 0;
	}
	ihl = (uint32_t)(ip[0] & 0xf) * 4;
	len = ld16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < IP4_HDR_LEN || len < ihl || len > avail)
		return 0;
	/* options too: MSS clamping and the consumers read behind them */
	if (segs && ensure(m, off + ihl) < 0) {
		*seg = true;
		return 0;
	}
	return len;
}

/* ---- decapsulation ---- */

/* Does the frame come from the session's client, port and VLANs? */
static inline bool
key_match(const struct pppoe_sess_fp *fp, const struct rte_mbuf *m, const uint8_t *d,
	  uint8_t n_vlan)
{
	uint32_t a, fa;
	uint16_t b, fb;
	unsigned int diff;

	memcpy(&a, d + RTE_ETHER_ADDR_LEN, 4);
	memcpy(&b, d + RTE_ETHER_ADDR_LEN + 4, 2);
	memcpy(&fa, &fp->mac.addr_bytes[0], 4);
	memcpy(&fb, &fp->mac.addr_bytes[4], 2);
	diff = (a ^ fa) | (unsigned int)(b ^ fb) | (unsigned int)(fp->port ^ m->port) |
	       (unsigned int)(fp->n_vlan ^ n_vlan);
	if (n_vlan == 1)
		diff |= (m->vlan_tci & RTE_VLAN_ID_MASK) ^ fp->vid[0];
	else if (n_vlan == 2)
		diff |= ((m->vlan_tci_outer & RTE_VLAN_ID_MASK) ^ fp->vid[0]) |
			((m->vlan_tci & RTE_VLAN_ID_MASK) ^ fp->vid[1]);
	return diff == 0;
}

static inline void
prefetch_sess(const struct egw_pppoe_ctx *c, const struct pppoe_sess_fp *tab,
	      const struct rte_mbuf *m)
{
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *) + m->l2_len;
	uint32_t sid;

	if (unlikely(m->data_len < m->l2_len + 4u))
		return;
	sid = ld16(h + 2);
	if (sid - 1 < c->nb_sess) {
		rte_prefetch0(&tab[sid]);
		rte_prefetch0(&c->sess[sid]);
	}
}

/* An IPCP (v6 false) or IPv6CP packet at off of session sid passes to the
 * control path: if it is a Configure-Ack, note when (the handoff). */
static __rte_noinline void
ncp_ack_note(struct egw_pppoe_ctx *c, struct rte_mbuf *m, uint32_t off, uint16_t sid, bool v6,
	     bool segs)
{
	const uint8_t *p;

	if (segs && ensure(m, off + 1) < 0)
		return;
	p = rte_pktmbuf_mtod(m, const uint8_t *);
	if (p[off] == PPP_CONF_ACK) {
		uint32_t now = (uint32_t)(rte_rdtsc() >> HOLD_CLOCK_SHIFT);

		c->hs[sid].acked[v6] = now != 0 ? now : 1;
	}
}

/* The session's address (ip4) or /64 equals a (4 or 8 bytes). The control
 * path may rewrite them while a session is bound (an NCP went down and up):
 * atomic loads, relaxed (the NCP bit's acquire load ordered them). */
static inline bool
addr_is_session(const struct pppoe_sess_fp *fp, const void *a, bool v6)
{
	if (v6) {
		uint64_t x;

		memcpy(&x, a, sizeof(x));
		return x == __atomic_load_n(&fp->ip6_prefix64, __ATOMIC_RELAXED);
	} else {
		rte_be32_t x;

		memcpy(&x, a, sizeof(x));
		return x == __atomic_load_n(&fp->ip4, __ATOMIC_RELAXED);
	}
}

/* The source of the IP header at ip is the session's address or in its /64. */
static inline bool
src_is_session(const struct pppoe_sess_fp *fp, const uint8_t *ip, bool v6)
{
	return addr_is_session(fp, ip + (v6 ? 8 : 12), v6);
}

/* Where decap_frame() sends a frame (the caller appends it: the counts stay
 * in registers instead of being reloaded after every store to an mbuf). */
enum decap_verdict {
	DECAP_OUT,
	DECAP_CTRL,    /* to the control path: a session negotiating */
	DECAP_CTRL_UP, /* to the control path: a bound session's PPP control */
	DECAP_HOLD,    /* IP of an NCP not open (yet): held for the handoff */
	DECAP_DROPPED, /* freed and counted */
};

static __rte_always_inline enum decap_verdict
decap_frame(struct egw_pppoe_ctx *c, const struct pppoe_sess_fp *tab, struct rte_mbuf *m,
	    struct egw_pppoe_res *res, uint16_t *access_port, const bool segs)
{
	struct egw_eth_meta *meta = egw_eth_meta(m);
	uint32_t l2 = m->l2_len, plen, pl, off, ip_len, state;
	const struct pppoe_sess_fp *fp;
	struct pppoe_sess_cnt *sc;
	enum egw_pppoe_drop why;
	uint16_t port = m->port, proto, sid, etype, mss;
	uint8_t *d, *h, macs[2 * RTE_ETHER_ADDR_LEN], ncp;
	uint32_t filters;
	bool v6, seg;

	if (unlikely(meta->cls != EGW_ETH_CLS_PPPOE_SESS || m->pkt_len < l2 + PPPOE_HDR_LEN)) {
		why = EGW_PPPOE_DROP_BAD_HEADER;
		goto out_drop;
	}
	/* frames of a burst mostly share their port: checked once per run */
	if (unlikely(port != *access_port)) {
		if (port >= RTE_MAX_ETHPORTS ||
		    !__atomic_load_n(&pppoe_g.ports[port].access, __ATOMIC_RELAXED)) {
			why = EGW_PPPOE_DROP_NOT_ACCESS;
			goto out_drop;
		}
		*access_port = port;
	}
	/* the PPPoE header and the protocol field (what there is of it) */
	if (segs && unlikely(ensure(m, RTE_MIN(m->pkt_len, l2 + PPPOE_HDR_LEN + 2)) < 0)) {
		why = EGW_PPPOE_DROP_SEGMENTED;
		goto out_drop;
	}
	d = rte_pktmbuf_mtod(m, uint8_t *);
	h = d + l2;
	if (unlikely(h[0] != PPPOE_VER_TYPE || h[1] != PPPOE_CODE_SESS)) {
		why = EGW_PPPOE_DROP_BAD_HEADER;
		goto out_drop;
	}
	plen = ld16(h + 4);
	if (unlikely(plen > m->pkt_len - l2 - PPPOE_HDR_LEN)) {
		why = EGW_PPPOE_DROP_BAD_LENGTH;
		goto out_drop;
	}
	if (unlikely(plen < 2)) {
		why = EGW_PPPOE_DROP_SHORT_PAYLOAD;
		goto out_drop;
	}
	/* ids 0 and 0xFFFF are never in the table (size <= 65534) */
	sid = ld16(h + 2);
	if (unlikely((uint32_t)sid - 1 >= c->nb_sess)) {
		why = EGW_PPPOE_DROP_UNKNOWN_SESSION;
		goto out_drop;
	}
	fp = &tab[sid];
	/* Pairs with the release store in session.c state_set(): the key and
	 * every other field of the slot are read after this load. */
	state = __atomic_load_n(&fp->state, __ATOMIC_ACQUIRE);
	if (unlikely(state == EGW_PPPOE_S_FREE || !key_match(fp, m, d, meta->n_vlan))) {
		why = EGW_PPPOE_DROP_UNKNOWN_SESSION;
		goto out_drop;
	}
	if (unlikely(state == EGW_PPPOE_S_CLOSING)) {
		why = EGW_PPPOE_DROP_CLOSING;
		goto out_drop;
	}
	/* RFC 1661 2: an odd first octet is a compressed (1-byte) protocol */
	if (h[PPPOE_HDR_LEN] & 1) {
		proto = h[PPPOE_HDR_LEN];
		pl = 1;
	} else {
		proto = ld16(h + PPPOE_HDR_LEN);
		pl = 2;
	}
	/* Pairs with the release stores of fp->ncp in session.c. */
	ncp = __atomic_load_n(&fp->ncp, __ATOMIC_ACQUIRE);
	/* behind frames of its session still held: held too (their order) */
	if (unlikely(c->n_hold != 0) && (proto == PPP_IP || proto == PPP_IPV6) &&
	    c->hs[sid].held != 0 && !c->releasing)
		return DECAP_HOLD;
	if (proto == PPP_IP && (ncp & PPPOE_NCP_IP4)) {
		v6 = false;
		etype = RTE_ETHER_TYPE_IPV4;
		mss = __atomic_load_n(&fp->mss4, __ATOMIC_RELAXED);
	} else if (proto == PPP_IPV6 && (ncp & PPPOE_NCP_IP6)) {
		v6 = true;
		etype = RTE_ETHER_TYPE_IPV6;
		mss = __atomic_load_n(&fp->mss6, __ATOMIC_RELAXED);
	} else if (proto == PPP_IPV6 && (ncp & PPPOE_NCP_IP6_NOPFX)) {
		why = EGW_PPPOE_DROP_IPV6_NO_PREFIX;
		goto out_drop;
	} else if (proto == PPP_IP || proto == PPP_IPV6) {
		/* Data of an NCP not open. Behind the peer's Configure-Ack of
		 * that NCP it is legitimate: the peer is Opened once it sent
		 * the Ack, the control path may not have read it yet. Such
		 * frames wait here, in order; the rest is discarded (RFC 1661
		 * 4: data of a protocol not Opened). */
		uint32_t t = c->hs[sid].acked[proto == PPP_IPV6];

		/* the Ack seen here within the hold time, and the NCP still in
		 * Ack-Sent (not a previous holder's of the id, not renegotiating) */
		if (t != 0 &&
		    (ncp & (proto == PPP_IPV6 ? PPPOE_NCP_IP6_ACKSENT : PPPOE_NCP_IP4_ACKSENT)) &&
		    (uint32_t)((uint32_t)(rte_rdtsc() >> HOLD_CLOCK_SHIFT) - t) < c->hold_ticks)
			return DECAP_HOLD;
		why = EGW_PPPOE_DROP_NCP_NOT_OPEN;
		goto out_drop;
	} else {
		/* LCP, authentication, NCPs: the peer's Configure-Ack of an
		 * NCP whose control path acked the peer's request already (the
		 * Ack opens it: RFC 1661 Ack-Sent) is remembered (see above) */
		if (unlikely(proto == PPP_IPCP
				     ? (ncp & PPPOE_NCP_IP4_ACKSENT)
				     : proto == PPP_IPV6CP && (ncp & PPPOE_NCP_IP6_ACKSENT)) &&
		    plen > pl)
			ncp_ack_note(c, m, l2 + PPPOE_HDR_LEN + pl, sid, proto == PPP_IPV6CP, segs);
		goto out_ctrl;
	}

	off = l2 + PPPOE_HDR_LEN + pl;
	ip_len = ip_check(m, off, plen - pl, v6, &seg, segs);
	if (unlikely(ip_len == 0)) {
		why = seg ? EGW_PPPOE_DROP_SEGMENTED : EGW_PPPOE_DROP_BAD_INNER;
		goto out_drop;
	}
	d = rte_pktmbuf_mtod(m, uint8_t *);
	if (v6 && d[off + 6] == IPPROTO_ICMPV6 && ip_len > IP6_HDR_LEN) {
		/* router solicitations are answered by the control path */
		if (segs && ensure(m, off + IP6_HDR_LEN + 1) < 0) {
			why = EGW_PPPOE_DROP_SEGMENTED;
			goto out_drop;
		}
		d = rte_pktmbuf_mtod(m, uint8_t *);
		if (d[off + IP6_HDR_LEN] == ICMP6_ROUTER_SOLICIT)
			goto out_ctrl;
	}
	/* Source address validation (BCP 38): a subscriber sends from its own
	 * IPv4 address or from inside its own /64, nothing else is forwarded
	 * (link-local sources neither: RFC 4291 2.5.6). The address was
	 * written before the NCP bit loaded above with acquire. */
	if (unlikely(!src_is_session(fp, d + off, v6)) &&
	    !((ncp & PPPOE_NCP_FRAMED) && pppoe_g.src_check != NULL &&
	      pppoe_g.src_check(fp->sid, v6, d + off + (v6 ? 8 : 12), pppoe_g.src_check_arg))) {
		why = EGW_PPPOE_DROP_SPOOFED;
		goto out_drop;
	}

	/* Ethernet padding and anything else behind the IP packet */
	if (segs)
		trim_to(m, off + ip_len);
	else
		m->data_len = (uint16_t)(m->pkt_len = off + ip_len);
	/* New Ethernet header right before the IP header, same addresses
	 * (the copy goes through macs[]: the two places may overlap). */
	memcpy(macs, d, sizeof(macs));
	d = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)(off - RTE_ETHER_HDR_LEN));
	memcpy(d, macs, sizeof(macs));
	st16(d + 2 * RTE_ETHER_ADDR_LEN, etype);

	/* what lib/eth would have recorded for this frame */
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->packet_type = RTE_PTYPE_L2_ETHER |
			 (v6 ? RTE_PTYPE_L3_IPV6_EXT_UNKNOWN : RTE_PTYPE_L3_IPV4_EXT_UNKNOWN);
	m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ | RTE_MBUF_F_RX_VLAN_STRIPPED |
			 RTE_MBUF_F_RX_QINQ_STRIPPED);
	m->vlan_tci = 0;
	m->vlan_tci_outer = 0;
	meta->cls = v6 ? EGW_ETH_CLS_IPV6 : EGW_ETH_CLS_IPV4;
	meta->n_vlan = 0;
	meta->reserved = 0;
	meta->proto = rte_cpu_to_be_16(etype);

	/* the pass filter judges the frame as it leaves, an Ethernet II frame */
	filters = __atomic_load_n(&pppoe_dp.filters, __ATOMIC_ACQUIRE);
	if (unlikely(filters != 0) && !policy_check(c, fp, m, filters)) {
		why = EGW_PPPOE_DROP_FILTERED;
		goto out_drop;
	}
	if (mss != 0)
		mss_clamp(m, RTE_ETHER_HDR_LEN, ip_len, v6, mss);

	sc = &c->sess[sid];
	cnt_add(&sc->rx_pkts, 1);
	cnt_add(&sc->rx_bytes, ip_len);
	return DECAP_OUT;
out_ctrl:
	return state == EGW_PPPOE_S_BOUND ? DECAP_CTRL_UP : DECAP_CTRL;
out_drop:
	drop(c, res, m, why);
	return DECAP_DROPPED;
}

/* Frames with more than one segment: the same checks, headers made contiguous first. */
static __rte_noinline enum decap_verdict
decap_frame_segs(struct egw_pppoe_ctx *c, const struct pppoe_sess_fp *tab, struct rte_mbuf *m,
		 struct egw_pppoe_res *res, uint16_t access_port)
{
	/* its own copy of the port checked: the caller's stays in a register */
	return decap_frame(c, tab, m, res, &access_port, true);
}

/* Frames of a burst that fit in the result arrays; the rest are dropped. */
static uint16_t
burst_room(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], uint16_t n, uint16_t used,
	   struct egw_pppoe_res *res)
{
	uint16_t room = used < EGW_PPPOE_MAX_BURST ? EGW_PPPOE_MAX_BURST - used : 0, i;

	if (likely(n <= room))
		return n;
	for (i = room; i < n; i++)
		drop(c, res, pkts[i], EGW_PPPOE_DROP_OVERFLOW);
	return room;
}

/* ---- the handoff's hold ---- */

/* Hold m (DECAP_HOLD), or drop it when the hold is full. */
static __rte_noinline void
hold_add(struct egw_pppoe_ctx *c, struct rte_mbuf *m, struct egw_pppoe_res *res)
{
	const uint8_t *h = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len);
	uint16_t sid = ld16(h + 2);

	/* decap_frame() checked sid against the table size */
	if (c->n_hold == HOLD_MAX || c->hs[sid].held == HOLD_PER_SESS) {
		drop(c, res, m, EGW_PPPOE_DROP_NCP_NOT_OPEN);
		return;
	}
	c->hold[c->n_hold].m = m;
	c->hold[c->n_hold].tsc = rte_rdtsc();
	c->hold[c->n_hold].sid = sid;
	c->n_hold++;
	c->hs[sid].held++;
}

/*
 * Held frames of port, in arrival order, while room remains in res: those
 * whose NCP opened are decapsulated (res->out), those of a session gone are
 * dropped with its reason, those waiting longer than HOLD_MS (or all, with
 * flush) are dropped as ncp_not_open; the others stay. A session's frames
 * that stay keep the later ones of the session held too (decap_frame()).
 */
static __rte_noinline void
hold_release(struct egw_pppoe_ctx *c, const struct pppoe_sess_fp *tab, uint16_t port, uint16_t room,
	     bool flush, struct egw_pppoe_res *res)
{
	uint64_t now = rte_rdtsc(), limit = c->tsc_hz / 1000 * HOLD_MS;
	uint16_t i, k = 0, access_port = UINT16_MAX;

	c->releasing = true;
	/* 0 is no pass: a session's stays starts at 0 */
	if (++c->pass == 0)
		c->pass = 1;
	for (i = 0; i < c->n_hold; i++) {
		struct hold_ent e = c->hold[i];
		enum decap_verdict v;

		/* Once a frame of a session stays, its later frames stay: the
		 * control path may open the NCP while this loop runs, and they
		 * must not overtake it. */
		if (e.m->port != port || room == 0 || c->hs[e.sid].stays == c->pass) {
			c->hold[k++] = e;
			continue;
		}
		c->hs[e.sid].held--;
		if (flush) {
			drop(c, res, e.m, EGW_PPPOE_DROP_NCP_NOT_OPEN);
			continue;
		}
		if (e.m->nb_segs == 1)
			v = decap_frame(c, tab, e.m, res, &access_port, false);
		else
			v = decap_frame_segs(c, tab, e.m, res, access_port);
		switch (v) {
		case DECAP_OUT:
			res->out[res->n_out++] = e.m;
			room--;
			break;
		case DECAP_CTRL:
		case DECAP_CTRL_UP:
			res->ctrl_up[res->n_ctrl] = v == DECAP_CTRL_UP;
			res->ctrl[res->n_ctrl++] = e.m;
			room--;
			break;
		case DECAP_HOLD:
			if (now - e.tsc > limit) {
				drop(c, res, e.m, EGW_PPPOE_DROP_NCP_NOT_OPEN);
			} else {
				c->hold[k++] = e;
				c->hs[e.sid].held++;
				c->hs[e.sid].stays = c->pass;
			}
			break;
		case DECAP_DROPPED: break;
		}
	}
	c->n_hold = k;
	c->releasing = false;
}

unsigned int
egw_pppoe_ctx_held(const struct egw_pppoe_ctx *c)
{
	return c->n_hold;
}

void
egw_pppoe_ctx_poll(struct egw_pppoe_ctx *c, uint16_t port, bool flush, struct egw_pppoe_res *res)
{
	uint16_t used = RTE_MAX(res->n_out, res->n_ctrl);

	if (c->n_hold != 0)
		hold_release(c, pppoe_dp.fp_tab, port,
			     used < EGW_PPPOE_MAX_BURST ? EGW_PPPOE_MAX_BURST - used : 0, flush,
			     res);
}

void
egw_pppoe_decap_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		      struct egw_pppoe_res *res)
{
	const struct pppoe_sess_fp *tab = pppoe_dp.fp_tab;
	uint16_t i, n_out, n_ctrl, access_port = UINT16_MAX; /* no port is UINT16_MAX */
	enum decap_verdict v;

	n = burst_room(c, pkts, n, RTE_MAX(res->n_out, res->n_ctrl), res);
	if (unlikely(__atomic_load_n(&pppoe_dp.filters, __ATOMIC_RELAXED) & 2))
		c->now = rte_rdtsc(); /* the idle timeout's clock */
	/* what waited for the handoff goes before this burst's frames */
	if (unlikely(c->n_hold != 0) && n != 0) {
		uint16_t used = RTE_MAX(res->n_out, res->n_ctrl) + n;

		hold_release(c, tab, pkts[0]->port,
			     used < EGW_PPPOE_MAX_BURST ? EGW_PPPOE_MAX_BURST - used : 0, false,
			     res);
	}
	n_out = res->n_out;
	n_ctrl = res->n_ctrl;
	for (i = 0; i < n && i < PF_AHEAD; i++)
		prefetch_sess(c, tab, pkts[i]);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (i + PF_AHEAD < n)
			prefetch_sess(c, tab, pkts[i + PF_AHEAD]);
		if (likely(m->nb_segs == 1))
			v = decap_frame(c, tab, m, res, &access_port, false);
		else
			v = decap_frame_segs(c, tab, m, res, access_port);
		if (likely(v == DECAP_OUT)) {
			res->out[n_out++] = m;
		} else if (v == DECAP_CTRL || v == DECAP_CTRL_UP) {
			res->ctrl_up[n_ctrl] = v == DECAP_CTRL_UP;
			res->ctrl[n_ctrl++] = m;
		} else if (v == DECAP_HOLD) {
			hold_add(c, m, res);
		}
	}
	res->n_out = n_out;
	res->n_ctrl = n_ctrl;
}

/* ---- ICMP too-big ---- */

/* Token bucket of the context: true if one more ICMP may go now. */
static bool
icmp_allowed(struct egw_pppoe_ctx *c)
{
	uint64_t now = rte_rdtsc();
	uint64_t add = (now - c->icmp_tsc) * ICMP_RATE / c->tsc_hz;

	if (add != 0) {
		c->icmp_tokens = (uint32_t)RTE_MIN((uint64_t)ICMP_BURST, c->icmp_tokens + add);
		c->icmp_tsc = now;
	}
	if (c->icmp_tokens == 0)
		return false;
	c->icmp_tokens--;
	return true;
}

/*
 * May an ICMP error answer this IPv4 packet (RFC 1122 3.2.2, RFC 1812
 * 4.3.2.7)? Not for a non-first fragment, an ICMP error, nor from "this
 * network", loopback, multicast, reserved or broadcast sources.
 */
static bool
icmp4_may_answer(struct rte_mbuf *m, uint32_t off, uint32_t ip_len)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
	uint8_t s0 = ip[12], t;

	if (s0 == 0 || s0 == 127 || s0 >= 224 || (ld16(ip + 6) & RTE_IPV4_HDR_OFFSET_MASK) != 0)
		return false;
	if (ip[9] != IPPROTO_ICMP)
		return true;
	if (ip_len <= ihl || ensure(m, off + ihl + 1) < 0)
		return false;
	t = rte_pktmbuf_mtod_offset(m, const uint8_t *, off + ihl)[0];
	/* destination unreachable, source quench, redirect, time exceeded,
	 * parameter problem */
	return t != 3 && t != 4 && t != 5 && t != 11 && t != 12;
}

/*
 * May an ICMPv6 error answer this IPv6 packet (RFC 4443 2.4(e))? Not from a
 * multicast or the unspecified source, not for an ICMPv6 error or a
 * non-first fragment. Extension headers are walked as far as the first
 * segment holds them; not knowing counts as no.
 */
static bool
icmp6_may_answer(struct rte_mbuf *m, uint32_t off, uint32_t ip_len)
{
	static const uint8_t zero[16];
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	uint32_t x = IP6_HDR_LEN, lim = RTE_MIN(ip_len, (uint32_t)m->data_len - off);
	uint8_t nh = ip[6];

	if (ip[8] == 0xff || memcmp(ip + 8, zero, 16) == 0)
		return false;
	for (;;) {
		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			if (x + 2 > lim)
				return false;
			nh = ip[x];
			x += ((uint32_t)ip[x + 1] + 1) * 8;
			break;
		case IPPROTO_FRAGMENT:
			if (x + 8 > lim || (ld16(ip + x + 2) & 0xfff8) != 0)
				return false;
			nh = ip[x];
			x += 8;
			break;
		case IPPROTO_ICMPV6: return x < lim && ip[x] >= 128; /* informational */
		default: return true;
		}
	}
}

/* Copy len bytes of m from offset off to dst, across segments. */
static void
quote_copy(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *dst)
{
	const void *p = rte_pktmbuf_read(m, off, len, dst);

	if (p != NULL && p != dst)
		memcpy(dst, p, len);
}

/*
 * ICMP destination unreachable / fragmentation needed (RFC 792, RFC 1191
 * next-hop MTU) or ICMPv6 packet too big (RFC 4443 3.2) for the IP packet at
 * l2 in m, from the concentrator's own address, back to the sender through
 * the frame's own link header (addresses swapped, tags kept). NULL if none
 * may or can be sent.
 */
static struct rte_mbuf *
icmp_too_big(struct egw_pppoe_ctx *c, struct rte_mbuf *m, uint32_t l2, uint32_t ip_len, bool v6,
	     uint16_t mtu)
{
	uint32_t quote, frame_len;
	struct rte_mbuf *r;
	const uint8_t *o;
	uint8_t *d, *ip, *icmp, local6[16] = {0};
	rte_be32_t local4 = 0, mtu_be;
	uint16_t ck;

	if (v6) {
		/* a torn or stale copy only changes the ICMP source */
		memcpy(local6, pppoe_g.local6, sizeof(local6));
		if (local6[0] == 0 || !icmp6_may_answer(m, l2, ip_len))
			return NULL;
		quote = RTE_MIN(ip_len, (uint32_t)(ICMP6_MAX_IP - IP6_HDR_LEN - ICMP_HDR_LEN));
		frame_len = l2 + IP6_HDR_LEN + ICMP_HDR_LEN + quote;
	} else {
		local4 = __atomic_load_n(&pppoe_g.local4, __ATOMIC_RELAXED);
		if (local4 == 0 || !icmp4_may_answer(m, l2, ip_len))
			return NULL;
		quote = RTE_MIN(ip_len, (uint32_t)(ICMP4_MAX_IP - IP4_HDR_LEN - ICMP_HDR_LEN));
		frame_len = l2 + IP4_HDR_LEN + ICMP_HDR_LEN + quote;
	}
	if (!icmp_allowed(c))
		return NULL;
	r = rte_pktmbuf_alloc(c->pool);
	if (r == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)frame_len);
	if (d == NULL) {
		rte_pktmbuf_free(r);
		return NULL;
	}
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	/* link header back to the sender: addresses swapped, tags kept */
	memcpy(d, o + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
	memcpy(d + RTE_ETHER_ADDR_LEN, o, RTE_ETHER_ADDR_LEN);
	memcpy(d + 2 * RTE_ETHER_ADDR_LEN, o + 2 * RTE_ETHER_ADDR_LEN, l2 - 2 * RTE_ETHER_ADDR_LEN);
	ip = d + l2;
	if (v6) {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

		memset(ip, 0, IP6_HDR_LEN + ICMP_HDR_LEN);
		h->vtc_flow = rte_cpu_to_be_32(6u << 28);
		h->payload_len = rte_cpu_to_be_16((uint16_t)(ICMP_HDR_LEN + quote));
		h->proto = IPPROTO_ICMPV6;
		h->hop_limits = ICMP_TTL;
		memcpy(h->src_addr, local6, 16);
		memcpy(h->dst_addr, o + l2 + 8, 16);
		icmp = ip + IP6_HDR_LEN;
		icmp[0] = 2; /* packet too big */
		mtu_be = rte_cpu_to_be_32(mtu);
		memcpy(icmp + 4, &mtu_be, 4);
		quote_copy(m, l2, quote, icmp + ICMP_HDR_LEN);
		ck = rte_ipv6_udptcp_cksum(h, icmp);
		memcpy(icmp + 2, &ck, 2);
		r->packet_type = RTE_PTYPE_L3_IPV6_EXT_UNKNOWN;
	} else {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		memset(ip, 0, IP4_HDR_LEN + ICMP_HDR_LEN);
		h->version_ihl = RTE_IPV4_VHL_DEF;
		h->total_length = rte_cpu_to_be_16((uint16_t)(IP4_HDR_LEN + ICMP_HDR_LEN + quote));
		/* the id only needs to differ between nearby messages */
		h->packet_id = rte_cpu_to_be_16((uint16_t)rte_rdtsc());
		h->time_to_live = ICMP_TTL;
		h->next_proto_id = IPPROTO_ICMP;
		h->src_addr = local4;
		memcpy(&h->dst_addr, o + l2 + 12, 4);
		h->hdr_checksum = rte_ipv4_cksum(h);
		icmp = ip + IP4_HDR_LEN;
		icmp[0] = 3;         /* destination unreachable */
		icmp[1] = 4;         /* fragmentation needed and DF set */
		st16(icmp + 6, mtu); /* RFC 1191 next-hop MTU */
		quote_copy(m, l2, quote, icmp + ICMP_HDR_LEN);
		ck = (uint16_t)~rte_raw_cksum(icmp, ICMP_HDR_LEN + quote);
		memcpy(icmp + 2, &ck, 2);
		r->packet_type = RTE_PTYPE_L3_IPV4_EXT_UNKNOWN;
	}
	/* classified as lib/eth would classify it, for the same port */
	r->port = m->port;
	r->l2_len = (uint16_t)l2;
	r->packet_type |= m->packet_type & RTE_PTYPE_L2_MASK;
	r->vlan_tci = m->vlan_tci;
	r->vlan_tci_outer = m->vlan_tci_outer;
	r->ol_flags |= m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ);
	*egw_eth_meta(r) = *egw_eth_meta(m);
	egw_eth_meta(r)->dst = EGW_ETH_DST_OTHERHOST;
	return r;
}

/*
 * Too big for the session: dropped, with an ICMP too-big when one may be
 * sent. IPv4 gets one whether DF is set or not: the concentrator does not
 * fragment toward subscribers, and the sender learns the MTU either way.
 */
static __rte_noinline void
too_big(struct egw_pppoe_ctx *c, struct rte_mbuf *m, uint32_t l2, uint32_t ip_len, bool v6,
	uint16_t mru, struct egw_pppoe_res *res)
{
	struct rte_mbuf *r = NULL;

	if (res->n_icmp < EGW_PPPOE_MAX_BURST)
		r = icmp_too_big(c, m, l2, ip_len, v6, mru);
	if (r != NULL) {
		res->icmp[res->n_icmp++] = r;
		drop(c, res, m, EGW_PPPOE_DROP_TOO_BIG);
	} else {
		drop(c, res, m, EGW_PPPOE_DROP_TOO_BIG_NO_ICMP);
	}
}

/* ---- encapsulation ---- */

/* lib/eth's packet types of a PPPoE session frame by number of tags */
static const uint32_t pppoe_ptype[3] = {
	RTE_PTYPE_L2_ETHER_PPPOE,
	RTE_PTYPE_L2_ETHER_VLAN,
	RTE_PTYPE_L2_ETHER_QINQ,
};

/* What a frame of an encap chunk is: not looked up, IPv4, IPv6. */
enum { ENC_PASS, ENC_V4, ENC_V6 };

static inline void
encap_frame(struct egw_pppoe_ctx *c, struct rte_mbuf *m, const struct pppoe_sess_fp *fp,
	    const void *key, bool v6, bool fib, struct egw_pppoe_res *res)
{
	uint32_t l2 = m->l2_len, ip_len, need, state, filters;
	struct egw_eth_meta *meta;
	struct pppoe_sess_cnt *sc;
	uint16_t mru, mss, hl;
	uint8_t *d, ncp, bit = v6 ? PPPOE_NCP_IP6 : PPPOE_NCP_IP4;
	bool seg;

	if (fp == NULL)
		goto pass;
	/* Pairs with the release store in session.c state_set(). */
	state = __atomic_load_n(&fp->state, __ATOMIC_ACQUIRE);
	/* Pairs with the release stores of fp->ncp in session.c. */
	ncp = __atomic_load_n(&fp->ncp, __ATOMIC_ACQUIRE);
	if (state != EGW_PPPOE_S_BOUND || (ncp & bit) == 0)
		goto pass;
	/* The route may be a moment older than the session's address (an NCP
	 * closed and opened again): only the address itself is sent on; or,
	 * from the caller's FIB, a prefix routed to the session (the FIB
	 * value named it, and its routes go before its grace period). */
	if (!addr_is_session(fp, key, v6) && !(fib && (ncp & PPPOE_NCP_FRAMED)))
		goto pass;

	ip_len = ip_check(m, l2, m->pkt_len - l2, v6, &seg, true);
	if (unlikely(ip_len == 0)) {
		drop(c, res, m, seg ? EGW_PPPOE_DROP_SEGMENTED : EGW_PPPOE_DROP_BAD_INNER);
		return;
	}
	mru = __atomic_load_n(&fp->mru, __ATOMIC_RELAXED);
	if (unlikely(ip_len > mru)) {
		too_big(c, m, l2, ip_len, v6, mru, res);
		return;
	}
	hl = fp->hdr_len;
	need = hl + 2u;
	if (unlikely(rte_pktmbuf_headroom(m) + l2 < need)) {
		drop(c, res, m, EGW_PPPOE_DROP_NOMEM);
		return;
	}
	trim_to(m, l2 + ip_len);
	filters = __atomic_load_n(&pppoe_dp.filters, __ATOMIC_ACQUIRE);
	if (unlikely(filters != 0)) {
		/* the filter sees an Ethernet II frame: tags of the ingress
		 * port go now (the header is replaced below anyway) */
		if (l2 != RTE_ETHER_HDR_LEN) {
			uint8_t macs[2 * RTE_ETHER_ADDR_LEN];

			d = rte_pktmbuf_mtod(m, uint8_t *);
			memcpy(macs, d, sizeof(macs));
			d = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)(l2 - RTE_ETHER_HDR_LEN));
			memcpy(d, macs, sizeof(macs));
			st16(d + 2 * RTE_ETHER_ADDR_LEN,
			     v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
			l2 = RTE_ETHER_HDR_LEN;
			m->l2_len = RTE_ETHER_HDR_LEN;
		}
		if (!policy_check(c, fp, m, filters)) {
			drop(c, res, m, EGW_PPPOE_DROP_FILTERED);
			return;
		}
	}
	mss = __atomic_load_n(v6 ? &fp->mss6 : &fp->mss4, __ATOMIC_RELAXED);
	if (mss != 0)
		mss_clamp(m, l2, ip_len, v6, mss);

	rte_pktmbuf_adj(m, (uint16_t)l2);
	d = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)need);
	memcpy(d, fp->hdr, hl);
	st16(d + hl - 2, (uint16_t)(ip_len + 2));
	st16(d + hl, v6 ? PPP_IPV6 : PPP_IP);

	/* what lib/eth would record for the frame */
	meta = egw_eth_meta(m);
	m->l2_len = (uint16_t)(hl - PPPOE_HDR_LEN);
	m->packet_type = pppoe_ptype[fp->n_vlan];
	m->ol_flags &= ~(RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ | RTE_MBUF_F_RX_VLAN_STRIPPED |
			 RTE_MBUF_F_RX_QINQ_STRIPPED);
	if (fp->n_vlan == 1) {
		m->vlan_tci = ld16(fp->hdr + 14);
		m->ol_flags |= RTE_MBUF_F_RX_VLAN;
	} else if (fp->n_vlan == 2) {
		m->vlan_tci_outer = ld16(fp->hdr + 14);
		m->vlan_tci = ld16(fp->hdr + 18);
		m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ;
	}
	meta->cls = EGW_ETH_CLS_PPPOE_SESS;
	meta->dst = EGW_ETH_DST_OTHERHOST;
	meta->n_vlan = fp->n_vlan;
	meta->reserved = 0;
	meta->proto = rte_cpu_to_be_16(EGW_ETHER_TYPE_PPPOE_SESS);

	sc = &c->sess[fp->sid];
	cnt_add(&sc->tx_pkts, 1);
	cnt_add(&sc->tx_bytes, ip_len);
	res->out_port[res->n_out] = fp->port;
	res->out[res->n_out++] = m;
	return;
pass:
	res->pass[res->n_pass++] = m;
}

/* Both lines of a slot: the state and address, then the header template. */
static inline void
prefetch_fp(const void *fp)
{
	rte_prefetch0(fp);
	rte_prefetch0((const uint8_t *)fp + RTE_CACHE_LINE_SIZE);
}

void
egw_pppoe_encap_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
		      struct egw_pppoe_res *res)
{
	struct rte_hash *h4 = pppoe_route_tab(PPPOE_NCP_IP4), *h6 = pppoe_route_tab(PPPOE_NCP_IP6);
	const void *p4[RTE_HASH_LOOKUP_BULK_MAX], *p6[RTE_HASH_LOOKUP_BULK_MAX];
	void *d4[RTE_HASH_LOOKUP_BULK_MAX], *d6[RTE_HASH_LOOKUP_BULK_MAX];
	uint32_t k4[RTE_HASH_LOOKUP_BULK_MAX];
	uint64_t k6[RTE_HASH_LOOKUP_BULK_MAX], hit4, hit6;
	uint8_t kind[RTE_HASH_LOOKUP_BULK_MAX], slot[RTE_HASH_LOOKUP_BULK_MAX];
	uint16_t done, k, i, n4, n6;

	n = burst_room(c, pkts, n, RTE_MAX(res->n_out, res->n_pass), res);
	if (unlikely(__atomic_load_n(&pppoe_dp.filters, __ATOMIC_RELAXED) & 2))
		c->now = rte_rdtsc(); /* the idle timeout's clock */
	/* rte_hash takes at most RTE_HASH_LOOKUP_BULK_MAX keys a call */
	for (done = 0; done < n; done += k) {
		k = (uint16_t)RTE_MIN(n - done, RTE_HASH_LOOKUP_BULK_MAX);
		n4 = n6 = 0;
		for (i = 0; i < k; i++) {
			struct rte_mbuf *m = pkts[done + i];
			uint8_t cls = egw_eth_meta(m)->cls;
			uint32_t l2 = m->l2_len;
			const uint8_t *ip;

			kind[i] = ENC_PASS;
			if (cls == EGW_ETH_CLS_IPV4 && ensure(m, l2 + IP4_HDR_LEN) == 0) {
				ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
				memcpy(&k4[n4], ip + 16, 4);
				p4[n4] = &k4[n4];
				kind[i] = ENC_V4;
				slot[i] = (uint8_t)n4++;
			} else if (cls == EGW_ETH_CLS_IPV6 && ensure(m, l2 + IP6_HDR_LEN) == 0) {
				ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
				memcpy(&k6[n6], ip + 24, 8);
				p6[n6] = &k6[n6];
				kind[i] = ENC_V6;
				slot[i] = (uint8_t)n6++;
			}
		}
		hit4 = hit6 = 0;
		if (n4 != 0 && (h4 == NULL || rte_hash_lookup_bulk_data(h4, p4, n4, &hit4, d4) < 0))
			hit4 = 0;
		if (n6 != 0 && (h6 == NULL || rte_hash_lookup_bulk_data(h6, p6, n6, &hit6, d6) < 0))
			hit6 = 0;
		for (i = 0; i < n4; i++)
			if ((hit4 >> i) & 1)
				prefetch_fp(d4[i]);
		for (i = 0; i < n6; i++)
			if ((hit6 >> i) & 1)
				prefetch_fp(d6[i]);
		for (i = 0; i < k; i++) {
			struct rte_mbuf *m = pkts[done + i];
			uint8_t s = slot[i];

			if (kind[i] == ENC_V4)
				encap_frame(c, m, (hit4 >> s) & 1 ? d4[s] : NULL, &k4[s], false,
					    false, res);
			else if (kind[i] == ENC_V6)
				encap_frame(c, m, (hit6 >> s) & 1 ? d6[s] : NULL, &k6[s], true,
					    false, res);
			else
				res->pass[res->n_pass++] = m;
		}
	}
}

void
egw_pppoe_encap_sid_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], const uint32_t sids[],
			  uint16_t n, struct egw_pppoe_res *res)
{
	const struct pppoe_sess_fp *fp[EGW_PPPOE_MAX_BURST];
	struct pppoe_sess_fp *tab = pppoe_dp.fp_tab;
	uint32_t size = pppoe_g.table_size;
	uint16_t i;

	n = burst_room(c, pkts, n, RTE_MAX(res->n_out, res->n_pass), res);
	if (unlikely(__atomic_load_n(&pppoe_dp.filters, __ATOMIC_RELAXED) & 2))
		c->now = rte_rdtsc(); /* the idle timeout's clock */
	/* the slots first: the caller's FIB lookup gave them, nothing to wait for */
	for (i = 0; i < n; i++) {
		uint32_t sid = sids[i];

		fp[i] = NULL;
		if (likely(sid - 1u < size && tab != NULL)) {
			fp[i] = &tab[sid];
			prefetch_fp(fp[i]);
		}
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t cls = egw_eth_meta(m)->cls;
		uint32_t l2 = m->l2_len;
		const uint8_t *ip;
		uint64_t k6;
		uint32_t k4;

		if (cls == EGW_ETH_CLS_IPV4 && fp[i] != NULL && ensure(m, l2 + IP4_HDR_LEN) == 0) {
			ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
			memcpy(&k4, ip + 16, 4);
			encap_frame(c, m, fp[i], &k4, false, true, res);
		} else if (cls == EGW_ETH_CLS_IPV6 && fp[i] != NULL &&
			   ensure(m, l2 + IP6_HDR_LEN) == 0) {
			ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
			memcpy(&k6, ip + 24, 8);
			encap_frame(c, m, fp[i], &k6, true, true, res);
		} else {
			res->pass[res->n_pass++] = m;
		}
	}
}
