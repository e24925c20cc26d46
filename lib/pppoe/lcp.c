/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LCP (RFC 1661) over PPPoE (RFC 2516, RFC 4638): options, echo keepalive,
 * Protocol-Reject, Terminate.
 *
 * Options we ask for: MRU (the configured one, at most what PPPoE carries:
 * 1492, or the PPP-Max-Payload the client got in discovery), the
 * Authentication-Protocol of the configuration (PAP, or CHAP with MD5) and a
 * Magic-Number. Options of the peer: MRU (accepted from PPP_MRU_MIN up to
 * what PPPoE carries, else Nak'd with the nearest bound), Magic-Number
 * (zero or ours: Nak'd with a fresh one; ours again and again: the link is
 * looped back), PFC (accepted: the data path reads 1-byte protocols). ACCM,
 * ACFC and FCS-Alternatives make no sense without HDLC framing and are
 * rejected (RFC 2516 7); so are Authentication-Protocol (we authenticate the
 * client, never the other way round), Quality-Protocol, anything unknown,
 * and the repeats of an option the request carries twice (fsm.c).
 *
 * Keepalive: an Echo-Reply answers our Echo-Requests only if it carries the
 * peer's negotiated Magic-Number (zero when none was negotiated, RFC 1661
 * 5.8); one with another number, or ours (the link loops our requests back),
 * is counted and does not clear the misses.
 */
#include <string.h>

#include <openssl/rand.h>
#include <rte_byteorder.h>
#include <rte_random.h>

#include "ppp.h"

#define LCP_OPT_MRU 1
#define LCP_OPT_ACCM 2
#define LCP_OPT_AUTH 3
#define LCP_OPT_QUALITY 4
#define LCP_OPT_MAGIC 5
#define LCP_OPT_PFC 7
#define LCP_OPT_ACFC 8
#define LCP_OPT_FCS_ALT 9

#define CHAP_MD5 5

