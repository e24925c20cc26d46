/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rxtokens commands:
 *   rxtokens region add <name> size <bytes>[K|M|G] [pagesize 2M|1G]
 *   rxtokens region del <name>
 *   rxtokens bind <region> port <N> queue <list> [shared]
 *   rxtokens unbind <region> port <N> queue <list>
 *   rxtokens consumer add <name> region <r> match udp-dport <P> | dst <addr> |
 *            pppoe-session <id> [quota <N>] [uid <U>] [gid <G>|any] [dump <file>]
 *   rxtokens consumer del <name>
 *   rxtokens listen <unix-socket-path>
 *   rxtokens wait <consumer> [<seconds>]
 *   show rxtokens [regions|bindings|consumers]
 * Each checks every argument before it changes anything.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <rte_cycles.h>
#include <rte_memory.h>

#include "cli.h"
#include "egw_rxtok.h"
#include "fwd.h"

#define RXT_MAX_WORDS 16

struct rxt_args {
	int n;
	char *w[RXT_MAX_WORDS];
};

static int
split(char *s, struct rxt_args *a)
{
	char *save = NULL, *t;

	a->n = 0;
	for (t = strtok_r(s, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		if (a->n == RXT_MAX_WORDS)
			return -E2BIG;
		a->w[a->n++] = t;
	}
	return 0;
}

/* <bytes> with an optional K, M or G (binary) suffix. */
static int
parse_size(const char *s, uint64_t *out)
{
	char num[32];
	size_t n = strlen(s);
	uint64_t mul = 1, v;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'K':
	case 'k':
		mul = 1ull << 10;
		num[n - 1] = '\0';
		break;
	case 'M':
	case 'm':
		mul = 1ull << 20;
		num[n - 1] = '\0';
		break;
	case 'G':
	case 'g':
		mul = 1ull << 30;
		num[n - 1] = '\0';
		break;
	default: break;
	}
	if (egw_parse_u64(num, 1, UINT64_MAX / mul, &v) < 0)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/* "0", "0,2", "0-3", "all": RX queues of port p. */
static int
parse_queues(const char *s, uint16_t port, uint16_t *q, uint16_t *nq)
{
	uint16_t nb = egw.ports[port].nb_rxq, i;
	bool seen[EGW_MAX_RXQ] = {false};
	char buf[128], *save = NULL, *t;

	*nq = 0;
	if (strcmp(s, "all") == 0) {
		for (i = 0; i < nb; i++)
			q[(*nq)++] = i;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(t, '-');
		uint64_t lo, hi;

		if (dash != NULL)
			*dash = '\0';
		if (egw_parse_u64(t, 0, nb - 1, &lo) < 0 ||
		    egw_parse_u64(dash != NULL ? dash + 1 : t, lo, nb - 1, &hi) < 0)
			return -ERANGE;
		for (; lo <= hi; lo++) {
			if (!seen[lo])
				q[(*nq)++] = (uint16_t)lo;
			seen[lo] = true;
		}
	}
	return *nq != 0 ? 0 : -EINVAL;
}

static bool
running(const char *what)
{
	if (!__atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED))
		return false;
	egw_cli_fail("%s: forwarding is running: stop it first", what);
	return true;
}

