/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/pppoe internals shared by its files (never included by the app).
 *
 *   ctl.c      init/fini, service loop, control input dispatch, frame
 *              building and transmit, control counters
 *   conf.c     configuration setters (AC name, services, limits, MRU, MSS,
 *              keepalive, DNS, auth mode)
 *   disc.c     discovery: tag parser/builder, AC cookies, PADI/PADO/PADR/
 *              PADS/PADT
 *   pool.c     IPv4 address pools and IPv6 /64 prefix pools
 *   session.c  session table: slots, ids, publication, routes, grace periods
 *   fast.c     data path: contexts, decap, encap, MSS clamp, ICMP too-big
 *   fsm.c      the RFC 1661 option-negotiation automaton (LCP, IPCP, IPv6CP)
 *   lcp.c      LCP options, echo keepalive, Protocol-/Code-Reject
 *   auth.c     subscriber table, PAP, CHAP-MD5
 *   aaa.c      hooks of remote authentication (RADIUS) and accounting
 *   ipcp.c     IPCP (+ RFC 1877 DNS)
 *   ipv6cp.c   IPv6CP, router advertisements and solicitations
 *   ppp.c      per-session PPP glue: start, input demux, phases, stop, free
 */
#ifndef PPPOE_PRIVATE_H
#define PPPOE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "egw_eth.h"
#include "egw_pppoe.h"

extern int egw_pppoe_logtype;
#define PPPOE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, egw_pppoe_logtype, "pppoe: " fmt "\n", ##__VA_ARGS__)

/* ---------------- wire formats (RFC 2516, RFC 1661) ---------------- */

#define PPPOE_VER_TYPE 0x11
#define PPPOE_HDR_LEN 6
#define PPPOE_CODE_SESS 0x00
#define PPPOE_CODE_PADI 0x09
#define PPPOE_CODE_PADO 0x07
#define PPPOE_CODE_PADR 0x19
#define PPPOE_CODE_PADS 0x65
#define PPPOE_CODE_PADT 0xa7

#define PPPOE_TAG_END_OF_LIST 0x0000
#define PPPOE_TAG_SERVICE_NAME 0x0101
#define PPPOE_TAG_AC_NAME 0x0102
#define PPPOE_TAG_HOST_UNIQ 0x0103
#define PPPOE_TAG_AC_COOKIE 0x0104
#define PPPOE_TAG_VENDOR_SPECIFIC 0x0105
#define PPPOE_TAG_RELAY_SESSION_ID 0x0110
#define PPPOE_TAG_PPP_MAX_PAYLOAD 0x0120
#define PPPOE_TAG_SERVICE_NAME_ERROR 0x0201
#define PPPOE_TAG_AC_SYSTEM_ERROR 0x0202
#define PPPOE_TAG_GENERIC_ERROR 0x0203

struct pppoe_hdr {
	uint8_t ver_type;
	uint8_t code;
	rte_be16_t sid;
	rte_be16_t len;
} __rte_packed;

/* PPP protocol numbers */
#define PPP_IP 0x0021
#define PPP_IPV6 0x0057
#define PPP_IPCP 0x8021
#define PPP_IPV6CP 0x8057
#define PPP_LCP 0xc021
#define PPP_PAP 0xc023
#define PPP_CHAP 0xc223

/* ---------------- global state (ctl.c, conf.c) ---------------- */

struct pppoe_port {
	bool access;
	struct rte_ether_addr mac;
	uint16_t mtu;
};

#define PPPOE_MAX_SERVICES 16

struct pppoe_conf {
	char ac_name[EGW_PPPOE_NAME_MAX + 1];
	char services[PPPOE_MAX_SERVICES][EGW_PPPOE_NAME_MAX + 1];
	unsigned int nb_services;
	unsigned int max_sessions; /**< limit (<= table size) */
	unsigned int max_per_mac;
	unsigned int max_starting;             /**< sessions negotiating at once */
	unsigned int padi_rate, padi_rate_mac; /**< PADIs per second: all, per MAC */
	unsigned int padr_rate, padr_rate_mac; /**< PADRs per second: all, per MAC */
	unsigned int auth_hold_s;              /**< longest hold after failed logins */
	uint16_t mru;
	enum egw_pppoe_mss_mode mss_mode;
	uint16_t mss_value;
	unsigned int keepalive_s;
	unsigned int keepalive_misses;
	enum egw_pppoe_auth auth;
	rte_be32_t dns[2];
};