static uint32_t
lcp_random_magic(uint32_t avoid)
{
	uint32_t v;

	do {
		if (RAND_bytes((unsigned char *)&v, sizeof(v)) != 1)
			v = (uint32_t)rte_rand();
	} while (v == 0 || v == avoid);
	return v;
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t
lcp_conf_mru(const struct ppp_sess *ps)
{
	uint16_t mru = pppoe_g.conf.mru != 0 ? pppoe_g.conf.mru : EGW_PPPOE_MRU_DEF;

	return RTE_MIN(mru, ps->mru_max);
}

void
ppp_lcp_init(struct ppp_sess *ps)
{
	uint16_t maxp = ps->s->max_payload;

	/* RFC 4638: PPP-Max-Payload above 1492 was granted in discovery */
	ps->mru_max = maxp > PPP_MRU_PPPOE ? RTE_MIN(maxp, EGW_PPPOE_MRU_MAX) : PPP_MRU_PPPOE;
	ps->our_mru = lcp_conf_mru(ps);
	ps->want_mru = true;
	ps->want_magic = true;
	ps->want_auth = ps->auth != EGW_PPPOE_AUTH_NONE;
	ps->our_magic = lcp_random_magic(0);
	ps->echo_s = pppoe_g.conf.keepalive_s;
	ps->echo_max = pppoe_g.conf.keepalive_misses;
}

static void
lcp_reset(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	ps->our_mru = lcp_conf_mru(ps);
	ps->want_mru = true;
	ps->want_magic = true;
	ps->want_auth = ps->auth != EGW_PPPOE_AUTH_NONE;
	ps->loops = 0;
}

static uint16_t
lcp_build_req(struct ppp_fsm *f, uint8_t *o, uint16_t room)
{
	struct ppp_sess *ps = f->ps;
	uint16_t n = 0;

	RTE_SET_USED(room); /* at most 4 + 5 + 6 bytes */
	if (ps->want_mru) {
		o[n] = LCP_OPT_MRU;
		o[n + 1] = 4;
		wr16(&o[n + 2], ps->our_mru);
		n += 4;
	}
	if (ps->want_auth) {
		o[n] = LCP_OPT_AUTH;
		if (ps->auth == EGW_PPPOE_AUTH_CHAP) {
			o[n + 1] = 5;
			wr16(&o[n + 2], PPP_CHAP);
			o[n + 4] = CHAP_MD5;
			n += 5;
		} else {
			o[n + 1] = 4;
			wr16(&o[n + 2], PPP_PAP);
			n += 4;
		}
	}
	if (ps->want_magic) {
		o[n] = LCP_OPT_MAGIC;
		o[n + 1] = 6;
		wr32(&o[n + 2], ps->our_magic);
		n += 6;
	}
	return n;
}

/* append option (type, len, value) to a Nak list */
static void
put_opt(uint8_t *out, uint16_t *n, uint8_t type, const uint8_t *val, uint8_t vlen)
{
	out[*n] = type;
	out[*n + 1] = (uint8_t)(vlen + 2);
	memcpy(&out[*n + 2], val, vlen);
	*n += (uint16_t)(vlen + 2);
}

static uint8_t
lcp_rx_req(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, uint8_t *out, uint16_t *out_len,
	   bool reject_naks)
{
	struct ppp_sess *ps = f->ps;
	/* Nak and Reject lists: each at most as long as the request (a Nak'd
	 * option keeps its length) */
	static uint8_t rej[PPP_PKT_MAX];
	struct ppp_opt_seen seen = {{0}};
	uint8_t *nak = out;
	uint16_t nn = 0, nr = 0, off;
	uint16_t mru = 0;
	uint32_t magic = 0;

	for (off = 0; off < len; off += opt[off + 1]) {
		const uint8_t *o = &opt[off];
		uint8_t t = o[0], ol = o[1];
		uint8_t v[4];
		bool bad = false;

		if (ppp_opt_repeated(f, &seen, t)) {
			/* a second copy: rejected, the first one counts (fsm.c) */
			memcpy(&rej[nr], o, ol);
			nr += ol;
			continue;
		}
		switch (t) {
		case LCP_OPT_MRU:
			if (ol != 4) {
				bad = true;
				break;
			}
			mru = rd16(&o[2]);
			if (mru > ps->mru_max || mru < PPP_MRU_MIN) {
				if (reject_naks) {
					bad = true;
					break;
				}
				wr16(v, mru > ps->mru_max ? ps->mru_max : PPP_MRU_MIN);
				put_opt(nak, &nn, t, v, 2);
			}
			break;
		case LCP_OPT_MAGIC:
			if (ol != 6) {
				bad = true;
				break;
			}
			magic = rd32(&o[2]);
			if (magic != 0 && magic != ps->our_magic)
				break;
			if (magic != 0) {
				/* our own number came back: a looped-back link, or an
				 * unlucky pick (RFC 1661 6.4); after Max-Failure of
				 * them, give up */
				PPPOE_CNT_INC(LCP_LOOPBACK);
				if (++ps->loops >= f->max_failure) {
					ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_LCP_FAIL);
					return PPP_CODE_CONF_REJ;
				}
			}
			if (reject_naks) {
				bad = true;
				break;
			}
			/* RFC 1661 6.4: zero is illegal and MUST be Nak'd */
			wr32(v, lcp_random_magic(ps->our_magic));
			put_opt(nak, &nn, t, v, 4);
			break;
		case LCP_OPT_PFC: bad = ol != 2; break;
		case LCP_OPT_ACCM:
		case LCP_OPT_ACFC:
		case LCP_OPT_FCS_ALT: /* RFC 2516 7: no HDLC framing on PPPoE */
		case LCP_OPT_AUTH:    /* we do not authenticate ourselves */
		case LCP_OPT_QUALITY:
		default: bad = true; break;
		}
		if (bad) {
			memcpy(&rej[nr], o, ol);
			nr += ol;
		}
	}
	/* RFC 1661 5.3/5.4: a Reject if anything is rejected, else a Nak if
	 * anything is Nak'd, else an Ack */
	if (nr != 0) {
		memcpy(out, rej, nr);
		*out_len = nr;
		return PPP_CODE_CONF_REJ;
	}
	if (nn != 0) {
		*out_len = nn;
		return PPP_CODE_CONF_NAK;
	}
	ps->peer_mru = mru;
	ps->peer_magic = magic;
	return PPP_CODE_CONF_ACK;
}

static void
lcp_rx_ack(struct ppp_fsm *f)
{
	RTE_SET_USED(f);
}

static int
lcp_rx_nak(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, bool rej)
{
	struct ppp_sess *ps = f->ps;
	bool auth_refused = false;
	uint16_t off;

	for (off = 0; off < len; off += opt[off + 1]) {
		const uint8_t *o = &opt[off];
		uint8_t t = o[0], ol = o[1];

		if (rej) {
			/* fsm.c checked the option was in our request */
			if (t == LCP_OPT_MRU)
				ps->want_mru = false;
			else if (t == LCP_OPT_MAGIC)
				ps->want_magic = false;
			else if (t == LCP_OPT_AUTH)
				auth_refused = true;
			continue;
		}
		switch (t) {
		case LCP_OPT_MRU:
			if (ol != 4)
				return -1;
			/* the peer wants to send us other sizes: fine within what
			 * PPPoE carries */
			if (rd16(&o[2]) <= ps->mru_max && rd16(&o[2]) >= PPP_MRU_MIN)
				ps->our_mru = rd16(&o[2]);
			break;
		case LCP_OPT_MAGIC:
			if (ol != 6)
				return -1;
			/* RFC 1661 6.4: pick a new random number, not the suggestion */
			ps->our_magic = lcp_random_magic(ps->our_magic);
			break;
		case LCP_OPT_AUTH:
			if (ol < 4)
				return -1;
			/*
			 * The peer suggests another protocol. The configured method is
			 * policy: we ask for it again (a downgrade from CHAP to PAP is
			 * not ours to accept); a peer that cannot do it ends up
			 * rejecting the option, and the session closes.
			 */
			break;
		default:
			/* an option we did not ask for: RFC 1661 5.3 allows it as a
			 * hint, we do not take it */
			break;
		}
	}
	if (auth_refused && ps->auth != EGW_PPPOE_AUTH_NONE) {
		PPPOE_CNT_INC(AUTH_REJECTED);
		ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
	}
	return 0;
}

