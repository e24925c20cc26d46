/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gateway stage: IP routing (lib/ip), the last stage of the IPv4 and IPv6
 * chains (ESP, PPPoE and rxtokens run before it), and lib/ip's place in the
 * application: initialisation, ports, the ARP and ND handlers of the
 * control path, show config and --stats-json.
 *
 *   - A frame from an access port is routed only if it came out of a PPPoE
 *     session's decapsulation (or is an ESP packet made from one); plain IP
 *     there is dropped as access_not_session. Nothing is routed out of an
 *     access port but through a session (lib/ip refuses addresses,
 *     neighbours and routes on access ports).
 *   - Routed frames leave with the next hop's MAC header; frames for
 *     subscribers (routes of type pppoe: the PPPoE pools) are encapsulated
 *     for their session, with their TTL decremented; frames waiting for ARP
 *     or ND go to the control path, which sends them once resolved.
 *   - ICMP errors and echo replies go back where the packet came from:
 *     inside the subscriber's session, or through the outbound SAs.
 *   - Everything else addressed to edgegw goes to the port's kernel
 *     exception path (exception.c) if it has one, else it is dropped as
 *     ip_local_no_exception.
 *
 * `set fwd gateway xconnect` keeps the older behaviour for tests and port
 * pairs: IP crosses between the access and uplink roles unrouted.
 *
 * Each worker has its own data-path context; the workers are the library's
 * QSBR readers. The control path (egw_ip_ctrl_input(), egw_ip_service(),
 * the ip commands) runs under egw.ctrl_lock.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_malloc.h>

#include "fwd.h"

static_assert(EGW_MAX_BURST <= EGW_IP_MAX_BURST, "a gateway burst must fit one lib/ip call");

/* lib reason r is application reason EGW_DROP_IP_FIRST + r */
#define EGW_IP_DROP(e, n, d)                                                                \
	static_assert(EGW_DROP_IP_##e == EGW_DROP_IP_FIRST + EGW_IP_DROP_##e,               \
		      "drop.def: the IP reasons must come right before the PPPoE ones, in " \
		      "lib/ip's order (" n ")");
#include "egw_ip_drop.def"
#undef EGW_IP_DROP

struct egw_ip_stage_worker {
	struct egw_ip_ctx *ctx;
	struct egw_ip_res res; /* counts zero between calls */
};

static void
ip_account(struct egw_burst *b, struct egw_ip_res *res)
{
	unsigned int r;

	/* most bursts drop nothing: no pass over every reason for them */
	if (res->n_drop != 0)
		for (r = 0; r < EGW_IP_DROP_MAX; r++)
			b->drop[EGW_DROP_IP_FIRST + r] += res->drop[r];
	memset(res, 0, offsetof(struct egw_ip_res, out));
}

