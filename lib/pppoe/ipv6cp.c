/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6CP (RFC 5072), router advertisements and solicitations (RFC 4861).
 *
 * Interface identifiers: ours is the modified EUI-64 of the access port's
 * MAC (RFC 4291 appendix A); the peer's is acked unless it is zero or equal
 * to ours, which are Nak'd with a fresh random non-zero one (RFC 5072 4.1).
 * IPv6-Compression-Protocol, unknown options and the repeats of an option a
 * request carries twice (fsm.c) are rejected.
 *
 * Once IPv6CP is opened the session gets a /64 from the IPv6 pool, its
 * downstream route, and router advertisements carrying the prefix for
 * SLAAC (RFC 4862): three at short intervals, then one every ra_ms, and
 * one for each Router Solicitation (at most one per ra_min_ms). Without an
 * IPv6 pool IPv6CP still opens (link-local traffic only), counted as
 * ipv6_no_prefix: no advertisement, no route. DNS servers the
 * authorisation gave (RADIUS DNS-Server-IPv6-Address, RFC 6911) go in a
 * Recursive DNS Server option (RFC 8106) of every advertisement.
 */
#include <string.h>

#include <openssl/rand.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_random.h>

#include "ppp.h"

#define IPV6CP_OPT_IID 1
#define IPV6CP_OPT_COMP 2

#define ICMP6_RS 133
#define ICMP6_RA 134
#define ND_OPT_PREFIX 3
#define ND_OPT_MTU 5
#define ND_OPT_RDNSS 25 /* RFC 8106 5.1 */

#define RA_ROUTER_LIFETIME 1800 /* s, 3 x MaxRtrAdvInterval (RFC 4861 6.2.1) */
#define RA_CUR_HOP_LIMIT 64
#define RA_VALID_LIFETIME 86400
#define RA_PREF_LIFETIME 14400
#define RA_INITIAL 3 /* MAX_INITIAL_RTR_ADVERTISEMENTS (RFC 4861 10) */

static const uint8_t iid_zero[8];

static void
random_iid(uint8_t iid[8], const uint8_t avoid[8])
{
	do {
		if (RAND_bytes(iid, 8) != 1) {
			uint64_t r = rte_rand();

			memcpy(iid, &r, 8);
		}
		/* a random identifier is not a universal one (RFC 4291 2.5.1) */
		iid[0] &= (uint8_t)~0x02;
	} while (memcmp(iid, iid_zero, 8) == 0 || memcmp(iid, avoid, 8) == 0);
}

void
ppp_ipv6cp_init(struct ppp_sess *ps)
{
	const uint8_t *m = pppoe_g.ports[ps->s->port].mac.addr_bytes;

	/* modified EUI-64: the universal/local bit flipped, ff:fe in the middle */
	ps->our_iid[0] = m[0] ^ 0x02;
	ps->our_iid[1] = m[1];
	ps->our_iid[2] = m[2];
	ps->our_iid[3] = 0xff;
	ps->our_iid[4] = 0xfe;
	ps->our_iid[5] = m[3];
	ps->our_iid[6] = m[4];
	ps->our_iid[7] = m[5];
	if (memcmp(ps->our_iid, iid_zero, 8) == 0)
		random_iid(ps->our_iid, iid_zero);
	ps->want_iid = true;
}

static void
ipv6cp_reset(struct ppp_fsm *f)
{
	f->ps->want_iid = true;
}

static uint16_t
ipv6cp_build_req(struct ppp_fsm *f, uint8_t *o, uint16_t room)
{
	RTE_SET_USED(room);
	if (!f->ps->want_iid)
		return 0;
	o[0] = IPV6CP_OPT_IID;
	o[1] = 10;
	memcpy(&o[2], f->ps->our_iid, 8);
	return 10;
}

