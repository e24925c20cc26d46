/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-session PPP glue: start, input demultiplexing by protocol and phase
 * (RFC 1661 3), the phases, the Establish- and network-phase timers, stop
 * and free.
 *
 * Data frames (IPv4 0x0021, IPv6 0x0057) that reach the control path are
 * never forwarded from here: the data path forwards a bound session's
 * frames, and forwarding a frame from here too could overtake or be
 * overtaken by it. They are discarded and counted, as ncp_not_open when
 * their NCP is not opened (RFC 1661 3.4: silently discarded) or as
 * handoff_discard when it is (the data path queued them before it saw the
 * session bound). The one exception is the IPv6 Router Solicitation, which
 * is addressed to us.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_lcore.h>

#include "ppp.h"

struct ppp_timing ppp_timing = {
	.restart_ms = 3000,
	.lcp_ms = PPP_LCP_TIMEOUT_MS,
	.auth_ms = PPP_AUTH_TIMEOUT_MS,
	.ncp_ms = PPP_NCP_TIMEOUT_MS,
	.ra_init_ms = 4000,
	.ra_ms = 600000,
	.ra_min_ms = 3000,
};

void
ppp_cnt_inc(unsigned int cnt)
{
	if (cnt >= PPPOE_CNT_MAX)
		return;
	/* one writer (the control path); readers load relaxed */
	__atomic_store_n(&pppoe_cnt[cnt], pppoe_cnt[cnt] + 1, __ATOMIC_RELAXED);
}

int
ppp_send_raw(struct ppp_sess *ps, uint16_t proto, const void *data, uint16_t len)
{
	int rc;

	if (ps->stopped)
		return -EPIPE;
	rc = pppoe_sess_send(ps->s, proto, data, len);
	if (rc < 0) {
		PPPOE_CNT_INC(PPP_TX_FAIL);
		return rc;
	}
	PPPOE_CNT_INC(PPP_TX);
	return 0;
}

int
ppp_send(struct ppp_sess *ps, uint16_t proto, uint8_t code, uint8_t id, const void *data,
	 uint16_t len)
{
	static uint8_t buf[PPP_HDR_LEN + PPP_PKT_MAX + PPP_FSM_NAK_EXTRA];
	uint16_t total;

	if (ps->stopped)
		return -EPIPE;
	if (len > sizeof(buf) - PPP_HDR_LEN) {
		PPPOE_CNT_INC(PPP_TX_FAIL);
		return -EINVAL;
	}
	total = (uint16_t)(len + PPP_HDR_LEN);
	buf[0] = code;
	buf[1] = id;
	buf[2] = (uint8_t)(total >> 8);
	buf[3] = (uint8_t)total;
	if (len != 0)
		memcpy(&buf[PPP_HDR_LEN], data, len);
	return ppp_send_raw(ps, proto, buf, total);
}

void
ppp_timer_arm(struct ppp_sess *ps, struct rte_timer *t, unsigned int ms, rte_timer_cb_t cb,
	      void *arg)
{
	uint64_t ticks;

	if (ps->stopped)
		return;
	ticks = rte_get_timer_hz() * ms / 1000;
	if (ticks == 0)
		ticks = 1;
	if (rte_timer_reset(t, ticks, SINGLE, pppoe_g.timer_lcore, cb, arg) != 0)
		PPPOE_LOG(ERR, "session %u: timer not armed", ps->s->sid);
}

uint16_t
ppp_peer_mru(const struct ppp_sess *ps)
{
	uint16_t mru = ps->peer_mru != 0 ? ps->peer_mru : PPP_MRU_DEFAULT;

	return RTE_MIN(mru, ps->mru_max);
}

/* ---------------- phases ---------------- */

static void
lcp_timer_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;

	RTE_SET_USED(t);
	if (ps->stopped || ps->phase != PPP_PHASE_ESTABLISH || ps->lcp.state == PPP_ST_OPENED)
		return;
	PPPOE_CNT_INC(LCP_TIMEOUT);
	ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_LCP_TIMEOUT);
}