static void
region_add(struct rxt_args *a)
{
	uint64_t size, pg = RTE_PGSIZE_2M;
	struct egw_rxtok_region *r;
	const char *name;
	int i;

	/* rxtokens region add <name> size <bytes> [pagesize 2M|1G] */
	if (a->n != 5 && a->n != 7) {
		egw_cli_fail(
			"usage: rxtokens region add <name> size <bytes>[K|M|G] [pagesize 2M|1G]");
		return;
	}
	name = a->w[2];
	if (strcmp(a->w[3], "size") != 0 || parse_size(a->w[4], &size) < 0) {
		egw_cli_fail("rxtokens region add: 'size <bytes>[K|M|G]' expected, got '%s %s'",
			     a->w[3], a->w[4]);
		return;
	}
	for (i = 5; i < a->n; i += 2) {
		if (strcmp(a->w[i], "pagesize") != 0) {
			egw_cli_fail("rxtokens region add: unknown '%s' (pagesize 2M|1G)", a->w[i]);
			return;
		}
		if (strcmp(a->w[i + 1], "2M") == 0) {
			pg = RTE_PGSIZE_2M;
		} else if (strcmp(a->w[i + 1], "1G") == 0) {
			pg = RTE_PGSIZE_1G;
		} else {
			egw_cli_fail("rxtokens region add: pagesize '%s': 2M or 1G", a->w[i + 1]);
			return;
		}
	}
	if (size % pg != 0) {
		egw_cli_fail("rxtokens region add: size %" PRIu64
			     " is not a multiple of the %s page size",
			     size, pg == RTE_PGSIZE_2M ? "2M" : "1G");
		return;
	}
	r = egw_rxtok_region_create(name, size, pg);
	if (r == NULL) {
		egw_cli_fail("rxtokens region add %s: %s%s", name, rte_strerror(rte_errno),
			     rte_errno == ENOMEM ? " (reserve hugepages: /proc/sys/vm/nr_hugepages)"
			     : rte_errno == EEXIST ? " (name taken)"
						   : "");
		return;
	}
	printf("rxtokens: region %s: %" PRIu64 " bytes, %" PRIu64
	       " pages of 4 KiB (tokens 0..%" PRIu64 ")\n",
	       name, size, size >> EGW_RXTOK_PAGE_SHIFT, (size >> EGW_RXTOK_PAGE_SHIFT) - 1);
}

static void
region_del(struct rxt_args *a)
{
	struct egw_rxtok_region *r;
	int rc;

	if (a->n != 3) {
		egw_cli_fail("usage: rxtokens region del <name>");
		return;
	}
	r = egw_rxtok_region_find(a->w[2]);
	if (r == NULL) {
		egw_cli_fail("rxtokens region del: no region '%s'", a->w[2]);
		return;
	}
	rc = egw_rxtok_region_destroy(r);
	if (rc < 0)
		egw_cli_fail("rxtokens region del %s: %s", a->w[2],
			     rc == -EBUSY ? "bound to queues or used by consumers"
					  : rte_strerror(-rc));
	else
		printf("rxtokens: region %s deleted\n", a->w[2]);
}

/*
 * The queue set-up restarts the port: a PMD that does not keep flow rules
 * across a restart (no RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP) gets them destroyed
 * before it stops and created again once it runs.
 */
static int
set_pool_steered(uint16_t port, const uint16_t *q, uint16_t nq, struct rte_mempool *mp, char *err,
		 size_t errlen)
{
	struct rte_eth_dev_info info;
	bool keep = rte_eth_dev_info_get(port, &info) == 0 &&
		    (info.dev_capa & RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP) != 0;
	bool steered = egw_rxtok_port_steered(port) != 0;
	int rc;

	if (steered && !keep)
		egw_rxtok_steer_flush(port);
	rc = egw_port_rxq_set_pool(port, q, nq, mp, err, errlen);
	if (steered && !keep && egw_rxtok_steer_port(port) < 0 && rc == 0) {
		snprintf(err, errlen, "steering port %u again after its restart: %s", port,
			 egw_rxtok_steer_error());
		rc = -ENOTSUP;
	}
	return rc;
}

