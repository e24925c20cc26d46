/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application bring-up and tear-down after EAL and option parsing: lcore
 * roles, ports, workers, PPPoE, ESP, control path, telemetry, pdump.
 *
 * Gateway stages wrap the stage installed before them, so the one installed
 * last runs first. Per frame class the order is:
 *   PPPoE session:  rxtokens -> PPPoE decapsulation
 *                   (a pppoe-session consumer takes its session's frames
 *                   before decapsulation; decapsulated frames start again
 *                   at the head of their IPv4/IPv6 chain)
 *   IPv4, IPv6:     ESP -> PPPoE -> rxtokens -> route
 *                   (inbound ESP is decrypted before the PPPoE encapsulation
 *                   looks up the subscriber; upstream frames decapsulated
 *                   from a session pass outbound ESP on their way to the
 *                   uplink)
 * hence: PPPoE session stage, rxtokens, ports (pools), PPPoE (IPv4/IPv6),
 * ESP.
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_pdump.h>

#include "egw_rxtok.h"
#include "fwd.h"

struct egw_app egw = {
	.engine = &egw_fwd_io,
	.ctrl_lock = RTE_SPINLOCK_INITIALIZER,
};

static int
setup_control_lcore(void)
{
	int cl = egw.opts.control_lcore;

	if (cl < 0) {
		egw.control_lcore = rte_get_main_lcore();
		return 0;
	}
	if (cl >= RTE_MAX_LCORE || !rte_lcore_is_enabled((unsigned int)cl) ||
	    (unsigned int)cl == rte_get_main_lcore()) {
		fprintf(stderr, "error: --control-lcore %d: not an enabled worker lcore (EAL -l)\n",
			cl);
		return -EINVAL;
	}
	egw.control_lcore = (unsigned int)cl;
	return 0;
}

struct rte_mempool *
egw_socket_pool(unsigned int s)
{
	unsigned int i;

	if (s < RTE_MAX_NUMA_NODES && egw.pool[s] != NULL)
		return egw.pool[s];
	for (i = 0; i < RTE_MAX_NUMA_NODES; i++)
		if (egw.pool[i] != NULL)
			return egw.pool[i];
	return NULL;
}

int
egw_drop_names_check(const char *lib, unsigned int first, unsigned int n,
		     const char *(*name)(unsigned int))
{
	unsigned int r;

	for (r = 0; r < n; r++) {
		if (strcmp(egw_drop_names[first + r], name(r)) != 0) {
			fprintf(stderr,
				"error: %s drop reason %u: '%s' in drop.def, '%s' in the library\n",
				lib, r, egw_drop_names[first + r], name(r));
			return -EINVAL;
		}
	}
	return 0;
}

void
egw_drops_sum(unsigned int first, unsigned int n, uint64_t *out)
{
	uint16_t pid, q;
	unsigned int r;

	memset(out, 0, sizeof(uint64_t) * n);
	RTE_ETH_FOREACH_DEV (pid) {
		const struct egw_port *pt = &egw.ports[pid];

		if (!pt->used || pt->qstats == NULL)
			continue;
		for (q = 0; q < pt->nb_rxq; q++)
			for (r = 0; r < n; r++)
				out[r] += EGW_CNT_READ(pt->qstats[q].drop[first + r]);
	}
}

int
egw_app_init(void)
{
	int rc;

	rc = egw_eth_init();
	if (rc < 0) {
		fprintf(stderr, "error: cannot register the mbuf field for lib/eth: %s\n",
			rte_strerror(-rc));
		return rc;
	}
	if (egw.engine == NULL)
		egw.engine = &egw_fwd_io;
	rc = setup_control_lcore();
	if (rc == 0)
		rc = egw_control_init();
	if (rc == 0)
		rc = egw_workers_init();
	if (rc == 0)
		egw_pppoe_stage_install();
	if (rc == 0)
		rc = egw_rxtok_stage_init();
	if (rc == 0)
		rc = egw_ports_init();
	/* after the rxtokens stage and the mbuf pools, before ESP */
	if (rc == 0)
		rc = egw_pppoe_stage_init();
	/* after the PPPoE stage (ESP runs first) */
	if (rc == 0)
		rc = egw_esp_stage_init();
	/* after the ports (their MACs and MTUs) and the mbuf pools */
	if (rc == 0)
		rc = egw_ip_stage_init();
	/* after the PPPoE stage: its AAA hooks */
	if (rc == 0 && egw.pppoe)
		rc = egw_radius_stage_init();
	if (rc == 0)
		rc = egw_workers_launch();
	if (rc < 0)
		return rc;
	/* lcores may be running from here on: egw_app_stop() joins them */
	egw.launched = true;
	rc = egw_control_launch();
	if (rc < 0)
		return rc;
	if (egw_telemetry_init() < 0)
		fprintf(stderr, "warning: telemetry endpoints not registered\n");
	if (rte_pdump_init() < 0)
		fprintf(stderr, "warning: pdump not available (dpdk-dumpcap cannot attach): %s\n",
			rte_strerror(rte_errno));
	else
		egw.pdump = true;
	return 0;
}

void
egw_app_stop(void)
{
	if (!egw.launched)
		return;
	egw_workers_join();
	/* from here the control path sends its frames itself
	 * (egw_control_tx()), after those the workers did not send */
	rte_spinlock_lock(&egw.ctrl_lock);
	egw.launched = false;
	egw_workers_ctrl_tx_flush();
	rte_spinlock_unlock(&egw.ctrl_lock);
	egw_control_drain();
	egw_workers_free_rings();
}

void
egw_app_fini(void)
{
	egw_app_stop();
	/* consumers give their pages back before the ports go */
	egw_rxtok_fini();
	/* contexts and SAs (keys wiped) after the workers stopped */
	egw_esp_stage_fini();
	/* sessions closed with a PADT each, sent while the ports are up */
	egw_pppoe_stage_fini();
	/* after the last session's end was heard (its Stop) */
	egw_radius_stage_fini();
	/* held packets freed, neighbours and routes gone */
	egw_ip_stage_fini();
	if (egw.pdump) {
		rte_pdump_uninit();
		egw.pdump = false;
	}
	egw_ports_close();
}
