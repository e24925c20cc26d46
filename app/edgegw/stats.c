/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: display (testpmd style), JSON at exit, the accounting identity.
 *
 * Counters only grow. "clear port stats" records a baseline that the show
 * commands subtract; --stats-json and telemetry always report totals since
 * start, so they can be scraped as monotonic counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "egw_rxtok.h"
#include "egw_xdp.h"
#include "fwd.h"

const char *const egw_drop_names[EGW_DROP_MAX] = {
#define EGW_DROP(e, n, d) [EGW_DROP_##e] = n,
#include "drop.def"
#undef EGW_DROP
};

static void
qstats_add(struct egw_qstats *acc, struct egw_qstats *q)
{
	unsigned int r;

	acc->rx += EGW_CNT_READ(q->rx);
	acc->rx_bytes += EGW_CNT_READ(q->rx_bytes);
	acc->created += EGW_CNT_READ(q->created);
	acc->tx += EGW_CNT_READ(q->tx);
	acc->tx_bytes += EGW_CNT_READ(q->tx_bytes);
	acc->delivered += EGW_CNT_READ(q->delivered);
	acc->queued += EGW_CNT_READ(q->queued);
	for (r = 0; r < EGW_DROP_MAX; r++)
		acc->drop[r] += EGW_CNT_READ(q->drop[r]);
}

static void
qstats_sub(struct egw_qstats *a, const struct egw_qstats *z)
{
	unsigned int r;

	a->rx -= z->rx;
	a->rx_bytes -= z->rx_bytes;
	a->created -= z->created;
	a->tx -= z->tx;
	a->tx_bytes -= z->tx_bytes;
	a->delivered -= z->delivered;
	a->queued -= z->queued;
	for (r = 0; r < EGW_DROP_MAX; r++)
		a->drop[r] -= z->drop[r];
}

static uint64_t
drops_total(const struct egw_qstats *s)
{
	uint64_t t = 0;
	unsigned int r;

	for (r = 0; r < EGW_DROP_MAX; r++)
		t += s->drop[r];
	return t;
}

void
egw_qstats_sum(uint16_t port, struct egw_qstats *out)
{
	struct egw_port *p = &egw.ports[port];
	uint16_t q;

	memset(out, 0, sizeof(*out));
	for (q = 0; q < p->nb_rxq; q++)
		qstats_add(out, &p->qstats[q]);
}

uint64_t
egw_total_rx(void)
{
	uint64_t t = 0;
	uint16_t pid, q;

	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_port *p = &egw.ports[pid];

		if (!p->used)
			continue;
		for (q = 0; q < p->nb_rxq; q++)
			t += EGW_CNT_READ(p->qstats[q].rx);
	}
	return t;
}

bool
egw_stats_identity_ok(uint16_t port __rte_unused, const struct egw_qstats *s)
{
	return s->rx + s->created == s->tx + s->delivered + s->queued + drops_total(s);
}

static uint64_t
tx_out_total(uint16_t port)
{
	uint64_t t = 0;
	uint16_t i;

	for (i = 0; i < egw.nb_workers; i++)
		t += EGW_CNT_READ(egw.workers[i]->stats.tx_out[port]);
	return t;
}

static void
eth_stats_sub(struct rte_eth_stats *a, const struct rte_eth_stats *z)
{
	a->ipackets -= z->ipackets;
	a->opackets -= z->opackets;
	a->ibytes -= z->ibytes;
	a->obytes -= z->obytes;
	a->imissed -= z->imissed;
	a->ierrors -= z->ierrors;
	a->oerrors -= z->oerrors;
	a->rx_nombuf -= z->rx_nombuf;
}

