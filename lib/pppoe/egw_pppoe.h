/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * PPPoE access concentrator (RFC 2516, RFC 4638) with PPP termination
 * (RFC 1661 LCP, RFC 1334 PAP, RFC 1994 CHAP-MD5, RFC 1332/1877 IPCP,
 * RFC 5072 IPv6CP, RFC 4861/4862 router advertisements) and a lock-free
 * fast path for bound sessions.
 *
 * Two halves:
 *  - the control path (every function not marked "data path"): discovery,
 *    the PPP state machines, timers, configuration and the session table's
 *    writes. One thread at a time (the caller serialises).
 *  - the data path: per-lcore contexts that decapsulate session frames of
 *    bound sessions and encapsulate downstream IP packets toward them,
 *    reading the session table without locks.
 *
 * Session table: a session is found by (ingress port, VLAN tags, client MAC,
 * session id). Session ids are allocated by this library, unique over all
 * ports, so the data path indexes the table by id and compares the rest of
 * the key. A session's fields are written before its state is published with
 * a release store (the data path loads it with acquire); a session leaves the
 * table and its slot is reused only after an rte_rcu_qsbr grace period, so a
 * data-path thread must be a reader of the QSBR variable given to
 * egw_pppoe_init() and report quiescent between bursts.
 *
 * Handoff: PPP control frames (LCP, PAP/CHAP, IPCP, IPv6CP, router
 * solicitations) go to the control path in arrival order. IP frames never do.
 * The peer is Opened, and may send data, as soon as it has sent its
 * Configure-Ack of our IPCP (IPv6CP) request; that Ack may still be on its
 * way to the control path. So an IPv4 (IPv6) frame whose NCP is not open
 * but that arrives behind the peer's Configure-Ack of that NCP (seen by the
 * same context, within 1 s) is held by the context (at most 256 per context,
 * 128 per session, for 1 s). Once the control path opens the NCP and
 * publishes it, the held frames of the session are decapsulated first, in
 * arrival order, then the new ones: no frame is lost or reordered across
 * the bind. Other frames of an NCP not open, and held ones whose NCP does
 * not open in time or that find the hold full, are dropped as ncp_not_open
 * (RFC 1661: packets of a protocol not in the Opened state are discarded).
 * The caller releases held frames with egw_pppoe_ctx_poll() on every loop
 * (egw_pppoe_decap_burst() also releases those of its port first).
 *
 * Frames are Ethernet frames classified by lib/eth (egw_eth_meta(), l2_len,
 * vlan_tci/vlan_tci_outer set).
 */
#ifndef EGW_PPPOE_H
#define EGW_PPPOE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest burst a data-path call takes. */
#define EGW_PPPOE_MAX_BURST 128
/** Most data-path contexts (one per lcore). */
#define EGW_PPPOE_MAX_CTX 16
/** Most sessions (ids 1..65534; 0 and 0xFFFF are reserved by RFC 2516). */
#define EGW_PPPOE_MAX_SESSIONS 65534
/** Longest AC-Name, Service-Name, user name, secret. */
#define EGW_PPPOE_NAME_MAX 64
/** Default MRU we offer (RFC 2516: 1492). */
#define EGW_PPPOE_MRU_DEF 1492
/** Largest MRU with RFC 4638 PPP-Max-Payload (jumbo access ports). */
#define EGW_PPPOE_MRU_MAX 9000

/** Data-path drop reasons (egw_pppoe_drop.def). */
enum egw_pppoe_drop {
#define EGW_PPPOE_DROP(e, n, d) EGW_PPPOE_DROP_##e,
#include "egw_pppoe_drop.def"
#undef EGW_PPPOE_DROP
	EGW_PPPOE_DROP_MAX
};

/** JSON/counter name of a data-path drop reason ("unknown" if out of range). */
const char *egw_pppoe_drop_name(unsigned int reason);
/** One-line description of a data-path drop reason. */
const char *egw_pppoe_drop_desc(unsigned int reason);

