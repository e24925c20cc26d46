/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path of lib/pppoe: set-up and tear-down, the service loop, the
 * dispatch of frames the data path hands over, the frames the control path
 * builds, and the control counters.
 *
 * Everything here runs on one thread at a time (the caller serialises), so
 * the counters are plain variables written with relaxed atomic stores: other
 * threads (telemetry) read them with relaxed loads and never see a torn value.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_timer.h>

#include "pppoe_private.h"

RTE_LOG_REGISTER_DEFAULT(egw_pppoe_logtype, NOTICE);

struct pppoe_glob pppoe_g;
uint64_t pppoe_cnt[PPPOE_CNT_MAX];

static const char *const cnt_names[PPPOE_CNT_MAX] = {
#define PPPOE_CNT(e, n, d) [PPPOE_CNT_##e] = n,
#include "pppoe_cnt_disc.def"
#include "pppoe_cnt_ppp.def"
#include "pppoe_cnt_sess.def"
#undef PPPOE_CNT
};

/*
 * Frames of more than one segment are copied here so that the parsers see
 * contiguous bytes (control path only, one thread: a static buffer is safe).
 * 9216 bytes: the largest jumbo frame an access port takes.
 */
#define CTL_SCRATCH 9216
static uint8_t ctl_scratch[CTL_SCRATCH] __rte_cache_aligned;

/* Frames held by pppoe_tx_hold() (pppoe_private.h), in the order made. */
#define TX_HOLD_MAX 16
static struct {
	unsigned int depth;
	unsigned int n;
	uint16_t port[TX_HOLD_MAX];
	struct rte_mbuf *m[TX_HOLD_MAX];
} tx_hold;

static void
tx_hold_flush(void)
{
	unsigned int i, n = tx_hold.n;

	tx_hold.n = 0;
	for (i = 0; i < n; i++)
		pppoe_g.tx(tx_hold.port[i], tx_hold.m[i], pppoe_g.tx_arg);
}

void
pppoe_tx_hold(void)
{
	tx_hold.depth++;
}

void
pppoe_tx_release(void)
{
	if (tx_hold.depth > 0 && --tx_hold.depth == 0)
		tx_hold_flush();
}

/* Most PPP information bytes sent before LCP sets the peer's MRU (RFC 2516). */
#define PPPOE_DEF_PAYLOAD 1492

/* How long egw_pppoe_fini() waits for workers to pass a grace period. */
#define FINI_WAIT_MS 1000

unsigned int
egw_pppoe_ctrl_counters(const char **names, uint64_t *values, unsigned int max)
{
	unsigned int i, n;

	/* no arrays: the caller asks how many there are */
	if (names == NULL && values == NULL)
		return PPPOE_CNT_MAX;
	n = RTE_MIN(max, (unsigned int)PPPOE_CNT_MAX);
	for (i = 0; i < n; i++) {
		if (names != NULL)
			names[i] = cnt_names[i];
		if (values != NULL)
			values[i] = __atomic_load_n(&pppoe_cnt[i], __ATOMIC_RELAXED);
	}
	return n;
}

static void
conf_defaults(struct pppoe_conf *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->ac_name, "edgegw");
	c->max_sessions = pppoe_g.table_size;
	c->max_per_mac = RTE_MIN(EGW_PPPOE_PER_MAC_DEF, pppoe_g.table_size);
	c->max_starting = RTE_MIN(EGW_PPPOE_STARTING_DEF, pppoe_g.table_size);
	c->padi_rate = c->padr_rate = EGW_PPPOE_DISC_RATE_DEF;
	c->padi_rate_mac = c->padr_rate_mac = EGW_PPPOE_DISC_RATE_MAC_DEF;
	c->auth_hold_s = EGW_PPPOE_AUTH_HOLD_DEF;
	c->mru = EGW_PPPOE_MRU_DEF;
	c->mss_mode = EGW_PPPOE_MSS_AUTO;
	c->keepalive_s = 30;
	c->keepalive_misses = 3;
	c->auth = EGW_PPPOE_AUTH_PAP;
}

