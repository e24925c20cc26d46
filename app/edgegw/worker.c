/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker lcores: each owns a set of (port, RX queue) pairs and TX queue
 * 'idx' on every port, and runs the engine to completion on each burst.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "fwd.h"

static_assert(RTE_MAX_ETHPORTS <= 64, "egw_burst.tx_ports is a 64-bit mask");

/* Ring from the control path to each worker, and how much of it a worker
 * sends per loop. */
/* Frames from a worker to the control path, per priority (egw.h) */
#define CTRL_RING 1024
/* Frames the control path built, to a worker: room for a second of
 * keepalive of 4,000 sessions, or a burst of set-ups; the control path
 * stops reading input while less than CTRL_TX_RESERVE is free
 * (egw_control_poll()) */
#define CTRL_TX_RING 8192
#define CTRL_TX_BURST 32
#define CTRL_TX_BURSTS_PER_LOOP 4

int
egw_workers_init(void)
{
	unsigned int lcore;

	egw.nb_workers = 0;
	RTE_LCORE_FOREACH_WORKER (lcore) {
		struct egw_worker *w;

		if (lcore == egw.control_lcore)
			continue;
		w = rte_zmalloc_socket("egw_worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
				       (int)rte_lcore_to_socket_id(lcore));
		if (w == NULL)
			return -ENOMEM;
		w->lcore = lcore;
		w->idx = egw.nb_workers;
		w->burst.w = w;
		egw.workers[egw.nb_workers++] = w;
	}
	if (egw.nb_workers != 0) {
		size_t sz = rte_rcu_qsbr_get_memsize(egw.nb_workers);
		uint16_t i;

		egw.qsbr = rte_zmalloc("egw_qsbr", sz, RTE_CACHE_LINE_SIZE);
		if (egw.qsbr == NULL || rte_rcu_qsbr_init(egw.qsbr, egw.nb_workers) != 0)
			return -ENOMEM;
		for (i = 0; i < egw.nb_workers; i++)
			rte_rcu_qsbr_thread_register(egw.qsbr, i);
	}
	if (egw.nb_workers == 0) {
		fprintf(stderr,
			"error: no worker lcore: give EAL at least two lcores (e.g. -l 0,1); the "
			"main%s lcore does not forward\n",
			egw.opts.control_lcore >= 0 ? " and control" : "");
		return -EINVAL;
	}
	return 0;
}

/* Spread the (port, queue) pairs over the workers, round robin. Called after
 * the ports are up (their queue counts depend on the worker count). */
static int
workers_assign(void)
{
	uint16_t pid, q, next = 0;

	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_port *p = &egw.ports[pid];

		for (q = 0; q < p->nb_rxq; q++) {
			struct egw_worker *w = egw.workers[next];

			if (w->nb_rxq == EGW_MAX_WORKER_RXQ) {
				fprintf(stderr, "error: more than %u RX queues on one worker\n",
					EGW_MAX_WORKER_RXQ);
				return -E2BIG;
			}
			w->rxq[w->nb_rxq].port = pid;
			w->rxq[w->nb_rxq].queue = q;
			w->nb_rxq++;
			p->rxq_lcore[q] = (uint16_t)w->lcore;
			if (q == 0)
				p->ctrl_tx_worker = w->idx;
			next = (uint16_t)((next + 1) % egw.nb_workers);
		}
	}
	return 0;
}

/* Transmit port's buffered frames; refused ones are freed as tx_full.
 * Returns the number sent, their bytes in *bytes. */
static inline uint16_t
txbuf_send(struct egw_burst *b, uint16_t port, uint64_t *bytes)
{
	struct egw_worker *w = b->w;
	struct egw_txbuf *t = &w->tx[port];
	uint16_t sent;

	sent = rte_eth_tx_burst(port, w->idx, t->pkts, t->n);
	if (unlikely(sent < t->n)) {
		uint16_t i;

		for (i = sent; i < t->n; i++)
			t->bytes -= t->pkts[i]->pkt_len;
		b->drop[EGW_DROP_TX_FULL] += t->n - sent;
		rte_pktmbuf_free_bulk(&t->pkts[sent], t->n - sent);
	}
	*bytes = t->bytes;
	EGW_CNT_ADD(w->stats.tx_out[port], sent);
	t->n = 0;
	t->bytes = 0;
	return sent;
}

