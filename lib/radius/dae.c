/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: the dynamic-authorisation listener of RFC 5176. A request
 * is handled only from a configured client address, with a Request
 * Authenticator made with that client's secret (RFC 5176 3.1) and a valid
 * Message-Authenticator (required here, fail closed); anything else is
 * dropped silently and counted (RFC 5176 3: a request that fails the
 * checks is silently discarded). The answer (ACK, or NAK with Error-Cause)
 * carries a Message-Authenticator and its Response Authenticator. The
 * answers to the last RADIUS_DAE_CACHE requests are kept: a retransmitted
 * request (same client, Identifier and authenticator) gets the same answer
 * and is not run again (RFC 5176 2.3).
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "radius_private.h"

int
egw_radius_dae_listen(struct egw_radius *r, const struct sockaddr_storage *addr,
		      egw_radius_dae_fn fn, void *arg)
{
	int fd, one = 1;

	if (r == NULL || addr == NULL || fn == NULL ||
	    (addr->ss_family != AF_INET && addr->ss_family != AF_INET6))
		return -EINVAL;
	if (r->dae_fd >= 0)
		return -EEXIST;
	fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (addr->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)addr, radius_addr_len(addr)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	r->dae_fd = fd;
	r->dae_addr = *addr;
	r->dae_fn = fn;
	r->dae_arg = arg;
	return 0;
}

int
egw_radius_dae_client_add(struct egw_radius *r, const struct sockaddr_storage *addr,
			  const uint8_t *secret, size_t slen)
{
	unsigned int i, k = EGW_RADIUS_MAX_DAE_CLIENTS;

	if (r == NULL || addr == NULL || secret == NULL || slen == 0 ||
	    slen > EGW_RADIUS_SECRET_MAX ||
	    (addr->ss_family != AF_INET && addr->ss_family != AF_INET6))
		return -EINVAL;
	for (i = 0; i < EGW_RADIUS_MAX_DAE_CLIENTS; i++) {
		if (!r->dae_clients[i].used) {
			if (k == EGW_RADIUS_MAX_DAE_CLIENTS)
				k = i;
		} else if (radius_addr_eq(&r->dae_clients[i].addr, addr, false)) {
			return -EEXIST;
		}
	}
	if (k == EGW_RADIUS_MAX_DAE_CLIENTS)
		return -ENOSPC;
	r->dae_clients[k].addr = *addr;
	memcpy(r->dae_clients[k].secret, secret, slen);
	r->dae_clients[k].slen = slen;
	r->dae_clients[k].used = true;
	return 0;
}

bool
egw_radius_dae_addr(const struct egw_radius *r, struct sockaddr_storage *addr)
{
	if (r == NULL || r->dae_fd < 0)
		return false;
	*addr = r->dae_addr;
	return true;
}

void
egw_radius_dae_clients_walk(const struct egw_radius *r,
			    void (*fn)(const struct sockaddr_storage *a, void *arg), void *arg)
{
	unsigned int i;

	for (i = 0; i < EGW_RADIUS_MAX_DAE_CLIENTS; i++)
		if (r->dae_clients[i].used)
			fn(&r->dae_clients[i].addr, arg);
}

void
radius_dae_fini(struct egw_radius *r)
{
	if (r->dae_fd >= 0)
		close(r->dae_fd);
	r->dae_fd = -1;
	OPENSSL_cleanse(r->dae_clients, sizeof(r->dae_clients));
	memset(r->dae_cache, 0, sizeof(r->dae_cache));
}

static void
dae_send(struct egw_radius *r, const uint8_t *buf, size_t len, const struct sockaddr_storage *to)
{
	if (r->dae_fd < 0 || sendto(r->dae_fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)to,
				    radius_addr_len(to)) != (ssize_t)len)
		RADIUS_CNT_INC(r, DAE_TX_ERRORS);
}