int
egw_pppoe_init(const struct egw_pppoe_params *p)
{
	unsigned int size;
	int rc;

	if (p == NULL || p->qsbr == NULL || p->pool == NULL || p->tx == NULL ||
	    p->max_sessions > EGW_PPPOE_MAX_SESSIONS || p->nb_ctx == 0 ||
	    p->nb_ctx > EGW_PPPOE_MAX_CTX)
		return -EINVAL;
	if (pppoe_g.init)
		return -EEXIST;
	/* rte_timer_manage() runs the timers of its caller's lcore: a thread
	 * without an lcore id (not an EAL thread) could never run the PPP timers */
	if (rte_lcore_id() == LCORE_ID_ANY)
		return -EINVAL;
	size = p->max_sessions == 0 ? EGW_PPPOE_MAX_SESSIONS : p->max_sessions;

	/* -EALREADY: the application (or an earlier init) set it up already */
	rc = rte_timer_subsystem_init();
	if (rc != 0 && rc != -EALREADY)
		return rc;

	pppoe_g.qsbr = p->qsbr;
	pppoe_g.pool = p->pool;
	pppoe_g.tx = p->tx;
	pppoe_g.tx_arg = p->tx_arg;
	pppoe_g.nb_ctx = p->nb_ctx;
	pppoe_g.table_size = size;
	pppoe_g.socket = p->socket;
	pppoe_g.route = p->route;
	pppoe_g.route_arg = p->route_arg;
	pppoe_g.src_check = p->src_check;
	pppoe_g.src_check_arg = p->src_check_arg;
	/*
	 * The PPP timers are rte_timers armed on this lcore, and rte_timer_manage()
	 * runs only the timers of the lcore that calls it: egw_pppoe_service()
	 * must therefore run on the lcore that called egw_pppoe_init().
	 */
	pppoe_g.timer_lcore = rte_lcore_id();
	conf_defaults(&pppoe_g.conf);
	memset(pppoe_cnt, 0, sizeof(pppoe_cnt));

	rc = pppoe_sess_table_init(size, p->socket, p->route == NULL);
	if (rc != 0)
		goto fail;
	rc = pppoe_disc_init();
	if (rc != 0) {
		pppoe_sess_table_fini();
		goto fail;
	}
	pppoe_g.init = true;
	PPPOE_LOG(INFO, "up: %u sessions, timers on lcore %u", size, pppoe_g.timer_lcore);
	return 0;
fail:
	pppoe_g.qsbr = NULL;
	pppoe_g.pool = NULL;
	pppoe_g.tx = NULL;
	pppoe_g.table_size = 0;
	return rc;
}

unsigned int
egw_pppoe_shutdown(void)
{
	unsigned int sid, n = 0;

	if (!pppoe_g.init)
		return 0;
	for (sid = 1; sid <= pppoe_g.table_size; sid++) {
		struct pppoe_sess *s = pppoe_sess_get((uint16_t)sid);

		if (s != NULL && s->state != EGW_PPPOE_S_CLOSING) {
			pppoe_sess_close(s, EGW_PPPOE_CAUSE_SHUTDOWN, true);
			n++;
		}
	}
	return n;
}

void
egw_pppoe_fini(void)
{
	uint64_t hz = rte_get_timer_hz(), start;

	if (!pppoe_g.init)
		return;
	egw_pppoe_shutdown();
	/*
	 * Wait for the grace periods: workers that are still readers report
	 * quiescent within a loop; stopped workers are offline and do not hold
	 * a grace period up. A worker stuck online would make this wait for
	 * ever: give up after FINI_WAIT_MS and say so.
	 */
	start = rte_get_timer_cycles();
	for (;;) {
		pppoe_sess_service();
		if (pppoe_sess_count() == 0)
			break;
		if (rte_get_timer_cycles() - start > hz * FINI_WAIT_MS / 1000) {
			PPPOE_LOG(WARNING, "%u sessions still in a grace period at shutdown",
				  pppoe_sess_count());
			break;
		}
		rte_delay_us_sleep(1000);
	}
	pppoe_sess_table_fini();
	pppoe_disc_fini();
	pppoe_pool_fini();
	ppp_users_fini();
	pppoe_policy_fini();
	memset(&pppoe_g, 0, sizeof(pppoe_g));
	memset(pppoe_cnt, 0, sizeof(pppoe_cnt));
}

int
egw_pppoe_port_add(uint16_t port, const struct rte_ether_addr *mac, uint16_t mtu)
{
	struct pppoe_port *pt;

	if (port >= RTE_MAX_ETHPORTS || mac == NULL || mtu < RTE_ETHER_MTU ||
	    !rte_is_valid_assigned_ether_addr(mac))
		return -EINVAL;
	pt = &pppoe_g.ports[port];
	pt->mac = *mac;
	pt->mtu = mtu;
	/* the data path loads it (relaxed): the MAC and MTU are the control path's */
	__atomic_store_n(&pt->access, true, __ATOMIC_RELEASE);
	return 0;
}

unsigned int
egw_pppoe_service(void)
{
	unsigned int work = 0;

	if (!pppoe_g.init)
		return 0;
	rte_timer_manage();
	work += pppoe_disc_service(rte_rdtsc());
	work += pppoe_sess_service();
	work += pppoe_policy_service(rte_rdtsc());
	return work;
}

