/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the PPPoE data path (lib/pppoe fast.c): frames from
 * the input, classified by lib/eth as a port would deliver them, through
 * egw_pppoe_decap_burst() (session frames from subscribers) or
 * egw_pppoe_encap_burst() (IP frames toward them), on a library with a few
 * sessions bound the way the control path binds them (pppoe_sess_create(),
 * an address, pppoe_sess_bind(), as tests/unit/pppoe/test_fast.c does):
 *
 *   A  port 0, untagged, IPv4 + IPv6, MRU 1492, MSS clamp from the MRU
 *   B  port 0, 802.1Q VID 100, IPv4 only
 *   C  port 1, QinQ 0x88a8 VID 200 / 0x8100 VID 300, IPv4 + IPv6, MRU 1400
 *   D  port 0, untagged, IPv6 only, MSS clamp fixed at 1000
 *   E  port 1, untagged, RFC 4638 PPP-Max-Payload 1500, IPv4 + IPv6
 *   N  port 0, untagged, still negotiating (its frames go to the control path)
 *   X  port 0, untagged, bound then closed: CLOSING (no service runs to free it)
 * Port 2 is not an access port.
 *
 * Input layout:
 *   byte 0   bits 0-1: segments per frame - 1 (1 to 4)
 *            bit 2:    0 decapsulation, 1 encapsulation
 *            bit 3:    the frames' headroom from byte 1 (else the default)
 *            bits 4-6: frames in the burst - 1, low bits (see byte 2)
 *            bit 7:    decapsulation: what comes out goes on through
 *                      encapsulation too (subscriber to subscriber)
 *   byte 1   headroom of the first segment: twice this, modulo
 *            RTE_PKTMBUF_HEADROOM / 2 + 1 (always even)
 *   byte 2   bits 0-6: ingress port (modulo 3); bit 7: 8 frames more
 *            (bursts of 1 to 16: longer than the prefetch distance)
 *   byte 3-5 where the segments are cut, each a fraction (n/256) of the frame
 *   then     the frames, from the destination MAC: each but the last after a
 *            2-byte big-endian length, the last takes the rest
 *
 * Checked for every result (a broken invariant aborts):
 *  - every mbuf that comes out: nb_segs and pkt_len agree with its chain,
 *    every segment's data inside its buffer, and the headers the next stage
 *    reads in the first segment;
 *  - accounting: frames in = out + pass + drops (encapsulation), frames in
 *    >= out + control + drops (decapsulation: a context may hold IP frames
 *    of an NCP not open yet; they go with the context, freed at the end of
 *    the input), no frame out twice;
 *  - control and pass frames: unchanged, byte for byte;
 *  - decapsulated frames: Ethernet with the frame's MAC addresses, the IP
 *    packet of a bound session of that port, MAC and VLANs with the NCP of
 *    its family open and its source address, cut to the IP length, lib/eth
 *    metadata of an untagged IP frame;
 *  - encapsulated frames: the session's header template (addresses, tags,
 *    session id), PPPoE length, protocol, the IP packet within the session's
 *    MRU, the session's port;
 *  - in both: the IP packet is the input's except for a TCP SYN's MSS,
 *    computed here independently (first well-formed MSS option above the
 *    session's clamp becomes the clamp; IPv4 fragments and IPv6 packets with
 *    extension headers untouched), and its checksum, which verifies after
 *    the rewrite whenever it verified before;
 *  - ICMP too-big: lengths and checksums;
 * and at the end of each input every mbuf is back in the pool.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"
#include "fuzz_common.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NB_MBUF 1023
#define SEG_ROOM 2048 /* data bytes of a buffer past its headroom */
#define FRAME_MAX (4 * SEG_ROOM)
#define BURST_MAX 16
#define NB_PORTS 3
#define IN_HDR 6

struct fsess {
	const char *name;
	uint16_t port;
	struct rte_ether_addr mac;
	uint8_t n_vlan;
	uint16_t tpid[2], tci[2];
	uint16_t max_payload;
	uint16_t mru;      /* 0: as created */
	bool v4, v6, bind; /* NCPs to bind; bind false: left negotiating */
	bool closed;       /* closed after the bind, never freed: CLOSING */
	bool mss_fixed;    /* created under a fixed clamp of 1000 */
	uint32_t ip4;      /* host order */
	uint8_t pfx[8];
	struct pppoe_sess *s; /* once created */
};

