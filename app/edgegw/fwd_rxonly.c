/* SPDX-License-Identifier: BSD-3-Clause */
/* rxonly: receive and discard (counted as the "rxonly" drop reason). */
#include "fwd.h"

static void
rxonly_rx(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	egw_out_drop_bulk(b, pkts, n, EGW_DROP_SINK);
}

const struct egw_fwd_engine egw_fwd_rxonly = {
	.name = "rxonly",
	.args = "",
	.help = "receive and discard every frame",
	.rx = rxonly_rx,
};
