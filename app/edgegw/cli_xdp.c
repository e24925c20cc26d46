/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `show xdp` and edgegw's side of lib/xdp (control path): a port on
 * net_af_xdp with edgegw's steering program (xdp_prog=egw_xdp.bpf.o) is
 * checked before the PMD loads it and taken over once started; the command
 * hooks (port roles, addresses, routes, ESP SAs, PPPoE pools, rxtokens
 * consumers) keep its maps in step. A hook that cannot update a map returns the map's message;
 * the command then undoes what it changed and fails, so that edgegw's state
 * and the maps agree.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <rte_dev.h>
#include <rte_devargs.h>

#include "cli.h"
#include "egw.h"
#include "egw_rxtok.h"
#include "egw_xdp.h"

#define AF_XDP_DRIVER "net_af_xdp"

static bool
is_af_xdp(const struct egw_port *p)
{
	return strcmp(p->driver, AF_XDP_DRIVER) == 0;
}

/* The xdp_prog= devarg of a port, or "" (net_af_xdp's default program). */
static void
xdp_prog_arg(uint16_t pid, char *out, size_t len)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	const char *s, *e;

	out[0] = '\0';
	if (rte_eth_dev_info_get(pid, &info) != 0 || info.device == NULL)
		return;
	da = rte_dev_devargs(info.device);
	if (da == NULL || da->args == NULL)
		return;
	for (s = da->args; (s = strstr(s, "xdp_prog=")) != NULL; s++)
		if (s == da->args || s[-1] == ',')
			break;
	if (s == NULL)
		return;
	s += strlen("xdp_prog=");
	e = strchr(s, ',');
	snprintf(out, len, "%.*s", (int)(e != NULL ? (size_t)(e - s) : strlen(s)), s);
}

int
egw_xdp_port_preflight(uint16_t pid, const char *driver)
{
	char path[512], err[512];
	int rc;

	if (strcmp(driver, AF_XDP_DRIVER) != 0)
		return 0;
	xdp_prog_arg(pid, path, sizeof(path));
	if (path[0] == '\0')
		return 0;
	rc = egw_xdp_verify(path, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "error: port %u: %s\n", pid, err);
	return rc;
}

int
egw_xdp_port_started(uint16_t pid)
{
	struct egw_port *p = &egw.ports[pid];
	struct rte_eth_dev_info info;
	char path[512], err[512];
	int rc;

	if (!is_af_xdp(p))
		return 0;
	xdp_prog_arg(pid, path, sizeof(path));
	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0 || info.if_index == 0) {
		fprintf(stderr, "error: port %u (%s): no interface index\n", pid, p->name);
		return rc != 0 ? rc : -ENODEV;
	}
	if (path[0] == '\0') {
		printf("port %u (%s): net_af_xdp with its default XDP program: every frame of "
		       "its queues goes to edgegw, none to the kernel (xdp_prog=egw_xdp.bpf.o "
		       "shares the interface)\n",
		       pid, p->name);
		return 0;
	}
	rc = egw_xdp_port_open(pid, info.if_index, p->role == EGW_ROLE_ACCESS, err, sizeof(err));
	if (rc < 0) {
		/* fail closed: a program we cannot steer would keep edgegw's
		 * frames from it, or hand the kernel's to it */
		fprintf(stderr, "error: port %u (%s): %s\n", pid, p->name, err);
		return rc;
	}
	printf("port %u (%s): XDP steering program attached; edgegw takes only its frames\n", pid,
	       p->name);
	if (egw_xdp_port_generic(pid))
		fprintf(stderr,
			"warning: port %u (%s): the interface has no native XDP: generic (SKB) "
			"mode, each frame gets an skb before the program runs and AF_XDP copies "
			"edgegw's (see docs/afxdp.md for the cost)\n",
			pid, p->name);
	return 0;
}

void
egw_xdp_port_stopped(uint16_t pid)
{
	egw_xdp_port_close(pid);
}

void
egw_xdp_hook_role(uint16_t port, enum egw_port_role role)
{
	int rc;

	if (!egw_xdp_port_active(port))
		return;
	/* an ARRAY map of one entry: an update fails only without BPF */
	rc = egw_xdp_set_access(port, role == EGW_ROLE_ACCESS);
	if (rc < 0)
		egw_cli_fail("xdp: port %u: egw_cfg: %s", port, strerror(-rc));
}

int
egw_xdp_hook_addr(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, bool add, char *err,
		  size_t errlen)
{
	if (!egw_xdp_any_active())
		return 0;
	return egw_xdp_own(port, vlan, a->family, a->a, add, err, errlen);
}

int
egw_xdp_hook_route(const struct egw_ip_addr *pfx, uint8_t len, bool add, char *err, size_t errlen)
{
	if (!egw_xdp_any_active())
		return 0;
	return egw_xdp_route(pfx->family, pfx->a, len, add, err, errlen);
}

int
egw_xdp_hook_batch(bool begin)
{
	return egw_xdp_batch(begin);
}

