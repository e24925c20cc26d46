/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/esp end to end without a NIC: known-answer vectors through the
 * library's AEAD job code, outbound -> inbound round trips over the whole
 * mode/family/AEAD/ESN/NAT-T matrix, every inbound rejection with its
 * counter, sequence-number limits and the state file across a restart, and
 * IV uniqueness with two lcores sharing one SA. Each loopback pair's inbound
 * SA has a key of its own (one key, one SA): esp_peer.h verifies every
 * outbound frame with the outbound key and seals it again for the inbound SA.
 * Then: a key in use refused in either direction and continued above its
 * persisted numbers under a new SPI (also after a restart); the state file's
 * create flag, version 1 files, the full table and pruning; a new SA's first
 * block; RFC 6040 ECN decapsulation; ESP to local addresses vs transit ESP
 * and ESP fragments, frame by frame and split over a burst; the inbound hard
 * lifetimes to the byte and the packet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_rcu_qsbr.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "check.h"
#include "egw_esp.h"
#include "esp_crypto.h"
#include "esp_peer.h"
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
/* the far end of every loopback SA pair: outbound frames re-sealed for the
 * inbound SA, which has a key of its own */
static struct esp_peers peers;

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

/* RFC 768 / RFC 8200 8.1 checksum of the UDP datagram at udp over IPv6,
 * summed here byte by byte (not with DPDK's helpers): 0 when it verifies. */
