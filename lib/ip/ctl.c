/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the FIBs, the next-hop and ECMP group tables, ports and
 * their addresses, routes and their walks. One thread at a time (the caller
 * serialises). The data path reads what is written here without locks:
 * FIB entries (4-byte stores of rte_fib/rte_fib6), next-hop and group
 * records (pointers stored with release), port records (likewise); what a
 * worker may still read is freed after an rte_rcu_qsbr grace period.
 */
/* rte_rcu_qsbr_dq_*() are experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_rcu_qsbr.h>
#include <rte_rib.h>
#include <rte_rib6.h>
#include <rte_vect.h>
#include <rte_version.h>

#include "ip_private.h"

RTE_LOG_REGISTER_DEFAULT(egw_ip_logtype, NOTICE);

struct ip_dp ip_dp;
struct ip_ctl_stats ip_cs;

/* Route types kept in the RIB node's extension, beyond the public ones. */
#define RT_NEIGH_HOST 100 /* a neighbour's /32 or /128, made by resolution */
#define RT_BCAST 101      /* a subnet's broadcast address */

struct rt_ext {
	uint8_t type;
};

/* A (port, VLAN) that has addresses or on-link routes: its glean and local
 * next hops per family. */
struct ip_iface {
	bool used;
	uint16_t vlan;
	uint32_t glean[2];
	uint32_t local[2];
	unsigned int refs[2]; /* addresses and dev routes using glean/local */
};

struct ip_addr_ent {
	bool used;
	uint16_t vlan;
	uint8_t len;
	bool link_local;
	struct egw_ip_addr a;
};

struct ip_port_ctl {
	bool known;
	bool exception;
	enum egw_ip_port_kind kind;
	struct rte_ether_addr mac;
	uint16_t mtu;
	struct ip_iface ifc[EGW_IP_ADDR_MAX];
	struct ip_addr_ent addr[EGW_IP_ADDR_MAX + 1]; /* + the IPv6 link-local */
	unsigned int routes;                          /* dev and via routes naming the port */
};

/* Control-side record of a next hop. */
struct ip_nh_ctl {
	unsigned int refs;
};

/* What a grace period frees: a record, and maybe an index to reuse. */
struct ip_defer {
	void *ptr;
	uint32_t id;  /* UINT32_MAX: none */
	uint32_t grp; /* 1: id is a group index */
};

static struct {
	bool init;
	struct egw_ip_params p;
	struct rte_rcu_qsbr_dq *dq;
	struct ip_nh_ctl *nhc;
	uint32_t *nh_free; /* stack of free next-hop indices */
	uint32_t nh_nfree;
	uint32_t *grp_free;
	uint32_t grp_nfree;
	uint32_t *grp_refs;     /* routes using each group */
	struct rte_hash *grp_h; /* path set -> group: routes with the same paths share one */
	unsigned int nh_used;
	struct ip_port_ctl port[RTE_MAX_ETHPORTS];
	unsigned int routes[2][EGW_IP_RT_MAX];
	unsigned int routes_total[2];
	size_t fib4_bytes, fib6_bytes;
	bool fib6_avx512; /* rte_fib6 uses its AVX-512 lookup */
} ic;

static const char *const drop_names[] = {
#define EGW_IP_DROP(e, n, d) n,
#include "egw_ip_drop.def"
#undef EGW_IP_DROP
};
static const char *const drop_descs[] = {
#define EGW_IP_DROP(e, n, d) d,
#include "egw_ip_drop.def"
#undef EGW_IP_DROP
};

const char *
egw_ip_drop_name(unsigned int r)
{
	return r < EGW_IP_DROP_MAX ? drop_names[r] : "unknown";
}

const char *
egw_ip_drop_desc(unsigned int r)
{
	return r < EGW_IP_DROP_MAX ? drop_descs[r] : "unknown";
}

static const char *const rt_names[EGW_IP_RT_MAX] = {
	[EGW_IP_RT_VIA] = "via",
	[EGW_IP_RT_DEV] = "dev",
	[EGW_IP_RT_BLACKHOLE] = "blackhole",
	[EGW_IP_RT_UNREACH] = "unreachable",
	[EGW_IP_RT_SESSION] = "pppoe",
	[EGW_IP_RT_CONNECTED] = "connected",
	[EGW_IP_RT_LOCAL] = "local",
	[EGW_IP_RT_SUBSCRIBER] = "subscriber",
};

const char *
egw_ip_route_type_name(unsigned int t)
{
	if (t == RT_BCAST)
		return "broadcast";
	return t < EGW_IP_RT_MAX ? rt_names[t] : "unknown";
}

uint64_t
ip_now_ms(void)
{
	return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

struct rte_mempool *
ip_ctl_pool(void)
{
	return ic.p.pool;
}

void
ip_ctl_tx(uint16_t port, struct rte_mbuf *m)
{
	ic.p.tx(port, m, ic.p.tx_arg);
}

static int port_dp_publish(uint16_t port);

bool
ip_ctl_local(uint16_t port, struct rte_mbuf *m)
{
	if (ic.p.local == NULL || port >= RTE_MAX_ETHPORTS || !ic.port[port].exception)
		return false;
	ic.p.local(port, m, ic.p.local_arg);
	return true;
}

int
egw_ip_port_exception(uint16_t port, bool on)
{
	if (!ic.init || !ip_port_routed(port) || (on && ic.p.local == NULL))
		return -EINVAL;
	ic.port[port].exception = on;
	return port_dp_publish(port);
}

/* ---- deferred frees ------------------------------------------------------- */

static void
defer_free(void *p __rte_unused, void *e, unsigned int n)
{
	struct ip_defer *d = e;
	unsigned int i;

	for (i = 0; i < n; i++) {
		rte_free(d[i].ptr);
		if (d[i].id == UINT32_MAX)
			continue;
		if (d[i].grp)
			ic.grp_free[ic.grp_nfree++] = d[i].id;
		else
			ic.nh_free[ic.nh_nfree++] = d[i].id;
	}
}

/* Free ptr (and give back index id) once no worker can hold it. */
static void
defer(void *ptr, uint32_t id, bool grp)
{
	struct ip_defer d = {.ptr = ptr, .id = id, .grp = grp};

	if (ptr == NULL && id == UINT32_MAX)
		return;
	if (ic.dq == NULL) {
		defer_free(NULL, &d, 1);
		return;
	}
	if (rte_rcu_qsbr_dq_enqueue(ic.dq, &d) == 0)
		return;
	/* queue full: reclaim what has passed a grace period, then wait for
	 * one (control path only; workers report quiescent every loop) */
	rte_rcu_qsbr_dq_reclaim(ic.dq, UINT32_MAX, NULL, NULL, NULL);
	if (rte_rcu_qsbr_dq_enqueue(ic.dq, &d) == 0)
		return;
	rte_rcu_qsbr_synchronize(ic.p.qsbr, RTE_QSBR_THRID_INVALID);
	defer_free(NULL, &d, 1);
}

/* ---- next hops ------------------------------------------------------------ */

int
ip_nh_alloc(void)
{
	uint32_t id;

	if (ic.nh_nfree == 0 && ic.dq != NULL)
		rte_rcu_qsbr_dq_reclaim(ic.dq, UINT32_MAX, NULL, NULL, NULL);
	if (ic.nh_nfree == 0)
		return -ENOSPC;
	id = ic.nh_free[--ic.nh_nfree];
	ic.nhc[id].refs = 0;
	ic.nh_used++;
	return (int)id;
}

/* Publish a copy of rec as next hop id; the old record goes after a grace
 * period. */
int
ip_nh_publish(uint32_t id, const struct ip_nh *rec)
{
	struct ip_nh *n, *old;

	n = rte_malloc_socket("egw_ip_nh", sizeof(*n), RTE_CACHE_LINE_SIZE, ic.p.socket);
	if (n == NULL)
		return -ENOMEM;
	*n = *rec;
	n->id = id;
	n->used = 0;
	n->flags &= (uint8_t)~NH_F_FAST;
	if (n->kind == NH_NEIGH && (n->flags & NH_F_VALID) && n->l2_len == RTE_ETHER_HDR_LEN)
		n->flags |= NH_F_FAST;
	old = ip_dp.nh[id];
	if (id != NH_ID_NOROUTE && old == ip_dp.nh[NH_ID_NOROUTE])
		old = NULL; /* a free slot's shared "no route" record */
	/* pairs with the acquire load in ip_nh_of() */
	__atomic_store_n(&ip_dp.nh[id], n, __ATOMIC_RELEASE);
	defer(old, UINT32_MAX, false);
	return 0;
}

const struct ip_nh *
ip_nh_get(uint32_t id)
{
	return id < ip_dp.max_nh ? ip_dp.nh[id] : NULL;
}

/* The last reference went: the slot points at "no route" until the grace
 * period ends, then the index is free. */
void
ip_nh_release(uint32_t id)
{
	struct ip_nh *old = ip_dp.nh[id];

	if (id < NH_ID_FIRST_FREE)
		return;
	if (old == ip_dp.nh[NH_ID_NOROUTE])
		old = NULL; /* never published: the shared record is not its own */
	/* pairs with the acquire load in ip_nh_of(): a worker that read a FIB
	 * entry naming id just before its removal sees "no route" */
	__atomic_store_n(&ip_dp.nh[id], ip_dp.nh[NH_ID_NOROUTE], __ATOMIC_RELEASE);
	ic.nh_used--;
	defer(old, id, false);
}

static void
nh_ref(uint32_t id)
{
	if (id >= NH_ID_FIRST_FREE)
		ic.nhc[id].refs++;
}

/* Drop a reference of a next hop of any kind. */
static void
nh_unref(uint32_t id)
{
	const struct ip_nh *nh = ip_dp.nh[id];

	if (id < NH_ID_FIRST_FREE)
		return;
	if (nh->kind == NH_NEIGH) {
		ip_neigh_put(id);
		return;
	}
	if (--ic.nhc[id].refs == 0)
		ip_nh_release(id);
}

void
ip_nh_hdr(struct ip_nh *nh, const struct rte_ether_addr *dst, uint16_t port, uint16_t vlan, bool v6)
{
	rte_be16_t et = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	uint8_t *h = nh->hdr;

	memset(h, 0, sizeof(nh->hdr));
	if (dst != NULL)
		memcpy(h, dst, RTE_ETHER_ADDR_LEN);
	memcpy(h + 6, &ic.port[port].mac, RTE_ETHER_ADDR_LEN);
	if (vlan != 0) {
		rte_be16_t tpid = RTE_BE16(RTE_ETHER_TYPE_VLAN), tci = rte_cpu_to_be_16(vlan);

		memcpy(h + 12, &tpid, 2);
		memcpy(h + 14, &tci, 2);
		memcpy(h + 16, &et, 2);
		nh->l2_len = RTE_ETHER_HDR_LEN + 4;
	} else {
		memcpy(h + 12, &et, 2);
		nh->l2_len = RTE_ETHER_HDR_LEN;
	}
	nh->port = port;
	nh->mtu = ic.port[port].mtu;
}

/* A next hop of a fixed kind for (port, vlan): glean or local. */
static int
nh_make(enum ip_nh_kind kind, uint16_t port, uint16_t vlan, bool v6)
{
	struct ip_nh rec;
	int id, rc;

	id = ip_nh_alloc();
	if (id < 0)
		return id;
	memset(&rec, 0, sizeof(rec));
	rec.kind = kind;
	ip_nh_hdr(&rec, NULL, port, vlan, v6);
	rc = ip_nh_publish((uint32_t)id, &rec);
	if (rc < 0) {
		ic.nh_free[ic.nh_nfree++] = (uint32_t)id;
		ic.nh_used--;
		return rc;
	}
	return id;
}

/* ---- ports ---------------------------------------------------------------- */

struct rte_ether_addr *
ip_port_mac(uint16_t port)
{
	return &ic.port[port].mac;
}

bool
ip_port_routed(uint16_t port)
{
	return port < RTE_MAX_ETHPORTS && ic.port[port].known &&
	       ic.port[port].kind == EGW_IP_PORT_ROUTED;
}

uint16_t
ip_port_mtu(uint16_t port)
{
	return ic.port[port].mtu;
}

static bool
port_busy(uint16_t port)
{
	const struct ip_port_ctl *pc = &ic.port[port];
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->addr); i++)
		if (pc->addr[i].used)
			return true;
	return pc->routes != 0 || ip_neigh_port_count(port) != 0;
}

