/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: drains the per-worker SPSC rings (one per priority, read
 * highest first, each in arrival order) and hands each frame to the
 * handler of its class (the PPPoE and ARP handlers plug in
 * here), and runs the services of lib/rxtokens, lib/esp and lib/pppoe. Runs
 * on the main lcore between command-line polls, or on its own lcore with
 * --control-lcore; it sleeps when idle.
 *
 * Handlers and services run under egw.ctrl_lock, which commands on the main
 * lcore take too: the libraries' control state has one writer at a time,
 * and so has each worker's ctrl_tx_ring (egw_control_tx()).
 */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_launch.h>

#include "egw.h"
#include "egw_esp.h"
#include "egw_rxtok.h"
#include "egw_xdp.h"

#define CTRL_BURST 32u
/* Frames handled per poll over all rings (the timers and services run after) */
#define CTRL_BUDGET 128
/* Free room every ring to a worker must have before input is read: a round
 * of CTRL_BUDGET frames makes at most two frames each */
#define CTRL_TX_RESERVE (2 * CTRL_BUDGET)

/*
 * Sleeping without a fixed poll. The control thread says it sleeps, looks
 * at its rings once more and waits in poll() on an eventfd. A worker that
 * hands it a frame, or whose ESP run needs the sequence limit extended,
 * calls egw_control_wake(), which writes the eventfd only if the thread
 * sleeps (once per sleep: the first caller clears the flag). Each side
 * stores, fences, then loads what the other stored (the ring's tail or
 * the flag), so no wakeup is lost. What no worker can announce (the host's
 * frames on the exception ports, RADIUS and rxtokens sockets, timers) is
 * polled every CTRL_BUSY_MS for CTRL_BUSY_POLLS polls after the last work,
 * then every CTRL_IDLE_MS; every CTRL_BUSY_MS while rxtokens consumers are
 * attached (their returns come through shared memory).
 */
#define CTRL_BUSY_MS 1
#define CTRL_BUSY_POLLS 16
#define CTRL_IDLE_MS 10

static struct {
	int sleeping; /* written by the control thread and by the first waker */
} ctrl_sleep __rte_cache_aligned;
static int ctrl_efd = -1;
static unsigned int ctrl_idle_polls;

int
egw_control_init(void)
{
	ctrl_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ctrl_efd < 0) {
		fprintf(stderr, "error: eventfd for the control path: %s\n", strerror(errno));
		return -errno;
	}
	egw_esp_set_wake(egw_control_wake);
	return 0;
}

void
egw_control_wake(void)
{
	uint64_t one = 1;

	/* pairs with the fence in egw_control_wait(): the caller's ring
	 * enqueue (or sequence reservation) before, the flag after */
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ctrl_sleep.sleeping, __ATOMIC_RELAXED) == 0 ||
	    __atomic_exchange_n(&ctrl_sleep.sleeping, 0, __ATOMIC_RELAXED) == 0)
		return;
	if (write(ctrl_efd, &one, sizeof(one)) < 0) {
		/* only EAGAIN (the counter is full) can happen: it is awake then */
	}
}

/* Input in a ring from a worker. */
static bool
control_input(void)
{
	unsigned int p;
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++)
		for (p = 0; p < EGW_CTRL_PRIO_MAX; p++) {
			struct rte_ring *r = egw.workers[i]->ctrl_ring[p];

			if (r != NULL && !rte_ring_empty(r))
				return true;
		}
	return false;
}