/*
 * The Establish phase began (PADS) or began again (LCP left Opened): LCP
 * must be Opened within lcp_ms, however many Restart rounds the peer keeps
 * going (see PPP_LCP_TIMEOUT_MS).
 */
static void
establish_timer_start(struct ppp_sess *ps)
{
	ppp_timer_arm(ps, &ps->lcp_timer, ppp_timing.lcp_ms, lcp_timer_cb, ps);
}

static void
ncp_timer_cb(struct rte_timer *t, void *arg)
{
	struct ppp_sess *ps = arg;

	RTE_SET_USED(t);
	if (ps->stopped || ps->phase != PPP_PHASE_NETWORK)
		return;
	if (ps->ipcp.state == PPP_ST_OPENED || ps->ipv6cp.state == PPP_ST_OPENED)
		return;
	PPPOE_CNT_INC(NCP_TIMEOUT);
	ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_NCP_FAIL);
}

void
ppp_phase_auth(struct ppp_sess *ps)
{
	/* LCP opened: the Establish phase is over */
	rte_timer_stop(&ps->lcp_timer);
	if (ps->auth == EGW_PPPOE_AUTH_NONE) {
		ppp_phase_network(ps);
		return;
	}
	ps->phase = PPP_PHASE_AUTH;
	ppp_auth_start(ps);
}

void
ppp_phase_network(struct ppp_sess *ps)
{
	if (ps->stopped)
		return;
	ps->phase = PPP_PHASE_NETWORK;
	ppp_timer_arm(ps, &ps->ncp_timer, ppp_timing.ncp_ms, ncp_timer_cb, ps);
	/*
	 * Without an address to give, IPCP gets Up but no Open: it stays
	 * Closed and answers the peer's requests with Terminate-Ack (RFC 1661
	 * 4.1), which tells the peer IPv4 is not available here.
	 */
	if (ppp_ipcp_choose_addr(ps))
		ppp_fsm_open(&ps->ipcp);
	else
		PPPOE_CNT_INC(IPCP_NO_ADDRESS);
	ppp_fsm_up(&ps->ipcp);
	ppp_fsm_open(&ps->ipv6cp);
	ppp_fsm_up(&ps->ipv6cp);
}

void
ppp_phase_establish(struct ppp_sess *ps)
{
	ps->phase = PPP_PHASE_ESTABLISH;
	ppp_lcp_echo_stop(ps);
	ppp_auth_stop(ps);
	rte_timer_stop(&ps->ncp_timer);
	ppp_fsm_down(&ps->ipcp);
	ppp_fsm_down(&ps->ipv6cp);
	ppp_ipv6cp_stop(ps);
	/* RFC 1661 3.5: authentication again after a new Establish phase */
	ps->authenticated = false;
	establish_timer_start(ps);
}

void
ppp_ncp_opened(struct ppp_sess *ps)
{
	rte_timer_stop(&ps->ncp_timer);
}

static bool
ncp_alive(const struct ppp_fsm *f)
{
	return f->state >= PPP_ST_REQ_SENT;
}

void
ppp_ncp_finished(struct ppp_fsm *f)
{
	struct ppp_sess *ps = f->ps;

	if (ps->stopped || ps->phase != PPP_PHASE_NETWORK)
		return;
	if (ncp_alive(&ps->ipcp) || ncp_alive(&ps->ipv6cp))
		return;
	ppp_sess_terminate(ps->s, EGW_PPPOE_CAUSE_NCP_FAIL);
}

/* ---------------- session life ---------------- */

int
ppp_sess_start(struct pppoe_sess *s)
{
	struct ppp_sess *ps;

	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return -ENOMEM;
	ps->s = s;
	ps->auth = pppoe_g.conf.auth;
	ps->phase = PPP_PHASE_ESTABLISH;
	ppp_fsm_init(&ps->lcp, ps, &ppp_lcp_ops);
	ppp_fsm_init(&ps->ipcp, ps, &ppp_ipcp_ops);
	ppp_fsm_init(&ps->ipv6cp, ps, &ppp_ipv6cp_ops);
	rte_timer_init(&ps->echo_timer);
	rte_timer_init(&ps->lcp_timer);
	rte_timer_init(&ps->auth_timer);
	rte_timer_init(&ps->chap_timer);
	rte_timer_init(&ps->ncp_timer);
	rte_timer_init(&ps->ra_timer);
	ppp_lcp_init(ps);
	ppp_ipv6cp_init(ps);
	s->ppp = ps;
	/* the PPPoE session is the lower layer, already up (RFC 2516 6) */
	establish_timer_start(ps);
	ppp_fsm_open(&ps->lcp);
	ppp_fsm_up(&ps->lcp);
	return 0;
}

