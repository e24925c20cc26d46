/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * ESP (RFC 4303) with Intel IPsec-MB: security associations, security
 * policies, software TCP segmentation, outbound and inbound processing with
 * anti-replay.
 *
 * Frames are Ethernet frames whose m->l2_len covers the Ethernet header and
 * its VLAN tags; the IP packet starts there. Outbound, a packet matched to a
 * protecting SA becomes one or more ESP packets; inbound, an ESP packet
 * becomes the clear packet again. The Ethernet header is kept (its ethertype
 * follows the outer IP family), and so are the frame's packet_type, VLAN
 * fields, port and dynamic mbuf fields: a frame made anew (a copy, a
 * segment, a fragment) gets them from the frame it was made from
 * (rte_mbuf_dynfield_copy()), so a classifier's metadata there still
 * describes its Ethernet header, the ethertype apart.
 *
 * Threading: the SA and policy tables are written by one control thread
 * (every function here not marked "data path") and read lock-free by the
 * data-path contexts; a deleted SA or replaced policy set is freed after an
 * rte_rcu_qsbr grace period, so each data-path thread must be a reader of the
 * QSBR variable given to egw_esp_init() and report quiescent between bursts.
 *
 * IV guarantee: the IV of an outbound packet is its own 64-bit sequence
 * number, reserved from the SA's atomic counter before encryption (one
 * reservation per run of packets of the SA in a burst, after segmentation).
 * The numbering belongs to the key: at most one live SA uses a key (a
 * second SA with a key in use, in either direction, is refused), and the
 * numbers are persisted per key ahead of use in a state file, so a restart
 * with the same key, under any SPI, continues above every number that may
 * have been used.
 */
#ifndef EGW_ESP_H
#define EGW_ESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest burst a data-path call takes (IPsec-MB's IMB_MAX_BURST_SIZE). */
#define EGW_ESP_MAX_BURST 128
/** Most data-path contexts (one per lcore). */
#define EGW_ESP_MAX_CTX 16
/** Most SAs per direction. */
#define EGW_ESP_MAX_SA 8192
/** Most policies per direction. */
#define EGW_ESP_MAX_POLICY 1024
/** Most ESP packets one outbound packet may become (segments or fragments). */
#define EGW_ESP_MAX_SEGS 64
/** Replay window bounds and default, in packets (RFC 6479 bitmap). */
#define EGW_ESP_WINDOW_MIN 64
#define EGW_ESP_WINDOW_MAX 4096
#define EGW_ESP_WINDOW_DEF 128
/** Default path MTU of an SA: largest outer IP packet. */
#define EGW_ESP_MTU_DEF 1500
/** Smallest SA MTU accepted (IPv6 minimum link MTU). */
#define EGW_ESP_MTU_MIN 1280
/** Key + salt bytes: AES-128-GCM 16+4, AES-256-GCM 32+4, ChaCha20-Poly1305 32+4. */
#define EGW_ESP_KEY_MAX 36
/** Most keys the sequence-number state file holds (live and retired). */
#define EGW_ESP_STATE_MAX 32768
/** Default NAT-T UDP port (RFC 3948). */
#define EGW_ESP_NATT_PORT 4500

/** A security association (opaque). */
struct egw_esp_sa;

/** Why ESP processing dropped a packet. */
enum egw_esp_drop {
#define EGW_ESP_DROP(e, name, desc) EGW_ESP_DROP_##e,
#include "egw_esp_drop.def"
#undef EGW_ESP_DROP
	EGW_ESP_DROP_MAX
};

/** JSON name and description of a drop reason ("?" when out of range). */
const char *egw_esp_drop_name(enum egw_esp_drop r);
const char *egw_esp_drop_desc(enum egw_esp_drop r);

enum egw_esp_dir {
	EGW_ESP_DIR_OUT = 0,
	EGW_ESP_DIR_IN = 1,
};

enum egw_esp_mode {
	EGW_ESP_MODE_TRANSPORT = 0,
	EGW_ESP_MODE_TUNNEL = 1,
};

enum egw_esp_aead {
	EGW_ESP_AES128_GCM = 0,    /**< RFC 4106, 16-byte ICV */
	EGW_ESP_AES256_GCM,        /**< RFC 4106, 16-byte ICV */
	EGW_ESP_CHACHA20_POLY1305, /**< RFC 7634 */
	EGW_ESP_AEAD_MAX
};

/** Name of an AEAD as the command language spells it ("aes-128-gcm"...). */
const char *egw_esp_aead_name(enum egw_esp_aead a);
/** Key + salt length in bytes an AEAD needs. */
unsigned int egw_esp_aead_key_len(enum egw_esp_aead a);

