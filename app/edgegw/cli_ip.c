/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IP routing commands (lib/ip):
 *   ip address add|del <addr>/<len> port <N> [vlan <id>]
 *   ip route add|del <prefix> via <addr> [port <N>] [via <addr> [port <N>]]...
 *   ip route add|del <prefix> dev <N> | blackhole | unreachable
 *   ip route load <file>
 *   ip neigh add <addr> <mac> port <N> [vlan <id>]
 *   ip neigh del <addr> port <N> [vlan <id>]
 *   ip exception add port <N> [name <ifname>] | del port <N>
 *   ip port <N> mtu <bytes>|default
 *   ip icmp ratelimit <pps> <burst>
 *   show ip address | route [<prefix>|<addr>|summary] | neigh | stats
 * Each checks its words before it changes anything; the library checks the
 * rest and changes nothing when it refuses. They run under egw.ctrl_lock,
 * as the control path does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>

#include "cli.h"
#include "fwd.h"

#define IP_MAX_WORDS (4 + 3 * EGW_IP_ECMP_MAX)

struct ip_args {
	int n;
	char *w[IP_MAX_WORDS];
};

/* An address, or with want_len an address/len (len set to the host length
 * when absent and !need_len). */
static int
parse_addr(const char *s, struct egw_ip_addr *a, uint8_t *len, bool need_len, char *err,
	   size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	uint64_t l;

	memset(a, 0, sizeof(*a));
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "'%s': too long for an address", s);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	if (len == NULL && slash != NULL) {
		snprintf(err, errlen, "'%s': an address, not a prefix", s);
		return -EINVAL;
	}
	a->family = strchr(buf, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(a->family, buf, a->a) != 1) {
		snprintf(err, errlen, "'%s': not an IPv%c address", buf,
			 a->family == AF_INET ? '4' : '6');
		return -EINVAL;
	}
	if (len == NULL)
		return 0;
	if (slash == NULL) {
		if (need_len) {
			snprintf(err, errlen, "'%s': a prefix length is needed (addr/len)", s);
			return -EINVAL;
		}
		*len = a->family == AF_INET ? 32 : 128;
		return 0;
	}
	if (egw_parse_u64(slash, 0, a->family == AF_INET ? 32 : 128, &l) < 0) {
		snprintf(err, errlen, "'%s': prefix length 0..%u", s,
			 a->family == AF_INET ? 32 : 128);
		return -EINVAL;
	}
	*len = (uint8_t)l;
	return 0;
}

