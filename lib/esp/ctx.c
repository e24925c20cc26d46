/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data-path contexts: one IPsec-MB manager per lcore (initialised for the
 * best instruction set the CPU has), job bursts, counters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "esp_crypto.h"
#include "esp_private.h"

static struct egw_esp_ctx *ctxs[EGW_ESP_MAX_CTX];

static const char *
arch_name(IMB_ARCH a)
{
	switch (a) {
	case IMB_ARCH_NOAESNI: return "no-aesni";
	case IMB_ARCH_SSE: return "sse";
	case IMB_ARCH_AVX: return "avx";
	case IMB_ARCH_AVX2: return "avx2";
	case IMB_ARCH_AVX512: return "avx512";
	default: return "?";
	}
}

struct egw_esp_ctx *
egw_esp_ctx_create(unsigned int idx, struct rte_mempool *pool)
{
	struct egw_esp_ctx *c;
	char name[RTE_MEMPOOL_NAMESIZE];
	IMB_ARCH arch = IMB_ARCH_NONE;

	if (idx >= EGW_ESP_MAX_CTX || pool == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (ctxs[idx] != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	c = rte_zmalloc_socket("egw_esp_ctx", sizeof(*c), RTE_CACHE_LINE_SIZE, pool->socket_id);
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->idx = idx;
	c->pool = pool;
	c->mgr = alloc_mb_mgr(0);
	if (c->mgr == NULL) {
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	init_mb_mgr_auto(c->mgr, &arch);
	if (imb_get_errno(c->mgr) != 0) {
		ESP_LOG(ERR, "IPsec-MB manager: %s", imb_get_strerror(imb_get_errno(c->mgr)));
		free_mb_mgr(c->mgr);
		rte_free(c);
		rte_errno = ENOTSUP;
		return NULL;
	}
	c->arch = arch_name(arch);
	/* indirect mbufs for rte_ipv4_fragment_packet(); a burst's worth */
	snprintf(name, sizeof(name), "egw_esp_ind%u", idx);
	c->indirect_pool = rte_pktmbuf_pool_create(name, 1023, 0, 0, 0, pool->socket_id);
	if (c->indirect_pool == NULL) {
		free_mb_mgr(c->mgr);
		rte_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	c->frame_max = rte_pktmbuf_data_room_size(pool);
	c->gcm_direct = 1;
	c->icmp_tokens = 50;
	c->icmp_tsc = rte_rdtsc();
	ESP_LOG(INFO, "context %u: IPsec-MB %s, %s code path", idx, imb_get_version_str(), c->arch);
	ctxs[idx] = c;
	return c;
}

void
egw_esp_ctx_free(struct egw_esp_ctx *c)
{
	if (c == NULL)
		return;
	ctxs[c->idx] = NULL;
	free_mb_mgr(c->mgr);
	rte_mempool_free(c->indirect_pool);
	explicit_bzero(c->iv, sizeof(c->iv));
	rte_free(c);
}

const char *
egw_esp_ctx_arch(const struct egw_esp_ctx *c)
{
	return c->arch;
}

static void
stats_add(struct egw_esp_ctx_stats *s, const struct egw_esp_ctx_stats *a)
{
	const uint64_t *src = (const uint64_t *)a;
	uint64_t *dst = (uint64_t *)s;
	size_t i;

	for (i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		dst[i] += __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void
egw_esp_ctx_stats(const struct egw_esp_ctx *c, struct egw_esp_ctx_stats *s)
{
	memset(s, 0, sizeof(*s));
	stats_add(s, &c->st);
}

void
egw_esp_stats(struct egw_esp_ctx_stats *s)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < EGW_ESP_MAX_CTX; i++)
		if (ctxs[i] != NULL)
			stats_add(s, &ctxs[i]->st);
}

uint64_t
esp_ctx_sum_policy_hits(enum egw_esp_dir dir, unsigned int slot)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < EGW_ESP_MAX_CTX; i++)
		if (ctxs[i] != NULL)
			sum += __atomic_load_n(&ctxs[i]->policy_hits[dir & 1][slot],
					       __ATOMIC_RELAXED);
	return sum;
}

void
esp_jobs_get(struct egw_esp_ctx *c, unsigned int n, IMB_JOB *jobs[])
{
	unsigned int got = IMB_GET_NEXT_BURST(c->mgr, n, jobs);

	if (unlikely(got < n)) {
		/* jobs left from an earlier call: complete them, then ask again */
		IMB_JOB *done[EGW_ESP_MAX_BURST];

		while (IMB_FLUSH_BURST(c->mgr, EGW_ESP_MAX_BURST, done) != 0)
			;
		got = IMB_GET_NEXT_BURST(c->mgr, n, jobs);
		RTE_VERIFY(got == n);
	}
}

/*
 * AES-GCM jobs through the manager's direct GCM functions instead of the
 * job queue, when every job of the burst is one: IPsec-MB 1.3's job path
 * runs GCM one job at a time anyway (no multi-buffer GCM), and its queue
 * costs about 20 ns a job more than the direct call (bench_esp prints both;
 * DPDK's cpu-crypto does the same). The jobs taken with IMB_GET_NEXT_BURST
 * are left unsubmitted, which returns them to the manager. false (nothing
 * done) when a job is of another kind: the burst goes through the queue.
 * The data path fills no job at all for plain AES-GCM packets
 * (esp_gcm_direct()); what reaches this is a run that needed jobs anyway
 * (out-of-place GSO segments beside plain packets).
 */
static bool
jobs_run_direct(struct egw_esp_ctx *c, unsigned int n, IMB_JOB *jobs[], uint8_t ok[])
{
	struct gcm_context_data gctx;
	unsigned int i, k;

	for (i = 0; i < n; i++)
		if (jobs[i]->cipher_mode != IMB_CIPHER_GCM ||
		    (jobs[i]->key_len_in_bytes != 16 && jobs[i]->key_len_in_bytes != 32))
			return false;
	for (i = 0; i < n; i++) {
		IMB_JOB *j = jobs[i];
		bool enc = j->cipher_direction == IMB_DIR_ENCRYPT, k128 = j->key_len_in_bytes == 16;
		aes_gcm_enc_dec_t fn = enc ? (k128 ? c->mgr->gcm128_enc : c->mgr->gcm256_enc)
					   : (k128 ? c->mgr->gcm128_dec : c->mgr->gcm256_dec);

		fn(enc ? j->enc_keys : j->dec_keys, &gctx, j->dst,
		   j->src + j->cipher_start_src_offset_in_bytes, j->msg_len_to_cipher_in_bytes,
		   j->iv, j->u.GCM.aad, j->u.GCM.aad_len_in_bytes, j->auth_tag_output,
		   j->auth_tag_output_len_in_bytes);
		k = (unsigned int)(uintptr_t)j->user_data;
		if (k < EGW_ESP_MAX_BURST)
			ok[k] = 1;
	}
	return true;
}

void
esp_jobs_run(struct egw_esp_ctx *c, unsigned int n, IMB_JOB *jobs[], uint8_t ok[])
{
	unsigned int done, i, k;

	memset(ok, 0, EGW_ESP_MAX_BURST);
	if (c->gcm_direct && jobs_run_direct(c, n, jobs, ok))
		return;
	done = IMB_SUBMIT_BURST(c->mgr, n, jobs);
	if (unlikely(done == 0 && imb_get_errno(c->mgr) != 0)) {
		ESP_LOG(ERR, "IPsec-MB burst refused: %s", imb_get_strerror(imb_get_errno(c->mgr)));
		/* nothing was processed; leave the queue empty for the next call */
		while (IMB_FLUSH_BURST(c->mgr, EGW_ESP_MAX_BURST, jobs) != 0)
			;
		return;
	}
	for (;;) {
		for (i = 0; i < done; i++) {
			k = (unsigned int)(uintptr_t)jobs[i]->user_data;
			if (k < EGW_ESP_MAX_BURST)
				ok[k] = jobs[i]->status == IMB_STATUS_COMPLETED;
		}
		if (IMB_QUEUE_SIZE(c->mgr) == 0)
			break;
		done = IMB_FLUSH_BURST(c->mgr, EGW_ESP_MAX_BURST, jobs);
		if (done == 0)
			break;
	}
}
