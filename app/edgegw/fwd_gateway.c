/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gateway: classify each burst once (lib/eth), drop what is bad or not for
 * this station, then hand each frame class to its stage as a burst. Stages
 * are installed per class with egw_gateway_set_stage(); a new stage never
 * touches the others. Default stages:
 *   IPv4, IPv6         -> routed by lib/ip (stage_ip.c); with
 *                         `set fwd gateway xconnect`, forwarded unrouted:
 *                         lan <-> uplink, a session's decapsulated frames
 *                         from access to uplink; from the uplink with no
 *                         lan port dropped as ip_no_session, else no_route.
 *                         Plain IP on an access port: access_not_session,
 *                         in either mode.
 *   PPPoE, ARP         -> control lcore (in arrival order)
 *   everything else    -> drop unhandled
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>

#include "fwd.h"

#define GW_NO_PORT UINT16_MAX

struct gw_worker {
	uint16_t n[EGW_ETH_CLS_MAX];
	struct rte_mbuf *pkts[EGW_ETH_CLS_MAX][EGW_MAX_BURST];
};

static uint16_t gw_egress[RTE_MAX_ETHPORTS];
/* set fwd gateway xconnect: written by the main lcore while forwarding is
 * stopped, read by the workers after they see fwd_running */
static bool gw_xconnect;

bool
egw_gateway_routed(void)
{
	return !gw_xconnect;
}

static inline void
stage_route(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, bool v6)
{
	uint16_t out = gw_egress[b->port];
	uint16_t i;

	if (!gw_xconnect) {
		egw_ip_stage_route(b, pkts, n, v6);
		return;
	}
	if (out == GW_NO_PORT) {
		/* from the uplink, with no lan port: nothing else may reach the
		 * subscribers (their sessions' frames were encapsulated before) */
		egw_out_drop_bulk(b, pkts, n,
				  egw.ports[b->port].role == EGW_ROLE_UPLINK
					  ? EGW_DROP_IP_FIRST + EGW_IP_DROP_NO_SESSION
					  : EGW_DROP_NO_ROUTE);
		return;
	}
	for (i = 0; i < n; i++)
		egw_out_tx(b, out, pkts[i]);
}

static void
stage_route4(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_route(b, pkts, n, false);
}

static void
stage_route6(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_route(b, pkts, n, true);
}

static void
stage_control(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		egw_out_ctrl(b, pkts[i]);
}

static void
stage_unhandled(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	egw_out_drop_bulk(b, pkts, n, EGW_DROP_UNHANDLED);
}

static egw_stage_fn gw_stage[EGW_ETH_CLS_MAX] = {
	[EGW_ETH_CLS_BAD] = stage_unhandled, /* never called: bad frames drop first */
	[EGW_ETH_CLS_IPV4] = stage_route4,        [EGW_ETH_CLS_IPV6] = stage_route6,
	[EGW_ETH_CLS_ARP] = stage_control,        [EGW_ETH_CLS_PPPOE_DISC] = stage_control,
	[EGW_ETH_CLS_PPPOE_SESS] = stage_control, [EGW_ETH_CLS_LLC] = stage_unhandled,
	[EGW_ETH_CLS_RAW_8023] = stage_unhandled, [EGW_ETH_CLS_VLAN_DEEP] = stage_unhandled,
	[EGW_ETH_CLS_OTHER] = stage_unhandled,
};

void
egw_gateway_set_stage(enum egw_eth_class cls, egw_stage_fn fn)
{
	if ((unsigned int)cls < EGW_ETH_CLS_MAX && cls != EGW_ETH_CLS_BAD)
		gw_stage[cls] = fn != NULL ? fn : stage_unhandled;
}

egw_stage_fn
egw_gateway_get_stage(enum egw_eth_class cls)
{
	return (unsigned int)cls < EGW_ETH_CLS_MAX ? gw_stage[cls] : stage_unhandled;
}

static void
gw_rx(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	struct gw_worker *g = b->w->engine_priv;
	uint16_t good, i, c;

	/* an access port carries PPPoE only, routed or not: plain IP stops
	 * here, before ESP, rxtokens or the route can see it (decapsulated
	 * session frames enter the IP stages from the PPPoE stage, not from
	 * here) */
	bool no_ip = egw.ports[b->port].role == EGW_ROLE_ACCESS;

	good = egw_eth_classify_burst(&egw.ports[b->port].eth, pkts, n);
	if (good < n)
		egw_out_drop_bulk(b, pkts + good, n - good, EGW_DROP_BAD_FRAME);

	for (i = 0; i < good; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct egw_eth_meta *meta = egw_eth_meta(m);

		if (meta->dst == EGW_ETH_DST_OTHERHOST) {
			egw_out_drop(b, m, EGW_DROP_OTHERHOST);
			continue;
		}
		if (unlikely(no_ip) &&
		    (meta->cls == EGW_ETH_CLS_IPV4 || meta->cls == EGW_ETH_CLS_IPV6)) {
			egw_out_drop(b, m, EGW_DROP_IP_FIRST + EGW_IP_DROP_ACCESS_NOT_SESSION);
			continue;
		}
		g->pkts[meta->cls][g->n[meta->cls]++] = m;
	}
	for (c = 1; c < EGW_ETH_CLS_MAX; c++) {
		if (g->n[c] == 0)
			continue;
		gw_stage[c](b, g->pkts[c], g->n[c]);
		g->n[c] = 0;
	}
}

