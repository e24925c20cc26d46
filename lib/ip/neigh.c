/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: neighbours. ARP (RFC 826, RFC 5227 probes) and IPv6
 * neighbour discovery (RFC 4861): answering requests and solicitations for
 * edgegw's addresses, resolving next hops (INCOMPLETE -> REACHABLE -> STALE
 * -> DELAY -> PROBE, FAILED), aging, the bounded queue of packets waiting
 * for resolution, gratuitous ARP and unsolicited NA.
 *
 * Hostile input: an unsolicited reply or advertisement never creates an
 * entry (Linux arp_accept=0); a reply or advertisement about an address
 * nobody asked for changes nothing; ARP/ND input and the solicitations sent
 * are rate limited; the table has a size limit. Every frame is counted.
 */
/* rte_ipv6_udptcp_cksum_verify() is experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_arp.h>
#include <rte_hash.h>
#include <rte_icmp.h>
#include <rte_malloc.h>

#include "ip_private.h"

#define ND_NS 135
#define ND_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define NA_F_ROUTER 0x80
#define NA_F_SOLICITED 0x40
#define NA_F_OVERRIDE 0x20

struct neigh_key {
	uint16_t port;
	uint16_t vlan;
	uint8_t family;
	uint8_t pad[3];
	uint8_t a[16];
};

struct neigh {
	bool used;
	bool host_route; /* its /32 or /128 is in the FIB */
	uint8_t state;
	uint8_t nhold;
	uint32_t id; /* next-hop index */
	uint16_t port, vlan;
	struct egw_ip_addr a;
	struct rte_ether_addr mac;
	unsigned int probes;
	unsigned int refs; /* routes through it */
	uint64_t t_state, t_confirm, t_probe;
	struct rte_mbuf *hold[EGW_IP_HOLD_MAX];
};

static struct {
	struct rte_hash *h;
	struct neigh *tab;
	uint32_t *by_nh; /* next-hop index -> table index + 1 (0: none) */
	uint32_t max, count;
	struct egw_ip_neigh_conf conf;
	struct ip_tb solicit_tb, input_tb;
	uint64_t last_scan;
} nt;

static const struct egw_ip_neigh_conf conf_default = {
	.reachable_ms = 30000,
	.retrans_ms = 1000,
	.delay_ms = 5000,
	.gc_stale_ms = 60000,
	.failed_ms = 3000,
	.mcast_probes = 3,
	.ucast_probes = 3,
	.solicit_pps = 100,
	.input_pps = 1000,
};

static const char *const state_names[EGW_IP_NS_MAX] = {
	"incomplete", "reachable", "stale", "delay", "probe", "failed", "permanent",
};

const char *
egw_ip_neigh_state_name(unsigned int s)
{
	return s < EGW_IP_NS_MAX ? state_names[s] : "unknown";
}

void
egw_ip_neigh_conf_get(struct egw_ip_neigh_conf *c)
{
	*c = nt.conf;
}

int
egw_ip_neigh_conf_set(const struct egw_ip_neigh_conf *c)
{
	if (c == NULL || c->reachable_ms == 0 || c->retrans_ms == 0 || c->delay_ms == 0 ||
	    c->gc_stale_ms == 0 || c->failed_ms == 0 || c->mcast_probes == 0 ||
	    c->ucast_probes == 0 || c->solicit_pps == 0 || c->input_pps == 0)
		return -EINVAL;
	nt.conf = *c;
	return 0;
}

int
ip_neigh_ctl_init(const struct egw_ip_params *p)
{
	struct rte_hash_parameters hp;

	memset(&nt, 0, sizeof(nt));
	nt.conf = conf_default;
	nt.max = p->max_neigh;
	memset(&hp, 0, sizeof(hp));
	hp.name = "egw_ip_neigh";
	/* room to spare: a cuckoo hash can refuse a key before it is full */
	hp.entries = 2 * (nt.max < 8 ? 8 : nt.max);
	hp.key_len = sizeof(struct neigh_key);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = p->socket;
	nt.h = rte_hash_create(&hp);
	nt.tab = rte_zmalloc_socket("egw_ip_neigh", sizeof(nt.tab[0]) * nt.max, 0, p->socket);
	nt.by_nh =
		rte_zmalloc_socket("egw_ip_neigh_nh", sizeof(uint32_t) * p->max_nh, 0, p->socket);
	if (nt.h == NULL || nt.tab == NULL || nt.by_nh == NULL) {
		ip_neigh_ctl_fini();
		return -ENOMEM;
	}
	return 0;
}

static void
hold_free(struct neigh *n, uint64_t *counter)
{
	unsigned int i;

	for (i = 0; i < n->nhold; i++) {
		rte_pktmbuf_free(n->hold[i]);
		(*counter)++;
	}
	n->nhold = 0;
}

void
ip_neigh_ctl_fini(void)
{
	uint32_t i;

	if (nt.tab != NULL)
		for (i = 0; i < nt.max; i++)
			if (nt.tab[i].used)
				hold_free(&nt.tab[i], &ip_cs.held_dropped);
	rte_hash_free(nt.h);
	rte_free(nt.tab);
	rte_free(nt.by_nh);
	memset(&nt, 0, sizeof(nt));
}

static void
key_of(struct neigh_key *k, uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	memset(k, 0, sizeof(*k));
	k->port = port;
	k->vlan = vlan;
	k->family = a->family;
	memcpy(k->a, a->a, a->family == AF_INET ? 4 : 16);
}

