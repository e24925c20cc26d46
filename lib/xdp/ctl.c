/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/xdp control path: finds edgegw's steering program on an interface,
 * opens and pins its maps, and keeps them in step with edgegw's state
 * (libbpf, bpf() syscalls; never per packet). See egw_xdp.h.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egw_xdp.h"

enum xdp_map {
	M_XSKS = 0,
	M_CFG,
	M_STATS,
	M_ESP4,
	M_ESP6,
	M_OWN4,
	M_OWN6,
	M_POOL4,
	M_POOL6,
	M_FLOWS,
	M_ROUTE4,
	M_ROUTE6,
	M_NATT,
	M_KERN4,
	M_KERN6,
	M_KERNQ,
	M_FILTER,
	M_MAX
};

static const char *const map_names[M_MAX] = {
	"xsks_map", "egw_cfg",   "egw_stats", "egw_esp4",  "egw_esp6",   "egw_own4",
	"egw_own6", "egw_pool4", "egw_pool6", "egw_flows", "egw_route4", "egw_route6",
	"egw_natt", "egw_kern4", "egw_kern6", "egw_kernq", "egw_filter",
};

/* the flag that tells the program a map has entries */
static const uint32_t map_flag[M_MAX] = {
	[M_ESP4] = EGW_XDP_F_ESP4,   [M_ESP6] = EGW_XDP_F_ESP6,     [M_OWN4] = EGW_XDP_F_OWN4,
	[M_OWN6] = EGW_XDP_F_OWN6,   [M_POOL4] = EGW_XDP_F_POOL4,   [M_POOL6] = EGW_XDP_F_POOL6,
	[M_FLOWS] = EGW_XDP_F_FLOWS, [M_ROUTE4] = EGW_XDP_F_ROUTE4, [M_ROUTE6] = EGW_XDP_F_ROUTE6,
	[M_NATT] = EGW_XDP_F_NATT,
};

/* every part of egw_filter */
#define FILT_ALL \
	(EGW_XDP_F_FILT4 | EGW_XDP_F_FILT6 | EGW_XDP_F_FILTP | EGW_XDP_F_FILTR4 | EGW_XDP_F_FILTR6)

static const char *const cls_names[EGW_XDP_CLS_MAX] = {
	[EGW_XDP_CLS_KERNEL] = "kernel",
	[EGW_XDP_CLS_MALFORMED] = "malformed",
	[EGW_XDP_CLS_PPPOE_DISC] = "pppoe_disc",
	[EGW_XDP_CLS_PPPOE_SESS] = "pppoe_sess",
	[EGW_XDP_CLS_ESP] = "esp",
	[EGW_XDP_CLS_OWN] = "own",
	[EGW_XDP_CLS_POOL] = "pool",
	[EGW_XDP_CLS_RXTOK] = "rxtok",
	[EGW_XDP_CLS_ROUTE] = "route",
	[EGW_XDP_CLS_NO_XSK] = "no_xsk",
};

struct xdp_port {
	bool open;
	unsigned int ifindex;
	char ifname[IF_NAMESIZE];
	uint32_t prog_id;
	uint8_t mode; /* XDP_ATTACHED_DRV, _SKB, _HW */
	int prog_fd;
	int fd[M_MAX];
	uint32_t max[M_MAX];
	uint32_t n[M_MAX]; /* distinct keys in the maps we fill */
	uint32_t flags;
	uint64_t *filt; /* what egw_filter holds */
	bool kern_ok;   /* egw_kern4/6 hold every address of the kernel's */
	char pin[PATH_MAX];
};

#define IDS_MAX 32

static struct xdp_port ports[EGW_XDP_MAX_PORTS];

/* between egw_xdp_batch(true) and (false): egw_filter is rebuilt once, at
 * the end */
static bool batching;

/* address change events of the kernel's (rtnetlink), which egw_kern4/6
 * follow; -1 until a port opens */
static int nl_fd = -1;

const char *
egw_xdp_class_name(unsigned int cls)
{
	return cls < EGW_XDP_CLS_MAX ? cls_names[cls] : "?";
}

static const char *
mode_name(uint8_t mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV: return "native (driver)";
	case XDP_ATTACHED_SKB: return "generic (SKB)";
	case XDP_ATTACHED_HW: return "offloaded (hardware)";
	default: return "unknown";
	}
}

static const char *
bpf_errno_text(int rc)
{
	switch (rc) {
	case -EPERM: return "the kernel refuses bpf(): run as root (CAP_BPF, CAP_NET_ADMIN)";
	case -ENOSYS: return "the kernel has no BPF (CONFIG_BPF_SYSCALL)";
	default: return strerror(-rc);
	}
}

int
egw_xdp_verify(const char *path, char *err, size_t errlen)
{
	struct bpf_object *obj;
	unsigned int m;
	int rc;

	if (path == NULL || access(path, R_OK) != 0) {
		rc = path == NULL ? -EINVAL : -errno;
		snprintf(err, errlen, "XDP program %s: %s", path ? path : "(none)", strerror(-rc));
		return rc;
	}
	obj = bpf_object__open_file(path, NULL);
	if (obj == NULL) {
		rc = -errno;
		snprintf(err, errlen, "XDP program %s: not a BPF object (%s)", path, strerror(-rc));
		return rc;
	}
	for (m = 0; m < M_MAX; m++)
		if (bpf_object__find_map_by_name(obj, map_names[m]) == NULL) {
			snprintf(err, errlen,
				 "XDP program %s: no map %s: not edgegw's steering program", path,
				 map_names[m]);
			bpf_object__close(obj);
			return -EINVAL;
		}
	/* libbpf prints the verifier's log on stderr when the load fails */
	rc = bpf_object__load(obj);
	bpf_object__close(obj);
	if (rc == -EPERM || rc == -ENOSYS) {
		snprintf(err, errlen, "XDP program %s: %s", path, bpf_errno_text(rc));
		return rc;
	}
	if (rc < 0) {
		snprintf(err, errlen,
			 "XDP program %s: the kernel refused it (%s); the verifier's log is "
			 "above",
			 path, strerror(-rc));
		return rc;
	}
	return 0;
}

