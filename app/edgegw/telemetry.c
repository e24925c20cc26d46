/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry endpoints for dpdk-telemetry.py:
 *   /edgegw/stats        per-port totals
 *   /edgegw/port,<N>     one port: totals and drops by reason
 *   /edgegw/config       engine, lcores, port roles
 *   /edgegw/esp          ESP totals and drops by reason
 *   /edgegw/pppoe        PPPoE control counters, data-path drops, sessions
 *   /edgegw/radius       RADIUS client, DAE and accounting counters
 *                        by state
 *   /edgegw/ip           IP routing: data-path counters, drops by reason,
 *                        ARP/ND counters, route counts, neighbours
 *   /edgegw/rxtokens     rxtokens consumers: state, tokens, returns,
 *                        rejections, credentials, drops by reason
 *   /edgegw/xdp          ports with edgegw's XDP steering program: what
 *                        `show xdp` and --stats-json give, one dict per
 *                        port (classes and maps flattened: DPDK's
 *                        telemetry nests one level)
 *   /edgegw/pppoe/sessions[,<first-id>]
 *                        up to TEL_SESSIONS sessions from that id on, and
 *                        the id to ask for next (0: no more)
 * Counters are read with relaxed loads; they are totals since start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "egw_rxtok.h"
#include "egw_xdp.h"
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
	rte_tel_data_add_dict_int(d, "rx_hold", !egw.opts.no_rx_hold);
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
	rte_tel_data_add_dict_string(d, "policy_default_out",
				     egw_esp_stage_default_name(EGW_ESP_DIR_OUT));
	rte_tel_data_add_dict_string(d, "policy_default_in",
				     egw_esp_stage_default_name(EGW_ESP_DIR_IN));
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

/* PPPoE: the library's control counters, the data-path drops of every port
 * and sessions by state; the library is read under the control lock. */
static int
tel_pppoe(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	const char *names[256];
	uint64_t values[256], drop[EGW_PPPOE_DROP_MAX];
	unsigned int count[4], total, n, i;

	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&egw.ctrl_lock);
	rte_tel_data_add_dict_int(d, "available", egw.pppoe);
	if (!egw.pppoe) {
		rte_spinlock_unlock(&egw.ctrl_lock);
		return 0;
	}
	total = egw_pppoe_session_count(count);
	n = egw_pppoe_ctrl_counters(names, values, RTE_DIM(names));
	rte_tel_data_add_dict_u64(d, "sessions", total);
	rte_tel_data_add_dict_u64(d, "sessions_negotiating", count[EGW_PPPOE_S_NEGOTIATING]);
	rte_tel_data_add_dict_u64(d, "sessions_bound", count[EGW_PPPOE_S_BOUND]);
	rte_tel_data_add_dict_u64(d, "sessions_closing", count[EGW_PPPOE_S_CLOSING]);
	for (i = 0; i < n && i < RTE_DIM(names); i++)
		rte_tel_data_add_dict_u64(d, names[i], values[i]);
	rte_spinlock_unlock(&egw.ctrl_lock);
	rte_tel_data_add_dict_u64(d, "ctrl_tx", EGW_CNT_READ(egw.ctrl.tx));
	rte_tel_data_add_dict_u64(d, "ctrl_tx_drop", EGW_CNT_READ(egw.ctrl.tx_drop));
	rte_tel_data_add_dict_u64(d, "ctrl_tx_backpressure",
				  EGW_CNT_READ(egw.ctrl.tx_backpressure));
	rte_tel_data_add_dict_u64(d, "ctrl_woken", EGW_CNT_READ(egw.ctrl.woken));
	egw_pppoe_stage_drops(drop);
	for (i = 0; i < EGW_PPPOE_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(d, egw_pppoe_drop_name(i), drop[i]);
	return 0;
}

/* RADIUS: the client's, the DAE listener's and the AAA glue's counters. */
static void
tel_radius_cnt(const char *name, uint64_t v, void *arg)
{
	rte_tel_data_add_dict_u64(arg, name, v);
}

static int
tel_radius(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&egw.ctrl_lock);
	rte_tel_data_add_dict_int(d, "available", egw.radius);
	if (egw.radius)
		egw_radius_stage_counters(tel_radius_cnt, d);
	rte_spinlock_unlock(&egw.ctrl_lock);
	return 0;
}

/* IP routing: the data-path counters summed over the workers, drops by
 * reason, the control path's counters and the table sizes. */
