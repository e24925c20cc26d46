/* SPDX-License-Identifier: BSD-3-Clause */
/* rxtokens internals shared by the library's files. */
#ifndef EGW_RXTOK_PRIVATE_H
#define EGW_RXTOK_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_hash.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "egw_rxtok.h"
#include "egw_rxtok_shring.h"

extern int egw_rxtok_logtype;
#define RXTOK_LOG(level, ...) rte_log(RTE_LOG_##level, egw_rxtok_logtype, "rxtokens: " __VA_ARGS__)

/* Pages first_token.. have their mbufs at mbuf + (token - first_token) x
 * stride. */
struct rxtok_run {
	uint32_t first_token;
	uint8_t *mbuf;
};

struct egw_rxtok_region {
	uint32_t id;
	bool used;
	char name[32];
	int memfd;
	uint8_t *base;
	uint64_t size;
	uint64_t hugepage_size;
	uint32_t n_pages; /**< 4 KiB pages: the token space */
	/* [n_pages] page state (relaxed atomics): RXTOK_PAGE_FREE,
	 * RXTOK_PAGE_OUT (delivered, not held: in a record ring, or being
	 * returned) or the holder, rxtok_owner(): a page is in at most one
	 * record at a time (one mbuf per page, a packet to one consumer) */
	uint32_t *state;
	/* page -> mbuf: the pool lays its mbufs out in runs of consecutive
	 * pages (one run per memory chunk of the pool, a handful), so the
	 * mapping costs a few bytes, not a pointer per page */
	struct rxtok_run *runs;
	uint32_t n_runs;
	uint32_t huge_shift; /**< log2(pages per hugepage) */
	/* [hugepages] the run holding the first page of each hugepage: the
	 * lookup searches only the runs that start in that hugepage */
	uint32_t *huge_run;
	uint32_t n_huge;
	size_t mbuf_stride;
	struct rte_mempool *pool;
	uint32_t n_bindings;
	uint32_t n_consumers;
	uint64_t rxq_desc;  /**< descriptors of the bound queues */
	uint64_t quota_sum; /**< quotas of the region's consumers */
	bool owned;         /**< owner_uid/gid set by the first consumer */
	uint32_t owner_uid;
	uint32_t owner_gid;
};

#define RXTOK_PAGE_FREE 0u
#define RXTOK_PAGE_OUT 1u

/* The page state of a page held by consumer idx at slot of its holdings:
 * never FREE or OUT (idx + 1 >= 1). idx < 16384 and slot < quota <= 65536
 * fit. */
static inline uint32_t
rxtok_owner(uint32_t idx, uint32_t slot)
{
	return (idx + 1) << 16 | slot;
}

/* Tokens a consumer holds: an array of at most quota tokens (removal moves
 * the last one into the hole); the page state of each names its slot, so
 * insert and remove are O(1) and a page is held at most once. */
struct rxtok_holdings {
	uint32_t count; /**< tokens held */
	uint32_t cap;   /**< quota */
	uint32_t *tok;
};

struct egw_rxtok_consumer {
	/* read by workers */
	char name[64];
	uint32_t idx;
	struct egw_rxtok_region *region;
	uint32_t quota;
	int external;
	int attached;          /**< external: a process is attached (atomic) */
	uint32_t uid, gid;     /**< who may attach (gid may be EGW_RXTOK_ID_ANY) */
	struct rte_ring *ring; /**< records, MP (workers) / SC (owner) */
	enum egw_rxtok_match match;
	uint16_t udp_dport;
	uint16_t pppoe_session;
	uint8_t dst[16];
	int32_t dst_pos; /**< position in the dst hash, -1 if none */

	/* written by workers (atomics), on a line of their own */
	uint32_t outstanding __rte_cache_aligned; /**< tokens delivered, not yet released */
	uint32_t steered;                         /**< flow seen on another binding */
	uint64_t drops[EGW_RXTOK_DROP_MAX];       /**< packets of its flow dropped, by reason */

	/* owner thread only */
	struct rxtok_holdings held __rte_cache_aligned;
	bool closed;
	uint64_t n_recv;      /**< records read */
	uint64_t n_returned;  /**< tokens returned */
	uint64_t n_released;  /**< tokens released by close/detach */
	uint64_t n_reject[8]; /**< rejected return calls by cause (rxtok_reject) */
	uint64_t n_steered;   /**< -EPIPE reported */
	uint64_t n_attach;

	/* external attachment (owner thread) */
	int sock;
	int shm_fd;
	size_t shm_size;
	struct egw_rxtok_shm_hdr *shm;
	/* private geometry and indices of the shared rings: never read back
	 * from the shared memory, which the consumer may write */
	struct egw_rxtok_shring_view xrec; /**< edgegw produces */
	struct egw_rxtok_shring_view xret; /**< edgegw consumes */
	uint64_t n_corrupt;                /**< attachments ended for insane ring indices */
	uint32_t n_ret_done;               /**< return-ring entries judged (shm ret_done) */
	uint64_t n_ret_failed;             /**< return-ring entries rejected */
	uint64_t n_cred_refused;           /**< attaches refused: wrong uid/gid */

	/* in-process dump consumer (owner thread) */
	FILE *dump;
	uint8_t *dump_buf;
	uint32_t dump_len;
	uint64_t dump_payloads;
};

enum rxtok_reject {
	RXTOK_REJ_NOTCONN = 0,
	RXTOK_REJ_BADF,
	RXTOK_REJ_XDEV,
	RXTOK_REJ_INVAL,
	RXTOK_REJ_RANGE,
	RXTOK_REJ_NOENT,
	RXTOK_REJ_MAX
};

