/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PPP control internals (ppp.c, fsm.c, lcp.c, auth.c, ipcp.c, ipv6cp.c):
 * the RFC 1661 option-negotiation automaton, the per-session PPP state and
 * the calls between the protocol files. Control path only.
 */
#ifndef PPPOE_PPP_H
#define PPPOE_PPP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_timer.h>

#include "pppoe_private.h"

/* ---------------- packets (RFC 1661 section 5) ---------------- */

#define PPP_CODE_CONF_REQ 1
#define PPP_CODE_CONF_ACK 2
#define PPP_CODE_CONF_NAK 3
#define PPP_CODE_CONF_REJ 4
#define PPP_CODE_TERM_REQ 5
#define PPP_CODE_TERM_ACK 6
#define PPP_CODE_CODE_REJ 7
#define PPP_CODE_PROTO_REJ 8 /* LCP only, as are the next three */
#define PPP_CODE_ECHO_REQ 9
#define PPP_CODE_ECHO_REP 10
#define PPP_CODE_DISC_REQ 11

/* Code, Identifier, Length */
#define PPP_HDR_LEN 4
/* Largest PPP packet the control path builds or answers (RFC 4638 jumbo MRU). */
#define PPP_PKT_MAX EGW_PPPOE_MRU_MAX

/* MRU without RFC 4638: 1500 - PPPoE header (6) - protocol field (2) */
#define PPP_MRU_PPPOE 1492
/* RFC 1661 default MRU when the peer does not negotiate one */
#define PPP_MRU_DEFAULT 1500
/*
 * Smallest peer MRU we accept: 576, the datagram size every IPv4 host must
 * take (RFC 791). A smaller request is Nak'd with 576: a PPPoE client on
 * Ethernet has no reason to ask for less, and fragmenting downstream traffic
 * into tiny pieces is not something the fast path does.
 */
#define PPP_MRU_MIN 576

/* ---------------- the automaton (fsm.c) ---------------- */

/* RFC 1661 4.2 states, in the RFC's numbering */
enum ppp_state {
	PPP_ST_INITIAL = 0,
	PPP_ST_STARTING,
	PPP_ST_CLOSED,
	PPP_ST_STOPPED,
	PPP_ST_CLOSING,
	PPP_ST_STOPPING,
	PPP_ST_REQ_SENT,
	PPP_ST_ACK_RCVD,
	PPP_ST_ACK_SENT,
	PPP_ST_OPENED,
	PPP_ST_MAX
};

/* RFC 1661 4.3 events */
enum ppp_event {
	PPP_EV_UP = 0,
	PPP_EV_DOWN,
	PPP_EV_OPEN,
	PPP_EV_CLOSE,
	PPP_EV_TO_P,  /* TO+ */
	PPP_EV_TO_M,  /* TO- */
	PPP_EV_RCR_P, /* RCR+ */
	PPP_EV_RCR_M, /* RCR- */
	PPP_EV_RCA,
	PPP_EV_RCN,
	PPP_EV_RTR,
	PPP_EV_RTA,
	PPP_EV_RUC,
	PPP_EV_RXJ_P, /* RXJ+ */
	PPP_EV_RXJ_M, /* RXJ- */
	PPP_EV_RXR,
	PPP_EV_MAX
};

/* RFC 1661 4.4 actions, as bits (ppp_fsm::last_act records what an event did) */
#define PPP_A_TLU (1u << 0)
#define PPP_A_TLD (1u << 1)
#define PPP_A_TLS (1u << 2)
#define PPP_A_TLF (1u << 3)
#define PPP_A_IRC (1u << 4)
#define PPP_A_ZRC (1u << 5)
#define PPP_A_SCR (1u << 6)
#define PPP_A_SCA (1u << 7)
#define PPP_A_SCN (1u << 8)
#define PPP_A_STR (1u << 9)
#define PPP_A_STA (1u << 10)
#define PPP_A_SCJ (1u << 11)
#define PPP_A_SER (1u << 12)

/* RFC 1661 4.6 counters and timer */
#define PPP_MAX_TERMINATE 2
#define PPP_MAX_CONFIGURE 10
#define PPP_MAX_FAILURE 5

