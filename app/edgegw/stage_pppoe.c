/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gateway stages of PPPoE termination (lib/pppoe), and its place in the
 * application: initialisation, control-path handlers, port roles, show
 * config and --stats-json.
 *
 *   - PPPoE session frames (installed before the rxtokens stage, which
 *     wraps it): from an access port, frames of bound sessions carrying IP
 *     are decapsulated and start again at the head of their class's chain
 *     (ESP, PPPoE, rxtokens, route), each class in arrival order; PPP
 *     control frames and every frame of a session not yet bound go to the
 *     control path in arrival order; the rest are dropped with a pppoe_*
 *     reason. From any other port: dropped as pppoe_not_access.
 *   - Downstream, routed (the default): a bound session's address (/32)
 *     and /64 are routes of lib/ip's FIB whose value is the session id
 *     (route_cb(), the library's route callback: lib/pppoe keeps no route
 *     table of its own), so the IP stage's one FIB lookup finds the session
 *     and egw_pppoe_stage_encap() encapsulates by id.
 *   - IPv4 and IPv6 with `set fwd gateway xconnect` (installed after the
 *     rxtokens stage and before ESP, so ESP wraps it): from an uplink port,
 *     while a session is bound, packets to a subscriber's address or /64
 *     (the same FIB, looked up without routing) become PPPoE frames for the
 *     subscriber's access port; too big for the session: dropped, and an
 *     ICMP/ICMPv6 too-big goes back out the uplink; the others go on
 *     unchanged. From other ports, or with no session bound (one load), on
 *     unchanged. Decapsulated frames keep their MAC addresses in this mode.
 *
 * Each worker has its own data-path context (index = worker index, mbufs
 * from the pool of its socket); the workers are the library's QSBR readers.
 * The control path (egw_pppoe_input(), egw_pppoe_service(), the pppoe and
 * ppp commands) runs under egw.ctrl_lock.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_launch.h>
#include <rte_malloc.h>

#include "fwd.h"

static_assert(EGW_MAX_BURST <= EGW_PPPOE_MAX_BURST, "a gateway burst must fit one lib/pppoe call");

/* lib reason r is application reason EGW_DROP_PPPOE_FIRST + r */
#define EGW_PPPOE_DROP(e, n, d)                                                              \
	static_assert(EGW_DROP_PPPOE_##e == EGW_DROP_PPPOE_FIRST + EGW_PPPOE_DROP_##e,       \
		      "drop.def: the PPPoE reasons must come right before the ESP ones, in " \
		      "lib/pppoe's order (" n ")");
#include "egw_pppoe_drop.def"
#undef EGW_PPPOE_DROP

/* Per-worker context and scratch, on the worker's socket. */
struct egw_pppoe_stage_worker {
	struct egw_pppoe_ctx *ctx;
	struct egw_pppoe_res res; /* counts zero between calls */
	/* decapsulated frames, by class (a burst and what the handoff held) */
	struct rte_mbuf *v4[EGW_PPPOE_MAX_BURST];
	struct rte_mbuf *v6[EGW_PPPOE_MAX_BURST];
};

static egw_stage_fn next_sess;
static egw_stage_fn next_stage[EGW_ETH_CLS_MAX];

/* Count the drops of one lib/pppoe call and zero res's counts for the next
 * call (the arrays are overwritten, never read past the counts). */
static inline void
pppoe_account(struct egw_burst *b, struct egw_pppoe_res *res)
{
	unsigned int r;

	for (r = 0; r < EGW_PPPOE_DROP_MAX; r++)
		b->drop[EGW_DROP_PPPOE_FIRST + r] += res->drop[r];
	memset(res, 0, offsetof(struct egw_pppoe_res, out));
}

/* The stages take at most EGW_MAX_BURST frames a call; frames the handoff
 * held come out with a burst and may make more. */
