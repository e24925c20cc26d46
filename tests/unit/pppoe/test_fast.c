/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/pppoe session table and data path: sessions are made with the private
 * API (pppoe_sess_create + an address + pppoe_sess_bind, as the control path
 * does once an NCP opens), then frames go through egw_pppoe_decap_burst()
 * and egw_pppoe_encap_burst(). Every expected frame is built here, byte by
 * byte from RFC 2516 (PPPoE), RFC 1661 (PPP, PFC), RFC 791/8200 (IP),
 * RFC 792/1191/4443 (ICMP too-big) and RFC 879/6691 (MSS), independently of
 * the library; checksums of rewritten packets are verified by recomputing
 * them over the whole packet.
 *
 * Lifecycle: a QSBR variable with one registered reader (thread id 0) that
 * the test keeps online and reports quiescent for, as a worker would, proves
 * that a closed session's id is not reused before the grace period.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#include "check.h"
#include "egw_eth.h"
#include "egw_pppoe.h"
#include "pppoe_private.h"

#define NB_MBUF 1023
#define TABLE 16
#define FRAME_MAX 2048

static struct rte_mempool *pool;
static struct rte_rcu_qsbr *qs;
static struct egw_pppoe_ctx *ctx;
static struct egw_pppoe_res res;
static uint64_t drops_seen[EGW_PPPOE_DROP_MAX]; /* sum of res.drop over the test */

static const struct rte_ether_addr port_mac[3] = {
	{{0x02, 0xac, 0, 0, 0, 0x01}},
	{{0x02, 0xac, 0, 0, 0, 0x02}},
	{{0x02, 0xac, 0, 0, 0, 0x03}},
};
static const struct rte_ether_addr mac_a = {{0x02, 0, 0, 0, 0, 0x0a}};
static const struct rte_ether_addr mac_b = {{0x02, 0, 0, 0, 0, 0x0b}};
static const struct rte_ether_addr mac_c = {{0x02, 0, 0, 0, 0, 0x0c}};
static const struct rte_ether_addr mac_d = {{0x02, 0, 0, 0, 0, 0x0d}};
static const struct rte_ether_addr mac_n = {{0x02, 0, 0, 0, 0, 0x0e}};
static const struct rte_ether_addr mac_up = {{0x02, 0xee, 0, 0, 0, 0x01}}; /* uplink router */

/* RTE_IPV4 shifts an int: undefined for a first byte above 127 */
#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define IP_A IP4(100, 64, 0, 2)
#define IP_B IP4(100, 64, 0, 3)
#define IP_C IP4(100, 64, 0, 4)
#define IP_N IP4(100, 64, 0, 5)
#define IP_LOCAL IP4(100, 64, 0, 1)
#define IP_SERVER IP4(198, 51, 100, 7)

static const uint8_t pfx_a[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2};
static const uint8_t pfx_c[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 4};
static const uint8_t pfx_d[8] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 5};
static const uint8_t local6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
static const uint8_t server6[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};

/* Sessions: A untagged IPv4+IPv6, B 802.1Q IPv4, C QinQ IPv4+IPv6, D IPv6
 * only, N still negotiating. */
static struct pppoe_sess *sa, *sb, *sc, *sd, *sn;
static uint16_t sid_a, sid_b, sid_c, sid_d, sid_n;
/* an NCP Configure-Ack from the peer: code 2, id 1, length 4 */
static const uint8_t ncp_ack[] = {2, 1, 0, 4};

/* ---- bytes -------------------------------------------------------------- */

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

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* RFC 1071 one's complement sum over len bytes, folded. */
static uint32_t
sum16(const uint8_t *p, size_t len, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += get16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Does the checksum of an IPv4/IPv6 packet's transport (TCP, ICMP,
 * ICMPv6; sum including its checksum field) verify? */
static bool
l4_cksum_ok(const uint8_t *ip)
{
	uint8_t ph[40];
	uint32_t s;

	if ((ip[0] >> 4) == 4) {
		uint32_t ihl = (ip[0] & 0xf) * 4u, len = get16(ip + 2) - ihl;

		if (ip[9] == IPPROTO_ICMP)
			return sum16(ip + ihl, len, 0) == 0xffff;
		memcpy(ph, ip + 12, 8);
		ph[8] = 0;
		ph[9] = ip[9];
		put16(ph + 10, (uint16_t)len);
		s = sum16(ph, 12, 0);
		return sum16(ip + ihl, len, s) == 0xffff;
	}
	memcpy(ph, ip + 8, 32);
	put32(ph + 32, get16(ip + 4));
	memset(ph + 36, 0, 3);
	ph[39] = ip[6];
	s = sum16(ph, 40, 0);
	return sum16(ip + 40, get16(ip + 4), s) == 0xffff;
}

static bool
ip4_hdr_ok(const uint8_t *ip)
{
	return sum16(ip, (ip[0] & 0xf) * 4u, 0) == 0xffff;
}

/* IPv4 packet: UDP (proto 17) with plen payload bytes, or whatever proto
 * with l4/l4_len given. Returns the length. */
static uint16_t
ip4_build(uint8_t *p, uint32_t src, uint32_t dst, uint8_t proto, const uint8_t *l4, uint16_t l4_len,
	  uint16_t frag)
{
	uint16_t len = (uint16_t)(20 + l4_len);
	uint8_t ph[12];
	uint32_t s;

	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, len);
	put16(p + 4, 0x1234);
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	put32(p + 12, src);
	put32(p + 16, dst);
	put16(p + 10, (uint16_t)~sum16(p, 20, 0));
	memcpy(p + 20, l4, l4_len);
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		uint8_t *ck = p + 20 + (proto == IPPROTO_TCP ? 16 : 6);

		put16(ck, 0);
		memcpy(ph, p + 12, 8);
		ph[8] = 0;
		ph[9] = proto;
		put16(ph + 10, l4_len);
		s = sum16(ph, 12, 0);
		put16(ck, (uint16_t)~sum16(p + 20, l4_len, s));
	}
	return len;
}

static uint16_t
ip6_build(uint8_t *p, const uint8_t *src, const uint8_t *dst, uint8_t nh, const uint8_t *l4,
	  uint16_t l4_len)
{
	uint8_t ph[40];
	uint32_t s;

	memset(p, 0, 40);
	p[0] = 0x60;
	put16(p + 4, l4_len);
	p[6] = nh;
	p[7] = 64;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	memcpy(p + 40, l4, l4_len);
	if (nh == IPPROTO_TCP || nh == IPPROTO_UDP || nh == IPPROTO_ICMPV6) {
		uint8_t *ck = p + 40 + (nh == IPPROTO_TCP ? 16 : nh == IPPROTO_UDP ? 6 : 2);

		put16(ck, 0);
		memcpy(ph, p + 8, 32);
		put32(ph + 32, l4_len);
		memset(ph + 36, 0, 3);
		ph[39] = nh;
		s = sum16(ph, 40, 0);
		put16(ck, (uint16_t)~sum16(p + 40, l4_len, s));
	}
	return (uint16_t)(40 + l4_len);
}

/* UDP header + n payload bytes (checksum filled by the IP builder). */
static uint16_t
udp_build(uint8_t *u, uint16_t n, uint8_t fill)
{
	put16(u, 40000);
	put16(u + 2, 53);
	put16(u + 4, (uint16_t)(8 + n));
	put16(u + 6, 0);
	memset(u + 8, fill, n);
	return (uint16_t)(8 + n);
}

/* TCP header with flags and the given options (olen, multiple of 4 after
 * padding by the caller), and n data bytes. */
static uint16_t
tcp_build(uint8_t *t, uint8_t flags, const uint8_t *opt, uint8_t olen, uint16_t n)
{
	memset(t, 0, 20);
	put16(t, 40001);
	put16(t + 2, 443);
	put32(t + 4, 1000);
	put32(t + 8, flags & 0x10 ? 2000 : 0);
	t[12] = (uint8_t)(((20 + olen) / 4) << 4);
	t[13] = flags;
	put16(t + 14, 65535);
	memcpy(t + 20, opt, olen);
	memset(t + 20 + olen, 0x5a, n);
	return (uint16_t)(20 + olen + n);
}

/* Ethernet + tags + ethertype; returns the header length. */
static uint16_t
eth_build(uint8_t *f, const struct rte_ether_addr *dst, const struct rte_ether_addr *src,
	  uint8_t n_vlan, const uint16_t tpid[2], const uint16_t tci[2], uint16_t type)
{
	uint16_t off = 12;
	unsigned int i;

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	for (i = 0; i < n_vlan; i++) {
		put16(f + off, tpid[i]);
		put16(f + off + 2, tci[i]);
		off += 4;
	}
	put16(f + off, type);
	return (uint16_t)(off + 2);
}

struct tags {
	uint8_t n;
	uint16_t tpid[2], tci[2];
};

static const struct tags untagged = {0, {0, 0}, {0, 0}};
static const struct tags tags_b = {1, {0x8100, 0}, {0x2064, 0}};           /* prio 1, VID 100 */
static const struct tags tags_c = {2, {0x88a8, 0x8100}, {0x00c8, 0x612c}}; /* VIDs 200, 300 */

/*
 * PPPoE session frame from a client: header fields as given (so tests can
 * lie), payload = PPP protocol field (1 or 2 bytes; 0 = none) + data, padded
 * with pad bytes of 0xee after the payload. len_field < 0: the true length.
 */
static uint16_t
pppoe_build(uint8_t *f, const struct rte_ether_addr *src, uint16_t port, const struct tags *t,
	    uint8_t vt, uint8_t code, uint16_t sid, int len_field, uint16_t proto, int proto_len,
	    const uint8_t *data, uint16_t dlen, uint16_t pad)
{
	uint16_t off = eth_build(f, &port_mac[port], src, t->n, t->tpid, t->tci, 0x8864);
	uint16_t plen = 0;
	uint8_t *p = f + off + 6;

	f[off] = vt;
	f[off + 1] = code;
	put16(f + off + 2, sid);
	if (proto_len == 1)
		p[plen++] = (uint8_t)proto;
	else if (proto_len == 2) {
		put16(p, proto);
		plen = 2;
	}
	if (dlen != 0)
		memcpy(p + plen, data, dlen);
	plen = (uint16_t)(plen + dlen);
	put16(f + off + 4, len_field < 0 ? plen : (uint16_t)len_field);
	memset(p + plen, 0xee, pad);
	return (uint16_t)(off + 6 + plen + pad);
}

/* ---- mbufs -------------------------------------------------------------- */

/* A frame in an mbuf chain: segment boundaries at cuts[] (increasing, 0
 * terminated), classified by lib/eth for port. */
static struct rte_mbuf *
mk(const uint8_t *f, uint16_t len, uint16_t port, const uint16_t *cuts)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	struct egw_eth_port ep = {.mac = port_mac[port % 3]};
	uint16_t from = 0, to;
	unsigned int i = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint8_t *d;

		if (m == NULL)
			abort();
		to = cuts != NULL && cuts[i] != 0 && cuts[i] < len ? cuts[i++] : len;
		d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(to - from));
		memcpy(d, f + from, to - from);
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += m->data_len;
		}
		last = m;
		from = to;
	} while (from < len);
	head->port = port;
	if (egw_eth_classify_burst(&ep, &head, 1) != 1)
		abort();
	return head;
}

static struct rte_mbuf *
mk1(const uint8_t *f, uint16_t len, uint16_t port)
{
	return mk(f, len, port, NULL);
}