static int
tel_ip(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	const char *names[64];
	uint64_t values[64], drop[EGW_IP_DROP_MAX];
	unsigned int count[2][EGW_IP_RT_MAX], n, i, t, r4 = 0, r6 = 0;
	struct egw_ip_ctx_stats s;
	struct egw_ip_mem m;

	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&egw.ctrl_lock);
	rte_tel_data_add_dict_int(d, "available", egw.ip);
	if (!egw.ip) {
		rte_spinlock_unlock(&egw.ctrl_lock);
		return 0;
	}
	n = egw_ip_ctrl_counters(names, values, RTE_DIM(names));
	for (i = 0; i < n; i++)
		rte_tel_data_add_dict_u64(d, names[i], values[i]);
	egw_ip_route_count(count);
	egw_ip_mem(&m);
	rte_spinlock_unlock(&egw.ctrl_lock);
	for (t = 0; t < EGW_IP_RT_MAX; t++) {
		r4 += count[0][t];
		r6 += count[1][t];
	}
	rte_tel_data_add_dict_u64(d, "routes_ipv4", r4);
	rte_tel_data_add_dict_u64(d, "routes_ipv6", r6);
	rte_tel_data_add_dict_u64(d, "fib_prefixes_ipv4", m.routes4);
	rte_tel_data_add_dict_u64(d, "fib_prefixes_ipv6", m.routes6);
	rte_tel_data_add_dict_u64(d, "next_hops", m.nh);
	rte_tel_data_add_dict_u64(d, "neighbours", m.neigh);
	egw_ip_stage_ctx_stats(&s);
	rte_tel_data_add_dict_u64(d, "forwarded", s.forwarded);
	rte_tel_data_add_dict_u64(d, "echo_replies", s.echo_replies);
	rte_tel_data_add_dict_u64(d, "icmp_errors", s.icmp_errors);
	rte_tel_data_add_dict_u64(d, "icmp_ratelimited", s.icmp_ratelimited);
	rte_tel_data_add_dict_u64(d, "fragments", s.fragments);
	rte_tel_data_add_dict_u64(d, "local", s.local);
	rte_tel_data_add_dict_u64(d, "punted", s.punted);
	rte_tel_data_add_dict_u64(d, "nd", s.nd);
	egw_ip_stage_drops(drop);
	for (i = 0; i < EGW_IP_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(d, egw_ip_drop_name(i), drop[i]);
	return 0;
}

/* Sessions per reply: each is a dict of a dozen entries, and a reply must
 * fit the telemetry socket's 16 KiB. */
#define TEL_SESSIONS 24

struct tel_walk {
	struct rte_tel_data *d;
	unsigned int first, n, next;
	int err;
};

static int
tel_session(const struct egw_pppoe_session_info *s, void *arg)
{
	struct tel_walk *tw = arg;
	struct rte_tel_data *c;
	char key[8], mac[RTE_ETHER_ADDR_FMT_SIZE], ip4[INET_ADDRSTRLEN];

	if (s->sid < tw->first)
		return 0;
	if (tw->n == TEL_SESSIONS) {
		tw->next = s->sid;
		return 1;
	}
	c = rte_tel_data_alloc();
	if (c == NULL) {
		tw->err = -ENOMEM;
		return 1;
	}
	rte_ether_format_addr(mac, sizeof(mac), &s->mac);
	if (s->ip4 == 0 || inet_ntop(AF_INET, &s->ip4, ip4, sizeof(ip4)) == NULL)
		snprintf(ip4, sizeof(ip4), "-");
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "port", s->port);
	rte_tel_data_add_dict_u64(c, "vlan_outer", s->n_vlan > 0 ? s->vlan[0] : 0);
	rte_tel_data_add_dict_u64(c, "vlan_inner", s->n_vlan > 1 ? s->vlan[1] : 0);
	rte_tel_data_add_dict_string(c, "mac", mac);
	rte_tel_data_add_dict_string(c, "state", egw_pppoe_state_name(s->state));
	rte_tel_data_add_dict_string(c, "user", s->user);
	rte_tel_data_add_dict_string(c, "ipv4", ip4);
	rte_tel_data_add_dict_u64(c, "uptime_s", s->uptime_s);
	rte_tel_data_add_dict_u64(c, "rx_pkts", s->rx_pkts);
	rte_tel_data_add_dict_u64(c, "rx_bytes", s->rx_bytes);
	rte_tel_data_add_dict_u64(c, "tx_pkts", s->tx_pkts);
	rte_tel_data_add_dict_u64(c, "tx_bytes", s->tx_bytes);
	snprintf(key, sizeof(key), "%u", s->sid);
	rte_tel_data_add_dict_container(tw->d, key, c, 0);
	tw->n++;
	return 0;
}

static int
tel_pppoe_sessions(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct tel_walk tw = {.d = d, .first = 0};
	uint64_t first = 0;

	if (params != NULL && params[0] != '\0' &&
	    egw_parse_u64(params, 0, EGW_PPPOE_MAX_SESSIONS, &first) < 0)
		return -EINVAL;
	tw.first = (unsigned int)first;
	rte_tel_data_start_dict(d);
	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw.pppoe)
		egw_pppoe_session_walk(tel_session, &tw);
	rte_spinlock_unlock(&egw.ctrl_lock);
	if (tw.err != 0)
		return tw.err;
	rte_tel_data_add_dict_u64(d, "next", tw.next);
	return 0;
}

