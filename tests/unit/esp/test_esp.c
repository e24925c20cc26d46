/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/esp end to end without a NIC: known-answer vectors through the
 * library's AEAD job code, outbound -> inbound round trips over the whole
 * mode/family/AEAD/ESN/NAT-T matrix, every inbound rejection with its
 * counter, sequence-number limits and the state file across a restart, and
 * IV uniqueness with two lcores sharing one SA.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "check.h"
#include "egw_esp.h"
#include "esp_crypto.h"
#include "esp_private.h"
#include "esp_vectors.h"

static struct rte_mempool *pool;

static uint64_t
t_get64(const void *p)
{
	rte_be64_t b;

	memcpy(&b, p, sizeof(b));
	return rte_be_to_cpu_64(b);
}
static struct rte_rcu_qsbr *qs;
static struct egw_esp_ctx *ctx;
static char state_dir[64];
static char err[256];

/* ---- frames ------------------------------------------------------------ */

struct t_pkt {
	uint8_t family; /* inner family */
	uint8_t proto;  /* IPPROTO_UDP / IPPROTO_TCP */
	uint16_t plen;  /* L4 payload bytes */
	uint8_t df;     /* IPv4 DF */
	uint8_t seed;
	uint8_t ext6; /* IPv6: add an 8-byte destination options header */
};

static const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0xa};
static const uint8_t mac_b[6] = {0x02, 0, 0, 0, 0, 0xb};

/* Build an Ethernet frame into buf; returns its length. */
static uint32_t
build(const struct t_pkt *t, uint8_t *buf)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)buf;
	uint8_t *ip = buf + sizeof(*eh), *l4;
	uint32_t l4len = (t->proto == IPPROTO_TCP ? 20 : 8) + t->plen, i, iplen;

	memcpy(&eh->dst_addr, mac_b, 6);
	memcpy(&eh->src_addr, mac_a, 6);
	if (t->family == AF_INET) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		memset(h, 0, sizeof(*h));
		h->version_ihl = 0x45;
		iplen = 20 + l4len;
		h->total_length = rte_cpu_to_be_16((uint16_t)iplen);
		h->packet_id = rte_cpu_to_be_16(0x1234);
		h->fragment_offset = t->df ? rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) : 0;
		h->time_to_live = 64;
		h->next_proto_id = t->proto;
		h->src_addr = rte_cpu_to_be_32(
			((uint32_t)10 << 24 | (uint32_t)0 << 16 | (uint32_t)0 << 8 | (uint32_t)1));
		h->dst_addr = rte_cpu_to_be_32(
			((uint32_t)10 << 24 | (uint32_t)0 << 16 | (uint32_t)1 << 8 | (uint32_t)2));
		h->hdr_checksum = rte_ipv4_cksum(h);
		l4 = ip + 20;
	} else {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;
		uint32_t ext = t->ext6 ? 8 : 0;

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		memset(h, 0, sizeof(*h));
		h->vtc_flow = rte_cpu_to_be_32(6u << 28);
		h->payload_len = rte_cpu_to_be_16((uint16_t)(ext + l4len));
		h->proto = ext ? IPPROTO_DSTOPTS : t->proto;
		h->hop_limits = 64;
		h->src_addr[0] = 0x20;
		h->src_addr[1] = 0x01;
		h->src_addr[15] = 1;
		h->dst_addr[0] = 0x20;
		h->dst_addr[1] = 0x01;
		h->dst_addr[15] = 2;
		iplen = 40 + ext + l4len;
		l4 = ip + 40;
		if (ext) {
			memset(l4, 0, 8);
			l4[0] = t->proto;
			l4[2] = 1; /* PadN */
			l4[3] = 4;
			l4 += 8;
		}
	}
	if (t->proto == IPPROTO_TCP) {
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)l4;

		memset(th, 0, sizeof(*th));
		th->src_port = rte_cpu_to_be_16(40000);
		th->dst_port = rte_cpu_to_be_16(80);
		th->sent_seq = rte_cpu_to_be_32(1000);
		th->data_off = 5 << 4;
		th->tcp_flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
		th->rx_win = rte_cpu_to_be_16(65535);
	} else {
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)l4;

		uh->src_port = rte_cpu_to_be_16(5000);
		uh->dst_port = rte_cpu_to_be_16(6000);
		uh->dgram_len = rte_cpu_to_be_16((uint16_t)l4len);
		uh->dgram_cksum = 0;
	}
	for (i = 0; i < t->plen; i++)
		l4[l4len - t->plen + i] = (uint8_t)(t->seed + i * 7 + (i >> 8));
	if (t->proto == IPPROTO_TCP || t->family == AF_INET6) {
		uint16_t *ck = t->proto == IPPROTO_TCP ? &((struct rte_tcp_hdr *)l4)->cksum
						       : &((struct rte_udp_hdr *)l4)->dgram_cksum;

		*ck = 0;
		if (t->family == AF_INET)
			*ck = rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)ip, l4);
		else if (!t->ext6)
			*ck = rte_ipv6_udptcp_cksum((struct rte_ipv6_hdr *)ip, l4);
	}
	return sizeof(*eh) + iplen;
}

static struct rte_mbuf *
mk(const uint8_t *frame, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (m == NULL)
		return NULL;
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
	m->l2_len = sizeof(struct rte_ether_hdr);
	return m;
}

static uint32_t
flat(const struct rte_mbuf *m, uint8_t *buf)
{
	const void *p = rte_pktmbuf_read(m, 0, m->pkt_len, buf);

	if (p != buf)
		memcpy(buf, p, m->pkt_len);
	return m->pkt_len;
}

/* ---- SAs and policies --------------------------------------------------- */

struct t_sa {
	enum egw_esp_aead aead;
	enum egw_esp_mode mode;
	uint8_t outer; /* tunnel outer family */
	bool esn;
	bool natt;
	uint64_t seq;
	uint32_t window;
};

/* Each SA pair gets a key of its own: the state file rightly continues an
 * old key's numbers, and the tests want to see fresh SAs start at 1. */
static unsigned int key_gen;

static void
key_for(enum egw_esp_aead a, uint8_t *key)
{
	unsigned int i;

	for (i = 0; i < EGW_ESP_KEY_MAX; i++)
		key[i] = (uint8_t)(0x40 + i * 3 + a);
	key[0] ^= (uint8_t)key_gen;
	key[1] ^= (uint8_t)(key_gen >> 8);
}

static void
addr(struct egw_esp_addr *x, uint8_t family, uint8_t last)
{
	memset(x, 0, sizeof(*x));
	x->family = family;
	if (family == AF_INET) {
		x->a[0] = 192;
		x->a[1] = 0;
		x->a[2] = 2;
		x->a[3] = last;
	} else {
		x->a[0] = 0x20;
		x->a[1] = 0x01;
		x->a[2] = 0x0d;
		x->a[3] = 0xb8;
		x->a[15] = last;
	}
}

/* Outbound and inbound SA with one SPI and key (a loopback pair), each
 * with a catch-all PROTECT policy for both families. */
