/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the security policy database (lib/esp/spd.c).
 *
 * Rules and frames are tables: each frame is built from its layers
 * (optional 802.1Q tag, IPv4 or IPv6 with an extension-header chain, 8
 * bytes standing for the upper-layer header), optionally cut short or split
 * over two segments, and labelled with the action and SA the first matching
 * rule must give. Checked:
 *  - validation at add: every refused policy names its problem and leaves
 *    the list unchanged;
 *  - first match in list order with overlapping prefixes, protocol any vs
 *    specific, IPv4 and IPv6, IPv6 extension headers (RFC 8200 4.3-4.5:
 *    hop-by-hop, routing, destination options, fragment) before the
 *    upper-layer header, chains that cannot be read (match proto any only);
 *  - insertion at a position, deletion, ids never reused;
 *  - outbound lookup and inbound clear check: order of the kept packets,
 *    SA pointers, drops freed and counted, bypass counted, bursts above
 *    EGW_ESP_MAX_BURST;
 *  - SA references (an SA a policy protects with cannot be deleted);
 *  - hit counters, and that a rule reusing a slot starts from 0;
 *  - the EGW_ESP_MAX_POLICY limit;
 *  - the defaults (auto, bypass, discard), unreadable protocols that match
 *    only discard rules, frames whose version is not their ethertype's;
 *  - make-before-break rekey (egw_esp_sa_replace) and the flow cache across
 *    snapshot changes;
 *  - the IPv4 flow cache: many flows whose keys differ in one field each
 *    (source, destination, protocol) share its entries, each takes only
 *    its own key's result, lookups are answered from it, runs of one
 *    flow count every frame on the rule, and a policy change makes every
 *    entry stale.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include "check.h"
#include "egw_esp.h"
#include "esp_private.h"

#define NB_MBUF 2047
#define FRAME_MAX 512

/* SAs the policies protect with (RFC 4303: SPIs below 256 are reserved). */
#define SPI_T1 0x1001  /* outbound, transport */
#define SPI_T2 0x1002  /* outbound, transport */
#define SPI_TUN 0x2001 /* outbound, tunnel over IPv4: carries either inner family */
#define SPI_IN 0x3001  /* inbound, transport */
#define SPI_REF 0x4001 /* outbound, for the reference bookkeeping */

static struct rte_mempool *pool;
static struct egw_esp_ctx *ctx;

/* ---- policies ----------------------------------------------------------- */

/* A policy in words: prefixes "addr/len"; the source's family is the
 * policy's. */
struct pol {
	int dir;
	const char *src;
	const char *dst;
	int proto; /* -1 = any */
	int action;
	uint32_t spi;
};

static void
prefix_parse(const char *s, struct egw_esp_prefix *pf)
{
	char a[64];
	const char *slash = strchr(s, '/');
	size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);

	memset(pf, 0, sizeof(*pf));
	snprintf(a, sizeof(a), "%.*s", (int)len, s);
	if (inet_pton(AF_INET, a, pf->addr.a) == 1)
		pf->addr.family = AF_INET;
	else if (inet_pton(AF_INET6, a, pf->addr.a) == 1)
		pf->addr.family = AF_INET6;
	pf->len = (uint8_t)(slash != NULL ? atoi(slash + 1) : 0);
}

static struct egw_esp_policy
mkpol(const struct pol *d)
{
	struct egw_esp_policy p;

	memset(&p, 0, sizeof(p));
	p.dir = (enum egw_esp_dir)d->dir;
	prefix_parse(d->src, &p.src);
	prefix_parse(d->dst, &p.dst);
	p.family = p.src.addr.family;
	p.proto = (int16_t)d->proto;
	p.action = (enum egw_esp_action)d->action;
	p.spi = d->spi;
	return p;
}

static int
add(const struct pol *d, int pos)
{
	struct egw_esp_policy p = mkpol(d);
	char err[256];
	int rc;

	err[0] = '\0';
	rc = egw_esp_policy_add(&p, pos, err, sizeof(err));
	if (rc <= 0)
		printf("  add: %d %s\n", rc, err);
	return rc;
}

/* What egw_esp_policy_walk() reported. */
static struct {
	unsigned int n;
	struct egw_esp_policy p[EGW_ESP_MAX_POLICY];
	uint64_t hits[EGW_ESP_MAX_POLICY];
} wk;

static int
walk_cb(const struct egw_esp_policy *p, uint64_t hits, void *arg)
{
	RTE_SET_USED(arg);
	wk.p[wk.n] = *p;
	wk.hits[wk.n++] = hits;
	return 0;
}

static unsigned int
walk(enum egw_esp_dir dir)
{
	wk.n = 0;
	CHECK(egw_esp_policy_walk(dir, walk_cb, NULL) == 0, "walk");
	return wk.n;
}

/* Hits of rule id as the walk reports them (UINT64_MAX if absent). */
static uint64_t
hits_of(enum egw_esp_dir dir, uint32_t id)
{
	unsigned int i;

	walk(dir);
	for (i = 0; i < wk.n; i++)
		if (wk.p[i].id == id)
			return wk.hits[i];
	return UINT64_MAX;
}

static void
del_all(enum egw_esp_dir dir)
{
	unsigned int i, n = walk(dir);
	uint32_t ids[EGW_ESP_MAX_POLICY];

	for (i = 0; i < n; i++)
		ids[i] = wk.p[i].id;
	/* from the end: each delete rebuilds the rest */
	for (i = n; i > 0; i--)
		CHECK(egw_esp_policy_del(dir, ids[i - 1]) == 0, "delete %" PRIu32, ids[i - 1]);
	CHECK(walk(dir) == 0, "%s list empty", dir == EGW_ESP_DIR_OUT ? "outbound" : "inbound");
}

/* ---- frames ------------------------------------------------------------- */

enum ext {
	EXT_NONE,
	EXT_ALL,            /* hop-by-hop, dest. options, routing, fragment (offset 0) */
	EXT_FRAG_LATER,     /* fragment header, offset 1448: upper protocol from it */
	EXT_FRAG_LATER_DST, /* non-first fragment followed by dest. options: unknown */
	EXT_BROKEN,         /* hop-by-hop whose length runs past the packet: unknown */
	EXT_TOO_MANY,       /* nine destination-options headers: unknown */
};

/* A frame in words and what the lookup must say. */
struct frame {
	const char *label;
	int ver; /* 4, 6, or 0 for ARP */
	const char *src;
	const char *dst;
	uint8_t proto; /* upper-layer protocol */
	enum ext ext;
	bool vlan;     /* one 802.1Q tag */
	uint8_t cut;   /* keep only this many bytes of the IP packet (0 = all) */
	uint8_t split; /* two segments, the first this many bytes of frame (0 = one) */
	/* expected */
	int action;
	uint32_t spi; /* PROTECT: the SA */
};

/* Extension headers of kind ext ending with next header proto; returns the
 * length, first next-header in *nh. */
static unsigned int
ext_build(enum ext ext, uint8_t proto, uint8_t *b, uint8_t *nh)
{
	unsigned int len = 0, i;

	switch (ext) {
	case EXT_NONE: *nh = proto; return 0;
	case EXT_ALL:
		*nh = IPPROTO_HOPOPTS;
		/* hop-by-hop, 16 bytes: PadN */
		b[len] = IPPROTO_DSTOPTS;
		b[len + 1] = 1;
		b[len + 2] = 1;
		b[len + 3] = 12;
		len += 16;
		/* destination options, 8 bytes */
		b[len] = IPPROTO_ROUTING;
		b[len + 1] = 0;
		b[len + 2] = 1;
		b[len + 3] = 4;
		len += 8;
		/* routing type 0 style, 24 bytes, segments left 0 */
		b[len] = IPPROTO_FRAGMENT;
		b[len + 1] = 2;
		len += 24;
		/* fragment, offset 0, more fragments */
		b[len] = proto;
		b[len + 3] = 1;
		len += 8;
		return len;
	case EXT_FRAG_LATER:
		*nh = IPPROTO_FRAGMENT;
		b[0] = proto;
		b[2] = (1448 >> 8) & 0xff; /* offset 181 units of 8, M clear */
		b[3] = 1448 & 0xf8;
		return 8;
	case EXT_FRAG_LATER_DST:
		*nh = IPPROTO_FRAGMENT;
		b[0] = IPPROTO_DSTOPTS;
		b[2] = (1448 >> 8) & 0xff;
		b[3] = 1448 & 0xf8;
		b[8] = proto;
		return 16;
	case EXT_BROKEN:
		*nh = IPPROTO_HOPOPTS;
		b[0] = proto;
		b[1] = 4; /* 40 bytes, but the packet has 8 + 8 */
		return 8;
	case EXT_TOO_MANY:
		*nh = IPPROTO_DSTOPTS;
		for (i = 0; i < 9; i++) {
			b[len] = i == 8 ? proto : IPPROTO_DSTOPTS;
			b[len + 2] = 1;
			b[len + 3] = 4;
			len += 8;
		}
		return len;
	}
	return 0;
}