static struct neigh *
neigh_find(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	struct neigh_key k;
	void *data;

	key_of(&k, port, vlan, a);
	if (rte_hash_lookup_data(nt.h, &k, &data) < 0)
		return NULL;
	return &nt.tab[(uintptr_t)data];
}

static struct neigh *
neigh_of_nh(uint32_t id)
{
	uint32_t i = id < ip_dp.max_nh ? nt.by_nh[id] : 0;

	return i == 0 ? NULL : &nt.tab[i - 1];
}

/* Publish what the data path should do with the neighbour's next hop. */
static int
neigh_publish(struct neigh *n)
{
	struct ip_nh rec;
	bool valid = n->state != EGW_IP_NS_INCOMPLETE && n->state != EGW_IP_NS_FAILED;

	memset(&rec, 0, sizeof(rec));
	rec.kind = NH_NEIGH;
	rec.flags = valid ? NH_F_VALID : n->state == EGW_IP_NS_FAILED ? NH_F_FAILED : 0;
	ip_nh_hdr(&rec, valid ? &n->mac : NULL, n->port, n->vlan, n->a.family == AF_INET6);
	return ip_nh_publish(n->id, &rec);
}

static void
set_state(struct neigh *n, uint8_t s)
{
	n->state = s;
	n->t_state = ip_now_ms();
	n->probes = 0;
}

static void
neigh_remove(struct neigh *n)
{
	struct neigh_key k;

	if (n->host_route)
		ip_host_route_del(&n->a, n->id);
	hold_free(n, &ip_cs.held_dropped);
	key_of(&k, n->port, n->vlan, &n->a);
	rte_hash_del_key(nt.h, &k);
	nt.by_nh[n->id] = 0;
	ip_nh_release(n->id);
	n->used = false;
	nt.count--;
	ip_cs.neigh_removed++;
}

static struct neigh *
neigh_create(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	struct neigh_key k;
	struct neigh *n = NULL;
	uint32_t i;
	int id;

	if (nt.count >= nt.max) {
		ip_cs.neigh_table_full++;
		return NULL;
	}
	for (i = 0; i < nt.max; i++) {
		if (!nt.tab[i].used) {
			n = &nt.tab[i];
			break;
		}
	}
	if (n == NULL) {
		ip_cs.neigh_table_full++;
		return NULL;
	}
	id = ip_nh_alloc();
	if (id < 0) {
		ip_cs.neigh_table_full++;
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->id = (uint32_t)id;
	n->port = port;
	n->vlan = vlan;
	n->a = *a;
	set_state(n, EGW_IP_NS_INCOMPLETE);
	key_of(&k, port, vlan, a);
	if (rte_hash_add_key_data(nt.h, &k, (void *)(uintptr_t)i) < 0 || neigh_publish(n) < 0) {
		rte_hash_del_key(nt.h, &k);
		ip_nh_release(n->id);
		ip_cs.ctl_nomem++;
		return NULL;
	}
	n->used = true;
	nt.by_nh[n->id] = i + 1;
	nt.count++;
	ip_cs.neigh_created++;
	return n;
}

int
ip_neigh_get(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, bool host_route)
{
	struct neigh *n = neigh_find(port, vlan, a);

	if (n == NULL)
		n = neigh_create(port, vlan, a);
	if (n == NULL)
		return -ENOSPC;
	/* a link-local address is per link: no host route in the one FIB */
	if (host_route && !(a->family == AF_INET6 && a->a[0] == 0xfe && (a->a[1] & 0xc0) == 0x80)) {
		if (!n->host_route && ip_host_route_add(&n->a, n->id) == 0)
			n->host_route = true;
	} else {
		n->refs++;
	}
	return (int)n->id;
}

void
ip_neigh_put(uint32_t id)
{
	struct neigh *n = neigh_of_nh(id);

	if (n == NULL)
		return;
	if (n->refs > 0)
		n->refs--;
	if (n->refs == 0 && !n->host_route && n->state != EGW_IP_NS_PERMANENT)
		neigh_remove(n);
}

unsigned int
ip_neigh_count(void)
{
	return nt.count;
}

unsigned int
ip_neigh_port_count(uint16_t port)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; nt.tab != NULL && i < nt.max; i++)
		if (nt.tab[i].used && nt.tab[i].port == port)
			n++;
	return n;
}

void
ip_neigh_host_route_lost(uint32_t id)
{
	struct neigh *n = neigh_of_nh(id);

	if (n != NULL)
		n->host_route = false;
}

/* Is a on a network of (port, vlan): a connected prefix there (or a
 * neighbour already there), or IPv6 link-local? Only such senders are
 * learnt: a host route for any other would hijack its traffic. */
static bool
on_link(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	const struct ip_nh *nh;
	uint64_t v;
	uint16_t nv;

	if (a->family == AF_INET6 && a->a[0] == 0xfe && (a->a[1] & 0xc0) == 0x80)
		return true;
	v = ip_fib_lookup(a);
	if (v & FIB_GROUP)
		return false;
	nh = ip_nh_get((uint32_t)v);
	if (nh == NULL || nh->port != port)
		return false;
	if (nh->kind == NH_NEIGH) {
		/* its own host route, not a gateway's route */
		const struct neigh *n = neigh_of_nh((uint32_t)v);

		if (n == NULL || memcmp(n->a.a, a->a, 16) != 0)
			return false;
	} else if (nh->kind != NH_GLEAN) {
		return false;
	}
	nv = ip_nh_vlan(nh);
	return nv == vlan;
}

