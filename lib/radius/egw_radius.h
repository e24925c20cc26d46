/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RADIUS client and dynamic-authorisation server: the packet codec of
 * RFC 2865 section 5 (attributes, User-Password hiding, Request and
 * Response Authenticators), RFC 2866 accounting, RFC 3579
 * Message-Authenticator, RFC 5176 Disconnect and CoA; RFC 2869, 4818 and
 * 6911 attributes in the parsed authorisation.
 *
 * Control path only: one thread at a time (the caller serialises). Nothing
 * here blocks: sockets are non-blocking UDP, read and retransmitted by
 * egw_radius_poll(), which the caller runs from its event loop.
 *
 * Fail closed: a response is accepted only with a Response Authenticator
 * computed with the server's secret over the request it answers, and, for
 * Access-Accept, -Reject and -Challenge, a valid Message-Authenticator
 * (CVE-2024-3596, BlastRADIUS); a DAE request only from a configured client
 * with its secret's Request Authenticator and a valid Message-Authenticator.
 * Everything else is dropped and counted. Secrets are never printed and are
 * wiped when freed.
 */
#ifndef EGW_RADIUS_H
#define EGW_RADIUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest packet (RFC 2865 3: 4096). */
#define EGW_RADIUS_PKT_MAX 4096
/** Code, Identifier, Length, Authenticator. */
#define EGW_RADIUS_HDR_LEN 20
#define EGW_RADIUS_AUTH_LEN 16
/** Longest shared secret we take. */
#define EGW_RADIUS_SECRET_MAX 128
/** Longest PAP password (RFC 2865 5.2: 128 octets). */
#define EGW_RADIUS_PASSWORD_MAX 128
/** Most servers. */
#define EGW_RADIUS_MAX_SERVERS 8
/** Most DAE clients. */
#define EGW_RADIUS_MAX_DAE_CLIENTS 8
/** Largest outstanding-request limit. */
#define EGW_RADIUS_MAX_OUTSTANDING 65536
/** Default outstanding-request limit. */
#define EGW_RADIUS_OUTSTANDING_DEF 1024
/** Default per-server timeout and retransmissions. */
#define EGW_RADIUS_TIMEOUT_MS_DEF 3000
#define EGW_RADIUS_RETRIES_DEF 3
/** Default dead time of a server that did not answer. */
#define EGW_RADIUS_DEAD_TIME_S_DEF 30
/** Default ports. */
#define EGW_RADIUS_AUTH_PORT 1812
#define EGW_RADIUS_ACCT_PORT 1813
#define EGW_RADIUS_DAE_PORT 3799

/** Packet codes (RFC 2865 3, RFC 2866 3, RFC 5176 2.3). */
enum egw_radius_code {
	EGW_RADIUS_ACCESS_REQUEST = 1,
	EGW_RADIUS_ACCESS_ACCEPT = 2,
	EGW_RADIUS_ACCESS_REJECT = 3,
	EGW_RADIUS_ACCT_REQUEST = 4,
	EGW_RADIUS_ACCT_RESPONSE = 5,
	EGW_RADIUS_ACCESS_CHALLENGE = 11,
	EGW_RADIUS_DISCONNECT_REQUEST = 40,
	EGW_RADIUS_DISCONNECT_ACK = 41,
	EGW_RADIUS_DISCONNECT_NAK = 42,
	EGW_RADIUS_COA_REQUEST = 43,
	EGW_RADIUS_COA_ACK = 44,
	EGW_RADIUS_COA_NAK = 45,
};