/**
 * Send a frame built by the control path (PADO, PADS, PADT, PPP control,
 * router advertisements) out of a port. Must consume m (transmit or free).
 */
typedef void (*egw_pppoe_tx_fn)(uint16_t port, struct rte_mbuf *m, void *arg);

/** Parameters of egw_pppoe_init(). */
/**
 * A session's downstream route changed (control path): add (true) or
 * delete (false) the route of prefix/len (IPv4: its address, /32; IPv6:
 * its /64, addr 16 bytes) to session sid. An application that routes with
 * its own FIB finds the session by sid and hands the packets to
 * egw_pppoe_encap_sid_burst(). On add, return 0, or a negative errno
 * (-EEXIST: the prefix is routed elsewhere, -ENOSPC) and the NCP is not
 * bound; a delete cannot fail.
 */
typedef int (*egw_pppoe_route_fn)(bool add, uint16_t sid, int family, const uint8_t *addr,
				  uint8_t len, void *arg);

/**
 * Data path: is src (IPv4: 4 bytes, IPv6: 16) a source that session sid
 * may send from beyond its own address and /64, i.e. inside one of the
 * prefixes routed to it (Framed-Route, a delegated prefix)? Called only for
 * a session marked with egw_pppoe_session_framed(), only for a source that
 * is not its own. Must not block; any lcore.
 */
typedef bool (*egw_pppoe_src_fn)(uint16_t sid, bool v6, const uint8_t *src, void *arg);

struct egw_pppoe_params {
	struct rte_rcu_qsbr *qsbr; /**< data-path threads are its readers */
	struct rte_mempool *pool;  /**< mbufs for frames the control path builds */
	unsigned int max_sessions; /**< table size, 1..EGW_PPPOE_MAX_SESSIONS; 0: maximum */
	unsigned int nb_ctx;       /**< data-path contexts that will be created (1..MAX_CTX) */
	egw_pppoe_tx_fn tx;        /**< control-path transmit */
	void *tx_arg;
	int socket; /**< NUMA socket of the tables */
	/** NULL: the library keeps its own route tables (rte_hash, /32 and /64
	 *  -> session) for egw_pppoe_encap_burst(); else they are the
	 *  application's, kept by this callback, and egw_pppoe_encap_burst()
	 *  finds nothing */
	egw_pppoe_route_fn route;
	void *route_arg;
	/** the source check of sessions with routed prefixes (NULL: none) */
	egw_pppoe_src_fn src_check;
	void *src_check_arg;
};

/**
 * Control path: session sid has prefixes routed to it beyond its own
 * address and /64 (on), or no longer (off). While on, a frame the caller's
 * FIB hands egw_pppoe_encap_sid_burst() for the session is sent to it whatever
 * its destination, and an upstream source that is not the session's own is
 * accepted when the src_check hook says it is inside such a prefix (BCP 38
 * still: every other source is dropped as spoofed). Cleared when the
 * session ends. @return 0, -ENOENT (no such session, or not negotiating or bound).
 */
int egw_pppoe_session_framed(uint16_t sid, bool on);

/**
 * Initialise the library (control path, once). Calls rte_timer_subsystem_init().
 *
 * @return 0; -EINVAL on bad parameters or from a thread without an lcore id;
 *   -ENOMEM; -EEXIST if already done.
 */
int egw_pppoe_init(const struct egw_pppoe_params *p);

/** Close every session (PADT sent), wait for a grace period, free everything. */
void egw_pppoe_fini(void);
/** Close every session now (cause shutdown, PADT sent), the library staying
 *  up: counters then include the shutdown. Returns how many. */
unsigned int egw_pppoe_shutdown(void);

/**
 * Declare an access port: discovery frames are answered on it with its MAC;
 * its MTU bounds the MRU (RFC 4638). Ports not declared ignore PPPoE
 * (counted). May be called again to change MAC or MTU.
 *
 * @return 0; -EINVAL (port >= RTE_MAX_ETHPORTS, mtu < 1500).
 */
