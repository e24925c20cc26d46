/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RFC 1661 section 4 option-negotiation automaton, shared by LCP, IPCP
 * and IPv6CP. The state transition table of RFC 1661 4.1 is data (fsm_tab);
 * the protocols supply option handling and the this-layer actions through
 * struct ppp_fsm_ops.
 *
 * Every packet is checked before anything reads it: the Length field
 * against the bytes present (bytes beyond it are Ethernet padding and
 * ignored), and for Configure-* packets every option's length. A packet that
 * fails is discarded whole and counted.
 *
 * An action may end the session (tlf of LCP, a failed NCP): the session's
 * PPP state stays allocated until an RCU grace period later, but from the
 * moment ppp_sess_stop() ran (ps->stopped) nothing is sent and no timer is
 * armed, so the remaining actions of the event are harmless.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "ppp.h"

/* "-" in the RFC's table: the event cannot happen in this state; ignored */
#define NX 0xff

struct fsm_trans {
	uint8_t next;
	uint16_t act;
};

#define T(n, a)                 \
	{                       \
		PPP_ST_##n, (a) \
	}
#define NO            \
	{             \
		NX, 0 \
	}
#define TLU PPP_A_TLU
#define TLD PPP_A_TLD
#define TLS PPP_A_TLS
#define TLF PPP_A_TLF
#define IRC PPP_A_IRC
#define ZRC PPP_A_ZRC
#define SCR PPP_A_SCR
#define SCA PPP_A_SCA
#define SCN PPP_A_SCN
#define STR PPP_A_STR
#define STA PPP_A_STA
#define SCJ PPP_A_SCJ
#define SER PPP_A_SER

/*
 * RFC 1661 4.1, row by row. Columns: Initial, Starting, Closed, Stopped,
 * Closing, Stopping, Req-Sent, Ack-Rcvd, Ack-Sent, Opened. The restart
 * option ("r") and the passive option ("p") are not implemented: Open in
 * Stopped/Closing/Stopping/Opened keeps the state, TO- goes to Stopped.
 */
