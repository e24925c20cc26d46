/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the RADIUS client. Servers in priority order with a dead
 * time, non-blocking UDP sockets with 256 identifiers each (a new socket
 * when every identifier of the open ones is taken), a bounded table of
 * outstanding requests, retransmission and failover driven by
 * egw_radius_poll(). Nothing blocks: a socket that refuses a datagram
 * (EAGAIN) is counted and the datagram goes again at the next timeout.
 *
 * A request keeps its identifier and authenticator while it is
 * retransmitted to one server (RFC 5080 2.2.1: a retransmission is the same
 * packet); moved to another server it gets a new identifier, a new
 * authenticator and its password hidden again with that server's secret.
 * A server whose retransmissions all went unanswered is passed over for
 * the dead time; when every server left for a request is dead, each gets a
 * single try (a probe), so a recovered server is found again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "radius_private.h"

#define HANDLE_BITS 17 /* request index below, sequence above */
#define RX_BUDGET 64   /* datagrams read per socket per poll */

static const char *const cnt_names[RADIUS_CNT_MAX] = {
#define RADIUS_CNT(e, n, d) [RADIUS_CNT_##e] = n,
#include "radius_cnt.def"
#undef RADIUS_CNT
};

uint64_t
radius_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

socklen_t
radius_addr_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static uint16_t
addr_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

static void
addr_set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)a)->sin_port = htons(port);
}

bool
radius_addr_eq(const struct sockaddr_storage *a, const struct sockaddr_storage *b, bool with_port)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (with_port && addr_port(a) != addr_port(b))
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return false;
}

void
egw_radius_addr_str(const struct sockaddr_storage *a, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN] = "?";

	if (a->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, s, sizeof(s));
		snprintf(buf, len, "[%s]:%u", s, addr_port(a));
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, s, sizeof(s));
		snprintf(buf, len, "%s:%u", s, addr_port(a));
	}
}

int
egw_radius_addr_parse(const char *s, uint16_t def, struct sockaddr_storage *a)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *port = NULL, *end;
	unsigned long p = def;
	size_t n;

	if (s == NULL)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (end == NULL || (end[1] != '\0' && end[1] != ':'))
			return -EINVAL;
		n = (size_t)(end - s - 1);
		if (end[1] == ':')
			port = end + 2;
		s++;
	} else {
		end = strrchr(s, ':');
		/* one colon: IPv4 with a port; several: a bare IPv6 address */
		if (end != NULL && strchr(s, ':') == end) {
			n = (size_t)(end - s);
			port = end + 1;
		} else {
			n = strlen(s);
		}
	}
	if (n == 0 || n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	if (port != NULL) {
		char *e;

		if (*port < '0' || *port > '9')
			return -EINVAL;
		p = strtoul(port, &e, 10);
		if (*e != '\0' || p == 0 || p > 65535)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)a)->sin_addr) == 1) {
		a->ss_family = AF_INET;
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)a)->sin6_addr) == 1) {
		a->ss_family = AF_INET6;
	} else {
		return -EINVAL;
	}
	addr_set_port(a, (uint16_t)p);
	return 0;
}

/* ---------------- set-up ---------------- */

struct egw_radius *
egw_radius_create(unsigned int max_outstanding)
{
	struct egw_radius *r;

	if (max_outstanding == 0 || max_outstanding > EGW_RADIUS_MAX_OUTSTANDING) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->reqs = calloc(max_outstanding, sizeof(*r->reqs));
	if (r->reqs == NULL) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->table_size = max_outstanding;
	r->max_outstanding = max_outstanding;
	r->dead_time_s = EGW_RADIUS_DEAD_TIME_S_DEF;
	r->dae_fd = -1;
	r->next_deadline_ms = UINT64_MAX;
	return r;
}

static void
req_free(struct egw_radius *r, unsigned int i)
{
	struct radius_req *q = &r->reqs[i];

	if (q->sock >= 0) {
		struct radius_sock *s = &r->socks[q->sock];

		s->slot[q->id] = 0;
		s->nb_used--;
	}
	/* the password, and the attributes with the subscriber's data */
	OPENSSL_cleanse(q, sizeof(*q));
	q->sock = -1;
	r->nb_outstanding--;
}