static int
sa_pair(uint32_t spi, const struct t_sa *t)
{
	struct egw_esp_sa_conf c;
	struct egw_esp_policy p;
	int d, f, rc;

	key_gen++;
	for (d = 0; d < 2; d++) {
		memset(&c, 0, sizeof(c));
		c.spi = spi;
		c.dir = d;
		c.mode = t->mode;
		c.aead = t->aead;
		key_for(t->aead, c.key);
		c.key_len = (uint8_t)egw_esp_aead_key_len(t->aead);
		c.esn = t->esn;
		c.natt = t->natt;
		c.seq_start = d == EGW_ESP_DIR_OUT ? t->seq : (t->seq > 1 ? t->seq - 1 : 0);
		c.window = t->window;
		if (t->mode == EGW_ESP_MODE_TUNNEL) {
			addr(&c.tun_src, t->outer, 1);
			addr(&c.tun_dst, t->outer, 2);
		}
		rc = egw_esp_sa_add(&c, err, sizeof(err));
		if (rc < 0) {
			printf("sa add: %s\n", err);
			return rc;
		}
		for (f = 0; f < 2; f++) {
			memset(&p, 0, sizeof(p));
			p.dir = d;
			p.family = f ? AF_INET6 : AF_INET;
			p.src.addr.family = p.family;
			p.dst.addr.family = p.family;
			p.proto = -1;
			p.action = EGW_ESP_PROTECT;
			p.spi = spi;
			rc = egw_esp_policy_add(&p, -1, err, sizeof(err));
			if (rc < 0) {
				printf("policy add: %s\n", err);
				return rc;
			}
		}
	}
	return 0;
}

static int
del_policy(const struct egw_esp_policy *p, uint64_t hits, void *arg)
{
	uint32_t *ids = arg;

	(void)hits;
	ids[++ids[0]] = p->id;
	return 0;
}

struct walk_arg {
	int dir;
	uint32_t spis[EGW_ESP_MAX_SA];
	unsigned int n;
};

static int
collect(const struct egw_esp_sa_info *info, void *arg)
{
	struct walk_arg *wa = arg;

	if ((int)info->conf.dir == wa->dir)
		wa->spis[wa->n++] = info->conf.spi;
	return 0;
}

/* Delete every policy, then every SA. */
static void
clear_all(void)
{
	static uint32_t ids[EGW_ESP_MAX_POLICY + 1];
	static struct walk_arg wa;
	unsigned int i;
	int d;

	for (d = 0; d < 2; d++) {
		ids[0] = 0;
		egw_esp_policy_walk(d, del_policy, ids);
		for (i = 1; i <= ids[0]; i++)
			egw_esp_policy_del(d, ids[i]);
	}
	for (d = 0; d < 2; d++) {
		wa.dir = d;
		wa.n = 0;
		egw_esp_sa_walk(collect, &wa);
		for (i = 0; i < wa.n; i++)
			egw_esp_sa_del(wa.spis[i], d, err, sizeof(err));
	}
}

/* Outbound: lookup + burst. Returns the number of ESP frames put in out[]
 * (at most cap; any beyond are freed and fail a check). */
static uint16_t
encrypt(struct rte_mbuf **in, uint16_t n, struct rte_mbuf **out, uint16_t cap,
	struct egw_esp_res *res)
{
	static struct rte_mbuf *tmp[EGW_ESP_MAX_BURST * EGW_ESP_MAX_SEGS];
	struct egw_esp_sa *sa[EGW_ESP_MAX_BURST];
	uint16_t np, done = 0, total = 0;

	np = egw_esp_outbound_lookup(ctx, in, n, sa, res);
	CHECK(np == n, "all %u packets matched a protect policy (%u)", n, np);
	if (np != n)
		rte_pktmbuf_free_bulk(&in[np], n - np);
	while (done < np) {
		uint16_t c =
			egw_esp_outbound_burst(ctx, &sa[done], &in[done], np - done, &tmp[total],
					       (uint16_t)(RTE_DIM(tmp) - total), res);

		total += res->n_out;
		done += c;
		if (c == 0)
			break;
	}
	CHECK(total <= cap, "%u ESP frames fit the %u expected", total, cap);
	if (total > cap) {
		rte_pktmbuf_free_bulk(&tmp[cap], total - cap);
		total = cap;
	}
	memcpy(out, tmp, sizeof(tmp[0]) * total);
	return total;
}

/* ---- known-answer vectors ---------------------------------------------- */

/* A bare SA holding a key schedule, for the AEAD job code. */
static struct egw_esp_sa *
kat_sa(enum egw_esp_aead aead, const uint8_t *key, unsigned int key_len)
{
	struct egw_esp_sa *sa = rte_zmalloc(NULL, sizeof(*sa), 64);
	IMB_MGR *m = alloc_mb_mgr(0);

	init_mb_mgr_auto(m, NULL);
	sa->aead = (uint8_t)aead;
	sa->key_len = (uint8_t)key_len;
	if (aead == EGW_ESP_AES128_GCM)
		IMB_AES128_GCM_PRE(m, key, &sa->key.gcm);
	else if (aead == EGW_ESP_AES256_GCM)
		IMB_AES256_GCM_PRE(m, key, &sa->key.gcm);
	else
		memcpy(sa->key.chacha, key, 32);
	free_mb_mgr(m);
	return sa;
}

/* Run one AEAD job of the library in place; the tag goes to tag. */
static bool
kat_job(struct egw_esp_sa *sa, bool enc, uint8_t *buf, uint32_t len, const uint8_t *nonce,
	const uint8_t *aad, uint32_t aad_len, uint8_t *tag)
{
	uint8_t ok[EGW_ESP_MAX_BURST];
	IMB_JOB *jobs[1];

	esp_jobs_get(ctx, 1, jobs);
	esp_job_aead(jobs[0], sa, enc, buf, len, nonce, aad, aad_len, tag);
	jobs[0]->user_data = (void *)0;
	esp_jobs_run(ctx, 1, jobs, ok);
	return ok[0] == 1;
}

static void
kat_aead(const struct esp_kat_aead *v)
{
	struct egw_esp_sa *sa = kat_sa(v->aead, v->key, v->key_len);
	uint8_t buf[128], tag[16];

	memcpy(buf, v->plain, v->plain_len);
	CHECK(kat_job(sa, true, buf, v->plain_len, v->nonce, v->aad, v->aad_len, tag),
	      "%s: encrypt job", v->name);
	CHECK(memcmp(buf, v->cipher, v->plain_len) == 0, "%s: ciphertext", v->name);
	CHECK(memcmp(tag, v->tag, 16) == 0, "%s: tag", v->name);
	CHECK(kat_job(sa, false, buf, v->plain_len, v->nonce, v->aad, v->aad_len, tag),
	      "%s: decrypt job", v->name);
	CHECK(memcmp(buf, v->plain, v->plain_len) == 0 && memcmp(tag, v->tag, 16) == 0,
	      "%s: decrypt gives the plaintext and the tag", v->name);
	rte_free(sa);
}

/* An ESP vector: the library's job code must make the packet's ciphertext
 * and ICV; then the packet, in a transport-mode IPv4 frame, must come out of
 * egw_esp_inbound_burst() as the payload with the vector's next header. */
