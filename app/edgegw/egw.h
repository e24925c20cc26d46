/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * edgegw application state shared by the app's files (not a library API).
 */
#ifndef EGW_APP_H
#define EGW_APP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>
#include <rte_ring.h>

#include "egw_esp.h"
#include "egw_eth.h"
#include "egw_ip.h"
#include "egw_pppoe.h"
#include "options.h"

/** Largest RX burst (IPsec-MB's IMB_MAX_BURST_SIZE is 128 too). */
#define EGW_MAX_BURST 128
/** Most RX queues one worker polls. */
#define EGW_MAX_WORKER_RXQ 64
/** Most RX queues per port. */
#define EGW_MAX_RXQ 16

enum egw_drop {
#define EGW_DROP(e, n, d) EGW_DROP_##e,
#include "drop.def"
#undef EGW_DROP
	EGW_DROP_MAX
};

/** lib/esp drop reason r is application reason EGW_DROP_ESP_FIRST + r: drop.def
 *  lists the library's reasons last, in its order (stage_esp.c checks each). */
#define EGW_DROP_ESP_FIRST (EGW_DROP_MAX - EGW_ESP_DROP_MAX)
/** lib/pppoe drop reason r is application reason EGW_DROP_PPPOE_FIRST + r: its
 *  block comes right before the ESP block (stage_pppoe.c checks each). */
#define EGW_DROP_PPPOE_FIRST (EGW_DROP_ESP_FIRST - EGW_PPPOE_DROP_MAX)
/** lib/ip drop reason r is application reason EGW_DROP_IP_FIRST + r: its block
 *  comes right before the PPPoE block (stage_ip.c checks each). */
#define EGW_DROP_IP_FIRST (EGW_DROP_PPPOE_FIRST - EGW_IP_DROP_MAX)

extern const char *const egw_drop_names[EGW_DROP_MAX];

/*
 * Counters are written by exactly one lcore and read by others (stats,
 * telemetry). Writers use EGW_CNT_ADD, readers EGW_CNT_READ: relaxed atomic
 * stores and loads, which compile to plain moves on x86 but keep the
 * cross-thread access defined. No counter is ever written by two lcores.
 */
#define EGW_CNT_ADD(c, v) __atomic_store_n(&(c), (c) + (v), __ATOMIC_RELAXED)
#define EGW_CNT_READ(c) __atomic_load_n(&(c), __ATOMIC_RELAXED)

/**
 * Fate of every frame received on one (port, queue); owned by its worker.
 * rx + created = tx + delivered + queued + sum(drop).
 */
struct egw_qstats {
	uint64_t rx;
	uint64_t rx_bytes;
	/** frames made from the received ones beyond one each (ESP segments and
	 *  fragments) and frames made in reply (ICMP too-big) */
	uint64_t created;
	uint64_t tx; /**< frames of this queue transmitted (on any port) */
	uint64_t tx_bytes;
	uint64_t delivered; /**< handed to a local consumer */
	uint64_t queued;    /**< handed to the control lcore */
	uint64_t drop[EGW_DROP_MAX];
} __rte_cache_aligned;

/** Per-lcore counters not tied to an RX queue. */
struct egw_lstats {
	uint64_t loops;
	uint64_t busy_loops;
	uint64_t gen_tx; /**< frames a generator (replay) transmitted */
	uint64_t gen_tx_bytes;
	uint64_t gen_drop;                 /**< generated frames the TX queue refused */
	uint64_t gen_nombuf;               /**< generator bursts cut short by an empty mempool */
	uint64_t tx_out[RTE_MAX_ETHPORTS]; /**< frames sent per egress port */
	/** frames the control path built (ctrl_tx_ring) that this worker sent;
	 *  not in tx_out, which counts the forwarded frames of the queues */
	uint64_t ctrl_tx;
	uint64_t ctrl_tx_drop; /**< of those, refused by the TX queue (freed) */
} __rte_cache_aligned;

enum egw_port_role {
	EGW_ROLE_NONE = 0,
	EGW_ROLE_ACCESS,
	EGW_ROLE_UPLINK,
	EGW_ROLE_LAN, /**< plain IP hosts (a LAN, IPoE): routed, and ESP's protected side */
};

const char *egw_role_name(enum egw_port_role r);