static struct fsess sess[] = {
	{.name = "A",
	 .mac = {{0x02, 0, 0, 0, 0, 0x0a}},
	 .v4 = true,
	 .v6 = true,
	 .bind = true,
	 .ip4 = 0x64400002,
	 .pfx = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2}},
	{.name = "B",
	 .mac = {{0x02, 0, 0, 0, 0, 0x0b}},
	 .n_vlan = 1,
	 .tpid = {0x8100, 0},
	 .tci = {0x2064, 0},
	 .v4 = true,
	 .bind = true,
	 .ip4 = 0x64400003},
	{.name = "C",
	 .port = 1,
	 .mac = {{0x02, 0, 0, 0, 0, 0x0c}},
	 .n_vlan = 2,
	 .tpid = {0x88a8, 0x8100},
	 .tci = {0x00c8, 0x612c},
	 .mru = 1400,
	 .v4 = true,
	 .v6 = true,
	 .bind = true,
	 .ip4 = 0x64400004,
	 .pfx = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 4}},
	{.name = "D",
	 .mac = {{0x02, 0, 0, 0, 0, 0x0d}},
	 .v6 = true,
	 .bind = true,
	 .mss_fixed = true,
	 .pfx = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 5}},
	{.name = "E",
	 .port = 1,
	 .mac = {{0x02, 0, 0, 0, 0, 0x0e}},
	 .max_payload = 1500,
	 .mru = 1500,
	 .v4 = true,
	 .v6 = true,
	 .bind = true,
	 .ip4 = 0x64400006,
	 .pfx = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 6}},
	{.name = "N",
	 .mac = {{0x02, 0, 0, 0, 0, 0x0f}},
	 .v4 = true,
	 .v6 = true,
	 .ip4 = 0x64400007,
	 .pfx = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 7}},
	{.name = "X",
	 .mac = {{0x02, 0, 0, 0, 0, 0x10}},
	 .v4 = true,
	 .bind = true,
	 .closed = true,
	 .ip4 = 0x64400008},
};

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qsbr;
static struct egw_eth_port eth_port[NB_PORTS];
static const struct rte_ether_addr port_mac[NB_PORTS] = {
	{{0x02, 0xac, 0, 0, 0, 0x01}},
	{{0x02, 0xac, 0, 0, 0, 0x02}},
	{{0x02, 0xac, 0, 0, 0, 0x03}},
};

/* what a frame was before the burst (the mbuf is rewritten in place) */
struct fin {
	struct rte_mbuf *m;
	uint8_t b[FRAME_MAX];
	uint32_t len;
	uint16_t port, l2;
	bool back; /* came out in a result array */
};

static struct fin fin[2][EGW_PPPOE_MAX_BURST];
static uint8_t out_buf[FRAME_MAX + 64];

/* ---- bytes ---------------------------------------------------------------- */

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

/* RFC 1071 sum of len bytes added to s, folded */
static uint32_t
sum16(const uint8_t *p, uint32_t len, uint32_t s)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Does the TCP/UDP/ICMPv6 checksum at l4 (len bytes) verify, with the
 * pseudo-header of the IP header ip (IPv4: ICMP without one)? */
static bool
l4_ok(const uint8_t *ip, bool v6, uint8_t proto, const uint8_t *l4, uint32_t len)
{
	uint8_t ph[40];
	uint32_t s;

	if (!v6) {
		if (proto == IPPROTO_ICMP)
			return sum16(l4, len, 0) == 0xffff;
		memcpy(ph, ip + 12, 8);
		ph[8] = 0;
		ph[9] = proto;
		ph[10] = (uint8_t)(len >> 8);
		ph[11] = (uint8_t)len;
		s = sum16(ph, 12, 0);
	} else {
		memcpy(ph, ip + 8, 32);
		ph[32] = (uint8_t)(len >> 24);
		ph[33] = (uint8_t)(len >> 16);
		ph[34] = (uint8_t)(len >> 8);
		ph[35] = (uint8_t)len;
		memset(ph + 36, 0, 3);
		ph[39] = proto;
		s = sum16(ph, 40, 0);
	}
	return sum16(l4, len, s) == 0xffff;
}

/* ---- the reference MSS clamp --------------------------------------------- */

/*
 * The TCP segment of an IP packet (validated header, ip_len bytes) whose
 * header a clamp rewrites: IPv4 not a fragment, IPv6 with TCP right after
 * the fixed header. A SYN behind IPv6 extension headers is left as it is:
 * fast.c documents that it does not walk them for the clamp (mss_clamp()),
 * and this model follows, so that such packets must come out unchanged.
 * *off and *len: where the segment is.
 */
