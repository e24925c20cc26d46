/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/pppoe's lock-free publication under load: worker lcores run the data
 * path (egw_pppoe_decap_burst, egw_pppoe_encap_burst, egw_pppoe_ctx_poll) at
 * full speed, each with its own context and as a QSBR reader that reports
 * quiescent between bursts (as app/edgegw/worker.c does), while the main
 * lcore runs the control path: it creates sessions, binds and unbinds their
 * NCPs (with new addresses each time), closes them and runs the service loop
 * that frees closed sessions after grace periods, so ids are reused while
 * frames of their previous holders are still in flight. EGW_STRESS_S sets
 * the duration in seconds (default 60).
 *
 * What is checked, and how:
 *  - Publication. Every session generation (gen, bumped each time an id is
 *    reused) has its own client MAC, and every bind its own address (bn,
 *    bumped on each bind of the id), so an output frame names the session
 *    and the bind it was made for. The control path keeps a record per bind
 *    with logical-clock times just before and just after pppoe_sess_bind()
 *    and pppoe_sess_unbind()/pppoe_sess_close(). A worker reads the clock
 *    before (t0) and after (t1) each call: every frame it gets out must
 *    belong to a bind that was published at some point in [t0, t1], with
 *    the NCP of its family, of the generation its MAC names (decap) or its
 *    PPPoE header names (encap); and a valid frame of a bind that was up
 *    during the whole window must come out (nothing lost).
 *  - Grace periods. life[sid] is bumped (odd) by the control path before
 *    pppoe_sess_close() and (even) once pppoe_sess_service() freed the slot.
 *    A worker reads it for every id of a burst after its last quiescent
 *    report and again after the burst: an id that was not closing at the
 *    start must not be freed before the worker reports quiescent again.
 *    This holds whatever the timing, so a reader that does not protect its
 *    bursts (or a library that frees too early) is caught by this check, not
 *    by a lucky torn read. Workers that never report quiescent are caught by
 *    the liveness checks: sessions must be freed and ids reused during the
 *    run, and the table must drain within DRAIN_S at the end.
 *  - Accounting: for every call, outputs + control frames + passed + drops
 *    + the change of the held count = frames in. Output order per session
 *    id never goes backwards (the handoff keeps order). Per-context drop
 *    counters equal the sum of res.drop; per-session data-path counters
 *    equal the frames that came out; the id FIFO is the documented one; at
 *    the end every mbuf is back in its pool and the table is empty, and a
 *    full table can be bound again (no route slot leaked).
 *
 * Memory order of the test's own bookkeeping: the control path writes a
 * record field, then the clock with a release store (tick()); workers load
 * the clock with acquire. The library's release store of fp->ncp (bind)
 * comes after the record's "before" time, so a worker that saw the NCP open
 * sees that time; the "after unbind" time is written after the library's
 * store that closes the NCP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#include "check.h"
#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"

/* Session ids 1..TABLE; the id takes 10 bits of a session's IPv4 address. */
#define TABLE 1000
/* Sessions the control path keeps alive, and most closing at once (no
 * close while that many wait for their grace period: a worker that the
 * kernel preempts holds grace periods up for a time slice). */
#define TARGET_LIVE 750
#define CLOSING_MAX 200
#define MAX_WORKERS EGW_PPPOE_MAX_CTX
#define WORKER_MBUFS 4095
#define CTRL_MBUFS 1023
#define BURST_MAX 64
/* Binds of one NCP in one generation; the ring holds all binds of one. */
#define BINDS_MAX 3
#define REC_RING 8
#define BN_MASK 0x3fffu
#define GEN_MASK 0xffffffu
#define NEVER UINT64_MAX
#define DRAIN_S 10
#define DURATION_DEF 60.0
#define FAIL_PRINT_MAX 10

#define TAG_MAGIC 0x53545253u /* "STRS" */
#define TAG_LEN 24
#define BIG_IP_LEN 1500 /* above the MRU of 1492 */

/* ---- what the control path publishes ----------------------------------- */

/* One bind of an NCP: its address (bn), session generation, family, and the
 * logical times just before/after the bind and the unbind (or close). */
struct bind_rec {
	uint64_t bn, gen, v6;
	uint64_t b_pre, b_post, u_pre, u_post;
};

static uint64_t clk; /* logical clock: control writes (release), workers read (acquire) */
static struct bind_rec recs[TABLE + 1][REC_RING];
/* odd while the id's session is closing, bumped again once its slot is freed */
static uint64_t life[TABLE + 1];
/* what a worker builds frames with: generation, current IPv4/IPv6 bn, alive */
static uint64_t pub[TABLE + 1];
#define PUB_GEN(p) ((uint32_t)((p)&GEN_MASK))
#define PUB_BN4(p) ((uint32_t)((p) >> 24 & BN_MASK))
#define PUB_BN6(p) ((uint32_t)((p) >> 38 & BN_MASK))
#define PUB_LIVE (UINT64_C(1) << 52)

/* The sessions created last: half the control path's actions and half the
 * workers' frames go to them, so ids are closed, freed and reused while the
 * workers' bursts carry their frames. */
#define HOT 32
static uint16_t hot[HOT];
static uint32_t hot_n;

static uint32_t stop_flag;
static struct rte_rcu_qsbr *qs;

static const struct rte_ether_addr port_mac[3] = {
	{{0x02, 0xac, 0, 0, 0, 0x01}},
	{{0x02, 0xac, 0, 0, 0, 0x02}},
	{{0x02, 0xac, 0, 0, 0, 0x03}}, /* the uplink: not an access port */
};
static const struct rte_ether_addr router_mac = {{0x02, 0xee, 0, 0, 0, 0x01}};
static struct egw_eth_port eth_ports[3];
#define UPLINK 2

