/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/pppoe filters (filter.c, pppoe_filter.h) against libpcap itself:
 * every verdict of every expression of exprs[] on every frame of the corpus
 * is compared with pcap_offline_filter() (libpcap's own classic BPF
 * interpreter, bpf_filter()) running libpcap's program for the same
 * expression, optimised and not (the two must agree as well). Each frame is
 * tried as one segment and split into 2 and 3 segments at offsets inside
 * the fields filters read (ethertype, addresses, ports), and each through
 * the JIT (pppoe_filter_match()) and DPDK's interpreter
 * (pppoe_filter_match_interp()).
 *
 * The frames are built here field by field (RFC 791 IPv4, RFC 8200 IPv6 and
 * its extension headers, RFC 9293 TCP, RFC 768 UDP, RFC 792/4443 ICMP,
 * IEEE 802.1Q), as the filter sees them: an Ethernet II frame carrying IP.
 * Some are what a filter never sees in service (truncated, a VLAN tag) and
 * are there for the code paths they reach. A few verdicts are also written
 * out by hand (hand[]), so that the corpus is known to exercise them.
 *
 * What catches each rewrite of filter.c (each was checked by removing it):
 *  - converter, indexed byte/word loads: every tcp[...]/udp[...]/icmp[...]
 *    byte test and the ports behind IPv4 options (wrong verdicts);
 *  - x86 JIT, jset with an 8-bit immediate: `tcp[tcpflags] & tcp-syn != 0`
 *    and the other flag tests (crash or wrong verdicts);
 *  - x86 JIT, backward jumps of 127-128 bytes: divisions by packet bytes
 *    (the converter's zero test places the epilogue early; crash);
 *  - x86 JIT, dry runs stopped on equal sizes: `not tcp and not udp or
 *    port 80` and two more (crash);
 *  - shifts by X >= 32 (0 in libpcap): `(ip[0] << ip[8]) != 0` and others
 *    (wrong verdicts);
 *  - the X guard: `ether[len - 62:4] = 0` on the 58-61-byte frames (X + k
 *    wraps to 2^32 - 4..-1: a read 4 GiB away, the test crashes).
 * Also: expressions refused with the right error (libpcap's and filter.c's),
 * the limits, and one filter run by two threads at once on the same mbufs.
 * On x86-64 every filter must be JIT-compiled.
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "check.h"
#include "pppoe_filter.h"

#define FRAME_MAX 9000
#define NB_FRAMES 40
#define NB_LAYOUTS 5
#define DATA_ROOM (RTE_PKTMBUF_HEADROOM + 9216)
#define NB_MBUF 767
#define THREAD_ROUNDS 300

/* ---- frames ------------------------------------------------------------ */

static const uint8_t mac_client[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t mac_ac[6] = {0x02, 0xac, 0, 0, 0, 0x01};     /* access port */
static const uint8_t mac_uplink[6] = {0x02, 0xac, 0, 0, 0, 0x02}; /* uplink port */
static const uint8_t mac_router[6] = {0x02, 0xee, 0, 0, 0, 0x01}; /* uplink router */
static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_mdns[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};     /* RFC 1112 */
static const uint8_t mac_sn_mcast[6] = {0x33, 0x33, 0xff, 0x00, 0x01, 0x00}; /* RFC 2464 */

#define IP4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))
#define CLIENT4 IP4(100, 64, 0, 2)
#define SERVER4 IP4(198, 51, 100, 7)

static const uint8_t client6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 1, 0};
static const uint8_t server6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
static const uint8_t dns6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x53};
/* solicited-node multicast of client6 (RFC 4291 2.7.1) */
static const uint8_t sn6[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0x01, 0};

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/* What follows the IP header. */
struct l4 {
	uint8_t proto;         /* IPPROTO_*; another one: payload bytes only */
	uint16_t sport, dport; /* TCP, UDP */
	uint8_t flags;         /* TCP */
	uint8_t opt_len;       /* TCP option bytes (multiple of 4) */
	uint8_t type;          /* ICMP, ICMPv6 */
	uint16_t payload;      /* payload bytes (a pattern) */
	const char *text;      /* or this text as the payload */
};

/* The transports of the corpus; more fields after the fixed ones */
#define TCP(s, d, fl, ...) \
	(&(struct l4){.proto = IPPROTO_TCP, .sport = (s), .dport = (d), .flags = (fl), __VA_ARGS__})
#define UDP(s, d, ...) (&(struct l4){.proto = IPPROTO_UDP, .sport = (s), .dport = (d), __VA_ARGS__})
#define ICMP(p, t, ...) (&(struct l4){.proto = (p), .type = (t), __VA_ARGS__})
#define RAW(p, n) (&(struct l4){.proto = (p), .payload = (n)})

struct frame {
	const char *name;
	uint8_t *d;
	uint32_t len;
};