static bool
tcp_of(const uint8_t *ip, uint32_t ip_len, bool v6, uint32_t *off, uint32_t *len)
{
	uint32_t x = v6 ? 40 : (uint32_t)(ip[0] & 0xf) * 4;

	if (v6 ? ip[6] != IPPROTO_TCP : ip[9] != IPPROTO_TCP || (be16(ip + 6) & 0x3fff) != 0)
		return false;
	*off = x;
	*len = ip_len - x;
	return true;
}

/*
 * What a clamp to mss does to the segment t (len bytes): the offset of the
 * MSS value it lowers, or 0 when it leaves the segment alone. RFC 793 and
 * RFC 6691: options after the fixed 20 bytes up to the data offset; End of
 * Option List ends them, No-Operation is one byte, every other option has a
 * length of at least 2 inside the header; the first MSS (kind 2, length 4)
 * is the one. A malformed list is left alone.
 */
static uint32_t
mss_ref(const uint8_t *t, uint32_t len, uint16_t mss)
{
	uint32_t doff, i = 20;

	if (mss == 0 || len < 20 || (t[13] & 0x02) == 0)
		return 0;
	doff = (uint32_t)(t[12] >> 4) * 4;
	if (doff <= 20 || doff > len)
		return 0;
	while (i < doff) {
		uint8_t kind = t[i], olen;

		if (kind == 0)
			return 0;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff)
			return 0;
		olen = t[i + 1];
		if (olen < 2 || i + olen > doff)
			return 0;
		if (kind == 2 && olen == 4)
			return be16(t + i + 2) > mss ? i + 2 : 0;
		i += olen;
	}
	return 0;
}

/*
 * The IP packet that came out (o) against the one that went in (in), both
 * ip_len bytes, for a session clamping to mss: equal but for what the
 * reference clamp changes.
 */
static void
ip_check_same(const uint8_t *in, const uint8_t *o, uint32_t ip_len, bool v6, uint16_t mss,
	      const char *what)
{
	uint32_t toff = 0, tlen = 0, at = 0, i;

	if (tcp_of(in, ip_len, v6, &toff, &tlen))
		at = mss_ref(in + toff, tlen, mss);
	for (i = 0; i < ip_len; i++) {
		if (at != 0 &&
		    (i == toff + at || i == toff + at + 1 || i == toff + 16 || i == toff + 17))
			continue;
		FUZZ_ASSERT(in[i] == o[i], "%s: IP byte %u changed (%#x -> %#x), clamp at %u", what,
			    i, in[i], o[i], at);
	}
	if (at == 0)
		return;
	FUZZ_ASSERT(be16(o + toff + at) == mss, "%s: MSS %u, clamp %u", what, be16(o + toff + at),
		    mss);
	if (l4_ok(in, v6, IPPROTO_TCP, in + toff, tlen))
		FUZZ_ASSERT(l4_ok(o, v6, IPPROTO_TCP, o + toff, tlen),
			    "%s: TCP checksum broken by the clamp", what);
}

/* ---- mbufs ---------------------------------------------------------------- */

/* The chain is what its head says, every segment inside its buffer. */
static void
chain_check(const struct rte_mbuf *m, const char *what)
{
	const struct rte_mbuf *s;
	uint32_t sum = 0;
	uint16_t nb = 0;

	for (s = m; s != NULL; s = s->next) {
		FUZZ_ASSERT(nb < 64, "%s: chain too long", what);
		FUZZ_ASSERT((uint32_t)s->data_off + s->data_len <= s->buf_len,
			    "%s: segment %u: data_off %u + data_len %u past buf_len %u", what, nb,
			    s->data_off, s->data_len, s->buf_len);
		sum += s->data_len;
		nb++;
	}
	FUZZ_ASSERT(m->pkt_len == sum, "%s: pkt_len %u, segments hold %u", what, m->pkt_len, sum);
	FUZZ_ASSERT(m->nb_segs == nb, "%s: nb_segs %u, chain of %u", what, m->nb_segs, nb);
}

/* Flat copy of a frame (it fits: nothing grows beyond what went in + headers). */
static const uint8_t *
flat(const struct rte_mbuf *m)
{
	const uint8_t *p;

	FUZZ_ASSERT(m->pkt_len <= sizeof(out_buf), "frame of %u bytes", m->pkt_len);
	p = rte_pktmbuf_read(m, 0, m->pkt_len, out_buf);
	FUZZ_ASSERT(p != NULL, "unreadable frame");
	return p;
}