static void
kat_esp(const struct esp_kat_esp *v)
{
	unsigned int klen = v->key_len - ESP_SALT_LEN;
	struct egw_esp_sa *sa = kat_sa(v->aead, v->key, klen);
	uint32_t clen = v->esp_len - 32, plen;
	uint8_t buf[160], tag[16], nonce[12], frame[256];
	struct egw_esp_sa_conf c;
	struct egw_esp_policy p;
	struct egw_esp_res res;
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)(frame + 14);
	struct rte_mbuf *m;
	uint16_t k;
	int id;

	memcpy(nonce, v->key + klen, 4);
	memcpy(nonce + 4, v->iv, 8);
	memcpy(buf, v->plain, clen);
	CHECK(clen == v->plain_len, "%s: vector lengths agree", v->name);
	CHECK(kat_job(sa, true, buf, clen, nonce, v->aad, v->aad_len, tag), "%s: job", v->name);
	CHECK(memcmp(buf, v->esp + 16, clen) == 0, "%s: ESP ciphertext", v->name);
	CHECK(memcmp(tag, v->esp + v->esp_len - 16, 16) == 0, "%s: ESP ICV", v->name);
	rte_free(sa);
	if (v->spi < 256)
		return; /* reserved SPI: no SA can have it */

	clear_all();
	memset(&c, 0, sizeof(c));
	c.spi = v->spi;
	c.dir = EGW_ESP_DIR_IN;
	c.mode = EGW_ESP_MODE_TRANSPORT;
	c.aead = v->aead;
	memcpy(c.key, v->key, v->key_len);
	c.key_len = v->key_len;
	c.esn = v->esn;
	c.seq_start = v->seq - 1; /* window top just below: ESN inference picks its high half */
	CHECK(egw_esp_sa_add(&c, err, sizeof(err)) == 0, "%s: inbound SA: %s", v->name, err);
	memset(&p, 0, sizeof(p));
	p.dir = EGW_ESP_DIR_IN;
	p.family = AF_INET;
	p.src.addr.family = p.dst.addr.family = AF_INET;
	p.proto = -1;
	p.action = EGW_ESP_PROTECT;
	p.spi = v->spi;
	id = egw_esp_policy_add(&p, -1, err, sizeof(err));
	CHECK(id > 0, "%s: inbound policy: %s", v->name, err);
	memset(frame, 0, sizeof(frame));
	frame[12] = 0x08;
	h->version_ihl = 0x45;
	h->time_to_live = 64;
	h->next_proto_id = IPPROTO_ESP;
	h->total_length = rte_cpu_to_be_16((uint16_t)(20 + v->esp_len));
	h->src_addr = rte_cpu_to_be_32(
		((uint32_t)192 << 24 | (uint32_t)0 << 16 | (uint32_t)2 << 8 | (uint32_t)1));
	h->dst_addr = rte_cpu_to_be_32(
		((uint32_t)192 << 24 | (uint32_t)0 << 16 | (uint32_t)2 << 8 | (uint32_t)2));
	h->hdr_checksum = rte_ipv4_cksum(h);
	memcpy(frame + 34, v->esp, v->esp_len);
	m = mk(frame, 34 + v->esp_len);
	memset(&res, 0, sizeof(res));
	k = egw_esp_inbound_burst(ctx, &m, 1, &res);
	plen = clen - 2 - v->plain[clen - 2];
	CHECK(k == 1, "%s: accepted by the inbound path", v->name);
	if (k == 1) {
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

		CHECK(m->pkt_len == 34 + plen && memcmp(f + 34, v->plain, plen) == 0,
		      "%s: payload restored", v->name);
		CHECK(f[14 + 9] == v->plain[clen - 1] &&
			      rte_be_to_cpu_16(((struct rte_ipv4_hdr *)(f + 14))->total_length) ==
				      20 + plen &&
			      rte_ipv4_cksum((struct rte_ipv4_hdr *)(f + 14)) ==
				      0xffff - 0xffff +
					      rte_ipv4_cksum((struct rte_ipv4_hdr *)(f + 14)),
		      "%s: IP header rebuilt with the next header", v->name);
		rte_pktmbuf_free(m);
	}
}

static void
test_kat(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(esp_kat_gcm_spec); i++)
		kat_aead(&esp_kat_gcm_spec[i]);
	kat_aead(&esp_kat_rfc8439);
	kat_esp(&esp_kat_rfc7634);
	for (i = 0; i < RTE_DIM(esp_kat_mcgrew); i++)
		kat_esp(&esp_kat_mcgrew[i]);
	clear_all();
}

/* ---- round trips -------------------------------------------------------- */

static void
round_trip_as(const struct t_sa *t, const struct t_pkt *p, const char *what, uint8_t proto)
{
	static uint8_t frame[70000], got[70000];
	struct rte_mbuf *in[1], *out[EGW_ESP_MAX_BURST];
	struct egw_esp_res res;
	uint32_t len = build(p, frame), glen;

	/* another upper protocol behind the same bytes (GRE, ipip...): ESP
	 * placement must not depend on what the payload is */
	if (proto != 0 && p->family == AF_INET) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)(frame + 14);

		h->next_proto_id = proto;
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else if (proto != 0) {
		((struct rte_ipv6_hdr *)(frame + 14))->proto = proto;
	}
	uint16_t n, k;

	memset(&res, 0, sizeof(res));
	clear_all();
	if (sa_pair(0x1000, t) < 0) {
		CHECK(0, "%s: SA set-up", what);
		return;
	}
	in[0] = mk(frame, len);
	n = encrypt(in, 1, out, EGW_ESP_MAX_BURST, &res);
	CHECK(n == 1, "%s: one ESP frame (got %u)", what, n);
	if (n != 1)
		return;
	{
		uint8_t *f = rte_pktmbuf_mtod(out[0], uint8_t *) + 14;
		uint32_t esp_off = t->mode == EGW_ESP_MODE_TUNNEL
					   ? (t->outer == AF_INET ? 20 : 40)
					   : (p->family == AF_INET ? 20 : 40 + (p->ext6 ? 8 : 0));
		uint8_t *esp = f + esp_off + (t->natt ? 8 : 0);
		uint64_t seq = t->seq ? t->seq : 1;

		CHECK(esp_get32(esp) == 0x1000, "%s: SPI at the IP header end", what);
		CHECK(esp_get32((esp + 4)) == (uint32_t)seq, "%s: sequence", what);
		CHECK(t_get64(esp + 8) == seq, "%s: IV is the sequence", what);
		/* no clear inner byte right after the IV */
		CHECK(memcmp(esp + 16, frame + 14 + (t->mode == EGW_ESP_MODE_TUNNEL ? 0 : esp_off),
			     8) != 0,
		      "%s: encrypted from the first byte after the IV", what);
		if (t->natt)
			CHECK(rte_be_to_cpu_16(((struct rte_udp_hdr *)(f + esp_off))->dst_port) ==
				      4500,
			      "%s: NAT-T port", what);
	}
	k = egw_esp_inbound_burst(ctx, out, 1, &res);
	CHECK(k == 1, "%s: decrypted", what);
	if (k != 1) {
		unsigned int r;

		for (r = 0; r < EGW_ESP_DROP_MAX; r++)
			if (res.drop[r])
				printf("  drop %s %u\n", egw_esp_drop_name(r), res.drop[r]);
		return;
	}
	glen = flat(out[0], got);
	CHECK(glen == len && memcmp(got, frame, len) == 0, "%s: byte-exact (%u vs %u)", what, glen,
	      len);
	rte_pktmbuf_free(out[0]);
}

static void
round_trip(const struct t_sa *t, const struct t_pkt *p, const char *what)
{
	round_trip_as(t, p, what, 0);
}

/* Transport mode over payloads that are tunnels themselves: ESP goes right
 * after the outer IP header, never inside the inner one. */
