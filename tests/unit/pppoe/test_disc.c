/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of PPPoE discovery and the access-concentrator core
 * (lib/pppoe/disc.c, ctl.c, conf.c, pool.c), driven through the public API:
 * frames are built as bytes, put in mbufs, classified by lib/eth as on the
 * data path and handed to egw_pppoe_input(); replies are captured by the
 * transmit callback. Checked:
 *  - the tag parser on a table of hostile payloads (tag header or value past
 *    the payload, duplicates, unknown and vendor tags, PPP-Max-Payload of the
 *    wrong length, End-Of-List, zero-length tags, exact-boundary lengths) and
 *    on every truncation of a valid PADI, each in a buffer of exactly its
 *    length (ASan sees any over-read);
 *  - every rejected frame moves exactly its own counter and gets no reply:
 *    wrong version/type, PPPoE length past the frame, every cut of the
 *    length field of a valid PADI, multicast/zero source, PADI to another
 *    host, non-zero session id in PADI and PADR, PADR and PADT not unicast to
 *    us, PADO/PADS/unknown codes, ports that are not access ports;
 *  - PADO byte for byte (RFC 2516 5.2): AC-Name, the requested Service-Name
 *    then the configured ones, Host-Uniq and Relay-Session-Id verbatim (also
 *    zero-length), a 21-byte AC-Cookie that differs per client MAC and VLAN;
 *    PPP-Max-Payload (RFC 4638) on ports of MTU 1500, 1508 and 9000;
 *  - service names: configured ones, empty = any, unknown -> no PADO, and
 *    PADS with Service-Name-Error (session id 0) for a PADR;
 *  - PADR: without, with a forged, another client's, another VLAN's, a
 *    short cookie: dropped; with a PADO's cookie: PADS with a session id
 *    neither 0 nor 0xFFFF, byte for byte; ids unique; a repeated PADR gets
 *    the same PADS again and no second session; session and per-MAC limits
 *    give PADS with AC-System-Error, and PADIs get no PADO when full;
 *  - PADT from the client closes the session (CLOSING, then freed), one with
 *    the wrong MAC or id does not; PADT we send carries Generic-Error;
 *  - replies on the tags the request came with: 802.1Q, QinQ with 0x88a8 and
 *    0x9100 outer TPIDs, priorities kept; a frame split over two segments;
 *  - cookie rotation: a cookie survives one rotation and not two;
 *  - session frames to the control path: delivered to PPP (ctrl_rx) with
 *    Ethernet padding cut off, and every bad one counted;
 *  - init/fini: parameter checks, -EEXIST, PADTs at shutdown, init again;
 *  - configuration setters and pools (parse errors, host bits, overlaps,
 *    exhaustion, the network, broadcast and own address never given, next-fit
 *    reuse, reserve, -EBUSY on delete).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "check.h"
#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"

#define FRAME_MAX 2048
/* AC-Cookie: epoch, nonce, HMAC */
#define CK_LEN 21
#define CAP_MAX 64
#define NB_MBUF 1023

/* ports: 0 MTU 1500, 1 MTU 9000, 2 MTU 1508, 3 not an access port */
#define P_STD 0
#define P_JUMBO 1
#define P_1508 2
#define P_NONE 3
#define NB_PORTS 4

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qsbr;
static struct egw_eth_port eth_ports[NB_PORTS];

static const uint8_t mac_ac[NB_PORTS][8] __rte_aligned(8) = {
	{0x02, 0x00, 0x00, 0xac, 0x00, 0x00},
	{0x02, 0x00, 0x00, 0xac, 0x00, 0x01},
	{0x02, 0x00, 0x00, 0xac, 0x00, 0x02},
	{0x02, 0x00, 0x00, 0xac, 0x00, 0x03},
};
static const uint8_t mac_cl[8] __rte_aligned(8) = {0x00, 0x16, 0x3e, 0x11, 0x22, 0x33};
static const uint8_t mac_cl2[8] __rte_aligned(8) = {0x00, 0x16, 0x3e, 0x11, 0x22, 0x44};
static const uint8_t mac_bcast[8] __rte_aligned(8) = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---- captured transmissions ------------------------------------------------ */

struct cap {
	uint16_t port;
	uint16_t len;
	uint8_t b[FRAME_MAX];
};
static struct cap caps[CAP_MAX];
static unsigned int ncap;

static void
tx_cb(uint16_t port, struct rte_mbuf *m, void *arg)
{
	RTE_SET_USED(arg);
	if (ncap < CAP_MAX && m->pkt_len <= FRAME_MAX) {
		const void *p = rte_pktmbuf_read(m, 0, m->pkt_len, caps[ncap].b);

		if (p != caps[ncap].b)
			memcpy(caps[ncap].b, p, m->pkt_len);
		caps[ncap].port = port;
		caps[ncap].len = (uint16_t)m->pkt_len;
	}
	ncap++;
	rte_pktmbuf_free(m);
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Offset of the ethertype after the tags of a frame. */
static unsigned int
etype_off(const uint8_t *f)
{
	unsigned int off = 12;

	while (be16(f + off) == 0x8100 || be16(f + off) == 0x88a8 || be16(f + off) == 0x9100)
		off += 4;
	return off;
}

/* The i-th captured discovery frame (PPP frames a real PPP side sends are skipped). */
static const struct cap *
disc_cap(unsigned int i)
{
	unsigned int k;

	for (k = 0; k < ncap && k < CAP_MAX; k++) {
		if (be16(caps[k].b + etype_off(caps[k].b)) != 0x8863)
			continue;
		if (i-- == 0)
			return &caps[k];
	}
	return NULL;
}

static unsigned int
ndisc(void)
{
	unsigned int n = 0;

	while (disc_cap(n) != NULL)
		n++;
	return n;
}

/* Value of the first tag of a type in a captured discovery frame, or NULL. */
static const uint8_t *
cap_tag(const struct cap *c, uint16_t type, uint16_t *len)
{
	unsigned int off = etype_off(c->b) + 2;
	unsigned int end = off + 6 + be16(c->b + off + 4);

	off += 6;
	while (off + 4 <= end && end <= c->len) {
		uint16_t t = be16(c->b + off), l = be16(c->b + off + 2);

		if (off + 4 + l > end)
			break;
		if (t == type) {
			*len = l;
			return c->b + off + 4;
		}
		off += 4u + l;
	}
	return NULL;
}

/* ---- counters ----------------------------------------------------------------- */

#define CNT_MAX 256
static const char *cnt_names[CNT_MAX];

static unsigned int
snap(uint64_t *v)
{
	return egw_pppoe_ctrl_counters(cnt_names, v, CNT_MAX);
}

static uint64_t
cnt(const char *name)
{
	uint64_t v[CNT_MAX];
	unsigned int i, n = snap(v);

	for (i = 0; i < n; i++)
		if (strcmp(cnt_names[i], name) == 0)
			return v[i];
	CHECK(0, "no counter %s", name);
	return UINT64_MAX;
}

static bool
is_drop_counter(const char *n)
{
	return strncmp(n, "disc_", 5) == 0 || strncmp(n, "ctrl_", 5) == 0 ||
	       strncmp(n, "tx_", 3) == 0;
}

/* Since before: the drop counter 'name' (NULL: none) moved by one, no other one did. */
static void
expect_drop(const uint64_t *before, const char *name, const char *label)
{
	uint64_t v[CNT_MAX];
	unsigned int i, n = snap(v);
	bool found = name == NULL;

	for (i = 0; i < n; i++) {
		uint64_t want;

		if (!is_drop_counter(cnt_names[i]))
			continue;
		want = name != NULL && strcmp(cnt_names[i], name) == 0 ? 1 : 0;
		found |= want == 1;
		CHECK(v[i] - before[i] == want,
		      "%s: counter %s moved by %" PRIu64 ", want %" PRIu64, label, cnt_names[i],
		      v[i] - before[i], want);
	}
	CHECK(found, "%s: counter %s does not exist", label, name);
}

/* ---- frames ---------------------------------------------------------------- */

struct frame {
	uint8_t b[FRAME_MAX];
	uint16_t n;
	uint16_t pppoe; /* offset of the PPPoE header */
};

struct vlan {
	uint8_t n;
	uint16_t tpid[2];
	uint16_t tci[2];
};

static const struct vlan no_vlan;

static void
put(struct frame *f, const void *p, size_t n)
{
	if (n != 0)
		memcpy(f->b + f->n, p, n);
	f->n = (uint16_t)(f->n + n);
}

static void
put16(struct frame *f, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	put(f, b, 2);
}

/* Ethernet + tags + PPPoE header (length: the tags), then the tags. */
static void
frame_make(struct frame *f, const uint8_t *dst, const uint8_t *src, const struct vlan *vl,
	   uint16_t etype, uint8_t code, uint16_t sid, const uint8_t *tags, uint16_t tlen)
{
	unsigned int i;

	f->n = 0;
	put(f, dst, 6);
	put(f, src, 6);
	for (i = 0; i < vl->n; i++) {
		put16(f, vl->tpid[i]);
		put16(f, vl->tci[i]);
	}
	put16(f, etype);
	f->pppoe = f->n;
	f->b[f->n++] = 0x11;
	f->b[f->n++] = code;
	put16(f, sid);
	put16(f, tlen);
	put(f, tags, tlen);
}

/* Tag list under construction. */
struct tags {
	uint8_t b[FRAME_MAX];
	uint16_t n;
};

static void
tag(struct tags *t, uint16_t type, const void *v, uint16_t len)
{
	t->b[t->n++] = (uint8_t)(type >> 8);
	t->b[t->n++] = (uint8_t)type;
	t->b[t->n++] = (uint8_t)(len >> 8);
	t->b[t->n++] = (uint8_t)len;
	if (len != 0)
		memcpy(t->b + t->n, v, len);
	t->n = (uint16_t)(t->n + len);
}

static void
tag_str(struct tags *t, uint16_t type, const char *s)
{
	tag(t, type, s, (uint16_t)strlen(s));
}

static void
tag16(struct tags *t, uint16_t type, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	tag(t, type, b, 2);
}

/* Classify as lib/eth does on the data path and hand over; seg: split point (0: one). */
static void
inject_seg(uint16_t port, const uint8_t *b, uint16_t n, uint16_t seg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *m2;

	if (m == NULL) {
		CHECK(0, "out of mbufs");
		return;
	}
	if (seg == 0 || seg >= n) {
		memcpy(rte_pktmbuf_append(m, n), b, n);
	} else {
		m2 = rte_pktmbuf_alloc(pool);
		memcpy(rte_pktmbuf_append(m, seg), b, seg);
		memcpy(rte_pktmbuf_append(m2, (uint16_t)(n - seg)), b + seg, n - seg);
		if (rte_pktmbuf_chain(m, m2) != 0)
			CHECK(0, "chain");
	}
	m->port = port;
	egw_eth_classify_burst(&eth_ports[port < NB_PORTS ? port : 0], &m, 1);
	egw_pppoe_input(m);
}

static void
inject(uint16_t port, const struct frame *f)
{
	inject_seg(port, f->b, f->n, 0);
}

/* ---- set-up -------------------------------------------------------------------- */

static void
guard_open(void)
{
	struct egw_pppoe_config c;
	struct egw_pppoe_guard g = {
		.padi_rate = EGW_PPPOE_DISC_RATE_MAX,
		.padi_rate_mac = EGW_PPPOE_DISC_RATE_MAX,
		.padr_rate = EGW_PPPOE_DISC_RATE_MAX,
		.padr_rate_mac = EGW_PPPOE_DISC_RATE_MAX,
		.auth_hold_s = 1,
	};

	egw_pppoe_config_get(&c);
	g.max_starting = c.max_sessions;
	CHECK(egw_pppoe_set_guard(&g) == 0, "guard open");
	CHECK(egw_pppoe_set_limits(c.max_sessions, c.max_sessions) == 0, "per-MAC limit open");
}

static int
lib_init(unsigned int max_sessions)
{
	struct egw_pppoe_params p = {
		.qsbr = qsbr,
		.pool = pool,
		.max_sessions = max_sessions,
		.nb_ctx = 1,
		.tx = tx_cb,
		.socket = SOCKET_ID_ANY,
	};
	int rc = egw_pppoe_init(&p);

	if (rc != 0)
		return rc;
	egw_pppoe_port_add(P_STD, (const struct rte_ether_addr *)mac_ac[P_STD], 1500);
	egw_pppoe_port_add(P_JUMBO, (const struct rte_ether_addr *)mac_ac[P_JUMBO], 9000);
	egw_pppoe_port_add(P_1508, (const struct rte_ether_addr *)mac_ac[P_1508], 1508);
	ncap = 0;
	/* the functional tests send many PADIs and PADRs from one MAC: the
	 * guard wide open (test_guard() tests it at its defaults) */
	guard_open();
	return 0;
}

/* Let every closing session pass its grace period (no reader is online). */
static void
settle(void)
{
	int i;

	for (i = 0; i < 10; i++)
		egw_pppoe_service();
}

/* ---- tag parser ------------------------------------------------------------------ */

struct tag_case {
	const char *name;
	uint8_t b[48];
	uint16_t len;
	enum pppoe_tag_err want;
	int nb_tags;     /* checked when OK */
	int service_len; /* -1: no Service-Name */
};

static const struct tag_case tag_cases[] = {
	{"empty payload", {0}, 0, PPPOE_TAG_OK, 0, -1},
	{"empty Service-Name", {0x01, 0x01, 0, 0}, 4, PPPOE_TAG_OK, 1, 0},
	{"exact boundary", {0x01, 0x01, 0, 2, 'a', 'b'}, 6, PPPOE_TAG_OK, 1, 2},
	{"value one past the payload", {0x01, 0x01, 0, 3, 'a', 'b'}, 6, PPPOE_TAG_TRUNCATED, 0, 0},
	{"length 0xFFFF", {0x01, 0x01, 0xff, 0xff, 'a', 'b'}, 6, PPPOE_TAG_TRUNCATED, 0, 0},
	{"1 byte of header", {0x01}, 1, PPPOE_TAG_TRUNCATED, 0, 0},
	{"3 bytes of header", {0x01, 0x01, 0}, 3, PPPOE_TAG_TRUNCATED, 0, 0},
	{"trailing bytes after a tag", {0x01, 0x01, 0, 0, 0x01}, 5, PPPOE_TAG_TRUNCATED, 0, 0},
	{"Service-Name twice", {0x01, 0x01, 0, 0, 0x01, 0x01, 0, 0}, 8, PPPOE_TAG_DUPLICATE, 0, 0},
	{"Host-Uniq twice", {0x01, 0x03, 0, 1, 7, 0x01, 0x03, 0, 0}, 9, PPPOE_TAG_DUPLICATE, 0, 0},
	{"AC-Cookie twice", {0x01, 0x04, 0, 0, 0x01, 0x04, 0, 0}, 8, PPPOE_TAG_DUPLICATE, 0, 0},
	{"Relay-Session-Id twice",
	 {0x01, 0x10, 0, 0, 0x01, 0x10, 0, 0},
	 8,
	 PPPOE_TAG_DUPLICATE,
	 0,
	 0},
	{"PPP-Max-Payload twice",
	 {0x01, 0x20, 0, 2, 0x05, 0xdc, 0x01, 0x20, 0, 2, 0x05, 0xdc},
	 12,
	 PPPOE_TAG_DUPLICATE,
	 0,
	 0},
	{"AC-Name twice is no error", {0x01, 0x02, 0, 0, 0x01, 0x02, 0, 0}, 8, PPPOE_TAG_OK, 2, -1},
	{"PPP-Max-Payload of 1 byte", {0x01, 0x20, 0, 1, 0x05}, 5, PPPOE_TAG_BAD_LEN, 0, 0},
	{"PPP-Max-Payload of 3 bytes", {0x01, 0x20, 0, 3, 0, 5, 0xdc}, 7, PPPOE_TAG_BAD_LEN, 0, 0},
	{"PPP-Max-Payload of 0 bytes", {0x01, 0x20, 0, 0}, 4, PPPOE_TAG_BAD_LEN, 0, 0},
	{"unknown and vendor tags skipped",
	 {0x0f, 0x0f, 0, 1, 9, 0x01, 0x05, 0, 4, 0, 0, 0x0d, 0xe9, 0x01, 0x01, 0, 0},
	 17,
	 PPPOE_TAG_OK,
	 3,
	 0},
	{"End-Of-List stops (garbage after it)",
	 {0x01, 0x01, 0, 1, 'x', 0, 0, 0, 0, 0x01, 0x01, 0xff},
	 12,
	 PPPOE_TAG_OK,
	 2,
	 1},
	{"End-Of-List with a length", {0, 0, 0, 1, 0}, 5, PPPOE_TAG_BAD_LEN, 0, 0},
	{"error tag", {0x02, 0x03, 0, 2, 'n', 'o'}, 6, PPPOE_TAG_OK, 1, -1},
};

static void
test_tags_table(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(tag_cases); i++) {
		const struct tag_case *c = &tag_cases[i];
		/* exactly len bytes: ASan catches any read past them */
		uint8_t *b = malloc(c->len + 1u);
		struct pppoe_tags t;
		enum pppoe_tag_err e;

		memcpy(b, c->b, c->len);
		e = pppoe_tags_parse(c->len != 0 ? b : b + 1, c->len, &t);
		CHECK(e == c->want, "tags '%s': %d, want %d", c->name, e, c->want);
		if (e == PPPOE_TAG_OK && c->want == PPPOE_TAG_OK) {
			CHECK((int)t.nb_tags == c->nb_tags, "tags '%s': %u tags, want %d", c->name,
			      t.nb_tags, c->nb_tags);
			CHECK(t.has_service == (c->service_len >= 0), "tags '%s': service",
			      c->name);
			if (c->service_len >= 0)
				CHECK(t.service_len == c->service_len, "tags '%s': service_len %u",
				      c->name, t.service_len);
		}
		free(b);
	}
}