/* Display baseline for "show port stats" rates and "clear port stats". */
struct egw_port_view {
	uint64_t tsc;
	struct rte_eth_stats last;  /**< at the previous show, for rates */
	struct rte_eth_stats zero;  /**< at the last clear */
	struct egw_qstats fwd_zero; /**< sum over queues at the last clear */
};

struct egw_port {
	bool used;
	uint16_t id;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	uint16_t peer; /**< io/mac forwarding peer */
	int socket;
	enum egw_port_role role;
	struct egw_eth_port eth; /**< classifier context (MAC) */
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[32];
	uint16_t rxq_lcore[EGW_MAX_RXQ];
	/** worker (index) that polls RX queue 0: it sends the frames the
	 *  control path builds for this port, so they leave in the order made */
	uint16_t ctrl_tx_worker;
	struct egw_qstats *qstats; /**< [nb_rxq], each owned by one worker */
	struct egw_port_view view;
};

struct egw_rxq {
	uint16_t port;
	uint16_t queue;
};

/** A received burst held for its queue's next poll (engines with a
 *  prefetch step, egw_fwd_engine.prefetch). */
struct egw_rxhold {
	uint16_t n;
	struct rte_mbuf *pkts[EGW_MAX_BURST];
};

struct egw_txbuf {
	uint16_t n;
	uint64_t bytes;
	struct rte_mbuf *pkts[EGW_MAX_BURST];
};

/**
 * Rings from a worker to the control path, read in this order, a burst of
 * each per round: a flood of one kind never delays the kinds above it by
 * more than a round.
 */
enum egw_ctrl_prio {
	EGW_CTRL_UP = 0, /**< PPP control of bound sessions (keepalive) */
	EGW_CTRL_OTHER,  /**< ARP, ND and the rest */
	EGW_CTRL_START,  /**< PPP control of sessions negotiating */
	EGW_CTRL_DISC,   /**< PPPoE discovery */
	EGW_CTRL_PRIO_MAX,
};

/** Per-burst scratch of a worker: where each frame of the burst goes. */
struct egw_burst {
	struct egw_worker *w;
	uint16_t port;  /**< ingress port */
	uint16_t queue; /**< ingress queue */
	struct egw_qstats *qs;
	uint64_t tx_ports; /**< bitmask of ports with frames in w->tx[] */
	uint16_t nb_ctrl[EGW_CTRL_PRIO_MAX];
	/** set by the PPPoE stage while the frames it hands on came out of a
	 *  session (the only IP an access port may carry) */
	uint8_t from_session;
	/** set by the ESP stage while the frames it hands on are ESP packets
	 *  it made (locally originated: no TTL decrement) */
	uint8_t local_origin;
	/** set by the ESP stage while the frames it hands on came out of an
	 *  inbound SA (ICMP errors about them go back through the tunnel with
	 *  the source the SPD allows) */
	uint8_t from_tunnel;
	/** set by the worker while the frames are a held burst whose FIB lines
	 *  the engine prefetched when it was received (a hint: frames a stage
	 *  made or changed since were not) */
	uint8_t prefetched;
	uint32_t delivered;
	uint32_t created; /**< see egw_qstats.created */
	uint32_t drop[EGW_DROP_MAX];
	struct rte_mbuf *ctrl[EGW_CTRL_PRIO_MAX][EGW_MAX_BURST];
};

enum egw_worker_state {
	EGW_W_IDLE = 0,
	EGW_W_RUNNING,
};

struct egw_worker {
	unsigned int lcore;
	uint16_t idx; /**< also its TX queue on every port */
	uint16_t nb_rxq;
	struct egw_rxq rxq[EGW_MAX_WORKER_RXQ];
	/** per rxq: the burst received at its last poll, processed at the next */
	struct egw_rxhold hold[EGW_MAX_WORKER_RXQ];
	/** SPSC rings to the control lcore, one per enum egw_ctrl_prio */
	struct rte_ring *ctrl_ring[EGW_CTRL_PRIO_MAX];
	/** SPSC ring from the control path: frames it built (PPPoE discovery,
	 *  PPP control), m->port the egress port; the producer holds ctrl_lock */
	struct rte_ring *ctrl_tx_ring;
	int state; /**< enum egw_worker_state, written by the worker */
	struct egw_lstats stats;
	struct egw_burst burst;
	struct egw_txbuf tx[RTE_MAX_ETHPORTS];
	void *engine_priv;                    /**< per-worker state of the running engine */
	struct egw_esp_stage_worker *esp;     /**< ESP context and scratch (stage_esp.c) */
	struct egw_pppoe_stage_worker *pppoe; /**< PPPoE context and scratch (stage_pppoe.c) */
	struct egw_ip_stage_worker *ip;       /**< IP context and scratch (stage_ip.c) */
} __rte_cache_aligned;