/** Attribute types used here (RFC 2865, 2866, 2869, 3162, 4818, 5176, 6911). */
enum egw_radius_attr_type {
	EGW_RADIUS_A_USER_NAME = 1,
	EGW_RADIUS_A_USER_PASSWORD = 2,
	EGW_RADIUS_A_CHAP_PASSWORD = 3,
	EGW_RADIUS_A_NAS_IP_ADDRESS = 4,
	EGW_RADIUS_A_NAS_PORT = 5,
	EGW_RADIUS_A_SERVICE_TYPE = 6,
	EGW_RADIUS_A_FRAMED_PROTOCOL = 7,
	EGW_RADIUS_A_FRAMED_IP_ADDRESS = 8,
	EGW_RADIUS_A_FRAMED_IP_NETMASK = 9,
	EGW_RADIUS_A_FILTER_ID = 11,
	EGW_RADIUS_A_FRAMED_MTU = 12,
	EGW_RADIUS_A_REPLY_MESSAGE = 18,
	EGW_RADIUS_A_FRAMED_ROUTE = 22,
	EGW_RADIUS_A_STATE = 24,
	EGW_RADIUS_A_CLASS = 25,
	EGW_RADIUS_A_VENDOR_SPECIFIC = 26,
	EGW_RADIUS_A_SESSION_TIMEOUT = 27,
	EGW_RADIUS_A_IDLE_TIMEOUT = 28,
	EGW_RADIUS_A_CALLED_STATION_ID = 30,
	EGW_RADIUS_A_CALLING_STATION_ID = 31,
	EGW_RADIUS_A_NAS_IDENTIFIER = 32,
	EGW_RADIUS_A_ACCT_STATUS_TYPE = 40,
	EGW_RADIUS_A_ACCT_DELAY_TIME = 41,
	EGW_RADIUS_A_ACCT_INPUT_OCTETS = 42,
	EGW_RADIUS_A_ACCT_OUTPUT_OCTETS = 43,
	EGW_RADIUS_A_ACCT_SESSION_ID = 44,
	EGW_RADIUS_A_ACCT_AUTHENTIC = 45,
	EGW_RADIUS_A_ACCT_SESSION_TIME = 46,
	EGW_RADIUS_A_ACCT_INPUT_PACKETS = 47,
	EGW_RADIUS_A_ACCT_OUTPUT_PACKETS = 48,
	EGW_RADIUS_A_ACCT_TERMINATE_CAUSE = 49,
	EGW_RADIUS_A_ACCT_INPUT_GIGAWORDS = 52,
	EGW_RADIUS_A_ACCT_OUTPUT_GIGAWORDS = 53,
	EGW_RADIUS_A_EVENT_TIMESTAMP = 55,
	EGW_RADIUS_A_CHAP_CHALLENGE = 60,
	EGW_RADIUS_A_NAS_PORT_TYPE = 61,
	EGW_RADIUS_A_ACCT_INTERIM_INTERVAL = 85,
	EGW_RADIUS_A_NAS_PORT_ID = 87,
	EGW_RADIUS_A_FRAMED_POOL = 88,
	EGW_RADIUS_A_MESSAGE_AUTHENTICATOR = 80,
	EGW_RADIUS_A_NAS_IPV6_ADDRESS = 95,
	EGW_RADIUS_A_FRAMED_IPV6_ROUTE = 99,
	EGW_RADIUS_A_FRAMED_IPV6_PREFIX = 97,
	EGW_RADIUS_A_ERROR_CAUSE = 101,
	EGW_RADIUS_A_DELEGATED_IPV6_PREFIX = 123,
	EGW_RADIUS_A_DNS_SERVER_IPV6_ADDRESS = 169,
};

/** Vendor attributes we read (in Vendor-Specific, RFC 2865 5.26). */
#define EGW_RADIUS_VENDOR_MICROSOFT 311
#define EGW_RADIUS_MS_PRIMARY_DNS 28
#define EGW_RADIUS_MS_SECONDARY_DNS 29
#define EGW_RADIUS_VENDOR_MIKROTIK 14988
#define EGW_RADIUS_MIKROTIK_RATE_LIMIT 8

/** Acct-Status-Type values (RFC 2866 5.1). */
enum egw_radius_acct_status {
	EGW_RADIUS_ACCT_START = 1,
	EGW_RADIUS_ACCT_STOP = 2,
	EGW_RADIUS_ACCT_INTERIM = 3,
	EGW_RADIUS_ACCT_ON = 7,
	EGW_RADIUS_ACCT_OFF = 8,
};

