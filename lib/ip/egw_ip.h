/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * edgegw IP routing: FIB (rte_fib DIR24_8 for IPv4, rte_fib6 TRIE for IPv6),
 * next hops, ECMP groups, interface addresses, neighbours (ARP, RFC 826;
 * IPv6 neighbour discovery, RFC 4861), forwarding (RFC 1812, RFC 8200) and
 * ICMP/ICMPv6 errors (RFC 792, RFC 4443).
 *
 * Two halves:
 *  - the control path (every function not marked "data path"): routes,
 *    addresses, neighbours, their timers and the protocol frames. One thread
 *    at a time (the caller serialises).
 *  - the data path: per-lcore contexts (egw_ip_ctx) that look up a burst in
 *    the FIB, check and decrement TTL, rewrite the MAC header from the next
 *    hop and answer ICMP echo, without locks.
 *
 * Publication: a FIB entry holds a next-hop index. The next-hop table is an
 * array of pointers to immutable next-hop records: the control path changes
 * a next hop (a neighbour resolves, its MAC changes) by filling a new record
 * and storing its pointer with release; a worker loads it with acquire and
 * sees either the old record or the new one, never a mixture. Old records
 * and freed indices are reclaimed after an rte_rcu_qsbr grace period, so a
 * data-path thread must be a reader of the QSBR variable given to
 * egw_ip_init() and report quiescent between bursts.
 *
 * Frames are Ethernet frames classified by lib/eth (egw_eth_meta(), l2_len).
 */
#ifndef EGW_IP_H
#define EGW_IP_H

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
#define EGW_IP_MAX_BURST 128
/** Room for the frames one call sends: IPv4 fragmentation makes several of one. */
#define EGW_IP_MAX_OUT (4 * EGW_IP_MAX_BURST)
/** Most data-path contexts (one per lcore). */
#define EGW_IP_MAX_CTX 16
/** Most paths of one ECMP route. */
#define EGW_IP_ECMP_MAX 16
/** Most packets held per unresolved neighbour (Linux's unres_qlen default is 3). */
#define EGW_IP_HOLD_MAX 3
/** Most addresses on one port. */
#define EGW_IP_ADDR_MAX 8

/** Data-path drop reasons (egw_ip_drop.def). */
enum egw_ip_drop {
#define EGW_IP_DROP(e, n, d) EGW_IP_DROP_##e,
#include "egw_ip_drop.def"
#undef EGW_IP_DROP
	EGW_IP_DROP_MAX
};

/** JSON/counter name of a drop reason ("unknown" if out of range). */
const char *egw_ip_drop_name(unsigned int reason);
/** One-line description of a drop reason. */
const char *egw_ip_drop_desc(unsigned int reason);

/** An IPv4 or IPv6 address; IPv4 in a[0..3], network order. */
struct egw_ip_addr {
	uint8_t family; /**< AF_INET or AF_INET6 */
	uint8_t a[16];
};

/**
 * Control path: send a frame the control path built or released (ARP, ND,
 * packets that waited for resolution) out of port. Consumes m.
 */
typedef void (*egw_ip_tx_fn)(uint16_t port, struct rte_mbuf *m, void *arg);

/**
 * Control path: a packet to edgegw's address on port that the data path
 * does not answer (not an ICMP echo), for the host's stack (the exception
 * path of a port that has one: egw_ip_port_exception()). m is an Ethernet
 * frame (l2_len set). Consumes m.
 */
typedef void (*egw_ip_local_fn)(uint16_t port, struct rte_mbuf *m, void *arg);

