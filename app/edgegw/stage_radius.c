/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: subscriber AAA by RADIUS (lib/radius) for lib/pppoe's
 * sessions: the library's AAA hooks (authentication, session events), the
 * Access-Request a PAP/CHAP login makes, the authorisation applied, the
 * accounting of each session (Start when its first NCP opens, Interim
 * every interval, Stop when it is freed, its counters final), the
 * Session-Timeout and Idle-Timeout of each session, Accounting-On/Off, and
 * the RFC 5176 handler (Disconnect, CoA). Runs under egw.ctrl_lock: from
 * egw_control_poll() (egw_radius_stage_service(), which never blocks) and
 * from the radius commands; the wait for the last Stops at exit runs after
 * the lcores stopped.
 *
 * A Stop that no server answers is sent again, a whole round of servers
 * each time, up to STOP_ROUNDS rounds (counted acct_stop_retries); one
 * that never gets an answer is counted acct_stop_lost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "egw.h"
#include "egw_radius.h"

#define STOP_ROUNDS 5
#define SHUTDOWN_WAIT_MS 15000

/* What edgegw keeps of one session's AAA. */
struct aaa_sess {
	uint16_t sid;
	bool auth_pending;
	bool remote; /* authenticated by RADIUS (else: the local table) */
	bool up;     /* Start sent */
	uint64_t cookie, handle;
	char acct_id[24];
	char user[EGW_PPPOE_NAME_MAX + 1];
	uint64_t up_ms, next_interim_ms, last_active_ms, last_pkts;
	uint32_t session_timeout, idle_timeout, interim;
	uint64_t rate_up, rate_down;
	char filter_id[EGW_RADIUS_STR_MAX + 1];
	struct egw_radius_prefix delegated, ip6_prefix;
	unsigned int nb_routes, nb_routes_installed;
	struct egw_radius_prefix routes[EGW_RADIUS_MAX_ROUTES + 1];
	bool route_installed[EGW_RADIUS_MAX_ROUTES + 1];
	unsigned int nb_class;
	uint8_t class_len[EGW_RADIUS_MAX_CLASS];
	uint8_t class_val[EGW_RADIUS_MAX_CLASS][EGW_RADIUS_STR_MAX];
};

/* A Stop in flight: its attributes kept for the next round. */
struct acct_stop {
	unsigned int rounds;
	uint64_t event_ms; /* the session's end: Acct-Delay-Time counts from it */
	size_t len;
	uint8_t attrs[EGW_RADIUS_PKT_MAX];
};

#define RAD_CNT_LIST(X)                                                               \
	X(auth_requests, "Access-Requests made for PAP/CHAP logins")                  \
	X(auth_accept, "logins a server accepted")                                    \
	X(auth_reject, "logins a server rejected (Access-Reject)")                    \
	X(auth_challenge, "Access-Challenges, refused as rejects (RFC 2865 4.4)")     \
	X(auth_no_answer, "logins no server answered")                                \
	X(auth_refused_full, "logins refused at once: the outstanding-request limit") \
	X(acct_start, "Accounting Starts answered")                                   \
	X(acct_interim, "Interim-Updates answered")                                   \
	X(acct_stop, "Accounting Stops answered")                                     \
	X(acct_failed, "Starts and Interim-Updates no server answered")               \
	X(acct_refused, "accounting requests the client refused (outstanding limit)") \
	X(acct_stop_retries, "Stop rounds sent again because no server answered")     \
	X(acct_stop_lost, "Stops given up after all rounds (never answered)")         \
	X(acct_on_off, "Accounting-On and -Off answered")                             \
	X(routes_installed,                                                           \
	  "Framed-Route/Framed-IPv6-Route/Delegated-IPv6-Prefix routes installed")    \
	X(routes_failed, "of those, refused by the FIB (overlap, full, no IP stage)") \
	X(session_timeouts, "sessions closed by their Session-Timeout")               \
	X(idle_timeouts, "sessions closed by their Idle-Timeout")                     \
	X(dae_disconnected, "sessions ended by a Disconnect-Request")                 \
	X(dae_changed, "sessions changed by a CoA-Request")                           \
	X(dae_not_found, "DAE requests that matched no session (NAK 503)")            \
	X(dae_bad_filter, "CoA-Requests naming no filter set in Filter-Id (NAK 407)") \
	X(dae_bad_request, "DAE requests without a session attribute or with a wrong NAS (NAK)")

struct rad_cnt {
#define X(n, d) uint64_t n;
	RAD_CNT_LIST(X)
#undef X
};

static struct {
	struct egw_radius *cl;
	char nas_id[EGW_RADIUS_STR_MAX + 1];
	struct sockaddr_storage nas_ip;
	bool nas_ip_set;
	unsigned int interim_s;
	bool acct_on_sent;
	unsigned int acct_on_pending;
	uint32_t boot;
	uint32_t seq;
	uint64_t last_tick_ms;
	unsigned int stops_pending;
	struct aaa_sess *sess[EGW_PPPOE_MAX_SESSIONS + 1];
	struct rad_cnt c;
	uint8_t buf[EGW_RADIUS_PKT_MAX];
} rad;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct egw_radius *
egw_radius_stage_client(void)
{
	return rad.cl;
}

void
egw_radius_stage_set_nas_id(const char *s)
{
	snprintf(rad.nas_id, sizeof(rad.nas_id), "%s", s);
}