/* Rebuild the record the data path reads for port (ICMP sources). */
static int
port_dp_publish(uint16_t port)
{
	const struct ip_port_ctl *pc = &ic.port[port];
	struct ip_port_dp *d, *old;
	unsigned int i;
	uint16_t p;

	d = rte_zmalloc_socket("egw_ip_port", sizeof(*d), RTE_CACHE_LINE_SIZE, ic.p.socket);
	if (d == NULL)
		return -ENOMEM;
	d->access = pc->kind == EGW_IP_PORT_ACCESS;
	d->exception = pc->exception && pc->kind == EGW_IP_PORT_ROUTED;
	d->mtu = pc->mtu;
	for (i = 0; i < RTE_DIM(pc->addr); i++) {
		const struct ip_addr_ent *e = &pc->addr[i];

		if (!e->used)
			continue;
		if (e->a.family == AF_INET) {
			unsigned int k;

			if (!d->has4) {
				memcpy(&d->addr4, e->a.a, 4);
				d->has4 = true;
			}
			for (k = 0; k < d->n4 && d->vlan4[k] != e->vlan; k++)
				;
			if (k == d->n4 && k < EGW_IP_ADDR_MAX) {
				d->vlan4[k] = e->vlan;
				memcpy(&d->a4[k], e->a.a, 4);
				d->n4++;
			}
		} else if (e->a.family == AF_INET6 && !e->link_local) {
			unsigned int k;

			if (!d->has6) {
				memcpy(d->addr6, e->a.a, 16);
				d->has6 = true;
			}
			for (k = 0; k < d->n6 && d->vlan6[k] != e->vlan; k++)
				;
			if (k == d->n6 && k < EGW_IP_ADDR_MAX) {
				d->vlan6[k] = e->vlan;
				memcpy(d->a6[k], e->a.a, 16);
				d->n6++;
			}
		}
	}
	old = ip_dp.port[port];
	/* pairs with the acquire loads in ip_icmp_src4/6() */
	__atomic_store_n(&ip_dp.port[port], d, __ATOMIC_RELEASE);
	defer(old, UINT32_MAX, false);
	/* the fallback source: the first port's address of each family */
	ip_dp.has4 = ip_dp.has6 = false;
	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		const struct ip_port_dp *x = p == port ? d : ip_dp.port[p];

		if (x == NULL)
			continue;
		if (x->has4 && !ip_dp.has4) {
			ip_dp.any4 = x->addr4;
			ip_dp.has4 = true;
		}
		if (x->has6 && !ip_dp.has6) {
			memcpy(ip_dp.any6, x->addr6, 16);
			ip_dp.has6 = true;
		}
	}
	return 0;
}

int
egw_ip_port_set(uint16_t port, const struct rte_ether_addr *mac, uint16_t mtu,
		enum egw_ip_port_kind kind)
{
	struct ip_port_ctl *pc;
	bool changed;

	if (!ic.init || port >= RTE_MAX_ETHPORTS || mac == NULL || mtu < 68 ||
	    (kind != EGW_IP_PORT_ROUTED && kind != EGW_IP_PORT_ACCESS))
		return -EINVAL;
	pc = &ic.port[port];
	if (kind == EGW_IP_PORT_ACCESS && pc->known && pc->kind != kind && port_busy(port))
		return -EBUSY;
	changed = pc->known && (pc->mtu != mtu || !rte_is_same_ether_addr(&pc->mac, mac));
	pc->known = true;
	pc->kind = kind;
	if (kind == EGW_IP_PORT_ACCESS)
		pc->exception = false;
	pc->mac = *mac;
	pc->mtu = mtu;
	if (changed) {
		/* the next hops of the port copied its MAC and MTU: new records */
		uint32_t id;

		for (id = NH_ID_FIRST_FREE; id < ip_dp.max_nh; id++) {
			const struct ip_nh *o = ip_dp.nh[id];
			struct ip_nh rec;

			if (o == ip_dp.nh[NH_ID_NOROUTE] || o->port != port ||
			    (o->kind != NH_NEIGH && o->kind != NH_GLEAN && o->kind != NH_LOCAL))
				continue;
			rec = *o;
			memcpy(rec.hdr + 6, mac, RTE_ETHER_ADDR_LEN);
			rec.mtu = mtu;
			if (ip_nh_publish(id, &rec) < 0)
				return -ENOMEM;
		}
	}
	return port_dp_publish(port);
}

static struct ip_iface *
iface_get(uint16_t port, uint16_t vlan, bool create)
{
	struct ip_port_ctl *pc = &ic.port[port];
	struct ip_iface *free_ifc = NULL;
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->ifc); i++) {
		if (pc->ifc[i].used && pc->ifc[i].vlan == vlan)
			return &pc->ifc[i];
		if (!pc->ifc[i].used && free_ifc == NULL)
			free_ifc = &pc->ifc[i];
	}
	if (!create || free_ifc == NULL)
		return NULL;
	memset(free_ifc, 0, sizeof(*free_ifc));
	free_ifc->used = true;
	free_ifc->vlan = vlan;
	return free_ifc;
}

/* The glean (connected) or local next hop of an interface, with a reference. */
static int
iface_nh(uint16_t port, uint16_t vlan, int fam, enum ip_nh_kind kind)
{
	struct ip_iface *ifc = iface_get(port, vlan, true);
	uint32_t *slot;
	int id;

	if (ifc == NULL)
		return -ENOSPC;
	slot = kind == NH_GLEAN ? &ifc->glean[fam] : &ifc->local[fam];
	if (*slot == 0) {
		id = nh_make(kind, port, vlan, fam == 1);
		if (id < 0)
			return id;
		*slot = (uint32_t)id;
	}
	ifc->refs[fam]++;
	nh_ref(*slot);
	return (int)*slot;
}

static void
iface_put(uint16_t port, uint16_t vlan, int fam, uint32_t id)
{
	struct ip_iface *ifc = iface_get(port, vlan, false);

	if (ifc == NULL)
		return;
	if (--ic.nhc[id].refs == 0) {
		if (ifc->glean[fam] == id)
			ifc->glean[fam] = 0;
		if (ifc->local[fam] == id)
			ifc->local[fam] = 0;
		ip_nh_release(id);
	}
	ifc->refs[fam]--;
	if (ifc->refs[0] + ifc->refs[1] == 0)
		ifc->used = false;
}