/* ---------------- keepalive ---------------- */

static void
echo_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;
	uint8_t m[4];

	RTE_SET_USED(t);
	if (ps->stopped || ps->lcp.state != PPP_ST_OPENED || ps->echo_s == 0)
		return;
	if (ps->echo_missed >= ps->echo_max) {
		PPPOE_CNT_INC(ECHO_TIMEOUT);
		/* the peer is gone: no Terminate-Request to wait on, a PADT */
		pppoe_sess_close(ps->s, EGW_PPPOE_CAUSE_ECHO, true);
		return;
	}
	wr32(m, ps->want_magic ? ps->our_magic : 0);
	/* a request that could not be sent (no mbuf) is not one the peer missed */
	if (ppp_send(ps, PPP_LCP, PPP_CODE_ECHO_REQ, ps->lcp.id++, m, sizeof(m)) == 0) {
		ps->echo_missed++;
		PPPOE_CNT_INC(ECHO_TX);
	}
	ppp_timer_arm(ps, &ps->echo_timer, ps->echo_s * 1000, echo_cb, ps);
}

void
ppp_lcp_echo_start(struct ppp_sess *ps)
{
	ps->echo_missed = 0;
	if (ps->echo_s == 0)
		return;
	ppp_timer_arm(ps, &ps->echo_timer, ps->echo_s * 1000, echo_cb, ps);
}

void
ppp_lcp_echo_stop(struct ppp_sess *ps)
{
	rte_timer_stop(&ps->echo_timer);
}

/* ---------------- other codes ---------------- */

void
ppp_lcp_proto_reject(struct ppp_sess *ps, uint16_t proto, const uint8_t *info, uint16_t len)
{
	static uint8_t buf[PPP_PKT_MAX];
	uint16_t room = ppp_peer_mru(ps) - PPP_HDR_LEN - 2;

	/* RFC 1661 5.7: the rejected information, cut to the peer's MRU */
	if (len > room)
		len = room;
	wr16(buf, proto);
	memcpy(&buf[2], info, len);
	PPPOE_CNT_INC(PROTOCOL_REJECT_TX);
	ppp_send(ps, PPP_LCP, PPP_CODE_PROTO_REJ, ps->lcp.id++, buf, (uint16_t)(len + 2));
}

/* a Protocol-Reject from the peer (RFC 1661 5.7) */
static void
lcp_rx_proto_rej(struct ppp_fsm *f, const uint8_t *data, uint16_t len)
{
	struct ppp_sess *ps = f->ps;
	uint16_t proto;

	if (len < 2) {
		PPPOE_CNT_INC(LCP_MALFORMED);
		return;
	}
	if (f->state != PPP_ST_OPENED) {
		PPPOE_CNT_INC(LCP_DISCARD);
		return;
	}
	PPPOE_CNT_INC(PROTOCOL_REJECT_RX);
	proto = rd16(data);
	switch (proto) {
	case PPP_LCP: ppp_fsm_event(f, PPP_EV_RXJ_M); break;
	case PPP_IPCP:
	case PPP_IP:
		/* the peer does not do IPv4: that NCP stops, the link stays */
		ppp_fsm_event(&ps->ipcp, PPP_EV_RXJ_M);
		break;
	case PPP_IPV6CP:
	case PPP_IPV6: ppp_fsm_event(&ps->ipv6cp, PPP_EV_RXJ_M); break;
	case PPP_PAP:
	case PPP_CHAP:
		if (ps->phase == PPP_PHASE_AUTH) {
			PPPOE_CNT_INC(AUTH_REJECTED);
			ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_AUTH_FAIL);
			break;
		}
		ppp_fsm_event(f, PPP_EV_RXJ_P);
		break;
	default: ppp_fsm_event(f, PPP_EV_RXJ_P); break;
	}
}

/*
 * An Echo-Reply in the Opened state (RFC 1661 5.8): the sender puts its own
 * Magic-Number in it, zero when it negotiated none. Anything else is not an
 * answer from this peer: a reply with our own number is our request come
 * back (a looped-back link, 6.4), another number a stale or foreign one.
 * Either way the peer is not shown to be alive.
 */