/* Linear copy of m; returns its length. */
static uint32_t
flat(const struct rte_mbuf *m, uint8_t *buf)
{
	const void *p = rte_pktmbuf_read(m, 0, m->pkt_len, buf);

	if (p != buf)
		memcpy(buf, p, m->pkt_len);
	return m->pkt_len;
}

static bool
same(const struct rte_mbuf *m, const uint8_t *exp, uint32_t len)
{
	static uint8_t buf[16384];

	return m->pkt_len == len && flat(m, buf) == len && memcmp(buf, exp, len) == 0;
}

static void
res_reset(void)
{
	unsigned int i;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		drops_seen[i] += res.drop[i];
	for (i = 0; i < res.n_out; i++)
		rte_pktmbuf_free(res.out[i]);
	for (i = 0; i < res.n_ctrl; i++)
		rte_pktmbuf_free(res.ctrl[i]);
	for (i = 0; i < res.n_pass; i++)
		rte_pktmbuf_free(res.pass[i]);
	for (i = 0; i < res.n_icmp; i++)
		rte_pktmbuf_free(res.icmp[i]);
	memset(&res, 0, sizeof(res));
}

static unsigned int
drops_total(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		n += res.drop[i];
	return n;
}

/* One drop counter of the context, as another thread reads it. */
static uint64_t
ctx_drop(enum egw_pppoe_drop r)
{
	uint64_t d[EGW_PPPOE_DROP_MAX];

	egw_pppoe_ctx_drops(ctx, d);
	return d[r];
}

static void
decap1(struct rte_mbuf *m)
{
	res_reset();
	egw_pppoe_decap_burst(ctx, &m, 1, &res);
}

static void
encap1(struct rte_mbuf *m)
{
	res_reset();
	egw_pppoe_encap_burst(ctx, &m, 1, &res);
}

/* ---- control-path transmit (PADT etc.) ---------------------------------- */

static unsigned int tx_frames;

static void
tx_fn(uint16_t port, struct rte_mbuf *m, void *arg)
{
	(void)port;
	(void)arg;
	tx_frames++;
	rte_pktmbuf_free(m);
}

/* ---- set-up ------------------------------------------------------------- */

static struct pppoe_sess *
sess_new(uint16_t port, const struct rte_ether_addr *mac, const struct tags *t)
{
	rte_be16_t tpid[2] = {rte_cpu_to_be_16(t->tpid[0]), rte_cpu_to_be_16(t->tpid[1])};
	enum pppoe_refuse why;
	struct pppoe_sess *s = pppoe_sess_create(port, mac, t->n, t->tci, tpid, 0, &why);

	CHECK(s != NULL, "pppoe_sess_create refused (%d)", why);
	return s;
}

static void
bind4(struct pppoe_sess *s, uint32_t ip)
{
	s->fp->ip4 = rte_cpu_to_be_32(ip);
	CHECK(pppoe_sess_bind(s, PPPOE_NCP_IP4) == 0, "bind IPv4 sid %u", s->sid);
}

static void
bind6(struct pppoe_sess *s, const uint8_t pfx[8])
{
	memcpy(s->fp->ip6_prefix, pfx, 8);
	CHECK(pppoe_sess_bind(s, PPPOE_NCP_IP6) == 0, "bind IPv6 sid %u", s->sid);
}

static void
setup_sessions(void)
{
	unsigned int cnt[4];

	sa = sess_new(0, &mac_a, &untagged);
	sb = sess_new(0, &mac_b, &tags_b);
	sc = sess_new(0, &mac_c, &tags_c);
	sd = sess_new(0, &mac_d, &untagged);
	sn = sess_new(0, &mac_n, &untagged);
	if (sa == NULL || sb == NULL || sc == NULL || sd == NULL || sn == NULL)
		abort();
	sid_a = sa->sid;
	sid_b = sb->sid;
	sid_c = sc->sid;
	sid_d = sd->sid;
	sid_n = sn->sid;
	/* FIFO from a fresh table: 1, 2, 3, ... */
	CHECK(sid_a == 1 && sid_b == 2 && sid_c == 3 && sid_d == 4 && sid_n == 5,
	      "ids %u %u %u %u %u", sid_a, sid_b, sid_c, sid_d, sid_n);
	CHECK(egw_pppoe_active() == 0, "active before any bind");
	bind4(sa, IP_A);
	bind6(sa, pfx_a);
	bind4(sb, IP_B);
	bind4(sc, IP_C);
	bind6(sc, pfx_c);
	bind6(sd, pfx_d);
	CHECK(egw_pppoe_active() == 1, "active once bound");
	CHECK(sa->state == EGW_PPPOE_S_BOUND && sn->state == EGW_PPPOE_S_NEGOTIATING,
	      "states %d %d", sa->state, sn->state);
	CHECK(egw_pppoe_session_count(cnt) == 5 && cnt[EGW_PPPOE_S_BOUND] == 4 &&
		      cnt[EGW_PPPOE_S_NEGOTIATING] == 1,
	      "session counts %u bound %u negotiating", cnt[EGW_PPPOE_S_BOUND],
	      cnt[EGW_PPPOE_S_NEGOTIATING]);
	/* a second session cannot take A's address: -EEXIST, routes unchanged */
	sn->fp->ip4 = rte_cpu_to_be_32(IP_A);
	CHECK(pppoe_sess_bind(sn, PPPOE_NCP_IP4) == -EEXIST, "duplicate address refused");
	CHECK(pppoe_route4_lookup(rte_cpu_to_be_32(IP_A)) == sa->fp, "route of A kept");
	CHECK(sn->state == EGW_PPPOE_S_NEGOTIATING && sn->fp->ncp == 0, "N still negotiating");
	sn->fp->ip4 = rte_cpu_to_be_32(IP_N);
}

/* ---- decap tests -------------------------------------------------------- */

static uint8_t fr[FRAME_MAX], ipb[FRAME_MAX], l4b[FRAME_MAX], exp_[FRAME_MAX];

/* What a decapsulated frame must be: Ethernet (dst = port, src = client),
 * ethertype, the IP packet. */
static uint16_t
exp_decap(uint8_t *e, uint16_t port, const struct rte_ether_addr *src, uint16_t type,
	  const uint8_t *ip, uint16_t ip_len)
{
	uint16_t off = eth_build(e, &port_mac[port], src, 0, NULL, NULL, type);

	memcpy(e + off, ip, ip_len);
	return (uint16_t)(off + ip_len);
}

static uint16_t
ip4_udp(uint8_t *ip, uint32_t src, uint32_t dst, uint16_t n)
{
	uint16_t l = udp_build(l4b, n, 0x33);

	return ip4_build(ip, src, dst, IPPROTO_UDP, l4b, l, 0);
}

static uint16_t
ip6_udp(uint8_t *ip, const uint8_t *src, const uint8_t *dst, uint16_t n)
{
	uint16_t l = udp_build(l4b, n, 0x66);

	return ip6_build(ip, src, dst, IPPROTO_UDP, l4b, l);
}

static void
addr6(uint8_t *a, const uint8_t pfx[8], uint8_t iid_last)
{
	memcpy(a, pfx, 8);
	memset(a + 8, 0, 8);
	a[15] = iid_last;
}

static uint64_t rx_a; /* frames of A decapsulated so far */

static void
test_decap_good(void)
{
	uint8_t a6[16];
	uint16_t il, fl, el;
	struct rte_mbuf *m;

	/* IPv4, untagged, 2-byte protocol */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 100);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);
	CHECK(res.n_out == 1 && res.n_ctrl == 0 && drops_total() == 0, "v4: out %u ctrl %u",
	      res.n_out, res.n_ctrl);
	if (res.n_out == 1) {
		struct rte_mbuf *o = res.out[0];
		struct egw_eth_meta *mt = egw_eth_meta(o);

		CHECK(same(o, exp_, el), "v4: decapsulated bytes");
		CHECK(o->l2_len == 14 && mt->cls == EGW_ETH_CLS_IPV4 && mt->n_vlan == 0 &&
			      mt->proto == rte_cpu_to_be_16(0x0800) &&
			      o->packet_type ==
				      (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT_UNKNOWN),
		      "v4: metadata l2 %u cls %u ptype %x", o->l2_len, mt->cls, o->packet_type);
	}
	rx_a++;

	/* IPv6 */
	addr6(a6, pfx_a, 0x42);
	il = ip6_udp(ipb, a6, server6, 200);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IPV6, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_a, 0x86dd, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "v6: decapsulated bytes");
	CHECK(res.n_out == 1 && egw_eth_meta(res.out[0])->cls == EGW_ETH_CLS_IPV6 &&
		      res.out[0]->packet_type ==
			      (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN),
	      "v6: metadata");
	rx_a++;

	/* RFC 1661 PFC: protocol 0x21 in one byte */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 33);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, 0x21, 1, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "PFC v4: decapsulated bytes");
	rx_a++;
	/* and IPv6 as 0x57 */
	il = ip6_udp(ipb, a6, server6, 7);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, 0x57, 1, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_a, 0x86dd, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "PFC v6: decapsulated bytes");
	rx_a++;

	/* Ethernet padding: 28-byte IPv4 in a 60-byte frame, trimmed away */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 0);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 10);
	CHECK(fl == 60, "padded frame is %u bytes", fl);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "padding trimmed (%u bytes left)",
	      res.n_out ? res.out[0]->pkt_len : 0);
	rx_a++;

	/* bytes inside the PPPoE length but behind the IP packet go too */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 4);
	memset(ipb + il, 0x77, 6);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb,
			 (uint16_t)(il + 6), 0);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "IP total length trims the rest");
	rx_a++;

	/* 802.1Q: tags removed */
	il = ip4_udp(ipb, IP_B, IP_SERVER, 64);
	fl = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, sid_b, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	CHECK(m->vlan_tci == 0x2064 && (m->ol_flags & RTE_MBUF_F_RX_VLAN), "classified tag");
	decap1(m);
	el = exp_decap(exp_, 0, &mac_b, 0x0800, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "802.1Q: decapsulated bytes");
	CHECK(res.n_out == 1 &&
		      (res.out[0]->ol_flags & (RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_QINQ)) == 0 &&
		      res.out[0]->vlan_tci == 0 && egw_eth_meta(res.out[0])->n_vlan == 0,
	      "802.1Q: VLAN flags cleared");

	/* QinQ */
	addr6(a6, pfx_c, 9);
	il = ip6_udp(ipb, a6, server6, 64);
	fl = pppoe_build(fr, &mac_c, 0, &tags_c, 0x11, 0, sid_c, -1, PPP_IPV6, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	el = exp_decap(exp_, 0, &mac_c, 0x86dd, ipb, il);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "QinQ: decapsulated bytes");
	CHECK(res.n_out == 1 && res.out[0]->packet_type ==
					(RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT_UNKNOWN),
	      "QinQ: packet type");
	res_reset();
}