static struct rte_mbuf *
build(const struct frame *f)
{
	static const uint8_t mac_dst[6] = {0x02, 0, 0x5e, 0x10, 0, 1};
	static const uint8_t mac_src[6] = {0x02, 0, 0x5e, 0x10, 0, 2};
	uint8_t b[FRAME_MAX];
	unsigned int l2, len, ip_len, ext_len;
	struct rte_mbuf *m, *m2;
	char *p;

	memset(b, 0, sizeof(b));
	memcpy(b, mac_dst, 6);
	memcpy(b + 6, mac_src, 6);
	l2 = 12;
	if (f->vlan) {
		b[l2] = 0x81;
		b[l2 + 3] = 7; /* VLAN 7 */
		l2 += 4;
	}
	l2 += 2;
	/* ver 46 / 64: the first digit's ethertype over the second's header */
	if ((f->ver % 10) == 4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(b + l2);

		b[l2 - 2] = 0x08;
		ip_len = sizeof(*ip) + 8;
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16(ip_len);
		ip->time_to_live = 64;
		ip->next_proto_id = f->proto;
		inet_pton(AF_INET, f->src, &ip->src_addr);
		inet_pton(AF_INET, f->dst, &ip->dst_addr);
	} else if ((f->ver % 10) == 6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(b + l2);

		b[l2 - 2] = 0x86;
		b[l2 - 1] = 0xdd;
		ext_len = ext_build(f->ext, f->proto, b + l2 + sizeof(*ip), &ip->proto);
		ip_len = sizeof(*ip) + ext_len + 8;
		ip->vtc_flow = rte_cpu_to_be_32(0x60000000);
		ip->payload_len = rte_cpu_to_be_16(ip_len - sizeof(*ip));
		ip->hop_limits = 64;
		inet_pton(AF_INET6, f->src, ip->src_addr);
		inet_pton(AF_INET6, f->dst, ip->dst_addr);
	} else {
		b[l2 - 2] = 0x08; /* ARP request */
		b[l2 - 1] = 0x06;
		b[l2 + 1] = 1;
		b[l2 + 2] = 0x08;
		b[l2 + 4] = 6;
		b[l2 + 5] = 4;
		ip_len = 28;
	}
	if (f->cut != 0)
		ip_len = f->cut;
	len = l2 + ip_len;

	if (f->ver == 46) {
		b[l2 - 2] = 0x08;
		b[l2 - 1] = 0x00;
	} else if (f->ver == 64) {
		b[l2 - 2] = 0x86;
		b[l2 - 1] = 0xdd;
	}
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return NULL;
	m->l2_len = l2;
	if (f->split == 0 || f->split >= len) {
		p = rte_pktmbuf_append(m, len);
		memcpy(p, b, len);
		return m;
	}
	m2 = rte_pktmbuf_alloc(pool);
	if (m2 == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(rte_pktmbuf_append(m, f->split), b, f->split);
	memcpy(rte_pktmbuf_append(m2, len - f->split), b + f->split, len - f->split);
	if (rte_pktmbuf_chain(m, m2) != 0) {
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(m2);
		return NULL;
	}
	return m;
}

/* The drop reason of a lookup action that drops (inbound PROTECT: in clear). */
static enum egw_esp_drop
drop_of(int a)
{
	switch (a) {
	case EGW_ESP_PROTECT: return EGW_ESP_DROP_IN_CLEAR;
	case EGW_ESP_DISCARD: return EGW_ESP_DROP_POLICY_DISCARD;
	case ESP_ACT_DEF_DISCARD: return EGW_ESP_DROP_POLICY_DEFAULT;
	case ESP_ACT_PROTO_UNKNOWN: return EGW_ESP_DROP_PROTO_UNKNOWN;
	default: return EGW_ESP_DROP_NOT_IP;
	}
}

static const char *
action_name(int a)
{
	switch (a) {
	case EGW_ESP_BYPASS: return "bypass";
	case EGW_ESP_DISCARD: return "discard";
	case EGW_ESP_PROTECT: return "protect";
	case ESP_ACT_DEF_DISCARD: return "default discard";
	case ESP_ACT_PROTO_UNKNOWN: return "protocol unknown";
	case ESP_ACT_NOT_IP: return "not IP";
	default: return "?";
	}
}

/* ---- set-up ------------------------------------------------------------- */

static int
sa_add(uint32_t spi, enum egw_esp_dir dir, enum egw_esp_mode mode)
{
	struct egw_esp_sa_conf c;
	char err[256];
	int rc;

	memset(&c, 0, sizeof(c));
	c.spi = spi;
	c.dir = dir;
	c.mode = mode;
	c.aead = EGW_ESP_AES128_GCM;
	c.key_len = (uint8_t)egw_esp_aead_key_len(c.aead);
	/* one key per SA: a key is never shared (lib/esp refuses it) */
	memset(c.key, 0x5a, c.key_len);
	memcpy(c.key, &spi, sizeof(spi));
	if (mode == EGW_ESP_MODE_TUNNEL) {
		c.tun_src.family = AF_INET;
		c.tun_dst.family = AF_INET;
		inet_pton(AF_INET, "203.0.113.1", c.tun_src.a);
		inet_pton(AF_INET, "203.0.113.2", c.tun_dst.a);
	}
	err[0] = '\0';
	rc = egw_esp_sa_add(&c, err, sizeof(err));
	if (rc != 0)
		printf("  SA 0x%x: %d %s\n", spi, rc, err);
	return rc;
}

/* ---- validation ----------------------------------------------------------- */

struct bad_case {
	struct pol pol;
	int family; /* override of the policy family; -1 none */
	int pos;
	int rc;
	const char *err_has;
};

static const struct bad_case bad[] = {
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0}, 0, -1, -EINVAL, "family"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0}, 99, -1, -EINVAL, "family"},
	{{2, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "direction"},
	{{0, "10.0.0.0/33", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "source prefix length 33"},
	{{0, "10.0.0.0/8", "10.0.0.0/40", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "destination prefix length 40"},
	{{0, "2001:db8::/129", "::/0", -1, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "longer than 128"},
	{{0, "10.0.0.0/8", "2001:db8::/32", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "destination prefix is not IPv4"},
	{{0, "2001:db8::/32", "10.0.0.0/8", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "destination prefix is not IPv6"},
	{{0, "10.0.0.1/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "10.0.0.1/8 has bits set beyond"},
	{{0, "10.0.0.0/8", "192.168.1.0/23", -1, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "host bits"},
	{{0, "10.0.0.0/8", "0.0.0.1/0", -1, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "host bits"},
	{{0, "2001:db8::1/64", "::/0", -1, EGW_ESP_BYPASS, 0},
	 -1,
	 -1,
	 -EINVAL,
	 "2001:db8::1/64 has bits"},
	{{0, "2001:db8:0:1::/63", "::/0", -1, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "host bits"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", -2, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "protocol -2"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", 256, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "protocol 256"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", 255, EGW_ESP_BYPASS, 0}, -1, -1, -EINVAL, "reserved"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, 3, 0}, -1, -1, -EINVAL, "action 3"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_PROTECT, 0x9999},
	 -1,
	 -1,
	 -ENOENT,
	 "no outbound SA with SPI 0x00009999"},
	/* an inbound SA does not serve an outbound policy, nor the reverse */
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_PROTECT, SPI_IN},
	 -1,
	 -1,
	 -ENOENT,
	 "no outbound SA with SPI 0x00003001"},
	{{1, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_PROTECT, SPI_T1},
	 -1,
	 -1,
	 -ENOENT,
	 "no inbound SA with SPI 0x00001001"},
	{{0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0}, -1, -2, -EINVAL, "position -2"},
};

static void
test_validation(void)
{
	struct egw_esp_policy p;
	char err[256];
	unsigned int i;
	int rc;

	for (i = 0; i < RTE_DIM(bad); i++) {
		p = mkpol(&bad[i].pol);
		if (bad[i].family >= 0)
			p.family = (uint8_t)bad[i].family;
		err[0] = '\0';
		rc = egw_esp_policy_add(&p, bad[i].pos, err, sizeof(err));
		CHECK(rc == bad[i].rc, "bad case %u: rc %d, want %d (%s)", i, rc, bad[i].rc, err);
		CHECK(strstr(err, bad[i].err_has) != NULL, "bad case %u: message '%s' lacks '%s'",
		      i, err, bad[i].err_has);
	}
	CHECK(egw_esp_policy_add(NULL, -1, err, sizeof(err)) == -EINVAL, "NULL policy");
	/* nothing was added, no id was used, no SA gained a reference */
	CHECK(walk(EGW_ESP_DIR_OUT) == 0 && walk(EGW_ESP_DIR_IN) == 0, "lists still empty");
	CHECK(esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT)->policy_refs == 0, "no reference taken");
	/* a prefix left unset with length 0 means any address of the family */
	p = mkpol(&(struct pol){0, "10.0.0.0/8", "", -1, EGW_ESP_BYPASS, 0});
	rc = egw_esp_policy_add(&p, -1, err, sizeof(err));
	CHECK(rc == 1, "unset destination prefix: rc %d (%s)", rc, err);
	walk(EGW_ESP_DIR_OUT);
	CHECK(wk.n == 1 && wk.p[0].dst.addr.family == AF_INET && wk.p[0].dst.len == 0,
	      "stored as 0.0.0.0/0");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, 1) == 0, "delete it");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, 1) == -ENOENT, "deleted once only");
	CHECK(egw_esp_policy_del((enum egw_esp_dir)5, 1) == -ENOENT, "bad direction");
	CHECK(egw_esp_policy_walk((enum egw_esp_dir)5, walk_cb, NULL) == -EINVAL,
	      "walk: bad direction");
}

/* ---- lookup ------------------------------------------------------------- */

/* Outbound rules, first match wins. Several overlap on purpose. */
static const struct pol out_rules[] = {
	/* 0 */ {0, "10.1.2.0/24", "0.0.0.0/0", IPPROTO_TCP, EGW_ESP_DISCARD, 0},
	/* 1 */ {0, "10.1.0.0/16", "192.168.0.0/16", -1, EGW_ESP_PROTECT, SPI_T1},
	/* 2 */ {0, "10.0.0.0/8", "0.0.0.0/0", IPPROTO_UDP, EGW_ESP_PROTECT, SPI_TUN},
	/* 3 */ {0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0},
	/* 4 */ {0, "2001:db8:1::/48", "::/0", IPPROTO_TCP, EGW_ESP_PROTECT, SPI_T2},
	/* 5 */ {0, "2001:db8::/32", "2001:db8:ff::/48", -1, EGW_ESP_DISCARD, 0},
	/* 6 */ {0, "::/0", "::/0", IPPROTO_UDP, EGW_ESP_PROTECT, SPI_TUN},
	/* 7 */ {0, "2001:db8:2::/48", "::/0", -1, EGW_ESP_PROTECT, SPI_T2},
	/* 8 */ {0, "0.0.0.0/0", "198.51.100.128/25", -1, EGW_ESP_DISCARD, 0},
};

/* Rule of out_rules a frame must hit (-1: none). */
struct frame_hit {
	struct frame f;
	int rule;
};

static const struct frame_hit out_frames[] = {
	{{"v4 tcp: /24 discard before /16 protect", 4, "10.1.2.3", "192.168.1.1", IPPROTO_TCP,
	  EXT_NONE, false, 0, 0, EGW_ESP_DISCARD, 0},
	 0},
	{{"v4 udp: /16 protect", 4, "10.1.2.3", "192.168.1.1", IPPROTO_UDP, EXT_NONE, false, 0, 0,
	  EGW_ESP_PROTECT, SPI_T1},
	 1},
	{{"v4 udp elsewhere: tunnel", 4, "10.1.3.3", "8.8.8.8", IPPROTO_UDP, EXT_NONE, false, 0, 0,
	  EGW_ESP_PROTECT, SPI_TUN},
	 2},
	{{"v4 tcp elsewhere: /8 bypass", 4, "10.1.3.3", "8.8.8.8", IPPROTO_TCP, EXT_NONE, false, 0,
	  0, EGW_ESP_BYPASS, 0},
	 3},
	{{"v4 no match: the default discards", 4, "11.0.0.1", "8.8.8.8", IPPROTO_TCP, EXT_NONE,
	  false, 0, 0, ESP_ACT_DEF_DISCARD, 0},
	 -1},
	{{"v4 dst /25, upper half", 4, "11.0.0.1", "198.51.100.200", IPPROTO_ICMP, EXT_NONE, false,
	  0, 0, EGW_ESP_DISCARD, 0},
	 8},
	{{"v4 dst /25, lower half", 4, "11.0.0.1", "198.51.100.100", IPPROTO_ICMP, EXT_NONE, false,
	  0, 0, ESP_ACT_DEF_DISCARD, 0},
	 -1},
	{{"v4 behind a VLAN tag", 4, "10.1.2.3", "192.168.1.1", IPPROTO_UDP, EXT_NONE, true, 0, 0,
	  EGW_ESP_PROTECT, SPI_T1},
	 1},
	{{"v4 headers over two segments", 4, "10.1.2.3", "192.168.1.1", IPPROTO_UDP, EXT_NONE,
	  false, 0, 27, EGW_ESP_PROTECT, SPI_T1},
	 1},
	{{"v4 cut inside the header", 4, "10.1.2.3", "192.168.1.1", IPPROTO_UDP, EXT_NONE, false,
	  19, 0, ESP_ACT_NOT_IP, 0},
	 -1},
	{{"v6 tcp: /48 protect before discard", 6, "2001:db8:1::5", "2001:db8:ff::1", IPPROTO_TCP,
	  EXT_NONE, false, 0, 0, EGW_ESP_PROTECT, SPI_T2},
	 4},
	{{"v6 udp: discard before any-udp", 6, "2001:db8:1::5", "2001:db8:ff::1", IPPROTO_UDP,
	  EXT_NONE, false, 0, 0, EGW_ESP_DISCARD, 0},
	 5},
	{{"v6 udp elsewhere: tunnel (inner v6 over v4)", 6, "2001:db8:1::5", "2001:db8:fe::1",
	  IPPROTO_UDP, EXT_NONE, false, 0, 0, EGW_ESP_PROTECT, SPI_TUN},
	 6},
	{{"v6 tcp after hbh, dstopts, routing, frag", 6, "2001:db8:1::5", "2001:db8:fe::1",
	  IPPROTO_TCP, EXT_ALL, false, 0, 0, EGW_ESP_PROTECT, SPI_T2},
	 4},
	{{"v6 ext headers over two segments", 6, "2001:db8:1::5", "2001:db8:fe::1", IPPROTO_TCP,
	  EXT_ALL, false, 0, 75, EGW_ESP_PROTECT, SPI_T2},
	 4},
	{{"v6 udp after the chain", 6, "3000::1", "3000::2", IPPROTO_UDP, EXT_ALL, true, 0, 0,
	  EGW_ESP_PROTECT, SPI_TUN},
	 6},
	{{"v6 later fragment: proto from its header", 6, "3000::1", "3000::2", IPPROTO_UDP,
	  EXT_FRAG_LATER, false, 0, 0, EGW_ESP_PROTECT, SPI_TUN},
	 6},
	{{"v6 later fragment, then dstopts: unknown", 6, "3000::1", "3000::2", IPPROTO_UDP,
	  EXT_FRAG_LATER_DST, false, 0, 0, ESP_ACT_PROTO_UNKNOWN, 0},
	 -1},
	{{"v6 hbh past the end: unknown, not udp", 6, "3000::1", "3000::2", IPPROTO_UDP, EXT_BROKEN,
	  false, 0, 0, ESP_ACT_PROTO_UNKNOWN, 0},
	 -1},
	{{"v6 nine dstopts: unknown", 6, "3000::1", "3000::2", IPPROTO_UDP, EXT_TOO_MANY, false, 0,
	  0, ESP_ACT_PROTO_UNKNOWN, 0},
	 -1},
	{{"v6 unknown matches a proto-any protect rule, but only discard may take it", 6,
	  "2001:db8:2::1", "3000::2", IPPROTO_UDP, EXT_BROKEN, false, 0, 0, ESP_ACT_PROTO_UNKNOWN,
	  0},
	 7},
	{{"v6 chain cut short: unknown", 6, "2001:db8:1::5", "2001:db8:fe::1", IPPROTO_TCP, EXT_ALL,
	  false, 60, 0, ESP_ACT_PROTO_UNKNOWN, 0},
	 -1},
	{{"v6 cut inside the fixed header", 6, "2001:db8:1::5", "2001:db8:fe::1", IPPROTO_TCP,
	  EXT_NONE, false, 39, 0, ESP_ACT_NOT_IP, 0},
	 -1},
	{{"arp: not IP", 0, NULL, NULL, 0, EXT_NONE, false, 0, 0, ESP_ACT_NOT_IP, 0}, -1},
	{{"v4 ethertype, version 6 inside: not IP", 46, "2001:db8:1::5", "2001:db8:ff::1",
	  IPPROTO_TCP, EXT_NONE, false, 0, 0, ESP_ACT_NOT_IP, 0},
	 -1},
	{{"v6 ethertype, version 4 inside: not IP", 64, "10.1.2.3", "192.168.1.1", IPPROTO_UDP,
	  EXT_NONE, false, 0, 0, ESP_ACT_NOT_IP, 0},
	 -1},
};

/* ids of out_rules once added */
static int out_ids[RTE_DIM(out_rules)];

static struct egw_esp_sa *
sa_of(uint32_t spi, enum egw_esp_dir dir)
{
	return spi == 0 ? NULL : esp_sa_find(spi, dir);
}

static void
test_lookup(void)
{
	struct rte_mbuf *pkts[RTE_DIM(out_frames)];
	struct egw_esp_sa *sa[RTE_DIM(out_frames)];
	uint8_t act[RTE_DIM(out_frames)];
	uint64_t want_hits[RTE_DIM(out_rules)];
	unsigned int i;

	memset(want_hits, 0, sizeof(want_hits));
	for (i = 0; i < RTE_DIM(out_rules); i++) {
		out_ids[i] = add(&out_rules[i], -1);
		CHECK(out_ids[i] == (int)i + 2, "rule %u: id %d (1 was used and deleted)", i,
		      out_ids[i]);
	}
	CHECK(esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT)->policy_refs == 1, "SPI_T1 refs");
	CHECK(esp_sa_find(SPI_T2, EGW_ESP_DIR_OUT)->policy_refs == 2, "SPI_T2 refs");
	CHECK(esp_sa_find(SPI_TUN, EGW_ESP_DIR_OUT)->policy_refs == 2, "SPI_TUN refs");

	for (i = 0; i < RTE_DIM(out_frames); i++) {
		pkts[i] = build(&out_frames[i].f);
		CHECK(pkts[i] != NULL, "build %s", out_frames[i].f.label);
		if (pkts[i] == NULL)
			return;
	}
	/* twice, one call per frame and one burst: the same answers */
	for (i = 0; i < RTE_DIM(out_frames); i++)
		esp_spd_lookup(ctx, EGW_ESP_DIR_OUT, &pkts[i], 1, &act[i], &sa[i], NULL);
	for (i = 0; i < RTE_DIM(out_frames); i++) {
		const struct frame *f = &out_frames[i].f;

		CHECK(act[i] == f->action && sa[i] == sa_of(f->spi, EGW_ESP_DIR_OUT),
		      "single %s: %s, want %s", f->label, action_name(act[i]),
		      action_name(f->action));
	}
	memset(act, 0xff, sizeof(act));
	esp_spd_lookup(ctx, EGW_ESP_DIR_OUT, pkts, RTE_DIM(pkts), act, sa, NULL);
	for (i = 0; i < RTE_DIM(out_frames); i++) {
		const struct frame *f = &out_frames[i].f;

		CHECK(act[i] == f->action && sa[i] == sa_of(f->spi, EGW_ESP_DIR_OUT),
		      "burst %s: %s, want %s", f->label, action_name(act[i]),
		      action_name(f->action));
		if (out_frames[i].rule >= 0)
			want_hits[out_frames[i].rule] += 2;
	}
	for (i = 0; i < RTE_DIM(out_rules); i++)
		CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)out_ids[i]) == want_hits[i],
		      "rule %u: %" PRIu64 " hits, want %" PRIu64, i,
		      hits_of(EGW_ESP_DIR_OUT, (uint32_t)out_ids[i]), want_hits[i]);
	/* the inbound direction has no rules: everything bypasses */
	esp_spd_lookup(ctx, EGW_ESP_DIR_IN, pkts, RTE_DIM(pkts), act, sa, NULL);
	for (i = 0; i < RTE_DIM(out_frames); i++)
		CHECK(act[i] == EGW_ESP_BYPASS && sa[i] == NULL, "inbound, no rules: %s",
		      out_frames[i].f.label);
	rte_pktmbuf_free_bulk(pkts, RTE_DIM(pkts));
}