void
egw_radius_stage_set_nas_ip(const struct sockaddr_storage *a)
{
	rad.nas_ip = *a;
	rad.nas_ip_set = true;
}

void
egw_radius_stage_set_interim(unsigned int s)
{
	rad.interim_s = s;
}

/* ---------------- attributes ---------------- */

static void
mac_str(const struct rte_ether_addr *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m->addr_bytes[0], m->addr_bytes[1],
		 m->addr_bytes[2], m->addr_bytes[3], m->addr_bytes[4], m->addr_bytes[5]);
}

/* NAS-Port-Id: "<port>" or "<port>.<outer vid>[.<inner vid>]" (docs/radius.md) */
static void
port_id_str(uint16_t port, uint8_t n_vlan, const uint16_t vlan[2], char *buf, size_t len)
{
	if (n_vlan == 0)
		snprintf(buf, len, "%u", port);
	else if (n_vlan == 1)
		snprintf(buf, len, "%u.%u", port, vlan[0]);
	else
		snprintf(buf, len, "%u.%u.%u", port, vlan[0], vlan[1]);
}

/* What every request about a session carries (RFC 2865 5, RFC 2869). */
static void
put_nas(struct egw_radius_pkt *p, uint16_t sid, uint16_t port, const struct rte_ether_addr *mac,
	uint8_t n_vlan, const uint16_t vlan[2], const char *acct_id)
{
	char s[64];
	struct rte_ether_addr pm;

	if (rad.nas_ip_set && rad.nas_ip.ss_family == AF_INET)
		egw_radius_attr_put(p, EGW_RADIUS_A_NAS_IP_ADDRESS,
				    &((struct sockaddr_in *)&rad.nas_ip)->sin_addr, 4);
	else if (rad.nas_ip_set)
		egw_radius_attr_put(p, EGW_RADIUS_A_NAS_IPV6_ADDRESS,
				    &((struct sockaddr_in6 *)&rad.nas_ip)->sin6_addr, 16);
	if (rad.nas_id[0] != '\0')
		egw_radius_attr_put(p, EGW_RADIUS_A_NAS_IDENTIFIER, rad.nas_id, strlen(rad.nas_id));
	if (mac == NULL)
		return;
	egw_radius_attr_put_u32(p, EGW_RADIUS_A_NAS_PORT, sid);
	/* 15: Ethernet (RFC 2865 5.41, PPPoE runs on it) */
	egw_radius_attr_put_u32(p, EGW_RADIUS_A_NAS_PORT_TYPE, 15);
	port_id_str(port, n_vlan, vlan, s, sizeof(s));
	egw_radius_attr_put(p, EGW_RADIUS_A_NAS_PORT_ID, s, strlen(s));
	mac_str(mac, s, sizeof(s));
	egw_radius_attr_put(p, EGW_RADIUS_A_CALLING_STATION_ID, s, strlen(s));
	if (rte_eth_macaddr_get(port, &pm) == 0) {
		mac_str(&pm, s, sizeof(s));
		egw_radius_attr_put(p, EGW_RADIUS_A_CALLED_STATION_ID, s, strlen(s));
	}
	egw_radius_attr_put_u32(p, EGW_RADIUS_A_SERVICE_TYPE, 2);    /* Framed */
	egw_radius_attr_put_u32(p, EGW_RADIUS_A_FRAMED_PROTOCOL, 1); /* PPP */
	egw_radius_attr_put(p, EGW_RADIUS_A_ACCT_SESSION_ID, acct_id, strlen(acct_id));
}

/* ---------------- sessions ---------------- */

static struct aaa_sess *
sess_new(uint16_t sid)
{
	struct aaa_sess *a = rad.sess[sid];

	if (a == NULL) {
		a = calloc(1, sizeof(*a));
		if (a == NULL)
			return NULL;
		rad.sess[sid] = a;
	}
	memset(a, 0, sizeof(*a));
	a->sid = sid;
	/* unique over restarts: the start time, then a counter */
	snprintf(a->acct_id, sizeof(a->acct_id), "%08" PRIx32 "%08" PRIx32, rad.boot, ++rad.seq);
	return a;
}

static void
sess_free(uint16_t sid)
{
	free(rad.sess[sid]);
	rad.sess[sid] = NULL;
}

/* ---------------- authentication ---------------- */

