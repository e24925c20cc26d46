/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for PPPoE discovery (lib/pppoe/disc.c, ctl.c): arbitrary
 * frames, tagged or not, of any length, classified by lib/eth as on the data
 * path and handed to egw_pppoe_input(); and the tag parser on its own.
 *
 * Input layout:
 *   byte 0     bit 0: ingress port (0: MTU 1500, 1: MTU 9000)
 *              bit 1: give the frame a valid AC-Cookie: a PADI from the same
 *                     MAC and tags is sent first and the cookie of its PADO
 *                     is written over the frame's first 21-byte AC-Cookie tag
 *                     (HMACs cannot be guessed: without this no PADR would
 *                     get past the cookie check)
 *              bit 2: a "internet" service is configured
 *              bit 3: the flood guard at its defaults (otherwise wide
 *                     open, so that most inputs reach the parsers)
 *   byte 1     where to split the frame over two segments (0: one segment)
 *   bytes 2-   the frame, from the destination MAC
 *
 * Checked:
 *  - pppoe_tags_parse() on a copy of exactly the payload's bytes (ASan sees
 *    any over-read): every pointer it returns lies inside the payload with
 *    its length, and a successful parse found no tag past the end;
 *  - every frame the library sends is well formed: Ethernet from the port's
 *    MAC, PPPoE version/type 1/1, a PPPoE length equal to the bytes after
 *    the header, discovery tags that tile the payload exactly, session ids
 *    never 0xFFFF.
 * The library is set up again every RESET_EVERY inputs so the session table
 * does not stay full.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"
#include "fuzz_eal.h"
#include "fuzz_common.h"

#define FRAME_MAX 4096
#define IN_HDR 2
#define RESET_EVERY 512
#define COOKIE_LEN 21

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qsbr;
static struct egw_eth_port eth_ports[2];
static const struct rte_ether_addr ac_mac[2] = {
	{.addr_bytes = {0x02, 0x00, 0x00, 0xac, 0x00, 0x00}},
	{.addr_bytes = {0x02, 0x00, 0x00, 0xac, 0x00, 0x01}},
};
static unsigned int runs;

/* the cookie of the last PADO sent */
static uint8_t last_cookie[COOKIE_LEN];
/* the configuration right after init (the guard's defaults) */
static struct egw_pppoe_config guard_def;
static bool have_cookie;

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
is_tpid(uint16_t t)
{
	return t == 0x8100 || t == 0x88a8 || t == 0x9100;
}

/* Offset of the ethertype after the tags walked (at most 2), within n bytes. */
static unsigned int
etype_off(const uint8_t *f, size_t n)
{
	unsigned int off = 12, nv = 0;

	while (nv < 2 && off + 2 <= n && is_tpid(be16(f + off))) {
		off += 4;
		nv++;
	}
	return off;
}