/** Parameters of egw_ip_init(). */
struct egw_ip_params {
	struct rte_rcu_qsbr *qsbr; /**< the data-path threads are its readers */
	struct rte_mempool *pool;  /**< mbufs for frames the control path builds */
	unsigned int nb_ctx;       /**< data-path contexts (1..EGW_IP_MAX_CTX) */
	int socket;
	uint32_t max_routes4; /**< IPv4 prefixes (0: 65536) */
	uint32_t max_routes6; /**< IPv6 prefixes (0: 16384) */
	/** DIR24_8 tbl8 groups, below 2^24: prefixes longer than /24 need one per /24
	 *  they fall in (0: 4096); from 2^15 on the FIB takes 4-byte entries */
	uint32_t tbl8_4;
	/** TRIE tbl8 groups, below 2^24: up to 3 per prefix longer than /24
	 *  (0: 16384); from 2^15 on the FIB takes 4-byte entries */
	uint32_t tbl8_6;
	uint32_t max_nh;    /**< next hops, neighbours included, 64..16384 (0: 16384) */
	uint32_t max_neigh; /**< neighbours learnt or resolving (0: 4096) */
	/** subscriber session routes (egw_ip_route_session_add()), keys
	 *  1..max_sessions below 2^24 (0: none). Non-zero makes the FIBs take
	 *  4-byte entries (twice the tbl24 memory: 64 MiB for each family) and
	 *  adds room for max_sessions prefixes of each family */
	uint32_t max_sessions;
	egw_ip_tx_fn tx;
	void *tx_arg;
	egw_ip_local_fn local; /**< NULL: no exception path */
	void *local_arg;
};

/**
 * Create the FIBs and tables. 0, or -EINVAL (bad parameters), -EEXIST
 * (already), -ENOMEM.
 */
int egw_ip_init(const struct egw_ip_params *p);
/** Free everything; held packets are freed (counted). Data path stopped. */
void egw_ip_fini(void);

/** Kinds of a port for routing. */
enum egw_ip_port_kind {
	EGW_IP_PORT_ROUTED = 0, /**< addresses, neighbours, routes */
	EGW_IP_PORT_ACCESS,     /**< PPPoE subscribers only: no address, no neighbour */
};

/**
 * Declare a port (or change its MAC, MTU or kind). A port with addresses,
 * neighbours or routes cannot become an access port (-EBUSY).
 * @return 0, -EINVAL, -EBUSY.
 */
int egw_ip_port_set(uint16_t port, const struct rte_ether_addr *mac, uint16_t mtu,
		    enum egw_ip_port_kind kind);

/**
 * Hand the packets to edgegw's addresses on port that the data path does
 * not answer to the local callback (on), or drop them as
 * ip_local_no_exception (off, the default).
 * @return 0, -EINVAL (no such routed port, or no local callback).
 */
int egw_ip_port_exception(uint16_t port, bool on);

/**
 * Control path: route a packet the host's stack sent through an exception
 * path (a locally originated IPv4 or IPv6 packet behind l2_len bytes of
 * room for the MAC header; egw_eth_meta() class set): FIB lookup, next hop,
 * MAC header, sent by the tx callback; an unresolved neighbour holds it as
 * the data path's packets are held. No TTL decrement. Consumes m.
 * @return 0 (sent or held), -ENETUNREACH (no route, or a route of a kind
 *   the control path does not send: blackhole, unreachable, PPPoE,
 *   edgegw's own address), -EMSGSIZE (above the egress MTU), -EINVAL.
 */
int egw_ip_output(struct rte_mbuf *m);

/**
 * Add an address to a port (VLAN 0: untagged): a connected route for its
 * prefix (unless /32 or /128), a local route for the address, for IPv4 the
 * subnet broadcast, for the first IPv6 address the port's EUI-64 link-local
 * address; a gratuitous ARP or unsolicited NA goes out.
 * @return 0, -EINVAL (not a unicast address, bad length, no such port or an
 *   access port), -EEXIST (the address exists, or the prefix is routed by
 *   another route), -ENOSPC (EGW_IP_ADDR_MAX), -ENOMEM.
 */
int egw_ip_addr_add(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, uint8_t len);
/** Delete an address and its routes. @return 0, -ENOENT. */
int egw_ip_addr_del(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, uint8_t len);

/** Route types. */
enum egw_ip_route_type {
	EGW_IP_RT_VIA = 0,   /**< through gateways (several: ECMP) */
	EGW_IP_RT_DEV,       /**< on-link on a port: the destination itself is resolved */
	EGW_IP_RT_BLACKHOLE, /**< silently discarded */
	EGW_IP_RT_UNREACH,   /**< discarded with ICMP host unreachable */
	EGW_IP_RT_SESSION,   /**< to PPPoE subscribers (the caller's session stage) */
	EGW_IP_RT_CONNECTED, /**< made by an address (shown, not added) */
	EGW_IP_RT_LOCAL,     /**< an address of edgegw (shown, not added) */
	/** a subscriber session's own prefix (egw_ip_route_session_add(), shown) */
	EGW_IP_RT_SUBSCRIBER,
	EGW_IP_RT_MAX
};