static void
auth_answer(void *arg, int status, const uint8_t *pkt, size_t len)
{
	struct aaa_sess *a = arg;
	struct egw_radius_authz *z;
	struct egw_pppoe_authz pz;
	unsigned int i;
	char ip6[INET6_ADDRSTRLEN];

	a->auth_pending = false;
	if (status < 0) {
		rad.c.auth_no_answer++;
		egw_pppoe_auth_done(a->sid, a->cookie, EGW_PPPOE_AUTH_NO_SERVER, NULL);
		return;
	}
	z = calloc(1, sizeof(*z));
	if (z == NULL) {
		egw_pppoe_auth_done(a->sid, a->cookie, EGW_PPPOE_AUTH_REJECT, NULL);
		return;
	}
	egw_radius_authz_parse(pkt, len, z);
	memset(&pz, 0, sizeof(pz));
	if (z->reply_message[0] != '\0') {
		if (pkt[0] != EGW_RADIUS_ACCESS_CHALLENGE)
			printf("radius: session %u user %s: Reply-Message \"%s\"\n", a->sid,
			       a->user, z->reply_message);
		pz.message = z->reply_message;
	}
	if (pkt[0] == EGW_RADIUS_ACCESS_CHALLENGE) {
		/* RFC 2865 4.4: a NAS that does not do challenge/response MUST
		 * take an Access-Challenge for an Access-Reject */
		rad.c.auth_challenge++;
		printf("radius: session %u user %s: Access-Challenge refused as an Access-Reject "
		       "(no challenge/response, RFC 2865 4.4)%s%s%s\n",
		       a->sid, a->user, z->reply_message[0] != '\0' ? ": Reply-Message \"" : "",
		       z->reply_message, z->reply_message[0] != '\0' ? "\"" : "");
		egw_pppoe_auth_done(a->sid, a->cookie, EGW_PPPOE_AUTH_REJECT, &pz);
		free(z);
		return;
	}
	if (pkt[0] != EGW_RADIUS_ACCESS_ACCEPT) {
		rad.c.auth_reject++;
		egw_pppoe_auth_done(a->sid, a->cookie, EGW_PPPOE_AUTH_REJECT, &pz);
		free(z);
		return;
	}
	rad.c.auth_accept++;
	a->remote = true;
	if (z->present & EGW_RADIUS_Z_FRAMED_IP)
		pz.ip4 = z->framed_ip;
	if (z->present & EGW_RADIUS_Z_FRAMED_POOL)
		pz.pool = z->framed_pool;
	if ((z->present & EGW_RADIUS_Z_IPV6_PREFIX) && z->framed_ipv6_prefix.len == 64) {
		pz.has_ip6_prefix = true;
		memcpy(pz.ip6_prefix, z->framed_ipv6_prefix.addr, 8);
		a->ip6_prefix = z->framed_ipv6_prefix;
	} else if (z->present & EGW_RADIUS_Z_IPV6_PREFIX) {
		inet_ntop(AF_INET6, z->framed_ipv6_prefix.addr, ip6, sizeof(ip6));
		printf("radius: session %u: Framed-IPv6-Prefix %s/%u ignored (a session has a "
		       "/64)\n",
		       a->sid, ip6, z->framed_ipv6_prefix.len);
	}
	memcpy(pz.dns, z->dns4, sizeof(pz.dns));
	/* Filter-Id names a filter set; lib/pppoe refuses the login if there
	 * is none of that name (fail closed) */
	if (z->present & EGW_RADIUS_Z_FILTER_ID) {
		pz.filter_set = z->filter_id;
		if (!egw_pppoe_filter_set_exists(z->filter_id))
			printf("radius: session %u user %s: Filter-Id \"%s\" names no filter set: "
			       "login refused\n",
			       a->sid, a->user, z->filter_id);
	}
	if (z->present & EGW_RADIUS_Z_DNS6)
		memcpy(pz.dns6, z->dns6, sizeof(pz.dns6));
	pz.mtu = z->framed_mtu;
	a->session_timeout = z->session_timeout;
	a->idle_timeout = z->idle_timeout;
	a->interim = z->interim_interval;
	a->rate_up = z->rate_up_bps;
	a->rate_down = z->rate_down_bps;
	memcpy(a->filter_id, z->filter_id, sizeof(a->filter_id));
	a->nb_routes = 0;
	for (i = 0; i < z->nb_routes; i++)
		a->routes[a->nb_routes++] = z->routes[i];
	if (z->present & EGW_RADIUS_Z_DELEGATED) {
		a->delegated = z->delegated_prefix;
		a->routes[a->nb_routes++] = z->delegated_prefix;
	}
	a->nb_class = z->nb_class;
	memcpy(a->class_len, z->class_len, sizeof(a->class_len));
	memcpy(a->class_val, z->class_val, sizeof(a->class_val));
	egw_pppoe_auth_done(a->sid, a->cookie, EGW_PPPOE_AUTH_ACCEPT, &pz);
	free(z);
}

static int
auth_hook(const struct egw_pppoe_auth_req *r, void *arg)
{
	struct egw_radius_pkt p;
	struct aaa_sess *a;
	uint8_t chap[17];
	int rc;

	(void)arg;
	if (rad.cl == NULL || egw_radius_server_count(rad.cl) == 0)
		return -ENOENT;
	a = sess_new(r->sid);
	if (a == NULL)
		return -ENOMEM;
	memcpy(a->user, r->user, r->user_len);
	a->user[r->user_len] = '\0';
	egw_radius_pkt_init(&p, rad.buf, sizeof(rad.buf), 0, 0);
	egw_radius_attr_put(&p, EGW_RADIUS_A_USER_NAME, r->user, r->user_len);
	if (r->method == EGW_PPPOE_AUTH_CHAP) {
		/* RFC 2865 5.3: CHAP Identifier, then the 16-byte response */
		chap[0] = r->chap_id;
		memcpy(&chap[1], r->chap_response, 16);
		egw_radius_attr_put(&p, EGW_RADIUS_A_CHAP_PASSWORD, chap, sizeof(chap));
		egw_radius_attr_put(&p, EGW_RADIUS_A_CHAP_CHALLENGE, r->chap_challenge, 16);
	}
	put_nas(&p, r->sid, r->port, &r->mac, r->n_vlan, r->vlan, a->acct_id);
	rc = egw_radius_send(
		rad.cl, EGW_RADIUS_ACCESS_REQUEST, rad.buf + EGW_RADIUS_HDR_LEN,
		p.len - EGW_RADIUS_HDR_LEN, r->method == EGW_PPPOE_AUTH_PAP ? r->password : NULL,
		r->method == EGW_PPPOE_AUTH_PAP ? r->password_len : 0, auth_answer, a, &a->handle);
	OPENSSL_cleanse(chap, sizeof(chap));
	if (rc < 0) {
		if (rc == -ENOSPC)
			rad.c.auth_refused_full++;
		sess_free(r->sid);
		return rc == -ENOENT ? -ENOENT : -EBUSY;
	}
	rad.c.auth_requests++;
	a->cookie = r->cookie;
	a->auth_pending = true;
	return 0;
}