static void
bind_queues(struct rxt_args *a)
{
	uint16_t port, q[EGW_MAX_RXQ], nq, i;
	struct egw_rxtok_region *r;
	struct rte_mempool *mp;
	unsigned int flags = 0;
	char err[512];
	int rc;

	/* rxtokens bind <region> port <N> queue <list> [shared] */
	if ((a->n != 6 && a->n != 7) || strcmp(a->w[2], "port") != 0 ||
	    strcmp(a->w[4], "queue") != 0) {
		egw_cli_fail("usage: rxtokens bind <region> port <N> queue <list> [shared]");
		return;
	}
	if (a->n == 7) {
		if (strcmp(a->w[6], "shared") != 0) {
			egw_cli_fail("rxtokens bind: unknown '%s' (shared: the port carries only "
				     "the region owner's traffic)",
				     a->w[6]);
			return;
		}
		flags = EGW_RXTOK_BIND_SHARED;
	}
	r = egw_rxtok_region_find(a->w[1]);
	if (r == NULL) {
		egw_cli_fail("rxtokens bind: no region '%s'", a->w[1]);
		return;
	}
	if (egw_port_parse(a->w[3], &port, err, sizeof(err)) < 0) {
		egw_cli_fail("rxtokens bind: %s", err);
		return;
	}
	if (parse_queues(a->w[5], port, q, &nq) < 0) {
		egw_cli_fail("rxtokens bind: queue list '%s': queues of port %u are 0..%u (e.g. "
			     "0,1 or 0-3 or all)",
			     a->w[5], port, egw.ports[port].nb_rxq - 1);
		return;
	}
	for (i = 0; i < egw.ports[port].nb_rxq; i++) {
		struct egw_rxtok_region *b = egw_rxtok_binding(port, i);
		bool sh;

		if (b == NULL)
			continue;
		sh = egw_rxtok_binding_shared(port, i) != 0;
		if (flags != 0 && (!sh || b != r)) {
			egw_cli_fail("rxtokens bind: port %u queue %u is bound to region %s%s: a "
				     "shared port carries one region's traffic only (unbind it "
				     "first)",
				     port, i, egw_rxtok_region_name(b), sh ? " (shared)" : "");
			return;
		}
		if (flags == 0 && sh) {
			egw_cli_fail("rxtokens bind: port %u is bound shared (queue %u to region "
				     "%s): its queues cannot be steered (unbind it first, or say "
				     "shared)",
				     port, i, egw_rxtok_region_name(b));
			return;
		}
	}
	for (i = 0; i < nq; i++) {
		struct egw_rxtok_region *b = egw_rxtok_binding(port, q[i]);

		if (b != NULL) {
			egw_cli_fail(
				"rxtokens bind: port %u queue %u is already bound to region %s",
				port, q[i], egw_rxtok_region_name(b));
			return;
		}
	}
	if (running("rxtokens bind"))
		return;
	mp = egw_rxtok_region_pool(r);
	if (mp == NULL) {
		egw_cli_fail("rxtokens bind: region %s: mempool: %s", a->w[1],
			     rte_strerror(rte_errno));
		return;
	}
	rc = egw_rxtok_region_dma_map(r, port);
	if (rc < 0 && rc != -ENOTSUP) {
		egw_cli_fail("rxtokens bind: DMA mapping of region %s for port %u: %s", a->w[1],
			     port, rte_strerror(-rc));
		return;
	}
	for (i = 0; i < nq; i++) {
		rc = egw_rxtok_bind_flags(r, port, q[i], flags);
		if (rc < 0) {
			uint16_t bad = q[i];

			while (i-- > 0)
				egw_rxtok_unbind(r, port, q[i]);
			egw_cli_fail("rxtokens bind: region %s, port %u queue %u: %s", a->w[1],
				     port, bad,
				     rc == -ENOSPC
					     ? "its descriptors do not fit the pages the "
					       "consumers' quotas leave (show rxtokens regions)"
					     : rte_strerror(-rc));
			return;
		}
	}
	/* fail closed: steer before any frame can land in the region, and
	 * refuse a port that cannot keep other frames off the queues */
	if (flags == 0 && egw_rxtok_steer_port(port) < 0) {
		snprintf(err, sizeof(err), "%s", egw_rxtok_steer_error());
		for (i = 0; i < nq; i++)
			egw_rxtok_unbind(r, port, q[i]);
		if (egw_rxtok_steer_port(port) < 0)
			fprintf(stderr, "warning: port %u: restoring its steering: %s\n", port,
				egw_rxtok_steer_error());
		egw_cli_fail("rxtokens bind: port %u (%s) cannot steer only consumer flows to "
			     "the bound queue%s: %s; every other frame would land in region %s, "
			     "readable by its owner (say 'shared' if the port carries only that "
			     "owner's traffic)",
			     port, egw.ports[port].driver, nq == 1 ? "" : "s", err, a->w[1]);
		return;
	}
	if (set_pool_steered(port, q, nq, mp, err, sizeof(err)) < 0) {
		char err2[256];

		for (i = 0; i < nq; i++)
			egw_rxtok_unbind(r, port, q[i]);
		/* put the queues back on the port's pool, steered as before */
		set_pool_steered(port, q, nq, egw_socket_pool((unsigned int)egw.ports[port].socket),
				 err2, sizeof(err2));
		if (egw_rxtok_steer_port(port) < 0)
			fprintf(stderr, "warning: port %u: restoring its steering: %s\n", port,
				egw_rxtok_steer_error());
		egw_cli_fail("rxtokens bind: %s", err);
		return;
	}
	if (flags != 0) {
		printf("rxtokens: region %s bound to port %u, %u queue(s), shared: the region's "
		       "owner may read every frame of these queues\n",
		       a->w[1], port, nq);
	} else {
		char d[128];

		egw_rxtok_steer_describe(port, d, sizeof(d));
		printf("rxtokens: region %s bound to port %u, %u queue(s), steered (%s)\n", a->w[1],
		       port, nq, d);
	}
}