/* A port's buffer filled up within a burst (egw_out_tx): send it now. The
 * port's bit in b->tx_ports stays set for the frames that follow. The
 * frames created so far are counted first, so that a reader never sees
 * more sent than received and created. */
__rte_noinline void
egw_txbuf_flush(struct egw_burst *b, uint16_t port)
{
	struct egw_qstats *qs = b->qs;
	uint64_t bytes;
	uint16_t sent;

	if (b->created != 0) {
		EGW_CNT_ADD(qs->created, b->created);
		b->created = 0;
	}
	sent = txbuf_send(b, port, &bytes);
	EGW_CNT_ADD(qs->tx, sent);
	EGW_CNT_ADD(qs->tx_bytes, bytes);
}

/* Whether the burst dropped anything: most drop nothing, and the counts
 * OR-ed together (vector loads, no branch a reason) cost a fraction of
 * testing each of the EGW_DROP_MAX reasons. */
static inline bool
burst_dropped(const struct egw_burst *b)
{
	uint32_t any = 0;
	unsigned int r;

	for (r = 0; r < EGW_DROP_MAX; r++)
		any |= b->drop[r];
	return any != 0;
}

void
egw_burst_flush(struct egw_burst *b)
{
	struct egw_worker *w = b->w;
	struct egw_qstats *qs = b->qs;
	uint64_t mask = b->tx_ports;
	uint64_t tx = 0, tx_bytes = 0;
	unsigned int r, queued = 0;

	while (mask != 0) {
		uint16_t port = (uint16_t)__builtin_ctzll(mask);
		uint64_t bytes;

		mask &= mask - 1;
		tx += txbuf_send(b, port, &bytes);
		tx_bytes += bytes;
	}
	b->tx_ports = 0;

	for (r = 0; r < EGW_CTRL_PRIO_MAX; r++) {
		static const uint16_t full[EGW_CTRL_PRIO_MAX] = {
			[EGW_CTRL_UP] = EGW_DROP_CTRL_FULL_UP,
			[EGW_CTRL_OTHER] = EGW_DROP_CTRL_FULL,
			[EGW_CTRL_START] = EGW_DROP_CTRL_FULL_START,
			[EGW_CTRL_DISC] = EGW_DROP_CTRL_FULL_DISC,
		};
		unsigned int nc = b->nb_ctrl[r], q;

		if (nc == 0)
			continue;
		q = rte_ring_enqueue_burst(w->ctrl_ring[r], (void **)b->ctrl[r], nc, NULL);
		if (unlikely(q < nc)) {
			b->drop[full[r]] += nc - q;
			rte_pktmbuf_free_bulk(&b->ctrl[r][q], nc - q);
		}
		EGW_CNT_ADD(qs->queued, q);
		b->nb_ctrl[r] = 0;
		queued += q;
	}
	/* the control path may sleep until told */
	if (queued != 0)
		egw_control_wake();

	if (tx != 0) {
		EGW_CNT_ADD(qs->tx, tx);
		EGW_CNT_ADD(qs->tx_bytes, tx_bytes);
	}
	if (b->delivered != 0) {
		EGW_CNT_ADD(qs->delivered, b->delivered);
		b->delivered = 0;
	}
	if (b->created != 0) {
		EGW_CNT_ADD(qs->created, b->created);
		b->created = 0;
	}
	if (burst_dropped(b)) {
		for (r = 0; r < EGW_DROP_MAX; r++) {
			if (b->drop[r] != 0) {
				EGW_CNT_ADD(qs->drop[r], b->drop[r]);
				b->drop[r] = 0;
			}
		}
	}
}