void
egw_radius_destroy(struct egw_radius *r)
{
	unsigned int i;

	if (r == NULL)
		return;
	for (i = 0; i < r->table_size; i++)
		if (r->reqs[i].used)
			req_free(r, i);
	for (i = 0; i < r->nb_socks; i++)
		if (r->socks[i].fd >= 0)
			close(r->socks[i].fd);
	radius_dae_fini(r);
	OPENSSL_cleanse(r->servers, sizeof(r->servers));
	free(r->reqs);
	free(r);
}

int
egw_radius_server_add(struct egw_radius *r, const struct egw_radius_server_conf *c)
{
	unsigned int i, k = EGW_RADIUS_MAX_SERVERS;

	if (r == NULL || c == NULL || c->secret_len == 0 || c->secret_len > EGW_RADIUS_SECRET_MAX ||
	    c->timeout_ms == 0 || c->timeout_ms > 60000 || c->retries > 10 || c->acct_port == 0 ||
	    (c->addr.ss_family != AF_INET && c->addr.ss_family != AF_INET6) ||
	    addr_port(&c->addr) == 0)
		return -EINVAL;
	for (i = 0; i < EGW_RADIUS_MAX_SERVERS; i++) {
		if (!r->servers[i].used) {
			if (k == EGW_RADIUS_MAX_SERVERS)
				k = i;
			continue;
		}
		if (radius_addr_eq(&r->servers[i].c.addr, &c->addr, true))
			return -EEXIST;
	}
	if (k == EGW_RADIUS_MAX_SERVERS)
		return -ENOSPC;
	memset(&r->servers[k], 0, sizeof(r->servers[k]));
	r->servers[k].c = *c;
	r->servers[k].order = r->server_order++;
	r->servers[k].used = true;
	r->nb_servers++;
	return 0;
}

static void req_next_server(struct egw_radius *r, unsigned int i, uint64_t now);

int
egw_radius_server_del(struct egw_radius *r, const struct sockaddr_storage *addr)
{
	unsigned int i, k;
	uint64_t now = radius_now_ms();

	for (k = 0; k < EGW_RADIUS_MAX_SERVERS; k++)
		if (r->servers[k].used && radius_addr_eq(&r->servers[k].c.addr, addr, true))
			break;
	if (k == EGW_RADIUS_MAX_SERVERS)
		return -ENOENT;
	OPENSSL_cleanse(&r->servers[k], sizeof(r->servers[k]));
	r->servers[k].used = false;
	r->nb_servers--;
	/* requests waiting on it go on to the next server (or end) */
	for (i = 0; i < r->table_size; i++)
		if (r->reqs[i].used && r->reqs[i].server == (int)k)
			req_next_server(r, i, now);
	return 0;
}

unsigned int
egw_radius_server_count(const struct egw_radius *r)
{
	return r->nb_servers;
}

int
egw_radius_set_dead_time(struct egw_radius *r, unsigned int s)
{
	if (s == 0 || s > 3600)
		return -EINVAL;
	r->dead_time_s = s;
	return 0;
}

int
egw_radius_set_max_outstanding(struct egw_radius *r, unsigned int n)
{
	struct radius_req *t;

	if (n == 0 || n > EGW_RADIUS_MAX_OUTSTANDING || n < r->nb_outstanding)
		return -EINVAL;
	if (n > r->table_size) {
		/* indices, never pointers, are kept across calls: a move is safe */
		t = realloc(r->reqs, (size_t)n * sizeof(*t));
		if (t == NULL)
			return -ENOMEM;
		memset(&t[r->table_size], 0, (size_t)(n - r->table_size) * sizeof(*t));
		r->reqs = t;
		r->table_size = n;
	}
	r->max_outstanding = n;
	return 0;
}

unsigned int
egw_radius_outstanding(const struct egw_radius *r)
{
	return r->nb_outstanding;
}

/* ---------------- sockets and identifiers ---------------- */