/** One path of a route. */
struct egw_ip_path {
	struct egw_ip_addr gw; /**< the gateway (VIA) */
	uint16_t port;         /**< UINT16_MAX: the port of the connected route to gw */
	uint16_t vlan;
};

/**
 * Add a route. prefix must have no bits set past len. VIA takes 1..ECMP_MAX
 * paths (the gateways must be on a connected network of a routed port, or
 * name one), DEV one path with its port, the others none.
 * @return 0, -EINVAL (with a reason in err), -EEXIST, -ENOSPC (FIB or
 *   next-hop table full), -ENOMEM.
 */
int egw_ip_route_add(const struct egw_ip_addr *prefix, uint8_t len, enum egw_ip_route_type type,
		     const struct egw_ip_path *paths, unsigned int n, char *err, size_t errlen);
/** Delete a route added by egw_ip_route_add(). @return 0, -ENOENT, -EPERM (connected/local). */
int egw_ip_route_del(const struct egw_ip_addr *prefix, uint8_t len);

/** A session key that is none (a pppoe route's address without a session route). */
#define EGW_IP_SESSION_NONE 0u
/** Largest session key. */
#define EGW_IP_SESSION_MAX ((1u << 24) - 1)

/**
 * Route a prefix (a subscriber's /32 or IPv6 /64, or a delegated prefix) to
 * one session: the data path hands its packets to the caller's session stage
 * in res->sess[] with key in res->sess_key[], after one FIB lookup (the
 * caller finds the session by key, with no lookup of its own). The prefix
 * normally lies inside a route of type pppoe (the pool), which keeps the
 * packets to addresses without a session (key EGW_IP_SESSION_NONE).
 * Published without a grace period: a worker may still use the previous
 * value of the prefix for a burst, so the caller checks that the session it
 * finds still has the destination.
 * @return 0, -EINVAL (bad prefix, key 0 or above max_sessions), -ENOTSUP
 *   (initialised without max_sessions), -EEXIST (a route of this prefix
 *   exists), -ENOSPC (FIB full: prefixes or tbl8 groups).
 */
int egw_ip_route_session_add(const struct egw_ip_addr *prefix, uint8_t len, uint32_t key);
/** Delete a session route. @return 0, -ENOENT (no route of that prefix to key). */
int egw_ip_route_session_del(const struct egw_ip_addr *prefix, uint8_t len, uint32_t key);

/**
 * Add a static (permanent) neighbour, or make a learnt one static. Packets
 * waiting for it are sent.
 * @return 0, -EINVAL (not unicast, no such routed port), -ENOSPC, -ENOMEM.
 */
int egw_ip_neigh_add(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a,
		     const struct rte_ether_addr *mac);
/** Delete a neighbour (routes through it resolve it again). @return 0, -ENOENT. */
int egw_ip_neigh_del(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a);

/** A route as walked. */
struct egw_ip_route_info {
	struct egw_ip_addr prefix;
	uint8_t len;
	uint8_t type;     /**< enum egw_ip_route_type */
	uint32_t session; /**< EGW_IP_RT_SUBSCRIBER: the session key */
	unsigned int n_paths;
	struct egw_ip_path paths[EGW_IP_ECMP_MAX];
};
/** Walk the routes of a family (0: both); fn returning non-zero stops. */
int egw_ip_route_walk(int family, int (*fn)(const struct egw_ip_route_info *r, void *arg),
		      void *arg);
/** Longest-prefix match of an address, as the data path would. @return 0, -ENOENT. */
int egw_ip_route_lookup(const struct egw_ip_addr *a, struct egw_ip_route_info *r);
/** Route counts: [family 0/1][type]. */
void egw_ip_route_count(unsigned int count[2][EGW_IP_RT_MAX]);
/** Name of a route type ("via", "dev", ...). */
const char *egw_ip_route_type_name(unsigned int type);

