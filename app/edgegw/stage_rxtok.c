/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gateway stage: zero-copy delivery to rxtokens consumers. It wraps the
 * stages of IPv4, IPv6 and PPPoE session frames: frames of a consumer's flow
 * are delivered (or dropped with an rxtok_* reason), the rest go on to the
 * stage that was there before, in order.
 */
#include <errno.h>

#include "egw_rxtok.h"
#include "fwd.h"

static const enum egw_eth_class rxtok_classes[] = {
	EGW_ETH_CLS_IPV4,
	EGW_ETH_CLS_IPV6,
	EGW_ETH_CLS_PPPOE_SESS,
};

static egw_stage_fn next_stage[EGW_ETH_CLS_MAX];

static const enum egw_drop drop_of[EGW_RXTOK_DROP_MAX] = {
	[EGW_RXTOK_DROP_QUOTA] = EGW_DROP_RXTOK_QUOTA,
	[EGW_RXTOK_DROP_STEERED] = EGW_DROP_RXTOK_STEERED,
	[EGW_RXTOK_DROP_DETACHED] = EGW_DROP_RXTOK_DETACHED,
	[EGW_RXTOK_DROP_RING_FULL] = EGW_DROP_RXTOK_RING_FULL,
	[EGW_RXTOK_DROP_EMPTY] = EGW_DROP_RXTOK_EMPTY,
	[EGW_RXTOK_DROP_NOT_REGION] = EGW_DROP_RXTOK_NOT_REGION,
};

static inline void
stage_rxtok(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, enum egw_eth_class cls)
{
	struct egw_rxtok_burst_res res = {0};
	uint16_t pass;
	unsigned int r;

	pass = egw_rxtok_deliver_burst(b->port, b->queue, pkts, n, &res);
	if (pass != n) {
		b->delivered += res.delivered;
		for (r = 0; r < EGW_RXTOK_DROP_MAX; r++)
			b->drop[drop_of[r]] += res.drop[r];
	}
	if (pass != 0)
		next_stage[cls](b, pkts, pass);
}

static void
stage_rxtok_ipv4(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_rxtok(b, pkts, n, EGW_ETH_CLS_IPV4);
}

static void
stage_rxtok_ipv6(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_rxtok(b, pkts, n, EGW_ETH_CLS_IPV6);
}

static void
stage_rxtok_pppoe(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	stage_rxtok(b, pkts, n, EGW_ETH_CLS_PPPOE_SESS);
}

int
egw_rxtok_stage_init(void)
{
	static const egw_stage_fn fns[] = {stage_rxtok_ipv4, stage_rxtok_ipv6, stage_rxtok_pppoe};
	unsigned int i;
	int rc;

	/* an entry left out of drop_of would count as tx_full (0) */
	for (i = 0; i < EGW_RXTOK_DROP_MAX; i++)
		if (drop_of[i] == 0)
			return -EINVAL;
	rc = egw_rxtok_init(egw.qsbr);
	if (rc < 0)
		return rc;
	for (i = 0; i < RTE_DIM(rxtok_classes); i++) {
		next_stage[rxtok_classes[i]] = egw_gateway_get_stage(rxtok_classes[i]);
		egw_gateway_set_stage(rxtok_classes[i], fns[i]);
	}
	return 0;
}