static int
sock_open(struct egw_radius *r, int family)
{
	struct radius_sock *s;
	int fd;

	if (r->nb_socks >= sizeof(r->socks) / sizeof(r->socks[0]))
		return -ENOSPC;
	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		RADIUS_CNT_INC(r, SOCKET_ERRORS);
		return -errno;
	}
	s = &r->socks[r->nb_socks];
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->family = family;
	/* identifiers start at a random place: a restart does not replay the
	 * previous run's (RFC 5080 2.2.2) */
	if (RAND_bytes(&s->next_id, 1) != 1)
		s->next_id = 0;
	return (int)r->nb_socks++;
}

/* A free identifier of family: (socket, id) for request i. */
static int
id_alloc(struct egw_radius *r, int family, unsigned int i, int *sock, uint8_t *id)
{
	unsigned int k, n;
	int rc;

	for (k = 0; k < r->nb_socks; k++) {
		struct radius_sock *s = &r->socks[k];

		if (s->fd < 0 || s->family != family || s->nb_used >= RADIUS_IDS)
			continue;
		for (n = 0; n < RADIUS_IDS; n++) {
			uint8_t c = (uint8_t)(s->next_id + n);

			if (s->slot[c] == 0) {
				s->slot[c] = i + 1;
				s->nb_used++;
				s->next_id = (uint8_t)(c + 1);
				*sock = (int)k;
				*id = c;
				return 0;
			}
		}
	}
	rc = sock_open(r, family);
	if (rc < 0)
		return rc;
	return id_alloc(r, family, i, sock, id);
}

/* ---------------- requests ---------------- */

static bool
server_dead(const struct radius_server *s, uint64_t now)
{
	return s->dead_until_ms != 0 && now < s->dead_until_ms;
}

/* The preferred server request q has not tried: live ones first, then
 * dead ones (a single try each). -1 if none is left. */
static int
server_pick(const struct egw_radius *r, const struct radius_req *q, uint64_t now, bool *probe)
{
	int best = -1, pass;
	unsigned int k;

	for (pass = 0; pass < 2 && best < 0; pass++) {
		for (k = 0; k < EGW_RADIUS_MAX_SERVERS; k++) {
			const struct radius_server *s = &r->servers[k];

			if (!s->used || (q->tried & (1u << k)) ||
			    server_dead(s, now) != (pass == 1))
				continue;
			if (best < 0 || s->c.priority < r->servers[best].c.priority ||
			    (s->c.priority == r->servers[best].c.priority &&
			     s->order < r->servers[best].order))
				best = (int)k;
		}
		*probe = pass == 1;
	}
	return best;
}

/* Build request q for its server into r->tx_buf; returns the length or -errno. */
static int
req_build(struct egw_radius *r, struct radius_req *q)
{
	const struct radius_server *s = &r->servers[q->server];
	static const uint8_t zero16[16];
	uint8_t hidden[EGW_RADIUS_PASSWORD_MAX];
	struct egw_radius_pkt p;
	int rc;

	egw_radius_pkt_init(&p, r->tx_buf, sizeof(r->tx_buf), q->code, q->id);
	if (q->code == EGW_RADIUS_ACCESS_REQUEST)
		memcpy(&r->tx_buf[4], q->auth, EGW_RADIUS_AUTH_LEN);
	if (q->attrs_len > p.room - p.len)
		return -EMSGSIZE;
	memcpy(&r->tx_buf[p.len], q->attrs, q->attrs_len);
	p.len += q->attrs_len;
	/* RFC 2866 5.2: in every Accounting-Request, the seconds since the
	 * event (req_transmit() chose the value and, if it changed, the
	 * identifier) */
	if (q->code == EGW_RADIUS_ACCT_REQUEST) {
		rc = egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ACCT_DELAY_TIME, q->delay_s);
		if (rc < 0)
			return rc;
	}
	if (q->has_pw) {
		rc = egw_radius_password_hide(q->pw, q->pw_len, s->c.secret, s->c.secret_len,
					      q->auth, hidden);
		if (rc < 0)
			return rc;
		rc = egw_radius_attr_put(&p, EGW_RADIUS_A_USER_PASSWORD, hidden, (size_t)rc);
		OPENSSL_cleanse(hidden, sizeof(hidden));
		if (rc < 0)
			return rc;
	}
	/* on every request (RFC 3579 3.2; BlastRADIUS) */
	rc = egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, zero16, 16);
	if (rc < 0)
		return rc;
	rc = egw_radius_finish(&p, s->c.secret, s->c.secret_len, NULL);
	if (rc < 0)
		return rc;
	memcpy(q->auth, &r->tx_buf[4], EGW_RADIUS_AUTH_LEN);
	return (int)p.len;
}