/** An IPv4 or IPv6 address, network byte order; IPv4 in a[0..3]. */
struct egw_esp_addr {
	uint8_t family; /**< AF_INET or AF_INET6; 0 = unset */
	uint8_t a[16];
};

/** An address prefix. len 0 matches every address of the family. */
struct egw_esp_prefix {
	struct egw_esp_addr addr;
	uint8_t len;
};

/** Packets or bytes: soft limit (logged, counted) and hard limit (SA stops). 0 = none. */
struct egw_esp_life {
	uint64_t soft;
	uint64_t hard;
};

/** What egw_esp_sa_add() needs. Zeroed fields take their defaults. */
struct egw_esp_sa_conf {
	uint32_t spi; /**< not 0; SPIs 1-255 are reserved (RFC 4303) and refused */
	enum egw_esp_dir dir;
	enum egw_esp_mode mode;
	enum egw_esp_aead aead;
	uint8_t key[EGW_ESP_KEY_MAX]; /**< key then 4-byte salt (as ip-xfrm rfc4106) */
	uint8_t key_len;              /**< must be egw_esp_aead_key_len(aead) */
	struct egw_esp_addr tun_src;  /**< tunnel: outer source (ours outbound) */
	struct egw_esp_addr tun_dst;  /**< tunnel: outer destination */
	bool esn;                     /**< 64-bit sequence numbers (RFC 4303 A) */
	uint32_t window;              /**< inbound replay window; 0 = default */
	bool natt;                    /**< UDP encapsulation (RFC 3948) */
	uint16_t natt_sport;          /**< 0 = 4500 */
	uint16_t natt_dport;          /**< 0 = 4500 */
	uint16_t mtu;                 /**< largest outer IP packet; 0 = default */
	uint8_t ttl;                  /**< tunnel outer TTL / hop limit; 0 = 64 */
	/** outbound: lowest first sequence number; inbound: initial window top */
	uint64_t seq_start;
	struct egw_esp_life life_packets;
	struct egw_esp_life life_bytes;
};

/** Counters of one SA, summed over data-path contexts. */
struct egw_esp_sa_stats {
	uint64_t packets; /**< ESP packets made (out) or accepted (in) */
	uint64_t bytes;   /**< clear IP bytes protected (out) or recovered (in) */
	uint64_t drop[EGW_ESP_DROP_MAX];
};

/** What show commands print about an SA (no key material). */
struct egw_esp_sa_info {
	struct egw_esp_sa_conf conf; /**< key and salt zeroed */
	uint64_t seq;                /**< out: next sequence number; in: window top */
	uint64_t seq_limit;          /**< out: last number persisted for use */
	bool soft_expired;
	bool hard_expired;
	uint64_t life_packets; /**< packets counted against the lifetime */
	uint64_t life_bytes;
	struct egw_esp_sa_stats stats;
};

enum egw_esp_action {
	EGW_ESP_BYPASS = 0, /**< pass in clear */
	EGW_ESP_DISCARD,    /**< drop (esp_policy_discard) */
	EGW_ESP_PROTECT,    /**< out: encrypt with the SA; in: must arrive through it */
};

/** A security policy rule. Rules of a direction are ordered; the first match wins. */
struct egw_esp_policy {
	enum egw_esp_dir dir;
	uint8_t family; /**< AF_INET or AF_INET6 */
	struct egw_esp_prefix src;
	struct egw_esp_prefix dst;
	int16_t proto; /**< IP protocol, -1 = any */
	enum egw_esp_action action;
	uint32_t spi; /**< PROTECT: the SA (same direction) */
	uint32_t id;  /**< set by egw_esp_policy_add() */
};

/* ---- control path -------------------------------------------------- */

/**
 * Set up the library.
 * @param qs QSBR variable every data-path thread reports on.
 * @return 0, -EALREADY, -ENOMEM, -ENOTSUP (no usable IPsec-MB).
 */
int egw_esp_init(struct rte_rcu_qsbr *qs);

/** Delete every SA and policy (keys wiped) and release everything. */
void egw_esp_fini(void);

/**
 * Use path as the sequence-number state file and load it. A missing file is
 * an error unless create is set: a lost file would restart the numbering of
 * every key used before. With create the file must not exist yet; it is
 * made (and written once, to prove it can be).
 * Outbound SAs can be added only once a state file is set, and only while
 * it is trustworthy.
 * @return 0; -EBUSY if outbound SAs exist; -ENOENT (missing, no create);
 *   -EEXIST (create, but it exists); -EINVAL (corrupt: nothing changes,
 *   outbound SAs are refused until another file is set); -errno of the
 *   file system. A message is in err.
 */
