/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-side ESP peer, for tests and benchmarks that feed the library's own
 * outbound ESP frames to its inbound path. lib/esp refuses a key (with its
 * salt) that a live SA of either direction already uses, so the inbound SA
 * of a loopback pair has a key of its own. esp_peer_reseal() stands in for
 * the remote end: it decrypts a frame of the outbound SA with the outbound
 * key and checks its ICV (an independent check of the library's output: the
 * AEAD runs here through IPsec-MB's direct GCM API or its job API for
 * ChaCha20-Poly1305, not through lib/esp's job code), then encrypts it again
 * with the inbound key under the same SPI, sequence number, IV and AAD.
 * Header only; every function is static inline.
 */
#ifndef EGW_TEST_ESP_PEER_H
#define EGW_TEST_ESP_PEER_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <intel-ipsec-mb.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "egw_esp.h"

#define ESP_PEER_MAX 64
#define ESP_PEER_SALT 4
#define ESP_PEER_ICV 16

struct esp_peer {
	uint32_t spi;
	enum egw_esp_aead aead;
	bool esn;
	uint8_t key_len;                  /* cipher key bytes, salt not included */
	uint8_t out_key[EGW_ESP_KEY_MAX]; /* key + salt of the outbound SA */
	uint8_t in_key[EGW_ESP_KEY_MAX];  /* key + salt of the inbound SA */
	struct gcm_key_data out_gcm __rte_aligned(16);
	struct gcm_key_data in_gcm __rte_aligned(16);
};

struct esp_peers {
	IMB_MGR *mgr;
	unsigned int n;
	uint64_t resealed;
	struct esp_peer p[ESP_PEER_MAX];
};

static inline uint32_t
esp_peer_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* 0, or -ENOMEM. */
static inline int
esp_peers_init(struct esp_peers *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->mgr = alloc_mb_mgr(0);
	if (ps->mgr == NULL)
		return -ENOMEM;
	init_mb_mgr_auto(ps->mgr, NULL);
	return 0;
}

static inline void
esp_peers_fini(struct esp_peers *ps)
{
	free_mb_mgr(ps->mgr);
	memset(ps, 0, sizeof(*ps));
}

/* Forget every pair (keys wiped). */
static inline void
esp_peers_clear(struct esp_peers *ps)
{
	memset(ps->p, 0, sizeof(ps->p));
	ps->n = 0;
}

/*
 * The key of the inbound SA paired with an outbound key: one key byte and
 * one salt byte flipped (a different key and a different salt).
 */
static inline void
esp_peer_in_key(enum egw_esp_aead aead, const uint8_t *out_key, uint8_t *in_key)
{
	unsigned int klen = egw_esp_aead_key_len(aead);

	memcpy(in_key, out_key, EGW_ESP_KEY_MAX);
	in_key[2] ^= 0xa5;
	in_key[klen - 1] ^= 0x5a;
}

/* Record the pair of SPI spi (replacing an older one). 0 or -ENOSPC. */
static inline int
esp_peer_add(struct esp_peers *ps, uint32_t spi, enum egw_esp_aead aead, bool esn,
	     const uint8_t *out_key, const uint8_t *in_key)
{
	struct esp_peer *p = NULL;
	unsigned int i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].spi == spi)
			p = &ps->p[i];
	if (p == NULL) {
		if (ps->n == ESP_PEER_MAX)
			return -ENOSPC;
		p = &ps->p[ps->n++];
	}
	memset(p, 0, sizeof(*p));
	p->spi = spi;
	p->aead = aead;
	p->esn = esn;
	p->key_len = (uint8_t)(egw_esp_aead_key_len(aead) - ESP_PEER_SALT);
	memcpy(p->out_key, out_key, EGW_ESP_KEY_MAX);
	memcpy(p->in_key, in_key, EGW_ESP_KEY_MAX);
	if (aead == EGW_ESP_AES128_GCM) {
		IMB_AES128_GCM_PRE(ps->mgr, p->out_key, &p->out_gcm);
		IMB_AES128_GCM_PRE(ps->mgr, p->in_key, &p->in_gcm);
	} else if (aead == EGW_ESP_AES256_GCM) {
		IMB_AES256_GCM_PRE(ps->mgr, p->out_key, &p->out_gcm);
		IMB_AES256_GCM_PRE(ps->mgr, p->in_key, &p->in_gcm);
	}
	return 0;
}

