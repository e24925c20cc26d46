/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rxtokens: zero-copy payload delivery through a page-indexed token array
 * over hugepage regions.
 *
 * A region is hugepage memory (a memfd, so its descriptor can be passed to
 * another process) registered with DPDK and cut into 4 KiB pages; a token is
 * a page index. Binding a region to RX queues makes those queues receive into
 * an external-buffer mempool whose buffers are the region's pages (one page
 * per mbuf), so a received payload already sits in region memory.
 *
 * A consumer belongs to one region (its binding) and subscribes to one flow.
 * The worker that receives a matching packet keeps the mbuf, takes one
 * reference per page holding payload and enqueues a record {token, offset,
 * size, ...} on the consumer's ring. The consumer reads records (they become
 * tokens it holds) and returns ranges of tokens; a page goes back to its
 * mempool when its last reference drops.
 *
 * Threading: workers call egw_rxtok_deliver_burst() (lock-free: atomic page
 * refcounts, a multi-producer ring per consumer). Everything else, and all of
 * one consumer's ownership state, is used by one thread at a time: the
 * control thread, or the thread an in-process consumer belongs to.
 *
 * Bookkeeping: a 32-bit refcount per page, a few page-to-mbuf runs, and
 * per consumer a table of the tokens it holds sized by its quota, never by
 * the region: memory grows as pages + consumers x quota, not pages x
 * consumers.
 */
#ifndef EGW_RXTOK_H
#define EGW_RXTOK_H

#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#include "egw_rxtok_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most regions. */
#define EGW_RXTOK_MAX_REGIONS 16
/** Most consumers at once. */
#define EGW_RXTOK_MAX_CONSUMERS 16384
/** Default and largest quota (tokens outstanding per consumer). */
#define EGW_RXTOK_DEF_QUOTA 256
#define EGW_RXTOK_MAX_QUOTA 65536

struct egw_rxtok_region;
struct egw_rxtok_consumer;

/** A consumer's gid that accepts a process of any group of its uid. */
#define EGW_RXTOK_ID_ANY UINT32_MAX

/** RX descriptors counted for a bound queue whose PMD does not report its
 *  ring size (rte_eth_rx_queue_info_get()). */
#define EGW_RXTOK_RXQ_DESC_DEFAULT 256

/** Pages counted per lcore for what it may hold in bursts (in flight). */
#define EGW_RXTOK_LCORE_BURST_PAGES 64

/** Why a worker did not deliver a matching packet. */
enum egw_rxtok_drop {
	EGW_RXTOK_DROP_QUOTA = 0,  /**< consumer at its quota (backpressure) */
	EGW_RXTOK_DROP_STEERED,    /**< arrived on a queue of another binding */
	EGW_RXTOK_DROP_DETACHED,   /**< external consumer not attached */
	EGW_RXTOK_DROP_RING_FULL,  /**< consumer's record ring full */
	EGW_RXTOK_DROP_EMPTY,      /**< matched, but no payload byte */
	EGW_RXTOK_DROP_NOT_REGION, /**< a buffer outside the region (a PMD that
				    *   ignores the queue's mempool: net_ring) */
	EGW_RXTOK_DROP_MAX
};

/** What one egw_rxtok_deliver_burst() call did, added to by the call. */
struct egw_rxtok_burst_res {
	uint32_t delivered;                /**< packets delivered */
	uint32_t records;                  /**< records enqueued */
	uint32_t drop[EGW_RXTOK_DROP_MAX]; /**< packets dropped (and freed) */
};

/**
 * Initialise the library. Call once on the main lcore after EAL.
 *
 * @param qsbr
 *   The RCU variable the workers report quiescent states on; consumers are
 *   freed only after a grace period of it.
 * @return 0, or -EINVAL if qsbr is NULL.
 */
int egw_rxtok_init(struct rte_rcu_qsbr *qsbr);

/**
 * Create a region: hugepage memfd of @p size bytes (a multiple of the huge
 * page size), mapped, registered with rte_extmem_register().
 *
 * @param name  unique name (1..31 characters)
 * @param size  bytes
 * @param hugepage_size  2 MiB or 1 GiB
 * @return the region, or NULL with rte_errno: EINVAL (bad name or size),
 *   EEXIST (name taken), ENOSPC (too many regions), ENOMEM (no hugepages).
 */
struct egw_rxtok_region *egw_rxtok_region_create(const char *name, uint64_t size,
						 uint64_t hugepage_size);

/**
 * Destroy a region that has no binding and no consumer.
 * @return 0, -EBUSY (bound or in use), -EINVAL (NULL).
 */