void
egw_show_port_stats(FILE *f, uint16_t port)
{
	struct egw_port *p = &egw.ports[port];
	struct rte_eth_stats st, cur;
	uint64_t now = rte_get_tsc_cycles(), dt;
	double secs;

	if (rte_eth_stats_get(port, &st) != 0)
		memset(&st, 0, sizeof(st));
	cur = st;
	dt = p->view.tsc != 0 ? now - p->view.tsc : 0;
	secs = dt != 0 ? (double)dt / (double)rte_get_tsc_hz() : 0.0;
	eth_stats_sub(&st, &p->view.zero);

	fprintf(f,
		"\n  ######################## NIC statistics for port %-2u "
		"#########################\n",
		port);
	fprintf(f,
		"  RX-packets: %-10" PRIu64 " RX-missed: %-10" PRIu64 " RX-bytes:  %" PRIu64 "\n",
		st.ipackets, st.imissed, st.ibytes);
	fprintf(f, "  RX-errors: %" PRIu64 "\n", st.ierrors);
	fprintf(f, "  RX-nombuf:  %-10" PRIu64 "\n", st.rx_nombuf);
	fprintf(f,
		"  TX-packets: %-10" PRIu64 " TX-errors: %-10" PRIu64 " TX-bytes:  %" PRIu64 "\n",
		st.opackets, st.oerrors, st.obytes);
	fprintf(f, "\n  Throughput (since last show)\n");
	if (secs > 0) {
		double rxp = (double)(cur.ipackets - p->view.last.ipackets) / secs;
		double txp = (double)(cur.opackets - p->view.last.opackets) / secs;
		double rxb = (double)(cur.ibytes - p->view.last.ibytes) * 8 / secs;
		double txb = (double)(cur.obytes - p->view.last.obytes) * 8 / secs;

		fprintf(f, "  Rx-pps: %12.0f          Rx-bps: %12.0f\n", rxp, rxb);
		fprintf(f, "  Tx-pps: %12.0f          Tx-bps: %12.0f\n", txp, txb);
	} else {
		fprintf(f, "  Rx-pps: %12d          Rx-bps: %12d\n", 0, 0);
		fprintf(f, "  Tx-pps: %12d          Tx-bps: %12d\n", 0, 0);
	}
	fprintf(f,
		"  ############################################################################\n");
	p->view.last = cur;
	p->view.tsc = now;
}

void
egw_show_port_xstats(FILE *f, uint16_t port)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *vals = NULL;
	int n, i;

	n = rte_eth_xstats_get_names(port, NULL, 0);
	if (n < 0) {
		fprintf(f, "port %u: cannot read xstats: %s\n", port, rte_strerror(-n));
		return;
	}
	names = calloc((size_t)n + 1, sizeof(*names));
	vals = calloc((size_t)n + 1, sizeof(*vals));
	if (names == NULL || vals == NULL)
		goto out;
	if (rte_eth_xstats_get_names(port, names, (unsigned int)n) != n ||
	    rte_eth_xstats_get(port, vals, (unsigned int)n) != n) {
		fprintf(f, "port %u: xstats changed while reading\n", port);
		goto out;
	}
	fprintf(f, "###### NIC extended statistics for port %-2u\n", port);
	for (i = 0; i < n; i++)
		fprintf(f, "%s: %" PRIu64 "\n", names[vals[i].id].name, vals[i].value);
out:
	free(names);
	free(vals);
}

static void
print_fwd(FILE *f, const char *indent, const struct egw_qstats *s)
{
	unsigned int r;

	fprintf(f,
		"%sRX-packets: %-12" PRIu64 " Created: %-8" PRIu64 " TX-packets: %-12" PRIu64
		" Delivered: %-8" PRIu64 " Queued: %-8" PRIu64 " Dropped: %" PRIu64 "\n",
		indent, s->rx, s->created, s->tx, s->delivered, s->queued, drops_total(s));
	for (r = 0; r < EGW_DROP_MAX; r++)
		if (s->drop[r] != 0)
			fprintf(f, "%s  drop %-16s %" PRIu64 "\n", indent, egw_drop_names[r],
				s->drop[r]);
}

