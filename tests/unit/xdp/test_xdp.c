/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP steering program (lib/xdp/egw_xdp.bpf.o) as the kernel runs it:
 * loaded with libbpf, checked by the kernel's verifier, and run with
 * BPF_PROG_TEST_RUN (bpf_prog_test_run_opts) over a table of frames: every
 * class, VLAN and QinQ stacks, truncated headers, IPv4 options, IPv6
 * extension headers, ESP to a non-local address, ESP in UDP against IKE and
 * keepalives and on an SA's own NAT-T port, PPPoE on a non-access port,
 * edgegw's addresses per VLAN (untagged, one tag, QinQ), routed prefixes
 * and the kernel's addresses inside them. Each case checks the verdict and
 * the class, read back from the program's own per-CPU counters (egw_stats),
 * which is how `show xdp` sees it too.
 *
 * XDP_REDIRECT under BPF_PROG_TEST_RUN: bpf_redirect_map() on an XSKMAP
 * returns XDP_REDIRECT only if the slot holds a socket, otherwise its
 * fallback (XDP_PASS here). So the test binds a real AF_XDP socket (copy
 * mode) to queue 2 of a veth it creates with four RX queues, puts it in
 * xsks_map at key 2, and runs frames as received on that device and queue
 * (xdp_md.ingress_ifindex, rx_queue_index): queue 2 gives XDP_REDIRECT,
 * queue 1 (no socket) XDP_PASS with the NO_XSK count. No test-only build
 * of the program is needed.
 *
 * Then a fuzz-style run: random frames, biased to reach the deep parsers,
 * must give XDP_PASS or XDP_REDIRECT and count exactly one class.
 *
 * BPF_PROG_TEST_RUN here (Linux 6.18) takes xdp_md.data_end as the frame
 * length when a context is given: data_end = 0 ran every frame as empty.
 *
 * Needs root and BPF (and veth): exits 77 saying why when they are absent.
 * argv[1]: path of egw_xdp.bpf.o; [fuzz iterations] [seed].
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egw_xdp.h"
#include "../app/check.h"

#define SKIP 77
#define MAX_CPUS 1024
#define DIM(a) (sizeof(a) / sizeof((a)[0]))
#define XSK_QUEUE 2
#define NOSOCK_QUEUE 1

static char veth[IFNAMSIZ], peer[IFNAMSIZ], kveth[IFNAMSIZ];
static int ifindex;
static int prog_fd, cfg_fd, stats_fd;
static struct bpf_object *obj_main;
static int ncpu;

static const char *const cls_name[EGW_XDP_CLS_MAX] = {
	"kernel", "malformed", "pppoe-disc", "pppoe-sess", "esp",
	"own",    "pool",      "rxtok",      "route",      "no-xsk",
};

static void
del_veth(void)
{
	char cmd[96];

	if (kveth[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "ip link del %s 2>/dev/null", kveth);
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not delete %s\n", kveth);
		kveth[0] = '\0';
	}

	if (veth[0] == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "ip link del %s 2>/dev/null", veth);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not delete %s\n", veth);
	veth[0] = '\0';
}

/* ---- frames ------------------------------------------------------------------ */

struct frame {
	uint8_t b[1600];
	unsigned int n;
};

static void
put(struct frame *f, const void *p, unsigned int n)
{
	if (f->n + n > sizeof(f->b))
		abort();
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void
put8(struct frame *f, uint8_t v)
{
	put(f, &v, 1);
}

static void
put16(struct frame *f, uint16_t v)
{
	uint16_t be = htons(v);

	put(f, &be, 2);
}

static void
put32(struct frame *f, uint32_t v)
{
	uint32_t be = htonl(v);

	put(f, &be, 4);
}

static void
zeros(struct frame *f, unsigned int n)
{
	while (n-- > 0)
		put8(f, 0);
}

/* Ethernet header with VLAN tags (tpids[i] != 0) and the ethertype. */
static void
eth(struct frame *f, const uint16_t *tpids, unsigned int ntags, uint16_t type)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 1}, src[6] = {0x02, 0, 0, 0, 0, 2};
	unsigned int i;

	f->n = 0;
	put(f, dst, 6);
	put(f, src, 6);
	for (i = 0; i < ntags; i++) {
		put16(f, tpids[i]);
		put16(f, 100 + i);
	}
	put16(f, type);
}

/* Set the VLAN id of tag i of a frame eth() made. */
static void
vid(struct frame *f, unsigned int i, uint16_t id)
{
	f->b[14 + 4 * i] = (uint8_t)(id >> 8);
	f->b[15 + 4 * i] = (uint8_t)id;
}

static uint32_t
ip4(const char *s)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		abort();
	return ntohl(a.s_addr);
}

static void
ip6(uint8_t out[16], const char *s)
{
	if (inet_pton(AF_INET6, s, out) != 1)
		abort();
}

/* IPv4 header of ihl words (options zero-filled: EOL), then l4len bytes
 * follow; frag: flags+offset field. Checksum not computed (XDP does not
 * look at it). */
static void
ipv4(struct frame *f, unsigned int ihl, uint8_t proto, uint32_t dst, unsigned int l4len,
     uint16_t frag)
{
	put8(f, (uint8_t)(0x40 | ihl));
	put8(f, 0);
	put16(f, (uint16_t)(ihl * 4 + l4len));
	put16(f, 1);
	put16(f, frag);
	put8(f, 64);
	put8(f, proto);
	put16(f, 0);
	put32(f, ip4("10.0.0.2"));
	put32(f, dst);
	if (ihl > 5)
		zeros(f, (ihl - 5) * 4);
}

static void
udp(struct frame *f, uint16_t dport, unsigned int plen)
{
	put16(f, 40000);
	put16(f, dport);
	put16(f, (uint16_t)(8 + plen));
	put16(f, 0);
}

static void
ipv6(struct frame *f, uint8_t nh, const char *dst, unsigned int plen)
{
	uint8_t a[16];

	put32(f, 0x60000000);
	put16(f, (uint16_t)plen);
	put8(f, nh);
	put8(f, 64);
	ip6(a, "2001:db8:ffff::2");
	put(f, a, 16);
	ip6(a, dst);
	put(f, a, 16);
}

/* an 8-byte hop-by-hop/destination options header (PadN) */
static void
ext8(struct frame *f, uint8_t nh)
{
	put8(f, nh);
	put8(f, 0);
	put8(f, 1);
	put8(f, 4);
	zeros(f, 4);
}

/* ---- the program ------------------------------------------------------------- */

static void
counters(uint64_t out[EGW_XDP_CLS_MAX])
{
	static struct egw_xdp_counter v[MAX_CPUS];
	uint32_t k;
	int c;

	for (k = 0; k < EGW_XDP_CLS_MAX; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(stats_fd, &k, v) != 0) {
			fprintf(stderr, "egw_stats lookup %u: %s\n", k, strerror(errno));
			exit(1);
		}
		for (c = 0; c < ncpu; c++)
			out[k] += v[c].packets;
	}
}

static void
set_flags(uint32_t flags)
{
	struct egw_xdp_cfg c = {.flags = flags};
	uint32_t k = 0;

	if (bpf_map_update_elem(cfg_fd, &k, &c, BPF_ANY) != 0) {
		fprintf(stderr, "egw_cfg update: %s\n", strerror(errno));
		exit(1);
	}
}

/* every map flag, as the control side sets them when each map has entries */
#define EGW_XDP_F_ALL                                                                           \
	(EGW_XDP_F_ACCESS | EGW_XDP_F_ESP4 | EGW_XDP_F_ESP6 | EGW_XDP_F_OWN4 | EGW_XDP_F_OWN6 | \
	 EGW_XDP_F_POOL4 | EGW_XDP_F_POOL6 | EGW_XDP_F_FLOWS | EGW_XDP_F_ROUTE4 |               \
	 EGW_XDP_F_ROUTE6 | EGW_XDP_F_NATT)