struct pppoe_glob {
	bool init;
	struct rte_rcu_qsbr *qsbr;
	struct rte_mempool *pool;
	egw_pppoe_tx_fn tx;
	void *tx_arg;
	unsigned int nb_ctx;
	unsigned int table_size; /**< max_sessions of init */
	int socket;
	egw_pppoe_route_fn route; /**< the application's routes (NULL: route4/route6) */
	void *route_arg;
	egw_pppoe_src_fn src_check; /**< sources of framed sessions (data path) */
	void *src_check_arg;
	unsigned int timer_lcore; /**< the lcore that runs egw_pppoe_service() */
	struct pppoe_port ports[RTE_MAX_ETHPORTS];
	struct pppoe_conf conf;
	/* ICMP source addresses (pool.c keeps them; read by the data path with
	 * relaxed loads: a stale value only changes an ICMP source) */
	rte_be32_t local4;
	uint8_t local6[16];
};

extern struct pppoe_glob pppoe_g;

/* ---------------- control counters (ctl.c; one .def per owner) ---------------- */

enum pppoe_cnt {
#define PPPOE_CNT(e, n, d) PPPOE_CNT_##e,
#include "pppoe_cnt_disc.def"
#include "pppoe_cnt_ppp.def"
#include "pppoe_cnt_sess.def"
#undef PPPOE_CNT
	PPPOE_CNT_MAX
};