static uint16_t
t_udp6_sum(const uint8_t *src, const uint8_t *dst, const uint8_t *udp)
{
	uint32_t len = (uint32_t)udp[4] << 8 | udp[5], sum = 0, i;

	for (i = 0; i < 16; i += 2)
		sum += ((uint32_t)src[i] << 8 | src[i + 1]) + ((uint32_t)dst[i] << 8 | dst[i + 1]);
	sum += len + IPPROTO_UDP;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)udp[i] << 8 | udp[i + 1];
	if (len & 1)
		sum += (uint32_t)udp[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
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

/* A chain of mbufs holding frame, its pieces sized from sizes[] in turn
 * (the first piece first + sizes[0]...). */
static struct rte_mbuf *
mk_chain_sized(const uint8_t *frame, uint32_t len, const uint16_t *sizes, unsigned int n_sizes)
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

/* A frame of any length as a chain of 2,000-byte mbufs (as net_pcap hands
 * over a jumbo frame). */
static struct rte_mbuf *
mk_chain(const uint8_t *frame, uint32_t len)
{
	static const uint16_t k2000[] = {2000};

	return mk_chain_sized(frame, len, k2000, 1);
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
	struct egw_esp_life in_life_packets; /* inbound SA's lifetimes */
	struct egw_esp_life in_life_bytes;
	uint64_t life_bytes; /* outbound hard byte lifetime; 0 = none */
	uint16_t mtu;        /* outbound SA mtu; 0 = default */
	uint8_t ttl;         /* outbound tunnel TTL / hop limit; 0 = default */
	uint16_t natt_sport; /* outbound NAT-T ports; 0 = default */
	uint16_t natt_dport;
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

/* Outbound and inbound SA with one SPI (a loopback pair), each with a
 * catch-all PROTECT policy for both families. The inbound SA has a key of
 * its own (one key, one SA): encrypt() re-seals the outbound SA's frames
 * for it. */
static int
sa_pair(uint32_t spi, const struct t_sa *t)
{
	struct egw_esp_sa_conf c;
	struct egw_esp_policy p;
	uint8_t out_key[EGW_ESP_KEY_MAX], in_key[EGW_ESP_KEY_MAX];
	int d, f, rc;

	key_gen++;
	key_for(t->aead, out_key);
	esp_peer_in_key(t->aead, out_key, in_key);
	if (esp_peer_add(&peers, spi, t->aead, t->esn, out_key, in_key) < 0) {
		printf("peer table full\n");
		return -ENOSPC;
	}
	for (d = 0; d < 2; d++) {
		memset(&c, 0, sizeof(c));
		c.spi = spi;
		c.dir = d;
		c.mode = t->mode;
		c.aead = t->aead;
		memcpy(c.key, d == EGW_ESP_DIR_OUT ? out_key : in_key, sizeof(c.key));
		if (d == EGW_ESP_DIR_IN) {
			c.life_packets = t->in_life_packets;
			c.life_bytes = t->in_life_bytes;
		}
		c.key_len = (uint8_t)egw_esp_aead_key_len(t->aead);
		c.esn = t->esn;
		c.natt = t->natt;
		c.seq_start = d == EGW_ESP_DIR_OUT ? t->seq : (t->seq > 1 ? t->seq - 1 : 0);
		c.window = t->window;
		if (d == EGW_ESP_DIR_OUT) {
			c.life_bytes.hard = t->life_bytes;
			c.mtu = t->mtu;
			c.ttl = t->ttl;
			if (t->natt) {
				c.natt_sport = t->natt_sport;
				c.natt_dport = t->natt_dport;
			}
		}
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
	/* the far end: each frame verified with the outbound key, sealed again
	 * for the inbound SA */
	for (done = 0; done < total; done++) {
		const uint8_t *ip = rte_pktmbuf_mtod(tmp[done], const uint8_t *) + 14;
		int rc;

		/* a fragment of an ESP packet is re-sealed once reassembled
		 * (test_transport_frag) */
		if ((ip[0] >> 4) == 4 && (esp_get32(ip + 4) & 0x3fff) != 0)
			continue;
		rc = esp_peer_reseal(&peers, tmp[done]);

		CHECK(rc == 0,
		      "ESP frame %u of %u verifies with the outbound key and re-seals (%d)", done,
		      total, rc);
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
		if (t->natt) {
			const uint8_t *u = f + esp_off;
			bool v6 =
				(t->mode == EGW_ESP_MODE_TUNNEL ? t->outer : p->family) == AF_INET6;

			/* IPv6 forbids a zero UDP checksum (RFC 8200 8.1); IPv4
			 * NAT-T sends 0 (RFC 3948 2.1) */
			if (v6)
				CHECK((u[6] | u[7]) != 0 && t_udp6_sum(f + 8, f + 24, u) == 0,
				      "%s: NAT-T UDP checksum over IPv6 verifies (%02x%02x)", what,
				      u[6], u[7]);
			else
				CHECK((u[6] | u[7]) == 0, "%s: NAT-T UDP checksum 0 over IPv4",
				      what);
		}
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

/* ---- outer header of tunnel mode ---------------------------------------- */

/* RFC 791 header checksum of the 20 bytes at h, summed byte by byte. */
static uint16_t
t_ip4_sum(const uint8_t *h)
{
	uint32_t sum = 0, i;

	for (i = 0; i < 20; i += 2)
		if (i != 10)
			sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void
t_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* TOS / traffic class values over the DSCP and ECN bits. */
static const uint8_t outer_tos[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x2d,
				    0x80, 0xb8, 0xb9, 0xe0, 0xfe, 0xff};

/* Build here, field by field, the frame start (L2, outer IP, NAT-T UDP, ESP
 * header and IV) the library should write for packet i of a burst through
 * SA t (SPI 0x9000, TTL 37, NAT-T ports 4501 -> 61000); returns its length. */
static uint32_t
outer_ref(uint8_t *ref, const struct t_sa *t, const uint8_t *frame, uint8_t tos, bool df,
	  uint16_t id, uint32_t ip_len, uint64_t seq)
{
	uint32_t hl = t->outer == AF_INET6 ? 40 : 20, ul = t->natt ? 8 : 0;
	uint32_t esp_len = 16 + ((ip_len + 2 + 3) & ~3u) + 16;
	uint8_t *h = ref + 14, *u = h + hl;

	memset(ref, 0, 14 + hl + ul + 16);
	memcpy(ref, frame, 12);
	if (t->outer == AF_INET) {
		t_put16(ref + 12, RTE_ETHER_TYPE_IPV4);
		h[0] = 0x45;
		h[1] = tos;
		t_put16(h + 2, hl + ul + esp_len);
		t_put16(h + 4, id);
		t_put16(h + 6, df ? 0x4000 : 0);
		h[8] = 37;
		h[9] = t->natt ? IPPROTO_UDP : IPPROTO_ESP;
		memcpy(h + 12, "\xc0\x00\x02\x01", 4);
		memcpy(h + 16, "\xc0\x00\x02\x02", 4);
		t_put16(h + 10, t_ip4_sum(h));
	} else {
		t_put16(ref + 12, RTE_ETHER_TYPE_IPV6);
		h[0] = (uint8_t)(0x60 | tos >> 4);
		h[1] = (uint8_t)(tos << 4);
		t_put16(h + 4, ul + esp_len);
		h[6] = t->natt ? IPPROTO_UDP : IPPROTO_ESP;
		h[7] = 37;
		memcpy(h + 8, "\x20\x01\x0d\xb8", 4);
		h[23] = 1;
		memcpy(h + 24, "\x20\x01\x0d\xb8", 4);
		h[39] = 2;
	}
	if (t->natt) {
		t_put16(u, 4501);
		t_put16(u + 2, 61000);
		t_put16(u + 4, ul + esp_len);
	}
	t_put16(u + ul + 2, 0x9000);
	t_put16(u + ul + 6, (uint32_t)seq);
	t_put16(u + ul + 14, (uint32_t)seq);
	return 14 + hl + ul + 16;
}

/* One burst of outer_tos packets of inner family/DF and plen through SA t,
 * each compared with outer_ref(); returns the number that differ. */
static unsigned int
outer_burst(const struct t_sa *t, uint8_t family, bool df, uint16_t plen, uint64_t *seq)
{
	static uint8_t frame[RTE_DIM(outer_tos)][2048], ref[128];
	struct rte_mbuf *in[RTE_DIM(outer_tos)], *out[RTE_DIM(outer_tos) + EGW_ESP_MAX_SEGS];
	struct t_pkt p = {.family = family, .proto = IPPROTO_UDP, .plen = plen, .df = df};
	uint16_t id0 = ctx->ip_id, n;
	bool v6 = t->outer == AF_INET6;
	struct egw_esp_res res;
	unsigned int i, bad = 0;
	uint32_t len = 0;

	for (i = 0; i < RTE_DIM(outer_tos); i++) {
		uint8_t *ip = frame[i] + 14;

		len = build(&p, frame[i]);
		if (family == AF_INET) {
			struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

			h->type_of_service = outer_tos[i];
			h->hdr_checksum = 0;
			h->hdr_checksum = rte_ipv4_cksum(h);
		} else {
			ip[0] = (uint8_t)(0x60 | outer_tos[i] >> 4);
			ip[1] = (uint8_t)(outer_tos[i] << 4);
		}
		in[i] = mk(frame[i], len);
	}
	memset(&res, 0, sizeof(res));
	n = encrypt(in, RTE_DIM(in), out, RTE_DIM(out), &res);
	CHECK(n == RTE_DIM(in), "template: %u ESP frames (%u)", (unsigned int)RTE_DIM(in), n);
	for (i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(out[i], uint8_t *);
		uint16_t id = (uint16_t)((id0 + i) << 4 | ctx->idx);
		uint32_t rl = outer_ref(ref, t, frame[i], outer_tos[i], family == AF_INET && df, id,
					len - 14, (*seq)++);
		uint32_t ul = 14 + (v6 ? 40 : 20);

		/* over IPv6 the NAT-T checksum covers the ciphertext: it must
		 * verify instead */
		if (t->natt && v6)
			memcpy(ref + ul + 6, f + ul + 6, 2);
		/* and behind the IV: the inner packet padded to 4 with 2, ICV */
		if (out[i]->pkt_len != rl + ((len - 14 + 2 + 3) & ~3u) + 16 ||
		    memcmp(f, ref, rl) != 0 ||
		    (t->natt && v6 && t_udp6_sum(f + 22, f + 38, f + ul))) {
			if (bad++ < 4)
				printf("  outer %s natt %u inner %s%s plen %u tos 0x%02x differs\n",
				       v6 ? "v6" : "v4", t->natt, family == AF_INET ? "v4" : "v6",
				       df ? " DF" : "", plen, outer_tos[i]);
		}
	}
	rte_pktmbuf_free_bulk(out, n);
	return bad;
}

/*
 * The outer header the library writes in tunnel mode (from the SA's
 * template plus the per-packet words) against one built here field by
 * field: IPv4 and IPv6 outer, with and without NAT-T (ports not the
 * defaults), TTL not the default, inner IPv4 with DF on and off and inner
 * IPv6, the TOS values of outer_tos a burst at a time (the IPv4 id counts
 * per packet).
 */
static void
test_outer_template(void)
{
	static const uint16_t plens[] = {1, 2, 3, 300, 1000};
	unsigned int outer, natt, inner, pl, bad = 0;

	for (outer = 0; outer < 2; outer++)
		for (natt = 0; natt < 2; natt++) {
			struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
					 .mode = EGW_ESP_MODE_TUNNEL,
					 .outer = outer ? AF_INET6 : AF_INET,
					 .natt = natt,
					 .ttl = 37,
					 .natt_sport = 4501,
					 .natt_dport = 61000};
			uint64_t seq = 1;

			clear_all();
			if (sa_pair(0x9000, &t) < 0) {
				CHECK(0, "template: SA set-up");
				return;
			}
			for (inner = 0; inner < 3; inner++)
				for (pl = 0; pl < RTE_DIM(plens); pl++)
					bad += outer_burst(&t, inner == 2 ? AF_INET6 : AF_INET,
							   inner == 0, plens[pl], &seq);
		}
	CHECK(bad == 0,
	      "tunnel outer headers, NAT-T UDP and ESP headers as built field by field over "
	      "%u packets (%u differ)",
	      (unsigned int)(2 * 2 * 3 * RTE_DIM(plens) * RTE_DIM(outer_tos)), bad);
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

/* esp_ip4_sum_ok() against rte_raw_cksum() == 0xffff: random headers of
 * every length, half of them given the right checksum, each right one also
 * with one bit flipped, and the all-zero and all-ones headers. */
static void
test_ip4_sum(void)
{
	uint8_t h[60];
	unsigned int n, len, b, agree = 0, ok = 0, total = 0;
	uint16_t ck;

	for (n = 0; n < 20000; n++) {
		len = 20 + 4 * (n % 11);
		for (b = 0; b < len; b++)
			h[b] = (uint8_t)rte_rand();
		if (n & 1) {
			h[10] = h[11] = 0;
			ck = (uint16_t)~rte_raw_cksum(h, len);
			memcpy(h + 10, &ck, 2);
		}
		total++;
		ok += rte_raw_cksum(h, len) == 0xffff;
		agree += esp_ip4_sum_ok(h, len) == (rte_raw_cksum(h, len) == 0xffff);
		if (n & 1) {
			h[rte_rand() % len] ^= (uint8_t)(1u << (rte_rand() % 8));
			total++;
			agree += esp_ip4_sum_ok(h, len) == (rte_raw_cksum(h, len) == 0xffff);
		}
	}
	for (b = 0; b < 2; b++)
		for (len = 20; len <= 60; len += 4) {
			memset(h, b ? 0xff : 0, sizeof(h));
			total++;
			agree += esp_ip4_sum_ok(h, len) == (rte_raw_cksum(h, len) == 0xffff);
		}
	CHECK(agree == total && ok >= 10000,
	      "outer IPv4 checksum check agrees with rte_raw_cksum on %u of %u headers "
	      "(%u sum right)",
	      agree, total, ok);
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
	/* the outer IPv4 header checksum, which the ICV does not cover: a
	 * wrong one is dropped as such, a NIC's verdict stands either way, and
	 * the packet that comes out carries no verdict of the outer one */
	{
		static const struct {
			uint64_t fl;
			bool flip;
			enum egw_esp_drop want;
			const char *what;
		} cs[] = {
			{0, true, EGW_ESP_DROP_BAD_CKSUM, "outer checksum wrong"},
			{RTE_MBUF_F_RX_IP_CKSUM_BAD, false, EGW_ESP_DROP_BAD_CKSUM,
			 "outer checksum bad by the NIC"},
			{0, false, EGW_ESP_DROP_MAX, "outer checksum right"},
			{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD, false,
			 EGW_ESP_DROP_MAX, "outer checksum good by the NIC"},
		};

		/* a frame of its own: esp[] stays the one the cases below cut */
		static uint8_t e2[2048];
		uint32_t e2len;

		for (i = 0; i < RTE_DIM(cs); i++) {
			struct rte_mbuf *m;

			memset(&res, 0, sizeof(res));
			in[0] = mk(frame, len);
			encrypt(in, 1, out, 1, &res);
			e2len = flat(out[0], e2);
			rte_pktmbuf_free(out[0]);
			if (cs[i].flip)
				e2[14 + 10] ^= 1;
			m = mk(e2, e2len);
			m->ol_flags |= cs[i].fl;
			memset(&res, 0, sizeof(res));
			n = egw_esp_inbound_burst(ctx, &m, 1, &res);
			if (cs[i].want == EGW_ESP_DROP_MAX) {
				CHECK(n == 1 && (m->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK |
								RTE_MBUF_F_RX_L4_CKSUM_MASK)) == 0,
				      "%s: accepted, no checksum verdict left", cs[i].what);
				if (n == 1)
					rte_pktmbuf_free(m);
			} else {
				CHECK(n == 0 && res.drop[cs[i].want] == 1, "%s: dropped as %s",
				      cs[i].what, egw_esp_drop_name(cs[i].want));
				if (n == 1)
					rte_pktmbuf_free(m);
			}
		}
	}
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
struct hits_arg {
	uint32_t id;
	uint64_t hits;
};

static int
hits_of(const struct egw_esp_policy *p, uint64_t hits, void *arg)
{
	struct hits_arg *h = arg;

	if (p->id == h->id)
		h->hits = hits;
	return 0;
}

/* A burst of 4 of frame's flow, sealed by the SA the outbound policy picks
 * and decrypted by the inbound path: how many came out; the drops of reason
 * why in *dropped. */
static uint16_t
flow_burst(const uint8_t *frame, uint32_t len, enum egw_esp_drop why, unsigned int *dropped)
{
	struct rte_mbuf *in[4], *out[4];
	struct egw_esp_res res;
	uint16_t n, k, i;

	for (i = 0; i < RTE_DIM(in); i++)
		in[i] = mk(frame, len);
	memset(&res, 0, sizeof(res));
	n = encrypt(in, RTE_DIM(in), out, RTE_DIM(out), &res);
	memset(&res, 0, sizeof(res));
	k = egw_esp_inbound_burst(ctx, out, n, &res);
	*dropped = res.drop[why];
	rte_pktmbuf_free_bulk(out, k);
	return k;
}

/*
 * The inbound policy check decides a steady flow from the context's flow
 * cache (esp_spd_check_in()): an entry made under another snapshot is not
 * used, and a hit still needs the SA the packet came through to be the
 * rule's. Flow F (UDP) comes through SA 0x3000 every time; a rule put in
 * front of the catch-all one gives F to SA 0x3100, then goes again.
 */
static void
test_policy_cache(void)
{
	static uint8_t frame[2048];
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .window = 64};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 100};
	struct egw_esp_policy pol;
	struct hits_arg h = {0};
	unsigned int d;
	uint32_t len;
	uint16_t k;
	int id;

	clear_all();
	if (sa_pair(0x3000, &t) < 0 || sa_pair(0x3100, &t) < 0)
		return;
	len = build(&p, frame);
	k = flow_burst(frame, len, EGW_ESP_DROP_POLICY_MISMATCH, &d);
	CHECK(k == 4 && d == 0, "policy cache: F through its rule's SA: %u of 4 out", k);
	k = flow_burst(frame, len, EGW_ESP_DROP_POLICY_MISMATCH, &d);
	CHECK(k == 4 && d == 0, "policy cache: again, from the cache: %u of 4 out", k);

	memset(&pol, 0, sizeof(pol));
	pol.dir = EGW_ESP_DIR_IN;
	pol.family = AF_INET;
	pol.src.addr.family = pol.dst.addr.family = AF_INET;
	pol.proto = IPPROTO_UDP;
	pol.action = EGW_ESP_PROTECT;
	pol.spi = 0x3100;
	id = egw_esp_policy_add(&pol, 0, err, sizeof(err));
	CHECK(id > 0, "policy cache: rule giving F to SA 0x3100: %s", err);
	k = flow_burst(frame, len, EGW_ESP_DROP_POLICY_MISMATCH, &d);
	CHECK(k == 0 && d == 4,
	      "policy cache: an entry of the old snapshot is not used: %u out, %u mismatched", k,
	      d);
	k = flow_burst(frame, len, EGW_ESP_DROP_POLICY_MISMATCH, &d);
	CHECK(k == 0 && d == 4,
	      "policy cache: a hit through another SA than the rule's is dropped: %u out, %u "
	      "mismatched",
	      k, d);
	h.id = (uint32_t)id;
	egw_esp_policy_walk(EGW_ESP_DIR_IN, hits_of, &h);
	CHECK(h.hits == 8, "policy cache: the rule counts its 8 hits, cached or not (%" PRIu64 ")",
	      h.hits);
	CHECK(id <= 0 || egw_esp_policy_del(EGW_ESP_DIR_IN, (uint32_t)id) == 0,
	      "policy cache: rule deleted");
	k = flow_burst(frame, len, EGW_ESP_DROP_POLICY_MISMATCH, &d);
	CHECK(k == 4 && d == 0, "policy cache: F through SA 0x3000 again once it goes: %u of 4 out",
	      k);
}

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
	/* the inbound SA's key: the one sa_pair() derived for it */
	memcpy(key, esp_peer_find(&peers, 0x3000)->in_key, sizeof(key));
	/* 4..9: padding of 1, 2 and 3 bytes, each of its bytes wrong in turn */
	static const uint8_t vk[10] = {0, 0, 0, 0, 1, 2, 2, 3, 3, 3};
	static const uint8_t vj[10] = {0, 0, 0, 0, 0, 0, 1, 0, 1, 2};

	for (variant = 0; variant < 10; variant++) {
		struct egw_esp_sa *sa = esp_sa_find(0x3000, EGW_ESP_DIR_IN);
		struct t_pkt p = {.family = AF_INET,
				  .proto = IPPROTO_UDP,
				  .plen = (uint16_t)(variant < 4 ? 9 : 10 - vk[variant])};
		char what[64];
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
		CHECK(variant < 4 || pad == vk[variant], "%u bytes of padding (%u)", vk[variant],
		      pad);
		if (variant == 0)
			e[16 + plen + pad - 1] ^= 0x80; /* wrong padding byte */
		if (variant >= 4)
			e[16 + plen + vj[variant]] ^= 0x04;
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
		snprintf(what, sizeof(what), "%u bytes of padding, byte %u wrong", vk[variant],
			 vj[variant] + 1);
		in_one(mk(frame, 14 + 20 + 16 + plen + pad + 2 + 16),
		       variant == 0 || variant == 1 || variant >= 4 ? EGW_ESP_DROP_BAD_PADDING
		       : variant == 2                               ? EGW_ESP_DROP_MAX
								    : EGW_ESP_DROP_DUMMY,
		       variant == 0   ? "wrong padding byte"
		       : variant == 1 ? "pad length past the payload"
		       : variant == 2 ? "4 more padding bytes, correct"
		       : variant == 3 ? "dummy packet (next header 59)"
				      : what);
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
			uint8_t out_key[EGW_ESP_KEY_MAX], in_key[EGW_ESP_KEY_MAX];

			t.aead = EGW_ESP_CHACHA20_POLY1305;
			key_gen++;
			key_for(t.aead, out_key);
			esp_peer_in_key(t.aead, out_key, in_key);
			esp_peer_add(&peers, 0x7001, t.aead, false, out_key, in_key);
			for (i = 0; i < 2; i++) {
				struct egw_esp_sa_conf c;

				memset(&c, 0, sizeof(c));
				c.spi = 0x7001;
				c.dir = i;
				c.mode = EGW_ESP_MODE_TUNNEL;
				c.aead = t.aead;
				memcpy(c.key, i == EGW_ESP_DIR_OUT ? out_key : in_key,
				       sizeof(c.key));
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
		/* each inbound SA counted its own packets and clear bytes (round
		 * 1: the SA changes at every packet of the burst) */
		for (i = 0; i <= round; i++) {
			struct egw_esp_sa_info info;
			uint64_t want = round == 0 ? 128 : 64;

			CHECK(egw_esp_sa_info(0x7000 + i, EGW_ESP_DIR_IN, &info) == 0 &&
				      info.stats.packets == want &&
				      info.stats.bytes == want * (len - 14),
			      "round %u: inbound SA 0x%x counted %" PRIu64 " packets (%" PRIu64
			      " bytes)",
			      round, 0x7000 + i, want, want * (len - 14));
		}
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

/* Two contexts (two workers) sending through one IPv4 tunnel SA: their outer
 * IPv4 ids never coincide (RFC 6864), over 10,000 packets each. */
#define IPID_PKTS 10000

static void
test_ip_id_disjoint(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 20};
	static uint8_t frame[512], seen[2][65536];
	struct egw_esp_ctx *cx[2];
	struct egw_esp_sa *sa[100];
	struct rte_mbuf *in[100], *out[100 + EGW_ESP_MAX_SEGS];
	struct egw_esp_res res;
	uint32_t len = build(&p, frame), made[2] = {0, 0}, both = 0, i;
	unsigned int w, b;

	clear_all();
	if (sa_pair(0x8100, &t) < 0)
		return;
	memset(seen, 0, sizeof(seen));
	cx[0] = ctx;
	cx[1] = egw_esp_ctx_create(1, pool);
	CHECK(cx[1] != NULL, "a second context");
	if (cx[1] == NULL)
		return;
	/* interleaved, as two workers run side by side */
	for (b = 0; b < IPID_PKTS / RTE_DIM(in); b++) {
		for (w = 0; w < 2; w++) {
			uint16_t np, k;

			for (i = 0; i < RTE_DIM(in); i++)
				in[i] = mk(frame, len);
			memset(&res, 0, sizeof(res));
			np = egw_esp_outbound_lookup(cx[w], in, RTE_DIM(in), sa, &res);
			k = np == RTE_DIM(in) ? egw_esp_outbound_burst(cx[w], sa, in, np, out,
								       RTE_DIM(out), &res)
					      : 0;
			if (k != RTE_DIM(in) || res.n_out != RTE_DIM(in)) {
				CHECK(0, "context %u: a burst of %u encrypted (%u)", w,
				      (unsigned int)RTE_DIM(in), res.n_out);
				goto out;
			}
			for (i = 0; i < res.n_out; i++) {
				const struct rte_ipv4_hdr *h =
					rte_pktmbuf_mtod_offset(out[i], struct rte_ipv4_hdr *, 14);

				seen[w][rte_be_to_cpu_16(h->packet_id)] = 1;
				made[w]++;
			}
			rte_pktmbuf_free_bulk(out, res.n_out);
		}
	}
	for (i = 0; i < 65536; i++)
		both += seen[0][i] & seen[1][i];
	CHECK(made[0] == IPID_PKTS && made[1] == IPID_PKTS && both == 0,
	      "outer IPv4 ids of two contexts disjoint over %u + %u packets (%u in common)",
	      made[0], made[1], both);
out:
	egw_esp_ctx_free(cx[1]);
}

/* Hard byte lifetime N: the SA protects at most N clear IP bytes, exactly,
 * checked by the worker as the packets go (no control-path tick here). */
static void
test_life_bytes(void)
{
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 100}; /* IP 128 */
	const uint32_t L = 128, half = 64;
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .life_bytes = 10 * 128 + 64};
	static const struct {
		uint16_t n, plen, ok;
	} steps[] = {
		{4, 100, 4},  /* 512 of 1344 */
		{28, 100, 6}, /* 1280: the 11th would pass N */
		{1, 100, 0},  /* 64 left: a 128-byte packet does not fit */
		{1, 36, 1},   /* a 64-byte one does: N exactly */
		{1, 0, 0},    /* nothing left, not even 28 bytes */
	};
	static uint8_t frame[512];
	struct rte_mbuf *in[32], *out[32];
	struct egw_esp_sa_info info;
	struct egw_esp_res res;
	uint64_t sent = 0;
	unsigned int i, s;

	clear_all();
	if (sa_pair(0x8200, &t) < 0)
		return;
	for (s = 0; s < RTE_DIM(steps); s++) {
		struct t_pkt q = p;
		uint32_t len;
		uint16_t k;

		q.plen = steps[s].plen;
		len = build(&q, frame);
		for (i = 0; i < steps[s].n; i++)
			in[i] = mk(frame, len);
		memset(&res, 0, sizeof(res));
		k = encrypt(in, steps[s].n, out, RTE_DIM(out), &res);
		CHECK(k == steps[s].ok && res.drop[EGW_ESP_DROP_LIFETIME] ==
						  (uint32_t)(steps[s].n - steps[s].ok),
		      "byte lifetime step %u: %u of %u sent (want %u), %u esp_lifetime_expired", s,
		      k, steps[s].n, steps[s].ok, res.drop[EGW_ESP_DROP_LIFETIME]);
		sent += (uint64_t)k * (len - 14);
		rte_pktmbuf_free_bulk(out, k);
	}
	egw_esp_sa_info(0x8200, EGW_ESP_DIR_OUT, &info);
	CHECK(sent == 10 * L + half && info.stats.bytes == sent && info.life_bytes == sent,
	      "byte lifetime %u: %" PRIu64 " bytes sent, SA counts %" PRIu64 " protected, %" PRIu64
	      " against the lifetime",
	      10 * L + half, sent, info.stats.bytes, info.life_bytes);
}

/* What becomes of one packet too big for its SA: segments, fragments, or a
 * drop with an ICMP too-big. Only super-packets are segmented; plain TCP
 * that came over the wire is answered (path MTU; TCP-MD5/AO). */
struct big_case {
	const char *what;
	uint8_t mode, outer, family, df;
	uint16_t ip_len;      /* clear IP packet (TCP) */
	uint64_t ol_flags;    /* RTE_MBUF_F_TX_TCP_SEG / RTE_MBUF_F_RX_LRO */
	uint16_t tso_segsz;   /* with RTE_MBUF_F_TX_TCP_SEG */
	uint16_t ingress_mtu; /* egw_esp_ctx_set_ingress_mtu(); 0 = default */
	char fate;            /* 's'egmented, 'f'ragmented, 'i'cmp */
};

static const struct big_case big_cases[] = {
	{"DF TCP v4 1450, tunnel", 1, AF_INET, AF_INET, 1, 1450, 0, 0, 0, 'i'},
	{"TCP v6 1450, tunnel v6", 1, AF_INET6, AF_INET6, 0, 1450, 0, 0, 0, 'i'},
	{"DF TCP v4 1450, transport", 0, 0, AF_INET, 1, 1450, 0, 0, 0, 'i'},
	{"TCP v6 1450, transport", 0, 0, AF_INET6, 0, 1450, 0, 0, 0, 'i'},
	{"TCP v4 1450 without DF, tunnel", 1, AF_INET, AF_INET, 0, 1450, 0, 0, 0, 'f'},
	{"DF TCP v4 1450 with TSO", 1, AF_INET, AF_INET, 1, 1450, RTE_MBUF_F_TX_TCP_SEG, 1000, 0,
	 's'},
	{"TCP v6 1450 with TSO, transport", 0, 0, AF_INET6, 0, 1450, RTE_MBUF_F_TX_TCP_SEG, 1000, 0,
	 's'},
	{"DF TCP v4 1450, LRO", 1, AF_INET, AF_INET, 1, 1450, RTE_MBUF_F_RX_LRO, 0, 0, 's'},
	{"DF TCP v4 4000, ingress MTU 1500", 1, AF_INET, AF_INET, 1, 4000, 0, 0, 0, 's'},
	{"TCP v6 4000, ingress MTU 1500", 0, 0, AF_INET6, 0, 4000, 0, 0, 0, 's'},
	{"DF TCP v4 4000, ingress MTU 9000", 1, AF_INET, AF_INET, 1, 4000, 0, 0, 9000, 'i'},
	{"TCP v6 4000, ingress MTU 9000", 0, 0, AF_INET6, 0, 4000, 0, 0, 9000, 'i'},
	{"DF TCP v4 4000, ingress MTU 4000", 1, AF_INET, AF_INET, 1, 4000, 0, 0, 4000, 'i'},
	{"DF TCP v4 4000, ingress MTU 3999", 1, AF_INET, AF_INET, 1, 4000, 0, 0, 3999, 's'},
};

static void
test_too_big(void)
{
	static uint8_t frame[8192];
	unsigned int ci;

	for (ci = 0; ci < RTE_DIM(big_cases); ci++) {
		const struct big_case *bc = &big_cases[ci];
		struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
				 .mode = bc->mode,
				 .outer = bc->outer,
				 .mtu = 1400};
		struct t_pkt p = {
			.family = bc->family,
			.proto = IPPROTO_TCP,
			.df = bc->df,
			.plen = (uint16_t)(bc->ip_len - 20 - (bc->family == AF_INET ? 20 : 40))};
		struct rte_mbuf *in[1], *out[EGW_ESP_MAX_SEGS];
		struct egw_esp_res res;
		uint32_t len = build(&p, frame), i;
		uint16_t n, k;
		bool ok = true;

		clear_all();
		if (sa_pair(0x8300, &t) < 0)
			return;
		egw_esp_ctx_set_ingress_mtu(ctx, bc->ingress_mtu);
		in[0] = mk_chain(frame, len);
		in[0]->ol_flags |= bc->ol_flags;
		in[0]->tso_segsz = bc->tso_segsz;
		memset(&res, 0, sizeof(res));
		n = encrypt(in, 1, out, RTE_DIM(out), &res);
		egw_esp_ctx_set_ingress_mtu(ctx, 0);
		for (i = 0; i < n; i++) {
			ok &= out[i]->pkt_len - 14 <= 1400;
			/* the segments or fragments decrypt */
			k = egw_esp_inbound_burst(ctx, &out[i], 1, &res);
			ok &= k == 1;
			if (k == 1)
				rte_pktmbuf_free(out[i]);
		}
		if (bc->fate == 'i') {
			CHECK(n == 0 && res.drop[EGW_ESP_DROP_TOO_BIG] == 1 && res.n_icmp == 1,
			      "%s: dropped as too big with an ICMP too-big (%u out, %u ICMP)",
			      bc->what, n, res.n_icmp);
		} else {
			CHECK(n >= 2 && ok && res.n_icmp == 0 && res.created == n - 1u,
			      "%s: %s into %u ESP packets within the mtu that decrypt", bc->what,
			      bc->fate == 's' ? "segmented" : "fragmented", n);
			if (bc->fate == 'f')
				CHECK(n == 2, "%s: 2 fragments", bc->what);
		}
		rte_pktmbuf_free_bulk(res.icmp, res.n_icmp);
	}
}

/*
 * Every frame lib/esp hands back carries the dynamic mbuf fields of the frame
 * it came from (egw_esp.h: the app keeps lib/eth's metadata across ESP by
 * it): encrypted in place, copied first (a shared frame), segmented (TSO),
 * decrypted in place and copied first. A tag in a dynamic field of our own.
 */
static void
test_dynfields(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "test_esp_tag",
		.size = sizeof(uint32_t),
		.align = __alignof__(uint32_t),
	};
	static uint8_t frame[8192];
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
			 .mode = EGW_ESP_MODE_TUNNEL,
			 .outer = AF_INET,
			 .mtu = 1400};
	struct rte_mbuf *in[1], *out[EGW_ESP_MAX_SEGS], *keep;
	struct egw_esp_res res;
	unsigned int shared, i;
	int off = rte_mbuf_dynfield_register(&desc);
	uint16_t n, k;

	CHECK(off >= 0, "dynfields: a dynamic field registered (%d)", off);
	if (off < 0)
		return;
	clear_all();
	if (sa_pair(0x8400, &t) < 0)
		return;
	for (shared = 0; shared < 2; shared++) {
		const char *how = shared ? "copied" : "in place";
		struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 200};
		uint32_t len = build(&p, frame);

		in[0] = mk(frame, len);
		*RTE_MBUF_DYNFIELD(in[0], off, uint32_t *) = 0xa11ce000 + shared;
		/* a second reference: the frame is not lib/esp's to write */
		keep = shared ? in[0] : NULL;
		if (keep != NULL)
			rte_mbuf_refcnt_update(keep, 1);
		memset(&res, 0, sizeof(res));
		n = encrypt(in, 1, out, 1, &res);
		CHECK(n == 1 && (keep == NULL || out[0] != keep),
		      "dynfields: outbound %s: one ESP frame%s", how, keep ? ", a new mbuf" : "");
		if (keep != NULL)
			rte_pktmbuf_free(keep);
		if (n != 1)
			continue;
		CHECK(*RTE_MBUF_DYNFIELD(out[0], off, uint32_t *) == 0xa11ce000 + shared,
		      "dynfields: outbound %s: the ESP frame keeps the tag (%#x)", how,
		      *RTE_MBUF_DYNFIELD(out[0], off, uint32_t *));
		*RTE_MBUF_DYNFIELD(out[0], off, uint32_t *) = 0xb0b0000 + shared;
		keep = shared ? out[0] : NULL;
		if (keep != NULL)
			rte_mbuf_refcnt_update(keep, 1);
		k = egw_esp_inbound_burst(ctx, out, 1, &res);
		CHECK(k == 1 && (keep == NULL || out[0] != keep),
		      "dynfields: inbound %s: decrypted%s", how, keep ? ", a new mbuf" : "");
		if (keep != NULL)
			rte_pktmbuf_free(keep);
		if (k != 1)
			continue;
		CHECK(*RTE_MBUF_DYNFIELD(out[0], off, uint32_t *) == 0xb0b0000 + shared,
		      "dynfields: inbound %s: the clear frame keeps the tag (%#x)", how,
		      *RTE_MBUF_DYNFIELD(out[0], off, uint32_t *));
		rte_pktmbuf_free(out[0]);
	}
	/* segments of a TSO super-packet */
	{
		struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_TCP, .plen = 3000};
		uint32_t len = build(&p, frame);
		bool all = true;

		in[0] = mk_chain(frame, len);
		in[0]->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		in[0]->tso_segsz = 1000;
		*RTE_MBUF_DYNFIELD(in[0], off, uint32_t *) = 0xc0ffee;
		memset(&res, 0, sizeof(res));
		n = encrypt(in, 1, out, RTE_DIM(out), &res);
		for (i = 0; i < n; i++) {
			all &= *RTE_MBUF_DYNFIELD(out[i], off, uint32_t *) == 0xc0ffee;
			rte_pktmbuf_free(out[i]);
		}
		CHECK(n >= 3 && all, "dynfields: each of the %u segments keeps the tag", n);
	}
	clear_all();
}