/* RTE_IPV4 shifts an int: undefined for a first byte above 127 */
#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define IP_SERVER IP4(198, 51, 100, 7)
#define IP_LOCAL IP4(100, 64, 0, 1)
static const uint8_t server6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
static const uint8_t local6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t ll6[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t allrouters6[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

/* ---- bytes and names ---------------------------------------------------- */

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static uint64_t
ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void
st64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* A session's IPv4 address: 10/8, 10 bits of id, 14 bits of bn. */
static uint32_t
addr4(uint32_t sid, uint32_t bn)
{
	return IP4(10, 0, 0, 0) | sid << 14 | (bn & BN_MASK);
}

/* A session's /64: 2001:db8:<id>:<bn>::/64. */
static void
pfx6(uint8_t p[8], uint32_t sid, uint32_t bn)
{
	p[0] = 0x20;
	p[1] = 0x01;
	p[2] = 0x0d;
	p[3] = 0xb8;
	put16(p + 4, (uint16_t)sid);
	put16(p + 6, (uint16_t)(bn & BN_MASK));
}

/* A client's MAC names its session: 02:<id 16 bits>:<generation 24 bits>. */
static void
client_mac(struct rte_ether_addr *a, uint32_t sid, uint32_t gen)
{
	a->addr_bytes[0] = 0x02;
	a->addr_bytes[1] = (uint8_t)(sid >> 8);
	a->addr_bytes[2] = (uint8_t)sid;
	a->addr_bytes[3] = (uint8_t)(gen >> 16);
	a->addr_bytes[4] = (uint8_t)(gen >> 8);
	a->addr_bytes[5] = (uint8_t)gen;
}

/* Even ids on access port 0, odd ones on port 1. */
static uint16_t
sess_port(uint32_t sid)
{
	return (uint16_t)(sid & 1);
}

/* Untagged, 802.1Q or QinQ by id; TCIs with priority bits, outer first. */
static uint8_t
sess_tags(uint32_t sid, uint16_t tci[2], uint16_t tpid[2])
{
	uint8_t n = (uint8_t)((sid >> 1) % 3);

	tci[0] = (uint16_t)((sid & 7) << 13 | (100 + sid));
	tci[1] = (uint16_t)((sid & 3) << 13 | (2000 + sid));
	tpid[0] = n == 2 ? 0x88a8 : 0x8100;
	tpid[1] = 0x8100;
	return n;
}

/* The workers send Configure-Acks for 3 ids in 5: frames of the others are
 * never held for the handoff, so each valid one must come out at once. */
static bool
sess_acks(uint32_t sid)
{
	return sid % 5 >= 2;
}

/* Ethernet header with the tags of session sid (0: none); returns its length. */
static uint16_t
eth_put(uint8_t *f, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	uint32_t tag_sid, uint16_t type)
{
	uint16_t tci[2], tpid[2], off = 2 * RTE_ETHER_ADDR_LEN;
	uint8_t n = tag_sid != 0 ? sess_tags(tag_sid, tci, tpid) : 0, i;

	memcpy(f, dst, RTE_ETHER_ADDR_LEN);
	memcpy(f + RTE_ETHER_ADDR_LEN, src, RTE_ETHER_ADDR_LEN);
	for (i = 0; i < n; i++) {
		put16(f + off, tpid[i]);
		put16(f + off + 2, tci[i]);
		off += RTE_VLAN_HLEN;
	}
	put16(f + off, type);
	return (uint16_t)(off + 2);
}

/* ---- workers ------------------------------------------------------------ */

/* Upstream frame kinds (decap) and their share in percent. */
enum up_kind {
	UP_V4,       /* IPv4 from the session's current address */
	UP_V6,       /* IPv6 from inside its current /64 */
	UP_PFC4,     /* IPv4 with a 1-byte protocol field (RFC 1661 PFC) */
	UP_OTHERGEN, /* the MAC of the previous or next generation of the id */
	UP_SPOOF,    /* IPv4 from another session's address */
	UP_ACK4,     /* IPCP Configure-Ack (the handoff) */
	UP_ACK6,     /* IPv6CP Configure-Ack */
	UP_LCP,      /* LCP Echo-Request */
	UP_RS,       /* ICMPv6 router solicitation */
	UP_BAD,      /* PPPoE version/type 0x12 */
	UP_UNKNOWN,  /* an id outside the table */
	UP_MAX
};
static const uint8_t up_share[UP_MAX] = {36, 26, 4, 5, 4, 9, 5, 4, 2, 2, 3};

/* Downstream frame kinds (encap). */
enum dn_kind {
	DN_V4,      /* to the session's current IPv4 address */
	DN_V6,      /* into its current /64 */
	DN_OTHERBN, /* to the address of its previous or next bind */
	DN_BIG,     /* IPv4 of 1500 bytes: too big for the MRU */
	DN_OTHER,   /* to no session */
	DN_MAX
};
static const uint8_t dn_share[DN_MAX] = {45, 35, 8, 2, 10};

/* One frame of the burst being built. */
struct plan {
	uint16_t sid; /* the session slot the frame makes the library read; 0: none */
	uint8_t kind;
	bool v6;
	uint32_t gen;  /* generation in the client MAC (decap) */
	uint32_t bn;   /* bind whose address the frame carries; 0: none */
	uint64_t life; /* life[sid] before the burst */
	uint64_t seq;
};

struct wstats {
	uint64_t loops;
	uint64_t dec_bursts, dec_in, dec_out, dec_ctrl, dec_must;
	uint64_t polls, poll_out, poll_ctrl;
	uint64_t enc_bursts, enc_in, enc_out, enc_pass, enc_icmp, enc_must;
	uint64_t legal_checked, life_checked, life_moved;
	unsigned int held_max;
};

struct worker {
	unsigned int idx, lcore;
	struct egw_pppoe_ctx *ctx;
	struct rte_mempool *pool;
	uint64_t rng;
	uint64_t seq; /* frames built */
	uint64_t checks, failures;
	uint64_t drops[EGW_PPPOE_DROP_MAX]; /* sum of res.drop */
	struct wstats st;
	struct egw_pppoe_res res;
	uint64_t last_dec[TABLE + 1], last_enc[TABLE + 1]; /* last seq out, per id */
	struct plan plan[BURST_MAX];
	struct rte_mbuf *pkts[BURST_MAX];
} __rte_cache_aligned;

static struct worker *workers[MAX_WORKERS];
static unsigned int nb_workers;

static void __attribute__((format(printf, 3, 4)))
wfail(struct worker *w, int line, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	if (w->failures++ >= FAIL_PRINT_MAX)
		return;
	n = snprintf(buf, sizeof(buf), "FAIL worker %u %s:%d: ", w->idx, __FILE__, line);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one call: lines of several workers do not interleave */
	puts(buf);
}

/* CHECK of check.h for worker threads: counters of the worker, one line per failure. */
#define WCHECK(w, cond, ...)                               \
	do {                                               \
		(w)->checks++;                             \
		if (!(cond))                               \
			wfail((w), __LINE__, __VA_ARGS__); \
	} while (0)

static uint64_t
rnd(struct worker *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * UINT64_C(2685821657736338717);
}

static unsigned int
pick(struct worker *w, const uint8_t *share, unsigned int n)
{
	unsigned int r = (unsigned int)(rnd(w) % 100), i, acc = 0;

	for (i = 0; i < n - 1; i++) {
		acc += share[i];
		if (r < acc)
			break;
	}
	return i;
}

static void
tag_put(uint8_t *p, const struct worker *w, const struct plan *pl)
{
	put32(p, TAG_MAGIC);
	p[4] = (uint8_t)w->idx;
	p[5] = pl->kind;
	put16(p + 6, pl->sid);
	put32(p + 8, pl->gen);
	put32(p + 12, pl->bn);
	put64(p + 16, pl->seq);
}

/* IPv4 + UDP + tag + pad zero bytes; returns the IP length. */
static uint16_t
ip4_udp_put(uint8_t *ip, uint32_t src, uint32_t dst, const struct worker *w, const struct plan *pl,
	    uint16_t pad)
{
	uint16_t ulen = (uint16_t)(8 + TAG_LEN + pad), len = (uint16_t)(20 + ulen);
	uint8_t *u = ip + 20;
	uint32_t s = 0;
	unsigned int i;

	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, len);
	put16(ip + 4, (uint16_t)pl->seq);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	for (i = 0; i < 20; i += 2)
		s += get16(ip + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	put16(ip + 10, (uint16_t)~s);
	put16(u, 40000);
	put16(u + 2, 9);
	put16(u + 4, ulen);
	put16(u + 6, 0); /* no UDP checksum (RFC 768) */
	tag_put(u + 8, w, pl);
	memset(u + 8 + TAG_LEN, 0, pad);
	return len;
}

/* IPv6 + UDP + tag (UDP checksum left zero: nothing here verifies it). */
static uint16_t
ip6_udp_put(uint8_t *ip, const uint8_t src[16], const uint8_t dst[16], const struct worker *w,
	    const struct plan *pl)
{
	uint16_t ulen = 8 + TAG_LEN;
	uint8_t *u = ip + 40;

	memset(ip, 0, 40);
	ip[0] = 0x60;
	put16(ip + 4, ulen);
	ip[6] = IPPROTO_UDP;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	put16(u, 40000);
	put16(u + 2, 9);
	put16(u + 4, ulen);
	put16(u + 6, 0);
	tag_put(u + 8, w, pl);
	return (uint16_t)(40 + ulen);
}

/* Set the lengths, padded to the Ethernet minimum (the library trims it). */
static void
frame_done(struct rte_mbuf *m, uint8_t *f, uint16_t len, uint16_t port)
{
	if (len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN) {
		memset(f + len, 0xee, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - len);
		len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
	}
	m->data_len = len;
	m->pkt_len = len;
	m->port = port;
}

/* A PPPoE session frame from the client, as the plan says. */
static void
build_up(struct worker *w, struct rte_mbuf *m, const struct plan *pl, uint16_t port)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *), *h, *p, src6[16];
	struct rte_ether_addr mac;
	uint16_t off, plen = 0;
	uint32_t src_sid = pl->sid;

	client_mac(&mac, pl->sid, pl->gen);
	off = eth_put(f, &port_mac[port], &mac, pl->sid, EGW_ETHER_TYPE_PPPOE_SESS);
	h = f + off;
	p = h + PPPOE_HDR_LEN;
	h[0] = pl->kind == UP_BAD ? 0x12 : PPPOE_VER_TYPE;
	h[1] = PPPOE_CODE_SESS;
	put16(h + 2, (uint16_t)(pl->kind == UP_UNKNOWN ? TABLE + 7 : pl->sid));
	switch (pl->kind) {
	case UP_SPOOF:
		src_sid = pl->sid + 2 <= TABLE ? pl->sid + 2u : pl->sid - 2u; /* fall through */
	case UP_V4:
	case UP_OTHERGEN:
	case UP_BAD:
	case UP_UNKNOWN:
		put16(p, PPP_IP);
		plen = (uint16_t)(2 +
				  ip4_udp_put(p + 2, addr4(src_sid, pl->bn), IP_SERVER, w, pl, 0));
		break;
	case UP_PFC4:
		p[0] = (uint8_t)PPP_IP;
		plen = (uint16_t)(1 +
				  ip4_udp_put(p + 1, addr4(src_sid, pl->bn), IP_SERVER, w, pl, 0));
		break;
	case UP_V6:
		pfx6(src6, pl->sid, pl->bn);
		memset(src6 + 8, 0, 8);
		src6[15] = 1;
		put16(p, PPP_IPV6);
		plen = (uint16_t)(2 + ip6_udp_put(p + 2, src6, server6, w, pl));
		break;
	case UP_RS:
		put16(p, PPP_IPV6);
		memset(p + 2, 0, 48);
		p[2] = 0x60;
		put16(p + 6, 8);
		p[8] = IPPROTO_ICMPV6;
		p[9] = 255;
		memcpy(p + 10, ll6, 16);
		memcpy(p + 26, allrouters6, 16);
		p[42] = 133; /* RFC 4861 router solicitation */
		plen = 2 + 48;
		break;
	case UP_ACK4:
	case UP_ACK6:
		put16(p, pl->kind == UP_ACK4 ? PPP_IPCP : PPP_IPV6CP);
		p[2] = 2; /* Configure-Ack (RFC 1661 5.2) */
		p[3] = (uint8_t)pl->seq;
		put16(p + 4, 4);
		plen = 6;
		break;
	case UP_LCP:
		put16(p, PPP_LCP);
		p[2] = 9; /* Echo-Request */
		p[3] = (uint8_t)pl->seq;
		put16(p + 4, 8);
		put32(p + 6, 0x12345678);
		plen = 10;
		break;
	default: break;
	}
	put16(h + 4, plen);
	frame_done(m, f, (uint16_t)(off + PPPOE_HDR_LEN + plen), port);
}