int egw_pppoe_port_add(uint16_t port, const struct rte_ether_addr *mac, uint16_t mtu);

/* --- configuration (control path; 0 or -errno, state unchanged on error) --- */

/** AC-Name tag value (default: "edgegw"). -EINVAL if empty or too long. */
int egw_pppoe_set_ac_name(const char *name);
/** Add a served Service-Name; with none configured, any name is served. -EEXIST, -ENOSPC. */
int egw_pppoe_service_add(const char *name);
/** -ENOENT if not configured. */
int egw_pppoe_service_del(const char *name);

/**
 * Add an address pool. IPv4 "a.b.c.d/len" (len 8..30): the first host
 * address is the concentrator's own (IPCP local address, ICMP source),
 * subscribers get the others. IPv6 "prefix/len" (len 32..63): the first /64
 * is the concentrator's own, subscribers get one /64 each.
 *
 * @return 0; -EINVAL (syntax, length) with a message in err; -EEXIST (overlaps
 *   a pool); -ENOSPC.
 */
int egw_pppoe_pool_add(const char *prefix, char *err, size_t errlen);
/** Remove a pool; -EBUSY while a session holds an address from it; -ENOENT. */
int egw_pppoe_pool_del(const char *prefix, char *err, size_t errlen);

/** DNS servers for IPCP (RFC 1877); 0 = none. Network byte order. */
int egw_pppoe_set_dns(rte_be32_t primary, rte_be32_t secondary);
/** Most sessions in total (1..max_sessions of init) and per client MAC (1..65534). */
int egw_pppoe_set_limits(unsigned int sessions, unsigned int per_mac);
/** Default per-MAC session limit: a CPE that restarts gets a session while
 * its old one waits for the keepalive to end it. */
#define EGW_PPPOE_PER_MAC_DEF 2u
/** Default limit of sessions negotiating at once (discovery to first NCP). */
#define EGW_PPPOE_STARTING_DEF 256u
/** Default PADI and PADR rates: per second over all clients, and per client MAC. */
#define EGW_PPPOE_DISC_RATE_DEF 2000u
#define EGW_PPPOE_DISC_RATE_MAC_DEF 3u
/** Default longest hold of a MAC after failed logins, seconds. */
#define EGW_PPPOE_AUTH_HOLD_DEF 60u
/** Largest value of each discovery rate. */
#define EGW_PPPOE_DISC_RATE_MAX 1000000u

/**
 * Flood guard of discovery and session start-up.
 *
 * PADIs and PADRs pass two token buckets (a burst of one second's worth):
 * one per client MAC, then one over all clients; no PADO is sent while
 * max_starting sessions are negotiating, and a PADR then gets a PADS with
 * AC-System-Error. After a failed login (PAP/CHAP) the client MAC is held,
 * no PADO and no PADS, for 1 s, doubling with each further failure up to
 * auth_hold_s; a session of the MAC that binds ends the hold. Per-MAC state
 * lives in a fixed array of 65,536 slots indexed by a keyed hash of the MAC:
 * two MACs may share a slot.
 */
struct egw_pppoe_guard {
	unsigned int max_starting;  /**< 1..max_sessions of init */
	unsigned int padi_rate;     /**< 1..EGW_PPPOE_DISC_RATE_MAX */
	unsigned int padi_rate_mac; /**< 1..EGW_PPPOE_DISC_RATE_MAX */
	unsigned int padr_rate;
	unsigned int padr_rate_mac;
	unsigned int auth_hold_s; /**< 1..86400 */
};
/** Set the whole guard; -EINVAL (nothing changed) if a value is out of range. */
int egw_pppoe_set_guard(const struct egw_pppoe_guard *g);