static const struct fsm_trans fsm_tab[PPP_EV_MAX][PPP_ST_MAX] = {
	[PPP_EV_UP] = {T(CLOSED, 0), T(REQ_SENT, IRC | SCR), NO, NO, NO, NO, NO, NO, NO, NO},
	[PPP_EV_DOWN] = {NO, NO, T(INITIAL, 0), T(STARTING, TLS), T(INITIAL, 0), T(STARTING, 0),
			 T(STARTING, 0), T(STARTING, 0), T(STARTING, 0), T(STARTING, TLD)},
	[PPP_EV_OPEN] = {T(STARTING, TLS), T(STARTING, 0), T(REQ_SENT, IRC | SCR), T(STOPPED, 0),
			 T(STOPPING, 0), T(STOPPING, 0), T(REQ_SENT, 0), T(ACK_RCVD, 0),
			 T(ACK_SENT, 0), T(OPENED, 0)},
	[PPP_EV_CLOSE] = {T(INITIAL, 0), T(INITIAL, TLF), T(CLOSED, 0), T(CLOSED, 0), T(CLOSING, 0),
			  T(CLOSING, 0), T(CLOSING, IRC | STR), T(CLOSING, IRC | STR),
			  T(CLOSING, IRC | STR), T(CLOSING, TLD | IRC | STR)},
	[PPP_EV_TO_P] = {NO, NO, NO, NO, T(CLOSING, STR), T(STOPPING, STR), T(REQ_SENT, SCR),
			 T(REQ_SENT, SCR), T(ACK_SENT, SCR), NO},
	[PPP_EV_TO_M] = {NO, NO, NO, NO, T(CLOSED, TLF), T(STOPPED, TLF), T(STOPPED, TLF),
			 T(STOPPED, TLF), T(STOPPED, TLF), NO},
	[PPP_EV_RCR_P] = {NO, NO, T(CLOSED, STA), T(ACK_SENT, IRC | SCR | SCA), T(CLOSING, 0),
			  T(STOPPING, 0), T(ACK_SENT, SCA), T(OPENED, SCA | TLU), T(ACK_SENT, SCA),
			  T(ACK_SENT, TLD | SCR | SCA)},
	[PPP_EV_RCR_M] = {NO, NO, T(CLOSED, STA), T(REQ_SENT, IRC | SCR | SCN), T(CLOSING, 0),
			  T(STOPPING, 0), T(REQ_SENT, SCN), T(ACK_RCVD, SCN), T(REQ_SENT, SCN),
			  T(REQ_SENT, TLD | SCR | SCN)},
	[PPP_EV_RCA] = {NO, NO, T(CLOSED, STA), T(STOPPED, STA), T(CLOSING, 0), T(STOPPING, 0),
			T(ACK_RCVD, IRC), T(REQ_SENT, SCR), T(OPENED, IRC | TLU),
			T(REQ_SENT, TLD | SCR)},
	[PPP_EV_RCN] = {NO, NO, T(CLOSED, STA), T(STOPPED, STA), T(CLOSING, 0), T(STOPPING, 0),
			T(REQ_SENT, IRC | SCR), T(REQ_SENT, SCR), T(ACK_SENT, IRC | SCR),
			T(REQ_SENT, TLD | SCR)},
	[PPP_EV_RTR] = {NO, NO, T(CLOSED, STA), T(STOPPED, STA), T(CLOSING, STA), T(STOPPING, STA),
			T(REQ_SENT, STA), T(REQ_SENT, STA), T(REQ_SENT, STA),
			T(STOPPING, TLD | ZRC | STA)},
	[PPP_EV_RTA] = {NO, NO, T(CLOSED, 0), T(STOPPED, 0), T(CLOSED, TLF), T(STOPPED, TLF),
			T(REQ_SENT, 0), T(REQ_SENT, 0), T(ACK_SENT, 0), T(REQ_SENT, TLD | SCR)},
	[PPP_EV_RUC] = {NO, NO, T(CLOSED, SCJ), T(STOPPED, SCJ), T(CLOSING, SCJ), T(STOPPING, SCJ),
			T(REQ_SENT, SCJ), T(ACK_RCVD, SCJ), T(ACK_SENT, SCJ), T(OPENED, SCJ)},
	[PPP_EV_RXJ_P] = {NO, NO, T(CLOSED, 0), T(STOPPED, 0), T(CLOSING, 0), T(STOPPING, 0),
			  T(REQ_SENT, 0), T(REQ_SENT, 0), T(ACK_SENT, 0), T(OPENED, 0)},
	[PPP_EV_RXJ_M] = {NO, NO, T(CLOSED, TLF), T(STOPPED, TLF), T(CLOSED, TLF), T(STOPPED, TLF),
			  T(STOPPED, TLF), T(STOPPED, TLF), T(STOPPED, TLF),
			  T(STOPPING, TLD | IRC | STR)},
	[PPP_EV_RXR] = {NO, NO, T(CLOSED, 0), T(STOPPED, 0), T(CLOSING, 0), T(STOPPING, 0),
			T(REQ_SENT, 0), T(ACK_RCVD, 0), T(ACK_SENT, 0), T(OPENED, SER)},
};

static const char *const state_names[PPP_ST_MAX] = {
	"initial",  "starting", "closed",   "stopped",  "closing",
	"stopping", "req-sent", "ack-rcvd", "ack-sent", "opened",
};

const char *
ppp_state_name(enum ppp_state st)
{
	return (unsigned int)st < PPP_ST_MAX ? state_names[st] : "?";
}

/* the states in which the Restart timer runs (RFC 1661 4.2) */
static bool
timer_state(enum ppp_state st)
{
	return st == PPP_ST_CLOSING || st == PPP_ST_STOPPING || st == PPP_ST_REQ_SENT ||
	       st == PPP_ST_ACK_RCVD || st == PPP_ST_ACK_SENT;
}