/* rxtokens unbind <region> port <N> queue <list>: the queues receive into
 * the port's own pool again, so no new frame lands in the region (a
 * detached consumer process may still map it). */
static void
unbind_queues(struct rxt_args *a)
{
	uint16_t port, q[EGW_MAX_RXQ], nq, i;
	struct egw_rxtok_region *r;
	char err[256];

	if (a->n != 6 || strcmp(a->w[2], "port") != 0 || strcmp(a->w[4], "queue") != 0) {
		egw_cli_fail("usage: rxtokens unbind <region> port <N> queue <list>");
		return;
	}
	r = egw_rxtok_region_find(a->w[1]);
	if (r == NULL) {
		egw_cli_fail("rxtokens unbind: no region '%s'", a->w[1]);
		return;
	}
	if (egw_port_parse(a->w[3], &port, err, sizeof(err)) < 0) {
		egw_cli_fail("rxtokens unbind: %s", err);
		return;
	}
	if (parse_queues(a->w[5], port, q, &nq) < 0) {
		egw_cli_fail("rxtokens unbind: queue list '%s': queues of port %u are 0..%u",
			     a->w[5], port, egw.ports[port].nb_rxq - 1);
		return;
	}
	for (i = 0; i < nq; i++) {
		if (egw_rxtok_binding(port, q[i]) != r) {
			egw_cli_fail("rxtokens unbind: port %u queue %u is not bound to region %s",
				     port, q[i], a->w[1]);
			return;
		}
	}
	if (running("rxtokens unbind"))
		return;
	if (set_pool_steered(port, q, nq, egw_socket_pool((unsigned int)egw.ports[port].socket),
			     err, sizeof(err)) < 0) {
		egw_cli_fail("rxtokens unbind: %s", err);
		return;
	}
	for (i = 0; i < nq; i++)
		egw_rxtok_unbind(r, port, q[i]);
	/* the rules now point the remaining bound queues' way, or go */
	if (egw_rxtok_steer_port(port) < 0)
		fprintf(stderr,
			"warning: rxtokens unbind: port %u: steering the queues still "
			"bound: %s\n",
			port, egw_rxtok_steer_error());
	printf("rxtokens: region %s unbound from port %u, %u queue(s)\n", a->w[1], port, nq);
}

