/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What edgegw's XDP steering program (egw_xdp.bpf.o) adds to frames it
 * leaves to the kernel, against a program that returns XDP_PASS and nothing
 * else (egw_xdp_pass.bpf.o), in the same run: BPF_PROG_TEST_RUN with repeat,
 * whose duration is the kernel's mean per run (JIT on). The difference is
 * the program's cost per kernel-bound frame; the target is 20 ns.
 *
 * The program is attached to a veth the benchmark makes and taken over by
 * lib/xdp as edgegw does; the maps are filled through lib/xdp. Two
 * set-ups: "bng" (an access port with 64 IPv4 /24 and 64 IPv6 /48 pools
 * and 4 own addresses of each family) and "full" (256 pools of each
 * family, 16 own and 16 tunnel addresses of each family, 128 rxtokens
 * flows, so every lookup a frame can meet is made), and "bng+rt" ("bng" with
 * default routes of both families through edgegw: every frame meets the
 * route lookup and the kernel-address check; the frames' destinations are
 * entered in egw_kern4/6 as the kernel's own). The kernel's IPv6
 * address shares the /32 of edgegw's. Each with the pre-check egw_filter on, as lib/xdp runs it, and
 * off ("/nf": every map lookup made, the cost without it). Rounds
 * alternate the two programs; the median of the rounds is reported with
 * the spread; the target applies to the runs with the pre-check.
 *
 * Needs root and BPF. usage: bench_xdp <egw_xdp.bpf.o> <egw_xdp_pass.bpf.o>
 * [repeat] [rounds]
 *
 * bench_xdp attach <ifname> <object> native|generic [route]: the helper of
 * bench/xdp_mode_bench.py. Loads the object's program, attaches it to the
 * interface in driver (XDP_FLAGS_DRV_MODE) or generic (XDP_FLAGS_SKB_MODE)
 * mode; edgegw's program is taken over by lib/xdp and filled as "bng"
 * below (with "route" also a default route: every IPv4 frame then meets
 * the address, pool and route lookups and the kernel-address check);
 * prints "attached" and holds it until stdin closes, then detaches.
 *
 * bench_xdp flood <ifname> <dst-mac> <src-ip> <dst-ip> <udp-port> <frames>:
 * sends that many 64-byte IPv4/UDP frames out of the interface through an
 * AF_PACKET socket (sendmmsg, 64 a call) and prints the frames sent and
 * the nanoseconds it took; run in the namespace of xdp_mode_bench.py, so
 * that the frames are the veth peer's kernel-bound traffic.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <net/if.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <time.h>

#include "egw_xdp.h"

#define MAX_ROUNDS 32

struct frame {
	const char *name;
	uint8_t b[128];
	unsigned int n;
};

static struct bpf_object *
load(const char *path, const char *prog, int *fd)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	int rc;

	if (obj == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	rc = bpf_object__load(obj);
	if (rc == -EPERM || rc == -ENOSYS) {
		printf("SKIP: the kernel refuses BPF (%s): run as root\n", strerror(-rc));
		exit(77);
	}
	if (rc != 0) {
		fprintf(stderr, "%s: load: %s\n", path, strerror(-rc));
		exit(1);
	}
	p = bpf_object__find_program_by_name(obj, prog);
	if (p == NULL) {
		fprintf(stderr, "%s: no program %s\n", path, prog);
		exit(1);
	}
	*fd = bpf_program__fd(p);
	return obj;
}

static void
check(int rc, const char *err)
{
	if (rc < 0) {
		fprintf(stderr, "lib/xdp: %s\n", err);
		exit(1);
	}
}

static void
prefix(int family, const char *s, uint8_t len)
{
	uint8_t a[16];
	char err[256];

	inet_pton(family, s, a);
	check(egw_xdp_pool(family, a, len, true, err, sizeof(err)), err);
}

static void
addr(int kind, int family, const char *s)
{
	uint8_t a[16];
	char err[256];

	inet_pton(family, s, a);
	check(egw_xdp_addr(kind, family, a, true, err, sizeof(err)), err);
}

static void
own(int family, const char *s)
{
	uint8_t a[16];
	char err[256];

	inet_pton(family, s, a);
	check(egw_xdp_own(0, 0, family, a, true, err, sizeof(err)), err);
}

/* Through lib/xdp's control side, which also builds the pre-check. */
static void
populate(bool full)
{
	struct egw_xdp_flow_key fk;
	char s[64], err[256];
	unsigned int i;

	for (i = 0; i < (full ? 256u : 64u); i++) {
		snprintf(s, sizeof(s), "100.64.%u.0", i);
		prefix(AF_INET, s, 24);
		snprintf(s, sizeof(s), "2001:db8:1%02x::", i);
		prefix(AF_INET6, s, 48);
	}
	for (i = 0; i < (full ? 16u : 4u); i++) {
		snprintf(s, sizeof(s), "198.51.100.%u", i + 1);
		own(AF_INET, s);
		snprintf(s, sizeof(s), "2001:db8:1::%x", i + 1);
		own(AF_INET6, s);
	}
	if (!full)
		return;
	for (i = 0; i < 16; i++) {
		snprintf(s, sizeof(s), "192.0.2.%u", i + 1);
		addr(EGW_XDP_ADDR_ESP, AF_INET, s);
		snprintf(s, sizeof(s), "2001:db8::%x", i + 1);
		addr(EGW_XDP_ADDR_ESP, AF_INET6, s);
	}
	for (i = 0; i < 64; i++) {
		memset(&fk, 0, sizeof(fk));
		fk.kind = EGW_XDP_FLOW_UDP_DPORT;
		fk.port = htons((uint16_t)(6000 + i));
		check(egw_xdp_flow(&fk, true, err, sizeof(err)), err);
		memset(&fk, 0, sizeof(fk));
		fk.kind = EGW_XDP_FLOW_DST4;
		snprintf(s, sizeof(s), "203.0.113.%u", i);
		inet_pton(AF_INET, s, fk.a);
		check(egw_xdp_flow(&fk, true, err, sizeof(err)), err);
	}
}

/* Turn the pre-check off (every lookup made), as a port without it. */
static void
filter_off(struct bpf_object *obj)
{
	int fd = bpf_object__find_map_fd_by_name(obj, "egw_cfg");
	struct egw_xdp_cfg c;
	uint32_t k = 0;

	if (fd < 0 || bpf_map_lookup_elem(fd, &k, &c) != 0) {
		fprintf(stderr, "egw_cfg: %s\n", strerror(errno));
		exit(1);
	}
	c.flags &= ~(EGW_XDP_F_FILT4 | EGW_XDP_F_FILT6 | EGW_XDP_F_FILTP | EGW_XDP_F_FILTR4 |
		     EGW_XDP_F_FILTR6);
	if (bpf_map_update_elem(fd, &k, &c, BPF_ANY) != 0) {
		fprintf(stderr, "egw_cfg: %s\n", strerror(errno));
		exit(1);
	}
}

/* Default routes through edgegw, and the frames' destinations as the
 * kernel's own addresses (as lib/xdp reads them from the kernel). */
static void
default_routes(struct bpf_object *obj)
{
	int k4 = bpf_object__find_map_fd_by_name(obj, "egw_kern4");
	int k6 = bpf_object__find_map_fd_by_name(obj, "egw_kern6");
	int kq = bpf_object__find_map_fd_by_name(obj, "egw_kernq");
	uint8_t any[16] = {0}, a6[16];
	struct egw_xdp_kernq q;
	char err[256];
	uint32_t one = 1, a4, k0 = 0;

	check(egw_xdp_route(AF_INET, any, 0, true, err, sizeof(err)), err);
	check(egw_xdp_route(AF_INET6, any, 0, true, err, sizeof(err)), err);
	inet_pton(AF_INET, "10.0.0.1", &a4);
	inet_pton(AF_INET6, "2001:db8:ffff::1", a6);
	if (k4 < 0 || k6 < 0 || bpf_map_update_elem(k4, &a4, &one, BPF_ANY) != 0 ||
	    bpf_map_update_elem(k6, a6, &one, BPF_ANY) != 0) {
		fprintf(stderr, "egw_kern4/6: %s\n", strerror(errno));
		exit(1);
	}
	/* and in the few-address copy the program checks first, when it is
	 * in use (the host's own addresses are there already) */
	if (kq < 0 || bpf_map_lookup_elem(kq, &k0, &q) != 0) {
		fprintf(stderr, "egw_kernq: %s\n", strerror(errno));
		exit(1);
	}
	if (q.n4 < EGW_XDP_KERNQ)
		q.a4[q.n4++] = a4;
	else
		q.n4 = EGW_XDP_KERNQ + 1;
	if (q.n6 < EGW_XDP_KERNQ)
		memcpy(q.a6[q.n6++].a, a6, 16);
	else
		q.n6 = EGW_XDP_KERNQ + 1;
	if (bpf_map_update_elem(kq, &k0, &q, BPF_ANY) != 0) {
		fprintf(stderr, "egw_kernq: %s\n", strerror(errno));
		exit(1);
	}
	printf("(bng+rt: the kernel's addresses in egw_kernq: %u IPv4, %u IPv6%s)\n", q.n4, q.n6,
	       q.n4 > EGW_XDP_KERNQ || q.n6 > EGW_XDP_KERNQ ? "; over it: egw_kern4/6" : "");
}

static char veth[IFNAMSIZ];

static void
del_veth(void)
{
	char cmd[64];

	if (veth[0] == '\0')
		return;
	snprintf(cmd, sizeof(cmd), "ip link del %s", veth);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not delete %s\n", veth);
}

/* kernel-bound frames: the kernel's own traffic on a shared NIC */
static void
frames(struct frame f[4])
{
	static const uint8_t eth4[14] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00};
	static const uint8_t eth6[14] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x86, 0xdd};
	static const uint8_t vlan[18] = {2, 0, 0, 0,    0, 1, 2, 0,    0,
					 0, 0, 2, 0x81, 0, 0, 7, 0x08, 0};
	uint8_t *p;

	/* TCP ACK to the kernel's 10.0.0.1 */
	f[0].name = "IPv4 TCP";
	memset(f[0].b, 0, sizeof(f[0].b));
	memcpy(f[0].b, eth4, 14);
	p = f[0].b + 14;
	p[0] = 0x45, p[3] = 40, p[8] = 64, p[9] = 6;
	p[12] = 10, p[15] = 2, p[16] = 10, p[19] = 1;
	f[0].n = 14 + 40;
	/* UDP 4500 to the kernel (IKE or a tunnel that is not edgegw's) */
	f[1] = f[0];
	f[1].name = "IPv4 UDP 4500";
	p = f[1].b + 14;
	p[9] = 17, p[22] = 0x11, p[23] = 0x94;
	f[1].n = 14 + 20 + 8 + 16;
	/* 802.1Q IPv4 TCP */
	f[2].name = "802.1Q IPv4 TCP";
	memset(f[2].b, 0, sizeof(f[2].b));
	memcpy(f[2].b, vlan, 18);
	memcpy(f[2].b + 18, f[0].b + 14, 40);
	f[2].n = 18 + 40;
	/* IPv6 TCP to the kernel's 2001:db8:ffff::1: the /32 of edgegw's own */
	f[3].name = "IPv6 TCP";
	memset(f[3].b, 0, sizeof(f[3].b));
	memcpy(f[3].b, eth6, 14);
	p = f[3].b + 14;
	p[0] = 0x60, p[5] = 20, p[6] = 6, p[7] = 64;
	inet_pton(AF_INET6, "2001:db8:ffff::2", p + 8);
	inet_pton(AF_INET6, "2001:db8:ffff::1", p + 24);
	f[3].n = 14 + 40 + 20;
}

