/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rxtokens records, token ranges and the shared-memory layout that edgegw and
 * a consumer in another process agree on. Plain C: the client side needs
 * no EAL. The two rings are egw_rxtok_shring.h rings: only their indices and
 * entries are shared, each side keeps the geometry privately.
 *
 * A token is the index of a 4 KiB page in its region; (token, offset, size)
 * names a fragment of a received payload. Tokens are given back in ranges
 * {token_start, token_count}, as Linux devmem's struct dmabuf_token.
 */
#ifndef EGW_RXTOK_ABI_H
#define EGW_RXTOK_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Tokens index pages of this size. */
#define EGW_RXTOK_PAGE_SHIFT 12
#define EGW_RXTOK_PAGE_SIZE (1u << EGW_RXTOK_PAGE_SHIFT)

/** Most ranges one return call (or one pass of the return ring) takes. */
#define EGW_RXTOK_MAX_RANGES 128
/** Most tokens one range may name. */
#define EGW_RXTOK_MAX_RANGE_TOKENS 1024

/** Record flags. */
#define EGW_RXTOK_REC_FIRST 0x01 /**< first fragment of a payload */
#define EGW_RXTOK_REC_LAST 0x02  /**< last fragment of a payload */

/** How a consumer's flow was matched (struct egw_rxtok_rec::match). */
enum egw_rxtok_match {
	EGW_RXTOK_MATCH_NONE = 0,
	EGW_RXTOK_MATCH_UDP_DPORT, /**< UDP payload of datagrams to this port */
	EGW_RXTOK_MATCH_DST4,      /**< IPv4 payload of packets to this address */
	EGW_RXTOK_MATCH_DST6,      /**< IPv6 payload of packets to this address */
	EGW_RXTOK_MATCH_PPPOE,     /**< PPP payload of this PPPoE session */
};

/** One fragment of a delivered payload (16 bytes). */
struct egw_rxtok_rec {
	uint32_t token;  /**< page index in the region */
	uint16_t offset; /**< byte offset of the fragment in the page */
	uint16_t size;   /**< bytes of payload in this fragment */
	uint32_t key;    /**< matched value: UDP port, PPPoE session id, 0 for dst */
	uint16_t port;   /**< ingress port */
	uint8_t match;   /**< enum egw_rxtok_match */
	uint8_t flags;   /**< EGW_RXTOK_REC_* */
};

/** A range of tokens given back (devmem's struct dmabuf_token). */
struct egw_rxtok_range {
	uint32_t token_start;
	uint32_t token_count;
};

/** One entry of the shared return ring (16 bytes). */
struct egw_rxtok_ret {
	uint32_t region; /**< region id, as in the shared header */
	uint32_t token_start;
	uint32_t token_count;
	uint32_t reserved; /**< 0 */
};

#define EGW_RXTOK_SHM_MAGIC UINT64_C(0x314b4f5452574745) /* "EGWRTOK1" */
#define EGW_RXTOK_ABI_VERSION 3

/** The consumer's flow was steered to a queue of another binding. */
#define EGW_RXTOK_SHM_F_STEERED 0x1
/** edgegw detached the consumer (consumer del, a corrupt ring, shutdown):
 *  set before any token it held is released; never cleared. Records read
 *  after it is set are not the consumer's any more. */
#define EGW_RXTOK_SHM_F_DETACHED 0x2

/**
 * Head of the shared memory of one attached consumer. The record ring
 * (edgegw produces, consumer consumes) and the return ring (the other way)
 * follow at the given offsets (64-byte aligned, inside the shared memory, not
 * overlapping); both are struct egw_rxtok_shring with 16-byte entries, of
 * the given sizes (powers of two). Each side takes the sizes once, when it
 * creates or attaches, and never reads them again: the other side may write
 * this memory.
 */
struct egw_rxtok_shm_hdr {
	uint64_t magic;       /**< EGW_RXTOK_SHM_MAGIC */
	uint32_t version;     /**< EGW_RXTOK_ABI_VERSION */
	uint32_t hdr_size;    /**< sizeof(struct egw_rxtok_shm_hdr) */
	uint64_t region_size; /**< bytes of the region mapping */
	uint32_t region_id;
	uint32_t page_size; /**< EGW_RXTOK_PAGE_SIZE */
	uint32_t rec_ring_off;
	uint32_t ret_ring_off;
	uint32_t rec_ring_size; /**< entries of the record ring, a power of two */
	uint32_t ret_ring_size; /**< entries of the return ring, a power of two */
	uint32_t quota;         /**< most tokens outstanding at once */
	uint32_t max_ranges;    /**< EGW_RXTOK_MAX_RANGES */
	uint32_t flags;         /**< EGW_RXTOK_SHM_F_*, set by edgegw, STEERED cleared by the
				 *   consumer */
	uint32_t reserved;
	/* second line: the verdicts on returned ranges, written by edgegw */
	uint32_t ret_done;   /**< return-ring entries taken and judged (wraps) */
	int32_t ret_status;  /**< 0, or the negative errno of a rejected entry since the
			      *   consumer last cleared it (it exchanges it for 0) */
	uint64_t ret_failed; /**< return-ring entries rejected, in all */
	uint8_t pad[48];
};

#ifndef __cplusplus
_Static_assert(sizeof(struct egw_rxtok_shm_hdr) == 128, "shared header is two cache lines");
#endif

/** Socket protocol (SOCK_SEQPACKET): the consumer's first message. */
struct egw_rxtok_hello {
	uint32_t magic;    /**< EGW_RXTOK_HELLO_MAGIC */
	uint32_t version;  /**< EGW_RXTOK_ABI_VERSION */
	char consumer[64]; /**< name given to "rxtokens consumer add" */
};

#define EGW_RXTOK_HELLO_MAGIC 0x48574745u /* "EGWH" */

/**
 * edgegw's answer. With status 0 it carries two descriptors (SCM_RIGHTS):
 * the region, read-only, then the shared memory. The connection stays open:
 * closing it (or dying) detaches the consumer and releases every reference
 * it held.
 */
struct egw_rxtok_welcome {
	uint32_t magic; /**< EGW_RXTOK_HELLO_MAGIC */
	int32_t status; /**< 0 or a negative errno */
	uint64_t region_size;
	uint64_t shm_size;
	char message[128]; /**< why, when status < 0 */
};

#ifdef __cplusplus
}
#endif

#endif /* EGW_RXTOK_ABI_H */
