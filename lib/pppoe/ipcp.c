/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPCP (RFC 1332) with the DNS options of RFC 1877.
 *
 * We ask for our own address (the first host of the first IPv4 pool,
 * pppoe_g.local4). The peer gets one address, chosen when the network phase
 * starts: the subscriber's static address if it has one, else one from a
 * pool. Its IP-Address option is Nak'd with that address until it asks for
 * exactly it; a request without the option is Nak'd with the option added
 * (RFC 1332 3.3), since a subscriber without an address cannot be routed.
 * Primary/Secondary-DNS (129/131) are Nak'd with the configured servers, or
 * rejected when none is configured; IP-Compression-Protocol, the old
 * IP-Addresses option, the NBNS options and unknown options are rejected,
 * and so are the repeats of an option a request carries twice (fsm.c).
 *
 * With no address to give, IPCP is not opened (ppp.c): the peer's
 * Configure-Requests get Terminate-Acks (RFC 1661 4.1, Closed state).
 */
#include <string.h>

#include <rte_byteorder.h>

#include "ppp.h"

#define IPCP_OPT_ADDRS 1
#define IPCP_OPT_COMP 2
#define IPCP_OPT_ADDR 3
#define IPCP_OPT_DNS1 129
#define IPCP_OPT_NBNS1 130
#define IPCP_OPT_DNS2 131
#define IPCP_OPT_NBNS2 132

bool
ppp_ipcp_choose_addr(struct ppp_sess *ps)
{
	rte_be32_t a;
	int rc;

	if (ps->addr != 0)
		return true; /* kept across LCP renegotiation */
	if (ps->pool[0] != '\0') {
		/* Framed-Pool: that pool or nothing */
		a = pppoe_pool4_alloc_named(ps->pool);
		if (a == 0)
			return false;
		ps->addr = a;
		ps->addr_from_pool = true;
		return true;
	}
	if (ps->user_addr != 0) {
		/* 0: reserved in a pool; 1: outside every pool, usable */
		rc = pppoe_pool4_reserve(ps->user_addr);
		if (rc < 0)
			return false;
		ps->addr = ps->user_addr;
		ps->addr_from_pool = rc == 0;
		return true;
	}
	a = pppoe_pool4_alloc();
	if (a == 0)
		return false;
	ps->addr = a;
	ps->addr_from_pool = true;
	return true;
}

static void
ipcp_reset(struct ppp_fsm *f)
{
	f->ps->want_addr = pppoe_g.local4 != 0;
	f->ps->addr_acked = false;
}

static uint16_t
ipcp_build_req(struct ppp_fsm *f, uint8_t *o, uint16_t room)
{
	RTE_SET_USED(room);
	if (!f->ps->want_addr)
		return 0;
	o[0] = IPCP_OPT_ADDR;
	o[1] = 6;
	memcpy(&o[2], &pppoe_g.local4, 4); /* network order already */
	return 6;
}

static void
put_addr(uint8_t *out, uint16_t *n, uint8_t type, rte_be32_t a)
{
	out[*n] = type;
	out[*n + 1] = 6;
	memcpy(&out[*n + 2], &a, 4);
	*n += 6;
}