void
ip_neigh_host_route_restore(const struct egw_ip_addr *a)
{
	uint32_t i;

	for (i = 0; nt.tab != NULL && i < nt.max; i++) {
		struct neigh *n = &nt.tab[i];

		if (n->used && !n->host_route && n->a.family == a->family &&
		    memcmp(n->a.a, a->a, 16) == 0 && on_link(n->port, n->vlan, &n->a) &&
		    ip_host_route_add(&n->a, n->id) == 0) {
			n->host_route = true;
			return;
		}
	}
}

static bool
uses_pool(const struct rte_mbuf *m, const struct rte_mempool *mp)
{
	for (; m != NULL; m = m->next)
		if (m->pool == mp)
			return true;
	return false;
}

void
ip_neigh_drop_pool(const struct rte_mempool *mp)
{
	uint32_t i;
	unsigned int k, j;

	for (i = 0; nt.tab != NULL && i < nt.max; i++) {
		struct neigh *n = &nt.tab[i];

		if (!n->used)
			continue;
		for (k = 0, j = 0; k < n->nhold; k++) {
			if (uses_pool(n->hold[k], mp)) {
				rte_pktmbuf_free(n->hold[k]);
				ip_cs.held_dropped++;
			} else {
				n->hold[j++] = n->hold[k];
			}
		}
		n->nhold = (uint8_t)j;
	}
}

void
ip_neigh_info(uint32_t id, struct egw_ip_path *p)
{
	struct neigh *n = neigh_of_nh(id);

	memset(p, 0, sizeof(*p));
	if (n == NULL)
		return;
	p->gw = n->a;
	p->port = n->port;
	p->vlan = n->vlan;
}

/* ---- frames --------------------------------------------------------------- */

/* Start a frame on (port, vlan): MAC header, returns the L3 start. */
static uint8_t *
frame_start(struct rte_mbuf **mp, uint16_t port, uint16_t vlan, const struct rte_ether_addr *dst,
	    uint16_t type, uint16_t l3len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(ip_ctl_pool());
	uint16_t l2 = vlan != 0 ? RTE_ETHER_HDR_LEN + 4 : RTE_ETHER_HDR_LEN;
	uint16_t len = (uint16_t)(l2 + l3len);
	uint8_t *d;
	rte_be16_t x;

	*mp = NULL;
	if (m == NULL) {
		ip_cs.ctl_nomem++;
		return NULL;
	}
	if (len < RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN)
		len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
	d = (uint8_t *)rte_pktmbuf_append(m, len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		ip_cs.ctl_nomem++;
		return NULL;
	}
	memset(d, 0, len);
	memcpy(d, dst, 6);
	memcpy(d + 6, ip_port_mac(port), 6);
	if (vlan != 0) {
		x = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		memcpy(d + 12, &x, 2);
		x = rte_cpu_to_be_16(vlan);
		memcpy(d + 14, &x, 2);
	}
	x = rte_cpu_to_be_16(type);
	memcpy(d + l2 - 2, &x, 2);
	m->l2_len = l2;
	*mp = m;
	return d + l2;
}

static void
arp_send(uint16_t port, uint16_t vlan, uint16_t op, const struct rte_ether_addr *eth_dst,
	 const struct rte_ether_addr *tha, rte_be32_t sip, rte_be32_t tip)
{
	struct rte_mbuf *m;
	struct rte_arp_hdr *h;

	h = (struct rte_arp_hdr *)frame_start(&m, port, vlan, eth_dst, RTE_ETHER_TYPE_ARP,
					      sizeof(*h));
	if (h == NULL)
		return;
	h->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	h->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	h->arp_hlen = RTE_ETHER_ADDR_LEN;
	h->arp_plen = 4;
	h->arp_opcode = rte_cpu_to_be_16(op);
	h->arp_data.arp_sha = *ip_port_mac(port);
	h->arp_data.arp_sip = sip;
	if (tha != NULL)
		h->arp_data.arp_tha = *tha;
	h->arp_data.arp_tip = tip;
	ip_cs.arp_sent++;
	ip_ctl_tx(port, m);
}

/* An ICMPv6 ND message: hdr (type, code, 4 bytes of flags), target, one
 * link-layer address option. */
static void
nd_send(uint16_t port, uint16_t vlan, uint8_t type, uint8_t flags, const uint8_t src[16],
	const uint8_t dst[16], const struct rte_ether_addr *eth_dst, const uint8_t target[16],
	uint8_t opt)
{
	const uint16_t plen = 8 + 16 + 8;
	struct rte_ipv6_hdr *ip;
	struct rte_mbuf *m;
	uint8_t *l4;

	ip = (struct rte_ipv6_hdr *)frame_start(&m, port, vlan, eth_dst, RTE_ETHER_TYPE_IPV6,
						(uint16_t)(sizeof(*ip) + plen));
	if (ip == NULL)
		return;
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(plen);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 255;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
	l4 = (uint8_t *)(ip + 1);
	l4[0] = type;
	l4[1] = 0;
	l4[4] = flags;
	memcpy(l4 + 8, target, 16);
	l4[24] = opt;
	l4[25] = 1;
	memcpy(l4 + 26, ip_port_mac(port), 6);
	/* the sum is over the ND message only: the frame may carry padding */
	{
		uint16_t ck = rte_ipv6_udptcp_cksum(ip, l4);

		memcpy(l4 + 2, &ck, 2);
	}
	ip_cs.nd_sent++;
	ip_ctl_tx(port, m);
}

static void
solicited_node(const uint8_t a[16], uint8_t sn[16], struct rte_ether_addr *mac)
{
	memset(sn, 0, 16);
	sn[0] = 0xff;
	sn[1] = 0x02;
	sn[11] = 0x01;
	sn[12] = 0xff;
	sn[13] = a[13];
	sn[14] = a[14];
	sn[15] = a[15];
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], &sn[12], 4);
}