/** Control lcore: drains the workers' rings. Written under ctrl_lock (by the
 *  control lcore, or by a command on the main lcore). */
struct egw_control_stats {
	uint64_t rx;
	uint64_t by_class[EGW_ETH_CLS_MAX];
	uint64_t drop[EGW_DROP_MAX];
	/** frames the control path built and handed to a worker's
	 *  ctrl_tx_ring (or sent itself once the workers stopped) */
	uint64_t tx;
	/** frames it built that were freed unsent: ring full, no such port,
	 *  TX queue full after the workers stopped */
	uint64_t tx_drop;
	/** polls that read no input: the rings to a worker were nearly full */
	uint64_t tx_backpressure;
	/** sleeps ended by a worker (egw_control_wake()), not by the timeout;
	 *  written by the control thread only */
	uint64_t woken;
} __rte_cache_aligned;

/** A control-path handler for one frame class; consumes (or frees) m. */
typedef void (*egw_ctrl_fn)(struct rte_mbuf *m);

struct egw_app {
	struct egw_opts opts;
	uint16_t nb_ports;
	struct egw_port ports[RTE_MAX_ETHPORTS];
	uint16_t nb_workers;
	struct egw_worker *workers[RTE_MAX_LCORE];
	unsigned int control_lcore; /**< main lcore unless --control-lcore */
	struct rte_mempool *pool[RTE_MAX_NUMA_NODES];
	const struct egw_fwd_engine *engine;
	int fwd_running; /**< written by main, read by workers */
	int quit;        /**< set by signals, quit, idle-exit */
	int workers_quit;
	uint64_t fwd_start_tsc;
	struct egw_control_stats ctrl;
	egw_ctrl_fn ctrl_handler[EGW_ETH_CLS_MAX];
	struct rte_rcu_qsbr *qsbr; /**< workers report quiescent once per loop */
	/* Serialises the control path's table owners (rxtokens consumers)
	 * between the control lcore and commands on the main lcore; never
	 * taken by workers. Uncontended when control runs on the main lcore. */
	rte_spinlock_t ctrl_lock;
	bool launched; /**< worker (and control) lcores launched */
	bool esp;      /**< lib/esp initialised (stage_esp.c); written under ctrl_lock */
	bool pppoe;    /**< lib/pppoe initialised (stage_pppoe.c); written under ctrl_lock */
	bool ip;       /**< lib/ip initialised (stage_ip.c); written under ctrl_lock */
	bool radius;   /**< RADIUS AAA initialised (stage_radius.c); written under ctrl_lock */
	bool pdump;
};

extern struct egw_app egw;

/* app.c */
/** The mbuf pool of NUMA socket s, else any (NULL before the ports are up). */
struct rte_mempool *egw_socket_pool(unsigned int s);
/**
 * Check that a library's drop reasons sit in drop.def at first.. in its
 * order (name(r) against egw_drop_names[first + r]). 0, or -EINVAL with a
 * message naming the first mismatch.
 */
int egw_drop_names_check(const char *lib, unsigned int first, unsigned int n,
			 const char *(*name)(unsigned int));
/** Sum the drops first..first+n-1 over every port and queue into out[n]. */
void egw_drops_sum(unsigned int first, unsigned int n, uint64_t *out);
/** Bring up lcore roles, ports, workers, control, telemetry, pdump. */
int egw_app_init(void);
/** Stop forwarding, join the lcores, drain the control rings. */
void egw_app_stop(void);
/** egw_app_stop(), then close the ports. */
void egw_app_fini(void);