static void
stage_chunks(struct egw_burst *b, enum egw_eth_class cls, struct rte_mbuf **pkts, uint16_t n)
{
	egw_stage_fn fn = egw_gateway_get_stage(cls);
	uint16_t i, k;

	for (i = 0; i < n; i += k) {
		k = RTE_MIN((uint16_t)(n - i), (uint16_t)EGW_MAX_BURST);
		fn(b, pkts + i, k);
	}
}

/* Decapsulated frames (res->out) start again at the head of their class's
 * chain; control frames go to the control path, those of bound sessions
 * on the first ring. */
static void
decap_dispatch(struct egw_burst *b, struct egw_pppoe_stage_worker *pw, struct egw_pppoe_res *res)
{
	uint16_t i, n4 = 0, n6 = 0;

	for (i = 0; i < res->n_ctrl; i++)
		egw_out_ctrl_prio(b, res->ctrl[i], res->ctrl_up[i] ? EGW_CTRL_UP : EGW_CTRL_START);
	for (i = 0; i < res->n_out; i++) {
		struct rte_mbuf *m = res->out[i];

		switch (egw_eth_meta(m)->cls) {
		case EGW_ETH_CLS_IPV4: pw->v4[n4++] = m; break;
		case EGW_ETH_CLS_IPV6: pw->v6[n6++] = m; break;
		default: egw_out_drop(b, m, EGW_DROP_UNHANDLED); break;
		}
	}
	pppoe_account(b, res);
	/* The head of each class's chain, looked up now: ESP outbound sees
	 * the subscriber's packets, then the route. Per class in arrival
	 * order; the two classes of one burst are two batches, as the
	 * gateway stages every class. */
	b->from_session = 1;
	stage_chunks(b, EGW_ETH_CLS_IPV4, pw->v4, n4);
	stage_chunks(b, EGW_ETH_CLS_IPV6, pw->v6, n6);
	b->from_session = 0;
}

static void
stage_pppoe_sess(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	struct egw_pppoe_stage_worker *pw = b->w->pppoe;

	if (pw == NULL) {
		/* lib/pppoe not initialised (start-up): as before, to control */
		next_sess(b, pkts, n);
		return;
	}
	/* The role is the application's: a port declared to lib/pppoe once
	 * stays declared there, but stops terminating PPPoE when its role
	 * changes. */
	if (egw.ports[b->port].role != EGW_ROLE_ACCESS) {
		egw_out_drop_bulk(b, pkts, n, EGW_DROP_PPPOE_NOT_ACCESS);
		return;
	}
	egw_pppoe_decap_burst(pw->ctx, pkts, n, &pw->res);
	decap_dispatch(b, pw, &pw->res);
}

bool
egw_pppoe_stage_poll(struct egw_burst *b, bool flush)
{
	struct egw_pppoe_stage_worker *pw = b->w->pppoe;

	if (pw == NULL || egw_pppoe_ctx_held(pw->ctx) == 0)
		return false;
	egw_pppoe_ctx_poll(pw->ctx, b->port, flush, &pw->res);
	decap_dispatch(b, pw, &pw->res);
	return true;
}

void
egw_pppoe_stage_encap(struct egw_burst *b, struct rte_mbuf **pkts, const uint32_t *sids, uint16_t n)
{
	struct rte_mbuf *icmp[EGW_PPPOE_MAX_BURST];
	struct egw_pppoe_stage_worker *pw = b->w->pppoe;
	struct egw_pppoe_res *res;
	uint16_t nicmp;

	if (pw == NULL || !egw_pppoe_active()) {
		egw_out_drop_bulk(b, pkts, n, EGW_DROP_IP_FIRST + EGW_IP_DROP_NO_SESSION);
		return;
	}
	/* res is free: the route stage runs after stage_pppoe_sess() took its
	 * results out, and stage_pppoe_ip() passes routed frames straight on */
	res = &pw->res;
	egw_pppoe_encap_sid_burst(pw->ctx, pkts, sids, n, res);
	b->created += res->n_icmp;
	egw_out_tx_ports(b, res->out, res->out_port, res->n_out);
	if (res->n_pass != 0)
		egw_out_drop_bulk(b, res->pass, res->n_pass,
				  EGW_DROP_IP_FIRST + EGW_IP_DROP_NO_SESSION);
	nicmp = res->n_icmp;
	memcpy(icmp, res->icmp, nicmp * sizeof(icmp[0]));
	pppoe_account(b, res);
	/* too big for the session: back to the sender, through ESP when a
	 * policy protects it (from that interface's address when it came in
	 * clear on a routed port); a subscriber's packet got its reply from
	 * the session it came in */
	if (nicmp != 0) {
		egw_ip_stage_icmp_source(b, icmp, nicmp);
		if (b->from_session)
			egw_pppoe_stage_reply(b, icmp, nicmp);
		else
			egw_esp_stage_reply(b, icmp, nicmp);
	}
}