/** Pass and active filters (pppd's pass-filter and active-filter). */
enum egw_pppoe_filter_kind {
	EGW_PPPOE_FILTER_PASS = 0, /**< frames of a bound session it does not match are dropped */
	EGW_PPPOE_FILTER_ACTIVE,   /**< frames it matches reset the idle timer */
	EGW_PPPOE_FILTER_MAX,
};

/**
 * Set a filter: a pcap-filter(7) expression (libpcap, DLT_EN10MB) run on
 * each IPv4/IPv6 frame of a bound session as an Ethernet II frame (upstream
 * after decapsulation, downstream before encapsulation), JIT-compiled with
 * rte_bpf. user NULL: the default, otherwise that user's (sessions of the
 * user run it instead of the default; at most 64 users). expr NULL removes
 * it. Bound sessions change over atomically (a frame runs the old program
 * or the new one); the old one is freed after an RCU grace period.
 *
 * @return 0; -EINVAL (the expression does not compile: libpcap's text in
 *   err), -E2BIG, -ENOTSUP, -ENOMEM, -ENOSPC. On error nothing changed.
 */
int egw_pppoe_set_filter(enum egw_pppoe_filter_kind kind, const char *user, const char *expr,
			 char *err, size_t errlen);
/**
 * Set a filter of a named filter set (created by its first filter, gone
 * with its last): sessions that name the set (a local user's filter set,
 * RADIUS Filter-Id, CoA) run it instead of their user's or the default, for
 * the kinds the set has. At most 64 sets. Same change-over as
 * egw_pppoe_set_filter().
 *
 * @return 0; as egw_pppoe_set_filter(), and -EBUSY: expr NULL would empty a
 *   set that sessions or local users name (err says how many).
 */
int egw_pppoe_set_filter_set(enum egw_pppoe_filter_kind kind, const char *set, const char *expr,
			     char *err, size_t errlen);
/** Does a filter set of that name exist? */
bool egw_pppoe_filter_set_exists(const char *set);
/**
 * Change the filter set a live session runs (NULL or "": none), without
 * dropping it: a bound session's frames run the new set's programs from the
 * next burst on. @return 0; -ENOENT (no such session, or closing), -ESRCH
 * (no such set: nothing changed).
 */
int egw_pppoe_session_set_filter_set(uint16_t sid, const char *set);
/** Call fn for each filter of each set, with the number of sessions naming the set. */
void egw_pppoe_filter_sets_walk(void (*fn)(const char *set, enum egw_pppoe_filter_kind kind,
					   const char *expr, bool jit, unsigned int sessions,
					   void *arg),
				void *arg);
/** Call fn for each filter set: user NULL for the defaults. */
void egw_pppoe_filters_walk(void (*fn)(const char *user, enum egw_pppoe_filter_kind kind,
				       const char *expr, bool jit, void *arg),
			    void *arg);
/**
 * Close bound sessions that passed no frame matching their active filter
 * (any frame without one) for s seconds (0: off, the default; at most a
 * week). Checked once a second. -EINVAL.
 */
int egw_pppoe_set_idle_timeout(unsigned int s);

/** MRU we ask for in LCP (576..EGW_PPPOE_MRU_MAX). */
int egw_pppoe_set_mru(uint16_t mru);

/** TCP MSS clamping of SYNs in both directions. */
enum egw_pppoe_mss_mode {
	EGW_PPPOE_MSS_AUTO = 0, /**< session MRU - 40 (IPv4) / - 60 (IPv6): the default */
	EGW_PPPOE_MSS_OFF,
	EGW_PPPOE_MSS_FIXED, /**< the given value for IPv4, value - 20 for IPv6 */
};
/** -EINVAL for a fixed value outside 536..9000 - 40. */
int egw_pppoe_set_mss_clamp(enum egw_pppoe_mss_mode mode, uint16_t value);
/** LCP echo every interval seconds (0 = off), close after misses (1..255) unanswered. */
int egw_pppoe_set_keepalive(unsigned int interval_s, unsigned int misses);