int egw_rxtok_region_destroy(struct egw_rxtok_region *r);

/** Find a region by name; NULL if none. */
struct egw_rxtok_region *egw_rxtok_region_find(const char *name);

/** Region by id (0 .. EGW_RXTOK_MAX_REGIONS-1); NULL if none. */
struct egw_rxtok_region *egw_rxtok_region_get(uint32_t id);

/** Region id, as consumers see it. */
uint32_t egw_rxtok_region_id(const struct egw_rxtok_region *r);

/**
 * Address of a page of the region (for an in-process consumer reading a
 * record: page + rec.offset).
 * @return the page, or NULL if @p token is out of range.
 */
const uint8_t *egw_rxtok_region_page(const struct egw_rxtok_region *r, uint32_t token);

/**
 * The trust domain of a region: the uid and gid of its first consumer,
 * kept until the region is destroyed (a process that once mapped the region
 * may keep its mapping).
 * @return 1 and the owner, or 0 if the region never had a consumer.
 */
int egw_rxtok_region_owner(const struct egw_rxtok_region *r, uint32_t *uid, uint32_t *gid);

/** Region name. */
const char *egw_rxtok_region_name(const struct egw_rxtok_region *r);

/**
 * The region's mbuf pool (created on first use: one mbuf per 4 KiB page,
 * its buffer the page). The caller sets its RX queues up with it.
 * @return the pool, or NULL with rte_errno.
 */
struct rte_mempool *egw_rxtok_region_pool(struct egw_rxtok_region *r);

/**
 * Record that RX queue (port, queue) is bound to region @p r (the caller has
 * set the queue up with egw_rxtok_region_pool()). Forwarding must be stopped.
 * The queue's descriptors (rte_eth_rx_queue_info_get(), or
 * EGW_RXTOK_RXQ_DESC_DEFAULT when the PMD does not report them) join the
 * region's receive reserve (egw_rxtok_region_quota_room()).
 * @return 0, -EBUSY (the queue already has a binding), -ENOSPC (the
 *   quotas of the region's consumers would leave the bound queues too few
 *   pages with this queue's reserve), -EINVAL.
 */
int egw_rxtok_bind(struct egw_rxtok_region *r, uint16_t port, uint16_t queue);

/** egw_rxtok_bind_flags(): the operator's word that the port carries only
 *  the region owner's traffic, who may then read every frame of the queue;
 *  the port is not steered (egw_rxtok_steer_port() leaves it alone). */
#define EGW_RXTOK_BIND_SHARED 1u

/**
 * egw_rxtok_bind() with flags (0 or EGW_RXTOK_BIND_SHARED). A port's
 * bindings are either all shared, to one region, or none is.
 * @return as egw_rxtok_bind(), and -EXDEV: a shared binding on a port
 *   with bindings that are not shared or are to another region, or one
 *   that is not shared on a port with shared bindings.
 */
int egw_rxtok_bind_flags(struct egw_rxtok_region *r, uint16_t port, uint16_t queue,
			 unsigned int flags);

/** 1 if (port, queue) is bound with EGW_RXTOK_BIND_SHARED, else 0. */
int egw_rxtok_binding_shared(uint16_t port, uint16_t queue);

/**
 * Steer a port from its bindings and the consumers of their regions: on a
 * port with bound queues that are not shared, every consumer's flow goes
 * to its region's bound queue by rte_flow rules (ingress, action QUEUE, or
 * RSS over the region's bound queues of the port), and every other frame
 * to the unbound queues, by a lowest-priority catch-all rule and the RSS
 * redirection table (rte_eth_dev_rss_reta_update()) where the port has
 * them. Every rule is validated first. Replaces the port's previous rules;
 * a port without bindings (or with shared ones) is left with none. New
 * consumers get their rules as they are created (failing with
 * EOPNOTSUPP when the port refuses them), and lose them when destroyed.
 * Control thread.
 * @return 0, or with no rule of ours left on the port and
 *   egw_rxtok_steer_error() saying why: -ENOSPC (no RX queue left
 *   unbound), -ENOTSUP or -EOPNOTSUPP (the port can do neither a catch-all
 *   rule nor the table, or a rule was refused), -ENOMEM, -ENODEV.
 */
int egw_rxtok_steer_port(uint16_t port);

/** Destroy the port's rules and give it back its redirection table (before
 *  it stops, at exit). */
void egw_rxtok_steer_flush(uint16_t port);

/** egw_rxtok_steer_flush() on every steered port. */
void egw_rxtok_steer_flush_all(void);