static inline void
stage_pppoe_ip(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, enum egw_eth_class cls)
{
	struct rte_mbuf *icmp[EGW_PPPOE_MAX_BURST];
	struct egw_pppoe_stage_worker *pw;
	struct egw_pppoe_res *res;
	uint16_t npass, nicmp;

	/* one load (and no call) while no session is bound; routed, the
	 * FIB finds subscribers (routes of type pppoe: egw_pppoe_stage_encap()) */
	if (egw.ports[b->port].role != EGW_ROLE_UPLINK || !egw_pppoe_active() ||
	    egw_gateway_routed()) {
		next_stage[cls](b, pkts, n);
		return;
	}
	pw = b->w->pppoe;
	res = &pw->res;
	{
		uint32_t sids[EGW_MAX_BURST];

		egw_ip_stage_session_lookup(b, pkts, n, sids);
		egw_pppoe_encap_sid_burst(pw->ctx, pkts, sids, n, res);
	}
	/* counted as made before any of them can be counted as sent (a full
	 * TX buffer is transmitted at once) */
	b->created += res->n_icmp;
	egw_out_tx_ports(b, res->out, res->out_port, res->n_out);
	/* too-big replies go back where the packet came from, through ESP
	 * when a policy protects them (the packet may have come through a
	 * tunnel); a copy of the list: ESP's own replies would reuse res */
	nicmp = res->n_icmp;
	memcpy(icmp, res->icmp, nicmp * sizeof(icmp[0]));
	npass = res->n_pass;
	pppoe_account(b, res);
	/* res->pass stays valid: the later stages (rxtokens, route) never
	 * come back here within this call */
	if (npass != 0)
		next_stage[cls](b, res->pass, npass);
	if (nicmp != 0)
		egw_esp_stage_reply(b, icmp, nicmp);
}

static void
stage_pppoe_ipv4(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_pppoe_ip(b, pkts, n, EGW_ETH_CLS_IPV4);
}

static void
stage_pppoe_ipv6(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_pppoe_ip(b, pkts, n, EGW_ETH_CLS_IPV6);
}

void
egw_pppoe_stage_reply(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	struct egw_pppoe_stage_worker *pw = b->w->pppoe;
	struct egw_pppoe_res *res;
	uint16_t i;

	if (pw == NULL || egw.ports[b->port].role != EGW_ROLE_ACCESS || !egw_pppoe_active()) {
		for (i = 0; i < n; i++)
			egw_out_tx(b, b->port, pkts[i]);
		return;
	}
	/* res is free here: the caller runs inside stage_pppoe_sess() after
	 * its results were taken out, or outside any PPPoE stage */
	res = &pw->res;
	{
		uint32_t sids[EGW_MAX_BURST];
		uint16_t k;

		/* the sender's session, by the FIB, a burst at a time */
		for (i = 0; i < n; i += k) {
			k = (uint16_t)RTE_MIN(n - i, EGW_MAX_BURST);
			egw_ip_stage_session_lookup(b, pkts + i, k, sids);
			egw_pppoe_encap_sid_burst(pw->ctx, pkts + i, sids, k, res);
		}
	}
	/* (lib/pppoe never answers an ICMP error with another) */
	b->created += res->n_icmp;
	egw_out_tx_ports(b, res->out, res->out_port, res->n_out);
	/* no session has the sender's address (any more): nothing leaves an
	 * access port but inside a session */
	if (res->n_pass != 0)
		egw_out_drop_bulk(b, res->pass, res->n_pass,
				  EGW_DROP_IP_FIRST + EGW_IP_DROP_NO_SESSION);
	for (i = 0; i < res->n_icmp; i++)
		egw_out_tx(b, b->port, res->icmp[i]);
	pppoe_account(b, res);
}