static int
tel_rxtok_consumer(const struct egw_rxtok_consumer_stats *st, void *arg)
{
	struct rte_tel_data *d = arg, *c = rte_tel_data_alloc();
	unsigned int r;

	if (c == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_string(c, "region", st->region);
	rte_tel_data_add_dict_string(c, "state",
				     st->closed      ? "closed"
				     : !st->external ? "in-process"
				     : st->attached  ? "attached"
						     : "detached");
	rte_tel_data_add_dict_u64(c, "uid", st->uid);
	rte_tel_data_add_dict_int(c, "gid", (int)st->gid);
	rte_tel_data_add_dict_u64(c, "quota", st->quota);
	rte_tel_data_add_dict_u64(c, "outstanding", st->outstanding);
	rte_tel_data_add_dict_u64(c, "held", st->held);
	rte_tel_data_add_dict_u64(c, "read", st->read);
	rte_tel_data_add_dict_u64(c, "returned", st->returned);
	rte_tel_data_add_dict_u64(c, "released", st->released);
	rte_tel_data_add_dict_u64(c, "rejected", st->rejected);
	rte_tel_data_add_dict_u64(c, "ret_failed", st->ret_failed);
	rte_tel_data_add_dict_u64(c, "steered", st->steered);
	rte_tel_data_add_dict_u64(c, "corrupt", st->corrupt);
	rte_tel_data_add_dict_u64(c, "attaches", st->attaches);
	rte_tel_data_add_dict_u64(c, "cred_refused", st->cred_refused);
	/* 1: its region is bound "shared", its owner may read every frame of
	 * those queues */
	rte_tel_data_add_dict_u64(c, "shared", (uint64_t)st->shared);
	for (r = 0; r < EGW_RXTOK_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(c, egw_rxtok_drop_name(r), st->drops[r]);
	rte_tel_data_add_dict_container(d, st->name, c, 0);
	return 0;
}

static int
tel_rxtokens(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	int rc;

	rte_tel_data_start_dict(d);
	/* the control thread owns the consumers: take its lock */
	rte_spinlock_lock(&egw.ctrl_lock);
	rc = egw_rxtok_consumer_walk(tel_rxtok_consumer, d);
	rte_spinlock_unlock(&egw.ctrl_lock);
	return rc;
}

static int
tel_xdp(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct egw_xdp_port_info in;
	char key[64];
	unsigned int pid, k;

	rte_tel_data_start_dict(d);
	/* lib/xdp has one caller at a time: the control path's lock */
	rte_spinlock_lock(&egw.ctrl_lock);
	for (pid = 0; pid < EGW_XDP_MAX_PORTS; pid++) {
		struct rte_tel_data *p;

		if (egw_xdp_port_info((uint16_t)pid, &in) < 0)
			continue;
		p = rte_tel_data_alloc();
		if (p == NULL)
			break;
		rte_tel_data_start_dict(p);
		rte_tel_data_add_dict_u64(p, "port", pid);
		rte_tel_data_add_dict_string(p, "ifname", in.ifname);
		rte_tel_data_add_dict_u64(p, "prog_id", in.prog_id);
		rte_tel_data_add_dict_string(p, "mode", in.mode);
		rte_tel_data_add_dict_u64(p, "flags", in.flags);
		rte_tel_data_add_dict_u64(p, "kernel_addrs_known", in.kernel_addrs_known);
		for (k = 0; k < EGW_XDP_CLS_MAX; k++) {
			snprintf(key, sizeof(key), "%s_packets", egw_xdp_class_name(k));
			rte_tel_data_add_dict_u64(p, key, in.cls[k].packets);
			snprintf(key, sizeof(key), "%s_bytes", egw_xdp_class_name(k));
			rte_tel_data_add_dict_u64(p, key, in.cls[k].bytes);
		}
		for (k = 0; k < in.n_maps; k++) {
			snprintf(key, sizeof(key), "%s_entries", in.maps[k].name);
			rte_tel_data_add_dict_u64(p, key, in.maps[k].entries);
		}
		snprintf(key, sizeof(key), "port%u", pid);
		rte_tel_data_add_dict_container(d, key, p, 0);
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
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
	rc |= rte_telemetry_register_cmd(
		"/edgegw/pppoe", tel_pppoe,
		"PPPoE: sessions by state, control counters, data-path drops by reason. Takes no "
		"parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/radius", tel_radius,
		"RADIUS: client, DAE and accounting counters (no secret). Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/ip", tel_ip,
		"IP routing: data-path counters, drops by reason, ARP/ND counters, routes, next "
		"hops, neighbours. Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/rxtokens", tel_rxtokens,
		"rxtokens consumers: state, tokens, returns, rejections, credentials, drops by "
		"reason. Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/xdp", tel_xdp,
		"XDP steering programs: program id, mode, frames and bytes by class, map entries, "
		"per port. Takes no parameters");
	rc |= rte_telemetry_register_cmd(
		"/edgegw/pppoe/sessions", tel_pppoe_sessions,
		"PPPoE sessions by id, 24 at most, and the id to ask for next (0: no more). "
		"Parameters: int first session id (default 0)");
	return rc != 0 ? -EINVAL : 0;
}