/* A PADI payload with every tag kind a client sends. */
static void
padi_tags(struct tags *t)
{
	static const uint8_t hu[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03};
	static const uint8_t relay[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	t->n = 0;
	tag_str(t, PPPOE_TAG_SERVICE_NAME, "");
	tag(t, PPPOE_TAG_HOST_UNIQ, hu, sizeof(hu));
	tag(t, PPPOE_TAG_RELAY_SESSION_ID, relay, sizeof(relay));
	tag16(t, PPPOE_TAG_PPP_MAX_PAYLOAD, 1500);
}

static void
test_tags_truncations(void)
{
	struct tags t;
	uint16_t k, bounds[8], nb = 0, off = 0;
	unsigned int i;

	padi_tags(&t);
	/* tag boundaries: the only cuts that parse */
	while (off < t.n) {
		bounds[nb++] = off;
		off = (uint16_t)(off + 4 + be16(t.b + off + 2));
	}
	bounds[nb++] = t.n;
	for (k = 0; k <= t.n; k++) {
		uint8_t *b = malloc(k + 1u);
		struct pppoe_tags pt;
		enum pppoe_tag_err e, want = PPPOE_TAG_TRUNCATED;

		memcpy(b, t.b, k);
		for (i = 0; i < nb; i++)
			if (bounds[i] == k)
				want = PPPOE_TAG_OK;
		e = pppoe_tags_parse(b, k, &pt);
		CHECK(e == want, "PADI tags cut at %u: %d, want %d", k, e, want);
		free(b);
	}
	/* the whole list parsed: values point into it */
	{
		struct pppoe_tags pt;

		CHECK(pppoe_tags_parse(t.b, t.n, &pt) == PPPOE_TAG_OK, "PADI tags");
		CHECK(pt.has_service && pt.service_len == 0, "service");
		CHECK(pt.host_uniq == t.b + 8 && pt.host_uniq_len == 8, "host-uniq");
		CHECK(pt.relay_id == t.b + 20 && pt.relay_id_len == 12, "relay");
		CHECK(pt.has_max_payload && pt.max_payload == 1500, "max payload");
		CHECK(pt.nb_tags == 4 && !pt.has_error, "nb_tags %u", pt.nb_tags);
	}
}

/* ---- discovery through the API ------------------------------------------------------ */

static void
padi_frame(struct frame *f, uint16_t port, const uint8_t *src, const struct vlan *vl,
	   const struct tags *t)
{
	RTE_SET_USED(port);
	frame_make(f, mac_bcast, src, vl, 0x8863, PPPOE_CODE_PADI, 0, t->b, t->n);
}

/* Send a PADI, return its PADO's cookie (CK_LEN bytes) in ck; false if no PADO. */
static bool
get_cookie(uint16_t port, const uint8_t *src, const struct vlan *vl, const struct tags *t,
	   uint8_t ck[CK_LEN])
{
	const struct cap *c;
	const uint8_t *v;
	struct frame f;
	uint16_t l = 0;

	ncap = 0;
	padi_frame(&f, port, src, vl, t);
	inject(port, &f);
	c = disc_cap(0);
	if (c == NULL)
		return false;
	v = cap_tag(c, PPPOE_TAG_AC_COOKIE, &l);
	if (v == NULL || l != CK_LEN)
		return false;
	memcpy(ck, v, CK_LEN);
	return true;
}

/* A new cookie for src on P_STD without VLANs (each PADO has its own). */
static void
fresh_cookie(const uint8_t *src, uint8_t ck[CK_LEN])
{
	struct tags t;

	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, src, &no_vlan, &t, ck), "fresh cookie");
}