/** 1 if the port's steering is in place (egw_rxtok_steer_port() succeeded
 *  with bound queues that are not shared). */
int egw_rxtok_port_steered(uint16_t port);

/** What the port's steering is, for people ("2 consumer rules, catch-all
 *  rss, reta", or "none"). @return as snprintf(). */
int egw_rxtok_steer_describe(uint16_t port, char *buf, size_t len);

/** Why the last steering call failed (the rte_flow_error message or the
 *  ethdev error, with the rule it was for); "" after a success. */
const char *egw_rxtok_steer_error(void);

/**
 * Forget the binding of RX queue (port, queue) to region @p r: its frames no
 * longer land in the region once the caller has set the queue up with
 * another pool (forwarding stopped). Counted as bound with the descriptors
 * it has now. The way to stop new traffic reaching the pages a detached
 * process may still map.
 * @return 0, -ENOENT (not bound to @p r), -EINVAL.
 */
int egw_rxtok_unbind(struct egw_rxtok_region *r, uint16_t port, uint16_t queue);

/**
 * Map the region for DMA by the port's device (rte_dev_dma_map()).
 * @return 0, -ENOTSUP when the device needs no mapping (vdevs), or an errno.
 */
int egw_rxtok_region_dma_map(struct egw_rxtok_region *r, uint16_t port);

/**
 * Pages of the region the bound queues keep to receive into: the
 * descriptors of every bound queue, plus per EAL lcore the mempool cache's
 * flush threshold (1.5 x its size: what one lcore's cache may keep) and
 * EGW_RXTOK_LCORE_BURST_PAGES (what it holds in bursts).
 */
uint64_t egw_rxtok_region_reserve(const struct egw_rxtok_region *r);

/**
 * Admission control: tokens that more consumers of the region may still be
 * given as quota. The sum of the quotas of a region's consumers never
 * exceeds its pages less egw_rxtok_region_reserve(), so consumers that
 * hold their whole quota still leave the bound queues their reserve.
 * @return pages - reserve - sum of quotas (0 if none left).
 */
uint64_t egw_rxtok_region_quota_room(const struct egw_rxtok_region *r);

/** Region bound to (port, queue), or NULL. */
struct egw_rxtok_region *egw_rxtok_binding(uint16_t port, uint16_t queue);

/** Consumer configuration. */
struct egw_rxtok_consumer_conf {
	const char *name; /**< unique, 1..63 characters */
	struct egw_rxtok_region *region;
	uint32_t quota; /**< 0 = EGW_RXTOK_DEF_QUOTA */
	enum egw_rxtok_match match;
	uint16_t udp_dport;     /**< EGW_RXTOK_MATCH_UDP_DPORT */
	uint16_t pppoe_session; /**< EGW_RXTOK_MATCH_PPPOE */
	uint8_t dst[16];        /**< DST4 (first 4 bytes) or DST6, network order */
	int external;           /**< fed to a process attaching by socket */
	/** external: the process must have this uid (SO_PEERCRED); the
	 *  region's consumers must all have the same uid and gid (a region is
	 *  one trust domain). In-process consumers: edgegw's own. 0 (a zeroed
	 *  conf): root only. */
	uint32_t uid;
	uint32_t gid;     /**< the process's gid, or EGW_RXTOK_ID_ANY */
	const char *dump; /**< in-process consumer served by egw_rxtok_service():
					     each payload appended to this file as a 4-byte
					     big-endian length and the bytes; NULL: none */
};

/**
 * Create a consumer and publish its flow match.
 * @return the consumer, or NULL with rte_errno: EINVAL, EEXIST (name or
 *   flow taken: the message names the other consumer), ENOSPC (no consumer
 *   slot), EDQUOT (the quota does not fit the region's quota room:
 *   egw_rxtok_region_quota_room()), EACCES (the region belongs to another
 *   uid/gid: egw_rxtok_region_owner()), ENOMEM, ENOTCONN (region NULL: no
 *   binding).
 */
struct egw_rxtok_consumer *egw_rxtok_consumer_create(const struct egw_rxtok_consumer_conf *conf);

/**
 * Close a consumer: unpublish its flow, wait for an RCU grace period (no
 * worker delivers to it any more), release every reference it holds or has
 * waiting in its ring, and detach its process. The consumer keeps its name
 * until destroyed; receive and return on it fail with -EBADF.
 * @return 0 (also if already closed) or -EINVAL.
 */
int egw_rxtok_consumer_close(struct egw_rxtok_consumer *c);

/**
 * Close (if needed) and free a consumer.
 * @return 0 or -EINVAL.
 */