static void
test_decap_multiseg(void)
{
	static const uint16_t cuts1[] = {40, 100, 0};
	static const uint16_t cuts2[] = {16, 0}; /* PPPoE header split */
	static const uint16_t cuts3[] = {20, 23, 0};
	static const uint16_t cuts_pad[] = {48, 58, 0}; /* last segment: padding only */
	uint16_t il, fl, el;
	struct rte_mbuf *m;

	il = ip4_udp(ipb, IP_A, IP_SERVER, 300);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);

	decap1(mk(fr, fl, 0, cuts1));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "3 segments: bytes");
	rx_a++;
	decap1(mk(fr, fl, 0, cuts2));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "PPPoE header split: bytes");
	rx_a++;
	decap1(mk(fr, fl, 0, cuts3));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "protocol field split: bytes");
	rx_a++;

	/* 28-byte packet padded to 60 bytes; the last segment holds only
	 * padding and must go */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 0);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 10);
	el = exp_decap(exp_, 0, &mac_a, 0x0800, ipb, il);
	m = mk(fr, fl, 0, cuts_pad);
	CHECK(m->nb_segs == 3, "padding chain has %u segments", m->nb_segs);
	decap1(m);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "padding over segments: bytes");
	CHECK(res.n_out == 1 && res.out[0]->nb_segs == 2, "padding segment freed (%u left)",
	      res.n_out ? res.out[0]->nb_segs : 0);
	rx_a++;
	res_reset();
}

struct bad_case {
	const char *name;
	uint16_t port;
	const struct rte_ether_addr *src;
	const struct tags *tags;
	uint8_t vt, code;
	int sid; /* -1: A's */
	int len_field;
	uint16_t proto;
	int proto_len;
	uint16_t dlen;
	enum egw_pppoe_drop why;
};

static void
test_decap_bad(void)
{
	static const struct tags wrong_vid = {1, {0x8100, 0}, {0x2065, 0}};
	static const struct tags wrong_inner = {2, {0x88a8, 0x8100}, {0x00c8, 0x012d}};
	const struct bad_case cases[] = {
		{"length 0", 0, &mac_a, &untagged, 0x11, 0, -1, 0, 0, 0, 0,
		 EGW_PPPOE_DROP_SHORT_PAYLOAD},
		{"length 1", 0, &mac_a, &untagged, 0x11, 0, -1, 1, 0x21, 1, 0,
		 EGW_PPPOE_DROP_SHORT_PAYLOAD},
		{"length 1, 2-byte protocol", 0, &mac_a, &untagged, 0x11, 0, -1, 1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_SHORT_PAYLOAD},
		{"length past the frame", 0, &mac_a, &untagged, 0x11, 0, -1, 200, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_LENGTH},
		{"length one past the frame", 0, &mac_a, &untagged, 0x11, 0, -1, 23, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_LENGTH},
		{"length 0xffff", 0, &mac_a, &untagged, 0x11, 0, -1, 0xffff, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_LENGTH},
		{"version 2", 0, &mac_a, &untagged, 0x21, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_HEADER},
		{"type 2", 0, &mac_a, &untagged, 0x12, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_HEADER},
		{"code PADI", 0, &mac_a, &untagged, 0x11, 0x09, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_HEADER},
		{"code PADT", 0, &mac_a, &untagged, 0x11, 0xa7, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_BAD_HEADER},
		{"sid 0", 0, &mac_a, &untagged, 0x11, 0, 0, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"sid 0xffff", 0, &mac_a, &untagged, 0x11, 0, 0xffff, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"sid past the table", 0, &mac_a, &untagged, 0x11, 0, TABLE + 1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"sid free", 0, &mac_a, &untagged, 0x11, 0, TABLE, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"A's sid, B's MAC", 0, &mac_b, &untagged, 0x11, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"A's sid, other access port", 1, &mac_a, &untagged, 0x11, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"A's sid, tagged", 0, &mac_a, &tags_b, 0x11, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"B's sid, wrong VID", 0, &mac_b, &wrong_vid, 0x11, 0, 2, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"B's sid, untagged", 0, &mac_b, &untagged, 0x11, 0, 2, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"C's sid, wrong inner VID", 0, &mac_c, &wrong_inner, 0x11, 0, 3, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"C's sid, one tag", 0, &mac_c, &tags_b, 0x11, 0, 3, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_UNKNOWN_SESSION},
		{"not an access port", 2, &mac_a, &untagged, 0x11, 0, -1, -1, PPP_IP, 2, 20,
		 EGW_PPPOE_DROP_NOT_ACCESS},
	};
	uint8_t data[64];
	unsigned int i;
	uint16_t fl;

	ip4_udp(data, IP_A, IP_SERVER, 0); /* 28 bytes; dlen picks how much */
	for (i = 0; i < RTE_DIM(cases); i++) {
		const struct bad_case *b = &cases[i];
		uint16_t sid = b->sid < 0 ? sid_a : (uint16_t)b->sid;
		uint64_t before[EGW_PPPOE_DROP_MAX], after[EGW_PPPOE_DROP_MAX];

		egw_pppoe_ctx_drops(ctx, before);
		fl = pppoe_build(fr, b->src, b->port, b->tags, b->vt, b->code, sid, b->len_field,
				 b->proto, b->proto_len, data, b->dlen, 0);
		decap1(mk1(fr, fl, b->port));
		egw_pppoe_ctx_drops(ctx, after);
		CHECK(res.n_out == 0 && res.n_ctrl == 0 && res.drop[b->why] == 1 &&
			      drops_total() == 1 && after[b->why] == before[b->why] + 1,
		      "%s: out %u ctrl %u, drop %s = %u (total %u)", b->name, res.n_out, res.n_ctrl,
		      egw_pppoe_drop_name(b->why), res.drop[b->why], drops_total());
	}

	/* a frame shorter than the PPPoE header */
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, 0, 0, 0, NULL, 0, 0);
	decap1(mk1(fr, (uint16_t)(fl - 3), 0));
	CHECK(res.drop[EGW_PPPOE_DROP_BAD_HEADER] == 1, "truncated PPPoE header");
	res_reset();
}

/* Inner IP that is not what it says: BAD_INNER. */
static void
test_decap_bad_inner(void)
{
	uint8_t a6[16];
	uint16_t il, fl;
	unsigned int i;

	for (i = 0; i < 7; i++) {
		uint16_t proto = i < 4 ? PPP_IP : PPP_IPV6;
		const char *name = "";

		if (proto == PPP_IP)
			il = ip4_udp(ipb, IP_A, IP_SERVER, 20);
		else {
			addr6(a6, pfx_a, 1);
			il = ip6_udp(ipb, a6, server6, 20);
		}
		switch (i) {
		case 0:
			ipb[0] = 0x55; /* version 5 */
			name = "IPv4 version 5";
			break;
		case 1:
			ipb[0] = 0x44; /* IHL 4 */
			name = "IPv4 IHL 4";
			break;
		case 2:
			put16(ipb + 2, (uint16_t)(il + 1)); /* one past the payload */
			name = "IPv4 total length past the payload";
			break;
		case 3:
			il = 19; /* shorter than a header */
			name = "IPv4 19 bytes";
			break;
		case 4:
			put16(ipb + 4, (uint16_t)(il - 40 + 1));
			name = "IPv6 payload length past the payload";
			break;
		case 5:
			ipb[0] = 0x40;
			name = "IPv6 version 4";
			break;
		case 6:
			il = 39;
			name = "IPv6 39 bytes";
			break;
		}
		fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, proto, 2, ipb, il,
				 0);
		decap1(mk1(fr, fl, 0));
		CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_BAD_INNER] == 1, "%s: bad inner",
		      name);
	}
	res_reset();
}