static inline struct esp_peer *
esp_peer_find(struct esp_peers *ps, uint32_t spi)
{
	unsigned int i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].spi == spi)
			return &ps->p[i];
	return NULL;
}

/*
 * One AEAD operation in place with IPsec-MB itself. key: the key (+ salt)
 * bytes, gcm: its GCM key schedule. The tag is written to tag (encrypt) or
 * computed into tag (decrypt). Returns true when IPsec-MB completed it.
 */
static inline bool
esp_peer_aead(IMB_MGR *m, enum egw_esp_aead aead, const uint8_t *key,
	      const struct gcm_key_data *gcm, bool enc, uint8_t *buf, uint32_t len,
	      const uint8_t nonce[12], const uint8_t *aad, uint32_t aad_len, uint8_t tag[16])
{
	struct gcm_context_data gctx;
	IMB_JOB *j;

	if (aead == EGW_ESP_AES128_GCM && enc)
		IMB_AES128_GCM_ENC(m, gcm, &gctx, buf, buf, len, nonce, aad, aad_len, tag, 16);
	else if (aead == EGW_ESP_AES128_GCM)
		IMB_AES128_GCM_DEC(m, gcm, &gctx, buf, buf, len, nonce, aad, aad_len, tag, 16);
	else if (aead == EGW_ESP_AES256_GCM && enc)
		IMB_AES256_GCM_ENC(m, gcm, &gctx, buf, buf, len, nonce, aad, aad_len, tag, 16);
	else if (aead == EGW_ESP_AES256_GCM)
		IMB_AES256_GCM_DEC(m, gcm, &gctx, buf, buf, len, nonce, aad, aad_len, tag, 16);
	if (aead != EGW_ESP_CHACHA20_POLY1305)
		return imb_get_errno(m) == 0;
	j = IMB_GET_NEXT_JOB(m);
	j->src = buf;
	j->dst = buf;
	j->cipher_start_src_offset_in_bytes = 0;
	j->msg_len_to_cipher_in_bytes = len;
	j->hash_start_src_offset_in_bytes = 0;
	j->msg_len_to_hash_in_bytes = len;
	j->iv = nonce;
	j->iv_len_in_bytes = 12;
	j->auth_tag_output = tag;
	j->auth_tag_output_len_in_bytes = 16;
	j->cipher_direction = enc ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	j->chain_order = enc ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
	j->cipher_mode = IMB_CIPHER_CHACHA20_POLY1305;
	j->hash_alg = IMB_AUTH_CHACHA20_POLY1305;
	j->enc_keys = key;
	j->dec_keys = key;
	j->key_len_in_bytes = 32;
	j->u.CHACHA20_POLY1305.aad = aad;
	j->u.CHACHA20_POLY1305.aad_len_in_bytes = aad_len;
	j = IMB_SUBMIT_JOB(m);
	if (j == NULL)
		j = IMB_FLUSH_JOB(m);
	return j != NULL && j->status == IMB_STATUS_COMPLETED;
}

/*
 * Offset of the ESP header in frame f of len bytes (l2 bytes of L2 header):
 * behind the IPv4 header or the IPv6 header and its hop-by-hop, routing and
 * destination options headers, and behind a UDP header (NAT-T). *end: the
 * end of the IP packet; *udp the offset of the UDP header, -1 if none. -1
 * if it is not ESP as the library sends it.
 */
static inline int
esp_peer_locate(const uint8_t *f, uint32_t len, uint32_t l2, uint32_t *end, int *udp)
{
	const uint8_t *ip = f + l2;

	*udp = -1;
	uint32_t off, ip_len;
	uint8_t proto;

	if (len < l2 + 20)
		return -1;
	if ((ip[0] >> 4) == 4) {
		off = (ip[0] & 0xfu) * 4;
		ip_len = (uint32_t)ip[2] << 8 | ip[3];
		proto = ip[9];
	} else if ((ip[0] >> 4) == 6 && len >= l2 + 40) {
		off = 40;
		ip_len = 40 + ((uint32_t)ip[4] << 8 | ip[5]);
		proto = ip[6];
		while (proto == 0 || proto == 43 || proto == 60) {
			if (l2 + off + 8 > len)
				return -1;
			proto = ip[off];
			off += (ip[off + 1] + 1u) * 8;
		}
	} else {
		return -1;
	}
	if (l2 + ip_len > len || off > ip_len)
		return -1;
	if (proto == 17) {
		off += 8;
		proto = 50;
		*udp = (int)(l2 + off - 8);
	}
	if (proto != 50 || off + 8 + 8 + ESP_PEER_ICV > ip_len)
		return -1;
	*end = l2 + ip_len;
	return (int)(l2 + off);
}

