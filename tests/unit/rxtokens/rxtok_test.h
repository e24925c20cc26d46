/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the rxtokens tests and the fuzz target: frames built in C
 * from their layers, scattered into mbuf chains allocated from a region's
 * pool, and a delivery step that goes online on the test's RCU variable only
 * while it delivers (as a worker between two quiescent states).
 *
 * Frame layers: Ethernet II (optionally one 802.1Q tag), then UDP/IPv4,
 * UDP/IPv6, IPv4 (TCP, optionally with IP options), IPv6 (no next header),
 * PPPoE session (RFC 2516) with a 2-byte or a compressed 1-byte PPP protocol
 * field (RFC 1661 section 6.5), or ARP. The builder records where each
 * consumer kind must find its payload: UDP payload, IP payload, PPP payload.
 */
#ifndef EGW_RXTOK_TEST_H
#define EGW_RXTOK_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_udp.h>

#include "egw_eth.h"
#include "egw_rxtok.h"

#define T_FRAME_MAX 16384
/* data room of one region mbuf: a 4 KiB page minus the headroom */
#define T_SEG_ROOM (EGW_RXTOK_PAGE_SIZE - RTE_PKTMBUF_HEADROOM)
#define T_MAX_SEGS 16

enum t_kind {
	T_UDP4 = 0,
	T_UDP6,
	T_IP4,  /* IPv4, TCP protocol number, payload after the IP header */
	T_IP6,  /* IPv6, next header 59 (none) */
	T_PPP2, /* PPPoE session, PPP protocol 0x0021 (2 bytes) */
	T_PPP1, /* PPPoE session, PPP protocol 0x21 compressed (1 byte) */
	T_ARP,
};

/* What a frame is made of. */
struct t_frame {
	enum t_kind kind;
	uint16_t vlan;      /* 802.1Q VID, 0: untagged */
	uint8_t ip_opt;     /* IPv4 option bytes (multiple of 4) */
	uint8_t dst4_last;  /* IPv4 destination 10.0.0.x */
	uint8_t dst6_last;  /* IPv6 destination 2001:db8::x */
	uint16_t dport;     /* UDP destination port */
	uint16_t sid;       /* PPPoE session id */
	uint16_t plen;      /* bytes after the innermost header */
	uint16_t pad_to;    /* frame padded with zeros to this length */
	uint8_t fill;       /* payload byte i is (fill + i * 7) & 0xff ^ (i >> 8) */
	uint16_t bad_ulen;  /* non-zero: UDP length field written as this */
	uint16_t bad_pplen; /* non-zero: PPPoE length field written as this */
};

/* Where each kind of consumer finds its payload in the built frame. */
struct t_layout {
	uint32_t len; /* frame */
	uint32_t l4_off, l4_len;
	uint32_t l3_off, l3_len;
	uint32_t ppp_off, ppp_len;
};

static const uint8_t t_mac_host[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01};
static const uint8_t t_mac_peer[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x99};

static inline void
t_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
t_dst6(uint8_t a[16], uint8_t last)
{
	static const uint8_t pfx[16] = {0x20, 0x01, 0x0d, 0xb8};

	memcpy(a, pfx, 16);
	a[15] = last;
}

static inline void
t_fill(uint8_t *p, uint32_t n, uint8_t fill)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(((fill + i * 7u) & 0xff) ^ (i >> 8));
}