struct ppp_fsm;
struct ppp_sess;

/*
 * What a protocol (LCP, IPCP, IPv6CP) plugs into the automaton. Option
 * lists handed to these callbacks have been checked: every option is at
 * least 2 bytes and lies inside the packet.
 */
struct ppp_fsm_ops {
	const char *name;
	uint16_t proto;
	/* counters (enum pppoe_cnt) */
	unsigned int cnt_malformed; /* length field, option lengths */
	unsigned int cnt_bad_id;    /* Ack/Nak/Reject not for our last request */
	unsigned int cnt_discard;   /* well-formed but not acceptable in this state */
	unsigned int cnt_opened;
	unsigned int cnt_repeated; /* option types repeated in a Configure-Request */
	/* irc for a Configure-Request: reset the options we ask for */
	void (*reset)(struct ppp_fsm *f);
	/* our Configure-Request options; returns their length (<= room) */
	uint16_t (*build_req)(struct ppp_fsm *f, uint8_t *opt, uint16_t room);
	/*
	 * A Configure-Request from the peer: write the Nak or Reject options
	 * into out (room: the request's length plus PPP_FSM_NAK_EXTRA) and
	 * return PPP_CODE_CONF_ACK/NAK/REJ; out_len set for NAK/REJ. Values are
	 * committed only when the result is ACK. reject_naks: Max-Failure
	 * reached, options that would be Nak'd are rejected (RFC 1661 4.6).
	 */
	uint8_t (*rx_req)(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, uint8_t *out,
			  uint16_t *out_len, bool reject_naks);
	/* Configure-Ack of our request (already compared with what we sent) */
	void (*rx_ack)(struct ppp_fsm *f);
	/* Configure-Nak (rej false) or Configure-Reject: adjust; -1: bad, discard */
	int (*rx_nak)(struct ppp_fsm *f, const uint8_t *opt, uint16_t len, bool rej);
	/* codes above 7 (LCP): true if known, false for a Code-Reject */
	bool (*rx_ext)(struct ppp_fsm *f, uint8_t code, uint8_t id, const uint8_t *data,
		       uint16_t len);
	/* ser (Echo-Reply), for the RXR event in Opened */
	void (*ser)(struct ppp_fsm *f);
	/* after a Terminate-Request went through the table (LCP: end the session) */
	void (*rtr)(struct ppp_fsm *f);
	void (*tlu)(struct ppp_fsm *f);
	void (*tld)(struct ppp_fsm *f);
	void (*tls)(struct ppp_fsm *f); /* NULL: nothing to start */
	void (*tlf)(struct ppp_fsm *f);
};

/* a Nak may add options the peer did not ask for (IPCP's IP-Address) */
#define PPP_FSM_NAK_EXTRA 32

struct ppp_fsm {
	struct ppp_sess *ps;
	const struct ppp_fsm_ops *ops;
	enum ppp_state state;
	uint8_t id;            /* identifier of the next packet we originate */
	uint8_t req_id;        /* identifier of our last Configure-Request */
	bool req_answered;     /* an Ack/Nak/Reject for req_id was taken */
	unsigned int restart;  /* Restart counter */
	unsigned int nak_sent; /* Naks sent since our last Ack (Max-Failure) */
	unsigned int nak_rx;   /* Naks/Rejects received since the last Ack */
	unsigned int max_configure, max_terminate, max_failure;
	uint32_t last_act; /* PPP_A_* done by the last event (tests, show) */
	struct rte_timer timer;
	/* the packet being handled: answered by sca/scn/sta/scj/ser */
	uint8_t rx_id;
	const uint8_t *rx_pkt; /* whole packet (for a Code-Reject) */
	uint16_t rx_pkt_len;
	const uint8_t *reply; /* sca: the request's options; scn: Nak/Reject options */
	uint16_t reply_len;
	uint8_t reply_code; /* Ack, Nak or Reject */
	/* our last Configure-Request's options, to check a Configure-Ack */
	uint16_t req_len;
	uint8_t req[64];
};