void
ppp_sess_stop(struct pppoe_sess *s)
{
	struct ppp_sess *ps = s->ppp;

	if (ps == NULL)
		return;
	ps->stopped = true;
	ps->phase = PPP_PHASE_DEAD;
	/*
	 * A timer already marked running by this round of rte_timer_manage()
	 * cannot be stopped here; its callback still runs, sees ps->stopped
	 * and returns. ps itself lives until ppp_sess_free(), after the grace
	 * period, long after this round.
	 */
	ppp_fsm_stop_timer(&ps->lcp);
	ppp_fsm_stop_timer(&ps->ipcp);
	ppp_fsm_stop_timer(&ps->ipv6cp);
	rte_timer_stop(&ps->echo_timer);
	rte_timer_stop(&ps->lcp_timer);
	rte_timer_stop(&ps->auth_timer);
	rte_timer_stop(&ps->chap_timer);
	rte_timer_stop(&ps->ncp_timer);
	rte_timer_stop(&ps->ra_timer);
}

void
ppp_sess_terminate(struct pppoe_sess *s, enum egw_pppoe_cause cause)
{
	struct ppp_sess *ps = s->ppp;

	if (ps != NULL && !ps->stopped) {
		ps->close_cause = cause;
		/* Terminate-Request (RFC 1661 4.1 Close); no wait for the Ack:
		 * the PADT that follows ends the session for both sides */
		ppp_fsm_close(&ps->lcp);
	}
	pppoe_sess_close(s, cause, true);
}

void
ppp_sess_free(struct pppoe_sess *s)
{
	struct ppp_sess *ps = s->ppp;

	if (ps == NULL)
		return;
	ppp_sess_stop(s);
	ppp_aaa_free(ps);
	/* the data path could read the address until the grace period ended:
	 * only now may another session get it */
	if (ps->addr != 0 && ps->addr_from_pool)
		pppoe_pool4_release(ps->addr);
	if (ps->has_prefix && !ps->prefix_fixed)
		pppoe_pool6_release(ps->prefix);
	free(ps);
	s->ppp = NULL;
}

const char *
ppp_sess_user(const struct pppoe_sess *s)
{
	return s->ppp != NULL ? s->ppp->user : "";
}

const char *
ppp_sess_filter_set(const struct pppoe_sess *s)
{
	return s->ppp != NULL ? s->ppp->filter_set : "";
}

int
ppp_sess_set_filter_set(struct pppoe_sess *s, const char *set)
{
	if (s->ppp == NULL)
		return -ENOENT;
	if (set == NULL)
		set = "";
	if (strlen(set) >= sizeof(s->ppp->filter_set))
		return -ESRCH;
	strcpy(s->ppp->filter_set, set);
	return 0;
}

void
ppp_sess_info(const struct pppoe_sess *s, struct egw_pppoe_session_info *info)
{
	const struct ppp_sess *ps = s->ppp;

	if (ps == NULL) {
		snprintf(info->lcp, sizeof(info->lcp), "%s", ppp_state_name(PPP_ST_INITIAL));
		snprintf(info->ipcp, sizeof(info->ipcp), "%s", ppp_state_name(PPP_ST_INITIAL));
		snprintf(info->ipv6cp, sizeof(info->ipv6cp), "%s", ppp_state_name(PPP_ST_INITIAL));
		info->user[0] = '\0';
		info->filter_set[0] = '\0';
		memset(info->ip6_iid, 0, sizeof(info->ip6_iid));
		info->echo_missed = 0;
		return;
	}
	snprintf(info->lcp, sizeof(info->lcp), "%s", ppp_state_name(ps->lcp.state));
	snprintf(info->ipcp, sizeof(info->ipcp), "%s", ppp_state_name(ps->ipcp.state));
	snprintf(info->ipv6cp, sizeof(info->ipv6cp), "%s", ppp_state_name(ps->ipv6cp.state));
	snprintf(info->user, sizeof(info->user), "%s", ps->user);
	snprintf(info->filter_set, sizeof(info->filter_set), "%s", ps->filter_set);
	memcpy(info->ip6_iid, ps->peer_iid, sizeof(info->ip6_iid));
	info->echo_missed = ps->echo_missed;
}