/* ---- outbound lookup: order, drops, bursts above EGW_ESP_MAX_BURST -------- */

static void
test_outbound_order(unsigned int n)
{
	struct rte_mbuf *pkts[3 * EGW_ESP_MAX_BURST], *orig[3 * EGW_ESP_MAX_BURST];
	struct egw_esp_sa *sa[3 * EGW_ESP_MAX_BURST];
	unsigned int i, j, np = 0, nb = 0, nd = 0, avail, r;
	uint32_t want[EGW_ESP_DROP_MAX] = {0};
	struct egw_esp_ctx_stats st0, st1;
	struct egw_esp_res res;
	uint16_t got;

	memset(&res, 0, sizeof(res));
	res.bypass = 5; /* added to, never reset */
	res.drop[EGW_ESP_DROP_POLICY_DISCARD] = 7;
	for (i = 0; i < n; i++) {
		/* a pattern unrelated to the chunk size */
		orig[i] = pkts[i] = build(&out_frames[(i * 7) % RTE_DIM(out_frames)].f);
		CHECK(pkts[i] != NULL, "build");
		if (pkts[i] == NULL)
			return;
	}
	avail = rte_mempool_avail_count(pool);
	egw_esp_ctx_stats(ctx, &st0);
	got = egw_esp_outbound_lookup(ctx, pkts, (uint16_t)n, sa, &res);
	egw_esp_ctx_stats(ctx, &st1);
	/* protected in order with their SA, then the rest in order */
	for (i = 0; i < n; i++) {
		const struct frame *f = &out_frames[(i * 7) % RTE_DIM(out_frames)].f;

		switch (f->action) {
		case EGW_ESP_PROTECT:
			CHECK(pkts[np] == orig[i] && sa[np] == sa_of(f->spi, EGW_ESP_DIR_OUT),
			      "n %u: protected %u is input %u (%s)", n, np, i, f->label);
			np++;
			break;
		case EGW_ESP_BYPASS: nb++; break;
		default:
			nd++;
			want[drop_of(f->action)]++;
			break;
		}
	}
	want[EGW_ESP_DROP_POLICY_DISCARD] += 7;
	CHECK(got == np, "n %u: %u to protect, want %u", n, got, np);
	for (i = 0, j = np; i < n; i++) {
		const struct frame *f = &out_frames[(i * 7) % RTE_DIM(out_frames)].f;

		if (f->action == EGW_ESP_BYPASS) {
			CHECK(j < n && pkts[j] == orig[i], "n %u: bypass %u is input %u (%s)", n, j,
			      i, f->label);
			j++;
		}
	}
	CHECK(res.bypass == 5 + nb, "n %u: res bypass %u, want %u", n, res.bypass, 5 + nb);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		CHECK(res.drop[r] == want[r], "n %u: res %s %u, want %u", n, egw_esp_drop_name(r),
		      res.drop[r], want[r]);
	CHECK(rte_mempool_avail_count(pool) == avail + nd, "n %u: the %u discarded were freed", n,
	      nd);
	CHECK(st1.bypass - st0.bypass == nb, "n %u: context bypass +%" PRIu64 ", want %u", n,
	      st1.bypass - st0.bypass, nb);
	want[EGW_ESP_DROP_POLICY_DISCARD] -= 7;
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		CHECK(st1.drop[r] - st0.drop[r] == want[r], "n %u: context %s", n,
		      egw_esp_drop_name(r));
	rte_pktmbuf_free_bulk(pkts, np + nb);
}