static void
test_decap_ctrl(void)
{
	static const uint16_t ctrl_protos[] = {
		PPP_LCP, PPP_PAP, PPP_CHAP, PPP_IPCP, PPP_IPV6CP, 0x0023 /* OSI, not negotiated */,
		0x80fd};
	struct rte_mbuf *in[8], *m;
	uint8_t lcp[8] = {9, 1, 0, 8, 0xde, 0xad, 0xbe, 0xef}; /* Echo-Request */
	uint8_t a6[16], icmp[16];
	uint16_t il, fl;
	unsigned int i;

	/* bound session: control protocols go to the control path unchanged */
	for (i = 0; i < RTE_DIM(ctrl_protos); i++) {
		fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, ctrl_protos[i], 2,
				 lcp, sizeof(lcp), 0);
		m = mk1(fr, fl, 0);
		decap1(m);
		CHECK(res.n_ctrl == 1 && res.ctrl[0] == m && res.n_out == 0 && same(m, fr, fl),
		      "bound, protocol 0x%04x: to control unchanged", ctrl_protos[i]);
	}
	/* ICMPv6 router solicitation to control; an echo request decapsulated */
	addr6(a6, (const uint8_t[8]){0xfe, 0x80, 0, 0, 0, 0, 0, 0}, 0x10);
	memset(icmp, 0, sizeof(icmp));
	icmp[0] = 133;
	il = ip6_build(ipb, a6, (const uint8_t[16]){0xff, 2, [15] = 2}, IPPROTO_ICMPV6, icmp, 8);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IPV6, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_ctrl == 1 && res.ctrl[0] == m && same(m, fr, fl), "router solicitation: ctrl");
	/* the same solicitation's source is link-local: as data it is not forwarded */
	icmp[0] = 128;
	il = ip6_build(ipb, a6, server6, IPPROTO_ICMPV6, icmp, 16);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IPV6, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 0 && res.n_ctrl == 0 && res.drop[EGW_PPPOE_DROP_SPOOFED] == 1,
	      "link-local source: dropped as spoofed");
	addr6(a6, pfx_a, 0x10);
	il = ip6_build(ipb, a6, server6, IPPROTO_ICMPV6, icmp, 16);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IPV6, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 1 && res.n_ctrl == 0, "echo request: decapsulated");
	rx_a++;

	/* anti-spoofing: another session's address, one outside the /64, one
	 * bit off; each dropped with its reason, nothing else changes */
	{
		static const struct {
			uint32_t src4;
			uint8_t pfx6[8];
			bool v6;
		} sp[] = {
			{IP_B, {0}, false},
			{IP_SERVER, {0}, false},
			{IP_A ^ 1, {0}, false},
			{0, {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 3}, true},
			{0, {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0x80, 2}, true},
			{0, {0xfe, 0x80, 0, 0, 0, 0, 0, 0}, true},
		};

		for (i = 0; i < RTE_DIM(sp); i++) {
			uint64_t before = ctx_drop(EGW_PPPOE_DROP_SPOOFED);

			if (sp[i].v6) {
				addr6(a6, sp[i].pfx6, 1);
				il = ip6_udp(ipb, a6, server6, 10);
			} else {
				il = ip4_udp(ipb, sp[i].src4, IP_SERVER, 10);
			}
			fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1,
					 sp[i].v6 ? PPP_IPV6 : PPP_IP, 2, ipb, il, 0);
			decap1(mk1(fr, fl, 0));
			CHECK(res.n_out == 0 && res.n_ctrl == 0 &&
				      res.drop[EGW_PPPOE_DROP_SPOOFED] == 1 &&
				      ctx_drop(EGW_PPPOE_DROP_SPOOFED) == before + 1,
			      "spoofed source %u: dropped and counted", i);
		}
	}

	/* data for an NCP that is not open: held on the data path (the NCP
	 * may be opening), never to control; dropped as ncp_not_open when
	 * the caller flushes (or after 1 s) */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_d, 0, &untagged, 0x11, 0, sid_d, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_ctrl == 0 && res.n_out == 0 && res.drop[EGW_PPPOE_DROP_NCP_NOT_OPEN] == 1 &&
		      egw_pppoe_ctx_held(ctx) == 0,
	      "IPv4 to IPv6-only, no IPCP Ack seen: dropped as ncp_not_open");
	/* behind the peer's IPCP Configure-Ack while our IPCP is not in
	 * Ack-Sent (the Ack does not open it): dropped */
	fl = pppoe_build(fr, &mac_d, 0, &untagged, 0x11, 0, sid_d, -1, PPP_IPCP, 2, ncp_ack,
			 sizeof(ncp_ack), 0);
	decap1(mk1(fr, fl, 0));
	il = ip4_udp(ipb, IP_A, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_d, 0, &untagged, 0x11, 0, sid_d, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.drop[EGW_PPPOE_DROP_NCP_NOT_OPEN] == 1 && egw_pppoe_ctx_held(ctx) == 0,
	      "behind an IPCP Ack that does not open IPCP: dropped");
	/* behind the peer's IPCP Configure-Ack in Ack-Sent: held */
	pppoe_sess_ncp_acksent(sd, PPPOE_NCP_IP4, true);
	fl = pppoe_build(fr, &mac_d, 0, &untagged, 0x11, 0, sid_d, -1, PPP_IPCP, 2, ncp_ack,
			 sizeof(ncp_ack), 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_ctrl == 1 && res.ctrl_up[0] == 1, "IPCP Ack of a bound session: control, up");
	il = ip4_udp(ipb, IP_A, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_d, 0, &untagged, 0x11, 0, sid_d, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_ctrl == 0 && res.n_out == 0 && egw_pppoe_ctx_held(ctx) == 1,
	      "IPv4 to IPv6-only behind an IPCP Ack: held");
	addr6(a6, pfx_d, 1);
	pppoe_sess_ncp_acksent(sb, PPPOE_NCP_IP6, true);
	fl = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, sid_b, -1, PPP_IPV6CP, 2, ncp_ack,
			 sizeof(ncp_ack), 0);
	decap1(mk1(fr, fl, 0));
	il = ip6_udp(ipb, server6, a6, 10);
	fl = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, sid_b, -1, PPP_IPV6, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_ctrl == 0 && res.n_out == 0 && egw_pppoe_ctx_held(ctx) == 2,
	      "IPv6 to IPv4-only behind an IPv6CP Ack: held");
	{
		uint64_t before = ctx_drop(EGW_PPPOE_DROP_NCP_NOT_OPEN);

		res_reset();
		egw_pppoe_ctx_poll(ctx, 0, false, &res);
		CHECK(res.n_out == 0 && egw_pppoe_ctx_held(ctx) == 2, "still held before 1 s");
		egw_pppoe_ctx_poll(ctx, 1, true, &res);
		CHECK(egw_pppoe_ctx_held(ctx) == 2, "a flush of another port leaves them");
		egw_pppoe_ctx_poll(ctx, 0, true, &res);
		CHECK(egw_pppoe_ctx_held(ctx) == 0 && res.drop[EGW_PPPOE_DROP_NCP_NOT_OPEN] == 2 &&
			      ctx_drop(EGW_PPPOE_DROP_NCP_NOT_OPEN) == before + 2,
		      "flushed: dropped as ncp_not_open");
		res_reset();
		pppoe_sess_ncp_acksent(sd, PPPOE_NCP_IP4, false);
		pppoe_sess_ncp_acksent(sb, PPPOE_NCP_IP6, false);
	}

	/* negotiating: control frames to control, data held, in arrival
	 * order, interleaved with a bound session's frames that keep theirs;
	 * once the NCP opens, the held data leaves first, in order */
	res_reset();
	/* the peer's IPCP Ack first (our IPCP in Ack-Sent): N's data behind
	 * it may be legitimate */
	pppoe_sess_ncp_acksent(sn, PPPOE_NCP_IP4, true);
	fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_IPCP, 2, ncp_ack,
			 sizeof(ncp_ack), 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_ctrl == 1 && res.ctrl_up[0] == 0, "IPCP Ack of a session negotiating: control");
	res_reset();
	for (i = 0; i < 8; i++) {
		bool neg = i % 3 != 1;

		il = ip4_udp(ipb, neg ? IP_N : IP_A, IP_SERVER, 10);
		if (neg && i == 3)
			fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_LCP, 2,
					 lcp, sizeof(lcp), 0);
		else
			fl = pppoe_build(fr, neg ? &mac_n : &mac_a, 0, &untagged, 0x11, 0,
					 neg ? sid_n : sid_a, -1, PPP_IP, 2, ipb, il, 0);
		in[i] = mk1(fr, fl, 0);
	}
	egw_pppoe_decap_burst(ctx, in, 8, &res);
	CHECK(res.n_ctrl == 1 && res.n_out == 3 && egw_pppoe_ctx_held(ctx) == 4,
	      "negotiating burst: ctrl %u out %u held %u", res.n_ctrl, res.n_out,
	      egw_pppoe_ctx_held(ctx));
	if (res.n_ctrl == 1 && res.n_out == 3) {
		CHECK(res.ctrl[0] == in[3] && res.ctrl_up[0] == 0,
		      "negotiating: LCP to control, not a bound session's");
		CHECK(res.out[0] == in[1] && res.out[1] == in[4] && res.out[2] == in[7],
		      "bound frames in order");
	}
	rx_a += 3;
	res_reset();
	/* the NCP opens: the next burst gets the held frames first, then its own */
	bind4(sn, IP_N);
	il = ip4_udp(ipb, IP_N, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_out == 5 && egw_pppoe_ctx_held(ctx) == 0, "after the bind: %u out, %u held",
	      res.n_out, egw_pppoe_ctx_held(ctx));
	if (res.n_out == 5)
		CHECK(res.out[0] == in[0] && res.out[1] == in[2] && res.out[2] == in[5] &&
			      res.out[3] == in[6] && res.out[4] == m,
		      "the held frames in arrival order, then the new one");
	res_reset();
	/* and by the poll alone, without a new frame */
	pppoe_sess_unbind(sn, PPPOE_NCP_IP4);
	for (i = 0; i < 3; i++) {
		fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_IP, 2, ipb, il,
				 0);
		in[i] = mk1(fr, fl, 0);
	}
	egw_pppoe_decap_burst(ctx, in, 3, &res);
	CHECK(res.n_out == 0 && egw_pppoe_ctx_held(ctx) == 3, "unbound again: held");
	bind4(sn, IP_N);
	res_reset();
	egw_pppoe_ctx_poll(ctx, 0, false, &res);
	CHECK(res.n_out == 3 && res.out[0] == in[0] && res.out[1] == in[1] && res.out[2] == in[2],
	      "the poll releases them in order");
	res_reset();
	pppoe_sess_unbind(sn, PPPOE_NCP_IP4);

	/* bursts of 19 and 30 behind the Ack, the NCP opening before or after
	 * the second: 49 frames out in arrival order either way */
	for (i = 0; i < 2; i++) {
		struct rte_mbuf *all[49];
		unsigned int j, k, n_ok = 0;

		fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_IPCP, 2, ncp_ack,
				 sizeof(ncp_ack), 0);
		decap1(mk1(fr, fl, 0));
		res_reset();
		for (j = 0; j < 49; j++) {
			fl = pppoe_build(fr, &mac_n, 0, &untagged, 0x11, 0, sid_n, -1, PPP_IP, 2,
					 ipb, il, 0);
			all[j] = mk1(fr, fl, 0);
		}
		egw_pppoe_decap_burst(ctx, all, 19, &res);
		k = res.n_out;
		if (i == 0)
			bind4(sn, IP_N);
		egw_pppoe_decap_burst(ctx, all + 19, 30, &res);
		if (i == 1) {
			bind4(sn, IP_N);
			egw_pppoe_ctx_poll(ctx, 0, false, &res);
		}
		for (j = 0; j < res.n_out && j < 49; j++)
			n_ok += res.out[j] == all[j];
		CHECK(k == 0 && res.n_out == 49 && n_ok == 49,
		      "two bursts, NCP opening %s the second: %u out (%u in order)",
		      i == 0 ? "before" : "after", res.n_out, n_ok);
		res_reset();
		pppoe_sess_unbind(sn, PPPOE_NCP_IP4);
	}
}

/* ---- MSS clamp ------------------------------------------------------------ */

struct mss_case {
	const char *name;
	uint8_t fam; /* 4 or 6: that family only; 0: both */
	uint8_t flags;
	uint8_t opt[40];
	uint8_t olen;
	uint16_t frag;
	bool changed;
	uint16_t off; /* offset in the options of the MSS value, if changed */
};

static void
test_mss(void)
{
	/* A's MRU is 1492: IPv4 clamp 1452, IPv6 1432 (RFC 4638 / RFC 879) */
	const struct mss_case cases[] = {
		{"SYN MSS 1460", 0, 0x02, {2, 4, 0x05, 0xb4}, 4, 0, true, 2},
		{"SYN-ACK MSS 1460", 0, 0x12, {2, 4, 0x05, 0xb4}, 4, 0, true, 2},
		{"SYN MSS 1452 (equal)", 4, 0x02, {2, 4, 0x05, 0xac}, 4, 0, false, 0},
		{"SYN MSS 1432 (equal)", 6, 0x02, {2, 4, 0x05, 0x98}, 4, 0, false, 0},
		{"SYN MSS 536 (smaller)", 0, 0x02, {2, 4, 0x02, 0x18}, 4, 0, false, 0},
		{"ACK with MSS 1460", 0, 0x10, {2, 4, 0x05, 0xb4}, 4, 0, false, 0},
		{"SYN, NOP then MSS (odd offset)",
		 0,
		 0x02,
		 {1, 2, 4, 0x05, 0xb4, 1, 1, 1},
		 8,
		 0,
		 true,
		 3},
		{"SYN, SACK-perm, TS, then MSS",
		 0,
		 0x02,
		 {4, 2, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 2, 4, 0x23, 0x28},
		 16,
		 0,
		 true,
		 14},
		{"SYN, option length 0", 0, 0x02, {3, 0, 2, 4, 0x05, 0xb4, 0, 0}, 8, 0, false, 0},
		{"SYN, option length 1", 0, 0x02, {3, 1, 2, 4, 0x05, 0xb4, 0, 0}, 8, 0, false, 0},
		{"SYN, option past the header",
		 0,
		 0x02,
		 {1, 1, 1, 8, 2, 4, 0x05, 0xb4},
		 8,
		 0,
		 false,
		 0},
		{"SYN, MSS cut by the header end", 0, 0x02, {1, 1, 2, 4}, 4, 0, false, 0},
		{"SYN, MSS length 3", 0, 0x02, {2, 3, 0x05, 0xb4}, 4, 0, false, 0},
		{"SYN, EOL before MSS", 0, 0x02, {0, 0, 0, 0, 2, 4, 0x05, 0xb4}, 8, 0, false, 0},
		{"SYN, no options", 0, 0x02, {0}, 0, 0, false, 0},
		{"SYN, MF fragment", 0, 0x02, {2, 4, 0x05, 0xb4}, 4, 0x2000, false, 0},
		{"SYN, DF set", 0, 0x02, {2, 4, 0x05, 0xb4}, 4, 0x4000, true, 2},
	};
	uint8_t a6[16];
	unsigned int i, v6;
	uint16_t tl, il, fl, el, clamp;

	for (v6 = 0; v6 < 2; v6++) {
		for (i = 0; i < RTE_DIM(cases); i++) {
			const struct mss_case *k = &cases[i];
			uint8_t *o;

			if ((v6 && (k->frag != 0 || k->fam == 4)) || (!v6 && k->fam == 6))
				continue;
			tl = tcp_build(l4b, k->flags, k->opt, k->olen, 10);
			if (v6) {
				addr6(a6, pfx_a, 5);
				il = ip6_build(ipb, a6, server6, IPPROTO_TCP, l4b, tl);
			} else {
				il = ip4_build(ipb, IP_A, IP_SERVER, IPPROTO_TCP, l4b, tl, k->frag);
			}
			fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1,
					 v6 ? PPP_IPV6 : PPP_IP, 2, ipb, il, 0);
			decap1(mk1(fr, fl, 0));
			rx_a++;
			el = exp_decap(exp_, 0, &mac_a, v6 ? 0x86dd : 0x0800, ipb, il);
			if (res.n_out != 1) {
				CHECK(0, "%s %s: not decapsulated", v6 ? "v6" : "v4", k->name);
				continue;
			}
			o = rte_pktmbuf_mtod(res.out[0], uint8_t *);
			if (!k->changed) {
				CHECK(same(res.out[0], exp_, el), "%s %s: untouched",
				      v6 ? "v6" : "v4", k->name);
				continue;
			}
			clamp = v6 ? 1432 : 1452;
			/* the expected packet: the value replaced, checksum from
			 * the library must verify over the whole segment */
			put16(exp_ + 14 + (v6 ? 40 : 20) + 20 + k->off, clamp);
			CHECK(memcmp(o, exp_, (size_t)14 + (v6 ? 40 : 20) + 16) == 0 &&
				      memcmp(o + 14 + (v6 ? 40 : 20) + 18,
					     exp_ + 14 + (v6 ? 40 : 20) + 18,
					     el - 14 - (v6 ? 40 : 20) - 18) == 0,
			      "%s %s: MSS %u", v6 ? "v6" : "v4", k->name,
			      get16(o + 14 + (v6 ? 40 : 20) + 20 + k->off));
			CHECK(l4_cksum_ok(o + 14), "%s %s: TCP checksum verifies", v6 ? "v6" : "v4",
			      k->name);
		}
	}
	res_reset();
}

