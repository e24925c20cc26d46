/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: steering of bound RX queues. Every frame a NIC puts into a
 * bound queue lands in region pages that the region's owner can read, so a
 * port with bound queues carries, on those queues, only the flows of the
 * consumers of their regions:
 *
 * - one rte_flow rule (two for udp-dport and pppoe-session) per consumer,
 *   ingress, action QUEUE (or RSS over the region's bound queues of the
 *   port) to its region's bound queue, priority 0 (UDP port) or 1
 *   (destination, PPPoE session: deliver.c judges the UDP port first);
 * - a catch-all rule at priority 2, pattern eth, action RSS over the unbound
 *   queues (or QUEUE to the first of them) for every other frame;
 * - and the RSS redirection table (rte_eth_dev_rss_reta_update()) pointing
 *   at unbound queues only, where the port has one: frames that no rule
 *   takes still never hash to a bound queue.
 *
 * Each rule is validated (rte_flow_validate()) before it is created. A port
 * that can do neither the catch-all nor the table, or has no queue left
 * unbound, is not steered: the caller refuses the binding unless the
 * operator said the port carries only the owner's traffic (shared).
 * Everything here runs on the control thread with forwarding stopped
 * (binding) or running (consumer rules added and removed one by one).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>

#include "rxtok_private.h"

#define STEER_RETA_MAX RTE_ETH_RSS_RETA_SIZE_512
#define STEER_RETA_GROUPS (STEER_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE)

/* One rte_flow rule of ours: a consumer's (cidx = its idx + 1) or the
 * port's catch-all (cidx 0). */
struct steer_rule {
	struct rte_flow *flow;
	uint32_t cidx;
};

struct steer_port {
	bool steered;    /**< our rules (and maybe RETA) are in place */
	bool catch_all;  /**< the catch-all rule is in place */
	bool catch_rss;  /**< ... with an RSS action (else QUEUE) */
	bool reta_saved; /**< reta_orig holds the table we replaced */
	uint16_t reta_size;
	uint32_t n, cap;
	struct steer_rule *rules;
	struct rte_eth_rss_reta_entry64 reta_orig[STEER_RETA_GROUPS];
};

static struct steer_port steer_ports[RTE_MAX_ETHPORTS];
/* (port, queue) bound with EGW_RXTOK_BIND_SHARED */
static uint8_t shared_tbl[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT];
static char steer_errbuf[512];

static void __rte_format_printf(1, 2) steer_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(steer_errbuf, sizeof(steer_errbuf), fmt, ap);
	va_end(ap);
	RXTOK_LOG(ERR, "%s\n", steer_errbuf);
}

const char *
egw_rxtok_steer_error(void)
{
	return steer_errbuf;
}

static const char *
flow_msg(const struct rte_flow_error *e, int rc)
{
	if (e->message != NULL && e->message[0] != '\0')
		return e->message;
	return rte_strerror(-rc);
}

void
rxtok_steer_set_shared(uint16_t port, uint16_t queue, bool shared)
{
	shared_tbl[port][queue] = shared ? 1 : 0;
}

int
egw_rxtok_binding_shared(uint16_t port, uint16_t queue)
{
	if (port >= RTE_MAX_ETHPORTS || queue >= RTE_MAX_QUEUES_PER_PORT)
		return 0;
	return rxtok.bind_tbl[port][queue] != 0 && shared_tbl[port][queue] != 0;
}

int
egw_rxtok_port_steered(uint16_t port)
{
	return port < RTE_MAX_ETHPORTS && steer_ports[port].steered;
}

static uint16_t
port_rxqs(uint16_t port)
{
	struct rte_eth_dev_info info;

	if (!rte_eth_dev_is_valid_port(port) || rte_eth_dev_info_get(port, &info) != 0)
		return 0;
	return RTE_MIN(info.nb_rx_queues, (uint16_t)RTE_MAX_QUEUES_PER_PORT);
}

/* Queues of port bound to region id + 1 == rid (rid 0: unbound queues;
 * RXTOK_ANY_BOUND: every bound queue). */
#define RXTOK_ANY_BOUND 0xffffu
static uint16_t
queues_of(uint16_t port, uint16_t nb, unsigned int rid, uint16_t *q)
{
	uint16_t i, n = 0;

	for (i = 0; i < nb; i++) {
		uint8_t b = rxtok.bind_tbl[port][i];

		if ((rid == RXTOK_ANY_BOUND && b != 0) || (rid != RXTOK_ANY_BOUND && b == rid))
			q[n++] = i;
	}
	return n;
}