static uint8_t
ipv6cp_rx_req(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, uint8_t *out, uint16_t *out_len,
	      bool reject_naks)
{
	static uint8_t rej[PPP_PKT_MAX];
	struct ppp_opt_seen seen = {{0}};
	struct ppp_sess *ps = f->ps;
	uint16_t nn = 0, nr = 0, off;
	const uint8_t *iid = NULL;

	for (off = 0; off < len; off += opt[off + 1]) {
		const uint8_t *o = &opt[off];
		uint8_t ol = o[1];
		bool bad = false;

		if (ppp_opt_repeated(f, &seen, o[0])) {
			/* a second copy: rejected, the first one counts (fsm.c) */
			bad = true;
		} else if (o[0] == IPV6CP_OPT_IID && ol == 10) {
			if (memcmp(&o[2], iid_zero, 8) != 0 && memcmp(&o[2], ps->our_iid, 8) != 0) {
				iid = &o[2];
			} else if (reject_naks) {
				bad = true;
			} else {
				out[nn] = IPV6CP_OPT_IID;
				out[nn + 1] = 10;
				random_iid(&out[nn + 2], ps->our_iid);
				nn += 10;
			}
		} else {
			/* compression (RFC 5072 4.2), bad lengths, unknown */
			bad = true;
		}
		if (bad) {
			memcpy(&rej[nr], o, ol);
			nr += ol;
		}
	}
	if (nr != 0) {
		memcpy(out, rej, nr);
		*out_len = nr;
		return PPP_CODE_CONF_REJ;
	}
	if (nn != 0) {
		*out_len = nn;
		return PPP_CODE_CONF_NAK;
	}
	if (iid != NULL)
		memcpy(ps->peer_iid, iid, 8);
	return PPP_CODE_CONF_ACK;
}

static void
ipv6cp_rx_ack(struct ppp_fsm *f)
{
	RTE_SET_USED(f);
}

static int
ipv6cp_rx_nak(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, bool rej)
{
	struct ppp_sess *ps = f->ps;
	uint16_t off;

	for (off = 0; off < len; off += opt[off + 1]) {
		const uint8_t *o = &opt[off];

		if (o[0] != IPV6CP_OPT_IID)
			continue;
		if (rej) {
			ps->want_iid = false;
			continue;
		}
		if (o[1] != 10)
			return -1;
		/* RFC 5072 4.1: take the suggestion unless it is zero or the
		 * peer's own; else a new random one */
		if (memcmp(&o[2], iid_zero, 8) != 0 && memcmp(&o[2], ps->peer_iid, 8) != 0)
			memcpy(ps->our_iid, &o[2], 8);
		else
			random_iid(ps->our_iid, ps->peer_iid);
	}
	return 0;
}

/* ---------------- router advertisements ---------------- */

/* ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and the message */
static uint16_t
icmp6_sum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *msg, uint32_t len)
{
	uint8_t ph[40];
	uint32_t sum;
	rte_be32_t l = rte_cpu_to_be_32(len);

	memcpy(ph, src, 16);
	memcpy(&ph[16], dst, 16);
	memcpy(&ph[32], &l, 4);
	ph[36] = 0;
	ph[37] = 0;
	ph[38] = 0;
	ph[39] = IPPROTO_ICMPV6;
	sum = rte_raw_cksum(ph, sizeof(ph));
	sum += rte_raw_cksum(msg, len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

#define RA_ICMP_LEN (16 + 32 + 8)
#define RA_RDNSS_MAX (8 + 2 * 16)
#define RA_LEN (40 + RA_ICMP_LEN + RA_RDNSS_MAX)

static void
put32(uint8_t *p, uint32_t v)
{
	rte_be32_t b = rte_cpu_to_be_32(v);

	memcpy(p, &b, 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	rte_be16_t b = rte_cpu_to_be_16(v);

	memcpy(p, &b, 2);
}

static void
ra_send(struct ppp_sess *ps)
{
	static const uint8_t any6[16];
	uint8_t pkt[RA_LEN];
	uint8_t *ip = pkt, *icmp = pkt + 40, *pio = icmp + 16, *mtu = pio + 32, *rdnss = mtu + 8;
	uint16_t icmp_len = RA_ICMP_LEN;
	unsigned int i, nb_dns = 0;
	/* the link MTU the host sends with: no more than we receive (our MRU,
	 * RFC 1661's 1500 when not negotiated) nor than we send (its MRU) */
	uint16_t mru = RTE_MIN(ps->want_mru ? ps->our_mru : (uint16_t)1500,
			       ps->s->fp->mru != 0 ? ps->s->fp->mru : ppp_peer_mru(ps));
	uint16_t ck;

	memset(pkt, 0, sizeof(pkt));
	/* RFC 8106 5.1: the servers the authorisation gave, in one option */
	for (i = 0; i < RTE_DIM(ps->dns6); i++)
		if (memcmp(ps->dns6[i], any6, 16) != 0)
			memcpy(&rdnss[8 + 16 * nb_dns++], ps->dns6[i], 16);
	if (nb_dns != 0) {
		rdnss[0] = ND_OPT_RDNSS;
		rdnss[1] = (uint8_t)(1 + 2 * nb_dns); /* units of 8 octets */
		/* 5.1: at least 3 x MaxRtrAdvInterval, as the router lifetime */
		put32(&rdnss[4], RA_ROUTER_LIFETIME);
		icmp_len = (uint16_t)(icmp_len + 8 + 16 * nb_dns);
	}
	ip[0] = 0x60;
	put16(&ip[4], icmp_len);
	ip[6] = IPPROTO_ICMPV6;
	ip[7] = 255;  /* RFC 4861 6.1.2: receivers check it */
	ip[8] = 0xfe; /* fe80::<our iid> */
	ip[9] = 0x80;
	memcpy(&ip[16], ps->our_iid, 8);
	ip[24] = 0xff; /* ff02::1 */
	ip[25] = 0x02;
	ip[39] = 0x01;

	icmp[0] = ICMP6_RA;
	icmp[1] = 0;
	icmp[4] = RA_CUR_HOP_LIMIT;
	icmp[5] = 0; /* M=0 O=0: addresses by SLAAC, no DHCPv6 */
	put16(&icmp[6], RA_ROUTER_LIFETIME);
	/* reachable time and retrans timer 0: unspecified */

	pio[0] = ND_OPT_PREFIX;
	pio[1] = 4;
	pio[2] = 64;
	pio[3] = 0xc0; /* L and A */
	put32(&pio[4], RA_VALID_LIFETIME);
	put32(&pio[8], RA_PREF_LIFETIME);
	memcpy(&pio[16], ps->prefix, 8);

	mtu[0] = ND_OPT_MTU;
	mtu[1] = 1;
	put32(&mtu[4], mru);

	ck = (uint16_t)~icmp6_sum(&ip[8], &ip[24], icmp, icmp_len);
	memcpy(&icmp[2], &ck, 2); /* the sum is in memory order already */
	if (ppp_send_raw(ps, PPP_IPV6, pkt, (uint16_t)(40 + icmp_len)) == 0)
		PPPOE_CNT_INC(RA_TX);
	ps->ra_last_tsc = rte_get_timer_cycles();
}

static void
ra_timer_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;

	RTE_SET_USED(t);
	if (ps->stopped || ps->ipv6cp.state != PPP_ST_OPENED || !ps->ip6_bound)
		return;
	ra_send(ps);
	ps->ra_count++;
	ppp_timer_arm(ps, &ps->ra_timer,
		      ps->ra_count < RA_INITIAL ? ppp_timing.ra_init_ms : ppp_timing.ra_ms,
		      ra_timer_cb, ps);
}

void
ppp_ipv6cp_stop(struct ppp_sess *ps)
{
	rte_timer_stop(&ps->ra_timer);
}

bool
ppp_ipv6_rs_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len)
{
	const uint8_t *icmp;
	uint16_t plen, off;
	uint64_t now;

	if (ps->ipv6cp.state != PPP_ST_OPENED)
		return false;
	/* an IPv6 header, no extension header, ICMPv6 type 133 */
	if (len < 40 + 8 || (p[0] >> 4) != 6 || p[6] != IPPROTO_ICMPV6 || p[40] != ICMP6_RS)
		return false;
	plen = (uint16_t)(p[4] << 8 | p[5]);
	/* RFC 4861 6.1.1: hop limit 255, code 0, length >= 8, checksum valid,
	 * options with non-zero lengths inside the message */
	if (plen < 8 || plen > len - 40 || p[7] != 255 || p[41] != 0 ||
	    icmp6_sum(&p[8], &p[24], &p[40], plen) != 0xffff) {
		PPPOE_CNT_INC(RS_BAD);
		return true;
	}
	icmp = &p[40];
	for (off = 8; off < plen; off += icmp[off + 1] * 8) {
		if (plen - off < 2 || icmp[off + 1] == 0 || icmp[off + 1] * 8 > plen - off) {
			PPPOE_CNT_INC(RS_BAD);
			return true;
		}
	}
	PPPOE_CNT_INC(RS_RX);
	if (!ps->ip6_bound)
		return true; /* no prefix to advertise */
	now = rte_get_timer_cycles();
	/* MIN_DELAY_BETWEEN_RAS (RFC 4861 10) */
	if (now - ps->ra_last_tsc < rte_get_timer_hz() * ppp_timing.ra_min_ms / 1000)
		return true;
	ra_send(ps);
	return true;
}

/*
 * The session's /64 into its fast-path slot, which workers read (fast.c:
 * decap's source check, encap's route check). Relaxed: pppoe_sess_bind()'s
 * release store of the NCP bit, after these, publishes the prefix (it pairs
 * with fast.c's acquire load of fp->ncp). Atomic rather than memcpy: the
 * slot may be bound for IPv4 already, and a worker that loaded the bit
 * before IPv6CP last went down may still be reading the prefix; it reads
 * the same bytes (a session keeps its /64), but without a data race.
 */
static void
prefix_publish(struct pppoe_sess_fp *fp, const uint8_t prefix[8])
{
	uint64_t v;

	memcpy(&v, prefix, sizeof(v));
	__atomic_store_n(&fp->ip6_prefix64, v, __ATOMIC_RELAXED);
}

static void
ipv6cp_tlu(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	ppp_ncp_opened(ps);
	if (!ps->has_prefix && pppoe_pool6_alloc(ps->prefix) == 0)
		ps->has_prefix = true;
	if (!ps->has_prefix) {
		PPPOE_CNT_INC(IPV6_NO_PREFIX);
		/* its IPv6 frames are dropped on the data path, with their reason */
		pppoe_sess_ip6_noprefix(ps->s, true);
		return;
	}
	prefix_publish(ps->s->fp, ps->prefix);
	/* pppoe_sess_bind publishes the NCP bit with a release store after
	 * ip6_prefix (the data path's acquire load of ncp pairs with it) */
	if (pppoe_sess_bind(ps->s, PPPOE_NCP_IP6) < 0) {
		PPPOE_CNT_INC(BIND_FAIL);
		ppp_fsm_close(f);
		return;
	}
	ps->ip6_bound = true;
	ppp_aaa_bound(ps);
	ps->ra_count = 1;
	ra_send(ps);
	ppp_timer_arm(ps, &ps->ra_timer, ppp_timing.ra_init_ms, ra_timer_cb, ps);
}

static void
ipv6cp_tld(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	rte_timer_stop(&ps->ra_timer);
	pppoe_sess_ip6_noprefix(ps->s, false);
	if (ps->ip6_bound) {
		ps->ip6_bound = false;
		pppoe_sess_unbind(ps->s, PPPOE_NCP_IP6);
	}
}

const struct ppp_fsm_ops ppp_ipv6cp_ops = {
	.name = "ipv6cp",
	.proto = PPP_IPV6CP,
	.cnt_malformed = PPPOE_CNT_IPV6CP_MALFORMED,
	.cnt_bad_id = PPPOE_CNT_IPV6CP_BAD_ID,
	.cnt_discard = PPPOE_CNT_IPV6CP_DISCARD,
	.cnt_opened = PPPOE_CNT_IPV6CP_OPENED,
	.cnt_repeated = PPPOE_CNT_IPV6CP_REPEATED_OPT,
	.reset = ipv6cp_reset,
	.build_req = ipv6cp_build_req,
	.rx_req = ipv6cp_rx_req,
	.rx_ack = ipv6cp_rx_ack,
	.rx_nak = ipv6cp_rx_nak,
	.tlu = ipv6cp_tlu,
	.tld = ipv6cp_tld,
	.tlf = ppp_ncp_finished,
};