/** Authentication asked for in LCP. */
enum egw_pppoe_auth {
	EGW_PPPOE_AUTH_PAP = 0, /**< the default */
	EGW_PPPOE_AUTH_CHAP,    /**< CHAP with MD5 */
	EGW_PPPOE_AUTH_NONE,
};
int egw_pppoe_set_auth(enum egw_pppoe_auth auth);
/**
 * Add a subscriber; addr (network order, 0 = from a pool) must lie in no pool
 * or be free in one. -EEXIST, -EINVAL (name/secret empty or too long), -ENOSPC.
 */
int egw_pppoe_user_add(const char *name, const char *secret, rte_be32_t addr);
/** -ENOENT. Sessions of the user stay up. */
int egw_pppoe_user_del(const char *name);
/**
 * The named filter set a subscriber's sessions run (NULL or "": none); it
 * must exist (and cannot be emptied while named). Sessions that are up
 * keep theirs. -ENOENT (no such user), -ESRCH (no such set).
 */
int egw_pppoe_user_set_filter_set(const char *name, const char *set);

/* --- remote authentication and accounting (AAA; aaa.c) --- */

/** Where PAP/CHAP credentials are checked. */
enum egw_pppoe_auth_order {
	EGW_PPPOE_AUTH_LOCAL = 0,    /**< the subscriber table only (the default) */
	EGW_PPPOE_AUTH_REMOTE,       /**< the AAA hook only: no answer is a refusal */
	EGW_PPPOE_AUTH_REMOTE_LOCAL, /**< the AAA hook; the table when no server answers */
};
/** -EINVAL for an unknown order. */
int egw_pppoe_set_auth_order(enum egw_pppoe_auth_order order);
enum egw_pppoe_auth_order egw_pppoe_get_auth_order(void);

/** Credentials a session presented, for the AAA hook (valid during the call). */
struct egw_pppoe_auth_req {
	uint16_t sid;
	uint64_t cookie;            /**< give it back to egw_pppoe_auth_done() */
	enum egw_pppoe_auth method; /**< PAP or CHAP */
	const char *user;           /**< NUL-terminated, user_len bytes */
	uint8_t user_len;
	const uint8_t *password; /**< PAP: password_len bytes */
	uint8_t password_len;
	uint8_t chap_id;               /**< CHAP: our Challenge's Identifier */
	const uint8_t *chap_challenge; /**< CHAP: the 16-byte Challenge we sent */
	const uint8_t *chap_response;  /**< CHAP: the peer's 16-byte MD5 Response */
	uint16_t port;
	struct rte_ether_addr mac;
	uint8_t n_vlan;
	uint16_t vlan[2];    /**< VIDs, outer first */
	const char *service; /**< Service-Name the client asked for ("" any) */
};

/**
 * The AAA hook of an authentication (control path): start checking the
 * credentials and return 0, the answer coming later through
 * egw_pppoe_auth_done(); or -ENOENT/-EHOSTUNREACH when no server is
 * configured (order REMOTE_LOCAL then checks the table), another -errno to
 * refuse. Must not call back into the library from the call itself.
 */
typedef int (*egw_pppoe_auth_fn)(const struct egw_pppoe_auth_req *r, void *arg);

/** Session events for accounting (control path). */
enum egw_pppoe_event {
	/** the session's first NCP opened (IPv4 or IPv6 bound) */
	EGW_PPPOE_EV_UP = 0,
	/** a session that reported UP ended, after its grace period: its data-path
	 *  counters are final; egw_pppoe_session_get() still finds it */
	EGW_PPPOE_EV_DOWN,
	/** a session that reported UP is closing (its grace period starts): the
	 *  routes the application gave it go now, so that no worker still uses
	 *  one when the slot is reused */
	EGW_PPPOE_EV_CLOSING,
};
typedef void (*egw_pppoe_event_fn)(enum egw_pppoe_event ev, uint16_t sid, void *arg);

