/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Consumers: creation and publication of their flow match, the tokens they
 * hold, receive and return with the ownership rule, release on close.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "rxtok_private.h"

int
rxtok_holdings_insert(struct egw_rxtok_consumer *c, uint32_t token)
{
	struct rxtok_holdings *h = &c->held;

	if (unlikely(h->count == h->cap))
		return -ENOSPC; /* never with count <= outstanding <= quota */
	h->tok[h->count] = token;
	/* pages of other consumers are written concurrently: relaxed atomics */
	__atomic_store_n(&c->region->state[token], rxtok_owner(c->idx, h->count), __ATOMIC_RELAXED);
	h->count++;
	return 0;
}

bool
rxtok_holdings_remove(struct egw_rxtok_consumer *c, uint32_t token)
{
	struct rxtok_holdings *h = &c->held;
	uint32_t *state = c->region->state;
	uint32_t v = __atomic_load_n(&state[token], __ATOMIC_RELAXED), slot, last;

	/* only this thread writes c's owner values: any other value read here
	 * (another consumer's, OUT, FREE) means c does not hold the token */
	if ((v >> 16) != c->idx + 1)
		return false;
	slot = v & 0xffff;
	last = h->tok[--h->count];
	if (slot != h->count) {
		h->tok[slot] = last;
		__atomic_store_n(&state[last], rxtok_owner(c->idx, slot), __ATOMIC_RELAXED);
	}
	/* out, no longer held: released next, or held again (all or nothing) */
	__atomic_store_n(&state[token], RXTOK_PAGE_OUT, __ATOMIC_RELAXED);
	return true;
}

static size_t
holdings_bytes(uint32_t quota)
{
	return sizeof(uint32_t) * (size_t)quota;
}