/* The source of an ICMP too-big is an address of edgegw's: a transport SA
 * has no tunnel end, so a registered local address of the family, else (none
 * registered) the packet's own destination. */
static void
test_icmp_source(void)
{
	static uint8_t frame[4096];
	static const uint8_t local4[4] = {198, 51, 100, 77};
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TRANSPORT, .mtu = 1400};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_TCP, .df = true, .plen = 1410};
	struct egw_esp_addr la = {.family = AF_INET};
	struct rte_mbuf *in[1], *out[EGW_ESP_MAX_SEGS];
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	int pass;

	memcpy(la.a, local4, 4);
	for (pass = 0; pass < 2; pass++) {
		const uint8_t *ip;

		clear_all();
		if (sa_pair(0x8400, &t) < 0)
			return;
		if (pass == 1)
			CHECK(egw_esp_local_addr_add(&la) == 0, "register 198.51.100.77");
		in[0] = mk(frame, len);
		memset(&res, 0, sizeof(res));
		CHECK(encrypt(in, 1, out, RTE_DIM(out), &res) == 0 && res.n_icmp == 1,
		      "DF TCP too big: one ICMP (%u)", res.n_icmp);
		if (res.n_icmp != 1)
			continue;
		ip = rte_pktmbuf_mtod(res.icmp[0], const uint8_t *) + 14;
		if (pass == 0)
			CHECK(memcmp(ip + 12, frame + 14 + 16, 4) == 0,
			      "no local address: from the packet's destination");
		else
			CHECK(memcmp(ip + 12, local4, 4) == 0,
			      "from the registered local address, not the packet's destination");
		rte_pktmbuf_free_bulk(res.icmp, res.n_icmp);
	}
	CHECK(egw_esp_local_addr_del(&la) == 0, "unregister");
}

