/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application bring-up and tear-down after EAL and option parsing: lcore
 * roles, ports, workers, ESP, control path, telemetry, pdump.
 */
#include <errno.h>
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
		rc = egw_workers_init();
	if (rc == 0)
		rc = egw_rxtok_stage_init();
	if (rc == 0)
		rc = egw_ports_init();
	/* after the rxtokens stage (ESP runs first) and the mbuf pools */
	if (rc == 0)
		rc = egw_esp_stage_init();
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
	egw_control_drain();
	egw.launched = false;
}

void
egw_app_fini(void)
{
	egw_app_stop();
	/* consumers give their pages back before the ports go */
	egw_rxtok_fini();
	/* contexts and SAs (keys wiped) after the workers stopped */
	egw_esp_stage_fini();
	if (egw.pdump) {
		rte_pdump_uninit();
		egw.pdump = false;
	}
	egw_ports_close();
}