/** Set up an automaton in state Initial (timer initialised). */
void ppp_fsm_init(struct ppp_fsm *f, struct ppp_sess *ps, const struct ppp_fsm_ops *ops);
/** Feed one event through the RFC 1661 4.1 table. */
void ppp_fsm_event(struct ppp_fsm *f, enum ppp_event ev);
/** Up, Down, Open, Close. */
void ppp_fsm_up(struct ppp_fsm *f);
void ppp_fsm_down(struct ppp_fsm *f);
void ppp_fsm_open(struct ppp_fsm *f);
void ppp_fsm_close(struct ppp_fsm *f);
/** Restart-timer expiry: TO+ or TO- (the timer's callback calls this). */
void ppp_fsm_timeout(struct ppp_fsm *f);
/** A packet of the automaton's protocol: p at the Code field, len bytes present. */
void ppp_fsm_input(struct ppp_fsm *f, const uint8_t *p, uint16_t len);
/** Stop the restart timer. */
void ppp_fsm_stop_timer(struct ppp_fsm *f);
/** "initial", "req-sent", ... */
const char *ppp_state_name(enum ppp_state st);

/**
 * Check an option list: every option has a length of at least 2 and ends
 * inside the list. @return true if well-formed.
 */
bool ppp_opts_valid(const uint8_t *opt, uint16_t len);

/** Option types met so far in one Configure-Request (zero it per request). */
struct ppp_opt_seen {
	uint64_t bits[4];
};

/**
 * An option of type came in the Configure-Request being read: true (and
 * counted as the protocol's cnt_repeated) if one of the same type came
 * before it in the same request. The rx_req callbacks reject such repeats
 * (see the comment in fsm.c).
 */
bool ppp_opt_repeated(struct ppp_fsm *f, struct ppp_opt_seen *seen, uint8_t type);

/* ---------------- per-session state (ppp.c) ---------------- */

enum ppp_phase {
	PPP_PHASE_DEAD = 0,
	PPP_PHASE_ESTABLISH,
	PPP_PHASE_AUTH,
	PPP_PHASE_NETWORK,
	PPP_PHASE_TERMINATE,
};

struct ppp_sess {
	struct pppoe_sess *s;
	enum ppp_phase phase;
	bool stopped;                     /* the session is closing: no frame, no timer any more */
	enum egw_pppoe_cause close_cause; /* set before closing LCP on purpose */
	enum egw_pppoe_auth auth;         /* method of this session (configuration at start) */
	struct ppp_fsm lcp, ipcp, ipv6cp;

	/* LCP (lcp.c) */
	uint16_t mru_max; /* largest MRU PPPoE allows: 1492 or PPP-Max-Payload */
	uint16_t our_mru; /* what we ask for */
	bool want_mru, want_magic, want_auth;
	uint32_t our_magic;
	uint32_t peer_magic; /* 0: not negotiated */
	uint16_t peer_mru;   /* 0: not negotiated */
	unsigned int loops;  /* Configure-Requests carrying our own magic */
	struct rte_timer echo_timer;
	struct rte_timer lcp_timer; /* the whole Establish phase (ppp.c) */
	unsigned int echo_missed;
	/* keepalive of the configuration at start: a later change applies to
	 * new sessions only (conf.c) */
	unsigned int echo_s, echo_max;

	/* authentication (auth.c) */
	struct rte_timer auth_timer; /* the whole phase */
	struct rte_timer chap_timer; /* Challenge retransmission */
	unsigned int chap_tries;
	uint8_t chap_id;
	uint8_t chap_chal[16];
	bool authenticated;
	char user[EGW_PPPOE_NAME_MAX + 1];
	rte_be32_t user_addr; /* the user's static address; 0 = from a pool */