static void
consumer_add(struct rxt_args *a)
{
	struct egw_rxtok_consumer_conf conf = {0};
	struct egw_rxtok_consumer *c;
	char xerr[256];
	uint64_t v;
	int i;

	/* rxtokens consumer add <name> region <r> match <kind> <value> [quota N] [uid U]
	 * [gid G|any] [dump F] */
	if (a->n < 7 || strcmp(a->w[3], "region") != 0 || strcmp(a->w[5], "match") != 0) {
		egw_cli_fail("usage: rxtokens consumer add <name> region <r> match udp-dport <p> | "
			     "dst <addr> | pppoe-session <id> [quota <N>] [uid <U>] [gid <G>|any] "
			     "[dump <file>]");
		return;
	}
	/* only edgegw's own user and group, unless told otherwise */
	conf.uid = (uint32_t)geteuid();
	conf.gid = (uint32_t)getegid();
	conf.name = a->w[2];
	conf.region = egw_rxtok_region_find(a->w[4]);
	if (conf.region == NULL) {
		egw_cli_fail("rxtokens consumer add: no region '%s'", a->w[4]);
		return;
	}
	if (a->n < 8) {
		egw_cli_fail("rxtokens consumer add: 'match %s' needs a value", a->w[6]);
		return;
	}
	if (strcmp(a->w[6], "udp-dport") == 0) {
		if (egw_parse_u64(a->w[7], 1, 65535, &v) < 0) {
			egw_cli_fail("rxtokens consumer add: udp-dport '%s': 1..65535", a->w[7]);
			return;
		}
		conf.match = EGW_RXTOK_MATCH_UDP_DPORT;
		conf.udp_dport = (uint16_t)v;
	} else if (strcmp(a->w[6], "pppoe-session") == 0) {
		if (egw_parse_u64(a->w[7], 1, 65534, &v) < 0) {
			egw_cli_fail("rxtokens consumer add: pppoe-session '%s': 1..65534",
				     a->w[7]);
			return;
		}
		conf.match = EGW_RXTOK_MATCH_PPPOE;
		conf.pppoe_session = (uint16_t)v;
	} else if (strcmp(a->w[6], "dst") == 0) {
		if (inet_pton(AF_INET, a->w[7], conf.dst) == 1) {
			conf.match = EGW_RXTOK_MATCH_DST4;
		} else if (inet_pton(AF_INET6, a->w[7], conf.dst) == 1) {
			conf.match = EGW_RXTOK_MATCH_DST6;
		} else {
			egw_cli_fail(
				"rxtokens consumer add: dst '%s' is not an IPv4 or IPv6 address",
				a->w[7]);
			return;
		}
	} else {
		egw_cli_fail(
			"rxtokens consumer add: unknown match '%s' (udp-dport, dst, pppoe-session)",
			a->w[6]);
		return;
	}
	conf.external = 1;
	for (i = 8; i < a->n; i += 2) {
		if (i + 1 >= a->n) {
			egw_cli_fail("rxtokens consumer add: '%s' needs a value", a->w[i]);
			return;
		}
		if (strcmp(a->w[i], "quota") == 0) {
			if (egw_parse_u64(a->w[i + 1], 1, EGW_RXTOK_MAX_QUOTA, &v) < 0) {
				egw_cli_fail("rxtokens consumer add: quota '%s': 1..%u",
					     a->w[i + 1], EGW_RXTOK_MAX_QUOTA);
				return;
			}
			conf.quota = (uint32_t)v;
		} else if (strcmp(a->w[i], "uid") == 0) {
			if (egw_parse_u64(a->w[i + 1], 0, UINT32_MAX - 1, &v) < 0) {
				egw_cli_fail("rxtokens consumer add: uid '%s': 0..%u", a->w[i + 1],
					     UINT32_MAX - 1);
				return;
			}
			conf.uid = (uint32_t)v;
		} else if (strcmp(a->w[i], "gid") == 0) {
			if (strcmp(a->w[i + 1], "any") == 0) {
				conf.gid = EGW_RXTOK_ID_ANY;
			} else if (egw_parse_u64(a->w[i + 1], 0, UINT32_MAX - 1, &v) < 0) {
				egw_cli_fail("rxtokens consumer add: gid '%s': 0..%u or any",
					     a->w[i + 1], UINT32_MAX - 1);
				return;
			} else {
				conf.gid = (uint32_t)v;
			}
		} else if (strcmp(a->w[i], "dump") == 0) {
			conf.dump = a->w[i + 1];
			conf.external = 0;
		} else {
			egw_cli_fail("rxtokens consumer add: unknown '%s' (quota, uid, gid, dump)",
				     a->w[i]);
			return;
		}
	}
	if (conf.dump != NULL &&
	    (conf.uid != (uint32_t)geteuid() || conf.gid != (uint32_t)getegid())) {
		egw_cli_fail("rxtokens consumer add: a dump consumer is edgegw itself: no uid/gid");
		return;
	}
	c = egw_rxtok_consumer_create(&conf);
	if (c == NULL) {
		int err = rte_errno;
		uint32_t ou = 0, og = 0;
		uint64_t room = egw_rxtok_region_quota_room(conf.region);

		if (err == EDQUOT)
			egw_cli_fail(
				"rxtokens consumer add %s: quota %u does not fit region %s: "
				"%" PRIu64 " tokens of quota left (pages less the bound queues' "
				"reserve of %" PRIu64 " and the other consumers' quotas)",
				conf.name,
				conf.quota != 0 ? conf.quota : (unsigned int)EGW_RXTOK_DEF_QUOTA,
				a->w[4], room, egw_rxtok_region_reserve(conf.region));
		else if (err == EOPNOTSUPP)
			egw_cli_fail("rxtokens consumer add %s: region %s is bound to a steered "
				     "port that refuses the consumer's flow rule: %s",
				     conf.name, a->w[4], egw_rxtok_steer_error());
		else if (err == EACCES && egw_rxtok_region_owner(conf.region, &ou, &og))
			egw_cli_fail("rxtokens consumer add %s: region %s belongs to uid %u gid %d "
				     "(a region is one trust domain: use another region)",
				     conf.name, a->w[4], ou, (int)og);
		else
			egw_cli_fail(
				"rxtokens consumer add %s: %s%s", conf.name, rte_strerror(err),
				err == EEXIST
					? " (name or flow already taken: show rxtokens consumers)"
					: "");
		return;
	}
	/* steered to edgegw on a NIC shared with the kernel: refused (map
	 * full), the consumer goes again */
	if (egw_xdp_hook_rxtok(conf.name, &conf, true, xerr, sizeof(xerr)) < 0) {
		egw_rxtok_consumer_destroy(c);
		egw_cli_fail("rxtokens consumer add %s: %s: the consumer was not added", conf.name,
			     xerr);
		return;
	}
	printf("rxtokens: consumer %s on region %s (%s)\n", conf.name, a->w[4],
	       conf.external ? "external: attach with egw-rxtok-consumer" : "in-process, dump");
}

