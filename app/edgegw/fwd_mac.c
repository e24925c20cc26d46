/* SPDX-License-Identifier: BSD-3-Clause */
/* mac: swap source and destination MAC, send to the peer port. */
#include "fwd.h"

static void
mac_rx(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t peer = egw.ports[b->port].peer;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct rte_ether_hdr *eh;
		struct rte_ether_addr tmp;

		if (unlikely(m->data_len < RTE_ETHER_HDR_LEN)) {
			egw_out_drop(b, m, EGW_DROP_BAD_FRAME);
			continue;
		}
		eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		rte_ether_addr_copy(&eh->src_addr, &tmp);
		rte_ether_addr_copy(&eh->dst_addr, &eh->src_addr);
		rte_ether_addr_copy(&tmp, &eh->dst_addr);
		egw_out_tx(b, peer, m);
	}
}

const struct egw_fwd_engine egw_fwd_mac = {
	.name = "mac",
	.args = "",
	.help = "swap source and destination MAC, send to the peer port",
	.rx = mac_rx,
};