/* NAT-T over IPv6 in transport mode with a segment routing header that
 * still has a segment left: the UDP pseudo-header names the final
 * destination, Segment List[0] (RFC 8200 8.1, RFC 8754), not the header's. */
static void
test_natt6_routing(void)
{
	static const uint8_t final[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,    0,
					  0,    0,    0,    0,    0, 0, 0x99, 9};
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TRANSPORT, .natt = true};
	struct t_pkt p = {.family = AF_INET6, .proto = IPPROTO_UDP, .plen = 101};
	static uint8_t frame[512], srh[512];
	struct rte_mbuf *in[1], *out[1];
	struct rte_ipv6_hdr *h;
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	const uint8_t *f, *u;
	uint16_t n;

	/* the frame with a 24-byte routing header type 4 after the IPv6 header */
	memcpy(srh, frame, 14 + 40);
	memset(srh + 54, 0, 24);
	srh[54] = IPPROTO_UDP;
	srh[55] = 2;
	srh[56] = 4; /* SRH */
	srh[57] = 1; /* segments left */
	memcpy(srh + 54 + 8, final, 16);
	memcpy(srh + 54 + 24, frame + 54, len - 54);
	h = (struct rte_ipv6_hdr *)(srh + 14);
	h->proto = IPPROTO_ROUTING;
	h->payload_len = rte_cpu_to_be_16((uint16_t)(len - 54 + 24));
	clear_all();
	if (sa_pair(0x8500, &t) < 0)
		return;
	in[0] = mk(srh, len + 24);
	memset(&res, 0, sizeof(res));
	n = encrypt(in, 1, out, 1, &res);
	CHECK(n == 1, "NAT-T v6 with a routing header: one ESP frame");
	if (n != 1)
		return;
	f = rte_pktmbuf_mtod(out[0], const uint8_t *) + 14;
	u = f + 40 + 24;
	CHECK(f[40] == IPPROTO_UDP && t_udp6_sum(f + 8, final, u) == 0,
	      "NAT-T v6 with a routing header: UDP checksum over the final destination");
	rte_pktmbuf_free(out[0]);
}

/* Transport mode, IPv4 without DF, too big: the ESP packet is made whole,
 * then fragmented to the SA's mtu (RFC 4303 3.3.4). The fragments,
 * reassembled here by hand, are an ESP packet the inbound path turns back
 * into the original. */
static void
test_transport_frag(void)
{
	static const struct {
		uint16_t ip_len;
		bool natt;
		uint16_t mtu;
	} cases[] = {
		{1450, false, 1400},
		{1800, false, 1400},
		{1800, true, 1280},
		{1850, false, 1280},
	};
	static uint8_t frame[4096], esp[4096];
	unsigned int ci;

	for (ci = 0; ci < RTE_DIM(cases); ci++) {
		struct t_sa t = {.aead = EGW_ESP_AES256_GCM,
				 .mode = EGW_ESP_MODE_TRANSPORT,
				 .natt = cases[ci].natt,
				 .mtu = cases[ci].mtu};
		struct t_pkt p = {.family = AF_INET,
				  .proto = IPPROTO_UDP,
				  .plen = (uint16_t)(cases[ci].ip_len - 28),
				  .seed = (uint8_t)ci};
		struct rte_mbuf *in[1], *out[EGW_ESP_MAX_SEGS], *m;
		struct egw_esp_ctx_stats before, after;
		struct rte_ipv4_hdr *h;
		struct egw_esp_res res;
		uint32_t len = build(&p, frame), glen, total = 0, have = 0, i;
		bool frags_ok = true, last_seen = false;
		uint16_t n, k;
		char what[96];

		snprintf(what, sizeof(what), "transport v4 %u bytes without DF, mtu %u%s",
			 cases[ci].ip_len, cases[ci].mtu, cases[ci].natt ? ", NAT-T" : "");
		clear_all();
		if (sa_pair(0x8400, &t) < 0)
			return;
		egw_esp_ctx_stats(ctx, &before);
		in[0] = mk(frame, len);
		memset(&res, 0, sizeof(res));
		n = encrypt(in, 1, out, RTE_DIM(out), &res);
		egw_esp_ctx_stats(ctx, &after);
		CHECK(n >= 2 && res.n_icmp == 0 && res.drop[EGW_ESP_DROP_TOO_BIG] == 0 &&
			      res.created == n - 1u && after.fragments - before.fragments == n - 1u,
		      "%s: %u fragments, no ICMP, counted as made", what, n);
		rte_pktmbuf_free_bulk(res.icmp, res.n_icmp);
		if (n < 2)
			continue;
		/* reassemble: payload at its offset, the first fragment's headers */
		memset(esp, 0, sizeof(esp));
		for (i = 0; i < n; i++) {
			const uint8_t *f = rte_pktmbuf_mtod(out[i], const uint8_t *);
			const struct rte_ipv4_hdr *fh = (const struct rte_ipv4_hdr *)(f + 14);
			uint16_t fo = rte_be_to_cpu_16(fh->fragment_offset);
			uint32_t off = (uint32_t)(fo & RTE_IPV4_HDR_OFFSET_MASK) * 8;
			uint32_t plen = rte_be_to_cpu_16(fh->total_length) - 20u;

			frags_ok &=
				out[i]->nb_segs == 1 && out[i]->pkt_len == 14 + 20 + plen &&
				20 + plen <= cases[ci].mtu && rte_ipv4_cksum(fh) == 0 &&
				fh->packet_id == rte_cpu_to_be_16(0x1234) &&
				fh->next_proto_id == (cases[ci].natt ? IPPROTO_UDP : IPPROTO_ESP) &&
				(fo & RTE_IPV4_HDR_DF_FLAG) == 0 && off + plen <= 4000;
			if (!frags_ok)
				break;
			if (off == 0)
				memcpy(esp, f, 14 + 20);
			memcpy(esp + 14 + 20 + off, f + 14 + 20, plen);
			have += plen;
			if ((fo & RTE_IPV4_HDR_MF_FLAG) == 0) {
				last_seen = true;
				total = off + plen;
			}
		}
		rte_pktmbuf_free_bulk(out, n);
		CHECK(frags_ok && last_seen && have == total,
		      "%s: fragments within the mtu, ids and headers right, they cover %u bytes",
		      what, total);
		if (!frags_ok || !last_seen)
			continue;
		h = (struct rte_ipv4_hdr *)(esp + 14);
		h->total_length = rte_cpu_to_be_16((uint16_t)(20 + total));
		h->fragment_offset = 0;
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
		m = mk(esp, 14 + 20 + total);
		CHECK(m != NULL && esp_peer_reseal(&peers, m) == 0,
		      "%s: the reassembled ESP packet verifies with the outbound key", what);
		k = egw_esp_inbound_burst(ctx, &m, 1, &res);
		CHECK(k == 1, "%s: the reassembled ESP packet decrypts", what);
		if (k != 1)
			continue;
		glen = flat(m, esp);
		CHECK(glen == len && memcmp(esp, frame, len) == 0, "%s: back to the original",
		      what);
		rte_pktmbuf_free(m);
	}
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
	rc = egw_esp_state_file(path, true, err, sizeof(err));
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
	rc = egw_esp_state_file(path, false, err, sizeof(err));
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
		rc = egw_esp_state_file(path, false, err, sizeof(err));
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
	rc = egw_esp_state_file(bad, false, err, sizeof(err));
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
	rc = egw_esp_state_file(path, false, err, sizeof(err));
	CHECK(rc == 0, "back to a good state file: %s", err);
}

/* ---- one key, one SA; the state file per key ----------------------------- */

#define SEQ_BLOCK_NEW (UINT64_C(1) << 18) /* numbers a new SA reserves (sa.c) */

/* A key of the tests' own, tag apart from every other (key_for() varies
 * bytes 0-1, these vary byte 5). */
static void
fixed_key(uint8_t tag, uint8_t *k)
{
	unsigned int i;

	for (i = 0; i < EGW_ESP_KEY_MAX; i++)
		k[i] = (uint8_t)(0xc0 ^ (i * 11));
	k[5] ^= tag;
}