static int run_once(const struct frame *fr, uint32_t queue, int *cls, bool *noxsk);

/* Run one frame; returns the verdict, *cls the class counted (-1: none or
 * several), *noxsk whether NO_XSK was counted. The counters are the
 * program's, which a frame the veth's kernel side sends meanwhile (IPv6
 * router solicitations, MLD) also moves: a count that is not exactly one
 * class is taken again, up to three times (the program is deterministic,
 * so a real double count shows in every run). */
static int
run(const struct frame *fr, uint32_t queue, int *cls, bool *noxsk)
{
	int v = 0, i;

	for (i = 0; i < 3; i++) {
		v = run_once(fr, queue, cls, noxsk);
		if (*cls >= 0)
			break;
	}
	return v;
}

static int
run_once(const struct frame *fr, uint32_t queue, int *cls, bool *noxsk)
{
	struct xdp_md md = {
		.data_end = fr->n, .ingress_ifindex = (uint32_t)ifindex, .rx_queue_index = queue};
	uint64_t before[EGW_XDP_CLS_MAX], after[EGW_XDP_CLS_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fr->b, .data_size_in = fr->n, .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1);
	int k, n = 0;

	counters(before);
	if (bpf_prog_test_run_opts(prog_fd, &o) != 0) {
		fprintf(stderr, "BPF_PROG_TEST_RUN (%u bytes): %s\n", fr->n, strerror(errno));
		exit(1);
	}
	counters(after);
	*cls = -1;
	for (k = 0; k < EGW_XDP_CLS_NO_XSK; k++) {
		if (after[k] - before[k] == 1) {
			*cls = k;
			n++;
		} else if (after[k] != before[k]) {
			n += 2;
		}
	}
	if (n != 1)
		*cls = -1;
	*noxsk = after[EGW_XDP_CLS_NO_XSK] - before[EGW_XDP_CLS_NO_XSK] == 1;
	return (int)o.retval;
}

static void
expect(const char *name, const struct frame *fr, int cls)
{
	bool steered = cls != EGW_XDP_CLS_KERNEL && cls != EGW_XDP_CLS_MALFORMED;
	bool noxsk;
	int got, v;

	v = run(fr, XSK_QUEUE, &got, &noxsk);
	CHECK(v == (steered ? XDP_REDIRECT : XDP_PASS) && got == cls && !noxsk,
	      "%s: verdict %d class %s%s, want %s class %s", name, v,
	      got < 0 ? "none/several" : cls_name[got], noxsk ? " +no-xsk" : "",
	      steered ? "REDIRECT" : "PASS", cls_name[cls]);
	/* the same frame on a queue without a socket: the kernel gets it */
	v = run(fr, NOSOCK_QUEUE, &got, &noxsk);
	CHECK(v == XDP_PASS && got == cls && noxsk == steered,
	      "%s on queue %u (no socket): verdict %d class %s%s", name, NOSOCK_QUEUE, v,
	      got < 0 ? "none/several" : cls_name[got], noxsk ? " +no-xsk" : "");
}

/* ---- set-up ------------------------------------------------------------------ */

static int
xsk_bind(int idx, uint32_t queue)
{
	static const size_t len = 64 * 4096;
	struct xdp_umem_reg mr;
	struct sockaddr_xdp sx;
	int fd, n = 64;
	void *umem;

	fd = socket(AF_XDP, SOCK_RAW, 0);
	if (fd < 0) {
		printf("SKIP: no AF_XDP sockets: %s\n", strerror(errno));
		exit(SKIP);
	}
	umem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED)
		return -errno;
	memset(&mr, 0, sizeof(mr));
	mr.addr = (uintptr_t)umem;
	mr.len = len;
	mr.chunk_size = 4096;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) != 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) != 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) != 0 ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) != 0)
		return -errno;
	memset(&sx, 0, sizeof(sx));
	sx.sxdp_family = AF_XDP;
	sx.sxdp_ifindex = (uint32_t)idx;
	sx.sxdp_queue_id = queue;
	sx.sxdp_flags = XDP_COPY;
	if (bind(fd, (struct sockaddr *)&sx, sizeof(sx)) != 0)
		return -errno;
	return fd;
}

static int
map_fd(struct bpf_object *obj, const char *name)
{
	int fd = bpf_object__find_map_fd_by_name(obj, name);

	if (fd < 0) {
		fprintf(stderr, "%s: no map %s\n", bpf_object__name(obj), name);
		exit(1);
	}
	return fd;
}

static void
add(int fd, const void *key)
{
	uint32_t one = 1;

	if (bpf_map_update_elem(fd, key, &one, BPF_NOEXIST) != 0) {
		fprintf(stderr, "map update: %s\n", strerror(errno));
		exit(1);
	}
}

static struct bpf_object *
load(const char *path)
{
	static char log[1 << 20];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = log, .kernel_log_size = sizeof(log),
		    .kernel_log_level = 0);
	struct bpf_program *p;
	struct bpf_object *obj;
	int rc;

	obj = bpf_object__open_file(path, &oo);
	if (obj == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	rc = bpf_object__load(obj);
	if (rc == -EPERM || rc == -ENOSYS) {
		printf("SKIP: the kernel refuses BPF (%s): run as root on a kernel with BPF\n",
		       strerror(-rc));
		exit(SKIP);
	}
	if (rc != 0) {
		fprintf(stderr, "%s: load failed (%s); verifier log:\n%s\n", path, strerror(-rc),
			log);
		exit(1);
	}
	p = bpf_object__find_program_by_name(obj, "egw_xdp_steer");
	if (p == NULL) {
		fprintf(stderr, "%s: no program egw_xdp_steer\n", path);
		exit(1);
	}
	prog_fd = bpf_program__fd(p);
	return obj;
}

/* ---- the table --------------------------------------------------------------- */

static const uint16_t Q[] = {0x8100}, QQ[] = {0x88a8, 0x8100}, Q91[] = {0x9100, 0x8100},
		      QQQ[] = {0x88a8, 0x8100, 0x8100};

static void
pppoe(struct frame *f, const uint16_t *tags, unsigned int nt, uint16_t type)
{
	eth(f, tags, nt, type);
	put8(f, 0x11);
	put8(f, type == 0x8863 ? 0x09 : 0);
	put16(f, type == 0x8863 ? 0 : 0x1234);
	put16(f, 4);
	put32(f, 0x01010000);
}

static void
udp4(struct frame *f, const char *dst, uint16_t dport, uint32_t first, unsigned int plen)
{
	eth(f, NULL, 0, 0x0800);
	ipv4(f, 5, IPPROTO_UDP, ip4(dst), 8 + plen, 0);
	udp(f, dport, plen);
	if (plen >= 4) {
		put32(f, first);
		zeros(f, plen - 4);
	} else {
		zeros(f, plen);
	}
}

static void
arp(struct frame *f, const char *tpa, bool cut)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 2};

	eth(f, NULL, 0, 0x0806);
	put16(f, 1);
	put16(f, 0x0800);
	put8(f, 6);
	put8(f, 4);
	put16(f, 1);
	put(f, mac, 6);
	put32(f, ip4("10.0.0.2"));
	zeros(f, 6);
	if (!cut)
		put32(f, ip4(tpa));
}

static void
ns6(struct frame *f, const char *target)
{
	uint8_t t[16];

	eth(f, NULL, 0, 0x86dd);
	ipv6(f, 58, "ff02::1:ff00:1", 24);
	put8(f, 135);
	put8(f, 0);
	put16(f, 0);
	put32(f, 0);
	ip6(t, target);
	put(f, t, 16);
}

static void
tcp4(struct frame *f, const char *dst)
{
	eth(f, NULL, 0, 0x0800);
	ipv4(f, 5, IPPROTO_TCP, ip4(dst), 20, 0);
	zeros(f, 20);
}