/* Control path (under ctrl_lock): discovery and session frames the workers
 * queued. Frames of a port that is no longer an access port are dropped. */
static void
ctrl_pppoe_input(struct rte_mbuf *m)
{
	if (m->port >= RTE_MAX_ETHPORTS || egw.ports[m->port].role != EGW_ROLE_ACCESS) {
		EGW_CNT_ADD(egw.ctrl.drop[EGW_DROP_PPPOE_NOT_ACCESS], 1);
		rte_pktmbuf_free(m);
		return;
	}
	egw_pppoe_input(m);
}

void
egw_pppoe_stage_install(void)
{
	next_sess = egw_gateway_get_stage(EGW_ETH_CLS_PPPOE_SESS);
	egw_gateway_set_stage(EGW_ETH_CLS_PPPOE_SESS, stage_pppoe_sess);
}

static int
port_declare(uint16_t port, char *err, size_t errlen)
{
	uint16_t mtu = RTE_ETHER_MTU;
	int rc;

	/* a port that cannot tell its MTU (or reports less than Ethernet's)
	 * is taken as 1500: the MRU stays at RFC 2516's 1492 */
	if (rte_eth_dev_get_mtu(port, &mtu) != 0 || mtu < RTE_ETHER_MTU)
		mtu = RTE_ETHER_MTU;
	rc = egw_pppoe_port_add(port, &egw.ports[port].eth.mac, mtu);
	if (rc < 0)
		snprintf(err, errlen, "port %u: PPPoE access (MTU %u): %s", port, mtu,
			 strerror(-rc));
	return rc;
}

int
egw_pppoe_stage_port_role(uint16_t port, enum egw_port_role role, char *err, size_t errlen)
{
	if (!egw.pppoe || role != EGW_ROLE_ACCESS)
		return 0;
	return port_declare(port, err, errlen);
}

/* lib/pppoe's route callback: a session's /32 and /64 are FIB routes to
 * its id (control path, under egw.ctrl_lock; lib/ip is up before the first
 * session binds and goes down after the last one closed) */
static int
route_cb(bool add, uint16_t sid, int family, const uint8_t *addr, uint8_t len, void *arg)
{
	struct egw_ip_addr a;
	char err[256];
	int rc;

	(void)arg;
	if (!egw.ip)
		return add ? -ENETUNREACH : 0;
	memset(&a, 0, sizeof(a));
	a.family = (uint8_t)family;
	memcpy(a.a, addr, family == AF_INET ? 4 : 16);
	if (add) {
		rc = egw_ip_route_session_add(&a, len, sid);
		if (rc < 0)
			return rc;
		/* on a port shared with the kernel its frames must reach edgegw:
		 * a session whose address the steering map refuses is not bound */
		rc = egw_xdp_hook_session(sid, family, addr, len, true, err, sizeof(err));
		if (rc < 0) {
			egw_ip_route_session_del(&a, len, sid);
			fprintf(stderr, "PPPoE session %u: not bound: %s\n", sid, err);
		}
		return rc;
	}
	if (egw_xdp_hook_session(sid, family, addr, len, false, err, sizeof(err)) < 0)
		fprintf(stderr, "warning: PPPoE session %u: %s\n", sid, err);
	rc = egw_ip_route_session_del(&a, len, sid);
	if (rc < 0)
		fprintf(stderr, "warning: PPPoE session %u: its route was gone (%s)\n", sid,
			strerror(-rc));
	return 0;
}

/* lib/pppoe's source check of a session with routed prefixes (Framed-Route,
 * delegated prefixes): the source's route in the FIB must be the session's
 * (strict reverse-path check, BCP 38); data path */