static void
test_transport_tunnels(void)
{
	static const struct {
		uint8_t family, proto;
		const char *name;
	} cases[] = {
		{AF_INET, IPPROTO_GRE, "transport v4, GRE payload"},
		{AF_INET, IPPROTO_IPIP, "transport v4, ipip payload"},
		{AF_INET6, IPPROTO_GRE, "transport v6, GRE payload"},
		{AF_INET6, IPPROTO_IPV6, "transport v6, ip6tnl payload"},
	};
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TRANSPORT};
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		struct t_pkt p = {.family = cases[i].family, .proto = IPPROTO_UDP, .plen = 300};

		round_trip_as(&t, &p, cases[i].name, cases[i].proto);
	}
}

static void
test_matrix(void)
{
	static const enum egw_esp_aead aeads[] = {EGW_ESP_AES128_GCM, EGW_ESP_AES256_GCM,
						  EGW_ESP_CHACHA20_POLY1305};
	unsigned int a, mode, outer, inner, esn, natt, plen;
	char what[160];

	for (a = 0; a < 3; a++)
		for (mode = 0; mode < 2; mode++)
			for (outer = 0; outer < (mode ? 2u : 1u); outer++)
				for (inner = 0; inner < 2; inner++)
					for (esn = 0; esn < 2; esn++)
						for (natt = 0; natt < 2; natt++)
							for (plen = 0; plen < 4; plen++) {
								struct t_sa t = {
									.aead = aeads[a],
									.mode = mode,
									.outer = outer ? AF_INET6
										       : AF_INET,
									.esn = esn,
									.natt = natt,
									.seq = esn ? UINT64_C(
											     0x1fffffffe)
										   : 0,
								};
								struct t_pkt p = {
									.family = inner ? AF_INET6
											: AF_INET,
									.proto =
										plen & 1
											? IPPROTO_TCP
											: IPPROTO_UDP,
									.plen = (uint16_t)(plen * 333 +
											   1),
									.seed = (uint8_t)plen,
									.ext6 = inner && plen == 3,
								};
								snprintf(
									what, sizeof(what),
									"%s %s outer %s inner %s "
									"esn %u natt %u plen %u",
									egw_esp_aead_name(t.aead),
									mode ? "tunnel"
									     : "transport",
									mode ? (outer ? "v6" : "v4")
									     : "-",
									inner ? "v6" : "v4", esn,
									natt, p.plen);
								round_trip(&t, &p, what);
							}
}

/* ---- inbound rejections ------------------------------------------------- */

static unsigned int
in_one(struct rte_mbuf *m, enum egw_esp_drop expect, const char *what)
{
	struct egw_esp_res res;
	uint16_t k;

	memset(&res, 0, sizeof(res));
	k = egw_esp_inbound_burst(ctx, &m, 1, &res);
	if (expect == EGW_ESP_DROP_MAX) {
		CHECK(k == 1, "%s: accepted", what);
		if (k == 1)
			rte_pktmbuf_free(m);
		return k;
	}
	CHECK(k == 0 && res.drop[expect] == 1, "%s: dropped as %s", what,
	      egw_esp_drop_name(expect));
	return k;
}

static void
test_inbound_rejects(void)
{
	static uint8_t frame[2048], esp[2048];
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .window = 64};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 100};
	struct rte_mbuf *in[1], *out[80];
	struct egw_esp_res res;
	uint32_t len, elen, cut;
	uint16_t n;
	unsigned int i, before;
	char what[64];

	clear_all();
	if (sa_pair(0x2000, &t) < 0)
		return;
	len = build(&p, frame);
	/* 70 packets, sequence 1..70 */
	for (i = 0; i < 70; i++) {
		memset(&res, 0, sizeof(res));
		in[0] = mk(frame, len);
		n = encrypt(in, 1, &out[i], 1, &res);
		CHECK(n == 1, "encrypt %u", i);
	}
	elen = flat(out[69], esp);
	/* 70 arrives first; 6 is then exactly outside a 64-packet window
	 * (70 - 64 + 1 = 7 is the oldest inside), 7 is inside */
	in_one(out[69], EGW_ESP_DROP_MAX, "seq 70");
	in_one(out[5], EGW_ESP_DROP_OUTSIDE_WINDOW, "seq 6 outside a 64 window");
	in_one(out[6], EGW_ESP_DROP_MAX, "seq 7 at the window edge");
	in_one(mk(esp, elen), EGW_ESP_DROP_REPLAY, "seq 70 again");
	for (i = 7; i < 69; i++)
		rte_pktmbuf_free(out[i]);
	for (i = 0; i < 5; i++)
		rte_pktmbuf_free(out[i]);

	/* bad ICV: one bit of ciphertext, of the ICV, of the sequence (AAD) */
	{
		static const uint32_t offs[] = {14 + 20 + 16 + 3, 0, 14 + 20 + 7};

		for (i = 0; i < RTE_DIM(offs); i++) {
			memset(&res, 0, sizeof(res));
			in[0] = mk(frame, len);
			encrypt(in, 1, out, 1, &res);
			elen = flat(out[0], esp);
			rte_pktmbuf_free(out[0]);
			esp[offs[i] ? offs[i] : elen - 1] ^= 0x10;
			snprintf(what, sizeof(what), "bit flipped at %u",
				 offs[i] ? offs[i] : elen - 1);
			in_one(mk(esp, elen), EGW_ESP_DROP_BAD_ICV, what);
		}
	}
	/* unknown SPI */
	memset(&res, 0, sizeof(res));
	in[0] = mk(frame, len);
	encrypt(in, 1, out, 1, &res);
	elen = flat(out[0], esp);
	rte_pktmbuf_free(out[0]);
	esp[14 + 20 + 3] ^= 1;
	in_one(mk(esp, elen), EGW_ESP_DROP_UNKNOWN_SPI, "unknown SPI");
	esp[14 + 20 + 3] ^= 1;
	/* truncated at every length: IP length follows the cut (lying lengths
	 * are the other case) */
	before = rte_mempool_avail_count(pool);
	for (cut = 14; cut < elen; cut++) {
		struct rte_mbuf *m = mk(esp, cut);
		uint16_t il = (uint16_t)(cut >= 14 + 20 ? cut - 14 : 20);
		uint8_t *ip = rte_pktmbuf_mtod(m, uint8_t *) + 14;

		if (cut >= 14 + 20) {
			struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

			h->total_length = rte_cpu_to_be_16(il);
			h->hdr_checksum = 0;
			h->hdr_checksum = rte_ipv4_cksum(h);
		}
		memset(&res, 0, sizeof(res));
		n = egw_esp_inbound_burst(ctx, &m, 1, &res);
		CHECK(n == 0 && (res.drop[EGW_ESP_DROP_TRUNCATED] == 1 ||
				 res.drop[EGW_ESP_DROP_BAD_ICV] == 1),
		      "cut at %u dropped (truncated or bad ICV)", cut);
		if (n)
			rte_pktmbuf_free(m);
	}
	/* IP length lying above the frame */
	{
		struct rte_mbuf *m = mk(esp, elen);
		struct rte_ipv4_hdr *h = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);

		h->total_length = rte_cpu_to_be_16((uint16_t)(elen - 14 + 4));
		in_one(m, EGW_ESP_DROP_TRUNCATED, "IP length past the frame");
	}
	CHECK(rte_mempool_avail_count(pool) == before, "no mbuf leaked by rejections");
	/* the untouched packet still decrypts */
	in_one(mk(esp, elen), EGW_ESP_DROP_MAX, "intact after the rejections");
}