static void
deadline_note(struct egw_radius *r, uint64_t t)
{
	if (t < r->next_deadline_ms)
		r->next_deadline_ms = t;
}

/* Acct-Delay-Time of accounting request i for a transmission at now. A
 * retransmission whose value changed is a new request for RFC 2866 (5.2:
 * "the Identifier will also change"): it gets a new identifier, so a new
 * Request Authenticator; the answer to the old one is no longer taken
 * (rx_unknown_id). Without a free identifier it goes unchanged, the old
 * value with it. */
static void
acct_delay_update(struct egw_radius *r, unsigned int i, uint64_t now)
{
	struct radius_req *q = &r->reqs[i];
	uint32_t d = now > q->event_ms ? (uint32_t)((now - q->event_ms) / 1000) : 0;
	int sock;
	uint8_t id;

	if (q->tx == 0 || d == q->delay_s) {
		q->delay_s = d;
		return;
	}
	if (id_alloc(r, r->servers[q->server].c.addr.ss_family, i, &sock, &id) < 0)
		return;
	r->socks[q->sock].slot[q->id] = 0;
	r->socks[q->sock].nb_used--;
	q->sock = sock;
	q->id = id;
	q->delay_s = d;
	RADIUS_CNT_INC(r, ACCT_NEW_ID);
}

/* (Re)transmit request i to its server. */
static void
req_transmit(struct egw_radius *r, unsigned int i, uint64_t now)
{
	struct radius_req *q = &r->reqs[i];
	struct radius_server *s = &r->servers[q->server];
	struct sockaddr_storage to = s->c.addr;
	int len;

	if (q->code != EGW_RADIUS_ACCESS_REQUEST)
		addr_set_port(&to, s->c.acct_port);
	if (q->code == EGW_RADIUS_ACCT_REQUEST)
		acct_delay_update(r, i, now);
	q->tx++;
	q->deadline_ms = now + s->c.timeout_ms;
	deadline_note(r, q->deadline_ms);
	len = req_build(r, q);
	if (len < 0) {
		RADIUS_CNT_INC(r, SEND_ERRORS);
		return;
	}
	if (q->tx > 1) {
		RADIUS_CNT_INC(r, RETRANSMITS);
		s->retransmits++;
	} else {
		s->requests++;
	}
	if (sendto(r->socks[q->sock].fd, r->tx_buf, (size_t)len, MSG_DONTWAIT,
		   (const struct sockaddr *)&to, radius_addr_len(&to)) != len)
		RADIUS_CNT_INC(r, SEND_ERRORS);
	else
		RADIUS_CNT_INC(r, TX);
	/* the hidden password must not stay in the scratch buffer */
	OPENSSL_cleanse(r->tx_buf, (size_t)len);
}

static void
req_end(struct egw_radius *r, unsigned int i, int status, const uint8_t *pkt, size_t len)
{
	egw_radius_done_fn done = r->reqs[i].done;
	void *arg = r->reqs[i].arg;

	req_free(r, i);
	if (done != NULL)
		done(arg, status, pkt, len);
}