static void
tx_check(uint16_t port, struct rte_mbuf *m, void *arg)
{
	static uint8_t buf[FRAME_MAX + 64];
	const uint8_t *f;
	unsigned int off, len, end;
	uint16_t etype;

	RTE_SET_USED(arg);
	FUZZ_ASSERT(port < 2, "sent on port %u", port);
	FUZZ_ASSERT(m->pkt_len <= sizeof(buf) && m->pkt_len >= 14 + 6, "frame of %u bytes",
		    m->pkt_len);
	f = rte_pktmbuf_read(m, 0, m->pkt_len, buf);
	FUZZ_ASSERT(f != NULL, "unreadable frame");
	FUZZ_ASSERT(memcmp(f + 6, &ac_mac[port], 6) == 0, "source is not the port's MAC");
	off = etype_off(f, m->pkt_len);
	etype = be16(f + off);
	FUZZ_ASSERT(etype == 0x8863 || etype == 0x8864, "ethertype %#x", etype);
	off += 2;
	FUZZ_ASSERT(off + 6 <= m->pkt_len, "no room for the PPPoE header");
	FUZZ_ASSERT(f[off] == 0x11, "version/type %#x", f[off]);
	len = be16(f + off + 4);
	FUZZ_ASSERT(len == m->pkt_len - off - 6, "PPPoE length %u, payload %u", len,
		    m->pkt_len - off - 6);
	FUZZ_ASSERT(be16(f + off + 2) != 0xffff, "session id 0xFFFF");
	if (etype == 0x8863) {
		unsigned int p = off + 6;

		FUZZ_ASSERT(f[off + 1] == PPPOE_CODE_PADO || f[off + 1] == PPPOE_CODE_PADS ||
				    f[off + 1] == PPPOE_CODE_PADT,
			    "discovery code %#x sent", f[off + 1]);
		end = p + len;
		while (p < end) {
			uint16_t t, l;

			FUZZ_ASSERT(p + 4 <= end, "tag header past the payload");
			t = be16(f + p);
			l = be16(f + p + 2);
			FUZZ_ASSERT(p + 4 + l <= end, "tag value past the payload");
			if (t == PPPOE_TAG_AC_COOKIE && l == COOKIE_LEN) {
				memcpy(last_cookie, f + p + 4, COOKIE_LEN);
				have_cookie = true;
			}
			p += 4u + l;
		}
	}
	rte_pktmbuf_free(m);
}

static void
lib_setup(void)
{
	struct egw_pppoe_params p = {
		.qsbr = qsbr,
		.pool = pool,
		.max_sessions = 64,
		.nb_ctx = 1,
		.tx = tx_check,
		.socket = SOCKET_ID_ANY,
	};

	if (egw_pppoe_init(&p) != 0 || egw_pppoe_port_add(0, &ac_mac[0], 1500) != 0 ||
	    egw_pppoe_port_add(1, &ac_mac[1], 9000) != 0) {
		fprintf(stderr, "fuzz_pppoe_disc: cannot set up lib/pppoe\n");
		abort();
	}
	egw_pppoe_config_get(&guard_def);
}

/* The guard at its defaults, or wide open. */
static void
guard_set(bool defaults)
{
	struct egw_pppoe_guard g = {
		.max_starting = 64,
		.padi_rate = EGW_PPPOE_DISC_RATE_MAX,
		.padi_rate_mac = EGW_PPPOE_DISC_RATE_MAX,
		.padr_rate = EGW_PPPOE_DISC_RATE_MAX,
		.padr_rate_mac = EGW_PPPOE_DISC_RATE_MAX,
		.auth_hold_s = 1,
	};

	if (egw_pppoe_set_guard(defaults ? &guard_def.guard : &g) != 0 ||
	    egw_pppoe_set_limits(64, defaults ? guard_def.max_per_mac : 64) != 0)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_pppoe_disc: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_pppoe", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + FRAME_MAX,
				       rte_socket_id());
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qsbr == NULL || rte_rcu_qsbr_init(qsbr, 1) != 0 ||
	    egw_eth_init() != 0) {
		fprintf(stderr, "fuzz_pppoe_disc: cannot set up mbufs, QSBR or lib/eth\n");
		abort();
	}
	eth_ports[0].mac = ac_mac[0];
	eth_ports[1].mac = ac_mac[1];
	lib_setup();
	return 0;
}

