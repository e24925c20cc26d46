/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the kernel exception path. A port with one has a Linux TUN
 * interface (L3, no MAC, no ARP: "egwx<N>" by default) that carries the
 * port's addresses in the host's stack. Packets to those addresses that the
 * workers do not answer themselves (everything but ICMP echo: TCP to sshd
 * or a BGP daemon, OSPF, UDP) reach the control path (lib/ip, rate limited
 * per worker) and are written to the TUN; what the host's stack writes to
 * the TUN is read here and routed by lib/ip (egw_ip_output(): FIB, next
 * hop, ARP/ND, MAC header) out of edgegw's ports. The host needs routes
 * into the TUN for destinations beyond the port's networks (a routing
 * daemon installs them; see docs/routing.md).
 *
 * Why a TUN and not DPDK's exception vdevs: this kernel has no
 * /dev/vhost-net, so virtio_user's kernel path (the fast one) is not
 * available; net_tap is another DPDK port, polled by a worker, that would
 * need a role and queues of its own; a TUN file descriptor read and written
 * by the control lcore costs two system calls per packet on a core that is
 * mostly idle, and keeps the workers free of exception traffic. It is
 * meant for control traffic (SSH, BGP, OSPF), not bulk data.
 *
 * Everything here runs under egw.ctrl_lock (the control path and the ip
 * commands).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_addr.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/addr.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/inet6.h>

#include <rte_malloc.h>

#include "fwd.h"

/* Frames read from the TUNs per control poll, all ports together. */
#define EXC_READ_BUDGET 64

struct exc_port {
	int fd; /* -1: none */
	int ifindex;
	char name[IFNAMSIZ];
	uint64_t to_host, to_host_drop, from_host, from_host_drop;
};

static struct exc_port exc[RTE_MAX_ETHPORTS];
static bool exc_init_done;
static struct nl_sock *exc_nl;
/* the control path is one thread: one linearisation buffer */
static uint8_t exc_buf[UINT16_MAX];

static void
exc_init(void)
{
	unsigned int i;

	if (exc_init_done)
		return;
	for (i = 0; i < RTE_DIM(exc); i++)
		exc[i].fd = -1;
	exc_init_done = true;
}

static int
nl_get(char *err, size_t errlen)
{
	int rc;

	if (exc_nl != NULL)
		return 0;
	exc_nl = nl_socket_alloc();
	if (exc_nl == NULL) {
		snprintf(err, errlen, "netlink: out of memory");
		return -ENOMEM;
	}
	rc = nl_connect(exc_nl, NETLINK_ROUTE);
	if (rc < 0) {
		snprintf(err, errlen, "netlink: %s", nl_geterror(rc));
		nl_socket_free(exc_nl);
		exc_nl = NULL;
		return -EIO;
	}
	return 0;
}

/* Add or delete an address of the host's side of a port's exception path. */
static int
exc_addr(struct exc_port *x, const struct egw_ip_addr *a, uint8_t len, bool add, char *err,
	 size_t errlen)
{
	struct rtnl_addr *ra;
	struct nl_addr *la;
	int rc;

	if (nl_get(err, errlen) < 0)
		return -EIO;
	ra = rtnl_addr_alloc();
	la = nl_addr_build(a->family, a->a, a->family == AF_INET ? 4 : 16);
	if (ra == NULL || la == NULL) {
		rtnl_addr_put(ra);
		nl_addr_put(la);
		snprintf(err, errlen, "netlink: out of memory");
		return -ENOMEM;
	}
	nl_addr_set_prefixlen(la, len);
	rtnl_addr_set_ifindex(ra, x->ifindex);
	rtnl_addr_set_family(ra, a->family);
	rtnl_addr_set_local(ra, la);
	rtnl_addr_set_prefixlen(ra, len);
	if (a->family == AF_INET6)
		rtnl_addr_set_flags(ra, IFA_F_NODAD);
	rc = add ? rtnl_addr_add(exc_nl, ra, NLM_F_REPLACE) : rtnl_addr_delete(exc_nl, ra, 0);
	nl_addr_put(la);
	rtnl_addr_put(ra);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s address: %s", x->name, add ? "adding" : "deleting",
			 nl_geterror(rc));
		return -EIO;
	}
	return 0;
}

struct addr_copy {
	struct exc_port *x;
	uint16_t port;
	char *err;
	size_t errlen;
	int rc;
};

static int
copy_addr(const struct egw_ip_addr_info *ai, void *arg)
{
	struct addr_copy *c = arg;

	/* the link-local address too: what the host sends to link-scope
	 * groups (OSPFv3) comes from it, and edgegw answers ND for it */
	if (ai->port != c->port || ai->vlan != 0)
		return 0;
	c->rc = exc_addr(c->x, &ai->addr, ai->len, true, c->err, c->errlen);
	return c->rc;
}

static void
exc_close(struct exc_port *x)
{
	if (x->fd >= 0)
		close(x->fd); /* the TUN goes with its last descriptor */
	x->fd = -1;
	x->ifindex = 0;
}