static int
parse_port(const char *s, uint16_t *port, char *err, size_t errlen)
{
	char e[128];

	if (egw_port_parse(s, port, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s", e);
		return -EINVAL;
	}
	return 0;
}

static int
parse_vlan(const char *s, uint16_t *vlan, char *err, size_t errlen)
{
	uint64_t v;

	if (egw_parse_u64(s, 1, 4094, &v) < 0) {
		snprintf(err, errlen, "vlan '%s': 1..4094", s);
		return -EINVAL;
	}
	*vlan = (uint16_t)v;
	return 0;
}

/* "port <N> [vlan <id>]" at w[i..]. */
static int
parse_port_vlan(struct ip_args *a, int i, uint16_t *port, uint16_t *vlan, char *err, size_t errlen)
{
	*vlan = 0;
	if (i + 1 >= a->n || strcmp(a->w[i], "port") != 0) {
		snprintf(err, errlen, "port <N> is needed");
		return -EINVAL;
	}
	if (parse_port(a->w[i + 1], port, err, errlen) < 0)
		return -EINVAL;
	i += 2;
	if (i == a->n)
		return 0;
	if (i + 2 != a->n || strcmp(a->w[i], "vlan") != 0) {
		snprintf(err, errlen, "'%s': only vlan <id> may follow the port", a->w[i]);
		return -EINVAL;
	}
	return parse_vlan(a->w[i + 1], vlan, err, errlen);
}

static const char *
errno_text(int rc)
{
	switch (rc) {
	case -EEXIST: return "exists";
	case -ENOENT: return "no such entry";
	case -ENOSPC: return "table full";
	case -EBUSY: return "in use";
	case -EPERM: return "made by an address: delete the address instead";
	default: return strerror(-rc);
	}
}

static void
address(struct ip_args *a)
{
	struct egw_ip_addr ad;
	uint16_t port, vlan;
	char err[256];
	uint8_t len;
	bool add;
	int rc;

	if (a->n < 5 || (strcmp(a->w[1], "add") != 0 && strcmp(a->w[1], "del") != 0)) {
		egw_cli_fail("usage: ip address add|del <addr>/<len> port <N> [vlan <id>]");
		return;
	}
	add = strcmp(a->w[1], "add") == 0;
	if (parse_addr(a->w[2], &ad, &len, true, err, sizeof(err)) < 0 ||
	    parse_port_vlan(a, 3, &port, &vlan, err, sizeof(err)) < 0) {
		egw_cli_fail("ip address %s: %s", a->w[1], err);
		return;
	}
	rc = add ? egw_ip_addr_add(port, vlan, &ad, len) : egw_ip_addr_del(port, vlan, &ad, len);
	/* the steering map next: refused (full), the address goes again and
	 * nothing has changed but a gratuitous ARP or NA sent */
	if (rc == 0 && add && egw_xdp_hook_addr(port, vlan, &ad, true, err, sizeof(err)) < 0) {
		egw_ip_addr_del(port, vlan, &ad, len);
		egw_cli_fail("ip address add %s: %s: the address was not added", a->w[2], err);
		return;
	}
	if (rc == 0 && vlan == 0)
		egw_exception_addr(port, &ad, len, add);
	/* ESP to an address of edgegw's is edgegw's to decrypt (transport mode) */
	if (rc == 0)
		egw_esp_stage_local_addr(&ad, add);
	/* a deletion completes; a map entry that cannot follow is reported */
	if (rc == 0 && !add && egw_xdp_hook_addr(port, vlan, &ad, false, err, sizeof(err)) < 0) {
		egw_cli_fail("ip address del %s: deleted, but %s", a->w[2], err);
		return;
	}
	if (rc == -EINVAL)
		egw_cli_fail("ip address %s %s port %u: not a unicast address, a link-local one "
			     "(edgegw makes its own), or port %u is an access port",
			     a->w[1], a->w[2], port, port);
	else if (rc == -EEXIST)
		egw_cli_fail("ip address add %s: the address exists, or a route of its prefix "
			     "(delete that first)",
			     a->w[2]);
	else if (rc < 0)
		egw_cli_fail("ip address %s %s: %s", a->w[1], a->w[2], errno_text(rc));
	else
		printf("ip: address %s %s port %u\n", a->w[2], add ? "added" : "deleted", port);
}

/* Parse the words of a route after the prefix (w[first..]) and add it. */
static int
route_add_words(const struct egw_ip_addr *pfx, uint8_t len, char **w, int n, char *err,
		size_t errlen)
{
	struct egw_ip_path paths[EGW_IP_ECMP_MAX];
	enum egw_ip_route_type type;
	unsigned int np = 0;
	int i = 0, rc;

	if (n == 1 && strcmp(w[0], "blackhole") == 0) {
		type = EGW_IP_RT_BLACKHOLE;
	} else if (n == 1 && strcmp(w[0], "unreachable") == 0) {
		type = EGW_IP_RT_UNREACH;
	} else if (n == 2 && strcmp(w[0], "dev") == 0) {
		type = EGW_IP_RT_DEV;
		memset(&paths[0], 0, sizeof(paths[0]));
		if (parse_port(w[1], &paths[0].port, err, errlen) < 0)
			return -EINVAL;
		np = 1;
	} else if (n >= 2 && strcmp(w[0], "via") == 0) {
		type = EGW_IP_RT_VIA;
		while (i < n) {
			struct egw_ip_path *p = &paths[np];

			if (strcmp(w[i], "via") != 0 || i + 1 >= n) {
				snprintf(err, errlen, "'%s': expected via <addr> [port <N>]", w[i]);
				return -EINVAL;
			}
			if (np == EGW_IP_ECMP_MAX) {
				snprintf(err, errlen, "more than %u paths", EGW_IP_ECMP_MAX);
				return -EINVAL;
			}
			memset(p, 0, sizeof(*p));
			if (parse_addr(w[i + 1], &p->gw, NULL, false, err, errlen) < 0)
				return -EINVAL;
			p->port = UINT16_MAX;
			i += 2;
			if (i + 1 < n && strcmp(w[i], "port") == 0) {
				if (parse_port(w[i + 1], &p->port, err, errlen) < 0)
					return -EINVAL;
				i += 2;
			}
			np++;
		}
	} else {
		snprintf(err, errlen,
			 "expected via <addr> [port <N>]..., dev <N>, blackhole or "
			 "unreachable");
		return -EINVAL;
	}
	rc = egw_ip_route_add(pfx, len, type, paths, np, err, errlen);
	if (rc < 0)
		return rc;
	/* steered to edgegw on a NIC shared with the kernel: refused (map
	 * full), the route goes again */
	rc = egw_xdp_hook_route(pfx, len, true, err, errlen);
	if (rc < 0) {
		size_t l = strlen(err);

		egw_ip_route_del(pfx, len);
		snprintf(err + l, errlen - l, ": the route was not added");
		return rc;
	}
	return 0;
}

/* Delete a route and its steering entry. */
static int
route_del(const struct egw_ip_addr *pfx, uint8_t len, char *err, size_t errlen)
{
	int rc = egw_ip_route_del(pfx, len);

	if (rc < 0)
		return rc;
	return egw_xdp_hook_route(pfx, len, false, err, errlen);
}

static int
parse_prefix(const char *s, struct egw_ip_addr *pfx, uint8_t *len, char *err, size_t errlen)
{
	/* "default" as iproute2 says it */
	if (strcmp(s, "default") == 0 || strcmp(s, "default4") == 0) {
		memset(pfx, 0, sizeof(*pfx));
		pfx->family = AF_INET;
		*len = 0;
		return 0;
	}
	if (strcmp(s, "default6") == 0) {
		memset(pfx, 0, sizeof(*pfx));
		pfx->family = AF_INET6;
		*len = 0;
		return 0;
	}
	return parse_addr(s, pfx, len, false, err, errlen);
}

/* ip route load <file>: all lines or none. */
static void
route_load(const char *path)
{
	struct entry {
		struct egw_ip_addr p;
		uint8_t len;
	} *added = NULL;
	size_t nadded = 0, cap = 0;
	char line[1024], err[256];
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		egw_cli_fail("ip route load %s: %s", path, strerror(errno));
		return;
	}
	/* the steering pre-check is built once, at the end */
	egw_xdp_hook_batch(true);
	while (fgets(line, sizeof(line), f) != NULL) {
		struct ip_args a;
		struct egw_ip_addr pfx;
		uint8_t len;
		char *nl = strchr(line, '\n');

		lineno++;
		if (nl != NULL)
			*nl = '\0';
		else if (!feof(f)) {
			snprintf(err, sizeof(err), "line longer than %zu characters",
				 sizeof(line) - 2);
			goto bad;
		}
		a.n = egw_cli_split(line, a.w, IP_MAX_WORDS);
		if (a.n < 0) {
			snprintf(err, sizeof(err), "too many words");
			goto bad;
		}
		if (a.n == 0 || a.w[0][0] == '#')
			continue;
		if (parse_prefix(a.w[0], &pfx, &len, err, sizeof(err)) < 0 ||
		    route_add_words(&pfx, len, a.w + 1, a.n - 1, err, sizeof(err)) < 0)
			goto bad;
		if (nadded == cap) {
			size_t nc = cap == 0 ? 4096 : cap * 2;
			struct entry *x = realloc(added, nc * sizeof(*x));

			if (x == NULL) {
				route_del(&pfx, len, err, sizeof(err));
				snprintf(err, sizeof(err), "out of memory");
				goto bad;
			}
			added = x;
			cap = nc;
		}
		added[nadded].p = pfx;
		added[nadded].len = len;
		nadded++;
	}
	fclose(f);
	free(added);
	egw_xdp_hook_batch(false);
	printf("ip: %zu routes loaded from %s\n", nadded, path);
	return;
bad:
	fclose(f);
	/* changes nothing: the routes of the lines before go again */
	while (nadded-- > 0) {
		char e2[200];

		route_del(&added[nadded].p, added[nadded].len, e2, sizeof(e2));
	}
	free(added);
	egw_xdp_hook_batch(false);
	egw_cli_fail("ip route load %s:%u: %s (no route of the file was added)", path, lineno, err);
}