void
egw_ip_stage_route(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, bool v6)
{
	struct egw_ip_stage_worker *iw = b->w->ip;
	struct rte_mbuf *reply[EGW_IP_MAX_BURST], *sess[EGW_IP_MAX_BURST];
	uint32_t sids[EGW_IP_MAX_BURST];
	struct egw_ip_res *res;
	uint16_t i, nreply, nsess;

	if (egw.ports[b->port].role == EGW_ROLE_ACCESS && !b->from_session) {
		egw_out_drop_bulk(b, pkts, n, EGW_DROP_IP_FIRST + EGW_IP_DROP_ACCESS_NOT_SESSION);
		return;
	}
	if (iw == NULL) {
		egw_out_drop_bulk(b, pkts, n, EGW_DROP_NO_ROUTE);
		return;
	}
	res = &iw->res;
	/* subscribers reach edgegw's echo, never the host's stack behind it */
	/* frames that came as they were received were prefetched then
	 * (egw_ip_prefetch_burst()); a session's, a tunnel's and ESP's own
	 * were not */
	egw_ip_fwd_burst(
		iw->ctx, b->port, pkts, n, v6,
		(b->local_origin ? EGW_IP_F_LOCAL_ORIGIN : 0) |
			(b->from_session ? EGW_IP_F_NO_EXCEPTION : 0) |
			(b->prefetched && !b->from_session && !b->from_tunnel && !b->local_origin
				 ? EGW_IP_F_PREFETCHED
				 : 0),
		res);
	/* counted as made before any can be counted as sent */
	b->created += res->created;
	egw_out_tx_ports(b, res->out, res->out_port, res->n_out);
	for (i = 0; i < res->n_ctrl; i++)
		egw_out_ctrl(b, res->ctrl[i]);
	if (res->n_local != 0)
		egw_out_drop_bulk(b, res->local, res->n_local,
				  EGW_DROP_IP_FIRST + EGW_IP_DROP_NO_EXCEPTION);
	/* the stages below reuse the worker's scratch: take the lists out */
	nreply = res->n_reply;
	memcpy(reply, res->reply, nreply * sizeof(reply[0]));
	nsess = res->n_sess;
	memcpy(sess, res->sess, nsess * sizeof(sess[0]));
	memcpy(sids, res->sess_key, nsess * sizeof(sids[0]));
	ip_account(b, res);
	if (nsess != 0)
		egw_pppoe_stage_encap(b, sess, sids, nsess);
	if (nreply == 0)
		return;
	/* back where they came from: into the subscriber's session, or
	 * through the SAs that protect the sender */
	if (b->from_session)
		egw_pppoe_stage_reply(b, reply, nreply);
	else
		egw_esp_stage_reply(b, reply, nreply);
}

void
egw_ip_stage_session_lookup(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, uint32_t *sids)
{
	struct egw_ip_stage_worker *iw = b->w->ip;

	if (iw == NULL) {
		memset(sids, 0, n * sizeof(sids[0]));
		return;
	}
	egw_ip_session_lookup(iw->ctx, pkts, n, sids);
}

uint16_t
egw_ip_stage_ttl(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, uint16_t *kept)
{
	struct egw_ip_stage_worker *iw = b->w->ip;
	struct rte_mbuf *reply[EGW_IP_MAX_BURST];
	struct egw_ip_res *res;
	uint16_t i, k, nreply;

	if (iw == NULL || b->local_origin || !egw_gateway_routed()) {
		for (i = 0; i < n; i++)
			kept[i] = i;
		return n;
	}
	res = &iw->res;
	k = egw_ip_ttl_burst(iw->ctx, b->port, pkts, n, kept, res);
	b->created += res->created;
	nreply = res->n_reply;
	memcpy(reply, res->reply, nreply * sizeof(reply[0]));
	ip_account(b, res);
	/* time exceeded: back where the packet came from, in clear (it came
	 * from the protected side) or inside the subscriber's session */
	if (nreply != 0)
		egw_pppoe_stage_reply(b, reply, nreply);
	return k;
}

void
egw_ip_stage_icmp_source(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	if (b->from_session || b->from_tunnel || !egw.ip || !egw_gateway_routed() ||
	    egw.ports[b->port].role == EGW_ROLE_ACCESS)
		return;
	for (i = 0; i < n; i++)
		egw_ip_icmp_set_source(pkts[i], b->port);
}

/* ---- control path ----------------------------------------------------------- */

static void
ctrl_ip_input(struct rte_mbuf *m)
{
	egw_ip_ctrl_input(m);
}

/* `ip port <N> mtu <bytes>`: the IP MTU routing uses on a port, below the
 * device's (0: the device's) */
static uint16_t ip_mtu[RTE_MAX_ETHPORTS];

static uint16_t
dev_mtu(uint16_t port)
{
	uint16_t mtu = RTE_ETHER_MTU;

	if (rte_eth_dev_get_mtu(port, &mtu) != 0 || mtu < 68)
		mtu = RTE_ETHER_MTU;
	return mtu;
}