static struct frame frames[NB_FRAMES];
static unsigned int nb_frames;

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* RFC 1071 checksum of len bytes */
static uint16_t
cksum(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t
l4_build(uint8_t *p, const struct l4 *l)
{
	uint32_t h = 0, i, n = l->text != NULL ? (uint32_t)strlen(l->text) : l->payload;

	switch (l->proto) {
	case IPPROTO_TCP: /* RFC 9293 3.1 */
		h = 20u + l->opt_len;
		memset(p, 0, h);
		put16(p, l->sport);
		put16(p + 2, l->dport);
		put32(p + 4, 0x01000000);
		put32(p + 8, l->flags & TCP_ACK ? 0x02000000 : 0);
		p[12] = (uint8_t)(h / 4 << 4);
		p[13] = l->flags;
		put16(p + 14, 64240);
		for (i = 20; i + 4 <= h; i += 4) /* NOP NOP, then a 2-byte EOL pad */
			put32(p + i, 0x01010000);
		break;
	case IPPROTO_UDP: /* RFC 768 */
		h = 8;
		put16(p, l->sport);
		put16(p + 2, l->dport);
		put16(p + 4, (uint16_t)(h + n));
		put16(p + 6, 0);
		break;
	case IPPROTO_ICMP:   /* RFC 792 */
	case IPPROTO_ICMPV6: /* RFC 4443 2.1 */
		h = 8;
		memset(p, 0, h);
		p[0] = l->type;
		put16(p + 4, 0x4242);
		put16(p + 6, 1);
		break;
	default: break;
	}
	for (i = 0; i < n; i++)
		p[h + i] = l->text != NULL ? (uint8_t)l->text[i] : (uint8_t)(i * 7 + 1);
	return h + n;
}

static uint32_t
eth_build(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put16(f + 12, type);
	return 14;
}

/* IPv4 frame: opt_len bytes of options (Router Alert, RFC 2113, then
 * NOPs), frag = flags and fragment offset field. */
static uint32_t
ip4_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, uint32_t src, uint32_t dst,
	  uint8_t ttl, uint16_t frag, uint8_t opt_len, const struct l4 *l)
{
	uint8_t *ip = f + eth_build(f, dmac, smac, 0x0800);
	uint32_t hl = 20u + opt_len, len;

	memset(ip, 0, hl);
	ip[0] = (uint8_t)(0x40 | hl / 4);
	put16(ip + 4, 0x1234);
	put16(ip + 6, frag);
	ip[8] = ttl;
	ip[9] = l->proto;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	if (opt_len >= 4)
		put32(ip + 20, 0x94040000);
	memset(ip + 24, 1, opt_len >= 4 ? opt_len - 4u : 0);
	len = hl + l4_build(ip + hl, l);
	put16(ip + 2, (uint16_t)len);
	put16(ip + 10, cksum(ip, hl));
	return 14 + len;
}

/* IPv6 frame: nh is the first next header; ext (ext_len bytes, next-header
 * fields already set) comes before the transport. */
static uint32_t
ip6_frame(uint8_t *f, const uint8_t *dmac, const uint8_t *smac, const uint8_t *src,
	  const uint8_t *dst, uint8_t hlim, uint8_t nh, const uint8_t *ext, uint32_t ext_len,
	  const struct l4 *l)
{
	uint8_t *ip = f + eth_build(f, dmac, smac, 0x86dd);
	uint32_t plen;

	memset(ip, 0, 40);
	ip[0] = 0x60;
	ip[6] = nh;
	ip[7] = hlim;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	if (ext_len != 0)
		memcpy(ip + 40, ext, ext_len);
	plen = ext_len + l4_build(ip + 40 + ext_len, l);
	put16(ip + 4, (uint16_t)plen);
	return 14 + 40 + plen;
}

static uint8_t *
frame_new(const char *name)
{
	struct frame *fr = &frames[nb_frames++];

	fr->name = name;
	fr->d = calloc(1, FRAME_MAX + 64);
	if (fr->d == NULL)
		abort();
	return fr->d;
}

#define FRAME_END(l) (frames[nb_frames - 1].len = (l))