/* ---- encap -------------------------------------------------------------- */

/* A downstream frame from the uplink router to a subscriber address. */
static uint16_t
down4(uint8_t *f, uint32_t dst, uint16_t udp_n, uint16_t pad)
{
	uint16_t off = eth_build(f, &port_mac[1], &mac_up, 0, NULL, NULL, 0x0800);
	uint16_t il = ip4_udp(f + off, IP_SERVER, dst, udp_n);

	memset(f + off + il, 0xee, pad);
	return (uint16_t)(off + il + pad);
}

static uint16_t
down6(uint8_t *f, const uint8_t *dst, uint16_t udp_n)
{
	uint16_t off = eth_build(f, &port_mac[1], &mac_up, 0, NULL, NULL, 0x86dd);

	return (uint16_t)(off + ip6_udp(f + off, server6, dst, udp_n));
}

/* The PPPoE frame a subscriber must receive. */
static uint16_t
exp_encap(uint8_t *e, const struct rte_ether_addr *client, const struct tags *t, uint16_t sid,
	  uint16_t proto, const uint8_t *ip, uint16_t il)
{
	uint16_t off = eth_build(e, client, &port_mac[0], t->n, t->tpid, t->tci, 0x8864);

	e[off] = 0x11;
	e[off + 1] = 0;
	put16(e + off + 2, sid);
	put16(e + off + 4, (uint16_t)(il + 2));
	put16(e + off + 6, proto);
	memcpy(e + off + 8, ip, il);
	return (uint16_t)(off + 8 + il);
}

static uint64_t tx_a;

static void
test_encap(void)
{
	uint16_t fl, el, il;
	uint8_t a6[16];
	struct rte_mbuf *m, *in[6];
	unsigned int i;

	/* IPv4 to A */
	fl = down4(fr, IP_A, 100, 0);
	m = mk1(fr, fl, 1);
	encap1(m);
	el = exp_encap(exp_, &mac_a, &untagged, sid_a, PPP_IP, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && res.out_port[0] == 0 && same(res.out[0], exp_, el),
	      "encap v4 to A: bytes (out %u pass %u)", res.n_out, res.n_pass);
	if (res.n_out == 1) {
		struct egw_eth_meta *mt = egw_eth_meta(res.out[0]);

		CHECK(res.out[0]->l2_len == 14 && mt->cls == EGW_ETH_CLS_PPPOE_SESS &&
			      res.out[0]->packet_type == RTE_PTYPE_L2_ETHER_PPPOE,
		      "encap v4: metadata");
	}
	tx_a++;

	/* IPv6 to A's /64 */
	addr6(a6, pfx_a, 0x99);
	fl = down6(fr, a6, 50);
	encap1(mk1(fr, fl, 1));
	el = exp_encap(exp_, &mac_a, &untagged, sid_a, PPP_IPV6, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "encap v6 to A: bytes");
	tx_a++;

	/* 802.1Q: the template carries the tag with its priority */
	fl = down4(fr, IP_B, 10, 0);
	encap1(mk1(fr, fl, 1));
	el = exp_encap(exp_, &mac_b, &tags_b, sid_b, PPP_IP, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "encap 802.1Q: bytes");
	CHECK(res.n_out == 1 && res.out[0]->l2_len == 18 &&
		      res.out[0]->packet_type == RTE_PTYPE_L2_ETHER_VLAN &&
		      res.out[0]->vlan_tci == 0x2064,
	      "encap 802.1Q: metadata");

	/* QinQ with both TPIDs */
	addr6(a6, pfx_c, 0x77);
	fl = down6(fr, a6, 10);
	encap1(mk1(fr, fl, 1));
	el = exp_encap(exp_, &mac_c, &tags_c, sid_c, PPP_IPV6, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "encap QinQ: bytes");

	/* Ethernet padding of a short downstream frame is not sent on */
	fl = down4(fr, IP_A, 0, 18);
	CHECK(fl == 60, "padded downstream frame %u", fl);
	encap1(mk1(fr, fl, 1));
	el = exp_encap(exp_, &mac_a, &untagged, sid_a, PPP_IP, fr + 14, 28);
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "encap: padding trimmed");
	tx_a++;

	/* not for a session: passed, unchanged, in order; the negotiating
	 * session has an address but no route; D has no IPv4 */
	{
		uint32_t dsts[6] = {IP4(100, 64, 0, 99), IP_A, IP_N, IP_SERVER, IP_B, 0};
		uint8_t frames[6][128];
		uint16_t lens[6];

		res_reset();
		for (i = 0; i < 5; i++) {
			lens[i] = down4(frames[i], dsts[i], (uint16_t)i, 0);
			in[i] = mk1(frames[i], lens[i], 1);
		}
		addr6(a6, pfx_d, 3);
		memcpy(a6, (const uint8_t[8]){0x20, 0x01, 0x0d, 0xb8, 0, 9, 0, 9}, 8);
		lens[5] = down6(frames[5], a6, 3);
		in[5] = mk1(frames[5], lens[5], 1);
		egw_pppoe_encap_burst(ctx, in, 6, &res);
		CHECK(res.n_out == 2 && res.n_pass == 4, "mixed burst: out %u pass %u", res.n_out,
		      res.n_pass);
		if (res.n_out == 2 && res.n_pass == 4) {
			CHECK(res.out[0] == in[1] && res.out[1] == in[4] && res.out_port[0] == 0 &&
				      res.out_port[1] == 0,
			      "mixed burst: session frames in order");
			CHECK(res.pass[0] == in[0] && res.pass[1] == in[2] &&
				      res.pass[2] == in[3] && res.pass[3] == in[5],
			      "mixed burst: passed in order");
			CHECK(same(in[0], frames[0], lens[0]) && same(in[2], frames[2], lens[2]) &&
				      same(in[5], frames[5], lens[5]),
			      "passed frames unchanged");
		}
		tx_a++;
	}

	/* a burst of 100 frames (more than one bulk lookup of 64) */
	{
		struct rte_mbuf *big[100];

		res_reset();
		fl = down4(fr, IP_A, 20, 0);
		for (i = 0; i < 100; i++)
			big[i] = mk1(fr, fl, 1);
		egw_pppoe_encap_burst(ctx, big, 100, &res);
		CHECK(res.n_out == 100 && res.out[99] == big[99] && res.out[64] == big[64],
		      "burst of 100: out %u", res.n_out);
		tx_a += 100;
	}

	/* bad IP inside a frame for a session: dropped as bad inner */
	fl = down4(fr, IP_A, 20, 0);
	put16(fr + 14 + 2, 200);
	encap1(mk1(fr, fl, 1));
	CHECK(res.drop[EGW_PPPOE_DROP_BAD_INNER] == 1 && res.n_out == 0, "encap: bad inner");

	/* no headroom for the session headers */
	fl = down4(fr, IP_A, 20, 0);
	m = rte_pktmbuf_alloc(pool);
	m->data_off = 0;
	memcpy(rte_pktmbuf_append(m, fl), fr, fl);
	m->port = 1;
	{
		struct egw_eth_port ep = {.mac = port_mac[1]};

		egw_eth_classify_burst(&ep, &m, 1);
	}
	encap1(m);
	CHECK(res.drop[EGW_PPPOE_DROP_NOMEM] == 1 && res.n_out == 0, "no headroom: nomem");

	/* MSS clamped downstream too */
	il = tcp_build(l4b, 0x12, (const uint8_t[4]){2, 4, 0x05, 0xb4}, 4, 0);
	fl = eth_build(fr, &port_mac[1], &mac_up, 0, NULL, NULL, 0x0800);
	fl = (uint16_t)(fl + ip4_build(fr + fl, IP_SERVER, IP_A, IPPROTO_TCP, l4b, il, 0));
	encap1(mk1(fr, fl, 1));
	if (res.n_out == 1) {
		uint8_t *o = rte_pktmbuf_mtod(res.out[0], uint8_t *) + 22;

		CHECK(get16(o + 20 + 22) == 1452 && l4_cksum_ok(o), "encap SYN-ACK clamped: %u",
		      get16(o + 20 + 22));
	} else {
		CHECK(0, "encap SYN-ACK not encapsulated");
	}
	tx_a++;
	res_reset();
}

