/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AEAD jobs for IPsec-MB: one function fills a job for either direction and
 * either AEAD, so the known-answer tests exercise the very code the data
 * path runs.
 */
#ifndef EGW_ESP_CRYPTO_H
#define EGW_ESP_CRYPTO_H

#include "esp_private.h"

/* Fill job to encrypt or decrypt len bytes at buf in place. iv12 is salt +
 * explicit IV; the tag is written to tag (decrypt: the computed tag, which
 * the caller compares with the received one). */
static inline void
esp_job_aead(IMB_JOB *job, const struct egw_esp_sa *sa, bool encrypt, uint8_t *buf, uint32_t len,
	     const uint8_t *iv12, const uint8_t *aad, uint32_t aad_len, uint8_t *tag)
{
	job->src = buf;
	job->dst = buf;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = len;
	job->hash_start_src_offset_in_bytes = 0;
	job->msg_len_to_hash_in_bytes = len;
	job->iv = iv12;
	job->iv_len_in_bytes = 12;
	job->auth_tag_output = tag;
	job->auth_tag_output_len_in_bytes = ESP_ICV_LEN;
	job->cipher_direction = encrypt ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	job->chain_order = encrypt ? IMB_ORDER_CIPHER_HASH : IMB_ORDER_HASH_CIPHER;
	if (sa->aead == EGW_ESP_CHACHA20_POLY1305) {
		job->cipher_mode = IMB_CIPHER_CHACHA20_POLY1305;
		job->hash_alg = IMB_AUTH_CHACHA20_POLY1305;
		job->enc_keys = sa->key.chacha;
		job->dec_keys = sa->key.chacha;
		job->key_len_in_bytes = 32;
		job->u.CHACHA20_POLY1305.aad = aad;
		job->u.CHACHA20_POLY1305.aad_len_in_bytes = aad_len;
	} else {
		job->cipher_mode = IMB_CIPHER_GCM;
		job->hash_alg = IMB_AUTH_AES_GMAC;
		job->enc_keys = &sa->key.gcm;
		job->dec_keys = &sa->key.gcm;
		job->key_len_in_bytes = sa->key_len;
		job->u.GCM.aad = aad;
		job->u.GCM.aad_len_in_bytes = aad_len;
	}
}

/* True when the AEAD of sa in context c runs by a direct call of the
 * manager's GCM functions (esp_gcm_direct()) instead of a job. */
static inline bool
esp_aead_direct(const struct egw_esp_ctx *c, const struct egw_esp_sa *sa)
{
	return c->gcm_direct && sa->aead != EGW_ESP_CHACHA20_POLY1305 &&
	       (sa->key_len == 16 || sa->key_len == 32);
}

/* Encrypt or decrypt len bytes at buf in place with the AES-GCM key of sa,
 * now, as esp_job_aead() describes it: the tag is written to tag. */
static inline void
esp_gcm_direct(const struct egw_esp_ctx *c, const struct egw_esp_sa *sa, bool encrypt, uint8_t *buf,
	       uint32_t len, const uint8_t *iv12, const uint8_t *aad, uint32_t aad_len,
	       uint8_t *tag)
{
	struct gcm_context_data g;
	aes_gcm_enc_dec_t fn;

	if (sa->key_len == 16)
		fn = encrypt ? c->mgr->gcm128_enc : c->mgr->gcm128_dec;
	else
		fn = encrypt ? c->mgr->gcm256_enc : c->mgr->gcm256_dec;
	fn(&sa->key.gcm, &g, buf, buf, len, iv12, aad, aad_len, tag, ESP_ICV_LEN);
}

/* Take n (<= EGW_ESP_MAX_BURST) jobs from the context's manager. */
void esp_jobs_get(struct egw_esp_ctx *c, unsigned int n, IMB_JOB *jobs[]);

/* Run the first n of jobs, filled, job->user_data = a slot index <
 * EGW_ESP_MAX_BURST; ok[slot] = 1 when the job completed without error,
 * ok[] is 0 for every other slot. */
void esp_jobs_run(struct egw_esp_ctx *c, unsigned int n, IMB_JOB *jobs[], uint8_t ok[]);

#endif /* EGW_ESP_CRYPTO_H */