int egw_rxtok_consumer_destroy(struct egw_rxtok_consumer *c);

/** True if a process is attached to this external consumer (or it is an
 *  in-process one). */
int egw_rxtok_consumer_attached(const struct egw_rxtok_consumer *c);

/** Find a consumer by name; NULL if none. */
struct egw_rxtok_consumer *egw_rxtok_consumer_find(const char *name);

/**
 * Read up to @p n records; their tokens become held by the consumer.
 * @return records read (0 if none), -EPIPE once after the consumer's flow
 *   was steered to a queue of another binding (packets not delivered),
 *   -EBADF if the consumer is closed, -ENOTCONN if @p c is NULL.
 */
int egw_rxtok_recv(struct egw_rxtok_consumer *c, struct egw_rxtok_rec *recs, unsigned int n);

/**
 * Give tokens back. All or nothing: either every token of every range was
 * held (as many times as it is named) and is released, or nothing changes.
 *
 * @param region  the region id the tokens belong to
 * @return tokens released, or: -ENOTCONN (@p c NULL: no binding), -EBADF
 *   (closed), -EXDEV (another region), -EINVAL (n or a range count 0 or too
 *   large), -ERANGE (a token past the region), -ENOENT (a token not held, or
 *   named more often than held). Every rejection is counted.
 */
int egw_rxtok_return(struct egw_rxtok_consumer *c, uint32_t region,
		     const struct egw_rxtok_range *ranges, unsigned int n);

/**
 * Worker: offer a burst of classified frames (lib/eth) received on
 * (port, queue). Frames of a consumer's flow are delivered (kept for the
 * consumer) or dropped with a reason (and freed); the others are moved to
 * the front, in order, for the next stage.
 *
 * @return the number of frames passed on, now pkts[0 .. ret-1].
 */
uint16_t egw_rxtok_deliver_burst(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t n,
				 struct egw_rxtok_burst_res *res);

/**
 * Listen for external consumers on a UNIX socket (SOCK_SEQPACKET).
 * @return 0, -EALREADY, or a negative errno from socket/bind/listen.
 */
int egw_rxtok_listen(const char *path);

/**
 * Control thread: accept and answer consumers, detect closed or dead ones
 * (releasing what they held), move records to attached consumers' shared
 * rings, take their returned ranges. Call often; cheap when idle.
 * @return units of work done (0 when idle).
 */
unsigned int egw_rxtok_service(void);

/**
 * Number of consumers (any thread). While one exists, egw_rxtok_service()
 * should run about every millisecond: returns come through shared memory,
 * and nothing announces them.
 */
unsigned int egw_rxtok_consumer_count(void);

/** Close the listening socket and every attachment; destroy everything. */
void egw_rxtok_fini(void);

/** Print regions, bindings and/or consumers ("regions", "bindings",
 *  "consumers" or NULL for all). */
void egw_rxtok_show(FILE *f, const char *what);

/** Write regions and consumers as a JSON object (for --stats-json). */
void egw_rxtok_json(FILE *f);

/** One consumer's counters, as show rxtokens and the JSON give them. */
struct egw_rxtok_consumer_stats {
	const char *name;
	const char *region;
	uint32_t uid, gid; /**< gid may be EGW_RXTOK_ID_ANY */
	int external, attached, closed;
	uint32_t quota, outstanding, held;
	uint64_t read, returned, released, rejected, ret_failed, steered, corrupt, attaches,
		cred_refused;
	uint64_t drops[EGW_RXTOK_DROP_MAX]; /**< its packets dropped, by reason */
	int shared; /**< its region is bound with EGW_RXTOK_BIND_SHARED somewhere */
};

/**
 * Call @p fn for every consumer with its counters, until it returns non-zero.
 * Control thread (or under the lock that serialises it): the strings are
 * valid during the call only.
 * @return what the last call of @p fn returned, 0 if none.
 */
int egw_rxtok_consumer_walk(int (*fn)(const struct egw_rxtok_consumer_stats *st, void *arg),
			    void *arg);

/** Drop reason names, for counters. */
const char *egw_rxtok_drop_name(unsigned int reason);

/**
 * Bytes of bookkeeping the library holds: page refcounts, page-to-mbuf
 * run tables (a few entries per region), consumer structures with their
 * held-token tables, and the fixed tables; rings excluded. Each
 * allocation counts with the allocator's per-element overhead, measured at
 * egw_rxtok_init(), so the figure is what the heap is charged.
 */
uint64_t egw_rxtok_bookkeeping_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* EGW_RXTOK_H */