void
egw_show_fwd_stats(FILE *f)
{
	struct egw_qstats all;
	uint16_t pid, q, i;
	uint64_t gen = 0, gen_drop = 0, ctrl_tx = 0, ctrl_tx_drop = 0;

	memset(&all, 0, sizeof(all));
	fprintf(f, "\n  Forwarding engine: %s%s\n", egw.engine->name,
		__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED) ? " (running)" : " (stopped)");
	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_port *p = &egw.ports[pid];
		struct egw_qstats s;

		if (!p->used)
			continue;
		egw_qstats_sum(pid, &s);
		qstats_sub(&s, &p->view.fwd_zero);
		fprintf(f,
			"  ---------------------- Forward statistics for port %-2u "
			"----------------------\n",
			pid);
		print_fwd(f, "  ", &s);
		fprintf(f, "  TX-out (frames sent on this port): %" PRIu64 "\n", tx_out_total(pid));
		if (p->nb_rxq > 1) {
			for (q = 0; q < p->nb_rxq; q++) {
				struct egw_qstats one;
				char ind[48];

				memset(&one, 0, sizeof(one));
				qstats_add(&one, &p->qstats[q]);
				snprintf(ind, sizeof(ind), "    queue %u (lcore %u): ", q,
					 p->rxq_lcore[q]);
				print_fwd(f, ind, &one);
			}
		}
		qstats_add(&all, &s);
	}
	for (i = 0; i < egw.nb_workers; i++) {
		gen += EGW_CNT_READ(egw.workers[i]->stats.gen_tx);
		gen_drop += EGW_CNT_READ(egw.workers[i]->stats.gen_drop);
		ctrl_tx += EGW_CNT_READ(egw.workers[i]->stats.ctrl_tx);
		ctrl_tx_drop += EGW_CNT_READ(egw.workers[i]->stats.ctrl_tx_drop);
	}
	fprintf(f,
		"  +++++++++++++++ Accumulated forward statistics for all ports +++++++++++++++\n");
	print_fwd(f, "  ", &all);
	if (gen != 0 || gen_drop != 0)
		fprintf(f, "  Generated (replay): %" PRIu64 " sent, %" PRIu64 " not sent\n", gen,
			gen_drop);
	fprintf(f, "  Control: %" PRIu64 " received, %" PRIu64 " without handler\n",
		EGW_CNT_READ(egw.ctrl.rx), EGW_CNT_READ(egw.ctrl.drop[EGW_DROP_CTRL_NO_HANDLER]));
	/* frames the control path built: not in the ports' TX counts above */
	fprintf(f,
		"  Control TX: %" PRIu64 " handed over, %" PRIu64 " freed unsent (ring full, no "
		"port); sent %" PRIu64 ", refused by the TX queue %" PRIu64
		"; input paused %" PRIu64 " times (TX rings nearly full); woken by workers %" PRIu64
		"\n",
		EGW_CNT_READ(egw.ctrl.tx), EGW_CNT_READ(egw.ctrl.tx_drop), ctrl_tx, ctrl_tx_drop,
		EGW_CNT_READ(egw.ctrl.tx_backpressure), EGW_CNT_READ(egw.ctrl.woken));
	fprintf(f,
		"  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++\n");
}

void
egw_clear_port_stats(uint16_t port)
{
	struct egw_port *p = &egw.ports[port];

	if (rte_eth_stats_get(port, &p->view.zero) != 0)
		memset(&p->view.zero, 0, sizeof(p->view.zero));
	p->view.last = p->view.zero;
	p->view.tsc = rte_get_tsc_cycles();
	egw_qstats_sum(port, &p->view.fwd_zero);
}