/* An IP frame from the uplink router toward a subscriber (or nobody). */
static void
build_down(struct worker *w, struct rte_mbuf *m, const struct plan *pl)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *), dst6[16];
	uint16_t off, len;

	off = eth_put(f, &port_mac[UPLINK], &router_mac, 0,
		      pl->v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (pl->v6) {
		pfx6(dst6, pl->sid, pl->bn);
		memset(dst6 + 8, 0, 8);
		dst6[15] = 2;
		len = ip6_udp_put(f + off, server6, dst6, w, pl);
	} else if (pl->kind == DN_OTHER) {
		len = ip4_udp_put(f + off, IP_SERVER, IP4(192, 0, 2, (uint8_t)pl->seq), w, pl, 0);
	} else {
		len = ip4_udp_put(f + off, IP_SERVER, addr4(pl->sid, pl->bn), w, pl,
				  pl->kind == DN_BIG ? BIG_IP_LEN - 20 - 8 - TAG_LEN : 0);
	}
	frame_done(m, f, (uint16_t)(off + len), UPLINK);
}

static void
res_clear(struct egw_pppoe_res *res)
{
	res->n_out = res->n_ctrl = res->n_pass = res->n_icmp = 0;
	memset(res->drop, 0, sizeof(res->drop));
}

/* Drops of the last call, added to the worker's sums. */
static uint64_t
res_drops(struct worker *w)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++) {
		n += w->res.drop[i];
		w->drops[i] += w->res.drop[i];
	}
	return n;
}

/* The record of bind bn (14 bits) of session sid, if it is of generation gen
 * (24 bits) and family v6. */
static bool
rec_get(uint32_t sid, uint32_t gen, uint32_t bn, bool v6, struct bind_rec *r)
{
	const struct bind_rec *s;

	if (sid == 0 || sid > TABLE || (bn & BN_MASK) == 0)
		return false;
	s = &recs[sid][bn % REC_RING];
	r->bn = ld64(&s->bn);
	r->gen = ld64(&s->gen);
	r->v6 = ld64(&s->v6);
	r->b_pre = ld64(&s->b_pre);
	r->b_post = ld64(&s->b_post);
	r->u_pre = ld64(&s->u_pre);
	r->u_post = ld64(&s->u_post);
	return (r->bn & BN_MASK) == (bn & BN_MASK) && (r->gen & GEN_MASK) == (gen & GEN_MASK) &&
	       r->v6 == v6;
}

/* Was the bind published at some point in [t0, t1]? */
static bool
rec_up_in(const struct bind_rec *r, uint64_t t0, uint64_t t1)
{
	return r->b_pre != NEVER && r->b_pre <= t1 && (r->u_post == NEVER || r->u_post >= t0);
}

/* Was it published during the whole of [t0, t1]? */
static bool
rec_up_all(const struct bind_rec *r, uint64_t t0, uint64_t t1)
{
	return r->b_post != NEVER && r->b_post <= t0 && (r->u_pre == NEVER || r->u_pre > t1);
}

/* An output frame of session (sid, gen) carrying the address of bind bn. */
static void
check_legal(struct worker *w, const char *what, uint32_t sid, uint32_t gen, uint32_t bn, bool v6,
	    uint64_t t0, uint64_t t1)
{
	struct bind_rec r;
	bool found = rec_get(sid, gen, bn, v6, &r);

	w->st.legal_checked++;
	WCHECK(w, found,
	       "%s: IPv%c frame of id %u gen %u out, but bind %u is not one of that session "
	       "(record: bn %" PRIu64 " gen %" PRIu64 " v6 %" PRIu64
	       "): slot reused under a burst?",
	       what, v6 ? '6' : '4', sid, gen, bn, r.bn, r.gen, r.v6);
	if (found)
		WCHECK(w, rec_up_in(&r, t0, t1),
		       "%s: IPv%c frame of id %u gen %u bind %u out in [%" PRIu64 ",%" PRIu64
		       "], bound only in [%" PRIu64 ",%" PRIu64 "]",
		       what, v6 ? '6' : '4', sid, gen, bn, t0, t1, r.b_pre, r.u_post);
}

/* The tag of an output frame: from this worker, a frame it built. */
static bool
tag_ok(struct worker *w, const uint8_t *t, uint16_t *sid, uint64_t *seq)
{
	bool ok = get32(t) == TAG_MAGIC && t[4] == w->idx && get64(t + 16) <= w->seq;

	WCHECK(w, ok, "output frame with a tag not ours (magic %08x worker %u seq %" PRIu64 ")",
	       get32(t), t[4], get64(t + 16));
	*sid = get16(t + 6);
	*seq = get64(t + 16);
	return ok;
}

/*
 * Decapsulated frames in res->out (a burst's own, or held ones released):
 * Ethernet II from the client's MAC to the port, the IP packet intact and
 * trimmed, of a bind published in [t0, t1], in order per session. Frames of
 * the burst [seq0, seq0 + n) that came out are marked in out_seen.
 */
static void
check_decap_out(struct worker *w, uint16_t port, uint64_t t0, uint64_t t1, uint64_t seq0,
		uint16_t n, bool *out_seen)
{
	struct egw_pppoe_res *res = &w->res;
	uint16_t i;

	for (i = 0; i < res->n_out; i++) {
		struct rte_mbuf *m = res->out[i];
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *),
			      *ip = d + RTE_ETHER_HDR_LEN;
		uint16_t et = get16(d + 12), msid = get16(d + 7), tsid = 0, asid, abn, iplen;
		uint32_t mgen = (uint32_t)d[9] << 16 | (uint32_t)d[10] << 8 | d[11];
		bool v6 = et == RTE_ETHER_TYPE_IPV6;
		uint64_t seq = 0;

		bool ok = m->nb_segs == 1 && (et == RTE_ETHER_TYPE_IPV4 || v6) &&
			  m->pkt_len >= RTE_ETHER_HDR_LEN + (v6 ? 40u : 20u) + 8 + TAG_LEN;

		WCHECK(w, ok, "decap out: %u segments, %u bytes, ethertype %04x", m->nb_segs,
		       m->pkt_len, et);
		if (!ok) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (v6) {
			iplen = (uint16_t)(40 + get16(ip + 4));
			asid = get16(ip + 12);
			abn = get16(ip + 14);
		} else {
			iplen = get16(ip + 2);
			asid = (uint16_t)(get32(ip + 12) >> 14 & 0x3ff);
			abn = (uint16_t)(get32(ip + 12) & BN_MASK);
		}
		WCHECK(w,
		       memcmp(d, &port_mac[port], RTE_ETHER_ADDR_LEN) == 0 && m->port == port &&
			       m->l2_len == RTE_ETHER_HDR_LEN &&
			       egw_eth_meta(m)->cls == (v6 ? EGW_ETH_CLS_IPV6 : EGW_ETH_CLS_IPV4),
		       "decap out: header of id %u (port %u, l2_len %u)", msid, m->port, m->l2_len);
		WCHECK(w, m->pkt_len == RTE_ETHER_HDR_LEN + (uint32_t)iplen,
		       "decap out: %u bytes for an IP packet of %u", m->pkt_len, iplen);
		if (tag_ok(w, ip + (v6 ? 40 : 20) + 8, &tsid, &seq)) {
			WCHECK(w, tsid == msid && asid == msid && sess_port(msid) == port,
			       "decap out: MAC of id %u, source address of id %u, built for id %u "
			       "on "
			       "port %u",
			       msid, asid, tsid, port);
			check_legal(w, "decap", msid, mgen, abn, v6, t0, t1);
			if (msid <= TABLE) {
				WCHECK(w, seq > w->last_dec[msid],
				       "decap out: id %u frame %" PRIu64 " after frame %" PRIu64
				       " (reordered)",
				       msid, seq, w->last_dec[msid]);
				w->last_dec[msid] = seq;
			}
			if (seq >= seq0 && seq < seq0 + n)
				out_seen[seq - seq0] = true;
		}
		rte_pktmbuf_free(m);
	}
	for (i = 0; i < res->n_ctrl; i++) {
		struct rte_mbuf *m = res->ctrl[i];
		const uint8_t *pp = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len + 6);
		/* RFC 1661 2: an odd first octet is a 1-byte protocol */
		uint16_t proto = (pp[0] & 1) != 0 ? pp[0] : get16(pp);

		/* IP frames never go to the control path, router solicitations aside */
		WCHECK(w, proto != PPP_IP, "decap ctrl: protocol %04x", proto);
		if (proto == PPP_IPV6)
			WCHECK(w,
			       rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len + 8 + 40)[0] ==
				       133,
			       "decap ctrl: IPv6 that is not a router solicitation");
		rte_pktmbuf_free(m);
	}
}

/* Ids of the burst: none freed unless it was closing already when it began. */
static void
check_life(struct worker *w, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct plan *pl = &w->plan[i];
		uint64_t now;

		if (pl->sid == 0)
			continue;
		/* Pairs with the release stores in life_bump(). */
		now = __atomic_load_n(&life[pl->sid], __ATOMIC_ACQUIRE);
		w->st.life_checked++;
		w->st.life_moved += now != pl->life;
		WCHECK(w, (pl->life & 1) != 0 || now < pl->life + 2,
		       "id %u closed and freed during a burst that began before its close (life "
		       "%" PRIu64 " -> %" PRIu64 "): grace period not respected",
		       pl->sid, pl->life, now);
	}
}