/* cli_xdp.c: net_af_xdp ports with edgegw's XDP steering program (lib/xdp) */
struct egw_rxtok_consumer_conf;
int egw_xdp_port_preflight(uint16_t pid, const char *driver);
int egw_xdp_port_started(uint16_t pid);
void egw_xdp_port_stopped(uint16_t pid);
/* The hooks return 0 or a negative errno with the map's message in err
 * (nothing changed in the maps); the caller undoes its own change. */
void egw_xdp_hook_role(uint16_t port, enum egw_port_role role);
int egw_xdp_hook_addr(uint16_t port, uint16_t vlan, const struct egw_ip_addr *a, bool add,
		      char *err, size_t errlen);
int egw_xdp_hook_route(const struct egw_ip_addr *pfx, uint8_t len, bool add, char *err,
		       size_t errlen);
int egw_xdp_hook_batch(bool begin);
int egw_xdp_hook_esp_sa(const struct egw_esp_sa_conf *c, bool add, char *err, size_t errlen);
int egw_xdp_hook_pool(const char *prefix, bool add, char *err, size_t errlen);
/* A bound session's /32 or /64 (route_cb(), stage_pppoe.c): steered while
 * the session lasts when no steered pool holds it; -E2BIG and others with
 * err set when the map refuses it (the session is then not bound). */
int egw_xdp_hook_session(uint16_t sid, int family, const uint8_t *a, uint8_t len, bool add,
			 char *err, size_t errlen);
int egw_xdp_hook_rxtok(const char *name, const struct egw_rxtok_consumer_conf *c, bool add,
		       char *err, size_t errlen);

/* ports.c */
int egw_ports_init(void);
int egw_port_rxq_set_pool(uint16_t port, const uint16_t *queues, uint16_t n, struct rte_mempool *mp,
			  char *err, size_t errlen);
void egw_ports_close(void);
int egw_port_parse(const char *s, uint16_t *port, char *err, size_t errlen);

/* worker.c */
int egw_workers_init(void);
int egw_workers_launch(void);
void egw_workers_join(void);
int egw_fwd_start(char *err, size_t errlen);
int egw_fwd_stop(void);
void egw_burst_flush(struct egw_burst *b);
void egw_txbuf_flush(struct egw_burst *b, uint16_t port);

/* worker.c, after egw_workers_join(): send what the control path left in
 * the workers' ctrl_tx_rings, then free the rings (drain the control path
 * in between) */
void egw_workers_ctrl_tx_flush(void);
void egw_workers_free_rings(void);

/* control.c */
int egw_control_init(void);
unsigned int egw_control_poll(void);
/** Sleep after a poll that did work units of work (none if work != 0)
 *  until a worker wakes the control path, fd (-1: none) is readable, or
 *  the idle timeout; control thread only. @return fd is readable. */
bool egw_control_wait(unsigned int work, int fd);
/** Any lcore: tell a sleeping control path that input waits. */
void egw_control_wake(void);
void egw_control_set_handler(enum egw_eth_class cls, egw_ctrl_fn fn);
void egw_control_drain(void);
int egw_control_launch(void);
/**
 * Transmit a frame the control path built (egw_pppoe_tx_fn): onto the
 * ctrl_tx_ring of the worker that sends for that port, or, once the workers
 * stopped (!egw.launched), straight out of TX queue 0. Consumes m. The caller
 * holds ctrl_lock, or the lcores have stopped.
 */
void egw_control_tx(uint16_t port, struct rte_mbuf *m, void *arg);

/* stats.c */
/** Write s as a JSON string (quotes, backslash and control characters escaped). */
void egw_json_str(FILE *f, const char *s);
void egw_qstats_sum(uint16_t port, struct egw_qstats *out);
uint64_t egw_total_rx(void);
void egw_show_port_stats(FILE *f, uint16_t port);
void egw_show_port_xstats(FILE *f, uint16_t port);
void egw_show_fwd_stats(FILE *f);
void egw_clear_port_stats(uint16_t port);
void egw_show_config(FILE *f);
int egw_stats_json(const char *path);
bool egw_stats_identity_ok(uint16_t port, const struct egw_qstats *s);
void egw_stats_print_final(FILE *f);

/* telemetry.c */
int egw_telemetry_init(void);

/* stage_rxtok.c */
int egw_rxtok_stage_init(void);