static void
fsm_timer_cb(struct rte_timer *t, void *arg)
{
	struct ppp_fsm *f = arg;

	RTE_SET_USED(t);
	ppp_fsm_timeout(f);
}

void
ppp_fsm_stop_timer(struct ppp_fsm *f)
{
	rte_timer_stop(&f->timer);
}

static void
fsm_start_timer(struct ppp_fsm *f)
{
	ppp_timer_arm(f->ps, &f->timer, ppp_timing.restart_ms, fsm_timer_cb, f);
}

void
ppp_fsm_init(struct ppp_fsm *f, struct ppp_sess *ps, const struct ppp_fsm_ops *ops)
{
	memset(f, 0, sizeof(*f));
	f->ps = ps;
	f->ops = ops;
	f->state = PPP_ST_INITIAL;
	f->max_configure = PPP_MAX_CONFIGURE;
	f->max_terminate = PPP_MAX_TERMINATE;
	f->max_failure = PPP_MAX_FAILURE;
	rte_timer_init(&f->timer);
}

/* scr: a new Configure-Request with a new Identifier (RFC 1661 5.1) */
static void
fsm_scr(struct ppp_fsm *f)
{
	if (f->restart > 0)
		f->restart--;
	f->req_len = f->ops->build_req(f, f->req, sizeof(f->req));
	f->req_id = f->id++;
	f->req_answered = false;
	ppp_send(f->ps, f->ops->proto, PPP_CODE_CONF_REQ, f->req_id, f->req, f->req_len);
	fsm_start_timer(f);
}

static void
fsm_str(struct ppp_fsm *f)
{
	if (f->restart > 0)
		f->restart--;
	ppp_send(f->ps, f->ops->proto, PPP_CODE_TERM_REQ, f->id++, NULL, 0);
	fsm_start_timer(f);
}

/*
 * scj: the rejected packet as received, cut to what the peer's MRU takes
 * (RFC 1661 5.6).
 */
static void
fsm_scj(struct ppp_fsm *f)
{
	uint16_t len = f->rx_pkt_len;
	uint16_t room = ppp_peer_mru(f->ps) - PPP_HDR_LEN;

	if (f->rx_pkt == NULL)
		return;
	if (len > room)
		len = room;
	ppp_cnt_inc(PPPOE_CNT_CODE_REJECT_TX);
	ppp_send(f->ps, f->ops->proto, PPP_CODE_CODE_REJ, f->id++, f->rx_pkt, len);
}