/* ---------------- accounting ---------------- */

static uint32_t
term_cause(enum egw_pppoe_cause c)
{
	switch (c) {
	case EGW_PPPOE_CAUSE_PADT:
	case EGW_PPPOE_CAUSE_LCP_TERM: return EGW_RADIUS_TERM_USER_REQUEST;
	case EGW_PPPOE_CAUSE_ECHO: return EGW_RADIUS_TERM_LOST_CARRIER;
	case EGW_PPPOE_CAUSE_ADMIN:
	case EGW_PPPOE_CAUSE_DISCONNECT: return EGW_RADIUS_TERM_ADMIN_RESET;
	case EGW_PPPOE_CAUSE_IDLE: return EGW_RADIUS_TERM_IDLE_TIMEOUT;
	case EGW_PPPOE_CAUSE_SESSION_TIMEOUT: return EGW_RADIUS_TERM_SESSION_TIMEOUT;
	case EGW_PPPOE_CAUSE_SHUTDOWN: return EGW_RADIUS_TERM_NAS_REBOOT;
	case EGW_PPPOE_CAUSE_LCP_FAIL:
	case EGW_PPPOE_CAUSE_LCP_TIMEOUT:
	case EGW_PPPOE_CAUSE_NCP_FAIL: return EGW_RADIUS_TERM_SERVICE_UNAVAILABLE;
	default: return EGW_RADIUS_TERM_NAS_ERROR;
	}
}

/* An Accounting-Request of session a: its attributes into rad.buf; returns
 * their length (behind the header). */
static size_t
acct_build(const struct aaa_sess *a, const struct egw_pppoe_session_info *s, uint32_t status,
	   enum egw_pppoe_cause cause)
{
	struct egw_radius_pkt p;
	const char *name;
	uint8_t v6[18];
	unsigned int i;
	uint64_t t = a->up ? (now_ms() - a->up_ms) / 1000 : 0;

	egw_radius_pkt_init(&p, rad.buf, sizeof(rad.buf), 0, 0);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_STATUS_TYPE, status);
	name = s->user[0] != '\0' ? s->user : a->user[0] != '\0' ? a->user : "unknown";
	egw_radius_attr_put(&p, EGW_RADIUS_A_USER_NAME, name, strlen(name));
	put_nas(&p, s->sid, s->port, &s->mac, s->n_vlan, s->vlan, a->acct_id);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_AUTHENTIC, a->remote ? 1 : 2);
	if (s->ip4 != 0)
		egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IP_ADDRESS, &s->ip4, 4);
	if (s->ip6[0] != 0 || s->ip6[1] != 0) {
		v6[0] = 0;
		v6[1] = 64;
		memcpy(&v6[2], s->ip6, 8);
		egw_radius_attr_put(&p, EGW_RADIUS_A_FRAMED_IPV6_PREFIX, v6, 10);
	}
	if (a->delegated.family == AF_INET6) {
		v6[0] = 0;
		v6[1] = a->delegated.len;
		memcpy(&v6[2], a->delegated.addr, 16);
		egw_radius_attr_put(&p, EGW_RADIUS_A_DELEGATED_IPV6_PREFIX, v6,
				    2 + (a->delegated.len + 7u) / 8);
	}
	/* RFC 2865 5.25: Class as the server sent it */
	for (i = 0; i < a->nb_class; i++)
		egw_radius_attr_put(&p, EGW_RADIUS_A_CLASS, a->class_val[i], a->class_len[i]);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_EVENT_TIMESTAMP, (uint32_t)time(NULL));
	if (status != EGW_RADIUS_ACCT_START) {
		/* input: from the subscriber (the session's upstream), RFC 2866 */
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_SESSION_TIME, (uint32_t)t);
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_INPUT_OCTETS, (uint32_t)s->rx_bytes);
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_INPUT_GIGAWORDS,
					(uint32_t)(s->rx_bytes >> 32));
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_OUTPUT_OCTETS, (uint32_t)s->tx_bytes);
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_OUTPUT_GIGAWORDS,
					(uint32_t)(s->tx_bytes >> 32));
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_INPUT_PACKETS, (uint32_t)s->rx_pkts);
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_OUTPUT_PACKETS, (uint32_t)s->tx_pkts);
	}
	if (status == EGW_RADIUS_ACCT_STOP)
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_TERMINATE_CAUSE, term_cause(cause));
	return p.len - EGW_RADIUS_HDR_LEN;
}