/* A transport-mode AES-128-GCM SA of one direction with key k. */
static int
one_sa(uint32_t spi, enum egw_esp_dir dir, const uint8_t *k, uint64_t seq_start)
{
	struct egw_esp_sa_conf c;

	memset(&c, 0, sizeof(c));
	c.spi = spi;
	c.dir = dir;
	c.mode = EGW_ESP_MODE_TRANSPORT;
	c.aead = EGW_ESP_AES128_GCM;
	c.key_len = (uint8_t)egw_esp_aead_key_len(c.aead);
	memcpy(c.key, k, c.key_len);
	c.seq_start = seq_start;
	err[0] = '\0';
	return egw_esp_sa_add(&c, err, sizeof(err));
}

static uint64_t
sa_seq(uint32_t spi, uint64_t *limit)
{
	struct egw_esp_sa_info info;

	memset(&info, 0, sizeof(info));
	if (egw_esp_sa_info(spi, EGW_ESP_DIR_OUT, &info) != 0)
		return 0;
	if (limit != NULL)
		*limit = info.seq_limit;
	return info.seq;
}

/* What a state file holds, read back independently of the library. */
struct t_state {
	int version;    /* 1, 2, or 0: no magic line */
	bool crc_ok;    /* "crc <8 hex>" = rte_hash_crc(everything before, seed 0) */
	unsigned int n; /* key (or v1: sa) lines */
	char fp[33];    /* fingerprint of the first line, or of the line asked for */
	uint64_t limit; /* its limit */
	bool found;
};

static void
state_read(const char *path, const char *want_fp, struct t_state *st)
{
	static char buf[4 << 20];
	char *line, *crc_line;
	size_t len;
	FILE *f = fopen(path, "r");

	memset(st, 0, sizeof(*st));
	if (f == NULL)
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if (strncmp(buf, "edgegw-esp-state 2\n", 19) == 0)
		st->version = 2;
	else if (strncmp(buf, "edgegw-esp-state 1\n", 19) == 0)
		st->version = 1;
	crc_line = strstr(buf, "\ncrc ");
	if (crc_line != NULL) {
		uint32_t crc = (uint32_t)strtoul(crc_line + 5, NULL, 16);

		crc_line++;
		st->crc_ok = rte_hash_crc(buf, (uint32_t)(crc_line - buf), 0) == crc &&
			     strlen(crc_line) == sizeof("crc 01234567\n") - 1;
	}
	for (line = strchr(buf, '\n'); line != NULL && line[1] != '\0'; line = strchr(line, '\n')) {
		char fp[33];
		uint64_t lim;
		unsigned int spi;

		line++;
		if ((st->version == 2 && sscanf(line, "key %32s %" SCNu64, fp, &lim) == 2) ||
		    (st->version == 1 &&
		     sscanf(line, "sa %x %32s %" SCNu64, &spi, fp, &lim) == 3)) {
			if ((want_fp == NULL && st->n == 0) ||
			    (want_fp != NULL && strcmp(fp, want_fp) == 0)) {
				memcpy(st->fp, fp, sizeof(st->fp));
				st->limit = lim;
				st->found = true;
			}
			st->n++;
		}
	}
}

/* Write a state file: the lines as given, then a correct CRC. */
static int
state_write(const char *path, const char *body)
{
	static char buf[4 << 20];
	size_t len = strlen(body);
	FILE *f;

	if (len + 16 > sizeof(buf))
		return -1;
	memcpy(buf, body, len);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "crc %08x\n",
				(unsigned int)rte_hash_crc(buf, (uint32_t)len, 0));
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	if (fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

static int
use_state(const char *name, bool create)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	err[0] = '\0';
	return egw_esp_state_file(path, create, err, sizeof(err));
}

/*
 * One key, one sequence of nonces: a key (+ salt) in use by a live SA is
 * refused for any other SA of either direction; once its SA is gone, the
 * key under a new SPI continues above the numbers persisted for it, also
 * across a restart that reloads the state file.
 */
static void
test_key_reuse(void)
{
	uint8_t k1[EGW_ESP_KEY_MAX], k2[EGW_ESP_KEY_MAX], k1s[EGW_ESP_KEY_MAX];
	uint64_t lim_a, lim_b, lim;
	int rc;

	clear_all();
	CHECK(use_state("reuse", true) == 0, "fresh state file for the key tests: %s", err);
	fixed_key(1, k1);
	fixed_key(2, k2);
	CHECK(one_sa(0x9000, EGW_ESP_DIR_OUT, k1, 0) == 0, "outbound SA 0x9000: %s", err);
	CHECK(sa_seq(0x9000, &lim_a) == 1 && lim_a == 1 + SEQ_BLOCK_NEW,
	      "0x9000 starts at 1, limit 1 + 2^18 (%" PRIu64 ")", lim_a);

	rc = one_sa(0x9001, EGW_ESP_DIR_OUT, k1, 0);
	CHECK(rc == -EADDRINUSE && strstr(err, "0x9000") != NULL,
	      "second outbound SA with a live outbound SA's key refused (%d: %s)", rc, err);
	rc = one_sa(0x9002, EGW_ESP_DIR_IN, k1, 0);
	CHECK(rc == -EADDRINUSE && strstr(err, "outbound SA 0x9000") != NULL,
	      "inbound SA with a live outbound SA's key refused (%d: %s)", rc, err);
	rc = one_sa(0x9000, EGW_ESP_DIR_IN, k1, 0);
	CHECK(rc == -EADDRINUSE, "inbound SA, same SPI, same key refused (%d: %s)", rc, err);
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 1 && egw_esp_sa_count(EGW_ESP_DIR_IN) == 0,
	      "refusals change nothing (%u out, %u in)", egw_esp_sa_count(EGW_ESP_DIR_OUT),
	      egw_esp_sa_count(EGW_ESP_DIR_IN));

	CHECK(one_sa(0x9003, EGW_ESP_DIR_IN, k2, 0) == 0, "inbound SA 0x9003: %s", err);
	rc = one_sa(0x9004, EGW_ESP_DIR_OUT, k2, 0);
	CHECK(rc == -EADDRINUSE && strstr(err, "inbound SA 0x9003") != NULL,
	      "outbound SA with a live inbound SA's key refused (%d: %s)", rc, err);
	rc = one_sa(0x9005, EGW_ESP_DIR_IN, k2, 0);
	CHECK(rc == -EADDRINUSE, "second inbound SA with the key refused (%d: %s)", rc, err);
	CHECK(egw_esp_state_keys() == 1, "refused outbound SA left no key in the state file (%u)",
	      egw_esp_state_keys());
	/* the salt is part of the nonce: the same key with another salt is
	 * another sequence of nonces */
	memcpy(k1s, k1, sizeof(k1s));
	k1s[19] ^= 1;
	CHECK(one_sa(0x9006, EGW_ESP_DIR_OUT, k1s, 0) == 0, "same key, another salt: accepted (%s)",
	      err);
	egw_esp_sa_del(0x9006, EGW_ESP_DIR_OUT, err, sizeof(err));

	/* the first SA goes: its key is free, under any SPI, above its numbers */
	CHECK(egw_esp_sa_del(0x9000, EGW_ESP_DIR_OUT, err, sizeof(err)) == 0, "delete 0x9000");
	CHECK(one_sa(0x9010, EGW_ESP_DIR_OUT, k1, 0) == 0, "key of 0x9000 under SPI 0x9010: %s",
	      err);
	CHECK(sa_seq(0x9010, &lim_b) == lim_a + 1 && lim_b == lim_a + 1 + SEQ_BLOCK_NEW,
	      "SPI 0x9010 continues above 0x9000's limit %" PRIu64 " (seq %" PRIu64
	      ", limit %" PRIu64 ")",
	      lim_a, sa_seq(0x9010, NULL), lim_b);
	rc = one_sa(0x9011, EGW_ESP_DIR_IN, k1, 0);
	CHECK(rc == -EADDRINUSE, "the key is taken again (inbound refused: %d)", rc);
	/* the inbound SA goes: its key may now be used outbound */
	CHECK(egw_esp_sa_del(0x9003, EGW_ESP_DIR_IN, err, sizeof(err)) == 0, "delete 0x9003");
	CHECK(one_sa(0x9004, EGW_ESP_DIR_OUT, k2, 0) == 0 && sa_seq(0x9004, NULL) == 1,
	      "inbound SA's key outbound once it is gone: %s", err);

	/* restart: everything goes, the file stays; the key comes back under
	 * yet another SPI */
	clear_all();
	egw_esp_fini();
	CHECK(egw_esp_init(qs) == 0, "re-init");
	CHECK(use_state("reuse", false) == 0, "state file reloads: %s", err);
	CHECK(egw_esp_state_keys() == 3,
	      "three keys (k1, k1 with another salt, k2) in the "
	      "reloaded file (%u)",
	      egw_esp_state_keys());
	CHECK(one_sa(0x9020, EGW_ESP_DIR_OUT, k1, 0) == 0, "key after restart, SPI 0x9020: %s",
	      err);
	CHECK(sa_seq(0x9020, &lim) == lim_b + 1 && lim == lim_b + 1 + SEQ_BLOCK_NEW,
	      "after the restart SPI 0x9020 starts above %" PRIu64 " (seq %" PRIu64 ")", lim_b,
	      sa_seq(0x9020, NULL));
	clear_all();
	CHECK(use_state("state", false) == 0, "back to the main state file: %s", err);
}