static int
rule_push(struct steer_port *sp, struct rte_flow *flow, uint32_t cidx)
{
	if (sp->n == sp->cap) {
		uint32_t cap = sp->cap != 0 ? sp->cap * 2 : 16;
		struct steer_rule *nr = realloc(sp->rules, cap * sizeof(*nr));

		if (nr == NULL)
			return -ENOMEM;
		sp->rules = nr;
		sp->cap = cap;
	}
	sp->rules[sp->n].flow = flow;
	sp->rules[sp->n].cidx = cidx;
	sp->n++;
	return 0;
}

/*
 * Validate each action list in turn and create the rule with the first
 * one the PMD accepts. @return the flow, or NULL with the last error in
 * the steering error buffer (prefixed by what).
 */
static struct rte_flow *
flow_make(uint16_t port, uint32_t prio, const struct rte_flow_item *pattern,
	  const struct rte_flow_action *const *alts, unsigned int n_alts, unsigned int *used,
	  const char *what)
{
	struct rte_flow_attr attr = {.priority = prio, .ingress = 1};
	struct rte_flow_error fe;
	struct rte_flow *flow;
	unsigned int i;
	int rc = -ENOTSUP;

	for (i = 0; i < n_alts; i++) {
		memset(&fe, 0, sizeof(fe));
		rc = rte_flow_validate(port, &attr, pattern, alts[i], &fe);
		if (rc != 0)
			continue;
		memset(&fe, 0, sizeof(fe));
		flow = rte_flow_create(port, &attr, pattern, alts[i], &fe);
		if (flow != NULL) {
			if (used != NULL)
				*used = i;
			return flow;
		}
		rc = -rte_errno;
		steer_err("port %u: %s: rte_flow_create: %s", port, what, flow_msg(&fe, rc));
		return NULL;
	}
	steer_err("port %u: %s: rte_flow_validate: %s%s", port, what, flow_msg(&fe, rc),
		  rc == -ENOSYS || rc == -ENOTSUP ? " (the port has no rte_flow support)" : "");
	return NULL;
}

void
rxtok_steer_pattern(const struct egw_rxtok_consumer *c, unsigned int k, struct rxtok_steer_pat *p)
{
	unsigned int n = 0;

	memset(p, 0, sizeof(*p));
	p->items[n++].type = RTE_FLOW_ITEM_TYPE_ETH;
	switch (c->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT:
		p->prio = 0;
		if (k == 0) {
			/* deliver.c reads UDP in a first fragment only: a later
			 * fragment is no consumer's, a first one goes by dst */
			p->ip4.hdr.fragment_offset = 0;
			p->ip4m.hdr.fragment_offset = RTE_BE16(0x3fff);
			p->items[n].type = RTE_FLOW_ITEM_TYPE_IPV4;
			p->items[n].spec = &p->ip4;
			p->items[n++].mask = &p->ip4m;
		} else {
			p->items[n++].type = RTE_FLOW_ITEM_TYPE_IPV6;
		}
		p->udp.hdr.dst_port = rte_cpu_to_be_16(c->udp_dport);
		p->udpm.hdr.dst_port = RTE_BE16(0xffff);
		p->items[n].type = RTE_FLOW_ITEM_TYPE_UDP;
		p->items[n].spec = &p->udp;
		p->items[n++].mask = &p->udpm;
		break;
	case EGW_RXTOK_MATCH_DST4:
		p->prio = 1;
		memcpy(&p->ip4.hdr.dst_addr, c->dst, 4);
		p->ip4m.hdr.dst_addr = RTE_BE32(0xffffffff);
		p->items[n].type = RTE_FLOW_ITEM_TYPE_IPV4;
		p->items[n].spec = &p->ip4;
		p->items[n++].mask = &p->ip4m;
		break;
	case EGW_RXTOK_MATCH_DST6:
		p->prio = 1;
		memcpy(p->ip6.hdr.dst_addr, c->dst, 16);
		memset(p->ip6m.hdr.dst_addr, 0xff, 16);
		p->items[n].type = RTE_FLOW_ITEM_TYPE_IPV6;
		p->items[n].spec = &p->ip6;
		p->items[n++].mask = &p->ip6m;
		break;
	case EGW_RXTOK_MATCH_PPPOE:
		/* the session's IP frames only: LCP, authentication and NCP
		 * frames of the session (a PAP password) never land in pages
		 * the owner maps */
		p->prio = 1;
		p->pppoe.session_id = rte_cpu_to_be_16(c->pppoe_session);
		p->pppoem.session_id = RTE_BE16(0xffff);
		p->items[n].type = RTE_FLOW_ITEM_TYPE_PPPOES;
		p->items[n].spec = &p->pppoe;
		p->items[n++].mask = &p->pppoem;
		p->proto.proto_id = RTE_BE16(k == 0 ? 0x0021 : 0x0057);
		p->protom.proto_id = RTE_BE16(0xffff);
		p->items[n].type = RTE_FLOW_ITEM_TYPE_PPPOE_PROTO_ID;
		p->items[n].spec = &p->proto;
		p->items[n++].mask = &p->protom;
		break;
	default: break;
	}
	p->items[n].type = RTE_FLOW_ITEM_TYPE_END;
}