void
ppp_fsm_event(struct ppp_fsm *f, enum ppp_event ev)
{
	const struct fsm_trans *t;
	struct ppp_sess *ps = f->ps;
	enum ppp_state old = f->state;
	uint32_t a;

	if ((unsigned int)ev >= PPP_EV_MAX || (unsigned int)f->state >= PPP_ST_MAX)
		return;
	t = &fsm_tab[ev][f->state];
	f->last_act = 0;
	if (t->next == NX)
		return;
	a = t->act;
	f->last_act = a;
	f->state = t->next;
	/* an NCP in Ack-Sent: the peer may open, and send data, as soon as it
	 * acks our request; the data path holds that data (fast.c, handoff) */
	/* (kept through Opened: the bind, in this-layer-up below, takes over;
	 * cleared when it leaves for any other state) */
	if (f->state != old && (f->ops->proto == PPP_IPCP || f->ops->proto == PPP_IPV6CP) &&
	    f->state != PPP_ST_OPENED)
		pppoe_sess_ncp_acksent(ps->s,
				       f->ops->proto == PPP_IPCP ? PPPOE_NCP_IP4 : PPPOE_NCP_IP6,
				       f->state == PPP_ST_ACK_SENT);
	/* RFC 1661 4.2: the timer stops on entering a state where it does not run */
	if (!timer_state(f->state))
		ppp_fsm_stop_timer(f);

	/*
	 * The actions in the order the RFC lists them in every cell: this-layer-
	 * down first (it tells the upper layers before we renegotiate),
	 * this-layer-up after the Ack that completes the negotiation,
	 * this-layer-finished last because it may end the session.
	 */
	if (a & TLD)
		f->ops->tld(f);
	if (a & IRC) {
		/* Max-Terminate when the event terminates, else Max-Configure */
		f->restart = (a & STR) ? f->max_terminate : f->max_configure;
		/* a new negotiation (Up, Open in Closed, a request in Stopped)
		 * starts from the options we want; a Nak round keeps what the
		 * Nak changed */
		if (f->ops->reset != NULL && (a & SCR) && old < PPP_ST_CLOSING)
			f->ops->reset(f);
	}
	if (a & ZRC) {
		f->restart = 0;
		fsm_start_timer(f);
	}
	if (a & SCR)
		fsm_scr(f);
	if (a & SCA) {
		f->nak_sent = 0;
		ppp_send(ps, f->ops->proto, PPP_CODE_CONF_ACK, f->rx_id, f->reply, f->reply_len);
	}
	if (a & SCN) {
		if (f->reply_code == PPP_CODE_CONF_NAK)
			f->nak_sent++;
		ppp_send(ps, f->ops->proto, f->reply_code, f->rx_id, f->reply, f->reply_len);
	}
	if (a & STR)
		fsm_str(f);
	if (a & STA)
		ppp_send(ps, f->ops->proto, PPP_CODE_TERM_ACK, f->rx_id, NULL, 0);
	if (a & SCJ)
		fsm_scj(f);
	if ((a & SER) && f->ops->ser != NULL)
		f->ops->ser(f);
	if (a & TLU) {
		f->nak_rx = 0;
		ppp_cnt_inc(f->ops->cnt_opened);
		f->ops->tlu(f);
	}
	if ((a & TLS) && f->ops->tls != NULL)
		f->ops->tls(f);
	if (a & TLF)
		f->ops->tlf(f);
}

void
ppp_fsm_up(struct ppp_fsm *f)
{
	ppp_fsm_event(f, PPP_EV_UP);
}

void
ppp_fsm_down(struct ppp_fsm *f)
{
	ppp_fsm_event(f, PPP_EV_DOWN);
}

void
ppp_fsm_open(struct ppp_fsm *f)
{
	ppp_fsm_event(f, PPP_EV_OPEN);
}

void
ppp_fsm_close(struct ppp_fsm *f)
{
	ppp_fsm_event(f, PPP_EV_CLOSE);
}

void
ppp_fsm_timeout(struct ppp_fsm *f)
{
	if (f->ps->stopped || !timer_state(f->state))
		return;
	ppp_fsm_event(f, f->restart > 0 ? PPP_EV_TO_P : PPP_EV_TO_M);
}

bool
ppp_opts_valid(const uint8_t *opt, uint16_t len)
{
	uint16_t off = 0;

	while (off < len) {
		if (len - off < 2 || opt[off + 1] < 2 || opt[off + 1] > len - off)
			return false;
		off += opt[off + 1];
	}
	return true;
}

/*
 * A Configure-Request that carries an option type twice (none of the LCP,
 * IPCP or IPv6CP options we know may appear more than once) is not acked:
 * which copy would the peer take? The repeats, every occurrence after the
 * first, are Configure-Rejected, the first is handled as usual. A Reject
 * rather than a Nak because RFC 1661 supports it better:
 *  - 5.4: a Reject is for options "not acceptable for negotiation" and
 *    returns them unmodified and in their order, so the repeats exactly as
 *    received form a valid Reject (a proper subset of the request), and the
 *    peer MUST leave them out of its next request: the negotiation moves on;
 *  - 5.3: a Nak is for a recognised option whose value is unacceptable and
 *    must carry a value we would accept. A repeat's value may be acceptable:
 *    a Nak with it changes nothing, the peer may send the same request again
 *    and we would Nak until Max-Failure. 5.3 also forbids a Nak of an option
 *    without a value (PFC), which a Reject handles like any other.
 * Reject wins over Nak in a reply (rx_req), as for every rejected option.
 */