/* Send a solicitation for n: broadcast/multicast, or unicast (PROBE). */
static void
neigh_solicit(struct neigh *n, bool unicast)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
	struct egw_ip_addr src;
	uint64_t now = rte_get_tsc_cycles();

	n->t_probe = ip_now_ms();
	n->probes++;
	if (!ip_tb_take(&nt.solicit_tb, now, nt.conf.solicit_pps, nt.conf.solicit_pps / 10 + 1)) {
		ip_cs.solicit_ratelimited++;
		return;
	}
	if (!ip_addr_source(n->port, n->vlan, &n->a, &src))
		return; /* no address on that interface: nothing to ask with */
	if (n->a.family == AF_INET) {
		rte_be32_t sip, tip;

		memcpy(&sip, src.a, 4);
		memcpy(&tip, n->a.a, 4);
		arp_send(n->port, n->vlan, RTE_ARP_OP_REQUEST, unicast ? &n->mac : &bcast, NULL,
			 sip, tip);
	} else {
		uint8_t sn[16];
		struct rte_ether_addr mc;

		solicited_node(n->a.a, sn, &mc);
		nd_send(n->port, n->vlan, ND_NS, 0, src.a, unicast ? n->a.a : sn,
			unicast ? &n->mac : &mc, n->a.a, ND_OPT_SLLA);
	}
}

void
ip_neigh_announce(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
	static const struct rte_ether_addr all_nodes_mac = {.addr_bytes = {0x33, 0x33, 0, 0, 0, 1}};
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};

	if (a->family == AF_INET) {
		rte_be32_t x;

		memcpy(&x, a->a, 4);
		arp_send(port, vlan, RTE_ARP_OP_REQUEST, &bcast, NULL, x, x);
	} else {
		nd_send(port, vlan, ND_NA, NA_F_ROUTER | NA_F_OVERRIDE, a->a, all_nodes,
			&all_nodes_mac, a->a, ND_OPT_TLLA);
	}
	ip_cs.garp_sent++;
}

/* Send the packets that waited, now that n has a MAC. */
static void
hold_flush(struct neigh *n)
{
	const struct ip_nh *nh = ip_nh_get(n->id);
	unsigned int i;

	for (i = 0; i < n->nhold; i++) {
		struct rte_mbuf *m = n->hold[i];

		if (nh == NULL || !(nh->flags & NH_F_VALID) || ip_l2_rewrite(m, nh) < 0) {
			rte_pktmbuf_free(m);
			ip_cs.held_dropped++;
			continue;
		}
		ip_cs.held_sent++;
		ip_ctl_tx(nh->port, m);
	}
	n->nhold = 0;
}

/* Resolution failed: the packets that waited are dropped; their senders get
 * ICMP host unreachable (not subscribers behind an access port: the control
 * path does not encapsulate). */
static void
hold_fail(struct neigh *n)
{
	unsigned int i;

	for (i = 0; i < n->nhold; i++) {
		struct rte_mbuf *m = n->hold[i], *r = NULL;
		uint16_t in = m->port;
		const struct ip_port_dp *pd = in < RTE_MAX_ETHPORTS ? ip_dp.port[in] : NULL;

		if (pd != NULL && !pd->access) {
			if (n->a.family == AF_INET) {
				rte_be32_t src;

				if (ip_icmp4_allowed(m) && ip_icmp_src4(in, ip_vlan_of(m), &src))
					r = ip_icmp4_error(ip_ctl_pool(), m, src, 3, 1, 0);
			} else {
				uint8_t src[16];

				if (ip_icmp6_allowed(m) && ip_icmp_src6(in, ip_vlan_of(m), src))
					r = ip_icmp6_error(ip_ctl_pool(), m, src, 1, 3, 0);
			}
		}
		rte_pktmbuf_free(m);
		ip_cs.held_dropped++;
		if (r != NULL) {
			ip_cs.unresolved_icmp++;
			ip_ctl_tx(in, r);
		}
	}
	n->nhold = 0;
}

/* A link-layer address for n from the wire: solicited (a reply/NA to our
 * question) makes it REACHABLE; otherwise a changed address makes it STALE. */
static void
neigh_update(struct neigh *n, const struct rte_ether_addr *mac, bool solicited, bool override)
{
	bool changed = !rte_is_same_ether_addr(&n->mac, mac);
	uint8_t old = n->state;

	if (n->state == EGW_IP_NS_PERMANENT)
		return;
	if (n->state == EGW_IP_NS_INCOMPLETE || n->state == EGW_IP_NS_FAILED) {
		n->mac = *mac;
		set_state(n, solicited ? EGW_IP_NS_REACHABLE : EGW_IP_NS_STALE);
	} else if (changed && !override) {
		/* RFC 4861 7.2.5: a solicited advertisement without override
		 * that names another address only ages the entry */
		if (n->state == EGW_IP_NS_REACHABLE)
			set_state(n, EGW_IP_NS_STALE);
		return;
	} else if (changed) {
		n->mac = *mac;
		set_state(n, solicited ? EGW_IP_NS_REACHABLE : EGW_IP_NS_STALE);
	} else if (solicited) {
		set_state(n, EGW_IP_NS_REACHABLE);
	}
	n->t_confirm = ip_now_ms();
	if (changed || old != n->state) {
		if (neigh_publish(n) < 0) {
			ip_cs.ctl_nomem++;
			return;
		}
	}
	if (old == EGW_IP_NS_INCOMPLETE || old == EGW_IP_NS_FAILED)
		ip_cs.neigh_resolved++;
	hold_flush(n);
}