static int
write_cfg(struct xdp_port *p)
{
	/* not knowing the kernel's addresses, routes could take its frames:
	 * they are not steered until the kernel's addresses are known */
	struct egw_xdp_cfg c = {
		.flags = p->kern_ok ? p->flags : p->flags & ~(EGW_XDP_F_ROUTE4 | EGW_XDP_F_ROUTE6)};
	uint32_t k = 0;

	return bpf_map_update_elem(p->fd[M_CFG], &k, &c, BPF_ANY) == 0 ? 0 : -errno;
}

/* Empty one of the maps we fill (a program loaded before us may hold
 * entries of a previous run). */
static int
clear_map(int fd)
{
	uint8_t key[64], next[64];
	int guard = 1 << 20;

	while (bpf_map_get_next_key(fd, NULL, next) == 0 && guard-- > 0) {
		memcpy(key, next, sizeof(key));
		if (bpf_map_delete_elem(fd, key) != 0)
			return -errno;
	}
	return 0;
}

static int
pin_maps(struct xdp_port *p, char *err, size_t errlen)
{
	struct statfs sf;
	char path[PATH_MAX + 32];
	unsigned int m;

	if (statfs("/sys/fs/bpf", &sf) != 0 || sf.f_type != BPF_FS_MAGIC) {
		snprintf(err, errlen,
			 "/sys/fs/bpf is not a BPF file system (mount -t bpf bpf /sys/fs/bpf): "
			 "maps not pinned");
		return -ENOENT;
	}
	if (mkdir(EGW_XDP_PIN_ROOT, 0700) != 0 && errno != EEXIST)
		goto fail;
	snprintf(p->pin, sizeof(p->pin), "%s/%s", EGW_XDP_PIN_ROOT, p->ifname);
	if (mkdir(p->pin, 0700) != 0 && errno != EEXIST)
		goto fail;
	for (m = 0; m < M_MAX; m++) {
		snprintf(path, sizeof(path), "%s/%s", p->pin, map_names[m]);
		/* a pin of a previous run names maps of another program */
		if (unlink(path) != 0 && errno != ENOENT)
			goto fail;
		if (bpf_obj_pin(p->fd[m], path) != 0)
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "pin under %.128s: %s", p->pin[0] ? p->pin : EGW_XDP_PIN_ROOT,
		 strerror(errno));
	return -errno;
}

static void
unpin_maps(struct xdp_port *p)
{
	char path[PATH_MAX + 32];
	unsigned int m;

	if (p->pin[0] == '\0')
		return;
	for (m = 0; m < M_MAX; m++) {
		snprintf(path, sizeof(path), "%s/%s", p->pin, map_names[m]);
		unlink(path);
	}
	rmdir(p->pin);
	p->pin[0] = '\0';
}

static void
close_fds(struct xdp_port *p)
{
	unsigned int m;

	for (m = 0; m < M_MAX; m++) {
		if (p->fd[m] >= 0)
			close(p->fd[m]);
		p->fd[m] = -1;
	}
	if (p->prog_fd >= 0)
		close(p->prog_fd);
	p->prog_fd = -1;
	free(p->filt);
	p->filt = NULL;
}

/* Open the maps of program p->prog_fd by name. */
static int
open_maps(struct xdp_port *p, char *err, size_t errlen)
{
	uint32_t ids[IDS_MAX];
	struct bpf_prog_info pi;
	uint32_t len = sizeof(pi), i;
	unsigned int m;

	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = IDS_MAX;
	pi.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(p->prog_fd, &pi, &len) != 0) {
		snprintf(err, errlen, "program %u: info: %s", p->prog_id, strerror(errno));
		return -errno;
	}
	for (i = 0; i < pi.nr_map_ids && i < IDS_MAX; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) != 0) {
			close(fd);
			continue;
		}
		for (m = 0; m < M_MAX; m++)
			if (p->fd[m] < 0 && strcmp(mi.name, map_names[m]) == 0)
				break;
		if (m == M_MAX) {
			close(fd);
			continue;
		}
		p->fd[m] = fd;
		p->max[m] = mi.max_entries;
	}
	for (m = 0; m < M_MAX; m++)
		if (p->fd[m] < 0) {
			snprintf(err, errlen,
				 "the XDP program on %s (id %u, %s) has no map %s: not edgegw's "
				 "steering program",
				 p->ifname, p->prog_id, pi.name, map_names[m]);
			return -ENOENT;
		}
	return 0;
}

/* The kernel's own addresses, which no route of edgegw's takes: every
 * address of every interface of the host (Linux accepts a frame to any of
 * them on any interface: the weak host model, RFC 1122 3.3.4.2) and the
 * broadcast addresses of its IPv4 subnets. */
struct kern_set {
	uint32_t n4, n6;
	bool over;
	uint32_t a4[EGW_XDP_MAX_KERN]; /* network order */
	struct egw_xdp_in6 a6[EGW_XDP_MAX_KERN];
};

static void
kern_add4(struct kern_set *k, uint32_t a)
{
	uint32_t i;

	for (i = 0; i < k->n4; i++)
		if (k->a4[i] == a)
			return;
	if (k->n4 == EGW_XDP_MAX_KERN)
		k->over = true;
	else
		k->a4[k->n4++] = a;
}

static void
kern_add6(struct kern_set *k, const uint8_t *a)
{
	uint32_t i;

	for (i = 0; i < k->n6; i++)
		if (memcmp(k->a6[i].a, a, 16) == 0)
			return;
	if (k->n6 == EGW_XDP_MAX_KERN)
		k->over = true;
	else
		memcpy(k->a6[k->n6++].a, a, 16);
}

