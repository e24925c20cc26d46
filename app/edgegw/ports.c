/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port bring-up: every ethdev EAL gives, one mempool per socket, RSS when the
 * port has more than one RX queue and supports it, one TX queue per worker.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "egw.h"
#include "egw_rxtok.h"

const char *
egw_role_name(enum egw_port_role r)
{
	switch (r) {
	case EGW_ROLE_ACCESS: return "access";
	case EGW_ROLE_UPLINK: return "uplink";
	case EGW_ROLE_LAN: return "lan";
	default: return "none";
	}
}

int
egw_port_parse(const char *s, uint16_t *port, char *err, size_t errlen)
{
	uint64_t v;

	if (egw_parse_u64(s, 0, RTE_MAX_ETHPORTS - 1, &v) < 0) {
		snprintf(err, errlen, "'%s' is not a port number", s);
		return -EINVAL;
	}
	if (!egw.ports[v].used) {
		snprintf(err, errlen, "port %" PRIu64 " does not exist (%u ports: 0..%u)", v,
			 egw.nb_ports, egw.nb_ports ? egw.nb_ports - 1 : 0);
		return -ENODEV;
	}
	*port = (uint16_t)v;
	return 0;
}

static struct rte_mempool *
pool_for_socket(int socket)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned int s = socket < 0 ? 0 : (unsigned int)socket;

	if (egw.pool[s] != NULL)
		return egw.pool[s];
	snprintf(name, sizeof(name), "egw_mbuf_s%u", s);
	egw.pool[s] = rte_pktmbuf_pool_create(name, egw.opts.mbufs, 256, 0,
					      RTE_MBUF_DEFAULT_BUF_SIZE, (int)s);
	if (egw.pool[s] == NULL)
		fprintf(stderr, "error: cannot create mempool of %u mbufs on socket %u: %s\n",
			egw.opts.mbufs, s, rte_strerror(rte_errno));
	return egw.pool[s];
}

/* Warn when the descriptors alone can hold more mbufs than the pool has:
 * RX would then starve (rx_nombuf) under load. */
static void
pool_check(void)
{
	uint64_t need = (uint64_t)egw.nb_workers * (egw.opts.burst + 256);
	uint16_t pid;

	RTE_ETH_FOREACH_DEV (pid) {
		const struct egw_port *p = &egw.ports[pid];

		/* each RX queue: its ring, and the burst its worker may hold
		 * for the next poll (egw_fwd_engine.prefetch) */
		need += (uint64_t)p->nb_rxq * (egw.opts.rxd + egw.opts.burst) +
			(uint64_t)p->nb_txq * egw.opts.txd;
	}
	if (need > egw.opts.mbufs)
		fprintf(stderr,
			"warning: --mbufs %u is less than the %" PRIu64
			" that the RX/TX rings and lcore caches can hold: RX may run out of mbufs "
			"(rx_nombuf)\n",
			egw.opts.mbufs, need);
}