/* Request i is done with its server (or has none yet): on to the next. */
static void
req_next_server(struct egw_radius *r, unsigned int i, uint64_t now)
{
	struct radius_req *q = &r->reqs[i];
	bool probe = false;
	int k, rc;

	if (q->sock >= 0) {
		r->socks[q->sock].slot[q->id] = 0;
		r->socks[q->sock].nb_used--;
		q->sock = -1;
	}
	k = server_pick(r, q, now, &probe);
	if (k < 0) {
		if (r->nb_servers == 0) {
			req_end(r, i, -ECANCELED, NULL, 0);
		} else {
			RADIUS_CNT_INC(r, NO_ANSWER);
			req_end(r, i, -ETIMEDOUT, NULL, 0);
		}
		return;
	}
	if (q->server >= 0)
		RADIUS_CNT_INC(r, FAILOVERS);
	q->server = k;
	q->tried |= 1u << k;
	q->tx = 0;
	q->max_tx = probe ? 1 : 1 + r->servers[k].c.retries;
	rc = id_alloc(r, r->servers[k].c.addr.ss_family, i, &q->sock, &q->id);
	if (rc < 0 || (q->code == EGW_RADIUS_ACCESS_REQUEST &&
		       RAND_bytes(q->auth, EGW_RADIUS_AUTH_LEN) != 1)) {
		/* no socket, or no authenticator we could stand behind: this
		 * server cannot be asked; the deadline moves on to the next */
		RADIUS_CNT_INC(r, SEND_ERRORS);
		q->tx = q->max_tx;
		q->deadline_ms = now;
		deadline_note(r, now);
		return;
	}
	req_transmit(r, i, now);
}

uint64_t
egw_radius_clock_ms(void)
{
	return radius_now_ms();
}

static int req_start(struct egw_radius *r, uint8_t code, const uint8_t *attrs, size_t len,
		     const uint8_t *password, size_t pwlen, uint64_t event_ms,
		     egw_radius_done_fn done, void *arg, uint64_t *handle);

int
egw_radius_send(struct egw_radius *r, uint8_t code, const uint8_t *attrs, size_t len,
		const uint8_t *password, size_t pwlen, egw_radius_done_fn done, void *arg,
		uint64_t *handle)
{
	return req_start(r, code, attrs, len, password, pwlen, radius_now_ms(), done, arg, handle);
}

int
egw_radius_send_acct(struct egw_radius *r, const uint8_t *attrs, size_t len, uint64_t event_ms,
		     egw_radius_done_fn done, void *arg, uint64_t *handle)
{
	uint64_t now = radius_now_ms();

	if (event_ms == 0 || event_ms > now)
		event_ms = now;
	return req_start(r, EGW_RADIUS_ACCT_REQUEST, attrs, len, NULL, 0, event_ms, done, arg,
			 handle);
}

static int
req_start(struct egw_radius *r, uint8_t code, const uint8_t *attrs, size_t len,
	  const uint8_t *password, size_t pwlen, uint64_t event_ms, egw_radius_done_fn done,
	  void *arg, uint64_t *handle)
{
	struct radius_req *q;
	unsigned int i = 0, n;

	if (r == NULL || (code != EGW_RADIUS_ACCESS_REQUEST && code != EGW_RADIUS_ACCT_REQUEST) ||
	    (attrs == NULL && len != 0) || pwlen > EGW_RADIUS_PASSWORD_MAX ||
	    (password != NULL && code != EGW_RADIUS_ACCESS_REQUEST))
		return -EINVAL;
	/* attributes, a User-Password of up to 128 and a Message-Authenticator */
	if (len > RADIUS_ATTRS_MAX)
		return -EMSGSIZE;
	if (r->nb_servers == 0) {
		RADIUS_CNT_INC(r, NO_SERVER);
		return -ENOENT;
	}
	if (r->nb_outstanding >= r->max_outstanding) {
		RADIUS_CNT_INC(r, OUTSTANDING_FULL);
		return -ENOSPC;
	}
	for (n = 0; n < r->table_size; n++) {
		i = (r->free_hint + n) % r->table_size;
		if (!r->reqs[i].used)
			break;
	}
	if (n == r->table_size) {
		RADIUS_CNT_INC(r, OUTSTANDING_FULL);
		return -ENOSPC;
	}
	r->free_hint = (i + 1) % r->table_size;
	q = &r->reqs[i];
	memset(q, 0, offsetof(struct radius_req, pw));
	q->used = true;
	q->code = code;
	q->server = -1;
	q->sock = -1;
	q->done = done;
	q->arg = arg;
	q->seq = ++r->seq;
	q->event_ms = event_ms;
	q->attrs_len = (uint16_t)len;
	if (len != 0)
		memcpy(q->attrs, attrs, len);
	q->has_pw = password != NULL;
	q->pw_len = (uint8_t)pwlen;
	if (password != NULL && pwlen != 0)
		memcpy(q->pw, password, pwlen);
	r->nb_outstanding++;
	if (code == EGW_RADIUS_ACCESS_REQUEST)
		RADIUS_CNT_INC(r, ACCESS_REQUESTS);
	else
		RADIUS_CNT_INC(r, ACCT_REQUESTS);
	if (handle != NULL)
		*handle = q->seq << HANDLE_BITS | i;
	/* done is never called from here: a request that cannot be sent now
	 * ends at the next poll */
	req_next_server(r, i, radius_now_ms());
	return 0;
}