/* ---- inbound clear check ------------------------------------------------ */

static const struct pol in_rules[] = {
	{1, "172.16.5.0/24", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0},
	{1, "172.16.0.0/12", "0.0.0.0/0", -1, EGW_ESP_PROTECT, SPI_IN},
	{1, "198.51.100.0/24", "0.0.0.0/0", -1, EGW_ESP_DISCARD, 0},
	{1, "2001:db8:9::/48", "::/0", IPPROTO_TCP, EGW_ESP_PROTECT, SPI_IN},
};

static const struct frame in_frames[] = {
	{"protected source in clear", 4, "172.16.1.1", "10.0.0.1", IPPROTO_UDP, EXT_NONE, false, 0,
	 0, EGW_ESP_PROTECT, SPI_IN},
	{"bypass before protect", 4, "172.16.5.1", "10.0.0.1", IPPROTO_UDP, EXT_NONE, false, 0, 0,
	 EGW_ESP_BYPASS, 0},
	{"discard", 4, "198.51.100.7", "10.0.0.1", IPPROTO_UDP, EXT_NONE, false, 0, 0,
	 EGW_ESP_DISCARD, 0},
	{"no match: the default discards", 4, "8.8.8.8", "10.0.0.1", IPPROTO_UDP, EXT_NONE, false,
	 0, 0, ESP_ACT_DEF_DISCARD, 0},
	{"v6 tcp in clear", 6, "2001:db8:9::1", "2001:db8::1", IPPROTO_TCP, EXT_ALL, false, 0, 0,
	 EGW_ESP_PROTECT, SPI_IN},
	{"v6 udp: no match, the default discards", 6, "2001:db8:9::1", "2001:db8::1", IPPROTO_UDP,
	 EXT_NONE, false, 0, 0, ESP_ACT_DEF_DISCARD, 0},
	{"arp", 0, NULL, NULL, 0, EXT_NONE, false, 0, 0, ESP_ACT_NOT_IP, 0},
};

static void
test_inbound_clear(void)
{
	struct rte_mbuf *pkts[RTE_DIM(in_frames) * 2], *orig[RTE_DIM(in_frames) * 2];
	unsigned int i, j, n = RTE_DIM(pkts), nb = 0, nd = 0, nc = 0, avail, r;
	uint32_t want[EGW_ESP_DROP_MAX] = {0};
	uint64_t out_hits = hits_of(EGW_ESP_DIR_OUT, (uint32_t)out_ids[0]);
	struct egw_esp_res res;
	uint16_t got;

	for (i = 0; i < RTE_DIM(in_rules); i++)
		CHECK(add(&in_rules[i], -1) == (int)i + 1, "inbound ids start at 1");
	CHECK(esp_sa_find(SPI_IN, EGW_ESP_DIR_IN)->policy_refs == 2, "SPI_IN refs");
	CHECK(esp_spd_refs_sa(EGW_ESP_DIR_IN, SPI_IN), "refs SPI_IN");
	CHECK(!esp_spd_refs_sa(EGW_ESP_DIR_OUT, SPI_IN), "not outbound");
	for (i = 0; i < n; i++) {
		orig[i] = pkts[i] = build(&in_frames[i % RTE_DIM(in_frames)]);
		if (pkts[i] == NULL)
			return;
	}
	memset(&res, 0, sizeof(res));
	avail = rte_mempool_avail_count(pool);
	got = egw_esp_inbound_clear(ctx, pkts, (uint16_t)n, &res);
	for (i = 0, j = 0; i < n; i++) {
		const struct frame *f = &in_frames[i % RTE_DIM(in_frames)];

		switch (f->action) {
		case EGW_ESP_BYPASS:
			CHECK(j < got && pkts[j] == orig[i], "kept %u is input %u (%s)", j, i,
			      f->label);
			j++;
			nb++;
			break;
		case EGW_ESP_PROTECT:
			nc++;
			want[drop_of(f->action)]++;
			break;
		default:
			nd++;
			want[drop_of(f->action)]++;
			break;
		}
	}
	CHECK(got == nb, "inbound clear passes %u, want %u", got, nb);
	for (r = 0; r < EGW_ESP_DROP_MAX; r++)
		CHECK(res.drop[r] == want[r], "inbound clear %s %u, want %u", egw_esp_drop_name(r),
		      res.drop[r], want[r]);
	CHECK(res.bypass == nb, "bypass %u, want %u", res.bypass, nb);
	CHECK(rte_mempool_avail_count(pool) == avail + nc + nd, "drops freed");
	walk(EGW_ESP_DIR_IN);
	CHECK(wk.n == 4 && wk.hits[0] == 2 && wk.hits[1] == 2 && wk.hits[2] == 2 && wk.hits[3] == 2,
	      "inbound hits %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, wk.hits[0], wk.hits[1],
	      wk.hits[2], wk.hits[3]);
	rte_pktmbuf_free_bulk(pkts, got);
	/* the outbound direction saw none of it */
	CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)out_ids[0]) == out_hits,
	      "outbound hits unchanged");
}