/* ---- FIB access ----------------------------------------------------------- */

static int
fam_idx(const struct egw_ip_addr *a)
{
	return a->family == AF_INET6 ? 1 : 0;
}

static uint32_t
v4_host(const struct egw_ip_addr *a)
{
	uint32_t x;

	memcpy(&x, a->a, 4);
	return rte_be_to_cpu_32(x);
}

/* The RIB node of an exact prefix, or NULL. */
static void *
rib_exact(const struct egw_ip_addr *a, uint8_t len)
{
	if (a->family == AF_INET)
		return rte_rib_lookup_exact(rte_fib_get_rib(ip_dp.fib4), v4_host(a), len);
	return rte_rib6_lookup_exact(rte_fib6_get_rib(ip_dp.fib6), a->a, len);
}

static struct rt_ext *
rib_ext(const struct egw_ip_addr *a, void *node)
{
	if (a->family == AF_INET)
		return rte_rib_get_ext(node);
	return rte_rib6_get_ext(node);
}

static uint64_t
rib_nh(const struct egw_ip_addr *a, void *node)
{
	uint64_t v = 0;

	if (a->family == AF_INET)
		rte_rib_get_nh(node, &v);
	else
		rte_rib6_get_nh(node, &v);
	return v;
}

/* Add or replace a FIB entry and record its type. */
static int
fib_set(const struct egw_ip_addr *a, uint8_t len, uint64_t v, uint8_t type)
{
	bool had = rib_exact(a, len) != NULL;
	void *node;
	int rc;

	/* a session route's value is its own, never its parent's: no shadow */
	if (!had && len > 24 && !(v & FIB_SESS)) {
		/*
		 * DPDK 22.11 dir24_8.c and trie.c: adding a prefix longer than
		 * /24 whose parent has the same next hop returns before the
		 * tbl8 reservation is counted, and its delete uncounts one: the
		 * counter wraps and every later long prefix is refused with
		 * -ENOSPC. So a new long prefix goes in with a value of its
		 * own first (a shadow slot showing the same next hop, so a
		 * worker sees no difference), then takes its value.
		 */
		uint64_t sv;

		if (v & FIB_GROUP) {
			sv = (ip_dp.max_grp - 1) | FIB_GROUP;
			/* pairs with the acquire load in ip_nh_of() */
			__atomic_store_n(&ip_dp.grp[ip_dp.max_grp - 1],
					 ip_dp.grp[(uint32_t)v & ~FIB_GROUP], __ATOMIC_RELEASE);
		} else {
			sv = NH_ID_SHADOW;
			/* pairs with the acquire load in ip_nh_of() */
			__atomic_store_n(&ip_dp.nh[NH_ID_SHADOW], ip_dp.nh[(uint32_t)v],
					 __ATOMIC_RELEASE);
		}
		if (a->family == AF_INET)
			rc = rte_fib_add(ip_dp.fib4, v4_host(a), len, sv);
		else
			rc = rte_fib6_add(ip_dp.fib6, a->a, len, sv);
		if (rc == 0)
			rc = a->family == AF_INET ? rte_fib_add(ip_dp.fib4, v4_host(a), len, v)
						  : rte_fib6_add(ip_dp.fib6, a->a, len, v);
		/* no worker may still read the shadow slot when it changes */
		if (ic.p.qsbr != NULL)
			rte_rcu_qsbr_synchronize(ic.p.qsbr, RTE_QSBR_THRID_INVALID);
		if (v & FIB_GROUP)
			__atomic_store_n(&ip_dp.grp[ip_dp.max_grp - 1], NULL, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&ip_dp.nh[NH_ID_SHADOW], ip_dp.nh[NH_ID_NOROUTE],
					 __ATOMIC_RELEASE);
	} else if (a->family == AF_INET) {
		rc = rte_fib_add(ip_dp.fib4, v4_host(a), len, v);
	} else {
		rc = rte_fib6_add(ip_dp.fib6, a->a, len, v);
	}
	if (rc < 0)
		return rc == -ENOSPC || rc == -ENOMEM ? -ENOSPC : rc;
	node = rib_exact(a, len);
	if (node == NULL)
		return -ENOENT;
	rib_ext(a, node)->type = type;
	if (!had)
		ic.routes_total[fam_idx(a)]++;
	return 0;
}

static int
fib_del(const struct egw_ip_addr *a, uint8_t len)
{
	int rc;

	if (a->family == AF_INET)
		rc = rte_fib_delete(ip_dp.fib4, v4_host(a), len);
	else
		rc = rte_fib6_delete(ip_dp.fib6, a->a, len);
	if (rc == 0)
		ic.routes_total[fam_idx(a)]--;
	return rc;
}

uint64_t
ip_fib_lookup(const struct egw_ip_addr *a)
{
	uint64_t v = NH_ID_NOROUTE;

	if (a->family == AF_INET) {
		uint32_t ip = v4_host(a);

		rte_fib_lookup_bulk(ip_dp.fib4, &ip, &v, 1);
	} else {
		uint8_t ip[1][16];

		memcpy(ip[0], a->a, 16);
		rte_fib6_lookup_bulk(ip_dp.fib6, ip, &v, 1);
	}
	return v;
}

/* Type of the route of an exact prefix, -1 if none. */
static int
route_type(const struct egw_ip_addr *a, uint8_t len)
{
	void *node = rib_exact(a, len);

	return node == NULL ? -1 : rib_ext(a, node)->type;
}

static struct egw_ip_addr
host_prefix(const struct egw_ip_addr *a, uint8_t *len)
{
	*len = a->family == AF_INET ? 32 : 128;
	return *a;
}

int
ip_host_route_add(const struct egw_ip_addr *a, uint32_t id)
{
	uint8_t len;
	struct egw_ip_addr p = host_prefix(a, &len);

	if (route_type(&p, len) >= 0)
		return -EEXIST; /* a configured route of that prefix wins */
	return fib_set(&p, len, id, RT_NEIGH_HOST);
}

void
ip_host_route_del(const struct egw_ip_addr *a, uint32_t id)
{
	uint8_t len;
	struct egw_ip_addr p = host_prefix(a, &len);
	void *node = rib_exact(&p, len);

	if (node != NULL && rib_ext(&p, node)->type == RT_NEIGH_HOST && rib_nh(&p, node) == id)
		fib_del(&p, len);
}

/* ---- addresses ------------------------------------------------------------ */

static bool
prefix_clean(const struct egw_ip_addr *a, uint8_t len)
{
	unsigned int bits = a->family == AF_INET ? 32 : 128, i;

	for (i = len; i < bits; i++)
		if (a->a[i / 8] & (0x80 >> (i % 8)))
			return false;
	return true;
}

static struct egw_ip_addr
mask(const struct egw_ip_addr *a, uint8_t len)
{
	struct egw_ip_addr m = *a;
	unsigned int bits = a->family == AF_INET ? 32 : 128, i;

	for (i = len; i < bits; i++)
		m.a[i / 8] &= (uint8_t) ~(0x80 >> (i % 8));
	return m;
}

bool
ip_addr_unicast(const struct egw_ip_addr *a)
{
	static const uint8_t zero[16];

	if (a->family == AF_INET) {
		uint32_t x = v4_host(a);

		return x != 0 && (x >> 24) != 0 && (x >> 24) != 127 && (x >> 28) < 0xe;
	}
	if (a->family != AF_INET6)
		return false;
	if (memcmp(a->a, zero, 16) == 0 || a->a[0] == 0xff)
		return false;
	if (memcmp(a->a, zero, 15) == 0 && a->a[15] == 1)
		return false; /* ::1 */
	return true;
}

bool
ip_addr_is_local(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	const struct ip_port_ctl *pc;
	unsigned int i;

	if (port >= RTE_MAX_ETHPORTS)
		return false;
	pc = &ic.port[port];
	for (i = 0; i < RTE_DIM(pc->addr); i++) {
		const struct ip_addr_ent *e = &pc->addr[i];

		if (e->used && (vlan == UINT16_MAX || e->vlan == vlan) &&
		    e->a.family == a->family && memcmp(e->a.a, a->a, 16) == 0)
			return true;
	}
	return false;
}

static bool
in_prefix(const struct egw_ip_addr *x, const struct egw_ip_addr *p, uint8_t len)
{
	struct egw_ip_addr a = mask(x, len), b = mask(p, len);

	return a.family == b.family && memcmp(a.a, b.a, 16) == 0;
}

bool
ip_addr_source(uint16_t port, uint16_t vlan, const struct egw_ip_addr *dst, struct egw_ip_addr *src)
{
	const struct ip_port_ctl *pc = &ic.port[port];
	const struct ip_addr_ent *best = NULL;
	bool dst_ll = dst->family == AF_INET6 && dst->a[0] == 0xfe && (dst->a[1] & 0xc0) == 0x80;
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->addr); i++) {
		const struct ip_addr_ent *e = &pc->addr[i];

		if (!e->used || e->vlan != vlan || e->a.family != dst->family)
			continue;
		if (dst_ll && e->link_local)
			best = e; /* link-local to link-local */
		else if (!dst_ll && !e->link_local && in_prefix(dst, &e->a, e->len))
			best = e;
		else if (best == NULL)
			best = e;
	}
	if (best == NULL)
		return false;
	*src = best->a;
	return true;
}