/* The life counters of the burst's ids, read after the last quiescent report. */
static void
plan_life(struct worker *w, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		if (w->plan[i].sid != 0)
			/* Pairs with the release stores in life_bump(). */
			w->plan[i].life = __atomic_load_n(&life[w->plan[i].sid], __ATOMIC_ACQUIRE);
}

/* An id for a frame: one of the hot ones half the time (of port's parity
 * for decap, any for encap: port UPLINK), else any. */
static uint32_t
pick_sid(struct worker *w, uint16_t port)
{
	uint32_t sid = 0;

	if ((rnd(w) & 1) != 0)
		sid = __atomic_load_n(&hot[rnd(w) % HOT], __ATOMIC_RELAXED);
	if (sid != 0 && (port == UPLINK || sess_port(sid) == port))
		return sid;
	if (port == UPLINK)
		return (uint32_t)(1 + rnd(w) % TABLE);
	return 2 * (uint32_t)(1 + rnd(w) % (TABLE / 2)) - port;
}

static void
plan_up(struct worker *w, uint16_t port, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct plan *pl = &w->plan[i];
		uint32_t sid = pick_sid(w, port);
		uint64_t p = __atomic_load_n(&pub[sid], __ATOMIC_RELAXED);

		memset(pl, 0, sizeof(*pl));
		pl->kind = (uint8_t)pick(w, up_share, UP_MAX);
		pl->sid = (uint16_t)sid;
		pl->gen = PUB_GEN(p);
		pl->bn = pl->kind == UP_V6 ? PUB_BN6(p) : PUB_BN4(p);
		pl->v6 = pl->kind == UP_V6;
		pl->seq = ++w->seq;
		if ((pl->kind == UP_ACK4 || pl->kind == UP_ACK6) && !sess_acks(sid))
			pl->kind = UP_LCP;
		if (pl->kind == UP_OTHERGEN)
			pl->gen = (rnd(w) & 1) != 0 || pl->gen <= 1 ? pl->gen + 1 : pl->gen - 1;
		else if (pl->kind == UP_SPOOF)
			pl->bn = PUB_BN4(__atomic_load_n(&pub[sid + 2 <= TABLE ? sid + 2 : sid - 2],
							 __ATOMIC_RELAXED));
		else if (pl->kind == UP_UNKNOWN)
			pl->sid = 0; /* the frame's id is not in the table: no slot read */
	}
	plan_life(w, n);
}

static bool
frames_alloc(struct worker *w, uint16_t n)
{
	int rc = rte_pktmbuf_alloc_bulk(w->pool, w->pkts, n);

	WCHECK(w, rc == 0, "no mbuf for a burst of %u (%u free of %u): leak?", n,
	       rte_mempool_avail_count(w->pool), WORKER_MBUFS);
	return rc == 0;
}

static bool
frames_classify(struct worker *w, uint16_t port, uint16_t n)
{
	uint16_t good = egw_eth_classify_burst(&eth_ports[port], w->pkts, n);

	WCHECK(w, good == n, "lib/eth: %u of %u frames bad", n - good, n);
	if (good == n)
		return true;
	rte_pktmbuf_free_bulk(w->pkts, n);
	return false;
}

static void
decap_round(struct worker *w, uint16_t port)
{
	struct egw_pppoe_res *res = &w->res;
	uint16_t n = (uint16_t)(1 + rnd(w) % BURST_MAX), i;
	bool out_seen[BURST_MAX] = {false};
	unsigned int held0, held1;
	uint64_t t0, t1, drops, seq0 = w->seq + 1;

	plan_up(w, port, n);
	if (!frames_alloc(w, n))
		return;
	for (i = 0; i < n; i++)
		build_up(w, w->pkts[i], &w->plan[i], port);
	if (!frames_classify(w, port, n))
		return;
	res_clear(res);
	held0 = egw_pppoe_ctx_held(w->ctx);
	/* Pairs with tick()'s release store: records written before t0 are seen. */
	t0 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	egw_pppoe_decap_burst(w->ctx, w->pkts, n, res);
	t1 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	held1 = egw_pppoe_ctx_held(w->ctx);
	drops = res_drops(w);
	WCHECK(w, res->n_out + res->n_ctrl + drops + held1 == (uint64_t)n + held0,
	       "decap accounting: %u in, %u out + %u ctrl + %" PRIu64 " dropped, held %u -> %u", n,
	       res->n_out, res->n_ctrl, drops, held0, held1);
	WCHECK(w, res->n_pass == 0 && res->n_icmp == 0, "decap: %u passed, %u ICMP", res->n_pass,
	       res->n_icmp);
	w->st.dec_bursts++;
	w->st.dec_in += n;
	w->st.dec_out += res->n_out;
	w->st.dec_ctrl += res->n_ctrl;
	w->st.held_max = RTE_MAX(w->st.held_max, held1);
	check_decap_out(w, port, t0, t1, seq0, n, out_seen);

	/* A valid frame of a bind up all along came out, unless it may be held
	 * behind frames of its session (an id that gets Configure-Acks, while
	 * the context holds frames). */
	for (i = 0; i < n; i++) {
		const struct plan *pl = &w->plan[i];
		struct bind_rec r;

		if ((pl->kind != UP_V4 && pl->kind != UP_V6 && pl->kind != UP_PFC4) ||
		    (sess_acks(pl->sid) && (held0 != 0 || held1 != 0)) ||
		    !rec_get(pl->sid, pl->gen, pl->bn, pl->v6, &r) || !rec_up_all(&r, t0, t1))
			continue;
		w->st.dec_must++;
		WCHECK(w, out_seen[i],
		       "decap: IPv%c frame %" PRIu64 " of id %u gen %u bind %u (up in [%" PRIu64
		       ",%" PRIu64 "], burst in [%" PRIu64 ",%" PRIu64 "]) did not come out",
		       pl->v6 ? '6' : '4', pl->seq, pl->sid, pl->gen, pl->bn, r.b_post, r.u_pre, t0,
		       t1);
	}
	check_life(w, n);
}

/* The handoff: held frames whose NCP opened come out, those too old go. */
static void
poll_round(struct worker *w, uint16_t port, bool flush)
{
	struct egw_pppoe_res *res = &w->res;
	unsigned int held0, held1;
	uint64_t t0, t1, drops;

	res_clear(res);
	held0 = egw_pppoe_ctx_held(w->ctx);
	/* Pairs with tick()'s release store. */
	t0 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	egw_pppoe_ctx_poll(w->ctx, port, flush, res);
	t1 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	held1 = egw_pppoe_ctx_held(w->ctx);
	drops = res_drops(w);
	WCHECK(w, res->n_out + res->n_ctrl + drops + held1 == held0,
	       "poll accounting (flush %d): %u out + %u ctrl + %" PRIu64 " dropped, held %u -> %u",
	       flush, res->n_out, res->n_ctrl, drops, held0, held1);
	WCHECK(w, res->n_pass == 0 && res->n_icmp == 0 && (!flush || res->n_out + res->n_ctrl == 0),
	       "poll (flush %d): %u out, %u ctrl, %u passed, %u ICMP", flush, res->n_out,
	       res->n_ctrl, res->n_pass, res->n_icmp);
	w->st.polls++;
	w->st.poll_out += res->n_out;
	w->st.poll_ctrl += res->n_ctrl;
	check_decap_out(w, port, t0, t1, 0, 0, NULL);
}

static void
plan_down(struct worker *w, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct plan *pl = &w->plan[i];
		uint32_t sid = pick_sid(w, UPLINK);
		uint64_t p = __atomic_load_n(&pub[sid], __ATOMIC_RELAXED);

		memset(pl, 0, sizeof(*pl));
		pl->kind = (uint8_t)pick(w, dn_share, DN_MAX);
		pl->sid = (uint16_t)sid;
		pl->gen = PUB_GEN(p);
		pl->v6 = pl->kind == DN_V6;
		pl->bn = pl->v6 ? PUB_BN6(p) : PUB_BN4(p);
		pl->seq = ++w->seq;
		if (pl->kind == DN_OTHERBN)
			pl->bn = ((rnd(w) & 1) != 0 || pl->bn <= 1 ? pl->bn + 1 : pl->bn - 1) &
				 BN_MASK;
		else if (pl->kind == DN_OTHER)
			pl->sid = 0;
	}
	plan_life(w, n);
}