static void
test_too_big(void)
{
	uint8_t a6[16], *o, *ip;
	uint16_t fl;

	/* IPv4 of 1500 bytes: A's MRU is 1492 */
	fl = down4(fr, IP_A, 1500 - 28, 0);
	fr[14 + 6] = 0x40; /* DF */
	put16(fr + 14 + 10, 0);
	put16(fr + 14 + 10, (uint16_t)~sum16(fr + 14, 20, 0));
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_TOO_BIG] == 1 && res.n_icmp == 1,
	      "v4 too big: drop %u icmp %u", res.drop[EGW_PPPOE_DROP_TOO_BIG], res.n_icmp);
	if (res.n_icmp == 1) {
		struct rte_mbuf *r = res.icmp[0];

		o = rte_pktmbuf_mtod(r, uint8_t *);
		ip = o + 14;
		CHECK(r->pkt_len == 14 + 576 && r->port == 1 && r->l2_len == 14,
		      "v4 ICMP: 576 bytes of IP (%u)", r->pkt_len);
		CHECK(memcmp(o, &mac_up, 6) == 0 && memcmp(o + 6, &port_mac[1], 6) == 0 &&
			      get16(o + 12) == 0x0800,
		      "v4 ICMP: addresses swapped");
		CHECK(ip[0] == 0x45 && get16(ip + 2) == 576 && ip[9] == 1 && ip4_hdr_ok(ip) &&
			      get16(ip + 12) == (IP_LOCAL >> 16) &&
			      get16(ip + 14) == (IP_LOCAL & 0xffff) &&
			      memcmp(ip + 16, fr + 14 + 12, 4) == 0,
		      "v4 ICMP: IP header from the local address to the sender");
		CHECK(ip[20] == 3 && ip[21] == 4 && get16(ip + 26) == 1492 && l4_cksum_ok(ip),
		      "v4 ICMP: type 3 code 4, next-hop MTU %u, checksum", get16(ip + 26));
		CHECK(memcmp(ip + 28, fr + 14, 548) == 0, "v4 ICMP: quotes the packet");
	}

	/* IPv6 of 1500 bytes */
	addr6(a6, pfx_a, 0x99);
	fl = down6(fr, a6, 1500 - 48);
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_TOO_BIG] == 1 && res.n_icmp == 1,
	      "v6 too big: icmp %u", res.n_icmp);
	if (res.n_icmp == 1) {
		struct rte_mbuf *r = res.icmp[0];

		o = rte_pktmbuf_mtod(r, uint8_t *);
		ip = o + 14;
		CHECK(r->pkt_len == 14 + 1280, "v6 ICMP: 1280 bytes of IP (%u)", r->pkt_len);
		CHECK(ip[0] >> 4 == 6 && get16(ip + 4) == 1240 && ip[6] == 58 &&
			      memcmp(ip + 8, local6, 16) == 0 && memcmp(ip + 24, server6, 16) == 0,
		      "v6 ICMP: header");
		CHECK(ip[40] == 2 && ip[41] == 0 && get16(ip + 44) == 0 && get16(ip + 46) == 1492 &&
			      l4_cksum_ok(ip),
		      "v6 ICMP: type 2, MTU %u, checksum", get16(ip + 46));
		CHECK(memcmp(ip + 48, fr + 14, 1232) == 0, "v6 ICMP: quotes the packet");
	}

	/* exactly the MRU fits */
	fl = down4(fr, IP_A, 1492 - 28, 0);
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 1 && res.n_icmp == 0, "1492 bytes fit");
	tx_a++;

	/* never an ICMP error about an ICMP error */
	{
		uint8_t icmp[1500];
		uint16_t off = eth_build(fr, &port_mac[1], &mac_up, 0, NULL, NULL, 0x0800);

		memset(icmp, 0, sizeof(icmp));
		icmp[0] = 3;
		fl = (uint16_t)(off +
				ip4_build(fr + off, IP_SERVER, IP_A, IPPROTO_ICMP, icmp, 1480, 0));
		encap1(mk1(fr, fl, 1));
		CHECK(res.n_icmp == 0 && res.drop[EGW_PPPOE_DROP_TOO_BIG_NO_ICMP] == 1,
		      "too-big ICMP error: no ICMP");
	}
	res_reset();
}

/* Rate limit: a fresh context may send 50 at once, then 1 per ms. */
static void
test_rate_limit(void)
{
	struct egw_pppoe_ctx *c2 = egw_pppoe_ctx_create(1, pool);
	struct rte_mbuf *in[100];
	unsigned int i;
	uint16_t fl;

	CHECK(c2 != NULL, "second context");
	if (c2 == NULL)
		return;
	res_reset();
	fl = down4(fr, IP_A, 1500 - 28, 0);
	for (i = 0; i < 100; i++)
		in[i] = mk1(fr, fl, 1);
	egw_pppoe_encap_burst(c2, in, 100, &res);
	CHECK(res.n_icmp >= 50 && res.n_icmp <= 55 &&
		      res.drop[EGW_PPPOE_DROP_TOO_BIG] == res.n_icmp &&
		      res.drop[EGW_PPPOE_DROP_TOO_BIG_NO_ICMP] == 100u - res.n_icmp,
	      "rate limit: %u ICMP, %u without", res.n_icmp,
	      res.drop[EGW_PPPOE_DROP_TOO_BIG_NO_ICMP]);
	res_reset();
	egw_pppoe_ctx_free(c2);
}

static void
test_overflow(void)
{
	struct rte_mbuf *in[8];
	unsigned int i;
	uint16_t fl;

	res_reset();
	res.n_out = EGW_PPPOE_MAX_BURST - 3; /* as if the caller had not taken them */
	fl = down4(fr, IP_A, 10, 0);
	for (i = 0; i < 8; i++)
		in[i] = mk1(fr, fl, 1);
	egw_pppoe_encap_burst(ctx, in, 8, &res);
	CHECK(res.n_out == EGW_PPPOE_MAX_BURST && res.drop[EGW_PPPOE_DROP_OVERFLOW] == 5,
	      "overflow: out %u, dropped %u", res.n_out, res.drop[EGW_PPPOE_DROP_OVERFLOW]);
	tx_a += 3;
	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		drops_seen[i] += res.drop[i];
	for (i = 0; i < 3; i++)
		rte_pktmbuf_free(res.out[EGW_PPPOE_MAX_BURST - 3 + i]);
	memset(&res, 0, sizeof(res));
}

/* ---- lifecycle ---------------------------------------------------------- */

struct walk_acc {
	unsigned int n;
	struct egw_pppoe_session_info info[TABLE];
};

static int
walk_fn(const struct egw_pppoe_session_info *s, void *arg)
{
	struct walk_acc *w = arg;

	if (w->n < TABLE)
		w->info[w->n++] = *s;
	return 0;
}

static const struct egw_pppoe_session_info *
walk_find(struct walk_acc *w, uint16_t sid)
{
	unsigned int i;

	memset(w, 0, sizeof(*w));
	egw_pppoe_session_walk(walk_fn, w);
	for (i = 0; i < w->n; i++)
		if (w->info[i].sid == sid)
			return &w->info[i];
	return NULL;
}

static void
test_walk(void)
{
	static struct walk_acc w;
	const struct egw_pppoe_session_info *i;

	i = walk_find(&w, sid_a);
	CHECK(w.n == 5, "walk: %u sessions", w.n);
	CHECK(i != NULL && i->state == EGW_PPPOE_S_BOUND && i->port == 0 &&
		      rte_is_same_ether_addr(&i->mac, &mac_a) && i->mru == 1492 &&
		      i->ip4 == rte_cpu_to_be_32(IP_A) && memcmp(i->ip6, pfx_a, 8) == 0,
	      "walk: A's fields");
	CHECK(i != NULL && i->rx_pkts == rx_a && i->tx_pkts == tx_a,
	      "walk: A's counters rx %" PRIu64 "/%" PRIu64 " tx %" PRIu64 "/%" PRIu64,
	      i ? i->rx_pkts : 0, rx_a, i ? i->tx_pkts : 0, tx_a);
	i = walk_find(&w, sid_c);
	CHECK(i != NULL && i->n_vlan == 2 && i->vlan[0] == 200 && i->vlan[1] == 300,
	      "walk: C's VLANs");
}

static void
count_filter(const char *user, enum egw_pppoe_filter_kind kind, const char *expr, bool jit,
	     void *arg)
{
	unsigned int *n = arg;

	RTE_SET_USED(user);
	RTE_SET_USED(kind);
	RTE_SET_USED(expr);
	RTE_SET_USED(jit);
	(*n)++;
}

/* Pass filter in both directions, a refused expression, the active clock. */
static void
test_policy(void)
{
	char err[256];
	uint16_t il, fl;
	unsigned int n = 0;

	/* every test frame is UDP to port 53 */
	CHECK(egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, NULL, "udp port 53", err, sizeof(err)) ==
		      0,
	      "pass filter: %s", err);
	il = ip4_udp(ipb, IP_A, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 1, "upstream DNS passes 'udp port 53'");
	fl = down4(fr, IP_A, 10, 0);
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 1, "downstream DNS passes 'udp port 53'");
	CHECK(egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, NULL, "not udp port 53", err,
				   sizeof(err)) == 0,
	      "pass filter replaced");
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_FILTERED] == 1,
	      "upstream DNS dropped by 'not udp port 53'");
	fl = down4(fr, IP_A, 10, 0);
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 0 && res.n_pass == 0 && res.drop[EGW_PPPOE_DROP_FILTERED] == 1,
	      "downstream DNS dropped by 'not udp port 53'");
	/* an expression that does not compile: an error, the old filter stays */
	CHECK(egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, NULL, "udp port", err, sizeof(err)) ==
			      -EINVAL &&
		      err[0] != '\0',
	      "bad expression refused: %s", err);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.drop[EGW_PPPOE_DROP_FILTERED] == 1, "the old filter still judges");
	CHECK(egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, "bob", "tcp", err, sizeof(err)) == 0,
	      "a user's filter");
	egw_pppoe_filters_walk(count_filter, &n);
	CHECK(n == 2, "two filters listed: %u", n);
	/* the idle clock: a frame the (absent) active filter matches */
	CHECK(egw_pppoe_set_idle_timeout(3600) == 0, "idle timeout");
	CHECK(egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, NULL, NULL, err, sizeof(err)) == 0 &&
		      egw_pppoe_set_filter(EGW_PPPOE_FILTER_PASS, "bob", NULL, err, sizeof(err)) ==
			      0,
	      "filters removed");
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 1 && pppoe_fast_sess_active(sid_a) != 0,
	      "no filter: passes, and counts as activity");
	res_reset();
	CHECK(egw_pppoe_set_idle_timeout(604801) == -EINVAL && egw_pppoe_set_idle_timeout(0) == 0,
	      "idle timeout range");
	rx_a += 2;
}

/* IPv6 of a session whose IPv6CP opened without a /64; the idle timeout. */
static void
test_noprefix_idle(void)
{
	static const struct rte_ether_addr mac_i = {{0x02, 0, 0, 0, 0x1d, 0x1e}};
	struct pppoe_sess *si = sess_new(0, &mac_i, &untagged);
	uint8_t src6[16] = {0x20, 0x01, 0x0d, 0xb8, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	uint16_t il, fl;

	CHECK(si != NULL, "session I");
	if (si == NULL)
		return;
	bind4(si, 0x0a0a0a0a);
	pppoe_sess_ip6_noprefix(si, true);
	il = ip6_udp(ipb, src6, server6, 10);
	fl = pppoe_build(fr, &mac_i, 0, &untagged, 0x11, 0, si->sid, -1, PPP_IPV6, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.n_out == 0 && res.n_ctrl == 0 && res.drop[EGW_PPPOE_DROP_IPV6_NO_PREFIX] == 1 &&
		      egw_pppoe_ctx_held(ctx) == 0,
	      "IPv6 without a /64: dropped as pppoe_ipv6_no_prefix, not held, not to control");
	res_reset();
	pppoe_sess_ip6_noprefix(si, false);
	/* idle for longer than the timeout: closed by the policy service */
	CHECK(egw_pppoe_set_idle_timeout(1) == 0, "idle timeout 1 s");
	CHECK(pppoe_policy_service(rte_rdtsc()) == 0 && si->state == EGW_PPPOE_S_BOUND,
	      "not idle yet");
	CHECK(pppoe_policy_service(rte_rdtsc() + 3 * rte_get_tsc_hz()) >= 1 &&
		      si->state == EGW_PPPOE_S_CLOSING && si->cause == EGW_PPPOE_CAUSE_IDLE,
	      "idle for 3 s: closed, cause idle_timeout");
	CHECK(egw_pppoe_set_idle_timeout(0) == 0, "idle timeout off");
}

static void
test_unbind(void)
{
	uint16_t il, fl;
	struct rte_mbuf *m;

	pppoe_sess_unbind(sb, PPPOE_NCP_IP4);
	CHECK(sb->state == EGW_PPPOE_S_NEGOTIATING && sb->fp->ncp == 0,
	      "B without NCP: negotiating again");
	CHECK(pppoe_route4_lookup(rte_cpu_to_be_32(IP_B)) == NULL, "B's route gone");
	pppoe_sess_ncp_acksent(sb, PPPOE_NCP_IP4, true);
	fl = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, sid_b, -1, PPP_IPCP, 2, ncp_ack,
			 sizeof(ncp_ack), 0);
	decap1(mk1(fr, fl, 0));
	il = ip4_udp(ipb, IP_B, IP_SERVER, 64);
	fl = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, sid_b, -1, PPP_IP, 2, ipb, il, 0);
	m = mk1(fr, fl, 0);
	decap1(m);
	CHECK(res.n_ctrl == 0 && egw_pppoe_ctx_held(ctx) == 1,
	      "B's data behind an IPCP Ack held after unbind");
	egw_pppoe_ctx_poll(ctx, 0, true, &res);
	CHECK(res.drop[EGW_PPPOE_DROP_NCP_NOT_OPEN] == 1, "flushed");
	res_reset();
	fl = down4(fr, IP_B, 10, 0);
	m = mk1(fr, fl, 1);
	encap1(m);
	CHECK(res.n_pass == 1 && res.pass[0] == m, "downstream to B passed after unbind");
	bind4(sb, IP_B);
	CHECK(sb->state == EGW_PPPOE_S_BOUND, "B bound again");
	res_reset();
}