static void
acct_answer(void *arg, int status, const uint8_t *pkt, size_t len)
{
	uintptr_t kind = (uintptr_t)arg;

	(void)pkt;
	(void)len;
	if (kind == EGW_RADIUS_ACCT_ON || kind == EGW_RADIUS_ACCT_OFF)
		rad.acct_on_pending--;
	if (status < 0) {
		rad.c.acct_failed++;
		return;
	}
	if (kind == EGW_RADIUS_ACCT_START)
		rad.c.acct_start++;
	else if (kind == EGW_RADIUS_ACCT_INTERIM)
		rad.c.acct_interim++;
	else
		rad.c.acct_on_off++;
}

static void
acct_send(uint32_t status, size_t len)
{
	if (egw_radius_send_acct(rad.cl, rad.buf + EGW_RADIUS_HDR_LEN, len, 0, acct_answer,
				 (void *)(uintptr_t)status, NULL) < 0)
		rad.c.acct_refused++;
}

static void stop_answer(void *arg, int status, const uint8_t *pkt, size_t len);

static void
stop_send(struct acct_stop *st)
{
	/* every round counts its Acct-Delay-Time from the session's end */
	if (egw_radius_send_acct(rad.cl, st->attrs, st->len, st->event_ms, stop_answer, st, NULL) <
	    0) {
		rad.c.acct_stop_lost++;
		rad.stops_pending--;
		free(st);
	}
}

static void
stop_answer(void *arg, int status, const uint8_t *pkt, size_t len)
{
	struct acct_stop *st = arg;

	(void)pkt;
	(void)len;
	if (status == 0) {
		rad.c.acct_stop++;
		rad.stops_pending--;
		free(st);
		return;
	}
	if (status == -ETIMEDOUT && ++st->rounds < STOP_ROUNDS && rad.cl != NULL) {
		rad.c.acct_stop_retries++;
		stop_send(st);
		return;
	}
	rad.c.acct_stop_lost++;
	rad.stops_pending--;
	free(st);
}

static void
route_set(struct aaa_sess *a, bool add)
{
	char err[256];
	struct egw_ip_addr ia;
	unsigned int i;
	int rc;

	for (i = 0; i < a->nb_routes; i++) {
		if (add == a->route_installed[i])
			continue;
		memset(&ia, 0, sizeof(ia));
		ia.family = a->routes[i].family;
		memcpy(ia.a, a->routes[i].addr, sizeof(ia.a));
		if (!add) {
			egw_ip_route_session_del(&ia, a->routes[i].len, a->sid);
			(void)egw_xdp_hook_route(&ia, a->routes[i].len, false, err, sizeof(err));
			a->route_installed[i] = false;
			continue;
		}
		rc = egw.ip ? egw_ip_route_session_add(&ia, a->routes[i].len, a->sid) : -ENOTSUP;
		if (rc < 0) {
			rad.c.routes_failed++;
			printf("radius: session %u: route %u refused: %s\n", a->sid, i,
			       strerror(-rc));
			continue;
		}
		/* on a port shared with the kernel, the prefix's frames must
		 * reach edgegw: a route the steering map refuses goes again */
		rc = egw_xdp_hook_route(&ia, a->routes[i].len, true, err, sizeof(err));
		if (rc < 0) {
			egw_ip_route_session_del(&ia, a->routes[i].len, a->sid);
			rad.c.routes_failed++;
			printf("radius: session %u: route %u refused: %s\n", a->sid, i, err);
			continue;
		}
		rad.c.routes_installed++;
		a->route_installed[i] = true;
	}
	/* traffic to and from the routed prefixes is the session's (its
	 * routes in the FIB say so; gone with the session) */
	if (add && a->nb_routes != 0)
		egw_pppoe_session_framed(a->sid, true);
}

static void
event_hook(enum egw_pppoe_event ev, uint16_t sid, void *arg)
{
	struct egw_pppoe_session_info s;
	enum egw_pppoe_cause cause = EGW_PPPOE_CAUSE_NONE;
	struct aaa_sess *a = rad.sess[sid];
	struct acct_stop *st;
	bool acct = rad.cl != NULL && egw_radius_server_count(rad.cl) != 0;

	(void)arg;
	if (ev == EGW_PPPOE_EV_UP) {
		if (!acct && a == NULL)
			return;
		if (a == NULL)
			a = sess_new(sid); /* a local login, accounted by RADIUS */
		if (a == NULL || egw_pppoe_session_get(sid, &s, NULL) < 0)
			return;
		if (a->user[0] == '\0')
			snprintf(a->user, sizeof(a->user), "%s", s.user);
		a->up = true;
		a->up_ms = a->last_active_ms = now_ms();
		a->last_pkts = s.rx_pkts + s.tx_pkts;
		route_set(a, true);
		if (a->interim == 0)
			a->interim = rad.interim_s;
		a->next_interim_ms = a->interim != 0 ? a->up_ms + a->interim * 1000ull : 0;
		if (acct)
			acct_send(EGW_RADIUS_ACCT_START,
				  acct_build(a, &s, EGW_RADIUS_ACCT_START, cause));
		return;
	}
	if (ev == EGW_PPPOE_EV_CLOSING) {
		/* the routes go before the grace period: no worker still uses
		 * one when the slot is reused */
		if (a != NULL && a->up)
			route_set(a, false);
		return;
	}
	/* EV_DOWN: the counters are final */
	if (a == NULL)
		return;
	if (a->auth_pending && rad.cl != NULL)
		egw_radius_cancel(rad.cl, a->handle);
	if (a->up) {
		route_set(a, false);
		if (acct && egw_pppoe_session_get(sid, &s, &cause) == 0) {
			st = malloc(sizeof(*st));
			if (st == NULL) {
				rad.c.acct_stop_lost++;
			} else {
				st->rounds = 0;
				st->event_ms = egw_radius_clock_ms();
				st->len = acct_build(a, &s, EGW_RADIUS_ACCT_STOP, cause);
				memcpy(st->attrs, rad.buf + EGW_RADIUS_HDR_LEN, st->len);
				rad.stops_pending++;
				stop_send(st);
			}
		}
	}
	sess_free(sid);
}