static void
route(struct ip_args *a)
{
	struct egw_ip_addr pfx;
	char err[256] = "";
	uint8_t len;
	int rc;

	if (a->n == 3 && strcmp(a->w[1], "load") == 0) {
		route_load(a->w[2]);
		return;
	}
	if (a->n < 3 || (strcmp(a->w[1], "add") != 0 && strcmp(a->w[1], "del") != 0)) {
		egw_cli_fail(
			"usage: ip route add|del <prefix> via <addr> [port <N>]... | dev <N> | "
			"blackhole | unreachable; ip route load <file>");
		return;
	}
	if (parse_prefix(a->w[2], &pfx, &len, err, sizeof(err)) < 0) {
		egw_cli_fail("ip route %s: %s", a->w[1], err);
		return;
	}
	if (strcmp(a->w[1], "del") == 0) {
		rc = route_del(&pfx, len, err, sizeof(err));
		if (rc < 0 && err[0] != '\0')
			egw_cli_fail("ip route del %s: deleted, but %s", a->w[2], err);
		else if (rc < 0)
			egw_cli_fail("ip route del %s: %s", a->w[2], errno_text(rc));
		else
			printf("ip: route %s deleted\n", a->w[2]);
		return;
	}
	rc = route_add_words(&pfx, len, a->w + 3, a->n - 3, err, sizeof(err));
	if (rc < 0)
		egw_cli_fail("ip route add %s: %s", a->w[2], err[0] ? err : errno_text(rc));
	else
		printf("ip: route %s added\n", a->w[2]);
}

