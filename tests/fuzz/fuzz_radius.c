/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: lib/radius's parsers on hostile datagrams.
 *
 * The first byte picks the path, the second whether the target signs the
 * rest first (so that the parsers behind the checks are reached too):
 *   0  egw_radius_check(), the attribute iterator, egw_radius_authz_parse()
 *      and egw_radius_verify() on the bytes as they are;
 *   1  a response to the outstanding Access-Request (its Identifier put in;
 *      signed: Response Authenticator and Message-Authenticator made with
 *      the server's secret over the request) through radius_client_input();
 *      an answered request is replaced by a new one;
 *   2  a DAE request from the configured client (signed: Request
 *      Authenticator and Message-Authenticator with its secret) through
 *      radius_dae_input(); the handler parses it as edgegw's does.
 * Attribute lengths past the packet, zero-length attributes, Length fields
 * against the datagram and huge attribute counts all come from the input.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egw_radius.h"
#include "radius_private.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t secret[] = "fuzz-secret";
#define SLEN (sizeof(secret) - 1)
static struct egw_radius *r;
static struct sockaddr_storage srv;
static unsigned int answered;

static void
done(void *arg, int status, const uint8_t *pkt, size_t len)
{
	struct egw_radius_authz z;

	(void)arg;
	if (status == 0) {
		if (egw_radius_check(pkt, len, NULL) != EGW_RADIUS_OK)
			abort(); /* the client hands on only checked packets */
		egw_radius_authz_parse(pkt, len, &z);
	}
	answered++;
}

static uint32_t
dae(void *arg, const uint8_t *pkt, size_t len, const struct sockaddr_storage *from)
{
	struct egw_radius_authz z;
	uint8_t vl;

	(void)arg;
	(void)from;
	egw_radius_authz_parse(pkt, len, &z);
	if (egw_radius_attr_find(pkt, len, EGW_RADIUS_A_ACCT_SESSION_ID, &vl) == NULL)
		return EGW_RADIUS_ERR_MISSING_ATTRIBUTE;
	return 0;
}

static void
request(void)
{
	static const uint8_t attrs[] = {EGW_RADIUS_A_USER_NAME, 6, 'f', 'u', 'z', 'z'};

	if (egw_radius_send(r, EGW_RADIUS_ACCESS_REQUEST, attrs, sizeof(attrs),
			    (const uint8_t *)"pw", 2, done, NULL, NULL) != 0)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct egw_radius_server_conf c;
	struct sockaddr_storage la, ca;

	(void)argc;
	(void)argv;
	r = egw_radius_create(4);
	memset(&c, 0, sizeof(c));
	/* the discard port: nothing answers, the datagrams come from here */
	egw_radius_addr_parse("127.0.0.1:9", 0, &c.addr);
	srv = c.addr;
	c.acct_port = 9;
	memcpy(c.secret, secret, SLEN);
	c.secret_len = SLEN;
	c.timeout_ms = 60000;
	c.retries = 0;
	if (r == NULL || egw_radius_server_add(r, &c) != 0)
		abort();
	egw_radius_addr_parse("127.0.0.1", 0, &la); /* an ephemeral port */
	egw_radius_addr_parse("127.0.0.1", 0, &ca);
	if (egw_radius_dae_listen(r, &la, dae, NULL) != 0 ||
	    egw_radius_dae_client_add(r, &ca, secret, SLEN) != 0)
		abort();
	request();
	return 0;
}

/* Sign buf (len bytes, Length set from len if it fits) as a response to
 * auth (resp) or as a request (auth NULL): reserve a Message-Authenticator
 * at the end when there is room. */
static size_t
sign(uint8_t *buf, size_t len, size_t room, const uint8_t *auth)
{
	static const uint8_t z16[16];
	struct egw_radius_pkt p = {.buf = buf, .len = len, .room = room};

	if (len < EGW_RADIUS_HDR_LEN || egw_radius_check(buf, len, NULL) != EGW_RADIUS_OK)
		return len;
	p.len = (size_t)buf[2] << 8 | buf[3];
	egw_radius_attr_put(&p, EGW_RADIUS_A_MESSAGE_AUTHENTICATOR, z16, 16);
	if (egw_radius_finish(&p, secret, SLEN, auth) < 0)
		return len;
	return p.len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[EGW_RADIUS_PKT_MAX + 64];
	struct sockaddr_storage from;
	struct egw_radius_authz z;
	struct egw_radius_iter it;
	const uint8_t *v;
	size_t len, plen;
	unsigned int i;
	uint8_t t, l;
	bool sig;

	if (size < 2 || size - 2 > EGW_RADIUS_PKT_MAX + 32)
		return 0;
	sig = data[1] & 1;
	len = size - 2;
	memcpy(buf, data + 2, len);
	switch (data[0] % 3) {
	case 0:
		if (egw_radius_check(buf, len, &plen) == EGW_RADIUS_OK) {
			egw_radius_iter_init(&it, buf, plen);
			while (egw_radius_iter_next(&it, &t, &v, &l))
				if (v + l > buf + plen)
					abort();
			egw_radius_authz_parse(buf, plen, &z);
			if (z.nb_routes > EGW_RADIUS_MAX_ROUTES ||
			    z.nb_class > EGW_RADIUS_MAX_CLASS)
				abort();
			egw_radius_verify(buf, plen, secret, SLEN, buf + 4, true);
			egw_radius_verify(buf, plen, secret, SLEN, NULL, false);
		}
		break;
	case 1:
		for (i = 0; i < r->table_size; i++)
			if (r->reqs[i].used)
				break;
		if (i == r->table_size || len < EGW_RADIUS_HDR_LEN)
			break;
		buf[1] = r->reqs[i].id;
		if (sig)
			len = sign(buf, len, sizeof(buf), r->reqs[i].auth);
		answered = 0;
		radius_client_input(r, r->reqs[i].sock, buf, len, &srv);
		if (answered != 0)
			request();
		break;
	default:
		if (sig)
			len = sign(buf, len, sizeof(buf), NULL);
		egw_radius_addr_parse("127.0.0.1:40000", 0, &from);
		radius_dae_input(r, buf, len, &from);
		break;
	}
	return 0;
}