/** Acct-Terminate-Cause values (RFC 2866 5.10). */
enum egw_radius_term_cause {
	EGW_RADIUS_TERM_USER_REQUEST = 1,
	EGW_RADIUS_TERM_LOST_CARRIER = 2,
	EGW_RADIUS_TERM_IDLE_TIMEOUT = 4,
	EGW_RADIUS_TERM_SESSION_TIMEOUT = 5,
	EGW_RADIUS_TERM_ADMIN_RESET = 6,
	EGW_RADIUS_TERM_NAS_ERROR = 9,
	EGW_RADIUS_TERM_NAS_REQUEST = 10,
	EGW_RADIUS_TERM_NAS_REBOOT = 11,
	EGW_RADIUS_TERM_SERVICE_UNAVAILABLE = 15,
};

/** Error-Cause values (RFC 5176 3.5). */
enum egw_radius_error_cause {
	EGW_RADIUS_ERR_UNSUPPORTED_ATTRIBUTE = 401,
	EGW_RADIUS_ERR_MISSING_ATTRIBUTE = 402,
	EGW_RADIUS_ERR_NAS_ID_MISMATCH = 403,
	EGW_RADIUS_ERR_INVALID_REQUEST = 404,
	EGW_RADIUS_ERR_UNSUPPORTED_SERVICE = 405,
	EGW_RADIUS_ERR_INVALID_ATTRIBUTE_VALUE = 407,
	EGW_RADIUS_ERR_SESSION_NOT_FOUND = 503,
	EGW_RADIUS_ERR_SESSION_NOT_REMOVABLE = 504,
	EGW_RADIUS_ERR_RESOURCES_UNAVAILABLE = 506,
};

/* ---------------- codec (no state, no EAL) ---------------- */

/** A packet being built in a caller's buffer (room >= EGW_RADIUS_HDR_LEN). */
struct egw_radius_pkt {
	uint8_t *buf;
	size_t len;  /**< bytes used (header included) */
	size_t room; /**< size of buf (at most EGW_RADIUS_PKT_MAX is used) */
};

/** Start a packet: code, identifier, a zero authenticator. -EINVAL. */
int egw_radius_pkt_init(struct egw_radius_pkt *p, uint8_t *buf, size_t room, uint8_t code,
			uint8_t id);
/** Append an attribute (1..253 value bytes). -EINVAL (length), -ENOSPC. */
int egw_radius_attr_put(struct egw_radius_pkt *p, uint8_t type, const void *val, size_t len);
/** Append a 32-bit integer attribute (network order on the wire). */
int egw_radius_attr_put_u32(struct egw_radius_pkt *p, uint8_t type, uint32_t v);
/** Append a Vendor-Specific attribute with one sub-attribute (RFC 2865 5.26 format). */
int egw_radius_vsa_put(struct egw_radius_pkt *p, uint32_t vendor, uint8_t vtype, const void *val,
		       size_t len);

/** Why a packet or attribute list was refused (each a counter where it matters). */
enum egw_radius_err {
	EGW_RADIUS_OK = 0,
	EGW_RADIUS_E_SHORT,      /**< fewer than 20 bytes */
	EGW_RADIUS_E_LENGTH,     /**< Length field below 20, above 4096 or past the datagram */
	EGW_RADIUS_E_ATTR,       /**< an attribute shorter than 2 or past Length */
	EGW_RADIUS_E_AUTH,       /**< Request/Response Authenticator wrong */
	EGW_RADIUS_E_NO_MSGAUTH, /**< Message-Authenticator required and absent */
	EGW_RADIUS_E_MSGAUTH,    /**< Message-Authenticator wrong, not 16 bytes, or twice */
};

/**
 * Check framing: header, Length (<= len, the datagram; bytes beyond it are
 * padding, RFC 2865 3), every attribute 2..255 long and inside Length.
 * @return EGW_RADIUS_OK or the reason; *plen gets the Length field.
 */
enum egw_radius_err egw_radius_check(const uint8_t *buf, size_t len, size_t *plen);

/** Attribute iterator over a packet that passed egw_radius_check(). */
struct egw_radius_iter {
	const uint8_t *p;
	size_t off, len;
};
void egw_radius_iter_init(struct egw_radius_iter *it, const uint8_t *pkt, size_t len);
/** Next attribute: true with type, value and value length; false at the end. */
bool egw_radius_iter_next(struct egw_radius_iter *it, uint8_t *type, const uint8_t **val,
			  uint8_t *vlen);