static void
corpus_build(void)
{
	/* IPv6 extension headers (RFC 8200 4.3, 4.6, 4.5): hop-by-hop with a
	 * PadN, destination options with a PadN, then TCP; a fragment header
	 * (offset 0, M set) then UDP */
	static const uint8_t ext_hbh_dst[16] = {
		60,          0, 1, 4, 0, 0, 0, 0, /* hop-by-hop: next 60, PadN(4) */
		IPPROTO_TCP, 0, 1, 4, 0, 0, 0, 0, /* destination options: next TCP, PadN(4) */
	};
	static const uint8_t ext_frag[8] = {IPPROTO_UDP, 0, 0, 1, 0, 0, 0x12, 0x34};
	uint8_t *f;
	uint32_t l;

	f = frame_new("v4_tcp_syn");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x4000, 0,
			    TCP(40000, 80, TCP_SYN, .opt_len = 4)));
	f = frame_new("v4_tcp_synack");
	FRAME_END(ip4_frame(f, mac_uplink, mac_router, SERVER4, CLIENT4, 56, 0x4000, 0,
			    TCP(80, 40000, TCP_SYN | TCP_ACK, .opt_len = 4)));
	f = frame_new("v4_tcp_ack_https");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x4000, 0,
			    TCP(40001, 443, TCP_ACK | TCP_PSH, .payload = 100)));
	f = frame_new("v4_tcp_fin_smtp");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, IP4(192, 0, 2, 25), 64, 0x4000, 0,
			    TCP(40002, 25, TCP_FIN | TCP_ACK)));
	f = frame_new("v4_tcp_rst");
	FRAME_END(ip4_frame(f, mac_uplink, mac_router, IP4(192, 0, 2, 25), CLIENT4, 60, 0, 0,
			    TCP(25, 40002, TCP_RST)));
	f = frame_new("v4_http_get"); /* 12 bytes of TCP options before the request */
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x4000, 0,
			    TCP(40003, 80, TCP_ACK | TCP_PSH, .opt_len = 12,
				.text = "GET / HTTP/1.1\r\nHost: example.net\r\n\r\n")));
	f = frame_new("v4_udp_dns_query");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, IP4(192, 0, 2, 53), 64, 0, 0,
			    UDP(53000, 53, .payload = 30)));
	f = frame_new("v4_udp_dns_reply");
	FRAME_END(ip4_frame(f, mac_uplink, mac_router, IP4(192, 0, 2, 53), CLIENT4, 57, 0, 0,
			    UDP(53, 53000, .payload = 120)));
	f = frame_new("v4_udp_ntp");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, IP4(192, 0, 2, 123), 64, 0, 0,
			    UDP(123, 123, .payload = 48)));
	f = frame_new("v4_icmp_echo");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0, 0,
			    ICMP(IPPROTO_ICMP, 8, .payload = 56)));
	f = frame_new("v4_icmp_reply_60"); /* exactly 60 bytes */
	FRAME_END(ip4_frame(f, mac_uplink, mac_router, SERVER4, CLIENT4, 55, 0, 0,
			    ICMP(IPPROTO_ICMP, 0, .payload = 18)));
	f = frame_new("v4_icmp_unreach_pad"); /* 42 bytes, Ethernet padding to 60 */
	ip4_frame(f, mac_uplink, mac_router, SERVER4, CLIENT4, 55, 0, 0, ICMP(IPPROTO_ICMP, 3));
	FRAME_END(60);
	f = frame_new("v4_frag_first"); /* MF, offset 0 */
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x2000, 0,
			    UDP(5000, 6000, .payload = 192)));
	f = frame_new("v4_frag_next"); /* offset 25 (200 bytes), payload like ports 53/53 */
	l = ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 25, 0,
		      UDP(53, 53, .payload = 40));
	FRAME_END(l);
	f = frame_new("v4_opts_syn"); /* IHL 7: Router Alert + 4 NOPs */
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x4000, 8,
			    TCP(40004, 80, TCP_SYN)));
	f = frame_new("v4_bcast_dhcp");
	FRAME_END(ip4_frame(f, mac_bcast, mac_client, 0, IP4(255, 255, 255, 255), 64, 0, 0,
			    UDP(68, 67, .payload = 240)));
	f = frame_new("v4_mcast_mdns");
	FRAME_END(ip4_frame(f, mac_mdns, mac_client, CLIENT4, IP4(224, 0, 0, 251), 255, 0, 0,
			    UDP(5353, 5353, .payload = 40)));
	f = frame_new("v4_gre");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0, 0, RAW(47, 24)));
	f = frame_new("v4_esp");
	FRAME_END(ip4_frame(f, mac_uplink, mac_router, SERVER4, CLIENT4, 64, 0, 0, RAW(50, 64)));
	f = frame_new("v4_traceroute_ttl1");
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 1, 0, 0,
			    UDP(40100, 33434, .payload = 12)));
	f = frame_new("v6_tcp_syn");
	FRAME_END(ip6_frame(f, mac_ac, mac_client, client6, server6, 64, IPPROTO_TCP, NULL, 0,
			    TCP(40000, 80, TCP_SYN, .opt_len = 4)));
	f = frame_new("v6_tcp_ack_https");
	FRAME_END(ip6_frame(f, mac_uplink, mac_router, server6, client6, 58, IPPROTO_TCP, NULL, 0,
			    TCP(443, 40001, TCP_ACK, .payload = 200)));
	f = frame_new("v6_udp_dns");
	FRAME_END(ip6_frame(f, mac_ac, mac_client, client6, dns6, 64, IPPROTO_UDP, NULL, 0,
			    UDP(53001, 53, .payload = 33)));
	f = frame_new("v6_icmp6_echo");
	FRAME_END(ip6_frame(f, mac_ac, mac_client, client6, server6, 64, IPPROTO_ICMPV6, NULL, 0,
			    ICMP(IPPROTO_ICMPV6, 128, .payload = 56)));
	f = frame_new("v6_icmp6_ns"); /* neighbour solicitation (RFC 4861 4.3) */
	FRAME_END(ip6_frame(f, mac_sn_mcast, mac_client, client6, sn6, 255, IPPROTO_ICMPV6, NULL, 0,
			    ICMP(IPPROTO_ICMPV6, 135, .payload = 16)));
	f = frame_new("v6_ext_tcp"); /* hop-by-hop, destination options, TCP */
	FRAME_END(ip6_frame(f, mac_ac, mac_client, client6, server6, 64, 0, ext_hbh_dst,
			    sizeof(ext_hbh_dst), TCP(40005, 80, TCP_SYN)));
	f = frame_new("v6_frag_udp");
	FRAME_END(ip6_frame(f, mac_ac, mac_client, client6, dns6, 64, 44, ext_frag,
			    sizeof(ext_frag), UDP(53002, 53, .payload = 64)));
	f = frame_new("eth_only_14"); /* an Ethernet header, nothing behind */
	FRAME_END(eth_build(f, mac_ac, mac_client, 0x0800));
	f = frame_new("v4_trunc_ip"); /* 10 bytes of IPv4 header */
	ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0, 0, TCP(40006, 80, TCP_SYN));
	FRAME_END(24);
	f = frame_new("v4_trunc_tcp"); /* the ports of the TCP header only */
	ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0, 0, TCP(40007, 80, TCP_SYN));
	FRAME_END(38);
	f = frame_new("v6_trunc"); /* 30 bytes of IPv6 header */
	ip6_frame(f, mac_ac, mac_client, client6, server6, 64, IPPROTO_UDP, NULL, 0, UDP(1, 2));
	FRAME_END(44);
	f = frame_new("v4_jumbo"); /* iperf3 */
	FRAME_END(ip4_frame(f, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0x4000, 0,
			    TCP(5201, 5201, TCP_ACK, .payload = FRAME_MAX - 14 - 20 - 20)));
	f = frame_new("v6_jumbo");
	FRAME_END(ip6_frame(f, mac_uplink, mac_router, server6, client6, 64, IPPROTO_UDP, NULL, 0,
			    UDP(5001, 5000, .payload = FRAME_MAX - 14 - 40 - 8)));
	f = frame_new("vlan100_tcp_syn"); /* 802.1Q VID 100 (not seen in service) */
	l = ip4_frame(f + 4, mac_ac, mac_client, CLIENT4, SERVER4, 64, 0, 0,
		      TCP(40008, 80, TCP_SYN));
	eth_build(f, mac_ac, mac_client, 0x8100);
	put16(f + 14, 100);
	put16(f + 16, 0x0800);
	FRAME_END(l + 4);
}