/* ---- defaults, unreadable protocols, make-before-break rekey ------------------ */

/* Action of one frame in dir (and its SA, predecessor). */
static int
act_of(enum egw_esp_dir dir, const struct frame *f, struct egw_esp_sa **sa,
       struct egw_esp_sa **prev)
{
	struct rte_mbuf *m = build(f);
	struct egw_esp_sa *s = NULL, *p = NULL;
	uint8_t a = 0xff;

	if (m == NULL)
		return -1;
	esp_spd_lookup(ctx, dir, &m, 1, &a, &s, &p);
	rte_pktmbuf_free(m);
	if (sa != NULL)
		*sa = s;
	if (prev != NULL)
		*prev = p;
	return a;
}

static void
set_default(enum egw_esp_dir dir, enum egw_esp_policy_default def)
{
	char err[128] = "";

	CHECK(egw_esp_policy_default(dir, def, err, sizeof(err)) == 0, "default %d: %s", def, err);
	CHECK(egw_esp_policy_default_get(dir) == def, "default %d reads back", def);
}

/* RFC 4301 5: what matches no rule is discarded once the direction has a
 * rule (auto), always (discard) or never (bypass); a packet whose protocol
 * cannot be read matches only rules that discard, whatever the default. */
static void
test_defaults(void)
{
	static const struct frame v4 = {
		"v4 udp", 4, "10.9.0.1", "10.9.0.2", IPPROTO_UDP, EXT_NONE, false, 0, 0, 0, 0};
	static const struct frame tcp9 = {"v6 tcp behind nine dstopts",
					  6,
					  "2001:db8:7::1",
					  "2001:db8:8::1",
					  IPPROTO_TCP,
					  EXT_TOO_MANY,
					  false,
					  0,
					  0,
					  0,
					  0};
	static const struct frame tcp = {
		"v6 tcp", 6, "2001:db8:7::1", "2001:db8:8::1", IPPROTO_TCP, EXT_NONE, false, 0, 0,
		0,        0};
	const struct pol tcp_discard = {0, "::/0", "::/0", IPPROTO_TCP, EGW_ESP_DISCARD, 0};
	const struct pol tcp_protect = {0, "::/0", "::/0", IPPROTO_TCP, EGW_ESP_PROTECT, SPI_T2};
	const struct pol any_bypass = {0, "::/0", "::/0", -1, EGW_ESP_BYPASS, 0};
	const struct pol any_discard = {0, "::/0", "::/0", -1, EGW_ESP_DISCARD, 0};
	const struct pol v4_bypass = {0,           "10.9.0.0/16",  "0.0.0.0/0",
				      IPPROTO_TCP, EGW_ESP_BYPASS, 0};
	struct egw_esp_sa *sa;
	int id;

	del_all(EGW_ESP_DIR_OUT);
	del_all(EGW_ESP_DIR_IN);
	/* auto, no rule: everything passes, the stage may skip the lookup */
	CHECK(egw_esp_policy_default_get(EGW_ESP_DIR_OUT) == EGW_ESP_DEFAULT_AUTO, "auto");
	CHECK(!egw_esp_policy_active(EGW_ESP_DIR_OUT), "no rule, auto: not active");
	CHECK(act_of(EGW_ESP_DIR_OUT, &v4, NULL, NULL) == EGW_ESP_BYPASS, "auto, no rule: bypass");
	/* auto with one rule of the other protocol: the v4 UDP frame is discarded */
	id = add(&v4_bypass, -1);
	CHECK(egw_esp_policy_active(EGW_ESP_DIR_OUT), "a rule: active");
	CHECK(act_of(EGW_ESP_DIR_OUT, &v4, NULL, NULL) == ESP_ACT_DEF_DISCARD,
	      "auto, a rule, no match: discard");
	set_default(EGW_ESP_DIR_OUT, EGW_ESP_DEFAULT_BYPASS);
	CHECK(act_of(EGW_ESP_DIR_OUT, &v4, NULL, NULL) == EGW_ESP_BYPASS, "bypass default");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id) == 0, "del");
	CHECK(!egw_esp_policy_active(EGW_ESP_DIR_OUT), "bypass, no rule: not active");
	/* discard with no rule at all: active, everything dropped */
	set_default(EGW_ESP_DIR_OUT, EGW_ESP_DEFAULT_DISCARD);
	CHECK(egw_esp_policy_active(EGW_ESP_DIR_OUT), "discard, no rule: active");
	CHECK(act_of(EGW_ESP_DIR_OUT, &v4, NULL, NULL) == ESP_ACT_DEF_DISCARD,
	      "discard default, no rule");
	CHECK(act_of(EGW_ESP_DIR_IN, &v4, NULL, NULL) == EGW_ESP_BYPASS, "the other direction");
	set_default(EGW_ESP_DIR_OUT, EGW_ESP_DEFAULT_BYPASS);

	/* TCP behind nine destination-options headers evades neither a tcp
	 * discard rule nor a tcp protect rule: with the default bypass it
	 * would otherwise leave in clear */
	id = add(&tcp_discard, -1);
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp, NULL, NULL) == EGW_ESP_DISCARD, "tcp discarded");
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp9, NULL, NULL) == ESP_ACT_PROTO_UNKNOWN,
	      "tcp behind 9 dstopts does not leave under a tcp discard rule");
	egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id);
	id = add(&tcp_protect, -1);
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp, &sa, NULL) == EGW_ESP_PROTECT &&
		      sa == esp_sa_find(SPI_T2, EGW_ESP_DIR_OUT),
	      "tcp protected");
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp9, NULL, NULL) == ESP_ACT_PROTO_UNKNOWN,
	      "tcp behind 9 dstopts does not leave in clear under a tcp protect rule");
	/* a proto-any bypass rule does not take it either; a discard one does */
	CHECK(add(&any_bypass, -1) > 0, "any bypass");
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp9, NULL, NULL) == ESP_ACT_PROTO_UNKNOWN,
	      "unknown protocol: a proto-any bypass rule does not pass it");
	del_all(EGW_ESP_DIR_OUT);
	CHECK(add(&any_discard, -1) > 0, "any discard");
	CHECK(act_of(EGW_ESP_DIR_OUT, &tcp9, NULL, NULL) == EGW_ESP_DISCARD,
	      "unknown protocol: a proto-any discard rule takes it");
	del_all(EGW_ESP_DIR_OUT);
	set_default(EGW_ESP_DIR_OUT, EGW_ESP_DEFAULT_AUTO);
}

/* egw_esp_sa_replace(): one step from the old SA to the new; inbound both
 * are accepted until the old one is deleted. */
