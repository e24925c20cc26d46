/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of lib/rxtokens without a NIC: frames are built in C, copied into
 * mbufs (and chains of mbufs) taken from a region's pool, classified by
 * lib/eth and handed to egw_rxtok_deliver_burst() as a worker on (port 0,
 * queue 0) would. One table per rule:
 *
 *  - delivery: each record's token/offset/size is exactly the payload (the
 *    bytes are compared, and the records with those computed from the chain);
 *    UDP over IPv4/IPv6, destination IPv4/IPv6, PPPoE with a 2-byte and a
 *    compressed 1-byte PPP protocol field, VLAN, options, padding, chains;
 *    FIRST/LAST flags; other frames pass in order; burst counters;
 *  - ownership: only held tokens, only as often as held, all or nothing;
 *    every rejection (out of range, not held, named twice, other region, bad
 *    counts, closed, no consumer at all: the syzbot case) counted once and
 *    changing nothing, for this consumer or another;
 *  - records not yet read are not held;
 *  - one binding per consumer: -EPIPE once after a steered frame;
 *  - quota: drops, no stall, recovery;
 *  - close/destroy release what is held and what waits in the ring;
 *  - a page goes back to its pool only with its last reference;
 *  - flow registration errors.
 *
 * Page ownership is checked through the pool: rte_mempool_avail_count()
 * (caches included) must equal the pool size less the pages the test itself
 * or the consumers hold.
 *
 * Needs free 2 MiB hugepages (EAL -m 256 and a 16 MiB region memfd): without
 * them it exits 77 (skipped) and says why.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "egw_eth.h"
#include "egw_rxtok.h"
#include "egw_rxtok_shring.h"
#include "rxtok_private.h"
#include "rxtok_test.h"
#include "../app/check.h"

#define SKIP T_SKIP
#define REGION_SIZE (8u << 20) /* 2048 pages */
#define REGION2_SIZE (2u << 20)
#define MAX_RECS 64

static struct rte_rcu_qsbr *qsbr;
static struct egw_rxtok_region *reg;
static struct rte_mempool *pool;
static const uint8_t *base;
static uint32_t rid, n_pages, full;

static unsigned int
avail(void)
{
	return rte_mempool_avail_count(pool);
}

/* ---- counters, read back through egw_rxtok_json() ---- */

/* What fn printed, as a string to free. */
static char *
capture(void (*fn)(FILE *f, const char *what), const char *what)
{
	/* static: open_memstream() keeps their addresses until fclose() */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	len = 0;
	f = open_memstream(&buf, &len);
	if (f == NULL)
		abort();
	fn(f, what);
	fclose(f);
	return buf;
}

static const char *const rej_keys[] = {"enotconn", "ebadf", "exdev", "einval", "erange", "enoent"};

/* ---- consumers and frames ---- */

static struct egw_rxtok_consumer *
mk_udp(const char *name, uint16_t dport, uint32_t quota)
{
	struct egw_rxtok_consumer_conf conf = {
		.name = name,
		.region = reg,
		.quota = quota,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = dport,
	};
	struct egw_rxtok_consumer *c = egw_rxtok_consumer_create(&conf);

	CHECK(c != NULL, "create consumer %s (udp %u): %s", name, dport, rte_strerror(rte_errno));
	return c;
}

/* A single-page UDP/IPv4 frame to dport from the region pool. */
static struct rte_mbuf *
udp_frame(uint16_t dport, uint16_t plen)
{
	static uint8_t buf[T_FRAME_MAX];
	struct t_frame f = {.kind = T_UDP4, .dst4_last = 9, .dport = dport, .plen = plen};
	struct t_layout lo = t_build(&f, buf);
	struct rte_mbuf *m = t_chain(pool, buf, lo.len, 0, 0);

	if (m == NULL)
		abort();
	return m;
}

static uint32_t
token_of(const struct rte_mbuf *m)
{
	return (uint32_t)(((const uint8_t *)m->buf_addr - base) >> EGW_RXTOK_PAGE_SHIFT);
}

/* Deliver frames to their consumers; returns how many passed (and frees them). */
static uint16_t
deliver(struct rte_mbuf **pkts, uint16_t n, struct egw_rxtok_burst_res *res)
{
	uint16_t pass = t_deliver(qsbr, 0, 0, pkts, n, res), i;

	for (i = 0; i < pass; i++)
		rte_pktmbuf_free(pkts[i]);
	return pass;
}

/* Receive everything waiting; tokens appended to toks. */
static int
recv_all(struct egw_rxtok_consumer *c, uint32_t *toks, unsigned int max)
{
	struct egw_rxtok_rec recs[MAX_RECS];
	int n = egw_rxtok_recv(c, recs, RTE_MIN(max, (unsigned int)MAX_RECS)), i;

	for (i = 0; i < n; i++)
		toks[i] = recs[i].token;
	return n;
}

static int
return_each(struct egw_rxtok_consumer *c, const uint32_t *toks, unsigned int n)
{
	struct egw_rxtok_range r[EGW_RXTOK_MAX_RANGES];
	unsigned int i;

	for (i = 0; i < n; i++) {
		r[i].token_start = toks[i];
		r[i].token_count = 1;
	}
	return egw_rxtok_return(c, rid, r, n);
}

/* ---- 1. delivery ---- */

enum where { P_L4 = 0, P_L3, P_PPP };

struct dcase {
	const char *label;
	struct t_frame f;
	uint16_t seg0, seg; /* segmentation (0: whole pages) */
	int to;             /* consumer index; -1 passes on; -2 dropped */
	int drop;           /* reason when dropped */
	enum where where;
	uint32_t nrec;
};