/* Build the frame into buf (T_FRAME_MAX bytes); returns its layout. */
static inline struct t_layout
t_build(const struct t_frame *f, uint8_t *buf)
{
	struct t_layout lo = {0};
	uint32_t o = 12, l3, i;

	memset(buf, 0, T_FRAME_MAX);
	memcpy(buf, t_mac_host, 6);
	memcpy(buf + 6, t_mac_peer, 6);
	if (f->vlan != 0) {
		t_put16(buf + o, RTE_ETHER_TYPE_VLAN);
		t_put16(buf + o + 2, f->vlan);
		o += 4;
	}
	switch (f->kind) {
	case T_UDP4:
	case T_IP4: {
		uint32_t ihl = 20 + f->ip_opt;
		uint32_t l4 = f->kind == T_UDP4 ? 8 : 0;
		struct rte_ipv4_hdr *ip;

		t_put16(buf + o, RTE_ETHER_TYPE_IPV4);
		l3 = o + 2;
		ip = (struct rte_ipv4_hdr *)(buf + l3);
		ip->version_ihl = (uint8_t)(0x40 | ihl / 4);
		ip->total_length = rte_cpu_to_be_16((uint16_t)(ihl + l4 + f->plen));
		ip->time_to_live = 64;
		ip->next_proto_id = f->kind == T_UDP4 ? IPPROTO_UDP : IPPROTO_TCP;
		ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
		ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, f->dst4_last));
		for (i = 0; i < f->ip_opt; i++)
			buf[l3 + 20 + i] = 0x01; /* NOP options */
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		lo.l3_off = l3 + ihl;
		lo.l3_len = l4 + f->plen;
		break;
	}
	case T_UDP6:
	case T_IP6: {
		uint32_t l4 = f->kind == T_UDP6 ? 8 : 0;
		struct rte_ipv6_hdr *ip;

		t_put16(buf + o, RTE_ETHER_TYPE_IPV6);
		l3 = o + 2;
		ip = (struct rte_ipv6_hdr *)(buf + l3);
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)(l4 + f->plen));
		ip->proto = f->kind == T_UDP6 ? IPPROTO_UDP : 59;
		ip->hop_limits = 64;
		t_dst6(ip->src_addr, 1);
		t_dst6(ip->dst_addr, f->dst6_last);
		lo.l3_off = l3 + 40;
		lo.l3_len = l4 + f->plen;
		break;
	}
	case T_PPP2:
	case T_PPP1: {
		uint32_t pl = f->kind == T_PPP2 ? 2 : 1;

		t_put16(buf + o, 0x8864);
		l3 = o + 2;
		buf[l3] = 0x11;
		buf[l3 + 1] = 0x00;
		t_put16(buf + l3 + 2, f->sid);
		t_put16(buf + l3 + 4, f->bad_pplen ? f->bad_pplen : (uint16_t)(pl + f->plen));
		if (pl == 2)
			t_put16(buf + l3 + 6, 0x0021);
		else
			buf[l3 + 6] = 0x21;
		lo.ppp_off = l3 + 6 + pl;
		lo.ppp_len = f->plen;
		lo.len = lo.ppp_off + f->plen;
		break;
	}
	case T_ARP:
	default:
		t_put16(buf + o, RTE_ETHER_TYPE_ARP);
		l3 = o + 2;
		lo.l3_off = l3;
		lo.l3_len = 28;
		break;
	}
	if (f->kind == T_UDP4 || f->kind == T_UDP6) {
		struct rte_udp_hdr *u = (struct rte_udp_hdr *)(buf + lo.l3_off);

		u->src_port = rte_cpu_to_be_16(40000);
		u->dst_port = rte_cpu_to_be_16(f->dport);
		u->dgram_len =
			rte_cpu_to_be_16(f->bad_ulen ? f->bad_ulen : (uint16_t)(8 + f->plen));
		lo.l4_off = lo.l3_off + 8;
		lo.l4_len = f->plen;
	}
	if (lo.len == 0)
		lo.len = lo.l3_off + lo.l3_len;
	if (f->kind != T_ARP && f->kind != T_PPP2 && f->kind != T_PPP1)
		t_fill(buf + lo.len - f->plen, f->plen, f->fill);
	else if (f->kind != T_ARP)
		t_fill(buf + lo.ppp_off, f->plen, f->fill);
	if (f->pad_to > lo.len)
		lo.len = f->pad_to;
	return lo;
}

/*
 * Copy a frame into a chain of mbufs from pool: the first segment takes seg0
 * bytes, the others seg bytes (0: a whole data room). NULL if the pool is
 * empty (nothing is leaked).
 */
static inline struct rte_mbuf *
t_chain(struct rte_mempool *pool, const uint8_t *frame, uint32_t len, uint32_t seg0, uint32_t seg)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	uint32_t o = 0;

	if (seg0 == 0 || seg0 > T_SEG_ROOM)
		seg0 = T_SEG_ROOM;
	if (seg == 0 || seg > T_SEG_ROOM)
		seg = T_SEG_ROOM;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint32_t take = RTE_MIN(len - o, head == NULL ? seg0 : seg);

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), frame + o, take);
		m->data_len = (uint16_t)take;
		m->pkt_len = take;
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += take;
		}
		last = m;
		o += take;
	} while (o < len);
	return head;
}

/* A record as the chain says it must come out. */
static inline uint32_t
t_expect_recs(const struct rte_mbuf *m, const uint8_t *base, uint32_t off, uint32_t len,
	      struct egw_rxtok_rec *out, uint32_t max)
{
	uint32_t n = 0;

	for (; m != NULL && len != 0; m = m->next) {
		uint32_t take;

		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		take = RTE_MIN(len, (uint32_t)m->data_len - off);
		if (n < max) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].token = (uint32_t)(((const uint8_t *)m->buf_addr - base) >>
						  EGW_RXTOK_PAGE_SHIFT);
			out[n].offset = (uint16_t)(m->data_off + off);
			out[n].size = (uint16_t)take;
		}
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