struct egw_rxtok_consumer *
egw_rxtok_consumer_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < rxtok.hi; i++) {
		struct egw_rxtok_consumer *c = rxtok.consumers[i];

		if (c != NULL && strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

static void
dst_key(const struct egw_rxtok_consumer_conf *conf, struct rxtok_dst_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = conf->match == EGW_RXTOK_MATCH_DST4 ? 4 : 6;
	memcpy(k->addr, conf->dst, k->family == 4 ? 4 : 16);
}

/* Consumer index already matching this flow, or -1. */
static int
flow_owner(const struct egw_rxtok_consumer_conf *conf)
{
	struct rxtok_dst_key k;
	void *data;

	switch (conf->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT: return (int)rxtok.udp_tbl[conf->udp_dport] - 1;
	case EGW_RXTOK_MATCH_PPPOE: return (int)rxtok.pppoe_tbl[conf->pppoe_session] - 1;
	case EGW_RXTOK_MATCH_DST4:
	case EGW_RXTOK_MATCH_DST6:
		dst_key(conf, &k);
		if (rte_hash_lookup_data(rxtok.dst_hash, &k, &data) >= 0)
			return (int)(uintptr_t)data - 1;
		return -1;
	default: return -1;
	}
}

/* Free a consumer that was never published, or no longer is. */
static void
consumer_free(struct egw_rxtok_consumer *c)
{
	if (c->dump != NULL)
		fclose(c->dump);
	free(c->dump_buf);
	rte_free(c->ring);
	rxtok_free(c, sizeof(*c) + holdings_bytes(c->quota));
}

struct egw_rxtok_consumer *
egw_rxtok_consumer_create(const struct egw_rxtok_consumer_conf *conf)
{
	struct egw_rxtok_consumer *c;
	uint32_t quota, idx, rsize, uid, gid;
	struct rxtok_dst_key k;
	size_t ring_bytes;
	char rname[RTE_RING_NAMESIZE];
	int i;

	if (conf == NULL || conf->name == NULL || conf->name[0] == '\0' ||
	    strlen(conf->name) >= sizeof(c->name) || conf->match == EGW_RXTOK_MATCH_NONE ||
	    conf->match > EGW_RXTOK_MATCH_PPPOE || conf->quota > EGW_RXTOK_MAX_QUOTA) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (conf->region == NULL || !conf->region->used) {
		rte_errno = ENOTCONN;
		return NULL;
	}
	if (rxtok.qsbr == NULL) {
		rte_errno = ENOTSUP; /* egw_rxtok_init() not called */
		return NULL;
	}
	if (egw_rxtok_consumer_find(conf->name) != NULL || flow_owner(conf) >= 0) {
		rte_errno = EEXIST;
		return NULL;
	}
	for (i = 0; i < EGW_RXTOK_MAX_CONSUMERS && rxtok.consumers[i] != NULL; i++)
		;
	if (i == EGW_RXTOK_MAX_CONSUMERS) {
		rte_errno = ENOSPC;
		return NULL;
	}
	idx = (uint32_t)i;
	quota = conf->quota != 0 ? conf->quota : EGW_RXTOK_DEF_QUOTA;
	/* in-process consumers are edgegw itself */
	uid = conf->external ? conf->uid : (uint32_t)geteuid();
	gid = conf->external ? conf->gid : (uint32_t)getegid();
	/* a region is one trust domain: every consumer that can map it reads
	 * every page of it, so they must all be one owner's */
	if (conf->region->owned &&
	    (conf->region->owner_uid != uid || conf->region->owner_gid != gid)) {
		RXTOK_LOG(ERR,
			  "consumer %s: region %s belongs to uid %u gid %d, not uid %u gid %d\n",
			  conf->name, conf->region->name, conf->region->owner_uid,
			  (int)conf->region->owner_gid, uid, (int)gid);
		rte_errno = EACCES;
		return NULL;
	}
	/* admission control: the quotas leave the bound queues their reserve */
	if (quota > egw_rxtok_region_quota_room(conf->region)) {
		RXTOK_LOG(ERR, "consumer %s: quota %u does not fit region %s (room %" PRIu64 ")\n",
			  conf->name, quota, conf->region->name,
			  egw_rxtok_region_quota_room(conf->region));
		rte_errno = EDQUOT;
		return NULL;
	}

	/* one allocation: the consumer and its holdings table behind it */
	c = rxtok_zmalloc("egw_rxtok_consumer", sizeof(*c) + holdings_bytes(quota));
	if (c == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	c->quota = quota;
	c->held.cap = quota;
	c->held.tok = (uint32_t *)(c + 1);
	/* records waiting never exceed the tokens outstanding (<= quota) */
	rsize = rte_align32pow2(quota + 1);
	ring_bytes = (size_t)rte_ring_get_memsize_elem(sizeof(struct egw_rxtok_rec), rsize);
	c->ring = rte_zmalloc("egw_rxtok_ring", ring_bytes, RTE_CACHE_LINE_SIZE);
	if (c->ring == NULL) {
		consumer_free(c);
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(rname, sizeof(rname), "egw_rxtok_c%u", idx);
	rte_ring_init(c->ring, rname, rsize, RING_F_SC_DEQ);

	snprintf(c->name, sizeof(c->name), "%s", conf->name);
	c->idx = idx;
	c->region = conf->region;
	c->external = conf->external != 0;
	c->attached = c->external ? 0 : 1;
	c->uid = uid;
	c->gid = gid;
	c->match = conf->match;
	c->udp_dport = conf->udp_dport;
	c->pppoe_session = conf->pppoe_session;
	memcpy(c->dst, conf->dst, sizeof(c->dst));
	c->dst_pos = -1;
	c->sock = -1;
	c->shm_fd = -1;
	if (conf->dump != NULL) {
		c->dump_buf = malloc(UINT16_MAX + 1);
		c->dump = fopen(conf->dump, "w");
		if (c->dump == NULL || c->dump_buf == NULL || c->external) {
			int err = c->external ? EINVAL : errno ? errno : ENOMEM;

			consumer_free(c);
			rte_errno = err;
			return NULL;
		}
	}

	/* its flow to its region's bound queues before it is published, so
	 * no frame of it is forwarded from elsewhere once it is; a port that
	 * refuses the rules refuses the consumer (fail closed: without them
	 * the flow would never reach the region) */
	if (rxtok_steer_consumer_add(c) < 0) {
		consumer_free(c);
		rte_errno = EOPNOTSUPP;
		return NULL;
	}

	/* publish the consumer before its match: a worker that finds the
	 * match finds an initialised consumer (release here, acquire in
	 * deliver.c's lookups) */
	__atomic_store_n(&rxtok.consumers[idx], c, __ATOMIC_RELEASE);
	switch (c->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT:
		__atomic_store_n(&rxtok.udp_tbl[c->udp_dport], (uint16_t)(idx + 1),
				 __ATOMIC_RELEASE);
		break;
	case EGW_RXTOK_MATCH_PPPOE:
		__atomic_store_n(&rxtok.pppoe_tbl[c->pppoe_session], (uint16_t)(idx + 1),
				 __ATOMIC_RELEASE);
		break;
	default:
		dst_key(conf, &k);
		/* the lock-free hash publishes the key with release semantics */
		c->dst_pos =
			rte_hash_add_key_data(rxtok.dst_hash, &k, (void *)(uintptr_t)(idx + 1));
		if (c->dst_pos < 0) {
			int err = -c->dst_pos;

			__atomic_store_n(&rxtok.consumers[idx], NULL, __ATOMIC_RELEASE);
			rxtok_steer_consumer_del(c);
			consumer_free(c);
			rte_errno = err;
			return NULL;
		}
		__atomic_add_fetch(&rxtok.n_dst, 1, __ATOMIC_RELEASE);
		break;
	}
	c->region->n_consumers++;
	c->region->quota_sum += quota;
	if (!c->region->owned) {
		/* kept until the region goes: its mappings may outlive consumers */
		c->region->owned = true;
		c->region->owner_uid = uid;
		c->region->owner_gid = gid;
	}
	if (idx >= rxtok.hi)
		rxtok.hi = idx + 1;
	__atomic_add_fetch(&rxtok.n_consumers, 1, __ATOMIC_RELEASE);
	return c;
}

int
egw_rxtok_consumer_attached(const struct egw_rxtok_consumer *c)
{
	return c != NULL && !c->closed && __atomic_load_n(&c->attached, __ATOMIC_ACQUIRE);
}

/* Release every reference the consumer holds or has waiting: records still
 * in its ring and tokens it holds. Costs what it held, not the region.
 * Workers must not be delivering to c any more (unpublished or detached,
 * then a grace period). */
void
rxtok_release_all(struct egw_rxtok_consumer *c)
{
	struct egw_rxtok_rec recs[64];
	uint32_t released = 0, i;
	struct rxtok_put put;
	unsigned int n;

	put.n = 0;
	while ((n = rte_ring_sc_dequeue_burst_elem(c->ring, recs, sizeof(recs[0]), RTE_DIM(recs),
						   NULL)) != 0) {
		for (i = 0; i < n; i++)
			rxtok_page_put(c->region, recs[i].token, &put);
		released += n;
	}
	for (i = 0; i < c->held.count; i++)
		rxtok_page_put(c->region, c->held.tok[i], &put);
	rxtok_put_flush(c->region, &put);
	released += c->held.count;
	c->held.count = 0;
	c->n_released += released;
	__atomic_sub_fetch(&c->outstanding, released, __ATOMIC_RELEASE);
}

int
egw_rxtok_consumer_close(struct egw_rxtok_consumer *c)
{
	if (c == NULL || __atomic_load_n(&rxtok.consumers[c->idx], __ATOMIC_RELAXED) != c)
		return -EINVAL;
	if (c->closed)
		return 0;
	if (c->sock >= 0)
		rxtok_detach(c);
	switch (c->match) {
	case EGW_RXTOK_MATCH_UDP_DPORT:
		__atomic_store_n(&rxtok.udp_tbl[c->udp_dport], 0, __ATOMIC_RELEASE);
		break;
	case EGW_RXTOK_MATCH_PPPOE:
		__atomic_store_n(&rxtok.pppoe_tbl[c->pppoe_session], 0, __ATOMIC_RELEASE);
		break;
	default: {
		struct rxtok_dst_key k;
		struct egw_rxtok_consumer_conf conf = {.match = c->match};

		memcpy(conf.dst, c->dst, sizeof(conf.dst));
		dst_key(&conf, &k);
		rte_hash_del_key(rxtok.dst_hash, &k);
		__atomic_sub_fetch(&rxtok.n_dst, 1, __ATOMIC_RELEASE);
		break;
	}
	}
	__atomic_sub_fetch(&rxtok.n_consumers, 1, __ATOMIC_RELEASE);
	/* after the grace period no worker still has c from a lookup */
	rte_rcu_qsbr_synchronize(rxtok.qsbr, RTE_QSBR_THRID_INVALID);
	if (c->dst_pos >= 0) {
		rte_hash_free_key_with_position(rxtok.dst_hash, c->dst_pos);
		c->dst_pos = -1;
	}
	rxtok_release_all(c);
	c->closed = true;
	if (c->dump != NULL) {
		fclose(c->dump);
		c->dump = NULL;
	}
	return 0;
}

int
egw_rxtok_consumer_destroy(struct egw_rxtok_consumer *c)
{
	int rc = egw_rxtok_consumer_close(c);

	if (rc < 0)
		return rc;
	/* its flow goes where other frames go (and is dropped as steered) */
	rxtok_steer_consumer_del(c);
	__atomic_store_n(&rxtok.consumers[c->idx], NULL, __ATOMIC_RELEASE);
	while (rxtok.hi > 0 && rxtok.consumers[rxtok.hi - 1] == NULL)
		rxtok.hi--;
	c->region->n_consumers--;
	c->region->quota_sum -= c->quota;
	consumer_free(c);
	return 0;
}

int
egw_rxtok_recv(struct egw_rxtok_consumer *c, struct egw_rxtok_rec *recs, unsigned int n)
{
	unsigned int k, i;

	if (c == NULL) {
		__atomic_add_fetch(&rxtok.rej_notconn, 1, __ATOMIC_RELAXED);
		return -ENOTCONN;
	}
	if (c->closed)
		return -EBADF;
	if (__atomic_load_n(&c->steered, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&c->steered, 0, __ATOMIC_ACQUIRE)) {
		c->n_steered++;
		return -EPIPE;
	}
	k = rte_ring_sc_dequeue_burst_elem(c->ring, recs, sizeof(*recs), n, NULL);
	for (i = 0; i < k; i++)
		rxtok_holdings_insert(c, recs[i].token);
	c->n_recv += k;
	return (int)k;
}

int
rxtok_return(struct egw_rxtok_consumer *c, uint32_t region, const struct egw_rxtok_range *ranges,
	     unsigned int n)
{
	uint32_t total = 0, r, t;
	struct rxtok_put put;
	unsigned int i;

	if (c->region->id != region) {
		c->n_reject[RXTOK_REJ_XDEV]++;
		return -EXDEV;
	}
	if (n == 0 || n > EGW_RXTOK_MAX_RANGES) {
		c->n_reject[RXTOK_REJ_INVAL]++;
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (ranges[i].token_count == 0 ||
		    ranges[i].token_count > EGW_RXTOK_MAX_RANGE_TOKENS) {
			c->n_reject[RXTOK_REJ_INVAL]++;
			return -EINVAL;
		}
		if (ranges[i].token_start >= c->region->n_pages ||
		    ranges[i].token_count > c->region->n_pages - ranges[i].token_start) {
			c->n_reject[RXTOK_REJ_RANGE]++;
			return -ERANGE;
		}
	}
	/* take every token out of the holdings; on the first one not held,
	 * put back what was taken: all or nothing */
	for (i = 0; i < n; i++) {
		for (t = 0; t < ranges[i].token_count; t++) {
			if (rxtok_holdings_remove(c, ranges[i].token_start + t))
				continue;
			for (r = 0; r < i; r++)
				for (uint32_t u = 0; u < ranges[r].token_count; u++)
					rxtok_holdings_insert(c, ranges[r].token_start + u);
			for (uint32_t u = 0; u < t; u++)
				rxtok_holdings_insert(c, ranges[i].token_start + u);
			c->n_reject[RXTOK_REJ_NOENT]++;
			return -ENOENT;
		}
	}
	put.n = 0;
	for (i = 0; i < n; i++) {
		for (t = 0; t < ranges[i].token_count; t++)
			rxtok_page_put(c->region, ranges[i].token_start + t, &put);
		total += ranges[i].token_count;
	}
	/* the call's mbufs go back in one enqueue (one per RXTOK_PUT_BULK) */
	rxtok_put_flush(c->region, &put);
	c->n_returned += total;
	__atomic_sub_fetch(&c->outstanding, total, __ATOMIC_RELEASE);
	return (int)total;
}

int
egw_rxtok_return(struct egw_rxtok_consumer *c, uint32_t region,
		 const struct egw_rxtok_range *ranges, unsigned int n)
{
	if (c == NULL) {
		__atomic_add_fetch(&rxtok.rej_notconn, 1, __ATOMIC_RELAXED);
		return -ENOTCONN;
	}
	if (c->closed) {
		c->n_reject[RXTOK_REJ_BADF]++;
		return -EBADF;
	}
	if (ranges == NULL) {
		c->n_reject[RXTOK_REJ_INVAL]++;
		return -EINVAL;
	}
	return rxtok_return(c, region, ranges, n);
}