static uint8_t
ipcp_rx_req(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, uint8_t *out, uint16_t *out_len,
	    bool reject_naks)
{
	static uint8_t rej[PPP_PKT_MAX];
	struct ppp_opt_seen seen = {{0}};
	struct ppp_sess *ps = f->ps;
	uint16_t nn = 0, nr = 0, off;
	bool has_addr = false;

	for (off = 0; off < len; off += opt[off + 1]) {
		const uint8_t *o = &opt[off];
		uint8_t t = o[0], ol = o[1];
		rte_be32_t v, want;
		bool bad = false;

		if (ppp_opt_repeated(f, &seen, t)) {
			/* a second copy: rejected, the first one counts (fsm.c) */
			memcpy(&rej[nr], o, ol);
			nr += ol;
			continue;
		}
		switch (t) {
		case IPCP_OPT_ADDR:
		case IPCP_OPT_DNS1:
		case IPCP_OPT_DNS2:
			if (ol != 6) {
				bad = true;
				break;
			}
			if (t == IPCP_OPT_ADDR) {
				want = ps->addr;
				has_addr = true;
			} else {
				/* the authorisation's servers, else the configured ones */
				want = ps->dns[t == IPCP_OPT_DNS1 ? 0 : 1];
				if (want == 0)
					want = pppoe_g.conf.dns[t == IPCP_OPT_DNS1 ? 0 : 1];
				if (want == 0) {
					/* RFC 1877: no server to give */
					bad = true;
					break;
				}
			}
			memcpy(&v, &o[2], 4);
			if (v == want)
				break;
			if (reject_naks) {
				bad = true;
				break;
			}
			put_addr(out, &nn, t, want);
			break;
		case IPCP_OPT_ADDRS: /* RFC 1332 deprecated it */
		case IPCP_OPT_COMP:  /* no Van Jacobson compression here */
		case IPCP_OPT_NBNS1:
		case IPCP_OPT_NBNS2:
		default: bad = true; break;
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
	/* no IP-Address asked for: suggest the one it gets */
	if (!has_addr && !reject_naks && ps->addr != 0)
		put_addr(out, &nn, IPCP_OPT_ADDR, ps->addr);
	if (nn != 0) {
		*out_len = nn;
		return PPP_CODE_CONF_NAK;
	}
	ps->addr_acked = has_addr && ps->addr != 0;
	return PPP_CODE_CONF_ACK;
}

static void
ipcp_rx_ack(struct ppp_fsm *f)
{
	RTE_SET_USED(f);
}

static int
ipcp_rx_nak(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, bool rej)
{
	uint16_t off;

	for (off = 0; off < len; off += opt[off + 1]) {
		if (opt[off] != IPCP_OPT_ADDR)
			continue;
		if (rej) {
			f->ps->want_addr = false;
			continue;
		}
		if (opt[off + 1] != 6)
			return -1;
		/* our address is not the peer's to choose: ask again */
	}
	return 0;
}

static void
ipcp_tlu(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	if (!ps->addr_acked) {
		/* the peer would not take an address (Max-Failure turned our
		 * Naks into nothing): IPv4 without an address is useless */
		PPPOE_CNT_INC(IPCP_NO_ADDRESS);
		ppp_fsm_close(f);
		return;
	}
	__atomic_store_n(&ps->s->fp->ip4, ps->addr, __ATOMIC_RELAXED);
	/* pppoe_sess_bind publishes the NCP bit with a release store after
	 * fp->ip4 (the data path's acquire load of ncp pairs with it) */
	if (pppoe_sess_bind(ps->s, PPPOE_NCP_IP4) < 0) {
		PPPOE_CNT_INC(BIND_FAIL);
		ppp_fsm_close(f);
		return;
	}
	ps->ip4_bound = true;
	ppp_ncp_opened(ps);
	ppp_aaa_bound(ps);
}

static void
ipcp_tld(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	if (ps->ip4_bound) {
		ps->ip4_bound = false;
		pppoe_sess_unbind(ps->s, PPPOE_NCP_IP4);
	}
}

const struct ppp_fsm_ops ppp_ipcp_ops = {
	.name = "ipcp",
	.proto = PPP_IPCP,
	.cnt_malformed = PPPOE_CNT_IPCP_MALFORMED,
	.cnt_bad_id = PPPOE_CNT_IPCP_BAD_ID,
	.cnt_discard = PPPOE_CNT_IPCP_DISCARD,
	.cnt_opened = PPPOE_CNT_IPCP_OPENED,
	.cnt_repeated = PPPOE_CNT_IPCP_REPEATED_OPT,
	.reset = ipcp_reset,
	.build_req = ipcp_build_req,
	.rx_req = ipcp_rx_req,
	.rx_ack = ipcp_rx_ack,
	.rx_nak = ipcp_rx_nak,
	.tlu = ipcp_tlu,
	.tld = ipcp_tld,
	.tlf = ppp_ncp_finished,
};