/** First attribute of type in a checked packet (NULL if none); *vlen set. */
const uint8_t *egw_radius_attr_find(const uint8_t *pkt, size_t len, uint8_t type, uint8_t *vlen);

/**
 * RFC 2865 5.2 User-Password hiding: out gets ceil(pwlen/16)*16 bytes (at
 * least 16). @return that length, or -EINVAL (pwlen > 128, secret empty).
 */
int egw_radius_password_hide(const uint8_t *pw, size_t pwlen, const uint8_t *secret, size_t slen,
			     const uint8_t auth[EGW_RADIUS_AUTH_LEN], uint8_t *out);
/** The reverse (for tests and servers): out gets len bytes (NUL padding kept). */
int egw_radius_password_unhide(const uint8_t *hidden, size_t len, const uint8_t *secret,
			       size_t slen, const uint8_t auth[EGW_RADIUS_AUTH_LEN], uint8_t *out);

/**
 * Finish a packet in place: Length set; Message-Authenticator (if the
 * packet has one, reserved as 16 zero bytes) computed (RFC 3579 3.2, RFC
 * 5176 3.3); the authenticator set. req_auth NULL: a request: an
 * Access-Request keeps the authenticator the caller put in; Accounting,
 * Disconnect and CoA requests get MD5 over the packet with a zero
 * authenticator and the secret (RFC 2866 3, RFC 5176 3.1). req_auth given: a
 * response to that request: MD5(Code+ID+Length+req_auth+Attributes+Secret).
 * @return 0; -EINVAL.
 */
int egw_radius_finish(struct egw_radius_pkt *p, const uint8_t *secret, size_t slen,
		      const uint8_t *req_auth);

/**
 * Verify a response (req_auth: the authenticator of the request it
 * answers) or, req_auth NULL, an Accounting/Disconnect/CoA request.
 * Message-Authenticator is checked when present and required when
 * require_ma. The packet must have passed egw_radius_check().
 */
enum egw_radius_err egw_radius_verify(const uint8_t *pkt, size_t len, const uint8_t *secret,
				      size_t slen, const uint8_t *req_auth, bool require_ma);

/* ---------------- authorisation attributes ---------------- */

#define EGW_RADIUS_MAX_ROUTES 8
#define EGW_RADIUS_MAX_CLASS 4
#define EGW_RADIUS_STR_MAX 253

/** A route or prefix: family AF_INET/AF_INET6, address, length. */
struct egw_radius_prefix {
	uint8_t family;
	uint8_t len;
	uint8_t addr[16];
};

/** What an Access-Accept or CoA-Request says about a session (0/empty: absent). */
struct egw_radius_authz {
	uint32_t present;   /**< EGW_RADIUS_Z_* bits */
	uint32_t framed_ip; /**< network order */
	char framed_pool[EGW_RADIUS_STR_MAX + 1];
	struct egw_radius_prefix framed_ipv6_prefix;
	struct egw_radius_prefix delegated_prefix;
	unsigned int nb_routes;
	struct egw_radius_prefix routes[EGW_RADIUS_MAX_ROUTES]; /**< Framed-(IPv6-)Route */
	uint32_t dns4[2];                                       /**< network order */
	uint8_t dns6[2][16];
	uint32_t session_timeout, idle_timeout, interim_interval;
	uint16_t framed_mtu;
	char filter_id[EGW_RADIUS_STR_MAX + 1];
	uint64_t rate_up_bps, rate_down_bps; /**< Mikrotik-Rate-Limit "rx/tx" */
	unsigned int nb_class;
	uint8_t class_len[EGW_RADIUS_MAX_CLASS];
	uint8_t class_val[EGW_RADIUS_MAX_CLASS][EGW_RADIUS_STR_MAX];
	char reply_message[EGW_RADIUS_STR_MAX + 1];
	unsigned int bad; /**< attributes of a known type with a bad value (ignored) */
};