static int
kern_collect(struct kern_set *k)
{
	struct ifaddrs *ifa, *i;

	k->n4 = k->n6 = 0;
	k->over = false;
	if (getifaddrs(&ifa) != 0)
		return -errno;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			uint32_t ad = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;

			kern_add4(k, ad);
			if ((i->ifa_flags & IFF_BROADCAST) && i->ifa_broadaddr != NULL &&
			    i->ifa_broadaddr->sa_family == AF_INET)
				kern_add4(k, ((const struct sockaddr_in *)i->ifa_broadaddr)
						     ->sin_addr.s_addr);
			/* the subnet's last address is a broadcast route of the
			 * kernel's below /31, with or without "brd" */
			if (i->ifa_netmask != NULL && i->ifa_netmask->sa_family == AF_INET) {
				uint32_t mask = ((const struct sockaddr_in *)i->ifa_netmask)
							->sin_addr.s_addr;

				if (ntohl(mask) < 0xfffffffeu)
					kern_add4(k, ad | ~mask);
			}
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			kern_add6(k, ((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr.s6_addr);
		}
	}
	freeifaddrs(ifa);
	return k->over ? -E2BIG : 0;
}

struct kern_stale {
	const struct kern_set *k;
	bool v6;
	uint32_t n;
	uint8_t keys[64][16]; /* a round of keys to delete */
};

static void
kern_find_stale(void *ctx, const void *key)
{
	struct kern_stale *st = ctx;
	uint32_t i;

	if (st->n == 64)
		return;
	if (!st->v6) {
		for (i = 0; i < st->k->n4; i++)
			if (memcmp(&st->k->a4[i], key, 4) == 0)
				return;
		memcpy(st->keys[st->n++], key, 4);
	} else {
		for (i = 0; i < st->k->n6; i++)
			if (memcmp(st->k->a6[i].a, key, 16) == 0)
				return;
		memcpy(st->keys[st->n++], key, 16);
	}
}

static int walk_keys(struct xdp_port *p, int m, void (*fn)(void *ctx, const void *key), void *ctx);

/* egw_kern4/6 of a port from k: the new addresses first, then the gone
 * ones deleted, so that none of the kernel's is ever missing. */
static int
kern_apply(struct xdp_port *p, const struct kern_set *k)
{
	static struct kern_stale st;
	uint32_t one = 1, i, fam, old = p->kern_ok;
	int rc = 0;

	for (i = 0; i < k->n4 && rc == 0; i++)
		if (bpf_map_update_elem(p->fd[M_KERN4], &k->a4[i], &one, BPF_ANY) != 0)
			rc = -errno;
	for (i = 0; i < k->n6 && rc == 0; i++)
		if (bpf_map_update_elem(p->fd[M_KERN6], &k->a6[i], &one, BPF_ANY) != 0)
			rc = -errno;
	for (fam = 0; fam < 2 && rc == 0; fam++) {
		int m = fam == 0 ? M_KERN4 : M_KERN6;

		do {
			memset(&st, 0, sizeof(st));
			st.k = k;
			st.v6 = fam == 1;
			rc = walk_keys(p, m, kern_find_stale, &st);
			for (i = 0; i < st.n && rc == 0; i++)
				if (bpf_map_delete_elem(p->fd[m], st.keys[i]) != 0 &&
				    errno != ENOENT)
					rc = -errno;
		} while (rc == 0 && st.n == 64);
	}
	/* the few-address copy last: it is what the program checks first */
	if (rc == 0) {
		static struct egw_xdp_kernq q;
		uint32_t k0 = 0;

		memset(&q, 0, sizeof(q));
		q.n4 = k->n4 <= EGW_XDP_KERNQ ? k->n4 : EGW_XDP_KERNQ + 1;
		q.n6 = k->n6 <= EGW_XDP_KERNQ ? k->n6 : EGW_XDP_KERNQ + 1;
		for (i = 0; i < k->n4 && i < EGW_XDP_KERNQ; i++)
			q.a4[i] = k->a4[i];
		for (i = 0; i < k->n6 && i < EGW_XDP_KERNQ; i++)
			q.a6[i] = k->a6[i];
		if (bpf_map_update_elem(p->fd[M_KERNQ], &k0, &q, BPF_ANY) != 0)
			rc = -errno;
	}
	p->n[M_KERN4] = k->n4;
	p->n[M_KERN6] = k->n6;
	p->kern_ok = rc == 0 && !k->over;
	if (p->kern_ok != old)
		write_cfg(p);
	return rc;
}

/* Read the kernel's addresses again into the maps of one port (p) or of
 * every open port (NULL). */
static int
kern_sync(struct xdp_port *only)
{
	static struct kern_set k;
	unsigned int i;
	int rc = kern_collect(&k), rc2;

	if (rc < 0 && rc != -E2BIG) {
		memset(&k, 0, sizeof(k));
		k.over = true;
	}
	for (i = 0; i < EGW_XDP_MAX_PORTS; i++) {
		struct xdp_port *p = &ports[i];

		if (only != NULL ? p != only : !p->open)
			continue;
		rc2 = kern_apply(p, &k);
		if (rc2 < 0 || !p->kern_ok)
			fprintf(stderr,
				"warning: XDP on %s: the kernel's addresses are not all known "
				"(%s): "
				"routes are not steered until they are\n",
				p->ifname, strerror(rc2 < 0 ? -rc2 : -rc));
	}
	return rc;
}

static void
nl_open(void)
{
	struct sockaddr_nl sa;

	if (nl_fd >= 0)
		return;
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(nl_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr,
			"warning: XDP: no rtnetlink address events (%s): the kernel's "
			"addresses are read at start and at each route change only\n",
			strerror(errno));
		close(nl_fd);
		nl_fd = -1;
	}
}