static void
test_pado_exact(void)
{
	struct tags t, e;
	struct frame f, want;
	const struct cap *c;
	const uint8_t *v;
	uint16_t l = 0;
	uint8_t ck[CK_LEN], ck1[CK_LEN], ck2[CK_LEN];
	uint64_t before[CNT_MAX];

	CHECK(lib_init(0) == 0, "init");
	padi_tags(&t);
	snap(before);
	padi_frame(&f, P_STD, mac_cl, &no_vlan, &t);
	inject(P_STD, &f);
	expect_drop(before, NULL, "PADI");
	CHECK(ndisc() == 1, "PADI: %u replies", ndisc());
	c = disc_cap(0);
	if (c == NULL)
		goto out;
	CHECK(c->port == P_STD, "PADO port %u", c->port);
	v = cap_tag(c, PPPOE_TAG_AC_COOKIE, &l);
	CHECK(v != NULL && l == CK_LEN, "PADO cookie length %u", l);
	if (v == NULL || l != CK_LEN)
		goto out;
	memcpy(ck, v, sizeof(ck));
	/* RFC 2516 5.2: AC-Name, the PADI's Service-Name, Host-Uniq and
	 * Relay-Session-Id verbatim, our cookie; no PPP-Max-Payload on a 1500 port */
	e.n = 0;
	tag_str(&e, PPPOE_TAG_AC_NAME, "edgegw");
	tag_str(&e, PPPOE_TAG_SERVICE_NAME, "");
	tag(&e, PPPOE_TAG_HOST_UNIQ, t.b + 8, 8);
	tag(&e, PPPOE_TAG_RELAY_SESSION_ID, t.b + 20, 12);
	tag(&e, PPPOE_TAG_AC_COOKIE, ck, CK_LEN);
	frame_make(&want, mac_cl, mac_ac[P_STD], &no_vlan, 0x8863, PPPOE_CODE_PADO, 0, e.b, e.n);
	CHECK(c->len == want.n && memcmp(c->b, want.b, want.n) == 0, "PADO bytes (len %u, want %u)",
	      c->len, want.n);
	CHECK(cnt("padi_rx") == 1 && cnt("pado_tx") == 1, "padi_rx/pado_tx");

	/* the cookie depends on the client: same MAC same cookie, other MAC other cookie */
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck1), "PADO again");
	CHECK(get_cookie(P_STD, mac_cl2, &no_vlan, &t, ck2), "PADO to client 2");
	CHECK(memcmp(ck1, ck, CK_LEN) != 0, "same client, second PADO: another cookie");
	CHECK(memcmp(ck1 + 1, ck2 + 1, 16) != 0, "two clients: two cookies");
	{
		struct vlan v = {1, {0x8100, 0}, {100, 0}};

		CHECK(get_cookie(P_STD, mac_cl, &v, &t, ck2), "PADO on VLAN 100");
		CHECK(memcmp(ck1 + 1, ck2 + 1, 16) != 0, "two VLANs: two cookies");
	}

	/* zero-length Host-Uniq is echoed as such; AC-Name as configured */
	CHECK(egw_pppoe_set_ac_name("BRAS-1") == 0, "ac name");
	t.n = 0;
	tag(&t, PPPOE_TAG_HOST_UNIQ, NULL, 0);
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	ncap = 0;
	padi_frame(&f, P_STD, mac_cl, &no_vlan, &t);
	inject(P_STD, &f);
	c = disc_cap(0);
	CHECK(c != NULL, "PADO with empty Host-Uniq");
	if (c != NULL) {
		v = cap_tag(c, PPPOE_TAG_HOST_UNIQ, &l);
		CHECK(v != NULL && l == 0, "empty Host-Uniq echoed");
		v = cap_tag(c, PPPOE_TAG_AC_NAME, &l);
		CHECK(v != NULL && l == 6 && memcmp(v, "BRAS-1", 6) == 0, "AC-Name BRAS-1");
		CHECK(cap_tag(c, PPPOE_TAG_RELAY_SESSION_ID, &l) == NULL, "no relay id invented");
	}
out:
	egw_pppoe_fini();
}

/* PPP-Max-Payload offered for a PADI asking for ask (0: no tag) on port. */
static int
pado_max_payload(uint16_t port, uint16_t ask)
{
	struct tags t;
	struct frame f;
	const struct cap *c;
	const uint8_t *v;
	uint16_t l = 0;

	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	if (ask != 0)
		tag16(&t, PPPOE_TAG_PPP_MAX_PAYLOAD, ask);
	ncap = 0;
	padi_frame(&f, port, mac_cl, &no_vlan, &t);
	inject(port, &f);
	c = disc_cap(0);
	if (c == NULL)
		return -2;
	v = cap_tag(c, PPPOE_TAG_PPP_MAX_PAYLOAD, &l);
	if (v == NULL)
		return -1;
	return l == 2 ? be16(v) : -3;
}

static void
test_max_payload(void)
{
	static const struct {
		uint16_t port, ask;
		int want; /* -1: no tag */
	} cases[] = {
		{P_STD, 0, -1},        {P_STD, 1500, -1},      {P_STD, 9000, -1},
		{P_JUMBO, 0, -1},      {P_JUMBO, 1400, -1},    {P_JUMBO, 1492, -1},
		{P_JUMBO, 1493, 1493}, {P_JUMBO, 1500, 1500},  {P_JUMBO, 8992, 8992},
		{P_JUMBO, 9000, 8992}, {P_JUMBO, 65535, 8992}, {P_1508, 1500, 1500},
		{P_1508, 4000, 1500},
	};
	unsigned int i;

	CHECK(lib_init(0) == 0, "init");
	for (i = 0; i < RTE_DIM(cases); i++) {
		int got = pado_max_payload(cases[i].port, cases[i].ask);

		CHECK(got == cases[i].want, "port %u asks %u: PPP-Max-Payload %d, want %d",
		      cases[i].port, cases[i].ask, got, cases[i].want);
	}
	egw_pppoe_fini();
}

/* Service-Name tags of a PADO as "a,b,c" ("" for an empty one); "-" if no PADO. */
static void
pado_services(const char *ask, char *out, size_t size)
{
	struct tags t;
	struct frame f;
	const struct cap *c;
	unsigned int off, end, n = 0;

	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, ask);
	ncap = 0;
	padi_frame(&f, P_STD, mac_cl, &no_vlan, &t);
	inject(P_STD, &f);
	c = disc_cap(0);
	snprintf(out, size, "-");
	if (c == NULL)
		return;
	out[0] = '\0';
	off = etype_off(c->b) + 2 + 6;
	end = off + be16(c->b + off - 2);
	while (off + 4 <= end) {
		uint16_t ty = be16(c->b + off), l = be16(c->b + off + 2);

		if (ty == PPPOE_TAG_SERVICE_NAME)
			snprintf(out + strlen(out), size - strlen(out), "%s%.*s", n++ ? "," : "",
				 (int)l, (const char *)c->b + off + 4);
		off += 4u + l;
	}
}

static void
test_services(void)
{
	char s[256];
	uint64_t before[CNT_MAX];

	CHECK(lib_init(0) == 0, "init");
	/* none configured: any name, echoed */
	pado_services("", s, sizeof(s));
	CHECK(strcmp(s, "") == 0, "no services, empty ask: '%s'", s);
	pado_services("anything", s, sizeof(s));
	CHECK(strcmp(s, "anything") == 0, "no services, 'anything': '%s'", s);

	CHECK(egw_pppoe_service_add("internet") == 0, "add internet");
	CHECK(egw_pppoe_service_add("voip") == 0, "add voip");
	/* the PADI's name first, then what we offer */
	pado_services("", s, sizeof(s));
	CHECK(strcmp(s, ",internet,voip") == 0, "empty ask: '%s'", s);
	pado_services("voip", s, sizeof(s));
	CHECK(strcmp(s, "voip") == 0, "voip: '%s'", s);
	snap(before);
	pado_services("video", s, sizeof(s));
	CHECK(strcmp(s, "-") == 0, "video: '%s'", s);
	expect_drop(before, "disc_service_unknown", "PADI video");
	snap(before);
	pado_services("VOIP", s, sizeof(s));
	CHECK(strcmp(s, "-") == 0, "names are exact: '%s'", s);
	expect_drop(before, "disc_service_unknown", "PADI VOIP");
	CHECK(egw_pppoe_service_del("internet") == 0, "del");
	pado_services("", s, sizeof(s));
	CHECK(strcmp(s, ",voip") == 0, "after del: '%s'", s);
	egw_pppoe_fini();
}

/* A PADR with the given tags (cookie added if ck != NULL), returns the number of replies. */
static void
padr_frame(struct frame *f, const uint8_t *dst, const uint8_t *src, const struct vlan *vl,
	   uint16_t sid, const char *service, const void *hu, uint16_t hu_len, const uint8_t *ck,
	   uint16_t ck_len)
{
	struct tags t;

	t.n = 0;
	if (service != NULL)
		tag_str(&t, PPPOE_TAG_SERVICE_NAME, service);
	if (hu != NULL)
		tag(&t, PPPOE_TAG_HOST_UNIQ, hu, hu_len);
	if (ck != NULL)
		tag(&t, PPPOE_TAG_AC_COOKIE, ck, ck_len);
	frame_make(f, dst, src, vl, 0x8863, PPPOE_CODE_PADR, sid, t.b, t.n);
}

/* PADS for a PADR: its session id, -1 if no PADS; err: the error tag type found (0: none). */
static int
pads_sid(uint16_t *err)
{
	const struct cap *c = disc_cap(0);
	uint16_t l, off;

	*err = 0;
	if (c == NULL)
		return -1;
	off = (uint16_t)(etype_off(c->b) + 2);
	if (c->b[off + 1] != PPPOE_CODE_PADS)
		return -2;
	if (cap_tag(c, PPPOE_TAG_SERVICE_NAME_ERROR, &l) != NULL)
		*err = PPPOE_TAG_SERVICE_NAME_ERROR;
	if (cap_tag(c, PPPOE_TAG_AC_SYSTEM_ERROR, &l) != NULL)
		*err = PPPOE_TAG_AC_SYSTEM_ERROR;
	return be16(c->b + off + 2);
}

static int
do_padr(uint16_t port, const uint8_t *src, const struct vlan *vl, const char *service,
	const void *hu, uint16_t hu_len, const uint8_t *ck, uint16_t *err)
{
	struct frame f;

	ncap = 0;
	padr_frame(&f, mac_ac[port], src, vl, 0, service, hu, hu_len, ck, ck != NULL ? CK_LEN : 0);
	inject(port, &f);
	return pads_sid(err);
}