static double
run(int fd, const struct frame *f, uint32_t repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n, .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o) != 0) {
		fprintf(stderr, "BPF_PROG_TEST_RUN: %s\n", strerror(errno));
		exit(1);
	}
	if (o.retval != XDP_PASS) {
		fprintf(stderr, "%s: verdict %u, not XDP_PASS: the frame is not kernel-bound\n",
			f->name, o.retval);
		exit(1);
	}
	return (double)o.duration;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint16_t
csum16(const uint8_t *p, unsigned int n)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static int
flood_main(int argc, char **argv)
{
#define FLOOD_BATCH 64
	static struct mmsghdr msg[FLOOD_BATCH];
	static struct iovec iov[FLOOD_BATCH];
	struct sockaddr_ll sll;
	struct timespec t0, t1;
	uint8_t f[60], mac[6];
	uint64_t n, sent = 0;
	uint32_t src, dst;
	uint16_t c;
	unsigned int i;
	int fd;

	if (argc < 8 ||
	    sscanf(argv[3], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		   &mac[4], &mac[5]) != 6 ||
	    inet_pton(AF_INET, argv[4], &src) != 1 || inet_pton(AF_INET, argv[5], &dst) != 1) {
		fprintf(stderr,
			"usage: %s flood <ifname> <dst-mac> <src-ip> <dst-ip> <udp-port> "
			"<frames>\n",
			argv[0]);
		return 2;
	}
	n = strtoull(argv[7], NULL, 0);
	memset(f, 0, sizeof(f));
	memcpy(f, mac, 6);
	f[6] = 0x02, f[11] = 0x77; /* a source MAC of ours */
	f[12] = 0x08;
	f[14] = 0x45, f[16] = 0, f[17] = 46, f[22] = 64, f[23] = 17;
	memcpy(f + 26, &src, 4);
	memcpy(f + 30, &dst, 4);
	c = csum16(f + 14, 20);
	f[24] = (uint8_t)(c >> 8), f[25] = (uint8_t)c;
	f[34] = 0x9c, f[35] = 0x40; /* source port 40000 */
	f[36] = (uint8_t)(atoi(argv[6]) >> 8), f[37] = (uint8_t)atoi(argv[6]);
	f[39] = 26; /* UDP length; checksum 0: none (IPv4) */
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr, "AF_PACKET: %s\n", strerror(errno));
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(argv[2]);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, mac, 6);
	for (i = 0; i < FLOOD_BATCH; i++) {
		iov[i].iov_base = f;
		iov[i].iov_len = sizeof(f);
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = &sll;
		msg[i].msg_hdr.msg_namelen = sizeof(sll);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (sent < n) {
		int r = sendmmsg(fd, msg,
				 (unsigned int)(n - sent < FLOOD_BATCH ? n - sent : FLOOD_BATCH),
				 0);

		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN)
				continue;
			fprintf(stderr, "sendmmsg: %s\n", strerror(errno));
			return 1;
		}
		sent += (uint64_t)r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%llu frames %lld ns\n", (unsigned long long)sent,
	       (long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)));
	close(fd);
	return 0;
}