static void
check_encap_out(struct worker *w, uint64_t t0, uint64_t t1, uint64_t seq0, uint16_t n,
		bool *out_seen)
{
	struct egw_pppoe_res *res = &w->res;
	uint16_t i;

	for (i = 0; i < res->n_out; i++) {
		struct rte_mbuf *m = res->out[i];
		const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *), *h, *ip;
		uint16_t sid = get16(d + 1), tci[2], tpid[2], proto, off, iplen, asid, abn,
			 tsid = 0;
		uint32_t gen = (uint32_t)d[3] << 16 | (uint32_t)d[4] << 8 | d[5];
		uint8_t nv = sess_tags(sid, tci, tpid), k;
		uint64_t seq = 0;
		bool ok, v6;

		off = (uint16_t)(2 * RTE_ETHER_ADDR_LEN + nv * RTE_VLAN_HLEN);
		h = d + off + 2;
		ok = m->nb_segs == 1 && sid >= 1 && sid <= TABLE &&
		     m->pkt_len >= off + 2u + PPPOE_HDR_LEN + 2 + 20 + 8 + TAG_LEN;
		proto = ok ? get16(h + PPPOE_HDR_LEN) : 0;
		v6 = proto == PPP_IPV6;
		ok = ok &&
		     m->pkt_len >= off + 2u + PPPOE_HDR_LEN + 2 + (v6 ? 40 : 20) + 8 + TAG_LEN;
		WCHECK(w, ok, "encap out: %u segments, %u bytes, to id %u", m->nb_segs, m->pkt_len,
		       sid);
		if (!ok) {
			rte_pktmbuf_free(m);
			continue;
		}
		for (k = 0; k < nv; k++)
			ok = ok && get16(d + 12 + 4 * k) == tpid[k] &&
			     get16(d + 14 + 4 * k) == tci[k];
		ip = h + PPPOE_HDR_LEN + 2;
		if (v6) {
			iplen = (uint16_t)(40 + get16(ip + 4));
			asid = get16(ip + 28);
			abn = get16(ip + 30);
		} else {
			iplen = get16(ip + 2);
			asid = (uint16_t)(get32(ip + 16) >> 14 & 0x3ff);
			abn = (uint16_t)(get32(ip + 16) & BN_MASK);
		}
		WCHECK(w,
		       ok && d[0] == 0x02 &&
			       memcmp(d + 6, &port_mac[sess_port(sid)], RTE_ETHER_ADDR_LEN) == 0 &&
			       get16(d + off) == EGW_ETHER_TYPE_PPPOE_SESS &&
			       h[0] == PPPOE_VER_TYPE && h[1] == PPPOE_CODE_SESS &&
			       get16(h + 2) == sid && (proto == PPP_IP || v6) &&
			       res->out_port[i] == sess_port(sid),
		       "encap out: header of id %u gen %u (PPPoE id %u, protocol %04x, port %u)",
		       sid, gen, get16(h + 2), proto, res->out_port[i]);
		WCHECK(w,
		       get16(h + 4) == iplen + 2 &&
			       m->pkt_len == off + 2u + PPPOE_HDR_LEN + 2 + iplen,
		       "encap out: PPPoE length %u, %u bytes, IP %u", get16(h + 4), m->pkt_len,
		       iplen);
		WCHECK(w, iplen <= EGW_PPPOE_MRU_DEF, "encap out: %u bytes above the MRU", iplen);
		if (tag_ok(w, ip + (v6 ? 40 : 20) + 8, &tsid, &seq)) {
			WCHECK(w, asid == sid && tsid == sid,
			       "encap out: header of id %u, destination of id %u, built for id %u",
			       sid, asid, tsid);
			check_legal(w, "encap", sid, gen, abn, v6, t0, t1);
			WCHECK(w, seq > w->last_enc[sid],
			       "encap out: id %u frame %" PRIu64 " after frame %" PRIu64
			       " (reordered)",
			       sid, seq, w->last_enc[sid]);
			w->last_enc[sid] = seq;
			if (seq >= seq0 && seq < seq0 + n)
				out_seen[seq - seq0] = true;
		}
		rte_pktmbuf_free(m);
	}
}

static void
encap_round(struct worker *w)
{
	struct egw_pppoe_res *res = &w->res;
	uint16_t n = (uint16_t)(1 + rnd(w) % BURST_MAX), i;
	bool out_seen[BURST_MAX] = {false};
	uint64_t t0, t1, drops, seq0 = w->seq + 1;

	plan_down(w, n);
	if (!frames_alloc(w, n))
		return;
	for (i = 0; i < n; i++)
		build_down(w, w->pkts[i], &w->plan[i]);
	if (!frames_classify(w, UPLINK, n))
		return;
	res_clear(res);
	/* Pairs with tick()'s release store. */
	t0 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	egw_pppoe_encap_burst(w->ctx, w->pkts, n, res);
	t1 = __atomic_load_n(&clk, __ATOMIC_ACQUIRE);
	drops = res_drops(w);
	WCHECK(w, res->n_out + res->n_pass + drops == n,
	       "encap accounting: %u in, %u out + %u passed + %" PRIu64 " dropped", n, res->n_out,
	       res->n_pass, drops);
	WCHECK(w, res->n_ctrl == 0 && res->n_icmp == res->drop[EGW_PPPOE_DROP_TOO_BIG],
	       "encap: %u ctrl, %u ICMP for %u too big", res->n_ctrl, res->n_icmp,
	       res->drop[EGW_PPPOE_DROP_TOO_BIG]);
	w->st.enc_bursts++;
	w->st.enc_in += n;
	w->st.enc_out += res->n_out;
	w->st.enc_pass += res->n_pass;
	w->st.enc_icmp += res->n_icmp;
	check_encap_out(w, t0, t1, seq0, n, out_seen);
	for (i = 0; i < res->n_pass; i++) {
		struct rte_mbuf *m = res->pass[i];
		uint8_t cls = egw_eth_meta(m)->cls;

		WCHECK(w, m->port == UPLINK && (cls == EGW_ETH_CLS_IPV4 || cls == EGW_ETH_CLS_IPV6),
		       "encap pass: changed (port %u, class %u)", m->port, cls);
		rte_pktmbuf_free(m);
	}
	for (i = 0; i < res->n_icmp; i++) {
		WCHECK(w, res->icmp[i]->port == UPLINK, "ICMP too-big for port %u",
		       res->icmp[i]->port);
		rte_pktmbuf_free(res->icmp[i]);
	}
	for (i = 0; i < n; i++) {
		const struct plan *pl = &w->plan[i];
		struct bind_rec r;

		if ((pl->kind != DN_V4 && pl->kind != DN_V6) ||
		    !rec_get(pl->sid, pl->gen, pl->bn, pl->v6, &r) || !rec_up_all(&r, t0, t1))
			continue;
		w->st.enc_must++;
		WCHECK(w, out_seen[i],
		       "encap: IPv%c frame %" PRIu64 " to id %u bind %u (up in [%" PRIu64
		       ",%" PRIu64 "], burst in [%" PRIu64 ",%" PRIu64 "]) not encapsulated",
		       pl->v6 ? '6' : '4', pl->seq, pl->sid, pl->bn, r.b_post, r.u_pre, t0, t1);
	}
	check_life(w, n);
}

static int
worker_main(void *arg)
{
	struct worker *w = arg;

	rte_rcu_qsbr_thread_online(qs, w->idx);
	/* pairs with the release store in stop_workers() */
	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
		decap_round(w, 0);
		decap_round(w, 1);
		encap_round(w);
		poll_round(w, 0, false);
		poll_round(w, 1, false);
		w->st.loops++;
		/* no session slot or route is used across this point */
		rte_rcu_qsbr_quiescent(qs, w->idx);
	}
	poll_round(w, 0, true);
	poll_round(w, 1, true);
	WCHECK(w, egw_pppoe_ctx_held(w->ctx) == 0, "%u frames still held after the flush",
	       egw_pppoe_ctx_held(w->ctx));
	rte_rcu_qsbr_thread_offline(qs, w->idx);
	return 0;
}

/* ---- control path (main lcore) ------------------------------------------ */

enum cstate { C_FREE, C_LIVE, C_CLOSING };

struct csess {
	struct pppoe_sess *s;
	uint32_t gen;
	uint8_t st;   /* enum cstate */
	uint8_t ncp;  /* PPPOE_NCP_IP4/IP6 bound */
	uint8_t acks; /* NCPs in Ack-Sent */
	uint8_t binds4, binds6;
	uint32_t bn, bn4, bn6; /* last bn handed out; the bound ones (0: none) */
};

static struct csess cs[TABLE + 1];
/* the library's free id FIFO as documented, and the ids closing, in close order */
static uint16_t free_q[TABLE + 1], closing_q[TABLE + 1];
static unsigned int free_h, free_n, closing_h, closing_n;
static unsigned int nb_live, nb_bound;
static uint64_t crng = 0x9e3779b97f4a7c15ull;

static struct {
	uint64_t iters, created, reused, refused, bound4, bound6, bind_fail, unbound, closed, padt;
	uint64_t freed, grace_frees, acksent, walks, max_closing, tx_frames, drop_reads;
	bool draining;
} cst;

static uint64_t
crnd(void)
{
	crng ^= crng >> 12;
	crng ^= crng << 25;
	crng ^= crng >> 27;
	return crng * UINT64_C(2685821657736338717);
}

/* Next logical time into *field, then the clock. */
static uint64_t
tick(uint64_t *field)
{
	uint64_t v = ld64(&clk) + 1;

	st64(field, v);
	/* Pairs with the workers' acquire loads of clk: one that reads v or
	 * later sees *field too. */
	__atomic_store_n(&clk, v, __ATOMIC_RELEASE);
	return v;
}

static void
life_bump(uint16_t sid)
{
	/* Pairs with the workers' acquire loads in plan_life()/check_life().
	 * Before a close: ordered before the QSBR token the close takes. */
	__atomic_store_n(&life[sid], ld64(&life[sid]) + 1, __ATOMIC_RELEASE);
}

static void
publish(uint16_t sid)
{
	const struct csess *c = &cs[sid];

	st64(&pub[sid], (c->gen & GEN_MASK) | (uint64_t)(c->bn4 & BN_MASK) << 24 |
				(uint64_t)(c->bn6 & BN_MASK) << 38 |
				(c->st == C_LIVE ? PUB_LIVE : 0));
}

