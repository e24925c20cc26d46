/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forwarding engines (testpmd's "set fwd") and the per-burst verdict helpers
 * every engine and stage uses. A frame gets exactly one verdict: transmit on
 * a port, hand to the control lcore, deliver locally, or drop with a reason.
 */
#ifndef EGW_FWD_H
#define EGW_FWD_H

#include <stddef.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "egw.h"

struct egw_fwd_engine {
	const char *name;
	const char *args; /**< argument syntax for "set fwd", "" if none */
	const char *help; /**< one line */
	/** Parse "set fwd <name> <args>" on the main lcore; NULL: takes no
	 *  arguments. Returns 0 or -errno with a message in err. */
	int (*configure)(const char *args, char *err, size_t errlen);
	/** Main lcore, before workers start; 0 or -errno with message. */
	int (*begin)(char *err, size_t errlen);
	/** Main lcore, after all workers stopped. */
	void (*end)(void);
	/** Worker: a received burst from b->port/b->queue. */
	void (*rx)(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n);
	/** Worker: a burst just received, before it is held: with this step
	 *  the worker hands each burst to rx() at its queue's next poll (when
	 *  that poll receives nothing too, at once then), so what prefetch()
	 *  starts loading has the processing of the burst before it to
	 *  arrive. NULL: rx() at once. */
	void (*prefetch)(struct rte_mbuf **pkts, uint16_t n);
	/** Worker: once per poll loop (generators); NULL if unused. */
	void (*poll)(struct egw_worker *w);
	/** Worker: forwarding stops; release what the engine holds. NULL if unused. */
	void (*drain)(struct egw_worker *w);
	/** "show config" detail; NULL if none. */
	void (*show)(FILE *f);
};

extern const struct egw_fwd_engine egw_fwd_io;
extern const struct egw_fwd_engine egw_fwd_mac;
extern const struct egw_fwd_engine egw_fwd_rxonly;
extern const struct egw_fwd_engine egw_fwd_replay;
extern const struct egw_fwd_engine egw_fwd_gateway;

/** NULL-terminated list of engines. */
extern const struct egw_fwd_engine *const egw_fwd_engines[];

const struct egw_fwd_engine *egw_fwd_find(const char *name);

/**
 * Select an engine from "<name> [args]" (the text after "set fwd").
 * Forwarding must be stopped. Returns 0 or -errno with a message.
 */
int egw_fwd_select(const char *spec, char *err, size_t errlen);

/**
 * Queue m for transmission on port; sent when the burst is flushed. A burst
 * may send more than EGW_MAX_BURST frames to one port (ESP turns one frame
 * into many): a full buffer is transmitted at once.
 */
static inline void
egw_out_tx(struct egw_burst *b, uint16_t port, struct rte_mbuf *m)
{
	struct egw_txbuf *t = &b->w->tx[port];

	if (t->n == EGW_MAX_BURST)
		egw_txbuf_flush(b, port);
	t->pkts[t->n++] = m;
	t->bytes += m->pkt_len;
	b->tx_ports |= UINT64_C(1) << port;
}

/**
 * Queue n frames for transmission, pkts[i] on port ports[i], as egw_out_tx()
 * each, a run of frames for one port copied at once (a routed burst leaves
 * by one or two ports).
 */
static inline void
egw_out_tx_ports(struct egw_burst *b, struct rte_mbuf *const pkts[], const uint16_t ports[],
		 uint16_t n)
{
	uint16_t i = 0;

	while (i < n) {
		uint16_t port = ports[i], end = i + 1;
		struct egw_txbuf *t = &b->w->tx[port];

		while (end < n && ports[end] == port)
			end++;
		b->tx_ports |= UINT64_C(1) << port;
		while (i < end) {
			uint16_t room = (uint16_t)(EGW_MAX_BURST - t->n), k, x;
			uint64_t bytes = 0;

			if (room == 0) {
				egw_txbuf_flush(b, port);
				continue;
			}
			k = (uint16_t)RTE_MIN(room, end - i);
			for (x = 0; x < k; x++) {
				t->pkts[t->n + x] = pkts[i + x];
				bytes += pkts[i + x]->pkt_len;
			}
			t->n = (uint16_t)(t->n + k);
			t->bytes += bytes;
			i = (uint16_t)(i + k);
		}
	}
}

/** Drop m, counted under reason. */
static inline void
egw_out_drop(struct egw_burst *b, struct rte_mbuf *m, enum egw_drop reason)
{
	b->drop[reason]++;
	rte_pktmbuf_free(m);
}

/** Drop n frames, all under one reason. */
static inline void
egw_out_drop_bulk(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, enum egw_drop reason)
{
	b->drop[reason] += n;
	rte_pktmbuf_free_bulk(pkts, n);
}

/** Hand m to the control lcore (in arrival order). */
static inline void
egw_out_ctrl_prio(struct egw_burst *b, struct rte_mbuf *m, enum egw_ctrl_prio prio)
{
	static const uint16_t full[EGW_CTRL_PRIO_MAX] = {
		[EGW_CTRL_UP] = EGW_DROP_CTRL_FULL_UP,
		[EGW_CTRL_OTHER] = EGW_DROP_CTRL_FULL,
		[EGW_CTRL_START] = EGW_DROP_CTRL_FULL_START,
		[EGW_CTRL_DISC] = EGW_DROP_CTRL_FULL_DISC,
	};

	if (unlikely(b->nb_ctrl[prio] == EGW_MAX_BURST)) {
		egw_out_drop(b, m, full[prio]);
		return;
	}
	b->ctrl[prio][b->nb_ctrl[prio]++] = m;
}

/* For the control path, on the ring of its class: discovery, session
 * frames of sessions negotiating, or the rest. */
static inline void
egw_out_ctrl(struct egw_burst *b, struct rte_mbuf *m)
{
	switch (egw_eth_meta(m)->cls) {
	case EGW_ETH_CLS_PPPOE_DISC: egw_out_ctrl_prio(b, m, EGW_CTRL_DISC); break;
	case EGW_ETH_CLS_PPPOE_SESS: egw_out_ctrl_prio(b, m, EGW_CTRL_START); break;
	default: egw_out_ctrl_prio(b, m, EGW_CTRL_OTHER); break;
	}
}

/* Gateway stages: one function per frame class, over a burst of that class. */
typedef void (*egw_stage_fn)(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n);

/** Install the gateway stage for a frame class (main lcore, forwarding stopped). */
void egw_gateway_set_stage(enum egw_eth_class cls, egw_stage_fn fn);

/** The gateway stage of a frame class, for a stage that wraps it. */
egw_stage_fn egw_gateway_get_stage(enum egw_eth_class cls);

#endif /* EGW_FWD_H */