static void
neigh(struct ip_args *a)
{
	struct egw_ip_addr ad;
	struct rte_ether_addr mac;
	uint16_t port, vlan;
	char err[160];
	bool add;
	int rc;

	add = a->n >= 2 && strcmp(a->w[1], "add") == 0;
	if (a->n < 5 || (!add && strcmp(a->w[1], "del") != 0) || (add && a->n < 6)) {
		egw_cli_fail("usage: ip neigh add <addr> <mac> port <N> [vlan <id>]; ip neigh del "
			     "<addr> port <N> [vlan <id>]");
		return;
	}
	if (parse_addr(a->w[2], &ad, NULL, false, err, sizeof(err)) < 0 ||
	    (add && rte_ether_unformat_addr(a->w[3], &mac) < 0 &&
	     snprintf(err, sizeof(err), "'%s': not a MAC address", a->w[3]) > 0) ||
	    parse_port_vlan(a, add ? 4 : 3, &port, &vlan, err, sizeof(err)) < 0) {
		egw_cli_fail("ip neigh %s: %s", a->w[1], err);
		return;
	}
	rc = add ? egw_ip_neigh_add(port, vlan, &ad, &mac) : egw_ip_neigh_del(port, vlan, &ad);
	if (rc == -EINVAL)
		egw_cli_fail("ip neigh %s %s: not a unicast address or MAC, edgegw's own address, "
			     "or port %u is not a routed port",
			     a->w[1], a->w[2], port);
	else if (rc < 0)
		egw_cli_fail("ip neigh %s %s: %s", a->w[1], a->w[2], errno_text(rc));
	else
		printf("ip: neighbour %s %s\n", a->w[2], add ? "added" : "deleted");
}

static void
exception(struct ip_args *a)
{
	char err[200];
	uint16_t port;
	bool add;
	int rc;

	add = a->n >= 2 && strcmp(a->w[1], "add") == 0;
	if ((a->n != 4 && a->n != 6) || (!add && strcmp(a->w[1], "del") != 0) ||
	    strcmp(a->w[2], "port") != 0 || (a->n == 6 && (!add || strcmp(a->w[4], "name") != 0))) {
		egw_cli_fail("usage: ip exception add port <N> [name <ifname>]; ip exception del "
			     "port <N>");
		return;
	}
	if (parse_port(a->w[3], &port, err, sizeof(err)) < 0) {
		egw_cli_fail("ip exception %s: %s", a->w[1], err);
		return;
	}
	rc = add ? egw_exception_add(port, a->n == 6 ? a->w[5] : NULL, err, sizeof(err))
		 : egw_exception_del(port, err, sizeof(err));
	if (rc < 0)
		egw_cli_fail("ip exception %s port %u: %s", a->w[1], port, err);
	else
		printf("ip: exception path of port %u %s\n", port, add ? "added" : "deleted");
}