int
egw_xdp_hook_esp_sa(const struct egw_esp_sa_conf *c, bool add, char *err, size_t errlen)
{
	uint16_t port;
	int rc;

	/* inbound tunnel SAs name the local tunnel address; transport SAs go
	 * to edgegw's own addresses, steered whole */
	if (!egw_xdp_any_active() || c->dir != EGW_ESP_DIR_IN || c->mode != EGW_ESP_MODE_TUNNEL ||
	    c->tun_dst.family == 0)
		return 0;
	rc = egw_xdp_addr(EGW_XDP_ADDR_ESP, c->tun_dst.family, c->tun_dst.a, add, err, errlen);
	port = c->natt_dport != 0 ? c->natt_dport : EGW_XDP_NATT_PORT;
	if (rc < 0 || !c->natt || port == EGW_XDP_NATT_PORT)
		return rc;
	/* its own ESP-in-UDP port: both or neither */
	rc = egw_xdp_natt(c->tun_dst.family, c->tun_dst.a, port, add, err, errlen);
	if (rc < 0 && add) {
		char e2[256];

		egw_xdp_addr(EGW_XDP_ADDR_ESP, c->tun_dst.family, c->tun_dst.a, false, e2,
			     sizeof(e2));
	}
	return rc;
}

int
egw_xdp_hook_pool(const char *prefix, bool add, char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	uint8_t a[16];
	int family, len;

	if (!egw_xdp_any_active())
		return 0;
	snprintf(buf, sizeof(buf), "%s", prefix);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return 0;
	*slash = '\0';
	len = atoi(slash + 1);
	family = strchr(buf, ':') != NULL ? AF_INET6 : AF_INET;
	if (inet_pton(family, buf, a) != 1) {
		snprintf(err, errlen, "pool %s: not a prefix", prefix);
		return -EINVAL;
	}
	return egw_xdp_pool(family, a, (uint8_t)len, add, err, errlen);
}

/* which of a session's own prefixes this hook put in the route maps
 * (bit 0: its /32, bit 1: its /64), by session id */
static uint8_t sess_steered[UINT16_MAX + 1];

int
egw_xdp_hook_session(uint16_t sid, int family, const uint8_t *a, uint8_t len, bool add, char *err,
		     size_t errlen)
{
	uint8_t bit = family == AF_INET ? 1 : 2;
	int rc;

	if (!add) {
		if (!(sess_steered[sid] & bit))
			return 0;
		sess_steered[sid] &= (uint8_t)~bit;
		return egw_xdp_route(family, a, len, false, err, errlen);
	}
	/* inside a steered pool: steered already */
	if (!egw_xdp_any_active() || egw_xdp_pool_holds(family, a))
		return 0;
	/* a fixed address (RADIUS Framed-IP-Address, a local user's): its
	 * downstream frames on a port shared with the kernel must reach
	 * edgegw as a pool's do, so it is a steered route while the session
	 * lasts (the kernel's own addresses stay the kernel's) */
	rc = egw_xdp_route(family, a, len, true, err, errlen);
	if (rc == 0)
		sess_steered[sid] |= bit;
	return rc;
}

/* consumers by name, with the key they added (their conf is not kept by
 * lib/rxtokens in a form we can read back at deletion) */
#define XDP_MAX_FLOWS EGW_XDP_MAX_ADDRS
static struct {
	char name[64];
	struct egw_xdp_flow_key k;
} flows[XDP_MAX_FLOWS];

int
egw_xdp_hook_rxtok(const char *name, const struct egw_rxtok_consumer_conf *c, bool add, char *err,
		   size_t errlen)
{
	struct egw_xdp_flow_key k;
	unsigned int i, free_slot = XDP_MAX_FLOWS;
	int rc;

	if (!egw_xdp_any_active())
		return 0;
	for (i = 0; i < XDP_MAX_FLOWS; i++) {
		if (flows[i].name[0] != '\0' && strcmp(flows[i].name, name) == 0)
			break;
		if (flows[i].name[0] == '\0' && free_slot == XDP_MAX_FLOWS)
			free_slot = i;
	}
	if (!add) {
		if (i == XDP_MAX_FLOWS)
			return 0;
		rc = egw_xdp_flow(&flows[i].k, false, err, errlen);
		flows[i].name[0] = '\0';
		return rc;
	}
	memset(&k, 0, sizeof(k));
	switch (c->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT:
		k.kind = EGW_XDP_FLOW_UDP_DPORT;
		k.port = htons(c->udp_dport);
		break;
	case EGW_RXTOK_MATCH_DST4:
		k.kind = EGW_XDP_FLOW_DST4;
		memcpy(k.a, c->dst, 4);
		break;
	case EGW_RXTOK_MATCH_DST6:
		k.kind = EGW_XDP_FLOW_DST6;
		memcpy(k.a, c->dst, 16);
		break;
	default: return 0; /* PPPoE sessions: steered with PPPoE on access ports */
	}
	if (free_slot == XDP_MAX_FLOWS) {
		snprintf(err, errlen, "more than %u consumer flows", XDP_MAX_FLOWS);
		return -E2BIG;
	}
	rc = egw_xdp_flow(&k, true, err, errlen);
	if (rc == 0) {
		snprintf(flows[free_slot].name, sizeof(flows[free_slot].name), "%s", name);
		flows[free_slot].k = k;
	}
	return rc;
}

/* ---- show xdp -------------------------------------------------------------- */

struct xdp_res {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
};

static void
cmd_show_xdp(void *pr __rte_unused, struct cmdline *cl __rte_unused, void *data __rte_unused)
{
	egw_xdp_show(stdout);
}

static cmdline_parse_token_string_t t_show0 = TOKEN_STRING_INITIALIZER(struct xdp_res, w0, "show");
static cmdline_parse_token_string_t t_xdp1 = TOKEN_STRING_INITIALIZER(struct xdp_res, w1, "xdp");

cmdline_parse_inst_t egw_cli_show_xdp = {
	.f = cmd_show_xdp,
	.help_str = "show xdp",
	.tokens = {(void *)&t_show0, (void *)&t_xdp1, NULL},
};