static const struct fin *
fin_of(struct fin *tab, unsigned int n, const struct rte_mbuf *m, const char *what)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (tab[i].m != m)
			continue;
		FUZZ_ASSERT(!tab[i].back, "%s: frame %u came out twice", what, i);
		tab[i].back = true;
		return &tab[i];
	}
	FUZZ_ASSERT(false, "%s: an mbuf that was not in the burst", what);
	return NULL;
}

/* ---- set-up --------------------------------------------------------------- */

/* the data path sends nothing through the control path's transmit */
static void
tx_none(uint16_t port, struct rte_mbuf *m, void *arg)
{
	RTE_SET_USED(arg);
	rte_pktmbuf_free(m);
	FUZZ_ASSERT(false, "a control frame sent on port %u", port);
}

static void
lib_setup(void)
{
	struct egw_pppoe_params prm;
	char err[128];
	unsigned int i;

	memset(&prm, 0, sizeof(prm));
	prm.qsbr = qsbr;
	prm.pool = pool;
	prm.max_sessions = 16;
	prm.nb_ctx = 1;
	prm.tx = tx_none;
	prm.socket = SOCKET_ID_ANY;
	if (egw_pppoe_init(&prm) != 0 || egw_pppoe_port_add(0, &port_mac[0], 1500) != 0 ||
	    egw_pppoe_port_add(1, &port_mac[1], 1508) != 0 ||
	    egw_pppoe_pool_add("100.64.0.0/24", err, sizeof(err)) != 0 ||
	    egw_pppoe_pool_add("2001:db8:1::/48", err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_pppoe_fast: library set-up failed\n");
		abort();
	}
	for (i = 0; i < RTE_DIM(sess); i++) {
		struct fsess *f = &sess[i];
		rte_be16_t tpid[2] = {rte_cpu_to_be_16(f->tpid[0]), rte_cpu_to_be_16(f->tpid[1])};
		enum pppoe_refuse why;

		if (egw_pppoe_set_mss_clamp(f->mss_fixed ? EGW_PPPOE_MSS_FIXED : EGW_PPPOE_MSS_AUTO,
					    f->mss_fixed ? 1000 : 0) != 0) {
			fprintf(stderr, "fuzz_pppoe_fast: MSS clamp mode refused\n");
			abort();
		}
		f->s = pppoe_sess_create(f->port, &f->mac, f->n_vlan, f->tci, tpid, f->max_payload,
					 &why);
		if (f->s == NULL) {
			fprintf(stderr, "fuzz_pppoe_fast: session %s refused (%d)\n", f->name, why);
			abort();
		}
		if (f->mru != 0)
			pppoe_sess_set_mru(f->s, f->mru);
		if (!f->bind)
			continue;
		if (f->v4) {
			f->s->fp->ip4 = rte_cpu_to_be_32(f->ip4);
			FUZZ_ASSERT(pppoe_sess_bind(f->s, PPPOE_NCP_IP4) == 0, "bind %s", f->name);
		}
		if (f->v6) {
			memcpy(f->s->fp->ip6_prefix, f->pfx, 8);
			FUZZ_ASSERT(pppoe_sess_bind(f->s, PPPOE_NCP_IP6) == 0, "bind %s", f->name);
		}
		/* no PADT (no transmit here); egw_pppoe_service() never runs */
		if (f->closed)
			pppoe_sess_close(f->s, EGW_PPPOE_CAUSE_ADMIN, false);
	}
	egw_pppoe_set_mss_clamp(EGW_PPPOE_MSS_AUTO, 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned int i;

	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_pppoe_fast: rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	pool = rte_pktmbuf_pool_create("fuzz_fast", NB_MBUF, 0, 0, RTE_PKTMBUF_HEADROOM + SEG_ROOM,
				       rte_socket_id());
	qsbr = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(1), RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qsbr == NULL || rte_rcu_qsbr_init(qsbr, 1) != 0 ||
	    egw_eth_init() != 0) {
		fprintf(stderr, "fuzz_pppoe_fast: cannot set up mbufs, QSBR or lib/eth\n");
		abort();
	}
	for (i = 0; i < NB_PORTS; i++)
		eth_port[i].mac = port_mac[i];
	lib_setup();
	return 0;
}

/* ---- frames in ------------------------------------------------------------ */

/*
 * One frame in nseg segments cut at the fractions cut[] of its length (cuts
 * that fall together make fewer segments), the first with headroom hr; a
 * segment longer than its buffer passes the rest to the next, and what the
 * last cannot hold is cut off. NULL when the pool is empty.
 */
static struct rte_mbuf *
frame_make(const uint8_t *p, uint32_t len, unsigned int nseg, const uint8_t cut[3], int hr)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	uint32_t bound[5], from = 0;
	unsigned int i, k = 0;

	bound[k++] = 0;
	for (i = 0; i + 1 < nseg; i++) {
		uint32_t b = (uint32_t)cut[i] * len / 256;

		if (b > bound[k - 1])
			bound[k++] = b;
	}
	bound[k] = len;
	for (i = 0; i < k && from < len; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint32_t to = i + 1 == k ? len : RTE_MAX(bound[i + 1], from), n;
		uint8_t *d;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (i == 0 && hr >= 0)
			m->data_off = (uint16_t)hr;
		n = RTE_MIN(to - from, (uint32_t)rte_pktmbuf_tailroom(m));
		d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		FUZZ_ASSERT(d != NULL, "append %u", n);
		memcpy(d, p + from, n);
		from += n;
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += n;
		}
		last = m;
	}
	return head;
}