/* Send runs of frames for one port; the rest of a run the TX queue refuses
 * is freed. Returns the number sent, the refused ones in *refused. */
static unsigned int
ctrl_tx_send(uint16_t queue, struct rte_mbuf **pkts, unsigned int n, unsigned int *refused)
{
	unsigned int i = 0, sent = 0;

	*refused = 0;
	while (i < n) {
		uint16_t port = pkts[i]->port, k;
		unsigned int j = i + 1;

		while (j < n && pkts[j]->port == port)
			j++;
		k = rte_eth_tx_burst(port, queue, pkts + i, (uint16_t)(j - i));
		if (k < j - i) {
			rte_pktmbuf_free_bulk(pkts + i + k, j - i - k);
			*refused += j - i - k;
		}
		sent += k;
		i = j;
	}
	return sent;
}

/* Frames the control path built for the ports this worker sends for: sent
 * on the worker's own TX queue, so no TX queue has two threads. Only while
 * forwarding: a stopped port may be reconfigured by a command (rxtokens
 * bind), and nothing may transmit on it meanwhile; what waits then leaves
 * when forwarding starts again (or at exit, egw_workers_ctrl_tx_flush()). */
static inline void
ctrl_tx_drain(struct egw_worker *w)
{
	struct rte_mbuf *pkts[CTRL_TX_BURST];
	unsigned int n, sent, refused, k;

	/* a few bursts per loop: the control path may make frames faster
	 * than one burst per loop (a keepalive round of many sessions) */
	for (k = 0; k < CTRL_TX_BURSTS_PER_LOOP; k++) {
		n = rte_ring_sc_dequeue_burst(w->ctrl_tx_ring, (void **)pkts, CTRL_TX_BURST, NULL);
		if (n == 0)
			return;
		sent = ctrl_tx_send(w->idx, pkts, n, &refused);
		EGW_CNT_ADD(w->stats.ctrl_tx, sent);
		if (refused != 0)
			EGW_CNT_ADD(w->stats.ctrl_tx_drop, refused);
		if (n < CTRL_TX_BURST)
			return;
	}
}

/* The burst held for b's queue (b->port, queue, qs set): through the engine
 * and out, the held list emptied. */
static inline void
rx_held(const struct egw_fwd_engine *e, struct egw_burst *b, struct egw_rxhold *h)
{
	if (h->n == 0)
		return;
	b->prefetched = 1;
	e->rx(b, h->pkts, h->n);
	b->prefetched = 0;
	egw_burst_flush(b);
	h->n = 0;
}