int egw_esp_state_file(const char *path, bool create, char *err, size_t errlen);

/** Number of keys the state file holds (0 without one). */
unsigned int egw_esp_state_keys(void);

/**
 * Forget every key of the state file that no live SA uses: the operator
 * states that none of them will ever be configured again (re-adding one
 * would repeat its nonces). The only way keys leave the file.
 * @return number of keys dropped, or -errno with a message in err.
 */
int egw_esp_state_prune(char *err, size_t errlen);

/** Path of the state file, or NULL. */
const char *egw_esp_state_path(void);

/**
 * Add an SA. Outbound: its first sequence number is above every number the
 * state file may have handed out for this key (under any SPI), and at
 * least conf->seq_start; the numbers are persisted before the SA is used.
 * A key (with its salt) already used by a live SA of either direction is
 * refused (-EADDRINUSE): one key, one sequence of nonces.
 * @return 0, or -EINVAL / -EEXIST / -EADDRINUSE / -ENOSPC / -ENOMEM / -EIO
 *   with a message in err; nothing changes on failure.
 */
int egw_esp_sa_add(const struct egw_esp_sa_conf *conf, char *err, size_t errlen);

/**
 * Delete an SA: it leaves the table now, its memory (keys wiped) after a
 * grace period. An inbound SA that policies accept only as the predecessor
 * of a replacement (egw_esp_sa_replace()) is dropped from them first.
 * @return 0, -ENOENT, -EBUSY (a policy protects with it; message in err).
 */
int egw_esp_sa_del(uint32_t spi, enum egw_esp_dir dir, char *err, size_t errlen);

/** Info on one SA. @return 0 or -ENOENT. */
int egw_esp_sa_info(uint32_t spi, enum egw_esp_dir dir, struct egw_esp_sa_info *info);

/**
 * Register one of edgegw's own addresses for ESP (control path). Inbound,
 * only ESP (IP protocol 50, or UDP to a NAT-T port) whose outer destination
 * is such an address is decrypted; every other ESP packet is transit (a
 * subscriber's own VPN) and forwarded like any packet. The destination of
 * each inbound tunnel-mode SA is registered by the SA itself; the
 * application registers its interface addresses (transport-mode SAs end
 * there). Counted: n adds need n deletes.
 * @return 0, -EINVAL (not an address) or -ENOSPC.
 */
int egw_esp_local_addr_add(const struct egw_esp_addr *a);

/** Drop one registration of a local address. @return 0 or -ENOENT. */
int egw_esp_local_addr_del(const struct egw_esp_addr *a);

/** Call fn for every SA (outbound first, then inbound, by SPI); stops on non-zero. */
int egw_esp_sa_walk(int (*fn)(const struct egw_esp_sa_info *info, void *arg), void *arg);

/** Number of SAs in a direction. */
unsigned int egw_esp_sa_count(enum egw_esp_dir dir);

/**
 * Add a policy before position pos (0 = first; -1 or past the end = last).
 * PROTECT needs an SA of that direction and SPI; its mode and family must
 * suit (transport: the SA carries this family's packets).
 * @return the new rule's id (> 0) or -EINVAL / -ENOENT / -ENOSPC / -ENOMEM
 *   with a message in err.
 */
int egw_esp_policy_add(const struct egw_esp_policy *p, int pos, char *err, size_t errlen);

/** What a packet matching no policy of a direction gets (RFC 4301 5). */
enum egw_esp_policy_default {
	/** discard as soon as the direction has a policy; bypass while it has none */
	EGW_ESP_DEFAULT_AUTO = 0,
	EGW_ESP_DEFAULT_BYPASS,  /**< pass in clear */
	EGW_ESP_DEFAULT_DISCARD, /**< drop (esp_policy_default), even with no policy */
};

/**
 * Set the default of a direction. Whatever the default, a packet whose
 * upper-layer protocol cannot be read (IPv6 extension headers cut short,
 * malformed or too many) matches only rules that discard, and is dropped
 * (esp_proto_unknown) otherwise; a frame whose IP version is not its
 * ethertype's is dropped (esp_not_ip).
 * @return 0 or -EINVAL / -ENOMEM with a message in err.
 */
int egw_esp_policy_default(enum egw_esp_dir dir, enum egw_esp_policy_default def, char *err,
			   size_t errlen);