static void
tcp6(struct frame *f, const char *dst)
{
	eth(f, NULL, 0, 0x86dd);
	ipv6(f, IPPROTO_TCP, dst, 20);
	zeros(f, 20);
}

static void
table(void)
{
	struct frame f;
	unsigned int i;

	pppoe(&f, NULL, 0, 0x8863);
	expect("PADI", &f, EGW_XDP_CLS_PPPOE_DISC);
	pppoe(&f, Q, 1, 0x8864);
	expect("PPPoE session, 802.1Q", &f, EGW_XDP_CLS_PPPOE_SESS);
	pppoe(&f, QQ, 2, 0x8863);
	expect("PADI, QinQ 88a8/8100", &f, EGW_XDP_CLS_PPPOE_DISC);
	pppoe(&f, Q91, 2, 0x8864);
	expect("PPPoE session, QinQ 9100/8100", &f, EGW_XDP_CLS_PPPOE_SESS);
	pppoe(&f, QQQ, 3, 0x8863);
	expect("PADI under three tags", &f, EGW_XDP_CLS_KERNEL);
	pppoe(&f, NULL, 0, 0x8863);
	f.n = 14 + 5;
	expect("PADI cut inside the PPPoE header", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x8100);
	expect("802.1Q ethertype, no tag", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x88cc);
	zeros(&f, 40);
	expect("LLDP", &f, EGW_XDP_CLS_KERNEL);

	/* ESP */
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, 50, ip4("192.0.2.1"), 24, 0);
	zeros(&f, 24);
	expect("ESP to the tunnel address", &f, EGW_XDP_CLS_ESP);
	eth(&f, Q, 1, 0x0800);
	ipv4(&f, 5, 50, ip4("192.0.2.1"), 24, 0);
	zeros(&f, 24);
	expect("ESP to the tunnel address, 802.1Q", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, 50, ip4("192.0.2.2"), 24, 0);
	zeros(&f, 24);
	expect("ESP to a non-local address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.1", 4500, 0x1000, 32);
	expect("UDP 4500 (SPI 0x1000) to the tunnel address", &f, EGW_XDP_CLS_ESP);
	udp4(&f, "192.0.2.1", 4500, 0, 32);
	expect("UDP 4500 IKE (non-ESP marker) to the tunnel address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.1", 4500, 0, 1);
	f.b[f.n - 1] = 0xff;
	expect("UDP 4500 NAT keepalive", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.2", 4500, 0x1000, 32);
	expect("UDP 4500 to a non-local address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.1", 500, 0x1000, 32);
	expect("UDP 500 to the tunnel address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.1", 4500, 0x1000, 32);
	f.n = 14 + 20 + 6;
	expect("UDP 4500 cut inside the UDP header", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 8, IPPROTO_UDP, ip4("192.0.2.1"), 40, 0);
	udp(&f, 4500, 32);
	put32(&f, 0x2000);
	zeros(&f, 28);
	expect("IPv4 with 12 bytes of options, UDP 4500 ESP", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 15, IPPROTO_UDP, ip4("192.0.2.1"), 8, 0);
	f.n = 14 + 40;
	expect("IPv4 IHL 15, frame ends inside the options", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_UDP, ip4("192.0.2.1"), 8, 0);
	f.b[14] = 0x44;
	expect("IPv4 IHL 4", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_UDP, ip4("192.0.2.1"), 8, 0);
	f.b[14] = 0x65;
	expect("version 6 under ethertype IPv4", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_UDP, ip4("192.0.2.1"), 16, 0x00b9);
	zeros(&f, 16);
	expect("a later UDP fragment to the tunnel address", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x0800);
	f.n = 14 + 19;
	memset(f.b + 14, 0x45, 19);
	expect("IPv4 header cut at 19 bytes", &f, EGW_XDP_CLS_MALFORMED);

	/* edgegw's own address, pools, flows, the kernel's address */
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.1"), 20, 0);
	zeros(&f, 20);
	expect("TCP to edgegw's address", &f, EGW_XDP_CLS_OWN);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, 50, ip4("198.51.100.1"), 24, 0);
	zeros(&f, 24);
	expect("ESP to edgegw's address (no SA tunnel there)", &f, EGW_XDP_CLS_OWN);
	arp(&f, "198.51.100.1", false);
	expect("ARP for edgegw's address", &f, EGW_XDP_CLS_OWN);
	arp(&f, "10.0.0.1", false);
	expect("ARP for the kernel's address", &f, EGW_XDP_CLS_KERNEL);
	arp(&f, "198.51.100.1", true);
	expect("ARP cut before the target address", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_ICMP, ip4("10.0.0.1"), 8, 0);
	put32(&f, 0x08000000);
	put32(&f, 0x00010001);
	expect("ping to the kernel's address", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("100.64.1.2"), 20, 0);
	zeros(&f, 20);
	expect("TCP to a pool address", &f, EGW_XDP_CLS_POOL);
	eth(&f, QQ, 2, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("100.127.255.255"), 20, 0);
	zeros(&f, 20);
	expect("TCP to a pool's last address, QinQ", &f, EGW_XDP_CLS_POOL);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("100.128.0.1"), 20, 0);
	zeros(&f, 20);
	expect("TCP just outside the pool", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("203.0.113.9"), 20, 0);
	zeros(&f, 20);
	expect("TCP to an rxtokens destination", &f, EGW_XDP_CLS_RXTOK);
	udp4(&f, "10.0.0.1", 5555, 1, 8);
	expect("UDP to an rxtokens port", &f, EGW_XDP_CLS_RXTOK);
	udp4(&f, "10.0.0.1", 5556, 1, 8);
	expect("UDP to another port", &f, EGW_XDP_CLS_KERNEL);

	/* an SA's own NAT-T port (natt dport 4501) on its tunnel address */
	udp4(&f, "192.0.2.1", 4501, 0x1000, 32);
	expect("UDP 4501 ESP to the tunnel address of an SA on 4501", &f, EGW_XDP_CLS_ESP);
	udp4(&f, "192.0.2.1", 4501, 0, 32);
	expect("UDP 4501 IKE (non-ESP marker) to that tunnel address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.1", 4502, 0x1000, 32);
	expect("UDP 4502 to that tunnel address", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "192.0.2.2", 4501, 0x1000, 32);
	expect("UDP 4501 to a non-local address", &f, EGW_XDP_CLS_KERNEL);

	/* addresses per VLAN: 198.51.100.1 untagged, 198.51.100.100 on VLAN 100 */
	eth(&f, Q, 1, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.1"), 20, 0);
	zeros(&f, 20);
	expect("TCP to the untagged address, on VLAN 100", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, Q, 1, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.100"), 20, 0);
	zeros(&f, 20);
	expect("TCP to the VLAN 100 address, on VLAN 100", &f, EGW_XDP_CLS_OWN);
	vid(&f, 0, 0x2000 | 100); /* priority bits are not the id */
	expect("TCP to the VLAN 100 address, VLAN 100 with PCP 1", &f, EGW_XDP_CLS_OWN);
	vid(&f, 0, 101);
	expect("TCP to the VLAN 100 address, on VLAN 101", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, NULL, 0, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.100"), 20, 0);
	zeros(&f, 20);
	expect("TCP to the VLAN 100 address, untagged", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, QQ, 2, 0x0800);
	vid(&f, 1, 100);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.100"), 20, 0);
	zeros(&f, 20);
	expect("TCP to the VLAN 100 address, QinQ 100/100", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, QQ, 2, 0x0800);
	ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.1"), 20, 0);
	zeros(&f, 20);
	expect("TCP to the untagged address, QinQ", &f, EGW_XDP_CLS_KERNEL);
	arp(&f, "198.51.100.100", false);
	expect("ARP for the VLAN 100 address, untagged", &f, EGW_XDP_CLS_KERNEL);

	/* routed prefixes: 172.16.0.0/12, where 172.16.0.1 is the kernel's */
	tcp4(&f, "172.16.5.5");
	expect("TCP to a routed prefix", &f, EGW_XDP_CLS_ROUTE);
	tcp4(&f, "172.31.255.255");
	expect("TCP to a routed prefix's last address", &f, EGW_XDP_CLS_ROUTE);
	tcp4(&f, "172.32.0.1");
	expect("TCP just outside a routed prefix", &f, EGW_XDP_CLS_KERNEL);
	tcp4(&f, "172.16.0.1");
	expect("TCP to the kernel's address inside a routed prefix", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, QQ, 2, 0x0800);
	ipv4(&f, 5, IPPROTO_UDP, ip4("172.16.9.9"), 8, 0);
	udp(&f, 53, 0);
	expect("UDP to a routed prefix, QinQ", &f, EGW_XDP_CLS_ROUTE);

	/* IPv6 */
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 50, "2001:db8::1", 24);
	zeros(&f, 24);
	expect("IPv6 ESP to the tunnel address", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 50, "2001:db8::2", 24);
	zeros(&f, 24);
	expect("IPv6 ESP to a non-local address", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, Q, 1, 0x86dd);
	ipv6(&f, 0, "2001:db8::1", 16 + 24);
	ext8(&f, 60);
	ext8(&f, 50);
	zeros(&f, 24);
	expect("IPv6 hop-by-hop, destination options, ESP", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 44, "2001:db8::1", 8 + 8 + 16);
	put8(&f, 17);
	put8(&f, 0);
	put16(&f, 0x0001); /* offset 0, more fragments */
	put32(&f, 7);
	udp(&f, 4500, 16);
	put32(&f, 0x3000);
	zeros(&f, 12);
	expect("IPv6 first fragment, UDP 4500 ESP", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 44, "2001:db8::1", 8 + 16);
	put8(&f, 17);
	put8(&f, 0);
	put16(&f, 0x00b8); /* offset 23 */
	put32(&f, 7);
	zeros(&f, 16);
	expect("IPv6 later fragment of UDP to the tunnel address", &f, EGW_XDP_CLS_ESP);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 0, "2001:db8::1", 7 * 8 + 24);
	for (i = 0; i < 6; i++)
		ext8(&f, 60);
	ext8(&f, 50);
	zeros(&f, 24);
	expect("IPv6 with seven extension headers", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 60, "2001:db8::1", 8);
	put8(&f, 50);
	put8(&f, 9); /* 80 bytes claimed */
	zeros(&f, 6);
	expect("IPv6 options header longer than the frame", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x86dd);
	f.n = 14 + 30;
	memset(f.b + 14, 0x60, 30);
	expect("IPv6 header cut at 30 bytes", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, IPPROTO_TCP, "2001:db8:1::1", 20);
	zeros(&f, 20);
	expect("IPv6 TCP to edgegw's address", &f, EGW_XDP_CLS_OWN);
	ns6(&f, "2001:db8:1::1");
	expect("IPv6 NS for edgegw's address", &f, EGW_XDP_CLS_OWN);
	ns6(&f, "2001:db8:ffff::1");
	expect("IPv6 NS for the kernel's address", &f, EGW_XDP_CLS_KERNEL);
	ns6(&f, "2001:db8:1::1");
	f.n -= 4;
	expect("IPv6 NS cut inside the target", &f, EGW_XDP_CLS_MALFORMED);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, IPPROTO_TCP, "2001:db8:1ff::5", 20);
	zeros(&f, 20);
	expect("IPv6 TCP to a pool address", &f, EGW_XDP_CLS_POOL);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, IPPROTO_TCP, "2001:db8:200::5", 20);
	zeros(&f, 20);
	expect("IPv6 TCP just outside the pool", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, IPPROTO_UDP, "2001:db8:2::9", 8);
	udp(&f, 9, 0);
	expect("IPv6 UDP to an rxtokens destination", &f, EGW_XDP_CLS_RXTOK);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, IPPROTO_UDP, "2001:db8:ffff::1", 8);
	udp(&f, 5555, 0);
	expect("IPv6 UDP to an rxtokens port", &f, EGW_XDP_CLS_RXTOK);
	eth(&f, NULL, 0, 0x86dd);
	ipv6(&f, 58, "2001:db8:ffff::1", 8);
	put32(&f, 0x80000000);
	put32(&f, 1);
	expect("IPv6 ping to the kernel's address", &f, EGW_XDP_CLS_KERNEL);

	/* per VLAN: 2001:db8:1::100 on VLAN 100 */
	eth(&f, Q, 1, 0x86dd);
	ipv6(&f, IPPROTO_TCP, "2001:db8:1::100", 20);
	zeros(&f, 20);
	expect("IPv6 TCP to the VLAN 100 address, on VLAN 100", &f, EGW_XDP_CLS_OWN);
	eth(&f, QQ, 2, 0x86dd);
	vid(&f, 1, 100);
	ipv6(&f, IPPROTO_TCP, "2001:db8:1::100", 20);
	zeros(&f, 20);
	expect("IPv6 TCP to the VLAN 100 address, QinQ", &f, EGW_XDP_CLS_KERNEL);
	eth(&f, Q, 1, 0x86dd);
	ipv6(&f, IPPROTO_TCP, "2001:db8:1::1", 20);
	zeros(&f, 20);
	expect("IPv6 TCP to the untagged address, on VLAN 100", &f, EGW_XDP_CLS_KERNEL);
	ns6(&f, "2001:db8:1::100");
	expect("IPv6 NS for the VLAN 100 address, untagged", &f, EGW_XDP_CLS_KERNEL);

	/* routed 2001:db8:500::/40 */
	tcp6(&f, "2001:db8:5ff:1::1");
	expect("IPv6 TCP to a routed prefix", &f, EGW_XDP_CLS_ROUTE);
	tcp6(&f, "2001:db8:600::1");
	expect("IPv6 TCP just outside a routed prefix", &f, EGW_XDP_CLS_KERNEL);
}