static void
worker_fwd_loop(struct egw_worker *w, const struct egw_fwd_engine *e)
{
	struct rte_mbuf *pkts[EGW_MAX_BURST];
	struct egw_burst *b = &w->burst;
	const uint16_t burst = egw.opts.burst;
	/* an engine with a prefetch step holds each burst a poll (--no-rx-hold:
	 * never) */
	const bool hold = e->prefetch != NULL && !egw.opts.no_rx_hold;
	uint16_t q;

	/* an RCU reader while forwarding; offline while idle, so a control
	 * path waiting for a grace period never waits on a sleeping worker */
	rte_rcu_qsbr_thread_online(egw.qsbr, w->idx);

	/* pairs with the store in egw_fwd_stop(); seq_cst with the state store
	 * in worker_main() so that stop never misses a worker entering the loop
	 * (a plain load on x86) */
	while (__atomic_load_n(&egw.fwd_running, __ATOMIC_SEQ_CST)) {
		uint16_t i;
		bool busy = false;

		for (i = 0; i < w->nb_rxq; i++) {
			uint16_t port = w->rxq[i].port, queue = w->rxq[i].queue;
			struct egw_qstats *qs = &egw.ports[port].qstats[queue];
			struct egw_rxhold *h = &w->hold[i];
			uint64_t bytes = 0;
			uint16_t n, k;

			n = rte_eth_rx_burst(port, queue, pkts, burst);
			if (n != 0) {
				busy = true;
				for (k = 0; k < n; k++)
					bytes += pkts[k]->pkt_len;
				EGW_CNT_ADD(qs->rx, n);
				EGW_CNT_ADD(qs->rx_bytes, bytes);
			}
			b->port = port;
			b->queue = queue;
			b->qs = qs;
			if (!hold) {
				if (n == 0)
					continue;
				e->rx(b, pkts, n);
				egw_burst_flush(b);
				continue;
			}
			/* this burst's lines start loading; the one held since the
			 * last poll goes now */
			if (n != 0)
				e->prefetch(pkts, n);
			rx_held(e, b, h);
			memcpy(h->pkts, pkts, n * sizeof(pkts[0]));
			h->n = n;
		}
		if (e->poll != NULL)
			e->poll(w);
		ctrl_tx_drain(w);
		EGW_CNT_ADD(w->stats.loops, 1);
		if (busy)
			EGW_CNT_ADD(w->stats.busy_loops, 1);
		/* no shared table entry is held across this point */
		rte_rcu_qsbr_quiescent(egw.qsbr, w->idx);
	}
	/* the bursts still held go before the engine drains */
	for (q = 0; q < w->nb_rxq; q++) {
		b->port = w->rxq[q].port;
		b->queue = w->rxq[q].queue;
		b->qs = &egw.ports[b->port].qstats[b->queue];
		rx_held(e, b, &w->hold[q]);
	}
	if (e->drain != NULL)
		e->drain(w);
	rte_rcu_qsbr_thread_offline(egw.qsbr, w->idx);
}

static int
worker_main(void *arg)
{
	struct egw_worker *w = arg;

	while (!__atomic_load_n(&egw.workers_quit, __ATOMIC_ACQUIRE)) {
		/* pairs with the release store in egw_fwd_start(): the engine
		 * pointer and its state are visible once fwd_running is */
		if (__atomic_load_n(&egw.fwd_running, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&w->state, EGW_W_RUNNING, __ATOMIC_SEQ_CST);
			worker_fwd_loop(w, egw.engine);
			/* pairs with the acquire load in egw_fwd_stop() */
			__atomic_store_n(&w->state, EGW_W_IDLE, __ATOMIC_RELEASE);
			continue;
		}
		rte_delay_us_sleep(1000); /* idle workers must not spin */
	}
	return 0;
}