/** Install the AAA hooks (either may be NULL). 0. */
int egw_pppoe_set_aaa(egw_pppoe_auth_fn auth, egw_pppoe_event_fn event, void *arg);

/** The answer of the AAA hook. */
enum egw_pppoe_auth_result {
	EGW_PPPOE_AUTH_ACCEPT = 0,
	EGW_PPPOE_AUTH_REJECT,
	EGW_PPPOE_AUTH_NO_SERVER, /**< no server answered (REMOTE_LOCAL: the table decides) */
};

/** What an accepted session gets (zero fields: the configuration's). */
struct egw_pppoe_authz {
	rte_be32_t ip4;   /**< its IPv4 address (in no pool, or free in one) */
	const char *pool; /**< or the IPv4 pool to take it from, by prefix ("a.b.c.d/n") */
	bool has_ip6_prefix;
	uint8_t ip6_prefix[8]; /**< its /64 (outside the IPv6 pools), instead of one from a pool */
	rte_be32_t dns[2];     /**< IPCP DNS servers (RFC 1877) */
	uint8_t dns6[2][16];   /**< RDNSS of its router advertisements (RFC 8106); :: none */
	uint16_t mtu;          /**< the most it is sent (Framed-MTU), 576.. */
	/** the named filter set it runs (Filter-Id); one that does not exist
	 *  refuses the login (auth_remote_bad_filter). NULL or "": none */
	const char *filter_set;
	const char *message; /**< text of the PAP/CHAP reply (NULL: the default) */
};

/**
 * Answer of a remote authentication. A session that closed, renegotiated
 * or already has an answer drops it: -ESTALE (counted auth_remote_late).
 * ACCEPT: PAP Ack / CHAP Success, the session goes on with z; REJECT (or
 * ACCEPT with a pool that does not exist): Nak / Failure and the session
 * ends as auth_failed. 0 on success.
 */
int egw_pppoe_auth_done(uint16_t sid, uint64_t cookie, enum egw_pppoe_auth_result res,
			const struct egw_pppoe_authz *z);

/** Snapshot of the configuration for "show config" and JSON. */
struct egw_pppoe_config {
	char ac_name[EGW_PPPOE_NAME_MAX + 1];
	unsigned int nb_services;
	unsigned int nb_pools4, nb_pools6;
	unsigned int nb_users;
	rte_be32_t dns[2];
	unsigned int max_sessions, max_per_mac;
	struct egw_pppoe_guard guard;
	unsigned int idle_timeout_s;
	uint16_t mru;
	enum egw_pppoe_mss_mode mss_mode;
	uint16_t mss_value;
	unsigned int keepalive_s, keepalive_misses;
	enum egw_pppoe_auth auth;
};
void egw_pppoe_config_get(struct egw_pppoe_config *c);

/** Call fn for each configured service name, then each pool as text. */
void egw_pppoe_services_walk(void (*fn)(const char *name, void *arg), void *arg);
void egw_pppoe_pools_walk(void (*fn)(const char *prefix, unsigned int used, unsigned int size,
				     void *arg),
			  void *arg);

/* --- control path input and timers --- */

/**
 * A discovery (0x8863) or session (0x8864) frame handed over by a data-path
 * thread, classified by lib/eth, m->port the ingress port. Consumes m.
 */
void egw_pppoe_input(struct rte_mbuf *m);

/**
 * Timers (rte_timer_manage: LCP/NCP restart, keepalive, grace periods),
 * cookie secret rotation, sessions freed after grace periods. Call often
 * (every millisecond or so) from the control thread.
 *
 * @return the amount of work done (0 when idle).
 */
unsigned int egw_pppoe_service(void);

/* --- sessions --- */