static void
test_padr(void)
{
	static const uint8_t hu[4] = {0, 0, 0x30, 0x39};
	struct tags t;
	struct frame f, want;
	const struct cap *c;
	uint8_t ck[CK_LEN], bad[CK_LEN], ck2[CK_LEN];
	uint64_t before[CNT_MAX];
	struct pppoe_sess *s;
	uint16_t err = 0, sids[40];
	int sid, sid2;
	unsigned int i, j, counts[4];

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");
	CHECK(get_cookie(P_STD, mac_cl2, &no_vlan, &t, ck2), "cookie 2");

	/* no, forged, short, someone else's cookie: dropped, no reply */
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, NULL, &err) == -1, "no cookie: reply");
	expect_drop(before, "disc_no_cookie", "PADR without cookie");
	memcpy(bad, ck, CK_LEN);
	bad[9] ^= 0x01;
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, bad, &err) == -1, "forged cookie: reply");
	expect_drop(before, "disc_bad_cookie", "PADR forged cookie");
	bad[9] ^= 0x01;
	bad[0] ^= 0x80; /* an epoch that never was */
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, bad, &err) == -1, "epoch: reply");
	expect_drop(before, "disc_bad_cookie", "PADR cookie of another epoch");
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, ck2, &err) == -1, "stolen cookie: reply");
	expect_drop(before, "disc_bad_cookie", "PADR with another client's cookie");
	snap(before);
	ncap = 0;
	padr_frame(&f, mac_ac[P_STD], mac_cl, &no_vlan, 0, "", hu, 4, ck, CK_LEN - 1);
	inject(P_STD, &f);
	CHECK(ndisc() == 0, "short cookie: reply");
	expect_drop(before, "disc_bad_cookie", "PADR with a 16-byte cookie");
	{
		struct vlan v = {1, {0x8100, 0}, {7, 0}};

		snap(before);
		CHECK(do_padr(P_STD, mac_cl, &v, "", hu, 4, ck, &err) == -1, "VLAN: reply");
		expect_drop(before, "disc_bad_cookie", "PADR on another VLAN");
	}
	CHECK(egw_pppoe_session_count(counts) == 0, "no session yet");

	/* the real one: PADS byte for byte */
	snap(before);
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, ck, &err);
	expect_drop(before, NULL, "PADR");
	CHECK(sid > 0 && sid != 0xffff && err == 0, "PADS sid %d err %u", sid, err);
	c = disc_cap(0);
	if (c != NULL && sid > 0) {
		struct tags e;

		e.n = 0;
		tag_str(&e, PPPOE_TAG_SERVICE_NAME, "");
		tag(&e, PPPOE_TAG_HOST_UNIQ, hu, 4);
		frame_make(&want, mac_cl, mac_ac[P_STD], &no_vlan, 0x8863, PPPOE_CODE_PADS,
			   (uint16_t)sid, e.b, e.n);
		CHECK(c->len == want.n && memcmp(c->b, want.b, want.n) == 0, "PADS bytes");
	}
	s = sid > 0 ? pppoe_sess_get((uint16_t)sid) : NULL;
	CHECK(s != NULL && s->state == EGW_PPPOE_S_NEGOTIATING, "session negotiating");
	CHECK(egw_pppoe_session_count(counts) == 1 && counts[EGW_PPPOE_S_NEGOTIATING] == 1,
	      "one session");
	CHECK(cnt("pads_tx") == 1, "pads_tx");

	/* the client lost the PADS: the same PADR gets the same PADS, no second session */
	snap(before);
	sid2 = do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, ck, &err);
	CHECK(sid2 == sid && err == 0, "repeated PADR: sid %d, want %d", sid2, sid);
	expect_drop(before, NULL, "repeated PADR");
	CHECK(cnt("pads_resent") == 1, "pads_resent");
	CHECK(egw_pppoe_session_count(counts) == 1, "still one session");
	/* another Host-Uniq with the same cookie: one cookie opens one session */
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", "other", 5, ck, &err) == -1,
	      "cookie reused with another Host-Uniq: reply");
	expect_drop(before, "disc_cookie_reused", "cookie reused, other Host-Uniq");
	/* once the client spoke on the session, the same PADR is no repeat:
	 * the cookie is used, nothing is opened */
	if (s != NULL)
		s->ctrl_rx++;
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, ck, &err) == -1,
	      "PADR after PPP with a used cookie: reply");
	expect_drop(before, "disc_cookie_reused", "cookie reused after PPP");
	CHECK(egw_pppoe_session_count(counts) == 1, "still one session");
	fresh_cookie(mac_cl, ck);
	sid2 = do_padr(P_STD, mac_cl, &no_vlan, "", hu, 4, ck, &err);
	CHECK(sid2 > 0 && sid2 != sid, "PADR after PPP, new cookie: new session %d", sid2);

	/* session ids: unique, never 0 or 0xFFFF (other Host-Uniqs: new sessions) */
	sids[0] = (uint16_t)sid;
	sids[1] = (uint16_t)sid2;
	for (i = 2; i < RTE_DIM(sids); i++) {
		uint8_t h[2] = {0xaa, (uint8_t)i};

		fresh_cookie(mac_cl, ck);
		sid2 = do_padr(P_STD, mac_cl, &no_vlan, "", h, 2, ck, &err);
		CHECK(sid2 > 0 && sid2 != 0xffff && err == 0, "session %u: sid %d", i, sid2);
		sids[i] = (uint16_t)sid2;
		for (j = 0; j < i; j++)
			CHECK(sids[j] != sids[i], "sid %u reused", sids[i]);
	}
	CHECK(egw_pppoe_session_count(counts) == RTE_DIM(sids), "%u sessions",
	      egw_pppoe_session_count(counts));

	/* a service we do not offer: PADS with id 0 and Service-Name-Error */
	CHECK(egw_pppoe_service_add("internet") == 0, "service");
	fresh_cookie(mac_cl, ck);
	snap(before);
	sid2 = do_padr(P_STD, mac_cl, &no_vlan, "iptv", "x", 1, ck, &err);
	CHECK(sid2 == 0 && err == PPPOE_TAG_SERVICE_NAME_ERROR, "PADR iptv: sid %d err %#x", sid2,
	      err);
	expect_drop(before, "disc_padr_service_unknown", "PADR iptv");
	c = disc_cap(0);
	if (c != NULL) {
		const uint8_t *v;
		uint16_t l = 0;

		v = cap_tag(c, PPPOE_TAG_SERVICE_NAME, &l);
		CHECK(v != NULL && l == 4 && memcmp(v, "iptv", 4) == 0, "Service-Name echoed");
		v = cap_tag(c, PPPOE_TAG_HOST_UNIQ, &l);
		CHECK(v != NULL && l == 1 && v[0] == 'x', "Host-Uniq echoed in the refusal");
	}
	sid2 = do_padr(P_STD, mac_cl, &no_vlan, "internet", "y", 1, ck, &err);
	CHECK(sid2 > 0 && err == 0, "PADR internet: sid %d", sid2);
	s = sid2 > 0 ? pppoe_sess_get((uint16_t)sid2) : NULL;
	CHECK(s != NULL && strcmp(s->service, "internet") == 0, "session's service");

	/* no Service-Name at all: dropped */
	snap(before);
	CHECK(do_padr(P_STD, mac_cl, &no_vlan, NULL, "z", 1, ck, &err) == -1, "no service: reply");
	expect_drop(before, "disc_no_service", "PADR without Service-Name");
	egw_pppoe_fini();
}

/* A client MAC numbered i (locally administered unicast). */
static void
mac_n(uint8_t m[8], unsigned int i)
{
	m[0] = 0x02;
	m[1] = 0x00;
	m[2] = (uint8_t)(i >> 24);
	m[3] = (uint8_t)(i >> 16);
	m[4] = (uint8_t)(i >> 8);
	m[5] = (uint8_t)i;
	m[6] = m[7] = 0;
}

/* The flood guard at its defaults, and each of its limits. */
static void
test_guard(void)
{
	struct egw_pppoe_config c;
	struct egw_pppoe_guard g;
	struct tags t;
	uint8_t ck[CK_LEN], m[8] __rte_aligned(8), cks[200][CK_LEN];
	uint64_t before[CNT_MAX];
	unsigned int i, n, counts[4];
	uint16_t err;
	int sid, sids[200];
	struct pppoe_sess *s;

	CHECK(lib_init(0) == 0, "init");
	/* lib_init() opened the guard: back to the defaults */
	egw_pppoe_fini();
	{
		struct egw_pppoe_params p = {
			.qsbr = qsbr,
			.pool = pool,
			.nb_ctx = 1,
			.tx = tx_cb,
			.socket = SOCKET_ID_ANY,
		};

		CHECK(egw_pppoe_init(&p) == 0, "init with defaults");
		egw_pppoe_port_add(P_STD, (const struct rte_ether_addr *)mac_ac[P_STD], 1500);
	}
	egw_pppoe_config_get(&c);
	CHECK(c.max_per_mac == EGW_PPPOE_PER_MAC_DEF && c.max_per_mac == 2, "per-MAC default %u",
	      c.max_per_mac);
	CHECK(c.guard.max_starting == EGW_PPPOE_STARTING_DEF &&
		      c.guard.padi_rate == EGW_PPPOE_DISC_RATE_DEF &&
		      c.guard.padi_rate_mac == EGW_PPPOE_DISC_RATE_MAC_DEF &&
		      c.guard.padr_rate == EGW_PPPOE_DISC_RATE_DEF &&
		      c.guard.padr_rate_mac == EGW_PPPOE_DISC_RATE_MAC_DEF &&
		      c.guard.auth_hold_s == EGW_PPPOE_AUTH_HOLD_DEF,
	      "guard defaults");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");

	/* PADIs of one MAC: 3 per second pass, the 4th does not; another MAC does */
	for (i = 0; i < EGW_PPPOE_DISC_RATE_MAC_DEF; i++)
		CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "PADI %u of one MAC", i);
	snap(before);
	CHECK(!get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "PADI over the per-MAC rate: PADO");
	expect_drop(before, "disc_padi_rate_mac", "PADI over the per-MAC rate");
	CHECK(get_cookie(P_STD, mac_cl2, &no_vlan, &t, ck), "PADI of another MAC");
	/* PADRs of one MAC alike (each with its own cookie: mac_cl2's buckets) */
	sid = do_padr(P_STD, mac_cl2, &no_vlan, "", "1", 1, ck, &err);
	CHECK(sid > 0, "PADR 1");
	for (i = 0; i < 2; i++)
		do_padr(P_STD, mac_cl2, &no_vlan, "", "1", 1, ck, &err); /* repeats */
	snap(before);
	CHECK(do_padr(P_STD, mac_cl2, &no_vlan, "", "1", 1, ck, &err) == -1,
	      "PADR over the per-MAC rate: reply");
	expect_drop(before, "disc_padr_rate_mac", "PADR over the per-MAC rate");

	/* all clients: a rate of 10 PADIs per second, from 11 MACs */
	g = c.guard;
	g.padi_rate = 10;
	CHECK(egw_pppoe_set_guard(&g) == 0, "PADI rate 10");
	for (i = 0, n = 0; i < 10; i++) {
		mac_n(m, 1000 + i);
		n += get_cookie(P_STD, m, &no_vlan, &t, ck);
	}
	CHECK(n == 10, "10 PADIs of 10 MACs: %u PADOs", n);
	mac_n(m, 1010);
	snap(before);
	CHECK(!get_cookie(P_STD, m, &no_vlan, &t, ck), "11th PADI: PADO");
	expect_drop(before, "disc_padi_rate", "PADI over the rate of all");
	/* the guard is validated and set as a whole */
	g = c.guard;
	g.padr_rate = 0;
	CHECK(egw_pppoe_set_guard(&g) == -EINVAL, "rate 0");
	g = c.guard;
	g.padi_rate_mac = EGW_PPPOE_DISC_RATE_MAX + 1;
	CHECK(egw_pppoe_set_guard(&g) == -EINVAL, "rate too big");
	g = c.guard;
	g.max_starting = EGW_PPPOE_MAX_SESSIONS + 1;
	CHECK(egw_pppoe_set_guard(&g) == -EINVAL, "starting above the table");
	g = c.guard;
	g.auth_hold_s = 0;
	CHECK(egw_pppoe_set_guard(&g) == -EINVAL, "hold 0");
	egw_pppoe_config_get(&c);
	CHECK(c.guard.padi_rate == 10, "refused guard changed nothing");
	egw_pppoe_fini();

	/* 200 discoveries in flight (many more than any cache): every repeated
	 * PADR gets its session's PADS again, no second session */
	CHECK(lib_init(0) == 0, "init");
	for (i = 0; i < RTE_DIM(sids); i++) {
		mac_n(m, i);
		CHECK(get_cookie(P_STD, m, &no_vlan, &t, cks[i]), "cookie %u", i);
		sids[i] = do_padr(P_STD, m, &no_vlan, "", "hu", 2, cks[i], &err);
		CHECK(sids[i] > 0, "session %u", i);
	}
	snap(before);
	for (i = 0, n = 0; i < RTE_DIM(sids); i++) {
		mac_n(m, i);
		n += do_padr(P_STD, m, &no_vlan, "", "hu", 2, cks[i], &err) == sids[i];
	}
	CHECK(n == RTE_DIM(sids), "repeated PADRs: %u of %zu got their PADS again", n,
	      RTE_DIM(sids));
	expect_drop(before, NULL, "repeated PADRs");
	CHECK(egw_pppoe_session_count(counts) == RTE_DIM(sids), "%u sessions, want %zu",
	      egw_pppoe_session_count(counts), RTE_DIM(sids));
	/* 20 Host-Uniqs with one cookie: nothing more */
	for (i = 0, n = 0; i < 20; i++) {
		uint8_t h = (uint8_t)i;

		mac_n(m, 0);
		n += do_padr(P_STD, m, &no_vlan, "", &h, 1, cks[0], &err) > 0;
	}
	CHECK(n == 0 && egw_pppoe_session_count(counts) == RTE_DIM(sids),
	      "one cookie, 20 Host-Uniqs: %u sessions more", n);
	egw_pppoe_fini();

	/* sessions negotiating at once: 3 */
	CHECK(lib_init(0) == 0, "init");
	egw_pppoe_config_get(&c);
	g = c.guard;
	g.max_starting = 3;
	CHECK(egw_pppoe_set_guard(&g) == 0, "starting 3");
	for (i = 0; i < 4; i++) {
		mac_n(m, 500 + i);
		CHECK(get_cookie(P_STD, m, &no_vlan, &t, cks[i]), "cookie %u", i);
	}
	for (i = 0; i < 3; i++) {
		mac_n(m, 500 + i);
		sids[i] = do_padr(P_STD, m, &no_vlan, "", NULL, 0, cks[i], &err);
		CHECK(sids[i] > 0, "starting session %u", i);
	}
	mac_n(m, 503);
	snap(before);
	CHECK(do_padr(P_STD, m, &no_vlan, "", NULL, 0, cks[3], &err) == 0 &&
		      err == PPPOE_TAG_AC_SYSTEM_ERROR,
	      "4th starting session refused");
	expect_drop(before, "disc_limit_starting", "4th starting session");
	snap(before);
	CHECK(!get_cookie(P_STD, m, &no_vlan, &t, ck), "PADI while 3 start: PADO");
	expect_drop(before, "disc_padi_starting", "PADI while 3 start");
	/* one of them bound: room for one more */
	s = pppoe_sess_get((uint16_t)sids[0]);
	if (s != NULL) {
		s->fp->ip4 = rte_cpu_to_be_32(0x0a000002);
		CHECK(pppoe_sess_bind(s, PPPOE_NCP_IP4) == 0, "bind");
	}
	CHECK(do_padr(P_STD, m, &no_vlan, "", NULL, 0, cks[3], &err) > 0,
	      "4th session once one is bound");
	egw_pppoe_fini();

	/* failed logins hold the MAC: 1 s, then 2 s; a bound session ends it */
	CHECK(lib_init(0) == 0, "init");
	egw_pppoe_config_get(&c);
	g = c.guard;
	g.auth_hold_s = EGW_PPPOE_AUTH_HOLD_DEF;
	CHECK(egw_pppoe_set_guard(&g) == 0, "hold 60 s");
	fresh_cookie(mac_cl, ck);
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", NULL, 0, ck, &err);
	s = sid > 0 ? pppoe_sess_get((uint16_t)sid) : NULL;
	CHECK(s != NULL, "session");
	if (s != NULL)
		pppoe_sess_close(s, EGW_PPPOE_CAUSE_AUTH_FAIL, true);
	snap(before);
	CHECK(!get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "PADI after a failed login: PADO");
	expect_drop(before, "disc_auth_hold", "PADI of a held MAC");
	CHECK(get_cookie(P_STD, mac_cl2, &no_vlan, &t, ck), "another MAC is not held");
	rte_delay_ms(1100);
	fresh_cookie(mac_cl, ck);
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", NULL, 0, ck, &err);
	s = sid > 0 ? pppoe_sess_get((uint16_t)sid) : NULL;
	CHECK(s != NULL, "session after the 1 s hold");
	if (s != NULL)
		pppoe_sess_close(s, EGW_PPPOE_CAUSE_AUTH_FAIL, true);
	rte_delay_ms(1100);
	snap(before);
	CHECK(!get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "second failure: held 2 s");
	expect_drop(before, "disc_auth_hold", "second hold");
	pppoe_disc_login_ok((const struct rte_ether_addr *)mac_cl);
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "a bound session ends the hold");
	egw_pppoe_fini();
}