/* One's complement sum of n bytes (16-bit big-endian words, folded). */
static inline uint32_t
esp_peer_sum(const uint8_t *b, uint32_t n)
{
	uint32_t sum = 0, i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (n & 1)
		sum += (uint32_t)b[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/*
 * Re-seal the ESP frame m (single segment, written by the outbound SA of a
 * recorded pair) for the inbound SA: 0; -EINVAL (not an ESP frame),
 * -ENOENT (no pair for its SPI), -EBADMSG (the outbound SA's ICV does not
 * verify: the library's output is wrong), -EIO (IPsec-MB failed).
 */
static inline int
esp_peer_reseal(struct esp_peers *ps, struct rte_mbuf *m)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *), *esp, *ct, *icv;
	uint8_t nonce[12], aad[12], tag[16];
	uint32_t end, clen, aad_len, before;
	struct esp_peer *p;
	int off, udp;

	if (m->nb_segs != 1)
		return -EINVAL;
	off = esp_peer_locate(f, m->data_len, m->l2_len, &end, &udp);
	if (off < 0)
		return -EINVAL;
	esp = f + off;
	p = esp_peer_find(ps, esp_peer_get32(esp));
	if (p == NULL)
		return -ENOENT;
	ct = esp + 16;
	icv = f + end - ESP_PEER_ICV;
	clen = (uint32_t)(icv - ct);
	/* AAD: SPI, (high half of the ESN,) low half; the IV is the 64-bit
	 * sequence number, so it carries the high half (RFC 4106 5) */
	memcpy(aad, esp, 4);
	if (p->esn) {
		memcpy(aad + 4, esp + 8, 4);
		memcpy(aad + 8, esp + 4, 4);
		aad_len = 12;
	} else {
		memcpy(aad + 4, esp + 4, 4);
		aad_len = 8;
	}
	/* the bytes a UDP checksum covers, as the library sent them */
	before = esp_peer_sum(ct, clen + ESP_PEER_ICV);
	memcpy(nonce, p->out_key + p->key_len, ESP_PEER_SALT);
	memcpy(nonce + ESP_PEER_SALT, esp + 8, 8);
	if (!esp_peer_aead(ps->mgr, p->aead, p->out_key, &p->out_gcm, false, ct, clen, nonce, aad,
			   aad_len, tag))
		return -EIO;
	if (memcmp(tag, icv, ESP_PEER_ICV) != 0)
		return -EBADMSG;
	memcpy(nonce, p->in_key + p->key_len, ESP_PEER_SALT);
	if (!esp_peer_aead(ps->mgr, p->aead, p->in_key, &p->in_gcm, true, ct, clen, nonce, aad,
			   aad_len, icv))
		return -EIO;
	/* a UDP checksum over the ciphertext (NAT-T over IPv6) follows the new
	 * bytes incrementally (RFC 1624): right stays right, wrong stays wrong */
	if (udp >= 0 && (f[udp + 6] | f[udp + 7]) != 0) {
		uint32_t c = (uint16_t) ~((uint32_t)f[udp + 6] << 8 | f[udp + 7]);

		/* ct starts at an even offset from the UDP header (8 + 16) */
		c += (uint16_t)~before;
		c += esp_peer_sum(ct, clen + ESP_PEER_ICV);
		while (c >> 16)
			c = (c & 0xffff) + (c >> 16);
		c = (uint16_t)~c;
		f[udp + 6] = (uint8_t)(c >> 8);
		f[udp + 7] = (uint8_t)c;
	}
	ps->resealed++;
	return 0;
}

#endif /* EGW_TEST_ESP_PEER_H */