/* egw_kernq with n IPv4 addresses (a: n of them, or none) and no IPv6 */
static void
set_kernq(struct bpf_object *obj, uint32_t n, const uint32_t *a)
{
	struct egw_xdp_kernq q;
	uint32_t k = 0, i;

	memset(&q, 0, sizeof(q));
	q.n4 = n;
	q.n6 = EGW_XDP_KERNQ + 1;
	for (i = 0; a != NULL && i < n && i < EGW_XDP_KERNQ; i++)
		q.a4[i] = a[i];
	if (bpf_map_update_elem(map_fd(obj, "egw_kernq"), &k, &q, BPF_ANY) != 0) {
		fprintf(stderr, "egw_kernq: %s\n", strerror(errno));
		exit(1);
	}
}

/* Maps as the control side fills them for the table above. */
static void
populate(struct bpf_object *obj)
{
	struct egw_xdp_lpm4 l4 = {.prefixlen = 10};
	struct egw_xdp_lpm6 l6 = {.prefixlen = 40};
	struct egw_xdp_flow_key fk;
	struct egw_xdp_natt_key nk;
	struct egw_xdp_own4 o4 = {0};
	struct egw_xdp_own6 o6 = {0};
	struct egw_xdp_in6 a6;
	uint32_t a4;

	a4 = htonl(ip4("192.0.2.1"));
	add(map_fd(obj, "egw_esp4"), &a4);
	ip6(a6.a, "2001:db8::1");
	add(map_fd(obj, "egw_esp6"), &a6);
	o4.a = htonl(ip4("198.51.100.1"));
	add(map_fd(obj, "egw_own4"), &o4);
	o4.vlan = 100;
	o4.a = htonl(ip4("198.51.100.100"));
	add(map_fd(obj, "egw_own4"), &o4);
	ip6(o6.a, "2001:db8:1::1");
	add(map_fd(obj, "egw_own6"), &o6);
	o6.vlan = 100;
	ip6(o6.a, "2001:db8:1::100");
	add(map_fd(obj, "egw_own6"), &o6);
	memset(&nk, 0, sizeof(nk));
	nk.ip = 4;
	nk.port = htons(4501);
	a4 = htonl(ip4("192.0.2.1"));
	memcpy(nk.a, &a4, 4);
	add(map_fd(obj, "egw_natt"), &nk);
	l4.prefixlen = 12;
	a4 = htonl(ip4("172.16.0.0"));
	memcpy(l4.a, &a4, 4);
	add(map_fd(obj, "egw_route4"), &l4);
	a4 = htonl(ip4("172.16.0.1"));
	add(map_fd(obj, "egw_kern4"), &a4);
	/* more kernel addresses than egw_kernq holds: egw_kern4 decides */
	set_kernq(obj, EGW_XDP_KERNQ + 1, NULL);
	l6.prefixlen = 40;
	ip6(l6.a, "2001:db8:500::");
	add(map_fd(obj, "egw_route6"), &l6);
	l4.prefixlen = 10;
	l6.prefixlen = 40;
	a4 = htonl(ip4("100.64.0.0"));
	memcpy(l4.a, &a4, 4);
	add(map_fd(obj, "egw_pool4"), &l4);
	ip6(l6.a, "2001:db8:100::");
	add(map_fd(obj, "egw_pool6"), &l6);
	memset(&fk, 0, sizeof(fk));
	fk.kind = EGW_XDP_FLOW_DST4;
	a4 = htonl(ip4("203.0.113.9"));
	memcpy(fk.a, &a4, 4);
	add(map_fd(obj, "egw_flows"), &fk);
	memset(&fk, 0, sizeof(fk));
	fk.kind = EGW_XDP_FLOW_DST6;
	ip6(fk.a, "2001:db8:2::9");
	add(map_fd(obj, "egw_flows"), &fk);
	memset(&fk, 0, sizeof(fk));
	fk.kind = EGW_XDP_FLOW_UDP_DPORT;
	fk.port = htons(5555);
	add(map_fd(obj, "egw_flows"), &fk);
}