static const struct frame *
frame_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < nb_frames; i++)
		if (strcmp(frames[i].name, name) == 0)
			return &frames[i];
	return NULL;
}

/* ---- mbufs ------------------------------------------------------------- */

/* Where frames are cut into segments (offsets of segment starts): inside
 * the ethertype, inside IPv4's destination port (34 + 2 + 1), inside
 * IPv4's protocol and IPv6's source address, one byte then the rest. A
 * layout is used when its cuts are inside the frame. */
static const uint32_t layouts[NB_LAYOUTS][2] = {
	{0, 0}, {13, 0}, {37, 0}, {23, 55}, {1, UINT32_MAX /* len - 1 */},
};

static struct rte_mempool *pool;
static struct rte_mbuf *chains[NB_FRAMES][NB_LAYOUTS]; /* NULL: layout not used */
static unsigned int nb_chains;

static struct rte_mbuf *
chain_make(const struct frame *fr, const uint32_t cut[2])
{
	uint32_t c[3], n = 0, off = 0, i, end;
	struct rte_mbuf *head = NULL, *m;

	for (i = 0; i < 2; i++) {
		uint32_t v = cut[i] == UINT32_MAX ? fr->len - 1 : cut[i];

		if (v == 0)
			continue;
		if (v >= fr->len || (n > 0 && v <= c[n - 1]))
			return NULL;
		c[n++] = v;
	}
	if (n == 0 && cut != layouts[0])
		return NULL;
	c[n] = fr->len;
	for (i = 0; i <= n; i++) {
		end = c[i];
		m = rte_pktmbuf_alloc(pool);
		if (m == NULL)
			abort();
		memcpy(rte_pktmbuf_append(m, (uint16_t)(end - off)), fr->d + off, end - off);
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			abort();
		off = end;
	}
	return head;
}

/* ---- the comparison ------------------------------------------------------ */

