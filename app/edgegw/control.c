/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: drains the per-worker SPSC rings in arrival order and hands
 * each frame to the handler of its class (the PPPoE and ARP handlers plug in
 * here), and runs the services of lib/rxtokens and lib/esp. Runs on the main
 * lcore between command-line polls, or on its own lcore with
 * --control-lcore; it sleeps when idle.
 */
#include <errno.h>

#include <rte_cycles.h>
#include <rte_launch.h>

#include "egw.h"
#include "egw_rxtok.h"

#define CTRL_BURST 32

void
egw_control_set_handler(enum egw_eth_class cls, egw_ctrl_fn fn)
{
	if ((unsigned int)cls < EGW_ETH_CLS_MAX)
		egw.ctrl_handler[cls] = fn;
}

unsigned int
egw_control_poll(void)
{
	struct rte_mbuf *pkts[CTRL_BURST];
	unsigned int total = 0;
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++) {
		struct rte_ring *r = egw.workers[i]->ctrl_ring;
		unsigned int n, k;

		if (r == NULL)
			continue;
		n = rte_ring_dequeue_burst(r, (void **)pkts, CTRL_BURST, NULL);
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
		EGW_CNT_ADD(egw.ctrl.rx, n);
		total += n;
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
	rte_spinlock_unlock(&egw.ctrl_lock);
	return total;
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
	while (!__atomic_load_n(&egw.workers_quit, __ATOMIC_ACQUIRE)) {
		if (egw_control_poll() == 0)
			rte_delay_us_sleep(200);
	}
	return 0;
}

int
egw_control_launch(void)
{
	if (egw.control_lcore == rte_get_main_lcore())
		return 0;
	return rte_eal_remote_launch(control_main, NULL, egw.control_lcore);
}