static void
consumer_del(struct rxt_args *a)
{
	struct egw_rxtok_consumer *c;
	char xerr[256];

	if (a->n != 3) {
		egw_cli_fail("usage: rxtokens consumer del <name>");
		return;
	}
	c = egw_rxtok_consumer_find(a->w[2]);
	if (c == NULL) {
		egw_cli_fail("rxtokens consumer del: no consumer '%s'", a->w[2]);
		return;
	}
	egw_rxtok_consumer_destroy(c);
	if (egw_xdp_hook_rxtok(a->w[2], NULL, false, xerr, sizeof(xerr)) < 0) {
		egw_cli_fail("rxtokens consumer del %s: deleted, but %s", a->w[2], xerr);
		return;
	}
	printf("rxtokens: consumer %s deleted, its tokens released\n", a->w[2]);
}

/* rxtokens wait <consumer> [<seconds>]: serve the socket until a process
 * attaches, so a command file can start forwarding only then. */
static void
wait_cmd(struct rxt_args *a)
{
	struct egw_rxtok_consumer *c;
	uint64_t secs = 10, deadline;

	if (a->n != 2 && a->n != 3) {
		egw_cli_fail("usage: rxtokens wait <consumer> [<seconds>]");
		return;
	}
	c = egw_rxtok_consumer_find(a->w[1]);
	if (c == NULL) {
		egw_cli_fail("rxtokens wait: no consumer '%s'", a->w[1]);
		return;
	}
	if (a->n == 3 && egw_parse_u64(a->w[2], 1, 3600, &secs) < 0) {
		egw_cli_fail("rxtokens wait: seconds '%s': 1..3600", a->w[2]);
		return;
	}
	deadline = rte_get_tsc_cycles() + secs * rte_get_tsc_hz();
	while (!egw_rxtok_consumer_attached(c)) {
		if (rte_get_tsc_cycles() > deadline ||
		    __atomic_load_n(&egw.quit, __ATOMIC_RELAXED)) {
			egw_cli_fail("rxtokens wait: no process attached to '%s' within %" PRIu64
				     " s",
				     a->w[1], secs);
			return;
		}
		if (egw_rxtok_service() == 0)
			rte_delay_us_sleep(1000);
	}
	printf("rxtokens: consumer %s attached\n", a->w[1]);
}