static bool
mac_unicast(const struct rte_ether_addr *m)
{
	return rte_is_unicast_ether_addr(m) && !rte_is_zero_ether_addr(m);
}

static bool
iface_of(struct rte_mbuf *m, uint16_t *port, uint16_t *vlan)
{
	const struct egw_eth_meta *meta = egw_eth_meta(m);

	*port = m->port;
	if (!ip_port_routed(*port) || meta->n_vlan > 1)
		return false;
	*vlan = meta->n_vlan == 1 ? (uint16_t)(m->vlan_tci & 0xfff) : 0;
	return true;
}

static void
arp_input(struct rte_mbuf *m)
{
	struct rte_arp_hdr *h;
	struct egw_ip_addr sip, tip;
	struct neigh *n;
	uint16_t port, vlan, op;
	bool tip_ours;

	ip_cs.arp_rx++;
	if (!iface_of(m, &port, &vlan)) {
		ip_cs.arp_not_ours++;
		goto free;
	}
	if (rte_pktmbuf_data_len(m) < m->l2_len + sizeof(*h)) {
		ip_cs.arp_bad++;
		goto free;
	}
	h = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, m->l2_len);
	op = rte_be_to_cpu_16(h->arp_opcode);
	if (h->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    h->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) || h->arp_hlen != 6 ||
	    h->arp_plen != 4 || (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) ||
	    !mac_unicast(&h->arp_data.arp_sha)) {
		ip_cs.arp_bad++;
		goto free;
	}
	memset(&sip, 0, sizeof(sip));
	memset(&tip, 0, sizeof(tip));
	sip.family = tip.family = AF_INET;
	memcpy(sip.a, &h->arp_data.arp_sip, 4);
	memcpy(tip.a, &h->arp_data.arp_tip, 4);
	if (ip_addr_is_local(port, vlan, &sip)) {
		/* someone else claims our address: keep ours, count it */
		ip_cs.arp_conflict++;
		goto free;
	}
	tip_ours = ip_addr_is_local(port, vlan, &tip);
	n = h->arp_data.arp_sip != 0 ? neigh_find(port, vlan, &sip) : NULL;

	if (op == RTE_ARP_OP_REQUEST && tip_ours) {
		struct rte_ether_addr sha = h->arp_data.arp_sha;
		rte_be32_t s = h->arp_data.arp_sip, t = h->arp_data.arp_tip;
		struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

		/* RFC 826: the sender of a request for us is worth knowing
		 * (an RFC 5227 probe, from 0.0.0.0, teaches nothing) */
		if (s != 0 && (n != NULL || on_link(port, vlan, &sip))) {
			if (n == NULL && ip_neigh_get(port, vlan, &sip, true) >= 0)
				n = neigh_find(port, vlan, &sip);
			if (n != NULL)
				neigh_update(n, &sha, false, true);
		}
		/* the reply is the request turned around, tags kept */
		eh->dst_addr = s != 0 ? sha : eh->src_addr;
		eh->src_addr = *ip_port_mac(port);
		h->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
		h->arp_data.arp_tha = sha;
		h->arp_data.arp_tip = s;
		h->arp_data.arp_sha = *ip_port_mac(port);
		h->arp_data.arp_sip = t;
		ip_cs.arp_request_answered++;
		ip_ctl_tx(port, m);
		return;
	}
	if (op == RTE_ARP_OP_REPLY && tip_ours) {
		if (n == NULL) {
			ip_cs.arp_unsolicited++; /* arp_accept=0 */
			goto free;
		}
		neigh_update(n, &h->arp_data.arp_sha, true, true);
		ip_cs.arp_reply_accepted++;
		goto free;
	}
	if (h->arp_data.arp_sip == h->arp_data.arp_tip && n != NULL) {
		/* gratuitous ARP of a neighbour we know: it moved */
		neigh_update(n, &h->arp_data.arp_sha, false, true);
		goto free;
	}
	ip_cs.arp_not_ours++;
free:
	rte_pktmbuf_free(m);
}

/* The link-layer address option of an ND message, or NULL. */
static const struct rte_ether_addr *
nd_lla(const uint8_t *opt, uint32_t len, uint8_t type, bool *bad)
{
	const struct rte_ether_addr *r = NULL;

	*bad = false;
	while (len >= 2) {
		uint32_t ol = (uint32_t)opt[1] * 8;

		if (ol == 0 || ol > len) {
			*bad = true; /* RFC 4861 7.1.1: length 0 invalidates */
			return NULL;
		}
		if (opt[0] == type && ol >= 8)
			r = (const struct rte_ether_addr *)(opt + 2);
		opt += ol;
		len -= ol;
	}
	return r;
}