static void
test_replace(void)
{
	const struct pol out_p = {0, "10.20.0.0/16", "0.0.0.0/0", -1, EGW_ESP_PROTECT, 0x5001};
	const struct pol in_p = {1, "10.30.0.0/16", "0.0.0.0/0", -1, EGW_ESP_PROTECT, 0x6001};
	static const struct frame o = {
		"out", 4, "10.20.1.1", "8.8.8.8", IPPROTO_UDP, EXT_NONE, false, 0, 0, 0, 0};
	static const struct frame i = {
		"in", 4, "10.30.1.1", "8.8.8.8", IPPROTO_UDP, EXT_NONE, false, 0, 0, 0, 0};
	struct egw_esp_sa *sa, *prev, *a, *b, *c, *d, *e;
	char err[256] = "";
	int rc;

	if (sa_add(0x5001, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TRANSPORT) != 0 ||
	    sa_add(0x5002, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TRANSPORT) != 0 ||
	    sa_add(0x6001, EGW_ESP_DIR_IN, EGW_ESP_MODE_TRANSPORT) != 0 ||
	    sa_add(0x6002, EGW_ESP_DIR_IN, EGW_ESP_MODE_TRANSPORT) != 0 ||
	    sa_add(0x6003, EGW_ESP_DIR_IN, EGW_ESP_MODE_TRANSPORT) != 0) {
		CHECK(0, "replace SAs");
		return;
	}
	a = esp_sa_find(0x5001, EGW_ESP_DIR_OUT);
	b = esp_sa_find(0x5002, EGW_ESP_DIR_OUT);
	c = esp_sa_find(0x6001, EGW_ESP_DIR_IN);
	d = esp_sa_find(0x6002, EGW_ESP_DIR_IN);
	e = esp_sa_find(0x6003, EGW_ESP_DIR_IN);
	CHECK(add(&out_p, -1) > 0 && add(&out_p, -1) > 0 && add(&in_p, -1) > 0, "rules");
	rc = egw_esp_sa_replace(EGW_ESP_DIR_OUT, 0x5001, 0x5009, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "0x5009") != NULL, "unknown new SA: %s", err);
	rc = egw_esp_sa_replace(EGW_ESP_DIR_OUT, 0x5001, 0x5001, err, sizeof(err));
	CHECK(rc == -EINVAL, "an SA does not replace itself");
	rc = egw_esp_sa_replace(EGW_ESP_DIR_OUT, 0x5002, 0x5001, err, sizeof(err));
	CHECK(rc == -ENOENT, "no rule protects with 0x5002: %s", err);
	rc = egw_esp_sa_replace(EGW_ESP_DIR_OUT, 0x5001, 0x5002, err, sizeof(err));
	CHECK(rc == 2, "outbound: both rules move (%d %s)", rc, err);
	CHECK(act_of(EGW_ESP_DIR_OUT, &o, &sa, NULL) == EGW_ESP_PROTECT && sa == b,
	      "outbound through the new SA");
	CHECK(a->policy_refs == 0 && b->policy_refs == 2, "references moved: %u %u", a->policy_refs,
	      b->policy_refs);
	walk(EGW_ESP_DIR_OUT);
	CHECK(wk.n == 2 && wk.p[0].spi == 0x5002 && wk.p[1].spi == 0x5002, "rules name 0x5002");
	CHECK(egw_esp_sa_del(0x5001, EGW_ESP_DIR_OUT, err, sizeof(err)) == 0,
	      "old outbound SA deleted: %s", err);

	rc = egw_esp_sa_replace(EGW_ESP_DIR_IN, 0x6001, 0x6002, err, sizeof(err));
	CHECK(rc == 1, "inbound: the rule moves (%d %s)", rc, err);
	CHECK(act_of(EGW_ESP_DIR_IN, &i, &sa, &prev) == EGW_ESP_PROTECT && sa == d && prev == c,
	      "inbound: new SA, old one still accepted");
	/* the flow cache: a clear-path lookup (no predecessor asked) of the
	 * same flow does not lose the predecessor for the next lookup */
	{
		struct rte_mbuf *m = build(&i);
		struct egw_esp_res res;

		memset(&res, 0, sizeof(res));
		if (m != NULL && egw_esp_inbound_clear(ctx, &m, 1, &res) != 0)
			rte_pktmbuf_free(m);
		CHECK(res.drop[EGW_ESP_DROP_IN_CLEAR] == 1, "in clear: dropped");
		CHECK(act_of(EGW_ESP_DIR_IN, &i, &sa, &prev) == EGW_ESP_PROTECT && sa == d &&
			      prev == c,
		      "inbound after a cached clear lookup: the predecessor still accepted");
	}
	/* a second rekey before the old one went: only the last two stay */
	rc = egw_esp_sa_replace(EGW_ESP_DIR_IN, 0x6002, 0x6003, err, sizeof(err));
	CHECK(rc == 1, "inbound rekey again");
	CHECK(act_of(EGW_ESP_DIR_IN, &i, &sa, &prev) == EGW_ESP_PROTECT && sa == e && prev == d,
	      "inbound: the newest and its predecessor");
	CHECK(c->policy_refs == 0, "the oldest holds no reference (%u)", c->policy_refs);
	CHECK(egw_esp_sa_del(0x6001, EGW_ESP_DIR_IN, err, sizeof(err)) == 0, "oldest deleted");
	CHECK(egw_esp_sa_del(0x6002, EGW_ESP_DIR_IN, err, sizeof(err)) == 0,
	      "the predecessor deletes: %s", err);
	CHECK(act_of(EGW_ESP_DIR_IN, &i, &sa, &prev) == EGW_ESP_PROTECT && sa == e && prev == NULL,
	      "inbound: predecessor gone");
	CHECK(egw_esp_sa_del(0x6003, EGW_ESP_DIR_IN, err, sizeof(err)) == -EBUSY,
	      "the protecting SA does not delete");
	del_all(EGW_ESP_DIR_OUT);
	del_all(EGW_ESP_DIR_IN);
	CHECK(e->policy_refs == 0 && b->policy_refs == 0, "no reference left");
	egw_esp_sa_del(0x5002, EGW_ESP_DIR_OUT, err, sizeof(err));
	egw_esp_sa_del(0x6003, EGW_ESP_DIR_IN, err, sizeof(err));
}

/* ---- the IPv4 flow cache ---------------------------------------------------- */

/* Three groups of 256 IPv4 flows, each group varying one field of the key:
 * A the source, B the destination, C the protocol; rules give each group
 * two outcomes, so a flow that took a colliding flow's cache entry shows. */
enum { FC_SRC, FC_DST, FC_PROTO, FC_GROUPS, FC_FLOWS = 256 };

static char fc_addr[FC_GROUPS][FC_FLOWS][2][INET_ADDRSTRLEN];
static struct frame fc_frame[FC_GROUPS][FC_FLOWS];

static void
fc_frames(void)
{
	unsigned int g, x;

	for (g = 0; g < FC_GROUPS; g++) {
		for (x = 0; x < FC_FLOWS; x++) {
			struct frame *f = &fc_frame[g][x];
			char(*a)[INET_ADDRSTRLEN] = fc_addr[g][x];

			memset(f, 0, sizeof(*f));
			f->label = "flow cache";
			f->ver = 4;
			f->ext = EXT_NONE;
			f->proto = IPPROTO_UDP;
			switch (g) {
			case FC_SRC:
				snprintf(a[0], sizeof(a[0]), "10.%u.0.1", x);
				snprintf(a[1], sizeof(a[1]), "8.8.8.8");
				f->action = x < 128 ? EGW_ESP_PROTECT : EGW_ESP_BYPASS;
				f->spi = x < 128 ? SPI_T1 : 0;
				break;
			case FC_DST:
				snprintf(a[0], sizeof(a[0]), "172.16.1.1");
				snprintf(a[1], sizeof(a[1]), "198.%u.100.1", x);
				f->action = x < 128 ? EGW_ESP_PROTECT : EGW_ESP_DISCARD;
				f->spi = x < 128 ? SPI_T2 : 0;
				break;
			default:
				snprintf(a[0], sizeof(a[0]), "192.0.2.1");
				snprintf(a[1], sizeof(a[1]), "8.8.4.4");
				f->proto = (uint8_t)x;
				f->action = (x & 1) && x < 128 ? EGW_ESP_PROTECT : EGW_ESP_BYPASS;
				f->spi = (x & 1) && x < 128 ? SPI_T2 : 0;
				/* 255 (reserved) stands for a protocol that cannot
				 * be read: it matches only rules that discard */
				if (x == 255)
					f->action = ESP_ACT_PROTO_UNKNOWN;
				break;
			}
			f->src = a[0];
			f->dst = a[1];
		}
	}
}

/* Outbound lookups of n frames in bursts of EGW_ESP_MAX_BURST (the order
 * of fs): the frames whose action or SA is not what fs says, and in
 * *notip those that came back ESP_ACT_NOT_IP. */
static unsigned int
fc_pass(const struct frame *fs, unsigned int n, unsigned int *notip)
{
	struct rte_mbuf *m[EGW_ESP_MAX_BURST];
	struct egw_esp_sa *sa[EGW_ESP_MAX_BURST];
	uint8_t act[EGW_ESP_MAX_BURST];
	unsigned int done, k, i, bad = 0;

	*notip = 0;
	for (done = 0; done < n; done += k) {
		k = RTE_MIN(n - done, (unsigned int)EGW_ESP_MAX_BURST);
		for (i = 0; i < k; i++)
			if ((m[i] = build(&fs[done + i])) == NULL)
				return n;
		memset(act, 0xff, sizeof(act));
		esp_spd_lookup(ctx, EGW_ESP_DIR_OUT, m, (uint16_t)k, act, sa, NULL);
		for (i = 0; i < k; i++) {
			const struct frame *f = &fs[done + i];

			*notip += act[i] == ESP_ACT_NOT_IP;
			bad += act[i] != f->action || sa[i] != sa_of(f->spi, EGW_ESP_DIR_OUT);
		}
		rte_pktmbuf_free_bulk(m, k);
	}
	return bad;
}

/* The context's outbound IPv4 entries of group g's flows. */
static unsigned int
fc_entries(unsigned int g, bool mark)
{
	uint32_t a[2];
	unsigned int i, x, n = 0;

	for (i = 0; i < ESP_SPD_CACHE4_SIZE; i++) {
		struct esp_spd_cache4 *e = &ctx->spd_cache4[EGW_ESP_DIR_OUT][i];

		if (e->gen == 0)
			continue;
		for (x = 0; x < FC_FLOWS; x++) {
			const struct frame *f = &fc_frame[g][x];

			inet_pton(AF_INET, f->src, &a[0]);
			inet_pton(AF_INET, f->dst, &a[1]);
			if (memcmp(&e->addr, a, sizeof(a)) == 0 && e->proto == f->proto)
				break;
		}
		if (x == FC_FLOWS)
			continue;
		n++;
		if (mark)
			e->action = ESP_ACT_NOT_IP;
	}
	return n;
}