/* The state file: create or load, version 1 files, the full table. */
static void
test_state_versions(void)
{
	uint8_t k3[EGW_ESP_KEY_MAX], k4[EGW_ESP_KEY_MAX], k5[EGW_ESP_KEY_MAX];
	char path[128], main_path[128], fp3[33], *body;
	struct t_state st;
	uint64_t lim;
	unsigned int i;
	size_t blen = 0, bcap = (size_t)(EGW_ESP_STATE_MAX + 2) * 64;
	int rc;

	clear_all();
	snprintf(main_path, sizeof(main_path), "%s/state", state_dir);
	fixed_key(3, k3);
	fixed_key(4, k4);
	fixed_key(5, k5);

	/* a missing file is an error unless the operator says it is new */
	snprintf(path, sizeof(path), "%s/missing", state_dir);
	rc = egw_esp_state_file(path, false, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "does not exist") != NULL,
	      "missing state file without create refused (%d: %s)", rc, err);
	CHECK(access(path, F_OK) != 0, "and not created");
	CHECK(egw_esp_state_path() != NULL && strcmp(egw_esp_state_path(), main_path) == 0 &&
		      one_sa(0x9100, EGW_ESP_DIR_OUT, k3, 0) == 0,
	      "the refusal leaves the state file in use (%s, %s)",
	      egw_esp_state_path() ? egw_esp_state_path() : "none", err);
	clear_all();
	rc = egw_esp_state_file(main_path, true, err, sizeof(err));
	CHECK(rc == -EEXIST && strstr(err, "exists") != NULL,
	      "create on an existing file refused (%d: %s)", rc, err);
	CHECK(egw_esp_state_path() != NULL && strcmp(egw_esp_state_path(), main_path) == 0 &&
		      one_sa(0x9100, EGW_ESP_DIR_OUT, k3, 0) == 0,
	      "that refusal too leaves the state file in use (%s)", err);
	clear_all();
	CHECK(use_state("state", false) == 0, "main file loads: %s", err);

	/* (c) a new SA's first persisted limit: start + 2^18, on disk */
	CHECK(use_state("v2a", true) == 0, "fresh file: %s", err);
	CHECK(one_sa(0x9100, EGW_ESP_DIR_OUT, k3, 0) == 0, "SA 0x9100: %s", err);
	snprintf(path, sizeof(path), "%s/v2a", state_dir);
	state_read(path, NULL, &st);
	CHECK(st.version == 2 && st.crc_ok && st.n == 1 && st.limit == 1 + SEQ_BLOCK_NEW &&
		      sa_seq(0x9100, &lim) == 1 && lim == st.limit,
	      "new SA: first limit 1 + 2^18 persisted (v%d, crc %d, %u keys, %" PRIu64 ")",
	      st.version, st.crc_ok, st.n, st.limit);
	memcpy(fp3, st.fp, sizeof(fp3));
	CHECK(one_sa(0x9101, EGW_ESP_DIR_OUT, k4, 1000) == 0 && sa_seq(0x9101, &lim) == 1000 &&
		      lim == 1000 + SEQ_BLOCK_NEW,
	      "seq_start 1000: limit 1000 + 2^18 (%" PRIu64 ")", lim);
	state_read(path, NULL, &st);
	CHECK(st.n == 2, "two keys on disk (%u)", st.n);
	clear_all();

	/* a version 1 file: one line per SPI; two lines of one key load as the
	 * key with the higher limit */
	snprintf(path, sizeof(path), "%s/v1", state_dir);
	body = malloc(bcap);
	if (body == NULL) {
		CHECK(0, "malloc");
		return;
	}
	snprintf(body, bcap,
		 "edgegw-esp-state 1\nsa 00009100 %s 70000\nsa 00009177 %s 5000\n"
		 "sa 00009178 0123456789abcdef0123456789abcdef 9\n",
		 fp3, fp3);
	CHECK(state_write(path, body) == 0, "write v1 file");
	CHECK(egw_esp_state_file(path, false, err, sizeof(err)) == 0, "v1 file loads: %s", err);
	CHECK(egw_esp_state_keys() == 2, "v1: 3 lines, 2 keys (%u)", egw_esp_state_keys());
	CHECK(one_sa(0x9200, EGW_ESP_DIR_OUT, k3, 0) == 0, "key of the v1 lines, SPI 0x9200: %s",
	      err);
	CHECK(sa_seq(0x9200, &lim) == 70001 && lim == 70001 + SEQ_BLOCK_NEW,
	      "continues above the higher v1 limit 70000 (seq %" PRIu64 ")", sa_seq(0x9200, NULL));
	state_read(path, fp3, &st);
	CHECK(st.version == 2 && st.crc_ok && st.n == 2 && st.found && st.limit == lim,
	      "rewritten as version 2 (v%d, crc %d, %u keys, limit %" PRIu64 ")", st.version,
	      st.crc_ok, st.n, st.limit);
	state_read(path, "0123456789abcdef0123456789abcdef", &st);
	CHECK(st.found && st.limit == 9, "the other v1 key kept with its limit (%" PRIu64 ")",
	      st.limit);
	clear_all();

	/* a full table: EGW_ESP_STATE_MAX keys, one of them k3's */
	blen = (size_t)snprintf(body, bcap, "edgegw-esp-state 2\nkey %s 100\n", fp3);
	for (i = 1; i < EGW_ESP_STATE_MAX; i++)
		blen += (size_t)snprintf(body + blen, bcap - blen, "key %08x%024x %u\n",
					 0xfeed0000u + i, i, i);
	snprintf(path, sizeof(path), "%s/full", state_dir);
	CHECK(state_write(path, body) == 0, "write a full file");
	CHECK(egw_esp_state_file(path, false, err, sizeof(err)) == 0 &&
		      egw_esp_state_keys() == EGW_ESP_STATE_MAX,
	      "full file loads: %u keys (%s)", egw_esp_state_keys(), err);
	rc = one_sa(0x9300, EGW_ESP_DIR_OUT, k4, 0);
	CHECK(rc == -ENOSPC && strstr(err, "32768") != NULL,
	      "a new key on a full table refused (%d: %s)", rc, err);
	CHECK(egw_esp_sa_count(EGW_ESP_DIR_OUT) == 0 && egw_esp_state_keys() == EGW_ESP_STATE_MAX,
	      "nothing added, nothing forgotten (%u keys)", egw_esp_state_keys());
	state_read(path, fp3, &st);
	CHECK(st.n == EGW_ESP_STATE_MAX && st.found && st.limit == 100,
	      "the file keeps every key (%u)", st.n);
	CHECK(one_sa(0x9301, EGW_ESP_DIR_OUT, k3, 0) == 0 && sa_seq(0x9301, NULL) == 101,
	      "a key the full file holds is fine, above its limit (%s)", err);
	CHECK(one_sa(0x9302, EGW_ESP_DIR_IN, k5, 0) == 0, "inbound SAs need no room: %s", err);
	rc = egw_esp_state_prune(err, sizeof(err));
	CHECK(rc == EGW_ESP_STATE_MAX - 1 && egw_esp_state_keys() == 1,
	      "prune drops the keys no SA uses (%d, %u left: %s)", rc, egw_esp_state_keys(), err);
	state_read(path, fp3, &st);
	CHECK(st.version == 2 && st.crc_ok && st.n == 1 && st.found,
	      "pruned file: the live key alone (%u keys)", st.n);
	CHECK(one_sa(0x9300, EGW_ESP_DIR_OUT, k4, 0) == 0 && egw_esp_state_keys() == 2,
	      "room again for a new key (%s)", err);
	clear_all();

	/* more than EGW_ESP_STATE_MAX keys: corrupt, refused */
	blen = (size_t)snprintf(body, bcap, "edgegw-esp-state 2\n");
	for (i = 0; i <= EGW_ESP_STATE_MAX; i++)
		blen += (size_t)snprintf(body + blen, bcap - blen, "key %08x%024x %u\n",
					 0xbeef0000u + i, i, i);
	snprintf(path, sizeof(path), "%s/overfull", state_dir);
	CHECK(state_write(path, body) == 0, "write an over-full file");
	rc = egw_esp_state_file(path, false, err, sizeof(err));
	CHECK(rc == -EINVAL, "file of %u keys refused (%d: %s)", EGW_ESP_STATE_MAX + 1, rc, err);
	free(body);
	CHECK(use_state("state", false) == 0, "back to the main state file: %s", err);
}

/* ---- ECN on decapsulation (RFC 6040 4.2) ---------------------------------- */

#define ECN_DROP 0xff

static void
set_ecn(uint8_t *ip, uint8_t ecn)
{
	if ((ip[0] >> 4) == 4) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		h->type_of_service = (uint8_t)((h->type_of_service & ~3) | ecn);
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else {
		ip[1] = (uint8_t)((ip[1] & ~0x30) | ecn << 4);
	}
}

static void
test_ecn(void)
{
	/* RFC 6040 figure 4: rows the inner field, columns the outer one
	 * (Not-ECT 0, ECT(1) 1, ECT(0) 2, CE 3) */
	static const uint8_t decap[4][4] = {
		/* inner Not-ECT */ {0, 0, 0, ECN_DROP},
		/* inner ECT(1) */ {1, 1, 1, 3},
		/* inner ECT(0) */ {2, 1, 2, 3},
		/* inner CE */ {3, 3, 3, 3},
	};
	static const char *const names[4] = {"Not-ECT", "ECT(1)", "ECT(0)", "CE"};
	static uint8_t frame[512], want[512], got[512];
	unsigned int outer, inner, o, i;
	char what[128];

	for (outer = 0; outer < 2; outer++)
		for (inner = 0; inner < 2; inner++) {
			struct t_sa t = {.aead = EGW_ESP_AES128_GCM,
					 .mode = EGW_ESP_MODE_TUNNEL,
					 .outer = outer ? AF_INET6 : AF_INET};
			struct t_pkt p = {.family = inner ? AF_INET6 : AF_INET,
					  .proto = IPPROTO_UDP,
					  .plen = 40};

			clear_all();
			if (sa_pair(0xa000, &t) < 0) {
				CHECK(0, "ECN SA set-up");
				return;
			}
			for (i = 0; i < 4; i++)
				for (o = 0; o < 4; o++) {
					struct rte_mbuf *in[1], *out[1];
					struct egw_esp_res res;
					uint32_t len = build(&p, frame), glen;
					uint8_t e = decap[i][o];
					uint16_t k;

					set_ecn(frame + 14, (uint8_t)i);
					memcpy(want, frame, len);
					if (e != ECN_DROP)
						set_ecn(want + 14, e);
					snprintf(what, sizeof(what), "ECN outer %s %s, inner %s %s",
						 outer ? "v6" : "v4", names[o], inner ? "v6" : "v4",
						 names[i]);
					memset(&res, 0, sizeof(res));
					in[0] = mk(frame, len);
					if (encrypt(in, 1, out, 1, &res) != 1) {
						CHECK(0, "%s: encrypt", what);
						continue;
					}
					/* the outer field is not covered by the ICV */
					set_ecn(rte_pktmbuf_mtod(out[0], uint8_t *) + 14,
						(uint8_t)o);
					memset(&res, 0, sizeof(res));
					k = egw_esp_inbound_burst(ctx, out, 1, &res);
					if (e == ECN_DROP) {
						CHECK(k == 0 && res.drop[EGW_ESP_DROP_ECN] == 1,
						      "%s: dropped as esp_ecn", what);
						if (k == 1)
							rte_pktmbuf_free(out[0]);
						continue;
					}
					CHECK(k == 1, "%s: accepted", what);
					if (k != 1)
						continue;
					glen = flat(out[0], got);
					CHECK(glen == len && memcmp(got, want, len) == 0,
					      "%s: inner becomes %s (checksum right), rest "
					      "unchanged",
					      what, names[e]);
					rte_pktmbuf_free(out[0]);
				}
		}
	clear_all();
}

/* ---- ESP to edgegw, transit ESP, fragments --------------------------------- */

/* An ESP-looking frame (not decryptable): to dst, protocol 50 or NAT-T to
 * port 4500 with SPI spi; IPv6 with frag: behind a fragment header; IPv4
 * with frag: MF set. */
static uint32_t
esp_frame(uint8_t *f, const struct egw_esp_addr *dst, bool natt, uint32_t spi, bool frag)
{
	uint32_t esp_len = 8 + 8 + 16 + 16, off, i;
	uint8_t *ip = f + 14, *e;

	memset(f, 0, 14 + 40 + 8 + 8 + esp_len);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	if (dst->family == AF_INET) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		f[12] = 0x08;
		h->version_ihl = 0x45;
		h->time_to_live = 64;
		h->next_proto_id = natt ? IPPROTO_UDP : IPPROTO_ESP;
		h->fragment_offset = frag ? rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG) : 0;
		memcpy(&h->src_addr, (uint8_t[]){198, 51, 100, 7}, 4);
		memcpy(&h->dst_addr, dst->a, 4);
		off = 20;
	} else {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

		f[12] = 0x86;
		f[13] = 0xdd;
		h->vtc_flow = rte_cpu_to_be_32(6u << 28);
		h->hop_limits = 64;
		h->src_addr[0] = 0x20;
		h->src_addr[1] = 0x01;
		h->src_addr[15] = 7;
		memcpy(h->dst_addr, dst->a, 16);
		off = 40;
		h->proto = natt ? IPPROTO_UDP : IPPROTO_ESP;
		if (frag) {
			h->proto = IPPROTO_FRAGMENT;
			ip[off] = natt ? IPPROTO_UDP : IPPROTO_ESP;
			ip[off + 3] = 1; /* offset 0, more fragments */
			esp_put32(ip + off + 4, 0x1234);
			off += 8;
		}
	}
	if (natt) {
		struct rte_udp_hdr *u = (struct rte_udp_hdr *)(ip + off);

		u->src_port = rte_cpu_to_be_16(4500);
		u->dst_port = rte_cpu_to_be_16(4500);
		u->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + esp_len));
		off += 8;
	}
	e = ip + off;
	esp_put32(e, spi);
	esp_put32(e + 4, 1);
	for (i = 8; i < esp_len; i++)
		e[i] = (uint8_t)i;
	off += esp_len;
	if (dst->family == AF_INET) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		h->total_length = rte_cpu_to_be_16((uint16_t)off);
		h->hdr_checksum = rte_ipv4_cksum(h);
	} else {
		((struct rte_ipv6_hdr *)ip)->payload_len = rte_cpu_to_be_16((uint16_t)(off - 40));
	}
	return 14 + off;
}

static bool
is_esp(const uint8_t *f, uint32_t len)
{
	struct rte_mbuf *m = mk(f, len);
	bool r = egw_esp_is_esp(m);

	rte_pktmbuf_free(m);
	return r;
}