	/* remote authentication and accounting (aaa.c) */
	uint64_t aaa_cookie; /* a remote answer is awaited for it; 0: none */
	uint8_t aaa_id;      /* the PAP/CHAP Identifier the answer goes to */
	bool aaa_seen;       /* the AAA hook saw the session: it hears of its end */
	bool aaa_up;         /* EGW_PPPOE_EV_UP reported */
	bool prefix_fixed;   /* prefix came from the authorisation: no pool holds it */
	uint8_t aaa_cred_len;
	uint8_t aaa_cred[EGW_PPPOE_NAME_MAX]; /* PAP password or CHAP response (fallback) */
	char aaa_user[EGW_PPPOE_NAME_MAX + 1];
	rte_be32_t dns[2];   /* from the authorisation; 0: the configuration's */
	uint8_t dns6[2][16]; /* from the authorisation: RDNSS in the RAs; :: none */
	char pool[48];       /* Framed-Pool: the IPv4 pool to take the address from */
	/* the named filter set (policy.c) it runs: the local user's, the
	 * authorisation's Filter-Id or a CoA's; "": none */
	char filter_set[EGW_PPPOE_NAME_MAX + 1];

	/* network phase (ppp.c) */
	struct rte_timer ncp_timer;

	/* IPCP (ipcp.c) */
	rte_be32_t addr;     /* the peer's address; 0 until one is chosen */
	bool addr_from_pool; /* release it to the pool when the session is freed */
	bool addr_acked;     /* the peer's request carried addr and was acked */
	bool want_addr;      /* our IP-Address option (not rejected) */
	bool ip4_bound;      /* pppoe_sess_bind(PPPOE_NCP_IP4) done */

	/* IPv6CP (ipv6cp.c) */
	uint8_t our_iid[8];
	uint8_t peer_iid[8];
	bool want_iid;
	bool has_prefix;
	bool ip6_bound;
	uint8_t prefix[8];
	struct rte_timer ra_timer;
	unsigned int ra_count;
	uint64_t ra_last_tsc;
};

/*
 * Deadlines of the phases, in milliseconds. RFC 1661 bounds none of them:
 * the Restart counter is re-initialised by every Configure-Ack, -Nak or
 * -Reject, so a peer that answers but never agrees (Acks our requests and
 * sends none of its own, Naks between Acks, or keeps sending requests we
 * cannot Ack) would keep a session negotiating for ever. 30 s each, the
 * same for the three phases: far more than a working client needs (a few
 * round trips), short enough that such sessions do not pile up.
 */
#define PPP_LCP_TIMEOUT_MS 30000  /* LCP must reach Opened within this of Establish */
#define PPP_AUTH_TIMEOUT_MS 30000 /* authentication must end within this */
#define PPP_NCP_TIMEOUT_MS 30000  /* an NCP must open within this of the network phase */

/*
 * Timing, in milliseconds. Variables rather than constants so that a test
 * can shorten them; the values are RFC 1661's and the documented defaults.
 */
struct ppp_timing {
	unsigned int restart_ms; /* RFC 1661 4.6 Restart timer: 3 s */
	unsigned int lcp_ms;     /* LCP must reach Opened within this of the Establish phase */
	unsigned int auth_ms;    /* authentication phase must end within this */
	unsigned int ncp_ms;     /* an NCP must open within this of the network phase */
	unsigned int ra_init_ms; /* between the initial unsolicited RAs (RFC 4861: <= 16 s) */
	unsigned int ra_ms;      /* between later unsolicited RAs (MaxRtrAdvInterval) */
	unsigned int ra_min_ms;  /* least time between two RAs (MIN_DELAY_BETWEEN_RAS) */
};
extern struct ppp_timing ppp_timing;

/* ppp.c */
/** Count one event of a counter given by index (fsm.c's per-protocol counters). */
void ppp_cnt_inc(unsigned int cnt);
/** Send a PPP packet: code, id, data; the Length field is set. 0 or -errno. */
int ppp_send(struct ppp_sess *ps, uint16_t proto, uint8_t code, uint8_t id, const void *data,
	     uint16_t len);
/** Send a PPP frame whose information field is data as is (IPv6). 0 or -errno. */
int ppp_send_raw(struct ppp_sess *ps, uint16_t proto, const void *data, uint16_t len);
/** Arm a one-shot timer of the session on the timer lcore (nothing once stopped). */
void ppp_timer_arm(struct ppp_sess *ps, struct rte_timer *t, unsigned int ms, rte_timer_cb_t cb,
		   void *arg);