/** The default of a direction as set (EGW_ESP_DEFAULT_AUTO unless changed). */
enum egw_esp_policy_default egw_esp_policy_default_get(enum egw_esp_dir dir);

/** True if packets of the direction need a policy lookup: it has a policy,
 * or its default discards. (control path) */
bool egw_esp_policy_active(enum egw_esp_dir dir);

/**
 * Make-before-break rekey: every policy of dir protecting with SA old_spi
 * protects with SA new_spi instead, in one step (no packet sees neither).
 * Outbound, packets leave through the new SA from the next burst on and the
 * old one can be deleted. Inbound, the policies accept packets of both SAs
 * (in-flight packets of the old one still pass) until the old SA is
 * deleted; a policy keeps at most one such predecessor.
 * @return the number of policies changed, or -ENOENT / -EINVAL / -ENOMEM
 *   with a message in err.
 */
int egw_esp_sa_replace(enum egw_esp_dir dir, uint32_t old_spi, uint32_t new_spi, char *err,
		       size_t errlen);

/** Delete a policy by id. @return 0 or -ENOENT. */
int egw_esp_policy_del(enum egw_esp_dir dir, uint32_t id);

/** Call fn for every policy of a direction in order; stops on non-zero. */
int egw_esp_policy_walk(enum egw_esp_dir dir,
			int (*fn)(const struct egw_esp_policy *p, uint64_t hits, void *arg),
			void *arg);

/**
 * Control-path service: persist sequence numbers ahead of use, note soft
 * and hard lifetimes (logged once each), free what a grace period released.
 * Call every 10 ms or more often, and soon after the wake function is called.
 * @return number of things done (0 when idle).
 */
unsigned int egw_esp_service(void);

/**
 * Set the function a worker calls when an outbound SA needs the service
 * soon: its run crossed the point where egw_esp_service() extends the
 * persisted sequence limit (half of the last reservation left). The
 * function must be cheap, safe on any lcore and must not block; it may be
 * called again on every run until the service has run. NULL (the default):
 * nobody is told, the service must then be called about every millisecond.
 */
void egw_esp_set_wake(void (*fn)(void));

/* ---- data path ----------------------------------------------------- */

/** Per-lcore data-path state: IPsec-MB manager, scratch, counters. */
struct egw_esp_ctx;

/** Totals of a context. */
struct egw_esp_ctx_stats {
	uint64_t out_packets;  /**< ESP packets made */
	uint64_t out_bytes;    /**< ESP bytes made (IP packets) */
	uint64_t in_packets;   /**< ESP packets decrypted and accepted */
	uint64_t in_bytes;     /**< clear bytes recovered */
	uint64_t segments;     /**< extra packets made by segmentation */
	uint64_t fragments;    /**< extra packets made by fragmentation */
	uint64_t icmp;         /**< ICMP/ICMPv6 too-big messages made */
	uint64_t icmp_limited; /**< too-big messages not sent: over 1000/s per context */
	uint64_t bypass;       /**< passed in clear by policy or no match */
	uint64_t drop[EGW_ESP_DROP_MAX];
};

/**
 * Make a context for one lcore.
 * @param idx context index, 0 .. EGW_ESP_MAX_CTX-1, unique among live ones
 *   (it selects the SA counter slot).
 * @param pool where segments, fragments, trailers and ICMP messages come from.
 * @return the context, or NULL with rte_errno (EINVAL, EEXIST, ENOMEM, ENOTSUP).
 */
struct egw_esp_ctx *egw_esp_ctx_create(unsigned int idx, struct rte_mempool *pool);

void egw_esp_ctx_free(struct egw_esp_ctx *c);

/** Name of the IPsec-MB code path a context uses ("avx512", "sse"...). */
const char *egw_esp_ctx_arch(const struct egw_esp_ctx *c);

/** Read a context's totals (any thread; values may lag by one burst). */
void egw_esp_ctx_stats(const struct egw_esp_ctx *c, struct egw_esp_ctx_stats *s);

/** Sum of the totals of every live context. */
void egw_esp_stats(struct egw_esp_ctx_stats *s);

/**
 * Result of data-path calls. Callers zero it; calls add to it (several
 * calls may share one), except n_out, which each outbound call sets.
 */
struct egw_esp_res {
	uint16_t n_out;   /**< packets placed in out[] by the last outbound call */
	uint16_t n_icmp;  /**< ICMP too-big messages placed in icmp[] */
	uint32_t created; /**< packets made beyond one per input (segments, fragments) */
	uint32_t bypass;  /**< outbound lookup: left in clear */
	uint32_t drop[EGW_ESP_DROP_MAX]; /**< freed here, by reason */
	/** ICMP too-big messages for the sender: send them out the ingress port. */
	struct rte_mbuf *icmp[EGW_ESP_MAX_BURST];
};