/* written by the control path only */
extern uint64_t pppoe_cnt[PPPOE_CNT_MAX];
#define PPPOE_CNT_INC(e) \
	__atomic_store_n(&pppoe_cnt[PPPOE_CNT_##e], pppoe_cnt[PPPOE_CNT_##e] + 1, __ATOMIC_RELAXED)

/* ---------------- sessions (session.c) ---------------- */

/* open NCPs, in struct pppoe_sess_fp::ncp */
#define PPPOE_NCP_IP4 0x1
#define PPPOE_NCP_IP6 0x2
/* IPv6CP opened without a /64: IPv6 frames are dropped on the data path */
#define PPPOE_NCP_IP6_NOPFX 0x4
/* IPCP / IPv6CP in Ack-Sent: the peer's Configure-Ack opens it (handoff) */
#define PPPOE_NCP_IP4_ACKSENT 0x8
#define PPPOE_NCP_IP6_ACKSENT 0x10
/* prefixes beyond its own are routed to the session (egw_pppoe_session_framed()) */
#define PPPOE_NCP_FRAMED 0x20

/* Ethernet + 2 tags + PPPoE header */
#define PPPOE_HDR_TMPL_MAX (RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + PPPOE_HDR_LEN)

/*
 * What the data path reads, one per session id (array index = sid). Written
 * only by the control path; state is published last with a release store
 * (the data path's acquire load pairs with it), ncp likewise.
 */
struct pppoe_sess_fp {
	uint32_t state; /**< enum egw_pppoe_sess_state */
	uint16_t port;
	uint16_t sid;
	struct rte_ether_addr mac; /**< client */
	uint8_t n_vlan;
	uint8_t ncp;     /**< PPPOE_NCP_* open */
	uint16_t vid[2]; /**< VLAN ids (12 bits), outer first; 0 if absent */
	uint16_t mru;    /**< largest PPP information field we send (peer's MRU) */
	uint16_t mss4;   /**< clamp SYNs of IPv4 to this MSS; 0 = off */
	uint16_t mss6;   /**< same for IPv6 */
	uint8_t hdr_len; /**< bytes of hdr[] */
	uint8_t reserved;
	rte_be32_t ip4; /**< assigned address; 0 if none */
	union {
		uint8_t ip6_prefix[8]; /**< the session's /64; zero if none */
		uint64_t ip6_prefix64; /**< the same as one word: atomic loads and stores */
	};
	uint8_t hdr[PPPOE_HDR_TMPL_MAX]; /**< downstream header template, PPPoE length 0 */
	uint32_t ctx_unused;
	/** pass and active filters (policy.c; NULL: none), read while
	 *  pppoe_dp.filters is non-zero */
	struct pppoe_filter *filt[EGW_PPPOE_FILTER_MAX];
} __rte_cache_aligned;

/*
 * The control path's session; one per slot, allocated with the table.
 */
struct pppoe_sess {
	struct pppoe_sess_fp *fp;
	uint16_t sid;
	uint16_t port;
	struct rte_ether_addr mac;
	uint8_t n_vlan;
	uint16_t tci[2];                 /**< full TCIs (priority kept), outer first */
	rte_be16_t tpid[2];              /**< TPIDs as received, outer first */
	uint16_t max_payload;            /**< RFC 4638 PPP-Max-Payload granted; 0 if not asked */
	enum egw_pppoe_sess_state state; /**< control's copy of fp->state */
	enum egw_pppoe_cause cause;
	uint64_t start_tsc;
	uint64_t bound_tsc; /**< when the first NCP opened (idle timeout) */
	uint64_t ctrl_rx, ctrl_tx;
	char service[EGW_PPPOE_NAME_MAX + 1];
	struct ppp_sess *ppp; /**< ppp.c's state; NULL once freed */
	/* session.c's bookkeeping */
	uint32_t next_free;  /**< free list link */
	uint64_t free_token; /**< rte_rcu_qsbr token while closing */
};

/** Create the table (init) / free it (fini). */
int pppoe_sess_table_init(unsigned int size, int socket, bool own_routes);
void pppoe_sess_table_fini(void);

/** Why pppoe_sess_create() refused. */
enum pppoe_refuse {
	PPPOE_REFUSE_NONE = 0,
	PPPOE_REFUSE_LIMIT,    /**< conf.max_sessions reached or no free id */
	PPPOE_REFUSE_PER_MAC,  /**< conf.max_per_mac reached for this MAC */
	PPPOE_REFUSE_STARTING, /**< conf.max_starting sessions are negotiating */
};

/**
 * Discovery accepted a PADR: allocate an id (never 0 or 0xFFFF, not reused
 * before the previous holder's grace period ended; ids are handed out in
 * FIFO order), fill both structs (header template from the port's MAC, the
 * client's MAC and tags), publish state NEGOTIATING. Counts per-MAC sessions.
 * Returns NULL with *why set when a limit refuses.
 */
struct pppoe_sess *pppoe_sess_create(uint16_t port, const struct rte_ether_addr *mac,
				     uint8_t n_vlan, const uint16_t tci[2],
				     const rte_be16_t tpid[2], uint16_t max_payload,
				     enum pppoe_refuse *why);

/** Control path: the session with this key, or NULL (also when closing). */
struct pppoe_sess *pppoe_sess_find(uint16_t sid, uint16_t port, const struct rte_ether_addr *mac,
				   uint8_t n_vlan, const uint16_t vid[2]);
/** The session with this id that is not free (any state), or NULL. */
struct pppoe_sess *pppoe_sess_get(uint16_t sid);

/**
 * LCP opened: the peer's MRU bounds what we send; MSS clamp values follow
 * the configuration. Safe while bound (plain 16-bit stores the data path
 * reads with relaxed loads).
 */
void pppoe_sess_set_mru(struct pppoe_sess *s, uint16_t peer_mru);

/**
 * An NCP opened (PPPOE_NCP_IP4: fp->ip4 set before; PPPOE_NCP_IP6:
 * fp->ip6_prefix set before): install its downstream route, set the NCP bit
 * with a release store and, for the first NCP, publish state BOUND.
 * @return 0, -EEXIST (address/prefix already routed), -ENOSPC.
 */
int pppoe_sess_bind(struct pppoe_sess *s, unsigned int ncp);
/** An NCP closed: clear its bit, remove its route. */
void pppoe_sess_unbind(struct pppoe_sess *s, unsigned int ncp);
/** IPv6CP is open without a /64 (on) or no longer (off): the data path drops
 * the session's IPv6 frames as pppoe_ipv6_no_prefix. */
void pppoe_sess_ip6_noprefix(struct pppoe_sess *s, bool on);
/** The NCP (PPPOE_NCP_IP4 or _IP6) entered (on) or left Ack-Sent: the data
 * path holds the session's data behind the peer's Configure-Ack only then. */
void pppoe_sess_ncp_acksent(struct pppoe_sess *s, unsigned int ncp, bool on);

/**
 * End a session: remove its routes, publish CLOSING, send a PADT if
 * send_padt (disc.c), stop the PPP timers (ppp_sess_stop), count the cause;
 * the slot is freed (ppp_sess_free, id back to the free list) by
 * pppoe_sess_service() after an RCU grace period. Idempotent.
 */
void pppoe_sess_close(struct pppoe_sess *s, enum egw_pppoe_cause cause, bool send_padt);

/** Free sessions whose grace period ended; returns how many. */
unsigned int pppoe_sess_service(void);

/** Number of sessions not free. */
unsigned int pppoe_sess_count(void);
/** Number of sessions negotiating (not yet bound). */
unsigned int pppoe_sess_starting(void);

/** Downstream route tables (session.c): the data path's lookups. */
struct pppoe_sess_fp *pppoe_route4_lookup(rte_be32_t dst);
struct pppoe_sess_fp *pppoe_route6_lookup(const uint8_t dst[16]);

/**
 * Data-path counters of a session id summed over the contexts (fast.c; relaxed
 * loads of other lcores' counters): rx_pkts, rx_bytes, tx_pkts, tx_bytes.
 */
void pppoe_fast_sess_counters(uint16_t sid, uint64_t cnt[4]);
/** The downstream route table of PPPOE_NCP_IP4 or _IP6 (session.c), for bulk lookups. */
struct rte_hash *pppoe_route_tab(unsigned int ncp);

/*
 * What every worker reads on every burst, written only at init and when a
 * session binds or unbinds (session.c): a cache line of its own, apart from
 * the control path's bookkeeping, which changes on every session event.
 */
struct pppoe_dp {
	struct pppoe_sess_fp *fp_tab;     /**< the fast-path array, index = sid */
	struct rte_hash *route4, *route6; /**< downstream routes: /32 and /64 -> fp */
	uint32_t bound; /**< bound sessions (the data path skips work while zero) */
	/** bit 0: a filter is set (policy.c), bit 1: the idle timeout is on */
	uint32_t filters;
} __rte_cache_aligned;

extern struct pppoe_dp pppoe_dp;

/* ---------------- frames (ctl.c) ---------------- */

/**
 * Send a PPP frame on a session: Ethernet (to the client, from the port's
 * MAC) + its tags + PPPoE session header + 2-byte protocol + data.
 * @return 0, -ENOMEM (no mbuf), -EINVAL (too long for the session).
 */
int pppoe_sess_send(struct pppoe_sess *s, uint16_t proto, const void *data, uint16_t len);

/**
 * Allocate a frame for a reply on port, Ethernet header (dst, src = port
 * MAC) and the VLAN tags given (n_vlan, tci, tpid) written, ethertype
 * etype; returns the mbuf with data_len = header bytes, *payload pointing
 * behind them (room for at least 1500 bytes). NULL if no mbuf.
 */
struct rte_mbuf *pppoe_frame_alloc(uint16_t port, const struct rte_ether_addr *dst, uint8_t n_vlan,
				   const uint16_t tci[2], const rte_be16_t tpid[2], uint16_t etype,
				   uint8_t **payload);
/** Set the lengths (payload bytes written after the header) and transmit
 *  (or hold, between pppoe_tx_hold() and pppoe_tx_release()). */
void pppoe_frame_send(uint16_t port, struct rte_mbuf *m, uint16_t payload_len);
/**
 * Hold the frames made from here and hand them to the application, in the
 * order made, at the matching pppoe_tx_release() (nested: the outermost):
 * a reply never leaves before the data-path state it announces. ppp_input()
 * holds while it handles one frame: the Configure-Ack that opens IPCP in
 * Ack-Rcvd is made before this-layer-up binds the session (fsm.c keeps the
 * RFC's order), and held, it leaves after the bind, so a peer that sends
 * data the moment it has the Ack finds the data path ready. One frame makes
 * a few replies; a full hold (16) sends what it holds first, in order.
 */
void pppoe_tx_hold(void);
void pppoe_tx_release(void);

/** Tags of a received frame: TCIs from the mbuf, TPIDs read from the frame. */
void pppoe_frame_tags(const struct rte_mbuf *m, uint8_t *n_vlan, uint16_t tci[2],
		      rte_be16_t tpid[2]);

/* ---------------- discovery (disc.c) ---------------- */

/** Parsed discovery tags: pointers into the frame, lengths checked. */
struct pppoe_tags {
	const uint8_t *service;
	uint16_t service_len;
	bool has_service;
	const uint8_t *host_uniq;
	uint16_t host_uniq_len;
	const uint8_t *cookie;
	uint16_t cookie_len;
	const uint8_t *relay_id;
	uint16_t relay_id_len;
	const uint8_t *ac_name;
	uint16_t ac_name_len;
	bool has_max_payload;
	uint16_t max_payload;
	bool has_error; /**< a *-Error tag was present */
	unsigned int nb_tags;
};

/** Tag parser errors (each its own counter). */
enum pppoe_tag_err {
	PPPOE_TAG_OK = 0,
	PPPOE_TAG_TRUNCATED, /**< tag header or value past the payload */
	PPPOE_TAG_DUPLICATE, /**< a tag that may appear once appeared twice */
	PPPOE_TAG_BAD_LEN,   /**< e.g. PPP-Max-Payload not 2 bytes */
};

/** Parse a discovery payload (the bytes the PPPoE length covers). */
enum pppoe_tag_err pppoe_tags_parse(const uint8_t *p, uint16_t len, struct pppoe_tags *t);

/** Control input of one discovery frame; consumes m. */
void pppoe_disc_input(struct rte_mbuf *m);

/** Send a PADT for a session (optionally with a Generic-Error text). */
int pppoe_disc_send_padt(struct pppoe_sess *s, const char *error);

/** A login of this MAC failed: hold its PADIs and PADRs (the guard, disc.c). */
void pppoe_disc_login_failed(const struct rte_ether_addr *mac);
/** A session of this MAC bound: forget its failures. */
void pppoe_disc_login_ok(const struct rte_ether_addr *mac);
/** The guard's rates changed: the buckets of all clients start full. */
void pppoe_disc_guard_reset(void);

/** Rotate the cookie secret when due (ctl.c's service). */
unsigned int pppoe_disc_service(uint64_t now_tsc);
/** Cookie secret set-up and wipe. */
int pppoe_disc_init(void);
void pppoe_disc_fini(void);

/* ---------------- pools (pool.c) ---------------- */

/** Take a free IPv4 address (network order); 0 if none. */
rte_be32_t pppoe_pool4_alloc(void);
/** Take a free address of the pool whose prefix text is name ("a.b.c.d/n"); 0 if none. */
rte_be32_t pppoe_pool4_alloc_named(const char *name);
/** Whether an IPv4 pool of that prefix text exists. */
bool pppoe_pool4_named_exists(const char *name);
/** Reserve a given address (static per-user address): 0, -EBUSY, or 1 if in no pool (usable). */
int pppoe_pool4_reserve(rte_be32_t addr);
void pppoe_pool4_release(rte_be32_t addr);
/** Take a free /64; returns 0 and the prefix, or -ENOSPC. */
int pppoe_pool6_alloc(uint8_t prefix[8]);
void pppoe_pool6_release(const uint8_t prefix[8]);
void pppoe_pool_fini(void);
/** Number of IPv4 and IPv6 pools (for egw_pppoe_config_get()). */
void pppoe_pool_count(unsigned int *nb4, unsigned int *nb6);

/* ---------------- PPP (ppp.c, fsm.c, lcp.c, auth.c, ipcp.c, ipv6cp.c) ---------------- */

struct ppp_sess;

/** PADS sent: allocate s->ppp, open LCP (Configure-Request, restart timer). 0 or -ENOMEM. */
int ppp_sess_start(struct pppoe_sess *s);

/**
 * A session frame for s reached the control path: p points at the PPP
 * protocol field (1 or 2 bytes, RFC 1661 PFC), len is the PPPoE length.
 * Does not take the mbuf.
 */
void ppp_input(struct pppoe_sess *s, const uint8_t *p, uint16_t len);

/** Administrative close: LCP Terminate-Request, then pppoe_sess_close(cause, PADT). */
void ppp_sess_terminate(struct pppoe_sess *s, enum egw_pppoe_cause cause);
/** The session is closing: stop every timer, send nothing more. */
void ppp_sess_stop(struct pppoe_sess *s);
/** The session closes: the AAA hook hears EGW_PPPOE_EV_CLOSING (aaa.c). */
void ppp_sess_closing(struct pppoe_sess *s);
/** Grace period over: release addresses and free s->ppp. */
void ppp_sess_free(struct pppoe_sess *s);
/** Fill the PPP part of a session's info (FSM state names, user, IPv6 iid, echo misses). */
void ppp_sess_info(const struct pppoe_sess *s, struct egw_pppoe_session_info *info);

/** The user a session authenticated as ("" if none). */
const char *ppp_sess_user(const struct pppoe_sess *s);
/** The named filter set a session runs ("" if none). */
const char *ppp_sess_filter_set(const struct pppoe_sess *s);
/** Name it (NULL or "": none); -ENOENT (no PPP state), -ESRCH (name too long). */
int ppp_sess_set_filter_set(struct pppoe_sess *s, const char *set);

/* ---------------- policy (policy.c) ---------------- */

struct pppoe_filter;
/** A session binds: its filters into its fast-path slot (before the state). */
void pppoe_policy_attach(struct pppoe_sess *s);
/** Idle sessions closed, once a second; returns how many. */
unsigned int pppoe_policy_service(uint64_t now_tsc);
void pppoe_policy_fini(void);
unsigned int pppoe_policy_idle_s(void);
/** When a session last passed an active frame (fast.c: the latest over the contexts, TSC). */
uint64_t pppoe_fast_sess_active(uint16_t sid);

/** Subscriber table (auth.c). */
void ppp_users_fini(void);
unsigned int ppp_users_count(void);
/** Does a local user name filter set set? */
bool ppp_users_name_set(const char *set);

#endif /* PPPOE_PRIVATE_H */