int
egw_xdp_service(void)
{
	char buf[8192];
	bool event = false;
	int guard = 1024;
	ssize_t r;

	if (nl_fd < 0)
		return 0;
	/* any event (or a lost one, ENOBUFS): read every address again */
	while (guard-- > 0) {
		r = recv(nl_fd, buf, sizeof(buf), 0);
		if (r > 0 || (r < 0 && errno == ENOBUFS))
			event = true;
		else
			break;
	}
	if (!event)
		return 0;
	kern_sync(NULL);
	return 1;
}

int
egw_xdp_port_open(uint16_t port, unsigned int ifindex, bool access, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_port *p;
	unsigned int m;
	char perr[256];
	int rc;

	if (port >= EGW_XDP_MAX_PORTS) {
		snprintf(err, errlen, "port %u: at most %u ports have an XDP program", port,
			 EGW_XDP_MAX_PORTS);
		return -EINVAL;
	}
	p = &ports[port];
	if (p->open) {
		snprintf(err, errlen, "port %u: XDP steering already open", port);
		return -EEXIST;
	}
	memset(p, 0, sizeof(*p));
	p->prog_fd = -1;
	for (m = 0; m < M_MAX; m++)
		p->fd[m] = -1;
	p->ifindex = ifindex;
	if (if_indextoname(ifindex, p->ifname) == NULL) {
		snprintf(err, errlen, "interface %u: %s", ifindex, strerror(errno));
		return -errno;
	}
	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc < 0) {
		snprintf(err, errlen, "%s: XDP query: %s", p->ifname, bpf_errno_text(rc));
		return rc;
	}
	p->mode = q.attach_mode;
	p->prog_id = q.prog_id;
	if (p->prog_id == 0 && q.attach_mode == XDP_ATTACHED_MULTI)
		p->prog_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	if (p->prog_id == 0) {
		snprintf(err, errlen, "%s: no XDP program attached", p->ifname);
		return -ENOENT;
	}
	p->prog_fd = bpf_prog_get_fd_by_id(p->prog_id);
	if (p->prog_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: XDP program %u: %s", p->ifname, p->prog_id,
			 bpf_errno_text(rc));
		return rc;
	}
	rc = open_maps(p, err, errlen);
	if (rc < 0)
		goto fail;
	for (m = M_ESP4; m <= M_KERN6; m++) {
		rc = clear_map(p->fd[m]);
		if (rc < 0) {
			snprintf(err, errlen, "%s: clear %s: %s", p->ifname, map_names[m],
				 strerror(-rc));
			goto fail;
		}
	}
	p->filt = calloc(EGW_XDP_FILTER_MAPS * EGW_XDP_FILTER_WORDS, sizeof(*p->filt));
	if (p->filt == NULL) {
		rc = -ENOMEM;
		snprintf(err, errlen, "%s: no memory", p->ifname);
		goto fail;
	}
	for (m = 0; m < EGW_XDP_FILTER_MAPS * EGW_XDP_FILTER_WORDS; m++)
		if (bpf_map_update_elem(p->fd[M_FILTER], &m, &p->filt[m], BPF_ANY) != 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: clear egw_filter: %s", p->ifname, strerror(-rc));
			goto fail;
		}
	/* empty maps, empty filter: every part valid */
	p->flags = (access ? EGW_XDP_F_ACCESS : 0) | FILT_ALL;
	rc = write_cfg(p);
	if (rc < 0) {
		snprintf(err, errlen, "%s: egw_cfg: %s", p->ifname, strerror(-rc));
		goto fail;
	}
	/* events first, so that no change between the read and the events is
	 * missed */
	nl_open();
	kern_sync(p);
	/* pins are for inspection: steering works without them */
	if (pin_maps(p, perr, sizeof(perr)) < 0) {
		fprintf(stderr, "warning: XDP on %s: %s\n", p->ifname, perr);
		unpin_maps(p);
	}
	p->open = true;
	return 0;
fail:
	close_fds(p);
	return rc;
}

void
egw_xdp_port_close(uint16_t port)
{
	struct xdp_port *p;

	if (port >= EGW_XDP_MAX_PORTS || !ports[port].open)
		return;
	p = &ports[port];
	unpin_maps(p);
	close_fds(p);
	p->open = false;
	if (!egw_xdp_any_active() && nl_fd >= 0) {
		close(nl_fd);
		nl_fd = -1;
	}
}

bool
egw_xdp_port_active(uint16_t port)
{
	return port < EGW_XDP_MAX_PORTS && ports[port].open;
}

bool
egw_xdp_port_generic(uint16_t port)
{
	return egw_xdp_port_active(port) && ports[port].mode == XDP_ATTACHED_SKB;
}

bool
egw_xdp_any_active(void)
{
	unsigned int i;

	for (i = 0; i < EGW_XDP_MAX_PORTS; i++)
		if (ports[i].open)
			return true;
	return false;
}

int
egw_xdp_set_access(uint16_t port, bool access)
{
	struct xdp_port *p;
	uint32_t old;
	int rc;

	if (!egw_xdp_port_active(port))
		return -ENODEV;
	p = &ports[port];
	old = p->flags;
	p->flags = access ? (old | EGW_XDP_F_ACCESS) : (old & ~EGW_XDP_F_ACCESS);
	rc = write_cfg(p);
	if (rc < 0)
		p->flags = old;
	return rc;
}