/* Classify and keep a copy of what went in; false if lib/eth refused it. */
static bool
frame_take(struct fin *f, struct rte_mbuf *m, uint16_t port)
{
	m->port = port;
	if (egw_eth_classify_burst(&eth_port[port], &m, 1) != 1) {
		rte_pktmbuf_free(m);
		return false;
	}
	f->m = m;
	f->back = false;
	f->len = m->pkt_len;
	f->port = port;
	f->l2 = m->l2_len;
	memcpy(f->b, flat(m), m->pkt_len);
	return true;
}

/* ---- results -------------------------------------------------------------- */

static const struct fsess *
sess_of_sid(uint16_t sid)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(sess); i++)
		if (sess[i].s->sid == sid)
			return &sess[i];
	return NULL;
}

static unsigned int
drops_of(const struct egw_pppoe_res *res)
{
	unsigned int i, n = 0;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		n += res->drop[i];
	return n;
}

static void
unchanged(struct fin *tab, unsigned int n, struct rte_mbuf *m, const char *what)
{
	const struct fin *f = fin_of(tab, n, m, what);
	const uint8_t *o;

	chain_check(m, what);
	o = flat(m);
	FUZZ_ASSERT(m->pkt_len == f->len && memcmp(o, f->b, f->len) == 0, "%s: frame changed",
		    what);
}