static void
nd_input(struct rte_mbuf *m)
{
	static const uint8_t zero[16];
	static const struct rte_ether_addr all_nodes_mac = {.addr_bytes = {0x33, 0x33, 0, 0, 0, 1}};
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	struct rte_ipv6_hdr *ip;
	struct egw_ip_addr src, tgt;
	const struct rte_ether_addr *lla;
	struct neigh *n;
	uint16_t port, vlan, plen;
	uint8_t *l4;
	bool bad;

	ip_cs.nd_rx++;
	if (!iface_of(m, &port, &vlan)) {
		ip_cs.nd_ignored++;
		goto free;
	}
	if (rte_pktmbuf_data_len(m) < m->l2_len + sizeof(*ip) + 24u) {
		ip_cs.nd_bad++;
		goto free;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len);
	plen = rte_be_to_cpu_16(ip->payload_len);
	l4 = (uint8_t *)(ip + 1);
	if (ip->proto != IPPROTO_ICMPV6 || ip->hop_limits != 255 || plen < 24 ||
	    m->l2_len + sizeof(*ip) + plen > rte_pktmbuf_data_len(m) || l4[1] != 0 ||
	    (l4[0] != ND_NS && l4[0] != ND_NA)) {
		if (ip->proto == IPPROTO_ICMPV6 && plen >= 24 && l4[0] != ND_NS && l4[0] != ND_NA)
			ip_cs.nd_ignored++; /* RS, RA, redirect: not a host here */
		else
			ip_cs.nd_bad++;
		goto free;
	}
	if (rte_ipv6_udptcp_cksum_verify(ip, l4) != 0) {
		ip_cs.nd_bad++;
		goto free;
	}
	memset(&src, 0, sizeof(src));
	memset(&tgt, 0, sizeof(tgt));
	src.family = tgt.family = AF_INET6;
	memcpy(src.a, ip->src_addr, 16);
	memcpy(tgt.a, l4 + 8, 16);
	if (tgt.a[0] == 0xff) {
		ip_cs.nd_bad++;
		goto free;
	}
	lla = nd_lla(l4 + 24, plen - 24u, l4[0] == ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA, &bad);
	if (bad || (lla != NULL && !mac_unicast(lla))) {
		ip_cs.nd_bad++;
		goto free;
	}
	if (l4[0] == ND_NS) {
		bool dad = memcmp(src.a, zero, 16) == 0;
		struct rte_ether_addr to;

		if (!ip_addr_is_local(port, vlan, &tgt)) {
			ip_cs.arp_not_ours++;
			goto free;
		}
		if (dad && lla != NULL) {
			ip_cs.nd_bad++; /* RFC 4861 7.1.1 */
			goto free;
		}
		if (!dad && src.a[0] == 0xff) {
			ip_cs.nd_bad++;
			goto free;
		}
		to = lla != NULL ? *lla : rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->src_addr;
		if (!dad && ip_addr_is_local(port, vlan, &src)) {
			ip_cs.arp_conflict++; /* someone else uses our address */
			goto free;
		}
		if (!dad && lla != NULL) {
			n = neigh_find(port, vlan, &src);
			if (n == NULL && on_link(port, vlan, &src) &&
			    ip_neigh_get(port, vlan, &src, true) >= 0)
				n = neigh_find(port, vlan, &src);
			if (n != NULL)
				neigh_update(n, lla, false, true);
		}
		if (dad)
			nd_send(port, vlan, ND_NA, NA_F_ROUTER | NA_F_OVERRIDE, tgt.a, all_nodes,
				&all_nodes_mac, tgt.a, ND_OPT_TLLA);
		else
			nd_send(port, vlan, ND_NA, NA_F_ROUTER | NA_F_SOLICITED | NA_F_OVERRIDE,
				tgt.a, src.a, &to, tgt.a, ND_OPT_TLLA);
		ip_cs.nd_ns_answered++;
		goto free;
	}
	/* NA */
	if (ip_addr_is_local(port, vlan, &tgt)) {
		ip_cs.arp_conflict++;
		goto free;
	}
	n = neigh_find(port, vlan, &tgt);
	if (n == NULL) {
		ip_cs.nd_unsolicited++;
		goto free;
	}
	if (lla == NULL) {
		/* no address: only confirms one we have (7.2.5) */
		if (n->state != EGW_IP_NS_INCOMPLETE && (l4[4] & NA_F_SOLICITED))
			neigh_update(n, &n->mac, true, false);
		goto free;
	}
	neigh_update(n, lla, (l4[4] & NA_F_SOLICITED) != 0, (l4[4] & NA_F_OVERRIDE) != 0);
	ip_cs.nd_na_accepted++;
free:
	rte_pktmbuf_free(m);
}

/* A packet the data path could not send for want of a MAC address. */
static void
punt_input(struct rte_mbuf *m, bool v6)
{
	struct egw_ip_addr dst;
	const struct ip_nh *nh;
	struct neigh *n;
	uint64_t v;
	uint32_t id;

	memset(&dst, 0, sizeof(dst));
	if (v6) {
		dst.family = AF_INET6;
		memcpy(dst.a,
		       rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len)->dst_addr, 16);
	} else {
		dst.family = AF_INET;
		memcpy(dst.a,
		       &rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len)->dst_addr, 4);
	}
	v = ip_fib_lookup(&dst);
	nh = ip_nh_of(v, m, v6);
	id = nh->id;
	if (nh->kind == NH_GLEAN) {
		uint16_t vlan = ip_nh_vlan(nh);
		int r = ip_neigh_get(nh->port, vlan, &dst, true);

		if (r < 0) {
			ip_cs.held_dropped++;
			rte_pktmbuf_free(m);
			return;
		}
		id = (uint32_t)r;
		nh = ip_nh_get(id);
	}
	n = nh->kind == NH_NEIGH ? neigh_of_nh(id) : NULL;
	if (n == NULL) {
		/* the route changed while the packet was on its way */
		ip_cs.punt_no_route++;
		rte_pktmbuf_free(m);
		return;
	}
	if (nh->flags & NH_F_VALID) {
		if (ip_l2_rewrite(m, nh) < 0) {
			ip_cs.held_dropped++;
			rte_pktmbuf_free(m);
			return;
		}
		ip_cs.held_sent++;
		ip_ctl_tx(nh->port, m);
		return;
	}
	if (n->state == EGW_IP_NS_FAILED) {
		n->hold[0] = m;
		n->nhold = 1;
		hold_fail(n);
		return;
	}
	if (n->nhold == EGW_IP_HOLD_MAX) {
		/* as Linux: the oldest goes */
		rte_pktmbuf_free(n->hold[0]);
		memmove(n->hold, n->hold + 1, sizeof(n->hold[0]) * (EGW_IP_HOLD_MAX - 1));
		n->nhold--;
		ip_cs.held_overflow++;
	}
	n->hold[n->nhold++] = m;
	ip_cs.held++;
	if (n->probes == 0)
		neigh_solicit(n, false);
}

