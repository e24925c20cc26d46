/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for rxtokens token ownership (lib/rxtokens): the return
 * call with arbitrary ranges and region ids, mixed with deliveries, reads,
 * closes and re-creations, against a model of what each consumer holds.
 *
 * Set-up (once): EAL without hugepages, a 2 MiB region (a MFD_HUGETLB memfd:
 * one free 2 MiB hugepage needed, else the target exits 77) and its pool,
 * bound to port 0 queue 0. Each input starts from the same state: consumers
 * A (udp 7001) and B (udp 7002), quota 48, each holding 2 tokens with 1
 * more record waiting.
 *
 * Input: a sequence of operations, one byte each plus arguments:
 *   op % 6 == 0  deliver: [arg] bit 0 consumer, bits 1-2 payload size
 *                (1, 100, 3000 B: one page; 5000 B: two pages), bit 3 on
 *                queue 1 (unbound: steered)
 *            1  recv: [consumer, max]
 *            2  return arbitrary: [who, region, n] then per range
 *                [mode, a, b, c]: the token is one the consumer holds, one
 *                the other holds, or raw 8/16/32-bit; the count 1, or raw
 *            3  return held: [consumer, k] the first k tokens it holds
 *            4  close: [consumer]
 *            5  destroy and re-create: [consumer]
 * After each operation:
 *  - the result is the model's (delivered or dropped and why; records and
 *    their tokens in order; the return value, errno included);
 *  - the pool's available count + the tokens outstanding in the model (held
 *    or waiting) == the pool size: a rejected call changed nothing;
 * and at the end of an input the library's outstanding/held counts (JSON)
 * equal the model's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "egw_eth.h"
#include "egw_rxtok.h"
#include "rxtok_test.h"
#include "fuzz_common.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REGION_SIZE (2u << 20)
#define N_PAGES (REGION_SIZE / EGW_RXTOK_PAGE_SIZE)
#define QUOTA 48
#define MAXR (EGW_RXTOK_MAX_RANGES + 3)

/* What a consumer holds and has waiting, as the model sees it. */
struct model {
	struct egw_rxtok_consumer *c;
	const char *name;
	uint16_t dport;
	bool closed;
	bool steered;
	uint32_t held[N_PAGES]; /* times each token is held */
	uint32_t n_held;
	uint32_t ring[QUOTA]; /* tokens waiting, in order */
	uint32_t ring_head, ring_n;
};

static struct rte_rcu_qsbr *qsbr;
static struct egw_rxtok_region *reg;
static struct rte_mempool *pool;
static const uint8_t *base;
static uint32_t rid, pool_size;
static struct model mdl[2] = {{.name = "fz_a", .dport = 7001}, {.name = "fz_b", .dport = 7002}};
static uint32_t named[N_PAGES];

static uint32_t
outstanding(const struct model *m)
{
	return m->n_held + m->ring_n;
}

static void
check_pool(const char *after)
{
	uint32_t out = outstanding(&mdl[0]) + outstanding(&mdl[1]);
	unsigned int av = rte_mempool_avail_count(pool);

	FUZZ_ASSERT(av + out == pool_size, "after %s: pool avail %u + outstanding %u != %u", after,
		    av, out, pool_size);
}

static void
consumer_create(struct model *m)
{
	struct egw_rxtok_consumer_conf conf = {
		.name = m->name,
		.region = reg,
		.quota = QUOTA,
		.match = EGW_RXTOK_MATCH_UDP_DPORT,
		.udp_dport = m->dport,
	};

	m->c = egw_rxtok_consumer_create(&conf);
	FUZZ_ASSERT(m->c != NULL, "create %s: %s", m->name, rte_strerror(rte_errno));
	memset(m->held, 0, sizeof(m->held));
	m->n_held = 0;
	m->ring_head = 0;
	m->ring_n = 0;
	m->closed = false;
	m->steered = false;
}

static void
consumer_forget(struct model *m)
{
	memset(m->held, 0, sizeof(m->held));
	m->n_held = 0;
	m->ring_n = 0;
	m->ring_head = 0;
}

