/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rxtokens client: the consumer side for a process outside edgegw, plain C
 * without EAL.
 *
 * egw_rxtok_client_attach() connects to edgegw's rxtokens socket, says hello
 * with a consumer name and maps what the welcome passes: the region
 * (read-only) and the shared memory holding the header and the two rings.
 * The consumer then reads records (each names a fragment of a payload in a
 * page of the region; the page is held until given back), reads the payload
 * through egw_rxtok_client_page() and gives tokens back in ranges with
 * egw_rxtok_client_return(). Closing the connection (egw_rxtok_client_detach()
 * or the process dying) makes edgegw release every token the consumer held.
 *
 * The rings are egw_rxtok_shring.h rings (no DPDK): their geometry is
 * checked once at attach and kept privately; edgegw's ring indices are
 * never trusted beyond (prod - cons) <= size.
 *
 * Threading: one client is used by one thread at a time.
 */
#ifndef EGW_RXTOK_CLIENT_H
#define EGW_RXTOK_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "egw_rxtok_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How long egw_rxtok_client_attach() waits for each socket operation (ms). */
#define EGW_RXTOK_CLIENT_ATTACH_TIMEOUT_MS 10000

/** A consumer attached to edgegw (opaque). */
struct egw_rxtok_client;

/**
 * Attach to edgegw as consumer @p consumer.
 *
 * Connects a SOCK_SEQPACKET socket to @p socket_path, sends the hello,
 * receives the welcome and its two descriptors, maps the region read-only and
 * the shared memory read-write, and checks the shared header (magic, version,
 * sizes, page size, ring offsets and ring geometry). The descriptors are
 * closed once mapped; the socket stays open until egw_rxtok_client_detach().
 * Each socket operation waits at most EGW_RXTOK_CLIENT_ATTACH_TIMEOUT_MS.
 *
 * @param socket_path  edgegw's rxtokens socket
 * @param consumer  name given to "rxtokens consumer add" (1..63 characters)
 * @param err  on failure, a message naming the problem (the server's own
 *   message when it refused the consumer); may be NULL
 * @param errlen  size of @p err
 * @return the client, or NULL with errno set: EINVAL (bad argument, or a
 *   malformed welcome or shared header), ENAMETOOLONG (path or name too
 *   long), EPROTO (bad welcome magic, wrong descriptor count, unexpected
 *   status), EPROTONOSUPPORT (ABI version mismatch), the server's refusal
 *   (-welcome.status, e.g. ENOENT for an unknown consumer), ECONNRESET (the
 *   server closed the connection before answering), EAGAIN (timeout), or
 *   the errno of socket/connect/sendmsg/recvmsg/mmap/malloc.
 */
struct egw_rxtok_client *egw_rxtok_client_attach(const char *socket_path, const char *consumer,
						 char *err, size_t errlen);

/**
 * Read up to @p n records from the record ring. Each record's token is held
 * by the consumer until given back with egw_rxtok_client_return().
 *
 * Checks for a closed connection only when the ring is empty (one poll()).
 *
 * @param cl  the client
 * @param recs  array of at least @p n records
 * @param n  most records to read
 * Records are never handed out once edgegw has flagged the consumer
 * detached (EGW_RXTOK_SHM_F_DETACHED, set before any of its pages is
 * released): the check follows the read, and a detached consumer gets
 * -ENOTCONN instead, its records discarded.
 *
 * @return records read (0 if none), or: -EPIPE once after edgegw flagged
 *   the consumer's flow as steered to a queue of another binding (the flag
 *   is cleared; packets of the flow were not delivered), -ENOTCONN if
 *   edgegw detached the consumer or closed the connection (the tokens are
 *   no longer held; detach),
 *   -EPROTO if edgegw's record ring index is insane (nothing read),
 *   -EINVAL if @p cl is NULL or @p recs is NULL with @p n > 0.
 */
int egw_rxtok_client_recv(struct egw_rxtok_client *cl, struct egw_rxtok_rec *recs, unsigned int n);

/**
 * Address of the page a token names, in the read-only region mapping.
 *
 * @param cl  the client
 * @param token  page index
 * @return region base + token * EGW_RXTOK_PAGE_SIZE, or NULL if @p cl is
 *   NULL or @p token is past the region.
 */
const uint8_t *egw_rxtok_client_page(const struct egw_rxtok_client *cl, uint32_t token);

/**
 * Give tokens back: enqueue one return-ring entry {region id, start, count}
 * per range, in order. Ranges not enqueued because the ring is full are for
 * the caller to retry (from ranges[ret]).
 *
 * Token bounds and ownership are checked by edgegw when it takes the
 * entry; a rejected entry changes nothing and its -errno is left in the
 * shared header: the next egw_rxtok_client_return() returns it once
 * (enqueuing nothing: retry), and egw_rxtok_client_sync() waits for it.
 *
 * @param cl  the client
 * @param ranges  @p n ranges
 * @param n  0 .. EGW_RXTOK_MAX_RANGES
 * @return ranges enqueued (0 .. n; fewer than n when the ring is full), or:
 *   -EINVAL (@p cl NULL, @p ranges NULL with n > 0, n > EGW_RXTOK_MAX_RANGES,
 *   or a range count of 0 or more than EGW_RXTOK_MAX_RANGE_TOKENS: nothing
 *   is enqueued), -ENOTCONN (edgegw closed the connection: checked when the
 *   ring is full, and remembered from egw_rxtok_client_recv(), or the
 *   consumer was detached), -EPROTO (edgegw's return ring index is insane:
 *   nothing is enqueued), or the -errno edgegw gave an earlier entry:
 *   -ENOENT (a token not held), -ERANGE (past the region), -EXDEV (another
 *   region), -EINVAL (bad count) — nothing is enqueued by this call.
 */
int egw_rxtok_client_return(struct egw_rxtok_client *cl, const struct egw_rxtok_range *ranges,
			    unsigned int n);

/**
 * Wait until edgegw has taken and judged every range enqueued so far, and
 * return its verdict.
 *
 * @param cl  the client
 * @param timeout_ms  most milliseconds to wait; negative: no limit
 * @return 0 (every range since the last reported error was accepted), the
 *   -errno of a rejected range (reported once: -ENOENT, -ERANGE, -EXDEV,
 *   -EINVAL), -ETIMEDOUT, -ENOTCONN (detached or connection closed), or
 *   -EINVAL (@p cl NULL).
 */
int egw_rxtok_client_sync(struct egw_rxtok_client *cl, int timeout_ms);

/**
 * The shared header (region id, region size, quota, ...), read-only use.
 *
 * @return the header, or NULL if @p cl is NULL.
 */
const struct egw_rxtok_shm_hdr *egw_rxtok_client_shm(const struct egw_rxtok_client *cl);

/**
 * The connected socket, e.g. to poll() it for POLLHUP/POLLRDHUP in an event
 * loop. Do not read, write or close it.
 *
 * @return the descriptor, or -1 if @p cl is NULL.
 */
int egw_rxtok_client_fd(const struct egw_rxtok_client *cl);

/**
 * Detach: unmap the region and the shared memory and close the socket;
 * edgegw then releases every token the consumer still held. @p cl is freed.
 *
 * @param cl  the client, or NULL (no-op)
 */
void egw_rxtok_client_detach(struct egw_rxtok_client *cl);

#ifdef __cplusplus
}
#endif

#endif /* EGW_RXTOK_CLIENT_H */