/* Expressions an operator writes, and some that reach the rest of the code. */
static const char *const exprs[] = {
	"",
	"ip",
	"ip6",
	"tcp",
	"udp",
	"icmp",
	"icmp6",
	"proto 47",
	"ip proto 50",
	"ip6 proto 17",
	"host 100.64.0.2",
	"src host 100.64.0.2",
	"dst host 198.51.100.7",
	"host 198.51.100.7 and not host 100.64.0.2",
	"net 198.51.100.0/24",
	"src net 100.64.0.0/10",
	"dst net 192.0.2.0 mask 255.255.255.0",
	"not net 10.0.0.0/8",
	"port 80",
	"tcp port 80",
	"src port 53",
	"dst port 53",
	"tcp port 443",
	"udp port 123",
	"udp port 53 or udp port 123",
	"udp port 53 or 123",
	"portrange 1-1023",
	"tcp dst portrange 20-25",
	"udp dst portrange 33434-33534",
	"tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] == tcp-syn",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == (tcp-syn|tcp-ack)",
	"tcp[tcpflags] & tcp-rst != 0",
	"tcp[13] & 2 != 0",
	"tcp[tcpflags] & tcp-syn != 0 and tcp dst port 80",
	"(tcp[tcpflags] & tcp-fin != 0) or (ip[6] & 0x20 != 0) or (tcp[tcpflags] & tcp-push != 0)",
	/* a jump lands on a rewritten jset (on its mov) */
	"(tcp[13] == 0x02 or tcp[13] == 0x12) and tcp[13] & 0x10 != 0",
	"ip[0] & 0xf > 5",
	"ip[0] & 0xf != 5",
	"ip[6:2] & 0x1fff != 0",
	"ip[6] & 0x20 != 0",
	"ip[8] < 10",
	"ip6 host 2001:db8:1:2::100",
	"ip6 net 2001:db8:ff::/48",
	"ip6 and udp port 53",
	"ip6 and tcp dst port 80",
	"ip6[6] == 0",
	"len < 100",
	"len >= 1500",
	"greater 1000",
	"less 64",
	"len == 14",
	"ether host 02:00:00:00:00:0a",
	"ether src 02:00:00:00:00:0a",
	"ether dst 02:ac:00:00:00:01",
	"ether broadcast",
	"ether multicast",
	"ip multicast",
	"ip6 multicast",
	"ether proto \\ip",
	"vlan",
	"vlan 100",
	"vlan and tcp",
	"not vlan",
	"icmp[icmptype] == icmp-echo",
	"icmp[icmptype] == icmp-echoreply",
	"icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6 and ip6[40] == 128",
	"icmp6[icmp6type] == icmp6-echo",
	"not (tcp port 25)",
	"(tcp port 80 or tcp port 443) and not src net 100.64.0.0/10",
	"udp and (port 53 or port 123) and not ip6",
	"tcp or udp and not icmp",
	"tcp dst port 80 or tcp dst port 443 or udp port 53 or icmp or src net 10.0.0.0/8",
	"ip[2:2] - ((ip[0] & 0xf) << 2) > 100",
	"ip[2:2] > 576",
	"ip[2:2] / 4 * 4 == ip[2:2]",
	"ip[9] % 4 == 2",
	"ip[12:4] ^ ip[16:4] != 0",
	"ip[1] | 3 == 3",
	/* shifts by a packet byte: 64 (the TTL), 47 or 50 (GRE, ESP) give 0 */
	"(ip[0] << ip[8]) != 0",
	"(ip[2:2] >> ip[9]) != 0",
	"(tcp[13] << (ip[9] & 0x3f)) > 1",
	/* divisions and remainders by packet bytes (0: no match); the
	 * division's zero test puts the JIT's epilogue early, and without
	 * filter.c's workaround 3. each of these has a jump back of 127 or 128
	 * bytes (found by a differential fuzzer against libpcap) */
	"((0x7fffffff % len) / (udp[23:2] % ip6[36])) >= 1",
	"((len / udp[7:4]) | 255) > ip6[56:1]",
	"(255 % (udp[46:4] % len)) > len",
	"((len / icmp[38]) / ip6[54:1]) > (len >> len)",
	"ip[1] / ip[1] = 1 or ip[2] % ip[1] = 0",
	"ip[ip[0] & 0xf] != 0",
	"ether[len - 62:4] = 0",
	"ether[len - 4:4] != 0",
	"ether[len - 1] = 0x1f",
	/* a jump lands on a guarded indexed load (on its guard) */
	"(tcp[tcpflags] & tcp-syn != 0 and tcp dst port 80) or ether[len - 1] = 0x1f",
	"ether[len - 62:4] = 0 or (tcp[tcpflags] & tcp-syn != 0 and tcp dst port 80)",
	"tcp[((tcp[12] & 0xf0) >> 2):4] = 0x47455420",
	"ether[12:2] = 0x0800 and ether[23] = 17",
	/* without filter.c's workaround 4. the JIT stops after two passes of
	 * equal size and emits stale jump targets (differential fuzzer) */
	"not tcp and not udp or port 80",
	"(((udp or ip) or tcp) and not port 80)",
	"(((port 80 or net 198.51.100.0/24) and not ip) or icmp)",
};
#define NB_EXPRS RTE_DIM(exprs)