static int
port_declare(uint16_t port, enum egw_port_role role, char *err, size_t errlen)
{
	uint16_t mtu = ip_mtu[port] != 0 ? ip_mtu[port] : dev_mtu(port);
	int rc;

	rc = egw_ip_port_set(port, &egw.ports[port].eth.mac, mtu,
			     role == EGW_ROLE_ACCESS ? EGW_IP_PORT_ACCESS : EGW_IP_PORT_ROUTED);
	if (rc == -EBUSY)
		snprintf(err, errlen,
			 "port %u has IP addresses or routes: an access port carries PPPoE "
			 "sessions only (delete them first)",
			 port);
	else if (rc < 0)
		snprintf(err, errlen, "port %u: IP: %s", port, strerror(-rc));
	return rc;
}

int
egw_ip_stage_port_mtu(uint16_t port, uint16_t mtu, char *err, size_t errlen)
{
	uint16_t old, dm = dev_mtu(port);
	int rc;

	if (!egw.ip || port >= RTE_MAX_ETHPORTS || !egw.ports[port].used) {
		snprintf(err, errlen, "port %u does not exist", port);
		return -EINVAL;
	}
	if (mtu != 0 && (mtu < 1280 || mtu > dm)) {
		snprintf(err, errlen, "MTU %u: 1280 (IPv6's minimum) .. %u (the port's)", mtu, dm);
		return -EINVAL;
	}
	old = ip_mtu[port];
	ip_mtu[port] = mtu;
	rc = port_declare(port, egw.ports[port].role, err, errlen);
	if (rc < 0)
		ip_mtu[port] = old;
	return rc;
}

uint16_t
egw_ip_stage_port_mtu_get(uint16_t port)
{
	return ip_mtu[port] != 0 ? ip_mtu[port] : dev_mtu(port);
}

int
egw_ip_stage_port_role(uint16_t port, enum egw_port_role role, char *err, size_t errlen)
{
	if (!egw.ip)
		return 0;
	return port_declare(port, role, err, errlen);
}

int
egw_ip_stage_init(void)
{
	unsigned int s = rte_lcore_to_socket_id(egw.control_lcore), i;
	struct egw_ip_params p;
	char err[160];
	uint16_t pid;
	int rc;

	if (egw_drop_names_check("IP", EGW_DROP_IP_FIRST, EGW_IP_DROP_MAX, egw_ip_drop_name) < 0)
		return -EINVAL;
	if (egw.nb_workers > EGW_IP_MAX_CTX) {
		fprintf(stderr, "error: IP: %u worker lcores, lib/ip has at most %u contexts\n",
			egw.nb_workers, EGW_IP_MAX_CTX);
		return -E2BIG;
	}
	memset(&p, 0, sizeof(p));
	p.qsbr = egw.qsbr;
	p.pool = egw_socket_pool(s);
	p.nb_ctx = egw.nb_workers;
	p.socket = (int)s;
	p.tx = egw_control_tx;
	p.local = egw_exception_local;
	p.max_routes4 = egw.opts.ip_routes;
	p.max_routes6 = egw.opts.ip6_routes;
	/* every PPPoE session's /32 and /64 are FIB routes (stage_pppoe.c) */
	if (egw.pppoe)
		p.max_sessions = egw.opts.pppoe_sessions != 0 ? egw.opts.pppoe_sessions
							      : EGW_PPPOE_MAX_SESSIONS;
	/* prefixes longer than /24 need a tbl8 group each (fewer when they
	 * share a /24); IPv6 prefixes one per byte past the 24th bit */
	if (p.max_routes4 != 0)
		p.tbl8_4 = RTE_MAX(RTE_MIN(p.max_routes4 / 8, 1u << 17), 1024u);
	if (p.max_routes6 != 0)
		p.tbl8_6 = RTE_MAX(RTE_MIN(p.max_routes6 * 2, 1u << 22), 1024u);
	if (p.pool == NULL) {
		fprintf(stderr, "error: IP: no mbuf pool\n");
		return -ENOMEM;
	}
	rc = egw_ip_init(&p);
	if (rc < 0) {
		fprintf(stderr, "error: IP: initialisation failed: %s%s\n", strerror(-rc),
			rc == -ENOMEM ? " (smaller tables: --ip-routes N, --ip6-routes N, or more "
					"memory: EAL -m)"
				      : "");
		return rc;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	egw.ip = true;
	rte_spinlock_unlock(&egw.ctrl_lock);
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_worker *w = egw.workers[i];
		struct rte_mempool *mp = egw_socket_pool(rte_lcore_to_socket_id(w->lcore));
		struct egw_ip_stage_worker *iw;

		iw = rte_zmalloc_socket("egw_ip_w", sizeof(*iw), RTE_CACHE_LINE_SIZE,
					(int)rte_lcore_to_socket_id(w->lcore));
		if (iw == NULL) {
			fprintf(stderr, "error: IP: worker lcore %u: out of memory\n", w->lcore);
			return -ENOMEM;
		}
		iw->ctx = egw_ip_ctx_create(w->idx, mp);
		if (iw->ctx == NULL) {
			fprintf(stderr, "error: IP: context for worker lcore %u: %s\n", w->lcore,
				rte_strerror(rte_errno));
			rte_free(iw);
			return -rte_errno;
		}
		w->ip = iw;
	}
	RTE_ETH_FOREACH_DEV (pid) {
		if (!egw.ports[pid].used)
			continue;
		rc = port_declare(pid, egw.ports[pid].role, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "error: %s\n", err);
			return rc;
		}
	}
	egw_control_set_handler(EGW_ETH_CLS_ARP, ctrl_ip_input);
	egw_control_set_handler(EGW_ETH_CLS_IPV4, ctrl_ip_input);
	egw_control_set_handler(EGW_ETH_CLS_IPV6, ctrl_ip_input);
	return 0;
}