static void
tx_fn(uint16_t port, struct rte_mbuf *m, void *arg)
{
	RTE_SET_USED(port);
	RTE_SET_USED(arg);
	cst.tx_frames++;
	rte_pktmbuf_free(m);
}

/* Create a session; the library must hand out the id at the head of the FIFO. */
static bool
c_create(void)
{
	uint16_t sid, tci[2], tpid[2];
	rte_be16_t tpid_be[2];
	struct rte_ether_addr mac;
	enum pppoe_refuse why;
	struct pppoe_sess *s;
	struct csess *c;
	uint8_t nv;

	if (free_n == 0)
		return false;
	sid = free_q[free_h];
	c = &cs[sid];
	nv = sess_tags(sid, tci, tpid);
	tpid_be[0] = rte_cpu_to_be_16(tpid[0]);
	tpid_be[1] = rte_cpu_to_be_16(tpid[1]);
	client_mac(&mac, sid, c->gen + 1);
	s = pppoe_sess_create(sess_port(sid), &mac, nv, tci, tpid_be, 0, &why);
	if (s == NULL) {
		/* ids are free and the limits allow it: a refusal is wrong (counted
		 * once at the end; the same MAC is tried again next time) */
		if (cst.refused++ < 3)
			printf("create: id %u (MAC of generation %u) refused (%d) with %u of %u "
			       "sessions in use and %u ids free\n",
			       sid, c->gen + 1, (int)why, pppoe_sess_count(), TABLE, free_n);
		return false;
	}
	CHECK(s->sid == sid, "create: id %u expected (FIFO), got %u", sid, s->sid);
	if (s->sid != sid) {
		/* the mirror is lost: stop the run */
		__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
		return false;
	}
	free_h = (free_h + 1) % (TABLE + 1);
	free_n--;
	if (c->gen != 0)
		cst.reused++;
	c->gen++;
	c->s = s;
	c->st = C_LIVE;
	c->ncp = c->acks = 0;
	c->binds4 = c->binds6 = 0;
	c->bn4 = c->bn6 = 0;
	nb_live++;
	cst.created++;
	publish(sid);
	__atomic_store_n(&hot[hot_n++ % HOT], sid, __ATOMIC_RELAXED);
	return true;
}

static uint32_t
next_bn(struct csess *c)
{
	c->bn++;
	if ((c->bn & BN_MASK) == 0)
		c->bn++; /* 0: no address */
	return c->bn;
}

/* Keys in a route table (rte_hash_count() also counts the key slots that
 * wait in the RCU defer queue). */
static unsigned int
routes(unsigned int ncp)
{
	const struct rte_hash *h = pppoe_route_tab(ncp);
	const void *key;
	void *data;
	uint32_t next = 0;
	unsigned int n = 0;

	while (rte_hash_iterate(h, &key, &data, &next) >= 0)
		n++;
	return n;
}

/* An NCP opens with a new address (as ipcp.c/ipv6cp.c publish theirs). */
static void
c_bind(uint16_t sid, bool v6)
{
	struct csess *c = &cs[sid];
	uint8_t ncp = v6 ? PPPOE_NCP_IP6 : PPPOE_NCP_IP4, p[8];
	uint32_t bn = next_bn(c), a;
	struct bind_rec *r = &recs[sid][bn % REC_RING];
	unsigned int i;
	int rc;

	/* fsm.c: leaving Ack-Sent for Opened clears the flag before tlu binds */
	if (c->acks & ncp) {
		pppoe_sess_ncp_acksent(c->s, ncp, false);
		c->acks &= (uint8_t)~ncp;
	}
	st64(&r->bn, bn);
	st64(&r->gen, c->gen);
	st64(&r->v6, v6);
	st64(&r->b_post, NEVER);
	st64(&r->u_pre, NEVER);
	st64(&r->u_post, NEVER);
	tick(&r->b_pre);
	if (v6) {
		pfx6(p, sid, bn);
		for (i = 0; i < 8; i++)
			__atomic_store_n(&c->s->fp->ip6_prefix[i], p[i], __ATOMIC_RELAXED);
	} else {
		a = rte_cpu_to_be_32(addr4(sid, bn));
		__atomic_store_n(&c->s->fp->ip4, a, __ATOMIC_RELAXED);
	}
	rc = pppoe_sess_bind(c->s, ncp);
	CHECK(rc == 0 || rc == -ENOSPC, "bind id %u IPv%c: %d", sid, v6 ? '6' : '4', rc);
	/* a failed bind counts too: a generation makes at most REC_RING binds */
	if (v6)
		c->binds6++;
	else
		c->binds4++;
	if (rc != 0) {
		/* never published */
		st64(&r->b_pre, NEVER);
		if (cst.bind_fail++ < 3)
			printf("bind id %u IPv%c: %d with %u %s routes in the table, %d key slots "
			       "used (the rest wait for a grace period)\n",
			       sid, v6 ? '6' : '4', rc, routes(ncp), v6 ? "IPv6" : "IPv4",
			       rte_hash_count(pppoe_route_tab(ncp)));
		return;
	}
	tick(&r->b_post);
	if (c->ncp == 0)
		nb_bound++;
	c->ncp |= ncp;
	if (v6) {
		c->bn6 = bn;
		cst.bound6++;
	} else {
		c->bn4 = bn;
		cst.bound4++;
	}
	CHECK(c->s->state == EGW_PPPOE_S_BOUND && (c->s->fp->ncp & ncp) != 0,
	      "bind id %u: state %d ncp %x", sid, c->s->state, c->s->fp->ncp);
	publish(sid);
}

static void
c_unbind(uint16_t sid, bool v6)
{
	struct csess *c = &cs[sid];
	uint8_t ncp = v6 ? PPPOE_NCP_IP6 : PPPOE_NCP_IP4, p[16] = {0};
	uint32_t bn = v6 ? c->bn6 : c->bn4;
	struct bind_rec *r = &recs[sid][bn % REC_RING];
	bool gone;

	tick(&r->u_pre);
	pppoe_sess_unbind(c->s, ncp);
	tick(&r->u_post);
	c->ncp &= (uint8_t)~ncp;
	if (v6) {
		pfx6(p, sid, bn);
		gone = pppoe_route6_lookup(p) == NULL;
		c->bn6 = 0;
	} else {
		gone = pppoe_route4_lookup(rte_cpu_to_be_32(addr4(sid, bn))) == NULL;
		c->bn4 = 0;
	}
	if (c->ncp == 0)
		nb_bound--;
	cst.unbound++;
	CHECK(gone && c->s->state == (c->ncp != 0 ? EGW_PPPOE_S_BOUND : EGW_PPPOE_S_NEGOTIATING),
	      "unbind id %u IPv%c: route %s, state %d", sid, v6 ? '6' : '4', gone ? "gone" : "kept",
	      c->s->state);
	publish(sid);
}

static void
c_close(uint16_t sid, bool padt)
{
	struct csess *c = &cs[sid];
	struct bind_rec *r4 = &recs[sid][c->bn4 % REC_RING], *r6 = &recs[sid][c->bn6 % REC_RING];

	life_bump(sid); /* odd: closing */
	if (c->ncp & PPPOE_NCP_IP4)
		tick(&r4->u_pre);
	if (c->ncp & PPPOE_NCP_IP6)
		tick(&r6->u_pre);
	pppoe_sess_close(c->s, padt ? EGW_PPPOE_CAUSE_PADT : EGW_PPPOE_CAUSE_ADMIN, padt);
	if (c->ncp & PPPOE_NCP_IP4)
		tick(&r4->u_post);
	if (c->ncp & PPPOE_NCP_IP6)
		tick(&r6->u_post);
	CHECK(c->s->state == EGW_PPPOE_S_CLOSING && pppoe_sess_get(sid) == c->s,
	      "close id %u: state %d", sid, c->s->state);
	if (c->ncp != 0)
		nb_bound--;
	c->ncp = 0;
	c->bn4 = c->bn6 = 0;
	c->st = C_CLOSING;
	nb_live--;
	closing_q[(closing_h + closing_n) % (TABLE + 1)] = sid;
	closing_n++;
	if (!cst.draining)
		cst.max_closing = RTE_MAX(cst.max_closing, (uint64_t)closing_n);
	cst.closed++;
	cst.padt += padt;
	publish(sid);
}

/* The service loop; frees are noted (life even, id to the FIFO's tail). */
static void
c_service(bool full)
{
	unsigned int n = full ? egw_pppoe_service() : pppoe_sess_service(), popped = 0;

	while (closing_n != 0 && pppoe_sess_get(closing_q[closing_h]) == NULL) {
		uint16_t sid = closing_q[closing_h];

		life_bump(sid); /* even: freed */
		closing_h = (closing_h + 1) % (TABLE + 1);
		closing_n--;
		free_q[(free_h + free_n) % (TABLE + 1)] = sid;
		free_n++;
		cs[sid].st = C_FREE;
		cs[sid].s = NULL;
		publish(sid);
		popped++;
	}
	/* frees in close order: the one the library freed is the one expected
	 * (checked when something happened: the loop runs millions of times) */
	if (!full && (n != 0 || popped != 0))
		CHECK(popped == n, "service freed %u, %u of them first in close order", n, popped);
	if (n != 0 || popped != 0 || (cst.iters & 1023) == 0)
		CHECK(pppoe_sess_count() == nb_live + closing_n,
		      "library has %u sessions, expected %u", pppoe_sess_count(),
		      nb_live + closing_n);
	cst.freed += popped;
	cst.grace_frees += popped != 0;
}