static int
attach_main(int argc, char **argv)
{
	const char *mode = argc > 4 ? argv[4] : "native";
	bool generic = strcmp(mode, "generic") == 0;
	struct bpf_object *obj;
	unsigned int ifindex;
	char err[256], buf[64];
	bool egw;
	int fd;

	if (argc < 5 || (!generic && strcmp(mode, "native") != 0)) {
		fprintf(stderr, "usage: %s attach <ifname> <object> native|generic\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: needs root\n");
		return 77;
	}
	ifindex = if_nametoindex(argv[2]);
	if (ifindex == 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	egw = strstr(argv[3], "egw_xdp_pass") == NULL;
	obj = load(argv[3], egw ? "egw_xdp_steer" : "egw_xdp_pass", &fd);
	if (bpf_xdp_attach((int)ifindex, fd,
			   XDP_FLAGS_UPDATE_IF_NOEXIST |
				   (generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE),
			   NULL) != 0) {
		fprintf(stderr, "attach to %s (%s): %s\n", argv[2], mode, strerror(errno));
		return 1;
	}
	if (egw) {
		check(egw_xdp_port_open(0, ifindex, true, err, sizeof(err)), err);
		populate(false);
		if (argc > 5 && strcmp(argv[5], "route") == 0) {
			uint8_t any[16] = {0};

			check(egw_xdp_route(AF_INET, any, 0, true, err, sizeof(err)), err);
		}
		if (egw_xdp_port_generic(0) != generic) {
			fprintf(stderr, "%s: attached, but not in %s mode\n", argv[2], mode);
			return 1;
		}
	}
	printf("attached %s %s mode\n", egw ? "egw_xdp_steer" : "egw_xdp_pass", mode);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin) != NULL)
		;
	if (egw)
		egw_xdp_port_close(0);
	bpf_xdp_detach((int)ifindex, generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, NULL);
	bpf_object__close(obj);
	return 0;
}