/* Bad padding and a dummy packet: encrypted by hand with the SA's key. */
static void
test_trailer(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	static uint8_t frame[512];
	uint8_t key[EGW_ESP_KEY_MAX];
	unsigned int variant;

	clear_all();
	if (sa_pair(0x3000, &t) < 0)
		return;
	key_for(EGW_ESP_AES128_GCM, key);
	for (variant = 0; variant < 4; variant++) {
		struct egw_esp_sa *sa = esp_sa_find(0x3000, EGW_ESP_DIR_IN);
		struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 9};
		uint8_t inner[256], *f = frame, iv[12], aad[8], ok[EGW_ESP_MAX_BURST];
		uint32_t ilen = build(&p, inner) - 14, plen, pad, i;
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)(f + 14);
		IMB_JOB *jobs[1];
		uint8_t *e;
		uint64_t seq = 100 + variant;

		memset(frame, 0, sizeof(frame));
		memcpy(f, mac_b, 6);
		memcpy(f + 6, mac_a, 6);
		f[12] = 0x08;
		e = f + 14 + 20;
		esp_put32(e, 0x3000);
		esp_put32(e + 4, (uint32_t)seq);
		esp_put64(e + 8, seq);
		memcpy(e + 16, inner + 14, ilen);
		plen = ilen;
		pad = (4 - ((plen + 2) & 3)) & 3;
		if (variant == 2)
			pad += 4;
		for (i = 0; i < pad; i++)
			e[16 + plen + i] = (uint8_t)(i + 1);
		if (variant == 0)
			e[16 + plen + pad - 1] ^= 0x80;                   /* wrong padding byte */
		e[16 + plen + pad] = (uint8_t)(variant == 1 ? 250 : pad); /* pad length too big */
		e[16 + plen + pad + 1] = variant == 3 ? IPPROTO_NONE : IPPROTO_IPIP;
		memcpy(iv, key + 16, 4);
		memcpy(iv + 4, e + 8, 8);
		memcpy(aad, e, 8);
		esp_jobs_get(ctx, 1, jobs);
		esp_job_aead(jobs[0], sa, true, e + 16, plen + pad + 2, iv, aad, 8,
			     e + 16 + plen + pad + 2);
		jobs[0]->user_data = 0;
		esp_jobs_run(ctx, 1, jobs, ok);
		h->version_ihl = 0x45;
		h->time_to_live = 64;
		h->next_proto_id = IPPROTO_ESP;
		h->total_length = rte_cpu_to_be_16((uint16_t)(20 + 16 + plen + pad + 2 + 16));
		memcpy(&h->src_addr, (uint8_t[]){192, 0, 2, 1}, 4);
		memcpy(&h->dst_addr, (uint8_t[]){192, 0, 2, 2}, 4);
		h->hdr_checksum = rte_ipv4_cksum(h);
		in_one(mk(frame, 14 + 20 + 16 + plen + pad + 2 + 16),
		       variant == 0   ? EGW_ESP_DROP_BAD_PADDING
		       : variant == 1 ? EGW_ESP_DROP_BAD_PADDING
		       : variant == 2 ? EGW_ESP_DROP_MAX
				      : EGW_ESP_DROP_DUMMY,
		       variant == 0   ? "wrong padding byte"
		       : variant == 1 ? "pad length past the payload"
		       : variant == 2 ? "4 more padding bytes, correct"
				      : "dummy packet (next header 59)");
	}
}

/* Bursts of 128 (the largest the app passes): one SPI, and two SPIs
 * interleaved (the SA lookup takes at most 64 keys a call). */
static void
test_big_burst(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .window = 256};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 64};
	static uint8_t frame[512];
	struct rte_mbuf *in[128], *out[128];
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	unsigned int i, round;
	uint16_t n, k;

	for (round = 0; round < 2; round++) {
		clear_all();
		if (sa_pair(0x7000, &t) < 0)
			return;
		if (round == 1) {
			struct egw_esp_policy pol;

			/* a second SA for 10.0.1.2/32 in both directions */
			t.aead = EGW_ESP_CHACHA20_POLY1305;
			key_gen++;
			for (i = 0; i < 2; i++) {
				struct egw_esp_sa_conf c;

				memset(&c, 0, sizeof(c));
				c.spi = 0x7001;
				c.dir = i;
				c.mode = EGW_ESP_MODE_TUNNEL;
				c.aead = t.aead;
				key_for(t.aead, c.key);
				c.key_len = (uint8_t)egw_esp_aead_key_len(t.aead);
				addr(&c.tun_src, AF_INET, 1);
				addr(&c.tun_dst, AF_INET, 2);
				CHECK(egw_esp_sa_add(&c, err, sizeof(err)) == 0, "SA 0x7001: %s",
				      err);
				memset(&pol, 0, sizeof(pol));
				pol.dir = i;
				pol.family = AF_INET;
				pol.src.addr.family = AF_INET;
				pol.dst.addr.family = AF_INET;
				pol.dst.addr.a[0] = 10;
				pol.dst.addr.a[2] = 1;
				pol.dst.addr.a[3] = 2;
				pol.dst.len = 32;
				pol.proto = IPPROTO_UDP;
				pol.action = EGW_ESP_PROTECT;
				pol.spi = 0x7001;
				CHECK(egw_esp_policy_add(&pol, 0, err, sizeof(err)) > 0,
				      "policy: %s", err);
			}
		}
		memset(&res, 0, sizeof(res));
		for (i = 0; i < 128; i++) {
			/* round 1: every other packet to 10.0.1.2 (SA 0x7001) */
			struct rte_ipv4_hdr *h;

			in[i] = mk(frame, len);
			h = rte_pktmbuf_mtod_offset(in[i], struct rte_ipv4_hdr *, 14);
			if (round == 1 && (i & 1) == 0) {
				h->dst_addr = rte_cpu_to_be_32((uint32_t)10 << 24 | 1 << 8 | 3);
				h->hdr_checksum = 0;
				h->hdr_checksum = rte_ipv4_cksum(h);
			}
		}
		n = encrypt(in, 128, out, 128, &res);
		CHECK(n == 128, "round %u: 128 ESP frames (%u)", round, n);
		k = egw_esp_inbound_burst(ctx, out, n, &res);
		CHECK(k == n, "round %u: a burst of %u decrypts whole (%u)", round, n, k);
		for (i = 0; i < EGW_ESP_DROP_MAX; i++)
			if (res.drop[i])
				printf("  drop %s %u\n", egw_esp_drop_name(i), res.drop[i]);
		rte_pktmbuf_free_bulk(out, k);
	}
}

/* Oversize packets with DF: dropped as too big, ICMP sent up to the rate
 * limit's burst, the rest counted as limited. */
static void
test_icmp_limit(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 1600, .df = 1};
	static uint8_t frame[2048];
	struct rte_mbuf *in[100], *out[1];
	struct egw_esp_ctx_stats before, after;
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	unsigned int i, sent = 0;

	clear_all();
	if (sa_pair(0x8000, &t) < 0)
		return;
	egw_esp_ctx_stats(ctx, &before);
	for (i = 0; i < 100; i++)
		in[i] = mk(frame, len);
	for (i = 0; i < 100; i += 25) {
		memset(&res, 0, sizeof(res));
		encrypt(&in[i], 25, out, 1, &res);
		CHECK(res.drop[EGW_ESP_DROP_TOO_BIG] == 25, "25 too big with DF");
		sent += res.n_icmp;
		rte_pktmbuf_free_bulk(res.icmp, res.n_icmp);
	}
	egw_esp_ctx_stats(ctx, &after);
	CHECK(sent >= 1 && sent <= 60, "ICMP too-big rate-limited: %u of 100 sent", sent);
	CHECK(after.icmp - before.icmp == sent &&
		      after.icmp_limited - before.icmp_limited == 100 - sent,
	      "sent and limited counted (%" PRIu64 " limited)",
	      after.icmp_limited - before.icmp_limited);
}

