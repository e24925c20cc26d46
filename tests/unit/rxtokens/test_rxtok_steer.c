/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Steering of bound queues against a real ethdev: net_null with two RX
 * queues and RSS has an RSS redirection table (which it ignores) and no
 * rte_flow. egw_rxtok_steer_port() must refuse it, say why, and leave the
 * port as it found it (no rule, the table it had); a shared binding is not
 * steered; a port with every queue bound is refused. Needs free 2 MiB
 * hugepages (the region), else 77.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "rxtok_test.h"

static int checks, failures;
#define CHECK(cond, ...)                   \
	do {                               \
		checks++;                  \
		if (cond) {                \
			printf("  ok   "); \
		} else {                   \
			failures++;        \
			printf("  FAIL "); \
		}                          \
		printf(__VA_ARGS__);       \
		printf("\n");              \
	} while (0)

#define NB_RXQ 2

/* reta has 8 entries: tables of up to 512 */
static int
reta_get(uint16_t port, uint16_t size, struct rte_eth_rss_reta_entry64 *reta)
{
	unsigned int i,
		n = ((unsigned int)size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE;

	memset(reta, 0, sizeof(*reta) * 8);
	for (i = 0; i < n && i < 8; i++)
		reta[i].mask = UINT64_MAX;
	return rte_eth_dev_rss_reta_query(port, reta, size);
}

int
main(int argc, char **argv)
{
	struct rte_eth_rss_reta_entry64 before[8], after[8];
	struct rte_eth_conf conf = {.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS};
	struct egw_rxtok_region *r;
	struct rte_eth_dev_info info;
	struct rte_rcu_qsbr *qsbr;
	struct rte_mempool *mp;
	long hp = t_free_hugepages();
	uint16_t port, q;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hp >= 0 && hp < 64 + 4) {
		printf("SKIP: %ld free 2 MiB hugepages, need %d\n", hp, 64 + 4);
		return T_SKIP;
	}
	rc = t_setup(argc, argv, &qsbr);
	if (rc != 0)
		return rc;
	if (rte_eth_dev_get_port_by_name("net_null_ststeer", &port) != 0) {
		printf("FAIL: no net_null_ststeer port (--vdev net_null_ststeer)\n");
		return 1;
	}
	rte_eth_dev_info_get(port, &info);
	conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & info.flow_type_rss_offloads;
	mp = rte_pktmbuf_pool_create("st_pool", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	CHECK(mp != NULL && rte_eth_dev_configure(port, NB_RXQ, 1, &conf) == 0,
	      "net_null: %u RX queues with RSS", NB_RXQ);
	for (q = 0; q < NB_RXQ; q++)
		rte_eth_rx_queue_setup(port, q, 128, 0, NULL, mp);
	rte_eth_tx_queue_setup(port, 0, 128, 0, NULL);
	CHECK(rte_eth_dev_start(port) == 0, "net_null started");
	rte_eth_dev_info_get(port, &info);
	CHECK(info.reta_size > 0 && info.reta_size <= 512, "net_null has a redirection table (%u)",
	      info.reta_size);
	CHECK(reta_get(port, info.reta_size, before) == 0, "table read");

	r = egw_rxtok_region_create("st_r", 8u << 20, RTE_PGSIZE_2M);
	CHECK(r != NULL, "region of 8 MiB");
	if (r == NULL)
		return 1;

	printf("steering: a port without rte_flow is refused, and left as it was\n");
	CHECK(egw_rxtok_steer_port(port) == 0 && !egw_rxtok_port_steered(port),
	      "nothing bound: nothing to steer");
	CHECK(egw_rxtok_bind(r, port, 1) == 0, "bind queue 1");
	rc = egw_rxtok_steer_port(port);
	printf("  steer_port: %d: %s\n", rc, egw_rxtok_steer_error());
	CHECK(rc == -ENOTSUP, "steer_port refuses it: -ENOTSUP (got %d)", rc);
	CHECK(strstr(egw_rxtok_steer_error(), "rte_flow_validate") != NULL &&
		      strstr(egw_rxtok_steer_error(), "no rte_flow support") != NULL,
	      "the error names rte_flow_validate and the missing support");
	CHECK(!egw_rxtok_port_steered(port), "the port is not steered");
	CHECK(reta_get(port, info.reta_size, after) == 0 &&
		      memcmp(before, after, sizeof(before)) == 0,
	      "its redirection table is the one it had (the steering's change undone)");
	CHECK(egw_rxtok_unbind(r, port, 1) == 0, "unbind queue 1");

	printf("steering: every queue bound leaves nothing for other frames\n");
	CHECK(egw_rxtok_bind(r, port, 0) == 0 && egw_rxtok_bind(r, port, 1) == 0,
	      "bind queues 0 and 1");
	rc = egw_rxtok_steer_port(port);
	CHECK(rc == -ENOSPC && strstr(egw_rxtok_steer_error(), "would all be bound") != NULL,
	      "steer_port: -ENOSPC, said (%d: %s)", rc, egw_rxtok_steer_error());
	egw_rxtok_unbind(r, port, 0);
	egw_rxtok_unbind(r, port, 1);

	printf("steering: a shared binding is the operator's word, not steered\n");
	CHECK(egw_rxtok_bind_flags(r, port, 1, EGW_RXTOK_BIND_SHARED) == 0 &&
		      egw_rxtok_binding_shared(port, 1) == 1,
	      "bind queue 1 shared");
	CHECK(egw_rxtok_steer_port(port) == 0 && !egw_rxtok_port_steered(port),
	      "steer_port: 0, no rule");
	CHECK(egw_rxtok_bind_flags(r, port, 0, 0) == -EXDEV, "a steered binding beside it: -EXDEV");
	CHECK(egw_rxtok_unbind(r, port, 1) == 0 && egw_rxtok_region_destroy(r) == 0,
	      "unbind, region destroyed");

	egw_rxtok_steer_flush_all();
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_cleanup();
	printf("rxtokens steering: %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
