/* SPDX-License-Identifier: BSD-3-Clause */
/* io: every frame leaves unchanged on the peer port (0<->1, 2<->3). */
#include "fwd.h"

static void
io_rx(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t peer = egw.ports[b->port].peer;
	uint16_t i;

	for (i = 0; i < n; i++)
		egw_out_tx(b, peer, pkts[i]);
}

const struct egw_fwd_engine egw_fwd_io = {
	.name = "io",
	.args = "",
	.help = "forward every frame unchanged to the peer port (0<->1, 2<->3)",
	.rx = io_rx,
};