/* ---- received frames ------------------------------------------------------ */

void
pppoe_frame_tags(const struct rte_mbuf *m, uint8_t *n_vlan, uint16_t tci[2], rte_be16_t tpid[2])
{
	uint8_t buf[RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN];
	const uint8_t *p;
	uint8_t nv = egw_eth_meta((struct rte_mbuf *)(uintptr_t)m)->n_vlan;

	tci[0] = tci[1] = 0;
	tpid[0] = tpid[1] = 0;
	/* lib/eth walks at most two tags; a frame with more is never PPPoE */
	if (nv > 2)
		nv = 0;
	p = rte_pktmbuf_read(m, 0, RTE_ETHER_HDR_LEN + (nv == 2 ? RTE_VLAN_HLEN : 0), buf);
	if (p == NULL)
		nv = 0;
	/* lib/eth: one tag in vlan_tci; two tags: outer in vlan_tci_outer,
	 * inner in vlan_tci (full TCIs, priority kept) */
	if (nv == 1) {
		tci[0] = m->vlan_tci;
		memcpy(&tpid[0], p + 12, 2);
	} else if (nv == 2) {
		tci[0] = m->vlan_tci_outer;
		tci[1] = m->vlan_tci;
		memcpy(&tpid[0], p + 12, 2);
		memcpy(&tpid[1], p + 16, 2);
	}
	*n_vlan = nv;
}