int
egw_radius_cancel(struct egw_radius *r, uint64_t handle)
{
	unsigned int i = (unsigned int)(handle & ((1u << HANDLE_BITS) - 1));

	if (i >= r->table_size || !r->reqs[i].used || r->reqs[i].seq != handle >> HANDLE_BITS)
		return -ENOENT;
	RADIUS_CNT_INC(r, CANCELLED);
	req_free(r, i);
	return 0;
}

/* ---------------- input ---------------- */

void
radius_client_input(struct egw_radius *r, int sock, const uint8_t *buf, size_t len,
		    const struct sockaddr_storage *from)
{
	struct sockaddr_storage want;
	struct radius_server *s;
	struct radius_req *q;
	enum egw_radius_err e;
	uint32_t slot;
	size_t plen;
	uint8_t code;

	RADIUS_CNT_INC(r, RX);
	if (egw_radius_check(buf, len, &plen) != EGW_RADIUS_OK) {
		RADIUS_CNT_INC(r, RX_MALFORMED);
		return;
	}
	slot = r->socks[sock].slot[buf[1]];
	if (slot == 0 || slot > r->table_size || !r->reqs[slot - 1].used) {
		RADIUS_CNT_INC(r, RX_UNKNOWN_ID);
		return;
	}
	q = &r->reqs[slot - 1];
	s = &r->servers[q->server];
	want = s->c.addr;
	if (q->code != EGW_RADIUS_ACCESS_REQUEST)
		addr_set_port(&want, s->c.acct_port);
	if (!radius_addr_eq(from, &want, true)) {
		RADIUS_CNT_INC(r, RX_BAD_SOURCE);
		return;
	}
	code = buf[0];
	if (q->code == EGW_RADIUS_ACCESS_REQUEST
		    ? (code != EGW_RADIUS_ACCESS_ACCEPT && code != EGW_RADIUS_ACCESS_REJECT &&
		       code != EGW_RADIUS_ACCESS_CHALLENGE)
		    : code != EGW_RADIUS_ACCT_RESPONSE) {
		RADIUS_CNT_INC(r, RX_BAD_CODE);
		return;
	}
	/* Access responses must carry a Message-Authenticator (RFC 3579 3.2,
	 * and CVE-2024-3596); the request waits on for the real answer */
	e = egw_radius_verify(buf, plen, s->c.secret, s->c.secret_len, q->auth,
			      q->code == EGW_RADIUS_ACCESS_REQUEST);
	if (e != EGW_RADIUS_OK) {
		s->bad_auth++;
		if (e == EGW_RADIUS_E_NO_MSGAUTH)
			RADIUS_CNT_INC(r, RX_NO_MSGAUTH);
		else if (e == EGW_RADIUS_E_MSGAUTH)
			RADIUS_CNT_INC(r, RX_BAD_MSGAUTH);
		else
			RADIUS_CNT_INC(r, RX_BAD_AUTHENTICATOR);
		return;
	}
	s->responses++;
	s->dead_until_ms = 0;
	if (code == EGW_RADIUS_ACCESS_ACCEPT)
		RADIUS_CNT_INC(r, ACCESS_ACCEPT);
	else if (code == EGW_RADIUS_ACCESS_REJECT)
		RADIUS_CNT_INC(r, ACCESS_REJECT);
	else if (code == EGW_RADIUS_ACCESS_CHALLENGE)
		RADIUS_CNT_INC(r, ACCESS_CHALLENGE);
	else
		RADIUS_CNT_INC(r, ACCT_RESPONSES);
	req_end(r, slot - 1, 0, buf, plen);
}

