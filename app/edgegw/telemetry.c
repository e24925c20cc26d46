/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry endpoints for dpdk-telemetry.py:
 *   /edgegw/stats        per-port totals
 *   /edgegw/port,<N>     one port: totals and drops by reason
 *   /edgegw/config       engine, lcores, port roles
 *   /edgegw/esp          ESP totals and drops by reason
 * Counters are read with relaxed loads; they are totals since start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "fwd.h"

static void
port_dict(struct rte_tel_data *d, uint16_t pid, bool drops)
{
	struct egw_qstats s;
	unsigned int r;
	uint64_t dropped = 0;

	egw_qstats_sum(pid, &s);
	for (r = 0; r < EGW_DROP_MAX; r++)
		dropped += s.drop[r];
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", egw.ports[pid].name);
	rte_tel_data_add_dict_string(d, "role", egw_role_name(egw.ports[pid].role));
	rte_tel_data_add_dict_u64(d, "rx", s.rx);
	rte_tel_data_add_dict_u64(d, "rx_bytes", s.rx_bytes);
	rte_tel_data_add_dict_u64(d, "created", s.created);
	rte_tel_data_add_dict_u64(d, "tx", s.tx);
	rte_tel_data_add_dict_u64(d, "tx_bytes", s.tx_bytes);
	rte_tel_data_add_dict_u64(d, "delivered", s.delivered);
	rte_tel_data_add_dict_u64(d, "queued", s.queued);
	rte_tel_data_add_dict_u64(d, "dropped", dropped);
	if (drops)
		for (r = 0; r < EGW_DROP_MAX; r++)
			rte_tel_data_add_dict_u64(d, egw_drop_names[r], s.drop[r]);
}

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	uint16_t pid;

	rte_tel_data_start_dict(d);
	RTE_ETH_FOREACH_DEV (pid) {
		struct rte_tel_data *p;
		char key[16];

		if (!egw.ports[pid].used)
			continue;
		p = rte_tel_data_alloc();
		if (p == NULL)
			return -ENOMEM;
		port_dict(p, pid, false);
		snprintf(key, sizeof(key), "port%u", pid);
		rte_tel_data_add_dict_container(d, key, p, 0);
	}
	return 0;
}

static int
tel_port(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	char err[128];
	uint16_t pid;

	if (params == NULL || egw_port_parse(params, &pid, err, sizeof(err)) < 0)
		return -EINVAL;
	port_dict(d, pid, true);
	return 0;
}

static int
tel_config(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	uint16_t pid;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "engine", egw.engine->name);
	rte_tel_data_add_dict_int(d, "running",
				  __atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_int(d, "workers", egw.nb_workers);
	rte_tel_data_add_dict_int(d, "control_lcore", (int)egw.control_lcore);
	rte_tel_data_add_dict_int(d, "burst", egw.opts.burst);
	RTE_ETH_FOREACH_DEV (pid) {
		char key[16];

		if (!egw.ports[pid].used)
			continue;
		snprintf(key, sizeof(key), "port%u_role", pid);
		rte_tel_data_add_dict_string(d, key, egw_role_name(egw.ports[pid].role));
	}
	return 0;
}

static int
count_policy(const struct egw_esp_policy *p __rte_unused, uint64_t hits __rte_unused, void *arg)
{
	(*(unsigned int *)arg)++;
	return 0;
}

/* ESP totals of every context and drops by reason; the SA and policy
 * tables are read under the control lock (their writer holds it). */
static int
tel_esp(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct egw_esp_ctx_stats st;
	unsigned int pol_out = 0, pol_in = 0, r;
	const char *path;

	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&egw.ctrl_lock);
	rte_tel_data_add_dict_int(d, "available", egw.esp);
	if (!egw.esp) {
		rte_spinlock_unlock(&egw.ctrl_lock);
		return 0;
	}
	egw_esp_stats(&st);
	path = egw_esp_state_path();
	rte_tel_data_add_dict_string(d, "state_file", path != NULL ? path : "");
	rte_tel_data_add_dict_u64(d, "sa_out", egw_esp_sa_count(EGW_ESP_DIR_OUT));
	rte_tel_data_add_dict_u64(d, "sa_in", egw_esp_sa_count(EGW_ESP_DIR_IN));
	egw_esp_policy_walk(EGW_ESP_DIR_OUT, count_policy, &pol_out);
	egw_esp_policy_walk(EGW_ESP_DIR_IN, count_policy, &pol_in);
	rte_spinlock_unlock(&egw.ctrl_lock);
	rte_tel_data_add_dict_u64(d, "policy_out", pol_out);
	rte_tel_data_add_dict_u64(d, "policy_in", pol_in);
	rte_tel_data_add_dict_u64(d, "out_packets", st.out_packets);
	rte_tel_data_add_dict_u64(d, "out_bytes", st.out_bytes);
	rte_tel_data_add_dict_u64(d, "in_packets", st.in_packets);
	rte_tel_data_add_dict_u64(d, "in_bytes", st.in_bytes);
	rte_tel_data_add_dict_u64(d, "segments", st.segments);
	rte_tel_data_add_dict_u64(d, "fragments", st.fragments);
	rte_tel_data_add_dict_u64(d, "icmp", st.icmp);
	rte_tel_data_add_dict_u64(d, "icmp_limited", st.icmp_limited);
	rte_tel_data_add_dict_u64(d, "bypass", st.bypass);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(d, egw_esp_drop_name(r), st.drop[r]);
	return 0;
}

int
egw_telemetry_init(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd("/edgegw/stats", tel_stats,
					 "Per-port frame counts. Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/port", tel_port,
		"One port's counts and drops by reason. Parameters: int port_id");
	rc |= rte_telemetry_register_cmd("/edgegw/config", tel_config,
					 "Engine, lcores and port roles. Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/esp", tel_esp,
		"ESP: SA and policy counts, totals of the contexts, drops by reason. Takes no "
		"parameters");
	return rc != 0 ? -EINVAL : 0;
}