unsigned int
rxtok_steer_n_patterns(const struct egw_rxtok_consumer *c)
{
	return c->match == EGW_RXTOK_MATCH_UDP_DPORT || c->match == EGW_RXTOK_MATCH_PPPOE ? 2 : 1;
}

static uint64_t
port_rss_hf(uint16_t port)
{
	struct rte_eth_rss_conf rc = {0};

	if (rte_eth_dev_rss_hash_conf_get(port, &rc) != 0)
		return 0;
	return rc.rss_hf;
}

/* The rules of consumer c on a steered port. */
static int
consumer_rules_add(uint16_t port, const struct egw_rxtok_consumer *c)
{
	struct steer_port *sp = &steer_ports[port];
	uint16_t q[RTE_MAX_QUEUES_PER_PORT], nq, nb = port_rxqs(port);
	struct rte_flow_action_rss rss = {0};
	struct rte_flow_action_queue qa;
	struct rte_flow_action a_rss[2], a_q[2];
	const struct rte_flow_action *alts[2];
	unsigned int k, n_alts = 0;
	char what[192], m[80];

	nq = queues_of(port, nb, c->region->id + 1, q);
	if (nq == 0)
		return 0; /* the region has no queue here */
	qa.index = q[0];
	a_q[0] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &qa};
	a_q[1] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_END};
	if (nq > 1) {
		rss.types = port_rss_hf(port);
		rss.queue_num = nq;
		rss.queue = q;
		a_rss[0] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss};
		a_rss[1] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_END};
		alts[n_alts++] = a_rss;
	}
	alts[n_alts++] = a_q;
	for (k = 0; k < rxtok_steer_n_patterns(c); k++) {
		struct rxtok_steer_pat p;
		struct rte_flow *f;

		rxtok_steer_pattern(c, k, &p);
		snprintf(what, sizeof(what), "consumer %s (%s%s) to queue %u", c->name,
			 rxtok_match_str(c, m, sizeof(m)),
			 c->match == EGW_RXTOK_MATCH_UDP_DPORT ? (k == 0 ? ", IPv4" : ", IPv6")
			 : c->match == EGW_RXTOK_MATCH_PPPOE
				 ? (k == 0 ? ", PPP IPv4" : ", PPP IPv6")
				 : "",
			 q[0]);
		f = flow_make(port, p.prio, p.items, alts, n_alts, NULL, what);
		if (f == NULL || rule_push(sp, f, c->idx + 1) < 0) {
			if (f != NULL) {
				struct rte_flow_error fe;

				rte_flow_destroy(port, f, &fe);
				steer_err("port %u: consumer %s: out of memory", port, c->name);
			}
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* Destroy the rules of consumer cidx (0: every rule) on a port. */
static void
rules_del(uint16_t port, uint32_t cidx, bool all)
{
	struct steer_port *sp = &steer_ports[port];
	uint32_t i = 0;

	while (i < sp->n) {
		struct rte_flow_error fe;
		int rc;

		if (!all && sp->rules[i].cidx != cidx) {
			i++;
			continue;
		}
		memset(&fe, 0, sizeof(fe));
		rc = rte_flow_destroy(port, sp->rules[i].flow, &fe);
		if (rc != 0)
			RXTOK_LOG(WARNING, "port %u: rte_flow_destroy: %s\n", port,
				  flow_msg(&fe, rc));
		sp->rules[i] = sp->rules[--sp->n];
	}
}

static void
reta_restore(uint16_t port)
{
	struct steer_port *sp = &steer_ports[port];
	int rc;

	if (!sp->reta_saved)
		return;
	rc = rte_eth_dev_rss_reta_update(port, sp->reta_orig, sp->reta_size);
	if (rc != 0)
		RXTOK_LOG(WARNING, "port %u: restoring the RSS redirection table: %s\n", port,
			  rte_strerror(-rc));
	sp->reta_saved = false;
}

/* Point every entry of the redirection table at an unbound queue. */
static int
reta_steer(uint16_t port, const uint16_t *u, uint16_t nu, char *why, size_t len)
{
	struct steer_port *sp = &steer_ports[port];
	struct rte_eth_rss_reta_entry64 reta[STEER_RETA_GROUPS];
	struct rte_eth_dev_info info;
	unsigned int i;
	int rc;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.reta_size == 0) {
		snprintf(why, len, "the port has no RSS redirection table");
		return -ENOTSUP;
	}
	if (info.reta_size > STEER_RETA_MAX) {
		snprintf(why, len, "redirection table of %u entries (edgegw handles %u)",
			 info.reta_size, STEER_RETA_MAX);
		return -ENOTSUP;
	}
	if (!sp->reta_saved) {
		memset(sp->reta_orig, 0, sizeof(sp->reta_orig));
		for (i = 0; i < info.reta_size / RTE_ETH_RETA_GROUP_SIZE; i++)
			sp->reta_orig[i].mask = UINT64_MAX;
		rc = rte_eth_dev_rss_reta_query(port, sp->reta_orig, info.reta_size);
		if (rc != 0) {
			snprintf(why, len, "rte_eth_dev_rss_reta_query: %s", rte_strerror(-rc));
			return rc;
		}
	}
	memset(reta, 0, sizeof(reta));
	for (i = 0; i < info.reta_size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] = u[i % nu];
	}
	rc = rte_eth_dev_rss_reta_update(port, reta, info.reta_size);
	if (rc != 0) {
		snprintf(why, len, "rte_eth_dev_rss_reta_update: %s", rte_strerror(-rc));
		return rc;
	}
	sp->reta_saved = true;
	sp->reta_size = info.reta_size;
	return 0;
}