static void
test_delivery(void)
{
	static const struct {
		const char *name;
		enum egw_rxtok_match m;
		uint16_t dport, sid;
		uint8_t d4, d6;
	} cons[] = {
		{"d_udp", EGW_RXTOK_MATCH_UDP_DPORT, 5001, 0, 0, 0},
		{"d_dst4", EGW_RXTOK_MATCH_DST4, 0, 0, 4, 0},
		{"d_dst6", EGW_RXTOK_MATCH_DST6, 0, 0, 0, 6},
		{"d_ppp", EGW_RXTOK_MATCH_PPPOE, 0, 0x1234, 0, 0},
	};
	static const struct dcase rows[] = {
		{"UDP/IPv4 to port 5001, 100 B",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 100},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"UDP/IPv6 to port 5001, 1000 B",
		 {T_UDP6, .dst6_last = 9, .dport = 5001, .plen = 1000},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"802.1Q-tagged UDP/IPv4 to port 5001",
		 {T_UDP4, .vlan = 100, .dst4_last = 9, .dport = 5001, .plen = 333},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"UDP/IPv4 port 5001, 2 B padded to 60 B: padding not delivered",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 2, .pad_to = 60},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"UDP/IPv4 to 10.0.0.4 port 5001: the port consumer wins",
		 {T_UDP4, .dst4_last = 4, .dport = 5001, .plen = 64},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"UDP/IPv4 to 10.0.0.4 port 7777: dst4, payload from the UDP header",
		 {T_UDP4, .dst4_last = 4, .dport = 7777, .plen = 64},
		 0,
		 0,
		 1,
		 0,
		 P_L3,
		 1},
		{"TCP/IPv4 to 10.0.0.4", {T_IP4, .dst4_last = 4, .plen = 300}, 0, 0, 1, 0, P_L3, 1},
		{"IPv4 with 8 option bytes to 10.0.0.4: payload after the options",
		 {T_IP4, .ip_opt = 8, .dst4_last = 4, .plen = 77},
		 0,
		 0,
		 1,
		 0,
		 P_L3,
		 1},
		{"IPv6 (no next header) to 2001:db8::6",
		 {T_IP6, .dst6_last = 6, .plen = 500},
		 0,
		 0,
		 2,
		 0,
		 P_L3,
		 1},
		{"UDP/IPv6 to 2001:db8::6 port 7777: dst6",
		 {T_UDP6, .dst6_last = 6, .dport = 7777, .plen = 50},
		 0,
		 0,
		 2,
		 0,
		 P_L3,
		 1},
		{"PPPoE session 0x1234, 2-byte PPP protocol",
		 {T_PPP2, .sid = 0x1234, .plen = 200},
		 0,
		 0,
		 3,
		 0,
		 P_PPP,
		 1},
		{"PPPoE session 0x1234, 1-byte PPP protocol (PFC)",
		 {T_PPP1, .sid = 0x1234, .plen = 201},
		 0,
		 0,
		 3,
		 0,
		 P_PPP,
		 1},
		{"UDP/IPv4 9000 B over 3 pages: 3 records",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 9000},
		 0,
		 0,
		 0,
		 0,
		 P_L4,
		 3},
		{"UDP/IPv4 5000 B, headers alone in the first segment: 2 records",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 5000},
		 42,
		 0,
		 0,
		 0,
		 P_L4,
		 2},
		{"UDP/IPv6 3000 B in 1000 B segments: 4 records",
		 {T_UDP6, .dst6_last = 9, .dport = 5001, .plen = 3000},
		 1000,
		 1000,
		 0,
		 0,
		 P_L4,
		 4},
		{"PPPoE PFC 4000 B over 2 pages: 2 records",
		 {T_PPP1, .sid = 0x1234, .plen = 4000},
		 0,
		 0,
		 3,
		 0,
		 P_PPP,
		 2},
		{"UDP header split over 2 segments (38 + rest)",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 100},
		 38,
		 0,
		 0,
		 0,
		 P_L4,
		 1},
		{"UDP/IPv4 to port 5002, 10.0.0.9: no consumer, passes",
		 {T_UDP4, .dst4_last = 9, .dport = 5002, .plen = 10},
		 0,
		 0,
		 -1,
		 0,
		 P_L4,
		 0},
		{"IPv6 to 2001:db8::7: passes",
		 {T_IP6, .dst6_last = 7, .plen = 10},
		 0,
		 0,
		 -1,
		 0,
		 P_L3,
		 0},
		{"PPPoE session 0x1235: passes",
		 {T_PPP2, .sid = 0x1235, .plen = 10},
		 0,
		 0,
		 -1,
		 0,
		 P_PPP,
		 0},
		{"ARP: passes", {T_ARP}, 0, 0, -1, 0, P_L3, 0},
		{"UDP port 5001 with UDP length 4 (< 8): passes, not delivered",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 10, .bad_ulen = 4},
		 0,
		 0,
		 -1,
		 0,
		 P_L4,
		 0},
		{"UDP port 5001 with UDP length past the IP payload: passes",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 10, .bad_ulen = 19},
		 0,
		 0,
		 -1,
		 0,
		 P_L4,
		 0},
		{"PPPoE 0x1234 with its length past the frame: passes",
		 {T_PPP2, .sid = 0x1234, .plen = 10, .bad_pplen = 200},
		 0,
		 0,
		 -1,
		 0,
		 P_PPP,
		 0},
		{"UDP port 5001 with an empty payload: dropped (empty)",
		 {T_UDP4, .dst4_last = 9, .dport = 5001, .plen = 0},
		 0,
		 0,
		 -2,
		 EGW_RXTOK_DROP_EMPTY,
		 P_L4,
		 0},
		{"PPPoE 0x1234 with the protocol field only: dropped (empty)",
		 {T_PPP2, .sid = 0x1234, .plen = 0},
		 0,
		 0,
		 -2,
		 EGW_RXTOK_DROP_EMPTY,
		 P_PPP,
		 0},
	};
	static uint8_t frame[T_FRAME_MAX];
	struct egw_rxtok_consumer *c[RTE_DIM(cons)];
	unsigned int i, k;

	printf("rxtokens delivery: records name exactly the payload; other frames pass in order\n");
	for (i = 0; i < RTE_DIM(cons); i++) {
		struct egw_rxtok_consumer_conf conf = {
			.name = cons[i].name,
			.region = reg,
			.match = cons[i].m,
			.udp_dport = cons[i].dport,
			.pppoe_session = cons[i].sid,
		};

		if (cons[i].m == EGW_RXTOK_MATCH_DST4) {
			conf.dst[0] = 10;
			conf.dst[3] = cons[i].d4;
		} else if (cons[i].m == EGW_RXTOK_MATCH_DST6) {
			t_dst6(conf.dst, cons[i].d6);
		}
		c[i] = egw_rxtok_consumer_create(&conf);
		CHECK(c[i] != NULL, "create %s: %s", cons[i].name, rte_strerror(rte_errno));
		if (c[i] == NULL)
			return;
	}
	for (i = 0; i < RTE_DIM(rows); i++) {
		const struct dcase *t = &rows[i];
		struct t_layout lo = t_build(&t->f, frame);
		struct egw_rxtok_rec exp[MAX_RECS], got[MAX_RECS];
		struct egw_rxtok_burst_res res = {0};
		struct rte_mbuf *x, *pre, *post, *pkts[3];
		uint32_t off, len, nexp, segs, a0, done;
		uint16_t pass;
		int n;

		printf("  delivery: %s\n", t->label);
		off = t->where == P_L4 ? lo.l4_off : t->where == P_L3 ? lo.l3_off : lo.ppp_off;
		len = t->where == P_L4 ? lo.l4_len : t->where == P_L3 ? lo.l3_len : lo.ppp_len;
		x = t_chain(pool, frame, lo.len, t->seg0, t->seg);
		pre = udp_frame(5002, 20);
		post = udp_frame(5003, 30);
		if (x == NULL)
			abort();
		segs = x->nb_segs;
		nexp = t_expect_recs(x, base, off, len, exp, MAX_RECS);
		pkts[0] = pre;
		pkts[1] = x;
		pkts[2] = post;
		a0 = avail();
		pass = t_deliver(qsbr, 0, 0, pkts, 3, &res);
		if (t->to == -1) {
			CHECK(pass == 3 && pkts[0] == pre && pkts[1] == x && pkts[2] == post,
			      "%s: all 3 frames pass in order (pass %u)", t->label, pass);
			CHECK(res.delivered == 0 && res.records == 0, "%s: nothing delivered",
			      t->label);
			for (k = 0; k < RTE_MIN(pass, 3u); k++)
				rte_pktmbuf_free(pkts[k]);
			CHECK(avail() == full, "%s: pool full again (%u/%u)", t->label, avail(),
			      full);
			continue;
		}
		CHECK(pass == 2 && pkts[0] == pre && pkts[1] == post,
		      "%s: the 2 other frames pass in order (pass %u)", t->label, pass);
		for (k = 0; k < RTE_MIN(pass, 3u); k++)
			rte_pktmbuf_free(pkts[k]);
		if (t->to == -2) {
			CHECK(res.delivered == 0 && res.drop[t->drop] == 1,
			      "%s: dropped as %s (delivered %u drop %u)", t->label,
			      egw_rxtok_drop_name((unsigned int)t->drop), res.delivered,
			      res.drop[t->drop]);
			CHECK(avail() == full, "%s: dropped frame freed (%u/%u)", t->label, avail(),
			      full);
			continue;
		}
		CHECK(res.delivered == 1 && res.records == t->nrec && nexp == t->nrec,
		      "%s: delivered %u records %u (expected 1, %u; chain says %u)", t->label,
		      res.delivered, res.records, t->nrec, nexp);
		for (k = 0; k < EGW_RXTOK_DROP_MAX; k++)
			CHECK(res.drop[k] == 0, "%s: no drop %s", t->label, egw_rxtok_drop_name(k));
		/* segments without payload went back at once; the others wait */
		CHECK(avail() == a0 + 2 + (segs - nexp),
		      "%s: %u segments without payload freed (avail %u, expected %u)", t->label,
		      segs - nexp, avail(), a0 + 2 + (segs - nexp));
		for (k = 0; k < RTE_DIM(cons); k++) {
			if ((int)k == t->to)
				continue;
			n = egw_rxtok_recv(c[k], got, MAX_RECS);
			CHECK(n == 0, "%s: consumer %s gets nothing (%d)", t->label, cons[k].name,
			      n);
		}
		n = egw_rxtok_recv(c[t->to], got, MAX_RECS);
		CHECK(n == (int)nexp, "%s: %s reads %d records, expected %u", t->label,
		      cons[t->to].name, n, nexp);
		done = 0;
		for (k = 0; k < (unsigned int)RTE_MAX(n, 0) && k < nexp; k++) {
			const struct egw_rxtok_rec *r = &got[k];
			uint8_t fl = (uint8_t)((k == 0 ? EGW_RXTOK_REC_FIRST : 0) |
					       (k == nexp - 1 ? EGW_RXTOK_REC_LAST : 0));
			uint32_t key = cons[t->to].m == EGW_RXTOK_MATCH_UDP_DPORT ? t->f.dport
				       : cons[t->to].m == EGW_RXTOK_MATCH_PPPOE   ? t->f.sid
										  : 0;

			CHECK(r->token == exp[k].token && r->offset == exp[k].offset &&
				      r->size == exp[k].size,
			      "%s: record %u {token %u offset %u size %u}, expected {%u %u %u}",
			      t->label, k, r->token, r->offset, r->size, exp[k].token,
			      exp[k].offset, exp[k].size);
			CHECK(r->token < n_pages &&
				      (uint32_t)r->offset + r->size <= EGW_RXTOK_PAGE_SIZE,
			      "%s: record %u inside one page of the region", t->label, k);
			CHECK(r->flags == fl, "%s: record %u flags 0x%x, expected 0x%x", t->label,
			      k, r->flags, fl);
			CHECK(r->key == key && r->port == 0 && r->match == cons[t->to].m,
			      "%s: record %u key %u port %u match %u", t->label, k, r->key, r->port,
			      r->match);
			if (r->token < n_pages && done + r->size <= len)
				CHECK(memcmp(base + ((size_t)r->token << EGW_RXTOK_PAGE_SHIFT) +
						     r->offset,
					     frame + off + done, r->size) == 0,
				      "%s: record %u bytes are payload bytes %u..%u", t->label, k,
				      done, done + r->size - 1);
			done += r->size;
		}
		CHECK(done == len, "%s: records cover %u payload bytes, expected %u", t->label,
		      done, len);
		CHECK(avail() == full - nexp, "%s: reading takes no page (avail %u)", t->label,
		      avail());
		if (n > 0) {
			uint32_t toks[MAX_RECS];

			for (k = 0; k < (unsigned int)n; k++)
				toks[k] = got[k].token;
			CHECK(return_each(c[t->to], toks, (unsigned int)n) == n,
			      "%s: return the %d tokens", t->label, n);
		}
		CHECK(avail() == full, "%s: pool full after return (%u/%u)", t->label, avail(),
		      full);
	}

	/* one burst mixing matching and other frames: the others keep their order */
	{
		struct egw_rxtok_burst_res res = {0};
		struct rte_mbuf *pkts[8], *other[4];
		uint32_t toks[MAX_RECS];
		struct t_frame f4 = {T_IP4, .dst4_last = 4, .plen = 40};
		struct t_frame fp = {T_PPP1, .sid = 0x1234, .plen = 40};
		struct t_frame f6 = {T_UDP6, .dst6_last = 9, .dport = 5001, .plen = 40};
		struct t_layout lo;
		uint16_t pass;
		int total = 0;

		printf("  delivery: mixed burst of 8, 4 matching: the other 4 pass in order\n");
		other[0] = pkts[0] = udp_frame(5010, 1);
		pkts[1] = udp_frame(5001, 11);
		other[1] = pkts[2] = udp_frame(5011, 2);
		lo = t_build(&f4, frame);
		pkts[3] = t_chain(pool, frame, lo.len, 0, 0);
		lo = t_build(&fp, frame);
		pkts[4] = t_chain(pool, frame, lo.len, 0, 0);
		other[2] = pkts[5] = udp_frame(5012, 3);
		other[3] = pkts[6] = udp_frame(5013, 4);
		lo = t_build(&f6, frame);
		pkts[7] = t_chain(pool, frame, lo.len, 0, 0);
		pass = t_deliver(qsbr, 0, 0, pkts, 8, &res);
		CHECK(pass == 4 && res.delivered == 4 && res.records == 4,
		      "mixed: pass %u delivered %u records %u (expected 4 4 4)", pass,
		      res.delivered, res.records);
		for (k = 0; k < 4 && k < pass; k++)
			CHECK(pkts[k] == other[k], "mixed: passed frame %u in place", k);
		for (k = 0; k < pass; k++)
			rte_pktmbuf_free(pkts[k]);
		for (k = 0; k < RTE_DIM(cons); k++) {
			int n = recv_all(c[k], toks, MAX_RECS);

			total += n;
			CHECK(n == (k == 0   ? 2
				    : k == 2 ? 0
					     : 1),
			      "mixed: %s reads %d", cons[k].name, n);
			if (n > 0)
				return_each(c[k], toks, (unsigned int)n);
		}
		CHECK(total == 4 && avail() == full, "mixed: 4 records, pool full (%u/%u)", avail(),
		      full);
	}
	for (i = 0; i < RTE_DIM(cons); i++)
		CHECK(egw_rxtok_consumer_destroy(c[i]) == 0, "destroy %s", cons[i].name);
}