/* ---- fuzz -------------------------------------------------------------------- */

static uint64_t rng;

static uint32_t
rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

static void
fuzz(unsigned long iters)
{
	static const uint16_t types[] = {0x8100, 0x88a8, 0x9100, 0x8863, 0x8864,
					 0x0800, 0x86dd, 0x0806, 0x88cc};
	static const uint8_t protos[] = {0, 6, 17, 43, 44, 50, 51, 58, 60, 255};
	static const uint32_t dsts[] = {0xc0000201, 0xc6336401, 0x64400102,
					0xcb007109, 0x0a000001, 0xac100505};
	unsigned long it, seen[EGW_XDP_CLS_MAX] = {0};
	struct frame f;
	unsigned int i, k;

	for (it = 0; it < iters; it++) {
		bool noxsk, steered;
		int cls, v;

		f.n = 14 + rnd() % 200;
		if (rnd() % 8 == 0)
			f.n = 14 + rnd() % 1500;
		for (i = 0; i < f.n; i++)
			f.b[i] = (uint8_t)rnd();
		/* bias: plausible ethertypes and tags, IP versions, protocols and
		 * destinations the maps hold, so the deep parsers run */
		for (k = 12; k + 2 <= f.n && k < 12 + 4 * 3; k += 4) {
			uint16_t t = types[rnd() % DIM(types)];

			f.b[k] = (uint8_t)(t >> 8);
			f.b[k + 1] = (uint8_t)t;
			if (t != 0x8100 && t != 0x88a8 && t != 0x9100)
				break;
		}
		k += 2;
		if (k + 20 <= f.n && rnd() % 2) {
			uint32_t d = htonl(dsts[rnd() % DIM(dsts)]);

			f.b[k] = (uint8_t)(rnd() % 2 ? 0x45 : 0x40 | (rnd() % 16));
			f.b[k + 6] &= 0x20;
			f.b[k + 9] = protos[rnd() % DIM(protos)];
			memcpy(f.b + k + 16, &d, 4);
			if (k + 24 <= f.n && rnd() % 2) {
				f.b[k + 22] = 0x11;
				f.b[k + 23] = 0x94;
			}
		} else if (k + 40 <= f.n && rnd() % 2) {
			f.b[k] = 0x60;
			f.b[k + 6] = protos[rnd() % DIM(protos)];
			if (rnd() % 2) {
				ip6(f.b + k + 24, rnd() % 2 ? "2001:db8::1" : "2001:db8:1::1");
			}
		}
		v = run(&f, rnd() % 2 ? XSK_QUEUE : NOSOCK_QUEUE, &cls, &noxsk);
		if (cls < 0) {
			CHECK(false, "fuzz frame %lu: not exactly one class counted", it);
			continue;
		}
		seen[cls]++;
		steered = cls != EGW_XDP_CLS_KERNEL && cls != EGW_XDP_CLS_MALFORMED;
		CHECK(v == XDP_REDIRECT ? steered && !noxsk
					: v == XDP_PASS && (steered ? noxsk : !noxsk),
		      "fuzz frame %lu (%u bytes): verdict %d with class %s%s", it, f.n, v,
		      cls_name[cls], noxsk ? " +no-xsk" : "");
		if (failures > 20)
			break;
	}
	printf("fuzz: %lu frames:", it);
	for (k = 0; k < EGW_XDP_CLS_NO_XSK; k++)
		printf(" %s %lu", cls_name[k], seen[k]);
	printf("\n");
}

/* ---- through lib/xdp's control side ------------------------------------------ */

static void
api_ok(int rc, const char *what, const char *err)
{
	CHECK(rc == 0, "lib/xdp %s: %d %s", what, rc, err);
}

static void
api_addr(int kind, int family, const char *s, bool add)
{
	uint8_t a[16];
	char err[256] = "";

	if (inet_pton(family, s, a) != 1)
		abort();
	api_ok(egw_xdp_addr(kind, family, a, add, err, sizeof(err)), s, err);
}

static void
api_pool(int family, const char *s, uint8_t len, bool add)
{
	uint8_t a[16];
	char err[256] = "";

	if (inet_pton(family, s, a) != 1)
		abort();
	api_ok(egw_xdp_pool(family, a, len, add, err, sizeof(err)), s, err);
}

static void
api_flow(uint8_t kind, int family, const char *s, uint16_t port, bool add)
{
	struct egw_xdp_flow_key k;
	char err[256] = "";

	memset(&k, 0, sizeof(k));
	k.kind = kind;
	k.port = htons(port);
	if (s != NULL && inet_pton(family, s, k.a) != 1)
		abort();
	api_ok(egw_xdp_flow(&k, add, err, sizeof(err)), "flow", err);
}

static void
api_own(uint16_t vlan, int family, const char *s, bool add)
{
	uint8_t a[16];
	char err[256] = "";

	if (inet_pton(family, s, a) != 1)
		abort();
	api_ok(egw_xdp_own(0, vlan, family, a, add, err, sizeof(err)), s, err);
}

static void
api_route(int family, const char *s, uint8_t len, bool add)
{
	uint8_t a[16];
	char err[256] = "";

	if (inet_pton(family, s, a) != 1)
		abort();
	api_ok(egw_xdp_route(family, a, len, add, err, sizeof(err)), s, err);
}

static void
sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "%s: failed\n", cmd);
		exit(1);
	}
}

/* The kernel's addresses: lib/xdp reads them on rtnetlink events. */
static bool
kern_has4(const char *s)
{
	uint32_t a = htonl(ip4(s)), v;

	return bpf_map_lookup_elem(map_fd(obj_main, "egw_kern4"), &a, &v) == 0;
}

static void
kern_events(const char *what)
{
	int i, n = 0;

	/* the events are asynchronous: a few rounds */
	for (i = 0; i < 50 && n == 0; i++) {
		n = egw_xdp_service();
		if (n == 0)
			usleep(20000);
	}
	CHECK(n > 0, "egw_xdp_service() saw the kernel's address change (%s)", what);
}