/* ---- sequence numbers ---------------------------------------------------- */

static void
test_seq_limits(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .seq = UINT32_MAX - 1};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 10};
	static uint8_t frame[512];
	struct rte_mbuf *in[4], *out[4];
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	unsigned int i;
	uint16_t n;

	clear_all();
	if (sa_pair(0x4000, &t) < 0)
		return;
	memset(&res, 0, sizeof(res));
	for (i = 0; i < 4; i++)
		in[i] = mk(frame, len);
	n = encrypt(in, 4, out, 4, &res);
	CHECK(n == 2 && res.drop[EGW_ESP_DROP_SEQ_OVERFLOW] == 2,
	      "no ESN: 2^32-2 and 2^32-1 go out, then the SA stops (%u out)", n);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(out[i]);

	/* ESN across the 2^32 wrap: the high word is in the AAD only */
	t.esn = true;
	t.seq = UINT64_C(0x2fffffffd);
	t.window = 128;
	clear_all();
	if (sa_pair(0x4001, &t) < 0)
		return;
	memset(&res, 0, sizeof(res));
	{
		struct rte_mbuf *o2[6], *i2[6];

		for (i = 0; i < 6; i++)
			i2[i] = mk(frame, len);
		n = encrypt(i2, 6, o2, 6, &res);
		CHECK(n == 6, "ESN: 6 out across the wrap");
		for (i = 0; i < n; i++) {
			uint8_t *e = rte_pktmbuf_mtod(o2[i], uint8_t *) + 14 + 20;

			CHECK(t_get64(e + 8) == UINT64_C(0x2fffffffd) + i,
			      "ESN: IV %u is the full 64-bit number", i);
		}
		/* out of order across the wrap: 4th, 1st, 6th, 2nd... */
		in_one(o2[3], EGW_ESP_DROP_MAX, "ESN 0x300000000 (after the wrap) first");
		in_one(o2[0], EGW_ESP_DROP_MAX, "ESN 0x2fffffffd (before the wrap) late");
		in_one(o2[5], EGW_ESP_DROP_MAX, "ESN 0x300000002");
		in_one(o2[1], EGW_ESP_DROP_MAX, "ESN 0x2fffffffe late");
		in_one(o2[2], EGW_ESP_DROP_MAX, "ESN 0x2ffffffff late");
		in_one(o2[4], EGW_ESP_DROP_MAX, "ESN 0x300000001 late");
	}
}

/* The state file: a restart with the same key continues above every number
 * that may have been used; a corrupt file is refused. */
static void
test_state_file(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES256_GCM, .mode = EGW_ESP_MODE_TRANSPORT};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 10};
	struct egw_esp_sa_info info;
	static uint8_t frame[512];
	char path[128], bad[160];
	struct rte_mbuf *in[1], *out[1];
	struct egw_esp_res res;
	uint64_t limit1;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/state2", state_dir);
	clear_all();
	rc = egw_esp_state_file(path, err, sizeof(err));
	CHECK(rc == 0, "fresh state file: %s", err);
	if (sa_pair(0x5000, &t) < 0)
		return;
	memset(&res, 0, sizeof(res));
	in[0] = mk(frame, build(&p, frame));
	encrypt(in, 1, out, 1, &res);
	rte_pktmbuf_free(out[0]);
	egw_esp_sa_info(0x5000, EGW_ESP_DIR_OUT, &info);
	CHECK(info.seq == 2 && info.seq_limit > 2, "seq 2 next, limit %" PRIu64, info.seq_limit);
	limit1 = info.seq_limit;
	/* "restart": everything goes, the file stays */
	clear_all();
	egw_esp_fini();
	rc = egw_esp_init(qs);
	CHECK(rc == 0, "re-init");
	rc = egw_esp_state_file(path, err, sizeof(err));
	CHECK(rc == 0, "state file reloads: %s", err);
	key_gen--; /* the same key as before the restart */
	if (sa_pair(0x5000, &t) < 0)
		return;
	egw_esp_sa_info(0x5000, EGW_ESP_DIR_OUT, &info);
	CHECK(info.seq == limit1 + 1,
	      "same key after restart starts at %" PRIu64 " (got %" PRIu64 ")", limit1 + 1,
	      info.seq);
	/* a new key for the same SPI starts at 1 */
	clear_all();
	t.aead = EGW_ESP_AES128_GCM;
	if (sa_pair(0x5000, &t) < 0)
		return;
	egw_esp_sa_info(0x5000, EGW_ESP_DIR_OUT, &info);
	CHECK(info.seq == 1, "new key starts at 1 (got %" PRIu64 ")", info.seq);
	clear_all();

	/* state file changes are refused while outbound SAs exist */
	if (sa_pair(0x5001, &t) == 0) {
		rc = egw_esp_state_file(path, err, sizeof(err));
		CHECK(rc == -EBUSY, "state file change with outbound SAs: EBUSY");
	}
	clear_all();
	/* a corrupted file: not trusted, outbound SAs refused */
	snprintf(bad, sizeof(bad), "%s/bad", state_dir);
	f = fopen(bad, "w");
	if (f != NULL) {
		fputs("edgegw-esp-state 1\nsa 00005000 00000000000000000000000000000000 7\ncrc "
		      "00000000\n",
		      f);
		fclose(f);
	}
	rc = egw_esp_state_file(bad, err, sizeof(err));
	CHECK(rc == -EINVAL, "corrupt state file refused: %s", err);
	{
		struct egw_esp_sa_conf c;

		memset(&c, 0, sizeof(c));
		c.spi = 0x5002;
		c.dir = EGW_ESP_DIR_OUT;
		c.aead = EGW_ESP_AES128_GCM;
		c.key_len = 20;
		rc = egw_esp_sa_add(&c, err, sizeof(err));
		CHECK(rc == -EINVAL && strstr(err, "trust") != NULL,
		      "outbound SA refused on an untrusted state file: %s", err);
		c.dir = EGW_ESP_DIR_IN;
		rc = egw_esp_sa_add(&c, err, sizeof(err));
		CHECK(rc == 0, "inbound SA still fine: %s", err);
		egw_esp_sa_del(0x5002, EGW_ESP_DIR_IN, err, sizeof(err));
	}
	snprintf(path, sizeof(path), "%s/state", state_dir);
	rc = egw_esp_state_file(path, err, sizeof(err));
	CHECK(rc == 0, "back to a good state file");
}

/* ---- GSO out of place against the copying path --------------------------- */

/* A chain of mbufs holding frame, its pieces sized from sizes[] in turn
 * (the first piece first + sizes[0]...). */