/* Through egw_esp_inbound_clear(): passed unchanged (1) or dropped for why. */
static void
clear_one(const uint8_t *f, uint32_t len, enum egw_esp_drop why, const char *what)
{
	static uint8_t got[2048];
	struct rte_mbuf *m = mk(f, len);
	struct egw_esp_res res;
	uint16_t k;

	memset(&res, 0, sizeof(res));
	k = egw_esp_inbound_clear(ctx, &m, 1, &res);
	if (why == EGW_ESP_DROP_MAX) {
		CHECK(k == 1 && flat(m, got) == len && memcmp(got, f, len) == 0,
		      "%s: passes egw_esp_inbound_clear() unchanged", what);
	} else {
		CHECK(k == 0 && res.drop[why] == 1, "%s: dropped by egw_esp_inbound_clear() as %s",
		      what, egw_esp_drop_name(why));
	}
	if (k == 1)
		rte_pktmbuf_free(m);
}

static void
test_is_esp(void)
{
	static uint8_t f[256];
	struct egw_esp_addr loc4, loc6, far4, far6, tun4;
	struct egw_esp_sa_conf c;
	struct egw_esp_policy p;
	uint32_t len;
	uint8_t k[EGW_ESP_KEY_MAX];

	clear_all();
	addr(&loc4, AF_INET, 2);
	addr(&loc6, AF_INET6, 2);
	addr(&far4, AF_INET, 77);
	addr(&far6, AF_INET6, 77);
	addr(&tun4, AF_INET, 99);
	/* a NAT-T inbound SA: port 4500 is an ESP port */
	fixed_key(6, k);
	memset(&c, 0, sizeof(c));
	c.spi = 0x9400;
	c.dir = EGW_ESP_DIR_IN;
	c.mode = EGW_ESP_MODE_TRANSPORT;
	c.aead = EGW_ESP_AES128_GCM;
	c.key_len = 20;
	memcpy(c.key, k, 20);
	c.natt = true;
	CHECK(egw_esp_sa_add(&c, err, sizeof(err)) == 0, "NAT-T transport SA: %s", err);

	/* nothing registered: all of it is transit */
	len = esp_frame(f, &loc4, false, 0x9400, false);
	CHECK(!is_esp(f, len), "ESP to an address not (yet) registered: transit");
	CHECK(egw_esp_local_addr_add(&loc4) == 0 && egw_esp_local_addr_add(&loc6) == 0,
	      "register 192.0.2.2 and 2001:db8::2");
	CHECK(is_esp(f, len), "IPv4 ESP to a local address: ours");
	len = esp_frame(f, &loc4, true, 0x9400, false);
	CHECK(is_esp(f, len), "IPv4 NAT-T to a local address: ours");
	len = esp_frame(f, &loc4, true, 0, false);
	CHECK(!is_esp(f, len), "IKE (SPI 0) on port 4500 to a local address: not ESP");
	len = esp_frame(f, &loc6, false, 0x9400, false);
	CHECK(is_esp(f, len), "IPv6 ESP to a local address: ours");
	len = esp_frame(f, &loc6, true, 0x9400, false);
	CHECK(is_esp(f, len), "IPv6 NAT-T to a local address: ours");

	/* transit: a subscriber's own IPsec, forwarded like any packet */
	len = esp_frame(f, &far4, false, 0x9400, false);
	CHECK(!is_esp(f, len), "IPv4 ESP to another address: transit");
	clear_one(f, len, EGW_ESP_DROP_MAX, "IPv4 transit ESP (no inbound policy)");
	len = esp_frame(f, &far4, true, 0x9400, false);
	CHECK(!is_esp(f, len), "IPv4 NAT-T to another address: transit");
	clear_one(f, len, EGW_ESP_DROP_MAX, "IPv4 transit NAT-T (no inbound policy)");
	len = esp_frame(f, &far6, false, 0x9400, false);
	CHECK(!is_esp(f, len), "IPv6 ESP to another address: transit");
	clear_one(f, len, EGW_ESP_DROP_MAX, "IPv6 transit ESP (no inbound policy)");
	len = esp_frame(f, &far6, true, 0x9400, false);
	CHECK(!is_esp(f, len), "IPv6 NAT-T to another address: transit");
	clear_one(f, len, EGW_ESP_DROP_MAX, "IPv6 transit NAT-T (no inbound policy)");

	/* a burst split by egw_esp_split_burst(): each frame as
	 * egw_esp_is_esp() decides it, with runs of one address and changes
	 * of address and family in it, both groups in their order */
	{
		static const struct {
			int a; /* 0 loc4, 1 far4, 2 loc6, 3 far6 */
			bool natt;
			uint32_t spi;
			bool want;
		} bs[] = {
			{0, false, 0x9400, true},  {0, false, 0x9400, true},
			{1, false, 0x9400, false}, {0, true, 0x9400, true},
			{2, false, 0x9400, true},  {3, false, 0x9400, false},
			{3, true, 0x9400, false},  {2, true, 0x9400, true},
			{0, true, 0, false},       {1, true, 0x9400, false},
			{0, false, 0x9400, true},
		};
		const struct egw_esp_addr *as[] = {&loc4, &far4, &loc6, &far6};
		struct rte_mbuf *bp[RTE_DIM(bs)], *orig[RTE_DIM(bs)], *be[RTE_DIM(bs)];
		uint16_t ne, nc, ie = 0, ic = 0;
		unsigned int j, bad = 0;

		for (j = 0; j < RTE_DIM(bs); j++) {
			len = esp_frame(f, as[bs[j].a], bs[j].natt, bs[j].spi, false);
			bp[j] = orig[j] = mk(f, len);
			CHECK(egw_esp_is_esp(bp[j]) == bs[j].want, "burst frame %u alone", j);
		}
		ne = egw_esp_split_burst(bp, RTE_DIM(bs), be, &nc);
		CHECK(ne + nc == RTE_DIM(bs), "split: %u + %u frames of %zu", ne, nc, RTE_DIM(bs));
		for (j = 0; j < RTE_DIM(bs) && ne + nc == RTE_DIM(bs); j++) {
			if (bs[j].want)
				bad += ie >= ne || be[ie++] != orig[j];
			else
				bad += ic >= nc || bp[ic++] != orig[j];
		}
		CHECK(bad == 0 && ie == ne && ic == nc, "split: %u frames misplaced", bad);
		for (j = 0; j < RTE_DIM(bs); j++)
			rte_pktmbuf_free(orig[j]);
	}

	/* with inbound policies the default discards what they do not cover:
	 * transit ESP needs a bypass rule (RFC 4301 5) */
	memset(&p, 0, sizeof(p));
	p.dir = EGW_ESP_DIR_IN;
	p.family = AF_INET;
	p.src.addr.family = p.dst.addr.family = AF_INET;
	p.dst.addr.a[0] = 10;
	p.dst.len = 8;
	p.proto = -1;
	p.action = EGW_ESP_PROTECT;
	p.spi = 0x9400;
	CHECK(egw_esp_policy_add(&p, -1, err, sizeof(err)) > 0, "inbound policy: %s", err);
	len = esp_frame(f, &far4, false, 0x9400, false);
	clear_one(f, len, EGW_ESP_DROP_POLICY_DEFAULT, "transit ESP, policies, no bypass rule");
	p.dst.addr = far4;
	p.dst.len = 32;
	p.proto = IPPROTO_ESP;
	p.action = EGW_ESP_BYPASS;
	p.spi = 0;
	CHECK(egw_esp_policy_add(&p, -1, err, sizeof(err)) > 0, "bypass policy: %s", err);
	clear_one(f, len, EGW_ESP_DROP_MAX, "transit ESP with a bypass rule");

	/* fragments of ESP to edgegw: taken, and dropped (not reassembled) */
	len = esp_frame(f, &loc6, false, 0x9400, true);
	CHECK(is_esp(f, len), "IPv6 ESP behind a fragment header to a local address: ours");
	in_one(mk(f, len), EGW_ESP_DROP_FRAGMENT, "IPv6 ESP fragment");
	len = esp_frame(f, &far6, false, 0x9400, true);
	CHECK(!is_esp(f, len), "IPv6 ESP fragment to another address: transit");
	len = esp_frame(f, &loc4, false, 0x9400, true);
	CHECK(is_esp(f, len), "IPv4 ESP fragment to a local address: ours");
	in_one(mk(f, len), EGW_ESP_DROP_FRAGMENT, "IPv4 ESP fragment (MF)");
	len = esp_frame(f, &loc4, true, 0x9400, true);
	CHECK(!is_esp(f, len), "IPv4 UDP fragment on port 4500: not NAT-T (IKE fragments go up)");

	/* registrations are counted */
	CHECK(egw_esp_local_addr_add(&loc4) == 0, "register 192.0.2.2 again");
	CHECK(egw_esp_local_addr_del(&loc4) == 0, "one deregistration");
	len = esp_frame(f, &loc4, false, 0x9400, false);
	CHECK(is_esp(f, len), "still local after one of two deregistrations");
	CHECK(egw_esp_local_addr_del(&loc4) == 0 && egw_esp_local_addr_del(&loc6) == 0,
	      "last deregistrations");
	CHECK(!is_esp(f, len), "no longer local");
	CHECK(egw_esp_local_addr_del(&loc4) == -ENOENT, "deregistering again: ENOENT");

	/* an inbound tunnel SA registers its outer destination itself */
	fixed_key(7, k);
	memset(&c, 0, sizeof(c));
	c.spi = 0x9401;
	c.dir = EGW_ESP_DIR_IN;
	c.mode = EGW_ESP_MODE_TUNNEL;
	c.aead = EGW_ESP_AES128_GCM;
	c.key_len = 20;
	memcpy(c.key, k, 20);
	addr(&c.tun_src, AF_INET, 1);
	c.tun_dst = tun4;
	len = esp_frame(f, &tun4, false, 0x9401, false);
	CHECK(!is_esp(f, len), "tunnel destination before the SA: transit");
	CHECK(egw_esp_sa_add(&c, err, sizeof(err)) == 0, "inbound tunnel SA: %s", err);
	CHECK(is_esp(f, len), "ESP to an inbound tunnel's destination: ours");
	clear_all();
	CHECK(!is_esp(f, len), "tunnel destination after the SA is gone: transit");
}

/* ---- inbound hard lifetimes, exact ----------------------------------------- */

static void
life_case(enum egw_esp_mode mode, uint64_t hard_bytes, uint64_t hard_packets, bool one_burst,
	  unsigned int expect, const char *what)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = mode, .outer = AF_INET};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 100};
	static uint8_t frame[512];
	struct rte_mbuf *in[5], *out[5];
	struct egw_esp_sa_info info;
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	unsigned int i, good = 0, life = 0;
	uint16_t n;

	t.in_life_bytes.hard = hard_bytes;
	t.in_life_packets.hard = hard_packets;
	clear_all();
	if (sa_pair(0xb000, &t) < 0) {
		CHECK(0, "%s: set-up", what);
		return;
	}
	memset(&res, 0, sizeof(res));
	for (i = 0; i < 5; i++)
		in[i] = mk(frame, len);
	n = encrypt(in, 5, out, 5, &res);
	CHECK(n == 5, "%s: 5 ESP packets", what);
	if (one_burst) {
		memset(&res, 0, sizeof(res));
		good = egw_esp_inbound_burst(ctx, out, n, &res);
		life = res.drop[EGW_ESP_DROP_LIFETIME];
		rte_pktmbuf_free_bulk(out, good);
	} else {
		for (i = 0; i < n; i++) {
			memset(&res, 0, sizeof(res));
			if (egw_esp_inbound_burst(ctx, &out[i], 1, &res) == 1) {
				good++;
				rte_pktmbuf_free(out[i]);
			}
			life += res.drop[EGW_ESP_DROP_LIFETIME];
		}
	}
	egw_esp_sa_info(0xb000, EGW_ESP_DIR_IN, &info);
	CHECK(good == expect && life == 5 - expect &&
		      info.life_bytes == (uint64_t)expect * (len - 14) &&
		      info.life_packets == expect,
	      "%s: %u of 5 accepted (want %u), %u esp_lifetime, %" PRIu64 " bytes counted", what,
	      good, expect, life, info.life_bytes);
}