static void
port_mtu(struct ip_args *a)
{
	char err[200];
	uint16_t port;
	uint64_t mtu;

	if (a->n != 4 || strcmp(a->w[2], "mtu") != 0) {
		egw_cli_fail("usage: ip port <N> mtu <bytes>|default");
		return;
	}
	if (parse_port(a->w[1], &port, err, sizeof(err)) < 0) {
		egw_cli_fail("ip port: %s", err);
		return;
	}
	if (strcmp(a->w[3], "default") == 0)
		mtu = 0;
	else if (egw_parse_u64(a->w[3], 1, UINT16_MAX, &mtu) < 0) {
		egw_cli_fail("ip port %u mtu: '%s' is not a number of bytes", port, a->w[3]);
		return;
	}
	if (egw_ip_stage_port_mtu(port, (uint16_t)mtu, err, sizeof(err)) < 0) {
		egw_cli_fail("ip port %u mtu: %s", port, err);
		return;
	}
	printf("ip: port %u IP MTU %u\n", port, egw_ip_stage_port_mtu_get(port));
}

static void
icmp(struct ip_args *a)
{
	uint64_t pps, burst;

	if (a->n != 4 || strcmp(a->w[1], "ratelimit") != 0 ||
	    egw_parse_u64(a->w[2], 1, 10000000, &pps) < 0 ||
	    egw_parse_u64(a->w[3], 1, 100000, &burst) < 0) {
		egw_cli_fail("usage: ip icmp ratelimit <pps 1..10000000> <burst 1..100000>");
		return;
	}
	egw_ip_icmp_ratelimit((uint32_t)pps, (uint32_t)burst);
	printf("ip: ICMP errors at most %" PRIu64 "/s per worker, burst %" PRIu64 "\n", pps, burst);
}

struct ip_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_multi_string_t rest;
};

static void
cmd_ip(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct ip_res *res = pr;
	char line[sizeof(res->rest)];
	struct ip_args a;

	snprintf(line, sizeof(line), "%s", res->rest);
	a.n = egw_cli_split(line, a.w, IP_MAX_WORDS);
	if (a.n <= 0) {
		egw_cli_fail("ip: address, route, neigh or icmp (help ip)");
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.ip)
		egw_cli_fail("ip: IP routing not available");
	else if (strcmp(a.w[0], "address") == 0 || strcmp(a.w[0], "addr") == 0)
		address(&a);
	else if (strcmp(a.w[0], "route") == 0)
		route(&a);
	else if (strcmp(a.w[0], "neigh") == 0)
		neigh(&a);
	else if (strcmp(a.w[0], "icmp") == 0)
		icmp(&a);
	else if (strcmp(a.w[0], "exception") == 0)
		exception(&a);
	else if (strcmp(a.w[0], "port") == 0)
		port_mtu(&a);
	else
		egw_cli_fail("ip: '%s': address, route, neigh, exception, port or icmp (help ip)",
			     a.w[0]);
	rte_spinlock_unlock(&egw.ctrl_lock);
}

/* ---- show ip ------------------------------------------------------------------ */

static int
show_addr(const struct egw_ip_addr_info *ai, void *arg __rte_unused)
{
	char s[INET6_ADDRSTRLEN];

	egw_ip_addr_str(&ai->addr, s, sizeof(s));
	printf("  port %-3u vlan %-4u %s/%u%s\n", ai->port, ai->vlan, s, ai->len,
	       ai->link_local ? " (link-local)" : "");
	return 0;
}