static void
test_lifecycle(void)
{
	struct pppoe_sess *s[TABLE + 1];
	static struct walk_acc w;
	const struct egw_pppoe_session_info *inf;
	enum pppoe_refuse why;
	unsigned int i, n, freed;
	uint16_t fl, il;
	struct rte_mbuf *m;
	uint16_t tci0[2] = {0, 0};
	rte_be16_t tpid0[2] = {0, 0};

	/* a worker: online, not yet quiescent */
	CHECK(rte_rcu_qsbr_thread_register(qs, 0) == 0, "reader registered");
	rte_rcu_qsbr_thread_online(qs, 0);

	pppoe_sess_close(sa, EGW_PPPOE_CAUSE_ADMIN, false);
	pppoe_sess_close(sa, EGW_PPPOE_CAUSE_PADT, false); /* idempotent */
	CHECK(sa->state == EGW_PPPOE_S_CLOSING && sa->cause == EGW_PPPOE_CAUSE_ADMIN,
	      "A closing, cause kept");
	CHECK(pppoe_route4_lookup(rte_cpu_to_be_32(IP_A)) == NULL &&
		      pppoe_route6_lookup(
			      (const uint8_t[16]){0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2}) == NULL,
	      "A's routes removed");
	CHECK(pppoe_sess_find(sid_a, 0, &mac_a, 0, tci0) == NULL && pppoe_sess_get(sid_a) == sa,
	      "closing: not found by key, still got by id");

	/* frames of A now: dropped as closing; downstream passes */
	il = ip4_udp(ipb, IP_A, IP_SERVER, 10);
	fl = pppoe_build(fr, &mac_a, 0, &untagged, 0x11, 0, sid_a, -1, PPP_IP, 2, ipb, il, 0);
	decap1(mk1(fr, fl, 0));
	CHECK(res.drop[EGW_PPPOE_DROP_CLOSING] == 1, "closed session's frame dropped as closing");
	fl = down4(fr, IP_A, 10, 0);
	m = mk1(fr, fl, 1);
	encap1(m);
	CHECK(res.n_pass == 1 && res.pass[0] == m, "downstream to a closed session passes");
	res_reset();

	/* no grace period yet: A is not freed, its id not handed out */
	CHECK(pppoe_sess_service() == 0 && pppoe_sess_count() == 5, "not freed before quiescent");
	s[0] = pppoe_sess_create(0, &mac_a, 0, tci0, tpid0, 0, &why);
	CHECK(s[0] != NULL && s[0]->sid == 6, "next id is a fresh one (%u)", s[0] ? s[0]->sid : 0);

	/* the worker reports quiescent: the grace period ends */
	rte_rcu_qsbr_quiescent(qs, 0);
	CHECK(pppoe_sess_service() == 1, "freed after quiescent");
	CHECK(pppoe_sess_get(sid_a) == NULL && pppoe_sess_count() == 5, "A gone");

	/* close 3 then 1 (B's id 2 stays): ids 7..16 come first, then 3, then 1 */
	pppoe_sess_close(sc, EGW_PPPOE_CAUSE_PADT, false);
	rte_rcu_qsbr_quiescent(qs, 0);
	freed = pppoe_sess_service();
	CHECK(freed == 1, "C freed (%u)", freed);
	n = 1;
	for (i = 7; i <= TABLE; i++) {
		struct rte_ether_addr mac = {{0x02, 1, 0, 0, 0, (uint8_t)i}};

		s[n] = pppoe_sess_create(0, &mac, 0, tci0, tpid0, 0, &why);
		CHECK(s[n] != NULL && s[n]->sid == i, "FIFO: id %u (%u)", i, s[n] ? s[n]->sid : 0);
		n++;
	}
	{
		struct rte_ether_addr mac = {{0x02, 1, 0, 0, 0, 0xa1}};

		s[n] = pppoe_sess_create(0, &mac, 0, tci0, tpid0, 0, &why);
		CHECK(s[n] != NULL && s[n]->sid == sid_a, "FIFO: A's id 1 next (%u)",
		      s[n] ? s[n]->sid : 0);
		/* counters of a reused id start from zero */
		inf = walk_find(&w, sid_a);
		CHECK(inf != NULL && inf->rx_pkts == 0 && inf->tx_pkts == 0 && inf->rx_bytes == 0,
		      "reused id: counters from zero");
		n++;
		mac.addr_bytes[5] = 0xa2;
		s[n] = pppoe_sess_create(0, &mac, 0, tci0, tpid0, 0, &why);
		CHECK(s[n] != NULL && s[n]->sid == sid_c, "FIFO: C's id 3 last (%u)",
		      s[n] ? s[n]->sid : 0);
		n++;
		mac.addr_bytes[5] = 0xa3;
		CHECK(pppoe_sess_create(0, &mac, 0, tci0, tpid0, 0, &why) == NULL &&
			      why == PPPOE_REFUSE_LIMIT,
		      "table full: refused (limit)");
	}
	CHECK(pppoe_sess_count() == TABLE, "table full: %u", pppoe_sess_count());

	/* per-MAC limit: counted until the session is freed */
	for (i = 0; i < n; i++)
		pppoe_sess_close(s[i], EGW_PPPOE_CAUSE_LCP_TERM, false);
	rte_rcu_qsbr_quiescent(qs, 0);
	pppoe_sess_service();
	pppoe_g.conf.max_per_mac = 2;
	{
		struct pppoe_sess *x[3];

		x[0] = pppoe_sess_create(0, &mac_a, 0, tci0, tpid0, 0, &why);
		x[1] = pppoe_sess_create(1, &mac_a, 0, tci0, tpid0, 0, &why);
		x[2] = pppoe_sess_create(0, &mac_a, 0, tci0, tpid0, 0, &why);
		CHECK(x[0] != NULL && x[1] != NULL && x[2] == NULL && why == PPPOE_REFUSE_PER_MAC,
		      "per MAC: third refused");
		pppoe_sess_close(x[0], EGW_PPPOE_CAUSE_PADT, false);
		x[2] = pppoe_sess_create(0, &mac_a, 0, tci0, tpid0, 0, &why);
		CHECK(x[2] == NULL && why == PPPOE_REFUSE_PER_MAC,
		      "per MAC: a closing session still counts");
		rte_rcu_qsbr_quiescent(qs, 0);
		pppoe_sess_service();
		x[2] = pppoe_sess_create(0, &mac_a, 0, tci0, tpid0, 0, &why);
		CHECK(x[2] != NULL, "per MAC: room again once freed");
		x[0] = pppoe_sess_create(0, &mac_b, 0, tci0, tpid0, 0, &why);
		CHECK(x[0] != NULL, "per MAC: another MAC unaffected");
		pppoe_g.conf.max_sessions = pppoe_sess_count();
		x[0] = pppoe_sess_create(0, &mac_c, 0, tci0, tpid0, 0, &why);
		CHECK(x[0] == NULL && why == PPPOE_REFUSE_LIMIT, "session limit refuses");
		pppoe_g.conf.max_sessions = TABLE;
		pppoe_g.conf.max_per_mac = TABLE;
	}
	/* a close that sends a PADT hands one frame to the transmit function */
	{
		unsigned int before = tx_frames;

		pppoe_sess_close(sd, EGW_PPPOE_CAUSE_ECHO, true);
		CHECK(tx_frames == before + 1, "close with PADT: %u frame(s) sent",
		      tx_frames - before);
	}
	CHECK(egw_pppoe_session_clear(0) == -ENOENT && egw_pppoe_session_clear(TABLE) == -ENOENT,
	      "clear of a free id: -ENOENT");
	rte_rcu_qsbr_thread_offline(qs, 0);
	rte_rcu_qsbr_thread_unregister(qs, 0);
}

static void
test_names(void)
{
	unsigned int i;

	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		CHECK(strncmp(egw_pppoe_drop_name(i), "pppoe_", 6) == 0 &&
			      strlen(egw_pppoe_drop_desc(i)) > 10,
		      "drop %u name %s", i, egw_pppoe_drop_name(i));
	CHECK(strcmp(egw_pppoe_drop_name(EGW_PPPOE_DROP_MAX), "unknown") == 0, "out of range");
	CHECK(strcmp(egw_pppoe_cause_name(EGW_PPPOE_CAUSE_ADMIN), "admin") == 0 &&
		      strcmp(egw_pppoe_cause_name(EGW_PPPOE_CAUSE_MAX), "unknown") == 0,
	      "cause names");
}

/* ---- the application's routes (params.route) ---------------------------- */

static struct {
	unsigned int adds, dels;
	bool add;
	uint16_t sid;
	int family;
	uint8_t addr[16];
	uint8_t len;
	int fail; /* returned by the next add */
} rcb;

static int
route_rec(bool add, uint16_t sid, int family, const uint8_t *addr, uint8_t len, void *arg)
{
	CHECK(arg == &rcb, "route callback argument");
	rcb.add = add;
	rcb.sid = sid;
	rcb.family = family;
	memcpy(rcb.addr, addr, 16);
	rcb.len = len;
	if (add) {
		int rc = rcb.fail;

		rcb.fail = 0;
		if (rc == 0)
			rcb.adds++;
		return rc;
	}
	rcb.dels++;
	return 0;
}

/* the application's source check: 198.51.100.0/24 is routed to src_sid */
static uint16_t src_sid;
static unsigned int src_calls;

static bool
src_rec(uint16_t sid, bool v6, const uint8_t *src, void *arg)
{
	CHECK(arg == &src_sid, "source check argument");
	src_calls++;
	return !v6 && sid == src_sid && src[0] == 198 && src[1] == 51 && src[2] == 100;
}

static void
encap_sid1(struct rte_mbuf *m, uint32_t sid)
{
	res_reset();
	egw_pppoe_encap_sid_burst(ctx, &m, &sid, 1, &res);
}