/* A decapsulated frame against the session frame it was. */
static void
decap_out_check(struct fin *tab, unsigned int n, struct rte_mbuf *m)
{
	const struct fin *f = fin_of(tab, n, m, "decap out");
	const struct egw_eth_meta *meta = egw_eth_meta(m);
	const uint8_t *in = f->b, *h = in + f->l2, *o, *ip;
	const struct pppoe_sess_fp *fp;
	const struct fsess *fs;
	uint32_t off, ip_len, hdr;
	uint16_t proto, sid;
	unsigned int pl, i;
	bool v6;

	chain_check(m, "decap out");
	/* the session it came from: port, MAC, VLANs, bound, this family open */
	FUZZ_ASSERT(f->l2 + 8u <= f->len, "decap out: no PPPoE header went in");
	sid = be16(h + 2);
	fs = sess_of_sid(sid);
	FUZZ_ASSERT(fs != NULL && fs->bind && !fs->closed, "decap out: from session %u, not bound",
		    sid);
	fp = fs->s->fp;
	FUZZ_ASSERT(f->port == fs->port && memcmp(in + 6, &fs->mac, 6) == 0 &&
			    f->l2 == 14 + 4 * fs->n_vlan,
		    "decap out: session %s's id from another client, port or tagging", fs->name);
	for (i = 0; i < fs->n_vlan; i++)
		FUZZ_ASSERT((be16(in + 14 + 4 * i) & 0xfff) == (fs->tci[i] & 0xfff),
			    "decap out: session %s's id from another VLAN", fs->name);
	FUZZ_ASSERT(h[0] == 0x11 && h[1] == 0, "decap out: PPPoE version/type %#x code %#x", h[0],
		    h[1]);
	pl = (h[6] & 1) ? 1 : 2;
	proto = pl == 1 ? h[6] : be16(h + 6);
	FUZZ_ASSERT(proto == PPP_IP || proto == PPP_IPV6, "decap out: protocol %#x", proto);
	v6 = proto == PPP_IPV6;
	FUZZ_ASSERT(fp->ncp & (v6 ? PPPOE_NCP_IP6 : PPPOE_NCP_IP4), "decap out: NCP not open");
	off = f->l2 + 6 + pl;
	ip = in + off;
	hdr = v6 ? 40 : (uint32_t)(ip[0] & 0xf) * 4;
	ip_len = v6 ? 40u + be16(ip + 4) : be16(ip + 2);
	FUZZ_ASSERT(off + ip_len <= f->len && ip_len <= be16(h + 4) - pl && ip_len >= hdr &&
			    hdr >= 20,
		    "decap out: IP packet of %u bytes outside the PPPoE payload", ip_len);
	FUZZ_ASSERT((ip[0] >> 4) == (v6 ? 6 : 4), "decap out: IP version %u", ip[0] >> 4);
	FUZZ_ASSERT(v6 ? memcmp(ip + 8, fs->pfx, 8) == 0 : be32(ip + 12) == fs->ip4,
		    "decap out: source not session %s's", fs->name);
	FUZZ_ASSERT(!v6 || ip[6] != IPPROTO_ICMPV6 || ip_len <= 40 || ip[40] != 133,
		    "decap out: a Router Solicitation forwarded");
	/* the frame: Ethernet II, same addresses, the IP packet */
	FUZZ_ASSERT(m->pkt_len == 14 + ip_len, "decap out: %u bytes for an IP packet of %u",
		    m->pkt_len, ip_len);
	FUZZ_ASSERT(m->data_len >= 14 + hdr, "decap out: IP header not in the first segment");
	FUZZ_ASSERT(m->l2_len == 14 && meta->n_vlan == 0 &&
			    meta->cls == (v6 ? EGW_ETH_CLS_IPV6 : EGW_ETH_CLS_IPV4) &&
			    rte_be_to_cpu_16(meta->proto) == (v6 ? 0x86dd : 0x0800) &&
			    (m->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) == 0,
		    "decap out: metadata");
	o = flat(m);
	FUZZ_ASSERT(memcmp(o, in, 12) == 0 && be16(o + 12) == (v6 ? 0x86dd : 0x0800),
		    "decap out: Ethernet header");
	ip_check_same(ip, o + 14, ip_len, v6, v6 ? fp->mss6 : fp->mss4, "decap out");
}

/* An encapsulated frame against the IP frame it was. */
static void
encap_out_check(struct fin *tab, unsigned int n, struct rte_mbuf *m, uint16_t out_port)
{
	const struct fin *f = fin_of(tab, n, m, "encap out");
	const struct egw_eth_meta *meta = egw_eth_meta(m);
	const uint8_t *ip = f->b + f->l2, *o, *h;
	const struct fsess *fs = NULL;
	const struct pppoe_sess_fp *fp;
	uint32_t ip_len, hl, hdr, i;
	bool v6;

	chain_check(m, "encap out");
	FUZZ_ASSERT(f->l2 + 20u <= f->len, "encap out: no IP header went in");
	v6 = (ip[0] >> 4) == 6;
	FUZZ_ASSERT(v6 || (ip[0] >> 4) == 4, "encap out: IP version %u", ip[0] >> 4);
	FUZZ_ASSERT(!v6 || f->l2 + 40u <= f->len, "encap out: no IPv6 header went in");
	for (i = 0; i < RTE_DIM(sess); i++) {
		const struct fsess *c = &sess[i];

		if (c->bind && !c->closed &&
		    (v6 ? c->v6 && memcmp(ip + 24, c->pfx, 8) == 0
			: c->v4 && be32(ip + 16) == c->ip4))
			fs = c;
	}
	FUZZ_ASSERT(fs != NULL, "encap out: to no bound session");
	fp = fs->s->fp;
	hdr = v6 ? 40 : (uint32_t)(ip[0] & 0xf) * 4;
	ip_len = v6 ? 40u + be16(ip + 4) : be16(ip + 2);
	FUZZ_ASSERT(ip_len >= hdr && hdr >= 20 && f->l2 + ip_len <= f->len,
		    "encap out: IP packet of %u bytes past the frame", ip_len);
	FUZZ_ASSERT(ip_len <= fp->mru, "encap out: %u bytes for session %s's MRU %u", ip_len,
		    fs->name, fp->mru);
	hl = 14 + 4u * fs->n_vlan + 6;
	FUZZ_ASSERT(out_port == fs->port, "encap out: port %u for session %s on %u", out_port,
		    fs->name, fs->port);
	FUZZ_ASSERT(m->pkt_len == hl + 2 + ip_len, "encap out: %u bytes for %u + 2 + %u",
		    m->pkt_len, hl, ip_len);
	FUZZ_ASSERT(m->data_len >= hl + 2, "encap out: PPPoE header not in the first segment");
	FUZZ_ASSERT(m->l2_len == hl - 6 && meta->n_vlan == fs->n_vlan &&
			    meta->cls == EGW_ETH_CLS_PPPOE_SESS,
		    "encap out: metadata");
	o = flat(m);
	FUZZ_ASSERT(memcmp(o, &fs->mac, 6) == 0 && memcmp(o + 6, &port_mac[fs->port], 6) == 0,
		    "encap out: Ethernet addresses");
	for (i = 0; i < fs->n_vlan; i++)
		FUZZ_ASSERT(be16(o + 12 + 4 * i) == fs->tpid[i] &&
				    be16(o + 14 + 4 * i) == fs->tci[i],
			    "encap out: tag %u", i);
	h = o + hl - 6;
	FUZZ_ASSERT(be16(h - 2) == 0x8864 && h[0] == 0x11 && h[1] == 0 &&
			    be16(h + 2) == fs->s->sid && be16(h + 4) == ip_len + 2 &&
			    be16(h + 6) == (v6 ? PPP_IPV6 : PPP_IP),
		    "encap out: PPPoE header");
	ip_check_same(ip, o + hl + 2, ip_len, v6, v6 ? fp->mss6 : fp->mss4, "encap out");
}