static void
route_print(const struct egw_ip_route_info *r)
{
	char s[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];
	unsigned int i;

	egw_ip_addr_str(&r->prefix, s, sizeof(s));
	printf("  %s/%u %s", s, r->len, egw_ip_route_type_name(r->type));
	if (r->type == EGW_IP_RT_VIA) {
		for (i = 0; i < r->n_paths; i++) {
			egw_ip_addr_str(&r->paths[i].gw, g, sizeof(g));
			printf("%s %s port %u", i ? " via" : "", g, r->paths[i].port);
			if (r->paths[i].vlan != 0)
				printf(" vlan %u", r->paths[i].vlan);
		}
	} else if (r->type == EGW_IP_RT_SUBSCRIBER) {
		printf(" session %u", r->session);
	} else if (r->n_paths != 0) {
		printf(" port %u", r->paths[0].port);
		if (r->paths[0].vlan != 0)
			printf(" vlan %u", r->paths[0].vlan);
	}
	printf("\n");
}

struct show_route_ctx {
	unsigned int n, max;
};

static int
show_route(const struct egw_ip_route_info *r, void *arg)
{
	struct show_route_ctx *c = arg;

	if (c->n++ >= c->max)
		return 1;
	route_print(r);
	return 0;
}

static int
show_neigh(const struct egw_ip_neigh_info *n, void *arg __rte_unused)
{
	char s[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

	egw_ip_addr_str(&n->addr, s, sizeof(s));
	if (n->state == EGW_IP_NS_INCOMPLETE || n->state == EGW_IP_NS_FAILED)
		snprintf(mac, sizeof(mac), "-");
	else
		rte_ether_format_addr(mac, sizeof(mac), &n->mac);
	printf("  %-39s port %-3u vlan %-4u %-17s %-10s held %u routes %u age %" PRIu64 " ms\n", s,
	       n->port, n->vlan, mac, egw_ip_neigh_state_name(n->state), n->held, n->refs,
	       n->age_ms);
	return 0;
}

static void
show_stats(void)
{
	const char *names[64];
	uint64_t values[64], drop[EGW_IP_DROP_MAX];
	struct egw_ip_ctx_stats s;
	unsigned int n, i;

	egw_ip_stage_ctx_stats(&s);
	printf("  data path: forwarded %" PRIu64 ", echo replies %" PRIu64 ", ICMP errors %" PRIu64
	       " (rate limited %" PRIu64 "), fragments %" PRIu64 ", to edgegw %" PRIu64
	       ", waiting for resolution %" PRIu64 ", ND to control %" PRIu64 "\n",
	       s.forwarded, s.echo_replies, s.icmp_errors, s.icmp_ratelimited, s.fragments, s.local,
	       s.punted, s.nd);
	printf("  drops (all ports and queues):\n");
	egw_ip_stage_drops(drop);
	for (i = 0; i < EGW_IP_DROP_MAX; i++)
		printf("    %-24s %-10" PRIu64 " %s\n", egw_ip_drop_name(i), drop[i],
		       egw_ip_drop_desc(i));
	printf("  control path (ARP, ND, resolution):\n");
	n = egw_ip_ctrl_counters(names, values, RTE_DIM(names));
	for (i = 0; i < n; i++)
		printf("    %-24s %" PRIu64 "\n", names[i], values[i]);
}

static void
show_summary(void)
{
	unsigned int c[2][EGW_IP_RT_MAX], t, f;
	struct egw_ip_mem m;

	egw_ip_route_count(c);
	egw_ip_mem(&m);
	for (f = 0; f < 2; f++) {
		printf("  IPv%c:", f == 0 ? '4' : '6');
		for (t = 0; t < EGW_IP_RT_MAX; t++)
			printf(" %s %u", egw_ip_route_type_name(t), c[f][t]);
		printf("; %u prefixes in the FIB\n", f == 0 ? m.routes4 : m.routes6);
	}
	printf("  next hops %u; FIB memory: IPv4 %zu MiB, IPv6 %zu MiB; next-hop table %zu KiB\n",
	       m.nh, m.fib4_bytes >> 20, m.fib6_bytes >> 20, m.nh_bytes >> 10);
	printf("  lookups: IPv4 DIR24_8 scalar (%s), IPv6 TRIE %s\n",
	       m.fib4_prefetch == 2 ? "layout confirmed: both levels prefetched, first-level next "
				      "hops read in place"
	       : m.fib4_prefetch == 1 ? "first level prefetched"
				      : "no prefetch: table layout not confirmed",
	       m.fib6_avx512 ? "AVX-512" : "scalar (no AVX-512, or a smaller EAL SIMD width)");
}

static void
cmd_show_ip(void *pr, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	struct ip_res *res = pr;
	char line[sizeof(res->rest)], err[160];
	struct ip_args a;

	snprintf(line, sizeof(line), "%s", res->rest);
	a.n = egw_cli_split(line, a.w, IP_MAX_WORDS);
	if (a.n <= 0) {
		egw_cli_fail("show ip: address, route [<prefix>|<addr>|summary], neigh or stats");
		return;
	}
	rte_spinlock_lock(&egw.ctrl_lock);
	if (!egw.ip) {
		egw_cli_fail("show ip: IP routing not available");
	} else if (a.n == 1 && (strcmp(a.w[0], "address") == 0 || strcmp(a.w[0], "addr") == 0)) {
		egw_ip_addr_walk(show_addr, NULL);
		egw_exception_show(stdout);
	} else if (strcmp(a.w[0], "route") == 0 && a.n == 1) {
		struct show_route_ctx c = {.max = 1000};

		egw_ip_route_walk(0, show_route, &c);
		if (c.n > c.max)
			printf("  ... (first %u shown; show ip route summary)\n", c.max);
	} else if (strcmp(a.w[0], "route") == 0 && a.n == 2 && strcmp(a.w[1], "summary") == 0) {
		show_summary();
	} else if (strcmp(a.w[0], "route") == 0 && a.n == 2) {
		struct egw_ip_addr ad;
		struct egw_ip_route_info r;
		uint8_t len;

		if (parse_prefix(a.w[1], &ad, &len, err, sizeof(err)) < 0)
			egw_cli_fail("show ip route: %s", err);
		else if (egw_ip_route_lookup(&ad, &r) < 0)
			printf("  %s: no route\n", a.w[1]);
		else
			route_print(&r);
	} else if (a.n == 1 && strcmp(a.w[0], "neigh") == 0) {
		egw_ip_neigh_walk(show_neigh, NULL);
	} else if (a.n == 1 && strcmp(a.w[0], "stats") == 0) {
		show_stats();
	} else {
		egw_cli_fail("show ip: '%s': address, route [<prefix>|<addr>|summary], neigh or "
			     "stats",
			     res->rest);
	}
	rte_spinlock_unlock(&egw.ctrl_lock);
}

int
egw_ip_cli_session_route(const char *prefix, bool add, char *err, size_t errlen)
{
	struct egw_ip_addr p;
	uint8_t len;

	if (!egw.ip)
		return 0;
	if (parse_addr(prefix, &p, &len, false, err, errlen) < 0)
		return -EINVAL;
	if (!add) {
		egw_ip_route_del(&p, len);
		return 0;
	}
	return egw_ip_route_add(&p, len, EGW_IP_RT_SESSION, NULL, 0, err, errlen);
}

static cmdline_parse_token_string_t t_ip0 = TOKEN_STRING_INITIALIZER(struct ip_res, w0, "ip");
static cmdline_parse_token_string_t t_show0 = TOKEN_STRING_INITIALIZER(struct ip_res, w0, "show");
static cmdline_parse_token_string_t t_ip1 = TOKEN_STRING_INITIALIZER(struct ip_res, w1, "ip");
static cmdline_parse_token_string_t t_rest =
	TOKEN_STRING_INITIALIZER(struct ip_res, rest, TOKEN_STRING_MULTI);

cmdline_parse_inst_t egw_cli_ip = {
	.f = cmd_ip,
	.help_str = "ip address|route|neigh|icmp ...: IP routing (help ip)",
	.tokens = {(void *)&t_ip0, (void *)&t_rest, NULL},
};

cmdline_parse_inst_t egw_cli_show_ip = {
	.f = cmd_show_ip,
	.help_str = "show ip address|route [<prefix>|summary]|neigh|stats",
	.tokens = {(void *)&t_show0, (void *)&t_ip1, (void *)&t_rest, NULL},
};