/** Session state as shown. */
enum egw_pppoe_sess_state {
	EGW_PPPOE_S_FREE = 0,
	EGW_PPPOE_S_NEGOTIATING, /**< discovery done, PPP not yet bound: frames go to control */
	EGW_PPPOE_S_BOUND,       /**< an NCP is open: IP frames take the fast path */
	EGW_PPPOE_S_CLOSING,     /**< PADT sent or received, waiting for the grace period */
};

/** Why a session ended (egw_pppoe_cause.def). */
enum egw_pppoe_cause {
#define EGW_PPPOE_CAUSE(e, n, d) EGW_PPPOE_CAUSE_##e,
#include "egw_pppoe_cause.def"
#undef EGW_PPPOE_CAUSE
	EGW_PPPOE_CAUSE_MAX
};
const char *egw_pppoe_cause_name(unsigned int cause);

/** A session as shown by "show pppoe sessions [detail]". */
struct egw_pppoe_session_info {
	uint16_t sid;
	uint16_t port;
	struct rte_ether_addr mac;
	uint8_t n_vlan;
	uint16_t vlan[2]; /**< VIDs, outer first */
	enum egw_pppoe_sess_state state;
	char lcp[16], ipcp[16], ipv6cp[16]; /**< FSM state names */
	char user[EGW_PPPOE_NAME_MAX + 1];
	char filter_set[EGW_PPPOE_NAME_MAX + 1]; /**< the named filter set it runs; "": none */
	uint16_t mru;                            /**< we send at most this (peer's MRU) */
	rte_be32_t ip4;                          /**< 0 if none */
	uint8_t ip6[16];                         /**< the session's /64 prefix (zero if none) */
	uint8_t ip6_iid[8];                      /**< peer interface identifier */
	uint64_t uptime_s;
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes; /**< data path, summed */
	uint64_t ctrl_rx, ctrl_tx;                     /**< control frames */
	unsigned int echo_missed;
};

/** Call fn for each session not free, in id order; stop early if fn returns non-zero. */
int egw_pppoe_session_walk(int (*fn)(const struct egw_pppoe_session_info *s, void *arg), void *arg);
/** The same from session id first on (a caller that walks in slices, the
 *  control lock released in between). */
int egw_pppoe_session_walk_from(unsigned int first,
				int (*fn)(const struct egw_pppoe_session_info *s, void *arg),
				void *arg);
/** Number of sessions in each state; returns the total not free. */
unsigned int egw_pppoe_session_count(unsigned int count[4]);

/** Close a session (PADT + LCP Terminate); -ENOENT if none with this id. */
int egw_pppoe_session_clear(uint16_t sid);
/** Close every session; returns how many. */
unsigned int egw_pppoe_session_clear_all(void);

/** One session (any state but free) by id, and why it ended (NONE while up). -ENOENT. */
int egw_pppoe_session_get(uint16_t sid, struct egw_pppoe_session_info *info,
			  enum egw_pppoe_cause *cause);
/** Close a session with a cause (LCP Terminate-Request, PADT). -ENOENT, -EINVAL. */
int egw_pppoe_session_terminate(uint16_t sid, enum egw_pppoe_cause cause);

/** Control-path counters: names and values, in a fixed order. */
unsigned int egw_pppoe_ctrl_counters(const char **names, uint64_t *values, unsigned int max);

/* --- data path --- */

struct egw_pppoe_ctx;

/** Create the data-path context of lcore index idx (< nb_ctx of init); pool for ICMP. */
struct egw_pppoe_ctx *egw_pppoe_ctx_create(unsigned int idx, struct rte_mempool *pool);
void egw_pppoe_ctx_free(struct egw_pppoe_ctx *c);
/** Drops of one context (read by other threads: relaxed loads). */
void egw_pppoe_ctx_drops(const struct egw_pppoe_ctx *c, uint64_t drop[EGW_PPPOE_DROP_MAX]);

/**
 * Result of a data-path call. The caller zeroes it once; each call appends
 * to the arrays and adds to the counts, the caller takes the frames out and
 * zeroes the counts again. Dropped frames are freed by the library.
 */