int
main(int argc, char **argv)
{
	uint32_t repeat = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 2000000;
	unsigned int rounds = argc > 4 ? (unsigned int)strtoul(argv[4], NULL, 0) : 7;
	static const char *const setups[5] = {"bng", "full", "bng/nf", "full/nf", "bng+rt"};
	struct frame f[4];
	int steer_fd, pass_fd, fail = 0;
	unsigned int s, i, r, ifindex;
	char cmd[160];

	if (argc > 1 && strcmp(argv[1], "attach") == 0)
		return attach_main(argc, argv);
	if (argc > 1 && strcmp(argv[1], "flood") == 0)
		return flood_main(argc, argv);
	if (argc < 3) {
		fprintf(stderr,
			"usage: %s <egw_xdp.bpf.o> <egw_xdp_pass.bpf.o> [repeat] [rounds]\n",
			argv[0]);
		return 2;
	}
	if (rounds == 0 || rounds > MAX_ROUNDS)
		rounds = 7;
	if (geteuid() != 0) {
		printf("SKIP: needs root (BPF_PROG_TEST_RUN)\n");
		return 77;
	}
	frames(f);
	load(argv[2], "egw_xdp_pass", &pass_fd);
	printf("XDP steering cost on kernel-bound frames: ns per frame, BPF_PROG_TEST_RUN "
	       "repeat %u, median of %u rounds (min-max), pass-only program in the same "
	       "rounds\n",
	       repeat, rounds);
	printf("%-7s %-16s %22s %22s %8s\n", "maps", "frame", "egw_xdp_steer", "XDP_PASS only",
	       "added");
	snprintf(veth, sizeof(veth), "xdpk%d", (int)getpid() % 100000);
	snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name xdpl%d && ip link set %s up",
		 veth, (int)getpid() % 100000, veth);
	atexit(del_veth);
	if (system(cmd) != 0) {
		veth[0] = '\0';
		printf("SKIP: cannot create a veth (%s)\n", cmd);
		return 77;
	}
	ifindex = if_nametoindex(veth);
	for (s = 0; s < 5; s++) {
		struct bpf_object *obj = load(argv[1], "egw_xdp_steer", &steer_fd);
		char err[256];

		/* attached to a veth so that lib/xdp takes it over as in edgegw */
		if (bpf_xdp_attach((int)ifindex, steer_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) !=
		    0) {
			fprintf(stderr, "attach to %s: %s\n", veth, strerror(errno));
			return 1;
		}
		check(egw_xdp_port_open(0, ifindex, true, err, sizeof(err)), err);
		populate(s % 2 == 1);
		if (s >= 2 && s < 4)
			filter_off(obj);
		if (s == 4)
			default_routes(obj);
		for (i = 0; i < 4; i++) {
			double a[MAX_ROUNDS], b[MAX_ROUNDS], d;

			for (r = 0; r < rounds; r++) {
				a[r] = run(steer_fd, &f[i], repeat);
				b[r] = run(pass_fd, &f[i], repeat);
			}
			qsort(a, rounds, sizeof(a[0]), cmp_d);
			qsort(b, rounds, sizeof(b[0]), cmp_d);
			d = a[rounds / 2] - b[rounds / 2];
			printf("%-7s %-16s %8.1f (%5.1f-%5.1f) %8.1f (%5.1f-%5.1f) %8.1f\n",
			       setups[s], f[i].name, a[rounds / 2], a[0], a[rounds - 1],
			       b[rounds / 2], b[0], b[rounds - 1], d);
			if (d > 20.0 && s < 2)
				fail = 1;
		}
		egw_xdp_port_close(0);
		bpf_xdp_detach((int)ifindex, 0, NULL);
		bpf_object__close(obj);
	}
	printf("target: at most 20 ns added per kernel-bound frame: %s\n", fail ? "MISSED" : "met");
	return 0;
}