/** Neighbour states (RFC 4861 7.3.2, plus FAILED and PERMANENT as in Linux). */
enum egw_ip_neigh_state {
	EGW_IP_NS_INCOMPLETE = 0,
	EGW_IP_NS_REACHABLE,
	EGW_IP_NS_STALE,
	EGW_IP_NS_DELAY,
	EGW_IP_NS_PROBE,
	EGW_IP_NS_FAILED,
	EGW_IP_NS_PERMANENT,
	EGW_IP_NS_MAX
};
/** Name of a neighbour state. */
const char *egw_ip_neigh_state_name(unsigned int s);

/** A neighbour as walked. */
struct egw_ip_neigh_info {
	struct egw_ip_addr addr;
	uint16_t port;
	uint16_t vlan;
	struct rte_ether_addr mac; /**< zero while incomplete */
	uint8_t state;             /**< enum egw_ip_neigh_state */
	uint8_t held;              /**< packets waiting */
	unsigned int probes;       /**< solicitations sent in this state */
	unsigned int refs;         /**< routes through it */
	uint64_t age_ms;           /**< since the last confirmation */
};
int egw_ip_neigh_walk(int (*fn)(const struct egw_ip_neigh_info *n, void *arg), void *arg);

/** An address as walked. */
struct egw_ip_addr_info {
	uint16_t port;
	uint16_t vlan;
	struct egw_ip_addr addr;
	uint8_t len;
	bool link_local; /**< made by edgegw (IPv6 EUI-64) */
};
int egw_ip_addr_walk(int (*fn)(const struct egw_ip_addr_info *a, void *arg), void *arg);

/** Neighbour timers and limits (Linux's names in brackets). */
struct egw_ip_neigh_conf {
	uint32_t reachable_ms; /**< REACHABLE -> STALE (base_reachable_time: 30000) */
	uint32_t retrans_ms;   /**< between solicitations (retrans_time: 1000) */
	uint32_t delay_ms;     /**< DELAY -> PROBE (delay_first_probe_time: 5000) */
	uint32_t gc_stale_ms;  /**< an unused STALE entry is removed (gc_stale_time: 60000) */
	uint32_t failed_ms;    /**< a FAILED entry is kept, answering unreachable: 3000 */
	uint8_t mcast_probes;  /**< broadcast/multicast solicitations (mcast_solicit: 3) */
	uint8_t ucast_probes;  /**< unicast probes in PROBE (ucast_solicit: 3) */
	uint32_t solicit_pps;  /**< solicitations sent per second, all neighbours: 100 */
	uint32_t input_pps;    /**< ARP/ND frames handled per second: 1000 */
};
void egw_ip_neigh_conf_get(struct egw_ip_neigh_conf *c);
/** @return 0, -EINVAL (zero timers or rates). */
int egw_ip_neigh_conf_set(const struct egw_ip_neigh_conf *c);

/**
 * ICMP error rate limit of each data-path context (Linux icmp_ratelimit,
 * icmp_msgs_per_sec): a token bucket of burst tokens refilled at pps.
 * @return 0, -EINVAL (zero).
 */
int egw_ip_icmp_ratelimit(uint32_t pps, uint32_t burst);

/**
 * Control path: an ARP frame (class ARP) or an ICMPv6 ND frame the data
 * path queued (res->ctrl), or a packet waiting for resolution. Consumes m.
 */
void egw_ip_ctrl_input(struct rte_mbuf *m);

/** Control path: timers (states, retries, aging), every 100 ms.
 *  @return 0: timers are not work that should keep the control lcore polling. */
unsigned int egw_ip_service(void);

/** Control-path counters, name/value pairs. @return the number written (<= max). */
unsigned int egw_ip_ctrl_counters(const char **names, uint64_t *values, unsigned int max);

/** Table occupancy and memory (the FIBs' as measured on the heap when they
 *  were made), for show and the docs. */