static char probe_why[256];

/* Does the port take a consumer-like rule (eth/ipv4/udp dport, QUEUE q)? */
static bool
flow_probe(uint16_t port, uint16_t q)
{
	struct rte_flow_attr attr = {.priority = 0, .ingress = 1};
	struct rte_flow_item_udp udp = {.hdr.dst_port = RTE_BE16(9)};
	struct rte_flow_item_udp udpm = {.hdr.dst_port = RTE_BE16(0xffff)};
	struct rte_flow_item items[4] = {
		{.type = RTE_FLOW_ITEM_TYPE_ETH},
		{.type = RTE_FLOW_ITEM_TYPE_IPV4},
		{.type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp, .mask = &udpm},
		{.type = RTE_FLOW_ITEM_TYPE_END},
	};
	struct rte_flow_action_queue qa = {.index = q};
	struct rte_flow_action acts[2] = {
		{.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &qa},
		{.type = RTE_FLOW_ACTION_TYPE_END},
	};
	struct rte_flow_error fe;
	int rc;

	memset(&fe, 0, sizeof(fe));
	rc = rte_flow_validate(port, &attr, items, acts, &fe);
	if (rc == 0)
		return true;
	snprintf(probe_why, sizeof(probe_why), "rte_flow_validate: %s", flow_msg(&fe, rc));
	return false;
}

void
egw_rxtok_steer_flush(uint16_t port)
{
	struct steer_port *sp;

	if (port >= RTE_MAX_ETHPORTS)
		return;
	sp = &steer_ports[port];
	rules_del(port, 0, true);
	reta_restore(port);
	sp->steered = false;
	sp->catch_all = false;
	sp->catch_rss = false;
}

void
egw_rxtok_steer_flush_all(void)
{
	uint16_t p;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (steer_ports[p].steered)
			egw_rxtok_steer_flush(p);
}