static void
test_limits(void)
{
	struct tags t;
	uint8_t ck1[CK_LEN], ck2[CK_LEN], ck3[CK_LEN];
	uint64_t before[CNT_MAX];
	uint16_t err = 0;
	int sid;
	static const uint8_t mac_cl3[8] __rte_aligned(8) = {0x00, 0x16, 0x3e, 0x11, 0x22, 0x55};

	CHECK(lib_init(0) == 0, "init");
	CHECK(egw_pppoe_set_limits(2, 1) == 0, "limits");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck1), "cookie 1");
	CHECK(get_cookie(P_STD, mac_cl2, &no_vlan, &t, ck2), "cookie 2");
	CHECK(get_cookie(P_STD, mac_cl3, &no_vlan, &t, ck3), "cookie 3");
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", "a", 1, ck1, &err);
	CHECK(sid > 0, "first session");
	/* per MAC */
	fresh_cookie(mac_cl, ck1);
	snap(before);
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", "b", 1, ck1, &err);
	CHECK(sid == 0 && err == PPPOE_TAG_AC_SYSTEM_ERROR, "per-MAC: sid %d err %#x", sid, err);
	expect_drop(before, "disc_limit_per_mac", "per-MAC limit");
	sid = do_padr(P_STD, mac_cl2, &no_vlan, "", "c", 1, ck2, &err);
	CHECK(sid > 0, "second session (other MAC)");
	/* in total */
	snap(before);
	sid = do_padr(P_STD, mac_cl3, &no_vlan, "", "d", 1, ck3, &err);
	CHECK(sid == 0 && err == PPPOE_TAG_AC_SYSTEM_ERROR, "limit: sid %d err %#x", sid, err);
	expect_drop(before, "disc_limit_sessions", "session limit");
	/* full: no PADO */
	snap(before);
	CHECK(!get_cookie(P_STD, mac_cl3, &no_vlan, &t, ck3), "PADO while full");
	expect_drop(before, "disc_padi_full", "PADI while full");
	/* limits are validated */
	CHECK(egw_pppoe_set_limits(0, 1) == -EINVAL, "limit 0");
	CHECK(egw_pppoe_set_limits(EGW_PPPOE_MAX_SESSIONS + 1, 1) == -EINVAL, "limit too big");
	CHECK(egw_pppoe_set_limits(2, 0) == -EINVAL, "per-mac 0");
	CHECK(egw_pppoe_set_limits(2, 65535) == -EINVAL, "per-mac 65535");
	egw_pppoe_fini();

	/* a table of 3: no limit above it */
	CHECK(lib_init(3) == 0, "init 3");
	CHECK(egw_pppoe_set_limits(4, 1) == -EINVAL, "limit above the table");
	egw_pppoe_fini();
}

/* Hostile and misdirected frames: each its counter, no reply. */
static void
test_rejects(void)
{
	struct tags t;
	struct frame f;
	uint64_t before[CNT_MAX];
	uint8_t ck[CK_LEN];
	static const uint8_t mc[8] __rte_aligned(8) = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
	static const uint8_t zero[8] __rte_aligned(8);
	static const uint8_t other[8] __rte_aligned(8) = {0x02, 0x99, 0x99, 0x99, 0x99, 0x99};
	struct {
		const char *name;
		uint16_t port;
		const char *counter;
	} * c, cases[32];
	struct frame frames[32];
	unsigned int n = 0, i;
	uint16_t k;

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	tag_str(&t, PPPOE_TAG_HOST_UNIQ, "hu");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");

#define CASE(nm, pt, cn)                 \
	do {                             \
		cases[n].name = (nm);    \
		cases[n].port = (pt);    \
		cases[n].counter = (cn); \
		n++;                     \
	} while (0)
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	CASE("PADI on a port that is not access", P_NONE, "disc_not_access");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].b[frames[n].pppoe] = 0x21;
	CASE("version 2", P_STD, "disc_bad_ver_type");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].b[frames[n].pppoe] = 0x12;
	CASE("type 2", P_STD, "disc_bad_ver_type");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].b[frames[n].pppoe + 5]++;
	CASE("length one past the frame", P_STD, "disc_bad_length");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].b[frames[n].pppoe + 4] = 0xff;
	CASE("length 0xFFxx", P_STD, "disc_bad_length");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].n = (uint16_t)(frames[n].pppoe + 5);
	CASE("5 bytes of PPPoE header", P_STD, "disc_short");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	frames[n].n = 14;
	CASE("ethertype only", P_STD, "disc_short");
	frame_make(&frames[n], mac_bcast, mc, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	CASE("multicast source", P_STD, "disc_bad_src");
	frame_make(&frames[n], mac_bcast, zero, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	CASE("zero source", P_STD, "disc_bad_src");
	frame_make(&frames[n], mac_bcast, mac_bcast, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b,
		   t.n);
	CASE("broadcast source", P_STD, "disc_bad_src");
	frame_make(&frames[n], other, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	CASE("PADI to another host", P_STD, "disc_padi_bad_dst");
	frame_make(&frames[n], mc, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	CASE("PADI to a multicast group", P_STD, "disc_padi_bad_dst");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 1, t.b, t.n);
	CASE("PADI with session id 1", P_STD, "disc_padi_sid");
	padr_frame(&frames[n], mac_bcast, mac_cl, &no_vlan, 0, "", "hu", 2, ck, CK_LEN);
	CASE("PADR to broadcast", P_STD, "disc_padr_bad_dst");
	padr_frame(&frames[n], mc, mac_cl, &no_vlan, 0, "", "hu", 2, ck, CK_LEN);
	CASE("PADR to multicast", P_STD, "disc_padr_bad_dst");
	padr_frame(&frames[n], mac_ac[P_JUMBO], mac_cl, &no_vlan, 0, "", "hu", 2, ck, CK_LEN);
	CASE("PADR to another port's MAC", P_STD, "disc_padr_bad_dst");
	padr_frame(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0x1234, "", "hu", 2, ck, CK_LEN);
	CASE("PADR with a session id", P_STD, "disc_padr_sid");
	padr_frame(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0, "", "hu", 2, ck, CK_LEN);
	CASE("PADR from the wrong port", P_JUMBO, "disc_padr_bad_dst");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADT, 1, NULL, 0);
	CASE("PADT to broadcast", P_STD, "disc_padt_bad_dst");
	frame_make(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADT, 1, NULL,
		   0);
	CASE("PADT for no session", P_STD, "disc_padt_unknown");
	frame_make(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADO, 0, t.b,
		   t.n);
	CASE("PADO", P_STD, "disc_unexpected_code");
	frame_make(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADS, 1, t.b,
		   t.n);
	CASE("PADS", P_STD, "disc_unexpected_code");
	frame_make(&frames[n], mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, 0x42, 0, t.b, t.n);
	CASE("code 0x42", P_STD, "disc_unknown_code");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0,
		   (const uint8_t *)"\x01\x03\x00\x02hu", 6);
	CASE("PADI without Service-Name", P_STD, "disc_no_service");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0,
		   (const uint8_t *)"\x01\x01\x00\x00\x01\x01\x00\x00", 8);
	CASE("PADI with two Service-Names", P_STD, "disc_tag_duplicate");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0,
		   (const uint8_t *)"\x01\x01\x00\x09", 4);
	CASE("PADI tag past the payload", P_STD, "disc_tag_truncated");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0,
		   (const uint8_t *)"\x01\x01\x00\x00\x01\x20\x00\x01\x05", 9);
	CASE("PADI PPP-Max-Payload of 1 byte", P_STD, "disc_tag_bad_len");
	frame_make(&frames[n], mac_bcast, mac_cl, &no_vlan, 0x0800, 0x45, 0, t.b, t.n);
	CASE("IPv4 to the control path", P_STD, "ctrl_bad_class");