#define EGW_RADIUS_Z_FRAMED_IP (1u << 0)
#define EGW_RADIUS_Z_FRAMED_POOL (1u << 1)
#define EGW_RADIUS_Z_IPV6_PREFIX (1u << 2)
#define EGW_RADIUS_Z_DELEGATED (1u << 3)
#define EGW_RADIUS_Z_DNS4 (1u << 4)
#define EGW_RADIUS_Z_DNS6 (1u << 5)
#define EGW_RADIUS_Z_SESSION_TIMEOUT (1u << 6)
#define EGW_RADIUS_Z_IDLE_TIMEOUT (1u << 7)
#define EGW_RADIUS_Z_INTERIM (1u << 8)
#define EGW_RADIUS_Z_MTU (1u << 9)
#define EGW_RADIUS_Z_FILTER_ID (1u << 10)
#define EGW_RADIUS_Z_RATE (1u << 11)
#define EGW_RADIUS_Z_CLASS (1u << 12)
#define EGW_RADIUS_Z_REPLY_MESSAGE (1u << 13)
#define EGW_RADIUS_Z_ROUTES (1u << 14)

/**
 * Parse the authorisation attributes of a checked packet. Values of the
 * wrong length or out of range are skipped and counted in z->bad; routes
 * and Class beyond the arrays are dropped (counted in bad).
 */
void egw_radius_authz_parse(const uint8_t *pkt, size_t len, struct egw_radius_authz *z);
/** Parse a Framed-Route text ("a.b.c.d/len [gateway [metric]]"): 0 or -EINVAL. */
int egw_radius_route4_parse(const uint8_t *s, size_t n, struct egw_radius_prefix *r);
/** Parse a Mikrotik-Rate-Limit text ("rx[/tx] ...", k/M/G suffixes): 0 or -EINVAL. */
int egw_radius_rate_parse(const uint8_t *s, size_t n, uint64_t *rx, uint64_t *tx);

/* ---------------- the client ---------------- */

struct egw_radius;

/** A server as configured. */
struct egw_radius_server_conf {
	struct sockaddr_storage addr; /**< address and authentication port */
	uint16_t acct_port;
	uint8_t secret[EGW_RADIUS_SECRET_MAX];
	size_t secret_len;
	unsigned int priority;   /**< lower is preferred */
	unsigned int timeout_ms; /**< per transmission */
	unsigned int retries;    /**< retransmissions after the first */
};

/** Create a client (sockets opened on demand). NULL with errno. */
struct egw_radius *egw_radius_create(unsigned int max_outstanding);
/** Close everything, wipe the secrets; pending requests are dropped unanswered. */
void egw_radius_destroy(struct egw_radius *r);

/** Add a server. 0; -EEXIST (same address and port), -ENOSPC, -EINVAL. */
int egw_radius_server_add(struct egw_radius *r, const struct egw_radius_server_conf *c);
/** Remove a server: requests in flight to it move to the next. -ENOENT. */
int egw_radius_server_del(struct egw_radius *r, const struct sockaddr_storage *addr);
unsigned int egw_radius_server_count(const struct egw_radius *r);
/** Seconds a server that stopped answering is passed over (1..3600). */
int egw_radius_set_dead_time(struct egw_radius *r, unsigned int s);
/** Outstanding-request limit (1..EGW_RADIUS_MAX_OUTSTANDING; not below those in flight). */
int egw_radius_set_max_outstanding(struct egw_radius *r, unsigned int n);

/** Request kinds: the server port they go to. */
enum egw_radius_kind {
	EGW_RADIUS_KIND_AUTH = 0,
	EGW_RADIUS_KIND_ACCT,
};

/**
 * The end of a request: status 0 with a verified response (code is
 * pkt[0]), or -ETIMEDOUT (no server answered), -ECANCELED (server list
 * emptied, client destroyed: pkt NULL). Called from egw_radius_poll() (or
 * the call that removed the last server), never from egw_radius_send().
 */
typedef void (*egw_radius_done_fn)(void *arg, int status, const uint8_t *pkt, size_t len);

/**
 * Send a request: code (Access-Request or Accounting-Request), attrs the
 * attribute bytes (already encoded, without User-Password and
 * Message-Authenticator: the client adds those to each transmission,
 * hiding password with each server's secret). It goes to the preferred
 * live server, retransmitted after its timeout, its retries times, then to
 * the next server (that one marked dead for the dead time), until none is
 * left. *handle (may be NULL) names it for egw_radius_cancel().
 * @return 0; -ENOSPC (outstanding limit: counted), -ENOENT (no server),
 *   -EMSGSIZE, -EINVAL.
 */