void
egw_show_config(FILE *f)
{
	uint16_t pid, i, k;

	fprintf(f, "edgegw configuration\n");
	fprintf(f, "  engine: %s (%s)\n", egw.engine->name,
		__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED) ? "running" : "stopped");
	if (egw.engine->show != NULL)
		egw.engine->show(f);
	fprintf(f, "  burst: %u  mbufs/socket: %u  rxd: %u  txd: %u  rx hold: %s\n", egw.opts.burst,
		egw.opts.mbufs, egw.opts.rxd, egw.opts.txd,
		egw.opts.no_rx_hold ? "off (--no-rx-hold)"
				    : "a poll, in engines with a prefetch step");
	fprintf(f, "  main lcore: %u  control lcore: %u  workers: %u\n", rte_get_main_lcore(),
		egw.control_lcore, egw.nb_workers);
	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_port *p = &egw.ports[pid];
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		if (!p->used)
			continue;
		rte_ether_format_addr(mac, sizeof(mac), &p->eth.mac);
		fprintf(f, "  port %u: %s (%s) mac %s socket %d rxq %u txq %u role %s peer %u\n",
			pid, p->name, p->driver, mac, p->socket, p->nb_rxq, p->nb_txq,
			egw_role_name(p->role), p->peer);
	}
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];

		fprintf(f, "  worker lcore %u (txq %u):", w->lcore, w->idx);
		for (k = 0; k < w->nb_rxq; k++)
			fprintf(f, " port %u/rxq %u", w->rxq[k].port, w->rxq[k].queue);
		fprintf(f, "%s\n", w->nb_rxq == 0 ? " (no RX queue)" : "");
	}
	egw_esp_stage_show_config(f);
	egw_pppoe_stage_show_config(f);
	egw_ip_stage_show_config(f);
	if (egw.radius) {
		rte_spinlock_lock(&egw.ctrl_lock);
		egw_radius_stage_config(f, false);
		rte_spinlock_unlock(&egw.ctrl_lock);
	}
}

void
egw_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
json_fwd(FILE *f, const struct egw_qstats *s)
{
	unsigned int r;

	fprintf(f,
		"\"rx\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 ", \"created\": %" PRIu64
		", \"tx\": %" PRIu64 ", \"tx_bytes\": %" PRIu64 ", \"delivered\": %" PRIu64
		", \"queued\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"drops\": {",
		s->rx, s->rx_bytes, s->created, s->tx, s->tx_bytes, s->delivered, s->queued,
		drops_total(s));
	for (r = 0; r < EGW_DROP_MAX; r++)
		fprintf(f, "%s\"%s\": %" PRIu64, r ? ", " : "", egw_drop_names[r], s->drop[r]);
	fprintf(f, "}");
}