static void
op_deliver(struct model *m, uint8_t arg)
{
	static const uint16_t sizes[4] = {1, 100, 3000, 5000};
	static uint8_t frame[T_FRAME_MAX];
	struct t_frame f = {.kind = T_UDP4, .dst4_last = 9, .dport = m->dport};
	struct egw_rxtok_burst_res res = {0};
	struct egw_rxtok_rec exp[4];
	struct t_layout lo;
	struct rte_mbuf *pkt;
	bool steer = (arg & 8) != 0;
	uint32_t nrec, i;
	uint16_t pass;

	f.plen = sizes[(arg >> 1) & 3];
	lo = t_build(&f, frame);
	pkt = t_chain(pool, frame, lo.len, 0, 0);
	if (pkt == NULL)
		return; /* pool empty: every page is out */
	nrec = t_expect_recs(pkt, base, lo.l4_off, lo.l4_len, exp, RTE_DIM(exp));
	pass = t_deliver(qsbr, 0, steer ? 1 : 0, &pkt, 1, &res);
	if (m->closed) {
		FUZZ_ASSERT(pass == 1 && res.delivered == 0, "closed consumer's flow passes");
		rte_pktmbuf_free(pkt);
		return;
	}
	FUZZ_ASSERT(pass == 0, "a consumer's frame does not pass");
	if (steer) {
		FUZZ_ASSERT(res.drop[EGW_RXTOK_DROP_STEERED] == 1, "steered");
		m->steered = true;
		return;
	}
	if (outstanding(m) + nrec > QUOTA) {
		FUZZ_ASSERT(res.drop[EGW_RXTOK_DROP_QUOTA] == 1 && res.delivered == 0,
			    "quota drop (outstanding %u + %u)", outstanding(m), nrec);
		return;
	}
	FUZZ_ASSERT(res.delivered == 1 && res.records == nrec, "delivered %u records %u/%u",
		    res.delivered, res.records, nrec);
	for (i = 0; i < nrec; i++)
		m->ring[(m->ring_head + m->ring_n++) % QUOTA] = exp[i].token;
}

static void
op_recv(struct model *m, unsigned int max)
{
	struct egw_rxtok_rec recs[QUOTA + 8];
	int n = egw_rxtok_recv(m->c, recs, max), i;

	if (m->closed) {
		FUZZ_ASSERT(n == -EBADF, "recv on closed: %d", n);
		return;
	}
	if (m->steered) {
		FUZZ_ASSERT(n == -EPIPE, "recv after steering: %d", n);
		m->steered = false;
		return;
	}
	FUZZ_ASSERT(n == (int)RTE_MIN(max, m->ring_n), "recv %d of %u waiting (max %u)", n,
		    m->ring_n, max);
	for (i = 0; i < n; i++) {
		uint32_t t = m->ring[m->ring_head];

		FUZZ_ASSERT(recs[i].token == t, "record %d token %u, expected %u", i, recs[i].token,
			    t);
		m->ring_head = (m->ring_head + 1) % QUOTA;
		m->ring_n--;
		m->held[t]++;
		m->n_held++;
	}
}

/* The return value the contract gives for this call, from the model. */
static int
expect_return(const struct model *m, bool null_c, uint32_t region, const struct egw_rxtok_range *r,
	      unsigned int n)
{
	unsigned int i, j;
	int rc = 0;

	if (null_c)
		return -ENOTCONN;
	if (m->closed)
		return -EBADF;
	if (r == NULL)
		return -EINVAL;
	if (region != rid)
		return -EXDEV;
	if (n == 0 || n > EGW_RXTOK_MAX_RANGES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (r[i].token_count == 0 || r[i].token_count > EGW_RXTOK_MAX_RANGE_TOKENS)
			return -EINVAL;
		if (r[i].token_start >= N_PAGES || r[i].token_count > N_PAGES - r[i].token_start)
			return -ERANGE;
	}
	for (i = 0; i < n && rc == 0; i++)
		for (j = 0; j < r[i].token_count; j++)
			if (++named[r[i].token_start + j] > m->held[r[i].token_start + j])
				rc = -ENOENT;
	for (i = 0; i < n; i++)
		for (j = 0; j < r[i].token_count; j++)
			named[r[i].token_start + j] = 0;
	if (rc == 0)
		for (i = 0; i < n; i++)
			rc += (int)r[i].token_count;
	return rc;
}