#undef CASE

	for (i = 0; i < n; i++) {
		c = &cases[i];
		ncap = 0;
		snap(before);
		inject(c->port, &frames[i]);
		expect_drop(before, c->counter, c->name);
		CHECK(ncap == 0, "%s: %u replies", c->name, ncap);
	}

	/* every cut of the PADI's length field: parses only at tag boundaries */
	for (k = 0; k < t.n; k++) {
		bool boundary = k == 0 || k == 4 || k == t.n;

		frame_make(&f, mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
		f.b[f.pppoe + 4] = (uint8_t)(k >> 8);
		f.b[f.pppoe + 5] = (uint8_t)k;
		ncap = 0;
		snap(before);
		inject(P_STD, &f);
		if (k == 0) {
			expect_drop(before, "disc_no_service", "length 0");
		} else if (boundary) {
			expect_drop(before, NULL, "length at a boundary");
			CHECK(ndisc() == 1, "length %u: PADO", k);
		} else {
			expect_drop(before, "disc_tag_truncated", "cut length");
			CHECK(ncap == 0, "length %u: reply", k);
		}
	}
	/* every cut of the frame itself (the length field left as it was) */
	frame_make(&f, mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	for (k = 0; k < f.n; k++) {
		const char *want = k < 12 + 2        ? "ctrl_bad_class"
				   : k < f.pppoe + 6 ? "disc_short"
						     : "disc_bad_length";

		ncap = 0;
		snap(before);
		inject_seg(P_STD, f.b, k, 0);
		expect_drop(before, k == 0 ? "ctrl_bad_class" : want, "cut frame");
		CHECK(ncap == 0, "frame cut at %u: reply", k);
	}
	/* Ethernet padding after the payload is ignored */
	frame_make(&f, mac_bcast, mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADI, 0, t.b, t.n);
	memset(f.b + f.n, 0xee, 20);
	f.n = (uint16_t)(f.n + 20);
	ncap = 0;
	snap(before);
	inject(P_STD, &f);
	expect_drop(before, NULL, "padded PADI");
	CHECK(ndisc() == 1, "padded PADI: PADO");
	egw_pppoe_fini();
}

static void
test_padt(void)
{
	uint8_t ck[CK_LEN];
	struct tags t;
	struct frame f;
	uint64_t before[CNT_MAX];
	struct pppoe_sess *s;
	uint16_t err;
	unsigned int counts[4];
	const struct cap *c;
	int sid;

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", NULL, 0, ck, &err);
	CHECK(sid > 0, "session");
	if (sid <= 0)
		goto out;
	/* wrong MAC, wrong id: nothing happens */
	snap(before);
	frame_make(&f, mac_ac[P_STD], mac_cl2, &no_vlan, 0x8863, PPPOE_CODE_PADT, (uint16_t)sid,
		   NULL, 0);
	inject(P_STD, &f);
	expect_drop(before, "disc_padt_unknown", "PADT from another MAC");
	snap(before);
	frame_make(&f, mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADT,
		   (uint16_t)(sid + 1), NULL, 0);
	inject(P_STD, &f);
	expect_drop(before, "disc_padt_unknown", "PADT for another id");
	{
		struct vlan v = {1, {0x8100, 0}, {5, 0}};

		snap(before);
		frame_make(&f, mac_ac[P_STD], mac_cl, &v, 0x8863, PPPOE_CODE_PADT, (uint16_t)sid,
			   NULL, 0);
		inject(P_STD, &f);
		expect_drop(before, "disc_padt_unknown", "PADT on another VLAN");
	}
	s = pppoe_sess_get((uint16_t)sid);
	CHECK(s != NULL && s->state == EGW_PPPOE_S_NEGOTIATING, "still up");

	/* the client's PADT (with a Generic-Error tag, RFC 2516 allows tags) */
	ncap = 0;
	snap(before);
	frame_make(&f, mac_ac[P_STD], mac_cl, &no_vlan, 0x8863, PPPOE_CODE_PADT, (uint16_t)sid,
		   (const uint8_t *)"\x02\x03\x00\x03"
				    "bye",
		   7);
	inject(P_STD, &f);
	expect_drop(before, NULL, "PADT");
	s = pppoe_sess_get((uint16_t)sid);
	CHECK(s != NULL && s->state == EGW_PPPOE_S_CLOSING && s->cause == EGW_PPPOE_CAUSE_PADT,
	      "closing after PADT");
	CHECK(ndisc() == 0, "no PADT back to a PADT");
	CHECK(cnt("padt_rx") == 4 && cnt("closed_padt") == 1,
	      "padt_rx %" PRIu64 ", closed_padt %" PRIu64, cnt("padt_rx"), cnt("closed_padt"));
	/* a second PADT for it: the session is gone for discovery */
	snap(before);
	inject(P_STD, &f);
	expect_drop(before, "disc_padt_unknown", "second PADT");
	settle();
	CHECK(pppoe_sess_get((uint16_t)sid) == NULL, "freed after the grace period");
	CHECK(egw_pppoe_session_count(counts) == 0, "no session left");

	/* our PADT: on the session's tags, Generic-Error as text */
	{
		struct vlan v = {2, {0x88a8, 0x8100}, {0xa00a, 0x2014}};
		struct tags e;
		struct frame want;

		CHECK(get_cookie(P_STD, mac_cl, &v, &t, ck), "QinQ cookie");
		sid = do_padr(P_STD, mac_cl, &v, "", NULL, 0, ck, &err);
		CHECK(sid > 0, "QinQ session");
		s = sid > 0 ? pppoe_sess_get((uint16_t)sid) : NULL;
		if (s != NULL) {
			ncap = 0;
			CHECK(pppoe_disc_send_padt(s, "idle") == 0, "send PADT");
			c = disc_cap(0);
			e.n = 0;
			tag_str(&e, PPPOE_TAG_GENERIC_ERROR, "idle");
			frame_make(&want, mac_cl, mac_ac[P_STD], &v, 0x8863, PPPOE_CODE_PADT,
				   (uint16_t)sid, e.b, e.n);
			CHECK(c != NULL && c->len == want.n && memcmp(c->b, want.b, want.n) == 0,
			      "PADT bytes");
			CHECK(cnt("padt_tx") == 1, "padt_tx");
		}
	}
out:
	egw_pppoe_fini();
}

static void
test_vlans(void)
{
	static const struct vlan vlans[] = {
		{1, {0x8100, 0}, {0x6064, 0}},           /* priority 3, VID 100 */
		{1, {0x88a8, 0}, {0x0fff, 0}},           /* S-tag only */
		{2, {0x88a8, 0x8100}, {0xa00a, 0x0014}}, /* QinQ */
		{2, {0x9100, 0x8100}, {0x0001, 0xe002}}, /* legacy outer TPID */
		{2, {0x8100, 0x8100}, {0x0200, 0x0300}}, /* double 802.1Q */
	};
	unsigned int i;
	struct tags t;
	uint8_t ck[CK_LEN];
	uint16_t err;

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	tag_str(&t, PPPOE_TAG_HOST_UNIQ, "v");
	for (i = 0; i < RTE_DIM(vlans); i++) {
		const struct vlan *v = &vlans[i];
		const struct cap *c;
		struct frame want;
		struct tags e;
		int sid;

		if (!get_cookie(P_STD, mac_cl, v, &t, ck)) {
			CHECK(0, "vlan case %u: no PADO", i);
			continue;
		}
		c = disc_cap(0);
		e.n = 0;
		tag_str(&e, PPPOE_TAG_AC_NAME, "edgegw");
		tag_str(&e, PPPOE_TAG_SERVICE_NAME, "");
		tag_str(&e, PPPOE_TAG_HOST_UNIQ, "v");
		tag(&e, PPPOE_TAG_AC_COOKIE, ck, CK_LEN);
		frame_make(&want, mac_cl, mac_ac[P_STD], v, 0x8863, PPPOE_CODE_PADO, 0, e.b, e.n);
		CHECK(c->len == want.n && memcmp(c->b, want.b, want.n) == 0,
		      "vlan case %u: PADO on the same tags", i);

		sid = do_padr(P_STD, mac_cl, v, "", "v", 1, ck, &err);
		CHECK(sid > 0, "vlan case %u: PADS", i);
		c = disc_cap(0);
		e.n = 0;
		tag_str(&e, PPPOE_TAG_SERVICE_NAME, "");
		tag_str(&e, PPPOE_TAG_HOST_UNIQ, "v");
		frame_make(&want, mac_cl, mac_ac[P_STD], v, 0x8863, PPPOE_CODE_PADS,
			   (uint16_t)(sid > 0 ? sid : 0), e.b, e.n);
		CHECK(c != NULL && c->len == want.n && memcmp(c->b, want.b, want.n) == 0,
		      "vlan case %u: PADS on the same tags", i);
		if (sid > 0) {
			struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);
			uint16_t vid[2] = {v->tci[0] & 0xfff, v->tci[1] & 0xfff};

			CHECK(s != NULL && s->n_vlan == v->n, "vlan case %u: session tags", i);
			CHECK(pppoe_sess_find((uint16_t)sid, P_STD,
					      (const struct rte_ether_addr *)mac_cl, v->n,
					      vid) == s,
			      "vlan case %u: found by its key", i);
		}
	}
	/* a PADI in two segments, split inside a tag */
	{
		struct frame f;
		unsigned int before = 0;

		padi_frame(&f, P_STD, mac_cl, &vlans[2], &t);
		ncap = 0;
		inject_seg(P_STD, f.b, f.n, (uint16_t)(f.pppoe + 9));
		before = ndisc();
		CHECK(before == 1, "two-segment PADI: %u PADO", before);
	}
	egw_pppoe_fini();
}

static void
test_rotation(void)
{
	struct tags t;
	uint8_t ck[CK_LEN], ck_new[CK_LEN];
	uint64_t before[CNT_MAX], now = rte_rdtsc(), hz = rte_get_tsc_hz();
	uint16_t err;
	int sid;

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");
	CHECK(pppoe_disc_service(now + hz) == 0, "no rotation after 1 s");
	CHECK(pppoe_disc_service(now + 61 * hz) == 1, "rotation after 61 s");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck_new), "cookie after rotation");
	CHECK(memcmp(ck, ck_new, CK_LEN) != 0, "new epoch, new cookie");
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", "1", 1, ck, &err);
	CHECK(sid > 0, "previous epoch's cookie accepted");
	CHECK(pppoe_disc_service(now + 62 * hz) == 0, "no second rotation 1 s later");
	CHECK(egw_pppoe_service() == 0, "service with the real clock: nothing to do");
	CHECK(pppoe_disc_service(now + 122 * hz) == 1, "second rotation");
	snap(before);
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", "2", 1, ck, &err);
	CHECK(sid == -1, "cookie two epochs old: reply");
	expect_drop(before, "disc_bad_cookie", "old cookie");
	sid = do_padr(P_STD, mac_cl, &no_vlan, "", "3", 1, ck_new, &err);
	CHECK(sid > 0, "previous epoch's cookie still accepted");
	egw_pppoe_fini();
}