static uint32_t
cfg_flags(void)
{
	struct egw_xdp_cfg c;
	uint32_t k = 0;

	if (bpf_map_lookup_elem(cfg_fd, &k, &c) != 0)
		return 0;
	return c.flags;
}

static void
tcp4_to(struct frame *f, const char *dst)
{
	eth(f, NULL, 0, 0x0800);
	ipv4(f, 5, IPPROTO_TCP, ip4(dst), 20, 0);
	zeros(f, 20);
}

static void
tcp6_to(struct frame *f, const char *dst)
{
	eth(f, NULL, 0, 0x86dd);
	ipv6(f, IPPROTO_TCP, dst, 20);
	zeros(f, 20);
}

static void
api_phase(const char *obj_path, unsigned long iters)
{
	static const uint32_t filt = EGW_XDP_F_FILT4 | EGW_XDP_F_FILT6 | EGW_XDP_F_FILTP |
				     EGW_XDP_F_FILTR4 | EGW_XDP_F_FILTR6;
	struct egw_xdp_counter cnt[EGW_XDP_CLS_MAX];
	uint64_t direct[EGW_XDP_CLS_MAX];
	char err[256] = "", path[256];
	unsigned int i, n_ok;
	struct frame f;
	struct stat st;
	uint8_t a[16];
	int rc, k;

	rc = egw_xdp_verify(obj_path, err, sizeof(err));
	CHECK(rc == 0, "egw_xdp_verify(%s): %d %s", obj_path, rc, err);
	rc = egw_xdp_verify("/nonexistent/egw_xdp.bpf.o", err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "/nonexistent") != NULL, "verify of no file: %d %s", rc,
	      err);
	rc = egw_xdp_port_open(0, (unsigned int)if_nametoindex(peer), true, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "no XDP program") != NULL,
	      "open of an interface without a program: %d %s", rc, err);

	if (bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) != 0) {
		fprintf(stderr, "attach to %s: %s\n", veth, strerror(errno));
		exit(1);
	}
	rc = egw_xdp_port_open(0, (unsigned int)ifindex, true, err, sizeof(err));
	CHECK(rc == 0, "egw_xdp_port_open(%s): %d %s", veth, rc, err);
	if (rc != 0)
		return;
	CHECK(egw_xdp_port_active(0) && !egw_xdp_port_generic(0), "port 0 active, native");
	CHECK(cfg_flags() == (EGW_XDP_F_ACCESS | filt), "flags after open 0x%x", cfg_flags());
	snprintf(path, sizeof(path), "%s/%s/egw_stats", EGW_XDP_PIN_ROOT, veth);
	CHECK(stat(path, &st) == 0, "%s pinned (BPF file system mounted by main())", path);
	k = bpf_obj_get(path);
	CHECK(k >= 0, "bpf_obj_get(%s): %s", path, strerror(errno));
	if (k >= 0)
		close(k);

	/* the table again, the maps filled by lib/xdp (pre-check on) */
	api_addr(EGW_XDP_ADDR_ESP, AF_INET, "192.0.2.1", true);
	api_addr(EGW_XDP_ADDR_ESP, AF_INET6, "2001:db8::1", true);
	api_own(0, AF_INET, "198.51.100.1", true);
	api_own(100, AF_INET, "198.51.100.100", true);
	api_own(0, AF_INET6, "2001:db8:1::1", true);
	api_own(100, AF_INET6, "2001:db8:1::100", true);
	inet_pton(AF_INET, "192.0.2.1", a);
	rc = egw_xdp_natt(AF_INET, a, 4501, true, err, sizeof(err));
	CHECK(rc == 0, "egw_xdp_natt 192.0.2.1 4501: %d %s", rc, err);
	api_route(AF_INET, "172.16.0.0", 12, true);
	api_route(AF_INET6, "2001:db8:500::", 40, true);
	rc = egw_xdp_own(0, 4095, AF_INET, a, true, err, sizeof(err));
	CHECK(rc == -EINVAL, "an address on VLAN 4095: %d", rc);
	/* the kernel gains 172.16.0.1 (inside a route) and 2001:db8:ffff::1 on
	 * another interface: routes must leave them to it */
	snprintf(kveth, sizeof(kveth), "xdpk%d", (int)getpid() % 100000);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd),
			 "ip link add %s type veth peer name xdpm%d && ip addr add 172.16.0.1/24 "
			 "dev %s && ip -6 addr add 2001:db8:ffff::1/64 dev %s nodad",
			 kveth, (int)getpid() % 100000, kveth, kveth);
		sh(cmd);
	}
	kern_events("172.16.0.1 added");
	CHECK(kern_has4("172.16.0.1") && kern_has4("172.16.0.255") && kern_has4("127.0.0.1"),
	      "egw_kern4 holds 172.16.0.1, its broadcast 172.16.0.255 and 127.0.0.1");
	api_pool(AF_INET, "100.64.0.0", 10, true);
	api_pool(AF_INET6, "2001:db8:100::", 40, true);
	api_flow(EGW_XDP_FLOW_DST4, AF_INET, "203.0.113.9", 0, true);
	api_flow(EGW_XDP_FLOW_DST6, AF_INET6, "2001:db8:2::9", 0, true);
	api_flow(EGW_XDP_FLOW_UDP_DPORT, 0, NULL, 5555, true);
	CHECK((cfg_flags() & filt) == filt, "pre-check on: flags 0x%x", cfg_flags());
	table();

	/* the pre-check's edges */
	tcp4_to(&f, "198.51.100.2");
	expect("TCP to the /24 of edgegw's address", &f, EGW_XDP_CLS_KERNEL);
	tcp4_to(&f, "100.63.255.255");
	expect("TCP just below a /10 pool", &f, EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "2001:db8:1::2");
	expect("IPv6 TCP to the /48 of edgegw's address", &f, EGW_XDP_CLS_KERNEL);
	api_pool(AF_INET6, "2001:db8:3000::", 36, true);
	tcp6_to(&f, "2001:db8:3fff:ffff::1");
	expect("IPv6 TCP inside a /36 pool", &f, EGW_XDP_CLS_POOL);
	tcp6_to(&f, "2001:db8:4000::1");
	expect("IPv6 TCP after a /36 pool", &f, EGW_XDP_CLS_KERNEL);
	api_pool(AF_INET6, "2001:db8:3000::", 36, false);
	tcp6_to(&f, "2001:db8:3fff:ffff::1");
	expect("IPv6 TCP inside a deleted /36 pool", &f, EGW_XDP_CLS_KERNEL);
	api_pool(AF_INET6, "2001:e00::", 24, true);
	CHECK(!(cfg_flags() & EGW_XDP_F_FILT6) && (cfg_flags() & EGW_XDP_F_FILT4),
	      "a /24 IPv6 pool turns the IPv6 pre-check off: flags 0x%x", cfg_flags());
	tcp6_to(&f, "2001:eff:1::1");
	expect("IPv6 TCP inside a /24 pool", &f, EGW_XDP_CLS_POOL);
	tcp6_to(&f, "2001:db8:ffff::1");
	expect("IPv6 TCP to the kernel, pre-check off", &f, EGW_XDP_CLS_KERNEL);
	api_pool(AF_INET6, "2001:e00::", 24, false);
	CHECK(cfg_flags() & EGW_XDP_F_FILT6, "IPv6 pre-check back: flags 0x%x", cfg_flags());
	udp4(&f, "10.0.0.1", 7777, 1, 8);
	expect("UDP to port 7777 before its flow", &f, EGW_XDP_CLS_KERNEL);
	api_flow(EGW_XDP_FLOW_UDP_DPORT, 0, NULL, 7777, true);
	expect("UDP to port 7777, a flow", &f, EGW_XDP_CLS_RXTOK);
	api_flow(EGW_XDP_FLOW_UDP_DPORT, 0, NULL, 7777, false);
	expect("UDP to port 7777 after its flow", &f, EGW_XDP_CLS_KERNEL);

	/* a default route through edgegw leaves the kernel its own addresses,
	 * broadcast, multicast, loopback and link-local */
	api_route(AF_INET, "0.0.0.0", 0, true);
	api_route(AF_INET6, "::", 0, true);
	CHECK((cfg_flags() & (EGW_XDP_F_FILT6 | EGW_XDP_F_FILTR6)) == EGW_XDP_F_FILT6,
	      "a default IPv6 route turns off the route part of the IPv6 pre-check only: 0x%x",
	      cfg_flags());
	tcp4_to(&f, "8.8.8.8");
	expect("TCP to 8.8.8.8, a default route", &f, EGW_XDP_CLS_ROUTE);
	tcp4_to(&f, "172.16.0.1");
	expect("TCP to the kernel's 172.16.0.1, a default route", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "172.16.0.255", 137, 1, 8);
	expect("UDP to the kernel's subnet broadcast, a default route", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "255.255.255.255", 67, 1, 8);
	expect("UDP to 255.255.255.255, a default route", &f, EGW_XDP_CLS_KERNEL);
	udp4(&f, "224.0.0.5", 89, 1, 8);
	expect("UDP to 224.0.0.5, a default route", &f, EGW_XDP_CLS_KERNEL);
	tcp4_to(&f, "127.0.0.1");
	expect("TCP to 127.0.0.1, a default route", &f, EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "2001:db8:ffff::1");
	expect("IPv6 TCP to the kernel's 2001:db8:ffff::1, a default route", &f,
	       EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "fe80::1");
	expect("IPv6 TCP to fe80::1, a default route", &f, EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "ff02::1");
	expect("IPv6 TCP to ff02::1, a default route", &f, EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "::1");
	expect("IPv6 TCP to ::1, a default route", &f, EGW_XDP_CLS_KERNEL);
	tcp6_to(&f, "2001:4860::8888");
	expect("IPv6 TCP to 2001:4860::8888, a default route", &f, EGW_XDP_CLS_ROUTE);
	ns6(&f, "2001:db8:ffff::1");
	expect("IPv6 NS for the kernel's address, a default route", &f, EGW_XDP_CLS_KERNEL);
	arp(&f, "8.8.8.8", false);
	expect("ARP for a routed address (ARP is never routed)", &f, EGW_XDP_CLS_KERNEL);
	/* the kernel drops 172.16.0.1: it is routed again */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "ip addr del 172.16.0.1/24 dev %s", kveth);
		sh(cmd);
	}
	kern_events("172.16.0.1 deleted");
	CHECK(!kern_has4("172.16.0.1"), "egw_kern4 no longer holds 172.16.0.1");
	tcp4_to(&f, "172.16.0.1");
	expect("TCP to 172.16.0.1 once the kernel dropped it", &f, EGW_XDP_CLS_ROUTE);
	api_route(AF_INET, "0.0.0.0", 0, false);
	api_route(AF_INET6, "::", 0, false);
	tcp4_to(&f, "8.8.8.8");
	expect("TCP to 8.8.8.8, the default route deleted", &f, EGW_XDP_CLS_KERNEL);

	/* a batch (ip route load): the pre-check is rebuilt at the end, and
	 * until then the new prefix is still the kernel's */
	CHECK(egw_xdp_batch(true) == 0, "batch begins");
	api_route(AF_INET, "10.99.0.0", 16, true);
	tcp4_to(&f, "10.99.1.1");
	expect("TCP to a route added in a batch, before its end", &f, EGW_XDP_CLS_KERNEL);
	CHECK(egw_xdp_batch(false) == 0, "batch ends");
	expect("TCP to a route added in a batch, after its end", &f, EGW_XDP_CLS_ROUTE);
	api_route(AF_INET, "10.99.0.0", 16, false);
	expect("TCP to a deleted route", &f, EGW_XDP_CLS_KERNEL);

	/* a full route map (someone filled it): the next route is refused,
	 * named, and changes nothing */
	{
		struct egw_xdp_port_info before, after;
		int rfd = map_fd(obj_main, "egw_route4");
		struct egw_xdp_lpm4 lk = {.prefixlen = 32};
		uint32_t one = 1, nfill = 0, flags0, x;

		CHECK(egw_xdp_port_info(0, &before) == 0, "egw_xdp_port_info");
		for (x = 0; x < EGW_XDP_MAX_ROUTES4 + 1; x++) {
			uint32_t be = htonl(0x0b000000u + x);

			memcpy(lk.a, &be, 4);
			if (bpf_map_update_elem(rfd, &lk, &one, BPF_NOEXIST) != 0)
				break;
			nfill++;
		}
		CHECK(nfill == EGW_XDP_MAX_ROUTES4 - 1, "egw_route4 filled by %u (1 was there)",
		      nfill);
		flags0 = cfg_flags();
		inet_pton(AF_INET, "198.18.0.0", a);
		rc = egw_xdp_route(AF_INET, a, 15, true, err, sizeof(err));
		CHECK(rc == -E2BIG && strstr(err, "egw_route4") != NULL &&
			      strstr(err, "full") != NULL && strstr(err, "198.18.0.0/15") != NULL,
		      "a route into a full egw_route4: %d %s", rc, err);
		CHECK(cfg_flags() == flags0, "flags unchanged by the refused route: 0x%x 0x%x",
		      flags0, cfg_flags());
		CHECK(egw_xdp_port_info(0, &after) == 0 &&
			      memcmp(before.maps, after.maps, sizeof(before.maps)) == 0,
		      "map entries unchanged by the refused route");
		tcp4_to(&f, "198.18.0.1");
		expect("TCP to a refused route's prefix", &f, EGW_XDP_CLS_KERNEL);
		for (x = 0; x < nfill; x++) {
			uint32_t be = htonl(0x0b000000u + x);

			memcpy(lk.a, &be, 4);
			bpf_map_delete_elem(rfd, &lk);
		}
		for (x = 0; x < after.n_maps; x++)
			if (strcmp(after.maps[x].name, "egw_route4") == 0)
				CHECK(after.maps[x].entries == 1 &&
					      after.maps[x].max == EGW_XDP_MAX_ROUTES4,
				      "port info: egw_route4 %u/%u", after.maps[x].entries,
				      after.maps[x].max);
	}

	/* references: two SAs of one tunnel address need two deletions */
	api_addr(EGW_XDP_ADDR_ESP, AF_INET, "192.0.2.1", true);
	api_addr(EGW_XDP_ADDR_ESP, AF_INET, "192.0.2.1", false);
	udp4(&f, "192.0.2.1", 4500, 0x1000, 32);
	expect("UDP 4500 ESP, one reference left", &f, EGW_XDP_CLS_ESP);
	api_addr(EGW_XDP_ADDR_ESP, AF_INET, "192.0.2.1", false);
	expect("UDP 4500 ESP, no reference left", &f, EGW_XDP_CLS_KERNEL);
	inet_pton(AF_INET, "192.0.2.1", a);
	rc = egw_xdp_addr(EGW_XDP_ADDR_ESP, AF_INET, a, false, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "192.0.2.1") != NULL, "delete of a gone address: %d %s",
	      rc, err);
	rc = egw_xdp_pool(AF_INET, a, 33, true, err, sizeof(err));
	CHECK(rc == -EINVAL, "a /33 IPv4 pool: %d", rc);

	/* roles */
	CHECK(egw_xdp_set_access(0, false) == 0, "set uplink");
	pppoe(&f, NULL, 0, 0x8863);
	expect("PADI on a port set to uplink", &f, EGW_XDP_CLS_KERNEL);
	CHECK(egw_xdp_set_access(0, true) == 0, "set access");
	expect("PADI on a port set to access again", &f, EGW_XDP_CLS_PPPOE_DISC);

	/* a full map: named, and nothing half-done */
	for (n_ok = 0, i = 0; i < EGW_XDP_MAX_ADDRS + 1; i++) {
		uint32_t be = htonl(0x0ac80000u + i);

		rc = egw_xdp_own(0, 0, AF_INET, (const uint8_t *)&be, true, err, sizeof(err));
		if (rc != 0)
			break;
		n_ok++;
	}
	CHECK(rc == -E2BIG && strstr(err, "egw_own4") != NULL && strstr(err, "full") != NULL &&
		      n_ok == EGW_XDP_MAX_ADDRS - 2,
	      "own4 full after %u more (2 were there): %d %s", n_ok, rc, err);
	tcp4_to(&f, "10.200.0.7");
	expect("TCP to an address of a full map", &f, EGW_XDP_CLS_OWN);
	for (i = 0; i < n_ok; i++) {
		uint32_t be = htonl(0x0ac80000u + i);

		rc = egw_xdp_own(0, 0, AF_INET, (const uint8_t *)&be, false, err, sizeof(err));
		if (rc != 0)
			break;
	}
	CHECK(rc == 0, "own4 emptied again: %d %s", rc, err);
	expect("TCP to a deleted address", &f, EGW_XDP_CLS_KERNEL);

	/* lib/xdp's counters are the map's */
	counters(direct);
	rc = egw_xdp_counters(0, cnt);
	CHECK(rc == 0, "egw_xdp_counters: %d", rc);
	for (k = 0; rc == 0 && k < EGW_XDP_CLS_MAX; k++)
		CHECK(cnt[k].packets == direct[k], "class %s: lib/xdp %" PRIu64 ", map %" PRIu64,
		      cls_name[k], (uint64_t)cnt[k].packets, direct[k]);

	fuzz(iters);

	egw_xdp_port_close(0);
	CHECK(!egw_xdp_port_active(0), "port 0 closed");
	CHECK(stat(path, &st) != 0 && errno == ENOENT, "%s unpinned", path);
	rc = egw_xdp_own(0, 0, AF_INET, a, true, err, sizeof(err));
	CHECK(rc == 0, "no port open: an address is nothing to steer (%d)", rc);
	rc = egw_xdp_route(AF_INET, a, 24, true, err, sizeof(err));
	CHECK(rc == 0, "no port open: a route is nothing to steer (%d)", rc);
	bpf_xdp_detach(ifindex, 0, NULL);
}