static struct ip_addr_ent *
addr_find(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	struct ip_port_ctl *pc = &ic.port[port];
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->addr); i++) {
		struct ip_addr_ent *e = &pc->addr[i];

		if (e->used && e->vlan == vlan && e->a.family == a->family &&
		    memcmp(e->a.a, a->a, 16) == 0)
			return e;
	}
	return NULL;
}

/* Another address of the interface in the same prefix (its connected route). */
static bool
addr_prefix_shared(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, uint8_t len,
		   const struct ip_addr_ent *self)
{
	struct ip_port_ctl *pc = &ic.port[port];
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->addr); i++) {
		struct ip_addr_ent *e = &pc->addr[i];

		if (e != self && e->used && e->vlan == vlan && !e->link_local && e->len == len &&
		    in_prefix(&e->a, a, len))
			return true;
	}
	return false;
}

static void
eui64_ll(uint16_t port, struct egw_ip_addr *ll)
{
	const uint8_t *m = ic.port[port].mac.addr_bytes;

	memset(ll, 0, sizeof(*ll));
	ll->family = AF_INET6;
	ll->a[0] = 0xfe;
	ll->a[1] = 0x80;
	ll->a[8] = m[0] ^ 0x02;
	ll->a[9] = m[1];
	ll->a[10] = m[2];
	ll->a[11] = 0xff;
	ll->a[12] = 0xfe;
	ll->a[13] = m[3];
	ll->a[14] = m[4];
	ll->a[15] = m[5];
}

static struct ip_addr_ent *
addr_slot(uint16_t port)
{
	struct ip_port_ctl *pc = &ic.port[port];
	unsigned int i;

	for (i = 0; i < RTE_DIM(pc->addr); i++)
		if (!pc->addr[i].used)
			return &pc->addr[i];
	return NULL;
}

static unsigned int
addr_count(uint16_t port, int family, bool link_local)
{
	struct ip_port_ctl *pc = &ic.port[port];
	unsigned int i, n = 0;

	for (i = 0; i < RTE_DIM(pc->addr); i++)
		if (pc->addr[i].used && pc->addr[i].a.family == family &&
		    pc->addr[i].link_local == link_local)
			n++;
	return n;
}

/* The local route of an address (and its reference on the local next hop). */
static int
local_route_add(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	uint8_t hl = a->family == AF_INET ? 32 : 128;
	int t = route_type(a, hl), id, rc;

	if (t >= 0 && t != RT_NEIGH_HOST)
		return -EEXIST;
	id = iface_nh(port, vlan, fam_idx(a), NH_LOCAL);
	if (id < 0)
		return id;
	if (t == RT_NEIGH_HOST)
		ip_neigh_host_route_lost((uint32_t)rib_nh(a, rib_exact(a, hl)));
	rc = fib_set(a, hl, (uint32_t)id, EGW_IP_RT_LOCAL);
	if (rc < 0) {
		iface_put(port, vlan, fam_idx(a), (uint32_t)id);
		return rc;
	}
	ic.routes[fam_idx(a)][EGW_IP_RT_LOCAL]++;
	return 0;
}

static void
local_route_del(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a)
{
	uint8_t hl = a->family == AF_INET ? 32 : 128;
	void *node = rib_exact(a, hl);
	uint64_t v;

	if (node == NULL || rib_ext(a, node)->type != EGW_IP_RT_LOCAL)
		return;
	v = rib_nh(a, node);
	fib_del(a, hl);
	ic.routes[fam_idx(a)][EGW_IP_RT_LOCAL]--;
	iface_put(port, vlan, fam_idx(a), (uint32_t)v);
}

int
egw_ip_addr_add(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, uint8_t len)
{
	unsigned int bits;
	struct ip_addr_ent *e, *ll = NULL;
	struct egw_ip_addr net, bcast, lla;
	bool conn = false, bc = false;
	int fam, rc, gid = -1;

	if (!ic.init || a == NULL || port >= RTE_MAX_ETHPORTS || vlan > 4094)
		return -EINVAL;
	if (!ip_port_routed(port) || !ip_addr_unicast(a))
		return -EINVAL;
	bits = a->family == AF_INET ? 32 : 128;
	if (len == 0 || len > bits)
		return -EINVAL;
	fam = fam_idx(a);
	if (addr_find(port, vlan, a) != NULL)
		return -EEXIST;
	if (a->family == AF_INET6 && a->a[0] == 0xfe && (a->a[1] & 0xc0) == 0x80)
		return -EINVAL; /* the link-local address is edgegw's own (EUI-64) */
	e = addr_slot(port);
	if (e == NULL || addr_count(port, a->family, false) >= EGW_IP_ADDR_MAX - 1)
		return -ENOSPC;
	net = mask(a, len);
	if (len < bits && !addr_prefix_shared(port, vlan, &net, len, NULL)) {
		int t = route_type(&net, len);

		if (t >= 0)
			return -EEXIST;
		conn = true;
	}
	if (a->family == AF_INET && len <= 30) {
		uint32_t b = v4_host(&net) | (len == 0 ? UINT32_MAX : (UINT32_MAX >> len));

		bcast = net;
		b = rte_cpu_to_be_32(b);
		memcpy(bcast.a, &b, 4);
		bc = route_type(&bcast, 32) < 0;
	}
	/* everything that can fail first, then the FIB */
	rc = local_route_add(port, vlan, a);
	if (rc < 0)
		return rc;
	if (conn) {
		gid = iface_nh(port, vlan, fam, NH_GLEAN);
		if (gid < 0 || (rc = fib_set(&net, len, (uint32_t)gid, EGW_IP_RT_CONNECTED)) < 0) {
			if (gid >= 0)
				iface_put(port, vlan, fam, (uint32_t)gid);
			local_route_del(port, vlan, a);
			return gid < 0 ? gid : rc;
		}
		ic.routes[fam][EGW_IP_RT_CONNECTED]++;
	}
	if (bc && fib_set(&bcast, 32, NH_ID_BCAST, RT_BCAST) < 0)
		bc = false;
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->vlan = vlan;
	e->len = len;
	e->a = *a;
	if (a->family == AF_INET6 && addr_count(port, AF_INET6, true) == 0) {
		eui64_ll(port, &lla);
		ll = addr_slot(port);
		if (ll != NULL && local_route_add(port, vlan, &lla) == 0) {
			memset(ll, 0, sizeof(*ll));
			ll->used = true;
			ll->vlan = vlan;
			ll->len = 64;
			ll->link_local = true;
			ll->a = lla;
		}
	}
	port_dp_publish(port);
	ip_neigh_announce(port, vlan, a);
	return 0;
}