int
egw_exception_add(uint16_t port, const char *name, char *err, size_t errlen)
{
	struct exc_port *x;
	struct rtnl_link *cur = NULL, *req = NULL;
	struct addr_copy ac;
	struct ifreq ifr;
	uint16_t mtu = RTE_ETHER_MTU;
	int rc;

	exc_init();
	if (port >= RTE_MAX_ETHPORTS || !egw.ports[port].used) {
		snprintf(err, errlen, "port %u does not exist", port);
		return -EINVAL;
	}
	if (egw.ports[port].role == EGW_ROLE_ACCESS) {
		snprintf(err, errlen, "port %u is an access port (PPPoE sessions only)", port);
		return -EINVAL;
	}
	x = &exc[port];
	if (x->fd >= 0) {
		snprintf(err, errlen, "port %u has an exception path (%s)", port, x->name);
		return -EEXIST;
	}
	memset(&ifr, 0, sizeof(ifr));
	if (name != NULL) {
		if (strlen(name) == 0 || strlen(name) >= IFNAMSIZ || strchr(name, '%') != NULL) {
			snprintf(err, errlen, "interface name '%s': 1..%d characters, no %%", name,
				 IFNAMSIZ - 1);
			return -EINVAL;
		}
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	} else {
		snprintf(ifr.ifr_name, IFNAMSIZ, "egwx%u", port);
	}
	if (if_nametoindex(ifr.ifr_name) != 0) {
		snprintf(err, errlen, "interface %s exists already", ifr.ifr_name);
		return -EEXIST;
	}
	x->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (x->fd < 0) {
		snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
		return -errno;
	}
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	if (ioctl(x->fd, TUNSETIFF, &ifr) < 0) {
		rc = -errno;
		snprintf(err, errlen, "TUNSETIFF %s: %s", ifr.ifr_name, strerror(errno));
		exc_close(x);
		return rc;
	}
	snprintf(x->name, sizeof(x->name), "%s", ifr.ifr_name);
	x->ifindex = (int)if_nametoindex(x->name);
	x->to_host = x->to_host_drop = x->from_host = x->from_host_drop = 0;
	/* the port's MTU, and up */
	if (rte_eth_dev_get_mtu(port, &mtu) != 0 || mtu < 68)
		mtu = RTE_ETHER_MTU;
	rc = nl_get(err, errlen);
	if (rc == 0 && rtnl_link_get_kernel(exc_nl, x->ifindex, NULL, &cur) < 0)
		rc = -EIO;
	if (rc == 0 && (req = rtnl_link_alloc()) == NULL)
		rc = -ENOMEM;
	if (rc == 0) {
		/* no IPv6 link-local of the kernel's own making (stable-privacy
		 * or EUI-64), set while the link is down: the port's link-local
		 * (copy_addr()) is the TUN's only one, so what the host sends to
		 * link-scope groups (MLD, OSPFv3) comes from an address of the
		 * port, which edgegw sends on, not from one it refuses
		 * (exception_bad_source) */
		rc = rtnl_link_inet6_set_addr_gen_mode(req, IN6_ADDR_GEN_MODE_NONE);
		if (rc == 0)
			rc = rtnl_link_change(exc_nl, cur, req, 0);
		if (rc < 0) {
			snprintf(err, errlen, "%s: IPv6 address generation off: %s", x->name,
				 nl_geterror(rc));
			rc = -EIO;
		}
	}
	if (rc == 0) {
		/* the same request again (the mode set once more: no change) */
		rtnl_link_set_mtu(req, mtu);
		rtnl_link_set_flags(req, IFF_UP);
		rc = rtnl_link_change(exc_nl, cur, req, 0);
		if (rc < 0) {
			snprintf(err, errlen, "%s: MTU %u, up: %s", x->name, mtu, nl_geterror(rc));
			rc = -EIO;
		}
	}
	rtnl_link_put(req);
	rtnl_link_put(cur);
	if (rc == 0) {
		ac = (struct addr_copy){.x = x, .port = port, .err = err, .errlen = errlen};
		egw_ip_addr_walk(copy_addr, &ac);
		rc = ac.rc;
	}
	if (rc == 0)
		rc = egw_ip_port_exception(port, true);
	if (rc < 0) {
		if (rc == -EINVAL)
			snprintf(err, errlen, "port %u: lib/ip refused the exception path", port);
		exc_close(x);
		return rc;
	}
	return 0;
}

int
egw_exception_del(uint16_t port, char *err, size_t errlen)
{
	exc_init();
	if (port >= RTE_MAX_ETHPORTS || exc[port].fd < 0) {
		snprintf(err, errlen, "port %u has no exception path", port);
		return -ENOENT;
	}
	egw_ip_port_exception(port, false);
	exc_close(&exc[port]);
	return 0;
}