/* A link-scope multicast packet the host sent on m->port's exception path
 * (OSPF hellos, RIP, VRRP): not routed, it leaves by that port, untagged,
 * to the group's MAC (RFC 1112 6.4, RFC 2464 7). */
static int
output_link_mcast(struct rte_mbuf *m, const struct egw_ip_addr *dst, uint32_t len)
{
	bool v6 = dst->family == AF_INET6;
	struct rte_ether_hdr *eh;

	struct egw_ip_addr src;
	const struct ip_nh *nh;

	if (!ip_port_routed(m->port)) {
		ip_cs.exception_no_route++;
		rte_pktmbuf_free(m);
		return -ENETUNREACH;
	}
	/* from one of the port's own addresses only: the host's stack never
	 * speaks on the wire with a source edgegw would not answer for */
	memset(&src, 0, sizeof(src));
	src.family = dst->family;
	memcpy(src.a, rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l2_len + (v6 ? 8 : 12)),
	       v6 ? 16 : 4);
	nh = ip_nh_of(ip_fib_lookup(&src), m, v6);
	if (nh->kind != NH_LOCAL || nh->port != m->port) {
		ip_cs.exception_bad_source++;
		rte_pktmbuf_free(m);
		return -EADDRNOTAVAIL;
	}
	if (len > ip_port_mtu(m->port)) {
		ip_cs.exception_too_big++;
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	if (v6) {
		eh->dst_addr = (struct rte_ether_addr){
			{0x33, 0x33, dst->a[12], dst->a[13], dst->a[14], dst->a[15]}};
		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
	} else {
		eh->dst_addr = (struct rte_ether_addr){
			{0x01, 0x00, 0x5e, dst->a[1] & 0x7f, dst->a[2], dst->a[3]}};
		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	}
	eh->src_addr = *ip_port_mac(m->port);
	ip_cs.exception_tx++;
	ip_ctl_tx(m->port, m);
	return 0;
}

int
egw_ip_output(struct rte_mbuf *m)
{
	const struct egw_eth_meta *meta = egw_eth_meta(m);
	bool v6 = meta->cls == EGW_ETH_CLS_IPV6;
	struct egw_ip_addr dst;
	const struct ip_nh *nh;
	uint32_t len;

	if (nt.tab == NULL || (meta->cls != EGW_ETH_CLS_IPV4 && !v6) ||
	    m->data_len <
		    m->l2_len + (v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr))) {
		ip_cs.exception_no_route++;
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	memset(&dst, 0, sizeof(dst));
	if (v6) {
		const struct rte_ipv6_hdr *ip =
			rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, m->l2_len);

		dst.family = AF_INET6;
		memcpy(dst.a, ip->dst_addr, 16);
		len = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);
	} else {
		const struct rte_ipv4_hdr *ip =
			rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, m->l2_len);

		dst.family = AF_INET;
		memcpy(dst.a, &ip->dst_addr, 4);
		len = rte_be_to_cpu_16(ip->total_length);
	}
	if (v6 ? dst.a[0] == 0xff && (dst.a[1] & 0x0f) == 0x02
	       : dst.a[0] == 224 && dst.a[1] == 0 && dst.a[2] == 0)
		return output_link_mcast(m, &dst, len);
	nh = ip_nh_of(ip_fib_lookup(&dst), m, v6);
	if (nh->kind != NH_NEIGH && nh->kind != NH_GLEAN) {
		ip_cs.exception_no_route++;
		rte_pktmbuf_free(m);
		return -ENETUNREACH;
	}
	if (len > nh->mtu) {
		/* the host's interface has the port's MTU: it fragments or
		 * learns the path MTU itself */
		ip_cs.exception_too_big++;
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	ip_cs.exception_tx++;
	/* as a packet the data path could not send: sent now if the next
	 * hop is resolved, else held while it is */
	punt_input(m, v6);
	return 0;
}