/* The tag parser alone, on exactly len bytes. */
static void
parse_check(const uint8_t *data, size_t n)
{
	uint16_t len = (uint16_t)RTE_MIN(n, (size_t)UINT16_MAX);
	uint8_t *p = malloc(len + 1u);
	struct pppoe_tags t;
	enum pppoe_tag_err e;

	if (p == NULL)
		abort();
	memcpy(p, data, len);
	e = pppoe_tags_parse(p, len, &t);
	if (e == PPPOE_TAG_OK) {
#define INSIDE(ptr, l) ((ptr) == NULL || ((ptr) >= p && (size_t)((ptr)-p) + (l) <= len))
		FUZZ_ASSERT(INSIDE(t.service, t.service_len), "Service-Name outside");
		FUZZ_ASSERT(INSIDE(t.host_uniq, t.host_uniq_len), "Host-Uniq outside");
		FUZZ_ASSERT(INSIDE(t.cookie, t.cookie_len), "AC-Cookie outside");
		FUZZ_ASSERT(INSIDE(t.relay_id, t.relay_id_len), "Relay-Session-Id outside");
		FUZZ_ASSERT(INSIDE(t.ac_name, t.ac_name_len), "AC-Name outside");
#undef INSIDE
		FUZZ_ASSERT(t.has_service == (t.service != NULL), "has_service");
		FUZZ_ASSERT(t.nb_tags <= len / 4u, "%u tags in %u bytes", t.nb_tags, len);
	}
	free(p);
}

/* An mbuf (one or two segments) with the frame, classified, handed over. */
static void
inject(uint16_t port, const uint8_t *f, size_t n, size_t split)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *m2;

	if (m == NULL)
		abort();
	if (split == 0 || split >= n) {
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), f, n);
	} else {
		m2 = rte_pktmbuf_alloc(pool);
		if (m2 == NULL)
			abort();
		memcpy(rte_pktmbuf_append(m, (uint16_t)split), f, split);
		memcpy(rte_pktmbuf_append(m2, (uint16_t)(n - split)), f + split, n - split);
		if (rte_pktmbuf_chain(m, m2) != 0)
			abort();
	}
	m->port = port;
	egw_eth_classify_burst(&eth_ports[port], &m, 1);
	egw_pppoe_input(m);
}

/* Send a PADI from the frame's source and tags so that the frame can carry its cookie. */
static void
cookie_fill(uint16_t port, uint8_t *f, size_t n)
{
	uint8_t padi[64];
	unsigned int off = etype_off(f, n), p, end;

	if (off + 8 > n || off + 2 + 4 > sizeof(padi))
		return;
	memset(padi, 0xff, 6);
	memcpy(padi + 6, f + 6, off - 6); /* source and tags */
	memcpy(padi + off, "\x88\x63\x11\x09\x00\x00\x00\x04\x01\x01\x00\x00", 12);
	have_cookie = false;
	inject(port, padi, off + 12, 0);
	if (!have_cookie)
		return;
	/* the first 17-byte AC-Cookie tag of the frame, if any */
	p = off + 2 + 6;
	end = RTE_MIN((unsigned int)n, p + be16(f + off + 2 + 4));
	while (p + 4 <= end) {
		uint16_t t = be16(f + p), l = be16(f + p + 2);

		if (p + 4 + l > end)
			break;
		if (t == PPPOE_TAG_AC_COOKIE && l == COOKIE_LEN) {
			memcpy(f + p + 4, last_cookie, COOKIE_LEN);
			return;
		}
		p += 4u + l;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_MAX];
	uint8_t flags, split;
	uint16_t port;
	size_t n;

	if (size < IN_HDR)
		return 0;
	flags = data[0];
	split = data[1];
	n = RTE_MIN(size - IN_HDR, sizeof(frame));
	memcpy(frame, data + IN_HDR, n);
	port = flags & 1;

	if (++runs % RESET_EVERY == 0) {
		egw_pppoe_fini();
		lib_setup();
	}
	if (flags & 4)
		egw_pppoe_service_add("internet"); /* -EEXIST after the first time */
	else
		egw_pppoe_service_del("internet");
	guard_set(flags & 8);

	/* the tag parser on whatever follows a PPPoE header, and on the whole input */
	parse_check(data + IN_HDR, size - IN_HDR);
	if (n > 22)
		parse_check(frame + 20, n - 20);

	if (flags & 2)
		cookie_fill(port, frame, n);
	inject(port, frame, n, split);
	egw_pppoe_service();
	return 0;
}