/* Held a poll (egw_fwd_engine.prefetch): the FIB lines of the IPv4
 * destinations load while the burst before is processed. */
static void
gw_prefetch(struct rte_mbuf **pkts, uint16_t n)
{
	if (!gw_xconnect)
		egw_ip_prefetch_burst(pkts, n);
}

static int
gw_configure(const char *args, char *err, size_t errlen)
{
	if (args == NULL || *args == '\0') {
		gw_xconnect = false;
		return 0;
	}
	if (strcmp(args, "xconnect") == 0) {
		gw_xconnect = true;
		return 0;
	}
	snprintf(err, errlen, "gateway: unknown argument '%s' (none, or xconnect)", args);
	return -EINVAL;
}

static int
gw_begin(char *err, size_t errlen)
{
	uint16_t pid, lan = GW_NO_PORT, uplink = GW_NO_PORT, i;

	RTE_ETH_FOREACH_DEV (pid) {
		if (egw.ports[pid].role == EGW_ROLE_LAN && lan == GW_NO_PORT)
			lan = pid;
		if (egw.ports[pid].role == EGW_ROLE_UPLINK && uplink == GW_NO_PORT)
			uplink = pid;
	}
	/* xconnect: lan <-> uplink; what a session decapsulates on an access
	 * port -> uplink; nothing to an access port but a session's frames
	 * (stage_route) */
	for (i = 0; i < RTE_MAX_ETHPORTS; i++) {
		gw_egress[i] = GW_NO_PORT;
		if (!egw.ports[i].used)
			continue;
		if (egw.ports[i].role == EGW_ROLE_ACCESS || egw.ports[i].role == EGW_ROLE_LAN)
			gw_egress[i] = uplink;
		else if (egw.ports[i].role == EGW_ROLE_UPLINK)
			gw_egress[i] = lan;
	}
	if (gw_xconnect && uplink == GW_NO_PORT)
		fprintf(stderr, "warning: gateway: no uplink port: IP frames will be dropped as "
				"no_route (set 'port role <N> uplink')\n");
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];

		w->engine_priv =
			rte_zmalloc_socket("egw_gw", sizeof(struct gw_worker), RTE_CACHE_LINE_SIZE,
					   (int)rte_lcore_to_socket_id(w->lcore));
		if (w->engine_priv == NULL) {
			snprintf(err, errlen, "gateway: out of memory");
			while (i-- > 0) {
				rte_free(egw.workers[i]->engine_priv);
				egw.workers[i]->engine_priv = NULL;
			}
			return -ENOMEM;
		}
	}
	return 0;
}

static void
gw_end(void)
{
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++) {
		rte_free(egw.workers[i]->engine_priv);
		egw.workers[i]->engine_priv = NULL;
	}
}

static void
gw_show(FILE *f)
{
	uint16_t pid;

	fprintf(f, "  gateway: %s\n",
		gw_xconnect ? "xconnect (IP crosses between access and uplink unrouted)"
			    : "routed (lib/ip)");
	RTE_ETH_FOREACH_DEV (pid)
		fprintf(f, "  gateway: port %u role %s\n", pid, egw_role_name(egw.ports[pid].role));
}

/* Each loop: what a stage holds between bursts (the PPPoE handoff) leaves
 * through the RX queue it came in on, counted there. */
static inline void
gw_poll_port(struct egw_worker *w, bool flush)
{
	struct egw_burst *b = &w->burst;
	uint16_t i;

	if (w->pppoe == NULL)
		return;
	for (i = 0; i < w->nb_rxq; i++) {
		uint16_t port = w->rxq[i].port, queue = w->rxq[i].queue;

		if (egw.ports[port].role != EGW_ROLE_ACCESS)
			continue;
		b->port = port;
		b->queue = queue;
		b->qs = &egw.ports[port].qstats[queue];
		/* (nothing to flush, the common case, costs nothing more) */
		if (egw_pppoe_stage_poll(b, flush))
			egw_burst_flush(b);
	}
}

static void
gw_poll(struct egw_worker *w)
{
	gw_poll_port(w, false);
}

static void
gw_drain(struct egw_worker *w)
{
	gw_poll_port(w, true);
}

const struct egw_fwd_engine egw_fwd_gateway = {
	.name = "gateway",
	.args = "[xconnect]",
	.help = "classify, then run the per-class stages (IP routed, or with xconnect crossed "
		"unrouted between access and uplink; PPPoE and ARP to control)",
	.configure = gw_configure,
	.begin = gw_begin,
	.end = gw_end,
	.rx = gw_rx,
	.prefetch = gw_prefetch,
	.poll = gw_poll,
	.drain = gw_drain,
	.show = gw_show,
};