/* Every flow's result is its own: taken from the cache entry of its key and
 * of no other key that shares the entry, under the snapshot that filled it
 * and no later one. */
static void
test_flow_cache(void)
{
	static const char *const gname[FC_GROUPS] = {"source", "destination", "protocol"};
	struct pol r = {0, "10.0.0.0/9", "0.0.0.0/0", -1, EGW_ESP_PROTECT, SPI_T1};
	static struct frame all[FC_GROUPS * FC_FLOWS];
	unsigned int g, x, bad, notip, n;
	uint64_t h0[2];
	int fails = failures, ida[2];

	set_default(EGW_ESP_DIR_OUT, EGW_ESP_DEFAULT_AUTO);
	fc_frames();
	CHECK((ida[0] = add(&r, -1)) > 0, "A: protect");
	r = (struct pol){0, "10.0.0.0/8", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0};
	CHECK((ida[1] = add(&r, -1)) > 0, "A: bypass");
	r = (struct pol){0, "172.16.1.0/24", "198.0.0.0/9", -1, EGW_ESP_PROTECT, SPI_T2};
	CHECK(add(&r, -1) > 0, "B: protect");
	r = (struct pol){0, "172.16.1.0/24", "0.0.0.0/0", -1, EGW_ESP_DISCARD, 0};
	CHECK(add(&r, -1) > 0, "B: discard");
	for (x = 1; x < 128; x += 2) {
		r = (struct pol){0, "192.0.2.0/24", "0.0.0.0/0", (int)x, EGW_ESP_PROTECT, SPI_T2};
		CHECK(add(&r, -1) > 0, "C: protocol %u", x);
	}
	r = (struct pol){0, "192.0.2.0/24", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0};
	CHECK(add(&r, -1) > 0, "C: bypass");
	if (failures != fails)
		goto out;

	for (g = 0; g < FC_GROUPS; g++) {
		/* the first pass fills, the second finds flows that collided
		 * with others in entries they did not fill */
		bad = fc_pass(fc_frame[g], FC_FLOWS, &notip);
		CHECK(bad == 0, "%s: %u of %u flows took another's result, first pass", gname[g],
		      bad, FC_FLOWS);
		bad = fc_pass(fc_frame[g], FC_FLOWS, &notip);
		CHECK(bad == 0, "%s: %u of %u flows took another's result, second pass", gname[g],
		      bad, FC_FLOWS);
		/* the cache holds the flows, and lookups answer from it: a
		 * mark in the entries comes back for the flows that own one */
		n = fc_entries(g, true);
		CHECK(n >= FC_FLOWS / 4, "%s: %u entries of %u flows", gname[g], n, FC_FLOWS);
		fc_pass(fc_frame[g], FC_FLOWS, &notip);
		CHECK(notip >= FC_FLOWS / 8 && notip <= n, "%s: %u lookups answered by %u entries",
		      gname[g], notip, n);
		memset(ctx->spd_cache4[EGW_ESP_DIR_OUT], 0,
		       sizeof(ctx->spd_cache4[EGW_ESP_DIR_OUT]));
		bad = fc_pass(fc_frame[g], FC_FLOWS, &notip);
		CHECK(bad == 0 && notip == 0, "%s: after the cache is emptied", gname[g]);
	}
	/* runs of one flow (each source three times): right results, and
	 * every frame of a run counted on its rule */
	for (x = 0; x < RTE_DIM(all); x++)
		all[x] = fc_frame[FC_SRC][x / 3];
	h0[0] = hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[0]);
	h0[1] = hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[1]);
	for (n = 0; n < 2; n++) {
		bad = fc_pass(all, RTE_DIM(all), &notip);
		CHECK(bad == 0, "runs: %u of %zu flows wrong, pass %u", bad, RTE_DIM(all), n);
	}
	CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[0]) - h0[0] == 2 * 3 * 128 &&
		      hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[1]) - h0[1] == 2 * 3 * 128,
	      "runs: hits %" PRIu64 " and %" PRIu64 ", want %u each",
	      hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[0]) - h0[0],
	      hits_of(EGW_ESP_DIR_OUT, (uint32_t)ida[1]) - h0[1], 2 * 3 * 128);
	/* the groups interleaved, as a gateway's bursts mix subscribers */
	for (x = 0; x < FC_FLOWS; x++)
		for (g = 0; g < FC_GROUPS; g++)
			all[x * FC_GROUPS + g] = fc_frame[g][x];
	for (n = 0; n < 2; n++) {
		bad = fc_pass(all, RTE_DIM(all), &notip);
		CHECK(bad == 0, "interleaved: %u of %zu flows wrong, pass %u", bad, RTE_DIM(all),
		      n);
	}
	/* a policy change: no entry of the old snapshot answers */
	r = (struct pol){0, "0.0.0.0/0", "0.0.0.0/0", -1, EGW_ESP_DISCARD, 0};
	CHECK(add(&r, 0) > 0, "discard all, first");
	for (x = 0; x < RTE_DIM(all); x++) {
		all[x].action = EGW_ESP_DISCARD;
		all[x].spi = 0;
	}
	bad = fc_pass(all, RTE_DIM(all), &notip);
	CHECK(bad == 0, "after the policy change: %u of %zu flows kept the old result", bad,
	      RTE_DIM(all));
out:
	del_all(EGW_ESP_DIR_OUT);
}

/* ---- order changes: insertion, deletion, ids, hits ------------------------- */

static int
lookup_one(const struct frame *f, struct egw_esp_sa **sa)
{
	struct rte_mbuf *m = build(f);
	struct egw_esp_sa *s;
	uint8_t a;

	if (m == NULL)
		return -1;
	esp_spd_lookup(ctx, EGW_ESP_DIR_OUT, &m, 1, &a, &s, NULL);
	rte_pktmbuf_free(m);
	if (sa != NULL)
		*sa = s;
	return a;
}

static void
test_positions(void)
{
	static const struct frame f = {
		"v4 tcp",        4, "10.1.2.3", "192.168.1.1", IPPROTO_TCP, EXT_NONE, false, 0, 0,
		EGW_ESP_DISCARD, 0};
	static const struct pol host = {0,           "10.1.2.3/32",   "192.168.1.1/32",
					IPPROTO_TCP, EGW_ESP_PROTECT, SPI_T2};
	static const struct pol mid = {0, "10.1.2.0/24", "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0};
	unsigned int n0 = walk(EGW_ESP_DIR_OUT), i;
	struct egw_esp_sa *sa;
	uint32_t ids[16];
	int id_first, id_mid, id_last, id_re;

	CHECK(lookup_one(&f, NULL) == EGW_ESP_DISCARD, "rule 0 discards it");
	/* a more specific rule at the end changes nothing: first match wins */
	id_last = add(&host, 1000);
	CHECK(id_last == out_ids[RTE_DIM(out_ids) - 1] + 1, "next id %d", id_last);
	walk(EGW_ESP_DIR_OUT);
	CHECK(wk.n == n0 + 1 && wk.p[n0].id == (uint32_t)id_last, "past the end = last");
	CHECK(lookup_one(&f, NULL) == EGW_ESP_DISCARD, "a later rule does not win");
	/* at position 0 it wins */
	id_first = add(&host, 0);
	walk(EGW_ESP_DIR_OUT);
	CHECK(wk.n == n0 + 2 && wk.p[0].id == (uint32_t)id_first &&
		      wk.p[1].id == (uint32_t)out_ids[0],
	      "inserted first");
	CHECK(lookup_one(&f, &sa) == EGW_ESP_PROTECT && sa == esp_sa_find(SPI_T2, EGW_ESP_DIR_OUT),
	      "the first rule wins");
	CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)id_first) == 1, "new rule: one hit");
	/* in the middle, between rule 0 (now position 1) and rule 1 */
	id_mid = add(&mid, 2);
	walk(EGW_ESP_DIR_OUT);
	CHECK(wk.n == n0 + 3 && wk.p[1].id == (uint32_t)out_ids[0] &&
		      wk.p[2].id == (uint32_t)id_mid && wk.p[3].id == (uint32_t)out_ids[1],
	      "inserted at 2");
	CHECK(wk.p[2].action == EGW_ESP_BYPASS && wk.p[2].proto == -1 && wk.p[2].spi == 0 &&
		      wk.p[2].src.len == 24,
	      "walk gives the rule back");
	/* delete the first: rule 0 discards again; then rule 0 too: the
	 * inserted bypass rule is first to match */
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id_first) == 0, "delete first");
	CHECK(lookup_one(&f, NULL) == EGW_ESP_DISCARD, "rule 0 again");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)out_ids[0]) == 0, "delete rule 0");
	CHECK(lookup_one(&f, NULL) == EGW_ESP_BYPASS, "mid rule now");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id_mid) == 0, "delete mid");
	CHECK(lookup_one(&f, &sa) == EGW_ESP_PROTECT && sa == esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT),
	      "rule 1 now");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id_first) == -ENOENT, "gone");
	/* re-adding the same rule takes a new id; the slot it reuses
	 * starts from 0 hits although its old owner had some */
	id_re = add(&host, 0);
	CHECK(id_re == id_mid + 1, "id %d never reused (last %d)", id_re, id_mid);
	CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)id_re) == 0, "no inherited hits: %" PRIu64,
	      hits_of(EGW_ESP_DIR_OUT, (uint32_t)id_re));
	CHECK(lookup_one(&f, NULL) == EGW_ESP_PROTECT, "re-added first");
	CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)id_re) == 1, "then its own hit");
	walk(EGW_ESP_DIR_OUT);
	for (i = 0; i < wk.n && i < RTE_DIM(ids); i++)
		ids[i] = wk.p[i].id;
	for (i = 1; i < wk.n && i < RTE_DIM(ids); i++)
		CHECK(ids[i] != ids[0], "ids unique");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id_re) == 0, "delete re-added");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)id_last) == 0, "delete last");
	CHECK(walk(EGW_ESP_DIR_OUT) == n0 - 1, "back to the table less rule 0");
}