static struct rte_mbuf *
mk_chain(const uint8_t *frame, uint32_t len, const uint16_t *sizes, unsigned int n_sizes)
{
	struct rte_mbuf *head = NULL, *prev = NULL;
	uint32_t off = 0;
	unsigned int k = 0;

	while (off < len) {
		struct rte_mbuf *s = rte_pktmbuf_alloc(pool);
		uint16_t n = (uint16_t)RTE_MIN(len - off, (uint32_t)sizes[k++ % n_sizes]);

		if (s == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		memcpy(rte_pktmbuf_append(s, n), frame + off, n);
		if (head == NULL) {
			head = s;
		} else {
			prev->next = s;
			head->nb_segs++;
			head->pkt_len += n;
		}
		prev = s;
		off += n;
	}
	head->l2_len = sizeof(struct rte_ether_hdr);
	return head;
}

/* Is the TCP checksum of clear frame f (IPv4 or IPv6 without extension
 * headers, TCP without options) right? Summed with the checksum in place, a
 * right one gives 0. *hdr = bytes before the TCP payload. */
static bool
tcp_ok(const uint8_t *f, uint32_t len, uint8_t family, uint32_t *hdr)
{
	const uint8_t *ip = f + 14;

	if (family == AF_INET) {
		const struct rte_ipv4_hdr *h = (const struct rte_ipv4_hdr *)ip;

		*hdr = 14 + 20 + 20;
		return len >= *hdr && rte_ipv4_udptcp_cksum(h, ip + 20) == 0;
	}
	*hdr = 14 + 40 + 20;
	return len >= *hdr && rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, ip + 40) == 0;
}

/*
 * The same super-packets through the outbound path twice with the same
 * sequence numbers and outer ids: segments copying their payload, then
 * segments encrypting it from the super-packet. The ESP frames must be the
 * same bytes; then they are decrypted and the TCP payload of the segments
 * put together must be the super-packet's, with valid checksums.
 */
static void
test_gso_oop(void)
{
	static const uint16_t pieces[][4] = {
		{2000, 2000, 2000, 2000}, /* net_pcap-like */
		{55, 1500, 7, 2000},      /* odd sizes, a segment over three pieces */
		{61, 333, 1001, 97},      /* odd offsets everywhere */
		{97, 97, 97, 97},         /* more pieces than one job takes: copied */
	};
	static const enum egw_esp_aead aeads[] = {EGW_ESP_AES128_GCM, EGW_ESP_AES256_GCM,
						  EGW_ESP_CHACHA20_POLY1305};
	static uint8_t frame[20000], buf[2][EGW_ESP_MAX_SEGS][2048], got[20000];
	struct rte_mbuf *in[1], *out[2][EGW_ESP_MAX_SEGS];
	unsigned int ci, cases = 0;
	char what[160];

	/* AEAD x transport / tunnel v4 / tunnel v6 x inner family x NAT-T x
	 * chain x TSO */
	for (ci = 0; ci < RTE_DIM(aeads) * 3 * 2 * 2 * RTE_DIM(pieces) * 2; ci++) {
		unsigned int tso = ci % 2, pc = ci / 2 % RTE_DIM(pieces);
		unsigned int natt = ci / (2 * RTE_DIM(pieces)) % 2;
		unsigned int inner = ci / (4 * RTE_DIM(pieces)) % 2;
		unsigned int mode = ci / (8 * RTE_DIM(pieces)) % 3;
		unsigned int a = ci / (24 * RTE_DIM(pieces));
		struct t_sa t = {.aead = aeads[a],
				 .mode = mode == 0 ? EGW_ESP_MODE_TRANSPORT : EGW_ESP_MODE_TUNNEL,
				 .outer = mode == 2 ? AF_INET6 : AF_INET,
				 .natt = natt};
		struct t_pkt p = {.family = inner ? AF_INET6 : AF_INET,
				  .proto = IPPROTO_TCP,
				  .plen = (uint16_t)(9001 + pc * 1111),
				  .seed = (uint8_t)(pc + a)};
		uint32_t len = build(&p, frame), hdr = 0, glen, off, tot = 0;
		uint16_t n[2], r, i;
		struct egw_esp_sa *sa;
		uint64_t seq0;
		uint16_t id0;
		unsigned int pass;
		bool same = true, ok = true;
		struct egw_esp_res res;

		snprintf(what, sizeof(what), "gso oop %s %s inner %s natt %u pieces %u%s",
			 egw_esp_aead_name(t.aead),
			 mode == 0   ? "transport"
			 : mode == 1 ? "tunnel v4"
				     : "tunnel v6",
			 inner ? "v6" : "v4", natt, pieces[pc][0], tso ? " tso 999" : "");
		clear_all();
		if (sa_pair(0x7000, &t) < 0) {
			CHECK(0, "%s: SA set-up", what);
			return;
		}
		sa = esp_sa_find(0x7000, EGW_ESP_DIR_OUT);
		seq0 = sa->seq_next;
		id0 = ctx->ip_id;
		for (pass = 0; pass < 2; pass++) {
			/* pass 1: AES-GCM segments read from the chain */
			ctx->gso_oop = pass == 1;
			sa->seq_next = seq0;
			ctx->ip_id = id0;
			in[0] = mk_chain(frame, len, pieces[pc], 4);
			if (tso) {
				in[0]->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
				in[0]->tso_segsz = 999;
			}
			memset(&res, 0, sizeof(res));
			n[pass] = encrypt(in, 1, out[pass], EGW_ESP_MAX_SEGS, &res);
			for (i = 0; i < n[pass]; i++)
				flat(out[pass][i], buf[pass][i]);
		}
		ctx->gso_oop = 0;
		CHECK(n[0] > 1 && n[0] == n[1], "%s: %u and %u segments", what, n[0], n[1]);
		for (i = 0; i < RTE_MIN(n[0], n[1]); i++)
			same &= out[0][i]->pkt_len == out[1][i]->pkt_len &&
				memcmp(buf[0][i], buf[1][i], out[0][i]->pkt_len) == 0;
		CHECK(same, "%s: ESP frames byte-identical", what);
		rte_pktmbuf_free_bulk(out[0], n[0]);

		memset(&res, 0, sizeof(res));
		r = egw_esp_inbound_burst(ctx, out[1], n[1], &res);
		CHECK(r == n[1], "%s: all %u decrypted (%u)", what, n[1], r);
		tcp_ok(frame, len, p.family, &hdr);
		for (i = 0; i < r; i++) {
			glen = flat(out[1][i], got);
			if (!tcp_ok(got, glen, p.family, &off)) {
				printf("  %s: segment %u checksum\n", what, i);
				ok = false;
			}
			if (tot + glen - off <= len - hdr &&
			    memcmp(got + off, frame + hdr + tot, glen - off) != 0) {
				printf("  %s: segment %u payload\n", what, i);
				ok = false;
			}
			tot += glen - off;
		}
		CHECK(ok && tot == len - hdr, "%s: payload and TCP checksums (%u of %u bytes)",
		      what, tot, len - hdr);
		rte_pktmbuf_free_bulk(out[1], r);
		cases++;
	}
	printf("gso out of place: %u cases byte-identical to the copying path\n", cases);
}

/* The 2 KB-chain segments really read their payload from the super-packet. */
static void
test_gso_oop_used(void)
{
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_TCP, .plen = 9000};
	static const uint16_t sz[1] = {2000};
	static uint8_t frame[10000];
	struct rte_mbuf *segs[EGW_ESP_MAX_SEGS], *m;
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	enum egw_esp_drop why;
	unsigned int k, i, refs = 0;

	clear_all();
	if (sa_pair(0x7100, &t) < 0)
		return;
	m = mk_chain(frame, build(&p, frame), sz, 1);
	ctx->gso_oop = 1;
	k = esp_gso_out(ctx, esp_sa_find(0x7100, EGW_ESP_DIR_OUT), m, 1400, segs, 0, &why);
	for (i = 0; i < k; i++)
		refs += ctx->gso[i].n != 0;
	CHECK(k == 7 && refs == k && ctx->n_gso_keep == 1,
	      "gso oop: %u segments, %u read from the chain, chain kept (%u)", k, refs,
	      ctx->n_gso_keep);
	esp_gso_run_done(ctx, k);
	ctx->gso_oop = 0;
	CHECK(ctx->n_gso_keep == 0 && ctx->gso[0].n == 0, "gso oop: run done clears and frees");
	rte_pktmbuf_free_bulk(segs, k);
}