static void
acct_on_off(uint32_t status)
{
	struct egw_radius_pkt p;

	egw_radius_pkt_init(&p, rad.buf, sizeof(rad.buf), 0, 0);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_STATUS_TYPE, status);
	put_nas(&p, 0, 0, NULL, 0, NULL, NULL);
	egw_radius_attr_put(&p, EGW_RADIUS_A_ACCT_SESSION_ID, "00000000", 8);
	egw_radius_attr_put_u32(&p, EGW_RADIUS_A_EVENT_TIMESTAMP, (uint32_t)time(NULL));
	if (status == EGW_RADIUS_ACCT_OFF)
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_TERMINATE_CAUSE,
					EGW_RADIUS_TERM_NAS_REBOOT);
	if (egw_radius_send_acct(rad.cl, rad.buf + EGW_RADIUS_HDR_LEN, p.len - EGW_RADIUS_HDR_LEN,
				 0, acct_answer, (void *)(uintptr_t)status, NULL) == 0)
		rad.acct_on_pending++;
	else
		rad.c.acct_refused++;
}

/* Once a second: timeouts, idle sessions, Interim-Updates. */
static void
tick(uint64_t now)
{
	struct egw_pppoe_session_info s;
	unsigned int sid;

	for (sid = 1; sid <= EGW_PPPOE_MAX_SESSIONS; sid++) {
		struct aaa_sess *a = rad.sess[sid];
		uint64_t pk;

		if (a == NULL || !a->up || egw_pppoe_session_get((uint16_t)sid, &s, NULL) < 0 ||
		    s.state != EGW_PPPOE_S_BOUND)
			continue;
		if (a->session_timeout != 0 && now - a->up_ms >= a->session_timeout * 1000ull) {
			rad.c.session_timeouts++;
			egw_pppoe_session_terminate((uint16_t)sid, EGW_PPPOE_CAUSE_SESSION_TIMEOUT);
			continue;
		}
		pk = s.rx_pkts + s.tx_pkts;
		if (pk != a->last_pkts) {
			a->last_pkts = pk;
			a->last_active_ms = now;
		} else if (a->idle_timeout != 0 &&
			   now - a->last_active_ms >= a->idle_timeout * 1000ull) {
			rad.c.idle_timeouts++;
			egw_pppoe_session_terminate((uint16_t)sid, EGW_PPPOE_CAUSE_IDLE);
			continue;
		}
		if (a->next_interim_ms != 0 && now >= a->next_interim_ms && rad.cl != NULL &&
		    egw_radius_server_count(rad.cl) != 0) {
			a->next_interim_ms = now + a->interim * 1000ull;
			acct_send(EGW_RADIUS_ACCT_INTERIM,
				  acct_build(a, &s, EGW_RADIUS_ACCT_INTERIM, EGW_PPPOE_CAUSE_NONE));
		}
	}
}

unsigned int
egw_radius_stage_service(void)
{
	uint64_t now;
	unsigned int n;

	if (rad.cl == NULL)
		return 0;
	n = egw_radius_poll(rad.cl);
	now = now_ms();
	if (!rad.acct_on_sent && egw_radius_server_count(rad.cl) != 0 &&
	    __atomic_load_n(&egw.fwd_running, __ATOMIC_RELAXED)) {
		rad.acct_on_sent = true;
		acct_on_off(EGW_RADIUS_ACCT_ON);
	}
	if (now - rad.last_tick_ms >= 1000) {
		rad.last_tick_ms = now;
		tick(now);
	}
	return n;
}

/* ---------------- dynamic authorisation ---------------- */

struct dae_match {
	const uint8_t *acct_id, *user, *calling;
	uint8_t acct_id_len, user_len, calling_len;
	bool has_ip;
	rte_be32_t ip;
	uint16_t sids[64];
	unsigned int n;
};

static int
dae_match_cb(const struct egw_pppoe_session_info *s, void *arg)
{
	struct dae_match *m = arg;
	const struct aaa_sess *a = rad.sess[s->sid];
	char mac[32];

	if (s->state == EGW_PPPOE_S_CLOSING || s->state == EGW_PPPOE_S_FREE)
		return 0;
	if (m->acct_id != NULL && (a == NULL || strlen(a->acct_id) != m->acct_id_len ||
				   memcmp(a->acct_id, m->acct_id, m->acct_id_len) != 0))
		return 0;
	if (m->user != NULL &&
	    (strlen(s->user) != m->user_len || memcmp(s->user, m->user, m->user_len) != 0))
		return 0;
	if (m->has_ip && s->ip4 != m->ip)
		return 0;
	if (m->calling != NULL) {
		mac_str(&s->mac, mac, sizeof(mac));
		if (strlen(mac) != m->calling_len ||
		    strncasecmp(mac, (const char *)m->calling, m->calling_len) != 0)
			return 0;
	}
	if (m->n < RTE_DIM(m->sids))
		m->sids[m->n++] = s->sid;
	return 0;
}