/* Verdicts written out by hand: the frames each expression matches. */
static const struct {
	const char *expr;
	const char *match[8];
} hand[] = {
	{"tcp port 80",
	 {"v4_tcp_syn", "v4_tcp_synack", "v4_http_get", "v4_opts_syn", "v4_trunc_tcp",
	  "v6_tcp_syn"}},
	{"tcp[tcpflags] & tcp-syn != 0", {"v4_tcp_syn", "v4_tcp_synack", "v4_opts_syn"}},
	{"icmp", {"v4_icmp_echo", "v4_icmp_reply_60", "v4_icmp_unreach_pad"}},
	{"ether broadcast", {"v4_bcast_dhcp"}},
	{"ip[6:2] & 0x1fff != 0", {"v4_frag_next"}},
	{"len >= 1500", {"v4_jumbo", "v6_jumbo"}},
	{"vlan", {"vlan100_tcp_syn"}},
	{"ip[0] & 0xf > 5", {"v4_opts_syn"}},
	{"tcp[((tcp[12] & 0xf0) >> 2):4] = 0x47455420", {"v4_http_get"}},
	{"icmp6[icmp6type] == icmp6-echo", {"v6_icmp6_echo"}},
	{"len == 14", {"eth_only_14"}},
};

static pcap_t *pcap;

/* libpcap's verdict; the optimised and plain programs must agree. */
static bool
pcap_verdict(const struct bpf_program *opt, const struct bpf_program *plain, const struct frame *fr,
	     const char *expr)
{
	struct pcap_pkthdr h = {.caplen = fr->len, .len = fr->len};
	int a = pcap_offline_filter(opt, &h, fr->d), b = pcap_offline_filter(plain, &h, fr->d);

	CHECK(a == b, "\"%s\" %s: libpcap optimised %d, not %d", expr, fr->name, a, b);
	return a != 0;
}

static bool verdicts[NB_EXPRS][NB_FRAMES]; /* libpcap's */

static void
test_against_pcap(void)
{
	unsigned int e, i, j, h, k, n_cmp = 0;
	char err[256];

	for (e = 0; e < NB_EXPRS; e++) {
		struct bpf_program opt, plain;
		struct pppoe_filter *f;

		if (pcap_compile(pcap, &opt, exprs[e], 1, PCAP_NETMASK_UNKNOWN) != 0 ||
		    pcap_compile(pcap, &plain, exprs[e], 0, PCAP_NETMASK_UNKNOWN) != 0) {
			CHECK(false, "libpcap refuses \"%s\": %s", exprs[e], pcap_geterr(pcap));
			continue;
		}
		f = pppoe_filter_compile(exprs[e], SOCKET_ID_ANY, err, sizeof(err));
		CHECK(f != NULL, "compile \"%s\": %s", exprs[e], f == NULL ? err : "");
		if (f == NULL) {
			pcap_freecode(&opt);
			pcap_freecode(&plain);
			continue;
		}
		CHECK(strcmp(f->expr, exprs[e]) == 0 && f->nb_ins >= f->nb_cbpf && f->nb_cbpf > 0,
		      "\"%s\": text kept, %u cBPF, %u eBPF instructions", exprs[e], f->nb_cbpf,
		      f->nb_ins);
#ifdef RTE_ARCH_X86_64
		CHECK(pppoe_filter_jit(f) && f->jit_size > 0, "\"%s\": JIT-compiled", exprs[e]);
#endif
		for (i = 0; i < nb_frames; i++) {
			bool want = pcap_verdict(&opt, &plain, &frames[i], exprs[e]);

			verdicts[e][i] = want;
			for (j = 0; j < NB_LAYOUTS; j++) {
				struct rte_mbuf *m = chains[i][j];

				if (m == NULL)
					continue;
				CHECK(pppoe_filter_match(f, m) == want,
				      "\"%s\" %s, %u segment(s): %s", exprs[e], frames[i].name,
				      m->nb_segs,
				      want ? "no match, libpcap matches" : "match, libpcap not");
				CHECK(pppoe_filter_match_interp(f, m) == want,
				      "\"%s\" %s, %u segment(s), interpreter: %s", exprs[e],
				      frames[i].name, m->nb_segs,
				      want ? "no match, libpcap matches" : "match, libpcap not");
				n_cmp += 2;
			}
		}
		/* the hand-written verdicts, against libpcap's */
		for (h = 0; h < RTE_DIM(hand); h++) {
			if (strcmp(hand[h].expr, exprs[e]) != 0)
				continue;
			for (i = 0; i < nb_frames; i++) {
				bool listed = false;

				for (k = 0; k < RTE_DIM(hand[h].match) && hand[h].match[k]; k++)
					listed |= strcmp(hand[h].match[k], frames[i].name) == 0;
				CHECK(listed == verdicts[e][i], "\"%s\" %s: by hand %d, libpcap %d",
				      exprs[e], frames[i].name, listed, verdicts[e][i]);
			}
		}
		pppoe_filter_free(f);
		pcap_freecode(&opt);
		pcap_freecode(&plain);
	}
	for (h = 0; h < RTE_DIM(hand); h++) {
		for (k = 0; k < RTE_DIM(hand[h].match) && hand[h].match[k]; k++)
			CHECK(frame_by_name(hand[h].match[k]) != NULL, "hand[%u]: frame %s", h,
			      hand[h].match[k]);
		for (e = 0; e < NB_EXPRS && strcmp(exprs[e], hand[h].expr) != 0; e++)
			;
		CHECK(e < NB_EXPRS, "hand[%u]: \"%s\" is in exprs[]", h, hand[h].expr);
	}
	printf("test_filter: %u expressions x %u frames in %u layouts: %u verdicts compared\n",
	       (unsigned int)NB_EXPRS, nb_frames, nb_chains, n_cmp);
}