/* One reference more or less on a key of map m of port p. */
static int
ref_update(struct xdp_port *p, enum xdp_map m, const void *key, bool add)
{
	uint32_t v;

	if (bpf_map_lookup_elem(p->fd[m], key, &v) == 0) {
		if (add) {
			v++;
			return bpf_map_update_elem(p->fd[m], key, &v, BPF_EXIST) == 0 ? 0 : -errno;
		}
		if (--v > 0)
			return bpf_map_update_elem(p->fd[m], key, &v, BPF_EXIST) == 0 ? 0 : -errno;
		if (bpf_map_delete_elem(p->fd[m], key) != 0)
			return -errno;
		p->n[m]--;
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	if (!add)
		return -ENOENT;
	v = 1;
	if (bpf_map_update_elem(p->fd[m], key, &v, BPF_NOEXIST) != 0)
		/* a full hash map says E2BIG, a full LPM trie ENOSPC */
		return errno == ENOSPC ? -E2BIG : -errno;
	p->n[m]++;
	return 0;
}

/* Call fn on every key of map m. */
static int
walk_keys(struct xdp_port *p, int m, void (*fn)(void *ctx, const void *key), void *ctx)
{
	uint8_t key[64], next[64];
	const void *prev = NULL;

	while (bpf_map_get_next_key(p->fd[m], prev, next) == 0) {
		fn(ctx, next);
		memcpy(key, next, sizeof(key));
		prev = key;
	}
	return errno == ENOENT ? 0 : -errno;
}

struct filt_build {
	uint64_t w[EGW_XDP_FILTER_MAPS * EGW_XDP_FILTER_WORDS];
	bool ok6, ok6r;
	bool route; /* the prefixes being added are routes: the R parts */
};

static void
filt_set(struct filt_build *b, uint32_t bit)
{
	b->w[bit >> 6] |= 1ULL << (bit & 63);
}

/* An IPv4 prefix a/len (a in host order) into the bitmaps. */
static void
filt_prefix4(struct filt_build *b, uint32_t a, uint32_t len)
{
	const uint32_t L1 = b->route ? EGW_XDP_FILTR4_L1 : EGW_XDP_FILT4_L1;
	const uint32_t C1 = L1 + EGW_XDP_FILTER_BITS, L2 = L1 + 2 * EGW_XDP_FILTER_BITS;
	uint32_t n, i, first;

	if (len >= 24) {
		filt_set(b, L1 + (a >> 16));
		filt_set(b, L2 + egw_xdp_fold24(a));
	} else if (len >= 16) {
		/* its /24s, at most 256, each have their bit */
		filt_set(b, L1 + (a >> 16));
		n = 1u << (24 - len);
		first = (a >> 8) & ~(n - 1);
		for (i = 0; i < n; i++)
			filt_set(b, L2 + egw_xdp_fold24((first + i) << 8));
	} else {
		/* its /16s are looked up whole */
		n = 1u << (16 - len);
		first = (a >> 16) & ~(n - 1);
		for (i = 0; i < n; i++) {
			filt_set(b, L1 + first + i);
			filt_set(b, C1 + first + i);
		}
	}
}

/* An IPv6 prefix a/len into the bitmaps. */
static void
filt_prefix6(struct filt_build *b, const uint8_t *a, uint32_t len)
{
	const uint32_t L1 = b->route ? EGW_XDP_FILTR6_L1 : EGW_XDP_FILT6_L1;
	const uint32_t C1 = L1 + EGW_XDP_FILTER_BITS, L2 = L1 + 2 * EGW_XDP_FILTER_BITS;
	uint8_t x[16];
	uint32_t n, i, first;

	if (len < 32) {
		/* spans /32s the fold cannot list */
		if (b->route)
			b->ok6r = false;
		else
			b->ok6 = false;
		return;
	}
	filt_set(b, L1 + egw_xdp_fold32(a));
	if (len >= 48) {
		filt_set(b, L2 + egw_xdp_fold48(a));
	} else if (len >= 40) {
		/* its /48s, at most 256 */
		memcpy(x, a, 16);
		n = 1u << (48 - len);
		first = egw_xdp_be16_at(a, 4) & ~(n - 1);
		for (i = 0; i < n; i++) {
			x[4] = (uint8_t)((first + i) >> 8);
			x[5] = (uint8_t)(first + i);
			filt_set(b, L2 + egw_xdp_fold48(x));
		}
	} else {
		filt_set(b, C1 + egw_xdp_fold32(a));
	}
}

static void
filt_addr4(void *ctx, const void *key)
{
	uint32_t a;

	memcpy(&a, key, 4);
	filt_prefix4(ctx, ntohl(a), 32);
}

static void
filt_addr6(void *ctx, const void *key)
{
	filt_prefix6(ctx, key, 128);
}

static void
filt_pool4(void *ctx, const void *key)
{
	const struct egw_xdp_lpm4 *k = key;
	uint32_t a;

	memcpy(&a, k->a, 4);
	filt_prefix4(ctx, ntohl(a), k->prefixlen);
}

static void
filt_pool6(void *ctx, const void *key)
{
	const struct egw_xdp_lpm6 *k = key;

	filt_prefix6(ctx, k->a, k->prefixlen);
}

static void
filt_own4(void *ctx, const void *key)
{
	filt_addr4(ctx, (const uint8_t *)key + offsetof(struct egw_xdp_own4, a));
}

static void
filt_own6(void *ctx, const void *key)
{
	filt_addr6(ctx, (const uint8_t *)key + offsetof(struct egw_xdp_own6, a));
}

static void
filt_flow(void *ctx, const void *key)
{
	const struct egw_xdp_flow_key *k = key;

	if (k->kind == EGW_XDP_FLOW_DST4)
		filt_addr4(ctx, k->a);
	else if (k->kind == EGW_XDP_FLOW_DST6)
		filt_addr6(ctx, k->a);
	else if (k->kind == EGW_XDP_FLOW_UDP_DPORT)
		filt_set(ctx, EGW_XDP_FILT_PORT + ntohs(k->port));
}

/* Rebuild egw_filter from the maps: a new entry's bits are set after the
 * entry (its frames reach the kernel until then), a deleted entry's bits
 * cleared after it. egw_natt needs no bits (it is looked up under a tunnel
 * address), egw_kern4/6 none (looked up under a route). */
static int
rebuild_filter(struct xdp_port *p)
{
	static struct filt_build b;
	uint32_t i, old = p->flags;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.ok6 = true;
	b.ok6r = true;
	rc |= walk_keys(p, M_ESP4, filt_addr4, &b);
	rc |= walk_keys(p, M_OWN4, filt_own4, &b);
	rc |= walk_keys(p, M_POOL4, filt_pool4, &b);
	rc |= walk_keys(p, M_ESP6, filt_addr6, &b);
	rc |= walk_keys(p, M_OWN6, filt_own6, &b);
	rc |= walk_keys(p, M_POOL6, filt_pool6, &b);
	rc |= walk_keys(p, M_FLOWS, filt_flow, &b);
	b.route = true;
	rc |= walk_keys(p, M_ROUTE4, filt_pool4, &b);
	rc |= walk_keys(p, M_ROUTE6, filt_pool6, &b);
	if (rc != 0) {
		/* not knowing every key: look up everything */
		p->flags &= ~FILT_ALL;
		return p->flags != old ? write_cfg(p) : 0;
	}
	for (i = 0; i < EGW_XDP_FILTER_MAPS * EGW_XDP_FILTER_WORDS; i++) {
		if (b.w[i] == p->filt[i])
			continue;
		if (bpf_map_update_elem(p->fd[M_FILTER], &i, &b.w[i], BPF_ANY) != 0) {
			p->flags &= ~FILT_ALL;
			write_cfg(p);
			return -errno;
		}
		p->filt[i] = b.w[i];
	}
	p->flags |= EGW_XDP_F_FILT4 | EGW_XDP_F_FILTP | EGW_XDP_F_FILTR4;
	if (b.ok6)
		p->flags |= EGW_XDP_F_FILT6;
	else
		p->flags &= ~EGW_XDP_F_FILT6;
	if (b.ok6r)
		p->flags |= EGW_XDP_F_FILTR6;
	else
		p->flags &= ~EGW_XDP_F_FILTR6;
	return p->flags != old ? write_cfg(p) : 0;
}

/* Apply to every open port (only < 0) or to port only; on a failure undo
 * the ports done, so that no port is changed. */
static int
update_ports(int only, enum xdp_map m, const void *key, bool add, const char *what, char *err,
	     size_t errlen)
{
	unsigned int i, j;
	int rc;

	for (i = 0; i < EGW_XDP_MAX_PORTS; i++) {
		struct xdp_port *p = &ports[i];
		uint32_t old;

		if (!p->open || (only >= 0 && i != (unsigned int)only))
			continue;
		rc = ref_update(p, m, key, add);
		if (rc == 0) {
			old = p->flags;
			p->flags =
				p->n[m] > 0 ? (p->flags | map_flag[m]) : (p->flags & ~map_flag[m]);
			if (p->flags != old)
				rc = write_cfg(p);
			if (rc < 0) {
				ref_update(p, m, key, !add);
				p->flags = old;
			}
		}
		if (rc == 0 && !batching)
			rc = rebuild_filter(p);
		if (rc < 0) {
			if (rc == -E2BIG)
				snprintf(err, errlen,
					 "XDP map %s of %s is full (%u entries): no room for %s",
					 map_names[m], p->ifname, p->max[m], what);
			else if (rc == -ENOENT)
				snprintf(err, errlen, "XDP map %s of %s: no %s", map_names[m],
					 p->ifname, what);
			else
				snprintf(err, errlen, "XDP map %s of %s: %s: %s", map_names[m],
					 p->ifname, what, strerror(-rc));
			for (j = 0; j < i; j++)
				if (ports[j].open && (only < 0 || j == (unsigned int)only) &&
				    ref_update(&ports[j], m, key, !add) == 0 && !batching)
					rebuild_filter(&ports[j]);
			return rc;
		}
	}
	return 0;
}

static int
fmt_addr(int family, const uint8_t *a, char *buf, size_t len)
{
	if (inet_ntop(family, a, buf, (socklen_t)len) == NULL) {
		snprintf(buf, len, "?");
		return -EINVAL;
	}
	return 0;
}

int
egw_xdp_addr(int kind, int family, const uint8_t *a, bool add, char *err, size_t errlen)
{
	struct egw_xdp_in6 k6;
	char what[INET6_ADDRSTRLEN + 32], s[INET6_ADDRSTRLEN];

	if (a == NULL || kind != EGW_XDP_ADDR_ESP || (family != AF_INET && family != AF_INET6)) {
		snprintf(err, errlen, "XDP address: bad argument");
		return -EINVAL;
	}
	fmt_addr(family, a, s, sizeof(s));
	snprintf(what, sizeof(what), "tunnel address %s", s);
	if (family == AF_INET)
		return update_ports(-1, M_ESP4, a, add, what, err, errlen);
	memcpy(k6.a, a, 16);
	return update_ports(-1, M_ESP6, &k6, add, what, err, errlen);
}

int
egw_xdp_own(uint16_t port, uint16_t vlan, int family, const uint8_t *a, bool add, char *err,
	    size_t errlen)
{
	char what[INET6_ADDRSTRLEN + 48], s[INET6_ADDRSTRLEN];

	if (a == NULL || vlan > 4094 || (family != AF_INET && family != AF_INET6)) {
		snprintf(err, errlen, "XDP address: bad argument");
		return -EINVAL;
	}
	if (!egw_xdp_port_active(port))
		return 0;
	fmt_addr(family, a, s, sizeof(s));
	if (vlan != 0)
		snprintf(what, sizeof(what), "address %s vlan %u", s, vlan);
	else
		snprintf(what, sizeof(what), "address %s", s);
	if (family == AF_INET) {
		struct egw_xdp_own4 k = {.vlan = vlan};

		memcpy(&k.a, a, 4);
		return update_ports(port, M_OWN4, &k, add, what, err, errlen);
	} else {
		struct egw_xdp_own6 k = {.vlan = vlan};

		memcpy(k.a, a, 16);
		return update_ports(port, M_OWN6, &k, add, what, err, errlen);
	}
}

static int
prefix_update(enum xdp_map m4, enum xdp_map m6, const char *kind, int family, const uint8_t *a,
	      uint8_t len, bool add, char *err, size_t errlen)
{
	char what[INET6_ADDRSTRLEN + 32], s[INET6_ADDRSTRLEN];

	if (a == NULL || (family == AF_INET && len > 32) || (family == AF_INET6 && len > 128) ||
	    (family != AF_INET && family != AF_INET6)) {
		snprintf(err, errlen, "XDP %s: bad argument", kind);
		return -EINVAL;
	}
	fmt_addr(family, a, s, sizeof(s));
	snprintf(what, sizeof(what), "%s %s/%u", kind, s, len);
	if (family == AF_INET) {
		struct egw_xdp_lpm4 k = {.prefixlen = len};

		memcpy(k.a, a, 4);
		return update_ports(-1, m4, &k, add, what, err, errlen);
	} else {
		struct egw_xdp_lpm6 k = {.prefixlen = len};

		memcpy(k.a, a, 16);
		return update_ports(-1, m6, &k, add, what, err, errlen);
	}
}

int
egw_xdp_pool(int family, const uint8_t *a, uint8_t len, bool add, char *err, size_t errlen)
{
	return prefix_update(M_POOL4, M_POOL6, "pool", family, a, len, add, err, errlen);
}

bool
egw_xdp_pool_holds(int family, const uint8_t *a)
{
	unsigned int i;
	uint32_t v;

	/* every open port holds the same pools: the first one answers, by
	 * the trie's own longest-prefix lookup of the whole address */
	for (i = 0; i < EGW_XDP_MAX_PORTS; i++) {
		if (!ports[i].open)
			continue;
		if (family == AF_INET) {
			struct egw_xdp_lpm4 k = {.prefixlen = 32};

			memcpy(k.a, a, 4);
			return bpf_map_lookup_elem(ports[i].fd[M_POOL4], &k, &v) == 0;
		} else {
			struct egw_xdp_lpm6 k = {.prefixlen = 128};

			memcpy(k.a, a, 16);
			return bpf_map_lookup_elem(ports[i].fd[M_POOL6], &k, &v) == 0;
		}
	}
	return false;
}

int
egw_xdp_route(int family, const uint8_t *a, uint8_t len, bool add, char *err, size_t errlen)
{
	int rc;

	/* a route may cover an address the kernel gained since the last event
	 * was read: read them now */
	if (add && !batching)
		egw_xdp_service();
	rc = prefix_update(M_ROUTE4, M_ROUTE6, "route", family, a, len, add, err, errlen);
	return rc;
}

int
egw_xdp_natt(int family, const uint8_t *a, uint16_t port, bool add, char *err, size_t errlen)
{
	struct egw_xdp_natt_key k;
	char what[INET6_ADDRSTRLEN + 48], s[INET6_ADDRSTRLEN];

	if (a == NULL || port == 0 || (family != AF_INET && family != AF_INET6)) {
		snprintf(err, errlen, "XDP ESP-in-UDP port: bad argument");
		return -EINVAL;
	}
	memset(&k, 0, sizeof(k));
	k.ip = family == AF_INET ? 4 : 6;
	k.port = htons(port);
	memcpy(k.a, a, family == AF_INET ? 4 : 16);
	fmt_addr(family, a, s, sizeof(s));
	snprintf(what, sizeof(what), "ESP in UDP to %s port %u", s, port);
	return update_ports(-1, M_NATT, &k, add, what, err, errlen);
}

int
egw_xdp_flow(const struct egw_xdp_flow_key *k, bool add, char *err, size_t errlen)
{
	char what[INET6_ADDRSTRLEN + 32], s[INET6_ADDRSTRLEN];

	if (k == NULL || k->kind < EGW_XDP_FLOW_DST4 || k->kind > EGW_XDP_FLOW_UDP_DPORT) {
		snprintf(err, errlen, "XDP flow: bad argument");
		return -EINVAL;
	}
	if (k->kind == EGW_XDP_FLOW_UDP_DPORT) {
		snprintf(what, sizeof(what), "flow udp-dport %u", ntohs(k->port));
	} else {
		fmt_addr(k->kind == EGW_XDP_FLOW_DST4 ? AF_INET : AF_INET6, k->a, s, sizeof(s));
		snprintf(what, sizeof(what), "flow dst %s", s);
	}
	return update_ports(-1, M_FLOWS, k, add, what, err, errlen);
}

int
egw_xdp_batch(bool begin)
{
	unsigned int i;
	int rc = 0, r;

	if (begin) {
		batching = true;
		return 0;
	}
	batching = false;
	for (i = 0; i < EGW_XDP_MAX_PORTS; i++)
		if (ports[i].open && (r = rebuild_filter(&ports[i])) < 0)
			rc = r;
	return rc;
}

int
egw_xdp_counters(uint16_t port, struct egw_xdp_counter out[EGW_XDP_CLS_MAX])
{
	static struct egw_xdp_counter v[1024];
	int ncpu = libbpf_num_possible_cpus(), c;
	uint32_t k;

	if (!egw_xdp_port_active(port))
		return -ENODEV;
	if (ncpu <= 0 || ncpu > (int)(sizeof(v) / sizeof(v[0])))
		return -ERANGE;
	for (k = 0; k < EGW_XDP_CLS_MAX; k++) {
		if (bpf_map_lookup_elem(ports[port].fd[M_STATS], &k, v) != 0)
			return -errno;
		out[k].packets = 0;
		out[k].bytes = 0;
		for (c = 0; c < ncpu; c++) {
			out[k].packets += v[c].packets;
			out[k].bytes += v[c].bytes;
		}
	}
	return 0;
}

void
egw_xdp_show(FILE *f)
{
	struct egw_xdp_counter cnt[EGW_XDP_CLS_MAX];
	unsigned int i, m, k;
	bool any = false;

	for (i = 0; i < EGW_XDP_MAX_PORTS; i++) {
		const struct xdp_port *p = &ports[i];

		if (!p->open)
			continue;
		any = true;
		fprintf(f, "port %u (%s, ifindex %u): program egw_xdp_steer id %u, %s mode, %s\n",
			i, p->ifname, p->ifindex, p->prog_id, mode_name(p->mode),
			(p->flags & EGW_XDP_F_ACCESS) ? "access port (PPPoE is edgegw's)"
						      : "PPPoE is the kernel's");
		if (!p->kern_ok)
			fprintf(f, "  routes not steered: the kernel's addresses are not all "
				   "known (see the warning at start)\n");
		if (p->mode == XDP_ATTACHED_SKB)
			fprintf(f, "  generic mode: every frame gets an skb before the program "
				   "runs and AF_XDP copies each of edgegw's (the cost: "
				   "docs/afxdp.md)\n");
		fprintf(f, "  maps%s%s:\n", p->pin[0] ? " pinned under " : " (not pinned)", p->pin);
		for (m = 0; m < M_MAX; m++) {
			if (m == M_XSKS)
				fprintf(f, "    %-10s %u queue slots (net_af_xdp's sockets)\n",
					map_names[m], p->max[m]);
			else if (m == M_CFG)
				fprintf(f, "    %-10s flags 0x%02x\n", map_names[m], p->flags);
			else if (m == M_FILTER)
				fprintf(f,
					"    %-10s pre-check of IPv4 /16s, IPv6 /32s, UDP ports, "
					"and "
					"of the routes apart%s%s\n",
					map_names[m],
					(p->flags & EGW_XDP_F_FILT6) ? ""
								     : " (IPv6 part off: a pool "
								       "shorter than /32)",
					(p->flags & EGW_XDP_F_FILTR6) ? ""
								      : " (IPv6 route part off: a "
									"route shorter than /32)");
			else if (m == M_KERNQ)
				fprintf(f,
					"    %-10s the kernel's addresses while at most %u of a "
					"family\n",
					map_names[m], EGW_XDP_KERNQ);
			else if (m == M_STATS)
				fprintf(f, "    %-10s %u classes per CPU\n", map_names[m],
					p->max[m]);
			else
				fprintf(f, "    %-10s %u/%u entries\n", map_names[m], p->n[m],
					p->max[m]);
		}
		if (egw_xdp_counters((uint16_t)i, cnt) < 0) {
			fprintf(f, "  counters: %s\n", strerror(errno));
			continue;
		}
		fprintf(f, "  %-12s %16s %20s\n", "class", "packets", "bytes");
		for (k = 0; k < EGW_XDP_CLS_MAX; k++)
			fprintf(f, "  %-12s %16" PRIu64 " %20" PRIu64 "\n", cls_names[k],
				(uint64_t)cnt[k].packets, (uint64_t)cnt[k].bytes);
	}
	if (!any)
		fprintf(f, "xdp: no port runs edgegw's XDP steering program (net_af_xdp with "
			   "xdp_prog=egw_xdp.bpf.o)\n");
}

int
egw_xdp_port_info(uint16_t port, struct egw_xdp_port_info *out)
{
	const struct xdp_port *p;
	unsigned int m;
	int rc;

	if (!egw_xdp_port_active(port) || out == NULL)
		return -ENODEV;
	p = &ports[port];
	memset(out, 0, sizeof(*out));
	snprintf(out->ifname, sizeof(out->ifname), "%s", p->ifname);
	out->ifindex = p->ifindex;
	out->prog_id = p->prog_id;
	out->mode = p->mode == XDP_ATTACHED_DRV   ? "native"
		    : p->mode == XDP_ATTACHED_SKB ? "generic"
						  : "other";
	out->flags = p->flags;
	out->kernel_addrs_known = p->kern_ok;
	rc = egw_xdp_counters(port, out->cls);
	if (rc < 0)
		return rc;
	/* the maps edgegw fills (not xsks_map, egw_cfg, egw_stats, egw_filter) */
	for (m = M_ESP4; m <= M_KERN6 && out->n_maps < EGW_XDP_INFO_MAPS; m++) {
		out->maps[out->n_maps].name = map_names[m];
		out->maps[out->n_maps].entries = p->n[m];
		out->maps[out->n_maps].max = p->max[m];
		out->n_maps++;
	}
	return 0;
}

void
egw_xdp_json(FILE *f)
{
	struct egw_xdp_port_info in;
	unsigned int i, k;
	bool first = true;

	fprintf(f, "[");
	for (i = 0; i < EGW_XDP_MAX_PORTS; i++) {
		if (egw_xdp_port_info((uint16_t)i, &in) < 0)
			continue;
		fprintf(f,
			"%s{\"port\": %u, \"ifname\": \"%s\", \"prog_id\": %u, \"mode\": \"%s\", "
			"\"flags\": %u, \"kernel_addrs_known\": %s, \"classes\": {",
			first ? "" : ", ", i, in.ifname, in.prog_id, in.mode, in.flags,
			in.kernel_addrs_known ? "true" : "false");
		for (k = 0; k < EGW_XDP_CLS_MAX; k++)
			fprintf(f, "%s\"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
				k ? ", " : "", cls_names[k], (uint64_t)in.cls[k].packets,
				(uint64_t)in.cls[k].bytes);
		fprintf(f, "}, \"maps\": {");
		for (k = 0; k < in.n_maps; k++)
			fprintf(f, "%s\"%s\": {\"entries\": %u, \"max\": %u}", k ? ", " : "",
				in.maps[k].name, in.maps[k].entries, in.maps[k].max);
		fprintf(f, "}}");
		first = false;
	}
	fprintf(f, "]");
}