/* ---- IV uniqueness with two lcores --------------------------------------- */

#define IVT_SEGS 1000000
#define IVT_SPKT 65000

static uint64_t *ivs[2];
static unsigned int n_ivs[2];
static struct egw_esp_ctx *ivctx[2];

static int
iv_worker(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_TCP, .plen = IVT_SPKT - 54};
	static uint8_t frames[2][70000];
	uint32_t len = build(&p, frames[w]);
	struct rte_mbuf *out[EGW_ESP_MAX_SEGS * 2];
	struct egw_esp_sa *sa[2];
	struct egw_esp_res res;
	uint16_t n, i;

	rte_rcu_qsbr_thread_register(qs, w);
	rte_rcu_qsbr_thread_online(qs, w);
	while (n_ivs[w] < IVT_SEGS / 2) {
		struct rte_mbuf *in[2];

		/* a 64 KB super-packet as a chain of 2 KB mbufs, like net_pcap */
		in[0] = NULL;
		{
			struct rte_mbuf *head = NULL, *prev = NULL;
			uint32_t off = 0;

			while (off < len) {
				struct rte_mbuf *s = rte_pktmbuf_alloc(pool);
				uint16_t k = (uint16_t)RTE_MIN(len - off, 2000u);

				memcpy(rte_pktmbuf_append(s, k), frames[w] + off, k);
				if (head == NULL)
					head = s;
				else {
					prev->next = s;
					head->nb_segs++;
					head->pkt_len += k;
				}
				prev = s;
				off += k;
			}
			head->l2_len = 14;
			in[0] = head;
		}
		memset(&res, 0, sizeof(res));
		n = egw_esp_outbound_lookup(ivctx[w], in, 1, sa, &res);
		if (n != 1)
			break;
		egw_esp_outbound_burst(ivctx[w], sa, in, 1, out, RTE_DIM(out), &res);
		for (i = 0; i < res.n_out; i++) {
			uint8_t *e = rte_pktmbuf_mtod(out[i], uint8_t *) + 14 + 20;

			if (n_ivs[w] < IVT_SEGS / 2 + EGW_ESP_MAX_SEGS)
				ivs[w][n_ivs[w]++] = t_get64(e + 8) << 0;
		}
		rte_pktmbuf_free_bulk(out, res.n_out);
		rte_rcu_qsbr_quiescent(qs, w);
	}
	rte_rcu_qsbr_thread_offline(qs, w);
	rte_rcu_qsbr_thread_unregister(qs, w);
	return 0;
}

static int
u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_iv_unique(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0), i, total, dup = 0, gap = 0;
	uint64_t *all;

	if (lcore >= RTE_MAX_LCORE) {
		printf("IV uniqueness: needs a second lcore (-l 0-1); not run\n");
		CHECK(0, "IV uniqueness test needs two lcores");
		return;
	}
	clear_all();
	if (sa_pair(0x6000, &t) < 0)
		return;
	for (i = 0; i < 2; i++) {
		ivs[i] = malloc(sizeof(uint64_t) * (IVT_SEGS / 2 + 2 * EGW_ESP_MAX_SEGS));
		ivctx[i] = egw_esp_ctx_create(1 + i, pool);
		n_ivs[i] = 0;
	}
	rte_eal_remote_launch(iv_worker, (void *)(uintptr_t)1, lcore);
	iv_worker((void *)(uintptr_t)0);
	rte_eal_wait_lcore(lcore);
	total = n_ivs[0] + n_ivs[1];
	all = malloc(sizeof(uint64_t) * total);
	memcpy(all, ivs[0], sizeof(uint64_t) * n_ivs[0]);
	memcpy(all + n_ivs[0], ivs[1], sizeof(uint64_t) * n_ivs[1]);
	qsort(all, total, sizeof(uint64_t), u64cmp);
	for (i = 1; i < total; i++) {
		if (all[i] == all[i - 1])
			dup++;
		else if (all[i] != all[i - 1] + 1)
			gap++;
	}
	CHECK(total >= IVT_SEGS, "IV test: %u segments through two lcores", total);
	CHECK(n_ivs[0] > 0 && n_ivs[1] > 0, "both lcores made segments (%u, %u)", n_ivs[0],
	      n_ivs[1]);
	CHECK(dup == 0, "IV test: all %u IVs distinct (%u repeats)", total, dup);
	CHECK(gap == 0 && all[0] == 1 && all[total - 1] == total,
	      "IV test: sequence numbers 1..%u gap-free (%u gaps, %" PRIu64 "..%" PRIu64 ")", total,
	      gap, all[0], all[total - 1]);
	printf("IV uniqueness: %u segments from two lcores, %u + %u, all distinct, 1..%" PRIu64
	       "\n",
	       total, n_ivs[0], n_ivs[1], all[total - 1]);
	free(all);
	for (i = 0; i < 2; i++) {
		free(ivs[i]);
		egw_esp_ctx_free(ivctx[i]);
	}
}

int
main(int argc, char **argv)
{
	char path[128];
	int rc;

	(void)argc;
	(void)argv;
	{
		/* two lcores for the IV test, whatever the suite passes */
		char *eal[] = {
			argv[0], "--no-huge",         "-m", "512", "--no-pci", "--no-shconf", "-l",
			"0-1",   "--log-level=error", NULL};

		if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
			printf("EAL init failed\n");
			return 1;
		}
	}
	pool = rte_pktmbuf_pool_create("t_esp", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	qs = rte_zmalloc(NULL, rte_rcu_qsbr_get_memsize(4), 64);
	rte_rcu_qsbr_init(qs, 4);
	snprintf(state_dir, sizeof(state_dir), "/tmp/egw_esp_test.XXXXXX");
	if (pool == NULL || qs == NULL || mkdtemp(state_dir) == NULL) {
		printf("set-up failed\n");
		return 1;
	}
	rc = egw_esp_init(qs);
	snprintf(path, sizeof(path), "%s/state", state_dir);
	if (rc == 0)
		rc = egw_esp_state_file(path, err, sizeof(err));
	ctx = egw_esp_ctx_create(0, pool);
	if (rc < 0 || ctx == NULL) {
		printf("esp set-up failed: %d %s\n", rc, err);
		return 1;
	}
	printf("IPsec-MB code path: %s\n", egw_esp_ctx_arch(ctx));

	test_kat();
	test_matrix();
	test_transport_tunnels();
	test_inbound_rejects();
	test_trailer();
	test_big_burst();
	test_icmp_limit();
	test_seq_limits();
	test_state_file();
	test_gso_oop();
	test_gso_oop_used();
	test_iv_unique();

	clear_all();
	egw_esp_ctx_free(ctx);
	egw_esp_fini();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
		if (system(cmd) != 0)
			printf("could not remove %s\n", state_dir);
	}
	printf("%d checks, %d failures\n", checks, failures);
	return failures == 0 ? 0 : 1;
}