/* ---- refusals and limits ------------------------------------------------- */

static void
test_refused(void)
{
	static const struct {
		const char *expr;
		int err;          /* rte_errno */
		const char *text; /* in the message */
	} bad[] = {
		{"tcp port", EINVAL, "syntax error"},
		{"tcp-syn", EINVAL, "syntax error"},
		{"host 999.1.1.1", EINVAL, "invalid IPv4 address"},
		{"ip broadcast", EINVAL, "netmask not known"},
		{"ip[0] << 40 = 1", EINVAL, "shift"},
		{"ip[2:2] / 0 = 1", EINVAL, "division by zero"},
		{"inbound", ENOTSUP, "socket metadata"},
		{"outbound and tcp", ENOTSUP, "socket metadata"},
		{"ifindex 1", ENOTSUP, "socket metadata"},
		{"ip6 protochain 6", ENOTSUP, "backward jump"},
		{"ether[70000] = 1", E2BIG, "offset 70000"},
		{"ether[4294967295] = 1", E2BIG, "offset 4294967295"},
		{"tcp[65535] = 1", E2BIG, "beyond 65535"}, /* indexed: x + 65535 + 14 */
		/* libpcap 1.10.3's optimiser drops the store of M[4] */
		{"(((len + len) + (0x7fffffff % len)) >= (len ^ 0x10) and (not ((tcp[58:2] % "
		 "icmp[54:2]) % (2 ^ 4294967295)) > (ip[5:1] << 0x10) and not ((len * icmp[68]) ^ "
		 "(tcp[57] ^ ip[36:4])) <= (len + ether[26])))",
		 EINVAL, "reads scratch memory M[4]"},
	};
	char err[256], *s;
	struct pppoe_filter *f;
	unsigned int i, n, last;
	bool refused[2];

	for (i = 0; i < RTE_DIM(bad); i++) {
		rte_errno = 0;
		err[0] = 0;
		f = pppoe_filter_compile(bad[i].expr, SOCKET_ID_ANY, err, sizeof(err));
		CHECK(f == NULL && rte_errno == bad[i].err && strstr(err, bad[i].text) != NULL,
		      "\"%s\" refused: %p, errno %d (want %d), \"%s\"", bad[i].expr, (void *)f,
		      rte_errno, bad[i].err, err);
		pppoe_filter_free(f);
	}
	rte_errno = 0;
	CHECK(pppoe_filter_compile(NULL, 0, err, sizeof(err)) == NULL && rte_errno == EINVAL,
	      "NULL expression");
	CHECK(pppoe_filter_compile("tcp port", 0, NULL, 0) == NULL && rte_errno == EINVAL,
	      "no error buffer");

	/* the expression length: 1024 characters compile, 1025 do not */
	s = malloc(PPPOE_FILTER_EXPR_MAX + 2);
	if (s == NULL)
		abort();
	memset(s, ' ', PPPOE_FILTER_EXPR_MAX + 1);
	memcpy(s, "tcp", 3);
	s[PPPOE_FILTER_EXPR_MAX] = 0;
	f = pppoe_filter_compile(s, SOCKET_ID_ANY, err, sizeof(err));
	CHECK(f != NULL, "1024 characters: %s", f == NULL ? err : "compiled");
	pppoe_filter_free(f);
	s[PPPOE_FILTER_EXPR_MAX] = ' ';
	s[PPPOE_FILTER_EXPR_MAX + 1] = 0;
	rte_errno = 0;
	f = pppoe_filter_compile(s, SOCKET_ID_ANY, err, sizeof(err));
	CHECK(f == NULL && rte_errno == E2BIG && strstr(err, "1024") != NULL,
	      "1025 characters refused: errno %d, \"%s\"", rte_errno, err);

	/* The program size. A DECnet address test is about 47 classic
	 * instructions and `or 1.n` repeats it; a jset term (`ip[j]&1!=0`)
	 * gives more eBPF than classic instructions (filter.c's mov). From 70
	 * DECnet terms on, filled with jset terms to 1024 characters: libpcap
	 * 1.10's programs grow through 4096 eBPF instructions while the classic
	 * program is still under 4096, then past 4096 classic instructions. */
	last = 0;
	memset(refused, 0, sizeof(refused));
	for (n = 70; n < 100; n++) {
		size_t o = (size_t)snprintf(s, PPPOE_FILTER_EXPR_MAX + 1, "decnet host 1.1");
		unsigned int t;

		for (t = 2; t <= n; t++)
			o += (size_t)snprintf(s + o, PPPOE_FILTER_EXPR_MAX + 1 - o, " or 1.%u", t);
		for (t = 0; o + 16 <= PPPOE_FILTER_EXPR_MAX; t++)
			o += (size_t)snprintf(s + o, PPPOE_FILTER_EXPR_MAX + 1 - o,
					      " or ip[%u]&1!=0", t % 60);
		rte_errno = 0;
		f = pppoe_filter_compile(s, SOCKET_ID_ANY, err, sizeof(err));
		if (f != NULL) {
			last = RTE_MAX(last, f->nb_ins);
			pppoe_filter_free(f);
			continue;
		}
		CHECK(rte_errno == E2BIG && strstr(err, "instructions, at most 4096") != NULL,
		      "%u terms: errno %d, \"%s\"", n, rte_errno, err);
		refused[0] |= strstr(err, "eBPF instructions") != NULL;
		refused[1] |= strstr(err, "classic BPF instructions") != NULL;
	}
	CHECK(refused[0] && refused[1], "over 4096 eBPF / classic instructions refused: %d, %d",
	      refused[0], refused[1]);
	CHECK(last > PPPOE_FILTER_INS_MAX - 100 && last <= PPPOE_FILTER_INS_MAX,
	      "%u instructions accepted", last);
	free(s);

	/* no filter matches everything; freeing none does nothing */
	CHECK(pppoe_filter_match(NULL, chains[0][0]) &&
		      pppoe_filter_match_interp(NULL, chains[0][0]),
	      "NULL filter matches");
	pppoe_filter_free(NULL);
}