static void
listen_cmd(struct rxt_args *a)
{
	int rc;

	if (a->n != 2) {
		egw_cli_fail("usage: rxtokens listen <unix-socket-path>");
		return;
	}
	rc = egw_rxtok_listen(a->w[1]);
	if (rc < 0) {
		egw_cli_fail("rxtokens listen %s: %s", a->w[1],
			     rc == -EALREADY ? "already listening" : strerror(-rc));
		return;
	}
	printf("rxtokens: listening for consumers on %s\n", a->w[1]);
}

struct rxt_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
rxtokens_run(struct rxt_res *res)
{
	char line[sizeof(res->rest)];
	struct rxt_args a;

	snprintf(line, sizeof(line), "%s", res->rest);
	if (split(line, &a) < 0 || a.n == 0) {
		egw_cli_fail("rxtokens: see 'help rxtokens'");
		return;
	}
	if (a.n >= 2 && strcmp(a.w[0], "region") == 0 && strcmp(a.w[1], "add") == 0)
		region_add(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "region") == 0 && strcmp(a.w[1], "del") == 0)
		region_del(&a);
	else if (strcmp(a.w[0], "bind") == 0)
		bind_queues(&a);
	else if (strcmp(a.w[0], "unbind") == 0)
		unbind_queues(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "consumer") == 0 && strcmp(a.w[1], "add") == 0)
		consumer_add(&a);
	else if (a.n >= 2 && strcmp(a.w[0], "consumer") == 0 && strcmp(a.w[1], "del") == 0)
		consumer_del(&a);
	else if (strcmp(a.w[0], "listen") == 0)
		listen_cmd(&a);
	else if (strcmp(a.w[0], "wait") == 0)
		wait_cmd(&a);
	else
		egw_cli_fail("rxtokens: unknown '%s' (region add|del, bind, unbind, consumer "
			     "add|del, listen, wait)",
			     a.w[0]);
}

/* Commands own the consumers' state while they run: the control lcore
 * (when it is not this one) serves it under the same lock. */
static void
cmd_rxtokens(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	rte_spinlock_lock(&egw.ctrl_lock);
	rxtokens_run(pr);
	rte_spinlock_unlock(&egw.ctrl_lock);
}

static void
cmd_show_rxtokens(void *pr, struct cmdline *cl __rte_unused, void *data)
{
	struct rxt_res *res = pr;
	const char *what = data != NULL ? res->rest : NULL;

	if (what != NULL && strcmp(what, "regions") != 0 && strcmp(what, "bindings") != 0 &&
	    strcmp(what, "consumers") != 0) {
		egw_cli_fail("show rxtokens: '%s': regions, bindings or consumers", what);
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	egw_rxtok_show(stdout, what);
	rte_spinlock_unlock(&egw.ctrl_lock);
}

static cmdline_parse_token_string_t t_rxtokens0 =
	TOKEN_STRING_INITIALIZER(struct rxt_res, w0, "rxtokens");
static cmdline_parse_token_string_t t_show0 = TOKEN_STRING_INITIALIZER(struct rxt_res, w0, "show");
static cmdline_parse_token_string_t t_rxtokens1 =
	TOKEN_STRING_INITIALIZER(struct rxt_res, w1, "rxtokens");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct rxt_res, rest, TOKEN_STRING_MULTI);
static cmdline_parse_token_string_t t_word = TOKEN_STRING_INITIALIZER(struct rxt_res, rest, NULL);

cmdline_parse_inst_t egw_cli_rxtok = {
	.f = cmd_rxtokens,
	.help_str = "rxtokens region|bind|unbind|consumer|listen ...: zero-copy delivery (help "
		    "rxtokens)",
	.tokens = {(void *)&t_rxtokens0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_show_rxtok = {
	.f = cmd_show_rxtokens,
	.help_str = "show rxtokens",
	.tokens = {(void *)&t_show0, (void *)&t_rxtokens1, NULL},
};

cmdline_parse_inst_t egw_cli_show_rxtok_what = {
	.f = cmd_show_rxtokens,
	.data = (void *)1,
	.help_str = "show rxtokens regions|bindings|consumers",
	.tokens = {(void *)&t_show0, (void *)&t_rxtokens1, (void *)&t_word, NULL},
};