bool
ppp_opt_repeated(struct ppp_fsm *f, struct ppp_opt_seen *seen, uint8_t type)
{
	uint64_t bit = UINT64_C(1) << (type % 64);

	if (seen->bits[type / 64] & bit) {
		ppp_cnt_inc(f->ops->cnt_repeated);
		return true;
	}
	seen->bits[type / 64] |= bit;
	return false;
}

/* an Ack/Nak/Reject answers our last request only once (RFC 1661 5.2-5.4) */
static bool
fsm_answer_ok(struct ppp_fsm *f, uint8_t id)
{
	if (id != f->req_id || f->req_answered) {
		ppp_cnt_inc(f->ops->cnt_bad_id);
		return false;
	}
	return true;
}

/*
 * Every option of a Nak must be of a type we asked for or may ask for; a
 * Reject must list only options of our request, unmodified and in order
 * (RFC 1661 5.4). A Reject that does not is a broken packet: discard it.
 */
static bool
fsm_reject_ok(const struct ppp_fsm *f, const uint8_t *opt, uint16_t len)
{
	uint16_t off = 0, r = 0;

	while (off < len) {
		uint8_t ol = opt[off + 1];

		while (r < f->req_len && (f->req[r] != opt[off] || f->req[r + 1] != ol ||
					  memcmp(&f->req[r], &opt[off], ol) != 0))
			r += f->req[r + 1];
		if (r >= f->req_len)
			return false;
		r += ol;
		off += ol;
	}
	return true;
}