int
egw_rxtok_steer_port(uint16_t port)
{
	struct steer_port *sp;
	uint16_t nb, b[RTE_MAX_QUEUES_PER_PORT], u[RTE_MAX_QUEUES_PER_PORT], nbq, nu, i;
	struct rte_flow_action_rss rss = {0};
	struct rte_flow_action_queue qa;
	struct rte_flow_action a_rss[2], a_q[2];
	const struct rte_flow_action *alts[2];
	struct rte_flow_item all[2];
	struct rte_flow *f;
	unsigned int n_alts = 0, used = 0;
	char reta_why[160] = "";
	bool shared = false;
	int rc;

	steer_errbuf[0] = '\0';
	if (port >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(port)) {
		steer_err("port %u does not exist", port);
		return -ENODEV;
	}
	sp = &steer_ports[port];
	egw_rxtok_steer_flush(port);
	nb = port_rxqs(port);
	nbq = queues_of(port, nb, RXTOK_ANY_BOUND, b);
	for (i = 0; i < nbq; i++)
		shared |= shared_tbl[port][b[i]] != 0;
	if (nbq == 0 || shared)
		return 0; /* nothing bound, or the operator's word that it is all one owner's */
	nu = queues_of(port, nb, 0, u);
	if (nu == 0) {
		steer_err("port %u: its %u RX queue%s would all be bound: none is left for the "
			  "frames of no consumer",
			  port, nb, nb == 1 ? "" : "s");
		return -ENOSPC;
	}

	/* every other frame: to the unbound queues */
	memset(all, 0, sizeof(all));
	all[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	all[1].type = RTE_FLOW_ITEM_TYPE_END;
	qa.index = u[0];
	a_q[0] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &qa};
	a_q[1] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_END};
	if (nu > 1) {
		rss.types = port_rss_hf(port);
		rss.queue_num = nu;
		rss.queue = u;
		a_rss[0] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss};
		a_rss[1] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_END};
		alts[n_alts++] = a_rss;
	}
	alts[n_alts++] = a_q;
	f = flow_make(port, RXTOK_STEER_PRIO_ALL, all, alts, n_alts, &used,
		      "catch-all rule to the unbound queues");
	if (f != NULL) {
		if (rule_push(sp, f, 0) < 0) {
			struct rte_flow_error fe;

			rte_flow_destroy(port, f, &fe);
			steer_err("port %u: out of memory", port);
			return -ENOMEM;
		}
		sp->catch_all = true;
		sp->catch_rss = n_alts == 2 && used == 0;
	}
	/* and the hash never picks a bound queue */
	rc = reta_steer(port, u, nu, reta_why, sizeof(reta_why));
	if (!sp->catch_all) {
		char flow_why[sizeof(steer_errbuf)];

		snprintf(flow_why, sizeof(flow_why), "%s", steer_errbuf);
		if (rc != 0) {
			steer_err("%s; and %s", flow_why, reta_why);
			goto fail;
		}
		/* the table alone is only as good as a PMD that honours it
		 * (net_null takes a table and ignores it): demand that the
		 * port can at least steer consumer flows by rte_flow */
		if (!flow_probe(port, b[0])) {
			steer_err("%s; and a rule for consumer flows (eth/ipv4/udp to queue %u): "
				  "%s",
				  flow_why, b[0], probe_why);
			rc = -ENOTSUP;
			goto fail;
		}
		/* without a catch-all, frames RSS does not hash (not IP) go
		 * to queue 0 on most NICs */
		if (rxtok.bind_tbl[port][0] != 0) {
			steer_err("%s; the redirection table alone does not keep frames RSS does "
				  "not hash off queue 0, which is bound",
				  flow_why);
			rc = -ENOTSUP;
			goto fail;
		}
	}
	/* the consumers' flows: to their region's queue */
	for (i = 0; i < rxtok.hi; i++) {
		const struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c == NULL)
			continue;
		rc = consumer_rules_add(port, c);
		if (rc < 0)
			goto fail;
	}
	sp->steered = true;
	return 0;
fail:
	rules_del(port, 0, true);
	reta_restore(port);
	sp->catch_all = false;
	sp->catch_rss = false;
	return rc < 0 ? rc : -ENOTSUP;
}

int
rxtok_steer_consumer_add(const struct egw_rxtok_consumer *c)
{
	uint16_t p;
	int rc;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (!steer_ports[p].steered)
			continue;
		rc = consumer_rules_add(p, c);
		if (rc < 0) {
			rxtok_steer_consumer_del(c);
			return rc;
		}
	}
	return 0;
}

void
rxtok_steer_consumer_del(const struct egw_rxtok_consumer *c)
{
	uint16_t p;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (steer_ports[p].n != 0)
			rules_del(p, c->idx + 1, false);
}

int
egw_rxtok_steer_describe(uint16_t port, char *buf, size_t len)
{
	const struct steer_port *sp;
	uint32_t i, nc = 0;

	if (port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	sp = &steer_ports[port];
	if (!sp->steered)
		return snprintf(buf, len, "none");
	for (i = 0; i < sp->n; i++)
		nc += sp->rules[i].cidx != 0;
	return snprintf(buf, len, "%u consumer rule%s%s%s%s", nc, nc == 1 ? "" : "s",
			sp->catch_all ? (sp->catch_rss ? ", catch-all rss" : ", catch-all queue")
				      : "",
			sp->reta_saved ? ", reta" : "", "");
}