void
egw_ip_ctrl_input(struct rte_mbuf *m)
{
	const struct egw_eth_meta *meta = egw_eth_meta(m);

	if (nt.tab == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	if (meta->cls != EGW_ETH_CLS_ARP && (meta->reserved & IP_META_LOCAL)) {
		egw_eth_meta(m)->reserved = 0;
		ip_cs.exception_rx++;
		if (!ip_ctl_local((uint16_t)m->hash.usr, m)) {
			/* the exception path went meanwhile */
			ip_cs.exception_no_path++;
			rte_pktmbuf_free(m);
		}
		return;
	}
	if (meta->cls == EGW_ETH_CLS_ARP || !(meta->reserved & IP_META_PUNT)) {
		/* ARP and ND (the data path marks punted packets, below) */
		if (!ip_tb_take(&nt.input_tb, rte_get_tsc_cycles(), nt.conf.input_pps,
				nt.conf.input_pps / 10 + 1)) {
			ip_cs.input_ratelimited++;
			rte_pktmbuf_free(m);
			return;
		}
		if (meta->cls == EGW_ETH_CLS_ARP)
			arp_input(m);
		else if (meta->cls == EGW_ETH_CLS_IPV6)
			nd_input(m);
		else {
			ip_cs.punt_no_route++;
			rte_pktmbuf_free(m);
		}
		return;
	}
	egw_eth_meta(m)->reserved = 0;
	punt_input(m, meta->cls == EGW_ETH_CLS_IPV6);
}

/* ---- timers --------------------------------------------------------------- */

static void
neigh_tick(struct neigh *n, uint64_t now)
{
	const struct egw_ip_neigh_conf *c = &nt.conf;
	const struct ip_nh *nh;

	switch (n->state) {
	case EGW_IP_NS_INCOMPLETE:
		if (n->probes == 0 || now - n->t_probe < c->retrans_ms)
			break;
		if (n->probes < c->mcast_probes) {
			neigh_solicit(n, false);
			break;
		}
		set_state(n, EGW_IP_NS_FAILED);
		ip_cs.neigh_failed++;
		neigh_publish(n);
		hold_fail(n);
		break;
	case EGW_IP_NS_FAILED:
		if (now - n->t_state < c->failed_ms)
			break;
		if (n->refs == 0 && n->state != EGW_IP_NS_PERMANENT) {
			neigh_remove(n);
			break;
		}
		/* a gateway routes use: try again when a packet needs it */
		set_state(n, EGW_IP_NS_INCOMPLETE);
		memset(&n->mac, 0, sizeof(n->mac));
		neigh_publish(n);
		break;
	case EGW_IP_NS_REACHABLE:
		if (now - n->t_confirm >= c->reachable_ms) {
			set_state(n, EGW_IP_NS_STALE);
			nh = ip_nh_get(n->id);
			if (nh != NULL)
				__atomic_store_n(&((struct ip_nh *)(uintptr_t)nh)->used, 0,
						 __ATOMIC_RELAXED);
		}
		break;
	case EGW_IP_NS_STALE:
		nh = ip_nh_get(n->id);
		if (nh != NULL && __atomic_load_n(&nh->used, __ATOMIC_RELAXED)) {
			/* traffic through a stale entry: confirm it */
			set_state(n, EGW_IP_NS_DELAY);
		} else if (now - n->t_state >= c->gc_stale_ms && n->refs == 0) {
			neigh_remove(n);
		}
		break;
	case EGW_IP_NS_DELAY:
		if (now - n->t_state >= c->delay_ms) {
			set_state(n, EGW_IP_NS_PROBE);
			neigh_solicit(n, true);
		}
		break;
	case EGW_IP_NS_PROBE:
		if (now - n->t_probe < c->retrans_ms)
			break;
		if (n->probes < c->ucast_probes) {
			neigh_solicit(n, true);
			break;
		}
		set_state(n, EGW_IP_NS_FAILED);
		ip_cs.neigh_failed++;
		neigh_publish(n);
		break;
	default: break;
	}
}

unsigned int
egw_ip_service(void)
{
	uint64_t now = ip_now_ms();
	unsigned int work = 0;
	uint32_t i;

	if (nt.tab == NULL || now - nt.last_scan < 100)
		return 0;
	nt.last_scan = now;
	for (i = 0; i < nt.max; i++) {
		if (!nt.tab[i].used)
			continue;
		work++;
		neigh_tick(&nt.tab[i], now);
	}
	return 0; /* timers are not work that keeps the control lcore awake */
}

int
egw_ip_neigh_add(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a,
		 const struct rte_ether_addr *mac)
{
	struct neigh *n;
	int r;

	if (a == NULL || mac == NULL || !mac_unicast(mac) || vlan > 4094 || !ip_port_routed(port) ||
	    !ip_addr_unicast(a) || nt.tab == NULL)
		return -EINVAL;
	if (ip_addr_is_local(port, UINT16_MAX, a))
		return -EINVAL;
	r = ip_neigh_get(port, vlan, a, true);
	if (r < 0)
		return r;
	n = neigh_of_nh((uint32_t)r);
	n->mac = *mac;
	set_state(n, EGW_IP_NS_PERMANENT);
	n->t_confirm = ip_now_ms();
	if (neigh_publish(n) < 0)
		return -ENOMEM;
	hold_flush(n);
	return 0;
}

int
egw_ip_neigh_del(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	struct neigh *n;

	if (a == NULL || nt.tab == NULL || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	n = neigh_find(port, vlan, a);
	if (n == NULL)
		return -ENOENT;
	if (n->refs == 0) {
		neigh_remove(n);
		return 0;
	}
	/* routes still go through it: resolve it again */
	if (n->host_route) {
		ip_host_route_del(&n->a, n->id);
		n->host_route = false;
	}
	hold_free(n, &ip_cs.held_dropped);
	memset(&n->mac, 0, sizeof(n->mac));
	set_state(n, EGW_IP_NS_INCOMPLETE);
	neigh_publish(n);
	return 0;
}

int
egw_ip_neigh_walk(int (*fn)(const struct egw_ip_neigh_info *n, void *arg), void *arg)
{
	uint64_t now = ip_now_ms();
	uint32_t i;
	int rc;

	for (i = 0; nt.tab != NULL && i < nt.max; i++) {
		const struct neigh *n = &nt.tab[i];
		struct egw_ip_neigh_info ni;

		if (!n->used)
			continue;
		memset(&ni, 0, sizeof(ni));
		ni.addr = n->a;
		ni.port = n->port;
		ni.vlan = n->vlan;
		ni.mac = n->mac;
		ni.state = n->state;
		ni.held = n->nhold;
		ni.probes = n->probes;
		ni.refs = n->refs;
		ni.age_ms = n->t_confirm != 0 ? now - n->t_confirm : now - n->t_state;
		rc = fn(&ni, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