/* With a route callback the library keeps no route table: binds and
 * unbinds call it, egw_pppoe_encap_burst() finds nothing, and
 * egw_pppoe_encap_sid_burst() takes the session the caller's FIB found,
 * checking that it still has the destination. */
static void
test_route_callback(const struct egw_pppoe_params *base)
{
	static const uint8_t pfx[8] = {0x20, 0x01, 0x0d, 0xb8, 0x0a, 0, 0, 0x01};
	struct egw_pppoe_params p = *base;
	struct pppoe_sess *s, *t;
	uint8_t a6[16], want[16] = {0};
	uint16_t fl, el;
	uint32_t be;

	printf("route callback\n");
	p.route = route_rec;
	p.route_arg = &rcb;
	p.src_check = src_rec;
	p.src_check_arg = &src_sid;
	CHECK(egw_pppoe_init(&p) == 0, "init with a route callback");
	CHECK(egw_pppoe_port_add(0, &port_mac[0], 1500) == 0, "access port");
	ctx = egw_pppoe_ctx_create(0, pool);
	if (ctx == NULL) {
		CHECK(false, "context");
		return;
	}
	CHECK(pppoe_route_tab(PPPOE_NCP_IP4) == NULL && pppoe_route_tab(PPPOE_NCP_IP6) == NULL,
	      "no route tables of the library's own");
	s = sess_new(0, &mac_a, &untagged);
	t = sess_new(0, &mac_b, &tags_b);
	if (s == NULL || t == NULL)
		return;
	/* a refused route: the NCP is not bound */
	rcb.fail = -EEXIST;
	s->fp->ip4 = rte_cpu_to_be_32(IP_A);
	CHECK(pppoe_sess_bind(s, PPPOE_NCP_IP4) == -EEXIST && s->fp->ncp == 0 &&
		      s->state == EGW_PPPOE_S_NEGOTIATING,
	      "route refused: not bound");
	bind4(s, IP_A);
	be = rte_cpu_to_be_32(IP_A);
	memcpy(want, &be, 4);
	CHECK(rcb.adds == 1 && rcb.add && rcb.sid == s->sid && rcb.family == AF_INET &&
		      rcb.len == 32 && memcmp(rcb.addr, want, 16) == 0,
	      "IPv4 route: sid %u family %d /%u", rcb.sid, rcb.family, rcb.len);
	bind6(s, pfx);
	memset(want, 0, sizeof(want));
	memcpy(want, pfx, 8);
	CHECK(rcb.adds == 2 && rcb.family == AF_INET6 && rcb.len == 64 &&
		      memcmp(rcb.addr, want, 16) == 0,
	      "IPv6 route: family %d /%u", rcb.family, rcb.len);
	bind4(t, IP_B);

	/* by sid: the same bytes as the route table's encapsulation */
	fl = down4(fr, IP_A, 100, 0);
	encap_sid1(mk1(fr, fl, 1), s->sid);
	el = exp_encap(exp_, &mac_a, &untagged, s->sid, PPP_IP, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && res.out_port[0] == 0 && same(res.out[0], exp_, el),
	      "encap by sid, IPv4: out %u pass %u", res.n_out, res.n_pass);
	addr6(a6, pfx, 0x99);
	fl = down6(fr, a6, 50);
	encap_sid1(mk1(fr, fl, 1), s->sid);
	el = exp_encap(exp_, &mac_a, &untagged, s->sid, PPP_IPV6, fr + 14, (uint16_t)(fl - 14));
	CHECK(res.n_out == 1 && same(res.out[0], exp_, el), "encap by sid, IPv6");
	/* the route table's call finds nothing: no table */
	fl = down4(fr, IP_A, 100, 0);
	encap1(mk1(fr, fl, 1));
	CHECK(res.n_out == 0 && res.n_pass == 1, "egw_pppoe_encap_burst: passed");
	/* a stale or wrong sid never sends to another subscriber */
	encap_sid1(mk1(fr, fl, 1), t->sid);
	CHECK(res.n_out == 0 && res.n_pass == 1, "sid of another session: passed");
	encap_sid1(mk1(fr, fl, 1), 0);
	CHECK(res.n_out == 0 && res.n_pass == 1, "sid 0: passed");
	encap_sid1(mk1(fr, fl, 1), TABLE + 1);
	CHECK(res.n_out == 0 && res.n_pass == 1, "sid past the table: passed");
	encap_sid1(mk1(fr, fl, 1), UINT32_MAX);
	CHECK(res.n_out == 0 && res.n_pass == 1, "sid 2^32-1: passed");
	/* a burst of both */
	{
		struct rte_mbuf *m[3];
		uint32_t sids[3] = {s->sid, t->sid, t->sid};

		m[0] = mk1(fr, down4(fr, IP_A, 10, 0), 1);
		m[1] = mk1(fr, down4(fr, IP_B, 10, 0), 1);
		m[2] = mk1(fr, down4(fr, IP_A, 10, 0), 1);
		res_reset();
		egw_pppoe_encap_sid_burst(ctx, m, sids, 3, &res);
		CHECK(res.n_out == 2 && res.n_pass == 1 && res.pass[0] == m[2],
		      "burst: out %u pass %u", res.n_out, res.n_pass);
	}
	/* a prefix routed to t (Framed-Route 198.51.100.0/24): downstream by
	 * the FIB's sid and upstream from inside it only once t is framed */
	{
		uint32_t in = IP4(198, 51, 100, 7), out = IP4(203, 0, 113, 9);
		uint16_t il, fl2;

		fl2 = down4(fr, in, 20, 0);
		encap_sid1(mk1(fr, fl2, 1), t->sid);
		CHECK(res.n_out == 0 && res.n_pass == 1, "framed prefix before framed: passed");
		il = ip4_udp(ipb, in, IP_SERVER, 30);
		fl2 = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, t->sid, -1, PPP_IP, 2, ipb, il,
				  0);
		decap1(mk1(fr, fl2, 0));
		CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_SPOOFED] == 1 && src_calls == 0,
		      "source in the prefix before framed: spoofed, no check asked");
		CHECK(egw_pppoe_session_framed(t->sid, true) == 0, "t framed");
		CHECK(egw_pppoe_session_framed(0, true) == -ENOENT &&
			      egw_pppoe_session_framed(TABLE + 1, true) == -ENOENT,
		      "framed: no such session");
		src_sid = t->sid;
		fl2 = down4(fr, in, 20, 0);
		encap_sid1(mk1(fr, fl2, 1), t->sid);
		CHECK(res.n_out == 1 && res.out_port[0] == 0,
		      "framed prefix: sent by the FIB's sid");
		encap1(mk1(fr, fl2, 1));
		CHECK(res.n_out == 0 && res.n_pass == 1,
		      "framed prefix: never without the caller's FIB (route table call)");
		fl2 = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, t->sid, -1, PPP_IP, 2, ipb, il,
				  0);
		decap1(mk1(fr, fl2, 0));
		CHECK(res.n_out == 1 && src_calls == 1, "source inside the prefix: forwarded (%u)",
		      src_calls);
		il = ip4_udp(ipb, out, IP_SERVER, 30);
		fl2 = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, t->sid, -1, PPP_IP, 2, ipb, il,
				  0);
		decap1(mk1(fr, fl2, 0));
		CHECK(res.n_out == 0 && res.drop[EGW_PPPOE_DROP_SPOOFED] == 1 && src_calls == 2,
		      "source outside every prefix: spoofed");
		il = ip4_udp(ipb, IP_B, IP_SERVER, 30);
		fl2 = pppoe_build(fr, &mac_b, 0, &tags_b, 0x11, 0, t->sid, -1, PPP_IP, 2, ipb, il,
				  0);
		decap1(mk1(fr, fl2, 0));
		CHECK(res.n_out == 1 && src_calls == 2, "its own address: no check asked");
		res_reset();
	}
	/* unbind, close: the routes go */
	pppoe_sess_unbind(s, PPPOE_NCP_IP6);
	CHECK(rcb.dels == 1 && !rcb.add && rcb.family == AF_INET6 && rcb.sid == s->sid,
	      "IPv6 unbound: route deleted");
	addr6(a6, pfx, 0x99);
	encap_sid1(mk1(fr, down6(fr, a6, 50), 1), s->sid);
	CHECK(res.n_out == 0 && res.n_pass == 1, "IPv6 after unbind: passed");
	pppoe_sess_close(s, EGW_PPPOE_CAUSE_ADMIN, false);
	CHECK(rcb.dels == 2 && rcb.family == AF_INET, "closed: IPv4 route deleted");
	encap_sid1(mk1(fr, fl, 1), s->sid);
	CHECK(res.n_out == 0 && res.n_pass == 1, "closed session: passed");
	res_reset();
	egw_pppoe_ctx_free(ctx);
	ctx = NULL;
	egw_pppoe_fini();
	CHECK(rcb.dels == 3, "fini: B's route deleted (%u)", rcb.dels);
}

int
main(int argc, char **argv)
{
	struct egw_pppoe_params p;
	uint64_t drops[EGW_PPPOE_DROP_MAX];
	size_t sz;
	unsigned int i;
	bool drops_ok = true;

	if (rte_eal_init(argc, argv) < 0 || egw_eth_init() != 0) {
		printf("EAL or lib/eth init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_fast", NB_MBUF, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	sz = rte_rcu_qsbr_get_memsize(1);
	qs = rte_zmalloc(NULL, sz, RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qs == NULL || rte_rcu_qsbr_init(qs, 1) != 0) {
		printf("set-up failed\n");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.qsbr = qs;
	p.pool = pool;
	p.max_sessions = TABLE;
	p.nb_ctx = 2;
	p.tx = tx_fn;
	p.socket = SOCKET_ID_ANY;
	if (egw_pppoe_init(&p) != 0) {
		printf("egw_pppoe_init failed\n");
		return 1;
	}
	CHECK(egw_pppoe_port_add(0, &port_mac[0], 1500) == 0 &&
		      egw_pppoe_port_add(1, &port_mac[1], 1500) == 0,
	      "access ports");
	/* the ICMP sources (pool.c sets them from the first pool) */
	pppoe_g.local4 = rte_cpu_to_be_32(IP_LOCAL);
	memcpy(pppoe_g.local6, local6, 16);
	ctx = egw_pppoe_ctx_create(0, pool);
	CHECK(ctx != NULL, "context");
	if (ctx == NULL)
		return 1;

	setup_sessions();
	test_names();
	test_decap_good();
	test_decap_multiseg();
	test_decap_bad();
	test_decap_bad_inner();
	test_decap_ctrl();
	test_mss();
	test_encap();
	test_too_big();
	test_rate_limit();
	test_overflow();
	test_walk();
	test_policy();
	test_unbind();
	test_lifecycle();
	test_noprefix_idle();
	res_reset();

	/* the context's counters are what the results said, reason by reason */
	egw_pppoe_ctx_drops(ctx, drops);
	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		if (i != EGW_PPPOE_DROP_TOO_BIG && i != EGW_PPPOE_DROP_TOO_BIG_NO_ICMP)
			drops_ok = drops_ok && drops[i] == drops_seen[i];
	CHECK(drops_ok, "context drop counters = sum of results");

	egw_pppoe_ctx_free(ctx);
	egw_pppoe_fini();
	test_route_callback(&p);
	CHECK(rte_mempool_avail_count(pool) == NB_MBUF, "every mbuf back: %u of %u",
	      rte_mempool_avail_count(pool), NB_MBUF);
	printf("test_fast: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