void
egw_ip_stage_fini(void)
{
	unsigned int i;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (egw.ip) {
		egw_control_set_handler(EGW_ETH_CLS_ARP, NULL);
		egw_control_set_handler(EGW_ETH_CLS_IPV4, NULL);
		egw_control_set_handler(EGW_ETH_CLS_IPV6, NULL);
		egw_exception_fini();
		/* the library first: the packets it holds may be fragments
		 * whose indirect mbufs come from the contexts' pools */
		egw_ip_fini();
		for (i = 0; i < egw.nb_workers; i++) {
			struct egw_worker *w = egw.workers[i];

			if (w->ip == NULL)
				continue;
			egw_ip_ctx_free(w->ip->ctx);
			rte_free(w->ip);
			w->ip = NULL;
		}
		egw.ip = false;
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

void
egw_ip_stage_ctx_stats(struct egw_ip_ctx_stats *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < egw.nb_workers; i++) {
		struct egw_ip_ctx_stats s;

		if (egw.workers[i]->ip == NULL)
			continue;
		egw_ip_ctx_stats(egw.workers[i]->ip->ctx, &s);
		t->forwarded += s.forwarded;
		t->echo_replies += s.echo_replies;
		t->icmp_errors += s.icmp_errors;
		t->icmp_ratelimited += s.icmp_ratelimited;
		t->fragments += s.fragments;
		t->local += s.local;
		t->punted += s.punted;
		t->nd += s.nd;
	}
}

void
egw_ip_stage_drops(uint64_t drop[EGW_IP_DROP_MAX])
{
	egw_drops_sum(EGW_DROP_IP_FIRST, EGW_IP_DROP_MAX, drop);
}

/* ---- --stats-json ------------------------------------------------------------ */

void
egw_ip_addr_str(const struct egw_ip_addr *a, char *buf, size_t len)
{
	if (inet_ntop(a->family, a->a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

struct json_ctx {
	FILE *f;
	bool first;
};

static int
json_neigh_f(const struct egw_ip_neigh_info *n, void *arg)
{
	struct json_ctx *j = arg;
	char a[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

	egw_ip_addr_str(&n->addr, a, sizeof(a));
	rte_ether_format_addr(mac, sizeof(mac), &n->mac);
	fprintf(j->f,
		"%s\n      {\"addr\": \"%s\", \"port\": %u, \"vlan\": %u, \"mac\": \"%s\", "
		"\"state\": \"%s\", \"held\": %u, \"refs\": %u}",
		j->first ? "" : ",", a, n->port, n->vlan, mac, egw_ip_neigh_state_name(n->state),
		n->held, n->refs);
	j->first = false;
	return 0;
}

static int
json_addr_f(const struct egw_ip_addr_info *ai, void *arg)
{
	struct json_ctx *j = arg;
	char a[INET6_ADDRSTRLEN];

	egw_ip_addr_str(&ai->addr, a, sizeof(a));
	fprintf(j->f, "%s{\"addr\": \"%s/%u\", \"port\": %u, \"vlan\": %u}", j->first ? "" : ", ",
		a, ai->len, ai->port, ai->vlan);
	j->first = false;
	return 0;
}

void
egw_ip_stage_json(FILE *f)
{
	const char *names[64];
	uint64_t values[64], drop[EGW_IP_DROP_MAX];
	unsigned int count[2][EGW_IP_RT_MAX], n, i, t;
	struct egw_ip_ctx_stats s;
	struct json_ctx j = {.f = f, .first = true};

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.ip) {
		fprintf(f, "{\"available\": false}");
		rte_spinlock_unlock(&egw.ctrl_lock);
		return;
	}
	egw_ip_stage_ctx_stats(&s);
	fprintf(f,
		"{\"available\": true,\n    \"data_path\": {\"forwarded\": %" PRIu64
		", \"echo_replies\": %" PRIu64 ", \"icmp_errors\": %" PRIu64
		", \"icmp_ratelimited\": %" PRIu64 ", \"fragments\": %" PRIu64
		", \"local\": %" PRIu64 ", \"punted\": %" PRIu64 ", \"nd\": %" PRIu64
		"},\n    \"control\": {",
		s.forwarded, s.echo_replies, s.icmp_errors, s.icmp_ratelimited, s.fragments,
		s.local, s.punted, s.nd);
	n = egw_ip_ctrl_counters(names, values, RTE_DIM(names));
	for (i = 0; i < n; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", names[i], values[i]);
	fprintf(f, "},\n    \"drops\": {");
	egw_ip_stage_drops(drop);
	for (i = 0; i < EGW_IP_DROP_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", egw_ip_drop_name(i), drop[i]);
	fprintf(f, "},\n    \"routes\": {\"ipv4\": {");
	egw_ip_route_count(count);
	for (t = 0; t < EGW_IP_RT_MAX; t++)
		fprintf(f, "%s\"%s\": %u", t ? ", " : "", egw_ip_route_type_name(t), count[0][t]);
	fprintf(f, "}, \"ipv6\": {");
	for (t = 0; t < EGW_IP_RT_MAX; t++)
		fprintf(f, "%s\"%s\": %u", t ? ", " : "", egw_ip_route_type_name(t), count[1][t]);
	fprintf(f, "}},\n    \"addresses\": [");
	egw_ip_addr_walk(json_addr_f, &j);
	fprintf(f, "],\n    \"exception\": ");
	egw_exception_json(f);
	fprintf(f, ",\n    \"neighbours\": [");
	j.first = true;
	egw_ip_neigh_walk(json_neigh_f, &j);
	fprintf(f, "%s]}", j.first ? "" : "\n    ");
	rte_spinlock_unlock(&egw.ctrl_lock);
}

void
egw_ip_stage_show_config(FILE *f)
{
	struct egw_ip_mem m;

	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.ip) {
		fprintf(f, "  ip: not available\n");
	} else {
		egw_ip_mem(&m);
		fprintf(f,
			"  ip: %u IPv4 and %u IPv6 prefixes, %u next hops; FIB memory %zu MiB "
			"(IPv4) + %zu MiB (IPv6); IPv6 lookup %s\n",
			m.routes4, m.routes6, m.nh, m.fib4_bytes >> 20, m.fib6_bytes >> 20,
			m.fib6_avx512 ? "AVX-512" : "scalar");
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}