/* Global state (control thread writes, workers read). */
struct rxtok_state {
	struct rte_rcu_qsbr *qsbr;
	struct egw_rxtok_region regions[EGW_RXTOK_MAX_REGIONS];
	struct egw_rxtok_consumer *consumers[EGW_RXTOK_MAX_CONSUMERS];
	uint32_t n_consumers;      /**< atomic: workers skip all work at 0 */
	uint32_t hi;               /**< consumers[] slots in use are below this */
	uint32_t n_dst;            /**< consumers matching on a destination */
	uint16_t udp_tbl[65536];   /**< UDP port -> consumer idx + 1 */
	uint16_t pppoe_tbl[65536]; /**< PPPoE session -> consumer idx + 1 */
	struct rte_hash *dst_hash; /**< struct rxtok_dst_key -> idx + 1 */
	uint8_t bind_tbl[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT]; /**< region id + 1 */
	int listen_fd;
	char listen_path[108];
	uint64_t malloc_overhead; /**< bytes rte_malloc adds to each allocation */
	uint64_t bookkeeping;     /**< bytes allocated for bookkeeping */
	uint64_t rej_notconn;     /**< token calls without a consumer/binding */
	struct {
		uint64_t accepted;     /**< connections given a pending slot */
		uint64_t cred_refused; /**< refused for their uid/gid (SO_PEERCRED) */
		uint64_t evicted;      /**< pending slots taken back for a newcomer */
		uint64_t timeouts;     /**< silent past RXTOK_HELLO_TIMEOUT_MS */
	} svc;                         /**< listening socket, control thread only */
};

struct rxtok_dst_key {
	uint8_t family; /* 4 or 6 */
	uint8_t pad[3];
	uint8_t addr[16];
};

extern struct rxtok_state rxtok;

void *rxtok_zmalloc(const char *what, size_t size);
void rxtok_free(void *p, size_t size);

/* The mbuf whose buffer is page token of r: the last run starting at or
 * before token, among those that start within token's hugepage (usually
 * none but the one found by the index). */
static inline struct rte_mbuf *
rxtok_page_mbuf(const struct egw_rxtok_region *r, uint32_t token)
{
	uint32_t h = token >> r->huge_shift;
	uint32_t lo = r->huge_run[h], hi = h + 1 < r->n_huge ? r->huge_run[h + 1] + 1 : r->n_runs;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (r->runs[mid].first_token <= token)
			lo = mid;
		else
			hi = mid;
	}
	return (struct rte_mbuf *)(r->runs[lo].mbuf +
				   (size_t)(token - r->runs[lo].first_token) * r->mbuf_stride);
}

/* Per lcore, written by that lcore only: the regions whose bound queues it
 * has delivered from (bit region id). Pages it gives back of such a region
 * go to its own mempool cache, where it allocates; any other lcore's go
 * to the pool's common store. */
struct rxtok_lcore {
	uint16_t rx_regions;
} __rte_cache_aligned;
extern struct rxtok_lcore rxtok_lcores[RTE_MAX_LCORE];

/* Mbufs of released pages on their way back to the pool,
 * one bulk enqueue per RXTOK_PUT_BULK (or per call: rxtok_put_flush()). */
#define RXTOK_PUT_BULK 64
struct rxtok_put {
	unsigned int n;
	void *objs[RXTOK_PUT_BULK];
};

void rxtok_page_put(struct egw_rxtok_region *r, uint32_t token, struct rxtok_put *p);
void rxtok_put_flush(struct egw_rxtok_region *r, struct rxtok_put *p);
void rxtok_page_release(struct egw_rxtok_region *r, uint32_t token);

int rxtok_seal_region(int fd);
int rxtok_check_seals(int fd, unsigned int want);

int rxtok_holdings_insert(struct egw_rxtok_consumer *c, uint32_t token);
bool rxtok_holdings_remove(struct egw_rxtok_consumer *c, uint32_t token);
void rxtok_release_all(struct egw_rxtok_consumer *c);
int rxtok_return(struct egw_rxtok_consumer *c, uint32_t region,
		 const struct egw_rxtok_range *ranges, unsigned int n);
void rxtok_detach(struct egw_rxtok_consumer *c);
const char *rxtok_match_str(const struct egw_rxtok_consumer *c, char *buf, size_t len);

/* Steering (steer.c): the rte_flow pattern of a consumer's flow. Rules of
 * UDP ports take precedence over those of destinations and sessions, as in
 * deliver.c; the catch-all is last. */
#define RXTOK_STEER_PRIO_ALL 2
struct rxtok_steer_pat {
	uint32_t prio;
	struct rte_flow_item items[5];
	struct rte_flow_item_ipv4 ip4, ip4m;
	struct rte_flow_item_ipv6 ip6, ip6m;
	struct rte_flow_item_udp udp, udpm;
	struct rte_flow_item_pppoe pppoe, pppoem;
	struct rte_flow_item_pppoe_proto_id proto, protom;
};

/* Patterns of c: 2 for udp-dport (IPv4, IPv6) and pppoe-session (PPP IPv4,
 * IPv6), else 1; pattern k of them into p (its items point into p). */
unsigned int rxtok_steer_n_patterns(const struct egw_rxtok_consumer *c);
void rxtok_steer_pattern(const struct egw_rxtok_consumer *c, unsigned int k,
			 struct rxtok_steer_pat *p);
/* Rules of a new consumer on every steered port (0, or -EOPNOTSUPP with
 * egw_rxtok_steer_error() saying why); removal of its rules. */
int rxtok_steer_consumer_add(const struct egw_rxtok_consumer *c);
void rxtok_steer_consumer_del(const struct egw_rxtok_consumer *c);
void rxtok_steer_set_shared(uint16_t port, uint16_t queue, bool shared);

#endif /* EGW_RXTOK_PRIVATE_H */