/* A session frame (class PPPOE_SESS) the data path handed over. */
static void
sess_input(struct rte_mbuf *m)
{
	uint16_t port = m->port, sid, len, vid[2];
	uint8_t nv = egw_eth_meta(m)->n_vlan, n_vlan;
	uint32_t l2 = RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN * nv, flen = m->pkt_len;
	struct rte_ether_addr src __rte_aligned(8);
	struct pppoe_sess *s;
	struct pppoe_hdr h;
	const uint8_t *f;
	uint16_t tci[2];
	rte_be16_t tpid[2];

	if (port >= RTE_MAX_ETHPORTS || !pppoe_g.ports[port].access) {
		PPPOE_CNT_INC(CTRL_NOT_ACCESS);
		return;
	}
	if (flen > CTL_SCRATCH) {
		PPPOE_CNT_INC(CTRL_TOO_LONG);
		return;
	}
	f = rte_pktmbuf_read(m, 0, flen, ctl_scratch);
	if (f == NULL || flen < l2 + PPPOE_HDR_LEN) {
		PPPOE_CNT_INC(CTRL_SHORT);
		return;
	}
	memcpy(&h, f + l2, sizeof(h));
	if (h.ver_type != PPPOE_VER_TYPE) {
		PPPOE_CNT_INC(CTRL_BAD_VER_TYPE);
		return;
	}
	if (h.code != PPPOE_CODE_SESS) {
		PPPOE_CNT_INC(CTRL_BAD_CODE);
		return;
	}
	/* bytes after the length are Ethernet padding and never read */
	len = rte_be_to_cpu_16(h.len);
	if (len > flen - l2 - PPPOE_HDR_LEN) {
		PPPOE_CNT_INC(CTRL_BAD_LENGTH);
		return;
	}
	if (len < 2) {
		PPPOE_CNT_INC(CTRL_SHORT_PAYLOAD);
		return;
	}
	sid = rte_be_to_cpu_16(h.sid);
	pppoe_frame_tags(m, &n_vlan, tci, tpid);
	vid[0] = tci[0] & RTE_VLAN_ID_MASK;
	vid[1] = tci[1] & RTE_VLAN_ID_MASK;
	memcpy(&src, f + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
	s = pppoe_sess_find(sid, port, &src, n_vlan, vid);
	if (s == NULL) {
		/* RFC 2516 asks for nothing else (no PADT to an unknown peer) */
		PPPOE_CNT_INC(CTRL_UNKNOWN_SESSION);
		return;
	}
	s->ctrl_rx++;
	ppp_input(s, f + l2 + PPPOE_HDR_LEN, len);
	/* a chained frame was copied here: a PAP password must not stay */
	if (f == ctl_scratch)
		explicit_bzero(ctl_scratch, flen);
}

void
egw_pppoe_input(struct rte_mbuf *m)
{
	if (m == NULL)
		return;
	if (!pppoe_g.init) {
		rte_pktmbuf_free(m);
		return;
	}
	switch (egw_eth_meta(m)->cls) {
	case EGW_ETH_CLS_PPPOE_DISC:
		pppoe_disc_input(m); /* consumes m */
		return;
	case EGW_ETH_CLS_PPPOE_SESS: sess_input(m); break;
	default: PPPOE_CNT_INC(CTRL_BAD_CLASS); break;
	}
	rte_pktmbuf_free(m);
}

/* ---- frames built here ------------------------------------------------------ */

/* Room every frame from pppoe_frame_alloc() has behind its headers. */
#define FRAME_MIN_ROOM RTE_ETHER_MTU

struct rte_mbuf *
pppoe_frame_alloc(uint16_t port, const struct rte_ether_addr *dst, uint8_t n_vlan,
		  const uint16_t tci[2], const rte_be16_t tpid[2], uint16_t etype,
		  uint8_t **payload)
{
	const struct rte_ether_addr *src;
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;
	uint16_t hlen, i;
	uint8_t *p;

	if (port >= RTE_MAX_ETHPORTS || n_vlan > 2) {
		PPPOE_CNT_INC(TX_NOMEM);
		return NULL;
	}
	src = &pppoe_g.ports[port].mac;
	hlen = RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN * n_vlan;
	m = rte_pktmbuf_alloc(pppoe_g.pool);
	if (m == NULL || rte_pktmbuf_tailroom(m) < hlen + FRAME_MIN_ROOM) {
		rte_pktmbuf_free(m);
		PPPOE_CNT_INC(TX_NOMEM);
		return NULL;
	}
	p = rte_pktmbuf_mtod(m, uint8_t *);
	eh = (struct rte_ether_hdr *)p;
	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(src, &eh->src_addr);
	p += 2 * RTE_ETHER_ADDR_LEN;
	/* the tags as received, outer first: TPID then full TCI each */
	for (i = 0; i < n_vlan; i++) {
		rte_be16_t v = rte_cpu_to_be_16(tci[i]);

		memcpy(p, &tpid[i], 2);
		memcpy(p + 2, &v, 2);
		p += RTE_VLAN_HLEN;
	}
	etype = rte_cpu_to_be_16(etype);
	memcpy(p, &etype, 2);
	m->data_len = hlen;
	m->pkt_len = hlen;
	m->port = port;
	*payload = p + 2;
	return m;
}

void
pppoe_frame_send(uint16_t port, struct rte_mbuf *m, uint16_t payload_len)
{
	m->data_len = (uint16_t)(m->data_len + payload_len);
	m->pkt_len = m->data_len;
	PPPOE_CNT_INC(FRAMES_TX);
	if (tx_hold.depth > 0) {
		if (tx_hold.n == TX_HOLD_MAX)
			tx_hold_flush();
		tx_hold.port[tx_hold.n] = port;
		tx_hold.m[tx_hold.n++] = m;
		return;
	}
	pppoe_g.tx(port, m, pppoe_g.tx_arg);
}

int
pppoe_sess_send(struct pppoe_sess *s, uint16_t proto, const void *data, uint16_t len)
{
	uint16_t max = s->fp->mru, plen;
	struct pppoe_hdr h;
	struct rte_mbuf *m;
	rte_be16_t pr;
	uint8_t *p;

	/* before LCP set the peer's MRU: what discovery granted (RFC 4638), or
	 * RFC 2516's 1492 */
	if (max == 0)
		max = s->max_payload != 0 ? s->max_payload : PPPOE_DEF_PAYLOAD;
	if (len > max) {
		PPPOE_CNT_INC(TX_TOO_LONG);
		return -EINVAL;
	}
	m = pppoe_frame_alloc(s->port, &s->mac, s->n_vlan, s->tci, s->tpid,
			      EGW_ETHER_TYPE_PPPOE_SESS, &p);
	if (m == NULL)
		return -ENOMEM;
	plen = (uint16_t)(PPPOE_HDR_LEN + 2 + len);
	if (rte_pktmbuf_tailroom(m) < plen) {
		/* a jumbo MRU on a pool of standard mbufs */
		rte_pktmbuf_free(m);
		PPPOE_CNT_INC(TX_NOMEM);
		return -ENOMEM;
	}
	h.ver_type = PPPOE_VER_TYPE;
	h.code = PPPOE_CODE_SESS;
	h.sid = rte_cpu_to_be_16(s->sid);
	h.len = rte_cpu_to_be_16((uint16_t)(len + 2));
	memcpy(p, &h, sizeof(h));
	pr = rte_cpu_to_be_16(proto);
	memcpy(p + PPPOE_HDR_LEN, &pr, 2);
	if (len != 0)
		memcpy(p + PPPOE_HDR_LEN + 2, data, len);
	s->ctrl_tx++;
	pppoe_frame_send(s->port, m, plen);
	return 0;
}