static bool
src_cb(uint16_t sid, bool v6, const uint8_t *src, void *arg)
{
	(void)arg;
	return egw_ip_session_of(v6 ? AF_INET6 : AF_INET, src) == sid;
}

/* egw_pppoe_init() takes the lcore it runs on as the one whose
 * rte_timer_manage() runs the PPP timers: the lcore of the control path. */
static int
init_here(void *arg)
{
	return egw_pppoe_init(arg);
}

int
egw_pppoe_stage_init(void)
{
	static const enum egw_eth_class classes[] = {EGW_ETH_CLS_IPV4, EGW_ETH_CLS_IPV6};
	static const egw_stage_fn fns[] = {stage_pppoe_ipv4, stage_pppoe_ipv6};
	unsigned int s = rte_lcore_to_socket_id(egw.control_lcore), i;
	struct egw_pppoe_params p;
	char err[128];
	uint16_t pid;
	int rc;

	if (egw_drop_names_check("PPPoE", EGW_DROP_PPPOE_FIRST, EGW_PPPOE_DROP_MAX,
				 egw_pppoe_drop_name) < 0)
		return -EINVAL;
	if (egw.nb_workers > EGW_PPPOE_MAX_CTX) {
		fprintf(stderr,
			"error: PPPoE: %u worker lcores, but lib/pppoe has at most %u data-path "
			"contexts (one per worker): give EAL at most %u lcores besides the main%s "
			"lcore\n",
			egw.nb_workers, EGW_PPPOE_MAX_CTX, EGW_PPPOE_MAX_CTX,
			egw.opts.control_lcore >= 0 ? " and control" : "");
		return -E2BIG;
	}
	memset(&p, 0, sizeof(p));
	p.qsbr = egw.qsbr;
	p.pool = egw_socket_pool(s);
	p.max_sessions = egw.opts.pppoe_sessions;
	p.nb_ctx = egw.nb_workers;
	p.tx = egw_control_tx;
	p.socket = (int)s;
	p.route = route_cb;
	p.src_check = src_cb;
	if (p.pool == NULL) {
		fprintf(stderr, "error: PPPoE: no mbuf pool\n");
		return -ENOMEM;
	}
	/* the control lcore is not launched yet: it can run the init */
	if (egw.control_lcore != rte_get_main_lcore()) {
		rc = rte_eal_remote_launch(init_here, &p, egw.control_lcore);
		if (rc == 0)
			rc = rte_eal_wait_lcore(egw.control_lcore);
	} else {
		rc = egw_pppoe_init(&p);
	}
	if (rc < 0) {
		fprintf(stderr, "error: PPPoE: initialisation failed: %s%s\n", strerror(-rc),
			rc == -ENOMEM ? " (a smaller session table: --pppoe-sessions N)" : "");
		return rc;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	egw.pppoe = true;
	rte_spinlock_unlock(&egw.ctrl_lock);
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];
		struct rte_mempool *mp = egw_socket_pool(rte_lcore_to_socket_id(w->lcore));
		struct egw_pppoe_stage_worker *pw;

		pw = rte_zmalloc_socket("egw_pppoe_w", sizeof(*pw), RTE_CACHE_LINE_SIZE,
					(int)rte_lcore_to_socket_id(w->lcore));
		if (pw == NULL) {
			fprintf(stderr, "error: PPPoE: worker lcore %u: out of memory\n", w->lcore);
			return -ENOMEM;
		}
		pw->ctx = egw_pppoe_ctx_create(w->idx, mp);
		if (pw->ctx == NULL) {
			fprintf(stderr, "error: PPPoE: context for worker lcore %u: %s\n", w->lcore,
				rte_strerror(rte_errno));
			rte_free(pw);
			return -rte_errno;
		}
		w->pppoe = pw;
	}
	RTE_ETH_FOREACH_DEV (pid) {
		if (egw.ports[pid].used && egw.ports[pid].role == EGW_ROLE_ACCESS) {
			rc = port_declare(pid, err, sizeof(err));
			if (rc < 0) {
				fprintf(stderr, "error: %s\n", err);
				return rc;
			}
		}
	}
	egw_control_set_handler(EGW_ETH_CLS_PPPOE_DISC, ctrl_pppoe_input);
	egw_control_set_handler(EGW_ETH_CLS_PPPOE_SESS, ctrl_pppoe_input);
	for (i = 0; i < RTE_DIM(classes); i++) {
		next_stage[classes[i]] = egw_gateway_get_stage(classes[i]);
		egw_gateway_set_stage(classes[i], fns[i]);
	}
	return 0;
}