/**
 * Outbound policy lookup (data path).
 * Packets matching a PROTECT rule are moved to the front of pkts[] in
 * order, with their SA in sa[] (valid until the caller's next quiescent
 * report); BYPASS packets (and unmatched ones when the outbound default
 * bypasses) follow, in order; the rest are freed and counted in res->drop
 * (esp_policy_discard, esp_policy_default, esp_proto_unknown, esp_not_ip).
 * @return number of packets to protect; res->bypass those after them.
 */
uint16_t egw_esp_outbound_lookup(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
				 struct egw_esp_sa *sa[], struct egw_esp_res *res);

/**
 * Tell a context the MTU of the link the next outbound packets arrived on
 * (data path; call per burst, it only stores the value). It tells
 * super-packets from packets that came over the wire: see
 * egw_esp_outbound_burst().
 * @param c the context.
 * @param mtu largest IP packet the ingress link carries; 0 = EGW_ESP_MTU_DEF,
 *   which is also what a new context assumes.
 */
void egw_esp_ctx_set_ingress_mtu(struct egw_esp_ctx *c, uint16_t mtu);

/**
 * Protect packets (data path). A packet whose ESP packet would exceed the
 * SA's MTU is
 *  - segmented if it is a TCP super-packet (also inside an ipip/ip6tnl
 *    tunnel): RTE_MBUF_F_TX_TCP_SEG with tso_segsz, RTE_MBUF_F_RX_LRO, or an
 *    IP packet larger than the ingress MTU (egw_esp_ctx_set_ingress_mtu());
 *  - otherwise, IPv4 without DF: fragmented, before encryption in tunnel
 *    mode, after it in transport mode (RFC 4303 3.3.4: the ESP packet);
 *  - otherwise dropped (esp_too_big), and an ICMP too-big is made.
 * Every other packet is encrypted as it is.
 * Output goes to out[] in input order; drops are freed and counted.
 * @param out_cap room in out[]; at least EGW_ESP_MAX_SEGS.
 * @return number of inputs consumed (all n unless out[] filled up: call
 *   again with the rest).
 */
uint16_t egw_esp_outbound_burst(struct egw_esp_ctx *c, struct egw_esp_sa *const sa[],
				struct rte_mbuf *pkts[], uint16_t n, struct rte_mbuf *out[],
				uint16_t out_cap, struct egw_esp_res *res);

/**
 * True if the frame (l2_len set) is ESP for this host to decrypt: its outer
 * destination is one of edgegw's ESP addresses (egw_esp_local_addr_add(),
 * inbound tunnel destinations), and it is IP protocol 50 (also behind an
 * IPv6 fragment header: egw_esp_inbound_burst() then drops it, esp_fragment),
 * or UDP to a NAT-T port of an inbound SA carrying a non-zero SPI (not an
 * IKE packet). Transit ESP is not. Data path.
 */
bool egw_esp_is_esp(const struct rte_mbuf *m);

/**
 * egw_esp_is_esp() over a burst of n frames: the ESP ones move to esp[]
 * (room for n), the others stay at the front of pkts[], each group in its
 * order. A run of frames to one address asks the local address table once.
 * @return the number of ESP frames; *n_clear the number left in pkts[].
 * Data path.
 */
uint16_t egw_esp_split_burst(struct rte_mbuf *pkts[], uint16_t n, struct rte_mbuf *esp[],
			     uint16_t *n_clear);

/**
 * Decrypt ESP frames in place (data path): SA by SPI, anti-replay check,
 * ICV, window update, trailer checks, inner packet restored (tunnel) or IP
 * header rebuilt (transport), inbound policy check.
 * Good frames are compacted to the front in order; the rest are freed and
 * counted in res->drop.
 * @return number of good frames.
 */
uint16_t egw_esp_inbound_burst(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			       struct egw_esp_res *res);

/**
 * Inbound policy check of frames that arrived in clear (data path):
 * a PROTECT match drops (esp_in_clear), DISCARD drops, BYPASS passes, no
 * match gets the inbound default (egw_esp_policy_default()). Good frames
 * compacted to the front in order.
 * @return number of frames that pass.
 */
uint16_t egw_esp_inbound_clear(struct egw_esp_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			       struct egw_esp_res *res);

#ifdef __cplusplus
}
#endif

#endif /* EGW_ESP_H */