struct egw_pppoe_res {
	uint16_t n_out;  /**< decap: IP frames; encap: PPPoE frames */
	uint16_t n_ctrl; /**< decap: frames for the control path (egw_pppoe_input) */
	uint16_t n_pass; /**< encap: not for a session, unchanged */
	uint16_t n_icmp; /**< ICMP/ICMPv6 too-big made, to send back where the packet came from */
	uint32_t drop[EGW_PPPOE_DROP_MAX];
	struct rte_mbuf *out[EGW_PPPOE_MAX_BURST];
	uint16_t out_port[EGW_PPPOE_MAX_BURST]; /**< encap: egress port (the session's) */
	struct rte_mbuf *ctrl[EGW_PPPOE_MAX_BURST];
	/** decap: ctrl[i] is PPP control of a bound session (1) or of one still
	 *  negotiating (0): a control path under a flood reads the first kind first */
	uint8_t ctrl_up[EGW_PPPOE_MAX_BURST];
	struct rte_mbuf *pass[EGW_PPPOE_MAX_BURST];
	struct rte_mbuf *icmp[EGW_PPPOE_MAX_BURST];
};

/**
 * Data path: session frames (class PPPOE_SESS) received on one port. Frames
 * of bound sessions carrying IPv4/IPv6 become Ethernet II frames
 * (destination and source MAC kept, tags removed, ethertype 0x0800/0x86DD,
 * l2_len 14, lib/eth meta and packet_type updated, TCP MSS clamped on SYNs)
 * in res->out, in arrival order (after the held frames of the port whose NCP
 * opened meanwhile); LCP/auth/NCP frames and IPv6 router solicitations go
 * to res->ctrl in arrival order (res->ctrl_up tells those of bound
 * sessions); IP frames of an NCP not open are held (see Handoff above); the
 * rest are dropped with a reason.
 */
void egw_pppoe_decap_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			   struct egw_pppoe_res *res);

/**
 * Data path: IPv4/IPv6 Ethernet frames (classified, l2_len set). A frame
 * whose destination is a bound session's address (IPv4) or /64 (IPv6)
 * becomes a PPPoE session frame for it in res->out (with res->out_port);
 * too big for the session's MRU: dropped, ICMP too-big in res->icmp; others
 * go to res->pass unchanged, in order.
 */
void egw_pppoe_encap_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			   struct egw_pppoe_res *res);

/**
 * Data path: as egw_pppoe_encap_burst(), for frames whose session the
 * caller found (its route callback's sid, from its own FIB): sids[i] is the
 * session of pkts[i] (0 or above the table: none, the frame goes to
 * res->pass). The session must still be bound with the frame's destination
 * as its address or /64 (a route may be a moment older than the session):
 * otherwise the frame goes to res->pass.
 */
void egw_pppoe_encap_sid_burst(struct egw_pppoe_ctx *c, struct rte_mbuf *pkts[],
			       const uint32_t sids[], uint16_t n, struct egw_pppoe_res *res);

/**
 * Data path: the frames of port held for the handoff (see the top of this
 * file) whose NCP opened become IP frames in res->out (as from
 * egw_pppoe_decap_burst(), in arrival order, before any later frame of
 * their session), those waiting 1 s are dropped; flush drops every held
 * frame of port (as ncp_not_open: the caller stops). Call it for each port
 * the context polls, on every loop, while egw_pppoe_ctx_held() is non-zero.
 */
void egw_pppoe_ctx_poll(struct egw_pppoe_ctx *c, uint16_t port, bool flush,
			struct egw_pppoe_res *res);
/** Data path: frames the context holds for the handoff. */
unsigned int egw_pppoe_ctx_held(const struct egw_pppoe_ctx *c);

/** Data path: non-zero while at least one session is bound (one load). */
int egw_pppoe_active(void);

#ifdef __cplusplus
}
#endif

#endif /* EGW_PPPOE_H */
