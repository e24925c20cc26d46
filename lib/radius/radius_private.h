/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/radius internals shared by its files (never included by the app).
 *
 *   codec.c   packets, attributes, User-Password, authenticators,
 *             Message-Authenticator
 *   authz.c   authorisation attributes of an Accept or a CoA
 *   client.c  servers, sockets, identifiers, outstanding requests,
 *             retransmission and failover, the poll loop, counters
 *   dae.c     the RFC 5176 listener
 */
#ifndef RADIUS_PRIVATE_H
#define RADIUS_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "egw_radius.h"

enum radius_cnt {
#define RADIUS_CNT(e, n, d) RADIUS_CNT_##e,
#include "radius_cnt.def"
#undef RADIUS_CNT
	RADIUS_CNT_MAX
};

/* attribute bytes a request may carry besides User-Password and
 * Message-Authenticator */
#define RADIUS_ATTRS_MAX 2048
/* identifiers per socket (RFC 2865 3: one octet) */
#define RADIUS_IDS 256
/* most sockets per address family */
#define RADIUS_MAX_SOCKS (EGW_RADIUS_MAX_OUTSTANDING / RADIUS_IDS + 1)
/* DAE answers kept for retransmitted requests */
#define RADIUS_DAE_CACHE 16
#define RADIUS_DAE_REPLY_MAX 64

struct radius_server {
	bool used;
	struct egw_radius_server_conf c;
	uint64_t order;         /* insertion order: ties of priority */
	uint64_t dead_until_ms; /* 0: alive */
	uint64_t requests, retransmits, timeouts, responses, bad_auth, dead_count;
};

struct radius_sock {
	int fd;
	int family;
	unsigned int nb_used;
	uint8_t next_id;
	uint32_t slot[RADIUS_IDS]; /* request index + 1; 0: free */
};

struct radius_req {
	bool used;
	uint8_t code;
	uint8_t pw_len;
	bool has_pw;
	uint8_t id;
	int server;     /* index in servers[], -1: none yet */
	int sock;       /* index in socks[], -1: none */
	uint32_t tried; /* servers tried (bits) */
	unsigned int tx, max_tx;
	uint64_t seq; /* handle = seq << 17 | index */
	uint64_t deadline_ms;
	uint64_t event_ms; /* accounting: when the event happened (Acct-Delay-Time) */
	uint32_t delay_s;  /* accounting: the Acct-Delay-Time last sent */
	egw_radius_done_fn done;
	void *arg;
	uint8_t auth[EGW_RADIUS_AUTH_LEN]; /* of the current transmission */
	uint16_t attrs_len;
	uint8_t pw[EGW_RADIUS_PASSWORD_MAX];
	uint8_t attrs[RADIUS_ATTRS_MAX];
};

struct radius_dae_client {
	bool used;
	struct sockaddr_storage addr;
	uint8_t secret[EGW_RADIUS_SECRET_MAX];
	size_t slen;
};

struct radius_dae_cached {
	bool used;
	struct sockaddr_storage from;
	uint8_t id;
	uint8_t auth[EGW_RADIUS_AUTH_LEN];
	uint8_t reply_len;
	uint8_t reply[RADIUS_DAE_REPLY_MAX];
};

struct egw_radius {
	struct radius_server servers[EGW_RADIUS_MAX_SERVERS];
	unsigned int nb_servers;
	uint64_t server_order;
	unsigned int dead_time_s;
	unsigned int max_outstanding;
	unsigned int nb_outstanding;
	unsigned int table_size; /* requests allocated (EGW_RADIUS_MAX_OUTSTANDING at most) */
	struct radius_req *reqs;
	unsigned int free_hint;
	uint64_t seq;
	uint64_t next_deadline_ms;
	struct radius_sock socks[2 * RADIUS_MAX_SOCKS];
	unsigned int nb_socks;
	/* DAE */
	int dae_fd;
	struct sockaddr_storage dae_addr;
	egw_radius_dae_fn dae_fn;
	void *dae_arg;
	struct radius_dae_client dae_clients[EGW_RADIUS_MAX_DAE_CLIENTS];
	struct radius_dae_cached dae_cache[RADIUS_DAE_CACHE];
	unsigned int dae_cache_next;
	uint64_t cnt[RADIUS_CNT_MAX];
	uint8_t rx_buf[EGW_RADIUS_PKT_MAX + 1];
	uint8_t tx_buf[EGW_RADIUS_PKT_MAX];
};

#define RADIUS_CNT_INC(r, e) ((r)->cnt[RADIUS_CNT_##e]++)

/** Monotonic milliseconds. */
uint64_t radius_now_ms(void);
/** Same address (and port when with_port). */
bool radius_addr_eq(const struct sockaddr_storage *a, const struct sockaddr_storage *b,
		    bool with_port);
socklen_t radius_addr_len(const struct sockaddr_storage *a);

/** A datagram on client socket sock (the poll loop, the fuzz target). */
void radius_client_input(struct egw_radius *r, int sock, const uint8_t *buf, size_t len,
			 const struct sockaddr_storage *from);
/** A datagram on the DAE socket: the answer (if any) is sent to from. */
void radius_dae_input(struct egw_radius *r, const uint8_t *buf, size_t len,
		      const struct sockaddr_storage *from);
/** Read the DAE socket (poll loop). */
unsigned int radius_dae_poll(struct egw_radius *r);
void radius_dae_fini(struct egw_radius *r);

/** Message-Authenticator of a received Access-Request (tests). */
enum egw_radius_err radius_verify_access_request(const uint8_t *pkt, size_t len,
						 const uint8_t *secret, size_t slen);

#endif /* RADIUS_PRIVATE_H */