int
egw_stats_json(const char *path)
{
	FILE *f = fopen(path, "w");
	uint16_t pid, q, i, c;
	bool first = true;
	unsigned int r;

	if (f == NULL) {
		fprintf(stderr, "error: --stats-json %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "{\n  \"engine\": \"%s\",\n  \"ports\": [", egw.engine->name);
	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_port *p = &egw.ports[pid];
		struct rte_eth_stats st;
		struct egw_qstats s;

		if (!p->used)
			continue;
		egw_qstats_sum(pid, &s);
		if (rte_eth_stats_get(pid, &st) != 0)
			memset(&st, 0, sizeof(st));
		fprintf(f,
			"%s\n    {\"port\": %u, \"name\": \"%s\", \"driver\": \"%s\", \"role\": "
			"\"%s\", ",
			first ? "" : ",", pid, p->name, p->driver, egw_role_name(p->role));
		first = false;
		json_fwd(f, &s);
		fprintf(f, ", \"tx_out\": %" PRIu64 ", \"identity_ok\": %s,\n", tx_out_total(pid),
			egw_stats_identity_ok(pid, &s) ? "true" : "false");
		fprintf(f,
			"     \"ethdev\": {\"ipackets\": %" PRIu64 ", \"opackets\": %" PRIu64
			", \"ibytes\": %" PRIu64 ", \"obytes\": %" PRIu64 ", \"imissed\": %" PRIu64
			", \"ierrors\": %" PRIu64 ", \"oerrors\": %" PRIu64
			", \"rx_nombuf\": %" PRIu64 "},\n",
			st.ipackets, st.opackets, st.ibytes, st.obytes, st.imissed, st.ierrors,
			st.oerrors, st.rx_nombuf);
		fprintf(f, "     \"queues\": [");
		for (q = 0; q < p->nb_rxq; q++) {
			struct egw_qstats one;

			memset(&one, 0, sizeof(one));
			qstats_add(&one, &p->qstats[q]);
			fprintf(f, "%s\n       {\"queue\": %u, \"lcore\": %u, ", q ? "," : "", q,
				p->rxq_lcore[q]);
			json_fwd(f, &one);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ],\n  \"lcores\": [");
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_lstats *l = &egw.workers[i]->stats;

		fprintf(f,
			"%s\n    {\"lcore\": %u, \"role\": \"worker\", \"loops\": %" PRIu64
			", \"busy_loops\": %" PRIu64 ", \"gen_tx\": %" PRIu64
			", \"gen_tx_bytes\": %" PRIu64 ", \"gen_drop\": %" PRIu64
			", \"gen_nombuf\": %" PRIu64 ", \"ctrl_tx\": %" PRIu64
			", \"ctrl_tx_drop\": %" PRIu64 "}",
			i ? "," : "", egw.workers[i]->lcore, EGW_CNT_READ(l->loops),
			EGW_CNT_READ(l->busy_loops), EGW_CNT_READ(l->gen_tx),
			EGW_CNT_READ(l->gen_tx_bytes), EGW_CNT_READ(l->gen_drop),
			EGW_CNT_READ(l->gen_nombuf), EGW_CNT_READ(l->ctrl_tx),
			EGW_CNT_READ(l->ctrl_tx_drop));
	}
	fprintf(f, "\n  ],\n  \"control\": {\"lcore\": %u, \"rx\": %" PRIu64 ", \"by_class\": {",
		egw.control_lcore, EGW_CNT_READ(egw.ctrl.rx));
	for (c = 0; c < EGW_ETH_CLS_MAX; c++)
		fprintf(f, "%s\"%s\": %" PRIu64, c ? ", " : "", egw_eth_class_name(c),
			EGW_CNT_READ(egw.ctrl.by_class[c]));
	fprintf(f, "}, \"drops\": {");
	for (r = 0; r < EGW_DROP_MAX; r++)
		fprintf(f, "%s\"%s\": %" PRIu64, r ? ", " : "", egw_drop_names[r],
			EGW_CNT_READ(egw.ctrl.drop[r]));
	fprintf(f,
		"}, \"tx\": %" PRIu64 ", \"tx_drop\": %" PRIu64 ", \"tx_backpressure\": %" PRIu64
		", \"woken\": %" PRIu64 "},\n  \"rxtokens\": ",
		EGW_CNT_READ(egw.ctrl.tx), EGW_CNT_READ(egw.ctrl.tx_drop),
		EGW_CNT_READ(egw.ctrl.tx_backpressure), EGW_CNT_READ(egw.ctrl.woken));
	egw_rxtok_json(f);
	fprintf(f, ",\n  \"esp\": ");
	egw_esp_stage_json(f);
	fprintf(f, ",\n  \"pppoe\": ");
	egw_pppoe_stage_json(f);
	fprintf(f, ",\n  \"ip\": ");
	egw_ip_stage_json(f);
	fprintf(f, ",\n  \"radius\": ");
	egw_radius_stage_json(f);
	fprintf(f, ",\n  \"xdp\": ");
	egw_xdp_json(f);
	fprintf(f, "\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "error: --stats-json %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

void
egw_stats_print_final(FILE *f)
{
	uint16_t pid;

	/* final totals, not relative to "clear port stats" */
	fprintf(f, "\nedgegw: final statistics\n");
	RTE_ETH_FOREACH_DEV (pid) {
		struct egw_qstats s;

		if (!egw.ports[pid].used)
			continue;
		egw_qstats_sum(pid, &s);
		fprintf(f, "  port %u (%s): ", pid, egw.ports[pid].name);
		print_fwd(f, "", &s);
		if (!egw_stats_identity_ok(pid, &s))
			fprintf(f,
				"  port %u: ACCOUNTING MISMATCH: rx + created != tx + delivered + "
				"queued + dropped\n",
				pid);
	}
}