/* ---- 2. ownership ---- */

/* Symbolic tokens in the table: resolved against what A and B hold. */
#define TA(i) (0xA0000000u | (i))
#define TB(i) (0xB0000000u | (i))
#define TFREE 0xC0000000u /* a page nobody holds */
#define TLAST 0xD0000000u /* the region's last page */
#define TEND 0xE0000000u  /* one past the last page */
#define RID_OK UINT32_C(0xFFFFFFFE)
#define RID_NEXT UINT32_C(0xFFFFFFFD)

struct ocase {
	const char *label;
	int who; /* 0: consumer A; 1: no consumer (NULL) */
	uint32_t region;
	struct egw_rxtok_range r[6];
	unsigned int n;
	int big; /* >0: this many ranges of TFREE instead of r */
	bool null_ranges;
	int rc;
	const char *key; /* counter that must grow by one */
};

static uint32_t a_tok[4], b_tok[3], free_tok;

static uint32_t
resolve(uint32_t t)
{
	switch (t & 0xF0000000u) {
	case 0xA0000000u: return a_tok[t & 0xf];
	case 0xB0000000u: return b_tok[t & 0xf];
	case 0xC0000000u: return free_tok;
	case 0xD0000000u: return n_pages - 1;
	case 0xE0000000u: return n_pages;
	default: return t;
	}
}

static void
snap_counters(long long v[7])
{
	unsigned int k;

	for (k = 0; k < 6; k++)
		v[k] = t_jc("own_a", rej_keys[k]);
	v[6] = t_jtop("calls_without_consumer");
}