bool
egw_control_wait(unsigned int work, int fd)
{
	struct pollfd pfd[2];
	unsigned int nfd = 0;
	int timeout, n;
	uint64_t v;

	if (work != 0) {
		ctrl_idle_polls = 0;
		timeout = 0;
	} else if (ctrl_idle_polls < CTRL_BUSY_POLLS || egw_rxtok_consumer_count() != 0) {
		ctrl_idle_polls++;
		timeout = CTRL_BUSY_MS;
	} else {
		timeout = CTRL_IDLE_MS;
	}
	if (timeout != 0) {
		__atomic_store_n(&ctrl_sleep.sleeping, 1, __ATOMIC_RELAXED);
		/* pairs with the fence in egw_control_wake() */
		rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (control_input())
			timeout = 0;
	}
	if (timeout == 0 && fd < 0) {
		__atomic_store_n(&ctrl_sleep.sleeping, 0, __ATOMIC_RELAXED);
		return false;
	}
	pfd[nfd++] = (struct pollfd){.fd = ctrl_efd, .events = POLLIN};
	if (fd >= 0)
		pfd[nfd++] = (struct pollfd){.fd = fd, .events = POLLIN};
	n = poll(pfd, nfd, timeout);
	__atomic_store_n(&ctrl_sleep.sleeping, 0, __ATOMIC_RELAXED);
	if (n <= 0)
		return false;
	if (pfd[0].revents & POLLIN) {
		EGW_CNT_ADD(egw.ctrl.woken, 1);
		if (read(ctrl_efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another reader took it; nothing is lost */
		}
	}
	return fd >= 0 && (pfd[nfd - 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

void
egw_control_set_handler(enum egw_eth_class cls, egw_ctrl_fn fn)
{
	if ((unsigned int)cls < EGW_ETH_CLS_MAX)
		egw.ctrl_handler[cls] = fn;
}

/* Handle frames of one ring, in arrival order (under ctrl_lock). */
static void
control_handle(struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		uint8_t cls = egw_eth_meta(m)->cls;

		if (cls >= EGW_ETH_CLS_MAX)
			cls = EGW_ETH_CLS_OTHER;
		EGW_CNT_ADD(egw.ctrl.by_class[cls], 1);
		if (egw.ctrl_handler[cls] != NULL) {
			egw.ctrl_handler[cls](m);
		} else {
			EGW_CNT_ADD(egw.ctrl.drop[EGW_DROP_CTRL_NO_HANDLER], 1);
			rte_pktmbuf_free(m);
		}
	}
}

/* Room for what handling a round of input makes (each frame makes a few at
 * most) in every ring to a worker; otherwise input waits (back-pressure:
 * the rings from the workers fill and overflow there, counted by class). */
static bool
control_tx_room(void)
{
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++) {
		struct rte_ring *r = egw.workers[i]->ctrl_tx_ring;

		if (r != NULL && rte_ring_free_count(r) < CTRL_TX_RESERVE)
			return false;
	}
	return true;
}

unsigned int
egw_control_poll(void)
{
	struct rte_mbuf *pkts[CTRL_BURST];
	unsigned int total = 0, budget = CTRL_BUDGET, p;
	uint16_t i;

	/* by priority (enum egw_ctrl_prio): each round reads up to a burst
	 * of each ring, highest first, until CTRL_BUDGET frames: a flooded
	 * lower ring never delays a higher one by more than a round */
	for (p = 0; p < EGW_CTRL_PRIO_MAX && budget != 0; p++) {
		for (i = 0; i < egw.nb_workers && budget != 0; i++) {
			struct rte_ring *r = egw.workers[i]->ctrl_ring[p];
			unsigned int n;

			if (r == NULL)
				continue;
			if (!control_tx_room()) {
				EGW_CNT_ADD(egw.ctrl.tx_backpressure, 1);
				budget = 0;
				break;
			}
			n = rte_ring_dequeue_burst(r, (void **)pkts, RTE_MIN(budget, CTRL_BURST),
						   NULL);
			if (n == 0)
				continue;
			rte_spinlock_lock(&egw.ctrl_lock);
			control_handle(pkts, n);
			rte_spinlock_unlock(&egw.ctrl_lock);
			EGW_CNT_ADD(egw.ctrl.rx, n);
			total += n;
			budget -= n;
		}
	}
	/* rxtokens consumers are served by this thread: their ownership state
	 * has one owner */
	rte_spinlock_lock(&egw.ctrl_lock);
	total += egw_rxtok_service();
	/* ESP: sequence numbers persisted ahead of use, lifetimes, frees
	 * after grace periods; the SA and policy tables have this one writer
	 * at a time with the esp commands */
	if (egw.esp)
		total += egw_esp_service();
	/* PPPoE: timers (rte_timer_manage: only those of this lcore, the one
	 * egw_pppoe_init() ran on: stage_pppoe.c), cookie secret rotation,
	 * sessions freed after their grace period */
	if (egw.pppoe)
		total += egw_pppoe_service();
	/* IP: neighbour timers (states, retries, aging), and what the host's
	 * stack sent through the exception paths */
	if (egw.ip) {
		total += egw_ip_service();
		total += egw_exception_poll();
	}
	/* RADIUS: non-blocking sockets read, retransmissions, session
	 * timeouts and interim updates (stage_radius.c) */
	if (egw.radius)
		total += egw_radius_stage_service();
	/* XDP: the kernel's address changes into the steering maps (routes
	 * never take the kernel's addresses) */
	if (egw_xdp_any_active())
		total += egw_xdp_service();
	rte_spinlock_unlock(&egw.ctrl_lock);
	return total;
}

void
egw_control_tx(uint16_t port, struct rte_mbuf *m, void *arg __rte_unused)
{
	struct egw_worker *w;

	if (port >= RTE_MAX_ETHPORTS || !egw.ports[port].used) {
		EGW_CNT_ADD(egw.ctrl.tx_drop, 1);
		rte_pktmbuf_free(m);
		return;
	}
	if (!egw.launched) {
		/* no worker runs (start-up, or after egw_workers_join()): TX
		 * queue 0 has no other user */
		if (rte_eth_tx_burst(port, 0, &m, 1) == 1) {
			EGW_CNT_ADD(egw.ctrl.tx, 1);
		} else {
			EGW_CNT_ADD(egw.ctrl.tx_drop, 1);
			rte_pktmbuf_free(m);
		}
		return;
	}
	/* The worker that polls the port's RX queue 0 sends every control
	 * frame of the port, so they leave in the order they were made. The
	 * mbuf's port field carries the egress port through the ring (no PMD
	 * reads it on TX). */
	w = egw.workers[egw.ports[port].ctrl_tx_worker];
	m->port = port;
	if (w->ctrl_tx_ring == NULL || rte_ring_sp_enqueue(w->ctrl_tx_ring, m) != 0) {
		EGW_CNT_ADD(egw.ctrl.tx_drop, 1);
		rte_pktmbuf_free(m);
		return;
	}
	EGW_CNT_ADD(egw.ctrl.tx, 1);
}

void
egw_control_drain(void)
{
	while (egw_control_poll() != 0)
		;
}

static int
control_main(void *arg __rte_unused)
{
	while (!__atomic_load_n(&egw.workers_quit, __ATOMIC_ACQUIRE))
		egw_control_wait(egw_control_poll(), -1);
	return 0;
}

int
egw_control_launch(void)
{
	if (egw.control_lcore == rte_get_main_lcore())
		return 0;
	return rte_eal_remote_launch(control_main, NULL, egw.control_lcore);
}