/* An ICMP too-big: lengths and checksums. */
static void
icmp_check(struct rte_mbuf *m)
{
	const uint8_t *o, *ip;
	uint32_t l2 = m->l2_len, len;

	chain_check(m, "icmp");
	o = flat(m);
	FUZZ_ASSERT(l2 >= 14 && l2 + 28 <= m->pkt_len && m->data_len >= l2 + 28, "icmp: %u bytes",
		    m->pkt_len);
	ip = o + l2;
	if ((ip[0] >> 4) == 4) {
		len = be16(ip + 2);
		FUZZ_ASSERT(ip[0] == 0x45 && len == m->pkt_len - l2 && len <= 576 &&
				    sum16(ip, 20, 0) == 0xffff && ip[9] == IPPROTO_ICMP &&
				    ip[20] == 3 && ip[21] == 4 &&
				    l4_ok(ip, false, IPPROTO_ICMP, ip + 20, len - 20),
			    "icmp: IPv4 destination unreachable");
	} else {
		FUZZ_ASSERT((ip[0] >> 4) == 6 && m->pkt_len >= l2 + 48, "icmp: version %u",
			    ip[0] >> 4);
		len = 40u + be16(ip + 4);
		FUZZ_ASSERT(len == m->pkt_len - l2 && len <= 1280 && ip[6] == IPPROTO_ICMPV6 &&
				    ip[40] == 2 &&
				    l4_ok(ip, true, IPPROTO_ICMPV6, ip + 40, len - 40),
			    "icmp: ICMPv6 packet too big");
	}
}

static void
res_free(struct egw_pppoe_res *res)
{
	unsigned int i;

	for (i = 0; i < res->n_out; i++)
		rte_pktmbuf_free(res->out[i]);
	for (i = 0; i < res->n_ctrl; i++)
		rte_pktmbuf_free(res->ctrl[i]);
	for (i = 0; i < res->n_pass; i++)
		rte_pktmbuf_free(res->pass[i]);
	for (i = 0; i < res->n_icmp; i++)
		rte_pktmbuf_free(res->icmp[i]);
	memset(res, 0, sizeof(*res));
}

static void
encap_run(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], unsigned int n, struct fin *tab,
	  struct egw_pppoe_res *res)
{
	unsigned int i;