static void
test_ownership(void)
{
	static const struct ocase rows[] = {
		{"token one past the region",
		 0,
		 RID_OK,
		 {{TEND, 1}},
		 1,
		 0,
		 false,
		 -ERANGE,
		 "erange"},
		{"range from the last page running past the region",
		 0,
		 RID_OK,
		 {{TLAST, 2}},
		 1,
		 0,
		 false,
		 -ERANGE,
		 "erange"},
		{"token_start UINT32_MAX",
		 0,
		 RID_OK,
		 {{UINT32_MAX, 1}},
		 1,
		 0,
		 false,
		 -ERANGE,
		 "erange"},
		{"the last page (in range) not held",
		 0,
		 RID_OK,
		 {{TLAST, 1}},
		 1,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"a token B holds, named by A",
		 0,
		 RID_OK,
		 {{TB(0), 1}},
		 1,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"a token nobody holds", 0, RID_OK, {{TFREE, 1}}, 1, 0, false, -ENOENT, "enoent"},
		{"a token held once, named twice in one call",
		 0,
		 RID_OK,
		 {{TA(0), 1}, {TA(0), 1}},
		 2,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"a held token and one not held",
		 0,
		 RID_OK,
		 {{TA(1), 1}, {TFREE, 1}},
		 2,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"A's four tokens, then one of B's",
		 0,
		 RID_OK,
		 {{TA(0), 1}, {TA(1), 1}, {TA(2), 1}, {TA(3), 1}, {TB(1), 1}},
		 5,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"another region id", 0, RID_NEXT, {{TA(0), 1}}, 1, 0, false, -EXDEV, "exdev"},
		{"region id UINT32_MAX", 0, UINT32_MAX, {{TA(0), 1}}, 1, 0, false, -EXDEV, "exdev"},
		{"range count 0", 0, RID_OK, {{TA(0), 0}}, 1, 0, false, -EINVAL, "einval"},
		{"range count EGW_RXTOK_MAX_RANGE_TOKENS + 1",
		 0,
		 RID_OK,
		 {{0, EGW_RXTOK_MAX_RANGE_TOKENS + 1}},
		 1,
		 0,
		 false,
		 -EINVAL,
		 "einval"},
		{"range count EGW_RXTOK_MAX_RANGE_TOKENS (accepted), tokens not all held",
		 0,
		 RID_OK,
		 {{0, EGW_RXTOK_MAX_RANGE_TOKENS}},
		 1,
		 0,
		 false,
		 -ENOENT,
		 "enoent"},
		{"range count UINT32_MAX",
		 0,
		 RID_OK,
		 {{TA(0), UINT32_MAX}},
		 1,
		 0,
		 false,
		 -EINVAL,
		 "einval"},
		{"n = 0", 0, RID_OK, {{TA(0), 1}}, 0, 0, false, -EINVAL, "einval"},
		{"n = EGW_RXTOK_MAX_RANGES + 1",
		 0,
		 RID_OK,
		 {{0}},
		 0,
		 EGW_RXTOK_MAX_RANGES + 1,
		 false,
		 -EINVAL,
		 "einval"},
		{"n = EGW_RXTOK_MAX_RANGES (accepted), tokens not held",
		 0,
		 RID_OK,
		 {{0}},
		 0,
		 EGW_RXTOK_MAX_RANGES,
		 false,
		 -ENOENT,
		 "enoent"},
		{"ranges NULL", 0, RID_OK, {{0}}, 1, 0, true, -EINVAL, "einval"},
		{"no consumer at all (NULL): the syzbot case",
		 1,
		 RID_OK,
		 {{TA(0), 1}},
		 1,
		 0,
		 false,
		 -ENOTCONN,
		 "calls_without_consumer"},
		{"no consumer and NULL ranges",
		 1,
		 RID_OK,
		 {{0}},
		 1,
		 0,
		 true,
		 -ENOTCONN,
		 "calls_without_consumer"},
	};
	static struct egw_rxtok_range big[EGW_RXTOK_MAX_RANGES + 1];
	struct egw_rxtok_consumer *a, *b;
	struct rte_mbuf *pkts[8];
	struct egw_rxtok_burst_res res = {0};
	struct egw_rxtok_range r[8];
	unsigned int i, k;
	uint32_t more[4];
	int rc;

	printf("rxtokens ownership: only held tokens, as often as held; rejections change "
	       "nothing and are counted\n");
	a = mk_udp("own_a", 6001, 0);
	b = mk_udp("own_b", 6002, 0);
	if (a == NULL || b == NULL)
		return;
	for (i = 0; i < 4; i++)
		pkts[i] = udp_frame(6001, 64);
	for (i = 4; i < 7; i++)
		pkts[i] = udp_frame(6002, 64);
	CHECK(deliver(pkts, 7, &res) == 0 && res.delivered == 7, "deliver 4 to A, 3 to B");
	CHECK(recv_all(a, a_tok, 4) == 4 && recv_all(b, b_tok, 3) == 3, "A reads 4, B reads 3");
	for (free_tok = 0; free_tok < n_pages; free_tok++) {
		for (k = 0; k < 4 && a_tok[k] != free_tok; k++)
			;
		if (k < 4)
			continue;
		for (k = 0; k < 3 && b_tok[k] != free_tok; k++)
			;
		if (k == 3)
			break;
	}
	for (k = 0; k < 4; k++)
		CHECK(a_tok[k] != n_pages - 1,
		      "the last page is not one of A's (table assumes so)");
	CHECK(avail() == full - 7, "7 pages out (avail %u)", avail());

	for (i = 0; i < RTE_DIM(rows); i++) {
		const struct ocase *t = &rows[i];
		struct egw_rxtok_range rr[6];
		const struct egw_rxtok_range *rp = rr;
		long long before[7], after[7];
		unsigned int n = t->n, a_av = avail();
		long long ah = t_jc("own_a", "held"), bh = t_jc("own_b", "held");
		long long ao = t_jc("own_a", "outstanding"), bo = t_jc("own_b", "outstanding");
		uint32_t region = t->region == RID_OK     ? rid
				  : t->region == RID_NEXT ? rid + 1
							  : t->region;

		printf("  ownership: %s -> %s\n", t->label, strerror(-t->rc));
		for (k = 0; k < RTE_DIM(rr); k++) {
			rr[k].token_start = resolve(t->r[k].token_start);
			rr[k].token_count = t->r[k].token_count;
		}
		if (t->big > 0) {
			for (k = 0; k < RTE_DIM(big); k++)
				big[k] = (struct egw_rxtok_range){free_tok, 1};
			rp = big;
			n = (unsigned int)t->big;
		}
		if (t->null_ranges)
			rp = NULL;
		snap_counters(before);
		rc = egw_rxtok_return(t->who == 0 ? a : NULL, region, rp, n);
		snap_counters(after);
		CHECK(rc == t->rc, "%s: rc %d (%s), expected %d (%s)", t->label, rc, strerror(-rc),
		      t->rc, strerror(-t->rc));
		for (k = 0; k < 7; k++) {
			const char *key = k < 6 ? rej_keys[k] : "calls_without_consumer";
			long long d = after[k] - before[k];

			CHECK(d == (strcmp(key, t->key) == 0 ? 1 : 0),
			      "%s: counter %s grew by %lld", t->label, key, d);
		}
		CHECK(avail() == a_av, "%s: no page moved (avail %u, was %u)", t->label, avail(),
		      a_av);
		CHECK(t_jc("own_a", "held") == ah && t_jc("own_a", "outstanding") == ao,
		      "%s: A still holds %lld", t->label, ah);
		CHECK(t_jc("own_b", "held") == bh && t_jc("own_b", "outstanding") == bo,
		      "%s: B untouched (holds %lld)", t->label, bh);
	}

	printf("  ownership: recv with no consumer -> ENOTCONN, counted\n");
	{
		struct egw_rxtok_rec rec;
		long long w = t_jtop("calls_without_consumer");

		CHECK(egw_rxtok_recv(NULL, &rec, 1) == -ENOTCONN, "recv(NULL) -> -ENOTCONN");
		CHECK(t_jtop("calls_without_consumer") == w + 1, "recv(NULL) counted");
	}
	{
		char *buf = capture(egw_rxtok_show, "consumers");
		char exp[96];

		snprintf(exp, sizeof(exp), "token calls without a consumer: %lld",
			 t_jtop("calls_without_consumer"));
		CHECK(buf != NULL && strstr(buf, exp) != NULL, "show consumers prints '%s'", exp);
		{
			long long sum = 0;
			char *line = buf != NULL ? strstr(buf, "own_a") : NULL;

			for (k = 0; k < 6; k++)
				sum += t_jc("own_a", rej_keys[k]);
			snprintf(exp, sizeof(exp), "rejected %lld ", sum);
			CHECK(line != NULL && strstr(line, exp) != NULL &&
				      strstr(line, exp) < strchr(line, '\n'),
			      "show consumers: own_a line says '%s'", exp);
		}
		free(buf);
	}

	printf("  ownership: A returns its 4 tokens in one call (reverse order) -> 4\n");
	for (k = 0; k < 4; k++)
		r[k] = (struct egw_rxtok_range){a_tok[3 - k], 1};
	rc = egw_rxtok_return(a, rid, r, 4);
	CHECK(rc == 4, "A returns its 4 tokens: %d", rc);
	CHECK(avail() == full - 3, "4 pages back (avail %u)", avail());
	CHECK(t_jc("own_b", "held") == 3, "B still holds 3");
	printf("  ownership: a token already returned -> ENOENT, counted\n");
	{
		long long e = t_jc("own_a", "enoent");

		rc = egw_rxtok_return(a, rid, &r[0], 1);
		CHECK(rc == -ENOENT, "return again: %d", rc);
		CHECK(t_jc("own_a", "enoent") == e + 1 && avail() == full - 3,
		      "counted, no page moved");
	}

	printf("  ownership: after close -> EBADF, counted; the ring and holdings released\n");
	pkts[0] = udp_frame(6001, 10);
	pkts[1] = udp_frame(6001, 10);
	CHECK(deliver(pkts, 2, &res) == 0, "deliver 2 more to A");
	CHECK(recv_all(a, more, 1) == 1, "A reads 1 of 2");
	CHECK(avail() == full - 5, "5 pages out (avail %u)", avail());
	CHECK(egw_rxtok_consumer_close(a) == 0, "close A");
	CHECK(avail() == full - 3, "A's 2 pages back, B's 3 still out (avail %u)", avail());
	{
		long long e = t_jc("own_a", "ebadf");
		struct egw_rxtok_rec rec;

		r[0] = (struct egw_rxtok_range){more[0], 1};
		rc = egw_rxtok_return(a, rid, r, 1);
		CHECK(rc == -EBADF, "return after close: %d", rc);
		CHECK(t_jc("own_a", "ebadf") == e + 1, "counted as ebadf");
		CHECK(egw_rxtok_recv(a, &rec, 1) == -EBADF, "recv after close -> -EBADF");
		CHECK(egw_rxtok_consumer_close(a) == 0, "close again -> 0");
	}
	CHECK(t_jc("own_b", "held") == 3 && avail() == full - 3, "B untouched by A's close");
	CHECK(return_each(b, b_tok, 3) == 3, "B returns its 3");
	CHECK(avail() == full, "pool full (%u/%u)", avail(), full);
	egw_rxtok_consumer_destroy(a);
	egw_rxtok_consumer_destroy(b);
}

/* ---- 3. records not yet read ---- */

static void
test_unread(void)
{
	struct egw_rxtok_consumer *u = mk_udp("unread", 6101, 0);
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *pkts[2];
	struct egw_rxtok_range r[2];
	uint32_t t[2], got[2];
	int rc;

	printf("rxtokens unread: records still in the ring are not held\n");
	if (u == NULL)
		return;
	pkts[0] = udp_frame(6101, 10);
	pkts[1] = udp_frame(6101, 10);
	t[0] = token_of(pkts[0]);
	t[1] = token_of(pkts[1]);
	CHECK(deliver(pkts, 2, &res) == 0 && res.delivered == 2, "deliver 2");
	r[0] = (struct egw_rxtok_range){t[0], 1};
	r[1] = (struct egw_rxtok_range){t[1], 1};
	printf("  unread: return before recv -> ENOENT, pages stay out\n");
	rc = egw_rxtok_return(u, rid, r, 2);
	CHECK(rc == -ENOENT && avail() == full - 2, "return unread: %d, avail %u", rc, avail());
	CHECK(t_jc("unread", "enoent") == 1, "counted");
	printf("  unread: recv 1 -> that token returnable, the other not yet\n");
	CHECK(recv_all(u, got, 1) == 1 && got[0] == t[0], "recv the first");
	rc = egw_rxtok_return(u, rid, &r[1], 1);
	CHECK(rc == -ENOENT, "second still unread: %d", rc);
	rc = egw_rxtok_return(u, rid, &r[0], 1);
	CHECK(rc == 1 && avail() == full - 1, "first returned: %d", rc);
	CHECK(recv_all(u, got, 2) == 1 && got[0] == t[1], "recv the second");
	rc = egw_rxtok_return(u, rid, &r[1], 1);
	CHECK(rc == 1 && avail() == full, "second returned: %d, pool full", rc);
	egw_rxtok_consumer_destroy(u);
}

/* ---- 4. one binding per consumer ---- */