int
main(int argc, char **argv)
{
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000;
	struct bpf_object *obj;
	uint32_t q = XSK_QUEUE;
	struct statfs sfs;
	char cmd[384];
	int xsk, xsks;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <egw_xdp.bpf.o> [fuzz iterations] [seed]\n", argv[0]);
		return 2;
	}
	rng = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL;
	if (rng == 0)
		rng = 1;
	printf("fuzz seed 0x%" PRIx64 "\n", rng);
	if (geteuid() != 0) {
		printf("SKIP: needs root (BPF programs, AF_XDP sockets, a veth)\n");
		return SKIP;
	}
	/* lib/xdp pins under /sys/fs/bpf (it warns when that is no BPF file
	 * system; the test checks the pins, so it mounts one, as bpftool does) */
	if (statfs("/sys/fs/bpf", &sfs) != 0 || sfs.f_type != BPF_FS_MAGIC) {
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL) != 0) {
			fprintf(stderr, "mount -t bpf bpf /sys/fs/bpf: %s\n", strerror(errno));
			return 1;
		}
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0 || ncpu > MAX_CPUS) {
		fprintf(stderr, "libbpf_num_possible_cpus: %s\n", strerror(-ncpu));
		return 1;
	}
	obj = load(argv[1]);
	obj_main = obj;
	cfg_fd = map_fd(obj, "egw_cfg");
	stats_fd = map_fd(obj, "egw_stats");
	xsks = map_fd(obj, "xsks_map");

	snprintf(veth, sizeof(veth), "xdpu%d", (int)getpid() % 100000);
	snprintf(peer, sizeof(peer), "xdpv%d", (int)getpid() % 100000);
	atexit(del_veth);
	/* no IPv6 on the pair: its router solicitations and MLD reports
	 * would move the counters the cases read */
	snprintf(cmd, sizeof(cmd),
		 "ip link add %s numrxqueues 4 numtxqueues 4 type veth peer name %s && "
		 "{ sysctl -qw net.ipv6.conf.%s.disable_ipv6=1 net.ipv6.conf.%s.disable_ipv6=1 "
		 "|| true; } && ip link set %s up && ip link set %s up",
		 veth, peer, veth, peer, veth, peer);
	if (system(cmd) != 0) {
		veth[0] = '\0';
		printf("SKIP: cannot create a veth pair (%s)\n", cmd);
		return SKIP;
	}
	ifindex = (int)if_nametoindex(veth);
	xsk = xsk_bind(ifindex, XSK_QUEUE);
	if (xsk < 0) {
		fprintf(stderr, "AF_XDP socket on %s queue %d: %s\n", veth, XSK_QUEUE,
			strerror(-xsk));
		return 1;
	}
	if (bpf_map_update_elem(xsks, &q, &xsk, BPF_ANY) != 0) {
		fprintf(stderr, "xsks_map[%u]: %s\n", q, strerror(errno));
		return 1;
	}
	populate(obj);

	set_flags(EGW_XDP_F_ALL);
	table();

	/* the kernel's addresses while they are few: egw_kernq alone decides */
	{
		uint32_t k[2] = {htonl(ip4("10.1.1.1")), htonl(ip4("172.16.0.1"))};
		struct frame f;

		set_kernq(obj, 2, k);
		tcp4(&f, "172.16.0.1");
		expect("TCP to the kernel's address in egw_kernq, inside a route", &f,
		       EGW_XDP_CLS_KERNEL);
		tcp4(&f, "172.16.5.5");
		expect("TCP to a routed prefix, egw_kernq in use", &f, EGW_XDP_CLS_ROUTE);
		set_kernq(obj, 0, NULL);
		tcp4(&f, "172.16.0.1");
		expect("TCP to an address only egw_kern4 has, egw_kernq in use (empty)", &f,
		       EGW_XDP_CLS_ROUTE);
		set_kernq(obj, EGW_XDP_KERNQ + 1, NULL);
	}

	/* an uplink: PPPoE is the kernel's, the rest as before */
	set_flags(EGW_XDP_F_ESP4 | EGW_XDP_F_OWN4 | EGW_XDP_F_POOL4);
	{
		struct frame f;

		pppoe(&f, NULL, 0, 0x8863);
		expect("PADI on a non-access port", &f, EGW_XDP_CLS_KERNEL);
		pppoe(&f, Q, 1, 0x8864);
		expect("PPPoE session on a non-access port", &f, EGW_XDP_CLS_KERNEL);
		udp4(&f, "192.0.2.1", 4500, 0x1000, 32);
		expect("UDP 4500 ESP on the uplink", &f, EGW_XDP_CLS_ESP);
		udp4(&f, "192.0.2.1", 4501, 0x1000, 32);
		expect("UDP 4501 ESP, NATT flag off", &f, EGW_XDP_CLS_KERNEL);
		tcp4(&f, "172.16.5.5");
		expect("TCP to a routed prefix, ROUTE4 flag off", &f, EGW_XDP_CLS_KERNEL);
	}
	/* the flags gate the maps: an address in a map whose flag is off is not
	 * looked up (the control side sets a flag with the first entry) */
	set_flags(EGW_XDP_F_ACCESS);
	{
		struct frame f;

		eth(&f, NULL, 0, 0x0800);
		ipv4(&f, 5, IPPROTO_TCP, ip4("198.51.100.1"), 20, 0);
		zeros(&f, 20);
		expect("TCP to edgegw's address, flag off", &f, EGW_XDP_CLS_KERNEL);
	}

	set_flags(EGW_XDP_F_ALL);
	fuzz(iters / 2);

	api_phase(argv[1], iters / 2);

	close(xsk);
	bpf_object__close(obj);
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