void
radius_dae_input(struct egw_radius *r, const uint8_t *buf, size_t len,
		 const struct sockaddr_storage *from)
{
	static const uint8_t zero16[16];
	const struct radius_dae_client *c = NULL;
	uint8_t out[RADIUS_DAE_REPLY_MAX];
	struct radius_dae_cached *d;
	struct egw_radius_pkt p;
	enum egw_radius_err e;
	uint32_t cause;
	unsigned int i;
	size_t plen;
	uint8_t code;

	RADIUS_CNT_INC(r, DAE_RX);
	for (i = 0; i < EGW_RADIUS_MAX_DAE_CLIENTS; i++) {
		if (r->dae_clients[i].used &&
		    radius_addr_eq(&r->dae_clients[i].addr, from, false)) {
			c = &r->dae_clients[i];
			break;
		}
	}
	if (c == NULL) {
		RADIUS_CNT_INC(r, DAE_UNKNOWN_CLIENT);
		return;
	}
	if (egw_radius_check(buf, len, &plen) != EGW_RADIUS_OK) {
		RADIUS_CNT_INC(r, DAE_MALFORMED);
		return;
	}
	code = buf[0];
	if (code != EGW_RADIUS_DISCONNECT_REQUEST && code != EGW_RADIUS_COA_REQUEST) {
		RADIUS_CNT_INC(r, DAE_BAD_CODE);
		return;
	}
	e = egw_radius_verify(buf, plen, c->secret, c->slen, NULL, true);
	if (e != EGW_RADIUS_OK) {
		if (e == EGW_RADIUS_E_NO_MSGAUTH)
			RADIUS_CNT_INC(r, DAE_NO_MSGAUTH);
		else if (e == EGW_RADIUS_E_MSGAUTH)
			RADIUS_CNT_INC(r, DAE_BAD_MSGAUTH);
		else
			RADIUS_CNT_INC(r, DAE_BAD_AUTHENTICATOR);
		return;
	}
	/* a retransmission: the same answer, the request not run twice */
	for (i = 0; i < RADIUS_DAE_CACHE; i++) {
		d = &r->dae_cache[i];
		if (d->used && d->id == buf[1] && radius_addr_eq(&d->from, from, true) &&
		    memcmp(d->auth, &buf[4], EGW_RADIUS_AUTH_LEN) == 0) {
			RADIUS_CNT_INC(r, DAE_DUPLICATE);
			dae_send(r, d->reply, d->reply_len, from);
			return;
		}
	}
	if (code == EGW_RADIUS_DISCONNECT_REQUEST)
		RADIUS_CNT_INC(r, DAE_DISCONNECT);
	else
		RADIUS_CNT_INC(r, DAE_COA);
	cause = r->dae_fn != NULL ? r->dae_fn(r->dae_arg, buf, plen, from)
				  : EGW_RADIUS_ERR_RESOURCES_UNAVAILABLE;
	/* ACK = request + 1, NAK = request + 2 (RFC 5176 2.3) */
	egw_radius_pkt_init(&p, out, sizeof(out), (uint8_t)(code + (cause == 0 ? 1 : 2)), buf[1]);
	if (cause != 0)
		egw_radius_attr_put_u32(&p, EGW_RADIUS_A_ERROR_CAUSE, cause);
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, zero16, 16);
	if (egw_radius_finish(&p, c->secret, c->slen, &buf[4]) < 0) {
		RADIUS_CNT_INC(r, DAE_TX_ERRORS);
		return;
	}
	if (cause == 0)
		RADIUS_CNT_INC(r, DAE_ACK);
	else
		RADIUS_CNT_INC(r, DAE_NAK);
	d = &r->dae_cache[r->dae_cache_next];
	r->dae_cache_next = (r->dae_cache_next + 1) % RADIUS_DAE_CACHE;
	d->used = true;
	d->from = *from;
	d->id = buf[1];
	memcpy(d->auth, &buf[4], EGW_RADIUS_AUTH_LEN);
	d->reply_len = (uint8_t)p.len;
	memcpy(d->reply, out, p.len);
	dae_send(r, out, p.len, from);
}

unsigned int
radius_dae_poll(struct egw_radius *r)
{
	struct sockaddr_storage from;
	unsigned int n;
	ssize_t got;

	if (r->dae_fd < 0)
		return 0;
	for (n = 0; n < 64; n++) {
		socklen_t fl = sizeof(from);

		got = recvfrom(r->dae_fd, r->rx_buf, sizeof(r->rx_buf), MSG_DONTWAIT,
			       (struct sockaddr *)&from, &fl);
		if (got < 0)
			break;
		radius_dae_input(r, r->rx_buf, (size_t)got, &from);
	}
	return n;
}