/* ---- SA references -------------------------------------------------------- */

static void
test_refs(void)
{
	static const struct pol a = {0, "10.9.0.0/16", "0.0.0.0/0", -1, EGW_ESP_PROTECT, SPI_REF};
	static const struct pol b = {0, "2001:db8:9::/48", "::/0", -1, EGW_ESP_PROTECT, SPI_REF};
	struct egw_esp_sa *sa;
	char err[256];
	int ia, ib;

	CHECK(sa_add(SPI_REF, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TRANSPORT) == 0, "SA for refs");
	sa = esp_sa_find(SPI_REF, EGW_ESP_DIR_OUT);
	CHECK(sa != NULL && sa->policy_refs == 0 && !esp_spd_refs_sa(EGW_ESP_DIR_OUT, SPI_REF),
	      "no refs");
	ia = add(&a, -1);
	ib = add(&b, 0);
	CHECK(ia > 0 && ib > 0, "two policies on it");
	CHECK(sa->policy_refs == 2 && esp_spd_refs_sa(EGW_ESP_DIR_OUT, SPI_REF), "two refs");
	err[0] = '\0';
	CHECK(egw_esp_sa_del(SPI_REF, EGW_ESP_DIR_OUT, err, sizeof(err)) == -EBUSY,
	      "SA delete refused while referenced");
	CHECK(strstr(err, "polic") != NULL, "message: %s", err);
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)ia) == 0, "delete one");
	CHECK(sa->policy_refs == 1 && esp_spd_refs_sa(EGW_ESP_DIR_OUT, SPI_REF), "one ref");
	CHECK(egw_esp_sa_del(SPI_REF, EGW_ESP_DIR_OUT, err, sizeof(err)) == -EBUSY,
	      "still refused");
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)ib) == 0, "delete the other");
	CHECK(sa->policy_refs == 0 && !esp_spd_refs_sa(EGW_ESP_DIR_OUT, SPI_REF), "no refs");
	CHECK(egw_esp_sa_del(SPI_REF, EGW_ESP_DIR_OUT, err, sizeof(err)) == 0,
	      "SA deleted once free: %s", err);
	CHECK(add(&a, -1) == -ENOENT, "its SPI is gone");
}

/* ---- the rule limit --------------------------------------------------------- */

static void
test_limit(void)
{
	struct pol p = {0, NULL, "0.0.0.0/0", -1, EGW_ESP_BYPASS, 0};
	struct egw_esp_policy pp;
	struct timespec t0, t1;
	char src[32], err[256];
	unsigned int i, ok = 0;
	struct egw_esp_sa *sa;
	int rc, first = 0;

	del_all(EGW_ESP_DIR_OUT);
	CHECK(esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT)->policy_refs == 0, "refs dropped");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < EGW_ESP_MAX_POLICY; i++) {
		snprintf(src, sizeof(src), "10.%u.%u.0/24", i >> 8, i & 0xff);
		p.src = src;
		/* every 4th protects, so lookups can tell the rules apart */
		p.action = i % 4 == 3 ? EGW_ESP_PROTECT : EGW_ESP_BYPASS;
		p.spi = i % 4 == 3 ? SPI_T1 : 0;
		rc = add(&p, -1);
		if (i == 0)
			first = rc;
		ok += rc == first + (int)i;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  %d rules added one by one in %.2f s\n", EGW_ESP_MAX_POLICY,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	CHECK(ok == EGW_ESP_MAX_POLICY, "%u of %d added with consecutive ids", ok,
	      EGW_ESP_MAX_POLICY);
	CHECK(esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT)->policy_refs == EGW_ESP_MAX_POLICY / 4,
	      "a ref per protect rule");
	p.src = "11.0.0.0/8";
	pp = mkpol(&p);
	err[0] = '\0';
	rc = egw_esp_policy_add(&pp, 0, err, sizeof(err));
	CHECK(rc == -ENOSPC && strstr(err, "full") != NULL, "rule %d refused: %d %s",
	      EGW_ESP_MAX_POLICY + 1, rc, err);
	/* the last rule is reachable and the last-but-one still wins over a
	 * catch-all appended nowhere */
	{
		const struct frame last = {
			"last", 4, "10.3.255.9",    "1.1.1.1", IPPROTO_TCP, EXT_NONE, false,
			0,      0, EGW_ESP_PROTECT, SPI_T1};
		const struct frame before = {
			"before", 4, "10.3.254.9",   "1.1.1.1", IPPROTO_TCP, EXT_NONE, false,
			0,        0, EGW_ESP_BYPASS, 0};

		CHECK(lookup_one(&last, &sa) == EGW_ESP_PROTECT &&
			      sa == esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT),
		      "rule %d matches", EGW_ESP_MAX_POLICY);
		CHECK(lookup_one(&before, NULL) == EGW_ESP_BYPASS, "rule %d matches",
		      EGW_ESP_MAX_POLICY - 1);
		CHECK(hits_of(EGW_ESP_DIR_OUT, (uint32_t)first + EGW_ESP_MAX_POLICY - 1) == 1,
		      "hit on the last rule");
	}
	/* one out, one in: room again, the new id continues */
	CHECK(egw_esp_policy_del(EGW_ESP_DIR_OUT, (uint32_t)first + 5) == 0, "delete one");
	rc = egw_esp_policy_add(&pp, 0, err, sizeof(err));
	CHECK(rc == first + EGW_ESP_MAX_POLICY, "room again: %d %s", rc, err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	del_all(EGW_ESP_DIR_OUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("  and deleted one by one in %.2f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	CHECK(esp_sa_find(SPI_T1, EGW_ESP_DIR_OUT)->policy_refs == 0, "refs back to 0");
}

int
main(int argc, char **argv)
{
	char dir[] = "/tmp/egw_test_spd.XXXXXX", path[64], err[256];
	struct rte_rcu_qsbr *qs;
	size_t sz;
	int rc;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		printf("EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("spd_pool", NB_MBUF, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	sz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);
	qs = rte_zmalloc("spd_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (pool == NULL || qs == NULL || rte_rcu_qsbr_init(qs, RTE_MAX_LCORE) != 0 ||
	    mkdtemp(dir) == NULL) {
		printf("set-up failed\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/state", dir);
	rc = egw_esp_init(qs);
	CHECK(rc == 0, "egw_esp_init: %d", rc);
	rc = egw_esp_state_file(path, true, err, sizeof(err));
	CHECK(rc == 0, "state file: %d %s", rc, err);
	ctx = egw_esp_ctx_create(0, pool);
	CHECK(ctx != NULL, "context");
	if (rc != 0 || ctx == NULL)
		goto out;
	CHECK(sa_add(SPI_T1, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TRANSPORT) == 0 &&
		      sa_add(SPI_T2, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TRANSPORT) == 0 &&
		      sa_add(SPI_TUN, EGW_ESP_DIR_OUT, EGW_ESP_MODE_TUNNEL) == 0 &&
		      sa_add(SPI_IN, EGW_ESP_DIR_IN, EGW_ESP_MODE_TRANSPORT) == 0,
	      "SAs");

	test_validation();
	test_lookup();
	test_outbound_order(RTE_DIM(out_frames));
	test_outbound_order(EGW_ESP_MAX_BURST);
	test_outbound_order(3 * EGW_ESP_MAX_BURST - 1);
	test_inbound_clear();
	test_positions();
	test_refs();
	test_limit();
	test_defaults();
	test_replace();
	test_flow_cache();
	del_all(EGW_ESP_DIR_IN);
	CHECK(esp_sa_find(SPI_IN, EGW_ESP_DIR_IN)->policy_refs == 0, "inbound refs back to 0");
	/* policies left behind are released by egw_esp_fini() */
	CHECK(add(&in_rules[1], -1) > 0, "one left for fini");
out:
	egw_esp_ctx_free(ctx);
	egw_esp_fini();
	CHECK(rte_mempool_avail_count(pool) == NB_MBUF, "no mbuf leaked: %u of %d",
	      rte_mempool_avail_count(pool), NB_MBUF);
	unlink(path);
	rmdir(dir);
	rte_mempool_free(pool);
	rte_free(qs);
	rte_eal_cleanup();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