struct egw_ip_mem {
	unsigned int routes4, routes6, nh, neigh;
	size_t fib4_bytes, fib6_bytes, nh_bytes;
	bool fib6_avx512; /**< the IPv6 FIB's lookup is DPDK's AVX-512 one */
	/** IPv4 lookup: 0 rte_fib_lookup_bulk() alone, nothing prefetched (the
	 *  table's layout not confirmed), 1 the first level prefetched, 2 both
	 *  levels prefetched and the first-level entries that are next hops
	 *  read in place (the destinations that take a tbl8 group looked up
	 *  by rte_fib_lookup_bulk(), last) */
	unsigned int fib4_prefetch;
};
void egw_ip_mem(struct egw_ip_mem *m);

/* --- data path --- */

struct egw_ip_ctx;

/** Create the data-path context idx (< nb_ctx); pool for ICMP and fragments. */
struct egw_ip_ctx *egw_ip_ctx_create(unsigned int idx, struct rte_mempool *pool);
/** Free a context: after egw_ip_fini() (held packets may be fragments made
 *  from its pools). */
void egw_ip_ctx_free(struct egw_ip_ctx *c);

/** Per-context data-path counters (other than drops). */
struct egw_ip_ctx_stats {
	uint64_t forwarded;
	uint64_t echo_replies;
	uint64_t icmp_errors;
	uint64_t icmp_ratelimited;
	uint64_t fragments; /**< fragments made (IPv4) */
	uint64_t local;     /**< to edgegw, handed to the caller (exception path) */
	uint64_t punted;    /**< waiting for resolution, to the control path */
	uint64_t nd;        /**< ND frames to the control path */
};
/** Counters of one context (relaxed loads: another thread may read them). */
void egw_ip_ctx_stats(const struct egw_ip_ctx *c, struct egw_ip_ctx_stats *s);

/** Flags of egw_ip_fwd_burst(). */
#define EGW_IP_F_LOCAL_ORIGIN 0x1 /**< made by edgegw (ESP outer packets): TTL kept */
/** from a subscriber: packets to edgegw other than ICMP echo never reach the
 *  exception path (the host's stack), they go to res->local */
#define EGW_IP_F_NO_EXCEPTION 0x2
/** egw_ip_prefetch_burst() ran on these frames a burst earlier: no
 *  prefetch pass of their own */
#define EGW_IP_F_PREFETCHED 0x4

/**
 * Result of a data-path call. The caller zeroes it once; each call fills the
 * arrays and counts; the caller takes the frames out and zeroes the counts
 * (everything before `out`) for the next call. Dropped frames are freed by
 * the library, counted in drop[].
 */
struct egw_ip_res {
	uint16_t n_out;   /**< routed, MAC header rewritten: transmit on out_port */
	uint16_t n_sess;  /**< routed to subscribers (pppoe, subscriber routes), TTL decremented */
	uint16_t n_local; /**< to edgegw, not answered here (exception path) */
	uint16_t n_ctrl;  /**< for egw_ip_ctrl_input(): waiting for resolution, ND */
	uint16_t n_reply; /**< ICMP made (echo replies, errors): back where the packet came from */
	uint32_t created; /**< frames made beyond one per input (fragments, ICMP errors) */
	uint32_t n_drop;  /**< frames dropped: the sum of drop[] */
	uint32_t drop[EGW_IP_DROP_MAX];
	struct rte_mbuf *out[EGW_IP_MAX_OUT];
	uint16_t out_port[EGW_IP_MAX_OUT];
	struct rte_mbuf *sess[EGW_IP_MAX_BURST];
	/** the session key of each sess[] frame (EGW_IP_SESSION_NONE: in a pppoe
	 *  route, no session has the address) */
	uint32_t sess_key[EGW_IP_MAX_BURST];
	struct rte_mbuf *local[EGW_IP_MAX_BURST];
	struct rte_mbuf *ctrl[EGW_IP_MAX_BURST];
	struct rte_mbuf *reply[EGW_IP_MAX_BURST];
};

/**
 * Data path: route a burst of IPv4 (v6 false) or IPv6 Ethernet frames
 * received on port (classified, l2_len set, at most EGW_IP_MAX_BURST).
 * One bulk FIB lookup, then per packet one load of the next hop.
 * ICMP errors and echo replies (in res->reply) carry the received MAC
 * header with the addresses swapped: they go back out of port.
 */