/* One step of a live session's life. */
static void
c_action(uint16_t sid)
{
	struct csess *c = &cs[sid];
	unsigned int r = (unsigned int)(crnd() % 100);
	uint16_t tci[2], tpid[2], vid[2];
	struct rte_ether_addr mac;
	uint8_t nv;
	bool v6 = (crnd() & 1) != 0;
	uint8_t ncp = v6 ? PPPOE_NCP_IP6 : PPPOE_NCP_IP4;

	if (r < 10) {
		if (closing_n < CLOSING_MAX)
			c_close(sid, (r & 1) != 0);
	} else if (r < 60) {
		if ((c->ncp & ncp) == 0 && (v6 ? c->binds6 : c->binds4) < BINDS_MAX)
			c_bind(sid, v6);
	} else if (r < 78) {
		/* the last bind a generation may make stays up: most sessions carry traffic */
		if ((c->ncp & ncp) != 0 && (v6 ? c->binds6 : c->binds4) < BINDS_MAX)
			c_unbind(sid, v6);
	} else if (r < 95) {
		/* Ack-Sent: the workers' Configure-Acks are noted, data then held */
		if ((c->ncp & ncp) == 0) {
			pppoe_sess_ncp_acksent(c->s, ncp, (c->acks & ncp) == 0);
			c->acks ^= ncp;
			cst.acksent++;
		}
	} else {
		nv = sess_tags(sid, tci, tpid);
		vid[0] = tci[0] & RTE_VLAN_ID_MASK;
		vid[1] = tci[1] & RTE_VLAN_ID_MASK;
		client_mac(&mac, sid, c->gen);
		CHECK(pppoe_sess_find(sid, sess_port(sid), &mac, nv, vid) == c->s,
		      "find id %u by its key", sid);
	}
}

static int
walk_fn(const struct egw_pppoe_session_info *s, void *arg)
{
	unsigned int *n = arg;

	(*n)++;
	CHECK(s->sid >= 1 && s->sid <= TABLE && cs[s->sid].st != C_FREE &&
		      (s->state == EGW_PPPOE_S_CLOSING) == (cs[s->sid].st == C_CLOSING),
	      "walk: id %u state %d", s->sid, s->state);
	return 0;
}

/* The library's counts against the mirror; drop counters never go back. */
static void
c_consistency(uint64_t last[][EGW_PPPOE_DROP_MAX])
{
	unsigned int cnt[4], i, k, n = 0;
	uint64_t d[EGW_PPPOE_DROP_MAX];

	CHECK(egw_pppoe_session_count(cnt) == nb_live + closing_n &&
		      cnt[EGW_PPPOE_S_CLOSING] == closing_n && cnt[EGW_PPPOE_S_BOUND] == nb_bound &&
		      cnt[EGW_PPPOE_S_NEGOTIATING] == nb_live - nb_bound,
	      "counts: %u negotiating, %u bound, %u closing; expected %u, %u, %u",
	      cnt[EGW_PPPOE_S_NEGOTIATING], cnt[EGW_PPPOE_S_BOUND], cnt[EGW_PPPOE_S_CLOSING],
	      nb_live - nb_bound, nb_bound, closing_n);
	CHECK((egw_pppoe_active() != 0) == (nb_bound != 0), "active %d with %u bound",
	      egw_pppoe_active(), nb_bound);
	egw_pppoe_session_walk(walk_fn, &n);
	CHECK(n == nb_live + closing_n, "walk: %u sessions, expected %u", n, nb_live + closing_n);
	cst.walks++;
	for (i = 0; i < nb_workers; i++) {
		bool mono = true;

		egw_pppoe_ctx_drops(workers[i]->ctx, d);
		for (k = 0; k < EGW_PPPOE_DROP_MAX; k++) {
			mono = mono && d[k] >= last[i][k];
			last[i][k] = d[k];
		}
		CHECK(mono, "drop counters of context %u went back", i);
		cst.drop_reads++;
	}
}

static void
c_close_all(void)
{
	uint16_t sid;

	for (sid = 1; sid <= TABLE; sid++)
		if (cs[sid].st == C_LIVE)
			c_close(sid, (sid & 1) != 0);
}

/* Service until every closing session is freed (workers still running). */
static bool
c_drain(const char *what)
{
	uint64_t hz = rte_get_timer_hz(), start = rte_get_timer_cycles();

	while (closing_n != 0 && rte_get_timer_cycles() - start < DRAIN_S * hz)
		c_service(false);
	CHECK(closing_n == 0, "%s: %u sessions still closing after %d s (grace periods stuck)",
	      what, closing_n, DRAIN_S);
	CHECK(pppoe_sess_count() == 0 && egw_pppoe_session_count(NULL) == 0 &&
		      egw_pppoe_active() == 0 && free_n == TABLE,
	      "%s: %u sessions left, active %d, %u ids free", what, pppoe_sess_count(),
	      egw_pppoe_active(), free_n);
	CHECK(routes(PPPOE_NCP_IP4) == 0 && routes(PPPOE_NCP_IP6) == 0,
	      "%s: routes left: %u IPv4, %u IPv6", what, routes(PPPOE_NCP_IP4),
	      routes(PPPOE_NCP_IP6));
	return closing_n == 0;
}

static void
control_run(double seconds)
{
	uint64_t hz = rte_get_timer_hz(), now = rte_get_timer_cycles();
	uint64_t end = now + (uint64_t)(seconds * (double)hz), next_check = now + hz / 10;
	static uint64_t last[MAX_WORKERS][EGW_PPPOE_DROP_MAX];

	while (!__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE)) {
		uint16_t sid;

		if (nb_live < TARGET_LIVE)
			c_create();
		sid = (crnd() & 1) != 0 ? hot[crnd() % HOT] : (uint16_t)(1 + crnd() % TABLE);
		if (sid != 0 && cs[sid].st == C_LIVE)
			c_action(sid);
		c_service((cst.iters & 63) == 0);
		cst.iters++;
		if ((cst.iters & 255) != 0)
			continue;
		now = rte_get_timer_cycles();
		if (now >= next_check) {
			c_consistency(last);
			next_check = now + hz / 10;
		}
		if (now >= end)
			break;
	}
	/* the end: every session closes while the workers still run */
	cst.draining = true;
	c_close_all();
	c_drain("after the run");
	/* a full table binds both NCPs: no id and no route slot was lost */
	{
		uint64_t fail0 = cst.bind_fail;
		uint16_t s;

		while (c_create())
			;
		for (s = 1; s <= TABLE; s++)
			if (cs[s].st == C_LIVE) {
				c_bind(s, false);
				c_bind(s, true);
			}
		CHECK(nb_live == TABLE && nb_bound == TABLE && cst.bind_fail == fail0 &&
			      routes(PPPOE_NCP_IP4) == TABLE && routes(PPPOE_NCP_IP6) == TABLE,
		      "full table: %u created, %u bound, %" PRIu64 " binds failed, %u + %u routes",
		      nb_live, nb_bound, cst.bind_fail - fail0, routes(PPPOE_NCP_IP4),
		      routes(PPPOE_NCP_IP6));
		c_consistency(last);
		c_close_all();
		c_drain("after the full table");
	}
}

/* ---- set-up and results ------------------------------------------------- */

static double
duration(void)
{
	const char *e = getenv("EGW_STRESS_S");
	char *endp;
	double v;

	if (e == NULL || *e == '\0')
		return DURATION_DEF;
	v = strtod(e, &endp);
	if (*endp != '\0' || !(v > 0 && v <= 86400)) {
		printf("EGW_STRESS_S=%s: not a duration in seconds (0..86400], using %.0f\n", e,
		       DURATION_DEF);
		return DURATION_DEF;
	}
	return v;
}

static void
stop_workers(void)
{
	/* pairs with the acquire loads in worker_main() */
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
}