/* The i-th token (cyclically) the model says m holds; 0 if none. */
static uint32_t
held_token(const struct model *m, uint32_t i)
{
	uint32_t t, k = 0;

	if (m->n_held == 0)
		return 0;
	i %= m->n_held;
	for (t = 0; t < N_PAGES; t++) {
		if (m->held[t] == 0)
			continue;
		if (i < k + m->held[t])
			return t;
		k += m->held[t];
	}
	return 0;
}

static void
do_return(struct model *m, bool null_c, uint32_t region, const struct egw_rxtok_range *r,
	  unsigned int n)
{
	unsigned int av = rte_mempool_avail_count(pool), i, j;
	int exp = expect_return(m, null_c, region, r, n);
	int rc = egw_rxtok_return(null_c ? NULL : m->c, region, r, n);

	FUZZ_ASSERT(rc == exp, "return: %d, the model says %d", rc, exp);
	if (rc < 0) {
		FUZZ_ASSERT(rte_mempool_avail_count(pool) == av, "rejected return moved pages");
		return;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < r[i].token_count; j++) {
			m->held[r[i].token_start + j]--;
			m->n_held--;
		}
	FUZZ_ASSERT(rte_mempool_avail_count(pool) == av + (unsigned int)rc,
		    "return of %d: avail %u -> %u", rc, av, rte_mempool_avail_count(pool));
}

static void
op_return_arbitrary(struct in *in, uint8_t who)
{
	static struct egw_rxtok_range r[MAXR];
	struct model *m = &mdl[who & 1], *other = &mdl[(who & 1) ^ 1];
	uint8_t rsel = in_u8(in);
	uint32_t region = rsel == 0 ? rid : rsel == 1 ? rid + 1 : rsel == 2 ? in_uint(in, 4) : rid;
	unsigned int n = in_u8(in) % (MAXR + 1), i;

	for (i = 0; i < n && i < MAXR; i++) {
		uint8_t mode = in_u8(in);

		switch (mode & 7) {
		case 0:
		case 1:
		case 2: r[i].token_start = held_token(m, in_u8(in)); break;
		case 3: r[i].token_start = held_token(other, in_u8(in)); break;
		case 4: r[i].token_start = in_u8(in); break;
		case 5: r[i].token_start = in_uint(in, 2); break;
		case 6: r[i].token_start = in_uint(in, 4); break;
		default: r[i].token_start = N_PAGES - 1 - in_u8(in) % 4; break;
		}
		switch (mode >> 5) {
		case 0:
		case 1:
		case 2:
		case 3: r[i].token_count = 1; break;
		case 4: r[i].token_count = 1 + (in_u8(in) & 3); break;
		case 5: r[i].token_count = in_uint(in, 2); break;
		case 6: r[i].token_count = in_uint(in, 4); break;
		default: r[i].token_count = 0; break;
		}
	}
	do_return(m, (who & 6) == 6, region, (who & 0x18) == 0x18 ? NULL : r, n);
}

static void
op_return_held(struct model *m, unsigned int k)
{
	struct egw_rxtok_range r[EGW_RXTOK_MAX_RANGES];
	uint32_t t;
	unsigned int n = 0;

	/* runs of consecutive held tokens become one range */
	for (t = 0; t < N_PAGES && n < RTE_MIN(k, (unsigned int)EGW_RXTOK_MAX_RANGES); t++) {
		if (m->held[t] == 0)
			continue;
		if (n > 0 && r[n - 1].token_start + r[n - 1].token_count == t)
			r[n - 1].token_count++;
		else
			r[n++] = (struct egw_rxtok_range){t, 1};
	}
	if (n == 0)
		return;
	do_return(m, false, rid, r, n);
}

static void
op_close(struct model *m)
{
	FUZZ_ASSERT(egw_rxtok_consumer_close(m->c) == 0, "close");
	consumer_forget(m);
	m->closed = true;
}