int
egw_workers_launch(void)
{
	uint16_t i;
	int rc;

	rc = workers_assign();
	if (rc != 0)
		return rc;
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];
		char name[RTE_RING_NAMESIZE];

		unsigned int r;

		for (r = 0; r < EGW_CTRL_PRIO_MAX; r++) {
			snprintf(name, sizeof(name), "egw_ctrl_w%u_%u", w->idx, r);
			w->ctrl_ring[r] = rte_ring_create(name, CTRL_RING,
							  (int)rte_lcore_to_socket_id(w->lcore),
							  RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (w->ctrl_ring[r] == NULL) {
				fprintf(stderr, "error: ring %s: %s\n", name,
					rte_strerror(rte_errno));
				return -rte_errno;
			}
		}
		snprintf(name, sizeof(name), "egw_ctrltx_w%u", w->idx);
		w->ctrl_tx_ring =
			rte_ring_create(name, CTRL_TX_RING, (int)rte_lcore_to_socket_id(w->lcore),
					RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (w->ctrl_tx_ring == NULL) {
			fprintf(stderr, "error: ring %s: %s\n", name, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	for (i = 0; i < egw.nb_workers; i++) {
		rc = rte_eal_remote_launch(worker_main, egw.workers[i], egw.workers[i]->lcore);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
egw_fwd_start(char *err, size_t errlen)
{
	int rc;

	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
		snprintf(err, errlen, "forwarding is already running");
		return -EALREADY;
	}
	if (egw.engine->begin != NULL) {
		rc = egw.engine->begin(err, errlen);
		if (rc < 0)
			return rc;
	}
	/* PPPoE and routing configured under an engine that runs neither: say
	 * so (a command file without 'set fwd gateway' answers nothing) */
	if (egw.engine != &egw_fwd_gateway) {
		uint16_t pid;
		bool access = false;

		RTE_ETH_FOREACH_DEV (pid)
			access |= egw.ports[pid].used && egw.ports[pid].role == EGW_ROLE_ACCESS;
		if (access)
			fprintf(stderr,
				"warning: a port has role access, but the '%s' engine neither "
				"terminates PPPoE nor routes: 'set fwd gateway' does\n",
				egw.engine->name);
	}
	egw.fwd_start_tsc = rte_get_tsc_cycles();
	/* pairs with the acquire loads in worker_main() */
	__atomic_store_n(&egw.fwd_running, 1, __ATOMIC_RELEASE);
	return 0;
}

int
egw_fwd_stop(void)
{
	uint16_t i;

	if (!__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED))
		return -EALREADY;
	/* seq_cst store then seq_cst loads of the worker states: a worker
	 * either sees fwd_running == 0 in its loop or is seen RUNNING here */
	__atomic_store_n(&egw.fwd_running, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < egw.nb_workers; i++) {
		/* pairs with the stores in worker_main() */
		while (__atomic_load_n(&egw.workers[i]->state, __ATOMIC_SEQ_CST) != EGW_W_IDLE)
			rte_delay_us_sleep(100);
	}
	if (egw.engine->end != NULL)
		egw.engine->end();
	return 0;
}

void
egw_workers_join(void)
{
	if (__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED))
		egw_fwd_stop();
	__atomic_store_n(&egw.workers_quit, 1, __ATOMIC_RELEASE);
	/* a control lcore of its own may sleep */
	egw_control_wake();
	rte_eal_mp_wait_lcore();
}

/* After the join: the control path built these frames while forwarding was
 * stopped (a PADT of 'pppoe session clear', say). Sent from here, in the
 * order made, on TX queue 0, which no worker uses any more; before the
 * frames the draining control path is about to make (egw_control_tx()
 * sends those itself once egw.launched is false). */
void
egw_workers_ctrl_tx_flush(void)
{
	struct rte_mbuf *pkts[CTRL_TX_BURST];
	unsigned int n, sent, refused;
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];

		if (w->ctrl_tx_ring == NULL)
			continue;
		while ((n = rte_ring_sc_dequeue_burst(w->ctrl_tx_ring, (void **)pkts, CTRL_TX_BURST,
						      NULL)) != 0) {
			sent = ctrl_tx_send(0, pkts, n, &refused);
			EGW_CNT_ADD(w->stats.ctrl_tx, sent);
			if (refused != 0)
				EGW_CNT_ADD(w->stats.ctrl_tx_drop, refused);
		}
	}
}

/* After the join and the control path's last drain: both rings are empty
 * (a frame left would be freed, and counted, here rather than leaked). */
void
egw_workers_free_rings(void)
{
	struct rte_mbuf *m;
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];

		unsigned int r;

		for (r = 0; r < EGW_CTRL_PRIO_MAX; r++) {
			while (w->ctrl_ring[r] != NULL &&
			       rte_ring_sc_dequeue(w->ctrl_ring[r], (void **)&m) == 0) {
				EGW_CNT_ADD(egw.ctrl.drop[EGW_DROP_CTRL_FULL], 1);
				rte_pktmbuf_free(m);
			}
			rte_ring_free(w->ctrl_ring[r]);
			w->ctrl_ring[r] = NULL;
		}
		while (w->ctrl_tx_ring != NULL &&
		       rte_ring_sc_dequeue(w->ctrl_tx_ring, (void **)&m) == 0) {
			EGW_CNT_ADD(egw.ctrl.tx_drop, 1);
			rte_pktmbuf_free(m);
		}
		rte_ring_free(w->ctrl_tx_ring);
		w->ctrl_tx_ring = NULL;
	}
}