/* stage_esp.c */
int egw_esp_stage_init(void);
void egw_esp_stage_fini(void);
void egw_esp_stage_update(void);
/** An address of edgegw's was added or deleted: ESP to it is processed
 * (lib/esp's local addresses). */
void egw_esp_stage_local_addr(const struct egw_ip_addr *a, bool add);
/** Context of a worker (NULL without ESP); read under ctrl_lock. */
const struct egw_esp_ctx *egw_esp_stage_ctx(uint16_t worker);
void egw_esp_stage_show_config(FILE *f);
/** A direction's policy default as the command language spells it. */
const char *egw_esp_stage_default_name(enum egw_esp_dir dir);
void egw_esp_stage_json(FILE *f);
/**
 * Send frames made in reply to packets received on b->port (PPPoE's ICMP
 * too-big for a packet from the uplink) back out of b->port, through the
 * outbound SAs when a policy protects them: a sender reached through a
 * tunnel gets its reply through the tunnel, never in clear.
 */
void egw_esp_stage_reply(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n);

/* stage_pppoe.c */
/** Install the PPPoE session-frame stage; before egw_rxtok_stage_init(). */
void egw_pppoe_stage_install(void);
/**
 * Send frames made in reply to packets received on b->port (ESP's ICMP
 * too-big): to a subscriber of a bound PPPoE session on an access port they
 * go encapsulated for that session, otherwise out b->port as they are.
 */
void egw_pppoe_stage_reply(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n);
/**
 * Worker, each loop of the gateway engine, b->port/queue/qs one of its
 * access RX queues: frames lib/pppoe held for the handoff whose NCP opened
 * go on as decapsulated frames; flush (forwarding stops) drops them.
 * Returns whether it had frames (the caller flushes the burst then).
 */
bool egw_pppoe_stage_poll(struct egw_burst *b, bool flush);
/** lib/pppoe, its contexts, control handlers and the IPv4/IPv6 stage; after
 *  the rxtokens stage and the mbuf pools, before the ESP stage. */
int egw_pppoe_stage_init(void);
void egw_pppoe_stage_fini(void);
/** Close every PPPoE session (PADTs) at exit, before the final counters. */
void egw_pppoe_stage_shutdown(void);
/** A port's role changes (forwarding stopped): an access port is declared
 *  to lib/pppoe. 0 or -errno with a message in err. */
int egw_pppoe_stage_port_role(uint16_t port, enum egw_port_role role, char *err, size_t errlen);
/** Data-path PPPoE drops summed over every port and queue. */
void egw_pppoe_stage_drops(uint64_t drop[EGW_PPPOE_DROP_MAX]);
/** A session state as shown: "free", "negotiating", "bound", "closing". */
const char *egw_pppoe_state_name(enum egw_pppoe_sess_state s);
void egw_pppoe_stage_show_config(FILE *f);
void egw_pppoe_stage_json(FILE *f);

/**
 * Encapsulate routed packets (routes of type pppoe, TTL decremented) for
 * their subscribers' sessions; a packet no bound session has the address of
 * is dropped as ip_no_session; too big for the session: ICMP too-big back
 * through the ESP stage.
 */
void egw_pppoe_stage_encap(struct egw_burst *b, struct rte_mbuf **pkts, const uint32_t *sids,
			   uint16_t n);

/* stage_radius.c: RADIUS AAA of the PPPoE sessions (under ctrl_lock) */
struct egw_radius;
struct sockaddr_storage;
/** The client, lib/pppoe's AAA hooks; after the PPPoE stage. */
int egw_radius_stage_init(void);
/** At exit, after the sessions closed: their Stops sent and answered (bounded), then
 *  Accounting-Off. Takes ctrl_lock itself. */