static void
test_steered(void)
{
	struct egw_rxtok_region *r2 =
		egw_rxtok_region_create("ut_rxtok_r2", REGION2_SIZE, RTE_PGSIZE_2M);
	struct rte_mempool *pool2 = r2 != NULL ? egw_rxtok_region_pool(r2) : NULL;
	struct egw_rxtok_consumer *s, *s2;
	struct egw_rxtok_consumer_conf conf2 = {
		.name = "steer_r2",
		.region = r2,
		.quota = 16, /* 512 pages: admission leaves 192 */
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = 6202,
	};
	struct egw_rxtok_burst_res res;
	struct rte_mbuf *pkts[4];
	static uint8_t frame[T_FRAME_MAX];
	struct t_frame f = {T_UDP4, .dst4_last = 9, .dport = 6201, .plen = 10};
	struct t_layout lo = t_build(&f, frame);
	uint32_t toks[4];
	unsigned int full2;
	uint16_t pass;
	int rc;

	printf("rxtokens steered: a consumer's frame on another binding's queue is dropped, "
	       "-EPIPE once\n");
	CHECK(pool2 != NULL, "second region and pool: %s", rte_strerror(rte_errno));
	if (pool2 == NULL)
		return;
	full2 = rte_mempool_avail_count(pool2);
	CHECK(egw_rxtok_bind(r2, 1, 0) == 0, "bind the second region to port 1 queue 0");
	CHECK(egw_rxtok_bind(r2, 0, 0) == -EBUSY, "port 0 queue 0 already bound: -EBUSY");
	CHECK(egw_rxtok_binding(0, 0) == reg && egw_rxtok_binding(1, 0) == r2 &&
		      egw_rxtok_binding(0, 1) == NULL,
	      "bindings: (0,0) region 1, (1,0) region 2, (0,1) none");
	s = mk_udp("steer", 6201, 0);
	s2 = egw_rxtok_consumer_create(&conf2);
	CHECK(s2 != NULL, "consumer of the second region");
	if (s == NULL || s2 == NULL)
		return;

	printf("  steered: frame on unbound (port 0, queue 1) -> dropped steered; others pass\n");
	memset(&res, 0, sizeof(res));
	pkts[0] = udp_frame(5002, 1);
	pkts[1] = udp_frame(6201, 10);
	pass = t_deliver(qsbr, 0, 1, pkts, 2, &res);
	CHECK(pass == 1 && res.drop[EGW_RXTOK_DROP_STEERED] == 1 && res.delivered == 0,
	      "pass %u steered %u", pass, res.drop[EGW_RXTOK_DROP_STEERED]);
	rte_pktmbuf_free(pkts[0]);
	CHECK(avail() == full, "steered frame freed");
	rc = egw_rxtok_recv(s, NULL, 0);
	CHECK(rc == -EPIPE, "next recv -> -EPIPE: %d", rc);
	rc = egw_rxtok_recv(s, NULL, 0);
	CHECK(rc == 0, "then 0: %d", rc);

	printf("  steered: two frames on the second region's queue (1,0) -> -EPIPE once\n");
	memset(&res, 0, sizeof(res));
	pkts[0] = t_chain(pool2, frame, lo.len, 0, 0);
	pkts[1] = t_chain(pool2, frame, lo.len, 0, 0);
	pass = t_deliver(qsbr, 1, 0, pkts, 2, &res);
	CHECK(pass == 0 && res.drop[EGW_RXTOK_DROP_STEERED] == 2, "both steered (%u)",
	      res.drop[EGW_RXTOK_DROP_STEERED]);
	CHECK(rte_mempool_avail_count(pool2) == full2, "freed to the second pool");
	CHECK(egw_rxtok_recv(s, NULL, 0) == -EPIPE, "-EPIPE");
	CHECK(egw_rxtok_recv(s, NULL, 0) == 0, "once");
	CHECK(t_jc("steer", "steered") == 2, "two -EPIPE reports counted (%lld)",
	      t_jc("steer", "steered"));
	CHECK(egw_rxtok_recv(s2, NULL, 0) == 0, "the other region's consumer not steered");

	printf("  steered: then its own queue delivers again\n");
	memset(&res, 0, sizeof(res));
	pkts[0] = udp_frame(6201, 10);
	CHECK(deliver(pkts, 1, &res) == 0 && res.delivered == 1, "delivered on (0,0)");
	CHECK(recv_all(s, toks, 4) == 1 && return_each(s, toks, 1) == 1, "recv and return");

	printf("  steered: the second region's consumer delivers on (1,0), is steered on (0,0)\n");
	{
		struct t_frame f2 = {T_UDP4, .dst4_last = 9, .dport = 6202, .plen = 10};
		struct egw_rxtok_rec rec;

		lo = t_build(&f2, frame);
		memset(&res, 0, sizeof(res));
		pkts[0] = t_chain(pool2, frame, lo.len, 0, 0);
		pass = t_deliver(qsbr, 1, 0, pkts, 1, &res);
		CHECK(pass == 0 && res.delivered == 1, "delivered on (1,0)");
		CHECK(egw_rxtok_recv(s2, &rec, 1) == 1 &&
			      egw_rxtok_return(s2, egw_rxtok_region_id(r2),
					       &(struct egw_rxtok_range){rec.token, 1}, 1) == 1,
		      "read and returned with region 2's id");
		rc = egw_rxtok_return(s2, rid, &(struct egw_rxtok_range){rec.token, 1}, 1);
		CHECK(rc == -EXDEV, "region 1's id on region 2's consumer: %d", rc);
		memset(&res, 0, sizeof(res));
		pkts[0] = udp_frame(6202, 10);
		pass = t_deliver(qsbr, 0, 0, pkts, 1, &res);
		CHECK(pass == 0 && res.drop[EGW_RXTOK_DROP_STEERED] == 1, "steered on (0,0)");
		CHECK(egw_rxtok_recv(s2, &rec, 1) == -EPIPE && egw_rxtok_recv(s, &rec, 1) == 0,
		      "-EPIPE for it only");
	}
	CHECK(avail() == full && rte_mempool_avail_count(pool2) == full2, "both pools full");
	egw_rxtok_consumer_destroy(s);
	egw_rxtok_consumer_destroy(s2);
	CHECK(egw_rxtok_region_destroy(r2) == -EBUSY, "a bound region stays: -EBUSY");
}

/* ---- 5. quota ---- */

static void
test_quota(void)
{
	struct egw_rxtok_consumer *q = mk_udp("quota4", 6301, 4);
	struct egw_rxtok_consumer *o = mk_udp("quota_other", 6302, 0);
	struct egw_rxtok_consumer *q1 = mk_udp("quota1", 6303, 1);
	struct egw_rxtok_burst_res res;
	struct rte_mbuf *pkts[10];
	static uint8_t frame[T_FRAME_MAX];
	uint32_t toks[16], ot[4];
	unsigned int i;
	uint16_t pass;

	printf("rxtokens quota: past the quota deliveries drop (quota), nothing stalls\n");
	if (q == NULL || o == NULL || q1 == NULL)
		return;
	printf("  quota: 6 frames for a quota of 4 (+1 other frame, +1 other consumer)\n");
	memset(&res, 0, sizeof(res));
	for (i = 0; i < 6; i++)
		pkts[i] = udp_frame(6301, 10);
	pkts[6] = udp_frame(5002, 10);
	pkts[7] = udp_frame(6302, 10);
	pass = t_deliver(qsbr, 0, 0, pkts, 8, &res);
	CHECK(pass == 1 && res.delivered == 5 && res.drop[EGW_RXTOK_DROP_QUOTA] == 2,
	      "pass %u delivered %u quota drops %u (expected 1 5 2)", pass, res.delivered,
	      res.drop[EGW_RXTOK_DROP_QUOTA]);
	rte_pktmbuf_free(pkts[0]);
	CHECK(avail() == full - 5, "5 pages out (avail %u)", avail());
	CHECK(t_jc("quota4", "outstanding") == 4, "outstanding 4 before any read");
	printf("  quota: reading does not free quota; a 5th frame still drops\n");
	CHECK(recv_all(q, toks, 16) == 4, "read 4");
	CHECK(recv_all(o, ot, 4) == 1, "the other consumer got its frame");
	memset(&res, 0, sizeof(res));
	pkts[0] = udp_frame(6301, 10);
	CHECK(deliver(pkts, 1, &res) == 0 && res.drop[EGW_RXTOK_DROP_QUOTA] == 1, "dropped");
	printf("  quota: return 2, then a 2-page payload fits and a 1-page one does not\n");
	CHECK(return_each(q, toks, 2) == 2, "returned 2");
	memset(&res, 0, sizeof(res));
	{
		struct t_frame f = {T_UDP4, .dst4_last = 9, .dport = 6301, .plen = 5000};
		struct t_layout lo = t_build(&f, frame);

		pkts[0] = t_chain(pool, frame, lo.len, 0, 0);
	}
	pkts[1] = udp_frame(6301, 10);
	CHECK(deliver(pkts, 2, &res) == 0 && res.delivered == 1 && res.records == 2 &&
		      res.drop[EGW_RXTOK_DROP_QUOTA] == 1,
	      "2-page delivered, 1-page dropped (delivered %u records %u quota %u)", res.delivered,
	      res.records, res.drop[EGW_RXTOK_DROP_QUOTA]);
	CHECK(recv_all(q, toks + 4, 12) == 2, "read the 2 records");
	CHECK(return_each(q, toks + 2, 4) == 4, "return all 4");
	printf("  quota: all returned -> 4 frames delivered again\n");
	memset(&res, 0, sizeof(res));
	for (i = 0; i < 4; i++)
		pkts[i] = udp_frame(6301, 10);
	CHECK(deliver(pkts, 4, &res) == 0 && res.delivered == 4, "4 delivered");
	CHECK(recv_all(q, toks, 16) == 4 && return_each(q, toks, 4) == 4, "read and returned");
	printf("  quota: a 2-page payload never fits a quota of 1; 1-page ones do\n");
	memset(&res, 0, sizeof(res));
	{
		struct t_frame f = {T_UDP4, .dst4_last = 9, .dport = 6303, .plen = 5000};
		struct t_layout lo = t_build(&f, frame);

		pkts[0] = t_chain(pool, frame, lo.len, 0, 0);
	}
	pkts[1] = udp_frame(6303, 10);
	CHECK(deliver(pkts, 2, &res) == 0 && res.delivered == 1 &&
		      res.drop[EGW_RXTOK_DROP_QUOTA] == 1,
	      "quota 1: delivered %u, quota drops %u", res.delivered,
	      res.drop[EGW_RXTOK_DROP_QUOTA]);
	CHECK(recv_all(q1, toks, 4) == 1 && return_each(q1, toks, 1) == 1, "read and returned");
	CHECK(return_each(o, ot, 1) == 1, "other consumer returns");
	CHECK(avail() == full, "pool full (%u/%u)", avail(), full);
	egw_rxtok_consumer_destroy(q);
	egw_rxtok_consumer_destroy(o);
	egw_rxtok_consumer_destroy(q1);
}