int egw_radius_send(struct egw_radius *r, uint8_t code, const uint8_t *attrs, size_t len,
		    const uint8_t *password, size_t pwlen, egw_radius_done_fn done, void *arg,
		    uint64_t *handle);
/**
 * Send an Accounting-Request about an event at event_ms (egw_radius_clock_ms()
 * time; 0 or a time to come: now). Like egw_radius_send(), and every
 * transmission carries an Acct-Delay-Time (RFC 2866 5.2): the whole seconds
 * from event_ms to that transmission. A retransmission whose Acct-Delay-Time
 * changed goes with a new Identifier, so a new Request Authenticator (RFC
 * 2866 5.2), counted acct_new_id. attrs must not hold an Acct-Delay-Time.
 * egw_radius_send() with EGW_RADIUS_ACCT_REQUEST is this with the event now.
 * @return as egw_radius_send().
 */
int egw_radius_send_acct(struct egw_radius *r, const uint8_t *attrs, size_t len, uint64_t event_ms,
			 egw_radius_done_fn done, void *arg, uint64_t *handle);
/** The client's clock: monotonic milliseconds (CLOCK_MONOTONIC). */
uint64_t egw_radius_clock_ms(void);
/** Forget a request (done is not called). -ENOENT if it already ended. */
int egw_radius_cancel(struct egw_radius *r, uint64_t handle);
/** Requests in flight. */
unsigned int egw_radius_outstanding(const struct egw_radius *r);

/**
 * Read every socket (responses, DAE requests) and retransmit what timed
 * out. Never blocks. @return work done (0 when idle).
 */
unsigned int egw_radius_poll(struct egw_radius *r);

/* ---------------- dynamic authorisation (RFC 5176) ---------------- */

/**
 * A verified Disconnect-Request or CoA-Request (pkt[0] the code): return
 * 0 to ACK, or an Error-Cause (enum egw_radius_error_cause) to NAK.
 * from is the client's address.
 */
typedef uint32_t (*egw_radius_dae_fn)(void *arg, const uint8_t *pkt, size_t len,
				      const struct sockaddr_storage *from);

/** Listen for DAE requests on addr (port in it). -EADDRINUSE, -EEXIST (already), -errno. */
int egw_radius_dae_listen(struct egw_radius *r, const struct sockaddr_storage *addr,
			  egw_radius_dae_fn fn, void *arg);
/** Allow a DAE client (its source address) with its secret. -EEXIST, -ENOSPC, -EINVAL. */
int egw_radius_dae_client_add(struct egw_radius *r, const struct sockaddr_storage *addr,
			      const uint8_t *secret, size_t slen);
/** The listening address (false if none). */
bool egw_radius_dae_addr(const struct egw_radius *r, struct sockaddr_storage *addr);

/* ---------------- counters and show ---------------- */

/** Client and DAE counters (egw_radius_cnt.def): names and values in a fixed order. */
unsigned int egw_radius_counters(const struct egw_radius *r, const char **names, uint64_t *values,
				 unsigned int max);

/** A server as shown (no secret). */
struct egw_radius_server_info {
	struct sockaddr_storage addr;
	uint16_t acct_port;
	unsigned int priority, timeout_ms, retries;
	bool dead;
	unsigned int dead_left_s;
	uint64_t requests, retransmits, timeouts, responses, bad_auth, dead_count;
};
/** Call fn for each server in priority order. */
void egw_radius_servers_walk(const struct egw_radius *r,
			     void (*fn)(const struct egw_radius_server_info *s, void *arg),
			     void *arg);
/** Call fn for each DAE client address (no secret). */
void egw_radius_dae_clients_walk(const struct egw_radius *r,
				 void (*fn)(const struct sockaddr_storage *a, void *arg),
				 void *arg);

/** "a.b.c.d:port" or "[v6]:port". */
void egw_radius_addr_str(const struct sockaddr_storage *a, char *buf, size_t len);
/** Parse "addr", "addr:port", "[v6]" or "[v6]:port" (port default def). 0 or -EINVAL. */
int egw_radius_addr_parse(const char *s, uint16_t def, struct sockaddr_storage *a);

#ifdef __cplusplus
}
#endif

#endif /* EGW_RADIUS_H */