int
egw_ip_addr_del(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, uint8_t len)
{
	struct ip_addr_ent *e;
	struct egw_ip_addr net;
	unsigned int bits, i;
	int fam;

	if (!ic.init || a == NULL || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	e = addr_find(port, vlan, a);
	if (e == NULL || e->link_local || (len != 0 && e->len != len))
		return -ENOENT;
	len = e->len;
	bits = a->family == AF_INET ? 32 : 128;
	fam = fam_idx(a);
	net = mask(a, len);
	local_route_del(port, vlan, a);
	if (len < bits && !addr_prefix_shared(port, vlan, &net, len, e)) {
		void *node = rib_exact(&net, len);

		if (node != NULL && rib_ext(&net, node)->type == EGW_IP_RT_CONNECTED) {
			uint64_t v = rib_nh(&net, node);

			fib_del(&net, len);
			ic.routes[fam][EGW_IP_RT_CONNECTED]--;
			iface_put(port, vlan, fam, (uint32_t)v);
		}
	}
	if (a->family == AF_INET && len <= 30) {
		struct egw_ip_addr bcast = net;
		uint32_t b = rte_cpu_to_be_32(v4_host(&net) | (UINT32_MAX >> len));
		void *node;

		memcpy(bcast.a, &b, 4);
		node = rib_exact(&bcast, 32);
		if (node != NULL && rib_ext(&bcast, node)->type == RT_BCAST &&
		    !addr_prefix_shared(port, vlan, &net, len, e))
			fib_del(&bcast, 32);
	}
	e->used = false;
	if (a->family == AF_INET6 && addr_count(port, AF_INET6, false) == 0) {
		struct ip_port_ctl *pc = &ic.port[port];

		for (i = 0; i < RTE_DIM(pc->addr); i++) {
			struct ip_addr_ent *l = &pc->addr[i];

			if (l->used && l->link_local) {
				local_route_del(port, l->vlan, &l->a);
				l->used = false;
			}
		}
	}
	/* neighbours on a network that is gone stay until they age out or
	 * their routes go */
	port_dp_publish(port);
	return 0;
}

int
egw_ip_addr_walk(int (*fn)(const struct egw_ip_addr_info *a, void *arg), void *arg)
{
	uint16_t p;
	unsigned int i;
	int rc;

	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		const struct ip_port_ctl *pc = &ic.port[p];

		for (i = 0; i < RTE_DIM(pc->addr); i++) {
			const struct ip_addr_ent *e = &pc->addr[i];
			struct egw_ip_addr_info ai;

			if (!e->used)
				continue;
			ai.port = p;
			ai.vlan = e->vlan;
			ai.addr = e->a;
			ai.len = e->len;
			ai.link_local = e->link_local;
			rc = fn(&ai, arg);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- routes --------------------------------------------------------------- */

/* The port and VLAN of a gateway: given, or the connected route's. */
static int
path_resolve(struct egw_ip_path *p, char *err, size_t errlen)
{
	const struct ip_nh *nh;
	uint64_t v;

	if (!ip_addr_unicast(&p->gw)) {
		snprintf(err, errlen, "gateway is not a unicast address");
		return -EINVAL;
	}
	if (p->port != UINT16_MAX) {
		if (!ip_port_routed(p->port)) {
			snprintf(err, errlen, "port %u is not a routed port", p->port);
			return -EINVAL;
		}
		return 0;
	}
	v = ip_fib_lookup(&p->gw);
	nh = (v & FIB_GROUP) ? NULL : ip_nh_get((uint32_t)v);
	/* a connected network, or a neighbour already known (its host route) */
	if (nh == NULL || (nh->kind != NH_GLEAN && nh->kind != NH_NEIGH)) {
		snprintf(err, errlen,
			 "gateway is on no connected network (add an address, or name "
			 "the port)");
		return -EINVAL;
	}
	p->port = nh->port;
	p->vlan = ip_nh_vlan(nh);
	return 0;
}

static int
grp_alloc(void)
{
	if (ic.grp_nfree == 0 && ic.dq != NULL)
		rte_rcu_qsbr_dq_reclaim(ic.dq, UINT32_MAX, NULL, NULL, NULL);
	if (ic.grp_nfree == 0)
		return -ENOSPC;
	return (int)ic.grp_free[--ic.grp_nfree];
}

/* The key of a path set: the next hops in ascending order. */
struct grp_key {
	uint32_t n;
	uint32_t nh[EGW_IP_ECMP_MAX];
};

static void
grp_key_of(struct grp_key *k, const uint32_t *ids, unsigned int n)
{
	unsigned int i, j;

	memset(k, 0, sizeof(*k));
	k->n = n;
	for (i = 0; i < n; i++) {
		uint32_t x = ids[i];

		for (j = i; j > 0 && k->nh[j - 1] > x; j--)
			k->nh[j] = k->nh[j - 1];
		k->nh[j] = x;
	}
}

static void
grp_release(uint32_t gid)
{
	struct ip_nhg *g = ip_dp.grp[gid];
	struct grp_key k;
	unsigned int i;

	if (ic.grp_refs[gid] > 1) {
		ic.grp_refs[gid]--;
		return;
	}
	ic.grp_refs[gid] = 0;
	if (g != NULL) {
		grp_key_of(&k, g->nh, g->n);
		rte_hash_del_key(ic.grp_h, &k);
	}

	/* pairs with the acquire load in ip_nh_of() */
	__atomic_store_n(&ip_dp.grp[gid], NULL, __ATOMIC_RELEASE);
	if (g != NULL)
		for (i = 0; i < g->n; i++)
			nh_unref(g->nh[i]);
	defer(g, gid, true);
}

/* Drop what a FIB value holds. */
static void
value_put(uint64_t v)
{
	if (v & FIB_SESS)
		return;
	if (v & FIB_GROUP)
		grp_release((uint32_t)v & ~FIB_GROUP);
	else
		nh_unref((uint32_t)v);
}

static int
route_port_check(const struct egw_ip_addr *a, uint16_t port, char *err, size_t errlen)
{
	if (!ip_port_routed(port)) {
		snprintf(err, errlen,
			 "port %u is not a routed port (an access port carries PPPoE "
			 "sessions only)",
			 port);
		return -EINVAL;
	}
	(void)a;
	return 0;
}

int
egw_ip_route_add(const struct egw_ip_addr *prefix, uint8_t len, enum egw_ip_route_type type,
		 const struct egw_ip_path *paths, unsigned int n, char *err, size_t errlen)
{
	struct egw_ip_path pp[EGW_IP_ECMP_MAX];
	uint32_t ids[EGW_IP_ECMP_MAX];
	unsigned int i, k, bits;
	uint64_t v;
	int fam, rc, id, t;

	if (!ic.init || prefix == NULL ||
	    (prefix->family != AF_INET && prefix->family != AF_INET6)) {
		snprintf(err, errlen, "not initialised or not an IP prefix");
		return -EINVAL;
	}
	bits = prefix->family == AF_INET ? 32 : 128;
	fam = fam_idx(prefix);
	if (len > bits || !prefix_clean(prefix, len)) {
		snprintf(err, errlen, "prefix has bits set past /%u", len);
		return -EINVAL;
	}
	if ((type == EGW_IP_RT_VIA && (n == 0 || n > EGW_IP_ECMP_MAX)) ||
	    (type == EGW_IP_RT_DEV && n != 1) ||
	    ((type == EGW_IP_RT_BLACKHOLE || type == EGW_IP_RT_UNREACH ||
	      type == EGW_IP_RT_SESSION) &&
	     n != 0) ||
	    type >= EGW_IP_RT_CONNECTED) {
		snprintf(err, errlen, "wrong number of paths (%u) for a %s route", n,
			 egw_ip_route_type_name(type));
		return -EINVAL;
	}
	t = route_type(prefix, len);
	if (t >= 0 && t != RT_NEIGH_HOST) {
		snprintf(err, errlen, "a %s route of this prefix exists (delete it first)",
			 egw_ip_route_type_name((unsigned int)t));
		return -EEXIST;
	}
	for (i = 0; i < n; i++) {
		pp[i] = paths[i];
		if (type == EGW_IP_RT_DEV) {
			rc = route_port_check(prefix, pp[i].port, err, errlen);
			if (rc < 0)
				return rc;
			continue;
		}
		if (pp[i].gw.family != prefix->family) {
			snprintf(err, errlen, "gateway of another family than the prefix");
			return -EINVAL;
		}
		rc = path_resolve(&pp[i], err, errlen);
		if (rc < 0)
			return rc;
		for (k = 0; k < i; k++) {
			if (pp[k].port == pp[i].port && pp[k].vlan == pp[i].vlan &&
			    memcmp(pp[k].gw.a, pp[i].gw.a, 16) == 0) {
				snprintf(err, errlen, "the same gateway twice");
				return -EINVAL;
			}
		}
	}
	/* the next hops, each with a reference */
	switch (type) {
	case EGW_IP_RT_BLACKHOLE: v = NH_ID_BLACKHOLE; break;
	case EGW_IP_RT_UNREACH: v = NH_ID_UNREACH; break;
	case EGW_IP_RT_SESSION: v = NH_ID_SESSION; break;
	case EGW_IP_RT_DEV:
		id = iface_nh(pp[0].port, pp[0].vlan, fam, NH_GLEAN);
		if (id < 0) {
			snprintf(err, errlen, "no room for the next hop");
			return id;
		}
		v = (uint32_t)id;
		break;
	default:
		for (i = 0; i < n; i++) {
			id = ip_neigh_get(pp[i].port, pp[i].vlan, &pp[i].gw, false);
			if (id < 0) {
				while (i-- > 0)
					ip_neigh_put(ids[i]);
				snprintf(err, errlen, "no room for the next hop (neighbour table)");
				return id;
			}
			ids[i] = (uint32_t)id;
		}
		if (n == 1) {
			v = ids[0];
			break;
		}
		{
			struct grp_key gk;
			void *data;

			/* the same paths as another route: its group, and the
			 * references just taken go back (the group holds its own) */
			grp_key_of(&gk, ids, n);
			if (rte_hash_lookup_data(ic.grp_h, &gk, &data) >= 0) {
				id = (int)(uintptr_t)data;
				ic.grp_refs[id]++;
				for (i = 0; i < n; i++)
					ip_neigh_put(ids[i]);
				v = (uint32_t)id | FIB_GROUP;
				break;
			}
		}
		id = grp_alloc();
		if (id >= 0) {
			struct ip_nhg *g = rte_zmalloc_socket("egw_ip_nhg", sizeof(*g),
							      RTE_CACHE_LINE_SIZE, ic.p.socket);

			if (g == NULL) {
				ic.grp_free[ic.grp_nfree++] = (uint32_t)id;
				id = -ENOMEM;
			} else {
				struct grp_key gk;

				g->n = n;
				memcpy(g->nh, ids, n * sizeof(ids[0]));
				grp_key_of(&gk, ids, n);
				if (rte_hash_add_key_data(ic.grp_h, &gk, (void *)(uintptr_t)id) <
				    0) {
					rte_free(g);
					ic.grp_free[ic.grp_nfree++] = (uint32_t)id;
					id = -ENOSPC;
				} else {
					ic.grp_refs[id] = 1;
					/* pairs with the acquire load in ip_nh_of() */
					__atomic_store_n(&ip_dp.grp[id], g, __ATOMIC_RELEASE);
				}
			}
		}
		if (id < 0) {
			for (i = 0; i < n; i++)
				ip_neigh_put(ids[i]);
			snprintf(err, errlen, "no room for the ECMP group");
			return id;
		}
		v = (uint32_t)id | FIB_GROUP;
		break;
	}
	/* a neighbour's own host route gives way to a configured route of the
	 * same prefix; the neighbour forgets it had one, so that it is made
	 * again (on the next packet to it) if this route goes */
	if (t == RT_NEIGH_HOST)
		ip_neigh_host_route_lost((uint32_t)rib_nh(prefix, rib_exact(prefix, len)));
	rc = fib_set(prefix, len, v, (uint8_t)type);
	if (rc < 0) {
		value_put(v);
		snprintf(err, errlen, "%s",
			 rc == -ENOSPC ? "FIB full (a larger table: --ip-routes)" : strerror(-rc));
		return rc;
	}
	ic.routes[fam][type]++;
	for (i = 0; i < n; i++)
		ic.port[pp[i].port].routes++;
	return 0;
}

int
egw_ip_route_del(const struct egw_ip_addr *prefix, uint8_t len)
{
	struct egw_ip_path pp[EGW_IP_ECMP_MAX];
	unsigned int np = 0, i;
	void *node;
	uint64_t v;
	int type;

	if (!ic.init || prefix == NULL || (prefix->family != AF_INET && prefix->family != AF_INET6))
		return -EINVAL;
	node = rib_exact(prefix, len);
	if (node == NULL)
		return -ENOENT;
	type = rib_ext(prefix, node)->type;
	if (type >= EGW_IP_RT_CONNECTED)
		return type == RT_NEIGH_HOST ? -ENOENT : -EPERM;
	v = rib_nh(prefix, node);
	/* the ports it named, for their route counts */
	if (v & FIB_GROUP) {
		const struct ip_nhg *g = ip_dp.grp[(uint32_t)v & ~FIB_GROUP];

		for (i = 0; g != NULL && i < g->n; i++)
			pp[np++].port = ip_dp.nh[g->nh[i]]->port;
	} else if (type == EGW_IP_RT_VIA || type == EGW_IP_RT_DEV) {
		pp[np++].port = ip_dp.nh[(uint32_t)v]->port;
	}
	fib_del(prefix, len);
	ic.routes[fam_idx(prefix)][type]--;
	if (type == EGW_IP_RT_DEV) {
		const struct ip_nh *nh = ip_dp.nh[(uint32_t)v];
		uint16_t vlan = ip_nh_vlan(nh);

		iface_put(nh->port, vlan, fam_idx(prefix), (uint32_t)v);
	} else {
		value_put(v);
	}
	for (i = 0; i < np; i++)
		ic.port[pp[i].port].routes--;
	/* a known neighbour of that address has its host route again */
	if (len == (prefix->family == AF_INET ? 32 : 128))
		ip_neigh_host_route_restore(prefix);
	return 0;
}

/* ---- session routes ----------------------------------------------------- */

static int
session_prefix_check(const struct egw_ip_addr *prefix, uint8_t len, uint32_t key)
{
	if (!ic.init || prefix == NULL ||
	    (prefix->family != AF_INET && prefix->family != AF_INET6) ||
	    len > (prefix->family == AF_INET ? 32 : 128) || !prefix_clean(prefix, len) ||
	    key == EGW_IP_SESSION_NONE)
		return -EINVAL;
	if (ic.p.max_sessions == 0)
		return -ENOTSUP;
	return key > ic.p.max_sessions ? -EINVAL : 0;
}

int
egw_ip_route_session_add(const struct egw_ip_addr *prefix, uint8_t len, uint32_t key)
{
	int rc;

	rc = session_prefix_check(prefix, len, key);
	if (rc < 0)
		return rc;
	if (rib_exact(prefix, len) != NULL)
		return -EEXIST;
	rc = fib_set(prefix, len, FIB_SESS | key, EGW_IP_RT_SUBSCRIBER);
	if (rc < 0)
		return rc;
	ic.routes[fam_idx(prefix)][EGW_IP_RT_SUBSCRIBER]++;
	return 0;
}

int
egw_ip_route_session_del(const struct egw_ip_addr *prefix, uint8_t len, uint32_t key)
{
	void *node;
	int rc;

	rc = session_prefix_check(prefix, len, key);
	if (rc < 0)
		return rc == -EINVAL && !ic.init ? -ENOENT : rc;
	node = rib_exact(prefix, len);
	if (node == NULL || rib_ext(prefix, node)->type != EGW_IP_RT_SUBSCRIBER ||
	    rib_nh(prefix, node) != (FIB_SESS | key))
		return -ENOENT;
	rc = fib_del(prefix, len);
	if (rc < 0)
		return rc;
	ic.routes[fam_idx(prefix)][EGW_IP_RT_SUBSCRIBER]--;
	return 0;
}

static void
route_info(const struct egw_ip_addr *a, uint8_t len, void *node, struct egw_ip_route_info *r)
{
	uint64_t v = rib_nh(a, node);
	const struct ip_nh *nh;

	memset(r, 0, sizeof(*r));
	r->prefix = *a;
	r->len = len;
	r->type = rib_ext(a, node)->type;
	/* a neighbour's host route is part of its connected network */
	if (r->type == RT_NEIGH_HOST)
		r->type = EGW_IP_RT_CONNECTED;
	if (v & FIB_SESS) {
		r->session = (uint32_t)v & FIB_SESS_KEY;
		return;
	}
	if (v & FIB_GROUP) {
		const struct ip_nhg *g = ip_dp.grp[(uint32_t)v & ~FIB_GROUP];
		unsigned int i;

		for (i = 0; g != NULL && i < g->n; i++)
			ip_neigh_info(g->nh[i], &r->paths[r->n_paths++]);
		return;
	}
	nh = ip_nh_get((uint32_t)v);
	if (nh == NULL)
		return;
	if (nh->kind == NH_NEIGH) {
		ip_neigh_info((uint32_t)v, &r->paths[r->n_paths++]);
	} else if (nh->kind == NH_GLEAN || nh->kind == NH_LOCAL) {
		r->paths[0].port = nh->port;
		r->paths[0].vlan = ip_nh_vlan(nh);
		r->n_paths = 1;
	}
}

/* One route of a walk (a neighbour's host route is not one). */
static int
walk_one(const struct egw_ip_addr *a, uint8_t len, void *node,
	 int (*fn)(const struct egw_ip_route_info *r, void *arg), void *arg)
{
	struct egw_ip_route_info ri;

	if (node == NULL || rib_ext(a, node)->type == RT_NEIGH_HOST)
		return 0;
	route_info(a, len, node, &ri);
	return fn(&ri, arg);
}

int
egw_ip_route_walk(int family, int (*fn)(const struct egw_ip_route_info *r, void *arg), void *arg)
{
	struct egw_ip_addr a;
	uint8_t d;
	int rc;

	if (!ic.init)
		return -EINVAL;
	if (family == 0 || family == AF_INET) {
		struct rte_rib *rib = rte_fib_get_rib(ip_dp.fib4);
		struct rte_rib_node *node = NULL;

		while ((node = rte_rib_get_nxt(rib, 0, 0, node, RTE_RIB_GET_NXT_ALL)) != NULL) {
			uint32_t ip, be;

			rte_rib_get_ip(node, &ip);
			rte_rib_get_depth(node, &d);
			memset(&a, 0, sizeof(a));
			a.family = AF_INET;
			be = rte_cpu_to_be_32(ip);
			memcpy(a.a, &be, 4);
			rc = walk_one(&a, d, node, fn, arg);
			if (rc != 0)
				return rc;
		}
		/* rte_rib_get_nxt() leaves 0.0.0.0/0 itself out */
		memset(&a, 0, sizeof(a));
		a.family = AF_INET;
		rc = walk_one(&a, 0, rib_exact(&a, 0), fn, arg);
		if (rc != 0)
			return rc;
	}
	if (family == 0 || family == AF_INET6) {
		struct rte_rib6 *rib = rte_fib6_get_rib(ip_dp.fib6);
		struct rte_rib6_node *node = NULL;
		uint8_t zero[16] = {0};

		while ((node = rte_rib6_get_nxt(rib, zero, 0, node, RTE_RIB6_GET_NXT_ALL)) !=
		       NULL) {
			memset(&a, 0, sizeof(a));
			a.family = AF_INET6;
			rte_rib6_get_ip(node, a.a);
			rte_rib6_get_depth(node, &d);
			rc = walk_one(&a, d, node, fn, arg);
			if (rc != 0)
				return rc;
		}
		memset(&a, 0, sizeof(a));
		a.family = AF_INET6;
		rc = walk_one(&a, 0, rib_exact(&a, 0), fn, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
egw_ip_route_lookup(const struct egw_ip_addr *a, struct egw_ip_route_info *r)
{
	void *node;
	struct egw_ip_addr p;
	uint8_t d;

	if (!ic.init || a == NULL)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.family = a->family;
	if (a->family == AF_INET) {
		uint32_t ip, be;

		node = rte_rib_lookup(rte_fib_get_rib(ip_dp.fib4), v4_host(a));
		if (node == NULL)
			return -ENOENT;
		rte_rib_get_ip(node, &ip);
		rte_rib_get_depth(node, &d);
		be = rte_cpu_to_be_32(ip);
		memcpy(p.a, &be, 4);
	} else if (a->family == AF_INET6) {
		node = rte_rib6_lookup(rte_fib6_get_rib(ip_dp.fib6), a->a);
		if (node == NULL)
			return -ENOENT;
		rte_rib6_get_ip(node, p.a);
		rte_rib6_get_depth(node, &d);
	} else {
		return -EINVAL;
	}
	route_info(&p, d, node, r);
	return 0;
}

void
egw_ip_route_count(unsigned int count[2][EGW_IP_RT_MAX])
{
	memcpy(count, ic.routes, sizeof(ic.routes));
}

void
egw_ip_mem(struct egw_ip_mem *m)
{
	memset(m, 0, sizeof(*m));
	m->routes4 = ic.routes_total[0];
	m->routes6 = ic.routes_total[1];
	m->nh = ic.nh_used;
	m->neigh = ip_neigh_count();
	/* measured when the FIBs were made: rte_fib/rte_fib6 allocate their
	 * tables and RIB node pools (2 x max_routes nodes) up front */
	m->fib4_bytes = ic.fib4_bytes;
	m->fib6_bytes = ic.fib6_bytes;
	m->fib6_avx512 = ic.fib6_avx512;
	m->fib4_prefetch = ip_dp.tbl8_4 != NULL ? 2 : ip_dp.tbl24_4 != NULL ? 1 : 0;
	m->nh_bytes = (size_t)ip_dp.max_nh * (sizeof(void *) + sizeof(struct ip_nh_ctl) + 4) +
		      (size_t)ic.nh_used * sizeof(struct ip_nh);
}

/* ---- init ----------------------------------------------------------------- */

/* Bytes allocated on a socket's heap (any socket: the sum). */
static size_t
heap_used(int socket)
{
	struct rte_malloc_socket_stats st;
	size_t n = 0;
	int s;

	if (socket >= 0 && rte_malloc_get_socket_stats(socket, &st) == 0)
		return st.heap_allocsz_bytes;
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats(s, &st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/*
 * DPDK's AVX-512 TRIE lookup (gathers walk 16 addresses' levels at once)
 * is about twice as fast as the scalar one with 200,000 IPv6 prefixes, but
 * rte_fib6 picks it only when the EAL's SIMD width allows 512 bits, which
 * it does not by default. The width is raised for this one choice and put
 * back, unless the user set it (--force-max-simd-bitwidth: the user's
 * choice stands). CPUs without AVX-512 keep the scalar lookup. IPv4 keeps
 * DIR24_8's scalar lookup: its AVX-512 one was no faster here.
 */
/*
 * Where DIR24_8 keeps its second level (tbl8 groups), for a prefetch of
 * the group line of each destination whose first-level entry names one
 * (egw_ip_fwd_burst()): about 5% of the destinations of a full table fall
 * in a /24 that holds a longer prefix, and each such lookup is a second,
 * dependent miss. The pointer sits in the table's private header (DPDK
 * 22.11 lib/fib/dir24_8.h: after three counters, the entry size and the
 * default next hop); it is taken only if it points into DPDK memory and a
 * /25 written through the FIB's API reads back from the place it gives.
 * With both places confirmed the data path reads a first-level entry that
 * is a next hop itself (lookup4() in fast.c), and leaves every entry
 * that names a group to rte_fib_lookup_bulk(); the second level is only
 * prefetched.
 */
static void
fib4_tbl8(uint32_t ip24, uint8_t shift)
{
	const uint8_t *dp = rte_fib_get_dp(ip_dp.fib4);
	const uint8_t *t8;
	uint32_t ip = ip24 | 0x80, e = 0, e8 = 0, groups;
	uint64_t nh = 0;

	if (RTE_VER_YEAR != 22 || RTE_VER_MONTH != 11)
		return; /* another layout, perhaps */
	memcpy(&groups, dp, sizeof(groups));
	memcpy(&t8, dp + 24, sizeof(t8));
	if (t8 == NULL || rte_mem_virt2memseg(t8, NULL) == NULL)
		return;
	if (rte_fib_add(ip_dp.fib4, ip, 25, NH_ID_BLACKHOLE) != 0)
		return;
	rte_fib_lookup_bulk(ip_dp.fib4, &ip, &nh, 1);
	memcpy(&e, ip_dp.tbl24_4 + ((size_t)(ip >> 8) << shift), (size_t)1 << shift);
	if (nh == NH_ID_BLACKHOLE && (e & 1) && (e >> 1) < groups) {
		memcpy(&e8, t8 + ((size_t)((e >> 1) * 256 + (ip & 0xff)) << shift),
		       (size_t)1 << shift);
		/* a group entry: the value shifted left by one, bit 0 set */
		if (e8 >> 1 == NH_ID_BLACKHOLE)
			ip_dp.tbl8_4 = t8;
	}
	rte_fib_delete(ip_dp.fib4, ip, 25);
}

/*
 * Where DIR24_8 keeps its first level, for a prefetch of a burst's lines
 * before its header checks (egw_ip_fwd_burst()): with a million prefixes the tbl24 line
 * of almost every packet is a cache miss, and rte_fib_lookup_bulk()
 * prefetches only 15 lookups ahead inside its own loop, after the header
 * checks. DPDK
 * 22.11 keeps the table's layout private (lib/fib/dir24_8.h: a 40-byte
 * header, then tbl24 cache aligned); the place is taken from that layout
 * and confirmed here by a route written and read back through the FIB's
 * own API: two neighbouring /24s with different values, each read back as
 * the value shifted left by one, and the default around them. An
 * unconfirmed place is not used (no prefetch, every lookup
 * rte_fib_lookup_bulk()'s); a confirmed one serves prefetches and, with the
 * second level confirmed too (fib4_tbl8()), the first-level entries that
 * are next hops themselves.
 */
static void
fib4_tbl24(bool entry4)
{
	const uint8_t *t = (const uint8_t *)rte_fib_get_dp(ip_dp.fib4) + RTE_CACHE_LINE_SIZE;
	/* RFC 2544's benchmark block: 198.18.0.0/24, 198.18.1.0/24, and
	 * 198.18.2.0/24 left to the default */
	uint32_t ip[3] = {198u << 24 | 18u << 16, 198u << 24 | 18u << 16 | 1u << 8,
			  198u << 24 | 18u << 16 | 2u << 8};
	static const uint32_t want[3] = {NH_ID_SHADOW, NH_ID_BLACKHOLE, NH_ID_NOROUTE};
	uint64_t nh[3] = {0, 0, 0};
	uint8_t shift = entry4 ? 2 : 1;
	bool ok = true;
	unsigned int i;

	ip_dp.tbl24_4 = NULL;
	ip_dp.tbl8_4 = NULL;
	if (rte_mem_virt2memseg(t, NULL) == NULL)
		return;
	if (rte_fib_add(ip_dp.fib4, ip[0], 24, NH_ID_SHADOW) != 0)
		return;
	if (rte_fib_add(ip_dp.fib4, ip[1], 24, NH_ID_BLACKHOLE) != 0) {
		rte_fib_delete(ip_dp.fib4, ip[0], 24);
		return;
	}
	rte_fib_lookup_bulk(ip_dp.fib4, ip, nh, 3);
	for (i = 0; i < 3; i++) {
		uint32_t e = 0;

		memcpy(&e, t + ((size_t)(ip[i] >> 8) << shift), (size_t)1 << shift);
		/* an entry holds the value shifted left by one (bit 0: a tbl8
		 * group) */
		ok = ok && nh[i] == want[i] && e == want[i] << 1;
	}
	if (ok) {
		ip_dp.tbl24_4 = t;
		ip_dp.tbl24_4_shift = shift;
		fib4_tbl8(ip[0], shift);
	}
	rte_fib_delete(ip_dp.fib4, ip[1], 24);
	rte_fib_delete(ip_dp.fib4, ip[0], 24);
}

static bool
fib6_vector_lookup(void)
{
	uint16_t w = rte_vect_get_max_simd_bitwidth();
	bool raised = false;
	int rc;

	if (w < RTE_VECT_SIMD_512) {
		if (rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) != 0)
			return false;
		raised = true;
	}
	rc = rte_fib6_select_lookup(ip_dp.fib6, RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512);
	if (raised)
		rte_vect_set_max_simd_bitwidth(w);
	return rc == 0;
}

int
egw_ip_init(const struct egw_ip_params *p)
{
	struct rte_fib_conf c4;
	struct rte_fib6_conf c6;
	static const struct {
		uint32_t id;
		uint8_t kind;
	} fixed[] = {
		{NH_ID_NOROUTE, NH_NOROUTE},     {NH_ID_BCAST, NH_BCAST},
		{NH_ID_BLACKHOLE, NH_BLACKHOLE}, {NH_ID_UNREACH, NH_UNREACH},
		{NH_ID_SESSION, NH_SESSION},
	};
	uint32_t id, tbl8_4, tbl8_6;
	unsigned int i;
	size_t heap0;
	int rc;

	if (ic.init)
		return -EEXIST;
	if (p == NULL || p->pool == NULL || p->tx == NULL || p->nb_ctx == 0 ||
	    p->nb_ctx > EGW_IP_MAX_CTX)
		return -EINVAL;
	memset(&ic, 0, sizeof(ic));
	memset(&ip_dp, 0, sizeof(ip_dp));
	memset(&ip_cs, 0, sizeof(ip_cs));
	ic.p = *p;
	if (ic.p.max_routes4 == 0)
		ic.p.max_routes4 = 65536;
	if (ic.p.max_routes6 == 0)
		ic.p.max_routes6 = 16384;
	if (ic.p.tbl8_4 == 0)
		ic.p.tbl8_4 = 4096;
	if (ic.p.tbl8_6 == 0)
		ic.p.tbl8_6 = 16384;
	if (ic.p.max_nh == 0)
		ic.p.max_nh = 16384;
	if (ic.p.max_neigh == 0)
		ic.p.max_neigh = 4096;
	if (ic.p.tbl8_4 >= (1u << 24) || ic.p.tbl8_6 >= (1u << 24) || ic.p.max_nh < 64 ||
	    ic.p.max_nh > IP_NH_LIMIT || ic.p.max_neigh > ic.p.max_nh ||
	    ic.p.max_routes4 > (1u << 30) || ic.p.max_routes6 > (1u << 30) ||
	    ic.p.max_sessions > EGW_IP_SESSION_MAX)
		return -EINVAL;
	/* Session routes: a /32 needs a tbl8 group per /24 it falls in, a /64
	 * one per /56 (and a few above it); pools hand out neighbouring
	 * addresses, so 256 sessions share a group. Addresses from anywhere
	 * (RADIUS) may take more: a session whose route finds no room is
	 * refused (-ENOSPC), never routed wrong. */
	tbl8_4 = ic.p.tbl8_4;
	tbl8_6 = ic.p.tbl8_6;
	if (ic.p.max_sessions != 0) {
		tbl8_4 = RTE_MIN(tbl8_4 + ic.p.max_sessions / 64 + 256, (1u << 24) - 1);
		tbl8_6 = RTE_MIN(tbl8_6 + ic.p.max_sessions / 32 + 1024, (1u << 24) - 1);
	}
	ip_dp.max_nh = ic.p.max_nh;
	ip_dp.max_grp = RTE_MIN(ic.p.max_nh / 4, IP_NH_LIMIT);
	ip_dp.icmp_pps = 1000;
	ip_dp.icmp_burst = 50;
	ip_dp.punt_pps = 10000;
	ip_dp.punt_burst = 256;
	/* the host's stack: SSH, BGP, OSPF; about 1 Gbit/s of 1500-byte TCP */
	ip_dp.local_pps = 100000;
	ip_dp.local_burst = 1024;

	memset(&c4, 0, sizeof(c4));
	c4.type = RTE_FIB_DIR24_8;
	c4.default_nh = NH_ID_NOROUTE;
	c4.max_routes = (int)(ic.p.max_routes4 + ic.p.max_sessions);
	c4.rib_ext_sz = sizeof(struct rt_ext);
	/* 2-byte entries address at most 2^15 - 1 tbl8 groups and hold values
	 * below 2^15: bigger tables and session keys (FIB_SESS) take 4-byte
	 * entries */
	c4.dir24_8.nh_sz = tbl8_4 < (1u << 15) && ic.p.max_sessions == 0 ? RTE_FIB_DIR24_8_2B
									 : RTE_FIB_DIR24_8_4B;
	c4.dir24_8.num_tbl8 = tbl8_4;
	heap0 = heap_used(p->socket);
	ip_dp.fib4 = rte_fib_create("egw_fib4", p->socket, &c4);
	ic.fib4_bytes = heap_used(p->socket) - heap0;
	if (ip_dp.fib4 == NULL) {
		rc = rte_errno ? -rte_errno : -ENOMEM;
		goto fail;
	}
	fib4_tbl24(c4.dir24_8.nh_sz == RTE_FIB_DIR24_8_4B);
	memset(&c6, 0, sizeof(c6));
	c6.type = RTE_FIB6_TRIE;
	c6.default_nh = NH_ID_NOROUTE;
	c6.max_routes = (int)(ic.p.max_routes6 + ic.p.max_sessions);
	c6.rib_ext_sz = sizeof(struct rt_ext);
	c6.trie.nh_sz =
		tbl8_6 < (1u << 15) && ic.p.max_sessions == 0 ? RTE_FIB6_TRIE_2B : RTE_FIB6_TRIE_4B;
	c6.trie.num_tbl8 = tbl8_6;
	heap0 = heap_used(p->socket);
	ip_dp.fib6 = rte_fib6_create("egw_fib6", p->socket, &c6);
	ic.fib6_bytes = heap_used(p->socket) - heap0;
	if (ip_dp.fib6 == NULL) {
		rc = rte_errno ? -rte_errno : -ENOMEM;
		goto fail;
	}
	ic.fib6_avx512 = fib6_vector_lookup();
	ip_dp.nh = rte_zmalloc_socket("egw_ip_nhtab", sizeof(ip_dp.nh[0]) * ip_dp.max_nh,
				      RTE_CACHE_LINE_SIZE, p->socket);
	ip_dp.grp = rte_zmalloc_socket("egw_ip_grptab", sizeof(ip_dp.grp[0]) * ip_dp.max_grp,
				       RTE_CACHE_LINE_SIZE, p->socket);
	ic.nhc = rte_zmalloc_socket("egw_ip_nhc", sizeof(ic.nhc[0]) * ip_dp.max_nh, 0, p->socket);
	ic.nh_free =
		rte_malloc_socket("egw_ip_nhfree", sizeof(uint32_t) * ip_dp.max_nh, 0, p->socket);
	ic.grp_free =
		rte_malloc_socket("egw_ip_grpfree", sizeof(uint32_t) * ip_dp.max_grp, 0, p->socket);
	ic.grp_refs = rte_zmalloc_socket("egw_ip_grprefs", sizeof(uint32_t) * ip_dp.max_grp, 0,
					 p->socket);
	{
		struct rte_hash_parameters hp = {
			.name = "egw_ip_grp",
			.entries = RTE_MAX(ip_dp.max_grp, 8u),
			.key_len = sizeof(struct grp_key),
			.hash_func = rte_hash_crc,
			.socket_id = p->socket,
		};

		ic.grp_h = rte_hash_create(&hp);
	}
	if (ip_dp.nh == NULL || ip_dp.grp == NULL || ic.nhc == NULL || ic.nh_free == NULL ||
	    ic.grp_free == NULL || ic.grp_refs == NULL || ic.grp_h == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (id = ip_dp.max_nh; id-- > NH_ID_FIRST_FREE;)
		ic.nh_free[ic.nh_nfree++] = id;
	/* the last group is the shadow of fib_set() */
	for (id = ip_dp.max_grp - 1; id-- > 0;)
		ic.grp_free[ic.grp_nfree++] = id;
	if (p->qsbr != NULL) {
		struct rte_rcu_qsbr_dq_parameters dp;

		memset(&dp, 0, sizeof(dp));
		dp.name = "egw_ip_dq";
		dp.size = 8192;
		dp.esize = sizeof(struct ip_defer);
		dp.trigger_reclaim_limit = 64;
		dp.max_reclaim_size = 1024;
		dp.free_fn = defer_free;
		dp.v = p->qsbr;
		ic.dq = rte_rcu_qsbr_dq_create(&dp);
		if (ic.dq == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	ic.init = true;
	for (i = 0; i < RTE_DIM(fixed); i++) {
		struct ip_nh rec;

		memset(&rec, 0, sizeof(rec));
		rec.kind = fixed[i].kind;
		rc = ip_nh_publish(fixed[i].id, &rec);
		if (rc < 0)
			goto fail;
	}
	/* a slot never points nowhere: the unused ones read "no route" */
	for (id = NH_ID_SHADOW; id < ip_dp.max_nh; id++)
		ip_dp.nh[id] = ip_dp.nh[NH_ID_NOROUTE];
	rc = ip_neigh_ctl_init(&ic.p);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	ic.init = true;
	egw_ip_fini();
	return rc;
}

void
egw_ip_fini(void)
{
	uint32_t id;
	uint16_t p;

	if (!ic.init)
		return;
	ip_neigh_ctl_fini();
	if (ic.dq != NULL) {
		rte_rcu_qsbr_dq_reclaim(ic.dq, UINT32_MAX, NULL, NULL, NULL);
		rte_rcu_qsbr_dq_delete(ic.dq);
		ic.dq = NULL;
	}
	if (ip_dp.nh != NULL) {
		for (id = NH_ID_FIRST_FREE; id < ip_dp.max_nh; id++)
			if (ip_dp.nh[id] != ip_dp.nh[NH_ID_NOROUTE])
				rte_free(ip_dp.nh[id]);
		for (id = 0; id < NH_ID_SHADOW; id++)
			rte_free(ip_dp.nh[id]);
	}
	if (ip_dp.grp != NULL)
		for (id = 0; id < ip_dp.max_grp; id++)
			rte_free(ip_dp.grp[id]);
	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		rte_free(ip_dp.port[p]);
	rte_fib_free(ip_dp.fib4);
	rte_fib6_free(ip_dp.fib6);
	rte_free(ip_dp.nh);
	rte_free(ip_dp.grp);
	rte_free(ic.nhc);
	rte_free(ic.nh_free);
	rte_free(ic.grp_free);
	rte_free(ic.grp_refs);
	rte_hash_free(ic.grp_h);
	memset(&ip_dp, 0, sizeof(ip_dp));
	memset(&ic, 0, sizeof(ic));
}

int
egw_ip_icmp_ratelimit(uint32_t pps, uint32_t burst)
{
	if (pps == 0 || burst == 0 || pps > 10000000 || burst > 100000)
		return -EINVAL;
	__atomic_store_n(&ip_dp.icmp_pps, pps, __ATOMIC_RELAXED);
	__atomic_store_n(&ip_dp.icmp_burst, burst, __ATOMIC_RELAXED);
	return 0;
}

unsigned int
egw_ip_ctrl_counters(const char **names, uint64_t *values, unsigned int max)
{
	unsigned int n = 0;

#define X(c)                         \
	if (n < max) {               \
		names[n] = #c;       \
		values[n] = ip_cs.c; \
		n++;                 \
	}
	IP_CTL_COUNTERS(X)
#undef X
	return n;
}