/* ---- 6. close / destroy ---- */

static void
test_close(void)
{
	struct egw_rxtok_consumer *c = mk_udp("closeme", 6401, 16), *d, *c2;
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *pkts[10];
	static uint8_t frame[T_FRAME_MAX];
	struct t_frame f = {T_UDP4, .dst4_last = 9, .dport = 6401, .plen = 9000};
	struct t_layout lo = t_build(&f, frame);
	struct egw_rxtok_consumer_conf conf = {
		.name = "closeme",
		.region = reg,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = 6499,
	};
	uint32_t toks[16];
	unsigned int i;

	printf("rxtokens close: releases what is held and what waits in the ring\n");
	if (c == NULL)
		return;
	pkts[0] = t_chain(pool, frame, lo.len, 0, 0); /* 3 pages */
	for (i = 1; i < 10; i++)
		pkts[i] = udp_frame(6401, 10);
	CHECK(deliver(pkts, 10, &res) == 0 && res.records == 12, "12 records");
	CHECK(recv_all(c, toks, 5) == 5, "read 5: 5 held, 7 in the ring");
	CHECK(avail() == full - 12, "12 pages out (avail %u)", avail());
	CHECK(egw_rxtok_consumer_close(c) == 0, "close");
	CHECK(avail() == full, "pool full after close (%u/%u)", avail(), full);
	CHECK(t_jc("closeme", "released") == 12 && t_jc("closeme", "held") == 0 &&
		      t_jc("closeme", "outstanding") == 0,
	      "released 12, holds 0");
	printf("  close: its flow passes on; its name stays until destroyed\n");
	pkts[0] = udp_frame(6401, 10);
	memset(&res, 0, sizeof(res));
	CHECK(deliver(pkts, 1, &res) == 1 && res.delivered == 0, "frame passes");
	CHECK(egw_rxtok_consumer_create(&conf) == NULL && rte_errno == EEXIST,
	      "same name after close -> EEXIST");
	c2 = mk_udp("closeme2", 6401, 0);
	CHECK(c2 != NULL, "its flow can be taken by a new consumer");
	CHECK(egw_rxtok_consumer_destroy(c) == 0, "destroy the closed consumer");
	d = egw_rxtok_consumer_create(&conf);
	CHECK(d != NULL, "its name is free after destroy");
	egw_rxtok_consumer_destroy(d);
	egw_rxtok_consumer_destroy(c2);

	printf("  destroy without close: same release\n");
	d = mk_udp("destroyme", 6402, 0);
	if (d == NULL)
		return;
	f.dport = 6402;
	lo = t_build(&f, frame);
	pkts[0] = t_chain(pool, frame, lo.len, 0, 0);
	pkts[1] = udp_frame(6402, 10);
	pkts[2] = udp_frame(6402, 10);
	memset(&res, 0, sizeof(res));
	CHECK(deliver(pkts, 3, &res) == 0 && res.records == 5, "5 records");
	CHECK(recv_all(d, toks, 2) == 2, "read 2");
	CHECK(egw_rxtok_consumer_destroy(d) == 0 && avail() == full, "destroy: pool full (%u/%u)",
	      avail(), full);
}

/* ---- 7. last reference ---- */

static void
test_last_ref(void)
{
	struct egw_rxtok_consumer *p = mk_udp("lastref", 6501, 0);
	struct egw_rxtok_burst_res res = {0};
	struct rte_mbuf *pkts[2], *m;
	static uint8_t frame[T_FRAME_MAX];
	struct t_frame f = {T_UDP4, .dst4_last = 9, .dport = 6501, .plen = 9000};
	struct t_layout lo = t_build(&f, frame);
	uint32_t toks[4];

	printf("rxtokens last reference: a page goes back only when its last reference drops\n");
	if (p == NULL)
		return;
	printf("  last ref: a 3-page payload; returning one token frees exactly that page\n");
	pkts[0] = t_chain(pool, frame, lo.len, 0, 0);
	CHECK(deliver(pkts, 1, &res) == 0 && res.records == 3, "3 records");
	CHECK(recv_all(p, toks, 4) == 3, "read 3");
	CHECK(avail() == full - 3, "3 out");
	CHECK(egw_rxtok_return(p, rid, &(struct egw_rxtok_range){toks[1], 1}, 1) == 1 &&
		      avail() == full - 2,
	      "middle page back alone (avail %u)", avail());
	CHECK(egw_rxtok_return(p, rid, &(struct egw_rxtok_range){toks[1], 1}, 1) == -ENOENT,
	      "not twice");
	CHECK(return_each(p, (uint32_t[]){toks[0], toks[2]}, 2) == 2 && avail() == full,
	      "the other two");

	/* The library takes one token reference per record and never two
	 * records on one page (one mbuf per page, a page in one packet), so a
	 * token refcount above 1 cannot be made through its API. A second
	 * reference to the page's mbuf (another stage still holding it: a
	 * capture, a mirror) can: the page must then wait for both. */
	printf("  last ref: mbuf also referenced elsewhere; consumer returns first\n");
	m = udp_frame(6501, 10);
	rte_mbuf_refcnt_update(m, 1);
	pkts[0] = m;
	memset(&res, 0, sizeof(res));
	CHECK(deliver(pkts, 1, &res) == 0 && res.delivered == 1, "delivered");
	CHECK(recv_all(p, toks, 4) == 1 && return_each(p, toks, 1) == 1, "read, returned");
	CHECK(avail() == full - 1, "page still out: the other reference (avail %u)", avail());
	rte_pktmbuf_free(m);
	CHECK(avail() == full, "back with the last reference");
	printf("  last ref: mbuf also referenced elsewhere; the other holder lets go first\n");
	m = udp_frame(6501, 10);
	rte_mbuf_refcnt_update(m, 1);
	pkts[0] = m;
	CHECK(deliver(pkts, 1, &res) == 0, "delivered");
	CHECK(recv_all(p, toks, 4) == 1, "read");
	rte_pktmbuf_free(m);
	CHECK(avail() == full - 1, "page still out: the consumer's token");
	CHECK(return_each(p, toks, 1) == 1 && avail() == full, "back with the token");
	egw_rxtok_consumer_destroy(p);
}

/* ---- 8. flows ---- */

struct fcase {
	const char *label;
	struct egw_rxtok_consumer_conf conf;
	bool null_conf;
	bool no_region;
	int err;
};