/* Lowest buffer address of the pool's mbufs: the region's first page. */
static inline void
t_base_cb(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	const uint8_t **base = arg;
	const struct rte_mbuf *m = obj;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	if (*base == NULL || (const uint8_t *)m->buf_addr < *base)
		*base = m->buf_addr;
}

static inline const uint8_t *
t_region_base(struct rte_mempool *pool)
{
	const uint8_t *base = NULL;

	rte_mempool_obj_iter(pool, t_base_cb, &base);
	return base;
}

/* Classify and deliver as a worker would, online on the RCU variable only
 * for the call: a consumer close from the same thread then never waits. */
static inline uint16_t
t_deliver(struct rte_rcu_qsbr *qsbr, uint16_t port, uint16_t queue, struct rte_mbuf *pkts[],
	  uint16_t n, struct egw_rxtok_burst_res *res)
{
	static const struct egw_eth_port eport = {
		.mac = {.addr_bytes = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}},
	};
	uint16_t good, pass;

	good = egw_eth_classify_burst(&eport, pkts, n);
	rte_rcu_qsbr_thread_online(qsbr, 0);
	pass = egw_rxtok_deliver_burst(port, queue, pkts, good, res);
	rte_rcu_qsbr_quiescent(qsbr, 0);
	rte_rcu_qsbr_thread_offline(qsbr, 0);
	/* frames the classifier rejected follow the passed ones */
	if (good != n)
		memmove(&pkts[pass], &pkts[good], sizeof(pkts[0]) * (size_t)(n - good));
	return (uint16_t)(pass + (n - good));
}

/* An RCU variable for one thread, thread 0 registered and offline. */
static inline struct rte_rcu_qsbr *
t_qsbr_create(void)
{
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	struct rte_rcu_qsbr *v = rte_zmalloc("t_qsbr", sz, RTE_CACHE_LINE_SIZE);

	if (v == NULL || rte_rcu_qsbr_init(v, 1) != 0 || rte_rcu_qsbr_thread_register(v, 0) != 0)
		return NULL;
	return v;
}

/* Exit status of a test that cannot run here. */
#define T_SKIP 77

/* EAL, lib/eth and lib/rxtokens for a test: 0, T_SKIP (EAL got no memory)
 * or 1, with the reason printed. */
static inline int
t_setup(int argc, char **argv, struct rte_rcu_qsbr **qsbr)
{
	if (rte_eal_init(argc, argv) < 0) {
		int err = rte_errno;

		printf("%s: rte_eal_init: %s\n", err == ENOMEM ? "SKIP" : "FAIL",
		       rte_strerror(err));
		return err == ENOMEM ? T_SKIP : 1;
	}
	*qsbr = t_qsbr_create();
	if (*qsbr == NULL || egw_eth_init() != 0 || egw_rxtok_init(*qsbr) != 0) {
		printf("FAIL: set-up (qsbr, egw_eth_init, egw_rxtok_init)\n");
		return 1;
	}
	return 0;
}

/* Free 2 MiB hugepages the kernel has, from /proc/meminfo; -1 if unknown. */
static inline long
t_free_hugepages(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* --stats-json's rxtokens object as text (free() it). */
static inline char *
t_json_text(void)
{
	/* static: open_memstream() keeps their addresses until fclose() (and
	 * gcc 12 takes locals for dangling pointers) */
	static char *buf;
	static size_t len;
	FILE *f;

	buf = NULL;
	len = 0;
	f = open_memstream(&buf, &len);
	if (f == NULL)
		abort();
	egw_rxtok_json(f);
	fclose(f);
	return buf;
}

/* A numeric field of a consumer's JSON object (the first after its name,
 * inside the object), -1 if absent. */
static inline long long
t_jc(const char *name, const char *key)
{
	char pat[128], kp[64], *j = t_json_text(), *p, *end, *q;
	long long v = -1;

	snprintf(pat, sizeof(pat), "{\"name\": \"%s\", \"region\"", name);
	snprintf(kp, sizeof(kp), "\"%s\": ", key);
	p = strstr(j, pat);
	if (p != NULL) {
		end = strstr(p, "}}");
		q = strstr(p, kp);
		if (q != NULL && (end == NULL || q < end))
			v = strtoll(q + strlen(kp), NULL, 10);
	}
	free(j);
	return v;
}

/* A top-level numeric field of the rxtokens JSON, -1 if absent. */
static inline long long
t_jtop(const char *key)
{
	char kp[64], *j = t_json_text(), *q;
	long long v = -1;

	snprintf(kp, sizeof(kp), "\"%s\": ", key);
	q = strstr(j, kp);
	if (q != NULL)
		v = strtoll(q + strlen(kp), NULL, 10);
	free(j);
	return v;
}

#endif /* EGW_RXTOK_TEST_H */