static void
op_recreate(struct model *m)
{
	FUZZ_ASSERT(egw_rxtok_consumer_destroy(m->c) == 0, "destroy");
	consumer_forget(m);
	consumer_create(m);
}

static long long
json_field(const char *name, const char *key)
{
	static char *buf;
	static size_t len;
	char pat[64], kp[32], *p, *q;
	long long v = -1;
	FILE *f;

	buf = NULL;
	len = 0;
	f = open_memstream(&buf, &len);
	if (f == NULL)
		abort();
	egw_rxtok_json(f);
	fclose(f);
	snprintf(pat, sizeof(pat), "{\"name\": \"%s\",", name);
	snprintf(kp, sizeof(kp), "\"%s\": ", key);
	p = strstr(buf, pat);
	if (p != NULL && (q = strstr(p, kp)) != NULL)
		v = strtoll(q + strlen(kp), NULL, 10);
	free(buf);
	return v;
}

/* Both consumers fresh, each holding 2 tokens with 1 record waiting. */
static void
reset(void)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		if (mdl[k].c != NULL)
			FUZZ_ASSERT(egw_rxtok_consumer_destroy(mdl[k].c) == 0, "destroy");
		consumer_forget(&mdl[k]);
		consumer_create(&mdl[k]);
	}
	FUZZ_ASSERT(rte_mempool_avail_count(pool) == pool_size, "pool full after reset");
	for (k = 0; k < 2; k++) {
		op_deliver(&mdl[k], 0);
		op_deliver(&mdl[k], 2);
		op_deliver(&mdl[k], 0);
		op_recv(&mdl[k], 2);
	}
	check_pool("reset");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	RTE_SET_USED(argc);
	if (fuzz_eal_init((*argv)[0]) < 0) {
		fprintf(stderr, "fuzz_rxtok_return: rte_eal_init: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
	qsbr = t_qsbr_create();
	if (qsbr == NULL || egw_eth_init() != 0 || egw_rxtok_init(qsbr) != 0) {
		fprintf(stderr, "fuzz_rxtok_return: set-up failed\n");
		exit(1);
	}
	reg = egw_rxtok_region_create("fz_rxtok", REGION_SIZE, RTE_PGSIZE_2M);
	if (reg == NULL) {
		int err = rte_errno;

		fprintf(stderr, "fuzz_rxtok_return: %s: region of 2 MiB: %s\n",
			err == ENOMEM ? "SKIP (no free 2 MiB hugepage)" : "FAIL",
			rte_strerror(err));
		rte_eal_cleanup();
		exit(err == ENOMEM ? 77 : 1);
	}
	pool = egw_rxtok_region_pool(reg);
	if (pool == NULL || egw_rxtok_bind(reg, 0, 0) != 0) {
		fprintf(stderr, "fuzz_rxtok_return: pool/bind: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
	rid = egw_rxtok_region_id(reg);
	base = t_region_base(pool);
	pool_size = rte_mempool_avail_count(pool);
	FUZZ_ASSERT(pool_size == N_PAGES, "pool of %u", pool_size);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	unsigned int k;

	reset();
	while (in.n != 0) {
		uint8_t op = in_u8(&in), a = in_u8(&in);
		struct model *m = &mdl[a & 1];

		switch (op % 6) {
		case 0: op_deliver(m, a); break;
		case 1: op_recv(m, in_u8(&in) % (QUOTA + 8)); break;
		case 2: op_return_arbitrary(&in, a); break;
		case 3: op_return_held(m, in_u8(&in)); break;
		case 4:
			if (!m->closed)
				op_close(m);
			break;
		default: op_recreate(m); break;
		}
		check_pool("an operation");
	}
	for (k = 0; k < 2; k++) {
		long long o = json_field(mdl[k].name, "outstanding");
		long long h = json_field(mdl[k].name, "held");

		FUZZ_ASSERT(o == outstanding(&mdl[k]) && h == mdl[k].n_held,
			    "%s: library says outstanding %lld held %lld, model %u %u", mdl[k].name,
			    o, h, outstanding(&mdl[k]), mdl[k].n_held);
	}
	return 0;
}