/** LCP opened / authentication done: move to the next phase. */
void ppp_phase_auth(struct ppp_sess *ps);
void ppp_phase_network(struct ppp_sess *ps);
/** LCP left Opened: NCPs down, back to Establish (its deadline armed again). */
void ppp_phase_establish(struct ppp_sess *ps);
/** An NCP opened or finished: stop the NCP timer, or close if no NCP can open. */
void ppp_ncp_opened(struct ppp_sess *ps);
/** The NCPs' this-layer-finished action (IPCP and IPv6CP alike). */
void ppp_ncp_finished(struct ppp_fsm *f);
/** Largest PPP packet the peer takes (its MRU, capped by what PPPoE carries). */
uint16_t ppp_peer_mru(const struct ppp_sess *ps);

/* lcp.c */
extern const struct ppp_fsm_ops ppp_lcp_ops;
/** Keepalive: start (LCP opened) and stop. */
void ppp_lcp_echo_start(struct ppp_sess *ps);
void ppp_lcp_echo_stop(struct ppp_sess *ps);
/** Send a Protocol-Reject for a packet of protocol proto (info: after the protocol field). */
void ppp_lcp_proto_reject(struct ppp_sess *ps, uint16_t proto, const uint8_t *info, uint16_t len);
/** Initial option values for a new session. */
void ppp_lcp_init(struct ppp_sess *ps);

/* auth.c */
/** Start the authentication phase (CHAP: first Challenge; both: the phase timer). */
void ppp_auth_start(struct ppp_sess *ps);
/** Stop authentication timers (LCP down, session stop). */
void ppp_auth_stop(struct ppp_sess *ps);
void ppp_pap_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len);
void ppp_chap_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len);

/* aaa.c */
/** The authentication order is not local: PAP/CHAP go to the AAA hook. */
bool pppoe_aaa_remote(void);
/**
 * A PAP request or CHAP response to check remotely (order not LOCAL):
 * 1 the answer is awaited, 0 check the local table, -1 refuse.
 * cred: PAP password, or the CHAP MD5 response (16 bytes).
 */
int ppp_aaa_start(struct ppp_sess *ps, uint8_t id, const uint8_t *name, uint8_t nl,
		  const uint8_t *cred, uint8_t cl);
/** An NCP bound: the first one reports EGW_PPPOE_EV_UP. */
void ppp_aaa_bound(struct ppp_sess *ps);
/** The session is freed: EGW_PPPOE_EV_DOWN if the hook saw it. */
void ppp_aaa_free(struct ppp_sess *ps);
/* The session closes (its grace period starts): EGW_PPPOE_EV_CLOSING. */
void ppp_aaa_closing(struct ppp_sess *ps);
/** The remote answer's local end, in auth.c: accept (user, address, message) or refuse. */
void ppp_auth_remote_result(struct ppp_sess *ps, bool ok, const char *msg);
/** Check the credentials kept for the fallback against the local table (auth.c). */
void ppp_auth_local_fallback(struct ppp_sess *ps);

/* ipcp.c */
extern const struct ppp_fsm_ops ppp_ipcp_ops;
/** Network phase: choose the peer's address; false if there is none to give. */
bool ppp_ipcp_choose_addr(struct ppp_sess *ps);

/* ipv6cp.c */
extern const struct ppp_fsm_ops ppp_ipv6cp_ops;
/** Our interface identifier from the port's MAC (modified EUI-64). */
void ppp_ipv6cp_init(struct ppp_sess *ps);
/**
 * An IPv6 packet (protocol 0x0057) reached the control path. @return true if
 * it was a Router Solicitation while IPv6CP is opened (answered, or counted
 * as bad); false: the caller discards and counts it as any data frame.
 */
bool ppp_ipv6_rs_input(struct ppp_sess *ps, const uint8_t *p, uint16_t len);
void ppp_ipv6cp_stop(struct ppp_sess *ps);

#endif /* PPPOE_PPP_H */