static void
lcp_rx_echo_reply(struct ppp_sess *ps, uint32_t magic)
{
	if (magic != ps->peer_magic || (magic != 0 && magic == ps->our_magic)) {
		PPPOE_CNT_INC(ECHO_BAD_MAGIC);
		return;
	}
	PPPOE_CNT_INC(ECHO_RX);
	ps->echo_missed = 0;
}

static bool
lcp_rx_ext(struct ppp_fsm *f, uint8_t code, uint8_t id, const uint8_t *data, uint16_t len)
{
	struct ppp_sess *ps = f->ps;

	RTE_SET_USED(id);
	switch (code) {
	case PPP_CODE_PROTO_REJ: lcp_rx_proto_rej(f, data, len); return true;
	case PPP_CODE_ECHO_REQ:
	case PPP_CODE_ECHO_REP:
	case PPP_CODE_DISC_REQ:
		/* RFC 1661 5.8: a Magic-Number field, then anything */
		if (len < 4) {
			PPPOE_CNT_INC(LCP_MALFORMED);
			return true;
		}
		if (f->state != PPP_ST_OPENED) {
			/* RFC 1661 5.8: only in the Opened state; else silent */
			PPPOE_CNT_INC(LCP_DISCARD);
			return true;
		}
		if (code == PPP_CODE_ECHO_REP)
			lcp_rx_echo_reply(ps, rd32(data));
		ppp_fsm_event(f, PPP_EV_RXR);
		return true;
	default: return false;
	}
}

/* ser: answer an Echo-Request with our Magic-Number and its data */
static void
lcp_ser(struct ppp_fsm *f)
{
	static uint8_t buf[PPP_PKT_MAX];
	struct ppp_sess *ps = f->ps;
	uint16_t len, room;

	if (f->rx_pkt == NULL || f->rx_pkt[0] != PPP_CODE_ECHO_REQ)
		return;
	PPPOE_CNT_INC(ECHO_REQ_RX);
	len = (uint16_t)(f->rx_pkt_len - PPP_HDR_LEN);
	room = ppp_peer_mru(ps) - PPP_HDR_LEN;
	if (len > room)
		len = room;
	memcpy(buf, &f->rx_pkt[PPP_HDR_LEN], len);
	/* RFC 1661 5.8: our Magic-Number, or zero when it was not negotiated */
	wr32(buf, ps->want_magic ? ps->our_magic : 0);
	ppp_send(ps, PPP_LCP, PPP_CODE_ECHO_REP, f->rx_id, buf, len);
}

static void
lcp_rtr(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	/* the Terminate-Ack went out with the table's sta: the client is
	 * leaving, the session ends (PADT) */
	PPPOE_CNT_INC(LCP_TERM_RX);
	if (!ps->stopped)
		pppoe_sess_close(ps->s, EGW_PPPOE_CAUSE_LCP_TERM, true);
}

static void
lcp_tlu(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	pppoe_sess_set_mru(ps->s, ppp_peer_mru(ps));
	ppp_lcp_echo_start(ps);
	ppp_phase_auth(ps);
}

static void
lcp_tld(struct ppp_fsm *f)
{
	ppp_phase_establish(f->ps);
}

static void
lcp_tls(struct ppp_fsm *f)
{
	/* the lower layer (the PPPoE session) is up already */
	RTE_SET_USED(f);
}

static void
lcp_tlf(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;
	enum egw_pppoe_cause cause = ps->close_cause;

	if (ps->stopped)
		return;
	if (cause == EGW_PPPOE_CAUSE_NONE)
		cause = EGW_PPPOE_CAUSE_LCP_FAIL;
	pppoe_sess_close(ps->s, cause, true);
}

const struct ppp_fsm_ops ppp_lcp_ops = {
	.name = "lcp",
	.proto = PPP_LCP,
	.cnt_malformed = PPPOE_CNT_LCP_MALFORMED,
	.cnt_bad_id = PPPOE_CNT_LCP_BAD_ID,
	.cnt_discard = PPPOE_CNT_LCP_DISCARD,
	.cnt_opened = PPPOE_CNT_LCP_OPENED,
	.cnt_repeated = PPPOE_CNT_LCP_REPEATED_OPT,
	.reset = lcp_reset,
	.build_req = lcp_build_req,
	.rx_req = lcp_rx_req,
	.rx_ack = lcp_rx_ack,
	.rx_nak = lcp_rx_nak,
	.rx_ext = lcp_rx_ext,
	.ser = lcp_ser,
	.rtr = lcp_rtr,
	.tlu = lcp_tlu,
	.tld = lcp_tld,
	.tls = lcp_tls,
	.tlf = lcp_tlf,
};