static void
fsm_rx_conf_req(struct ppp_fsm *f, const uint8_t *opt, uint16_t len)
{
	/* one static buffer: the control path is single-threaded and the reply
	 * is sent before the next packet is read */
	static uint8_t reply[PPP_PKT_MAX + PPP_FSM_NAK_EXTRA];
	uint16_t reply_len = 0;
	uint8_t code;

	if (f->state == PPP_ST_CLOSED || f->state == PPP_ST_CLOSING ||
	    f->state == PPP_ST_STOPPING) {
		/* sta/2, or silence while terminating: the options do not matter */
		ppp_fsm_event(f, PPP_EV_RCR_P);
		return;
	}
	if (len > PPP_PKT_MAX) {
		/* more than any MRU we accept: nobody sends this */
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	code = f->ops->rx_req(f, opt, len, reply, &reply_len, f->nak_sent >= f->max_failure);
	if (f->ps->stopped)
		return; /* the option handler ended the session (looped-back link) */
	f->reply_code = code;
	if (code == PPP_CODE_CONF_ACK) {
		f->reply = opt;
		f->reply_len = len;
		ppp_fsm_event(f, PPP_EV_RCR_P);
	} else {
		f->reply = reply;
		f->reply_len = reply_len;
		ppp_fsm_event(f, PPP_EV_RCR_M);
	}
}

static void
fsm_rx_conf_ack(struct ppp_fsm *f, uint8_t id, const uint8_t *opt, uint16_t len)
{
	if (!fsm_answer_ok(f, id))
		return;
	/* RFC 1661 5.2: the options exactly as we sent them */
	if (len != f->req_len || memcmp(opt, f->req, len) != 0) {
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	f->req_answered = true;
	f->nak_rx = 0;
	if (f->state == PPP_ST_REQ_SENT || f->state == PPP_ST_ACK_SENT)
		f->ops->rx_ack(f);
	ppp_fsm_event(f, PPP_EV_RCA);
}

static void
fsm_rx_conf_nak(struct ppp_fsm *f, uint8_t id, const uint8_t *opt, uint16_t len, bool rej)
{
	if (!fsm_answer_ok(f, id))
		return;
	if (rej && !fsm_reject_ok(f, opt, len)) {
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	if (f->state >= PPP_ST_REQ_SENT && f->ops->rx_nak(f, opt, len, rej) < 0) {
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	f->req_answered = true;
	/*
	 * RFC 1661 has no bound on Nak/Reject rounds: each one re-initialises
	 * the Restart counter. A peer that never accepts our options would keep
	 * us negotiating for ever; after Max-Configure rounds in a row three
	 * times over, the negotiation is treated as failed (as a catastrophic
	 * Code-Reject would be).
	 */
	if (++f->nak_rx > 3 * f->max_configure && f->state != PPP_ST_OPENED) {
		ppp_fsm_event(f, PPP_EV_RXJ_M);
		return;
	}
	ppp_fsm_event(f, PPP_EV_RCN);
}

void
ppp_fsm_input(struct ppp_fsm *f, const uint8_t *p, uint16_t len)
{
	uint16_t plen;
	uint8_t code, id;

	if (len < PPP_HDR_LEN) {
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	code = p[0];
	id = p[1];
	plen = (uint16_t)(p[2] << 8 | p[3]);
	/* RFC 1661 5: shorter than the header, or longer than what arrived:
	 * discard; bytes past Length are padding */
	if (plen < PPP_HDR_LEN || plen > len) {
		ppp_cnt_inc(f->ops->cnt_malformed);
		return;
	}
	f->rx_id = id;
	f->rx_pkt = p;
	f->rx_pkt_len = plen;
	p += PPP_HDR_LEN;
	plen -= PPP_HDR_LEN;

	if (f->state == PPP_ST_INITIAL || f->state == PPP_ST_STARTING) {
		/* the automaton takes no packet before Up (RFC 1661 4.1 "-") */
		ppp_cnt_inc(f->ops->cnt_discard);
		goto out;
	}

	switch (code) {
	case PPP_CODE_CONF_REQ:
	case PPP_CODE_CONF_ACK:
	case PPP_CODE_CONF_NAK:
	case PPP_CODE_CONF_REJ:
		if (!ppp_opts_valid(p, plen)) {
			ppp_cnt_inc(f->ops->cnt_malformed);
			goto out;
		}
		if (code == PPP_CODE_CONF_REQ)
			fsm_rx_conf_req(f, p, plen);
		else if (code == PPP_CODE_CONF_ACK)
			fsm_rx_conf_ack(f, id, p, plen);
		else
			fsm_rx_conf_nak(f, id, p, plen, code == PPP_CODE_CONF_REJ);
		break;
	case PPP_CODE_TERM_REQ:
		ppp_fsm_event(f, PPP_EV_RTR);
		if (f->ops->rtr != NULL)
			f->ops->rtr(f);
		break;
	case PPP_CODE_TERM_ACK: ppp_fsm_event(f, PPP_EV_RTA); break;
	case PPP_CODE_CODE_REJ:
		ppp_cnt_inc(PPPOE_CNT_CODE_REJECT_RX);
		if (plen < 1) {
			ppp_cnt_inc(f->ops->cnt_malformed);
			break;
		}
		/*
		 * The codes every automaton needs (1..7) being refused means the
		 * peer cannot run the protocol: RXJ-. Anything else (Echo,
		 * Discard, ...) is optional: RXJ+.
		 */
		ppp_fsm_event(f, p[0] >= PPP_CODE_CONF_REQ && p[0] <= PPP_CODE_CODE_REJ
					 ? PPP_EV_RXJ_M
					 : PPP_EV_RXJ_P);
		break;
	default:
		if (f->ops->rx_ext == NULL || !f->ops->rx_ext(f, code, id, p, plen))
			ppp_fsm_event(f, PPP_EV_RUC);
		break;
	}
out:
	f->rx_pkt = NULL;
	f->rx_pkt_len = 0;
	f->reply = NULL;
	f->reply_len = 0;
}