static int
port_init(uint16_t pid)
{
	struct egw_port *p = &egw.ports[pid];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_mempool *mp;
	uint16_t nb_rxd = egw.opts.rxd, nb_txd = egw.opts.txd;
	uint16_t q;
	int rc;

	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0) {
		fprintf(stderr, "error: port %u: cannot get device info: %s\n", pid,
			rte_strerror(-rc));
		return rc;
	}
	p->id = pid;
	p->socket = rte_eth_dev_socket_id(pid);
	rte_eth_dev_get_name_by_port(pid, p->name);
	snprintf(p->driver, sizeof(p->driver), "%s", info.driver_name);

	if (egw.opts.rxq != 0) {
		if (egw.opts.rxq > info.max_rx_queues) {
			fprintf(stderr,
				"error: port %u (%s): --rxq %u but the port has at most %u RX "
				"queues\n",
				pid, p->name, egw.opts.rxq, info.max_rx_queues);
			return -EINVAL;
		}
		p->nb_rxq = egw.opts.rxq;
	} else {
		p->nb_rxq =
			RTE_MIN(RTE_MIN(egw.nb_workers, info.max_rx_queues), (uint16_t)EGW_MAX_RXQ);
	}
	p->nb_txq = egw.opts.txq != 0 ? egw.opts.txq : egw.nb_workers;
	if (p->nb_txq < egw.nb_workers) {
		fprintf(stderr,
			"error: port %u (%s): --txq %u is less than the %u workers: each worker "
			"needs a TX queue of its own\n",
			pid, p->name, p->nb_txq, egw.nb_workers);
		return -EINVAL;
	}
	if (p->nb_txq > info.max_tx_queues) {
		fprintf(stderr,
			"error: port %u (%s): %u TX queues needed (one per worker) but the port "
			"has at most %u; use fewer worker lcores\n",
			pid, p->name, p->nb_txq, info.max_tx_queues);
		return -EINVAL;
	}

	/* net_af_xdp loads xdp_prog= at RX queue set-up and says little when
	 * the kernel refuses it: verify it first, with the verifier's log */
	rc = egw_xdp_port_preflight(pid, p->driver);
	if (rc != 0)
		return rc;

	memset(&conf, 0, sizeof(conf));
	if (p->nb_rxq > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	} else if (p->nb_rxq > 1) {
		fprintf(stderr,
			"warning: port %u (%s) has no RSS: its %u RX queues get what the driver "
			"gives them\n",
			pid, p->name, p->nb_rxq);
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	/* a driver that verifies IPv4 header checksums saves lib/ip and
	 * lib/esp the sum: they take its GOOD or BAD (RFC 1812 5.2.2 wants it
	 * verified, not by whom); without the offload they sum the header */
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;

	rc = rte_eth_dev_configure(pid, p->nb_rxq, p->nb_txq, &conf);
	if (rc != 0) {
		fprintf(stderr, "error: port %u (%s): configure %u rxq/%u txq: %s\n", pid, p->name,
			p->nb_rxq, p->nb_txq, rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd);
	if (rc != 0)
		return rc;
	mp = pool_for_socket(p->socket);
	if (mp == NULL)
		return -ENOMEM;
	for (q = 0; q < p->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, nb_rxd, p->socket, NULL, mp);
		if (rc != 0) {
			fprintf(stderr, "error: port %u: RX queue %u setup: %s\n", pid, q,
				rte_strerror(-rc));
			return rc;
		}
	}
	for (q = 0; q < p->nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(pid, q, nb_txd, p->socket, NULL);
		if (rc != 0) {
			fprintf(stderr, "error: port %u: TX queue %u setup: %s\n", pid, q,
				rte_strerror(-rc));
			return rc;
		}
	}
	p->qstats = rte_zmalloc_socket("egw_qstats", sizeof(*p->qstats) * p->nb_rxq,
				       RTE_CACHE_LINE_SIZE, p->socket);
	if (p->qstats == NULL)
		return -ENOMEM;
	rc = rte_eth_dev_start(pid);
	if (rc != 0) {
		fprintf(stderr, "error: port %u (%s): start: %s\n", pid, p->name,
			rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_promiscuous_enable(pid);
	if (rc != 0 && rc != -ENOTSUP)
		fprintf(stderr, "warning: port %u: promiscuous mode: %s\n", pid, rte_strerror(-rc));
	rte_eth_macaddr_get(pid, &p->eth.mac);
	rc = egw_xdp_port_started(pid);
	if (rc != 0)
		return rc;
	p->used = true;
	return 0;
}

int
egw_ports_init(void)
{
	uint16_t pid;
	int rc;

	egw.nb_ports = 0;
	RTE_ETH_FOREACH_DEV (pid) {
		rc = port_init(pid);
		if (rc != 0)
			return rc;
		egw.nb_ports++;
	}
	if (egw.nb_ports == 0) {
		fprintf(stderr,
			"error: no ports: give a NIC (-a PCI) or a vdev (--vdev net_pcap0,...)\n");
		return -ENODEV;
	}
	pool_check();
	/* io/mac pairs as testpmd: 0<->1, 2<->3; an odd last port loops to itself */
	RTE_ETH_FOREACH_DEV (pid) {
		uint16_t peer = (pid % 2 == 0) ? pid + 1 : pid - 1;

		egw.ports[pid].peer =
			(peer < RTE_MAX_ETHPORTS && egw.ports[peer].used) ? peer : pid;
	}
	return 0;
}

void
egw_ports_close(void)
{
	uint16_t pid;

	RTE_ETH_FOREACH_DEV (pid) {
		if (!egw.ports[pid].used)
			continue;
		/* qstats stay allocated (EAL frees them at rte_eal_cleanup()):
		 * a telemetry request may still be reading them */
		__atomic_store_n(&egw.ports[pid].used, false, __ATOMIC_RELAXED);
		/* rxtokens' flow rules and redirection table go with the port */
		egw_rxtok_steer_flush(pid);
		egw_xdp_port_stopped(pid);
		rte_eth_dev_stop(pid);
		rte_eth_dev_close(pid);
	}
}

int
egw_port_rxq_set_pool(uint16_t port, const uint16_t *queues, uint16_t n, struct rte_mempool *mp,
		      char *err, size_t errlen)
{
	struct egw_port *p = &egw.ports[port];
	uint16_t nb_rxd = egw.opts.rxd, nb_txd = egw.opts.txd, i;
	int rc, rc2;

	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: descriptors: %s", port, rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_stop(port);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: stop: %s", port, rte_strerror(-rc));
		return rc;
	}
	for (i = 0; i < n; i++) {
		rc = rte_eth_rx_queue_setup(port, queues[i], nb_rxd, p->socket, NULL, mp);
		if (rc != 0) {
			snprintf(err, errlen, "port %u: RX queue %u setup with pool %s: %s", port,
				 queues[i], mp->name, rte_strerror(-rc));
			/* put the queues already changed back on the port's pool */
			while (i-- > 0)
				rte_eth_rx_queue_setup(port, queues[i], nb_rxd, p->socket, NULL,
						       pool_for_socket(p->socket));
			break;
		}
	}
	rc2 = rte_eth_dev_start(port);
	if (rc2 != 0 && rc == 0) {
		snprintf(err, errlen, "port %u: start: %s", port, rte_strerror(-rc2));
		rc = rc2;
	}
	return rc;
}