static uint32_t
dae_hook(void *arg, const uint8_t *pkt, size_t len, const struct sockaddr_storage *from)
{
	struct dae_match m;
	struct egw_radius_authz z;
	const uint8_t *v;
	unsigned int i;
	uint8_t vl;

	(void)arg;
	(void)from;
	memset(&m, 0, sizeof(m));
	/* a request for another NAS is not ours (RFC 5176 3.5: 403) */
	v = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_NAS_IDENTIFIER, &vl);
	if (v != NULL && (strlen(rad.nas_id) != vl || memcmp(v, rad.nas_id, vl) != 0)) {
		rad.c.dae_bad_request++;
		return EGW_RADIUS_ERR_NAS_ID_MISMATCH;
	}
	m.acct_id = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_ACCT_SESSION_ID, &m.acct_id_len);
	m.user = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_USER_NAME, &m.user_len);
	m.calling = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_CALLING_STATION_ID, &m.calling_len);
	v = egw_radius_attr_find(pkt, len, EGW_RADIUS_A_FRAMED_IP_ADDRESS, &vl);
	if (v != NULL && vl == 4) {
		m.has_ip = true;
		memcpy(&m.ip, v, 4);
	}
	if (m.acct_id == NULL && m.user == NULL && m.calling == NULL && !m.has_ip) {
		rad.c.dae_bad_request++;
		return EGW_RADIUS_ERR_MISSING_ATTRIBUTE;
	}
	egw_pppoe_session_walk(dae_match_cb, &m);
	if (m.n == 0) {
		rad.c.dae_not_found++;
		return EGW_RADIUS_ERR_SESSION_NOT_FOUND;
	}
	if (pkt[0] == EGW_RADIUS_DISCONNECT_REQUEST) {
		for (i = 0; i < m.n; i++) {
			egw_pppoe_session_terminate(m.sids[i], EGW_PPPOE_CAUSE_DISCONNECT);
			rad.c.dae_disconnected++;
		}
		return 0;
	}
	/* CoA: the session's limits change, the session stays */
	egw_radius_authz_parse(pkt, len, &z);
	/* a Filter-Id naming no filter set changes nothing (RFC 5176 3.5:
	 * Invalid Attribute Value) */
	if ((z.present & EGW_RADIUS_Z_FILTER_ID) && !egw_pppoe_filter_set_exists(z.filter_id)) {
		rad.c.dae_bad_filter++;
		printf("radius: CoA-Request: Filter-Id \"%s\" names no filter set: NAK\n",
		       z.filter_id);
		return EGW_RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
	}
	for (i = 0; i < m.n; i++) {
		struct aaa_sess *a = rad.sess[m.sids[i]];

		if (a == NULL)
			a = sess_new(m.sids[i]);
		if (a == NULL)
			return EGW_RADIUS_ERR_RESOURCES_UNAVAILABLE;
		/* a new Session-Timeout counts from now */
		if (z.present & EGW_RADIUS_Z_SESSION_TIMEOUT)
			a->session_timeout = z.session_timeout == 0
						     ? 0
						     : (uint32_t)((now_ms() - a->up_ms) / 1000) +
							       z.session_timeout;
		if (z.present & EGW_RADIUS_Z_IDLE_TIMEOUT)
			a->idle_timeout = z.idle_timeout;
		if (z.present & EGW_RADIUS_Z_INTERIM) {
			a->interim = z.interim_interval;
			a->next_interim_ms = a->interim != 0 ? now_ms() + a->interim * 1000ull : 0;
		}
		/* the live session runs the set's programs from its next burst */
		if ((z.present & EGW_RADIUS_Z_FILTER_ID) &&
		    egw_pppoe_session_set_filter_set(m.sids[i], z.filter_id) == 0)
			memcpy(a->filter_id, z.filter_id, sizeof(a->filter_id));
		if (z.present & EGW_RADIUS_Z_RATE) {
			a->rate_up = z.rate_up_bps;
			a->rate_down = z.rate_down_bps;
		}
		rad.c.dae_changed++;
	}
	return 0;
}

int
egw_radius_stage_dae_listen(const struct sockaddr_storage *a)
{
	return egw_radius_dae_listen(rad.cl, a, dae_hook, NULL);
}

/* ---------------- set-up, shutdown, show ---------------- */

int
egw_radius_stage_init(void)
{
	rad.cl = egw_radius_create(EGW_RADIUS_OUTSTANDING_DEF);
	if (rad.cl == NULL) {
		fprintf(stderr, "error: RADIUS: client: %s\n", strerror(errno));
		return -ENOMEM;
	}
	rad.boot = (uint32_t)time(NULL);
	snprintf(rad.nas_id, sizeof(rad.nas_id), "edgegw");
	rte_spinlock_lock(&egw.ctrl_lock);
	egw_pppoe_set_aaa(auth_hook, event_hook, NULL);
	egw.radius = true;
	rte_spinlock_unlock(&egw.ctrl_lock);
	return 0;
}