static void
timeouts(struct egw_radius *r, uint64_t now)
{
	unsigned int i;

	r->next_deadline_ms = UINT64_MAX;
	for (i = 0; i < r->table_size; i++) {
		struct radius_req *q = &r->reqs[i];

		if (!q->used)
			continue;
		if (q->deadline_ms > now) {
			deadline_note(r, q->deadline_ms);
			continue;
		}
		if (q->tx < q->max_tx) {
			req_transmit(r, i, now);
			continue;
		}
		/* every transmission to this server went unanswered */
		if (q->server >= 0 && r->servers[q->server].used) {
			struct radius_server *s = &r->servers[q->server];

			RADIUS_CNT_INC(r, SERVER_TIMEOUTS);
			s->timeouts++;
			if (!server_dead(s, now))
				s->dead_count++;
			s->dead_until_ms = now + (uint64_t)r->dead_time_s * 1000;
		}
		req_next_server(r, i, now);
	}
}

unsigned int
egw_radius_poll(struct egw_radius *r)
{
	struct sockaddr_storage from;
	unsigned int k, n, work = 0;
	uint64_t now;
	ssize_t got;

	if (r == NULL)
		return 0;
	for (k = 0; k < r->nb_socks; k++) {
		if (r->socks[k].fd < 0)
			continue;
		for (n = 0; n < RX_BUDGET; n++) {
			socklen_t fl = sizeof(from);

			got = recvfrom(r->socks[k].fd, r->rx_buf, sizeof(r->rx_buf), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &fl);
			if (got < 0)
				break; /* EAGAIN, or an ICMP error reported: nothing to read */
			radius_client_input(r, (int)k, r->rx_buf, (size_t)got, &from);
			work++;
		}
	}
	work += radius_dae_poll(r);
	now = radius_now_ms();
	if (now >= r->next_deadline_ms) {
		timeouts(r, now);
		work++;
	}
	return work;
}

/* ---------------- show ---------------- */

unsigned int
egw_radius_counters(const struct egw_radius *r, const char **names, uint64_t *values,
		    unsigned int max)
{
	unsigned int i, n;

	if (names == NULL && values == NULL)
		return RADIUS_CNT_MAX;
	n = max < RADIUS_CNT_MAX ? max : RADIUS_CNT_MAX;
	for (i = 0; i < n; i++) {
		if (names != NULL)
			names[i] = cnt_names[i];
		if (values != NULL)
			values[i] = r != NULL ? r->cnt[i] : 0;
	}
	return n;
}

void
egw_radius_servers_walk(const struct egw_radius *r,
			void (*fn)(const struct egw_radius_server_info *s, void *arg), void *arg)
{
	bool done[EGW_RADIUS_MAX_SERVERS] = {false};
	uint64_t now = radius_now_ms();
	unsigned int n, k;

	for (n = 0; n < r->nb_servers; n++) {
		struct egw_radius_server_info info;
		const struct radius_server *s;
		int best = -1;

		for (k = 0; k < EGW_RADIUS_MAX_SERVERS; k++) {
			s = &r->servers[k];
			if (!s->used || done[k])
				continue;
			if (best < 0 || s->c.priority < r->servers[best].c.priority ||
			    (s->c.priority == r->servers[best].c.priority &&
			     s->order < r->servers[best].order))
				best = (int)k;
		}
		if (best < 0)
			break;
		done[best] = true;
		s = &r->servers[best];
		memset(&info, 0, sizeof(info));
		info.addr = s->c.addr;
		info.acct_port = s->c.acct_port;
		info.priority = s->c.priority;
		info.timeout_ms = s->c.timeout_ms;
		info.retries = s->c.retries;
		info.dead = server_dead(s, now);
		info.dead_left_s =
			info.dead ? (unsigned int)((s->dead_until_ms - now + 999) / 1000) : 0;
		info.requests = s->requests;
		info.retransmits = s->retransmits;
		info.timeouts = s->timeouts;
		info.responses = s->responses;
		info.bad_auth = s->bad_auth;
		info.dead_count = s->dead_count;
		fn(&info, arg);
	}
}