static void
report(double seconds, uint64_t *w_checks, uint64_t *w_failures)
{
	uint64_t dsum[EGW_PPPOE_DROP_MAX] = {0}, in = 0, out = 0, chk = 0, fail = 0;
	unsigned int i, k, ids_reused = 0;

	for (i = 1; i <= TABLE; i++)
		ids_reused += cs[i].gen > 1;
	printf("test_stress: %.1f s, %u workers, table %u, target %u live\n", seconds, nb_workers,
	       TABLE, TARGET_LIVE);
	printf("control: %" PRIu64 " iterations, %" PRIu64 " sessions created (%" PRIu64
	       " on a reused id; %u of %u ids reused), %" PRIu64 " IPv4 + %" PRIu64
	       " IPv6 binds (%" PRIu64 " failed), %" PRIu64 " unbinds, %" PRIu64 " Ack-Sent "
	       "changes, %" PRIu64 " closed (%" PRIu64 " with PADT, %" PRIu64 " frames sent)\n",
	       cst.iters, cst.created, cst.reused, ids_reused, TABLE, cst.bound4, cst.bound6,
	       cst.bind_fail, cst.unbound, cst.acksent, cst.closed, cst.padt, cst.tx_frames);
	printf("grace periods: %" PRIu64 " sessions freed by %" PRIu64
	       " service calls that freed, at most %" PRIu64 " closing at once; %" PRIu64
	       " consistency passes, %" PRIu64 " logical clock ticks\n",
	       cst.freed, cst.grace_frees, cst.max_closing, cst.walks, ld64(&clk));
	for (i = 0; i < nb_workers; i++) {
		const struct worker *w = workers[i];
		const struct wstats *s = &w->st;

		printf("worker %u (lcore %u): %" PRIu64 " loops; decap %" PRIu64 " bursts, %" PRIu64
		       " in, %" PRIu64 " out, %" PRIu64 " ctrl, %" PRIu64
		       " out of the hold (at most "
		       "%u held); encap %" PRIu64 " bursts, %" PRIu64 " in, %" PRIu64
		       " out, %" PRIu64 " passed, %" PRIu64 " ICMP\n",
		       w->idx, w->lcore, s->loops, s->dec_bursts, s->dec_in, s->dec_out,
		       s->dec_ctrl, s->poll_out, s->held_max, s->enc_bursts, s->enc_in, s->enc_out,
		       s->enc_pass, s->enc_icmp);
		printf("worker %u: %" PRIu64 " outputs checked against the binds, %" PRIu64
		       " + %" PRIu64 " frames that had to come out, %" PRIu64
		       " id lives checked (%" PRIu64 " closed or freed under the burst); %" PRIu64
		       " checks, %" PRIu64 " failures\n",
		       w->idx, s->legal_checked, s->dec_must, s->enc_must, s->life_checked,
		       s->life_moved, w->checks, w->failures);
		for (k = 0; k < EGW_PPPOE_DROP_MAX; k++)
			dsum[k] += w->drops[k];
		in += s->dec_in + s->enc_in;
		out += s->dec_out + s->poll_out + s->enc_out;
		chk += w->checks;
		fail += w->failures;
	}
	printf("drops:");
	for (k = 0; k < EGW_PPPOE_DROP_MAX; k++)
		if (dsum[k] != 0)
			printf(" %s %" PRIu64, egw_pppoe_drop_name(k), dsum[k]);
	printf("\nframes: %" PRIu64 " in, %" PRIu64 " out (%.2f M/s in)\n", in, out,
	       (double)in / seconds / 1e6);
	*w_checks = chk;
	*w_failures = fail;
}

int
main(int argc, char **argv)
{
	struct rte_mempool *ctrl_pool, *pools[MAX_WORKERS];
	struct egw_pppoe_params p;
	struct egw_pppoe_config cfg;
	uint64_t start, sess_rx = 0, sess_tx = 0, wrx = 0, wtx = 0, w_checks, w_failures;
	double seconds = duration(), took;
	unsigned int lcore, i, k, sid;
	char name[32];

	if (rte_eal_init(argc, argv) < 0 || egw_eth_init() != 0) {
		printf("EAL or lib/eth init failed\n");
		return 1;
	}
	if (rte_lcore_count() < 2) {
		printf("test_stress needs at least 2 lcores (control + a worker)\n");
		return 1;
	}
	nb_workers = RTE_MIN(rte_lcore_count() - 1, (unsigned int)MAX_WORKERS);
	ctrl_pool = rte_pktmbuf_pool_create("stress_ctrl", CTRL_MBUFS, 32, 0,
					    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	qs = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(nb_workers), RTE_CACHE_LINE_SIZE);
	if (ctrl_pool == NULL || qs == NULL || rte_rcu_qsbr_init(qs, nb_workers) != 0) {
		printf("set-up failed\n");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.qsbr = qs;
	p.pool = ctrl_pool;
	p.max_sessions = TABLE;
	p.nb_ctx = nb_workers;
	p.tx = tx_fn;
	p.socket = SOCKET_ID_ANY;
	if (egw_pppoe_init(&p) != 0) {
		printf("egw_pppoe_init failed\n");
		return 1;
	}
	egw_pppoe_config_get(&cfg);
	cfg.guard.max_starting = TABLE; /* every session may negotiate at once */
	CHECK(egw_pppoe_set_guard(&cfg.guard) == 0 && egw_pppoe_set_limits(TABLE, 2) == 0,
	      "limits");
	CHECK(egw_pppoe_port_add(0, &port_mac[0], 1500) == 0 &&
		      egw_pppoe_port_add(1, &port_mac[1], 1500) == 0,
	      "access ports");
	/* ICMP too-big sources (pool.c sets them from the first pool) */
	pppoe_g.local4 = rte_cpu_to_be_32(IP_LOCAL);
	memcpy(pppoe_g.local6, local6, 16);
	for (i = 0; i < 3; i++)
		eth_ports[i].mac = port_mac[i];
	for (sid = 1; sid <= TABLE; sid++)
		free_q[sid - 1] = (uint16_t)sid; /* a fresh table hands out 1, 2, 3, ... */
	free_n = TABLE;

	i = 0;
	RTE_LCORE_FOREACH_WORKER (lcore) {
		struct worker *w;

		if (i == nb_workers)
			break;
		snprintf(name, sizeof(name), "stress_w%u", i);
		pools[i] = rte_pktmbuf_pool_create(name, WORKER_MBUFS, 64, 0,
						   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		w = rte_zmalloc(NULL, sizeof(*w), RTE_CACHE_LINE_SIZE);
		if (pools[i] == NULL || w == NULL) {
			printf("worker %u set-up failed\n", i);
			return 1;
		}
		w->idx = i;
		w->lcore = lcore;
		w->pool = pools[i];
		w->rng = UINT64_C(0x243f6a8885a308d3) * (i + 1);
		w->ctx = egw_pppoe_ctx_create(i, pools[i]);
		CHECK(w->ctx != NULL && rte_rcu_qsbr_thread_register(qs, i) == 0,
		      "context and reader %u", i);
		if (w->ctx == NULL)
			return 1;
		workers[i++] = w;
	}
	RTE_LCORE_FOREACH_WORKER (lcore) {
		for (i = 0; i < nb_workers; i++)
			if (workers[i]->lcore == lcore)
				rte_eal_remote_launch(worker_main, workers[i], lcore);
	}

	start = rte_get_timer_cycles();
	control_run(seconds);
	took = (double)(rte_get_timer_cycles() - start) / (double)rte_get_timer_hz();
	stop_workers();

	CHECK(cst.refused == 0,
	      "%" PRIu64 " session creates refused below max_sessions with ids free (see above)",
	      cst.refused);
	/* liveness: the run did real work, grace periods ended, ids came back */
	CHECK(cst.freed > 0 && cst.reused > 0,
	      "no grace period ended during the run (%" PRIu64 " freed, %" PRIu64
	      " ids reused): do the workers report quiescent?",
	      cst.freed, cst.reused);
	for (i = 0; i < nb_workers; i++) {
		struct worker *w = workers[i];
		uint64_t d[EGW_PPPOE_DROP_MAX];
		bool same = true;

		CHECK(w->st.dec_out > 0 && w->st.enc_out > 0 && w->st.dec_ctrl > 0,
		      "worker %u did no real work", i);
		/* the context's counters are what the results said, reason by reason */
		egw_pppoe_ctx_drops(w->ctx, d);
		for (k = 0; k < EGW_PPPOE_DROP_MAX; k++) {
			if (d[k] != w->drops[k])
				printf("context %u: %s %" PRIu64 ", results said %" PRIu64 "\n", i,
				       egw_pppoe_drop_name(k), d[k], w->drops[k]);
			same = same && d[k] == w->drops[k];
		}
		CHECK(same, "context %u drop counters = sum of res.drop", i);
		CHECK(egw_pppoe_ctx_held(w->ctx) == 0, "context %u holds %u frames", i,
		      egw_pppoe_ctx_held(w->ctx));
		wrx += w->st.dec_out + w->st.poll_out;
		wtx += w->st.enc_out;
	}
	/* per-session data-path counters: every frame that came out, counted once */
	for (sid = 1; sid <= TABLE; sid++) {
		uint64_t c[4];

		pppoe_fast_sess_counters((uint16_t)sid, c);
		sess_rx += c[0];
		sess_tx += c[2];
	}
	CHECK(sess_rx == wrx && sess_tx == wtx,
	      "session counters: rx %" PRIu64 " tx %" PRIu64 ", frames out: %" PRIu64 " / %" PRIu64,
	      sess_rx, sess_tx, wrx, wtx);

	report(took, &w_checks, &w_failures);
	for (i = 0; i < nb_workers; i++)
		egw_pppoe_ctx_free(workers[i]->ctx);
	egw_pppoe_fini();
	for (i = 0; i < nb_workers; i++)
		CHECK(rte_mempool_avail_count(pools[i]) == WORKER_MBUFS,
		      "worker %u: every mbuf back: %u of %u", i, rte_mempool_avail_count(pools[i]),
		      WORKER_MBUFS);
	CHECK(rte_mempool_avail_count(ctrl_pool) == CTRL_MBUFS,
	      "control: every mbuf back: %u of %u", rte_mempool_avail_count(ctrl_pool), CTRL_MBUFS);
	printf("test_stress: %d control checks, %d failures; %" PRIu64 " worker checks, %" PRIu64
	       " failures\n",
	       checks, failures, w_checks, w_failures);
	return failures != 0 || w_failures != 0;
}