	memset(res, 0, sizeof(*res));
	egw_pppoe_encap_burst(c, pkts, (uint16_t)n, res);
	FUZZ_ASSERT(res->n_out + res->n_pass + drops_of(res) == n && res->n_ctrl == 0,
		    "encap: %u in, %u out + %u pass + %u dropped", n, res->n_out, res->n_pass,
		    drops_of(res));
	for (i = 0; i < res->n_out; i++)
		encap_out_check(tab, n, res->out[i], res->out_port[i]);
	for (i = 0; i < res->n_pass; i++)
		unchanged(tab, n, res->pass[i], "encap pass");
	for (i = 0; i < res->n_icmp; i++)
		icmp_check(res->icmp[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct egw_pppoe_res res, res2;
	struct rte_mbuf *pkts[BURST_MAX], *hp[EGW_PPPOE_MAX_BURST];
	struct in in = {.p = data, .n = size};
	unsigned int nseg, nfr, i, n = 0;
	struct egw_pppoe_ctx *c;
	uint8_t b0, b1, b2, cut[3];
	uint16_t port;
	bool encap;
	int hr;

	if (size < IN_HDR)
		return 0;
	b0 = in_u8(&in);
	b1 = in_u8(&in);
	nseg = (b0 & 3) + 1u;
	encap = (b0 & 4) != 0;
	/* even: a port delivers frames 2-byte aligned, and lib/eth (DPDK's
	 * rte_is_same_ether_addr()) reads addresses as 16-bit words */
	hr = (b0 & 8) ? (int)(b1 % (RTE_PKTMBUF_HEADROOM / 2 + 1)) * 2 : -1;
	b2 = in_u8(&in);
	nfr = (((b0 >> 4) & 7) | ((b2 & 0x80) >> 4)) + 1u;
	port = (uint16_t)((b2 & 0x7f) % NB_PORTS);
	cut[0] = in_u8(&in);
	cut[1] = in_u8(&in);
	cut[2] = in_u8(&in);

	/* a fresh context: its ICMP token bucket full, every input alike */
	c = egw_pppoe_ctx_create(0, pool);
	FUZZ_ASSERT(c != NULL, "context: %s", rte_strerror(rte_errno));

	for (i = 0; i < nfr && in.n > 0; i++) {
		uint32_t len = i + 1 < nfr ? (uint32_t)in_uint(&in, 2) : (uint32_t)in.n;
		struct rte_mbuf *m;

		len = RTE_MIN(len, (uint32_t)in.n);
		len = RTE_MIN(len, (uint32_t)FRAME_MAX);
		if (len == 0)
			continue;
		m = frame_make(in.p, len, nseg, cut, hr);
		in.p += len;
		in.n -= len;
		if (m != NULL && frame_take(&fin[0][n], m, port))
			pkts[n++] = m;
	}

	if (n != 0 && encap) {
		encap_run(c, pkts, n, fin[0], &res);
		res_free(&res);
	} else if (n != 0) {
		memset(&res, 0, sizeof(res));
		egw_pppoe_decap_burst(c, pkts, (uint16_t)n, &res);
		/* a frame may also stay in the context (the handoff's hold):
		 * freed with it, which the pool count at the end checks */
		FUZZ_ASSERT(res.n_out + res.n_ctrl + drops_of(&res) <= n && res.n_pass == 0 &&
				    res.n_icmp == 0,
			    "decap: %u in, %u out + %u ctrl + %u dropped", n, res.n_out, res.n_ctrl,
			    drops_of(&res));
		for (i = 0; i < res.n_out; i++)
			decap_out_check(fin[0], n, res.out[i]);
		for (i = 0; i < res.n_ctrl; i++)
			unchanged(fin[0], n, res.ctrl[i], "decap ctrl");
		if (b0 & 0x80) {
			/* subscriber to subscriber: the IP frames on toward the sessions */
			unsigned int k = res.n_out;

			for (i = 0; i < k; i++) {
				fin[1][i].m = res.out[i];
				fin[1][i].back = false;
				fin[1][i].len = res.out[i]->pkt_len;
				fin[1][i].port = res.out[i]->port;
				fin[1][i].l2 = res.out[i]->l2_len;
				memcpy(fin[1][i].b, flat(res.out[i]), res.out[i]->pkt_len);
				hp[i] = res.out[i];
			}
			res.n_out = 0;
			if (k != 0) {
				encap_run(c, hp, k, fin[1], &res2);
				res_free(&res2);
			}
		}
		res_free(&res);
	}
	egw_pppoe_ctx_free(c);
	FUZZ_ASSERT(rte_mempool_avail_count(pool) == NB_MBUF, "mbufs leaked: %u of %u in the pool",
		    rte_mempool_avail_count(pool), NB_MBUF);
	return 0;
}