void egw_ip_fwd_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n,
		      bool v6, unsigned int flags, struct egw_ip_res *res);

/**
 * Data path: prefetch the IPv4 FIB lines of frames not classified yet
 * (Ethernet, untagged or with one or two VLAN tags; other frames are
 * skipped), to be routed a burst later. With a large table the first-level
 * line of almost every destination is a cache miss: a caller that holds a
 * burst while it processes the one before (the gateway does, per RX queue)
 * gives each miss a whole burst to arrive, where egw_ip_fwd_burst()'s own
 * prefetch pass has only its header checks. Then pass EGW_IP_F_PREFETCHED.
 * Reads the first line of each frame; never changes a result.
 */
void egw_ip_prefetch_burst(struct rte_mbuf *const pkts[], uint16_t n);

/**
 * Data path: the session key of the route an address takes
 * (EGW_IP_SESSION_NONE: none, or not a session route); one FIB lookup, no
 * context (any thread that is a QSBR reader). addr: 4 bytes (AF_INET) or 16.
 */
uint32_t egw_ip_session_of(int family, const uint8_t *addr);

/**
 * Data path: the session key of each frame's destination, for a caller that
 * does not route (no TTL, no next hop): a bulk FIB lookup per family, IPv4
 * and IPv6 frames (classified by lib/eth, l2_len set) mixed. keys[i] is
 * EGW_IP_SESSION_NONE when the destination has no session route or the
 * frame is not an IP packet (of its ethertype's version) with its header in
 * the first segment. At most EGW_IP_MAX_BURST frames.
 */
void egw_ip_session_lookup(struct egw_ip_ctx *c, struct rte_mbuf *pkts[], uint16_t n,
			   uint32_t keys[]);

/**
 * Data path: the TTL / hop limit step of forwarding, for packets another
 * stage forwards without egw_ip_fwd_burst() (into an ESP tunnel: the packet
 * is forwarded, so its own TTL goes down by one, RFC 1812 5.3.1, before it
 * is encapsulated). IPv4 and IPv6 Ethernet frames (classified by lib/eth,
 * l2_len set, headers in the first segment) received on port; a version
 * that is not the ethertype's is dropped as bad_header. A packet with TTL
 * or hop limit 0 or 1 is dropped as ttl_exceeded, with an ICMP time exceeded in res->reply
 * (the rules and rate limit of egw_ip_fwd_burst()); the others get it
 * decremented (IPv4 with the RFC 1624 header checksum update) and stay:
 * kept[j] is the index in pkts[] of the j-th packet kept.
 * @return the number kept.
 */
uint16_t egw_ip_ttl_burst(struct egw_ip_ctx *c, uint16_t port, struct rte_mbuf *pkts[], uint16_t n,
			  uint16_t kept[], struct egw_ip_res *res);

/**
 * Data path: an ICMP or ICMPv6 error another stage made (lib/pppoe's and
 * lib/esp's too-big) leaves by port: its source becomes edgegw's address on
 * that interface (the frame's VLAN's, else the port's first; RFC 1812
 * 4.3.2.4), with the IPv4 header checksum or the ICMPv6 checksum updated
 * (RFC 1624). m is an Ethernet frame, l2_len set, headers in the first
 * segment.
 * @return true if the source is now the interface's; false (m unchanged):
 *   the port has no address of the family, or m is no ICMP error.
 */
bool egw_ip_icmp_set_source(struct rte_mbuf *m, uint16_t port);

/** RFC 1624 incremental update of a 16-bit one's complement checksum (network order)
 *  when a 16-bit field changes from old to new (all network order). */
static inline uint16_t
egw_ip_cksum_adjust(uint16_t cksum, uint16_t old, uint16_t new_)
{
	/* HC' = ~(~HC + ~m + m') (RFC 1624 eqn. 3) */
	uint32_t s = (uint16_t)~cksum + (uint32_t)(uint16_t)~old + new_;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

#ifdef __cplusplus
}
#endif

#endif /* EGW_IP_H */