void
egw_pppoe_stage_shutdown(void)
{
	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw.pppoe)
		egw_pppoe_shutdown();
	rte_spinlock_unlock(&egw.ctrl_lock);
}

void
egw_pppoe_stage_fini(void)
{
	unsigned int i;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw.pppoe) {
		egw_control_set_handler(EGW_ETH_CLS_PPPOE_DISC, NULL);
		egw_control_set_handler(EGW_ETH_CLS_PPPOE_SESS, NULL);
		for (i = 0; i < egw.nb_workers; i++) {
			struct egw_worker *w = egw.workers[i];

			if (w->pppoe == NULL)
				continue;
			egw_pppoe_ctx_free(w->pppoe->ctx);
			rte_free(w->pppoe);
			w->pppoe = NULL;
		}
		/* every session ends with a PADT, sent by egw_control_tx()
		 * from here: the workers have stopped */
		egw_pppoe_fini();
		egw.pppoe = false;
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

void
egw_pppoe_stage_drops(uint64_t drop[EGW_PPPOE_DROP_MAX])
{
	egw_drops_sum(EGW_DROP_PPPOE_FIRST, EGW_PPPOE_DROP_MAX, drop);
}

/* ---- show config, --stats-json ------------------------------------------- */

static const char *const mss_names[] = {"auto", "off", "fixed"};
static const char *const auth_names[] = {"pap", "chap", "none"};

static void
print_name(const char *name, void *arg)
{
	FILE *f = arg;

	fprintf(f, " %s", name);
}

static void
print_pool(const char *prefix, unsigned int used, unsigned int size, void *arg)
{
	FILE *f = arg;

	fprintf(f, " %s (%u/%u used)", prefix, used, size);
}

static const char *
ip4_str(rte_be32_t a, char *buf, size_t len)
{
	if (a == 0 || inet_ntop(AF_INET, &a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "-");
	return buf;
}

void
egw_pppoe_stage_show_config(FILE *f)
{
	struct egw_pppoe_config c;
	char d0[INET_ADDRSTRLEN], d1[INET_ADDRSTRLEN];
	uint16_t pid;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.pppoe) {
		fprintf(f, "  pppoe: not available\n");
		rte_spinlock_unlock(&egw.ctrl_lock);
		return;
	}
	egw_pppoe_config_get(&c);
	fprintf(f, "  pppoe: ac-name %s, auth %s, %u users, mru %u, mss-clamp %s", c.ac_name,
		c.auth < RTE_DIM(auth_names) ? auth_names[c.auth] : "?", c.nb_users, c.mru,
		c.mss_mode < RTE_DIM(mss_names) ? mss_names[c.mss_mode] : "?");
	if (c.mss_mode == EGW_PPPOE_MSS_FIXED)
		fprintf(f, " %u", c.mss_value);
	fprintf(f,
		"\n  pppoe: limits: %u sessions, %u per MAC, %u starting; PADI %u/s (%u/s per "
		"MAC), PADR %u/s (%u/s per MAC); auth-hold %u s\n  pppoe: keepalive ",
		c.max_sessions, c.max_per_mac, c.guard.max_starting, c.guard.padi_rate,
		c.guard.padi_rate_mac, c.guard.padr_rate, c.guard.padr_rate_mac,
		c.guard.auth_hold_s);
	if (c.keepalive_s == 0)
		fprintf(f, "off");
	else
		fprintf(f, "every %u s, %u misses", c.keepalive_s, c.keepalive_misses);
	fprintf(f, "; dns %s %s\n", ip4_str(c.dns[0], d0, sizeof(d0)),
		ip4_str(c.dns[1], d1, sizeof(d1)));
	fprintf(f, "  pppoe: service names:");
	if (c.nb_services == 0)
		fprintf(f, " (any)");
	egw_pppoe_services_walk(print_name, f);
	fprintf(f, "\n  pppoe: pools:");
	if (c.nb_pools4 + c.nb_pools6 == 0)
		fprintf(f, " (none)");
	egw_pppoe_pools_walk(print_pool, f);
	fprintf(f, "\n  pppoe: access ports:");
	RTE_ETH_FOREACH_DEV (pid)
		if (egw.ports[pid].used && egw.ports[pid].role == EGW_ROLE_ACCESS)
			fprintf(f, " %u", pid);
	fprintf(f, "\n");
	rte_spinlock_unlock(&egw.ctrl_lock);
}

/* A JSON string (quotes, backslashes and control characters escaped). */
const char *
egw_pppoe_state_name(enum egw_pppoe_sess_state s)
{
	switch (s) {
	case EGW_PPPOE_S_NEGOTIATING: return "negotiating";
	case EGW_PPPOE_S_BOUND: return "bound";
	case EGW_PPPOE_S_CLOSING: return "closing";
	default: return "free";
	}
}

struct json_walk {
	FILE *f;
	bool first;
};

static void
json_pool(const char *prefix, unsigned int used, unsigned int size, void *arg)
{
	struct json_walk *jw = arg;

	fprintf(jw->f, "%s{\"prefix\": ", jw->first ? "" : ", ");
	egw_json_str(jw->f, prefix);
	fprintf(jw->f, ", \"used\": %u, \"size\": %u}", used, size);
	jw->first = false;
}

static void
json_service(const char *name, void *arg)
{
	struct json_walk *jw = arg;

	fprintf(jw->f, "%s", jw->first ? "" : ", ");
	egw_json_str(jw->f, name);
	jw->first = false;
}

static int
json_session(const struct egw_pppoe_session_info *s, void *arg)
{
	struct json_walk *jw = arg;
	char mac[RTE_ETHER_ADDR_FMT_SIZE], ip4[INET_ADDRSTRLEN], ip6[INET6_ADDRSTRLEN];
	static const uint8_t zero[16];
	unsigned int v;

	rte_ether_format_addr(mac, sizeof(mac), &s->mac);
	fprintf(jw->f, "%s\n      {\"id\": %u, \"port\": %u, \"vlan\": [", jw->first ? "" : ",",
		s->sid, s->port);
	for (v = 0; v < s->n_vlan && v < 2; v++)
		fprintf(jw->f, "%s%u", v ? ", " : "", s->vlan[v]);
	fprintf(jw->f, "], \"mac\": \"%s\", \"state\": \"%s\", \"user\": ", mac,
		egw_pppoe_state_name(s->state));
	egw_json_str(jw->f, s->user);
	fprintf(jw->f, ", \"lcp\": ");
	egw_json_str(jw->f, s->lcp);
	fprintf(jw->f, ", \"ipcp\": ");
	egw_json_str(jw->f, s->ipcp);
	fprintf(jw->f, ", \"ipv6cp\": ");
	egw_json_str(jw->f, s->ipv6cp);
	fprintf(jw->f, ", \"mru\": %u, \"ipv4\": ", s->mru);
	if (s->ip4 != 0)
		fprintf(jw->f, "\"%s\"", ip4_str(s->ip4, ip4, sizeof(ip4)));
	else
		fprintf(jw->f, "null");
	fprintf(jw->f, ", \"ipv6_prefix\": ");
	if (memcmp(s->ip6, zero, sizeof(zero)) != 0 &&
	    inet_ntop(AF_INET6, s->ip6, ip6, sizeof(ip6)) != NULL)
		fprintf(jw->f, "\"%s/64\"", ip6);
	else
		fprintf(jw->f, "null");
	fprintf(jw->f,
		", \"uptime_s\": %" PRIu64 ", \"rx_pkts\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		", \"tx_pkts\": %" PRIu64 ", \"tx_bytes\": %" PRIu64 ", \"ctrl_rx\": %" PRIu64
		", \"ctrl_tx\": %" PRIu64 ", \"echo_missed\": %u}",
		s->uptime_s, s->rx_pkts, s->rx_bytes, s->tx_pkts, s->tx_bytes, s->ctrl_rx,
		s->ctrl_tx, s->echo_missed);
	jw->first = false;
	return 0;
}

/* Room for the control counters lib/pppoe reports. */
#define CTRL_CNT_MAX 256

void
egw_pppoe_stage_json(FILE *f)
{
	const char *names[CTRL_CNT_MAX];
	uint64_t values[CTRL_CNT_MAX], drop[EGW_PPPOE_DROP_MAX];
	unsigned int count[4], n, i, total;
	struct json_walk jw = {.f = f, .first = true};
	struct egw_pppoe_config c;
	char d[INET_ADDRSTRLEN];

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.pppoe) {
		fprintf(f, "{\"available\": false}");
		rte_spinlock_unlock(&egw.ctrl_lock);
		return;
	}
	egw_pppoe_config_get(&c);
	fprintf(f, "{\"available\": true,\n    \"config\": {\"ac_name\": ");
	egw_json_str(f, c.ac_name);
	fprintf(f, ", \"services\": [");
	egw_pppoe_services_walk(json_service, &jw);
	fprintf(f, "], \"pools\": [");
	jw.first = true;
	egw_pppoe_pools_walk(json_pool, &jw);
	fprintf(f, "], \"users\": %u, \"dns\": [", c.nb_users);
	for (i = 0, jw.first = true; i < 2; i++) {
		if (c.dns[i] == 0)
			continue;
		fprintf(f, "%s\"%s\"", jw.first ? "" : ", ", ip4_str(c.dns[i], d, sizeof(d)));
		jw.first = false;
	}
	fprintf(f,
		"], \"max_sessions\": %u, \"max_per_mac\": %u, \"max_starting\": %u, "
		"\"padi_rate\": %u, \"padi_rate_mac\": %u, \"padr_rate\": %u, \"padr_rate_mac\": "
		"%u, \"auth_hold_s\": %u, \"mru\": %u, \"mss_clamp\": "
		"\"%s\", \"mss_value\": %u, \"keepalive_s\": %u, \"keepalive_misses\": %u, "
		"\"auth\": \"%s\"},\n    \"control\": {",
		c.max_sessions, c.max_per_mac, c.guard.max_starting, c.guard.padi_rate,
		c.guard.padi_rate_mac, c.guard.padr_rate, c.guard.padr_rate_mac,
		c.guard.auth_hold_s, c.mru,
		c.mss_mode < RTE_DIM(mss_names) ? mss_names[c.mss_mode] : "?", c.mss_value,
		c.keepalive_s, c.keepalive_misses,
		c.auth < RTE_DIM(auth_names) ? auth_names[c.auth] : "?");
	n = egw_pppoe_ctrl_counters(names, values, CTRL_CNT_MAX);
	for (i = 0; i < n && i < CTRL_CNT_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", names[i], values[i]);
	fprintf(f, "},\n    \"drops\": {");
	egw_pppoe_stage_drops(drop);
	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", egw_pppoe_drop_name(i), drop[i]);
	total = egw_pppoe_session_count(count);
	fprintf(f,
		"},\n    \"sessions_by_state\": {\"total\": %u, \"negotiating\": %u, \"bound\": "
		"%u, \"closing\": %u},\n    \"sessions\": [",
		total, count[EGW_PPPOE_S_NEGOTIATING], count[EGW_PPPOE_S_BOUND],
		count[EGW_PPPOE_S_CLOSING]);
	jw.first = true;
	egw_pppoe_session_walk(json_session, &jw);
	fprintf(f, "%s]}", jw.first ? "" : "\n    ");
	rte_spinlock_unlock(&egw.ctrl_lock);
}