static void
test_flows(void)
{
	static const char name63[] =
		"n23456789012345678901234567890123456789012345678901234567890123";
	static const char name64[] =
		"n234567890123456789012345678901234567890123456789012345678901234";
	static struct fcase rows[] = {
		{"same UDP port as flow_udp",
		 {"dup1", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6601},
		 false,
		 false,
		 EEXIST},
		{"same IPv4 destination as flow_dst4",
		 {"dup2", .match = EGW_RXTOK_MATCH_DST4, .dst = {10, 0, 0, 66}},
		 false,
		 false,
		 EEXIST},
		{"same IPv6 destination as flow_dst6",
		 {"dup3", .match = EGW_RXTOK_MATCH_DST6,
		  .dst = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x66}},
		 false,
		 false,
		 EEXIST},
		{"same PPPoE session as flow_ppp",
		 {"dup4", .match = EGW_RXTOK_MATCH_PPPOE, .pppoe_session = 0x6600},
		 false,
		 false,
		 EEXIST},
		{"same name, other flow",
		 {"flow_udp", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6602},
		 false,
		 false,
		 EEXIST},
		{"NULL conf", {0}, true, false, EINVAL},
		{"NULL name",
		 {NULL, .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6603},
		 false,
		 false,
		 EINVAL},
		{"empty name",
		 {"", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6603},
		 false,
		 false,
		 EINVAL},
		{"64-character name",
		 {name64, .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6603},
		 false,
		 false,
		 EINVAL},
		{"match NONE", {"bad1", .match = EGW_RXTOK_MATCH_NONE}, false, false, EINVAL},
		{"match past PPPOE",
		 {"bad2", .match = (enum egw_rxtok_match)(EGW_RXTOK_MATCH_PPPOE + 1)},
		 false,
		 false,
		 EINVAL},
		{"quota EGW_RXTOK_MAX_QUOTA + 1",
		 {"bad3", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6603,
		  .quota = EGW_RXTOK_MAX_QUOTA + 1},
		 false,
		 false,
		 EINVAL},
		{"NULL region (no binding)",
		 {"bad4", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6603},
		 false,
		 true,
		 ENOTCONN},
		{"63-character name: accepted",
		 {name63, .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6604, .quota = 16},
		 false,
		 false,
		 0},
		{"other port, other session: accepted",
		 {"ok2", .match = EGW_RXTOK_MATCH_PPPOE, .pppoe_session = 0x6601, .quota = 16},
		 false,
		 false,
		 0},
	};
	static const struct egw_rxtok_consumer_conf base_conf[] = {
		{"flow_udp", .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6601, .quota = 16},
		{"flow_dst4", .match = EGW_RXTOK_MATCH_DST4, .dst = {10, 0, 0, 66}, .quota = 16},
		{"flow_dst6", .match = EGW_RXTOK_MATCH_DST6,
		 .dst = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x66}, .quota = 16},
		{"flow_ppp", .match = EGW_RXTOK_MATCH_PPPOE, .pppoe_session = 0x6600, .quota = 16},
	};
	struct egw_rxtok_consumer *bc[RTE_DIM(base_conf)];
	unsigned int i;

	printf("rxtokens flows: one consumer per flow, configuration checked\n");
	for (i = 0; i < RTE_DIM(base_conf); i++) {
		struct egw_rxtok_consumer_conf conf = base_conf[i];

		conf.region = reg;
		bc[i] = egw_rxtok_consumer_create(&conf);
		CHECK(bc[i] != NULL, "create %s", conf.name);
	}
	for (i = 0; i < RTE_DIM(rows); i++) {
		struct egw_rxtok_consumer_conf conf = rows[i].conf;
		struct egw_rxtok_consumer *c;

		printf("  flows: %s -> %s\n", rows[i].label,
		       rows[i].err ? strerror(rows[i].err) : "created");
		conf.region = rows[i].no_region ? NULL : reg;
		rte_errno = 0;
		c = egw_rxtok_consumer_create(rows[i].null_conf ? NULL : &conf);
		if (rows[i].err == 0) {
			CHECK(c != NULL, "%s: created (%s)", rows[i].label,
			      rte_strerror(rte_errno));
			if (c != NULL)
				egw_rxtok_consumer_destroy(c);
		} else {
			CHECK(c == NULL && rte_errno == rows[i].err, "%s: rte_errno %d (%s)",
			      rows[i].label, rte_errno, rte_strerror(rte_errno));
		}
	}
	printf("  flows: a region with a consumer cannot be destroyed\n");
	{
		struct egw_rxtok_region *r3 =
			egw_rxtok_region_create("ut_rxtok_r3", REGION2_SIZE, RTE_PGSIZE_2M);
		struct egw_rxtok_consumer_conf conf = {
			"on_r3", r3, .match = EGW_RXTOK_MATCH_UDP_DPORT, .udp_dport = 6610};
		struct egw_rxtok_consumer *c;

		CHECK(r3 != NULL, "third region: %s", rte_strerror(rte_errno));
		if (r3 != NULL) {
			CHECK(egw_rxtok_region_create("ut_rxtok_r3", REGION2_SIZE, RTE_PGSIZE_2M) ==
					      NULL &&
				      rte_errno == EEXIST,
			      "region name taken -> EEXIST");
			c = egw_rxtok_consumer_create(&conf);
			CHECK(c != NULL, "consumer on it");
			CHECK(egw_rxtok_region_destroy(r3) == -EBUSY, "-EBUSY with a consumer");
			egw_rxtok_consumer_destroy(c);
			CHECK(egw_rxtok_region_destroy(r3) == 0, "destroyed once it has none");
		}
	}
	for (i = 0; i < RTE_DIM(bc); i++)
		egw_rxtok_consumer_destroy(bc[i]);
}

/* ---- 9. hostile external consumer ---- */

/* Play an external consumer by hand: hello, service, welcome with the shared
 * memory mapped at *shm (*len bytes). Returns the socket or -1. */