/* ---------------- input ---------------- */

static void
data_discard(const struct ppp_fsm *ncp)
{
	if (ncp->state == PPP_ST_OPENED)
		PPPOE_CNT_INC(HANDOFF_DISCARD);
	else
		PPPOE_CNT_INC(NCP_NOT_OPEN);
}

static void
ppp_dispatch(struct pppoe_sess *s, const uint8_t *p, uint16_t len)
{
	struct ppp_sess *ps = s->ppp;
	uint16_t proto, hl;

	if (ps == NULL || ps->stopped)
		return;
	PPPOE_CNT_INC(PPP_RX);
	if (len < 2) {
		/* no room for a protocol and at least one byte */
		PPPOE_CNT_INC(PPP_SHORT);
		return;
	}
	/* RFC 1661 6.5: an odd first byte is a compressed (1-byte) protocol */
	if (p[0] & 1) {
		proto = p[0];
		hl = 1;
	} else {
		proto = (uint16_t)(p[0] << 8 | p[1]);
		hl = 2;
		/* RFC 1661 2: the low byte of every protocol number is odd */
		if ((proto & 1) == 0) {
			PPPOE_CNT_INC(PPP_BAD_PROTO);
			return;
		}
	}
	p += hl;
	len -= hl;

	switch (proto) {
	case PPP_LCP: ppp_fsm_input(&ps->lcp, p, len); break;
	case PPP_PAP:
	case PPP_CHAP:
		/* RFC 1661 3.5: nothing of authentication before LCP opened */
		if ((ps->phase != PPP_PHASE_AUTH && ps->phase != PPP_PHASE_NETWORK) ||
		    (proto == PPP_PAP && ps->auth != EGW_PPPOE_AUTH_PAP) ||
		    (proto == PPP_CHAP && ps->auth != EGW_PPPOE_AUTH_CHAP)) {
			PPPOE_CNT_INC(AUTH_DISCARD);
			break;
		}
		if (proto == PPP_PAP)
			ppp_pap_input(ps, p, len);
		else
			ppp_chap_input(ps, p, len);
		break;
	case PPP_IPCP:
	case PPP_IPV6CP:
		/* RFC 1661 3.4: NCP packets before the network phase are discarded */
		if (ps->phase != PPP_PHASE_NETWORK) {
			PPPOE_CNT_INC(NCP_DISCARD);
			break;
		}
		ppp_fsm_input(proto == PPP_IPCP ? &ps->ipcp : &ps->ipv6cp, p, len);
		break;
	case PPP_IP: data_discard(&ps->ipcp); break;
	case PPP_IPV6:
		if (ps->phase == PPP_PHASE_NETWORK && ppp_ipv6_rs_input(ps, p, len))
			break;
		data_discard(&ps->ipv6cp);
		break;
	default:
		/* RFC 1661 5.7: Protocol-Reject only in the LCP Opened state */
		if (ps->lcp.state == PPP_ST_OPENED)
			ppp_lcp_proto_reject(ps, proto, p, len);
		else
			PPPOE_CNT_INC(PPP_UNKNOWN_PROTO);
		break;
	}
}

/* One frame of a session: its replies leave when it is handled (held:
 * pppoe_tx_hold()), after the state they announce. */
void
ppp_input(struct pppoe_sess *s, const uint8_t *p, uint16_t len)
{
	pppoe_tx_hold();
	ppp_dispatch(s, p, len);
	pppoe_tx_release();
}