/* Session frames that reach the control path. */
static void
test_session_frames(void)
{
	struct tags t;
	struct frame f;
	uint8_t ck[CK_LEN];
	uint64_t before[CNT_MAX];
	struct pppoe_sess *s;
	uint16_t err, sid;
	int r;
	/* LCP Echo-Request (RFC 1661 5.8) */
	static const uint8_t lcp[] = {0xc0, 0x21, 0x09, 0x01, 0x00, 0x08, 0, 0, 0, 0};
	uint64_t rx;
	struct {
		const char *name;
		uint16_t port;
		uint8_t ver_type, code;
		int sid_delta;
		int len; /* PPPoE length field; -1: the payload's */
		uint16_t payload;
		const char *counter;
	} cases[] = {
		{"not access", P_NONE, 0x11, 0, 0, -1, sizeof(lcp), "ctrl_not_access"},
		{"version", P_STD, 0x21, 0, 0, -1, sizeof(lcp), "ctrl_bad_ver_type"},
		{"code", P_STD, 0x11, 0x09, 0, -1, sizeof(lcp), "ctrl_bad_code"},
		{"length past frame", P_STD, 0x11, 0, 0, sizeof(lcp) + 1, sizeof(lcp),
		 "ctrl_bad_length"},
		{"length 0", P_STD, 0x11, 0, 0, 0, sizeof(lcp), "ctrl_short_payload"},
		{"length 1", P_STD, 0x11, 0, 0, 1, sizeof(lcp), "ctrl_short_payload"},
		{"empty", P_STD, 0x11, 0, 0, -1, 0, "ctrl_short_payload"},
		{"unknown id", P_STD, 0x11, 0, 1, -1, sizeof(lcp), "ctrl_unknown_session"},
		{"short header", P_STD, 0x11, 0, 0, -2, 0, "ctrl_short"},
	};
	unsigned int i;

	CHECK(lib_init(0) == 0, "init");
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");
	r = do_padr(P_STD, mac_cl, &no_vlan, "", NULL, 0, ck, &err);
	CHECK(r > 0, "session");
	if (r <= 0)
		goto out;
	sid = (uint16_t)r;
	s = pppoe_sess_get(sid);
	rx = s->ctrl_rx;
	/* delivered, padding cut off (length 10, frame padded to 60 bytes) */
	frame_make(&f, mac_ac[P_STD], mac_cl, &no_vlan, 0x8864, 0, sid, lcp, sizeof(lcp));
	memset(f.b + f.n, 0, 60 - f.n);
	f.n = 60;
	snap(before);
	inject(P_STD, &f);
	expect_drop(before, NULL, "LCP frame");
	CHECK(s->ctrl_rx == rx + 1, "delivered to PPP");
	/* in two segments */
	inject_seg(P_STD, f.b, f.n, 23);
	CHECK(s->ctrl_rx == rx + 2, "two segments delivered to PPP");
	/* from another MAC */
	frame_make(&f, mac_ac[P_STD], mac_cl2, &no_vlan, 0x8864, 0, sid, lcp, sizeof(lcp));
	snap(before);
	inject(P_STD, &f);
	expect_drop(before, "ctrl_unknown_session", "other MAC");

	for (i = 0; i < RTE_DIM(cases); i++) {
		frame_make(&f, mac_ac[P_STD], mac_cl, &no_vlan, 0x8864, cases[i].code,
			   (uint16_t)(sid + cases[i].sid_delta), lcp, cases[i].payload);
		f.b[f.pppoe] = cases[i].ver_type;
		if (cases[i].len >= 0) {
			f.b[f.pppoe + 4] = (uint8_t)(cases[i].len >> 8);
			f.b[f.pppoe + 5] = (uint8_t)cases[i].len;
		} else if (cases[i].len == -2) {
			f.n = (uint16_t)(f.pppoe + 5);
		}
		ncap = 0;
		snap(before);
		inject(cases[i].port, &f);
		expect_drop(before, cases[i].counter, cases[i].name);
		CHECK(ncap == 0, "%s: reply", cases[i].name);
	}
	CHECK(s->ctrl_rx == rx + 2, "nothing bad delivered");
out:
	egw_pppoe_fini();
}

/* egw_pppoe_init() from a thread that has no lcore id */
struct init_arg {
	struct egw_pppoe_params p;
	int rc;
};

static void *
init_thread(void *arg)
{
	struct init_arg *a = arg;

	a->rc = egw_pppoe_init(&a->p);
	return NULL;
}

static void
test_init_fini(void)
{
	struct egw_pppoe_params p = {
		.qsbr = qsbr,
		.pool = pool,
		.nb_ctx = 1,
		.tx = tx_cb,
		.socket = SOCKET_ID_ANY,
	};
	struct egw_pppoe_params bad;
	struct egw_pppoe_config cfg;
	struct init_arg ia;
	struct tags t;
	pthread_t th;
	uint8_t ck[CK_LEN];
	uint16_t err;
	int i, n = 0;

	CHECK(egw_pppoe_init(NULL) == -EINVAL, "NULL params");
	bad = p;
	bad.qsbr = NULL;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "no qsbr");
	bad = p;
	bad.pool = NULL;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "no pool");
	bad = p;
	bad.tx = NULL;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "no tx");
	bad = p;
	bad.nb_ctx = 0;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "nb_ctx 0");
	bad.nb_ctx = EGW_PPPOE_MAX_CTX + 1;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "nb_ctx too big");
	bad = p;
	bad.max_sessions = EGW_PPPOE_MAX_SESSIONS + 1;
	CHECK(egw_pppoe_init(&bad) == -EINVAL, "too many sessions");
	/* its timers would be armed for no lcore and never run */
	ia.p = p;
	ia.rc = 1;
	CHECK(pthread_create(&th, NULL, init_thread, &ia) == 0 && pthread_join(th, NULL) == 0,
	      "thread");
	CHECK(ia.rc == -EINVAL, "init from a non-EAL thread: %d", ia.rc);
	if (ia.rc == 0)
		egw_pppoe_fini();

	CHECK(lib_init(100) == 0, "init");
	CHECK(egw_pppoe_init(&p) == -EEXIST, "init twice");
	egw_pppoe_config_get(&cfg);
	CHECK(strcmp(cfg.ac_name, "edgegw") == 0 && cfg.max_sessions == 100 &&
		      cfg.max_per_mac == 100 && cfg.mru == 1492 &&
		      cfg.mss_mode == EGW_PPPOE_MSS_AUTO && cfg.keepalive_s == 30 &&
		      cfg.keepalive_misses == 3 && cfg.auth == EGW_PPPOE_AUTH_PAP &&
		      cfg.nb_services == 0 && cfg.nb_pools4 == 0,
	      "defaults");
	CHECK(egw_pppoe_port_add(RTE_MAX_ETHPORTS, (const struct rte_ether_addr *)mac_ac[0],
				 1500) == -EINVAL,
	      "port out of range");
	CHECK(egw_pppoe_port_add(0, (const struct rte_ether_addr *)mac_ac[0], 1499) == -EINVAL,
	      "mtu 1499");
	CHECK(egw_pppoe_port_add(0, (const struct rte_ether_addr *)mac_bcast, 1500) == -EINVAL,
	      "broadcast MAC");

	/* three sessions: fini sends three PADTs */
	t.n = 0;
	tag_str(&t, PPPOE_TAG_SERVICE_NAME, "");
	CHECK(get_cookie(P_STD, mac_cl, &no_vlan, &t, ck), "cookie");
	for (i = 0; i < 3; i++) {
		uint8_t h = (uint8_t)i;

		fresh_cookie(mac_cl, ck);
		n += do_padr(P_STD, mac_cl, &no_vlan, "", &h, 1, ck, &err) > 0;
	}
	CHECK(n == 3, "three sessions");
	ncap = 0;
	egw_pppoe_fini();
	n = 0;
	for (i = 0; disc_cap((unsigned int)i) != NULL; i++)
		n += disc_cap((unsigned int)i)->b[15] == PPPOE_CODE_PADT;
	CHECK(n == 3, "PADTs at shutdown: %d", n);
	egw_pppoe_fini(); /* twice: nothing */

	/* again, from scratch: counters back to 0 */
	CHECK(lib_init(0) == 0, "init again");
	CHECK(cnt("padi_rx") == 0 && cnt("pads_tx") == 0, "counters reset");
	egw_pppoe_config_get(&cfg);
	CHECK(cfg.max_sessions == EGW_PPPOE_MAX_SESSIONS, "max sessions 0: all");
	CHECK(egw_pppoe_ctrl_counters(NULL, NULL, 0) > 40, "counter count");
	egw_pppoe_fini();
}

static void
walk_cnt(const char *name, void *arg)
{
	char *s = arg;

	snprintf(s + strlen(s), 256 - strlen(s), "%s;", name);
}

static void
test_conf(void)
{
	struct egw_pppoe_config cfg;
	char long_name[EGW_PPPOE_NAME_MAX + 2];
	char walk[256] = "";
	int i;

	CHECK(lib_init(1000) == 0, "init");
	memset(long_name, 'a', sizeof(long_name));
	long_name[EGW_PPPOE_NAME_MAX + 1] = '\0';
	CHECK(egw_pppoe_set_ac_name("") == -EINVAL, "empty ac name");
	CHECK(egw_pppoe_set_ac_name(NULL) == -EINVAL, "NULL ac name");
	CHECK(egw_pppoe_set_ac_name(long_name) == -EINVAL, "65-byte ac name");
	long_name[EGW_PPPOE_NAME_MAX] = '\0';
	CHECK(egw_pppoe_set_ac_name(long_name) == 0, "64-byte ac name");
	egw_pppoe_config_get(&cfg);
	CHECK(strcmp(cfg.ac_name, long_name) == 0, "ac name set");

	CHECK(egw_pppoe_service_add("") == -EINVAL, "empty service");
	CHECK(egw_pppoe_service_del("x") == -ENOENT, "del unknown");
	for (i = 0; i < PPPOE_MAX_SERVICES; i++) {
		char n[16];

		snprintf(n, sizeof(n), "s%d", i);
		CHECK(egw_pppoe_service_add(n) == 0, "add %s", n);
	}
	CHECK(egw_pppoe_service_add("one-more") == -ENOSPC, "services full");
	CHECK(egw_pppoe_service_add("s3") == -EEXIST, "duplicate service");
	CHECK(egw_pppoe_service_del("s0") == 0, "del s0");
	egw_pppoe_services_walk(walk_cnt, walk);
	CHECK(strncmp(walk, "s1;s2;s3;", 9) == 0, "walk: %s", walk);

	CHECK(egw_pppoe_set_mru(575) == -EINVAL && egw_pppoe_set_mru(9001) == -EINVAL, "mru range");
	CHECK(egw_pppoe_set_mru(576) == 0 && egw_pppoe_set_mru(9000) == 0, "mru bounds");
	CHECK(egw_pppoe_set_mss_clamp(EGW_PPPOE_MSS_FIXED, 535) == -EINVAL, "mss 535");
	CHECK(egw_pppoe_set_mss_clamp(EGW_PPPOE_MSS_FIXED, 8961) == -EINVAL, "mss 8961");
	CHECK(egw_pppoe_set_mss_clamp((enum egw_pppoe_mss_mode)7, 1000) == -EINVAL, "mss mode");
	CHECK(egw_pppoe_set_mss_clamp(EGW_PPPOE_MSS_FIXED, 1400) == 0, "mss 1400");
	CHECK(egw_pppoe_set_keepalive(3601, 3) == -EINVAL, "keepalive 3601");
	CHECK(egw_pppoe_set_keepalive(10, 0) == -EINVAL &&
		      egw_pppoe_set_keepalive(10, 256) == -EINVAL,
	      "misses range");
	CHECK(egw_pppoe_set_keepalive(0, 1) == 0, "keepalive off");
	CHECK(egw_pppoe_set_auth((enum egw_pppoe_auth)9) == -EINVAL, "auth");
	CHECK(egw_pppoe_set_auth(EGW_PPPOE_AUTH_CHAP) == 0, "chap");
	CHECK(egw_pppoe_set_limits(1001, 1) == -EINVAL, "limit above table");
	CHECK(egw_pppoe_set_limits(1000, 65534) == 0, "limit = table");
	CHECK(egw_pppoe_set_dns(htonl(0x08080808), 0) == 0, "dns");
	egw_pppoe_config_get(&cfg);
	CHECK(cfg.mru == 9000 && cfg.mss_mode == EGW_PPPOE_MSS_FIXED && cfg.mss_value == 1400 &&
		      cfg.keepalive_s == 0 && cfg.keepalive_misses == 1 &&
		      cfg.auth == EGW_PPPOE_AUTH_CHAP && cfg.max_sessions == 1000 &&
		      cfg.max_per_mac == 65534 && cfg.dns[0] == htonl(0x08080808) &&
		      cfg.nb_services == PPPOE_MAX_SERVICES - 1,
	      "config after the setters");
	egw_pppoe_fini();
}