void
egw_exception_addr(uint16_t port, const struct egw_ip_addr *a, uint8_t len, bool add)
{
	char err[160];

	exc_init();
	if (port >= RTE_MAX_ETHPORTS || exc[port].fd < 0)
		return;
	if (exc_addr(&exc[port], a, len, add, err, sizeof(err)) < 0)
		fprintf(stderr, "warning: exception path of port %u: %s\n", port, err);
	/* the port's first IPv6 address made its link-local one: the host
	 * gets it too (copy_addr() takes every address; replacing is
	 * harmless) */
	if (add && a->family == AF_INET6) {
		struct addr_copy c = {&exc[port], port, err, sizeof(err), 0};

		egw_ip_addr_walk(copy_addr, &c);
		if (c.rc < 0)
			fprintf(stderr, "warning: exception path of port %u: %s\n", port, err);
	}
}

/* lib/ip's local callback: a packet to edgegw for the host's stack. */
void
egw_exception_local(uint16_t port, struct rte_mbuf *m, void *arg __rte_unused)
{
	struct exc_port *x = &exc[port];
	uint32_t len = m->pkt_len - m->l2_len;
	const void *p;

	p = rte_pktmbuf_read(m, m->l2_len, len, exc_buf);
	if (x->fd < 0 || p == NULL || write(x->fd, p, len) != (ssize_t)len)
		x->to_host_drop++; /* no path, or the host's queue is full */
	else
		x->to_host++;
	rte_pktmbuf_free(m);
}

unsigned int
egw_exception_poll(void)
{
	struct rte_mempool *mp;
	unsigned int work = 0, budget = EXC_READ_BUDGET;
	uint16_t p;

	if (!exc_init_done || !egw.ip)
		return 0;
	mp = egw_socket_pool(rte_lcore_to_socket_id(egw.control_lcore));
	for (p = 0; p < RTE_MAX_ETHPORTS && budget != 0; p++) {
		struct exc_port *x = &exc[p];

		while (x->fd >= 0 && budget != 0) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
			struct egw_eth_meta *meta;
			uint16_t room;
			uint8_t *d;
			ssize_t n;

			if (m == NULL) {
				x->from_host_drop++;
				return work;
			}
			/* room for the MAC header lib/ip writes */
			d = rte_pktmbuf_mtod(m, uint8_t *) + RTE_ETHER_HDR_LEN;
			room = (uint16_t)(rte_pktmbuf_tailroom(m) - RTE_ETHER_HDR_LEN);
			n = read(x->fd, d, room);
			if (n <= 0) {
				rte_pktmbuf_free(m);
				break;
			}
			budget--;
			work++;
			if (n < 20 || n == room) {
				/* runt, or larger than an mbuf: the TUN has the
				 * port's MTU, so the host fragments before */
				x->from_host_drop++;
				rte_pktmbuf_free(m);
				continue;
			}
			rte_pktmbuf_append(m, (uint16_t)(n + RTE_ETHER_HDR_LEN));
			m->l2_len = RTE_ETHER_HDR_LEN;
			m->port = p;
			meta = egw_eth_meta(m);
			memset(meta, 0, sizeof(*meta));
			meta->cls = (d[0] >> 4) == 6 ? EGW_ETH_CLS_IPV6 : EGW_ETH_CLS_IPV4;
			/* not a frame from the wire: lib/ip never answers it
			 * with an ICMP error of its own */
			meta->dst = EGW_ETH_DST_OTHERHOST;
			if (egw_ip_output(m) == 0)
				x->from_host++;
			else
				x->from_host_drop++;
		}
	}
	return work;
}

void
egw_exception_show(FILE *f)
{
	uint16_t p;

	exc_init();
	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (exc[p].fd >= 0)
			fprintf(f,
				"  exception: port %u <-> %s: to host %" PRIu64 " (dropped %" PRIu64
				"), from host %" PRIu64 " (dropped %" PRIu64 ")\n",
				p, exc[p].name, exc[p].to_host, exc[p].to_host_drop,
				exc[p].from_host, exc[p].from_host_drop);
}

void
egw_exception_json(FILE *f)
{
	bool first = true;
	uint16_t p;

	exc_init();
	fprintf(f, "[");
	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (exc[p].fd < 0)
			continue;
		fprintf(f,
			"%s{\"port\": %u, \"ifname\": \"%s\", \"to_host\": %" PRIu64
			", \"to_host_drop\": %" PRIu64 ", \"from_host\": %" PRIu64
			", \"from_host_drop\": %" PRIu64 "}",
			first ? "" : ", ", p, exc[p].name, exc[p].to_host, exc[p].to_host_drop,
			exc[p].from_host, exc[p].from_host_drop);
		first = false;
	}
	fprintf(f, "]");
}

void
egw_exception_fini(void)
{
	uint16_t p;

	exc_init();
	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		exc_close(&exc[p]);
	if (exc_nl != NULL) {
		nl_socket_free(exc_nl);
		exc_nl = NULL;
	}
}