void
egw_radius_stage_shutdown(void)
{
	uint64_t end = now_ms() + SHUTDOWN_WAIT_MS;
	unsigned int count[4];
	bool off = false;

	/* without a server there is nothing to wait for: the closed sessions
	 * stay in the table for the final counters and --stats-json */
	if (rad.cl == NULL || egw_radius_server_count(rad.cl) == 0)
		return;
	/* the sessions closed at exit are freed after their grace period
	 * (the workers stopped: at once), their Stops go out, and edgegw waits
	 * for the answers, then for the Accounting-Off's: a bounded wait, the
	 * lcores have stopped and nothing else runs */
	while (now_ms() < end) {
		rte_spinlock_lock(&egw.ctrl_lock);
		if (egw.pppoe)
			egw_pppoe_service();
		egw_radius_poll(rad.cl);
		if (!off && rad.stops_pending == 0 &&
		    (!egw.pppoe || egw_pppoe_session_count(count) == 0)) {
			off = true;
			if (rad.acct_on_sent && egw_radius_server_count(rad.cl) != 0)
				acct_on_off(EGW_RADIUS_ACCT_OFF);
		}
		rte_spinlock_unlock(&egw.ctrl_lock);
		if (off && rad.acct_on_pending == 0)
			break;
		rte_delay_us_sleep(1000);
	}
	if (rad.stops_pending != 0)
		fprintf(stderr, "warning: RADIUS: %u accounting Stops unanswered at exit\n",
			rad.stops_pending);
}

void
egw_radius_stage_fini(void)
{
	unsigned int i;

	rte_spinlock_lock(&egw.ctrl_lock);
	egw_pppoe_set_aaa(NULL, NULL, NULL);
	egw_radius_destroy(rad.cl);
	rad.cl = NULL;
	for (i = 0; i <= EGW_PPPOE_MAX_SESSIONS; i++)
		sess_free((uint16_t)i);
	egw.radius = false;
	rte_spinlock_unlock(&egw.ctrl_lock);
}

void
egw_radius_stage_counters(void (*fn)(const char *name, uint64_t v, void *arg), void *arg)
{
	const char *names[64];
	uint64_t v[64];
	unsigned int n, i;

	n = egw_radius_counters(rad.cl, names, v, RTE_DIM(names));
	for (i = 0; i < n; i++)
		fn(names[i], v[i], arg);
#define X(nm, d) fn(#nm, rad.c.nm, arg);
	RAD_CNT_LIST(X)
#undef X
	fn("outstanding", rad.cl != NULL ? egw_radius_outstanding(rad.cl) : 0, arg);
	fn("acct_stop_pending", rad.stops_pending, arg);
}

static void
prefix_str(const struct egw_radius_prefix *p, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(p->family, p->addr, s, sizeof(s));
	snprintf(buf, len, "%s/%u", s, p->len);
}

bool
egw_radius_stage_session_str(uint16_t sid, char *buf, size_t len)
{
	const struct aaa_sess *a = rad.sess[sid];
	size_t o;
	unsigned int i;
	char p[64];

	if (a == NULL)
		return false;
	o = (size_t)snprintf(buf, len,
			     "radius: acct-session-id %s%s session-timeout %u idle-timeout %u "
			     "interim %u filter %s rate %" PRIu64 "/%" PRIu64 " class %u",
			     a->acct_id, a->remote ? "" : " (local login)", a->session_timeout,
			     a->idle_timeout, a->interim, a->filter_id[0] ? a->filter_id : "-",
			     a->rate_up, a->rate_down, a->nb_class);
	for (i = 0; i < a->nb_routes && o < len; i++) {
		prefix_str(&a->routes[i], p, sizeof(p));
		o += (size_t)snprintf(buf + o, len - o, "%s%s%s", i == 0 ? " routes " : ",", p,
				      a->route_installed[i] ? "" : "(not installed)");
	}
	return true;
}

void
egw_radius_stage_config(FILE *f, bool json)
{
	char a[INET6_ADDRSTRLEN + 8];
	struct sockaddr_storage d;

	if (rad.nas_ip_set)
		egw_radius_addr_str(&rad.nas_ip, a, sizeof(a));
	else
		snprintf(a, sizeof(a), "-");
	/* the port of the NAS address means nothing */
	if (rad.nas_ip_set)
		*strrchr(a, ':') = '\0';
	if (json) {
		fprintf(f, "\"nas_identifier\": ");
		egw_json_str(f, rad.nas_id);
		fprintf(f, ", \"nas_ip\": ");
		egw_json_str(f, a);
		fprintf(f, ", \"interim_s\": %u, \"servers\": %u, \"auth_order\": \"%s\"",
			rad.interim_s, rad.cl != NULL ? egw_radius_server_count(rad.cl) : 0,
			egw_pppoe_get_auth_order() == EGW_PPPOE_AUTH_LOCAL    ? "local"
			: egw_pppoe_get_auth_order() == EGW_PPPOE_AUTH_REMOTE ? "radius"
									      : "radius local");
		if (rad.cl != NULL && egw_radius_dae_addr(rad.cl, &d)) {
			egw_radius_addr_str(&d, a, sizeof(a));
			fprintf(f, ", \"dae\": \"%s\"", a);
		}
		return;
	}
	fprintf(f, "  radius: nas-identifier %s, nas-ip %s, interim %u s, %u servers", rad.nas_id,
		a, rad.interim_s, rad.cl != NULL ? egw_radius_server_count(rad.cl) : 0);
	if (rad.cl != NULL && egw_radius_dae_addr(rad.cl, &d)) {
		egw_radius_addr_str(&d, a, sizeof(a));
		fprintf(f, ", dae %s", a);
	}
	fprintf(f, "\n");
}