void egw_radius_stage_shutdown(void);
void egw_radius_stage_fini(void);
/** Control path, every poll: sockets, retransmissions, timeouts, interim updates. */
unsigned int egw_radius_stage_service(void);
struct egw_radius *egw_radius_stage_client(void);
void egw_radius_stage_set_nas_id(const char *s);
void egw_radius_stage_set_nas_ip(const struct sockaddr_storage *a);
void egw_radius_stage_set_interim(unsigned int s);
int egw_radius_stage_dae_listen(const struct sockaddr_storage *a);
/** Every counter of the client, the DAE listener and the AAA glue. */
void egw_radius_stage_counters(void (*fn)(const char *name, uint64_t v, void *arg), void *arg);
/** A session's RADIUS line for "show pppoe sessions detail"; false if it has none. */
bool egw_radius_stage_session_str(uint16_t sid, char *buf, size_t len);
/** Configuration (text for show, or JSON members). */
void egw_radius_stage_config(FILE *f, bool json);
/** cli_radius.c: --stats-json's "radius" object (takes ctrl_lock). */
void egw_radius_stage_json(FILE *f);

/* stage_ip.c */
/** The routed IP stage: the end of the IPv4 and IPv6 chains (fwd_gateway.c). */
void egw_ip_stage_route(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, bool v6);
/* Forwarded packets about to enter an ESP tunnel: TTL / hop limit checked
 * and decremented (routed mode; ICMP time exceeded sent back); kept[j] is
 * the index of the j-th packet kept. Returns how many. */
uint16_t egw_ip_stage_ttl(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n, uint16_t *kept);
/* ICMP errors lib/pppoe or lib/esp made about a packet that arrived in clear
 * on a routed port leave with that interface's address as their source
 * (RFC 1812 4.3.2.4); a subscriber's and a tunnel's keep theirs. */
void egw_ip_stage_icmp_source(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n);
/* The PPPoE session id of each frame's destination (0: none), from the FIB
 * without routing (xconnect's downstream, replies to subscribers); IPv4 and
 * IPv6 mixed, at most EGW_MAX_BURST frames. */
void egw_ip_stage_session_lookup(struct egw_burst *b, struct rte_mbuf **pkts, uint16_t n,
				 uint32_t *sids);
/** lib/ip, its contexts and the ARP/ND handlers; after the ports and pools. */
int egw_ip_stage_init(void);
void egw_ip_stage_fini(void);
/** A port's role changes: 0 or -errno with a message in err (an access port
 *  cannot have addresses or routes). */
int egw_ip_stage_port_role(uint16_t port, enum egw_port_role role, char *err, size_t errlen);
/** `ip port <N> mtu <bytes>` (0: the device's): 0 or -errno with a message. */
int egw_ip_stage_port_mtu(uint16_t port, uint16_t mtu, char *err, size_t errlen);
/** The IP MTU routing uses on a port. */
uint16_t egw_ip_stage_port_mtu_get(uint16_t port);
void egw_ip_stage_drops(uint64_t drop[EGW_IP_DROP_MAX]);
void egw_ip_stage_ctx_stats(struct egw_ip_ctx_stats *s);
void egw_ip_stage_show_config(FILE *f);
void egw_ip_stage_json(FILE *f);
/** Print an address (inet_ntop). */
void egw_ip_addr_str(const struct egw_ip_addr *a, char *buf, size_t len);
/** A route of type pppoe for a subscriber pool or address (cli_ip.c): 0, or
 *  -errno with a message in err. */
int egw_ip_cli_session_route(const char *prefix, bool add, char *err, size_t errlen);
/* exception.c: the kernel exception path of a port (a TUN; under ctrl_lock) */
int egw_exception_add(uint16_t port, const char *name, char *err, size_t errlen);
int egw_exception_del(uint16_t port, char *err, size_t errlen);
/** An address of the port was added or deleted: the host's side follows. */
void egw_exception_addr(uint16_t port, const struct egw_ip_addr *a, uint8_t len, bool add);
/** lib/ip's local callback (egw_ip_local_fn). */
void egw_exception_local(uint16_t port, struct rte_mbuf *m, void *arg);
/** Control path: route what the host's stack sent. @return frames read. */
unsigned int egw_exception_poll(void);
void egw_exception_show(FILE *f);
void egw_exception_json(FILE *f);
void egw_exception_fini(void);
/** True while the gateway routes (not `set fwd gateway xconnect`). */
bool egw_gateway_routed(void);

/* cli.c */
int egw_cli_run_file(const char *path);
int egw_cli_run_line(const char *line);
int egw_cli_interactive_init(void);
int egw_cli_interactive_poll(int timeout_ms);
void egw_cli_interactive_exit(void);

#endif /* EGW_APP_H */