/* ---- one filter, several threads ----------------------------------------- */

struct thr {
	const struct pppoe_filter *f;
	unsigned int e; /* index in exprs[] */
	uint64_t runs, wrong;
};

static void *
thr_run(void *arg)
{
	struct thr *t = arg;
	unsigned int r, i, j;

	for (r = 0; r < THREAD_ROUNDS; r++)
		for (i = 0; i < nb_frames; i++)
			for (j = 0; j < NB_LAYOUTS; j++) {
				struct rte_mbuf *m = chains[i][j];

				if (m == NULL)
					continue;
				t->wrong += pppoe_filter_match(t->f, m) != verdicts[t->e][i];
				t->wrong += pppoe_filter_match_interp(t->f, m) != verdicts[t->e][i];
				t->runs += 2;
			}
	return NULL;
}

/* Two threads run one filter (JIT and interpreter) on the same mbufs at once. */
static void
test_threads(void)
{
	struct thr t[2];
	struct pppoe_filter *f;
	pthread_t tid;
	unsigned int e;
	char err[256];

	for (e = 0; e < NB_EXPRS && strcmp(exprs[e], "tcp[tcpflags] & tcp-syn != 0 and "
						     "tcp dst port 80") != 0;
	     e++)
		;
	f = pppoe_filter_compile(exprs[e], SOCKET_ID_ANY, err, sizeof(err));
	CHECK(f != NULL, "threads: compile: %s", f == NULL ? err : "");
	if (f == NULL)
		return;
	t[0] = t[1] = (struct thr){.f = f, .e = e};
	CHECK(pthread_create(&tid, NULL, thr_run, &t[1]) == 0, "threads: second thread");
	thr_run(&t[0]);
	pthread_join(tid, NULL);
	CHECK(t[0].wrong == 0 && t[1].wrong == 0 && t[0].runs == t[1].runs && t[0].runs > 0,
	      "threads: %" PRIu64 " and %" PRIu64 " wrong verdicts of %" PRIu64, t[0].wrong,
	      t[1].wrong, t[0].runs);
	pppoe_filter_free(f);
}

int
main(int argc, char **argv)
{
	unsigned int i, j;

	if (rte_eal_init(argc, argv) < 0) {
		printf("EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("test_filter", NB_MBUF, 0, 0, DATA_ROOM, SOCKET_ID_ANY);
	pcap = pcap_open_dead(DLT_EN10MB, 65535);
	if (pool == NULL || pcap == NULL) {
		printf("set-up failed\n");
		return 1;
	}
	corpus_build();
	for (i = 0; i < nb_frames; i++)
		for (j = 0; j < NB_LAYOUTS; j++) {
			chains[i][j] = chain_make(&frames[i], layouts[j]);
			nb_chains += chains[i][j] != NULL;
		}
	CHECK(nb_frames >= 20 && nb_chains >= 3 * nb_frames, "corpus: %u frames, %u layouts",
	      nb_frames, nb_chains);

	test_against_pcap();
	test_refused();
	test_threads();

	for (i = 0; i < nb_frames; i++) {
		for (j = 0; j < NB_LAYOUTS; j++)
			rte_pktmbuf_free(chains[i][j]);
		free(frames[i].d);
	}
	CHECK(rte_mempool_avail_count(pool) == NB_MBUF, "every mbuf back");
	pcap_close(pcap);
	printf("test_filter: %d checks, %d failures\n", checks, failures);
	return failures != 0;
}