static void
test_inbound_lifetime(void)
{
	/* clear IP packet: 20 + 8 + 100 bytes, the same in both modes */
	const uint64_t L = 128;

	life_case(EGW_ESP_MODE_TUNNEL, 3 * L, 0, true, 3, "tunnel, 3L bytes, one burst");
	life_case(EGW_ESP_MODE_TUNNEL, 3 * L - 1, 0, true, 2, "tunnel, 3L-1 bytes, one burst");
	life_case(EGW_ESP_MODE_TUNNEL, 3 * L, 0, false, 3, "tunnel, 3L bytes, one by one");
	life_case(EGW_ESP_MODE_TUNNEL, 3 * L + 1, 0, false, 3, "tunnel, 3L+1 bytes, one by one");
	life_case(EGW_ESP_MODE_TRANSPORT, 3 * L, 0, true, 3, "transport, 3L bytes, one burst");
	life_case(EGW_ESP_MODE_TRANSPORT, 3 * L - 1, 0, false, 2,
		  "transport, 3L-1 bytes, one by one");
	life_case(EGW_ESP_MODE_TUNNEL, L, 0, true, 1, "tunnel, L bytes: one packet");
	life_case(EGW_ESP_MODE_TUNNEL, 0, 3, true, 3, "tunnel, 3 packets, one burst");
	life_case(EGW_ESP_MODE_TUNNEL, 0, 3, false, 3, "tunnel, 3 packets, one by one");
	clear_all();
}

/* ---- egw_esp_service() over the live SAs ---------------------------------- */

/* egw_esp_service() services every SA that is left, whatever was deleted
 * before: with the first of three inbound SAs deleted, the last one added
 * still gets its soft lifetime, reached by one packet, reported, once. */
static void
test_service_list(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 100};
	static uint8_t frame[512];
	struct egw_esp_sa_conf c;
	struct rte_mbuf *in[1], *out[1];
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	char err[128];
	uint8_t k[EGW_ESP_KEY_MAX];
	unsigned int i, first, second;
	uint16_t n;

	printf("service: the live SAs\n");
	clear_all();
	CHECK(egw_esp_service() == 0, "no SA: nothing to do");
	/* two inbound SAs first (no policy names them), then the pair */
	for (i = 0; i < 2; i++) {
		fixed_key((uint8_t)(20 + i), k);
		memset(&c, 0, sizeof(c));
		c.spi = 0xc001 + i;
		c.dir = EGW_ESP_DIR_IN;
		c.mode = EGW_ESP_MODE_TUNNEL;
		c.aead = EGW_ESP_AES128_GCM;
		c.key_len = 20;
		memcpy(c.key, k, 20);
		addr(&c.tun_src, AF_INET, (uint8_t)(40 + i));
		addr(&c.tun_dst, AF_INET, (uint8_t)(50 + i));
		CHECK(egw_esp_sa_add(&c, err, sizeof(err)) == 0, "inbound SA 0x%x: %s", c.spi, err);
	}
	t.in_life_packets.soft = 1;
	if (sa_pair(0xc003, &t) < 0) {
		CHECK(0, "service: set-up");
		return;
	}
	CHECK(egw_esp_sa_del(0xc001, EGW_ESP_DIR_IN, err, sizeof(err)) == 0, "delete 0x%x: %s",
	      0xc001, err);
	{
		/* the show commands' walk: the SAs left, by SPI (0xc003, moved
		 * into the hole, comes last) */
		static struct walk_arg wa;

		wa.dir = EGW_ESP_DIR_IN;
		wa.n = 0;
		egw_esp_sa_walk(collect, &wa);
		CHECK(wa.n == 2 && wa.spis[0] == 0xc002 && wa.spis[1] == 0xc003,
		      "walk after the delete: %u inbound SAs, 0x%x 0x%x", wa.n, wa.spis[0],
		      wa.spis[1]);
	}
	memset(&res, 0, sizeof(res));
	in[0] = mk(frame, len);
	n = encrypt(in, 1, out, 1, &res);
	CHECK(n == 1, "service: one ESP packet");
	if (n == 1) {
		memset(&res, 0, sizeof(res));
		if (egw_esp_inbound_burst(ctx, out, 1, &res) == 1)
			rte_pktmbuf_free(out[0]);
		else
			CHECK(0, "service: the packet accepted");
	}
	first = egw_esp_service();
	second = egw_esp_service();
	CHECK(first == 1 && second == 0,
	      "the soft lifetime of the SA moved in the list reported once: %u, then %u", first,
	      second);
	clear_all();
	CHECK(egw_esp_service() == 0, "all deleted: nothing to do");
}

/* ---- the wake of a sleeping control path ---------------------------------- */

static unsigned int wakes;

static void
count_wake(void)
{
	wakes++;
}

/* An outbound SA wakes the control path from the run whose end passes half
 * of its reservation (where egw_esp_service() extends the limit), not
 * before; once the service has extended it, the runs are quiet again. */
static void
test_seq_wake(void)
{
	struct t_sa t = {.aead = EGW_ESP_AES128_GCM, .mode = EGW_ESP_MODE_TUNNEL, .outer = AF_INET};
	struct t_pkt p = {.family = AF_INET, .proto = IPPROTO_UDP, .plen = 10};
	static uint8_t frame[512];
	struct rte_mbuf *in[32], *out[32];
	struct egw_esp_sa_info info;
	struct egw_esp_res res;
	uint32_t len = build(&p, frame);
	uint64_t first, limit, wake_at, next;
	unsigned int i, early = 0, bursts = 0;
	uint16_t n;

	printf("service: workers wake the control path for the sequence limit\n");
	clear_all();
	if (sa_pair(0x4200, &t) < 0) {
		CHECK(0, "seq wake: set-up");
		return;
	}
	if (egw_esp_sa_info(0x4200, EGW_ESP_DIR_OUT, &info) != 0) {
		CHECK(0, "seq wake: SA info");
		return;
	}
	first = info.seq;
	limit = info.seq_limit;
	wake_at = limit - (limit - first + 1) / 2;
	wakes = 0;
	egw_esp_set_wake(count_wake);
	for (next = first; next <= wake_at + 32 && next + 32 <= limit; next += n) {
		for (i = 0; i < 32; i++)
			in[i] = mk(frame, len);
		memset(&res, 0, sizeof(res));
		n = encrypt(in, 32, out, 32, &res);
		rte_pktmbuf_free_bulk(out, n);
		bursts++;
		if (n != 32) {
			CHECK(0, "seq wake: 32 ESP packets a burst (%u)", n);
			break;
		}
		if (next + n <= wake_at && wakes != 0 && early++ == 0)
			CHECK(0, "no wake while more than half is left (next %" PRIu64 ")",
			      next + n);
		if (next + n > wake_at)
			break;
	}
	CHECK(early == 0 && wakes == 1,
	      "one wake, from the run past %" PRIu64 " (first %" PRIu64 ", limit %" PRIu64
	      "): %u in %u bursts",
	      wake_at, first, limit, wakes, bursts);
	CHECK(egw_esp_service() >= 1, "the service extends the limit");
	CHECK(egw_esp_sa_info(0x4200, EGW_ESP_DIR_OUT, &info) == 0 && info.seq_limit > limit,
	      "limit extended: %" PRIu64 " > %" PRIu64, info.seq_limit, limit);
	for (i = 0; i < 32; i++)
		in[i] = mk(frame, len);
	memset(&res, 0, sizeof(res));
	n = encrypt(in, 32, out, 32, &res);
	rte_pktmbuf_free_bulk(out, n);
	CHECK(n == 32 && wakes == 1, "after the extension the runs are quiet: %u wakes", wakes);
	egw_esp_set_wake(NULL);
	clear_all();
}

/* ---- GSO out of place against the copying path --------------------------- */

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
			in[0] = mk_chain_sized(frame, len, pieces[pc], 4);
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
	m = mk_chain_sized(frame, build(&p, frame), sz, 1);
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
static unsigned int iv_blocked[2]; /* segments dropped as esp_seq_blocked */
static unsigned int iv_done[2];
static struct egw_esp_ctx *ivctx[2];

/* The control path's part: extend the SA's persisted block (a new SA holds
 * only 2^18 numbers) as the application's timer would. Not as an online
 * QSBR reader: egw_esp_service() may wait for a grace period. */
static void
iv_service(unsigned int w)
{
	rte_rcu_qsbr_thread_offline(qs, w);
	egw_esp_service();
	rte_rcu_qsbr_thread_online(qs, w);
}

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
		iv_blocked[w] += res.drop[EGW_ESP_DROP_SEQ_BLOCKED];
		for (i = 0; i < res.n_out; i++) {
			uint8_t *e = rte_pktmbuf_mtod(out[i], uint8_t *) + 14 + 20;

			if (n_ivs[w] < IVT_SEGS / 2 + EGW_ESP_MAX_SEGS)
				ivs[w][n_ivs[w]++] = t_get64(e + 8) << 0;
		}
		rte_pktmbuf_free_bulk(out, res.n_out);
		rte_rcu_qsbr_quiescent(qs, w);
		if (w == 0)
			iv_service(w);
	}
	rte_rcu_qsbr_thread_offline(qs, w);
	rte_rcu_qsbr_thread_unregister(qs, w);
	__atomic_store_n(&iv_done[w], 1, __ATOMIC_RELEASE);
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
	unsigned int lcore = rte_get_next_lcore(-1, 1, 0), i, total, dup = 0, gap = 0, blocked;
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
		iv_blocked[i] = 0;
		iv_done[i] = 0;
	}
	rte_eal_remote_launch(iv_worker, (void *)(uintptr_t)1, lcore);
	iv_worker((void *)(uintptr_t)0);
	/* pairs with the release store at the end of iv_worker() */
	while (__atomic_load_n(&iv_done[1], __ATOMIC_ACQUIRE) == 0) {
		egw_esp_service();
		rte_delay_us_sleep(100);
	}
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
	/* a segment that found the persisted block used up (the control path
	 * late to extend it) is dropped with its number: a gap, never a repeat */
	blocked = iv_blocked[0] + iv_blocked[1];
	CHECK((blocked == 0 && gap == 0 && all[0] == 1 && all[total - 1] == total) ||
		      (blocked != 0 && gap <= blocked && all[total - 1] <= total + blocked),
	      "IV test: sequence numbers 1..%u gap-free but for %u blocked (%u gaps, %" PRIu64
	      "..%" PRIu64 ")",
	      total, blocked, gap, all[0], all[total - 1]);
	printf("IV uniqueness: %u segments from two lcores, %u + %u, all distinct, 1..%" PRIu64
	       ", %u dropped as esp_seq_blocked\n",
	       total, n_ivs[0], n_ivs[1], all[total - 1], blocked);
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
		rc = egw_esp_state_file(path, true, err, sizeof(err));
	if (rc == 0)
		rc = esp_peers_init(&peers);
	ctx = egw_esp_ctx_create(0, pool);
	if (rc < 0 || ctx == NULL) {
		printf("esp set-up failed: %d %s\n", rc, err);
		return 1;
	}
	printf("IPsec-MB code path: %s\n", egw_esp_ctx_arch(ctx));

	test_ip4_sum();
	test_kat();
	test_matrix();
	/* the same through IPsec-MB's job queue, which AES-GCM leaves for
	 * direct calls by default (ChaCha20 and SGL jobs still take it); the
	 * hostile inbound cases too (a bad ICV is found in either lane) */
	ctx->gcm_direct = 0;
	test_kat();
	test_matrix();
	test_inbound_rejects();
	ctx->gcm_direct = 1;
	test_transport_tunnels();
	test_outer_template();
	test_inbound_rejects();
	test_policy_cache();
	test_trailer();
	test_big_burst();
	test_icmp_limit();
	test_ip_id_disjoint();
	test_life_bytes();
	test_too_big();
	test_dynfields();
	test_transport_frag();
	test_icmp_source();
	test_natt6_routing();
	test_seq_limits();
	test_state_file();
	test_key_reuse();
	test_state_versions();
	test_ecn();
	test_is_esp();
	test_inbound_lifetime();
	test_service_list();
	test_seq_wake();
	test_gso_oop();
	test_gso_oop_used();
	test_iv_unique();

	clear_all();
	egw_esp_ctx_free(ctx);
	egw_esp_fini();
	esp_peers_fini(&peers);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
		if (system(cmd) != 0)
			printf("could not remove %s\n", state_dir);
	}
	printf("%d checks, %d failures\n", checks, failures);
	return failures == 0 ? 0 : 1;
}