static int
hand_attach(const char *path, const char *name, struct egw_rxtok_shm_hdr **shm, size_t *len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct egw_rxtok_hello hello = {.magic = EGW_RXTOK_HELLO_MAGIC,
					.version = EGW_RXTOK_ABI_VERSION};
	struct egw_rxtok_welcome w;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = &w, .iov_len = sizeof(w)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *cm;
	int fd, fds[2] = {-1, -1};
	void *p;

	snprintf(hello.consumer, sizeof(hello.consumer), "%s", name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, &hello, sizeof(hello), 0) != (ssize_t)sizeof(hello))
		goto fail;
	egw_rxtok_service(); /* accept */
	egw_rxtok_service(); /* the hello: attach and welcome */
	if (recvmsg(fd, &msg, MSG_DONTWAIT) != (ssize_t)sizeof(w) || w.status != 0)
		goto fail;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm == NULL || cm->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		goto fail;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	p = mmap(NULL, w.shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	close(fds[0]);
	close(fds[1]);
	if (p == MAP_FAILED)
		goto fail;
	*shm = p;
	*len = w.shm_size;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static void
test_hostile(void)
{
	static const char path[] = "/tmp/egw_unit_rxtok_hostile.sock";
	struct egw_rxtok_consumer_conf conf = {
		.name = "hostile",
		.region = reg,
		.quota = 16,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = 6410,
		.external = 1,
	};
	struct egw_rxtok_burst_res res = {0};
	struct egw_rxtok_shm_hdr *h;
	struct egw_rxtok_shring *rec, *ret;
	struct egw_rxtok_consumer *c;
	struct rte_mbuf *pkts[3];
	unsigned int round, i;
	uint32_t size;
	size_t len;
	int fd;

	printf("rxtokens hostile consumer: insane ring indices detach it, edgegw stays whole\n");
	c = egw_rxtok_consumer_create(&conf);
	CHECK(c != NULL, "create external consumer: %s", rte_strerror(rte_errno));
	if (c == NULL)
		return;
	CHECK(egw_rxtok_listen(path) == 0, "listen on %s", path);
	for (round = 0; round < 3; round++) {
		fd = hand_attach(path, "hostile", &h, &len);
		CHECK(fd >= 0, "round %u: attach by hand", round);
		if (fd < 0)
			break;
		CHECK(egw_rxtok_consumer_attached(c), "round %u: attached", round);
		CHECK(h->rec_ring_size >= 16 && (h->rec_ring_size & (h->rec_ring_size - 1)) == 0 &&
			      h->ret_ring_size == 256,
		      "round %u: ring sizes %u and %u", round, h->rec_ring_size, h->ret_ring_size);
		rec = (struct egw_rxtok_shring *)((uint8_t *)h + h->rec_ring_off);
		ret = (struct egw_rxtok_shring *)((uint8_t *)h + h->ret_ring_off);
		for (i = 0; i < RTE_DIM(pkts); i++)
			pkts[i] = udp_frame(6410, 10);
		memset(&res, 0, sizeof(res));
		CHECK(deliver(pkts, RTE_DIM(pkts), &res) == 0 && res.records == 3, "3 records");
		egw_rxtok_service();
		CHECK(t_jc("hostile", "held") == 3 && rec->prod_tail == 3,
		      "round %u: 3 records in the shared ring", round);
		size = h->rec_ring_size;
		/* the geometry in the header is the consumer's copy: edgegw
		 * never reads it again */
		h->rec_ring_size = UINT32_MAX;
		h->ret_ring_size = 0;
		h->rec_ring_off = 0;
		switch (round) {
		case 0: rec->cons_head = 3 + 12345; break;    /* ahead of what was produced */
		case 1: rec->cons_head = 3 - size - 1; break; /* behind by more than size */
		default:
			ret->prod_tail = 100000; /* more returns than the ring holds */
			memset(ret->entries, 0xff, 256 * 16);
			break;
		}
		egw_rxtok_service();
		CHECK(!egw_rxtok_consumer_attached(c), "round %u: detached", round);
		CHECK(t_jc("hostile", "corrupt") == round + 1, "round %u: corrupt %lld", round,
		      t_jc("hostile", "corrupt"));
		CHECK(t_jc("hostile", "held") == 0 && t_jc("hostile", "outstanding") == 0,
		      "round %u: nothing held", round);
		CHECK(avail() == full, "round %u: pool full (%u/%u)", round, avail(), full);
		munmap(h, len);
		close(fd);
		egw_rxtok_service();
	}
	/* a well-behaved attach still works */
	fd = hand_attach(path, "hostile", &h, &len);
	CHECK(fd >= 0 && egw_rxtok_consumer_attached(c), "attach after the hostile ones");
	if (fd >= 0) {
		munmap(h, len);
		close(fd);
		egw_rxtok_service();
		CHECK(!egw_rxtok_consumer_attached(c), "detached on close");
	}
	CHECK(egw_rxtok_consumer_destroy(c) == 0 && avail() == full, "destroy: pool full");
}

/* The rte_flow rules steer exactly what deliver.c takes for the consumer,
 * and no more: checked item by item, spec and mask, for every match kind. */
static void
test_steer_patterns(void)
{
	struct egw_rxtok_consumer_conf conf = {.region = reg, .quota = 1, .external = 1};
	struct egw_rxtok_consumer *cu, *c4, *c6, *cp;
	struct rxtok_steer_pat p;
	uint8_t d4[4] = {192, 0, 2, 7};

	printf("rxtokens steering: the rte_flow pattern of each consumer kind\n");
	conf.uid = (uint32_t)geteuid();
	conf.gid = (uint32_t)getegid();
	conf.name = "st_udp";
	conf.match = EGW_RXTOK_MATCH_UDP_DPORT;
	conf.udp_dport = 4789;
	cu = egw_rxtok_consumer_create(&conf);
	conf.name = "st_d4";
	conf.match = EGW_RXTOK_MATCH_DST4;
	memcpy(conf.dst, d4, 4);
	c4 = egw_rxtok_consumer_create(&conf);
	conf.name = "st_d6";
	conf.match = EGW_RXTOK_MATCH_DST6;
	memset(conf.dst, 0, sizeof(conf.dst));
	conf.dst[0] = 0x20;
	conf.dst[1] = 0x01;
	conf.dst[15] = 0x42;
	c6 = egw_rxtok_consumer_create(&conf);
	conf.name = "st_pppoe";
	conf.match = EGW_RXTOK_MATCH_PPPOE;
	conf.pppoe_session = 0x1234;
	cp = egw_rxtok_consumer_create(&conf);
	CHECK(cu != NULL && c4 != NULL && c6 != NULL && cp != NULL,
	      "four consumers on a region no steered port has: no rule needed");
	if (cu == NULL || c4 == NULL || c6 == NULL || cp == NULL)
		goto out;

	CHECK(rxtok_steer_n_patterns(cu) == 2, "udp-dport: two rules (IPv4, IPv6)");
	rxtok_steer_pattern(cu, 0, &p);
	CHECK(p.prio == 0 && p.items[0].type == RTE_FLOW_ITEM_TYPE_ETH &&
		      p.items[1].type == RTE_FLOW_ITEM_TYPE_IPV4 &&
		      p.items[2].type == RTE_FLOW_ITEM_TYPE_UDP &&
		      p.items[3].type == RTE_FLOW_ITEM_TYPE_END,
	      "udp-dport IPv4: eth / ipv4 / udp, priority 0 (before destinations)");
	CHECK(p.udp.hdr.dst_port == rte_cpu_to_be_16(4789) &&
		      p.udpm.hdr.dst_port == RTE_BE16(0xffff) && p.udpm.hdr.src_port == 0,
	      "udp-dport IPv4: dst port 4789, exact; source port any");
	CHECK(p.ip4.hdr.fragment_offset == 0 && p.ip4m.hdr.fragment_offset == RTE_BE16(0x3fff) &&
		      p.ip4m.hdr.dst_addr == 0,
	      "udp-dport IPv4: fragments excluded (offset and MF masked, as deliver.c)");
	rxtok_steer_pattern(cu, 1, &p);
	CHECK(p.items[1].type == RTE_FLOW_ITEM_TYPE_IPV6 && p.items[1].spec == NULL &&
		      p.items[2].type == RTE_FLOW_ITEM_TYPE_UDP &&
		      p.udp.hdr.dst_port == rte_cpu_to_be_16(4789),
	      "udp-dport IPv6: eth / ipv6 / udp dst 4789");

	CHECK(rxtok_steer_n_patterns(c4) == 1, "dst IPv4: one rule");
	rxtok_steer_pattern(c4, 0, &p);
	CHECK(p.prio == 1 && p.items[1].type == RTE_FLOW_ITEM_TYPE_IPV4 &&
		      p.items[2].type == RTE_FLOW_ITEM_TYPE_END &&
		      memcmp(&p.ip4.hdr.dst_addr, d4, 4) == 0 &&
		      p.ip4m.hdr.dst_addr == RTE_BE32(0xffffffff) && p.ip4m.hdr.src_addr == 0 &&
		      p.ip4m.hdr.fragment_offset == 0,
	      "dst IPv4: eth / ipv4 dst 192.0.2.7 exact, fragments too, priority 1");
	rxtok_steer_pattern(c6, 0, &p);
	CHECK(p.prio == 1 && p.items[1].type == RTE_FLOW_ITEM_TYPE_IPV6 &&
		      p.items[2].type == RTE_FLOW_ITEM_TYPE_END &&
		      memcmp(p.ip6.hdr.dst_addr, c6->dst, 16) == 0 &&
		      p.ip6m.hdr.dst_addr[0] == 0xff && p.ip6m.hdr.dst_addr[15] == 0xff &&
		      p.ip6m.hdr.src_addr[0] == 0,
	      "dst IPv6: eth / ipv6 dst 2001::42 exact");

	CHECK(rxtok_steer_n_patterns(cp) == 2, "pppoe-session: two rules (PPP IPv4, IPv6)");
	rxtok_steer_pattern(cp, 0, &p);
	CHECK(p.items[1].type == RTE_FLOW_ITEM_TYPE_PPPOES &&
		      p.pppoe.session_id == rte_cpu_to_be_16(0x1234) &&
		      p.pppoem.session_id == RTE_BE16(0xffff) &&
		      p.items[2].type == RTE_FLOW_ITEM_TYPE_PPPOE_PROTO_ID &&
		      p.proto.proto_id == RTE_BE16(0x0021) &&
		      p.protom.proto_id == RTE_BE16(0xffff) &&
		      p.items[3].type == RTE_FLOW_ITEM_TYPE_END,
	      "pppoe-session: eth / pppoes 0x1234 / proto 0x0021 (no LCP, PAP, NCP frame)");
	rxtok_steer_pattern(cp, 1, &p);
	CHECK(p.proto.proto_id == RTE_BE16(0x0057), "pppoe-session: and proto 0x0057 (IPv6)");

	/* without ports: nothing bound that is not shared, nothing to steer */
	CHECK(egw_rxtok_port_steered(0) == 0, "port 0 (no ethdev) is not steered");
	CHECK(egw_rxtok_steer_port(RTE_MAX_ETHPORTS - 1) == -ENODEV &&
		      strstr(egw_rxtok_steer_error(), "does not exist") != NULL,
	      "steering a port that does not exist: -ENODEV, said");
	CHECK(egw_rxtok_bind_flags(reg, 5, 0, EGW_RXTOK_BIND_SHARED) == 0 &&
		      egw_rxtok_binding_shared(5, 0) == 1 &&
		      egw_rxtok_bind_flags(reg, 5, 1, 0) == -EXDEV &&
		      egw_rxtok_unbind(reg, 5, 0) == 0 && egw_rxtok_binding_shared(5, 0) == 0,
	      "shared binding: flagged; a steered one beside it -EXDEV; unbind clears it");
	CHECK(egw_rxtok_bind_flags(reg, 5, 0, 2) == -EINVAL, "unknown bind flag: -EINVAL");
out:
	if (cu != NULL)
		egw_rxtok_consumer_destroy(cu);
	if (c4 != NULL)
		egw_rxtok_consumer_destroy(c4);
	if (c6 != NULL)
		egw_rxtok_consumer_destroy(c6);
	if (cp != NULL)
		egw_rxtok_consumer_destroy(cp);
}

int
main(int argc, char **argv)
{
	long hp = t_free_hugepages();
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* EAL -m 256 takes 128 pages, the regions 4 + 1 + 1 */
	if (hp >= 0 && hp < 128 + 6) {
		printf("SKIP: %ld free 2 MiB hugepages, need %d (EAL -m 256 and the regions)\n", hp,
		       128 + 6);
		return SKIP;
	}
	rc = t_setup(argc, argv, &qsbr);
	if (rc != 0)
		return rc;
	CHECK(egw_rxtok_init(NULL) == -EINVAL, "egw_rxtok_init(NULL) -> -EINVAL");
	reg = egw_rxtok_region_create("ut_rxtok", REGION_SIZE, RTE_PGSIZE_2M);
	if (reg == NULL) {
		int err = rte_errno;

		printf("%s: region of %u MiB: %s\n", err == ENOMEM ? "SKIP" : "FAIL",
		       REGION_SIZE >> 20, rte_strerror(err));
		rte_eal_cleanup();
		return err == ENOMEM ? SKIP : 1;
	}
	pool = egw_rxtok_region_pool(reg);
	if (pool == NULL) {
		printf("FAIL: region pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	rid = egw_rxtok_region_id(reg);
	n_pages = REGION_SIZE / EGW_RXTOK_PAGE_SIZE;
	full = rte_mempool_avail_count(pool);
	base = t_region_base(pool);
	CHECK(full == n_pages && pool->size == n_pages, "pool has one mbuf per page (%u/%u)", full,
	      n_pages);
	CHECK(egw_rxtok_region_get(rid) == reg && egw_rxtok_region_find("ut_rxtok") == reg,
	      "region by id and by name");
	CHECK(egw_rxtok_bind(reg, 0, 0) == 0, "bind region to port 0 queue 0");
	CHECK(egw_rxtok_binding(0, 0) == reg, "binding (0,0)");
	CHECK(egw_rxtok_bind(NULL, 0, 1) == -EINVAL &&
		      egw_rxtok_bind(reg, RTE_MAX_ETHPORTS, 0) == -EINVAL,
	      "bind: NULL region or port out of range -> -EINVAL");

	test_delivery();
	test_ownership();
	test_unread();
	test_steered();
	test_quota();
	test_close();
	test_last_ref();
	test_flows();
	test_hostile();
	test_steer_patterns();

	CHECK(avail() == full, "at the end the pool is full (%u/%u)", avail(), full);
	egw_rxtok_fini();
	rte_eal_cleanup();
	printf("rxtokens: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