struct pool_walk {
	char text[8][64];
	unsigned int used[8], size[8], n;
};

static void
pool_walk_cb(const char *prefix, unsigned int used, unsigned int size, void *arg)
{
	struct pool_walk *w = arg;

	if (w->n < 8) {
		snprintf(w->text[w->n], sizeof(w->text[0]), "%s", prefix);
		w->used[w->n] = used;
		w->size[w->n] = size;
	}
	w->n++;
}

static void
test_pools(void)
{
	static const struct {
		const char *prefix;
		int want;
	} adds[] = {
		{"10.0.0.0/30", 0},
		{"10.0.0.1/24", -EINVAL},
		{"10.0.0.0/31", -EINVAL},
		{"10.0.0.0/7", -EINVAL},
		{"10.0.0.0", -EINVAL},
		{"10.0.0/24", -EINVAL},
		{"10.0.0.0/", -EINVAL},
		{"10.0.0.0/2x", -EINVAL},
		{"10.0.0.0/24", -EEXIST},
		{"10.0.0.0/8", -EEXIST},
		{"10.0.0.4/30", 0},
		{"2001:db8::/32", 0},
		{"2001:db8::1/48", -EINVAL},
		{"2001:db8:1::/48", -EEXIST},
		{"2001:db9::/64", -EINVAL},
		{"2001:db9::/31", -EINVAL},
		{"2001:db9::/63", 0},
		{"garbage/24", -EINVAL},
		{"", -EINVAL},
		{"0.0.0.0/24", -EINVAL},   /* "this network" */
		{"127.0.0.0/16", -EINVAL}, /* loopback */
		{"224.1.0.0/16", -EINVAL}, /* multicast */
		{"240.0.0.0/8", -EINVAL},  /* reserved */
		{"192.0.0.0/2", -EINVAL},  /* length */
	};
	char err[128];
	unsigned int i, n;
	rte_be32_t a, got[4];
	uint8_t p6[8], q6[8];
	struct pool_walk w;
	struct egw_pppoe_config cfg;

	CHECK(lib_init(0) == 0, "init");
	for (i = 0; i < RTE_DIM(adds); i++) {
		int rc = egw_pppoe_pool_add(adds[i].prefix, err, sizeof(err));

		CHECK(rc == adds[i].want, "pool add %s: %d, want %d (%s)", adds[i].prefix, rc,
		      adds[i].want, err);
		if (rc != 0)
			CHECK(err[0] != '\0', "pool add %s: no message", adds[i].prefix);
	}
	CHECK(egw_pppoe_pool_add("10.0.0.1/24", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "host bits") != NULL && strstr(err, "10.0.0.0/24") != NULL,
	      "host bits message: %s", err);
	egw_pppoe_config_get(&cfg);
	CHECK(cfg.nb_pools4 == 2 && cfg.nb_pools6 == 2, "pool counts %u %u", cfg.nb_pools4,
	      cfg.nb_pools6);
	/* our address: the first host of the first pool */
	CHECK(pppoe_g.local4 == htonl(0x0a000001), "local4 %08x", ntohl(pppoe_g.local4));
	CHECK(pppoe_g.local6[0] == 0x20 && pppoe_g.local6[3] == 0xb8 && pppoe_g.local6[15] == 1,
	      "local6");

	/* 10.0.0.0/30 gives 10.0.0.2 only, 10.0.0.4/30 gives 10.0.0.6 only */
	n = 0;
	while (n < 4 && (a = pppoe_pool4_alloc()) != 0)
		got[n++] = a;
	CHECK(n == 2 && got[0] == htonl(0x0a000002) && got[1] == htonl(0x0a000006),
	      "two addresses: %u", n);
	CHECK(pppoe_pool4_alloc() == 0, "exhausted");
	CHECK(egw_pppoe_pool_del("10.0.0.4/30", err, sizeof(err)) == -EBUSY, "del busy");
	pppoe_pool4_release(got[1]);
	CHECK(egw_pppoe_pool_del("10.0.0.4/30", err, sizeof(err)) == 0, "del after release");
	CHECK(egw_pppoe_pool_del("10.0.0.4/30", err, sizeof(err)) == -ENOENT, "del again");
	pppoe_pool4_release(got[0]);
	pppoe_pool4_release(got[0]); /* twice: no effect */
	CHECK(egw_pppoe_pool_del("10.0.0.0/30", err, sizeof(err)) == 0, "del /30");
	CHECK(pppoe_g.local4 == 0, "no pool, no local4");

	/* a /24: 253 addresses, none of .0, .1, .255; next-fit reuse */
	CHECK(egw_pppoe_pool_add("192.168.7.0/24", err, sizeof(err)) == 0, "add /24");
	CHECK(pppoe_g.local4 == htonl(0xc0a80701), "local4 of the /24");
	for (n = 0; (a = pppoe_pool4_alloc()) != 0; n++) {
		uint32_t h = ntohl(a) & 0xff;

		CHECK(h != 0 && h != 1 && h != 255 && (ntohl(a) >> 8) == 0xc0a807, "address %08x",
		      ntohl(a));
		if (n > 300)
			break;
	}
	CHECK(n == 253, "/24 gives %u addresses", n);
	pppoe_pool4_release(htonl(0xc0a80710));
	pppoe_pool4_release(htonl(0xc0a80720));
	CHECK(pppoe_pool4_alloc() == htonl(0xc0a80710), "wrap to the first free");
	CHECK(pppoe_pool4_alloc() == htonl(0xc0a80720), "then the next");
	pppoe_pool4_release(htonl(0xc0a80730));
	pppoe_pool4_release(htonl(0xc0a80731));
	CHECK(pppoe_pool4_alloc() == htonl(0xc0a80730), "next fit");
	CHECK(pppoe_pool4_reserve(htonl(0xc0a80731)) == 0, "reserve a free address");
	CHECK(pppoe_pool4_reserve(htonl(0xc0a80731)) == -EBUSY, "reserve it again");
	CHECK(pppoe_pool4_reserve(htonl(0xc0a80701)) == -EBUSY, "reserve our own");
	CHECK(pppoe_pool4_reserve(htonl(0xc0a807ff)) == -EBUSY, "reserve broadcast");
	CHECK(pppoe_pool4_reserve(htonl(0xc0a80700)) == -EBUSY, "reserve network");
	CHECK(pppoe_pool4_reserve(htonl(0x0b000001)) == 1, "outside every pool");
	memset(&w, 0, sizeof(w));
	egw_pppoe_pools_walk(pool_walk_cb, &w);
	CHECK(w.n == 3 && strcmp(w.text[0], "192.168.7.0/24") == 0 && w.used[0] == 253 &&
		      w.size[0] == 253,
	      "walk v4: %s %u/%u", w.text[0], w.used[0], w.size[0]);
	CHECK(strcmp(w.text[1], "2001:db8::/32") == 0 && w.size[1] == 65535, "walk v6: %s %u",
	      w.text[1], w.size[1]);
	CHECK(strcmp(w.text[2], "2001:db9::/63") == 0 && w.size[2] == 1, "walk /63: %s %u",
	      w.text[2], w.size[2]);

	/* IPv6: /64s after our own, the /63 gives one, and release/reuse */
	CHECK(pppoe_pool6_alloc(p6) == 0, "v6 alloc");
	CHECK(memcmp(p6, "\x20\x01\x0d\xb8\x00\x00\x00\x01", 8) == 0, "first /64 is ::1:0:0:0:0");
	CHECK(egw_pppoe_pool_del("2001:db8::/32", err, sizeof(err)) == -EBUSY, "v6 del busy");
	pppoe_pool6_release(p6);
	CHECK(egw_pppoe_pool_del("2001:db8::/32", err, sizeof(err)) == 0, "v6 del");
	CHECK(pppoe_g.local6[3] == 0xb9 && pppoe_g.local6[15] == 1, "local6 moves to the /63");
	CHECK(pppoe_pool6_alloc(p6) == 0 && memcmp(p6, "\x20\x01\x0d\xb9\0\0\0\x01", 8) == 0,
	      "the /63's second /64");
	CHECK(pppoe_pool6_alloc(q6) == -ENOSPC, "/63 exhausted");
	for (i = 0; i < 15; i++) {
		char pf[32];

		snprintf(pf, sizeof(pf), "2001:db8:%x::/48", i);
		CHECK(egw_pppoe_pool_add(pf, err, sizeof(err)) == 0, "add %s: %s", pf, err);
	}
	CHECK(egw_pppoe_pool_add("2001:dba::/48", err, sizeof(err)) == -ENOSPC, "17th v6 pool");
	egw_pppoe_fini();
	/* fini freed the pools */
	CHECK(lib_init(0) == 0, "init");
	egw_pppoe_config_get(&cfg);
	CHECK(cfg.nb_pools4 == 0 && cfg.nb_pools6 == 0, "no pools after fini");
	egw_pppoe_fini();
}

int
main(int argc, char **argv)
{
	unsigned int i;

	if (rte_eal_init(argc, argv) < 0) {
		printf("EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("disc_pool", NB_MBUF, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qsbr == NULL || rte_rcu_qsbr_init(qsbr, 1) != 0 ||
	    egw_eth_init() != 0) {
		printf("set-up failed\n");
		return 1;
	}
	for (i = 0; i < NB_PORTS; i++)
		memcpy(eth_ports[i].mac.addr_bytes, mac_ac[i], 6);

	test_tags_table();
	test_tags_truncations();
	test_pado_exact();
	test_max_payload();
	test_services();
	test_padr();
	test_limits();
	test_guard();
	test_rejects();
	test_padt();
	test_vlans();
	test_rotation();
	test_session_frames();
	test_init_fini();
	test_conf();
	test_pools();

	printf("%d checks, %d failures\n", checks, failures);
	rte_eal_cleanup();
	return failures == 0 ? 0 : 1;
}
